//! The runners live: each fixture project is copied to a temporary directory and
//! built and tested inside the sandbox with its real toolchain (CI installs them:
//! cargo + cargo-nextest, python3 + pytest, go, jest and vitest).

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use protocol::{LimitKind, TestResult};
use sandbox::{DetectOptions, Hooks, Policy};
use test_support::TempProject;

use super::support::*;

fn fixture(rel: &str) -> TempProject {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel);
    let t = TempProject::new();
    copy_dir(&src, t.root());
    t
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// jest and vitest installed once for the suite (CI: `npm install` in .ci/run).
fn node_modules() -> PathBuf {
    let p =
        std::env::var_os("IRONBEES_TEST_NODE_MODULES").map(PathBuf::from).unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps/node/node_modules")
        });
    assert!(
        ["jest", "vitest", "tsc"].iter().all(|b| p.join(".bin").join(b).exists()),
        "jest, vitest and tsc are not installed in {} (run: npm install --prefix \
         target/test-deps/node jest@29 vitest@3 typescript@5)",
        p.display()
    );
    p
}

fn policy() -> Policy {
    Policy { timeout: Some(Duration::from_secs(180)), ..Policy::default() }
}

fn run_tests(
    t: &TempProject,
    opts: DetectOptions,
    policy: &Policy,
) -> (TestResult, protocol::ExecResult) {
    let p = sandbox::detect_project(t.root(), &opts).unwrap();
    sandbox::test(sandbox(), Some(&p), None, &[], t.root(), policy, &env(), &[], &Hooks::default())
        .unwrap()
}

fn tests_of(rel: &str) -> TestResult {
    let t = fixture(rel);
    let (r, exec) = run_tests(&t, DetectOptions::default(), &policy());
    assert_eq!(exec.isolation.backend, "namespaces");
    r
}

fn build_of(rel: &str) -> protocol::BuildResult {
    let t = fixture(rel);
    let p = sandbox::detect_project(t.root(), &DetectOptions::default()).unwrap();
    sandbox::build(sandbox(), &p, None, &policy(), &env(), &[], &Hooks::default()).unwrap().0
}

#[test]
fn cargo_pass() {
    let r = tests_of("cargo/pass");
    assert!(r.success, "{r:#?}");
    assert_eq!((r.total, r.passed), (2, 2));
}

#[test]
fn cargo_fail_and_warning() {
    let r = tests_of("cargo/fail");
    assert!(!r.success);
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (3, 1, 1, 1), "{r:#?}");
    assert_eq!(r.failures[0].name, "tests::adds_wrongly");
    assert_eq!(r.failures[0].line, Some(15));
    let b = build_of("cargo/fail");
    assert!(b.success, "{b:#?}");
    assert_eq!(b.warnings.len(), 1);
}

#[test]
fn cargo_compile_error() {
    let b = build_of("cargo/compile_error");
    assert!(!b.success);
    assert_eq!(b.errors[0].code.as_deref(), Some("E0277"));
    assert_eq!((b.errors[0].file.as_deref(), b.errors[0].line), (Some("src/lib.rs"), Some(3)));
    let r = tests_of("cargo/compile_error");
    assert!(!r.success);
    assert_eq!(r.build_errors.len(), 1, "{r:#?}");
    assert!(r.incomplete.as_deref().unwrap().contains("compile error"));
}

#[test]
fn cargo_crash() {
    let r = tests_of("cargo/crash");
    assert!(!r.success);
    assert!(r.incomplete.as_deref().unwrap().contains("SIGABRT"), "{r:#?}");
}

#[test]
fn cargo_hang_is_stopped_by_the_timeout() {
    let t = fixture("cargo/hang");
    let p = Policy { timeout: Some(Duration::from_secs(8)), ..policy() };
    let (r, exec) = run_tests(&t, DetectOptions::default(), &p);
    assert_eq!(exec.limit, Some(LimitKind::Timeout));
    assert!(!r.success);
    assert!(r.incomplete.as_deref().unwrap().contains("timeout"), "{r:#?}");
}

#[test]
fn nextest_fail() {
    let t = fixture("cargo/fail");
    let (r, _) =
        run_tests(&t, DetectOptions { nextest: true, ..DetectOptions::default() }, &policy());
    assert_eq!(r.tool, "nextest");
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (3, 1, 1, 1), "{r:#?}");
    assert!(r.failures[0].message.contains("one plus one"));
}

#[test]
fn pytest_pass() {
    let r = tests_of("python/pass");
    assert!(r.success, "{r:#?}");
    assert_eq!((r.total, r.passed), (2, 2));
}

/// Issue 24: with pytest missing, `manage test` reported "1 failed" and suggested
/// undoing the last edit. A missing tool is its own error, with the install hint.
#[test]
fn a_missing_pytest_is_command_not_found_not_a_failed_test() {
    let t = fixture("python/pass");
    // A python3 that cannot see its site-packages: pytest is "not installed".
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("python3"))
        .find(|p| p.is_file())
        .expect("python3 on PATH");
    let bin = TempProject::new();
    bin.write("python3", format!("#!/bin/sh\nexec '{}' -S \"$@\"\n", real.display()));
    std::fs::set_permissions(
        bin.path("python3"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut env = env();
    let path = format!("{}:{}", bin.root().display(), std::env::var("PATH").unwrap_or_default());
    env.retain(|(k, _)| k != "PATH" && k != "PYTHONPATH");
    env.push(("PATH".into(), path));
    let p = sandbox::detect_project(t.root(), &DetectOptions::default()).unwrap();
    let err = sandbox::test(
        sandbox(),
        Some(&p),
        None,
        &[],
        t.root(),
        &policy(),
        &env,
        &[],
        &Hooks::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), protocol::ErrorCode::CommandNotFound, "{err}");
    assert!(err.to_string().contains("pip install pytest"), "{err}");
}

#[test]
fn pytest_fail() {
    let r = tests_of("python/fail");
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (4, 1, 2, 1), "{r:#?}");
    assert!(r.failures.iter().any(|f| f.message.contains("ValueError: bad input")));
}

#[test]
fn pytest_collection_error() {
    let r = tests_of("python/collect_error");
    assert!(!r.success);
    assert_eq!(r.failed, 1, "{r:#?}");
    assert!(r.failures[0].stack_trace.as_deref().unwrap().contains("SyntaxError"));
}

#[test]
fn go_pass() {
    let r = tests_of("go/pass");
    assert!(r.success, "{r:#?}");
    assert_eq!((r.total, r.passed), (1, 1));
}

#[test]
fn go_fail() {
    let r = tests_of("go/fail");
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (5, 2, 2, 1), "{r:#?}");
}

#[test]
fn go_compile_error() {
    let r = tests_of("go/compile_error");
    assert!(!r.success);
    assert_eq!(r.build_errors.len(), 1, "{r:#?}");
    assert_eq!(r.build_errors[0].line, Some(6));
    let b = build_of("go/pass");
    assert!(b.success, "{b:#?}");
}

fn node_fixture(rel: &str) -> TempProject {
    let t = fixture(rel);
    std::os::unix::fs::symlink(node_modules(), t.path("node_modules")).unwrap();
    t
}

#[test]
fn jest_fail() {
    let t = node_fixture("node/jest_fail");
    let (r, _) = run_tests(&t, DetectOptions::default(), &policy());
    assert_eq!(r.tool, "jest");
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (3, 1, 1, 1), "{r:#?}");
    assert_eq!(r.failures[0].line, Some(8));
}

#[test]
fn jest_syntax_error() {
    let t = node_fixture("node/jest_syntax_error");
    let (r, _) = run_tests(&t, DetectOptions::default(), &policy());
    assert!(!r.success);
    assert_eq!(r.failed, 1, "{r:#?}");
}

#[test]
fn vitest_fail() {
    let t = node_fixture("node/vitest_fail");
    let (r, _) = run_tests(&t, DetectOptions::default(), &policy());
    assert_eq!(r.tool, "vitest");
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (3, 1, 1, 1), "{r:#?}");
}

#[test]
fn generic_command_uses_exit_code_and_closing_line() {
    let t = TempProject::new();
    let cmd: Vec<String> =
        ["sh", "-c", "echo '3 passed, 1 failed'; exit 1"].iter().map(|s| s.to_string()).collect();
    let (r, exec) = sandbox::test(
        sandbox(),
        None,
        Some(&cmd),
        &[],
        t.root(),
        &policy(),
        &env(),
        &[],
        &Hooks::default(),
    )
    .unwrap();
    assert_eq!(exec.exit_code, Some(1));
    assert!(!r.success);
    assert_eq!((r.total, r.passed, r.failed), (4, 3, 1));
    assert_eq!(r.failures[0].message, "exit code 1");
}

#[test]
fn typescript_build_errors() {
    let t = node_fixture("node/ts_error");
    let p = sandbox::detect_project(t.root(), &DetectOptions::default()).unwrap();
    assert!(p.typescript);
    let (b, _) =
        sandbox::build(sandbox(), &p, None, &policy(), &env(), &[], &Hooks::default()).unwrap();
    assert_eq!(b.tool, "tsc");
    assert!(!b.success);
    assert_eq!(b.errors.len(), 2, "{b:#?}");
    assert_eq!(b.errors[1].code.as_deref(), Some("TS2322"));
    assert_eq!((b.errors[1].file.as_deref(), b.errors[1].line), (Some("src/calc.ts"), Some(6)));
}
