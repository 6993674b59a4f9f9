//! An interrupt leaves the run waiting at its node; it survives the process (a
//! new store and runner), and resuming with an input runs that node again.

use protocol::{RunEventKind, RunStatus};
use serde_json::json;
use workflow::{END, Error, Graph, RunFilter, RunOptions, Runner};

use super::{Task, ask, names, shared, store, visit};

fn plan_approve_code() -> Graph<Task> {
    let mut g = Graph::new();
    g.add_node("PLAN", visit("PLAN"))
        .add_node("WAIT_PLAN_APPROVAL", ask("WAIT_PLAN_APPROVAL"))
        .add_node("CODE", visit("CODE"))
        .add_edge("PLAN", "WAIT_PLAN_APPROVAL")
        .add_edge("WAIT_PLAN_APPROVAL", "CODE")
        .add_edge("CODE", END)
        .set_entry("PLAN");
    g
}

#[test]
fn an_interrupt_survives_a_new_process_and_resume_continues_with_the_input() {
    let dir = tempfile::tempdir().unwrap();
    {
        let r = Runner::new(shared(plan_approve_code()), store(dir.path()));
        let report = r.start(Some("r1"), "agent", Task::default(), RunOptions::default()).unwrap();
        assert_eq!(
            report.status,
            RunStatus::Waiting {
                node: "WAIT_PLAN_APPROVAL".into(),
                reason: "WAIT_PLAN_APPROVAL needs an answer".into()
            }
        );
        assert_eq!(names(&report.state.visited), ["PLAN"]);
        let interrupted = r
            .events("r1", 0)
            .unwrap()
            .into_iter()
            .find_map(|e| match e.kind {
                RunEventKind::Interrupted { payload, .. } => Some(payload),
                _ => None,
            })
            .unwrap();
        assert_eq!(interrupted["visited"], json!(["PLAN"]));
    } // runner and store dropped: as if the process ended

    let r = Runner::new(shared(plan_approve_code()), store(dir.path()));
    let waiting = r.list_runs(&RunFilter { status: Some("waiting".into()), ..Default::default() });
    assert_eq!(waiting.unwrap().iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["r1"]);
    let (cp, state) = r.state("r1").unwrap().unwrap();
    assert_eq!(cp.meta.node, "WAIT_PLAN_APPROVAL");
    assert_eq!(names(&state.visited), ["PLAN"]);

    let report = r.resume("r1", Some(json!({"approved": true}))).unwrap();
    assert_eq!(report.status, RunStatus::Succeeded);
    assert_eq!(names(&report.state.visited), ["PLAN", "WAIT_PLAN_APPROVAL", "CODE"]);
    assert_eq!(report.state.answer, Some(json!({"approved": true})));
    // The resume checkpoint carries the input, so a crash before the node
    // finishes does not lose the answer.
    let resumed = r
        .history("r1")
        .unwrap()
        .into_iter()
        .rfind(|c| c.status == RunStatus::Running && c.node == "WAIT_PLAN_APPROVAL");
    let resumed = r.store().checkpoint("r1", resumed.unwrap().seq).unwrap().unwrap();
    assert_eq!(resumed.input, Some(json!({"approved": true})));
}

#[test]
fn resume_without_input_asks_again() {
    let dir = tempfile::tempdir().unwrap();
    let r = Runner::new(shared(plan_approve_code()), store(dir.path()));
    r.start(Some("r"), "agent", Task::default(), RunOptions::default()).unwrap();
    let again = r.resume("r", None).unwrap();
    assert!(matches!(again.status, RunStatus::Waiting { .. }), "{:?}", again.status);
    assert_eq!(again.steps, 1);
}

#[test]
fn resume_refuses_unknown_and_finished_runs_and_start_refuses_a_taken_id() {
    let dir = tempfile::tempdir().unwrap();
    let r = Runner::new(shared(super::line()), store(dir.path()));
    assert!(matches!(r.resume("nope", None), Err(Error::RunNotFound { .. })));
    r.start(Some("done"), "k", Task::default(), RunOptions::default()).unwrap();
    let err = r.resume("done", None).err().unwrap();
    assert!(matches!(err, Error::InvalidState { .. }), "{err}");
    assert_eq!(err.code(), protocol::ErrorCode::InvalidState);
    let err = r.start(Some("done"), "k", Task::default(), RunOptions::default()).err().unwrap();
    assert!(matches!(err, Error::RunExists { .. }), "{err}");
    let err = r.start(Some("../x"), "k", Task::default(), RunOptions::default()).err().unwrap();
    assert!(matches!(err, Error::InvalidRunId { .. }), "{err}");
}

#[test]
fn a_run_at_a_node_the_new_graph_lacks_is_refused_not_run() {
    let dir = tempfile::tempdir().unwrap();
    Runner::new(shared(plan_approve_code()), store(dir.path()))
        .start(Some("old"), "agent", Task::default(), RunOptions::default())
        .unwrap();
    // A later version of the workflow renamed WAIT_PLAN_APPROVAL.
    let err =
        Runner::new(shared(super::line()), store(dir.path())).resume("old", None).err().unwrap();
    assert!(matches!(err, Error::InvalidState { .. }), "{err}");
    assert!(err.to_string().contains("node WAIT_PLAN_APPROVAL"), "{err}");
}
