//! Shared helpers: settings pointing at mock servers, with short delays so the
//! fault scenarios run quickly.

mod embeddings;
mod faults;
mod ledger;
mod wire;

use llm::{
    BreakerPolicy, Llm, ProviderKind, ProviderSettings, RetryPolicy, Secret, Settings, StandardEnv,
    Timeouts,
};
use test_support::mock_llm::MockLlm;

pub const ANTHROPIC_KEY: &str = "sk-ant-test-SECRET-4242";
pub const OPENAI_KEY: &str = "sk-openai-test-SECRET-1717";

/// Retries quickly; generous timeouts (tests that need a timeout set their own).
pub fn base() -> Settings {
    Settings {
        timeouts: Timeouts {
            connect_secs: 5.0,
            first_token_secs: 20.0,
            idle_secs: 20.0,
            total_secs: 60.0,
        },
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay_ms: 10,
            max_delay_ms: 40,
            max_retry_after_secs: 5.0,
        },
        breaker: BreakerPolicy { failure_threshold: 100, open_secs: 30.0 },
        ..Settings::default()
    }
}

/// Anthropic on `a`, and OpenAI-compatible on `o`, through the standard variables.
pub fn env_settings(mut s: Settings, a: Option<&MockLlm>, o: Option<&MockLlm>) -> Settings {
    let env = StandardEnv {
        anthropic_api_key: a.map(|_| Secret::new(ANTHROPIC_KEY)),
        anthropic_base_url: a.map(MockLlm::url),
        openai_api_key: o.map(|_| Secret::new(OPENAI_KEY)),
        openai_base_url: o.map(MockLlm::openai_url),
        openai_model: o.map(|_| "qwen2.5-coder:7b".to_owned()),
        ..StandardEnv::default()
    };
    s.prices.insert(
        "qwen2.5-coder*".into(),
        llm::Price { input: 1.0, output: 2.0, cache_read: None, cache_write: None },
    );
    s = s.with_standard_env(&env);
    s
}

pub fn anthropic(mock: &MockLlm) -> Llm {
    Llm::new(&env_settings(base(), Some(mock), None)).unwrap()
}

/// OpenAI proper (kind `openai`) at the mock's URL.
pub fn openai(mock: &MockLlm) -> Llm {
    let mut s = base();
    s.providers.insert(
        "openai".into(),
        ProviderSettings {
            kind: Some(ProviderKind::Openai),
            base_url: Some(mock.openai_url()),
            api_key: Some(Secret::new(OPENAI_KEY)),
            model: Some("gpt-4o".into()),
            ..ProviderSettings::default()
        },
    );
    Llm::new(&s.with_standard_env(&StandardEnv::default())).unwrap()
}

pub fn compatible(mock: &MockLlm) -> Llm {
    Llm::new(&compatible_settings(mock)).unwrap()
}

/// One OpenAI-compatible provider, `local`, at the mock's URL.
pub fn compatible_settings(mock: &MockLlm) -> Settings {
    let mut s = base();
    s.providers.insert(
        "local".into(),
        ProviderSettings {
            kind: Some(ProviderKind::OpenaiCompatible),
            base_url: Some(mock.openai_url()),
            model: Some("llama3.2".into()),
            max_tokens: Some(256),
            ..ProviderSettings::default()
        },
    );
    s.with_standard_env(&StandardEnv::default())
}

/// Collects stream events as text for assertions.
#[derive(Default)]
pub struct Events(pub Vec<llm::StreamEvent>);

impl Events {
    pub fn text(&self) -> String {
        let mut s = String::new();
        for e in &self.0 {
            match e {
                llm::StreamEvent::TextDelta { text } => s.push_str(text),
                llm::StreamEvent::Reset { .. } => s.clear(),
                _ => {}
            }
        }
        s
    }

    pub fn count(&self, pred: impl Fn(&llm::StreamEvent) -> bool) -> usize {
        self.0.iter().filter(|e| pred(e)).count()
    }
}
