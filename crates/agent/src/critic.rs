//! CRITIC (seed 002's M1 on M2): every round's change is checked before it is
//! built and tested — the guardrails first, which need no model and cannot be
//! argued with, then, when the run asks for it (`--critic`, `agent.critic`), a
//! model review whose answer follows a JSON schema.
//!
//! A blocker (a guardrail's, or an issue the review marks so) sends the change
//! back to CODE with what to fix; the next CODE round counts as an iteration, and
//! a change still blocked when the rounds are used up escalates to a human like
//! a validation that never passes. Warnings and remarks go on with the run, in
//! the critique the state keeps and the `critique` event reports.

use llm::{Message, OutputSchema};
use protocol::{CodingState, CriticIssue, Critique, GuardSeverity, RunEventKind, nodes};
use serde::Deserialize;
use serde_json::json;
use workflow::NodeContext;

use crate::{
    model::{Turn, TurnEnd},
    nodes::{Outcome, Step, instructions},
    orchestrator::Shared,
    overlay,
};

pub(crate) fn critic(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    s.next_node = None;
    let change = overlay::change(&s.overlay, shared);
    if change.files.is_empty() {
        // Nothing to judge: the run goes on to find out it changed nothing.
        s.critique = None;
        return Ok(Step::Continue);
    }
    let guardrails = shared.guardrails.as_ref().map(|g| g.check(&change)).unwrap_or_default();
    let mut critique = Critique {
        approved: !guardrails.blocked,
        iteration: s.iteration_count,
        guardrails,
        ..Critique::default()
    };
    if critique.approved && s.settings.critic {
        match review(shared, s, &critique, cx)? {
            Review::Done(r) => {
                critique.reviewed = true;
                critique.approved = !r.issues.iter().any(|i| i.severity == GuardSeverity::Blocker);
                critique.issues = r.issues;
                critique.suggestions = r.suggestions;
            }
            Review::Unreadable(text) => {
                cx.emit(RunEventKind::Warning {
                    code: "CRITIQUE_UNREADABLE".into(),
                    message: format!(
                        "the critic's answer is not the review JSON; the change goes on to \
                         validation: {}",
                        stdx::clip(text.trim(), 300)
                    ),
                });
            }
            Review::Paused(reason) => {
                s.pause_reason = Some(reason);
                return Ok(Step::Continue);
            }
        }
    }
    cx.emit(RunEventKind::Critique { critique: critique.clone() });
    if !critique.approved {
        s.error_context = Some(feedback(&critique));
        if s.iteration_count >= s.max_iterations {
            s.escalation = Some(format!(
                "the change is still blocked after {} rounds of coding: {}",
                s.iteration_count,
                blockers(&critique).first().cloned().unwrap_or_default()
            ));
            s.next_node = Some(nodes::ESCALATE.to_owned());
        } else {
            s.next_node = Some(nodes::CODE.to_owned());
        }
    }
    s.critique = Some(critique);
    Ok(Step::Continue)
}

/// Where CRITIC goes: back (CODE, ESCALATE) when it said so, else on.
pub(crate) fn after_critic(s: &CodingState, on: &str) -> String {
    s.next_node.clone().unwrap_or_else(|| on.to_owned())
}

/// The blockers, one line each, as the coder is told them.
fn blockers(c: &Critique) -> Vec<String> {
    let place = |file: &Option<String>, line: Option<u32>| match (file, line) {
        (Some(f), Some(l)) => format!(" at {f}:{l}"),
        (Some(f), None) => format!(" in {f}"),
        _ => String::new(),
    };
    let rules =
        c.guardrails.findings.iter().filter(|f| f.severity == GuardSeverity::Blocker).map(|f| {
            format!(
                "GUARDRAIL_BLOCKED {} {}{}: {}",
                f.rule_id,
                f.rule_name,
                place(&f.file, f.line),
                f.message
            )
        });
    let review = c
        .issues
        .iter()
        .filter(|i| i.severity == GuardSeverity::Blocker)
        .map(|i| format!("review{}: {}", place(&i.file, i.line), i.message));
    rules.chain(review).collect()
}

/// What the coder reads in its next round.
fn feedback(c: &Critique) -> String {
    let mut out = String::from("## The change was blocked before validation\n\n");
    for b in blockers(c) {
        out.push_str(&format!("- {b}\n"));
    }
    if c.guardrails.blocked {
        out.push_str(
            "\nGuardrails are the project's rules: change the code so it keeps them (a secret \
             belongs in the environment or a secret store, read at run time; a change too \
             large to land at once is split into smaller steps). Do not work around a rule.\n",
        );
    }
    if !c.suggestions.is_empty() {
        out.push_str("\nSuggestions:\n");
        for s in &c.suggestions {
            out.push_str(&format!("- {s}\n"));
        }
    }
    out
}

enum Review {
    Done(Reviewed),
    /// The model answered, but not with the review.
    Unreadable(String),
    /// A limit stopped the turn.
    Paused(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Answer {
    approved: Option<bool>,
    issues: Vec<RawIssue>,
    suggestions: Vec<String>,
}

/// An issue as a model writes it: severities outside the schema are mapped
/// (`critical`, `major`, `minor`, ...), not refused.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawIssue {
    severity: String,
    message: String,
    file: Option<String>,
    line: Option<u32>,
}

fn severity(word: &str) -> GuardSeverity {
    match word.trim().to_ascii_lowercase().as_str() {
        "blocker" | "critical" | "error" | "high" | "must" => GuardSeverity::Blocker,
        "info" | "minor" | "low" | "nit" | "note" | "suggestion" => GuardSeverity::Info,
        _ => GuardSeverity::Warning,
    }
}

struct Reviewed {
    issues: Vec<CriticIssue>,
    suggestions: Vec<String>,
}

impl From<Answer> for Reviewed {
    fn from(a: Answer) -> Reviewed {
        let mut issues: Vec<CriticIssue> = a
            .issues
            .into_iter()
            .filter(|i| !i.message.trim().is_empty())
            .map(|i| CriticIssue {
                severity: severity(&i.severity),
                message: i.message.trim().to_owned(),
                file: i.file.filter(|f| !f.is_empty()),
                line: i.line.filter(|l| *l > 0),
            })
            .collect();
        // A model that says "not approved" and lists no blocker meant one.
        if a.approved == Some(false)
            && !issues.iter().any(|i| i.severity == GuardSeverity::Blocker)
            && let Some(first) = issues.first_mut()
        {
            first.severity = GuardSeverity::Blocker;
        }
        Reviewed { issues, suggestions: a.suggestions }
    }
}

/// The review's JSON schema (seed 002's CriticResult).
fn schema() -> OutputSchema {
    OutputSchema {
        name: "critique".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "approved": {"type": "boolean"},
                "issues": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "severity": {"type": "string", "enum": ["blocker", "warning", "info"]},
                            "message": {"type": "string"},
                            "file": {"type": "string"},
                            "line": {"type": "integer"}
                        },
                        "required": ["severity", "message"]
                    }
                },
                "suggestions": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["approved", "issues", "suggestions"]
        }),
    }
}

fn review(
    shared: &Shared,
    s: &mut CodingState,
    c: &Critique,
    cx: &mut NodeContext<'_>,
) -> Result<Review, workflow::NodeError> {
    let def = shared.agent("critic")?;
    let mut user = crate::review::context(s);
    if !c.guardrails.findings.is_empty() {
        user.push_str("\n## Guardrails (warnings, the change may land)\n\n");
        for f in &c.guardrails.findings {
            user.push_str(&format!(
                "- {} {}{}: {}\n",
                f.rule_id,
                f.rule_name,
                f.file.as_deref().map(|p| format!(" in {p}")).unwrap_or_default(),
                f.message
            ));
        }
    }
    let paths: Vec<&str> = s.code_diffs.iter().map(|d| d.file_path.as_str()).collect();
    let system = instructions(shared, &paths).append_to(&def.prompt);
    let mut turn =
        Turn { agent: def, system, messages: vec![Message::user(user)], schema: Some(schema()) };
    let text = match turn.run(shared, s, cx)? {
        TurnEnd::Answer { text, .. } => text,
        TurnEnd::Paused(reason) => return Ok(Review::Paused(reason)),
    };
    Ok(match parse(&text) {
        Some(a) => Review::Done(a.into()),
        None => Review::Unreadable(text),
    })
}

/// The review in an answer: the whole text as JSON (a structured answer), else
/// the last JSON object in it with an `issues` or `approved` key.
fn parse(text: &str) -> Option<Answer> {
    let is_review = |v: &serde_json::Value| {
        v.get("issues").is_some_and(serde_json::Value::is_array)
            || v.get("approved").is_some_and(serde_json::Value::is_boolean)
    };
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text.trim())
        && is_review(&v)
    {
        return serde_json::from_value(v).ok();
    }
    let mut end = text.len();
    while let Some(close) = text[..end].rfind('}') {
        let mut start = close;
        while let Some(open) = text[..start].rfind('{') {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text[open..=close])
                && is_review(&v)
            {
                return serde_json::from_value(v).ok();
            }
            start = open;
        }
        end = close;
    }
    None
}
