//! A failing node fails the run at that node (its code kept); retryable errors
//! are retried; a panic is a failure; resume runs the failed node again.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

use protocol::{RunEventKind, RunStatus};
use workflow::{END, Graph, NodeContext, NodeError, NodeOutcome, RunOptions, Runner};

use super::{Task, names, shared, store, visit};

/// A -> FLAKY -> END, where FLAKY fails its first `fails` runs with `err`.
fn flaky(fails: u32, err: NodeError) -> (Graph<Task>, Arc<AtomicU32>) {
    let runs = Arc::new(AtomicU32::new(0));
    let r = runs.clone();
    let mut g = Graph::new();
    g.add_node("A", visit("A"))
        .add_node("FLAKY", move |mut s: Task, _: &mut NodeContext<'_>| {
            if r.fetch_add(1, Ordering::SeqCst) < fails {
                return Err(err.clone());
            }
            s.visited.push("FLAKY".into());
            Ok(NodeOutcome::Continue(s))
        })
        .add_edge("A", "FLAKY")
        .add_edge("FLAKY", END)
        .set_entry("A");
    (g, runs)
}

fn quick() -> RunOptions {
    RunOptions { retry_backoff: Duration::from_millis(1), ..Default::default() }
}

#[test]
fn a_failed_node_fails_the_run_there_and_resume_runs_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let (g, runs) = flaky(1, NodeError::new("TESTS_FAILED", "3 tests failed"));
    let r = Runner::new(shared(g), store(dir.path()));
    let report = r.start(Some("f"), "test", Task::default(), quick()).unwrap();
    assert_eq!(
        report.status,
        RunStatus::Failed { code: "TESTS_FAILED".into(), message: "3 tests failed".into() }
    );
    assert_eq!(report.checkpoint.node, "FLAKY");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "not retryable: not retried");
    let report = r.resume("f", None).unwrap();
    assert_eq!(report.status, RunStatus::Succeeded);
    assert_eq!(names(&report.state.visited), ["A", "FLAKY"], "A did not run again");
}

#[test]
fn retryable_errors_are_retried_up_to_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (g, runs) = flaky(2, NodeError::retryable("RATE_LIMITED", "slow down"));
    let r = Runner::new(shared(g), store(dir.path()));
    let report = r.start(Some("ok"), "test", Task::default(), quick()).unwrap();
    assert_eq!(report.status, RunStatus::Succeeded);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    let retries: Vec<(u32, bool)> = r
        .events("ok", 0)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.kind {
            RunEventKind::NodeFailed { attempt, retrying, .. } => Some((attempt, retrying)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, [(1, true), (2, true)]);

    let (g, runs) = flaky(5, NodeError::retryable("RATE_LIMITED", "slow down"));
    let r = Runner::new(shared(g), store(dir.path()));
    let report = r.start(Some("no"), "test", Task::default(), quick()).unwrap();
    assert_eq!(report.status.name(), "failed");
    assert_eq!(runs.load(Ordering::SeqCst), 3, "the first run and node_retries (2) more");
}

#[test]
fn a_panicking_node_fails_the_run_instead_of_the_caller() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = Graph::new();
    g.add_node(
        "BOOM",
        |_: Task, _: &mut NodeContext<'_>| -> Result<NodeOutcome<Task>, NodeError> {
            panic!("index out of bounds")
        },
    )
    .add_edge("BOOM", END)
    .set_entry("BOOM");
    let r = Runner::new(shared(g), store(dir.path()));
    let report = r.start(Some("p"), "test", Task::default(), RunOptions::default()).unwrap();
    let RunStatus::Failed { code, message } = &report.status else { panic!("{:?}", report.status) };
    assert_eq!(code, "INTERNAL");
    assert!(message.contains("BOOM panicked: index out of bounds"), "{message}");
    // The lock was released: the run can be resumed (and fails again).
    assert_eq!(r.resume("p", None).unwrap().status.name(), "failed");
}

#[test]
fn a_node_that_fails_with_its_state_keeps_it_through_retries_and_resume() {
    // COUNT adds one to `n` per attempt (what a model call would add to a spend),
    // then fails: retryably twice, then for good. Each attempt starts from the state
    // the previous one kept, and so does `resume`.
    let dir = tempfile::tempdir().unwrap();
    let mut g = Graph::new();
    g.add_node("COUNT", |mut s: Task, cx: &mut NodeContext<'_>| {
        s.n += 1;
        let error = if cx.attempt() < 3 {
            NodeError::retryable("LLM_RATE_LIMITED", "slow down")
        } else {
            NodeError::new("AGENT_EXECUTION_FAILED", "no valid plan")
        };
        if s.n >= 5 {
            return Ok(NodeOutcome::Continue(s));
        }
        Ok(NodeOutcome::Fail { state: s, error })
    })
    .add_edge("COUNT", END)
    .set_entry("COUNT");
    let r = Runner::new(shared(g), store(dir.path()));
    let report = r.start(Some("k"), "test", Task::default(), quick()).unwrap();
    assert_eq!(report.status.name(), "failed");
    assert_eq!(report.state.n, 3, "three attempts, each on the one before");
    let (cp, state) = r.state("k").unwrap().unwrap();
    assert_eq!((cp.meta.node.as_str(), state.n), ("COUNT", 3), "the failed checkpoint holds it");
    let report = r.resume("k", None).unwrap();
    assert_eq!(report.status, RunStatus::Succeeded);
    assert_eq!(report.state.n, 5, "resume went on from 3");
}
