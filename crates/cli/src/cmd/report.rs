use anyhow::Result;
use code_graph::ToMarkdown;
use protocol::{ErrorCode, ReportRequest};

use super::{
    Ctx,
    analysis::{self, HistoryArgs},
    session::{open_session, with_call},
};
use crate::{exit::cli_error, output::Output};

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
    /// The commit pipeline's activity report instead (seed 003 §8.2): pipelines
    /// from this day (YYYY-MM-DD); see `ironbees pipeline report`.
    #[arg(long, value_name = "DATE")]
    pub from: Option<String>,
    /// The pipeline report: pipelines up to this day (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    pub to: Option<String>,
    /// The pipeline report: pipelines whose commit message names this issue.
    #[arg(long, value_name = "NAME")]
    pub issue: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    #[value(alias = "markdown")]
    Md,
    Json,
}

pub fn run(ctx: &Ctx, out: &Output, args: &ReportArgs, commitly: bool) -> Result<i32> {
    // The pipeline's report: asked for by its flags, or always as `commitly`.
    if commitly || args.from.is_some() || args.to.is_some() || args.issue.is_some() {
        let format = if args.format == ReportFormat::Json { "json" } else { "markdown" };
        let pipeline_args = super::pipeline::ReportArgs {
            from: args.from.clone(),
            to: args.to.clone(),
            issue: args.issue.clone(),
            format: format.to_owned(),
        };
        return super::pipeline::report(ctx, out, &pipeline_args, commitly);
    }
    if args.history.max_commits == 0 {
        return Err(cli_error(ErrorCode::InvalidArgument, "--max-commits must be at least 1"));
    }
    let req = ReportRequest {
        top: Some(args.top as u32),
        half_life_days: Some(args.half_life),
        history: args.history.window(),
    };
    let session = open_session(ctx, out, false)?;
    let spin = analysis::Spinner::new(out, "analyzing");
    let result = with_call(ctx, out, |call| session.report(&req, call));
    spin.finish();
    let result = result?;
    if out.json || args.format == ReportFormat::Json {
        out.json(&result)?;
        return Ok(0);
    }
    out.line(result.to_markdown().trim_end());
    Ok(0)
}
