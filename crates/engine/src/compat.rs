//! The superseded tools, each answered by a pillar. Answers that are not the
//! pillar's own carry guidance naming the pillar that supersedes the tool.

use protocol::{
    AnalyzeRelationshipRequest, AnalyzeRelationshipResponse, ChangeOptions, ChangeRequest,
    ChangeResponse, Depth, Direction, EditCodeRequest, GetHierarchyRequest, Guidance,
    ListDirectoryRequest, ListDirectoryResponse, ManageProjectRequest, ManageResponse,
    NavigateAction, NavigateRequest, NavigateResponse, NextAction, ReadCodeRequest, ReadRequest,
    ReadResponse, RelationMode, SearchProjectRequest, SearchProjectResponse, UnderstandInclude,
    UnderstandRequest, Warning, WarningLevel,
};
use serde_json::json;
use stdx::Call;

use crate::{
    Session,
    error::{Error, Result},
};

/// `read_code` is `read`.
pub(crate) fn read_code_request(req: &ReadCodeRequest) -> ReadRequest {
    ReadRequest {
        target: req.file_path.clone(),
        view: req.view,
        line_range: req.line_range,
        symbol: None,
        against: None,
    }
}

/// `edit_code` is `change` (applied unless it asks for a dry run, as it did).
pub(crate) fn edit_code_request(req: &EditCodeRequest) -> Result<ChangeRequest> {
    let edits = req
        .edits
        .iter()
        .enumerate()
        .map(|(i, e)| {
            e.to_op(req.file_path.as_deref())
                .map_err(|m| Error::InvalidArgument(format!("bad edit {i}: {m}")))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ChangeRequest {
        description: Some("edit_code".into()),
        target: None,
        edits,
        options: ChangeOptions {
            dry_run: Some(req.dry_run.unwrap_or(false)),
            ..Default::default()
        },
    })
}

/// Guidance of a superseded tool's answer: the summary, a pointer to the pillar
/// that answers with more in one call, and the next step.
fn superseded(by: &str, summary: String, next: Option<NextAction>) -> Guidance {
    Guidance {
        context_summary: format!(
            "{summary} (this tool is superseded by `{by}`, which answers with more in one call)"
        ),
        next_actions: next.into_iter().collect(),
        warnings: vec![Warning {
            severity: WarningLevel::Info,
            code: "SUPERSEDED".into(),
            message: format!("prefer `{by}`"),
            affected: vec![],
            mitigation: None,
        }],
        recovery: None,
    }
}

fn next(tool: &str, arguments: serde_json::Value, description: &str) -> Option<NextAction> {
    Some(NextAction {
        priority: 1,
        tool: tool.into(),
        arguments,
        description: description.into(),
        rationale: String::new(),
    })
}

impl Session {
    pub fn search_project(
        &self,
        req: &SearchProjectRequest,
        call: &Call<'_>,
    ) -> Result<SearchProjectResponse> {
        let (symbols, files, warnings) =
            self.find_symbols_and_files(&req.query, req.max_results.unwrap_or(20), call)?;
        let summary = format!(
            "{} definition(s) and {} file(s) for {:?}",
            symbols.len(),
            files.len(),
            req.query
        );
        let follow = files.first().map(|f| json!({"target": f.path}));
        let mut guidance = superseded(
            "understand",
            summary,
            follow.and_then(|a| next("understand", a, "understand the best file")),
        );
        guidance.warnings.extend(warnings);
        Ok(SearchProjectResponse { symbols, files, guidance })
    }

    pub fn read_code(&self, req: &ReadCodeRequest, call: &Call<'_>) -> Result<ReadResponse> {
        self.read(&read_code_request(req), call)
    }

    pub fn edit_code(&self, req: &EditCodeRequest, call: &Call<'_>) -> Result<ChangeResponse> {
        self.change(&edit_code_request(req)?, call)
    }

    pub fn analyze_relationship(
        &self,
        req: &AnalyzeRelationshipRequest,
        call: &Call<'_>,
    ) -> Result<AnalyzeRelationshipResponse> {
        let dir = req.direction.unwrap_or_default();
        let up = matches!(dir, Direction::Upstream | Direction::Both);
        let down = matches!(dir, Direction::Downstream | Direction::Both);
        let depth = req.max_depth.unwrap_or(1).clamp(1, 5);
        let nav = |action| {
            self.navigate(
                &NavigateRequest {
                    action,
                    target: req.target.clone(),
                    depth: Some(depth),
                    limit: Some(100),
                    path: None,
                },
                call,
            )
        };
        let mut out = AnalyzeRelationshipResponse {
            target: req.target.clone(),
            dependents: None,
            dependencies: None,
            external: None,
            references: None,
            total: None,
            callers: None,
            callees: None,
            guidance: Guidance::default(),
        };
        match req.mode {
            RelationMode::Dependencies => {
                let u = self.understand(
                    &UnderstandRequest {
                        target: req.target.clone(),
                        depth: Depth::Standard,
                        include: UnderstandInclude {
                            skeleton: false,
                            report: false,
                            call_graph: false,
                            ..Default::default()
                        },
                        budget: Some(6000),
                    },
                    call,
                )?;
                if let Some(f) = u.files.first() {
                    out.dependents = up.then(|| f.dependents.clone());
                    out.dependencies = down.then(|| f.dependencies.clone());
                    out.external = Some(f.external.clone());
                }
                out.guidance = superseded(
                    "understand",
                    format!("dependencies of {}", req.target),
                    next("understand", json!({"target": req.target}), "everything about it"),
                );
            }
            RelationMode::References => {
                let r = nav(NavigateAction::References)?;
                out.references = Some(r.results);
                out.total = Some(r.total);
                out.guidance = superseded("navigate", r.guidance.context_summary, None);
            }
            _ => {
                out.callers = if up { Some(nav(NavigateAction::Callers)?.results) } else { None };
                out.callees = if down { Some(nav(NavigateAction::Callees)?.results) } else { None };
                out.guidance = superseded(
                    "navigate",
                    format!("calls of {}", req.target),
                    next(
                        "understand",
                        json!({"target": req.target}),
                        "callers, callees and impact at once",
                    ),
                );
            }
        }
        Ok(out)
    }

    pub fn list_directory(
        &self,
        req: &ListDirectoryRequest,
        call: &Call<'_>,
    ) -> Result<ListDirectoryResponse> {
        let dir = req.path.clone().unwrap_or_default();
        let entries = self.directory_entries(&dir, req.depth.unwrap_or(1), call)?;
        let path = if dir.is_empty() { ".".to_owned() } else { dir };
        let guidance = superseded(
            "understand",
            format!("{} entries under {path}", entries.len()),
            next("understand", json!({"target": path}), "the directory's most central files"),
        );
        Ok(ListDirectoryResponse { path, entries, guidance })
    }

    pub fn get_hierarchy(
        &self,
        req: &GetHierarchyRequest,
        call: &Call<'_>,
    ) -> Result<NavigateResponse> {
        self.navigate(
            &NavigateRequest {
                action: NavigateAction::Hierarchy,
                target: req.target.clone(),
                depth: req.depth,
                limit: None,
                path: None,
            },
            call,
        )
    }

    pub fn manage_project(
        &self,
        req: &ManageProjectRequest,
        call: &Call<'_>,
    ) -> Result<ManageResponse> {
        self.manage(&req.0, call)
    }
}
