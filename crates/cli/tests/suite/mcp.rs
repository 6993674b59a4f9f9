//! `ironbees mcp` driven by real MCP clients nobody here wrote: the official Python
//! SDK (PyPI `mcp`) and the MCP Inspector CLI (npm `@modelcontextprotocol/inspector`),
//! both installed by `.ci/run` under `target/test-deps`; plus raw JSON-RPC bytes for
//! the malformed-input cases a polite client never sends.
//!
//! A missing client skips the test with a loud message on a developer machine; in
//! CI (`CI` set) it fails.

use std::{
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::mpsc,
    time::Duration,
};

use serde_json::{Value, json};
use test_support::TempProject;

const BIN: &str = env!("CARGO_BIN_EXE_ironbees");

fn deps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps")
}

/// Returns false (after a loud message) when the client is missing outside CI;
/// panics when it is missing in CI.
fn client_available(name: &str, present: bool, install: &str) -> bool {
    if present {
        return true;
    }
    let msg = format!("{name} is not installed (install it with: {install}; .ci/run does)");
    if std::env::var_os("CI").is_some() {
        panic!("{msg}");
    }
    #[allow(clippy::print_stderr)] // the loud skip is the point
    {
        eprintln!("\n!!! SKIPPED: {msg}\n");
    }
    false
}

fn project() -> TempProject {
    let p = TempProject::with_fixture(
        r#"
        //- src/app.py
        from util import respond


        def handle(request):
            return respond(request, 200)


        def health():
            return respond(None, 200)
        //- src/util.py
        def respond(request, status):
            return {"request": request, "status": status}
        "#,
    );
    std::fs::create_dir(p.path(".git")).unwrap();
    p
}

#[test]
fn python_sdk_client_lists_understands_changes_reads_and_undoes() {
    let python_path = deps().join("python");
    let probe = Command::new("python3")
        .args(["-c", "import mcp.client.stdio"])
        .env("PYTHONPATH", &python_path)
        .output();
    let present = probe.map(|o| o.status.success()).unwrap_or(false);
    if !client_available(
        "the Python MCP SDK",
        present,
        "python3 -m pip install --target target/test-deps/python mcp",
    ) {
        return;
    }
    let p = project();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/clients/python_sdk.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(BIN)
        .arg(p.root())
        .env("PYTHONPATH", &python_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the Python client failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("python_sdk client: ok"), "{stdout}\n{stderr}");
    // Undo restored the fixture byte for byte; nothing leaked outside the root.
    let app = std::fs::read_to_string(p.path("src/app.py")).unwrap();
    assert!(app.contains("respond(request, 200)") && !app.contains("201"), "{app}");
    assert!(!p.root().parent().unwrap().join("evil.py").exists());
}

fn inspector() -> PathBuf {
    deps().join("node/node_modules/.bin/mcp-inspector")
}

fn inspect(root: &Path, args: &[&str]) -> Value {
    let out = Command::new(inspector())
        .arg("--cli")
        .arg(BIN)
        .arg("-C")
        .arg(root)
        .args(["mcp", "--no-watch"])
        .args(args)
        .env("XDG_CONFIG_HOME", root.join(".no-user-config"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "inspector {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("inspector output ({e}):\n{stdout}"))
}

#[test]
fn mcp_inspector_cli_lists_and_calls_tools() {
    if !client_available(
        "the MCP Inspector CLI",
        inspector().exists(),
        "npm install --prefix target/test-deps/node @modelcontextprotocol/inspector",
    ) {
        return;
    }
    let p = project();
    let list = inspect(p.root(), &["--method", "tools/list"]);
    let names: Vec<&str> =
        list["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    for want in ["understand", "change", "navigate", "read", "write", "manage", "edit_code"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let change = list["tools"].as_array().unwrap().iter().find(|t| t["name"] == "change").unwrap();
    assert_eq!(change["inputSchema"]["required"], json!(["edits"]));

    let read = inspect(
        p.root(),
        &["--method", "tools/call", "--tool-name", "read", "--tool-arg", "target=src/util.py"],
    );
    assert_ne!(read["isError"], json!(true), "{read}");
    let s = &read["structuredContent"];
    assert_eq!(s["content"], std::fs::read_to_string(p.path("src/util.py")).unwrap());
    assert_eq!(s["hash"].as_str().unwrap().len(), 64);

    let outside = inspect(
        p.root(),
        &["--method", "tools/call", "--tool-name", "read", "--tool-arg", "target=../../etc/passwd"],
    );
    assert_eq!(outside["isError"], json!(true), "{outside}");
    assert!(outside["content"][0]["text"].as_str().unwrap().starts_with("PATH_OUTSIDE_ROOT"));
}

/// The server on raw stdio: lines in, lines out (each read with a timeout so a
/// swallowed request fails the test instead of hanging it).
struct Raw {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Raw {
    fn start(root: &Path) -> Raw {
        let mut child = Command::new(BIN)
            .arg("-C")
            .arg(root)
            .args(["mcp", "--no-watch"])
            .env("XDG_CONFIG_HOME", root.join(".no-user-config"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Raw { child, stdin, lines }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&self, what: &str) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("no answer to {what}: {e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {line}"))
    }
}

#[test]
fn malformed_json_rpc_gets_errors_and_the_server_keeps_serving() {
    let p = project();
    let mut s = Raw::start(p.root());
    // Garbage before the handshake is answered too.
    s.send(b"\xff\xfe not json at all");
    let e = s.recv("garbage before initialize");
    assert_eq!((e["jsonrpc"].as_str(), e["error"]["code"].as_i64()), (Some("2.0"), Some(-32700)));
    assert!(e.as_object().unwrap().contains_key("id") && e["id"].is_null(), "{e}");

    s.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string()
        .as_bytes(),
    );
    let init = s.recv("initialize");
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["serverInfo"]["name"], "ironbees");
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    let cases: &[(&[u8], i64, Value)] = &[
        (b"this is not json", -32700, Value::Null),
        (br#"{"jsonrpc":"2.0","id":2,"method":"tools/list""#, -32700, Value::Null),
        (br#"{"jsonrpc":"1.0","id":3,"method":"tools/list"}"#, -32600, json!(3)),
        (br#"{"id":"four","method":"tools/list"}"#, -32600, json!("four")),
        (br#"{"jsonrpc":"2.0","id":5,"method":"no/such/method"}"#, -32601, json!(5)),
        (
            br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
            -32602,
            json!(6),
        ),
        (br#"[1, 2]"#, -32600, Value::Null),
    ];
    for (line, code, id) in cases {
        let what = String::from_utf8_lossy(line);
        s.send(line);
        let e = s.recv(&what);
        assert_eq!(e["jsonrpc"], "2.0", "{what}: {e}");
        assert_eq!(e["error"]["code"].as_i64(), Some(*code), "{what}: {e}");
        assert!(e.as_object().unwrap().contains_key("id"), "{what}: no id member: {e}");
        assert_eq!(&e["id"], id, "{what}: {e}");
        assert!(e.get("result").is_none(), "{what}: {e}");
    }

    // Arguments that do not fit the schema: a tool error the model can read.
    s.send(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":{"view":"full"}}}"#);
    let r = s.recv("read without target");
    assert_eq!(r["id"], 7);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"]["content"][0]["text"].as_str().unwrap().contains("target"), "{r}");

    // Still serving: a real call works after all that.
    s.send(
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "read", "arguments": {"target": "src/util.py"}}})
        .to_string()
        .as_bytes(),
    );
    let r = s.recv("read after the bad lines");
    assert_eq!(r["id"], 8);
    assert_eq!(
        r["result"]["structuredContent"]["content"],
        std::fs::read_to_string(p.path("src/util.py")).unwrap()
    );

    // End of input ends the server cleanly.
    drop(s.stdin);
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status}");
}
