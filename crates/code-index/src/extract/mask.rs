//! What the parser reads instead of the source, where a grammar goes wrong or slow:
//! masks that blank bytes (to spaces, line breaks kept) so every offset stays true.
//! All text (names, signatures, docs) is read from the original bytes.

use std::{borrow::Cow, sync::OnceLock};

use crate::lang::Language;

/// The bytes the parser reads for `src` in `lang`.
pub(super) fn for_parser(lang: Language, src: &[u8]) -> Cow<'_, [u8]> {
    match lang {
        Language::C | Language::Cpp => mask_macros(src),
        Language::Python => mask_comment_runs(src),
        _ => Cow::Borrowed(src),
    }
}

/// Python: the inside of every long run of comment lines at one indentation blanked
/// (spaces, line breaks kept), for the parser only.
///
/// tree-sitter-python's scanner, at the end of each line, reads ahead over all the
/// comment lines that follow to find the next line of code's indentation, and the
/// comments are then lexed one by one: a run of n comment lines costs n² (16,000
/// lines took 15 s to parse). Blank lines are skipped in one pass, so the run's
/// first and last lines are enough: they decide where a block ends (the first one
/// at a smaller indentation closes it, and the last one is where a block that keeps
/// them ends), and doc comments are read from the source
/// ([`super::Extractor::line_comment_block_first_line`]).
pub(super) fn mask_comment_runs(src: &[u8]) -> Cow<'_, [u8]> {
    /// Shorter runs cost at most this many lines' reading per line.
    const MIN_RUN: usize = 8;
    let mut out: Option<Vec<u8>> = None;
    let mut blank = |run: &[(usize, usize)]| {
        if run.len() < MIN_RUN {
            return;
        }
        let buf = out.get_or_insert_with(|| src.to_vec());
        for &(start, end) in &run[1..run.len() - 1] {
            for b in &mut buf[start..end] {
                if *b != b'\r' {
                    *b = b' ';
                }
            }
        }
    };
    // (start, end) of each line of the current run, without its line break.
    let mut run: Vec<(usize, usize)> = Vec::new();
    let mut run_indent: &[u8] = &[];
    let mut pos = 0;
    while pos < src.len() {
        let end = src[pos..].iter().position(|&b| b == b'\n').map_or(src.len(), |i| pos + i);
        let line = &src[pos..end];
        let ws = line.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
        if line.get(ws) == Some(&b'#') {
            if !run.is_empty() && line[..ws] != *run_indent {
                blank(&run);
                run.clear();
            }
            run_indent = &line[..ws];
            run.push((pos, end));
        } else if !run.is_empty() {
            blank(&run);
            run.clear();
        }
        pos = end + 1;
    }
    blank(&run);
    match out {
        Some(buf) => Cow::Owned(buf),
        None => Cow::Borrowed(src),
    }
}

/// Blanks C/C++ macros that the grammar would misparse, keeping every byte offset:
///
/// - export macros in class heads: `class LEVELDB_EXPORT Cache {`;
/// - annotations after a parameter list: `void Lock() EXCLUSIVE_LOCK_FUNCTION() {`;
/// - annotations after a member: `int count_ GUARDED_BY(mu_);`.
///
/// Without this, tree-sitter reads `class LEVELDB_EXPORT Cache {...}` as a function
/// named `Cache`, and everything after it in the file goes wrong with it. Only
/// ALL_CAPS identifiers (with an underscore, for the annotations) in those positions
/// are touched, which is how such macros are written.
pub(super) fn mask_macros(src: &[u8]) -> Cow<'_, [u8]> {
    use regex::bytes::Regex;
    static PATTERNS: OnceLock<[Regex; 4]> = OnceLock::new();
    let [class_head, after_params, after_member, before_type] = PATTERNS.get_or_init(|| {
        // ASCII mode (`(?-u)`): C and C++ identifiers are ASCII.
        [
            Regex::new(r"(?-u)\b(?:class|struct|union)\s+([A-Z][A-Z0-9_]{2,})\s+([A-Za-z_]\w*)\s*(?:\{|:[^:]|final\b)")
                .unwrap(),
            Regex::new(
                r"(?-u)\)\s*(?:const\s*)?(?:noexcept\s*)?([A-Z][A-Z0-9]*_[A-Z0-9_]*(?:\s*\([^()\n]*\))?)\s*(?:\{|;|=|->|override\b|final\b)",
            )
            .unwrap(),
            Regex::new(r"(?-u)\b([A-Za-z_]\w*)\s+([A-Z][A-Z0-9]*_[A-Z0-9_]*\s*\([^()\n]*\))\s*[;=]").unwrap(),
            // `SPDLOG_INLINE std::shared_ptr<logger> get(`, `FMT_CONSTEXPR FMT_INLINE
            // auto f(`: macros before a return type and a name (one word after
            // the macro is a declaration of that type: `LARGE_INTEGER f(`).
            Regex::new(
                r"(?-u)(?m)^[ \t]*(?:template[ \t]*<[^\n]*?>[ \t]*)?((?:[A-Z][A-Z0-9]*_[A-Z0-9_]*[ \t]+)+)(?:(?:static|inline|constexpr|virtual|explicit|friend|const)[ \t]+)*[A-Za-z_][\w:]*(?:<[^;{}()\n]*>)?[ \t*&]+[A-Za-z_~][\w:]*[ \t]*\(",
            )
            .unwrap(),
        ]
    });
    let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
    for c in class_head.captures_iter(src) {
        if c.get(2).is_some_and(|n| n.as_bytes() != b"final") {
            spans.extend(c.get(1).map(|m| m.range()));
        }
    }
    spans.extend(after_params.captures_iter(src).filter_map(|c| c.get(1)).map(|m| m.range()));
    spans.extend(before_type.captures_iter(src).filter_map(|c| c.get(1)).map(|m| m.range()));
    for c in after_member.captures_iter(src) {
        let word = c.get(1).map_or(&b""[..], |m| m.as_bytes());
        // `return FOO_BAR(x);` is an expression, not a member with an annotation.
        if !matches!(
            word,
            b"return"
                | b"case"
                | b"else"
                | b"do"
                | b"throw"
                | b"goto"
                | b"co_return"
                | b"co_yield"
                | b"delete"
                | b"new"
        ) {
            spans.extend(c.get(2).map(|m| m.range()));
        }
    }
    if spans.is_empty() {
        return Cow::Borrowed(src);
    }
    let mut out = src.to_vec();
    for span in spans {
        for b in &mut out[span] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    Cow::Owned(out)
}
