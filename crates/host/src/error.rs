use std::path::PathBuf;

use protocol::{ErrorCode, ErrorInfo};

/// What can go wrong turning the configuration into a running engine. Each
/// variant maps to one machine code ([`Error::code`]); the wrapped errors keep
/// their own.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration file that does not parse, a section with a wrong or
    /// unknown key, a `${VAR}` that is not set, a bad value.
    #[error("{0}")]
    Config(String),
    /// A configuration file that exists but cannot be read.
    #[error("reading {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Engine(#[from] engine::Error),
    #[error(transparent)]
    Llm(#[from] llm::Error),
    #[error(transparent)]
    Agent(#[from] agent::Error),
    #[error(transparent)]
    Mcp(#[from] mcp_client::Error),
    #[error(transparent)]
    Workflow(#[from] workflow::Error),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Config(_) => ErrorCode::InvalidArgument,
            Error::Io { .. } => ErrorCode::Io,
            Error::Engine(e) => e.to_info().code,
            Error::Llm(e) => e.code(),
            Error::Agent(e) => e.to_info().code,
            Error::Mcp(e) => e.code(),
            Error::Workflow(e) => e.code(),
        }
    }

    pub fn to_info(&self) -> ErrorInfo {
        match self {
            Error::Engine(e) => e.to_info(),
            Error::Llm(e) => e.to_info(),
            Error::Agent(e) => e.to_info(),
            Error::Mcp(e) => e.to_info(),
            Error::Workflow(e) => e.to_info(),
            other => ErrorInfo::new(other.code(), other.to_string()),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
