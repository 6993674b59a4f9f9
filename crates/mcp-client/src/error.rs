use protocol::{ErrorCode, ErrorInfo};

/// What can go wrong bringing up the configured servers. A tool call's failure
/// is not one of these: it is the registry's `ToolError`, with its code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A server marked `required` did not start (it exited, did not answer
    /// `initialize` in time, sent garbage, or listed no tools it could).
    #[error("the required MCP server `{server}` did not start: {reason}")]
    RequiredServer { server: String, reason: String },
    /// A server's configuration cannot be used (a bad name, an empty command).
    #[error("MCP server `{server}`: {message}")]
    Config { server: String, message: String },
    /// The client's own runtime could not start.
    #[error("starting the MCP client's runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::RequiredServer { .. } => ErrorCode::ToolExecutionFailed,
            Error::Config { .. } => ErrorCode::InvalidArgument,
            Error::Runtime(_) => ErrorCode::Io,
        }
    }

    pub fn to_info(&self) -> ErrorInfo {
        ErrorInfo::new(self.code(), self.to_string())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
