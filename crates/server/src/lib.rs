//! `ironbees serve`: the agent core as a service. One axum application over one
//! project's [`agent::Orchestrator`] and [`engine::Session`] (and its commit
//! pipeline's runs, given [`Server::with_pipeline`]):
//!
//! | route | what |
//! | --- | --- |
//! | `POST /api/agent/execute` | start a run; the answer streams its events (SSE) |
//! | `POST /api/agent/approve` | answer the gate a run waits at |
//! | `POST /api/agent/cancel` | cancel a run |
//! | `GET /api/agent/state/{stateId}` | a checkpoint and its state |
//! | `GET /api/agent/runs` | runs, by status, a page at a time |
//! | `GET /api/agent/runs/{id}/events` | the run's events (SSE), resuming after `Last-Event-ID` |
//! | `GET /api/pipeline/runs`, `.../state/{stateId}`, `.../runs/{id}/events` | the commit pipeline's runs, the same way |
//! | `POST /api/pipeline/approve`, `.../cancel` | answer a pipeline's approval (yes: on; no: roll back), cancel it |
//! | `GET /api/openapi.json` | this API, generated from the `protocol` types |
//! | `/mcp` | the tool registry over MCP's streamable HTTP transport |
//! | `/` | the web console (embedded; no build step) |
//!
//! The key decisions:
//!
//! - **Requests are submissions, runs are executed by workers.** `execute` creates
//!   a queued run and `approve` an answer, each as a job in the store's work
//!   queue; this process's workers (and every replica's, on a shared PostgreSQL
//!   store) claim jobs and drive runs on the blocking pool, where the agent's
//!   nodes may wait on the runtime. A job's run is driven by its own kind's
//!   graph: an agent run by the orchestrator, a commit pipeline run (kind
//!   `pipeline`, in the same store) by the [`pipeline::Pipeline`] the server
//!   was given; each kind's endpoints refuse the other's runs. A job is leased to the process that claimed
//!   it: when that process dies, another claims it and the run resumes from its
//!   last checkpoint (`RunOptions::answers` keeps an answer from being lost or
//!   applied twice). Nothing a handler does waits for a run.
//! - **Streams are read from the store.** Every event is a row numbered without
//!   gaps; a stream is a cursor into a run's rows, so `Last-Event-ID` resumes
//!   exactly and replicas stream each other's runs. One loader per watched run
//!   reads the rows (woken at once by this process's commits) and fans them out
//!   to every client, each at its own cursor.
//! - **Secure by default.** Every `/api` and `/mcp` request needs the bearer
//!   token; the console's static files carry none. CORS is off unless origins
//!   are configured; request bodies are bounded; files a request names must be
//!   inside the project; answers and events carry no secret (the model's key
//!   never enters a state or an event; the token is only compared).
//! - **Shutting down stops taking work.** The listener closes, streams end,
//!   workers claim nothing more, and runs being driven stop before their next
//!   node, left resumable by any process, as after a crash.
//!
//! ```no_run
//! # async fn f(orch: std::sync::Arc<agent::Orchestrator>, session: std::sync::Arc<engine::Session>) -> Result<(), server::Error> {
//! let options = server::ServeOptions::new("the-token".into(), Default::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8642").await.map_err(server::Error::Bind)?;
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! server::Server::new(orch, session, options).serve(listener, shutdown).await
//! # }
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod api;
mod app;
mod conn;
mod console;
mod error;
mod feed;
mod openapi;
mod worker;

pub use crate::{
    app::{ServeOptions, Server, is_loopback},
    error::Error,
    openapi::openapi,
};
