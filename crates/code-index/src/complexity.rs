//! A cheap cyclomatic-complexity proxy: decision points per line.
//!
//! McCabe's number of a function is one plus its decision points. Counting them
//! exactly needs each grammar's node kinds; counting the keywords and operators that
//! introduce them, outside strings and comments, gets within a few percent on real
//! code at a fraction of the cost (no parse: the index already did that, and this
//! runs over every file for hotspots and reports).
//!
//! Decision points per language: `if`/`elif`/`else if`, loops (`for`, `while`,
//! `loop`), `case`/match arms (`=>` in Rust), `catch`/`except`, and the short-circuit
//! operators (`&&`, `||`, Python's `and`/`or`, JS `??`). `else` alone is not a
//! decision.

use crate::lang::Language;

/// Decision points on each line (index 0 is line 1).
pub fn decisions_per_line(language: Language, source: &[u8]) -> Vec<u16> {
    let keywords: &[&str] = match language {
        Language::Python => &["if", "elif", "for", "while", "except", "and", "or", "case"],
        Language::Rust => &["if", "for", "while", "loop"],
        Language::Go => &["if", "for", "case"],
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            &["if", "for", "while", "case", "catch"]
        }
        Language::Java | Language::C | Language::Cpp => &["if", "for", "while", "case", "catch"],
        Language::CSharp => &["if", "for", "foreach", "while", "case", "catch"],
    };
    let hash_comments = language == Language::Python;
    let backtick_strings = matches!(
        language,
        Language::Go | Language::JavaScript | Language::TypeScript | Language::Tsx
    );
    let arrows = language == Language::Rust;
    let nullish = matches!(language, Language::JavaScript | Language::TypeScript | Language::Tsx);

    let mut out = vec![0u16; source.iter().filter(|&&b| b == b'\n').count() + 1];
    let mut line = 0usize;
    let mut i = 0;
    let n = source.len();
    let bump = |out: &mut Vec<u16>, line: usize| {
        if let Some(c) = out.get_mut(line) {
            *c = c.saturating_add(1);
        }
    };
    while i < n {
        let b = source[i];
        match b {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'#' if hash_comments => i = skip_to_eol(source, i),
            b'/' if !hash_comments && source.get(i + 1) == Some(&b'/') => {
                i = skip_to_eol(source, i)
            }
            b'/' if !hash_comments && source.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < n && !(source[i] == b'*' && source.get(i + 1) == Some(&b'/')) {
                    if source[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
            }
            b'"' | b'\'' | b'`' => {
                if b == b'`' && !backtick_strings {
                    i += 1;
                    continue;
                }
                // A Rust lifetime (`'a`) is not a string: a char literal closes
                // within a few bytes.
                if b == b'\'' && language == Language::Rust && !rust_char_literal(source, i) {
                    i += 1;
                    continue;
                }
                let triple = hash_comments && source[i..].starts_with(&[b, b, b]);
                i = skip_string(source, i, b, triple, &mut line);
            }
            b'&' if source.get(i + 1) == Some(&b'&') => {
                bump(&mut out, line);
                i += 2;
            }
            b'|' if source.get(i + 1) == Some(&b'|') => {
                bump(&mut out, line);
                i += 2;
            }
            b'?' if nullish && source.get(i + 1) == Some(&b'?') => {
                bump(&mut out, line);
                i += 2;
            }
            b'=' if arrows && source.get(i + 1) == Some(&b'>') => {
                bump(&mut out, line);
                i += 2;
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while i < n && (source[i].is_ascii_alphanumeric() || source[i] == b'_') {
                    i += 1;
                }
                let word = &source[start..i];
                if keywords.iter().any(|k| k.as_bytes() == word) {
                    bump(&mut out, line);
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn skip_to_eol(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i] != b'\n' {
        i += 1;
    }
    i
}

fn rust_char_literal(s: &[u8], i: usize) -> bool {
    match s.get(i + 1) {
        Some(b'\\') => true,
        Some(_) => {
            // 'x' or a multi-byte char: the closing quote within 5 bytes.
            (i + 2..(i + 6).min(s.len())).any(|j| s[j] == b'\'')
                && !s[i + 1..].starts_with(b"static")
        }
        None => false,
    }
}

/// Skips a string starting at `i` (its quote `q`), counting newlines; returns the
/// index after its end.
fn skip_string(s: &[u8], mut i: usize, q: u8, triple: bool, line: &mut usize) -> usize {
    i += if triple { 3 } else { 1 };
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'\n' => {
                *line += 1;
                i += 1;
                // An unterminated ordinary string ends at the line's end (except in
                // languages where strings span lines: backticks, triples).
                if !triple && q != b'`' {
                    return i;
                }
            }
            c if c == q => {
                if !triple {
                    return i + 1;
                }
                if s[i..].starts_with(&[q, q, q]) {
                    return i + 3;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    i
}

/// Decision points between lines `start..=end` (1-based).
pub fn decisions_in(per_line: &[u16], start: u32, end: u32) -> u32 {
    let (a, b) = ((start.max(1) - 1) as usize, (end as usize).min(per_line.len()));
    if a >= b {
        return 0;
    }
    per_line[a..b].iter().map(|&c| u32::from(c)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(lang: Language, src: &str) -> u32 {
        decisions_per_line(lang, src.as_bytes()).iter().map(|&c| u32::from(c)).sum()
    }

    #[test]
    fn table() {
        use Language::*;
        let cases: &[(Language, &str, u32)] = &[
            (
                Python,
                "def f(x):\n    if x and y:\n        pass\n    elif z:\n        pass\n    else:\n        pass\n",
                3,
            ),
            (Python, "# if for while\ns = 'if x or y'\nt = \"\"\"\nif\nfor\n\"\"\"\n", 0),
            (Python, "x = [a for a in b if a]\n", 2),
            (Rust, "fn f(x: u8) -> u8 {\n    match x { 1 => 2, _ => 3 }\n}\n", 2),
            (
                Rust,
                "fn f<'a>(s: &'a str) -> bool { s == \"if\" || s.is_empty() && 'x' == 'y' }\n",
                2,
            ),
            (
                Rust,
                "// if while\n/* for\n loop */ fn g() { while true { if a {} else if b {} } }\n",
                3,
            ),
            (
                Go,
                "func f() {\n\tfor i := 0; i < 3; i++ {\n\t\tswitch i {\n\t\tcase 1:\n\t\tcase 2:\n\t\t}\n\t}\n\ts := `if\nfor`\n}\n",
                3,
            ),
            (TypeScript, "function f(a?: number) { return a ?? (b ? 1 : 2) || c; }\n", 2),
            (JavaScript, "try { if (x) {} } catch (e) {} // else if\n", 2),
            (Java, "class A { void f() { for (int i:xs) { if (i > 0 && i < 3) {} } } }\n", 3),
            (CSharp, "foreach (var x in xs) { while (y) {} }\n", 2),
            (C, "int f(int x) { if (x) return 1; /* case */ switch (x) { case 1: break; } }\n", 2),
        ];
        for (lang, src, want) in cases {
            assert_eq!(total(*lang, src), *want, "{lang:?}: {src}");
        }
    }

    #[test]
    fn counts_land_on_their_lines() {
        let per = decisions_per_line(Language::Python, b"a\nif x:\n  for y in z:\n    pass\n");
        assert_eq!(&per[..4], &[0, 1, 1, 0]);
        assert_eq!(decisions_in(&per, 2, 3), 2);
        assert_eq!(decisions_in(&per, 4, 99), 0);
        assert_eq!(decisions_in(&per, 5, 4), 0);
    }
}
