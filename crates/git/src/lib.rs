//! Typed, read-only git operations, by running the real `git` CLI.
//!
//! Why the CLI and not a library: every repository layout, configuration, shallow
//! clone, worktree, `safe.directory` rule and object format the user's git accepts
//! works here the same way, and the two outputs read are stable, documented formats
//! (`--numstat -z`, hunk headers of `-U0` patches). Options that would change those
//! formats are pinned on every call (`core.quotePath`, colors, prefixes, renames).
//!
//! Parsing is pure (`log.rs`, tested on recorded output); joining the logs into
//! per-file churn, following renames and mapping old line numbers to today's, is
//! pure too (`churn.rs`). The functions that run git are thin.
//!
//! No history is not an error: outside a repository or before the first commit,
//! [`churn`] answers an unavailable [`protocol::Churn`] with the reason and
//! [`head`]/[`file_at_head`] answer `None`.
//!
//! ```no_run
//! let churn = git::churn(std::path::Path::new("."), &git::ChurnOptions::default())?;
//! for f in churn.files.iter().filter(|f| f.commits > 10) {
//!     println!("{} changed in {} commits (+{} -{})", f.path, f.commits, f.added, f.deleted);
//! }
//! # Ok::<(), git::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod churn;
mod error;
mod log;
mod repo;
mod run;

pub use crate::{
    churn::{ChurnOptions, churn},
    error::{Error, Result},
    repo::{DiffOf, diff, file_at_head, head, is_repository, toplevel, tracked_files},
};

#[cfg(test)]
mod tests;
