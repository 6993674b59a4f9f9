//! Every event is stored in order and passed to the sink; a client replays from
//! any sequence number.

use std::sync::{Arc, Mutex};

use protocol::{RunEvent, RunEventKind, RunStatus};
use serde_json::json;
use workflow::{END, Graph, NodeContext, NodeOutcome, RunOptions, Runner};

use super::{Task, ask, shared, store, visit};

/// A compact form of an event for comparisons.
fn short(e: &RunEvent) -> String {
    match &e.kind {
        RunEventKind::RunStarted { entry, .. } => format!("started {entry}"),
        RunEventKind::RunResumed { node, input } => format!("resumed {node} {input:?}"),
        RunEventKind::NodeStarted { node, attempt } => format!("node {node} #{attempt}"),
        RunEventKind::Checkpoint { seq, node, status, .. } => {
            format!("checkpoint {seq} {node} {}", status.name())
        }
        RunEventKind::Interrupted { node, .. } => format!("interrupted {node}"),
        RunEventKind::Custom { kind, data } => format!("custom {kind} {data}"),
        RunEventKind::RunFinished { status } => format!("finished {}", status.name()),
        other => format!("{other:?}"),
    }
}

#[test]
fn events_are_stored_in_order_sent_to_the_sink_and_replayable() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = Graph::new();
    g.add_node("A", visit("A"))
        .add_node("TALK", |s: Task, cx: &mut NodeContext<'_>| {
            cx.emit_custom("delta", json!("Hel"));
            cx.emit_custom("delta", json!("lo"));
            Ok(NodeOutcome::Continue(s))
        })
        .add_node("ASK", ask("ASK"))
        .add_edge("A", "TALK")
        .add_edge("TALK", "ASK")
        .add_edge("ASK", END)
        .set_entry("A");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let r = Runner::new(shared(g), store(dir.path()))
        .with_events(Arc::new(move |e: &RunEvent| sink.lock().unwrap().push(e.clone())));
    r.start(Some("ev"), "test", Task::default(), RunOptions::default()).unwrap();
    r.resume("ev", Some(json!(1))).unwrap();

    let stored = r.events("ev", 0).unwrap();
    assert_eq!(*seen.lock().unwrap(), stored, "the sink saw exactly what was stored");
    let got: Vec<String> = stored.iter().map(short).collect();
    assert_eq!(
        got,
        [
            "started A",
            "checkpoint 1 A running",
            "node A #1",
            "checkpoint 2 TALK running",
            "node TALK #1",
            "custom delta \"Hel\"",
            "custom delta \"lo\"",
            "checkpoint 3 ASK running",
            "node ASK #1",
            "checkpoint 4 ASK waiting",
            "interrupted ASK",
            "resumed ASK Some(Number(1))",
            "checkpoint 5 ASK running",
            "node ASK #1",
            "checkpoint 6 __end__ succeeded",
            "finished succeeded",
        ]
    );
    let seqs: Vec<u64> = stored.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=16).collect::<Vec<u64>>());
    assert!(stored.windows(2).all(|w| w[0].time_ms <= w[1].time_ms));

    // Replay after the interrupt, as a client that saw 11 events would.
    let rest = r.events("ev", 11).unwrap();
    assert_eq!(rest, stored[11..]);
    assert!(r.events("ev", 16).unwrap().is_empty());
    assert_eq!(
        stored.last().unwrap().kind,
        RunEventKind::RunFinished { status: RunStatus::Succeeded }
    );
}

#[test]
fn events_are_json_lines_with_camel_case_fields() {
    let dir = tempfile::tempdir().unwrap();
    let r = Runner::new(shared(super::line()), store(dir.path()));
    r.start(Some("j"), "test", Task::default(), RunOptions::default()).unwrap();
    let line = serde_json::to_string(&r.events("j", 0).unwrap()[0]).unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["runId"], "j");
    assert_eq!(v["seq"], 1);
    assert_eq!(v["kind"], json!({"type": "runStarted", "runKind": "test", "entry": "A"}));
}
