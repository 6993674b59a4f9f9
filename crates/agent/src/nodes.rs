//! The nodes of the coding graph and the routers between them.
//!
//! Each node is a function of the state: it may call agents (the model and the
//! tools), run the project's build and tests, or wait for a human; it returns the
//! next state. A node may run twice for one checkpoint (a crash, a retry, a gate
//! answered), so nothing here writes the working tree except SUCCESS, through a
//! recorded effect that is also looked up by its description.

use std::sync::Arc;

use llm::Message;
use protocol::{
    ApprovalDecision, Approver, ChangeOptions, ChangeRequest, CheckLevel, CodingState, ErrorCode,
    ExecutionPlan, Gate, HistoryRequest, PlannerAnswer, RunEventKind, TaskRound, Validation,
    Verdict, nodes,
};
use serde_json::{Value, json};
use workflow::{END, NodeContext, NodeError, NodeOutcome};

use crate::{
    model::{Turn, TurnEnd},
    orchestrator::{RunState, Shared},
    overlay, policy,
    taskgraph::{self, Budget, TurnCost},
    workspace::ShadowWorkspace,
};

/// A node works on the state in place and says what next; an error keeps what
/// it did to the state (see [`run`]).
pub(crate) type NodeFn =
    fn(&Shared, &mut CodingState, &mut NodeContext<'_>) -> Result<Step, NodeError>;

/// What a node asks for after it has updated the state.
pub(crate) enum Step {
    /// Follow the node's edge.
    Continue,
    /// Wait here for a human: the question, and what it is about.
    Interrupt { reason: String, payload: Value },
}

/// Runs a node: stamps the state with the node and the time, and maps the state
/// in and out of the workflow's type. A failing node's state is kept
/// (`NodeOutcome::Fail`): the model calls it paid for stay in `spend`, where the
/// budget counts them, through retries and `resume`.
pub(crate) fn run(
    f: NodeFn,
    shared: &Arc<Shared>,
    s: RunState,
    cx: &mut NodeContext<'_>,
) -> Result<NodeOutcome<RunState>, NodeError> {
    let mut state = s.0;
    state.current_node = cx.node().to_owned();
    state.timestamp = stdx::rfc3339_utc(stdx::now_ms());
    Ok(match f(shared, &mut state, cx) {
        Ok(Step::Continue) => NodeOutcome::Continue(RunState(state)),
        Ok(Step::Interrupt { reason, payload }) => {
            NodeOutcome::Interrupt { state: RunState(state), reason, payload }
        }
        Err(error) => NodeOutcome::Fail { state: RunState(state), error },
    })
}

pub(crate) type Outcome = Result<Step, NodeError>;

pub(crate) fn call_err(e: engine::Error) -> NodeError {
    let info = e.to_info();
    NodeError::new(info.code.as_str(), info.message)
}

pub(crate) fn init(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    if let (Some(usd), Some(model)) = (s.settings.budget_usd, unpriced_default(shared)) {
        cx.emit(RunEventKind::Warning {
            code: "BUDGET_UNENFORCEABLE".into(),
            message: budget_warning(usd, &model, s.settings.budget_tokens),
        });
    }
    let route = engine::route_request(&s.user_request);
    cx.emit(RunEventKind::Routed { route: route.clone() });
    s.route = Some(route);
    Ok(Step::Continue)
}

/// After INIT: a question goes to ANSWER, everything else to PLAN.
pub(crate) fn after_init(s: &CodingState) -> String {
    if answers(s) { nodes::ANSWER } else { nodes::PLAN }.to_owned()
}

/// Whether the run answers a question instead of changing the code: the router
/// read a question (explain, look up) from cues it found — a request with no cue
/// at all is a change, the run's purpose —, the request is short, and the user
/// did not ask for a plan.
///
/// Why short: a bug report is long and full of the router's question words
/// ("describe the bug", "where", "why"): on SWE-bench Lite's 300 problem
/// statements the router reads 30 as questions, and all 30 are changes. A
/// question is a sentence or two ("Explain how user login works").
fn answers(s: &CodingState) -> bool {
    let request = s.user_request.trim();
    !s.settings.always_plan
        && request.chars().count() <= MAX_QUESTION_CHARS
        && request.lines().count() <= 2
        && s.route.as_ref().is_some_and(|r| !r.needs_change && !r.cues.is_empty())
}

/// A longer request is taken for a change whatever its words ([`answers`]).
const MAX_QUESTION_CHARS: usize = 280;

// --- ANSWER --------------------------------------------------------------------------

/// The answerer's context: the same Layer 0 as the planner's (the map around the
/// question, the ranked files' outlines), within about this many tokens, so that
/// a question costs a few thousand tokens (seed 002: under 10,000).
const ANSWER_CONTEXT_TOKENS: u32 = 3000;

/// ANSWER: one turn of the `answerer` agent over Layer 0, read-only tools at
/// hand; the answer is the run's result, and nothing is changed.
pub(crate) fn answer_question(
    shared: &Shared,
    s: &mut CodingState,
    cx: &mut NodeContext<'_>,
) -> Outcome {
    let answerer = shared.agent("answerer")?;
    let context = layer0(shared, s, cx, "answerer", ANSWER_CONTEXT_TOKENS);
    let user = format!("## Question\n\n{}\n\n## Project context\n\n{context}", s.user_request);
    let system = instructions(shared, &[]).append_to(&answerer.prompt);
    let mut turn =
        Turn { agent: answerer, system, messages: vec![Message::user(user)], schema: None };
    match turn.run(shared, s, cx)? {
        TurnEnd::Paused(reason) => s.pause_reason = Some(reason),
        TurnEnd::Answer { text, .. } => {
            cx.emit(RunEventKind::Answer { text: text.clone() });
            s.answer = Some(text);
            s.no_change = true;
        }
    }
    Ok(Step::Continue)
}

/// The default model, when it has no known price (a local server, a model the
/// price table does not know).
pub(crate) fn unpriced_default(shared: &Shared) -> Option<String> {
    let llm = shared.llm.as_ref()?;
    let default = llm.providers().into_iter().find(|p| p.chain_position == Some(0))?;
    default.price.is_none().then(|| format!("{} ({})", default.model, default.name))
}

/// Why a USD budget cannot hold, and what still does.
pub(crate) fn budget_warning(usd: f64, model: &str, tokens: Option<u64>) -> String {
    let tokens = match tokens {
        Some(t) => format!("the token budget ({t} tokens) is enforced"),
        None => "no token budget is set (--budget-tokens N)".into(),
    };
    format!(
        "the model {model} has no known price, so the ${usd:.2} budget cannot be enforced;          {tokens}; set a price with `llm.prices` or `llm.providers.NAME.price` in the          configuration"
    )
}

// --- PLAN ---------------------------------------------------------------------------

/// The planner's context from Layer 0, within about this many tokens: the ranked
/// repository map around the request, and the files `localize` ranks first.
const PLANNER_CONTEXT_TOKENS: u32 = 3000;

pub(crate) fn plan(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    let planner = shared.agent("planner")?;
    let context = layer0(shared, s, cx, "planner", PLANNER_CONTEXT_TOKENS);
    let mut user = format!("## Request\n\n{}\n", s.user_request);
    if let Some(fb) = &s.feedback {
        user.push_str(&format!(
            "\n## Reviewer feedback on the previous plan (address every point)\n\n{fb}\n"
        ));
        if let Some(p) = &s.plan {
            user.push_str(&format!(
                "\n## The previous plan\n\n{}\n",
                serde_json::to_string_pretty(p).unwrap_or_default()
            ));
        }
    }
    // A step that could not be done sends the plan back (the task graph's replan).
    if let Some(err) = s.error_context.as_deref().filter(|e| e.starts_with(STEP_FAILED)) {
        user.push_str(&format!("\n{err}\n"));
        if let Some(p) = &s.plan {
            user.push_str(&format!(
                "\n## The previous plan\n\n{}\n",
                serde_json::to_string_pretty(p).unwrap_or_default()
            ));
        }
    }
    user.push_str(&format!("\n## Project context\n\n{context}"));
    let system = instructions(shared, &[]).append_to(&planner.prompt);
    let mut turn =
        Turn { agent: planner, system, messages: vec![Message::user(user)], schema: None };
    // The planner's turn is what a coder turn is estimated to cost (the task graph's
    // rounds are fitted to the budget with it).
    let (started, spent) = (std::time::Instant::now(), s.spend.clone());
    for attempt in 1..=2 {
        let (text, truncated) = match turn.run(shared, s, cx)? {
            TurnEnd::Paused(reason) => {
                s.pause_reason = Some(reason);
                return Ok(Step::Continue);
            }
            TurnEnd::Answer { text, truncated } => (text, truncated),
        };
        let parsed = parse_plan(&text).map_err(|e| {
            if truncated {
                format!(
                    "the answer was cut off at the model's output limit (raise llmConfig.maxTokens \
                     of the planner, or the provider's max_tokens): {e}"
                )
            } else {
                e
            }
        });
        match parsed {
            Ok(mut answer) => {
                let cost = TurnCost {
                    ms: started.elapsed().as_millis() as u64,
                    tokens: (s.spend.input_tokens + s.spend.output_tokens)
                        .saturating_sub(spent.input_tokens + spent.output_tokens),
                };
                taskgraph::fit(&mut answer.plan, cost, coding_budget(shared, s, cx));
                cx.emit(RunEventKind::Plan {
                    spec: answer.spec.clone(),
                    plan: answer.plan.clone(),
                });
                s.spec = Some(answer.spec);
                s.plan = Some(answer.plan);
                s.feedback = None;
                s.steps_done.clear();
                if s.error_context.as_deref().is_some_and(|e| e.starts_with(STEP_FAILED)) {
                    s.error_context = None;
                }
                return Ok(Step::Continue);
            }
            Err(e) if attempt == 1 => {
                cx.emit(RunEventKind::PlanRejected { error: e.clone(), attempt });
                turn.messages.push(Message::user(format!(
                    "Your answer is not a valid plan: {e}\n\nAnswer again with only the JSON \
                     object your instructions describe (`spec` and `plan` with numbered \
                     `steps`), no prose and no code fence."
                )));
            }
            Err(e) => {
                return Err(NodeError::new(
                    ErrorCode::AgentExecutionFailed.as_str(),
                    format!("the planner's answer was not a valid plan twice; last error: {e}"),
                ));
            }
        }
    }
    unreachable!("the loop returns on its second attempt")
}

/// What the task graph's rounds may spend: half the time left of the run's
/// timeout (VALIDATE needs the rest) and the tokens left of its budget.
fn coding_budget(shared: &Shared, s: &CodingState, cx: &NodeContext<'_>) -> Budget {
    let left = (s.settings.timeout_seconds * 1000)
        .saturating_sub(cx.execution_started().elapsed().as_millis() as u64);
    Budget {
        ms: left / 2,
        tokens: s
            .settings
            .budget_tokens
            .map(|b| b.saturating_sub(s.spend.input_tokens + s.spend.output_tokens)),
        parallel: shared.parallel,
    }
}

/// Layer 0 for `agent` (the planner, the answerer): the ContextAdapter's parts
/// (`context.rs`) within about `tokens`, counted per part in the run's spend and
/// the `context` event.
fn layer0(
    shared: &Shared,
    s: &mut CodingState,
    cx: &mut NodeContext<'_>,
    agent: &str,
    tokens: u32,
) -> String {
    let cancel = cx.cancellation_token().clone();
    let call = stdx::Call::new(&stdx::NoProgress, &cancel);
    let context = crate::context::assemble(shared, s, &call, tokens);
    for (part, n) in &context.tokens {
        *s.spend.context_tokens.entry(part.clone()).or_default() += n;
    }
    cx.emit(RunEventKind::Context {
        agent: agent.into(),
        bytes: context.text.len() as u64,
        tokens: context.tokens,
    });
    context.text
}

/// The project's AGENTS.md files that apply to `paths` (all the root's when none).
pub(crate) fn instructions(shared: &Shared, paths: &[&str]) -> crate::Instructions {
    crate::project_instructions(shared.session.root(), paths, 16 * 1024)
}

/// The planner's answer as a plan: JSON (a code fence or prose around it is
/// forgiven, as small models add them), the seed's shape, and sane steps.
pub(crate) fn parse_plan(text: &str) -> Result<PlannerAnswer, String> {
    let object = llm::json_object_in(text).ok_or(if text.contains('{') {
        "the JSON object is not closed"
    } else {
        "there is no JSON object in the answer"
    })?;
    let mut answer: PlannerAnswer = serde_json::from_str(object).map_err(|e| format!("{e}"))?;
    let plan = &mut answer.plan;
    for (i, step) in plan.steps.iter_mut().enumerate() {
        let n = i as u32 + 1;
        if step.number != n {
            return Err(format!(
                "step {} is numbered {}; number the steps 1, 2, 3, ...",
                n, step.number
            ));
        }
        step.action_type = step.action_type.to_ascii_uppercase();
        if !["CREATE", "MODIFY", "DELETE", "REFACTOR"].contains(&step.action_type.as_str()) {
            return Err(format!(
                "step {n}: actionType {:?} is not CREATE, MODIFY, DELETE or REFACTOR",
                step.action_type
            ));
        }
        if let Some(p) = &step.file_path {
            check_rel(p).map_err(|e| format!("step {n}: filePath {p:?} {e}"))?;
        }
    }
    for p in &plan.affected_files {
        check_rel(p).map_err(|e| format!("affectedFiles: {p:?} {e}"))?;
    }
    if plan.affected_files.is_empty() {
        let mut files: Vec<String> =
            plan.steps.iter().filter_map(|s| s.file_path.clone()).collect();
        files.dedup();
        plan.affected_files = files;
    }
    plan.complexity = plan.complexity.to_ascii_uppercase();
    if !["LOW", "MEDIUM", "HIGH"].contains(&plan.complexity.as_str()) {
        return Err(format!("complexity {:?} is not LOW, MEDIUM or HIGH", plan.complexity));
    }
    // The order the human approves with the plan (seed 002, M0).
    plan.task_graph = Some(crate::taskgraph::build(plan).map_err(|e| format!("dependsOn: {e}"))?);
    Ok(answer)
}

fn check_rel(p: &str) -> Result<(), &'static str> {
    let path = std::path::Path::new(p);
    if p.is_empty() {
        Err("is empty")
    } else if path.is_absolute() {
        Err("is absolute; give it relative to the project root")
    } else if path.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        Err("leaves the project")
    } else {
        Ok(())
    }
}

// --- the gates --------------------------------------------------------------------------

/// The human's answer the node was resumed with: `Ok(None)` to ask (no answer
/// yet), `Err` with the reason when the answer is not one.
fn answer(cx: &NodeContext<'_>) -> Result<Option<ApprovalDecision>, String> {
    match cx.resume_input() {
        None | Some(Value::Null) => Ok(None),
        Some(v) => crate::orchestrator::parse_decision(v).map(Some).map_err(|e| e.to_string()),
    }
}

fn interrupt(reason: String, payload: Value) -> Outcome {
    Ok(Step::Interrupt { reason, payload })
}

pub(crate) fn wait_plan_approval(
    shared: &Shared,
    s: &mut CodingState,
    cx: &mut NodeContext<'_>,
) -> Outcome {
    let payload = |s: &CodingState, problem: Option<&str>| json!({"gate": "plan", "spec": s.spec, "plan": s.plan, "problem": problem});
    if s.settings.auto_approve {
        s.verdict = Some(Verdict::Approved);
        let by = s.settings.auto_approved_by.unwrap_or(Approver::Flag);
        cx.emit(RunEventKind::Approved { gate: Gate::Plan, by, feedback: None, edited: false });
        return Ok(Step::Continue);
    }
    let decision = match answer(cx) {
        Ok(Some(d)) => d,
        Ok(None) => {
            let p = payload(s, None);
            return interrupt("approve the plan".into(), p);
        }
        Err(problem) => {
            let p = payload(s, Some(&problem));
            return interrupt(format!("approve the plan ({problem})"), p);
        }
    };
    if let Some(b) = decision.budget_usd {
        s.settings.budget_usd = Some(b);
    }
    let edited = decision.edited_content.as_deref().map(str::trim).filter(|e| !e.is_empty());
    match (decision.approved, edited) {
        (true, None) => {
            s.verdict = Some(Verdict::Approved);
            cx.emit(RunEventKind::Approved {
                gate: Gate::Plan,
                by: Approver::Human,
                feedback: decision.feedback.clone(),
                edited: false,
            });
            s.feedback = decision.feedback;
        }
        // An edited plan that parses is the human's plan: approved as edited.
        (_, Some(text))
            if parse_plan(text).is_ok() || serde_json::from_str::<ExecutionPlan>(text).is_ok() =>
        {
            let plan = match parse_plan(text) {
                Ok(a) => {
                    s.spec = Some(a.spec);
                    a.plan
                }
                Err(_) => serde_json::from_str(text).unwrap_or_default(),
            };
            // The human's plan is coded in rounds fitted as the planner's was.
            let mut plan = plan;
            let was = s.plan.as_ref().and_then(|p| p.task_graph.as_ref()?.estimate.clone());
            if let Some(e) = was {
                let cost = TurnCost { ms: e.turn_ms, tokens: e.turn_tokens };
                let budget =
                    Budget { ms: e.budget_ms, tokens: e.budget_tokens, parallel: shared.parallel };
                taskgraph::fit(&mut plan, cost, budget);
            }
            s.steps_done.clear();
            s.plan = Some(plan);
            s.verdict = Some(Verdict::Approved);
            cx.emit(RunEventKind::Approved {
                gate: Gate::Plan,
                by: Approver::Human,
                feedback: None,
                edited: true,
            });
        }
        // Anything else sends the planner back with the human's words.
        (_, edited) => {
            let words = edited.map(str::to_owned).or(decision.feedback).unwrap_or_else(|| {
                "The reviewer rejected the plan without comment; reconsider it.".into()
            });
            s.feedback = Some(words.clone());
            s.verdict = Some(Verdict::Rejected);
            cx.emit(RunEventKind::Rejected { gate: Gate::Plan, feedback: words });
        }
    }
    Ok(Step::Continue)
}

pub(crate) fn after_plan_gate(s: &CodingState) -> &'static str {
    match s.verdict {
        // The baseline first, once: a project that does not build stops here.
        Some(Verdict::Approved) if s.settings.baseline && s.baseline.is_none() => nodes::BASELINE,
        Some(Verdict::Approved) => nodes::CODE,
        _ => nodes::PLAN,
    }
}

pub(crate) fn wait_review(
    shared: &Shared,
    s: &mut CodingState,
    cx: &mut NodeContext<'_>,
) -> Outcome {
    let decision = match answer(cx) {
        Ok(Some(d)) => d,
        Ok(None) | Err(_) => {
            s.code_diffs = overlay::diffs(&s.overlay, shared);
            let p = json!({"gate": "review", "diffs": s.code_diffs, "tests": s.test_result});
            let reason = if s.validation == Some(Validation::Unchecked) {
                "nothing could validate this change (no build step ran, no test was found): \
                 review it before it is applied"
            } else {
                "review the change before it is applied"
            };
            return interrupt(reason.into(), p);
        }
    };
    if decision.approved {
        s.verdict = Some(Verdict::Approved);
        cx.emit(RunEventKind::Approved {
            gate: Gate::Review,
            by: Approver::Human,
            feedback: decision.feedback.clone(),
            edited: false,
        });
    } else {
        let words = decision.feedback.unwrap_or_else(|| "The reviewer rejected the change.".into());
        s.feedback = Some(words.clone());
        s.verdict = Some(Verdict::Rejected);
        // One more round for the reviewer's point, even at the limit.
        s.max_iterations = s.max_iterations.max(s.iteration_count + 1);
        cx.emit(RunEventKind::Rejected { gate: Gate::Review, feedback: words });
    }
    Ok(Step::Continue)
}

pub(crate) fn after_review(s: &CodingState) -> &'static str {
    match s.verdict {
        Some(Verdict::Approved) => nodes::SUCCESS,
        _ => nodes::CODE,
    }
}

pub(crate) fn escalate(_: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    let reason = s.escalation.take().unwrap_or_else(|| "validation keeps failing".into());
    cx.emit(RunEventKind::Escalated { reason: reason.clone(), iteration: s.iteration_count });
    s.pause_reason = Some(reason);
    Ok(Step::Continue)
}

pub(crate) fn wait_human(
    shared: &Shared,
    s: &mut CodingState,
    cx: &mut NodeContext<'_>,
) -> Outcome {
    let decision = match answer(cx) {
        Ok(Some(d)) => d,
        Ok(None) | Err(_) => {
            let reason = s.pause_reason.clone().unwrap_or_else(|| "a human is needed".into());
            s.code_diffs = overlay::diffs(&s.overlay, shared);
            let p = json!({
                "gate": "human", "reason": reason, "errorContext": s.error_context,
                "iteration": s.iteration_count, "diffs": s.code_diffs, "spend": s.spend,
            });
            return interrupt(reason, p);
        }
    };
    if let Some(b) = decision.budget_usd {
        s.settings.budget_usd = Some(b);
    }
    // The human takes over the limits: another round of iterations, a fresh
    // start for the loop detector.
    s.pause_reason = None;
    s.recent.clear();
    s.max_iterations = s.iteration_count + s.settings.max_iterations;
    s.feedback = decision.feedback.clone().or(decision.edited_content.clone());
    if decision.approved {
        s.verdict = Some(Verdict::Approved);
        cx.emit(RunEventKind::Approved {
            gate: Gate::Human,
            by: Approver::Human,
            feedback: s.feedback.clone(),
            edited: false,
        });
    } else {
        s.verdict = Some(Verdict::Rejected);
        let feedback = s.feedback.clone().unwrap_or_default();
        cx.emit(RunEventKind::Rejected { gate: Gate::Human, feedback });
    }
    Ok(Step::Continue)
}

/// After a human: back to planning when there is no plan yet or they rejected
/// it, else on coding with their words.
pub(crate) fn after_human(s: &CodingState) -> &'static str {
    match (s.plan.is_some(), s.verdict) {
        (true, Some(Verdict::Approved)) => nodes::CODE,
        // A question the limits cut short is asked again, not turned into a change.
        (false, _) if answers(s) && s.answer.is_none() => nodes::ANSWER,
        _ => nodes::PLAN,
    }
}

/// After ANSWER: done, or, when the limits cut the answer short (time, budget,
/// a loop), a human decides (raise the limit and resume).
pub(crate) fn after_answer(s: &CodingState) -> &'static str {
    if s.answer.is_some() { END } else { nodes::WAIT_HUMAN }
}

// --- CODE -------------------------------------------------------------------------------

/// The heading that tells the planner a step of its plan could not be done.
pub(crate) const STEP_FAILED: &str = "## A step of the plan could not be done";

/// Plans made again because a step could not be done, at most; after that the
/// run goes on to validation, which judges what the coder did.
const MAX_REPLANS: u32 = 1;

/// CODE: the plan's next round of the task graph (one coder turn, or one per
/// step at once), or, once every round is done (a round after a failed
/// validation, a plan of one round), one turn for the whole plan.
pub(crate) fn code(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    if let Some((index, rounds)) = next_round(s) {
        return code_round(shared, s, cx, index, rounds);
    }
    let coder = shared.agent("coder")?;
    let mut user = coder_brief(s);
    if let Some(err) = &s.error_context {
        // A reviewer's or the critic's words come with their own heading.
        if err.starts_with("## ") {
            user.push_str(&format!("\n{err}\n"));
        } else {
            user.push_str(&format!(
                "\n## Validation failed after round {}\n\n{err}\n",
                s.iteration_count
            ));
        }
    }
    if let Some(fb) = &s.feedback {
        user.push_str(&format!("\n## Feedback from a human\n\n{fb}\n"));
    }
    let system = coder_system(shared, s, &coder.prompt);
    let mut turn = Turn { agent: coder, system, messages: vec![Message::user(user)], schema: None };
    let end = turn.run(shared, s, cx)?;
    s.iteration_count += 1;
    s.feedback = None;
    s.code_diffs = overlay::diffs(&s.overlay, shared);
    cx.emit(RunEventKind::Diff {
        iteration: s.iteration_count,
        files: s.code_diffs.iter().map(|d| d.file_path.clone()).collect(),
    });
    match end {
        TurnEnd::Answer { text, .. } => s.coder_summary = Some(text),
        TurnEnd::Paused(reason) => s.pause_reason = Some(reason),
    }
    s.next_node = Some(nodes::CRITIC.into());
    Ok(Step::Continue)
}

/// The specification, the approved plan and the run's edits so far: what every
/// coder turn starts from.
fn coder_brief(s: &CodingState) -> String {
    let mut user = format!(
        "## Specification\n\n{}\n\n## Approved plan\n\n{}\n",
        s.spec.as_deref().unwrap_or(&s.user_request),
        serde_json::to_string_pretty(&s.plan).unwrap_or_default()
    );
    if !s.overlay.is_empty() {
        let files: Vec<&str> = s.overlay.iter().map(|f| f.path.as_str()).collect();
        user.push_str(&format!(
            "\n## Your earlier edits are in place\n\nFiles changed so far in this run: {}. \
             `read` shows them as they are now.\n",
            files.join(", ")
        ));
    }
    user
}

fn coder_system(shared: &Shared, s: &CodingState, prompt: &str) -> String {
    let paths: Vec<&str> =
        s.plan.iter().flat_map(|p| p.affected_files.iter().map(String::as_str)).collect();
    instructions(shared, &paths).append_to(prompt)
}

/// The first round of the plan's task graph with a step not yet done, and all
/// the rounds; `None` when there is nothing to do round by round (a plan of one
/// serial round is one turn, as a plan always was).
fn next_round(s: &CodingState) -> Option<(usize, Vec<TaskRound>)> {
    let rounds = taskgraph::rounds_of(s.plan.as_ref()?);
    if rounds.len() < 2 && !rounds.iter().any(|r| r.parallel) {
        return None;
    }
    let index = rounds.iter().position(|r| r.steps.iter().any(|n| !s.steps_done.contains(n)))?;
    Some((index, rounds))
}

fn step_line(plan: &ExecutionPlan, number: u32) -> String {
    match plan.steps.iter().find(|s| s.number == number) {
        Some(s) => format!(
            "{}. [{}{}] {}",
            s.number,
            s.action_type,
            s.file_path.as_deref().map(|f| format!(" {f}")).unwrap_or_default(),
            s.description
        ),
        None => format!("{number}."),
    }
}

fn numbers(steps: &[u32]) -> String {
    steps.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// One round of the task graph: its steps in one coder turn, or each in its own
/// turn at once (parallel); then the steps whose file the round left unchanged
/// (or whose parallel edit clashed) send the plan back to the planner, once.
fn code_round(
    shared: &Shared,
    s: &mut CodingState,
    cx: &mut NodeContext<'_>,
    index: usize,
    rounds: Vec<TaskRound>,
) -> Outcome {
    let coder = shared.agent("coder")?;
    let plan = s.plan.clone().unwrap_or_default();
    let round = &rounds[index];
    let total = rounds.len() as u32;
    cx.emit(RunEventKind::TaskRound {
        round: index as u32 + 1,
        rounds: total,
        steps: round.steps.clone(),
        parallel: round.parallel,
    });
    let done: Vec<u32> = rounds[..index].iter().flat_map(|r| r.steps.clone()).collect();
    let later: Vec<u32> = rounds[index + 1..].iter().flat_map(|r| r.steps.clone()).collect();
    let brief = |steps: &[u32]| {
        let mut user = coder_brief(s);
        user.push_str(&format!(
            "\n## This round (round {} of {total}): step{} {}\n\nDo these steps now, and only \
             these:\n\n{}\n",
            index + 1,
            if steps.len() == 1 { "" } else { "s" },
            numbers(steps),
            steps.iter().map(|n| step_line(&plan, *n)).collect::<Vec<_>>().join("\n"),
        ));
        if round.parallel {
            let others: Vec<u32> =
                round.steps.iter().copied().filter(|n| !steps.contains(n)).collect();
            user.push_str(&format!(
                "\nSteps {} are being done at the same time by other coders: leave their files \
                 alone.\n",
                numbers(&others)
            ));
        }
        if !done.is_empty() {
            user.push_str(&format!(
                "\nSteps {} are done: their edits are in place.\n",
                numbers(&done)
            ));
        }
        if !later.is_empty() {
            user.push_str(&format!("\nSteps {} come in later rounds.\n", numbers(&later)));
        }
        if let Some(fb) = &s.feedback {
            user.push_str(&format!("\n## Feedback from a human\n\n{fb}\n"));
        }
        user
    };
    let system = coder_system(shared, s, &coder.prompt);
    let before = s.overlay.clone();
    let mut words = Vec::new();
    let mut failed = if round.parallel {
        let briefs: Vec<(u32, String)> = round.steps.iter().map(|n| (*n, brief(&[*n]))).collect();
        let outcomes = crate::review::in_parallel(s, cx, briefs, |(step, user), state, io| {
            let mut turn = Turn {
                agent: coder,
                system: system.clone(),
                messages: vec![Message::user(user)],
                schema: None,
            };
            turn.run(shared, state, io).map(|end| (step, end, state.overlay.clone()))
        })?;
        let mut turns = Vec::new();
        for (step, end, overlay) in outcomes {
            match end {
                TurnEnd::Answer { text, .. } => words.push(format!("Step {step}: {}", text.trim())),
                TurnEnd::Paused(reason) => s.pause_reason = Some(reason),
            }
            turns.push((step, overlay));
        }
        let (merged, mut clashes) = taskgraph::merge_parallel(&before, &turns);
        s.overlay = merged;
        let clashed: Vec<u32> = clashes.iter().map(|(n, _)| *n).collect();
        let rest: Vec<u32> = round.steps.iter().copied().filter(|n| !clashed.contains(n)).collect();
        clashes.extend(taskgraph::failed_steps(&plan, &rest, &before, &s.overlay));
        clashes
    } else {
        let mut turn = Turn {
            agent: coder,
            system,
            messages: vec![Message::user(brief(&round.steps))],
            schema: None,
        };
        match turn.run(shared, s, cx)? {
            TurnEnd::Answer { text, .. } => words.push(text.trim().to_owned()),
            TurnEnd::Paused(reason) => s.pause_reason = Some(reason),
        }
        taskgraph::failed_steps(&plan, &round.steps, &before, &s.overlay)
    };
    failed.sort();
    s.code_diffs = overlay::diffs(&s.overlay, shared);
    cx.emit(RunEventKind::Diff {
        iteration: s.iteration_count + 1,
        files: s.code_diffs.iter().map(|d| d.file_path.clone()).collect(),
    });
    s.coder_summary = Some(words.join("\n\n"));
    if s.pause_reason.is_some() {
        // A limit (a loop, too many tool rounds) stopped the round: a human
        // decides, and the round runs again after the answer, its edits so far in
        // place and the human's words in its brief.
        s.next_node = Some(nodes::CODE.into());
        return Ok(Step::Continue);
    }
    s.steps_done.extend(round.steps.iter().copied());
    let replan = !failed.is_empty() && s.replans < MAX_REPLANS;
    for (step, reason) in &failed {
        cx.emit(RunEventKind::TaskFailed { step: *step, reason: reason.clone(), replan });
    }
    if replan {
        s.replans += 1;
        let list: Vec<String> =
            failed.iter().map(|(n, why)| format!("- {}: {why}", step_line(&plan, *n))).collect();
        s.error_context = Some(format!(
            "{STEP_FAILED}\n\n{}\n\nThe coder said:\n\n{}\n\nThe edits made so far stay in \
             place. Make the plan again so that every step can be done: change, split or drop \
             the steps above, and keep the ones that are done.\n",
            list.join("\n"),
            stdx::clip(s.coder_summary.as_deref().unwrap_or(""), 2000),
        ));
        s.next_node = Some(nodes::PLAN.into());
        return Ok(Step::Continue);
    }
    if next_round(s).is_some() {
        s.next_node = Some(nodes::CODE.into());
    } else {
        s.iteration_count += 1;
        s.feedback = None;
        s.next_node = Some(nodes::CRITIC.into());
    }
    Ok(Step::Continue)
}

/// After CODE: the next round, the planner again (a step failed), or the critic.
pub(crate) fn after_code(s: &CodingState) -> String {
    match s.next_node.as_deref() {
        Some(n @ (nodes::CODE | nodes::PLAN)) => n.to_owned(),
        _ => nodes::CRITIC.to_owned(),
    }
}

// --- DECIDE and SUCCESS -----------------------------------------------------------------

pub(crate) fn decide(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    let validation = s.validation;
    let passed = matches!(validation, Some(Validation::Passed | Validation::Unchecked));
    let route = policy::decide(passed, s.iteration_count, s.max_iterations, &s.recent);
    let changed = !overlay::apply_ops(&s.overlay, shared).is_empty();
    let name = match &route {
        // Nothing validated the change: only a human can, before it is applied.
        // A run that changed nothing has nothing to review: it ends as no change.
        policy::Route::Pass
            if changed && (s.settings.review || validation == Some(Validation::Unchecked)) =>
        {
            nodes::WAIT_REVIEW
        }
        policy::Route::Pass => nodes::SUCCESS,
        policy::Route::Retry => nodes::CODE,
        policy::Route::Escalate(reason) => {
            s.escalation = Some(reason.clone());
            nodes::ESCALATE
        }
    };
    cx.emit(RunEventKind::Decision {
        passed,
        iteration: s.iteration_count,
        max_iterations: s.max_iterations,
        next: name.into(),
    });
    s.next_node = Some(name.into());
    Ok(Step::Continue)
}

pub(crate) fn after_decide(s: &CodingState) -> String {
    s.next_node.clone().unwrap_or_else(|| nodes::ESCALATE.to_owned())
}

pub(crate) fn success(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    s.next_node = None;
    // `code_diffs` stay as CODE left them: after the apply, the working tree
    // equals the overlay and a diff computed now would be empty.
    let ops = overlay::apply_ops(&s.overlay, shared);
    let description = format!("ironbees run {}: {}", cx.run_id(), stdx::clip(&s.user_request, 120));
    let session = Arc::clone(&shared.session);
    let cancel = cx.cancellation_token().clone();
    let applied = cx.effect("apply", || {
        let call = stdx::Call::new(&stdx::NoProgress, &cancel);
        // The effect is recorded after it ran; a crash between the two would run
        // it again, so a transaction with this run's description counts as done.
        if let Some(tx) = applied_before(&session, &description, &call) {
            return Ok(json!({"transactionId": tx, "found": true}));
        }
        if ops.is_empty() {
            return Ok(json!({"transactionId": null}));
        }
        let req = ChangeRequest {
            description: Some(description.clone()),
            target: None,
            edits: ops.clone(),
            options: ChangeOptions {
                dry_run: Some(false),
                include_impact: Some(false),
                auto_rollback: Some(true),
                check: Some(CheckLevel::None),
            },
        };
        let resp = session.change(&req, &call).map_err(call_err)?;
        Ok(json!({"transactionId": resp.transaction_id, "found": false}))
    });
    let applied = match applied {
        // A file changed in the working tree since the run read it: the run's
        // change is merged onto it and validated again, or goes back to the
        // coder where it cannot be. Never a dead end that resume repeats.
        Err(e) if e.code == ErrorCode::HashMismatch.as_str() => return rebase(shared, s, cx),
        other => other?,
    };
    s.transaction_id = applied["transactionId"].as_str().map(str::to_owned);
    s.no_change = s.transaction_id.is_none();
    cx.emit(RunEventKind::Applied {
        transaction_id: s.transaction_id.clone(),
        files: s.code_diffs.iter().map(|d| d.file_path.clone()).collect(),
    });
    remove_workspace(shared, cx.run_id());
    Ok(Step::Continue)
}

/// After the working tree changed under the run: each file the run changed and
/// someone else changed too is merged (the run's change onto the new version);
/// a merged run is validated again, a file whose changes meet goes back to the
/// coder with the new version and the run's earlier diff of it.
fn rebase(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    let root = shared.session.root().to_owned();
    let mut merged = Vec::new();
    let mut conflicts = Vec::new();
    for f in &mut s.overlay {
        let disk = std::fs::read(root.join(&f.path)).ok();
        let disk_hash = disk.as_ref().map(|b| stdx::sha256_hex(b));
        if disk_hash == f.base_hash {
            continue;
        }
        let theirs = disk.and_then(|b| String::from_utf8(b).ok());
        let outcome = match (&f.base, &f.content, &theirs) {
            (Some(base), Some(ours), Some(theirs)) => {
                edit::merge3(base, ours, theirs).map_err(|c| {
                    format!("lines {}-{} changed on both sides", c.base_lines.0, c.base_lines.1)
                })
            }
            (_, None, _) => Err("the run deletes it, and it was changed meanwhile".to_owned()),
            (_, _, None) => Err("it was deleted (or is no longer text) meanwhile".to_owned()),
            (None, _, _) => Err("the run created it, and it was created meanwhile".to_owned()),
        };
        match outcome {
            Ok(text) => {
                f.content = Some(text);
                merged.push(f.path.clone());
            }
            Err(why) => {
                // The coder starts this file again from the new version.
                f.content = theirs.clone();
                conflicts.push((f.path.clone(), why));
            }
        }
        f.base = theirs;
        f.base_hash = disk_hash;
    }
    let mut message = String::from("the working tree changed while the run worked");
    if !merged.is_empty() {
        message.push_str(&format!("; merged the run's change onto {}", merged.join(", ")));
    }
    if !conflicts.is_empty() {
        let list: Vec<String> = conflicts.iter().map(|(p, why)| format!("{p} ({why})")).collect();
        message.push_str(&format!("; back to the coder for {}", list.join(", ")));
    }
    cx.emit(RunEventKind::Warning { code: "WORKTREE_CHANGED".into(), message: message.clone() });
    s.validation = None;
    s.validated_overlay = None;
    if conflicts.is_empty() {
        s.next_node = Some(nodes::VALIDATE.into());
        return Ok(Step::Continue);
    }
    let mut context = format!(
        "Before your change could be applied, someone changed these files in the working \
         tree: {}. Your earlier edits to them could not be merged and are undone in the run; \
         `read` them as they are now and make your change again. Your earlier diff of each:\n",
        conflicts.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(", ")
    );
    for (path, _) in &conflicts {
        if let Some(d) = s.code_diffs.iter().find(|d| &d.file_path == path) {
            context.push_str(&format!("\n```diff\n{}\n```\n", stdx::clip(&d.diff, 4000)));
        }
    }
    s.error_context = Some(context);
    // One more round for this, even at the limit.
    s.max_iterations = s.max_iterations.max(s.iteration_count + 1);
    s.next_node = Some(nodes::CODE.into());
    Ok(Step::Continue)
}

/// After SUCCESS: the end, or, when the working tree changed under the run,
/// VALIDATE (merged) or CODE (conflicts).
pub(crate) fn after_success(s: &CodingState) -> String {
    match s.next_node.as_deref() {
        Some(n @ (nodes::VALIDATE | nodes::CODE)) => n.to_owned(),
        _ => workflow::END.to_owned(),
    }
}

fn applied_before(
    session: &engine::Session,
    description: &str,
    call: &stdx::Call<'_>,
) -> Option<String> {
    let h = session.history(&HistoryRequest { id: None, limit: Some(50) }, call).ok()?;
    h.transactions.into_iter().find(|t| t.description == description).map(|t| t.id)
}

pub(crate) fn workspace(shared: &Shared, run_id: &str) -> ShadowWorkspace {
    ShadowWorkspace::new(shared.session.root(), &shared.work_dir.join(run_id))
}

/// Removes a finished run's build directory; a failure only leaves disk used.
pub(crate) fn remove_workspace(shared: &Shared, run_id: &str) {
    if let Err(e) = workspace(shared, run_id).remove() {
        tracing::warn!(run = run_id, error = %e, "the run's workspace was not removed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_parse_leniently_and_check_strictly() {
        let ok = r#"{"spec": "s", "plan": {"summary": "x", "steps": [
            {"number": 1, "description": "d", "actionType": "modify", "filePath": "calc.py"}],
            "complexity": "low"}}"#;
        let cases: &[(&str, Result<&str, &str>)] = &[
            (ok, Ok("calc.py")),
            (&format!("```json\n{ok}\n```"), Ok("calc.py")),
            (&format!("Here is the plan:\n{ok}\nDone."), Ok("calc.py")),
            ("I will fix it.", Err("there is no JSON object in the answer")),
            (
                "{\"spec\": 1}",
                Err("invalid type: integer `1`, expected a string at line 1 column 10"),
            ),
            (
                &ok.replace("\"number\": 1", "\"number\": 2"),
                Err("step 1 is numbered 2; number the steps 1, 2, 3, ..."),
            ),
            (
                &ok.replace("modify", "rewrite"),
                Err("step 1: actionType \"REWRITE\" is not CREATE, MODIFY, DELETE or REFACTOR"),
            ),
            (
                &ok.replace("calc.py", "../etc/passwd"),
                Err("step 1: filePath \"../etc/passwd\" leaves the project"),
            ),
            (
                &ok.replace("calc.py", "/etc/passwd"),
                Err(
                    "step 1: filePath \"/etc/passwd\" is absolute; give it relative to the project root",
                ),
            ),
            (&ok.replace("low", "huge"), Err("complexity \"HUGE\" is not LOW, MEDIUM or HIGH")),
        ];
        for (text, want) in cases {
            let got = parse_plan(text);
            match (want, &got) {
                (Ok(file), Ok(a)) => {
                    assert_eq!(a.plan.affected_files, vec![file.to_string()], "{text}");
                    assert_eq!(a.plan.steps[0].action_type, "MODIFY");
                    assert_eq!(a.plan.complexity, "LOW");
                }
                (Err(e), Err(g)) => assert_eq!(g, e, "{text}"),
                _ => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn routers_follow_the_seed_graph() {
        let mut s = CodingState::new("r", "q", protocol::RunSettings::default());
        assert_eq!(after_plan_gate(&s), nodes::PLAN);
        s.verdict = Some(Verdict::Approved);
        assert_eq!(after_plan_gate(&s), nodes::BASELINE, "the baseline before the first change");
        s.baseline = Some(protocol::Baseline::default());
        assert_eq!(after_plan_gate(&s), nodes::CODE);
        assert_eq!(after_human(&s), nodes::PLAN, "no plan yet: plan first");
        s.plan = Some(ExecutionPlan::default());
        assert_eq!(after_human(&s), nodes::CODE);
        s.verdict = Some(Verdict::Rejected);
        assert_eq!(after_human(&s), nodes::PLAN);
        assert_eq!(after_review(&s), nodes::CODE);
    }

    #[test]
    fn a_question_is_answered_and_asked_again_after_a_pause() {
        let question = "Explain how calculate() handles division";
        let mut s = CodingState::new("r", question, protocol::RunSettings::default());
        s.route = Some(engine::route_request(question));
        assert_eq!(after_init(&s), nodes::ANSWER);
        // The limits cut the answer short: a human, then the question again.
        assert_eq!(after_answer(&s), nodes::WAIT_HUMAN);
        assert_eq!(after_human(&s), nodes::ANSWER);
        s.answer = Some("It divides.".into());
        assert_eq!(after_answer(&s), END);
        // --plan, a change, a long report: PLAN.
        s.settings.always_plan = true;
        assert_eq!(after_init(&s), nodes::PLAN);
        for request in ["Fix the division by zero in calculate()", &"Explain why. ".repeat(30)] {
            let mut s = CodingState::new("r", request, protocol::RunSettings::default());
            s.route = Some(engine::route_request(request));
            assert_eq!(after_init(&s), nodes::PLAN, "{request}");
        }
    }
}
