//! `ironbees route`: the router's decision for a request (seed 002, Layer 1), without
//! running it. Reads no project: the route is a function of the text and the budget.

use anyhow::Result;
use protocol::{ErrorCode, RouteBudget};

use super::Ctx;
use crate::{exit::cli_error, output::Output};

pub const AFTER_HELP: &str = "Examples:\n  ironbees route \"Explain how user login works\"\n  ironbees route \"로그인 버그 고쳐줘\" --json\n  ironbees route \"Find calculate_total\" --budget-ms 300";

#[derive(Debug, clap::Args)]
pub struct RouteArgs {
    /// The request, in English or Korean.
    #[arg(value_name = "REQUEST")]
    pub request: String,
    /// Time the retrieval may take, in milliseconds: under 500 one retriever runs,
    /// under 3000 no embeddings.
    #[arg(long, value_name = "MS", default_value_t = RouteBudget::default().latency_ms)]
    pub budget_ms: u64,
    /// Tokens of context the answer may carry; caps top-k.
    #[arg(long, value_name = "N", default_value_t = RouteBudget::default().tokens)]
    pub budget_tokens: u64,
}

pub fn run(_ctx: &Ctx, out: &Output, args: &RouteArgs) -> Result<i32> {
    if args.request.trim().is_empty() {
        return Err(cli_error(ErrorCode::InvalidArgument, "the request is empty"));
    }
    let budget = RouteBudget { latency_ms: args.budget_ms, tokens: args.budget_tokens };
    let route = retrieval::route_with_budget(&args.request, budget);
    if out.json {
        out.json(&route)?;
        return Ok(0);
    }
    let bold = out.style_out().bold();
    let dim = out.style_out().dim();
    let strategies: Vec<&str> = route.strategies.iter().map(|s| s.as_str()).collect();
    out.line(format!("intent:       {}", bold.apply_to(route.intent.as_str())));
    out.line(format!(
        "needs change: {}",
        if route.needs_change {
            "yes (plan, code, validate)"
        } else {
            "no (answer from the index)"
        }
    ));
    out.line(format!("strategies:   {}", strategies.join(" → ")));
    out.line(format!("top-k:        {}", route.top_k));
    if !route.cues.is_empty() {
        out.line(format!("{}", dim.apply_to(format!("cues:         {}", route.cues.join(", ")))));
    }
    Ok(0)
}
