//! Checkpoints are immutable rows, numbered 1, 2, 3, ... per run, each naming
//! the node to run next with its state; the database itself refuses changes.

use protocol::RunStatus;
use serde_json::json;
use workflow::{END, RunFilter, RunOptions, Runner};

use super::{Task, names, shared, store};

#[test]
fn every_transition_appends_a_numbered_checkpoint_naming_the_next_node() {
    let dir = tempfile::tempdir().unwrap();
    let r = Runner::new(shared(super::line()), store(dir.path()));
    let meta = RunOptions { metadata: json!({"task": "demo"}), ..Default::default() };
    r.start(Some("c"), "kind", Task::default(), meta).unwrap();
    let history = r.history("c").unwrap();
    let rows: Vec<(u64, &str, &str, &str)> = history
        .iter()
        .map(|c| (c.seq, c.node.as_str(), c.status.name(), c.state_id.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            (1, "A", "running", "c-1"),
            (2, "B", "running", "c-2"),
            (3, "C", "running", "c-3"),
            (4, END, "succeeded", "c-4"),
        ]
    );
    // Each checkpoint's state is the input of its node.
    let s2: Task =
        serde_json::from_value(r.store().checkpoint("c", 2).unwrap().unwrap().state).unwrap();
    assert_eq!(names(&s2.visited), ["A"]);
    let summary = r.store().run("c").unwrap().unwrap();
    assert_eq!((summary.seq, summary.node.as_str()), (4, END));
    assert_eq!(summary.status, RunStatus::Succeeded);
    assert_eq!(summary.metadata, json!({"task": "demo"}));
    assert_eq!(summary.kind, "kind");
}

#[test]
fn the_database_refuses_to_change_delete_or_misnumber_checkpoints_and_events() {
    let dir = tempfile::tempdir().unwrap();
    let r = Runner::new(shared(super::line()), store(dir.path()));
    r.start(Some("c"), "kind", Task::default(), RunOptions::default()).unwrap();
    let before = r.history("c").unwrap();
    let db = rusqlite::Connection::open(dir.path().join("workflow.db")).unwrap();
    for sql in [
        "UPDATE checkpoints SET node = 'X' WHERE run_id = 'c'",
        "DELETE FROM checkpoints WHERE run_id = 'c'",
        "UPDATE events SET kind = '{}' WHERE run_id = 'c'",
        "DELETE FROM events",
        "INSERT INTO checkpoints VALUES ('c', 9, 'c-9', 'A', 0, 0, '{}', '{}', NULL)",
        "INSERT INTO checkpoints VALUES ('c', 4, 'c-4b', 'A', 0, 0, '{}', '{}', NULL)",
        "INSERT INTO events VALUES ('c', 3, 0, '{}')",
    ] {
        let err = db.execute(sql, []).err();
        assert!(err.is_some(), "{sql} was allowed");
    }
    assert_eq!(r.history("c").unwrap(), before);
    // The next number is accepted (that is how the engine appends).
    db.execute("INSERT INTO checkpoints VALUES ('c', 5, 'c-5', 'A', 0, 0, '{}', '{}', NULL)", [])
        .unwrap();
}

#[test]
fn list_runs_filters_by_kind_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let r = Runner::new(shared(super::line()), store(dir.path()));
    for (id, kind, steps) in
        [("a1", "agent", None), ("a2", "agent", Some(1)), ("p1", "commit", None)]
    {
        let opts = RunOptions { max_steps: steps, ..Default::default() };
        r.start(Some(id), kind, Task::default(), opts).unwrap();
    }
    let ids = |f: RunFilter| -> Vec<String> {
        let mut v: Vec<String> = r.list_runs(&f).unwrap().into_iter().map(|s| s.id).collect();
        v.sort();
        v
    };
    assert_eq!(ids(RunFilter::default()), ["a1", "a2", "p1"]);
    assert_eq!(ids(RunFilter { kind: Some("agent".into()), ..Default::default() }), ["a1", "a2"]);
    assert_eq!(ids(RunFilter { status: Some("waiting".into()), ..Default::default() }), ["a2"]);
    assert_eq!(ids(RunFilter { limit: Some(2), ..Default::default() }).len(), 2);
}
