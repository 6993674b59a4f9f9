//! The commit pipeline (seed 003, "Commitly"): after a commit, the project is
//! checked, tested, refactored and pushed from a *hub* — a clone of the remote
//! beside the project — never from the user's working tree.
//!
//! ```text
//! CLONE → CODE → [y/n] → TEST → [y/n] → REFACTOR → [y/n] → [push?] → SYNC → NOTIFY
//!   └─ a failure or a "no" anywhere → ROLLBACK (hub reset, branches deleted, error log)
//! ```
//!
//! The key decision: **the pipeline is a graph on the same workflow engine as
//! agent mode** (`workflow`): its runs live in the same store under their own
//! kind ([`RUN_KIND`]), checkpointed at every transition, its approvals are
//! interrupts answered by `resume`, and every git action is a recorded effect,
//! so a killed pipeline resumes where it was without pushing or cherry-picking
//! twice. Each stage works on its own hub branch `commitly/<stage>/<id>`, made
//! from the previous stage's (seed §4); a failure resets the hub to the last
//! good branch and deletes the later ones (§7.1).
//!
//! Project commands (the execution command, linters, tests) run in the
//! `sandbox` with the configured time and memory limits, like agent mode's;
//! git runs directly (a tool, not a project command). Results are `protocol`
//! types (`PipelineState`, the stage results), also written as the seed's JSON
//! cache files and logs under the project's state directory.
//!
//! ```no_run
//! # fn demo(setup: pipeline::Setup) -> pipeline::Result<()> {
//! let p = pipeline::Pipeline::open(setup)?;
//! let outcome = p.start(true, pipeline::Drive::default())?; // --yes: no approval waits
//! println!("{} {}", outcome.pipeline_id, outcome.status.name());
//! # Ok(()) }
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod error;
mod git;
mod hook;
mod layout;
mod project;
mod refactor;
mod report;
mod run;
mod seed_layout;
mod slack;
mod sql;

pub use crate::{
    error::{Error, Result},
    hook::{HookOutcome, hook_script, install_hook},
    layout::{Layout, default_hub},
    project::{InitOutcome, init},
    report::{Report, ReportFilter, file_name as report_file_name, render_markdown, report},
    run::{AgentApplied, Commands, Drive, Outcome, Pipeline, RUN_KIND, Setup, nodes},
    seed_layout::from_seed_layout,
};
