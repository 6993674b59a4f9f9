//! A custom node's run: its agents read the run's work (the plan, the change,
//! the tests' results) with their own tools, in the run's shadow, and each
//! answers with a verdict — go on, or send the work back with what to fix
//! (seed 001's `AgentResponse.NextNode`).

use std::sync::Arc;

use llm::Message;
use protocol::{CodingState, ErrorCode, RunEventKind, RunSpend, nodes};
use serde::Deserialize;
use workflow::{NodeContext, NodeError, NodeOutcome};

use crate::{
    graph::Placed,
    model::{Buffered, Turn, TurnEnd},
    nodes::instructions,
    orchestrator::{RunState, Shared},
};

/// A custom node's agent's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Verdict {
    agent: String,
    next: String,
    message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    next_node: Option<String>,
    #[serde(default)]
    message: String,
}

pub(crate) fn run(
    shared: &Arc<Shared>,
    spec: &Placed,
    s: RunState,
    cx: &mut NodeContext<'_>,
) -> Result<NodeOutcome<RunState>, NodeError> {
    let mut state = s.0;
    state.current_node = cx.node().to_owned();
    state.timestamp = stdx::rfc3339_utc(stdx::now_ms());
    Ok(match judge(shared, spec, &mut state, cx) {
        Ok(()) => NodeOutcome::Continue(RunState(state)),
        Err(error) => NodeOutcome::Fail { state: RunState(state), error },
    })
}

fn judge(
    shared: &Shared,
    spec: &Placed,
    s: &mut CodingState,
    cx: &mut NodeContext<'_>,
) -> Result<(), NodeError> {
    s.next_node = None;
    let verdicts = if spec.members.len() > 1 {
        parallel(shared, spec, s, cx)?
    } else {
        let member = &spec.members[0];
        match turn(shared, spec, &member.agent, s, cx)? {
            Ok(v) => vec![v],
            Err(reason) => {
                s.pause_reason = Some(reason);
                return Ok(());
            }
        }
    };
    for v in &verdicts {
        cx.emit(RunEventKind::AgentVerdict {
            node: cx.node().to_owned(),
            agent: v.agent.clone(),
            next: v.next.clone(),
            message: stdx::clip(&v.message, 2000).into_owned(),
        });
    }
    // The first agent that sends the work somewhere else decides.
    let Some(decisive) = verdicts.iter().find(|v| v.next != spec.on) else {
        s.next_node = Some(spec.on.clone());
        return Ok(());
    };
    let mut next = decisive.next.clone();
    let words = format!("`{}` ({}): {}", decisive.agent, cx.node(), decisive.message);
    if next == spec.back {
        if spec.back == nodes::PLAN {
            s.feedback = Some(words);
        } else {
            s.error_context =
                Some(format!("## The change was sent back by a reviewer\n\n{words}\n"));
            if s.iteration_count >= s.max_iterations {
                s.escalation = Some(format!(
                    "{} sent the change back after {} rounds of coding",
                    decisive.agent, s.iteration_count
                ));
                next = nodes::ESCALATE.to_owned();
            }
        }
    }
    s.next_node = Some(next);
    Ok(())
}

/// One agent's turn and its verdict; `Err(reason)` when the turn paused (a
/// limit, the budget).
fn turn(
    shared: &Shared,
    spec: &Placed,
    agent: &str,
    s: &mut CodingState,
    cx: &mut (dyn crate::model::TurnIo + Send),
) -> Result<std::result::Result<Verdict, String>, NodeError> {
    let def = shared.agent(agent)?;
    let system = format!(
        "{}\n\n## Your answer\n\nEnd your answer with one JSON object: {{\"nextNode\": \"...\", \
         \"message\": \"...\"}}. `nextNode` is one of {}: `{}` lets the run go on; `{}` sends \
         the work back, and your `message` says exactly what to fix.\n",
        instructions(shared, &[]).append_to(&def.prompt),
        spec.allowed.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
        spec.on,
        spec.back,
    );
    let mut turn =
        Turn { agent: def, system, messages: vec![Message::user(context(s))], schema: None };
    let text = match turn.run(shared, s, cx)? {
        TurnEnd::Answer { text, .. } => text,
        TurnEnd::Paused(reason) => return Ok(Err(reason)),
    };
    let answer = parse(&text, &spec.allowed);
    if answer.is_none() {
        cx.emit(RunEventKind::Warning {
            code: "VERDICT_UNREADABLE".into(),
            message: format!(
                "agent `{agent}` gave no verdict naming one of {}; the run goes on",
                spec.allowed.join(", ")
            ),
        });
    }
    let (next, message) = answer.unwrap_or_else(|| (spec.on.clone(), text.trim().to_owned()));
    Ok(Ok(Verdict { agent: agent.to_owned(), next, message }))
}

/// Every member at once (see [`in_parallel`]).
fn parallel(
    shared: &Shared,
    spec: &Placed,
    s: &mut CodingState,
    cx: &mut NodeContext<'_>,
) -> Result<Vec<Verdict>, NodeError> {
    let members: Vec<&str> = spec.members.iter().map(|m| m.agent.as_str()).collect();
    let results =
        in_parallel(s, cx, members, |agent, state, io| turn(shared, spec, agent, state, io))?;
    let mut verdicts = Vec::new();
    for result in results {
        match result {
            Ok(v) => verdicts.push(v),
            Err(reason) => s.pause_reason = Some(reason),
        }
    }
    Ok(verdicts)
}

/// `work` for every item at once, each in its own thread with its own copy of
/// the state and its events kept; afterwards the events are emitted in the
/// items' order and what each spent is added to the run's spend. The first
/// error, if any, is the result (after every thread has finished). Parallel
/// custom nodes and a parallel round of the task graph run this way.
pub(crate) fn in_parallel<I, T, F>(
    s: &mut CodingState,
    cx: &mut NodeContext<'_>,
    items: Vec<I>,
    work: F,
) -> Result<Vec<T>, NodeError>
where
    I: Send,
    T: Send,
    F: Fn(I, &mut CodingState, &mut (dyn crate::model::TurnIo + Send)) -> Result<T, NodeError>
        + Sync,
{
    let before = s.spend.clone();
    let work = &work;
    let outcomes: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .into_iter()
            .map(|item| {
                let mut state = s.clone();
                let mut io = Buffered {
                    run_id: cx.run_id().to_owned(),
                    cancel: cx.cancellation_token().clone(),
                    started: cx.execution_started(),
                    events: Vec::new(),
                };
                scope.spawn(move || {
                    let r = work(item, &mut state, &mut io);
                    (r, state.spend, io.events)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    let mut results = Vec::new();
    let mut failure = None;
    for outcome in outcomes {
        let (result, spend, events) = outcome.map_err(|_| {
            NodeError::new(ErrorCode::Internal.as_str(), "a parallel agent's thread panicked")
        })?;
        for e in events {
            cx.emit(e);
        }
        add_spend(&mut s.spend, &spend, &before);
        match result {
            Ok(t) => results.push(t),
            Err(e) => failure = failure.or(Some(e)),
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(results),
    }
}

/// Adds what one thread spent (its spend less what all started from).
fn add_spend(total: &mut RunSpend, after: &RunSpend, before: &RunSpend) {
    total.input_tokens += after.input_tokens - before.input_tokens;
    total.output_tokens += after.output_tokens - before.output_tokens;
    total.cost_usd += after.cost_usd - before.cost_usd;
    total.model_calls += after.model_calls - before.model_calls;
    total.tool_calls += after.tool_calls - before.tool_calls;
    total.unpriced_calls += after.unpriced_calls - before.unpriced_calls;
}

/// What a reviewing agent is shown: the request, the plan, the change so far and
/// what the tests said.
pub(crate) fn context(s: &CodingState) -> String {
    let mut out = format!("## Request\n\n{}\n", s.user_request);
    if let Some(spec) = &s.spec {
        out.push_str(&format!("\n## Specification\n\n{spec}\n"));
    }
    if let Some(plan) = &s.plan {
        out.push_str(&format!(
            "\n## Plan\n\n{}\n",
            serde_json::to_string_pretty(plan).unwrap_or_default()
        ));
    }
    if !s.code_diffs.is_empty() {
        out.push_str("\n## The change (not yet applied)\n");
        for d in &s.code_diffs {
            out.push_str(&format!("\n```diff\n{}\n```\n", stdx::clip(&d.diff, 8000)));
        }
    }
    if let Some(summary) = &s.coder_summary {
        out.push_str(&format!("\n## What the coder says it did\n\n{summary}\n"));
    }
    if let Some(t) = &s.test_result {
        out.push_str(&format!(
            "\n## Tests\n\n{} passed, {} failed of {} ({}).\n",
            t.passed, t.failed, t.total, t.tool
        ));
    }
    out
}

/// The verdict in an answer: the last JSON object naming an allowed next node.
fn parse(text: &str, allowed: &[String]) -> Option<(String, String)> {
    let mut end = text.len();
    while let Some(close) = text[..end].rfind('}') {
        let mut start = close;
        while let Some(open) = text[..start].rfind('{') {
            if let Ok(a) = serde_json::from_str::<Answer>(&text[open..=close])
                && let Some(next) = a.next_node.filter(|n| allowed.contains(n))
            {
                return Some((next, a.message));
            }
            start = open;
        }
        end = close;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_from_the_last_json_naming_an_allowed_node() {
        let allowed = vec!["VALIDATE".to_owned(), "CODE".to_owned()];
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            (r#"{"nextNode": "VALIDATE", "message": "fine"}"#, Some(("VALIDATE", "fine"))),
            (
                "Looks wrong.\n```json\n{\"nextNode\": \"CODE\", \"message\": \"check b == 0\"}\n```",
                Some(("CODE", "check b == 0")),
            ),
            (r#"{"nextNode": "SUCCESS"}"#, None),
            ("LGTM", None),
            (
                r#"{"a": {"b": 1}} then {"nextNode": "CODE", "message": "x {y}"}"#,
                Some(("CODE", "x {y}")),
            ),
        ];
        for (text, want) in cases {
            let got = parse(text, &allowed);
            assert_eq!(got.as_ref().map(|(n, m)| (n.as_str(), m.as_str())), *want, "{text}");
        }
    }
}
