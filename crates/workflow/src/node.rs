//! What a node is and what it may do while it runs.

use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{failpoint, runner::Journal};

/// The state a workflow carries from node to node. It is checkpointed as JSON
/// after every transition, so it must survive a serde round trip; a field added
/// later needs `#[serde(default)]` for runs checkpointed before.
pub trait WorkflowState: Serialize + DeserializeOwned + Clone + Send + 'static {
    /// The workflow's own loop counter, recorded with each checkpoint (for lists
    /// and policies). The engine does not interpret it.
    fn iteration(&self) -> u32 {
        0
    }
}

/// One step of a workflow: a plain blocking function of the state. A node that
/// needs async work blocks on its own runtime.
///
/// A node may run more than once for the same checkpoint (after a crash, a retry,
/// an interrupt): side effects that must happen once go through
/// [`NodeContext::effect`].
pub trait Node<S>: Send + Sync {
    fn run(&self, state: S, cx: &mut NodeContext<'_>) -> Result<NodeOutcome<S>, NodeError>;
}

impl<S, F> Node<S> for F
where
    F: Fn(S, &mut NodeContext<'_>) -> Result<NodeOutcome<S>, NodeError> + Send + Sync,
{
    fn run(&self, state: S, cx: &mut NodeContext<'_>) -> Result<NodeOutcome<S>, NodeError> {
        self(state, cx)
    }
}

/// What a node asks for next.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeOutcome<S> {
    /// Follow the node's edge with this state.
    Continue(S),
    /// Stop and wait at this node (LangGraph's `interrupt()`): the run is
    /// checkpointed `waiting` with `state`, and `resume` with an input runs this
    /// same node again from `state`, the input in [`NodeContext::resume_input`].
    Interrupt { state: S, reason: String, payload: Value },
    /// Fail as `Err(error)` does, but keep what the node did before failing (the
    /// model tokens it spent, the work it saved): a retry runs the node again from
    /// `state`, and the run's `failed` checkpoint holds it, so `resume` does too.
    /// A plain `Err` keeps the state the node started from.
    Fail { state: S, error: NodeError },
}

/// A node's failure: a machine code (the workflow's vocabulary, e.g. `TESTS_FAILED`,
/// or a `protocol::ErrorCode`'s text), a message, and whether running the node
/// again may succeed (the runner retries it up to `RunOptions::node_retries`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[{code}] {message}")]
pub struct NodeError {
    pub code: String,
    pub message: String,
    pub retryable: bool,
}

impl NodeError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> NodeError {
        NodeError { code: code.into(), message: message.into(), retryable: false }
    }

    pub fn retryable(code: impl Into<String>, message: impl Into<String>) -> NodeError {
        NodeError { retryable: true, ..NodeError::new(code, message) }
    }
}

impl From<crate::Error> for NodeError {
    fn from(e: crate::Error) -> NodeError {
        NodeError::new(e.code().as_str(), e.to_string())
    }
}

/// What a running node can see and do: its run, the input it was resumed with,
/// cancellation, events, and effects recorded once.
pub struct NodeContext<'a> {
    pub(crate) journal: &'a mut Journal,
    pub(crate) node: &'a str,
    pub(crate) attempt: u32,
    pub(crate) input: Option<&'a Value>,
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) started: std::time::Instant,
}

impl NodeContext<'_> {
    pub fn run_id(&self) -> &str {
        &self.journal.run_id
    }

    pub fn node(&self) -> &str {
        self.node
    }

    /// 1 for the first attempt of this node in this execution, 2 for its first
    /// retry, ...
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The input `resume` was called with, when this node is the one the run was
    /// resumed at (after its interrupt, typically a human's answer).
    pub fn resume_input(&self) -> Option<&Value> {
        self.input
    }

    /// Whether the run is being cancelled (the caller's token, or a cancel request
    /// in the store, seen within the store's poll interval). A long node checks it
    /// and returns early: an error or an interrupt then ends the run `cancelled` at
    /// this node; a state it continues with is checkpointed first, and the run ends
    /// `cancelled` at the next node.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// When this execution (the `start` or `resume` call) began: a node bounds
    /// what it waits for by the execution's time limit from here.
    pub fn execution_started(&self) -> std::time::Instant {
        self.started
    }

    /// The token behind [`is_cancelled`](Self::is_cancelled), for a node that
    /// awaits (`tokio::select!` on `cancelled()`).
    pub fn cancellation_token(&self) -> &CancellationToken {
        self.cancel
    }

    /// Emits an event (a model call, a tool call, a command's result: one of the
    /// protocol's kinds): stored, then passed to the runner's sink. A store failure
    /// is logged, not returned: a node's progress report is not worth failing the
    /// node for, and the next checkpoint reports a broken store anyway.
    pub fn emit(&mut self, kind: protocol::RunEventKind) {
        if let Err(e) = self.journal.write(None, vec![kind]) {
            tracing::warn!(run = %self.journal.run_id, error = %e, "workflow event not stored");
        }
    }

    /// Emits an extension's own event (`custom`, with a name and its data).
    pub fn emit_custom(&mut self, kind: &str, data: Value) {
        self.emit(protocol::RunEventKind::Custom { kind: kind.to_owned(), data });
    }

    /// Runs a side effect once per run and `key`: the first time, `f` runs and its
    /// result is recorded in the store; when the node runs again (after a crash, a
    /// retry, an interrupt), the recorded result is returned and `f` is not called.
    /// An error from `f` is not recorded, so the next run of the node tries again.
    /// Keys are per run, not per node: an effect inside a loop puts the iteration in
    /// its key.
    ///
    /// One window remains: a process that dies after `f` finished and before its
    /// result is recorded runs `f` again next time. An effect whose repetition
    /// matters should also be idempotent on its own terms (an edit transaction
    /// checked by its id, a commit looked up by its message) so that its second run
    /// finds the first one's work.
    pub fn effect(
        &mut self,
        key: &str,
        f: impl FnOnce() -> Result<Value, NodeError>,
    ) -> Result<Value, NodeError> {
        let run_id = &self.journal.run_id;
        let store = &self.journal.store;
        if let Some(v) = store.effect(run_id, key)? {
            return Ok(v);
        }
        let v = f()?;
        failpoint::hit("effect ran");
        store.record_effect(run_id, key, &v)?;
        failpoint::hit("effect recorded");
        Ok(v)
    }
}
