//! One engine under every driver (issue 25): every tool of the registry answers the
//! same over MCP (`ironbees mcp`), by name from the CLI (`ironbees tool`), and —
//! where one exists — from the CLI's own subcommand; the schemas MCP advertises
//! are the ones derived from the protocol types; `understand` lists hotspots from
//! git history over MCP; and reads are not queued behind an edit transaction.

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use test_support::TempProject;

use super::mcp::{BIN, Raw};

/// A small shop with tests and a git history (two commits touching the cart).
fn shop() -> TempProject {
    let p = TempProject::with_fixture(
        r#"
        //- shop/__init__.py
        //- shop/pricing.py
        class Discount:
            def __init__(self, percent):
                self.percent = percent

            def apply(self, amount):
                return amount * (100 - self.percent) / 100


        def price_of(item):
            return item["price"] * item["qty"]
        //- shop/cart.py
        from shop.pricing import Discount, price_of


        class Cart:
            def __init__(self):
                self.items = []

            def add(self, item):
                self.items.append(item)

            def total(self, discount=None):
                t = sum(price_of(i) for i in self.items)
                return Discount(discount).apply(t) if discount else t
        //- tests/test_cart.py
        from shop.cart import Cart


        def test_total():
            c = Cart()
            c.add({"price": 2, "qty": 3})
            assert c.total() == 6
        "#,
    );
    git(p.root(), &["init", "-q"]);
    git(p.root(), &["add", "-A"]);
    git(p.root(), &["commit", "-qm", "shop"]);
    let cart = p.read("shop/cart.py").replace("self.items = []", "self.items = list()");
    p.write("shop/cart.py", cart);
    git(p.root(), &["commit", "-qam", "cart: list()"]);
    p
}

fn git(dir: &Path, args: &[&str]) {
    #[allow(clippy::disallowed_methods)] // test setup: a repository with history
    let o = Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

fn ironbees(dir: &Path, args: &[&str]) -> (i32, String, String) {
    #[allow(clippy::disallowed_methods)] // the binary under test
    let o = Command::new(BIN)
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("XDG_CONFIG_HOME", dir.join(".no-user-config"))
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// What differs between two runs of the same call: clocks, what the first call
/// indexed, the raw run of a build or test (its temporary results directory and
/// timings; the parsed result is compared).
fn normalized(v: &Value) -> Value {
    const VOLATILE: &[&str] = &[
        "exec",
        "durationMs",
        "cpuTimeMs",
        "peakMemoryBytes",
        "peakMemorySource",
        "last_update",
        "lastUpdate",
        "update",
        "leftoverProcessesKilled",
        "memory",
    ];
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
                .map(|(k, x)| (k.clone(), normalized(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// (tool, arguments, the CLI subcommand giving the same answer and where in the
/// tool's answer its `--json` output is).
type Case = (&'static str, Value, Option<(&'static [&'static str], &'static str)>);

fn cases() -> Vec<Case> {
    vec![
        (
            "understand",
            json!({"target": "shop/cart.py"}),
            Some((&["understand", "shop/cart.py"], "")),
        ),
        (
            "change",
            json!({"edits": [{"path": "shop/cart.py", "targetString": "list()", "replacementString": "[]"}]}),
            Some((
                &["change", "shop/cart.py", "--find", "list()", "--replace", "[]", "--dry-run"],
                "editResult",
            )),
        ),
        ("navigate", json!({"target": "price_of"}), Some((&["navigate", "price_of"], ""))),
        ("read", json!({"target": "shop/pricing.py"}), Some((&["read", "shop/pricing.py"], ""))),
        (
            "write",
            json!({"path": "shop/tax.py", "content": "RATE = 0.2\n", "dryRun": true}),
            Some((&["write", "shop/tax.py", "--content", "RATE = 0.2\n", "--dry-run"], "")),
        ),
        ("manage", json!({"command": "status"}), Some((&["manage", "status"], ""))),
        ("symbols", json!({"kind": "class"}), Some((&["symbols", "--kind", "class"], "symbols"))),
        ("skeleton", json!({"path": "shop/cart.py"}), Some((&["skeleton", "shop/cart.py"], ""))),
        ("search", json!({"query": "cart total"}), Some((&["search", "cart total"], ""))),
        (
            "localize",
            json!({"query": "Cart.total ignores the discount", "k": 3}),
            Some((&["localize", "-q", "Cart.total ignores the discount", "-k", "3"], "files")),
        ),
        ("repomap", json!({"tokens": 300}), Some((&["repomap", "--tokens", "300"], ""))),
        (
            "graph",
            json!({"query": "callers", "target": "price_of"}),
            Some((&["graph", "callers", "price_of"], "")),
        ),
        (
            "impact",
            json!({"target": "shop/pricing.py"}),
            Some((&["impact", "shop/pricing.py"], "")),
        ),
        ("hotspots", json!({"top": 3}), Some((&["hotspots", "--top", "3"], ""))),
        ("report", json!({"top": 3}), Some((&["report", "--top", "3", "--format", "json"], ""))),
        ("status", json!({}), Some((&["status"], ""))),
        ("index", json!({}), Some((&["index"], ""))),
        ("undo", json!({"dryRun": true}), None),
        ("redo", json!({"dryRun": true}), None),
        ("history", json!({}), Some((&["history"], "transactions"))),
        ("build", json!({}), Some((&["build"], ""))),
        ("test", json!({}), Some((&["test"], ""))),
        ("exec", json!({"command": ["python3", "-c", "print(6 * 7)"]}), None),
        (
            "route",
            json!({"request": "Explain how the cart total is computed"}),
            Some((&["route", "Explain how the cart total is computed"], "")),
        ),
        (
            "guard_check",
            json!({"diff": "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -1,1 +1,2 @@\n x = 1\n+API = \"http://internal.example.com/v1\"\n"}),
            None,
        ),
        ("search_project", json!({"query": "Discount"}), None),
        ("read_code", json!({"filePath": "shop/cart.py", "view": "skeleton"}), None),
        (
            "edit_code",
            json!({"filePath": "shop/cart.py", "edits": [{"targetString": "list()", "replacementString": "[]"}], "dryRun": true}),
            None,
        ),
        ("analyze_relationship", json!({"target": "price_of", "mode": "calls"}), None),
        ("list_directory", json!({"path": "shop"}), None),
        ("get_hierarchy", json!({"target": "Cart"}), None),
        ("manage_project", json!({"command": "status"}), None),
    ]
}

/// Every registry tool, called over MCP, by `ironbees tool`, and by its own
/// subcommand, answers the same for the same input (errors: the same code and
/// message). The table covers every tool the server lists.
#[test]
fn every_tool_answers_the_same_over_mcp_and_from_the_cli() {
    let p = shop();
    let mut s = Raw::ready(p.root());
    s.send(br#"{"jsonrpc":"2.0","id":900,"method":"tools/list"}"#);
    let listed = s.recv("tools/list");
    let names: Vec<String> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let table = cases();
    let covered: Vec<&str> = table.iter().map(|c| c.0).collect();
    assert_eq!(covered, names, "the table must cover every listed tool, in order");

    for (i, (tool, args, cli)) in table.into_iter().enumerate() {
        let r = s.call(i as u64 + 1, tool, args.clone());
        let mcp_err = r["isError"] == true;
        let mcp = r["structuredContent"].clone();
        let (code, stdout, stderr) = ironbees(p.root(), &["tool", tool, &args.to_string()]);
        if mcp_err {
            assert_ne!(code, 0, "{tool}: MCP failed, the CLI did not: {stdout}");
            let cli: Value = serde_json::from_str(stderr.trim())
                .unwrap_or_else(|e| panic!("{tool}: the CLI's error is not JSON ({e}): {stderr}"));
            assert_eq!(cli["error"]["code"], mcp["error"]["code"], "{tool}");
            assert_eq!(cli["error"]["message"], mcp["error"]["message"], "{tool}");
            continue;
        }
        assert_eq!(code, 0, "{tool}: MCP answered, the CLI failed: {stderr}");
        let by_name: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(normalized(&by_name), normalized(&mcp), "{tool}: `ironbees tool` differs");
        if let Some((argv, field)) = cli {
            let mut argv = argv.to_vec();
            argv.push("--json");
            let (code, stdout, stderr) = ironbees(p.root(), &argv);
            assert!(code == 0 || tool == "test" && code == 1, "{argv:?}: {stderr}");
            let sub: Value = serde_json::from_str(&stdout)
                .unwrap_or_else(|e| panic!("{argv:?}: not JSON ({e}): {stdout}"));
            let want = if field.is_empty() { &mcp } else { &mcp[field] };
            assert_eq!(normalized(&sub), normalized(want), "{argv:?} differs from the tool");
        }
    }
}

/// The input schema MCP advertises for each tool is the one derived from its
/// protocol request type, and the output schema the one derived from its answer.
#[test]
fn mcp_advertises_the_schemas_derived_from_the_protocol_types() {
    let p = shop();
    let mut s = Raw::ready(p.root());
    s.send(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    let listed = s.recv("tools/list");
    let registry = engine::Registry::new();
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), registry.tools().count());
    for t in tools {
        let name = t["name"].as_str().unwrap();
        let spec = &registry.get(name).unwrap().spec;
        assert_eq!(t["inputSchema"], Value::Object((*spec.input_schema).clone()), "{name}");
        assert_eq!(t["outputSchema"], Value::Object((*spec.output_schema).clone()), "{name}");
        assert_eq!(t["description"], spec.description, "{name}");
        assert_eq!(t["annotations"]["readOnlyHint"], spec.effect == protocol::Effect::Read);
    }
    // And the derivation is the protocol type's: a field of the request is in it.
    let localize = &registry.get("localize").unwrap().spec.input_schema;
    assert!(
        localize["properties"]["query"].is_object() && localize["required"] == json!(["query"])
    );
}

/// `understand` over MCP on a repository with history lists the file's hotspot
/// (it was always empty: the pillars had no git churn).
#[test]
fn understand_over_mcp_lists_hotspots_from_git_history() {
    let p = shop();
    let mut s = Raw::ready(p.root());
    let r = s.call(1, "understand", json!({"target": "shop/cart.py"}));
    assert_ne!(r["isError"], true, "{r}");
    let sc = &r["structuredContent"];
    let hot = sc["hotSpots"].as_array().unwrap();
    let cart = hot.iter().find(|h| h["path"] == "shop/cart.py").unwrap_or_else(|| panic!("{sc}"));
    assert_eq!(cart["commits"], 2, "two commits touched the cart: {cart}");
    assert!(cart["score"].as_f64().unwrap() > 0.0);
    assert_eq!(sc["files"][0]["hotSpot"]["path"], "shop/cart.py", "{sc}");
}

/// 50 concurrent read calls while an edit transaction runs (its post-edit build
/// takes seconds) all finish before the transaction does: readers do not queue
/// behind the one writer.
#[test]
fn reads_do_not_wait_for_an_edit_transaction() {
    let p = TempProject::with_fixture(
        r#"
        //- Cargo.toml
        [package]
        name = "slow"
        version = "0.1.0"
        edition = "2021"
        build = "build.rs"
        //- build.rs
        fn main() {
            std::thread::sleep(std::time::Duration::from_secs(6));
        }
        //- src/lib.rs
        pub fn answer() -> u32 {
            41
        }

        pub fn ask() -> u32 {
            answer()
        }
        "#,
    );
    std::fs::create_dir(p.path(".git")).unwrap();
    let mut s = Raw::ready(p.root());
    // Warm up: index once, so the reads below do not pay for it.
    let r = s.call(1, "symbols", json!({}));
    assert_ne!(r["isError"], true, "{r}");
    let started = Instant::now();
    s.send_call(
        2,
        "change",
        json!({"edits": [{"path": "src/lib.rs", "targetString": "41", "replacementString": "42"}],
               "options": {"dryRun": false, "check": "build", "includeImpact": false}}),
    );
    // The transaction is under way once its file is written (the build check follows).
    while !p.read("src/lib.rs").contains("42") {
        assert!(started.elapsed() < Duration::from_secs(60), "the change never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let reads = [
        ("navigate", json!({"target": "answer"})),
        ("read", json!({"target": "src/lib.rs", "view": "skeleton"})),
        ("search", json!({"query": "answer"})),
        ("symbols", json!({"name": "ask"})),
        ("history", json!({})),
    ];
    for i in 0..50u64 {
        let (tool, args) = &reads[i as usize % reads.len()];
        s.send_call(100 + i, tool, args.clone());
    }
    let mut read_answers = 0;
    let mut change_answered_at = None;
    while change_answered_at.is_none() || read_answers < 50 {
        let m = s.recv("answers");
        match m["id"].as_u64() {
            Some(2) => {
                change_answered_at = Some(read_answers);
                assert_ne!(m["result"]["isError"], true, "the change failed: {m}");
            }
            Some(id) if id >= 100 => {
                assert_ne!(m["result"]["isError"], true, "read {id} failed: {m}");
                read_answers += 1;
            }
            _ => {}
        }
    }
    assert_eq!(
        change_answered_at,
        Some(50),
        "the edit answered before all reads: they waited for it"
    );
}
