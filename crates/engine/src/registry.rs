//! The tool registry: every operation as a tool with a name, a description, input
//! and output JSON Schemas derived from its `protocol` types, its effect, and a
//! handler. `ironbees mcp` lists and calls these; the agents hand them to models;
//! the CLI's subcommands call the same session methods the handlers do.
//!
//! The registry is open: tools from outside (an MCP server's, namespaced by the
//! server: `git.status`) join the built-in ones with their own names, schemas,
//! effect and handler. Every tool has an effect, and a run's shadow decides by
//! effect, not by name, what a tool may do inside it (see `shadow.rs`).

use std::sync::{Arc, LazyLock};

use protocol::{Effect, ErrorCode, ErrorInfo, Guidance, Op, Operation, PillarError, ToolSource};
use schemars::{JsonSchema, generate::SchemaSettings};
use serde_json::{Map, Value};
use stdx::Call;

use crate::{Session, error::Result, guidance::error_guidance};

/// What a client is told about a tool.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The built-in operation it answers (None for an outside tool).
    pub operation: Option<Operation>,
    pub name: String,
    pub title: String,
    pub description: String,
    pub effect: Effect,
    pub source: ToolSource,
    /// The request type's JSON Schema (what a caller may send).
    pub input_schema: Arc<Map<String, Value>>,
    /// The response type's JSON Schema (what a successful call answers).
    pub output_schema: Arc<Map<String, Value>>,
}

/// A failed call: the error with its machine code, and guidance with a recovery
/// strategy (computed from the error and the request that failed).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub info: ErrorInfo,
    pub guidance: Guidance,
}

impl ToolError {
    /// The wire body of a failed call (`{"error": ..., "guidance": ...}`).
    pub fn to_body(&self) -> PillarError {
        PillarError { error: self.info.clone(), guidance: self.guidance.clone() }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.info.code, self.info.message)
    }
}

impl std::error::Error for ToolError {}

/// Runs one tool call: JSON arguments in, the JSON answer or the error out.
pub type Handler =
    Arc<dyn Fn(&Session, &Call<'_>, Value) -> std::result::Result<Value, ToolError> + Send + Sync>;

/// One operation as a tool.
pub struct Tool {
    pub spec: ToolSpec,
    pub handler: Handler,
}

/// The built-in operations as tools, in `Operation::ALL` order, then the tools
/// added from outside, in the order they were added.
#[derive(Clone)]
pub struct Registry {
    tools: Vec<Arc<Tool>>,
    /// Outside servers that are configured but not there, and why: a name
    /// that would be theirs gets that reason instead of "no tool named".
    unavailable: Vec<(String, String)>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

impl Registry {
    /// The registry of every operation. Building the schemas costs a few
    /// milliseconds, so every registry shares one set of tools.
    pub fn new() -> Registry {
        static ALL: LazyLock<Vec<Arc<Tool>>> =
            LazyLock::new(|| all_tools().into_iter().map(Arc::new).collect());
        Registry { tools: ALL.clone(), unavailable: Vec::new() }
    }

    /// Records that the outside server `server` is configured but not there
    /// (it failed to start), so that asking for its tools says why.
    pub fn note_unavailable(&mut self, server: &str, reason: &str) {
        self.unavailable.push((server.to_owned(), reason.to_owned()));
    }

    /// The configured servers that are not there, with why.
    pub fn unavailable(&self) -> &[(String, String)] {
        &self.unavailable
    }

    /// The outside servers whose tools are here, in the order they were added.
    pub fn servers(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for t in self.tools() {
            if let ToolSource::Server { server } = &t.spec.source
                && !out.contains(&server.as_str())
            {
                out.push(server);
            }
        }
        out
    }

    /// Why `name` names nothing: the unavailable server it would belong to
    /// (`git` or `git.status`), else the tools there are.
    pub fn why_not_found(&self, name: &str) -> String {
        let server = name.split_once('.').map_or(name, |(s, _)| s);
        match self.unavailable.iter().find(|(s, _)| s == server) {
            Some((s, reason)) => {
                format!(
                    "no tool named `{}`: the MCP server `{s}` is not available ({reason})",
                    stdx::clip(name, 80)
                )
            }
            None => format!(
                "no tool named `{}` (known: {})",
                stdx::clip(name, 80),
                self.names().join(", ")
            ),
        }
    }

    /// Adds a tool from outside. Its name must be new: a built-in tool keeps its
    /// name, and two servers' tools are told apart by their server's prefix.
    pub fn add(&mut self, tool: Tool) -> std::result::Result<(), ErrorInfo> {
        if self.get(&tool.spec.name).is_some() {
            return Err(ErrorInfo::new(
                ErrorCode::AlreadyExists,
                format!("a tool named `{}` is registered already", tool.spec.name),
            ));
        }
        self.tools.push(Arc::new(tool));
        Ok(())
    }

    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().map(|t| t.as_ref())
    }

    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools().find(|t| t.spec.name == name)
    }

    /// Only the named tools (an agent sees its `requiredTools` only), in the
    /// registry's order. A name is a tool's, or an outside server's (all its
    /// tools). `TOOL_NOT_FOUND` names the first unknown one.
    pub fn only(&self, names: &[&str]) -> std::result::Result<Registry, ErrorInfo> {
        let picked = |t: &Tool, n: &str| {
            t.spec.name == n
                || matches!(&t.spec.source, ToolSource::Server { server } if server == n)
        };
        if let Some(unknown) = names.iter().find(|n| !self.tools().any(|t| picked(t, n))) {
            return Err(ErrorInfo::new(ErrorCode::ToolNotFound, self.why_not_found(unknown)));
        }
        Ok(Registry {
            tools: self
                .tools
                .iter()
                .filter(|t| names.iter().any(|n| picked(t, n)))
                .cloned()
                .collect(),
            unavailable: self.unavailable.clone(),
        })
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools().map(|t| t.spec.name.as_str()).collect()
    }

    /// Calls the tool `name` with JSON arguments. An unknown name is
    /// `TOOL_NOT_FOUND`.
    pub fn call(
        &self,
        session: &Session,
        call: &Call<'_>,
        name: &str,
        arguments: Value,
    ) -> std::result::Result<Value, ToolError> {
        let Some(tool) = self.get(name) else {
            let info = ErrorInfo::new(ErrorCode::ToolNotFound, self.why_not_found(name));
            return Err(ToolError { guidance: Guidance::default(), info });
        };
        let span = tool_span(&tool.spec);
        let _enter = span.enter();
        let started = std::time::Instant::now();
        let out = (tool.handler)(session, call, arguments);
        record_outcome(&span, &tool.spec, started, &out);
        out
    }
}

/// What a model reads of a tool's answer: a built-in tool's JSON; an outside
/// tool's answer (an MCP `CallToolResult` as JSON: `content` blocks and
/// `structuredContent`) as its text blocks, else its structured content.
pub fn answer_text(spec: &ToolSpec, answer: &Value) -> String {
    match spec.source {
        ToolSource::BuiltIn => answer.to_string(),
        _ => render_text(answer),
    }
}

/// The text of an MCP `CallToolResult` (as JSON): its text blocks (a
/// resource's text too, other blocks as `[type]`), else its structured
/// content.
pub fn render_text(answer: &Value) -> String {
    let blocks = answer.get("content").and_then(Value::as_array);
    let texts: Vec<String> = blocks
        .into_iter()
        .flatten()
        .map(|b| match b.get("text").and_then(Value::as_str) {
            Some(t) => t.to_owned(),
            None => match b.get("resource").and_then(|r| r.get("text")).and_then(Value::as_str) {
                Some(t) => t.to_owned(),
                None => format!("[{}]", b.get("type").and_then(Value::as_str).unwrap_or("content")),
            },
        })
        .collect();
    if texts.is_empty() {
        return answer.get("structuredContent").map(Value::to_string).unwrap_or_default();
    }
    texts.join("\n")
}

/// The span of one tool call (OpenTelemetry's GenAI conventions: an
/// `execute_tool` operation).
pub(crate) fn tool_span(spec: &ToolSpec) -> tracing::Span {
    let source = match &spec.source {
        ToolSource::Server { server } => server.as_str(),
        _ => "builtin",
    };
    tracing::info_span!(
        "execute_tool",
        otel.name = %format!("execute_tool {}", spec.name),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %spec.name,
        gen_ai.tool.type = "function",
        ironbees.tool.source = source,
        ironbees.tool.effect = ?spec.effect,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    )
}

/// Records how a call ended on its span, and its duration as a metric.
pub(crate) fn record_outcome(
    span: &tracing::Span,
    spec: &ToolSpec,
    started: std::time::Instant,
    out: &std::result::Result<Value, ToolError>,
) {
    let code = out.as_ref().err().map(|e| e.info.code.as_str());
    if let Some(code) = code {
        span.record("error.type", code);
        span.record("otel.status_code", "ERROR");
    }
    tracing::event!(
        target: "ironbees::metrics",
        tracing::Level::TRACE,
        histogram.ironbees.tool.duration = started.elapsed().as_secs_f64(),
        gen_ai.tool.name = %spec.name,
        ironbees.tool.ok = code.is_none(),
    );
}

/// The schema of `T` as a JSON object: the request as deserialized, or the
/// response as serialized (fields skipped when empty are not required).
fn schema<T: JsonSchema>(serialize: bool) -> Arc<Map<String, Value>> {
    let settings = SchemaSettings::draft2020_12();
    let settings = if serialize { settings.for_serialize() } else { settings.for_deserialize() };
    let schema = settings.into_generator().into_root_schema_for::<T>();
    match serde_json::to_value(schema) {
        Ok(Value::Object(m)) => Arc::new(inline_root_ref(m)),
        _ => Arc::new(Map::new()),
    }
}

/// What a call's structured content is: the answer, or (with `isError`) the error
/// body with its guidance. Clients validate both against the output schema.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum Answer<T> {
    Ok(T),
    Err(Box<PillarError>),
}

/// The output schema: either the response or the error body, an object either way.
fn output_schema<T: JsonSchema>() -> Arc<Map<String, Value>> {
    let mut m = (*schema::<Answer<T>>(true)).clone();
    m.insert("type".into(), Value::from("object"));
    Arc::new(m)
}

/// A transparent wrapper's schema is a bare `$ref` to its inner type; MCP clients
/// want the root to be the object itself, so the referenced definition is inlined.
fn inline_root_ref(mut root: Map<String, Value>) -> Map<String, Value> {
    let Some(Value::String(r)) = root.get("$ref").cloned() else { return root };
    let Some(name) = r.strip_prefix("#/$defs/") else { return root };
    let Some(Value::Object(def)) = root.get("$defs").and_then(|d| d.get(name)).cloned() else {
        return root;
    };
    root.remove("$ref");
    for (k, v) in def {
        root.entry(k).or_insert(v);
    }
    root
}

/// The spec of the operation `R` requests.
pub(crate) fn spec_of<R: Op>() -> ToolSpec {
    let op = R::OPERATION;
    ToolSpec {
        operation: Some(op),
        name: op.name().to_owned(),
        title: op.title().to_owned(),
        description: op.description().to_owned(),
        effect: op.effect(),
        source: ToolSource::BuiltIn,
        input_schema: schema::<R>(false),
        output_schema: output_schema::<R::Response>(),
    }
}

/// A tool whose handler parses `R`, calls `f` and serializes the answer.
fn tool<R: Op>(f: fn(&Session, &R, &Call<'_>) -> Result<R::Response>) -> Tool {
    Tool {
        spec: spec_of::<R>(),
        handler: Arc::new(move |session, call, arguments| {
            run_op(arguments, |req: R| f(session, &req, call))
        }),
    }
}

/// Parses `R` from `arguments`, runs `f` and serializes its answer; errors get
/// their guidance from the request that failed.
pub(crate) fn run_op<R: Op>(
    arguments: Value,
    f: impl FnOnce(R) -> Result<R::Response>,
) -> std::result::Result<Value, ToolError> {
    let op = R::OPERATION;
    let fail = |info: ErrorInfo, request: &Value| {
        let info = clip_info(info);
        let request = clip_strings(request, 512);
        ToolError { guidance: error_guidance(&info, op, &request), info }
    };
    let req: R = match serde_json::from_value(arguments.clone()) {
        Ok(r) => r,
        Err(e) => {
            let info =
                ErrorInfo::new(ErrorCode::InvalidArgument, format!("bad `{op}` arguments: {e}"));
            return Err(fail(info, &arguments));
        }
    };
    match f(req) {
        Ok(resp) => serde_json::to_value(resp).map_err(|e| {
            fail(ErrorInfo::new(ErrorCode::Internal, format!("answer of `{op}`: {e}")), &arguments)
        }),
        Err(e) => Err(fail(e.to_info(), &arguments)),
    }
}

/// What the caller sent is echoed cut short: a 5 MB bogus path must not come back
/// as a 25 MB error (message, guidance and text each repeating it).
fn clip_info(mut info: ErrorInfo) -> ErrorInfo {
    info.message = stdx::clip(&info.message, 4096).into_owned();
    if let Some(p) = &mut info.path {
        *p = stdx::clip(p, 512).into_owned();
    }
    info
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

fn all_tools() -> Vec<Tool> {
    vec![
        tool(Session::understand),
        tool(Session::change),
        tool(Session::navigate),
        tool(Session::read),
        tool(Session::write),
        tool(Session::manage),
        tool(Session::symbols),
        tool(Session::skeleton),
        tool(Session::search),
        tool(Session::localize),
        tool(Session::repomap),
        tool(Session::graph),
        tool(Session::impact),
        tool(Session::hotspots),
        tool(Session::report),
        tool(Session::status),
        tool(Session::index),
        tool(Session::undo),
        tool(Session::redo),
        tool(Session::history),
        tool(Session::build),
        tool(Session::test),
        tool(Session::exec),
        tool(Session::route),
        tool(Session::guard_check),
        tool(Session::search_project),
        tool(Session::read_code),
        tool(Session::edit_code),
        tool(Session::analyze_relationship),
        tool(Session::list_directory),
        tool(Session::get_hierarchy),
        tool(Session::manage_project),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed set: every operation is a tool, once, in `Operation::ALL` order,
    /// and its schemas are objects a client can read.
    #[test]
    fn every_operation_is_one_tool_with_object_schemas() {
        let r = Registry::new();
        let ops: Vec<Operation> = r.tools().filter_map(|t| t.spec.operation).collect();
        assert_eq!(ops, Operation::ALL.to_vec());
        for t in r.tools() {
            assert_eq!(
                t.spec.input_schema.get("type"),
                Some(&Value::from("object")),
                "{}",
                t.spec.name
            );
            assert_eq!(
                t.spec.output_schema.get("type"),
                Some(&Value::from("object")),
                "{}",
                t.spec.name
            );
        }
        let only = r.only(&["read", "navigate"]).unwrap();
        assert_eq!(only.names(), vec!["navigate", "read"]);
        assert_eq!(r.only(&["read", "rm_rf"]).err().unwrap().code, ErrorCode::ToolNotFound);
    }
}
