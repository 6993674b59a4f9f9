//! `ironbees llm check`: one small call to each configured provider.

use std::time::Duration;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use protocol::ErrorInfo;
use serde::Serialize;

use super::{Ctx, cancel_token, chat_client, runtime};
use crate::{exit, output::Output};

#[derive(Debug, clap::Subcommand)]
pub enum LlmCommand {
    /// Call each configured provider once: reachability, latency, model, usage, cost.
    #[command(after_help = "Example:\n  ANTHROPIC_API_KEY=sk-... ironbees llm check --json\n  \
        OPENAI_BASE_URL=http://localhost:11434/v1 ironbees llm check --timeout 5")]
    Check(CheckArgs),
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Seconds each provider gets to answer: a server that accepts the connection
    /// and never answers is reported as a timeout (LLM_UNAVAILABLE), not waited on.
    #[arg(long, value_name = "SECS", default_value_t = 20.0)]
    pub timeout: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Check {
    name: String,
    kind: &'static str,
    base_url: String,
    /// The configured model, or the one the server named in its answer.
    model: String,
    /// 0 = the default, then the fallbacks; null = configured but not in the chain.
    chain_position: Option<usize>,
    ok: bool,
    latency_ms: Option<u64>,
    usage: Option<llm::Usage>,
    cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorInfo>,
}

const PROMPT: &str = "Reply with the single word: ok";

pub fn run(ctx: &Ctx, out: &Output, cmd: &LlmCommand) -> Result<i32> {
    let LlmCommand::Check(args) = cmd;
    let limit = Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            exit::cli_error(
                protocol::ErrorCode::InvalidArgument,
                format!("--timeout must be a positive number of seconds, not {}", args.timeout),
            )
        })?;
    let rt = runtime()?;
    let client = chat_client(ctx, out, &rt, None)?;
    let checks: Vec<Check> = rt.block_on(async {
        let cancel = cancel_token(ctx);
        let mut checks = Vec::new();
        for p in client.providers() {
            let spinner = spinner(
                out,
                &format!("calling {} ({}), up to {:.0}s", p.name, p.model, limit.as_secs_f64()),
            );
            let req = llm::Request::new(PROMPT).with_max_tokens(16);
            let r = client.probe(&p.name, &req, limit, &cancel).await;
            if let Some(s) = spinner {
                s.finish_and_clear();
            }
            let mut c = Check {
                name: p.name,
                kind: p.kind,
                base_url: p.base_url,
                model: p.model,
                chain_position: p.chain_position,
                ok: false,
                latency_ms: None,
                usage: None,
                cost_usd: None,
                error: None,
            };
            match r {
                Ok(resp) => {
                    c.ok = true;
                    c.model = resp.model;
                    c.latency_ms = Some(resp.latency_ms);
                    c.usage = Some(resp.usage);
                    c.cost_usd = resp.cost_usd;
                }
                Err(llm::Error::Cancelled) => return Err(llm::Error::Cancelled),
                Err(e) => c.error = Some(e.to_info()),
            }
            checks.push(c);
        }
        Ok(checks)
    })?;
    let first_failure = checks.iter().find_map(|c| c.error.as_ref().map(|e| e.code));
    if out.json {
        out.json(&serde_json::json!({ "providers": checks }))?;
    } else {
        let ok = out.style_out().green().bold();
        let bad = out.style_out().red().bold();
        for c in &checks {
            let role = match c.chain_position {
                Some(0) => " (default)".to_owned(),
                Some(n) => format!(" (fallback {n})"),
                None => String::new(),
            };
            match &c.error {
                None => {
                    let u = c.usage.unwrap_or_default();
                    out.line(format!(
                        "{} {}{role}  {}  {} ms  {} in / {} out tokens{}  {}",
                        ok.apply_to("ok  "),
                        c.name,
                        c.model,
                        c.latency_ms.unwrap_or(0),
                        u.input_tokens + u.cache_read_tokens + u.cache_write_tokens,
                        u.output_tokens,
                        if u.estimated { " (estimated)" } else { "" },
                        c.cost_usd.map_or("no price".to_owned(), |d| format!("${d:.6}")),
                    ));
                }
                Some(e) => out.line(format!(
                    "{} {}{role}  {}  {}  error[{}]: {}",
                    bad.apply_to("FAIL"),
                    c.name,
                    c.model,
                    c.base_url,
                    e.code,
                    e.message
                )),
            }
        }
    }
    Ok(first_failure.map_or(0, exit::exit_code))
}

/// A spinner on stderr, only on a terminal and not with `--json`.
pub fn spinner(out: &Output, msg: &str) -> Option<ProgressBar> {
    (out.stderr_is_tty && !out.json).then(|| {
        let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"),
        );
        b.set_message(msg.to_owned());
        b.enable_steady_tick(Duration::from_millis(100));
        b
    })
}
