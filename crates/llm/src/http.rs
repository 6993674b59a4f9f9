//! One attempt against one provider over HTTP: build the request, enforce the
//! timeouts and cancellation, classify failures, decode JSON or SSE.

use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::{
    anthropic,
    error::{Error, Result, TimeoutPhase, scrub_body},
    openai,
    retry::parse_retry_after,
    secret::Secret,
    settings::{ProviderKind, Timeouts},
    sse::SseParser,
    types::{Request, StreamEvent},
    wire::{CallShape, DecodeError, Decoder, Parsed},
};

/// A configured provider, ready to call.
#[derive(Debug)]
pub(crate) struct HttpProvider {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub prompt_caching: bool,
    key: Option<Secret>,
    timeouts: Timeouts,
    client: reqwest::Client,
}

/// What one successful attempt produced.
pub(crate) struct Attempt {
    pub parsed: Parsed,
    pub latency: Duration,
}

/// Receives stream events; an `Err` stops the stream with that error (a budget).
pub(crate) type Sink<'a> = &'a mut (dyn FnMut(StreamEvent) -> Result<()> + Send);

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s.max(0.0)).unwrap_or(Duration::MAX)
}

impl HttpProvider {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        kind: ProviderKind,
        base_url: String,
        key: Option<Secret>,
        model: String,
        max_tokens: Option<u32>,
        temperature: Option<f32>,
        prompt_caching: bool,
        timeouts: Timeouts,
        proxy: Option<&str>,
        no_proxy: Option<&str>,
    ) -> Result<HttpProvider> {
        let url = match kind {
            ProviderKind::Anthropic => anthropic::url(&base_url),
            _ => openai::url(&base_url),
        };
        reqwest::Url::parse(&url)
            .map_err(|e| Error::Config(format!("provider {name:?}: base URL {base_url:?}: {e}")))?;
        // reqwest is built without a default TLS provider so the slow-to-build
        // aws-lc-sys stays out; ring is installed once for the process. An error
        // means another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // Proxies come from the configuration only: the binary reads HTTPS_PROXY and
        // friends, so this crate never looks at the environment.
        let mut builder = reqwest::Client::builder()
            .connect_timeout(secs(timeouts.connect_secs))
            .user_agent(concat!("ironbees/", env!("CARGO_PKG_VERSION")))
            .no_proxy();
        if let Some(p) = proxy.filter(|p| !p.is_empty()) {
            let proxy = reqwest::Proxy::all(p)
                .map_err(|e| Error::Config(format!("proxy {p:?}: {e}")))?
                .no_proxy(no_proxy.and_then(reqwest::NoProxy::from_string));
            builder = builder.proxy(proxy);
        }
        let client = builder
            .build()
            .map_err(|e| Error::Config(format!("provider {name:?}: HTTP client: {e}")))?;
        Ok(HttpProvider {
            name,
            kind,
            base_url,
            model,
            max_tokens,
            temperature,
            prompt_caching,
            key,
            timeouts,
            client,
        })
    }

    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    fn url(&self) -> String {
        match self.kind {
            ProviderKind::Anthropic => anthropic::url(&self.base_url),
            _ => openai::url(&self.base_url),
        }
    }

    fn headers(&self, stream: bool) -> Result<HeaderMap> {
        let mut h = HeaderMap::new();
        h.insert("content-type", HeaderValue::from_static("application/json"));
        if stream {
            h.insert("accept", HeaderValue::from_static("text/event-stream"));
        }
        let secret = |prefix: &str, key: &Secret| {
            let mut v =
                HeaderValue::from_str(&format!("{prefix}{}", key.expose())).map_err(|_| {
                    Error::Config(format!(
                        "provider {:?}: the API key has characters a header cannot carry",
                        self.name
                    ))
                })?;
            v.set_sensitive(true); // never shown by http's Debug or by logging layers
            Ok::<_, Error>(v)
        };
        match (self.kind, &self.key) {
            (ProviderKind::Anthropic, key) => {
                h.insert("anthropic-version", HeaderValue::from_static(anthropic::API_VERSION));
                if let Some(k) = key {
                    h.insert("x-api-key", secret("", k)?);
                }
            }
            (_, Some(k)) => {
                h.insert("authorization", secret("Bearer ", k)?);
            }
            (_, None) => {}
        }
        Ok(h)
    }

    /// One attempt. Events go to `sink` as they arrive (stream mode); cancellation
    /// and every timeout drop the response, which closes the connection.
    pub async fn attempt(
        &self,
        req: &Request,
        stream: bool,
        sink: Sink<'_>,
        cancel: &CancellationToken,
    ) -> Result<Attempt> {
        let start = Instant::now();
        let total = secs(self.timeouts.total_secs);
        let work = tokio::time::timeout(total, self.exchange(req, stream, sink, start));
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                debug!(provider = %self.name, "cancelled; closing the connection");
                Err(Error::Cancelled)
            }
            r = work => match r {
                Ok(r) => r.map(|parsed| Attempt { parsed, latency: start.elapsed() }),
                Err(_) => Err(Error::Timeout { provider: self.name.clone(), phase: TimeoutPhase::Total, after: total }),
            },
        }
    }

    async fn exchange(
        &self,
        req: &Request,
        stream: bool,
        sink: Sink<'_>,
        start: Instant,
    ) -> Result<Parsed> {
        let model = req.model.as_deref().unwrap_or(&self.model);
        let shape = CallShape {
            kind: self.kind,
            model,
            max_tokens: req.max_tokens.or(self.max_tokens),
            temperature: req.temperature.or(self.temperature),
            prompt_caching: self.prompt_caching,
            stream,
        };
        let body = match self.kind {
            ProviderKind::Anthropic => anthropic::body(req, &shape),
            _ => openai::body(req, &shape),
        };
        let bytes = serde_json::to_vec(&body).expect("a JSON value serializes");
        debug!(provider = %self.name, model, stream, bytes = bytes.len(), "sending request");
        let first_deadline = start + secs(self.timeouts.first_token_secs);
        let send = self.client.post(self.url()).headers(self.headers(stream)?).body(bytes).send();
        // Without streaming, a server sends nothing until the whole answer is ready:
        // only the total timeout applies.
        let headers_deadline =
            if stream { first_deadline } else { start + secs(self.timeouts.total_secs) };
        let resp = match tokio::time::timeout_at(headers_deadline.into(), send).await {
            Err(_) if stream => {
                return Err(self.timeout(TimeoutPhase::FirstToken, self.timeouts.first_token_secs));
            }
            Err(_) => return Err(self.timeout(TimeoutPhase::Total, self.timeouts.total_secs)),
            Ok(Err(e)) => return Err(self.transport_error(&e)),
            Ok(Ok(r)) => r,
        };
        let status = resp.status();
        debug!(provider = %self.name, status = status.as_u16(), "response headers");
        if !status.is_success() {
            let retry_after = retry_after(resp.headers());
            let body = tokio::time::timeout(secs(self.timeouts.idle_secs), resp.bytes())
                .await
                .ok()
                .and_then(|r| r.ok())
                .unwrap_or_default();
            return Err(self.status_error(status.as_u16(), retry_after, &body));
        }
        if !stream {
            let body = resp.bytes().await.map_err(|e| self.transport_error(&e))?;
            let parse = match self.kind {
                ProviderKind::Anthropic => anthropic::parse(&body),
                _ => openai::parse(&body),
            };
            return parse.map_err(|e| self.decode_error(e));
        }
        let mut decoder: Box<dyn Decoder> = match self.kind {
            ProviderKind::Anthropic => Box::<anthropic::StreamDecoder>::default(),
            _ => Box::<openai::StreamDecoder>::default(),
        };
        let mut parser = SseParser::new();
        let mut body = resp.bytes_stream();
        let mut first = true;
        let mut finished = false;
        // The start of the body, to show when it held no events at all.
        let mut head: Vec<u8> = Vec::new();
        let mut events = Vec::new();
        while !finished {
            let (deadline, phase, limit) = if first {
                (first_deadline, TimeoutPhase::FirstToken, self.timeouts.first_token_secs)
            } else {
                (
                    Instant::now() + secs(self.timeouts.idle_secs),
                    TimeoutPhase::Idle,
                    self.timeouts.idle_secs,
                )
            };
            let chunk = match tokio::time::timeout_at(deadline.into(), body.next()).await {
                Err(_) => return Err(self.timeout(phase, limit)),
                Ok(None) => break,
                Ok(Some(Err(e))) => return Err(self.transport_error(&e)),
                Ok(Some(Ok(c))) => c,
            };
            if head.len() < 300 {
                head.extend(chunk.iter().take(300 - head.len()));
            }
            for ev in parser.feed(&chunk) {
                first = false;
                finished = decoder.event(&ev, &mut events).map_err(|e| self.decode_error(e))?;
                for e in events.drain(..) {
                    sink(e)?;
                }
                if finished {
                    break;
                }
            }
        }
        if first {
            // Not one event: the server did not speak SSE (a proxy's page, a JSON error).
            let got = scrub_body(&head, self.key.as_ref().map(Secret::expose));
            return Err(Error::BadResponse {
                provider: self.name.clone(),
                message: format!("expected server-sent events, got: {got}"),
            });
        }
        decoder.finish().map_err(|e| self.decode_error(e))
    }

    /// One `POST /embeddings` attempt (OpenAI's format): the vectors of `texts`, in
    /// order. Only the total timeout applies, as to any answer sent all at once.
    pub async fn embed(
        &self,
        model: &str,
        texts: &[String],
        cancel: &CancellationToken,
    ) -> Result<openai::ParsedEmbeddings> {
        let total = secs(self.timeouts.total_secs);
        let work = async {
            let body = serde_json::to_vec(&openai::embeddings_body(model, texts))
                .expect("a JSON value serializes");
            debug!(provider = %self.name, model, inputs = texts.len(), "sending embeddings request");
            let resp = self
                .client
                .post(openai::embeddings_url(&self.base_url))
                .headers(self.headers(false)?)
                .body(body)
                .send()
                .await
                .map_err(|e| self.transport_error(&e))?;
            let status = resp.status();
            let retry_after = retry_after(resp.headers());
            let bytes = resp.bytes().await.map_err(|e| self.transport_error(&e))?;
            if !status.is_success() {
                return Err(self.status_error(status.as_u16(), retry_after, &bytes));
            }
            openai::parse_embeddings(&bytes, texts.len()).map_err(|e| self.decode_error(e))
        };
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(Error::Cancelled),
            r = tokio::time::timeout(total, work) => r.unwrap_or_else(|_| Err(self.timeout(TimeoutPhase::Total, self.timeouts.total_secs))),
        }
    }

    /// `GET /models` on an OpenAI-speaking server: the ids of the models it
    /// serves. Bounded by `limit` (a listing is small; a server that accepts the
    /// connection and never answers must not stall start-up).
    pub async fn list_models(
        &self,
        limit: Duration,
        cancel: &CancellationToken,
    ) -> Result<Vec<String>> {
        let work = async {
            let resp = self
                .client
                .get(openai::models_url(&self.base_url))
                .headers(self.headers(false)?)
                .send()
                .await
                .map_err(|e| self.transport_error(&e))?;
            let status = resp.status();
            let retry_after = retry_after(resp.headers());
            let bytes = resp.bytes().await.map_err(|e| self.transport_error(&e))?;
            if !status.is_success() {
                return Err(self.status_error(status.as_u16(), retry_after, &bytes));
            }
            openai::parse_models(&bytes)
                .map_err(|message| Error::BadResponse { provider: self.name.clone(), message })
        };
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(Error::Cancelled),
            r = tokio::time::timeout(limit, work) => r.unwrap_or_else(|_| Err(self.timeout(TimeoutPhase::Total, limit.as_secs_f64()))),
        }
    }

    fn timeout(&self, phase: TimeoutPhase, limit: f64) -> Error {
        Error::Timeout { provider: self.name.clone(), phase, after: secs(limit) }
    }

    fn transport_error(&self, e: &reqwest::Error) -> Error {
        if e.is_connect() && e.is_timeout() {
            return self.timeout(TimeoutPhase::Connect, self.timeouts.connect_secs);
        }
        // The innermost cause says what happened ("Connection refused", "connection
        // reset by peer"); reqwest's own wrapper adds only the URL.
        let mut inner = e.to_string();
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            inner = s.to_string();
            src = s.source();
        }
        let what = if e.is_connect() {
            format!("cannot connect to {}", redact_url(&self.base_url))
        } else if e.is_body() || e.is_decode() {
            "reading the response".to_owned()
        } else {
            "sending the request".to_owned()
        };
        let mut message = format!("{what}: {inner}");
        if let Some(k) = &self.key {
            message = message.replace(k.expose(), "***");
        }
        Error::Network { provider: self.name.clone(), message }
    }

    fn status_error(&self, status: u16, retry_after: Option<Duration>, body: &[u8]) -> Error {
        let message = scrub_body(body, self.key.as_ref().map(Secret::expose));
        classify_status(&self.name, status, retry_after, message)
    }

    fn decode_error(&self, e: DecodeError) -> Error {
        match e {
            DecodeError::Bad(message) => {
                Error::BadResponse { provider: self.name.clone(), message }
            }
            DecodeError::Server(message) => {
                let message = match &self.key {
                    Some(k) => message.replace(k.expose(), "***"),
                    None => message,
                };
                // Anthropic's mid-stream `overloaded_error` is its 529.
                Error::Server {
                    provider: self.name.clone(),
                    status: 200,
                    message,
                    retry_after: None,
                }
            }
        }
    }
}

/// A URL fit to show: a password and query values (`?api-key=...`, as some
/// gateways take keys) become `***`.
pub(crate) fn redact_url(url: &str) -> String {
    let Ok(mut u) = reqwest::Url::parse(url) else { return url.to_owned() };
    if u.password().is_none() && u.query().is_none() {
        return url.to_owned(); // as the user wrote it (no normalizing slash)
    }
    if u.password().is_some() {
        let _ = u.set_password(Some("***"));
    }
    if u.query().is_some() {
        let pairs: Vec<(String, String)> =
            u.query_pairs().map(|(k, _)| (k.into_owned(), "***".to_owned())).collect();
        u.query_pairs_mut().clear().extend_pairs(pairs);
    }
    u.to_string()
}

/// `Retry-After` (seconds or a date), or OpenAI's `retry-after-ms`.
fn retry_after(h: &HeaderMap) -> Option<Duration> {
    let ms = h
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0);
    if let Some(ms) = ms {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    parse_retry_after(h.get("retry-after")?.to_str().ok()?, SystemTime::now())
}

/// An HTTP status to the error it stands for.
pub(crate) fn classify_status(
    provider: &str,
    status: u16,
    retry_after: Option<Duration>,
    message: String,
) -> Error {
    let provider = provider.to_owned();
    match status {
        // OpenAI answers 429 for an exhausted quota too; waiting does not help.
        429 if message.contains("quota") => Error::Unauthorized { provider, status, message },
        429 => Error::RateLimited { provider, retry_after, message },
        401 | 403 => Error::Unauthorized { provider, status, message },
        404 => Error::NotFound { provider, message },
        // Timeout, conflict (OpenAI says retry), and every server error incl. 529.
        408 | 409 | 500..=599 => Error::Server { provider, status, message, retry_after },
        _ => Error::Rejected { provider, status, message },
    }
}

#[cfg(test)]
mod tests {
    use protocol::ErrorCode;

    use super::*;

    #[test]
    fn statuses() {
        let table = [
            (429, "slow down", ErrorCode::LlmRateLimited),
            (429, "You exceeded your current quota", ErrorCode::LlmUnavailable),
            (401, "bad key", ErrorCode::LlmUnavailable),
            (403, "forbidden", ErrorCode::LlmUnavailable),
            (400, "bad schema", ErrorCode::InvalidArgument),
            (404, "no such model", ErrorCode::LlmUnavailable),
            (422, "bad schema", ErrorCode::InvalidArgument),
            (500, "oops", ErrorCode::LlmUnavailable),
            (529, "overloaded", ErrorCode::LlmUnavailable),
            (408, "timeout", ErrorCode::LlmUnavailable),
        ];
        for (status, msg, code) in table {
            assert_eq!(
                classify_status("p", status, None, msg.into()).code(),
                code,
                "{status} {msg}"
            );
        }
    }

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(
            redact_url("https://u:pw@x.example/v1?api-key=k&v=2"),
            "https://u:***@x.example/v1?api-key=***&v=***"
        );
        assert_eq!(redact_url("https://api.openai.com/v1"), "https://api.openai.com/v1");
        assert_eq!(redact_url("https://api.anthropic.com"), "https://api.anthropic.com");
    }

    #[test]
    fn retry_after_headers() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }
}
