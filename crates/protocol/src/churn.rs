//! Change history per file, as `git` reads it and `code-graph` consumes it.
//!
//! These types sit here, in the vocabulary, so that the crate that runs git and the
//! crate that scores hotspots never depend on each other: the caller (the CLI, a
//! pillar) asks `git` for a [`Churn`] and hands it to `code-graph`.
//!
//! Paths are relative to the project root, `/`-separated, and name each file as it is
//! called at `HEAD`: history recorded under an older name (before a rename) is counted
//! under the current one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The change history of a project over a window of commits.
///
/// When there is no history to read (not a git repository, no commits, `git` not
/// installed, the repository refused), `available` is false, `reason` says why and
/// `files` is empty: a missing history is a fact to report, not an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Churn {
    pub available: bool,
    /// Why there is no history, when `available` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The commit the history was read from (`HEAD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// The window that was asked for.
    pub window: ChurnWindow,
    /// Non-merge commits read (at most `window.max_commits`).
    pub commits: u32,
    /// Author time (Unix seconds) of the newest and oldest commit read. Recency is
    /// measured from `newest`, not from the wall clock, so results are reproducible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newest: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest: Option<i64>,
    /// The repository is a shallow clone: history before its boundary is missing (the
    /// boundary commits' diffs, which would add every file, are not counted).
    pub shallow: bool,
    /// Whether changed line ranges were read ([`CommitTouch::lines`]); needed for
    /// per-definition churn.
    pub lines: bool,
    /// Files changed in the window, by path.
    pub files: Vec<FileChurn>,
}

impl Churn {
    /// No history, for `reason`.
    pub fn unavailable(reason: impl Into<String>, window: ChurnWindow) -> Churn {
        Churn { available: false, reason: Some(reason.into()), window, ..Churn::default() }
    }

    /// The history of one file (paths are sorted, so this is a binary search).
    pub fn file(&self, path: &str) -> Option<&FileChurn> {
        self.files.binary_search_by(|f| f.path.as_str().cmp(path)).ok().map(|i| &self.files[i])
    }
}

/// Which commits a [`Churn`] covers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChurnWindow {
    /// The newest N non-merge commits (None: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_commits: Option<u32>,
    /// Only commits after this date, in any form `git log --since` accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
}

/// How one file changed over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileChurn {
    pub path: String,
    /// Commits that changed the file.
    pub commits: u32,
    /// Lines added and deleted, summed over those commits (0 for binary files).
    pub added: u64,
    pub deleted: u64,
    /// Distinct author e-mail addresses.
    pub authors: u32,
    /// Author time (Unix seconds) of the newest and oldest change.
    pub last_change: i64,
    pub first_change: i64,
    /// Git reported the file as binary (no line counts).
    pub binary: bool,
    /// One entry per commit, newest first.
    pub changes: Vec<CommitTouch>,
}

/// One commit's change to one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommitTouch {
    /// Author time, Unix seconds.
    pub time: i64,
    pub added: u32,
    pub deleted: u32,
    /// Where the commit's changes lie in the file as it is at `HEAD` (1-based,
    /// inclusive), mapped through every newer commit. Empty unless [`Churn::lines`].
    /// Lines a newer commit rewrote map to where that rewrite landed, so the ranges
    /// say where the change *is now*, approximately on merged side branches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<LineSpan>,
}

/// Lines `start..=end`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LineSpan {
    pub start: u32,
    pub end: u32,
}
