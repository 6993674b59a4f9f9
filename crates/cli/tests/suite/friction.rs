//! Issue 24, items 14 and 15: what a new user stumbled over, each a case of one
//! table — the command, the exit code, and what stdout or stderr must say.

use std::{path::Path, process::Command};

use assert_cmd::cargo::CommandCargoExt;
use test_support::TempProject;

use super::Out;

fn project() -> TempProject {
    let p = TempProject::with_fixture(
        r#"
//- sessions.py
class SessionRedirectMixin:
    def resolve_redirects(self, resp):
        return resp


class Session(SessionRedirectMixin):
    def send(self, request):
        return self.resolve_redirects(request)
//- views.py
def url_for(x):
    return x
//- pkg/helpers.py
def url_for(y):
    return y


def go():
    return url_for(1)
"#,
    );
    let tests: String = (0..10)
        .map(|i| format!("def test_url_{i}():\n    assert url_for({i}) == {i}\n\n\n"))
        .collect();
    p.write("tests/test_views.py", format!("from views import url_for\n\n\n{tests}"));
    std::fs::create_dir_all(p.path(".git")).unwrap();
    std::fs::write(p.path(".git/config"), "[core]\n").unwrap();
    p
}

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.arg("-C").arg(dir).args(args);
    c.env("XDG_CONFIG_HOME", dir.join(".no-user-config"));
    super::without_model_env(&mut c);
    for (k, v) in env {
        c.env(k, v);
    }
    Out::from(c.output().unwrap())
}

#[test]
fn what_a_new_user_hit_reads_clearly_and_exits_with_its_meaning() {
    let p = project();
    // (args, env, exit code, on stdout, on stderr)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], i32, &'a str, &'a str);
    let cases: &[Case<'_>] = &[
        // 14: an ambiguous target asks back (2), never the edit-conflict code (9).
        (
            &["graph", "callers", "url_for"],
            &[],
            2,
            "",
            "name one by its path:line, e.g. `pkg/helpers.py:1`",
        ),
        // 14: a method a class inherits is found through its base.
        (
            &["understand", "Session.resolve_redirects"],
            &[],
            0,
            "`SessionRedirectMixin.resolve_redirects` is a method in sessions.py",
            "",
        ),
        // 14: a misspelled name suggests the closest ones.
        (
            &["navigate", "Sesion.resolve_redirectz"],
            &[],
            3,
            "",
            "did you mean: SessionRedirectMixin.resolve_redirects",
        ),
        // 15: the CLI's flag, not the request field.
        (
            &["write", "views.py", "--content", "x = 1\n"],
            &[],
            9,
            "",
            "views.py: already exists (pass --overwrite to replace it)",
        ),
        // 15: .git is inside the project, and not ironbees' to touch.
        (&["read", ".git/config"], &[], 4, "", "inside .git/, which git owns"),
        // 15: a search with no hits says so.
        (&["search", "zebra_quantum_flux"], &[], 0, "", "no matches for \"zebra_quantum_flux\""),
        // 15: a test file's many tests are summarized, not printed on one line.
        (&["impact", "views.py"], &[], 0, ", … 2 more (--json lists all)", ""),
        // 15: the variables that configure the providers are sources.
        (
            &["config", "show"],
            &[("ANTHROPIC_API_KEY", "sk-ant-x")],
            0,
            "model providers from the environment (ANTHROPIC_API_KEY)",
            "",
        ),
        // 15: usage errors have the same `error[CODE]` form as every other error.
        (&["navigate"], &[], 2, "", "error[INVALID_ARGUMENT]: the following required arguments"),
    ];
    for (args, env, code, stdout, stderr) in cases {
        let o = run(p.root(), args, env);
        assert_eq!(o.code, *code, "{args:?}\nstdout: {}\nstderr: {}", o.stdout, o.stderr);
        assert!(o.stdout.contains(stdout), "{args:?} stdout: {}", o.stdout);
        assert!(o.stderr.contains(stderr), "{args:?} stderr: {}", o.stderr);
    }
}

#[test]
fn hotspots_say_when_the_commit_limit_cut_the_history() {
    let p = project();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(p.root())
            .output()
            .unwrap();
        assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    };
    std::fs::remove_dir_all(p.path(".git")).unwrap();
    git(&["init", "-q"]);
    for i in 0..3 {
        p.write("views.py", format!("def url_for(x):\n    return x + {i}\n"));
        git(&["add", "-A"]);
        git(&["commit", "-qm", &format!("c{i}")]);
    }
    let cut = run(p.root(), &["hotspots", "--max-commits", "2"], &[]);
    assert_eq!(cut.code, 0, "{}", cut.stderr);
    assert!(cut.stdout.contains("history: 2 commits"), "{}", cut.stdout);
    assert!(cut.stdout.contains("(the newest 2: --max-commits reads more)"), "{}", cut.stdout);
    let whole = run(p.root(), &["hotspots"], &[]);
    assert!(whole.stdout.contains("history: 3 commits"), "{}", whole.stdout);
    assert!(!whole.stdout.contains("--max-commits reads more"), "{}", whole.stdout);
}

/// The same question gets the same answer: `understand` lists the 15 strongest
/// calls out of a file, and among twenty equally strong ones it used to pick by
/// hash-map order, different on every run.
#[test]
fn understand_lists_the_same_calls_every_time() {
    let callers: String =
        (0..20).map(|i| format!("def caller_{i:02}():\n    return helper()\n\n\n")).collect();
    let p = TempProject::with_fixture("//- util.py\ndef helper():\n    return 1\n");
    p.write("app.py", format!("from util import helper\n\n\n{callers}"));
    let answer = || {
        let o = run(p.root(), &["understand", "app.py", "--json"], &[]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        let calls = v.to_string();
        assert!(calls.contains("caller_00"), "{v}");
        let listed: Vec<String> = v["files"][0]["callsOut"]
            .as_array()
            .map(|a| a.iter().map(|c| c["caller"].as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        listed
    };
    let first = answer();
    assert_eq!(first.len(), 15, "{first:?}");
    let want: Vec<String> = (0..15).map(|i| format!("caller_{i:02}")).collect();
    assert_eq!(first, want);
    for _ in 0..3 {
        assert_eq!(answer(), first);
    }
}

/// Issue 32.9: a test file with a test named after the target for each case has
/// one reason per test; the text line lists a few and counts the rest (it was one
/// line of 2,225 characters on psf/requests), `--json` keeps them all.
#[test]
fn impact_lists_a_few_reasons_per_test_file_and_json_all() {
    let tests: String = (0..12)
        .map(|i| format!("def test_checkout_case_{i:02}():\n    assert checkout([{i}])\n\n\n"))
        .collect();
    let p = TempProject::with_fixture("//- shop.py\ndef checkout(cart):\n    return cart\n");
    p.write("tests/test_shop.py", format!("from shop import checkout\n\n\n{tests}"));
    let o = run(p.root(), &["impact", "checkout"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let listed = o.stdout.split_once("tests to run").map_or("", |(_, l)| l);
    let line = listed.lines().find(|l| l.contains("tests/test_shop.py")).unwrap_or_default();
    let v = run(p.root(), &["impact", "checkout", "--json"], &[]);
    let v: serde_json::Value = serde_json::from_str(&v.stdout).unwrap();
    let reasons = v["tests"][0]["reasons"].as_array().unwrap();
    assert!(reasons.len() > 12, "every test named after the target: {reasons:?}");
    let more = format!("; … {} more (--json lists all)", reasons.len() - 3);
    assert!(line.contains(&more), "{line}");
    assert!(line.chars().count() < 250, "{} characters: {line}", line.chars().count());
    // On a terminal, nothing is wider than it.
    let bin = assert_cmd::cargo::cargo_bin("ironbees");
    let cmd = format!(
        "stty cols 60 rows 24; {} -C {} --color never impact checkout",
        bin.display(),
        p.root().display()
    );
    let mut c = Command::new("script");
    c.args(["-qec", &cmd, "/dev/null"]).env("XDG_CONFIG_HOME", p.path(".no-user-config"));
    super::without_model_env(&mut c);
    let o = Out::from(c.output().unwrap());
    // (The terminal has stderr's progress too, and the summary lines above.)
    let listed = o.stdout.split_once("tests to run").map_or("", |(_, l)| l);
    let count = format!("{} more (--json lists all)", reasons.len() - 3);
    assert!(listed.contains(&count), "{}", o.stdout);
    for l in listed.lines() {
        assert!(l.trim_end().chars().count() <= 60, "wider than 60: {l:?}");
    }
}
