//! Bad input: each case gets its code, and nothing changes on disk.

use protocol::ErrorCode;
use serde_json::json;
use test_support::TempProject;

use super::*;

#[test]
fn every_bad_input_has_its_code_and_changes_nothing() {
    let p = TempProject::new();
    p.write("ok.txt", "fine\nfine again\n");
    p.write("latin1.txt", b"caf\xe9\n");
    p.write("bin.dat", b"\x00\x01\x02");
    p.write("big.txt", vec![b'x'; 2048]);
    p.write(".git/config", "[core]\n");
    std::fs::create_dir_all(p.path("adir")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.txt"), "victim").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), p.path("escape")).unwrap();
    let before = snapshot(p.root());
    let mut e = engine_with(&p, edit::EngineOptions { max_file_size: 1024, ..Default::default() });
    let replace = |path: &str, target: &str| json!([{"op": "replace", "path": path, "targetString": target, "replacementString": "X"}]);
    let cases = [
        (replace("ok.txt", ""), ErrorCode::InvalidArgument, "empty"),
        (replace("latin1.txt", "caf"), ErrorCode::InvalidUtf8, "UTF-8"),
        (replace("bin.dat", "a"), ErrorCode::BinaryFile, "binary"),
        (replace("big.txt", "x"), ErrorCode::FileTooLarge, "limit"),
        (replace("missing.txt", "x"), ErrorCode::NotFound, "no such file"),
        (replace("adir", "x"), ErrorCode::InvalidArgument, "directory"),
        (replace("../outside.txt", "x"), ErrorCode::PathOutsideRoot, ".."),
        (replace("/etc/hostname", "x"), ErrorCode::PathOutsideRoot, "root"),
        (replace(".git/config", "core"), ErrorCode::PathOutsideRoot, "git"),
        (replace(".ironbees/edits/history.db", "x"), ErrorCode::PathOutsideRoot, "ironbees"),
        (replace("ok.txt", "fine"), ErrorCode::AmbiguousMatch, "2 times"),
        (replace("ok.txt", "nothing like it"), ErrorCode::NoMatch, "not found"),
        (json!([]), ErrorCode::InvalidArgument, "no edits"),
        (
            json!([{"op": "replace", "targetString": "a", "replacementString": "b"}]),
            ErrorCode::InvalidArgument,
            "no path",
        ),
        (
            json!([{"op": "replace", "path": "ok.txt", "targetString": "fine", "replacementString": "b", "lineRange": "1-9"}]),
            ErrorCode::InvalidArgument,
            "past the end",
        ),
        (
            json!([{"op": "replace", "path": "ok.txt", "targetString": "fine", "replacementString": "b", "expectedOccurrences": 0}]),
            ErrorCode::InvalidArgument,
            "at least 1",
        ),
        (
            json!([{"op": "create", "path": "ok.txt/child", "content": "b"}]),
            ErrorCode::InvalidArgument,
            "not a directory",
        ),
    ];
    for (req, code, needle) in cases {
        let info = fail(&mut e, req.clone());
        assert_eq!(info.code, code, "{req}: {info:#?}");
        assert!(info.message.contains(needle), "{req}: {:?} lacks {needle:?}", info.message);
    }
    #[cfg(unix)]
    {
        let info = fail(&mut e, replace("escape/victim.txt", "victim"));
        assert_code(&info, ErrorCode::PathOutsideRoot);
        let info =
            fail(&mut e, json!([{"op": "create", "path": "escape/new.txt", "content": "x"}]));
        assert_code(&info, ErrorCode::PathOutsideRoot);
        assert_eq!(std::fs::read_to_string(outside.path().join("victim.txt")).unwrap(), "victim");
        assert!(!outside.path().join("new.txt").exists());
    }
    assert_eq!(snapshot(p.root()), before);
    assert!(e.history(10).unwrap().is_empty());
}

#[test]
fn ambiguous_and_missing_matches_carry_candidates() {
    let p = TempProject::new();
    p.write(
        "a.rs",
        "fn a() {\n    let x = 1;\n}\n\nfn b() {\n    let x = 1;\n}\n\nfn c() {\n    let y = compute(2);\n}\n",
    );
    let mut e = engine(&p);
    let info = fail(
        &mut e,
        json!([{"op": "replace", "path": "a.rs", "targetString": "let x = 1;", "replacementString": "let x = 2;"}]),
    );
    assert_code(&info, ErrorCode::AmbiguousMatch);
    let ranges: Vec<_> =
        info.details.candidates.iter().map(|c| (c.line_range.start, c.preview.clone())).collect();
    assert_eq!(ranges, [(2, "    let x = 1;\n".to_owned()), (6, "    let x = 1;\n".to_owned())]);
    // The line range picks one.
    apply(
        &mut e,
        json!([{"op": "replace", "path": "a.rs", "targetString": "let x = 1;", "replacementString": "let x = 2;", "lineRange": "5-7"}]),
    )
    .unwrap();
    assert!(p.read("a.rs").contains("fn b() {\n    let x = 2;"));

    let info = fail(
        &mut e,
        json!([{"op": "replace", "path": "a.rs", "targetString": "let y = compute(3);", "replacementString": "z"}]),
    );
    assert_code(&info, ErrorCode::NoMatch);
    let best = &info.details.candidates[0];
    assert_eq!(best.line_range.start, 10);
    assert!(best.preview.contains("compute(2)"));
    assert!(best.similarity.unwrap() > 0.5);
}

#[test]
fn damaged_engine_state_is_refused_not_guessed() {
    let p = TempProject::new();
    p.write("a.txt", "a\n");
    drop(engine(&p));
    // A journal that does not parse: what was in flight is unknown.
    p.write(".ironbees/edits/journal/0123456789ab.json", "{ torn");
    let err = Engine::open(p.root(), Default::default()).err().expect("refused");
    assert_eq!(err.code(), ErrorCode::Io);
    assert!(err.to_string().contains("delete this file to continue"), "{err}");
    std::fs::remove_file(p.path(".ironbees/edits/journal/0123456789ab.json")).unwrap();
    drop(engine(&p));
    // A history database that is not one.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(p.path(&format!(".ironbees/edits/history.db{suffix}")));
    }
    p.write(".ironbees/edits/history.db", vec![0x5a; 8192]);
    let err = Engine::open(p.root(), Default::default()).err().expect("refused");
    assert!(err.to_string().contains("moved aside"), "{err}");
    assert_eq!(p.read("a.txt"), "a\n");
}
