//! Code intelligence without a model: parse, extract, store and query.
//!
//! The design splits cleanly in two:
//!
//! - **Analysis is a pure function of (language, bytes).** [`analyze`] parses a file
//!   with tree-sitter and runs the language's query (one `.scm` file per language in
//!   `queries/`) to extract definitions with their container path, references with
//!   their enclosing definition, and imports as written. [`render_skeleton`] turns the
//!   same analysis into an outline. Both are easy to test with text fixtures and run
//!   in parallel.
//! - **The [`Index`] is the only stateful part.** It walks the project, re-parses
//!   only what changed (by size, time, then content hash) and stores results in
//!   SQLite under `.ironbees/`, keyed by content hash. Readers see the last committed
//!   batch while an update runs; a cancelled or killed update leaves a consistent index.
//!
//! ```no_run
//! use code_index::{Call, CancellationToken, Index, IndexConfig, NoProgress, SymbolQuery};
//!
//! let mut index = Index::open(std::path::Path::new("."), IndexConfig::default())?;
//! index.update(&Call::new(&NoProgress, &CancellationToken::new()))?;
//! let q = SymbolQuery { name: Some("parse_*".into()), ..Default::default() };
//! for s in index.symbols(&q)? {
//!     println!("{}:{} {} {}", s.path, s.line, s.kind, s.qualified_name);
//! }
//! # Ok::<(), code_index::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod complexity;
mod depgraph;
mod error;
mod extract;
#[cfg(test)]
mod fixture;
mod graph;
mod graphview;
mod hotspot;
mod hybrid;
mod impact;
mod imports;
mod index;
mod indexer;
mod lang;
mod localize;
mod project;
mod query;
mod querytype;
mod rank;
mod refcodec;
mod repomap;
mod report;
mod resolve;
mod roles;
mod search;
mod skeleton;
mod snapshot;
mod sources;
mod store;
mod symrank;
mod target;
mod testfiles;
mod tokens;
mod walk;

pub use crate::{
    error::{Error, Result},
    extract::{Definition, FileAnalysis, Import, RefKind, Reference, Scope, analyze, debug_tree},
    graph::{Graphs, Resolution, SymbolEdge},
    graphview::{
        EdgeKind, GraphEdge, GraphNode, GraphOptions, GraphQuery, GraphView, RenderGraph,
        graph_view,
    },
    hotspot::{
        ChurnStats, Complexity, FileHotspot, HistoryInfo, HotspotBasis, HotspotOptions, Hotspots,
        ScoreParts, SymbolHotspot, hotspots,
    },
    hybrid::{
        Embedder, EmbeddingRetriever, HybridOptions, Item, Matched, MixWeights, Retriever,
        SearchHit, SearchResults, hybrid_search, mix_weights,
    },
    impact::{
        AffectedTest, Coupling, Dependent, Impact, ImpactOptions, Priority, Radius, Risk,
        SymbolDependent, coupling, impact, is_sure, risk_level, test_priority,
    },
    imports::import_names,
    index::{Index, IndexConfig, discover_root, relative_path},
    indexer::UpdateReport,
    lang::Language,
    localize::{
        DEFAULT_WEIGHTS, Evidence, FEATURES, FileResult, LocalizeOptions, localize, parse_weights,
    },
    project::{Def, DefId, FileId, NameId, Project, ProjectFile, Ref},
    query::{ParseProblem, ReferenceHit, SkipGroup, Staleness, Status, SymbolQuery},
    querytype::{MAX_QUERY_BYTES, Mention, PathMention, QueryFeatures, QueryKind, analyze_query},
    rank::pagerank,
    repomap::{MapFile, MapSeeds, MapSymbol, RepoMap, RepoMapOptions, repo_map},
    report::{
        BlastRadius, HotspotCluster, Insight, InsightFacts, InsightKind, LanguageShare, Overview,
        RankedFile, RankedSymbol, Report, ReportOptions, RoleCount, Severity, ToMarkdown, insights,
        report, symbol_role,
    },
    resolve::{ImportTarget, Manifest, ResolvedImport},
    roles::{Role, RoleFacts, SEVERAL as SEVERAL_DEPENDENTS, infer_role},
    search::{ChunkHit, SearchIndex},
    skeleton::{Skeleton, render as render_skeleton},
    snapshot::Snapshot,
    sources::{DiskSources, Sources},
    target::{
        SymbolRef, Target, TargetKind, TargetOptions, describe as describe_def, resolve_target,
        symbol_ref,
    },
    testfiles::{TestKind, is_test_path, module_stem, test_convention, test_subject},
    tokens::{count_tokens, warm_up_tokenizer},
};
pub use stdx::{Call, CancellationToken, NoProgress, Progress};

/// The directory under the project root where ironbees keeps its state.
pub use stdx::STATE_DIR;
