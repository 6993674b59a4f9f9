//! `ironbees demo`: agent mode on a small Rust project with a bug, start to end,
//! on a fresh machine.
//!
//! The project is written to a new directory: a calculator whose division by zero
//! panics, and the test that says it should be an error. Then the same
//! orchestrator `ironbees run` uses plans, edits a shadow copy, runs `cargo test`
//! in the sandbox, loops, and applies the validated fix as one transaction.
//!
//! With a model configured (`ANTHROPIC_API_KEY`, `OPENAI_BASE_URL`, `llm:`), the
//! demo uses it. Without one — the first command on a fresh clone — a *scripted*
//! model answers instead: the wire-level mock of the test suite, serving the
//! Anthropic API on a loopback port with answers written for this project (a plan,
//! a first fix that is wrong on purpose, a diagnosis, the right fix). It is said
//! on the screen; everything else (the sandbox, cargo, the checkpoints, the edit
//! journal) is real.

use std::{path::PathBuf, sync::Arc, time::Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};
use test_support::mock_llm::{MockLlm, MockUsage, Reply};

use super::{Ctx, chat_client, runtime, session};
use crate::output::Output;

pub const AFTER_HELP: &str = "\
Examples:
  ironbees demo                      scripted model unless one is configured
  ironbees demo --dir /tmp/calc      keep the project there
  ANTHROPIC_API_KEY=... ironbees demo   the same run with a real model

Afterwards: `ironbees -C DIR runs log ID` shows every model call, tool call and
command; `ironbees -C DIR undo` reverts the fix.";

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Where to create the demo project (default: a new directory under the
    /// system's temp dir). Must not exist or be empty.
    #[arg(long = "dir", value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Use the scripted model even when a real one is configured.
    #[arg(long)]
    pub scripted: bool,
}

const CARGO_TOML: &str =
    "[package]\nname = \"calculator\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
const GITIGNORE: &str = "target/\n";
const LIB_RS: &str = "\
/// Applies `op` (`+`, `-`, `*`, `/`) to `a` and `b`.
pub fn calculate(a: i64, b: i64, op: char) -> Result<i64, String> {
    match op {
        '+' => Ok(a + b),
        '-' => Ok(a - b),
        '*' => Ok(a * b),
        '/' => Ok(a / b),
        _ => Err(format!(\"unknown operator {op:?}\")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(calculate(2, 3, '+'), Ok(5));
    }

    #[test]
    fn dividing_by_zero_is_an_error() {
        assert!(calculate(1, 0, '/').is_err());
    }
}
";
const REQUEST: &str = "Fix the division by zero bug in calculate()";
const DIVISION: &str = "        '/' => Ok(a / b),";
const WRONG: &str = "        '/' if b == 0 => Ok(0),\n        '/' => Ok(a / b),";
const RIGHT: &str =
    "        '/' if b == 0 => Err(\"division by zero\".to_owned()),\n        '/' => Ok(a / b),";

pub fn run(ctx: &Ctx, out: &Output, args: &DemoArgs) -> Result<i32> {
    let dir = match &args.project {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("ironbees-demo-{}", std::process::id())),
    };
    if dir.exists() && std::fs::read_dir(&dir)?.next().is_some() {
        anyhow::bail!("{} is not empty; give --dir a new directory", dir.display());
    }
    for (path, text) in
        [("Cargo.toml", CARGO_TOML), (".gitignore", GITIGNORE), ("src/lib.rs", LIB_RS)]
    {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().expect("a file in a directory"))?;
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    let dir = dir.canonicalize()?;
    let host = host::Host::load(&dir, ctx.host.env().clone())?;
    let ctx = Ctx { cwd: dir.clone(), root: dir.clone(), host, cancel: ctx.cancel.clone() };
    out.note(format!(
        "demo project: {} (a calculator whose division by zero panics)",
        dir.display()
    ));

    let settings = ctx.host.llm_settings()?;
    let real = !args.scripted && settings.chain().is_ok();
    let mut mock = None;
    let rt = runtime()?;
    let llm = if real {
        out.note("using the configured model");
        chat_client(&ctx, out, &rt, None)?
    } else {
        out.note(
            "no model is configured: a scripted model answers (set ANTHROPIC_API_KEY, or \
             OPENAI_BASE_URL for a local server, to see a real one)",
        );
        let m = scripted_model();
        let mut s = llm::Settings { default: Some("scripted".into()), ..Default::default() };
        s.providers.insert(
            "scripted".into(),
            llm::ProviderSettings {
                kind: Some(llm::ProviderKind::Anthropic),
                base_url: Some(m.url()),
                api_key: Some(llm::Secret::new("scripted")),
                model: Some("scripted-demo".into()),
                price: Some(llm::Price {
                    input: 0.0,
                    output: 0.0,
                    cache_read: None,
                    cache_write: None,
                }),
                ..llm::ProviderSettings::default()
            },
        );
        mock = Some(m);
        llm::Llm::new(&s)?
    };
    let session = session::open_session(&ctx, out, false)?;
    let agents = ctx.host.agents()?;
    // The demo project has no configuration of its own: the built-in tools.
    let orch = agent::Orchestrator::open(
        session,
        Some(Arc::new(llm)),
        agents,
        engine::Registry::new(),
        rt.handle().clone(),
    )?;
    out.note(format!("ironbees run --yes {REQUEST:?}"));
    let started = Instant::now();
    let settings =
        ctx.host.run_settings(&host::RunOverrides { yes: true, ..Default::default() })?;
    let outcome = orch.start(REQUEST, settings, super::run::drive_here(&ctx, out))?;
    let code = super::run::drive(&ctx, out, &orch, outcome.clone(), started)?;
    drop(mock);
    if !out.json {
        out.note(format!(
            "the trajectory: ironbees -C {} runs log {}; revert the fix: ironbees -C {} undo",
            dir.display(),
            outcome.run_id,
            dir.display()
        ));
    }
    Ok(code)
}

/// The model for the demo project: it plans the fix, gets it wrong first (the
/// loop is the point of the demo), reads the diagnosis and gets it right.
fn scripted_model() -> MockLlm {
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(LIB_RS.as_bytes());
    let wrong = LIB_RS.replace(DIVISION, WRONG);
    let wrong_hash = stdx::sha256_hex(wrong.as_bytes());
    let plan = json!({
        "spec": "calculate(a, 0, '/') returns Err(\"division by zero\") instead of panicking; every other case is unchanged.",
        "plan": {
            "summary": "Guard the division in calculate() against a zero divisor.",
            "steps": [{"number": 1, "description": "In calculate(), return an error for '/' when b == 0 before dividing",
                       "actionType": "MODIFY", "filePath": "src/lib.rs",
                       "rationale": "dividing_by_zero_is_an_error expects an Err; today the division panics"}],
            "affectedFiles": ["src/lib.rs"],
            "complexity": "LOW"
        }
    })
    .to_string();
    let edit = |hash: &str, from: &str, to: &str| {
        json!({"edits": [{"path": "src/lib.rs", "targetString": from, "replacementString": to,
                          "expectedHash": hash}], "options": {"dryRun": false}})
    };
    mock.set_responder(move |body: &Value| {
        let system = body["system"].to_string();
        let messages = body["messages"].to_string();
        let after_tool = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .is_some_and(|m| m["content"].to_string().contains("tool_result"));
        let reply = if system.contains("# Planner") {
            Reply::text(plan.clone())
        } else if system.contains("# Validator") {
            Reply::text(
                "Cause: calculate(1, 0, '/') now returns Ok(0), but the test expects an error.\n\
                 Fix: src/lib.rs:7 return Err(\"division by zero\".to_owned()) when b == 0.",
            )
        } else if after_tool {
            Reply::text("Guarded the division in calculate().")
        } else if messages.contains("Validation failed") {
            Reply::tool_calls(
                "The guard must return an error, not 0.",
                vec![("change", edit(&wrong_hash, WRONG, RIGHT))],
            )
        } else {
            Reply::tool_calls(
                "I'll guard the division.",
                vec![("change", edit(&hash, DIVISION, WRONG))],
            )
        };
        Some(reply.usage(MockUsage { input: 1200, output: 80, ..MockUsage::default() }))
    });
    mock
}
