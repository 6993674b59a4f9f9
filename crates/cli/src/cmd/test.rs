//! `ironbees test`: detect the project's test tool, run it in the sandbox, report
//! totals and failures.

use anyhow::Result;
use engine::Trust;
use protocol::TestRequest;

use super::{
    Ctx,
    build::render_diagnostic,
    exec::{SandboxArgs, report_limit, warn_plan},
    session::{CliProgress, PassThrough, open_session, with_progress},
};
use crate::output::Output;

#[derive(Debug, clap::Args)]
pub struct TestArgs {
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// Run Rust tests with cargo-nextest instead of cargo test.
    #[arg(long)]
    pub nextest: bool,
    /// Stream the test tool's own output to stderr while it runs.
    #[arg(short, long)]
    pub verbose: bool,
    /// A command to run instead of the detected tool, judged by its exit code (and a
    /// closing "N passed, N failed" line if it prints one).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub const TEST_HELP: &str = "\
Examples:
  ironbees test                   cargo test, pytest, dotnet test, go test, jest or vitest
  ironbees test --json            {project, test: {success, total, passed, failed, skipped, failures}, exec}
  ironbees test --nextest         Rust tests through cargo-nextest
  ironbees test -- make check     any command, judged by its exit code

Exit codes: 0 all tests passed, 1 failures (or no tests ran), 6 a sandbox limit fired.";

pub fn run(ctx: &Ctx, out: &Output, args: &TestArgs) -> Result<i32> {
    let session = open_session(ctx, out, false)?;
    let opts = args.sandbox.options(ctx);
    warn_plan(out, &session, &opts)?;
    let req = TestRequest {
        sandbox: opts,
        nextest: args.nextest,
        command: args.command.clone(),
        targets: Vec::new(),
    };
    let progress = CliProgress::new(out, args.verbose.then_some(PassThrough::Stderr));
    let r = with_progress(ctx, &progress, |call| session.test_as(&req, Trust::User, call))?;
    let (test, exec) = (&r.test, &r.exec);
    if out.json {
        out.json(&r)?;
        if let Some(e) = exec.limit_error() {
            out.error(&e);
        }
    } else {
        report_limit(out, exec);
        let bad = out.style_out().red().bold();
        let dim = out.style_out().dim();
        for d in &test.build_errors {
            out.line(render_diagnostic(out, d));
        }
        for f in &test.failures {
            out.line(format!("{} {}", bad.apply_to("FAIL"), f.name));
            if let (Some(file), Some(line)) = (&f.file, f.line) {
                out.line(format!("  {}", dim.apply_to(format!("at {file}:{line}"))));
            }
            for l in f.message.lines().take(12) {
                out.line(format!("  {l}"));
            }
        }
        if let Some(why) = &test.incomplete {
            out.warn(format!("results incomplete: {why}"));
        }
        let head = if test.success {
            out.style_out().green().bold().apply_to("tests passed:")
        } else {
            bad.apply_to("tests failed:")
        };
        out.line(format!(
            "{head} {} total, {} passed, {} failed, {} skipped ({}, {:.1}s)",
            test.total,
            test.passed,
            test.failed,
            test.skipped,
            test.tool,
            test.duration_ms as f64 / 1000.0
        ));
    }
    Ok(if exec.limit.is_some() {
        6
    } else if test.success {
        0
    } else {
        1
    })
}
