//! NOTIFY: the pipeline's summary to Slack, by the Web API's `chat.postMessage`
//! (a bot token and a channel) or an incoming webhook; and, after a push, the
//! seed's feedback matching (SlackAgent: "피드백 매칭 및 알림"): the channel's
//! recent messages (`conversations.history`) that talk about what the commit
//! fixed — the same issue reference (`#123`, `PROJ-12`) or most of its subject's
//! words — each get a threaded reply naming the pushed commit.
//!
//! A 429 is retried after its `Retry-After` (capped), a bounded number of
//! times; anything else that is not an answer with `"ok": true` is recorded as
//! a failed notification. A notification never fails the pipeline: the push it
//! reports on is done.

use std::time::Duration;

use protocol::{NotifyResult, SlackConfig, StageStatus};
use serde_json::Value;

const DEFAULT_BASE: &str = "https://slack.com/api";
/// The longest `Retry-After` honoured; a longer one is waited as this long.
const MAX_WAIT: Duration = Duration::from_secs(30);
/// How far back the channel is read for feedback (seconds).
const FEEDBACK_WINDOW: u64 = 14 * 24 * 3600;
/// At most this many replies per pipeline: a vague subject must not answer a
/// whole channel.
const MAX_REPLIES: usize = 5;

/// Whether the configuration asks for notifications at all.
pub(crate) fn enabled(cfg: &SlackConfig) -> bool {
    let has_target = cfg.webhook_url.is_some() || (cfg.token.is_some() && cfg.channel_id.is_some());
    has_target && cfg.enable_notifications.unwrap_or(true)
}

/// Whether feedback is matched: it reads the channel, so a token and a channel
/// (a webhook can only post), and `feedback` not turned off.
pub(crate) fn feedback_enabled(cfg: &SlackConfig) -> bool {
    enabled(cfg) && cfg.token.is_some() && cfg.channel_id.is_some() && cfg.feedback.unwrap_or(true)
}

/// Slack's Web API (or a webhook) for one stage: one client, every request
/// counted, 429s retried.
struct Api<'a> {
    cfg: &'a SlackConfig,
    rt: &'a tokio::runtime::Handle,
    client: reqwest::Client,
    attempts: u32,
}

impl<'a> Api<'a> {
    fn new(cfg: &'a SlackConfig, rt: &'a tokio::runtime::Handle) -> Result<Api<'a>, String> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Api { cfg, rt, client, attempts: 0 })
    }

    fn method_url(&self, method: &str) -> String {
        let base = self.cfg.base_url.as_deref().unwrap_or(DEFAULT_BASE).trim_end_matches('/');
        format!("{base}/{method}")
    }

    /// One call: a POST of `body` as JSON, or a GET when there is none; the
    /// answer's text when Slack said ok.
    fn call(
        &mut self,
        url: &str,
        body: Option<&Value>,
        token: Option<&str>,
    ) -> Result<String, String> {
        let retries = self.cfg.max_retries.unwrap_or(3);
        let mut tries = 0;
        loop {
            self.attempts += 1;
            tries += 1;
            let mut req = match body {
                Some(b) => self
                    .client
                    .post(url)
                    .header("content-type", "application/json; charset=utf-8")
                    .body(b.to_string()),
                None => self.client.get(url),
            };
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            let answer = self.rt.block_on(async {
                let resp = req.send().await?;
                let status = resp.status().as_u16();
                let retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let text = resp.text().await?;
                Ok::<_, reqwest::Error>((status, retry_after, text))
            });
            match answer {
                // The URL may carry a webhook's secret path: say what failed, not where.
                Err(e) => return Err(format!("Slack unreachable: {}", e.without_url())),
                Ok((429, retry_after, _)) if tries <= retries => {
                    let wait = retry_wait(retry_after.as_deref());
                    tracing::debug!(?wait, "slack: 429, retrying");
                    std::thread::sleep(wait);
                }
                Ok((200, _, text)) => return judge(&text).map(|()| text),
                Ok((status, _, text)) => {
                    return Err(format!(
                        "Slack answered {status}: {}",
                        stdx::clip(text.trim(), 300)
                    ));
                }
            }
        }
    }

    /// `chat.postMessage` to the configured channel (in a thread when `thread`).
    fn post_message(&mut self, text: &str, thread: Option<&str>) -> Result<(), String> {
        let (Some(token), Some(channel)) = (&self.cfg.token, &self.cfg.channel_id) else {
            return Err("no token and channel".into());
        };
        let mut body = serde_json::json!({ "channel": channel, "text": text });
        if let Some(ts) = thread {
            body["thread_ts"] = Value::String(ts.to_owned());
        }
        let url = self.method_url("chat.postMessage");
        self.call(&url, Some(&body), Some(token)).map(|_| ())
    }
}

/// Posts `text`; the result says how it went, never an error.
pub(crate) fn post(cfg: &SlackConfig, text: &str, rt: &tokio::runtime::Handle) -> NotifyResult {
    let mut result = NotifyResult {
        status: StageStatus::Failed,
        channel_id: cfg.channel_id.clone(),
        ..NotifyResult::default()
    };
    let mut api = match Api::new(cfg, rt) {
        Ok(a) => a,
        Err(e) => {
            result.error = Some(e);
            return result;
        }
    };
    let sent = match (&cfg.webhook_url, &cfg.token, &cfg.channel_id) {
        (Some(hook), _, _) => {
            api.call(hook, Some(&serde_json::json!({ "text": text })), None).map(|_| ())
        }
        (None, Some(_), Some(_)) => api.post_message(text, None),
        _ => {
            result.status = StageStatus::Skipped;
            return result;
        }
    };
    result.attempts = api.attempts;
    match sent {
        Ok(()) => {
            result.status = StageStatus::Success;
            result.sent_messages = 1;
        }
        Err(e) => result.error = Some(e),
    }
    result
}

/// A message of the channel that matched the commit.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Matched {
    pub ts: String,
    pub text: String,
}

/// The channel's recent messages by people (not bots, not joins) that match
/// `subject`, newest first, at most [`MAX_REPLIES`]; and the requests made.
pub(crate) fn matching_messages(
    cfg: &SlackConfig,
    subject: &str,
    now_secs: u64,
    rt: &tokio::runtime::Handle,
) -> (Result<Vec<Matched>, String>, u32) {
    let mut api = match Api::new(cfg, rt) {
        Ok(a) => a,
        Err(e) => return (Err(e), 0),
    };
    let (Some(token), Some(channel)) = (&cfg.token, &cfg.channel_id) else {
        return (Ok(Vec::new()), 0);
    };
    let oldest = now_secs.saturating_sub(FEEDBACK_WINDOW);
    let url = format!(
        "{}?channel={}&limit=200&oldest={oldest}",
        api.method_url("conversations.history"),
        crate::seed_layout::encode(channel)
    );
    let answer = api.call(&url, None, Some(token));
    let attempts = api.attempts;
    let text = match answer {
        Ok(t) => t,
        Err(e) => return (Err(e), attempts),
    };
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let matched = v["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m.get("bot_id").is_none() && m.get("subtype").is_none())
        .filter_map(|m| {
            Some(Matched { ts: m["ts"].as_str()?.to_owned(), text: m["text"].as_str()?.to_owned() })
        })
        .filter(|m| matches_commit(subject, &m.text))
        .take(MAX_REPLIES)
        .collect();
    (Ok(matched), attempts)
}

/// A threaded reply to one matched message.
pub(crate) fn reply(
    cfg: &SlackConfig,
    ts: &str,
    text: &str,
    rt: &tokio::runtime::Handle,
) -> (Result<(), String>, u32) {
    let mut api = match Api::new(cfg, rt) {
        Ok(a) => a,
        Err(e) => return (Err(e), 0),
    };
    let r = api.post_message(text, Some(ts));
    (r, api.attempts)
}

/// Words that say a change was made, not what it was about.
const CHANGE_WORDS: &[&str] = &[
    "fix", "fixed", "fixes", "fixing", "bug", "bugfix", "hotfix", "feature", "feat", "the", "and",
    "for", "with", "from", "into", "when", "add", "added", "adds", "update", "updated", "updates",
    "change", "changed", "issue", "make", "makes", "use", "not", "this", "that", "수정", "버그",
    "해결", "추가", "변경", "개선", "기능",
];

/// The issue references of a text: `#123` and `PROJ-12` style keys.
fn references(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '#' || c == '-')) {
        let w = word.trim_matches('-');
        let issue_number =
            w.len() > 1 && w.starts_with('#') && w[1..].bytes().all(|b| b.is_ascii_digit());
        let key = w.split_once('-').is_some_and(|(p, n)| {
            p.len() >= 2
                && p.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
                && p.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
        });
        if issue_number || key {
            out.push(w.to_owned());
        }
    }
    out
}

/// The words of a commit subject that say what it is about: the `[tag]` or
/// `type(scope):` prefix off, change words and short words dropped, lowercase.
fn subject_words(subject: &str) -> Vec<String> {
    let mut rest = subject.trim();
    if rest.starts_with('[')
        && let Some(end) = rest.find(']')
    {
        rest = &rest[end + 1..];
    } else if let Some((head, tail)) = rest.split_once(':')
        && !head.contains(' ')
        && head.len() <= 20
    {
        rest = tail;
    }
    let mut out: Vec<String> = Vec::new();
    for w in rest.split(|c: char| !c.is_alphanumeric()) {
        let w = w.to_lowercase();
        let ascii = w.is_ascii();
        let long_enough = if ascii { w.len() >= 3 } else { w.chars().count() >= 2 };
        if long_enough
            && !w.bytes().all(|b| b.is_ascii_digit())
            && !CHANGE_WORDS.contains(&w.as_str())
            && !out.contains(&w)
        {
            out.push(w);
        }
    }
    out
}

/// Whether a channel message talks about what the commit `subject` fixed: it
/// names the same issue reference, or it holds most of the subject's words (as
/// substrings, so "timeout이" holds "timeout"): at least two, and at least
/// three in five of them; a subject with one word matches on nothing but its
/// reference.
pub(crate) fn matches_commit(subject: &str, message: &str) -> bool {
    let refs = references(subject);
    if !refs.is_empty() && references(message).iter().any(|r| refs.contains(r)) {
        return true;
    }
    let words = subject_words(subject);
    if words.len() < 2 {
        return false;
    }
    let text = message.to_lowercase();
    let held = words.iter().filter(|w| text.contains(w.as_str())).count();
    held >= 2 && held * 5 >= words.len() * 3
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
    fn channel_messages_match_a_commit_by_its_reference_or_most_of_its_words() {
        let cases = [
            ("[hotfix] API timeout 수정", "API timeout이 계속 발생합니다", true),
            ("[hotfix] API timeout 수정", "the api is slow today", false),
            (
                "fix(auth): login fails with expired token",
                "Login fails when my token has expired",
                true,
            ),
            ("fix(auth): login fails with expired token", "login page looks odd", false),
            ("Fix crash on empty config (#482)", "anyone seen #482 again?", true),
            ("Fix crash on empty config (#482)", "see #48 for details", false),
            ("PROJ-12 handle null user", "PROJ-12 is blocking the release", true),
            ("PROJ-12 handle null user", "PROJ-123 is unrelated", false),
            ("fix typo", "there is a typo somewhere", false),
            ("[feature] v3", "v3 when?", false),
        ];
        for (subject, message, want) in cases {
            assert_eq!(matches_commit(subject, message), want, "{subject:?} ~ {message:?}");
        }
    }

    #[test]
    fn subjects_lose_their_prefix_and_change_words() {
        assert_eq!(subject_words("[hotfix] API timeout 수정"), ["api", "timeout"]);
        assert_eq!(subject_words("fix(db): retry the connection"), ["retry", "connection"]);
        assert_eq!(references("Fixes #12 and CORE-7, not #x or a-1"), ["#12", "CORE-7"]);
    }

    #[test]
    fn notifications_need_a_target() {
        let mut c = SlackConfig::default();
        assert!(!enabled(&c));
        c.token = Some("xoxb".into());
        assert!(!enabled(&c));
        c.channel_id = Some("C1".into());
        assert!(enabled(&c));
        assert!(feedback_enabled(&c));
        c.feedback = Some(false);
        assert!(enabled(&c) && !feedback_enabled(&c));
        c.enable_notifications = Some(false);
        assert!(!enabled(&c));
        let hook = SlackConfig { webhook_url: Some("https://hooks".into()), ..Default::default() };
        assert!(enabled(&hook) && !feedback_enabled(&hook), "a webhook cannot read the channel");
    }
}
