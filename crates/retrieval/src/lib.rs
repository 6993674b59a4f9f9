//! Retrieval over the project's graphs: the top layer of code intelligence.
//!
//! Everything here answers a *request in words* (a query, an issue, a task) from a
//! `code_graph::Snapshot`: [`SearchIndex`] is BM25 (tantivy) over symbol-level
//! chunks, kept on disk under `.ironbees/search/` and synced file by file from the
//! snapshot ([`SearchIndex::sync`]); [`hybrid_search`] fuses several retrievers by
//! reciprocal rank with weights chosen by what the request mentions
//! ([`analyze_query`]); [`localize`] ranks the files an issue is about; [`repo_map`]
//! fits the ranked definitions to a token budget; [`route`] decides, before any of
//! these run, what a request asks for and which of them to run. No model is needed: an
//! [`Embedder`] is the caller's to bring.
//!
//! ```no_run
//! use code_graph::Snapshot;
//! use code_index::{DiskSources, Index, IndexConfig};
//! use retrieval::{HybridOptions, SearchIndex, hybrid_search};
//!
//! let mut index = Index::open(std::path::Path::new("."), IndexConfig::default())?;
//! let snapshot = Snapshot::load(&index)?;
//! let search = SearchIndex::sync(&mut index, &snapshot)?;
//! let sources: DiskSources = index.sources();
//! let hits = hybrid_search(&snapshot, &search, &sources, "parse a config file", &HybridOptions::default())?;
//! # Ok::<(), code_index::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod fusion;
mod hybrid;
mod localize;
mod querytype;
mod repomap;
mod route;
mod search;

pub use crate::{
    hybrid::{
        Embedder, EmbeddingRetriever, HybridOptions, Item, Matched, MixWeights, Retriever,
        SearchHit, SearchResults, hybrid_search, mix_weights,
    },
    localize::{
        DEFAULT_WEIGHTS, Evidence, FEATURES, FileResult, LocalizeOptions, RERANK_CANDIDATES,
        RERANK_WEIGHT, describe_evidence, fuse_picks, localize, parse_weights,
    },
    querytype::{
        MAX_QUERY_BYTES, Mention, PathMention, QueryFeatures, QueryKind, analyze_query,
        clean as clean_query,
    },
    repomap::{MapFile, MapSeeds, MapSymbol, RepoMap, RepoMapOptions, repo_map},
    route::{
        Route, RouteBudget, RouteIntent, Strategy, TOKENS_PER_CHUNK, route, route_with_budget,
    },
    search::{ChunkHit, SearchIndex},
};
