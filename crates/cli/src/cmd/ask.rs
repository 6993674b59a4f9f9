//! `ironbees ask "QUESTION"`: a one-shot answer, streamed to the terminal.

use std::{
    io::Write,
    time::{Duration, Instant},
};

use anyhow::Result;
use serde::Serialize;

use super::{Ctx, cancel_token, chat_client, llm::spinner, runtime};
use crate::{output::Output, repo_context::repo_context};

pub const AFTER_HELP: &str = "\
Examples:
  ironbees ask \"where are HTTP routes registered?\"
  ironbees ask --provider openai --model gpt-4o-mini \"summarize the store schema\"
  ironbees ask --json \"what does Index::update do?\"   answer, model, usage, cost

The provider comes from the configuration (`llm:`) or the standard variables:
ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, OPENAI_API_KEY / OPENAI_BASE_URL (any
OpenAI-compatible server: Ollama, vLLM, llama.cpp, LM Studio; without a model named,
the server's only model is used). When the repository
has an index (`ironbees index`), its map of definitions is sent as context.";

#[derive(Debug, clap::Args)]
pub struct AskArgs {
    /// The question.
    #[arg(value_name = "QUESTION")]
    pub question: String,
    /// Use this configured provider only (no fallback).
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Override the provider's model.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Upper bound on answer tokens.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// Token budget of the repository map sent as context.
    #[arg(long, value_name = "N", default_value_t = 6000)]
    pub context_tokens: usize,
    /// Send no repository context.
    #[arg(long)]
    pub no_context: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AskOutput {
    answer: String,
    model: String,
    provider: String,
    usage: llm::Usage,
    cost_usd: Option<f64>,
    latency_ms: u64,
}

const SYSTEM: &str = "You are ironbees, a coding assistant answering questions about one \
software repository. Be precise and brief; name files and symbols as they appear. If the \
context does not contain the answer, say what you would need to look at.";

pub fn run(ctx: &Ctx, out: &Output, args: &AskArgs) -> Result<i32> {
    let rt = runtime()?;
    let client = chat_client(ctx, out, &rt, args.model.as_deref())?;
    let mut system = format!("{SYSTEM}\n\nRepository root: {}", ctx.root.display());
    let map = if args.no_context {
        None
    } else {
        repo_context(ctx, out, &args.question, args.context_tokens)
    };
    if let Some(map) = map {
        system.push_str("\n\nRepository map (the definitions most relevant to the question, ranked; line: code):\n");
        system.push_str(&map);
    }
    let mut req = llm::Request::new(args.question.clone()).with_system(system);
    req.model = args.model.clone();
    req.max_tokens = args.max_tokens;
    let opts_provider = args.provider.clone();
    let started = Instant::now();
    let json = out.json;
    let note = out.style_err().dim();
    let resp = rt.block_on(async {
        let opts =
            llm::CallOptions { cancel: cancel_token(ctx), workflow: None, provider: opts_provider };
        let mut bar = spinner(out, "asking");
        let mut stdout = std::io::stdout();
        let mut printed = false;
        // A note on stderr, above the spinner when there is one.
        let say = |bar: &Option<indicatif::ProgressBar>, msg: String| {
            let line = note.apply_to(msg).to_string();
            match bar {
                Some(b) => b.suspend(|| eprintln!("{line}")),
                None => eprintln!("{line}"),
            }
        };
        let mut on_event = |ev: &llm::StreamEvent| {
            use llm::StreamEvent as E;
            match ev {
                E::Started { provider, model } => {
                    if let Some(b) = &bar {
                        b.set_message(format!("asking {provider} ({model})"));
                    }
                }
                E::TextDelta { text } if !json => {
                    if let Some(b) = bar.take() {
                        b.finish_and_clear();
                    }
                    // A closed pipe (`| head`) ends quietly, as elsewhere.
                    if stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).is_err() {
                        std::process::exit(0);
                    }
                    printed = true;
                }
                E::Reset { reason } if !json => {
                    if printed {
                        let _ = writeln!(stdout);
                        printed = false;
                    }
                    say(&bar, format!("[answer interrupted: {reason}; the answer restarts below]"));
                }
                E::Retrying { delay_ms, reason, .. } if !json => {
                    say(&bar, format!("[{reason}; retrying in {:.1}s]", *delay_ms as f64 / 1000.0));
                }
                E::Fallback { to, .. } if !json => say(&bar, format!("[falling back to {to}]")),
                _ => {}
            }
        };
        let r = client.stream(&req, &opts, &mut on_event).await;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        r
    })?;
    if json {
        out.json(&AskOutput {
            answer: resp.text(),
            model: resp.model.clone(),
            provider: resp.provider.clone(),
            usage: resp.usage,
            cost_usd: resp.cost_usd,
            latency_ms: resp.latency_ms,
        })?;
        return Ok(0);
    }
    if !resp.text().ends_with('\n') {
        out.line("");
    }
    if out.stderr_is_tty {
        let u = resp.usage;
        eprintln!(
            "{}",
            note.apply_to(format!(
                "{} · {} in / {} out tokens{} · {} · {:.1}s",
                resp.model,
                u.input_tokens + u.cache_read_tokens + u.cache_write_tokens,
                u.output_tokens,
                if u.estimated { " (estimated)" } else { "" },
                resp.cost_usd.map_or("no price".to_owned(), |c| format!("${c:.4}")),
                started.elapsed().max(Duration::from_millis(resp.latency_ms)).as_secs_f64(),
            ))
        );
    }
    Ok(0)
}
