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
