//! `cx.effect` runs a side effect once per run and key, however often its node
//! runs again (an interrupt, a retry).

use std::{
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

use protocol::RunStatus;
use serde_json::json;
use workflow::{END, Graph, NodeContext, NodeError, NodeOutcome, RunOptions, Runner};

use super::{Task, shared, store};

#[test]
fn an_effect_runs_once_though_its_node_runs_again_after_an_interrupt() {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let mut g = Graph::new();
    // Sends a notification (the effect), then waits for the answer.
    g.add_node("NOTIFY", move |mut s: Task, cx: &mut NodeContext<'_>| {
        let sent = cx.effect("notify", || {
            let n = c.fetch_add(1, Ordering::SeqCst) + 1;
            Ok(json!({ "message_id": n }))
        })?;
        match cx.resume_input() {
            None => Ok(NodeOutcome::Interrupt { state: s, reason: "wait".into(), payload: sent }),
            Some(_) => {
                s.answer = Some(sent);
                Ok(NodeOutcome::Continue(s))
            }
        }
    })
    .add_edge("NOTIFY", END)
    .set_entry("NOTIFY");
    let r = Runner::new(shared(g), store(dir.path()));
    let first = r.start(Some("e"), "test", Task::default(), RunOptions::default()).unwrap();
    assert_eq!(first.status.name(), "waiting");
    let second = r.resume("e", Some(json!("ok"))).unwrap();
    assert_eq!(second.status, RunStatus::Succeeded);
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the effect ran once");
    assert_eq!(second.state.answer, Some(json!({ "message_id": 1 })), "the recorded result");
    assert_eq!(r.store().effect("e", "notify").unwrap(), Some(json!({ "message_id": 1 })));
}

#[test]
fn a_retried_node_reuses_recorded_effects_and_retries_failed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (pay, mail) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let (p, m) = (pay.clone(), mail.clone());
    let mut g = Graph::new();
    g.add_node("WORK", move |s: Task, cx: &mut NodeContext<'_>| {
        cx.effect("pay", || Ok(json!(p.fetch_add(1, Ordering::SeqCst))))?;
        // The mail server is down on the first attempt: not recorded, tried again.
        cx.effect("mail", || {
            if m.fetch_add(1, Ordering::SeqCst) == 0 {
                Err(NodeError::retryable("MAIL_DOWN", "try later"))
            } else {
                Ok(json!("sent"))
            }
        })?;
        Ok(NodeOutcome::Continue(s))
    })
    .add_edge("WORK", END)
    .set_entry("WORK");
    let r = Runner::new(shared(g), store(dir.path()));
    let opts = RunOptions { retry_backoff: Duration::from_millis(1), ..Default::default() };
    let report = r.start(Some("e"), "test", Task::default(), opts).unwrap();
    assert_eq!(report.status, RunStatus::Succeeded);
    assert_eq!((pay.load(Ordering::SeqCst), mail.load(Ordering::SeqCst)), (1, 2));
}

#[test]
fn effects_are_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let mut g = Graph::new();
    g.add_node("E", move |s: Task, cx: &mut NodeContext<'_>| {
        cx.effect("same-key", || Ok(json!(c.fetch_add(1, Ordering::SeqCst))))?;
        Ok(NodeOutcome::Continue(s))
    })
    .add_edge("E", END)
    .set_entry("E");
    let r = Runner::new(shared(g), store(dir.path()));
    for id in ["one", "two"] {
        r.start(Some(id), "test", Task::default(), RunOptions::default()).unwrap();
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
