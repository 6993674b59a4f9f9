//! PageRank over definitions.
//!
//! Nodes are every definition plus one node per file for its top-level code (a
//! script's statements, a module's imports and constants). Edges come from the
//! resolved references ([`Graphs::symbol_edges`]), from the referencing definition
//! (or the file's top level) to the definition referenced, weighted like Aider's
//! repository map and then some:
//!
//! - the resolution's confidence (a scoped or imported name 1.0, the unique
//!   definition of a name 0.7, one of several 0.3 split between them);
//! - the kind of use: calls and type uses 1.0, other identifier uses 0.5;
//! - how specific the name is (short, private and dunder names say less);
//! - `sqrt` of the number of references, so one caller in a loop does not dominate;
//! - references from test files count a third: tests touch everything, which says
//!   little about what the code itself depends on.
//!
//! A member also hands a little of its rank to its container (method → class), so
//! a class whose methods are used ranks with them.

use std::collections::HashMap;

use crate::{
    RefKind, Snapshot,
    graph::name_specificity,
    project::{DefId, FileId},
    rank::pagerank,
    testfiles::test_convention,
};

/// The definition graph of a snapshot, ready for (personalized) PageRank.
pub(crate) struct SymbolGraph {
    /// First node of each file's definitions; file `f`'s top level is node
    /// `defs + f`.
    base: Vec<u32>,
    defs: u32,
    pub out: Vec<Vec<(u32, f64)>>,
    /// Whether each file holds tests (any convention).
    pub test_file: Vec<bool>,
}

impl SymbolGraph {
    pub fn build(snapshot: &Snapshot) -> SymbolGraph {
        let project = &snapshot.project;
        let mut base = Vec::with_capacity(project.files.len());
        let mut defs = 0u32;
        for f in &project.files {
            base.push(defs);
            defs += f.defs.len() as u32;
        }
        let n = defs as usize + project.files.len();
        let test_file: Vec<bool> = (0..project.files.len() as FileId)
            .map(|f| {
                matches!(
                    test_convention(project, f),
                    Some((crate::TestKind::File | crate::TestKind::Support, _))
                )
            })
            .collect();
        let mut g = SymbolGraph { base, defs, out: vec![Vec::new(); n], test_file };
        let mut agg: HashMap<(u32, u32), (f64, u32)> = HashMap::new();
        for e in &snapshot.graphs.symbol_edges {
            let from = match e.from {
                Some(d) => g.def_node(d),
                None => g.file_node(e.from_file),
            };
            let to = g.def_node(e.to);
            let kind_w = match e.kind {
                RefKind::Call | RefKind::Type => 1.0,
                RefKind::Use => 0.5,
            };
            let spec = name_specificity(project.names.name(project.def(e.to).name));
            let test_w = if g.test_file[e.from_file as usize] { 1.0 / 3.0 } else { 1.0 };
            let w = e.weight * kind_w * spec * test_w;
            let entry = agg.entry((from, to)).or_insert((0.0, 0));
            entry.0 = entry.0.max(w);
            entry.1 += 1;
        }
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
        pairs.sort_by_key(|p| p.0);
        for ((from, to), (w, count)) in pairs {
            g.out[from as usize].push((to, w * f64::from(count).sqrt()));
        }
        g
    }

    pub fn len(&self) -> usize {
        self.out.len()
    }

    pub fn def_node(&self, d: DefId) -> u32 {
        self.base[d.file as usize] + d.ord
    }

    pub fn file_node(&self, f: FileId) -> u32 {
        self.defs + f
    }

    /// The definition a node is; None for a file's top level.
    pub fn node_def(&self, node: u32) -> Option<DefId> {
        if node >= self.defs {
            return None;
        }
        let file = self.base.partition_point(|&b| b <= node) - 1;
        Some(DefId { file: file as FileId, ord: node - self.base[file] })
    }

    /// PageRank restarted at `restart` (uniform when None or all zero).
    pub fn rank(&self, restart: Option<&[f64]>) -> Vec<f64> {
        pagerank(&self.out, restart, 0.85)
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
        let g = SymbolGraph::build(&fx.snapshot);
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
    }
}
