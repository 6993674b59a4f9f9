//! The client against small servers that behave well and badly
//! (`fixtures/server.py`): tools listed and called through the registry, a
//! result cut and masked, a failing tool, a hung call timed out, a crash, a
//! server that exits at start, one that never answers `initialize`, one that
//! writes garbage — each isolated with its code, and no process of theirs (nor
//! a grandchild) left running or as a zombie.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use engine::{Registry, Session};
use mcp_client::{ReadOnly, ServerSet, ServerSpec, Transport};
use protocol::{Effect, ErrorCode, ToolSource};
use serde_json::{Value, json};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/server.py")
}

fn spec(name: &str, mode: &str, pids: &Path) -> ServerSpec {
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k == "PATH" || k == "HOME" || k.starts_with("PYENV"))
        .collect();
    env.push(("API_TOKEN".into(), "s3cr3t-token-value".into()));
    env.push(("PIDS_DIR".into(), pids.display().to_string()));
    let mut s = ServerSpec::new(
        name,
        Transport::Stdio {
            command: "python3".into(),
            args: vec![fixture().display().to_string(), mode.into()],
            env,
            cwd: pids.to_owned(),
        },
    );
    s.startup_timeout = Duration::from_secs(10);
    s.tool_timeout = Duration::from_secs(1);
    s.secrets = vec!["s3cr3t-token-value".into()];
    s.max_result_bytes = 4096;
    s
}

/// The pids the fixtures wrote into `dir`.
fn pids(dir: &Path) -> Vec<i32> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok()?.trim().parse().ok())
        .collect()
}

/// Waits until none of `pids` is in the process table (alive or zombie).
fn assert_gone(pids: &[i32]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<String> = pids
            .iter()
            .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).ok())
            .collect();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "processes left behind: {left:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn session(dir: &Path) -> Arc<Session> {
    Arc::new(Session::open(dir, Default::default()).unwrap())
}

fn call(
    registry: &Registry,
    s: &Session,
    name: &str,
    args: Value,
) -> Result<Value, engine::ToolError> {
    let cancel = engine::CancellationToken::new();
    registry.call(s, &engine::Call::new(&engine::NoProgress, &cancel), name, args)
}

#[test]
fn a_good_server_is_called_through_the_registry_and_its_bad_calls_are_isolated() {
    let dir = tempfile::tempdir().unwrap();
    let pid_dir = dir.path().join("pids");
    std::fs::create_dir(&pid_dir).unwrap();
    let mut s = spec("fx", "ok", &pid_dir);
    s.disabled_tools = vec!["secret_tool".into()];
    s.read_only = ReadOnly::Tools(vec!["echo".into()]);
    let (servers, missing) = ServerSet::start(vec![s]).unwrap();
    assert!(missing.is_empty(), "{missing:?}");
    let mut registry = Registry::new();
    assert!(servers.register(&mut registry).is_empty());
    let echo = registry.get("fx.echo").expect("fx.echo registered");
    assert_eq!(echo.spec.source, ToolSource::Server { server: "fx".into() });
    assert_eq!(echo.spec.effect, Effect::Read);
    assert_eq!(echo.spec.input_schema["required"], json!(["text"]));
    assert_eq!(registry.get("fx.env").unwrap().spec.effect, Effect::External);
    assert!(registry.get("fx.secret_tool").is_none(), "disabled tools are not offered");
    assert!(registry.get("read").is_some(), "built-in tools keep their names");
    assert_eq!(registry.only(&["fx"]).unwrap().names().len(), 6);

    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let session = session(&project);
    let v = call(&registry, &session, "fx.echo", json!({"text": "hi"})).unwrap();
    assert_eq!(engine::render_text(&v), "hi");
    let v = call(&registry, &session, "fx.env", json!({})).unwrap();
    assert_eq!(engine::render_text(&v), "token=***", "secrets are masked in results");
    let v = call(&registry, &session, "fx.big", json!({})).unwrap();
    let text = engine::render_text(&v);
    assert!(text.len() < 4096 + 100 && text.contains("bytes cut"), "{}", text.len());
    let e = call(&registry, &session, "fx.fail", json!({})).unwrap_err();
    assert_eq!(e.info.code, ErrorCode::ToolExecutionFailed);
    assert!(e.info.message.contains("it went wrong"), "{}", e.info.message);
    let e = call(&registry, &session, "fx.echo", json!([1])).unwrap_err();
    assert_eq!(e.info.code, ErrorCode::InvalidArgument);

    let started = Instant::now();
    let e = call(&registry, &session, "fx.hang", json!({})).unwrap_err();
    assert_eq!(e.info.code, ErrorCode::ToolExecutionFailed);
    assert!(e.info.message.contains("did not answer within 1 s"), "{}", e.info.message);
    assert!(started.elapsed() < Duration::from_secs(5));
    // The server still answers after a call of it timed out.
    let v = call(&registry, &session, "fx.echo", json!({"text": "still here"})).unwrap();
    assert_eq!(engine::render_text(&v), "still here");

    // Cancelled by the caller: CANCELLED, at once.
    let cancel = engine::CancellationToken::new();
    let c2 = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        c2.cancel();
    });
    let e = registry
        .call(&session, &engine::Call::new(&engine::NoProgress, &cancel), "fx.hang", json!({}))
        .unwrap_err();
    assert_eq!(e.info.code, ErrorCode::Cancelled);

    // The sleepers take a moment to start and say their pids.
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids(&pid_dir).len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = pids(&pid_dir);
    assert!(before.len() >= 3, "the server and its sleepers wrote their pids: {before:?}");
    servers.shutdown();
    assert_gone(&before);
    let e = call(&registry, &session, "fx.echo", json!({"text": "x"})).unwrap_err();
    assert_eq!(e.info.code, ErrorCode::ToolExecutionFailed);
    assert!(e.info.message.contains("shut down"), "{}", e.info.message);
}

#[test]
fn a_server_that_crashes_in_a_call_fails_that_call_and_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let (servers, _) = ServerSet::start(vec![spec("fx", "ok", dir.path())]).unwrap();
    let mut registry = Registry::new();
    servers.register(&mut registry);
    let project = tempfile::tempdir().unwrap();
    let session = session(project.path());
    let e = call(&registry, &session, "fx.crash", json!({})).unwrap_err();
    assert_eq!(e.info.code, ErrorCode::ToolExecutionFailed);
    let e = call(&registry, &session, "fx.echo", json!({"text": "x"})).unwrap_err();
    assert_eq!(e.info.code, ErrorCode::ToolExecutionFailed);
    assert!(e.info.message.contains("not running"), "{}", e.info.message);
    assert!(e.info.message.contains("exit status: 7"), "{}", e.info.message);
    assert_gone(&pids(dir.path()));
    drop(servers);
}

#[test]
fn servers_that_fail_to_start_are_left_out_or_stop_everything_when_required() {
    let dir = tempfile::tempdir().unwrap();
    let mut silent = spec("silent", "silent", dir.path());
    silent.startup_timeout = Duration::from_secs(1);
    let started = Instant::now();
    let (servers, missing) = ServerSet::start(vec![
        spec("gone", "exit", dir.path()),
        silent,
        spec("noise", "garbage", dir.path()),
        spec("good", "ok", dir.path()),
    ])
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
    let reason = |name: &str| {
        missing.iter().find(|m| m.server == name).map(|m| m.reason.clone()).unwrap_or_default()
    };
    let gone = reason("gone");
    assert!(gone.contains("exit status: 3"), "{gone}");
    assert!(gone.contains("token *** was refused") && !gone.contains("s3cr3t"), "{gone}");
    assert!(reason("silent").contains("did not answer `initialize`"), "{}", reason("silent"));
    let noise = reason("noise");
    assert!(noise.contains("not JSON-RPC") && noise.contains("garbage line 0"), "{noise}");
    assert_eq!(servers.servers().iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["good"]);
    servers.shutdown();
    assert_gone(&pids(dir.path()));

    let mut required = spec("gone", "exit", dir.path());
    required.required = true;
    let err = ServerSet::start(vec![spec("good", "ok", dir.path()), required]).err().unwrap();
    assert_eq!(err.code(), ErrorCode::ToolExecutionFailed);
    assert!(err.to_string().contains("required MCP server `gone`"), "{err}");
    assert_gone(&pids(dir.path()));
}

/// The Python MCP SDK that `scripts/test` installs (under `target/test-deps`).
fn python_sdk() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps/python");
    if dir.join("mcp/server/mcpserver").is_dir() {
        return Some(dir);
    }
    let msg = "the Python MCP SDK is not installed (scripts/test installs it)";
    assert!(std::env::var_os("CI").is_none(), "{msg}");
    #[allow(clippy::print_stderr)] // the loud skip is the point
    {
        eprintln!("\n!!! SKIPPED: {msg}\n");
    }
    None
}

#[test]
fn a_streamable_http_server_gets_its_headers_and_answers_through_the_registry() {
    let Some(sdk) = python_sdk() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/http_server.py");
    #[allow(clippy::disallowed_methods)] // the test's own server
    let mut server = std::process::Command::new("python3")
        .arg(fixture)
        .arg(port.to_string())
        .env("PYTHONPATH", sdk)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP fixture did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut s = ServerSpec::new(
        "web",
        Transport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: vec![
                ("Authorization".into(), "Bearer tok-abc123".into()),
                ("X-Team".into(), "bees".into()),
            ],
        },
    );
    s.secrets = vec!["Bearer tok-abc123".into(), "tok-abc123".into()];
    let (servers, missing) = ServerSet::start(vec![s]).unwrap();
    assert!(missing.is_empty(), "{missing:?}");
    let mut registry = Registry::new();
    servers.register(&mut registry);
    let dir = tempfile::tempdir().unwrap();
    let session = session(dir.path());
    let v = call(&registry, &session, "web.add", json!({"a": 2, "b": 3})).unwrap();
    assert_eq!(engine::render_text(&v), "5");
    let v = call(&registry, &session, "web.headers", json!({})).unwrap();
    let text = engine::render_text(&v);
    assert!(text.contains("team=bees") && text.contains("authorization=***"), "{text}");
    assert!(!text.contains("tok-abc123"), "{text}");
    servers.shutdown();
    let _ = server.kill();
    let _ = server.wait();

    // Nobody listening: left out, saying so, within its startup timeout.
    let mut s = ServerSpec::new(
        "down",
        Transport::Http { url: format!("http://127.0.0.1:{port}/mcp"), headers: vec![] },
    );
    s.startup_timeout = Duration::from_secs(3);
    let (_servers, missing) = ServerSet::start(vec![s]).unwrap();
    assert_eq!(missing.len(), 1);
    assert!(missing[0].reason.contains("127.0.0.1"), "{}", missing[0].reason);
}
