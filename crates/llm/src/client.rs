//! [`Llm`]: the fallback chain, with retries, a circuit breaker per provider and
//! the budget ledger around every attempt.

use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{Duration, Instant},
};

use serde::Serialize;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::{
    accounting::{Ledger, Price, PriceTable},
    anthropic,
    breaker::{Admit, Breaker, BreakerState},
    error::{Error, ErrorClass, Result, TimeoutPhase},
    http::{Attempt, HttpProvider},
    openai,
    retry::{RetryDecision, RetryPolicy, decide},
    settings::{
        ANTHROPIC_BASE_URL, ANTHROPIC_MODEL, EmbeddingSettings, OPENAI_BASE_URL,
        OPENAI_EMBEDDING_MODEL, OPENAI_MODEL, ProviderKind, Settings,
    },
    types::{Request, Response, StreamEvent, Usage},
};

/// Per-call options.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Cancelling ends the call promptly (the connection is closed) with
    /// [`Error::Cancelled`].
    pub cancel: CancellationToken,
    /// Accounting key: calls with the same workflow share its budget.
    pub workflow: Option<String>,
    /// Use only this provider: no fallback.
    pub provider: Option<String>,
}

/// What [`Llm::embed`] returns: one vector per input text, in order.
#[derive(Debug, Clone)]
pub struct Embeddings {
    pub provider: String,
    /// The model asked for (vectors of two models never mix).
    pub model: String,
    pub vectors: Vec<Vec<f32>>,
    pub usage: Usage,
}

/// A configured provider as `ironbees config show` / `llm check` describe it.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderInfo {
    pub name: String,
    pub kind: &'static str,
    pub base_url: String,
    pub model: String,
    pub has_key: bool,
    /// Position in the chain (0 = default), `None` when not in it.
    pub chain_position: Option<usize>,
    pub price: Option<Price>,
}

struct Slot {
    http: HttpProvider,
    breaker: Breaker,
    price: Option<Price>,
    /// The last failure the breaker counted, for an open circuit's error.
    last_failure: std::sync::Mutex<Option<String>>,
}

/// The breaker's part of every attempt on a provider, for completions and
/// embeddings alike.
impl Slot {
    /// Asks the breaker before an attempt; `Err` means no attempt. A circuit
    /// opened by this call's own failures reports the last of them, which says
    /// more than "circuit open".
    fn admit(&self, name: &str, previous: &mut Option<Error>) -> Result<()> {
        match self.breaker.admit(Instant::now()) {
            Admit::No(_) if previous.is_some() => Err(previous.take().expect("checked")),
            Admit::No(retry_in) => {
                let cause = self.last_failure.lock().unwrap_or_else(|p| p.into_inner()).clone();
                Err(Error::CircuitOpen { provider: name.to_owned(), retry_in, cause })
            }
            Admit::Probe => {
                info!(provider = %name, "circuit half-open: probing");
                Ok(())
            }
            Admit::Yes => Ok(()),
        }
    }

    /// Checks the budget before an attempt the breaker admitted; a refusal hands
    /// the admission back.
    fn within_budget(&self, ledger: &Ledger, workflow: Option<&str>) -> Result<()> {
        ledger.check(workflow, 0, 0.0).inspect_err(|_| self.breaker.release(Instant::now()))
    }

    fn succeeded(&self, name: &str) {
        if let Some(s) = self.breaker.record(false, Instant::now()) {
            info!(provider = %name, state = ?s, "circuit closed");
        }
    }

    /// Books a failed attempt with the breaker. True when `err` ends the call
    /// (stopped, or the caller's fault): no retry and no fallback.
    fn failed(&self, name: &str, err: &Error) -> bool {
        match err.class() {
            ErrorClass::Stop => {
                self.breaker.release(Instant::now());
                true
            }
            // The server answered, so it is up.
            ErrorClass::Caller => {
                self.breaker.record(false, Instant::now());
                true
            }
            _ => {
                *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some(err.to_string());
                if let Some(s) = self.breaker.record(true, Instant::now()) {
                    warn!(provider = %name, state = ?s, "circuit opened after repeated failures");
                }
                false
            }
        }
    }
}

/// Waits out a retry delay, or ends at once with `Cancelled`.
async fn backoff(delay: Duration, cancel: &CancellationToken) -> Result<()> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Error::Cancelled),
        () = tokio::time::sleep(delay) => Ok(()),
    }
}

/// The model client: every call goes through the chain `default → fallback…`.
///
/// For each provider in turn: the breaker is asked first (an open circuit skips
/// the provider without a request); the budget is checked; the attempt runs; a
/// retryable failure waits (exponential backoff with jitter, at least the server's
/// `Retry-After`) and tries again, up to `retry.max_attempts`; then the next
/// provider takes over. Output already streamed from a failed attempt is
/// withdrawn with [`StreamEvent::Reset`].
pub struct Llm {
    slots: BTreeMap<String, Arc<Slot>>,
    chain: Vec<String>,
    retry: RetryPolicy,
    prices: PriceTable,
    ledger: Arc<Ledger>,
    embeddings: EmbeddingSettings,
}

impl std::fmt::Debug for Llm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Llm").field("chain", &self.chain).finish_non_exhaustive()
    }
}

/// A model ironbees chose for a provider configured without one: the only model
/// its server offers. Callers say so to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredModel {
    pub provider: String,
    pub model: String,
    pub base_url: String,
}

/// How long asking a server for its models may take.
const LIST_MODELS_LIMIT: Duration = Duration::from_secs(10);

/// Fills in the model of every OpenAI-compatible provider configured without one
/// (`OPENAI_BASE_URL` and no `OPENAI_MODEL`) by asking its server (`GET /models`):
/// a server offering exactly one model (a llama.cpp server, a vLLM instance) needs
/// no more configuration. Several models, none, or no answer is a `Config` error
/// that lists what the server offers, so the user can pick one. Call it before
/// [`Llm::new`] when the client will chat; embeddings name their own model.
pub async fn discover_models(
    settings: &mut Settings,
    cancel: &CancellationToken,
) -> Result<Vec<DiscoveredModel>> {
    let mut found = Vec::new();
    for (name, p) in settings.providers.iter_mut() {
        let (Some(ProviderKind::OpenaiCompatible), None, Some(base_url)) =
            (p.kind_for(name), &p.model, &p.base_url)
        else {
            continue;
        };
        let http = HttpProvider::new(
            name.clone(),
            ProviderKind::OpenaiCompatible,
            base_url.clone(),
            p.api_key.clone(),
            String::new(),
            None,
            None,
            false,
            settings.timeouts.clone(),
            settings.proxy.as_deref(),
            settings.no_proxy.as_deref(),
        )?;
        let shown = crate::http::redact_url(base_url);
        let needs = format!(
            "provider {name:?} (openai-compatible) needs a model (llm.providers.{name}.model, or OPENAI_MODEL)"
        );
        let models = match http.list_models(LIST_MODELS_LIMIT, cancel).await {
            Ok(m) => m,
            Err(Error::Cancelled) => return Err(Error::Cancelled),
            Err(e) => {
                return Err(Error::Config(format!(
                    "{needs}; asking the server at {shown} which models it serves failed: {e}"
                )));
            }
        };
        match models.as_slice() {
            [one] => {
                p.model = Some(one.clone());
                found.push(DiscoveredModel {
                    provider: name.clone(),
                    model: one.clone(),
                    base_url: shown,
                });
            }
            [] => {
                return Err(Error::Config(format!(
                    "{needs}; the server at {shown} lists no models"
                )));
            }
            many => {
                const SHOWN: usize = 20;
                let mut list = many.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
                if many.len() > SHOWN {
                    list.push_str(&format!(" and {} more", many.len() - SHOWN));
                }
                return Err(Error::Config(format!(
                    "{needs}; the server at {shown} offers {} models: {list}",
                    many.len()
                )));
            }
        }
    }
    Ok(found)
}

impl Llm {
    /// Builds the client from settings (after [`Settings::with_standard_env`]).
    pub fn new(settings: &Settings) -> Result<Llm> {
        let chain = settings.chain()?;
        let t = &settings.timeouts;
        for (name, v) in [
            ("connect_secs", t.connect_secs),
            ("first_token_secs", t.first_token_secs),
            ("idle_secs", t.idle_secs),
            ("total_secs", t.total_secs),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::Config(format!(
                    "llm.timeouts.{name} must be a positive number of seconds, not {v}"
                )));
            }
        }
        let prices = PriceTable::new(&settings.prices);
        let mut slots = BTreeMap::new();
        for (name, p) in &settings.providers {
            let kind = p.kind_for(name).ok_or_else(|| {
                Error::Config(format!(
                    "provider {name:?} needs `kind: anthropic | openai | openai-compatible`"
                ))
            })?;
            let base_url = match (kind, &p.base_url) {
                (_, Some(u)) => u.clone(),
                (ProviderKind::Anthropic, None) => ANTHROPIC_BASE_URL.to_owned(),
                (ProviderKind::Openai, None) => OPENAI_BASE_URL.to_owned(),
                (ProviderKind::OpenaiCompatible, None) => {
                    return Err(Error::Config(format!(
                        "provider {name:?} (openai-compatible) needs a base_url"
                    )));
                }
            };
            let model = match (kind, &p.model) {
                (_, Some(m)) => m.clone(),
                (ProviderKind::Anthropic, None) => ANTHROPIC_MODEL.to_owned(),
                (ProviderKind::Openai, None) => OPENAI_MODEL.to_owned(),
                (ProviderKind::OpenaiCompatible, None) => {
                    return Err(Error::Config(format!(
                        "provider {name:?} (openai-compatible) needs a model (llm.providers.{name}.model, or OPENAI_MODEL)"
                    )));
                }
            };
            // Without a key, the vendor's own endpoint can only say 401; a gateway at
            // another base URL may add credentials itself.
            let own_endpoint = p.base_url.is_none()
                || base_url.contains("api.anthropic.com")
                || base_url.contains("api.openai.com");
            if kind != ProviderKind::OpenaiCompatible && p.api_key.is_none() && own_endpoint {
                return Err(Error::Config(format!(
                    "provider {name:?} has no API key (set {} or llm.providers.{name}.api_key)",
                    if kind == ProviderKind::Anthropic {
                        "ANTHROPIC_API_KEY"
                    } else {
                        "OPENAI_API_KEY"
                    }
                )));
            }
            let price = p.price.or_else(|| prices.lookup(&model));
            let http = HttpProvider::new(
                name.clone(),
                kind,
                base_url,
                p.api_key.clone(),
                model,
                p.max_tokens,
                p.temperature,
                p.prompt_caching.unwrap_or(true),
                settings.timeouts.clone(),
                settings.proxy.as_deref(),
                settings.no_proxy.as_deref(),
            )?;
            slots.insert(
                name.clone(),
                Arc::new(Slot {
                    http,
                    breaker: Breaker::new(settings.breaker.clone()),
                    price,
                    last_failure: std::sync::Mutex::new(None),
                }),
            );
        }
        Ok(Llm {
            slots,
            chain,
            retry: settings.retry.clone(),
            prices,
            ledger: Arc::new(Ledger::new(settings.budget.clone())),
            embeddings: settings.embeddings.clone(),
        })
    }

    /// The session's books: totals per session and per workflow.
    pub fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }

    /// Every configured provider, chain members first.
    pub fn providers(&self) -> Vec<ProviderInfo> {
        let mut names: Vec<&String> = self.chain.iter().collect();
        names.extend(self.slots.keys().filter(|k| !self.chain.contains(k)));
        names
            .into_iter()
            .map(|n| {
                let s = &self.slots[n];
                ProviderInfo {
                    name: n.clone(),
                    kind: s.http.kind.as_str(),
                    base_url: crate::http::redact_url(&s.http.base_url),
                    model: s.http.model.clone(),
                    has_key: s.http.has_key(),
                    chain_position: self.chain.iter().position(|c| c == n),
                    price: s.price,
                }
            })
            .collect()
    }

    /// The circuit state of a provider (for status displays and tests).
    pub fn breaker_state(&self, provider: &str) -> Option<BreakerState> {
        self.slots.get(provider).map(|s| s.breaker.state())
    }

    /// A complete answer (non-streaming requests).
    pub async fn complete(&self, req: &Request, opts: &CallOptions) -> Result<Response> {
        self.run(req, false, opts, &mut |_| {}).await
    }

    /// A streamed answer: `on_event` sees text and tool-call deltas as they
    /// arrive; the returned [`Response`] is the assembled whole.
    pub async fn stream(
        &self,
        req: &Request,
        opts: &CallOptions,
        on_event: &mut (dyn FnMut(&StreamEvent) + Send),
    ) -> Result<Response> {
        self.run(req, true, opts, on_event).await
    }

    /// One attempt on one provider, no retry, breaker or fallback: what
    /// `ironbees llm check` measures. Usage is still booked. `limit` bounds the
    /// whole attempt: a check must answer in seconds, not after the minutes a real
    /// call may take, when a server accepts the connection and never answers.
    pub async fn probe(
        &self,
        provider: &str,
        req: &Request,
        limit: Duration,
        cancel: &CancellationToken,
    ) -> Result<Response> {
        let slot = self.slot(provider)?;
        let mut sink = |_: StreamEvent| Ok(());
        let attempt = slot.http.attempt(req, false, &mut sink, cancel);
        let a = match tokio::time::timeout(limit, attempt).await {
            Ok(a) => a?,
            Err(_) => {
                return Err(Error::Timeout {
                    provider: provider.to_owned(),
                    phase: TimeoutPhase::Total,
                    after: limit,
                });
            }
        };
        Ok(self.finish(provider, &slot, req, a, None, 1))
    }

    /// The provider and model [`Llm::embed`] uses (`llm.embeddings`), or why
    /// there is none.
    pub fn embedding_model(&self) -> Result<(String, String)> {
        let speaks_openai =
            |n: &String| self.slots.get(n).is_some_and(|s| s.http.kind != ProviderKind::Anthropic);
        let name = match &self.embeddings.provider {
            Some(n) => {
                let slot = self.slot(n)?;
                if slot.http.kind == ProviderKind::Anthropic {
                    return Err(Error::Config(format!(
                        "llm.embeddings.provider {n:?} is an Anthropic provider, which has no embeddings API; \
                         name an openai or openai-compatible provider"
                    )));
                }
                n.clone()
            }
            None => self
                .chain
                .iter()
                .chain(self.slots.keys())
                .find(|n| speaks_openai(n))
                .cloned()
                .ok_or_else(|| {
                    Error::Config(
                        "embeddings need an openai or openai-compatible provider \
                         (OPENAI_API_KEY, or OPENAI_BASE_URL for a local server); \
                         Anthropic has no embeddings API"
                            .into(),
                    )
                })?,
        };
        let kind = self.slots[&name].http.kind;
        let model = match (&self.embeddings.model, kind) {
            (Some(m), _) => m.clone(),
            (None, ProviderKind::Openai) => OPENAI_EMBEDDING_MODEL.to_owned(),
            (None, _) => {
                return Err(Error::Config(format!(
                    "provider {name:?} (openai-compatible) needs an embedding model: \
                     set llm.embeddings.model (e.g. nomic-embed-text on Ollama)"
                )));
            }
        };
        Ok((name, model))
    }

    /// How much the model's ranking counts in `localize` (`llm.embeddings.weight`).
    /// Checked here, where it is used, like [`Llm::embedding_model`]: a client
    /// that only chats is not refused for a key it never reads.
    pub fn embedding_weight(&self) -> Result<f64> {
        let w = self.embeddings.weight;
        if !(w.is_finite() && w > 0.0 && w <= 100.0) {
            return Err(Error::Config(format!(
                "llm.embeddings.weight must be a number above 0 and at most 100, not {w}"
            )));
        }
        Ok(w)
    }

    /// Inputs per embeddings request (`llm.embeddings.batch`, at least 1).
    pub fn embedding_batch(&self) -> usize {
        self.embeddings.batch.max(1)
    }

    /// The vectors of `texts`, in order, from the `llm.embeddings` model. Retries
    /// and the circuit breaker apply as to any call; the fallback chain does not,
    /// because vectors from two models cannot be compared with each other.
    pub async fn embed(&self, texts: &[String], opts: &CallOptions) -> Result<Embeddings> {
        let (name, model) = self.embedding_model()?;
        if texts.is_empty() {
            return Ok(Embeddings {
                provider: name,
                model,
                vectors: Vec::new(),
                usage: Usage::default(),
            });
        }
        let slot = self.slot(&name)?;
        let workflow = opts.workflow.as_deref();
        let mut attempt = 0u32;
        let mut previous: Option<Error> = None;
        loop {
            attempt += 1;
            slot.admit(&name, &mut previous)?;
            slot.within_budget(&self.ledger, workflow)?;
            let err = match slot.http.embed(&model, texts, &opts.cancel).await {
                Ok(p) => {
                    slot.succeeded(&name);
                    let usage = match p.prompt_tokens {
                        Some(n) => Usage { input_tokens: n, ..Usage::default() },
                        None => Usage {
                            input_tokens: estimate_tokens(texts.iter().map(String::len).sum()),
                            estimated: true,
                            ..Usage::default()
                        },
                    };
                    let cost = self.prices.lookup(&model).map(|pr| pr.cost(&usage));
                    self.ledger.record(workflow, &usage, cost);
                    return Ok(Embeddings { provider: name, model, vectors: p.vectors, usage });
                }
                Err(e) => e,
            };
            if slot.failed(&name, &err) {
                return Err(err);
            }
            match decide(&err, attempt, &self.retry, fastrand::f64()) {
                RetryDecision::RetryAfter(delay) => {
                    warn!(provider = %name, attempt, delay_ms = delay.as_millis() as u64, error = %err, "retrying embeddings");
                    backoff(delay, &opts.cancel).await?;
                    previous = Some(err);
                }
                RetryDecision::NextProvider | RetryDecision::Stop => return Err(err),
            }
        }
    }

    fn slot(&self, name: &str) -> Result<Arc<Slot>> {
        self.slots.get(name).cloned().ok_or_else(|| {
            Error::Config(format!(
                "unknown provider {name:?} (configured: {})",
                self.slots.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// One call (retries and fallbacks included) in its span: OpenTelemetry's
    /// GenAI conventions (a `chat` operation), the usage and cost recorded when
    /// it ends, and the tokens as a metric event. No prompt or answer text.
    async fn run(
        &self,
        req: &Request,
        stream: bool,
        opts: &CallOptions,
        on_event: &mut (dyn FnMut(&StreamEvent) + Send),
    ) -> Result<Response> {
        let first = opts.provider.as_ref().or_else(|| self.chain.first());
        let slot = first.and_then(|p| self.slots.get(p));
        let model =
            req.model.clone().or_else(|| slot.map(|s| s.http.model.clone())).unwrap_or_default();
        let span = tracing::info_span!(
            "chat",
            otel.name = %format!("chat {model}"),
            otel.kind = "client",
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = slot.map_or("", |s| s.http.kind.as_str()),
            gen_ai.request.model = %model,
            gen_ai.request.max_tokens = tracing::field::Empty,
            gen_ai.response.model = tracing::field::Empty,
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            ironbees.llm.provider = tracing::field::Empty,
            ironbees.llm.attempts = tracing::field::Empty,
            ironbees.llm.cost_usd = tracing::field::Empty,
            ironbees.llm.stream = stream,
            ironbees.workflow = opts.workflow.as_deref().unwrap_or(""),
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        if let Some(n) = req.max_tokens {
            span.record("gen_ai.request.max_tokens", i64::from(n));
        }
        let started = Instant::now();
        let out = tracing::Instrument::instrument(
            self.run_chain(req, stream, opts, on_event),
            span.clone(),
        )
        .await;
        match &out {
            Ok(r) => {
                span.record("gen_ai.response.model", r.model.as_str());
                // As i64: OpenTelemetry has no unsigned integers (a u64 would be text).
                let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
                span.record("gen_ai.usage.input_tokens", int(r.usage.input_tokens));
                span.record("gen_ai.usage.output_tokens", int(r.usage.output_tokens));
                span.record("ironbees.llm.provider", r.provider.as_str());
                span.record("ironbees.llm.attempts", i64::from(r.attempts));
                if let Some(c) = r.cost_usd {
                    span.record("ironbees.llm.cost_usd", c);
                    tracing::event!(
                        target: "ironbees::metrics",
                        tracing::Level::TRACE,
                        monotonic_counter.ironbees.llm.cost_usd = c,
                        gen_ai.provider.name = slot.map_or("", |s| s.http.kind.as_str()),
                        gen_ai.response.model = r.model.as_str(),
                    );
                }
                for (kind, n) in
                    [("input", r.usage.input_tokens), ("output", r.usage.output_tokens)]
                {
                    tracing::event!(
                        target: "ironbees::metrics",
                        tracing::Level::TRACE,
                        histogram.gen_ai.client.token.usage = n,
                        gen_ai.token.type = kind,
                        gen_ai.operation.name = "chat",
                        gen_ai.provider.name = slot.map_or("", |s| s.http.kind.as_str()),
                        gen_ai.response.model = r.model.as_str(),
                    );
                }
            }
            Err(e) => {
                span.record("error.type", e.code().as_str());
                span.record("otel.status_code", "ERROR");
            }
        }
        tracing::event!(
            target: "ironbees::metrics",
            tracing::Level::TRACE,
            histogram.gen_ai.client.operation.duration = started.elapsed().as_secs_f64(),
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = slot.map_or("", |s| s.http.kind.as_str()),
            gen_ai.request.model = %model,
            error.type = out.as_ref().err().map_or("", |e| e.code().as_str()),
        );
        out
    }

    async fn run_chain(
        &self,
        req: &Request,
        stream: bool,
        opts: &CallOptions,
        on_event: &mut (dyn FnMut(&StreamEvent) + Send),
    ) -> Result<Response> {
        let chain: Vec<String> = match &opts.provider {
            Some(p) => vec![self.slot(p).map(|_| p.clone())?],
            None => self.chain.clone(),
        };
        let workflow = opts.workflow.as_deref();
        let mut tried: Vec<String> = Vec::new();
        let mut last: Option<Error> = None;
        let mut attempts_total = 0u32;
        let without_model = req.model.as_ref().map(|_| Request { model: None, ..req.clone() });
        for (pos, name) in chain.iter().enumerate() {
            let slot = self.slot(name)?;
            // A model named in the request is the first provider's; a fallback from
            // another vendor would refuse it, so fallbacks use their own model.
            let req: &Request = match &without_model {
                Some(r) if pos > 0 => r,
                _ => req,
            };
            if pos > 0 {
                let reason = last.as_ref().map(ToString::to_string).unwrap_or_default();
                warn!(from = %chain[pos - 1], to = %name, %reason, "falling back");
                on_event(&StreamEvent::Fallback {
                    from: chain[pos - 1].clone(),
                    to: name.clone(),
                    reason,
                });
            }
            if self.ledger.budgets().limits_usd() && slot.price.is_none() {
                return Err(Error::Config(format!(
                    "a USD budget is set but model {:?} of provider {name:?} has no price; \
                     add it to llm.prices (or set llm.providers.{name}.price)",
                    req.model.as_deref().unwrap_or(&slot.http.model)
                )));
            }
            let mut attempt = 0u32;
            let mut previous: Option<Error> = None;
            let err = loop {
                attempt += 1;
                if let Err(e) = slot.admit(name, &mut previous) {
                    break e;
                }
                slot.within_budget(&self.ledger, workflow)?;
                attempts_total += 1;
                let model = req.model.clone().unwrap_or_else(|| slot.http.model.clone());
                on_event(&StreamEvent::Started { provider: name.clone(), model });
                let mut meter = Meter::new(req, slot.price, &self.ledger, workflow);
                let mut emitted = false;
                let result = {
                    let mut sink = |ev: StreamEvent| {
                        emitted = true;
                        meter.on(&ev)?;
                        on_event(&ev);
                        Ok(())
                    };
                    slot.http.attempt(req, stream, &mut sink, &opts.cancel).await
                };
                let result = result.and_then(|a| check_structured(name, slot.http.kind, req, a));
                let err = match result {
                    Ok(a) => {
                        slot.succeeded(name);
                        return Ok(self.finish(name, &slot, req, a, workflow, attempts_total));
                    }
                    Err(e) => e,
                };
                if slot.failed(name, &err) {
                    if matches!(err, Error::BudgetExceeded { .. }) {
                        // The stream was stopped part-way: book what it used.
                        let (usage, cost) = meter.estimate();
                        self.ledger.record(workflow, &usage, cost);
                    }
                    return Err(err);
                }
                if emitted {
                    on_event(&StreamEvent::Reset { reason: err.to_string() });
                }
                match decide(&err, attempt, &self.retry, fastrand::f64()) {
                    RetryDecision::RetryAfter(delay) => {
                        warn!(provider = %name, attempt, delay_ms = delay.as_millis() as u64, error = %err, "retrying");
                        on_event(&StreamEvent::Retrying {
                            provider: name.clone(),
                            attempt,
                            delay_ms: delay.as_millis() as u64,
                            reason: err.to_string(),
                        });
                        backoff(delay, &opts.cancel).await?;
                        previous = Some(err);
                    }
                    RetryDecision::NextProvider => break err,
                    RetryDecision::Stop => return Err(err),
                }
            };
            debug!(provider = %name, error = %err, "provider gave up");
            tried.push(err.to_string());
            last = Some(err);
        }
        let last = last.expect("the chain is never empty");
        if tried.len() == 1 {
            return Err(last);
        }
        Err(Error::Exhausted { tried, last: Box::new(last) })
    }

    /// Books the usage and assembles the response.
    fn finish(
        &self,
        name: &str,
        slot: &Slot,
        req: &Request,
        a: Attempt,
        workflow: Option<&str>,
        attempts: u32,
    ) -> Response {
        let p = a.parsed;
        let usage = p.usage.unwrap_or_else(|| {
            let out: usize = p.content.iter().map(content_len).sum();
            Usage {
                input_tokens: estimate_tokens(req.text_len()),
                output_tokens: estimate_tokens(out),
                estimated: true,
                ..Usage::default()
            }
        });
        let model = if p.model.is_empty() {
            req.model.clone().unwrap_or_else(|| slot.http.model.clone())
        } else {
            p.model
        };
        // The price of the model that answered (a server may name a dated snapshot).
        let price = slot
            .price
            .filter(|_| req.model.is_none())
            .or_else(|| self.prices.lookup(&model))
            .or(slot.price);
        let cost_usd = price.map(|pr| pr.cost(&usage));
        self.ledger.record(workflow, &usage, cost_usd);
        let structured = req
            .output_schema
            .as_ref()
            .and_then(|s| structured(slot.http.kind, &s.name, &p.content));
        Response {
            provider: name.to_owned(),
            model,
            content: p.content,
            structured,
            stop_reason: p.stop_reason,
            usage,
            cost_usd,
            latency_ms: a.latency.as_millis() as u64,
            attempts,
        }
    }
}

fn structured(
    kind: ProviderKind,
    name: &str,
    content: &[crate::types::Content],
) -> Option<serde_json::Value> {
    match kind {
        ProviderKind::Anthropic => anthropic::structured(content, name),
        _ => openai::structured(content).ok(),
    }
}

/// A request with an output schema must get a structured answer; one that is
/// missing or not JSON is a bad response (and retried like one).
fn check_structured(name: &str, kind: ProviderKind, req: &Request, a: Attempt) -> Result<Attempt> {
    match &req.output_schema {
        Some(s) if structured(kind, &s.name, &a.parsed.content).is_none() => {
            Err(Error::BadResponse {
                provider: name.to_owned(),
                message: format!(
                    "no structured answer (JSON for schema {:?}) in the response",
                    s.name
                ),
            })
        }
        _ => Ok(a),
    }
}

fn content_len(c: &crate::types::Content) -> usize {
    match c {
        crate::types::Content::Text { text } => text.len(),
        crate::types::Content::ToolUse { input, .. } => input.to_string().len(),
        crate::types::Content::ToolResult { content, .. } => content.len(),
    }
}

/// About four bytes of English or code per token: used only when a server reports
/// no usage, and to meter a stream against the budget before its usage arrives.
fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// Meters a stream against the budget as deltas arrive.
struct Meter<'a> {
    input_est: u64,
    out_bytes: usize,
    price: Option<Price>,
    ledger: &'a Ledger,
    workflow: Option<&'a str>,
}

impl<'a> Meter<'a> {
    fn new(
        req: &Request,
        price: Option<Price>,
        ledger: &'a Ledger,
        workflow: Option<&'a str>,
    ) -> Meter<'a> {
        Meter { input_est: estimate_tokens(req.text_len()), out_bytes: 0, price, ledger, workflow }
    }

    fn on(&mut self, ev: &StreamEvent) -> Result<()> {
        match ev {
            StreamEvent::TextDelta { text } => self.out_bytes += text.len(),
            StreamEvent::ToolCallDelta { json, .. } => self.out_bytes += json.len(),
            _ => return Ok(()),
        }
        let (usage, cost) = self.estimate();
        self.ledger.check(self.workflow, usage.total(), cost.unwrap_or(0.0))
    }

    fn estimate(&self) -> (Usage, Option<f64>) {
        let usage = Usage {
            input_tokens: self.input_est,
            output_tokens: estimate_tokens(self.out_bytes),
            estimated: true,
            ..Usage::default()
        };
        (usage, self.price.map(|p| p.cost(&usage)))
    }
}
