//! The pillars from the command line: `understand`, `navigate`, `read`, `write`,
//! `manage`, and `mcp` (the same pillars over MCP stdio). Every command prints
//! the pillar's answer as JSON with `--json`, else as text for people, with the
//! guidance's next actions at the end.

use std::{path::Path, time::Duration};

use anyhow::{Context, Result};
use pillars::{Call, SandboxSetup, Workspace, WorkspaceOptions};
use protocol::{
    Depth, Guidance, LineRange, ManageCommand, ManageRequest, NavigateAction, NavigateRequest,
    ReadRequest, ReadView, RebuildScope, UnderstandInclude, UnderstandRequest, WriteRequest,
};

use super::{
    Ctx,
    change::EditSection,
    exec::{SandboxArgs, command_env, policy},
    index::{Bar, index_config},
};
use crate::{exit::cli_error, output::Output};

/// Opens the workspace with the configured index, edit and sandbox settings.
pub fn open_workspace(ctx: &Ctx, out: &Output, watch: bool) -> Result<Workspace> {
    let section: EditSection = ctx.config.section("edit")?;
    let d = edit::EngineOptions::default();
    let edit = edit::EngineOptions {
        max_file_size: section.max_file_size.unwrap_or(d.max_file_size),
        history_limit: section.history_limit.unwrap_or(d.history_limit),
        history_max_bytes: section.history_max_bytes.unwrap_or(d.history_max_bytes),
        lock_timeout: section.lock_timeout_secs.map_or(d.lock_timeout, Duration::from_secs),
    };
    let sandbox_args = SandboxArgs {
        timeout: None,
        memory: None,
        cpu: None,
        processes: None,
        network: None,
        writable: vec![],
        hide: vec![],
        throwaway: false,
        workspace: None,
        backend: None,
        image: None,
        strict: false,
        max_output: None,
    };
    let sandbox = match policy(ctx, &sandbox_args) {
        Ok(policy) => {
            let helper = std::env::current_exe().context("locating the ironbees binary")?;
            let (env, env_removed) = command_env();
            Some(SandboxSetup {
                config: sandbox::SandboxConfig {
                    helper,
                    home: std::env::var_os("HOME").map(std::path::PathBuf::from),
                    temp_dir: std::env::temp_dir(),
                    search_path: std::env::var_os("PATH"),
                    probe_container: false,
                    probe_bubblewrap: false,
                    probe_cache: None,
                },
                policy,
                env,
                env_removed,
            })
        }
        Err(e) => {
            out.warn(format!("sandbox settings are invalid, tests cannot run: {e:#}"));
            None
        }
    };
    let options = WorkspaceOptions { index: index_config(ctx, &[], None)?, edit, watch, sandbox };
    let ws = Workspace::open(&ctx.root, options)?;
    for id in &ws.recovery().rolled_back {
        out.warn(format!("an interrupted edit ({id}) was rolled back; its files are as before it"));
    }
    Ok(ws)
}

/// Runs one pillar call with a progress bar on a terminal and Ctrl-C wired in.
fn with_call<T>(
    ctx: &Ctx,
    out: &Output,
    f: impl FnOnce(&Call<'_>) -> pillars::Result<T>,
) -> Result<T> {
    let bar = Bar::new(out);
    let call = Call::new(&bar, &ctx.cancel);
    let r = f(&call);
    bar.finish();
    Ok(r?)
}

fn print_guidance(out: &Output, g: &Guidance) {
    let dim = out.style_out().dim();
    for w in &g.warnings {
        out.warn(format!("[{}] {}", w.code, w.message));
    }
    if !g.next_actions.is_empty() {
        out.line(dim.apply_to("next:").to_string());
        for a in &g.next_actions {
            out.line(format!(
                "  {} {}",
                a.description,
                dim.apply_to(format!("({} {})", a.tool, a.arguments))
            ));
        }
    }
}

// --- understand ----------------------------------------------------------------------

#[derive(Debug, clap::Args)]
pub struct UnderstandArgs {
    /// A file or directory, a symbol (`Server.start`), or a question.
    pub target: String,
    /// shallow, standard or deep.
    #[arg(long, default_value = "standard", value_parser = ["shallow", "standard", "deep"])]
    pub depth: String,
    /// Most tokens the answer may take.
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<u32>,
    /// Leave out the skeleton.
    #[arg(long)]
    pub no_skeleton: bool,
}

pub const UNDERSTAND_HELP: &str = "\
Examples:
  ironbees understand src/app.py          skeleton, symbols, dependencies, calls, rank, impact, report
  ironbees understand Server.start        definition, callers, callees, references, impact, tests
  ironbees understand 'how are sessions expired?' --json";

pub fn understand(ctx: &Ctx, out: &Output, args: &UnderstandArgs) -> Result<i32> {
    let mut ws = open_workspace(ctx, out, false)?;
    let depth = match args.depth.as_str() {
        "shallow" => Depth::Shallow,
        "deep" => Depth::Deep,
        _ => Depth::Standard,
    };
    let include = UnderstandInclude { skeleton: !args.no_skeleton, ..Default::default() };
    let req =
        UnderstandRequest { target: args.target.clone(), depth, include, budget: args.budget };
    let r = with_call(ctx, out, |call| ws.understand(&req, call))?;
    if out.json {
        out.json(&r)?;
        return Ok(0);
    }
    let bold = out.style_out().bold();
    let dim = out.style_out().dim();
    out.line(bold.apply_to(&r.guidance.context_summary).to_string());
    for q in &r.ranked {
        out.line(format!("  {} {}", q.path, dim.apply_to(q.evidence.join("; "))));
    }
    for s in &r.symbols {
        let b = &s.symbol;
        out.line(format!(
            "\n{} {} {}:{}-{}",
            bold.apply_to(&b.qualified_name),
            b.kind,
            b.path,
            b.line,
            b.end_line
        ));
        if !b.signature.is_empty() {
            out.line(format!("  {}", b.signature.lines().next().unwrap_or("")));
        }
        for c in s.callers.iter().take(15) {
            out.line(format!(
                "  {} {} ({}:{}){}",
                dim.apply_to("caller"),
                c.caller,
                c.path,
                c.line,
                if c.distance > 1 { format!(" [distance {}]", c.distance) } else { String::new() }
            ));
        }
        for c in s.callees.iter().take(15) {
            out.line(format!("  {} {} ({}:{})", dim.apply_to("callee"), c.callee, c.path, c.line));
        }
        if let Some(i) = &s.impact {
            out.line(format!(
                "  impact: {} file(s), tests: {}",
                i.transitive,
                if i.tests.is_empty() { "none".into() } else { i.tests.join(", ") }
            ));
        }
    }
    for f in &r.files {
        out.line(format!(
            "\n{} {} ({} lines, hash {})",
            bold.apply_to(&f.path),
            f.language,
            f.lines,
            &f.hash[..12.min(f.hash.len())]
        ));
        if let Some(sk) = &f.skeleton {
            out.line(sk.trim_end());
        }
        if !f.dependencies.is_empty() {
            out.line(format!(
                "  depends on: {}",
                f.dependencies
                    .iter()
                    .take(8)
                    .map(|d| d.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !f.dependents.is_empty() {
            out.line(format!(
                "  used by: {}",
                f.dependents.iter().take(8).map(|d| d.path.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        if let Some(rep) = &f.report {
            let c = &rep.complexity;
            out.line(
                format!(
                    "  role: {:?}; {} symbols, {} branches, fan-in {}, fan-out {}",
                    rep.architectural_role, c.symbols, c.branches, c.fan_in, c.fan_out
                )
                .to_lowercase(),
            );
            for risk in &rep.risks {
                out.line(format!("  risk [{:?}] {}: {}", risk.level, risk.code, risk.message));
            }
            for rec in &rep.recommendations {
                out.line(format!("  - {rec}"));
            }
        }
    }
    print_guidance(out, &r.guidance);
    Ok(0)
}

// --- navigate ------------------------------------------------------------------------

#[derive(Debug, clap::Args)]
pub struct NavigateArgs {
    /// definition, references, callers, callees, implementations or hierarchy.
    #[arg(value_parser = ["definition", "references", "callers", "callees", "implementations", "hierarchy"])]
    pub action: String,
    /// A symbol (`Server.start`, `parse`) or `path:line`.
    pub target: String,
    /// Levels for callers, callees and hierarchy.
    #[arg(long)]
    pub depth: Option<u32>,
    #[arg(long, short = 'n')]
    pub limit: Option<u32>,
    /// Only definitions in this file or directory.
    #[arg(long)]
    pub path: Option<String>,
}

pub fn navigate(ctx: &Ctx, out: &Output, args: &NavigateArgs) -> Result<i32> {
    let action = match args.action.as_str() {
        "definition" => NavigateAction::Definition,
        "references" => NavigateAction::References,
        "callers" => NavigateAction::Callers,
        "callees" => NavigateAction::Callees,
        "implementations" => NavigateAction::Implementations,
        _ => NavigateAction::Hierarchy,
    };
    let mut ws = open_workspace(ctx, out, false)?;
    let req = NavigateRequest {
        action,
        target: args.target.clone(),
        depth: args.depth,
        limit: args.limit,
        path: args.path.clone(),
    };
    let r = with_call(ctx, out, |call| ws.navigate(&req, call))?;
    if out.json {
        out.json(&r)?;
        return Ok(0);
    }
    let dim = out.style_out().dim();
    for l in &r.results {
        let mut line = format!("{}:{}", l.path, l.line);
        if let Some(q) = &l.qualified_name {
            line.push_str(&format!("  {q}"));
        }
        if let Some(d) = l.distance.filter(|d| *d > 1) {
            line.push_str(&format!("  [distance {d}]"));
        }
        // Callers and callees matched by name only (see the summary).
        if matches!(l.relation.as_deref(), Some("ambiguous" | "name_only")) {
            line.push_str("  [guess]");
        }
        if let Some(t) = &l.text {
            line.push_str(&format!("  {}", dim.apply_to(t.lines().next().unwrap_or(""))));
        }
        out.line(line);
    }
    eprintln!("{}", dim.apply_to(&r.guidance.context_summary));
    Ok(if r.results.is_empty() { 3 } else { 0 })
}

// --- read ------------------------------------------------------------------------------

#[derive(Debug, clap::Args)]
pub struct ReadArgs {
    /// The file (relative to the current directory).
    pub file: std::path::PathBuf,
    /// Signatures and first doc lines with line numbers, bodies elided.
    #[arg(long, conflicts_with_all = ["lines", "symbol", "diff"])]
    pub skeleton: bool,
    /// Only lines A-B.
    #[arg(long, value_name = "A-B")]
    pub lines: Option<String>,
    /// Only this definition.
    #[arg(long, value_name = "NAME")]
    pub symbol: Option<String>,
    /// The diff against an edit transaction id (or HEAD).
    #[arg(long, value_name = "HEAD|TXID", num_args = 0..=1, default_missing_value = "HEAD")]
    pub diff: Option<String>,
}

pub fn read(ctx: &Ctx, out: &Output, args: &ReadArgs) -> Result<i32> {
    let mut ws = open_workspace(ctx, out, false)?;
    let target = relative(ctx, &args.file);
    let line_range = match &args.lines {
        Some(l) => Some(
            LineRange::parse(l).map_err(|e| cli_error(protocol::ErrorCode::InvalidArgument, e))?,
        ),
        None => None,
    };
    let view = if args.skeleton {
        Some(ReadView::Skeleton)
    } else if args.diff.is_some() {
        Some(ReadView::Diff)
    } else {
        None
    };
    let req = ReadRequest {
        target,
        view,
        line_range,
        symbol: args.symbol.clone(),
        against: args.diff.clone(),
    };
    let r = with_call(ctx, out, |call| ws.read(&req, call))?;
    if out.json {
        out.json(&r)?;
        return Ok(0);
    }
    print!("{}", r.content);
    if !r.content.ends_with('\n') && !r.content.is_empty() {
        println!();
    }
    let dim = out.style_err().dim();
    eprintln!("{}", dim.apply_to(format!("{} lines, sha256 {}", r.lines, r.hash)));
    for w in &r.guidance.warnings {
        out.warn(&w.message);
    }
    Ok(0)
}

fn relative(ctx: &Ctx, file: &Path) -> String {
    let abs = if file.is_absolute() { file.to_owned() } else { ctx.cwd.join(file) };
    abs.display().to_string()
}

// --- write ------------------------------------------------------------------------------

#[derive(Debug, clap::Args)]
pub struct WriteArgs {
    /// The file to create (relative to the current directory).
    pub path: std::path::PathBuf,
    /// The content.
    #[arg(long, conflicts_with_all = ["template", "from"])]
    pub content: Option<String>,
    /// A built-in template: module, test, class.
    #[arg(long, conflicts_with = "from")]
    pub template: Option<String>,
    /// An existing file to copy with its name replaced.
    #[arg(long, value_name = "FILE")]
    pub from: Option<std::path::PathBuf>,
    /// A template variable (repeatable).
    #[arg(long = "var", value_name = "KEY=VALUE")]
    pub vars: Vec<String>,
    #[arg(long)]
    pub overwrite: bool,
    #[arg(long)]
    pub dry_run: bool,
}

pub fn write(ctx: &Ctx, out: &Output, args: &WriteArgs) -> Result<i32> {
    let mut ws = open_workspace(ctx, out, false)?;
    let mut variables = std::collections::BTreeMap::new();
    for v in &args.vars {
        let (k, val) = v.split_once('=').ok_or_else(|| {
            cli_error(
                protocol::ErrorCode::InvalidArgument,
                format!("--var takes KEY=VALUE, not {v:?}"),
            )
        })?;
        variables.insert(k.to_owned(), val.to_owned());
    }
    let req = WriteRequest {
        path: relative(ctx, &args.path),
        content: args.content.clone(),
        template: args.template.clone(),
        from: args.from.as_ref().map(|f| relative(ctx, f)),
        variables,
        overwrite: args.overwrite,
        dry_run: args.dry_run,
        description: None,
    };
    let r = with_call(ctx, out, |call| ws.write(&req, call))?;
    if out.json {
        out.json(&r)?;
        return Ok(0);
    }
    super::change::print_result(out, &r.edit_result, "write");
    Ok(0)
}

// --- manage -----------------------------------------------------------------------------

#[derive(Debug, clap::Args)]
pub struct ManageArgs {
    /// status, undo, redo, history, rebuild or test.
    #[arg(value_parser = ["status", "undo", "redo", "history", "rebuild", "test"])]
    pub command: String,
    /// undo/redo/history: a transaction id (a unique prefix works).
    #[arg(long)]
    pub id: Option<String>,
    /// rebuild: from scratch instead of incrementally.
    #[arg(long)]
    pub full: bool,
    /// test: only these test files or names.
    #[arg(long = "target", value_name = "TEST")]
    pub targets: Vec<String>,
    /// undo/redo: show what would change.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn manage(ctx: &Ctx, out: &Output, args: &ManageArgs) -> Result<i32> {
    let command = match args.command.as_str() {
        "status" => ManageCommand::Status,
        "undo" => ManageCommand::Undo,
        "redo" => ManageCommand::Redo,
        "history" => ManageCommand::History,
        "rebuild" => ManageCommand::Rebuild,
        _ => ManageCommand::Test,
    };
    let mut ws = open_workspace(ctx, out, false)?;
    let req = ManageRequest {
        command,
        id: args.id.clone(),
        scope: args.full.then_some(RebuildScope::Full),
        limit: None,
        targets: args.targets.clone(),
        dry_run: args.dry_run,
    };
    let r = with_call(ctx, out, |call| ws.manage(&req, call))?;
    if out.json {
        out.json(&r)?;
    } else {
        if let Some(e) = &r.edit_result {
            super::change::print_result(out, e, command.as_str());
        }
        for t in &r.history {
            out.line(format!(
                "{}  {:?}  {}  [{}]",
                t.id,
                t.state,
                t.description,
                t.files.join(", ")
            ));
        }
        if let Some(t) = &r.test {
            for f in &t.failures {
                out.line(format!("FAIL {}", f.name));
            }
        }
        out.line(&r.guidance.context_summary);
        print_guidance(out, &r.guidance);
    }
    Ok(match &r.test {
        Some(t) if !t.success => 1,
        _ => 0,
    })
}

// --- mcp ----------------------------------------------------------------------------------

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Don't watch the tree for changes; check the files on every call instead.
    #[arg(long)]
    pub no_watch: bool,
}

pub const MCP_HELP: &str = "\
Serves the six pillars (understand, change, navigate, read, write, manage) and the
superseded low-level tools over MCP on stdin/stdout, for the project at -C DIR (or
the current directory). Register it with a client, e.g.:
  claude mcp add ironbees -- ironbees mcp -C /path/to/repo
  codex mcp add ironbees -- ironbees mcp -C /path/to/repo
Logs go to stderr (IRONBEES_LOG=debug); stdout carries only the protocol.";

pub fn mcp(ctx: &Ctx, out: &Output, args: &McpArgs) -> Result<i32> {
    let ws = open_workspace(ctx, out, !args.no_watch)?;
    let rt = super::runtime()?;
    let cancel = std::sync::Arc::clone(&ctx.cancel);
    rt.block_on(async move {
        let stop = async move {
            while !cancel.load(std::sync::atomic::Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        tokio::select! {
            r = mcp::serve_stdio(ws) => r.map_err(anyhow::Error::from),
            () = stop => Ok(()),
        }
    })?;
    Ok(0)
}
