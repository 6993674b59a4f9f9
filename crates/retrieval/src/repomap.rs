//! The ranked repository map: the definitions that matter most, as the lines that
//! declare them, in exactly the token budget given.
//!
//! Aider's repository map is the anchor: rank definitions with PageRank over the
//! reference graph, personalized toward what the user is working on, then show the
//! top ones' declaration lines grouped by file, as many as fit. What this one does
//! differently:
//!
//! - **Ranks definitions directly** (`symrank.rs`): a graph whose nodes are
//!   definitions, not files, with resolution-aware weights; tests count a third.
//! - **Seeds from the query three ways**: identifiers it names (weighted by how
//!   code-like the mention is, split between same-named definitions), paths and
//!   modules it names, and — when a search index is given — the definitions whose
//!   text matches it best (BM25). Focus files seed with their whole content. The
//!   walk restarts at seeds 85% of the time and anywhere 15% (test code a third as
//!   likely as other code), and may also step
//!   from a definition to what uses it (weight 0.25), so the map shows a focus
//!   file's callers as well as its callees.
//! - **Leaves out what is not the project's own**: vendored directories and
//!   minified bundles; test code ranks a tenth unless the query names it.
//! - **Shows more per line of budget**: each file once, headed by its path and
//!   inferred role; each definition as its full signature (up to eight lines;
//!   decorators and attributes included), its first doc line, the header of the
//!   class or `impl` it is in, and for data types their first fields; true line
//!   numbers (like `ironbees skeleton`) and `⋮` where lines are left out. Files are
//!   ordered by their best definition, most relevant first.
//! - **Fits the budget exactly**: the number of definitions is found by exponential
//!   then binary search on the real token count (`o200k_base`) of the rendered map,
//!   so the map is the longest ranked prefix whose rendering fits; what budget is
//!   left is filled with the paths of the next most relevant files, one per line.
//!   A larger budget never shows fewer definitions.

use std::{
    cell::RefCell,
    collections::{BTreeSet, HashMap, HashSet},
};

use code_graph::{Role, Snapshot, SymbolGraph, file_roles, vendored_files};

use code_index::{Def, DefId, Error, FileId, Project, Result, Sources, count_tokens};

use crate::{querytype::analyze_query, search::SearchIndex};
pub use protocol::{MapFile, MapSeeds, MapSymbol, RepoMap};

/// What map to draw.
#[derive(Debug, Clone, Default)]
pub struct RepoMapOptions {
    /// The budget in `o200k_base` tokens; the map never exceeds it.
    pub tokens: usize,
    /// Files being worked on (project-relative): the ranking starts from them, and
    /// they are not shown (the reader has them already).
    pub focus: Vec<String>,
    /// A request (issue text, question): what it names and matches seeds the
    /// ranking.
    pub query: Option<String>,
}

/// Draws the map (see the module documentation). `search` adds text-search seeds
/// for a query; `sources` supplies the lines shown.
pub fn repo_map(
    snapshot: &Snapshot,
    search: Option<&SearchIndex>,
    sources: &dyn Sources,
    opts: &RepoMapOptions,
) -> Result<RepoMap> {
    if let Some(q) = &opts.query {
        crate::querytype::check_query_size(q)?;
    }
    let project = &snapshot.project;
    let mut focus: Vec<FileId> = Vec::new();
    for p in &opts.focus {
        let id = project.file_id(p).ok_or_else(|| Error::NotFound { path: p.into() })?;
        if !focus.contains(&id) {
            focus.push(id);
        }
    }
    let (restart, seeds) = seeds(snapshot, search, &focus, opts.query.as_deref())?;
    let personalized = restart.is_some();
    let graph = SymbolGraph::build(snapshot, if personalized { 0.25 } else { 0.0 });
    let rank = graph.rank(restart.as_deref());

    let focus_set: HashSet<FileId> = focus.iter().copied().collect();
    let vendored = vendored_files(project, |p| sources.read(p));
    let seed_files: HashSet<&str> = seeds.files.iter().map(String::as_str).collect();
    let mut ranked: Vec<(DefId, f64)> = project
        .all_defs()
        .filter(|d| !focus_set.contains(&d.file) && !vendored[d.file as usize])
        .filter(|&d| {
            // Functions inside functions are implementation detail.
            let def = project.def(d);
            def.parent
                .is_none_or(|p| !project.def(DefId { file: d.file, ord: p }).kind.is_callable())
        })
        .map(|d| {
            let mut score = rank[graph.def_node(d) as usize];
            if graph.test_file[d.file as usize]
                && !seed_files.contains(project.file(d.file).path.as_str())
            {
                score *= 0.1;
            }
            (d, score)
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));

    let roles: Vec<Role> = file_roles(snapshot).into_iter().map(|r| r.0).collect();
    let renderer = Renderer { project, sources, roles: &roles, texts: RefCell::default() };

    // The longest prefix of `ranked` whose rendering fits.
    let budget = opts.tokens;
    let fits = |k: usize| renderer.render(&ranked[..k], &[]).1 <= budget;
    let n = ranked.len();
    let mut lo = 0; // fits
    let mut hi = None; // does not fit
    let mut k = 8.min(n);
    while k > lo {
        if fits(k) {
            lo = k;
            if k == n {
                break;
            }
            k = (k * 2).min(n);
        } else {
            hi = Some(k);
            break;
        }
    }
    if let Some(mut hi) = hi {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }
    let chosen = &ranked[..lo];

    // Fill what is left with the next files' paths.
    let shown: HashSet<FileId> = chosen.iter().map(|(d, _)| d.file).collect();
    let mut more: Vec<FileId> = Vec::new();
    let mut seen = shown.clone();
    for (d, score) in &ranked[lo..] {
        if *score > 0.0 && seen.insert(d.file) {
            more.push(d.file);
        }
        if more.len() >= 2000 {
            break;
        }
    }
    let (mut tlo, mut thi) = (0usize, more.len() + 1);
    while thi - tlo > 1 {
        let mid = tlo + (thi - tlo) / 2;
        if renderer.render(chosen, &more[..mid]).1 <= budget {
            tlo = mid;
        } else {
            thi = mid;
        }
    }
    let (text, tokens, files) = renderer.render(chosen, &more[..tlo]);
    Ok(RepoMap {
        text,
        tokens,
        budget,
        files,
        more_files: more[..tlo].iter().map(|&f| project.file(f).path.clone()).collect(),
        definitions: chosen.len(),
        candidates: ranked.iter().filter(|r| r.1 > 0.0).count(),
        seeds,
    })
}

/// Seed weights per definition and file node (None: not personalized) and what
/// they were built from.
fn seeds(
    snapshot: &Snapshot,
    search: Option<&SearchIndex>,
    focus: &[FileId],
    query: Option<&str>,
) -> Result<(Option<Vec<f64>>, MapSeeds)> {
    let project = &snapshot.project;
    let graph_nodes = project.all_defs().count() + project.files.len();
    let mut w = vec![0.0f64; graph_nodes];
    let mut base = Vec::with_capacity(project.files.len());
    let mut total_defs = 0u32;
    for f in &project.files {
        base.push(total_defs);
        total_defs += f.defs.len() as u32;
    }
    let def_node = |d: DefId| (base[d.file as usize] + d.ord) as usize;
    let file_node = |f: FileId| (total_defs + f) as usize;
    let mut info = MapSeeds {
        focus: focus.iter().map(|&f| project.file(f).path.clone()).collect(),
        ..MapSeeds::default()
    };
    // A whole file: its top level and every definition share the weight.
    let seed_file = |w: &mut Vec<f64>, f: FileId, weight: f64| {
        let n = project.file(f).defs.len() as f64 + 1.0;
        w[file_node(f)] += weight / n;
        for ord in 0..project.file(f).defs.len() as u32 {
            w[def_node(DefId { file: f, ord })] += weight / n;
        }
    };
    for &f in focus {
        seed_file(&mut w, f, 1.0);
    }
    if let Some(q) = query.filter(|q| !q.trim().is_empty()) {
        let features = analyze_query(q);
        let mut named_files: Vec<FileId> = Vec::new();
        for m in &features.paths {
            for f in files_named(project, &m.path) {
                if !named_files.contains(&f) {
                    named_files.push(f);
                }
            }
        }
        for &f in &named_files {
            seed_file(&mut w, f, 1.0);
            info.files.push(project.file(f).path.clone());
        }
        let mut idents: Vec<(String, f64)> =
            features.identifiers.iter().map(|m| (m.text.clone(), m.strength)).collect();
        idents.extend(features.paths.iter().filter_map(|p| p.function.clone().map(|f| (f, 1.0))));
        // `Discount.apply` names one method: its parts (`Discount`, `apply`) are
        // not separate mentions when the whole resolves.
        let whole: Vec<String> = idents
            .iter()
            .map(|(t, _)| t.replace("::", "."))
            .filter(|t| t.contains('.') && !defs_named(project, t).is_empty())
            .collect();
        idents.retain(|(t, _)| {
            let t = t.replace("::", ".");
            !whole.iter().any(|w| {
                *w != t && (w.starts_with(&format!("{t}.")) || w.ends_with(&format!(".{t}")))
            })
        });
        for (text, strength) in idents {
            let defs = defs_named(project, &text);
            if defs.is_empty() {
                continue;
            }
            let share = strength / defs.len() as f64;
            for &d in &defs {
                w[def_node(d)] += share;
                // A name shared by many definitions says little about each.
                let label = code_graph::describe_def(project, d);
                if defs.len() <= 5 && !info.symbols.contains(&label) {
                    info.symbols.push(label);
                }
            }
        }
        if let Some(search) = search {
            let hits = search.search(q, 20, 64)?;
            let top = hits.first().map_or(1.0, |h| f64::from(h.score).max(1e-9));
            for h in &hits {
                let Some(f) = project.file_id(&h.path) else { continue };
                let Some(ord) = h.ord else { continue };
                let Some(def) = project.file(f).defs.get(ord as usize) else { continue };
                if def.qualified_name != h.qualified_name {
                    continue; // the search index is behind this snapshot for that file
                }
                w[def_node(DefId { file: f, ord })] += 0.5 * f64::from(h.score) / top;
                info.search_hits += 1;
            }
        }
    }
    let total: f64 = w.iter().sum();
    Ok(((total > 0.0).then_some(w), info))
}

/// Files a mention names: `shop/cart.py` by path suffix, `shop.cart` as a module.
fn files_named(project: &Project, mention: &str) -> Vec<FileId> {
    let m = mention.trim_start_matches("./").trim_start_matches('/');
    if m.is_empty() {
        return Vec::new();
    }
    let suffix = format!("/{m}");
    let module = format!("/{}", m.replace('.', "/"));
    (0..project.files.len() as FileId)
        .filter(|&f| {
            let p = format!("/{}", project.file(f).path);
            let stemmed = p.rsplit_once('.').map_or(p.as_str(), |(a, _)| a);
            p.ends_with(&suffix)
                || (!m.contains('/') && stemmed.ends_with(&module))
                || stemmed.ends_with(&format!("{module}/__init__"))
        })
        .collect()
}

/// Definitions an identifier names: `total`, `Cart.total`, `http::Client`.
fn defs_named(project: &Project, text: &str) -> Vec<DefId> {
    let norm = text.replace("::", ".").replace('#', ".");
    let norm = norm.trim_end_matches("()");
    let last = norm.rsplit('.').next().unwrap_or(norm);
    project
        .defs_named_str(last)
        .iter()
        .copied()
        .filter(|&d| {
            if !norm.contains('.') {
                return true;
            }
            let q = project.def(d).qualified_name.replace("::", ".");
            q == norm || q.ends_with(&format!(".{norm}")) || norm.ends_with(&format!(".{q}"))
        })
        .collect()
}

/// A file's lines, read once.
struct FileText {
    lines: Vec<String>,
    line_starts: Vec<usize>,
}

struct Renderer<'a> {
    project: &'a Project,
    sources: &'a dyn Sources,
    roles: &'a [Role],
    texts: RefCell<HashMap<FileId, Option<std::rc::Rc<FileText>>>>,
}

/// Lines shown of one definition's header before the middle is elided.
const MAX_HEADER_LINES: u32 = 8;
/// Body lines shown of a data type (fields, variants).
const DATA_BODY_LINES: u32 = 8;
/// Longer lines are cut (minified code).
const MAX_LINE_CHARS: usize = 160;

impl Renderer<'_> {
    fn text(&self, f: FileId) -> Option<std::rc::Rc<FileText>> {
        self.texts
            .borrow_mut()
            .entry(f)
            .or_insert_with(|| {
                let bytes = self.sources.read(&self.project.file(f).path)?;
                let mut line_starts = vec![0];
                line_starts.extend(
                    bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1),
                );
                let text = String::from_utf8_lossy(&bytes);
                let lines = text
                    .split('\n')
                    .map(|l| {
                        let l = l.trim_end();
                        match l.char_indices().nth(MAX_LINE_CHARS) {
                            Some((i, _)) => format!("{}…", &l[..i]),
                            None => l.to_owned(),
                        }
                    })
                    .collect();
                Some(std::rc::Rc::new(FileText { lines, line_starts }))
            })
            .clone()
    }

    /// Renders the map of `defs` (grouped by file, files in order of their best
    /// definition) followed by the paths of `more`; returns the text, its tokens and
    /// the files shown.
    fn render(&self, defs: &[(DefId, f64)], more: &[FileId]) -> (String, usize, Vec<MapFile>) {
        let mut order: Vec<FileId> = Vec::new();
        let mut by_file: HashMap<FileId, Vec<(DefId, f64)>> = HashMap::new();
        for &(d, score) in defs {
            by_file
                .entry(d.file)
                .or_insert_with(|| {
                    order.push(d.file);
                    Vec::new()
                })
                .push((d, score));
        }
        let mut out = String::new();
        let mut files = Vec::new();
        for f in order {
            let Some(text) = self.text(f) else { continue };
            let mut shown: BTreeSet<u32> = BTreeSet::new();
            let mut list = by_file.remove(&f).unwrap_or_default();
            for &(d, _) in &list {
                shown.extend(def_lines(self.project, &text, d));
            }
            list.sort_by_key(|(d, _)| self.project.def(*d).line);
            let file = self.project.file(f);
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!("{} ({})\n", file.path, self.roles[f as usize]));
            let width = text.lines.len().max(1).to_string().len();
            let mut prev = 0u32;
            for &line in &shown {
                let Some(l) = text.lines.get(line as usize - 1) else { continue };
                if line > prev + 1 {
                    out.push_str(&format!("{:>width$}⋮\n", ""));
                }
                out.push_str(&format!("{line:>width$}│ {l}\n"));
                prev = line;
            }
            if prev < file.lines {
                out.push_str(&format!("{:>width$}⋮\n", ""));
            }
            files.push(MapFile {
                path: file.path.clone(),
                role: self.roles[f as usize],
                symbols: list
                    .iter()
                    .map(|&(d, rank)| {
                        let def = self.project.def(d);
                        MapSymbol {
                            qualified_name: def.qualified_name.clone(),
                            kind: def.kind,
                            line: def.line,
                            rank,
                        }
                    })
                    .collect(),
            });
        }
        if !more.is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            for &f in more {
                out.push_str(&self.project.file(f).path);
                out.push('\n');
            }
        }
        let tokens = count_tokens(&out);
        (out, tokens, files)
    }
}

/// The lines that show a definition: its header (signature, decorators), first doc
/// line, a data type's first fields, and the headers of what it is inside.
fn def_lines(project: &Project, text: &FileText, d: DefId) -> Vec<u32> {
    let def = project.def(d);
    let mut lines = header_lines(text, def, MAX_HEADER_LINES);
    let header_end = lines.last().copied().unwrap_or(def.line);
    if let Some(doc) = def.doc.as_deref().map(str::trim).filter(|s| s.len() >= 3) {
        let below = header_end + 1..=header_end + 3;
        let above = def.line.saturating_sub(3).max(1)..def.line;
        if let Some(l) = below
            .chain(above)
            .find(|&l| text.lines.get(l as usize - 1).is_some_and(|t| t.contains(doc)))
        {
            lines.push(l);
        }
    }
    if def.kind.is_data_type() && def.body.is_some() {
        let last = def.end_line.min(header_end + DATA_BODY_LINES);
        lines.extend(header_end + 1..=last);
    }
    // Containers, innermost first: their headers' first lines.
    let mut parent = def.parent;
    let mut outermost = def;
    while let Some(p) = parent {
        let pd = project.def(DefId { file: d.file, ord: p });
        lines.extend(header_lines(text, pd, 2));
        outermost = pd;
        parent = pd.parent;
    }
    // A block that is not a definition (a Rust `impl`, a C++ namespace): the nearest
    // less-indented line above that opens a block.
    if let Some(l) = enclosing_block(text, outermost.line) {
        lines.push(l);
    }
    lines
}

fn header_lines(text: &FileText, def: &Def, max: u32) -> Vec<u32> {
    // Rust attributes (`#[derive(..)]`, `#[serde(..)]`) cost many tokens and say
    // little about what a definition is for.
    let attribute = |l: u32| {
        l < def.name_line
            && text.lines.get(l as usize - 1).is_some_and(|t| t.trim_start().starts_with("#["))
    };
    let mut lines = header_span(text, def, max);
    lines.retain(|&l| !attribute(l));
    if lines.is_empty() {
        lines.push(def.name_line);
    }
    lines
}

fn header_span(text: &FileText, def: &Def, max: u32) -> Vec<u32> {
    let line_of = |byte: u32| -> u32 {
        match text.line_starts.binary_search(&(byte as usize)) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    };
    let end = match def.body {
        Some((body_start, _)) => {
            let body_line = line_of(body_start);
            let start = text.line_starts.get(body_line as usize - 1).copied().unwrap_or(0);
            let before = text
                .lines
                .get(body_line as usize - 1)
                .map(|l| l.get(..(body_start as usize).saturating_sub(start)).unwrap_or(l))
                .unwrap_or("");
            if before.trim().is_empty() && body_line > def.line { body_line - 1 } else { body_line }
        }
        None => def.name_line,
    };
    let end = end.max(def.name_line).max(def.line).min(def.end_line.max(def.line));
    if end - def.line < max {
        return (def.line..=end).collect();
    }
    // Long headers (stacks of decorators, long parameter lists): the first lines
    // and the last ones, which carry the name and the return type.
    let half = max / 2;
    (def.line..def.line + half).chain(end + 1 - (max - half)..=end).collect()
}

fn indentation(s: &str) -> Option<usize> {
    let trimmed = s.trim_start();
    (!trimmed.is_empty()).then(|| s.len() - trimmed.len())
}

fn enclosing_block(text: &FileText, line: u32) -> Option<u32> {
    let own = indentation(text.lines.get(line as usize - 1)?)?;
    if own == 0 {
        return None;
    }
    let from = line.saturating_sub(1);
    let to = line.saturating_sub(400).max(1);
    for l in (to..=from).rev() {
        let Some(t) = text.lines.get(l as usize - 1) else { continue };
        let Some(ind) = indentation(t) else { continue };
        if ind < own {
            let t = t.trim_end();
            return (t.ends_with('{') || t.ends_with(':')).then_some(l);
        }
    }
    None
}

#[cfg(test)]
mod tests;
