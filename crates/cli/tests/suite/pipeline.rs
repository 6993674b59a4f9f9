//! The commit pipeline (seed 003) end to end: a bare "remote", the user's clone,
//! real git, the real binary, project commands in the sandbox.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

use super::Out;

const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "t"),
    ("GIT_AUTHOR_EMAIL", "t@example.com"),
    ("GIT_COMMITTER_NAME", "t"),
    ("GIT_COMMITTER_EMAIL", "t@example.com"),
];

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .current_dir(dir)
        .args(["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"])
        .args(args)
        .envs(IDENTITY)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

/// A bare remote with one commit on `main`, and the user's clone `proj`.
struct Fixture {
    _dir: tempfile::TempDir,
    top: PathBuf,
    remote: PathBuf,
    proj: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let remote = top.join("remote.git");
        git(&top, &["init", "-q", "--bare", "-b", "main", remote.to_str().unwrap()]);
        git(&top, &["clone", "-q", remote.to_str().unwrap(), "proj"]);
        let proj = top.join("proj");
        std::fs::write(proj.join("app.sh"), "echo app ok\n").unwrap();
        std::fs::write(proj.join("test.sh"), "echo tests ok\n").unwrap();
        git(&proj, &["add", "."]);
        git(&proj, &["commit", "-qm", "init"]);
        git(&proj, &["push", "-q", "origin", "main"]);
        Fixture { _dir: dir, top, remote, proj }
    }

    /// The `pipeline:` section (and anything else) as the project's configuration.
    fn config(&self, yaml: &str) {
        std::fs::create_dir_all(self.proj.join(".ironbees")).unwrap();
        std::fs::write(self.proj.join(".ironbees/.gitignore"), "*\n").unwrap();
        std::fs::write(self.proj.join(".ironbees/config.yaml"), yaml).unwrap();
    }

    fn hub(&self) -> PathBuf {
        self.top.join(".commitly_hub_proj")
    }

    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("ironbees").unwrap();
        c.arg("-C").arg(&self.proj).env("XDG_CONFIG_HOME", self.top.join(".no-user-config"));
        c.envs(IDENTITY).env_remove("IRONBEES_PIPELINE").env("NO_COLOR", "1");
        super::without_model_env(&mut c);
        c.stdin(Stdio::null());
        c
    }

    fn ib(&self, args: &[&str]) -> Out {
        Out::from(self.cmd().args(args).output().unwrap())
    }

    /// A change to `file` committed with `ironbees commit` and `args`.
    fn commit(&self, file: &str, text: &str, args: &[&str]) -> Out {
        std::fs::write(self.proj.join(file), text).unwrap();
        git(&self.proj, &["add", file]);
        let mut all = vec!["commit"];
        all.extend(args);
        self.ib(&all)
    }

    fn remote_head(&self) -> String {
        git(&self.remote, &["rev-parse", "main"])
    }

    fn hub_branches(&self) -> Vec<String> {
        git(&self.hub(), &["branch", "--format=%(refname:short)"])
            .lines()
            .filter(|b| b.starts_with("commitly/"))
            .map(str::to_owned)
            .collect()
    }

    fn pipelines(&self) -> Vec<Value> {
        let o = self.ib(&["pipeline", "list", "--json"]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        o.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    fn show(&self, id: &str) -> Value {
        let o = self.ib(&["pipeline", "show", id, "--json"]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        serde_json::from_str(&o.stdout).unwrap()
    }

    fn read_json(&self, rel: &str) -> Value {
        let path = self.proj.join(rel);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap()
    }
}

const CONFIG: &str =
    "pipeline:\n  execution:\n    command: sh app.sh\n    timeout: 60\n  testCommand: sh test.sh\n";

fn only_id(fx: &Fixture) -> String {
    let runs = fx.pipelines();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0]["id"].as_str().unwrap().to_owned()
}

#[test]
fn pipeline_init_then_commit_runs_every_stage_and_pushes() {
    let fx = Fixture::new();
    let o = fx.ib(&["pipeline", "init", "--exec", "sh app.sh", "--test", "sh test.sh", "--json"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["created"], true);
    assert_eq!(v["hub"], fx.hub().display().to_string());
    assert!(fx.hub().join(".git").is_dir());
    // A second init: it exists, and that is fine.
    let o = fx.ib(&["pipeline", "init"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("exists"), "{}", o.stdout);

    let o = fx.commit("app.sh", "echo app v2\n", &["--yes", "-m", "[feature] app v2"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    for agent in ["CloneAgent", "CodeAgent", "TestAgent", "SyncAgent"] {
        assert!(o.stderr.contains(&format!("[{agent}] ✓")), "{agent}: {}", o.stderr);
    }
    let head = git(&fx.proj, &["rev-parse", "HEAD"]);
    assert_eq!(fx.remote_head(), head, "the remote received the commit");
    assert_eq!(fx.hub_branches(), Vec::<String>::new(), "commitly/* branches deleted");
    assert_eq!(git(&fx.proj, &["status", "--porcelain", "--untracked-files=no"]), "");

    let id = only_id(&fx);
    let clone = fx.read_json(".ironbees/cache/clone_agent.json");
    assert_eq!(clone["appliedCommits"], serde_json::json!([head]));
    assert_eq!(
        clone["changedFiles"],
        serde_json::json!([fx.proj.join("app.sh").display().to_string()])
    );
    let code = fx.read_json(&format!(".ironbees/cache/{id}/code_agent.json"));
    assert_eq!(code["status"], "success");
    assert_eq!(code["executionResult"]["exitCode"], 0);
    assert!(code["executionResult"]["outputTail"].as_str().unwrap().contains("app v2"));
    let test = fx.read_json(".ironbees/cache/test_agent.json");
    assert_eq!(test["sql"]["status"], "skipped");
    assert_eq!(test["sql"]["reason"], "no SQL in the changed files");
    assert_eq!(fx.read_json(".ironbees/cache/sync_agent.json")["pushed"], true);
    assert_eq!(fx.read_json(".ironbees/cache/refactoring_agent.json")["status"], "skipped");
    assert!(fx.proj.join(format!(".ironbees/logs/git/{id}.log")).is_file());
    assert!(fx.hub().join(format!("logs/code_agent/{id}.log")).is_file(), "hub logs");
    assert_eq!(git(&fx.hub(), &["status", "--porcelain"]), "", "hub logs are not in the hub's git");

    let shown = fx.show(&id);
    assert_eq!(shown["run"]["kind"], "pipeline");
    assert_eq!(shown["run"]["status"]["type"], "succeeded");
    assert_eq!(shown["state"]["results"]["sync"]["pushedSha"], head.as_str());
    let text = fx.ib(&["pipeline", "show", &id]);
    assert!(
        text.stdout.contains("succeeded") && text.stdout.contains("pushedSha"),
        "{}",
        text.stdout
    );
    let status = fx.ib(&["pipeline", "status"]);
    assert!(status.stdout.contains(&id), "{}", status.stdout);
    // Pipeline runs share the store with agent runs without breaking their list.
    let runs = fx.ib(&["runs", "list", "--json"]);
    assert_eq!(runs.code, 0, "{}", runs.stderr);
    assert_eq!(serde_json::from_str::<Value>(&runs.stdout).unwrap(), serde_json::json!([]));
}

/// A changed file whose string literals hold characters of more than one byte
/// next to escapes (pylint's `"wait…"`): the test stage's SQL scan reads it
/// (it panicked there, and the panic left the hub mid-stage).
#[test]
fn pipeline_reads_changed_files_with_multibyte_literals() {
    let fx = Fixture::new();
    fx.config(CONFIG);
    let o = fx.commit(
        "messages.py",
        "WAIT = \"wait…\"\nESCAPED = \"\\…\"\nQ = \"SELECT id FROM users WHERE name = 'é'\"\n",
        &["--yes", "-m", "messages"],
    );
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(fx.remote_head(), git(&fx.proj, &["rev-parse", "HEAD"]));
    let test = fx.read_json(".ironbees/cache/test_agent.json");
    assert!(test["sql"].to_string().contains("SELECT id FROM users"), "{test}");
}

#[test]
fn pipeline_init_refuses_a_dirty_tree_and_a_detached_head() {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("app.sh"), "echo dirty\n").unwrap();
    let o = fx.ib(&["pipeline", "init"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("DIRTY_WORKING_TREE"), "{}", o.stderr);
    assert!(!fx.hub().exists());
    git(&fx.proj, &["checkout", "-q", "app.sh"]);
    git(&fx.proj, &["checkout", "-q", "--detach"]);
    let o = fx.ib(&["pipeline", "init"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("DETACHED_HEAD"), "{}", o.stderr);
}

#[test]
fn pipeline_failure_at_code_rolls_back_and_leaves_the_tree_and_remote_alone() {
    let fx = Fixture::new();
    fx.config(CONFIG);
    let before = fx.remote_head();
    let o = fx.commit("app.sh", "echo broken >&2\nexit 1\n", &["--yes", "-m", "break the app"]);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("error[STAGE_FAILED]"), "{}", o.stderr);
    assert!(o.stderr.contains("broken"), "the command's output is shown: {}", o.stderr);
    assert_eq!(fx.remote_head(), before, "nothing pushed");
    assert_eq!(
        std::fs::read_to_string(fx.proj.join("app.sh")).unwrap(),
        "echo broken >&2\nexit 1\n"
    );
    assert_eq!(git(&fx.proj, &["status", "--porcelain", "--untracked-files=no"]), "");

    let id = only_id(&fx);
    // Seed §7.1: the last good branch kept and checked out, later ones deleted.
    assert_eq!(fx.hub_branches(), vec![format!("commitly/clone/{id}")]);
    assert_eq!(git(&fx.hub(), &["branch", "--show-current"]), format!("commitly/clone/{id}"));
    let errors: Vec<PathBuf> = std::fs::read_dir(fx.proj.join(".ironbees/logs/code_agent"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("error_"))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&errors[0]).unwrap()).unwrap();
    assert_eq!(log["pipeline_id"], id.as_str());
    assert_eq!(log["failed_agent"], "code_agent");
    assert_eq!(log["error_type"], "STAGE_FAILED");
    assert_eq!(log["hub_branch"], format!("commitly/code/{id}"));
    assert_eq!(log["rollback_branch"], format!("commitly/clone/{id}"));
    let hub_log = fx.hub().join("logs/code_agent").join(errors[0].file_name().unwrap());
    assert!(hub_log.is_file(), "the hub's copy");

    let shown = fx.show(&id);
    assert_eq!(shown["run"]["status"]["type"], "failed");
    assert_eq!(shown["run"]["status"]["code"], "STAGE_FAILED");
    assert_eq!(shown["state"]["stageStatus"]["code"], "failed");
    assert_eq!(shown["state"]["stageStatus"]["test"], "pending");
}

/// `logging.cleanupHubOnFailure` (seed §7.1 step 5): after the rollback the hub
/// is removed; the local error log stays, and the next commit clones it again.
#[test]
fn pipeline_failure_with_cleanup_hub_on_failure_removes_the_hub_and_keeps_the_local_log() {
    let fx = Fixture::new();
    fx.config(&format!("{CONFIG}  logging:\n    cleanupHubOnFailure: true\n"));
    let o = fx.commit("app.sh", "exit 3\n", &["--yes", "-m", "break the app"]);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(!fx.hub().exists(), "the hub is removed after a failure");
    let errors = std::fs::read_dir(fx.proj.join(".ironbees/logs/code_agent")).unwrap().count();
    assert!(errors >= 1, "the local error log stays");
    let o = fx.commit("app.sh", "echo fixed\n", &["--yes", "-m", "fix the app"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(fx.remote_head(), git(&fx.proj, &["rev-parse", "HEAD"]));
}

/// Seed §10.2/§12.1: the project's git-ignored `.env` gives the configuration
/// its `${VAR}`s and is copied into the hub, readable by its owner only, for
/// the commands run there; no stage commits it and the push does not carry it.
#[test]
fn pipeline_copies_dotenv_into_the_hub_privately_and_never_pushes_it() {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join(".gitignore"), ".env\n").unwrap();
    git(&fx.proj, &["add", ".gitignore"]);
    git(&fx.proj, &["commit", "-qm", "ignore .env"]);
    git(&fx.proj, &["push", "-q", "origin", "main"]);
    std::fs::write(fx.proj.join(".env"), "GREETING=hello\nTEST_CMD=sh test.sh\n").unwrap();
    fx.config(
        "pipeline:\n  execution:\n    command: grep -q '^GREETING=hello' .env && sh app.sh\n  \
         testCommand: ${TEST_CMD}\n",
    );
    let o = fx.commit("app.sh", "echo app v2\n", &["--yes", "-m", "app v2"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let id = only_id(&fx);
    let test = fx.read_json(&format!(".ironbees/cache/{id}/test_agent.json"));
    assert!(test.to_string().contains("tests ok"), "the test command came from .env: {test}");
    let copy = fx.hub().join(".env");
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "GREETING=hello\nTEST_CMD=sh test.sh\n");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777, 0o600);
    let pushed = git(&fx.remote, &["ls-tree", "-r", "--name-only", "main"]);
    assert!(!pushed.lines().any(|f| f == ".env"), "{pushed}");
    assert_eq!(git(&fx.hub(), &["status", "--porcelain"]), "", "excluded from the hub's git");
    // Gone from the project, gone from the hub.
    std::fs::remove_file(fx.proj.join(".env")).unwrap();
    fx.config("pipeline:\n  execution:\n    command: sh app.sh\n  testCommand: sh test.sh\n");
    let o = fx.commit("app.sh", "echo app v3\n", &["--yes", "-m", "app v3"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(!copy.exists());
}

/// Seed §7.1 at the other stages: a commit that does not apply on the remote's
/// branch fails CLONE (nothing to go back to: no branch kept), failing tests
/// fail TEST (back to the code branch); neither pushes or touches the tree.
#[test]
fn pipeline_failures_at_clone_and_test_roll_back_to_the_last_good_branch() {
    let fx = Fixture::new();
    fx.config(CONFIG);
    // Someone else pushed another app.sh meanwhile.
    let other = fx.top.join("other");
    git(&fx.top, &["clone", "-q", fx.remote.to_str().unwrap(), "other"]);
    std::fs::write(other.join("app.sh"), "echo theirs\n").unwrap();
    git(&other, &["commit", "-qam", "theirs"]);
    git(&other, &["push", "-q", "origin", "main"]);
    let theirs = fx.remote_head();
    let o = fx.commit("app.sh", "echo ours\n", &["--yes", "-m", "ours"]);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("does not apply"), "{}", o.stderr);
    let id = only_id(&fx);
    let shown = fx.show(&id);
    assert_eq!(shown["state"]["stageStatus"]["clone"], "failed", "{shown}");
    assert_eq!(shown["state"]["error"]["failedStage"], "clone");
    assert_eq!(fx.hub_branches(), Vec::<String>::new(), "no stage succeeded: nothing kept");
    assert_eq!(fx.remote_head(), theirs);
    assert_eq!(std::fs::read_to_string(fx.proj.join("app.sh")).unwrap(), "echo ours\n");

    // The user pulls; now the tests fail.
    git(&fx.proj, &["pull", "-q", "--no-rebase", "-X", "theirs", "origin", "main"]);
    let o = fx.commit(
        "test.sh",
        "echo 'test_total FAILED' >&2\nexit 1\n",
        &["--yes", "-m", "break the tests"],
    );
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    let runs = fx.pipelines();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let id = runs[0]["id"].as_str().unwrap().to_owned(); // the newest first
    let shown = fx.show(&id);
    assert_eq!(shown["state"]["stageStatus"]["test"], "failed", "{shown}");
    assert_eq!(shown["state"]["stageStatus"]["code"], "success");
    assert_eq!(fx.hub_branches(), vec![format!("commitly/code/{id}")], "back at the code branch");
    assert_eq!(git(&fx.hub(), &["branch", "--show-current"]), format!("commitly/code/{id}"));
    assert_eq!(fx.remote_head(), theirs, "nothing pushed");
}

#[test]
fn pipeline_waits_at_approvals_and_a_rejection_rolls_back() {
    let fx = Fixture::new();
    fx.config(CONFIG);
    let before = fx.remote_head();
    let o = fx.commit("app.sh", "echo v2\n", &["-m", "v2"]);
    assert_eq!(o.code, 10, "waits for a human: {}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("waits at APPROVE_CODE"), "{}", o.stdout);
    let id = only_id(&fx);
    assert!(o.stderr.contains(&format!("resume {id} --approve")), "{}", o.stderr);

    let o = fx.ib(&["pipeline", "resume", &id, "--approve"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    assert!(o.stdout.contains("waits at APPROVE_TEST"), "{}", o.stdout);
    let o = fx.ib(&["pipeline", "resume", &id, "--reject"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stderr.contains("APPROVAL_REJECTED"), "{}", o.stderr);
    assert_eq!(fx.remote_head(), before);
    assert_eq!(fx.hub_branches(), vec![format!("commitly/test/{id}")], "the last good branch kept");
    let shown = fx.show(&id);
    assert_eq!(shown["state"]["results"]["code"]["userApproved"], true);
    assert_eq!(shown["state"]["results"]["test"]["userApproved"], false);
    // A finished (failed) run is not resumed into another answer.
    let o = fx.ib(&["pipeline", "resume", &id, "--approve"]);
    assert_ne!(o.code, 0);

    // A "no" after refactoring: back to the last good branch, nothing pushed.
    let o = fx.commit("app.sh", "echo v2b\n", &["-m", "v2b"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    let second = fx.pipelines()[0]["id"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        let o = fx.ib(&["pipeline", "resume", &second, "--approve"]);
        assert_eq!(o.code, 10, "{}", o.stderr);
    }
    assert_eq!(fx.show(&second)["run"]["status"]["node"], "APPROVE_REFACTOR");
    let o = fx.ib(&["pipeline", "resume", &second, "--reject"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let shown = fx.show(&second);
    assert_eq!(shown["state"]["error"]["failedStage"], "refactor", "{shown}");
    assert_eq!(shown["state"]["results"]["refactor"]["userApproved"], false);
    assert_eq!(fx.remote_head(), before);
    // Seed §7.1: branches made after the rejected step go; the refactor stage's
    // own (it ran, skipped without a model) is the last good one, as the test
    // stage's is above.
    assert!(
        fx.hub_branches().contains(&format!("commitly/refactor/{second}")),
        "{:?}",
        fx.hub_branches()
    );

    // A waiting pipeline cancelled leaves no branch behind.
    let o = fx.commit("app.sh", "echo v3\n", &["-m", "v3"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    let newest = fx.pipelines()[0]["id"].as_str().unwrap().to_owned();
    assert!(fx.hub_branches().contains(&format!("commitly/code/{newest}")));
    let o = fx.ib(&["pipeline", "cancel", &newest, "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(serde_json::from_str::<Value>(&o.stdout).unwrap()["status"]["type"], "cancelled");
    assert_eq!(
        fx.hub_branches(),
        vec![format!("commitly/refactor/{second}"), format!("commitly/test/{id}")]
    );
    assert_eq!(fx.remote_head(), before);
}

#[test]
fn pipeline_push_rejected_by_the_remote_fails_sync_with_a_rollback() {
    let fx = Fixture::new();
    fx.config(CONFIG);
    let o = fx.commit("app.sh", "echo mine\n", &["-m", "mine"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    let id = only_id(&fx);
    // Someone pushes meanwhile.
    git(&fx.top, &["clone", "-q", fx.remote.to_str().unwrap(), "other"]);
    let other = fx.top.join("other");
    std::fs::write(other.join("theirs.txt"), "theirs\n").unwrap();
    git(&other, &["add", "."]);
    git(&other, &["commit", "-qm", "theirs"]);
    git(&other, &["push", "-q", "origin", "main"]);
    let theirs = fx.remote_head();

    let o = fx.ib(&["pipeline", "resume", &id, "--yes"]);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("error[PUSH_REJECTED]"), "{}", o.stderr);
    assert!(o.stderr.contains("someone pushed meanwhile"), "{}", o.stderr);
    assert_eq!(fx.remote_head(), theirs, "their commit stays");
    assert_eq!(fx.hub_branches(), vec![format!("commitly/refactor/{id}")]);
    assert_eq!(fx.show(&id)["state"]["error"]["failedStage"], "sync");
}

#[test]
fn pipeline_killed_mid_stage_resumes_without_repeating_side_effects() {
    let fx = Fixture::new();
    fx.config(
        "pipeline:\n  execution:\n    command: sleep 2\n    timeout: 60\n  testCommand: sh test.sh\n",
    );
    std::fs::write(fx.proj.join("app.sh"), "echo v2\n").unwrap();
    git(&fx.proj, &["add", "."]);
    let mut child = fx
        .cmd()
        .args(["commit", "--yes", "-m", "v2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it while the code stage's command runs.
    let logs = fx.proj.join(".ironbees/logs/code_agent");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let started = std::fs::read_dir(&logs)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path());
        if let Some(log) = started
            && std::fs::read_to_string(&log).unwrap_or_default().contains("$ sleep 2")
        {
            break;
        }
        assert!(Instant::now() < deadline, "the code stage never started");
        assert!(child.try_wait().unwrap().is_none(), "the pipeline ended before it was killed");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let id = only_id(&fx);
    assert_eq!(fx.pipelines()[0]["status"]["type"], "running", "left running by the kill");

    let o = fx.ib(&["pipeline", "resume", &id, "--yes"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(fx.remote_head(), git(&fx.proj, &["rev-parse", "HEAD"]));
    assert_eq!(git(&fx.remote, &["rev-list", "--count", "main"]), "2", "exactly one commit pushed");
    let git_log =
        std::fs::read_to_string(fx.proj.join(format!(".ironbees/logs/git/{id}.log"))).unwrap();
    let count = |what: &str| git_log.lines().filter(|l| l.contains(what)).count();
    assert_eq!(
        count("rev-list --reverse --no-merges"),
        1,
        "the clone's apply ran once:\n{git_log}"
    );
    assert_eq!(
        count(&format!("-B commitly/code/{id}")),
        1,
        "the code branch made once:\n{git_log}"
    );
    assert_eq!(count("git push"), 1, "{git_log}");
    assert_eq!(fx.hub_branches(), Vec::<String>::new());
}

/// A local server speaking Slack's Web API: each connection gets the next
/// scripted answer; requests are recorded (request line, headers, body).
struct SlackMock {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl SlackMock {
    fn start(script: Vec<&'static str>) -> SlackMock {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            let mut script = script.into_iter();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    head.push_str(&line);
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                seen.lock().unwrap().push(format!("{head}\r\n{}", String::from_utf8_lossy(&body)));
                let answer = script.next().unwrap_or("500");
                let response = match answer {
                    "429" => "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
                    "500" => "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\nConnection: close\r\n\r\noops!".to_owned(),
                    ok => format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{ok}", ok.len()),
                };
                let _ = stream.write_all(response.as_bytes());
            }
        });
        SlackMock { port, requests }
    }
}

#[test]
fn pipeline_notifies_slack_retrying_429_and_recording_500_and_report_counts_both() {
    let fx = Fixture::new();
    // The channel as `conversations.history` answers: a person's message about
    // the commit's issue, a bot's, and one about something else.
    let history = r#"{"ok":true,"messages":[
        {"type":"message","user":"U1","text":"API timeout이 계속 발생합니다","ts":"1700000000.000100"},
        {"type":"message","bot_id":"B1","text":"API timeout alert","ts":"1700000001.000200"},
        {"type":"message","user":"U2","text":"lunch at noon?","ts":"1700000002.000300"}],
        "has_more":false}"#;
    let ok = r#"{"ok":true,"channel":"C1"}"#;
    let slack = SlackMock::start(vec!["429", ok, history, ok, "500"]);
    fx.config(&format!(
        "{CONFIG}  slack:\n    token: xoxb-test\n    channelId: C1\n    baseUrl: http://127.0.0.1:{}/api\n",
        slack.port
    ));
    let o = fx.commit("app.sh", "echo v2\n", &["--yes", "-m", "[hotfix] API timeout"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let notify = fx.read_json(".ironbees/cache/slack_agent.json");
    assert_eq!(notify["status"], "success", "{notify}");
    assert_eq!(notify["attempts"], 4, "the 429 was retried: {notify}");
    assert_eq!(
        (&notify["sentMessages"], &notify["matchedMessages"], &notify["replies"]),
        (&serde_json::json!(2), &serde_json::json!(1), &serde_json::json!(1)),
        "the summary, and a reply to the one person's message about it: {notify}"
    );
    {
        let requests = slack.requests.lock().unwrap();
        assert_eq!(requests.len(), 4);
        let r = &requests[1];
        assert!(r.starts_with("POST /api/chat.postMessage HTTP/1.1"), "{r}");
        assert!(r.to_ascii_lowercase().contains("authorization: bearer xoxb-test"), "{r}");
        assert!(r.contains(r#""channel":"C1""#) && r.contains("API timeout"), "{r}");
        let read = &requests[2];
        assert!(read.starts_with("GET /api/conversations.history?channel=C1&"), "{read}");
        assert!(read.to_ascii_lowercase().contains("authorization: bearer xoxb-test"), "{read}");
        let reply = &requests[3];
        let head = git(&fx.proj, &["rev-parse", "HEAD"]);
        assert!(reply.contains(r#""thread_ts":"1700000000.000100""#), "{reply}");
        assert!(reply.contains(&head[..12]), "the reply names the pushed commit: {reply}");
    }

    // A 500: recorded, the push stands.
    let o = fx.commit("app.sh", "echo v3\n", &["--yes", "-m", "[feature] v3"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(fx.remote_head(), git(&fx.proj, &["rev-parse", "HEAD"]));
    let notify = fx.read_json(".ironbees/cache/slack_agent.json");
    assert_eq!(notify["status"], "failed");
    assert!(notify["error"].as_str().unwrap().contains("500"), "{notify}");
    assert!(!o.stderr.contains("xoxb-test"), "the token is never shown");

    // The report's numbers are the stored results'.
    let today = Command::new("date").args(["-u", "+%F"]).output().unwrap();
    let today = String::from_utf8_lossy(&today.stdout).trim().to_owned();
    let o = fx.ib(&["report", "--from", &today, "--to", &today, "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let r: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(
        r["commits"],
        serde_json::json!({"total": 2, "succeeded": 2, "failed": 0, "inProgress": 0})
    );
    assert_eq!(r["sql"]["skipped"], 2);
    assert_eq!(r["slack"]["sentMessages"], 2);
    assert_eq!(r["slack"]["matchedMessages"], 1);
    assert_eq!(r["slack"]["replies"], 1);
    assert_eq!(r["slack"]["failedNotifications"], 1);
    assert_eq!(r["issues"][0]["tag"], "hotfix");
    let o = fx.ib(&["pipeline", "report", "--issue", "hotfix-api-timeout"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("- Total: 1") && o.stdout.contains("[hotfix] API timeout"),
        "{}",
        o.stdout
    );
    let reports: Vec<_> = std::fs::read_dir(fx.proj.join(".ironbees/report")).unwrap().collect();
    assert_eq!(reports.len(), 2, "each report written under report/");
}

#[test]
fn pipeline_as_commitly_takes_the_seeds_commands_and_keeps_state_in_dot_commitly() {
    let fx = Fixture::new();
    let bin = fx.top.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("ironbees"), bin.join("commitly"))
        .unwrap();
    let commitly = |args: &[&str]| {
        let mut c = Command::new(bin.join("commitly"));
        c.current_dir(&fx.proj).env("XDG_CONFIG_HOME", fx.top.join(".no-user-config"));
        c.envs(IDENTITY).env_remove("IRONBEES_PIPELINE").stdin(Stdio::null());
        super::without_model_env(&mut c);
        Out::from(c.args(args).output().unwrap())
    };
    let o = commitly(&["init", "--exec", "sh app.sh"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // The seed's layout (§10.1), which commitly reads back.
    let written = std::fs::read_to_string(fx.proj.join(".commitly/config.yaml")).unwrap();
    assert!(written.contains("project_name: \"proj\"\n"), "{written}");
    assert!(!written.contains("pipeline:"), "{written}");
    std::fs::write(
        fx.proj.join(".commitly/config.yaml"),
        written.replace("# test_command: ", "test_command: sh test.sh"),
    )
    .unwrap();
    std::fs::write(fx.proj.join("app.sh"), "echo v2\n").unwrap();
    git(&fx.proj, &["add", "."]);
    let o = commitly(&["git", "commit", "--yes", "-m", "[hotfix] via commitly"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(fx.remote_head(), git(&fx.proj, &["rev-parse", "HEAD"]));
    assert!(fx.proj.join(".commitly/cache/sync_agent.json").is_file());
    assert!(!fx.proj.join(".ironbees/cache").exists(), "nothing under .ironbees/");
    let id = commitly(&["pipeline", "list", "--json"]).stdout;
    let id: Value = serde_json::from_str(id.lines().next().unwrap()).unwrap();
    let id = id["id"].as_str().unwrap();
    let test = serde_json::from_str::<Value>(
        &std::fs::read_to_string(fx.proj.join(format!(".commitly/cache/{id}/test_agent.json")))
            .unwrap(),
    )
    .unwrap();
    assert!(test.to_string().contains("tests ok"), "test_command from the seed's file: {test}");
    let o = commitly(&["report", "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let r: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(r["commits"]["total"], 1);
}

#[test]
fn pipeline_post_commit_hook_starts_it_once_in_the_background() {
    let fx = Fixture::new();
    fx.config(&format!("{CONFIG}  autoApprove: true\n"));
    let o = fx.ib(&["pipeline", "init"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = fx.ib(&["pipeline", "install-hook"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    std::fs::write(fx.proj.join("app.sh"), "echo v2\n").unwrap();
    git(&fx.proj, &["add", "."]);
    let started = Instant::now();
    git(&fx.proj, &["commit", "-qm", "hooked"]);
    assert!(started.elapsed() < Duration::from_secs(5), "the commit is not held up");
    let head = git(&fx.proj, &["rev-parse", "HEAD"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while fx.remote_head() != head {
        assert!(Instant::now() < deadline, "the hook's pipeline never pushed");
        std::thread::sleep(Duration::from_millis(100));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while fx.pipelines()[0]["status"]["type"] != "succeeded" {
        assert!(Instant::now() < deadline, "the hook's pipeline never finished");
        std::thread::sleep(Duration::from_millis(100));
    }
    // `ironbees commit` starts its own pipeline; the hook stays out of it.
    let o = fx.commit("app.sh", "echo v3\n", &["-m", "v3"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(fx.pipelines().len(), 2, "one pipeline per commit");
}

#[test]
fn pipeline_refactor_stage_keeps_a_refactoring_the_tests_pass_and_drops_one_they_fail() {
    use test_support::mock_llm::{MockLlm, Reply};
    let fx = Fixture::new();
    let mock = MockLlm::start();
    std::fs::write(fx.proj.join("test.sh"), "grep -q ok app.sh\n").unwrap();
    git(&fx.proj, &["add", "."]);
    git(&fx.proj, &["commit", "-qm", "tests"]);
    git(&fx.proj, &["push", "-q", "origin", "main"]);
    fx.config(&format!(
        "{CONFIG}  llm:\n    enabled: true\n  refactoring:\n    rules: [\"remove duplicate code\"]\n"
    ));
    let answer = |content: &str, improvement: &str| {
        Reply::text(
            serde_json::json!({
                "files": [{"path": "app.sh", "content": content}],
                "improvements": [improvement],
            })
            .to_string(),
        )
    };
    let with_model = |args: &[&str]| {
        let mut c = fx.cmd();
        c.env("ANTHROPIC_API_KEY", "sk-ant-pipeline-test").env("ANTHROPIC_BASE_URL", mock.url());
        Out::from(c.args(args).output().unwrap())
    };

    mock.push(answer("echo ok v2\n", "removed duplicate code"));
    std::fs::write(fx.proj.join("app.sh"), "echo ok v2\necho ok v2\n").unwrap();
    git(&fx.proj, &["add", "."]);
    let o = with_model(&["commit", "--yes", "-m", "v2"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let user = git(&fx.proj, &["rev-parse", "HEAD"]);
    assert_eq!(
        git(&fx.remote, &["rev-parse", "main~1"]),
        user,
        "the user's commit, then the refactoring"
    );
    assert_eq!(
        git(&fx.remote, &["log", "-1", "--format=%s", "main"]),
        "RefactoringAgent: removed duplicate code"
    );
    assert_eq!(git(&fx.remote, &["show", "main:app.sh"]), "echo ok v2");
    let r = fx.read_json(".ironbees/cache/refactoring_agent.json");
    assert_eq!(r["status"], "success");
    assert_eq!(r["testPassed"], true);
    assert_eq!(
        r["refactoredFiles"],
        serde_json::json!([fx.proj.join("app.sh").display().to_string()])
    );
    let sent = &mock.requests()[0].body;
    assert!(sent.to_string().contains("remove duplicate code"), "the rules reach the model");

    // A refactoring the tests fail with is dropped; the user's commit is pushed.
    git(&fx.proj, &["pull", "-q", "--ff-only"]);
    mock.push(answer("echo bad\n", "simplified"));
    std::fs::write(fx.proj.join("app.sh"), "echo ok v3\n").unwrap();
    git(&fx.proj, &["add", "."]);
    let o = with_model(&["commit", "--yes", "-m", "v3"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(fx.remote_head(), git(&fx.proj, &["rev-parse", "HEAD"]));
    let r = fx.read_json(".ironbees/cache/refactoring_agent.json");
    assert_eq!(r["testPassed"], false);
    assert_eq!(r["refactoredFiles"], serde_json::json!([]));
}

#[test]
fn pipeline_json_streams_events_then_the_outcome_as_json_lines() {
    let fx = Fixture::new();
    fx.config(CONFIG);
    let o = fx.commit("app.sh", "echo v2\n", &["--yes", "--json", "-m", "v2"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<Value> = o.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let stages: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["kind"]["type"] == "stageFinished")
        .map(|l| (l["kind"]["stage"].as_str().unwrap(), l["kind"]["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        stages,
        [
            ("clone", "success"),
            ("code", "success"),
            ("test", "success"),
            ("refactor", "skipped"),
            ("sync", "success"),
            ("notify", "skipped")
        ]
    );
    let outcome = &lines.last().unwrap()["outcome"];
    assert_eq!(outcome["status"]["type"], "succeeded");
    assert_eq!(outcome["state"]["stageStatus"]["sync"], "success");
}

#[test]
fn pipeline_interrupted_by_ctrl_c_ends_cancelled_and_leaves_no_branch() {
    let fx = Fixture::new();
    fx.config("pipeline:\n  execution:\n    command: sleep 30\n    timeout: 60\n");
    std::fs::write(fx.proj.join("app.sh"), "echo v2\n").unwrap();
    git(&fx.proj, &["add", "."]);
    let before = fx.remote_head();
    let child = fx
        .cmd()
        .args(["commit", "--yes", "-m", "v2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let logs = fx.proj.join(".ironbees/logs/code_agent");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_dir(&logs)
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
        .is_some_and(|e| {
            std::fs::read_to_string(e.path()).unwrap_or_default().contains("$ sleep 30")
        })
    {
        assert!(Instant::now() < deadline, "the code stage never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let sigint = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sigint.success());
    let started = Instant::now();
    let o = Out::from(child.wait_with_output().unwrap());
    assert!(started.elapsed() < Duration::from_secs(20), "the command was stopped, not waited for");
    assert_eq!(o.code, 130, "{}\n{}", o.stdout, o.stderr);
    let id = only_id(&fx);
    assert_eq!(fx.pipelines()[0]["status"]["type"], "cancelled");
    assert_eq!(fx.hub_branches(), Vec::<String>::new(), "{id}'s branches deleted");
    assert_eq!(fx.remote_head(), before);
}

/// A commit made while another pipeline holds the hub waits for it; Ctrl-C
/// during that wait ends it at once, cancelled, with no run left behind.
#[test]
fn pipeline_waiting_for_the_hub_is_cancelled_by_ctrl_c() {
    let fx = Fixture::new();
    fx.config(CONFIG);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(fx.proj.join(".ironbees/pipeline.lock"))
        .unwrap();
    lock.lock().unwrap(); // another pipeline in the hub
    std::fs::write(fx.proj.join("app.sh"), "echo v2\n").unwrap();
    git(&fx.proj, &["add", "."]);
    let child = fx
        .cmd()
        .args(["commit", "--yes", "-m", "v2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while git(&fx.proj, &["log", "-1", "--format=%s"]) != "v2" {
        assert!(Instant::now() < deadline, "the commit was never made");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let sigint = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sigint.success());
    let started = Instant::now();
    let o = Out::from(child.wait_with_output().unwrap());
    assert!(started.elapsed() < Duration::from_secs(10), "the wait was given up");
    assert_eq!(o.code, 130, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("CANCELLED"), "{}", o.stderr);
    assert_eq!(fx.pipelines(), Vec::<Value>::new());
    drop(lock);
}

// --- TEST's SQL step, against a real PostgreSQL server -----------------------------

/// `psql -c sql` on the server, its unaligned output.
fn psql(pg: &test_support::postgres::PgServer, sql: &str) -> String {
    let beside = test_support::postgres::pg_bin().unwrap().join("psql");
    let bin = if beside.is_file() { beside } else { PathBuf::from("psql") };
    let o = Command::new(bin)
        .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", &pg.url(), "-c", sql])
        .output()
        .unwrap();
    assert!(o.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

/// 200k users, no index on `email` or `score`, analyzed.
fn seed_users(pg: &test_support::postgres::PgServer) {
    psql(
        pg,
        "CREATE TABLE users (id serial PRIMARY KEY, email text NOT NULL, status text NOT NULL, score int NOT NULL);
         INSERT INTO users (email, status, score)
           SELECT 'user' || g || '@example.com', CASE WHEN g % 10 = 0 THEN 'inactive' ELSE 'active' END, g % 1000
           FROM generate_series(1, 200000) g;
         ANALYZE users;",
    );
}

/// The SQL step's model answers by the query it is asked about (found in the
/// prompt); the refactor stage's call gets "no change".
fn sql_model(
    mock: &test_support::mock_llm::MockLlm,
    answers: Vec<(&'static str, Value)>,
    on_sql_call: impl Fn() + Send + Sync + 'static,
) {
    use test_support::mock_llm::Reply;
    mock.set_responder(move |body| {
        let text = body.to_string();
        if !text.contains("You optimize one PostgreSQL query") {
            return Some(Reply::text(r#"{"files": [], "improvements": []}"#));
        }
        on_sql_call();
        let answer = answers.iter().find(|(needle, _)| text.contains(needle)).map_or_else(
            || serde_json::json!({"kind": "none", "sql": "", "reason": "fine"}),
            |(_, a)| a.clone(),
        );
        Some(Reply::structured(answer))
    });
}

fn sql_config(url: &str, extra: &str) -> String {
    format!("{CONFIG}  llm:\n    enabled: true\n  database:\n    url: {url}\n{extra}")
}

impl Fixture {
    /// `ironbees commit` of `files` with the mock model's environment.
    fn commit_with_model(
        &self,
        mock: &test_support::mock_llm::MockLlm,
        files: &[(&str, &str)],
        args: &[&str],
    ) -> Out {
        for (f, text) in files {
            let path = self.proj.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
            git(&self.proj, &["add", f]);
        }
        let mut c = self.cmd();
        c.env("ANTHROPIC_API_KEY", "sk-ant-pipeline-test").env("ANTHROPIC_BASE_URL", mock.url());
        Out::from(c.arg("commit").args(args).output().unwrap())
    }
}

const SLOW_PY: &str = "def find_user(cur):\n    cur.execute(\n        \"SELECT id, email FROM users WHERE email = 'user4242@example.com'\"\n    )\n    return cur.fetchone()\n";

#[test]
fn pipeline_sql_index_verified_faster_is_a_migration_on_the_test_branch_and_pushed() {
    if !test_support::postgres::available("pipeline_sql_index") {
        return;
    }
    let pg = test_support::postgres::PgServer::start();
    seed_users(&pg);
    let fx = Fixture::new();
    fx.config(&sql_config(&pg.url(), ""));
    let mock = test_support::mock_llm::MockLlm::start();
    let index = serde_json::json!({
        "kind": "index",
        "sql": "CREATE INDEX users_email_idx ON users (email)",
        "reason": "an equality filter on email over 200k rows"
    });
    sql_model(&mock, vec![("user4242@example.com", index)], || {});
    let o = fx.commit_with_model(&mock, &[("app/db.py", SLOW_PY)], &["--yes", "-m", "find users"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let id = only_id(&fx);

    let test = fx.read_json(".ironbees/cache/test_agent.json");
    let sql = &test["sql"];
    assert_eq!(sql["status"], "success", "{sql:#}");
    let q = &sql["queries"][0];
    assert_eq!((q["file"].as_str(), q["line"].as_u64()), (Some("app/db.py"), Some(3)), "{q:#}");
    assert_eq!(q["outcome"], "kept", "{q:#}");
    assert_eq!(q["candidate"]["kind"], "index");
    let before = q["timing"]["medianBeforeMs"].as_f64().unwrap();
    let after = q["timing"]["medianAfterMs"].as_f64().unwrap();
    assert!(after < before * 0.9, "{q:#}");
    assert_eq!(q["timing"]["runs"], 5);
    assert_eq!(q["timing"]["beforeMs"].as_array().unwrap().len(), 5);
    assert!(q["before"]["totalCost"].as_f64().unwrap() > q["after"]["totalCost"].as_f64().unwrap());
    assert_eq!(q["before"]["indexes"], serde_json::json!([]));
    assert_eq!(q["after"]["indexes"], serde_json::json!(["users_email_idx"]), "{q:#}");
    assert!(q["before"]["executionMs"].as_f64().is_some(), "EXPLAIN ANALYZE's times");
    // hypopg is optional at run time; where it is installed (scripts/test does) it is used.
    let hypopg = std::fs::read_dir("/usr/share/postgresql")
        .is_ok_and(|d| d.flatten().any(|v| v.path().join("extension/hypopg.control").is_file()));
    assert_eq!(sql["hypopg"], hypopg, "{sql:#}");
    if hypopg {
        assert_eq!(q["hypothetical"]["used"], true, "{q:#}");
    }
    let migration = format!("migrations/commitly_{id}_1.sql");
    assert_eq!(q["migration"], migration.as_str());
    assert_eq!(test["optimizedQueries"], serde_json::json!(["app/db.py:3"]));
    let shown = fx.show(&id);
    assert_eq!(shown["state"]["hasQuery"], true);
    assert_eq!(shown["state"]["queryFileList"][0]["lineStart"], 3);

    // The migration is the test branch's commit, pushed by sync after the user's.
    let user = git(&fx.proj, &["rev-parse", "HEAD"]);
    assert_eq!(git(&fx.remote, &["rev-parse", "main~1"]), user);
    assert!(
        git(&fx.remote, &["log", "-1", "--format=%s", "main"])
            .starts_with("TestAgent: SQL optimization: 0 rewrite(s), 1 index(es)")
    );
    let file = git(&fx.remote, &["show", &format!("main:{migration}")]);
    assert!(file.contains("CREATE INDEX users_email_idx ON users (email);"), "{file}");
    assert_eq!(git(&fx.remote, &["show", "main:app/db.py"]), SLOW_PY.trim_end());

    // Nothing stays in the test database.
    assert_eq!(psql(&pg, "SELECT count(*) FROM pg_indexes WHERE tablename = 'users'"), "1");
    assert_eq!(psql(&pg, "SELECT count(*) FROM pg_extension WHERE extname = 'hypopg'"), "0");

    // The report's SQL section is the stored numbers.
    let o = fx.ib(&["pipeline", "report", "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let r: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(r["sql"]["optimizedQueries"], 1, "{r:#}");
    assert_eq!(r["sql"]["queriesFound"], 1);
    let line = &r["sql"]["optimized"][0];
    assert_eq!(line["location"], "app/db.py:3");
    assert_eq!(line["medianBeforeMs"].as_f64(), Some(before));
    let pct = q["timing"]["improvementPct"].as_f64().unwrap();
    assert!((r["sql"]["averageImprovementPct"].as_f64().unwrap() - pct).abs() <= 0.05, "{r:#}");
    let md = fx.ib(&["pipeline", "report"]);
    assert!(md.stdout.contains("- Optimized queries: 1"), "{}", md.stdout);
    assert!(
        md.stdout.contains(&format!("app/db.py:3 (index): {before:.2} ms → {after:.2} ms")),
        "{}",
        md.stdout
    );
}

#[test]
fn pipeline_sql_rewrites_with_other_rows_or_no_gain_are_not_kept() {
    if !test_support::postgres::available("pipeline_sql_rewrites") {
        return;
    }
    let pg = test_support::postgres::PgServer::start();
    seed_users(&pg);
    let fx = Fixture::new();
    fx.config(&sql_config(&pg.url(), "    minImprovement: 30\n"));
    let mock = test_support::mock_llm::MockLlm::start();
    sql_model(
        &mock,
        vec![
            (
                "score = 7",
                serde_json::json!({"kind": "rewrite", "sql": "SELECT id FROM users WHERE score = 8", "reason": "faster"}),
            ),
            (
                "status = 'inactive'",
                serde_json::json!({"kind": "rewrite", "sql": "SELECT count(*) FROM users WHERE 'inactive' = status", "reason": "same"}),
            ),
        ],
        || {},
    );
    let js = "export const a = 'SELECT id FROM users WHERE score = 7';\nexport const b = `SELECT count(*)\n  FROM users\n  WHERE status = 'inactive'`;\nexport const c = `SELECT * FROM users WHERE id = ${id}`;\nexport const d = \"DELETE FROM users WHERE email = 'user77@example.com'\";\n";
    let o = fx.commit_with_model(&mock, &[("web/q.js", js)], &["--yes", "-m", "queries"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let sql = &fx.read_json(".ironbees/cache/test_agent.json")["sql"];
    let qs = sql["queries"].as_array().unwrap();
    assert_eq!(qs.len(), 3, "the template with a placeholder is not a query: {sql:#}");
    assert_eq!(qs[0]["outcome"], "rejected", "{sql:#}");
    assert!(qs[0]["reason"].as_str().unwrap().contains("other rows"), "{sql:#}");
    assert_eq!(qs[1]["outcome"], "rejected", "{sql:#}");
    assert!(qs[1]["reason"].as_str().unwrap().starts_with("not kept"), "{sql:#}");
    assert_eq!(qs[1]["line"], 2);
    assert!(qs[1]["timing"]["medianBeforeMs"].as_f64().is_some());
    // A DELETE with WHERE is explained (ANALYZE runs it) and rolled back.
    assert_eq!((qs[2]["kind"].as_str(), qs[2]["line"].as_u64()), (Some("delete"), Some(6)));
    assert_eq!(qs[2]["outcome"], "noCandidate", "{sql:#}");
    assert_eq!(qs[2]["before"]["nodeType"], "ModifyTable", "{sql:#}");
    assert_eq!(psql(&pg, "SELECT count(*) FROM users"), "200000");
    assert!(sql.get("commit").is_none(), "{sql:#}");
    assert_eq!(
        fx.remote_head(),
        git(&fx.proj, &["rev-parse", "HEAD"]),
        "nothing but the user's commit"
    );
}

#[test]
fn pipeline_sql_without_a_database_is_skipped_with_the_queries_listed() {
    let fx = Fixture::new();
    fx.config(CONFIG);
    let text = "-- report\nSELECT status, count(*) FROM users GROUP BY status;\nUPDATE users SET status = $1 WHERE id = $2;\n";
    let o = fx.commit("report.sql", text, &["--yes", "-m", "report"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let sql = &fx.read_json(".ironbees/cache/test_agent.json")["sql"];
    assert_eq!(sql["status"], "skipped");
    assert_eq!(sql["reason"], "no database (pipeline.database.url)");
    let lines: Vec<u64> =
        sql["queries"].as_array().unwrap().iter().map(|q| q["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [2, 3]);
    assert!(o.stderr.contains("sql: skipped (no database"), "{}", o.stderr);
}

#[test]
fn pipeline_sql_database_gone_mid_step_fails_the_test_stage_and_rolls_back() {
    if !test_support::postgres::available("pipeline_sql_gone") {
        return;
    }
    let pg = test_support::postgres::PgServer::start();
    seed_users(&pg);
    let url = pg.url();
    let server = Arc::new(Mutex::new(Some(pg)));
    let fx = Fixture::new();
    fx.config(&sql_config(&url, ""));
    let mock = test_support::mock_llm::MockLlm::start();
    let index =
        serde_json::json!({"kind": "index", "sql": "CREATE INDEX ON users (email)", "reason": "r"});
    // The server stops while the model is asked: after EXPLAIN, before verification.
    let stop = server.clone();
    sql_model(&mock, vec![("user4242", index)], move || drop(stop.lock().unwrap().take()));
    let o = fx.commit_with_model(&mock, &[("app/db.py", SLOW_PY)], &["--yes", "-m", "find users"]);
    assert_ne!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("DATABASE_UNAVAILABLE"), "{}", o.stderr);
    assert!(server.lock().unwrap().is_none(), "the model was asked");
    let id = only_id(&fx);
    let shown = fx.show(&id);
    let err = &shown["state"]["error"];
    assert_eq!(err["failedStage"], "test", "{err:#}");
    assert_eq!(err["code"], "DATABASE_UNAVAILABLE");
    assert!(err["message"].as_str().unwrap().contains("is unavailable"), "{err:#}");
    assert_eq!(err["rollbackBranch"], format!("commitly/code/{id}").as_str());
    assert_eq!(fx.hub_branches(), vec![format!("commitly/code/{id}")]);
    assert_ne!(fx.remote_head(), git(&fx.proj, &["rev-parse", "HEAD"]), "nothing pushed");
}

#[test]
fn pipeline_sql_rewrite_verified_equal_and_faster_replaces_the_query_in_its_file() {
    if !test_support::postgres::available("pipeline_sql_rewrite") {
        return;
    }
    let pg = test_support::postgres::PgServer::start();
    seed_users(&pg);
    let fx = Fixture::new();
    fx.config(&sql_config(&pg.url(), ""));
    let mock = test_support::mock_llm::MockLlm::start();
    // Sorting 200k rows the count does not need (OFFSET 0 keeps the filter out of
    // the subquery): the same count without it.
    let rewrite = serde_json::json!({
        "kind": "rewrite",
        "sql": "SELECT count(*)\nFROM users WHERE score = 7",
        "reason": "the subquery's ORDER BY sorts rows the count does not need"
    });
    sql_model(&mock, vec![("ORDER BY email", rewrite)], || {});
    let py = "def sevens(cur):\n    cur.execute(\"SELECT count(*) FROM (SELECT * FROM users ORDER BY email OFFSET 0) s WHERE score = 7\")\n    return cur.fetchone()\n";
    let o = fx.commit_with_model(&mock, &[("app/stats.py", py)], &["--yes", "-m", "stats"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let sql = &fx.read_json(".ironbees/cache/test_agent.json")["sql"];
    let q = &sql["queries"][0];
    assert_eq!(q["outcome"], "kept", "{sql:#}");
    assert_eq!(q["before"]["nodeType"], "Aggregate", "{q:#}");
    assert!(q["timing"]["improvementPct"].as_f64().unwrap() >= 10.0, "{q:#}");
    assert!(q.get("migration").is_none());
    // The literal now holds the rewrite, on one line as the literal was.
    assert_eq!(
        git(&fx.remote, &["show", "main:app/stats.py"]),
        py.replace(
            "SELECT count(*) FROM (SELECT * FROM users ORDER BY email OFFSET 0) s WHERE score = 7",
            "SELECT count(*) FROM users WHERE score = 7"
        )
        .trim_end()
    );
    assert!(
        git(&fx.remote, &["log", "-1", "--format=%s", "main"])
            .starts_with("TestAgent: SQL optimization: 1 rewrite(s), 0 index(es)")
    );
    assert_eq!(sql["commit"].as_str(), Some(git(&fx.remote, &["rev-parse", "main"]).as_str()));
}

// --- served over HTTP ------------------------------------------------------------------

/// A pipeline's latest checkpoint as `ironbees serve` shows it, once `ok` says so.
async fn wait_pipeline(
    s: &super::serve::Served,
    c: &reqwest::Client,
    id: &str,
    what: &str,
    mut ok: impl FnMut(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (code, view) = s.json(s.get(c, &format!("/api/pipeline/state/{id}"))).await;
        if code == 200 && ok(&view) {
            return view;
        }
        assert!(Instant::now() < deadline, "pipeline {id} not {what}: {view}\n{}", s.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn waits_at(view: &Value, node: &str) -> bool {
    view["checkpoint"]["status"]["type"] == "waiting" && view["checkpoint"]["node"] == node
}

#[test]
fn pipeline_started_without_yes_is_served_and_http_answers_push_it_or_roll_it_back() {
    use serde_json::json;

    use super::serve::{Served, client, read_sse, rt};

    let fx = Fixture::new();
    fx.config(CONFIG);
    let before = fx.remote_head();
    std::fs::write(fx.proj.join("app.sh"), "echo v2\n").unwrap();
    git(&fx.proj, &["commit", "-qam", "v2"]);
    let o = fx.ib(&["pipeline", "start"]);
    assert_eq!(o.code, 10, "waits for a human: {}\n{}", o.stdout, o.stderr);
    let id = only_id(&fx);

    let mut serve = fx.cmd();
    serve.args(["serve", "--bind", "127.0.0.1:0", "--no-watch"]);
    serve.env("IRONBEES_LOG", "server=debug,workflow=debug");
    let s = Served::spawn(serve, &fx.proj);
    rt().block_on(async {
        let c = client();
        // Listed with its kind, apart from agent runs.
        let (code, page) = s.json(s.get(&c, "/api/pipeline/runs?status=waiting")).await;
        assert_eq!(code, 200, "{page}");
        let run = &page["runs"][0];
        assert_eq!((&run["id"], &run["kind"]), (&json!(id), &json!("pipeline")), "{page}");
        assert_eq!(run["request"], "v2");
        let (_, agents) = s.json(s.get(&c, "/api/agent/runs")).await;
        assert_eq!(agents["runs"], json!([]), "{agents}");

        // Its state, and the agent's endpoints refuse it (another graph's run).
        let view =
            wait_pipeline(&s, &c, &id, "at APPROVE_CODE", |v| waits_at(v, "APPROVE_CODE")).await;
        assert_eq!(view["state"]["stageStatus"]["code"], "success", "{view}");
        let state_id = view["checkpoint"]["stateId"].as_str().unwrap().to_owned();
        let (code, err) = s.json(s.get(&c, &format!("/api/agent/state/{id}"))).await;
        assert_eq!((code, err["code"].as_str()), (400, Some("INVALID_ARGUMENT")), "{err}");
        let agent_yes = json!({"stateId": state_id, "approved": true});
        let (code, err) = s.json(s.post(&c, "/api/agent/approve", &agent_yes)).await;
        assert_eq!((code, err["code"].as_str()), (400, Some("INVALID_ARGUMENT")), "{err}");
        // An agent's answer is not a pipeline's.
        let (code, err) = s
            .json(s.post(
                &c,
                "/api/pipeline/approve",
                &json!({"stateId": state_id, "approved": true, "feedback": "x"}),
            ))
            .await;
        assert_eq!((code, err["code"].as_str()), (400, Some("INVALID_ARGUMENT")), "{err}");

        // Yes: queued, then a worker drives it to the next approval, and on.
        let yes = json!({"stateId": state_id, "approved": true});
        let (code, ok) = s.json(s.post(&c, "/api/pipeline/approve", &yes)).await;
        assert_eq!(code, 202, "{ok}");
        assert_eq!(ok["events"], format!("/api/pipeline/runs/{id}/events"));
        let view =
            wait_pipeline(&s, &c, &id, "at APPROVE_TEST", |v| waits_at(v, "APPROVE_TEST")).await;
        assert_eq!(view["state"]["results"]["code"]["userApproved"], true, "{view}");
        // The answer to a checkpoint it has left is refused.
        let (code, err) = s.json(s.post(&c, "/api/pipeline/approve", &yes)).await;
        assert_eq!((code, err["code"].as_str()), (409, Some("INVALID_STATE")), "{err}");
        let mut view = view;
        for _ in 0..4 {
            if view["checkpoint"]["status"]["type"] != "waiting" {
                break;
            }
            let state_id = view["checkpoint"]["stateId"].clone();
            let (code, ok) = s
                .json(s.post(
                    &c,
                    "/api/pipeline/approve",
                    &json!({"stateId": state_id, "approved": true}),
                ))
                .await;
            assert_eq!(code, 202, "{ok}");
            view = wait_pipeline(&s, &c, &id, "past its approval", |v| {
                v["checkpoint"]["stateId"] != state_id
                    && v["checkpoint"]["status"]["type"] != "running"
                    && v["checkpoint"]["status"]["type"] != "queued"
            })
            .await;
        }
        assert_eq!(view["checkpoint"]["status"]["type"], "succeeded", "{view}\n{}", s.log());
        // Its events, as SSE: the approvals answered here among them.
        let resp = s
            .get(&c, &format!("/api/pipeline/runs/{id}/events?follow=false"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        let events: Vec<Value> = read_sse(resp, Duration::from_secs(30), |_| false)
            .await
            .iter()
            .map(super::serve::Sse::json)
            .collect();
        let approvals = events.iter().filter(|e| e["kind"]["type"] == "stageApproval").count();
        assert!(approvals >= 2, "{events:?}");
        assert_eq!(events.last().unwrap()["kind"]["type"], "runFinished", "{events:?}");
    });
    let head = git(&fx.proj, &["rev-parse", "HEAD"]);
    assert_eq!(fx.remote_head(), head, "pushed after the approvals");
    assert_ne!(head, before);
    assert_eq!(fx.hub_branches(), Vec::<String>::new());

    // A second pipeline: yes to the code, no to the tests: rolled back.
    let pushed = fx.remote_head();
    std::fs::write(fx.proj.join("app.sh"), "echo v3\n").unwrap();
    git(&fx.proj, &["commit", "-qam", "v3"]);
    let o = fx.ib(&["pipeline", "start"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    let second = fx.pipelines()[0]["id"].as_str().unwrap().to_owned();
    assert_ne!(second, id);
    rt().block_on(async {
        let c = client();
        let view =
            wait_pipeline(&s, &c, &second, "at APPROVE_CODE", |v| waits_at(v, "APPROVE_CODE"))
                .await;
        let yes = json!({"stateId": view["checkpoint"]["stateId"], "approved": true});
        let (code, _) = s.json(s.post(&c, "/api/pipeline/approve", &yes)).await;
        assert_eq!(code, 202);
        let view =
            wait_pipeline(&s, &c, &second, "at APPROVE_TEST", |v| waits_at(v, "APPROVE_TEST"))
                .await;
        let no = json!({"stateId": view["checkpoint"]["stateId"], "approved": false});
        let (code, ok) = s.json(s.post(&c, "/api/pipeline/approve", &no)).await;
        assert_eq!(code, 202, "{ok}");
        let view = wait_pipeline(&s, &c, &second, "failed", |v| {
            v["checkpoint"]["status"]["type"] == "failed"
        })
        .await;
        assert_eq!(view["state"]["error"]["code"], "APPROVAL_REJECTED", "{view}");
        assert_eq!(view["state"]["results"]["test"]["userApproved"], false);
    });
    assert_eq!(fx.remote_head(), pushed, "nothing pushed");
    assert_eq!(fx.hub_branches(), vec![format!("commitly/test/{second}")], "the last good kept");

    // A third, cancelled while it waits: its branches go, the agent's cancel refuses it.
    std::fs::write(fx.proj.join("app.sh"), "echo v4\n").unwrap();
    git(&fx.proj, &["commit", "-qam", "v4"]);
    let o = fx.ib(&["pipeline", "start"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    let third = fx.pipelines()[0]["id"].as_str().unwrap().to_owned();
    assert!(fx.hub_branches().contains(&format!("commitly/code/{third}")));
    rt().block_on(async {
        let c = client();
        let (code, err) = s.json(s.post(&c, "/api/agent/cancel", &json!({"runId": third}))).await;
        assert_eq!((code, err["code"].as_str()), (400, Some("INVALID_ARGUMENT")), "{err}");
        let (code, done) =
            s.json(s.post(&c, "/api/pipeline/cancel", &json!({"runId": third}))).await;
        assert_eq!((code, &done["status"]["type"]), (200, &json!("cancelled")), "{done}");
    });
    assert_eq!(fx.hub_branches(), vec![format!("commitly/test/{second}")]);
    assert_eq!(fx.remote_head(), pushed);
}

/// Seed §9.1: a "no" to the push logs it, skips the push and goes on to the
/// Slack agent (§7.1: after the rollback); the summary says it was rejected.
#[test]
fn pipeline_push_rejected_by_the_user_is_told_to_slack_and_pushes_nothing() {
    let fx = Fixture::new();
    let slack = SlackMock::start(vec![r#"{"ok":true,"channel":"C1"}"#]);
    fx.config(&format!(
        "{CONFIG}  slack:\n    token: xoxb-test\n    channelId: C1\n    baseUrl: http://127.0.0.1:{}/api\n",
        slack.port
    ));
    let before = fx.remote_head();
    let o = fx.commit("app.sh", "echo v2\n", &["-m", "v2"]);
    assert_eq!(o.code, 10, "{}\n{}", o.stdout, o.stderr);
    let id = only_id(&fx);
    for _ in 0..3 {
        let o = fx.ib(&["pipeline", "resume", &id, "--approve"]);
        assert_eq!(o.code, 10, "{}\n{}", o.stdout, o.stderr);
    }
    assert!(fx.show(&id)["run"]["status"]["node"] == "APPROVE_SYNC", "{}", fx.show(&id));
    let o = fx.ib(&["pipeline", "resume", &id, "--reject"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(fx.remote_head(), before, "nothing pushed");
    let shown = fx.show(&id);
    assert_eq!(shown["state"]["stageStatus"]["notify"], "success", "{shown}");
    assert_eq!(shown["state"]["results"]["sync"]["userApproved"], false);
    let requests = slack.requests.lock().unwrap();
    assert_eq!(requests.len(), 1, "the summary only: no push, no feedback replies");
    assert!(requests[0].contains("the push was rejected"), "{}", requests[0]);
}

/// `pipeline.onAgentApply`: an agent run's applied change is committed (its
/// files only: another change in the tree stays uncommitted) and the pipeline
/// runs on that commit to the push.
/// A remote with `calc.py` and its test, a pipeline that approves itself and
/// runs on agent runs' applied changes, a hand edit in the tree, and a model
/// that fixes `div`.
fn agent_apply_fixture() -> (Fixture, test_support::mock_llm::MockLlm) {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("calc.py"), "def div(a, b):\n    return a / b\n").unwrap();
    std::fs::write(
        fx.proj.join("test_calc.py"),
        "import pytest\nfrom calc import div\n\ndef test_div():\n    assert div(4, 2) == 2\n",
    )
    .unwrap();
    std::fs::write(fx.proj.join("NOTES.md"), "notes\n").unwrap();
    git(&fx.proj, &["add", "."]);
    git(&fx.proj, &["commit", "-qm", "calc"]);
    git(&fx.proj, &["push", "-q", "origin", "main"]);
    fx.config(
        "pipeline:\n  execution:\n    command: python3 -c 'import calc'\n  \
         testCommand: python3 -m pytest -q -p no:cacheprovider\n  autoApprove: true\n  onAgentApply: true\n",
    );
    // Someone else's change in the tree, which the run's commit must not take.
    std::fs::write(fx.proj.join("NOTES.md"), "notes, edited by hand\n").unwrap();
    let mock = test_support::mock_llm::MockLlm::start();
    super::validation::fixing_model(
        &mock,
        "calc.py",
        "    return a / b",
        "    if b == 0:\n        raise ValueError('zero')\n    return a / b",
    );
    (fx, mock)
}

/// What the pipeline pushed for the run: the run's files only, under the
/// request, with the trailers; the hand edit still in the tree.
fn assert_pushed_the_runs_change_alone(fx: &Fixture) {
    let head = git(&fx.proj, &["rev-parse", "HEAD"]);
    assert_eq!(fx.remote_head(), head, "the applied change was pushed by the pipeline");
    let message = git(&fx.proj, &["log", "-1", "--format=%B"]);
    assert!(message.starts_with("Make div raise ValueError"), "{message}");
    assert!(message.contains("Ironbees-Run: ") && message.contains("Ironbees-Transaction: "));
    let changed = git(&fx.proj, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(changed, "calc.py", "the run's files only");
    assert_eq!(git(&fx.proj, &["status", "--porcelain", "--untracked-files=no"]), "M NOTES.md");
    assert!(git(&fx.remote, &["show", "main:calc.py"]).contains("ValueError"));
    let runs = fx.pipelines();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"]["type"], "succeeded");
}

#[test]
fn pipeline_runs_on_an_agent_runs_applied_change_when_configured() {
    let (fx, mock) = agent_apply_fixture();
    let mut c = fx.cmd();
    c.env("ANTHROPIC_API_KEY", "sk-ant-pipeline-test").env("ANTHROPIC_BASE_URL", mock.url());
    c.args(["run", "--yes", "Make div raise ValueError for a zero divisor"]);
    let o = Out::from(c.output().unwrap());
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("onAgentApply"), "{}", o.stderr);
    assert_pushed_the_runs_change_alone(&fx);
}

/// A pipeline that cannot start (the project has no remote) makes no commit: the
/// run's change stays applied in the tree, and the error says why.
#[test]
fn pipeline_on_agent_apply_without_a_remote_commits_nothing() {
    let (fx, mock) = agent_apply_fixture();
    git(&fx.proj, &["remote", "remove", "origin"]);
    let head = git(&fx.proj, &["rev-parse", "HEAD"]);
    let mut c = fx.cmd();
    c.env("ANTHROPIC_API_KEY", "sk-ant-pipeline-test").env("ANTHROPIC_BASE_URL", mock.url());
    c.args(["run", "--yes", "Make div raise ValueError for a zero divisor"]);
    let o = Out::from(c.output().unwrap());
    assert_ne!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("remote"), "{}", o.stderr);
    assert_eq!(git(&fx.proj, &["rev-parse", "HEAD"]), head, "no commit");
    assert!(std::fs::read_to_string(fx.proj.join("calc.py")).unwrap().contains("ValueError"));
}

/// The same through `ironbees serve`: its worker starts the pipeline after the
/// run it drove applied.
#[test]
fn pipeline_runs_on_an_applied_change_of_a_run_the_server_drives() {
    use super::serve::{Served, client, rt};

    let (fx, mock) = agent_apply_fixture();
    let mut serve = fx.cmd();
    serve.env("ANTHROPIC_API_KEY", "sk-ant-pipeline-test").env("ANTHROPIC_BASE_URL", mock.url());
    serve.args(["serve", "--bind", "127.0.0.1:0", "--no-watch"]);
    let s = Served::spawn(serve, &fx.proj);
    rt().block_on(async {
        let c = client();
        let body = serde_json::json!({
            "userRequest": "Make div raise ValueError for a zero divisor",
            "autoApprove": true
        });
        let execute = s.post(&c, "/api/agent/execute", &body).header("accept", "application/json");
        let (code, started) = s.json(execute).await;
        assert!(code == 200 || code == 202, "{code}: {started}");
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let (_, page) = s.json(s.get(&c, "/api/pipeline/runs?status=succeeded")).await;
            if page["runs"].as_array().is_some_and(|r| !r.is_empty()) {
                break;
            }
            assert!(Instant::now() < deadline, "no pipeline succeeded: {page}\n{}", s.log());
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    assert_pushed_the_runs_change_alone(&fx);
}

/// The console's pipeline view in headless Chromium: a pipeline waiting at its
/// first approval is listed, its stages and results shown, every approval
/// answered with a click until the push; a second one rejected rolls back.
#[test]
fn pipeline_console_shows_the_stages_and_answers_approvals_in_a_browser() {
    use super::serve::{Browser, Served};

    let Some(browser) = Browser::start(390, 844) else { return };
    let fx = Fixture::new();
    fx.config(CONFIG);
    std::fs::write(fx.proj.join("app.sh"), "echo v2\n").unwrap();
    git(&fx.proj, &["commit", "-qam", "v2 from the console"]);
    let o = fx.ib(&["pipeline", "start"]);
    assert_eq!(o.code, 10, "waits for a human: {}\n{}", o.stdout, o.stderr);
    let id = only_id(&fx);
    let mut serve = fx.cmd();
    serve.args(["serve", "--bind", "127.0.0.1:0", "--no-watch"]);
    let s = Served::spawn(serve, &fx.proj);
    browser.open(&format!("{}/#token={}", s.url, s.token));
    browser.wait("the pipeline's row", Duration::from_secs(20), |b| {
        b.text("#pipeline-rows").contains(&id)
    });
    browser.click(&format!("tr[data-pipeline='{id}']"));
    browser.wait("the code stage's approval", Duration::from_secs(30), |b| {
        b.displayed("#pipeline-approve") && b.text("#stages").contains("code · success")
    });
    assert!(browser.text("#pipeline-commit").contains("v2 from the console"));
    assert!(
        browser.text("#pipeline-summary").contains("sh app.sh"),
        "{}",
        browser.text("#pipeline-gate")
    );
    let mut answered = 0;
    while browser.text("#pipeline-status") != "succeeded" {
        assert!(answered < 4, "more approvals than the seed's four: {}", browser.text("#pipeline"));
        let asked = browser.text("#pipeline-question");
        browser.click("#pipeline-approve");
        answered += 1;
        browser.wait("the next approval or the end", Duration::from_secs(60), |b| {
            b.text("#pipeline-status") == "succeeded"
                || (b.displayed("#pipeline-approve") && b.text("#pipeline-question") != asked)
        });
    }
    assert_eq!(answered, 4, "code, test, refactor, push");
    assert_eq!(fx.remote_head(), git(&fx.proj, &["rev-parse", "HEAD"]), "pushed");
    browser.wait("the sync result", Duration::from_secs(10), |b| {
        b.text("#stages").contains("sync · success")
            && b.text("#pipeline-events").contains("sync approved by human")
    });
    let shot = browser.screenshot();
    std::fs::write(super::serve::target_dir().join("serve-console-pipeline-390.png"), &shot)
        .unwrap();

    // A second pipeline, rejected at its first approval: rolled back, nothing pushed.
    let before = fx.remote_head();
    std::fs::write(fx.proj.join("app.sh"), "echo v3\n").unwrap();
    git(&fx.proj, &["commit", "-qam", "v3 to reject"]);
    let o = fx.ib(&["pipeline", "start"]);
    assert_eq!(o.code, 10, "{}\n{}", o.stdout, o.stderr);
    let second = fx.pipelines().into_iter().find(|r| r["id"] != id.as_str()).unwrap();
    let second = second["id"].as_str().unwrap().to_owned();
    browser.wait("the second pipeline's row", Duration::from_secs(20), |b| {
        b.text("#pipeline-rows").contains(&second)
    });
    browser.click(&format!("tr[data-pipeline='{second}']"));
    browser.wait("its approval", Duration::from_secs(30), |b| {
        b.text("#pipeline-id") == second && b.displayed("#pipeline-reject")
    });
    browser.click("#pipeline-reject");
    browser.call("POST", "/alert/accept", Some(serde_json::json!({})));
    browser.wait("the rollback", Duration::from_secs(60), |b| {
        b.text("#pipeline-status") == "failed" && b.text("#pipeline-events").contains("rolled back")
    });
    assert!(
        browser.text("#pipeline-meta").contains("APPROVAL_REJECTED"),
        "{}",
        browser.text("#pipeline-meta")
    );
    assert_eq!(fx.remote_head(), before);
}
