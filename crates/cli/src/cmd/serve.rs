//! `ironbees serve`: the agent core over HTTP (the `server` crate), for this
//! project, the commit pipeline's runs beside agent runs. This module only
//! turns flags and configuration into the server's options, refuses unsafe
//! ones, and stops the server on SIGTERM or Ctrl-C.

use std::{net::SocketAddr, sync::Arc};

use anyhow::{Context, Result};
use protocol::ErrorCode;

use super::{Ctx, runtime, session::open_session};
use crate::{exit::cli_error, output::Output};

pub const SERVE_HELP: &str = "\
Examples:
  ironbees serve                              http://127.0.0.1:8642, token in .ironbees/serve-token
  ironbees serve --bind 127.0.0.1:0           any free port (printed)
  ironbees serve --bind 0.0.0.0:8642 --token-file /etc/ironbees/token

Endpoints (every /api and /mcp request needs `Authorization: Bearer <token>`):
  POST /api/agent/execute          start a run; its events stream back (server-sent events)
  POST /api/agent/approve          answer a run's gate: {stateId, approved, feedback, editedContent}
  POST /api/agent/cancel           {runId}
  GET  /api/agent/state/{stateId}  a checkpoint and its state
  GET  /api/agent/runs             ?status=&limit=&offset=
  GET  /api/agent/runs/{id}/events server-sent events, resumed after Last-Event-ID
  GET  /api/pipeline/runs          the commit pipeline's runs (kind pipeline), as above
  GET  /api/pipeline/state/{stateId}     a pipeline's checkpoint and state
  GET  /api/pipeline/runs/{id}/events    its events
  POST /api/pipeline/approve       {stateId, approved}: yes, the next stage; no, roll back
  POST /api/pipeline/cancel        {runId}
  GET  /api/openapi.json           the API, generated from its types
  /mcp                             the tools over MCP's streamable HTTP transport
  /                                the web console

The server listens on 127.0.0.1 unless told otherwise, and refuses an address
beyond this machine unless the token is one you chose (--token-file or
serve.token / serve.token_file). Configuration (`serve:` in
.ironbees/config.yaml): bind, token_file, token, cors (origins), database_url
(postgres://...: runs, events and the work queue shared by replicas),
lease_seconds, workers, max_body_bytes. SIGTERM stops taking work and leaves
running runs resumable.";

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (default 127.0.0.1:8642; `serve.bind`).
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<String>,
    /// The file holding the bearer token (created with a random one if missing;
    /// `serve.token_file`; default .ironbees/serve-token).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<std::path::PathBuf>,
    /// Runs this server drives at once (`serve.workers`, default 2).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Do not watch the project for changes (the index refreshes on each call).
    #[arg(long)]
    pub no_watch: bool,
}

pub fn run(ctx: &Ctx, out: &Output, args: &ServeArgs) -> Result<i32> {
    let sec = ctx.host.serve_section()?;
    let bind = args.bind.clone().or(sec.bind.clone()).unwrap_or_else(|| "127.0.0.1:8642".into());
    let addr = resolve(&bind)?;
    let loopback = server::is_loopback(&addr);
    // Decided before a token is generated: a refused start leaves nothing behind.
    let chosen = sec.token.as_deref().is_some_and(|t| !t.trim().is_empty())
        || args.token_file.is_some()
        || sec.token_file.is_some();
    if !loopback && !chosen {
        return Err(cli_error(
            ErrorCode::InvalidArgument,
            format!(
                "refusing to listen on {addr}, beyond this machine, without a token you chose: \
                 pass --token-file FILE (or set serve.token or serve.token_file), and send it as \
                 `Authorization: Bearer <token>`"
            ),
        ));
    }
    let token = ctx.host.serve_token(args.token_file.as_deref())?;
    let rt = runtime()?;
    let llm = match ctx.host.chat_client(rt.handle(), None, &ctx.cancel) {
        Ok((llm, notices)) => {
            super::show_notices(out, notices);
            Some(Arc::new(llm))
        }
        Err(e) => {
            out.warn(format!(
                "no model: runs will stop with LLM_UNAVAILABLE until one is configured ({e})"
            ));
            None
        }
    };
    let session = open_session(ctx, out, !args.no_watch)?;
    let agents = ctx.host.agents()?;
    // The configured MCP servers' tools are the agents' too; the servers live as
    // long as this server.
    let tools = super::tool::tools(ctx, out)?;
    let orch = Arc::new(ctx.host.orchestrator(
        Arc::clone(&session),
        llm,
        agents,
        tools.registry.clone(),
        rt.handle().clone(),
    )?);
    // The commit pipeline's runs are in the same store: served too, unless its
    // configuration is unusable (then said, and only agent runs are served).
    let pipeline = match super::pipeline::for_serve(ctx, out, rt.handle(), Arc::clone(orch.store()))
    {
        Ok(p) => Some(Arc::new(p)),
        Err(e) => {
            out.warn(format!("the commit pipeline's runs are not served: {e:#}"));
            None
        }
    };
    let defaults = ctx.host.run_settings(&host::RunOverrides::default())?;
    let mut opts = server::ServeOptions::new(token.value.clone(), defaults);
    opts.cors = sec.cors.clone();
    opts.workers = args.workers.or(sec.workers).unwrap_or(opts.workers).max(1);
    opts.max_body_bytes = sec.max_body_bytes.unwrap_or(opts.max_body_bytes);
    opts.mcp_any_host = !loopback;
    let store = if sec.database_url.is_some() { "PostgreSQL (database_url)" } else { "SQLite" };
    let cancel = ctx.cancel.clone();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listening on {addr}"))?;
        let local = listener.local_addr().context("reading the bound address")?;
        // SIGTERM is taken over before the address is announced: one sent as soon
        // as the server says it listens stops it gracefully, not by the default
        // action.
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let where_token = match &token.file {
            Some(f) if token.created => format!("a new token in {}", f.display()),
            Some(f) => format!("token in {}", f.display()),
            None => "token from the configuration".to_owned(),
        };
        out.note(format!(
            "ironbees serve: listening on http://{local} ({where_token}; runs in {store}; console at http://{local}/)"
        ));
        if out.json {
            out.json(&serde_json::json!({"listening": local.to_string(), "tokenFile": token.file}))?;
        }
        let shutdown = tokio_util::sync::CancellationToken::new();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let terminated = async {
                match term.as_mut() {
                    Some(t) => {
                        t.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = terminated => {}
                () = cancel.cancelled() => {}
            }
            stop.cancel();
        });
        let mut server = server::Server::new(orch, session, opts);
        if let Some(p) = pipeline {
            server = server.with_pipeline(p);
        }
        server.serve(listener, shutdown).await?;
        tools.shutdown();
        out.note("ironbees serve: stopped; runs in progress resume from their last checkpoint");
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(0)
}

/// `ADDR:PORT`, a host name resolved (the first address), or a bare port on
/// loopback.
fn resolve(bind: &str) -> Result<SocketAddr> {
    if let Ok(port) = bind.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    use std::net::ToSocketAddrs;
    bind.to_socket_addrs().ok().and_then(|mut a| a.next()).ok_or_else(|| {
        cli_error(
            ErrorCode::InvalidArgument,
            format!("--bind {bind:?}: expected ADDR:PORT (e.g. 127.0.0.1:8642)"),
        )
    })
}
