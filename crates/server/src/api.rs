//! The handlers. Each turns a request into the orchestrator's calls (on the
//! blocking pool: the stores are blocking) and answers JSON or an event stream.

use std::{
    convert::Infallible,
    path::{Component, Path as FsPath},
    sync::Arc,
};

use agent::Orchestrator;
use axum::{
    Json,
    extract::{FromRequest, Path, Query, Request, rejection::JsonRejection},
    http::{HeaderMap, StatusCode, header},
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
};
use futures_util::{Stream, StreamExt, stream};
use protocol::{
    ApprovalDecision, ApproveRequest, Approver, CancelRequest, CheckpointMeta, CodingState,
    DiffSummary, ErrorCode, ExecuteRequest, PipelineApproval, PipelineApproveRequest,
    PipelineRunView, RunAccepted, RunListItem, RunPage, RunSettings, RunStatus, RunSummary,
    RunView, StateUpdate,
};
use serde::Deserialize;
use serde_json::Value;
use workflow::{CheckpointStore, RunFilter};

use crate::{
    app::{AppState, St},
    error::{ApiError, ApiResult},
    feed::{Feed, Item},
};

/// A JSON body whose problems are answered as `ErrorInfo` (a bad body is
/// `INVALID_ARGUMENT`, one over the limit `PAYLOAD_TOO_LARGE`).
pub(crate) struct Body<T>(pub(crate) T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(Body(v)),
            Err(e) => Err(rejection(e)),
        }
    }
}

fn rejection(e: JsonRejection) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(ErrorCode::PayloadTooLarge, format!("the request body is too large: {e}"))
    } else {
        ApiError::new(ErrorCode::InvalidArgument, e.body_text())
    }
}

/// Runs blocking work (the store, the orchestrator) off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(ApiError::new(ErrorCode::Internal, format!("a request's work panicked: {e}")))
    })
}

/// Where a run of `kind` is followed.
fn events_url(kind: &str, run_id: &str) -> String {
    format!("{}/runs/{run_id}/events", prefix(kind))
}

/// The endpoints of a kind of run: `/api/agent` or `/api/pipeline`.
fn prefix(kind: &str) -> &'static str {
    if kind == pipeline::RUN_KIND { "/api/pipeline" } else { "/api/agent" }
}

/// The run a word names (an id, a unique prefix, a `stateId`), which must be of
/// `kind`: another kind's run is another graph's, answered at its own endpoints.
fn run_of(orch: &Orchestrator, word: &str, kind: &str) -> ApiResult<RunSummary> {
    let id = orch.resolve(word)?;
    let run = orch.summary(&id)?.ok_or_else(|| not_found_run(&id))?;
    if run.kind != kind {
        return Err(ApiError::new(
            ErrorCode::InvalidArgument,
            format!(
                "run {id} is a run of kind {}, not {kind}: see {}/state/{id}",
                run.kind,
                prefix(&run.kind)
            ),
        ));
    }
    Ok(run)
}

/// The checkpoint a `stateId` names beyond its run (`{runId}-{seq}`), if any.
fn seq_of(state_id: &str, run_id: &str) -> Option<u64> {
    state_id.strip_prefix(run_id)?.strip_prefix('-')?.parse().ok()
}

/// An answer to `stateId` is for the run's current checkpoint, which waits.
fn check_answerable(state_id: &str, run: &RunSummary) -> ApiResult<()> {
    let current = format!("{}-{}", run.id, run.seq);
    if state_id != run.id && state_id != current && state_id.starts_with(&run.id) {
        return Err(ApiError::new(
            ErrorCode::InvalidState,
            format!(
                "run {} has moved on from {state_id} to {current}: look at it again before answering",
                run.id
            ),
        ));
    }
    if !matches!(run.status, RunStatus::Waiting { .. }) {
        return Err(ApiError::new(
            ErrorCode::InvalidState,
            format!("run {} is {}: it waits at no gate", run.id, run.status.name()),
        ));
    }
    Ok(())
}

/// This server's pipeline (a server built without one serves no pipeline runs).
fn pipeline_of(st: &AppState) -> ApiResult<Arc<pipeline::Pipeline>> {
    st.pipeline.get().cloned().ok_or_else(|| {
        ApiError::new(ErrorCode::NotFound, "this server does not serve the commit pipeline")
    })
}

pub(crate) async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such endpoint (see /api/openapi.json)")
}

pub(crate) async fn openapi() -> Json<Value> {
    Json(crate::openapi())
}

// --- execute ----------------------------------------------------------------------

/// `POST /api/agent/execute`.
pub(crate) async fn execute(
    st: St,
    headers: HeaderMap,
    Body(req): Body<ExecuteRequest>,
) -> ApiResult<Response> {
    let st = st.0;
    let root = st.session.root().to_owned();
    let request = request_text(&root, &req)?;
    let settings = settings(&st.opts.defaults, &req)?;
    let (orch, store) = (Arc::clone(&st.orch), Arc::clone(&st.store));
    let summary = blocking(move || {
        let summary = orch.create(&request, settings)?;
        store.enqueue(&summary.id, None, Some(summary.seq))?;
        Ok(summary)
    })
    .await?;
    st.wake.notify_waiters();
    let accepted = RunAccepted {
        run_id: summary.id.clone(),
        state_id: format!("{}-{}", summary.id, summary.seq),
        status: summary.status.clone(),
        events: events_url(agent::RUN_KIND, &summary.id),
    };
    if !wants_stream(&headers) {
        let mut r = (StatusCode::ACCEPTED, Json(accepted)).into_response();
        location(&mut r, &summary.id);
        return Ok(r);
    }
    let first =
        Event::default().event("run").data(serde_json::to_string(&accepted).expect("serializes"));
    let feed = st.feeds.get(&st, &summary.id);
    let body = stream::once(async move { Ok::<_, Infallible>(first) }).chain(follow(
        st,
        feed,
        summary.id.clone(),
        0,
        Until::Stop,
        true,
    ));
    let mut r = sse(body).into_response();
    location(&mut r, &summary.id);
    Ok(r)
}

fn location(r: &mut Response, run_id: &str) {
    if let Ok(v) = header::HeaderValue::from_str(&events_url(agent::RUN_KIND, run_id)) {
        r.headers_mut().insert(header::LOCATION, v);
    }
}

/// An event stream unless the client takes only JSON.
fn wants_stream(headers: &HeaderMap) -> bool {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    accept.is_empty() || accept.contains("text/event-stream") || accept.contains("*/*")
}

/// The request as the agents read it: the user's words, then the context the
/// request gave (seed 001's `WorkflowContext`), every path checked to be inside
/// the project.
fn request_text(root: &FsPath, req: &ExecuteRequest) -> ApiResult<String> {
    if req.user_request.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidArgument,
            "`userRequest` is empty: say what to do",
        ));
    }
    let mut context = Vec::new();
    if let Some(p) = &req.solution_path {
        context.push(format!("- Solution: {}", inside(root, p)?));
    }
    if let Some(t) = req.target_project.as_deref().filter(|t| !t.trim().is_empty()) {
        context.push(format!("- Target project: {}", t.trim()));
    }
    if !req.context_files.is_empty() {
        let files: Vec<String> =
            req.context_files.iter().map(|f| inside(root, f)).collect::<ApiResult<_>>()?;
        context.push(format!("- Read these files first: {}", files.join(", ")));
    }
    for (k, v) in &req.preferences {
        context.push(format!("- Preference, {}: {}", k.trim(), v.trim()));
    }
    let mut text = req.user_request.trim().to_owned();
    if !context.is_empty() {
        text.push_str("\n\nContext given with the request:\n");
        text.push_str(&context.join("\n"));
    }
    Ok(text)
}

/// `path` as a path relative to the project root, when it names something
/// inside it (lexically, and through symlinks for what exists).
fn inside(root: &FsPath, path: &str) -> ApiResult<String> {
    let outside = || {
        ApiError::new(
            ErrorCode::PathOutsideRoot,
            format!("{path:?} is outside the project; name files inside it, relative to its root"),
        )
    };
    let p = FsPath::new(path.trim());
    if path.trim().is_empty() || path.contains('\0') {
        return Err(ApiError::new(ErrorCode::InvalidArgument, "an empty path"));
    }
    let rel = if p.is_absolute() { p.strip_prefix(root).map_err(|_| outside())? } else { p };
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop().ok_or_else(outside)?;
            }
            Component::RootDir | Component::Prefix(_) => return Err(outside()),
        }
    }
    let joined: std::path::PathBuf = parts.iter().collect();
    let full = root.join(&joined);
    if let (Ok(real), Ok(real_root)) = (full.canonicalize(), root.canonicalize())
        && !real.starts_with(&real_root)
    {
        return Err(outside());
    }
    let shown = joined.to_string_lossy().replace('\\', "/");
    Ok(if shown.is_empty() { ".".into() } else { shown })
}

/// The request's limits over the configured defaults.
fn settings(defaults: &RunSettings, req: &ExecuteRequest) -> ApiResult<RunSettings> {
    let mut s = defaults.clone();
    if req.auto_approve == Some(true) {
        s.auto_approve = true;
        s.auto_approved_by = Some(Approver::Flag);
    } else if req.auto_approve == Some(false) {
        s.auto_approve = false;
        s.auto_approved_by = None;
    }
    if let Some(r) = req.review {
        s.review = r;
    }
    if let Some(n) = req.max_iterations {
        if n == 0 {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                "`maxIterations` must be at least 1",
            ));
        }
        s.max_iterations = n;
    }
    if let Some(b) = req.budget_usd {
        if !(b.is_finite() && b >= 0.0) {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                "`budgetUsd` must be a non-negative number",
            ));
        }
        s.budget_usd = Some(b);
    }
    if let Some(t) = req.budget_tokens {
        s.budget_tokens = Some(t);
    }
    if let Some(t) = req.timeout_seconds {
        s.timeout_seconds = t.max(1);
    }
    Ok(s)
}

// --- approve, cancel ----------------------------------------------------------------

/// `POST /api/agent/approve`.
pub(crate) async fn approve(st: St, Body(req): Body<ApproveRequest>) -> ApiResult<Response> {
    let st = st.0;
    let (orch, store) = (Arc::clone(&st.orch), Arc::clone(&st.store));
    let accepted = blocking(move || {
        let run = run_of(&orch, &req.state_id, agent::RUN_KIND)?;
        check_answerable(&req.state_id, &run)?;
        let decision = ApprovalDecision {
            approved: req.approved,
            edited_content: req.edited_content.filter(|c| !c.trim().is_empty()),
            feedback: req.feedback.filter(|f| !f.trim().is_empty()),
            budget_usd: req.budget_usd,
        };
        let input = serde_json::to_value(&decision).expect("serializes");
        enqueue_answer(&*store, run, &input)
    })
    .await?;
    st.wake.notify_waiters();
    Ok((StatusCode::ACCEPTED, Json(accepted)).into_response())
}

/// `POST /api/pipeline/approve`: the same submission, a pipeline's answer.
pub(crate) async fn pipeline_approve(
    st: St,
    Body(req): Body<PipelineApproveRequest>,
) -> ApiResult<Response> {
    let st = st.0;
    pipeline_of(&st)?;
    let (orch, store) = (Arc::clone(&st.orch), Arc::clone(&st.store));
    let accepted = blocking(move || {
        let run = run_of(&orch, &req.state_id, pipeline::RUN_KIND)?;
        check_answerable(&req.state_id, &run)?;
        let approval = PipelineApproval { approved: req.approved, by: Some("human".into()) };
        let input = serde_json::to_value(&approval).expect("serializes");
        enqueue_answer(&*store, run, &input)
    })
    .await?;
    st.wake.notify_waiters();
    Ok((StatusCode::ACCEPTED, Json(accepted)).into_response())
}

/// Queues the answer to the checkpoint the run waits at, for a worker.
fn enqueue_answer(
    store: &dyn CheckpointStore,
    run: RunSummary,
    input: &Value,
) -> ApiResult<RunAccepted> {
    store.enqueue(&run.id, Some(input), Some(run.seq))?;
    Ok(RunAccepted {
        events: events_url(&run.kind, &run.id),
        state_id: format!("{}-{}", run.id, run.seq),
        run_id: run.id,
        status: run.status,
    })
}

/// `POST /api/agent/cancel`.
pub(crate) async fn cancel(st: St, Body(req): Body<CancelRequest>) -> ApiResult<Json<RunAccepted>> {
    let (orch, store) = (Arc::clone(&st.orch), Arc::clone(&st.store));
    blocking(move || {
        let run = run_of(&orch, &req.run_id, agent::RUN_KIND)?;
        orch.cancel(&run.id)?;
        cancelled(&*store, &run.id)
    })
    .await
}

/// `POST /api/pipeline/cancel`: nothing more is pushed; a waiting pipeline's
/// hub branches are deleted.
pub(crate) async fn pipeline_cancel(
    st: St,
    Body(req): Body<CancelRequest>,
) -> ApiResult<Json<RunAccepted>> {
    let (p, orch, store) = (pipeline_of(&st)?, Arc::clone(&st.orch), Arc::clone(&st.store));
    blocking(move || {
        let run = run_of(&orch, &req.run_id, pipeline::RUN_KIND)?;
        p.cancel(&run.id).map_err(|e| ApiError(e.to_info()))?;
        cancelled(&*store, &run.id)
    })
    .await
}

/// Where a run stands after a cancel request.
fn cancelled(store: &dyn CheckpointStore, run_id: &str) -> ApiResult<Json<RunAccepted>> {
    let run = store.run(run_id)?.ok_or_else(|| not_found_run(run_id))?;
    Ok(Json(RunAccepted {
        events: events_url(&run.kind, &run.id),
        state_id: format!("{}-{}", run.id, run.seq),
        run_id: run.id,
        status: run.status,
    }))
}

fn not_found_run(run_id: &str) -> ApiError {
    ApiError::new(ErrorCode::StateNotFound, format!("no run {run_id:?}"))
}

// --- state, runs ----------------------------------------------------------------------

/// `GET /api/agent/state/{stateId}`: that checkpoint (a run id: its latest).
pub(crate) async fn state(st: St, Path(state_id): Path<String>) -> ApiResult<Json<RunView>> {
    let orch = Arc::clone(&st.orch);
    blocking(move || {
        let run = run_of(&orch, &state_id, agent::RUN_KIND)?;
        let found = match seq_of(&state_id, &run.id) {
            Some(seq) => orch.state_at(&run.id, seq)?,
            None => orch.state(&run.id)?,
        };
        let (checkpoint, mut state) = found.ok_or_else(|| not_found_run(&state_id))?;
        state.state_id = checkpoint.state_id.clone();
        Ok(Json(RunView { run, checkpoint, state }))
    })
    .await
}

/// `GET /api/pipeline/state/{stateId}`: a pipeline's checkpoint (a run id: its
/// latest) with its state.
pub(crate) async fn pipeline_state(
    st: St,
    Path(state_id): Path<String>,
) -> ApiResult<Json<PipelineRunView>> {
    let (p, orch) = (pipeline_of(&st)?, Arc::clone(&st.orch));
    blocking(move || {
        let run = run_of(&orch, &state_id, pipeline::RUN_KIND)?;
        let found =
            p.show_at(&run.id, seq_of(&state_id, &run.id)).map_err(|e| ApiError(e.to_info()))?;
        let (run, checkpoint, state) = found.ok_or_else(|| not_found_run(&state_id))?;
        Ok(Json(PipelineRunView { run, checkpoint, state }))
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RunsQuery {
    status: Option<String>,
    limit: Option<usize>,
    offset: Option<usize>,
}

const STATUSES: [&str; 6] = ["queued", "running", "waiting", "succeeded", "failed", "cancelled"];

/// `GET /api/agent/runs?status=&limit=&offset=`.
pub(crate) async fn runs(
    st: St,
    query: Result<Query<RunsQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<RunPage>> {
    list(st, query, agent::RUN_KIND).await
}

/// `GET /api/pipeline/runs?status=&limit=&offset=`.
pub(crate) async fn pipeline_runs(
    st: St,
    query: Result<Query<RunsQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<RunPage>> {
    pipeline_of(&st)?;
    list(st, query, pipeline::RUN_KIND).await
}

/// A page of the runs of `kind`, each with its kind.
async fn list(
    st: St,
    query: Result<Query<RunsQuery>, axum::extract::rejection::QueryRejection>,
    kind: &'static str,
) -> ApiResult<Json<RunPage>> {
    let Query(q) = query.map_err(|e| ApiError::new(ErrorCode::InvalidArgument, e.body_text()))?;
    if let Some(s) = &q.status
        && !STATUSES.contains(&s.as_str())
    {
        return Err(ApiError::new(
            ErrorCode::InvalidArgument,
            format!("unknown status {s:?} (one of {})", STATUSES.join(", ")),
        ));
    }
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let offset = q.offset.unwrap_or(0);
    let (orch, store) = (Arc::clone(&st.orch), Arc::clone(&st.store));
    blocking(move || {
        let filter = RunFilter {
            kind: Some(kind.to_owned()),
            status: q.status,
            limit: Some(limit + 1),
            offset,
        };
        let mut runs = store.list_runs(&filter)?;
        let more = runs.len() > limit;
        runs.truncate(limit);
        let runs = runs
            .into_iter()
            .map(|run| {
                // An agent run's spend and round are in its state; a pipeline has neither.
                let state = (kind == agent::RUN_KIND)
                    .then(|| orch.state(&run.id).ok().flatten().map(|(_, s)| s))
                    .flatten();
                let request = run
                    .metadata
                    .get("request")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                RunListItem {
                    cost_usd: state.as_ref().map_or(0.0, |s| s.spend.cost_usd),
                    iteration: state.as_ref().map_or(0, |s| s.iteration_count),
                    request,
                    run,
                }
            })
            .collect();
        Ok(Json(RunPage { runs, next_offset: more.then_some(offset + limit) }))
    })
    .await
}

// --- events ---------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct EventsQuery {
    /// Start after this event (as `Last-Event-ID`, which wins when both are given).
    after: Option<u64>,
    /// `false`: end once the stored events are sent, instead of following the run.
    follow: Option<bool>,
}

type EventsQueryResult = Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>;

/// `GET /api/agent/runs/{id}/events`: every event after `Last-Event-ID` (or
/// `?after=`), then new ones as they are written, until the run finishes.
pub(crate) async fn events(
    st: St,
    Path(id): Path<String>,
    headers: HeaderMap,
    query: EventsQueryResult,
) -> ApiResult<Response> {
    follow_events(st, id, headers, query, agent::RUN_KIND).await
}

/// `GET /api/pipeline/runs/{id}/events`: the same, of a pipeline run.
pub(crate) async fn pipeline_events(
    st: St,
    Path(id): Path<String>,
    headers: HeaderMap,
    query: EventsQueryResult,
) -> ApiResult<Response> {
    pipeline_of(&st)?;
    follow_events(st, id, headers, query, pipeline::RUN_KIND).await
}

async fn follow_events(
    st: St,
    id: String,
    headers: HeaderMap,
    query: EventsQueryResult,
    kind: &'static str,
) -> ApiResult<Response> {
    let Query(q) = query.map_err(|e| ApiError::new(ErrorCode::InvalidArgument, e.body_text()))?;
    let last_id = match headers.get("last-event-id").map(|v| v.to_str().map(str::trim)) {
        None => None,
        Some(Ok(v)) => Some(v.parse::<u64>().map_err(|_| {
            ApiError::new(
                ErrorCode::InvalidArgument,
                format!("Last-Event-ID {v:?} is not an event number"),
            )
        })?),
        Some(Err(_)) => {
            return Err(ApiError::new(ErrorCode::InvalidArgument, "Last-Event-ID is not text"));
        }
    };
    let after = last_id.or(q.after).unwrap_or(0);
    let st = st.0;
    let orch = Arc::clone(&st.orch);
    let run_id = blocking(move || Ok(run_of(&orch, &id, kind)?.id)).await?;
    let feed = st.feeds.get(&st, &run_id);
    let until = if q.follow == Some(false) { Until::CaughtUp } else { Until::Finished };
    Ok(sse(follow(st, feed, run_id, after, until, false)).into_response())
}

fn sse<S>(body: S) -> impl IntoResponse
where
    S: Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    Sse::new(body).keep_alive(KeepAlive::default())
}

/// When a stream ends (besides the server shutting down).
#[derive(Clone, Copy, PartialEq)]
enum Until {
    /// After the event that stops the current execution (`execute`).
    Stop,
    /// When the run has finished for good.
    Finished,
    /// Once the events stored when it started are sent.
    CaughtUp,
}

/// A client's stream of the feed from `after`. `states`: after each checkpoint,
/// a `state` event with seed 001's `StateUpdate`.
fn follow(
    st: Arc<AppState>,
    feed: Arc<Feed>,
    run_id: String,
    after: u64,
    until: Until,
    states: bool,
) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
    let rx = feed.subscribe();
    let shutdown = st.shutdown.clone();
    let goal = (until == Until::CaughtUp).then(|| {
        let st = Arc::clone(&st);
        let id = run_id.clone();
        async move {
            let store = Arc::clone(&st.store);
            blocking(move || Ok(store.last_event_seq(&id)?)).await.unwrap_or(0)
        }
    });
    let state = Follow { st, feed, run_id, cursor: after, rx, done: false, goal: None };
    stream::once(async move {
        let mut state = state;
        if let Some(goal) = goal {
            state.goal = Some(goal.await);
        }
        state
    })
    .flat_map(move |state| {
        let shutdown = shutdown.clone();
        stream::unfold(state, move |mut s| {
            let shutdown = shutdown.clone();
            async move {
                let events = s.next(until, states, &shutdown).await?;
                Some((stream::iter(events.into_iter().map(Ok)), s))
            }
        })
        .flatten()
    })
}

struct Follow {
    st: Arc<AppState>,
    feed: Arc<Feed>,
    run_id: String,
    cursor: u64,
    rx: tokio::sync::watch::Receiver<u64>,
    done: bool,
    /// `CaughtUp`: the last event to send.
    goal: Option<u64>,
}

impl Follow {
    /// The next events to send; `None` when the stream ends.
    async fn next(
        &mut self,
        until: Until,
        states: bool,
        shutdown: &tokio_util::sync::CancellationToken,
    ) -> Option<Vec<Event>> {
        loop {
            if self.done || shutdown.is_cancelled() {
                return None;
            }
            if let Some(goal) = self.goal
                && self.cursor >= goal
            {
                return None;
            }
            let mut items = self.feed.after(self.cursor);
            if let Some(goal) = self.goal {
                items.retain(|i| i.seq <= goal);
            }
            if let Some(stop) = items.iter().position(|i| i.stops).filter(|_| until == Until::Stop)
            {
                items.truncate(stop + 1);
                self.done = true;
            }
            if !items.is_empty() {
                self.cursor = items.last().map_or(self.cursor, |i| i.seq);
                let mut out = Vec::with_capacity(items.len());
                for i in &items {
                    out.push(event(i));
                    if states
                        && let Some(seq) = i.checkpoint
                        && let Some(update) = self.update(seq).await
                    {
                        out.push(update);
                    }
                }
                return Some(out);
            }
            if self.feed.is_closed() && self.cursor >= self.feed.len() {
                return None;
            }
            tokio::select! {
                changed = self.rx.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                () = shutdown.cancelled() => return None,
            }
        }
    }

    /// The `state` event for checkpoint `seq`.
    async fn update(&self, seq: u64) -> Option<Event> {
        let (orch, run_id) = (Arc::clone(&self.st.orch), self.run_id.clone());
        let found = blocking(move || Ok(orch.state_at(&run_id, seq)?)).await.ok().flatten()?;
        let (meta, state) = found;
        let update = state_update(&meta, &state);
        Some(Event::default().event("state").data(serde_json::to_string(&update).ok()?))
    }
}

fn event(i: &Item) -> Event {
    Event::default().id(i.seq.to_string()).data(&*i.json)
}

fn state_update(meta: &CheckpointMeta, state: &CodingState) -> StateUpdate {
    StateUpdate {
        run_id: meta.run_id.clone(),
        state_id: meta.state_id.clone(),
        current_node: meta.node.clone(),
        status: meta.status.clone(),
        iteration: meta.iteration,
        plan: state.plan.clone(),
        diffs: state
            .code_diffs
            .iter()
            .map(|d| DiffSummary { file_path: d.file_path.clone(), kind: d.kind })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_stay_inside_the_project() {
        let dir = tempfile_dir();
        let root = dir.as_path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.py"), "").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("etc-link")).unwrap();
        for (p, want) in [
            ("src/a.py", Ok("src/a.py")),
            ("./src/../src/a.py", Ok("src/a.py")),
            ("new/file.rs", Ok("new/file.rs")),
            ("../outside", Err(ErrorCode::PathOutsideRoot)),
            ("src/../../x", Err(ErrorCode::PathOutsideRoot)),
            ("/etc/passwd", Err(ErrorCode::PathOutsideRoot)),
            ("etc-link/passwd", Err(ErrorCode::PathOutsideRoot)),
            ("", Err(ErrorCode::InvalidArgument)),
        ] {
            let got = inside(root, p).map_err(|e| e.0.code);
            assert_eq!(got.as_deref().map_err(|c| *c), want, "{p}");
        }
        let abs = root.join("src/a.py");
        assert_eq!(inside(root, abs.to_str().unwrap()).unwrap(), "src/a.py");
        std::fs::remove_dir_all(root).unwrap();
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("ironbees-server-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.canonicalize().unwrap()
    }

    #[test]
    fn the_request_carries_its_context() {
        let root = std::path::Path::new("/nonexistent-root");
        let req = ExecuteRequest {
            user_request: " Fix it ".into(),
            target_project: Some("calc".into()),
            context_files: vec!["a.py".into()],
            preferences: [("style".to_owned(), "early returns".to_owned())].into(),
            ..ExecuteRequest::default()
        };
        let text = request_text(root, &req).unwrap();
        assert_eq!(
            text,
            "Fix it\n\nContext given with the request:\n- Target project: calc\n- Read these files first: a.py\n- Preference, style: early returns"
        );
        let empty = ExecuteRequest::default();
        assert_eq!(request_text(root, &empty).unwrap_err().0.code, ErrorCode::InvalidArgument);
    }
}
