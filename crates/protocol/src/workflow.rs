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

use crate::{
    Approver, CommandKind, CommandScope, ExecutionPlan, Gate, StopReason, Usage, WorkspaceSync,
};

/// Where a run stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum RunStatus {
    /// Created and not yet driven: the first execution starts it at its entry node
    /// (a server's worker, or the process that created it).
    Queued,
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
    /// The `type` tag: `queued`, `running`, `waiting`, `succeeded`, `failed`,
    /// `cancelled`.
    pub fn name(&self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
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
    /// The execution ended with a final status or a failure.
    RunFinished { status: RunStatus },

    // --- what agent runs report (the coding graph's nodes and agents) -------------
    /// Context gathered for an agent before its turn (Layer 0: repository map,
    /// localized files, skeletons).
    Context {
        agent: String,
        bytes: u64,
        /// Tokens per part of it (`repomap`, `localized`).
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        tokens: std::collections::BTreeMap<String, u64>,
    },
    /// A piece of a model's text as it streams: a line, or 256 bytes, at a time.
    ModelDelta { agent: String, round: u32, text: String },
    /// The stream of this round started over (a retry after partial output): the
    /// text shown for it so far is void.
    ModelReset { agent: String, round: u32, reason: String },
    /// The model client tries a provider again after `delayMs`.
    ModelRetry { agent: String, provider: String, attempt: u32, delay_ms: u64, reason: String },
    /// A model call finished. `costUsd` is absent when the model has no known price.
    ModelCall {
        agent: String,
        round: u32,
        provider: String,
        model: String,
        usage: Usage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        latency_ms: u64,
        stop_reason: StopReason,
        tool_calls: u32,
    },
    /// An agent calls a tool (long strings in the arguments cut short).
    ToolCall { agent: String, round: u32, id: String, name: String, arguments: Value },
    /// A tool's answer: `ok`, its summary (or the error), its size, and for an
    /// error its machine code.
    ToolResult {
        agent: String,
        round: u32,
        id: String,
        name: String,
        ok: bool,
        summary: String,
        bytes: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// The planner's plan.
    Plan { spec: String, plan: ExecutionPlan },
    /// The planner's answer was not a plan; it is asked once more.
    PlanRejected { error: String, attempt: u32 },
    /// A gate was passed with yes: by whom, with what words, the plan edited.
    Approved {
        gate: Gate,
        by: Approver,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        edited: bool,
    },
    /// A gate was answered with no (the plan is made again, the change reworked).
    Rejected { gate: Gate, feedback: String },
    /// DECIDE gave up on the loop: a human decides.
    Escalated { reason: String, iteration: u32 },
    /// A coding round ended: the files the run has changed so far.
    Diff { iteration: u32, files: Vec<String> },
    /// CODE starts a round of the plan's task graph: `round` of `rounds` (from
    /// 1), its steps, one turn per step at once when `parallel`.
    TaskRound { round: u32, rounds: u32, steps: Vec<u32>, parallel: bool },
    /// A step of the plan was not done (its file unchanged, or its edit clashed
    /// with a parallel step's); `replan` says whether the plan is made again.
    TaskFailed { step: u32, reason: String, replan: bool },
    /// The run's workspace copy was brought up to date for VALIDATE.
    Workspace { path: String, sync: WorkspaceSync },
    /// A build or test command ran in the sandbox. `failures` names failing tests
    /// (or build errors), bounded; `failed` counts them all.
    Command {
        kind: CommandKind,
        /// Which test run (tests only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<CommandScope>,
        tool: String,
        success: bool,
        /// The tool's own figure (it can leave out its start-up).
        duration_ms: u64,
        /// The wall time of the sandboxed command.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wall_ms: Option<u64>,
        failures: Vec<String>,
        #[serde(default)]
        failed: u32,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        command: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        output_tail: String,
        /// Of `failures`, those that failed before the run's first change too:
        /// reported, not blamed on the change.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pre_existing: Vec<String>,
        /// Tests run (targeted runs: how many were selected and ran).
        #[serde(default)]
        total: u32,
    },
    /// Nothing could validate the change (no build step, no test found).
    ValidationSkipped { reason: String },
    /// VALIDATE did not run the build and tests again: the run's files did not
    /// change since the last failure, which stands.
    ValidationReused { reason: String },
    /// The validator's diagnosis of a failure was skipped (budget, loop).
    DiagnosisSkipped { reason: String },
    /// DECIDE's choice after a validation.
    Decision { passed: bool, iteration: u32, max_iterations: u32, next: String },
    /// SUCCESS applied the run's change as one edit transaction (none when the run
    /// changed nothing).
    Applied {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transaction_id: Option<String>,
        files: Vec<String>,
    },
    /// A custom node's agent's verdict: where it sends the run (seed 001's
    /// `NextNode`) and why.
    AgentVerdict { node: String, agent: String, next: String, message: String },
    /// The CRITIC node's verdict on a round's change: the guardrails' findings
    /// and the model review's issues.
    Critique { critique: crate::Critique },
    /// The router's reading of the request: a change (plan, code, validate) or a
    /// question answered from the code.
    Routed { route: crate::Route },
    /// The answer to a question (the run changes nothing).
    Answer { text: String },
    /// Something the user should know that does not stop the run (a budget that
    /// cannot be enforced, a setting ignored), with a machine code.
    Warning { code: String, message: String },

    // --- what pipeline runs report (the commit pipeline, seed 003) ----------------
    /// A pipeline stage ended (succeeded, failed or was skipped), in a sentence;
    /// its whole result is in the state and the stage's cache file.
    StageFinished { stage: String, status: crate::StageStatus, summary: String },
    /// A pipeline approval was answered (`by`: `auto` for `--yes` or
    /// `pipeline.autoApprove`, else `human`).
    StageApproval { stage: String, approved: bool, by: String },
    /// The hub was rolled back after a failure or a rejection.
    RolledBack { failed_stage: String, code: String, rollback_branch: Option<String> },

    /// An extension's own event (not one of ironbees' kinds): a name and its data.
    Custom { kind: String, data: Value },
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
