//! Unified diffs with git-style headers, so a dry run's output can be read by people
//! and applied with `git apply`.

use std::{fmt::Write, time::Duration};

use similar::{ChangeTag, TextDiff};

/// One side of a diff: a path and its content (absent for a created or deleted file).
pub(crate) struct Side<'a> {
    pub path: &'a str,
    pub bytes: Option<&'a [u8]>,
    pub mode: u32,
}

/// The diff text and the numbers of added and removed lines.
pub(crate) fn render(old: &Side<'_>, new: &Side<'_>) -> (String, u32, u32) {
    let mut out = String::new();
    let _ = writeln!(out, "diff --git a/{} b/{}", old.path, new.path);
    match (old.bytes, new.bytes) {
        (None, Some(_)) => {
            let _ = writeln!(out, "new file mode {}", git_mode(new.mode));
        }
        (Some(_), None) => {
            let _ = writeln!(out, "deleted file mode {}", git_mode(old.mode));
        }
        _ => {
            if old.path != new.path {
                let _ = writeln!(out, "rename from {}\nrename to {}", old.path, new.path);
            }
            if git_mode(old.mode) != git_mode(new.mode) {
                let _ = writeln!(
                    out,
                    "old mode {}\nnew mode {}",
                    git_mode(old.mode),
                    git_mode(new.mode)
                );
            }
        }
    }
    let a = old.bytes.unwrap_or_default();
    let b = new.bytes.unwrap_or_default();
    if a == b {
        return (out, 0, 0);
    }
    let (Some(ta), Some(tb)) = (as_text(a), as_text(b)) else {
        let _ = writeln!(
            out,
            "Binary files {} and {} differ",
            label("a", old.path, old.bytes),
            label("b", new.path, new.bytes)
        );
        return (out, 0, 0);
    };
    // A deadline keeps a pathological diff from stalling a request; past it the
    // diff is still correct, only less minimal.
    let diff = TextDiff::configure().timeout(Duration::from_secs(2)).diff_lines(ta, tb);
    let _ = writeln!(out, "--- {}", label("a", old.path, old.bytes));
    let _ = writeln!(out, "+++ {}", label("b", new.path, new.bytes));
    let ud = diff.unified_diff();
    for hunk in ud.iter_hunks() {
        let _ = write!(out, "{hunk}");
    }
    let (mut added, mut removed) = (0, 0);
    for c in diff.iter_all_changes() {
        match c.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    (out, added, removed)
}

/// The unified diff (git-style headers, `git apply` reads it) between two versions
/// of one file, `None` meaning absent: what a transaction's diff shows, for callers
/// that diff against something else (the file at git's `HEAD`). Modes are taken
/// as equal and regular.
pub fn unified_diff(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> String {
    let side = |bytes| Side { path, bytes, mode: 0o644 };
    render(&side(old), &side(new)).0
}

fn label(side: &str, path: &str, bytes: Option<&[u8]>) -> String {
    if bytes.is_some() { format!("{side}/{path}") } else { "/dev/null".to_owned() }
}

fn as_text(b: &[u8]) -> Option<&str> {
    if b.contains(&0) {
        return None;
    }
    std::str::from_utf8(b).ok()
}

fn git_mode(mode: u32) -> &'static str {
    if mode & 0o111 != 0 { "100755" } else { "100644" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_for_each_kind() {
        let side = |path, bytes: Option<&'static str>| Side {
            path,
            bytes: bytes.map(str::as_bytes),
            mode: 0o644,
        };
        let (d, a, r) = render(&side("x.txt", Some("a\nb\n")), &side("x.txt", Some("a\nc\n")));
        assert_eq!(
            d,
            "diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        );
        assert_eq!((a, r), (1, 1));
        let (d, ..) = render(&side("n.txt", None), &side("n.txt", Some("hi")));
        assert!(d.contains("new file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+hi\n\\ No newline at end of file\n"), "{d}");
        let (d, ..) = render(&side("o.txt", Some("x\n")), &side("m/o.txt", Some("x\n")));
        assert_eq!(d, "diff --git a/o.txt b/m/o.txt\nrename from o.txt\nrename to m/o.txt\n");
        let (d, ..) = render(&side("b.bin", Some("\0x")), &side("b.bin", None));
        assert!(
            d.contains("deleted file mode")
                && d.contains("Binary files a/b.bin and /dev/null differ"),
            "{d}"
        );
    }
}
