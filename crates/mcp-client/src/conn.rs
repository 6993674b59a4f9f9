//! One server connection: starting it (a child in its own process group, or a
//! streamable HTTP session), calling its tools with a timeout and the caller's
//! cancellation, and ending it (the group killed and reaped).
//!
//! A child's stdout goes through a filter before rmcp reads it: lines that are
//! not JSON are counted and kept as a sample for the error a user sees ("wrote
//! 100 lines that are not JSON-RPC"), and a server that writes nothing else is
//! given up at once rather than at its startup timeout. Its stderr is kept as a
//! short tail (for the same errors) and logged at debug level, masked.

use std::{
    collections::BTreeSet,
    process::Stdio,
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::{
    RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, Tool as McpTool,
    },
    service::{Peer, RunningService, ServiceError},
};
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
    sync::oneshot,
};
use tracing::Instrument;

use crate::spec::{ServerSpec, Transport};

/// Lines that are not JSON before the first that is: past this many, the
/// server is not speaking MCP on stdout and is given up at once.
const MAX_GARBAGE_BEFORE_FIRST: u64 = 64;
/// One message larger than this is dropped (and said when a call times out).
const MAX_LINE: usize = 32 * 1024 * 1024;
/// How much of a server's stderr is kept for errors.
const STDERR_TAIL: usize = 2048;
/// How long a server may take to exit once its stdin is closed, before its
/// process group is killed.
const GRACE: Duration = Duration::from_millis(500);

/// What went wrong with a server, for people: its stderr's tail, what it wrote
/// that was not JSON-RPC, how it exited. Masked.
#[derive(Default)]
pub(crate) struct Diag {
    stderr: Mutex<String>,
    garbage: Mutex<(u64, Option<String>)>,
    oversized: Mutex<u64>,
    exit: Mutex<Option<String>>,
}

impl Diag {
    fn push_stderr(&self, line: &str) {
        if let Ok(mut s) = self.stderr.lock() {
            s.push_str(line);
            s.push('\n');
            if s.len() > 2 * STDERR_TAIL {
                let cut = s.len() - STDERR_TAIL;
                let cut = (cut..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(s.len());
                s.drain(..cut);
            }
        }
    }

    pub(crate) fn exit(&self) -> Option<String> {
        self.exit.lock().ok().and_then(|e| e.clone())
    }

    /// " (it exited with exit status 3); it wrote ...; its stderr ends with: ..."
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(e) = self.exit() {
            parts.push(format!("it {e}"));
        }
        if let Ok(g) = self.garbage.lock()
            && g.0 > 0
        {
            parts.push(format!(
                "it wrote {} line{} to stdout that {} not JSON-RPC (the first: {:?})",
                g.0,
                if g.0 == 1 { "" } else { "s" },
                if g.0 == 1 { "is" } else { "are" },
                g.1.as_deref().unwrap_or_default()
            ));
        }
        if let Ok(n) = self.oversized.lock()
            && *n > 0
        {
            parts.push(format!("it sent {n} message(s) over {} MiB, dropped", MAX_LINE >> 20));
        }
        if let Ok(s) = self.stderr.lock() {
            let tail = s.trim();
            if !tail.is_empty() {
                let tail = stdx::clip(tail, STDERR_TAIL);
                parts.push(format!("its stderr ends with:\n{tail}"));
            }
        }
        if parts.is_empty() { String::new() } else { format!("; {}", parts.join("; ")) }
    }
}

/// Process groups of the children alive now, for [`kill_all`].
static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Kills every server child's process group at once and reaps what it can in a
/// moment: the process is about to exit (a second Ctrl-C) and no destructor
/// will run.
pub fn kill_all() {
    use nix::{
        sys::{
            signal::{Signal, killpg},
            wait::{WaitPidFlag, WaitStatus, waitpid},
        },
        unistd::Pid,
    };
    let groups: Vec<i32> = LIVE.lock().map(|l| l.iter().copied().collect()).unwrap_or_default();
    for &g in &groups {
        let _ = killpg(Pid::from_raw(g), Signal::SIGKILL);
    }
    let deadline = std::time::Instant::now() + Duration::from_millis(300);
    for &g in &groups {
        while std::time::Instant::now() < deadline {
            match waitpid(Pid::from_raw(-g), Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(5)),
                Ok(_) => continue,
                Err(_) => break, // ECHILD: all reaped
            }
        }
    }
}

/// Orphans a server leaves (a wrapper's own children: `npx`, `uvx`) must come
/// back to us to be reaped, not to an init that may never reap them (a
/// container's first process often does not): this process becomes their
/// subreaper, once, when it starts its first server.
fn become_subreaper() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
            tracing::debug!("cannot become a child subreaper: {e}");
        }
    });
}

type Service = RunningService<RoleClient, ClientConfig>;

/// A started server.
pub(crate) struct Conn {
    pub(crate) spec: Arc<ServerSpec>,
    pub(crate) tools: Vec<McpTool>,
    pub(crate) diag: Arc<Diag>,
    pub(crate) pid: Option<u32>,
    peer: Peer<RoleClient>,
    service: Mutex<Option<Service>>,
    /// Asks the child's watcher to kill the group; it answers on `done`.
    kill: Mutex<Option<oneshot::Sender<()>>>,
    done: Mutex<Option<oneshot::Receiver<()>>>,
}

/// How a call failed, for the registry to turn into a `ToolError`.
pub(crate) enum CallError {
    Timeout,
    Cancelled,
    /// The server answered with a JSON-RPC error.
    Rpc {
        code: i32,
        message: String,
    },
    /// The connection is gone (the server exited, the session ended).
    Closed(String),
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("ironbees", env!("CARGO_PKG_VERSION")),
    )
}

impl Conn {
    /// Starts the server and lists its tools, within its startup timeout.
    /// The error is a sentence saying what happened (masked).
    pub(crate) async fn start(spec: Arc<ServerSpec>) -> Result<Conn, String> {
        let span = tracing::info_span!("mcp.server.start", mcp.server = %spec.name);
        match &spec.transport {
            Transport::Stdio { .. } => Self::start_stdio(spec).instrument(span).await,
            Transport::Http { .. } => Self::start_http(spec).instrument(span).await,
        }
    }

    async fn start_stdio(spec: Arc<ServerSpec>) -> Result<Conn, String> {
        let Transport::Stdio { command, args, env, cwd } = &spec.transport else {
            unreachable!("a stdio spec");
        };
        become_subreaper();
        // An MCP server is a configured tool, not a project command: it is
        // started here, in its own process group, not through the sandbox
        // (see ARCHITECTURE.md, `crates/mcp-client`).
        #[allow(clippy::disallowed_methods)]
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut wrap = CommandWrap::from(cmd);
        wrap.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let mut child = wrap
            .spawn()
            .map_err(|e| spec.mask(&format!("cannot start `{}`: {e}", command.display())))?;
        let pid = child.id();
        if let Some(p) = pid
            && let Ok(mut live) = LIVE.lock()
        {
            live.insert(p as i32);
        }
        let diag = Arc::new(Diag::default());
        let (stdin, stdout, stderr) =
            (child.stdin().take(), child.stdout().take(), child.stderr().take());
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
            return Err("the child's stdio could not be captured".into());
        };
        if let Some(err) = stderr {
            tokio::spawn(read_stderr(err, Arc::clone(&spec), Arc::clone(&diag)));
        }
        let (rx_end, tx_end) = tokio::io::duplex(256 * 1024);
        let (garbage_tx, garbage_rx) = oneshot::channel::<()>();
        tokio::spawn(filter_stdout(
            stdout,
            tx_end,
            Arc::clone(&spec),
            Arc::clone(&diag),
            garbage_tx,
        ));
        let (kill_tx, kill_rx) = oneshot::channel::<()>();
        let (done_tx, done_rx) = oneshot::channel::<()>();
        let (exited_tx, exited_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(watch_child(child, pid, Arc::clone(&diag), kill_rx, done_tx, exited_tx));

        let started = async {
            let service = client_info()
                .serve((rx_end, stdin))
                .await
                .map_err(|e| format!("the MCP handshake failed: {e}"))?;
            let tools = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|e| format!("`tools/list` failed: {e}"))?;
            Ok::<_, String>((service, tools))
        };
        let outcome = tokio::select! {
            r = tokio::time::timeout(spec.startup_timeout, started) => match r {
                Ok(r) => r,
                Err(_) => Err(format!(
                    "it did not answer `initialize` and `tools/list` within {}",
                    secs(spec.startup_timeout)
                )),
            },
            _ = garbage_rx => Err("it does not speak JSON-RPC on stdout".to_owned()),
        };
        match outcome {
            Ok((service, tools)) => Ok(Conn {
                peer: service.peer().clone(),
                spec: Arc::clone(&spec),
                tools,
                diag: Arc::clone(&diag),
                pid,
                service: Mutex::new(Some(service)),
                kill: Mutex::new(Some(kill_tx)),
                done: Mutex::new(Some(done_rx)),
            }),
            Err(reason) => {
                // A server that exited on its own says how; wait a moment for it.
                let mut exited = exited_rx;
                let _ =
                    tokio::time::timeout(Duration::from_millis(200), exited.wait_for(|e| *e)).await;
                let _ = kill_tx.send(());
                let _ = tokio::time::timeout(Duration::from_secs(3), done_rx).await;
                Err(spec.mask(&format!("{reason}{}", diag.describe())))
            }
        }
    }

    async fn start_http(spec: Arc<ServerSpec>) -> Result<Conn, String> {
        use rmcp::transport::{
            StreamableHttpClientTransport,
            streamable_http_client::StreamableHttpClientTransportConfig,
        };
        let Transport::Http { url, headers } = &spec.transport else {
            unreachable!("an HTTP spec");
        };
        // reqwest is built without a TLS provider of its own (see `llm`).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
        let mut custom = std::collections::HashMap::new();
        for (k, v) in headers {
            if k.eq_ignore_ascii_case("authorization")
                && let Some(token) = v.strip_prefix("Bearer ")
            {
                config = config.auth_header(token);
                continue;
            }
            let name = http::HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| format!("header `{k}`: {e}"))?;
            let mut value = http::HeaderValue::from_str(v)
                .map_err(|_| format!("header `{k}`: not a valid header value"))?;
            value.set_sensitive(true);
            custom.insert(name, value);
        }
        let config = config.custom_headers(custom);
        let transport = StreamableHttpClientTransport::from_config(config);
        let started = async {
            let service = client_info()
                .serve(transport)
                .await
                .map_err(|e| format!("the MCP handshake with {url} failed: {e}"))?;
            let tools = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|e| format!("`tools/list` failed: {e}"))?;
            Ok::<_, String>((service, tools))
        };
        let (service, tools) = match tokio::time::timeout(spec.startup_timeout, started).await {
            Ok(r) => r.map_err(|e| spec.mask(&e))?,
            Err(_) => {
                return Err(format!(
                    "{url} did not answer `initialize` and `tools/list` within {}",
                    secs(spec.startup_timeout)
                ));
            }
        };
        Ok(Conn {
            peer: service.peer().clone(),
            spec,
            tools,
            diag: Arc::new(Diag::default()),
            pid: None,
            service: Mutex::new(Some(service)),
            kill: Mutex::new(None),
            done: Mutex::new(None),
        })
    }

    /// Calls `tool` (the server's name for it) with `arguments`.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        cancel: &stdx::CancellationToken,
    ) -> Result<Value, CallError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        // Dropping the request (timeout, cancellation) sends
        // `notifications/cancelled` for it.
        let call = self.peer.call_tool(params);
        let r = tokio::select! {
            r = tokio::time::timeout(self.spec.tool_timeout, call) => r,
            () = cancel.cancelled() => return Err(CallError::Cancelled),
        };
        match r {
            Err(_) => Err(CallError::Timeout),
            Ok(Ok(result)) => Ok(serde_json::to_value(result).unwrap_or(Value::Null)),
            Ok(Err(ServiceError::McpError(e))) => {
                Err(CallError::Rpc { code: e.code.0, message: e.message.into_owned() })
            }
            Ok(Err(ServiceError::Timeout { .. })) => Err(CallError::Timeout),
            Ok(Err(ServiceError::Cancelled { .. })) => Err(CallError::Cancelled),
            Ok(Err(e)) => {
                // Give the watcher a moment to see the exit, so the error says it.
                for _ in 0..20 {
                    if self.diag.exit().is_some() || self.pid.is_none() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(CallError::Closed(e.to_string()))
            }
        }
    }

    /// Ends the connection: the session is closed (the child's stdin with it),
    /// the child gets a moment to exit, then its whole process group is killed
    /// and reaped.
    pub(crate) async fn shutdown(&self) {
        let service = self.service.lock().ok().and_then(|mut s| s.take());
        if let Some(mut s) = service {
            let _ = s.close_with_timeout(GRACE).await;
        }
        let done = self.done.lock().ok().and_then(|mut d| d.take());
        let kill = self.kill.lock().ok().and_then(|mut k| k.take());
        if let Some(mut done) = done
            && tokio::time::timeout(GRACE, &mut done).await.is_err()
        {
            if let Some(k) = kill {
                let _ = k.send(());
            }
            let _ = tokio::time::timeout(Duration::from_secs(5), done).await;
        }
    }
}

/// Watches the child: records how it exited (reaping its group), or kills the
/// group when asked. Says `done` when the group is gone.
async fn watch_child(
    mut child: Box<dyn ChildWrapper>,
    pid: Option<u32>,
    diag: Arc<Diag>,
    kill: oneshot::Receiver<()>,
    done: oneshot::Sender<()>,
    exited: tokio::sync::watch::Sender<bool>,
) {
    let status = tokio::select! {
        s = child.wait() => Some(s),
        _ = kill => None,
    };
    let what = match status {
        Some(Ok(s)) => format!("exited ({s})"),
        Some(Err(e)) => format!("could not be waited for ({e})"),
        None => {
            let _ = child.start_kill();
            match tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
                Ok(Ok(_)) => "was stopped".to_owned(),
                Ok(Err(e)) => format!("was killed, and could not be waited for ({e})"),
                Err(_) => "was killed and did not exit within 5 s".to_owned(),
            }
        }
    };
    if let Ok(mut e) = diag.exit.lock() {
        e.get_or_insert(what);
    }
    if let (Some(p), Ok(mut live)) = (pid, LIVE.lock()) {
        live.remove(&(p as i32));
    }
    let _ = exited.send(true);
    let _ = done.send(());
}

/// Keeps the tail of the child's stderr and logs it, masked.
async fn read_stderr(err: tokio::process::ChildStderr, spec: Arc<ServerSpec>, diag: Arc<Diag>) {
    let mut lines = BufReader::new(err).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line = spec.mask(&stdx::clip(&line, 1024));
        tracing::debug!(mcp.server = %spec.name, "stderr: {line}");
        diag.push_stderr(&line);
    }
}

/// Passes the child's stdout to rmcp line by line, keeping out what is not
/// JSON (counted, the first kept) and what is too large.
async fn filter_stdout(
    stdout: tokio::process::ChildStdout,
    mut to_rmcp: tokio::io::DuplexStream,
    spec: Arc<ServerSpec>,
    diag: Arc<Diag>,
    garbage: oneshot::Sender<()>,
) {
    let mut garbage = Some(garbage);
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    let mut valid = 0u64;
    loop {
        line.clear();
        let mut limited = (&mut reader).take(MAX_LINE as u64 + 1);
        match limited.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            // Skip the rest of this line.
            if let Ok(mut n) = diag.oversized.lock() {
                *n += 1;
            }
            let mut rest = Vec::new();
            let _ = reader.read_until(b'\n', &mut rest).await;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let trimmed = text.trim();
        if trimmed.is_empty() {
            continue;
        }
        if serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok()
            && trimmed.starts_with('{')
        {
            valid += 1;
            if to_rmcp.write_all(trimmed.as_bytes()).await.is_err()
                || to_rmcp.write_all(b"\n").await.is_err()
            {
                break;
            }
            continue;
        }
        let count = {
            let Ok(mut g) = diag.garbage.lock() else { break };
            g.0 += 1;
            if g.1.is_none() {
                g.1 = Some(spec.mask(&stdx::clip(trimmed, 200)));
            }
            g.0
        };
        tracing::debug!(mcp.server = %spec.name, "not JSON-RPC on stdout: {}", spec.mask(&stdx::clip(trimmed, 200)));
        if valid == 0 && count > MAX_GARBAGE_BEFORE_FIRST {
            if let Some(g) = garbage.take() {
                let _ = g.send(());
            }
            break;
        }
    }
    let _ = to_rmcp.shutdown().await;
}

pub(crate) fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}
