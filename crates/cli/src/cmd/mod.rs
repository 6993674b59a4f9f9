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
pub mod history;
pub mod hotspots;
pub mod impact;
pub mod index;
pub mod llm;
pub mod localize;
pub mod pillar;
pub mod repomap;
pub mod report;
pub mod run;
pub mod search;
pub mod session;
pub mod skeleton;
pub mod status;
pub mod symbols;
pub mod test;
pub mod tool;

use std::path::PathBuf;

use anyhow::{Context, Result};
use engine::CancellationToken;

use crate::{Cli, Command, config::Config, output::Output};

/// What every command needs: where it runs, the project root, the configuration and
/// the cancellation token that Ctrl-C fires.
pub struct Ctx {
    /// The directory the command runs in (`-C DIR` or the current directory).
    pub cwd: PathBuf,
    pub root: PathBuf,
    pub config: Config,
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
        let config = Config::load(&root)?;
        Ok(Ctx { cwd, root, config, cancel: install_ctrl_c() })
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
            std::process::exit(130);
        }
        t.cancel();
        eprintln!("\ninterrupted: finishing the current step (Ctrl-C again to quit now)");
    });
    token
}

/// A runtime for the async `llm` client. The CLI stays synchronous; commands that
/// talk to models block on one current-thread runtime.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// The token Ctrl-C fires (the model client awaits it, blocking code polls it).
pub fn cancel_token(ctx: &Ctx) -> CancellationToken {
    ctx.cancel.clone()
}

/// A model client for commands that chat. A provider configured without a model
/// (`OPENAI_BASE_URL` alone) gets the one its server offers, and a note on stderr
/// says so; `model` (a `--model` flag) fills it in without asking. Runs inside `rt`.
pub fn chat_client(
    ctx: &Ctx,
    out: &Output,
    rt: &tokio::runtime::Runtime,
    model: Option<&str>,
) -> Result<::llm::Llm> {
    let mut settings = crate::config::llm_settings(&ctx.config, &env_pairs())?;
    if let Some(m) = model {
        for p in settings.providers.values_mut() {
            p.model.get_or_insert_with(|| m.to_owned());
        }
    }
    let found = rt.block_on(async {
        let cancel = cancel_token(ctx);
        ::llm::discover_models(&mut settings, &cancel).await
    })?;
    for d in found {
        out.note(format!(
            "using model {} for provider {}: the only one {} serves (set OPENAI_MODEL or              llm.providers.{}.model to choose)",
            d.model, d.provider, d.base_url, d.provider
        ));
    }
    Ok(::llm::Llm::new(&settings)?)
}

/// The environment as pairs (config substitution and the LLM variables).
pub fn env_pairs() -> Vec<(String, String)> {
    std::env::vars().collect()
}

/// Runs the parsed command and returns the exit code.
pub fn run(cli: &Cli, out: &Output) -> Result<i32> {
    let ctx = Ctx::new(cli)?;
    // A killed multi-file edit is finished or rolled back before anything reads the
    // project: `status`, `index` or `search` must never see half a transaction.
    if ::edit::needs_recovery(&ctx.root) {
        change::open_engine(&ctx, out)?;
    }
    match &cli.command {
        Command::Run(args) => run::run(&ctx, out, args),
        Command::Demo(args) => demo::run(&ctx, out, args),
        Command::Runs(c) => run::runs(&ctx, out, c),
        Command::Agents(c) => agents::run(&ctx, out, c),
        Command::Index(args) => index::run(&ctx, out, args),
        Command::Symbols(args) => symbols::run(&ctx, out, args),
        Command::Skeleton(args) => skeleton::run(&ctx, out, args),
        Command::Status(args) => status::run(&ctx, out, args),
        Command::Localize(args) => localize::run(&ctx, out, args),
        Command::Search(args) => search::run(&ctx, out, args),
        Command::Repomap(args) => repomap::run(&ctx, out, args),
        Command::Graph(c) => graph::run(&ctx, out, c),
        Command::Impact(args) => impact::run(&ctx, out, args),
        Command::Hotspots(args) => hotspots::run(&ctx, out, args),
        Command::Report(args) => report::run(&ctx, out, args),
        Command::Ask(args) => ask::run(&ctx, out, args),
        Command::Llm(c) => llm::run(&ctx, out, c),
        Command::Config(c) => config::run(&ctx, out, c),
        Command::Exec(args) => exec::run(&ctx, out, args),
        Command::Build(args) => build::run(&ctx, out, args),
        Command::Test(args) => test::run(&ctx, out, args),
        Command::Change(args) => change::run(&ctx, out, args),
        Command::Undo(args) => history::undo(&ctx, out, args),
        Command::Redo(args) => history::redo(&ctx, out, args),
        Command::History(args) => history::history(&ctx, out, args),
        Command::Understand(args) => pillar::understand(&ctx, out, args),
        Command::Navigate(args) => pillar::navigate(&ctx, out, args),
        Command::Read(args) => pillar::read(&ctx, out, args),
        Command::Write(args) => pillar::write(&ctx, out, args),
        Command::Manage(args) => pillar::manage(&ctx, out, args),
        Command::Mcp(args) => pillar::mcp(&ctx, out, args),
        Command::Tools(args) => tool::list(&ctx, out, args),
        Command::Tool(args) => tool::call(&ctx, out, args),
    }
}
