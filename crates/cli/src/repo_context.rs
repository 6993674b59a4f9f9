//! Repository context for `ironbees ask`: the ranked repository map (the `repomap`
//! operation), personalized by the question and cut to a token budget.

use crate::{
    cmd::{Ctx, session::open_session},
    output::Output,
};

/// The map of the most relevant definitions for `question`, at most
/// `budget_tokens` (`o200k_base`). `None` when there is no index yet
/// (`.ironbees/index.db`): asking a question never starts a first indexing run.
/// An existing index is brought up to date first, so the map matches the files.
pub fn repo_context(
    ctx: &Ctx,
    out: &Output,
    question: &str,
    budget_tokens: usize,
) -> Option<String> {
    if !ctx.root.join(stdx::STATE_DIR).join("index.db").is_file() {
        return None;
    }
    let session = open_session(ctx, out, false).ok()?;
    let req = protocol::RepomapRequest {
        tokens: Some(budget_tokens.max(1) as u32),
        focus: Vec::new(),
        query: Some(question.to_owned()),
    };
    let call = engine::Call::new(&engine::NoProgress, &ctx.cancel);
    let map = session.repomap(&req, &call).ok()?;
    (!map.text.trim().is_empty()).then_some(map.text)
}
