//! `ironbees build`: detect the project, build it in the sandbox, report diagnostics.

use std::{io::Write, time::Duration};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use protocol::{BuildResult, Diagnostic, ExecResult};
use sandbox::{DetectOptions, Hooks, Project, Stream};
use serde::Serialize;

use super::{
    Ctx,
    exec::{SandboxArgs, command_env, open_sandbox, policy, report_limit, warn_plan, workspace},
};
use crate::output::Output;

#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// Stream the build tool's own output to stderr while it runs.
    #[arg(short, long)]
    pub verbose: bool,
}

pub const BUILD_HELP: &str = "\
Examples:
  ironbees build                  cargo, dotnet, go or tsc, detected from the project files
  ironbees build --json           {project, build: {success, errors, warnings, ...}, exec}
  ironbees build --network on     let the build fetch dependencies

Exit codes: 0 built, 1 build errors, 6 a sandbox limit fired (see `ironbees exec --help`).";

#[derive(Serialize)]
struct BuildOutput<'a> {
    project: &'a Project,
    build: &'a BuildResult,
    exec: Option<&'a ExecResult>,
}

/// A spinner on a terminal while a tool runs.
pub fn spinner(out: &Output, msg: String) -> ProgressBar {
    let bar = if out.stderr_is_tty && !out.json {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"),
    );
    bar.set_message(msg);
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

pub fn stream_to_stderr(_: Stream, bytes: &[u8]) {
    let _ = std::io::stderr().lock().write_all(bytes);
}

pub fn run(ctx: &Ctx, out: &Output, args: &BuildArgs) -> Result<i32> {
    let policy = policy(ctx, &args.sandbox)?;
    let root = workspace(ctx, &args.sandbox);
    let project = sandbox::detect_project(&root, DetectOptions::default())?;
    let sb = open_sandbox(&policy)?;
    warn_plan(out, &sb, &policy)?;
    let (env, removed) = command_env();
    let bar =
        if args.verbose { spinner(out, String::new()) } else { spinner(out, "building".into()) };
    if args.verbose {
        bar.finish_and_clear();
    }
    let hooks = Hooks {
        on_output: if args.verbose { Some(&stream_to_stderr) } else { None },
        cancel: Some(&ctx.cancel),
    };
    let (build, exec) = sandbox::build(&sb, &project, &policy, &env, &removed, &hooks)?;
    bar.finish_and_clear();
    if out.json {
        out.json(&BuildOutput { project: &project, build: &build, exec: exec.as_ref() })?;
        if let Some(e) = exec.as_ref().and_then(|e| e.limit_error()) {
            out.error(&e);
        }
    } else {
        if let Some(e) = &exec {
            report_limit(out, e);
        }
        for d in build.errors.iter().chain(&build.warnings) {
            out.line(render_diagnostic(out, d));
        }
        let ok = out.style_out().green().bold();
        let bad = out.style_out().red().bold();
        out.line(format!(
            "{} {} with {} error(s), {} warning(s) in {:.1}s",
            if build.success { ok.apply_to("built:") } else { bad.apply_to("build failed:") },
            build.tool,
            build.errors.len(),
            build.warnings.len(),
            build.duration_ms as f64 / 1000.0
        ));
    }
    Ok(match exec {
        Some(e) if e.limit.is_some() => 6,
        _ if build.success => 0,
        _ => 1,
    })
}

pub fn render_diagnostic(out: &Output, d: &Diagnostic) -> String {
    let style = match d.severity {
        protocol::Severity::Error => out.style_out().red().bold(),
        _ => out.style_out().yellow().bold(),
    };
    let sev = match d.severity {
        protocol::Severity::Error => "error",
        protocol::Severity::Warning => "warning",
        _ => "note",
    };
    let head = match &d.code {
        Some(c) => format!("{sev}[{c}]"),
        None => sev.to_owned(),
    };
    let loc = match (&d.file, d.line, d.column) {
        (Some(f), Some(l), Some(c)) => format!("{f}:{l}:{c}: "),
        (Some(f), Some(l), None) => format!("{f}:{l}: "),
        (Some(f), None, _) => format!("{f}: "),
        _ => String::new(),
    };
    format!("{} {loc}{}", style.apply_to(head), d.message)
}
