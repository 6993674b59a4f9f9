//! Agent definitions by convention: `<dir>/<name>/agent.yaml` + its prompt file.
//!
//! Sources are layered, later ones winning by name: the built-ins embedded in the
//! binary, the user's agents directory, then the project's directories in the
//! order the caller gives (`<root>/agents/`, then `<root>/.ironbees/agents/`).
//! Loading is strict: an unknown key, a wrong type or a name that differs from its
//! directory fails with the file and the line, because a typo silently ignored
//! (`requiredTool:`) would make an agent behave differently from what its author
//! reads in the file.

mod instructions;
mod scaffold;
mod yaml;

#[cfg(test)]
mod tests;

use std::{
    collections::BTreeMap,
    fmt,
    io::Read,
    path::{Component, Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Position, Result};

pub use self::{
    instructions::{InstructionFile, Instructions, project_instructions},
    scaffold::{is_built_in, scaffold},
};

/// Where built-in definitions say they are, in messages.
const BUILT_IN_DIR: &str = "<built-in>";

/// The file every agent directory holds.
const AGENT_FILE: &str = "agent.yaml";

/// `promptTemplate` when the file does not say.
const DEFAULT_PROMPT: &str = "prompt.md";

/// Agent files are small text; a bigger one is a mistake (or a hostile repository
/// trying to fill the model's context), refused rather than read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Longest agent name: it is typed on the command line and used as a directory name.
const MAX_NAME_CHARS: usize = 40;

/// The agents compiled into the binary: (name, agent.yaml, prompt.md).
const BUILT_INS: &[(&str, &str, &str)] = &[
    (
        "planner",
        include_str!("../agents/planner/agent.yaml"),
        include_str!("../agents/planner/prompt.md"),
    ),
    (
        "coder",
        include_str!("../agents/coder/agent.yaml"),
        include_str!("../agents/coder/prompt.md"),
    ),
    (
        "validator",
        include_str!("../agents/validator/agent.yaml"),
        include_str!("../agents/validator/prompt.md"),
    ),
    (
        "critic",
        include_str!("../agents/critic/agent.yaml"),
        include_str!("../agents/critic/prompt.md"),
    ),
    (
        "answerer",
        include_str!("../agents/answerer/agent.yaml"),
        include_str!("../agents/answerer/prompt.md"),
    ),
];

/// One agent: what its `agent.yaml` says, its prompt, and where it came from.
///
/// Serialized (JSON, camelCase) for `ironbees agents show NAME --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentDef {
    /// Unique; equal to the agent's directory name; `[a-z][a-z0-9_-]*`.
    pub name: String,
    pub description: String,
    /// Informational; nothing compares versions.
    pub version: Option<String>,
    /// Tool names the agent calls; checked with [`AgentDef::validate_tools`].
    pub required_tools: Vec<String>,
    /// The prompt's file name, relative to the agent's directory.
    pub prompt_template: String,
    pub llm_config: Option<LlmConfig>,
    /// Per-tool settings, by tool name, passed through to the tool as written.
    pub tool_config: BTreeMap<String, serde_json::Value>,
    /// The prompt file's text: the agent's system prompt.
    pub prompt: String,
    pub source: AgentSource,
}

/// Overrides of the configured model for one agent; each is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "model overrides (a mapping with `model`, `maxTokens`, `temperature`)"
)]
#[non_exhaustive]
pub struct LlmConfig {
    pub model: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
}

/// Where a definition came from; the path is the agent's directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "path", rename_all = "camelCase")]
pub enum AgentSource {
    BuiltIn,
    User(PathBuf),
    Project(PathBuf),
}

impl fmt::Display for AgentSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentSource::BuiltIn => f.write_str("built-in"),
            AgentSource::User(p) => write!(f, "user ({})", p.display()),
            AgentSource::Project(p) => write!(f, "project ({})", p.display()),
        }
    }
}

/// The directories to look for agents in. The binary fills it (it alone knows the
/// user's configuration directory); this crate reads no environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentDirs {
    /// The user's agents directory (e.g. `~/.config/ironbees/agents`).
    pub user: Option<PathBuf>,
    /// Project agent directories, lowest precedence first.
    pub project: Vec<PathBuf>,
}

impl AgentDirs {
    /// The conventional directories of a project, in precedence order:
    /// `<root>/agents/` (shared, next to the code), then `<root>/.ironbees/agents/`
    /// (ironbees' own directory, which wins).
    pub fn conventional(user: Option<PathBuf>, project_root: &Path) -> AgentDirs {
        AgentDirs {
            user,
            project: vec![
                project_root.join("agents"),
                project_root.join(".ironbees").join("agents"),
            ],
        }
    }
}

/// The agents available to a run, by name.
#[derive(Debug, Clone)]
pub struct AgentSet {
    agents: BTreeMap<String, AgentDef>,
}

impl AgentSet {
    /// Built-ins, then `dirs.user`, then each of `dirs.project`; a later definition
    /// with the same name replaces an earlier one, a new name adds an agent.
    ///
    /// A directory that does not exist contributes nothing, and so does a
    /// subdirectory without `agent.yaml`: `agents/` is a common directory name in
    /// code, and such a project must still work. A subdirectory *with* `agent.yaml`
    /// is an agent and must be valid.
    pub fn load(dirs: &AgentDirs) -> Result<AgentSet> {
        let mut agents = BTreeMap::new();
        for def in built_ins()? {
            agents.insert(def.name.clone(), def);
        }
        let user = dirs.user.iter().map(|d| load_dir(d, AgentSource::User));
        let project = dirs.project.iter().map(|d| load_dir(d, AgentSource::Project));
        for layer in user.chain(project) {
            for def in layer? {
                agents.insert(def.name.clone(), def);
            }
        }
        Ok(AgentSet { agents })
    }

    pub fn get(&self, name: &str) -> Option<&AgentDef> {
        self.agents.get(name)
    }

    /// Only the named agents (seed 001's `EnabledAgents`), and always the planner
    /// and the coder, without which no run works. An unknown name is an error.
    pub fn only(self, names: &[String]) -> Result<AgentSet> {
        if let Some(unknown) = names.iter().find(|n| !self.agents.contains_key(*n)) {
            return Err(Error::InvalidRequest(format!(
                "agent.enabledAgents names `{unknown}`, which is no agent (known: {})",
                self.names().collect::<Vec<_>>().join(", ")
            )));
        }
        let keep = |n: &str| names.iter().any(|x| x == n) || n == "planner" || n == "coder";
        Ok(AgentSet { agents: self.agents.into_iter().filter(|(n, _)| keep(n)).collect() })
    }

    /// Names in sorted order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.agents.keys().map(String::as_str)
    }

    /// Definitions sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &AgentDef> {
        self.agents.values()
    }
}

impl AgentDef {
    /// The `agent.yaml` this definition was read from, for messages
    /// (`<built-in>/planner/agent.yaml` for the embedded ones).
    pub fn definition_file(&self) -> PathBuf {
        match &self.source {
            AgentSource::BuiltIn => Path::new(BUILT_IN_DIR).join(&self.name).join(AGENT_FILE),
            AgentSource::User(dir) | AgentSource::Project(dir) => dir.join(AGENT_FILE),
        }
    }

    /// Every required tool must be one of `known` (the tools the orchestrator
    /// offers); the error names all unknown ones, the file, and the known tools.
    pub fn validate_tools(&self, registry: &engine::Registry) -> Result<()> {
        let unknown: Vec<String> = self
            .required_tools
            .iter()
            .filter(|t| registry.only(&[t.as_str()]).is_err())
            .cloned()
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let mut known: Vec<String> = registry.names().iter().map(|k| k.to_string()).collect();
        known.extend(registry.servers().iter().map(|s| format!("{s} (a server)")));
        known.sort();
        // A tool of a configured server that did not start: say so.
        let why: Vec<String> = unknown
            .iter()
            .map(|t| registry.why_not_found(t))
            .filter(|w| w.contains("is not available"))
            .collect();
        Err(Error::UnknownTools {
            path: self.definition_file(),
            agent: self.name.clone(),
            unknown,
            known,
            why: why.join("; "),
        })
    }
}

fn built_ins() -> Result<Vec<AgentDef>> {
    BUILT_INS
        .iter()
        .map(|&(name, yaml, prompt)| {
            let file = Path::new(BUILT_IN_DIR).join(name).join(AGENT_FILE);
            let manifest = parse(yaml, &file, name)?;
            // The embedded prompt is prompt.md; a built-in naming another file
            // would silently get the wrong text.
            if manifest.prompt_template != DEFAULT_PROMPT {
                return Err(definition(
                    &file,
                    None,
                    "a built-in's promptTemplate must be prompt.md",
                ));
            }
            Ok(manifest.into_def(prompt.to_string(), AgentSource::BuiltIn))
        })
        .collect()
}

/// The agents of one directory, sorted by directory name so the first error is
/// the same on every run.
fn load_dir(dir: &Path, source: fn(PathBuf) -> AgentSource) -> Result<Vec<AgentDef>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(Vec::new());
        }
        Err(e) => return Err(Error::Io { path: dir.to_path_buf(), source: e }),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::Io { path: dir.to_path_buf(), source: e })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.') && entry.path().join(AGENT_FILE).is_file() {
            names.push(name);
        }
    }
    names.sort();
    if names.is_empty() {
        return Ok(Vec::new());
    }
    // Files must stay inside `dir` once symlinks are resolved: a project's agent
    // directory must not pull `~/.ssh/id_rsa` into a prompt sent to a model.
    let jail = dir.canonicalize().map_err(|e| Error::Io { path: dir.to_path_buf(), source: e })?;
    names
        .into_iter()
        .map(|name| {
            let agent_dir = dir.join(&name);
            let file = agent_dir.join(AGENT_FILE);
            let text = read_text(&file, &jail, &file)?;
            let manifest = parse(&text, &file, &name)?;
            let prompt_path = agent_dir.join(&manifest.prompt_template);
            let prompt = if prompt_path.is_file() {
                read_text(&prompt_path, &jail, &file)?
            } else {
                let at = yaml::value_position(&text, "promptTemplate");
                let default =
                    if at.is_none() { " (promptTemplate defaults to prompt.md)" } else { "" };
                return Err(definition(
                    &file,
                    at,
                    format!("prompt file {} not found{default}", prompt_path.display()),
                ));
            };
            Ok(manifest.into_def(prompt, source(agent_dir)))
        })
        .collect()
}

/// Parses and checks one `agent.yaml`; `dir_name` is its directory's name.
fn parse(text: &str, file: &Path, dir_name: &str) -> Result<yaml::Manifest> {
    let manifest = yaml::parse(text).map_err(|(at, message)| definition(file, at, message))?;
    let at = |key| yaml::value_position(text, key);
    if let Err(reason) = check_name(&manifest.name) {
        return Err(definition(file, at("name"), format!("name {:?}: {reason}", manifest.name)));
    }
    if manifest.name != dir_name {
        return Err(definition(
            file,
            at("name"),
            format!(
                "name `{}` differs from its directory `{dir_name}`; rename one so they match",
                manifest.name
            ),
        ));
    }
    if !is_plain_relative(&manifest.prompt_template) {
        return Err(definition(
            file,
            at("promptTemplate"),
            format!(
                "promptTemplate {:?} must be a file inside the agent's directory (a relative \
                 path without `..`)",
                manifest.prompt_template
            ),
        ));
    }
    Ok(manifest)
}

/// `[a-z][a-z0-9_-]*`, at most 40 characters; `Err` says what is wrong.
pub(crate) fn check_name(name: &str) -> std::result::Result<(), String> {
    let Some(first) = name.chars().next() else {
        return Err("a name cannot be empty".into());
    };
    if !first.is_ascii_lowercase() {
        return Err("must start with a lowercase letter a-z".into());
    }
    if let Some(bad) = name
        .chars()
        .find(|&c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'))
    {
        return Err(format!("{bad:?} is not allowed; use a-z, 0-9, `_` and `-`"));
    }
    let len = name.chars().count();
    if len > MAX_NAME_CHARS {
        return Err(format!("at most {MAX_NAME_CHARS} characters, this one has {len}"));
    }
    Ok(())
}

/// A relative path of plain names (`prompt.md`, `prompts/main.md`).
fn is_plain_relative(path: &str) -> bool {
    let path = Path::new(path);
    path.components().next().is_some()
        && path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Reads a UTF-8 file of at most `MAX_FILE_BYTES` that resolves inside `jail`;
/// errors are reported against `file_for_errors` (the agent.yaml).
fn read_text(path: &Path, jail: &Path, file_for_errors: &Path) -> Result<String> {
    let io = |e| Error::Io { path: path.to_path_buf(), source: e };
    if !path.canonicalize().map_err(io)?.starts_with(jail) {
        return Err(definition(
            file_for_errors,
            None,
            format!("{} resolves outside {} (a symlink); refused", path.display(), jail.display()),
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(definition(
            file_for_errors,
            None,
            format!("{} is larger than {} KiB", path.display(), MAX_FILE_BYTES / 1024),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        definition(
            file_for_errors,
            None,
            format!("{} is not UTF-8 text (byte {})", path.display(), e.utf8_error().valid_up_to()),
        )
    })
}

fn definition(file: &Path, at: Option<Position>, message: impl Into<String>) -> Error {
    Error::Definition { path: file.to_path_buf(), at, message: message.into() }
}
