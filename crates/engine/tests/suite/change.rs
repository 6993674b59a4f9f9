//! `change` applied with its post-edit syntax check: an edit that breaks the
//! syntax is rolled back (autoRollback, the default) or kept with a critical
//! warning (autoRollback false) and then undoable.

use protocol::{ChangeRequest, ErrorCode, ManageRequest};
use serde_json::json;
use test_support::TempProject;

use super::{call, open};

const APP: &str = "def handle(request):\n    return respond(request, 200)\n\n\ndef respond(r, s):\n    return (r, s)\n";
const UTIL: &str = "def helper():\n    return 1\n";

fn project() -> TempProject {
    let p = TempProject::new();
    p.write("src/app.py", APP);
    p.write("src/util.py", UTIL);
    p
}

/// Two files in one transaction; the edit of app.py leaves an unclosed paren.
fn breaking(auto_rollback: Option<bool>) -> ChangeRequest {
    let mut options = json!({"dryRun": false});
    if let Some(a) = auto_rollback {
        options["autoRollback"] = json!(a);
    }
    serde_json::from_value(json!({
        "description": "break it",
        "edits": [
            {"path": "src/util.py", "targetString": "return 1", "replacementString": "return 2"},
            {"path": "src/app.py", "targetString": "respond(request, 200)",
             "replacementString": "respond(request, 200"},
        ],
        "options": options,
    }))
    .unwrap()
}

#[test]
fn a_syntax_error_rolls_the_whole_transaction_back() {
    let p = project();
    let ws = open(&p);
    let e = call(|c| ws.change(&breaking(None), c)).unwrap_err();
    let info = e.to_info();
    assert_eq!(info.code, ErrorCode::SyntaxError, "{info:?}");
    assert!(info.message.contains("src/app.py"), "{}", info.message);
    // Both files restored byte for byte (the valid edit of util.py too).
    assert_eq!(p.read("src/app.py"), APP);
    assert_eq!(p.read("src/util.py"), UTIL);
    // Nothing to undo: the transaction never committed as applied.
    let h: ManageRequest = serde_json::from_value(json!({"command": "history"})).unwrap();
    let h = call(|c| ws.manage(&h, c)).unwrap();
    assert!(
        h.history.iter().all(|t| t.state != protocol::TransactionState::Applied),
        "{:?}",
        h.history
    );
    // The recovery tells the model what happened.
    let g = engine::error_guidance(&info, protocol::Operation::Change, &json!({}));
    assert!(g.recovery.unwrap().strategy.contains("rolled back"));
}

#[test]
fn without_auto_rollback_the_broken_edit_stays_flagged_and_undo_restores() {
    let p = project();
    let ws = open(&p);
    let r = call(|c| ws.change(&breaking(Some(false)), c)).unwrap();
    assert!(!r.success, "a failed check is not a success");
    let check = r.check.as_ref().unwrap();
    assert!(!check.passed && !check.rolled_back, "{check:?}");
    assert!(p.read("src/app.py").contains("respond(request, 200\n"));
    assert!(
        r.guidance.warnings.iter().any(|w| w.code == "SYNTAX_ERROR"),
        "{:?}",
        r.guidance.warnings
    );
    let tx = r.transaction_id.unwrap();
    let undo: ManageRequest = serde_json::from_value(json!({"command": "undo", "id": tx})).unwrap();
    call(|c| ws.manage(&undo, c)).unwrap();
    assert_eq!(p.read("src/app.py"), APP);
    assert_eq!(p.read("src/util.py"), UTIL);
}

#[test]
fn a_file_broken_before_the_edit_does_not_block_an_unrelated_fix() {
    // The check compares syntax errors before and after: pre-existing ones are
    // not the edit's fault.
    let p = project();
    p.write("src/util.py", "def helper(:\n    return 1\n");
    let ws = open(&p);
    let req: ChangeRequest = serde_json::from_value(json!({
        "edits": [{"path": "src/util.py", "targetString": "return 1", "replacementString": "return 3"}],
        "options": {"dryRun": false},
    }))
    .unwrap();
    let r = call(|c| ws.change(&req, c)).unwrap();
    assert!(r.success);
    assert_eq!(p.read("src/util.py"), "def helper(:\n    return 3\n");
}

/// Every way to undo or redo (the `undo`/`redo` tools, `manage`) leaves the index
/// as current as `change` does: a process that ends after it (the CLI) must not
/// leave `status` asking for an `index` (issue 32.8).
#[test]
fn undo_and_redo_refresh_the_index_as_change_does() {
    // In this order, each reverses the one before. (tool, arguments, util.py after)
    let cases: &[(&str, serde_json::Value, &str)] = &[
        ("undo", json!({}), "return 1"),
        ("redo", json!({}), "return 2"),
        ("manage", json!({"command": "undo"}), "return 1"),
        ("manage", json!({"command": "redo"}), "return 2"),
    ];
    let p = project();
    let ws = open(&p);
    let registry = engine::Registry::new();
    let edit: ChangeRequest = serde_json::from_value(json!({
        "edits": [{"path": "src/util.py", "targetString": "return 1", "replacementString": "return 2"}],
        "options": {"dryRun": false},
    }))
    .unwrap();
    call(|c| ws.change(&edit, c)).unwrap();
    for (tool, args, now) in cases {
        call(|c| registry.call(&ws, c, tool, args.clone()))
            .unwrap_or_else(|e| panic!("{tool} {args}: {e:?}"));
        assert!(p.read("src/util.py").contains(now), "{tool} {args}");
        let status = call(|c| ws.status(&protocol::StatusRequest {}, c)).unwrap();
        let stale = status.stale.unwrap();
        assert!(stale.is_fresh(), "{tool} {args} left the index behind: {stale:?}");
    }
}

/// The engine announces committed transactions (issue 36): a subscriber hears
/// one announcement per committed change, with its id and files, and nothing of
/// a dry run or of a change refused with HASH_MISMATCH.
#[test]
fn subscribers_hear_each_committed_transaction_once() {
    let p = project();
    let ws = open(&p);
    let commits = ws.subscribe_commits();
    let change = |options: serde_json::Value, expected_hash: Option<String>| -> ChangeRequest {
        let mut util = json!({"path": "src/util.py", "targetString": "return 1",
                              "replacementString": "return 2"});
        if let Some(h) = expected_hash {
            util["expectedHash"] = json!(h);
        }
        serde_json::from_value(json!({
            "description": "two files",
            "edits": [util, {"path": "src/app.py", "targetString": "200",
                             "replacementString": "201"}],
            "options": options,
        }))
        .unwrap()
    };
    call(|c| ws.change(&change(json!({"dryRun": true}), None), c)).unwrap();
    let e = call(|c| ws.change(&change(json!({"dryRun": false}), Some("0".repeat(64))), c))
        .unwrap_err();
    assert_eq!(e.to_info().code, ErrorCode::HashMismatch);
    let e = call(|c| ws.change(&breaking(None), c)).unwrap_err();
    assert_eq!(e.to_info().code, ErrorCode::SyntaxError);
    assert!(commits.try_recv().is_err(), "nothing committed, nothing announced");

    let r = call(|c| ws.change(&change(json!({"dryRun": false}), None), c)).unwrap();
    let got: Vec<_> = commits.try_iter().collect();
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(Some(&got[0].transaction_id), r.transaction_id.as_ref());
    assert_eq!(got[0].files, vec!["src/util.py".to_owned(), "src/app.py".to_owned()]);
    assert_eq!(got[0].description, "two files");
    assert_eq!(got[0].kind, protocol::TransactionKind::Edit);

    // An undo commits too, and a second subscriber hears it as well.
    let late = ws.subscribe_commits();
    let undo: ManageRequest =
        serde_json::from_value(json!({"command": "undo", "id": r.transaction_id})).unwrap();
    call(|c| ws.manage(&undo, c)).unwrap();
    for rx in [&commits, &late] {
        let got: Vec<_> = rx.try_iter().collect();
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].kind, protocol::TransactionKind::Undo);
        assert_eq!(got[0].target, r.transaction_id);
    }
}
