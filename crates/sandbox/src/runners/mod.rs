//! Build and test runners: detect what a project is, choose the command that makes
//! its tool report machine-readable results, run it in the sandbox, parse.
//!
//! | project | detected by | build | test (results from) |
//! | --- | --- | --- | --- |
//! | cargo | `Cargo.toml` | `cargo build --message-format=json` | `cargo test --message-format=json` (libtest text) or `cargo nextest run` (libtest JSON) |
//! | python | `pyproject.toml`, `pytest.ini`, `setup.cfg`, `setup.py`, `tox.ini`, `conftest.py`, or `test_*.py`/`*_test.py` at the root or in `tests/`, `test/` | — | `python3 -m pytest --junitxml` (JUnit XML) |
//! | .NET | `*.sln`, `*.csproj`, `*.fsproj` | `dotnet build` (MSBuild diagnostics) | `dotnet test --logger trx` (TRX) |
//! | go | `go.mod` | `go build ./...` | `go test -json ./...` |
//! | node | `package.json` with jest or vitest | `tsc --noEmit` when TypeScript is there | `jest --json` / `vitest run --reporter=json` |
//!
//! A tool that is not installed (`python3 -m pytest` without pytest, `cargo
//! nextest` without the plugin) is `COMMAND_NOT_FOUND` with the command to install
//! it ([`missing_tool`]), never a failed test run.
//!
//! Parsers are pure functions of the tool's output and live in `parse/`; each is
//! tested on real recorded output. Result files (JUnit, TRX, JSON) are written to a
//! per-run directory outside the workspace that the sandbox makes writable.

mod parse;

use std::path::{Path, PathBuf};

use protocol::{BuildResult, Diagnostic, ExecResult, LimitKind, TestResult};
use serde::Serialize;

pub use parse::{
    parse_cargo_messages, parse_go_build, parse_go_test_json, parse_jest_json, parse_junit_xml,
    parse_libtest, parse_msbuild_lines, parse_nextest_libtest_json, parse_trx,
};

use crate::{Error, Hooks, Policy, RunRequest, Sandbox, StdinMode, policy::Network};

/// What a project is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProjectKind {
    Cargo,
    Python,
    Dotnet,
    Go,
    Node,
}

/// How tests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TestTool {
    CargoTest,
    Nextest,
    Pytest,
    DotnetTest,
    GoTest,
    Jest,
    Vitest,
}

/// A detected project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Project {
    pub root: PathBuf,
    pub kind: ProjectKind,
    pub test_tool: TestTool,
    /// The `.sln`/`.csproj` to build (.NET), when there is exactly one at the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<PathBuf>,
    /// Node: TypeScript is installed, so `tsc --noEmit` is the build.
    pub typescript: bool,
}

/// Preferences for detection.
#[derive(Debug, Clone, Copy, Default)]
pub struct DetectOptions {
    /// Use `cargo nextest` for cargo projects.
    pub nextest: bool,
}

/// Looks at the files in `root` (nothing is run).
pub fn detect_project(root: &Path, opts: DetectOptions) -> Result<Project, Error> {
    let has = |n: &str| root.join(n).is_file();
    let names: Vec<String> = std::fs::read_dir(root)
        .map_err(|_| Error::NotFound { path: root.to_path_buf() })?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    let project = |kind, test_tool| Project {
        root: root.to_path_buf(),
        kind,
        test_tool,
        target: None,
        typescript: false,
    };
    if has("Cargo.toml") {
        let tool = if opts.nextest { TestTool::Nextest } else { TestTool::CargoTest };
        return Ok(project(ProjectKind::Cargo, tool));
    }
    if has("go.mod") {
        return Ok(project(ProjectKind::Go, TestTool::GoTest));
    }
    let dotnet: Vec<&String> = names
        .iter()
        .filter(|n| n.ends_with(".sln") || n.ends_with(".csproj") || n.ends_with(".fsproj"))
        .collect();
    if !dotnet.is_empty() {
        let mut p = project(ProjectKind::Dotnet, TestTool::DotnetTest);
        let slns: Vec<&&String> = dotnet.iter().filter(|n| n.ends_with(".sln")).collect();
        p.target = match (slns.len(), dotnet.len()) {
            (1, _) => Some(root.join(slns[0])),
            (0, 1) => Some(root.join(dotnet[0])),
            _ => None,
        };
        return Ok(p);
    }
    if has("package.json") {
        let text = std::fs::read_to_string(root.join("package.json")).unwrap_or_default();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let dep = |name: &str| {
            ["dependencies", "devDependencies"].iter().any(|k| json[k].get(name).is_some())
        };
        let tool = if dep("vitest") {
            Some(TestTool::Vitest)
        } else if dep("jest") || json.get("jest").is_some() {
            Some(TestTool::Jest)
        } else {
            None
        };
        if let Some(tool) = tool {
            let mut p = project(ProjectKind::Node, tool);
            p.typescript = dep("typescript") && has("tsconfig.json");
            return Ok(p);
        }
    }
    if ["pyproject.toml", "pytest.ini", "setup.cfg", "setup.py", "tox.ini", "conftest.py"]
        .iter()
        .any(|n| has(n))
        || has_pytest_files(root, &names)
    {
        return Ok(project(ProjectKind::Python, TestTool::Pytest));
    }
    Err(Error::UnknownProject { root: root.to_path_buf() })
}

/// A plain pytest layout without any configuration file: `test_*.py` or
/// `*_test.py` (pytest's default `python_files`) at the root or directly in
/// `tests/` or `test/`. Nothing deeper is searched: detection only lists
/// directories, it never walks the tree.
fn has_pytest_files(root: &Path, names: &[String]) -> bool {
    let is_test = |n: &str| {
        n.ends_with(".py")
            && (n.starts_with("test_")
                || n.strip_suffix(".py").is_some_and(|s| s.ends_with("_test")))
    };
    if names.iter().any(|n| is_test(n)) {
        return true;
    }
    ["tests", "test"].iter().any(|d| {
        std::fs::read_dir(root.join(d))
            .is_ok_and(|rd| rd.flatten().any(|e| e.file_name().to_str().is_some_and(is_test)))
    })
}

/// Why a test or build run says nothing about the code: the tool itself is not
/// installed where the command looked (`python3 -m pytest` without pytest,
/// `cargo nextest` without the plugin, `npx jest` without jest). `None` when the
/// output does not say so. A pure function of the tool and its output, so a
/// missing tool never reads as a failing test.
pub fn missing_tool(
    tool: &str,
    exit_code: Option<i32>,
    stdout: &str,
    stderr: &str,
) -> Option<String> {
    if exit_code == Some(0) {
        return None;
    }
    let text = format!("{stderr}\n{stdout}");
    let has = |needle: &str| text.contains(needle);
    let hint = match tool {
        "pytest" if has("No module named pytest") => {
            "pytest is not installed for python3: `python3 -m pip install pytest`"
        }
        "nextest" if has("no such command: `nextest`") || has("no such subcommand: `nextest`") => {
            "cargo-nextest is not installed: `cargo install cargo-nextest --locked`"
        }
        "jest" | "vitest"
            if has("could not determine executable to run")
                || (has("command not found") && has(tool))
                || has(&format!("Cannot find module '{tool}")) =>
        {
            if tool == "jest" {
                "jest is not installed in this project: `npm install --save-dev jest`"
            } else {
                "vitest is not installed in this project: `npm install --save-dev vitest`"
            }
        }
        "tsc"
            if has("could not determine executable to run")
                || has("This is not the tsc command you are looking for") =>
        {
            "TypeScript is not installed in this project: `npm install --save-dev typescript`"
        }
        "dotnet" if has("No .NET SDKs were found") => {
            "no .NET SDK is installed: see https://dotnet.microsoft.com/download"
        }
        _ => return None,
    };
    Some(hint.to_owned())
}

/// A command line plus what it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The results file the tool writes, inside the results directory.
    pub results_file: Option<PathBuf>,
    pub tool: &'static str,
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// The build command for `p`; `None` when the project has nothing to build
/// (Python, JavaScript without TypeScript).
pub fn build_invocation(p: &Project, results: &Path, network: Network) -> Option<Invocation> {
    let offline = network == Network::Off;
    let env = common_env(p, results);
    Some(match p.kind {
        ProjectKind::Cargo => {
            let mut argv = strs(&["cargo", "build", "--all-targets", "--message-format=json"]);
            if offline {
                argv.push("--offline".into());
            }
            Invocation { argv, env, results_file: None, tool: "cargo" }
        }
        ProjectKind::Go => Invocation {
            argv: strs(&["go", "build", "./..."]),
            env,
            results_file: None,
            tool: "go",
        },
        ProjectKind::Dotnet => {
            let mut argv = strs(&["dotnet", "build", "-nologo", "-clp:NoSummary"]);
            if offline {
                argv.push("--no-restore".into());
            }
            if let Some(t) = &p.target {
                argv.push(t.display().to_string());
            }
            Invocation { argv, env, results_file: None, tool: "dotnet" }
        }
        ProjectKind::Node if p.typescript => Invocation {
            argv: vec![node_bin(p, "tsc"), "--noEmit".into(), "--pretty".into(), "false".into()],
            env,
            results_file: None,
            tool: "tsc",
        },
        ProjectKind::Node | ProjectKind::Python => return None,
    })
}

/// The test command for `p`.
pub fn test_invocation(p: &Project, results: &Path, network: Network) -> Invocation {
    let offline = network == Network::Off;
    let mut env = common_env(p, results);
    match p.test_tool {
        TestTool::CargoTest => {
            let mut argv = strs(&["cargo", "test", "--message-format=json"]);
            if offline {
                argv.push("--offline".into());
            }
            argv.extend(strs(&["--", "--color=never"]));
            Invocation { argv, env, results_file: None, tool: "cargo" }
        }
        TestTool::Nextest => {
            env.push(("NEXTEST_EXPERIMENTAL_LIBTEST_JSON".into(), "1".into()));
            let mut argv = strs(&[
                "cargo",
                "nextest",
                "run",
                "--no-fail-fast",
                "--message-format=libtest-json-plus",
                "--cargo-message-format=json",
            ]);
            if offline {
                argv.push("--offline".into());
            }
            Invocation { argv, env, results_file: None, tool: "nextest" }
        }
        TestTool::Pytest => {
            let file = results.join("junit.xml");
            let argv = vec![
                "python3".into(),
                "-m".into(),
                "pytest".into(),
                "-q".into(),
                "-p".into(),
                "no:cacheprovider".into(),
                format!("--junitxml={}", file.display()),
            ];
            Invocation { argv, env, results_file: Some(file), tool: "pytest" }
        }
        TestTool::DotnetTest => {
            let file = results.join("results.trx");
            let mut argv = strs(&["dotnet", "test", "-nologo"]);
            if offline {
                argv.push("--no-restore".into());
            }
            argv.push("--logger".into());
            argv.push(format!("trx;LogFileName={}", file.display()));
            if let Some(t) = &p.target {
                argv.push(t.display().to_string());
            }
            Invocation { argv, env, results_file: Some(file), tool: "dotnet" }
        }
        TestTool::GoTest => Invocation {
            argv: strs(&["go", "test", "-json", "./..."]),
            env,
            results_file: None,
            tool: "go",
        },
        TestTool::Jest => {
            let file = results.join("jest.json");
            let argv = vec![
                node_bin(p, "jest"),
                "--ci".into(),
                "--json".into(),
                format!("--outputFile={}", file.display()),
            ];
            Invocation { argv, env, results_file: Some(file), tool: "jest" }
        }
        TestTool::Vitest => {
            let file = results.join("vitest.json");
            let argv = vec![
                node_bin(p, "vitest"),
                "run".into(),
                "--reporter=json".into(),
                format!("--outputFile={}", file.display()),
            ];
            Invocation { argv, env, results_file: Some(file), tool: "vitest" }
        }
    }
}

fn node_bin(p: &Project, name: &str) -> String {
    p.root.join("node_modules/.bin").join(name).display().to_string()
}

/// Caches the tools insist on writing go to the results directory (the rest of the
/// filesystem is read-only); colors off so the parsers see plain text.
fn common_env(p: &Project, results: &Path) -> Vec<(String, String)> {
    let mut env = vec![("NO_COLOR".to_owned(), "1".to_owned())];
    match p.kind {
        ProjectKind::Cargo => {
            env.push(("CARGO_TERM_COLOR".into(), "never".into()));
            // A `CARGO_TARGET_DIR` inherited from the user's shell usually points
            // outside the workspace, which the sandbox keeps read-only: cargo would
            // fail before compiling anything. Build in the project's own `target/`.
            env.push(("CARGO_TARGET_DIR".into(), p.root.join("target").display().to_string()));
        }
        ProjectKind::Go => {
            env.push(("GOCACHE".into(), results.join("go-build").display().to_string()));
            env.push(("GOTOOLCHAIN".into(), "local".into()));
        }
        ProjectKind::Dotnet => {
            env.push(("DOTNET_CLI_TELEMETRY_OPTOUT".into(), "1".into()));
            env.push(("DOTNET_NOLOGO".into(), "1".into()));
            env.push(("DOTNET_CLI_HOME".into(), results.join("dotnet-home").display().to_string()));
        }
        ProjectKind::Node => env.push(("CI".into(), "1".into())),
        ProjectKind::Python => env.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into())),
    }
    env
}

/// The full build: run, then parse.
pub fn build(
    sb: &Sandbox,
    p: &Project,
    policy: &Policy,
    env: &[(String, String)],
    env_removed: &[String],
    hooks: &Hooks<'_>,
) -> Result<(BuildResult, Option<ExecResult>), Error> {
    let results = results_dir()?;
    let Some(inv) = build_invocation(p, results.path(), policy.network) else {
        let tool = match p.kind {
            ProjectKind::Python => "python",
            _ => "node",
        };
        return Ok((BuildResult { success: true, tool: tool.into(), ..Default::default() }, None));
    };
    let exec = run_invocation(sb, p, &inv, results.path(), policy, env, env_removed, hooks)?;
    tool_present(inv.tool, &exec)?;
    let mut r = match p.kind {
        ProjectKind::Cargo => {
            let (errors, warnings, finished) = parse_cargo_messages(&exec.stdout.text);
            BuildResult {
                success: finished == Some(true),
                tool: "cargo".into(),
                errors,
                warnings,
                duration_ms: 0,
            }
        }
        ProjectKind::Go => {
            let errors = parse_go_build(&exec.stderr.text);
            BuildResult {
                success: exec.success(),
                tool: "go".into(),
                errors,
                warnings: vec![],
                duration_ms: 0,
            }
        }
        ProjectKind::Dotnet | ProjectKind::Node => {
            let text = format!("{}\n{}", exec.stdout.text, exec.stderr.text);
            let (errors, warnings) = parse_msbuild_lines(&text, &p.root);
            BuildResult {
                success: exec.success(),
                tool: inv.tool.into(),
                errors,
                warnings,
                duration_ms: 0,
            }
        }
        ProjectKind::Python => unreachable!("no build invocation"),
    };
    r.duration_ms = exec.duration_ms;
    // A failed build without a parsed error (a crash, a limit) still needs a reason.
    if !exec.success() && r.errors.is_empty() {
        r.success = false;
        r.errors.push(unparsed_failure(&exec, inv.tool));
    }
    Ok((r, Some(exec)))
}

/// The full test run: run, then parse; a command override runs as given and is
/// judged by its exit code.
#[allow(clippy::too_many_arguments)]
pub fn test(
    sb: &Sandbox,
    p: Option<&Project>,
    command: Option<&[String]>,
    workspace: &Path,
    policy: &Policy,
    env: &[(String, String)],
    env_removed: &[String],
    hooks: &Hooks<'_>,
) -> Result<(TestResult, ExecResult), Error> {
    let results = results_dir()?;
    if let Some(cmd) = command {
        let inv =
            Invocation { argv: cmd.to_vec(), env: vec![], results_file: None, tool: "command" };
        let fake = Project {
            root: workspace.to_path_buf(),
            kind: ProjectKind::Python,
            test_tool: TestTool::Pytest,
            target: None,
            typescript: false,
        };
        let exec =
            run_invocation(sb, &fake, &inv, results.path(), policy, env, env_removed, hooks)?;
        return Ok((command_result(&exec), exec));
    }
    let p = p.expect("a project or a command");
    let inv = test_invocation(p, results.path(), policy.network);
    let exec = run_invocation(sb, p, &inv, results.path(), policy, env, env_removed, hooks)?;
    tool_present(inv.tool, &exec)?;
    let file_text = inv.results_file.as_ref().and_then(|f| std::fs::read_to_string(f).ok());
    let mut r = match p.test_tool {
        TestTool::CargoTest => {
            let (errors, _, _) = parse_cargo_messages(&exec.stdout.text);
            let mut r = parse_libtest(&exec.stdout.text, &exec.stderr.text);
            r.build_errors = errors;
            r
        }
        TestTool::Nextest => {
            let (errors, _, _) = parse_cargo_messages(&exec.stdout.text);
            let mut r = parse_nextest_libtest_json(&exec.stdout.text);
            r.build_errors = errors;
            r
        }
        TestTool::Pytest => match &file_text {
            Some(x) => parse_junit_xml(x, "pytest").unwrap_or_else(|e| incomplete("pytest", e)),
            None => incomplete("pytest", "pytest wrote no JUnit report".into()),
        },
        TestTool::DotnetTest => match &file_text {
            Some(x) => parse_trx(x).unwrap_or_else(|e| incomplete("dotnet", e)),
            None => {
                let text = format!("{}\n{}", exec.stdout.text, exec.stderr.text);
                let (errors, _) = parse_msbuild_lines(&text, &p.root);
                let mut r = incomplete("dotnet", "dotnet test wrote no TRX report".into());
                r.build_errors = errors;
                r
            }
        },
        TestTool::GoTest => {
            let mut r = parse_go_test_json(&exec.stdout.text);
            r.build_errors = parse_go_build(&exec.stderr.text);
            r
        }
        TestTool::Jest | TestTool::Vitest => {
            let tool = inv.tool;
            match &file_text {
                Some(x) => parse_jest_json(x, tool).unwrap_or_else(|e| incomplete(tool, e)),
                None => incomplete(tool, format!("{tool} wrote no JSON report")),
            }
        }
    };
    finish_test_result(&mut r, &exec);
    Ok((r, exec))
}

/// `COMMAND_NOT_FOUND` when the run only showed that the tool is not installed:
/// reported as a test failure, it would send an agent to undo a good edit.
fn tool_present(tool: &str, exec: &ExecResult) -> Result<(), Error> {
    match missing_tool(tool, exec.exit_code, &exec.stdout.text, &exec.stderr.text) {
        Some(hint) => Err(Error::CommandNotFound { program: tool.to_owned(), reason: hint }),
        None => Ok(()),
    }
}

/// Success needs: every test passed, at least one ran, nothing cut short, and the
/// tool agreeing (its exit status).
fn finish_test_result(r: &mut TestResult, exec: &ExecResult) {
    if r.duration_ms == 0 {
        r.duration_ms = exec.duration_ms;
    }
    if let Some(l) = exec.limit {
        r.incomplete = Some(format!(
            "stopped by the sandbox's {l} limit ({})",
            exec.limit_detail.as_deref().unwrap_or("")
        ));
    } else if r.incomplete.is_none() && !r.build_errors.is_empty() {
        r.incomplete =
            Some(format!("{} compile error(s) kept tests from running", r.build_errors.len()));
    } else if r.incomplete.is_none() && exec.signal.is_some() {
        r.incomplete =
            Some(format!("the test tool was killed by {}", exec.signal.as_deref().unwrap_or("")));
    } else if r.incomplete.is_none() && r.failed == 0 && !exec.success() {
        r.incomplete = Some(format!(
            "the test tool failed (exit {}) with no failing test reported",
            exec.exit_code.map_or("?".to_owned(), |c| c.to_string())
        ));
    }
    r.success = r.failed == 0 && r.total > 0 && r.incomplete.is_none() && exec.success();
}

fn incomplete(tool: &str, why: String) -> TestResult {
    TestResult { tool: tool.into(), incomplete: Some(why), ..Default::default() }
}

/// A plain command's result: exit code semantics, counts from a closing
/// "N passed, N failed" line when the command prints one.
fn command_result(exec: &ExecResult) -> TestResult {
    let mut r =
        TestResult { tool: "command".into(), duration_ms: exec.duration_ms, ..Default::default() };
    let text = format!("{}\n{}", exec.stdout.text, exec.stderr.text);
    if let Some((passed, failed, skipped)) = parse::closing_counts(&text) {
        r.passed = passed;
        r.failed = failed;
        r.skipped = skipped;
        r.total = passed + failed + skipped;
    }
    if !exec.success() {
        if r.failed == 0 {
            r.failed = 1;
            r.total = r.total.max(1);
        }
        r.failures.push(protocol::TestFailure {
            name: exec.command.join(" "),
            message: match (exec.limit, exec.exit_code, &exec.signal) {
                (Some(l), _, _) => format!("stopped by the {l} limit"),
                (None, Some(c), _) => format!("exit code {c}"),
                (None, None, Some(s)) => format!("killed by {s}"),
                _ => "failed".into(),
            },
            stack_trace: Some(tail(&exec.stderr.text, 40)),
            file: None,
            line: None,
        });
    } else if r.total == 0 {
        r.total = 1;
        r.passed = 1;
    }
    r.success = exec.success() && r.failed == 0;
    if let Some(l) = exec.limit {
        r.incomplete = Some(format!("stopped by the sandbox's {l} limit"));
    }
    r
}

fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

fn unparsed_failure(exec: &ExecResult, tool: &str) -> Diagnostic {
    let message = match (exec.limit, exec.exit_code, &exec.signal) {
        (Some(LimitKind::Timeout), _, _) => format!("{tool} was stopped by the timeout"),
        (Some(l), _, _) => format!("{tool} was stopped by the {l} limit"),
        (None, Some(c), _) => format!("{tool} failed (exit {c}): {}", tail(&exec.stderr.text, 5)),
        (None, None, Some(s)) => format!("{tool} was killed by {s}"),
        _ => format!("{tool} failed"),
    };
    Diagnostic {
        severity: protocol::Severity::Error,
        code: None,
        message,
        file: None,
        line: None,
        column: None,
    }
}

fn results_dir() -> Result<tempfile::TempDir, Error> {
    tempfile::Builder::new()
        .prefix("ironbees-results-")
        .tempdir()
        .map_err(|e| Error::io("creating the results directory", e))
}

#[allow(clippy::too_many_arguments)]
fn run_invocation(
    sb: &Sandbox,
    p: &Project,
    inv: &Invocation,
    results: &Path,
    policy: &Policy,
    env: &[(String, String)],
    env_removed: &[String],
    hooks: &Hooks<'_>,
) -> Result<ExecResult, Error> {
    let mut policy = policy.clone();
    policy.writable.push(results.to_path_buf());
    // Parsers need the whole output: keep far more than for a plain command.
    policy.capture_bytes = policy.capture_bytes.max(64 << 20);
    let mut env = env.to_vec();
    for (k, v) in &inv.env {
        env.retain(|(kk, _)| kk != k);
        if !v.is_empty() {
            env.push((k.clone(), v.clone()));
        }
    }
    let req = RunRequest {
        argv: inv.argv.clone(),
        workspace: p.root.clone(),
        cwd: None,
        env,
        env_removed: env_removed.to_vec(),
        stdin: StdinMode::Null,
    };
    sb.run(&req, &policy, hooks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_table() {
        let table: &[(&str, Option<(ProjectKind, TestTool)>)] = &[
            ("//- Cargo.toml\n[package]", Some((ProjectKind::Cargo, TestTool::CargoTest))),
            ("//- go.mod\nmodule x", Some((ProjectKind::Go, TestTool::GoTest))),
            ("//- app.csproj\n<Project/>", Some((ProjectKind::Dotnet, TestTool::DotnetTest))),
            ("//- pyproject.toml\n[project]", Some((ProjectKind::Python, TestTool::Pytest))),
            ("//- pytest.ini\n[pytest]", Some((ProjectKind::Python, TestTool::Pytest))),
            (
                "//- package.json\n{\"devDependencies\": {\"jest\": \"^29\"}}",
                Some((ProjectKind::Node, TestTool::Jest)),
            ),
            (
                "//- package.json\n{\"devDependencies\": {\"vitest\": \"^3\"}}",
                Some((ProjectKind::Node, TestTool::Vitest)),
            ),
            ("//- package.json\n{\"dependencies\": {}}", None),
            // A plain pytest layout, no configuration file (issue 24: `ironbees test`
            // did not see what `manage test` ran).
            ("//- test_calc.py\ndef test_x(): pass", Some((ProjectKind::Python, TestTool::Pytest))),
            ("//- calc_test.py\ndef test_x(): pass", Some((ProjectKind::Python, TestTool::Pytest))),
            (
                "//- calc.py\n\n//- tests/test_calc.py\ndef test_x(): pass",
                Some((ProjectKind::Python, TestTool::Pytest)),
            ),
            ("//- test/test_calc.py\n", Some((ProjectKind::Python, TestTool::Pytest))),
            ("//- tests/helpers.py\n", None),
            ("//- testing.py\n", None),
            ("//- README.md\nhello", None),
        ];
        for (fixture, want) in table {
            let t = test_support::TempProject::with_fixture(fixture);
            let got = detect_project(t.root(), DetectOptions::default())
                .ok()
                .map(|p| (p.kind, p.test_tool));
            assert_eq!(got, *want, "{fixture}");
        }
        let t = test_support::TempProject::with_fixture("//- Cargo.toml\n[package]");
        let p = detect_project(t.root(), DetectOptions { nextest: true }).unwrap();
        assert_eq!(p.test_tool, TestTool::Nextest);
        let err = detect_project(test_support::TempProject::new().root(), DetectOptions::default())
            .unwrap_err();
        assert_eq!(err.code(), protocol::ErrorCode::UnknownProject);
    }

    #[test]
    fn a_missing_test_tool_is_not_a_test_failure() {
        // (tool, exit code, stdout, stderr, is the tool missing)
        let table: &[(&str, Option<i32>, &str, &str, bool)] = &[
            ("pytest", Some(1), "", "/usr/bin/python3: No module named pytest\n", true),
            ("pytest", Some(1), "1 failed, 2 passed", "", false),
            // A test that itself imports a missing module is a failure, not a missing tool.
            ("pytest", Some(2), "E   ModuleNotFoundError: No module named 'numpy'", "", false),
            ("pytest", Some(0), "", "No module named pytest", false),
            ("nextest", Some(101), "", "error: no such command: `nextest`\n", true),
            ("jest", Some(1), "", "npm error could not determine executable to run\n", true),
            ("vitest", Some(1), "", "FAIL  src/a.test.ts", false),
            ("tsc", Some(1), "", "npm error could not determine executable to run", true),
            ("cargo", Some(101), "", "error: could not compile `x`", false),
        ];
        for (tool, code, out, err, missing) in table {
            let got = missing_tool(tool, *code, out, err);
            assert_eq!(got.is_some(), *missing, "{tool} {code:?} {out:?} {err:?} -> {got:?}");
        }
    }

    #[test]
    fn dotnet_target_is_the_single_solution() {
        let t = test_support::TempProject::with_fixture(
            "//- a.sln\n\n//- src/a.csproj\n\n//- b.csproj\n",
        );
        let p = detect_project(t.root(), DetectOptions::default()).unwrap();
        assert_eq!(p.target, Some(t.root().join("a.sln")));
        let t = test_support::TempProject::with_fixture("//- a.csproj\n\n//- b.csproj\n");
        assert_eq!(detect_project(t.root(), DetectOptions::default()).unwrap().target, None);
    }

    #[test]
    fn cargo_builds_in_the_workspace_whatever_the_callers_target_dir() {
        // An inherited CARGO_TARGET_DIR outside the workspace is read-only inside the
        // sandbox; the invocation's own value (applied after the inherited
        // environment) keeps cargo in the project's `target/`.
        let t = test_support::TempProject::with_fixture("//- Cargo.toml\n[package]");
        let p = detect_project(t.root(), DetectOptions::default()).unwrap();
        let want = t.root().join("target").display().to_string();
        for env in [
            test_invocation(&p, Path::new("/r"), Network::Off).env,
            build_invocation(&p, Path::new("/r"), Network::Off).unwrap().env,
        ] {
            assert!(env.contains(&("CARGO_TARGET_DIR".to_owned(), want.clone())), "{env:?}");
        }
    }

    #[test]
    fn invocations_write_results_outside_the_workspace() {
        let t = test_support::TempProject::with_fixture("//- pyproject.toml\n");
        let p = detect_project(t.root(), DetectOptions::default()).unwrap();
        let inv = test_invocation(&p, Path::new("/r"), Network::Off);
        assert_eq!(inv.results_file.as_deref(), Some(Path::new("/r/junit.xml")));
        assert!(inv.argv.contains(&"--junitxml=/r/junit.xml".to_owned()));
        let t = test_support::TempProject::with_fixture("//- Cargo.toml\n");
        let p = detect_project(t.root(), DetectOptions::default()).unwrap();
        assert!(
            build_invocation(&p, Path::new("/r"), Network::Off)
                .unwrap()
                .argv
                .contains(&"--offline".to_owned())
        );
        assert!(
            !build_invocation(&p, Path::new("/r"), Network::On)
                .unwrap()
                .argv
                .contains(&"--offline".to_owned())
        );
    }

    #[test]
    fn command_results_use_exit_codes_and_closing_lines() {
        let ok = ExecResult {
            exit_code: Some(0),
            command: vec!["make".into(), "check".into()],
            ..Default::default()
        };
        let r = command_result(&ok);
        assert!(r.success);
        assert_eq!((r.total, r.passed), (1, 1));
        let mut bad = ok.clone();
        bad.exit_code = Some(2);
        bad.stdout.text = "ran things\n3 passed, 2 failed\n".into();
        let r = command_result(&bad);
        assert!(!r.success);
        assert_eq!((r.total, r.passed, r.failed), (5, 3, 2));
        assert_eq!(r.failures[0].message, "exit code 2");
    }
}
