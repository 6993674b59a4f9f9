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

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_ironbees");

pub(crate) fn deps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps")
}

/// Returns false (after a loud message) when the client is missing outside CI;
/// panics when it is missing in CI.
pub(crate) fn client_available(name: &str, present: bool, install: &str) -> bool {
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

pub(super) fn project() -> TempProject {
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
pub(crate) struct Raw {
    pub(crate) child: std::process::Child,
    pub(crate) stdin: std::process::ChildStdin,
    pub(crate) lines: mpsc::Receiver<String>,
}

impl Raw {
    pub(crate) fn start(root: &Path) -> Raw {
        Raw::start_with(root, |_| {})
    }

    /// [`Raw::start`] with the command adjusted first (its environment).
    pub(crate) fn start_with(root: &Path, adjust: impl FnOnce(&mut Command)) -> Raw {
        let mut c = Command::new(BIN);
        c.arg("-C").arg(root).args(["mcp", "--no-watch"]);
        c.env("XDG_CONFIG_HOME", root.join(".no-user-config"));
        adjust(&mut c);
        let mut child =
            c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
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

    pub(crate) fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    pub(crate) fn recv(&self, what: &str) -> Value {
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
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("INVALID_ARGUMENT: "), "{r}");
    assert!(text.contains("target"), "{r}");

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

impl Raw {
    /// Starts the server and completes the MCP handshake.
    pub(crate) fn ready(root: &Path) -> Raw {
        Raw::ready_with(root, |_| {})
    }

    /// [`Raw::ready`] with the command adjusted first (its environment).
    pub(crate) fn ready_with(root: &Path, adjust: impl FnOnce(&mut Command)) -> Raw {
        let mut s = Raw::start_with(root, adjust);
        s.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}})
            .to_string()
            .as_bytes(),
        );
        let init = s.recv("initialize");
        assert_eq!(init["id"], 0, "{init}");
        s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        s
    }

    pub(crate) fn send_call(&mut self, id: u64, tool: &str, arguments: Value) {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        self.send(req.to_string().as_bytes());
    }

    /// A tool call's result (notifications in between are skipped).
    pub(crate) fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.send_call(id, tool, arguments);
        loop {
            let m = self.recv(tool);
            if m["id"] == id {
                assert!(m.get("error").is_none(), "{tool}: {m}");
                return m["result"].clone();
            }
        }
    }
}

/// Issue 24: `read` with a 5 MB bogus path answered with a 25 MB error (as
/// IO_ERROR), and `navigate` without `action` failed with "missing field".
#[test]
fn huge_arguments_are_refused_short_and_navigate_needs_no_action() {
    let p = project();
    let mut s = Raw::ready(p.root());
    let bogus = "a/".repeat(5 << 19); // 5 MiB
    s.send_call(1, "read", json!({"target": bogus}));
    let line = s.lines.recv_timeout(Duration::from_secs(60)).expect("an answer");
    assert!(line.len() < 64 << 10, "the error is {} bytes", line.len());
    let r: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(r["result"]["isError"], true, "{}", stdx_clip(&line));
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("INVALID_ARGUMENT: the path is 5242880 bytes long"),
        "{}",
        stdx_clip(text)
    );
    // Still serving, and a bare target is "definition and references".
    let r = s.call(2, "navigate", json!({"target": "respond"}));
    assert_ne!(r["isError"], true, "{r}");
    let sc = &r["structuredContent"];
    assert_eq!(sc["action"], "references", "{sc}");
    assert_eq!(sc["definitions"][0]["path"], "src/util.py", "{sc}");
    let users = sc["results"].to_string();
    assert!(users.contains("handle") && users.contains("health"), "{sc}");
}

/// Issue 27: a long-running server says how much memory it holds, and the
/// snapshot it keeps shows in it.
#[test]
fn manage_status_reports_the_servers_resident_memory() {
    let p = project();
    let mut s = Raw::ready(p.root());
    let r = s.call(1, "manage", json!({"command": "status"}));
    let m = &r["structuredContent"]["status"]["memory"];
    let (resident, peak) =
        (m["residentBytes"].as_u64().unwrap(), m["peakResidentBytes"].as_u64().unwrap());
    assert!(resident > 1 << 20 && peak >= resident, "{m}");
    let (before, _) = (resident, peak);
    s.call(2, "understand", json!({"target": "."}));
    let r = s.call(3, "manage", json!({"command": "status"}));
    let after = r["structuredContent"]["status"]["memory"]["residentBytes"].as_u64().unwrap();
    assert_ne!(after, before, "the figure is measured, not fixed");
}

fn stdx_clip(s: &str) -> &str {
    &s[..s.len().min(500)]
}

/// Files under `dir` (recursively) whose name starts with `.ironbees-tmp-`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_name().to_string_lossy().starts_with(".ironbees-tmp-") {
            out.push(p);
        } else if p.is_dir() {
            out.extend(temp_files(&p));
        }
    }
    out
}

/// `ironbees mcp` SIGKILLed at many moments inside a checked multi-file `change`
/// (plan, blobs, journal, file writes, the syntax check, the commit, index
/// refresh): after a restart every file is entirely old or entirely new (by
/// hash), never a mix, the history agrees with the files, and no journal record
/// or temporary file is left.
#[test]
#[allow(clippy::print_stderr)] // where the kills landed is worth seeing in the log
fn killed_mcp_server_mid_change_leaves_all_old_or_all_new() {
    let p = TempProject::new();
    std::fs::create_dir(p.path(".git")).unwrap();
    const N: usize = 40;
    let body: String =
        (0..400).map(|j| format!("def f{j}(x):\n    return x + {j}\n\n\n")).collect();
    let old = |i: usize| format!("VERSION = {i}\n\n\n{body}");
    let path = |i: usize| format!("pkg/m{i:02}.py");
    for i in 0..N {
        p.write(&path(i), old(i));
    }
    let edits: Vec<Value> = (0..N)
        .map(|i| {
            json!({"path": path(i), "targetString": format!("VERSION = {i}\n"),
                   "replacementString": format!("VERSION = {}\n", i + 1000)})
        })
        .collect();
    let change = json!({"description": "bump every version", "edits": edits,
        "options": {"dryRun": false, "autoRollback": true, "includeImpact": true}});
    let hash = |s: &str| stdx::sha256_hex(s.as_bytes());
    let olds: Vec<String> = (0..N).map(|i| hash(&old(i))).collect();
    let news: Vec<String> = (0..N)
        .map(|i| {
            hash(&old(i).replacen(
                &format!("VERSION = {i}\n"),
                &format!("VERSION = {}\n", i + 1000),
                1,
            ))
        })
        .collect();
    let on_disk = || (0..N).map(|i| hash(&p.read(&path(i)))).collect::<Vec<_>>();

    // One uninterrupted run: how long the change takes (then undo it).
    let mut s = Raw::ready(p.root());
    let t = std::time::Instant::now();
    let r = s.call(1, "change", change.clone());
    let full = t.elapsed();
    assert_ne!(r["isError"], true, "{r}");
    let tx = r["structuredContent"]["transactionId"].as_str().unwrap().to_owned();
    assert_eq!(on_disk(), news);
    let r = s.call(2, "manage", json!({"command": "undo", "id": tx}));
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(on_disk(), olds);
    drop(s.stdin);
    s.child.wait().unwrap();

    let rounds = 20;
    let started = std::time::Instant::now();
    let (mut old_n, mut new_n) = (0, 0);
    for round in 0..rounds {
        let mut s = Raw::ready(p.root());
        s.send_call(1, "change", change.clone());
        // Spread from the moment the request is sent to past the end of a full run.
        std::thread::sleep(full.mul_f64(1.2 * round as f64 / (rounds - 1) as f64));
        s.child.kill().unwrap(); // SIGKILL
        s.child.wait().unwrap();

        // A restarted server recovers on open; its history says what committed.
        let mut s = Raw::ready(p.root());
        let h = s.call(1, "manage", json!({"command": "history", "limit": 5}));
        assert_ne!(h["isError"], true, "{h}");
        let newest = h["structuredContent"]["history"].as_array().unwrap().first().cloned();
        let applied = newest.as_ref().is_some_and(|t| {
            t["kind"] == "edit"
                && t["state"] == "applied"
                && t["description"] == "bump every version"
        });
        let now = on_disk();
        if applied {
            assert!(now == news, "round {round}: history says applied, files are not all new");
            new_n += 1;
            let id = newest.unwrap()["id"].as_str().unwrap().to_owned();
            let r = s.call(2, "manage", json!({"command": "undo", "id": id}));
            assert_ne!(r["isError"], true, "round {round}: {r}");
            assert_eq!(on_disk(), olds, "round {round}: undo");
        } else {
            assert!(now == olds, "round {round}: not applied, files are not all old");
            old_n += 1;
        }
        let journal = p.path(".ironbees/edits/journal");
        if journal.exists() {
            assert_eq!(
                std::fs::read_dir(&journal).unwrap().count(),
                0,
                "round {round}: journal left"
            );
        }
        assert_eq!(temp_files(p.root()), Vec::<PathBuf>::new(), "round {round}: temp files left");
        drop(s.stdin);
        assert!(s.child.wait().unwrap().success());
    }
    // The spread reached both sides of the commit point.
    assert!(old_n > 0 && new_n > 0, "all kills landed on one side: old {old_n}, new {new_n}");
    eprintln!(
        "mcp kills ({rounds} in {:?}; an uninterrupted change took {full:?}): {old_n} left the \
         files old (rolled back or not started), {new_n} after the commit",
        started.elapsed()
    );
}
