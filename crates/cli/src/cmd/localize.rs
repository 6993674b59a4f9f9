use std::{io::Read, path::PathBuf};

use anyhow::Result;
use protocol::{ErrorCode, LocalizeRequest};
use retrieval::MAX_QUERY_BYTES;

use super::{
    Ctx,
    index::warn_nothing_indexed,
    session::{open_session, with_call},
};
use crate::{exit::cli_error, output::Output};

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["query", "query_file"])))]
pub struct LocalizeArgs {
    /// The request: an issue, a bug report, a question, a stack trace.
    #[arg(long, short = 'q', value_name = "TEXT")]
    pub query: Option<String>,
    /// Read the request from a file (`-` for stdin). At most 1 MiB; bytes that are
    /// not UTF-8 are replaced, with a warning.
    #[arg(long, value_name = "F")]
    pub query_file: Option<PathBuf>,
    /// Number of files to return.
    #[arg(short = 'k', long, default_value_t = 10)]
    pub k: usize,
    /// Feature weights for experiments (`only=text`, `graph=0`); see
    /// scripts/bench_localize.py.
    #[arg(long, hide = true)]
    pub weights: Option<String>,
    /// Include every file's feature values in the JSON.
    #[arg(long)]
    pub explain: bool,
    /// Add an embedding model's ranking (`llm.embeddings`: OpenAI, or an
    /// OpenAI-compatible server such as Ollama) as one more vote. Definitions are
    /// embedded once and cached under .ironbees/embeddings/. Off by default.
    #[arg(long)]
    pub embeddings: bool,
    /// Ask the configured model (`llm:`) which of the first 10 files the request
    /// needs, shown their outlines, and fuse its picks with the ranking as one
    /// vote. One model call; the tokens it took are reported on stderr.
    #[arg(long)]
    pub rerank: bool,
}

/// The request text, from `--query`, a file, or stdin (`-`). A file that is not
/// UTF-8 (an issue saved from a Latin-1 terminal) is read with its bad bytes
/// replaced, and says so: the query is only read, so nothing is lost by it.
pub fn read_query(out: &Output, query: &Option<String>, file: &Option<PathBuf>) -> Result<String> {
    let text = match (query, file) {
        (Some(q), _) => q.clone(),
        (None, Some(f)) => {
            let name = if f.as_os_str() == "-" { "stdin".into() } else { f.display().to_string() };
            let io_error = |e: std::io::Error| {
                let code = match e.kind() {
                    std::io::ErrorKind::NotFound => ErrorCode::NotFound,
                    _ => ErrorCode::Io,
                };
                cli_error(code, format!("{name}: {e}"))
            };
            let mut bytes = Vec::new();
            if f.as_os_str() == "-" {
                std::io::stdin().take(MAX_QUERY_BYTES as u64 + 1).read_to_end(&mut bytes)
            } else {
                std::fs::File::open(f)
                    .and_then(|file| file.take(MAX_QUERY_BYTES as u64 + 1).read_to_end(&mut bytes))
            }
            .map_err(io_error)?;
            if bytes.len() > MAX_QUERY_BYTES {
                return Err(cli_error(
                    ErrorCode::FileTooLarge,
                    format!(
                        "{name}: the query is over {MAX_QUERY_BYTES} bytes; pass the issue text, not a whole log"
                    ),
                ));
            }
            match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(e) => {
                    let at = e.utf8_error().valid_up_to();
                    out.warn(format!(
                        "{name}: not valid UTF-8 (INVALID_UTF8, first bad byte at offset {at}); invalid bytes replaced"
                    ));
                    String::from_utf8_lossy(e.as_bytes()).into_owned()
                }
            }
        }
        (None, None) => String::new(),
    };
    if text.trim().is_empty() {
        return Err(cli_error(ErrorCode::InvalidArgument, "the query is empty"));
    }
    Ok(text)
}

pub fn run(ctx: &Ctx, out: &Output, args: &LocalizeArgs) -> Result<i32> {
    if args.k == 0 {
        return Err(cli_error(ErrorCode::InvalidArgument, "-k must be at least 1"));
    }
    let query = read_query(out, &args.query, &args.query_file)?;
    let req = LocalizeRequest {
        query,
        k: Some(args.k as u32),
        explain: args.explain,
        embeddings: args.embeddings,
        weights: args.weights.clone(),
        rerank: args.rerank,
    };
    let session = open_session(ctx, out, false)?;
    let results = with_call(ctx, out, |call| {
        let r = session.localize(&req, call)?;
        if r.files.is_empty() && session.nothing_indexed(call)? {
            warn_nothing_indexed(ctx, out);
        }
        Ok(r)
    })?;
    if let Some(rr) = &results.rerank {
        // stdout stays the files (the shape `--json` always had); the model's part
        // goes to stderr, as JSON in `--json` mode like errors.
        if out.json {
            eprintln!("{}", serde_json::json!({ "rerank": rr }));
        }
        match &rr.error {
            // Not a failure of the command: the signals' ranking stands.
            Some(e) => out.warn(format!(
                "rerank: the model's answer was not used ({}): {}; the ranking is the signals' alone",
                e.code, e.message
            )),
            None if !out.json => out.note(format!(
                "reranked by {}: picked {} of {} candidates ({} tokens in, {} out)",
                rr.model,
                rr.picks.len(),
                rr.candidates.len(),
                rr.input_tokens,
                rr.output_tokens
            )),
            None => {}
        }
    }
    let results = results.files;
    if out.json {
        out.json(&results)?;
        return Ok(0);
    }
    let dim = out.style_out().dim();
    let bold = out.style_out().bold();
    for (i, r) in results.iter().enumerate() {
        out.line(format!(
            "{:>2}. {} {}",
            i + 1,
            bold.apply_to(&r.path),
            dim.apply_to(format!("{:.3}", r.score))
        ));
        for e in r.evidence.iter().take(3) {
            out.line(format!("      {}", dim.apply_to(retrieval::describe_evidence(e))));
        }
    }
    Ok(0)
}
