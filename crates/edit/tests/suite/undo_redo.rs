//! Undo, redo and history across restarts.

use protocol::{ErrorCode, TransactionKind, TransactionState};
use serde_json::json;
use test_support::TempProject;

use super::*;

fn project() -> TempProject {
    TempProject::with_fixture(
        r#"
        //- a.txt
        alpha
        //- b.txt
        beta
        //- gone.txt
        to be deleted
        "#,
    )
}

fn three_file_edit(e: &mut Engine) -> String {
    apply(
        e,
        json!({"description": "three files", "edits": [
            {"op": "replace", "path": "a.txt", "targetString": "alpha", "replacementString": "ALPHA"},
            {"op": "delete", "path": "gone.txt"},
            {"op": "create", "path": "d/new.txt", "content": "new\n"}
        ]}),
    )
    .unwrap()
    .transaction_id
    .unwrap()
}

#[test]
fn undo_and_redo_restore_exact_bytes_and_survive_restarts() {
    let p = project();
    let original = snapshot(p.root());
    let tx = {
        let mut e = engine(&p);
        three_file_edit(&mut e)
    };
    let edited = snapshot(p.root());
    // A new process (a new engine) undoes it by id prefix.
    let mut e = engine(&p);
    let dry = e.undo(Some(&tx[..6]), true).unwrap();
    assert!(dry.dry_run);
    assert_eq!(snapshot(p.root()), edited, "a dry-run undo writes nothing");
    let undo = e.undo(Some(&tx[..6]), false).unwrap();
    assert_eq!(snapshot(p.root()), original);
    assert_eq!(dry.files, undo.files);
    drop(e);
    let mut e = engine(&p);
    let h = e.history(10).unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!((h[0].kind, h[0].target.as_deref()), (TransactionKind::Undo, Some(tx.as_str())));
    assert_eq!((h[1].id.as_str(), h[1].state), (tx.as_str(), TransactionState::Undone));
    // Plain `redo` picks the undone edit.
    e.redo(None, false).unwrap();
    assert_eq!(snapshot(p.root()), edited);
    assert_eq!(e.history(10).unwrap()[2].state, TransactionState::Applied);
    // The transaction shows its diffs from the stored versions.
    let (summary, files) = e.transaction(&tx).unwrap();
    assert_eq!(summary.description, "three files");
    assert!(files.iter().any(|f| f.diff.contains("-alpha\n+ALPHA")));
}

#[test]
fn undo_refuses_to_clobber_later_work() {
    let p = project();
    let mut e = engine(&p);
    let first = apply(&mut e, json!([{"op": "replace", "path": "a.txt", "targetString": "alpha", "replacementString": "one"}]))
        .unwrap()
        .transaction_id
        .unwrap();
    let second = apply(&mut e, json!([{"op": "replace", "path": "a.txt", "targetString": "one", "replacementString": "two"}]))
        .unwrap()
        .transaction_id
        .unwrap();
    let info = e.undo(Some(&first), false).unwrap_err().to_info();
    assert_code(&info, ErrorCode::HashMismatch);
    assert_eq!(info.details.changed_by.as_deref(), Some(second.as_str()));
    assert!(info.message.contains(&second), "{}", info.message);
    assert_eq!(p.read("a.txt"), "two\n");
    // Outside ironbees, too.
    std::fs::write(p.path("a.txt"), "edited by hand\n").unwrap();
    let info = e.undo(None, false).unwrap_err().to_info();
    assert_code(&info, ErrorCode::HashMismatch);
    assert!(info.message.contains("outside ironbees"), "{}", info.message);
    assert_eq!(info.details.current_hash.as_deref(), Some(sha("edited by hand\n").as_str()));
    assert_eq!(p.read("a.txt"), "edited by hand\n");
}

#[test]
fn undo_and_redo_states_are_checked() {
    let p = project();
    let mut e = engine(&p);
    let info = e.undo(None, false).unwrap_err().to_info();
    assert_code(&info, ErrorCode::InvalidState);
    let info = e.undo(Some("ffffffffffff"), false).unwrap_err().to_info();
    assert_code(&info, ErrorCode::StateNotFound);
    let tx = three_file_edit(&mut e);
    let info = e.redo(Some(&tx), false).unwrap_err().to_info();
    assert_code(&info, ErrorCode::InvalidState);
    let undo = e.undo(Some(&tx), false).unwrap().transaction_id.unwrap();
    let info = e.undo(Some(&tx), false).unwrap_err().to_info();
    assert_code(&info, ErrorCode::InvalidState);
    assert!(info.message.contains("already undone"));
    let info = e.undo(Some(&undo), false).unwrap_err().to_info();
    assert_code(&info, ErrorCode::InvalidState);
    assert!(info.message.contains(&tx), "{}", info.message);
    // Redo refuses when the files are no longer as the undo left them.
    p.write("gone.txt", "recreated by hand\n");
    let info = e.redo(Some(&tx), false).unwrap_err().to_info();
    assert_code(&info, ErrorCode::HashMismatch);
    assert_eq!(info.path.as_deref(), Some("gone.txt"));
}

#[test]
fn history_is_bounded_and_unreferenced_versions_are_deleted() {
    let p = TempProject::new();
    p.write("f.txt", "v0\n");
    let mut e = engine_with(&p, edit::EngineOptions { history_limit: 3, ..Default::default() });
    let mut ids = Vec::new();
    for i in 1..=6 {
        let r = apply(
            &mut e,
            json!([{"op": "replace", "path": "f.txt", "targetString": format!("v{}", i - 1),
                    "replacementString": format!("v{i}")}]),
        )
        .unwrap();
        ids.push(r.transaction_id.unwrap());
    }
    let h = e.history(100).unwrap();
    assert_eq!(
        h.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
        [&ids[5], &ids[4], &ids[3]].map(|s| s.clone())
    );
    let info = e.undo(Some(&ids[0]), false).unwrap_err().to_info();
    assert_code(&info, ErrorCode::StateNotFound);
    // Versions v2..v6 are referenced (v2 as the "before" of the oldest kept edit).
    let blobs = std::fs::read_dir(p.path(".ironbees/edits/blobs")).unwrap().count();
    assert_eq!(blobs, 4);
    // Undo still works for what is kept.
    e.undo(None, false).unwrap();
    assert_eq!(p.read("f.txt"), "v5\n");
}

#[test]
fn history_byte_budget_keeps_the_newest() {
    let p = TempProject::new();
    p.write("big.txt", "x".repeat(4000));
    let mut e =
        engine_with(&p, edit::EngineOptions { history_max_bytes: 10_000, ..Default::default() });
    for i in 0..5 {
        apply(
            &mut e,
            json!([{"op": "create", "path": "big.txt", "overwrite": true,
                              "content": format!("{i}").repeat(4000)}]),
        )
        .unwrap();
    }
    let h = e.history(100).unwrap();
    assert!(h.len() < 5 && !h.is_empty(), "{}", h.len());
    let bytes: u64 = std::fs::read_dir(p.path(".ironbees/edits/blobs"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(bytes <= 10_000 + 8_000, "{bytes}");
    e.undo(None, false).unwrap();
    assert_eq!(p.read("big.txt"), "3".repeat(4000));
}
