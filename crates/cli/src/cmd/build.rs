//! `ironbees build`: detect the project, build it in the sandbox, report diagnostics.

use anyhow::Result;
use engine::Trust;
use protocol::{BuildRequest, Diagnostic};

use super::{
    Ctx,
    exec::{SandboxArgs, report_limit, warn_plan},
    session::{CliProgress, PassThrough, open_session, with_progress},
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

pub fn run(ctx: &Ctx, out: &Output, args: &BuildArgs) -> Result<i32> {
    let session = open_session(ctx, out, false)?;
    let opts = args.sandbox.options(ctx);
    warn_plan(out, &session, &opts)?;
    let req = BuildRequest { sandbox: opts };
    let progress = CliProgress::new(out, args.verbose.then_some(PassThrough::Stderr));
    let r = with_progress(ctx, &progress, |call| session.build_as(&req, Trust::User, call))?;
    let (build, exec) = (&r.build, &r.exec);
    if out.json {
        out.json(&r)?;
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
