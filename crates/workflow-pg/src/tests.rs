//! The store against a real PostgreSQL server: the workflow engine's crash test
//! (SIGKILL at every crash point, then resume), leases and the work queue.

use std::{path::Path, sync::Arc, time::Duration};

use serde_json::json;
use workflow::{CheckpointStore, Error};

use crate::{PgOptions, PgStore};

/// The store of the crash test's run under `root`: the server's URL is in
/// `root/../pg-url`, each root has a schema of its own, and leases are short so
/// that a killed child's run is soon free.
fn crash_store(root: &Path) -> Arc<dyn CheckpointStore> {
    let url = std::fs::read_to_string(root.parent().unwrap().join("pg-url")).unwrap();
    let name = root.file_name().unwrap().to_string_lossy().to_ascii_lowercase();
    let schema = format!("crash_{}", name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
    let options = PgOptions { lease: Duration::from_millis(300), schema: Some(schema), pool: 2 };
    Arc::new(PgStore::connect(url.trim(), options).unwrap())
}

#[test]
#[ignore = "the crash test's child process; does nothing without its variables"]
fn crash_child() {
    workflow::crash_test::child(crash_store);
}

#[test]
fn the_workflow_crash_test_passes_against_postgres() {
    if !test_support::postgres::available("the PostgreSQL crash test") {
        return;
    }
    let pg = test_support::postgres::PgServer::start();
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(scratch.path().join("pg-url"), pg.url()).unwrap();
    workflow::crash_test::sigkill_at_every_crash_point(
        crash_store,
        "tests::crash_child",
        scratch.path(),
    );
}

#[test]
fn leases_fence_appends_and_jobs_are_claimed_once() {
    if !test_support::postgres::available("the PostgreSQL lease test") {
        return;
    }
    let pg = test_support::postgres::PgServer::start();
    let options = PgOptions { lease: Duration::from_millis(300), ..PgOptions::default() };
    let a = PgStore::connect(&pg.url(), options.clone()).unwrap();
    let b = PgStore::connect(&pg.url(), options).unwrap();

    // A run lease: one holder at a time, renewed while held, free once dropped.
    let lock = a.try_lock_run("r1").unwrap();
    assert!(matches!(b.try_lock_run("r1"), Err(Error::Busy { .. })));
    std::thread::sleep(Duration::from_millis(700)); // over two leases: the heartbeat keeps it
    assert!(matches!(b.try_lock_run("r1"), Err(Error::Busy { .. })));
    // B cannot write into a run A holds (fenced), whatever it tries.
    let err = b.record_effect("r1", "k", &json!(1)).unwrap_err();
    assert!(matches!(err, Error::Busy { .. }), "{err}");
    drop(lock);
    let _b_lock = b.try_lock_run("r1").unwrap();

    // Jobs: each claimed once; a released one comes back; a claim outlives
    // nothing but its holder.
    let j1 = a.enqueue("r1", Some(&json!({"approved": true})), Some(3)).unwrap();
    let j2 = a.enqueue("r2", None, None).unwrap();
    let first = a.claim_job().unwrap().unwrap();
    let second = b.claim_job().unwrap().unwrap();
    assert_eq!((first.id, second.id), (j1, j2));
    assert_eq!(first.input, Some(json!({"approved": true})));
    assert_eq!(first.answers, Some(3));
    assert!(a.claim_job().unwrap().is_none());
    std::thread::sleep(Duration::from_millis(700));
    assert!(b.claim_job().unwrap().is_none(), "a live holder's claims are renewed");
    a.release_job(j1, Duration::ZERO).unwrap();
    let again = b.claim_job().unwrap().unwrap();
    assert_eq!((again.id, again.attempts), (j1, 2));
    b.finish_job(j1).unwrap();
    // A holder that disappears (its store dropped, as a killed process's
    // heartbeat stops) loses its claim when the lease runs out.
    drop(b);
    std::thread::sleep(Duration::from_millis(600));
    let taken = a.claim_job().unwrap().unwrap();
    assert_eq!(taken.id, j2);
    assert_eq!(a.jobs().unwrap().len(), 1);
}
