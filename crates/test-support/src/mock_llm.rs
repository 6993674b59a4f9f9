//! A mock model server at the wire level, with fault injection.
//!
//! It listens on `127.0.0.1` and answers `POST /v1/messages` in the Anthropic
//! Messages format, `GET …/models` with the models of [`MockLlm::set_models`],
//! `POST …/embeddings` in OpenAI's embeddings format (vectors
//! from [`mock_embedding`]; a scripted status or malformed reply applies too),
//! and `POST …/chat/completions` in the OpenAI Chat Completions
//! format, as JSON or, when the request says `"stream": true`, as server-sent
//! events exactly as those APIs send them (tool-call arguments split across
//! several deltas, usage in `message_start`/`message_delta` or in the final
//! `include_usage` chunk). Replies are scripted in order with [`MockLlm::push`];
//! when the script is empty, the default reply ([`MockLlm::set_default`]) answers.
//!
//! It is a raw HTTP/1.1 server on a tokio `TcpListener`, not a framework, because
//! the faults need control of the socket: a slow first byte, a connection reset
//! (RST) in the middle of a stream, a stream cut off cleanly before its last
//! event, a stream held open until the client goes away. Each connection serves
//! one request (`connection: close`), so "the client dropped the connection" is
//! observable ([`MockLlm::disconnects`]).
//!
//! Every request is recorded ([`MockLlm::requests`]) with its headers and JSON
//! body, so tests can assert on `x-api-key`, `anthropic-version`,
//! `authorization`, tools, `cache_control` and `response_format`.
//!
//! The server runs on its own thread and runtime, so synchronous tests (running
//! the `ironbees` binary) and async tests use it the same way.

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// Token counts the mock reports. `input` excludes cached input, as Anthropic
/// counts; the OpenAI rendering adds `cache_read` into `prompt_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MockUsage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Default for MockUsage {
    fn default() -> Self {
        MockUsage { input: 12, output: 7, cache_read: 0, cache_write: 0 }
    }
}

/// What goes wrong in the middle of a stream, after `n` SSE events were sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // each fault fires "after n events"; the name says so
pub enum Fault {
    /// Reset the TCP connection (RST): the client sees a network error.
    ResetAfter(usize),
    /// End the HTTP body cleanly, without the format's final event.
    TruncateAfter(usize),
    /// Keep the connection open, sending nothing, until the client closes it.
    HangAfter(usize),
    /// Send the format's in-stream error (Anthropic `event: error` with
    /// `overloaded_error`; OpenAI `data: {"error": ...}`), then end the body.
    ErrorEventAfter(usize),
}

#[derive(Debug, Clone)]
enum Answer {
    Text(String),
    Tools { text: String, calls: Vec<(String, Value)> },
    Structured(Value),
    Status { status: u16, retry_after: Option<String>, body: Option<String> },
    Malformed,
}

/// One scripted reply. Rendered in the format of the request it answers.
#[derive(Debug, Clone)]
pub struct Reply {
    answer: Answer,
    usage: MockUsage,
    model: Option<String>,
    first_byte_delay: Duration,
    fault: Option<Fault>,
    write_size: Option<usize>,
    delta_chars: usize,
}

impl Reply {
    fn new(answer: Answer) -> Reply {
        Reply {
            answer,
            usage: MockUsage::default(),
            model: None,
            first_byte_delay: Duration::ZERO,
            fault: None,
            write_size: None,
            delta_chars: 4,
        }
    }

    /// A text answer, streamed as deltas of a few characters.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::new(Answer::Text(text.into()))
    }

    /// Tool calls (name, JSON arguments), after some text (may be empty).
    pub fn tool_calls(text: impl Into<String>, calls: Vec<(&str, Value)>) -> Reply {
        let calls = calls.into_iter().map(|(n, v)| (n.to_owned(), v)).collect();
        Reply::new(Answer::Tools { text: text.into(), calls })
    }

    /// A structured answer: Anthropic gets the forced tool call the request named
    /// in `tool_choice`, OpenAI the JSON as the message text.
    pub fn structured(value: Value) -> Reply {
        Reply::new(Answer::Structured(value))
    }

    /// An HTTP error with the provider's error body.
    pub fn status(status: u16) -> Reply {
        Reply::new(Answer::Status { status, retry_after: None, body: None })
    }

    /// HTTP 429 with `Retry-After: {value}`.
    pub fn rate_limited(retry_after: &str) -> Reply {
        Reply::new(Answer::Status {
            status: 429,
            retry_after: Some(retry_after.to_owned()),
            body: None,
        })
    }

    /// HTTP `status` with this exact body.
    pub fn status_body(status: u16, body: impl Into<String>) -> Reply {
        Reply::new(Answer::Status { status, retry_after: None, body: Some(body.into()) })
    }

    /// A 200 whose JSON body (or SSE event) is not JSON.
    pub fn malformed() -> Reply {
        Reply::new(Answer::Malformed)
    }

    pub fn usage(mut self, usage: MockUsage) -> Reply {
        self.usage = usage;
        self
    }

    /// The model name the reply reports (default: the requested one).
    pub fn model(mut self, model: impl Into<String>) -> Reply {
        self.model = Some(model.into());
        self
    }

    /// Wait this long before the first response byte.
    pub fn first_byte_delay(mut self, d: Duration) -> Reply {
        self.first_byte_delay = d;
        self
    }

    pub fn fault(mut self, f: Fault) -> Reply {
        self.fault = Some(f);
        self
    }

    /// Write the body in TCP writes of at most `n` bytes, pausing between them,
    /// so the client sees events and JSON split at arbitrary points.
    pub fn write_size(mut self, n: usize) -> Reply {
        self.write_size = Some(n.max(1));
        self
    }

    /// Characters per text delta (default 4).
    pub fn delta_chars(mut self, n: usize) -> Reply {
        self.delta_chars = n.max(1);
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::Null` when it was not JSON).
    pub body: Value,
    pub raw_body: String,
    pub at: Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }
}

struct Shared {
    script: Mutex<VecDeque<Reply>>,
    responder: Mutex<Option<Responder>>,
    default: Mutex<Reply>,
    requests: Mutex<Vec<Recorded>>,
    disconnects: AtomicUsize,
    counter: AtomicUsize,
    /// What `GET …/models` lists.
    models: Mutex<Vec<String>>,
}

/// The running server; stops when dropped.
#[derive(Debug)]
pub struct MockLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl MockLlm {
    /// Starts a server on a free loopback port. Its default reply is
    /// `Reply::text("Hello from the mock.")`.
    pub fn start() -> MockLlm {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        std_listener.set_nonblocking(true).expect("nonblocking listener");
        let addr = std_listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            script: Mutex::new(VecDeque::new()),
            responder: Mutex::new(None),
            default: Mutex::new(Reply::text("Hello from the mock.")),
            requests: Mutex::new(Vec::new()),
            disconnects: AtomicUsize::new(0),
            counter: AtomicUsize::new(0),
            models: Mutex::new(vec!["mock-model".to_owned()]),
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let s = Arc::clone(&shared);
        std::thread::Builder::new()
            .name(format!("mock-llm-{}", addr.port()))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("mock runtime");
                rt.block_on(async move {
                    let listener = TcpListener::from_std(std_listener).expect("tokio listener");
                    let accept = async {
                        loop {
                            let Ok((sock, _)) = listener.accept().await else { continue };
                            tokio::spawn(serve(sock, Arc::clone(&s)));
                        }
                    };
                    tokio::select! {
                        _ = rx => {}
                        () = accept => {}
                    }
                });
                // Dropping the runtime ends every connection still open.
            })
            .expect("spawn mock thread");
        MockLlm { addr, shared, shutdown: Some(tx) }
    }

    /// `http://127.0.0.1:PORT`: the value for `ANTHROPIC_BASE_URL`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`: the value for `OPENAI_BASE_URL`.
    pub fn openai_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Queues a reply for the next request.
    pub fn push(&self, reply: Reply) -> &MockLlm {
        self.shared.script.lock().unwrap().push_back(reply);
        self
    }

    /// The models `GET …/models` lists (OpenAI's format); default `["mock-model"]`.
    pub fn set_models(&self, models: &[&str]) {
        *self.shared.models.lock().unwrap() = models.iter().map(|m| (*m).to_owned()).collect();
    }

    /// A function of the request body that answers when the script is empty
    /// (before the default reply; `None` falls through to it). A model scripted as
    /// a function of the conversation, not of the call count, answers the same
    /// after a client crashed and repeated calls: agent runs resumed after a kill.
    pub fn set_responder(&self, f: impl Fn(&Value) -> Option<Reply> + Send + Sync + 'static) {
        *self.shared.responder.lock().unwrap() = Some(Arc::new(f));
    }

    /// The reply used when the script is empty.
    pub fn set_default(&self, reply: Reply) {
        *self.shared.default.lock().unwrap() = reply;
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.shared.requests.lock().unwrap().len()
    }

    /// Connections the client closed while the server was still sending or holding
    /// a stream open.
    pub fn disconnects(&self) -> usize {
        self.shared.disconnects.load(Ordering::SeqCst)
    }

    /// Waits until at least `n` disconnects were seen; false after `limit` (a hang
    /// guard, not a speed assertion). Blocks the thread: in async tests use
    /// [`MockLlm::disconnected`].
    pub fn wait_for_disconnects(&self, n: usize, limit: Duration) -> bool {
        let start = Instant::now();
        while self.disconnects() < n {
            if start.elapsed() > limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }
}

impl MockLlm {
    /// [`MockLlm::wait_for_disconnects`] for async tests: it yields to the runtime,
    /// which must run for the client to close its connections.
    pub async fn disconnected(&self, n: usize, limit: Duration) -> bool {
        let start = Instant::now();
        while self.disconnects() < n {
            if start.elapsed() > limit {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        true
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Anthropic,
    OpenAi,
}

async fn serve(mut sock: TcpStream, shared: Arc<Shared>) {
    let _ = sock.set_nodelay(true);
    let Some(req) = read_request(&mut sock).await else { return };
    let format = if req.path.ends_with("/v1/messages") {
        Some(Format::Anthropic)
    } else if req.path.ends_with("/chat/completions") {
        Some(Format::OpenAi)
    } else {
        None
    };
    let stream = req.body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let requested_model =
        req.body.get("model").and_then(Value::as_str).unwrap_or("mock-model").to_owned();
    if req.method == "GET" && req.path.ends_with("/models") {
        let models = shared.models.lock().unwrap().clone();
        shared.requests.lock().unwrap().push(req);
        let data: Vec<Value> = models
            .iter()
            .map(|m| json!({"id": m, "object": "model", "owned_by": "mock"}))
            .collect();
        let body = json!({"object": "list", "data": data}).to_string();
        let _ = write_all(&mut sock, &json_response(200, &body, None), None).await;
        return;
    }
    if req.path.ends_with("/embeddings") {
        let inputs: Vec<String> = match req.body.get("input") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => {
                a.iter().map(|v| v.as_str().unwrap_or("").to_owned()).collect()
            }
            _ => Vec::new(),
        };
        shared.requests.lock().unwrap().push(req);
        return serve_embeddings(sock, &shared, &inputs, &requested_model).await;
    }
    let forced_tool = req
        .body
        .get("tool_choice")
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let include_usage = req
        .body
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let body = req.body.clone();
    shared.requests.lock().unwrap().push(req);
    let Some(format) = format else {
        let body = json!({"error": {"message": "not found", "type": "not_found"}}).to_string();
        let _ =
            write_all(&mut sock, &head(404, "application/json", Some(body.len()), &[]), None).await;
        let _ = write_all(&mut sock, body.as_bytes(), None).await;
        return;
    };
    let reply = next_reply(&shared, Some(&body));
    let n = shared.counter.fetch_add(1, Ordering::SeqCst);
    if !reply.first_byte_delay.is_zero() {
        tokio::time::sleep(reply.first_byte_delay).await;
    }
    let ctx = Ctx {
        format,
        model: reply.model.clone().unwrap_or(requested_model),
        id: n,
        forced_tool,
        include_usage,
    };
    let ok = match &reply.answer {
        Answer::Status { status, retry_after, body } => {
            let body = body.clone().unwrap_or_else(|| error_body(format, *status));
            let bytes = json_response(*status, &body, retry_after.as_deref());
            write_all(&mut sock, &bytes, reply.write_size).await
        }
        Answer::Malformed if !stream => {
            let body = "{\"id\": \"broken\", \"content\": [{\"type\": \"text\", \"te";
            write_all(&mut sock, &json_response(200, body, None), reply.write_size).await
        }
        _ if !stream => {
            let body = ctx.json_body(&reply).to_string();
            write_all(&mut sock, &json_response(200, &body, None), reply.write_size).await
        }
        _ => send_stream(&mut sock, &ctx, &reply).await,
    };
    if !ok {
        shared.disconnects.fetch_add(1, Ordering::SeqCst);
        return;
    }
    if let Some(Fault::HangAfter(_)) = reply.fault {
        // Hold the connection until the client closes it (or a generous guard).
        let mut buf = [0u8; 256];
        let closed = tokio::time::timeout(Duration::from_secs(120), async {
            loop {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
        if closed.is_ok() {
            shared.disconnects.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("script", &self.script.lock().map(|s| s.len()).unwrap_or(0))
            .field("requests", &self.requests.lock().map(|r| r.len()).unwrap_or(0))
            .finish_non_exhaustive()
    }
}

type Responder = Arc<dyn Fn(&Value) -> Option<Reply> + Send + Sync>;

/// The scripted reply for the next request, else the responder's, else the
/// default one.
fn next_reply(shared: &Shared, body: Option<&Value>) -> Reply {
    if let Some(r) = shared.script.lock().unwrap().pop_front() {
        return r;
    }
    let responder = shared.responder.lock().unwrap().clone();
    if let (Some(f), Some(body)) = (responder, body)
        && let Some(r) = f(body)
    {
        return r;
    }
    shared.default.lock().unwrap().clone()
}

/// A whole JSON answer: head and body.
fn json_response(status: u16, body: &str, retry_after: Option<&str>) -> Vec<u8> {
    let extra: Vec<(&str, &str)> = retry_after.map(|r| ("retry-after", r)).into_iter().collect();
    let mut bytes = head(status, "application/json", Some(body.len()), &extra);
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

/// `POST …/embeddings`: vectors from [`mock_embedding`], or the scripted status
/// or malformed body.
async fn serve_embeddings(mut sock: TcpStream, shared: &Shared, inputs: &[String], model: &str) {
    let reply = next_reply(shared, None);
    if !reply.first_byte_delay.is_zero() {
        tokio::time::sleep(reply.first_byte_delay).await;
    }
    let bytes = match &reply.answer {
        Answer::Status { status, retry_after, body } => {
            let body = body.clone().unwrap_or_else(|| error_body(Format::OpenAi, *status));
            json_response(*status, &body, retry_after.as_deref())
        }
        Answer::Malformed => json_response(200, "{\"object\": \"list\", \"data\": [{\"embe", None),
        _ => json_response(200, &embeddings_body(inputs, model).to_string(), None),
    };
    if !write_all(&mut sock, &bytes, reply.write_size).await {
        shared.disconnects.fetch_add(1, Ordering::SeqCst);
    }
}

/// Sends an SSE body with chunked encoding; applies the reply's fault. Returns
/// false when the client went away.
async fn send_stream(sock: &mut TcpStream, ctx: &Ctx, reply: &Reply) -> bool {
    let events: Vec<String> = match reply.answer {
        Answer::Malformed => vec![match ctx.format {
            Format::Anthropic => {
                "event: message_start\ndata: {\"type\": \"message_start\", \"mess\n\n".to_owned()
            }
            Format::OpenAi => "data: {\"id\": \"chatcmpl-broken\", \"choices\": [\n\n".to_owned(),
        }],
        _ => ctx.sse_events(reply),
    };
    let headers = head(200, "text/event-stream", None, &[("cache-control", "no-cache")]);
    if !write_all(sock, &headers, None).await {
        return false;
    }
    for (i, ev) in events.iter().enumerate() {
        match reply.fault {
            Some(Fault::ResetAfter(n)) if i == n => {
                // SO_LINGER 0: close() sends RST instead of FIN.
                #[allow(deprecated)]
                let _ = sock.set_linger(Some(Duration::ZERO));
                return true;
            }
            Some(Fault::TruncateAfter(n)) if i == n => break,
            Some(Fault::HangAfter(n)) if i == n => return true,
            Some(Fault::ErrorEventAfter(n)) if i == n => {
                let ev = match ctx.format {
                    Format::Anthropic => format!(
                        "event: error\ndata: {}\n\n",
                        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
                    ),
                    Format::OpenAi => format!(
                        "data: {}\n\n",
                        json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error"}})
                    ),
                };
                let mut chunk = format!("{:x}\r\n", ev.len()).into_bytes();
                chunk.extend_from_slice(ev.as_bytes());
                chunk.extend_from_slice(b"\r\n");
                if !write_all(sock, &chunk, None).await {
                    return false;
                }
                break;
            }
            _ => {}
        }
        let mut chunk = format!("{:x}\r\n", ev.len()).into_bytes();
        chunk.extend_from_slice(ev.as_bytes());
        chunk.extend_from_slice(b"\r\n");
        if !write_all(sock, &chunk, reply.write_size).await {
            return false;
        }
    }
    write_all(sock, b"0\r\n\r\n", None).await
}

async fn write_all(sock: &mut TcpStream, bytes: &[u8], piece: Option<usize>) -> bool {
    match piece {
        None => sock.write_all(bytes).await.is_ok() && sock.flush().await.is_ok(),
        Some(n) => {
            for part in bytes.chunks(n) {
                if sock.write_all(part).await.is_err() || sock.flush().await.is_err() {
                    return false;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            true
        }
    }
}

fn head(status: u16, content_type: &str, len: Option<usize>, extra: &[(&str, &str)]) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    };
    let mut h = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\nconnection: close\r\n"
    );
    match len {
        Some(n) => h.push_str(&format!("content-length: {n}\r\n")),
        None => h.push_str("transfer-encoding: chunked\r\n"),
    }
    for (k, v) in extra {
        h.push_str(&format!("{k}: {v}\r\n"));
    }
    h.push_str("\r\n");
    h.into_bytes()
}

/// Dimensions of the mock's embeddings.
pub const MOCK_EMBEDDING_DIMS: usize = 256;

/// The mock's embedding of a text: a bag of its lower-cased words (split at
/// non-alphanumerics, `snake_case` and `camelCase`), hashed into
/// [`MOCK_EMBEDDING_DIMS`] counts and normalized. Texts sharing words are close,
/// so tests can predict what a dense retriever ranks first.
pub fn mock_embedding(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; MOCK_EMBEDDING_DIMS];
    let mut words = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()) {
        let mut word = String::new();
        let mut prev_lower = false;
        for c in token.chars() {
            if c.is_uppercase() && prev_lower {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        }
        words.push(word);
    }
    for w in words.iter().filter(|w| w.len() > 1) {
        // FNV-1a: stable across runs and platforms.
        let h = w.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        v[(h % MOCK_EMBEDDING_DIMS as u64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

fn embeddings_body(inputs: &[String], model: &str) -> Value {
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": mock_embedding(t)}))
        .collect();
    let tokens: usize = inputs.iter().map(|t| t.split_whitespace().count()).sum();
    json!({"object": "list", "data": data, "model": model,
           "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
}

fn error_body(format: Format, status: u16) -> String {
    let (typ, msg) = match status {
        400 => ("invalid_request_error", "invalid request"),
        401 => ("authentication_error", "invalid api key"),
        403 => ("permission_error", "not allowed"),
        404 => ("not_found_error", "no such model"),
        429 => ("rate_limit_error", "rate limit exceeded"),
        529 => ("overloaded_error", "Overloaded"),
        _ => ("api_error", "internal server error"),
    };
    match format {
        Format::Anthropic => json!({"type": "error", "error": {"type": typ, "message": msg}}),
        Format::OpenAi => {
            json!({"error": {"message": msg, "type": typ, "param": null, "code": null}})
        }
    }
    .to_string()
}

async fn read_request(sock: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 1 << 20 {
            return None;
        }
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let body = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    Some(Recorded { method, path, headers, body, raw_body, at: Instant::now() })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// What rendering a reply needs from its request.
struct Ctx {
    format: Format,
    model: String,
    id: usize,
    forced_tool: Option<String>,
    include_usage: bool,
}

/// (text, tool calls, stop) of a reply.
fn parts(ctx: &Ctx, reply: &Reply) -> (String, Vec<(String, Value)>) {
    match &reply.answer {
        Answer::Text(t) => (t.clone(), Vec::new()),
        Answer::Tools { text, calls } => (text.clone(), calls.clone()),
        Answer::Structured(v) => match ctx.format {
            Format::Anthropic => {
                let name = ctx.forced_tool.clone().unwrap_or_else(|| "output".to_owned());
                (String::new(), vec![(name, v.clone())])
            }
            Format::OpenAi => (v.to_string(), Vec::new()),
        },
        Answer::Status { .. } | Answer::Malformed => (String::new(), Vec::new()),
    }
}

fn split_chars(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

impl Ctx {
    fn tool_id(&self, i: usize) -> String {
        match self.format {
            Format::Anthropic => format!("toolu_mock_{}_{i}", self.id),
            Format::OpenAi => format!("call_mock_{}_{i}", self.id),
        }
    }

    fn json_body(&self, reply: &Reply) -> Value {
        let (text, calls) = parts(self, reply);
        let u = reply.usage;
        match self.format {
            Format::Anthropic => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(json!({"type": "text", "text": text}));
                }
                for (i, (name, args)) in calls.iter().enumerate() {
                    content.push(json!({"type": "tool_use", "id": self.tool_id(i), "name": name, "input": args}));
                }
                json!({
                    "id": format!("msg_mock_{}", self.id),
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": content,
                    "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" },
                    "stop_sequence": null,
                    "usage": {
                        "input_tokens": u.input,
                        "output_tokens": u.output,
                        "cache_creation_input_tokens": u.cache_write,
                        "cache_read_input_tokens": u.cache_read,
                    },
                })
            }
            Format::OpenAi => {
                let mut message = json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { json!(text) },
                    "refusal": null,
                });
                if !calls.is_empty() {
                    message["tool_calls"] = calls
                        .iter()
                        .enumerate()
                        .map(|(i, (name, args))| {
                            json!({"id": self.tool_id(i), "type": "function",
                                   "function": {"name": name, "arguments": args.to_string()}})
                        })
                        .collect();
                }
                json!({
                    "id": format!("chatcmpl-mock{}", self.id),
                    "object": "chat.completion",
                    "created": 1_700_000_000,
                    "model": self.model,
                    "choices": [{
                        "index": 0,
                        "message": message,
                        "logprobs": null,
                        "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" },
                    }],
                    "usage": openai_usage(&u),
                    "system_fingerprint": null,
                })
            }
        }
    }

    /// The SSE events, each a complete `event:`/`data:` block ending in a blank line.
    fn sse_events(&self, reply: &Reply) -> Vec<String> {
        let (text, calls) = parts(self, reply);
        let u = reply.usage;
        let mut out = Vec::new();
        match self.format {
            Format::Anthropic => {
                let ev = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
                out.push(ev(
                    "message_start",
                    json!({"type": "message_start", "message": {
                        "id": format!("msg_mock_{}", self.id), "type": "message", "role": "assistant",
                        "model": self.model, "content": [], "stop_reason": null, "stop_sequence": null,
                        "usage": {"input_tokens": u.input, "output_tokens": 1,
                                  "cache_creation_input_tokens": u.cache_write,
                                  "cache_read_input_tokens": u.cache_read},
                    }}),
                ));
                let mut index = 0;
                if !text.is_empty() {
                    out.push(ev(
                        "content_block_start",
                        json!({"type": "content_block_start", "index": index,
                               "content_block": {"type": "text", "text": ""}}),
                    ));
                    out.push(ev("ping", json!({"type": "ping"})));
                    for piece in split_chars(&text, reply.delta_chars) {
                        out.push(ev(
                            "content_block_delta",
                            json!({"type": "content_block_delta", "index": index,
                                   "delta": {"type": "text_delta", "text": piece}}),
                        ));
                    }
                    out.push(ev(
                        "content_block_stop",
                        json!({"type": "content_block_stop", "index": index}),
                    ));
                    index += 1;
                }
                for (i, (name, args)) in calls.iter().enumerate() {
                    out.push(ev(
                        "content_block_start",
                        json!({"type": "content_block_start", "index": index,
                               "content_block": {"type": "tool_use", "id": self.tool_id(i),
                                                 "name": name, "input": {}}}),
                    ));
                    // Anthropic starts with an empty fragment, then splits the JSON anywhere.
                    let mut pieces = vec![String::new()];
                    pieces.extend(split_chars(&args.to_string(), 5));
                    for piece in pieces {
                        out.push(ev(
                            "content_block_delta",
                            json!({"type": "content_block_delta", "index": index,
                                   "delta": {"type": "input_json_delta", "partial_json": piece}}),
                        ));
                    }
                    out.push(ev(
                        "content_block_stop",
                        json!({"type": "content_block_stop", "index": index}),
                    ));
                    index += 1;
                }
                out.push(ev(
                    "message_delta",
                    json!({"type": "message_delta",
                           "delta": {"stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" },
                                     "stop_sequence": null},
                           "usage": {"output_tokens": u.output}}),
                ));
                out.push(ev("message_stop", json!({"type": "message_stop"})));
            }
            Format::OpenAi => {
                let chunk = |delta: Value, finish: Value| {
                    let mut c = json!({
                        "id": format!("chatcmpl-mock{}", self.id),
                        "object": "chat.completion.chunk",
                        "created": 1_700_000_000,
                        "model": self.model,
                        "system_fingerprint": null,
                        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
                    });
                    if self.include_usage {
                        c["usage"] = Value::Null;
                    }
                    format!("data: {c}\n\n")
                };
                out.push(chunk(json!({"role": "assistant", "content": ""}), Value::Null));
                for piece in split_chars(&text, reply.delta_chars) {
                    out.push(chunk(json!({"content": piece}), Value::Null));
                }
                for (i, (name, args)) in calls.iter().enumerate() {
                    out.push(chunk(
                        json!({"tool_calls": [{"index": i, "id": self.tool_id(i), "type": "function",
                                               "function": {"name": name, "arguments": ""}}]}),
                        Value::Null,
                    ));
                    for piece in split_chars(&args.to_string(), 5) {
                        out.push(chunk(
                            json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                            Value::Null,
                        ));
                    }
                }
                out.push(chunk(
                    json!({}),
                    json!(if calls.is_empty() { "stop" } else { "tool_calls" }),
                ));
                if self.include_usage {
                    let c = json!({
                        "id": format!("chatcmpl-mock{}", self.id),
                        "object": "chat.completion.chunk",
                        "created": 1_700_000_000,
                        "model": self.model,
                        "system_fingerprint": null,
                        "choices": [],
                        "usage": openai_usage(&u),
                    });
                    out.push(format!("data: {c}\n\n"));
                }
                out.push("data: [DONE]\n\n".to_owned());
            }
        }
        out
    }
}

fn openai_usage(u: &MockUsage) -> Value {
    json!({
        "prompt_tokens": u.input + u.cache_read,
        "completion_tokens": u.output,
        "total_tokens": u.input + u.cache_read + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cache_read},
    })
}
