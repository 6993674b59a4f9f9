//! `change`: a verified, reversible edit with its impact.
//!
//! Always a dry run first (it validates every operation: matches, hashes, paths);
//! then the impact report from the before/after analyses of each file (which
//! definitions are added, removed, re-signed or changed, who calls them, which
//! tests cover them). Without `dryRun: false` that is the answer. With it, the
//! edit is applied as one journaled transaction whose post-edit check (no new
//! syntax errors; optionally the build) rolls everything back when it fails.

use std::collections::{BTreeMap, HashMap};

use code_graph::Snapshot;
use code_index::{Definition, FileId, Language};
use edit::CheckFailure;
use protocol::{
    AffectedFile, ChangeRequest, ChangeResponse, ChangedSymbol, CheckLevel, CheckReport,
    EditOptions, EditRequest, EditResult, ErrorCode, FileChange, FileChangeKind, Guidance,
    ImpactReport, RiskLevel, SuggestedTest, SymbolChange, TestPriority, Warning, WarningLevel,
};
use serde_json::json;

use stdx::Call;

use crate::{
    Session, analysis,
    error::{Error, Result},
    guidance::{action, finish},
    session::check_cancel,
};

impl Session {
    pub fn change(&self, req: &ChangeRequest, call: &Call<'_>) -> Result<ChangeResponse> {
        let dry_run = req.options.dry_run.unwrap_or(true);
        let include_impact = req.options.include_impact.unwrap_or(true);
        let auto_rollback = req.options.auto_rollback.unwrap_or(true);
        let check = req.options.check.unwrap_or_default();
        let edit = edit_request(req)?;
        // 1. One plan: it validates everything (matches, hashes, paths), gives the
        // diffs and contents, and is what the apply writes (its files are not read
        // and matched again; one changed since is HASH_MISMATCH, nothing written).
        let mut planned = self.edits().prepare(&edit)?;
        check_cancel(call)?;
        // 2. Each file's sides, parsed once each, and only when something reads
        // the parse: the impact (definitions) or the post-edit check (errors).
        let files = std::mem::take(&mut planned.preview.files);
        let want =
            Want { definitions: include_impact, errors: !dry_run && check != CheckLevel::None };
        let sides = sides(&planned.preview.result, files, want);
        // The snapshot only serves the impact: without it, the index is not
        // refreshed before the edit (it is after, for the files written).
        let (impact, mut warnings) = if include_impact {
            let preview = &planned.preview.result;
            // The plan just read the files: their hashes say whether the
            // snapshot is current for them, without reading them again.
            let touched: Vec<(&str, Option<&str>)> =
                preview.files.iter().map(|f| (f.path.as_str(), f.old_hash.as_deref())).collect();
            let (snap, warnings) = self.fresh_snapshot_for(call, &touched)?;
            let churn = self.churn(&git::ChurnOptions::default())?;
            let hot = analysis::hot_spots(&snap, Some(&churn), &self.root);
            (Some(impact(&snap, preview, &sides, &hot)), warnings)
        } else {
            (None, Vec::new())
        };
        // The guardrails: a blocker refuses the apply (a dry run reports it).
        if let Some(rules) = &self.options.guardrails {
            let report = guardrails(rules, &planned.preview.result, &sides);
            if report.blocked && !dry_run {
                return Err(Error::GuardrailBlocked(report));
            }
            warnings.extend(report.findings.iter().map(|f| {
                Warning {
                    severity: match f.severity {
                        protocol::GuardSeverity::Blocker => WarningLevel::Critical,
                        protocol::GuardSeverity::Warning => WarningLevel::Warning,
                        _ => WarningLevel::Info,
                    },
                    code: format!("GUARDRAIL_{}", f.rule_id),
                    message: format!("{} {}: {}", f.rule_id, f.rule_name, f.message),
                    affected: f.file.iter().cloned().collect(),
                    mitigation: (f.severity == protocol::GuardSeverity::Blocker)
                        .then(|| "the apply will be refused (GUARDRAIL_BLOCKED)".to_owned()),
                }
            }));
        }
        if dry_run {
            let preview = planned.preview.result;
            let guidance =
                change_guidance(req, &preview, impact.as_ref(), None, true, &mut warnings);
            return Ok(ChangeResponse {
                success: true,
                dry_run: true,
                transaction_id: None,
                rollback_available: false,
                edit_result: preview,
                impact,
                check: None,
                guidance: Guidance { warnings, ..guidance },
            });
        }
        // 3. Apply the plan, with the post-edit check inside the transaction: one
        // span (when telemetry is exported) from the first write to the commit.
        let span = tracing::info_span!(
            "edit.transaction",
            otel.name = "edit.transaction",
            ironbees.edit.edits = edit.edits.len(),
            ironbees.edit.check = ?check,
            ironbees.edit.transaction_id = tracing::field::Empty,
            ironbees.edit.check_passed = tracing::field::Empty,
        );
        let entered = span.enter();
        let sandbox = if check == CheckLevel::Build { Some(self.sandbox()?) } else { None };
        let root = self.root.clone();
        let mut run_check = |changes: &[FileChange]| -> std::result::Result<(), CheckFailure> {
            // The bytes written are the plan's: their parse is already in `sides`.
            syntax_check(changes, &sides)?;
            if let Some((sb, setup)) = sandbox {
                build_check(self, sb, setup, &root, call)?;
            }
            Ok(())
        };
        let (result, report) = if check == CheckLevel::None {
            (self.edits().commit(planned, &mut |_| Ok(()))?, None)
        } else if auto_rollback {
            let r = self.edits().commit(planned, &mut run_check)?;
            (
                r,
                Some(CheckReport {
                    level: check,
                    passed: true,
                    message: String::new(),
                    rolled_back: false,
                }),
            )
        } else {
            let r = self.edits().commit(planned, &mut |_| Ok(()))?;
            let outcome = run_check(&r.files);
            let report = match outcome {
                Ok(()) => CheckReport {
                    level: check,
                    passed: true,
                    message: String::new(),
                    rolled_back: false,
                },
                Err(f) => {
                    warnings.push(Warning {
                        severity: WarningLevel::Critical,
                        code: f.code.as_str().to_owned(),
                        message: format!(
                            "the post-edit check failed and autoRollback is off: {}",
                            f.message
                        ),
                        affected: r.files.iter().map(|f| f.path.clone()).collect(),
                        mitigation: Some(
                            "fix it with another change, or undo this transaction".into(),
                        ),
                    });
                    CheckReport {
                        level: check,
                        passed: false,
                        message: f.message,
                        rolled_back: false,
                    }
                }
            };
            (r, Some(report))
        };
        if let Some(id) = &result.transaction_id {
            span.record("ironbees.edit.transaction_id", id.as_str());
        }
        if let Some(r) = &report {
            span.record("ironbees.edit.check_passed", r.passed);
        }
        drop(entered);
        warnings.extend(self.refresh_after_edit(call));
        let guidance =
            change_guidance(req, &result, impact.as_ref(), report.as_ref(), false, &mut warnings);
        Ok(ChangeResponse {
            success: report.as_ref().is_none_or(|r| r.passed),
            dry_run: false,
            rollback_available: result.transaction_id.is_some(),
            transaction_id: result.transaction_id.clone(),
            edit_result: result,
            impact,
            check: report,
            guidance: Guidance { warnings, ..guidance },
        })
    }
}

/// The edit engine's request for a `change`, as a dry run: paths filled from
/// `target`, the options the engine knows.
pub(crate) fn edit_request(req: &ChangeRequest) -> Result<EditRequest> {
    if req.edits.is_empty() {
        return Err(Error::InvalidArgument(
            "`edits` is empty: give at least one edit, e.g. {\"path\": \"src/a.py\", \
             \"targetString\": \"<exact text>\", \"replacementString\": \"<new text>\", \
             \"expectedHash\": \"<hash from read/understand>\"}"
                .into(),
        ));
    }
    let mut edit = EditRequest {
        description: req.description.clone(),
        target: req.target.clone(),
        edits: req.edits.clone(),
        options: EditOptions {
            dry_run: true,
            include_impact: req.options.include_impact.unwrap_or(true),
            auto_rollback: req.options.auto_rollback.unwrap_or(true),
        },
    };
    if let Some(t) = &req.target {
        for e in &mut edit.edits {
            e.fill_path(t);
        }
    }
    Ok(edit)
}

/// The planned change against the guardrails: each file's text before and after.
fn guardrails(
    rules: &guard::RuleSet,
    preview: &EditResult,
    sides: &BTreeMap<String, Sides>,
) -> protocol::GuardReport {
    let files: Vec<(&str, Option<&str>, Option<&str>)> = preview
        .files
        .iter()
        .filter_map(|f| {
            let s = sides.get(&f.path)?;
            let path = f.new_path.as_deref().unwrap_or(&f.path);
            Some((path, s.before.as_deref(), s.after.as_deref()))
        })
        .collect();
    rules.check(&guard::Change::from_files(&files))
}

/// What the parse of each side is needed for.
#[derive(Debug, Clone, Copy)]
struct Want {
    /// The definitions (the impact report).
    definitions: bool,
    /// The syntax errors (the post-edit check).
    errors: bool,
}

/// Each changed file's text before and after (keyed by the path before), from the
/// contents the edit engine planned, each side parsed at most once.
fn sides(
    preview: &EditResult,
    files: Vec<edit::FileVersions>,
    want: Want,
) -> BTreeMap<String, Sides> {
    let mut out = BTreeMap::new();
    for (f, v) in preview.files.iter().zip(files) {
        let path_after = f.new_path.as_deref().unwrap_or(&f.path);
        let lang = Language::from_path(std::path::Path::new(path_after));
        let parse_side = |side: &'static str, bytes: &Option<Vec<u8>>| match (lang, bytes) {
            (Some(lang), Some(b)) if want.definitions || want.errors => {
                Some(parse(&f.path, side, lang, b))
            }
            _ => None,
        };
        let before = parse_side("before", &v.before);
        let after =
            if f.kind == FileChangeKind::Deleted { None } else { parse_side("after", &v.after) };
        let text = |b: Option<Vec<u8>>| {
            b.map(|b| {
                String::from_utf8(b)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
            })
        };
        let before_errors = before.as_ref().map_or(0, |a| a.error_nodes);
        let after_errors = after.as_ref().map_or(0, |a| a.error_nodes);
        let defs = |a: Option<code_index::FileAnalysis>| {
            a.filter(|_| want.definitions).map(|a| a.definitions)
        };
        let deleted = f.kind == FileChangeKind::Deleted && want.definitions;
        out.insert(
            f.path.clone(),
            Sides {
                old_defs: defs(before),
                new_defs: if deleted { Some(Vec::new()) } else { defs(after) },
                before_errors,
                after_errors,
                before: text(v.before),
                after: text(v.after),
            },
        );
    }
    out
}

/// `code_index::analyze`, counted in tests (one parse per side and file).
fn parse(path: &str, side: &'static str, lang: Language, bytes: &[u8]) -> code_index::FileAnalysis {
    #[cfg(test)]
    tests::PARSES.with(|p| p.borrow_mut().push(format!("{path} {side}")));
    #[cfg(not(test))]
    let _ = (path, side);
    code_index::analyze(lang, bytes)
}

/// A file's two versions and their definitions (None: not analyzable, or not
/// asked for).
pub(crate) struct Sides {
    before: Option<String>,
    after: Option<String>,
    old_defs: Option<Vec<Definition>>,
    new_defs: Option<Vec<Definition>>,
    /// Syntax errors of each side (0 when not parsed).
    before_errors: u32,
    after_errors: u32,
}

/// Which definitions changed and how, by qualified name (in order for overloads).
fn changed_definitions(s: &Sides) -> Vec<(String, String, SymbolChange, u32)> {
    let (Some(old), Some(new)) = (&s.old_defs, &s.new_defs) else { return Vec::new() };
    let text = |src: &Option<String>, d: &Definition| -> String {
        src.as_deref()
            .and_then(|t| t.as_bytes().get(d.start_byte as usize..d.end_byte as usize))
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    };
    let mut by_name: HashMap<&str, Vec<&Definition>> = HashMap::new();
    for d in new {
        by_name.entry(d.qualified_name.as_str()).or_default().push(d);
    }
    let mut out = Vec::new();
    let mut used: HashMap<&str, usize> = HashMap::new();
    for d in old {
        let i = used.entry(d.qualified_name.as_str()).or_default();
        let twin = by_name.get(d.qualified_name.as_str()).and_then(|v| v.get(*i)).copied();
        *i += 1;
        let change = match twin {
            None => Some(SymbolChange::Removed),
            Some(n) if norm_ws(&n.signature) != norm_ws(&d.signature) => {
                Some(SymbolChange::SignatureChanged)
            }
            Some(n) if text(&s.after, n) != text(&s.before, d) => Some(SymbolChange::BodyChanged),
            _ => None,
        };
        if let Some(c) = change {
            out.push((d.qualified_name.clone(), d.kind.as_str().to_owned(), c, d.line));
        }
    }
    for (name, v) in &by_name {
        let had = used.get(name).copied().unwrap_or(0);
        for d in v.iter().skip(had) {
            out.push((
                d.qualified_name.clone(),
                d.kind.as_str().to_owned(),
                SymbolChange::Added,
                d.line,
            ));
        }
    }
    // Containers change when anything inside does; report the innermost only.
    let names: Vec<String> =
        out.iter().filter(|c| c.2 == SymbolChange::BodyChanged).map(|c| c.0.clone()).collect();
    out.retain(|c| {
        c.2 != SymbolChange::BodyChanged
            || !names.iter().any(|n| {
                n != &c.0
                    && (n.starts_with(&format!("{}.", c.0)) || n.starts_with(&format!("{}::", c.0)))
            })
    });
    out.sort_by(|a, b| a.3.cmp(&b.3).then(a.0.cmp(&b.0)));
    out
}

/// A signature without comments and with collapsed whitespace: a comment or a
/// re-wrapped parameter list is not an interface change.
fn norm_ws(s: &str) -> String {
    let code: Vec<&str> = s
        .lines()
        .map(|l| {
            let l = l.split("//").next().unwrap_or(l);
            match l
                .find("# ")
                .or_else(|| l.trim_end().ends_with('#').then(|| l.trim_end().len() - 1))
            {
                Some(i) => &l[..i],
                None => l,
            }
        })
        .collect();
    code.join(" ").split_whitespace().collect::<Vec<_>>().join(" ")
}

fn impact(
    snap: &Snapshot,
    preview: &EditResult,
    sides: &BTreeMap<String, Sides>,
    hot: &[protocol::HotSpot],
) -> ImpactReport {
    let p = &snap.project;
    let mut changed_symbols = Vec::new();
    let mut reasons_extra = Vec::new();
    let mut changed_files: Vec<FileId> = Vec::new();
    let mut critical_tests: BTreeMap<String, String> = BTreeMap::new();
    for f in &preview.files {
        let fid = p.file_id(&f.path);
        if let Some(id) = fid {
            changed_files.push(id);
        }
        if analysis::is_test_path(&f.path) {
            critical_tests.insert(f.path.clone(), "the test itself changes".into());
        }
        if f.kind == FileChangeKind::Renamed
            && let Some(id) = fid
            && !analysis::fan(snap, id).0.is_empty()
        {
            reasons_extra.push(format!(
                "{} moves to {}; {} file(s) refer to it by path or import",
                f.path,
                f.new_path.as_deref().unwrap_or("?"),
                analysis::fan(snap, id).0.len()
            ));
        }
        let Some(s) = sides.get(&f.path) else { continue };
        for (name, kind, change, line) in changed_definitions(s) {
            let def = fid.and_then(|id| {
                let defs = &p.file(id).defs;
                defs.iter()
                    .enumerate()
                    .filter(|(_, d)| d.qualified_name == name)
                    .min_by_key(|(_, d)| d.line.abs_diff(line))
                    .map(|(ord, _)| code_index::DefId { file: id, ord: ord as u32 })
            });
            let (callers, caller_files) = match (change, def) {
                (SymbolChange::Added, _) | (_, None) => (0, 0),
                (_, Some(d)) => {
                    for e in analysis::resolved_callers(snap, d) {
                        let path = &p.file(e.from_file).path;
                        if analysis::is_test_path(path) {
                            critical_tests
                                .entry(path.clone())
                                .or_insert_with(|| format!("calls {name} directly"));
                        }
                    }
                    analysis::caller_counts(snap, d)
                }
            };
            changed_symbols.push(ChangedSymbol {
                path: f.path.clone(),
                qualified_name: name,
                kind,
                change,
                callers,
                caller_files,
            });
        }
        for t in analysis::tests_named_after(snap, &f.path) {
            critical_tests.entry(t).or_insert_with(|| format!("named after {}", f.path));
        }
    }
    let mut affected: Vec<AffectedFile> = changed_files
        .iter()
        .map(|&f| AffectedFile { path: p.file(f).path.clone(), distance: 0 })
        .collect();
    for (f, dist) in analysis::dependents(snap, &changed_files, 2) {
        affected.push(AffectedFile { path: p.file(f).path.clone(), distance: dist });
    }
    let radius = affected.iter().filter(|a| a.distance > 0).count() as u32;
    let hot: Vec<protocol::HotSpot> =
        hot.iter().filter(|h| affected.iter().any(|a| a.path == h.path)).cloned().collect();
    let (mut risk, mut reasons) = analysis::breaking_change_risk(&changed_symbols, hot.len());
    if !reasons_extra.is_empty() {
        risk = risk.max(RiskLevel::Medium);
        reasons.extend(reasons_extra);
    }
    let mut tests: Vec<SuggestedTest> = critical_tests
        .into_iter()
        .map(|(path, reason)| SuggestedTest { path, priority: TestPriority::Critical, reason })
        .collect();
    for a in &affected {
        if a.distance > 0
            && analysis::is_test_path(&a.path)
            && !tests.iter().any(|t| t.path == a.path)
        {
            let (priority, reason) = if a.distance == 1 {
                (TestPriority::Important, "depends on a changed file".to_owned())
            } else {
                (TestPriority::Optional, format!("{} levels from a changed file", a.distance))
            };
            tests.push(SuggestedTest { path: a.path.clone(), priority, reason });
        }
    }
    tests.sort_by(|a, b| a.priority.cmp(&b.priority).then(a.path.cmp(&b.path)));
    tests.truncate(15);
    affected.truncate(50);
    ImpactReport {
        changed_symbols,
        affected_files: affected,
        radius,
        affected_hot_spots: hot,
        breaking_change_risk: risk,
        reasons,
        suggested_tests: tests,
    }
}

/// The edited files must not have more syntax errors than before: judged on the
/// bytes written, which are the plan's, parsed once already (`sides`).
fn syntax_check(
    changes: &[FileChange],
    sides: &BTreeMap<String, Sides>,
) -> std::result::Result<(), CheckFailure> {
    let mut problems = Vec::new();
    for c in changes {
        if c.kind == FileChangeKind::Deleted {
            continue;
        }
        let Some(s) = sides.get(&c.path) else { continue };
        let path = c.new_path.as_deref().unwrap_or(&c.path);
        if s.after_errors > s.before_errors {
            let after = s.after.as_deref().unwrap_or_default().as_bytes();
            problems.push(regression(path, s.before_errors, s.after_errors, after));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(CheckFailure { code: ErrorCode::SyntaxError, message: problems.join("; ") })
    }
}

/// "`path`: syntax errors went from 1 to 3 (first at line 7)" when `after` has
/// more syntax errors than the file had before (`was`); `None` when it has not, or
/// the language is unknown.
pub(crate) fn syntax_regression(path: &str, was: u32, after: &[u8]) -> Option<String> {
    let lang = Language::from_path(std::path::Path::new(path))?;
    let errors = code_index::analyze(lang, after).error_nodes;
    (errors > was).then(|| regression(path, was, errors, after))
}

/// The message of a syntax regression from `was` to `errors` errors.
fn regression(path: &str, was: u32, errors: u32, after: &[u8]) -> String {
    let at = Language::from_path(std::path::Path::new(path))
        .and_then(|lang| first_error_line(lang, after))
        .map(|l| format!(" (first at line {l})"))
        .unwrap_or_default();
    format!("{path}: syntax errors went from {was} to {errors}{at}")
}

/// The line of the first syntax error (tree-sitter's ERROR node).
fn first_error_line(lang: Language, bytes: &[u8]) -> Option<u32> {
    let tree = code_index::debug_tree(lang, bytes, None);
    let at = tree.find("(ERROR) L")? + "(ERROR) L".len();
    tree[at..].split('-').next()?.parse().ok()
}

fn build_check(
    session: &crate::Session,
    sb: &sandbox::Sandbox,
    setup: &crate::SandboxSetup,
    root: &std::path::Path,
    call: &Call<'_>,
) -> std::result::Result<(), CheckFailure> {
    let fail = |message: String| CheckFailure { code: ErrorCode::ToolExecutionFailed, message };
    let project =
        session.detect_at(root, false).map_err(|e| fail(format!("no build to run: {e}")))?;
    let hooks = sandbox::Hooks { on_output: None, cancel: Some(call.cancel) };
    call.progress.phase("building the project", None);
    let configured = session.commands().build.as_deref();
    if configured == Some(&[][..]) {
        return Ok(());
    }
    let (build, _) = sandbox::build(
        sb,
        &project,
        configured,
        &setup.policy,
        &setup.env,
        &setup.env_removed,
        &hooks,
    )
    .map_err(|e| fail(format!("the build could not run: {e}")))?;
    if build.success {
        return Ok(());
    }
    let first: Vec<String> = build
        .errors
        .iter()
        .take(3)
        .map(|d| {
            format!("{}:{}: {}", d.file.as_deref().unwrap_or("?"), d.line.unwrap_or(0), d.message)
        })
        .collect();
    Err(fail(format!("the build failed: {}", first.join("; "))))
}

pub(crate) fn change_guidance(
    req: &ChangeRequest,
    result: &EditResult,
    impact: Option<&ImpactReport>,
    check: Option<&CheckReport>,
    dry_run: bool,
    warnings: &mut Vec<Warning>,
) -> Guidance {
    let mut actions = Vec::new();
    let files: Vec<&str> = result.files.iter().map(|f| f.path.as_str()).collect();
    let (added, removed) =
        result.files.iter().fold((0, 0), |(a, r), f| (a + f.lines_added, r + f.lines_removed));
    let tests: Vec<String> = impact
        .map(|i| {
            i.suggested_tests
                .iter()
                .filter(|t| t.priority != TestPriority::Optional)
                .map(|t| t.path.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(i) = impact {
        if !i.affected_hot_spots.is_empty() {
            warnings.push(Warning {
                severity: WarningLevel::Warning,
                code: "HOTSPOT_AFFECTED".into(),
                message: format!("{} hotspot file(s) are affected", i.affected_hot_spots.len()),
                affected: i.affected_hot_spots.iter().map(|h| h.path.clone()).collect(),
                mitigation: Some("run the suggested tests before moving on".into()),
            });
        }
        if i.breaking_change_risk >= RiskLevel::Medium {
            warnings.push(Warning {
                severity: if i.breaking_change_risk == RiskLevel::High {
                    WarningLevel::Critical
                } else {
                    WarningLevel::Warning
                },
                code: "BREAKING_CHANGE".into(),
                message: i.reasons.join("; "),
                affected: i
                    .changed_symbols
                    .iter()
                    .filter(|c| c.callers > 0)
                    .map(|c| c.qualified_name.clone())
                    .collect(),
                mitigation: Some(
                    "update the callers in the same change, or keep the old signature".into(),
                ),
            });
        }
    }
    for f in &result.files {
        for e in &f.edits {
            if !e.normalizations.is_empty() {
                warnings.push(Warning {
                    severity: WarningLevel::Info,
                    code: "NORMALIZED_MATCH".into(),
                    message: format!(
                        "edits[{}] in {} matched only after normalizing whitespace or line endings",
                        e.index, f.path
                    ),
                    affected: vec![f.path.clone()],
                    mitigation: Some(
                        "check the diff; the replacement was adapted to the file".into(),
                    ),
                });
            }
        }
    }
    if dry_run {
        let mut apply = serde_json::to_value(req).unwrap_or_default();
        apply["options"]["dryRun"] = json!(false);
        actions.push(action(
            1,
            "change",
            apply,
            format!("apply it ({} file(s), +{added} -{removed})", files.len()),
            "the preview validated every edit; the apply is checked and reversible",
        ));
        if !tests.is_empty() {
            actions.push(action(
                2,
                "manage",
                json!({"command": "test", "targets": tests}),
                "run the covering tests first (baseline)",
                "",
            ));
        }
    } else {
        if let Some(tx) = &result.transaction_id {
            if !tests.is_empty() {
                actions.push(action(
                    1,
                    "manage",
                    json!({"command": "test", "targets": tests}),
                    "run the suggested tests",
                    "they cover what changed",
                ));
            } else {
                actions.push(action(
                    1,
                    "manage",
                    json!({"command": "test"}),
                    "run the test suite",
                    "nothing maps directly to this change",
                ));
            }
            if let Some((f, r)) = result
                .files
                .iter()
                .find_map(|f| f.edits.iter().find_map(|e| e.new_line_range).map(|r| (f, r)))
            {
                let path = f.new_path.as_deref().unwrap_or(&f.path);
                actions.push(action(
                    2,
                    "read",
                    json!({"target": path, "view": "fragment", "lineRange": format!("{}-{}", r.start.saturating_sub(3).max(1), r.end + 3)}),
                    format!("read the changed lines of {path}"),
                    "verify the result",
                ));
            }
            actions.push(action(
                3,
                "manage",
                json!({"command": "undo", "id": tx}),
                format!("undo transaction {tx}"),
                "if the tests fail",
            ));
        }
    }
    let risk = impact.map(|i| {
        format!(
            " Breaking-change risk: {:?}; {} file(s) affected beyond the edit; {} suggested test(s).",
            i.breaking_change_risk, i.radius, i.suggested_tests.len()
        )
        .replace("None", "none")
        .replace("Low", "low")
        .replace("Medium", "medium")
        .replace("High", "high")
    });
    let state = if dry_run {
        "Preview (nothing written): the edit applies cleanly".to_owned()
    } else {
        match (&result.transaction_id, check) {
            (Some(tx), Some(c)) if !c.passed => {
                format!("Applied as {tx}, but the post-edit check failed: {}", c.message)
            }
            (Some(tx), Some(_)) => format!("Applied and checked as transaction {tx}"),
            (Some(tx), None) => format!("Applied as transaction {tx} (no check)"),
            (None, _) => "Nothing changed: the files already have this content".to_owned(),
        }
    };
    Guidance {
        context_summary: format!(
            "{state} to {} (+{added} -{removed}).{}",
            files.join(", "),
            risk.unwrap_or_default()
        ),
        next_actions: finish(actions),
        warnings: Vec::new(),
        recovery: None,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use expect_test::{Expect, expect};
    use serde_json::json;
    use test_support::TempProject;

    use super::*;
    use crate::SessionOptions;

    thread_local! {
        /// `path side` of every parse `change` made on this thread.
        pub(super) static PARSES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    fn sides(lang: Language, before: &str, after: &str) -> Sides {
        Sides {
            old_defs: Some(code_index::analyze(lang, before.as_bytes()).definitions),
            new_defs: Some(code_index::analyze(lang, after.as_bytes()).definitions),
            before_errors: 0,
            after_errors: 0,
            before: Some(before.to_owned()),
            after: Some(after.to_owned()),
        }
    }

    /// Applies `options` to a change of one line in each of three files and
    /// renders what it read and parsed: each count per file (a plan reads a file
    /// once; the hash checked again before each rename is the edit engine's own,
    /// and the index's refresh after the write is the index's).
    fn check_work(options: serde_json::Value, expect: Expect) {
        let p = TempProject::new();
        std::fs::create_dir_all(p.path(".git")).unwrap();
        let names = ["a", "b", "c"];
        for n in names {
            p.write(&format!("src/{n}.py"), format!("def {n}():\n    return 1\n"));
        }
        let session =
            Session::open(p.root(), SessionOptions { watch: false, ..Default::default() }).unwrap();
        let edits: Vec<_> = names
            .iter()
            .map(|n| json!({"path": format!("src/{n}.py"), "targetString": "return 1", "replacementString": "return 2"}))
            .collect();
        let req: ChangeRequest =
            serde_json::from_value(json!({"edits": edits, "options": options})).unwrap();
        edit::probe::take();
        PARSES.with(|p| p.borrow_mut().clear());
        let cancel = stdx::CancellationToken::new();
        let r = session.change(&req, &Call::new(&stdx::NoProgress, &cancel)).unwrap();
        let counts = edit::probe::take();
        let parses = PARSES.with(|p| std::mem::take(&mut *p.borrow_mut()));
        let tally = |items: &[String]| {
            let mut m: BTreeMap<&str, usize> = BTreeMap::new();
            for i in items {
                *m.entry(i.as_str()).or_default() += 1;
            }
            m.iter().map(|(k, v)| format!("  {k}: {v}\n")).collect::<String>()
        };
        let got = format!(
            "applied: {}\nplans: {}\nreads:\n{}parses:\n{}",
            r.transaction_id.is_some(),
            counts.plans,
            tally(&counts.reads),
            tally(&parses)
        );
        expect.assert_eq(&got);
    }

    #[test]
    fn a_change_plans_reads_and_parses_each_file_once() {
        // The agent's and the CLI's apply: no impact, the syntax check.
        check_work(
            json!({"dryRun": false, "includeImpact": false, "check": "syntax"}),
            expect![[r#"
                applied: true
                plans: 1
                reads:
                  src/a.py: 1
                  src/b.py: 1
                  src/c.py: 1
                parses:
                  src/a.py after: 1
                  src/a.py before: 1
                  src/b.py after: 1
                  src/b.py before: 1
                  src/c.py after: 1
                  src/c.py before: 1
            "#]],
        );
        // With the impact: the same parses give the definitions too.
        check_work(
            json!({"dryRun": false, "includeImpact": true}),
            expect![[r#"
                applied: true
                plans: 1
                reads:
                  src/a.py: 1
                  src/b.py: 1
                  src/c.py: 1
                parses:
                  src/a.py after: 1
                  src/a.py before: 1
                  src/b.py after: 1
                  src/b.py before: 1
                  src/c.py after: 1
                  src/c.py before: 1
            "#]],
        );
        // Without a check or an impact (the agent's apply of a validated run)
        // nothing reads a parse, so nothing is parsed.
        check_work(
            json!({"dryRun": false, "includeImpact": false, "check": "none"}),
            expect![[r#"
                applied: true
                plans: 1
                reads:
                  src/a.py: 1
                  src/b.py: 1
                  src/c.py: 1
                parses:
            "#]],
        );
    }

    #[test]
    fn definitions_diff_table() {
        let base = "def a(x):\n    return x\n\ndef b():\n    return 1\n\nclass C:\n    def m(self):\n        return 2\n";
        for (after, want) in [
            (base.replace("return x", "return x + 1"), vec![("a", SymbolChange::BodyChanged)]),
            (
                base.replace("def a(x):", "def a(x, y=0):"),
                vec![("a", SymbolChange::SignatureChanged)],
            ),
            (base.replace("def b():\n    return 1\n\n", ""), vec![("b", SymbolChange::Removed)]),
            (format!("{base}\ndef d():\n    pass\n"), vec![("d", SymbolChange::Added)]),
            (base.replace("return 2", "return 3"), vec![("C.m", SymbolChange::BodyChanged)]),
            (
                base.replace("    return x", "    # note\n    return x"),
                vec![("a", SymbolChange::BodyChanged)],
            ),
            (base.to_owned(), vec![]),
        ] {
            let got: Vec<(String, SymbolChange)> =
                changed_definitions(&sides(Language::Python, base, &after))
                    .into_iter()
                    .map(|c| (c.0, c.2))
                    .collect();
            let want: Vec<(String, SymbolChange)> =
                want.into_iter().map(|(n, c)| (n.to_owned(), c)).collect();
            assert_eq!(got, want, "{after}");
        }
    }
}
