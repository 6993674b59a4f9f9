//! The HTTP API's requests and answers (`ironbees serve`, seed 001 §6.3): the
//! seed's `AgentRequest` with the `WorkflowContext` fields that apply, its
//! `ApprovalRequest` with the edited plan, its `StateUpdate`, and what the
//! listing and inspection endpoints answer; the commit pipeline's approval and
//! view (its runs are listed, followed and cancelled with the agent's types).
//! Errors are [`ErrorInfo`](crate::ErrorInfo).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    CheckpointMeta, CodingState, EditType, ExecutionPlan, PipelineState, RunStatus, RunSummary,
};

/// `POST /api/agent/execute`: start a run. The answer streams the run's events
/// as server-sent events (or, to a client that accepts only JSON, says where to
/// follow them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecuteRequest {
    /// What to do, in plain words.
    pub user_request: String,
    /// Seed 001's `WorkflowContext.SolutionPath`: a file or directory inside the
    /// project the work is about (told to the planner). Outside the project:
    /// `PATH_OUTSIDE_ROOT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solution_path: Option<String>,
    /// `WorkflowContext.TargetProject`: the project (package, crate, module) to
    /// change when the repository has several (told to the planner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_project: Option<String>,
    /// `WorkflowContext.ContextFiles`: files inside the project the planner should
    /// read first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_files: Vec<String>,
    /// `WorkflowContext.Preferences`: the user's preferences for the code
    /// (`{"style": "early returns"}`), told to every agent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub preferences: BTreeMap<String, String>,
    /// Approve the plan without asking (the configuration's
    /// `enableHumanInTheLoop: false` does the same for every run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_approve: Option<bool>,
    /// Stop for a review of the validated change before applying it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
}

/// What `execute` answers a client that does not take an event stream, and
/// what `approve` and `cancel` answer: the run, and where it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunAccepted {
    pub run_id: String,
    /// The checkpoint the run stands at as the request is answered.
    pub state_id: String,
    pub status: RunStatus,
    /// Where to follow the run's events (`GET`, server-sent events).
    pub events: String,
}

/// `POST /api/agent/approve`: answer the gate a run waits at (seed 001's
/// `ApprovalRequest`). `stateId` is the checkpoint the person saw (a run id
/// means its latest): an answer to a checkpoint the run has moved past is
/// `INVALID_STATE`, never applied to another gate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApproveRequest {
    pub state_id: String,
    pub approved: bool,
    /// Words for the next agent: why the plan is rejected, guidance after an
    /// escalation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// The plan as edited (plan JSON, or prose): approved as it stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_content: Option<String>,
    /// A new USD budget (a run that paused on its budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
}

/// `POST /api/pipeline/approve`: answer the approval a commit pipeline waits at
/// (yes: on to the next stage; no: the hub is rolled back and the run fails
/// `APPROVAL_REJECTED`). `stateId` as in [`ApproveRequest`]: an answer to a
/// checkpoint the run has moved past is `INVALID_STATE`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PipelineApproveRequest {
    pub state_id: String,
    pub approved: bool,
}

/// `POST /api/agent/cancel` and `POST /api/pipeline/cancel`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelRequest {
    /// A run id, a unique prefix of one, or a checkpoint's `stateId`.
    pub run_id: String,
}

/// `GET /api/agent/state/{stateId}`: a checkpoint of a run (the latest when the
/// word is a run id) with the state it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    pub run: RunSummary,
    pub checkpoint: CheckpointMeta,
    pub state: CodingState,
}

/// `GET /api/pipeline/state/{stateId}`: a checkpoint of a commit pipeline run
/// (the latest when the word is a run id) with the state it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PipelineRunView {
    pub run: RunSummary,
    pub checkpoint: CheckpointMeta,
    pub state: PipelineState,
}

/// One run in `GET /api/agent/runs` and `GET /api/pipeline/runs`: its summary, its spend and request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunListItem {
    #[serde(flatten)]
    pub run: RunSummary,
    /// What the run's models cost so far (USD; 0 for a pipeline).
    pub cost_usd: f64,
    /// The agent's round (0 for a pipeline).
    pub iteration: u32,
    /// What the run is for: the user's request, a pipeline's commit message.
    pub request: String,
}

/// `GET /api/agent/runs`, `GET /api/pipeline/runs`: a page of runs, most
/// recently updated first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunPage {
    pub runs: Vec<RunListItem>,
    /// The `offset` of the next page, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// A file the run changes (seed 001's `DiffSummary`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffSummary {
    pub file_path: String,
    #[serde(rename = "type")]
    pub kind: EditType,
}

/// Where a run stands after a transition (seed 001's `StateUpdate`): the
/// `state` events of `execute`'s stream, one per checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StateUpdate {
    pub run_id: String,
    pub state_id: String,
    /// The node the run is at (the next to run, or the gate it waits at).
    pub current_node: String,
    pub status: RunStatus,
    pub iteration: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<ExecutionPlan>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diffs: Vec<DiffSummary>,
}
