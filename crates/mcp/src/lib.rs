//! The MCP server: the engine's tool registry over stdio, on the official Rust SDK
//! (rmcp) — the six pillars, the code-intelligence operations (`localize`,
//! `search`, `repomap`, `graph`, `impact`, `hotspots`, `report`, ...), edit
//! history, builds and tests, and the superseded low-level tools.
//!
//! The design decision: this crate is an adapter and nothing more. It declares no
//! argument types and implements no tool: `tools/list` is the registry's specs
//! (names, descriptions, input and output JSON Schemas derived from the `protocol`
//! types), and `tools/call` runs the registry's handler on the blocking pool
//! against one shared `engine::Session` (calls run concurrently; the session lets
//! readers proceed while an edit commits). Answers are structured content;
//! failures are tool results with `isError`, text starting with the machine code
//! (`HASH_MISMATCH: ...`) and structured content carrying the code, the details
//! and guidance with a recovery strategy. Arguments that do not match the request
//! type are such results too (`INVALID_ARGUMENT`), so the model can correct them;
//! an unknown tool is a JSON-RPC error (-32602). A stdio front (`stdio.rs`) answers
//! lines that are not JSON (-32700) or not JSON-RPC 2.0 (-32600), which rmcp alone
//! would drop or answer without an id. With a registry that holds configured
//! servers' tools ([`Server::with_registry`], `ironbees mcp --reexport`), those
//! are served beside ours under their registry names (`git.git_status`), and
//! their answers pass through as their servers gave them. Progress goes out as
//! `notifications/progress` when the client sent a `progressToken`; a
//! `notifications/cancelled` stops the call at its next consistent point.
//!
//!
//! With the `http` feature, [`http_service`] serves the same tools over MCP's
//! streamable HTTP transport (rmcp's server): a tower service a web server
//! mounts (`ironbees serve` at `/mcp`, behind its token).
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! let session = engine::Session::open(std::path::Path::new("."), Default::default())?;
//! mcp::serve_stdio(std::sync::Arc::new(session)).await?;
//! # Ok(()) }
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "http")]
mod http;
mod server;
mod stdio;

#[cfg(feature = "http")]
pub use crate::http::{HttpOptions, http_service};
pub use crate::server::Server;

/// Errors of the transport (the tools' errors are tool results, not these).
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

/// Serves `session` over stdin/stdout until the client disconnects.
/// Lines that are not JSON-RPC 2.0 get proper JSON-RPC errors (parse error, invalid
/// request) and the server keeps serving.
pub async fn serve_stdio(session: std::sync::Arc<engine::Session>) -> Result<(), Error> {
    serve_stdio_with(Server::new(session)).await
}

/// [`serve_stdio`] with a given server (one with re-exported outside tools:
/// [`Server::with_registry`]).
pub async fn serve_stdio_with(server: Server) -> Result<(), Error> {
    stdio::serve(server, tokio::io::stdin(), tokio::io::stdout()).await
}
