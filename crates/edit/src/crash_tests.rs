//! The crash test: a real child process runs a multi-file transaction, its undo
//! and its redo, and is killed with SIGKILL at every step boundary of the protocol
//! (the crash points of `failpoint.rs`); a second child is killed again during
//! recovery; then a fresh engine in this process must find every file fully old or
//! fully new, consistently for the whole transaction, with the journal recovered
//! and the history agreeing with the files.
//!
//! It lives in the unit-test binary because the crash points exist only there
//! (`cfg(test)`); the child is this same binary running the ignored `child` test.
#![allow(clippy::disallowed_methods)] // the test starts itself as the child process
#![allow(clippy::print_stdout)] // the child reports to its parent on stdout

use std::{
    collections::BTreeMap,
    io::{BufRead, BufReader},
    path::Path,
    process::{Command, Stdio},
};

use protocol::{EditRequest, TransactionKind, TransactionState};

use crate::{Engine, EngineOptions, failpoint};

const ROOT_VAR: &str = "IRONBEES_CRASH_ROOT";
const AT_VAR: &str = "IRONBEES_CRASH_AT";
const MODE_VAR: &str = "IRONBEES_CRASH_MODE";

/// Files with every property the engine must keep: CRLF, a BOM, an exec bit, a
/// file to delete, one to move, a directory to create.
fn initial(root: &Path) {
    let w = |rel: &str, bytes: &[u8]| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    };
    w("a.txt", b"one\r\ntwo\r\nthree\r\n");
    w("b.txt", b"bee\n");
    w("run.sh", b"#!/bin/sh\necho v1\n");
    w("bom.txt", "\u{feff}x = 1\n".as_bytes());
    w("old/d.txt", b"delete me\n");
    w("e.txt", b"move me\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
}

fn edit_request() -> EditRequest {
    serde_json::from_value(serde_json::json!({
        "description": "crash test",
        "edits": [
            {"op": "replace", "path": "a.txt", "targetString": "two\n", "replacementString": "TWO\nTWO-B\n"},
            {"op": "replace", "path": "b.txt", "targetString": "bee", "replacementString": "BEE"},
            {"op": "replace", "path": "run.sh", "targetString": "v1", "replacementString": "v2"},
            {"op": "replace", "path": "bom.txt", "targetString": "x = 1", "replacementString": "x = 2"},
            {"op": "create", "path": "new/dir/c.txt", "content": "created\n"},
            {"op": "delete", "path": "old/d.txt"},
            {"op": "rename", "path": "e.txt", "newPath": "moved/e.txt"},
            {"op": "replace", "path": "e.txt", "targetString": "move me", "replacementString": "moved"}
        ]
    }))
    .unwrap()
}

/// The child's work: edit, undo, redo (the project alternates old, new, old, new).
fn scenario(root: &Path) {
    let mut e = Engine::open(root, EngineOptions::default()).unwrap();
    e.apply(&edit_request()).unwrap();
    e.undo(None, false).unwrap();
    e.redo(None, false).unwrap();
}

/// Regular files (content and permissions), `.ironbees/` excluded. Directories
/// are not compared: a crash may leave an empty directory behind, never a file.
fn files(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = stdx::to_slash(p.strip_prefix(root).unwrap());
            if rel == ".ironbees" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(rel, (std::fs::read(&p).unwrap(), crate::plan::mode_of(&meta)));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Runs this binary's `child` test with the given mode and crash point; returns
/// the crash point's name if it was reached (then the child was SIGKILLed) and the
/// child's stdout.
fn run_child(root: &Path, mode: &str, at: u64) -> (Option<String>, Vec<String>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["crash_tests::child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(ROOT_VAR, root)
        .env(AT_VAR, at.to_string())
        .env(MODE_VAR, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut crashed = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        // libtest may print `test crash_tests::child ... ` on the same line first.
        if let Some(i) = line.find("CRASHPOINT ") {
            crashed = Some(line[i + "CRASHPOINT ".len()..].to_owned());
            child.kill().unwrap(); // SIGKILL
            break;
        }
        lines.push(line);
    }
    let status = child.wait().unwrap();
    if crashed.is_none() {
        assert!(status.success(), "child failed: {lines:?}");
    }
    (crashed, lines)
}

#[test]
#[ignore = "the crash test's child process; does nothing without its variables"]
fn child() {
    let (Ok(root), Ok(at), Ok(mode)) =
        (std::env::var(ROOT_VAR), std::env::var(AT_VAR), std::env::var(MODE_VAR))
    else {
        return;
    };
    failpoint::arm(at.parse().unwrap());
    let root = Path::new(&root);
    match mode.as_str() {
        "scenario" => scenario(root),
        "recover" => drop(Engine::open(root, EngineOptions::default()).unwrap()),
        other => panic!("unknown mode {other}"),
    }
    println!("\nPASSED {}", failpoint::passed().join("|"));
}

/// The crash points an unarmed child passed, in order.
fn points_passed(out: &[String]) -> Vec<String> {
    out.iter()
        .find_map(|l| l.find("PASSED ").map(|i| &l[i + "PASSED ".len()..]))
        .expect("the child reports its crash points")
        .split('|')
        .map(str::to_owned)
        .collect()
}

fn no_temp_files(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().all(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        let p = e.path();
        !name.starts_with(".ironbees-tmp-") && (!p.is_dir() || no_temp_files(&p))
    })
}

#[test]
fn sigkill_at_every_step_leaves_each_file_fully_old_or_fully_new() {
    let scratch = tempfile::tempdir().unwrap();
    // The two states: before the edit, and after it (computed in this process).
    let old_root = scratch.path().join("old");
    let new_root = scratch.path().join("new");
    initial(&old_root);
    initial(&new_root);
    let old = files(&old_root);
    Engine::open(&new_root, EngineOptions::default()).unwrap().apply(&edit_request()).unwrap();
    let new = files(&new_root);
    assert_ne!(old, new);
    assert_eq!(new["a.txt"].0, b"one\r\nTWO\r\nTWO-B\r\nthree\r\n");

    // How many crash points the scenario passes, in a child that is not killed.
    let count_root = scratch.path().join("count");
    initial(&count_root);
    let (crashed, out) = run_child(&count_root, "scenario", 0);
    assert!(crashed.is_none());
    let points = points_passed(&out);
    let total = points.len() as u64;
    assert!(total >= 50, "only {total} crash points");
    assert_eq!(files(&count_root), new, "edit, undo, redo ends in the new state");

    let mut seen = BTreeMap::<String, u32>::new();
    for at in 1..=total {
        let root = scratch.path().join(format!("p{at}"));
        initial(&root);
        let (point, _) = run_child(&root, "scenario", at);
        let point = point.unwrap_or_else(|| panic!("crash point {at} of {total} not reached"));
        *seen.entry(point.clone()).or_default() += 1;
        // Killed again while recovering, at one of its first steps (when it has any).
        let (recovery_point, _) = run_child(&root, "recover", at % 3 + 1);

        let engine = Engine::open(&root, EngineOptions::default()).unwrap();
        let now = files(&root);
        let context = format!("killed at #{at} ({point}), recovery killed at {recovery_point:?}");
        let edit =
            engine.history(10).unwrap().into_iter().find(|t| t.kind == TransactionKind::Edit);
        match edit.map(|t| t.state) {
            Some(TransactionState::Applied) => assert!(now == new, "{context}: expected new state"),
            Some(TransactionState::Undone) | None => {
                assert!(now == old, "{context}: expected old state")
            }
            Some(other) => panic!("{context}: edit in state {other:?}"),
        }
        let journal = root.join(".ironbees/edits/journal");
        assert_eq!(std::fs::read_dir(&journal).unwrap().count(), 0, "{context}: journal left");
        assert!(no_temp_files(&root), "{context}: temporary files left");
        std::fs::remove_dir_all(&root).unwrap();
    }
    // Every kind of step was interrupted somewhere.
    for name in [
        "blob stored",
        "journal written",
        "directory created",
        "file checked",
        "file written",
        "check passed",
        "committed",
        "journal removed",
    ] {
        assert!(seen.contains_key(name), "never killed at {name:?}: {seen:?}");
    }
}

#[test]
fn recovery_keeps_a_file_changed_after_the_crash() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("p");
    initial(&root);
    // Kill the child after its first two project files are written.
    let probe = scratch.path().join("probe");
    initial(&probe);
    let points = points_passed(&run_child(&probe, "scenario", 0).1);
    let at = points
        .iter()
        .enumerate()
        .filter(|(_, p)| *p == "file written")
        .nth(1)
        .map(|(i, _)| i as u64 + 1)
        .unwrap();
    let (point, _) = run_child(&root, "scenario", at);
    assert_eq!(point.as_deref(), Some("file written"));
    // a.txt and b.txt are new now; someone edits a.txt before ironbees runs again.
    assert_eq!(std::fs::read(root.join("b.txt")).unwrap(), b"BEE\n");
    std::fs::write(root.join("a.txt"), "edited by hand\n").unwrap();

    let engine = Engine::open(&root, EngineOptions::default()).unwrap();
    let rec = engine.recovery();
    assert_eq!(rec.rolled_back.len(), 1);
    assert_eq!(rec.conflicts.len(), 1, "{rec:?}");
    assert_eq!(rec.conflicts[0].path, "a.txt");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "edited by hand\n");
    assert_eq!(std::fs::read(root.join("b.txt")).unwrap(), b"bee\n", "the rest is rolled back");
    let saved = root.join(rec.conflicts[0].saved_to.as_ref().unwrap());
    assert_eq!(std::fs::read(saved).unwrap(), b"one\r\ntwo\r\nthree\r\n");
}
