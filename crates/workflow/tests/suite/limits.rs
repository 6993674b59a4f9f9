//! An execution's timeout and step limit pause the run (no failure, no lost
//! work); resume continues where it stopped.

use std::time::Duration;

use protocol::RunStatus;
use workflow::{END, Graph, NodeContext, NodeOutcome, RunOptions};

use super::{Task, runner};

/// One node that counts to 10, sleeping `ms` each time.
fn counter(ms: u64) -> Graph<Task> {
    let mut g = Graph::new();
    g.add_node("COUNT", move |mut s: Task, _: &mut NodeContext<'_>| {
        std::thread::sleep(Duration::from_millis(ms));
        s.n += 1;
        Ok(NodeOutcome::Continue(s))
    })
    .add_conditional_edges(
        "COUNT",
        &["COUNT", END],
        |s: &Task| if s.n < 10 { "COUNT" } else { END },
    )
    .set_entry("COUNT");
    g
}

#[test]
fn a_timeout_pauses_the_run_and_resume_finishes_it_without_losing_work() {
    let dir = tempfile::tempdir().unwrap();
    let r = runner(counter(40), dir.path());
    let opts = RunOptions { timeout: Some(Duration::from_millis(150)), ..Default::default() };
    let report = r.start(Some("t"), "test", Task::default(), opts).unwrap();
    let RunStatus::Waiting { node, reason } = &report.status else { panic!("{:?}", report.status) };
    assert_eq!(node, "COUNT");
    assert!(reason.contains("time limit"), "{reason}");
    let done_before = report.state.n;
    assert!((1..10).contains(&done_before), "{done_before} rounds in 150 ms of 40 ms rounds");
    assert_eq!(report.steps, done_before);

    let report = r.resume("t", None).unwrap();
    assert_eq!(report.status, RunStatus::Succeeded);
    assert_eq!(report.state.n, 10);
    assert_eq!(report.steps, 10 - done_before, "nothing done before the pause is redone");
}

#[test]
fn max_steps_pauses_after_that_many_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let r = runner(counter(0), dir.path());
    let opts = RunOptions { max_steps: Some(4), ..Default::default() };
    let report = r.start(Some("s"), "test", Task::default(), opts.clone()).unwrap();
    assert_eq!(report.status.name(), "waiting");
    assert_eq!(report.state.n, 4);
    let report = r.resume_with("s", None, opts).unwrap();
    assert_eq!(report.state.n, 8);
    let report = r.resume("s", None).unwrap();
    assert_eq!((report.status, report.state.n), (RunStatus::Succeeded, 10));
}
