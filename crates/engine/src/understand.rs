//! `understand`: everything about a file, a directory, a symbol or a question, in
//! one bounded answer.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
};

use code_graph::Snapshot;
use code_index::{DefId, FileId};
use protocol::{
    CallEdge, Complexity, FileEdge, FileInsight, Guidance, HotSpot, NextAction, RankedFile, Report,
    SymbolBrief, SymbolInsight, TargetKind, UnderstandInclude, UnderstandRequest,
    UnderstandResponse, Warning, WarningLevel,
};
use serde_json::json;

use stdx::Call;

use crate::{
    Session, analysis,
    error::{Error, Result},
    guidance::{action, finish},
    locate,
    session::check_cancel,
};

/// Default token budget of an answer.
const DEFAULT_BUDGET: u32 = 8000;
/// Files shown in full insight for a directory or a question.
const DETAILED_FILES: usize = 3;

impl Session {
    /// See the crate documentation; `target` is a path, a symbol or a question.
    pub fn understand(
        &self,
        req: &UnderstandRequest,
        call: &Call<'_>,
    ) -> Result<UnderstandResponse> {
        let target = req.target.trim();
        if target.is_empty() {
            return Err(Error::InvalidArgument(
                "`target` is empty: give a path, a symbol or a question".into(),
            ));
        }
        let path_like = looks_like_path(target);
        let rel = if path_like { Some(self.rel_path(target)?) } else { self.rel_path(target).ok() };
        let on_disk = rel.as_ref().map(|r| self.root.join(r)).filter(|p| p.exists());
        let file_paths: Vec<&str> = match (&rel, &on_disk) {
            (Some(r), Some(p)) if p.is_file() => vec![r.as_str()],
            _ => vec![],
        };
        let (snap, mut warnings) = self.fresh_snapshot(call, &file_paths)?;
        check_cancel(call)?;
        // Hotspots need the git history: read once per HEAD (cached by the session).
        let hot = if req.include.hot_spots {
            let churn = self.churn(&git::ChurnOptions::default())?;
            analysis::hot_spots(&snap, Some(&churn), &self.root)
        } else {
            Vec::new()
        };
        let depth = req.depth.levels();
        let budget = req.budget.unwrap_or(DEFAULT_BUDGET).max(500);
        let mut resp = UnderstandResponse {
            target: target.to_owned(),
            resolved_as: TargetKind::Question,
            ranked: Vec::new(),
            files: Vec::new(),
            symbols: Vec::new(),
            hot_spots: Vec::new(),
            tokens: 0,
            truncated: false,
            guidance: Guidance::default(),
        };
        let positions = analysis::rank_positions(&snap);
        match (&rel, &on_disk) {
            (Some(rel), Some(p)) if p.is_file() => {
                resp.resolved_as = TargetKind::Path;
                resp.files.push(self.file_insight(
                    &snap,
                    (&positions, &hot),
                    rel,
                    depth,
                    &req.include,
                    true,
                )?);
            }
            (Some(rel), Some(_)) => {
                resp.resolved_as = TargetKind::Path;
                let prefix = if rel.is_empty() { String::new() } else { format!("{rel}/") };
                let mut files: Vec<FileId> = (0..snap.project.files.len() as FileId)
                    .filter(|&f| snap.project.file(f).path.starts_with(&prefix))
                    .collect();
                files.sort_by(|a, b| {
                    snap.file_rank[*b as usize].total_cmp(&snap.file_rank[*a as usize])
                });
                if files.is_empty() {
                    warnings.push(Warning {
                        severity: WarningLevel::Info,
                        code: "EMPTY_DIRECTORY".into(),
                        message: format!(
                            "no indexed source file under {}",
                            if rel.is_empty() { "." } else { rel }
                        ),
                        affected: vec![],
                        mitigation: None,
                    });
                }
                for (i, &f) in files.iter().take(DETAILED_FILES).enumerate() {
                    let path = snap.project.file(f).path.clone();
                    resp.files.push(self.file_insight(
                        &snap,
                        (&positions, &hot),
                        &path,
                        depth,
                        &req.include,
                        i == 0,
                    )?);
                }
                resp.ranked = files
                    .iter()
                    .take(20)
                    .map(|&f| {
                        let pf = snap.project.file(f);
                        RankedFile {
                            path: pf.path.clone(),
                            score: round4(snap.file_rank[f as usize]),
                            evidence: vec![format!(
                                "PageRank #{} of {}; {} definitions, {} lines",
                                positions[&f],
                                snap.project.files.len(),
                                pf.defs.len(),
                                pf.lines
                            )],
                        }
                    })
                    .collect();
            }
            _ => {
                // A question may name what it is about ("handleAuth 인증 로직 파악"):
                // the router's targets are tried before searching.
                let intent = (!is_symbol_like(target)).then(|| crate::intent::route(target));
                let named: Vec<String> = match &intent {
                    Some(i) => i
                        .targets
                        .iter()
                        .filter(|t| matches!(t.kind, TargetKind::Symbol | TargetKind::Path))
                        .map(|t| t.text.clone())
                        .collect(),
                    None => vec![target.to_owned()],
                };
                if let Some(path) = named.iter().filter(|n| looks_like_path(n)).find_map(|n| {
                    let rel = self.rel_path(n).ok()?;
                    snap.project.file_id(&rel).map(|_| rel)
                }) {
                    let mut sub = req.clone();
                    sub.target = path;
                    let mut r = self.understand(&sub, call)?;
                    r.target = target.to_owned();
                    return Ok(r);
                }
                let defs = named
                    .iter()
                    .filter(|n| !looks_like_path(n) || locate_path_line(n))
                    .map(|n| locate::find_defs(&snap, n, None))
                    .find(|d| !d.is_empty())
                    .unwrap_or_default();
                if !defs.is_empty() {
                    resp.resolved_as = TargetKind::Symbol;
                    for &d in defs.iter().take(3) {
                        resp.symbols.push(self.symbol_insight(&snap, d, depth, &req.include)?);
                    }
                    if defs.len() > 3 {
                        warnings.push(Warning {
                            severity: WarningLevel::Info,
                            code: "MANY_DEFINITIONS".into(),
                            message: format!("{} definitions match; the 3 most central are shown", defs.len()),
                            affected: defs.iter().skip(3).take(10).map(|d| def_label(&snap, *d)).collect(),
                            mitigation: Some("qualify the name (`Class.method`, `module::fn`) or use `navigate` with `path`".into()),
                        });
                    }
                    let file = snap.project.file(defs[0].file).path.clone();
                    if req.include.report || req.include.skeleton {
                        let mut inc = req.include;
                        inc.skeleton = false;
                        resp.files.push(self.file_insight(
                            &snap,
                            (&positions, &hot),
                            &file,
                            1,
                            &inc,
                            false,
                        )?);
                    }
                } else if path_like {
                    return Err(Error::NotFound {
                        message: format!("{target}: no such file or directory in the project"),
                        path: Some(target.to_owned()),
                        similar: similar_paths(&snap, target),
                    });
                } else if is_code_identifier(target) {
                    return Err(Error::NotFound {
                        message: format!("no definition named `{target}` in the index"),
                        path: None,
                        similar: locate::similar_names(&snap, target),
                    });
                } else {
                    resp.resolved_as = TargetKind::Question;
                    let root = self.root.clone();
                    let search = self.search_index(&snap)?;
                    let opts = retrieval::LocalizeOptions { k: 8, ..Default::default() };
                    let results = retrieval::localize(&snap, &search, &root, target, &opts)?;
                    resp.ranked = results
                        .iter()
                        .map(|r| RankedFile {
                            path: r.path.clone(),
                            score: round4(r.score),
                            evidence: r
                                .evidence
                                .iter()
                                .take(3)
                                .map(retrieval::describe_evidence)
                                .collect(),
                        })
                        .collect();
                    let top: Vec<String> = results.iter().take(2).map(|r| r.path.clone()).collect();
                    for (i, path) in top.iter().enumerate() {
                        resp.files.push(self.file_insight(
                            &snap,
                            (&positions, &hot),
                            path,
                            depth.min(2),
                            &req.include,
                            i == 0,
                        )?);
                    }
                }
            }
        }
        if req.include.hot_spots {
            let near: HashSet<String> = resp
                .files
                .iter()
                .flat_map(|f| {
                    std::iter::once(f.path.clone())
                        .chain(f.dependents.iter().map(|d| d.path.clone()))
                })
                .collect();
            resp.hot_spots =
                hot.iter().filter(|h| near.contains(&h.path)).take(5).cloned().collect();
        }
        resp.guidance = understand_guidance(&resp, warnings);
        fit_budget(&mut resp, budget);
        Ok(resp)
    }

    fn file_insight(
        &self,
        snap: &Arc<Snapshot>,
        (positions, hot): (&HashMap<FileId, u32>, &[HotSpot]),
        rel: &str,
        depth: u32,
        include: &UnderstandInclude,
        with_skeleton: bool,
    ) -> Result<FileInsight> {
        let file = self.analyzed(rel)?;
        let (lang, bytes, analysis) = (file.lang, &file.bytes, &file.analysis);
        let hash = file.hash.clone();
        let source = String::from_utf8_lossy(bytes);
        let fid = snap.project.file_id(rel);
        let defs_by_line: HashMap<(&str, u32), DefId> = fid
            .map(|f| {
                snap.project
                    .file(f)
                    .defs
                    .iter()
                    .enumerate()
                    .map(|(ord, d)| {
                        ((d.qualified_name.as_str(), d.line), DefId { file: f, ord: ord as u32 })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let symbols: Vec<SymbolBrief> = analysis
            .definitions
            .iter()
            .map(|d| {
                let id = defs_by_line.get(&(d.qualified_name.as_str(), d.line)).copied();
                let (callers, callees) = id.map_or((0, 0), |id| {
                    (
                        analysis::resolved_callers(snap, id).count() as u32,
                        snap.graphs
                            .callees(id)
                            .filter(|e| code_graph::is_sure(&snap.project, e))
                            .count() as u32,
                    )
                });
                SymbolBrief {
                    qualified_name: d.qualified_name.clone(),
                    kind: d.kind.as_str().to_owned(),
                    path: rel.to_owned(),
                    line: d.line,
                    end_line: d.end_line,
                    signature: d.signature.clone(),
                    doc: d.doc.clone(),
                    callers,
                    callees,
                }
            })
            .collect();
        let skeleton = (include.skeleton && with_skeleton).then(|| file.skeleton_text().to_owned());
        let mut fi = FileInsight {
            path: rel.to_owned(),
            language: lang.name().to_owned(),
            lines: analysis.lines,
            hash,
            skeleton,
            symbols,
            dependencies: Vec::new(),
            dependents: Vec::new(),
            external: Vec::new(),
            calls_out: Vec::new(),
            calls_in: Vec::new(),
            page_rank: None,
            rank: None,
            hot_spot: None,
            impact: None,
            report: None,
            syntax_errors: analysis.error_nodes,
        };
        let Some(f) = fid else { return Ok(fi) };
        let path = |g: FileId| snap.project.file(g).path.clone();
        let imports: HashSet<FileId> =
            snap.graphs.file_imports[f as usize].iter().copied().collect();
        let edges = |adj: &[(FileId, f64)], imported: &dyn Fn(FileId) -> bool| {
            let mut v: Vec<FileEdge> = adj
                .iter()
                .map(|&(g, w)| FileEdge { path: path(g), weight: round4(w), imported: imported(g) })
                .collect();
            v.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.path.cmp(&b.path)));
            v
        };
        let (in_adj, out_adj) = analysis::fan(snap, f);
        let (in_adj, out_adj) = (&in_adj, &out_adj);
        if include.dependencies {
            fi.dependencies = edges(out_adj, &|g| imports.contains(&g));
            fi.dependents = edges(in_adj, &|g| snap.graphs.file_imports[g as usize].contains(&f));
            fi.dependencies.truncate(15);
            fi.dependents.truncate(15);
            fi.external = snap.graphs.externals[f as usize].clone();
            fi.external.truncate(20);
        }
        if include.call_graph {
            let (out, inn) = file_calls(snap, f);
            fi.calls_out = out;
            fi.calls_in = inn;
        }
        if include.page_rank {
            fi.page_rank = Some(analysis::round6(snap.file_rank[f as usize]));
            fi.rank = positions.get(&f).copied();
        }
        if include.hot_spots {
            fi.hot_spot = hot.iter().find(|h| h.path == rel).cloned();
        }
        let (impact, reach) = self.impact_radius(snap, f, None, depth);
        if include.report {
            let is_test = analysis::is_test_path(rel);
            let n = snap.project.files.len().max(1) as f64;
            let pct = positions.get(&f).map_or(1.0, |p| f64::from(*p) / n);
            let complexity = Complexity {
                loc: analysis.lines,
                symbols: analysis.definitions.len() as u32,
                branches: analysis::count_branches(&source),
                dependencies: snap.graphs.file_imports[f as usize].len() as u32,
                fan_in: in_adj.len() as u32,
                fan_out: out_adj.len() as u32,
            };
            let role = analysis::role(is_test, pct, complexity.fan_in, complexity.fan_out);
            let risks = analysis::risks(&analysis::RiskInput {
                complexity: complexity.clone(),
                syntax_errors: analysis.error_nodes,
                tests: impact.tests.len(),
                is_test,
                hot_spot: fi.hot_spot.as_ref().map(|h| h.score),
                reach: Some(reach),
            });
            let recommendations = analysis::recommendations(&risks, role);
            let summary = format!(
                "{rel} is a {} {} file ({} lines, {} definitions): {} file(s) depend on it, it depends on {}; \
                 PageRank #{} of {}. A change reaches {} file(s) within {} level(s){}.",
                role_word(role),
                lang.name(),
                analysis.lines,
                analysis.definitions.len(),
                complexity.fan_in,
                complexity.fan_out,
                positions.get(&f).copied().unwrap_or(0),
                snap.project.files.len(),
                impact.transitive,
                impact.depth,
                if impact.tests.is_empty() {
                    String::new()
                } else {
                    format!(", {} of them tests", impact.tests.len())
                },
            );
            fi.report = Some(Report {
                summary,
                architectural_role: role,
                complexity,
                risks,
                recommendations,
            });
        }
        if include.impact {
            fi.impact = Some(impact);
        }
        Ok(fi)
    }

    fn symbol_insight(
        &self,
        snap: &Arc<Snapshot>,
        d: DefId,
        depth: u32,
        include: &UnderstandInclude,
    ) -> Result<SymbolInsight> {
        let def = snap.project.def(d);
        let file = snap.project.file(d.file);
        let bytes = std::fs::read(self.root.join(&file.path)).unwrap_or_default();
        let source = bytes
            .get(def.start_byte as usize..def.end_byte as usize)
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let (callers_n, _) = analysis::caller_counts(snap, d);
        let brief = SymbolBrief {
            qualified_name: def.qualified_name.clone(),
            kind: def.kind.as_str().to_owned(),
            path: file.path.clone(),
            line: def.line,
            end_line: def.end_line,
            signature: def.signature.clone(),
            doc: def.doc.clone(),
            callers: callers_n,
            callees: snap.graphs.callees(d).count() as u32,
        };
        let mut ref_files = HashSet::new();
        let mut refs = 0u32;
        for e in snap.graphs.symbol_edges().iter().filter(|e| e.to == d) {
            refs += 1;
            ref_files.insert(e.from_file);
        }
        let (callers, callees) = if include.call_graph {
            (closure_edges(snap, d, depth, true), closure_edges(snap, d, depth, false))
        } else {
            (Vec::new(), Vec::new())
        };
        // The definition's impact as `impact` computes it: sure references only,
        // followed through the definitions that make them.
        let impact = include.impact.then(|| self.impact_radius(snap, d.file, Some(d), depth).0);
        Ok(SymbolInsight {
            symbol: brief,
            source,
            file_hash: stdx::sha256_hex(&bytes),
            callers,
            callees,
            references: refs,
            reference_files: ref_files.len() as u32,
            impact,
        })
    }
}

/// Calls into a file per (caller, caller's file, callee): count, line, resolution.
type CallsIn = HashMap<(Option<DefId>, FileId, DefId), (u32, u32, code_graph::Resolution)>;

/// Calls out of a file's definitions to other files, and into them from other
/// files, aggregated per (caller, callee), most frequent first.
fn file_calls(snap: &Snapshot, f: FileId) -> (Vec<CallEdge>, Vec<CallEdge>) {
    let p = &snap.project;
    let file = p.file(f);
    let mut out: HashMap<(&str, DefId), (u32, code_graph::Resolution)> = HashMap::new();
    let mut inn: CallsIn = HashMap::new();
    for ord in 0..file.defs.len() as u32 {
        let d = DefId { file: f, ord };
        for e in snap.graphs.callees(d) {
            if e.to.file != f {
                let entry = out
                    .entry((p.def(d).qualified_name.as_str(), e.to))
                    .or_insert((0, e.resolution));
                entry.0 += 1;
            }
        }
        for e in snap.graphs.callers(d) {
            if e.from_file != f {
                let entry =
                    inn.entry((e.from, e.from_file, d)).or_insert((0, e.line, e.resolution));
                entry.0 += 1;
            }
        }
    }
    // Ranked on borrowed names, and only the first 15 become answers: a large
    // file has thousands of edges, and copying every name was a tenth of a call.
    // Ties are broken by the names too: the maps iterate in a random order, and
    // the same question must get the same answer (and the same 15).
    type Key<'a> = (u32, &'a str, u32, &'a str, &'a str);
    let first_15 = |mut v: Vec<(Key<'_>, code_graph::Resolution)>| -> Vec<CallEdge> {
        v.sort_by(|(a, _), (b, _)| (b.0, a.1, a.2, a.3, a.4).cmp(&(a.0, b.1, b.2, b.3, b.4)));
        v.truncate(15);
        v.into_iter()
            .map(|((count, path, line, caller, callee), res)| CallEdge {
                caller: caller.to_owned(),
                callee: callee.to_owned(),
                path: path.to_owned(),
                line,
                distance: 1,
                resolution: resolution_str(res),
                count,
            })
            .collect()
    };
    let out = first_15(
        out.into_iter()
            .map(|((caller, to), (count, res))| {
                let callee = p.def(to);
                let key = (
                    count,
                    p.file(to.file).path.as_str(),
                    callee.line,
                    caller,
                    callee.qualified_name.as_str(),
                );
                (key, res)
            })
            .collect(),
    );
    let inn = first_15(
        inn.into_iter()
            .map(|((from, from_file, to), (count, line, res))| {
                let path = p.file(from_file).path.as_str();
                let caller = from.map_or(path, |d| p.def(d).qualified_name.as_str());
                ((count, path, line, caller, p.def(to).qualified_name.as_str()), res)
            })
            .collect(),
    );
    (out, inn)
}

/// Callers (reverse) or callees of a definition up to `depth`, as edges.
pub(crate) fn closure_edges(snap: &Snapshot, d: DefId, depth: u32, reverse: bool) -> Vec<CallEdge> {
    let p = &snap.project;
    let name = |x: DefId| p.def(x).qualified_name.clone();
    let mut out: Vec<CallEdge> = Vec::new();
    if depth == 0 {
        return out;
    }
    // Direct edges keep their call sites; deeper levels come from the closure.
    if reverse {
        for e in snap.graphs.callers(d) {
            out.push(CallEdge {
                caller: e.from.map_or_else(|| p.file(e.from_file).path.clone(), name),
                callee: name(d),
                path: p.file(e.from_file).path.clone(),
                line: e.line,
                distance: 1,
                resolution: resolution_str(e.resolution),
                count: 1,
            });
        }
    } else {
        let mut seen = HashSet::new();
        for e in snap.graphs.callees(d) {
            if seen.insert(e.to) {
                out.push(CallEdge {
                    caller: name(d),
                    callee: name(e.to),
                    path: p.file(e.to.file).path.clone(),
                    line: p.def(e.to).line,
                    distance: 1,
                    resolution: resolution_str(e.resolution),
                    count: 1,
                });
            }
        }
    }
    if depth > 1 {
        for (x, dist, res) in snap.graphs.call_closure(d, depth, reverse) {
            if dist < 2 {
                continue;
            }
            out.push(CallEdge {
                caller: if reverse { name(x) } else { String::new() },
                callee: if reverse { String::new() } else { name(x) },
                path: p.file(x.file).path.clone(),
                line: p.def(x).line,
                distance: dist,
                resolution: resolution_str(res),
                count: 1,
            });
        }
    }
    out.truncate(60);
    out
}

pub(crate) fn resolution_str(r: code_graph::Resolution) -> String {
    match r {
        code_graph::Resolution::Local => "local",
        code_graph::Resolution::Receiver => "receiver",
        code_graph::Resolution::SameFile => "same_file",
        code_graph::Resolution::Imported => "imported",
        code_graph::Resolution::Global => "global",
        code_graph::Resolution::Ambiguous => "ambiguous",
        code_graph::Resolution::NameOnly => "name_only",
    }
    .to_owned()
}

fn def_label(snap: &Snapshot, d: DefId) -> String {
    format!(
        "{}:{} {}",
        snap.project.file(d.file).path,
        snap.project.def(d).line,
        snap.project.def(d).qualified_name
    )
}

fn role_word(r: protocol::ArchitecturalRole) -> &'static str {
    use protocol::ArchitecturalRole as R;
    match r {
        R::Core => "core",
        R::Utility => "utility",
        R::Integration => "integration",
        R::Test => "test",
        _ => "peripheral",
    }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// A path: has a separator or a file extension, and no spaces.
pub(crate) fn looks_like_path(t: &str) -> bool {
    if t.contains(char::is_whitespace) || t.contains("::") {
        return false;
    }
    if t == "." || t.starts_with("./") || t.starts_with('/') || t.ends_with('/') {
        return true;
    }
    let last = t.rsplit('/').next().unwrap_or(t);
    t.contains('/')
        || last.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_lowercase())
                && code_index::Language::from_path(std::path::Path::new(last)).is_some()
        })
}

/// Could be a symbol: one token of identifier characters and separators.
fn is_symbol_like(t: &str) -> bool {
    t.chars().any(char::is_alphanumeric)
        && !t.contains(char::is_whitespace)
        && t.chars().all(|c| c.is_alphanumeric() || "_.:#$<>-/".contains(c))
        || locate_path_line(t)
}

fn locate_path_line(t: &str) -> bool {
    t.rsplit_once(':').is_some_and(|(p, l)| {
        !p.is_empty() && l.chars().all(|c| c.is_ascii_digit()) && !l.is_empty()
    })
}

/// Clearly code: camelCase, snake_case, qualified, or called.
fn is_code_identifier(t: &str) -> bool {
    is_symbol_like(t)
        && (t.contains('_')
            || t.contains("::")
            || t.contains('.')
            || t.ends_with("()")
            || t.chars().zip(t.chars().skip(1)).any(|(a, b)| a.is_lowercase() && b.is_uppercase()))
}

fn similar_paths(snap: &Snapshot, target: &str) -> Vec<String> {
    let base = target.trim_end_matches('/').rsplit('/').next().unwrap_or(target).to_lowercase();
    let mut v: Vec<String> = snap
        .project
        .files
        .iter()
        .filter(|f| f.path.rsplit('/').next().unwrap_or(&f.path).to_lowercase().contains(&base))
        .map(|f| f.path.clone())
        .take(5)
        .collect();
    v.sort();
    v
}

fn understand_guidance(resp: &UnderstandResponse, warnings: Vec<Warning>) -> Guidance {
    let mut actions: Vec<NextAction> = Vec::new();
    let mut warnings = warnings;
    let summary = match resp.resolved_as {
        TargetKind::Symbol => {
            let s = &resp.symbols[0];
            let b = &s.symbol;
            actions.push(action(
                1,
                "change",
                json!({
                    "description": format!("change {}", b.qualified_name),
                    "edits": [{"op": "replaceSymbol", "path": b.path, "qualifiedName": b.qualified_name,
                               "replacementString": "<new definition>", "expectedHash": s.file_hash}],
                    "options": {"dryRun": true, "includeImpact": true}
                }),
                format!("preview a replacement of {}", b.qualified_name),
                "the definition, its callers and the file hash are known now",
            ));
            actions.push(action(
                2,
                "navigate",
                json!({"action": "references", "target": b.qualified_name, "path": b.path}),
                format!("list all {} uses of {}", s.references, b.qualified_name),
                "see every place a change must stay compatible with",
            ));
            if let Some(t) = s.impact.as_ref().and_then(|i| i.tests.first()) {
                actions.push(action(
                    3,
                    "manage",
                    json!({"command": "test", "targets": s.impact.as_ref().map(|i| i.tests.clone()).unwrap_or_default()}),
                    format!("run the tests that cover it ({t}, ...)"),
                    "establish a baseline before changing it",
                ));
            }
            format!(
                "`{}` is a {} in {} (lines {}-{}) with {} caller(s) and {} callee(s); {} reference(s) in {} file(s).{}",
                b.qualified_name,
                b.kind,
                b.path,
                b.line,
                b.end_line,
                b.callers,
                b.callees,
                s.references,
                s.reference_files,
                s.impact
                    .as_ref()
                    .map(|i| format!(
                        " A change reaches {} file(s) ({} test file(s)).",
                        i.transitive,
                        i.tests.len()
                    ))
                    .unwrap_or_default()
            )
        }
        _ if resp.files.is_empty() => {
            actions.push(action(
                1,
                "understand",
                json!({"target": "."}),
                "see the project's most central files",
                "nothing matched this target",
            ));
            format!("Nothing in the index matched `{}`.", resp.target)
        }
        kind => {
            let f = &resp.files[0];
            for (i, w) in resp.files.iter().filter(|f| f.syntax_errors > 0).enumerate() {
                if i == 0 {
                    warnings.push(Warning {
                        severity: WarningLevel::Warning,
                        code: "SYNTAX_ERRORS".into(),
                        message: format!(
                            "{} has {} syntax error node(s); its outline may be incomplete",
                            w.path, w.syntax_errors
                        ),
                        affected: vec![w.path.clone()],
                        mitigation: Some(
                            "fix them first; `change` refuses edits that add more".into(),
                        ),
                    });
                }
            }
            if let Some(fan_in) =
                f.report.as_ref().map(|r| r.complexity.fan_in).filter(|n| *n >= 10)
            {
                warnings.push(Warning {
                    severity: WarningLevel::Warning,
                    code: "HIGH_FAN_IN".into(),
                    message: format!("{fan_in} files depend on {}", f.path),
                    affected: f.dependents.iter().take(5).map(|d| d.path.clone()).collect(),
                    mitigation: Some(
                        "preview changes with includeImpact and run the suggested tests".into(),
                    ),
                });
            }
            let central = f.symbols.iter().max_by_key(|s| s.callers);
            if let Some(s) = central {
                actions.push(action(
                    1,
                    "read",
                    json!({"target": f.path, "view": "fragment", "symbol": s.qualified_name}),
                    format!("read {} (its most called definition)", s.qualified_name),
                    "the skeleton shows signatures; read the body you will work on",
                ));
            }
            actions.push(action(
                2,
                "change",
                json!({
                    "description": "<what to change>",
                    "edits": [{"path": f.path, "targetString": "<exact text from the file>",
                               "replacementString": "<new text>", "expectedHash": f.hash}],
                    "options": {"dryRun": true, "includeImpact": true}
                }),
                format!("preview an edit of {}", f.path),
                "expectedHash guards against edits made since this answer",
            ));
            if let Some(t) = f.impact.as_ref().and_then(|i| i.tests.first()) {
                actions.push(action(
                    3,
                    "manage",
                    json!({"command": "test", "targets": [t]}),
                    format!("run {t}"),
                    "a test that depends on this file",
                ));
            }
            if let Some(d) = f.dependents.first() {
                actions.push(action(
                    4,
                    "understand",
                    json!({"target": d.path, "depth": "shallow"}),
                    format!("understand {}, its strongest dependent", d.path),
                    "see how it is used",
                ));
            }
            let lead = match kind {
                TargetKind::Question => format!(
                    "The question led to {} file(s); the best is {}. ",
                    resp.ranked.len(),
                    resp.ranked.first().map(|r| r.path.as_str()).unwrap_or("-")
                ),
                _ if resp.files.len() > 1 || !resp.ranked.is_empty() => format!(
                    "{} holds {} indexed file(s); the most central are shown. ",
                    resp.target,
                    resp.ranked.len()
                ),
                _ => String::new(),
            };
            format!(
                "{lead}{}",
                f.report
                    .as_ref()
                    .map(|r| r.summary.clone())
                    .unwrap_or_else(|| format!("{} ({} lines).", f.path, f.lines))
            )
        }
    };
    Guidance { context_summary: summary, next_actions: finish(actions), warnings, recovery: None }
}

/// Cuts the answer to the token budget: skeleton lines first, then long lists.
///
/// Tokenizing is the slow part (tens of milliseconds for a large file's answer,
/// a third of a warm call), so only the answer that is sent is counted whole:
/// the cuts are planned from the JSON's length at tokens-per-byte measured on
/// samples of it, then the result is counted exactly, and cut again in the rare
/// case the estimate fell short.
fn fit_budget(resp: &mut UnderstandResponse, budget: u32) {
    let json = |r: &UnderstandResponse| serde_json::to_string(r).unwrap_or_default();
    let first = json(resp);
    let (mut tokens, mut per_byte) = if first.len() <= 3 * SAMPLE_BYTES {
        let exact = code_index::count_tokens(&first) as u32;
        (exact, f64::from(exact) / first.len().max(1) as f64)
    } else {
        let per_byte = sampled_tokens_per_byte(&first);
        ((first.len() as f64 * per_byte).ceil() as u32, per_byte)
    };
    let mut exact = first.len() <= 3 * SAMPLE_BYTES;
    for _pass in 0..3 {
        cut_to(resp, budget, &mut tokens, per_byte);
        if exact && !resp.truncated {
            break;
        }
        // The cut is announced in the answer, and counted with it.
        let announced = resp.guidance.warnings.iter().any(|w| w.code == "TRUNCATED");
        if resp.truncated && !announced {
            resp.guidance.warnings.push(Warning {
                severity: WarningLevel::Info,
                code: "TRUNCATED".into(),
                message: format!("parts were cut to fit the budget of {budget} tokens"),
                affected: vec![],
                mitigation: Some(
                    "raise `budget`, narrow `include`, or `read` the parts you need".into(),
                ),
            });
        }
        let sent = json(resp);
        let counted = code_index::count_tokens(&sent) as u32;
        tokens = counted;
        per_byte = f64::from(counted) / sent.len().max(1) as f64;
        exact = true;
        if counted <= budget {
            break;
        }
    }
    resp.tokens = tokens;
}

/// The length of `r` as JSON, counted as it is written rather than kept: the
/// cuts measure the answer after each step, and a large file's answer is tens
/// of kilobytes.
fn json_len(r: &UnderstandResponse) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    let _ = serde_json::to_writer(&mut n, r);
    n.0
}

/// Bytes tokenized per sample for [`sampled_tokens_per_byte`]; an answer under
/// three samples is counted whole.
const SAMPLE_BYTES: usize = 4096;

/// Tokens per byte of `text` counted on three samples (its start, middle and
/// end), each cut at a line or a space so no word is split.
fn sampled_tokens_per_byte(text: &str) -> f64 {
    let mut bytes = 0;
    let mut tokens = 0;
    for at in [0, text.len() / 2, text.len().saturating_sub(SAMPLE_BYTES)] {
        let mut from = at.min(text.len());
        while !text.is_char_boundary(from) {
            from += 1;
        }
        let mut to = (from + SAMPLE_BYTES).min(text.len());
        while !text.is_char_boundary(to) {
            to -= 1;
        }
        let piece = &text[from..to];
        let start = if from == 0 { 0 } else { piece.find([' ', '\n']).map_or(0, |i| i + 1) };
        let end = if to == text.len() {
            piece.len()
        } else {
            piece.rfind([' ', '\n']).unwrap_or(piece.len())
        };
        let piece = &piece[start..end.max(start)];
        bytes += piece.len();
        tokens += code_index::count_tokens(piece);
    }
    tokens as f64 / bytes.max(1) as f64
}

/// Cuts `resp` until its estimated `tokens` fit `budget` (estimates at
/// `per_byte`; `tokens` is updated).
fn cut_to(resp: &mut UnderstandResponse, budget: u32, tokens: &mut u32, per_byte: f64) {
    let count = |r: &UnderstandResponse| (json_len(r) as f64 * per_byte).ceil() as u32;
    let mut step = 0;
    while *tokens > budget && step < 32 {
        step += 1;
        resp.truncated = true;
        let over = *tokens - budget;
        // 1. skeletons, by lines, keeping the head: drop enough tail lines to cover
        // the excess (by bytes, at this answer's bytes per token), at least a quarter.
        if let Some(sk) =
            resp.files.iter_mut().filter_map(|f| f.skeleton.as_mut()).max_by_key(|s| s.len())
        {
            let mut lines: Vec<&str> = sk.lines().collect();
            // A skeleton cut before ends with our marker: count what it already hid.
            let mut hidden = 0;
            if let Some(n) = lines.last().and_then(|l| l.strip_prefix("⋮ (")).and_then(|l| {
                l.split_once(' ').and_then(|(n, rest)| {
                    rest.starts_with("more skeleton lines").then(|| n.parse::<usize>().ok())?
                })
            }) {
                hidden = n;
                lines.pop();
            }
            if lines.len() > 20 {
                let excess_bytes = (f64::from(over) / per_byte.max(1e-6)) as usize + 64;
                let mut keep = lines.len();
                let mut dropped = 0;
                while keep > 20 && (dropped < excess_bytes || keep > lines.len() * 3 / 4) {
                    keep -= 1;
                    dropped += lines[keep].len() + 1;
                }
                let cut = format!(
                    "{}\n⋮ ({} more skeleton lines: `read` with view skeleton)\n",
                    lines[..keep].join("\n"),
                    lines.len() - keep + hidden
                );
                *sk = cut;
                *tokens = count(resp);
                continue;
            }
        }
        // 2. sources of symbols.
        if let Some(s) =
            resp.symbols.iter_mut().find(|s| s.source.as_ref().is_some_and(|t| t.len() > 200))
        {
            s.source = None;
            *tokens = count(resp);
            continue;
        }
        // 3. halve the long lists.
        let mut changed = false;
        for f in &mut resp.files {
            for len in [
                f.symbols.len(),
                f.calls_in.len(),
                f.calls_out.len(),
                f.dependents.len(),
                f.dependencies.len(),
            ] {
                changed |= len > 5;
            }
            f.symbols.truncate((f.symbols.len() / 2).max(5));
            f.calls_in.truncate((f.calls_in.len() / 2).max(3));
            f.calls_out.truncate((f.calls_out.len() / 2).max(3));
            f.dependents.truncate((f.dependents.len() / 2).max(3));
            f.dependencies.truncate((f.dependencies.len() / 2).max(3));
            if let Some(sk) = &mut f.skeleton
                && !changed
            {
                *sk = sk.lines().take(10).collect::<Vec<_>>().join("\n");
                changed = true;
            }
        }
        for s in &mut resp.symbols {
            changed |= s.callers.len() > 5 || s.callees.len() > 5;
            s.callers.truncate((s.callers.len() / 2).max(5));
            s.callees.truncate((s.callees.len() / 2).max(5));
        }
        if resp.files.len() > 1 {
            resp.files.pop();
            changed = true;
        }
        if !changed {
            break;
        }
        *tokens = count(resp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampled_tokens_per_byte_is_near_the_whole_texts() {
        let code: String = (0..1500)
            .map(|i| {
                format!("    def method_{i}(self, value):\n        return value + {i}  # ok\n")
            })
            .collect();
        let prose = "The quick brown fox jumps over the lazy dog. ".repeat(800);
        let mixed = format!("{prose}{code}{prose}");
        for text in [code, prose, mixed] {
            let json = serde_json::to_string(&text).unwrap();
            let exact = code_index::count_tokens(&json) as f64 / json.len() as f64;
            let sampled = sampled_tokens_per_byte(&json);
            assert!((sampled - exact).abs() / exact < 0.1, "{sampled} vs {exact}");
        }
    }

    #[test]
    fn target_shapes() {
        for (t, path, symbol, code) in [
            ("src/app.py", true, true, true),
            ("app.py", true, true, true),
            (".", true, false, false),
            ("crates/edit/", true, true, false),
            ("Server.start", false, true, true),
            ("edit::Engine::apply", false, true, true),
            ("parse_args", false, true, true),
            ("handleAuth", false, true, true),
            ("authentication", false, true, false),
            ("how are routes registered?", false, false, false),
            ("src/app.py:42", true, true, true),
        ] {
            assert_eq!(looks_like_path(t), path, "path {t}");
            assert_eq!(is_symbol_like(t), symbol, "symbol {t}");
            assert_eq!(is_code_identifier(t), code, "code {t}");
        }
    }
}
