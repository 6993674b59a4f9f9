//! The guidance payload: next actions as ready tool calls, and recovery strategies
//! for errors. Pure functions of the error, the pillar and the request that failed,
//! so the strategies are tested as tables.

use protocol::{
    ErrorCode, ErrorInfo, Guidance, MatchCandidate, NextAction, Operation, RecoveryStrategy,
};
use serde_json::{Value, json};

/// A ready tool call.
pub(crate) fn action(
    priority: u8,
    tool: &str,
    arguments: Value,
    description: impl Into<String>,
    rationale: impl Into<String>,
) -> NextAction {
    NextAction {
        priority,
        tool: tool.to_owned(),
        arguments,
        description: description.into(),
        rationale: rationale.into(),
    }
}

/// Sorts by priority (stable) and keeps the first five.
pub(crate) fn finish(mut actions: Vec<NextAction>) -> Vec<NextAction> {
    actions.sort_by_key(|a| a.priority);
    actions.truncate(5);
    actions
}

/// The guidance of a failed call.
pub fn error_guidance(info: &ErrorInfo, pillar: Operation, request: &Value) -> Guidance {
    let recovery = recovery_for(info, pillar, request);
    let next_actions = recovery.as_ref().map(|r| r.actions.clone()).unwrap_or_default();
    Guidance {
        context_summary: format!(
            "`{pillar}` failed with {}: {}. Nothing was changed.",
            info.code, info.message
        ),
        next_actions,
        warnings: Vec::new(),
        recovery,
    }
}

fn lines_arg(c: &MatchCandidate, pad: u32) -> String {
    let (s, e) = (c.line_range.start, c.line_range.end);
    let (a, b) = (s.saturating_sub(pad).max(1), e + pad);
    if a == b { a.to_string() } else { format!("{a}-{b}") }
}

/// The recovery strategy for an error of `pillar` given the request that failed.
/// None for codes where retrying differently cannot help (cancelled, internal).
pub fn recovery_for(
    info: &ErrorInfo,
    pillar: Operation,
    request: &Value,
) -> Option<RecoveryStrategy> {
    let path = info.path.clone().or_else(|| request_path(request)).unwrap_or_default();
    let d = &info.details;
    let edit_index = d.edit_index;
    let candidates = &d.candidates;
    let similar = &d.similar_names;
    let mut actions = Vec::new();
    let strategy = match info.code {
        ErrorCode::NoMatch => {
            if let Some(name) = similar.first() {
                for (i, n) in similar.iter().take(2).enumerate() {
                    actions.push(action(
                        1 + i as u8,
                        "navigate",
                        json!({"action": "definition", "target": n}),
                        format!("locate `{n}`"),
                        "a definition with a similar name exists",
                    ));
                }
                format!(
                    "No definition by that name in {path}; the closest is `{name}`. Retry with \
                     the exact qualified name."
                )
            } else if let Some(best) = candidates.first() {
                let range = lines_arg(best, 3);
                actions.push(action(
                    1,
                    "read",
                    json!({"target": path, "view": "fragment", "lineRange": range}),
                    format!("read lines {range} of {path}, where the closest text is"),
                    "copy the exact current text into targetString",
                ));
                if let Some(retry) = with_line_range(request, edit_index, best) {
                    actions.push(action(
                        2,
                        pillar.name(),
                        retry,
                        "retry restricted to that range",
                        "only once the fragment confirms the text",
                    ));
                }
                let sim = best.similarity.map(|s| format!(" ({:.0}% similar)", s * 100.0));
                format!(
                    "targetString was not found in {path}. The closest text is at lines {}{}: \
                     read it and retry with the file's exact text (or replace by lineRange).",
                    lines_arg(best, 0),
                    sim.unwrap_or_default()
                )
            } else {
                actions.push(action(
                    1,
                    "read",
                    json!({"target": path, "view": "skeleton"}),
                    format!("outline {path}"),
                    "find where the code you meant to change is",
                ));
                format!(
                    "targetString was not found in {path}; read the file to find the current text."
                )
            }
        }
        ErrorCode::AmbiguousMatch if candidates.is_empty() && !d.targets.is_empty() => {
            // A target naming several definitions: each as `path:line`, exactly one.
            for (i, t) in d.targets.iter().take(3).enumerate() {
                let at = t.split_whitespace().next().unwrap_or(t);
                let mut retry = request.clone();
                retry["target"] = json!(at);
                actions.push(action(
                    1 + i as u8,
                    pillar.name(),
                    retry,
                    format!("ask about {t}"),
                    "a path:line names exactly one definition",
                ));
            }
            format!(
                "The target names {} definitions or files; name one by `path:line` (or its \
                 qualified name): {}.",
                d.targets.len(),
                d.targets.iter().take(5).cloned().collect::<Vec<_>>().join("; ")
            )
        }
        ErrorCode::AmbiguousMatch => {
            for (i, c) in candidates.iter().take(2).enumerate() {
                if let Some(retry) = with_line_range(request, edit_index, c) {
                    actions.push(action(
                        1 + i as u8,
                        pillar.name(),
                        retry,
                        format!("apply to the match at lines {}", lines_arg(c, 0)),
                        "a lineRange picks exactly one match",
                    ));
                }
            }
            let places: Vec<String> = candidates.iter().map(|c| lines_arg(c, 0)).collect();
            format!(
                "targetString matches {} places in {path} (lines {}). Add `lineRange` to the edit, \
                 include more surrounding lines in targetString, or set replaceAll.",
                places.len(),
                places.join(", ")
            )
        }
        ErrorCode::HashMismatch => {
            if let Some(tx) = &d.changed_by {
                actions.push(action(
                    1,
                    "manage",
                    json!({"command": "history", "id": tx}),
                    format!("see transaction {tx}, which changed {path} later"),
                    "undo or redo must go in order",
                ));
                format!(
                    "{path} was changed by the later transaction {tx}; undo that one first, or \
                     leave this one as it is."
                )
            } else {
                actions.push(action(
                    1,
                    "read",
                    json!({"target": path, "view": "full"}),
                    format!("re-read {path} (its content and current hash)"),
                    "the file changed since you read it",
                ));
                if let Some(current) = &d.current_hash
                    && let Some(retry) = with_expected_hash(request, current)
                {
                    actions.push(action(
                        2,
                        pillar.name(),
                        retry,
                        "retry with the current hash",
                        "only if the re-read content still fits your edit",
                    ));
                }
                format!(
                    "{path} changed since you read it (hash {}). Re-read it with `read`, re-plan the \
                     edit on its current content, and retry with the new hash as expectedHash.",
                    d.current_hash.as_deref().unwrap_or("now different")
                )
            }
        }
        ErrorCode::PathOutsideRoot => {
            let base = path.rsplit('/').next().unwrap_or(&path).to_owned();
            actions.push(action(
                1,
                "understand",
                json!({"target": base, "depth": "shallow"}),
                format!("find `{base}` inside the project"),
                "paths must be inside the project root",
            ));
            "Paths must be relative to the project root (or absolute inside it), and cannot go \
             through `..`, symlinks leaving the root, `.git/` or `.ironbees/`."
                .to_owned()
        }
        ErrorCode::IndexStale => {
            actions.push(action(
                1,
                "manage",
                json!({"command": "rebuild"}),
                "bring the index up to date",
                "another process was updating it",
            ));
            "The index could not be refreshed; rebuild it (this waits for the other process) and \
             retry."
                .to_owned()
        }
        ErrorCode::IndexCorrupt => {
            actions.push(action(
                1,
                "manage",
                json!({"command": "rebuild", "scope": "full"}),
                "rebuild the index from scratch",
                "the index database is unusable",
            ));
            "The index database is damaged; a full rebuild recreates it from the files.".to_owned()
        }
        ErrorCode::NotFound => {
            for (i, n) in similar.iter().take(3).enumerate() {
                let tool = if pillar == Operation::Understand { "understand" } else { "navigate" };
                let args = if tool == "understand" {
                    json!({"target": n})
                } else {
                    let mut a = request.clone();
                    a["target"] = json!(n);
                    a
                };
                actions.push(action(
                    1 + i as u8,
                    tool,
                    args,
                    format!("try `{n}`"),
                    "a similar name exists",
                ));
            }
            if similar.is_empty() {
                let target = request["target"].as_str().unwrap_or(&path).to_owned();
                actions.push(action(
                    1,
                    "understand",
                    json!({"target": format!("where is {target}")}),
                    "search the project for it",
                    "nothing by that exact name or path",
                ));
            }
            "Nothing by that name or path; check the spelling (closest names are suggested) or \
             ask `understand` with a question."
                .to_owned()
        }
        ErrorCode::AlreadyExists => {
            actions.push(action(
                1,
                "read",
                json!({"target": path, "view": "skeleton"}),
                format!("look at the existing {path}"),
                "it exists already",
            ));
            let mut retry = request.clone();
            if retry.get("path").is_some() {
                retry["overwrite"] = json!(true);
                actions.push(action(
                    2,
                    pillar.name(),
                    retry,
                    "replace it",
                    "only if the existing file should go",
                ));
            }
            format!("{path} exists; choose another path or set overwrite (it can be undone).")
        }
        ErrorCode::SyntaxError | ErrorCode::ToolExecutionFailed
            if matches!(pillar, Operation::Change | Operation::EditCode) =>
        {
            let mut retry = request.clone();
            retry["options"]["dryRun"] = json!(true);
            actions.push(action(
                1,
                "read",
                json!({"target": path, "view": "skeleton"}),
                format!("re-read the structure of {path}"),
                "the replacement did not fit the code around it",
            ));
            actions.push(action(
                2,
                "change",
                retry,
                "preview a corrected edit",
                "nothing was written",
            ));
            "The post-edit check failed and the change was rolled back: every file is as before. \
             Fix the replacement (balanced brackets, indentation) and preview again."
                .to_owned()
        }
        ErrorCode::Busy => {
            actions.push(action(
                1,
                "manage",
                json!({"command": "status"}),
                "check what is going on",
                "another writer holds the edit lock",
            ));
            "Another ironbees process is changing this project; retry when it is done.".to_owned()
        }
        ErrorCode::StateNotFound => {
            actions.push(action(
                1,
                "manage",
                json!({"command": "history"}),
                "list the transactions",
                "the id is unknown or was pruned",
            ));
            "No transaction with that id; list the history for valid ids.".to_owned()
        }
        ErrorCode::InvalidState => {
            actions.push(action(
                1,
                "manage",
                json!({"command": "history"}),
                "list the transactions",
                "",
            ));
            "That transaction cannot be undone or redone in its state (undo an edit, redo an undone edit)."
                .to_owned()
        }
        ErrorCode::InvalidArgument => {
            "The request is malformed; the message names the field. Compare with the tool's input \
             schema and retry."
                .to_owned()
        }
        ErrorCode::CommandNotFound => {
            // Not the code's fault: undoing an edit would not help (issue 24).
            "The tool that runs the tests or the build is not installed where the sandbox \
             looks; the message says how to install it. Nothing was run, so nothing failed: \
             do not undo edits because of this."
                .to_owned()
        }
        ErrorCode::UnknownLanguage | ErrorCode::BinaryFile => {
            actions.push(action(
                1,
                "read",
                json!({"target": path, "view": "full"}),
                format!("read {path} as text"),
                "no grammar: structure views are unavailable",
            ));
            "No parser for this file; read it as text instead.".to_owned()
        }
        _ => return None,
    };
    Some(RecoveryStrategy { code: info.code, strategy, actions: finish(actions) })
}

/// The path a request is about: `target`, `path`, or the failing edit's.
fn request_path(request: &Value) -> Option<String> {
    for key in ["target", "path", "filePath"] {
        if let Some(s) = request[key].as_str() {
            return Some(s.to_owned());
        }
    }
    request["edits"][0]["path"].as_str().map(str::to_owned)
}

/// The request with the failing edit restricted to a candidate's lines.
fn with_line_range(
    request: &Value,
    edit: Option<usize>,
    candidate: &MatchCandidate,
) -> Option<Value> {
    let i = edit?;
    let range = lines_arg(candidate, 0);
    let mut retry = request.clone();
    let e = retry.get_mut("edits")?.get_mut(i)?;
    e["lineRange"] = json!(range);
    Some(retry)
}

/// The request with every `expectedHash` set to `current`.
fn with_expected_hash(request: &Value, current: &str) -> Option<Value> {
    let mut retry = request.clone();
    let edits = retry.get_mut("edits")?.as_array_mut()?;
    for e in edits {
        if e.get("expectedHash").is_some() {
            e["expectedHash"] = json!(current);
        }
    }
    Some(retry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(code: ErrorCode, path: &str, details: Value) -> ErrorInfo {
        let mut i = ErrorInfo::new(code, "m").with_path(path);
        if !details.is_null() {
            i.details = serde_json::from_value(details).unwrap();
        }
        i
    }

    fn change_req() -> Value {
        json!({"edits": [{"path": "a.py", "targetString": "x = 1", "replacementString": "x = 2",
                          "expectedHash": "old"}], "options": {"dryRun": false}})
    }

    /// (code, details, pillar) → the first action's tool and a fragment of its
    /// arguments, and a phrase of the strategy.
    #[test]
    fn recovery_table() {
        let cand = json!([{"lineRange": {"start": 10, "end": 12}, "similarity": 0.8, "preview": "x  = 1"}]);
        let two = json!([{"lineRange": {"start": 3, "end": 3}, "preview": "x = 1"},
                         {"lineRange": {"start": 9, "end": 9}, "preview": "x = 1"}]);
        let cases: Vec<(ErrorCode, Value, Operation, &str, Value, &str)> = vec![
            (
                ErrorCode::NoMatch,
                json!({"editIndex": 0, "candidates": cand}),
                Operation::Change,
                "read",
                json!({"target": "a.py", "view": "fragment", "lineRange": "7-15"}),
                "lines 10-12 (80% similar)",
            ),
            (
                ErrorCode::NoMatch,
                json!({"editIndex": 0, "similarNames": ["Server.start"]}),
                Operation::Change,
                "navigate",
                json!({"action": "definition", "target": "Server.start"}),
                "closest is `Server.start`",
            ),
            (
                ErrorCode::NoMatch,
                Value::Null,
                Operation::Change,
                "read",
                json!({"target": "a.py", "view": "skeleton"}),
                "not found",
            ),
            (
                ErrorCode::AmbiguousMatch,
                json!({"editIndex": 0, "candidates": two}),
                Operation::Change,
                "change",
                json!({"edits": [{"lineRange": "3"}]}),
                "2 places",
            ),
            (
                ErrorCode::AmbiguousMatch,
                json!({"targets": ["src/a.py:3 function parse", "src/b.py:9 function parse"]}),
                Operation::Navigate,
                "navigate",
                json!({"target": "src/a.py:3"}),
                "names 2 definitions",
            ),
            (
                ErrorCode::HashMismatch,
                json!({"editIndex": 0, "currentHash": "new"}),
                Operation::Change,
                "read",
                json!({"target": "a.py", "view": "full"}),
                "hash new",
            ),
            (
                ErrorCode::HashMismatch,
                json!({"changedBy": "tx9"}),
                Operation::Manage,
                "manage",
                json!({"command": "history", "id": "tx9"}),
                "later transaction tx9",
            ),
            (
                ErrorCode::PathOutsideRoot,
                Value::Null,
                Operation::Read,
                "understand",
                json!({"target": "a.py"}),
                "relative to the project root",
            ),
            (
                ErrorCode::IndexStale,
                Value::Null,
                Operation::Understand,
                "manage",
                json!({"command": "rebuild"}),
                "rebuild",
            ),
            (
                ErrorCode::NotFound,
                json!({"similarNames": ["parse_args"]}),
                Operation::Navigate,
                "navigate",
                json!({"target": "parse_args"}),
                "closest names",
            ),
            (
                ErrorCode::SyntaxError,
                Value::Null,
                Operation::Change,
                "read",
                json!({"view": "skeleton"}),
                "rolled back",
            ),
        ];
        for (code, details, pillar, tool, args, phrase) in cases {
            let r = recovery_for(&info(code, "a.py", details), pillar, &change_req())
                .unwrap_or_else(|| panic!("{code}: no recovery"));
            assert_eq!(r.code, code);
            assert!(r.strategy.contains(phrase), "{code}: {}", r.strategy);
            let first = &r.actions[0];
            assert_eq!(first.tool, tool, "{code}");
            assert!(contains(&first.arguments, &args), "{code}: {} lacks {args}", first.arguments);
        }
        assert!(
            recovery_for(
                &info(ErrorCode::Cancelled, "", Value::Null),
                Operation::Read,
                &Value::Null
            )
            .is_none()
        );
        // A missing test tool is no reason to undo an edit (issue 24).
        let r = recovery_for(
            &info(ErrorCode::CommandNotFound, "", Value::Null),
            Operation::Manage,
            &json!({"command": "test"}),
        )
        .unwrap();
        assert!(r.strategy.contains("do not undo"), "{}", r.strategy);
        assert!(r.actions.iter().all(|a| a.arguments["command"] != "undo"), "{:?}", r.actions);
    }

    #[test]
    fn hash_mismatch_retry_carries_the_current_hash() {
        let r = recovery_for(
            &info(ErrorCode::HashMismatch, "a.py", json!({"currentHash": "new"})),
            Operation::Change,
            &change_req(),
        )
        .unwrap();
        assert_eq!(r.actions[1].arguments["edits"][0]["expectedHash"], "new");
        assert_eq!(r.actions[1].arguments["edits"][0]["targetString"], "x = 1");
    }

    /// `want` is a subset of `got` (objects by key, arrays by position).
    fn contains(got: &Value, want: &Value) -> bool {
        match (got, want) {
            (Value::Object(g), Value::Object(w)) => {
                w.iter().all(|(k, v)| g.get(k).is_some_and(|gv| contains(gv, v)))
            }
            (Value::Array(g), Value::Array(w)) => {
                w.iter().enumerate().all(|(i, v)| g.get(i).is_some_and(|gv| contains(gv, v)))
            }
            _ => got == want,
        }
    }
}
