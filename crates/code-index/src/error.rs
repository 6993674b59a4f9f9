use std::{io, path::PathBuf};

use protocol::{ErrorCode, ErrorInfo};

/// Everything that can go wrong in this crate. Each variant maps to one machine code
/// ([`Error::code`]); the message always names the path it is about.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The project root (or `-C DIR`) exists but is not a directory.
    #[error("{}: not a directory", path.display())]
    NotADirectory { path: PathBuf },
    /// A path the caller named does not exist (or is not in the index).
    #[error("{}: no such file", path.display())]
    NotFound { path: PathBuf },
    /// A path resolves outside the project root.
    #[error("{}: outside the project root {}", path.display(), root.display())]
    PathOutsideRoot { path: PathBuf, root: PathBuf },
    /// A file the caller asked about cannot be parsed (binary, too large, unknown language).
    #[error("{}: {reason}", path.display())]
    Unsupported { path: PathBuf, code: ErrorCode, reason: String },
    /// I/O on a path we could not skip (the root, the index directory).
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// The database refused an operation (locked, disk full, ...).
    #[error("index database {}: {source}", path.display())]
    Db { path: PathBuf, source: rusqlite::Error },
    /// The database is damaged, not a database, or from a newer ironbees.
    #[error("index database {} is unusable: {reason}; run `ironbees index --rebuild`", path.display())]
    Corrupt { path: PathBuf, reason: String },
    /// The caller cancelled (Ctrl-C). Everything committed so far is consistent.
    #[error("cancelled; the index is consistent and the next run picks up where this one stopped")]
    Cancelled,
    /// A malformed argument: a bad glob, an unknown kind.
    #[error("{0}")]
    InvalidArgument(String),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::NotADirectory { .. } => ErrorCode::NotADirectory,
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::PathOutsideRoot { .. } => ErrorCode::PathOutsideRoot,
            Error::Unsupported { code, .. } => *code,
            Error::Io { .. } | Error::Db { .. } => ErrorCode::Io,
            Error::Corrupt { .. } => ErrorCode::IndexCorrupt,
            Error::Cancelled => ErrorCode::Cancelled,
            Error::InvalidArgument(_) => ErrorCode::InvalidArgument,
        }
    }

    pub fn to_info(&self) -> ErrorInfo {
        ErrorInfo::new(self.code(), self.to_string())
    }

    pub(crate) fn db(path: &std::path::Path, source: rusqlite::Error) -> Error {
        use rusqlite::ErrorCode as C;
        match source.sqlite_error_code() {
            Some(C::DatabaseCorrupt | C::NotADatabase) => {
                Error::Corrupt { path: path.to_owned(), reason: source.to_string() }
            }
            _ => Error::Db { path: path.to_owned(), source },
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
