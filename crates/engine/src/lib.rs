//! The engine: one session per project, answering one closed set of operations
//! through one tool registry. Every driver calls it: the CLI's subcommands,
//! `ironbees mcp`, the agents, and later the HTTP server.
//!
//! The key design decisions:
//!
//! - **One [`Session`] per project root**, shared (`Sync`) by every caller: the
//!   index and its in-memory snapshot (files, definitions, graphs, ranks), the
//!   search index, the edit engine (the only writer), the sandbox, git churn, and
//!   the model settings. Readers never wait for a writer: the snapshot is an
//!   `Arc` a call takes and keeps; an edit transaction holds only the edit
//!   engine's lock. Answers always come from a fresh index: a file watcher marks
//!   the session dirty and the next call updates incrementally; files a call
//!   names are verified by hash as well.
//! - **Operations are `protocol` types.** Each request implements [`protocol::Op`],
//!   which names its response; the session has one method per operation
//!   (`understand`, `localize`, `change`, ...). The [`Registry`] turns them into
//!   tools — name, description, input and output JSON Schemas derived from those
//!   types, whether the tool reads, edits or runs, and a handler — which the MCP
//!   server lists, the agents hand to models, and the CLI can call by name.
//! - **Every answer and every error carries [`protocol::Guidance`]**: a context
//!   summary, next actions with ready tool calls, warnings, and for errors a
//!   recovery strategy. Guidance, risk and role decisions are pure functions
//!   tested as tables; so is [`route`], the English/Korean request router.
//! - **`change` previews by default** (`dryRun` absent = true) for every driver;
//!   the CLI passes `dryRun: false` unless asked to preview. Applied, a change is
//!   checked (no new syntax errors; optionally the build) and rolled back when the
//!   check fails.
//!
//! ```no_run
//! use engine::{Registry, Session, SessionOptions};
//! use protocol::{Operation, UnderstandRequest};
//! use stdx::{Call, CancellationToken, NoProgress};
//!
//! let session = Session::open(std::path::Path::new("."), SessionOptions::default())?;
//! let cancel = CancellationToken::new();
//! let call = Call::new(&NoProgress, &cancel);
//! let req: UnderstandRequest = serde_json::from_str(r#"{"target": "src/lib.rs"}"#).unwrap();
//! let answer = session.understand(&req, &call)?;
//! println!("{}", answer.guidance.context_summary);
//! // The same operation by name, as MCP and the agents call it:
//! let registry = Registry::new();
//! let tool = registry.get(Operation::Understand.name()).unwrap();
//! let json = (tool.handler)(&session, &call, serde_json::json!({"target": "src/lib.rs"}));
//! # Ok::<(), engine::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod analysis;
mod change;
mod churn;
mod compat;
mod derived;
mod embed;
mod error;
mod guidance;
mod history;
mod intent;
mod layers;
mod layout;
mod locate;
mod manage;
mod navigate;
mod project;
mod read;
mod registry;
mod rerank;
mod retrieval;
mod session;
mod shadow;
mod templates;
mod understand;
mod write;

/// The request router of seed 002 (Layer 1), for the drivers and agents that
/// reach code intelligence through the engine: a run routes its request once.
pub use ::retrieval::route as route_request;
/// The module a test file is named after and the name a source file's tests
/// would carry, as `impact` matches them: for agents that judge a failing test by
/// its file's name without a second naming convention.
pub use code_graph::{module_stem, test_subject};
/// Tokens of a text as the index counts them (what agents' context budgets use).
pub use code_index::count_tokens;
pub use stdx::{Call, CancellationToken, NoProgress, OutputStream, Progress};

pub use crate::{
    error::{Error, Result},
    guidance::{error_guidance, recovery_for},
    intent::route,
    layers::guard_check,
    layout::Layout,
    project::{Trust, apply_sandbox_options, parse_duration, parse_size},
    registry::{Handler, Registry, Tool, ToolError, ToolSpec, answer_text, render_text},
    session::{IndexLocator, ProjectCommands, SandboxSetup, Session, SessionOptions},
    shadow::{Materialize, Shadow, ShadowRoute, shadow_route},
};
