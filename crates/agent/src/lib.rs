//! Agent mode: planner → coder → validator in a Plan → approve → Code → Validate →
//! Decide loop. This crate will hold the coding orchestrator; today it holds the
//! layer under it, agent definitions by convention (seed 001 §5.2).
//!
//! An agent is a directory, `<name>/agent.yaml` (name, description, required tools,
//! prompt file, model and tool overrides) plus its prompt, so changing what an
//! agent does is editing text, not code. The three the loop needs are built in
//! (embedded in the binary, from `crates/agent/agents/`); a user's agents
//! directory and the project's `agents/` and `.ironbees/agents/` override them by
//! name or add new ones, in that order. The caller passes the directories in: this
//! crate reads no environment and **writes nothing** — [`scaffold`] returns the
//! files of a new agent for the caller to write through the edit engine.
//!
//! A definition is checked when it loads, strictly (unknown keys, wrong types, a
//! name that differs from its directory), and its errors read
//! `file:line:column: message`, the position coming from the YAML library.
//!
//! Projects also speak to agents through `AGENTS.md` files (the convention Codex,
//! Cursor and others share); [`project_instructions`] collects the ones that
//! apply to the paths at hand, and [`Instructions::append_to`] adds them to a
//! system prompt.
//!
//! ```no_run
//! use std::path::{Path, PathBuf};
//!
//! let root = Path::new(".");
//! let dirs = agent::AgentDirs::conventional(Some(PathBuf::from("/home/me/.config/ironbees/agents")), root);
//! let agents = agent::AgentSet::load(&dirs)?;
//! let planner = agents.get("planner").expect("built in");
//! planner.validate_tools(&["understand", "navigate", "read", "localize", "search", "repomap"])?;
//! let system = agent::project_instructions(root, &["src/lib.rs"], 16 * 1024).append_to(&planner.prompt);
//! # Ok::<(), agent::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod defs;
mod error;

pub use crate::{
    defs::{
        AgentDef, AgentDirs, AgentSet, AgentSource, InstructionFile, Instructions, LlmConfig,
        project_instructions, scaffold,
    },
    error::{Error, Position, Result},
};
