//! The project in memory with its graphs.

use std::sync::OnceLock;

use code_index::{Index, Project, Result};

use crate::{
    graph::Graphs,
    impact::ImpactGraph,
    rank::pagerank,
    resolve::{MANIFEST_NAMES, Manifest, in_node_modules},
};

/// The project in memory with its graphs: what retrieval computes from.
pub struct Snapshot {
    pub project: Project,
    pub graphs: Graphs,
    /// PageRank of every file over the file graph (sums to 1).
    pub file_rank: Vec<f64>,
    /// The sure dependencies impact, roles and reports count dependents over, built
    /// on first use.
    impact_graph: OnceLock<ImpactGraph>,
}

impl Snapshot {
    /// Everything in memory: files, definitions, references, resolved imports,
    /// graphs and the global file ranking. The input of retrieval.
    pub fn load(index: &Index) -> Result<Snapshot> {
        let project = index.project()?;
        let manifests = manifests(index)?;
        Ok(Snapshot::build(project, manifests))
    }

    /// The graphs of a project in hand (text fixtures, tests).
    pub fn build(project: Project, manifests: Vec<Manifest>) -> Snapshot {
        let graphs = Graphs::build(&project, &manifests);
        let file_rank = pagerank(&graphs.file_out, None, 0.85);
        Snapshot { project, graphs, file_rank, impact_graph: OnceLock::new() }
    }

    pub(crate) fn impact_graph(&self) -> &ImpactGraph {
        self.impact_graph.get_or_init(|| ImpactGraph::build(self))
    }
}

/// The small non-code files import resolution reads (Cargo.toml, go.mod,
/// tsconfig.json, jsconfig.json, package.json), found by the walk and read now.
fn manifests(index: &Index) -> Result<Vec<Manifest>> {
    let mut out = Vec::new();
    for path in index.unindexed_paths()? {
        let name = path.rsplit('/').next().unwrap_or(&path);
        // Installed packages (when no ignore file hides them) would be read on
        // every snapshot, thousands of them, for nothing.
        if !MANIFEST_NAMES.contains(&name) || in_node_modules(&path) {
            continue;
        }
        if let Ok(stdx::ReadLimited::Complete(bytes)) =
            stdx::read_to_end_limited(&index.root().join(&path), 1 << 20)
            && let Ok(text) = String::from_utf8(bytes)
        {
            out.push(Manifest { path, text });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}
