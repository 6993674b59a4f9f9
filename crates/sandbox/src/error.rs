use std::path::PathBuf;

use protocol::{ErrorCode, ErrorInfo};

/// Everything that can go wrong in this crate. A command that runs and fails (non-zero
/// exit, a fired limit) is not an error: it is an [`protocol::ExecResult`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The policy cannot be honoured on this host: a named backend is missing, or
    /// `strict` was set and a protection is unavailable. Nothing ran. Not retried.
    #[error("{0}")]
    Unavailable(String),
    /// Setting the sandbox up failed at run time (a namespace, a mount, a cgroup)
    /// although the probe said it would work. Nothing of the command ran.
    #[error("sandbox setup failed ({stage}): {message}")]
    Setup { stage: String, message: String },
    /// The program was not found in `PATH` or is not executable.
    #[error("{program}: {reason}")]
    CommandNotFound { program: String, reason: String },
    /// A malformed request: no command, a working directory outside the workspace.
    #[error("{0}")]
    InvalidRequest(String),
    /// The workspace or a writable path does not exist.
    #[error("{}: no such directory", path.display())]
    NotFound { path: PathBuf },
    /// No build or test tool could be detected in the project.
    #[error("no build or test tool detected in {} (looked for Cargo.toml, pyproject.toml/pytest.ini/setup.cfg, test_*.py, *.csproj/*.sln, go.mod, package.json with jest or vitest); pass a command instead", root.display())]
    UnknownProject { root: PathBuf },
    /// I/O while spawning or talking to the sandbox helper.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// The caller cancelled; the process tree was killed.
    #[error("cancelled; the command's process tree was killed")]
    Cancelled,
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Unavailable(_) | Error::Setup { .. } => ErrorCode::SandboxUnavailable,
            Error::CommandNotFound { .. } => ErrorCode::CommandNotFound,
            Error::InvalidRequest(_) => ErrorCode::InvalidArgument,
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::UnknownProject { .. } => ErrorCode::UnknownProject,
            Error::Io { .. } => ErrorCode::Io,
            Error::Cancelled => ErrorCode::Cancelled,
        }
    }

    pub fn to_info(&self) -> ErrorInfo {
        let info = ErrorInfo::new(self.code(), self.to_string());
        match self {
            Error::NotFound { path } | Error::UnknownProject { root: path } => {
                info.with_path(path.display().to_string())
            }
            _ => info,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io { context: context.into(), source }
    }
}
