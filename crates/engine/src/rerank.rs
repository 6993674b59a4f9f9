//! `localize` with `rerank: true`: the configured model is shown the request and
//! the outlines of the signals' first files, and asked which of them the change
//! needs (Agentless's file-level step, over our candidates instead of the whole
//! tree). Its picks are one vote fused with the signals' ranking
//! (`retrieval::fuse_picks`), never the ranking itself: it can only reorder the
//! candidates, and a poor model's pick rises to the top from the first few places
//! only.
//!
//! A model that fails (unreachable after its retries, rate limited, an answer
//! that is no JSON or names no candidate) leaves the signals' ranking as it was,
//! and the report says why; only a missing model configuration or a cancellation
//! is an error of the call.

use protocol::{FileResult, RerankReport};
use retrieval::{RERANK_CANDIDATES, RERANK_WEIGHT, fuse_picks};
use serde_json::{Value, json};
use stdx::Call;

use crate::{
    Session,
    error::{Error, Result},
};

/// The request as the model sees it, at most (the title and first paragraphs
/// say what it is about; a local model's context is a few thousand tokens).
const REQUEST_CHARS: usize = 3000;
/// One candidate's outline, at most.
const OUTLINE_TOKENS: usize = 250;
/// The files the model may pick.
const MAX_PICKS: usize = 5;
/// Room for the answer: five paths in JSON.
const ANSWER_TOKENS: u32 = 400;

const SYSTEM: &str = "You locate the source files a change needs. You are given a request \
(an issue, a bug report or a task) and candidate files of the project, each with its outline. \
Answer with the paths of the files that must be edited to resolve the request, the most likely \
first, at most 5, copied exactly from the candidates. Prefer the code that implements the \
behaviour over its tests and documentation.";

impl Session {
    /// Reranks `files` (the signals' ranking, at least the candidates long) with
    /// the configured model.
    pub(crate) fn rerank(
        &self,
        query: &str,
        files: Vec<FileResult>,
        call: &Call<'_>,
    ) -> Result<(Vec<FileResult>, RerankReport)> {
        let settings = self.options.llm.clone().unwrap_or_default();
        if settings.providers.is_empty() {
            return Err(Error::InvalidArgument(
                "--rerank needs a model and none is configured: set ANTHROPIC_API_KEY or \
                 OPENAI_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible server"
                    .into(),
            ));
        }
        let llm = llm::Llm::new(&settings)?;
        let candidates: Vec<String> =
            files.iter().take(RERANK_CANDIDATES).map(|f| f.path.clone()).collect();
        let prompt = self.rerank_prompt(query, &candidates);
        let schema = json!({
            "type": "object",
            "properties": {
                "files": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_PICKS}
            },
            "required": ["files"],
            "additionalProperties": false
        });
        let req = llm::Request::new(prompt)
            .with_system(SYSTEM)
            .with_output_schema("files", schema)
            .with_max_tokens(ANSWER_TOKENS);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Unavailable(format!("starting the async runtime: {e}")))?;
        call.progress.phase("asking the model", None);
        let opts = llm::CallOptions { cancel: call.cancel.clone(), ..Default::default() };
        let mut report = RerankReport {
            model: String::new(),
            candidates: candidates.clone(),
            picks: Vec::new(),
            input_tokens: 0,
            output_tokens: 0,
            error: None,
        };
        let resp = match rt.block_on(llm.complete(&req, &opts)) {
            Ok(resp) => resp,
            Err(llm::Error::Cancelled) => return Err(Error::Cancelled),
            Err(e) => {
                report.error = Some(e.to_info());
                return Ok((files, report));
            }
        };
        report.model = format!("{}/{}", resp.provider, resp.model);
        report.input_tokens = resp.usage.input_tokens;
        report.output_tokens = resp.usage.output_tokens;
        match picks(resp.structured.as_ref(), &resp.text(), &candidates) {
            Ok(picks) => report.picks = picks,
            Err(why) => {
                report.error = Some(protocol::ErrorInfo::new(
                    protocol::ErrorCode::LlmBadResponse,
                    format!("{}: {why}", report.model),
                ));
                return Ok((files, report));
            }
        }
        let files = fuse_picks(files, RERANK_CANDIDATES, &report.picks, &resp.model, RERANK_WEIGHT);
        Ok((files, report))
    }

    /// The request, then each candidate with its outline cut to
    /// [`OUTLINE_TOKENS`] (a file that cannot be read is shown by its path).
    fn rerank_prompt(&self, query: &str, candidates: &[String]) -> String {
        let mut request = retrieval::clean_query(query);
        request.truncate(request.floor_char_boundary(REQUEST_CHARS));
        let mut out = format!("## Request\n\n{}\n\n## Candidate files\n", request.trim());
        for (i, path) in candidates.iter().enumerate() {
            let outline =
                self.analyzed(path).map(|f| f.skeleton_text().to_owned()).unwrap_or_default();
            out.push_str(&format!("\n### {}. {path}\n```\n", i + 1));
            let mut used = 0;
            for line in outline.lines() {
                let cost = code_index::count_tokens(line) + 1;
                if used + cost > OUTLINE_TOKENS {
                    out.push_str("...\n");
                    break;
                }
                used += cost;
                out.push_str(line);
                out.push('\n');
            }
            out.push_str("```\n");
        }
        out.push_str(&format!(
            "\nWhich of these files must be edited to resolve the request? Answer as JSON: \
             {{\"files\": [\"path\", ...]}}, at most {MAX_PICKS}, the most likely first.\n"
        ));
        out
    }
}

/// The candidates the model's answer names, in its order: its structured answer,
/// or the JSON object in its text (a model without a grammar wraps it in a code
/// fence or in prose). A path is matched exactly, then without a leading `./`;
/// anything else is dropped. An answer naming no candidate is an error, so the
/// report tells a model that answered nothing useful from one that agreed.
fn picks(
    structured: Option<&Value>,
    text: &str,
    candidates: &[String],
) -> Result<Vec<String>, String> {
    let parsed;
    let value = match structured {
        Some(v) => v,
        None => {
            let object = llm::json_object_in(text).ok_or("the answer holds no JSON object")?;
            parsed = serde_json::from_str::<Value>(object)
                .map_err(|e| format!("the answer is no JSON: {e}"))?;
            &parsed
        }
    };
    let files =
        value.get("files").and_then(Value::as_array).ok_or("the answer has no `files` list")?;
    let mut out: Vec<String> = Vec::new();
    for f in files.iter().filter_map(Value::as_str) {
        let f = f.trim().trim_start_matches("./");
        if let Some(c) = candidates.iter().find(|c| *c == f)
            && !out.contains(c)
        {
            out.push(c.clone());
        }
        if out.len() == MAX_PICKS {
            break;
        }
    }
    if out.is_empty() {
        return Err(format!("the answer names none of the {} candidates", candidates.len()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_from_answers() {
        let candidates: Vec<String> =
            ["src/a.py", "src/b.py", "tests/test_a.py"].iter().map(|s| (*s).to_owned()).collect();
        // (structured, text, picks or error)
        type Want<'a> = Result<&'a [&'a str], &'a str>;
        let cases: &[(Option<Value>, &str, Want<'_>)] = &[
            (Some(json!({"files": ["src/b.py", "src/a.py"]})), "", Ok(&["src/b.py", "src/a.py"])),
            // Made-up paths dropped, duplicates once, `./` tolerated.
            (Some(json!({"files": ["lib/x.py", "./src/a.py", "src/a.py"]})), "", Ok(&["src/a.py"])),
            // No grammar: JSON in a fence, with prose around it.
            (
                None,
                "Sure!\n```json\n{\"files\": [\"tests/test_a.py\"]}\n```",
                Ok(&["tests/test_a.py"]),
            ),
            (None, "I think src/a.py", Err("the answer holds no JSON object")),
            (None, "{\"files\": [\"src/a.py\"", Err("the answer holds no JSON object")),
            (Some(json!({"paths": ["src/a.py"]})), "", Err("the answer has no `files` list")),
            (
                Some(json!({"files": ["nope.py"]})),
                "",
                Err("the answer names none of the 3 candidates"),
            ),
        ];
        for (structured, text, want) in cases {
            let got = picks(structured.as_ref(), text, &candidates);
            match want {
                Ok(w) => assert_eq!(
                    got.as_deref(),
                    Ok(w.iter().map(|s| s.to_string()).collect::<Vec<_>>().as_slice()),
                    "{text}"
                ),
                Err(e) => assert_eq!(got, Err(e.to_string()), "{text}"),
            }
        }
    }
}
