//! The application: its state, the router with the token check, body limits and
//! CORS, and serving until shutdown.

use std::{
    net::{IpAddr, SocketAddr},
    sync::{Arc, OnceLock},
    time::Duration,
};

use agent::Orchestrator;
use axum::{
    Router,
    extract::{DefaultBodyLimit, Request, State},
    http::{HeaderValue, Method, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use engine::Session;
use protocol::{ErrorCode, RunSettings};
use tokio_util::sync::CancellationToken;
use workflow::CheckpointStore;

use crate::{
    api, conn, console,
    error::{ApiError, Error},
    feed::Feeds,
    worker,
};

/// How the server runs. Everything has a default but the token.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The bearer token every `/api` and `/mcp` request must carry.
    pub token: String,
    /// A new run's settings before the request's own (the configuration's
    /// `agent:` section).
    pub defaults: RunSettings,
    /// Browser origins allowed to call the API (CORS); none: CORS is off.
    pub cors: Vec<String>,
    /// Runs this process drives at once.
    pub workers: usize,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// Accept any `Host` header on `/mcp` (a server bound beyond loopback);
    /// otherwise loopback names only (DNS-rebinding protection).
    pub mcp_any_host: bool,
    /// How often an idle worker looks for jobs other processes queued.
    pub job_poll: Duration,
    /// How long shutting down waits for runs being driven to reach a node's end.
    pub grace: Duration,
}

impl ServeOptions {
    pub fn new(token: String, defaults: RunSettings) -> ServeOptions {
        ServeOptions {
            token,
            defaults,
            cors: Vec::new(),
            workers: 2,
            max_body_bytes: 1 << 20,
            mcp_any_host: false,
            job_poll: Duration::from_millis(250),
            grace: Duration::from_secs(10),
        }
    }
}

/// What every handler shares.
pub(crate) struct AppState {
    pub(crate) orch: Arc<Orchestrator>,
    /// The commit pipeline over the same store, when this server drives it.
    pub(crate) pipeline: OnceLock<Arc<pipeline::Pipeline>>,
    pub(crate) session: Arc<Session>,
    pub(crate) store: Arc<dyn CheckpointStore>,
    pub(crate) opts: ServeOptions,
    pub(crate) feeds: Feeds,
    /// Wakes idle workers when this process queues a job.
    pub(crate) wake: tokio::sync::Notify,
    pub(crate) shutdown: CancellationToken,
}

pub(crate) type St = State<Arc<AppState>>;

/// The HTTP server of one project.
pub struct Server {
    state: Arc<AppState>,
}

/// Whether `addr` is this machine only (127.0.0.0/8, ::1, or an IPv4-mapped
/// loopback address).
pub fn is_loopback(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(ip) => ip.is_loopback(),
        IpAddr::V6(ip) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

impl Server {
    pub fn new(orch: Arc<Orchestrator>, session: Arc<Session>, opts: ServeOptions) -> Server {
        let store = Arc::clone(orch.store());
        Server {
            state: Arc::new(AppState {
                orch,
                pipeline: OnceLock::new(),
                session,
                store,
                opts,
                feeds: Feeds::default(),
                wake: tokio::sync::Notify::new(),
                shutdown: CancellationToken::new(),
            }),
        }
    }

    /// Also serves the commit pipeline's runs (`/api/pipeline/...`): lists and
    /// shows them, and drives the ones answered here. Its store should be the
    /// orchestrator's: jobs of both kinds are in that store's queue.
    pub fn with_pipeline(self, pipeline: Arc<pipeline::Pipeline>) -> Server {
        let _ = self.state.pipeline.set(pipeline);
        self
    }

    /// The application's routes (for serving, or for calling in tests).
    pub fn router(&self) -> Result<Router, Error> {
        let st = Arc::clone(&self.state);
        if st.opts.token.trim().is_empty() {
            return Err(Error::Config("the server needs a bearer token".into()));
        }
        let api = Router::new()
            .route("/api/agent/execute", post(api::execute))
            .route("/api/agent/approve", post(api::approve))
            .route("/api/agent/cancel", post(api::cancel))
            .route("/api/agent/state/{state_id}", get(api::state))
            .route("/api/agent/runs", get(api::runs))
            .route("/api/agent/runs/{id}/events", get(api::events))
            .route("/api/pipeline/approve", post(api::pipeline_approve))
            .route("/api/pipeline/cancel", post(api::pipeline_cancel))
            .route("/api/pipeline/state/{state_id}", get(api::pipeline_state))
            .route("/api/pipeline/runs", get(api::pipeline_runs))
            .route("/api/pipeline/runs/{id}/events", get(api::pipeline_events))
            .route("/api/openapi.json", get(api::openapi))
            .fallback(api::not_found)
            .layer(DefaultBodyLimit::max(st.opts.max_body_bytes));
        let mcp = mcp::http_service(
            Arc::clone(&st.session),
            mcp::HttpOptions {
                allowed_hosts: if st.opts.mcp_any_host { vec!["*".into()] } else { Vec::new() },
                max_body_bytes: st.opts.max_body_bytes.max(4 << 20),
                shutdown: st.shutdown.child_token(),
            },
        );
        let guarded = api
            .nest_service("/mcp", mcp)
            .layer(middleware::from_fn_with_state(Arc::clone(&st), require_token));
        let mut app = Router::new()
            .route("/", get(console::index))
            .route("/console/{file}", get(console::asset))
            .merge(guarded)
            .with_state(Arc::clone(&st));
        if !st.opts.cors.is_empty() {
            let origins = st
                .opts
                .cors
                .iter()
                .map(|o| {
                    HeaderValue::from_str(o.trim_end_matches('/'))
                        .map_err(|_| Error::Config(format!("CORS origin {o:?} is not an origin")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            app = app.layer(
                tower_http::cors::CorsLayer::new()
                    .allow_origin(origins)
                    .allow_methods([Method::GET, Method::POST, Method::DELETE])
                    .allow_headers([
                        header::AUTHORIZATION,
                        header::CONTENT_TYPE,
                        header::ACCEPT,
                        header::HeaderName::from_static("last-event-id"),
                        header::HeaderName::from_static("mcp-session-id"),
                        header::HeaderName::from_static("mcp-protocol-version"),
                    ])
                    .expose_headers([header::HeaderName::from_static("mcp-session-id")]),
            );
        }
        // Outermost, so that every answer is seen: the token check's, CORS's.
        Ok(app.layer(middleware::from_fn(conn::close_unread)))
    }

    /// Serves on `listener` until `shutdown` is cancelled: then stops taking
    /// work (the listener, the streams, the workers' claims), lets runs being
    /// driven stop at their next node (up to `grace`), and returns. Runs still
    /// in a node then are left as a crash leaves them: resumable.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        let app = self.router()?;
        let st = Arc::clone(&self.state);
        let stop = st.shutdown.clone();
        let forward = tokio::spawn({
            let stop = stop.clone();
            async move {
                shutdown.cancelled().await;
                stop.cancel();
            }
        });
        let workers: Vec<_> = (0..st.opts.workers.max(1))
            .map(|n| tokio::spawn(worker::run(Arc::clone(&st), n)))
            .collect();
        let served = axum::serve(listener, app)
            .with_graceful_shutdown({
                let stop = stop.clone();
                async move { stop.cancelled().await }
            })
            .await
            .map_err(Error::Serve);
        stop.cancel();
        forward.abort();
        let grace = st.opts.grace;
        let all = futures_util::future::join_all(workers);
        if tokio::time::timeout(grace, all).await.is_err() {
            tracing::warn!(
                "runs still in a node after {grace:?}: left as they are, resumable from their last checkpoint"
            );
        }
        served
    }
}

/// Every `/api` and `/mcp` request: `Authorization: Bearer <token>`, compared
/// in constant time.
async fn require_token(State(st): St, req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim);
    match given {
        Some(t) if same(t.as_bytes(), st.opts.token.as_bytes()) => next.run(req).await,
        Some(_) => ApiError::new(ErrorCode::Unauthorized, "the bearer token is not this server's")
            .into_response(),
        None => ApiError::new(
            ErrorCode::Unauthorized,
            "send `Authorization: Bearer <token>` (the token is in .ironbees/serve-token, or \
             the file `serve.token_file` names)",
        )
        .into_response(),
    }
}

/// Equality whose time does not depend on where the inputs differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i % b.len().max(1)).copied().unwrap_or(0));
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        for other in [&b"abd"[..], b"ab", b"abcd", b"", b"xbc"] {
            assert!(!same(b"abc", other), "{other:?}");
        }
    }

    #[test]
    fn loopback_addresses() {
        for (a, want) in [
            ("127.0.0.1:1", true),
            ("127.8.9.1:1", true),
            ("[::1]:1", true),
            ("[::ffff:127.0.0.1]:1", true),
            ("0.0.0.0:1", false),
            ("[::]:1", false),
            ("192.168.1.2:1", false),
        ] {
            assert_eq!(is_loopback(&a.parse().unwrap()), want, "{a}");
        }
    }
}
