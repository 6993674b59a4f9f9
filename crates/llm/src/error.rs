//! The one error type of the crate, with its machine codes and its retry class.

use std::time::Duration;

use protocol::{ErrorCode, ErrorInfo};

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which timeout fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Establishing the TCP/TLS connection.
    Connect,
    /// Streaming: from sending the request to the first event.
    FirstToken,
    /// Silence between two chunks of a stream.
    Idle,
    /// The whole attempt.
    Total,
}

impl std::fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "connect",
            TimeoutPhase::FirstToken => "first-token",
            TimeoutPhase::Idle => "idle",
            TimeoutPhase::Total => "total",
        })
    }
}

/// Everything a model call can fail with. Messages never contain an API key: keys
/// live in [`crate::Secret`], and server error bodies are cut short and scrubbed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The connection failed or broke (refused, reset, DNS, TLS). Retried; counts
    /// against the circuit breaker. `LLM_UNAVAILABLE`.
    #[error("{provider}: network error: {message}")]
    Network { provider: String, message: String },
    /// A timeout fired. Retried; counts against the breaker. `LLM_UNAVAILABLE`.
    #[error("{provider}: no {phase} within {:.1}s", after.as_secs_f64())]
    Timeout { provider: String, phase: TimeoutPhase, after: Duration },
    /// HTTP 429. Retried after `Retry-After` (when it is not too long); counts
    /// against the breaker. `LLM_RATE_LIMITED`.
    #[error("{provider}: rate limited (HTTP 429){}: {message}", retry_after.map(|d| format!(", retry after {:.1}s", d.as_secs_f64())).unwrap_or_default())]
    RateLimited { provider: String, retry_after: Option<Duration>, message: String },
    /// HTTP 5xx (including Anthropic's 529 "overloaded"), or an error event inside a
    /// stream (status 200). Retried, after `Retry-After` when the server sent one;
    /// counts against the breaker. `LLM_UNAVAILABLE`.
    #[error("{provider}: server error (HTTP {status}): {message}")]
    Server { provider: String, status: u16, message: String, retry_after: Option<Duration> },
    /// HTTP 401/403: the key is missing, wrong or not allowed. Not retried; the
    /// fallback provider takes over. `LLM_UNAVAILABLE`.
    #[error("{provider}: not authorized (HTTP {status}): {message}")]
    Unauthorized { provider: String, status: u16, message: String },
    /// HTTP 404: a wrong base URL or an unknown model. Not retried; the fallback
    /// provider takes over. `LLM_UNAVAILABLE`.
    #[error("{provider}: endpoint or model not found (HTTP 404): {message}")]
    NotFound { provider: String, message: String },
    /// Another 4xx: the request itself was refused (malformed, context too long,
    /// a schema the server rejects). Not retried, no fallback. `INVALID_ARGUMENT`.
    #[error("{provider}: request refused (HTTP {status}): {message}")]
    Rejected { provider: String, status: u16, message: String },
    /// The response was not what the wire format promises (malformed JSON, a
    /// truncated stream, a structured answer that is not JSON). Retried.
    /// `LLM_BAD_RESPONSE`.
    #[error("{provider}: bad response: {message}")]
    BadResponse { provider: String, message: String },
    /// The provider's circuit breaker is open after repeated failures; no request
    /// was sent. The fallback provider takes over. `LLM_UNAVAILABLE`.
    #[error(
        "{provider}: circuit open after repeated failures ({}); next probe in {:.1}s",
        cause.as_deref().unwrap_or("the last one is not known"),
        retry_in.as_secs_f64()
    )]
    CircuitOpen {
        provider: String,
        retry_in: Duration,
        /// The last failure that counted towards opening it (a refused
        /// connection, a 503): the cause the user needs, not the breaker's state.
        cause: Option<String>,
    },
    /// A hard token or USD budget is spent; the call was refused or its stream
    /// stopped. Never retried. `BUDGET_EXCEEDED`.
    #[error("budget exceeded: {scope} {what}")]
    BudgetExceeded { scope: String, what: String },
    /// The caller cancelled; the connection was closed. `CANCELLED`.
    #[error("cancelled")]
    Cancelled,
    /// The configuration cannot work (no provider, unknown name, bad URL, no price
    /// for a USD budget). `INVALID_ARGUMENT`.
    #[error("llm configuration: {0}")]
    Config(String),
    /// Every provider in the chain failed; `last` is the final error, `tried` lists
    /// each provider's failure in order. The code is `last`'s.
    #[error("all providers failed ({}); last: {last}", tried.join("; "))]
    Exhausted { tried: Vec<String>, last: Box<Error> },
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Network { .. }
            | Error::Timeout { .. }
            | Error::Server { .. }
            | Error::Unauthorized { .. }
            | Error::NotFound { .. }
            | Error::CircuitOpen { .. } => ErrorCode::LlmUnavailable,
            Error::RateLimited { .. } => ErrorCode::LlmRateLimited,
            Error::BadResponse { .. } => ErrorCode::LlmBadResponse,
            Error::Rejected { .. } | Error::Config(_) => ErrorCode::InvalidArgument,
            Error::BudgetExceeded { .. } => ErrorCode::BudgetExceeded,
            Error::Cancelled => ErrorCode::Cancelled,
            Error::Exhausted { last, .. } => last.code(),
        }
    }

    pub fn to_info(&self) -> ErrorInfo {
        ErrorInfo::new(self.code(), self.to_string())
    }

    /// The retry class, used by [`crate::retry::decide`] and the breaker.
    pub(crate) fn class(&self) -> ErrorClass {
        match self {
            Error::Network { .. } | Error::Timeout { .. } | Error::BadResponse { .. } => {
                ErrorClass::Transient(None)
            }
            Error::Server { retry_after, .. } | Error::RateLimited { retry_after, .. } => {
                ErrorClass::Transient(*retry_after)
            }
            Error::Unauthorized { .. } | Error::NotFound { .. } | Error::CircuitOpen { .. } => {
                ErrorClass::ProviderDown
            }
            Error::Rejected { .. } | Error::Config(_) => ErrorClass::Caller,
            Error::BudgetExceeded { .. } | Error::Cancelled => ErrorClass::Stop,
            Error::Exhausted { last, .. } => last.class(),
        }
    }
}

/// How the client reacts to an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    /// Retry on this provider (waiting at least the server's `Retry-After` when
    /// given), then fall back. Counts against the breaker.
    Transient(Option<Duration>),
    /// Do not retry this provider; fall back. Counts against the breaker.
    ProviderDown,
    /// The request is at fault: no retry, no fallback, no breaker count.
    Caller,
    /// Stop everything now (budget, cancellation).
    Stop,
}

/// Cuts a server's error body to something short and safe to show: at most 300
/// characters, the `message` field when the body is a JSON error object, and any
/// occurrence of the key replaced (some proxies echo request headers).
pub(crate) fn scrub_body(body: &[u8], secret: Option<&str>) -> String {
    let text = String::from_utf8_lossy(body);
    let msg = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| {
            let e = v.get("error").unwrap_or(&v);
            e.get("message")
                .and_then(|m| m.as_str())
                .map(str::to_owned)
                .or_else(|| e.as_str().map(str::to_owned))
        })
        .unwrap_or_else(|| text.trim().to_owned());
    let mut msg: String = msg.chars().take(300).collect();
    if let Some(s) = secret.filter(|s| s.len() >= 4) {
        msg = msg.replace(s, "***");
    }
    if msg.is_empty() { "(empty body)".to_owned() } else { msg }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_prefers_the_message_and_hides_the_key() {
        let body = br#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-ant-SECRET"}}"#;
        assert_eq!(scrub_body(body, Some("sk-ant-SECRET")), "invalid x-api-key ***");
        assert_eq!(scrub_body(b"<html>bad gateway</html>", None), "<html>bad gateway</html>");
        assert_eq!(scrub_body(b"", None), "(empty body)");
        let long = "x".repeat(1000);
        assert_eq!(scrub_body(long.as_bytes(), None).len(), 300);
    }

    #[test]
    fn codes() {
        let p = || "p".to_owned();
        let table: Vec<(Error, ErrorCode)> = vec![
            (Error::Network { provider: p(), message: String::new() }, ErrorCode::LlmUnavailable),
            (
                Error::RateLimited { provider: p(), retry_after: None, message: String::new() },
                ErrorCode::LlmRateLimited,
            ),
            (
                Error::BadResponse { provider: p(), message: String::new() },
                ErrorCode::LlmBadResponse,
            ),
            (
                Error::BudgetExceeded { scope: "session".into(), what: String::new() },
                ErrorCode::BudgetExceeded,
            ),
            (Error::Cancelled, ErrorCode::Cancelled),
            (
                Error::Rejected { provider: p(), status: 400, message: String::new() },
                ErrorCode::InvalidArgument,
            ),
            (
                Error::Exhausted {
                    tried: vec![],
                    last: Box::new(Error::RateLimited {
                        provider: p(),
                        retry_after: None,
                        message: String::new(),
                    }),
                },
                ErrorCode::LlmRateLimited,
            ),
        ];
        for (e, code) in table {
            assert_eq!(e.code(), code, "{e}");
        }
    }
}
