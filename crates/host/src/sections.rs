//! The configuration's typed sections (besides `index:` and `llm:`, which live
//! with the loading code).

use serde::Deserialize;

/// `edit:` — the edit engine's limits.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EditSection {
    pub max_file_size: Option<u64>,
    pub history_limit: Option<usize>,
    pub history_max_bytes: Option<u64>,
    pub lock_timeout_secs: Option<u64>,
}

/// `sandbox:` — the policy project commands run under. Scalars may arrive as
/// numbers or booleans (YAML `timeout: 300`, `network: off`); they are read as
/// text.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxSection {
    #[serde(deserialize_with = "scalar")]
    pub timeout: Option<String>,
    #[serde(deserialize_with = "scalar")]
    pub memory: Option<String>,
    #[serde(deserialize_with = "scalar")]
    pub cpu: Option<String>,
    pub processes: Option<u32>,
    #[serde(deserialize_with = "scalar")]
    pub network: Option<String>,
    pub writable: Vec<std::path::PathBuf>,
    pub hide: Vec<std::path::PathBuf>,
    pub backend: Option<String>,
    pub image: Option<String>,
    pub strict: bool,
    #[serde(deserialize_with = "scalar")]
    pub max_output: Option<String>,
}

fn scalar<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s),
        Some(serde_json::Value::Bool(b)) => Some(if b { "on" } else { "off" }.to_owned()),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        Some(other) => {
            return Err(serde::de::Error::custom(format!("expected a scalar, got {other}")));
        }
    })
}

/// One server under `mcp.servers` (the map's key is its name; in the list
/// form, `name`). Either `command` (a child speaking stdio) or `url` (a
/// streamable HTTP endpoint).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerSection {
    pub name: Option<String>,
    pub command: Option<String>,
    pub args: Vec<String>,
    #[serde(deserialize_with = "scalar_map")]
    pub env: std::collections::BTreeMap<String, String>,
    pub cwd: Option<std::path::PathBuf>,
    pub url: Option<String>,
    #[serde(deserialize_with = "scalar_map")]
    pub headers: std::collections::BTreeMap<String, String>,
    #[serde(deserialize_with = "scalar")]
    pub startup_timeout: Option<String>,
    #[serde(deserialize_with = "scalar")]
    pub tool_timeout: Option<String>,
    pub enabled_tools: Option<Vec<String>>,
    pub disabled_tools: Vec<String>,
    /// A server that does not start stops the command (default: left out with
    /// a warning).
    pub required: bool,
    /// `false` keeps the server configured but not started.
    pub enabled: Option<bool>,
    /// `true` (every tool) or a list of tools that only read: an agent run may
    /// call those; the others are treated as acting on the world.
    pub read_only: ReadOnlySetting,
    #[serde(deserialize_with = "scalar")]
    pub max_result: Option<String>,
}

/// `read_only: true` or `read_only: [tool, ...]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ReadOnlySetting {
    All(bool),
    Tools(Vec<String>),
}

impl Default for ReadOnlySetting {
    fn default() -> Self {
        ReadOnlySetting::All(false)
    }
}

/// The servers under `mcp.servers`: a map by name, or (as seed 001's
/// `MCP.Servers`) a list of entries with a `name`. Each entry is checked
/// on its own, so an error names the server.
pub fn mcp_servers(
    section: Option<&serde_json::Value>,
) -> Result<Vec<(String, McpServerSection)>, String> {
    use serde_json::Value;
    let Some(Value::Object(mcp)) = section else {
        return match section {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(_) => Err("config section `mcp`: expected a map".into()),
        };
    };
    if let Some(k) = mcp.keys().find(|k| *k != "servers") {
        return Err(format!("config section `mcp`: unknown key `{k}` (expected `servers`)"));
    }
    let entries: Vec<(Option<String>, Value)> = match mcp.get("servers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(m)) => m.iter().map(|(k, v)| (Some(k.clone()), v.clone())).collect(),
        Some(Value::Array(a)) => a.iter().map(|v| (None, v.clone())).collect(),
        Some(_) => return Err("config `mcp.servers`: expected a map of servers by name".into()),
    };
    let mut out = Vec::new();
    for (i, (key, value)) in entries.into_iter().enumerate() {
        let label = key.clone().unwrap_or_else(|| format!("[{i}]"));
        let server: McpServerSection = serde_json::from_value(value)
            .map_err(|e| format!("config `mcp.servers.{label}`: {e}"))?;
        let name = match (key, &server.name) {
            (Some(k), _) => k,
            (None, Some(n)) => n.clone(),
            (None, None) => {
                return Err(format!("config `mcp.servers[{i}]`: a server needs a `name`"));
            }
        };
        out.push((name, server));
    }
    Ok(out)
}

fn scalar_map<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<std::collections::BTreeMap<String, String>, D::Error> {
    let m = Option::<std::collections::BTreeMap<String, serde_json::Value>>::deserialize(d)?;
    m.unwrap_or_default()
        .into_iter()
        .map(|(k, v)| {
            let s = match v {
                serde_json::Value::String(s) => s,
                serde_json::Value::Bool(b) => b.to_string(),
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Null => String::new(),
                other => {
                    return Err(serde::de::Error::custom(format!(
                        "`{k}`: expected a scalar, got {other}"
                    )));
                }
            };
            Ok((k, s))
        })
        .collect()
}

/// `observability:` — OpenTelemetry export (seed 001 §5.1
/// `Observability.OpenTelemetry`). Unset values come from the standard
/// `OTEL_*` variables.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ObservabilitySection {
    /// `false`: nothing exported, whatever the variables say.
    pub enabled: Option<bool>,
    pub service_name: Option<String>,
    /// The share of traces kept, 0 to 1 (default 1).
    pub sample_ratio: Option<f64>,
    /// Prompts, answers and tool arguments as span events (default off).
    pub capture_content: Option<bool>,
    #[serde(deserialize_with = "scalar")]
    pub metrics_interval: Option<String>,
    pub otlp: OtlpSection,
}

/// `observability.otlp:` — where spans and metrics go.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OtlpSection {
    /// `http://localhost:4317` (gRPC) or `http://localhost:4318` (HTTP).
    pub endpoint: Option<String>,
    /// `grpc` or `http/protobuf` (default: by the port, 4318 is HTTP).
    pub protocol: Option<String>,
    #[serde(deserialize_with = "scalar_map")]
    pub headers: std::collections::BTreeMap<String, String>,
    #[serde(deserialize_with = "scalar")]
    pub timeout: Option<String>,
}

/// `agent:` — agent mode's defaults (seed 001 §5.1).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentSection {
    pub max_iterations: Option<u32>,
    pub timeout_seconds: Option<u64>,
    pub enable_human_in_the_loop: Option<bool>,
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    /// Only these agents are loaded (the planner and the coder always are).
    pub enabled_agents: Option<Vec<String>>,
    /// One more agents directory, relative to the project, searched last (wins).
    pub agents_directory: Option<std::path::PathBuf>,
    /// Custom nodes at one place in the graph run their agents at once.
    #[serde(default)]
    pub parallel_agent_execution: bool,
    /// Custom nodes in the coding graph.
    #[serde(default)]
    pub workflow: Vec<agent::CustomNode>,
    /// A model reviews each round's change after the guardrails.
    pub critic: Option<bool>,
    /// The planner's context is reranked by the model (`localize --rerank`).
    pub rerank_context: Option<bool>,
}

/// `guardrails:` — the rules every change an agent proposes is checked against
/// (and, with `onChange`, every `change` a driver asks for): the shipped G001 to
/// G004, organization files, then `rules` by id (the user's configuration, then
/// the project's, merge key by key).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardrailsSection {
    /// Off: no rules at all (default on).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Check `change` calls (CLI, MCP, HTTP) too, not only agent runs.
    #[serde(default)]
    pub on_change: bool,
    /// YAML files with a `rules:` map (an organization's shared rules), relative
    /// to the project; applied before `rules`.
    #[serde(default)]
    pub files: Vec<std::path::PathBuf>,
    /// Rules by id: a shipped id changes that rule, a new id adds one.
    #[serde(default)]
    pub rules: serde_json::Map<String, serde_json::Value>,
}

impl Default for GuardrailsSection {
    fn default() -> Self {
        GuardrailsSection {
            enabled: true,
            on_change: false,
            files: Vec::new(),
            rules: serde_json::Map::new(),
        }
    }
}

fn yes() -> bool {
    true
}

/// `serve:` — `ironbees serve` (flags win), and where runs live for every
/// command: with `database_url`, runs, checkpoints, events and the work queue
/// are in PostgreSQL, shared by replicas and by `ironbees runs`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeSection {
    /// `ADDR:PORT` to listen on (default `127.0.0.1:8642`).
    pub bind: Option<String>,
    /// A file holding the bearer token (created, mode 0600, with a random one if
    /// missing). Default: `.ironbees/serve-token`.
    pub token_file: Option<std::path::PathBuf>,
    /// The bearer token itself (usually `${IRONBEES_TOKEN}`); wins over `token_file`
    /// (a `--token-file` flag wins over it).
    pub token: Option<String>,
    /// Origins allowed to call the API from a browser (CORS); none by default.
    pub cors: Vec<String>,
    /// `postgres://...`: the shared store of replicas.
    pub database_url: Option<String>,
    /// Seconds a replica's claim on a run or a job lasts without renewal: how
    /// long a killed replica's runs wait before another takes them (default 15).
    pub lease_seconds: Option<f64>,
    /// Runs one server executes at once (default 2).
    pub workers: Option<usize>,
    /// Largest request body, in bytes (default 1 MiB).
    pub max_body_bytes: Option<usize>,
}

/// `validate:` — how agent runs (and `ironbees build`/`test`) check a change:
/// the project's own commands, which tests, and the baseline.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ValidateSection {
    /// The build command (a line run as the shell would split it, or a list);
    /// `none`: the project has no build step.
    pub build: Option<CommandSpec>,
    /// The test command; it selects its own tests.
    pub test: Option<CommandSpec>,
    /// `targeted`, `full` or `both` (the default).
    pub tests: Option<protocol::TestScope>,
    /// Build and test the project before the first change (default true).
    pub baseline: Option<bool>,
}

/// A command as configured: one line, or its words.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CommandSpec {
    Line(String),
    Argv(Vec<String>),
}

impl CommandSpec {
    /// The command's words; an empty list for `none`. A line with shell syntax
    /// (pipes, `&&`, redirections, variables) runs under `sh -c`.
    pub fn argv(&self) -> Result<Vec<String>, String> {
        match self {
            CommandSpec::Argv(words) => Ok(words.clone()),
            CommandSpec::Line(line) => command_words(line),
        }
    }
}

/// Splits a command line the way a shell would for plain commands (quotes,
/// backslashes); anything needing a shell goes to `sh -c` whole.
pub fn command_words(line: &str) -> Result<Vec<String>, String> {
    let line = line.trim();
    if line.is_empty() || line == "none" {
        return Ok(Vec::new());
    }
    if line.contains(['|', '&', ';', '<', '>', '$', '`', '(', ')', '*', '?']) {
        return Ok(vec!["sh".into(), "-c".into(), line.into()]);
    }
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => word.extend(chars.next()),
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                word.extend(chars.next());
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("unclosed quote in the command {line:?}"));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// The build and test commands a project's AGENTS.md states, in the words people
/// write them: `Test: `make test``, `Build command: `cargo build``, "run the
/// tests with `pytest -q`", "build with `make`". Only commands in backticks: a
/// guess from prose would run something nobody asked for.
pub fn stated_commands(agents_md: &str) -> (Option<String>, Option<String>) {
    let mut build = None;
    let mut test = None;
    for line in agents_md.lines() {
        let lower = line.to_ascii_lowercase();
        let Some(code) = backticked(line) else { continue };
        let labelled = |words: &[&str]| {
            let head = lower.trim_start_matches([' ', '-', '*', '#']).trim_start();
            words.iter().any(|w| {
                head.strip_prefix(w).is_some_and(|rest| {
                    let rest = rest.trim_start();
                    rest.starts_with(':')
                        || rest.starts_with("command:")
                        || rest.starts_with("commands:")
                })
            })
        };
        let said = |verbs: &[&str]| verbs.iter().any(|v| lower.contains(v));
        if test.is_none()
            && (labelled(&["test", "tests", "testing", "run tests", "run the tests"])
                || said(&[
                    "run the tests with",
                    "run tests with",
                    "tests with `",
                    "test with `",
                    "tests are run with",
                    "run the test suite with",
                ]))
        {
            test = Some(code);
        } else if build.is_none()
            && (labelled(&["build", "building"])
                || said(&[
                    "build with `",
                    "build it with",
                    "built with `",
                    "build the project with",
                ]))
        {
            build = Some(code);
        }
    }
    (build, test)
}

fn backticked(line: &str) -> Option<String> {
    let start = line.find('`')? + 1;
    let end = start + line[start..].find('`')?;
    let code = line[start..end].trim();
    (!code.is_empty()).then(|| code.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_as_a_shell_would() {
        let cases: &[(&str, Result<&[&str], &str>)] = &[
            ("cargo test --workspace", Ok(&["cargo", "test", "--workspace"])),
            (
                "python -m pytest 'tests/a b.py' -k \"x or y\"",
                Ok(&["python", "-m", "pytest", "tests/a b.py", "-k", "x or y"]),
            ),
            ("make test && make lint", Ok(&["sh", "-c", "make test && make lint"])),
            ("none", Ok(&[])),
            ("pytest 'oops", Err("unclosed quote in the command \"pytest 'oops\"")),
        ];
        for (line, want) in cases {
            let got = command_words(line);
            match (want, &got) {
                (Ok(w), Ok(g)) => assert_eq!(g, w, "{line}"),
                (Err(e), Err(g)) => assert_eq!(g, e, "{line}"),
                _ => panic!("{line}: {got:?}"),
            }
        }
    }

    #[test]
    fn agents_md_states_commands_in_backticks_only() {
        // (AGENTS.md, (build, test))
        type Stated<'a> = (Option<&'a str>, Option<&'a str>);
        let cases: &[(&str, Stated<'_>)] = &[
            (
                "## Testing\n- Test: `make test`\n- Build: `make`\n",
                (Some("make"), Some("make test")),
            ),
            ("Run the tests with `pytest -q tests/`.\n", (None, Some("pytest -q tests/"))),
            ("Build command: `cargo build --release`\n", (Some("cargo build --release"), None)),
            ("We test a lot. Run everything before pushing.\n", (None, None)),
            ("Use `black` for formatting.\n", (None, None)),
        ];
        for (text, (build, test)) in cases {
            let got = stated_commands(text);
            assert_eq!((got.0.as_deref(), got.1.as_deref()), (*build, *test), "{text}");
        }
    }

    #[test]
    fn config_scalars_from_yaml() {
        let v: serde_json::Value =
            yaml_serde::from_str("timeout: 300\nnetwork: off\nmemory: 2G\nprocesses: 64\n")
                .unwrap();
        let s: SandboxSection = serde_json::from_value(v).unwrap();
        assert_eq!(s.timeout.as_deref(), Some("300"));
        assert_eq!(
            engine::parse_duration(s.timeout.as_deref().unwrap()).unwrap(),
            std::time::Duration::from_secs(300)
        );
        assert_eq!(s.network.as_deref(), Some("off"));
        assert_eq!(s.memory.as_deref(), Some("2G"));
        assert_eq!(s.processes, Some(64));
        let v: serde_json::Value = yaml_serde::from_str("network: true\n").unwrap();
        let s: SandboxSection = serde_json::from_value(v).unwrap();
        assert_eq!(s.network.as_deref(), Some("on"));
        let v: serde_json::Value = yaml_serde::from_str("memroy: 2G\n").unwrap();
        assert!(serde_json::from_value::<SandboxSection>(v).is_err(), "typos are errors");
    }
}
