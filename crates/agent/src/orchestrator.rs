//! The coding orchestrator: the graph of seed 000 §3.1.3 on the workflow engine,
//! and the calls a driver makes (start, answer a gate, resume, cancel, list,
//! inspect).

use std::{path::PathBuf, sync::Arc, time::Duration};

use engine::{Registry, Session};
use llm::Llm;
use protocol::{
    ApprovalDecision, CheckpointMeta, CodingState, RunEvent, RunOutcome, RunSettings, RunStatus,
    RunSummary, nodes,
};
use serde::{Deserialize, Serialize};
use workflow::{
    CheckpointStore, EventSink, PolicyDecision, RunFilter, RunInfo, RunOptions, Runner,
    SqliteStore, WorkflowState,
};

use crate::{
    AgentDef, AgentSet, GraphSpec,
    error::{Error, Result},
    nodes as n, policy,
};

/// The kind runs of this orchestrator have in the store (the commit pipeline's
/// runs have another).
pub const RUN_KIND: &str = "agent";

/// The workflow state: the seed's `CodingState`, checkpointed as it is.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct RunState(pub(crate) CodingState);

impl WorkflowState for RunState {
    fn iteration(&self) -> u32 {
        self.0.iteration_count
    }
}

/// What every node shares: the project's session, the model, the agents, the
/// tools, and the runtime to wait on the model with (nodes are blocking
/// functions: they wait with `Handle::block_on` on the driver's runtime, from the
/// thread that drives the run, which must not be one of the runtime's own).
pub(crate) struct Shared {
    pub(crate) session: Arc<Session>,
    /// `None` for an orchestrator that only reads, cancels or lists runs.
    pub(crate) llm: Option<Arc<Llm>>,
    pub(crate) agents: AgentSet,
    pub(crate) registry: Registry,
    pub(crate) rt: tokio::runtime::Handle,
    /// Where runs build and test their overlays (`runs/work/<run-id>`).
    pub(crate) work_dir: PathBuf,
    /// The rules CRITIC checks each round's change against.
    pub(crate) guardrails: Option<guard::RuleSet>,
    /// Agents at one point of the graph, and a task graph's independent steps,
    /// run at the same time (`agent.parallelAgentExecution`).
    pub(crate) parallel: bool,
}

impl Shared {
    pub(crate) fn llm(&self) -> std::result::Result<&Llm, workflow::NodeError> {
        self.llm.as_deref().ok_or_else(|| {
            workflow::NodeError::new(
                protocol::ErrorCode::LlmUnavailable.as_str(),
                "no model provider is configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or \
                 OPENAI_BASE_URL for a local server), then `ironbees runs resume ID`",
            )
        })
    }

    pub(crate) fn agent(&self, name: &str) -> std::result::Result<&AgentDef, workflow::NodeError> {
        self.agents.get(name).ok_or_else(|| {
            workflow::NodeError::new(
                "AGENT_EXECUTION_FAILED",
                format!("no agent named `{name}` (built-in agents can be overridden, not removed)"),
            )
        })
    }
}

/// Agent mode over one project.
pub struct Orchestrator {
    shared: Arc<Shared>,
    runner: Runner<RunState>,
}

impl Orchestrator {
    /// An orchestrator for `session`'s project, its runs stored under
    /// `.ironbees/runs/`. With a model, checks that every agent the graph needs
    /// asks only for tools the registry has (`TOOL_NOT_FOUND`, saying why when a
    /// configured server did not start). Without a model (`None`) it lists, shows
    /// and cancels runs; a node that needs the model fails with `LLM_UNAVAILABLE`.
    /// `rt`: the runtime model calls are awaited on (drive runs from threads
    /// outside it: the CLI's main thread, a server's blocking pool).
    /// `registry`: the tools agents may be given, the built-in ones and the
    /// configured servers' (`host::Host::tools`), whose servers the caller
    /// keeps running while runs execute.
    pub fn open(
        session: Arc<Session>,
        llm: Option<Arc<Llm>>,
        agents: AgentSet,
        registry: Registry,
        rt: tokio::runtime::Handle,
    ) -> Result<Orchestrator> {
        let store = Arc::new(SqliteStore::open(&session.layout().runs_dir())?);
        let spec = GraphSpec::default();
        Orchestrator::open_with_store(session, llm, agents, registry, rt, &spec, store)
    }

    /// [`open`](Self::open) with a project's custom nodes in the coding graph
    /// (checked here: unknown agents, places and next nodes are errors) over a
    /// given store: runs, checkpoints, events and the work queue live there
    /// (PostgreSQL for replicas that share runs). The build copies
    /// (`runs/work/<run>`) stay under this project's `.ironbees/`.
    pub fn open_with_store(
        session: Arc<Session>,
        llm: Option<Arc<Llm>>,
        agents: AgentSet,
        registry: Registry,
        rt: tokio::runtime::Handle,
        spec: &GraphSpec,
        store: Arc<dyn CheckpointStore>,
    ) -> Result<Orchestrator> {
        let placed = spec.place(&agents)?;
        let used = placed.iter().flat_map(|p| p.members.iter().map(|m| m.agent.as_str()));
        // An orchestrator that only reads runs needs no tools (nor their servers).
        for name in ["planner", "coder", "validator", "critic", "answerer"].into_iter().chain(used)
        {
            if let (Some(a), Some(_)) = (agents.get(name), &llm) {
                a.validate_tools(&registry)?;
            }
        }
        let runs = session.layout().runs_dir();
        let shared = Arc::new(Shared {
            session,
            llm,
            agents,
            registry,
            rt,
            work_dir: runs.join("work"),
            guardrails: spec.guardrails.clone(),
            parallel: spec.parallel,
        });
        let graph = Arc::new(crate::graph::build(&shared, &placed).build()?);
        let runner = Runner::new(graph, store).with_kind(RUN_KIND).with_policy(
            |node: &str, s: &RunState, run: &RunInfo<'_>| match policy::pause_before(
                node,
                &s.0,
                run.elapsed,
            ) {
                None => PolicyDecision::Proceed,
                Some(reason) => {
                    let mut state = s.clone();
                    state.0.pause_reason = Some(reason.clone());
                    PolicyDecision::Divert { to: nodes::WAIT_HUMAN.to_owned(), state, reason }
                }
            },
        );
        Ok(Orchestrator { shared, runner })
    }

    /// Every event, as it is stored, goes to `sink` too (a CLI's progress display
    /// or JSON Lines).
    pub fn with_events(mut self, sink: EventSink) -> Orchestrator {
        self.runner = self.runner.with_events(sink);
        self
    }

    /// Starts a run for `request` and executes it until it ends or waits for a
    /// human. `cancel` (a Ctrl-C) ends it `cancelled`, nothing applied.
    pub fn start(&self, request: &str, settings: RunSettings, drive: Drive) -> Result<RunOutcome> {
        let state = initial_state(request, &settings)?;
        let metadata = serde_json::json!({ "request": stdx::clip(request.trim(), 200) });
        let opts = RunOptions { metadata, ..drive.options() };
        let report = self.runner.start(None, RUN_KIND, RunState(state), opts)?;
        Ok(outcome(report))
    }

    /// Creates a run for `request` without executing it: it is `queued` until
    /// [`drive`](Self::drive) runs it (here, in another thread, or in another
    /// process). Returns its summary (the id to drive, answer and follow it by).
    pub fn create(&self, request: &str, settings: RunSettings) -> Result<RunSummary> {
        let state = initial_state(request, &settings)?;
        let metadata = serde_json::json!({ "request": stdx::clip(request.trim(), 200) });
        Ok(self.runner.create(None, RUN_KIND, RunState(state), metadata)?)
    }

    /// Executes a run from where it stands until it ends or waits for a human:
    /// a queued run from its start; with `decision`, the answer to the gate it
    /// waits at; without, after a crash, a failure or a pause (a waiting gate
    /// asks again). A finished run is `INVALID_STATE`; one another execution
    /// holds is `BUSY`.
    pub fn drive(
        &self,
        run_id: &str,
        decision: Option<&ApprovalDecision>,
        drive: Drive,
    ) -> Result<RunOutcome> {
        let input = decision.map(|d| serde_json::to_value(d).unwrap_or_default());
        let report = self.runner.resume_with(run_id, input, drive.options())?;
        Ok(outcome(report))
    }

    /// [`drive`](Self::drive) with only a cancellation token.
    pub fn resume(
        &self,
        run_id: &str,
        decision: Option<&ApprovalDecision>,
        cancel: Option<stdx::CancellationToken>,
    ) -> Result<RunOutcome> {
        self.drive(run_id, decision, Drive { cancel, ..Drive::default() })
    }

    /// The run a person's word names: a run id, a unique prefix of one, or a
    /// checkpoint's `stateId`.
    pub fn resolve(&self, word: &str) -> Result<String> {
        Ok(self.runner.resolve(word)?)
    }

    /// Follows a run's events after `after_seq`: the stored ones, then new ones as
    /// any process writes them.
    pub fn subscribe(&self, run_id: &str, after_seq: u64) -> workflow::Subscription {
        self.runner.subscribe(run_id, after_seq)
    }

    /// Cancels a run: one waiting or left by a crash ends now; one another process
    /// executes stops at its next check (`running` is answered). Nothing of its
    /// overlay is applied; its build directory is removed.
    pub fn cancel(&self, run_id: &str) -> Result<RunStatus> {
        let status = self.runner.cancel(run_id)?;
        if status == RunStatus::Cancelled {
            n::remove_workspace(&self.shared, run_id);
        }
        Ok(status)
    }

    /// Agent runs, most recently updated first.
    pub fn list(&self, limit: Option<usize>) -> Result<Vec<RunSummary>> {
        self.runs(RunFilter { limit, ..RunFilter::default() })
    }

    /// Agent runs by status, a page at a time, most recently updated first (the
    /// filter's kind is always this orchestrator's).
    pub fn runs(&self, filter: RunFilter) -> Result<Vec<RunSummary>> {
        let filter = RunFilter { kind: Some(RUN_KIND.to_owned()), ..filter };
        Ok(self.runner.list_runs(&filter)?)
    }

    /// The run's latest checkpoint and state.
    pub fn state(&self, run_id: &str) -> Result<Option<(CheckpointMeta, CodingState)>> {
        Ok(self.runner.state(run_id)?.map(|(cp, s)| (cp.meta, s.0)))
    }

    /// One checkpoint of the run (`seq`) and the state it holds.
    pub fn state_at(
        &self,
        run_id: &str,
        seq: u64,
    ) -> Result<Option<(CheckpointMeta, CodingState)>> {
        let Some(cp) = self.runner.store().checkpoint(run_id, seq)? else { return Ok(None) };
        let state: RunState = serde_json::from_value(cp.state)
            .map_err(|source| workflow::Error::State { run_id: run_id.to_owned(), source })?;
        Ok(Some((cp.meta, state.0)))
    }

    /// The store runs live in (the work queue of a server is there too).
    pub fn store(&self) -> &Arc<dyn CheckpointStore> {
        self.runner.store()
    }

    /// The run's summary (status, node, metadata).
    pub fn summary(&self, run_id: &str) -> Result<Option<RunSummary>> {
        Ok(self.runner.store().run(run_id)?)
    }

    /// The run's events after `after_seq` (0: all), oldest first: its trajectory.
    pub fn events(&self, run_id: &str, after_seq: u64) -> Result<Vec<RunEvent>> {
        Ok(self.runner.events(run_id, after_seq)?)
    }

    /// Every checkpoint of the run, oldest first.
    pub fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        Ok(self.runner.history(run_id)?)
    }
}

/// How one execution of a run is driven: the caller's cancellation (a Ctrl-C, a
/// server shutting down) and where its events go as they are stored, besides
/// the orchestrator's own listener.
#[derive(Default, Clone)]
pub struct Drive {
    pub cancel: Option<stdx::CancellationToken>,
    pub sink: Option<EventSink>,
    /// The checkpoint a decision answers (see `workflow::RunOptions::answers`):
    /// a queued answer that finds the run moved on is refused, not applied to
    /// another gate.
    pub answers: Option<u64>,
    /// Stops before the next node, leaving the run resumable by any process (a
    /// server shutting down), where `cancel` would end it.
    pub stop: Option<stdx::CancellationToken>,
}

impl Drive {
    fn options(self) -> RunOptions {
        RunOptions {
            cancel: self.cancel,
            sink: self.sink,
            answers: self.answers,
            stop: self.stop,
            ..options()
        }
    }
}

fn initial_state(request: &str, settings: &RunSettings) -> Result<CodingState> {
    let request = request.trim();
    if request.is_empty() {
        return Err(Error::InvalidRequest(
            "the request is empty: say what to do, e.g. \"Fix the division by zero in calculate()\""
                .into(),
        ));
    }
    if settings.max_iterations == 0 {
        return Err(Error::InvalidRequest("max iterations must be at least 1".into()));
    }
    Ok(CodingState::new(String::new(), request, settings.clone()))
}

/// How every execution runs. The time limit is a policy (a pause in WAIT_HUMAN
/// with the reason), not the engine's execution timeout, which would pause at
/// whatever node is next; a model or sandbox failure the node calls retryable gets
/// two more tries, after 2 s and 4 s.
fn options() -> RunOptions {
    RunOptions { node_retries: 2, retry_backoff: Duration::from_secs(2), ..RunOptions::default() }
}

fn outcome(report: workflow::RunReport<RunState>) -> RunOutcome {
    let mut state = report.state.0;
    state.state_id = report.checkpoint.state_id.clone();
    RunOutcome { run_id: report.run_id, status: report.status, state }
}

/// Reads a human's answer given as JSON (`{"approved": true, "feedback": "..."}`).
pub fn parse_decision(v: &serde_json::Value) -> Result<ApprovalDecision> {
    serde_json::from_value(v.clone()).map_err(|e| {
        Error::InvalidRequest(format!(
            "not an approval decision ({e}): expected {{\"approved\": true|false, \"feedback\": \"...\", \"editedContent\": \"...\"}}"
        ))
    })
}
