use anyhow::Result;
use code_index::{ReportOptions, report};

use super::{
    Ctx,
    analysis::{self, HistoryArgs},
    index::open_fresh,
};
use crate::output::Output;

pub const AFTER_HELP: &str = "\
Examples:
  ironbees report > ARCHITECTURE-REPORT.md     Markdown with a Mermaid diagram
  ironbees report --format json                the same content as JSON
  ironbees report --top 25 --since '1 year ago'

Sections: overview; the most central files and definitions (PageRank) with inferred
roles (entry point, core, interface, model, utility, config, test, peripheral) and
why; role distribution; hotspots and hotspot clusters; blast radius per file; import
cycles; insights (god module, high blast radius, hotspot concentration, untested
hotspots, cycles) with recommendations; a Mermaid module map.";

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Markdown for people, JSON for programs (`--json` is the same as `--format json`).
    #[arg(long, value_enum, default_value = "md")]
    pub format: ReportFormat,
    /// Rows per ranked section.
    #[arg(long, default_value_t = 15, value_name = "N")]
    pub top: usize,
    /// Half-life of a commit's weight in hotspot scores, in days.
    #[arg(long, default_value_t = 90.0, value_name = "DAYS")]
    pub half_life: f64,
    #[command(flatten)]
    pub history: HistoryArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Md,
    Json,
}

pub fn run(ctx: &Ctx, out: &Output, args: &ReportArgs) -> Result<i32> {
    let index = open_fresh(ctx, out)?;
    let churn = analysis::churn(ctx, out, &args.history, false)?;
    let snapshot = index.snapshot()?;
    let title = ctx
        .root
        .file_name()
        .map_or_else(|| ctx.root.display().to_string(), |n| n.to_string_lossy().into_owned());
    let opts = ReportOptions { title, top: args.top, half_life_days: args.half_life };
    let spin = analysis::Spinner::new(out, "analyzing");
    let result = report(&snapshot, Some(&churn), &index.sources(), &opts);
    spin.finish();
    if out.json || args.format == ReportFormat::Json {
        out.json(&result)?;
        return Ok(0);
    }
    out.line(result.to_markdown().trim_end());
    Ok(0)
}
