//! When to try again, and how long to wait: a pure function of the error, the
//! attempt number and the policy, tested as a table.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorClass};

/// `llm.retry` in the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts per provider, the first included (1 = no retry).
    pub max_attempts: u32,
    /// The first backoff; doubles with each attempt.
    pub base_delay_ms: u64,
    /// The backoff never exceeds this.
    pub max_delay_ms: u64,
    /// A `Retry-After` longer than this is not waited for: the fallback provider
    /// takes over instead (or the call fails with LLM_RATE_LIMITED).
    pub max_retry_after_secs: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay_ms: 500,
            max_delay_ms: 20_000,
            max_retry_after_secs: 60.0,
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RetryDecision {
    /// Try this provider again after the delay.
    RetryAfter(Duration),
    /// Give up on this provider; the fallback chain decides what is next.
    NextProvider,
    /// Give up on the call (budget, cancellation, a refused request).
    Stop,
}

/// Decides after attempt number `attempt` (1-based) failed with `err`. `jitter` is a
/// uniform random number in [0, 1): the backoff is "equal jitter" — half fixed, half
/// random — so clients that failed together do not retry together.
pub fn decide(err: &Error, attempt: u32, policy: &RetryPolicy, jitter: f64) -> RetryDecision {
    let backoff = || {
        let exp = policy.base_delay_ms.saturating_mul(1u64 << (attempt - 1).min(20));
        let capped = exp.min(policy.max_delay_ms) as f64;
        Duration::from_millis((capped / 2.0 + capped / 2.0 * jitter) as u64)
    };
    match err.class() {
        ErrorClass::Stop | ErrorClass::Caller => RetryDecision::Stop,
        ErrorClass::ProviderDown => RetryDecision::NextProvider,
        _ if attempt >= policy.max_attempts => RetryDecision::NextProvider,
        ErrorClass::Transient(None) => RetryDecision::RetryAfter(backoff()),
        ErrorClass::Transient(Some(after)) => {
            if after.as_secs_f64() > policy.max_retry_after_secs {
                RetryDecision::NextProvider
            } else {
                // The server's word is the floor; jitter on top spreads the herd.
                RetryDecision::RetryAfter(after + Duration::from_millis((jitter * 100.0) as u64))
            }
        }
    }
}

/// Parses a `Retry-After` value: delay-seconds or an HTTP-date (RFC 9110 §10.2.3),
/// plus the `retry-after-ms` form OpenAI sends. Dates in the past mean "now".
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 3,
            base_delay_ms: 100,
            max_delay_ms: 300,
            max_retry_after_secs: 5.0,
        }
    }

    fn net() -> Error {
        Error::Network { provider: "p".into(), message: "reset".into() }
    }

    fn limited(after: Option<f64>) -> Error {
        Error::RateLimited {
            provider: "p".into(),
            retry_after: after.map(Duration::from_secs_f64),
            message: String::new(),
        }
    }

    #[test]
    fn decisions() {
        use RetryDecision::*;
        let ms = Duration::from_millis;
        let table: Vec<(Error, u32, f64, RetryDecision)> = vec![
            // exponential, equal jitter: [cap/2, cap)
            (net(), 1, 0.0, RetryAfter(ms(50))),
            (net(), 1, 0.999, RetryAfter(ms(99))),
            (net(), 2, 0.0, RetryAfter(ms(100))),
            (net(), 3, 0.0, NextProvider), // attempts used up
            // capped at max_delay
            (net(), 2, 0.5, RetryAfter(ms(150))),
            (
                Error::Server {
                    provider: "p".into(),
                    status: 503,
                    message: String::new(),
                    retry_after: None,
                },
                1,
                0.0,
                RetryAfter(ms(50)),
            ),
            (
                Error::BadResponse { provider: "p".into(), message: String::new() },
                1,
                0.0,
                RetryAfter(ms(50)),
            ),
            // Retry-After is the floor
            (limited(Some(2.0)), 1, 0.0, RetryAfter(ms(2000))),
            (limited(Some(2.0)), 1, 0.5, RetryAfter(ms(2050))),
            (limited(None), 1, 0.0, RetryAfter(ms(50))),
            // a 503 with Retry-After is honored too
            (
                Error::Server {
                    provider: "p".into(),
                    status: 503,
                    message: String::new(),
                    retry_after: Some(ms(1500)),
                },
                1,
                0.0,
                RetryAfter(ms(1500)),
            ),
            // too long to wait: hand over
            (limited(Some(30.0)), 1, 0.0, NextProvider),
            (limited(Some(2.0)), 3, 0.0, NextProvider),
            (
                Error::Unauthorized { provider: "p".into(), status: 401, message: String::new() },
                1,
                0.0,
                NextProvider,
            ),
            (
                Error::Rejected { provider: "p".into(), status: 400, message: String::new() },
                1,
                0.0,
                Stop,
            ),
            (Error::Cancelled, 1, 0.0, Stop),
            (Error::BudgetExceeded { scope: "session".into(), what: String::new() }, 1, 0.0, Stop),
        ];
        for (err, attempt, jitter, want) in table {
            assert_eq!(decide(&err, attempt, &p(), jitter), want, "{err} attempt {attempt}");
        }
    }

    #[test]
    fn large_attempt_numbers_do_not_overflow() {
        let policy = RetryPolicy { max_attempts: 1000, ..p() };
        assert_eq!(
            decide(&net(), 200, &policy, 0.0),
            RetryDecision::RetryAfter(Duration::from_millis(150))
        );
    }

    #[test]
    fn retry_after_forms() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(" 0.5 ", now), Some(Duration::from_millis(500)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
    }
}
