//! NOTIFY: the pipeline's summary to Slack, by the Web API's `chat.postMessage`
//! (a bot token and a channel) or an incoming webhook.
//!
//! A 429 is retried after its `Retry-After` (capped), a bounded number of
//! times; anything else that is not an answer with `"ok": true` is recorded as
//! a failed notification. A notification never fails the pipeline: the push it
//! reports on is done.

use std::time::Duration;

use protocol::{NotifyResult, SlackConfig, StageStatus};

const DEFAULT_BASE: &str = "https://slack.com/api";
/// The longest `Retry-After` honoured; a longer one is waited as this long.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// Whether the configuration asks for notifications at all.
pub(crate) fn enabled(cfg: &SlackConfig) -> bool {
    let has_target = cfg.webhook_url.is_some() || (cfg.token.is_some() && cfg.channel_id.is_some());
    has_target && cfg.enable_notifications.unwrap_or(true)
}

/// Posts `text`; the result says how it went, never an error.
pub(crate) fn post(cfg: &SlackConfig, text: &str, rt: &tokio::runtime::Handle) -> NotifyResult {
    let mut result = NotifyResult {
        status: StageStatus::Failed,
        channel_id: cfg.channel_id.clone(),
        ..NotifyResult::default()
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = match reqwest::Client::builder().timeout(Duration::from_secs(20)).build() {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(format!("cannot build the HTTP client: {e}"));
            return result;
        }
    };
    let (url, body, token) = match (&cfg.webhook_url, &cfg.token, &cfg.channel_id) {
        (Some(hook), _, _) => (hook.clone(), serde_json::json!({ "text": text }), None),
        (None, Some(token), Some(channel)) => {
            let base = cfg.base_url.as_deref().unwrap_or(DEFAULT_BASE).trim_end_matches('/');
            let body = serde_json::json!({ "channel": channel, "text": text });
            (format!("{base}/chat.postMessage"), body, Some(token.clone()))
        }
        _ => {
            result.status = StageStatus::Skipped;
            return result;
        }
    };
    let retries = cfg.max_retries.unwrap_or(3);
    loop {
        result.attempts += 1;
        let mut req = client
            .post(&url)
            .header("content-type", "application/json; charset=utf-8")
            .body(body.to_string());
        if let Some(t) = &token {
            req = req.bearer_auth(t);
        }
        let answer = rt.block_on(async {
            let resp = req.send().await?;
            let status = resp.status().as_u16();
            let retry_after =
                resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let text = resp.text().await?;
            Ok::<_, reqwest::Error>((status, retry_after, text))
        });
        match answer {
            Err(e) => {
                // The URL may carry a webhook's secret path: say what failed, not where.
                result.error = Some(format!("Slack unreachable: {}", e.without_url()));
                return result;
            }
            Ok((429, retry_after, _)) if result.attempts <= retries => {
                let wait = retry_wait(retry_after.as_deref());
                tracing::debug!(?wait, "slack: 429, retrying");
                std::thread::sleep(wait);
            }
            Ok((200, _, text)) => {
                match judge(&text) {
                    Ok(()) => {
                        result.status = StageStatus::Success;
                        result.sent_messages = 1;
                        result.error = None;
                    }
                    Err(e) => result.error = Some(e),
                }
                return result;
            }
            Ok((status, _, text)) => {
                result.error =
                    Some(format!("Slack answered {status}: {}", stdx::clip(text.trim(), 300)));
                return result;
            }
        }
    }
}

/// A webhook answers `ok`; the Web API a JSON object with `ok`.
fn judge(body: &str) -> Result<(), String> {
    if body.trim() == "ok" {
        return Ok(());
    }
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(v) if v["ok"] == true => Ok(()),
        Ok(v) => Err(format!("Slack refused: {}", v["error"].as_str().unwrap_or("unknown error"))),
        Err(_) => Err(format!("Slack answered something else: {}", stdx::clip(body.trim(), 200))),
    }
}

/// `Retry-After` as seconds or an HTTP date, at most [`MAX_WAIT`]; one second
/// when absent or unreadable.
fn retry_wait(value: Option<&str>) -> Duration {
    let Some(v) = value.map(str::trim) else { return Duration::from_secs(1) };
    if let Ok(secs) = v.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Duration::from_secs_f64(secs).min(MAX_WAIT);
    }
    if let Ok(at) = httpdate::parse_http_date(v) {
        let wait = at.duration_since(std::time::SystemTime::now()).unwrap_or_default();
        return wait.min(MAX_WAIT);
    }
    Duration::from_secs(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_judged_by_their_ok() {
        let cases = [
            ("ok", true),
            (r#"{"ok":true,"channel":"C1"}"#, true),
            (r#"{"ok":false,"error":"channel_not_found"}"#, false),
            ("<html>", false),
        ];
        for (body, ok) in cases {
            assert_eq!(judge(body).is_ok(), ok, "{body}");
        }
    }

    #[test]
    fn retry_after_is_read_and_capped() {
        let cases = [
            (None, 1.0),
            (Some("2"), 2.0),
            (Some("0.5"), 0.5),
            (Some("3600"), 30.0),
            (Some("soon"), 1.0),
            (Some("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0),
        ];
        for (v, want) in cases {
            assert_eq!(retry_wait(v), Duration::from_secs_f64(want), "{v:?}");
        }
    }

    #[test]
    fn notifications_need_a_target() {
        let mut c = SlackConfig::default();
        assert!(!enabled(&c));
        c.token = Some("xoxb".into());
        assert!(!enabled(&c));
        c.channel_id = Some("C1".into());
        assert!(enabled(&c));
        c.enable_notifications = Some(false);
        assert!(!enabled(&c));
    }
}
