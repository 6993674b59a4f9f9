//! The six pillars: `understand`, `change`, `navigate`, `read`, `write`, `manage`.
//!
//! Seed 004's aim is a "1–2 turn" flow: an agent calls `understand` and gets
//! everything it needs in one answer (skeleton, symbols, dependencies, call graph,
//! PageRank, hotspots, impact radius, a synthesized report), then calls `change`
//! and gets a verified, reversible edit with its impact. This crate is that
//! orchestration layer over `code-index` (what the code is), `edit` (the only
//! writer) and `sandbox` (tests and builds).
//!
//! The key design decisions:
//!
//! - **One long-lived [`Workspace`] per project root** holds the index, the
//!   in-memory snapshot (files, definitions, graphs, ranks), the search index and
//!   the edit engine. Answers always come from a fresh index: a file watcher
//!   marks the workspace dirty, and the next call runs an incremental update
//!   (the walk decides what really changed) and rebuilds the snapshot only when
//!   something did. Files a call names are verified by hash as well, so an edit
//!   made a moment before the call is never missed. When another process holds
//!   the index lock, the call answers from the last state with an `INDEX_STALE`
//!   warning.
//! - **Every answer carries [`protocol::Guidance`]**: a context summary, next
//!   actions with ready tool calls, warnings, and for errors a recovery strategy.
//!   Guidance, risk and role decisions are pure functions tested as tables.
//! - **The [`route`] function** classifies a natural-language request (English or
//!   Korean) into a pillar, an action, targets and constraints.
//! - **`change` previews by default** (`dryRun` absent = true) and applies with a
//!   post-edit check that rolls the transaction back when the edited files gain
//!   syntax errors (or, when asked, the build fails).
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use pillars::{Call, Workspace, WorkspaceOptions};
//! use protocol::UnderstandRequest;
//!
//! let mut ws = Workspace::open(std::path::Path::new("."), WorkspaceOptions::default())?;
//! let cancel = AtomicBool::new(false);
//! let call = Call::new(&pillars::NoProgress, &cancel);
//! let req: UnderstandRequest = serde_json::from_str(r#"{"target": "src/lib.rs"}"#).unwrap();
//! let answer = ws.understand(&req, &call)?;
//! println!("{}", answer.guidance.context_summary);
//! # Ok::<(), pillars::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod analysis;
mod change;
mod error;
mod guidance;
mod intent;
mod locate;
mod manage;
mod navigate;
mod patch;
mod read;
mod templates;
mod understand;
mod workspace;
mod write;

pub use code_index::{NoProgress, Progress};

pub use crate::{
    error::{Error, Result},
    guidance::{error_guidance, recovery_for},
    intent::route,
    workspace::{Call, IndexLocator, SandboxSetup, Workspace, WorkspaceOptions},
};
