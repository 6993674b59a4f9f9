use std::{fmt, path::PathBuf};

use protocol::{ErrorCode, ErrorInfo};

/// Everything that can go wrong in this crate. Each variant names what it is about
/// (a file, a name), so a user can go and fix it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An agent definition is wrong: YAML syntax, an unknown key, a wrong type, a
    /// missing `name`, a name that differs from its directory, a prompt file that
    /// is missing, too large, not UTF-8 or outside the agent's directory. Returned
    /// by `AgentSet::load`; never retried, the user edits the file. `at` is the
    /// YAML library's line and column where it knows one.
    #[error("{}{}: {message}", path.display(), colon_position(at))]
    Definition { path: PathBuf, at: Option<Position>, message: String },
    /// An agent requires a tool the caller does not offer (`AgentDef::validate_tools`).
    /// `TOOL_NOT_FOUND` rather than `INVALID_ARGUMENT`: the seed's `requiredTools` is
    /// how the orchestrator checks tools are available, and the fix may be to
    /// configure the tool rather than to edit the agent.
    #[error(
        "{}: agent `{agent}` requires unknown tool{} {}{}; known tools: {}",
        path.display(),
        if unknown.len() == 1 { "" } else { "s" },
        backticked(unknown),
        if why.is_empty() { String::new() } else { format!(" ({why})") },
        known.join(", ")
    )]
    UnknownTools {
        path: PathBuf,
        agent: String,
        unknown: Vec<String>,
        known: Vec<String>,
        /// Why a configured server's tools are missing (it did not start).
        why: String,
    },
    /// A name for a new agent (`scaffold`) that is not `[a-z][a-z0-9_-]*`, at most
    /// 40 characters.
    #[error("invalid agent name {name:?}: {reason}")]
    InvalidName { name: String, reason: String },
    /// Reading an agent directory or file failed for another reason than absence
    /// (permissions, a file that vanished while loading).
    #[error("reading {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// The run store or the workflow engine refused (an unknown run, a run another
    /// process executes, a finished run resumed, a store that failed).
    #[error(transparent)]
    Workflow(#[from] workflow::Error),
    /// What was asked makes no sense for the run as it stands (an empty request,
    /// an answer to a gate the run is not waiting at).
    #[error("{0}")]
    InvalidRequest(String),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Definition { .. } | Error::InvalidName { .. } => ErrorCode::InvalidArgument,
            Error::UnknownTools { .. } => ErrorCode::ToolNotFound,
            Error::Io { .. } => ErrorCode::Io,
            Error::Workflow(e) => e.code(),
            Error::InvalidRequest(_) => ErrorCode::InvalidArgument,
        }
    }

    pub fn to_info(&self) -> ErrorInfo {
        let info = ErrorInfo::new(self.code(), self.to_string());
        match self {
            Error::Definition { path, .. }
            | Error::UnknownTools { path, .. }
            | Error::Io { path, .. } => info.with_path(path.display().to_string()),
            Error::InvalidName { .. } | Error::Workflow(_) | Error::InvalidRequest(_) => info,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A place in a file, both 1-based, as editors and compilers print them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// `:7:3` after the file name, or nothing when the message is about the whole file.
fn colon_position(at: &Option<Position>) -> String {
    at.map(|p| format!(":{p}")).unwrap_or_default()
}

fn backticked(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}
