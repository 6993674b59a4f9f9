//! A durable graph workflow engine: LangGraph's checkpointer and interrupts, the
//! Rust way, knowing nothing about what the workflow does.
//!
//! A workflow is a [`Graph`] of named [`Node`]s, plain blocking functions of a
//! serializable state, joined by fixed or routed edges and ending at [`END`]. A
//! [`Runner`] executes a run node by node on the caller's thread and appends an
//! immutable checkpoint after every transition: the state, and the node the run
//! is at. The key decision: **a checkpoint names the node to run next, with the
//! state to run it with**, so every way a run stops is the same for `resume` —
//! run that node from that state:
//!
//! - after a crash or a kill, the node that was running runs again;
//! - a node that returns [`NodeOutcome::Interrupt`] leaves the run `waiting` at
//!   itself; `resume` with a human's input runs it again with
//!   [`NodeContext::resume_input`] set;
//! - a [`Policy`] (budget, loop detection, guardrail) asked before each node may
//!   pause the run there, or divert it to another node; the execution's
//!   `timeout` and `max_steps` pause it too, losing nothing;
//! - a failed node runs again; a cancelled run ends `cancelled`.
//!
//! Since a node may thus run twice, side effects that must happen once go through
//! [`NodeContext::effect`], which records each result in the store and returns it
//! on a re-run without repeating the effect.
//!
//! Every checkpoint and event goes to a [`CheckpointStore`] ([`SqliteStore`]:
//! `workflow.db`, one lock file per run) in one transaction, then to an optional
//! event sink, so a CLI can stream the events as JSON Lines and a server can
//! replay them from a sequence number. A run is executed by one process at a time
//! (an OS file lock, released when the process dies); the wire types are
//! `protocol`'s ([`RunStatus`](protocol::RunStatus),
//! [`RunEvent`](protocol::RunEvent), ...).
//!
//! ```no_run
//! use std::sync::Arc;
//! use workflow::{Graph, NodeOutcome, Runner, SqliteStore, END};
//!
//! #[derive(Clone, serde::Serialize, serde::Deserialize)]
//! struct Task { plan: Option<String>, approved: bool }
//! impl workflow::WorkflowState for Task {}
//!
//! let mut g = Graph::new();
//! g.add_node("PLAN", |mut s: Task, _: &mut workflow::NodeContext<'_>| {
//!     s.plan = Some("step 1".into());
//!     Ok(NodeOutcome::Continue(s))
//! })
//! .add_node("APPROVE", |mut s: Task, cx: &mut workflow::NodeContext<'_>| {
//!     match cx.resume_input() {
//!         None => Ok(NodeOutcome::Interrupt {
//!             payload: serde_json::json!({ "plan": s.plan }),
//!             reason: "approve the plan".into(),
//!             state: s,
//!         }),
//!         Some(answer) => {
//!             s.approved = answer["ok"] == true;
//!             Ok(NodeOutcome::Continue(s))
//!         }
//!     }
//! })
//! .add_edge("PLAN", "APPROVE")
//! .add_edge("APPROVE", END)
//! .set_entry("PLAN");
//! let runner = Runner::new(Arc::new(g.build()?), Arc::new(SqliteStore::open(".ironbees/workflows".as_ref())?));
//! let report = runner.start(Some("run-1"), "demo", Task { plan: None, approved: false }, Default::default())?;
//! assert_eq!(report.status.name(), "waiting"); // at APPROVE, the plan in the payload
//! // ... later, perhaps in another process:
//! let report = runner.resume("run-1", Some(serde_json::json!({ "ok": true })))?;
//! assert!(report.state.approved);
//! # Ok::<(), workflow::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod error;
mod failpoint;
mod graph;
mod hub;
mod lease;
mod node;
mod policy;
mod runner;
mod sqlite;
mod store;

/// The crash test's harness, generic over the store (see its module docs).
#[cfg(any(test, feature = "crash-test"))]
pub mod crash_test;

pub use crate::{
    error::{Error, Result},
    graph::{CompiledGraph, END, Graph},
    hub::{EventHub, Subscription},
    lease::{DEFAULT_LEASE, Heartbeat, lease_owner},
    node::{Node, NodeContext, NodeError, NodeOutcome, WorkflowState},
    policy::{Policy, PolicyDecision, RunInfo},
    runner::{EventSink, RunOptions, RunReport, Runner},
    sqlite::SqliteStore,
    store::{Checkpoint, CheckpointStore, Job, RunFilter, RunLock, validate_run_id},
};

/// A crash point of the crash test, for another store's code to pass the same
/// points as the SQLite store (`checkpoint uncommitted`); a no-op unless built
/// for the crash test.
#[doc(hidden)]
#[inline(always)]
pub fn crash_point(name: &str) {
    failpoint::hit(name);
}
