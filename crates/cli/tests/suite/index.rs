//! Indexing commands: index, symbols, skeleton, status.

use super::Out;
use std::{
    path::Path,
    process::{Command, Stdio},
    time::Duration,
};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;
use test_support::TempProject;

fn ironbees(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.arg("-C").arg(dir);
    c.env("XDG_CONFIG_HOME", dir.join(".no-user-config"));
    c
}

fn run(mut c: Command) -> Out {
    let o = c.output().unwrap();
    Out::from(o)
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let mut c = ironbees(dir);
    c.args(args).arg("--json");
    let o = run(c);
    assert_eq!(o.code, 0, "ironbees {args:?} failed: {}", o.stderr);
    serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("bad JSON from {args:?}: {e}\n{}", o.stdout))
}

fn project() -> TempProject {
    TempProject::with_fixture(
        r#"
        //- app/server.py
        """Server module."""

        class Server:
            """Serves requests."""

            def start(self, port: int) -> None:
                self.port = port
                listen(port)

            def stop(self, reason: str = "shutdown") -> bool:
                """Stops the server and reports whether it was running."""
                if not getattr(self, "port", None):
                    print("server was not running; nothing to stop", reason)
                    return False
                for connection in list(self.connections.values()):
                    connection.close(reason=reason, flush=True)
                self.port = None
                return True

        def listen(port):
            pass
        //- lib/util.go
        package util

        // Max returns the larger.
        func Max(a, b int) int {
            if a > b {
                return a
            }
            return b
        }
        //- notes.txt
        not code
        "#,
    )
}

#[test]
fn symbols_json_has_the_documented_fields() {
    let p = project();
    let v = json(p.root(), &["symbols"]);
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 5);
    let start = arr.iter().find(|s| s["name"] == "start").unwrap();
    assert_eq!(start["path"], "app/server.py");
    assert_eq!(start["qualified_name"], "Server.start");
    assert_eq!(start["kind"], "method");
    assert_eq!(start["line"], 6);
    assert_eq!(start["end_line"], 8);
    assert_eq!(start["signature"], "def start(self, port: int) -> None:");
    let max = arr.iter().find(|s| s["name"] == "Max").unwrap();
    assert_eq!(max["doc"], "Max returns the larger.");
    assert_eq!(max["language"], "go");
}

#[test]
fn symbols_filters_and_paths_relative_to_the_current_directory() {
    let p = project();
    let v = json(&p.path("app"), &["symbols", "--file", "server.py", "--kind", "class"]);
    let names: Vec<&str> =
        v.as_array().unwrap().iter().map(|s| s["qualified_name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Server"]);

    let mut c = ironbees(p.root());
    c.args(["symbols", "--kind", "klass"]);
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("error[INVALID_ARGUMENT]") && o.stderr.contains("klass"),
        "{}",
        o.stderr
    );
}

#[test]
fn index_reports_counts_and_skips_and_reindexes_incrementally() {
    let p = project();
    let v = json(p.root(), &["index"]);
    assert_eq!(v["files"], 2);
    assert_eq!(v["update"]["parsed"], 2);
    assert_eq!(v["skipped"][0]["code"], "UNKNOWN_LANGUAGE");
    let v = json(p.root(), &["index"]);
    assert_eq!(v["update"]["parsed"], 0);
    assert_eq!(v["update"]["unchanged"], 3);
}

#[test]
fn status_shows_staleness_after_an_edit() {
    let p = project();
    json(p.root(), &["index"]);
    assert_eq!(json(p.root(), &["status"])["stale"]["modified"], 0);
    p.write("lib/util.go", "package util\n\nfunc Min() {}\n");
    let st = json(p.root(), &["status"]);
    assert_eq!(st["stale"]["modified"], 1);
    assert_eq!(st["stale"]["examples"][0], "lib/util.go");
    let mut c = ironbees(p.root());
    c.arg("status");
    let o = run(c);
    assert!(o.stdout.contains("1 modified"), "{}", o.stdout);
}

#[test]
fn skeleton_elides_bodies_and_reports_the_token_ratio() {
    let p = project();
    let v = json(p.root(), &["skeleton", "app/server.py"]);
    let text = v["text"].as_str().unwrap();
    assert!(text.contains("class Server:"), "{text}");
    assert!(text.contains("def start(self, port: int) -> None:"), "{text}");
    assert!(text.contains("\"\"\"Serves requests.\"\"\""), "{text}");
    assert!(!text.contains("listen(port)\n") || !text.contains("self.port = port"), "{text}");
    assert!(!text.contains("self.port = port"), "body must be elided:\n{text}");
    assert_eq!(v["definitions"], 4);
    assert!(text.contains("Stops the server"), "{text}");
    assert!(!text.contains("connection.close"), "{text}");
    assert!(v["skeleton_tokens"].as_u64().unwrap() > 0);
    assert!(v["ratio"].as_f64().unwrap() < 1.0);
}

#[test]
fn errors_carry_machine_codes_and_exit_codes() {
    let p = project();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["skeleton", "../../etc/passwd"], 4, "PATH_OUTSIDE_ROOT"),
        (&["skeleton", "missing.py"], 3, "NOT_FOUND"),
        (&["skeleton", "notes.txt"], 1, "UNKNOWN_LANGUAGE"),
    ];
    for (args, code, machine) in cases {
        let mut c = ironbees(p.root());
        c.args(*args);
        let o = run(c);
        assert_eq!(o.code, *code, "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(&format!("error[{machine}]")), "{args:?}: {}", o.stderr);
    }
    p.write("blob.py", b"\0\0\0binary");
    let mut c = ironbees(p.root());
    c.args(["skeleton", "blob.py", "--json"]);
    let o = run(c);
    assert_eq!(o.code, 1);
    let err: Value = serde_json::from_str(o.stderr.trim()).unwrap();
    assert_eq!(err["error"]["code"], "BINARY_FILE");
}

#[test]
fn a_file_as_dash_c_is_not_a_directory() {
    let p = project();
    let mut c = ironbees(&p.path("notes.txt"));
    c.arg("index");
    let o = run(c);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("error[NOT_A_DIRECTORY]"), "{}", o.stderr);
}

#[test]
fn a_damaged_index_says_how_to_recover() {
    let p = project();
    json(p.root(), &["index"]);
    std::fs::write(p.path(".ironbees/index.db"), vec![b'x'; 4096]).unwrap();
    let _ = std::fs::remove_file(p.path(".ironbees/index.db-wal"));
    let _ = std::fs::remove_file(p.path(".ironbees/index.db-shm"));
    let mut c = ironbees(p.root());
    c.arg("status");
    let o = run(c);
    assert_eq!(o.code, 5, "{}", o.stderr);
    assert!(
        o.stderr.contains("INDEX_CORRUPT") && o.stderr.contains("ironbees index --rebuild"),
        "{}",
        o.stderr
    );
    assert_eq!(json(p.root(), &["index", "--rebuild"])["files"], 2);
}

#[test]
fn config_file_excludes_and_limits_apply() {
    let p = project();
    p.write(".ironbees/config.yaml", "index:\n  exclude: [\"lib/\"]\n");
    let v = json(p.root(), &["index"]);
    assert_eq!(v["files"], 1);
    p.write(".ironbees/config.yaml", "index:\n  max_file_size: 10\n");
    let v = json(p.root(), &["index"]);
    assert_eq!(v["files"], 0);
    let codes: Vec<&str> =
        v["skipped"].as_array().unwrap().iter().map(|g| g["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"FILE_TOO_LARGE"), "{codes:?}");
}

#[test]
fn help_shows_examples() {
    let o = run({
        let mut c = Command::cargo_bin("ironbees").unwrap();
        c.arg("--help");
        c
    });
    assert!(o.stdout.contains("Examples:") && o.stdout.contains("ironbees index"), "{}", o.stdout);
    let o = run({
        let mut c = Command::cargo_bin("ironbees").unwrap();
        c.args(["symbols", "--help"]);
        c
    });
    assert!(o.stdout.contains("Example:"), "{}", o.stdout);
}

/// An unreadable file is skipped with UNREADABLE and the rest is indexed. Root reads
/// everything, so as root the binary runs as `nobody` through `setpriv`.
#[cfg(unix)]
#[test]
fn unreadable_files_are_skipped() {
    use std::os::unix::fs::PermissionsExt;
    let p = project();
    p.write("secret/hidden.py", "def hidden(): pass\n");
    std::fs::set_permissions(p.path("secret/hidden.py"), std::fs::Permissions::from_mode(0o000))
        .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("ironbees");
    let mut c = if unsafe_is_root() {
        // nobody must be able to write .ironbees/ and traverse the tree.
        chown_tree(p.root(), 65534);
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(&bin);
        c
    } else {
        Command::new(&bin)
    };
    c.arg("-C").arg(p.root()).args(["index", "--json"]).env("XDG_CONFIG_HOME", "/nonexistent");
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["files"], 2);
    let unreadable = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["code"] == "UNREADABLE")
        .expect("an UNREADABLE group");
    assert_eq!(unreadable["examples"][0]["path"], "secret/hidden.py");
}

#[cfg(unix)]
fn unsafe_is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

#[cfg(unix)]
fn chown_tree(root: &Path, uid: u32) {
    std::os::unix::fs::chown(root, Some(uid), Some(uid)).unwrap();
    for e in std::fs::read_dir(root).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        std::os::unix::fs::lchown(&p, Some(uid), Some(uid)).unwrap();
        if e.file_type().unwrap().is_dir() {
            chown_tree(&p, uid);
        }
    }
}

/// SIGKILL at any moment of an index run leaves an index the next run completes,
/// and the result equals a clean index of the same tree.
#[cfg(unix)]
#[test]
fn killed_index_run_recovers() {
    let p = TempProject::new();
    for i in 0..3000 {
        p.write(
            &format!("m/f{i:04}.py"),
            format!("def f{i}():\n    return {i}\n\nclass K{i}:\n    pass\n"),
        );
    }
    for delay_ms in [150u64, 400, 900] {
        let mut c = ironbees(p.root());
        c.arg("index").stdout(Stdio::null()).stderr(Stdio::null());
        let mut child = c.spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
    }
    let v = json(p.root(), &["index"]);
    assert_eq!(v["files"], 3000);
    assert_eq!(v["symbols"], 6000);
    let st = json(p.root(), &["status"]);
    assert_eq!(st["stale"]["modified"], 0);
    assert_eq!(st["stale"]["added"], 0);
}

// --- derived data kept between processes (issue 27) --------------------------------

/// A project with calls between files, so that answers depend on the graphs.
fn graph_project() -> TempProject {
    TempProject::with_fixture(
        r#"
        //- shop/cart.py
        from shop.prices import total_price

        class Cart:
            def checkout(self, items):
                """Charges the customer for the items in the cart."""
                return total_price(items)
        //- shop/prices.py
        def total_price(items):
            """Sums the prices of the items, with the discount."""
            return sum(i.price for i in items) - discount(items)

        def discount(items):
            return 0
        //- shop/cli.py
        from shop.cart import Cart

        def main():
            Cart().checkout([])
        "#,
    )
}

fn snapshot_file(p: &TempProject) -> std::path::PathBuf {
    p.path(".ironbees/derived/snapshot.bin")
}

/// The answers a user compares: localization, search and a call graph.
fn answers(dir: &Path) -> Vec<Value> {
    vec![
        json(dir, &["localize", "--query", "the discount in the total price at checkout"]),
        json(dir, &["search", "total price discount"]),
        json(dir, &["graph", "callers", "discount", "--depth", "3"]),
    ]
}

#[test]
fn index_builds_the_search_index_and_a_stored_snapshot_later_commands_decode() {
    let p = graph_project();
    json(p.root(), &["index"]);
    let search = p.path(".ironbees/search");
    assert!(std::fs::read_dir(&search).unwrap().next().is_some(), "no search index after `index`");
    let stored = std::fs::read(snapshot_file(&p)).expect("`index` stores the snapshot");

    // Later processes decode it: the file is not rewritten, and the answers are
    // those of a snapshot built from scratch.
    let decoded = answers(p.root());
    assert_eq!(std::fs::read(snapshot_file(&p)).unwrap(), stored);
    std::fs::remove_dir_all(p.path(".ironbees/derived")).unwrap();
    let built = answers(p.root());
    assert_eq!(decoded, built);
    assert_eq!(built[2]["nodes"].as_array().map(Vec::len), Some(4), "{}", built[2]);

    // Commands the index alone answers do not build it.
    std::fs::remove_dir_all(p.path(".ironbees/derived")).unwrap();
    json(p.root(), &["symbols", "--name", "discount"]);
    json(p.root(), &["status"]);
    assert!(!snapshot_file(&p).exists());

    // `index --rebuild` starts the derived data over too.
    json(p.root(), &["index"]);
    let written = std::fs::metadata(snapshot_file(&p)).unwrap().modified().unwrap();
    json(p.root(), &["index", "--rebuild"]);
    assert_ne!(std::fs::metadata(snapshot_file(&p)).unwrap().modified().unwrap(), written);
    assert_eq!(answers(p.root()), built);
}

#[test]
fn a_stored_snapshot_never_answers_for_changed_files() {
    let p = graph_project();
    json(p.root(), &["index"]);
    answers(p.root());
    // A new caller of `discount` in another file: the stored snapshot is the old
    // project's, and must not be the answer.
    p.write(
        "shop/refund.py",
        "from shop.prices import discount\n\ndef refund(items):\n    return discount(items)\n",
    );
    let v = json(p.root(), &["graph", "callers", "discount"]);
    assert!(v.to_string().contains("refund"), "{v}");
    // Back to the old content: the answers are the old ones again.
    std::fs::remove_file(p.path("shop/refund.py")).unwrap();
    let v = json(p.root(), &["graph", "callers", "discount"]);
    assert!(!v.to_string().contains("refund"), "{v}");
}

/// After a change, `index` updates the stored snapshot for the files that
/// changed instead of building it again, and the answers are those of a build
/// from scratch; a changed manifest builds it again.
#[test]
fn index_updates_the_stored_snapshot_for_what_changed() {
    let p = graph_project();
    for i in 0..8 {
        p.write(&format!("shop/extra{i}.py"), format!("def extra{i}():\n    return {i}\n"));
    }
    let first = json(p.root(), &["index"]);
    assert_eq!(first["snapshot"]["derivation"], "built", "{first}");
    let again = json(p.root(), &["index"]);
    assert_eq!(again["snapshot"]["derivation"], "stored", "{again}");

    // A body changes; a new file calls `discount`.
    p.write(
        "shop/prices.py",
        p.read("shop/prices.py").replace("return 0", "return len(items) * 0"),
    );
    p.write(
        "shop/refund.py",
        "from shop.prices import discount\n\ndef refund(items):\n    return discount(items)\n",
    );
    let v = json(p.root(), &["index"]);
    assert_eq!(v["snapshot"]["derivation"], "updated", "{v}");
    assert_eq!(v["snapshot"]["changedFiles"], 2, "{v}");
    let updated = answers(p.root());
    assert!(updated[2].to_string().contains("refund"), "{}", updated[2]);
    std::fs::remove_dir_all(p.path(".ironbees/derived")).unwrap();
    assert_eq!(answers(p.root()), updated);

    // Manifests are read by every file's import resolution: from scratch.
    p.write("package.json", r#"{"name": "shop", "main": "index.js"}"#);
    let v = json(p.root(), &["index"]);
    assert_eq!(v["snapshot"]["derivation"], "built", "{v}");
}

#[test]
fn a_damaged_stored_snapshot_is_rebuilt_not_trusted() {
    let p = graph_project();
    json(p.root(), &["index"]);
    let good = answers(p.root());
    let bytes = std::fs::read(snapshot_file(&p)).unwrap();
    for damaged in [bytes[..bytes.len() / 2].to_vec(), b"garbage".to_vec(), Vec::new()] {
        std::fs::write(snapshot_file(&p), &damaged).unwrap();
        assert_eq!(answers(p.root()), good);
        assert_eq!(std::fs::read(snapshot_file(&p)).unwrap(), bytes, "not replaced");
    }
}

/// SIGKILL while the snapshot is being written (half of it on disk) leaves the
/// previous one whole; the next command answers right and replaces it.
#[cfg(unix)]
#[test]
fn a_process_killed_while_storing_the_snapshot_leaves_the_previous_one() {
    use std::io::{BufRead, BufReader};
    let p = graph_project();
    json(p.root(), &["index"]);
    let before = std::fs::read(snapshot_file(&p)).unwrap();
    p.write(
        "shop/refund.py",
        "from shop.prices import discount\n\ndef refund(items):\n    return discount(items)\n",
    );
    let mut c = ironbees(p.root());
    c.args(["graph", "callers", "discount", "--json"])
        .env("IRONBEES_TEST_PAUSE_AT", "snapshot-half-written")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut paused = false;
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        if line.unwrap().starts_with("PAUSED snapshot-half-written") {
            child.kill().unwrap(); // SIGKILL
            paused = true;
            break;
        }
    }
    child.wait().unwrap();
    assert!(paused, "the command never reached the pause point");
    assert_eq!(
        std::fs::read(snapshot_file(&p)).unwrap(),
        before,
        "the previous snapshot is damaged"
    );
    let partial: Vec<_> = std::fs::read_dir(p.path(".ironbees/derived"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tmp"))
        .collect();
    assert_eq!(partial.len(), 1, "{partial:?}");

    // The previous snapshot still answers for the previous content...
    let removed = p.read("shop/refund.py");
    std::fs::remove_file(p.path("shop/refund.py")).unwrap();
    assert!(!json(p.root(), &["graph", "callers", "discount"]).to_string().contains("refund"));
    assert_eq!(std::fs::read(snapshot_file(&p)).unwrap(), before, "decoded, not rebuilt");
    // ...and the new content gets its own, whole. The killed writer's file goes
    // once it is old enough not to be a live writer's.
    p.write("shop/refund.py", removed);
    let f = std::fs::File::options().write(true).open(&partial[0]).unwrap();
    f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600)).unwrap();
    assert!(json(p.root(), &["graph", "callers", "discount"]).to_string().contains("refund"));
    assert_ne!(std::fs::read(snapshot_file(&p)).unwrap(), before);
    assert!(!partial[0].exists());
}

/// Where the snapshot cannot be stored (here `.ironbees/derived` is a file), the
/// answer is still right and the user is told why every process rebuilds it.
#[test]
fn an_unwritable_snapshot_store_warns_and_still_answers() {
    let p = graph_project();
    json(p.root(), &["index"]);
    let good = answers(p.root());
    std::fs::remove_dir_all(p.path(".ironbees/derived")).unwrap();
    std::fs::write(p.path(".ironbees/derived"), "not a directory").unwrap();
    assert_eq!(answers(p.root()), good);
    let mut c = ironbees(p.root());
    c.args(["graph", "callers", "discount"]);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr.contains("IO_ERROR") && o.stderr.contains("could not store the project snapshot"),
        "{}",
        o.stderr
    );
}

/// Several processes opening a new project at once (an editor's MCP server and a
/// terminal, two `ironbees mcp` sessions): each creates the index, the edit
/// history and the run store, or finds them created — none fails with "table
/// already exists" because another created the schema between its check and its
/// write.
#[test]
fn processes_opening_a_new_project_at_once_all_succeed() {
    for round in 0..3 {
        let p = project();
        let children: Vec<_> = (0..8)
            .map(|i| {
                let mut c = ironbees(p.root());
                c.args(match i % 3 {
                    0 => &["index", "--json"][..],
                    1 => &["history", "--json"][..],
                    _ => &["runs", "list", "--json"][..],
                });
                c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
                c.spawn().unwrap()
            })
            .collect();
        for child in children {
            let o = Out::from(child.wait_with_output().unwrap());
            assert_eq!(o.code, 0, "round {round}: {}", o.stderr);
        }
    }
}
