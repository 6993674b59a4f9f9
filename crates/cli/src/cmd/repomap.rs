use std::path::PathBuf;

use anyhow::Result;
use protocol::{ErrorCode, RepomapRequest};

use super::{
    Ctx,
    index::warn_nothing_indexed,
    localize::read_query,
    session::{open_session, user_path, with_call},
};
use crate::{exit::cli_error, output::Output};

pub const AFTER_HELP: &str = "\
Examples:
  ironbees repomap                            the 1024 most useful tokens of the repository
  ironbees repomap --tokens 4096 --focus src/app.py
  ironbees repomap --query 'checkout total ignores discounts' --json

Definitions are ranked by PageRank over the reference graph, personalized toward the
focus files (which are not shown) and what the query names or matches. The map is the
longest ranked prefix whose rendering fits the budget (o200k_base tokens), then the
paths of the next most relevant files.";

#[derive(Debug, clap::Args)]
pub struct RepomapArgs {
    /// Token budget (o200k_base); the map never exceeds it.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub tokens: usize,
    /// Files being worked on (a directory: every indexed file under it): the
    /// ranking starts from them; they are not shown.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub focus: Vec<PathBuf>,
    /// A request (issue, question) whose names and text seed the ranking.
    #[arg(long, short = 'q', value_name = "TEXT")]
    pub query: Option<String>,
    /// Read the request from a file (`-` for stdin).
    #[arg(long, value_name = "F", conflicts_with = "query")]
    pub query_file: Option<PathBuf>,
}

pub fn run(ctx: &Ctx, out: &Output, args: &RepomapArgs) -> Result<i32> {
    if args.tokens == 0 {
        return Err(cli_error(ErrorCode::InvalidArgument, "--tokens must be at least 1"));
    }
    let query = if args.query.is_some() || args.query_file.is_some() {
        Some(read_query(out, &args.query, &args.query_file)?)
    } else {
        None
    };
    let req = RepomapRequest {
        tokens: Some(args.tokens as u32),
        focus: args.focus.iter().map(|f| user_path(ctx, f)).collect(),
        query,
    };
    let session = open_session(ctx, out, false)?;
    let map = with_call(ctx, out, |call| {
        let r = session.repomap(&req, call)?;
        if r.files.is_empty() && session.nothing_indexed(call)? {
            warn_nothing_indexed(ctx, out);
        }
        Ok(r)
    })?;
    if out.json {
        out.json(&map)?;
        return Ok(0);
    }
    let text = map.text.strip_suffix('\n').unwrap_or(&map.text);
    if !text.is_empty() {
        out.line(text);
    }
    let files = map.files.len();
    eprintln!(
        "{}",
        out.style_err().dim().apply_to(format!(
            "-- {} definitions in {files} files (+{} more paths), {} of {} tokens; {} ranked definitions",
            map.definitions,
            map.more_files.len(),
            map.tokens,
            map.budget,
            map.candidates
        ))
    );
    Ok(0)
}
