//! Wire types of durable workflow runs (`crates/workflow`): a run's status, its
//! summary, checkpoint metadata, and the events a run emits.
//!
//! A CLI streams [`RunEvent`]s as JSON Lines and an HTTP server replays them from a
//! sequence number; both read the same rows the engine wrote. Enums are tagged with
//! `"type"` (`{"type": "waiting", "node": "PLAN", "reason": "..."}`), fields are
//! camelCase, times are milliseconds since the Unix epoch.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a run stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum RunStatus {
    /// Between two nodes or inside one. A run that shows `running` while no process
    /// executes it was interrupted by a crash; `resume` continues it.
    Running,
    /// Stopped at `node` until someone resumes it: the node asked (an interrupt, e.g.
    /// for a human's approval) or a policy paused the run (budget, timeout, step
    /// limit). Resuming runs `node` again.
    Waiting { node: String, reason: String },
    /// Reached the end of the graph. Final.
    Succeeded,
    /// A node failed; `code` is the node's machine code. Resuming runs the failed
    /// node again.
    Failed { code: String, message: String },
    /// Cancelled by a caller. Final.
    Cancelled,
}

impl RunStatus {
    /// The `type` tag: `running`, `waiting`, `succeeded`, `failed`, `cancelled`.
    pub fn name(&self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Waiting { .. } => "waiting",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed { .. } => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    /// A finished run never runs again (`succeeded`, `cancelled`).
    pub fn is_finished(&self) -> bool {
        matches!(self, RunStatus::Succeeded | RunStatus::Cancelled)
    }
}

/// One run as listed: what it is, where it stands, and its latest checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    pub id: String,
    /// What the run is (`agent`, `commit`, ...); the caller's word.
    pub kind: String,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub status: RunStatus,
    /// The node of the latest checkpoint (see [`CheckpointMeta::node`]).
    pub node: String,
    /// The sequence number of the latest checkpoint.
    pub seq: u64,
    /// Someone asked to cancel the run; the process executing it stops at its next
    /// check.
    pub cancel_requested: bool,
    /// The caller's data about the run (task, repository, ...), set at its start.
    #[serde(default)]
    pub metadata: Value,
}

/// A checkpoint without its state: one immutable row per transition of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointMeta {
    pub run_id: String,
    /// 1, 2, 3, ... per run, without gaps.
    pub seq: u64,
    /// Unique across runs (`{runId}-{seq}`).
    pub state_id: String,
    /// The node the run is at: the next node to run with this checkpoint's state
    /// (`running`), the node it waits at or failed in (`waiting`, `failed`: resuming
    /// runs it again), the node it would have run next (`cancelled`), or the end
    /// marker (`succeeded`).
    pub node: String,
    /// The state's own loop counter (the workflow decides what it counts).
    pub iteration: u32,
    pub time_ms: i64,
    pub status: RunStatus,
}

/// Something that happened in a run. `seq` numbers a run's events 1, 2, 3, ...
/// (separately from checkpoints), so a client can replay everything after the last
/// event it saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunEvent {
    pub run_id: String,
    pub seq: u64,
    pub time_ms: i64,
    pub kind: RunEventKind,
}

/// What a [`RunEvent`] reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum RunEventKind {
    /// The run was created and starts at `entry`.
    RunStarted { run_kind: String, entry: String },
    /// An execution continues the run at `node` (after an interrupt, a pause, a
    /// failure or a crash), with the caller's input if any.
    RunResumed {
        node: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input: Option<Value>,
    },
    /// A node begins; `attempt` counts from 1 within one execution.
    NodeStarted { node: String, attempt: u32 },
    /// A node returned an error; `retrying` says whether it runs again now.
    NodeFailed { node: String, attempt: u32, code: String, message: String, retrying: bool },
    /// A checkpoint was written (its state is in the store).
    Checkpoint { seq: u64, node: String, iteration: u32, status: RunStatus },
    /// A node asked to stop and wait (for a human); `payload` is what it asks about.
    Interrupted { node: String, reason: String, payload: Value },
    /// A policy (or a limit of the execution) paused the run before `node`.
    Paused { node: String, reason: String },
    /// A policy sent the run to `to` instead of `from`.
    Diverted { from: String, to: String, reason: String },
    /// A node's own event: model deltas, tool calls, command output.
    Custom { kind: String, data: Value },
    /// The execution ended with a final status or a failure.
    RunFinished { status: RunStatus },
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn statuses_and_events_have_the_documented_json_shape() {
        let cases = [
            (json!(RunStatus::Running), json!({"type": "running"})),
            (
                json!(RunStatus::Waiting { node: "PLAN".into(), reason: "approve".into() }),
                json!({"type": "waiting", "node": "PLAN", "reason": "approve"}),
            ),
            (
                json!(RunEvent {
                    run_id: "r1".into(),
                    seq: 7,
                    time_ms: 5,
                    kind: RunEventKind::Checkpoint {
                        seq: 3,
                        node: "CODE".into(),
                        iteration: 2,
                        status: RunStatus::Failed { code: "X".into(), message: "m".into() },
                    },
                }),
                json!({"runId": "r1", "seq": 7, "timeMs": 5, "kind": {
                    "type": "checkpoint", "seq": 3, "node": "CODE", "iteration": 2,
                    "status": {"type": "failed", "code": "X", "message": "m"}}}),
            ),
            (
                json!(RunEventKind::RunStarted { run_kind: "agent".into(), entry: "INIT".into() }),
                json!({"type": "runStarted", "runKind": "agent", "entry": "INIT"}),
            ),
            (
                json!(RunEventKind::RunResumed { node: "PLAN".into(), input: None }),
                json!({"type": "runResumed", "node": "PLAN"}),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn events_round_trip() {
        let kinds = [
            RunEventKind::NodeFailed {
                node: "A".into(),
                attempt: 2,
                code: "C".into(),
                message: "m".into(),
                retrying: true,
            },
            RunEventKind::Interrupted { node: "A".into(), reason: "r".into(), payload: json!([1]) },
            RunEventKind::Custom { kind: "delta".into(), data: json!({"text": "hi"}) },
            RunEventKind::RunFinished { status: RunStatus::Cancelled },
        ];
        for kind in kinds {
            let ev = RunEvent { run_id: "r".into(), seq: 1, time_ms: 2, kind };
            let back: RunEvent =
                serde_json::from_str(&serde_json::to_string(&ev).unwrap()).unwrap();
            assert_eq!(back, ev);
        }
    }
}
