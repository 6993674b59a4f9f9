//! Edit commands: change, undo, redo, history, end to end through the binary.

use super::Out;
use std::{
    io::Write,
    path::Path,
    process::{Command, Stdio},
    time::Instant,
};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;
use test_support::TempProject;

fn ironbees(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.arg("-C").arg(dir);
    c.env("XDG_CONFIG_HOME", dir.join(".no-user-config"));
    c.env_remove("NO_COLOR");
    c
}

fn run(dir: &Path, args: &[&str]) -> Out {
    let o = ironbees(dir).args(args).output().unwrap();
    Out::from(o)
}

fn run_stdin(dir: &Path, args: &[&str], stdin: &str) -> Out {
    let mut child = ironbees(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    Out::from(o)
}

fn project() -> TempProject {
    let p = TempProject::with_fixture(
        r#"
        //- src/app.py
        def handle(request):
            return respond(request, 200)

        def health():
            return respond(None, 200)
        "#,
    );
    // The project root is where `.git` is, as for git.
    std::fs::create_dir(p.path(".git")).unwrap();
    p
}

#[test]
fn change_undo_redo_and_history_from_the_command_line() {
    let p = project();
    // Relative to the current directory (-C src).
    let o = run(
        &p.path("src"),
        &[
            "change",
            "app.py",
            "--find",
            "respond(request, 200)",
            "--replace",
            "respond(request, 201)",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("diff --git a/src/app.py b/src/app.py\n"), "{}", o.stdout);
    assert!(
        o.stdout.contains("-    return respond(request, 200)\n+    return respond(request, 201)\n")
    );
    assert!(!o.stdout.contains('\u{1b}'), "no colors when piped");
    assert!(o.stderr.contains("1 file changed, +1 -1"), "{}", o.stderr);
    assert!(p.read("src/app.py").contains("respond(request, 201)"));

    let h = run(p.root(), &["history", "--json"]);
    let list: Value = serde_json::from_str(&h.stdout).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(list[0]["state"], "applied");
    assert_eq!(list[0]["files"][0], "src/app.py");

    let o = run(p.root(), &["history", &id[..5]]);
    assert!(
        o.stdout.contains(&id) && o.stdout.contains("+    return respond(request, 201)"),
        "{}",
        o.stdout
    );

    let o = run(p.root(), &["undo", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let r: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(r["files"][0]["path"], "src/app.py");
    assert!(p.read("src/app.py").contains("respond(request, 200)"));
    let o = run(p.root(), &["redo"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(p.read("src/app.py").contains("respond(request, 201)"));
    let o = run(p.root(), &["history"]);
    assert_eq!(o.stdout.lines().count(), 3, "{}", o.stdout);
    assert!(o.stdout.lines().nth(2).unwrap().contains("applied"), "{}", o.stdout);
}

#[test]
fn conflicts_exit_9_with_candidates_and_change_nothing() {
    let p = project();
    let before = p.read("src/app.py");
    let o = run(
        p.root(),
        &[
            "change",
            "src/app.py",
            "--find",
            "respond(None, 200)\n",
            "--replace",
            "x",
            "--expected-hash",
            &"0".repeat(64),
        ],
    );
    assert_eq!(o.code, 9, "{}", o.stderr);
    assert!(o.stderr.contains("error[HASH_MISMATCH]"), "{}", o.stderr);

    let o = run(
        p.root(),
        &["change", "src/app.py", "--find", "return respond(request, 500)", "--replace", "x"],
    );
    assert_eq!(o.code, 9);
    assert!(o.stderr.contains("error[NO_MATCH]"), "{}", o.stderr);
    assert!(o.stderr.contains("closest at lines 2-2"), "{}", o.stderr);
    assert!(o.stderr.contains("|     return respond(request, 200)"), "{}", o.stderr);

    let o = run(
        p.root(),
        &["change", "src/app.py", "--find", "respond(", "--replace", "reply(", "--json"],
    );
    assert_eq!(o.code, 9);
    let err: Value = serde_json::from_str(o.stderr.trim()).unwrap();
    assert_eq!(err["error"]["code"], "AMBIGUOUS_MATCH");
    assert_eq!(err["error"]["details"]["candidates"].as_array().unwrap().len(), 2);

    let o = run(p.root(), &["change", "../outside.txt", "--find", "a", "--replace", "b"]);
    assert_eq!(o.code, 4, "{}", o.stderr);
    assert!(o.stderr.contains("PATH_OUTSIDE_ROOT"));
    let o = run(p.root(), &["undo"]);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("INVALID_STATE") && o.stderr.contains("nothing to undo"),
        "{}",
        o.stderr
    );
    let o = run(p.root(), &["undo", "ffffffff"]);
    assert_eq!(o.code, 3);
    assert_eq!(p.read("src/app.py"), before);

    // --replace-all replaces both; the dry run shows it and writes nothing.
    let o = run(
        p.root(),
        &[
            "change",
            "src/app.py",
            "--find",
            "respond(",
            "--replace",
            "reply(",
            "--all",
            "--dry-run",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout.matches("+    return reply(").count(), 2);
    assert!(o.stderr.contains("dry run"));
    assert_eq!(p.read("src/app.py"), before);
}

#[test]
fn json_request_on_stdin_and_the_dry_run_patch_applies_with_git() {
    let p = project();
    let req = r#"{"description": "split module", "edits": [
        {"op": "create", "path": "src/health.py", "content": "def health():\n    return 200\n"},
        {"op": "replace", "path": "src/app.py", "targetString": "def health():\n    return respond(None, 200)\n", "replacementString": "from health import health\n"},
        {"op": "replaceSymbol", "path": "src/app.py", "qualifiedName": "handle", "part": "body", "replacementString": "return respond(request, 204)"}
    ]}"#;
    let o = run_stdin(p.root(), &["change", "--edits", "-", "--dry-run"], req);
    assert_eq!(o.code, 0, "{}", o.stderr);
    std::fs::write(p.path("patch.diff"), &o.stdout).unwrap();
    #[allow(clippy::disallowed_methods)] // git is the reference for the patch format
    let git =
        Command::new("git").args(["apply", "patch.diff"]).current_dir(p.root()).output().unwrap();
    assert!(git.status.success(), "{}\n{}", String::from_utf8_lossy(&git.stderr), o.stdout);
    let by_git = p.read("src/app.py");
    // Undo git's work, then let ironbees do the same.
    std::fs::remove_file(p.path("src/health.py")).unwrap();
    std::fs::write(p.path("src/app.py"), project().read("src/app.py")).unwrap();
    let o = run_stdin(p.root(), &["change", "--edits", "-"], req);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(p.read("src/app.py"), by_git);
    assert_eq!(
        p.read("src/app.py"),
        "def handle(request):\n    return respond(request, 204)\n\nfrom health import health\n"
    );
    let h = run(p.root(), &["history", "--json"]);
    let list: Value = serde_json::from_str(&h.stdout).unwrap();
    assert_eq!(list[0]["description"], "split module");

    let o = run_stdin(p.root(), &["change", "--edits", "-"], "{not json");
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("INVALID_ARGUMENT"), "{}", o.stderr);
}

/// A real `ironbees change` of many files, SIGKILLed at spread-out moments: after
/// the next command (which recovers), every file is old or every file is new.
#[test]
#[allow(clippy::print_stderr)] // where the kills landed is worth seeing in the log
fn killed_change_leaves_all_old_or_all_new() {
    let p = TempProject::new();
    const N: usize = 60;
    let old = |i: usize| format!("file {i}\n{}\n", "line of text\n".repeat(2000));
    for i in 0..N {
        p.write(&format!("f/{i:03}.txt"), old(i));
    }
    let edits: Vec<Value> = (0..N)
        .map(|i| serde_json::json!({"op": "replace", "path": format!("f/{i:03}.txt"),
                                   "targetString": format!("file {i}\n"), "replacementString": format!("FILE {i}\n")}))
        .collect();
    let req = serde_json::json!({ "edits": edits }).to_string();
    std::fs::write(p.path("req.json"), &req).unwrap();
    let read_all = || (0..N).map(|i| p.read(&format!("f/{i:03}.txt"))).collect::<Vec<_>>();
    let olds: Vec<String> = (0..N).map(old).collect();
    let news: Vec<String> = olds
        .iter()
        .enumerate()
        .map(|(i, o)| o.replacen(&format!("file {i}\n"), &format!("FILE {i}\n"), 1))
        .collect();

    // How long an uninterrupted run takes (then undo it).
    let t = Instant::now();
    let o = run(p.root(), &["change", "--edits", "req.json"]);
    let full = t.elapsed();
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(read_all(), news);
    assert_eq!(run(p.root(), &["undo"]).code, 0);
    assert_eq!(read_all(), olds);

    let rounds = 12;
    // (old, new, rolled back by recovery)
    let mut outcomes = (0, 0, 0);
    for r in 0..rounds {
        let mut child = ironbees(p.root())
            .args(["change", "--edits", "req.json"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Spread from the start to past the end of an uninterrupted run.
        std::thread::sleep(full.mul_f64(1.3 * r as f64 / rounds as f64));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        // Any next command recovers first.
        let h = run(p.root(), &["history", "--json"]);
        assert_eq!(h.code, 0, "{}", h.stderr);
        if h.stderr.contains("was rolled back") {
            outcomes.2 += 1;
        }
        let now = read_all();
        let list: Value = serde_json::from_str(&h.stdout).unwrap();
        let applied =
            list.as_array().unwrap().iter().any(|t| t["kind"] == "edit" && t["state"] == "applied");
        if applied {
            assert!(now == news, "round {r}: history says applied, files are not all new");
            outcomes.1 += 1;
            assert_eq!(run(p.root(), &["undo"]).code, 0);
        } else {
            assert!(now == olds, "round {r}: not applied, files are not all old");
            outcomes.0 += 1;
        }
        assert_eq!(std::fs::read_dir(p.path(".ironbees/edits/journal")).unwrap().count(), 0);
    }
    // The spread covers both ends (killed before the commit and after it).
    assert!(outcomes.0 > 0 && outcomes.1 + outcomes.0 == rounds, "{outcomes:?}");
    eprintln!(
        "kills: {} before the commit ({} of them mid-write, rolled back), {} after",
        outcomes.0, outcomes.2, outcomes.1
    );
}

/// Issue 24: only `history`, `change`, `undo` and MCP start-up recovered a killed
/// edit; `status`, `index` and `search` saw (and `index` indexed) its half-applied
/// files. Each of them now finishes or rolls back first.
#[test]
fn a_killed_change_is_recovered_by_status_index_search_and_symbols() {
    let p = TempProject::new();
    const N: usize = 120;
    let old =
        |i: usize| format!("def old_{i}():\n    return {i}\n{}", "# padding line\n".repeat(400));
    for i in 0..N {
        p.write(&format!("m/mod_{i:03}.py"), old(i));
    }
    let edits: Vec<Value> = (0..N)
        .map(|i| serde_json::json!({"op": "replace", "path": format!("m/mod_{i:03}.py"),
                                   "targetString": format!("def old_{i}():"), "replacementString": format!("def new_{i}():")}))
        .collect();
    std::fs::write(p.path("req.json"), serde_json::json!({ "edits": edits }).to_string()).unwrap();
    assert_eq!(run(p.root(), &["index"]).code, 0);
    let read_all = || (0..N).map(|i| p.read(&format!("m/mod_{i:03}.py"))).collect::<Vec<_>>();
    let olds: Vec<String> = (0..N).map(old).collect();
    let journal = p.path(".ironbees/edits/journal");
    let mut half_applied = 0;
    for (round, next) in ["status", "index", "search", "symbols"].iter().cycle().take(8).enumerate()
    {
        let mut child = ironbees(p.root())
            .args(["change", "--edits", "req.json"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill as soon as the first file is replaced: the rest are still old.
        let t = Instant::now();
        while !p.read("m/mod_000.py").starts_with("def new_")
            && t.elapsed() < std::time::Duration::from_secs(30)
            && child.try_wait().unwrap().is_none()
        {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        let _ = child.kill();
        let _ = child.wait();
        let seen = read_all();
        let mixed = seen.iter().any(|f| f.starts_with("def new_"))
            && seen.iter().any(|f| f.starts_with("def old_"));
        let args: &[&str] = match *next {
            "search" => &["search", "old_7", "--json"],
            "symbols" => &["symbols", "--name", "new_*", "--json"],
            other => &[other, "--json"],
        };
        let o = run(p.root(), args);
        assert_eq!(o.code, 0, "round {round} {next}: {}", o.stderr);
        assert_eq!(
            std::fs::read_dir(&journal).unwrap().count(),
            0,
            "round {round}: `{next}` left the interrupted journal in place"
        );
        let now = read_all();
        let all_new = now.iter().all(|f| f.starts_with("def new_"));
        assert!(now == olds || all_new, "round {round}: `{next}` saw half a change");
        if mixed {
            // Never committed (the commit comes after the last file): rolled back.
            half_applied += 1;
            assert_eq!(now, olds, "round {round}");
            assert!(o.stderr.contains("was rolled back"), "round {round} {next}: {}", o.stderr);
            if *next == "symbols" {
                assert_eq!(o.stdout.trim(), "[]", "a rolled-back edit's names were indexed");
            }
        }
        if all_new {
            assert_eq!(run(p.root(), &["undo"]).code, 0);
        }
    }
    assert!(half_applied > 0, "no round was killed with the files half changed");
}

/// Issue 24: `read FILE --diff HEAD` was in the README but answered
/// `TOOL_EXECUTION_FAILED ... this build does not have yet`.
#[test]
fn read_diff_against_head_shows_what_changed_since_the_last_commit() {
    let p = project();
    let git = |args: &[&str]| {
        #[allow(clippy::disallowed_methods)] // test setup: a repository with one commit
        let o = Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(p.root())
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    // Not a repository yet: a clear refusal, not a stub.
    let o = run(p.root(), &["read", "src/app.py", "--diff", "HEAD"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("not in a git repository"), "{}", o.stderr);
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "one"]);
    let o = run(p.root(), &["change", "src/app.py", "--find", "200", "--replace", "201", "--all"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    p.write("src/new.py", "x = 1\n");
    let o = run(p.root(), &["read", "src/app.py", "--diff", "HEAD", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    let diff = v["content"].as_str().unwrap();
    assert!(diff.contains("--- a/src/app.py\n+++ b/src/app.py\n"), "{diff}");
    assert!(
        diff.contains("-    return respond(request, 200)\n+    return respond(request, 201)"),
        "{diff}"
    );
    // `git apply -R` takes it back to HEAD: the diff is exact.
    std::fs::write(p.path("d.patch"), diff).unwrap();
    git(&["apply", "-R", "d.patch"]);
    assert!(p.read("src/app.py").contains("respond(request, 200)"));
    // A file HEAD does not have diffs against nothing.
    let o = run(p.root(), &["read", "src/new.py", "--diff", "HEAD", "--json"]);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert!(v["content"].as_str().unwrap().contains("--- /dev/null\n+++ b/src/new.py"), "{v}");
    assert!(v.get("unchanged").is_none(), "only an unchanged file says so: {v}");

    // Issue 32.9: a file as it is at HEAD has no diff (it printed a bare
    // `diff --git` header), says so, and --json has an empty diff and the flag.
    let o = run(p.root(), &["read", "src/app.py", "--diff"]);
    assert_eq!((o.code, o.stdout.as_str()), (0, ""), "{}", o.stdout);
    assert!(o.stderr.contains("src/app.py is unchanged since HEAD"), "{}", o.stderr);
    let o = run(p.root(), &["read", "src/app.py", "--diff", "HEAD", "--json"]);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!((&v["content"], &v["unchanged"]), (&Value::from(""), &Value::from(true)), "{v}");
    let summary = v["guidance"]["contextSummary"].as_str().unwrap();
    assert!(summary.contains("unchanged since HEAD"), "{summary}");
    // Neither on disk nor at HEAD: not found, not an empty diff.
    let o = run(p.root(), &["read", "src/gone.py", "--diff"]);
    assert_eq!(o.code, 3, "{}", o.stderr);
    assert!(o.stderr.contains("src/gone.py: no such file, on disk or at HEAD"), "{}", o.stderr);
}

/// Issue 32.8: after a change the post-edit check rolled back, and after an undo
/// or a redo, `status` says the index is up to date (it said "modified ... run
/// `ironbees index`", and `index` then found nothing to parse).
#[test]
fn status_is_up_to_date_after_a_rollback_an_undo_and_a_redo() {
    let p = project();
    assert_eq!(run(p.root(), &["index"]).code, 0);
    let steps: &[(&[&str], i32)] = &[
        // The post-edit check fails: written, then restored byte for byte.
        (&["change", "src/app.py", "--find", "respond(request, 200)", "--replace", "x("], 1),
        (&["change", "src/app.py", "--find", "respond(request, 200)", "--replace", "ok()"], 0),
        (&["undo"], 0),
        (&["redo"], 0),
    ];
    for (args, code) in steps {
        let o = run(p.root(), args);
        assert_eq!(o.code, *code, "{args:?}: {}", o.stderr);
        let st = run(p.root(), &["status", "--json"]);
        let stale: Value = serde_json::from_str(&st.stdout).unwrap();
        assert_eq!(
            stale["stale"],
            serde_json::json!({"modified": 0, "added": 0, "deleted": 0, "examples": []}),
            "after {args:?}"
        );
    }
}

/// Issue 32.9: a missing file is NOT_FOUND (exit 3) whether it is the request
/// file itself (it was INTERNAL) or the file an edit names (the engine's code,
/// the same from flags and from JSON).
#[test]
fn a_missing_file_is_not_found_wherever_it_is_named() {
    let p = project();
    p.write(
        "missing-target.json",
        r#"{"edits":[{"path":"src/nope.py","targetString":"a","replacementString":"b"}]}"#,
    );
    let cases: &[(&[&str], &str)] = &[
        (
            &["change", "--edits", "nope.json"],
            "error[NOT_FOUND]: reading the request from nope.json",
        ),
        (
            &["change", "--edits", "missing-target.json"],
            "error[NOT_FOUND]: src/nope.py: no such file",
        ),
        (
            &["change", "src/nope.py", "--find", "a", "--replace", "b"],
            "error[NOT_FOUND]: src/nope.py: no such file",
        ),
        (
            &["change", "src/app.py", "--find-file", "nope.txt", "--replace", "b"],
            "error[NOT_FOUND]: reading nope.txt",
        ),
    ];
    for (args, stderr) in cases {
        let o = run(p.root(), args);
        assert_eq!(o.code, 3, "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(stderr), "{args:?}: {}", o.stderr);
    }
    let o = run(p.root(), &["change", "--edits", "nope.json", "--json"]);
    let v: Value = serde_json::from_str(&o.stderr).unwrap();
    assert_eq!(v["error"]["code"], "NOT_FOUND", "{}", o.stderr);
}
