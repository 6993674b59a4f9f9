//! `ironbees guard`: a change against the guardrails, as a pre-commit hook and in
//! CI — staged changes, revision ranges and patch files, the configuration's
//! rules, exit codes.

use std::{
    io::Write,
    path::Path,
    process::{Command, Stdio},
};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;
use test_support::TempProject;

use super::Out;

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// `ironbees -C PROJECT`, without the user's configuration or a model.
fn ironbees(p: &TempProject) -> Command {
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.arg("-C").arg(p.root()).env("XDG_CONFIG_HOME", p.root().join(".no-user-config"));
    super::without_model_env(&mut c);
    c
}

fn guard(p: &TempProject, args: &[&str], stdin: Option<&str>) -> Out {
    let mut c = ironbees(p);
    c.arg("guard").args(args);
    c.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    Out::from(child.wait_with_output().unwrap())
}

fn findings(o: &Out) -> Vec<(String, String, Option<u64>)> {
    let v: Value = serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["ruleId"].as_str().unwrap().to_owned(),
                f["file"].as_str().unwrap_or_default().to_owned(),
                f["line"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn guard_check_reads_staged_changes_ranges_and_patches_and_exits_11_on_a_blocker() {
    let p = TempProject::new();
    p.write("app.py", "def login(password):\n    return check(password)\n");
    git(p.root(), &["init", "-q"]);
    git(p.root(), &["add", "."]);
    git(p.root(), &["commit", "-qm", "init"]);

    // Ordinary code about passwords is not a secret.
    p.write("app.py", "def login(password):\n    return check(password)\n\n\ndef logout(user):\n    user.password_hash = None\n");
    let o = guard(&p, &["check", "--json"], None);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(findings(&o), []);

    // A staged key: the pre-commit hook blocks it, naming the rule, file and line;
    // the unstaged work tree is not what is checked.
    p.write("settings.py", "DEBUG = False\nAWS_KEY = 'AKIAZ7VRSQ5BZMN4K2TP'\n");
    git(p.root(), &["add", "settings.py"]);
    let o = guard(&p, &["check", "--staged", "--json"], None);
    assert_eq!(o.code, 11, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(findings(&o), [("G002".into(), "settings.py".into(), Some(2))]);
    assert!(o.stderr.contains("GUARDRAIL_BLOCKED"), "{}", o.stderr);
    assert!(!o.stdout.contains("AKIAZ7VRSQ5BZMN4K2TP"), "masked: {}", o.stdout);
    let human = guard(&p, &["check", "--staged"], None);
    assert_eq!(human.code, 11);
    assert!(human.stdout.contains("blocker G002 NO_SECRET settings.py:2"), "{}", human.stdout);

    // Committed, the same key is found in a range; an opt-out marker on the line
    // lets a test fixture through.
    git(p.root(), &["commit", "-qam", "settings"]);
    let o = guard(&p, &["check", "HEAD~1..HEAD", "--json"], None);
    assert_eq!(o.code, 11);
    assert_eq!(findings(&o)[0].0, "G002");
    let patch = "--- a/t.py\n+++ b/t.py\n@@ -0,0 +1 @@\n+KEY = 'AKIAZ7VRSQ5BZMN4K2TP'  # ironbees:allow-secret\n";
    let o = guard(&p, &["check", "--diff", "-", "--json"], Some(patch));
    assert_eq!(o.code, 0, "{}", o.stderr);

    // Project rules by id: a forbidden path, a raised limit, a pattern with globs.
    p.write(
        ".ironbees/config.yaml",
        "guardrails:\n  rules:\n    G003: {maxFiles: 1, severity: blocker}\n    P001:\n      name: NO_PRINT\n      severity: warning\n      pattern: '^\\s*print\\('\n      paths: ['src/**']\n",
    );
    let patch = "--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1,2 @@\n x = 1\n+print(x)\n--- a/tools/b.py\n+++ b/tools/b.py\n@@ -1 +1,2 @@\n x = 1\n+print(x)\n";
    let o = guard(&p, &["check", "--diff", "-", "--json"], Some(patch));
    assert_eq!(o.code, 11, "{}", o.stderr);
    assert_eq!(
        findings(&o),
        [("G003".into(), String::new(), None), ("P001".into(), "src/a.py".into(), Some(2))]
    );
    let rules = guard(&p, &["rules"], None);
    assert!(rules.stdout.contains("P001") && rules.stdout.contains("NO_PRINT"), "{}", rules.stdout);

    // A rule that cannot work is a configuration error naming it.
    p.write(".ironbees/config.yaml", "guardrails:\n  rules:\n    P002: {pattern: '(unclosed'}\n");
    let o = guard(&p, &["check", "--staged"], None);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("guardrails.rules.P002"), "{}", o.stderr);
    // A bad range is the user's mistake, with git's words.
    p.write(".ironbees/config.yaml", "");
    let o = guard(&p, &["check", "nosuchbranch..HEAD"], None);
    assert_eq!(o.code, 2, "{}", o.stderr);
}

#[test]
fn change_with_guardrails_on_change_refuses_a_secret_and_leaves_the_file_as_it_was() {
    let p = TempProject::new();
    p.write("settings.py", "DEBUG = False\n");
    std::fs::create_dir(p.path(".git")).unwrap();
    let edit = |p: &TempProject| {
        let mut c = ironbees(p);
        c.args([
            "change",
            "settings.py",
            "--find",
            "DEBUG = False",
            "--replace",
            "DEBUG = False\nAWS_KEY = 'AKIAZ7VRSQ5BZMN4K2TP'",
            "--json",
        ]);
        Out::from(c.output().unwrap())
    };

    // With onChange, the user's own `change` goes through the guardrails too.
    p.write(".ironbees/config.yaml", "guardrails:\n  onChange: true\n");
    let o = edit(&p);
    assert_eq!(o.code, 11, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("GUARDRAIL_BLOCKED") && o.stderr.contains("G002"), "{}", o.stderr);
    assert!(!o.stderr.contains("AKIAZ7VRSQ5BZMN4K2TP"), "masked: {}", o.stderr);
    assert_eq!(p.read("settings.py"), "DEBUG = False\n");

    // Off by default: without onChange the same edit is applied.
    p.write(".ironbees/config.yaml", "");
    let o = edit(&p);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(p.read("settings.py").contains("AWS_KEY"));
}
