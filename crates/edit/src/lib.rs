//! The edit engine: the only writer into a project.
//!
//! Every change to a user's files (from the CLI, the MCP `change` tool, the agent)
//! is a request of operations ([`protocol::EditRequest`]: replace text, replace
//! lines, insert, replace a definition by qualified name, create, delete, rename)
//! that the [`Engine`] applies as one all-or-nothing transaction:
//!
//! - **Matching that never guesses.** Text is found exactly, then tolerantly
//!   (line endings, trailing whitespace, a uniform indentation shift, tabs for
//!   spaces), and every tolerance is reported; more matches than expected is
//!   `AMBIGUOUS_MATCH`, none is `NO_MATCH` with the closest candidates.
//! - **Preconditions.** `expectedHash` (SHA-256 of the file as the caller read it)
//!   fails the request with `HASH_MISMATCH` and the current hash.
//! - **Dry runs** compute everything, unified diffs included, and write nothing.
//! - **A write-ahead journal.** Old and new contents are stored as blobs and the
//!   transaction record is synced before any project file changes; each file is
//!   replaced atomically. A process killed at any instant leaves every file fully
//!   old or fully new, and the next [`Engine::open`] finishes or rolls back.
//! - **Undo and redo** by transaction id, refused when a file changed since (never
//!   clobbering later work); history in SQLite survives restarts.
//! - **A path jail**: nothing outside the root, through `..`, absolute paths or
//!   symlinks, and nothing inside `.git/` or `.ironbees/`.
//!
//! Line endings, a UTF-8 BOM and permissions are preserved.
//!
//! ```no_run
//! use protocol::{EditOp, EditRequest};
//!
//! let mut engine = edit::Engine::open(std::path::Path::new("."), Default::default())?;
//! let req = EditRequest {
//!     edits: vec![serde_json::from_value::<EditOp>(serde_json::json!({
//!         "op": "replace", "path": "src/main.rs",
//!         "targetString": "println!(\"hi\")", "replacementString": "println!(\"hello\")",
//!     })).unwrap()],
//!     ..Default::default()
//! };
//! let result = engine.apply(&req)?;
//! print!("{}", result.files[0].diff);
//! engine.undo(result.transaction_id.as_deref(), false)?;
//! # Ok::<(), edit::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod diff;
mod engine;
mod error;
mod failpoint;
mod history;
mod jail;
mod matching;
mod merge;
mod plan;
#[cfg(not(any(test, feature = "probe")))]
mod probe;
#[cfg(any(test, feature = "probe"))]
pub mod probe;
mod store;
mod symbol;
mod text;

#[cfg(test)]
mod crash_tests;

pub use crate::{
    diff::unified_diff,
    engine::{
        CheckFailure, CommitHook, Engine, EngineOptions, FileVersions, Overlay, Planned, Preview,
        Recovery, RecoveryConflict, STATE_DIR, needs_recovery,
    },
    error::{Error, Result},
    merge::{MergeConflict, merge3},
    symbol::{SymbolLocator, SymbolSpan},
};
