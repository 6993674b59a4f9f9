//! One module per subcommand. Each exposes `XxxArgs` (clap) and `run`.

pub mod build;
pub mod exec;
pub mod index;
pub mod skeleton;
pub mod status;
pub mod symbols;
pub mod test;

use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use anyhow::{Context, Result};

use crate::{Cli, Command, config::Config, output::Output};

/// What every command needs: where it runs, the project root, the configuration and
/// the cancellation flag that Ctrl-C sets.
pub struct Ctx {
    /// The directory the command runs in (`-C DIR` or the current directory).
    pub cwd: PathBuf,
    pub root: PathBuf,
    pub config: Config,
    pub cancel: Arc<AtomicBool>,
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
fn install_ctrl_c() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = Arc::clone(&flag);
    // Fails only if a handler is already installed (tests calling twice); ignore.
    let _ = ctrlc::set_handler(move || {
        if f.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("\ninterrupted: finishing the current step (Ctrl-C again to quit now)");
    });
    flag
}

/// Runs the parsed command and returns the exit code.
pub fn run(cli: &Cli, out: &Output) -> Result<i32> {
    let ctx = Ctx::new(cli)?;
    match &cli.command {
        Command::Index(args) => index::run(&ctx, out, args),
        Command::Symbols(args) => symbols::run(&ctx, out, args),
        Command::Skeleton(args) => skeleton::run(&ctx, out, args),
        Command::Status(args) => status::run(&ctx, out, args),
        Command::Exec(args) => exec::run(&ctx, out, args),
        Command::Build(args) => build::run(&ctx, out, args),
        Command::Test(args) => test::run(&ctx, out, args),
    }
}
