//! Configuration: layered YAML files and `IRONBEES_*` environment variables.
//!
//! Layers, later wins: the user file (`$XDG_CONFIG_HOME/ironbees/config.yaml`, else
//! `~/.config/ironbees/config.yaml`), the project file (`.ironbees/config.yaml`), then
//! environment variables named after the key path with `__` between levels
//! (`IRONBEES_INDEX__MAX_FILE_SIZE=1000000`). Maps merge key by key; other values
//! replace. `${VAR}` and `${VAR:-default}` in string values are substituted from the
//! environment after merging, then from the project's `.env` file (seed 003 §10.2:
//! `password: "${DB_PASSWORD}"` with `DB_PASSWORD` in `.env`; a variable the process
//! has wins). The `.env` only feeds the configuration: nothing else of ironbees, and
//! no command it runs, sees its variables. Each subsystem reads its own section into
//! a typed struct.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The merged configuration, before any section is typed.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub value: Value,
    /// What contributed, in order: files that exist, then `environment (NAMES)`,
    /// then `.env (NAMES)`.
    pub sources: Vec<String>,
    /// The project `.env`'s variables the process does not set (the ones the
    /// configuration could take values from), for masking what they filled in.
    pub dotenv: Vec<(String, String)>,
}

/// `index:` — how the project is walked and read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexSection {
    pub exclude: Vec<String>,
    pub max_file_size: Option<u64>,
    pub include_minified: bool,
}

impl Config {
    /// The user's file (in `user_dir`), the project's, then `env`.
    pub fn load(
        project_root: &Path,
        user_dir: Option<&Path>,
        env: &[(String, String)],
    ) -> Result<Config> {
        let mut files = Vec::new();
        if let Some(dir) = user_dir {
            files.push(dir.join("config.yaml"));
        }
        files.push(project_root.join(code_index::STATE_DIR).join("config.yaml"));
        Config::from_layers_in(project_root, &files, env)
    }

    /// [`Config::from_layers`] with the `.env` of the project at `root`.
    pub fn from_layers_in(
        root: &Path,
        files: &[PathBuf],
        env: &[(String, String)],
    ) -> Result<Config> {
        let path = root.join(".env");
        let dotenv: Vec<(String, String)> = match std::fs::read_to_string(&path) {
            Ok(text) => parse_dotenv(&text)
                .into_iter()
                .filter(|(k, _)| !env.iter().any(|(e, _)| e == k))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => return Err(Error::Io { path, source }),
        };
        if dotenv.is_empty() {
            return Config::from_layers(files, env);
        }
        let all: Vec<(String, String)> = env.iter().chain(&dotenv).cloned().collect();
        let mut config = Config::from_layers(files, &all)?;
        let mut names: Vec<&str> = dotenv.iter().map(|(k, _)| k.as_str()).collect();
        names.sort_unstable();
        config.sources.push(format!(".env ({})", names.join(", ")));
        config.dotenv = dotenv;
        Ok(config)
    }

    /// The layered load, with the environment passed in (so tests need not set it).
    pub fn from_layers(files: &[PathBuf], env: &[(String, String)]) -> Result<Config> {
        let mut merged = Value::Object(Map::new());
        let mut sources = Vec::new();
        for path in files {
            let text = match std::fs::read_to_string(path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => {
                    return Err(Error::Io { path: path.clone(), source });
                }
            };
            let layer: Value = if text.trim().is_empty() {
                Value::Object(Map::new())
            } else {
                yaml_serde::from_str(&text)
                    .map_err(|e| Error::Config(format!("config {}: {e}", path.display())))?
            };
            if !layer.is_object() {
                return Err(Error::Config(format!(
                    "config {}: the top level must be a map",
                    path.display()
                )));
            }
            merge(&mut merged, layer);
            sources.push(path.display().to_string());
        }
        let mut env_keys = Vec::new();
        for (key, raw) in env {
            let Some(path) = key.strip_prefix("IRONBEES_") else { continue };
            if !path.contains("__") {
                continue; // IRONBEES_LOG and friends are not config keys
            }
            let mut layer = yaml_scalar(raw);
            for part in path.split("__").collect::<Vec<_>>().into_iter().rev() {
                let mut m = Map::new();
                m.insert(part.to_ascii_lowercase(), layer);
                layer = Value::Object(m);
            }
            merge(&mut merged, layer);
            env_keys.push(key.clone());
        }
        if !env_keys.is_empty() {
            env_keys.sort();
            sources.push(format!("environment ({})", env_keys.join(", ")));
        }
        substitute(&mut merged, env)?;
        Ok(Config { value: merged, sources, dotenv: Vec::new() })
    }

    /// Deserializes one top-level section (missing means its defaults).
    pub fn section<T: for<'de> Deserialize<'de> + Default>(&self, name: &str) -> Result<T> {
        match self.value.get(name) {
            None | Some(Value::Null) => Ok(T::default()),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| Error::Config(format!("config section `{name}`: {e}"))),
        }
    }
}

/// The `llm:` section completed by the ecosystem's variables (`ANTHROPIC_API_KEY`,
/// `ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL`, `OPENAI_API_KEY`, `OPENAI_BASE_URL`,
/// `OPENAI_MODEL`) and the proxy variables. The `llm` crate reads no environment;
/// this is where its settings come from.
pub fn llm_settings(config: &Config, env: &[(String, String)]) -> Result<llm::Settings> {
    let get = |name: &str| {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).filter(|v| !v.is_empty())
    };
    let mut settings: llm::Settings = config.section("llm")?;
    let std_env = llm::StandardEnv {
        anthropic_api_key: get("ANTHROPIC_API_KEY").map(llm::Secret::new),
        anthropic_base_url: get("ANTHROPIC_BASE_URL"),
        anthropic_model: get("ANTHROPIC_MODEL"),
        openai_api_key: get("OPENAI_API_KEY").map(llm::Secret::new),
        openai_base_url: get("OPENAI_BASE_URL"),
        openai_model: get("OPENAI_MODEL"),
    };
    if settings.proxy.is_none() {
        settings.proxy =
            ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"].iter().find_map(|n| get(n));
    }
    if settings.no_proxy.is_none() {
        settings.no_proxy = get("NO_PROXY").or_else(|| get("no_proxy"));
    }
    Ok(settings.with_standard_env(&std_env))
}

/// Key names whose values are secrets wherever they appear in the configuration.
fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase().replace('-', "_");
    k == "key"
        || k.ends_with("api_key")
        || k.ends_with("apikey")
        || k.ends_with("_key") && !k.ends_with("_keys")
        || k.contains("token") && !k.contains("tokens")
        || k.contains("secret")
        || k.contains("password")
        || k == "authorization"
}

/// Environment variable names that hold secrets; their values are masked wherever
/// they were substituted (`${VAR}` inside a URL, a header...).
fn is_secret_var(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.ends_with("_KEY") || n.ends_with("_TOKEN") || n.contains("SECRET") || n.contains("PASSWORD")
}

/// The configuration with every secret replaced by `***`: values under secret-like
/// keys, and any occurrence of a secret environment variable's value.
pub fn masked(value: &Value, env: &[(String, String)]) -> Value {
    let secrets: Vec<&str> = env
        .iter()
        .filter(|(k, v)| is_secret_var(k) && v.len() >= 4)
        .map(|(_, v)| v.as_str())
        .collect();
    fn walk(v: &Value, secrets: &[&str], under_secret: bool) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter().map(|(k, v)| (k.clone(), walk(v, secrets, is_secret_key(k)))).collect(),
            ),
            Value::Array(a) => {
                Value::Array(a.iter().map(|v| walk(v, secrets, under_secret)).collect())
            }
            Value::String(s) if under_secret && !s.is_empty() => Value::String("***".into()),
            Value::String(s) => {
                let mut s = url_without_password(s);
                for secret in secrets {
                    s = s.replace(secret, "***");
                }
                Value::String(s)
            }
            other => other.clone(),
        }
    }
    walk(value, &secrets, false)
}

/// A URL's password (`postgres://user:PASSWORD@host/db`) replaced by `***`.
fn url_without_password(s: &str) -> String {
    let Some(scheme) = s.find("://") else { return s.to_owned() };
    let rest = &s[scheme + 3..];
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    match (authority.rfind('@'), authority.find(':')) {
        (Some(at), Some(colon)) if colon < at => {
            let start = scheme + 3 + colon + 1;
            format!("{}***{}", &s[..start], &s[scheme + 3 + at..])
        }
        _ => s.to_owned(),
    }
}

/// The user's ironbees directory: `$XDG_CONFIG_HOME/ironbees`, else
/// `~/.config/ironbees` (the configuration file, the user's agents).
pub fn user_config_dir(env: &[(String, String)]) -> Option<PathBuf> {
    let get = |name: &str| env.iter().find(|(k, v)| k == name && !v.is_empty()).map(|(_, v)| v);
    let base = get("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| get("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("ironbees"))
}

fn yaml_scalar(raw: &str) -> Value {
    yaml_serde::from_str::<Value>(raw)
        .ok()
        .filter(|v| !v.is_object())
        .unwrap_or_else(|| Value::String(raw.to_owned()))
}

pub(crate) fn merge(into: &mut Value, layer: Value) {
    match (into, layer) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

fn substitute(v: &mut Value, env: &[(String, String)]) -> Result<()> {
    match v {
        Value::String(s) if s.contains("${") => *s = expand(s, env)?,
        Value::Array(items) => items.iter_mut().try_for_each(|i| substitute(i, env))?,
        Value::Object(m) => m.values_mut().try_for_each(|i| substitute(i, env))?,
        _ => {}
    }
    Ok(())
}

/// A `.env` file's variables, as docker compose and python-dotenv read one:
/// `KEY=value` lines, `export ` allowed, `#` comments (after a space when
/// inline), values in double quotes (with `\n`, `\"` and `\\` escapes) or
/// single quotes (literal). A line that is no assignment is skipped.
fn parse_dotenv(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        if line.starts_with('#') {
            continue;
        }
        let Some((key, raw)) = line.split_once('=') else { continue };
        let key = key.trim();
        let valid = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            continue;
        }
        let raw = raw.trim();
        let value = if let Some(rest) = raw.strip_prefix('"') {
            let mut v = String::new();
            let mut chars = rest.chars();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => match chars.next() {
                        Some('n') => v.push('\n'),
                        Some(other) => v.push(other),
                        None => break,
                    },
                    c => v.push(c),
                }
            }
            v
        } else if let Some(rest) = raw.strip_prefix('\'') {
            rest.split('\'').next().unwrap_or_default().to_owned()
        } else {
            let end = raw.find(" #").unwrap_or(raw.len());
            raw[..end].trim_end().to_owned()
        };
        // A later line wins, as in a shell.
        out.retain(|(k, _)| k != key);
        out.push((key.to_owned(), value));
    }
    out
}

/// Expands `${VAR}` and `${VAR:-default}`; `$${` is a literal `${`.
fn expand(s: &str, env: &[(String, String)]) -> Result<String> {
    let lookup = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        if rest[..i].ends_with('$') {
            out.push_str(&rest[..i - 1]);
            out.push_str("${");
            rest = &rest[i + 2..];
            continue;
        }
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| Error::Config(format!("config: unterminated `${{` in {s:?}")))?;
        let expr = &after[..end];
        let (name, default) = match expr.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (expr, None),
        };
        match (lookup(name).filter(|v| !v.is_empty()), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(Error::Config(format!(
                    "config: environment variable {name} is not set (used as ${{{name}}})"
                )));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn layers_merge_and_env_wins() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user.yaml");
        let project = dir.path().join("project.yaml");
        std::fs::write(&user, "index:\n  exclude: [a]\n  max_file_size: 10\nother: {x: 1}\n")
            .unwrap();
        std::fs::write(&project, "index:\n  exclude: [b]\n").unwrap();
        let cfg =
            Config::from_layers(&[user, project], &env(&[("IRONBEES_INDEX__MAX_FILE_SIZE", "99")]))
                .unwrap();
        let idx: IndexSection = cfg.section("index").unwrap();
        assert_eq!(idx.exclude, vec!["b"]);
        assert_eq!(idx.max_file_size, Some(99));
        assert_eq!(cfg.value["other"]["x"], 1);
    }

    #[test]
    fn substitution_with_defaults_and_missing_vars() {
        let e = env(&[("HOST", "example.org")]);
        assert_eq!(expand("https://${HOST}/v1", &e).unwrap(), "https://example.org/v1");
        assert_eq!(expand("${PORT:-8080}", &e).unwrap(), "8080");
        assert_eq!(expand("$${HOST}", &e).unwrap(), "${HOST}");
        let err = expand("${NOPE}", &e).unwrap_err();
        assert!(err.to_string().contains("NOPE is not set"), "{err}");
    }

    #[test]
    fn bad_yaml_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.yaml");
        std::fs::write(&p, "index: [unclosed\n").unwrap();
        let err = Config::from_layers(std::slice::from_ref(&p), &[]).unwrap_err();
        assert!(err.to_string().contains(&p.display().to_string()));
    }

    #[test]
    fn sources_name_the_files_and_variables_that_contributed() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user.yaml");
        let missing = dir.path().join("missing.yaml");
        std::fs::write(&user, "index: {}\n").unwrap();
        let cfg = Config::from_layers(
            &[user.clone(), missing],
            &env(&[("IRONBEES_LLM__DEFAULT", "openai"), ("IRONBEES_LOG", "debug")]),
        )
        .unwrap();
        assert_eq!(
            cfg.sources,
            vec![user.display().to_string(), "environment (IRONBEES_LLM__DEFAULT)".to_owned()]
        );
    }

    #[test]
    fn masking_hides_secret_keys_and_substituted_secret_values() {
        let v: Value = serde_json::json!({
            "llm": {
                "providers": {
                    "anthropic": {"api_key": "sk-ant-123456", "model": "claude"},
                    "azure": {"base_url": "https://x.example/v1?api-key=tok-98765", "headers": {"Authorization": "Bearer x"}}
                },
                "budget": {"session": {"max_tokens": 100}}
            },
            "tokens_total": 5,
        });
        let e = env(&[("AZURE_OPENAI_KEY", "tok-98765"), ("HOME", "/root")]);
        let m = masked(&v, &e);
        let text = m.to_string();
        assert!(!text.contains("sk-ant-123456") && !text.contains("tok-98765"), "{text}");
        assert_eq!(m["llm"]["providers"]["anthropic"]["api_key"], "***");
        assert_eq!(m["llm"]["providers"]["anthropic"]["model"], "claude");
        assert_eq!(m["llm"]["providers"]["azure"]["base_url"], "https://x.example/v1?api-key=***");
        assert_eq!(m["llm"]["providers"]["azure"]["headers"]["Authorization"], "***");
        assert_eq!(
            m["llm"]["budget"]["session"]["max_tokens"], 100,
            "token counts are not secrets"
        );
        assert_eq!(m["tokens_total"], 5);
    }

    #[test]
    fn llm_settings_come_from_the_section_and_the_standard_variables() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.yaml");
        std::fs::write(&p, "llm:\n  providers:\n    openai:\n      model: gpt-4o-mini\n").unwrap();
        let e = env(&[
            ("OPENAI_API_KEY", "sk-o"),
            ("ANTHROPIC_API_KEY", "sk-a"),
            ("HTTPS_PROXY", "http://proxy:3128"),
        ]);
        let cfg = Config::from_layers(&[p], &e).unwrap();
        let s = llm_settings(&cfg, &e).unwrap();
        assert_eq!(s.default.as_deref(), Some("anthropic"));
        assert_eq!(s.fallback, vec!["openai"]);
        assert_eq!(s.providers["openai"].model.as_deref(), Some("gpt-4o-mini"));
        assert_eq!(s.providers["openai"].api_key.as_ref().map(llm::Secret::expose), Some("sk-o"));
        assert_eq!(s.proxy.as_deref(), Some("http://proxy:3128"));
    }

    #[test]
    fn a_typo_in_the_llm_section_is_an_error_naming_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.yaml");
        std::fs::write(&p, "llm:\n  fallbak: [openai]\n").unwrap();
        let cfg = Config::from_layers(&[p], &[]).unwrap();
        let err = llm_settings(&cfg, &[]).unwrap_err();
        assert!(err.to_string().contains("fallbak"), "{err:#}");
        assert_eq!(err.code(), protocol::ErrorCode::InvalidArgument);
    }

    #[test]
    fn dotenv_lines_as_compose_reads_them() {
        let text = "# comment\nexport A=1\nB = two words # note\nC=\"quoted # kept\\nnext\"\nD='lit $X \\n'\n\
                    not a line\n1X=bad\nE=\nA=again\n";
        assert_eq!(
            parse_dotenv(text),
            env(&[
                ("B", "two words"),
                ("C", "quoted # kept\nnext"),
                ("D", "lit $X \\n"),
                ("E", ""),
                ("A", "again"),
            ])
        );
    }

    #[test]
    fn the_projects_dotenv_fills_the_configuration_and_the_process_wins() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.yaml");
        std::fs::write(
            &p,
            "pipeline:\n  database:\n    url: postgres://dev:${DB_PASSWORD}@db/test\n  slack:\n    token: ${SLACK_TOKEN}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(".env"), "DB_PASSWORD=s3cret-pw\nSLACK_TOKEN=from-file\n")
            .unwrap();
        let process = env(&[("SLACK_TOKEN", "xoxb-process")]);
        let cfg = Config::from_layers_in(dir.path(), &[p], &process).unwrap();
        assert_eq!(cfg.value["pipeline"]["database"]["url"], "postgres://dev:s3cret-pw@db/test");
        assert_eq!(cfg.value["pipeline"]["slack"]["token"], "xoxb-process");
        assert_eq!(cfg.dotenv, env(&[("DB_PASSWORD", "s3cret-pw")]));
        assert!(cfg.sources.iter().any(|s| s == ".env (DB_PASSWORD)"), "{:?}", cfg.sources);
        let all: Vec<_> = process.iter().chain(&cfg.dotenv).cloned().collect();
        assert!(!masked(&cfg.value, &all).to_string().contains("s3cret-pw"));
        // No .env: nothing changes, and an unset variable is still an error.
        std::fs::remove_file(dir.path().join(".env")).unwrap();
        let p = dir.path().join("c.yaml");
        let err = Config::from_layers_in(dir.path(), &[p], &process).unwrap_err();
        assert!(err.to_string().contains("DB_PASSWORD is not set"), "{err}");
    }

    #[test]
    fn passwords_in_urls_are_masked() {
        let cfg = serde_json::json!({"serve": {"database_url": "postgres://u:hunter2@db:5432/x"},
                         "other": "http://host/a:b@c"});
        let m = masked(&cfg, &[]);
        assert_eq!(m["serve"]["database_url"], "postgres://u:***@db:5432/x");
        assert_eq!(m["other"], "http://host/a:b@c");
    }

    #[test]
    fn unknown_keys_in_a_section_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.yaml");
        std::fs::write(&p, "index:\n  exclud: [x]\n").unwrap();
        let cfg = Config::from_layers(&[p], &[]).unwrap();
        let err = cfg.section::<IndexSection>("index").unwrap_err();
        assert!(err.to_string().contains("exclud"), "{err:#}");
    }
}
