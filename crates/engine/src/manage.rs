//! `manage`: status, undo, redo, history, rebuild, test.

use std::path::Path;

use protocol::{
    Guidance, ManageCommand, ManageRequest, ManageResponse, ProcessMemoryInfo, ProjectStatus,
    RebuildReport, RebuildScope, TestResult,
};
use serde_json::json;
use stdx::Call;

use crate::{
    Session,
    error::{Error, Result},
    guidance::{action, finish},
    session::check_cancel,
};

impl Session {
    pub fn manage(&self, req: &ManageRequest, call: &Call<'_>) -> Result<ManageResponse> {
        self.manage_in(req, None, call)
    }

    /// `manage test` in a run's workspace copy (a tool call inside a run; the
    /// shadow routes no other command here).
    pub(crate) fn manage_test_at(
        &self,
        req: &ManageRequest,
        at: &Path,
        call: &Call<'_>,
    ) -> Result<ManageResponse> {
        self.manage_in(req, Some(at), call)
    }

    /// `manage`, its tests run at `at` when given (else in the project).
    fn manage_in(
        &self,
        req: &ManageRequest,
        at: Option<&Path>,
        call: &Call<'_>,
    ) -> Result<ManageResponse> {
        check_cancel(call)?;
        let mut resp = ManageResponse {
            command: req.command,
            status: None,
            edit_result: None,
            history: Vec::new(),
            rebuild: None,
            test: None,
            guidance: Guidance::default(),
        };
        let mut actions = Vec::new();
        let mut warnings = Vec::new();
        let summary = match req.command {
            ManageCommand::Status => {
                warnings = self.refresh(call, false)?;
                let s = self.index_db().summary()?;
                let test_tool = self
                    .detect_at(&self.root, false)
                    .ok()
                    .map(|p| format!("{:?}", p.test_tool).to_lowercase());
                let recent = self.edits().history(5)?;
                let fresh = warnings.is_empty();
                let status = ProjectStatus {
                    root: self.root.display().to_string(),
                    files: s.files,
                    symbols: s.symbols,
                    references: s.references,
                    languages: s.languages,
                    files_with_syntax_errors: s.files_with_syntax_errors,
                    last_update: s.last_update,
                    fresh,
                    freshness: self.freshness_mode().to_owned(),
                    test_tool,
                    recent_edits: recent,
                    memory: stdx::process_memory().map(|m| ProcessMemoryInfo {
                        resident_bytes: m.resident,
                        peak_resident_bytes: m.peak_resident,
                    }),
                };
                let text = format!(
                    "{} files, {} symbols indexed{} ({}); {} recent edit(s).",
                    status.files,
                    status.symbols,
                    if fresh { ", up to date" } else { ", possibly stale" },
                    status.freshness,
                    status.recent_edits.len()
                );
                actions.push(action(
                    1,
                    "understand",
                    json!({"target": "."}),
                    "the most central files of the project",
                    "",
                ));
                if let Some(t) = status.recent_edits.first() {
                    actions.push(action(
                        2,
                        "manage",
                        json!({"command": "history", "id": t.id}),
                        "show the newest edit's diff",
                        "",
                    ));
                }
                resp.status = Some(status);
                text
            }
            ManageCommand::Undo | ManageCommand::Redo => {
                let undo = req.command == ManageCommand::Undo;
                let r = if undo {
                    self.edits().undo(req.id.as_deref(), req.dry_run)?
                } else {
                    self.edits().redo(req.id.as_deref(), req.dry_run)?
                };
                if !req.dry_run {
                    warnings = self.refresh_after_edit(call);
                }
                let files: Vec<String> = r.files.iter().map(|f| f.path.clone()).collect();
                let verb = if undo { "Undid" } else { "Redid" };
                let text = format!(
                    "{}{} {} file(s): {}{}.",
                    if req.dry_run { "Would have " } else { "" },
                    if req.dry_run {
                        verb.to_lowercase().replace("did", "done")
                    } else {
                        verb.to_owned()
                    },
                    files.len(),
                    files.join(", "),
                    r.transaction_id
                        .as_ref()
                        .map(|t| format!(" (transaction {t})"))
                        .unwrap_or_default()
                );
                if !req.dry_run {
                    let other = if undo { "redo" } else { "undo" };
                    actions.push(action(
                        1,
                        "manage",
                        json!({"command": other}),
                        format!("{other} it again"),
                        "every undo and redo is reversible",
                    ));
                    if let Some(f) = files.first() {
                        actions.push(action(
                            2,
                            "read",
                            json!({"target": f}),
                            format!("read {f} as it is now"),
                            "",
                        ));
                    }
                } else {
                    actions.push(action(
                        1,
                        "manage",
                        json!({"command": req.command.as_str(), "id": req.id}),
                        "do it",
                        "",
                    ));
                }
                resp.edit_result = Some(r);
                text
            }
            ManageCommand::History => {
                if let Some(id) = &req.id {
                    let (summary, changes) = self.edits().transaction(id)?;
                    let text = format!(
                        "Transaction {} ({:?}, {:?}): {}.",
                        summary.id, summary.kind, summary.state, summary.description
                    );
                    resp.edit_result = Some(protocol::EditResult {
                        transaction_id: Some(summary.id.clone()),
                        dry_run: false,
                        files: changes,
                    });
                    resp.history = vec![summary];
                    text
                } else {
                    resp.history =
                        self.edits().history(req.limit.unwrap_or(20).clamp(1, 500) as usize)?;
                    if let Some(t) = resp.history.first() {
                        actions.push(action(
                            1,
                            "manage",
                            json!({"command": "history", "id": t.id}),
                            "show the newest transaction's diff",
                            "",
                        ));
                    }
                    format!("{} transaction(s), newest first.", resp.history.len())
                }
            }
            ManageCommand::Rebuild => {
                let scope = req.scope.unwrap_or_default();
                let r = self.rebuild(scope == RebuildScope::Full, call)?;
                resp.rebuild = Some(RebuildReport {
                    scope,
                    files_seen: r.files_seen,
                    added: r.added,
                    modified: r.modified,
                    deleted: r.deleted,
                    parsed: r.parsed,
                    duration_ms: r.duration_ms,
                });
                actions.push(action(
                    1,
                    "manage",
                    json!({"command": "status"}),
                    "see the index's state",
                    "",
                ));
                format!(
                    "Index rebuilt ({}): {} files seen, {} parsed, {} added, {} modified, {} deleted in {} ms.",
                    if scope == RebuildScope::Full { "from scratch" } else { "incrementally" },
                    r.files_seen,
                    r.parsed,
                    r.added,
                    r.modified,
                    r.deleted,
                    r.duration_ms
                )
            }
            ManageCommand::Test => {
                let t = self.run_tests(&req.targets, at.unwrap_or(&self.root), call)?;
                if !t.success {
                    for f in t.failures.iter().take(3) {
                        match (&f.file, f.line) {
                            (Some(file), Some(line)) => actions.push(action(
                                1,
                                "read",
                                json!({"target": file, "view": "fragment", "lineRange": format!("{}-{}", line.saturating_sub(10).max(1), line + 10)}),
                                format!("read where {} failed", f.name),
                                "",
                            )),
                            _ => actions.push(action(1, "understand", json!({"target": f.name}), format!("understand {}", f.name), "")),
                        }
                    }
                    actions.push(action(
                        3,
                        "manage",
                        json!({"command": "undo"}),
                        "undo the last edit",
                        "if it caused the failures",
                    ));
                }
                let text = format!(
                    "Tests {}: {} total, {} passed, {} failed, {} skipped ({}, {:.1}s){}.",
                    if t.success { "passed" } else { "failed" },
                    t.total,
                    t.passed,
                    t.failed,
                    t.skipped,
                    t.tool,
                    t.duration_ms as f64 / 1000.0,
                    t.incomplete.as_ref().map(|w| format!("; incomplete: {w}")).unwrap_or_default()
                );
                resp.test = Some(t);
                text
            }
            _ => return Err(Error::InvalidArgument("unknown manage command".into())),
        };
        resp.guidance = Guidance {
            context_summary: summary,
            next_actions: finish(actions),
            warnings,
            recovery: None,
        };
        Ok(resp)
    }

    /// Runs the project's tests (or only `targets`: test files or names) in the
    /// sandbox.
    pub(crate) fn run_tests(
        &self,
        targets: &[String],
        root: &Path,
        call: &Call<'_>,
    ) -> Result<TestResult> {
        let root = root.to_owned();
        let project = self.detect_at(&root, false)?;
        let command = self.commands().test.clone().filter(|c| !c.is_empty());
        let targets = if command.is_some() { &[][..] } else { targets };
        call.progress.phase("running the tests", None);
        let (sb, setup) = self.sandbox()?;
        let hooks = sandbox::Hooks { on_output: None, cancel: Some(call.cancel) };
        let (result, _exec) = sandbox::test(
            sb,
            Some(&project),
            command.as_deref(),
            targets,
            &root,
            &setup.policy,
            &setup.env,
            &setup.env_removed,
            &hooks,
        )
        .map_err(|e| match e {
            sandbox::Error::Cancelled => Error::Cancelled,
            other => Error::Sandbox(other),
        })?;
        Ok(result)
    }
}
