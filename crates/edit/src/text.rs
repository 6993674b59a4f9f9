//! Line endings, the BOM, line numbers and indentation: the text facts every
//! operation needs, as pure functions.

use protocol::LineRange;

pub(crate) const BOM: &str = "\u{feff}";

/// A file's line-ending style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    Lf,
    Crlf,
}

impl Eol {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Eol::Lf => "lf",
            Eol::Crlf => "crlf",
        }
    }
}

/// The style most lines of `text` end with (LF for a text without line breaks, and
/// on a tie, as git would write it).
pub(crate) fn dominant_eol(text: &str) -> Eol {
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count() - crlf;
    if crlf > lf { Eol::Crlf } else { Eol::Lf }
}

/// `text` with every line break (`\r\n` or `\n`) written as `eol`.
pub(crate) fn with_eol(text: &str, eol: Eol) -> String {
    let lf = text.replace("\r\n", "\n");
    match eol {
        Eol::Lf => lf,
        Eol::Crlf => lf.replace('\n', "\r\n"),
    }
}

/// `text` with `\r\n` turned into `\n`.
pub(crate) fn to_lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// Byte offsets of line starts, for turning byte spans into line numbers and back.
pub(crate) struct LineIndex {
    /// `starts[i]` is where line `i + 1` begins; a final entry is the text's length.
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        // A text ending with '\n' has no line after it, only the end.
        if starts.last() == Some(&text.len()) && !text.is_empty() {
            starts.pop();
        }
        LineIndex { starts, len: text.len() }
    }

    /// Number of lines (an empty text has none).
    pub(crate) fn count(&self) -> u32 {
        if self.len == 0 { 0 } else { self.starts.len() as u32 }
    }

    /// The 1-based line holding byte `offset` (the last line for the end of the text).
    pub(crate) fn line_of(&self, offset: usize) -> u32 {
        match self.starts.binary_search(&offset) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
        .max(1)
    }

    /// Where 1-based `line` starts.
    pub(crate) fn start_of(&self, line: u32) -> usize {
        self.starts.get(line as usize - 1).copied().unwrap_or(self.len)
    }

    /// Where 1-based `line` ends, its line break included.
    pub(crate) fn end_of(&self, line: u32) -> usize {
        self.starts.get(line as usize).copied().unwrap_or(self.len)
    }

    /// The lines a byte span `[start, end)` covers (an empty span: its line).
    pub(crate) fn lines_of(&self, start: usize, end: usize) -> LineRange {
        let first = self.line_of(start);
        let last = if end > start { self.line_of(end - 1) } else { first };
        LineRange::new(first, last.max(first))
    }
}

/// Line `text` without its line break.
pub(crate) fn strip_eol(line: &str) -> &str {
    let l = line.strip_suffix('\n').unwrap_or(line);
    l.strip_suffix('\r').unwrap_or(l)
}

/// The leading spaces and tabs of `line`.
pub(crate) fn indentation(line: &str) -> &str {
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// The longest indentation every non-blank line of `text` shares.
pub(crate) fn common_indent(text: &str) -> String {
    let mut common: Option<&str> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let ind = indentation(line);
        common = Some(match common {
            None => ind,
            Some(c) => {
                let n = c.bytes().zip(ind.bytes()).take_while(|(a, b)| a == b).count();
                &c[..n]
            }
        });
    }
    common.unwrap_or("").to_owned()
}

/// Applies `f` to every non-blank line of an LF text (line breaks kept).
pub(crate) fn map_lines(text: &str, mut f: impl FnMut(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for piece in text.split_inclusive('\n') {
        let (line, nl) = match piece.strip_suffix('\n') {
            Some(l) => (l, "\n"),
            None => (piece, ""),
        };
        if line.trim().is_empty() {
            out.push_str(line);
        } else {
            out.push_str(&f(line));
        }
        out.push_str(nl);
    }
    out
}

/// Re-indents an LF block: removes its common indentation, then puts `indent` in
/// front of every non-blank line (except the first when `skip_first`, which sits
/// after existing text on its line).
pub(crate) fn reindent_block(text: &str, indent: &str, skip_first: bool) -> String {
    let common = common_indent(text);
    let mut first = true;
    let mut out = String::with_capacity(text.len() + 16);
    for piece in text.split_inclusive('\n') {
        let (line, nl) = match piece.strip_suffix('\n') {
            Some(l) => (l, "\n"),
            None => (piece, ""),
        };
        if !line.trim().is_empty() {
            let body = line.strip_prefix(common.as_str()).unwrap_or(line.trim_start());
            if !(first && skip_first) {
                out.push_str(indent);
            }
            out.push_str(body);
        }
        out.push_str(nl);
        first = false;
    }
    out
}

/// Cuts a text to at most `max_lines` lines and `max_chars` characters for previews.
pub(crate) fn preview(text: &str, max_lines: usize, max_chars: usize) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i == max_lines {
            out.push_str("...\n");
            break;
        }
        out.push_str(line.trim_end_matches('\r'));
        out.push('\n');
    }
    if out.chars().count() > max_chars {
        let cut: String = out.chars().take(max_chars).collect();
        return format!("{cut}...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eol_detection_and_conversion() {
        assert_eq!(dominant_eol("a\r\nb\r\nc\n"), Eol::Crlf);
        assert_eq!(dominant_eol("a\nb\r\n"), Eol::Lf);
        assert_eq!(dominant_eol("one line"), Eol::Lf);
        assert_eq!(with_eol("a\nb\r\nc", Eol::Crlf), "a\r\nb\r\nc");
        assert_eq!(with_eol("a\r\nb\n", Eol::Lf), "a\nb\n");
    }

    #[test]
    fn line_index() {
        let t = "ab\ncd\n\nef";
        let ix = LineIndex::new(t);
        assert_eq!(ix.count(), 4);
        assert_eq!(ix.line_of(0), 1);
        assert_eq!(ix.line_of(3), 2);
        assert_eq!(ix.line_of(6), 3);
        assert_eq!(ix.line_of(t.len()), 4);
        assert_eq!(ix.start_of(4), 7);
        assert_eq!(ix.end_of(2), 6);
        assert_eq!(ix.end_of(4), t.len());
        assert_eq!(ix.lines_of(3, 6), LineRange::new(2, 2));
        assert_eq!(LineIndex::new("a\n").count(), 1);
        assert_eq!(LineIndex::new("").count(), 0);
    }

    #[test]
    fn reindent() {
        assert_eq!(reindent_block("  a\n    b\n\n  c", "\t", false), "\ta\n\t  b\n\n\tc");
        assert_eq!(
            reindent_block("fn x() {\n    y\n}", "    ", true),
            "fn x() {\n        y\n    }"
        );
        assert_eq!(common_indent("    a\n  \n      b"), "    ");
    }
}
