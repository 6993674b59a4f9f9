//! Shared fixtures: a small state, nodes that record their visit, a store in a
//! temporary directory.

mod cancel;
mod checkpoints;
mod effects;
mod events;
mod failures;
mod interrupts;
mod limits;
mod policies;
mod routing;
mod submissions;

use std::{path::Path, sync::Arc};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use workflow::{
    CheckpointStore, CompiledGraph, Graph, NodeContext, NodeError, NodeOutcome, Runner,
    SqliteStore, WorkflowState,
};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Nodes that completed, in order.
    pub visited: Vec<String>,
    /// A loop counter (the state's iteration).
    pub n: u32,
    /// What a human answered.
    #[serde(default)]
    pub answer: Option<Value>,
}

impl WorkflowState for Task {
    fn iteration(&self) -> u32 {
        self.n
    }
}

pub type NodeResult = Result<NodeOutcome<Task>, NodeError>;

/// A node that records its visit and continues.
pub fn visit(
    name: &'static str,
) -> impl Fn(Task, &mut NodeContext<'_>) -> NodeResult + Send + Sync {
    move |mut s: Task, _cx: &mut NodeContext<'_>| {
        s.visited.push(name.to_owned());
        Ok(NodeOutcome::Continue(s))
    }
}

/// A node that waits for a human's answer, then records it and continues.
pub fn ask(name: &'static str) -> impl Fn(Task, &mut NodeContext<'_>) -> NodeResult + Send + Sync {
    move |mut s: Task, cx: &mut NodeContext<'_>| match cx.resume_input() {
        None => Ok(NodeOutcome::Interrupt {
            payload: serde_json::json!({ "question": format!("{name}?"), "visited": s.visited }),
            reason: format!("{name} needs an answer"),
            state: s,
        }),
        Some(answer) => {
            s.answer = Some(answer.clone());
            s.visited.push(name.to_owned());
            Ok(NodeOutcome::Continue(s))
        }
    }
}

/// `A -> B -> C -> END`.
pub fn line() -> Graph<Task> {
    let mut g = Graph::new();
    g.add_node("A", visit("A"))
        .add_node("B", visit("B"))
        .add_node("C", visit("C"))
        .add_edge("A", "B")
        .add_edge("B", "C")
        .add_edge("C", workflow::END)
        .set_entry("A");
    g
}

pub fn store(dir: &Path) -> Arc<dyn CheckpointStore> {
    Arc::new(SqliteStore::open(dir).unwrap())
}

pub fn runner(graph: Graph<Task>, dir: &Path) -> Runner<Task> {
    Runner::new(Arc::new(graph.build().unwrap()), store(dir))
}

pub fn shared(graph: Graph<Task>) -> Arc<CompiledGraph<Task>> {
    Arc::new(graph.build().unwrap())
}

pub fn names(visited: &[String]) -> Vec<&str> {
    visited.iter().map(String::as_str).collect()
}
