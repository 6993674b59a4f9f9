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
        AgentSection, EditSection, SandboxSection, ServeSection, ValidateSection, stated_commands,
    },
};

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
    pub fn agent_dirs(&self) -> agent::AgentDirs {
        agent::AgentDirs::conventional(self.user_dir().map(|d| d.join("agents")), &self.root)
    }

    pub fn agents(&self) -> Result<agent::AgentSet> {
        Ok(agent::AgentSet::load(&self.agent_dirs())?)
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
        })
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
    /// [`run_store`](Self::run_store). Without a model it lists, shows and
    /// cancels runs.
    pub fn orchestrator(
        &self,
        session: Arc<Session>,
        llm: Option<Arc<llm::Llm>>,
        agents: agent::AgentSet,
        rt: tokio::runtime::Handle,
    ) -> Result<agent::Orchestrator> {
        let store = self.run_store(&session.layout().runs_dir())?;
        Ok(agent::Orchestrator::open_with_store(session, llm, agents, rt, store)?)
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
}
