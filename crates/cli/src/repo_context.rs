//! Repository context for `ironbees ask`.
//!
//! SEAM: this is a stand-in. The ranked repository map (PageRank over the
//! reference graph, issue 3) will be exposed by `code-index`; when it is, replace
//! the body of [`repo_context`] with a call to it under the same token budget. The
//! signature is what `ask` depends on.

use std::collections::BTreeMap;

use code_index::{Index, STATE_DIR, SymbolQuery, count_tokens};

use crate::cmd::{Ctx, index::index_config};

/// Top-level definitions' signatures grouped by file, cut to `budget_tokens`
/// (`o200k_base` tokens). `None` when there is no index (`.ironbees/index.db`), it
/// cannot be read, or it holds no definitions. The index is read as it is: asking
/// a question never starts an indexing run.
pub fn repo_context(ctx: &Ctx, budget_tokens: usize) -> Option<String> {
    if !ctx.root.join(STATE_DIR).join("index.db").is_file() {
        return None;
    }
    let index = Index::open(&ctx.root, index_config(ctx, &[], None).ok()?).ok()?;
    let symbols = index.symbols(&SymbolQuery::default()).ok()?;
    let mut by_file: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for s in &symbols {
        // Top level: nothing encloses it (its qualified name is its name).
        if s.qualified_name == s.name {
            let sig = if s.signature.is_empty() { &s.name } else { &s.signature };
            by_file.entry(s.path.as_str()).or_default().push(format!("  {}: {sig}", s.line));
        }
    }
    // Densest files first, until the budget is spent (best effort without ranks).
    let mut files: Vec<(&str, Vec<String>)> = by_file.into_iter().collect();
    files.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    let mut out = String::new();
    let mut used = 0;
    for (path, lines) in files {
        let block = format!("{path}\n{}\n", lines.join("\n"));
        let cost = count_tokens(&block);
        if used + cost > budget_tokens {
            continue; // a smaller file later may still fit
        }
        used += cost;
        out.push_str(&block);
    }
    (!out.is_empty()).then_some(out)
}
