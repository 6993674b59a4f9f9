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

/// `agent:` — agent mode's defaults (seed 001 §5.1).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentSection {
    pub max_iterations: Option<u32>,
    pub timeout_seconds: Option<u64>,
    pub enable_human_in_the_loop: Option<bool>,
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

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
