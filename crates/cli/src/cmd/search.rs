use anyhow::Result;
use protocol::{ErrorCode, SearchRequest};

use super::{
    Ctx,
    index::warn_nothing_indexed,
    localize::read_query,
    session::{open_session, with_call},
};
use crate::{exit::cli_error, output::Output};

pub const AFTER_HELP: &str = "\
Examples:
  ironbees search ShoppingCart                 a definition by name (typos and prefixes too)
  ironbees search 'how are retries configured' -k 5
  ironbees search src/app/models.py --json     the definitions of a file
  ironbees search 'ValueError: quantity must be positive'

Definitions are found by BM25 over their text, by name (exact, prefix, fuzzy, and the
parts of camelCase/snake_case names), by path, by the query's phrases verbatim (error
messages), and by their neighbours in the reference graph; the rankings are fused
(reciprocal-rank fusion) with weights that depend on the kind of query. Each hit
lists the retrievers that found it and at what rank. A query
without words or identifiers is INVALID_ARGUMENT (exit 2); a query that matches nothing
prints nothing (an empty `hits` list with --json) and exits 0.

--embeddings adds a dense retriever: the model of `llm.embeddings` in the config
(provider, model, batch), over OpenAI's /embeddings API (OpenAI itself, or an
OpenAI-compatible server at OPENAI_BASE_URL: Ollama, vLLM, llama.cpp, LM Studio).
Nothing is downloaded; without it no model is used.";

#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// What to look for: a name, words, a path, an error message.
    #[arg(value_name = "QUERY")]
    pub query: String,
    /// Number of results.
    #[arg(short = 'k', long, default_value_t = 10)]
    pub k: usize,
    /// Add an embedding model as one more retriever (`llm.embeddings`: OpenAI, or
    /// an OpenAI-compatible server such as Ollama). Definitions are embedded once
    /// and cached under .ironbees/embeddings/. Off by default.
    #[arg(long)]
    pub embeddings: bool,
}

pub fn run(ctx: &Ctx, out: &Output, args: &SearchArgs) -> Result<i32> {
    let query = read_query(out, &Some(args.query.clone()), &None)?;
    if args.k == 0 {
        return Err(cli_error(ErrorCode::InvalidArgument, "-k must be at least 1"));
    }
    let req = SearchRequest { query, k: Some(args.k as u32), embeddings: args.embeddings };
    let session = open_session(ctx, out, false)?;
    let results = with_call(ctx, out, |call| {
        let r = session.search(&req, call)?;
        if r.hits.is_empty() && session.nothing_indexed(call)? {
            warn_nothing_indexed(ctx, out);
        }
        Ok(r)
    })?;
    if out.json {
        out.json(&results)?;
        return Ok(0);
    }
    if results.hits.is_empty() {
        out.note(format!("no matches for {:?}", req.query));
        return Ok(0);
    }
    let dim = out.style_out().dim();
    let bold = out.style_out().bold();
    for (i, h) in results.hits.iter().enumerate() {
        let matched: Vec<String> =
            h.matched.iter().map(|m| format!("{}#{}", m.retriever, m.rank)).collect();
        out.line(format!(
            "{:>2}. {}:{}-{} {} {}  {}",
            i + 1,
            h.path,
            h.line,
            h.end_line,
            h.kind,
            bold.apply_to(&h.qualified_name),
            dim.apply_to(format!("{:.4} {}", h.score, matched.join(" ")))
        ));
    }
    Ok(0)
}
