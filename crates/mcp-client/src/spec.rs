//! What a configured server is, once the host has read the configuration and
//! the environment: everything here is final (paths resolved, the child's whole
//! environment computed, secrets known), so this crate reads neither.

use std::{path::PathBuf, time::Duration};

/// One MCP server to connect to.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The server's name: its tools are `name.tool` in the registry.
    pub name: String,
    pub transport: Transport,
    /// How long `initialize` and the first `tools/list` may take together.
    pub startup_timeout: Duration,
    /// How long one `tools/call` may take before it is cancelled.
    pub tool_timeout: Duration,
    /// Only these tools (by the server's names); `None`: all of them.
    pub enabled_tools: Option<Vec<String>>,
    /// Never these tools.
    pub disabled_tools: Vec<String>,
    /// A server that does not start stops everything (`Error::RequiredServer`)
    /// instead of being left out with a warning.
    pub required: bool,
    /// Which tools only read (an agent run may call them); the others are
    /// treated as acting on the world.
    pub read_only: ReadOnly,
    /// A call's result is cut to this many bytes (text and structured content
    /// together) before anyone sees it.
    pub max_result_bytes: usize,
    /// Values that must never be shown (the configured environment's and the
    /// headers' values): masked in errors, stderr and results.
    pub secrets: Vec<String>,
}

/// How the server is reached.
#[derive(Debug, Clone)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio {
        command: PathBuf,
        args: Vec<String>,
        /// The child's whole environment (nothing else is inherited).
        env: Vec<(String, String)>,
        cwd: PathBuf,
    },
    /// A streamable HTTP endpoint.
    Http { url: String, headers: Vec<(String, String)> },
}

/// Which of a server's tools are declared read-only by the configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ReadOnly {
    #[default]
    None,
    All,
    Tools(Vec<String>),
}

impl ReadOnly {
    pub fn covers(&self, tool: &str) -> bool {
        match self {
            ReadOnly::None => false,
            ReadOnly::All => true,
            ReadOnly::Tools(t) => t.iter().any(|n| n == tool),
        }
    }
}

impl ServerSpec {
    /// Defaults for the limits (30 s to start, 60 s per call, 64 KiB results),
    /// optional, nothing read-only.
    pub fn new(name: impl Into<String>, transport: Transport) -> ServerSpec {
        ServerSpec {
            name: name.into(),
            transport,
            startup_timeout: Duration::from_secs(30),
            tool_timeout: Duration::from_secs(60),
            enabled_tools: None,
            disabled_tools: Vec::new(),
            required: false,
            read_only: ReadOnly::None,
            max_result_bytes: 64 * 1024,
            secrets: Vec::new(),
        }
    }

    /// Whether the server's tool `tool` is offered.
    pub fn offers(&self, tool: &str) -> bool {
        self.enabled_tools.as_ref().is_none_or(|e| e.iter().any(|n| n == tool))
            && !self.disabled_tools.iter().any(|n| n == tool)
    }

    /// `text` with every secret value replaced by `***`.
    pub fn mask(&self, text: &str) -> String {
        mask(text, &self.secrets)
    }
}

/// `text` with each of `secrets` (4 bytes or longer) replaced by `***`.
pub fn mask(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for s in secrets.iter().filter(|s| s.len() >= 4) {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "***");
        }
    }
    out
}

/// A server name must be usable as a tool-name prefix: letters, digits, `_`
/// and `-`, and not a built-in tool's name (an agent's `requiredTools` names
/// either).
pub fn check_name(name: &str, builtin: &[&str]) -> Result<(), String> {
    if name.is_empty() || name.len() > 48 {
        return Err("a server name has 1 to 48 characters".into());
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(format!(
            "`{name}` is not a usable server name: letters, digits, `_` and `-` only (its tools \
             are named `{name}.TOOL`)"
        ));
    }
    if builtin.contains(&name) {
        return Err(format!(
            "`{name}` is the name of a built-in tool; an agent's requiredTools could not tell them apart"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_masks_and_names() {
        let mut s =
            ServerSpec::new("git", Transport::Http { url: "http://x".into(), headers: vec![] });
        assert!(s.offers("status"));
        s.enabled_tools = Some(vec!["status".into(), "log".into()]);
        s.disabled_tools = vec!["log".into()];
        assert!(s.offers("status") && !s.offers("log") && !s.offers("commit"));
        s.secrets = vec!["s3cr3t-value".into(), "1".into()];
        assert_eq!(s.mask("token=s3cr3t-value n=1"), "token=*** n=1");
        assert!(ReadOnly::Tools(vec!["a".into()]).covers("a") && !ReadOnly::None.covers("a"));
        assert!(check_name("git", &["read"]).is_ok());
        assert!(check_name("read", &["read"]).is_err());
        assert!(check_name("a.b", &[]).is_err());
    }
}
