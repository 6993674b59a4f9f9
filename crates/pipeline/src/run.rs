//! The pipeline as a workflow graph: its nodes, its routers, and [`Pipeline`],
//! the handle drivers start, resume, list and cancel runs with.
//!
//! ```text
//! CLONE → CODE → APPROVE_CODE → TEST → APPROVE_TEST → REFACTOR → APPROVE_REFACTOR
//!       → APPROVE_SYNC → SYNC → NOTIFY → END
//! any stage failure or a "no" at an approval → ROLLBACK (fails the run)
//! ```
//!
//! Every git action that changes the hub runs inside `cx.effect`, so a node run
//! again (after a kill, a resume) finds it done; the actions are also idempotent
//! on their own terms (`checkout -B` recreates a branch from the same parent, a
//! second push of the same commit changes nothing, a deleted branch is not an
//! error), which closes the window between an action and its record.

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use protocol::{
    CheckpointMeta, CloneResult, CodeResult, CommandSummary, ErrorCode, PipelineApproval,
    PipelineConfig, PipelineError, PipelineState, QueryLocation, RefactorResult, RunEventKind,
    RunStatus, RunSummary, SqlOutcome, SqlStepResult, StageStatus, SyncResult, TestStageResult,
    stages,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use workflow::{
    CheckpointStore, END, EventSink, Graph, NodeContext, NodeError, NodeOutcome, RunFilter,
    RunOptions, Runner, WorkflowState,
};

use crate::{
    error::{Error, Result, code_of},
    git::{git, git_ok},
    layout::{Layout, Logs, agent_name, stamp},
    project, refactor, slack,
};

/// The kind pipeline runs have in the run store (agent runs have `agent`).
pub const RUN_KIND: &str = "pipeline";

/// The graph's node names.
pub mod nodes {
    pub const CLONE: &str = "CLONE";
    pub const CODE: &str = "CODE";
    pub const APPROVE_CODE: &str = "APPROVE_CODE";
    pub const TEST: &str = "TEST";
    pub const APPROVE_TEST: &str = "APPROVE_TEST";
    pub const REFACTOR: &str = "REFACTOR";
    pub const APPROVE_REFACTOR: &str = "APPROVE_REFACTOR";
    pub const APPROVE_SYNC: &str = "APPROVE_SYNC";
    pub const SYNC: &str = "SYNC";
    pub const NOTIFY: &str = "NOTIFY";
    pub const ROLLBACK: &str = "ROLLBACK";
}
use nodes as n;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
struct RunState(PipelineState);

impl WorkflowState for RunState {}

/// How project commands run: the sandbox configuration and policy the host
/// computed (the `sandbox:` section), and the environment without secrets.
/// The sandbox probes the machine on its first command, not before.
pub struct Commands {
    config: sandbox::SandboxConfig,
    policy: sandbox::Policy,
    env: Vec<(String, String)>,
    env_removed: Vec<String>,
    sandbox: OnceLock<std::result::Result<Arc<sandbox::Sandbox>, String>>,
}

impl Commands {
    pub fn new(
        config: sandbox::SandboxConfig,
        policy: sandbox::Policy,
        env: Vec<(String, String)>,
        env_removed: Vec<String>,
    ) -> Commands {
        Commands { config, policy, env, env_removed, sandbox: OnceLock::new() }
    }

    fn sandbox(&self) -> std::result::Result<&sandbox::Sandbox, Failure> {
        let sb = self.sandbox.get_or_init(|| {
            sandbox::Sandbox::new(self.config.clone()).map(Arc::new).map_err(|e| e.to_string())
        });
        sb.as_deref().map_err(|e| Failure::new(ErrorCode::SandboxUnavailable, e.clone()))
    }
}

/// What a pipeline needs: its configuration and paths, how to run project
/// commands, the model (refactoring), the runtime to wait on (model, Slack),
/// and the run store (shared with agent runs).
pub struct Setup {
    pub config: PipelineConfig,
    pub layout: Layout,
    /// `None` when the sandbox settings are invalid: stages that run a command fail.
    pub commands: Option<Commands>,
    pub llm: Option<Arc<llm::Llm>>,
    pub rt: tokio::runtime::Handle,
    pub store: Arc<dyn CheckpointStore>,
}

/// How one execution is driven: the caller's cancellation and event sink, and
/// for a driver that queues answers (a server's worker), the checkpoint an
/// answer was given for and a stop that leaves the run resumable.
#[derive(Clone, Default)]
pub struct Drive {
    pub cancel: Option<stdx::CancellationToken>,
    pub sink: Option<EventSink>,
    /// The checkpoint an answer answers (`workflow::RunOptions::answers`): a
    /// queued answer that finds the run moved on is refused, not applied to
    /// another approval.
    pub answers: Option<u64>,
    /// Stops before the next node, leaving the run resumable by any process (a
    /// server shutting down), where `cancel` would end it.
    pub stop: Option<stdx::CancellationToken>,
}

/// Where a run stands after an execution.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Outcome {
    pub pipeline_id: String,
    pub status: RunStatus,
    pub state: PipelineState,
}

/// What an agent run applied, for [`Pipeline::after_agent_run`].
#[derive(Debug, Clone)]
pub struct AgentApplied {
    pub run_id: String,
    pub transaction_id: String,
    /// The paths it changed, root-relative.
    pub files: Vec<String>,
    pub request: String,
}

impl AgentApplied {
    /// What a succeeded agent run applied (nothing for an answer or a run that
    /// changed nothing).
    pub fn of(run: &protocol::RunOutcome) -> Option<AgentApplied> {
        let tx = run.state.transaction_id.clone()?;
        (run.status == RunStatus::Succeeded).then(|| AgentApplied {
            run_id: run.run_id.clone(),
            transaction_id: tx,
            files: run.state.code_diffs.iter().map(|d| d.file_path.clone()).collect(),
            request: run.state.user_request.clone(),
        })
    }
}

pub(crate) struct Env {
    pub(crate) config: PipelineConfig,
    pub(crate) layout: Layout,
    commands: Option<Commands>,
    pub(crate) llm: Option<Arc<llm::Llm>>,
    pub(crate) rt: tokio::runtime::Handle,
}

/// The commit pipeline over one project.
pub struct Pipeline {
    runner: Runner<RunState>,
    env: Arc<Env>,
}

/// A stage's failure: a code and a sentence.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    code: ErrorCode,
    message: String,
}

impl Failure {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Failure {
        Failure { code, message: message.into() }
    }

    fn stage(message: impl Into<String>) -> Failure {
        Failure::new(ErrorCode::StageFailed, message)
    }
}

impl From<NodeError> for Failure {
    fn from(e: NodeError) -> Failure {
        Failure { code: code_of(&e.code), message: e.message }
    }
}

impl From<Failure> for NodeError {
    fn from(f: Failure) -> NodeError {
        NodeError::new(f.code.as_str(), f.message)
    }
}

type Step = std::result::Result<NodeOutcome<RunState>, NodeError>;

impl Pipeline {
    pub fn open(setup: Setup) -> Result<Pipeline> {
        let env = Arc::new(Env {
            config: setup.config,
            layout: setup.layout,
            commands: setup.commands,
            llm: setup.llm,
            rt: setup.rt,
        });
        let graph = graph(&env)?;
        let runner = Runner::new(Arc::new(graph), setup.store).with_kind(RUN_KIND);
        Ok(Pipeline { runner, env })
    }

    pub fn layout(&self) -> &Layout {
        &self.env.layout
    }

    /// Starts a pipeline on the project's HEAD (the commit just made) and drives
    /// it until it ends or waits at an approval. `yes` answers every approval.
    pub fn start(&self, yes: bool, drive: Drive) -> Result<Outcome> {
        let _hub = self.lock_hub(&drive)?;
        let layout = &self.env.layout;
        let config = &self.env.config;
        let p = project::inspect(&layout.root, config)?;
        project::ensure_hub(layout, &p)?;
        let days = config.logging.retention_days.unwrap_or(30);
        crate::layout::prune_logs(&layout.logs_dir(), days, std::time::SystemTime::now());
        let id = new_id();
        let range = format!("refs/remotes/{}/{}..{}", p.remote, p.target_branch, p.head);
        let mut commits = project::commits(&layout.root, &range);
        if commits.is_empty() {
            commits = project::commits(&layout.root, &format!("{}~1..{}", p.head, p.head));
        }
        let message = git(&layout.root, &["log", "-1", "--format=%s", &p.head], None)
            .ok()
            .unwrap_or_default();
        let state = PipelineState {
            pipeline_id: id.clone(),
            project_name: layout.project.clone(),
            workspace_path: layout.root.display().to_string(),
            hub_path: layout.hub.display().to_string(),
            git_remote: p.remote.clone(),
            remote_url: p.remote_url.clone(),
            current_branch: p.branch.clone(),
            target_branch: p.target_branch.clone(),
            local_head: p.head.clone(),
            commit_message: message.clone(),
            latest_local_commits: commits,
            stage_status: stages::ALL
                .iter()
                .map(|s| ((*s).to_owned(), StageStatus::Pending))
                .collect(),
            started_at_ms: stdx::now_ms(),
            auto_approve: yes || config.auto_approve,
            ..PipelineState::default()
        };
        let metadata = json!({
            "request": message,
            "branch": p.target_branch,
            "head": p.head,
        });
        let opts = RunOptions { metadata, ..options(drive) };
        let report = self.runner.start(Some(&id), RUN_KIND, RunState(state), opts)?;
        Ok(self.outcome(report))
    }

    /// `pipeline.onAgentApply`: the change an agent run applied is committed
    /// (only its files, whatever else is staged or changed; the request as the
    /// message, the run and its transaction as trailers; the post-commit hook
    /// does not fire for it) and a pipeline starts on that commit. `None` when
    /// the configuration does not ask for it or the run changed nothing.
    pub fn after_agent_run(
        &self,
        applied: &AgentApplied,
        yes: bool,
        drive: Drive,
    ) -> Result<Option<Outcome>> {
        if !self.env.config.on_agent_apply || applied.files.is_empty() {
            return Ok(None);
        }
        let root = &self.env.layout.root;
        // What would stop the pipeline (no remote, a detached HEAD) stops the
        // commit too: no commit is made for a pipeline that cannot start.
        project::inspect(root, &self.env.config)?;
        let mut add = vec!["add", "-A", "--"];
        add.extend(applied.files.iter().map(String::as_str));
        git_ok(root, &add, None).map_err(|e| Error::Git {
            args: "add".into(),
            cwd: root.clone(),
            message: e,
        })?;
        let message = format!(
            "{}\n\nIronbees-Run: {}\nIronbees-Transaction: {}\n",
            stdx::clip(applied.request.lines().next().unwrap_or("ironbees run"), 72),
            applied.run_id,
            applied.transaction_id
        );
        let mut commit = vec!["commit", "-q", "-m", &message, "--"];
        commit.extend(applied.files.iter().map(String::as_str));
        git_ok(root, &commit, None).map_err(|e| Error::Git {
            args: "commit".into(),
            cwd: root.clone(),
            message: e,
        })?;
        self.start(yes, drive).map(Some)
    }

    /// Continues a run: answers the approval it waits at (`Some(yes/no)`), or
    /// runs again the node it was killed in (`None`).
    pub fn resume(&self, id: &str, answer: Option<bool>, drive: Drive) -> Result<Outcome> {
        let approval =
            answer.map(|approved| PipelineApproval { approved, by: Some("human".into()) });
        self.drive(id, approval.as_ref(), drive)
    }

    /// Executes a run as it stands: a queued or killed one from its checkpoint,
    /// a waiting one with `approval`. What a server's worker calls for a job.
    pub fn drive(
        &self,
        id: &str,
        approval: Option<&PipelineApproval>,
        drive: Drive,
    ) -> Result<Outcome> {
        let input = approval.map(|a| serde_json::to_value(a).unwrap_or(Value::Null));
        let _hub = self.lock_hub(&drive)?;
        let report = self.runner.resume_with(id, input, options(drive))?;
        Ok(self.outcome(report))
    }

    /// One execution at a time works in the hub (a commit made while another
    /// pipeline runs waits for it, as a queue would): its working tree is
    /// shared, its branches are per pipeline. Released when the execution
    /// returns (a run waiting at an approval holds nothing) or the process dies.
    /// The wait ends early when the drive is stopped or cancelled (Ctrl-C, a
    /// server shutting down): a queued pipeline must not hold a worker hostage.
    fn lock_hub(&self, drive: &Drive) -> Result<std::fs::File> {
        let dir = &self.env.layout.state_dir;
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join("pipeline.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        let fired =
            |t: &Option<stdx::CancellationToken>| t.as_ref().is_some_and(|t| t.is_cancelled());
        let mut said = false;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            }
            if fired(&drive.stop) {
                return Err(Error::Interrupted {
                    code: ErrorCode::Busy,
                    message:
                        "stopped while another pipeline works in the hub; the run stays queued"
                            .into(),
                });
            }
            if fired(&drive.cancel) {
                return Err(Error::Interrupted {
                    code: ErrorCode::Cancelled,
                    message: "cancelled while waiting for another pipeline to leave the hub".into(),
                });
            }
            if !said {
                tracing::info!("another pipeline works in the hub; waiting for it");
                said = true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Cancels a run. One that ends cancelled at once (it was waiting, or no
    /// process ran it) leaves nothing in the hub: its branches are deleted;
    /// one a process is running stops at its next step.
    pub fn cancel(&self, id: &str) -> Result<RunStatus> {
        let status = self.runner.cancel(id)?;
        if status == RunStatus::Cancelled
            && let Some((_, state)) = self.runner.state(id)?
        {
            let _hub = self.lock_hub(&Drive::default())?;
            self.discard(&state.0);
        }
        Ok(status)
    }

    /// A cancelled pipeline leaves nothing in the hub: its branches and the
    /// ref of the user's commits are deleted (the hub lock held).
    fn discard(&self, s: &PipelineState) {
        let logs = hub_logs(&self.env, s);
        let hub = &self.env.layout.hub;
        let current = git(hub, &["branch", "--show-current"], None).ok().unwrap_or_default();
        if s.branches.values().any(|b| *b == current) {
            let remote = format!("refs/remotes/origin/{}", s.target_branch);
            let _ = git_ok(hub, &["checkout", "-q", "-f", "--detach", &remote], Some(&logs));
        }
        for b in s.branches.values() {
            let _ = git_ok(hub, &["branch", "-q", "-D", b], Some(&logs));
        }
        let local = format!("refs/commitly/local/{}", s.pipeline_id);
        let _ = git_ok(hub, &["update-ref", "-d", &local], Some(&logs));
        logs.stage(&s.current_stage, "cancelled: the pipeline's hub branches were deleted");
    }

    /// An execution's outcome; one that ended cancelled (Ctrl-C) is discarded.
    fn outcome(&self, report: workflow::RunReport<RunState>) -> Outcome {
        if report.status == RunStatus::Cancelled {
            self.discard(&report.state.0);
        }
        Outcome { pipeline_id: report.run_id, status: report.status, state: report.state.0 }
    }

    /// The run a person's word means (an id or a unique prefix).
    pub fn resolve(&self, word: &str) -> Result<String> {
        Ok(self.runner.resolve(word)?)
    }

    /// Pipeline runs, most recent first.
    pub fn list(&self, limit: Option<usize>) -> Result<Vec<RunSummary>> {
        let filter = RunFilter { kind: Some(RUN_KIND.to_owned()), limit, ..RunFilter::default() };
        Ok(self.runner.list_runs(&filter)?)
    }

    /// Pipeline runs by status, a page at a time, most recently updated first
    /// (the filter's kind is always `pipeline`).
    pub fn runs(&self, filter: RunFilter) -> Result<Vec<RunSummary>> {
        let filter = RunFilter { kind: Some(RUN_KIND.to_owned()), ..filter };
        Ok(self.runner.list_runs(&filter)?)
    }

    /// A run's summary, latest checkpoint and state.
    pub fn show(&self, id: &str) -> Result<Option<(RunSummary, CheckpointMeta, PipelineState)>> {
        self.show_at(id, None)
    }

    /// A run's summary and one of its checkpoints (`seq`; the latest when
    /// `None`) with the state it holds.
    pub fn show_at(
        &self,
        id: &str,
        seq: Option<u64>,
    ) -> Result<Option<(RunSummary, CheckpointMeta, PipelineState)>> {
        let Some(summary) = self.runner.store().run(id)? else { return Ok(None) };
        if summary.kind != RUN_KIND {
            return Err(Error::InvalidArgument(format!(
                "{id} is a {} run, not a pipeline (see `ironbees runs`)",
                summary.kind
            )));
        }
        let found = match seq {
            None => self.runner.store().latest_checkpoint(id)?,
            Some(seq) => self.runner.store().checkpoint(id, seq)?,
        };
        let Some(cp) = found else { return Ok(None) };
        let state: RunState = serde_json::from_value(cp.state)
            .map_err(|source| workflow::Error::State { run_id: id.to_owned(), source })?;
        Ok(Some((summary, cp.meta, state.0)))
    }

    /// Every pipeline run with its state (for reports).
    pub fn all(&self) -> Result<Vec<(RunSummary, PipelineState)>> {
        let mut out = Vec::new();
        for summary in self.list(None)? {
            if let Some((_, state)) = self.runner.state(&summary.id)? {
                out.push((summary, state.0));
            }
        }
        Ok(out)
    }

    pub fn events(&self, id: &str, after_seq: u64) -> Result<Vec<protocol::RunEvent>> {
        Ok(self.runner.events(id, after_seq)?)
    }
}

fn options(drive: Drive) -> RunOptions {
    // No automatic retry (seed §7.3): a failing stage rolls back at once.
    RunOptions {
        cancel: drive.cancel,
        sink: drive.sink,
        answers: drive.answers,
        stop: drive.stop,
        node_retries: 0,
        ..RunOptions::default()
    }
}

/// `2026-11-28T01-45-00-3fa2`: sortable, a valid run id and branch name part.
fn new_id() -> String {
    format!("{}-{:04x}", stamp(stdx::now_ms()), fastrand::u16(..))
}

fn graph(env: &Arc<Env>) -> Result<workflow::CompiledGraph<RunState>> {
    let mut g: Graph<RunState> = Graph::new();
    let stage_nodes: [(&str, &str, StageFn); 6] = [
        (n::CLONE, stages::CLONE, clone_stage),
        (n::CODE, stages::CODE, code_stage),
        (n::TEST, stages::TEST, test_stage),
        (n::REFACTOR, stages::REFACTOR, refactor_stage),
        (n::SYNC, stages::SYNC, sync_stage),
        (n::NOTIFY, stages::NOTIFY, notify_stage),
    ];
    for (node, stage, body) in stage_nodes {
        let env = env.clone();
        g.add_node(node, move |s: RunState, cx: &mut NodeContext<'_>| {
            run_stage(&env, stage, body, s, cx)
        });
    }
    let approvals = [
        (
            n::APPROVE_CODE,
            stages::CODE,
            "코드 실행 결과를 확인했습니다. Test Agent를 진행할까요? (the code stage passed: go on to the tests?)",
        ),
        (
            n::APPROVE_TEST,
            stages::TEST,
            "SQL 최적화가 완료되었습니다. Refactoring Agent를 진행할까요? (SQL optimization and the tests are done: go on to refactoring?)",
        ),
        (
            n::APPROVE_REFACTOR,
            stages::REFACTOR,
            "리팩토링이 완료되었습니다. Sync Agent를 진행할까요? (refactoring done: go on to sync?)",
        ),
        (n::APPROVE_SYNC, stages::SYNC, "원격 저장소에 push할까요? (push to the remote branch?)"),
    ];
    for (node, stage, question) in approvals {
        let env = env.clone();
        g.add_node(node, move |s: RunState, cx: &mut NodeContext<'_>| {
            approval(&env, stage, question, s, cx)
        });
    }
    let env2 = env.clone();
    g.add_node(n::ROLLBACK, move |s: RunState, cx: &mut NodeContext<'_>| rollback(&env2, s, cx));
    let chain = [
        (n::CLONE, n::CODE),
        (n::CODE, n::APPROVE_CODE),
        (n::APPROVE_CODE, n::TEST),
        (n::TEST, n::APPROVE_TEST),
        (n::APPROVE_TEST, n::REFACTOR),
        (n::REFACTOR, n::APPROVE_REFACTOR),
        (n::APPROVE_REFACTOR, n::APPROVE_SYNC),
        (n::APPROVE_SYNC, n::SYNC),
        (n::SYNC, n::NOTIFY),
    ];
    for (from, to) in chain {
        g.add_conditional_edges(from, &[to, n::ROLLBACK], move |s: &RunState| {
            if s.0.error.is_some() { n::ROLLBACK } else { to }
        });
    }
    g.add_edge(n::NOTIFY, END).add_edge(n::ROLLBACK, END).set_entry(n::CLONE);
    Ok(g.build()?)
}

/// A stage's work on the state; `Ok` with a one-line summary.
type StageFn =
    fn(&Env, &mut PipelineState, &mut NodeContext<'_>) -> std::result::Result<String, Failure>;

/// Runs one stage: its status, its log, its result in the cache, its event; a
/// failure is recorded in the state for ROLLBACK.
fn run_stage(
    env: &Env,
    stage: &str,
    body: StageFn,
    st: RunState,
    cx: &mut NodeContext<'_>,
) -> Step {
    let mut s = st.0;
    let logs = Logs::new(&env.layout, &s.pipeline_id);
    s.current_stage = stage.to_owned();
    s.stage_status.insert(stage.to_owned(), StageStatus::Running);
    logs.stage(stage, &format!("{stage} started (attempt {})", cx.attempt()));
    // A stage that panics (a bug of ours) is a failed stage like any other: the
    // hub is rolled back and the error logged (§7.1), not left mid-stage.
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(env, &mut s, cx)))
        .unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            Err(Failure::new(ErrorCode::Internal, format!("the {stage} stage panicked: {what}")))
        });
    let (status, summary) = match ran {
        Ok(summary) => {
            let status = match s.stage_status.get(stage) {
                Some(StageStatus::Skipped) => StageStatus::Skipped,
                _ => StageStatus::Success,
            };
            if status == StageStatus::Success
                && let Some(b) = s.branches.get(stage)
            {
                s.rollback_point = Some(b.clone());
            }
            (status, summary)
        }
        Err(f) => {
            s.error = Some(PipelineError {
                failed_stage: stage.to_owned(),
                code: f.code.as_str().to_owned(),
                message: f.message.clone(),
                hub_branch: s.branches.get(stage).cloned(),
                rollback_branch: None,
            });
            (StageStatus::Failed, format!("[{}] {}", f.code, f.message))
        }
    };
    s.stage_status.insert(stage.to_owned(), status);
    logs.stage(stage, &format!("{stage} {status:?}: {summary}"));
    write_cache(&env.layout, &s, Some(stage));
    cx.emit(RunEventKind::StageFinished { stage: stage.to_owned(), status, summary });
    Ok(NodeOutcome::Continue(RunState(s)))
}

/// Who answers an approval: the run's `--yes` (or `pipeline.autoApprove`), the
/// input it was resumed with, or nobody yet (`None`: wait).
fn decide(
    auto: bool,
    input: Option<&Value>,
) -> std::result::Result<Option<PipelineApproval>, String> {
    if auto {
        return Ok(Some(PipelineApproval { approved: true, by: Some("auto".into()) }));
    }
    input
        .map(|v| {
            serde_json::from_value::<PipelineApproval>(v.clone())
                .map_err(|e| format!("not an approval: {e}"))
        })
        .transpose()
}

/// Seed §9.1: y/n after code, test and refactor, and before the push.
fn approval(
    env: &Env,
    stage: &str,
    question: &str,
    st: RunState,
    cx: &mut NodeContext<'_>,
) -> Step {
    let mut s = st.0;
    let answer = decide(s.auto_approve, cx.resume_input())
        .map_err(|e| NodeError::new(ErrorCode::InvalidArgument.as_str(), e))?;
    let Some(answer) = answer else {
        let payload = json!({ "stage": stage, "results": s.results });
        return Ok(NodeOutcome::Interrupt {
            state: RunState(s),
            reason: question.to_owned(),
            payload,
        });
    };
    let by = answer.by.clone().unwrap_or_else(|| "human".into());
    let approved = Some(answer.approved);
    match stage {
        stages::CODE => s.results.code.get_or_insert_default().user_approved = approved,
        stages::TEST => s.results.test.get_or_insert_default().user_approved = approved,
        stages::REFACTOR => s.results.refactor.get_or_insert_default().user_approved = approved,
        _ => s.results.sync.get_or_insert_default().user_approved = approved,
    }
    hub_logs(env, &s)
        .stage(stage, &format!("approval: {} by {by}", if answer.approved { "yes" } else { "no" }));
    cx.emit(RunEventKind::StageApproval { stage: stage.to_owned(), approved: answer.approved, by });
    if !answer.approved {
        let what = if stage == stages::SYNC {
            "the push".to_owned()
        } else {
            format!("the {stage} stage's result")
        };
        s.error = Some(PipelineError {
            failed_stage: stage.to_owned(),
            code: ErrorCode::ApprovalRejected.as_str().to_owned(),
            message: format!("{what} was rejected"),
            hub_branch: s.branches.get(stage).cloned(),
            rollback_branch: None,
        });
    }
    Ok(NodeOutcome::Continue(RunState(s)))
}

fn hub_logs(env: &Env, s: &PipelineState) -> Logs {
    Logs::new(&env.layout, &s.pipeline_id)
}

/// `git` in the hub, logged; a failure is the stage's.
fn hub_git(env: &Env, s: &PipelineState, args: &[&str]) -> std::result::Result<String, Failure> {
    git_ok(&env.layout.hub, args, Some(&hub_logs(env, s))).map_err(Failure::stage)
}

/// Seed §4: the stage's branch `commitly/<stage>/<id>` from `parent`, checked
/// out clean.
fn enter_branch(
    env: &Env,
    s: &mut PipelineState,
    cx: &mut NodeContext<'_>,
    stage: &str,
    parent: &str,
) -> std::result::Result<String, Failure> {
    let branch = format!("commitly/{stage}/{}", s.pipeline_id);
    let st = &*s;
    cx.effect(&format!("branch:{stage}"), || {
        hub_git(env, st, &["checkout", "-q", "-f", "-B", &branch, parent])?;
        Ok(json!(branch))
    })?;
    hub_git(env, s, &["checkout", "-q", "-f", &branch])?;
    hub_git(env, s, &["clean", "-fdq"])?;
    s.branches.insert(stage.to_owned(), branch.clone());
    Ok(branch)
}

fn branch_of(s: &PipelineState, stage: &str) -> std::result::Result<String, Failure> {
    s.branches.get(stage).cloned().ok_or_else(|| {
        Failure::new(ErrorCode::InvalidState, format!("no {stage} branch in the state"))
    })
}

/// CLONE: the hub at the remote branch with the user's commits applied (seed
/// §4, §5).
fn clone_stage(
    env: &Env,
    s: &mut PipelineState,
    cx: &mut NodeContext<'_>,
) -> std::result::Result<String, Failure> {
    let branch = format!("commitly/{}/{}", stages::CLONE, s.pipeline_id);
    let st = &*s;
    let result = cx.effect("clone:apply", || {
        let r = apply_local_commits(env, st, &branch)?;
        Ok(serde_json::to_value(r).unwrap_or(Value::Null))
    })?;
    let mut result: CloneResult = serde_json::from_value(result)
        .map_err(|e| Failure::new(ErrorCode::Internal, format!("clone result: {e}")))?;
    hub_git(env, s, &["checkout", "-q", "-f", &branch])?;
    // Copied every time (never from a cache): the project's current `.env`.
    match crate::project::copy_dotenv(&env.layout) {
        Ok(None) => {}
        Ok(Some(warning)) => result.warnings.push(warning),
        Err(e) => return Err(Failure::new(e.code(), format!("copying .env to the hub: {e}"))),
    }
    s.branches.insert(stages::CLONE.to_owned(), branch);
    s.commit_file_list = result.changed_files.clone();
    let summary = format!(
        "{} commit(s) applied on {}/{}, {} file(s) changed",
        result.applied_commits.len(),
        s.git_remote,
        s.target_branch,
        result.changed_files.len()
    );
    s.results.clone = Some(result);
    Ok(summary)
}

fn apply_local_commits(
    env: &Env,
    s: &PipelineState,
    branch: &str,
) -> std::result::Result<CloneResult, Failure> {
    let root = env.layout.root.display().to_string();
    let local_ref = format!("refs/commitly/local/{}", s.pipeline_id);
    hub_git(env, s, &["fetch", "-q", "origin"])?;
    hub_git(
        env,
        s,
        &["fetch", "-q", &root, &format!("+refs/heads/{}:{local_ref}", s.current_branch)],
    )?;
    let head = s.local_head.as_str();
    hub_git(env, s, &["cat-file", "-e", &format!("{head}^{{commit}}")])?;
    let remote_ref = format!("refs/remotes/origin/{}", s.target_branch);
    let has_remote = hub_git(env, s, &["rev-parse", "--verify", "-q", &remote_ref]).is_ok();
    abort_cherry_pick(env, s);
    hub_git(env, s, &["reset", "-q", "--hard"])?;
    hub_git(env, s, &["clean", "-fdq"])?;
    let mut warnings = Vec::new();
    let (applied, changed) = if has_remote {
        hub_git(env, s, &["checkout", "-q", "-f", "-B", branch, &remote_ref])?;
        let range = format!("{remote_ref}..{head}");
        let list = hub_git(env, s, &["rev-list", "--reverse", "--no-merges", &range])?;
        let applied: Vec<String> = list.lines().map(str::to_owned).collect();
        let fast_forward =
            hub_git(env, s, &["merge-base", "--is-ancestor", &remote_ref, head]).is_ok();
        if fast_forward {
            hub_git(env, s, &["reset", "-q", "--hard", head])?;
        } else {
            warnings.push(format!(
                "origin/{} has commits your branch does not: your commits were cherry-picked onto it",
                s.target_branch
            ));
            for sha in &applied {
                if let Err(f) = hub_git(env, s, &["cherry-pick", "--allow-empty", sha]) {
                    let _ = hub_git(env, s, &["cherry-pick", "--abort"]);
                    return Err(Failure::stage(format!(
                        "commit {} does not apply on origin/{}: {}",
                        &sha[..sha.len().min(12)],
                        s.target_branch,
                        f.message
                    )));
                }
            }
        }
        let changed = hub_git(env, s, &["diff", "--name-only", &format!("{remote_ref}...{head}")])?;
        (applied, changed)
    } else {
        warnings.push(format!("origin has no branch {}: every commit is new", s.target_branch));
        hub_git(env, s, &["checkout", "-q", "-f", "-B", branch, head])?;
        let list = hub_git(env, s, &["rev-list", "--reverse", head])?;
        let changed = hub_git(env, s, &["ls-tree", "-r", "--name-only", head])?;
        (list.lines().map(str::to_owned).collect(), changed)
    };
    let changed_files = changed
        .lines()
        .filter(|l| !l.is_empty())
        .map(|f| env.layout.root.join(f).display().to_string())
        .collect();
    let hub_head_sha = hub_git(env, s, &["rev-parse", "HEAD"])?;
    Ok(CloneResult {
        status: StageStatus::Success,
        hub_head_sha,
        applied_commits: applied,
        changed_files,
        warnings,
    })
}

/// A cherry-pick a killed or failed clone left half done is given up.
fn abort_cherry_pick(env: &Env, s: &PipelineState) {
    if env.layout.hub.join(".git/CHERRY_PICK_HEAD").exists() {
        let _ = hub_git(env, s, &["cherry-pick", "--abort"]);
    }
}

/// CODE: the configured linters, then the execution command, in the sandbox
/// with its time and memory limits; what they wrote is discarded.
fn code_stage(
    env: &Env,
    s: &mut PipelineState,
    cx: &mut NodeContext<'_>,
) -> std::result::Result<String, Failure> {
    let parent = branch_of(s, stages::CLONE)?;
    enter_branch(env, s, cx, stages::CODE, &parent)?;
    let mut result = CodeResult { status: StageStatus::Running, ..CodeResult::default() };
    let lints = env.config.lint.clone();
    for (i, line) in lints.iter().enumerate() {
        let r = command_effect(env, s, cx, &format!("code:lint:{i}"), line)?;
        result.static_check_result.push(r);
    }
    if let Some(line) = env.config.execution.command.clone() {
        result.execution_result = Some(command_effect(env, s, cx, "code:exec", &line)?);
    }
    discard_outputs(env, s)?;
    let ran: Vec<&CommandSummary> =
        result.static_check_result.iter().chain(&result.execution_result).collect();
    let failed = ran.iter().find(|r| !r.success).map(|r| (*r).clone());
    let summary = code_summary(&result);
    result.status = match (&failed, ran.is_empty()) {
        (Some(_), _) => StageStatus::Failed,
        (None, true) => StageStatus::Skipped,
        (None, false) => StageStatus::Success,
    };
    let status = result.status;
    s.results.code = Some(result);
    if let Some(f) = failed {
        return Err(command_failure(&f));
    }
    if status == StageStatus::Skipped {
        s.stage_status.insert(stages::CODE.to_owned(), StageStatus::Skipped);
        return Ok("no execution command or linter configured (pipeline.execution.command)".into());
    }
    Ok(summary)
}

/// Seed §9.2's summary: lint errors, run time, exit code.
fn code_summary(r: &CodeResult) -> String {
    let lint_errors = r.static_check_result.iter().filter(|c| !c.success).count();
    match &r.execution_result {
        Some(e) => format!(
            "lint errors: {lint_errors}; `{}` exit {} in {:.1}s",
            e.command,
            e.exit_code.map_or_else(|| "-".into(), |c| c.to_string()),
            e.duration_ms as f64 / 1000.0
        ),
        None => format!("lint errors: {lint_errors}; no execution command"),
    }
}

fn command_failure(c: &CommandSummary) -> Failure {
    let how = match (&c.limit, c.exit_code) {
        (Some(limit), _) => format!("stopped by the {limit} limit"),
        (None, Some(code)) => format!("exited {code}"),
        (None, None) => "was killed".to_owned(),
    };
    let tail = c.output_tail.trim();
    let tail = if tail.is_empty() { String::new() } else { format!(":\n{tail}") };
    let code = if c.limit.is_some() { ErrorCode::SandboxLimit } else { ErrorCode::StageFailed };
    Failure::new(code, format!("`{}` {how}{tail}", c.command))
}

/// TEST: the SQL step (`sql.rs`: the changed files' queries optimized on the
/// test database, kept ones committed on the test branch), then the project's
/// test command in the sandbox. Tests that fail with the SQL step's commit
/// drop it and run again: the optimization, not the user's commit, is wrong.
fn test_stage(
    env: &Env,
    s: &mut PipelineState,
    cx: &mut NodeContext<'_>,
) -> std::result::Result<String, Failure> {
    let parent = branch_of(s, stages::CODE)?;
    enter_branch(env, s, cx, stages::TEST, &parent)?;
    let st = &*s;
    let sql = cx.effect("test:sql", || {
        let r = crate::sql::step(env, st)?;
        Ok(serde_json::to_value(r).unwrap_or(Value::Null))
    })?;
    let mut sql: SqlStepResult = serde_json::from_value(sql)
        .map_err(|e| Failure::new(ErrorCode::Internal, format!("sql result: {e}")))?;
    s.query_file_list = sql
        .queries
        .iter()
        .map(|q| QueryLocation {
            file_path: env.layout.root.join(&q.file).display().to_string(),
            line_start: q.line,
            line_end: q.end_line,
            query: q.query.clone(),
        })
        .collect();
    s.has_query = !s.query_file_list.is_empty();
    let sql_line = sql_summary(&sql);
    hub_logs(env, s).stage(stages::TEST, &format!("sql: {sql_line}"));
    let mut result = TestStageResult { status: StageStatus::Running, ..TestStageResult::default() };
    if let Some(line) = env.config.test_command.clone() {
        let mut r = command_effect(env, s, cx, "test:run", &line)?;
        discard_outputs(env, s)?;
        if !r.success
            && let Some(commit) = sql.commit.clone()
        {
            let st = &*s;
            cx.effect("test:sql-drop", || {
                if hub_git(env, st, &["rev-parse", "HEAD"])? == commit {
                    hub_git(env, st, &["reset", "-q", "--hard", "HEAD~1"])?;
                }
                Ok(Value::Null)
            })?;
            for q in sql.queries.iter_mut().filter(|q| q.outcome == SqlOutcome::Kept) {
                q.outcome = SqlOutcome::Rejected;
                q.migration = None;
                q.reason = Some("the tests failed with it: its commit was dropped".into());
            }
            sql.commit = None;
            r = command_effect(env, s, cx, "test:run-without-sql", &line)?;
            discard_outputs(env, s)?;
        }
        result.test_results = Some(r);
    }
    result.optimized_queries = sql.kept().map(|q| format!("{}:{}", q.file, q.line)).collect();
    result.sql = sql;
    let outcome = result.test_results.clone();
    result.status = match &outcome {
        Some(r) if !r.success => StageStatus::Failed,
        Some(_) => StageStatus::Success,
        None => StageStatus::Skipped,
    };
    s.results.test = Some(result);
    let sql_line = s.results.test.as_ref().map(|t| sql_summary(&t.sql)).unwrap_or_default();
    match outcome {
        Some(r) if !r.success => Err(command_failure(&r)),
        Some(r) => Ok(format!(
            "`{}` passed in {:.1}s; sql: {sql_line}",
            r.command,
            r.duration_ms as f64 / 1000.0
        )),
        None => {
            s.stage_status.insert(stages::TEST.to_owned(), StageStatus::Skipped);
            Ok(format!("no test command configured (pipeline.testCommand); sql: {sql_line}"))
        }
    }
}

/// The SQL step in a line: `skipped (no database)`, `3 queries, 1 optimized`.
fn sql_summary(r: &SqlStepResult) -> String {
    match r.status {
        StageStatus::Skipped => {
            format!("skipped ({})", r.reason.as_deref().unwrap_or("nothing to do"))
        }
        _ => format!("{} quer(ies) found, {} optimized", r.queries.len(), r.kept().count()),
    }
}

/// REFACTOR: with a model, its refactorings of the changed files, kept only if
/// the tests still pass; without one, skipped.
fn refactor_stage(
    env: &Env,
    s: &mut PipelineState,
    cx: &mut NodeContext<'_>,
) -> std::result::Result<String, Failure> {
    let parent = branch_of(s, stages::TEST)?;
    enter_branch(env, s, cx, stages::REFACTOR, &parent)?;
    let skip = |s: &mut PipelineState, reason: &str| {
        s.results.refactor = Some(RefactorResult {
            status: StageStatus::Skipped,
            reason: Some(reason.to_owned()),
            ..RefactorResult::default()
        });
        s.stage_status.insert(stages::REFACTOR.to_owned(), StageStatus::Skipped);
        Ok(format!("skipped: {reason}"))
    };
    let Some(llm) = env.llm.clone().filter(|_| env.config.llm.enabled) else {
        return skip(s, "no model configured (pipeline.llm.enabled and llm:)");
    };
    let st = &*s;
    let proposal = cx.effect("refactor:apply", || {
        let r = refactor::apply(env, &llm, st)?;
        Ok(serde_json::to_value(r).unwrap_or(Value::Null))
    })?;
    let applied: refactor::Applied = serde_json::from_value(proposal)
        .map_err(|e| Failure::new(ErrorCode::Internal, format!("refactor result: {e}")))?;
    if applied.files.is_empty() {
        return skip(s, applied.reason.as_deref().unwrap_or("the model proposed no change"));
    }
    let mut result = RefactorResult {
        status: StageStatus::Success,
        refactored_files: applied
            .files
            .iter()
            .map(|f| env.layout.root.join(f).display().to_string())
            .collect(),
        improvements: applied.improvements.clone(),
        ..RefactorResult::default()
    };
    if let Some(line) = env.config.test_command.clone() {
        let r = command_effect(env, s, cx, "refactor:test", &line)?;
        discard_outputs(env, s)?;
        result.test_passed = Some(r.success);
        if !r.success {
            // Keep the stage, drop its commit: the refactoring broke the tests.
            let st = &*s;
            cx.effect("refactor:drop", || {
                let head = hub_git(env, st, &["rev-parse", "HEAD"])?;
                if head == applied.commit {
                    hub_git(env, st, &["reset", "-q", "--hard", "HEAD~1"])?;
                }
                Ok(Value::Null)
            })?;
            result.refactored_files.clear();
            result.reason =
                Some("the tests failed after the refactoring: its commit was dropped".into());
        }
    }
    let summary = match result.test_passed {
        Some(false) => "refactoring dropped: the tests failed with it".to_owned(),
        _ => format!(
            "{} file(s) refactored: {}",
            result.refactored_files.len(),
            result.improvements.join("; ")
        ),
    };
    s.results.refactor = Some(result);
    Ok(summary)
}

/// SYNC: the final branch pushed to the remote branch; on success every
/// `commitly/*` branch of the pipeline deleted (seed §4.3).
fn sync_stage(
    env: &Env,
    s: &mut PipelineState,
    cx: &mut NodeContext<'_>,
) -> std::result::Result<String, Failure> {
    let last = [stages::REFACTOR, stages::TEST, stages::CODE, stages::CLONE]
        .iter()
        .find_map(|st| s.branches.get(*st).cloned())
        .ok_or_else(|| Failure::new(ErrorCode::InvalidState, "no branch to push"))?;
    let target = format!("refs/heads/{}", s.target_branch);
    let st = &*s;
    let pushed = cx.effect("sync:push", || {
        let sha = hub_git(env, st, &["rev-parse", &last])?;
        let out = git(&env.layout.hub, &["push", "--porcelain", "origin", &format!("{sha}:{target}")], Some(&hub_logs(env, st)));
        if !out.success {
            let text = format!("{}\n{}", out.stdout, out.stderr);
            let rejected = ["rejected", "non-fast-forward", "fetch first"].iter().any(|w| text.contains(w));
            let message = if rejected {
                format!(
                    "the remote refused the push to {}: it has commits this pipeline does not (someone pushed meanwhile); pull, then commit again",
                    st.target_branch
                )
            } else {
                format!("git push failed: {}", stdx::clip(text.trim(), 1000))
            };
            let code = if rejected { ErrorCode::PushRejected } else { ErrorCode::StageFailed };
            return Err(Failure::new(code, message).into());
        }
        let _ = hub_git(env, st, &["fetch", "-q", "origin"]);
        Ok(json!({ "sha": sha, "timeMs": stdx::now_ms() }))
    })?;
    let sha = pushed["sha"].as_str().unwrap_or_default().to_owned();
    let mut result = SyncResult {
        status: StageStatus::Success,
        pushed: true,
        pushed_sha: Some(sha.clone()),
        commit_message: s.commit_message.clone(),
        sync_time_ms: pushed["timeMs"].as_i64(),
        user_approved: s.results.sync.as_ref().and_then(|r| r.user_approved),
        deleted_branches: Vec::new(),
    };
    if env.config.git.auto_cleanup_branches.unwrap_or(true) {
        let st = &*s;
        let deleted = cx.effect("sync:cleanup", || {
            let _ = hub_git(env, st, &["checkout", "-q", "-f", "--detach", &sha]);
            let mut deleted = Vec::new();
            for b in st.branches.values() {
                if hub_git(env, st, &["branch", "-q", "-D", b]).is_ok() {
                    deleted.push(b.clone());
                }
            }
            let _ = hub_git(
                env,
                st,
                &["update-ref", "-d", &format!("refs/commitly/local/{}", st.pipeline_id)],
            );
            Ok(json!(deleted))
        })?;
        result.deleted_branches = serde_json::from_value(deleted).unwrap_or_default();
    }
    s.results.sync = Some(result);
    Ok(format!("pushed {} to {}/{}", &sha[..sha.len().min(12)], s.git_remote, s.target_branch))
}

/// NOTIFY: the summary to Slack when configured; a failed post is recorded,
/// never undoing the push.
fn notify_stage(
    env: &Env,
    s: &mut PipelineState,
    cx: &mut NodeContext<'_>,
) -> std::result::Result<String, Failure> {
    if !slack::enabled(&env.config.slack) {
        s.results.notify =
            Some(protocol::NotifyResult { status: StageStatus::Skipped, ..Default::default() });
        s.stage_status.insert(stages::NOTIFY.to_owned(), StageStatus::Skipped);
        return Ok("skipped: Slack is not configured".into());
    }
    let text = summary_text(s);
    let posted = cx.effect("notify:post", || {
        let r = slack::post(&env.config.slack, &text, &env.rt);
        Ok(serde_json::to_value(r).unwrap_or(Value::Null))
    })?;
    let mut result: protocol::NotifyResult = serde_json::from_value(posted).unwrap_or_default();
    let mut line = match &result.error {
        None => format!("summary posted ({} request(s))", result.attempts),
        Some(e) => format!("notification failed after {} request(s): {e}", result.attempts),
    };
    let pushed = s.results.sync.as_ref().is_some_and(|r| r.pushed);
    if pushed && slack::feedback_enabled(&env.config.slack) {
        feedback(env, s, cx, &mut result)?;
        line.push_str(&format!(
            "; {} channel message(s) about it, {} answered",
            result.matched_messages, result.replies
        ));
    }
    if result.status != StageStatus::Success {
        // Recorded, not raised: the push this reports on is done.
        s.stage_status.insert(stages::NOTIFY.to_owned(), StageStatus::Failed);
    }
    s.results.notify = Some(result);
    Ok(line)
}

/// The seed's feedback matching after a push: the channel's messages about
/// what the commit fixed each get a threaded reply naming the pushed commit.
/// The read and each reply are effects of their own, so a resumed run neither
/// reads again nor answers a message twice.
fn feedback(
    env: &Env,
    s: &PipelineState,
    cx: &mut NodeContext<'_>,
    result: &mut protocol::NotifyResult,
) -> std::result::Result<(), Failure> {
    let cfg = &env.config.slack;
    let subject = s.commit_message.clone();
    let read = cx.effect("notify:history", || {
        let (found, attempts) =
            slack::matching_messages(cfg, &subject, stdx::now_ms() as u64 / 1000, &env.rt);
        Ok(json!({ "matched": found.as_ref().ok(), "error": found.as_ref().err(), "attempts": attempts }))
    })?;
    result.attempts += read["attempts"].as_u64().unwrap_or(0) as u32;
    if let Some(e) = read["error"].as_str() {
        result.feedback_error = Some(format!("reading the channel: {e}"));
        return Ok(());
    }
    let matched: Vec<slack::Matched> =
        serde_json::from_value(read["matched"].clone()).unwrap_or_default();
    result.matched_messages = matched.len() as u32;
    let sha = s.results.sync.as_ref().and_then(|r| r.pushed_sha.clone()).unwrap_or_default();
    let text = format!(
        "Addressed by `{}` on {}: {} (pipeline `{}`)",
        &sha[..sha.len().min(12)],
        s.target_branch,
        s.commit_message,
        s.pipeline_id
    );
    for m in &matched {
        let sent = cx.effect(&format!("notify:reply:{}", m.ts), || {
            let (r, attempts) = slack::reply(cfg, &m.ts, &text, &env.rt);
            Ok(json!({ "error": r.err(), "attempts": attempts }))
        })?;
        result.attempts += sent["attempts"].as_u64().unwrap_or(0) as u32;
        match sent["error"].as_str() {
            None => {
                result.replies += 1;
                result.sent_messages += 1;
            }
            Some(e) => result.feedback_error = Some(format!("replying to {}: {e}", m.ts)),
        }
    }
    Ok(())
}

/// The message a notification carries.
fn summary_text(s: &PipelineState) -> String {
    let mut lines =
        vec![format!("*{}* pipeline `{}`: {}", s.project_name, s.pipeline_id, s.commit_message)];
    for stage in stages::ALL {
        if stage == stages::NOTIFY {
            continue;
        }
        let status = s.stage_status.get(stage).copied().unwrap_or_default();
        lines.push(format!("• {stage}: {}", format!("{status:?}").to_lowercase()));
    }
    match &s.error {
        Some(e) => lines.push(format!(
            "failed at {} [{}]: {}",
            e.failed_stage,
            e.code,
            stdx::clip(&e.message, 500)
        )),
        None => {
            if let Some(sha) = s.results.sync.as_ref().and_then(|r| r.pushed_sha.as_deref()) {
                lines.push(format!("pushed {} to {}", &sha[..sha.len().min(12)], s.target_branch));
            }
        }
    }
    lines.join("\n")
}

/// Seed §7.1: the hub back at the last stage branch that succeeded, later
/// branches deleted, the error log written (hub and local), Slack told; the run
/// ends failed with the stage's code. No automatic retry (§7.3).
fn rollback(env: &Env, st: RunState, cx: &mut NodeContext<'_>) -> Step {
    let mut s = st.0;
    let mut err = s.error.clone().unwrap_or_else(|| PipelineError {
        failed_stage: s.current_stage.clone(),
        code: ErrorCode::StageFailed.as_str().to_owned(),
        message: "the pipeline stopped".into(),
        ..PipelineError::default()
    });
    let order = [stages::CLONE, stages::CODE, stages::TEST, stages::REFACTOR];
    let last_good = order
        .iter()
        .rev()
        .filter(|st| {
            matches!(s.stage_status.get(**st), Some(StageStatus::Success | StageStatus::Skipped))
        })
        .find_map(|st| s.branches.get(*st).cloned());
    let stc = &s;
    let done = cx.effect("rollback", || {
        abort_cherry_pick(env, stc);
        let _ = hub_git(env, stc, &["reset", "-q", "--hard"]);
        let _ = hub_git(env, stc, &["clean", "-fdq"]);
        match &last_good {
            Some(b) => hub_git(env, stc, &["checkout", "-q", "-f", b])?,
            None => {
                let remote = format!("refs/remotes/origin/{}", stc.target_branch);
                hub_git(env, stc, &["checkout", "-q", "-f", "--detach", &remote])
                    .unwrap_or_default()
            }
        };
        // Every branch of this pipeline but the last good one: those recorded,
        // and the failed stage's, made before it failed and never recorded
        // (a clone whose cherry-pick did not apply).
        let mut branches: Vec<String> = stc.branches.values().cloned().collect();
        let listed = hub_git(
            env,
            stc,
            &[
                "branch",
                "--list",
                "--format=%(refname:short)",
                &format!("commitly/*/{}", stc.pipeline_id),
            ],
        )
        .unwrap_or_default();
        for b in listed.lines().map(str::trim).filter(|b| !b.is_empty()) {
            if !branches.iter().any(|x| x == b) {
                branches.push(b.to_owned());
            }
        }
        let mut deleted = Vec::new();
        for b in &branches {
            if Some(b) != last_good.as_ref()
                && hub_git(env, stc, &["branch", "-q", "-D", b]).is_ok()
            {
                deleted.push(b.clone());
            }
        }
        let _ = hub_git(
            env,
            stc,
            &["update-ref", "-d", &format!("refs/commitly/local/{}", stc.pipeline_id)],
        );
        Ok(json!({ "rollbackBranch": last_good, "deleted": deleted }))
    })?;
    let deleted: Vec<String> = serde_json::from_value(done["deleted"].clone()).unwrap_or_default();
    for b in &deleted {
        s.branches.retain(|_, v| v != b);
    }
    err.rollback_branch = last_good.clone();
    s.rollback_point = last_good.clone();
    let log = json!({
        "pipeline_id": s.pipeline_id,
        "failed_agent": agent_name(&err.failed_stage),
        "error_type": err.code,
        "error_message": err.message,
        "stack_trace": "",
        "timestamp": stdx::rfc3339_utc(stdx::now_ms()),
        "hub_branch": err.hub_branch,
        "rollback_branch": err.rollback_branch,
    });
    let logs = hub_logs(env, &s);
    cx.effect("rollback:log", || {
        let path = logs
            .error(&err.failed_stage, &log)
            .map_err(|e| NodeError::new(e.code().as_str(), e.to_string()))?;
        Ok(json!(path.display().to_string()))
    })?;
    if env.config.logging.cleanup_hub_on_failure {
        let hub = env.layout.hub.clone();
        cx.effect("rollback:hub", || {
            let _ = std::fs::remove_dir_all(&hub);
            Ok(Value::Null)
        })?;
    }
    s.error = Some(err.clone());
    cx.emit(RunEventKind::RolledBack {
        failed_stage: err.failed_stage.clone(),
        code: err.code.clone(),
        rollback_branch: err.rollback_branch.clone(),
    });
    if slack::enabled(&env.config.slack) {
        let text = summary_text(&s);
        let posted = cx.effect("notify:failure", || {
            Ok(serde_json::to_value(slack::post(&env.config.slack, &text, &env.rt))
                .unwrap_or(Value::Null))
        })?;
        s.results.notify = serde_json::from_value(posted).ok();
        // Seed §9.1: a rejected push goes on to the Slack agent; its post is
        // that stage's work, and its status says how it went.
        let status = s.results.notify.as_ref().map_or(StageStatus::Failed, |n| n.status);
        s.stage_status.insert(stages::NOTIFY.to_owned(), status);
    }
    write_cache(&env.layout, &s, None);
    let error = NodeError::new(err.code.clone(), format!("{}: {}", err.failed_stage, err.message));
    Ok(NodeOutcome::Fail { state: RunState(s), error })
}

/// Runs a project command once per run and key (a resumed node finds its
/// result), in the sandbox over the hub.
fn command_effect(
    env: &Env,
    s: &PipelineState,
    cx: &mut NodeContext<'_>,
    key: &str,
    line: &str,
) -> std::result::Result<CommandSummary, Failure> {
    let stage = s.current_stage.clone();
    let logs = hub_logs(env, s);
    logs.stage(&stage, &format!("$ {line}"));
    let cancel = cx.cancellation_token().clone();
    let v = cx.effect(key, || {
        let r = run_command(env, line, &cancel)?;
        Ok(serde_json::to_value(r).unwrap_or(Value::Null))
    })?;
    let r: CommandSummary = serde_json::from_value(v)
        .map_err(|e| Failure::new(ErrorCode::Internal, format!("command result: {e}")))?;
    logs.stage(
        &stage,
        &format!("exit {:?} in {} ms\n{}", r.exit_code, r.duration_ms, r.output_tail),
    );
    Ok(r)
}

fn run_command(
    env: &Env,
    line: &str,
    cancel: &stdx::CancellationToken,
) -> std::result::Result<CommandSummary, Failure> {
    let commands = env.commands.as_ref().ok_or_else(|| {
        Failure::new(
            ErrorCode::SandboxUnavailable,
            "the sandbox settings are invalid: no command can run (see `ironbees config show`)",
        )
    })?;
    let sandbox = commands.sandbox()?;
    let mut policy = commands.policy.clone();
    policy.timeout = Some(Duration::from_secs(env.config.execution.timeout.unwrap_or(300)));
    policy.memory_bytes = Some(env.config.execution.max_memory.unwrap_or(2048) << 20);
    let req = sandbox::RunRequest {
        argv: vec!["sh".into(), "-c".into(), line.to_owned()],
        workspace: env.layout.hub.clone(),
        cwd: None,
        env: commands.env.clone(),
        env_removed: commands.env_removed.clone(),
        stdin: sandbox::StdinMode::Null,
    };
    let hooks = sandbox::Hooks { on_output: None, cancel: Some(cancel) };
    let r =
        sandbox.run(&req, &policy, &hooks).map_err(|e| Failure::new(e.code(), e.to_string()))?;
    let mut output = r.stdout.text.clone();
    if !r.stderr.text.is_empty() {
        output.push_str(&r.stderr.text);
    }
    let tail: String = {
        let lines: Vec<&str> = output.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    };
    Ok(CommandSummary {
        command: line.to_owned(),
        success: r.success(),
        exit_code: r.exit_code,
        limit: r.limit.map(|l| format!("{l:?}").to_lowercase()),
        duration_ms: r.duration_ms,
        output_tail: stdx::clip(&tail, 4000).into_owned(),
    })
}

/// What the code and test commands wrote in the hub is not the project's: gone
/// before the next stage.
fn discard_outputs(env: &Env, s: &PipelineState) -> std::result::Result<(), Failure> {
    hub_git(env, s, &["reset", "-q", "--hard"])?;
    hub_git(env, s, &["clean", "-fdq"])?;
    Ok(())
}

/// Seed §2.1, §6: the stage's result as `cache/<agent>.json` (the latest
/// pipeline's) and `cache/<id>/<agent>.json`, and the whole state as
/// `run_context.json`. A cache that cannot be written is logged, not fatal: the
/// run store holds the same.
fn write_cache(layout: &Layout, s: &PipelineState, stage: Option<&str>) {
    let dir = layout.cache_dir();
    let per_run = dir.join(&s.pipeline_id);
    let mut files: Vec<(String, Value)> =
        vec![("run_context".into(), serde_json::to_value(s).unwrap_or(Value::Null))];
    if let Some(stage) = stage {
        let r = &s.results;
        let v = match stage {
            stages::CLONE => serde_json::to_value(&r.clone),
            stages::CODE => serde_json::to_value(&r.code),
            stages::TEST => serde_json::to_value(&r.test),
            stages::REFACTOR => serde_json::to_value(&r.refactor),
            stages::SYNC => serde_json::to_value(&r.sync),
            _ => serde_json::to_value(&r.notify),
        };
        files.push((agent_name(stage), v.unwrap_or(Value::Null)));
    }
    for (name, value) in files {
        let text = serde_json::to_string_pretty(&value).unwrap_or_default();
        for d in [&dir, &per_run] {
            let path = d.join(format!("{name}.json"));
            let write = std::fs::create_dir_all(d)
                .and_then(|()| stdx::atomic_write(&path, text.as_bytes()));
            if let Err(e) = write {
                tracing::warn!(path = %path.display(), error = %e, "pipeline cache not written");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approvals_are_answered_by_the_flag_a_human_or_nobody_yet() {
        let human = |approved| Some(PipelineApproval { approved, by: Some("human".into()) });
        let auto = Some(PipelineApproval { approved: true, by: Some("auto".into()) });
        type Want = Result<Option<PipelineApproval>, ()>;
        let cases: [(bool, Option<Value>, Want); 5] = [
            (false, None, Ok(None)),
            (true, None, Ok(auto.clone())),
            (true, Some(json!({"approved": false, "by": "human"})), Ok(auto)),
            (false, Some(json!({"approved": false, "by": "human"})), Ok(human(false))),
            (false, Some(json!({"ok": true})), Err(())),
        ];
        for (auto, input, want) in cases {
            assert_eq!(decide(auto, input.as_ref()).map_err(|_| ()), want, "{auto} {input:?}");
        }
    }
}
