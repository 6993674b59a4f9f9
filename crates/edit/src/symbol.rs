//! `replaceSymbol`: where a definition (or its body) is comes from the caller's
//! [`SymbolLocator`]; how the replacement is fitted into the file is decided here,
//! as a pure function.

use protocol::{Normalization, SymbolPart};

use crate::text::{self, Eol};

/// A definition's location in the exact bytes being edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolSpan {
    /// The whole definition, `[start_byte, end_byte)`.
    pub start_byte: u32,
    pub end_byte: u32,
    /// The body, when the definition has one (a `{ ... }` block, an indented block).
    pub body: Option<(u32, u32)>,
}

/// Finds definitions by qualified name. The edit engine knows no languages; the
/// caller (the CLI, the `change` pillar) provides this, typically backed by
/// `code_index::analyze`.
///
/// Both methods receive the file's text exactly as the engine is about to edit it
/// (after the hash check, without a UTF-8 BOM), so the spans returned are offsets
/// into those bytes.
pub trait SymbolLocator: Send + Sync {
    /// Every definition named `qualified_name` in `bytes`. An error means the file
    /// cannot be analyzed at all (e.g. an unknown language).
    fn locate(
        &self,
        path: &str,
        bytes: &[u8],
        qualified_name: &str,
    ) -> Result<Vec<SymbolSpan>, String>;

    /// Every qualified name defined in `bytes`; the engine suggests the closest
    /// ones when a name is not found. The default offers none.
    fn names(&self, _path: &str, _bytes: &[u8]) -> Vec<String> {
        Vec::new()
    }
}

/// The names closest to `wanted` (edit distance on the whole name and on its last
/// segment, case-insensitive), best first, at most five.
pub(crate) fn similar_names(wanted: &str, names: &[String]) -> Vec<String> {
    let last = |s: &str| s.rsplit(['.', ':', '/']).next().unwrap_or(s).to_lowercase();
    let (w, wl) = (wanted.to_lowercase(), last(wanted));
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .filter(|n| n.as_str() != wanted)
        .filter_map(|n| {
            let d = stdx::edit_distance(&w, &n.to_lowercase())
                .min(stdx::edit_distance(&wl, &last(n)) + 1);
            let contains = last(n).contains(&wl) || wl.contains(&last(n));
            let limit = (wl.chars().count() / 3).max(2);
            (d <= limit || contains).then_some((if contains { d.min(limit) } else { d }, n))
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, n)| n.clone()).collect()
}

/// A planned replacement of `[start, end)` with `text` (in the file's line endings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SymbolSplice {
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub normalizations: Vec<Normalization>,
}

/// Fits `replacement` over the span's definition or body in `text`.
///
/// - The whole definition, when it stands on its own lines: the replacement is
///   re-indented to the definition's indentation and replaces those lines.
/// - A `{ ... }` body with a replacement that does not start with `{`: the braces
///   stay, the replacement goes between them one indentation level deeper.
/// - Any other body (Python's indented block): re-indented to the body's
///   indentation.
pub(crate) fn splice(
    text: &str,
    span: SymbolSpan,
    part: SymbolPart,
    replacement: &str,
    eol: Eol,
) -> Result<SymbolSplice, String> {
    let (s, e) = match part {
        SymbolPart::Body => {
            span.body.ok_or("the definition has no body; replace the whole definition")?
        }
        _ => (span.start_byte, span.end_byte),
    };
    let (s, e) = (s as usize, e as usize);
    if s > e || e > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
        return Err(format!("the symbol locator returned a bad span {s}..{e}"));
    }
    let repl = text::to_lf(replacement);
    let line_start = text[..s].rfind('\n').map_or(0, |i| i + 1);
    let prefix = &text[line_start..s];
    let line_indent = text::indentation(&text[line_start..]).to_owned();
    let region = &text[s..e];
    let braces = part == SymbolPart::Body
        && region.starts_with('{')
        && region.ends_with('}')
        && !repl.trim_start().starts_with('{');

    let (start, end, body) = if braces {
        let inner = inner_indent(text, s, e, &line_indent);
        let close_line_start = text[..e - 1].rfind('\n').map_or(0, |i| i + 1);
        let close_prefix = &text[close_line_start..e - 1];
        let close_indent = if close_prefix.trim().is_empty() {
            close_prefix.to_owned()
        } else {
            line_indent.clone()
        };
        let content = text::reindent_block(repl.trim_matches('\n'), &inner, false);
        let body = if content.trim().is_empty() {
            "{}".to_owned()
        } else {
            format!("{{\n{content}\n{close_indent}}}")
        };
        (s, e, body)
    } else if prefix.trim().is_empty() {
        // Stands on its own lines: replace from the line start, keep the indentation.
        let rest_end = text[e..].find('\n').map_or(text.len(), |i| e + i);
        let rest = text::strip_eol(&text[e..rest_end]);
        let end = if rest.trim().is_empty() { e + rest.len() } else { e };
        let body = text::reindent_block(repl.strip_suffix('\n').unwrap_or(&repl), prefix, false);
        (line_start, end, body)
    } else {
        // Starts after other text on its line (`fn f() {` before a body): the first
        // line goes in place, the rest aligns with the line's indentation.
        let body =
            text::reindent_block(repl.strip_suffix('\n').unwrap_or(&repl), &line_indent, true);
        (s, e, body)
    };
    let mut normalizations = Vec::new();
    let written = text::with_eol(&body, eol);
    if eol == Eol::Crlf && repl.contains('\n') {
        normalizations.push(Normalization::LineEndings { file: eol.name().to_owned() });
    }
    Ok(SymbolSplice { start, end, text: written, normalizations })
}

/// The indentation of the first non-blank line inside a `{ ... }` region, or one
/// level (a tab or four spaces) deeper than `outer`.
fn inner_indent(text: &str, s: usize, e: usize, outer: &str) -> String {
    let inside = &text[s + 1..e - 1];
    for line in inside.split('\n').skip(1) {
        let line = text::strip_eol(line);
        if !line.trim().is_empty() {
            let ind = text::indentation(line);
            if ind.len() > outer.len() {
                return ind.to_owned();
            }
            break;
        }
    }
    let unit = if outer.contains('\t') { "\t" } else { "    " };
    format!("{outer}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str, needle: &str, body: Option<&str>, part: SymbolPart, repl: &str) -> String {
        let s = text.find(needle).unwrap();
        let e = s + needle.len();
        let body = body.map(|b| {
            let bs = text.find(b).unwrap();
            (bs as u32, (bs + b.len()) as u32)
        });
        let span = SymbolSpan { start_byte: s as u32, end_byte: e as u32, body };
        let sp = splice(text, span, part, repl, text::dominant_eol(text)).unwrap();
        format!("{}{}{}", &text[..sp.start], sp.text, &text[sp.end..])
    }

    /// name, file, definition text, body text, part, replacement, expected file
    type Case<'a> = (&'a str, &'a str, &'a str, Option<&'a str>, SymbolPart, &'a str, &'a str);

    #[test]
    fn table() {
        let rs = "impl A {\n    fn f(&self) -> u32 {\n        1\n    }\n}\n";
        let f_def = "fn f(&self) -> u32 {\n        1\n    }";
        let f_body = "{\n        1\n    }";
        let py = "class A:\n    def f(self):\n        x = 1\n        return x\n";
        let py_def = "def f(self):\n        x = 1\n        return x";
        let py_body = "x = 1\n        return x";
        #[rustfmt::skip]
        let cases: &[Case<'_>] = &[
            ("definition re-indented", rs, f_def, None, SymbolPart::Definition,
             "fn f(&self) -> u32 {\n    2\n}\n",
             "impl A {\n    fn f(&self) -> u32 {\n        2\n    }\n}\n"),
            ("body between kept braces", rs, f_def, Some(f_body), SymbolPart::Body,
             "let x = 2;\nx",
             "impl A {\n    fn f(&self) -> u32 {\n        let x = 2;\n        x\n    }\n}\n"),
            ("body with its own braces", rs, f_def, Some(f_body), SymbolPart::Body,
             "{\n    3\n}",
             "impl A {\n    fn f(&self) -> u32 {\n        3\n    }\n}\n"),
            ("python body", py, py_def, Some(py_body), SymbolPart::Body,
             "return 42\n",
             "class A:\n    def f(self):\n        return 42\n"),
            ("python definition", py, py_def, None, SymbolPart::Definition,
             "def g(self):\n    pass",
             "class A:\n    def g(self):\n        pass\n"),
            ("empty body", rs, f_def, Some(f_body), SymbolPart::Body,
             "",
             "impl A {\n    fn f(&self) -> u32 {}\n}\n"),
        ];
        for (name, text, def, body, part, repl, want) in cases {
            assert_eq!(apply(text, def, *body, *part, repl), *want, "{name}");
        }
    }

    #[test]
    fn similar_names_rank_by_distance() {
        let names: Vec<String> =
            ["Server.start", "Server.stop", "Client.start", "helper", "Server"]
                .map(String::from)
                .into();
        assert_eq!(
            similar_names("Server.stat", &names),
            ["Server.start", "Client.start", "Server.stop"]
        );
        assert_eq!(similar_names("halper", &names), ["helper"]);
        assert!(similar_names("zzzzzz", &names).is_empty());
    }

    #[test]
    fn crlf_files_get_crlf() {
        let text = "fn a() {\r\n    1\r\n}\r\n";
        let span = SymbolSpan { start_byte: 0, end_byte: 18, body: None };
        let sp =
            splice(text, span, SymbolPart::Definition, "fn a() {\n    2\n}", Eol::Crlf).unwrap();
        assert_eq!(sp.text, "fn a() {\r\n    2\r\n}");
        assert_eq!(&text[sp.end..], "\r\n");
    }
}
