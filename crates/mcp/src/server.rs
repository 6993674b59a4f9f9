//! The rmcp server handler: the engine's registry as MCP tools. Listing is the
//! registry's specs; a call runs the tool's handler on the blocking pool with the
//! client's cancellation and progress token, and renders the answer or the error.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicU64, Ordering},
};

use engine::{Registry, Session, ToolError};
use protocol::{Effect, ErrorCode, ErrorInfo, Guidance};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
        ServerConfig, Tool, ToolAnnotations,
    },
    service::RequestContext,
};
use serde_json::Value;

const INSTRUCTIONS: &str = "\
ironbees: code intelligence and safe, reversible edits for this repository.
Typical flow (1-2 turns): `understand` a file, symbol or question → one answer with the \
skeleton, symbols, dependencies, call graph, PageRank, hotspots, impact radius, a report and \
next actions; then `change` with edits (each with the file's `expectedHash` from that answer) \
and options.dryRun=false → a checked, journaled transaction with its impact, suggested \
tests and a transactionId (`undo` reverts it). `localize` ranks the files an issue is about, \
`search` finds definitions, `build`/`test` run in the sandbox. Every pillar's answer carries \
`guidance`: nextActions are ready tool calls; on errors, `guidance.recovery` says what to do. \
Error texts start with the machine code (NO_MATCH, HASH_MISMATCH, AMBIGUOUS_MATCH, \
INDEX_STALE, PATH_OUTSIDE_ROOT, ...). Paths are relative to the project root.";

/// The MCP server of one session. Clone is cheap (the session is shared); calls
/// run concurrently — the session lets readers proceed while an edit commits.
#[derive(Clone)]
pub struct Server {
    session: Arc<Session>,
    registry: Arc<Registry>,
}

/// Forwards progress to an MCP progress notification channel.
struct ChannelProgress {
    tx: Option<tokio::sync::mpsc::UnboundedSender<(f64, String)>>,
    done: AtomicU64,
    phase: Mutex<String>,
}

impl stdx::Progress for ChannelProgress {
    fn phase(&self, name: &str, _total: Option<u64>) {
        if let Ok(mut p) = self.phase.lock() {
            *p = name.to_owned();
        }
        let n = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(tx) = &self.tx {
            let _ = tx.send((n as f64, name.to_owned()));
        }
    }

    fn advance(&self, n: u64) {
        let done = self.done.fetch_add(n, Ordering::SeqCst) + n;
        if let Some(tx) = &self.tx {
            let phase = self.phase.lock().map(|p| p.clone()).unwrap_or_default();
            let _ = tx.send((done as f64, format!("{phase}: {done}")));
        }
    }
}

impl Server {
    pub fn new(session: Arc<Session>) -> Server {
        Server::with_registry(session, Registry::new())
    }

    /// A server of `registry`'s tools: the built-in ones and, re-exported
    /// beside them, the configured MCP servers' (`server.tool`), whose answers
    /// pass through as their servers gave them.
    pub fn with_registry(session: Arc<Session>, registry: Registry) -> Server {
        Server { session, registry: Arc::new(registry) }
    }

    /// The MCP description of every tool: name, title, description, input and
    /// output schemas (derived from the protocol types) and hints from the effect.
    pub fn tools(&self) -> Vec<Tool> {
        self.registry
            .tools()
            .map(|t| {
                let s = &t.spec;
                let read_only = s.effect == Effect::Read;
                // Undo, redo and outside tools may change what an earlier call
                // did; an edit only adds to it.
                let destructive = matches!(s.effect, Effect::History | Effect::External);
                let tool =
                    Tool::new(s.name.clone(), s.description.clone(), Arc::clone(&s.input_schema))
                        .with_title(s.title.clone());
                // An outside tool without an output schema answers content only.
                let tool = if s.output_schema.is_empty() {
                    tool
                } else {
                    tool.with_raw_output_schema(Arc::clone(&s.output_schema))
                };
                tool.with_annotations(ToolAnnotations::from_raw(
                    Some(s.title.clone()),
                    Some(read_only),
                    Some(destructive),
                    Some(false),
                    Some(s.effect == Effect::External),
                ))
            })
            .collect()
    }

    async fn run(
        &self,
        name: String,
        arguments: Value,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if self.registry.get(&name).is_none() {
            return Err(McpError::invalid_params(
                format!(
                    "TOOL_NOT_FOUND: no tool named {:?} (known: {})",
                    stdx::clip(&name, 80),
                    self.registry.names().join(", ")
                ),
                None,
            ));
        }
        let token = ctx.meta.get_progress_token();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(f64, String)>();
        let forward = {
            let peer = ctx.peer.clone();
            let token = token.clone();
            tokio::spawn(async move {
                while let Some((progress, message)) = rx.recv().await {
                    if let Some(t) = &token {
                        let p = ProgressNotificationParam::new(t.clone(), progress)
                            .with_message(message);
                        let _ = peer.notify_progress(p).await;
                    }
                }
            })
        };
        let progress = ChannelProgress {
            tx: token.is_some().then_some(tx),
            done: AtomicU64::new(0),
            phase: Mutex::new(String::new()),
        };
        let name_of_call = name.clone();
        let (session, registry, cancel) =
            (Arc::clone(&self.session), Arc::clone(&self.registry), ctx.ct.clone());
        let joined = tokio::task::spawn_blocking(move || {
            let call = stdx::Call::new(&progress, &cancel);
            let out = registry.call(&session, &call, &name, arguments);
            drop(progress);
            (name, out)
        })
        .await;
        let _ = forward.await;
        let outside = self.registry.get(&name_of_call).is_some_and(|t| t.spec.operation.is_none());
        Ok(match joined {
            // An outside tool's answer is an MCP result already: passed through.
            Ok((_, Ok(value))) if outside => serde_json::from_value(value.clone())
                .unwrap_or_else(|_| CallToolResult::structured(value)),
            Ok((_, Ok(value))) => CallToolResult::structured(value),
            Ok((_, Err(e))) => failure(&e),
            Err(join) => failure(&ToolError {
                info: ErrorInfo::new(
                    ErrorCode::Internal,
                    format!("the tool call panicked: {join}"),
                ),
                guidance: Guidance::default(),
            }),
        })
    }
}

/// An error result: `isError`, text starting with the machine code, structured
/// content with code, message, details and guidance (with the recovery strategy).
fn failure(e: &ToolError) -> CallToolResult {
    let v = serde_json::to_value(e.to_body()).unwrap_or(Value::Null);
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!(
        "{}: {}\n{}",
        e.info.code, e.info.message, v
    ))]);
    r.structured_content = Some(v);
    r
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("ironbees", env!("CARGO_PKG_VERSION"))
                    .with_title("ironbees code intelligence"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        self.run(request.name.into_owned(), arguments, context).await.map(Into::into)
    }
}
