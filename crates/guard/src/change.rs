//! A change as the rules read it: per file, the lines it adds (with their line
//! numbers after the change), how many it removes, and its length after.

use similar::{ChangeTag, TextDiff};

/// One file's part of a change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    /// Added lines: 1-based line number after the change, and the text.
    pub added: Vec<(u32, String)>,
    pub removed: u32,
    /// The file is gone after the change.
    pub deleted: bool,
    /// Lines in the file after the change, when known.
    pub lines_after: Option<u32>,
}

/// The files a change touches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    pub files: Vec<FileDiff>,
}

impl Change {
    /// From each file's text before and after (`None`: absent).
    pub fn from_files(files: &[(&str, Option<&str>, Option<&str>)]) -> Change {
        let files = files
            .iter()
            .filter(|(_, before, after)| before != after)
            .map(|&(path, before, after)| {
                let mut d = FileDiff {
                    path: path.to_owned(),
                    deleted: after.is_none(),
                    lines_after: after.map(|a| a.lines().count() as u32),
                    ..FileDiff::default()
                };
                let diff = TextDiff::from_lines(before.unwrap_or(""), after.unwrap_or(""));
                let mut line = 0u32;
                for c in diff.iter_all_changes() {
                    match c.tag() {
                        ChangeTag::Equal => line += 1,
                        ChangeTag::Insert => {
                            line += 1;
                            d.added
                                .push((line, c.value().trim_end_matches(['\n', '\r']).to_owned()));
                        }
                        ChangeTag::Delete => d.removed += 1,
                    }
                }
                d
            })
            .collect();
        Change { files }
    }

    /// From a unified diff (`git diff`, `git format-patch`, a `.patch` file):
    /// the `+++ b/path` headers name the files, hunk headers the line numbers.
    pub fn from_unified_diff(text: &str) -> Change {
        let mut files: Vec<FileDiff> = Vec::new();
        let mut line = 0u32;
        // Lines left in the current hunk, old and new side, from its header: a
        // removed `-- comment` line reads `--- comment`, which is not a header.
        let (mut old_left, mut new_left) = (0u32, 0u32);
        for raw in text.lines() {
            if old_left > 0 || new_left > 0 {
                let Some(file) = files.last_mut() else { break };
                match raw.as_bytes().first() {
                    Some(b'+') => {
                        line += 1;
                        new_left = new_left.saturating_sub(1);
                        file.added.push((line, raw[1..].to_owned()));
                    }
                    Some(b'-') => {
                        old_left = old_left.saturating_sub(1);
                        file.removed += 1;
                    }
                    Some(b'\\') => {}
                    _ => {
                        line += 1;
                        old_left = old_left.saturating_sub(1);
                        new_left = new_left.saturating_sub(1);
                    }
                }
                continue;
            }
            if let Some(rest) = raw.strip_prefix("+++ ") {
                // `diff -u` puts a tab and a timestamp after the name.
                let path = rest.split('\t').next().unwrap_or(rest).trim_end();
                let deleted = path == "/dev/null";
                let path = path.strip_prefix("b/").unwrap_or(path).to_owned();
                // A deletion names the file on the `---` line only.
                let path = if deleted {
                    files.last().map(|f| f.path.clone()).unwrap_or(path)
                } else {
                    path
                };
                match files.last_mut() {
                    Some(f) if f.path == path && deleted => f.deleted = true,
                    _ => files.push(FileDiff { path, deleted, ..FileDiff::default() }),
                }
                continue;
            }
            if let Some(rest) = raw.strip_prefix("--- ") {
                // Placeholder for a deletion, replaced by the `+++` line's path.
                let path = rest.split('\t').next().unwrap_or(rest).trim_end();
                let path = path.strip_prefix("a/").unwrap_or(path);
                if path != "/dev/null" {
                    files.push(FileDiff { path: path.to_owned(), ..FileDiff::default() });
                }
                continue;
            }
            if let Some(rest) = raw.strip_prefix("@@ ") {
                // @@ -a,b +c,d @@ (a count of 1 may be left out)
                let side = |sign: char| -> (u32, u32) {
                    let Some(p) = rest.split_whitespace().find_map(|p| p.strip_prefix(sign)) else {
                        return (1, 0);
                    };
                    let mut it = p.split(',');
                    let start = it.next().and_then(|n| n.parse().ok()).unwrap_or(1);
                    let count = it.next().map_or(Some(1), |n| n.parse().ok()).unwrap_or(0);
                    (start, count)
                };
                let ((_, old), (start, new)) = (side('-'), side('+'));
                line = start.saturating_sub(1);
                (old_left, new_left) = (old, new);
            }
        }
        // `---` then `+++` for the same file makes two entries: keep the second.
        let mut merged: Vec<FileDiff> = Vec::new();
        for f in files {
            match merged.last_mut() {
                Some(last) if last.path == f.path && last.added.is_empty() && last.removed == 0 => {
                    *last = FileDiff { deleted: last.deleted || f.deleted, ..f }
                }
                _ => merged.push(f),
            }
        }
        Change { files: merged }
    }

    pub fn lines_added(&self) -> u32 {
        self.files.iter().map(|f| f.added.len() as u32).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_lines_carry_their_numbers_after_the_change() {
        let c = Change::from_files(&[
            ("a.py", Some("a\nb\nc\n"), Some("a\nB\nb\nc\nd\n")),
            ("same.py", Some("x\n"), Some("x\n")),
            ("gone.py", Some("x\n"), None),
        ]);
        assert_eq!(c.files.len(), 2, "an unchanged file is no part of the change");
        assert_eq!(c.files[0].added, [(2, "B".to_owned()), (5, "d".to_owned())]);
        assert_eq!(c.files[0].lines_after, Some(5));
        assert!(c.files[1].deleted);
        assert_eq!(c.lines_added(), 2);
    }

    #[test]
    fn a_unified_diff_reads_the_same() {
        let diff = "diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,5 @@\n a\n+B\n b\n c\n+d\ndiff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\ndiff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n";
        let c = Change::from_unified_diff(diff);
        let got: Vec<(&str, Vec<u32>, u32, bool)> = c
            .files
            .iter()
            .map(|f| {
                (f.path.as_str(), f.added.iter().map(|(l, _)| *l).collect(), f.removed, f.deleted)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("a.py", vec![2, 5], 0, false),
                ("new.py", vec![1, 2], 0, false),
                ("old.py", vec![], 1, true)
            ]
        );

        // Inside a hunk, a removed SQL comment (`-- x` → `--- x`) and an added
        // `++ y` are lines, not headers; `diff -u` timestamps are not names.
        let diff = "--- a/q.sql\t2024-01-01\n+++ b/q.sql\t2024-01-02\n@@ -1,2 +1,2 @@\n--- old comment\n+++ new comment\n select 1;\n";
        let c = Change::from_unified_diff(diff);
        assert_eq!(c.files.len(), 1, "{c:?}");
        assert_eq!(c.files[0].path, "q.sql");
        assert_eq!(c.files[0].added, vec![(1, "++ new comment".to_owned())]);
        assert_eq!(c.files[0].removed, 1);
    }
}
