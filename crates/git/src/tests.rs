//! Against real repositories made in temporary directories.

use std::path::Path;

use protocol::LineSpan;

use crate::{ChurnOptions, churn, file_at_head, head, run::git, toplevel, tracked_files};

fn sh(dir: &Path, args: &[&str]) {
    let out = git(dir, args).expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), &["init", "-q", "-b", "main"]);
    sh(dir.path(), &["config", "user.name", "Test"]);
    sh(dir.path(), &["config", "user.email", "test@example.com"]);
    sh(dir.path(), &["config", "commit.gpgsign", "false"]);
    dir
}

fn write(dir: &Path, rel: &str, text: &[u8]) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Commits everything with both dates set (`--since` filters by committer date).
fn commit(dir: &Path, msg: &str, date: &str, author: &str) {
    sh(dir, &["add", "-A"]);
    #[allow(clippy::disallowed_methods)] // test setup: a commit with a fixed committer date
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["commit", "-q", "-m", msg, "--date", date, "--author", author])
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(out.status.success(), "git commit: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn outside_a_repository_there_is_no_history() {
    let dir = tempfile::tempdir().unwrap();
    let c = churn(dir.path(), &ChurnOptions::default()).unwrap();
    assert!(!c.available);
    assert_eq!(c.reason.as_deref(), Some("not a git repository"));
    assert!(c.files.is_empty());
    assert_eq!(toplevel(dir.path()).unwrap(), None);
    assert_eq!(head(dir.path()).unwrap(), None);
    assert_eq!(file_at_head(dir.path(), "x").unwrap(), None);
}

#[test]
fn before_the_first_commit_there_is_no_history() {
    let dir = repo();
    write(dir.path(), "a.txt", b"x\n");
    let c = churn(dir.path(), &ChurnOptions::default()).unwrap();
    assert!(!c.available);
    assert_eq!(c.reason.as_deref(), Some("the repository has no commits yet"));
    assert_eq!(head(dir.path()).unwrap(), None);
    assert_eq!(file_at_head(dir.path(), "a.txt").unwrap(), None);
    assert!(toplevel(dir.path()).unwrap().is_some());
}

#[test]
fn a_directory_no_commit_touches_has_no_history_but_a_quiet_window_has_one() {
    let dir = repo();
    let d = dir.path();
    write(d, "notes.txt", b"x\n");
    write(d, ".gitignore", b"scratch/\n");
    commit(d, "one", "2024-01-01T00:00:00Z", "Ann <ann@example.com>");
    for sub in ["copied", "scratch"] {
        write(d, &format!("{sub}/app.py"), b"def f():\n    pass\n");
        let c = churn(&d.join(sub), &ChurnOptions::default()).unwrap();
        assert!(!c.available, "{sub}");
        assert!(c.reason.as_deref().unwrap().contains("no commit touches this directory"), "{c:?}");
    }
    // A tracked directory with nothing in the window is a read, quiet history.
    write(d, "copied/app.py", b"def f():\n    pass\n");
    commit(d, "two", "2024-02-01T00:00:00Z", "Ann <ann@example.com>");
    let opts = ChurnOptions { since: Some("2025-01-01".into()), ..ChurnOptions::default() };
    let c = churn(&d.join("copied"), &opts).unwrap();
    assert!(c.available, "{c:?}");
    assert!(c.files.is_empty());
}

#[test]
fn a_since_git_reads_no_date_in_is_refused() {
    // git's date parser takes any text and reads what it cannot as now: an
    // empty window that would look like a quiet history.
    let dir = repo();
    let d = dir.path();
    write(d, "a.txt", b"x\n");
    commit(d, "one", "2024-01-01T00:00:00Z", "Ann <ann@example.com>");
    let window = |since: &str| {
        churn(d, &ChurnOptions { since: Some(since.into()), ..ChurnOptions::default() })
    };
    for bad in ["garbage", "soon", "next week"] {
        let e = window(bad).unwrap_err();
        assert!(matches!(e, crate::Error::InvalidDate { .. }), "{bad}: {e}");
        assert_eq!(e.code(), protocol::ErrorCode::InvalidArgument);
        assert!(e.to_string().contains(bad), "{e}");
    }
    // Dates, spans (in words too), and the present said as such are windows.
    for (good, commits) in [
        ("2023-12-31", 1),
        ("6 months ago", 0),
        ("six months ago", 0),
        ("yesterday", 0),
        ("today", 0),
        ("now", 0),
    ] {
        let c = window(good).unwrap();
        assert_eq!(c.commits, commits, "{good}");
    }
}

#[test]
fn churn_follows_renames_counts_binary_files_and_maps_lines() {
    let dir = repo();
    let d = dir.path();
    let body = |n: usize| -> String { (1..=n).map(|i| format!("line {i}\n")).collect() };
    write(d, "src/a.py", body(20).as_bytes());
    write(d, "img.bin", b"\0\x01\x02");
    write(d, "café.txt", b"one\n");
    commit(d, "one", "2024-01-01T00:00:00Z", "Ann <ann@example.com>");
    // Change lines 10-11 of a.py.
    let mut text = body(20).replace("line 10\n", "LINE 10\n").replace("line 11\n", "LINE 11\n");
    write(d, "src/a.py", text.as_bytes());
    write(d, "img.bin", b"\0\x03");
    commit(d, "two", "2024-02-01T00:00:00Z", "Bob <bob@example.com>");
    // Rename a.py → b.py and insert three lines at the top.
    sh(d, &["mv", "src/a.py", "src/b.py"]);
    text = format!("new 1\nnew 2\nnew 3\n{text}");
    write(d, "src/b.py", text.as_bytes());
    commit(d, "three", "2024-03-01T00:00:00Z", "Ann <ANN@example.com>");
    // Uncommitted: delete the first line.
    write(d, "src/b.py", text.split_once('\n').unwrap().1.as_bytes());

    let c = churn(d, &ChurnOptions { lines: true, ..ChurnOptions::default() }).unwrap();
    assert!(c.available, "{:?}", c.reason);
    assert_eq!(c.commits, 3);
    assert!(!c.shallow);
    assert_eq!(c.head, head(d).unwrap());
    let paths: Vec<&str> = c.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["café.txt", "img.bin", "src/b.py"]);

    let b = c.file("src/b.py").unwrap();
    assert_eq!(b.commits, 3, "history carried over the rename");
    assert_eq!(b.authors, 2, "e-mail case does not make a new author");
    assert_eq!((b.added, b.deleted), (20 + 2 + 3, 2));
    assert_eq!(b.last_change, 1_709_251_200);
    // Newest first: the insertion is at lines 1-2 now (its first line was deleted
    // since), the edit of lines 10-11 is at 12-13 (3 inserted, 1 deleted above).
    assert_eq!(b.changes[0].lines, vec![LineSpan { start: 1, end: 2 }]);
    assert_eq!(b.changes[1].lines, vec![LineSpan { start: 12, end: 13 }]);
    assert_eq!(b.changes[2].lines, vec![LineSpan { start: 3, end: 22 }]);

    let bin = c.file("img.bin").unwrap();
    assert!(bin.binary);
    assert_eq!((bin.commits, bin.added), (2, 0));
}

#[test]
fn a_subdirectory_sees_only_its_own_files_relative_to_itself() {
    let dir = repo();
    let d = dir.path();
    write(d, "pkg/mod.rs", b"fn a() {}\n");
    write(d, "other.rs", b"fn b() {}\n");
    commit(d, "one", "2024-01-01T00:00:00Z", "Ann <ann@example.com>");
    write(d, "pkg/mod.rs", b"fn a() { 1 }\n");
    write(d, "other.rs", b"fn b() { 2 }\n");
    commit(d, "two", "2024-01-02T00:00:00Z", "Ann <ann@example.com>");
    write(d, "other.rs", b"fn b() { 3 }\n");
    commit(d, "three", "2024-01-03T00:00:00Z", "Ann <ann@example.com>");

    let c = churn(&d.join("pkg"), &ChurnOptions::default()).unwrap();
    let paths: Vec<&str> = c.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["mod.rs"]);
    assert_eq!(c.commits, 2, "commits that touch nothing under pkg/ are not read");
    assert_eq!(file_at_head(&d.join("pkg"), "mod.rs").unwrap().unwrap(), b"fn a() { 1 }\n");

    // Windows: the newest commit only; since a date.
    let one = churn(d, &ChurnOptions { max_commits: Some(1), ..ChurnOptions::default() }).unwrap();
    assert_eq!(one.commits, 1);
    assert_eq!(one.files.len(), 1);
    let since = churn(
        d,
        &ChurnOptions { since: Some("2024-01-02T12:00:00Z".into()), ..ChurnOptions::default() },
    )
    .unwrap();
    assert_eq!(since.commits, 1);
}

#[test]
fn file_at_head_is_the_committed_version() {
    let dir = repo();
    let d = dir.path();
    write(d, "a.txt", b"committed\n");
    commit(d, "one", "2024-01-01T00:00:00Z", "Ann <ann@example.com>");
    write(d, "a.txt", b"edited\n");
    write(d, "new.txt", b"untracked\n");
    assert_eq!(file_at_head(d, "a.txt").unwrap().unwrap(), b"committed\n");
    assert_eq!(file_at_head(d, "new.txt").unwrap(), None);
    assert_eq!(file_at_head(d, "missing/dir.txt").unwrap(), None);
}

#[test]
fn a_shallow_clone_says_so_and_skips_its_boundary() {
    let src = repo();
    let s = src.path();
    for i in 0..4 {
        write(s, "f.txt", format!("v{i}\n").as_bytes());
        write(s, &format!("only{i}.txt"), b"x\n");
        commit(s, &format!("c{i}"), &format!("2024-01-0{}T00:00:00Z", i + 1), "A <a@b.c>");
    }
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", s.display());
    sh(clone.path(), &["clone", "-q", "--depth", "2", &url, "c"]);
    let c = churn(&clone.path().join("c"), &ChurnOptions::default()).unwrap();
    assert!(c.shallow);
    // Two commits are present; the boundary one (whose diff adds every file) is
    // left out.
    assert_eq!(c.commits, 1);
    let paths: Vec<&str> = c.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["f.txt", "only3.txt"]);
}

#[test]
fn tracked_files_include_ignored_ones_relative_to_the_directory_asked() {
    let dir = repo();
    write(dir.path(), ".gitignore", b"_version.py\n*.log\n");
    write(dir.path(), "pkg/a.py", b"x\n");
    write(dir.path(), "pkg/_version.py", b"v = 1\n");
    write(dir.path(), "pkg/run.log", b"log\n");
    sh(dir.path(), &["add", ".gitignore", "pkg/a.py"]);
    sh(dir.path(), &["add", "-f", "pkg/_version.py"]);
    let mut all = tracked_files(dir.path()).unwrap().unwrap();
    all.sort();
    assert_eq!(all, [".gitignore", "pkg/_version.py", "pkg/a.py"]);
    let mut sub = tracked_files(&dir.path().join("pkg")).unwrap().unwrap();
    sub.sort();
    assert_eq!(sub, ["_version.py", "a.py"]);
    let outside = tempfile::tempdir().unwrap();
    assert_eq!(tracked_files(outside.path()).unwrap(), None);
}
