//! The one place the CLI opens an engine session: the configuration files and the
//! environment become `SessionOptions` here, and every subcommand that works on
//! the project (the pillars, edits, builds and tests, `ironbees mcp`) gets its
//! session and its `Call` (progress bar + Ctrl-C) from this module.

use std::{
    io::Write,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use anyhow::{Context, Result};
use engine::{OutputStream, Progress, SandboxSetup, Session, SessionOptions, Trust};
use protocol::SandboxOptions;

use super::{
    Ctx,
    change::EditSection,
    exec::{SandboxSection, command_env, probe_cache_path},
    index::{Bar, index_config},
};
use crate::output::Output;

/// The edit engine's limits from the `edit:` section.
pub fn edit_options(ctx: &Ctx) -> Result<edit::EngineOptions> {
    let section: EditSection = ctx.config.section("edit")?;
    let d = edit::EngineOptions::default();
    Ok(edit::EngineOptions {
        max_file_size: section.max_file_size.unwrap_or(d.max_file_size),
        history_limit: section.history_limit.unwrap_or(d.history_limit),
        history_max_bytes: section.history_max_bytes.unwrap_or(d.history_max_bytes),
        lock_timeout: section.lock_timeout_secs.map_or(d.lock_timeout, Duration::from_secs),
    })
}

/// The `sandbox:` section as request options (relative paths from the root).
pub fn sandbox_section(ctx: &Ctx) -> Result<SandboxOptions> {
    let sec: SandboxSection = ctx.config.section("sandbox")?;
    let path = |p: &PathBuf| p.display().to_string();
    Ok(SandboxOptions {
        timeout: sec.timeout,
        memory: sec.memory,
        cpu: sec.cpu,
        processes: sec.processes,
        network: sec.network,
        writable: sec.writable.iter().map(path).collect(),
        hide: sec.hide.iter().map(path).collect(),
        throwaway: false,
        workspace: None,
        backend: sec.backend,
        image: sec.image,
        strict: sec.strict,
        max_output: sec.max_output,
    })
}

/// How project commands run: the configured policy, this binary as the helper,
/// and the environment minus secrets.
pub fn sandbox_setup(ctx: &Ctx) -> Result<SandboxSetup> {
    let section = sandbox_section(ctx)?;
    let policy = engine::apply_sandbox_options(
        &sandbox::Policy::default(),
        &section,
        &ctx.root,
        Trust::User,
    )?;
    let helper = std::env::current_exe().context("locating the ironbees binary")?;
    let (env, env_removed) = command_env();
    Ok(SandboxSetup {
        config: sandbox::SandboxConfig {
            helper,
            home: std::env::var_os("HOME").map(PathBuf::from),
            temp_dir: std::env::temp_dir(),
            search_path: std::env::var_os("PATH"),
            probe_container: policy.backend == sandbox::BackendChoice::Container,
            probe_bubblewrap: policy.backend == sandbox::BackendChoice::Bubblewrap,
            probe_cache: probe_cache_path(),
        },
        policy,
        env,
        env_removed,
    })
}

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
    let sandbox = match sandbox_setup(ctx) {
        Ok(s) => Some(s),
        Err(e) => {
            out.warn(format!("sandbox settings are invalid, builds and tests cannot run: {e:#}"));
            None
        }
    };
    let llm = crate::config::llm_settings(&ctx.config, &super::env_pairs()).ok();
    let options = SessionOptions {
        index: index_config(ctx, &[], None)?,
        edit: edit_options(ctx)?,
        watch,
        sandbox,
        llm,
        rebuild_index,
    };
    let session = Session::open(&ctx.root, options)?;
    for id in &session.recovery().rolled_back {
        out.warn(format!("an interrupted edit ({id}) was rolled back; its files are as before it"));
    }
    Ok(Arc::new(session))
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
