//! `ironbees exec`, `build` and `test`: exit codes, `--json`, loud warnings, errors
//! with machine codes.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use test_support::TempProject;

fn ironbees(dir: &TempProject) -> Command {
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.current_dir(dir.root()).env("NO_COLOR", "1");
    c
}

#[test]
fn exec_streams_output_and_exits_with_the_command_code() {
    let p = TempProject::new();
    ironbees(&p)
        .args(["exec", "--", "sh", "-c", "echo hi; echo oops >&2; exit 3"])
        .assert()
        .code(3)
        .stdout("hi\n")
        .stderr(predicate::str::contains("oops"));
}

#[test]
fn exec_timeout_exits_124_and_names_the_limit() {
    let p = TempProject::new();
    ironbees(&p)
        .args(["exec", "--timeout", "1s", "--", "sleep", "30"])
        .assert()
        .code(124)
        .stderr(predicate::str::contains("sandbox limit fired: timeout"));
}

#[test]
fn exec_json_reports_isolation_and_limit() {
    let p = TempProject::new();
    let out = ironbees(&p)
        .args(["exec", "--json", "--", "true"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["exitCode"], 0);
    assert_eq!(v["isolation"]["backend"], "namespaces");
    assert_eq!(v["isolation"]["network"], "off");
    assert_eq!(v["isolation"]["seccomp"], true);
    let out = ironbees(&p)
        .args(["exec", "--json", "--timeout", "500ms", "--", "sleep", "30"])
        .assert()
        .code(6)
        .stderr(predicate::str::contains("\"code\":\"SANDBOX_LIMIT\""))
        .stderr(predicate::str::contains("\"limit\":\"timeout\""))
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["limit"], "timeout");
    assert_eq!(v["signal"], "SIGKILL");
}

#[test]
fn exec_removes_secret_environment_variables() {
    let p = TempProject::new();
    let out = ironbees(&p)
        .env("OPENAI_API_KEY", "sk-secret")
        .args(["exec", "--json", "--", "sh", "-c", "echo ${OPENAI_API_KEY:-absent}"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["stdout"]["text"], "absent\n");
    assert!(
        v["isolation"]["envRemoved"].as_array().unwrap().contains(&Value::from("OPENAI_API_KEY"))
    );
}

#[test]
fn missing_command_exits_127_with_a_code() {
    let p = TempProject::new();
    ironbees(&p)
        .args(["exec", "--", "no-such-command-ironbees"])
        .assert()
        .code(127)
        .stderr(predicate::str::contains("error[COMMAND_NOT_FOUND]"));
}

#[test]
fn weaker_backend_warns_loudly_and_strict_refuses() {
    let p = TempProject::new();
    ironbees(&p)
        .args(["exec", "--backend", "none", "--", "true"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("warning: sandbox: no namespaces"));
    ironbees(&p)
        .args(["exec", "--backend", "none", "--strict", "--", "true"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("error[SANDBOX_UNAVAILABLE]"));
}

#[test]
fn container_backend_without_an_engine_is_unavailable() {
    let p = TempProject::new();
    ironbees(&p)
        .args(["exec", "--backend", "container", "--image", "debian:12", "--", "true"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("error[SANDBOX_UNAVAILABLE]"))
        .stderr(predicate::str::contains("container"));
}

#[test]
fn bad_flags_are_usage_errors() {
    let p = TempProject::new();
    for args in [
        &["exec", "--timeout", "soon", "--", "true"][..],
        &["exec", "--memory", "lots", "--", "true"],
        &["exec", "--network", "maybe", "--", "true"],
        &["exec", "--backend", "vm", "--", "true"],
    ] {
        ironbees(&p)
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("error[INVALID_ARGUMENT]"));
    }
}

#[test]
fn test_and_build_on_a_cargo_project() {
    let p = TempProject::with_fixture(
        r#"
        //- Cargo.toml
        [package]
        name = "cli_fixture"
        version = "0.1.0"
        edition = "2021"
        [workspace]
        //- src/lib.rs
        #[cfg(test)]
        mod tests {
            #[test]
            fn good() {}
            #[test]
            fn bad() { assert!(1 + 1 == 3, "math"); }
        }
        "#,
    );
    let out = ironbees(&p).args(["test", "--json"]).assert().code(1).get_output().stdout.clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["project"]["kind"], "cargo");
    assert_eq!(v["test"]["total"], 2);
    assert_eq!(v["test"]["failed"], 1);
    assert_eq!(v["test"]["failures"][0]["name"], "tests::bad");
    assert_eq!(v["test"]["failures"][0]["message"], "math");
    ironbees(&p)
        .args(["test"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("FAIL tests::bad"))
        .stdout(predicate::str::contains("2 total, 1 passed, 1 failed"));
    ironbees(&p).args(["build"]).assert().code(0).stdout(predicate::str::contains("built: cargo"));
    ironbees(&p).args(["test", "--", "sh", "-c", "exit 0"]).assert().code(0);
}

#[test]
fn exec_starts_in_the_workspace_when_run_from_outside_it() {
    let p = TempProject::new();
    let other = TempProject::new();
    let ws = std::fs::canonicalize(other.root()).unwrap();
    ironbees(&p)
        .args(["exec", "--workspace"])
        .arg(&ws)
        .args(["--throwaway", "--", "sh", "-c", "pwd; echo x > f"])
        .assert()
        .code(0)
        .stdout(format!("{}\n", ws.display()));
    assert!(!other.path("f").exists(), "--throwaway discarded the write");
}

#[test]
fn unknown_project_is_not_found() {
    let p = TempProject::new();
    ironbees(&p)
        .args(["build"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("error[UNKNOWN_PROJECT]"));
}
