//! One module per subcommand. Each exposes `XxxArgs` (clap) and `run`.

pub mod agents;
pub mod analysis;
pub mod ask;
pub mod build;
pub mod change;
pub mod config;
pub mod demo;
pub mod exec;
pub mod graph;
pub mod guard;
pub mod history;
pub mod hotspots;
pub mod impact;
pub mod index;
pub mod llm;
pub mod localize;
pub mod pillar;
pub mod pipeline;
pub mod repomap;
pub mod report;
pub mod route;
pub mod run;
pub mod search;
pub mod serve;
pub mod session;
pub mod skeleton;
pub mod status;
pub mod symbols;
pub mod test;
pub mod tool;

use std::path::PathBuf;

use anyhow::{Context, Result};
use engine::CancellationToken;

use crate::{Cli, Command, output::Output};

/// What every command needs: where it runs, the project root, the configuration
/// and environment (the host) and the cancellation token that Ctrl-C fires.
pub struct Ctx {
    /// The directory the command runs in (`-C DIR` or the current directory).
    pub cwd: PathBuf,
    pub root: PathBuf,
    pub host: host::Host,
    pub cancel: CancellationToken,
}

impl Ctx {
    fn new(cli: &Cli) -> Result<Ctx> {
        let cwd = match &cli.dir {
            Some(d) => {
                let base = std::env::current_dir().context("reading the current directory")?;
                base.join(d)
            }
            None => std::env::current_dir().context("reading the current directory")?,
        };
        let root = code_index::discover_root(&cwd)?;
        let host = host::Host::load(&root, host::Environment::capture())?;
        Ok(Ctx { cwd, root, host, cancel: install_ctrl_c() })
    }
}

/// First Ctrl-C: ask the running operation to stop at its next consistent point.
/// Second Ctrl-C: exit at once (every committed state on disk is consistent anyway).
fn install_ctrl_c() -> CancellationToken {
    let token = CancellationToken::new();
    let t = token.clone();
    // Fails only if a handler is already installed (tests calling twice); ignore.
    let _ = ctrlc::set_handler(move || {
        if t.is_cancelled() {
            // No destructor runs past this: the MCP servers' children go now.
            mcp_client::kill_all();
            std::process::exit(130);
        }
        t.cancel();
        eprintln!("\ninterrupted: finishing the current step (Ctrl-C again to quit now)");
    });
    token
}

/// A runtime for the async `llm` client. The CLI stays synchronous: commands that
/// talk to models wait on it from the main thread (the host's small
/// multi-threaded runtime, so a blocking agent node can wait on it too).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    host::Host::runtime().context("starting the async runtime")
}

/// Shows the host's notices: warnings and notes on stderr.
pub fn show_notices(out: &Output, notices: Vec<host::Notice>) {
    for n in notices {
        match n {
            host::Notice::Warning(w) => out.warn(w),
            host::Notice::Note(n) => out.note(n),
        }
    }
}

/// The token Ctrl-C fires (the model client awaits it, blocking code polls it).
pub fn cancel_token(ctx: &Ctx) -> CancellationToken {
    ctx.cancel.clone()
}

/// A model client for commands that chat (see `Host::chat_client`); its notes
/// go to stderr.
pub fn chat_client(
    ctx: &Ctx,
    out: &Output,
    rt: &tokio::runtime::Runtime,
    model: Option<&str>,
) -> Result<::llm::Llm> {
    let (llm, notices) = ctx.host.chat_client(rt.handle(), model, &ctx.cancel)?;
    show_notices(out, notices);
    Ok(llm)
}

/// Runs the parsed command and returns the exit code.
pub fn run(cli: &Cli, out: &Output) -> Result<i32> {
    let ctx = Ctx::new(cli);
    let mut telemetry = start_telemetry(ctx.as_ref().ok(), cli.log_format, out);
    let ctx = ctx?;
    let name = command_name(&cli.command);
    // One trace per command (`ironbees mcp` and `serve` run for hours: their
    // calls and runs are traces of their own).
    let span = if name == "mcp" || name == "serve" {
        tracing::Span::none()
    } else {
        tracing::info_span!(
            "command",
            otel.name = %format!("ironbees {name}"),
            ironbees.command = %name,
            ironbees.exit_code = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        )
    };
    let started = std::time::Instant::now();
    let result = span.in_scope(|| dispatch(&ctx, cli, out));
    let exit_code = match &result {
        Ok(code) => *code,
        Err(e) => {
            let info = crate::exit::error_info(e);
            span.record("error.type", info.code.as_str());
            span.record("otel.status_code", "ERROR");
            crate::exit::exit_code_of(&info)
        }
    };
    span.record("ironbees.exit_code", exit_code);
    // Commands by outcome (the exit code: 0 done, 10 waiting for a human, ...).
    tracing::event!(
        target: "ironbees::metrics",
        tracing::Level::TRACE,
        histogram.ironbees.command.duration = started.elapsed().as_secs_f64(),
        ironbees.command = %name,
        ironbees.exit_code = exit_code,
    );
    drop(span);
    for problem in telemetry.shutdown() {
        out.warn(format!("telemetry: {problem} (the command's result is not affected)"));
    }
    result
}

/// The variant's name in lowercase (`tools`, `run`): a span's name, never its
/// arguments.
fn command_name(c: &Command) -> String {
    let debug = format!("{c:?}");
    debug.split(['(', ' ', '{']).next().unwrap_or_default().to_ascii_lowercase()
}

/// Logs (`IRONBEES_LOG`, `--log-format json` or `IRONBEES_LOG_FORMAT=json`) and, when configured,
/// the OpenTelemetry export (`observability:` or `OTEL_EXPORTER_OTLP_*`). A bad
/// setting or an exporter that cannot be built is a warning, never an error.
fn start_telemetry(
    ctx: Option<&Ctx>,
    format: Option<crate::LogFormatArg>,
    out: &Output,
) -> telemetry::Guard {
    let filter = std::env::var("IRONBEES_LOG").ok().filter(|v| !v.is_empty());
    // The flag over the variable.
    let json = match format {
        Some(f) => f == crate::LogFormatArg::Json,
        None => std::env::var("IRONBEES_LOG_FORMAT").is_ok_and(|v| v.eq_ignore_ascii_case("json")),
    };
    let logs = telemetry::LogSettings {
        filter,
        format: if json { telemetry::LogFormat::Json } else { telemetry::LogFormat::Text },
        ansi: !json && std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    let settings = match ctx.map(|c| c.host.telemetry_settings()) {
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            out.warn(format!("telemetry off: {e}"));
            telemetry::Settings::default()
        }
        None => telemetry::Settings::default(),
    };
    match telemetry::init(&logs, &settings) {
        Ok(guard) => guard,
        Err(e) => {
            out.warn(format!("telemetry off: {e}"));
            telemetry::init(&logs, &telemetry::Settings::default()).unwrap_or_default()
        }
    }
}

fn dispatch(ctx: &Ctx, cli: &Cli, out: &Output) -> Result<i32> {
    // A killed multi-file edit is finished or rolled back before anything reads the
    // project: `status`, `index` or `search` must never see half a transaction.
    if ::edit::needs_recovery(&ctx.root) {
        change::open_engine(ctx, out)?;
    }
    match &cli.command {
        Command::Run(args) => run::run(ctx, out, args),
        Command::Demo(args) => demo::run(ctx, out, args),
        Command::Runs(c) => run::runs(ctx, out, c),
        Command::Pipeline(c) => pipeline::run(ctx, out, c, cli.commitly),
        Command::Commit(args) => pipeline::commit(ctx, out, args, cli.commitly),
        Command::Agents(c) => agents::run(ctx, out, c),
        Command::Index(args) => index::run(ctx, out, args),
        Command::Symbols(args) => symbols::run(ctx, out, args),
        Command::Skeleton(args) => skeleton::run(ctx, out, args),
        Command::Status(args) => status::run(ctx, out, args),
        Command::Localize(args) => localize::run(ctx, out, args),
        Command::Route(args) => route::run(ctx, out, args),
        Command::Search(args) => search::run(ctx, out, args),
        Command::Repomap(args) => repomap::run(ctx, out, args),
        Command::Graph(c) => graph::run(ctx, out, c),
        Command::Impact(args) => impact::run(ctx, out, args),
        Command::Hotspots(args) => hotspots::run(ctx, out, args),
        Command::Report(args) => report::run(ctx, out, args, cli.commitly),
        Command::Ask(args) => ask::run(ctx, out, args),
        Command::Llm(c) => llm::run(ctx, out, c),
        Command::Config(c) => config::run(ctx, out, c),
        Command::Guard(c) => guard::run(ctx, out, c),
        Command::Exec(args) => exec::run(ctx, out, args),
        Command::Build(args) => build::run(ctx, out, args),
        Command::Test(args) => test::run(ctx, out, args),
        Command::Change(args) => change::run(ctx, out, args),
        Command::Undo(args) => history::undo(ctx, out, args),
        Command::Redo(args) => history::redo(ctx, out, args),
        Command::History(args) => history::history(ctx, out, args),
        Command::Understand(args) => pillar::understand(ctx, out, args),
        Command::Navigate(args) => pillar::navigate(ctx, out, args),
        Command::Read(args) => pillar::read(ctx, out, args),
        Command::Write(args) => pillar::write(ctx, out, args),
        Command::Manage(args) => pillar::manage(ctx, out, args),
        Command::Mcp(args) => pillar::mcp(ctx, out, args),
        Command::Serve(args) => serve::run(ctx, out, args),
        Command::Tools(args) => tool::run(ctx, out, args),
        Command::Tool(args) => tool::call(ctx, out, args),
    }
}
