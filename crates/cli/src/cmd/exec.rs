//! `ironbees exec`: run a command in the sandbox. Also the sandbox flags and the
//! `sandbox:` config section shared with `build` and `test`.

use std::path::PathBuf;

use anyhow::Result;
use engine::{Session, Trust};
use protocol::{ExecRequest, ExecResult, LimitKind, SandboxOptions};
use sandbox::StdinMode;

use super::{
    Ctx,
    session::{CliProgress, PassThrough, open_session, with_progress},
};
use crate::output::Output;

/// Flags that shape the sandbox; shared by `exec`, `build` and `test`.
#[derive(Debug, Clone, clap::Args)]
pub struct SandboxArgs {
    /// Wall-clock limit (`90s`, `10m`, `1h`; plain numbers are seconds); kills the whole
    /// process tree. Default 10m, or `sandbox.timeout`.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Memory limit for the tree (`512M`, `2G`). Default 4G, or `sandbox.memory`.
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,
    /// CPU-time limit per process (`30s`). Default none.
    #[arg(long, value_name = "DURATION")]
    pub cpu: Option<String>,
    /// Processes (and threads) at once. Default 512.
    #[arg(long, value_name = "N")]
    pub processes: Option<u32>,
    /// Network access: off (default: a private network namespace, loopback only) or on.
    #[arg(long, value_name = "on|off")]
    pub network: Option<String>,
    /// Another writable path besides the workspace (repeatable).
    #[arg(long, value_name = "PATH")]
    pub writable: Vec<PathBuf>,
    /// Another path to hide, besides the built-in secret locations (repeatable).
    #[arg(long, value_name = "PATH")]
    pub hide: Vec<PathBuf>,
    /// Run on a throwaway layer over the workspace: the command's writes are discarded.
    #[arg(long)]
    pub throwaway: bool,
    /// The workspace (writable; everything else is read-only). Default: the project root.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Isolation backend: auto, namespaces, bubblewrap, container, none.
    #[arg(long, value_name = "NAME")]
    pub backend: Option<String>,
    /// Image for `--backend container`.
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Refuse to run (SANDBOX_UNAVAILABLE) when any protection is missing here.
    #[arg(long)]
    pub strict: bool,
    /// Kill the command when it has written this much output (default 256M).
    #[arg(long, value_name = "SIZE")]
    pub max_output: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// The command and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<String>,
}

pub const EXEC_HELP: &str = "\
Examples:
  ironbees exec -- cargo test                     network off, workspace writable, rest read-only
  ironbees exec --timeout 30s --memory 1G -- make
  ironbees exec --throwaway -- ./configure        writes go to a layer that is discarded
  ironbees exec --json -- pytest -q               the result as JSON (exit code, limit, isolation, output)

Without --json the command's output streams through and ironbees exits with the
command's exit code, 128+N when a signal N ended it, and when a limit fired:
  124 timeout    137 memory, processes or output (the tree was killed)
  152 CPU time (SIGXCPU)    153 file size (SIGXFSZ)
  127 command not found
With --json: 0 the command succeeded, 1 it failed, 6 a limit fired (`limit` names it).
Isolation warnings (a protection this machine cannot provide) are printed on stderr;
--strict refuses to run instead.";

impl SandboxArgs {
    /// The flags as the `exec`, `build` and `test` operations take them; relative
    /// paths become absolute from the current directory (the engine resolves
    /// relative ones from the root).
    pub fn options(&self, ctx: &Ctx) -> SandboxOptions {
        let abs = |v: &PathBuf| {
            if v.is_absolute() { v.clone() } else { ctx.cwd.join(v) }.display().to_string()
        };
        SandboxOptions {
            timeout: self.timeout.clone(),
            memory: self.memory.clone(),
            cpu: self.cpu.clone(),
            processes: self.processes,
            network: self.network.clone(),
            writable: self.writable.iter().map(abs).collect(),
            hide: self.hide.iter().map(abs).collect(),
            throwaway: self.throwaway,
            workspace: self.workspace.as_ref().map(abs),
            backend: self.backend.clone(),
            image: self.image.clone(),
            strict: self.strict,
            max_output: self.max_output.clone(),
        }
    }
}

/// Prints the plan's warnings loudly before anything runs.
pub fn warn_plan(out: &Output, session: &Session, opts: &SandboxOptions) -> Result<()> {
    for w in session.sandbox_warnings(opts, Trust::User)? {
        out.warn(format!("sandbox: {w}"));
    }
    Ok(())
}

/// Exit code for a finished command (see `EXEC_HELP`).
pub fn exit_code_for(r: &ExecResult, json: bool) -> i32 {
    if json {
        return if r.limit.is_some() {
            6
        } else if r.success() {
            0
        } else {
            1
        };
    }
    match r.limit {
        Some(LimitKind::Timeout) => 124,
        Some(LimitKind::CpuTime) => 152,
        Some(LimitKind::FileSize) => 153,
        Some(_) => 137,
        None => match (r.exit_code, &r.signal) {
            (Some(c), _) => c,
            (None, Some(sig)) => 128 + signal_number(sig),
            (None, None) => 1,
        },
    }
}

fn signal_number(name: &str) -> i32 {
    match name {
        "SIGHUP" => 1,
        "SIGINT" => 2,
        "SIGQUIT" => 3,
        "SIGILL" => 4,
        "SIGTRAP" => 5,
        "SIGABRT" => 6,
        "SIGBUS" => 7,
        "SIGFPE" => 8,
        "SIGKILL" => 9,
        "SIGSEGV" => 11,
        "SIGPIPE" => 13,
        "SIGALRM" => 14,
        "SIGTERM" => 15,
        "SIGXCPU" => 24,
        "SIGXFSZ" => 25,
        _ => name.trim_start_matches("SIG").parse().unwrap_or(0),
    }
}

pub fn run(ctx: &Ctx, out: &Output, args: &ExecArgs) -> Result<i32> {
    let session = open_session(ctx, out, false)?;
    let opts = args.sandbox.options(ctx);
    warn_plan(out, &session, &opts)?;
    // Start where we are when that is inside the workspace, else at its root.
    let ws = opts.workspace.as_ref().map_or_else(|| ctx.root.clone(), PathBuf::from);
    let here = std::fs::canonicalize(&ctx.cwd).ok();
    let ws_real = std::fs::canonicalize(&ws).ok();
    let cwd = match (here, ws_real) {
        (Some(h), Some(w)) if h.starts_with(&w) => {
            h.strip_prefix(&w).ok().map(|r| r.display().to_string()).filter(|r| !r.is_empty())
        }
        _ => None,
    };
    let req = ExecRequest { command: args.command.clone(), sandbox: opts, cwd };
    let stdin = if out.json { StdinMode::Null } else { StdinMode::Inherit };
    let progress = CliProgress::new(out, (!out.json).then_some(PassThrough::Own));
    let result =
        with_progress(ctx, &progress, |call| session.exec_as(&req, Trust::User, stdin, call))?;
    let code = exit_code_for(&result, out.json);
    if out.json {
        out.json(&result)?;
        if let Some(e) = result.limit_error() {
            out.error(&e);
        }
    } else {
        report_limit(out, &result);
    }
    Ok(code)
}

/// Run-time warnings and a fired limit, on stderr.
pub fn report_limit(out: &Output, r: &ExecResult) {
    for w in r.isolation.warnings.iter().filter(|w| w.contains("NOT")) {
        out.warn(format!("sandbox: {w}"));
    }
    if let Some(l) = r.limit {
        let s = out.style_err().red().bold();
        eprintln!(
            "{} {l}: {}",
            s.apply_to("ironbees: sandbox limit fired:"),
            r.limit_detail.as_deref().unwrap_or("")
        );
    }
    if r.leftover_processes_killed > 0 {
        out.warn(format!(
            "sandbox: killed {} process(es) the command left running",
            r.leftover_processes_killed
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        let mut r = ExecResult { exit_code: Some(3), ..Default::default() };
        assert_eq!(exit_code_for(&r, false), 3);
        assert_eq!(exit_code_for(&r, true), 1);
        r.limit = Some(LimitKind::Timeout);
        assert_eq!(exit_code_for(&r, false), 124);
        assert_eq!(exit_code_for(&r, true), 6);
        r.limit = Some(LimitKind::Memory);
        assert_eq!(exit_code_for(&r, false), 137);
        r.limit = None;
        r.exit_code = None;
        r.signal = Some("SIGSEGV".into());
        assert_eq!(exit_code_for(&r, false), 139);
        r.signal = None;
        r.exit_code = Some(0);
        assert_eq!(exit_code_for(&r, true), 0);
    }
}
