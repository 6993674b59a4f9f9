//! The MCP client: the servers configured under `mcp.servers` (a child process
//! speaking stdio, or a streamable HTTP endpoint) as tools of the engine's
//! registry, on the official Rust SDK (rmcp), not a JSON-RPC of our own.
//!
//! The key decisions:
//!
//! - **Outside tools are registry tools.** [`ServerSet::register`] adds each
//!   offered tool as `server.tool` with the server's input schema, the source
//!   `ToolSource::Server` and an effect: `Read` when the configuration declares
//!   it read-only, else `External` (it may act on the world), which a run's
//!   shadow refuses. Every driver (`tools call`, the agents, `ironbees mcp`)
//!   then calls it as it calls a built-in one.
//! - **A server is isolated.** Each starts within its startup timeout; one that
//!   exits, hangs, or writes something other than JSON-RPC is left out with a
//!   sentence saying what it did (its exit status, the first non-JSON line, the
//!   tail of its stderr) — or, when `required`, stops everything
//!   ([`Error::RequiredServer`], `TOOL_EXECUTION_FAILED`). A call has its own
//!   timeout, sends `notifications/cancelled` when it is cut or the caller
//!   cancels, and a dead server's calls fail with `TOOL_EXECUTION_FAILED`
//!   saying how it ended. Results are masked and cut to `max_result_bytes`
//!   before anyone sees them.
//! - **Children die with us.** A stdio server runs in its own process group;
//!   ending the set closes its stdin, waits a moment, then kills the group and
//!   reaps it, and this process is the subreaper of what the group leaves
//!   behind, so nothing is left as a zombie even under an init that does not
//!   reap. [`kill_all`] is for a process about to exit without destructors.
//! - **Secrets stay hidden.** The configured environment's and headers' values
//!   ([`ServerSpec::secrets`]) are masked in every error, log line and result.
//! - **Nothing runs when nothing is configured**: no runtime, no thread. The
//!   client has its own small runtime (one worker) so that tools can be called
//!   from any blocking thread, whichever runtime the driver has.
//!
//! ```no_run
//! use mcp_client::{ServerSet, ServerSpec, Transport};
//! let spec = ServerSpec::new("memory", Transport::Stdio {
//!     command: "mcp-server-memory".into(), args: vec![], env: vec![], cwd: ".".into(),
//! });
//! let (servers, missing) = ServerSet::start(vec![spec])?;
//! let mut registry = engine::Registry::new();
//! servers.register(&mut registry);
//! // registry.call(&session, &call, "memory.read_graph", serde_json::json!({}))
//! servers.shutdown();
//! # Ok::<(), mcp_client::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod conn;
mod error;
mod result;
mod set;
mod spec;

pub use crate::{
    conn::kill_all,
    error::{Error, Result},
    set::{ServerInfo, ServerSet, Unavailable},
    spec::{ReadOnly, ServerSpec, Transport, check_name, mask},
};
