//! End-to-end tests of `ironbees llm check`, `ironbees ask` and `ironbees config
//! show` against the wire-level mock LLM server, configured only through the
//! standard environment variables.

use super::Out;
use std::{path::Path, process::Command};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;
use test_support::{
    TempProject,
    mock_llm::{MockLlm, MockUsage, Reply},
};

const A_KEY: &str = "sk-ant-e2e-SECRET-31337";
const O_KEY: &str = "sk-oai-e2e-SECRET-27182";

/// The binary in `dir`, with no configuration and no model variables from the
/// environment the tests run in.
fn ironbees(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.arg("-C").arg(dir);
    c.env("XDG_CONFIG_HOME", dir.join(".no-user-config"));
    super::without_model_env(&mut c);
    c
}

fn with_anthropic(c: &mut Command, mock: &MockLlm) {
    c.env("ANTHROPIC_API_KEY", A_KEY).env("ANTHROPIC_BASE_URL", mock.url());
}

fn with_openai(c: &mut Command, mock: &MockLlm) {
    c.env("OPENAI_API_KEY", O_KEY)
        .env("OPENAI_BASE_URL", mock.openai_url())
        .env("OPENAI_MODEL", "gpt-4o-mini");
}

fn run(mut c: Command) -> Out {
    let o = c.output().unwrap();
    Out::from(o)
}

fn assert_no_secret(o: &Out) {
    for text in [&o.stdout, &o.stderr] {
        assert!(
            !text.contains(A_KEY) && !text.contains(O_KEY) && !text.contains("SECRET"),
            "a key leaked:\n{text}"
        );
    }
}

fn project() -> TempProject {
    TempProject::with_fixture(
        r#"
        //- app/server.py
        class Server:
            def start(self, port: int) -> None:
                listen(port)

        def listen(port):
            pass
        //- lib/util.go
        package util

        func Retry(n int, f func() error) error { return nil }
        "#,
    )
}

#[test]
fn llm_check_calls_every_provider_from_the_standard_variables() {
    let p = project();
    let a = MockLlm::start();
    a.set_default(Reply::text("ok").model("claude-sonnet-4-5-20250929").usage(MockUsage {
        input: 14,
        output: 2,
        cache_read: 0,
        cache_write: 0,
    }));
    let o = MockLlm::start();
    o.set_default(Reply::text("ok").usage(MockUsage {
        input: 12,
        output: 1,
        cache_read: 0,
        cache_write: 0,
    }));
    let mut c = ironbees(p.root());
    with_anthropic(&mut c, &a);
    with_openai(&mut c, &o);
    c.args(["llm", "check", "--json"]);
    let out = run(c);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_no_secret(&out);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let ps = v["providers"].as_array().unwrap();
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0]["name"], "anthropic");
    assert_eq!(ps[0]["chainPosition"], 0);
    assert_eq!(ps[0]["ok"], true);
    assert_eq!(ps[0]["model"], "claude-sonnet-4-5-20250929", "the model the server named");
    assert_eq!(ps[0]["usage"]["inputTokens"], 14);
    assert!(ps[0]["costUsd"].as_f64().unwrap() > 0.0);
    assert!(ps[0]["latencyMs"].is_u64());
    assert_eq!(ps[1]["name"], "openai");
    assert_eq!(ps[1]["chainPosition"], 1, "OpenAI is the fallback when both are set");
    assert_eq!(ps[1]["kind"], "openai-compatible", "a base URL that is not OpenAI's");
    assert_eq!(ps[1]["model"], "gpt-4o-mini");
    assert_eq!(a.requests()[0].header("x-api-key"), Some(A_KEY));
    assert_eq!(o.requests()[0].header("authorization"), Some(format!("Bearer {O_KEY}").as_str()));
}

#[test]
fn llm_check_reports_a_failing_provider_with_its_code_and_exit_status() {
    let p = project();
    let a = MockLlm::start();
    a.set_default(Reply::status_body(401, format!(r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {A_KEY}"}}}}"#)));
    let mut c = ironbees(p.root());
    with_anthropic(&mut c, &a);
    c.args(["llm", "check"]);
    let out = run(c);
    assert_eq!(out.code, 7, "LLM_UNAVAILABLE exits 7: {}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("FAIL anthropic"), "{}", out.stdout);
    assert!(
        out.stdout.contains("error[LLM_UNAVAILABLE]") && out.stdout.contains("HTTP 401"),
        "{}",
        out.stdout
    );
    assert_no_secret(&out);
}

/// Issue 24: a provider that accepted the connection and never answered kept
/// `llm check` silent for minutes (120 s first-token x 4 attempts by default).
#[test]
fn llm_check_of_a_server_that_never_answers_times_out_fast_and_says_so() {
    let p = project();
    let o = MockLlm::start();
    o.set_default(Reply::text("ok").first_byte_delay(std::time::Duration::from_secs(600)));
    let mut c = ironbees(p.root());
    with_openai(&mut c, &o);
    c.args(["llm", "check", "--timeout", "1", "--json"]);
    let started = std::time::Instant::now();
    let out = run(c);
    // A hang guard with room for a slow machine, not a speed assertion.
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "llm check hung");
    assert_eq!(out.code, 7, "LLM_UNAVAILABLE: {}{}", out.stdout, out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let e = &v["providers"][0]["error"];
    assert_eq!(e["code"], "LLM_UNAVAILABLE", "{v}");
    assert!(e["message"].as_str().unwrap().contains("within 1.0s"), "{v}");
    assert_eq!(o.request_count(), 1, "one attempt, no retries: {:?}", o.requests());
    // A timeout of zero is refused before any request.
    let mut c = ironbees(p.root());
    with_openai(&mut c, &o);
    c.args(["llm", "check", "--timeout", "0"]);
    let out = run(c);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("INVALID_ARGUMENT"), "{}", out.stderr);
}

/// Issue 24: with `OPENAI_BASE_URL` set and no model, `ask` was refused ("needs a
/// model"). The server is asked; its only model is used and the user told.
#[test]
fn ask_without_a_model_uses_the_only_one_the_server_offers() {
    let p = project();
    let o = MockLlm::start();
    o.set_models(&["qwen2.5-coder:0.5b"]);
    o.set_default(Reply::text("Server.start calls listen."));
    let mut c = ironbees(p.root());
    c.env("OPENAI_BASE_URL", o.openai_url());
    c.args(["ask", "--no-context", "what does start do?"]);
    let out = run(c);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("Server.start calls listen."), "{}", out.stdout);
    assert!(
        out.stderr.contains("using model qwen2.5-coder:0.5b")
            && out.stderr.contains("OPENAI_MODEL"),
        "{}",
        out.stderr
    );
    let reqs = o.requests();
    assert_eq!(reqs[0].method, "GET");
    assert!(reqs[0].path.ends_with("/v1/models"), "{}", reqs[0].path);
    assert_eq!(reqs[1].body["model"], "qwen2.5-coder:0.5b", "the chat request names it");

    // Several models: refused, and the error lists them so the user can pick.
    let o = MockLlm::start();
    o.set_models(&["llama3.2", "qwen2.5-coder:7b", "nomic-embed-text"]);
    let mut c = ironbees(p.root());
    c.env("OPENAI_BASE_URL", o.openai_url());
    c.args(["ask", "--no-context", "what does start do?"]);
    let out = run(c);
    assert_eq!(out.code, 2, "INVALID_ARGUMENT: {}", out.stderr);
    for m in ["llama3.2", "qwen2.5-coder:7b", "nomic-embed-text", "OPENAI_MODEL"] {
        assert!(out.stderr.contains(m), "{m} missing: {}", out.stderr);
    }
    assert_eq!(o.request_count(), 1, "no chat request was sent");

    // `--model` needs no listing at all.
    let o = MockLlm::start();
    let mut c = ironbees(p.root());
    c.env("OPENAI_BASE_URL", o.openai_url());
    c.args(["ask", "--no-context", "--model", "llama3.2", "hi"]);
    let out = run(c);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(o.requests().iter().all(|r| r.method == "POST"), "{:?}", o.requests());
}

#[test]
fn ask_streams_the_answer_with_the_repository_map_as_context() {
    let p = project();
    let index = run({
        let mut c = ironbees(p.root());
        c.arg("index");
        c
    });
    assert_eq!(index.code, 0, "{}", index.stderr);
    let a = MockLlm::start();
    a.set_default(
        Reply::text("Routes are registered in app/server.py by Server.start.").write_size(5),
    );
    let mut c = ironbees(p.root());
    with_anthropic(&mut c, &a);
    c.args(["ask", "where does the server start?"]);
    let out = run(c);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "Routes are registered in app/server.py by Server.start.\n");
    assert_no_secret(&out);
    let req = &a.requests()[0];
    assert_eq!(req.body["stream"], true, "ask streams");
    assert_eq!(req.body["messages"][0]["content"][0]["text"], "where does the server start?");
    let system = req.body["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("app/server.py") && system.contains("class Server"), "{system}");
    assert!(system.contains("func Retry(n int, f func() error) error"), "{system}");
    // The map is ranked by the question: the server, which it names, comes first.
    let (server, util) = (system.find("app/server.py"), system.find("lib/util.go"));
    assert!(server.unwrap() < util.unwrap(), "{system}");
}

#[test]
fn ask_without_an_index_sends_no_map_and_json_reports_usage_and_cost() {
    let p = project();
    let o = MockLlm::start();
    o.set_default(Reply::text("42").model("gpt-4o-mini").usage(MockUsage {
        input: 1000,
        output: 10,
        cache_read: 0,
        cache_write: 0,
    }));
    let mut c = ironbees(p.root());
    with_openai(&mut c, &o);
    c.args(["ask", "--json", "what is the answer?"]);
    let out = run(c);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["answer"], "42");
    assert_eq!(v["provider"], "openai");
    assert_eq!(v["model"], "gpt-4o-mini");
    assert_eq!(v["usage"]["inputTokens"], 1000);
    assert_eq!(v["usage"]["outputTokens"], 10);
    let cost = v["costUsd"].as_f64().unwrap();
    assert!((cost - (1000.0 * 0.15 + 10.0 * 0.6) / 1e6).abs() < 1e-12, "{cost}");
    assert!(v["latencyMs"].is_u64());
    let system = o.requests()[0].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(!system.contains("Repository map"), "no index, no map: {system}");
}

#[test]
fn ask_falls_back_when_the_primary_is_down_and_logs_hold_no_secret() {
    let p = project();
    let a = MockLlm::start();
    a.set_default(Reply::status(503));
    let o = MockLlm::start();
    o.set_default(Reply::text("answer from the fallback"));
    let mut c = ironbees(p.root());
    with_anthropic(&mut c, &a);
    with_openai(&mut c, &o);
    c.env("IRONBEES_LOG", "trace").env("IRONBEES_LLM__RETRY__BASE_DELAY_MS", "10");
    c.args(["ask", "hello?"]);
    let out = run(c);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "answer from the fallback\n");
    assert!(out.stderr.contains("[falling back to openai]"), "{}", out.stderr);
    assert!(out.stderr.contains("retrying"), "logs are on: {}", out.stderr);
    assert_eq!(a.request_count(), 4, "default retry policy: 4 attempts");
    assert_no_secret(&out);
}

#[test]
fn ask_without_any_provider_says_how_to_configure_one() {
    let p = project();
    let mut c = ironbees(p.root());
    c.args(["ask", "hi"]);
    let out = run(c);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("error[INVALID_ARGUMENT]") && out.stderr.contains("ANTHROPIC_API_KEY"),
        "{}",
        out.stderr
    );
}

#[test]
fn ask_when_every_provider_is_rate_limited_exits_7() {
    let p = project();
    let a = MockLlm::start();
    a.set_default(Reply::rate_limited("3600"));
    let mut c = ironbees(p.root());
    with_anthropic(&mut c, &a);
    c.args(["--json", "ask", "hi"]);
    let out = run(c);
    assert_eq!(out.code, 7, "{}", out.stderr);
    let v: Value = serde_json::from_str(out.stderr.trim()).unwrap();
    assert_eq!(v["error"]["code"], "LLM_RATE_LIMITED");
}

#[test]
fn ask_stops_at_the_budget() {
    let p = project();
    let a = MockLlm::start();
    a.set_default(Reply::text("word ".repeat(2000)).delta_chars(20));
    let mut c = ironbees(p.root());
    with_anthropic(&mut c, &a);
    c.env("IRONBEES_LLM__BUDGET__SESSION__MAX_TOKENS", "300");
    c.args(["ask", "--no-context", "write a lot"]);
    let out = run(c);
    assert_eq!(out.code, 8, "BUDGET_EXCEEDED exits 8: {}", out.stderr);
    assert!(out.stderr.contains("error[BUDGET_EXCEEDED]"), "{}", out.stderr);
    assert!(
        !out.stdout.is_empty() && out.stdout.len() < 10_000,
        "stopped part-way ({} bytes)",
        out.stdout.len()
    );
}

#[test]
fn config_show_masks_secrets_and_names_its_sources() {
    let p = project();
    p.write(
        ".ironbees/config.yaml",
        "llm:\n  providers:\n    anthropic:\n      api_key: ${ANTHROPIC_API_KEY}\n      model: claude-haiku-4-5\n    local:\n      kind: openai-compatible\n      base_url: http://127.0.0.1:9/v1?key=${ANTHROPIC_API_KEY}\n      model: llama3\n",
    );
    for json in [false, true] {
        let mut c = ironbees(p.root());
        c.env("ANTHROPIC_API_KEY", A_KEY).env("IRONBEES_LLM__DEFAULT", "anthropic");
        c.args(["config", "show"]);
        if json {
            c.arg("--json");
        }
        let out = run(c);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_no_secret(&out);
        assert!(out.stdout.contains("***"), "{}", out.stdout);
        assert!(out.stdout.contains("claude-haiku-4-5"));
        assert!(out.stdout.contains(".ironbees/config.yaml"), "sources: {}", out.stdout);
        assert!(out.stdout.contains("IRONBEES_LLM__DEFAULT"), "sources: {}", out.stdout);
        if json {
            let v: Value = serde_json::from_str(&out.stdout).unwrap();
            assert_eq!(v["config"]["llm"]["providers"]["anthropic"]["api_key"], "***");
            assert_eq!(v["llm"]["providers"][0]["name"], "anthropic");
            assert_eq!(v["llm"]["providers"][0]["has_key"], true);
        }
    }
}

#[test]
fn ctrl_c_during_ask_cancels_cleanly_and_closes_the_connection() {
    use std::{io::Read, process::Stdio, time::Duration};

    use test_support::mock_llm::Fault;

    let p = project();
    let a = MockLlm::start();
    a.set_default(
        Reply::text("this answer starts and then the server goes quiet").fault(Fault::HangAfter(5)),
    );
    let mut c = ironbees(p.root());
    with_anthropic(&mut c, &a);
    c.args(["ask", "--no-context", "hi"]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        let n = stdout.read(&mut buf).unwrap_or(0);
        let _ = tx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
        let mut rest = String::new();
        let _ = stdout.read_to_string(&mut rest);
    });
    let first = rx.recv_timeout(Duration::from_secs(30)).expect("the answer starts streaming");
    assert!(first.starts_with("this"), "{first}");
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    // A hang guard, not a speed assertion.
    let mut status = None;
    for _ in 0..300 {
        if let Some(s) = child.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = status.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("ironbees ask did not end after Ctrl-C");
    });
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("error[CANCELLED]"), "{stderr}");
    assert!(
        a.wait_for_disconnects(1, Duration::from_secs(30)),
        "the server saw the connection close"
    );
    assert_eq!(a.request_count(), 1);
}
