//! REFACTOR's model step: the changed files and the configured rules go to the
//! model, its rewritten files come back as JSON and are committed on the
//! refactor branch (kept only if the tests still pass: the stage decides).

use protocol::{ErrorCode, PipelineState};
use serde::{Deserialize, Serialize};

use crate::run::{Env, Failure};

/// Files larger than this are not sent to the model.
const MAX_FILE_BYTES: u64 = 64 << 10;
/// At most this many files per pipeline.
const MAX_FILES: usize = 10;
/// The hub commit's subject starts with this (how a repeated run finds it).
const SUBJECT: &str = "RefactoringAgent:";

/// What the model's refactoring changed, committed as `commit`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Applied {
    /// Paths relative to the project root.
    pub files: Vec<String>,
    pub improvements: Vec<String>,
    pub commit: String,
    pub reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Answer {
    #[serde(default)]
    files: Vec<FileAnswer>,
    #[serde(default)]
    improvements: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct FileAnswer {
    path: String,
    content: String,
}

const SYSTEM: &str = "You refactor code without changing its behaviour: remove duplication, \
add missing error handling, simplify. Follow the project's rules. Answer with one JSON object \
only: {\"files\": [{\"path\": \"<path as given>\", \"content\": \"<the whole new file>\"}], \
\"improvements\": [\"<one line per improvement>\"]}. Leave out files you would not change; \
answer {\"files\": [], \"improvements\": []} when nothing is worth changing.";

pub(crate) fn apply(env: &Env, llm: &llm::Llm, s: &PipelineState) -> Result<Applied, Failure> {
    let hub = &env.layout.hub;
    let git = |args: &[&str]| {
        crate::git::git_ok(hub, args, None).map_err(|e| Failure::new(ErrorCode::StageFailed, e))
    };
    // A run killed after its commit and before its record finds the commit.
    let subject = git(&["log", "-1", "--format=%s"])?;
    if subject.starts_with(SUBJECT) {
        let files = git(&["diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD"])?;
        return Ok(Applied {
            files: files.lines().map(str::to_owned).collect(),
            improvements: vec![subject.trim_start_matches(SUBJECT).trim().to_owned()],
            commit: git(&["rev-parse", "HEAD"])?,
            reason: None,
        });
    }
    let root = env.layout.root.display().to_string();
    let mut files = Vec::new();
    for abs in &s.commit_file_list {
        let rel = abs.strip_prefix(&root).unwrap_or(abs).trim_start_matches('/').to_owned();
        let path = hub.join(&rel);
        let small =
            std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= MAX_FILE_BYTES);
        if let (true, Ok(text)) = (small, std::fs::read_to_string(&path)) {
            files.push((rel, text));
        }
        if files.len() == MAX_FILES {
            break;
        }
    }
    if files.is_empty() {
        return Ok(Applied {
            reason: Some("no changed text file to refactor".into()),
            ..Applied::default()
        });
    }
    let mut rules = env.config.refactoring.rules.clone();
    if let Some(f) = &env.config.refactoring.rules_file
        && let Ok(text) = std::fs::read_to_string(env.layout.root.join(f))
    {
        rules.push(text);
    }
    let mut prompt = String::new();
    if !rules.is_empty() {
        prompt.push_str("Rules:\n");
        for r in &rules {
            prompt.push_str(&format!("- {}\n", r.trim()));
        }
        prompt.push('\n');
    }
    prompt.push_str("Files changed by the commit:\n");
    for (path, text) in &files {
        prompt.push_str(&format!("\n--- {path}\n{text}\n"));
    }
    let mut req = llm::Request::new(prompt).with_system(SYSTEM);
    req.model = env.config.llm.model.clone();
    let opts =
        llm::CallOptions { workflow: Some(s.pipeline_id.clone()), ..llm::CallOptions::default() };
    let resp = env
        .rt
        .block_on(llm.complete(&req, &opts))
        .map_err(|e| Failure::new(e.code(), format!("the model: {e}")))?;
    let answer = parse(&resp.text()).map_err(|e| Failure::new(ErrorCode::LlmBadResponse, e))?;
    let mut written = Vec::new();
    for f in answer.files {
        // Only the files it was shown; anything else is ignored.
        let Some((rel, old)) = files.iter().find(|(p, _)| *p == f.path) else { continue };
        if *old == f.content {
            continue;
        }
        let path = hub.join(rel);
        std::fs::write(&path, &f.content)
            .map_err(|e| Failure::new(ErrorCode::Io, format!("{}: {e}", path.display())))?;
        written.push(rel.clone());
    }
    if written.is_empty() {
        return Ok(Applied {
            reason: Some("the model proposed no change".into()),
            ..Applied::default()
        });
    }
    let improvements = if answer.improvements.is_empty() {
        vec!["refactoring".to_owned()]
    } else {
        answer.improvements
    };
    let mut args = vec!["add", "--"];
    args.extend(written.iter().map(String::as_str));
    git(&args)?;
    let message = format!("{SUBJECT} {}", improvements.join("; "));
    git(&["commit", "-q", "-m", &stdx::clip(&message, 500)])?;
    Ok(Applied { files: written, improvements, commit: git(&["rev-parse", "HEAD"])?, reason: None })
}

/// The JSON object in the model's answer (code fences and prose around it
/// forgiven).
fn parse(text: &str) -> Result<Answer, String> {
    let object = llm::json_object_in(text).ok_or("the answer has no JSON object")?;
    serde_json::from_str(object).map_err(|e| format!("the answer is not the JSON asked for: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_through_fences_and_prose() {
        let cases = [
            (r#"{"files":[],"improvements":[]}"#, Some(0)),
            ("Sure!\n```json\n{\"files\":[{\"path\":\"a.py\",\"content\":\"x\"}]}\n```", Some(1)),
            ("no json here", None),
        ];
        for (text, files) in cases {
            assert_eq!(parse(text).ok().map(|a| a.files.len()), files, "{text}");
        }
    }
}
