//! The commit pipeline from the command line (seed 003): `ironbees pipeline
//! init|start|install-hook|status|list|show|resume|cancel|report` and
//! `ironbees commit -m MSG`. As `commitly` (argv[0]) the seed's spellings work
//! (`commitly init`, `commitly git commit -m MSG`, `commitly report`) and the
//! state lives under `.commitly/` instead of `.ironbees/`.
//!
//! A pipeline run is `pipeline::Pipeline`'s (a workflow run of kind
//! `pipeline` in the project's run store); this module draws its events and
//! asks its approvals on a terminal. Elsewhere a run that waits at an approval
//! exits 10 with the command that answers it.

use std::{
    io::{BufRead, IsTerminal, Write},
    path::{Path, PathBuf},
    sync::Arc,
};

use anyhow::{Context, Result};
use protocol::{ErrorCode, PipelineState, RunEvent, RunEventKind, RunStatus, StageStatus};
use serde_json::json;

use super::{Ctx, run::EXIT_WAITING, runtime, show_notices};
use crate::{exit::cli_error, output::Output};

pub const PIPELINE_HELP: &str = "\
Examples:
  ironbees pipeline init --exec 'python main.py' --test 'pytest -q'
  ironbees commit -m '[hotfix] API timeout'       git commit, then the pipeline
  ironbees commit --yes -m 'feat: login'          every approval answered yes
  ironbees pipeline install-hook                  run it after every `git commit`
  ironbees pipeline status
  ironbees pipeline resume 2026-11-28T01-45-00-3fa2 --approve
  ironbees pipeline report --from 2025-10-14 --to 2025-10-21 --format markdown

Stages, each on its own hub branch commitly/<stage>/<id> in the hub clone
({parent}/.commitly_hub_{project}): clone (the remote branch plus your unpushed
commits), code (linters and the execution command in the sandbox), test (SQL
optimization on pipeline.database.url's test database — the changed files' queries
explained, a rewrite or an index asked of the model, kept only when verified equal
and faster —, then the test command), refactor
(with pipeline.llm.enabled and a model), sync (push to the remote branch; the
pipeline's branches are then deleted) and notify (Slack). An approval follows
code, test and refactor, and precedes the push. A failure or a `no` rolls the hub
back and writes an error log; your working tree is never touched.
Results: .ironbees/cache/<stage>_agent.json; logs: .ironbees/logs/.
Configuration: the `pipeline:` section of .ironbees/config.yaml (`ironbees
pipeline init` writes one). Exit codes: 0 pushed, 10 waiting for an approval,
1 a stage failed (STAGE_FAILED, PUSH_REJECTED, APPROVAL_REJECTED), 130 cancelled.";

#[derive(Debug, clap::Subcommand)]
pub enum PipelineCommand {
    /// Write the `pipeline:` configuration (if none) and create the hub clone.
    Init(InitArgs),
    /// Start a pipeline on the current commit (what the post-commit hook runs).
    Start {
        /// Answer every approval with yes.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Install a post-commit hook that starts the pipeline in the background.
    InstallHook,
    /// The latest pipeline: where it stands, stage by stage.
    Status,
    /// Pipelines, most recent first.
    List {
        #[arg(long, value_name = "N", default_value_t = 20)]
        limit: usize,
    },
    /// A pipeline's stages and results.
    Show { id: String },
    /// Answer the approval a pipeline waits at, or continue one that was killed.
    Resume {
        id: String,
        #[arg(long, conflicts_with = "reject")]
        approve: bool,
        #[arg(long)]
        reject: bool,
        /// Answer this and every later approval with yes.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Cancel a pipeline (nothing more is pushed).
    Cancel { id: String },
    /// The activity report (seed §8.2) over the recorded pipelines.
    Report(ReportArgs),
}

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The execution command (`pipeline.execution.command`).
    #[arg(long, value_name = "CMD")]
    pub exec: Option<String>,
    /// The test command (`pipeline.testCommand`).
    #[arg(long, value_name = "CMD")]
    pub test: Option<String>,
    /// The remote's name (default origin).
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
    /// The remote branch to push to (default: the current branch).
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// Where the hub clone goes (default {parent}/.commitly_hub_{project}).
    #[arg(long, value_name = "DIR")]
    pub hub: Option<PathBuf>,
    /// Answer approvals with yes in unattended runs (`pipeline.autoApprove`).
    #[arg(long)]
    pub auto_approve: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// First day (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE")]
    pub from: Option<String>,
    /// Last day (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE")]
    pub to: Option<String>,
    /// Only pipelines whose commit message names this issue (`hotfix-api-timeout`).
    #[arg(long, value_name = "NAME")]
    pub issue: Option<String>,
    /// markdown or json.
    #[arg(long, value_name = "FORMAT", default_value = "markdown")]
    pub format: String,
}

#[derive(Debug, clap::Args)]
pub struct CommitArgs {
    /// The commit message.
    #[arg(short = 'm', long = "message", value_name = "MSG", required = true)]
    pub message: String,
    /// Answer every approval of the pipeline with yes.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// More `git commit` arguments (after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "GIT_ARGS")]
    pub git_args: Vec<String>,
}

/// The state directory's name: `.commitly` as `commitly`, else `.ironbees`.
fn state_name(commitly: bool) -> &'static str {
    if commitly { ".commitly" } else { code_index::STATE_DIR }
}

/// The host whose configuration the pipeline reads: as `commitly`, the user's
/// file and `.commitly/config.yaml`.
fn commitly_host(ctx: &Ctx) -> Result<host::Host> {
    let env = ctx.host.env().clone();
    let mut files = Vec::new();
    if let Some(dir) = host::user_config_dir(&env.vars) {
        files.push(dir.join("config.yaml"));
    }
    files.push(ctx.root.join(".commitly").join("config.yaml"));
    let mut config = host::Config::from_layers_in(&ctx.root, &files, &env.vars)?;
    // The seed's own file (§10.1: snake_case keys at the top level) reads as
    // our `pipeline:` and `llm:` sections.
    if let Some(ours) = pipeline::from_seed_layout(&config.value) {
        config.value = ours;
    }
    Ok(host::Host::with_config(&ctx.root, config, env))
}

struct Opened {
    pipeline: pipeline::Pipeline,
    // The runtime the pipeline's model and Slack calls wait on.
    _rt: tokio::runtime::Runtime,
}

impl std::ops::Deref for Opened {
    type Target = pipeline::Pipeline;

    fn deref(&self) -> &pipeline::Pipeline {
        &self.pipeline
    }
}

fn layout_of(ctx: &Ctx, config: &protocol::PipelineConfig, commitly: bool) -> pipeline::Layout {
    pipeline::Layout::new(
        &ctx.root,
        state_name(commitly),
        config.project_name.as_deref(),
        config.hub_path.as_deref(),
    )
}

/// The pipeline over this project; `model`: a model client when the
/// configuration asks for refactoring (runs), none for commands that only read.
fn open(ctx: &Ctx, out: &Output, commitly: bool, model: bool) -> Result<Opened> {
    let rt = runtime()?;
    let pipeline = open_on(ctx, out, commitly, model, rt.handle(), None)?;
    Ok(Opened { pipeline, _rt: rt })
}

/// The pipeline as `ironbees serve` drives it: on the server's runtime and in
/// its run store (the orchestrator's, whose work queue holds the jobs of both
/// kinds of run).
pub(super) fn for_serve(
    ctx: &Ctx,
    out: &Output,
    rt: &tokio::runtime::Handle,
    store: Arc<dyn workflow::CheckpointStore>,
) -> Result<pipeline::Pipeline> {
    open_on(ctx, out, false, true, rt, Some(store))
}

/// The pipeline on `rt`, in `store` (default: the configured run store).
fn open_on(
    ctx: &Ctx,
    out: &Output,
    commitly: bool,
    model: bool,
    rt: &tokio::runtime::Handle,
    store: Option<Arc<dyn workflow::CheckpointStore>>,
) -> Result<pipeline::Pipeline> {
    let owned;
    let host = if commitly {
        owned = commitly_host(ctx)?;
        &owned
    } else {
        &ctx.host
    };
    let config = host.pipeline_config()?;
    let layout = layout_of(ctx, &config, commitly);
    let commands = match host.sandbox_setup() {
        Ok(s) => Some(pipeline::Commands::new(s.config, s.policy, s.env, s.env_removed)),
        Err(e) => {
            out.warn(format!("sandbox settings are invalid, project commands cannot run: {e}"));
            None
        }
    };
    let llm = if model && config.llm.enabled {
        let (llm, notices) = host.chat_client(rt, config.llm.model.as_deref(), &ctx.cancel)?;
        show_notices(out, notices);
        Some(Arc::new(llm))
    } else {
        None
    };
    let store = match store {
        Some(s) => s,
        None => host.run_store(&layout.runs_dir())?,
    };
    Ok(pipeline::Pipeline::open(pipeline::Setup {
        config,
        layout,
        commands,
        llm,
        rt: rt.clone(),
        store,
    })?)
}

pub fn run(ctx: &Ctx, out: &Output, cmd: &PipelineCommand, commitly: bool) -> Result<i32> {
    match cmd {
        PipelineCommand::Init(args) => init(ctx, out, args, commitly),
        PipelineCommand::Start { yes } => {
            let p = open(ctx, out, commitly, true)?;
            let outcome = p.start(*yes, drive(ctx, out))?;
            finish(ctx, out, &p, outcome, commitly)
        }
        PipelineCommand::InstallHook => {
            let config = hook_config(ctx, commitly)?;
            let layout = layout_of(ctx, &config, commitly);
            let exe = std::env::current_exe().context("locating the ironbees binary")?;
            let args = if commitly { vec!["--commitly".to_owned()] } else { Vec::new() };
            let done = pipeline::install_hook(&layout, &exe, &args)?;
            if out.json {
                out.json(&json!({"hook": done.path, "created": done.created}))?;
            } else {
                let how = if done.created { "installed" } else { "updated" };
                out.line(format!("post-commit hook {how}: {}", done.path.display()));
                out.note("every `git commit` now starts the pipeline in the background; its approvals wait for `ironbees pipeline resume ID --approve` unless pipeline.autoApprove is set");
            }
            Ok(0)
        }
        PipelineCommand::Status => {
            let p = open(ctx, out, commitly, false)?;
            let Some(latest) = p.list(Some(1))?.into_iter().next() else {
                if out.json {
                    out.json(&serde_json::Value::Null)?;
                } else {
                    out.note("no pipeline yet: `ironbees commit -m MSG` starts one");
                }
                return Ok(0);
            };
            show(out, &p, &latest.id)
        }
        PipelineCommand::List { limit } => {
            let p = open(ctx, out, commitly, false)?;
            let runs = p.list(Some(*limit))?;
            if out.json {
                let mut stdout = std::io::stdout().lock();
                for r in &runs {
                    serde_json::to_writer(&mut stdout, r)?;
                    writeln!(stdout)?;
                }
                return Ok(0);
            }
            if runs.is_empty() {
                out.note("no pipeline yet: `ironbees commit -m MSG` starts one");
            }
            for r in runs {
                let message = r.metadata.get("request").and_then(|v| v.as_str()).unwrap_or("");
                let node = if r.node == workflow::END { "-" } else { r.node.as_str() };
                out.line(format!(
                    "{}  {:<10} {:<17} {}  {}",
                    r.id,
                    r.status.name(),
                    node,
                    super::analysis::date(r.updated_ms / 1000),
                    stdx::clip(&message.replace(['\n', '\r', '\t'], " "), 60)
                ));
            }
            Ok(0)
        }
        PipelineCommand::Show { id } => {
            let p = open(ctx, out, commitly, false)?;
            let id = p.resolve(id)?;
            show(out, &p, &id)
        }
        PipelineCommand::Resume { id, approve, reject, yes } => {
            let p = open(ctx, out, commitly, true)?;
            let id = p.resolve(id)?;
            let (summary, _, _) = p.show(&id)?.ok_or_else(|| not_found(&id))?;
            if summary.status.is_finished() {
                return Err(cli_error(
                    ErrorCode::InvalidState,
                    format!(
                        "pipeline {id} is {}; there is nothing to resume",
                        summary.status.name()
                    ),
                ));
            }
            let waiting = matches!(summary.status, RunStatus::Waiting { .. });
            if (*approve || *reject) && !waiting {
                return Err(cli_error(
                    ErrorCode::InvalidState,
                    format!(
                        "pipeline {id} is {}, not waiting at an approval: resume it without --approve/--reject",
                        summary.status.name()
                    ),
                ));
            }
            // --yes answers the approval it waits at, if any, and every later one.
            let answer = match (*approve || (*yes && waiting), *reject) {
                (_, true) => Some(false),
                (true, _) => Some(true),
                _ => None,
            };
            let outcome = p.resume(&id, answer, drive(ctx, out))?;
            let outcome = if *yes { answer_all(ctx, out, &p, outcome)? } else { outcome };
            finish(ctx, out, &p, outcome, commitly)
        }
        PipelineCommand::Cancel { id } => {
            let p = open(ctx, out, commitly, false)?;
            let id = p.resolve(id)?;
            let status = p.cancel(&id)?;
            if out.json {
                out.json(&json!({"pipelineId": id, "status": status}))?;
            } else {
                out.line(format!("pipeline {id}: {}", status.name()));
            }
            Ok(0)
        }
        PipelineCommand::Report(args) => report(ctx, out, args, commitly),
    }
}

/// The configuration without opening the store (the hook needs only paths).
fn hook_config(ctx: &Ctx, commitly: bool) -> Result<protocol::PipelineConfig> {
    Ok(if commitly {
        commitly_host(ctx)?.pipeline_config()?
    } else {
        ctx.host.pipeline_config()?
    })
}

/// `--yes` on resume: every later approval answered yes too.
fn answer_all(
    ctx: &Ctx,
    out: &Output,
    p: &pipeline::Pipeline,
    mut outcome: pipeline::Outcome,
) -> Result<pipeline::Outcome> {
    while let RunStatus::Waiting { .. } = outcome.status {
        outcome = p.resume(&outcome.pipeline_id, Some(true), drive(ctx, out))?;
    }
    Ok(outcome)
}

fn not_found(id: &str) -> anyhow::Error {
    cli_error(
        ErrorCode::StateNotFound,
        format!("no pipeline {id:?} (see `ironbees pipeline list`)"),
    )
}

/// `ironbees commit -m MSG [GIT_ARGS]`: `git commit`, then the pipeline.
pub fn commit(ctx: &Ctx, out: &Output, args: &CommitArgs, commitly: bool) -> Result<i32> {
    let mut git_args = vec!["commit".to_owned(), "-m".to_owned(), args.message.clone()];
    git_args.extend(args.git_args.iter().filter(|a| *a != "--").cloned());
    // git is a tool, not a project command; the hook must not start a second
    // pipeline for this commit (this command starts it).
    #[allow(clippy::disallowed_methods)]
    let status = std::process::Command::new("git")
        .args(&git_args)
        .current_dir(&ctx.root)
        .env("IRONBEES_PIPELINE", "1")
        .stdout(if out.json { std::process::Stdio::null() } else { std::process::Stdio::inherit() })
        .status()
        .context("running git commit")?;
    if !status.success() {
        return Err(cli_error(
            ErrorCode::InvalidArgument,
            format!(
                "git commit failed (exit {}); no pipeline was started",
                status.code().unwrap_or(-1)
            ),
        ));
    }
    let p = open(ctx, out, commitly, true)?;
    let outcome = p.start(args.yes, drive(ctx, out))?;
    finish(ctx, out, &p, outcome, commitly)
}

/// `pipeline.onAgentApply`: after an agent run applied its change, that change
/// committed and the pipeline run on it, here; the pipeline's exit code, or
/// `None` when the configuration does not ask for it.
pub(super) fn after_agent_run(
    ctx: &Ctx,
    out: &Output,
    run: &protocol::RunOutcome,
) -> Result<Option<i32>> {
    if !ctx.host.pipeline_config()?.on_agent_apply {
        return Ok(None);
    }
    let Some(applied) = pipeline::AgentApplied::of(run) else { return Ok(None) };
    if !out.json {
        out.note(format!(
            "pipeline.onAgentApply: committing run {}'s {} file(s) and starting the pipeline",
            run.run_id,
            applied.files.len()
        ));
    }
    let p = open(ctx, out, false, true)?;
    match p.after_agent_run(&applied, false, drive(ctx, out))? {
        Some(outcome) => finish(ctx, out, &p, outcome, false).map(Some),
        None => Ok(None),
    }
}

fn command_name(commitly: bool) -> &'static str {
    if commitly { "commitly" } else { "ironbees pipeline" }
}

/// Draws the outcome; on a terminal asks the approval a run waits at and
/// drives it on; the exit code.
fn finish(
    ctx: &Ctx,
    out: &Output,
    p: &pipeline::Pipeline,
    mut outcome: pipeline::Outcome,
    commitly: bool,
) -> Result<i32> {
    let interactive =
        !out.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    loop {
        let id = outcome.pipeline_id.clone();
        match &outcome.status {
            RunStatus::Waiting { node, reason } if interactive => {
                show_stages(out, &outcome.state);
                match ask(reason)? {
                    Some(yes) => outcome = p.resume(&id, Some(yes), drive(ctx, out))?,
                    None => {
                        out.note(format!("pipeline {id} waits at {node}"));
                        return Ok(EXIT_WAITING);
                    }
                }
            }
            RunStatus::Waiting { node, reason } => {
                if out.json {
                    outcome_line(&outcome)?;
                } else {
                    out.line(format!("pipeline {id} waits at {node}: {reason}"));
                    out.note(format!(
                        "answer with `{} resume {id} --approve` or `--reject`",
                        command_name(commitly)
                    ));
                }
                return Ok(EXIT_WAITING);
            }
            RunStatus::Succeeded => {
                if out.json {
                    outcome_line(&outcome)?;
                } else {
                    let s = &outcome.state;
                    match s.results.sync.as_ref().and_then(|r| r.pushed_sha.as_deref()) {
                        Some(sha) => out.line(format!(
                            "pipeline {id} succeeded: pushed {} to {}/{}",
                            &sha[..sha.len().min(12)],
                            s.git_remote,
                            s.target_branch
                        )),
                        None => out.line(format!("pipeline {id} succeeded")),
                    }
                }
                return Ok(0);
            }
            RunStatus::Failed { code, message } => {
                if out.json {
                    outcome_line(&outcome)?;
                } else if let Some(e) = &outcome.state.error {
                    let back = e.rollback_branch.as_deref().unwrap_or("the remote branch");
                    out.note(format!("the hub was rolled back to {back}; your working tree and the remote are unchanged"));
                }
                let code = ErrorCode::ALL
                    .iter()
                    .copied()
                    .find(|c| c.as_str() == code)
                    .unwrap_or(ErrorCode::StageFailed);
                return Err(pipeline::Error::Failed {
                    pipeline_id: id,
                    stage: outcome
                        .state
                        .error
                        .as_ref()
                        .map_or_else(|| "?".into(), |e| e.failed_stage.clone()),
                    code,
                    message: message.clone(),
                }
                .into());
            }
            RunStatus::Cancelled => {
                out.line(format!("pipeline {id} cancelled"));
                return Ok(130);
            }
            other => {
                out.line(format!("pipeline {id}: {}", other.name()));
                return Ok(0);
            }
        }
    }
}

/// With `--json`, the last line after the events: `{"outcome": {pipelineId,
/// status, state}}` (JSON Lines, like the events).
fn outcome_line(o: &pipeline::Outcome) -> Result<()> {
    let line =
        json!({"outcome": {"pipelineId": o.pipeline_id, "status": o.status, "state": o.state}});
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer(&mut stdout, &line)?;
    writeln!(stdout)?;
    Ok(())
}

fn ask(question: &str) -> Result<Option<bool>> {
    loop {
        eprint!("{question} (y/n, q to leave it waiting): ");
        std::io::stderr().flush()?;
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line)? == 0 {
            return Ok(None);
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Ok(Some(true)),
            "n" | "no" => return Ok(Some(false)),
            "q" | "quit" => return Ok(None),
            _ => {}
        }
    }
}

/// How the CLI drives a run: Ctrl-C, and events drawn as they come.
fn drive(ctx: &Ctx, out: &Output) -> pipeline::Drive {
    let json = out.json;
    let color = out.color_err();
    let sink: workflow::EventSink = Arc::new(move |ev: &RunEvent| {
        if json {
            let mut stdout = std::io::stdout().lock();
            if serde_json::to_writer(&mut stdout, ev).is_ok() {
                let _ = writeln!(stdout);
                let _ = stdout.flush();
            }
        } else if let Some(line) = render(ev, color) {
            eprintln!("{line}");
        }
    });
    pipeline::Drive { cancel: Some(ctx.cancel.clone()), sink: Some(sink), ..Default::default() }
}

/// One line for the events a person follows (seed §9.2's `[CodeAgent] ✓ ...`).
fn render(ev: &RunEvent, color: bool) -> Option<String> {
    let style = console::Style::new().force_styling(color);
    Some(match &ev.kind {
        RunEventKind::StageFinished { stage, status, summary } => {
            let mark = match status {
                StageStatus::Success => style.clone().green().apply_to("✓"),
                StageStatus::Skipped => style.clone().dim().apply_to("–"),
                _ => style.clone().red().apply_to("✗"),
            };
            format!("[{}] {mark} {}", agent_label(stage), stdx::clip(summary, 2000))
        }
        RunEventKind::StageApproval { stage, approved, by } => format!(
            "[{}] {} by {by}",
            agent_label(stage),
            if *approved { "approved" } else { "rejected" }
        ),
        RunEventKind::RolledBack { failed_stage, code, rollback_branch } => format!(
            "[{}] rolled back [{code}] to {}",
            agent_label(failed_stage),
            rollback_branch.as_deref().unwrap_or("the remote branch")
        ),
        RunEventKind::RunResumed { node, .. } => format!("resumed at {node}"),
        _ => return None,
    })
}

/// `code` → `CodeAgent` (the seed's names on screen).
fn agent_label(stage: &str) -> &'static str {
    match stage {
        "clone" => "CloneAgent",
        "code" => "CodeAgent",
        "test" => "TestAgent",
        "refactor" => "RefactoringAgent",
        "sync" => "SyncAgent",
        "notify" => "SlackAgent",
        _ => "Pipeline",
    }
}

fn show_stages(out: &Output, s: &PipelineState) {
    for stage in protocol::stages::ALL {
        let status = s.stage_status.get(stage).copied().unwrap_or_default();
        let branch = s.branches.get(stage).map(|b| format!("  {b}")).unwrap_or_default();
        out.line(format!(
            "  {:<17} {}{branch}",
            agent_label(stage),
            format!("{status:?}").to_lowercase()
        ));
    }
}

fn show(out: &Output, p: &pipeline::Pipeline, id: &str) -> Result<i32> {
    let (summary, meta, state) = p.show(id)?.ok_or_else(|| not_found(id))?;
    if out.json {
        out.json(&json!({"run": summary, "checkpoint": meta, "state": state}))?;
        return Ok(0);
    }
    out.line(format!("pipeline:  {}", state.pipeline_id));
    out.line(format!(
        "commit:    {} ({})",
        state.commit_message,
        &state.local_head[..state.local_head.len().min(12)]
    ));
    let at = if meta.node == workflow::END { String::new() } else { format!(" at {}", meta.node) };
    out.line(format!("status:    {}{at}", summary.status.name()));
    if let RunStatus::Waiting { reason, .. } = &summary.status {
        out.line(format!("waiting:   {reason}"));
    }
    out.line(format!(
        "branch:    {} → {}/{}",
        state.current_branch, state.git_remote, state.target_branch
    ));
    out.line(format!("hub:       {}", state.hub_path));
    out.line("stages:");
    show_stages(out, &state);
    if let Some(e) = &state.error {
        out.line(format!(
            "failed:    {} [{}]: {}",
            e.failed_stage,
            e.code,
            stdx::clip(&e.message, 2000)
        ));
    }
    out.line("results:");
    let results = serde_json::to_string_pretty(&state.results)?;
    for line in results.lines() {
        out.line(format!("  {line}"));
    }
    Ok(0)
}

/// `init`: the configuration (written when it has no `pipeline:` section), the
/// state directories and the hub clone.
fn init(ctx: &Ctx, out: &Output, args: &InitArgs, commitly: bool) -> Result<i32> {
    let state_dir = ctx.root.join(state_name(commitly));
    std::fs::create_dir_all(&state_dir)
        .with_context(|| format!("creating {}", state_dir.display()))?;
    let ignore = state_dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(&ignore, "*\n").with_context(|| format!("writing {}", ignore.display()))?;
    }
    let file = state_dir.join("config.yaml");
    let existing = if commitly {
        commitly_host(ctx)?
    } else {
        host::Host::load(&ctx.root, ctx.host.env().clone())?
    };
    let has_section = !existing.config().section::<serde_json::Value>("pipeline")?.is_null();
    if !has_section {
        let mut text = std::fs::read_to_string(&file).unwrap_or_default();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&if commitly { seed_template(ctx, args) } else { template(ctx, args) });
        std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
    } else if args.exec.is_some() || args.test.is_some() || args.hub.is_some() {
        out.warn(format!(
            "{} has a pipeline: section already; edit it there (the flags were not applied)",
            file.display()
        ));
    }
    let config = hook_config(ctx, commitly)?;
    let layout = layout_of(ctx, &config, commitly);
    let done = pipeline::init(&layout, &config)?;
    if out.json {
        out.json(&json!({
            "hub": done.hub,
            "created": done.created,
            "remote": done.remote_url,
            "branch": done.branch,
            "config": file,
            "configWritten": !has_section,
        }))?;
        return Ok(0);
    }
    if has_section {
        out.line(format!("config: {} (pipeline: section exists, kept)", file.display()));
    } else {
        out.line(format!("config: {} (pipeline: section written)", file.display()));
    }
    if done.created {
        out.line(format!("hub:    {} (cloned from {})", done.hub.display(), done.remote_url));
    } else {
        out.line(format!("hub:    {} exists; nothing to do", done.hub.display()));
    }
    Ok(0)
}

fn yaml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The `pipeline:` section `init` writes (seed §10.1's fields, camelCase).
fn template(ctx: &Ctx, a: &InitArgs) -> String {
    let project =
        ctx.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let opt = |v: &Option<String>, key: &str, indent: &str| match v {
        Some(v) => format!("{indent}{key}: {}\n", yaml_string(v)),
        None => format!("{indent}# {key}: \n"),
    };
    let mut t = String::from("# The commit pipeline (`ironbees pipeline --help`).\npipeline:\n");
    t.push_str(&format!("  projectName: {}\n", yaml_string(&project)));
    t.push_str("  # projectLanguage: python\n");
    if let Some(h) = &a.hub {
        t.push_str(&format!("  hubPath: {}\n", yaml_string(&h.display().to_string())));
    }
    t.push_str("  execution:\n");
    t.push_str(&opt(&a.exec, "command", "    "));
    t.push_str("    timeout: 300      # seconds\n    maxMemory: 2048   # MB\n");
    t.push_str("  lint: []            # linters before the execution command\n");
    t.push_str(&opt(&a.test, "testCommand", "  "));
    t.push_str("  database: {}        # url: ${DATABASE_URL}, the test database of the SQL step\n");
    t.push_str(
        "  # (optional: runs: 5, minImprovement: 10, migrationsDir: migrations, maxQueries: 10)\n",
    );
    t.push_str("  git:\n");
    t.push_str(&opt(&a.remote, "remote", "    "));
    t.push_str(&opt(&a.branch, "branch", "    "));
    t.push_str("    autoCleanupBranches: true\n");
    t.push_str("  llm:\n    enabled: false     # SQL candidates and refactoring with the model of `llm:`\n");
    t.push_str("  slack: {}           # token: ${SLACK_TOKEN} + channelId: C123, or webhookUrl: ${SLACK_WEBHOOK_URL}\n");
    t.push_str("  logging:\n    retentionDays: 30\n    cleanupHubOnFailure: false\n");
    t.push_str("  refactoring:\n    rules: []\n    # rulesFile: config/refactoring_rules.yaml\n");
    t.push_str(&format!("  autoApprove: {}\n", a.auto_approve));
    t.push_str(
        "  onAgentApply: false # commit what `ironbees run` applies and run the pipeline on it\n",
    );
    t
}

/// The `.commitly/config.yaml` `commitly init` writes: seed §10.1's layout
/// (snake_case at the top level), read back by `pipeline::from_seed_layout`.
fn seed_template(ctx: &Ctx, a: &InitArgs) -> String {
    let project =
        ctx.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let opt = |v: &Option<String>, key: &str, indent: &str| match v {
        Some(v) => format!("{indent}{key}: {}\n", yaml_string(v)),
        None => format!("{indent}# {key}: \n"),
    };
    let mut t = String::from("# Commitly (seed 003 §10.1; `commitly --help`).\n");
    t.push_str(&format!("project_name: {}\n", yaml_string(&project)));
    t.push_str("# project_language: python\n");
    if let Some(h) = &a.hub {
        t.push_str(&format!("hub_path: {}\n", yaml_string(&h.display().to_string())));
    }
    t.push_str("execution:\n");
    t.push_str(&opt(&a.exec, "command", "  "));
    t.push_str("  timeout: 300      # seconds\n  max_memory: 2048  # MB\n");
    t.push_str(&opt(&a.test, "test_command", ""));
    t.push_str(
        "# database:        # the PostgreSQL test database of the SQL step\n\
         #   type: postgresql\n#   host: localhost\n#   port: 5432\n#   user: dev_user\n\
         #   password: \"${DB_PASSWORD}\"   # from the environment or .env\n#   dbname: test_db\n",
    );
    t.push_str("git:\n");
    t.push_str(&opt(&a.remote, "remote", "  "));
    t.push_str(&opt(&a.branch, "branch", "  "));
    t.push_str("  auto_cleanup_branches: true\n");
    t.push_str(
        "# llm:             # SQL candidates and refactoring\n#   provider: openai\n\
         #   model: gpt-4o\n#   api_key: \"${OPENAI_API_KEY}\"\n",
    );
    t.push_str(
        "# slack:\n#   token: \"${SLACK_TOKEN}\"\n#   channel_id: C1234567890\n\
         #   enable_notifications: true\n",
    );
    t.push_str("logging:\n  retention_days: 30\n  cleanup_hub_on_failure: false\n");
    t.push_str(
        "refactoring:\n  enable_duplicate_removal: true\n  enable_exception_handling: true\n\
         \x20 # rules_file: config/refactoring_rules.yaml\n",
    );
    t.push_str(&format!("auto_approve: {}\n", a.auto_approve));
    t.push_str(
        "on_agent_apply: false  # commit what an agent run applies and run the pipeline on it\n",
    );
    t
}

/// `report`: seed §8.2 over the stored pipelines; written under `report/` and
/// printed.
pub fn report(ctx: &Ctx, out: &Output, args: &ReportArgs, commitly: bool) -> Result<i32> {
    let json = out.json || args.format.eq_ignore_ascii_case("json");
    if !json && !["markdown", "md"].contains(&args.format.to_ascii_lowercase().as_str()) {
        return Err(cli_error(
            ErrorCode::InvalidArgument,
            format!("--format {}: say markdown or json", args.format),
        ));
    }
    let filter = pipeline::ReportFilter {
        from: args.from.clone(),
        to: args.to.clone(),
        issue: args.issue.clone(),
    };
    filter.validate()?;
    let p = open(ctx, out, commitly, false)?;
    let r = pipeline::report(&p.all()?, &filter);
    let today = stdx::utc_date(stdx::now_ms() / 1000);
    let (ext, text) = if json {
        ("json", serde_json::to_string_pretty(&r)?)
    } else {
        ("md", pipeline::render_markdown(&r))
    };
    let dir = p.layout().report_dir();
    let path = dir.join(pipeline::report_file_name(&r, &today, ext));
    write_report(&dir, &path, &text)?;
    out.line(text.trim_end());
    if !out.json {
        out.note(format!("written to {}", path.display()));
    }
    Ok(0)
}

fn write_report(dir: &Path, path: &Path, text: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
