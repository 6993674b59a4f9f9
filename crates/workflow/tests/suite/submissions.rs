//! Runs driven by submissions: created without being executed, driven by any
//! runner of their kind (another process's too), followed by subscribers from a
//! sequence number, and named by an id prefix or a `stateId`.

use std::{sync::Arc, time::Duration};

use protocol::{RunEventKind, RunStatus};
use serde_json::{Value, json};
use workflow::{Error, Graph, RunOptions, Runner};

use super::{Task, ask, line, names, shared, store, visit};

fn asking() -> Graph<Task> {
    let mut g = Graph::new();
    g.add_node("A", visit("A"))
        .add_node("ASK", ask("ASK"))
        .add_edge("A", "ASK")
        .add_edge("ASK", workflow::END)
        .set_entry("A");
    g
}

#[test]
fn a_created_run_is_queued_until_a_runner_of_another_store_handle_drives_it() {
    let dir = tempfile::tempdir().unwrap();
    let creator = Runner::new(shared(line()), store(dir.path())).with_kind("job");
    let created =
        creator.create(Some("q1"), "ignored", Task::default(), json!({"who": "ci"})).unwrap();
    assert_eq!(created.status, RunStatus::Queued);
    assert_eq!(created.kind, "job", "the runner's kind wins over the caller's word");
    assert_eq!(created.metadata, json!({"who": "ci"}));
    // Another process (here: another store handle) picks it up.
    let worker = Runner::new(shared(line()), store(dir.path())).with_kind("job");
    let report = worker.resume("q1", None).unwrap();
    assert_eq!(report.status, RunStatus::Succeeded);
    assert_eq!(names(&report.state.visited), ["A", "B", "C"]);
    let kinds: Vec<&str> = worker
        .events("q1", 0)
        .unwrap()
        .iter()
        .map(|e| match &e.kind {
            RunEventKind::RunStarted { .. } => "started",
            RunEventKind::RunResumed { .. } => "resumed",
            RunEventKind::RunFinished { .. } => "finished",
            _ => "",
        })
        .filter(|k| !k.is_empty())
        .collect();
    assert_eq!(kinds, ["started", "finished"], "a queued run's first execution is no resume");
}

#[test]
fn a_runner_refuses_to_drive_or_cancel_a_run_of_another_kind() {
    let dir = tempfile::tempdir().unwrap();
    let pipelines = Runner::new(shared(asking()), store(dir.path())).with_kind("pipeline");
    pipelines.start(Some("p1"), "pipeline", Task::default(), RunOptions::default()).unwrap();
    let agents = Runner::new(shared(asking()), store(dir.path())).with_kind("agent");
    for result in [agents.resume("p1", Some(json!(1))).map(|_| ()), agents.cancel("p1").map(|_| ())]
    {
        match result {
            Err(Error::InvalidState { message, .. }) => {
                assert!(message.contains("it is a pipeline run"), "{message}")
            }
            other => panic!("expected InvalidState, got {other:?}"),
        }
    }
    assert!(matches!(
        pipelines.state("p1").unwrap().unwrap().0.meta.status,
        RunStatus::Waiting { .. }
    ));
}

#[test]
fn runs_are_named_by_id_unique_prefix_or_state_id() {
    let dir = tempfile::tempdir().unwrap();
    let r = Runner::new(shared(line()), store(dir.path()));
    for id in ["abc-1", "abd-2"] {
        r.start(Some(id), "t", Task::default(), RunOptions::default()).unwrap();
    }
    assert_eq!(r.resolve("abc").unwrap(), "abc-1");
    assert_eq!(r.resolve("abd-2").unwrap(), "abd-2");
    assert_eq!(r.resolve("abc-1-3").unwrap(), "abc-1", "a checkpoint's stateId");
    match r.resolve("ab") {
        Err(e @ Error::Ambiguous { .. }) => {
            assert_eq!(
                e.to_string(),
                "\"ab\" names several runs: abc-1, abd-2; give more of the id"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(r.resolve("zz"), Err(Error::RunNotFound { .. })));
}

#[test]
fn a_subscriber_gets_the_stored_events_then_the_new_ones_from_another_thread() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Runner::new(shared(asking()), store(dir.path())));
    r.start(Some("s1"), "t", Task::default(), RunOptions::default()).unwrap();
    let stored = r.events("s1", 0).unwrap();
    let mut sub = r.subscribe("s1", 2);
    let first = sub.next_batch(Duration::from_millis(10)).unwrap();
    assert_eq!(first, stored[2..].to_vec(), "replayed after seq 2");
    assert!(sub.next_batch(Duration::from_millis(50)).unwrap().is_empty(), "nothing new yet");
    // Another thread answers the gate; the subscriber wakes with what it wrote.
    let answering = {
        let r = r.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            r.resume("s1", Some(Value::from(7))).unwrap()
        })
    };
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|e: &protocol::RunEvent| matches!(e.kind, RunEventKind::RunFinished { .. }))
    {
        let batch = sub.next_batch(Duration::from_secs(10)).unwrap();
        assert!(!batch.is_empty(), "the run's new events arrive");
        seen.extend(batch);
    }
    assert_eq!(answering.join().unwrap().status, RunStatus::Succeeded);
    let all = r.events("s1", 0).unwrap();
    assert_eq!(seen, all[stored.len()..].to_vec(), "nothing missed, nothing repeated");
    assert_eq!(sub.cursor(), all.last().unwrap().seq);
}

#[test]
fn a_subscriber_in_another_process_sees_events_by_polling_the_store() {
    let dir = tempfile::tempdir().unwrap();
    // Two store handles and two runners with their own hubs: what one writes
    // reaches the other's subscriber only through the store.
    let writer = Runner::new(shared(asking()), store(dir.path()));
    writer.start(Some("x1"), "t", Task::default(), RunOptions::default()).unwrap();
    let reader = Runner::new(shared(asking()), store(dir.path()));
    let mut sub = reader.subscribe("x1", writer.events("x1", 0).unwrap().len() as u64);
    writer.resume("x1", Some(json!(1))).unwrap();
    let batch = sub.next_batch(Duration::from_secs(5)).unwrap();
    assert!(matches!(batch[0].kind, RunEventKind::RunResumed { .. }), "{batch:?}");
}
