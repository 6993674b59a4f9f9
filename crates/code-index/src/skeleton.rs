//! Skeletons: a file's outline with bodies elided.
//!
//! A skeleton is chosen *lines* of the original file, never rewritten text, so every
//! line number in it is true and every line can be searched for in the file:
//!
//! - every definition's header (from its first line to where its body starts);
//! - the first line of its doc comment or docstring;
//! - the whole body of data types (struct fields, enum variants, interface members),
//!   up to a cap, because there the body *is* the signature;
//! - `⋮` where lines were left out.
//!
//! Each line is shown at most once, so each definition appears once, in file order.

use std::collections::BTreeSet;

use crate::{extract::FileAnalysis, tokens::count_tokens};
pub use protocol::Skeleton;

/// Body lines of a data type shown before it is cut.
const DATA_BODY_MAX_LINES: u32 = 40;

/// Chooses the lines of `source` that outline it.
pub fn skeleton_lines(source: &[u8], analysis: &FileAnalysis) -> BTreeSet<u32> {
    let line_starts = line_starts(source);
    let line_of = |byte: u32| -> u32 {
        match line_starts.binary_search(&(byte as usize)) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    };
    // Lines inside function bodies: never shown, even inside a data type's body.
    let mut elided = BTreeSet::new();
    for def in analysis.definitions.iter().filter(|d| d.kind.is_callable()) {
        if let Some((start, end)) = def.body {
            let (first, last) = (line_of(start), line_of(end.saturating_sub(1).max(start)));
            elided.extend(first + 1..last);
        }
    }
    let mut shown = BTreeSet::new();
    let header_end = |line: u32, body_start: u32| -> u32 {
        let body_line = line_of(body_start);
        let before = &source[line_starts[(body_line - 1) as usize]..body_start as usize];
        let body_opens_line = before.iter().all(u8::is_ascii_whitespace);
        if body_opens_line && body_line > line { body_line - 1 } else { body_line }
    };
    for scope in &analysis.scopes {
        let end = scope.body_start.map_or(scope.line, |b| header_end(scope.line, b));
        shown.extend(scope.line..=end);
    }
    for def in &analysis.definitions {
        let header_end = match def.body {
            Some((body_start, body_end)) => {
                let header_end = header_end(def.line, body_start);
                if def.kind.is_data_type() {
                    let body_end_line = line_of(body_end.saturating_sub(1).max(body_start));
                    let cap = header_end + DATA_BODY_MAX_LINES;
                    shown.extend(
                        (header_end..=body_end_line.min(cap)).filter(|l| !elided.contains(l)),
                    );
                }
                header_end
            }
            // No body: a constant, alias or declaration. Its first lines carry it.
            None => def.end_line.min(def.name_line + 2),
        };
        shown.extend(def.line..=header_end.max(def.name_line));
        if let Some(doc_line) = def.doc_line {
            shown.insert(doc_line);
        }
    }
    shown
}

/// Renders the skeleton of `source` with line numbers, with its token counts.
pub fn render(source: &[u8], analysis: &FileAnalysis) -> Skeleton {
    let (out, shown_lines) = render_lines(source, analysis);
    let file_tokens = count_tokens(&String::from_utf8_lossy(source));
    let skeleton_tokens = count_tokens(&out);
    Skeleton {
        definitions: analysis.definitions.len(),
        file_lines: analysis.lines,
        shown_lines,
        file_tokens,
        skeleton_tokens,
        ratio: if file_tokens == 0 { 0.0 } else { skeleton_tokens as f64 / file_tokens as f64 },
        text: out,
    }
}

/// The text [`render`] shows, without counting tokens: tokenizing the whole file
/// for the ratio was a third of the skeleton's cost in `understand` and `read`,
/// which show only the text.
pub fn render_text(source: &[u8], analysis: &FileAnalysis) -> String {
    render_lines(source, analysis).0
}

fn render_lines(source: &[u8], analysis: &FileAnalysis) -> (String, usize) {
    let shown = skeleton_lines(source, analysis);
    let text_lines: Vec<&[u8]> = split_lines(source);
    let width = text_lines.len().max(1).to_string().len();
    let mut out = String::new();
    let mut prev = 0u32;
    for &line in &shown {
        let Some(raw) = text_lines.get(line as usize - 1) else { continue };
        if line > prev + 1 {
            out.push_str(&format!("{:>width$}⋮\n", ""));
        }
        let text = String::from_utf8_lossy(raw);
        out.push_str(&format!("{line:>width$}│ {}\n", text.trim_end()));
        prev = line;
    }
    if (prev as usize) < text_lines.len() && !shown.is_empty() {
        out.push_str(&format!("{:>width$}⋮\n", ""));
    }
    (out, shown.len())
}

fn line_starts(source: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(source.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1));
    starts
}

fn split_lines(source: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = source.split(|&b| b == b'\n').collect();
    if source.ends_with(b"\n") {
        lines.pop();
    }
    lines
}
