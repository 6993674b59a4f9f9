mod agent;
mod edit;
mod friction;
mod guard;
mod index;
mod llm;
mod mcp;
mod mcp_client;
mod pipeline;
mod registry;
mod retrieval;
mod sandbox;
mod search;
mod serve;
mod telemetry;
mod validation;

use std::process::Command;

/// A finished run of the binary: its exit code and both outputs as text.
pub(crate) struct Out {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl From<std::process::Output> for Out {
    fn from(o: std::process::Output) -> Out {
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Removes what the environment the tests run in would tell the binary about
/// models and ironbees' own settings, so a test configures exactly what it means.
pub(crate) fn without_model_env(c: &mut Command) {
    for (k, _) in std::env::vars() {
        let strip = k.starts_with("IRONBEES_")
            || k.starts_with("ANTHROPIC_")
            || k.starts_with("OPENAI_")
            || k.to_ascii_lowercase().ends_with("_proxy");
        if strip {
            c.env_remove(&k);
        }
    }
}
