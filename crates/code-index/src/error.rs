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
    /// A target (file, directory, `path:line` or symbol) names nothing in the index.
    /// `suggestions` are close names and paths.
    #[error("{target}: no indexed file, directory or definition by that name{}",
        if suggestions.is_empty() { String::new() } else { format!("; did you mean {}?", suggestions.join(", ")) })]
    TargetNotFound { target: String, suggestions: Vec<String> },
    /// A target names several definitions or files; `candidates` lists them
    /// (`path:line kind qualified_name`). Name one by `path:line`, `path::name` or a
    /// qualified name, or ask for all of them.
    #[error("{target} is ambiguous: {} matches ({}{})", candidates.len(),
        candidates.iter().take(5).cloned().collect::<Vec<_>>().join("; "),
        if candidates.len() > 5 { "; ..." } else { "" })]
    AmbiguousTarget { target: String, candidates: Vec<String> },
    /// Something the caller plugged in failed (retrieval's `Embedder` calling a
    /// model API); `code` is that failure's machine code (`LLM_RATE_LIMITED`...).
    #[error("{source}")]
    External { code: ErrorCode, source: Box<dyn std::error::Error + Send + Sync> },
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
            Error::TargetNotFound { .. } => ErrorCode::NotFound,
            Error::AmbiguousTarget { .. } => ErrorCode::AmbiguousMatch,
            Error::External { code, .. } => *code,
        }
    }

    /// The wire form; target errors carry their suggestions or candidates in
    /// `details`.
    pub fn to_info(&self) -> ErrorInfo {
        let mut info = ErrorInfo::new(self.code(), self.to_string());
        match self {
            Error::TargetNotFound { suggestions, .. } => {
                info.details.similar_names = suggestions.clone();
            }
            Error::AmbiguousTarget { candidates, .. } => {
                info.details.targets = candidates.clone();
            }
            _ => {}
        }
        info
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
