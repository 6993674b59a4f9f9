//! `ironbees guard check`: a change against the guardrails (the rules agent runs
//! check every round's change against), as a pre-commit hook or in CI; `ironbees
//! guard rules`: the rules in effect.

use std::{io::Read, path::PathBuf};

use anyhow::{Context, Result};
use protocol::{ErrorCode, GuardCheckRequest, GuardReport, GuardSeverity};

use super::Ctx;
use crate::{exit::cli_error, output::Output};

#[derive(Debug, clap::Subcommand)]
pub enum GuardCommand {
    /// Check a change: the work tree against HEAD (default), what is staged, a
    /// revision range, or a patch file. A blocker exits 11 (GUARDRAIL_BLOCKED).
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
    /// The rules in effect: the shipped G001–G004, the organization's files,
    /// then the configuration's `guardrails.rules`.
    #[command(after_help = "Example:\n  ironbees guard rules --json")]
    Rules,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// What `git commit` would record (the index against HEAD): the pre-commit hook.
    #[arg(long, conflicts_with_all = ["diff", "range"])]
    pub staged: bool,
    /// A unified diff to check (`-`: standard input), as `git diff` or
    /// `diff -u` writes it.
    #[arg(long, value_name = "FILE", conflicts_with = "range")]
    pub diff: Option<PathBuf>,
    /// A revision range (`main..HEAD`, `HEAD~3`), as `git diff` reads it.
    #[arg(value_name = "REV..REV")]
    pub range: Option<String>,
}

const CHECK_HELP: &str = "\
Examples:
  ironbees guard check --staged          the pre-commit hook
  ironbees guard check main..HEAD --json what a branch adds
  git diff | ironbees guard check --diff -

As a git pre-commit hook (.git/hooks/pre-commit, executable):
  #!/bin/sh
  exec ironbees guard check --staged

Rules come from `guardrails:` in the configuration (see `ironbees guard rules`).
A line can opt out of the secret rule with `ironbees:allow-secret` (or
`gitleaks:allow`, `pragma: allowlist secret`) in it.
Exit codes: 0 no blocker (warnings are shown), 11 a blocker, 2 bad input.";

pub fn run(ctx: &Ctx, out: &Output, cmd: &GuardCommand) -> Result<i32> {
    let guardrails = ctx.host.guardrails()?;
    let Some(rules) = guardrails.rules else {
        if out.json {
            out.json(&GuardReport::default())?;
        } else {
            out.line("guardrails are turned off (guardrails.enabled: false)");
        }
        return Ok(0);
    };
    match cmd {
        GuardCommand::Rules => {
            let list = rules.rules();
            if out.json {
                out.json(&list)?;
                return Ok(0);
            }
            for r in list {
                out.line(format!(
                    "{:<6} {:<20} {:<8} {}",
                    r.id,
                    r.name,
                    severity_word(r.severity),
                    if r.description.is_empty() { r.checks } else { r.description }
                ));
            }
            Ok(0)
        }
        GuardCommand::Check(args) => check(ctx, out, &rules, args),
    }
}

fn check(ctx: &Ctx, out: &Output, rules: &guard::RuleSet, args: &CheckArgs) -> Result<i32> {
    // The same operation as the `guard_check` tool (MCP, serve, agents).
    let req = match &args.diff {
        Some(p) if p.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).context("reading the diff from stdin")?;
            GuardCheckRequest { diff: Some(s), ..Default::default() }
        }
        Some(p) => {
            let path = ctx.cwd.join(p);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading the diff {}", path.display()))?;
            GuardCheckRequest { diff: Some(text), ..Default::default() }
        }
        None => GuardCheckRequest { staged: args.staged, range: args.range.clone(), diff: None },
    };
    let report = engine::guard_check(&ctx.root, rules, &req)
        .map_err(|e| cli_error(e.code(), e.to_string()))?;
    if out.json {
        out.json(&report)?;
    } else {
        show(out, &report);
    }
    if report.blocked {
        let n = report.findings.iter().filter(|f| f.severity == GuardSeverity::Blocker).count();
        return Err(cli_error(
            ErrorCode::GuardrailBlocked,
            format!("{n} blocker(s): the change breaks the guardrails"),
        ));
    }
    Ok(0)
}

fn severity_word(s: GuardSeverity) -> &'static str {
    match s {
        GuardSeverity::Blocker => "blocker",
        GuardSeverity::Warning => "warning",
        _ => "info",
    }
}

fn show(out: &Output, r: &GuardReport) {
    let style = out.style_out();
    for f in &r.findings {
        let word = severity_word(f.severity);
        let word = match f.severity {
            GuardSeverity::Blocker => style.clone().red().bold().apply_to(word),
            GuardSeverity::Warning => style.clone().yellow().apply_to(word),
            _ => style.clone().dim().apply_to(word),
        };
        let place = match (&f.file, f.line) {
            (Some(p), Some(l)) => format!(" {p}:{l}"),
            (Some(p), None) => format!(" {p}"),
            _ => String::new(),
        };
        out.line(format!("{word} {} {}{place}: {}", f.rule_id, f.rule_name, f.message));
    }
    let (blockers, warnings) = r.findings.iter().fold((0, 0), |(b, w), f| match f.severity {
        GuardSeverity::Blocker => (b + 1, w),
        GuardSeverity::Warning => (b, w + 1),
        _ => (b, w),
    });
    out.line(format!(
        "{} file(s), {} added line(s): {blockers} blocker(s), {warnings} warning(s)",
        r.files, r.lines_added
    ));
}
