//! `navigate`: definition, references, callers, callees, implementations, type
//! hierarchy, from the snapshot's resolved graphs.

use std::collections::{HashMap, HashSet};

use code_graph::Snapshot;
use code_index::{DefId, FileId};
use protocol::{
    DirEntry, EntryType, Guidance, Location, NavigateAction, NavigateRequest, NavigateResponse,
    Warning,
};
use serde_json::json;

use stdx::Call;

use crate::{
    Session,
    error::{Error, Result},
    guidance::{action, finish},
    locate,
    understand::{closure_edges, resolution_str},
};

const DEFAULT_LIMIT: u32 = 50;

impl Session {
    pub fn navigate(&self, req: &NavigateRequest, call: &Call<'_>) -> Result<NavigateResponse> {
        let target = req.target.trim();
        if target.is_empty() {
            return Err(Error::InvalidArgument(
                "`target` is empty: name a symbol or `path:line`".into(),
            ));
        }
        let within = match &req.path {
            Some(p) if !p.trim().is_empty() => Some(self.rel_path(p)?),
            _ => None,
        };
        let (snap, warnings) =
            self.fresh_snapshot(call, &within.iter().map(String::as_str).collect::<Vec<_>>())?;
        let defs = locate::find_defs(&snap, target, within.as_deref());
        if defs.is_empty() {
            return Err(Error::NotFound {
                message: format!("no definition named `{target}` in the index"),
                path: within,
                similar: locate::similar_names(&snap, target),
            });
        }
        let depth = req.depth.unwrap_or(1).clamp(1, 5);
        let limit = req.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, 1000) as usize;
        let mut lines = LineCache::new(&self.root);
        let definitions: Vec<Location> =
            defs.iter().take(20).map(|&d| def_location(&snap, d, None, None)).collect();
        let mut results: Vec<Location> = match req.action {
            NavigateAction::Definition => {
                defs.iter().map(|&d| def_location(&snap, d, None, None)).collect()
            }
            NavigateAction::References => references(&snap, &defs, &mut lines),
            NavigateAction::Callers | NavigateAction::Callees => {
                let reverse = req.action == NavigateAction::Callers;
                let mut out = Vec::new();
                for &d in &defs {
                    for e in closure_edges(&snap, d, depth, reverse) {
                        let (name, line) =
                            if reverse { (e.caller, e.line) } else { (e.callee, e.line) };
                        let text = if reverse && e.distance == 1 {
                            lines.line(&e.path, line)
                        } else {
                            None
                        };
                        out.push(Location {
                            path: e.path,
                            line,
                            end_line: None,
                            column: None,
                            qualified_name: (!name.is_empty()).then_some(name),
                            kind: None,
                            text,
                            distance: Some(e.distance),
                            relation: Some(e.resolution),
                        });
                    }
                }
                // Sure edges first: a guess (a name matched on a receiver of unknown
                // type, one of several same-named definitions) is listed, after them.
                out.sort_by_key(is_guess);
                out
            }
            NavigateAction::Implementations => implementations(&snap, &defs, &mut lines),
            NavigateAction::Hierarchy => hierarchy(&snap, &defs, depth, &mut lines),
            _ => return Err(Error::InvalidArgument("unknown navigate action".into())),
        };
        let total = results.len() as u32;
        let truncated = results.len() > limit;
        results.truncate(limit);
        let guidance = navigate_guidance(req, &definitions, &results, total, warnings);
        Ok(NavigateResponse {
            action: req.action,
            target: target.to_owned(),
            definitions,
            results,
            total,
            truncated,
            guidance,
        })
    }
}

fn def_location(
    snap: &Snapshot,
    d: DefId,
    distance: Option<u32>,
    relation: Option<&str>,
) -> Location {
    let def = snap.project.def(d);
    Location {
        path: snap.project.file(d.file).path.clone(),
        line: def.line,
        end_line: Some(def.end_line),
        column: None,
        qualified_name: Some(def.qualified_name.clone()),
        kind: Some(def.kind.as_str().to_owned()),
        text: (!def.signature.is_empty()).then(|| def.signature.clone()),
        distance,
        relation: relation.map(str::to_owned),
    }
}

/// Resolved uses of the definitions, in file and line order.
fn references(snap: &Snapshot, defs: &[DefId], lines: &mut LineCache<'_>) -> Vec<Location> {
    let mut seen = HashSet::new();
    let mut hits: Vec<(&code_graph::SymbolEdge,)> = edges_into(snap, defs)
        .into_iter()
        .filter(|e| seen.insert((e.from_file, e.line, e.kind)))
        .map(|e| (e,))
        .collect();
    hits.sort_by(|a, b| {
        (&snap.project.file(a.0.from_file).path, a.0.line)
            .cmp(&(&snap.project.file(b.0.from_file).path, b.0.line))
    });
    hits.into_iter()
        .map(|(e,)| {
            let path = snap.project.file(e.from_file).path.clone();
            Location {
                text: lines.line(&path, e.line),
                path,
                line: e.line,
                end_line: None,
                column: None,
                qualified_name: e.from.map(|d| snap.project.def(d).qualified_name.clone()),
                kind: None,
                distance: None,
                relation: Some(format!("{}/{}", e.kind.as_str(), resolution_str(e.resolution))),
            }
        })
        .collect()
}

/// The edges reaching any of `defs`, in the edge list's order (the edges are
/// one slice: their addresses are that order), as a scan of every edge would
/// meet them: the first edge of a site kept is the one a scan kept.
fn edges_into<'s>(snap: &'s Snapshot, defs: &[DefId]) -> Vec<&'s code_graph::SymbolEdge> {
    let mut targets = defs.to_vec();
    targets.sort();
    targets.dedup();
    let mut into: Vec<&code_graph::SymbolEdge> =
        targets.iter().flat_map(|&d| snap.graphs.edges_into(d)).collect();
    into.sort_by_key(|e| std::ptr::from_ref(*e) as usize);
    into
}

/// Type references to `defs` written in another type's header (`class B(A)`,
/// `class B extends A implements I`, `struct S: P`) or in a top-level
/// `impl T for S` line.
fn supertype_uses(
    snap: &Snapshot,
    defs: &[DefId],
    lines: &mut LineCache<'_>,
) -> Vec<(Option<DefId>, FileId, u32)> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for e in edges_into(snap, defs) {
        if e.kind.is_call() {
            continue;
        }
        let header = match e.from {
            Some(from) => {
                let d = snap.project.def(from);
                d.kind.is_container()
                    && e.line >= d.line
                    && e.line <= d.name_line.max(d.line) + 1
                    && Some(from) != Some(e.to)
            }
            None => {
                let path = snap.project.file(e.from_file).path.clone();
                lines.line(&path, e.line).is_some_and(|l| {
                    let l = l.trim_start();
                    l.starts_with("impl") && l.contains(" for ")
                })
            }
        };
        if header && seen.insert((e.from, e.from_file, e.line)) {
            out.push((e.from, e.from_file, e.line));
        }
    }
    out
}

fn implementations(snap: &Snapshot, defs: &[DefId], lines: &mut LineCache<'_>) -> Vec<Location> {
    supertype_uses(snap, defs, lines)
        .into_iter()
        .map(|(from, file, line)| match from {
            Some(d) => def_location(snap, d, Some(1), Some("subtype")),
            None => {
                let path = snap.project.file(file).path.clone();
                let text = lines.line(&path, line);
                Location {
                    // `impl Shape for Square` is no definition of its own: name
                    // the implementing type so the answer says who implements.
                    qualified_name: text.as_deref().and_then(impl_self_type),
                    text,
                    path,
                    line,
                    end_line: None,
                    column: None,
                    kind: Some("impl".into()),
                    distance: Some(1),
                    relation: Some("subtype".into()),
                }
            }
        })
        .collect()
}

/// The self type of a Rust `impl Trait for Type` header line (`Type`, without
/// generics or path).
fn impl_self_type(line: &str) -> Option<String> {
    let line = line.trim_start();
    if !line.starts_with("impl") {
        return None;
    }
    let (_, after) = line.split_once(" for ")?;
    let ty =
        after.trim_start().split(|c: char| c == '<' || c == '{' || c.is_whitespace()).next()?;
    let name = ty.rsplit("::").next()?.trim_start_matches('&');
    (!name.is_empty()).then(|| name.to_owned())
}

/// Supertypes (what the definitions' headers name) and subtypes (what names
/// them in a header), `depth` levels each way.
fn hierarchy(
    snap: &Snapshot,
    defs: &[DefId],
    depth: u32,
    lines: &mut LineCache<'_>,
) -> Vec<Location> {
    let mut out = Vec::new();
    // Up: types referenced from the header of each definition.
    let mut frontier: Vec<DefId> = defs.to_vec();
    let mut seen: HashSet<DefId> = defs.iter().copied().collect();
    let mut header_refs: HashMap<DefId, Vec<DefId>> = HashMap::new();
    for e in snap.graphs.symbol_edges() {
        if let Some(from) = e.from
            && !e.kind.is_call()
            && snap.project.def(e.to).kind.is_container()
        {
            let d = snap.project.def(from);
            if d.kind.is_container()
                && e.line >= d.line
                && e.line <= d.name_line.max(d.line) + 1
                && from != e.to
            {
                header_refs.entry(from).or_default().push(e.to);
            }
        }
    }
    for dist in 1..=depth {
        let mut next = Vec::new();
        for d in &frontier {
            for &sup in header_refs.get(d).map_or(&[][..], Vec::as_slice) {
                if seen.insert(sup) {
                    out.push(def_location(snap, sup, Some(dist), Some("supertype")));
                    next.push(sup);
                }
            }
        }
        frontier = next;
    }
    // Down: subtypes.
    let mut frontier: Vec<DefId> = defs.to_vec();
    for dist in 1..=depth {
        let mut next = Vec::new();
        for (from, file, line) in supertype_uses(snap, &frontier, lines) {
            match from {
                Some(d) if seen.insert(d) => {
                    out.push(def_location(snap, d, Some(dist), Some("subtype")));
                    next.push(d);
                }
                None => {
                    let path = snap.project.file(file).path.clone();
                    out.push(Location {
                        text: lines.line(&path, line),
                        path,
                        line,
                        end_line: None,
                        column: None,
                        qualified_name: None,
                        kind: Some("impl".into()),
                        distance: Some(dist),
                        relation: Some("subtype".into()),
                    });
                }
                _ => {}
            }
        }
        frontier = next;
    }
    out
}

fn navigate_guidance(
    req: &NavigateRequest,
    definitions: &[Location],
    results: &[Location],
    total: u32,
    warnings: Vec<Warning>,
) -> Guidance {
    let mut actions = Vec::new();
    let first_def = &definitions[0];
    let name = first_def.qualified_name.clone().unwrap_or_else(|| req.target.clone());
    actions.push(action(
        1,
        "understand",
        json!({"target": name}),
        format!("understand {name}: callers, callees, impact, tests"),
        "everything about the definition in one answer",
    ));
    if let Some(r) = results.first().filter(|_| req.action != NavigateAction::Definition) {
        let start = r.line.saturating_sub(5).max(1);
        actions.push(action(
            2,
            "read",
            json!({"target": r.path, "view": "fragment", "lineRange": format!("{start}-{}", r.end_line.unwrap_or(r.line) + 5)}),
            format!("read the first result at {}:{}", r.path, r.line),
            "see the code around it",
        ));
    }
    actions.push(action(
        3,
        "read",
        json!({"target": first_def.path, "view": "fragment", "symbol": name}),
        format!("read the definition of {name}"),
        "",
    ));
    if definitions.len() > 1 {
        actions.push(action(
            4,
            "navigate",
            json!({"action": req.action.as_str(), "target": req.target, "path": definitions[1].path}),
            format!("only the definition in {}", definitions[1].path),
            "several definitions share this name",
        ));
    }
    let guesses = results.iter().filter(|l| is_guess(l)).count();
    let summary = format!(
        "`{}` resolves to {} definition(s) (first: {}:{}); {} {} found{}{}.",
        req.target,
        definitions.len(),
        first_def.path,
        first_def.line,
        total,
        req.action.as_str(),
        if guesses > 0 {
            format!(
                " ({guesses}{} of them guesses, matched by name only)",
                if total as usize > results.len() { " shown" } else { "" }
            )
        } else {
            String::new()
        },
        if total as usize > results.len() {
            format!(", {} shown", results.len())
        } else {
            String::new()
        }
    );
    Guidance { context_summary: summary, next_actions: finish(actions), warnings, recovery: None }
}

/// A call edge that is a guess (see `code_graph::is_sure`): resolved as
/// `ambiguous` or `name_only`. (A `global` call the language would not let the caller
/// see, a private name of another module, is a guess too, and not marked here.)
pub(crate) fn is_guess(l: &Location) -> bool {
    matches!(l.relation.as_deref(), Some("ambiguous" | "name_only"))
}

/// Source lines of files, read once per call.
pub(crate) struct LineCache<'a> {
    root: &'a std::path::Path,
    /// Each file read once: its text and where its lines start (a `String` per
    /// line of every referencing file was most of a `references` answer).
    files: HashMap<String, (String, Vec<usize>)>,
}

impl<'a> LineCache<'a> {
    pub(crate) fn new(root: &'a std::path::Path) -> Self {
        LineCache { root, files: HashMap::new() }
    }

    pub(crate) fn line(&mut self, path: &str, line: u32) -> Option<String> {
        let (text, starts) = self.files.entry(path.to_owned()).or_insert_with(|| {
            let text = std::fs::read(self.root.join(path))
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            let starts = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .filter(|&i| i < text.len())
                .collect();
            (text, starts)
        });
        let start = *starts.get(line.checked_sub(1)? as usize)?;
        let rest = &text[start..];
        let l = rest.split('\n').next().unwrap_or(rest);
        // As `str::lines` reads a line: without its `\r`.
        let l = l.strip_suffix('\r').unwrap_or(l).trim();
        Some(if l.len() > 200 {
            format!("{}…", &l[..l.floor_char_boundary(200)])
        } else {
            l.to_owned()
        })
    }
}

impl Session {
    /// The low-level `search_project`: definitions whose name matches `query` and
    /// the files it leads to (BM25, definitions, graph).
    pub(crate) fn find_symbols_and_files(
        &self,
        query: &str,
        limit: u32,
        call: &Call<'_>,
    ) -> Result<(Vec<Location>, Vec<protocol::RankedFile>, Vec<Warning>)> {
        let query = query.trim();
        if query.is_empty() {
            return Err(Error::InvalidArgument("`query` is empty".into()));
        }
        let (snap, warnings) = self.fresh_snapshot(call, &[])?;
        let limit = limit.clamp(1, 200) as usize;
        let mut symbols: Vec<Location> = Vec::new();
        for word in
            query.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).take(5)
        {
            for d in locate::find_defs(
                &snap,
                word.trim_matches(|c: char| !c.is_alphanumeric() && c != '_'),
                None,
            ) {
                if symbols.len() >= limit {
                    break;
                }
                let loc = def_location(&snap, d, None, None);
                if !symbols.iter().any(|s| s.path == loc.path && s.line == loc.line) {
                    symbols.push(loc);
                }
            }
        }
        let root = self.root.clone();
        let search = self.search_index(&snap)?;
        let opts = retrieval::LocalizeOptions { k: limit, ..Default::default() };
        let files = retrieval::localize(&snap, &search, &root, query, &opts)?
            .into_iter()
            .map(|r| protocol::RankedFile {
                path: r.path,
                score: (r.score * 10_000.0).round() / 10_000.0,
                evidence: r.evidence.iter().take(3).map(retrieval::describe_evidence).collect(),
            })
            .collect();
        Ok((symbols, files, warnings))
    }

    /// The low-level `list_directory`: entries under `dir` (gitignore-aware), up to
    /// `depth` levels, files with their language and line count when indexed.
    pub(crate) fn directory_entries(
        &self,
        dir: &str,
        depth: u32,
        call: &Call<'_>,
    ) -> Result<Vec<DirEntry>> {
        let rel = if dir.trim().is_empty() || dir.trim() == "." {
            String::new()
        } else {
            self.rel_path(dir)?
        };
        let abs = self.root.join(&rel);
        if !abs.is_dir() {
            return Err(Error::NotFound {
                message: format!("{}: no such directory", if rel.is_empty() { "." } else { &rel }),
                path: Some(rel),
                similar: vec![],
            });
        }
        let (snap, _) = self.fresh_snapshot(call, &[])?;
        let mut out = Vec::new();
        let walker = ignore::WalkBuilder::new(&abs)
            .max_depth(Some(depth.clamp(1, 10) as usize))
            .hidden(false)
            .filter_entry(|e| !matches!(e.file_name().to_str(), Some(".git" | ".ironbees")))
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for entry in walker.flatten() {
            if entry.depth() == 0 {
                continue;
            }
            let Ok(path) = entry.path().strip_prefix(&self.root) else { continue };
            let path = stdx::to_slash(path);
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let mut e = DirEntry {
                path: path.clone(),
                kind: if is_dir { EntryType::Directory } else { EntryType::File },
                language: None,
                lines: None,
                definitions: None,
            };
            if let Some(f) = snap.project.file_id(&path) {
                let pf = snap.project.file(f);
                e.language = Some(pf.language.name().to_owned());
                e.lines = Some(pf.lines);
                e.definitions = Some(pf.defs.len() as u32);
            }
            out.push(e);
            if out.len() >= 2000 {
                break;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impl_self_types() {
        for (line, want) in [
            ("impl Shape for Square {", Some("Square")),
            ("    impl<T: Clone> Shape for geo::Poly<T> where T: Copy {", Some("Poly")),
            ("impl Square {", None),
            ("fn for_each() {", None),
        ] {
            assert_eq!(impl_self_type(line).as_deref(), want, "{line}");
        }
    }

    #[test]
    fn line_cache_reads_lines_as_str_lines_does() {
        let dir = test_support::TempProject::new();
        let text = "first\r\n\n  third  \nlast without newline";
        dir.write("f.txt", text);
        let mut cache = LineCache::new(dir.root());
        let want: Vec<Option<String>> = text.lines().map(|l| Some(l.trim().to_owned())).collect();
        let got: Vec<Option<String>> = (1..=4).map(|n| cache.line("f.txt", n)).collect();
        assert_eq!(got, want);
        assert_eq!(cache.line("f.txt", 5), None);
        assert_eq!(cache.line("f.txt", 0), None);
        assert_eq!(cache.line("missing.txt", 1), None);
    }
}
