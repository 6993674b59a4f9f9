//! `write`: create a file from content, a built-in template, or an existing file,
//! through the edit engine (journaled, undoable).

use protocol::{EditOp, EditRequest, Guidance, Warning, WarningLevel, WriteRequest, WriteResponse};
use serde_json::json;

use stdx::Call;

use crate::{
    Session,
    error::{Error, Result},
    guidance::{action, finish},
    session::check_cancel,
    templates,
};

impl Session {
    pub fn write(&self, req: &WriteRequest, call: &Call<'_>) -> Result<WriteResponse> {
        check_cancel(call)?;
        let (rel, how, content, edit) = self.write_request(req, None)?;
        let result = self.edits().apply(&edit)?;
        let mut warnings = Vec::new();
        if let Some(lang) = code_index::Language::from_path(std::path::Path::new(&rel)) {
            let errors = code_index::analyze(lang, content.as_bytes()).error_nodes;
            if errors > 0 {
                warnings.push(Warning {
                    severity: WarningLevel::Warning,
                    code: "SYNTAX_ERRORS".into(),
                    message: format!("{rel} has {errors} syntax error node(s) as written"),
                    affected: vec![rel.clone()],
                    mitigation: Some("fix it with `change`, or undo with `manage`".into()),
                });
            }
        }
        if !req.dry_run {
            self.mark_dirty();
            warnings.extend(self.refresh(call, false)?);
        }
        let new_hash = result.files.first().and_then(|f| f.new_hash.clone()).unwrap_or_default();
        let mut actions = vec![action(
            1,
            "read",
            json!({"target": rel, "view": "full"}),
            format!("read {rel}"),
            "check what was written",
        )];
        if req.dry_run {
            // The same request, applied: paths as the tools take them (root-relative).
            let mut again = serde_json::to_value(req).unwrap_or_default();
            again["dryRun"] = json!(false);
            again["path"] = json!(rel);
            if let Some(from) = &req.from {
                again["from"] = json!(self.rel_path(from).unwrap_or_else(|_| from.clone()));
            }
            actions.insert(
                0,
                action(1, "write", again, format!("create {rel}"), "the preview is fine"),
            );
        } else {
            actions.push(action(
                2,
                "change",
                json!({"edits": [{"path": rel, "targetString": "<text to replace>", "replacementString": "<new text>", "expectedHash": new_hash}], "options": {"dryRun": true}}),
                format!("fill in {rel}"),
                "",
            ));
            if let Some(tx) = &result.transaction_id {
                actions.push(action(
                    3,
                    "manage",
                    json!({"command": "undo", "id": tx}),
                    "undo the creation",
                    "",
                ));
            }
        }
        let summary = format!(
            "{} {rel} from {how} ({} lines){}.",
            if req.dry_run { "Would create" } else { "Created" },
            content.lines().count(),
            result
                .transaction_id
                .as_ref()
                .map(|t| format!(", transaction {t}"))
                .unwrap_or_default()
        );
        Ok(WriteResponse {
            path: rel,
            dry_run: req.dry_run,
            transaction_id: result.transaction_id.clone(),
            edit_result: result,
            guidance: Guidance {
                context_summary: summary,
                next_actions: finish(actions),
                warnings,
                recovery: None,
            },
        })
    }
}

impl Session {
    /// What `write` asks the edit engine: the file (root-relative), how its
    /// content was made, the content, and the request. A `from` file is read from
    /// `overlay` when it holds it.
    pub(crate) fn write_request(
        &self,
        req: &WriteRequest,
        overlay: Option<&edit::Overlay>,
    ) -> Result<(String, String, String, EditRequest)> {
        let rel = self.rel_path(&req.path)?;
        let (content, how) = match (&req.content, &req.template, &req.from) {
            (Some(c), None, None) => (c.clone(), "content".to_owned()),
            (None, Some(t), None) => (
                templates::render(&rel, t, &req.variables).map_err(Error::InvalidArgument)?,
                format!("template `{t}`"),
            ),
            (None, None, Some(from)) => {
                let from_rel = self.rel_path(from)?;
                let found = match overlay.and_then(|o| o.get(&from_rel)) {
                    Some(Some(b)) => String::from_utf8(b.clone()).ok(),
                    Some(None) => None,
                    None => std::fs::read_to_string(self.root.join(&from_rel)).ok(),
                };
                let text = found.ok_or_else(|| Error::NotFound {
                    message: format!("{from_rel}: no such text file to scaffold from"),
                    path: Some(from_rel.clone()),
                    similar: vec![],
                })?;
                (templates::scaffold_from(&text, &from_rel, &rel), format!("a copy of {from_rel}"))
            }
            (None, None, None) => {
                return Err(Error::InvalidArgument(format!(
                    "say what to write: `content`, `template` ({}), or `from` (an existing file)",
                    templates::NAMES.join(", ")
                )));
            }
            _ => {
                return Err(Error::InvalidArgument(
                    "give only one of `content`, `template`, `from`".into(),
                ));
            }
        };
        let edit = EditRequest {
            description: Some(
                req.description.clone().unwrap_or_else(|| format!("create {rel} from {how}")),
            ),
            target: None,
            edits: vec![EditOp::Create {
                path: rel.clone(),
                content: content.clone(),
                overwrite: req.overwrite,
                expected_hash: None,
            }],
            options: protocol::EditOptions { dry_run: req.dry_run, ..Default::default() },
        };
        Ok((rel, how, content, edit))
    }
}
