//! One writer at a time per project.

use std::{sync::mpsc, time::Duration};

use protocol::ErrorCode;
use serde_json::json;
use test_support::TempProject;

use super::*;

#[test]
fn a_second_writer_waits_then_fails_with_busy_and_succeeds_later() {
    let p = TempProject::new();
    p.write("a.txt", "a\n");
    p.write("b.txt", "b\n");
    let root = p.root().to_owned();
    let (holding_tx, holding_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let first = std::thread::spawn(move || {
        let mut e = Engine::open(&root, EngineOptions::default()).unwrap();
        e.apply_checked(
            &request(json!([{"op": "replace", "path": "a.txt", "targetString": "a", "replacementString": "A"}])),
            &mut |_| {
                // Hold the lock (a long build, say) until the main thread has tried.
                holding_tx.send(()).unwrap();
                release_rx.recv().unwrap();
                Ok(())
            },
        )
        .unwrap()
    });
    holding_rx.recv().unwrap();
    let opts = EngineOptions { lock_timeout: Duration::from_millis(200), ..Default::default() };
    // Opening does not wait, and leaves the running edit's journal alone; readers
    // and dry runs work meanwhile (they see the files as they are now).
    let mut second = engine_with(&p, opts.clone());
    assert!(second.recovery().is_empty());
    assert_eq!(second.history(10).unwrap().len(), 0);
    let dry = second
        .apply(&request(json!({"options": {"dryRun": true}, "edits": [
            {"op": "replace", "path": "b.txt", "targetString": "b", "replacementString": "B"}]})))
        .unwrap();
    assert!(dry.dry_run);
    // A second writer waits, then gives up with BUSY naming the holder.
    let err = apply(
        &mut second,
        json!([{"op": "replace", "path": "b.txt", "targetString": "b", "replacementString": "B"}]),
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Busy);
    assert!(err.to_string().contains(&format!("pid {}", std::process::id())), "{err}");
    assert_eq!(p.read("b.txt"), "b\n");
    let err = second.undo(None, false).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Busy);
    release_tx.send(()).unwrap();
    let r = first.join().unwrap();
    assert!(r.transaction_id.is_some());
    let mut e = engine_with(&p, opts);
    assert!(e.recovery().is_empty(), "{:?}", e.recovery());
    apply(
        &mut e,
        json!([{"op": "replace", "path": "b.txt", "targetString": "b", "replacementString": "B"}]),
    )
    .unwrap();
    assert_eq!((p.read("a.txt"), p.read("b.txt")), ("A\n".to_owned(), "B\n".to_owned()));
}

/// Servers keep one engine behind a mutex and use it from worker threads.
#[test]
fn engine_is_send() {
    fn send<T: Send>() {}
    send::<Engine>();
    send::<edit::Error>();
}
