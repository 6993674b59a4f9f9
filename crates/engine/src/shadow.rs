//! Shadow mode: `read`, `change` and `write` against a run's overlay instead of
//! the working tree.
//!
//! An agent run must not touch the working tree before its change is validated
//! and approved (seed 002's ShadowFS), yet its coder calls the same tools, with
//! the same schemas, as any client. So the three file tools have a second entry
//! point taking an [`edit::Overlay`]: reads see the overlay's version of a file,
//! edits are planned by the edit engine against it (matches, hashes, conflicts
//! checked exactly as for the disk) and land in the overlay, never on disk. The
//! post-edit syntax check applies as well: an edit that adds syntax errors is
//! refused, leaving the overlay as it was. Everything else (the index, navigation)
//! still describes the working tree; [`Registry::call_in`] says so in a warning
//! when a tool answers about a file the overlay changed.

use protocol::{
    ChangeRequest, ChangeResponse, FileChangeKind, Guidance, Op, ReadRequest, ReadResponse,
    Warning, WarningLevel, WriteRequest, WriteResponse,
};
use serde_json::Value;
use stdx::Call;

use crate::{
    Registry, Session, ToolError,
    change::{change_guidance, edit_request, syntax_regression},
    error::{Error, Result},
    registry::run_op,
    session::check_cancel,
};

impl Session {
    /// [`Session::read`] with the files `overlay` holds read from it.
    pub fn read_in(
        &self,
        req: &ReadRequest,
        overlay: &edit::Overlay,
        call: &Call<'_>,
    ) -> Result<ReadResponse> {
        self.read_from(req, Some(overlay), call)
    }

    /// [`Session::change`] on the overlay: with `dryRun: false` the planned
    /// contents replace the overlay's (the working tree is not written), unless an
    /// edited file gains syntax errors (`SYNTAX_ERROR`, the overlay unchanged).
    /// Without it, a preview, as `change` answers. No transaction, no impact
    /// report (the index describes the working tree, not the overlay).
    pub fn change_in(
        &self,
        req: &ChangeRequest,
        overlay: &mut edit::Overlay,
        call: &Call<'_>,
    ) -> Result<ChangeResponse> {
        check_cancel(call)?;
        let dry_run = req.options.dry_run.unwrap_or(true);
        let edit = edit_request(req)?;
        let edit::Preview { result, files } = self.edits().preview_over(&edit, overlay)?;
        let mut warnings = Vec::new();
        if !dry_run {
            let mut problems = Vec::new();
            for (f, v) in result.files.iter().zip(&files) {
                let (Some(after), false) = (&v.after, f.kind == FileChangeKind::Deleted) else {
                    continue;
                };
                let was = v.before.as_deref().map_or(0, |b| syntax_errors(&f.path, b));
                let path = f.new_path.as_deref().unwrap_or(&f.path);
                problems.extend(syntax_regression(path, was, after));
            }
            if !problems.is_empty() {
                return Err(Error::Edit(edit::Error::CheckFailed {
                    code: protocol::ErrorCode::SyntaxError,
                    message: format!(
                        "the change was not made: {} (fix the replacement and send it again)",
                        problems.join("; ")
                    ),
                }));
            }
            for (f, v) in result.files.iter().zip(files) {
                match &f.new_path {
                    Some(to) => {
                        overlay.insert(f.path.clone(), None);
                        overlay.insert(to.clone(), v.after);
                    }
                    None => {
                        overlay.insert(f.path.clone(), v.after);
                    }
                }
            }
        }
        let mut result = result;
        result.dry_run = dry_run;
        let guidance = change_guidance(req, &result, None, None, dry_run, &mut warnings);
        Ok(ChangeResponse {
            success: true,
            dry_run,
            transaction_id: None,
            rollback_available: false,
            edit_result: result,
            impact: None,
            check: None,
            guidance: Guidance { warnings, ..guidance },
        })
    }

    /// [`Session::write`] into the overlay.
    pub fn write_in(
        &self,
        req: &WriteRequest,
        overlay: &mut edit::Overlay,
        call: &Call<'_>,
    ) -> Result<WriteResponse> {
        check_cancel(call)?;
        let (rel, how, content, edit) = self.write_request(req, Some(overlay))?;
        let edit::Preview { mut result, files } = self.edits().preview_over(&edit, overlay)?;
        let mut warnings = Vec::new();
        if let Some(problem) = syntax_regression(&rel, 0, content.as_bytes()) {
            warnings.push(Warning {
                severity: WarningLevel::Warning,
                code: "SYNTAX_ERRORS".into(),
                message: problem,
                affected: vec![rel.clone()],
                mitigation: Some("fix it with `change`".into()),
            });
        }
        if !req.dry_run {
            for v in files {
                overlay.insert(v.path, v.after);
            }
        }
        result.dry_run = req.dry_run;
        let verb = if req.dry_run { "Would create" } else { "Created" };
        Ok(WriteResponse {
            path: rel.clone(),
            dry_run: req.dry_run,
            transaction_id: None,
            edit_result: result,
            guidance: Guidance {
                context_summary: format!(
                    "{verb} {rel} from {how} ({} lines) in the run's workspace.",
                    content.lines().count()
                ),
                warnings,
                ..Guidance::default()
            },
        })
    }
}

fn syntax_errors(path: &str, bytes: &[u8]) -> u32 {
    code_index::Language::from_path(std::path::Path::new(path))
        .map_or(0, |l| code_index::analyze(l, bytes).error_nodes)
}

impl Registry {
    /// [`Registry::call`] in shadow mode: `read`, `change` and `write` go to the
    /// overlay ([`Session::read_in`], ...); the other tools answer about the
    /// working tree, with a warning when their answer names a file the overlay
    /// changed.
    pub fn call_in(
        &self,
        session: &Session,
        call: &Call<'_>,
        name: &str,
        arguments: Value,
        overlay: &mut edit::Overlay,
    ) -> std::result::Result<Value, ToolError> {
        if self.get(name).is_none() {
            return self.call(session, call, name, arguments);
        }
        match name {
            n if n == ReadRequest::OPERATION.name() => {
                run_op(arguments, |r: ReadRequest| session.read_in(&r, overlay, call))
            }
            n if n == ChangeRequest::OPERATION.name() => {
                run_op(arguments, |r: ChangeRequest| session.change_in(&r, overlay, call))
            }
            n if n == WriteRequest::OPERATION.name() => {
                run_op(arguments, |r: WriteRequest| session.write_in(&r, overlay, call))
            }
            _ => {
                let mut answer = self.call(session, call, name, arguments)?;
                let text = answer.to_string();
                let stale: Vec<&str> =
                    overlay.keys().map(String::as_str).filter(|p| text.contains(p)).collect();
                if let (false, Some(Value::Object(g))) =
                    (stale.is_empty(), answer.get_mut("guidance"))
                {
                    let warning = Warning {
                        severity: WarningLevel::Info,
                        code: "SHADOW_STALE".into(),
                        message: format!(
                            "this answer describes the working tree, and this run has changed {}: \
                             `read` them for the run's version",
                            stale.join(", ")
                        ),
                        affected: stale.iter().map(|s| (*s).to_owned()).collect(),
                        mitigation: None,
                    };
                    let warnings = g.entry("warnings").or_insert_with(|| Value::Array(vec![]));
                    if let (Value::Array(w), Ok(v)) = (warnings, serde_json::to_value(warning)) {
                        w.push(v);
                    }
                }
                Ok(answer)
            }
        }
    }
}
