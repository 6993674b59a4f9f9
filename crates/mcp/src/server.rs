//! The rmcp server: tool definitions, argument conversion, running pillar calls
//! on the blocking pool with progress and cancellation, and result rendering.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicBool, AtomicU64, Ordering},
};

use pillars::{Call, Workspace};
use protocol::{ErrorCode, ErrorInfo, Guidance, Pillar, PillarError};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{
        CallToolResult, ContentBlock, Implementation, ProgressNotificationParam,
        ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
    tool, tool_handler, tool_router,
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::args::*;

const INSTRUCTIONS: &str = "\
ironbees: code intelligence and safe, reversible edits for this repository.
Typical flow (1-2 turns): `understand` a file, symbol or question → one answer with the \
skeleton, symbols, dependencies, call graph, PageRank, impact radius, a report and next \
actions; then `change` with edits (each with the file's `expectedHash` from that answer) \
and options.dryRun=false → a checked, journaled transaction with its impact, suggested \
tests and a transactionId (`manage` undo reverts it). Every answer carries `guidance`: \
nextActions are ready tool calls; on errors, `guidance.recovery` says what to do. \
Error texts start with the machine code (NO_MATCH, HASH_MISMATCH, AMBIGUOUS_MATCH, \
INDEX_STALE, PATH_OUTSIDE_ROOT, ...). Paths are relative to the project root.";

/// The MCP server of one project. Clone is cheap (the workspace is shared).
#[derive(Clone)]
pub struct Server {
    ws: Arc<Mutex<Workspace>>,
    tool_router: ToolRouter<Server>,
}

/// A code-index `Progress` that forwards to an MCP progress notification channel.
struct ChannelProgress {
    tx: Option<tokio::sync::mpsc::UnboundedSender<(f64, String)>>,
    done: AtomicU64,
    phase: Mutex<String>,
}

impl pillars::Progress for ChannelProgress {
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
    pub fn new(ws: Workspace) -> Server {
        Server { ws: Arc::new(Mutex::new(ws)), tool_router: Self::tool_router() }
    }

    /// Runs `f` on the blocking pool with the workspace locked, forwarding progress
    /// (when the client sent a progressToken) and cancellation, and renders the
    /// answer or the error (with its recovery guidance).
    async fn run<T, F>(
        &self,
        pillar: Pillar,
        request: Value,
        ctx: RequestContext<RoleServer>,
        f: F,
    ) -> Result<CallToolResult, McpError>
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&mut Workspace, &Call<'_>) -> pillars::Result<T> + Send + 'static,
    {
        let cancel = Arc::new(AtomicBool::new(false));
        let watch = {
            let (ct, cancel) = (ctx.ct.clone(), Arc::clone(&cancel));
            tokio::spawn(async move {
                ct.cancelled().await;
                cancel.store(true, Ordering::SeqCst);
            })
        };
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
        let ws = Arc::clone(&self.ws);
        let flag = Arc::clone(&cancel);
        let progress = ChannelProgress {
            tx: token.is_some().then_some(tx),
            done: AtomicU64::new(0),
            phase: Mutex::new(String::new()),
        };
        let joined = tokio::task::spawn_blocking(move || {
            // A panic in an earlier call must not take the server down with it.
            let mut guard = ws.lock().unwrap_or_else(|p| p.into_inner());
            let call = Call::new(&progress, &flag);
            let out = f(&mut guard, &call);
            drop(progress);
            out
        })
        .await;
        watch.abort();
        let _ = forward.await;
        match joined {
            Ok(Ok(value)) => Ok(success(&value)),
            Ok(Err(e)) => Ok(failure(e.to_info(), pillar, &request)),
            Err(join) => Ok(failure(
                ErrorInfo::new(ErrorCode::Internal, format!("the {pillar} call panicked: {join}")),
                pillar,
                &request,
            )),
        }
    }

    /// Converts tool arguments to a protocol request (INVALID_ARGUMENT on failure).
    fn convert<A: Serialize, R: serde::de::DeserializeOwned>(
        args: &A,
        pillar: Pillar,
    ) -> Result<(R, Value), CallToolResult> {
        let value = serde_json::to_value(args).unwrap_or(Value::Null);
        match serde_json::from_value::<R>(value.clone()) {
            Ok(r) => Ok((r, value)),
            Err(e) => Err(failure(
                ErrorInfo::new(
                    ErrorCode::InvalidArgument,
                    format!("bad `{pillar}` arguments: {e}"),
                ),
                pillar,
                &value,
            )),
        }
    }
}

fn success<T: Serialize>(value: &T) -> CallToolResult {
    let v = serde_json::to_value(value).unwrap_or(Value::Null);
    CallToolResult::structured(v)
}

/// An error result: `isError`, text starting with the machine code, structured
/// content with code, message, details and guidance (with the recovery strategy).
pub(crate) fn failure(mut info: ErrorInfo, pillar: Pillar, request: &Value) -> CallToolResult {
    // What the caller sent is echoed cut short: a 5 MB bogus path must not come back
    // as a 25 MB error (message, guidance and text each repeating it).
    info.message = stdx::clip(&info.message, 4096).into_owned();
    if let Some(p) = &mut info.path {
        *p = stdx::clip(p, 512).into_owned();
    }
    let request = clip_strings(request, 512);
    let guidance = pillars::error_guidance(&info, pillar, &request);
    let body = PillarError { error: info.clone(), guidance };
    let v = serde_json::to_value(&body).unwrap_or(Value::Null);
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!(
        "{}: {}\n{}",
        info.code, info.message, v
    ))]);
    r.structured_content = Some(v);
    r
}

/// `v` with every string longer than `max` bytes cut in the middle.
fn clip_strings(v: &Value, max: usize) -> Value {
    match v {
        Value::String(s) => Value::String(stdx::clip(s, max).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(|x| clip_strings(x, max)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), clip_strings(x, max))).collect())
        }
        other => other.clone(),
    }
}

/// An answer that is not a pillar's own (compatibility tools): the payload plus
/// guidance pointing at the pillar that supersedes the tool.
fn compat<T: Serialize>(payload: T, guidance: Guidance) -> Value {
    let mut v = serde_json::to_value(payload).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("guidance".into(), serde_json::to_value(guidance).unwrap_or(Value::Null));
    }
    v
}

fn superseded(by: &str, summary: String, next: Option<protocol::NextAction>) -> Guidance {
    Guidance {
        context_summary: format!(
            "{summary} (this tool is superseded by `{by}`, which answers with more in one call)"
        ),
        next_actions: next.into_iter().collect(),
        warnings: vec![protocol::Warning {
            severity: protocol::WarningLevel::Info,
            code: "SUPERSEDED".into(),
            message: format!("prefer `{by}`"),
            affected: vec![],
            mitigation: None,
        }],
        recovery: None,
    }
}

fn next(tool: &str, arguments: Value, description: &str) -> Option<protocol::NextAction> {
    Some(protocol::NextAction {
        priority: 1,
        tool: tool.into(),
        arguments,
        description: description.into(),
        rationale: String::new(),
    })
}

#[tool_router]
impl Server {
    #[tool(
        description = "Understand a file, directory, symbol or question in ONE call: skeleton, symbols \
with signatures, dependencies and dependents, call graph (calls in/out), PageRank, hotspots, impact \
radius (dependents, affected tests), and a synthesized report (architectural role, complexity with \
fan-in/fan-out, risks, recommendations), plus guidance with ready next tool calls. `target` may be \
a path, a symbol (`Server.start`) or a question in English or Korean. Answers include each file's \
`hash` to pass as `expectedHash` to `change`. Bounded by `budget` tokens.",
        annotations(title = "Understand code", read_only_hint = true, open_world_hint = false)
    )]
    async fn understand(
        &self,
        Parameters(args): Parameters<UnderstandArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let (req, value) =
            match Self::convert::<_, protocol::UnderstandRequest>(&args, Pillar::Understand) {
                Ok(x) => x,
                Err(r) => return Ok(r),
            };
        self.run(Pillar::Understand, value, ctx, move |ws, call| ws.understand(&req, call)).await
    }

    #[tool(
        description = "Change code safely: edits (targetString/replacementString, lineRange, \
replaceSymbol by qualifiedName, insert, create, delete, rename), each with `expectedHash` (sha256 \
of the file as you read it), applied as ONE all-or-nothing journaled transaction. PREVIEW BY \
DEFAULT: without options.dryRun=false nothing is written and you get the diffs and the impact \
report (changed symbols, affected files and hotspots, breaking-change risk, suggested tests with \
priority). With dryRun=false the edit is applied, checked (no new syntax errors; check=build also \
builds) and rolled back automatically when the check fails; the answer has the transactionId for \
`manage` undo/redo. Errors (NO_MATCH, AMBIGUOUS_MATCH, HASH_MISMATCH, PATH_OUTSIDE_ROOT) change \
nothing and carry a recovery strategy.",
        annotations(
            title = "Change code (checked, reversible)",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn change(
        &self,
        Parameters(args): Parameters<ChangeArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let (req, value) = match Self::convert::<_, protocol::ChangeRequest>(&args, Pillar::Change)
        {
            Ok(x) => x,
            Err(r) => return Ok(r),
        };
        self.run(Pillar::Change, value, ctx, move |ws, call| ws.change(&req, call)).await
    }

    #[tool(
        description = "Navigate the code graph: definition, references, callers, callees (with depth), \
implementations and type hierarchy (supertypes and subtypes) of a symbol (`Server.start`, `parse`) \
or of `path:line`. Results carry path, line, the enclosing definition and the source line.",
        annotations(title = "Navigate symbols", read_only_hint = true, open_world_hint = false)
    )]
    async fn navigate(
        &self,
        Parameters(args): Parameters<NavigateArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let (req, value) =
            match Self::convert::<_, protocol::NavigateRequest>(&args, Pillar::Navigate) {
                Ok(x) => x,
                Err(r) => return Ok(r),
            };
        self.run(Pillar::Navigate, value, ctx, move |ws, call| ws.navigate(&req, call)).await
    }

    #[tool(
        description = "Read a file: full (large files are cut with a warning), skeleton (signatures and \
first doc lines with the file's true line numbers, bodies elided), fragment (lineRange \"10-40\" or \
a definition by `symbol`), or diff (`against`: an edit transaction id). Always from disk, with the \
file's current sha256 `hash` (the next `expectedHash`).",
        annotations(title = "Read a file", read_only_hint = true, open_world_hint = false)
    )]
    async fn read(
        &self,
        Parameters(args): Parameters<ReadArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let (req, value) = match Self::convert::<_, protocol::ReadRequest>(&args, Pillar::Read) {
            Ok(x) => x,
            Err(r) => return Ok(r),
        };
        self.run(Pillar::Read, value, ctx, move |ws, call| ws.read(&req, call)).await
    }

    #[tool(
        description = "Create a file from `content`, a built-in `template` (module, test, class; for the \
file's language, with `variables`), or `from` an existing file (copied with its name replaced in \
every case form: snake_case, CamelCase, kebab-case, UPPER_CASE). Journaled and undoable; refuses to \
overwrite unless `overwrite` is true.",
        annotations(
            title = "Write a new file",
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn write(
        &self,
        Parameters(args): Parameters<WriteArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let (req, value) = match Self::convert::<_, protocol::WriteRequest>(&args, Pillar::Write) {
            Ok(x) => x,
            Err(r) => return Ok(r),
        };
        self.run(Pillar::Write, value, ctx, move |ws, call| ws.write(&req, call)).await
    }

    #[tool(
        description = "Manage the project: `status` (index, freshness, recent edits, test tool), `undo` / \
`redo` (an edit transaction, default the newest; refused if a file changed since), `history` (with \
`id`: that transaction's diffs), `rebuild` (the index, incremental or full), `test` (detect and run \
the project's tests in the sandbox, optionally only `targets`; progress notifications while it runs).",
        annotations(
            title = "Manage project state",
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn manage(
        &self,
        Parameters(args): Parameters<ManageArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let (req, value) = match Self::convert::<_, protocol::ManageRequest>(&args, Pillar::Manage)
        {
            Ok(x) => x,
            Err(r) => return Ok(r),
        };
        self.run(Pillar::Manage, value, ctx, move |ws, call| ws.manage(&req, call)).await
    }

    // --- compatibility tools (superseded) ----------------------------------------------

    #[tool(
        description = "Superseded by `navigate` and `understand`. Search definitions by name and rank \
files for a query (identifiers, a question, an error message).",
        annotations(
            title = "Search the project (superseded)",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn search_project(
        &self,
        Parameters(args): Parameters<SearchProjectArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let value = serde_json::to_value(&args).unwrap_or_default();
        self.run(Pillar::Navigate, value, ctx, move |ws, call| {
            let (symbols, files, warnings) =
                ws.search_project(&args.query, args.max_results.unwrap_or(20), call)?;
            let summary = format!(
                "{} definition(s) and {} file(s) for {:?}",
                symbols.len(),
                files.len(),
                args.query
            );
            let follow = files.first().map(|f| json!({"target": f.path}));
            let mut g = superseded(
                "understand",
                summary,
                follow.and_then(|a| next("understand", a, "understand the best file")),
            );
            g.warnings.extend(warnings);
            Ok(compat(json!({"symbols": symbols, "files": files}), g))
        })
        .await
    }

    #[tool(
        description = "Superseded by `read`. Read a file in full, as a skeleton, or a fragment by lineRange.",
        annotations(
            title = "Read code (superseded)",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn read_code(
        &self,
        Parameters(args): Parameters<ReadCodeArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let value =
            json!({"target": args.file_path, "view": args.view, "lineRange": args.line_range});
        let req: protocol::ReadRequest = match serde_json::from_value(strip_nulls(value.clone())) {
            Ok(r) => r,
            Err(e) => {
                return Ok(failure(
                    ErrorInfo::new(ErrorCode::InvalidArgument, e.to_string()),
                    Pillar::Read,
                    &value,
                ));
            }
        };
        self.run(Pillar::Read, value, ctx, move |ws, call| ws.read(&req, call)).await
    }

    #[tool(
        description = "Superseded by `change`. Apply edits (replace by targetString or lineRange, create, \
delete) at once as one checked transaction; dryRun defaults to false here.",
        annotations(
            title = "Edit code (superseded)",
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn edit_code(
        &self,
        Parameters(args): Parameters<EditCodeArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let edits: Vec<Value> = args
            .edits
            .iter()
            .map(|e| {
                let path = e.file_path.clone().or_else(|| args.file_path.clone());
                let op = match e.operation {
                    Some(EditCodeOperation::Create) => Some("create"),
                    Some(EditCodeOperation::Delete) => Some("delete"),
                    _ => None,
                };
                let mut v = json!({"path": path, "targetString": e.target_string,
                    "lineRange": e.line_range, "expectedHash": e.expected_hash});
                match op {
                    Some("create") => {
                        v["op"] = json!("create");
                        v["content"] = json!(e.replacement_string.clone().unwrap_or_default());
                        v["targetString"] = Value::Null;
                    }
                    Some(o) => v["op"] = json!(o),
                    None => v["replacementString"] = json!(e.replacement_string),
                }
                strip_nulls(v)
            })
            .collect();
        let value = json!({"description": "edit_code", "edits": edits,
            "options": {"dryRun": args.dry_run.unwrap_or(false)}});
        let req: protocol::ChangeRequest = match serde_json::from_value(value.clone()) {
            Ok(r) => r,
            Err(e) => {
                return Ok(failure(
                    ErrorInfo::new(ErrorCode::InvalidArgument, format!("bad edit: {e}")),
                    Pillar::Change,
                    &value,
                ));
            }
        };
        self.run(Pillar::Change, value, ctx, move |ws, call| ws.change(&req, call)).await
    }

    #[tool(
        description = "Superseded by `navigate` (calls, references) and `understand` (dependencies). \
Relationships of a symbol or file: calls (upstream = callers, downstream = callees), references, \
dependencies (upstream = dependents, downstream = imports).",
        annotations(
            title = "Analyze relationships (superseded)",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn analyze_relationship(
        &self,
        Parameters(args): Parameters<AnalyzeRelationshipArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let value = serde_json::to_value(&args).unwrap_or_default();
        let dir = args.direction.unwrap_or(Direction::Both);
        let depth = args.max_depth.unwrap_or(1).clamp(1, 5);
        self.run(Pillar::Navigate, value, ctx, move |ws, call| {
            let nav = |ws: &mut Workspace, action: protocol::NavigateAction| {
                ws.navigate(
                    &protocol::NavigateRequest {
                        action,
                        target: args.target.clone(),
                        depth: Some(depth),
                        limit: Some(100),
                        path: None,
                    },
                    call,
                )
            };
            match args.mode {
                RelationMode::Dependencies => {
                    let req = protocol::UnderstandRequest {
                        target: args.target.clone(),
                        depth: protocol::Depth::Standard,
                        include: protocol::UnderstandInclude {
                            skeleton: false,
                            report: false,
                            call_graph: false,
                            ..Default::default()
                        },
                        budget: Some(6000),
                    };
                    let u = ws.understand(&req, call)?;
                    let f = u.files.first();
                    let up = matches!(dir, Direction::Upstream | Direction::Both);
                    let down = matches!(dir, Direction::Downstream | Direction::Both);
                    let payload = json!({
                        "target": args.target,
                        "dependents": if up { f.map(|f| json!(f.dependents)) } else { None },
                        "dependencies": if down { f.map(|f| json!(f.dependencies)) } else { None },
                        "external": f.map(|f| json!(f.external)),
                    });
                    Ok(compat(
                        strip_nulls(payload),
                        superseded(
                            "understand",
                            format!("dependencies of {}", args.target),
                            next(
                                "understand",
                                json!({"target": args.target}),
                                "everything about it",
                            ),
                        ),
                    ))
                }
                RelationMode::References => {
                    let r = nav(ws, protocol::NavigateAction::References)?;
                    Ok(compat(
                        json!({"target": args.target, "references": r.results, "total": r.total}),
                        superseded("navigate", r.guidance.context_summary, None),
                    ))
                }
                RelationMode::Calls => {
                    let callers = matches!(dir, Direction::Upstream | Direction::Both)
                        .then(|| nav(ws, protocol::NavigateAction::Callers))
                        .transpose()?;
                    let callees = matches!(dir, Direction::Downstream | Direction::Both)
                        .then(|| nav(ws, protocol::NavigateAction::Callees))
                        .transpose()?;
                    let payload = json!({
                        "target": args.target,
                        "callers": callers.as_ref().map(|c| &c.results),
                        "callees": callees.as_ref().map(|c| &c.results),
                    });
                    Ok(compat(
                        strip_nulls(payload),
                        superseded(
                            "navigate",
                            format!("calls of {}", args.target),
                            next(
                                "understand",
                                json!({"target": args.target}),
                                "callers, callees and impact at once",
                            ),
                        ),
                    ))
                }
            }
        })
        .await
    }

    #[tool(
        description = "Superseded by `understand` on a directory. List a directory (gitignore-aware), with \
each indexed file's language, line count and number of definitions.",
        annotations(
            title = "List a directory (superseded)",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_directory(
        &self,
        Parameters(args): Parameters<ListDirectoryArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let value = serde_json::to_value(&args).unwrap_or_default();
        self.run(Pillar::Navigate, value, ctx, move |ws, call| {
            let dir = args.path.clone().unwrap_or_default();
            let entries = ws.list_directory(&dir, args.depth.unwrap_or(1), call)?;
            let target = if dir.is_empty() { ".".to_owned() } else { dir.clone() };
            let g = superseded(
                "understand",
                format!("{} entries under {target}", entries.len()),
                next("understand", json!({"target": target}), "the directory's most central files"),
            );
            Ok(compat(json!({"path": target, "entries": entries}), g))
        })
        .await
    }

    #[tool(
        description = "Superseded by `navigate` with action `hierarchy`. Supertypes and subtypes of a type.",
        annotations(
            title = "Type hierarchy (superseded)",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn get_hierarchy(
        &self,
        Parameters(args): Parameters<GetHierarchyArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let value = serde_json::to_value(&args).unwrap_or_default();
        let req = protocol::NavigateRequest {
            action: protocol::NavigateAction::Hierarchy,
            target: args.target,
            depth: args.depth,
            limit: None,
            path: None,
        };
        self.run(Pillar::Navigate, value, ctx, move |ws, call| ws.navigate(&req, call)).await
    }

    #[tool(
        description = "Superseded by `manage`. status, undo, redo, history, rebuild or test.",
        annotations(
            title = "Manage the project (superseded)",
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn manage_project(
        &self,
        Parameters(args): Parameters<ManageProjectArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let value = serde_json::to_value(&args).unwrap_or_default();
        let req: protocol::ManageRequest = match serde_json::from_value(value.clone()) {
            Ok(r) => r,
            Err(e) => {
                return Ok(failure(
                    ErrorInfo::new(ErrorCode::InvalidArgument, e.to_string()),
                    Pillar::Manage,
                    &value,
                ));
            }
        };
        self.run(Pillar::Manage, value, ctx, move |ws, call| ws.manage(&req, call)).await
    }
}

/// Removes `null` members (optional arguments that were not given).
fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, strip_nulls(v))).collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("ironbees", env!("CARGO_PKG_VERSION"))
                    .with_title("ironbees code intelligence"),
            )
            .with_instructions(INSTRUCTIONS)
    }
}
