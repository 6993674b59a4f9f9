//! Shadow mode: every tool call inside an agent run stays in the run's shadow.
//!
//! An agent run must not touch the working tree, the edit history or the outside
//! before its change is validated and approved (seed 002's ShadowFS), yet its
//! agents call the same tools, with the same schemas, as any client — and a
//! project's `agent.yaml` may list any of them. So the shadow decides by a
//! tool's *effect*, not its name ([`shadow_route`], a pure function tested as a
//! table):
//!
//! - reads and edits of files go to the run's [`edit::Overlay`]: reads see the
//!   overlay's version, edits are planned by the edit engine against it
//!   (matches, hashes, conflicts, the syntax check) and land in it, never on
//!   disk (`read`, `change`, `write` and their superseded forms);
//! - other reads answer from the project, with a warning naming the files the
//!   run has changed that the answer mentions;
//! - project commands (`build`, `test`, `exec`, `manage test`) run in the run's
//!   workspace copy, brought up to date with the overlay first;
//! - anything else (`undo`, `redo`, `manage undo|redo|rebuild`, and outside
//!   tools that are not declared read-only) is refused with `SHADOW_REFUSED`.

use std::path::PathBuf;

use protocol::{
    BuildRequest, ChangeRequest, ChangeResponse, EditCodeRequest, Effect, ErrorCode, ErrorInfo,
    ExecRequest, FileChangeKind, Guidance, ManageProjectRequest, ManageRequest, Operation,
    ReadCodeRequest, ReadRequest, ReadResponse, TestRequest, Warning, WarningLevel, WriteRequest,
    WriteResponse,
};
use serde_json::Value;
use stdx::Call;

use crate::{
    Registry, Session, ToolError, ToolSpec,
    change::{change_guidance, edit_request, syntax_regression},
    compat::{edit_code_request, read_code_request},
    error::{Error, Result},
    registry::run_op,
    session::check_cancel,
};

/// Where a tool call goes inside a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShadowRoute {
    /// Reads or edits the run's overlay.
    Overlay,
    /// Answers from the project as it is (a read): run as it is.
    Read,
    /// A project command: runs in the run's workspace copy.
    Copy,
    /// Refused with `SHADOW_REFUSED`, for this reason.
    Refuse(String),
}

/// Where a call of `spec` with `args` goes inside a run: by the tool's effect,
/// and for `manage` by its command.
pub fn shadow_route(spec: &ToolSpec, args: &Value) -> ShadowRoute {
    use Operation as O;
    let refuse = |what: &str| {
        ShadowRoute::Refuse(format!(
            "`{}` {what}, which an agent run may not touch before its change is approved and \
             applied",
            spec.name
        ))
    };
    match (spec.operation, spec.effect) {
        (Some(O::Read | O::ReadCode | O::Change | O::EditCode | O::Write), _) => {
            ShadowRoute::Overlay
        }
        (Some(O::Manage | O::ManageProject), _) => {
            let command = args.get("command").and_then(Value::as_str).unwrap_or("status");
            match command {
                "status" | "history" => ShadowRoute::Read,
                "test" => ShadowRoute::Copy,
                _ => refuse("changes the edit history or rebuilds the index"),
            }
        }
        (Some(O::Build | O::Test | O::Exec), _) => ShadowRoute::Copy,
        (_, Effect::Read) => ShadowRoute::Read,
        (_, Effect::History) => refuse("changes the edit history"),
        (_, Effect::Edit) => refuse("writes files outside the run's overlay"),
        (_, Effect::Run) => refuse("runs commands outside the run's workspace copy"),
        _ => refuse(
            "can act on the world outside the project (configure its server's tools read-only if they only read)",
        ),
    }
}

/// Brings a run's workspace copy up to date with its overlay, and says where it
/// is (or why it could not).
pub type Materialize<'a> = &'a dyn Fn(&edit::Overlay) -> std::result::Result<PathBuf, String>;

/// What a tool call inside a run can see and change: the run's overlay, and a
/// way to bring the run's workspace copy up to date with it for commands.
pub struct Shadow<'a> {
    pub overlay: &'a mut edit::Overlay,
    /// Materializes the project with the overlay on top; the directory project
    /// commands run in. None: commands are refused (a run without a workspace).
    pub workspace: Option<Materialize<'a>>,
}

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
        let mut guidance = change_guidance(req, &result, None, None, dry_run, &mut warnings);
        if !dry_run {
            // No transaction in a run: the change is in the run's overlay, which
            // the run applies at its end. "Nothing changed" would send a model
            // to redo a correct edit.
            let files: Vec<&str> = result.files.iter().map(|f| f.path.as_str()).collect();
            let (added, removed) = result
                .files
                .iter()
                .fold((0, 0), |(a, r), f| (a + f.lines_added, r + f.lines_removed));
            guidance.context_summary = format!(
                "Applied in the run's workspace (the working tree changes when the run's change \
                 is approved) to {} (+{added} -{removed}).",
                files.join(", ")
            );
            guidance.next_actions.retain(|a| a.tool != "manage");
        }
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
    /// [`Registry::call`] inside a run's shadow (see the module's doc): the call
    /// goes where [`shadow_route`] says.
    pub fn call_in(
        &self,
        session: &Session,
        call: &Call<'_>,
        name: &str,
        arguments: Value,
        shadow: &mut Shadow<'_>,
    ) -> std::result::Result<Value, ToolError> {
        let Some(tool) = self.get(name) else {
            return self.call(session, call, name, arguments);
        };
        let span = crate::registry::tool_span(&tool.spec);
        let _enter = span.enter();
        let started = std::time::Instant::now();
        let out = Self::route_in(tool, session, call, name, arguments, shadow);
        crate::registry::record_outcome(&span, &tool.spec, started, &out);
        out
    }

    fn route_in(
        tool: &crate::Tool,
        session: &Session,
        call: &Call<'_>,
        name: &str,
        arguments: Value,
        shadow: &mut Shadow<'_>,
    ) -> std::result::Result<Value, ToolError> {
        match shadow_route(&tool.spec, &arguments) {
            ShadowRoute::Refuse(reason) => Err(ToolError {
                info: ErrorInfo::new(ErrorCode::ShadowRefused, reason),
                guidance: Guidance {
                    context_summary: "Work with `read`, `change` and `write` (they act on the \
                                      run's own copy) and the read-only tools."
                        .into(),
                    ..Guidance::default()
                },
            }),
            ShadowRoute::Overlay => {
                let overlay = &mut *shadow.overlay;
                match tool.spec.operation {
                    Some(Operation::Read) => {
                        run_op(arguments, |r: ReadRequest| session.read_in(&r, overlay, call))
                    }
                    Some(Operation::ReadCode) => run_op(arguments, |r: ReadCodeRequest| {
                        session.read_in(&read_code_request(&r), overlay, call)
                    }),
                    Some(Operation::Change) => {
                        run_op(arguments, |r: ChangeRequest| session.change_in(&r, overlay, call))
                    }
                    Some(Operation::EditCode) => run_op(arguments, |r: EditCodeRequest| {
                        session.change_in(&edit_code_request(&r)?, overlay, call)
                    }),
                    _ => run_op(arguments, |r: WriteRequest| session.write_in(&r, overlay, call)),
                }
            }
            ShadowRoute::Copy => {
                let at = match shadow.workspace {
                    Some(materialize) => materialize(shadow.overlay).map_err(|e| ToolError {
                        info: ErrorInfo::new(
                            ErrorCode::Io,
                            format!("preparing the run's workspace: {e}"),
                        ),
                        guidance: Guidance::default(),
                    }),
                    None => Err(ToolError {
                        info: ErrorInfo::new(
                            ErrorCode::ShadowRefused,
                            format!(
                                "`{name}` needs the run's workspace copy, which this run has not"
                            ),
                        ),
                        guidance: Guidance::default(),
                    }),
                }?;
                match tool.spec.operation {
                    Some(Operation::Build) => {
                        run_op(arguments, |r: BuildRequest| session.build_at(&r, &at, call))
                    }
                    Some(Operation::Test) => {
                        run_op(arguments, |r: TestRequest| session.test_at(&r, &at, call))
                    }
                    Some(Operation::ManageProject) => {
                        run_op(arguments, |r: ManageProjectRequest| {
                            session.manage_test_at(&r.0, &at, call)
                        })
                    }
                    Some(Operation::Manage) => {
                        run_op(arguments, |r: ManageRequest| session.manage_test_at(&r, &at, call))
                    }
                    _ => run_op(arguments, |r: ExecRequest| session.exec_at(&r, &at, call)),
                }
            }
            ShadowRoute::Read => {
                let mut answer = (tool.handler)(session, call, arguments)?;
                let stale = mentioned(&answer, shadow.overlay);
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
                        affected: stale.clone(),
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

/// The overlay's paths an answer names: a string value that is the path, or
/// the path followed by `:line` (not a substring of some other text: `a.py`
/// is not mentioned by `data.py`).
fn mentioned(answer: &Value, overlay: &edit::Overlay) -> Vec<String> {
    fn walk(v: &Value, out: &mut std::collections::BTreeSet<String>, overlay: &edit::Overlay) {
        match v {
            Value::String(s) => {
                let path = s.split_once(':').map_or(s.as_str(), |(p, rest)| {
                    if rest.chars().next().is_some_and(|c| c.is_ascii_digit()) { p } else { s }
                });
                if overlay.contains_key(path) {
                    out.insert(path.to_owned());
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out, overlay)),
            Value::Object(m) => m.values().for_each(|x| walk(x, out, overlay)),
            _ => {}
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk(answer, &mut out, overlay);
    out.into_iter().collect()
}
