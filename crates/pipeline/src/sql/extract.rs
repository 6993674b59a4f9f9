//! Finding SQL in changed files: every statement of a `.sql` file, and the
//! string literals of code files that the parser (sqlparser, PostgreSQL
//! dialect) reads as one SELECT, UPDATE, DELETE or INSERT.
//!
//! Code is not parsed: a small lexer per language family walks comments and
//! string literals (quotes, triple quotes, raw strings, template literals), as
//! a pragmatic extraction. A literal built at run time — an f-string or a
//! template literal with a placeholder, a concatenation — is not a query we can
//! run, so it is not taken; one with bind parameters (`$1`, `%s`, `?`) is taken
//! and marked, so the step can say why it skips it.

use std::ops::Range;

use sqlparser::{
    ast::{Expr, Query, SelectItem, SetExpr, Statement, Value, visit_expressions},
    dialect::PostgreSqlDialect,
    parser::Parser,
    tokenizer::{Token, Tokenizer},
};

/// A statement's kind, as the step treats it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Select,
    Update,
    Delete,
    Insert,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Select => "select",
            Kind::Update => "update",
            Kind::Delete => "delete",
            Kind::Insert => "insert",
        }
    }
}

/// How a literal is written, for putting a rewritten query back in its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quoting {
    /// A statement of a `.sql` file: the text as it is.
    Plain,
    /// A literal whose body may hold newlines (triple quotes, template literals,
    /// Go's and Rust's raw strings, Java's text blocks).
    Multiline { raw: bool, close: &'static str },
    /// A one-line literal closed by `quote`.
    Line { raw: bool, quote: char },
}

/// A query found in a file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Found {
    /// 1-based lines of the query's first and last characters.
    pub line: u32,
    pub end_line: u32,
    pub kind: Kind,
    /// The SQL as the database gets it (escapes read, trimmed, no `;`).
    pub sql: String,
    /// Bind parameters (`$1`, `%s`, `%(name)s`, `?`): it cannot run as it is.
    pub params: bool,
    /// Where its text is in the file (the literal's body, or the statement).
    pub span: Range<usize>,
    pub quoting: Quoting,
}

/// The language family of a path, by its extension; `None`: not looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Sql,
    Python,
    /// JavaScript/TypeScript: `'`, `"`, template literals.
    Js,
    /// C-like with `"` strings and `'` characters (Java, Kotlin, C#, C, C++,
    /// PHP); Java's and Kotlin's `"""` text blocks.
    CLike,
    Go,
    Rust,
    Ruby,
}

fn family(path: &str) -> Option<Family> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "sql" => Family::Sql,
        "py" | "pyi" => Family::Python,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Family::Js,
        "java" | "kt" | "kts" | "scala" | "cs" | "c" | "h" | "cc" | "cpp" | "hpp" | "php" => {
            Family::CLike
        }
        "go" => Family::Go,
        "rs" => Family::Rust,
        "rb" => Family::Ruby,
        _ => return None,
    })
}

/// Every query in `text`, a file at `path`, in file order.
pub(crate) fn find(path: &str, text: &str) -> Vec<Found> {
    match family(path) {
        None => Vec::new(),
        Some(Family::Sql) => statements(text)
            .into_iter()
            .filter_map(|span| {
                let sql = text[span.clone()].to_owned();
                let (start, end) = trim_span(text, span);
                candidate(text, &sql, start..end, Quoting::Plain)
            })
            .collect(),
        Some(f) => literals(f, text)
            .into_iter()
            .filter_map(|lit| {
                if lit.dynamic {
                    return None;
                }
                let body = &text[lit.body.clone()];
                let sql = if lit.raw { body.to_owned() } else { unescape(body) };
                candidate(text, &sql, lit.body, lit.quoting)
            })
            .collect(),
    }
}

/// A span without the whitespace at either end.
fn trim_span(text: &str, span: Range<usize>) -> (usize, usize) {
    let s = &text[span.clone()];
    let start = span.start + (s.len() - s.trim_start().len());
    let end = span.end - (s.len() - s.trim_end().len());
    (start, end.max(start))
}

/// `sql` when it is one statement of a kind the step handles.
fn candidate(text: &str, sql: &str, span: Range<usize>, quoting: Quoting) -> Option<Found> {
    let trimmed = sql.trim().trim_end_matches(';').trim_end();
    let first = trimmed.split_whitespace().next()?.to_ascii_uppercase();
    if !["SELECT", "WITH", "UPDATE", "DELETE", "INSERT"].contains(&first.as_str()) {
        return None;
    }
    let (kind, params) = match classify(trimmed) {
        Some(k) => (k, has_placeholder(trimmed)),
        // Driver-style parameters do not parse as PostgreSQL: try them as `$1`.
        None => (classify(&driver_params_as_dollar(trimmed)?)?, true),
    };
    let (start, end) = trim_span(text, span);
    let line = line_of(text, start);
    let end_line = line_of(text, end.saturating_sub(1).max(start));
    // A literal's body holds the query with its indentation; the span keeps the
    // whole body, so a rewrite replaces it all.
    Some(Found { line, end_line, kind, sql: trimmed.to_owned(), params, span: start..end, quoting })
}

/// The statement's kind when `sql` parses as exactly one statement, with no
/// `;` inside it (the step runs it with the simple query protocol).
pub(crate) fn classify(sql: &str) -> Option<Kind> {
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql).tokenize().ok()?;
    if tokens.contains(&Token::SemiColon) {
        return None;
    }
    let mut parsed = Parser::parse_sql(&dialect, sql).ok()?;
    if parsed.len() != 1 {
        return None;
    }
    match parsed.pop()? {
        Statement::Query(q) if looks_like_prose(&q) => None,
        Statement::Query(_) => Some(Kind::Select),
        Statement::Update(_) => Some(Kind::Update),
        Statement::Delete(_) => Some(Kind::Delete),
        Statement::Insert(_) => Some(Kind::Insert),
        _ => None,
    }
}

/// `Select an option` parses (`SELECT an AS option`): a SELECT without FROM
/// whose items are bare names is a sentence, not a query.
fn looks_like_prose(q: &Query) -> bool {
    let SetExpr::Select(s) = q.body.as_ref() else { return false };
    s.from.is_empty()
        && s.projection.iter().all(|item| {
            matches!(
                item,
                SelectItem::UnnamedExpr(Expr::Identifier(_))
                    | SelectItem::ExprWithAlias { expr: Expr::Identifier(_), .. }
            )
        })
}

/// Whether a parsed statement has `$n` parameters.
fn has_placeholder(sql: &str) -> bool {
    let Ok(parsed) = Parser::parse_sql(&PostgreSqlDialect {}, sql) else { return false };
    let mut found = false;
    let _ = visit_expressions(&parsed, |e| {
        if let Expr::Value(v) = e
            && matches!(v.value, Value::Placeholder(_))
        {
            found = true;
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    found
}

/// `%s`, `%(name)s` and `?` outside quotes as `$1`; `None` when there is none.
fn driver_params_as_dollar(sql: &str) -> Option<String> {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut changed = false;
    let mut chars = sql.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                out.push(c);
            }
            '?' => {
                out.push_str("$1");
                changed = true;
            }
            '%' if sql[i + 1..].starts_with('s') => {
                chars.next();
                out.push_str("$1");
                changed = true;
            }
            '%' if sql[i + 1..].starts_with('(') => match sql[i..].find(")s") {
                Some(close) => {
                    while chars.peek().is_some_and(|(j, _)| *j < i + close + 2) {
                        chars.next();
                    }
                    out.push_str("$1");
                    changed = true;
                }
                None => out.push(c),
            },
            _ => out.push(c),
        }
    }
    changed.then_some(out)
}

fn line_of(text: &str, offset: usize) -> u32 {
    text[..offset.min(text.len())].bytes().filter(|b| *b == b'\n').count() as u32 + 1
}

/// The statements of a SQL file, as byte ranges without their `;`: a split at
/// top-level semicolons, past quotes, `$tag$` bodies and comments.
pub(crate) fn statements(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
            }
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() {
                    if b[i] == q {
                        if b.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'$' => {
                let tag_end = text[i + 1..]
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .map(|n| i + 1 + n);
                match tag_end {
                    Some(e)
                        if b[e] == b'$' && !b[i + 1..e].first().is_some_and(u8::is_ascii_digit) =>
                    {
                        let tag = &text[i..=e];
                        i = text[e + 1..].find(tag).map_or(b.len(), |n| e + 1 + n + tag.len());
                    }
                    _ => i += 1,
                }
            }
            b';' => {
                out.push(start..i);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push(start..b.len());
    out.retain(|r| {
        let s = strip_sql_comments(&text[r.clone()]);
        !s.trim().is_empty()
    });
    // A statement's range starts after the comments above it.
    out.into_iter()
        .map(|r| {
            let mut s = r.start;
            loop {
                let rest = &text[s..r.end];
                let t = rest.trim_start();
                s += rest.len() - t.len();
                if t.starts_with("--") {
                    s += t.find('\n').unwrap_or(t.len());
                } else if t.starts_with("/*") {
                    s += t.find("*/").map_or(t.len(), |n| n + 2);
                } else {
                    break;
                }
            }
            s..r.end
        })
        .collect()
}

fn strip_sql_comments(s: &str) -> String {
    s.lines().map(|l| l.split("--").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// A string literal of a code file.
#[derive(Debug, Clone)]
struct Literal {
    /// The body, without quotes or prefix.
    body: Range<usize>,
    raw: bool,
    /// Interpolated (an f-string or template literal with a placeholder): its
    /// text is not the query that runs.
    dynamic: bool,
    quoting: Quoting,
}

/// The string literals of `text`, skipping comments.
fn literals(f: Family, text: &str) -> Vec<Literal> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let hash_comments = matches!(f, Family::Python | Family::Ruby);
    let slash_comments = !matches!(f, Family::Python);
    while i < b.len() {
        let c = b[i];
        if hash_comments && c == b'#' {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n);
            continue;
        }
        if slash_comments && c == b'/' && b.get(i + 1) == Some(&b'/') {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n);
            continue;
        }
        if slash_comments && c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
            continue;
        }
        // Rust raw strings: r"..", r#".."#.
        if f == Family::Rust && c == b'r' && !prev_is_ident(b, i) {
            let hashes = b[i + 1..].iter().take_while(|x| **x == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') {
                let open = i + 2 + hashes;
                let close: &'static str = match hashes {
                    0 => "\"",
                    1 => "\"#",
                    2 => "\"##",
                    _ => "\"###",
                };
                let end = text[open..].find(close).map_or(b.len(), |n| open + n);
                out.push(Literal {
                    body: open..end,
                    raw: true,
                    dynamic: false,
                    quoting: Quoting::Multiline { raw: true, close },
                });
                i = (end + close.len()).min(b.len());
                continue;
            }
        }
        let quote = match (f, c) {
            (_, b'"') => true,
            (Family::Rust, b'\'') => {
                // A char literal ('a', '\n') or a lifetime: skip it.
                i += if b.get(i + 1) == Some(&b'\\') { 4 } else { 1 };
                continue;
            }
            (_, b'\'') => true,
            (Family::Js | Family::Go, b'`') => true,
            _ => false,
        };
        if !quote {
            i += 1;
            continue;
        }
        let q = c as char;
        // Python's prefixes (f, r, b, u and pairs of them) sit before the quote.
        let prefix: String = if f == Family::Python {
            let mut p = i;
            while p > 0 && b[p - 1].is_ascii_alphabetic() && i - p < 2 {
                p -= 1;
            }
            if p > 0 && (b[p - 1].is_ascii_alphanumeric() || b[p - 1] == b'_') {
                String::new()
            } else {
                text[p..i].to_ascii_lowercase()
            }
        } else {
            String::new()
        };
        let triple = (f == Family::Python && (q == '"' || q == '\''))
            || (matches!(f, Family::CLike) && q == '"');
        let triple = triple && b.get(i + 1) == Some(&c) && b.get(i + 2) == Some(&c);
        if triple {
            let close: &'static str = if q == '"' { "\"\"\"" } else { "'''" };
            let open = i + 3;
            let raw = prefix.contains('r');
            let end = find_close(text, open, close, raw);
            let body = open..end;
            let dynamic = prefix.contains('f') && text[body.clone()].contains('{');
            out.push(Literal { body, raw, dynamic, quoting: Quoting::Multiline { raw, close } });
            i = (end + 3).min(b.len());
            continue;
        }
        if q == '`' {
            let raw = f == Family::Go;
            let end = find_close(text, i + 1, "`", raw);
            let body = i + 1..end;
            let dynamic = f == Family::Js && text[body.clone()].contains("${");
            out.push(Literal {
                body,
                raw,
                dynamic,
                quoting: Quoting::Multiline { raw, close: "`" },
            });
            i = (end + 1).min(b.len());
            continue;
        }
        let raw = prefix.contains('r');
        let close = if q == '"' { "\"" } else { "'" };
        let end = find_close(text, i + 1, close, raw);
        let body = i + 1..end;
        let dynamic = prefix.contains('f') && text[body.clone()].contains('{');
        out.push(Literal { body, raw, dynamic, quoting: Quoting::Line { raw, quote: q } });
        i = (end + 1).min(b.len());
    }
    out
}

fn prev_is_ident(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Where `close` ends a literal opened before `from` (a backslash escapes the
/// next character unless `raw`); the text's end when it is never closed.
fn find_close(text: &str, from: usize, close: &str, raw: bool) -> usize {
    let b = text.as_bytes();
    let mut i = from;
    while i < b.len() {
        if !raw && b[i] == b'\\' {
            i += 2;
            continue;
        }
        // Bytes, not `text[i..]`: after a backslash `i` may sit inside a
        // character (`"wait…"` panicked here), and a quote is one byte anyway.
        if b[i..].starts_with(close.as_bytes()) {
            return i;
        }
        // A one-line literal ends at the line's end (an unclosed quote).
        if close.len() == 1 && close != "`" && b[i] == b'\n' {
            return i;
        }
        i += 1;
    }
    b.len().max(from)
}

/// A literal's body with its common escapes read.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => {}
            Some('\n') => {}
            Some(other @ ('\\' | '\'' | '"' | '`')) => out.push(other),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// `sql` written as the body of a literal quoted as `quoting`; `None` when it
/// cannot be (a raw literal whose closing delimiter the text holds).
pub(crate) fn as_literal_body(sql: &str, quoting: Quoting) -> Option<String> {
    match quoting {
        Quoting::Plain => Some(sql.to_owned()),
        Quoting::Multiline { raw, close } => {
            if raw {
                (!sql.contains(close)).then(|| sql.to_owned())
            } else {
                let escaped = sql.replace('\\', "\\\\");
                let first = &close[..1];
                Some(escaped.replace(close, &format!("\\{first}{}", &close[1..])))
            }
        }
        Quoting::Line { raw, quote } => {
            let one_line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
            if raw {
                (!one_line.contains(quote)).then_some(one_line)
            } else {
                Some(one_line.replace('\\', "\\\\").replace(quote, &format!("\\{quote}")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(line, kind, params, sql)` of every query found.
    fn check(path: &str, text: &str, want: &[(u32, &str, bool, &str)]) {
        let got: Vec<(u32, &str, bool, String)> = find(path, text)
            .into_iter()
            .map(|f| (f.line, f.kind.name(), f.params, f.sql))
            .collect();
        let want: Vec<(u32, &str, bool, String)> =
            want.iter().map(|(l, k, p, s)| (*l, *k, *p, (*s).to_owned())).collect();
        assert_eq!(got, want, "{path}");
    }

    /// Characters of more than one byte next to escapes and quotes, in every
    /// quoting: no panic (the pipeline's TEST stage died on pylint's `"wait…"`),
    /// and a query after them is still found.
    #[test]
    fn literals_with_multibyte_characters_and_escapes_are_read() {
        for (path, text) in [
            (
                "a.py",
                "MSG = \"wait…\"\nE = \"\\…\"\nQ = \"SELECT id FROM users WHERE name = 'é'\"\n",
            ),
            ("a.py", "T = '''naïve \\é'''\nQ = 'SELECT id FROM users'\n"),
            ("a.js", "const m = `x\\…`; const q = \"SELECT id FROM users\";\n"),
            ("a.rs", "let c = '…'; let e = '\\u{2026}'; let q = \"SELECT id FROM users\";\n"),
            ("a.go", "m := \"日本\\語\"\nq := \"SELECT id FROM users\"\n"),
        ] {
            let found = find(path, text);
            assert!(
                found.iter().any(|f| text[f.span.clone()].starts_with("SELECT id FROM users")),
                "{path}: {text:?} -> {found:?}"
            );
        }
    }

    #[test]
    fn python_literals_that_parse_as_queries_and_nothing_else() {
        let text = r#"import db

# SELECT * FROM in_a_comment
HELP = "Select the rows you want, then delete them."
Q1 = "SELECT id, email FROM users WHERE email = 'a@b.c'"
def orders(user_id):
    return db.run("""
        SELECT o.id, o.total
        FROM orders o
        WHERE o.status = 'open'
        ORDER BY o.id
    """)
def by_id(cur, uid):
    cur.execute("SELECT * FROM users WHERE id = %s", (uid,))
    cur.execute(f"SELECT * FROM users WHERE id = {uid}")
    cur.execute(f"SELECT * FROM users")
    cur.execute('DELETE FROM sessions WHERE expires < now()')
    return "update your profile"
"#;
        check(
            "app/db.py",
            text,
            &[
                (5, "select", false, "SELECT id, email FROM users WHERE email = 'a@b.c'"),
                (
                    8,
                    "select",
                    false,
                    "SELECT o.id, o.total\n        FROM orders o\n        WHERE o.status = 'open'\n        ORDER BY o.id",
                ),
                (14, "select", true, "SELECT * FROM users WHERE id = %s"),
                (16, "select", false, "SELECT * FROM users"),
                (17, "delete", false, "DELETE FROM sessions WHERE expires < now()"),
            ],
        );
    }

    #[test]
    fn javascript_literals_templates_without_placeholders_only() {
        let text = "// SELECT 1 FROM nowhere\n\
const a = 'SELECT name FROM users WHERE active';\n\
const b = `SELECT *\n  FROM events\n  WHERE kind = 'click'`;\n\
const c = `SELECT * FROM events WHERE id = ${id}`;\n\
const d = \"INSERT INTO log (msg) VALUES ('hi')\";\n\
const e = 'Select an option';\n\
db.query('UPDATE users SET name = $1 WHERE id = $2', [n, id]);\n\
const f = \"SELECT * FROM t WHERE x = ?\";\n";
        check(
            "web/q.ts",
            text,
            &[
                (2, "select", false, "SELECT name FROM users WHERE active"),
                (3, "select", false, "SELECT *\n  FROM events\n  WHERE kind = 'click'"),
                (7, "insert", false, "INSERT INTO log (msg) VALUES ('hi')"),
                (9, "update", true, "UPDATE users SET name = $1 WHERE id = $2"),
                (10, "select", true, "SELECT * FROM t WHERE x = ?"),
            ],
        );
    }

    #[test]
    fn sql_files_every_statement_with_its_line() {
        let text = "-- reports\nCREATE TABLE t (id int);\n\nSELECT count(*)\nFROM t\nWHERE id > 10;\n/* a; comment */\nUPDATE t SET id = id + 1 WHERE id = 3;\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;\nselect 'a;b' from t\n";
        check(
            "db/report.sql",
            text,
            &[
                (4, "select", false, "SELECT count(*)\nFROM t\nWHERE id > 10"),
                (8, "update", false, "UPDATE t SET id = id + 1 WHERE id = 3"),
                (10, "select", false, "select 'a;b' from t"),
            ],
        );
        let found = find("db/report.sql", text);
        assert_eq!(&text[found[0].span.clone()], "SELECT count(*)\nFROM t\nWHERE id > 10");
        assert_eq!(found[0].end_line, 6);
    }

    #[test]
    fn other_languages_strings() {
        check(
            "main.go",
            "q := `SELECT id\n FROM users`\nr := \"DELETE FROM t WHERE id = 1\"\n",
            &[
                (1, "select", false, "SELECT id\n FROM users"),
                (3, "delete", false, "DELETE FROM t WHERE id = 1"),
            ],
        );
        check(
            "src/db.rs",
            "fn f<'a>(x: &'a str) { let c = 'x'; q(r#\"SELECT \"id\" FROM users\"#); q(\"SELECT 1\"); }\n",
            &[(1, "select", false, "SELECT \"id\" FROM users"), (1, "select", false, "SELECT 1")],
        );
        check(
            "Repo.java",
            "String q = \"\"\"\n    SELECT id FROM users\n    \"\"\";\nchar c = '\"';\n",
            &[(2, "select", false, "SELECT id FROM users")],
        );
        check("notes.txt", "SELECT 1", &[]);
    }

    #[test]
    fn rewritten_queries_go_back_in_their_literals_quoting() {
        let cases = [
            (
                Quoting::Line { raw: false, quote: '"' },
                "SELECT \"a\"\n FROM t",
                Some("SELECT \\\"a\\\" FROM t"),
            ),
            (Quoting::Line { raw: true, quote: '\'' }, "SELECT 'a'", None),
            (
                Quoting::Multiline { raw: false, close: "\"\"\"" },
                "SELECT 1\nFROM t",
                Some("SELECT 1\nFROM t"),
            ),
            (Quoting::Multiline { raw: true, close: "`" }, "SELECT `x`", None),
            (Quoting::Plain, "SELECT 1", Some("SELECT 1")),
        ];
        for (q, sql, want) in cases {
            assert_eq!(as_literal_body(sql, q).as_deref(), want, "{q:?} {sql}");
        }
    }
}
