//! The seed's own configuration file (seed 003 §10.1): `.commitly/config.yaml`
//! with snake_case keys at the top level (`project_name`, `execution.max_memory`,
//! `database.host`/`port`/`user`/`password`/`dbname`, `llm.provider`, ...), read as
//! ironbees' `pipeline:` section (camelCase) and `llm:` section. A file that has a
//! `pipeline:` section is ours and is left as it is.

use serde_json::{Map, Value, json};

/// Top-level keys that only the seed's layout has.
const SEED_KEYS: &[&str] = &["project_name", "project_language", "test_command", "execution"];

/// The configuration with the seed's layout turned into ours; `None` when it is
/// not in the seed's layout.
pub fn from_seed_layout(top: &Value) -> Option<Value> {
    let m = top.as_object()?;
    if m.contains_key("pipeline") || !SEED_KEYS.iter().any(|k| m.contains_key(*k)) {
        return None;
    }
    let mut out = m.clone();
    let mut p = Map::new();
    for (key, value) in m {
        let target = match key.as_str() {
            "project_name" | "project_language" | "test_command" | "hub_path" | "lint"
            | "auto_approve" | "on_agent_apply" | "execution" | "git" | "slack" | "logging" => {
                camel(key)
            }
            "database" => {
                p.insert("database".into(), database(value));
                out.remove(key);
                continue;
            }
            "refactoring" => {
                p.insert("refactoring".into(), refactoring(value));
                out.remove(key);
                continue;
            }
            "llm" => {
                // The seed's one model: ironbees' `llm:` section, and used by the
                // pipeline.
                out.insert("llm".into(), llm(value));
                p.insert("llm".into(), json!({ "enabled": true }));
                continue;
            }
            _ => continue,
        };
        p.insert(target, camel_keys(value));
        out.remove(key);
    }
    out.insert("pipeline".into(), Value::Object(p));
    Some(Value::Object(out))
}

fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn camel_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (camel(k), camel_keys(v))).collect())
        }
        other => other.clone(),
    }
}

/// `type`/`host`/`port`/`user`/`password`/`dbname` as a PostgreSQL URL (a `url`
/// given is kept; our own keys pass through).
fn database(v: &Value) -> Value {
    let Some(m) = v.as_object() else { return Value::Object(Map::new()) };
    let mut out: Map<String, Value> = m
        .iter()
        .filter(|(k, _)| {
            !["type", "host", "port", "user", "password", "dbname"].contains(&k.as_str())
        })
        .map(|(k, v)| (camel(k), camel_keys(v)))
        .collect();
    let text = |k: &str| match m.get(k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    if !out.contains_key("url")
        && let Some(db) = text("dbname")
    {
        let user = text("user").map(|u| match text("password") {
            Some(pw) => format!("{}:{}@", encode(&u), encode(&pw)),
            None => format!("{}@", encode(&u)),
        });
        let url = format!(
            "postgresql://{}{}:{}/{}",
            user.unwrap_or_default(),
            text("host").unwrap_or_else(|| "localhost".into()),
            text("port").unwrap_or_else(|| "5432".into()),
            encode(&db)
        );
        out.insert("url".into(), Value::String(url));
    }
    Value::Object(out)
}

/// A URL's userinfo, path segment or query value, percent-encoded (RFC 3986
/// unreserved characters kept).
pub(crate) fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `enable_duplicate_removal`, `enable_exception_handling`, `enable_ruff_fixes`
/// as rules in words for the model; `rules_file` and `rules` as ours.
fn refactoring(v: &Value) -> Value {
    let Some(m) = v.as_object() else { return Value::Object(Map::new()) };
    let mut rules: Vec<Value> =
        m.get("rules").and_then(Value::as_array).cloned().unwrap_or_default();
    let on = |k: &str| m.get(k).and_then(Value::as_bool).unwrap_or(false);
    for (flag, rule) in [
        (
            "enable_duplicate_removal",
            "Remove duplicated code: extract what is repeated into one function.",
        ),
        (
            "enable_exception_handling",
            "Add the error handling that is missing: no bare excepts, no swallowed errors.",
        ),
        ("enable_ruff_fixes", "Fix what `ruff check` would report in the changed code."),
    ] {
        if on(flag) {
            rules.push(Value::String(rule.into()));
        }
    }
    let mut out = Map::new();
    out.insert("rules".into(), Value::Array(rules));
    if let Some(f) = m.get("rules_file") {
        out.insert("rulesFile".into(), f.clone());
    }
    Value::Object(out)
}

/// The seed's `llm:` (`provider`, `model`, `temperature`, `max_tokens`,
/// `api_key`, `base_url`) as ironbees' (`default` and one provider).
fn llm(v: &Value) -> Value {
    let Some(m) = v.as_object() else { return v.clone() };
    let Some(provider) = m.get("provider").and_then(Value::as_str) else { return v.clone() };
    let settings: Map<String, Value> = m
        .iter()
        .filter(|(k, _)| {
            ["model", "temperature", "max_tokens", "api_key", "base_url"].contains(&k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    json!({ "default": provider, "providers": { provider: settings } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_config_file_reads_as_ours() {
        // Seed 003 §10.1, as written there (with `${...}` already substituted).
        let seed = json!({
            "project_language": "python",
            "project_name": "Commitly",
            "execution": {"command": "python main.py", "timeout": 300, "max_memory": 2048},
            "database": {
                "type": "postgresql", "host": "localhost", "port": 5432,
                "user": "dev_user", "password": "p@ss word", "dbname": "test_db"
            },
            "test_command": "pytest",
            "git": {"remote": "origin", "auto_cleanup_branches": true},
            "llm": {
                "provider": "openai", "model": "gpt-4", "temperature": 0.2,
                "max_tokens": 2048, "api_key": "sk-test"
            },
            "slack": {"token": "xoxb-1", "channel_id": "C1234567890", "enable_notifications": true},
            "logging": {"retention_days": 30, "max_log_size_mb": 5, "cleanup_hub_on_failure": false},
            "refactoring": {
                "rules_file": "config/refactoring_rules.yaml",
                "enable_duplicate_removal": true,
                "enable_exception_handling": false,
                "enable_ruff_fixes": false
            },
            "sandbox": {"network": false}
        });
        let ours = from_seed_layout(&seed).unwrap();
        let p = &ours["pipeline"];
        assert_eq!(p["projectName"], "Commitly");
        assert_eq!(p["projectLanguage"], "python");
        assert_eq!(p["testCommand"], "pytest");
        assert_eq!(
            p["execution"],
            json!({"command": "python main.py", "timeout": 300, "maxMemory": 2048})
        );
        assert_eq!(
            p["database"],
            json!({"url": "postgresql://dev_user:p%40ss%20word@localhost:5432/test_db"})
        );
        assert_eq!(p["git"], json!({"remote": "origin", "autoCleanupBranches": true}));
        assert_eq!(p["slack"]["channelId"], "C1234567890");
        assert_eq!(p["logging"]["cleanupHubOnFailure"], false);
        assert_eq!(p["refactoring"]["rulesFile"], "config/refactoring_rules.yaml");
        assert_eq!(p["refactoring"]["rules"].as_array().unwrap().len(), 1);
        assert_eq!(p["llm"], json!({"enabled": true}));
        assert_eq!(ours["llm"]["default"], "openai");
        assert_eq!(ours["llm"]["providers"]["openai"]["model"], "gpt-4");
        assert_eq!(ours["llm"]["providers"]["openai"]["max_tokens"], 2048);
        assert_eq!(ours["sandbox"], json!({"network": false}), "other sections are kept");
        assert!(ours.get("project_name").is_none());
        // The typed section takes it.
        let typed: protocol::PipelineConfig = serde_json::from_value(p.clone()).unwrap();
        assert_eq!(typed.execution.max_memory, Some(2048));
        assert_eq!(typed.slack.channel_id.as_deref(), Some("C1234567890"));
    }

    #[test]
    fn our_layout_and_other_files_are_left_alone() {
        for v in [
            json!({"pipeline": {"testCommand": "pytest"}, "project_name": "x"}),
            json!({"index": {"exclude": ["a"]}}),
            json!({}),
        ] {
            assert_eq!(from_seed_layout(&v), None, "{v}");
        }
        assert_eq!(from_seed_layout(&Value::Null), None);
    }
}
