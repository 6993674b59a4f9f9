//! Parsers for the two `git log` outputs churn reads. Pure functions of bytes, tested
//! on recorded output.
//!
//! - `git log --numstat -z --format=<HEADER>`: per commit, per file, lines added and
//!   deleted (`-` for binary files), renames as `a\td\t\0old\0new\0`. NUL-separated,
//!   so any path (spaces, newlines, non-UTF-8 bytes) is exact.
//! - `git log -p -U0 --format=<HEADER>`: the hunk headers (`@@ -a,b +c,d @@`), which
//!   say *where* each commit changed a file. Paths there are C-quoted when unusual.

/// The `--format` both logs use: a record separator, then hash, parents, author time
/// and author e-mail separated by unit separators.
pub(crate) const FORMAT: &str = "--format=%x1e%H%x1f%P%x1f%at%x1f%aE";

const RS: u8 = 0x1e;
const US: u8 = 0x1f;

/// A commit of the numstat log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogCommit {
    pub hash: String,
    pub parents: usize,
    pub time: i64,
    pub email: String,
    pub files: Vec<NumstatEntry>,
}

/// One file of a commit. `added`/`deleted` are None for binary files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NumstatEntry {
    pub added: Option<u32>,
    pub deleted: Option<u32>,
    /// The path after the commit.
    pub path: Vec<u8>,
    /// The path before, for a rename.
    pub old_path: Option<Vec<u8>>,
}

fn header(bytes: &[u8]) -> Option<(String, usize, i64, String)> {
    let rest = bytes.strip_prefix(&[RS])?;
    let mut parts = rest.split(|&b| b == US);
    let hash = String::from_utf8_lossy(parts.next()?).into_owned();
    let parents = parts.next()?.split(|&b| b == b' ').filter(|p| !p.is_empty()).count();
    let time = std::str::from_utf8(parts.next()?).ok()?.trim().parse().ok()?;
    let email = String::from_utf8_lossy(parts.next().unwrap_or_default()).trim().to_owned();
    Some((hash, parents, time, email))
}

fn count(field: &[u8]) -> Option<Option<u32>> {
    if field == b"-" {
        return Some(None);
    }
    std::str::from_utf8(field).ok()?.parse().ok().map(Some)
}

/// Parses `git log --numstat -z --format=FORMAT` output. Unrecognized tokens are
/// skipped rather than failing the whole history.
pub(crate) fn parse_numstat(bytes: &[u8]) -> Vec<LogCommit> {
    let mut commits: Vec<LogCommit> = Vec::new();
    let mut tokens = bytes.split(|&b| b == 0);
    while let Some(token) = tokens.next() {
        // Entries after a header start with the newline that ends the header line.
        let token = token.strip_prefix(b"\n").unwrap_or(token);
        if token.is_empty() {
            continue;
        }
        if token[0] == RS {
            if let Some((hash, parents, time, email)) = header(token) {
                commits.push(LogCommit { hash, parents, time, email, files: Vec::new() });
            }
            continue;
        }
        let Some(commit) = commits.last_mut() else { continue };
        let mut fields = token.splitn(3, |&b| b == b'\t');
        let (Some(a), Some(d), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let (Some(added), Some(deleted)) = (count(a), count(d)) else { continue };
        if path.is_empty() {
            // A rename: the old and the new path follow as their own tokens.
            let (Some(old), Some(new)) = (tokens.next(), tokens.next()) else { break };
            commit.files.push(NumstatEntry {
                added,
                deleted,
                path: new.to_vec(),
                old_path: Some(old.to_vec()),
            });
        } else {
            commit.files.push(NumstatEntry { added, deleted, path: path.to_vec(), old_path: None });
        }
    }
    commits
}

/// A hunk header: old lines `old_start..old_start+old_len`, new lines likewise. A
/// length of 0 means an insertion point (after line `start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
}

/// The hunks of one file in one commit of the patch log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatchFile {
    /// The path after the commit; None when the commit deleted the file.
    pub path: Option<Vec<u8>>,
    pub hunks: Vec<Hunk>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatchCommit {
    pub hash: String,
    pub files: Vec<PatchFile>,
}

/// Parses `git log -p -U0 --src-prefix=a/ --dst-prefix=b/ --format=FORMAT` (or
/// `git diff -U0` output, as one commit with an empty hash). Only file names and
/// hunk headers are read; content lines start with `+`, `-`, ` ` or `\` and are
/// skipped, so no content can be mistaken for a header.
pub(crate) fn parse_patch(bytes: &[u8]) -> Vec<PatchCommit> {
    let mut commits: Vec<PatchCommit> = Vec::new();
    // Per file section: the `+++` path, the `rename to` path, and whether `+++` said
    // /dev/null.
    let mut in_file = false;
    for line in bytes.split(|&b| b == b'\n') {
        if line.first() == Some(&RS) {
            let hash = header(line).map(|h| h.0).unwrap_or_default();
            commits.push(PatchCommit { hash, files: Vec::new() });
            in_file = false;
            continue;
        }
        if line.starts_with(b"diff --git ") {
            if commits.is_empty() {
                commits.push(PatchCommit { hash: String::new(), files: Vec::new() });
            }
            let commit = commits.last_mut().expect("pushed above");
            commit.files.push(PatchFile { path: None, hunks: Vec::new() });
            // Until `+++` or `rename to` says otherwise, the path is the `diff --git`
            // line's own (exact when both sides are the same path).
            commit.files.last_mut().expect("pushed").path = diff_git_path(&line[11..]);
            in_file = true;
            continue;
        }
        if !in_file {
            continue;
        }
        let Some(file) = commits.last_mut().and_then(|c| c.files.last_mut()) else { continue };
        if let Some(rest) = line.strip_prefix(b"+++ ") {
            file.path = if rest == b"/dev/null" {
                None
            } else {
                Some(strip_prefix_b(&unquote(trim_tab(rest))))
            };
        } else if let Some(rest) = line.strip_prefix(b"rename to ") {
            file.path = Some(unquote(rest));
        } else if line.starts_with(b"deleted file mode") {
            file.path = None;
        } else if let Some(rest) = line.strip_prefix(b"@@ ")
            && let Some(h) = parse_hunk_header(rest)
        {
            file.hunks.push(h);
        }
    }
    commits
}

/// `a/x b/x` → `x` when both halves name the same path (quoted or not).
fn diff_git_path(rest: &[u8]) -> Option<Vec<u8>> {
    if rest.first() == Some(&b'"') {
        // `"a/..." "b/..."`: the second quoted string.
        let end = closing_quote(rest)?;
        let second = rest.get(end + 2..)?;
        return Some(strip_prefix_b(&unquote(second)));
    }
    // Unquoted `a/P b/P`: the halves have equal length.
    let n = rest.len();
    if n < 6 || !(n - 1).is_multiple_of(2) {
        return None;
    }
    let half = (n - 1) / 2;
    let (a, b) = (&rest[..half], &rest[half + 1..]);
    (a.strip_prefix(b"a/")? == b.strip_prefix(b"b/")?).then(|| b[2..].to_vec())
}

fn closing_quote(s: &[u8]) -> Option<usize> {
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

fn trim_tab(s: &[u8]) -> &[u8] {
    // git ends `---`/`+++` names that contain a space with a tab.
    s.strip_suffix(b"\t").unwrap_or(s)
}

fn strip_prefix_b(s: &[u8]) -> Vec<u8> {
    s.strip_prefix(b"b/").unwrap_or(s).to_vec()
}

/// Undoes git's C-style quoting (`"caf\303\251 \"x\".txt"`); unquoted input is
/// returned as it is.
pub(crate) fn unquote(s: &[u8]) -> Vec<u8> {
    let Some(inner) = s.strip_prefix(b"\"").and_then(|s| s.strip_suffix(b"\"")) else {
        return s.to_vec();
    };
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        if b != b'\\' || i + 1 == inner.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let e = inner[i + 1];
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match inner.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    out
}

/// `-a[,b] +c[,d] @@ ...` (after the leading `@@ `).
fn parse_hunk_header(rest: &[u8]) -> Option<Hunk> {
    let text = std::str::from_utf8(rest.split(|&b| b == b'@').next()?).ok()?;
    let mut parts = text.split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |s: &str| -> Option<(u32, u32)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (old_start, old_len) = range(old)?;
    let (new_start, new_len) = range(new)?;
    Some(Hunk { old_start, old_len, new_start, new_len })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn show_numstat(commits: &[LogCommit]) -> String {
        let mut out = String::new();
        for c in commits {
            out.push_str(&format!("{} parents={} t={} {}\n", c.hash, c.parents, c.time, c.email));
            for f in &c.files {
                let n = |x: Option<u32>| x.map_or("-".to_owned(), |v| v.to_string());
                out.push_str(&format!(
                    "  +{} -{} {}{}\n",
                    n(f.added),
                    n(f.deleted),
                    f.old_path
                        .as_ref()
                        .map(|o| format!("{} => ", String::from_utf8_lossy(o)))
                        .unwrap_or_default(),
                    String::from_utf8_lossy(&f.path).escape_debug()
                ));
            }
        }
        out
    }

    #[test]
    fn numstat_with_renames_binary_empty_commits_and_odd_paths() {
        // Recorded from git 2.47 (`git log --numstat -z -M --no-merges --format=...`),
        // hashes shortened: an empty commit, a binary file, a rename with changes, a
        // path with a space, one with a newline, and one with a Latin-1 byte.
        let raw: &[u8] = b"\x1eb166\x1f0edb\x1f1795314001\x1fa@b\0\
\x1e0edb\x1fad0f\x1f1795313912\x1fa@b\0\n-\t-\tsub/b.bin\x001\t0\tsub/h.txt\0\
\x1ead0f\x1f7479\x1f1795313909\x1fa@b\0\n1\t2\tbin.dat\0\
\x1e7479\x1f525e\x1f1795313909\x1fb@c\0\n1\t0\t\0m.rs\0main.rs\x002\t1\tx y.txt\0\
\x1e525e\x1f\x1f1795313909\x1fa@b\0\n1\t0\tcaf\xe9.txt\x003\t0\tx\ny\0";
        expect![[r#"
            b166 parents=1 t=1795314001 a@b
            0edb parents=1 t=1795313912 a@b
              +- -- sub/b.bin
              +1 -0 sub/h.txt
            ad0f parents=1 t=1795313909 a@b
              +1 -2 bin.dat
            7479 parents=1 t=1795313909 b@c
              +1 -0 m.rs => main.rs
              +2 -1 x y.txt
            525e parents=0 t=1795313909 a@b
              +1 -0 caf�.txt
              +3 -0 x\ny
        "#]]
        .assert_eq(&show_numstat(&parse_numstat(raw)));
    }

    #[test]
    fn numstat_tolerates_garbage_and_truncation() {
        assert!(parse_numstat(b"").is_empty());
        assert!(parse_numstat(b"not a log\0").is_empty());
        // A rename cut off before its paths ends the parse without panicking.
        let cut = parse_numstat(b"\x1eh\x1f\x1f1\x1fe\0\n1\t0\t\0old");
        assert_eq!(cut.len(), 1);
        assert!(cut[0].files.is_empty());
    }

    #[test]
    fn unquotes_c_style() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"plain.txt", b"plain.txt"),
            (b"\"caf\\303\\251.txt\"", "café.txt".as_bytes()),
            (b"\"a\\\"b\\\\c\\td\\n\"", b"a\"b\\c\td\n"),
            (b"\"\\351t\\351\"", b"\xe9t\xe9"),
        ];
        for (input, want) in cases {
            assert_eq!(unquote(input), *want, "{}", String::from_utf8_lossy(input));
        }
    }

    fn show_patch(commits: &[PatchCommit]) -> String {
        let mut out = String::new();
        for c in commits {
            out.push_str(&format!("commit {:?}\n", c.hash));
            for f in &c.files {
                let path = f
                    .path
                    .as_ref()
                    .map_or("<deleted>".to_owned(), |p| String::from_utf8_lossy(p).into_owned());
                let hunks: Vec<String> = f
                    .hunks
                    .iter()
                    .map(|h| {
                        format!("-{},{} +{},{}", h.old_start, h.old_len, h.new_start, h.new_len)
                    })
                    .collect();
                out.push_str(&format!("  {path}: {}\n", hunks.join(" ")));
            }
        }
        out
    }

    #[test]
    fn patch_hunks_paths_renames_deletions_binary() {
        // Recorded from git 2.47 (`git log -p -U0 -M --src-prefix=a/ --dst-prefix=b/`),
        // with content lines that look like headers to make sure they are skipped.
        let raw: &[u8] = b"\x1eaaaa\x1fbbbb\x1f1700000000\x1fa@b

diff --git a/x y.txt b/x y.txt
index de98044..a7bc997 100644
--- a/x y.txt\t
+++ b/x y.txt\t
@@ -2 +2 @@ a
-b
+B
@@ -3,0 +4 @@ c
+diff --git a/fake b/fake
diff --git a/m.rs b/main.rs
similarity index 50%
rename from m.rs
rename to main.rs
index 1..2 100644
--- a/m.rs
+++ b/main.rs
@@ -0,0 +2,3 @@
++++ b/not-a-header
diff --git a/old.py b/old.py
deleted file mode 100644
index 3..0
--- a/old.py
+++ /dev/null
@@ -1,4 +0,0 @@
-x
diff --git a/pure b/renamed
similarity index 100%
rename from pure
rename to renamed
diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"
new file mode 100644
Binary files /dev/null and \"b/caf\\303\\251.txt\" differ
\x1ecccc\x1f\x1f1690000000\x1fa@b

diff --git a/a.txt b/a.txt
new file mode 100644
--- /dev/null
+++ b/a.txt
@@ -0,0 +1,5 @@
+1
";
        expect![[r#"
            commit "aaaa"
              x y.txt: -2,1 +2,1 -3,0 +4,1
              main.rs: -0,0 +2,3
              <deleted>: -1,4 +0,0
              renamed: 
              café.txt: 
            commit "cccc"
              a.txt: -0,0 +1,5
        "#]]
        .assert_eq(&show_patch(&parse_patch(raw)));
    }

    #[test]
    fn working_tree_diff_without_commit_header() {
        let raw = b"diff --git a/f.rs b/f.rs\n--- a/f.rs\n+++ b/f.rs\n@@ -10,2 +10,0 @@\n-a\n-b\n";
        let commits = parse_patch(raw);
        assert_eq!(commits.len(), 1);
        assert_eq!(commits[0].hash, "");
        assert_eq!(commits[0].files[0].path.as_deref(), Some(&b"f.rs"[..]));
    }
}
