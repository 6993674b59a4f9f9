//! The file dependency graph impact and reports reason over.
//!
//! [`Graphs::file_out`] is tuned for ranking: every resolved reference counts, even
//! an ambiguous one (a call to `save` when five classes define it), with a small
//! weight. For "what breaks if this changes" that would connect everything to
//! everything through common method names, so this graph keeps only edges we are
//! sure enough of ([`edge_trust`] ≥ 0.5): resolved imports, references resolved by
//! scope, file or import, and calls and type uses of the only definition of their
//! name. Two kinds of import are not dependencies: a Rust `mod x;` declaration
//! (containment), and an import of a package root (`lib.rs`, `__init__.py`,
//! `index.ts`) used only to reach names it re-exports (the reference edges already
//! point at the files defining them). An edge `a → b` means `a` depends on `b`.

use std::collections::{HashSet, VecDeque};

use protocol::SymbolKind;

use code_index::{FileId, Language, Project, RefKind};

use crate::{
    graph::{Resolution, SymbolEdge},
    resolve::ImportTarget,
    snapshot::Snapshot,
};

/// A Rust `mod x;` declaration (`pub mod x;`, `pub(crate) mod x;`).
fn is_mod_decl(text: &str) -> bool {
    let t = text.trim();
    let t = t.strip_prefix("pub").map_or(t, |r| {
        let r = r.trim_start();
        match r.strip_prefix('(') {
            Some(inner) => inner.split_once(')').map_or(r, |(_, rest)| rest),
            None => r,
        }
        .trim_start()
    });
    t.starts_with("mod ") && t.ends_with(';')
}

/// Files that are the root of a package or module and mostly re-export.
pub(crate) fn is_module_root(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "lib.rs"
            | "main.rs"
            | "mod.rs"
            | "__init__.py"
            | "index.js"
            | "index.ts"
            | "index.tsx"
            | "index.mjs"
            | "index.jsx"
    )
}

/// How much a resolved reference can be trusted to mean its target, 0..1.
///
/// Scope, file and import resolution are certain enough (1.0), and so is a
/// receiver's stated type (split if several types share its name). A name resolved
/// only because the project defines it once (`Global`) is trusted for calls of
/// functions and constructors and for type uses (0.7), but not for method calls
/// (`x.len()` is far more often a library method than the project's only `len`) nor
/// for plain identifier uses (a field or local of the same name): 0.15, nor when the
/// language would not let the file see it ([`visible`]): 0.1. Ambiguous
/// references (one of several definitions) keep their split weight (0.3 / n).
pub(crate) fn edge_trust(project: &Project, e: &SymbolEdge) -> f64 {
    match e.resolution {
        Resolution::Local | Resolution::SameFile | Resolution::Imported => 1.0,
        Resolution::Receiver => e.weight,
        Resolution::Global => {
            let kind = project.def(e.to).kind;
            if !visible(project, e) {
                return 0.1;
            }
            match e.kind {
                RefKind::Type => 0.7,
                RefKind::Call | RefKind::MemberCall | RefKind::SelfCall
                    if kind != SymbolKind::Method =>
                {
                    0.7
                }
                _ => 0.15,
            }
        }
        Resolution::Ambiguous => e.weight,
        // A name matched on a receiver of unknown type: as unsure as one of three
        // same-named definitions, whatever weight it carries for ranking.
        Resolution::NameOnly => 0.3 * e.weight,
    }
}

/// Whether the language lets the referencing file see the definition at all: a
/// Rust item without `pub`, a Go name in lower case from another package, a Python
/// `_private` name from another module, a Java/C# `private` member cannot be what
/// another file means (`root.join(..)` is not the private `fn join` elsewhere).
fn visible(project: &Project, e: &SymbolEdge) -> bool {
    if e.from_file == e.to.file {
        return true;
    }
    let def = project.def(e.to);
    let to_file = project.file(e.to.file);
    let name = project.names.name(def.name);
    match to_file.language {
        Language::Rust => def.signature.trim_start().starts_with("pub"),
        Language::Go => {
            let dir = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
            name.starts_with(|c: char| c.is_ascii_uppercase())
                || dir(&project.file(e.from_file).path) == dir(&to_file.path)
        }
        Language::Python => !name.starts_with('_') || name.starts_with("__"),
        Language::Java | Language::CSharp => {
            !def.signature.split_whitespace().any(|w| w == "private")
        }
        _ => true,
    }
}

pub(crate) struct DepGraph {
    /// Files each file depends on, sorted, without duplicates or self-edges.
    pub out: Vec<Vec<FileId>>,
    /// Files depending on each file.
    pub inn: Vec<Vec<FileId>>,
    /// Import edges only (cycles are reported on these: reference cycles inside a
    /// package are normal).
    pub imports: Vec<Vec<FileId>>,
    /// For a package root, the files importing it only to reach what it re-exports
    /// (not edges above): changing the root's re-exports breaks them, so the impact
    /// of the root itself lists them, without following them further.
    pub reexport_importers: Vec<Vec<FileId>>,
}

impl DepGraph {
    pub fn build(snapshot: &Snapshot) -> DepGraph {
        let project = &snapshot.project;
        let n = project.files.len();
        let mut out: Vec<Vec<FileId>> = vec![Vec::new(); n];
        let mut referenced: HashSet<(FileId, FileId)> = HashSet::new();
        for e in snapshot.graphs.symbol_edges() {
            if e.to.file != e.from_file && crate::impact::is_sure(project, e) {
                out[e.from_file as usize].push(e.to.file);
                referenced.insert((e.from_file, e.to.file));
            }
        }
        let mut imports: Vec<Vec<FileId>> = vec![Vec::new(); n];
        let mut reexport_importers: Vec<Vec<FileId>> = vec![Vec::new(); n];
        for (f, resolved) in snapshot.graphs.imports.iter().enumerate() {
            let file = &project.files[f];
            for imp in resolved {
                let ImportTarget::Files(targets) = &imp.target else { continue };
                // `mod foo;` declares a child module: containment, not use.
                let declares =
                    file.imports.iter().any(|row| row.line == imp.line && is_mod_decl(&row.text));
                if declares {
                    continue;
                }
                for &t in targets {
                    if t as usize == f {
                        continue;
                    }
                    // `use crate::X` names the crate root, which only re-exports X:
                    // the dependency is on X's own file (a reference edge), not on
                    // the root, unless something defined in the root is used.
                    if is_module_root(&project.file(t).path)
                        && !referenced.contains(&(f as FileId, t))
                    {
                        reexport_importers[t as usize].push(f as FileId);
                        continue;
                    }
                    out[f].push(t);
                    imports[f].push(t);
                }
            }
        }
        let mut inn: Vec<Vec<FileId>> = vec![Vec::new(); n];
        for (f, list) in out.iter_mut().enumerate() {
            list.sort_unstable();
            list.dedup();
            for &t in list.iter() {
                inn[t as usize].push(f as FileId);
            }
        }
        for list in imports.iter_mut().chain(&mut reexport_importers) {
            list.sort_unstable();
            list.dedup();
        }
        DepGraph { out, inn, imports, reexport_importers }
    }

    /// The files depending on `f` directly, as impact counts them: sure references
    /// and imports, and for a package root also the files importing it for what it
    /// re-exports (sorted).
    pub fn dependents(&self, f: FileId) -> Vec<FileId> {
        let mut out = self.inn[f as usize].clone();
        out.extend(&self.reexport_importers[f as usize]);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Breadth-first from `start` over dependents (`reverse`) or dependencies: every
    /// reached file with its distance and the file it was reached from, nearest
    /// first, up to `max_depth`.
    pub fn closure(
        &self,
        start: &[FileId],
        reverse: bool,
        max_depth: u32,
    ) -> Vec<(FileId, u32, FileId)> {
        let adj = if reverse { &self.inn } else { &self.out };
        let mut dist = vec![u32::MAX; adj.len()];
        let mut queue = VecDeque::new();
        for &s in start {
            dist[s as usize] = 0;
            queue.push_back(s);
        }
        let mut out = Vec::new();
        while let Some(f) = queue.pop_front() {
            let d = dist[f as usize];
            if d >= max_depth {
                continue;
            }
            for &g in &adj[f as usize] {
                if dist[g as usize] == u32::MAX {
                    dist[g as usize] = d + 1;
                    out.push((g, d + 1, f));
                    queue.push_back(g);
                }
            }
        }
        out
    }

    /// Strongly connected components of `adj` with more than one file (cycles),
    /// each sorted, largest first. Iterative Tarjan: deep graphs do not overflow
    /// the stack.
    pub fn cycles(adj: &[Vec<FileId>]) -> Vec<Vec<FileId>> {
        let comps = scc(adj);
        let mut out: Vec<Vec<FileId>> = comps.into_iter().filter(|c| c.len() > 1).collect();
        for c in &mut out {
            c.sort_unstable();
        }
        out.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        out
    }

    /// For every file, how many files depend on it transitively (not counting
    /// itself). Exact, by reachability bitsets over the condensation; None when the
    /// project is too large for that to be cheap (the caller falls back to
    /// per-file searches for the files it shows).
    pub fn dependents_counts(&self) -> Option<Vec<u32>> {
        let n = self.inn.len();
        if n > 20_000 {
            return None;
        }
        let comps = scc(&self.out);
        let mut comp_of = vec![0usize; n];
        for (c, files) in comps.iter().enumerate() {
            for &f in files {
                comp_of[f as usize] = c;
            }
        }
        // Tarjan emits a component after every component it depends on, so the
        // components depending on `c` come later: walking backwards, their
        // dependents are known when `c`'s are computed (the union over its direct
        // dependents of their members and their own dependents).
        let words = n.div_ceil(64);
        let mut reach: Vec<Vec<u64>> = vec![Vec::new(); comps.len()];
        for c in (0..comps.len()).rev() {
            let mut bits = vec![0u64; words];
            for &f in &comps[c] {
                for &g in &self.inn[f as usize] {
                    let gc = comp_of[g as usize];
                    if gc == c {
                        continue;
                    }
                    for &h in &comps[gc] {
                        bits[h as usize / 64] |= 1 << (h % 64);
                    }
                    for (b, r) in bits.iter_mut().zip(&reach[gc]) {
                        *b |= r;
                    }
                }
            }
            // Inside a cycle every member depends on every other.
            if comps[c].len() > 1 {
                for &h in &comps[c] {
                    bits[h as usize / 64] |= 1 << (h % 64);
                }
            }
            reach[c] = bits;
        }
        Some(
            (0..n)
                .map(|f| {
                    let c = comp_of[f];
                    let total: u32 = reach[c].iter().map(|w| w.count_ones()).sum();
                    // A cycle's own bits include the file itself.
                    total - u32::from(comps[c].len() > 1)
                })
                .collect(),
        )
    }
}

/// Tarjan's strongly connected components, iteratively. Components come out in
/// reverse topological order: a component is emitted after every component
/// reachable from it.
fn scc(adj: &[Vec<FileId>]) -> Vec<Vec<FileId>> {
    let n = adj.len();
    let mut index = vec![u32::MAX; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<FileId> = Vec::new();
    let mut comps = Vec::new();
    let mut next = 0u32;
    for root in 0..n {
        if index[root] != u32::MAX {
            continue;
        }
        // (node, next edge to look at)
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root as FileId);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i < adj[v].len() {
                let w = adj[v][*i] as usize;
                *i += 1;
                if index[w] == u32::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w as FileId);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w as usize] = false;
                    comp.push(w);
                    if w as usize == v {
                        break;
                    }
                }
                comps.push(comp);
            }
        }
    }
    comps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(u32, u32)], n: usize) -> DepGraph {
        let mut out = vec![Vec::new(); n];
        let mut inn = vec![Vec::new(); n];
        for &(a, b) in edges {
            out[a as usize].push(b);
            inn[b as usize].push(a);
        }
        DepGraph { imports: out.clone(), reexport_importers: vec![Vec::new(); n], out, inn }
    }

    /// Transitive dependents by breadth-first search, to check the bitsets against.
    fn brute(g: &DepGraph) -> Vec<u32> {
        (0..g.inn.len() as u32).map(|f| g.closure(&[f], true, u32::MAX).len() as u32).collect()
    }

    #[test]
    fn dependents_counts_match_search_on_cycles_chains_and_diamonds() {
        let cases: Vec<(Vec<(u32, u32)>, usize)> = vec![
            (vec![(1, 0), (2, 1), (3, 2)], 4),                         // chain
            (vec![(1, 0), (2, 0), (3, 1), (3, 2)], 4),                 // diamond
            (vec![(0, 1), (1, 2), (2, 0), (3, 0), (4, 3)], 5),         // cycle with dependents
            (vec![(0, 1), (1, 0), (2, 3), (3, 2), (2, 0), (4, 4)], 5), // two cycles, self-loop
            ((0..99).map(|i| (i + 1, i)).collect(), 100),              // deep chain
            (vec![], 3),
        ];
        for (edges, n) in cases {
            let g = graph(&edges, n);
            assert_eq!(g.dependents_counts().unwrap(), brute(&g), "{edges:?}");
        }
    }

    #[test]
    fn declarations_and_roots() {
        for (t, want) in [
            ("mod tests;", true),
            ("pub mod net;", true),
            ("pub(crate) mod x;", true),
            ("mod inline {", false),
            ("use crate::x;", false),
        ] {
            assert_eq!(is_mod_decl(t), want, "{t}");
        }
        assert!(is_module_root("crates/x/src/lib.rs") && is_module_root("pkg/__init__.py"));
        assert!(!is_module_root("src/library.rs"));
    }

    #[test]
    fn cycles_and_closure_paths() {
        let g = graph(&[(0, 1), (1, 2), (2, 0), (3, 0), (4, 3), (5, 6), (6, 5)], 7);
        assert_eq!(DepGraph::cycles(&g.out), vec![vec![0, 1, 2], vec![5, 6]]);
        // Dependents of 0: 2 (via cycle) at 1, 3 at 1, then 1 and 4 at 2.
        assert_eq!(g.closure(&[0], true, 9), vec![(2, 1, 0), (3, 1, 0), (1, 2, 2), (4, 2, 3)]);
        assert_eq!(g.closure(&[0], true, 1), vec![(2, 1, 0), (3, 1, 0)]);
        assert_eq!(g.closure(&[4], false, 9), vec![(3, 1, 4), (0, 2, 3), (1, 3, 0), (2, 4, 1)]);
    }
}
