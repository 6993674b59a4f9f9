//! Cancelling a waiting run, a run another thread (or process) is executing,
//! and a run whose caller's token fires; a second execution of a run is Busy.

use std::{
    sync::{Arc, mpsc},
    time::{Duration, Instant},
};

use protocol::{RunEventKind, RunStatus};
use tokio_util::sync::CancellationToken;
use workflow::{END, Error, Graph, NodeContext, NodeError, NodeOutcome, RunOptions, Runner};

use super::{Task, ask, shared, store, visit};

/// A -> SLOW -> END, where SLOW works until it is cancelled (10 s at most).
fn slow() -> Graph<Task> {
    let mut g = Graph::new();
    g.add_node("A", visit("A"))
        .add_node("SLOW", |s: Task, cx: &mut NodeContext<'_>| {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if cx.is_cancelled() {
                    return Err(NodeError::new("CANCELLED", "stopped"));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(NodeOutcome::Continue(s))
        })
        .add_edge("A", "SLOW")
        .add_edge("SLOW", END)
        .set_entry("A");
    g
}

/// Waits until the run's SLOW node has started.
fn wait_for_slow(runner: &Runner<Task>, run: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let started =
            runner.events(run, 0).unwrap_or_default().iter().any(
                |e| matches!(&e.kind, RunEventKind::NodeStarted { node, .. } if node == "SLOW"),
            );
        if started {
            return;
        }
        assert!(Instant::now() < deadline, "SLOW never started");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn cancelling_a_waiting_run_ends_it_with_a_final_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = Graph::new();
    g.add_node("ASK", ask("ASK")).add_edge("ASK", END).set_entry("ASK");
    let r = Runner::new(shared(g), store(dir.path()));
    r.start(Some("w"), "test", Task::default(), RunOptions::default()).unwrap();
    assert_eq!(r.cancel("w").unwrap(), RunStatus::Cancelled);
    let (cp, _) = r.state("w").unwrap().unwrap();
    assert_eq!((cp.meta.status, cp.meta.node.as_str()), (RunStatus::Cancelled, "ASK"));
    let last = r.events("w", 0).unwrap().pop().unwrap();
    assert_eq!(last.kind, RunEventKind::RunFinished { status: RunStatus::Cancelled });
    assert!(matches!(r.resume("w", None), Err(Error::InvalidState { .. })));
    // Cancelling again changes nothing.
    let before = r.history("w").unwrap().len();
    assert_eq!(r.cancel("w").unwrap(), RunStatus::Cancelled);
    assert_eq!(r.history("w").unwrap().len(), before);
    assert!(matches!(r.cancel("nope"), Err(Error::RunNotFound { .. })));
}

#[test]
fn a_running_run_is_busy_for_others_and_stops_when_another_process_cancels_it() {
    let dir = tempfile::tempdir().unwrap();
    let graph = shared(slow());
    let executing =
        Runner::new(graph.clone(), store(dir.path())).with_cancel_poll(Duration::from_millis(20));
    // The other "process": its own store connection and runner.
    let other = Runner::new(graph, store(dir.path()));
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            tx.send(executing.start(Some("x"), "test", Task::default(), RunOptions::default()))
                .unwrap()
        });
        wait_for_slow(&other, "x");
        let busy = other.resume("x", None).err().unwrap();
        assert!(matches!(busy, Error::Busy { .. }), "{busy}");
        assert!(busy.to_string().contains(&format!("pid {}", std::process::id())), "{busy}");
        let t = Instant::now();
        assert_eq!(other.cancel("x").unwrap(), RunStatus::Running, "the executor will stop it");
        let report = rx.recv_timeout(Duration::from_secs(5)).unwrap().unwrap();
        assert!(t.elapsed() < Duration::from_secs(2), "seen within the poll interval");
        assert_eq!(report.status, RunStatus::Cancelled);
        assert_eq!(report.checkpoint.node, "SLOW");
    });
    assert_eq!(other.state("x").unwrap().unwrap().0.meta.status, RunStatus::Cancelled);
}

#[test]
fn the_callers_token_cancels_a_running_node() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Runner::new(shared(slow()), store(dir.path())));
    let token = CancellationToken::new();
    let opts = RunOptions { cancel: Some(token.clone()), ..Default::default() };
    let handle = {
        let r = r.clone();
        std::thread::spawn(move || r.start(Some("c"), "test", Task::default(), opts))
    };
    wait_for_slow(&r, "c");
    token.cancel();
    let report = handle.join().unwrap().unwrap();
    assert_eq!(report.status, RunStatus::Cancelled);
    assert_eq!(report.state.visited, ["A"]);
}
