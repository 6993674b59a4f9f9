//! The commit pipeline's data model (seed 003, "Commitly"): its configuration
//! (`pipeline:`), the state a pipeline run checkpoints (`PipelineState`, the
//! seed's `RunContext`), each stage's result (the seed's §6.1 JSON files) and
//! the answer to an approval.
//!
//! A pipeline run is a workflow run of kind `pipeline`: its status, events and
//! checkpoints are the `workflow.rs` types; what is specific lives here.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `pipeline:` configuration section (seed §10.1), camelCase keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PipelineConfig {
    pub project_language: Option<String>,
    pub project_name: Option<String>,
    /// Where the hub clone lives; default `{parent}/.commitly_hub_{project}`.
    pub hub_path: Option<String>,
    pub execution: ExecutionConfig,
    /// Linters run before the execution command (each a shell command line).
    pub lint: Vec<String>,
    pub database: DatabaseConfig,
    pub test_command: Option<String>,
    pub git: GitConfig,
    pub llm: PipelineLlmConfig,
    pub slack: SlackConfig,
    pub logging: LoggingConfig,
    pub refactoring: RefactoringConfig,
    /// Answer every approval with yes (unattended runs).
    pub auto_approve: bool,
    /// After an agent run applies its change: commit the files it changed (and
    /// only those; the run's request as the message) and start the pipeline on
    /// that commit, in whichever driver ran the agent (default false).
    pub on_agent_apply: bool,
}

/// The project's execution command and its limits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ExecutionConfig {
    /// A shell command line, run with `sh -c` in the hub.
    pub command: Option<String>,
    /// Seconds (default 300).
    pub timeout: Option<u64>,
    /// Megabytes (default 2048).
    pub max_memory: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct DatabaseConfig {
    /// The project's PostgreSQL *test* database (`postgres://user@host:port/db`):
    /// the test stage's SQL step explains and times the changed queries there,
    /// always inside transactions it rolls back. Unset: the step is skipped.
    pub url: Option<String>,
    /// Timed executions of each side when a candidate is verified (default 5,
    /// at least 5).
    pub runs: Option<u32>,
    /// How much faster (percent of the median) a candidate must be (default 10).
    pub min_improvement: Option<f64>,
    /// Where kept indexes go as migration files, relative to the repository
    /// root (default `migrations`).
    pub migrations_dir: Option<String>,
    /// At most this many queries per pipeline are optimized (default 10).
    pub max_queries: Option<u32>,
    /// A statement's time limit in seconds (default 30).
    pub statement_timeout: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct GitConfig {
    /// The remote's name in the user's repository (default `origin`).
    pub remote: Option<String>,
    /// The remote branch pushed to (default: the current branch).
    pub branch: Option<String>,
    /// Delete the pipeline's `commitly/*` branches after a push (default true).
    pub auto_cleanup_branches: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PipelineLlmConfig {
    /// Ask the configured model (`llm:`) for refactorings (default false).
    pub enabled: bool,
    /// Another model than the configured default.
    pub model: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct SlackConfig {
    /// A bot token for `chat.postMessage` (with `channelId`).
    pub token: Option<String>,
    pub channel_id: Option<String>,
    /// An incoming webhook URL (instead of a token).
    pub webhook_url: Option<String>,
    /// Default true when a token or webhook is set.
    pub enable_notifications: Option<bool>,
    /// The Web API's base (default `https://slack.com/api`), for tests.
    pub base_url: Option<String>,
    /// Retries after 429 (default 3).
    pub max_retries: Option<u32>,
    /// After a push, reply in the threads of the channel's recent messages that
    /// talk about what the commit fixed (default true with a token; needs the
    /// `channels:history` scope).
    pub feedback: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct LoggingConfig {
    /// Days local logs are kept (default 30).
    pub retention_days: Option<u32>,
    pub cleanup_hub_on_failure: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct RefactoringConfig {
    /// Rules in words, given to the model.
    pub rules: Vec<String>,
    /// A file with more rules (relative to the project root).
    pub rules_file: Option<String>,
}

/// Where a stage stands (seed §3.2 `agent_status`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum StageStatus {
    #[default]
    Pending,
    Running,
    Success,
    Failed,
    Skipped,
}

/// One commit as the pipeline saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommitInfo {
    pub sha: String,
    pub message: String,
    pub author: String,
    /// Seconds since the epoch.
    pub timestamp: i64,
}

/// A project command the pipeline ran in the sandbox, in short.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandSummary {
    pub command: String,
    pub success: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The limit that fired (`timeout`, `memory`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    pub duration_ms: u64,
    /// The last lines of its output.
    #[serde(default)]
    pub output_tail: String,
}

/// `clone_agent.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneResult {
    pub status: StageStatus,
    pub hub_head_sha: String,
    /// The user's commits applied onto the remote branch, oldest first.
    pub applied_commits: Vec<String>,
    /// Absolute paths in the user's working tree (seed §5).
    pub changed_files: Vec<String>,
    pub warnings: Vec<String>,
}

/// `code_agent.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CodeResult {
    pub status: StageStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_result: Option<CommandSummary>,
    pub static_check_result: Vec<CommandSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_approved: Option<bool>,
}

/// `test_agent.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestStageResult {
    pub status: StageStatus,
    /// The SQL optimization step (seed §3.1, "SQL 최적화"). States stored
    /// before it was built hold a bare status (`"skipped"`), read as one.
    #[serde(deserialize_with = "sql_step_compat")]
    pub sql: SqlStepResult,
    /// `file:line` of every query whose optimization was kept.
    pub optimized_queries: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_results: Option<CommandSummary>,
    pub rollback_occurred: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_approved: Option<bool>,
}

/// The SQL step's result: the `sql` section of `test_agent.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct SqlStepResult {
    /// `skipped` (no database, no SQL in the changed files), `success` (the
    /// step ran; see each query's outcome) or `failed` (the database).
    pub status: StageStatus,
    /// Why it was skipped or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the database offered hypothetical indexes (the `hypopg`
    /// extension) to try an index before building it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hypopg: Option<bool>,
    pub queries: Vec<SqlQueryResult>,
    /// The test-branch commit holding the kept rewrites and migrations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl SqlStepResult {
    pub fn skipped(reason: impl Into<String>) -> SqlStepResult {
        SqlStepResult {
            status: StageStatus::Skipped,
            reason: Some(reason.into()),
            ..SqlStepResult::default()
        }
    }

    /// The queries whose optimization was kept.
    pub fn kept(&self) -> impl Iterator<Item = &SqlQueryResult> {
        self.queries.iter().filter(|q| q.outcome == SqlOutcome::Kept)
    }
}

fn sql_step_compat<'de, D: serde::Deserializer<'de>>(d: D) -> Result<SqlStepResult, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Status(StageStatus),
        Full(SqlStepResult),
    }
    Ok(match Either::deserialize(d)? {
        Either::Status(status) => SqlStepResult { status, ..SqlStepResult::default() },
        Either::Full(r) => r,
    })
}

/// One query the SQL step found in a changed file, and what became of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct SqlQueryResult {
    /// Relative to the repository root; lines are 1-based.
    pub file: String,
    pub line: u32,
    pub end_line: u32,
    /// `select`, `update`, `delete` or `insert`.
    pub kind: String,
    pub query: String,
    pub outcome: SqlOutcome,
    /// Why it was skipped, had no candidate, or its candidate was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the model proposed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate: Option<SqlCandidate>,
    /// The query's plan (`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`), and the
    /// candidate's when it was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<PlanSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<PlanSummary>,
    /// An index tried as a hypothetical one first (hypopg).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hypothetical: Option<HypotheticalIndex>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<SqlTiming>,
    /// The migration file a kept index was written to (repository-relative).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub migration: Option<String>,
}

/// What became of a found query.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SqlOutcome {
    /// Not measured: bind parameters, an INSERT, over `maxQueries`, the
    /// database refused it.
    #[default]
    Skipped,
    /// Measured; the model proposed nothing (or no model is configured).
    NoCandidate,
    /// The candidate failed verification (other rows, not faster, unused).
    Rejected,
    /// Verified and committed on the test branch.
    Kept,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SqlCandidateKind {
    #[default]
    Rewrite,
    Index,
}

/// The model's answer: `{"kind": "rewrite"|"index", "sql": ..., "reason": ...}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct SqlCandidate {
    pub kind: SqlCandidateKind,
    pub sql: String,
    pub reason: String,
}

/// A JSON plan's top: its node, cost and times, and the indexes it uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct PlanSummary {
    pub node_type: String,
    pub total_cost: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_total_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planning_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_hit_blocks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_read_blocks: Option<u64>,
    /// Every `Index Name` in the plan tree.
    pub indexes: Vec<String>,
}

/// A candidate index tried as a hypothetical one: would the planner use it,
/// at what estimated cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct HypotheticalIndex {
    pub used: bool,
    pub cost_before: f64,
    pub cost_with: f64,
}

/// Alternating timed executions of the query and its candidate (client
/// side, rows fetched), in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct SqlTiming {
    pub runs: u32,
    pub before_ms: Vec<f64>,
    pub after_ms: Vec<f64>,
    pub median_before_ms: f64,
    pub median_after_ms: f64,
    /// `(before - after) / before`, percent of the median.
    pub improvement_pct: f64,
}

/// A query the SQL step found (seed §3.2 `query_file_list`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct QueryLocation {
    pub file_path: String,
    pub line_start: u32,
    pub line_end: u32,
    pub query: String,
}

/// `refactoring_agent.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefactorResult {
    pub status: StageStatus,
    pub refactored_files: Vec<String>,
    pub improvements: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_passed: Option<bool>,
    /// Why nothing was done (no model, no change proposed, tests failed after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_approved: Option<bool>,
}

/// `sync_agent.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncResult {
    pub status: StageStatus,
    pub pushed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed_sha: Option<String>,
    pub commit_message: String,
    /// Milliseconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_time_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_approved: Option<bool>,
    pub deleted_branches: Vec<String>,
}

/// `slack_agent.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotifyResult {
    pub status: StageStatus,
    /// The channel's messages about what the commit fixed (seed: 매칭된 메시지).
    pub matched_messages: u32,
    /// Every message posted: the summary and the replies.
    pub sent_messages: u32,
    /// Threaded replies to matched messages (seed: 해결 완료 응답).
    #[serde(default)]
    pub replies: u32,
    /// Why the channel could not be read or a reply not posted (the summary's
    /// own failure is `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_id: Option<String>,
    /// HTTP requests made (retries included).
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Every stage's result so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageResults {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone: Option<CloneResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<CodeResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<TestStageResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refactor: Option<RefactorResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify: Option<NotifyResult>,
}

/// Why a pipeline stopped (the seed's §7.2 error log, in the state).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PipelineError {
    pub failed_stage: String,
    /// A machine code (`STAGE_FAILED`, `PUSH_REJECTED`, `APPROVAL_REJECTED`, ...).
    pub code: String,
    pub message: String,
    /// The stage branch that failed, and the one the hub was reset to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_branch: Option<String>,
}

/// The answer to an approval (seed §9.1: y/n).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PipelineApproval {
    pub approved: bool,
    /// Who answered: `auto` (`--yes` or `pipeline.autoApprove`) or `human`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// A pipeline run's state, checkpointed whole at every transition (the seed's
/// `RunContext`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PipelineState {
    pub pipeline_id: String,
    pub project_name: String,
    pub workspace_path: String,
    pub hub_path: String,
    /// The remote's name in the user's repository, and its URL the hub fetches.
    pub git_remote: String,
    pub remote_url: String,
    /// The user's branch, and the remote branch pushed to.
    pub current_branch: String,
    pub target_branch: String,
    /// The user's HEAD when the pipeline started.
    pub local_head: String,
    /// The commit message that started it (the user's newest commit).
    pub commit_message: String,
    pub latest_local_commits: Vec<CommitInfo>,
    /// Stage name → its hub branch (`commitly/<stage>/<pipeline_id>`).
    pub branches: BTreeMap<String, String>,
    /// Stage name → where it stands.
    pub stage_status: BTreeMap<String, StageStatus>,
    pub current_stage: String,
    pub commit_file_list: Vec<String>,
    pub has_query: bool,
    /// The queries the SQL step found in the changed files.
    #[serde(default)]
    pub query_file_list: Vec<QueryLocation>,
    pub results: StageResults,
    /// Milliseconds since the epoch.
    pub started_at_ms: i64,
    pub auto_approve: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<PipelineError>,
    /// The last stage branch that succeeded (the rollback point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_point: Option<String>,
}

/// The stages in order, as named in branches, logs and cache files.
pub mod stages {
    pub const CLONE: &str = "clone";
    pub const CODE: &str = "code";
    pub const TEST: &str = "test";
    pub const REFACTOR: &str = "refactor";
    pub const SYNC: &str = "sync";
    pub const NOTIFY: &str = "notify";
    pub const ALL: [&str; 6] = [CLONE, CODE, TEST, REFACTOR, SYNC, NOTIFY];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_reads_camel_case_and_defaults_the_rest() {
        let c: PipelineConfig = serde_json::from_value(serde_json::json!({
            "execution": {"command": "python main.py", "timeout": 30, "maxMemory": 512},
            "testCommand": "pytest",
            "autoApprove": true,
        }))
        .unwrap();
        assert_eq!(c.execution.max_memory, Some(512));
        assert_eq!(c.test_command.as_deref(), Some("pytest"));
        assert!(c.auto_approve);
        assert_eq!(c.git, GitConfig::default());
    }

    #[test]
    fn a_state_survives_a_round_trip() {
        let mut s = PipelineState { pipeline_id: "p1".into(), ..PipelineState::default() };
        s.stage_status.insert(stages::CLONE.into(), StageStatus::Success);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["stageStatus"]["clone"], "success");
        let back: PipelineState = serde_json::from_value(json).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn a_test_result_stored_before_the_sql_step_reads_its_bare_status() {
        let old: TestStageResult =
            serde_json::from_value(serde_json::json!({"status": "success", "sql": "skipped", "optimizedQueries": [], "rollbackOccurred": false}))
                .unwrap();
        assert_eq!(old.sql.status, StageStatus::Skipped);
        let new =
            TestStageResult { sql: SqlStepResult::skipped("no database"), ..Default::default() };
        let back: TestStageResult =
            serde_json::from_value(serde_json::to_value(&new).unwrap()).unwrap();
        assert_eq!(back, new);
    }
}
