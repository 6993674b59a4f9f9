use std::path::PathBuf;

use protocol::{ErrorCode, ErrorInfo};

/// Everything that can go wrong in this crate, each with what it is about.
/// A stage's failure is not an `Error`: it is recorded in the pipeline's state,
/// the hub is rolled back, and the run ends `failed` with the stage's code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The project cannot start a pipeline as it stands: not a git repository,
    /// no remote, a detached HEAD, a dirty working tree (`init`, `start`). The
    /// user fixes the repository; never retried.
    #[error("{message}")]
    Precondition { code: ErrorCode, message: String },
    /// `git` failed where the pipeline cannot go on (outside a stage: `init`, a
    /// state read), with its output.
    #[error("git {args} (in {}): {message}", cwd.display())]
    Git { args: String, cwd: PathBuf, message: String },
    /// Reading or writing the pipeline's files (cache, logs, hook, report).
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// The run store or the workflow engine refused (an unknown run, a run another
    /// process executes, a finished run resumed).
    #[error(transparent)]
    Workflow(#[from] workflow::Error),
    /// A pipeline run ended failed: the stage's code (`STAGE_FAILED`,
    /// `PUSH_REJECTED`, `APPROVAL_REJECTED`, ...) and message. Returned by the
    /// drivers' helpers that turn a finished run into an exit status.
    #[error("pipeline {pipeline_id} failed at {stage} [{code}]: {message}")]
    Failed { pipeline_id: String, stage: String, code: ErrorCode, message: String },
    /// Given up while waiting for another pipeline to leave the hub: `BUSY` when
    /// the driver stopped (a server shutting down; the run stays queued for any
    /// process), `CANCELLED` when it was cancelled.
    #[error("{message}")]
    Interrupted { code: ErrorCode, message: String },
    /// An argument makes no sense (a date that does not parse, an answer to a run
    /// that is not waiting).
    #[error("{0}")]
    InvalidArgument(String),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Precondition { code, .. }
            | Error::Failed { code, .. }
            | Error::Interrupted { code, .. } => *code,
            Error::Git { .. } => ErrorCode::Internal,
            Error::Io { .. } => ErrorCode::Io,
            Error::Workflow(e) => e.code(),
            Error::InvalidArgument(_) => ErrorCode::InvalidArgument,
        }
    }

    pub fn to_info(&self) -> ErrorInfo {
        ErrorInfo::new(self.code(), self.to_string())
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { path: path.into(), source }
    }
}

/// The code of a stage failure as the protocol names it (`ErrorCode::ALL`), or
/// `STAGE_FAILED` for one it does not know.
pub(crate) fn code_of(text: &str) -> ErrorCode {
    ErrorCode::ALL.iter().copied().find(|c| c.as_str() == text).unwrap_or(ErrorCode::StageFailed)
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
