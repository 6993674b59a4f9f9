//! The MCP client end to end (issue 35): servers configured under
//! `mcp.servers` in a project's `.ironbees/config.yaml`, listed and called with
//! `ironbees tools list|call`, re-exported by `ironbees mcp --reexport`, and
//! called by agents in a run with the mock model.
//!
//! The well-behaved servers are real third-party ones nobody here wrote,
//! installed by `scripts/test` under `target/test-deps`: the reference
//! filesystem and memory servers (npm `@modelcontextprotocol/server-filesystem`,
//! `@modelcontextprotocol/server-memory`) and the git server (PyPI
//! `mcp-server-git`). The badly behaved ones are `crates/mcp-client/tests/
//! fixtures/server.py` (exits at start, never answers `initialize`, hangs in a
//! call, writes garbage); every one of their processes writes its pid, and the
//! process table is checked for each afterwards. A missing server skips with a
//! loud message on a developer machine and fails under `CI`.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use test_support::{
    TempProject,
    mock_llm::{MockLlm, Reply},
};

use super::{
    Out,
    agent::{
        CALC, DIVISION, GUARDED, after_tool, agent_of, calc_project, cli, ironbees, ok, plan_json,
        replace_args, usage,
    },
    mcp::{BIN, Raw, client_available, deps},
};

/// Where `scripts/test` installs the third-party servers.
struct Servers {
    memory: PathBuf,
    filesystem: PathBuf,
    git_pythonpath: PathBuf,
}

fn servers() -> Option<Servers> {
    let bin = deps().join("mcp-servers/node_modules/.bin");
    let s = Servers {
        memory: bin.join("mcp-server-memory"),
        filesystem: bin.join("mcp-server-filesystem"),
        git_pythonpath: deps().join("mcp-server-git"),
    };
    let present = s.memory.exists()
        && s.filesystem.exists()
        && s.git_pythonpath.join("mcp_server_git").is_dir();
    client_available(
        "the reference MCP servers (filesystem, memory, git)",
        present,
        "scripts/test (npm install --prefix target/test-deps/mcp-servers \
         @modelcontextprotocol/server-filesystem @modelcontextprotocol/server-memory; \
         pip install --target target/test-deps/mcp-server-git mcp-server-git)",
    )
    .then_some(s)
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-client/tests/fixtures/server.py")
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// The configuration of the three real servers, for a project at `root`.
fn real_servers_config(s: &Servers, root: &Path) -> String {
    format!(
        r#"mcp:
  servers:
    git:
      command: python3
      args: ["-m", "mcp_server_git", "--repository", "."]
      env: {{PYTHONPATH: "{git}"}}
      read_only: [git_status, git_log, git_diff_unstaged]
    memory:
      command: {memory}
      env: {{MEMORY_FILE_PATH: "{mem_file}"}}
    fs:
      command: {fs}
      args: ["."]
      read_only: [read_text_file, list_directory]
"#,
        git = s.git_pythonpath.display(),
        memory = s.memory.display(),
        mem_file = root.join(".memory.json").display(),
        fs = s.filesystem.display(),
    )
}

fn with_config(p: &TempProject, config: &str) {
    p.write(".ironbees/config.yaml", config);
}

fn bin(root: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.arg("-C").arg(root);
    c.env("XDG_CONFIG_HOME", root.join(".no-user-config"));
    super::without_model_env(&mut c);
    c
}

fn run_bin(root: &Path, args: &[&str]) -> Out {
    Out::from(bin(root).args(args).output().unwrap())
}

/// The pids `tools list` printed for its servers.
fn listed_pids(text: &str) -> Vec<i32> {
    text.split(", pid ")
        .skip(1)
        .filter_map(|rest| rest.split(':').next()?.trim().parse().ok())
        .collect()
}

/// Waits until none of `pids` is in the process table, alive or a zombie.
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

#[test]
fn real_servers_are_listed_and_called_by_name_and_end_with_the_command() {
    let Some(s) = servers() else { return };
    let p = TempProject::new();
    p.write("app.py", "print('hi')\n");
    git(p.root(), &["init", "-q"]);
    git(p.root(), &["add", "-A"]);
    git(p.root(), &["commit", "-qm", "init"]);
    with_config(&p, &real_servers_config(&s, p.root()));

    let o = run_bin(p.root(), &["tools", "list"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    for name in ["read", "git.git_status", "memory.read_graph", "fs.read_text_file"] {
        assert!(o.stdout.contains(name), "{name} missing:\n{}", o.stdout);
    }
    let pids = listed_pids(&o.stdout);
    assert_eq!(pids.len(), 3, "{}", o.stdout);
    assert_gone(&pids);

    let o = run_bin(p.root(), &["tools", "list", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let listed: Vec<Value> = serde_json::from_str(&o.stdout).unwrap();
    let status = listed.iter().find(|t| t["name"] == "git.git_status").unwrap();
    assert_eq!(status["source"], json!({"kind": "server", "server": "git"}));
    assert_eq!(status["effect"], "read");
    assert!(status["inputSchema"]["properties"]["repo_path"].is_object(), "{status}");
    let commit = listed.iter().find(|t| t["name"] == "git.git_commit").unwrap();
    assert_eq!(commit["effect"], "external", "not declared read-only: acts on the world");
    let builtin = listed.iter().find(|t| t["name"] == "read").unwrap();
    assert_eq!(builtin["source"], json!({"kind": "builtIn"}));

    let o =
        run_bin(p.root(), &["tools", "call", "git.git_status", "--args", r#"{"repo_path": "."}"#]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert!(v["content"][0]["text"].as_str().unwrap().contains("working tree clean"), "{v}");

    let entity = r#"{"entities": [{"name": "ironbees", "entityType": "project", "observations": ["written in Rust"]}]}"#;
    let o = run_bin(p.root(), &["tools", "call", "memory.create_entities", "--args", entity]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // The old form, `tool NAME JSON`, is the same call.
    let o = run_bin(p.root(), &["tool", "memory.search_nodes", r#"{"query": "Rust"}"#]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("written in Rust"), "{}", o.stdout);
    let o = run_bin(
        p.root(),
        &["tools", "call", "fs.read_text_file", "--args", r#"{"path": "app.py"}"#],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("print('hi')"), "{}", o.stdout);
    let o = run_bin(
        p.root(),
        &["tools", "call", "fs.read_text_file", "--args", r#"{"path": "/etc/passwd"}"#],
    );
    assert_ne!(o.code, 0, "the server refuses a path outside its roots: {}", o.stdout);
    assert!(o.stderr.contains("TOOL_EXECUTION_FAILED"), "{}", o.stderr);
    // A tool the server does not have.
    let o = run_bin(p.root(), &["tools", "call", "git.git_push"]);
    assert_eq!(o.code, 3, "{}", o.stderr);
    assert!(o.stderr.contains("TOOL_NOT_FOUND"), "{}", o.stderr);
}

/// The fixture's badly behaved servers, each with its pid directory.
fn broken_config(pids: &Path, required: &str) -> String {
    let server = |name: &str, mode: &str, extra: &str| {
        format!(
            "    {name}:\n      command: python3\n      args: [\"{fx}\", \"{mode}\"]\n      env: {{API_TOKEN: \"s3cr3t-token-value\", PIDS_DIR: \"{pids}\"}}\n      startup_timeout: 3s\n      tool_timeout: 1s\n{extra}",
            fx = fixture().display(),
            pids = pids.display(),
        )
    };
    let mut c = String::from("mcp:\n  servers:\n");
    c.push_str(&server("gone", "exit", required));
    c.push_str(&server("mute", "silent", ""));
    c.push_str(&server("noise", "garbage", ""));
    c.push_str(&server("fx", "ok", "      read_only: [echo]\n"));
    c
}

fn pids_in(dir: &Path) -> Vec<i32> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok()?.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn broken_servers_are_isolated_with_their_codes_and_leave_no_process() {
    let p = TempProject::new();
    let pids = p.path("pids");
    std::fs::create_dir_all(&pids).unwrap();
    with_config(&p, &broken_config(&pids, ""));

    // Optional servers that fail are left out with a warning each; the rest works.
    let started = Instant::now();
    let o = Out::from(
        bin(p.root()).args(["tools", "list"]).env("IRONBEES_LOG", "debug").output().unwrap(),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    assert!(o.stdout.contains("fx.echo") && !o.stdout.contains("gone."), "{}", o.stdout);
    for (server, why) in [
        ("gone", "exit status: 3"),
        ("mute", "did not answer `initialize`"),
        ("noise", "not JSON-RPC"),
    ] {
        let line = format!("MCP server `{server}` is left out");
        assert!(o.stderr.contains(&line) && o.stderr.contains(why), "{server}: {}", o.stderr);
    }
    // The configured environment's values never show, in warnings or logs.
    assert!(o.stderr.contains("token *** was refused"), "{}", o.stderr);
    assert!(
        !o.stderr.contains("s3cr3t-token-value") && !o.stdout.contains("s3cr3t"),
        "{}",
        o.stderr
    );
    assert_gone(&pids_in(&pids));

    // A hung call times out; a crash is reported; the calls' processes end.
    let o = run_bin(p.root(), &["tools", "call", "fx.hang"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("TOOL_EXECUTION_FAILED")
            && o.stderr.contains("did not answer within 1 s"),
        "{}",
        o.stderr
    );
    let o = run_bin(p.root(), &["tools", "call", "fx.crash"]);
    assert!(o.stderr.contains("TOOL_EXECUTION_FAILED"), "{}", o.stderr);
    let o = run_bin(p.root(), &["tools", "call", "fx.env"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("token=***") && !o.stdout.contains("s3cr3t"), "{}", o.stdout);
    // A tool of a server that did not start says why.
    let o = run_bin(p.root(), &["tools", "call", "gone.echo"]);
    assert_eq!(o.code, 3, "{}", o.stderr);
    assert!(
        o.stderr.contains("TOOL_NOT_FOUND") && o.stderr.contains("`gone` is not available"),
        "{}",
        o.stderr
    );

    // Required: the command stops with TOOL_EXECUTION_FAILED.
    with_config(&p, &broken_config(&pids, "      required: true\n"));
    let o = run_bin(p.root(), &["tools", "list"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("error[TOOL_EXECUTION_FAILED]")
            && o.stderr.contains("required MCP server `gone`"),
        "{}",
        o.stderr
    );
    assert_gone(&pids_in(&pids));
    assert!(pids_in(&pids).len() >= 10, "every start wrote its pid: {:?}", pids_in(&pids));
}

#[test]
fn ironbees_mcp_reexports_the_configured_servers_tools_beside_its_own() {
    let p = TempProject::new();
    p.write("a.py", "x = 1\n");
    let pids = p.path("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let config = format!(
        "mcp:\n  servers:\n    fx:\n      command: python3\n      args: [\"{}\", \"ok\"]\n      env: {{PIDS_DIR: \"{}\"}}\n",
        fixture().display(),
        pids.display()
    );
    with_config(&p, &config);
    let mut s = Raw::start_with(p.root(), |c| {
        c.arg("--reexport");
    });
    s.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string()
        .as_bytes(),
    );
    assert_eq!(s.recv("initialize")["id"], 1);
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let list = s.recv("tools/list");
    let tools = list["result"]["tools"].as_array().unwrap();
    let echo = tools.iter().find(|t| t["name"] == "fx.echo").expect("fx.echo re-exported");
    assert_eq!(echo["annotations"]["readOnlyHint"], false, "not declared read-only");
    assert!(tools.iter().any(|t| t["name"] == "understand"));
    s.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fx.echo","arguments":{"text":"relayed"}}}"#);
    let r = s.recv("tools/call");
    assert_eq!(r["result"]["content"][0]["text"], "relayed", "{r}");
    s.send(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fx.fail","arguments":{}}}"#);
    let r = s.recv("tools/call fail");
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"].as_str().unwrap().starts_with("TOOL_EXECUTION_FAILED"),
        "{r}"
    );
    drop(s.stdin);
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_gone(&pids_in(&pids));
}

#[test]
fn agents_call_outside_tools_in_a_run_under_the_shadow_rules() {
    let Some(s) = servers() else { return };
    let p = calc_project();
    p.write("test_calc.py", super::agent::TEST_CALC);
    git(p.root(), &["init", "-q"]);
    git(p.root(), &["add", "-A"]);
    git(p.root(), &["commit", "-qm", "calc"]);
    with_config(&p, &real_servers_config(&s, p.root()));
    // The planner may use the whole git server and one memory tool.
    p.write(
        "agents/planner/agent.yaml",
        "name: planner\ndescription: plans with git\nrequiredTools: [read, git, memory.create_entities]\npromptTemplate: prompt.md\n",
    );
    p.write("agents/planner/prompt.md", "# Planner\nPlan the change. Use git to see the state.\n");
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(CALC.as_bytes());
    mock.set_responder(move |body| {
        let reply = match agent_of(body) {
            "Planner" if after_tool(body) => {
                Reply::text(plan_json("calc.py", "Raise ValueError when dividing by zero"))
            }
            "Planner" => Reply::tool_calls(
                "",
                vec![
                    ("git_git_status", json!({"repo_path": "."})),
                    (
                        "memory_create_entities",
                        json!({"entities": [{"name": "x", "entityType": "y", "observations": []}]}),
                    ),
                ],
            ),
            "Coder" if after_tool(body) => Reply::text("Guarded the division."),
            "Coder" => Reply::tool_calls(
                "",
                vec![("change", replace_args("calc.py", &hash, DIVISION, GUARDED))],
            ),
            "Validator" => Reply::text("Fine."),
            _ => return None,
        };
        Some(reply.usage(usage()))
    });
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero in calculate()"]);
    ok(&o);
    assert_eq!(o.outcome()["status"]["type"], "succeeded", "{}", o.stderr);
    // The model was offered the outside tools under names model APIs accept.
    let planner =
        mock.requests().into_iter().map(|r| r.body).find(|b| agent_of(b) == "Planner").unwrap();
    let offered: Vec<&str> =
        planner["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(
        offered.contains(&"git_git_status") && offered.contains(&"memory_create_entities"),
        "{offered:?}"
    );
    assert!(!offered.contains(&"memory_read_graph"), "only the tool the agent named: {offered:?}");
    // Events name the registry's tools; the read-only one answered, the other was refused.
    let results = o.events("toolResult");
    let status =
        results.iter().find(|r| r["name"] == "git.git_status").expect("git.git_status called");
    assert_eq!(status["ok"], true, "{status}");
    assert!(status["summary"].as_str().unwrap().contains("Repository status"), "{status}");
    let memory = results.iter().find(|r| r["name"] == "memory.create_entities").unwrap();
    assert_eq!(memory["code"], "SHADOW_REFUSED", "{memory}");
    assert!(!p.path(".memory.json").exists(), "the refused call did not reach the server");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));

    // An agent that needs a server that is not there stops with TOOL_NOT_FOUND.
    let mut broken = real_servers_config(&s, p.root());
    broken = broken.replace("command: python3", "command: /nonexistent/python3");
    with_config(&p, &broken);
    let mut c = ironbees(p.root(), &mock);
    c.args(["run", "--yes", "--json", "Again"]);
    let o = super::agent::run(c);
    assert_eq!(o.code, 3, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("TOOL_NOT_FOUND") && o.stderr.contains("`git` is not available"),
        "{}",
        o.stderr
    );
}
