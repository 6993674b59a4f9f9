//! The matcher as a table: file, target, scope, expectation → what was found (line
//! ranges and normalizations) or which error with which candidate lines.

use super::*;

/// A compact rendering of an outcome: `ok 2-3 [trailingWhitespace]`,
/// `ambiguous 1,4`, `nomatch 5-6@0.8`.
fn outcome(text: &str, target: &str, scope: Option<(u32, u32)>, want: Want) -> String {
    let ix = LineIndex::new(text);
    let scope = scope.map(|(a, b)| LineRange::new(a, b));
    match find(text, target, scope, want) {
        Ok(f) => {
            let ranges: Vec<String> =
                f.spans.iter().map(|&(s, e)| ix.lines_of(s, e).to_string()).collect();
            let norms: Vec<String> = f
                .normalizations
                .iter()
                .map(|n| match n {
                    Normalization::LineEndings { file } => format!("eol:{file}"),
                    Normalization::TrailingWhitespace => "trailing".to_owned(),
                    Normalization::Indentation { added, removed } => {
                        format!("indent:+{:?}-{:?}", added, removed)
                    }
                    Normalization::TabsAsSpaces { tab_width } => format!("tabs:{tab_width}"),
                    other => format!("{other:?}"),
                })
                .collect();
            format!("ok {} [{}]", ranges.join(","), norms.join(" "))
        }
        Err(MatchError::Ambiguous { candidates, .. }) => {
            let r: Vec<String> = candidates.iter().map(|c| c.line_range.to_string()).collect();
            format!("ambiguous {}", r.join(","))
        }
        Err(MatchError::NoMatch { candidates, .. }) => {
            let r: Vec<String> = candidates
                .iter()
                .map(|c| format!("{}@{:.2}", c.line_range, c.similarity.unwrap_or(0.0)))
                .collect();
            format!("nomatch {}", r.join(","))
        }
    }
}

const ONE: Want = Want::Exactly(1);

/// name, file, target, scope, want, expected outcome
type Case<'a> = (&'a str, &'a str, &'a str, Option<(u32, u32)>, Want, &'a str);

#[test]
fn table() {
    let py = "def f():\n    if x:\n        return 1\n    return 2\n";
    let crlf = "a = 1\r\nb = 2\r\nc = 3\r\n";
    let tabs = "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n";
    let dup = "x = 1\ny = 2\nx = 1\n";
    let trailing = "fn a() {   \n    b();\t\n}\n";
    #[rustfmt::skip]
    let cases: &[Case<'_>] = &[
        // name, file, target, scope, want, expected
        ("exact substring", py, "return 1", None, ONE, "ok 3 []"),
        ("exact multi-line", py, "    if x:\n        return 1\n", None, ONE, "ok 2-3 []"),
        ("crlf drift", crlf, "a = 1\nb = 2", None, ONE, "ok 1-2 [eol:crlf]"),
        ("dedented block", py, "if x:\n    return 1\n", None, ONE, "ok 2-3 [indent:+\"    \"-\"\"]"),
        ("over-indented block", py, "        if x:\n            return 1", None, ONE, "ok 2-3 [indent:+\"\"-\"    \"]"),
        ("trailing whitespace in file", trailing, "fn a() {\n    b();\n}", None, ONE, "ok 1-3 [trailing]"),
        ("trailing whitespace in target", py, "def f():   \n    if x:", None, ONE, "ok 1-2 [trailing]"),
        ("spaces for tabs", tabs, "if x {\n    return 1\n}", None, ONE, "ok 2-4 [tabs:4]"),
        ("duplicate is ambiguous", dup, "x = 1", None, ONE, "ambiguous 1,3"),
        ("duplicate with count", dup, "x = 1", None, Want::Exactly(2), "ok 1,3 []"),
        ("duplicate replace all", dup, "x = 1", None, Want::All, "ok 1,3 []"),
        ("duplicate disambiguated by range", dup, "x = 1", Some((2, 3)), ONE, "ok 3 []"),
        ("fewer than expected", dup, "y = 2", None, Want::Exactly(2), "nomatch 2@1.00"),
        ("only outside the range", dup, "y = 2", Some((3, 3)), ONE, "nomatch 2@1.00"),
        ("overlapping occurrences", "aaa\n", "aa", None, Want::All, "ambiguous 1,1"),
        ("tolerant duplicates are ambiguous", "  x()\n    x()\n", "x()\n", None, Want::Exactly(1), "ambiguous 1,2"),
        ("inconsistent indentation is no match", py, "if x:\n      return 1", None, ONE, "nomatch 2-3@1.00,4@0.64"),
        ("closest candidate", py, "    if y:\n        return 1\n", None, ONE, "nomatch 2-3@0.93,4@0.64"),
        ("typo in a fragment", py, "retrun 3", None, ONE, "nomatch 3@0.75,4@0.75"),
        ("nothing similar", py, "zzzz qqqq", None, ONE, "nomatch "),
        ("blank target never tolerant", "a\n\n\nb\n", "  \n", None, ONE, "nomatch "),
        ("unicode overlapping search", "é=é=é\n", "é=é", None, Want::All, "ambiguous 1,1"),
        ("exact wins over tolerant", "  x()\nx()\n", "x()\n", None, ONE, "ambiguous 1,2"),
    ];
    let mut failures = Vec::new();
    for (name, file, target, scope, want, expected) in cases {
        let got = outcome(file, target, *scope, *want);
        if got != *expected {
            failures.push(format!("{name}: expected {expected:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn reindent_follows_the_match() {
    let py = "class A:\n    def f(self):\n        return 1\n";
    let f = find(py, "def f(self):\n    return 1\n", None, ONE).unwrap();
    assert_eq!(f.reindent, Reindent::Add("    ".into()));
    assert_eq!(
        f.reindent.apply("def f(self):\n    return 2\n\n    # done\n"),
        "    def f(self):\n        return 2\n\n        # done\n"
    );
    let tabs = "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n";
    let f = find(tabs, "if x {\n    return 1\n}", None, ONE).unwrap();
    assert_eq!(f.reindent.apply("if y {\n    return 2\n}"), "\tif y {\n\t\treturn 2\n\t}");
}

#[test]
fn candidates_carry_previews_of_the_file_text() {
    let file = "fn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n";
    let Err(MatchError::NoMatch { candidates, message }) =
        find(file, "let total = compute(1, 3);", None, ONE)
    else {
        panic!("expected no match")
    };
    assert_eq!(candidates[0].line_range, LineRange::new(2, 2));
    assert!(candidates[0].preview.contains("compute(1, 2)"), "{:?}", candidates[0]);
    assert!(message.contains("lines 2"), "{message}");
}
