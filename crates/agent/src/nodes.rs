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
    ApprovalDecision, Approver, BuildRequest, ChangeOptions, ChangeRequest, CheckLevel,
    CodingState, CommandKind, ErrorCode, ExecutionPlan, Gate, HistoryRequest, PlannerAnswer,
    RepomapRequest, RunEventKind, SandboxOptions, TestRequest, TestResult, Validation, Verdict,
    nodes,
};
use serde_json::{Value, json};
use workflow::{NodeContext, NodeError, NodeOutcome};

use crate::{
    model::{Turn, TurnEnd},
    orchestrator::{RunState, Shared},
    overlay, policy,
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

type Outcome = Result<Step, NodeError>;

fn call_err(e: engine::Error) -> NodeError {
    let info = e.to_info();
    NodeError::new(info.code.as_str(), info.message)
}

pub(crate) fn init(_: &Shared, _: &mut CodingState, _: &mut NodeContext<'_>) -> Outcome {
    Ok(Step::Continue)
}

// --- PLAN ---------------------------------------------------------------------------

/// The planner's context from Layer 0, within about this many tokens: the ranked
/// repository map around the request, and the files `localize` ranks first.
const PLANNER_CONTEXT_TOKENS: u32 = 3000;

pub(crate) fn plan(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    let planner = shared.agent("planner")?;
    let context = planner_context(shared, s, cx);
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
    user.push_str(&format!("\n## Project context\n\n{context}"));
    let system = instructions(shared, &[]).append_to(&planner.prompt);
    let mut turn = Turn { agent: planner, system, messages: vec![Message::user(user)] };
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
            Ok(answer) => {
                cx.emit(RunEventKind::Plan {
                    spec: answer.spec.clone(),
                    plan: answer.plan.clone(),
                });
                s.spec = Some(answer.spec);
                s.plan = Some(answer.plan);
                s.feedback = None;
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

/// Layer 0 for the planner: the repository map personalized to the request, then
/// the skeletons of the files `localize` ranks first, until the budget is used.
/// Each part is best effort: a project the index cannot read still gets planned.
fn planner_context(shared: &Shared, s: &CodingState, cx: &mut NodeContext<'_>) -> String {
    let cancel = cx.cancellation_token().clone();
    let call = stdx::Call::new(&stdx::NoProgress, &cancel);
    let session = &shared.session;
    let mut out = String::new();
    let map = RepomapRequest {
        tokens: Some(PLANNER_CONTEXT_TOKENS / 2),
        focus: Vec::new(),
        query: Some(s.user_request.clone()),
    };
    if let Ok(map) = session.repomap(&map, &call) {
        out.push_str("### Repository map (most relevant definitions)\n\n");
        out.push_str(&map.text);
        out.push('\n');
    }
    let req = protocol::LocalizeRequest {
        query: s.user_request.clone(),
        k: Some(5),
        ..Default::default()
    };
    if let Ok(found) = session.localize(&req, &call) {
        let mut budget = (PLANNER_CONTEXT_TOKENS / 2) as usize;
        out.push_str("\n### Files most likely involved (ranked), with their outlines\n");
        for f in found.files.iter().take(5) {
            out.push_str(&format!("\n- {} (score {:.2})\n", f.path, f.score));
            let sk = protocol::SkeletonRequest { path: f.path.clone() };
            if let Ok(sk) = session.skeleton(&sk, &call) {
                let text = &sk.skeleton.text;
                let tokens = text.len() / 4;
                if tokens <= budget {
                    budget -= tokens;
                    out.push_str(&format!("```\n{text}\n```\n"));
                }
            }
        }
    }
    cx.emit(RunEventKind::Context { agent: "planner".into(), bytes: out.len() as u64 });
    out
}

/// The project's AGENTS.md files that apply to `paths` (all the root's when none).
fn instructions(shared: &Shared, paths: &[&str]) -> crate::Instructions {
    crate::project_instructions(shared.session.root(), paths, 16 * 1024)
}

/// The planner's answer as a plan: JSON (a code fence or prose around it is
/// forgiven, as small models add them), the seed's shape, and sane steps.
pub(crate) fn parse_plan(text: &str) -> Result<PlannerAnswer, String> {
    let start = text.find('{').ok_or("there is no JSON object in the answer")?;
    let end = text.rfind('}').ok_or("the JSON object is not closed")?;
    if end < start {
        return Err("the JSON object is not closed".into());
    }
    let mut answer: PlannerAnswer =
        serde_json::from_str(&text[start..=end]).map_err(|e| format!("{e}"))?;
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
    _: &Shared,
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
        _ => nodes::PLAN,
    }
}

// --- CODE -------------------------------------------------------------------------------

pub(crate) fn code(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    let coder = shared.agent("coder")?;
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
    if let Some(err) = &s.error_context {
        user.push_str(&format!(
            "\n## Validation failed after round {}\n\n{err}\n",
            s.iteration_count
        ));
    }
    if let Some(fb) = &s.feedback {
        user.push_str(&format!("\n## Feedback from a human\n\n{fb}\n"));
    }
    let paths: Vec<&str> =
        s.plan.iter().flat_map(|p| p.affected_files.iter().map(String::as_str)).collect();
    let system = instructions(shared, &paths).append_to(&coder.prompt);
    let mut turn = Turn { agent: coder, system, messages: vec![Message::user(user)] };
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
    Ok(Step::Continue)
}

// --- VALIDATE ---------------------------------------------------------------------------

/// Output kept for the coder when a failure has no structured message.
const OUTPUT_TAIL: usize = 3000;

/// The overlay's fingerprint: what VALIDATE last checked.
fn overlay_fingerprint(files: &[protocol::OverlayFile]) -> String {
    let mut h = stdx::ContentHasher::new();
    for f in files {
        h.update(f.path.as_bytes());
        h.update(&[0]);
        h.update(f.content.as_deref().unwrap_or("\u{0}deleted").as_bytes());
        h.update(&[0]);
    }
    h.finish_hex()
}

const CHANGED_NOTHING: &str = "You changed nothing since this failure; it stands.";

pub(crate) fn validate(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    // A coder round that changed nothing after a failure gets the same failure:
    // building and testing the same files again would only cost time and a
    // validator call. It counts as the same failure again (the loop detector's).
    let fingerprint = overlay_fingerprint(&s.overlay);
    if s.validation == Some(Validation::Failed)
        && s.validated_overlay.as_ref() == Some(&fingerprint)
        && let Some(last) = s.recent.last().cloned()
    {
        s.recent.push(last);
        if let Some(e) = &s.error_context
            && !e.starts_with(CHANGED_NOTHING)
        {
            s.error_context = Some(format!("{CHANGED_NOTHING}\n\n{e}"));
        }
        cx.emit(RunEventKind::ValidationReused {
            reason: "the run's files did not change since the last failure".into(),
        });
        return Ok(Step::Continue);
    }
    s.validated_overlay = Some(fingerprint);
    let ws = workspace(shared, cx.run_id());
    let overlay = overlay::to_edit(&s.overlay);
    let report = ws.sync(&overlay).map_err(|e| {
        NodeError::new(e.code().as_str(), format!("preparing the run's workspace: {e}"))
    })?;
    cx.emit(RunEventKind::Workspace { path: ws.path().display().to_string(), sync: report });
    let cancel = cx.cancellation_token().clone();
    let call = stdx::Call::new(&stdx::NoProgress, &cancel);
    let sandbox = SandboxOptions {
        workspace: Some(ws.path().display().to_string()),
        ..SandboxOptions::default()
    };
    let session = &shared.session;
    let mut failure = None;
    // Whether a command actually checked the change (a build that ran, tests that
    // ran): a project with neither has not been validated, whatever passed.
    let mut checked = false;
    // Build first: its errors say more than a test run that could not compile.
    match session.build_as(&BuildRequest { sandbox: sandbox.clone() }, engine::Trust::User, &call) {
        Ok(b) => {
            // Python and plain Node projects have no build step: nothing ran.
            if b.exec.is_some() {
                checked = true;
                let errors = bounded_names(b.build.errors.iter().map(diagnostic));
                command_event(
                    cx,
                    CommandKind::Build,
                    &b.build.tool,
                    b.build.success,
                    b.build.duration_ms,
                    b.exec.as_ref(),
                    errors,
                    b.build.errors.len() as u32,
                );
            }
            if !b.build.success {
                let mut text = format!("The build ({}) failed:\n", b.build.tool);
                for d in b.build.errors.iter().take(20) {
                    text.push_str(&format!("- {}\n", diagnostic(d)));
                }
                if b.build.errors.is_empty()
                    && let Some(e) = &b.exec
                {
                    text.push_str(&tail(&e.stderr.text, &e.stdout.text));
                }
                failure = Some(text);
            }
            s.build_result = Some(b.build);
        }
        Err(e) if e.to_info().code == ErrorCode::UnknownProject => {}
        Err(engine::Error::Cancelled) => return Err(NodeError::new("CANCELLED", "cancelled")),
        Err(e) => return Err(call_err(e)),
    }
    if failure.is_none() {
        match session.test_as(
            &TestRequest { sandbox, ..TestRequest::default() },
            engine::Trust::User,
            &call,
        ) {
            Ok(t) => {
                // A test tool that found no test (pytest's "no tests ran") checked
                // nothing; it is not a failure for the coder to fix either.
                let ran_none = t.test.total == 0
                    && t.test.failures.is_empty()
                    && t.test.build_errors.is_empty()
                    && t.test.incomplete.is_none();
                checked |= !ran_none;
                let failed = bounded_names(t.test.failures.iter().map(|f| f.name.clone()));
                command_event(
                    cx,
                    CommandKind::Test,
                    &t.test.tool,
                    t.test.success,
                    t.test.duration_ms,
                    Some(&t.exec),
                    failed,
                    t.test.failed.max(t.test.failures.len() as u32),
                );
                if !t.test.success && !ran_none {
                    failure = Some(test_failure(&t.test, &t.exec));
                }
                s.test_result = Some(t.test);
            }
            Err(e) if e.to_info().code == ErrorCode::UnknownProject => {}
            Err(engine::Error::Cancelled) => return Err(NodeError::new("CANCELLED", "cancelled")),
            Err(e) => return Err(call_err(e)),
        }
    }
    match failure {
        None if !checked => {
            s.error_context = None;
            s.validation = Some(Validation::Unchecked);
            cx.emit(RunEventKind::ValidationSkipped {
                reason: "no build step ran and no test was found: a human reviews the change"
                    .into(),
            });
        }
        None => {
            s.error_context = None;
            s.validation = Some(Validation::Passed);
        }
        Some(text) => {
            s.recent.push(policy::failure_fingerprint(&text));
            s.validation = Some(Validation::Failed);
            let diagnosis = diagnose(shared, s, &text, cx)?;
            s.error_context = Some(match diagnosis {
                Some(d) => format!("{text}\n## Diagnosis\n\n{d}\n"),
                None => text,
            });
        }
    }
    Ok(Step::Continue)
}

/// The validator's explanation of a failure, when there is a validator and the
/// budget allows; its absence only makes the coder's context thinner.
fn diagnose(
    shared: &Shared,
    s: &mut CodingState,
    failure: &str,
    cx: &mut NodeContext<'_>,
) -> Result<Option<String>, NodeError> {
    let Some(validator) = shared.agents.get("validator") else { return Ok(None) };
    let user = format!(
        "## The plan\n\n{}\n\n## What the coder says it changed\n\n{}\n\n## The failed validation\n\n{failure}\n",
        serde_json::to_string_pretty(&s.plan).unwrap_or_default(),
        s.coder_summary.as_deref().unwrap_or("(no summary)")
    );
    let system = instructions(shared, &[]).append_to(&validator.prompt);
    let mut turn = Turn { agent: validator, system, messages: vec![Message::user(user)] };
    Ok(match turn.run(shared, s, cx)? {
        TurnEnd::Answer { text, .. } if !text.trim().is_empty() => Some(text),
        TurnEnd::Answer { .. } => None,
        TurnEnd::Paused(reason) => {
            cx.emit(RunEventKind::DiagnosisSkipped { reason });
            None
        }
    })
}

fn diagnostic(d: &protocol::Diagnostic) -> String {
    let at = match (&d.file, d.line) {
        (Some(f), Some(l)) => format!("{f}:{l}: "),
        (Some(f), None) => format!("{f}: "),
        _ => String::new(),
    };
    format!("{at}{}", d.message)
}

/// The failing tests with their messages (what the coder needs first), or the
/// output's end when the tool reported none.
fn test_failure(t: &TestResult, exec: &protocol::ExecResult) -> String {
    let mut text = format!(
        "The tests ({}) failed: {} passed, {} failed of {}.\n",
        t.tool, t.passed, t.failed, t.total
    );
    if let Some(why) = &t.incomplete {
        text.push_str(&format!("The run was incomplete: {why}\n"));
    }
    for d in t.build_errors.iter().take(20) {
        text.push_str(&format!("- {}\n", diagnostic(d)));
    }
    for f in t.failures.iter().take(10) {
        let at = match (&f.file, f.line) {
            (Some(file), Some(l)) => format!(" ({file}:{l})"),
            _ => String::new(),
        };
        text.push_str(&format!("\n### {}{at}\n{}\n", f.name, stdx::clip(&f.message, 2000)));
    }
    if t.failures.is_empty() && t.build_errors.is_empty() {
        text.push_str(&tail(&exec.stderr.text, &exec.stdout.text));
    }
    text
}

fn tail(stderr: &str, stdout: &str) -> String {
    let both = format!("{stdout}\n{stderr}");
    let trimmed = both.trim();
    let start = trimmed.len().saturating_sub(OUTPUT_TAIL);
    let start = (start..trimmed.len()).find(|i| trimmed.is_char_boundary(*i)).unwrap_or(0);
    format!("\nOutput (end):\n```\n{}\n```\n", &trimmed[start..])
}

/// What a `command` event names: every failure, until the names add up to
/// [`MAX_NAMED_BYTES`] (the event's `failed` keeps the exact count).
const MAX_NAMED_BYTES: usize = 16 * 1024;

fn bounded_names(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut used = 0;
    let mut out = Vec::new();
    for name in names {
        used += name.len();
        if used > MAX_NAMED_BYTES {
            break;
        }
        out.push(name);
    }
    out
}

#[allow(clippy::too_many_arguments)] // one private helper, the event's fields
fn command_event(
    cx: &mut NodeContext<'_>,
    kind: CommandKind,
    tool: &str,
    success: bool,
    duration_ms: u64,
    exec: Option<&protocol::ExecResult>,
    failures: Vec<String>,
    failed: u32,
) {
    cx.emit(RunEventKind::Command {
        kind,
        tool: tool.to_owned(),
        success,
        duration_ms,
        wall_ms: exec.map(|e| e.duration_ms),
        failures,
        failed,
        command: exec.map(|e| e.command.clone()).unwrap_or_default(),
        exit_code: exec.and_then(|e| e.exit_code),
        output_tail: exec
            .map(|e| stdx::clip(&format!("{}{}", e.stdout.text, e.stderr.text), 1500).into_owned())
            .unwrap_or_default(),
    });
}

// --- DECIDE and SUCCESS -----------------------------------------------------------------

pub(crate) fn decide(_: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    let validation = s.validation;
    let passed = matches!(validation, Some(Validation::Passed | Validation::Unchecked));
    let route = policy::decide(passed, s.iteration_count, s.max_iterations, &s.recent);
    let name = match &route {
        // Nothing validated the change: only a human can, before it is applied.
        policy::Route::Pass if s.settings.review || validation == Some(Validation::Unchecked) => {
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
    })?;
    s.transaction_id = applied["transactionId"].as_str().map(str::to_owned);
    cx.emit(RunEventKind::Applied {
        transaction_id: s.transaction_id.clone(),
        files: s.code_diffs.iter().map(|d| d.file_path.clone()).collect(),
    });
    remove_workspace(shared, cx.run_id());
    Ok(Step::Continue)
}

fn applied_before(
    session: &engine::Session,
    description: &str,
    call: &stdx::Call<'_>,
) -> Option<String> {
    let h = session.history(&HistoryRequest { id: None, limit: Some(50) }, call).ok()?;
    h.transactions.into_iter().find(|t| t.description == description).map(|t| t.id)
}

fn workspace(shared: &Shared, run_id: &str) -> ShadowWorkspace {
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
        assert_eq!(after_plan_gate(&s), nodes::CODE);
        assert_eq!(after_human(&s), nodes::PLAN, "no plan yet: plan first");
        s.plan = Some(ExecutionPlan::default());
        assert_eq!(after_human(&s), nodes::CODE);
        s.verdict = Some(Verdict::Rejected);
        assert_eq!(after_human(&s), nodes::PLAN);
        assert_eq!(after_review(&s), nodes::CODE);
    }
}
