//! The indexed project as graphs: the middle layer of code intelligence.
//!
//! [`Snapshot::load`] reads everything `code-index` stored (files, definitions,
//! references, imports as written) into memory once and builds what the analyses
//! share: imports resolved to files per language ([`ImportTarget`]), references
//! linked to the definitions they may mean with a [`Resolution`] and a trust
//! ([`Graphs`]), and file PageRank. Everything here is a pure function of that
//! snapshot (plus, for hotspots, git history as `protocol::Churn` and file
//! contents through `code_index::Sources`): targets, impact, roles, hotspots,
//! graph views and the architecture report. It never touches the store, so tests
//! build snapshots from text fixtures (`Snapshot::build`, the `fixture` feature).
//!
//! A snapshot is a function of the index's files, and most of it is per file: a
//! file's edges depend on its own contents, its resolved imports and the
//! definitions of the names its resolution looked up (recorded). So a stored
//! snapshot ([`Snapshot::decode`]) is brought up to date by [`Snapshot::derive`]
//! for the files that changed and those that depend on them, with the same
//! result as a build from scratch.
//!
//! ```no_run
//! use code_graph::{ImpactOptions, Snapshot, TargetOptions, impact, resolve_target};
//! use code_index::{Index, IndexConfig};
//!
//! let index = Index::open(std::path::Path::new("."), IndexConfig::default())?;
//! let snapshot = Snapshot::load(&index)?;
//! let target = resolve_target(&snapshot.project, "src/lib.rs", &TargetOptions::default())?;
//! let answer = impact(&snapshot, &target, &ImpactOptions::default());
//! # Ok::<(), code_index::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod depgraph;
#[cfg(any(test, feature = "fixture"))]
mod fixture;
mod graph;
mod graphview;
mod hotspot;
mod impact;
mod rank;
mod report;
mod resolve;
mod roles;
mod snapshot;
mod symrank;
mod target;
mod testfiles;
mod update;

/// Text fixtures (`//- path` files) as snapshots, for tests of this crate and the
/// ones above (feature `fixture`).
#[cfg(feature = "fixture")]
pub use crate::fixture::{Fixture, fixture};
pub use crate::{
    graph::{
        Graphs, Resolution, SharedBytes, StoredBytes, SymbolEdge, is_builtin_type,
        is_type_container, methods_of_type,
    },
    graphview::{
        EdgeKind, GraphEdge, GraphNode, GraphOptions, GraphQuery, GraphView, RenderGraph,
        graph_view,
    },
    hotspot::{
        ChurnStats, Complexity, FileHotspot, HistoryInfo, HotspotBasis, HotspotOptions, Hotspots,
        ScoreParts, SymbolHotspot, hotspots,
    },
    impact::{
        AffectedTest, Coupling, Dependent, Impact, ImpactOptions, Priority, Radius, Risk,
        SymbolDependent, coupling, impact, is_sure, risk_level, test_priority,
    },
    rank::pagerank,
    report::{
        BlastRadius, HotspotCluster, Insight, InsightFacts, InsightKind, LanguageShare, Overview,
        RankedFile, RankedSymbol, Report, ReportOptions, RoleCount, Severity, ToMarkdown, insights,
        report, symbol_role,
    },
    resolve::{ImportTarget, Manifest, ResolvedImport},
    roles::{Role, RoleFacts, SEVERAL as SEVERAL_DEPENDENTS, file_roles, infer_role},
    snapshot::{Decoded, Snapshot, SnapshotInputs},
    symrank::SymbolGraph,
    target::{
        SymbolRef, Target, TargetKind, TargetOptions, describe as describe_def, resolve_target,
        symbol_ref,
    },
    testfiles::{
        TestKind, is_generated, is_test_path, is_vendored, module_stem, test_convention,
        test_subject, vendored_files,
    },
    update::Derivation,
};
