use std::path::PathBuf;

use protocol::{ErrorCode, ErrorInfo};

/// Everything that can go wrong running git. "No history" (not a repository, no
/// commits) is not an error: those functions answer `None` or an unavailable
/// [`protocol::Churn`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The `git` executable is not on `PATH`.
    #[error("git is not installed (no `git` on PATH)")]
    NotInstalled,
    /// git ran and failed where it should not have (a damaged repository, a refused
    /// `safe.directory`, an unexpected option). `stderr` is git's own message.
    #[error("`git {args}` failed in {}: {stderr}", dir.display())]
    Failed { dir: PathBuf, args: String, stderr: String },
    /// Starting git or reading its output failed.
    #[error("running git in {}: {source}", dir.display())]
    Io { dir: PathBuf, source: std::io::Error },
    /// A `--since` git reads as no date at all: its date parser takes any text
    /// and falls back to the present, which would silently empty the window.
    #[error(
        "--since {text:?}: git reads no date in it (it would mean now, an empty window); \
         give a date (2024-01-01) or a span (6 months ago)"
    )]
    InvalidDate { text: String },
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::NotInstalled => ErrorCode::ToolNotFound,
            Error::Failed { .. } => ErrorCode::ToolExecutionFailed,
            Error::Io { .. } => ErrorCode::Io,
            Error::InvalidDate { .. } => ErrorCode::InvalidArgument,
        }
    }

    pub fn to_info(&self) -> ErrorInfo {
        ErrorInfo::new(self.code(), self.to_string())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
