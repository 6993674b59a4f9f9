//! Agent mode's data model (seed 001 §4): the state of one coding run as every
//! checkpoint stores it, the plan, the edits, and a human's decision. camelCase
//! JSON as the seed writes it; ironbees' additions to the seed's `CodingState`
//! (the shadow overlay, the human's feedback, why a run paused, what it cost) are
//! fields of their own rather than strings in `metadata`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{BuildResult, RunStatus, TestResult};

/// The nodes of the coding graph (seed 000 §3.1.3), by the names runs report.
pub mod nodes {
    pub const INIT: &str = "INIT";
    pub const PLAN: &str = "PLAN";
    /// A question answered from the code, without the plan/code loop.
    pub const ANSWER: &str = "ANSWER";
    pub const WAIT_PLAN_APPROVAL: &str = "WAIT_PLAN_APPROVAL";
    /// The project built and tested as it is, before the first change.
    pub const BASELINE: &str = "BASELINE";
    pub const CODE: &str = "CODE";
    /// Guardrails and (when asked) a model review of each round's change.
    pub const CRITIC: &str = "CRITIC";
    pub const VALIDATE: &str = "VALIDATE";
    pub const DECIDE: &str = "DECIDE";
    pub const SUCCESS: &str = "SUCCESS";
    pub const WAIT_REVIEW: &str = "WAIT_REVIEW";
    pub const ESCALATE: &str = "ESCALATE";
    pub const WAIT_HUMAN: &str = "WAIT_HUMAN";
}

/// Where a coding run waits for a human, by what the human is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Gate {
    /// WAIT_PLAN_APPROVAL: approve, edit or reject the plan.
    Plan,
    /// WAIT_REVIEW: apply the validated (or unvalidatable) change, or send it back.
    Review,
    /// WAIT_HUMAN: a limit, an escalation or a pause; continue, re-plan or cancel.
    Human,
}

impl Gate {
    /// The node that waits at this gate.
    pub fn node(self) -> &'static str {
        match self {
            Gate::Plan => nodes::WAIT_PLAN_APPROVAL,
            Gate::Review => nodes::WAIT_REVIEW,
            Gate::Human => nodes::WAIT_HUMAN,
        }
    }

    /// The gate a node waits at, if it is one. A node a limit paused before (PLAN,
    /// CODE, VALIDATE) is answered like WAIT_HUMAN.
    pub fn of_node(node: &str) -> Option<Gate> {
        match node {
            nodes::WAIT_PLAN_APPROVAL => Some(Gate::Plan),
            nodes::WAIT_REVIEW => Some(Gate::Review),
            nodes::WAIT_HUMAN => Some(Gate::Human),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Plan => "plan",
            Gate::Review => "review",
            Gate::Human => "human",
        }
    }
}

/// Which tests VALIDATE runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TestScope {
    /// Only the tests the change reaches (and the last round's failures).
    Targeted,
    /// The whole suite every round.
    Full,
    /// The tests the change reaches first; once they pass, the whole suite,
    /// once, before the change is accepted.
    #[default]
    Both,
}

/// Who answered a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Approver {
    /// A person, at a prompt, with `runs approve|reject`, or over the HTTP API.
    Human,
    /// `--yes` on the command line (or `autoApprove` in a request).
    Flag,
    /// The configuration: `agent.enableHumanInTheLoop: false`.
    Configuration,
}

/// A gate's answer, as the routers read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    Approved,
    Rejected,
}

/// What the last VALIDATE found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Validation {
    /// The build and the tests passed (failures that existed before the run, found
    /// by the baseline, do not count).
    Passed,
    /// The build or a test failed because of the change.
    Failed,
    /// Nothing could check the change: no build step ran and no test was found.
    Unchecked,
}

/// Which test run a `command` event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandScope {
    /// The project as it was before the run's first change.
    Baseline,
    /// Only the tests the change reaches (and the last round's failures).
    Targeted,
    /// The whole suite.
    Full,
    /// The test files of a run's new failures, run on their own: a failure that
    /// passes there depended on the tests run before it, not on the change.
    Isolated,
}

/// The project as it was before the run's first change: what VALIDATE compares
/// with, so a failure that was there already is reported, not blamed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Baseline {
    /// The test tool, or `command` for a configured test command.
    pub test_tool: String,
    /// Tests failing before any change, by the names the tool reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_tests: Vec<String>,
    /// Tests that ran (0: no test was found).
    pub total: u32,
    /// The test run could not complete before any change (its reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    pub duration_ms: u64,
}

/// Which project command a `command` event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandKind {
    Build,
    Test,
}

/// What bringing a run's workspace copy up to date did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceSync {
    /// Project files and symlinks copied (new, changed, or restored after the
    /// overlay let go of them).
    pub copied: u64,
    /// Files and symlinks removed from the copy.
    pub removed: u64,
    /// Overlay files written because the copy did not already hold their bytes.
    pub overlay_written: u64,
    /// Dependency directories linked (or re-linked).
    pub linked: u64,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// 1-based.
    pub number: u32,
    /// What to do: "Guard against a zero divisor in calculate()".
    pub description: String,
    /// CREATE, MODIFY, DELETE or REFACTOR.
    pub action_type: String,
    /// The file the step changes, relative to the project root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    /// Why (for the human who approves the plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    /// The steps that must be done before this one (their numbers). Optional:
    /// without any, the task graph's rules derive them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<u32>,
}

/// The plan's steps as a task graph (seed 002, M0): which step waits for which,
/// and the order as groups of steps that do not depend on each other.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskGraph {
    /// `[before, after]`: step `after` depends on step `before`.
    pub edges: Vec<[u32; 2]>,
    /// Steps in dependency order: each group's steps depend only on earlier
    /// groups', so a group's steps could be done in parallel.
    pub groups: Vec<Vec<u32>>,
    /// `planner` when the planner named the dependencies, `rules` when they were
    /// derived (same file in order, tests after the code, a created file before
    /// the steps that name it).
    pub source: String,
    /// How CODE works through the steps: one coder turn per round, in order
    /// (empty in plans read before rounds existed: one round of every step).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<TaskRound>,
    /// What the rounds were estimated to cost and the budget they were fitted to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Box<TaskEstimate>>,
}

/// One coding round of the task graph: a coder turn for `steps`, or with
/// `parallel` one turn per step at the same time (independent steps only).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskRound {
    pub steps: Vec<u32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parallel: bool,
}

/// The rounds' estimated cost against the run's budget: a coder turn is taken to
/// cost what the planner's turn did (its wall time and tokens). Rounds are merged
/// (`shrunk`) until the estimate fits: a plan never costs more turns than the
/// budget allows, and at the least it is coded in one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskEstimate {
    /// One coder turn's estimated wall time and tokens.
    pub turn_ms: u64,
    pub turn_tokens: u64,
    /// The rounds' estimate: parallel turns cost one turn's time, each its tokens.
    pub ms: u64,
    pub tokens: u64,
    /// The time coding may take (half of what is left of the run's timeout; the
    /// rest is for validation) and the tokens left of the run's budget, if any.
    pub budget_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    /// Rounds before they were merged to fit (equal to the rounds when they fit).
    pub rounds_before: u32,
}

impl TaskGraph {
    /// The order in words, for the human who approves the plan: `1 → 2, 3 → 4`.
    pub fn order_text(&self) -> String {
        self.groups
            .iter()
            .map(|g| g.iter().map(u32::to_string).collect::<Vec<_>>().join(", "))
            .collect::<Vec<_>>()
            .join(" → ")
    }

    /// The coding rounds in words: `1, 2 → [3 | 4]` (a bar: one turn per step, at
    /// the same time).
    pub fn rounds_text(&self) -> String {
        self.rounds
            .iter()
            .map(|r| {
                let steps: Vec<String> = r.steps.iter().map(u32::to_string).collect();
                if r.parallel { format!("[{}]", steps.join(" | ")) } else { steps.join(", ") }
            })
            .collect::<Vec<_>>()
            .join(" → ")
    }
}

/// The planner's plan (seed 001 §4.2, with seed 000's file lists).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionPlan {
    /// What will be done, in a sentence or two.
    pub summary: String,
    pub steps: Vec<PlanStep>,
    /// Every file the plan touches.
    #[serde(default)]
    pub affected_files: Vec<String>,
    /// LOW, MEDIUM or HIGH.
    #[serde(default = "medium")]
    pub complexity: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_to_create: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_to_modify: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_to_delete: Vec<String>,
    /// What to do in each file.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub task_descriptions: BTreeMap<String, String>,
    /// The steps' dependencies and order, computed when the plan is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_graph: Option<TaskGraph>,
}

fn medium() -> String {
    "MEDIUM".to_owned()
}

/// The planner's whole answer: a specification and the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlannerAnswer {
    /// The request restated as a precise specification.
    pub spec: String,
    pub plan: ExecutionPlan,
}

/// What an edit does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum EditType {
    Create,
    Modify,
    Delete,
}

/// One file's change in a run, as a unified diff against the working tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileEdit {
    pub file_path: String,
    pub diff: String,
    #[serde(rename = "type")]
    pub kind: EditType,
}

/// One file of the shadow overlay: what the run has written so far, not yet in the
/// working tree (`content` absent: deleted). `baseHash` is the working tree's
/// version the change was made against (absent: the file did not exist), so
/// applying the run refuses a file someone changed meanwhile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverlayFile {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_hash: Option<String>,
    /// The working tree's text the change was made against (absent: the file did
    /// not exist, or is not text): when the file changed on disk meanwhile, the
    /// run's change is merged onto the new version from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

/// A human's answer at an approval gate (the plan, the final diff, a run that
/// needs help). `editedContent` replaces the plan (as plan JSON or prose).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecision {
    pub approved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// A new USD budget for the run (when it paused on its budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
}

/// How a run was asked to run: kept in its state, so a run resumed by another
/// process (`ironbees runs resume`) keeps its limits and gates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunSettings {
    /// Approve the plan without asking (`--yes`; seed 001's EnableHumanInTheLoop
    /// off).
    #[serde(default)]
    pub auto_approve: bool,
    /// Who turned `auto_approve` on (the flag or the configuration), for the
    /// event that reports the approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_approved_by: Option<Approver>,
    /// Stop at SUCCESS with the diff and wait for approval before applying.
    #[serde(default)]
    pub review: bool,
    /// CODE rounds before escalating to a human (seed 001 §5.1: 5); a human who
    /// answers an escalation grants as many again.
    pub max_iterations: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    /// Wall-clock seconds one execution may run before the run pauses for a human
    /// (seed 001 §5.1 TimeoutSeconds: 300).
    pub timeout_seconds: u64,
    /// Which tests VALIDATE runs (`validate.tests`).
    #[serde(default)]
    pub tests: TestScope,
    /// Build and test the project as it is before the first change, so failures
    /// that were there already are not blamed on the run (`validate.baseline`).
    #[serde(default = "yes")]
    pub baseline: bool,
    /// A model reviews each round's change after the guardrails (`agent.critic`,
    /// `--critic`); a blocker it finds sends the change back to CODE.
    #[serde(default)]
    pub critic: bool,
    /// Plan and change even when the router reads the request as a question
    /// (`--plan`); otherwise a question (explain, look up) is answered from the
    /// code without the plan/code loop.
    #[serde(default)]
    pub always_plan: bool,
    /// The planner's context ranks the request's files with the model's rerank
    /// (`localize` with `rerank`; `agent.rerankContext`): one more model call
    /// per run, before the plan.
    #[serde(default)]
    pub rerank_context: bool,
}

fn yes() -> bool {
    true
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            auto_approve: false,
            auto_approved_by: None,
            review: false,
            max_iterations: 5,
            budget_usd: None,
            budget_tokens: None,
            timeout_seconds: 300,
            tests: TestScope::Both,
            baseline: true,
            critic: false,
            always_plan: false,
            rerank_context: false,
        }
    }
}

/// Tokens and money a run has spent on models so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunSpend {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub model_calls: u32,
    pub tool_calls: u32,
    /// Model calls whose price is not known (`costUsd` absent): a USD budget
    /// does not count them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_calls: u32,
    /// The same, per agent (seed 002's layers: planner, coder, critic,
    /// validator, answerer, a project's own).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_agent: BTreeMap<String, AgentSpend>,
    /// Tokens of the context ironbees assembled for the agents (Layer 0), per
    /// part: `repomap`, `localized` (the ranked files' outlines).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub context_tokens: BTreeMap<String, u64>,
}

/// One agent's share of a run's spend.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSpend {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub model_calls: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The state of one coding run (seed 001 §4.1), immutable per checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CodingState {
    pub state_id: String,
    pub user_request: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<ExecutionPlan>,
    /// The run's change so far, per file, against the working tree.
    #[serde(default)]
    pub code_diffs: Vec<FileEdit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_result: Option<BuildResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_result: Option<TestResult>,
    /// What went wrong last (a failing test's message, a build error), for the coder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_context: Option<String>,
    /// CODE rounds done.
    pub iteration_count: u32,
    pub max_iterations: u32,
    pub current_node: String,
    /// RFC 3339, UTC.
    pub timestamp: String,
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// The shadow overlay: the run's files, not yet in the working tree.
    #[serde(default)]
    pub overlay: Vec<OverlayFile>,
    /// The human's last words: plan feedback, or guidance after an escalation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Why the run is waiting for a human (max iterations, budget, timeout, a loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_reason: Option<String>,
    /// The edit transaction that applied the run (SUCCESS): one `undo` reverts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
    #[serde(default)]
    pub spend: RunSpend,
    /// Fingerprints of the last validations' failures, for the loop detector.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent: Vec<String>,
    #[serde(default)]
    pub settings: RunSettings,
    /// The coder's last summary of what it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coder_summary: Option<String>,
    /// The answer of the gate the run passed last (the routers after a gate read it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// What the last VALIDATE found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
    /// The overlay's fingerprint the last VALIDATE checked: a round that changed
    /// nothing is not built and tested again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validated_overlay: Option<String>,
    /// The router's reading of the request (seed 002 Layer 1), decided at INIT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<crate::Route>,
    /// The answer to a question the run answered without changing anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The node DECIDE (or an agent, seed 001's `NextNode`) chose to run next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_node: Option<String>,
    /// Why DECIDE escalated, until ESCALATE reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<String>,
    /// The project before the run's first change (`settings.baseline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// The run ended with nothing to apply: the coder changed nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_change: bool,
    /// The CRITIC node's verdict on the last round's change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critique: Option<crate::Critique>,
    /// The plan's steps coded so far, round by round (seed 002 M0); a new plan
    /// starts again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps_done: Vec<u32>,
    /// Times the plan was made again because a step could not be done.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replans: u32,
}

impl CodingState {
    /// A new run's state.
    pub fn new(
        state_id: impl Into<String>,
        user_request: impl Into<String>,
        settings: RunSettings,
    ) -> CodingState {
        let max_iterations = settings.max_iterations;
        CodingState {
            state_id: state_id.into(),
            user_request: user_request.into(),
            spec: None,
            plan: None,
            code_diffs: Vec::new(),
            build_result: None,
            test_result: None,
            error_context: None,
            iteration_count: 0,
            max_iterations,
            current_node: nodes::INIT.to_owned(),
            timestamp: String::new(),
            metadata: BTreeMap::new(),
            overlay: Vec::new(),
            feedback: None,
            pause_reason: None,
            transaction_id: None,
            spend: RunSpend::default(),
            recent: Vec::new(),
            settings,
            coder_summary: None,
            verdict: None,
            validation: None,
            validated_overlay: None,
            route: None,
            answer: None,
            next_node: None,
            escalation: None,
            baseline: None,
            no_change: false,
            critique: None,
            steps_done: Vec::new(),
            replans: 0,
        }
    }
}

/// How an execution of a coding run ended: its status (waiting at a gate,
/// succeeded, failed, cancelled) and its state. The last line of `run --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunOutcome {
    pub run_id: String,
    pub status: RunStatus,
    pub state: CodingState,
}

impl RunOutcome {
    /// The node the run waits at (a gate, or a node a limit paused before), if it
    /// waits.
    pub fn waiting_at(&self) -> Option<&str> {
        match &self.status {
            RunStatus::Waiting { node, .. } => Some(node),
            _ => None,
        }
    }
}
