use anyhow::Result;
use protocol::{ErrorCode, HotspotBasis, Hotspots, HotspotsRequest};

use super::{
    Ctx,
    analysis::{self, HistoryArgs},
    session::{open_session, user_path, with_call},
};
use crate::{exit::cli_error, output::Output};

pub const AFTER_HELP: &str = "\
Examples:
  ironbees hotspots                         the 20 hottest files and definitions
  ironbees hotspots --since '6 months ago' --top 10
  ironbees hotspots --under src/api --json

With git history, score = churn × (0.5 + 0.5 × structure): churn mixes
recency-weighted commits (half-life --half-life days), commits and changed lines;
structure mixes complexity (decision points, size, the most complex function) and
fan-in. Code that does not change is not a hotspot. Without history (not a
repository, --no-history) the score is structure alone, and the output says so.
Definitions get the churn of their own lines (changes are mapped to today's line
numbers through every newer commit).";

#[derive(Debug, clap::Args)]
pub struct HotspotsArgs {
    /// How many files and definitions to show.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub top: usize,
    /// Only files under this directory.
    #[arg(long, value_name = "DIR")]
    pub under: Option<std::path::PathBuf>,
    /// Half-life of a commit's weight, in days.
    #[arg(long, default_value_t = 90.0, value_name = "DAYS")]
    pub half_life: f64,
    #[command(flatten)]
    pub history: HistoryArgs,
}

pub fn run(ctx: &Ctx, out: &Output, args: &HotspotsArgs) -> Result<i32> {
    if args.top == 0 {
        return Err(cli_error(ErrorCode::InvalidArgument, "--top must be at least 1"));
    }
    if args.history.max_commits == 0 {
        return Err(cli_error(ErrorCode::InvalidArgument, "--max-commits must be at least 1"));
    }
    let req = HotspotsRequest {
        top: Some(args.top as u32),
        under: args.under.as_ref().map(|d| user_path(ctx, d)),
        half_life_days: Some(args.half_life),
        history: args.history.window(),
    };
    let session = open_session(ctx, out, false)?;
    let spin = analysis::Spinner::new(out, "reading git history");
    let result = with_call(ctx, out, |call| session.hotspots(&req, call));
    spin.finish();
    let result = result?;
    if out.json {
        out.json(&result)?;
        return Ok(0);
    }
    print(out, &result, Some(args.history.max_commits));
    Ok(0)
}

/// The history a ranking read, saying so when the window's commit limit cut it
/// short (24.15: hotspots read the newest 1,000 commits without a word).
fn history_line(h: &protocol::HistoryInfo, max_commits: Option<u32>) -> String {
    if !h.available {
        return format!(
            "no history ({}): ranked by complexity and fan-in only",
            h.reason.as_deref().unwrap_or("unknown")
        );
    }
    let span = match (h.oldest, h.newest) {
        (Some(a), Some(b)) => format!(" from {} to {}", analysis::date(a), analysis::date(b)),
        _ => String::new(),
    };
    let cut = match max_commits {
        Some(n) if h.commits >= n => {
            format!(" (the newest {n}: --max-commits reads more)")
        }
        _ => String::new(),
    };
    format!(
        "history: {} commits{span}{}{}{cut}",
        h.commits,
        h.head.as_deref().map(|c| format!(", HEAD {}", &c[..c.len().min(10)])).unwrap_or_default(),
        if h.shallow { " (shallow clone: older history missing)" } else { "" }
    )
}

fn print(out: &Output, h: &Hotspots, max_commits: Option<u32>) {
    let bold = out.style_out().bold();
    let dim = out.style_out().dim();
    out.line(dim.apply_to(history_line(&h.history, max_commits)).to_string());
    let with_history = h.basis == HotspotBasis::History;
    if h.files.is_empty() {
        out.line(if with_history {
            "no hotspots: nothing changed in the window"
        } else {
            "no hotspots: no indexed code to rank"
        });
        return;
    }
    out.line(
        bold.apply_to(if with_history {
            "score  commits  +/- lines  decisions  max cc  fan-in  file"
        } else {
            "score  lines  decisions  max cc  fan-in  file"
        })
        .to_string(),
    );
    for f in &h.files {
        let c = &f.complexity;
        let test = if f.test { " (test)" } else { "" };
        match &f.churn {
            Some(ch) => out.line(format!(
                "{:.3}  {:>7}  {:>9}  {:>9}  {:>6}  {:>6}  {}{test}",
                f.score, ch.commits, ch.lines, c.decisions, c.max_cyclomatic, f.fan_in, f.path
            )),
            None => out.line(format!(
                "{:.3}  {:>5}  {:>9}  {:>6}  {:>6}  {}{test}",
                f.score, c.lines, c.decisions, c.max_cyclomatic, f.fan_in, f.path
            )),
        }
    }
    if h.symbols.is_empty() {
        return;
    }
    out.line(String::new());
    out.line(
        bold.apply_to(if h.history.symbol_churn {
            "score  commits  lines  decisions  fan-in  definition"
        } else {
            "score  lines  decisions  fan-in  definition"
        })
        .to_string(),
    );
    for s in &h.symbols {
        let c = &s.complexity;
        let name = format!("{}:{} {}", s.symbol.path, s.symbol.line, s.symbol.qualified_name);
        match &s.churn {
            Some(ch) => out.line(format!(
                "{:.3}  {:>7}  {:>5}  {:>9}  {:>6}  {name}",
                s.score, ch.commits, ch.lines, c.decisions, s.fan_in
            )),
            None => out.line(format!(
                "{:.3}  {:>5}  {:>9}  {:>6}  {name}",
                s.score, c.lines, c.decisions, s.fan_in
            )),
        }
    }
    if let Some(c) = h.concentration {
        out.line(String::new());
        out.line(
            dim.apply_to(format!(
                "the top 10% of changed files hold {:.0}% of the changed lines",
                c * 100.0
            ))
            .to_string(),
        );
    }
}
