use std::path::PathBuf;

use anyhow::Result;
use code_index::{RepoMapOptions, repo_map, warm_up_tokenizer};
use protocol::ErrorCode;

use super::{Ctx, index::open_fresh, localize::read_query};
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
    // The map is cut to a token budget at the end; build the tokenizer meanwhile.
    if args.tokens == 0 {
        return Err(cli_error(ErrorCode::InvalidArgument, "--tokens must be at least 1"));
    }
    warm_up_tokenizer();
    let query = if args.query.is_some() || args.query_file.is_some() {
        Some(read_query(out, &args.query, &args.query_file)?)
    } else {
        None
    };
    let mut index = open_fresh(ctx, out)?;
    let snapshot = index.snapshot()?;
    super::index::warn_if_nothing_indexed(ctx, out, &snapshot);
    let mut focus = Vec::new();
    for f in &args.focus {
        let rel = index.relative_path(&ctx.cwd, f)?;
        if snapshot.project.file_id(&rel).is_some() {
            focus.push(rel);
            continue;
        }
        // A directory stands for the indexed files under it; the root would
        // stand for all of them, leaving nothing to show.
        let dir = rel.trim_end_matches('/');
        if dir.is_empty() {
            return Err(cli_error(
                ErrorCode::InvalidArgument,
                format!("--focus {}: the whole project; focus files are not shown", f.display()),
            ));
        }
        let under: Vec<String> = snapshot
            .project
            .files
            .iter()
            .filter(|p| stdx::is_within(&p.path, dir))
            .map(|p| p.path.clone())
            .collect();
        if under.is_empty() && ctx.cwd.join(f).is_dir() {
            return Err(cli_error(
                ErrorCode::NotFound,
                format!("{}: no indexed file under this directory", f.display()),
            ));
        }
        // Not a directory either: `repo_map` says no such file.
        focus.extend(if under.is_empty() { vec![rel] } else { under });
    }
    let search = match &query {
        Some(_) => Some(index.search_index(&snapshot)?),
        None => None,
    };
    let opts = RepoMapOptions { tokens: args.tokens, focus, query };
    let map = repo_map(&snapshot, search.as_ref(), &index.sources(), &opts)?;
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
