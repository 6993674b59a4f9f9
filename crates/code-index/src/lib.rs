//! Code intelligence without a model: parse, extract, store and query. The
//! bottom layer of three: `code-graph` builds the project's graphs from what this
//! crate stores ([`Index::project`]), `retrieval` searches over them.
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
mod error;
mod extract;
mod imports;
mod index;
mod indexer;
mod lang;
mod project;
mod query;
mod refcodec;
mod skeleton;
mod sources;
mod store;
mod tokens;
mod walk;

pub use crate::{
    complexity::{decisions_in, decisions_per_line},
    error::{Error, Result},
    extract::{
        Definition, FileAnalysis, Import, RefKind, Reference, Scope, analyze, analyze_outline,
        debug_tree, is_js_global, parameter_list, return_type,
    },
    imports::import_names,
    index::{Index, IndexConfig, UpdateLock, discover_root, relative_path},
    indexer::UpdateReport,
    lang::Language,
    project::{Def, DefId, FileId, FileStamp, Interner, NameId, Project, ProjectFile, Ref},
    query::{ParseProblem, ReferenceHit, SkipGroup, Staleness, Status, SymbolQuery},
    skeleton::{Skeleton, render as render_skeleton, render_text as skeleton_text},
    sources::{DiskSources, Sources},
    tokens::{count_tokens, warm_up_tokenizer},
};
pub use stdx::{Call, CancellationToken, NoProgress, Progress, STATE_DIR};
