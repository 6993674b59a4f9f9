//! The `llm:` configuration section, and how the ecosystem's standard variables
//! (`ANTHROPIC_API_KEY`, `OPENAI_BASE_URL`, ...) fill it in. The binary reads files
//! and the environment; this module only combines the values it is given.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{
    accounting::{Budgets, Price},
    breaker::BreakerPolicy,
    error::Error,
    retry::RetryPolicy,
    secret::Secret,
};

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    /// Anthropic Messages API (`POST {base}/v1/messages`).
    Anthropic,
    /// OpenAI Chat Completions (`POST {base}/chat/completions`).
    Openai,
    /// Ollama, vLLM, llama.cpp server, LM Studio...: Chat Completions at a base URL,
    /// key optional, `max_tokens` instead of `max_completion_tokens`.
    OpenaiCompatible,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
            ProviderKind::OpenaiCompatible => "openai-compatible",
        }
    }
}

pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const OPENAI_MODEL: &str = "gpt-4.1";

/// One entry of `llm.providers`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProviderSettings {
    /// Defaults from the entry's name when it is `anthropic` or `openai`.
    pub kind: Option<ProviderKind>,
    /// Anthropic: without `/v1` (as `ANTHROPIC_BASE_URL`); OpenAI: with it (as
    /// `OPENAI_BASE_URL`).
    pub base_url: Option<String>,
    pub api_key: Option<Secret>,
    pub model: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// Anthropic prompt caching of the system prompt and tools (default on).
    pub prompt_caching: Option<bool>,
    /// This provider's price, ahead of the price table (e.g. 0 for a local server).
    pub price: Option<Price>,
}

impl ProviderSettings {
    pub fn kind_for(&self, name: &str) -> Option<ProviderKind> {
        self.kind.or(match name {
            "anthropic" => Some(ProviderKind::Anthropic),
            "openai" => Some(ProviderKind::Openai),
            _ => None,
        })
    }
}

/// `llm.embeddings`: the model that turns code and requests into vectors, for
/// `search --embeddings` and `localize --embeddings`. Only OpenAI's
/// `/embeddings` API is spoken (OpenAI itself, Ollama, vLLM, llama.cpp server,
/// LM Studio, text-embeddings-inference): Anthropic has no embeddings endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingSettings {
    /// A key of `providers`; default: the first of the chain that speaks OpenAI's API.
    pub provider: Option<String>,
    /// Default on OpenAI itself: `text-embedding-3-small`; a compatible server
    /// needs one named.
    pub model: Option<String>,
    /// Inputs per request.
    pub batch: usize,
    /// How much the model's file ranking counts in `localize --embeddings`,
    /// against the ranking of the lexical and structural signals (which counts
    /// 1). Measured in docs/BENCHMARKS.md: 1 suits a code-embedding model; a
    /// small general-purpose sentence model (all-MiniLM-L6-v2) did better at
    /// 0.5. `search --embeddings` has its own per-query-kind weights.
    pub weight: f64,
}

impl Default for EmbeddingSettings {
    fn default() -> Self {
        EmbeddingSettings { provider: None, model: None, batch: 64, weight: 1.0 }
    }
}

pub const OPENAI_EMBEDDING_MODEL: &str = "text-embedding-3-small";

/// `llm.timeouts`, in seconds (fractions allowed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Timeouts {
    pub connect_secs: f64,
    /// Streaming: from sending the request to the first event. (A call without
    /// streaming gets its answer all at once; only `total_secs` applies to it.)
    pub first_token_secs: f64,
    /// Longest silence between two chunks of a stream.
    pub idle_secs: f64,
    /// One attempt, start to end.
    pub total_secs: f64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { connect_secs: 10.0, first_token_secs: 120.0, idle_secs: 90.0, total_secs: 900.0 }
    }
}

/// The `llm:` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// The primary provider (a key of `providers`).
    pub default: Option<String>,
    /// Providers tried in order when the primary fails (seed 001 `FallbackProvider`).
    pub fallback: Vec<String>,
    pub providers: BTreeMap<String, ProviderSettings>,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    pub breaker: BreakerPolicy,
    /// Overrides and additions to the built-in price table (USD per million tokens).
    pub prices: BTreeMap<String, Price>,
    pub budget: Budgets,
    pub embeddings: EmbeddingSettings,
    /// An HTTP(S) proxy for every provider. The binary fills it from `HTTPS_PROXY` /
    /// `ALL_PROXY` when unset.
    pub proxy: Option<String>,
    /// Hosts that bypass the proxy (`NO_PROXY` syntax).
    pub no_proxy: Option<String>,
}

/// The ecosystem's variables, as the binary read them.
#[derive(Debug, Clone, Default)]
pub struct StandardEnv {
    pub anthropic_api_key: Option<Secret>,
    pub anthropic_base_url: Option<String>,
    pub anthropic_model: Option<String>,
    pub openai_api_key: Option<Secret>,
    pub openai_base_url: Option<String>,
    pub openai_model: Option<String>,
}

impl Settings {
    /// Fills the `anthropic` and `openai` providers from the standard variables
    /// (values in the configuration win, field by field), and picks the default
    /// and fallback when the configuration does not: with one provider it is the
    /// default; with both Anthropic and OpenAI, Anthropic is the default and
    /// OpenAI the fallback (seed 001).
    pub fn with_standard_env(mut self, env: &StandardEnv) -> Settings {
        let nonempty = |s: &Option<String>| s.clone().filter(|v| !v.trim().is_empty());
        let nonempty_secret = |s: &Option<Secret>| s.clone().filter(|v| !v.is_empty());
        for p in self.providers.values_mut() {
            if p.api_key.as_ref().is_some_and(Secret::is_empty) {
                p.api_key = None; // `${VAR:-}` with VAR unset
            }
        }
        let anthropic_key = nonempty_secret(&env.anthropic_api_key);
        let anthropic_url = nonempty(&env.anthropic_base_url);
        if anthropic_key.is_some() || anthropic_url.is_some() {
            let p = self.providers.entry("anthropic".into()).or_default();
            if p.kind_for("anthropic") == Some(ProviderKind::Anthropic) {
                p.api_key = p.api_key.take().or(anthropic_key);
                p.base_url = p.base_url.take().or(anthropic_url);
                p.model = p.model.take().or_else(|| nonempty(&env.anthropic_model));
            }
        }
        let openai_key = nonempty_secret(&env.openai_api_key);
        let openai_url = nonempty(&env.openai_base_url);
        if openai_key.is_some() || openai_url.is_some() {
            let p = self.providers.entry("openai".into()).or_default();
            if p.kind.is_none() {
                // A base URL that is not OpenAI's own is a compatible server.
                let own = openai_url.as_deref().is_none_or(|u| u.contains("api.openai.com"));
                p.kind =
                    Some(if own { ProviderKind::Openai } else { ProviderKind::OpenaiCompatible });
            }
            if matches!(p.kind, Some(ProviderKind::Openai | ProviderKind::OpenaiCompatible)) {
                p.api_key = p.api_key.take().or(openai_key);
                p.base_url = p.base_url.take().or(openai_url);
                p.model = p.model.take().or_else(|| nonempty(&env.openai_model));
            }
        }
        if self.default.is_none() {
            let has = |n: &str| self.providers.contains_key(n);
            self.default = if has("anthropic") {
                Some("anthropic".into())
            } else if has("openai") {
                Some("openai".into())
            } else if self.providers.len() == 1 {
                self.providers.keys().next().cloned()
            } else {
                None
            };
            if self.fallback.is_empty() && has("anthropic") && has("openai") {
                self.fallback = vec!["openai".into()];
            }
        }
        self
    }

    /// The settings of a client that only embeds (`search`/`localize
    /// --embeddings`): its chain starts at the embedding provider. `llm.default`
    /// says which provider *chats*; with several providers configured and none
    /// chosen, [`Settings::chain`] refuses, which should not stop a client that
    /// never chats. The provider is `llm.embeddings.provider`, else the first
    /// that speaks OpenAI's API (Anthropic has no embeddings endpoint); a chosen
    /// default is left alone.
    ///
    /// Nor does such a client need a chat model: a local server run only for
    /// embeddings (Ollama with `nomic-embed-text`, OPENAI_BASE_URL and no
    /// OPENAI_MODEL) would otherwise be refused for lacking one. An
    /// OpenAI-compatible provider without a model gets the embedding model in
    /// its place, which this client never sends to a chat endpoint.
    pub fn for_embeddings(mut self) -> Settings {
        if let Some(model) = &self.embeddings.model {
            for (name, p) in &mut self.providers {
                if p.model.is_none() && p.kind_for(name) == Some(ProviderKind::OpenaiCompatible) {
                    p.model = Some(model.clone());
                }
            }
        }
        if self.default.is_none() {
            let speaks_openai = |(name, p): &(&String, &ProviderSettings)| {
                matches!(
                    p.kind_for(name),
                    Some(ProviderKind::Openai | ProviderKind::OpenaiCompatible)
                )
            };
            self.default = self.embeddings.provider.clone().or_else(|| {
                self.providers.iter().find(speaks_openai).map(|(name, _)| name.clone())
            });
        }
        self
    }

    /// The providers in the order they are tried: the default, then the fallbacks.
    pub fn chain(&self) -> Result<Vec<String>, Error> {
        let Some(first) = &self.default else {
            return Err(Error::Config(if self.providers.is_empty() {
                "no model provider is configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY \
                 (or OPENAI_BASE_URL for a local server), or add llm.providers to the config"
                    .into()
            } else {
                "several providers are configured; choose one with llm.default".into()
            }));
        };
        let mut chain = vec![first.clone()];
        for f in &self.fallback {
            if !chain.contains(f) {
                chain.push(f.clone());
            }
        }
        for name in &chain {
            if !self.providers.contains_key(name) {
                return Err(Error::Config(format!(
                    "provider {name:?} is named in llm.default/llm.fallback but not configured \
                     (known: {})",
                    self.providers.keys().cloned().collect::<Vec<_>>().join(", ")
                )));
            }
        }
        Ok(chain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(ak: Option<&str>, au: Option<&str>, ok: Option<&str>, ou: Option<&str>) -> StandardEnv {
        StandardEnv {
            anthropic_api_key: ak.map(Secret::new),
            anthropic_base_url: au.map(str::to_owned),
            openai_api_key: ok.map(Secret::new),
            openai_base_url: ou.map(str::to_owned),
            ..StandardEnv::default()
        }
    }

    fn summary(s: &Settings) -> String {
        let kinds: Vec<String> = s
            .providers
            .iter()
            .map(|(n, p)| format!("{n}:{}", p.kind_for(n).map_or("?", ProviderKind::as_str)))
            .collect();
        format!("default={:?} fallback={:?} [{}]", s.default, s.fallback, kinds.join(" "))
    }

    #[test]
    fn standard_variables_choose_the_default() {
        let table = [
            (
                env(Some("a"), None, None, None),
                r#"default=Some("anthropic") fallback=[] [anthropic:anthropic]"#,
            ),
            (
                env(None, None, Some("o"), None),
                r#"default=Some("openai") fallback=[] [openai:openai]"#,
            ),
            (
                env(Some("a"), None, Some("o"), None),
                r#"default=Some("anthropic") fallback=["openai"] [anthropic:anthropic openai:openai]"#,
            ),
            // a base URL alone is a provider (a local server needs no key)
            (
                env(None, None, None, Some("http://localhost:11434/v1")),
                r#"default=Some("openai") fallback=[] [openai:openai-compatible]"#,
            ),
            (
                env(None, None, Some("o"), Some("https://api.openai.com/v1")),
                r#"default=Some("openai") fallback=[] [openai:openai]"#,
            ),
            (env(Some(""), None, None, None), "default=None fallback=[] []"),
            (env(None, None, None, None), "default=None fallback=[] []"),
        ];
        for (e, want) in table {
            assert_eq!(summary(&Settings::default().with_standard_env(&e)), want, "{e:?}");
        }
    }

    #[test]
    fn configuration_wins_over_variables() {
        let mut s = Settings { default: Some("local".into()), ..Settings::default() };
        s.providers.insert(
            "anthropic".into(),
            ProviderSettings { model: Some("claude-haiku-4-5".into()), ..Default::default() },
        );
        s.providers.insert(
            "local".into(),
            ProviderSettings {
                kind: Some(ProviderKind::OpenaiCompatible),
                base_url: Some("http://127.0.0.1:8080/v1".into()),
                api_key: Some(Secret::new("")),
                ..Default::default()
            },
        );
        let mut e = env(Some("key-a"), Some("http://proxy.example"), None, None);
        e.anthropic_model = Some("claude-opus-4-5".into());
        let s = s.with_standard_env(&e);
        let a = &s.providers["anthropic"];
        assert_eq!(a.model.as_deref(), Some("claude-haiku-4-5"));
        assert_eq!(a.api_key.as_ref().map(Secret::expose), Some("key-a"));
        assert_eq!(a.base_url.as_deref(), Some("http://proxy.example"));
        assert_eq!(s.providers["local"].api_key, None, "an empty key is no key");
        assert_eq!(s.chain().unwrap(), vec!["local"]);
    }

    #[test]
    fn an_embedding_client_needs_no_chat_default() {
        let compatible = || ProviderSettings {
            kind: Some(ProviderKind::OpenaiCompatible),
            base_url: Some("http://127.0.0.1:11434/v1".into()),
            ..ProviderSettings::default()
        };
        let mut s = Settings::default();
        s.providers.insert("anthropic".into(), ProviderSettings::default());
        s.providers.insert("ollama".into(), compatible());
        s.providers.insert("vllm".into(), compatible());
        let s = s.with_standard_env(&StandardEnv::default());
        assert_eq!(s.chain().unwrap(), vec!["anthropic"], "Anthropic chats by default");
        let mut custom = s.clone();
        custom.providers.remove("anthropic");
        custom.default = None;
        assert!(custom.chain().is_err(), "two custom providers: which one chats is not said");

        // Embedding: the named provider, else the first that speaks OpenAI's API;
        // a default someone chose stays.
        let mut named = custom.clone();
        named.embeddings.provider = Some("vllm".into());
        assert_eq!(named.for_embeddings().chain().unwrap(), vec!["vllm"]);
        assert_eq!(custom.clone().for_embeddings().chain().unwrap(), vec!["ollama"]);
        assert_eq!(s.for_embeddings().chain().unwrap(), vec!["anthropic"]);
    }

    #[test]
    fn an_embedding_client_needs_no_chat_model() {
        // OPENAI_BASE_URL alone: a compatible server, with no chat model named.
        let env = StandardEnv {
            openai_base_url: Some("http://127.0.0.1:11434/v1".into()),
            ..StandardEnv::default()
        };
        let mut s = Settings::default().with_standard_env(&env);
        assert_eq!(s.providers["openai"].model, None);
        s.embeddings.model = Some("nomic-embed-text".into());
        let e = s.clone().for_embeddings();
        assert_eq!(e.providers["openai"].model.as_deref(), Some("nomic-embed-text"));
        // A chat model that was named stays.
        s.providers.get_mut("openai").unwrap().model = Some("llama3.2".into());
        let e = s.clone().for_embeddings();
        assert_eq!(e.providers["openai"].model.as_deref(), Some("llama3.2"));
        // Without an embedding model there is nothing to fill in; embedding_model
        // says what is missing.
        s.embeddings.model = None;
        s.providers.get_mut("openai").unwrap().model = None;
        assert_eq!(s.for_embeddings().providers["openai"].model, None);
    }

    #[test]
    fn chain_errors() {
        let err = Settings::default().chain().unwrap_err();
        assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
        let mut s = Settings {
            default: Some("anthropic".into()),
            fallback: vec!["nope".into()],
            ..Settings::default()
        };
        s.providers.insert("anthropic".into(), ProviderSettings::default());
        let err = s.chain().unwrap_err();
        assert!(err.to_string().contains("\"nope\""), "{err}");
        let mut s = Settings::default();
        s.providers.insert("a".into(), ProviderSettings::default());
        s.providers.insert("b".into(), ProviderSettings::default());
        let err = s.with_standard_env(&StandardEnv::default()).chain().unwrap_err();
        assert!(err.to_string().contains("llm.default"), "{err}");
    }
}
