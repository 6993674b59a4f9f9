//! The one place the CLI opens an engine session: the configuration files and the
//! environment become `SessionOptions` here, and every subcommand that works on
//! the project (the pillars, edits, builds and tests, `ironbees mcp`) gets its
//! session and its `Call` (progress bar + Ctrl-C) from this module.

use std::{io::Write, path::Path, sync::Arc};

use anyhow::Result;
use engine::{OutputStream, Progress, Session};

use super::{Ctx, index::Bar};
use crate::output::Output;

/// Opens the project's session with the configured index, edit, sandbox and model
/// settings. Invalid sandbox settings are a warning (the rest still works);
/// commands that run something report them when they need the sandbox.
pub fn open_session(ctx: &Ctx, out: &Output, watch: bool) -> Result<Arc<Session>> {
    open_session_with(ctx, out, watch, false)
}

/// [`open_session`], starting the index over when `rebuild_index` (a damaged
/// database cannot be opened, only replaced).
pub fn open_session_with(
    ctx: &Ctx,
    out: &Output,
    watch: bool,
    rebuild_index: bool,
) -> Result<Arc<Session>> {
    let (session, notices) = ctx.host.open_session(watch, rebuild_index)?;
    super::show_notices(out, notices);
    Ok(session)
}

/// A progress bar on a terminal that can also pass a command's output through.
pub struct CliProgress {
    bar: Bar,
    /// Warnings print on stderr (styled as `Output::warn` does).
    color: bool,
    /// Where a project command's output goes as it runs (`None`: kept quiet).
    pass_through: Option<PassThrough>,
}

/// Where streamed command output goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PassThrough {
    /// Both streams to stderr (build/test `--verbose`: stdout stays for results).
    Stderr,
    /// Each stream to its own (`exec`).
    Own,
}

impl CliProgress {
    pub fn new(out: &Output, pass_through: Option<PassThrough>) -> CliProgress {
        CliProgress { bar: Bar::new(out), color: out.color_err(), pass_through }
    }

    pub fn finish(&self) {
        self.bar.finish();
    }
}

impl Progress for CliProgress {
    fn phase(&self, name: &str, total: Option<u64>) {
        self.bar.phase(name, total);
    }

    fn advance(&self, n: u64) {
        self.bar.advance(n);
    }

    fn warning(&self, code: &str, message: &str) {
        let head = console::Style::new().force_styling(self.color).yellow().bold();
        self.bar.suspend(|| eprintln!("{} [{code}] {message}", head.apply_to("warning:")));
    }

    fn output(&self, stream: OutputStream, bytes: &[u8]) {
        // A closed pipe on our side must not stop the command's capture.
        let _ = match (self.pass_through, stream) {
            (None, _) => return,
            (Some(PassThrough::Own), OutputStream::Stdout) => {
                std::io::stdout().lock().write_all(bytes)
            }
            _ => std::io::stderr().lock().write_all(bytes),
        };
    }
}

/// Runs one operation with a progress bar on a terminal and Ctrl-C wired in.
pub fn with_call<T>(
    ctx: &Ctx,
    out: &Output,
    f: impl FnOnce(&engine::Call<'_>) -> engine::Result<T>,
) -> Result<T> {
    with_progress(ctx, &CliProgress::new(out, None), f)
}

/// [`with_call`] with a given progress sink (one that passes output through).
pub fn with_progress<T>(
    ctx: &Ctx,
    progress: &CliProgress,
    f: impl FnOnce(&engine::Call<'_>) -> engine::Result<T>,
) -> Result<T> {
    let call = engine::Call::new(progress, &ctx.cancel);
    let r = f(&call);
    progress.finish();
    Ok(r?)
}

/// A path the user typed (relative to the current directory) as the engine takes
/// it: absolute, so the engine resolves it against the root.
pub fn user_path(ctx: &Ctx, file: &Path) -> String {
    let abs = if file.is_absolute() { file.to_owned() } else { ctx.cwd.join(file) };
    abs.display().to_string()
}
