//! The runner: executes a run node by node on the caller's thread, checkpointing
//! every transition, until the end, a wait, a failure, a cancellation or a limit.

use std::{
    panic::{AssertUnwindSafe, catch_unwind},
    sync::{Arc, mpsc},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use protocol::{CheckpointMeta, ErrorCode, RunEvent, RunEventKind, RunStatus, RunSummary};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{
    error::{Error, Result},
    failpoint,
    graph::{CompiledGraph, END},
    hub::{EventHub, Subscription},
    node::{NodeContext, NodeError, NodeOutcome, WorkflowState},
    policy::{Policy, PolicyDecision, RunInfo, limits},
    store::{Checkpoint, CheckpointStore, RunFilter, RunLock, validate_run_id},
};

/// Receives every event after it is stored, on the executing thread (keep it
/// quick: hand off to a channel for slow consumers).
pub type EventSink = Arc<dyn Fn(&RunEvent) + Send + Sync>;

/// How one execution (a `start` or `resume` call) runs.
#[derive(Clone)]
pub struct RunOptions {
    /// The caller's data about the run, stored with it at `start` (ignored by
    /// `resume`).
    pub metadata: Value,
    /// Wall-clock time for this execution, checked before each node: when it has
    /// passed, the run pauses (`waiting`) at the node it would run next. A node
    /// already running is not interrupted.
    pub timeout: Option<Duration>,
    /// Nodes this execution may run before it pauses.
    pub max_steps: Option<u32>,
    /// The caller's cancellation (a Ctrl-C). Cancelling ends the run `cancelled`.
    pub cancel: Option<CancellationToken>,
    /// How many times a node that fails with a retryable error runs again within
    /// this execution before the run fails.
    pub node_retries: u32,
    /// Wait before the first retry; doubled for each next one.
    pub retry_backoff: Duration,
    /// This execution's own listener (a CLI drawing the run it drives), besides
    /// the runner's.
    pub sink: Option<EventSink>,
    /// `resume` only: the checkpoint `seq` the input was given for (a human who
    /// answered the gate they saw). When the run has moved past it, the input is
    /// stale: a run a crash left `running` is resumed without it (its own
    /// checkpoint kept the input it was running with), anything else is
    /// `InvalidState`. A work queue's job that is claimed again after its process
    /// died is thus neither lost nor applied twice.
    pub answers: Option<u64>,
    /// Stops the execution before its next node, leaving the run `running` and
    /// unheld, exactly as a crash there would (a server shutting down: any
    /// process may resume it from that checkpoint). Unlike `cancel`, the run is
    /// not ended.
    pub stop: Option<CancellationToken>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("metadata", &self.metadata)
            .field("timeout", &self.timeout)
            .field("max_steps", &self.max_steps)
            .field("node_retries", &self.node_retries)
            .field("retry_backoff", &self.retry_backoff)
            .field("sink", &self.sink.is_some())
            .field("answers", &self.answers)
            .field("stop", &self.stop.as_ref().map(CancellationToken::is_cancelled))
            .finish_non_exhaustive()
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            metadata: Value::Null,
            timeout: None,
            max_steps: None,
            cancel: None,
            node_retries: 2,
            retry_backoff: Duration::from_millis(200),
            sink: None,
            answers: None,
            stop: None,
        }
    }
}

/// How an execution ended: the run's status, its latest checkpoint and state.
#[derive(Debug, Clone)]
pub struct RunReport<S> {
    pub run_id: String,
    pub status: RunStatus,
    pub checkpoint: CheckpointMeta,
    pub state: S,
    /// Nodes run by this execution.
    pub steps: u32,
}

/// Runs workflows of one graph over one store.
pub struct Runner<S> {
    graph: Arc<CompiledGraph<S>>,
    store: Arc<dyn CheckpointStore>,
    /// The kind of run this graph drives; others in the store are refused.
    kind: Option<String>,
    policies: Vec<Arc<dyn Policy<S>>>,
    sink: Option<EventSink>,
    hub: Arc<EventHub>,
    cancel_poll: Duration,
}

impl<S: WorkflowState> Runner<S> {
    pub fn new(graph: Arc<CompiledGraph<S>>, store: Arc<dyn CheckpointStore>) -> Runner<S> {
        Runner {
            graph,
            store,
            kind: None,
            policies: Vec::new(),
            sink: None,
            hub: Arc::new(EventHub::default()),
            cancel_poll: Duration::from_millis(100),
        }
    }

    /// Drives only runs of `kind`: `start` and `create` give new runs this kind,
    /// and `resume` and `cancel` refuse a run of another kind (another graph's:
    /// its state is not this graph's state, and its nodes are not these nodes)
    /// with `InvalidState`.
    pub fn with_kind(mut self, kind: &str) -> Runner<S> {
        self.kind = Some(kind.to_owned());
        self
    }

    /// Shares `hub` with other runners of this process, so a subscription made
    /// through any of them wakes at once on the events of all.
    pub fn with_hub(mut self, hub: Arc<EventHub>) -> Runner<S> {
        self.hub = hub;
        self
    }

    /// Adds a policy, asked before every node after the ones added earlier.
    pub fn with_policy(mut self, policy: impl Policy<S> + 'static) -> Runner<S> {
        self.policies.push(Arc::new(policy));
        self
    }

    pub fn with_events(mut self, sink: EventSink) -> Runner<S> {
        self.sink = Some(sink);
        self
    }

    /// How often a running node's execution looks for a cancel request in the
    /// store (from another process); 100 ms by default.
    pub fn with_cancel_poll(mut self, every: Duration) -> Runner<S> {
        self.cancel_poll = every;
        self
    }

    pub fn store(&self) -> &Arc<dyn CheckpointStore> {
        &self.store
    }

    /// Creates a run (`run_id`, or a fresh id) at the graph's entry and executes
    /// it. Fails with `RunExists` if the id is taken.
    pub fn start(
        &self,
        run_id: Option<&str>,
        kind: &str,
        initial: S,
        opts: RunOptions,
    ) -> Result<RunReport<S>> {
        let (mut exec, entry) = self.new_run(run_id, kind, &initial, opts, RunStatus::Running)?;
        self.drive(&mut exec, entry, initial, None)
    }

    /// Creates a run (`run_id`, or a fresh id) at the graph's entry without
    /// executing it: it is `queued` until an execution (`resume`, in this process
    /// or another) drives it. Fails with `RunExists` if the id is taken.
    pub fn create(
        &self,
        run_id: Option<&str>,
        kind: &str,
        initial: S,
        metadata: Value,
    ) -> Result<RunSummary> {
        let opts = RunOptions { metadata, ..RunOptions::default() };
        let (exec, _) = self.new_run(run_id, kind, &initial, opts, RunStatus::Queued)?;
        self.store
            .run(&exec.journal.run_id)?
            .ok_or_else(|| Error::RunNotFound { run_id: exec.journal.run_id.clone() })
    }

    /// Writes a new run with its first checkpoint (`status` at the entry node);
    /// the execution that holds its lock, and the entry.
    fn new_run(
        &self,
        run_id: Option<&str>,
        kind: &str,
        initial: &S,
        opts: RunOptions,
        status: RunStatus,
    ) -> Result<(Exec, String)> {
        let run_id = match run_id {
            Some(id) => {
                validate_run_id(id)?;
                id.to_owned()
            }
            None => new_run_id(),
        };
        let kind = self.kind.as_deref().unwrap_or(kind);
        let lock = self.store.try_lock_run(&run_id)?;
        let now = now_ms();
        let entry = self.graph.entry().to_owned();
        let mut exec = self.exec(lock, &run_id, kind, now, 1, 1, opts);
        let cp = exec.row(&entry, initial, status.clone(), None)?;
        let summary = RunSummary {
            id: run_id.clone(),
            kind: kind.to_owned(),
            created_ms: now,
            updated_ms: now,
            status,
            node: entry.clone(),
            seq: 1,
            cancel_requested: false,
            metadata: exec.opts.metadata.clone(),
        };
        let events = exec.journal.events(vec![
            RunEventKind::RunStarted { run_kind: kind.to_owned(), entry: entry.clone() },
            checkpoint_event(&cp.meta),
        ]);
        self.store.create_run(&summary, &cp, &events)?;
        exec.journal.commit_events(&events);
        exec.next_cp += 1;
        failpoint::hit("run created");
        tracing::debug!(run = %run_id, kind, "workflow run created");
        Ok((exec, entry))
    }

    /// The run ids `word` may mean (a run id, a unique prefix of one, or a
    /// checkpoint's `stateId`): exactly one, or `RunNotFound`, or `InvalidState`
    /// listing the candidates.
    pub fn resolve(&self, word: &str) -> Result<String> {
        let mut found = self.store.find_runs(word, 6)?;
        match found.len() {
            0 => Err(Error::RunNotFound { run_id: word.to_owned() }),
            1 => Ok(found.remove(0)),
            _ => Err(Error::Ambiguous { word: word.to_owned(), candidates: found }),
        }
    }

    /// Follows the run's events after `after_seq`: stored ones first, then new
    /// ones as any process writes them.
    pub fn subscribe(&self, run_id: &str, after_seq: u64) -> Subscription {
        Subscription {
            store: self.store.clone(),
            hub: self.hub.clone(),
            run_id: run_id.to_owned(),
            cursor: after_seq,
            poll: Duration::from_millis(200),
        }
    }

    fn check_kind(&self, summary: &RunSummary) -> Result<()> {
        match &self.kind {
            Some(k) if *k != summary.kind => Err(Error::InvalidState {
                run_id: summary.id.clone(),
                message: format!(
                    "it is a {} run, and this drives {k} runs only (see its own commands)",
                    summary.kind
                ),
            }),
            _ => Ok(()),
        }
    }

    /// [`resume_with`](Self::resume_with) with default options.
    pub fn resume(&self, run_id: &str, input: Option<Value>) -> Result<RunReport<S>> {
        self.resume_with(run_id, input, RunOptions::default())
    }

    /// Continues a run from its latest checkpoint: after an interrupt or a pause
    /// (the waiting node runs again, `input` in its `resume_input`), a failure (the
    /// failed node runs again), or a crash (the node recorded next runs, with the
    /// input of the resume it was running for, if any). A finished run is
    /// `InvalidState`; a run another execution holds is `Busy`.
    pub fn resume_with(
        &self,
        run_id: &str,
        input: Option<Value>,
        opts: RunOptions,
    ) -> Result<RunReport<S>> {
        validate_run_id(run_id)?;
        let lock = self.store.try_lock_run(run_id)?;
        let not_found = || Error::RunNotFound { run_id: run_id.to_owned() };
        let summary = self.store.run(run_id)?.ok_or_else(not_found)?;
        self.check_kind(&summary)?;
        let latest = self.store.latest_checkpoint(run_id)?.ok_or_else(not_found)?;
        if latest.meta.status.is_finished() {
            return Err(Error::InvalidState {
                run_id: run_id.to_owned(),
                message: match latest.meta.status {
                    RunStatus::Cancelled => "the run was cancelled; it cannot be resumed".into(),
                    _ => "the run has succeeded; it cannot be resumed".into(),
                },
            });
        }
        if self.graph.node(&latest.meta.node).is_none() {
            return Err(Error::InvalidState {
                run_id: run_id.to_owned(),
                message: format!(
                    "the run is at node {}, which this graph does not have",
                    latest.meta.node
                ),
            });
        }
        let mut input = input;
        if let Some(at) = opts.answers.filter(|&at| at != latest.meta.seq) {
            if latest.meta.status != RunStatus::Running {
                return Err(Error::InvalidState {
                    run_id: run_id.to_owned(),
                    message: format!(
                        "the answer was for checkpoint {at}, and the run has moved on to {} ({})",
                        latest.meta.seq,
                        latest.meta.status.name()
                    ),
                });
            }
            input = None;
        }
        let state = self.decode(run_id, latest.state.clone())?;
        let input = input.or(match latest.meta.status {
            RunStatus::Running => latest.input,
            _ => None,
        });
        let next_event = self.store.last_event_seq(run_id)? + 1;
        let mut exec = self.exec(
            lock,
            run_id,
            &summary.kind,
            summary.created_ms,
            latest.meta.seq + 1,
            next_event,
            opts,
        );
        let node = latest.meta.node;
        if latest.meta.status == RunStatus::Queued && input.is_none() {
            // A run's first execution: it starts where `create` left it.
            exec.checkpoint(&node, &state, RunStatus::Running, None, vec![], vec![])?;
            tracing::debug!(run = %run_id, node, "workflow run started");
        } else {
            let resumed = RunEventKind::RunResumed { node: node.clone(), input: input.clone() };
            let (i, before) = (input.clone(), vec![resumed]);
            exec.checkpoint(&node, &state, RunStatus::Running, i, before, vec![])?;
            tracing::debug!(run = %run_id, node, "workflow run resumed");
        }
        self.drive(&mut exec, node, state, input)
    }

    /// Cancels a run. A run no process executes (waiting, failed, or left by a
    /// crash) ends `cancelled` now, with a final checkpoint. A run another
    /// execution holds gets the store's cancel flag and ends `cancelled` at its next
    /// check (between nodes, or within a node that polls `is_cancelled`); the answer
    /// is then `running`. A finished run is left as it is and its status returned.
    pub fn cancel(&self, run_id: &str) -> Result<RunStatus> {
        let summary = self
            .store
            .run(run_id)?
            .ok_or_else(|| Error::RunNotFound { run_id: run_id.to_owned() })?;
        self.check_kind(&summary)?;
        if summary.status.is_finished() {
            return Ok(summary.status);
        }
        self.store.request_cancel(run_id)?;
        let lock = match self.store.try_lock_run(run_id) {
            Ok(lock) => lock,
            Err(Error::Busy { .. }) => return Ok(RunStatus::Running),
            Err(e) => return Err(e),
        };
        let latest = self
            .store
            .latest_checkpoint(run_id)?
            .ok_or_else(|| Error::RunNotFound { run_id: run_id.to_owned() })?;
        if latest.meta.status.is_finished() {
            return Ok(latest.meta.status);
        }
        let next_event = self.store.last_event_seq(run_id)? + 1;
        let mut exec = self.exec(
            lock,
            run_id,
            &summary.kind,
            summary.created_ms,
            latest.meta.seq + 1,
            next_event,
            RunOptions::default(),
        );
        let cp = Checkpoint {
            meta: CheckpointMeta {
                status: RunStatus::Cancelled,
                seq: exec.next_cp,
                state_id: state_id(run_id, exec.next_cp),
                time_ms: now_ms(),
                ..latest.meta
            },
            state: latest.state,
            input: None,
        };
        exec.write(&cp, vec![], vec![RunEventKind::RunFinished { status: RunStatus::Cancelled }])?;
        Ok(RunStatus::Cancelled)
    }

    /// The run's latest checkpoint and its state.
    pub fn state(&self, run_id: &str) -> Result<Option<(Checkpoint, S)>> {
        match self.store.latest_checkpoint(run_id)? {
            None => Ok(None),
            Some(cp) => {
                let state = self.decode(run_id, cp.state.clone())?;
                Ok(Some((cp, state)))
            }
        }
    }

    /// Every checkpoint of the run, oldest first (states via the store's
    /// `checkpoint`).
    pub fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        self.store.checkpoints(run_id)
    }

    /// The run's events after `after_seq` (0 for all).
    pub fn events(&self, run_id: &str, after_seq: u64) -> Result<Vec<RunEvent>> {
        self.store.events(run_id, after_seq, usize::MAX)
    }

    pub fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>> {
        self.store.list_runs(filter)
    }

    fn decode(&self, run_id: &str, state: Value) -> Result<S> {
        serde_json::from_value(state)
            .map_err(|source| Error::State { run_id: run_id.to_owned(), source })
    }

    #[allow(clippy::too_many_arguments)] // one private constructor, called thrice
    fn exec(
        &self,
        lock: RunLock,
        run_id: &str,
        kind: &str,
        created_ms: i64,
        next_cp: u64,
        next_event: u64,
        opts: RunOptions,
    ) -> Exec {
        let cancel = opts.cancel.as_ref().map(CancellationToken::child_token).unwrap_or_default();
        let sinks = self.sink.iter().chain(opts.sink.iter()).cloned().collect();
        Exec {
            _lock: lock,
            journal: Journal {
                store: self.store.clone(),
                sinks,
                hub: self.hub.clone(),
                run_id: run_id.to_owned(),
                next_event,
            },
            kind: kind.to_owned(),
            created_ms,
            next_cp,
            cancel,
            opts,
            started: Instant::now(),
            steps: 0,
        }
    }

    /// Executes from `node` with `state` while a thread watches the store's cancel
    /// flag for the nodes (`NodeContext::is_cancelled`).
    fn drive(
        &self,
        exec: &mut Exec,
        node: String,
        state: S,
        input: Option<Value>,
    ) -> Result<RunReport<S>> {
        let (stop, stopped) = mpsc::channel::<()>();
        let (store, token, run_id, poll) = (
            self.store.clone(),
            exec.cancel.clone(),
            exec.journal.run_id.clone(),
            self.cancel_poll,
        );
        std::thread::scope(|scope| {
            scope.spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(poll) {
                    if token.is_cancelled() || store.cancel_requested(&run_id).unwrap_or(false) {
                        token.cancel();
                        return;
                    }
                }
            });
            let report = self.run_loop(exec, node, state, input);
            drop(stop);
            report
        })
    }

    fn run_loop(
        &self,
        exec: &mut Exec,
        mut node: String,
        mut state: S,
        mut input: Option<Value>,
    ) -> Result<RunReport<S>> {
        let mut diverts = 0usize;
        loop {
            if exec.cancelled()? {
                return exec.finish(&node, state, RunStatus::Cancelled);
            }
            if exec.opts.stop.as_ref().is_some_and(CancellationToken::is_cancelled) {
                // The latest checkpoint is (node, state, running): leave it so.
                let latest = exec.journal.store.latest_checkpoint(&exec.journal.run_id)?;
                let checkpoint = latest
                    .map(|c| c.meta)
                    .ok_or_else(|| Error::RunNotFound { run_id: exec.journal.run_id.clone() })?;
                tracing::debug!(run = %exec.journal.run_id, node, "workflow execution stopped");
                return Ok(exec.report(checkpoint, state));
            }
            match self.decide(exec, &node, &state) {
                PolicyDecision::Proceed => {}
                PolicyDecision::Pause { reason } => {
                    let status = RunStatus::Waiting { node: node.clone(), reason: reason.clone() };
                    let paused = RunEventKind::Paused { node: node.clone(), reason };
                    let cp = exec.checkpoint(&node, &state, status, None, vec![], vec![paused])?;
                    return Ok(exec.report(cp, state));
                }
                PolicyDecision::Divert { to, state: diverted, reason } if to == node => {
                    tracing::debug!(node, reason, "divert to the same node: proceed");
                    state = diverted;
                }
                PolicyDecision::Divert { to, state: diverted, reason } => {
                    diverts += 1;
                    let problem = if !self.graph.is_divert_target(&to) {
                        Some(format!(
                            "a policy diverted {node} to {to}, which is not a divert target \
                             of the graph (add_divert_target)"
                        ))
                    } else if diverts > self.graph.nodes().count() {
                        Some(format!("policies diverted {diverts} times without running a node"))
                    } else {
                        None
                    };
                    if let Some(message) = problem {
                        let code = ErrorCode::InvalidState.as_str().to_owned();
                        return exec.finish(&node, state, RunStatus::Failed { code, message });
                    }
                    let event =
                        RunEventKind::Diverted { from: node.clone(), to: to.clone(), reason };
                    exec.checkpoint(&to, &diverted, RunStatus::Running, None, vec![event], vec![])?;
                    (node, state, input) = (to, diverted, None);
                    continue;
                }
            }
            let outcome = self.run_node(exec, &node, &state, input.as_ref())?;
            exec.steps += 1;
            input = None;
            diverts = 0;
            match outcome {
                // A node cut short by the cancellation fails or asks to wait: the
                // run ends cancelled at it. A state it continues with is kept: the
                // check at the top of the loop ends the run at the next node.
                Err(_) | Ok(NodeOutcome::Interrupt { .. }) if exec.cancelled()? => {
                    return exec.finish(&node, state, RunStatus::Cancelled);
                }
                Ok(NodeOutcome::Fail { state: kept, .. }) if exec.cancelled()? => {
                    return exec.finish(&node, kept, RunStatus::Cancelled);
                }
                Ok(NodeOutcome::Fail { state: kept, error }) => {
                    let status = RunStatus::Failed { code: error.code, message: error.message };
                    return exec.finish(&node, kept, status);
                }
                Ok(NodeOutcome::Continue(next_state)) => {
                    match self.graph.next(&node, &next_state) {
                        Ok(next) if next == END => {
                            return exec.finish(END, next_state, RunStatus::Succeeded);
                        }
                        Ok(next) => {
                            exec.checkpoint(
                                &next,
                                &next_state,
                                RunStatus::Running,
                                None,
                                vec![],
                                vec![],
                            )?;
                            failpoint::hit("checkpoint committed");
                            (node, state) = (next, next_state);
                        }
                        Err(message) => {
                            let code = ErrorCode::InvalidState.as_str().to_owned();
                            return exec.finish(&node, state, RunStatus::Failed { code, message });
                        }
                    }
                }
                Ok(NodeOutcome::Interrupt { state: waiting, reason, payload }) => {
                    let status = RunStatus::Waiting { node: node.clone(), reason: reason.clone() };
                    let event = RunEventKind::Interrupted { node: node.clone(), reason, payload };
                    let cp = exec.checkpoint(&node, &waiting, status, None, vec![], vec![event])?;
                    return Ok(exec.report(cp, waiting));
                }
                Err(e) => {
                    let status = RunStatus::Failed { code: e.code, message: e.message };
                    return exec.finish(&node, state, status);
                }
            }
        }
    }

    /// The execution's limits, then the policies in order; the first that is not
    /// `Proceed` wins.
    fn decide(&self, exec: &Exec, node: &str, state: &S) -> PolicyDecision<S> {
        let info = RunInfo {
            run_id: &exec.journal.run_id,
            kind: &exec.kind,
            created_ms: exec.created_ms,
            steps: exec.steps,
            elapsed: exec.started.elapsed(),
        };
        if let Some(reason) = limits(exec.opts.timeout, exec.opts.max_steps, &info) {
            return PolicyDecision::Pause { reason };
        }
        for p in &self.policies {
            match p.before_node(node, state, &info) {
                PolicyDecision::Proceed => {}
                other => return other,
            }
        }
        PolicyDecision::Proceed
    }

    /// Runs one node, retrying retryable errors (from the state a `Fail` kept, if
    /// any); a panic is a failure (`INTERNAL`).
    fn run_node(
        &self,
        exec: &mut Exec,
        name: &str,
        state: &S,
        input: Option<&Value>,
    ) -> Result<Result<NodeOutcome<S>, NodeError>> {
        let node = self.graph.node(name).expect("checkpointed nodes are graph nodes");
        let mut attempt = 1;
        let mut state = state.clone();
        loop {
            exec.journal
                .write(None, vec![RunEventKind::NodeStarted { node: name.to_owned(), attempt }])?;
            failpoint::hit("node started");
            // One span per attempt: what the node does (model and tool calls)
            // nests under it when telemetry is exported.
            let span = tracing::info_span!(
                "workflow.node",
                otel.name = %format!("node {name}"),
                ironbees.node = name,
                ironbees.node.attempt = i64::from(attempt),
                ironbees.run.id = %exec.journal.run_id,
                ironbees.run.kind = %exec.kind,
                error.type = tracing::field::Empty,
                otel.status_code = tracing::field::Empty,
            );
            let _entered = span.enter();
            let mut cx = NodeContext {
                journal: &mut exec.journal,
                node: name,
                attempt,
                input,
                cancel: &exec.cancel,
                started: exec.started,
            };
            let result = catch_unwind(AssertUnwindSafe(|| node.run(state.clone(), &mut cx)))
                .unwrap_or_else(|panic| {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    Err(NodeError::new(
                        ErrorCode::Internal.as_str(),
                        format!("node {name} panicked: {what}"),
                    ))
                });
            let e = match &result {
                Err(e) | Ok(NodeOutcome::Fail { error: e, .. }) => e,
                Ok(_) => return Ok(result),
            };
            span.record("error.type", e.code.as_str());
            span.record("otel.status_code", "ERROR");
            let retrying =
                e.retryable && attempt <= exec.opts.node_retries && !exec.cancel.is_cancelled();
            exec.journal.write(
                None,
                vec![RunEventKind::NodeFailed {
                    node: name.to_owned(),
                    attempt,
                    code: e.code.clone(),
                    message: e.message.clone(),
                    retrying,
                }],
            )?;
            if !retrying {
                return Ok(result);
            }
            if let Ok(NodeOutcome::Fail { state: kept, .. }) = result {
                state = kept;
            }
            let backoff = exec.opts.retry_backoff.saturating_mul(1 << (attempt - 1).min(16));
            let deadline = Instant::now() + backoff;
            while Instant::now() < deadline && !exec.cancel.is_cancelled() {
                std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(20)));
            }
            attempt += 1;
        }
    }
}

/// One execution of one run: its lock, its counters, its journal.
struct Exec {
    _lock: RunLock,
    journal: Journal,
    kind: String,
    created_ms: i64,
    next_cp: u64,
    cancel: CancellationToken,
    opts: RunOptions,
    started: Instant,
    steps: u32,
}

impl Exec {
    /// The caller's token, or the store's flag (read here directly, so that a
    /// cancel between nodes is seen without waiting for the watcher).
    fn cancelled(&self) -> Result<bool> {
        if self.cancel.is_cancelled() {
            return Ok(true);
        }
        self.journal.store.cancel_requested(&self.journal.run_id)
    }

    /// The next checkpoint row.
    fn row<S: WorkflowState>(
        &self,
        node: &str,
        state: &S,
        status: RunStatus,
        input: Option<Value>,
    ) -> Result<Checkpoint> {
        let run_id = &self.journal.run_id;
        let json = serde_json::to_value(state)
            .map_err(|source| Error::State { run_id: run_id.clone(), source })?;
        Ok(Checkpoint {
            meta: CheckpointMeta {
                run_id: run_id.clone(),
                seq: self.next_cp,
                state_id: state_id(run_id, self.next_cp),
                node: node.to_owned(),
                iteration: state.iteration(),
                time_ms: now_ms(),
                status,
            },
            state: json,
            input,
        })
    }

    /// Writes a checkpoint with its `checkpoint` event, `before` and `after` it.
    fn checkpoint<S: WorkflowState>(
        &mut self,
        node: &str,
        state: &S,
        status: RunStatus,
        input: Option<Value>,
        before: Vec<RunEventKind>,
        after: Vec<RunEventKind>,
    ) -> Result<CheckpointMeta> {
        let cp = self.row(node, state, status, input)?;
        self.write(&cp, before, after)?;
        Ok(cp.meta)
    }

    fn write(
        &mut self,
        cp: &Checkpoint,
        mut before: Vec<RunEventKind>,
        after: Vec<RunEventKind>,
    ) -> Result<()> {
        before.push(checkpoint_event(&cp.meta));
        before.extend(after);
        self.journal.write(Some(cp), before)?;
        self.next_cp += 1;
        Ok(())
    }

    /// Ends the execution with a final checkpoint and `runFinished`.
    fn finish<S: WorkflowState>(
        &mut self,
        node: &str,
        state: S,
        status: RunStatus,
    ) -> Result<RunReport<S>> {
        let finished = RunEventKind::RunFinished { status: status.clone() };
        let cp = self.checkpoint(node, &state, status.clone(), None, vec![], vec![finished])?;
        tracing::debug!(run = %self.journal.run_id, status = status.name(), "workflow execution ended");
        Ok(self.report(cp, state))
    }

    fn report<S>(&self, checkpoint: CheckpointMeta, state: S) -> RunReport<S> {
        RunReport {
            run_id: self.journal.run_id.clone(),
            status: checkpoint.status.clone(),
            checkpoint,
            state,
            steps: self.steps,
        }
    }
}

/// Numbers and writes a run's events (to the store, then to the sink). Only the
/// holder of the run's lock has one, so the counter in memory is the truth.
pub(crate) struct Journal {
    pub(crate) store: Arc<dyn CheckpointStore>,
    sinks: Vec<EventSink>,
    hub: Arc<EventHub>,
    pub(crate) run_id: String,
    next_event: u64,
}

impl Journal {
    /// Numbers events from the next free `seq` (not yet taken: see `commit_events`).
    fn events(&self, kinds: Vec<RunEventKind>) -> Vec<RunEvent> {
        let time_ms = now_ms();
        kinds
            .into_iter()
            .zip(self.next_event..)
            .map(|(kind, seq)| RunEvent { run_id: self.run_id.clone(), seq, time_ms, kind })
            .collect()
    }

    /// After the store committed `events`: takes their numbers, tells the sinks
    /// and the subscribers.
    fn commit_events(&mut self, events: &[RunEvent]) {
        self.next_event += events.len() as u64;
        for sink in &self.sinks {
            events.iter().for_each(|e| sink(e));
        }
        if let Some(last) = events.last() {
            self.hub.published(&self.run_id, last.seq);
        }
    }

    pub(crate) fn write(
        &mut self,
        cp: Option<&Checkpoint>,
        kinds: Vec<RunEventKind>,
    ) -> Result<()> {
        let events = self.events(kinds);
        self.store.append(cp, &events)?;
        self.commit_events(&events);
        Ok(())
    }
}

fn checkpoint_event(m: &CheckpointMeta) -> RunEventKind {
    RunEventKind::Checkpoint {
        seq: m.seq,
        node: m.node.clone(),
        iteration: m.iteration,
        status: m.status.clone(),
    }
}

fn state_id(run_id: &str, seq: u64) -> String {
    format!("{run_id}-{seq}")
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// A fresh run id: the time, then 32 random bits (std's per-process random hash
/// keys, mixed with a counter), e.g. `mbx3k2a1-9f3c04e2`.
fn new_run_id() -> String {
    use std::{
        hash::{BuildHasher, Hasher},
        sync::atomic::{AtomicU64, Ordering},
    };
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    let mut t = now_ms() as u64;
    let mut time = Vec::new();
    while t > 0 {
        time.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(t % 36) as usize]);
        t /= 36;
    }
    time.reverse();
    format!("{}-{:08x}", String::from_utf8(time).unwrap_or_default(), h.finish() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_run_ids_are_valid_and_distinct() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_run_id()).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            validate_run_id(id).unwrap();
        }
    }
}
