use std::{io, path::PathBuf};

use protocol::{ErrorCode, ErrorDetails, ErrorInfo, MatchCandidate};

/// Everything that can go wrong in the edit engine. Each variant maps to one machine
/// code ([`Error::code`]); [`Error::to_info`] adds the structured details a client
/// needs to recover (closest candidates, every ambiguous match, the current hash).
///
/// When any error is returned, no project file has changed: failures before the
/// write phase write nothing, and failures during it roll the transaction back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `targetString` (or a qualified name) was not found, or fewer times than
    /// expected. Carries the closest candidates.
    #[error("edits[{edit}] in {path}: {message}")]
    NoMatch {
        path: String,
        edit: usize,
        message: String,
        candidates: Vec<MatchCandidate>,
        similar_names: Vec<String>,
    },
    /// More matches than expected; carries every match. Nothing is applied.
    #[error("edits[{edit}] in {path}: {message}")]
    AmbiguousMatch { path: String, edit: usize, message: String, candidates: Vec<MatchCandidate> },
    /// The file is not the version the caller (or the transaction to undo/redo)
    /// expects.
    #[error("{path}: {message}")]
    HashMismatch {
        path: String,
        edit: Option<usize>,
        message: String,
        expected: Option<String>,
        current: Option<String>,
        changed_by: Option<String>,
    },
    /// The path leaves the project root, or names git's or ironbees' own directory.
    #[error("{path}: {reason}")]
    PathOutsideRoot { path: String, reason: String },
    /// A text operation on a file that is not UTF-8.
    #[error("{path}: not valid UTF-8 (line {line}); ironbees edits UTF-8 text only")]
    InvalidUtf8 { path: String, line: u32 },
    /// A text operation on a file with NUL bytes.
    #[error("{path}: looks binary (contains NUL bytes); text operations refuse it")]
    BinaryFile { path: String },
    /// The file is larger than the engine's limit (its old content is journaled).
    #[error("{path}: {size} bytes is over the {limit} byte limit of the edit engine")]
    FileTooLarge { path: String, size: u64, limit: u64 },
    /// The file to edit, delete or rename does not exist.
    #[error("{path}: no such file")]
    NotFound { path: String },
    /// The file to create (or a rename's destination) exists.
    #[error("{path}: already exists{hint}")]
    AlreadyExists { path: String, hint: &'static str },
    /// A malformed request: empty target, bad line range, overlapping edits, a
    /// directory where a file is expected.
    #[error("{}{message}", edit.map(|i| format!("edits[{i}]: ")).unwrap_or_default())]
    InvalidArgument { edit: Option<usize>, message: String },
    /// No transaction with this id (or it was pruned from history).
    #[error("no transaction {id:?} in the edit history{hint}")]
    TransactionNotFound { id: String, hint: String },
    /// The transaction cannot be undone or redone in its state.
    #[error("{0}")]
    InvalidState(String),
    /// The caller's post-edit check failed; the transaction was rolled back.
    #[error("post-edit check failed, changes rolled back: {message}")]
    CheckFailed { code: ErrorCode, message: String },
    /// Another process holds the project's edit lock.
    #[error("another ironbees process is changing this project{holder}; try again when it is done")]
    Busy { holder: String },
    /// I/O on a project file or on the engine's state.
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    /// The history database refused an operation.
    #[error("edit history {}: {source}", path.display())]
    History { path: PathBuf, source: rusqlite::Error },
    /// The engine's own state is damaged (a journal or blob that does not verify).
    /// Nothing is changed until it is resolved; the message says how.
    #[error("{path}: {reason}")]
    Corrupt { path: String, reason: String },
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::NoMatch { .. } => ErrorCode::NoMatch,
            Error::AmbiguousMatch { .. } => ErrorCode::AmbiguousMatch,
            Error::HashMismatch { .. } => ErrorCode::HashMismatch,
            Error::PathOutsideRoot { .. } => ErrorCode::PathOutsideRoot,
            Error::InvalidUtf8 { .. } => ErrorCode::InvalidUtf8,
            Error::BinaryFile { .. } => ErrorCode::BinaryFile,
            Error::FileTooLarge { .. } => ErrorCode::FileTooLarge,
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::AlreadyExists { .. } => ErrorCode::AlreadyExists,
            Error::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            Error::TransactionNotFound { .. } => ErrorCode::StateNotFound,
            Error::InvalidState(_) => ErrorCode::InvalidState,
            Error::CheckFailed { code, .. } => *code,
            Error::Busy { .. } => ErrorCode::Busy,
            Error::Io { .. } | Error::History { .. } | Error::Corrupt { .. } => ErrorCode::Io,
        }
    }

    /// The wire form, with [`ErrorDetails`] where there are any.
    pub fn to_info(&self) -> ErrorInfo {
        let mut info = ErrorInfo::new(self.code(), self.to_string());
        let mut d = ErrorDetails::default();
        match self {
            Error::NoMatch { path, edit, candidates, similar_names, .. } => {
                info = info.with_path(path.clone());
                d.edit_index = Some(*edit);
                d.candidates = candidates.clone();
                d.similar_names = similar_names.clone();
            }
            Error::AmbiguousMatch { path, edit, candidates, .. } => {
                info = info.with_path(path.clone());
                d.edit_index = Some(*edit);
                d.candidates = candidates.clone();
            }
            Error::HashMismatch { path, edit, expected, current, changed_by, .. } => {
                info = info.with_path(path.clone());
                d.edit_index = *edit;
                d.expected_hash = expected.clone();
                d.current_hash = current.clone();
                d.changed_by = changed_by.clone();
            }
            Error::InvalidArgument { edit, .. } => d.edit_index = *edit,
            Error::PathOutsideRoot { path, .. }
            | Error::InvalidUtf8 { path, .. }
            | Error::BinaryFile { path }
            | Error::FileTooLarge { path, .. }
            | Error::NotFound { path }
            | Error::AlreadyExists { path, .. }
            | Error::Io { path, .. }
            | Error::Corrupt { path, .. } => info = info.with_path(path.clone()),
            _ => {}
        }
        info.details = d;
        info
    }

    /// Names the operation a path-level error came from.
    pub(crate) fn at_edit(self, index: usize) -> Error {
        match self {
            Error::InvalidArgument { edit: None, message } => {
                Error::InvalidArgument { edit: Some(index), message }
            }
            Error::HashMismatch { path, edit: None, message, expected, current, changed_by } => {
                Error::HashMismatch {
                    path,
                    edit: Some(index),
                    message,
                    expected,
                    current,
                    changed_by,
                }
            }
            other => other,
        }
    }

    pub(crate) fn io(path: impl Into<String>, source: io::Error) -> Error {
        Error::Io { path: path.into(), source }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
