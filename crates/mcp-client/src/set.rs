//! The configured servers together: started at once (in parallel, each within
//! its startup timeout) on the client's own small runtime, their tools added to
//! a registry, shut down together.

use std::{
    future::Future,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

use engine::{Registry, Tool, ToolError, ToolSpec};
use protocol::{Effect, ErrorCode, ErrorInfo, Guidance, ToolSource};
use serde_json::{Map, Value};

use crate::{
    conn::{CallError, Conn, secs},
    error::{Error, Result},
    result::limit,
    spec::ServerSpec,
};

/// A server that is not there, and why (for a warning, and for the error an
/// agent that names its tools gets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub server: String,
    pub reason: String,
}

/// A started server, as `tools list` shows it.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub name: String,
    /// The child's process id (stdio servers).
    pub pid: Option<u32>,
    /// Its tools, by the server's names, that the configuration offers.
    pub tools: Vec<String>,
}

/// The started servers. Cheap to clone; the servers end when [`shutdown`]
/// is called or the last clone (and every registry tool holding one) is
/// dropped.
///
/// [`shutdown`]: ServerSet::shutdown
#[derive(Clone, Default)]
pub struct ServerSet {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    rt: Mutex<Option<tokio::runtime::Runtime>>,
    handle: tokio::runtime::Handle,
    conns: Vec<Arc<Conn>>,
    closed: AtomicBool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.close();
    }
}

impl Inner {
    fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let Some(rt) = self.rt.lock().ok().and_then(|mut r| r.take()) else { return };
        let conns = self.conns.clone();
        // On a thread of its own: this may run inside another runtime (a
        // server's task dropping the last registry), where blocking is refused.
        std::thread::scope(|s| {
            s.spawn(|| {
                rt.block_on(async {
                    let all = conns.iter().map(|c| c.shutdown());
                    futures_join(all).await;
                });
                rt.shutdown_timeout(std::time::Duration::from_secs(1));
            });
        });
    }
}

/// Awaits every future (they run concurrently on the runtime).
async fn futures_join<F: Future<Output = ()> + Send>(all: impl Iterator<Item = F>) {
    let mut set = Vec::new();
    for f in all {
        set.push(f);
    }
    // Few servers: polling them one after the other is enough, each shutdown
    // bounds its own waits.
    let mut pinned: Vec<_> = set.into_iter().map(Box::pin).collect();
    for f in &mut pinned {
        f.as_mut().await;
    }
}

impl ServerSet {
    /// Starts every server. A required server that does not start is an
    /// error (the others are shut down); an optional one is left out and
    /// reported. No server: nothing is started, not even a thread.
    pub fn start(specs: Vec<ServerSpec>) -> Result<(ServerSet, Vec<Unavailable>)> {
        if specs.is_empty() {
            return Ok((ServerSet::default(), Vec::new()));
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("mcp-client")
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let handle = rt.handle().clone();
        let specs: Vec<Arc<ServerSpec>> = specs.into_iter().map(Arc::new).collect();
        let started: Vec<std::result::Result<Conn, String>> = on_own_thread(|| {
            rt.block_on(async {
                let tasks: Vec<_> =
                    specs.iter().map(|s| tokio::spawn(Conn::start(Arc::clone(s)))).collect();
                let mut out = Vec::new();
                for t in tasks {
                    out.push(t.await.unwrap_or_else(|e| Err(format!("the start panicked: {e}"))));
                }
                out
            })
        });
        let mut conns = Vec::new();
        let mut missing = Vec::new();
        let mut required_failed = None;
        for (spec, r) in specs.iter().zip(started) {
            match r {
                Ok(c) => {
                    tracing::info!(
                        mcp.server = %spec.name,
                        tools = c.tools.len(),
                        pid = c.pid,
                        "MCP server started"
                    );
                    conns.push(Arc::new(c));
                }
                Err(reason) => {
                    tracing::warn!(mcp.server = %spec.name, "MCP server did not start: {reason}");
                    if spec.required && required_failed.is_none() {
                        required_failed = Some((spec.name.clone(), reason.clone()));
                    }
                    missing.push(Unavailable { server: spec.name.clone(), reason });
                }
            }
        }
        let set = ServerSet {
            inner: Some(Arc::new(Inner {
                rt: Mutex::new(Some(rt)),
                handle,
                conns,
                closed: AtomicBool::new(false),
            })),
        };
        if let Some((server, reason)) = required_failed {
            set.shutdown();
            return Err(Error::RequiredServer { server, reason });
        }
        Ok((set, missing))
    }

    /// The started servers.
    pub fn servers(&self) -> Vec<ServerInfo> {
        self.conns()
            .map(|c| ServerInfo {
                name: c.spec.name.clone(),
                pid: c.pid,
                tools: c
                    .tools
                    .iter()
                    .filter(|t| c.spec.offers(&t.name))
                    .map(|t| t.name.to_string())
                    .collect(),
            })
            .collect()
    }

    fn conns(&self) -> impl Iterator<Item = &Arc<Conn>> {
        self.inner.iter().flat_map(|i| i.conns.iter())
    }

    /// Adds every offered tool of every started server to `registry`, named
    /// `server.tool`, with the server's schemas and the configured effect
    /// (read-only, or acting on the world). A name the registry has already
    /// is skipped and reported.
    pub fn register(&self, registry: &mut Registry) -> Vec<String> {
        let Some(inner) = &self.inner else { return Vec::new() };
        let mut skipped = Vec::new();
        for conn in &inner.conns {
            for t in conn.tools.iter().filter(|t| conn.spec.offers(&t.name)) {
                let tool = tool_of(inner, conn, t);
                if let Err(e) = registry.add(tool) {
                    skipped.push(e.message);
                }
            }
        }
        skipped
    }

    /// Ends every server (idempotent): sessions closed, children given a
    /// moment to exit, then their process groups killed and reaped.
    pub fn shutdown(&self) {
        if let Some(i) = &self.inner {
            i.close();
        }
    }
}

/// Runs `f` on a thread of its own when this thread is inside a runtime
/// (where `block_on` panics), else here.
fn on_own_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    std::thread::scope(|s| s.spawn(f).join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
}

fn tool_of(inner: &Arc<Inner>, conn: &Arc<Conn>, t: &rmcp::model::Tool) -> Tool {
    let server = conn.spec.name.clone();
    let remote = t.name.to_string();
    let effect = if conn.spec.read_only.covers(&remote) { Effect::Read } else { Effect::External };
    let title = t
        .title
        .clone()
        .or_else(|| t.annotations.as_ref().and_then(|a| a.title.clone()))
        .unwrap_or_else(|| remote.clone());
    let description = t.description.as_deref().unwrap_or_default();
    let spec = ToolSpec {
        operation: None,
        name: format!("{server}.{remote}"),
        title,
        description: stdx::clip(description, 4096).into_owned(),
        effect,
        source: ToolSource::Server { server },
        input_schema: t.input_schema.clone(),
        output_schema: t.output_schema.clone().unwrap_or_default(),
    };
    let (weak, conn) = (Arc::downgrade(inner), Arc::clone(conn));
    let name = spec.name.clone();
    Tool {
        spec,
        handler: Arc::new(move |_session, call, arguments| {
            let Some(inner) = weak.upgrade().filter(|i| !i.closed.load(Ordering::SeqCst)) else {
                return Err(failure(
                    ErrorCode::ToolExecutionFailed,
                    format!("`{name}`: the MCP server `{}` has been shut down", conn.spec.name),
                ));
            };
            call_tool(&inner, &conn, &name, &remote, arguments, call)
        }),
    }
}

fn failure(code: ErrorCode, message: String) -> ToolError {
    ToolError {
        info: ErrorInfo::new(code, message),
        guidance: Guidance {
            context_summary: "An outside tool (an MCP server's) failed; its message says why."
                .into(),
            ..Guidance::default()
        },
    }
}

fn call_tool(
    inner: &Inner,
    conn: &Conn,
    name: &str,
    remote: &str,
    arguments: Value,
    call: &stdx::Call<'_>,
) -> std::result::Result<Value, ToolError> {
    let arguments = match arguments {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => {
            return Err(failure(
                ErrorCode::InvalidArgument,
                format!(
                    "`{name}` takes a JSON object of arguments, not {}",
                    stdx::clip(&other.to_string(), 80)
                ),
            ));
        }
    };
    let span = tracing::info_span!(
        "mcp.tools.call",
        otel.name = %format!("tools/call {remote}"),
        mcp.method.name = "tools/call",
        mcp.server = %conn.spec.name,
        gen_ai.tool.name = %remote,
    );
    let fut = tracing::Instrument::instrument(conn.call(remote, arguments, call.cancel), span);
    let answer = on_own_thread(|| inner.handle.block_on(fut));
    let server = &conn.spec.name;
    match answer {
        Ok(result) => {
            let (value, cut) = limit(result, conn.spec.max_result_bytes, &|t| conn.spec.mask(t));
            if cut {
                tracing::debug!(mcp.server = %server, "the answer of `{name}` was cut to {} bytes", conn.spec.max_result_bytes);
            }
            if value.get("isError").and_then(Value::as_bool) == Some(true) {
                let text = engine::render_text(&value);
                return Err(failure(
                    ErrorCode::ToolExecutionFailed,
                    format!("`{name}` failed: {}", stdx::clip(text.trim(), 4096)),
                ));
            }
            Ok(value)
        }
        Err(CallError::Cancelled) => {
            Err(failure(ErrorCode::Cancelled, format!("the call of `{name}` was cancelled")))
        }
        Err(CallError::Timeout) => Err(failure(
            ErrorCode::ToolExecutionFailed,
            conn.spec.mask(&format!(
                "`{name}` did not answer within {} (the server's tool_timeout); the call was \
                 cancelled{}",
                secs(conn.spec.tool_timeout),
                conn.diag.describe()
            )),
        )),
        Err(CallError::Rpc { code, message }) => {
            let ours = match code {
                -32601 => ErrorCode::ToolNotFound,
                -32602 => ErrorCode::InvalidArgument,
                _ => ErrorCode::ToolExecutionFailed,
            };
            Err(failure(
                ours,
                conn.spec.mask(&format!("`{name}`: the server `{server}` answered: {message}")),
            ))
        }
        Err(CallError::Closed(e)) => Err(failure(
            ErrorCode::ToolExecutionFailed,
            conn.spec.mask(&format!(
                "`{name}`: the MCP server `{server}` is not running ({e}){}",
                conn.diag.describe()
            )),
        )),
    }
}
