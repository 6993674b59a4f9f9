//! What the dependability layer costs per call, against the wire-level mock on
//! loopback: `Llm::complete` / `Llm::stream` (breaker, budget checks, retry loop,
//! SSE decoding, price lookup, ledger) side by side with the least any client
//! must do — a bare reqwest POST of the same body whose answer is only parsed as
//! JSON (streaming: split into SSE events, each parsed as JSON).
//!
//!   cargo bench -p llm --bench overhead
//!
//! Both sides make the same sequential calls to the same server (a new
//! connection each: the mock answers `connection: close`), interleaved in rounds
//! so machine noise hits both alike.
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use llm::{CallOptions, Llm, Request, Secret, Settings, StandardEnv};
use test_support::mock_llm::{MockLlm, Reply};

const ROUNDS: usize = 5;
const CALLS: usize = 60;

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mock = MockLlm::start();
    mock.set_default(Reply::text("word ".repeat(200)).delta_chars(8));
    let env = StandardEnv {
        anthropic_api_key: Some(Secret::new("k")),
        anthropic_base_url: Some(mock.url()),
        ..StandardEnv::default()
    };
    let llm = Llm::new(&Settings::default().with_standard_env(&env)).unwrap();
    let raw = reqwest::Client::new();
    let url = format!("{}/v1/messages", mock.url());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let req = Request::new("hello");
    let body = |stream: bool| {
        serde_json::json!({"model": "claude-sonnet-4-5", "max_tokens": 4096, "stream": stream,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]})
        .to_string()
    };
    let (json_body, sse_body) = (body(false), body(true));
    let mut t = [Duration::ZERO; 4];
    rt.block_on(async {
        for _ in 0..ROUNDS {
            let s = Instant::now();
            for _ in 0..CALLS {
                let r = raw
                    .post(&url)
                    .header("x-api-key", "k")
                    .body(json_body.clone())
                    .send()
                    .await
                    .unwrap();
                let v: serde_json::Value =
                    serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
                assert!(v["content"].is_array());
            }
            t[0] += s.elapsed();
            let s = Instant::now();
            for _ in 0..CALLS {
                let r = llm.complete(&req, &CallOptions::default()).await.unwrap();
                assert!(!r.text().is_empty());
            }
            t[1] += s.elapsed();
            let s = Instant::now();
            for _ in 0..CALLS {
                let r = raw
                    .post(&url)
                    .header("x-api-key", "k")
                    .body(sse_body.clone())
                    .send()
                    .await
                    .unwrap();
                // The minimum a streaming client does: split events, parse each as JSON.
                let (mut buf, mut events) = (Vec::new(), 0);
                let mut stream = r.bytes_stream();
                while let Some(c) = stream.next().await {
                    buf.extend_from_slice(&c.unwrap());
                    while let Some(i) = buf.windows(2).position(|w| w == b"\n\n") {
                        let ev: Vec<u8> = buf.drain(..i + 2).collect();
                        let text = std::str::from_utf8(&ev).unwrap();
                        if let Some(data) = text.lines().find_map(|l| l.strip_prefix("data: ")) {
                            let v: serde_json::Value = serde_json::from_str(data).unwrap();
                            assert!(v.is_object());
                            events += 1;
                        }
                    }
                }
                assert!(events > 100);
            }
            t[2] += s.elapsed();
            let s = Instant::now();
            for _ in 0..CALLS {
                let r = llm.stream(&req, &CallOptions::default(), &mut |_| {}).await.unwrap();
                assert!(!r.text().is_empty());
            }
            t[3] += s.elapsed();
        }
    });
    let per = |d: Duration| d.as_secs_f64() * 1e6 / (ROUNDS * CALLS) as f64;
    println!("{} calls each, {} bytes of answer text", ROUNDS * CALLS, 1000);
    println!(
        "json   raw reqwest {:8.1} µs/call   llm::complete {:8.1} µs/call   ratio {:.2}x",
        per(t[0]),
        per(t[1]),
        per(t[1]) / per(t[0])
    );
    println!(
        "stream raw reqwest {:8.1} µs/call   llm::stream   {:8.1} µs/call   ratio {:.2}x",
        per(t[2]),
        per(t[3]),
        per(t[3]) / per(t[2])
    );
}
