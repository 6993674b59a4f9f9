//! The MCP server: the six pillars (`understand`, `change`, `navigate`, `read`,
//! `write`, `manage`) and the superseded low-level tools (`search_project`,
//! `read_code`, `edit_code`, `analyze_relationship`, `list_directory`,
//! `get_hierarchy`, `manage_project`) over stdio, on the official Rust SDK (rmcp).
//!
//! The design decision: this crate is a thin driver. Every tool converts its
//! arguments (JSON Schemas from schemars, named as in seed 004 §4.2) into a
//! `protocol` request and calls one `pillars::Workspace` method on the blocking
//! pool, with the workspace behind a mutex (calls are serialized: the edit engine
//! and the index are single-writer anyway). Answers are structured content (and
//! the same JSON as text); failures are tool results with `isError`, text starting
//! with the machine code (`HASH_MISMATCH: ...`) and structured content carrying
//! the code, the details and guidance with a recovery strategy. Arguments that do
//! not match the schema are tool results with `isError` as well (rmcp's
//! "failed to deserialize parameters", prefixed `INVALID_ARGUMENT:` by the stdio
//! front), so the model can correct them; an unknown
//! tool is a JSON-RPC error (-32602). A stdio front (`stdio.rs`) answers lines
//! that are not JSON (-32700) or not JSON-RPC 2.0 (-32600), which rmcp alone
//! would drop or answer without an id. Progress goes out
//! as `notifications/progress` when the client sent a `progressToken`; a
//! `notifications/cancelled` stops the call at its next consistent point.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! let ws = pillars::Workspace::open(std::path::Path::new("."), Default::default())?;
//! mcp::serve_stdio(ws).await?;
//! # Ok(()) }
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod server;
mod stdio;

pub use crate::server::Server;

/// Errors of the transport (the pillars' errors are tool results, not these).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The client did not complete the MCP handshake, or the transport failed.
    #[error("MCP session: {0}")]
    Session(String),
}

impl Error {
    pub fn code(&self) -> protocol::ErrorCode {
        protocol::ErrorCode::ToolExecutionFailed
    }
}

/// Serves `ws` over stdin/stdout until the client disconnects.
/// Lines that are not JSON-RPC 2.0 get proper JSON-RPC errors (parse error, invalid
/// request) and the server keeps serving.
pub async fn serve_stdio(ws: pillars::Workspace) -> Result<(), Error> {
    stdio::serve(Server::new(ws), tokio::io::stdin(), tokio::io::stdout()).await
}
