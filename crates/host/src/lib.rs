//! Configuration to a running engine, in one place below every driver.
//!
//! The CLI, `ironbees mcp` and `ironbees serve` all need the same things from the
//! same inputs: the configuration files (the user's, then the project's
//! `.ironbees/config.yaml`, then `IRONBEES_*` variables, with `${VAR}`
//! substituted) and the process environment become the engine's session (index,
//! edit and sandbox settings), the model client (the `llm:` section completed by
//! `ANTHROPIC_*`/`OPENAI_*` and the proxy variables), the agents (built-in, the
//! user's, the project's) and a run's settings (the `agent:` section under a
//! driver's flags). A [`Host`] is that mapping; drivers only add their flags and
//! show the [`Notice`]s it returns.
//!
//! The key decision: **the environment is an input, captured once**
//! ([`Environment::capture`]) and passed in, so the mapping is a function of its
//! inputs (tests give it a made-up environment) and no library below reads the
//! process environment.
//!
//! ```no_run
//! # fn demo() -> host::Result<()> {
//! let host = host::Host::load(std::path::Path::new("."), host::Environment::capture())?;
//! let (session, notices) = host.open_session(false, false)?;
//! let settings = host.run_settings(&host::RunOverrides { yes: true, ..Default::default() })?;
//! # Ok(()) }
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod config;
mod error;
mod host;
mod sections;

pub use crate::{
    config::{Config, IndexSection, llm_settings, masked, user_config_dir},
    error::{Error, Result},
    host::{Environment, Guardrails, Host, Notice, RunOverrides, ServeToken, Tools},
    sections::{
        AgentSection, CommandSpec, EditSection, GuardrailsSection, McpServerSection,
        ReadOnlySetting, SandboxSection, ServeSection, ValidateSection, command_words, mcp_servers,
        stated_commands,
    },
};
