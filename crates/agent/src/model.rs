//! One agent's turn: the model and the tools in a loop until the model answers
//! without calling a tool.
//!
//! The agent sees only its `requiredTools`, with the registry's names, descriptions
//! and schemas (the ones `ironbees mcp` serves), and every call goes through
//! [`engine::Registry::call_in`] against the run's overlay, so the coder's edits
//! stay out of the working tree and every agent reads the run's version of a
//! file. Each model call, tool call and answer is an event of the run; tokens and
//! cost add up in the state, where the budget policy reads them.
//!
//! A turn ends early, without failing the node, when the model loops (the same
//! call with the same answer, see [`LoopDetector`]), when the budget is spent, or
//! after [`MAX_ROUNDS`] model calls: the node then records the reason and the run
//! goes to WAIT_HUMAN with its work so far.

use std::time::Instant;

use llm::{CallOptions, Content, Message, Request, Role, StreamEvent, ToolDef};
use protocol::{CodingState, RunEventKind};
use serde_json::Value;
use stdx::CancellationToken;
use workflow::{NodeContext, NodeError};

use crate::{
    AgentDef,
    orchestrator::Shared,
    policy::{LoopDetector, over_budget},
};

/// Model calls in one turn before it stops for a human: a coder that has not
/// finished after this many is lost, and a human is cheaper than more tokens.
pub(crate) const MAX_ROUNDS: u32 = 40;

/// A tool's answer is cut to this many bytes before it goes back to the model:
/// above a whole-file `read` (which cuts itself at 12k tokens and says so), so only
/// a runaway answer is ever cut.
const MAX_TOOL_ANSWER: usize = 96 * 1024;

/// What an agent's turn needs from the node running it: where its events go, its
/// cancellation, its run. A node's context is one; a group of agents running in
/// parallel gives each turn a [`Buffered`] one, emitted in order once all answered.
pub(crate) trait TurnIo {
    fn emit(&mut self, kind: RunEventKind);
    fn cancellation_token(&self) -> &CancellationToken;
    fn run_id(&self) -> &str;
    fn execution_started(&self) -> Instant;
    fn is_cancelled(&self) -> bool {
        self.cancellation_token().is_cancelled()
    }
}

impl TurnIo for NodeContext<'_> {
    fn emit(&mut self, kind: RunEventKind) {
        NodeContext::emit(self, kind);
    }
    fn cancellation_token(&self) -> &CancellationToken {
        NodeContext::cancellation_token(self)
    }
    fn run_id(&self) -> &str {
        NodeContext::run_id(self)
    }
    fn execution_started(&self) -> Instant {
        NodeContext::execution_started(self)
    }
}

/// A turn's events kept until its node emits them (a parallel group's turn).
pub(crate) struct Buffered {
    pub(crate) run_id: String,
    pub(crate) cancel: CancellationToken,
    pub(crate) started: Instant,
    pub(crate) events: Vec<RunEventKind>,
}

impl TurnIo for Buffered {
    fn emit(&mut self, kind: RunEventKind) {
        self.events.push(kind);
    }
    fn cancellation_token(&self) -> &CancellationToken {
        &self.cancel
    }
    fn run_id(&self) -> &str {
        &self.run_id
    }
    fn execution_started(&self) -> Instant {
        self.started
    }
}

/// How a turn ended.
#[derive(Debug)]
pub(crate) enum TurnEnd {
    /// The model's final text, and whether the model was cut off at its output
    /// limit (a truncated plan says so, rather than "EOF while parsing").
    Answer { text: String, truncated: bool },
    /// It must stop for a human (a loop, the budget, too many rounds).
    Paused(String),
}

/// One agent turn: the system prompt (with the project's instructions), the
/// conversation so far, and the state the spend is booked to.
pub(crate) struct Turn<'a> {
    pub(crate) agent: &'a AgentDef,
    pub(crate) system: String,
    pub(crate) messages: Vec<Message>,
    /// The answer's JSON schema, for an agent without tools (the critic): the
    /// provider is asked for structured output, and the turn's text is the JSON.
    pub(crate) schema: Option<llm::OutputSchema>,
}

impl Turn<'_> {
    /// Runs the loop. `state.overlay` is the run's shadow; edits update it.
    pub(crate) fn run(
        &mut self,
        shared: &Shared,
        state: &mut CodingState,
        cx: &mut (dyn TurnIo + Send),
    ) -> Result<TurnEnd, NodeError> {
        // One span per turn (GenAI's invoke_agent): its model and tool calls
        // nest under it when telemetry is exported.
        let span = tracing::info_span!(
            "invoke_agent",
            otel.name = %format!("invoke_agent {}", self.agent.name),
            gen_ai.operation.name = "invoke_agent",
            gen_ai.agent.name = %self.agent.name,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let _entered = span.enter();
        let end = self.run_in_span(shared, state, cx);
        if let Err(e) = &end {
            span.record("error.type", e.code.as_str());
            span.record("otel.status_code", "ERROR");
        }
        end
    }

    fn run_in_span(
        &mut self,
        shared: &Shared,
        state: &mut CodingState,
        cx: &mut (dyn TurnIo + Send),
    ) -> Result<TurnEnd, NodeError> {
        let names: Vec<&str> = self.agent.required_tools.iter().map(String::as_str).collect();
        let tools = shared.registry.only(&names).map_err(|e| {
            NodeError::new(e.code.as_str(), format!("agent `{}`: {}", self.agent.name, e.message))
        })?;
        // Model APIs take `[A-Za-z0-9_-]{1,64}` as tool names: an outside
        // tool's `server.tool` is sent as `server_tool`, and mapped back.
        let wire = wire_names(&tools.names());
        let defs: Vec<ToolDef> = tools
            .tools()
            .zip(&wire)
            .map(|(t, w)| ToolDef {
                name: w.clone(),
                description: t.spec.description.clone(),
                input_schema: Value::Object((*t.spec.input_schema).clone()),
            })
            .collect();
        let registry_name = |called: &str| {
            wire.iter()
                .position(|w| w == called)
                .and_then(|i| tools.names().get(i).map(|n| n.to_string()))
                .unwrap_or_else(|| called.to_owned())
        };
        let llm = shared.llm()?;
        let limit = crate::limit::Limit::of(state, cx.execution_started());
        let mut overlay = crate::overlay::to_edit(&state.overlay);
        let mut loops = LoopDetector::default();
        let agent = self.agent.name.clone();
        for round in 1..=MAX_ROUNDS {
            if let Some(reason) = over_budget(state) {
                return Ok(TurnEnd::Paused(reason));
            }
            if cx.is_cancelled() {
                return Err(NodeError::new("CANCELLED", "the run was cancelled"));
            }
            if limit.passed() {
                return Ok(TurnEnd::Paused(limit.reason(&format!("agent `{agent}`'s turn"))));
            }
            let mut req = Request {
                system: Some(self.system.clone()),
                messages: self.messages.clone(),
                tools: defs.clone(),
                // A schema is an answer in a forced shape (Anthropic: a forced
                // tool call), which leaves no room for other tools.
                output_schema: self.schema.clone().filter(|_| defs.is_empty()),
                ..Request::default()
            };
            if let Some(c) = &self.agent.llm_config {
                req.model = c.model.clone();
                req.max_tokens = c.max_tokens;
                req.temperature = c.temperature.map(|t| t as f32);
            }
            // The deadline cancels a call under way (a server that never answers).
            let (cancel, timer) = limit.token(cx.cancellation_token(), &shared.rt);
            let opts =
                CallOptions { cancel, workflow: Some(cx.run_id().to_owned()), provider: None };
            let resp = {
                let mut pending = String::new();
                let mut on_event =
                    |ev: &StreamEvent| stream_event(cx, &agent, round, &mut pending, ev);
                let r = shared.rt.block_on(llm.stream(&req, &opts, &mut on_event));
                if !pending.is_empty() {
                    let text = std::mem::take(&mut pending);
                    cx.emit(RunEventKind::ModelDelta { agent: agent.clone(), round, text });
                }
                r
            };
            drop(timer);
            let resp = match resp {
                Ok(r) => r,
                Err(llm::Error::BudgetExceeded { scope, what }) => {
                    return Ok(TurnEnd::Paused(format!("budget exceeded ({scope}): {what}")));
                }
                Err(llm::Error::Cancelled) if !cx.is_cancelled() && limit.passed() => {
                    return Ok(TurnEnd::Paused(
                        limit.reason(&format!("a model call of `{agent}`")),
                    ));
                }
                Err(llm::Error::Cancelled) => {
                    return Err(NodeError::new("CANCELLED", "the run was cancelled"));
                }
                Err(e) => {
                    let code = e.code().as_str().to_owned();
                    // The client already retried and fell back; a failure here is
                    // worth one more try of the whole node (it resumes cleanly).
                    let retryable = matches!(
                        e,
                        llm::Error::Network { .. }
                            | llm::Error::Timeout { .. }
                            | llm::Error::RateLimited { .. }
                            | llm::Error::Server { .. }
                            | llm::Error::CircuitOpen { .. }
                    );
                    let msg = format!("agent `{agent}`: {e}");
                    return Err(if retryable {
                        NodeError::retryable(code, msg)
                    } else {
                        NodeError::new(code, msg)
                    });
                }
            };
            let spend = &mut state.spend;
            spend.input_tokens += resp.usage.input_tokens + resp.usage.cache_read_tokens;
            spend.output_tokens += resp.usage.output_tokens;
            spend.cost_usd += resp.cost_usd.unwrap_or(0.0);
            spend.model_calls += 1;
            let mine = spend.by_agent.entry(agent.clone()).or_default();
            mine.input_tokens += resp.usage.input_tokens + resp.usage.cache_read_tokens;
            mine.output_tokens += resp.usage.output_tokens;
            mine.cost_usd += resp.cost_usd.unwrap_or(0.0);
            mine.model_calls += 1;
            if resp.cost_usd.is_none() {
                spend.unpriced_calls += 1;
                // The default model's missing price was reported at the start; a
                // fallback without one is news.
                if spend.unpriced_calls == 1
                    && let Some(usd) = state.settings.budget_usd
                    && crate::nodes::unpriced_default(shared).is_none()
                {
                    let model = format!("{} ({})", resp.model, resp.provider);
                    let message =
                        crate::nodes::budget_warning(usd, &model, state.settings.budget_tokens);
                    cx.emit(RunEventKind::Warning { code: "BUDGET_UNENFORCEABLE".into(), message });
                }
            }
            cx.emit(RunEventKind::ModelCall {
                agent: agent.clone(),
                round,
                provider: resp.provider.clone(),
                model: resp.model.clone(),
                usage: resp.usage,
                cost_usd: resp.cost_usd,
                latency_ms: resp.latency_ms,
                stop_reason: resp.stop_reason,
                tool_calls: resp.tool_calls().count() as u32,
            });
            self.messages.push(Message::from_response(&resp));
            if req.output_schema.is_some()
                && let Some(json) = &resp.structured
            {
                let truncated = resp.stop_reason == llm::StopReason::MaxTokens;
                return Ok(TurnEnd::Answer { text: json.to_string(), truncated });
            }
            let calls: Vec<(String, String, Value)> = resp
                .tool_calls()
                .map(|(id, name, input)| (id.to_owned(), registry_name(name), input.clone()))
                .collect();
            if calls.is_empty() {
                state.overlay = crate::overlay::from_edit(&overlay, &state.overlay, shared);
                let truncated = resp.stop_reason == llm::StopReason::MaxTokens;
                return Ok(TurnEnd::Answer { text: resp.text(), truncated });
            }
            let mut results = Vec::with_capacity(calls.len());
            let mut looped = None;
            for (id, name, input) in calls {
                let args = input.to_string();
                cx.emit(RunEventKind::ToolCall {
                    agent: agent.clone(),
                    round,
                    id: id.clone(),
                    name: name.clone(),
                    arguments: clip_json(&input),
                });
                let (cancel, timer) = limit.token(cx.cancellation_token(), &shared.rt);
                let call = stdx::Call::new(&stdx::NoProgress, &cancel);
                // Commands run in the run's workspace copy, brought up to date
                // with the overlay first; nothing a tool does reaches the tree.
                let ws = crate::nodes::workspace(shared, cx.run_id());
                let materialize = |o: &edit::Overlay| {
                    ws.sync(o).map_err(|e| e.to_string())?;
                    // The command may write anywhere in the copy: the next
                    // sync checks it.
                    ws.mark_dirty().map_err(|e| e.to_string())?;
                    Ok(ws.path().to_owned())
                };
                let mut shadow =
                    engine::Shadow { overlay: &mut overlay, workspace: Some(&materialize) };
                let answer = tools.call_in(&shared.session, &call, &name, input, &mut shadow);
                drop(timer);
                state.spend.tool_calls += 1;
                if !cx.is_cancelled() && limit.passed() && answer.is_err() {
                    // Cut by the deadline: what the tool did is not known to the
                    // model; the turn resumes from the last answered call.
                    state.overlay = crate::overlay::from_edit(&overlay, &state.overlay, shared);
                    return Ok(TurnEnd::Paused(limit.reason(&format!("the `{name}` tool call"))));
                }
                let (text, is_error, summary, code) = match answer {
                    Ok(v) => {
                        let text = match tools.get(&name) {
                            Some(t) => engine::answer_text(&t.spec, &v),
                            None => v.to_string(),
                        };
                        let summary = v
                            .pointer("/guidance/contextSummary")
                            .and_then(Value::as_str)
                            .map_or_else(|| stdx::clip(&text, 200).into_owned(), str::to_owned);
                        (text, false, summary, None)
                    }
                    Err(e) => (
                        serde_json::to_string(&e.to_body()).unwrap_or_default(),
                        true,
                        e.to_string(),
                        Some(e.info.code.as_str().to_owned()),
                    ),
                };
                cx.emit(RunEventKind::ToolResult {
                    agent: agent.clone(),
                    round,
                    id: id.clone(),
                    name: name.clone(),
                    ok: !is_error,
                    summary: stdx::clip(&summary, 500).into_owned(),
                    bytes: text.len() as u64,
                    code,
                });
                if looped.is_none() {
                    looped = loops.record(&name, &args, &text);
                }
                results.push(Content::ToolResult {
                    tool_use_id: id,
                    content: stdx::clip(&text, MAX_TOOL_ANSWER).into_owned(),
                    is_error,
                });
            }
            self.messages.push(Message { role: Role::User, content: results });
            state.overlay = crate::overlay::from_edit(&overlay, &state.overlay, shared);
            if let Some(reason) = looped {
                return Ok(TurnEnd::Paused(format!("agent `{agent}`: {reason}")));
            }
        }
        Ok(TurnEnd::Paused(format!(
            "agent `{agent}` made {MAX_ROUNDS} model calls without finishing its turn"
        )))
    }
}

/// The names tools are sent to a model under: the registry's where they
/// are valid for model APIs (`[A-Za-z0-9_-]`, at most 64 bytes), else with
/// every other character as `_` (and a suffix when two would collide).
pub(crate) fn wire_names(names: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let mut w: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .collect();
        w.truncate(60);
        let base = w.clone();
        let mut n = 2;
        while out.contains(&w) {
            w = format!("{base}_{n}");
            n += 1;
        }
        out.push(w);
    }
    out
}

/// Turns the model's stream into run events. Text arrives in deltas of a few
/// characters; events carry it a line (or 256 bytes) at a time, so a log stays
/// readable and the store is not written once per token.
fn stream_event(
    cx: &mut (dyn TurnIo + Send),
    agent: &str,
    round: u32,
    pending: &mut String,
    ev: &StreamEvent,
) {
    match ev {
        StreamEvent::TextDelta { text } => {
            pending.push_str(text);
            if pending.len() >= 256 || pending.ends_with('\n') {
                let text = std::mem::take(pending);
                cx.emit(RunEventKind::ModelDelta { agent: agent.to_owned(), round, text });
            }
        }
        StreamEvent::Reset { reason } => {
            pending.clear();
            cx.emit(RunEventKind::ModelReset {
                agent: agent.to_owned(),
                round,
                reason: reason.clone(),
            });
        }
        StreamEvent::Retrying { provider, attempt, delay_ms, reason } => {
            cx.emit(RunEventKind::ModelRetry {
                agent: agent.to_owned(),
                provider: provider.clone(),
                attempt: *attempt,
                delay_ms: *delay_ms,
                reason: reason.clone(),
            })
        }
        _ => {}
    }
}

/// Tool arguments for an event: long strings (a file's new content) cut short.
fn clip_json(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(stdx::clip(s, 400).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(clip_json).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), clip_json(x))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn wire_names_are_valid_for_model_apis_and_distinct() {
        let names = ["read", "git.status", "git_status", "fs.read-file", &"x".repeat(80)];
        let w = super::wire_names(&names);
        assert_eq!(&w[..4], ["read", "git_status", "git_status_2", "fs_read-file"]);
        assert_eq!(w[4].len(), 60);
    }
}
