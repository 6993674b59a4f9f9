//! Where results go: JSON or text on stdout, colors only on a terminal.

use std::io::{IsTerminal, Write};

use protocol::ErrorInfo;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

pub struct Output {
    pub json: bool,
    color_out: bool,
    color_err: bool,
    pub stderr_is_tty: bool,
}

impl Output {
    pub fn new(json: bool, color: ColorChoice) -> Self {
        // NO_COLOR (https://no-color.org) wins over auto, never over an explicit `always`.
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let stdout_tty = std::io::stdout().is_terminal();
        let stderr_tty = std::io::stderr().is_terminal();
        let (color_out, color_err) = match color {
            ColorChoice::Always => (true, true),
            ColorChoice::Never => (false, false),
            ColorChoice::Auto => (stdout_tty && !no_color, stderr_tty && !no_color),
        };
        Output { json, color_out, color_err, stderr_is_tty: stderr_tty }
    }

    /// Prints a value as pretty JSON on stdout.
    pub fn json<T: Serialize + ?Sized>(&self, value: &T) -> anyhow::Result<()> {
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut stdout, value)?;
        writeln!(stdout)?;
        Ok(())
    }

    /// Prints a line of text on stdout. A closed pipe (`| head`) ends quietly.
    pub fn line(&self, text: impl AsRef<str>) {
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "{}", text.as_ref()).is_err() {
            std::process::exit(0);
        }
    }

    /// Columns of the terminal stdout is, if it is one: text to wrap to it. Not a
    /// terminal (a pipe, a file): None, and text stays whole on its lines.
    pub fn width(&self) -> Option<usize> {
        console::Term::stdout().size_checked().map(|(_, cols)| usize::from(cols)).filter(|&c| c > 0)
    }

    pub fn style_out(&self) -> console::Style {
        console::Style::new().force_styling(self.color_out)
    }

    /// Whether stderr gets colors.
    pub fn color_err(&self) -> bool {
        self.color_err
    }

    pub fn style_err(&self) -> console::Style {
        console::Style::new().force_styling(self.color_err)
    }

    /// A dim note on stderr (what ironbees decided for the user), never on stdout.
    pub fn note(&self, text: impl AsRef<str>) {
        let s = self.style_err().dim();
        eprintln!("{}", s.apply_to(text.as_ref()));
    }

    pub fn warn(&self, text: impl AsRef<str>) {
        let s = self.style_err().yellow().bold();
        eprintln!("{} {}", s.apply_to("warning:"), text.as_ref());
    }

    pub fn error(&self, info: &ErrorInfo) {
        if self.json {
            let v = serde_json::json!({ "error": info });
            eprintln!("{v}");
        } else {
            let s = self.style_err().red().bold();
            eprintln!("{} {}", s.apply_to(format!("error[{}]:", info.code)), info.message);
            if !info.details.similar_names.is_empty() {
                eprintln!("  did you mean: {}", info.details.similar_names.join(", "));
            }
            if let Some(first) = info.details.targets.first() {
                let at = first.split_whitespace().next().unwrap_or(first);
                eprintln!("  name one by its path:line, e.g. `{at}`");
            }
        }
    }
}

/// `text` as lines of at most `width` characters, broken between words (a word
/// longer than a line gets a line of its own, whole); None: one line.
pub fn wrap(text: &str, width: Option<usize>) -> Vec<String> {
    let Some(width) = width else { return vec![text.to_owned()] };
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    #[test]
    fn wraps_between_words() {
        let cases: &[(&str, Option<usize>, &[&str])] = &[
            ("one two three", None, &["one two three"]),
            ("one two three", Some(7), &["one two", "three"]),
            ("one two three", Some(3), &["one", "two", "three"]),
            ("a verylongword b", Some(4), &["a", "verylongword", "b"]),
            ("", Some(10), &[""]),
            ("été à la mer", Some(6), &["été à", "la mer"]),
        ];
        for (text, width, want) in cases {
            assert_eq!(super::wrap(text, *width), *want, "{text:?} at {width:?}");
        }
    }
}
