//! Applying requests: what lands on disk, what the result says, all or nothing.

use protocol::{ErrorCode, FileChangeKind, TransactionState};
use serde_json::json;
use test_support::TempProject;

use super::*;

fn project() -> TempProject {
    TempProject::with_fixture(
        r#"
        //- src/app.py
        def greet(name):
            print("hello", name)
            return name

        def main():
            greet("world")
        //- src/util.py
        MAX = 10
        MIN = 0
        //- README.md
        # demo
        "#,
    )
}

#[test]
fn replace_writes_the_file_and_reports_diff_hash_and_lines() {
    let p = project();
    let mut e = engine(&p);
    let r = apply(
        &mut e,
        json!([{"op": "replace", "path": "src/app.py",
                "targetString": "print(\"hello\", name)", "replacementString": "print(\"hi\", name)"}]),
    )
    .unwrap();
    let text = p.read("src/app.py");
    assert!(text.contains("print(\"hi\", name)") && !text.contains("hello"));
    let f = &r.files[0];
    assert_eq!(f.kind, FileChangeKind::Modified);
    assert_eq!(f.new_hash.as_deref(), Some(sha(&text).as_str()));
    assert_eq!((f.lines_added, f.lines_removed), (1, 1));
    assert!(
        f.diff.contains("-    print(\"hello\", name)\n+    print(\"hi\", name)\n"),
        "{}",
        f.diff
    );
    assert_eq!(f.edits[0].line_range.unwrap().start, 2);
    assert_eq!(f.edits[0].new_line_range.unwrap().start, 2);
    let h = e.history(10).unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(Some(h[0].id.clone()), r.transaction_id);
    assert_eq!(h[0].state, TransactionState::Applied);
    assert_eq!(h[0].files, ["src/app.py"]);
    assert_eq!(h[0].description, "modify src/app.py");
}

#[test]
fn one_failing_edit_changes_no_file() {
    let p = project();
    let before = snapshot(p.root());
    let mut e = engine(&p);
    let err = fail(
        &mut e,
        json!({"description": "two files", "edits": [
            {"op": "replace", "path": "src/util.py", "targetString": "MAX = 10", "replacementString": "MAX = 20"},
            {"op": "create", "path": "new/file.txt", "content": "x"},
            {"op": "replace", "path": "src/app.py", "targetString": "not there", "replacementString": "y"}
        ]}),
    );
    assert_code(&err, ErrorCode::NoMatch);
    assert_eq!(err.details.edit_index, Some(2));
    assert_eq!(snapshot(p.root()), before);
    assert!(e.history(10).unwrap().is_empty());
    let journal = p.root().join(".ironbees/edits/journal");
    assert_eq!(std::fs::read_dir(journal).unwrap().count(), 0);
}

#[test]
fn dry_run_writes_nothing_and_predicts_the_real_run() {
    let p = project();
    let before = snapshot(p.root());
    let mut e = engine(&p);
    let edits = json!([
        {"op": "replace", "path": "src/util.py", "targetString": "MIN = 0", "replacementString": "MIN = -1"},
        {"op": "create", "path": "docs/new.md", "content": "new\n"},
        {"op": "rename", "path": "README.md", "newPath": "docs/README.md"},
    ]);
    let dry = apply(&mut e, json!({"edits": edits, "options": {"dryRun": true}})).unwrap();
    assert!(dry.dry_run && dry.transaction_id.is_none());
    assert_eq!(snapshot(p.root()), before);
    assert!(e.history(10).unwrap().is_empty());
    let real = apply(&mut e, json!({ "edits": edits })).unwrap();
    assert_eq!(dry.files, real.files);
    assert_eq!(p.read("docs/README.md"), "# demo\n");
    assert!(!p.path("README.md").exists());
    let kinds: Vec<_> = real.files.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [FileChangeKind::Modified, FileChangeKind::Created, FileChangeKind::Renamed]);
    assert!(real.files[2].diff.contains("rename from README.md\nrename to docs/README.md"));
}

#[test]
fn dry_run_diff_applies_with_git() {
    let p = project();
    let mut e = engine(&p);
    let dry = apply(
        &mut e,
        json!({"options": {"dryRun": true}, "edits": [
            {"op": "replace", "path": "src/app.py", "targetString": "def main():\n    greet(\"world\")\n",
             "replacementString": "def main():\n    greet(\"ironbees\")\n    greet(\"again\")\n"},
            {"op": "create", "path": "src/new.py", "content": "X = 1\n"},
            {"op": "delete", "path": "src/util.py"},
            {"op": "rename", "path": "README.md", "newPath": "doc/README.md"}
        ]}),
    )
    .unwrap();
    let patch: String = dry.files.iter().map(|f| f.diff.as_str()).collect();
    let patch_file = p.root().join(".ironbees/patch.diff");
    std::fs::write(&patch_file, &patch).unwrap();
    #[allow(clippy::disallowed_methods)] // git is the reference implementation of the format
    let out = std::process::Command::new("git")
        .args(["apply", "--check", "--verbose"])
        .arg(&patch_file)
        .current_dir(p.root())
        .output()
        .expect("git is installed (.ci/run installs it)");
    assert!(out.status.success(), "{}\n{patch}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn expected_hash_guards_against_stale_reads() {
    let p = project();
    let mut e = engine(&p);
    let current = sha(std::fs::read(p.path("src/util.py")).unwrap());
    let stale = sha("something else");
    let err = fail(
        &mut e,
        json!([{"op": "replace", "path": "src/util.py", "targetString": "MAX", "replacementString": "TOP",
                "expectedHash": stale}]),
    );
    assert_code(&err, ErrorCode::HashMismatch);
    assert_eq!(err.details.current_hash.as_deref(), Some(current.as_str()));
    assert_eq!(err.details.expected_hash.as_deref(), Some(stale.as_str()));
    assert_eq!(err.path.as_deref(), Some("src/util.py"));
    // The current hash works, spelled either way.
    let r = apply(
        &mut e,
        json!([{"op": "replace", "path": "src/util.py", "targetString": "MAX", "replacementString": "TOP",
                "expectedHash": format!("sha256:{}", current.to_uppercase())}]),
    )
    .unwrap();
    assert_eq!(e.file_hash("src/util.py").unwrap(), r.files[0].new_hash.clone().unwrap());
    let err = fail(&mut e, json!([{"op": "delete", "path": "src/util.py", "expectedHash": "abc"}]));
    assert_code(&err, ErrorCode::InvalidArgument);
}

#[test]
fn edits_in_one_file_refer_to_the_original_and_must_not_overlap() {
    let p = TempProject::new();
    p.write("a.txt", "one\ntwo\nthree\nfour\n");
    let mut e = engine(&p);
    // Line numbers of the second edit still refer to the file before the first.
    let r = apply(
        &mut e,
        json!([
            {"op": "replaceLines", "path": "a.txt", "lineRange": "1-2", "replacementString": "ONE\nONE-B\nTWO"},
            {"op": "replaceLines", "path": "a.txt", "lineRange": "4", "replacementString": "FOUR"},
            {"op": "insert", "path": "a.txt", "position": "after", "line": 3, "text": "three-b"},
        ]),
    )
    .unwrap();
    assert_eq!(p.read("a.txt"), "ONE\nONE-B\nTWO\nthree\nthree-b\nFOUR\n");
    let placed: Vec<_> =
        r.files[0].edits.iter().map(|e| e.new_line_range.unwrap().to_string()).collect();
    assert_eq!(placed, ["1-3", "6", "5"]);
    let before = p.read("a.txt");
    let err = fail(
        &mut e,
        json!([
            {"op": "replaceLines", "path": "a.txt", "lineRange": "1-3", "replacementString": "x"},
            {"op": "replace", "path": "a.txt", "targetString": "TWO", "replacementString": "2"},
        ]),
    );
    assert_code(&err, ErrorCode::InvalidArgument);
    assert!(err.message.contains("overlapping"), "{}", err.message);
    assert_eq!(p.read("a.txt"), before);
}

#[test]
fn insert_by_line_and_by_anchor() {
    let p = TempProject::new();
    p.write("a.py", "import os\n\ndef f():\n    return 1");
    let mut e = engine(&p);
    apply(
        &mut e,
        json!([
            {"op": "insert", "path": "a.py", "position": "after", "line": 0, "text": "#!/usr/bin/env python3"},
            {"op": "insert", "path": "a.py", "position": "before", "targetString": "def f():", "text": "@cached"},
            {"op": "insert", "path": "a.py", "position": "after", "line": 4, "text": "\ndef g():\n    return 2\n"},
        ]),
    )
    .unwrap();
    // The file had no final line break and still has none.
    assert_eq!(
        p.read("a.py"),
        "#!/usr/bin/env python3\nimport os\n\n@cached\ndef f():\n    return 1\n\ndef g():\n    return 2"
    );
    let err = fail(
        &mut e,
        json!([{"op": "insert", "path": "a.py", "position": "before", "line": 99, "text": "x"}]),
    );
    assert_code(&err, ErrorCode::InvalidArgument);
    assert!(err.message.contains("out of range"), "{}", err.message);
}

#[test]
fn create_delete_rename_and_their_conflicts() {
    let p = project();
    let mut e = engine(&p);
    let err = fail(&mut e, json!([{"op": "create", "path": "src/util.py", "content": "x"}]));
    assert_code(&err, ErrorCode::AlreadyExists);
    let err =
        fail(&mut e, json!([{"op": "rename", "path": "src/app.py", "newPath": "src/util.py"}]));
    assert_code(&err, ErrorCode::AlreadyExists);
    let err = fail(&mut e, json!([{"op": "delete", "path": "src/nope.py"}]));
    assert_code(&err, ErrorCode::NotFound);
    let err = fail(
        &mut e,
        json!([{"op": "create", "path": "n.txt", "content": "a"}, {"op": "create", "path": "./n.txt", "content": "b"}]),
    );
    assert_code(&err, ErrorCode::InvalidArgument);
    let err = fail(
        &mut e,
        json!([{"op": "delete", "path": "src/util.py"},
               {"op": "replace", "path": "src/util.py", "targetString": "MAX", "replacementString": "M"}]),
    );
    assert_code(&err, ErrorCode::InvalidArgument);

    // A rename with an edit of the content that moves, into a new directory.
    apply(
        &mut e,
        json!([{"op": "rename", "path": "src/util.py", "newPath": "lib/deep/util.py"},
               {"op": "replace", "path": "src/util.py", "targetString": "MAX = 10", "replacementString": "MAX = 99"},
               {"op": "create", "path": "src/util.py.bak", "content": "old"},
               {"op": "create", "path": "src/app.py", "content": "print(1)\n", "overwrite": true}]),
    )
    .unwrap();
    assert_eq!(p.read("lib/deep/util.py"), "MAX = 99\nMIN = 0\n");
    assert!(!p.path("src/util.py").exists());
    assert_eq!(p.read("src/app.py"), "print(1)\n");
    apply(&mut e, json!([{"op": "delete", "path": "lib/deep/util.py"}])).unwrap();
    assert!(!p.path("lib/deep/util.py").exists());
}

#[test]
fn a_no_op_edit_commits_nothing() {
    let p = project();
    let mut e = engine(&p);
    let r = apply(
        &mut e,
        json!([{"op": "replace", "path": "src/util.py", "targetString": "MAX = 10", "replacementString": "MAX = 10"}]),
    )
    .unwrap();
    assert!(r.transaction_id.is_none());
    assert_eq!(r.files[0].old_hash, r.files[0].new_hash);
    assert!(e.history(10).unwrap().is_empty());
}

#[test]
fn failed_check_rolls_back_and_reports_the_checks_code() {
    let p = project();
    let before = snapshot(p.root());
    let mut e = engine(&p);
    let mut seen = Vec::new();
    let err = e
        .apply_checked(
            &request(json!([
                {"op": "replace", "path": "src/app.py", "targetString": "return name", "replacementString": "return (name"},
                {"op": "create", "path": "gen/out.py", "content": "x = 1\n"},
            ])),
            &mut |changes| {
                // The files are on disk while the check runs.
                seen.push(std::fs::read_to_string(p.path("src/app.py")).unwrap());
                seen.push(changes.len().to_string());
                Err(edit::CheckFailure {
                    code: ErrorCode::SyntaxError,
                    message: "src/app.py:3: unclosed parenthesis".into(),
                })
            },
        )
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::SyntaxError);
    assert!(err.to_string().contains("rolled back") && err.to_string().contains("unclosed"));
    assert!(seen[0].contains("return (name"));
    assert_eq!(seen[1], "2");
    assert_eq!(snapshot(p.root()), before, "files and created directories are gone");
    assert!(e.history(10).unwrap().is_empty());
    // A passing check commits.
    let r = e
        .apply_checked(
            &request(json!([{"op": "create", "path": "gen/out.py", "content": "x = 1\n"}])),
            &mut |_| Ok(()),
        )
        .unwrap();
    assert!(r.transaction_id.is_some());
    assert_eq!(p.read("gen/out.py"), "x = 1\n");
}

#[test]
fn a_check_that_changes_files_keeps_its_changes_when_it_fails() {
    let p = project();
    let mut e = engine(&p);
    let err = e
        .apply_checked(
            &request(json!([
                {"op": "replace", "path": "src/util.py", "targetString": "MAX = 10", "replacementString": "MAX=10"},
                {"op": "replace", "path": "src/app.py", "targetString": "return name", "replacementString": "return name.upper()"},
            ])),
            &mut |_| {
                // A formatter rewrote one file, then the build failed.
                std::fs::write(p.path("src/util.py"), "MAX = 10  # formatted\nMIN = 0\n").unwrap();
                Err(edit::CheckFailure { code: ErrorCode::ToolExecutionFailed, message: "build failed".into() })
            },
        )
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("build failed") && msg.contains("src/util.py"), "{msg}");
    assert_eq!(
        p.read("src/util.py"),
        "MAX = 10  # formatted\nMIN = 0\n",
        "the formatter's work is kept"
    );
    assert!(p.read("src/app.py").contains("return name\n"), "the other file is rolled back");
    let saved = e.recovery().conflicts[0].saved_to.clone().unwrap();
    assert_eq!(std::fs::read_to_string(p.root().join(saved)).unwrap(), "MAX = 10\nMIN = 0\n");
}

#[test]
fn seed_shaped_request_with_target_and_inferred_ops() {
    let p = project();
    let mut e = engine(&p);
    apply(
        &mut e,
        json!({"target": "src/util.py", "description": "widen range", "edits": [
            {"targetString": "MAX = 10", "replacementString": "MAX = 100"},
            {"lineRange": "2", "replacementString": "MIN = -100"}
        ]}),
    )
    .unwrap();
    assert_eq!(p.read("src/util.py"), "MAX = 100\nMIN = -100\n");
    assert_eq!(e.history(1).unwrap()[0].description, "widen range");
}

/// A run's coder edits against its shadow overlay (issue 26): the plan reads the
/// overlay's versions instead of the disk, creates and deletes there, and the disk
/// stays as it was.
#[test]
fn a_preview_over_an_overlay_reads_the_overlay_and_writes_nothing() {
    let p = project();
    let mut e = engine(&p);
    let before = p.read("src/app.py");
    let mut overlay = edit::Overlay::new();
    overlay.insert("src/app.py".into(), Some(before.replace("hello", "hi").into_bytes()));
    overlay.insert("src/util.py".into(), None);
    let req = |edits: serde_json::Value| -> protocol::EditRequest {
        serde_json::from_value(json!({ "edits": edits })).unwrap()
    };
    // Text only the overlay has is found; the disk's is not.
    let r = e
        .preview_over(
            &req(json!([{"path": "src/app.py", "targetString": "print(\"hi\", name)",
                         "replacementString": "print(\"hey\", name)"}])),
            &overlay,
        )
        .unwrap();
    let after = String::from_utf8(r.files[0].after.clone().unwrap()).unwrap();
    assert!(after.contains("print(\"hey\", name)"), "{after}");
    assert_eq!(r.files[0].before.as_deref(), overlay["src/app.py"].as_deref());
    let err = e
        .preview_over(
            &req(json!([{"path": "src/app.py", "targetString": "print(\"hello\", name)",
                         "replacementString": "x"}])),
            &overlay,
        )
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NoMatch, "the disk's text is not the overlay's");
    // A file the overlay deleted can be created again; a new file's path is free.
    let r = e
        .preview_over(
            &req(json!([{"op": "create", "path": "src/util.py", "content": "MAX = 1\n"},
                        {"op": "create", "path": "src/new/mod.py", "content": "x = 1\n"}])),
            &overlay,
        )
        .unwrap();
    assert_eq!(r.result.files[0].kind, FileChangeKind::Created);
    assert_eq!(r.files[1].after.as_deref(), Some(&b"x = 1\n"[..]));
    // Nothing reached the disk.
    assert_eq!(p.read("src/app.py"), before);
    assert!(p.path("src/util.py").exists() && !p.path("src/new").exists());
    assert!(e.history(10).unwrap().is_empty());
}

/// `change` previews and then applies the one plan (issue 36): what is committed
/// is what was previewed, and the files are not read and matched again.
#[test]
fn a_prepared_change_commits_the_previewed_contents() {
    let p = project();
    let mut e = engine(&p);
    let planned = e
        .prepare(&request(json!([
            {"path": "src/util.py", "targetString": "MAX = 10", "replacementString": "MAX = 11"},
            {"path": "src/app.py", "targetString": "hello", "replacementString": "hi"},
        ])))
        .unwrap();
    let previewed: Vec<_> = planned.preview.files.iter().map(|v| v.after.clone()).collect();
    assert!(planned.preview.result.dry_run && planned.preview.result.transaction_id.is_none());
    let r = e.commit(planned, &mut |_| Ok(())).unwrap();
    assert!(!r.dry_run && r.transaction_id.is_some());
    assert_eq!(
        previewed,
        vec![Some(p.read("src/util.py").into_bytes()), Some(p.read("src/app.py").into_bytes())]
    );
}

/// A file changed between the preview and the apply: the plan is stale, so the
/// whole transaction is refused with HASH_MISMATCH before anything is written,
/// and there is nothing in the history.
#[test]
fn a_file_changed_after_the_preview_refuses_the_commit_and_writes_nothing() {
    for changed in ["src/app.py", "src/util.py"] {
        let p = project();
        let mut e = engine(&p);
        let planned = e
            .prepare(&request(json!([
                {"path": "src/util.py", "targetString": "MAX = 10", "replacementString": "MAX = 11"},
                {"path": "src/app.py", "targetString": "hello", "replacementString": "hi"},
            ])))
            .unwrap();
        let other = format!("{}# edited meanwhile\n", p.read(changed));
        p.write(changed, &other);
        let before = snapshot(p.root());
        let err = e.commit(planned, &mut |_| Ok(())).unwrap_err().to_info();
        assert_code(&err, ErrorCode::HashMismatch);
        assert_eq!(err.path.as_deref(), Some(changed), "{err:?}");
        assert_eq!(snapshot(p.root()), before, "nothing written ({changed} changed)");
        assert!(e.history(10).unwrap().is_empty());
    }
}

/// The commit hook hears every committed transaction once (edit, undo, redo),
/// and nothing of a dry run or a refused change.
#[test]
fn the_commit_hook_announces_each_committed_transaction_once() {
    let p = project();
    let mut e = engine(&p);
    let (tx, rx) = std::sync::mpsc::channel();
    e.set_commit_hook(Box::new(move |c| tx.send(c.clone()).unwrap()));
    let edit = json!([{"path": "src/util.py", "targetString": "MAX = 10", "replacementString": "MAX = 11"}]);
    e.apply(&request(json!({"edits": edit, "options": {"dryRun": true}}))).unwrap();
    fail(
        &mut e,
        json!([{"path": "src/util.py", "targetString": "MAX = 10",
        "replacementString": "MAX = 11", "expectedHash": sha("other")}]),
    );
    assert!(rx.try_recv().is_err(), "a dry run and a refused change commit nothing");
    let id = apply(&mut e, json!({"description": "raise MAX", "edits": edit}))
        .unwrap()
        .transaction_id
        .unwrap();
    let undo = e.undo(Some(&id), false).unwrap().transaction_id.unwrap();
    let got: Vec<_> = rx.try_iter().collect();
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(
        (got[0].transaction_id.as_str(), got[0].kind, got[0].description.as_str()),
        (id.as_str(), protocol::TransactionKind::Edit, "raise MAX")
    );
    assert_eq!(got[0].files, vec!["src/util.py".to_owned()]);
    assert_eq!(
        (got[1].transaction_id.as_str(), got[1].kind, got[1].target.as_deref()),
        (undo.as_str(), protocol::TransactionKind::Undo, Some(id.as_str()))
    );
}
