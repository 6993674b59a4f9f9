//! The pillars from the command line: `understand`, `navigate`, `read`, `write`,
//! `manage`, and `mcp` (the same pillars over MCP stdio). Every command prints
//! the pillar's answer as JSON with `--json`, else as text for people, with the
//! guidance's next actions at the end.

use anyhow::Result;
use protocol::{
    Depth, Guidance, LineRange, ManageCommand, ManageRequest, NavigateAction, NavigateRequest,
    ReadRequest, ReadView, RebuildScope, UnderstandInclude, UnderstandRequest, WriteRequest,
};

use super::{
    Ctx,
    session::{open_session, user_path, with_call},
};
use crate::{exit::cli_error, output::Output};

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
    let session = open_session(ctx, out, false)?;
    let depth = match args.depth.as_str() {
        "shallow" => Depth::Shallow,
        "deep" => Depth::Deep,
        _ => Depth::Standard,
    };
    let include = UnderstandInclude { skeleton: !args.no_skeleton, ..Default::default() };
    let req =
        UnderstandRequest { target: args.target.clone(), depth, include, budget: args.budget };
    let r = with_call(ctx, out, |call| session.understand(&req, call))?;
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
    /// definition, references (the default: with the definition, "where is it and who
    /// uses it"), callers, callees, implementations or hierarchy; then the target.
    #[arg(value_name = "ACTION")]
    pub first: String,
    /// A symbol (`Server.start`, `parse`) or `path:line`.
    #[arg(value_name = "TARGET")]
    pub second: Option<String>,
    /// Levels for callers, callees and hierarchy.
    #[arg(long)]
    pub depth: Option<u32>,
    #[arg(long, short = 'n')]
    pub limit: Option<u32>,
    /// Only definitions in this file or directory.
    #[arg(long)]
    pub path: Option<String>,
}

pub const NAVIGATE_HELP: &str = "\
Examples:
  ironbees navigate Server.start                 the definition and its references
  ironbees navigate callers Server.start --depth 2
  ironbees navigate definition src/app.py:42     what is defined at that line";

pub fn navigate(ctx: &Ctx, out: &Output, args: &NavigateArgs) -> Result<i32> {
    // `navigate TARGET` or `navigate ACTION TARGET`.
    let (action, target) = match &args.second {
        None => (NavigateAction::References, args.first.clone()),
        Some(target) => {
            let action = match args.first.as_str() {
                "definition" => NavigateAction::Definition,
                "references" => NavigateAction::References,
                "callers" => NavigateAction::Callers,
                "callees" => NavigateAction::Callees,
                "implementations" => NavigateAction::Implementations,
                "hierarchy" => NavigateAction::Hierarchy,
                other => {
                    return Err(cli_error(
                        protocol::ErrorCode::InvalidArgument,
                        format!(
                            "unknown action {other:?}: definition, references, callers, callees, \
                             implementations or hierarchy"
                        ),
                    ));
                }
            };
            (action, target.clone())
        }
    };
    let session = open_session(ctx, out, false)?;
    let req = NavigateRequest {
        action,
        target,
        depth: args.depth,
        limit: args.limit,
        path: args.path.clone(),
    };
    let r = with_call(ctx, out, |call| session.navigate(&req, call))?;
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
    let session = open_session(ctx, out, false)?;
    let target = user_path(ctx, &args.file);
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
    let r = with_call(ctx, out, |call| session.read(&req, call))?;
    if out.json {
        out.json(&r)?;
        return Ok(0);
    }
    print!("{}", r.content);
    if !r.content.ends_with('\n') && !r.content.is_empty() {
        println!();
    }
    let dim = out.style_err().dim();
    if r.unchanged {
        // Nothing on stdout, as `git diff`; say why on the terminal.
        let against = args.diff.as_deref().unwrap_or("HEAD");
        eprintln!("{} is unchanged since {against}", r.path);
    }
    eprintln!("{}", dim.apply_to(format!("{} lines, sha256 {}", r.lines, r.hash)));
    for w in &r.guidance.warnings {
        out.warn(&w.message);
    }
    Ok(0)
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
    let session = open_session(ctx, out, false)?;
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
        path: user_path(ctx, &args.path),
        content: args.content.clone(),
        template: args.template.clone(),
        from: args.from.as_ref().map(|f| user_path(ctx, f)),
        variables,
        overwrite: args.overwrite,
        dry_run: args.dry_run,
        description: None,
    };
    let r = with_call(ctx, out, |call| session.write(&req, call)).map_err(|e| {
        // The engine's hint names the request field; here it is a flag (24.15).
        let info = crate::exit::error_info(&e);
        if info.code == protocol::ErrorCode::AlreadyExists {
            let message = info.message.replace("set `overwrite`", "pass --overwrite");
            return cli_error(info.code, message);
        }
        e
    })?;
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
    let session = open_session(ctx, out, false)?;
    let req = ManageRequest {
        command,
        id: args.id.clone(),
        scope: args.full.then_some(RebuildScope::Full),
        limit: None,
        targets: args.targets.clone(),
        dry_run: args.dry_run,
    };
    let r = with_call(ctx, out, |call| session.manage(&req, call))?;
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
    /// Also serve the tools of the MCP servers configured under `mcp.servers`
    /// (as SERVER.TOOL), which this process starts and ends.
    #[arg(long)]
    pub reexport: bool,
}

pub const MCP_HELP: &str = "\
Serves every ironbees operation as an MCP tool on stdin/stdout — the six pillars
(understand, change, navigate, read, write, manage), localize, search, repomap,
graph, impact, hotspots, report, undo/redo/history, build, test, exec, and the
superseded low-level tools — for the project at -C DIR (or the current directory). Register it with a client, e.g.:
  claude mcp add ironbees -- ironbees mcp -C /path/to/repo
  codex mcp add ironbees -- ironbees mcp -C /path/to/repo
With --reexport, the tools of the MCP servers configured under `mcp.servers` are
served beside them as SERVER.TOOL (this process starts the servers and ends them).
Logs go to stderr (IRONBEES_LOG=debug); stdout carries only the protocol.";

pub fn mcp(ctx: &Ctx, out: &Output, args: &McpArgs) -> Result<i32> {
    let session = open_session(ctx, out, !args.no_watch)?;
    let tools = if args.reexport { super::tool::tools(ctx, out)? } else { host::Tools::builtin() };
    let server = mcp::Server::with_registry(session, tools.registry.clone());
    let rt = super::runtime()?;
    let cancel = ctx.cancel.clone();
    let served = rt.block_on(async move {
        tokio::select! {
            r = mcp::serve_stdio_with(server) => r.map_err(anyhow::Error::from),
            () = cancel.cancelled() => Ok(()),
        }
    });
    tools.shutdown();
    served?;
    Ok(0)
}
