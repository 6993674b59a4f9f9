//! Layer 0, the ContextAdapter (seed 002): what an agent that plans or answers
//! needs to know about the project, within a token budget, from three
//! strategies run side by side — the repository map personalized to the
//! request, the outlines of the files `localize` ranks first (as many as the
//! router's top-k), and the source of the definitions the request names — each
//! part counted in tokens, a definition already shown by another name left out.
//! Every part is best effort: a project the index cannot read still gets planned.

use std::collections::{BTreeMap, BTreeSet};

use protocol::{CodingState, LocalizeRequest, RepomapRequest, SkeletonRequest, SymbolsRequest};

use crate::orchestrator::Shared;

/// The assembled context and its tokens per part.
pub(crate) struct Context {
    pub text: String,
    pub tokens: BTreeMap<String, u64>,
}

/// Identifiers the request names: code-like words (`calculate_total`,
/// `UserService.login`, `parseHeader()`, anything in backticks), at most eight.
fn named_symbols(request: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |w: &str| {
        let w = w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        let w = w.rsplit(['.', ':']).next().unwrap_or(w);
        if w.len() >= 3 && !out.iter().any(|x| x == w) && out.len() < 8 {
            out.push(w.to_owned());
        }
    };
    for (i, part) in request.split('`').enumerate() {
        if i % 2 == 1 && !part.contains(char::is_whitespace) {
            push(part);
        }
    }
    for word in request.split(|c: char| c.is_whitespace() || ",;\"'".contains(c)) {
        let w = word.trim_end_matches(['?', '!', ',']);
        let code_like = w.ends_with("()")
            || w.contains('_')
            || w.contains("::")
            || (w.contains('.')
                && !w.ends_with('.')
                && w.chars().next().is_some_and(char::is_alphabetic))
            || (w.chars().skip(1).any(char::is_uppercase) && w.chars().any(char::is_lowercase));
        if code_like && w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') {
            push(w.trim_end_matches("()"));
        }
    }
    out
}

/// Layer 0 for `s`'s request within about `tokens`: half for the repository
/// map, the rest for the ranked files' outlines and the named definitions.
pub(crate) fn assemble(
    shared: &Shared,
    s: &CodingState,
    call: &stdx::Call<'_>,
    tokens: u32,
) -> Context {
    let session = &shared.session;
    let request = s.user_request.as_str();
    let k = s.route.as_ref().map_or(5, |r| r.top_k).clamp(3, 8);
    let (map, located, defs) = std::thread::scope(|scope| {
        let map = scope.spawn(|| {
            let req = RepomapRequest {
                tokens: Some(tokens / 2),
                focus: Vec::new(),
                query: Some(request.to_owned()),
            };
            session.repomap(&req, call).ok().map(|m| m.text)
        });
        let located = scope.spawn(|| {
            let req = LocalizeRequest {
                query: request.to_owned(),
                k: Some(k),
                rerank: s.settings.rerank_context,
                ..Default::default()
            };
            let found = session.localize(&req, call).ok()?;
            let files: Vec<(String, f64, Option<String>)> = found
                .files
                .iter()
                .take(k as usize)
                .map(|f| {
                    let sk = SkeletonRequest { path: f.path.clone() };
                    let text = session.skeleton(&sk, call).ok().map(|s| s.skeleton.text);
                    (f.path.clone(), f.score, text)
                })
                .collect();
            Some(files)
        });
        let defs = scope.spawn(|| {
            let mut found: Vec<protocol::Symbol> = Vec::new();
            for name in named_symbols(request) {
                let req = SymbolsRequest { name: Some(name), limit: Some(3), ..Default::default() };
                if let Ok(r) = session.symbols(&req, call) {
                    found.extend(r.symbols);
                }
            }
            found
        });
        (map.join().ok().flatten(), located.join().ok().flatten(), defs.join().unwrap_or_default())
    });
    let mut out = String::new();
    let mut counted: BTreeMap<String, u64> = BTreeMap::new();
    if let Some(map) = map {
        out.push_str("### Repository map (most relevant definitions)\n\n");
        out.push_str(&map);
        out.push('\n');
        counted.insert("repomap".into(), engine::count_tokens(&map) as u64);
    }
    let mut budget = (tokens / 2) as usize;
    if let Some(files) = located {
        out.push_str("\n### Files most likely involved (ranked), with their outlines\n");
        for (path, score, skeleton) in files {
            out.push_str(&format!("\n- {path} (score {score:.2})\n"));
            let Some(text) = skeleton else { continue };
            let n = engine::count_tokens(&text);
            // The outlines take at most two thirds of the rest: the named
            // definitions' bodies say more than a fifth outline.
            if n <= budget.saturating_sub((tokens / 6) as usize) {
                budget -= n;
                out.push_str(&format!("```\n{text}\n```\n"));
                *counted.entry("localized".into()).or_default() += n as u64;
            }
        }
    }
    let root = session.root();
    let mut seen: BTreeSet<(String, u32)> = BTreeSet::new();
    let mut shown = String::new();
    for d in defs {
        if !seen.insert((d.path.clone(), d.line)) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&d.path)) else { continue };
        let body: Vec<&str> = text
            .lines()
            .skip(d.line.saturating_sub(1) as usize)
            .take((d.end_line.saturating_sub(d.line) + 1).min(80) as usize)
            .collect();
        let block = format!(
            "\n`{}` in {}:{}\n```\n{}\n```\n",
            d.qualified_name,
            d.path,
            d.line,
            body.join("\n")
        );
        let n = engine::count_tokens(&block);
        if n > budget {
            continue;
        }
        budget -= n;
        shown.push_str(&block);
        *counted.entry("definitions".into()).or_default() += n as u64;
    }
    if !shown.is_empty() {
        out.push_str("\n### Definitions the request names\n");
        out.push_str(&shown);
    }
    Context { text: out, tokens: counted }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_names_symbols_by_the_way_code_is_written() {
        let cases: [(&str, &[&str]); 6] = [
            ("Fix the division by zero in calculate()", &["calculate"]),
            ("calculate_total ignores the discount", &["calculate_total"]),
            ("UserService.login fails for `parseHeader` users", &["parseHeader", "login"]),
            ("http::Client::send hangs", &["send"]),
            ("Explain how user login works", &[]),
            ("The README. Nothing else.", &[]),
        ];
        for (request, want) in cases {
            assert_eq!(named_symbols(request), want, "{request}");
        }
    }
}
