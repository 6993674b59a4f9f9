//! Agent mode from the command line: `ironbees run "REQUEST"` and `ironbees runs
//! list|show|approve|reject|cancel|resume|log`.
//!
//! A run is the orchestrator's (`agent::Orchestrator`); this module only draws it.
//! Events stream to stderr as one line each (JSON Lines on stdout with `--json`),
//! and when the run stops at a gate, a terminal gets a prompt while everything else
//! gets exit code 10 — a pipe or CI with the command that answers it, `--json` with
//! the outcome line whose `status` names the gate — and the run waits in
//! `.ironbees/runs/` for as long as it takes.

use std::{
    io::{BufRead, IsTerminal, Write},
    sync::{Arc, Mutex},
    time::Instant,
};

use anyhow::{Context, Result};
use protocol::{ApprovalDecision, RunEvent, RunEventKind, RunSettings, RunStatus};
use serde_json::Value;

use super::{Ctx, chat_client, runtime, session::open_session};
use crate::{exit::cli_error, output::Output};

/// Exit code of a run that stopped to wait for a human (resumable).
pub const EXIT_WAITING: i32 = 10;

pub const RUN_HELP: &str = "\
Examples:
  ironbees run \"Fix the division by zero bug in calculate()\"
  ironbees run --yes --max-iterations 3 \"Add a subtract() function\"
  ironbees run --json --yes \"Rename Config.get to Config.lookup\" > run.jsonl
  ironbees run --review --budget-usd 0.50 \"Add input validation to parse_args\"

The planner reads the code and proposes a plan; you approve it (or edit or reject
it with feedback); the coder edits a shadow copy, never your files; the project's
build and tests run in the sandbox; failures go back to the coder, up to
--max-iterations rounds, then to you. Only a validated change is applied, as one
transaction: `ironbees undo` reverts the whole run.

The model comes from the configuration (`llm:`) or the standard variables:
ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL (any OpenAI-compatible
server: Ollama, vLLM, llama.cpp, LM Studio). Defaults for the flags come from the
`agent:` section of .ironbees/config.yaml (maxIterations, timeoutSeconds,
enableHumanInTheLoop, budgetUsd).

Without a terminal (or with --json) a run that needs a human exits with code 10
and waits: answer it with `ironbees runs approve ID` or `runs reject ID
--feedback TEXT`. --json prints one JSON object per line: every run event
(`{\"runId\", \"seq\", \"timeMs\", \"kind\": {\"type\": ...}}`), then
`{\"outcome\": {\"runId\", \"status\", \"state\"}}`.";

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// What to do, in plain words (`-`: read it from standard input).
    #[arg(value_name = "REQUEST", required_unless_present = "request_file")]
    pub request: Option<String>,
    /// Read the request from this file (`-`: standard input), for requests too
    /// long for an argument.
    #[arg(long, value_name = "FILE")]
    pub request_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Approve the plan without asking (the run still stops when it needs help).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Show the validated change and wait for approval before applying it.
    #[arg(long)]
    pub review: bool,
    /// Override the configured model.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct LimitArgs {
    /// Rounds of coding before asking a human (default 5).
    #[arg(long, value_name = "N")]
    pub max_iterations: Option<u32>,
    /// Stop for a human once the run's models cost this much (USD).
    #[arg(long, value_name = "USD")]
    pub budget_usd: Option<f64>,
    /// Stop for a human after this many model tokens.
    #[arg(long, value_name = "N")]
    pub budget_tokens: Option<u64>,
    /// Stop for a human after this long in one go (default 300s).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// A model (the `critic` agent) reviews each round's change after the
    /// guardrails, before it is built and tested; a blocker sends it back.
    #[arg(long)]
    pub critic: bool,
    /// Plan and change even when the request reads as a question ("explain how
    /// login works" is otherwise answered from the code, changing nothing).
    #[arg(long)]
    pub plan: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum RunsCommand {
    /// Runs, most recent first.
    List {
        #[arg(long, value_name = "N", default_value_t = 20)]
        limit: usize,
    },
    /// A run's state: request, status, plan, iteration, spend, diffs.
    Show { id: String },
    /// Answer the gate a run waits at with yes, and continue it.
    Approve {
        id: String,
        /// Words for the next agent (the coder, after an escalation).
        #[arg(long, value_name = "TEXT")]
        feedback: Option<String>,
        /// A new USD budget (a run paused on its budget).
        #[arg(long, value_name = "USD")]
        budget_usd: Option<f64>,
        /// Replace the plan with this file's plan JSON (approved as edited).
        #[arg(long, value_name = "FILE")]
        plan_file: Option<std::path::PathBuf>,
        #[arg(long, short = 'y')]
        yes: bool,
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
    },
    /// Answer the gate with no, with feedback: a plan is made again, a change is
    /// reworked.
    Reject {
        id: String,
        #[arg(long, value_name = "TEXT", required = true)]
        feedback: String,
        #[arg(long, short = 'y')]
        yes: bool,
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
    },
    /// Continue a run after a crash, a kill, a failure or a pause (a gate asks again).
    Resume {
        id: String,
        #[arg(long, short = 'y')]
        yes: bool,
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
    },
    /// Cancel a run; nothing of it is applied.
    Cancel { id: String },
    /// The trajectory: every model call with usage, tool call and result, command.
    Log {
        id: String,
        /// Only events after this sequence number.
        #[arg(long, value_name = "SEQ", default_value_t = 0)]
        after: u64,
    },
}

/// The CRITIC node's verdict in a line, with the first blocker.
fn critique_line(c: &protocol::Critique) -> String {
    use protocol::GuardSeverity::Blocker;
    let verdict = if c.approved { "approved" } else { "blocked" };
    let by = if c.reviewed { "guardrails and review" } else { "guardrails" };
    let mut line = format!("  critic ({by}): {verdict}");
    let found = c.guardrails.findings.len() + c.issues.len();
    if found > 0 {
        line.push_str(&format!(", {found} finding(s)"));
    }
    let first = c
        .guardrails
        .findings
        .iter()
        .find(|f| f.severity == Blocker)
        .map(|f| {
            let at = f.file.as_deref().map(|p| format!(" {p}")).unwrap_or_default();
            let line = f.line.map(|l| format!(":{l}")).unwrap_or_default();
            format!("{} {}{at}{line}: {}", f.rule_id, f.rule_name, f.message)
        })
        .or_else(|| c.issues.iter().find(|i| i.severity == Blocker).map(|i| i.message.clone()));
    if let Some(first) = first {
        line.push_str(&format!(" — {}", stdx::clip(&first, 200)));
    }
    line
}

pub const RUNS_HELP: &str = "\
Examples:
  ironbees runs list
  ironbees runs show 5f3a9c2e
  ironbees runs approve 5f3a9c2e
  ironbees runs approve 5f3a9c2e --feedback \"the zero check belongs in divide()\"
  ironbees runs reject 5f3a9c2e --feedback \"also handle negative numbers\"
  ironbees runs log 5f3a9c2e --json";

fn settings(ctx: &Ctx, limits: &LimitArgs, yes: bool, review: bool) -> Result<RunSettings> {
    let timeout = limits.timeout.as_deref().map(engine::parse_duration).transpose()?;
    Ok(ctx.host.run_settings(&host::RunOverrides {
        yes,
        review,
        critic: limits.critic,
        plan: limits.plan,
        max_iterations: limits.max_iterations,
        budget_usd: limits.budget_usd,
        budget_tokens: limits.budget_tokens,
        timeout,
    })?)
}

/// An orchestrator with the tools it was given: the configured MCP servers
/// live as long as it does.
pub struct Agent {
    orch: agent::Orchestrator,
    tools: host::Tools,
}

impl std::ops::Deref for Agent {
    type Target = agent::Orchestrator;

    fn deref(&self) -> &agent::Orchestrator {
        &self.orch
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.tools.shutdown();
    }
}

/// The orchestrator over this project with a model and the configured
/// tools (MCP servers started); it waits on `rt`.
fn orchestrator(
    ctx: &Ctx,
    out: &Output,
    rt: &tokio::runtime::Runtime,
    model: Option<&str>,
) -> Result<Agent> {
    let llm = chat_client(ctx, out, rt, model)?;
    let session = open_session(ctx, out, false)?;
    let agents = ctx.host.agents()?;
    let tools = super::tool::tools(ctx, out)?;
    let orch = ctx.host.orchestrator(
        session,
        Some(Arc::new(llm)),
        agents,
        tools.registry.clone(),
        rt.handle().clone(),
    )?;
    Ok(Agent { orch, tools })
}

/// The orchestrator without a model, for commands that only read runs.
fn reader(ctx: &Ctx, out: &Output, rt: &tokio::runtime::Runtime) -> Result<agent::Orchestrator> {
    let session = open_session(ctx, out, false)?;
    let agents = ctx.host.agents()?;
    // Listing, showing and cancelling runs needs no model and no tools.
    Ok(ctx.host.orchestrator(
        session,
        None,
        agents,
        engine::Registry::new(),
        rt.handle().clone(),
    )?)
}

/// How a run the CLI drives is drawn: its events go to the printer.
pub fn drive_here(ctx: &Ctx, out: &Output) -> agent::Drive {
    let printer = Arc::new(Printer::new(out));
    let sink: workflow::EventSink = Arc::new(move |ev: &RunEvent| printer.event(ev));
    agent::Drive { cancel: Some(ctx.cancel.clone()), sink: Some(sink), ..agent::Drive::default() }
}

/// The request: the argument, a file, or standard input (`-`).
fn request_text(ctx: &Ctx, args: &RunArgs) -> Result<String> {
    let text = match (&args.request, &args.request_file) {
        (Some(r), None) if r == "-" => read_stdin()?,
        (Some(r), None) => r.clone(),
        (None, Some(f)) if f.as_os_str() == "-" => read_stdin()?,
        (None, Some(f)) => {
            let path = ctx.cwd.join(f);
            std::fs::read_to_string(&path).map_err(|e| {
                let code = if e.kind() == std::io::ErrorKind::NotFound {
                    protocol::ErrorCode::NotFound
                } else {
                    protocol::ErrorCode::Io
                };
                cli_error(code, format!("reading the request from {}: {e}", path.display()))
            })?
        }
        (Some(_), Some(_)) => {
            return Err(cli_error(
                protocol::ErrorCode::InvalidArgument,
                "give the request as an argument or with --request-file, not both",
            ));
        }
        (None, None) => {
            return Err(cli_error(
                protocol::ErrorCode::InvalidArgument,
                "say what to do: `ironbees run \"REQUEST\"`, `--request-file FILE`, or `-` to \
                 read it from standard input",
            ));
        }
    };
    Ok(text)
}

fn read_stdin() -> Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text)
        .context("reading the request from standard input")?;
    Ok(text)
}

pub fn run(ctx: &Ctx, out: &Output, args: &RunArgs) -> Result<i32> {
    let request = request_text(ctx, args)?;
    let settings = settings(ctx, &args.limits, args.yes, args.review)?;
    let rt = runtime()?;
    let orch = orchestrator(ctx, out, &rt, args.model.as_deref())?;
    let started = Instant::now();
    let outcome = orch.start(&request, settings, drive_here(ctx, out))?;
    if !out.json {
        out.note(format!("run {} started", outcome.run_id));
    }
    drive(ctx, out, &orch, outcome, started)
}

pub fn runs(ctx: &Ctx, out: &Output, cmd: &RunsCommand) -> Result<i32> {
    let rt = runtime()?;
    match cmd {
        RunsCommand::List { limit } => {
            let runs = reader(ctx, out, &rt)?.list(Some(*limit))?;
            if out.json {
                out.json(&runs)?;
                return Ok(0);
            }
            if runs.is_empty() {
                out.note("no runs yet: start one with `ironbees run \"REQUEST\"`");
            }
            for r in runs {
                let request = r.metadata.get("request").and_then(Value::as_str).unwrap_or("");
                // One line per run; a byte for a byte, so the cut marker's count
                // stays the original's.
                let request = request.replace(['\n', '\r', '\t'], " ");
                let node = if r.node == workflow::END { "-" } else { r.node.as_str() };
                out.line(format!(
                    "{}  {:<10} {:<19} {}  {}",
                    r.id,
                    r.status.name(),
                    node,
                    super::analysis::date(r.updated_ms / 1000),
                    stdx::clip(&request, 70)
                ));
            }
            Ok(0)
        }
        RunsCommand::Show { id } => {
            let orch = reader(ctx, out, &rt)?;
            let id = &orch.resolve(id)?;
            let (meta, mut state) = orch.state(id)?.ok_or_else(|| not_found(id))?;
            let summary = orch.summary(id)?.ok_or_else(|| not_found(id))?;
            // The state names the node that last ran; where the run *is* is the
            // checkpoint's (the next node to run, or the gate it waits at).
            state.state_id = meta.state_id.clone();
            if out.json {
                out.json(&serde_json::json!({"run": summary, "checkpoint": meta, "state": state}))?;
                return Ok(0);
            }
            show(out, &summary.status, &meta.node, &state);
            Ok(0)
        }
        RunsCommand::Approve { id, feedback, budget_usd, plan_file, yes, model } => {
            let edited_content = match plan_file {
                Some(f) => Some(
                    std::fs::read_to_string(f)
                        .with_context(|| format!("reading the plan {}", f.display()))?,
                ),
                None => None,
            };
            let d = ApprovalDecision {
                approved: true,
                edited_content,
                feedback: feedback.clone(),
                budget_usd: *budget_usd,
            };
            answer(ctx, out, &rt, id, Some(d), *yes, model.as_deref())
        }
        RunsCommand::Reject { id, feedback, yes, model } => {
            let d = ApprovalDecision {
                approved: false,
                feedback: Some(feedback.clone()),
                ..ApprovalDecision::default()
            };
            answer(ctx, out, &rt, id, Some(d), *yes, model.as_deref())
        }
        RunsCommand::Resume { id, yes, model } => {
            answer(ctx, out, &rt, id, None, *yes, model.as_deref())
        }
        RunsCommand::Cancel { id } => {
            let orch = reader(ctx, out, &rt)?;
            let id = &orch.resolve(id)?;
            let status = orch.cancel(id)?;
            if out.json {
                out.json(&serde_json::json!({"runId": id, "status": status}))?;
            } else if status == RunStatus::Running {
                out.line(format!(
                    "run {id}: cancel requested; the process running it stops at its next step"
                ));
            } else {
                out.line(format!("run {id}: {}", status_words(&status)));
            }
            Ok(0)
        }
        RunsCommand::Log { id, after } => {
            let orch = reader(ctx, out, &rt)?;
            let id = &orch.resolve(id)?;
            let events = orch.events(id, *after)?;
            let printer = Printer::new(out);
            let mut stdout = std::io::stdout().lock();
            for ev in &events {
                if out.json {
                    serde_json::to_writer(&mut stdout, ev)?;
                    writeln!(stdout)?;
                } else if let Some(line) = printer.render(ev) {
                    writeln!(stdout, "{}", line)?;
                }
            }
            Ok(0)
        }
    }
}

/// A status in words ("succeeded", "was cancelled", ...).
fn status_words(status: &RunStatus) -> String {
    match status {
        RunStatus::Cancelled => "was cancelled".into(),
        RunStatus::Succeeded => "has succeeded".into(),
        RunStatus::Waiting { node, .. } => format!("waits at {node}"),
        RunStatus::Failed { code, .. } => format!("failed [{code}]"),
        other => other.name().into(),
    }
}

fn not_found(id: &str) -> anyhow::Error {
    cli_error(
        protocol::ErrorCode::StateNotFound,
        format!("no run {id:?} (see `ironbees runs list`)"),
    )
}

/// Answers a run's gate (or resumes it) and drives it on. The run's state is
/// checked before a model client is made: a finished run says so, whether or
/// not a model is configured.
fn answer(
    ctx: &Ctx,
    out: &Output,
    rt: &tokio::runtime::Runtime,
    id: &str,
    decision: Option<ApprovalDecision>,
    yes: bool,
    model: Option<&str>,
) -> Result<i32> {
    let _ = yes;
    let id = {
        let reader = reader(ctx, out, rt)?;
        let id = reader.resolve(id)?;
        let summary = reader.summary(&id)?.ok_or_else(|| not_found(&id))?;
        if summary.status.is_finished() {
            return Err(cli_error(
                protocol::ErrorCode::InvalidState,
                format!(
                    "run {id} {}; there is nothing to {} (`ironbees runs show {id}`)",
                    status_words(&summary.status),
                    if decision.is_some() { "answer" } else { "resume" }
                ),
            ));
        }
        id
    };
    let orch = orchestrator(ctx, out, rt, model)?;
    let started = Instant::now();
    let outcome = orch.drive(&id, decision.as_ref(), drive_here(ctx, out))?;
    drive(ctx, out, &orch, outcome, started)
}

/// Follows a run to its end, prompting at gates on a terminal.
pub fn drive(
    ctx: &Ctx,
    out: &Output,
    orch: &agent::Orchestrator,
    mut outcome: protocol::RunOutcome,
    started: Instant,
) -> Result<i32> {
    let interactive =
        !out.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    loop {
        match &outcome.status {
            RunStatus::Waiting { node, reason } if interactive => {
                let Some(decision) = prompt(out, node, reason, &outcome.state)? else {
                    return Ok(finish(out, &outcome, started));
                };
                outcome = orch.drive(&outcome.run_id, Some(&decision), drive_here(ctx, out))?;
            }
            _ => {
                let code = finish(out, &outcome, started);
                if code == 0
                    && let Some(pipeline) = super::pipeline::after_agent_run(ctx, out, &outcome)?
                {
                    return Ok(pipeline);
                }
                return Ok(code);
            }
        }
    }
}

/// Prints how the run ended and picks the exit code.
fn finish(out: &Output, o: &protocol::RunOutcome, started: Instant) -> i32 {
    let code = match &o.status {
        RunStatus::Succeeded => 0,
        RunStatus::Waiting { .. } => EXIT_WAITING,
        RunStatus::Cancelled => 130,
        RunStatus::Failed { code, .. } => {
            serde_json::from_value::<protocol::ErrorCode>(Value::String(code.clone()))
                .map_or(1, crate::exit::exit_code)
        }
        _ => 1,
    };
    if out.json {
        let line = serde_json::json!({"outcome": o});
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{line}");
        return code;
    }
    let s = &o.state;
    let spend = format!(
        "{} model calls, {} tokens, ${:.4}, {:.0?}",
        s.spend.model_calls,
        s.spend.input_tokens + s.spend.output_tokens,
        s.spend.cost_usd,
        started.elapsed()
    );
    let id = &o.run_id;
    match &o.status {
        RunStatus::Succeeded if s.answer.is_some() => {
            out.line(s.answer.as_deref().unwrap_or_default());
            out.line(format!("run {id} answered a question; nothing was changed. {spend}"));
        }
        RunStatus::Succeeded => {
            for d in &s.code_diffs {
                out.line(&d.diff);
            }
            match &s.transaction_id {
                Some(tx) => out.line(format!(
                    "run {id} succeeded after {} round(s): {} file(s) changed, transaction {tx} \
                     (`ironbees undo {tx}` reverts the whole run). {spend}",
                    s.iteration_count,
                    s.code_diffs.len()
                )),
                None => out.line(format!(
                    "run {id} ended with no change: the coder changed nothing, nothing was \
                     applied. {spend}"
                )),
            }
        }
        RunStatus::Waiting { node, reason } => {
            out.line(format!("run {id} waits at {node}: {reason}"));
            let how = match node.as_str() {
                "WAIT_PLAN_APPROVAL" => format!(
                    "approve the plan with `ironbees runs approve {id}`, or `ironbees runs reject {id} --feedback TEXT`; `ironbees runs show {id}` shows it"
                ),
                "WAIT_REVIEW" => format!(
                    "apply the change with `ironbees runs approve {id}`, or send it back with `ironbees runs reject {id} --feedback TEXT`"
                ),
                _ => format!(
                    "continue with `ironbees runs approve {id} [--feedback TEXT] [--budget-usd N]`, re-plan with `runs reject {id} --feedback TEXT`, or `runs cancel {id}`"
                ),
            };
            out.note(how);
            out.note(spend);
        }
        RunStatus::Failed { code, message } => {
            out.line(format!("run {id} failed [{code}]: {message}"));
            out.note(format!("`ironbees runs resume {id}` tries the failed step again; nothing was applied. {spend}"));
        }
        RunStatus::Cancelled => out.line(format!("run {id} cancelled; nothing was applied")),
        other => out.line(format!("run {id}: {}", other.name())),
    }
    code
}

/// Shows what a gate asks about and reads the answer; `None` leaves the run waiting.
fn prompt(
    out: &Output,
    node: &str,
    reason: &str,
    s: &protocol::CodingState,
) -> Result<Option<ApprovalDecision>> {
    show_gate(out, node, reason, s);
    let question = match node {
        "WAIT_PLAN_APPROVAL" => {
            "Approve the plan? [y]es, [e]dit (say what to change), [n]o (reject with feedback), [q]uit (leave it waiting)"
        }
        "WAIT_REVIEW" => "Apply this change? [y]es, [n]o (say what to rework), [q]uit",
        _ => {
            "Continue? [y]es (optionally with guidance), [n]o (re-plan with feedback), [q]uit (leave it waiting)"
        }
    };
    loop {
        let Some(choice) = read_line(&format!("{question} "))? else { return Ok(None) };
        match choice.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" | "" => {
                let feedback = if node == "WAIT_HUMAN" {
                    read_line("Guidance for the coder (Enter for none): ")?
                        .filter(|f| !f.trim().is_empty())
                } else {
                    None
                };
                return Ok(Some(ApprovalDecision {
                    approved: true,
                    feedback,
                    ..Default::default()
                }));
            }
            "e" | "edit" | "n" | "no" => {
                let Some(feedback) =
                    read_line("What should change? ")?.filter(|f| !f.trim().is_empty())
                else {
                    continue;
                };
                return Ok(Some(ApprovalDecision {
                    approved: false,
                    feedback: Some(feedback),
                    ..Default::default()
                }));
            }
            "q" | "quit" => return Ok(None),
            _ => out.note("answer y, e, n or q"),
        }
    }
}

fn read_line(prompt: &str) -> Result<Option<String>> {
    eprint!("{prompt}");
    std::io::stderr().flush()?;
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim_end().to_owned()))
}

fn show_gate(out: &Output, node: &str, reason: &str, s: &protocol::CodingState) {
    let bold = out.style_out().bold();
    match node {
        "WAIT_PLAN_APPROVAL" => {
            out.line(bold.apply_to("Plan").to_string());
            show_plan(out, s);
        }
        "WAIT_REVIEW" => {
            out.line(bold.apply_to("Change (validated, not yet applied)").to_string());
            for d in &s.code_diffs {
                out.line(&d.diff);
            }
        }
        _ => {
            out.line(format!("{} {reason}", bold.apply_to("The run needs you:")));
            if let Some(e) = &s.error_context {
                out.line(stdx::clip(e, 3000));
            }
        }
    }
}

fn show_plan(out: &Output, s: &protocol::CodingState) {
    if let Some(spec) = &s.spec {
        out.line(format!("  {spec}"));
    }
    if let Some(p) = &s.plan {
        out.line(format!("  {} (complexity {})", p.summary, p.complexity));
        for step in &p.steps {
            out.line(format!(
                "  {}. [{}] {}{}",
                step.number,
                step.action_type,
                step.file_path.as_deref().map(|f| format!("{f}: ")).unwrap_or_default(),
                step.description
            ));
        }
        if let Some(g) = p.task_graph.as_ref().filter(|_| p.steps.len() > 1) {
            out.line(format!(
                "  order: {} (a comma: no dependency between the steps)",
                g.order_text()
            ));
            if g.rounds.len() > 1 || g.rounds.iter().any(|r| r.parallel) {
                out.line(format!("  coded in rounds: {}", g.rounds_text()));
            } else if g.estimate.as_ref().is_some_and(|e| e.rounds_before > 1) {
                out.line("  coded in one turn: the run's time or token budget fits no more");
            }
        }
    }
}

fn show(out: &Output, status: &RunStatus, node: &str, s: &protocol::CodingState) {
    out.line(format!("request:   {}", s.user_request));
    let at = if node == workflow::END { String::new() } else { format!(" at {node}") };
    out.line(format!("status:    {}{at}", status.name()));
    out.line(format!("state:     {}", s.state_id));
    if let RunStatus::Waiting { reason, .. } = status {
        out.line(format!("waiting:   {reason}"));
    }
    out.line(format!("iteration: {} of {}", s.iteration_count, s.max_iterations));
    out.line(format!(
        "spend:     {} model calls, {} tool calls, {} tokens, ${:.4}",
        s.spend.model_calls,
        s.spend.tool_calls,
        s.spend.input_tokens + s.spend.output_tokens,
        s.spend.cost_usd
    ));
    for (agent, a) in &s.spend.by_agent {
        out.line(format!(
            "           {agent}: {} model calls, {} in + {} out tokens, ${:.4}",
            a.model_calls, a.input_tokens, a.output_tokens, a.cost_usd
        ));
    }
    if !s.spend.context_tokens.is_empty() {
        let parts: Vec<String> =
            s.spend.context_tokens.iter().map(|(p, n)| format!("{p} {n}")).collect();
        out.line(format!("context:   {} tokens assembled (Layer 0)", parts.join(", ")));
    }
    if let Some(tx) = &s.transaction_id {
        out.line(format!("applied:   transaction {tx}"));
    }
    if s.plan.is_some() {
        out.line("plan:");
        show_plan(out, s);
    }
    if let Some(e) = &s.error_context {
        out.line("last failure:");
        out.line(stdx::clip(e, 2000));
    }
    for d in &s.code_diffs {
        out.line(&d.diff);
    }
}

/// What a tool call is about, in a few words: its file(s), target or query.
fn tool_target(args: &Value) -> String {
    if let Some(edits) = args["edits"].as_array() {
        let mut paths: Vec<&str> = edits.iter().filter_map(|e| e["path"].as_str()).collect();
        paths.dedup();
        return paths.join(", ");
    }
    for key in ["target", "path", "query", "symbol"] {
        if let Some(v) = args[key].as_str() {
            return stdx::clip(v, 100).into_owned();
        }
    }
    stdx::clip(&args.to_string(), 100).into_owned()
}

/// Draws events: JSON Lines on stdout with `--json`, else one line each on stderr.
pub struct Printer {
    json: bool,
    color: bool,
    /// What the run has done so far, for the status on each node's line.
    tally: Mutex<Tally>,
}

/// Round, time and spend of the run as its events tell them (this execution's
/// time; the run's spend lives in its state, shown at the end).
struct Tally {
    started: Instant,
    round: u32,
    tokens: u64,
    cost: f64,
}

impl Printer {
    pub fn new(out: &Output) -> Printer {
        let tally = Tally { started: Instant::now(), round: 0, tokens: 0, cost: 0.0 };
        Printer { json: out.json, color: out.color_err(), tally: Mutex::new(tally) }
    }

    pub fn event(&self, ev: &RunEvent) {
        let mut tally = self.tally.lock().unwrap_or_else(|p| p.into_inner());
        match &ev.kind {
            RunEventKind::Checkpoint { iteration, .. } => tally.round = *iteration,
            RunEventKind::ModelCall { usage, cost_usd, .. } => {
                tally.tokens += usage.input_tokens + usage.cache_read_tokens + usage.output_tokens;
                tally.cost += cost_usd.unwrap_or(0.0);
            }
            _ => {}
        }
        if self.json {
            let mut stdout = std::io::stdout().lock();
            if serde_json::to_writer(&mut stdout, ev).is_ok() {
                let _ = writeln!(stdout);
                let _ = stdout.flush();
            }
            return;
        }
        if let Some(mut line) = self.render(ev) {
            if let RunEventKind::NodeStarted { .. } = ev.kind {
                let dim = console::Style::new().force_styling(self.color).dim();
                let status = format!(
                    "  rounds done {} · {:.1}s · {} tokens · ${:.4}",
                    tally.round,
                    tally.started.elapsed().as_secs_f64(),
                    tally.tokens,
                    tally.cost
                );
                line.push_str(&dim.apply_to(status).to_string());
            }
            eprintln!("{line}");
        }
    }

    /// One line for an event a person wants to see (deltas and checkpoints are
    /// left to `--json` and `runs log --json`).
    fn render(&self, ev: &RunEvent) -> Option<String> {
        let style = console::Style::new().force_styling(self.color);
        let dim = style.clone().dim();
        let bold = style.clone().bold();
        Some(match &ev.kind {
            RunEventKind::RunStarted { .. } | RunEventKind::Checkpoint { .. } => return None,
            RunEventKind::RunResumed { node, .. } => {
                format!("{} at {node}", dim.apply_to("resumed"))
            }
            RunEventKind::NodeStarted { node, attempt } => {
                let again =
                    if *attempt > 1 { format!(" (attempt {attempt})") } else { String::new() };
                format!("{} {node}{again}", bold.apply_to("▸"))
            }
            RunEventKind::NodeFailed { node, code, message, retrying, .. } => format!(
                "  {node} failed [{code}]: {}{}",
                stdx::clip(message, 300),
                if *retrying { " — retrying" } else { "" }
            ),
            RunEventKind::Interrupted { node, reason, .. } => format!("  {node}: {reason}"),
            RunEventKind::Paused { node, reason } => format!("  paused before {node}: {reason}"),
            RunEventKind::Diverted { to, reason, .. } => format!("  → {to}: {reason}"),
            RunEventKind::RunFinished { status } => {
                format!("{} {}", bold.apply_to("■"), status.name())
            }
            RunEventKind::ModelCall { agent, model, usage, cost_usd, latency_ms, .. } => {
                let tokens = usage.input_tokens + usage.cache_read_tokens + usage.output_tokens;
                let cost = cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default();
                dim.apply_to(format!(
                    "  {agent} → {model} ({tokens} tokens{cost}, {latency_ms} ms)"
                ))
                .to_string()
            }
            RunEventKind::ToolCall { agent, name, arguments, .. } => {
                format!("  {agent} {name} {}", tool_target(arguments))
            }
            RunEventKind::ToolResult { ok: false, summary, .. } => {
                format!("    ✗ {}", stdx::clip(summary, 200))
            }
            RunEventKind::Plan { plan, .. } => format!("  plan: {}", plan.summary),
            RunEventKind::PlanRejected { error, .. } => {
                format!("  the plan did not parse, asking again: {error}")
            }
            RunEventKind::TaskRound { round, rounds, steps, parallel } => format!(
                "  round {round}/{rounds}: step{} {}{}",
                if steps.len() == 1 { "" } else { "s" },
                steps.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
                if *parallel { " at once" } else { "" }
            ),
            RunEventKind::TaskFailed { step, reason, replan } => format!(
                "  step {step} not done: {reason}{}",
                if *replan { "; planning again" } else { "" }
            ),
            RunEventKind::Command {
                kind,
                scope,
                tool,
                success,
                duration_ms,
                failures,
                failed,
                pre_existing,
                total,
                ..
            } => {
                let kind = match (kind, scope) {
                    (protocol::CommandKind::Build, _) => "build",
                    (_, Some(protocol::CommandScope::Baseline)) => "tests before any change",
                    (_, Some(protocol::CommandScope::Targeted)) => "tests the change reaches",
                    (_, Some(protocol::CommandScope::Full)) => "all tests",
                    (_, Some(protocol::CommandScope::Isolated)) => "failing tests' files alone",
                    _ => "tests",
                };
                let ran = if *total > 0 { format!(" ({total} ran)") } else { String::new() };
                let old = if pre_existing.is_empty() {
                    String::new()
                } else {
                    format!("; {} failed before the change too", pre_existing.len())
                };
                let named = if failures.is_empty() {
                    String::new()
                } else {
                    let more = (*failed as usize).saturating_sub(failures.len());
                    let shown: Vec<&str> = failures.iter().take(5).map(String::as_str).collect();
                    let more = more + failures.len() - shown.len();
                    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
                    format!(": {}{more}", shown.join(", "))
                };
                format!(
                    "  {kind} ({tool}): {}{ran} in {duration_ms} ms{named}{old}",
                    if *success { "ok" } else { "FAILED" }
                )
            }
            RunEventKind::Diff { iteration, files } => format!(
                "  round {iteration}: {} file(s) changed in the run's workspace",
                files.len()
            ),
            RunEventKind::Decision { passed, next, .. } => {
                format!("  validation {} → {next}", if *passed { "passed" } else { "failed" })
            }
            RunEventKind::Escalated { reason, .. } => format!("  escalated: {reason}"),
            RunEventKind::Approved { gate, by, .. } => {
                let by = match by {
                    protocol::Approver::Flag => " by --yes",
                    protocol::Approver::Configuration => {
                        " by the configuration (agent.enableHumanInTheLoop: false)"
                    }
                    _ => "",
                };
                format!("  approved ({}){by}", gate.as_str())
            }
            RunEventKind::Rejected { gate, .. } => format!("  rejected ({})", gate.as_str()),
            RunEventKind::Applied { transaction_id: Some(tx), .. } => {
                format!("  applied as transaction {tx}")
            }
            RunEventKind::Applied { transaction_id: None, .. } => "  nothing to apply".into(),
            RunEventKind::ValidationSkipped { reason } => format!("  validation skipped: {reason}"),
            RunEventKind::ValidationReused { reason } => {
                format!("  validation not run again: {reason}")
            }
            RunEventKind::Warning { code, message } => format!("  warning [{code}]: {message}"),
            RunEventKind::AgentVerdict { node, agent, next, .. } => {
                format!("  {node}: `{agent}` → {next}")
            }
            RunEventKind::Critique { critique } => critique_line(critique),
            RunEventKind::Routed { route } if !route.needs_change && !route.cues.is_empty() => {
                format!(
                    "  a question ({}): answered from the code, nothing changed (--plan to plan a change)",
                    route.intent.as_str()
                )
            }
            _ => return None,
        })
    }
}
