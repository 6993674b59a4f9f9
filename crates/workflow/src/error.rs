use protocol::{ErrorCode, ErrorInfo};

/// Everything that can go wrong in the engine itself. Each variant maps to one
/// machine code ([`Error::code`]).
///
/// A node that fails is not an `Error`: the run ends `Failed` with the node's code
/// and the call returns its report. An `Error` means the engine could not do what
/// was asked (a bad graph, an unknown run, a run another process executes) or its
/// store failed; every checkpoint written before it stays valid, and `resume`
/// continues from the last one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `Graph::build` found problems; each is one line of `problems`.
    #[error("invalid workflow graph:\n  {}", problems.join("\n  "))]
    InvalidGraph { problems: Vec<String> },
    /// A run id that is empty, too long, or not made of `[A-Za-z0-9._-]`.
    #[error("invalid run id {run_id:?}: {reason}")]
    InvalidRunId { run_id: String, reason: &'static str },
    /// No run with this id in the store.
    #[error("no workflow run {run_id:?}")]
    RunNotFound { run_id: String },
    /// A word that names more than one run (a short id prefix).
    #[error("{word:?} names several runs: {}; give more of the id", candidates.join(", "))]
    Ambiguous { word: String, candidates: Vec<String> },
    /// `start` with the id of a run that exists.
    #[error("workflow run {run_id:?} exists already; resume it or pick another id")]
    RunExists { run_id: String },
    /// Another execution (this process or another) holds the run's lock.
    #[error("workflow run {run_id:?} is already being executed{holder}; try again when it stops")]
    Busy { run_id: String, holder: String },
    /// The run cannot do what was asked in its state (resuming a finished run).
    #[error("workflow run {run_id:?}: {message}")]
    InvalidState { run_id: String, message: String },
    /// A stored state does not deserialize into the graph's state type (the type
    /// changed since the run was checkpointed), or a state does not serialize.
    #[error("workflow run {run_id:?}: state does not (de)serialize: {source}")]
    State { run_id: String, source: serde_json::Error },
    /// The store failed (I/O, a locked or damaged database).
    #[error("workflow store: {context}: {source}")]
    Store { context: String, source: Box<dyn std::error::Error + Send + Sync> },
    /// The store's data is from a newer schema or does not decode.
    #[error("workflow store: {context}: {reason}")]
    Corrupt { context: String, reason: String },
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::InvalidGraph { .. } | Error::InvalidRunId { .. } => ErrorCode::InvalidArgument,
            Error::RunNotFound { .. } => ErrorCode::StateNotFound,
            Error::Ambiguous { .. } => ErrorCode::InvalidArgument,
            Error::RunExists { .. } => ErrorCode::AlreadyExists,
            Error::Busy { .. } => ErrorCode::Busy,
            Error::InvalidState { .. } | Error::State { .. } => ErrorCode::InvalidState,
            Error::Store { .. } | Error::Corrupt { .. } => ErrorCode::Io,
        }
    }

    /// The wire form.
    pub fn to_info(&self) -> ErrorInfo {
        ErrorInfo::new(self.code(), self.to_string())
    }

    /// Wraps a store backend's error with what was being done.
    pub fn store(
        context: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        Error::Store { context: context.into(), source: Box::new(source) }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
