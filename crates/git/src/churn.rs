//! Churn: how often and how much each file changed over a window of commits.
//!
//! Two reads of `git log` (see `log.rs`), joined here by a pure function:
//!
//! - history is walked newest first; a rename `old → new` makes older commits of
//!   `old` count for the file's current name, so a file keeps its history across
//!   renames;
//! - merges are left out (`--no-merges`): their changes are the side branch's commits,
//!   which are counted themselves;
//! - a shallow clone's boundary commits are left out: their diff adds every file;
//! - with line ranges, each commit's hunks are mapped through every newer commit's
//!   hunks (and the uncommitted changes) to where those lines are in the working
//!   tree, which is what the index has parsed.

use std::{
    collections::{HashMap, HashSet},
    path::Path,
};

use protocol::{Churn, ChurnWindow, CommitTouch, FileChurn, LineSpan};

use crate::{
    error::{Error, Result},
    log::{FORMAT, Hunk, LogCommit, PatchCommit, parse_numstat, parse_patch},
    run::{git, git_ok, not_a_repository},
};

/// Which history [`churn`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChurnOptions {
    /// The newest N non-merge commits (None: all).
    pub max_commits: Option<u32>,
    /// Only commits after this date (`git log --since` syntax: `2024-01-01`,
    /// `6 months ago`). Like git, this compares the committer date; the times
    /// reported are author times (when the change was written, kept by rebases).
    pub since: Option<String>,
    /// Also read where in each file the changes are (per-definition churn); costs a
    /// second `git log` with patches.
    pub lines: bool,
}

impl Default for ChurnOptions {
    fn default() -> Self {
        ChurnOptions { max_commits: Some(1000), since: None, lines: false }
    }
}

/// Refuses a `--since` git finds no date in. git's date parser accepts any text
/// and reads what it cannot as the present (`garbage` is now), so the window
/// would be empty with no word of why. The present is what `now` and `today`
/// mean, and a text with a number in it is one git took a date from (`0 days
/// ago`, `2020`); anything else that comes to the present is not a date.
fn check_since(root: &Path, since: &str) -> Result<()> {
    // Taken before git reads the date: git's present is not earlier, however
    // slowly it starts.
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let arg = format!("--since={since}");
    let out = git_ok(root, &["rev-parse", &arg])?;
    let text = String::from_utf8_lossy(&out);
    let Some(max_age) = text.trim().strip_prefix("--max-age=").and_then(|n| n.parse::<i64>().ok())
    else {
        return Ok(());
    };
    let words = since.trim().to_ascii_lowercase();
    let says_present = matches!(words.as_str(), "now" | "today");
    if max_age >= before && !says_present && !words.chars().any(|c| c.is_ascii_digit()) {
        return Err(Error::InvalidDate { text: since.to_owned() });
    }
    Ok(())
}

/// The churn of every file under `root` (a work tree or any directory inside one).
/// Paths are relative to `root`; changes outside it are ignored.
///
/// No history is not an error: outside a repository, before the first commit, or
/// without git installed, the answer says so (`available: false`, `reason`).
pub fn churn(root: &Path, opts: &ChurnOptions) -> Result<Churn> {
    let window = ChurnWindow { max_commits: opts.max_commits, since: opts.since.clone() };
    let probe = match git(root, &["rev-parse", "--is-shallow-repository", "--verify", "-q", "HEAD"])
    {
        Ok(out) => out,
        Err(Error::NotInstalled) => {
            return Ok(Churn::unavailable("git is not installed", window));
        }
        Err(e) => return Err(e),
    };
    if !probe.status.success() {
        if not_a_repository(&probe) {
            return Ok(Churn::unavailable("not a git repository", window));
        }
        let text = String::from_utf8_lossy(&probe.stderr).trim().to_owned();
        if text.is_empty() {
            // `--verify -q HEAD` fails silently on an unborn branch.
            return Ok(Churn::unavailable("the repository has no commits yet", window));
        }
        // e.g. "detected dubious ownership": report it rather than fail the caller.
        return Ok(Churn::unavailable(format!("git refused: {text}"), window));
    }
    if let Some(since) = &opts.since {
        check_since(root, since)?;
    }
    let probe_text = String::from_utf8_lossy(&probe.stdout).into_owned();
    let mut lines = probe_text.lines();
    let shallow = lines.next() == Some("true");
    let head = lines.next().map(str::to_owned);
    let boundary = if shallow { shallow_boundary(root)? } else { HashSet::new() };

    let mut args: Vec<String> = vec![
        "log".into(),
        "--no-merges".into(),
        "-M".into(),
        "--relative".into(),
        "--no-color".into(),
        FORMAT.into(),
    ];
    if let Some(n) = opts.max_commits {
        args.push(format!("--max-count={n}"));
    }
    if let Some(since) = &opts.since {
        args.push(format!("--since={since}"));
    }
    let mut numstat_args = args.clone();
    numstat_args.extend(["--numstat".into(), "-z".into(), "--".into(), ".".into()]);
    let refs: Vec<&str> = numstat_args.iter().map(String::as_str).collect();
    let commits = parse_numstat(&git_ok(root, &refs)?);
    if commits.is_empty() && !touched_ever(root)? {
        // A directory no commit reaches: untracked or ignored inside a repository
        // (a project copied into a home directory kept under git). Its structure
        // still ranks; "nothing changed" would say the history was read and was
        // quiet, which it was not.
        return Ok(Churn::unavailable(
            "no commit touches this directory: it is untracked or ignored in the repository around it",
            window,
        ));
    }

    let patches = if opts.lines {
        let mut patch_args = args;
        patch_args.extend(
            [
                "-p",
                "-U0",
                "--no-ext-diff",
                "--no-textconv",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                "--",
                ".",
            ]
            .map(String::from),
        );
        let refs: Vec<&str> = patch_args.iter().map(String::as_str).collect();
        let mut patches = parse_patch(&git_ok(root, &refs)?);
        // The uncommitted changes come first: they are the newest layer, and the
        // index parsed the working tree, not HEAD.
        let worktree = git_ok(
            root,
            &[
                "diff",
                "-U0",
                "-M",
                "--relative",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                "HEAD",
                "--",
                ".",
            ],
        )?;
        let mut layers = parse_patch(&worktree);
        layers.iter_mut().for_each(|c| c.hash = WORKTREE.to_owned());
        layers.append(&mut patches);
        Some(layers)
    } else {
        None
    };
    Ok(aggregate(commits, patches.as_deref(), &boundary, window, head, shallow))
}

/// Whether any commit of HEAD's history touches a file under `root`, whatever the
/// window (`--since`, `--max-count`) let through.
fn touched_ever(root: &Path) -> Result<bool> {
    let out = git_ok(root, &["log", "-1", "--format=%H", "--", "."])?;
    Ok(!out.iter().all(u8::is_ascii_whitespace))
}

/// The hash given to the uncommitted changes' layer.
const WORKTREE: &str = "<worktree>";

fn shallow_boundary(root: &Path) -> Result<HashSet<String>> {
    let out = git_ok(root, &["rev-parse", "--path-format=absolute", "--git-path", "shallow"])?;
    let path = String::from_utf8_lossy(&out).trim().to_owned();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    Ok(text.lines().map(|l| l.trim().to_owned()).filter(|l| !l.is_empty()).collect())
}

/// Joins the logs into per-file churn. `commits` and `patches` are newest first;
/// `patches` may start with the working tree's layer (hash `<worktree>`).
pub(crate) fn aggregate(
    commits: Vec<LogCommit>,
    patches: Option<&[PatchCommit]>,
    boundary: &HashSet<String>,
    window: ChurnWindow,
    head: Option<String>,
    shallow: bool,
) -> Churn {
    struct Acc {
        churn: FileChurn,
        authors: HashSet<String>,
    }
    let patch_by_hash: HashMap<&str, &PatchCommit> =
        patches.unwrap_or_default().iter().map(|p| (p.hash.as_str(), p)).collect();
    // Historical path → the name it has now.
    let mut alias: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    let current = |alias: &HashMap<Vec<u8>, Vec<u8>>, p: &[u8]| -> Vec<u8> {
        alias.get(p).cloned().unwrap_or_else(|| p.to_vec())
    };
    // Per current path: hunk lists of the commits already walked (newer ones),
    // newest first.
    let mut later: HashMap<Vec<u8>, Vec<Vec<Hunk>>> = HashMap::new();
    if let Some(worktree) = patch_by_hash.get(WORKTREE) {
        for f in &worktree.files {
            if let Some(p) = &f.path {
                later.entry(p.clone()).or_default().push(sorted(&f.hunks));
            }
        }
    }
    let mut files: HashMap<Vec<u8>, Acc> = HashMap::new();
    let (mut newest, mut oldest, mut counted) = (None::<i64>, None::<i64>, 0u32);
    for commit in &commits {
        if boundary.contains(&commit.hash) {
            continue;
        }
        counted += 1;
        newest = Some(newest.map_or(commit.time, |t| t.max(commit.time)));
        oldest = Some(oldest.map_or(commit.time, |t| t.min(commit.time)));
        // Hunks of this commit by the path after it, resolved to current names
        // before this commit's renames are applied.
        let mut hunks_by_path: HashMap<Vec<u8>, Vec<Hunk>> = HashMap::new();
        if let Some(p) = patch_by_hash.get(commit.hash.as_str()) {
            for f in &p.files {
                if let Some(path) = &f.path {
                    hunks_by_path.insert(current(&alias, path), sorted(&f.hunks));
                }
            }
        }
        for entry in &commit.files {
            let name = current(&alias, &entry.path);
            if let Some(old) = &entry.old_path {
                // Older commits call this file `old`; the name `new` belonged to
                // another file before this rename, if to any.
                alias.remove(&entry.path);
                alias.insert(old.clone(), name.clone());
            }
            let acc = files.entry(name.clone()).or_insert_with(|| Acc {
                churn: FileChurn {
                    path: String::from_utf8_lossy(&name).into_owned(),
                    last_change: commit.time,
                    first_change: commit.time,
                    ..FileChurn::default()
                },
                authors: HashSet::new(),
            });
            let c = &mut acc.churn;
            c.commits += 1;
            c.binary |= entry.added.is_none();
            let (added, deleted) = (entry.added.unwrap_or(0), entry.deleted.unwrap_or(0));
            c.added += u64::from(added);
            c.deleted += u64::from(deleted);
            c.last_change = c.last_change.max(commit.time);
            c.first_change = c.first_change.min(commit.time);
            acc.authors.insert(commit.email.to_ascii_lowercase());
            let mut spans = Vec::new();
            if let Some(hunks) = hunks_by_path.remove(&name) {
                let newer = later.entry(name.clone()).or_default();
                spans = hunk_spans(&hunks, newer);
                newer.push(hunks);
            }
            c.changes.push(CommitTouch { time: commit.time, added, deleted, lines: spans });
        }
    }
    let mut out: Vec<FileChurn> = files
        .into_values()
        .map(|mut acc| {
            acc.churn.authors = acc.authors.len() as u32;
            acc.churn
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Churn {
        available: true,
        reason: None,
        head,
        window,
        commits: counted,
        newest,
        oldest,
        shallow,
        lines: patches.is_some(),
        files: out,
    }
}

fn sorted(hunks: &[Hunk]) -> Vec<Hunk> {
    let mut h = hunks.to_vec();
    h.sort_by_key(|h| h.old_start);
    h
}

/// Where a commit's hunks lie now: each hunk's new-side lines, mapped through the
/// newer commits' hunks (`newer` is newest first, so applied in reverse), merged.
fn hunk_spans(hunks: &[Hunk], newer: &[Vec<Hunk>]) -> Vec<LineSpan> {
    let mut spans: Vec<LineSpan> = hunks
        .iter()
        .map(|h| {
            // A pure deletion touches the line before it (or the first line).
            let (mut start, mut end) = if h.new_len == 0 {
                (h.new_start.max(1), h.new_start.max(1))
            } else {
                (h.new_start, h.new_start + h.new_len - 1)
            };
            for layer in newer.iter().rev() {
                start = map_line(layer, start);
                end = map_line(layer, end).max(start);
            }
            LineSpan { start, end }
        })
        .collect();
    spans.sort_by_key(|s| (s.start, s.end));
    let mut merged: Vec<LineSpan> = Vec::with_capacity(spans.len());
    for s in spans {
        match merged.last_mut() {
            Some(m) if s.start <= m.end + 1 => m.end = m.end.max(s.end),
            _ => merged.push(s),
        }
    }
    merged
}

/// Maps line `l` of the file before a commit to the file after it, given the
/// commit's hunks sorted by old start. Lines the commit rewrote map into its new
/// lines (proportionally), deleted ones to the line before the deletion.
fn map_line(hunks: &[Hunk], l: u32) -> u32 {
    let mut shift: i64 = 0;
    for h in hunks {
        let (a, b, c, d) = (h.old_start, h.old_len, h.new_start, h.new_len);
        if b == 0 {
            // Insertion after old line `a`.
            if l > a {
                shift = i64::from(c + d) - i64::from(a + 1);
                continue;
            }
            break;
        }
        if l < a {
            break;
        }
        if l < a + b {
            return if d == 0 { c.max(1) } else { c + (l - a).min(d - 1) };
        }
        let new_end = if d == 0 { c + 1 } else { c + d };
        shift = i64::from(new_end) - i64::from(a + b);
    }
    (i64::from(l) + shift).max(1) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{NumstatEntry, PatchFile};

    fn h(old_start: u32, old_len: u32, new_start: u32, new_len: u32) -> Hunk {
        Hunk { old_start, old_len, new_start, new_len }
    }

    #[test]
    fn map_line_table() {
        // (hunks, line before, line after)
        let cases: &[(&[Hunk], u32, u32)] = &[
            (&[], 7, 7),
            // three lines inserted after line 4
            (&[h(4, 0, 5, 3)], 4, 4),
            (&[h(4, 0, 5, 3)], 5, 8),
            // lines 3..=4 deleted
            (&[h(3, 2, 2, 0)], 2, 2),
            (&[h(3, 2, 2, 0)], 3, 2),
            (&[h(3, 2, 2, 0)], 5, 3),
            // line 10 replaced by three lines: inside maps into the new lines
            (&[h(10, 1, 10, 3)], 10, 10),
            (&[h(10, 1, 10, 3)], 11, 13),
            // two hunks: the second shift wins past it
            (&[h(2, 0, 3, 2), h(8, 2, 10, 1)], 5, 7),
            (&[h(2, 0, 3, 2), h(8, 2, 10, 1)], 9, 10),
            (&[h(2, 0, 3, 2), h(8, 2, 10, 1)], 12, 13),
            // insertion at the very top
            (&[h(0, 0, 1, 2)], 1, 3),
        ];
        for (hunks, before, after) in cases {
            assert_eq!(map_line(hunks, *before), *after, "{hunks:?} line {before}");
        }
    }

    fn commit(
        hash: &str,
        time: i64,
        email: &str,
        files: &[(&str, Option<&str>, u32, u32)],
    ) -> LogCommit {
        LogCommit {
            hash: hash.into(),
            parents: 1,
            time,
            email: email.into(),
            files: files
                .iter()
                .map(|(path, old, a, d)| NumstatEntry {
                    added: Some(*a),
                    deleted: Some(*d),
                    path: path.as_bytes().to_vec(),
                    old_path: old.map(|o| o.as_bytes().to_vec()),
                })
                .collect(),
        }
    }

    #[test]
    fn renames_carry_history_to_the_current_name() {
        // Newest first: c3 renames b.py → c.py, c2 renames a.py → b.py, c1 edits a.py.
        // A different a.py existing today (re-created in c4) keeps only its own commit.
        let commits = vec![
            commit("c4", 400, "x@y", &[("a.py", None, 5, 0)]),
            commit("c3", 300, "x@y", &[("c.py", Some("b.py"), 1, 1)]),
            commit("c2", 200, "Z@Y", &[("b.py", Some("a.py"), 0, 0)]),
            commit("c1", 100, "z@y", &[("a.py", None, 10, 2)]),
        ];
        let churn = aggregate(commits, None, &HashSet::new(), ChurnWindow::default(), None, false);
        let c = churn.file("c.py").unwrap();
        assert_eq!((c.commits, c.added, c.deleted, c.authors), (3, 11, 3, 2));
        assert_eq!((c.first_change, c.last_change), (100, 300));
        let a = churn.file("a.py").unwrap();
        assert_eq!((a.commits, a.added), (1, 5));
        assert!(churn.file("b.py").is_none());
        assert_eq!((churn.commits, churn.newest, churn.oldest), (4, Some(400), Some(100)));
    }

    #[test]
    fn shallow_boundary_commits_are_not_counted() {
        let commits = vec![
            commit("new", 200, "a@b", &[("f.rs", None, 1, 1)]),
            commit("edge", 100, "a@b", &[("f.rs", None, 500, 0), ("g.rs", None, 90, 0)]),
        ];
        let boundary: HashSet<String> = ["edge".to_owned()].into();
        let churn = aggregate(commits, None, &boundary, ChurnWindow::default(), None, true);
        assert_eq!(churn.commits, 1);
        assert_eq!(churn.file("f.rs").unwrap().added, 1);
        assert!(churn.file("g.rs").is_none());
    }

    #[test]
    fn line_spans_follow_newer_commits_and_the_working_tree() {
        // c1 (oldest) changes lines 10-11 of f.rs; c2 inserts 5 lines at the top;
        // the working tree deletes line 1. Today c1's lines are at 14-15.
        let commits = vec![
            commit("c2", 200, "a@b", &[("f.rs", None, 5, 0)]),
            commit("c1", 100, "a@b", &[("f.rs", None, 2, 2)]),
        ];
        let patch = |hash: &str, hunks: Vec<Hunk>| PatchCommit {
            hash: hash.into(),
            files: vec![PatchFile { path: Some(b"f.rs".to_vec()), hunks }],
        };
        let patches = vec![
            patch(WORKTREE, vec![h(1, 1, 0, 0)]),
            patch("c2", vec![h(0, 0, 1, 5)]),
            patch("c1", vec![h(10, 2, 10, 2)]),
        ];
        let churn = aggregate(
            commits,
            Some(&patches),
            &HashSet::new(),
            ChurnWindow::default(),
            None,
            false,
        );
        let f = churn.file("f.rs").unwrap();
        assert_eq!(f.changes[0].lines, vec![LineSpan { start: 1, end: 4 }]);
        assert_eq!(f.changes[1].lines, vec![LineSpan { start: 14, end: 15 }]);
        assert!(churn.lines);
    }
}
