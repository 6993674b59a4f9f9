//! PageRank over definitions.
//!
//! Nodes are every definition plus one node per file for its top-level code (a
//! script's statements, a module's imports and constants). Edges come from the
//! resolved references ([`Graphs::symbol_edges`]), from the referencing definition
//! (or the file's top level) to the definition referenced, weighted like Aider's
//! repository map and then some:
//!
//! - how far the resolution can be trusted (`depgraph::edge_trust`: a scoped or
//!   imported name 1.0; the unique definition of a name 0.7 for calls and types,
//!   0.15 for method calls and plain uses; one of several 0.3 split between them);
//!   guesses (below 0.5) are further divided by the number of files making them
//!   beyond three: a name called from everywhere but never imported is most likely
//!   a library's (`x.len()`), not the project's only `len`;
//! - the kind of use: calls and type uses 1.0, other identifier uses 0.5;
//! - how specific the name is (short, private and dunder names say less);
//! - `sqrt` of the number of references, so one caller in a loop does not dominate;
//! - references from test code (test files, inline `mod tests`) count a third:
//!   tests touch everything, which says little about what the code itself depends
//!   on.
//!
//! A member also hands a little of its rank to its container (method → class), so
//! a class whose methods are used ranks with them. A node's weights below 1 in total
//! leave the rest to a sink that hands it back to the restart distribution: an
//! unsure reference passes on only as much rank as it is sure.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use code_index::{DefId, FileId, RefKind};

use crate::{
    depgraph::edge_trust,
    graph::name_specificity,
    rank::pagerank,
    snapshot::Snapshot,
    testfiles::{is_test_module, is_test_path},
};

/// The definition graph of a snapshot, ready for (personalized) PageRank.
pub struct SymbolGraph {
    /// First node of each file's definitions; file `f`'s top level is node
    /// `defs + f`.
    base: Vec<u32>,
    defs: u32,
    pub out: Vec<Vec<(u32, f64)>>,
    /// Whether each file holds tests (any convention).
    pub test_file: Vec<bool>,
    /// Where the walk restarts without seeds: every node alike, test code a
    /// third (thousands of test functions would otherwise lend their restart mass
    /// to the fixtures they share). The sink gets nothing.
    prior: Vec<f64>,
}

impl SymbolGraph {
    /// `reverse` > 0 also adds every edge backwards with that share of its weight,
    /// so that a personalized walk reaches what *uses* its seeds, not only what
    /// they use.
    pub fn build(snapshot: &Snapshot, reverse: f64) -> SymbolGraph {
        let project = &snapshot.project;
        let mut base = Vec::with_capacity(project.files.len());
        let mut defs = 0u32;
        for f in &project.files {
            base.push(defs);
            defs += f.defs.len() as u32;
        }
        let n = defs as usize + project.files.len();
        let test_file: Vec<bool> = project.files.iter().map(|f| is_test_path(&f.path)).collect();
        // Inline test modules (Rust `mod tests { .. }`): test code inside source.
        let test_modules: Vec<Vec<(u32, u32)>> = project
            .files
            .iter()
            .map(|f| {
                f.defs
                    .iter()
                    .filter(|d| is_test_module(project, d))
                    .map(|d| (d.line, d.end_line))
                    .collect()
            })
            .collect();
        let mut prior = vec![1.0; n + 1];
        prior[n] = 0.0;
        for (f, file) in project.files.iter().enumerate() {
            for (ord, d) in file.defs.iter().enumerate() {
                let node = base[f] as usize + ord;
                if test_file[f] || test_modules[f].iter().any(|&(a, b)| a <= d.line && d.line <= b)
                {
                    prior[node] = 1.0 / 3.0;
                }
            }
            if test_file[f] {
                prior[defs as usize + f] = 1.0 / 3.0;
            }
        }
        let mut g = SymbolGraph { base, defs, out: vec![Vec::new(); n], test_file, prior };
        // Guessed references (trust below 0.5) to a definition from many files are
        // most likely something else of the same name (`x.len()` from a hundred
        // files is the standard library's): damp them by how widespread they are.
        let mut guessed_from: HashMap<DefId, HashSet<FileId>> = HashMap::default();
        snapshot.graphs.for_each_edge(|e| {
            if edge_trust(project, e) < 0.5 {
                guessed_from.entry(e.to).or_default().insert(e.from_file);
            }
        });
        let mut agg: HashMap<(u32, u32), (f64, u32)> = HashMap::default();
        snapshot.graphs.for_each_edge(|e| {
            let from = match e.from {
                Some(d) => g.def_node(d),
                None => g.file_node(e.from_file),
            };
            let to = g.def_node(e.to);
            let kind_w = match e.kind {
                RefKind::Call | RefKind::MemberCall | RefKind::SelfCall | RefKind::Type => 1.0,
                RefKind::Use => 0.5,
            };
            let spec = name_specificity(project.names.name(project.def(e.to).name));
            let in_test = g.test_file[e.from_file as usize]
                || test_modules[e.from_file as usize]
                    .iter()
                    .any(|&(a, b)| a <= e.line && e.line <= b);
            let test_w = if in_test { 1.0 / 3.0 } else { 1.0 };
            let mut trust = edge_trust(project, e);
            if trust < 0.5 {
                let spread = guessed_from.get(&e.to).map_or(1, HashSet::len) as f64;
                trust *= (3.0 / spread).min(1.0);
            }
            let w = trust * kind_w * spec * test_w;
            let entry = agg.entry((from, to)).or_insert((0.0, 0));
            entry.0 = entry.0.max(w);
            entry.1 += 1;
        });
        for (f, file) in project.files.iter().enumerate() {
            for (ord, d) in file.defs.iter().enumerate() {
                if let Some(p) = d.parent {
                    let child = g.def_node(DefId { file: f as FileId, ord: ord as u32 });
                    let parent = g.def_node(DefId { file: f as FileId, ord: p });
                    let entry = agg.entry((child, parent)).or_insert((0.0, 0));
                    entry.0 = entry.0.max(0.3);
                    entry.1 += 1;
                }
            }
        }
        let mut pairs: Vec<((u32, u32), (f64, u32))> = agg.into_iter().collect();
        // Weights are how sure we are that a reference is a dependency. PageRank
        // normalizes them per node, which would hand all of a function's rank to its
        // one guessed call; a sink takes the unsure remainder below 1 instead and
        // gives it back to the restart distribution.
        let sink = n as u32;
        g.out.push(Vec::new());
        pairs.sort_by_key(|p| p.0);
        for ((from, to), (w, count)) in pairs {
            let w = w * f64::from(count).sqrt();
            g.out[from as usize].push((to, w));
            if reverse > 0.0 {
                g.out[to as usize].push((from, w * reverse));
            }
        }
        for edges in &mut g.out[..n] {
            let total: f64 = edges.iter().map(|e| e.1).sum();
            if !edges.is_empty() && total < 1.0 {
                edges.push((sink, 1.0 - total));
            }
        }
        g
    }

    pub fn def_node(&self, d: DefId) -> u32 {
        self.base[d.file as usize] + d.ord
    }

    pub fn file_node(&self, f: FileId) -> u32 {
        self.defs + f
    }

    /// The definition a node is; None for a file's top level (or the sink).
    #[cfg(test)]
    pub fn node_def(&self, node: u32) -> Option<DefId> {
        if node >= self.defs {
            return None;
        }
        let file = self.base.partition_point(|&b| b <= node) - 1;
        Some(DefId { file: file as FileId, ord: node - self.base[file] })
    }

    /// PageRank. With `seeds` (a weight per definition and file node, any scale,
    /// not all zero), the walk restarts at them 85% of the time and by the prior
    /// 15%; without, by the prior.
    pub fn rank(&self, seeds: Option<&[f64]>) -> Vec<f64> {
        let prior_total: f64 = self.prior.iter().sum();
        let restart: Vec<f64> = match seeds.map(|s| (s, s.iter().sum::<f64>())) {
            Some((s, total)) if total > 0.0 => self
                .prior
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    0.85 * s.get(i).copied().unwrap_or(0.0) / total + 0.15 * p / prior_total
                })
                .collect(),
            _ => self.prior.clone(),
        };
        pagerank(&self.out, Some(&restart), 0.85)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::fixture;

    #[test]
    fn used_definitions_outrank_unused_and_tests_count_less() {
        let fx = fixture(
            r#"
            //- app/core.py
            class Store:
                def get(self, key):
                    return key

            def unused_helper():
                pass
            //- app/views.py
            from app.core import Store

            def index():
                return Store().get("a")

            def detail():
                return Store().get("b")
            //- tests/test_core.py
            from app.core import unused_helper

            def test_helper():
                unused_helper()
                unused_helper()
                unused_helper()
            "#,
        );
        let g = SymbolGraph::build(&fx.snapshot, 0.0);
        let p = &fx.snapshot.project;
        let rank = g.rank(None);
        let of = |q: &str| {
            let d = p.all_defs().find(|&d| p.def(d).qualified_name == q).unwrap();
            assert_eq!(g.node_def(g.def_node(d)), Some(d));
            rank[g.def_node(d) as usize]
        };
        assert!(of("Store") > of("unused_helper"), "two callers beat one test");
        assert!(of("Store.get") > of("index"));
        assert!(of("Store") > of("Store.get") * 0.5, "the class gets rank from its method");
        assert_eq!(g.node_def(g.file_node(0)), None);
        assert!((rank.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert_eq!(g.node_def(rank.len() as u32 - 1), None, "the sink");
    }
}
