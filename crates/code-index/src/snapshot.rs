//! The project in memory with its graphs.

use crate::{graph, impact, project, rank, resolve};

/// The project in memory with its graphs: what retrieval computes from.
pub struct Snapshot {
    pub project: project::Project,
    pub graphs: graph::Graphs,
    /// PageRank of every file over the file graph (sums to 1).
    pub file_rank: Vec<f64>,
    /// The sure dependencies impact, roles and reports count dependents over, built
    /// on first use.
    impact_graph: std::sync::OnceLock<impact::ImpactGraph>,
}

impl Snapshot {
    pub fn build(project: project::Project, manifests: Vec<resolve::Manifest>) -> Snapshot {
        let graphs = graph::Graphs::build(&project, &manifests);
        let file_rank = rank::pagerank(&graphs.file_out, None, 0.85);
        Snapshot { project, graphs, file_rank, impact_graph: std::sync::OnceLock::new() }
    }

    pub(crate) fn impact_graph(&self) -> &impact::ImpactGraph {
        self.impact_graph.get_or_init(|| impact::ImpactGraph::build(self))
    }
}
