//! Errors to machine codes and exit codes.
//!
//! Library errors carry an [`ErrorCode`]; this module finds it in an `anyhow` chain
//! and picks the process exit code. The table is part of the CLI's contract (see
//! `--help`): scripts branch on it.

use protocol::{ErrorCode, ErrorInfo};

/// Finds the first error in the chain that knows its machine code.
pub fn error_info(err: &anyhow::Error) -> ErrorInfo {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<code_index::Error>() {
            let mut info = e.to_info();
            info.message = render_chain(err);
            return info;
        }
        if let Some(e) = cause.downcast_ref::<edit::Error>() {
            let mut info = e.to_info();
            info.message = render_chain(err);
            return info;
        }
        if let Some(e) = cause.downcast_ref::<llm::Error>() {
            let mut info = e.to_info();
            info.message = render_chain(err);
            return info;
        }
        if let Some(e) = cause.downcast_ref::<sandbox::Error>() {
            let mut info = e.to_info();
            info.message = render_chain(err);
            return info;
        }
        if let Some(e) = cause.downcast_ref::<git::Error>() {
            let mut info = e.to_info();
            info.message = render_chain(err);
            return info;
        }
        if let Some(e) = cause.downcast_ref::<engine::Error>() {
            let mut info = e.to_info();
            info.message = render_chain(err);
            return info;
        }
        if let Some(e) = cause.downcast_ref::<agent::Error>() {
            let mut info = e.to_info();
            info.message = render_chain(err);
            return info;
        }
        if let Some(e) = cause.downcast_ref::<workflow::Error>() {
            let mut info = e.to_info();
            info.message = render_chain(err);
            return info;
        }
        if let Some(e) = cause.downcast_ref::<pipeline::Error>() {
            let mut info = e.to_info();
            info.message = render_chain(err);
            return info;
        }
        if let Some(e) = cause.downcast_ref::<host::Error>() {
            let mut info = e.to_info();
            info.message = render_chain(err);
            return info;
        }
        if let Some(e) = cause.downcast_ref::<mcp::Error>() {
            return ErrorInfo::new(e.code(), render_chain(err));
        }
        if let Some(e) = cause.downcast_ref::<server::Error>() {
            return ErrorInfo::new(e.code(), render_chain(err));
        }
        if let Some(info) = cause.downcast_ref::<CliError>() {
            return info.0.clone();
        }
        // A file the CLI reads itself (`change --edits FILE`, `--find-file`, a
        // plan file): the user's mistake, not ironbees' (issue 32.9 said INTERNAL).
        if let Some(e) = cause.downcast_ref::<std::io::Error>() {
            let code = match e.kind() {
                std::io::ErrorKind::NotFound => ErrorCode::NotFound,
                _ => ErrorCode::Io,
            };
            return ErrorInfo::new(code, render_chain(err));
        }
    }
    ErrorInfo::new(ErrorCode::Internal, render_chain(err))
}

fn render_chain(err: &anyhow::Error) -> String {
    // `{:#}` joins the context chain with ": ", outermost first.
    format!("{err:#}")
}

/// Exit status for an error: its code's, except that a *target* naming several
/// definitions (`graph callers url_for`) is a question back to the user (exit 2,
/// name one), not an edit conflict (9) — the typed details tell them apart.
pub fn exit_code_of(info: &ErrorInfo) -> i32 {
    if info.code == ErrorCode::AmbiguousMatch && !info.details.targets.is_empty() {
        return 2;
    }
    exit_code(info.code)
}

/// Exit status for a machine code (the table in `ironbees --help`).
pub fn exit_code(code: ErrorCode) -> i32 {
    match code {
        ErrorCode::InvalidArgument | ErrorCode::NotADirectory => 2,
        ErrorCode::NotFound
        | ErrorCode::StateNotFound
        | ErrorCode::ToolNotFound
        | ErrorCode::UnknownProject => 3,
        ErrorCode::PathOutsideRoot => 4,
        ErrorCode::IndexCorrupt | ErrorCode::IndexStale => 5,
        ErrorCode::SandboxLimit => 6,
        ErrorCode::LlmUnavailable | ErrorCode::LlmRateLimited | ErrorCode::LlmBadResponse => 7,
        ErrorCode::BudgetExceeded => 8,
        ErrorCode::CommandNotFound => 127,
        ErrorCode::NoMatch
        | ErrorCode::AmbiguousMatch
        | ErrorCode::HashMismatch
        | ErrorCode::AlreadyExists => 9,
        ErrorCode::GuardrailBlocked => 11,
        ErrorCode::Cancelled => 130,
        _ => 1,
    }
}

/// An error raised by the CLI itself, with its code.
#[derive(Debug)]
pub struct CliError(pub ErrorInfo);

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for CliError {}

pub fn cli_error(code: ErrorCode, message: impl Into<String>) -> anyhow::Error {
    CliError(ErrorInfo::new(code, message)).into()
}
