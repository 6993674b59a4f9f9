//! Impact: what may break when a file or a definition changes, and which tests to
//! run.
//!
//! - A **definition**: the reverse closure over references (calls, type uses, other
//!   uses) between definitions, breadth first, each referencing definition (or file
//!   top level) with its distance and the definition it references toward the
//!   target; references that may mean the target but are guesses (one of several
//!   same-named definitions, a method call matched only by its name) are listed
//!   apart as `possible`, not followed.
//! - A **file** (or directory): the same closure from all its definitions, plus the
//!   files importing it without referencing a definition (distance 1) — for a
//!   package root (`lib.rs`, `__init__.py`, `index.ts`), also those importing it
//!   for what it re-exports, which break if its re-exports change. Definition
//!   level on purpose: at file level, a crate root re-exporting every module would
//!   make every file depend on every other, so those importers are not followed.
//!
//! Dependent files are the files of those definitions, at their nearest distance.
//!
//! The **radius** counts dependent files within distance 1, 2 and 3 and in all, a
//! weighted total (`Σ 0.5^(distance-1)`), the share of the project, and a risk level
//! ([`risk_level`], a table-tested policy).
//!
//! **Tests likely affected** are test files (each language's convention, see
//! `testfiles.rs`) that reach the target in the closure, plus test files named after
//! the target's module (`test_cart.py` for `cart.py`) or, for a definition, holding
//! test functions named after it (`test_total` for `total`). Each gets a priority
//! ([`test_priority`]) from its distance and naming, and the test functions that
//! reach the target when they are known.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use serde::Serialize;

use code_index::{DefId, FileId, Project};

use crate::{
    depgraph::{DepGraph, edge_trust},
    graph::SymbolEdge,
    snapshot::Snapshot,
    target::{Target, TargetKind},
    testfiles::{TestKind, module_stem, normalize, test_convention, test_subject},
};
pub use protocol::{
    AffectedTest, AffectedTestPriority as Priority, Dependent, Impact, ImpactRisk as Risk, Radius,
    SymbolDependent,
};

/// How much of the closure to list.
#[derive(Debug, Clone)]
pub struct ImpactOptions {
    /// List dependents up to this distance (the radius always counts all).
    pub depth: u32,
    /// List at most this many dependents (files and definitions each).
    pub limit: usize,
}

impl Default for ImpactOptions {
    fn default() -> Self {
        ImpactOptions { depth: u32::MAX, limit: 100 }
    }
}

/// The risk policy: high when a change reaches a fifth of the project or twenty
/// files directly, medium from a twentieth or five direct dependents.
pub fn risk_level(direct: u32, total: u32, files: usize) -> Risk {
    let share = if files == 0 { 0.0 } else { f64::from(total) / files as f64 };
    if share >= 0.2 && total >= 5 || direct >= 20 {
        Risk::High
    } else if share >= 0.05 && total >= 3 || direct >= 5 {
        Risk::Medium
    } else {
        Risk::Low
    }
}

/// The test priority policy: a test one step away (or named after the target and
/// two steps away) is high; two steps, or named after the target without reaching
/// it, is medium; anything further is low.
pub fn test_priority(distance: Option<u32>, named: bool) -> Priority {
    match (distance, named) {
        (Some(0 | 1), _) | (Some(2), true) => Priority::High,
        (Some(2), false) | (None, true) | (Some(_), true) => Priority::Medium,
        _ => Priority::Low,
    }
}

/// Computes the impact of changing `target`.
///
/// This is the one definition of a file's dependents: the files at distance 1 are
/// what [`coupling`] lists and what the roles (`roles.rs`, the report, the
/// pillars' `understand`) count as its fan-in, and the radius is what every
/// command reports as how far a change reaches.
pub fn impact(snapshot: &Snapshot, target: &Target, opts: &ImpactOptions) -> Impact {
    impact_with(snapshot, snapshot.impact_graph(), target, opts)
}

/// Whether a resolved reference is sure enough to count as a dependency (and a
/// caller): the test impact, roles, reports, hotspots and graph trees apply. A
/// guess (one of several same-named definitions, a method matched by name on a
/// receiver of unknown type) is not.
pub fn is_sure(project: &Project, e: &SymbolEdge) -> bool {
    edge_trust(project, e) >= SURE
}

/// Trust from which a reference is a dependency (see [`is_sure`]).
pub(crate) const SURE: f64 = 0.5;

/// A file's direct dependents and dependencies, sorted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Coupling {
    /// Files depending on it: referencing one of its definitions surely or
    /// importing it (a package root: also for what it re-exports), impact's
    /// distance 1.
    pub dependents: Vec<FileId>,
    /// Files it depends on likewise (a package root imported only for what it
    /// re-exports is not one: the files defining those names are).
    pub dependencies: Vec<FileId>,
}

/// The direct dependents and dependencies of `file` (see [`impact`]).
pub fn coupling(snapshot: &Snapshot, file: FileId) -> Coupling {
    let deps = &snapshot.impact_graph().deps;
    Coupling { dependents: deps.dependents(file), dependencies: deps.out[file as usize].clone() }
}

/// Referencing nodes per definition: (file, Some(def ord) | None for top level).
type Node = (FileId, Option<u32>);

/// What impact walks, built once for many targets (reports).
pub(crate) struct ImpactGraph {
    pub deps: DepGraph,
    /// Who references each definition, and whether the reference is sure.
    referrers: HashMap<DefId, Vec<(Node, bool)>>,
    /// The project's test files with the module each is named after, and their
    /// definitions named `test…` (normalized, the prefix cut): what
    /// [`named_tests`] matches a target against. Built once per snapshot, since
    /// normalizing every test definition's name on every call was most of an
    /// `understand` on Django (issue 25's latency benchmark).
    tests: Vec<TestFile>,
}

struct TestFile {
    file: FileId,
    subject: Option<String>,
    /// (definition ordinal, normalized name after `test`).
    named: Vec<(u32, String)>,
}

impl ImpactGraph {
    pub fn build(snapshot: &Snapshot) -> ImpactGraph {
        let project = &snapshot.project;
        let mut referrers: HashMap<DefId, Vec<(Node, bool)>> = HashMap::new();
        for e in snapshot.graphs.symbol_edges() {
            let sure = is_sure(project, e);
            referrers.entry(e.to).or_default().push(((e.from_file, e.from.map(|d| d.ord)), sure));
        }
        let tests = (0..project.files.len() as FileId)
            .filter(|&f| is_test_file(project, f))
            .map(|f| {
                let file = project.file(f);
                let named = file
                    .defs
                    .iter()
                    .enumerate()
                    .filter_map(|(ord, d)| {
                        let n = normalize(project.names.name(d.name));
                        Some((ord as u32, n.strip_prefix("test")?.to_owned()))
                    })
                    .collect();
                TestFile { file: f, subject: test_subject(&file.path), named }
            })
            .collect();
        ImpactGraph { deps: DepGraph::build(snapshot), referrers, tests }
    }
}

pub(crate) fn impact_with(
    snapshot: &Snapshot,
    graph: &ImpactGraph,
    target: &Target,
    opts: &ImpactOptions,
) -> Impact {
    let project = &snapshot.project;
    let mut tests: HashMap<FileId, TestAcc> = HashMap::new();
    let (file_dist, mut dependents, mut symbols, mut possible) =
        closure(snapshot, graph, target, &mut tests);
    let total = file_dist.len() as u32;
    let count_within = |d: u32| file_dist.values().filter(|&&x| x <= d).count() as u32;
    let direct = count_within(1);
    let radius = Radius {
        direct,
        within_2: count_within(2),
        within_3: count_within(3),
        total,
        // A fold from +0.0: `Sum` for floats starts at -0.0, which JSON prints as `-0.0`
        // for a file nothing depends on.
        weighted: file_dist.values().fold(0.0, |w, &d| w + 0.5f64.powi(d as i32 - 1)),
        share: if project.files.is_empty() {
            0.0
        } else {
            f64::from(total) / project.files.len() as f64
        },
        risk: risk_level(direct, total, project.files.len()),
    };
    named_tests(project, graph, target, &mut tests);
    let mut tests: Vec<AffectedTest> = tests
        .into_iter()
        .filter_map(|(f, acc)| {
            let (kind, convention) = test_convention(project, f)?;
            if kind == TestKind::Support {
                return None;
            }
            let priority = test_priority(acc.distance, acc.named);
            Some(AffectedTest {
                path: project.file(f).path.clone(),
                priority,
                distance: acc.distance,
                convention: convention.to_owned(),
                reasons: acc.reasons.into_iter().collect(),
                functions: acc.functions.into_iter().collect(),
            })
        })
        .collect();
    tests.sort_by(|a, b| {
        (a.priority, a.distance.unwrap_or(u32::MAX), &a.path).cmp(&(
            b.priority,
            b.distance.unwrap_or(u32::MAX),
            &b.path,
        ))
    });
    let before = dependents.len() + symbols.len();
    dependents.retain(|d| d.distance <= opts.depth);
    dependents.truncate(opts.limit);
    symbols.retain(|d| d.distance <= opts.depth);
    symbols.truncate(opts.limit);
    possible.truncate(opts.limit);
    let unlisted = before - dependents.len() - symbols.len();
    let symbols = symbols.into_iter().map(|r| r.listed(project)).collect();
    let possible = possible.into_iter().map(|r| r.listed(project)).collect();
    Impact { target: target.resolved(), radius, dependents, symbols, possible, tests, unlisted }
}

#[derive(Default)]
struct TestAcc {
    distance: Option<u32>,
    named: bool,
    reasons: BTreeSet<String>,
    functions: BTreeSet<String>,
}

impl TestAcc {
    fn reach(&mut self, d: u32, reason: String) {
        if self.distance.is_none_or(|x| d < x) {
            self.distance = Some(d);
        }
        self.reasons.insert(reason);
    }
}

/// A file of tests to run: the files [`crate::is_test_path`] names but test
/// support (`conftest.py` affects tests, is not one). A source file with an
/// inline `mod tests` is neither.
fn is_test_file(project: &Project, f: FileId) -> bool {
    test_convention(project, f).is_some_and(|(k, _)| k == TestKind::File)
}

type Closure = (HashMap<FileId, u32>, Vec<Dependent>, Vec<Reached>, Vec<Reached>);

/// A definition (or a file's top level) the closure reached: at what distance,
/// through which definition. Turned into a [`SymbolDependent`] (paths and names
/// copied) only if it is listed: a widely used target reaches thousands.
#[derive(Clone, Copy)]
struct Reached {
    node: Node,
    distance: u32,
    via: DefId,
}

impl Reached {
    fn listed(self, project: &Project) -> SymbolDependent {
        let (f, ord) = self.node;
        let def = ord.map(|o| project.def(DefId { file: f, ord: o }));
        SymbolDependent {
            path: project.file(f).path.clone(),
            qualified_name: def.map(|d| d.qualified_name.clone()),
            kind: def.map(|d| d.kind),
            line: def.map_or(1, |d| d.line),
            distance: self.distance,
            via: project.def(self.via).qualified_name.clone(),
        }
    }
}

/// The outermost definition containing `d` (a test method's class is not what a
/// runner selects; `TestCart::test_total` is). Qualified name of the definition
/// itself when it is a function or method.
fn top_level_name(project: &Project, d: DefId) -> String {
    let mut cur = d;
    // Up to the nearest callable that is not nested in another callable.
    while let Some(p) = project.def(cur).parent {
        let parent = DefId { file: cur.file, ord: p };
        if project.def(parent).kind.is_callable() {
            cur = parent;
        } else {
            break;
        }
    }
    project.def(cur).qualified_name.clone()
}

/// The reverse closure over references from the target's definitions (every
/// definition of a file target), plus, for files, the files importing them without
/// referencing any definition (distance 1).
fn closure(
    snapshot: &Snapshot,
    graph: &ImpactGraph,
    target: &Target,
    tests: &mut HashMap<FileId, TestAcc>,
) -> Closure {
    let project = &snapshot.project;
    let start_defs: Vec<DefId> = match target.kind {
        TargetKind::Symbol => target.def_ids.clone(),
        TargetKind::File | TargetKind::Directory => target
            .file_ids
            .iter()
            .flat_map(|&f| {
                (0..project.file(f).defs.len() as u32).map(move |ord| DefId { file: f, ord })
            })
            .collect(),
    };
    let (deps, referrers) = (&graph.deps, &graph.referrers);
    let own: HashSet<FileId> = target.file_ids.iter().copied().collect();
    let file_target = target.kind != TargetKind::Symbol;
    let mut seen: HashSet<Node> = start_defs.iter().map(|d| (d.file, Some(d.ord))).collect();
    if file_target {
        // References inside the target files are not impact.
        seen.extend(target.file_ids.iter().map(|&f| (f, None)));
    }
    let mut queue: VecDeque<(DefId, u32)> = start_defs.iter().map(|&d| (d, 0)).collect();
    let mut symbols = Vec::new();
    let mut possible = Vec::new();
    let mut possible_seen = HashSet::new();
    // Whether a file follows a test convention, asked once per file per call.
    let mut is_test_node: HashMap<FileId, bool> = HashMap::new();
    while let Some((def, dist)) = queue.pop_front() {
        let Some(refs) = referrers.get(&def) else { continue };
        for &(node, sure) in refs {
            if file_target && own.contains(&node.0) {
                continue;
            }
            if !sure {
                // Only what may reference the target itself; the target's own
                // definitions referencing each other are not news, and a file's top
                // level naming it is an import.
                if !file_target
                    && dist == 0
                    && node.1.is_some()
                    && !seen.contains(&node)
                    && possible_seen.insert(node)
                {
                    possible.push(Reached { node, distance: 1, via: def });
                }
                continue;
            }
            if !seen.insert(node) {
                continue;
            }
            let d = dist + 1;
            symbols.push(Reached { node, distance: d, via: def });
            if *is_test_node
                .entry(node.0)
                .or_insert_with(|| test_convention(project, node.0).is_some())
            {
                let acc = tests.entry(node.0).or_default();
                acc.reach(d, format!("references {}", project.def(def).qualified_name));
                if let Some(o) = node.1
                    && d <= 2
                {
                    acc.functions.insert(top_level_name(project, DefId { file: node.0, ord: o }));
                }
            }
            if let Some(o) = node.1 {
                queue.push_back((DefId { file: node.0, ord: o }, d));
            }
        }
    }
    // A possible dependent is dropped when a sure one has its file and qualified
    // name (one set, not a scan of every sure one per possible one).
    let qualified =
        |n: Node| n.1.map(|o| project.def(DefId { file: n.0, ord: o }).qualified_name.as_str());
    let sure: HashSet<(FileId, Option<&str>)> =
        symbols.iter().map(|s| (s.node.0, qualified(s.node))).collect();
    possible.retain(|p| !sure.contains(&(p.node.0, qualified(p.node))));
    let mut file_dist: HashMap<FileId, u32> = HashMap::new();
    let mut via_file: HashMap<FileId, String> = HashMap::new();
    for s in &symbols {
        let f = s.node.0;
        if own.contains(&f) {
            continue;
        }
        let e = file_dist.entry(f).or_insert(u32::MAX);
        if s.distance < *e {
            *e = s.distance;
            via_file.insert(f, project.def(s.via).qualified_name.clone());
        }
    }
    // Files importing a target file without referencing any of its definitions,
    // and those importing a target package root for what it re-exports.
    if file_target {
        for &t in &target.file_ids {
            let importers = deps.inn[t as usize]
                .iter()
                .filter(|&&f| deps.imports[f as usize].contains(&t))
                .chain(&deps.reexport_importers[t as usize]);
            for &f in importers {
                if own.contains(&f) || file_dist.contains_key(&f) {
                    continue;
                }
                file_dist.insert(f, 1);
                via_file.insert(f, project.file(t).path.clone());
                if test_convention(project, f).is_some() {
                    tests
                        .entry(f)
                        .or_default()
                        .reach(1, format!("imports {}", project.file(t).path));
                }
            }
        }
    }
    let mut dependents: Vec<Dependent> = file_dist
        .iter()
        .map(|(&f, &d)| Dependent {
            path: project.file(f).path.clone(),
            distance: d,
            via: via_file[&f].clone(),
            test: is_test_file(project, f),
        })
        .collect();
    dependents.sort_by(|a, b| (a.distance, &a.path).cmp(&(b.distance, &b.path)));
    for &f in &target.file_ids {
        if matches!(test_convention(project, f), Some((TestKind::Inline, _))) {
            let why = if file_target { "has inline tests" } else { "its file has inline tests" };
            tests.entry(f).or_default().reach(0, why.into());
        }
    }
    (file_dist, dependents, symbols, possible)
}

/// Test files named after the target's module, and (for a definition) test
/// functions named after it.
fn named_tests(
    project: &Project,
    graph: &ImpactGraph,
    target: &Target,
    tests: &mut HashMap<FileId, TestAcc>,
) {
    let stems: HashSet<String> = target.files.iter().map(|p| module_stem(p)).collect();
    let names: HashSet<String> = target
        .def_ids
        .iter()
        .map(|&d| normalize(project.names.name(project.def(d).name)))
        .filter(|n| n.len() >= 4)
        .collect();
    for t in &graph.tests {
        let f = t.file;
        if let Some(subject) = &t.subject
            && stems.contains(subject)
        {
            let acc = tests.entry(f).or_default();
            acc.named = true;
            acc.reasons.insert(format!("named after {subject}"));
        }
        if names.is_empty() {
            continue;
        }
        for (ord, rest) in &t.named {
            if names.iter().any(|name| rest.contains(name.as_str())) {
                let d = DefId { file: f, ord: *ord };
                let acc = tests.entry(f).or_default();
                acc.named = true;
                acc.functions.insert(top_level_name(project, d));
                acc.reasons
                    .insert(format!("{} is named after the target", project.def(d).qualified_name));
            }
        }
    }
}

#[cfg(test)]
mod tests;
