//! Agent mode: a request goes in, a plan is approved, code is written, built and
//! tested, and the loop runs until the tests pass or a human is needed.
//!
//! The [`Orchestrator`] runs the coding graph of seed 000 §3.1.3 on the durable
//! `workflow` engine, one checkpoint per transition in `.ironbees/runs/`:
//!
//! ```text
//! INIT → PLAN → WAIT_PLAN_APPROVAL ─approve→ CODE → CRITIC → VALIDATE → DECIDE ─pass→ SUCCESS → END
//!          ↑          │ reject/edit          ↑       │ blocked           │ (--review: WAIT_REVIEW first)
//!          └──────────┘                      ├───────┴─ fail, rounds left
//!                                            └── WAIT_HUMAN ← ESCALATE ← rounds used up
//! ```
//!
//! The key decisions:
//!
//! - **Nothing touches the working tree before SUCCESS.** The coder's `change` and
//!   `write` calls are planned by the edit engine against the run's shadow overlay
//!   (`engine::Registry::call_in`), which lives in the checkpointed state;
//!   VALIDATE builds and tests a copy of the project with the overlay on top
//!   (`workspace`), in the sandbox, with the landed runners; SUCCESS applies the
//!   overlay as one journaled transaction (one `ironbees undo` reverts a run),
//!   through a recorded effect that a re-run finds instead of repeating.
//! - **Agents are definitions, tools are the registry's.** The planner, coder and
//!   validator are `agent.yaml` + prompt (built in, overridable per user or
//!   project); each sees only its `requiredTools`, with the names and schemas
//!   `ironbees mcp` serves. The project's `AGENTS.md` files reach every prompt.
//! - **Limits pause, they don't kill.** A spent budget, the time limit, the same
//!   tool call looping or the same failure repeating send the run to WAIT_HUMAN
//!   with the reason (pure functions in `policy`, tested as tables); its work stays
//!   in the state, and a human's answer (`ApprovalDecision`) continues it.
//! - **A run is resumable anywhere.** Every node may run twice (a crash, a kill);
//!   model calls repeat, edits don't. Gates are workflow interrupts: the process may
//!   exit while a run waits, and `resume` in another process answers the gate.
//!
//! Agent definitions by convention (seed 001 §5.2) are the layer under it: a
//! directory `<name>/agent.yaml` (name, description, required tools, prompt file,
//! model and tool overrides) plus its prompt. The built-ins are embedded from
//! `crates/agent/agents/`; a user's agents directory and the project's `agents/`
//! and `.ironbees/agents/` override them by name or add new ones, in that order.
//! Definitions are checked strictly when they load, with `file:line:column`
//! errors; [`scaffold`] returns a new agent's files for the caller to write.
//!
//! ```no_run
//! use std::{path::Path, sync::Arc};
//!
//! # fn demo(session: Arc<engine::Session>, llm: Arc<llm::Llm>) -> agent::Result<()> {
//! let dirs = agent::AgentDirs::conventional(None, Path::new("."));
//! let rt = tokio::runtime::Runtime::new().unwrap();
//! let agents = agent::AgentSet::load(&dirs)?;
//! let registry = engine::Registry::new(); // or host::Host::tools, with the configured servers'
//! let orchestrator = agent::Orchestrator::open(session, Some(llm), agents, registry, rt.handle().clone())?;
//! let run = orchestrator.start("Fix the division by zero in calculate()", Default::default(), Default::default())?;
//! if run.waiting_at() == Some("WAIT_PLAN_APPROVAL") {
//!     let yes = protocol::ApprovalDecision { approved: true, ..Default::default() };
//!     orchestrator.resume(&run.run_id, Some(&yes), None)?;
//! }
//! # Ok(()) }
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod context;
mod critic;
mod defs;
mod error;
mod graph;
mod limit;
mod model;
mod nodes;
mod orchestrator;
mod overlay;
mod policy;
mod review;
mod suite;
mod taskgraph;
mod validate;
mod workspace;

pub use crate::{
    defs::{
        AgentDef, AgentDirs, AgentSet, AgentSource, InstructionFile, Instructions, LlmConfig,
        is_built_in, project_instructions, scaffold,
    },
    error::{Error, Position, Result},
    graph::{CustomNode, GraphSpec},
    orchestrator::{Drive, Orchestrator, RUN_KIND, parse_decision},
};
