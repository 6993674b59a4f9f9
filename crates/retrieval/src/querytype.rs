//! What a query is and what it mentions.
//!
//! A pure function of the text: the kind of query (a symbol lookup, a file, an
//! error message or stack trace, or a concept in words) and the concrete handles
//! it carries: identifiers (from backticks, code blocks, `CamelCase`, `snake_case`,
//! dotted and called names), paths and stack-trace frames (with line and function
//! when a frame has them), and literal strings worth finding verbatim (quoted
//! messages, command-line options). Retrieval weighs its signals by these.

use std::collections::HashSet;

use serde::Serialize;

use code_index::{Error, Result};
pub use protocol::QueryKind;

/// The longest query the retrievers take. Issue texts are kilobytes; a larger one
/// is a log dump or the wrong file, and would cost seconds of BM25 over its
/// hundreds of thousands of terms (4 MB took 6 s on this repository).
pub const MAX_QUERY_BYTES: usize = 1 << 20;

/// Refuses a query over [`MAX_QUERY_BYTES`], before any work is done on it.
pub(crate) fn check_query_size(query: &str) -> Result<()> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(Error::InvalidArgument(format!(
            "the query is {} bytes, over the {MAX_QUERY_BYTES} byte limit; pass the issue text, not a whole log",
            query.len()
        )));
    }
    Ok(())
}

/// An identifier the query mentions, and how sure we are it is code.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mention {
    pub text: String,
    /// 1.0 in backticks or a code block, or shaped like code (`snake_case`,
    /// `CamelCase`, `a.b`, `f(`); 0.25 for a plain word.
    pub strength: f64,
}

/// A path or stack frame the query mentions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathMention {
    pub path: String,
    pub line: Option<u32>,
    pub function: Option<String>,
    /// From a stack trace (rather than prose).
    pub frame: bool,
    /// The directories come from a package name (a JVM frame's
    /// `com.example.Foo`), so a file matches only with its last directory: a
    /// frame of the JDK's `java/lang/Thread.java` is not the project's `Thread.java`.
    pub anchored: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryFeatures {
    pub kind: QueryKind,
    pub identifiers: Vec<Mention>,
    pub paths: Vec<PathMention>,
    pub literals: Vec<String>,
}

const SOURCE_EXTS: &[&str] = &[
    "py", "pyi", "rs", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "go", "java", "cs",
    "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "rb", "php", "kt", "swift", "toml", "cfg",
    "ini", "json", "yaml", "yml",
];

/// Words that look like identifiers in prose but say nothing.
const COMMON: &[&str] = &[
    "the",
    "and",
    "for",
    "not",
    "this",
    "that",
    "with",
    "from",
    "when",
    "what",
    "which",
    "have",
    "has",
    "but",
    "are",
    "was",
    "were",
    "will",
    "would",
    "should",
    "could",
    "can",
    "does",
    "did",
    "doesn",
    "isn",
    "its",
    "into",
    "also",
    "only",
    "just",
    "than",
    "then",
    "there",
    "here",
    "these",
    "those",
    "such",
    "some",
    "any",
    "all",
    "each",
    "other",
    "more",
    "most",
    "very",
    "been",
    "being",
    "because",
    "about",
    "after",
    "before",
    "like",
    "use",
    "used",
    "using",
    "get",
    "set",
    "new",
    "old",
    "one",
    "two",
    "way",
    "see",
    "run",
    "make",
    "work",
    "works",
    "working",
    "error",
    "errors",
    "issue",
    "bug",
    "fix",
    "version",
    "python",
    "code",
    "file",
    "files",
    "line",
    "lines",
    "test",
    "tests",
    "example",
    "expected",
    "actual",
    "behavior",
    "behaviour",
    "output",
    "result",
    "results",
    "thanks",
    "please",
    "would",
    "like",
    "think",
    "seems",
    "following",
    "current",
    "instead",
    "case",
    "true",
    "false",
    "none",
    "null",
    "self",
    "def",
    "class",
    "return",
    "import",
    "print",
    "value",
    "values",
    "type",
    "http",
    "https",
    "www",
    "com",
    "org",
    "github",
    "html",
];

pub fn analyze_query(query: &str) -> QueryFeatures {
    let cleaned = clean(query);
    let query = cleaned.as_str();
    let paths = find_paths(query);
    let identifiers = find_identifiers(query);
    let literals = find_literals(query);
    let kind = classify(query, &paths, &identifiers);
    QueryFeatures { kind, identifiers, paths, literals }
}

/// Removes what issue trackers add that says nothing about the code: HTML comments
/// (issue templates), package listings (`pip list`, `pip freeze`, `conda list`),
/// environment reports (`xr.show_versions()`: `numpy: 1.18.1`, `OS: Darwin`),
/// interpreter banners and URLs.
pub fn clean(query: &str) -> String {
    let mut text = String::with_capacity(query.len());
    let mut rest = query;
    while let Some(start) = rest.find("<!--") {
        text.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => {
                rest = "";
            }
        }
    }
    text.push_str(rest);
    let lines: Vec<&str> = text.lines().collect();
    let report = environment_report_lines(&lines);
    let mut out = String::with_capacity(text.len());
    for (i, line) in lines.iter().enumerate() {
        if is_package_listing(line)
            || report[i]
            || is_interpreter_banner(line)
            || (i > 0 && is_template_heading(line))
        {
            continue;
        }
        let kept: Vec<&str> = line
            .split(' ')
            .filter(|w| !(w.starts_with("http://") || w.starts_with("https://")))
            .collect();
        out.push_str(&kept.join(" "));
        out.push('\n');
    }
    out
}

/// Which lines belong to an environment report. Such reports
/// (`xr.show_versions()`, `sklearn.show_versions()`, the "Versions" section of
/// issue templates) list the platform and every dependency, and their keys are the
/// string constants of the module that prints them, which the text signals would
/// otherwise rank first.
///
/// A block is a run of `key: value` lines; blocks apart by blank lines or by one
/// other line (`[Clang 9.0.1 ]`) form a group. A group is a report when its values
/// hold at least three versions or `None`s and a key names the platform or the
/// language (`python`, `OS`, `Python version`); its blocks that name the platform
/// or whose values are at least half versions are dropped.
fn environment_report_lines(lines: &[&str]) -> Vec<bool> {
    struct Block {
        start: usize,
        end: usize,
        entries: usize,
        versions: usize,
        platform: bool,
    }
    let mut blocks: Vec<Block> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut b = Block { start: i, end: i, entries: 0, versions: 0, platform: false };
        while let Some((key, value)) = lines.get(b.end).and_then(|l| report_entry(l.trim())) {
            b.entries += 1;
            b.versions += usize::from(is_version_value(value));
            let key = key.to_ascii_lowercase();
            b.platform |= key.contains("python")
                || key.contains("version")
                || matches!(key.as_str(), "os" | "platform" | "system" | "machine");
            b.end += 1;
        }
        i = b.end.max(i + 1);
        if b.entries > 0 {
            blocks.push(b);
        }
    }
    let mut report = vec![false; lines.len()];
    let mut first = 0;
    while first < blocks.len() {
        let mut last = first;
        while last + 1 < blocks.len()
            && lines[blocks[last].end..blocks[last + 1].start]
                .iter()
                .filter(|l| !l.trim().is_empty())
                .count()
                <= 1
        {
            last += 1;
        }
        let group = &blocks[first..=last];
        if group.iter().map(|b| b.versions).sum::<usize>() >= 3 && group.iter().any(|b| b.platform)
        {
            for b in group.iter().filter(|b| b.platform || 2 * b.versions >= b.entries) {
                report[b.start..b.end].iter_mut().for_each(|r| *r = true);
            }
            // The report's own heading goes with it: `#### Output of xr.show_versions()`,
            // `<details>`, `INSTALLED VERSIONS` name the module that prints it. The
            // first line (the title) always stays.
            let mut above = group[0].start;
            let mut headings = 0;
            while above > 1 && headings < 4 {
                above -= 1;
                let t = lines[above].trim();
                if t.is_empty() || report[above] || is_package_listing(t) {
                    continue; // `------` rules are dropped anyway
                }
                let heading = t.starts_with('#')
                    || t.starts_with('<')
                    || t.to_ascii_lowercase().contains("version");
                if !heading {
                    break;
                }
                report[above] = true;
                headings += 1;
            }
        }
        first = last + 1;
    }
    report
}

/// `numpy: 1.18.1`, `Python version: 3.9`, `LANG: en_US.UTF-8`: a key of at most
/// three words, not an exception's name (`ValueError: 1.5 is not valid`).
fn report_entry(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(": ")?;
    let key = key.trim();
    let valid = !key.is_empty()
        && key.len() <= 40
        && key.split_whitespace().count() <= 3
        && key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || "_-. ".contains(c))
        && !["Error", "Exception", "Warning"].iter().any(|s| key.ends_with(s));
    valid.then_some((key, value.trim()))
}

/// A report's value that says a version (`3.7.6 | packaged by conda-forge`) or its
/// absence (`None`).
fn is_version_value(value: &str) -> bool {
    let first = value.split_whitespace().next().unwrap_or("");
    starts_like_version(first)
        || matches!(first, "None" | "none" | "null" | "unknown" | "N/A" | "n/a")
}

/// `1.2.3`, `v2.0`, `0.12.3+88.g69c7e01e.dirty`, `1.0.1,`: digits and a dot after
/// an optional `v`.
fn starts_like_version(word: &str) -> bool {
    let v = word.trim_start_matches('v');
    v.starts_with(|c: char| c.is_ascii_digit()) && v.contains('.')
}

/// The lines Python and IPython print when they start, pasted with a session:
/// `Python 3.6.4 |Anaconda custom (64-bit)| (default, Dec 21 2017, 15:39:08)`,
/// `[GCC 7.2.0] on linux`, `Type "help", "copyright", "credits" or "license" …`,
/// `IPython 6.2.1 -- An enhanced Interactive Python.` Their words (copyright,
/// credits, license, IPython, interactive) are the vocabulary of the project's
/// own REPL and session helpers, which they would rank first.
fn is_interpreter_banner(line: &str) -> bool {
    let t = line.trim_start_matches(['>', ' ', '\t']);
    let has_clock = t.as_bytes().windows(8).any(|w| {
        w.iter()
            .enumerate()
            .all(|(i, b)| if i == 2 || i == 5 { *b == b':' } else { b.is_ascii_digit() })
    });
    (t.strip_prefix("Python ").is_some_and(starts_like_version) && has_clock)
        || (["[GCC ", "[Clang ", "[MSC "].iter().any(|p| t.starts_with(p)) && t.contains("] on "))
        || t.contains("\"credits\" or \"license\"")
        || t.contains("'credits' or 'license'")
        || t.contains("An enhanced Interactive Python")
}

/// A heading of an issue template: `### Steps to reproduce`, `**Expected
/// behavior**`, `Additional context:`. Their words are every report's, and
/// `context`, `environment` and `version` name code in most projects. A heading
/// (a `#` line, a bold line, a short line ending in a colon) only, and only when
/// every word is a template's: `### Parsing fails on empty input` stays.
fn is_template_heading(line: &str) -> bool {
    const WORDS: &[&str] = &[
        "a",
        "actual",
        "additional",
        "alternatives",
        "and",
        "any",
        "behavior",
        "behaviour",
        "browser",
        "bug",
        "checklist",
        "code",
        "complete",
        "considered",
        "context",
        "current",
        "describe",
        "description",
        "desktop",
        "details",
        "device",
        "environment",
        "example",
        "expected",
        "feature",
        "following",
        "happened",
        "how",
        "info",
        "information",
        "instead",
        "issue",
        "logs",
        "minimal",
        "motivation",
        "of",
        "os",
        "output",
        "please",
        "problem",
        "proposed",
        "related",
        "reproduce",
        "reproducible",
        "request",
        "result",
        "results",
        "screenshots",
        "smartphone",
        "solution",
        "steps",
        "summary",
        "system",
        "the",
        "to",
        "version",
        "versions",
        "what",
        "you",
        "your",
    ];
    let t = line.trim();
    let heading = if let Some(h) = t.strip_prefix('#') {
        h.trim_start_matches('#')
    } else if let Some(h) = t.strip_prefix("**").and_then(|h| h.strip_suffix("**")) {
        h
    } else if let Some(h) = t.strip_suffix(':').filter(|h| h.len() <= 40) {
        h
    } else {
        return false;
    };
    let heading = heading.trim().trim_end_matches(':').trim_matches('*');
    let mut words = heading
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_lowercase())
        .peekable();
    words.peek().is_some() && words.all(|w| WORDS.contains(&w.as_str()))
}

/// `name   1.2.3   [location]`, `name==1.2.3`, `name=1.2.3=build`, `---- ----`.
fn is_package_listing(line: &str) -> bool {
    let t = line.trim();
    if t.is_empty() {
        return false;
    }
    if t.chars().all(|c| c == '-' || c == ' ' || c == '=') {
        return true;
    }
    let mut words = t.split_whitespace();
    let (Some(name), Some(second)) = (words.next(), words.next()) else {
        return t.contains("==")
            && !t.contains(' ')
            && t.split("==").nth(1).is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()));
    };
    let version_like = |v: &str| {
        starts_like_version(v)
            && v.trim_start_matches('v')
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".+-_".contains(c))
    };
    let name_like = name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.[]".contains(c));
    name_like && version_like(second) && t.split_whitespace().count() <= 4
}

fn classify(query: &str, paths: &[PathMention], idents: &[Mention]) -> QueryKind {
    let q = query.trim();
    let lower = q.to_ascii_lowercase();
    let traceback = lower.contains("traceback (most recent call last)")
        || paths.iter().filter(|p| p.frame).count() >= 2
        || lower.contains("panicked at")
        || q.lines().filter(|l| l.trim_start().starts_with("at ") && l.contains(':')).count() >= 2;
    if traceback {
        return QueryKind::ErrorTrace;
    }
    let single_token = !q.contains(char::is_whitespace);
    if single_token
        && paths.len() == 1
        && (q.contains('/') || q.contains('\\') || has_source_ext(q))
    {
        return QueryKind::File;
    }
    let identifier_shaped = q.chars().all(|c| c.is_alphanumeric() || "_:.$#".contains(c));
    if single_token && identifier_shaped && !idents.is_empty() {
        return QueryKind::Symbol;
    }
    let error_words = ["error:", "exception:", "error ", "exception", "failed", "fails with"];
    if error_words.iter().any(|w| lower.contains(w))
        && (lower.contains("error") && q.contains(':'))
        && q.len() < 300
    {
        return QueryKind::ErrorTrace;
    }
    QueryKind::Concept
}

fn has_source_ext(s: &str) -> bool {
    s.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && SOURCE_EXTS.contains(&ext))
}

/// Paths and stack frames: `File "a/b.py", line 3, in f`, `a/b.py:3: in f`,
/// `at f (a/b.js:3:5)`, and bare `pkg/mod.py` or `mod.rs` mentions.
fn find_paths(query: &str) -> Vec<PathMention> {
    let mut out: Vec<PathMention> = Vec::new();
    let push = |out: &mut Vec<PathMention>, m: PathMention| {
        // A bare mention of a path a frame already named adds nothing.
        if m.line.is_none() && out.iter().any(|e| e.path == m.path) {
            return;
        }
        // Nor the file name inside a JVM frame, `(Reader.java:42)`, which the
        // frame already placed under its package.
        if !m.frame
            && out
                .iter()
                .any(|e| e.frame && e.line == m.line && e.path.ends_with(&format!("/{}", m.path)))
        {
            return;
        }
        if let Some(existing) = out.iter_mut().find(|e| e.path == m.path && e.line == m.line) {
            existing.frame |= m.frame;
            if existing.function.is_none() {
                existing.function = m.function;
            }
        } else {
            out.push(m);
        }
    };
    for line in query.lines() {
        let t = line.trim();
        // Python: File "path", line N, in func — also behind what a log or a
        // runner put in front of each line (`INTERNALERROR>   File …`, a CI
        // timestamp, `> ` quoting), where `", line N` must follow to be a frame.
        let frame_rest = t.strip_prefix("File \"").or_else(|| {
            let (_, rest) = t.split_once(" File \"")?;
            let (_, after) = rest.split_once('"')?;
            after.strip_prefix(", line ")?.starts_with(|c: char| c.is_ascii_digit()).then_some(rest)
        });
        if let Some(rest) = frame_rest
            && let Some((path, after)) = rest.split_once('"')
        {
            let line_no = after
                .split("line ")
                .nth(1)
                .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok());
            let func = after.split(", in ").nth(1).map(|f| f.trim().to_owned());
            push(
                &mut out,
                PathMention {
                    path: clean_path(path),
                    line: line_no,
                    function: func,
                    frame: true,
                    anchored: false,
                },
            );
            continue;
        }
        // JVM: at pkg.Class.method(File.java:42); .NET: at Ns.Class.Method() in
        // path/File.cs:line 42. Before the JS form, which they would be misread as.
        if let Some(rest) = t.strip_prefix("at ")
            && let Some(m) = jvm_frame(rest).or_else(|| dotnet_frame(rest))
        {
            push(&mut out, m);
            continue;
        }
        // JS: at func (path:line:col)   /   at path:line:col
        if let Some(rest) = t.strip_prefix("at ") {
            let (func, loc) = match rest.rsplit_once(" (") {
                Some((f, l)) => (Some(f.trim().to_owned()), l.trim_end_matches(')')),
                None => (None, rest),
            };
            if let Some((path, line_no)) = split_location(loc) {
                push(
                    &mut out,
                    PathMention {
                        path: clean_path(&path),
                        line: line_no,
                        function: func,
                        frame: true,
                        anchored: false,
                    },
                );
                continue;
            }
        }
    }
    // Anything shaped like a path with a source extension, optionally `:line`.
    for (line, raw) in query.lines().flat_map(|line| {
        line.split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;|".contains(c))
            .map(move |raw| (line, raw))
    }) {
        let token = raw.trim_matches(|c: char| c == '.' || c == ':' || c == '\'' || c == '"');
        let Some((path, line_no)) = split_location(token) else { continue };
        if !has_source_ext(&path) || path.starts_with("http") || path.contains("://") {
            continue;
        }
        // `path.py:12: in func` (pytest), `path.go:12 +0x1d` (a Go panic's
        // goroutine trace), `#3 0x4f2f in main src/x.c:10:5` (a sanitizer's or
        // gdb's backtrace) and `panicked at src/lib.rs:12:5` (Rust) are frames.
        let frame = line_no.is_some()
            && (line.contains(&format!("{token}: in "))
                || line.contains(&format!("{token} +0x"))
                || line.contains("panicked at ")
                || is_native_frame(line));
        push(
            &mut out,
            PathMention {
                path: clean_path(&path),
                line: line_no,
                function: None,
                frame,
                anchored: false,
            },
        );
    }
    out
}

/// A line of a native backtrace: `#0  0x00007f… in f (x=1) at src/a.c:12` (gdb),
/// `#3 0x4f2f in main /src/x.c:10:5` (AddressSanitizer), `frame #1: 0x… main at
/// b.cpp:3` (lldb).
fn is_native_frame(line: &str) -> bool {
    let t = line.trim_start();
    let t = t.strip_prefix("* ").unwrap_or(t);
    let t = t.strip_prefix("frame ").unwrap_or(t);
    let Some(rest) = t.strip_prefix('#') else { return false };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].trim_start_matches(':').trim_start().starts_with("0x")
}

/// A JVM stack frame, `com.example.io.Reader$Buf.fill(Reader.java:42)` (behind
/// `at `; a module prefix `java.base/` or a `~[lib.jar:1.0]` suffix allowed): the
/// file under its package's directories, `com/example/io/Reader.java`, anchored
/// (a frame of the JDK's or a library's must not match a project file of the
/// same name), with the line and `Reader$Buf.fill`.
fn jvm_frame(rest: &str) -> Option<PathMention> {
    let open = rest.find('(')?;
    let close = open + rest[open..].find(')')?;
    let (file, line) = split_location(&rest[open + 1..close])?;
    if file.contains(['/', '\\', ' ']) || !has_source_ext(&file) {
        return None;
    }
    let qualified = rest[..open].trim();
    let qualified = qualified.rsplit('/').next().unwrap_or(qualified);
    if qualified.contains(char::is_whitespace) {
        return None;
    }
    let segments: Vec<&str> = qualified.split('.').collect();
    let [package @ .., class, method] = segments.as_slice() else { return None };
    let dirs = package.join("/");
    let path = if dirs.is_empty() { file } else { format!("{dirs}/{file}") };
    Some(PathMention {
        path,
        line,
        function: Some(format!("{class}.{method}")),
        frame: true,
        anchored: !package.is_empty(),
    })
}

/// A .NET stack frame: `Ns.Class.Method(String s) in C:\\src\\App\\Class.cs:line 42`.
fn dotnet_frame(rest: &str) -> Option<PathMention> {
    let (function, location) = rest.rsplit_once(" in ")?;
    let (path, line) = location.trim().rsplit_once(":line ")?;
    if !has_source_ext(path) {
        return None;
    }
    let function = function.split('(').next().unwrap_or(function).trim();
    Some(PathMention {
        path: clean_path(path),
        line: line.trim().parse().ok(),
        function: (!function.is_empty()).then(|| function.to_owned()),
        frame: true,
        anchored: false,
    })
}

/// `a/b.py:12:3` → (a/b.py, Some(12)); `a/b.py` → (a/b.py, None).
fn split_location(s: &str) -> Option<(String, Option<u32>)> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let mut parts = s.splitn(3, ':');
    let first = parts.next()?;
    // Windows drive letters: C:\x\y.py:3
    let (path, rest) = if first.len() == 1 && s.len() > 2 {
        let mut p = s.splitn(4, ':');
        let drive = p.next()?;
        let path = p.next()?;
        (format!("{drive}:{path}"), p.next())
    } else {
        (first.to_owned(), parts.next())
    };
    let line = rest.and_then(|r| r.trim().parse().ok());
    if path.contains(char::is_whitespace) || !path.contains('.') {
        return None;
    }
    Some((path, line))
}

fn clean_path(p: &str) -> String {
    let p = p.replace('\\', "/");
    // Keep what follows site-packages/dist-packages, the part inside a project.
    for marker in ["site-packages/", "dist-packages/"] {
        if let Some((_, rest)) = p.rsplit_once(marker) {
            return rest.to_owned();
        }
    }
    p.trim_start_matches("./").to_owned()
}

fn find_identifiers(query: &str) -> Vec<Mention> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out: Vec<Mention> = Vec::new();
    let mut add = |text: &str, strength: f64, out: &mut Vec<Mention>| {
        let text = text.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        if text.len() < 2 || text.chars().all(|c| c.is_ascii_digit()) {
            return;
        }
        let lower = text.to_ascii_lowercase();
        if strength < 1.0 && COMMON.contains(&lower.as_str()) {
            return;
        }
        if seen.insert(text.to_owned()) {
            out.push(Mention { text: text.to_owned(), strength });
        } else if let Some(m) = out.iter_mut().find(|m| m.text == text) {
            m.strength = m.strength.max(strength);
        }
    };
    // Code: backtick spans and fenced blocks.
    let mut code = String::new();
    let mut prose = String::new();
    let mut in_fence = false;
    for line in query.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            code.push_str(line);
            code.push('\n');
            continue;
        }
        let mut in_tick = false;
        for (i, part) in line.split('`').enumerate() {
            if i > 0 {
                in_tick = !in_tick;
            }
            if in_tick {
                code.push_str(part);
                code.push('\n');
            } else {
                prose.push_str(part);
                prose.push(' ');
            }
        }
        prose.push('\n');
    }
    let code = strip_options(&code);
    let prose = strip_options(&prose);
    for word in words(&code) {
        for piece in word.split(['.', ':']) {
            add(piece, 1.0, &mut out);
        }
        if word.contains('.') || word.contains("::") {
            add(word, 1.0, &mut out);
        }
    }
    for word in words(&prose) {
        let shaped = is_code_shaped(word);
        for piece in word.split(['.', ':']) {
            let piece_shaped = shaped || is_code_shaped(piece);
            add(piece, if piece_shaped { 1.0 } else { PROSE_WORD }, &mut out);
        }
        if shaped && (word.contains('.') || word.contains("::")) {
            add(word, 1.0, &mut out);
        }
    }
    out
}

/// The strength of a plain prose word as an identifier mention.
const PROSE_WORD: f64 = 0.25;

/// Removes `--long-options` and `-x` flags: they are literals, not identifiers.
fn strip_options(text: &str) -> String {
    text.split(' ')
        .map(|w| if w.trim_start_matches(['`', '(', '"', '\'']).starts_with('-') { "" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Identifier-ish words, keeping `a.b` and `a::b` together.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':'))
        .map(|w| w.trim_matches(|c| c == '.' || c == ':'))
        .filter(|w| !w.is_empty())
}

fn is_code_shaped(word: &str) -> bool {
    let has_lower = word.chars().any(|c| c.is_lowercase());
    let inner_upper = word.chars().skip(1).any(|c| c.is_uppercase());
    (word.contains('_') && word.len() > 2)
        || (has_lower && inner_upper)
        || word.contains("::")
        || (word.contains('.')
            && !word.ends_with('.')
            && word.split('.').all(|p| !p.is_empty())
            && !has_source_ext(word))
}

/// Quoted messages and command-line options worth finding verbatim in the code.
fn find_literals(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |s: &str, out: &mut Vec<String>| {
        let s = s.trim();
        if s.len() >= 6
            && s.len() <= 120
            && s.chars().any(char::is_alphabetic)
            && !out.iter().any(|o| o == s)
        {
            out.push(s.to_owned());
        }
    };
    // `--long-option` flags.
    for w in query.split(|c: char| c.is_whitespace() || "`'\"(),=[]".contains(c)) {
        if let Some(name) = w.strip_prefix("--")
            && name.len() >= 3
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            push(w, &mut out);
            // Option tables often name it without the dashes (`"notes": {...}`).
            for quote in ['"', '\''] {
                push(&format!("{quote}{name}{quote}"), &mut out);
            }
        }
    }
    // A `kebab-case` name in backticks is an option or a message id
    // (`min-similarity-lines`, `unused-import`): code declares it as a string.
    let mut ticks = query.split('`');
    ticks.next();
    while let Some(inner) = ticks.next() {
        if is_kebab_name(inner) {
            for quote in ['"', '\''] {
                push(&format!("{quote}{inner}{quote}"), &mut out);
            }
        }
        ticks.next();
    }
    // Quoted strings with a few words (messages), outside code blocks too.
    for quote in ['"', '\''] {
        let mut parts = query.split(quote);
        parts.next();
        while let Some(inner) = parts.next() {
            if inner.contains(' ') && !inner.contains('\n') && inner.split_whitespace().count() >= 2
            {
                push(inner, &mut out);
            }
            parts.next();
        }
    }
    // Error lines: `SomeError: message`.
    for line in query.lines() {
        let t = line.trim().trim_start_matches("E ").trim();
        if let Some((head, msg)) = t.split_once(": ")
            && (head.ends_with("Error") || head.ends_with("Exception") || head.ends_with("Warning"))
            && !head.contains(' ')
        {
            push(msg, &mut out);
        }
    }
    out
}

/// `min-similarity-lines`: lower-case words joined by hyphens, starting with a letter.
fn is_kebab_name(s: &str) -> bool {
    s.contains('-')
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.ends_with('-')
        && !s.contains("--")
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let cases: &[(&str, QueryKind)] = &[
            ("Router", QueryKind::Symbol),
            ("parse_args", QueryKind::Symbol),
            ("http::Client::send", QueryKind::Symbol),
            ("src/app/models.py", QueryKind::File),
            ("models.py", QueryKind::File),
            ("where are retries configured", QueryKind::Concept),
            ("how does the cache expire entries?", QueryKind::Concept),
            (
                "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    f()\nKeyError: 'x'",
                QueryKind::ErrorTrace,
            ),
            (
                "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
                QueryKind::ErrorTrace,
            ),
            ("thread 'main' panicked at src/main.rs:3:5", QueryKind::ErrorTrace),
        ];
        for (q, kind) in cases {
            assert_eq!(analyze_query(q).kind, *kind, "{q:?}");
        }
    }

    #[test]
    fn frames_and_paths() {
        let q = "Traceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/seaborn/_core.py\", line 144, in _lookup_single\n    value = self.lookup_table[key]\nsee also src/_pytest/main.py:12: in pytest_cmdline and `utils.rs`";
        let paths = analyze_query(q).paths;
        assert_eq!(
            paths,
            vec![
                PathMention {
                    path: "seaborn/_core.py".into(),
                    line: Some(144),
                    function: Some("_lookup_single".into()),
                    frame: true,
                    anchored: false
                },
                PathMention {
                    path: "src/_pytest/main.py".into(),
                    line: Some(12),
                    function: None,
                    frame: true,
                    anchored: false
                },
                PathMention {
                    path: "utils.rs".into(),
                    line: None,
                    function: None,
                    frame: false,
                    anchored: false
                },
            ]
        );
        let js =
            analyze_query("Error: boom\n    at render (src/app.tsx:10:5)\n    at src/index.js:3:1")
                .paths;
        assert_eq!(
            js[0],
            PathMention {
                path: "src/app.tsx".into(),
                line: Some(10),
                function: Some("render".into()),
                frame: true,
                anchored: false
            }
        );
        assert_eq!(js[1].path, "src/index.js");
    }

    #[test]
    fn frames_of_other_runtimes() {
        // (text, [(path, line, function, frame, anchored)])
        type Want<'a> = &'a [(&'a str, Option<u32>, Option<&'a str>, bool, bool)];
        let cases: &[(&str, Want<'_>)] = &[
            (
                "Exception in thread \"main\" java.lang.IllegalStateException: boom\n\
                 \tat com.fasterxml.jackson.databind.ser.BeanSerializer$1.serialize(BeanSerializer.java:178)\n\
                 \tat java.base/java.lang.Thread.run(Thread.java:829) ~[na:1.8]\n\
                 \tat Main.main(Main.java:3)\n\
                 \tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)",
                &[
                    (
                        "com/fasterxml/jackson/databind/ser/BeanSerializer.java",
                        Some(178),
                        Some("BeanSerializer$1.serialize"),
                        true,
                        true,
                    ),
                    ("java/lang/Thread.java", Some(829), Some("Thread.run"), true, true),
                    ("Main.java", Some(3), Some("Main.main"), true, false),
                ],
            ),
            (
                "   at Newtonsoft.Json.JsonReader.Read() in C:\\src\\Json\\JsonReader.cs:line 42",
                &[(
                    "C:/src/Json/JsonReader.cs",
                    Some(42),
                    Some("Newtonsoft.Json.JsonReader.Read"),
                    true,
                    false,
                )],
            ),
            (
                "goroutine 1 [running]:\nmain.run(...)\n\t/home/u/src/app/cmd/run.go:12 +0x1d\nsee cmd/other.go:3",
                &[
                    ("/home/u/src/app/cmd/run.go", Some(12), None, true, false),
                    ("cmd/other.go", Some(3), None, false, false),
                ],
            ),
            (
                "==1==ERROR: AddressSanitizer: heap-use-after-free\n    #0 0x4f2f in fmt_int src/format.c:88:5\n    \
                 #1 0x5a1 in main /home/u/x/src/main.c:10:3\n#2  0x00007f in g (x=1) at lib/g.cc:7\nsee src/format.c:90",
                &[
                    ("src/format.c", Some(88), None, true, false),
                    ("/home/u/x/src/main.c", Some(10), None, true, false),
                    ("lib/g.cc", Some(7), None, true, false),
                    ("src/format.c", Some(90), None, false, false),
                ],
            ),
            (
                "thread 'main' panicked at src/parser.rs:120:9:\nindex out of bounds\n# 3 items at src/a.rs:1",
                &[
                    ("src/parser.rs", Some(120), None, true, false),
                    ("src/a.rs", Some(1), None, false, false),
                ],
            ),
        ];
        for (text, want) in cases {
            let got: Vec<_> = analyze_query(text)
                .paths
                .into_iter()
                .map(|p| (p.path, p.line, p.function, p.frame, p.anchored))
                .collect();
            let want: Vec<_> = want
                .iter()
                .map(|(p, l, f, fr, a)| (p.to_string(), *l, f.map(str::to_owned), *fr, *a))
                .collect();
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn frames_behind_a_log_prefix() {
        let q = "INTERNALERROR>   File \"/venv/site-packages/_pytest/main.py\", line 191, in wrap_session\n\
                 > [2022-06-09T13:38:24.824Z]   File \"/usr/local/lib/python3.9/dist-packages/pylint/lint/run.py\", line 5, in run\n\
                 The File \"setup.cfg\" is ignored, line 3 says so\n";
        let frames: Vec<(String, Option<u32>, bool)> =
            analyze_query(q).paths.into_iter().map(|p| (p.path, p.line, p.frame)).collect();
        assert_eq!(
            frames,
            [
                ("_pytest/main.py".to_owned(), Some(191), true),
                ("pylint/lint/run.py".to_owned(), Some(5), true),
                ("setup.cfg".to_owned(), None, false),
            ]
        );
    }

    #[test]
    fn identifiers_with_strength() {
        let q = "PairGrid errors with `hue` assigned in `map`. Calling sns.PairGrid(iris).map_diag fails in the_function and plain words";
        let ids = analyze_query(q).identifiers;
        let get = |t: &str| ids.iter().find(|m| m.text == t).map(|m| m.strength);
        assert_eq!(get("hue"), Some(1.0));
        assert_eq!(get("map"), Some(1.0));
        assert_eq!(get("PairGrid"), Some(1.0));
        assert_eq!(get("map_diag"), Some(1.0));
        assert_eq!(get("the_function"), Some(1.0));
        assert_eq!(get("sns.PairGrid"), Some(1.0));
        assert_eq!(get("plain"), Some(PROSE_WORD));
        assert_eq!(get("the"), None);
        assert_eq!(get("with"), None);
    }

    #[test]
    fn cleaning_drops_templates_package_lists_and_urls() {
        let q = "Bug <!-- Thanks for submitting an issue! checklist --> here\n```\n$ pip list\nPackage    Version\n---------- -------\naiohttp    3.6.2\nnumpy==1.19.0\npytest     6.0.0rc2  /src/pytest\n```\nsee https://github.com/x/y/issues/1 for `add_marker`";
        let c = clean(q);
        assert!(
            !c.contains("Thanks")
                && !c.contains("aiohttp")
                && !c.contains("numpy")
                && !c.contains("github.com"),
            "{c}"
        );
        assert!(
            c.contains("Bug")
                && c.contains("here")
                && c.contains("add_marker")
                && c.contains("$ pip list"),
            "{c}"
        );
        let ids = analyze_query(q).identifiers;
        assert!(!ids.iter().any(|m| m.text == "aiohttp" || m.text == "checklist"), "{ids:?}");
    }

    #[test]
    fn cleaning_drops_template_headings() {
        let q = "Context manager leaks\n**Describe the bug**\nThe `Context` stays open.\n### To Reproduce\nSteps to reproduce the behavior:\n1. call it\n## Expected behavior\nThe expected output is wrong\nEnvironment:\n - OS: Linux\n### Parsing fails on empty input\nAdditional context\n";
        let c = clean(q);
        for gone in [
            "Describe the bug",
            "To Reproduce",
            "Steps to reproduce the behavior:",
            "Expected behavior",
            "Environment:",
        ] {
            assert!(!c.contains(gone), "{gone} in {c}");
        }
        // The title, prose that happens to use the words, and real headings stay.
        for kept in [
            "Context manager leaks",
            "The expected output is wrong",
            "Parsing fails on empty input",
            "Additional context",
        ] {
            assert!(c.contains(kept), "{kept} not in {c}");
        }
    }

    #[test]
    fn cleaning_drops_environment_reports() {
        let q = "Precision lost in `encode_cf_datetime`\n\nThe docs say so.\n#### Output of `xr.show_versions()`\n<details>\nINSTALLED VERSIONS\n------------------\ncommit: None\npython: 3.7.6 | packaged by conda-forge\npython-bits: 64\nOS: Darwin\nLANG: en_US.UTF-8\n\nxarray: 0.15.1\nnetCDF4: 1.5.3\npydap: None\n\nExpected: 2\n";
        let c = clean(q);
        for gone in
            ["python-bits", "Darwin", "LANG", "netCDF4", "pydap", "show_versions", "details"]
        {
            assert!(!c.contains(gone), "{gone} in {c}");
        }
        assert!(
            c.contains("encode_cf_datetime")
                && c.contains("The docs say")
                && c.contains("Expected: 2"),
            "{c}"
        );
        // An exception's message is never a report entry, even inside a report.
        let c = clean("Bug\npython: 3.8\nValueError: 1.5 is not valid\nnumpy: 1.2\nscipy: 1.1\n");
        assert_eq!(c, "Bug\nValueError: 1.5 is not valid\n");
        // Not a report: no platform key, or too few versions.
        for kept in ["width: 1.5\nheight: 2.5\ndepth: 3.5\n", "Python version: 3.8\nnumpy: 1.2\n"] {
            assert_eq!(clean(kept), kept, "{kept}");
        }
    }

    #[test]
    fn cleaning_drops_interpreter_banners() {
        let q = "Issue with a substitution\n```\nPython 3.6.4 |Anaconda custom (64-bit)| (default, Dec 21 2017, 15:39:08)\nType 'copyright', 'credits' or 'license' for more information\nIPython 6.2.1 -- An enhanced Interactive Python. Type '?' for help.\n\nIn [4]: r.subs(b,a)\n```\n>>> Python 3.9.7 (default, Sep 16 2021, 08:50:36)\n[GCC 7.5.0] on linux\nType \"help\", \"copyright\", \"credits\" or \"license\" for more information.\n";
        assert_eq!(clean(q), "Issue with a substitution\n```\n\nIn [4]: r.subs(b,a)\n```\n");
        // Prose about a Python version, or a compiler in a sentence, stays.
        for kept in ["Since Python 3.8 `subs` is slow\n", "built with [GCC 9] flags\n"] {
            assert_eq!(clean(kept), kept, "{kept}");
        }
    }

    #[test]
    fn options_are_literals_not_identifiers() {
        let f = analyze_query("run `pytest --collect-only -q` and `--log-level=DEBUG`");
        assert!(f.literals.contains(&"--collect-only".to_owned()));
        assert!(
            !f.identifiers.iter().any(|m| m.text == "collect" || m.text == "only"),
            "{:?}",
            f.identifiers
        );
    }

    #[test]
    fn literals() {
        let q = "Running `pytest --collect-only -q` prints \"no tests ran in 0.01s\".\nE   AssertionError: assert b'' == b'42'\nValueError: could not convert string to float";
        let lits = analyze_query(q).literals;
        assert!(lits.contains(&"--collect-only".to_owned()), "{lits:?}");
        assert!(lits.contains(&"no tests ran in 0.01s".to_owned()), "{lits:?}");
        assert!(lits.contains(&"could not convert string to float".to_owned()), "{lits:?}");
    }

    #[test]
    fn kebab_names_in_backticks_are_quoted_literals() {
        let q =
            "Setting `min-similarity-lines` to `0` breaks `foo-` and `a--b`; see utf-8 and `x_y`";
        let lits = analyze_query(q).literals;
        assert!(lits.contains(&"\"min-similarity-lines\"".to_owned()), "{lits:?}");
        assert!(lits.contains(&"'min-similarity-lines'".to_owned()), "{lits:?}");
        for not in ["\"utf-8\"", "\"foo-\"", "\"a--b\"", "\"x_y\""] {
            assert!(!lits.contains(&not.to_owned()), "{not} in {lits:?}");
        }
    }
}
