//! [`Host`]: the configuration and the environment, mapped to what the engine,
//! the model client and the agents take.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use engine::{SandboxSetup, Session, SessionOptions, Trust};
use protocol::{Approver, RunSettings, SandboxOptions};

use crate::{
    config::{Config, IndexSection, llm_settings, user_config_dir},
    error::{Error, Result},
    sections::{
        AgentSection, EditSection, GuardrailsSection, ReadOnlySetting, SandboxSection,
        ServeSection, ValidateSection, mcp_servers, stated_commands,
    },
};

/// `%XX` escapes decoded (OTLP header values are URL-encoded).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = bytes.get(i + 1..i + 3)
            && let Some(b) =
                std::str::from_utf8(hex).ok().and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The tools a driver offers: the registry (built-in tools, then the started
/// servers' tools) and the servers behind it. The servers end when this is
/// dropped (or [`Tools::shutdown`]); registries cloned from it then answer
/// their tools' calls with `TOOL_EXECUTION_FAILED`.
pub struct Tools {
    pub registry: engine::Registry,
    pub servers: mcp_client::ServerSet,
}

impl Tools {
    /// The built-in tools alone (no server configured or wanted).
    pub fn builtin() -> Tools {
        Tools { registry: engine::Registry::new(), servers: mcp_client::ServerSet::default() }
    }

    pub fn shutdown(&self) {
        self.servers.shutdown();
    }
}

/// The bearer token `ironbees serve` requires, and where it came from.
#[derive(Clone)]
pub struct ServeToken {
    pub value: String,
    /// The user chose it (`serve.token`, or a token file they named), rather than
    /// taking the one generated for them under `.ironbees/`: only such a token
    /// may guard a server listening beyond this machine.
    pub configured: bool,
    /// The file it is kept in, if any.
    pub file: Option<PathBuf>,
    /// Generated now, at the server's first start.
    pub created: bool,
}

impl std::fmt::Debug for ServeToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeToken")
            .field("value", &"***")
            .field("configured", &self.configured)
            .field("file", &self.file)
            .finish()
    }
}

/// The process environment as the host reads it: captured once by the driver,
/// passed in (tests make one up).
#[derive(Debug, Clone, Default)]
pub struct Environment {
    pub vars: Vec<(String, String)>,
    /// This binary: the sandbox re-executes it as its helper.
    pub current_exe: Option<PathBuf>,
    pub temp_dir: PathBuf,
}

impl Environment {
    /// The environment of this process.
    pub fn capture() -> Environment {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        Environment {
            vars,
            current_exe: std::env::current_exe().ok(),
            temp_dir: std::env::temp_dir(),
        }
    }

    /// A variable's value, when set and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.iter().find(|(k, v)| k == name && !v.is_empty()).map(|(_, v)| v.as_str())
    }
}

/// Something a driver should tell the user: a setting that is ignored, a
/// recovery that happened, a model chosen for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    Warning(String),
    Note(String),
}

/// A driver's flags for a run, over the `agent:` section.
#[derive(Debug, Clone, Default)]
pub struct RunOverrides {
    /// Approve the plan without asking (`--yes`).
    pub yes: bool,
    /// Stop for a review of the validated diff before applying.
    pub review: bool,
    pub max_iterations: Option<u32>,
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    pub timeout: Option<Duration>,
    /// A model reviews each round's change (`--critic`).
    pub critic: bool,
    /// Plan and change even when the request reads as a question (`--plan`).
    pub plan: bool,
}

/// The guardrails as configured.
#[derive(Debug, Clone)]
pub struct Guardrails {
    /// `None`: turned off (`guardrails.enabled: false`).
    pub rules: Option<guard::RuleSet>,
    /// Check `change` calls too (`guardrails.onChange`).
    pub on_change: bool,
}

/// One project's configuration and environment.
#[derive(Debug, Clone)]
pub struct Host {
    root: PathBuf,
    config: Config,
    env: Environment,
}

impl Host {
    /// Loads the configuration layers of the project at `root`.
    pub fn load(root: &Path, env: Environment) -> Result<Host> {
        let user = user_config_dir(&env.vars);
        let config = Config::load(root, user.as_deref(), &env.vars)?;
        Ok(Host { root: root.to_owned(), config, env })
    }

    /// A host over a given configuration (a demo project, tests).
    pub fn with_config(root: &Path, config: Config, env: Environment) -> Host {
        Host { root: root.to_owned(), config, env }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn env(&self) -> &Environment {
        &self.env
    }

    /// The user's ironbees directory (`$XDG_CONFIG_HOME/ironbees`, else
    /// `~/.config/ironbees`).
    pub fn user_dir(&self) -> Option<PathBuf> {
        user_config_dir(&self.env.vars)
    }

    /// `index:` with a command's own excludes and size limit on top.
    pub fn index_config(
        &self,
        extra_exclude: &[String],
        max_file_size: Option<u64>,
    ) -> Result<code_index::IndexConfig> {
        let section: IndexSection = self.config.section("index")?;
        let mut cfg = code_index::IndexConfig {
            exclude: section.exclude,
            include_minified: section.include_minified,
            ..code_index::IndexConfig::default()
        };
        cfg.exclude.extend(extra_exclude.iter().cloned());
        if let Some(n) = max_file_size.or(section.max_file_size) {
            cfg.max_file_size = n;
        }
        Ok(cfg)
    }

    /// `edit:` as the edit engine's limits.
    pub fn edit_options(&self) -> Result<edit::EngineOptions> {
        let section: EditSection = self.config.section("edit")?;
        let d = edit::EngineOptions::default();
        Ok(edit::EngineOptions {
            max_file_size: section.max_file_size.unwrap_or(d.max_file_size),
            history_limit: section.history_limit.unwrap_or(d.history_limit),
            history_max_bytes: section.history_max_bytes.unwrap_or(d.history_max_bytes),
            lock_timeout: section.lock_timeout_secs.map_or(d.lock_timeout, Duration::from_secs),
        })
    }

    /// `sandbox:` as request options (relative paths from the root).
    pub fn sandbox_options(&self) -> Result<SandboxOptions> {
        let sec: SandboxSection = self.config.section("sandbox")?;
        let path = |p: &PathBuf| p.display().to_string();
        Ok(SandboxOptions {
            timeout: sec.timeout,
            memory: sec.memory,
            cpu: sec.cpu,
            processes: sec.processes,
            network: sec.network,
            writable: sec.writable.iter().map(path).collect(),
            hide: sec.hide.iter().map(path).collect(),
            throwaway: false,
            workspace: None,
            backend: sec.backend,
            image: sec.image,
            strict: sec.strict,
            max_output: sec.max_output,
        })
    }

    /// How project commands run: the configured policy, this binary as the
    /// helper, and the environment minus secrets.
    pub fn sandbox_setup(&self) -> Result<SandboxSetup> {
        let options = self.sandbox_options()?;
        let policy = engine::apply_sandbox_options(
            &sandbox::Policy::default(),
            &options,
            &self.root,
            Trust::User,
        )?;
        let helper = self.env.current_exe.clone().ok_or_else(|| {
            crate::Error::Config("cannot locate the ironbees binary (the sandbox's helper)".into())
        })?;
        let (env, env_removed) = sandbox::filter_env(self.env.vars.iter().cloned());
        Ok(SandboxSetup {
            config: sandbox::SandboxConfig {
                helper,
                home: self.env.get("HOME").map(PathBuf::from),
                temp_dir: self.env.temp_dir.clone(),
                search_path: self.env.get("PATH").map(Into::into),
                probe_container: policy.backend == sandbox::BackendChoice::Container,
                probe_bubblewrap: policy.backend == sandbox::BackendChoice::Bubblewrap,
                probe_cache: self.probe_cache_path(),
            },
            policy,
            env,
            env_removed,
        })
    }

    /// Where the sandbox caches what it probed of this machine: the user's
    /// runtime directory, else their cache directory.
    fn probe_cache_path(&self) -> Option<PathBuf> {
        if let Some(d) = self.env.get("XDG_RUNTIME_DIR") {
            return Some(PathBuf::from(d).join("ironbees/sandbox-probe.json"));
        }
        let cache = self
            .env
            .get("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| self.env.get("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(cache.join("ironbees/sandbox-probe.json"))
    }

    /// The session's options. Invalid sandbox settings are a warning (the rest
    /// works; commands that run something say so when they need the sandbox).
    pub fn session_options(
        &self,
        watch: bool,
        rebuild_index: bool,
    ) -> Result<(SessionOptions, Vec<Notice>)> {
        let mut notices = Vec::new();
        let sandbox = match self.sandbox_setup() {
            Ok(s) => Some(s),
            Err(e) => {
                notices.push(Notice::Warning(format!(
                    "sandbox settings are invalid, builds and tests cannot run: {e}"
                )));
                None
            }
        };
        let options = SessionOptions {
            index: self.index_config(&[], None)?,
            edit: self.edit_options()?,
            watch,
            sandbox,
            llm: self.llm_settings().ok(),
            rebuild_index,
            commands: self.project_commands()?,
            guardrails: {
                let g = self.guardrails()?;
                if g.on_change { g.rules.clone() } else { None }
            },
            guard_rules: self.guardrails()?.rules,
        };
        Ok((options, notices))
    }

    /// Opens the project's session; notices say what the caller should show
    /// (invalid sandbox settings, an interrupted edit rolled back).
    pub fn open_session(
        &self,
        watch: bool,
        rebuild_index: bool,
    ) -> Result<(Arc<Session>, Vec<Notice>)> {
        let (options, mut notices) = self.session_options(watch, rebuild_index)?;
        let session = Session::open(&self.root, options)?;
        for id in &session.recovery().rolled_back {
            notices.push(Notice::Warning(format!(
                "an interrupted edit ({id}) was rolled back; its files are as before it"
            )));
        }
        Ok((Arc::new(session), notices))
    }

    /// The project's own build and test commands: `validate.build` and
    /// `validate.test`, else what the root `AGENTS.md` states.
    pub fn project_commands(&self) -> Result<engine::ProjectCommands> {
        let sec: ValidateSection = self.config.section("validate")?;
        let argv = |spec: Option<&crate::CommandSpec>, key: &str| {
            spec.map(|c| {
                c.argv().map_err(|e| Error::Config(format!("config `validate.{key}`: {e}")))
            })
            .transpose()
        };
        let mut commands = engine::ProjectCommands {
            build: argv(sec.build.as_ref(), "build")?,
            test: argv(sec.test.as_ref(), "test")?,
            source: None,
        };
        if commands.build.is_some() || commands.test.is_some() {
            commands.source = Some("the `validate:` configuration".into());
            return Ok(commands);
        }
        if let Ok(text) = std::fs::read_to_string(self.root.join("AGENTS.md")) {
            let (build, test) = stated_commands(&text);
            let words = |c: Option<String>| c.and_then(|c| crate::command_words(&c).ok());
            commands.build = words(build).filter(|w| !w.is_empty());
            commands.test = words(test).filter(|w| !w.is_empty());
            if commands.build.is_some() || commands.test.is_some() {
                commands.source = Some("AGENTS.md".into());
            }
        }
        Ok(commands)
    }

    /// The servers configured under `mcp.servers` (those not `enabled: false`),
    /// ready to start: paths resolved from the project root, the child's
    /// environment (this process's, secrets removed, plus the server's `env`),
    /// the values to mask.
    pub fn mcp_server_specs(&self) -> Result<Vec<mcp_client::ServerSpec>> {
        let servers = mcp_servers(self.config.value.get("mcp")).map_err(Error::Config)?;
        let builtin = engine::Registry::new();
        let builtin = builtin.names();
        let mut specs = Vec::new();
        for (name, s) in servers {
            let bad = |m: String| Error::Config(format!("config `mcp.servers.{name}`: {m}"));
            mcp_client::check_name(&name, &builtin).map_err(bad)?;
            if s.enabled == Some(false) {
                continue;
            }
            let resolve = |p: &Path| if p.is_absolute() { p.to_owned() } else { self.root.join(p) };
            let mut secrets: Vec<String> = s.env.values().cloned().collect();
            secrets.extend(s.headers.values().cloned());
            let transport = match (&s.command, &s.url) {
                (Some(command), None) => {
                    let command = if command.contains('/') {
                        resolve(Path::new(command))
                    } else {
                        PathBuf::from(command)
                    };
                    let (mut env, _removed) = sandbox::filter_env(self.env.vars.iter().cloned());
                    env.retain(|(k, _)| !s.env.contains_key(k));
                    env.extend(s.env.iter().map(|(k, v)| (k.clone(), v.clone())));
                    let cwd = s.cwd.as_deref().map_or_else(|| self.root.clone(), resolve);
                    mcp_client::Transport::Stdio { command, args: s.args.clone(), env, cwd }
                }
                (None, Some(url)) => mcp_client::Transport::Http {
                    url: url.clone(),
                    headers: s.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                },
                (Some(_), Some(_)) => {
                    return Err(bad("give `command` (stdio) or `url` (HTTP), not both".into()));
                }
                (None, None) => {
                    return Err(bad(
                        "give `command` (a stdio server) or `url` (streamable HTTP)".into()
                    ));
                }
            };
            let mut spec = mcp_client::ServerSpec::new(name.clone(), transport);
            let duration = |v: &Option<String>, key: &str| {
                v.as_deref()
                    .map(|t| {
                        engine::parse_duration(t).map_err(|e| {
                            Error::Config(format!("config `mcp.servers.{name}.{key}`: {e}"))
                        })
                    })
                    .transpose()
            };
            if let Some(d) = duration(&s.startup_timeout, "startup_timeout")? {
                spec.startup_timeout = d;
            }
            if let Some(d) = duration(&s.tool_timeout, "tool_timeout")? {
                spec.tool_timeout = d;
            }
            if let Some(m) = &s.max_result {
                spec.max_result_bytes =
                    engine::parse_size(m).map_err(|e| bad(format!("max_result: {e}")))? as usize;
            }
            spec.enabled_tools = s.enabled_tools.clone();
            spec.disabled_tools = s.disabled_tools.clone();
            spec.required = s.required;
            spec.read_only = match &s.read_only {
                ReadOnlySetting::All(true) => mcp_client::ReadOnly::All,
                ReadOnlySetting::All(false) => mcp_client::ReadOnly::None,
                ReadOnlySetting::Tools(t) => mcp_client::ReadOnly::Tools(t.clone()),
            };
            spec.secrets = secrets;
            specs.push(spec);
        }
        Ok(specs)
    }

    /// The registry with the configured servers' tools: every server started
    /// (in parallel, each within its startup timeout). An optional server that
    /// does not start is left out with a warning (and asking for its tools
    /// says why); a required one is an error (`TOOL_EXECUTION_FAILED`). No
    /// server configured: the built-in registry, and nothing started.
    pub fn tools(&self) -> Result<(Tools, Vec<Notice>)> {
        self.tools_where(|_| true)
    }

    /// [`tools`](Self::tools) for calling `name` alone: only the server it
    /// belongs to (`server.tool`) is started; none for a built-in tool.
    pub fn tools_for(&self, name: &str) -> Result<(Tools, Vec<Notice>)> {
        let server = name.split_once('.').map(|(s, _)| s.to_owned());
        self.tools_where(|s| server.as_deref() == Some(s))
    }

    fn tools_where(&self, keep: impl Fn(&str) -> bool) -> Result<(Tools, Vec<Notice>)> {
        let mut specs = self.mcp_server_specs()?;
        specs.retain(|s| keep(&s.name));
        if specs.is_empty() {
            return Ok((Tools::builtin(), Vec::new()));
        }
        let (servers, missing) = mcp_client::ServerSet::start(specs)?;
        let mut registry = engine::Registry::new();
        let mut notices = Vec::new();
        for m in &missing {
            registry.note_unavailable(&m.server, &m.reason);
            notices.push(Notice::Warning(format!(
                "MCP server `{}` is left out: {}",
                m.server, m.reason
            )));
        }
        for skipped in servers.register(&mut registry) {
            notices.push(Notice::Warning(format!("an MCP tool is left out: {skipped}")));
        }
        Ok((Tools { registry, servers }, notices))
    }

    /// The OpenTelemetry settings: `observability:` over the standard
    /// variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
    /// `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`,
    /// `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`,
    /// `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER_ARG`, `OTEL_METRIC_EXPORT_INTERVAL`,
    /// `OTEL_SDK_DISABLED`, `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`).
    /// No endpoint: nothing is exported.
    pub fn telemetry_settings(&self) -> Result<telemetry::Settings> {
        let sec: crate::sections::ObservabilitySection = self.config.section("observability")?;
        let env = |k: &str| self.env.get(k).map(str::to_owned);
        let truthy =
            |v: Option<String>| v.is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
        let bad = |k: &str, e: String| Error::Config(format!("`{k}`: {e}"));
        let mut s = telemetry::Settings {
            service_name: sec
                .service_name
                .clone()
                .or_else(|| env("OTEL_SERVICE_NAME"))
                .unwrap_or_else(|| "ironbees".into()),
            service_version: env!("CARGO_PKG_VERSION").into(),
            ..telemetry::Settings::default()
        };
        s.capture_content = sec
            .capture_content
            .unwrap_or_else(|| truthy(env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")));
        if let Some(r) = sec.sample_ratio {
            s.sample_ratio = r;
        } else if let Some(r) = env("OTEL_TRACES_SAMPLER_ARG") {
            s.sample_ratio = r
                .parse()
                .map_err(|_| bad("OTEL_TRACES_SAMPLER_ARG", format!("not a ratio: {r}")))?;
        }
        if let Some(i) = &sec.metrics_interval {
            s.metrics_interval = engine::parse_duration(i)
                .map_err(|e| bad("observability.metrics_interval", e.to_string()))?;
        } else if let Some(ms) = env("OTEL_METRIC_EXPORT_INTERVAL").and_then(|v| v.parse().ok()) {
            s.metrics_interval = Duration::from_millis(ms);
        }
        let disabled = sec.enabled == Some(false)
            || (sec.enabled.is_none() && truthy(env("OTEL_SDK_DISABLED")));
        let base = sec.otlp.endpoint.clone().or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"));
        let traces =
            env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").filter(|_| sec.otlp.endpoint.is_none());
        let metrics =
            env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT").filter(|_| sec.otlp.endpoint.is_none());
        let Some(any) = base.clone().or_else(|| traces.clone()).or_else(|| metrics.clone()) else {
            return Ok(s);
        };
        if disabled {
            return Ok(s);
        }
        let protocol =
            match sec.otlp.protocol.clone().or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL")) {
                Some(p) if p == "grpc" => telemetry::Protocol::Grpc,
                Some(p) if p == "http/protobuf" || p == "http" => telemetry::Protocol::HttpProtobuf,
                Some(p) => {
                    return Err(bad(
                        "observability.otlp.protocol",
                        format!("`{p}` is not `grpc` or `http/protobuf`"),
                    ));
                }
                None if any.contains(":4318") || any.contains("/v1/") => {
                    telemetry::Protocol::HttpProtobuf
                }
                None => telemetry::Protocol::Grpc,
            };
        // HTTP: a base endpoint gets each signal's path; a signal's own is whole.
        let signal = |own: Option<String>, path: &str| match (&protocol, own, &base) {
            (_, Some(own), _) => own,
            (telemetry::Protocol::HttpProtobuf, None, Some(b)) => {
                format!("{}/v1/{path}", b.trim_end_matches('/'))
            }
            (_, None, Some(b)) => b.clone(),
            (_, None, None) => any.clone(),
        };
        let mut headers: Vec<(String, String)> = Vec::new();
        if let Some(h) = env("OTEL_EXPORTER_OTLP_HEADERS") {
            for pair in h.split(',').filter(|p| !p.trim().is_empty()) {
                let (k, v) = pair.split_once('=').ok_or_else(|| {
                    bad("OTEL_EXPORTER_OTLP_HEADERS", format!("`{pair}` is not key=value"))
                })?;
                headers.push((k.trim().to_owned(), percent_decode(v.trim())));
            }
        }
        for (k, v) in &sec.otlp.headers {
            headers.retain(|(h, _)| !h.eq_ignore_ascii_case(k));
            headers.push((k.clone(), v.clone()));
        }
        let timeout = match (&sec.otlp.timeout, env("OTEL_EXPORTER_OTLP_TIMEOUT")) {
            (Some(t), _) => engine::parse_duration(t)
                .map_err(|e| bad("observability.otlp.timeout", e.to_string()))?,
            (None, Some(ms)) => Duration::from_millis(ms.parse().unwrap_or(10_000)),
            (None, None) => Duration::from_secs(10),
        };
        s.otlp = Some(telemetry::Otlp {
            traces_endpoint: signal(traces, "traces"),
            metrics_endpoint: signal(metrics, "metrics"),
            protocol,
            headers,
            timeout,
        });
        Ok(s)
    }

    /// The `llm:` section completed by the standard variables.
    pub fn llm_settings(&self) -> Result<llm::Settings> {
        llm_settings(&self.config, &self.env.vars)
    }

    /// A model client for commands that chat. A provider configured without a
    /// model (`OPENAI_BASE_URL` alone) gets the one its server offers, and a note
    /// says so; `model` (a `--model` flag) fills it in without asking.
    pub fn chat_client(
        &self,
        rt: &tokio::runtime::Handle,
        model: Option<&str>,
        cancel: &stdx::CancellationToken,
    ) -> Result<(llm::Llm, Vec<Notice>)> {
        let mut settings = self.llm_settings()?;
        if let Some(m) = model {
            for p in settings.providers.values_mut() {
                p.model.get_or_insert_with(|| m.to_owned());
            }
        }
        let found = rt.block_on(llm::discover_models(&mut settings, cancel))?;
        let notices = found
            .into_iter()
            .map(|d| {
                Notice::Note(format!(
                    "using model {} for provider {}: the only one {} serves (set OPENAI_MODEL \
                     or llm.providers.{}.model to choose)",
                    d.model, d.provider, d.base_url, d.provider
                ))
            })
            .collect();
        Ok((llm::Llm::new(&settings)?, notices))
    }

    /// Where agents are found: the built-ins, the user's directory, the project's
    /// `agents/` and `.ironbees/agents/`.
    pub fn agent_dirs(&self) -> Result<agent::AgentDirs> {
        let mut dirs =
            agent::AgentDirs::conventional(self.user_dir().map(|d| d.join("agents")), &self.root);
        let sec: AgentSection = self.config.section("agent")?;
        if let Some(extra) = sec.agents_directory {
            dirs.project.push(self.root.join(extra));
        }
        Ok(dirs)
    }

    /// The agents, as `agent.enabledAgents` narrows them.
    pub fn agents(&self) -> Result<agent::AgentSet> {
        let set = agent::AgentSet::load(&self.agent_dirs()?)?;
        let sec: AgentSection = self.config.section("agent")?;
        match sec.enabled_agents {
            Some(names) => Ok(set.only(&names)?),
            None => Ok(set),
        }
    }

    /// The project's custom nodes in the coding graph (`agent.workflow`).
    pub fn graph_spec(&self) -> Result<agent::GraphSpec> {
        let sec: AgentSection = self.config.section("agent")?;
        Ok(agent::GraphSpec {
            nodes: sec.workflow,
            parallel: sec.parallel_agent_execution,
            guardrails: self.guardrails()?.rules,
        })
    }

    /// The guardrails (`guardrails:`): the shipped rules, the organization's
    /// files, then the configuration's `rules` by id; `None` rules when turned
    /// off. A rule that does not compile is a configuration error naming it.
    pub fn guardrails(&self) -> Result<Guardrails> {
        let sec: GuardrailsSection = self.config.section("guardrails")?;
        if !sec.enabled {
            return Ok(Guardrails { rules: None, on_change: false });
        }
        let mut rules = serde_json::Value::Object(serde_json::Map::new());
        for file in &sec.files {
            let path = self.root.join(file);
            let text = std::fs::read_to_string(&path)
                .map_err(|source| Error::Io { path: path.clone(), source })?;
            let layer: serde_json::Value = yaml_serde::from_str(&text)
                .map_err(|e| Error::Config(format!("guardrails file {}: {e}", path.display())))?;
            match layer.get("rules") {
                Some(r @ serde_json::Value::Object(_)) => {
                    crate::config::merge(&mut rules, r.clone())
                }
                _ => {
                    return Err(Error::Config(format!(
                        "guardrails file {}: expected a `rules:` map by rule id",
                        path.display()
                    )));
                }
            }
        }
        crate::config::merge(&mut rules, serde_json::Value::Object(sec.rules));
        let set =
            guard::RuleSet::from_config(&serde_json::json!({ "rules": rules })).map_err(|e| {
                Error::Config(format!("config `guardrails.rules.{}`: {}", e.rule, e.message))
            })?;
        Ok(Guardrails { rules: Some(set), on_change: sec.on_change })
    }

    /// A run's settings: the driver's flags over the `agent:` section over the
    /// seed's defaults.
    pub fn run_settings(&self, o: &RunOverrides) -> Result<RunSettings> {
        let sec: AgentSection = self.config.section("agent")?;
        let validate: ValidateSection = self.config.section("validate")?;
        let d = RunSettings::default();
        let auto_approved_by = if o.yes {
            Some(Approver::Flag)
        } else if sec.enable_human_in_the_loop == Some(false) {
            Some(Approver::Configuration)
        } else {
            None
        };
        let timeout_seconds = match o.timeout {
            Some(t) => t.as_secs().max(1),
            None => sec.timeout_seconds.unwrap_or(d.timeout_seconds),
        };
        Ok(RunSettings {
            auto_approve: auto_approved_by.is_some(),
            auto_approved_by,
            review: o.review,
            max_iterations: o.max_iterations.or(sec.max_iterations).unwrap_or(d.max_iterations),
            budget_usd: o.budget_usd.or(sec.budget_usd),
            budget_tokens: o.budget_tokens.or(sec.budget_tokens),
            timeout_seconds,
            tests: validate.tests.unwrap_or(d.tests),
            baseline: validate.baseline.unwrap_or(d.baseline),
            critic: o.critic || sec.critic.unwrap_or(d.critic),
            always_plan: o.plan,
            rerank_context: sec.rerank_context.unwrap_or(d.rerank_context),
        })
    }

    /// `pipeline:` — the commit pipeline's configuration (seed 003 §10.1).
    pub fn pipeline_config(&self) -> Result<protocol::PipelineConfig> {
        self.config.section("pipeline")
    }

    /// `serve:`.
    pub fn serve_section(&self) -> Result<ServeSection> {
        self.config.section("serve")
    }

    /// Where agent runs live: PostgreSQL when `serve.database_url` is set (shared
    /// by replicas and by every `ironbees runs` command pointed at it), else
    /// SQLite in `runs_dir` (`.ironbees/runs/`).
    pub fn run_store(&self, runs_dir: &Path) -> Result<Arc<dyn workflow::CheckpointStore>> {
        let sec = self.serve_section()?;
        let lease = match sec.lease_seconds {
            Some(s) if !(s.is_finite() && s > 0.0) => {
                return Err(Error::Config(format!(
                    "config `serve.lease_seconds`: {s} is not a positive number of seconds"
                )));
            }
            Some(s) => Duration::from_secs_f64(s),
            None => workflow::DEFAULT_LEASE,
        };
        Ok(match sec.database_url.as_deref().filter(|u| !u.trim().is_empty()) {
            Some(url) => {
                let options = workflow_pg::PgOptions { lease, ..workflow_pg::PgOptions::default() };
                Arc::new(workflow_pg::PgStore::connect(url, options)?)
            }
            None => Arc::new(workflow::SqliteStore::open(runs_dir)?.with_lease(lease)),
        })
    }

    /// The agent orchestrator over `session`'s project, its runs in
    /// [`run_store`](Self::run_store), its graph the configuration's
    /// ([`graph_spec`](Self::graph_spec)), its agents' tools from `registry`
    /// ([`tools`](Self::tools)). Without a model it lists, shows and cancels runs.
    pub fn orchestrator(
        &self,
        session: Arc<Session>,
        llm: Option<Arc<llm::Llm>>,
        agents: agent::AgentSet,
        registry: engine::Registry,
        rt: tokio::runtime::Handle,
    ) -> Result<agent::Orchestrator> {
        let spec = self.graph_spec()?;
        let store = self.run_store(&session.layout().runs_dir())?;
        Ok(agent::Orchestrator::open_with_store(session, llm, agents, registry, rt, &spec, store)?)
    }

    /// The bearer token of `ironbees serve`: the token file `file` names (a
    /// flag: flags win over the configuration), else `serve.token`, else the
    /// file `serve.token_file` names (relative to the project root), else
    /// `.ironbees/serve-token`; a token file is created with a random token,
    /// readable by the owner only, when it does not exist.
    pub fn serve_token(&self, file: Option<&Path>) -> Result<ServeToken> {
        let sec = self.serve_section()?;
        if let Some(t) =
            sec.token.as_deref().map(str::trim).filter(|t| !t.is_empty() && file.is_none())
        {
            return Ok(ServeToken {
                value: t.to_owned(),
                configured: true,
                file: None,
                created: false,
            });
        }
        let (path, configured) = match file.map(Path::to_owned).or(sec.token_file) {
            Some(p) => (self.root.join(p), true),
            None => (self.root.join(code_index::STATE_DIR).join("serve-token"), false),
        };
        let io = |source| Error::Io { path: path.clone(), source };
        match std::fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => {
                return Ok(ServeToken {
                    value: text.trim().to_owned(),
                    configured,
                    file: Some(path),
                    created: false,
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        let value = random_token().map_err(io)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        write_private(&path, &value).map_err(io)?;
        Ok(ServeToken { value, configured, file: Some(path), created: true })
    }

    /// The runtime model calls wait on: a small multi-threaded one, so that a
    /// blocking node (any thread outside it) can wait on it with
    /// `Handle::block_on` and a server can share it.
    pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
    }
}

/// 32 random bytes from the kernel, as hex.
fn random_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes `text` to a new file only its owner may read (replacing an empty one).
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::{io::Write, os::unix::fs::OpenOptionsExt};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // An existing (empty) file keeps its mode: make it private too.
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    writeln!(f, "{text}")?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_serve_token_is_made_once_private_and_a_configured_one_wins() {
        let (dir, h) = host("", &[]);
        let t = h.serve_token(None).unwrap();
        assert!(t.created && !t.configured && t.value.len() == 64, "{t:?}");
        let file = dir.path().join(".ironbees/serve-token");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        let again = h.serve_token(None).unwrap();
        assert_eq!((again.value, again.created), (t.value, false));

        let (_dir, h) = host("serve:\n  token: ${MY_TOKEN}\n", &[("MY_TOKEN", "s3cret-token")]);
        let t = h.serve_token(None).unwrap();
        assert_eq!((t.value.as_str(), t.configured), ("s3cret-token", true));
        assert!(!format!("{t:?}").contains("s3cret"));

        // A token file given as a flag wins over the configuration.
        let (dir, h) = host("serve:\n  token: ${MY_TOKEN}\n", &[("MY_TOKEN", "s3cret-token")]);
        std::fs::write(dir.path().join("mine"), "flag-token\n").unwrap();
        let t = h.serve_token(Some(Path::new("mine"))).unwrap();
        assert_eq!((t.value.as_str(), t.configured, t.created), ("flag-token", true, false));
        assert_eq!(t.file, Some(dir.path().join("mine")));
    }

    fn host(config: &str, vars: &[(&str, &str)]) -> (tempfile::TempDir, Host) {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".ironbees");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(state.join("config.yaml"), config).unwrap();
        let env = Environment {
            vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            current_exe: Some("/bin/ironbees".into()),
            temp_dir: "/tmp".into(),
        };
        let h = Host::load(dir.path(), env).unwrap();
        (dir, h)
    }

    #[test]
    fn run_settings_are_flags_over_the_agent_section_over_the_defaults() {
        let section =
            "agent:\n  maxIterations: 7\n  enableHumanInTheLoop: false\n  budgetUsd: 2.5\n";
        // (auto-approve, by whom, max iterations, USD budget, timeout seconds)
        type Want = (bool, Option<Approver>, u32, Option<f64>, u64);
        let cases: Vec<(&str, RunOverrides, Want)> = vec![
            ("", RunOverrides::default(), (false, None, 5, None, 300)),
            (
                section,
                RunOverrides::default(),
                (true, Some(Approver::Configuration), 7, Some(2.5), 300),
            ),
            (
                section,
                RunOverrides {
                    yes: true,
                    max_iterations: Some(2),
                    budget_usd: Some(0.1),
                    timeout: Some(Duration::from_millis(10)),
                    ..RunOverrides::default()
                },
                (true, Some(Approver::Flag), 2, Some(0.1), 1),
            ),
        ];
        for (config, o, want) in cases {
            let (_dir, h) = host(config, &[]);
            let s = h.run_settings(&o).unwrap();
            let got = (
                s.auto_approve,
                s.auto_approved_by,
                s.max_iterations,
                s.budget_usd,
                s.timeout_seconds,
            );
            assert_eq!(got, want, "{config:?} {o:?}");
        }
        // The planner's context is reranked only when the section asks for it.
        let rerank = |config: &str| host(config, &[]).1.run_settings(&RunOverrides::default());
        assert!(!rerank("").unwrap().rerank_context);
        assert!(rerank("agent:\n  rerankContext: true\n").unwrap().rerank_context);
    }

    #[test]
    fn telemetry_is_off_unless_an_endpoint_is_configured() {
        let (_dir, h) = host("", &[("OTEL_SERVICE_NAME", "x")]);
        let s = h.telemetry_settings().unwrap();
        assert!(s.otlp.is_none());
        assert_eq!(s.service_name, "x");
        // Switched off: the variables are ignored.
        let (_dir, h) = host(
            "observability:\n  enabled: false\n",
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")],
        );
        assert!(h.telemetry_settings().unwrap().otlp.is_none());
        let (_dir, h) = host(
            "",
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_SDK_DISABLED", "true")],
        );
        assert!(h.telemetry_settings().unwrap().otlp.is_none());
    }

    #[test]
    fn telemetry_endpoints_follow_the_otlp_variables_and_the_section_wins() {
        // HTTP: a base endpoint gets each signal's path; headers are decoded.
        let (_dir, h) = host(
            "",
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"),
                ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b,x=1"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "500"),
            ],
        );
        let o = h.telemetry_settings().unwrap().otlp.unwrap();
        assert_eq!(o.protocol, telemetry::Protocol::HttpProtobuf);
        assert_eq!(o.traces_endpoint, "http://c:4318/v1/traces");
        assert_eq!(o.metrics_endpoint, "http://c:4318/v1/metrics");
        assert_eq!(o.headers, [("api-key".into(), "a b".into()), ("x".into(), "1".into())]);
        assert_eq!(o.timeout, Duration::from_millis(500));
        // gRPC by port; a signal's own endpoint is whole.
        let (_dir, h) = host(
            "",
            &[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4317"),
                ("OTEL_EXPORTER_OTLP_HEADERS", "k=%"),
            ],
        );
        let o = h.telemetry_settings().unwrap().otlp.unwrap();
        assert_eq!(
            (o.protocol, o.traces_endpoint.as_str()),
            (telemetry::Protocol::Grpc, "http://c:4317")
        );
        assert_eq!(o.headers, [("k".into(), "%".into())], "a lone % is kept");
        // The section over the variables.
        let (_dir, h) = host(
            "observability:\n  otlp:\n    endpoint: http://o:9\n    protocol: http/protobuf\n    headers:\n      x: 2\n",
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
                ("OTEL_EXPORTER_OTLP_HEADERS", "x=1"),
            ],
        );
        let o = h.telemetry_settings().unwrap().otlp.unwrap();
        assert_eq!(o.traces_endpoint, "http://o:9/v1/traces");
        assert_eq!(o.headers, [("x".into(), "2".into())]);
        // A protocol nobody speaks is a configuration error.
        let (_dir, h) = host(
            "observability:\n  otlp:\n    endpoint: http://o:9\n    protocol: http/json\n",
            &[],
        );
        assert!(h.telemetry_settings().unwrap_err().to_string().contains("http/json"));
    }

    #[test]
    fn an_unknown_agent_key_is_a_config_error() {
        let (_dir, h) = host("agent:\n  maxIteration: 3\n", &[]);
        let err = h.run_settings(&RunOverrides::default()).unwrap_err();
        assert_eq!(err.code(), protocol::ErrorCode::InvalidArgument);
        assert!(err.to_string().contains("maxIteration"), "{err}");
    }

    #[test]
    fn the_sandbox_gets_the_environment_without_secrets_and_a_bad_section_is_a_notice() {
        let (_dir, h) = host(
            "sandbox:\n  timeout: 90\n  network: off\n",
            &[("HOME", "/home/u"), ("OPENAI_API_KEY", "sk-x"), ("PATH", "/usr/bin")],
        );
        let setup = h.sandbox_setup().unwrap();
        assert_eq!(setup.policy.timeout, Some(Duration::from_secs(90)));
        assert!(setup.env.iter().all(|(k, _)| k != "OPENAI_API_KEY"));
        assert_eq!(setup.env_removed, vec!["OPENAI_API_KEY"]);
        assert_eq!(setup.config.home.as_deref(), Some(Path::new("/home/u")));

        let (_dir, h) = host("sandbox:\n  timeout: forever\n", &[]);
        let (options, notices) = h.session_options(false, false).unwrap();
        assert!(options.sandbox.is_none());
        assert!(
            matches!(&notices[..], [Notice::Warning(w)] if w.contains("forever")),
            "{notices:?}"
        );
    }

    #[test]
    fn mcp_servers_become_specs_with_a_filtered_environment_and_their_secrets() {
        let config = "mcp:\n  servers:\n    git:\n      command: ./bin/git-mcp\n      args: [--repo, .]\n      env: {GH_TOKEN: ghp_abcdef, DEBUG: 1}\n      startup_timeout: 5s\n      tool_timeout: 90\n      read_only: [status]\n      disabled_tools: [push]\n      max_result: 16K\n    docs:\n      url: http://127.0.0.1:9/mcp\n      headers: {Authorization: \"Bearer ${DOCS_TOKEN}\"}\n      required: true\n    off:\n      command: x\n      enabled: false\n";
        let (dir, h) = host(
            config,
            &[("PATH", "/usr/bin"), ("OPENAI_API_KEY", "sk-x"), ("DOCS_TOKEN", "tok-123456")],
        );
        let specs = h.mcp_server_specs().unwrap();
        assert_eq!(specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["git", "docs"]);
        let git = &specs[0];
        let mcp_client::Transport::Stdio { command, args, env, cwd } = &git.transport else {
            panic!("stdio")
        };
        assert_eq!(command, &dir.path().join("./bin/git-mcp"));
        assert_eq!(args, &["--repo", "."]);
        assert_eq!(cwd, dir.path());
        assert!(env.iter().any(|(k, v)| k == "PATH" && v == "/usr/bin"));
        assert!(env.iter().all(|(k, _)| k != "OPENAI_API_KEY"), "our secrets are not passed on");
        assert!(env.iter().any(|(k, v)| k == "DEBUG" && v == "1"));
        assert_eq!(git.startup_timeout, Duration::from_secs(5));
        assert_eq!(git.tool_timeout, Duration::from_secs(90));
        assert_eq!(git.max_result_bytes, 16 * 1024);
        assert!(git.read_only.covers("status") && !git.read_only.covers("push"));
        assert!(!git.offers("push") && git.offers("status"));
        assert!(git.secrets.contains(&"ghp_abcdef".to_owned()));
        let docs = &specs[1];
        assert!(docs.required);
        assert!(docs.secrets.contains(&"Bearer tok-123456".to_owned()));

        // The list form of seed 001, and errors that name the server.
        let (_d, h) =
            host("mcp:\n  servers:\n    - name: mem\n      command: mcp-server-memory\n", &[]);
        assert_eq!(h.mcp_server_specs().unwrap()[0].name, "mem");
        for (bad, want) in [
            ("mcp:\n  servers:\n    git:\n      comand: x\n", "mcp.servers.git"),
            ("mcp:\n  servers:\n    git: {}\n", "give `command`"),
            ("mcp:\n  servers:\n    read:\n      command: x\n", "built-in tool"),
            ("mcp:\n  servers:\n    a.b:\n      command: x\n", "not a usable server name"),
            ("mcp:\n  server: {}\n", "unknown key `server`"),
        ] {
            let (_d, h) = host(bad, &[]);
            let err = h.mcp_server_specs().unwrap_err().to_string();
            assert!(err.contains(want), "{bad}: {err}");
        }
        let (_d, h) = host("", &[]);
        let (tools, notices) = h.tools().unwrap();
        assert!(notices.is_empty() && tools.servers.servers().is_empty());
    }
}
