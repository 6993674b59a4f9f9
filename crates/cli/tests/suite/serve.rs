//! `ironbees serve` end to end: the real binary listening on loopback, the model
//! played by the wire-level mock, real HTTP clients (reqwest; the Python MCP SDK;
//! openapi-spec-validator; headless Chromium over WebDriver) and, for replicas,
//! a real PostgreSQL server started here.
//!
//! A test that needs a tool that is missing (Chromium, PostgreSQL, a Python
//! package) skips loudly on a developer's machine and fails under `CI=true`.

use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use assert_cmd::cargo::CommandCargoExt;
use futures_util::StreamExt;
use serde_json::{Value, json};
use test_support::{
    TempProject,
    mock_llm::{MockLlm, Reply},
};

use super::agent::{
    CALC, DIVISION, GUARDED, after_tool, agent_of, calc_project, calculator_model, plan_json,
    replace_args, usage,
};

const API_KEY: &str = "sk-ant-agent-test";

/// A running `ironbees serve`.
pub(super) struct Served {
    child: Option<Child>,
    pub(super) url: String,
    pub(super) token: String,
    stderr: Arc<Mutex<String>>,
}

/// The binary in `dir` with the mock as its model and nothing else configured.
pub(super) fn ironbees(dir: &Path, mock: &MockLlm) -> Command {
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.arg("-C").arg(dir);
    c.env("XDG_CONFIG_HOME", dir.join(".no-user-config"));
    super::without_model_env(&mut c);
    c.env("ANTHROPIC_API_KEY", API_KEY).env("ANTHROPIC_BASE_URL", mock.url());
    c.stdin(Stdio::null());
    c
}

impl Served {
    /// Starts the server on a free loopback port and waits until it listens.
    pub(super) fn start(dir: &Path, mock: &MockLlm, args: &[&str]) -> Served {
        let mut c = ironbees(dir, mock);
        c.args(["serve", "--bind", "127.0.0.1:0", "--no-watch"]).args(args);
        c.env("IRONBEES_LOG", "server=debug,workflow=debug");
        Served::spawn(c, dir)
    }

    pub(super) fn spawn(mut c: Command, dir: &Path) -> Served {
        let mut child = c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let log = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in lines.lines() {
                let Ok(line) = line else { break };
                if let Some(i) = line.find("listening on http://") {
                    let rest = &line[i + "listening on ".len()..];
                    let url = rest.split_whitespace().next().unwrap_or("").to_owned();
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(url);
                    }
                }
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server did not start:\n{}", stderr.lock().unwrap());
            }
        };
        let token = std::fs::read_to_string(dir.join(".ironbees/serve-token"))
            .map(|t| t.trim().to_owned())
            .unwrap_or_default();
        Served { child: Some(child), url, token, stderr }
    }

    pub(super) fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    #[allow(dead_code)]
    pub(super) fn pid(&self) -> i32 {
        self.child.as_ref().map_or(0, |c| c.id() as i32)
    }

    /// SIGTERM, then the exit status.
    pub(super) fn terminate(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        signal(child.id() as i32, libc::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = child.try_wait().unwrap() {
                return s.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the server did not stop within 30 s of SIGTERM:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL: the process dies at once, mid-whatever.
    pub(super) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.kill();
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) on a child this test started.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid, sig);
    }
}

pub(super) fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

pub(super) fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Sse {
    pub(super) id: Option<u64>,
    pub(super) event: Option<String>,
    pub(super) data: String,
}

impl Sse {
    pub(super) fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("{e}: {}", self.data))
    }

    /// A run event's `kind.type`.
    #[allow(dead_code)]
    pub(super) fn kind(&self) -> String {
        if self.event.is_some() {
            return String::new();
        }
        self.json()["kind"]["type"].as_str().unwrap_or_default().to_owned()
    }
}

/// Reads server-sent events until the stream ends, `stop` says so, or `limit`
/// passes (a failure).
pub(super) async fn read_sse(
    resp: reqwest::Response,
    limit: Duration,
    mut stop: impl FnMut(&Sse) -> bool,
) -> Vec<Sse> {
    let mut out = Vec::new();
    let mut body = resp.bytes_stream();
    let mut buf = String::new();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let chunk = tokio::time::timeout_at(deadline, body.next())
            .await
            .unwrap_or_else(|_| panic!("no end of the event stream within {limit:?}: {out:?}"));
        let Some(chunk) = chunk else { return out };
        buf.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(i) = buf.find("\n\n") {
            let block: String = buf.drain(..i + 2).collect();
            let mut ev = Sse { id: None, event: None, data: String::new() };
            let mut lines = 0;
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    ev.id = v.trim().parse().ok();
                } else if let Some(v) = line.strip_prefix("event:") {
                    ev.event = Some(v.trim().to_owned());
                } else if let Some(v) = line.strip_prefix("data:") {
                    if lines > 0 {
                        ev.data.push('\n');
                    }
                    ev.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    lines += 1;
                }
            }
            if lines == 0 {
                continue; // a keep-alive comment
            }
            let done = stop(&ev);
            out.push(ev);
            if done {
                return out;
            }
        }
    }
}

impl Served {
    pub(super) fn get(&self, c: &reqwest::Client, path: &str) -> reqwest::RequestBuilder {
        c.get(format!("{}{path}", self.url)).bearer_auth(&self.token)
    }

    pub(super) fn post(
        &self,
        c: &reqwest::Client,
        path: &str,
        body: &Value,
    ) -> reqwest::RequestBuilder {
        c.post(format!("{}{path}", self.url))
            .bearer_auth(&self.token)
            .header("content-type", "application/json")
            .body(body.to_string())
    }

    /// A JSON answer: its status and body.
    pub(super) async fn json(&self, req: reqwest::RequestBuilder) -> (u16, Value) {
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {status} {text}"));
        (status, body)
    }

    /// Waits until the run's status is `status` (the `type` tag).
    pub(super) async fn wait_status(
        &self,
        c: &reqwest::Client,
        run: &str,
        status: &str,
        limit: Duration,
    ) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let (code, view) = self.json(self.get(c, &format!("/api/agent/state/{run}"))).await;
            if code == 200 && view["checkpoint"]["status"]["type"] == status {
                return view;
            }
            assert!(
                Instant::now() < deadline,
                "run {run} not {status} in {limit:?}: {view}\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Every run event of a stream, checked to be numbered without gaps from
/// `first`.
fn run_events(events: &[Sse], first: u64) -> Vec<Value> {
    let run: Vec<&Sse> = events.iter().filter(|e| e.event.is_none()).collect();
    for (i, e) in run.iter().enumerate() {
        assert_eq!(e.id, Some(first + i as u64), "events out of order: {run:?}");
        assert_eq!(e.json()["seq"], json!(first + i as u64));
    }
    run.iter().map(|e| e.json()).collect()
}

// --- one run, start to end -------------------------------------------------------------

#[test]
fn serve_execute_streams_to_the_plan_gate_and_an_approval_runs_it_to_success() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let s = Served::start(p.root(), &mock, &[]);
    let mut bodies = Vec::<String>::new();
    rt().block_on(async {
        let c = client();
        // No token, a wrong one: 401 with a machine code, nothing else said.
        for token in [None, Some("not-the-token")] {
            let mut req = c.get(format!("{}/api/agent/runs", s.url));
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            let r = req.send().await.unwrap();
            assert_eq!(r.status().as_u16(), 401);
            assert_eq!(r.headers()["www-authenticate"], "Bearer");
            let body: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
            assert_eq!(body["code"], "UNAUTHORIZED", "{body}");
        }
        let r = c.post(format!("{}/mcp", s.url)).body("{}").send().await.unwrap();
        assert_eq!(r.status().as_u16(), 401, "/mcp is behind the token too");
        // The console's page needs no token and carries none.
        let page = c.get(format!("{}/", s.url)).send().await.unwrap().text().await.unwrap();
        assert!(page.contains("ironbees") && !page.contains(&s.token));

        // Bad requests are JSON errors with codes.
        let (code, err) = s
            .json(s.post(
                &c,
                "/api/agent/execute",
                &json!({"userRequest": "x", "contextFiles": ["../etc/passwd"]}),
            ))
            .await;
        assert_eq!((code, err["code"].as_str()), (400, Some("PATH_OUTSIDE_ROOT")), "{err}");
        let (code, err) =
            s.json(s.post(&c, "/api/agent/execute", &json!({"request": "typo"}))).await;
        assert_eq!((code, err["code"].as_str()), (400, Some("INVALID_ARGUMENT")), "{err}");
        let big = json!({"userRequest": "x".repeat(2 << 20)});
        let r = s.post(&c, "/api/agent/execute", &big).send().await.unwrap();
        // The rest of the body is not read: the connection closes, and the
        // answer says so, or the client sends its next request into it (the
        // flaky `IncompleteMessage` on the request after this one).
        assert_eq!(
            r.headers().get("connection").map(|v| v.as_bytes()),
            Some(&b"close"[..]),
            "{} {:?}",
            r.status(),
            r.headers()
        );
        let code = r.status().as_u16();
        let err: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
        assert_eq!((code, err["code"].as_str()), (413, Some("PAYLOAD_TOO_LARGE")), "{err}");
        let (code, err) = s.json(s.get(&c, "/api/agent/state/nope")).await;
        assert_eq!((code, err["code"].as_str()), (404, Some("STATE_NOT_FOUND")), "{err}");

        // execute: the run's events stream until it waits at the plan gate.
        let resp = s
            .post(
                &c,
                "/api/agent/execute",
                &json!({
                    "userRequest": "Fix the division by zero bug in calculate()",
                    "contextFiles": ["calc.py"],
                    "preferences": {"style": "raise, do not return None"}
                }),
            )
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
        let first = read_sse(resp, Duration::from_secs(120), |_| false).await;
        bodies.extend(first.iter().map(|e| e.data.clone()));
        assert_eq!(first[0].event.as_deref(), Some("run"), "{first:?}");
        let run_id = first[0].json()["runId"].as_str().unwrap().to_owned();
        let events = run_events(&first, 1);
        assert_eq!(events.last().unwrap()["kind"]["type"], "interrupted", "{events:?}");
        assert_eq!(events.last().unwrap()["kind"]["node"], "WAIT_PLAN_APPROVAL");
        let states: Vec<Value> =
            first.iter().filter(|e| e.event.as_deref() == Some("state")).map(Sse::json).collect();
        let last = states.last().unwrap();
        assert_eq!(last["currentNode"], "WAIT_PLAN_APPROVAL", "{states:?}");
        assert_eq!(last["status"]["type"], "waiting");
        assert_eq!(last["plan"]["steps"][0]["filePath"], "calc.py", "{last}");
        // The planner was told the request's context.
        let planner =
            mock.requests().into_iter().map(|r| r.body).find(|b| agent_of(b) == "Planner").unwrap();
        assert!(planner.to_string().contains("Preference, style: raise, do not return None"));

        // state: the checkpoint and the plan; the run is in the list.
        let (code, view) = s.json(s.get(&c, &format!("/api/agent/state/{run_id}"))).await;
        assert_eq!(code, 200, "{view}");
        assert_eq!(view["checkpoint"]["status"]["type"], "waiting");
        let state_id = view["checkpoint"]["stateId"].as_str().unwrap().to_owned();
        assert_eq!(view["state"]["stateId"], state_id);
        bodies.push(view.to_string());
        let (_, page) = s.json(s.get(&c, "/api/agent/runs?status=waiting")).await;
        assert_eq!(page["runs"][0]["id"], run_id, "{page}");
        assert!(page["runs"][0]["costUsd"].as_f64().is_some());

        // approve: queued, then a worker drives the run on.
        let (code, ok) = s
            .json(s.post(&c, "/api/agent/approve", &json!({"stateId": state_id, "approved": true})))
            .await;
        assert_eq!(code, 202, "{ok}");
        assert_eq!(ok["runId"], run_id);
        let resp = s
            .get(&c, &format!("/api/agent/runs/{run_id}/events"))
            .header("last-event-id", events.len().to_string())
            .send()
            .await
            .unwrap();
        let rest = read_sse(resp, Duration::from_secs(180), |_| false).await;
        bodies.extend(rest.iter().map(|e| e.data.clone()));
        let rest = run_events(&rest, events.len() as u64 + 1);
        let end = &rest.last().unwrap()["kind"];
        assert_eq!(end["type"], "runFinished", "{rest:?}\n{}", s.log());
        assert_eq!(end["status"]["type"], "succeeded", "{end}");
        assert!(rest.iter().any(|e| e["kind"]["type"] == "applied"));
        assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));

        // An answer to a checkpoint the run has left is refused, not applied.
        let (code, err) = s
            .json(s.post(&c, "/api/agent/approve", &json!({"stateId": state_id, "approved": true})))
            .await;
        assert_eq!((code, err["code"].as_str()), (409, Some("INVALID_STATE")), "{err}");
        // An older checkpoint is still there to look at.
        let (code, old) = s.json(s.get(&c, &format!("/api/agent/state/{state_id}"))).await;
        assert_eq!((code, &old["checkpoint"]["stateId"]), (200, &json!(state_id)));
        let (_, page) = s.json(s.get(&c, "/api/agent/runs?limit=1")).await;
        assert_eq!(page["runs"][0]["status"]["type"], "succeeded");
        assert!(page["runs"][0]["costUsd"].as_f64().unwrap() >= 0.0);
        bodies.push(page.to_string());
        let (code, cancelled) =
            s.json(s.post(&c, "/api/agent/cancel", &json!({"runId": run_id}))).await;
        assert_eq!(
            (code, &cancelled["status"]["type"]),
            (200, &json!("succeeded")),
            "a finished run stays so"
        );
        let (code, err) = s.json(s.get(&c, "/api/agent/runs?status=bogus")).await;
        assert_eq!((code, err["code"].as_str()), (400, Some("INVALID_ARGUMENT")));
    });
    // No secret anywhere: not the model's key, not the token.
    for b in &bodies {
        assert!(!b.contains(API_KEY) && !b.contains(&s.token), "a secret in {b}");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(p.path(".ironbees/serve-token")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// The calculator's model, slowed down so that a run takes seconds (streams
/// and reconnections happen mid-run).
pub(super) fn slow_calculator_model(mock: &MockLlm, delay: Duration) {
    let hash = stdx::sha256_hex(CALC.as_bytes());
    mock.set_responder(move |body| {
        let reply = match agent_of(body) {
            "Planner" => Reply::text(plan_json(
                "calc.py",
                "Raise ValueError when calculate() divides by zero",
            )),
            "Coder" if after_tool(body) => Reply::text("Guarded the division in calculate()."),
            "Coder" => Reply::tool_calls(
                "",
                vec![("change", replace_args("calc.py", &hash, DIVISION, GUARDED))],
            ),
            "Validator" => Reply::text("Cause: none."),
            _ => return None,
        };
        Some(reply.usage(usage()).first_byte_delay(delay))
    });
}

#[test]
fn serve_streams_one_run_to_100_clients_and_a_reconnection_misses_nothing() {
    let p = calc_project();
    let mock = MockLlm::start();
    slow_calculator_model(&mock, Duration::from_millis(400));
    let s = Served::start(p.root(), &mock, &[]);
    rt().block_on(async {
        let c = client();
        let (code, run) = s
            .json(
                s.post(
                    &c,
                    "/api/agent/execute",
                    &json!({"userRequest": "Fix the division by zero", "autoApprove": true}),
                )
                .header("accept", "application/json"),
            )
            .await;
        assert_eq!(code, 202, "{run}");
        let run_id = run["runId"].as_str().unwrap().to_owned();
        let path = format!("/api/agent/runs/{run_id}/events");

        // One client reads a few events, drops the connection mid-run, and
        // comes back with Last-Event-ID.
        let resp = s.get(&c, &path).send().await.unwrap();
        let head = read_sse(resp, Duration::from_secs(60), |e| e.id == Some(5)).await;
        let cut = head.last().unwrap().id.unwrap();
        tokio::time::sleep(Duration::from_millis(700)).await; // more events are written meanwhile
        let (_, view) = s.json(s.get(&c, &format!("/api/agent/state/{run_id}"))).await;
        assert_ne!(
            view["checkpoint"]["status"]["type"], "succeeded",
            "the run should still be going"
        );

        // 100 clients follow the same run from its start, concurrently.
        let clients: Vec<_> = (0..100)
            .map(|_| {
                let req = s.get(&c, &path);
                tokio::spawn(async move {
                    let resp = req.send().await.unwrap();
                    read_sse(resp, Duration::from_secs(180), |_| false).await
                })
            })
            .collect();
        let resp = s.get(&c, &path).header("last-event-id", cut.to_string()).send().await.unwrap();
        let tail = read_sse(resp, Duration::from_secs(180), |_| false).await;
        let mut seen = run_events(&head, 1);
        seen.extend(run_events(&tail, cut + 1));

        // What the store holds, read once it is all there.
        let resp = s.get(&c, &format!("{path}?follow=false")).send().await.unwrap();
        let all = run_events(&read_sse(resp, Duration::from_secs(30), |_| false).await, 1);
        assert_eq!(all.last().unwrap()["kind"]["status"]["type"], "succeeded", "{}", s.log());
        assert_eq!(seen, all, "the reconnected client missed or repeated events");
        for (i, h) in clients.into_iter().enumerate() {
            let got = run_events(&h.await.unwrap(), 1);
            assert_eq!(got, all, "client {i}");
        }
    });
}

#[test]
fn serve_refuses_a_non_loopback_bind_without_a_token_it_was_given() {
    let p = TempProject::new();
    let mock = MockLlm::start();
    let out = ironbees(p.root(), &mock).args(["serve", "--bind", "0.0.0.0:0"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("INVALID_ARGUMENT") && stderr.contains("token"), "{stderr}");
    assert!(!p.path(".ironbees/serve-token").exists(), "nothing generated for a refused bind");
    // With a token file the user chose, it starts (and is stopped by SIGTERM).
    let token = p.path("my-token");
    std::fs::write(&token, "a-token-i-chose\n").unwrap();
    let mut c = ironbees(p.root(), &mock);
    c.args(["serve", "--bind", "0.0.0.0:0", "--no-watch", "--token-file"]).arg(&token);
    let mut s = Served::spawn(c, p.root());
    assert!(s.url.starts_with("http://0.0.0.0:"), "{}", s.url);
    assert_eq!(s.terminate(), Some(0), "{}", s.log());
}

#[test]
fn serve_and_the_cli_answer_each_others_runs() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let s = Served::start(p.root(), &mock, &["--workers", "1"]);
    rt().block_on(async {
        let c = client();
        // Started over HTTP, approved from the command line.
        let (_, run) = s
            .json(
                s.post(
                    &c,
                    "/api/agent/execute",
                    &json!({"userRequest": "Fix the division by zero"}),
                )
                .header("accept", "application/json"),
            )
            .await;
        let run_id = run["runId"].as_str().unwrap().to_owned();
        s.wait_status(&c, &run_id, "waiting", Duration::from_secs(60)).await;
        let out = ironbees(p.root(), &mock)
            .args(["runs", "approve", &run_id, "--json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        s.wait_status(&c, &run_id, "succeeded", Duration::from_secs(10)).await;
        assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));

        // Started from the command line (it exits 10 at the gate), approved over HTTP.
        std::fs::write(p.path("calc.py"), CALC).unwrap();
        let out = ironbees(p.root(), &mock)
            .args(["run", "--json", "Fix the division by zero bug"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(10), "{}", String::from_utf8_lossy(&out.stderr));
        let outcome: Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap())
                .unwrap();
        let cli_run = outcome["outcome"]["runId"].as_str().unwrap().to_owned();
        let state_id = outcome["outcome"]["state"]["stateId"].as_str().unwrap().to_owned();
        let (code, ok) = s
            .json(s.post(&c, "/api/agent/approve", &json!({"stateId": state_id, "approved": true})))
            .await;
        assert_eq!(code, 202, "{ok}");
        s.wait_status(&c, &cli_run, "succeeded", Duration::from_secs(120)).await;
        assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
    });
}

#[test]
fn serve_stops_on_sigterm_and_the_next_server_finishes_the_run() {
    let p = calc_project();
    let mock = MockLlm::start();
    slow_calculator_model(&mock, Duration::from_millis(1500));
    let mut s = Served::start(p.root(), &mock, &[]);
    let run_id = rt().block_on(async {
        let c = client();
        let (_, run) = s
            .json(
                s.post(
                    &c,
                    "/api/agent/execute",
                    &json!({"userRequest": "Fix it", "autoApprove": true}),
                )
                .header("accept", "application/json"),
            )
            .await;
        let run_id = run["runId"].as_str().unwrap().to_owned();
        s.wait_status(&c, &run_id, "running", Duration::from_secs(30)).await;
        run_id
    });
    let started = Instant::now();
    assert_eq!(s.terminate(), Some(0), "{}", s.log());
    assert!(started.elapsed() < Duration::from_secs(15), "took {:?}", started.elapsed());
    // The run was left resumable: not cancelled, not applied.
    assert_eq!(p.read("calc.py"), CALC);
    let s = Served::start(p.root(), &mock, &[]);
    rt().block_on(async {
        let c = client();
        let view = s.wait_status(&c, &run_id, "succeeded", Duration::from_secs(120)).await;
        assert!(view["state"]["transactionId"].is_string(), "{view}");
    });
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
}

/// Where the tests leave what a person may want to look at (screenshots): the
/// build's target directory, wherever `CARGO_TARGET_DIR` puts it.
#[allow(dead_code)]
pub(super) fn target_dir() -> PathBuf {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// --- replicas on PostgreSQL --------------------------------------------------------------

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Which of the servers claimed the run's job last (their logs say).
fn holder<'a>(servers: &'a [&'a Served], run_id: &str) -> Option<usize> {
    servers.iter().position(|s| {
        s.log().lines().any(|l| l.contains("job claimed") && l.contains(&format!("run={run_id}")))
    })
}

#[test]
fn serve_replicas_on_postgres_share_runs_and_take_over_a_killed_ones_run() {
    if !test_support::postgres::available("serve_replicas") {
        return;
    }
    let pg = test_support::postgres::PgServer::start();
    let p = calc_project();
    std::fs::create_dir_all(p.path(".ironbees")).unwrap();
    std::fs::write(
        p.path(".ironbees/config.yaml"),
        format!("serve:\n  database_url: {}\n  lease_seconds: 1.5\n", pg.url()),
    )
    .unwrap();
    let mock = MockLlm::start();
    slow_calculator_model(&mock, Duration::from_millis(700));
    let a = Served::start(p.root(), &mock, &["--workers", "1"]);
    let b = Served::start(p.root(), &mock, &["--workers", "1"]);
    let mut servers = [Some(a), Some(b)];
    let (run_id, before, killed_at) = rt().block_on(async {
        let c = client();
        let a = servers[0].as_ref().unwrap();
        let (code, run) = a
            .json(
                a.post(
                    &c,
                    "/api/agent/execute",
                    &json!({"userRequest": "Fix the division by zero", "autoApprove": true}),
                )
                .header("accept", "application/json"),
            )
            .await;
        assert_eq!(code, 202, "{run}");
        let run_id = run["runId"].as_str().unwrap().to_owned();
        // Follow it on B until the coder has made its change, then kill the
        // replica that drives it, mid-run.
        let b = servers[1].as_ref().unwrap();
        let resp = b.get(&c, &format!("/api/agent/runs/{run_id}/events")).send().await.unwrap();
        let before = read_sse(resp, Duration::from_secs(120), |e| {
            e.json()["kind"]["type"] == "nodeStarted" && e.json()["kind"]["node"] == "VALIDATE"
        })
        .await;
        (run_id, run_events(&before, 1), now_ms())
    });
    let both: Vec<&Served> = servers.iter().map(|s| s.as_ref().unwrap()).collect();
    let victim = holder(&both, &run_id).expect("one replica claimed the run");
    servers[victim].as_mut().unwrap().kill();
    let survivor = servers[1 - victim].as_ref().unwrap();
    let (after, takeover_ms) = rt().block_on(async {
        let c = client();
        let view = survivor.wait_status(&c, &run_id, "succeeded", Duration::from_secs(120)).await;
        assert!(view["state"]["transactionId"].is_string(), "{view}");
        let resp = survivor
            .get(&c, &format!("/api/agent/runs/{run_id}/events?follow=false"))
            .send()
            .await
            .unwrap();
        let all = run_events(&read_sse(resp, Duration::from_secs(30), |_| false).await, 1);
        let resumed = all
            .iter()
            .find(|e| {
                e["kind"]["type"] == "runResumed" && e["timeMs"].as_i64().unwrap() >= killed_at
            })
            .unwrap_or_else(|| panic!("no takeover: {all:?}"))["timeMs"]
            .as_i64()
            .unwrap();
        (all, resumed - killed_at)
    });
    #[allow(clippy::print_stderr)]
    {
        eprintln!("replica takeover after SIGKILL: {takeover_ms} ms (lease 1.5 s)");
    }
    // Nothing lost: what was written before the kill is the start of the whole.
    assert_eq!(&after[..before.len()], &before[..], "events before the kill changed");
    // Not executed twice: one apply, one transaction, the fix once.
    let applied: Vec<&Value> = after.iter().filter(|e| e["kind"]["type"] == "applied").collect();
    assert_eq!(applied.len(), 1, "{applied:?}");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
    let out = ironbees(p.root(), &mock).args(["history", "--json"]).output().unwrap();
    let history: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    // Every checkpoint is there, numbered without gaps, and no two executions overlapped:
    // each `runResumed` after the first execution follows a gap in the events of a dead one.
    let out = ironbees(p.root(), &mock).args(["runs", "show", &run_id, "--json"]).output().unwrap();
    let shown: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let seq = shown["checkpoint"]["seq"].as_u64().unwrap();
    let checkpoints: Vec<u64> = after
        .iter()
        .filter(|e| e["kind"]["type"] == "checkpoint")
        .map(|e| e["kind"]["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(checkpoints, (1..=seq).collect::<Vec<_>>(), "a checkpoint is missing");

    // An approval reaches whichever replica is alive: a run waiting at its plan,
    // answered here, is driven by the survivor.
    rt().block_on(async {
        let c = client();
        std::fs::write(p.path("calc.py"), CALC).unwrap();
        let (_, run) = survivor
            .json(
                survivor
                    .post(&c, "/api/agent/execute", &json!({"userRequest": "Fix it again"}))
                    .header("accept", "application/json"),
            )
            .await;
        let id = run["runId"].as_str().unwrap().to_owned();
        let view = survivor.wait_status(&c, &id, "waiting", Duration::from_secs(60)).await;
        let state_id = view["checkpoint"]["stateId"].as_str().unwrap();
        let (code, _) = survivor
            .json(survivor.post(
                &c,
                "/api/agent/approve",
                &json!({"stateId": state_id, "approved": true}),
            ))
            .await;
        assert_eq!(code, 202);
        survivor.wait_status(&c, &id, "succeeded", Duration::from_secs(120)).await;
    });
    drop(pg);
}

#[test]
fn serve_answers_cors_only_for_the_configured_origins() {
    let mock = MockLlm::start();
    let with = TempProject::new();
    std::fs::create_dir_all(with.path(".ironbees")).unwrap();
    std::fs::write(
        with.path(".ironbees/config.yaml"),
        "serve:\n  cors: [https://console.example.com]\n",
    )
    .unwrap();
    let without = TempProject::new();
    let configured = Served::start(with.root(), &mock, &[]);
    let plain = Served::start(without.root(), &mock, &[]);
    rt().block_on(async {
        let c = client();
        let allowed = |r: &reqwest::Response| {
            r.headers().get("access-control-allow-origin").map(|v| v.to_str().unwrap().to_owned())
        };
        let preflight = |s: &Served, origin: &str| {
            c.request(reqwest::Method::OPTIONS, format!("{}/api/agent/execute", s.url))
                .header("origin", origin)
                .header("access-control-request-method", "POST")
                .header("access-control-request-headers", "authorization,content-type")
                .send()
        };
        // The configured origin may call the API from a browser; another may not.
        let r = preflight(&configured, "https://console.example.com").await.unwrap();
        assert_eq!(allowed(&r).as_deref(), Some("https://console.example.com"));
        let r = preflight(&configured, "https://elsewhere.example").await.unwrap();
        assert_eq!(allowed(&r), None);
        let r = configured
            .get(&c, "/api/agent/runs")
            .header("origin", "https://console.example.com")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(allowed(&r).as_deref(), Some("https://console.example.com"));
        // No `serve.cors`: no origin is allowed, not even for a request with the token.
        let r = preflight(&plain, "https://console.example.com").await.unwrap();
        assert_eq!(allowed(&r), None);
        let r = plain
            .get(&c, "/api/agent/runs")
            .header("origin", "https://console.example.com")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(allowed(&r), None);
    });
}

// --- real clients: the MCP Python SDK, an OpenAPI validator --------------------------------

#[test]
fn serve_mcp_over_streamable_http_and_the_openapi_document_pass_real_clients() {
    use super::mcp::{client_available, deps};
    let python = deps().join("python");
    let sdk = Command::new("python3")
        .args(["-c", "import mcp.client.streamable_http"])
        .env("PYTHONPATH", &python)
        .output()
        .is_ok_and(|o| o.status.success());
    let validator_path = deps().join("openapi");
    let validator = Command::new("python3")
        .args(["-c", "import openapi_spec_validator"])
        .env("PYTHONPATH", &validator_path)
        .output()
        .is_ok_and(|o| o.status.success());
    let sdk = client_available(
        "the Python MCP SDK",
        sdk,
        "python3 -m pip install --target target/test-deps/python mcp",
    );
    let validator = client_available(
        "openapi-spec-validator",
        validator,
        "python3 -m pip install --target target/test-deps/openapi openapi-spec-validator",
    );
    let p = super::mcp::project();
    let mock = MockLlm::start();
    let s = Served::start(p.root(), &mock, &[]);
    if sdk {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/clients/python_sdk.py");
        let out = Command::new("python3")
            .arg(&script)
            .args(["--http", &format!("{}/mcp", s.url), &s.token])
            .arg(p.root())
            .env("PYTHONPATH", &python)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "the Python client failed:\n{stdout}\n{stderr}\n{}", s.log());
        assert!(stdout.contains("python_sdk client: ok"), "{stdout}\n{stderr}");
    }
    if validator {
        let doc = rt().block_on(async {
            let c = client();
            let (code, doc) = s.json(s.get(&c, "/api/openapi.json")).await;
            assert_eq!(code, 200);
            doc
        });
        assert_eq!(doc["openapi"], "3.1.0");
        let file = p.path("openapi.json");
        std::fs::write(&file, doc.to_string()).unwrap();
        let out = Command::new("python3")
            .args([
                "-c",
                "import sys, json\n\
                 from openapi_spec_validator import validate\n\
                 validate(json.load(open(sys.argv[1])))\n\
                 print('openapi: valid')",
            ])
            .arg(&file)
            .env("PYTHONPATH", &validator_path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stdout.contains("openapi: valid"), "{stdout}\n{stderr}");
        // Every schema the handlers speak is in the document.
        for name in [
            "ExecuteRequest",
            "ApproveRequest",
            "CancelRequest",
            "RunView",
            "RunPage",
            "RunEvent",
            "StateUpdate",
            "ErrorInfo",
        ] {
            assert!(doc["components"]["schemas"][name].is_object(), "{name} missing");
        }
    }
}

// --- the console in a real browser -----------------------------------------------------------

/// A headless Chromium driven over WebDriver (chromedriver), as Debian ships them.
pub(super) struct Browser {
    driver: Child,
    url: String,
    session: String,
    _profile: tempfile::TempDir,
}

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Browser {
    /// `None` (a loud skip) when Chromium or its driver is missing, outside CI.
    pub(super) fn start(width: u32, height: u32) -> Option<Browser> {
        let found = ["chromium", "chromedriver"].map(which);
        let (Some(chromium), Some(driver)) = (found[0].clone(), found[1].clone()) else {
            let present = false;
            super::mcp::client_available(
                "Chromium and chromedriver",
                present,
                "apt-get install chromium chromium-driver",
            );
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let profile = tempfile::tempdir().unwrap();
        let url = format!("http://127.0.0.1:{port}");
        let mut b = Browser { driver: child, url, session: String::new(), _profile: profile };
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                // Headless windows are at least 500 px wide: emulate the phone's screen.
                "mobileEmulation": {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 1.0}},
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run",
                    "--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1",
                    format!("--window-size={},{}", width.max(500), height),
                    format!("--user-data-dir={}", b._profile.path().display()),
                ]
            }
        }}});
        let deadline = Instant::now() + Duration::from_secs(30);
        let session = loop {
            match b.call_raw("POST", "/session", Some(&caps)) {
                Ok(v) if v["value"]["sessionId"].is_string() => {
                    break v["value"]["sessionId"].as_str().unwrap().to_owned();
                }
                Ok(v) => panic!("chromedriver refused the session: {v}"),
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                Err(e) => panic!("chromedriver did not answer: {e}"),
            }
        };
        b.session = session;
        Some(b)
    }

    fn call_raw(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
        let url = format!("{}{path}", self.url);
        rt().block_on(async {
            let c = client();
            let req = match method {
                "GET" => c.get(&url),
                "DELETE" => c.delete(&url),
                _ => c
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.map_or("{}".into(), Value::to_string)),
            };
            let r = req.send().await.map_err(|e| e.to_string())?;
            let text = r.text().await.map_err(|e| e.to_string())?;
            serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
        })
    }

    pub(super) fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{path}", self.session);
        let v = self.call_raw(method, &path, body.as_ref()).unwrap();
        assert!(v["value"]["error"].is_null(), "{method} {path}: {v}");
        v["value"].clone()
    }

    pub(super) fn open(&self, url: &str) {
        self.call("POST", "/url", Some(json!({"url": url})));
    }

    fn find(&self, css: &str) -> Option<String> {
        let path = format!("/session/{}/element", self.session);
        let v = self
            .call_raw("POST", &path, Some(&json!({"using": "css selector", "value": css})))
            .unwrap();
        v["value"][ELEMENT].as_str().map(str::to_owned)
    }

    pub(super) fn text(&self, css: &str) -> String {
        self.find(css)
            .map(|e| {
                self.call("GET", &format!("/element/{e}/text"), None)
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            })
            .unwrap_or_default()
    }

    pub(super) fn displayed(&self, css: &str) -> bool {
        self.find(css).is_some_and(|e| {
            self.call("GET", &format!("/element/{e}/displayed"), None) == json!(true)
        })
    }

    pub(super) fn click(&self, css: &str) {
        let e = self.find(css).unwrap_or_else(|| panic!("no {css}"));
        self.call("POST", &format!("/element/{e}/click"), Some(json!({})));
    }

    fn type_into(&self, css: &str, text: &str) {
        let e = self.find(css).unwrap_or_else(|| panic!("no {css}"));
        self.call("POST", &format!("/element/{e}/value"), Some(json!({"text": text})));
    }

    pub(super) fn wait(&self, what: &str, limit: Duration, mut ok: impl FnMut(&Browser) -> bool) {
        let deadline = Instant::now() + limit;
        while !ok(self) {
            assert!(
                Instant::now() < deadline,
                "the page never showed {what}: {}",
                self.text("body")
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub(super) fn screenshot(&self) -> Vec<u8> {
        let b64 = self.call("GET", "/screenshot", None);
        base64_decode(b64.as_str().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.call_raw("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn which(name: &str) -> Option<String> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let v: Vec<u32> = chunk.iter().map(|&c| u32::from(value(c))).collect();
        let n = v.iter().enumerate().fold(0u32, |acc, (i, x)| acc | x << (18 - 6 * i));
        out.extend(n.to_be_bytes()[1..].iter().take(v.len() - 1));
    }
    out
}

/// A PNG's width and height (its IHDR).
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be = |i: usize| u32::from_be_bytes(png[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn serve_console_in_headless_chromium_starts_a_run_approves_its_plan_and_shows_success() {
    let Some(browser) = Browser::start(390, 844) else { return };
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let s = Served::start(p.root(), &mock, &[]);
    browser.open(&format!("{}/#token={}", s.url, s.token));
    browser.wait("the console", Duration::from_secs(20), |b| b.displayed("#run-form"));
    // The token left the address bar.
    let url = browser.call("GET", "/url", None);
    assert!(!url.as_str().unwrap().contains(&s.token), "{url}");
    browser.type_into("#request", "Fix the division by zero bug in calculate()");
    browser.click("#start");
    browser.wait("the plan", Duration::from_secs(60), |b| {
        b.text("#plan").contains("Raise ValueError when calculate() divides by zero")
    });
    browser.wait("the plan gate", Duration::from_secs(30), |b| b.displayed("#approve"));
    assert!(browser.text("#gate-title").contains("Approve the plan"), "{}", browser.text("#gate"));
    assert!(browser.text("#graph li.current").contains("WAIT_PLAN_APPROVAL"));
    let shot = browser.screenshot();
    std::fs::write(target_dir().join("serve-console-plan-390.png"), &shot).unwrap();
    browser.click("#approve");
    browser.wait("success", Duration::from_secs(120), |b| b.text("#run-status") == "succeeded");
    browser.wait("the test results", Duration::from_secs(10), |b| {
        b.text("#commands").contains("pytest")
    });
    assert!(browser.text("#diffs").contains("calc.py"));
    assert!(browser.text("#events").contains("applied"));
    let shot = browser.screenshot();
    let (w, _) = png_size(&shot);
    assert_eq!(w, 390, "the screenshot is phone-sized");
    std::fs::write(target_dir().join("serve-console-success-390.png"), &shot).unwrap();
    // The page fits the phone's width: nothing scrolls sideways.
    let scroll = browser.call(
        "POST",
        "/execute/sync",
        Some(json!({"script": "return document.documentElement.scrollWidth", "args": []})),
    );
    assert!(scroll.as_u64().unwrap() <= 390, "the page is {scroll} px wide");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));

    // A second run: its plan rejected with feedback, then edited and approved.
    std::fs::write(p.path("calc.py"), CALC).unwrap();
    browser.type_into("#request", "Fix the division by zero bug again");
    browser.click("#start");
    browser.wait("the second run's gate", Duration::from_secs(60), |b| {
        b.text("#run-status") == "waiting" && b.displayed("#approve")
    });
    // Reject needs words; with them, the planner plans again.
    browser.click("#reject");
    assert!(browser.displayed("#gate-error"), "a rejection without feedback was sent");
    browser.type_into("#feedback", "Also say why in the message");
    browser.click("#reject");
    browser.wait("the rejection", Duration::from_secs(60), |b| {
        b.text("#events").contains("rejected (plan)")
    });
    browser.wait("the new plan's gate", Duration::from_secs(60), |b| b.displayed("#approve"));
    // Edit the plan and approve it as edited.
    browser.click("#edit-plan summary");
    browser.call(
        "POST",
        "/execute/sync",
        Some(json!({"script": "const t = document.getElementById('plan-edit'); \
            t.value = t.value.replace('Raise ValueError when calculate() divides by zero', 'Raise ValueError on a zero divisor (edited)'); \
            return t.value.includes('(edited)');", "args": []})),
    );
    browser.click("#approve-edited");
    browser
        .wait("the edited plan", Duration::from_secs(60), |b| b.text("#plan").contains("(edited)"));
    assert!(browser.text("#events").contains("plan edited"), "{}", browser.text("#events"));
}

// --- benchmark (ignored: `cargo nextest run -p cli --run-ignored only -E 'test(bench_serve)' --no-capture`)

/// Percentiles of durations in milliseconds.
fn percentiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99), *v.last().unwrap())
}

/// A plain axum handler on its own loopback port, served by the same kind of
/// runtime as the server's: the baseline for the `state` endpoint's latency.
fn plain_axum() -> (String, std::thread::JoinHandle<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let app = axum::Router::new().route(
                "/plain",
                axum::routing::get(|| async { axum::Json(json!({"ok": true, "node": "CODE"})) }),
            );
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}", l.local_addr().unwrap())).unwrap();
            axum::serve(l, app).await.unwrap();
        });
    });
    (rx.recv().unwrap(), h)
}

#[test]
#[ignore = "a benchmark (docs/BENCHMARKS.md, \"ironbees serve\")"]
fn bench_serve_sse_fanout_and_state_latency() {
    let lines: usize =
        std::env::var("BENCH_LINES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let p = calc_project();
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(CALC.as_bytes());
    let summary: String =
        (0..lines).map(|i| format!("line {i}: what the coder changed and why\n")).collect();
    mock.set_responder(move |body| {
        let reply = match agent_of(body) {
            "Planner" => Reply::text(plan_json(
                "calc.py",
                "Raise ValueError when calculate() divides by zero",
            )),
            "Coder" if after_tool(body) => Reply::text(summary.clone()).delta_chars(48),
            "Coder" => Reply::tool_calls(
                "",
                vec![("change", replace_args("calc.py", &hash, DIVISION, GUARDED))],
            ),
            _ => Reply::text("ok"),
        };
        Some(reply.usage(usage()))
    });
    let s = Served::start(p.root(), &mock, &[]);
    let (plain, _h) = plain_axum();
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    #[allow(clippy::print_stderr)]
    rt.block_on(async {
        let c = client();
        eprintln!("| clients | events per client | wall s | events/s per client | deliveries/s | delivery lag p50 / p99 ms | state p50 / p99 ms | plain axum p50 / p99 ms |");
        eprintln!("| --- | --- | --- | --- | --- | --- | --- | --- |");
        for clients in [1usize, 10, 100] {
            std::fs::write(p.path("calc.py"), CALC).unwrap();
            let (_, run) = s
                .json(s.post(&c, "/api/agent/execute", &json!({"userRequest": "Fix it", "autoApprove": true})).header("accept", "application/json"))
                .await;
            let run_id = run["runId"].as_str().unwrap().to_owned();
            let path = format!("/api/agent/runs/{run_id}/events");
            let started = Instant::now();
            let tasks: Vec<_> = (0..clients)
                .map(|_| {
                    let req = s.get(&c, &path);
                    tokio::spawn(async move {
                        let resp = req.send().await.unwrap();
                        let mut lags = Vec::new();
                        let mut n = 0usize;
                        let t0 = Instant::now();
                        read_sse(resp, Duration::from_secs(600), |e| {
                            n += 1;
                            let sent = e.json()["timeMs"].as_i64().unwrap();
                            lags.push((now_ms() - sent) as f64);
                            false
                        })
                        .await;
                        (n, t0.elapsed(), lags)
                    })
                })
                .collect();
            // Latency of `state` and of the plain handler, side by side, while
            // the clients stream.
            let (mut state_ms, mut plain_ms) = (Vec::new(), Vec::new());
            let probe = async {
                loop {
                    let t = Instant::now();
                    let r = s.get(&c, &format!("/api/agent/state/{run_id}")).send().await.unwrap();
                    let done = r.text().await.unwrap().contains("\"succeeded\"");
                    state_ms.push(t.elapsed().as_secs_f64() * 1000.0);
                    let t = Instant::now();
                    c.get(format!("{plain}/plain")).send().await.unwrap().text().await.unwrap();
                    plain_ms.push(t.elapsed().as_secs_f64() * 1000.0);
                    if done {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            };
            probe.await;
            let mut lags = Vec::new();
            let mut per_client = Vec::new();
            // Events each client received (fewest, most) and deliveries in all.
            let (mut fewest, mut most, mut delivered) = (usize::MAX, 0, 0);
            for t in tasks {
                let (n, took, l) = t.await.unwrap();
                (fewest, most, delivered) = (fewest.min(n), most.max(n), delivered + n);
                per_client.push(n as f64 / took.as_secs_f64());
                lags.extend(l);
            }
            let wall = started.elapsed().as_secs_f64();
            let (lag50, lag99, _) = percentiles(lags);
            let (s50, s99, _) = percentiles(state_ms);
            let (p50, p99, _) = percentiles(plain_ms);
            let rate = per_client.iter().sum::<f64>() / per_client.len() as f64;
            let events = if fewest == most { fewest.to_string() } else { format!("{fewest}..{most}") };
            eprintln!(
                "| {clients} | {events} | {wall:.2} | {rate:.0} | {:.0} | {lag50:.1} / {lag99:.1} | {s50:.2} / {s99:.2} | {p50:.2} / {p99:.2} |",
                delivered as f64 / wall
            );
        }
    });
}
