//! Build and test runners: detect what a project is, choose the command that makes
//! its tool report machine-readable results, run it in the sandbox, parse.
//!
//! | project | detected by | build | test (results from) |
//! | --- | --- | --- | --- |
//! | cargo | `Cargo.toml` | `cargo build --tests --message-format=json` (what the tests need: not benches, which may need nightly) | `cargo test --message-format=json` (libtest text) or `cargo nextest run` (libtest JSON) |
//! | python | `pyproject.toml`, `pytest.ini`, `setup.cfg`, `setup.py`, `tox.ini`, `conftest.py`, or `test_*.py`/`*_test.py` at the root or in `tests/`, `test/` | — | `<the project's python> -m pytest --junitxml` (JUnit XML) |
//! | .NET | `*.sln`, `*.csproj`, `*.fsproj` | `dotnet build` (MSBuild diagnostics) | `dotnet test --logger trx` (TRX) |
//! | go | `go.mod` | `go build ./...` | `go test -json ./...` |
//! | node | `package.json` with jest or vitest | `tsc --noEmit` when TypeScript is there | `jest --json` / `vitest run --reporter=json` |
//!
//! Commands run in the project's environment ([`env`]): its virtualenv's
//! interpreter and `bin/`, `node_modules/.bin`, editable installs pointed at the
//! copy being tested, and a private writable `HOME` (toolchain homes kept) —
//! otherwise the user's environment, so the tests see what they would see in a
//! shell.
//!
//! A tool that is not installed (pytest not importable by the project's
//! interpreter, `cargo nextest` without the plugin, jest not in `node_modules`)
//! is `COMMAND_NOT_FOUND` with the command to install it, decided *before* the
//! run ([`preflight`]), never read from a test's output.
//!
//! Parsers are pure functions of the tool's output and live in `parse/`; each is
//! tested on real recorded output. Result files (JUnit, TRX, JSON) are written to a
//! per-run directory outside the workspace that the sandbox makes writable.

pub mod env;
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
    /// No tool detected: only the project's own configured commands run.
    Command,
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
    /// Where its commands run (the project, or a copy of it).
    pub root: PathBuf,
    /// The user's project `root` is a copy of (or `root` itself): where its
    /// environment was found and editable installs point.
    pub origin: PathBuf,
    pub kind: ProjectKind,
    pub test_tool: TestTool,
    /// The `.sln`/`.csproj` to build (.NET), when there is exactly one at the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<PathBuf>,
    /// Node: TypeScript is installed, so `tsc --noEmit` is the build.
    pub typescript: bool,
    /// The environment its commands run in (a virtualenv, `node_modules/.bin`).
    #[serde(skip)]
    pub env: Option<env::ToolEnv>,
}

/// Preferences for detection.
#[derive(Debug, Clone, Default)]
pub struct DetectOptions {
    /// Use `cargo nextest` for cargo projects.
    pub nextest: bool,
    /// The user's project when the one detected is a copy of it (an agent run's
    /// validation copy): its environment is looked for there.
    pub origin: Option<PathBuf>,
    /// The user's environment (`VIRTUAL_ENV`, `CONDA_PREFIX`, `HOME`, ...).
    pub env: Vec<(String, String)>,
}

impl Project {
    /// A project no tool was detected in, whose configured commands run at `root`.
    pub fn commands_only(root: &Path, origin: &Path) -> Project {
        Project {
            root: root.to_path_buf(),
            origin: origin.to_path_buf(),
            kind: ProjectKind::Command,
            test_tool: TestTool::Pytest,
            target: None,
            typescript: false,
            env: None,
        }
    }
}

/// Looks at the files in `root` (nothing is run).
pub fn detect_project(root: &Path, opts: &DetectOptions) -> Result<Project, Error> {
    let has = |n: &str| root.join(n).is_file();
    let names: Vec<String> = std::fs::read_dir(root)
        .map_err(|_| Error::NotFound { path: root.to_path_buf() })?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    let origin = opts.origin.clone().unwrap_or_else(|| root.to_path_buf());
    let project = |kind, test_tool| Project {
        root: root.to_path_buf(),
        origin: origin.clone(),
        kind,
        test_tool,
        target: None,
        typescript: false,
        env: None,
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
            p.env = env::node_env(root);
            return Ok(p);
        }
    }
    if ["pyproject.toml", "pytest.ini", "setup.cfg", "setup.py", "tox.ini", "conftest.py"]
        .iter()
        .any(|n| has(n))
        || has_pytest_files(root, &names)
    {
        let mut p = project(ProjectKind::Python, TestTool::Pytest);
        p.env = env::python_env(&origin, &opts.env);
        return Ok(p);
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
            // The targets the tests need, not `--all-targets`: a bench that needs a
            // nightly compiler (`#![feature]`) must not fail every validation.
            let mut argv = strs(&["cargo", "build", "--tests", "--message-format=json"]);
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
        ProjectKind::Node | ProjectKind::Python | ProjectKind::Command => return None,
    })
}

/// The test command for `p`, for only `targets` when there are some (files,
/// `file::name` node ids, test names; the tool's own selection syntax).
pub fn test_invocation(
    p: &Project,
    results: &Path,
    network: Network,
    targets: &[String],
) -> Invocation {
    let offline = network == Network::Off;
    let mut env = common_env(p, results);
    match p.test_tool {
        TestTool::CargoTest => {
            let mut argv = strs(&["cargo", "test", "--message-format=json"]);
            if offline {
                argv.push("--offline".into());
            }
            // libtest takes filters (substrings of test names) after `--`.
            argv.extend(strs(&["--", "--color=never"]));
            argv.extend(targets.iter().cloned());
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
            argv.extend(targets.iter().cloned());
            Invocation { argv, env, results_file: None, tool: "nextest" }
        }
        TestTool::Pytest => {
            let file = results.join("junit.xml");
            let mut argv = vec![
                python(p),
                "-m".into(),
                "pytest".into(),
                "-q".into(),
                "-p".into(),
                "no:cacheprovider".into(),
                // A module that cannot be imported (a missing optional dependency,
                // an old test the environment outgrew) would otherwise stop the
                // whole session before any test ran: its error is reported as a
                // failure of that module, and every other test still runs.
                "--continue-on-collection-errors".into(),
                format!("--junitxml={}", file.display()),
            ];
            argv.extend(targets.iter().cloned());
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
            if !targets.is_empty() {
                argv.push("--filter".into());
                argv.push(targets.join("|"));
            }
            if let Some(t) = &p.target {
                argv.push(t.display().to_string());
            }
            Invocation { argv, env, results_file: Some(file), tool: "dotnet" }
        }
        TestTool::GoTest => {
            let mut argv = strs(&["go", "test", "-json"]);
            if targets.is_empty() {
                argv.push("./...".into());
            } else {
                // Go selects packages (directories), not files.
                let mut dirs: Vec<String> = targets
                    .iter()
                    .map(|t| {
                        let dir = t.rsplit_once('/').map_or(".", |(d, _)| d);
                        format!("./{}", dir.trim_start_matches("./"))
                    })
                    .collect();
                dirs.dedup();
                argv.extend(dirs);
            }
            Invocation { argv, env, results_file: None, tool: "go" }
        }
        TestTool::Jest => {
            let file = results.join("jest.json");
            let mut argv = vec![
                node_bin(p, "jest"),
                "--ci".into(),
                "--json".into(),
                format!("--outputFile={}", file.display()),
            ];
            argv.extend(targets.iter().cloned());
            Invocation { argv, env, results_file: Some(file), tool: "jest" }
        }
        TestTool::Vitest => {
            let file = results.join("vitest.json");
            let mut argv = vec![
                node_bin(p, "vitest"),
                "run".into(),
                "--reporter=json".into(),
                format!("--outputFile={}", file.display()),
            ];
            argv.extend(targets.iter().cloned());
            Invocation { argv, env, results_file: Some(file), tool: "vitest" }
        }
    }
}

/// The interpreter that runs a Python project's tests: its environment's, else
/// `python3` from `PATH`.
fn python(p: &Project) -> String {
    match p.env.as_ref().and_then(|e| e.python.as_ref()) {
        Some(py) => py.display().to_string(),
        None => "python3".into(),
    }
}

fn node_bin(p: &Project, name: &str) -> String {
    p.root.join("node_modules/.bin").join(name).display().to_string()
}

/// What a tool needs that the sandbox would otherwise deny or the user's shell
/// would have set: caches go to the results directory (the rest of the
/// filesystem is read-only), cargo builds in the workspace, and machine-readable
/// output where a parser reads text. Nothing else: the tests see the user's
/// environment (no `NO_COLOR`, no `PYTHONDONTWRITEBYTECODE` a test may check).
fn common_env(p: &Project, results: &Path) -> Vec<(String, String)> {
    let mut env = Vec::new();
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
        ProjectKind::Python | ProjectKind::Command => {}
    }
    if let Some(tool_env) = &p.env {
        env.extend(tool_env.vars.iter().cloned());
        if p.kind == ProjectKind::Python
            && let Some(prefix) = &tool_env.prefix
        {
            let paths = env::editable_paths(prefix, &p.origin, &p.root);
            if !paths.is_empty() {
                let joined: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                env.push((PYTHONPATH_FIRST.into(), joined.join(":")));
            }
        }
    }
    env
}

/// A marker variable the invocation's environment carries: its value goes first
/// on the inherited `PYTHONPATH` (never replacing what the user set).
const PYTHONPATH_FIRST: &str = "\0PYTHONPATH_FIRST";

/// The full build: run (the project's own `command` when configured), then parse.
#[allow(clippy::too_many_arguments)]
pub fn build(
    sb: &Sandbox,
    p: &Project,
    command: Option<&[String]>,
    policy: &Policy,
    env: &[(String, String)],
    env_removed: &[String],
    hooks: &Hooks<'_>,
) -> Result<(BuildResult, Option<ExecResult>), Error> {
    let results = results_dir()?;
    if let Some(cmd) = command {
        let inv = Invocation {
            argv: cmd.to_vec(),
            env: common_env(p, results.path()),
            results_file: None,
            tool: "command",
        };
        let exec = run_invocation(sb, p, &inv, results.path(), policy, env, env_removed, hooks)?;
        let text = format!("{}\n{}", exec.stdout.text, exec.stderr.text);
        let (mut errors, warnings) = parse_msbuild_lines(&text, &p.root);
        if !exec.success() && errors.is_empty() {
            errors.push(unparsed_failure(&exec, "the build command"));
        }
        let r = BuildResult {
            success: exec.success(),
            tool: "command".into(),
            errors,
            warnings,
            duration_ms: exec.duration_ms,
        };
        return Ok((r, Some(exec)));
    }
    let Some(inv) = build_invocation(p, results.path(), policy.network) else {
        let tool = match p.kind {
            ProjectKind::Python => "python",
            ProjectKind::Command => "none",
            _ => "node",
        };
        return Ok((BuildResult { success: true, tool: tool.into(), ..Default::default() }, None));
    };
    preflight(sb, p, inv.tool, policy, env, env_removed, hooks)?;
    let exec = run_invocation(sb, p, &inv, results.path(), policy, env, env_removed, hooks)?;
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
        ProjectKind::Python | ProjectKind::Command => unreachable!("no build invocation"),
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
/// judged by its exit code (and a closing "N passed, N failed" line). `targets`
/// narrows a detected project's run to those tests.
#[allow(clippy::too_many_arguments)]
pub fn test(
    sb: &Sandbox,
    p: Option<&Project>,
    command: Option<&[String]>,
    targets: &[String],
    workspace: &Path,
    policy: &Policy,
    env: &[(String, String)],
    env_removed: &[String],
    hooks: &Hooks<'_>,
) -> Result<(TestResult, ExecResult), Error> {
    let results = results_dir()?;
    if let Some(cmd) = command {
        let fake;
        let project = match p {
            Some(p) => p,
            None => {
                fake = Project {
                    root: workspace.to_path_buf(),
                    origin: workspace.to_path_buf(),
                    kind: ProjectKind::Python,
                    test_tool: TestTool::Pytest,
                    target: None,
                    typescript: false,
                    env: None,
                };
                &fake
            }
        };
        let inv = Invocation {
            argv: cmd.to_vec(),
            env: if p.is_some() { common_env(project, results.path()) } else { vec![] },
            results_file: None,
            tool: "command",
        };
        let exec =
            run_invocation(sb, project, &inv, results.path(), policy, env, env_removed, hooks)?;
        return Ok((command_result(&exec), exec));
    }
    let p = p.expect("a project or a command");
    let inv = test_invocation(p, results.path(), policy.network, targets);
    preflight(sb, p, inv.tool, policy, env, env_removed, hooks)?;
    let exec = run_invocation(sb, p, &inv, results.path(), policy, env, env_removed, hooks)?;
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

/// Decides, before a build or test run, whether its tool is there: a test run
/// whose tool is missing says nothing about the code and must never read as a
/// failing test (an agent would undo a good edit). By files where a file
/// decides (a plugin on `PATH`, a binary in `node_modules/.bin`); for pytest by
/// asking the project's interpreter to import it, in the sandbox with the run's
/// own environment. Programs themselves (`cargo`, `go`, `python3`) are checked
/// by the sandbox when it starts them.
#[allow(clippy::too_many_arguments)]
pub fn preflight(
    sb: &Sandbox,
    p: &Project,
    tool: &str,
    policy: &Policy,
    env: &[(String, String)],
    env_removed: &[String],
    hooks: &Hooks<'_>,
) -> Result<(), Error> {
    let missing =
        |hint: String| Err(Error::CommandNotFound { program: tool.to_owned(), reason: hint });
    match tool {
        "pytest" => {
            let py = python(p);
            let inv = Invocation {
                argv: vec![py.clone(), "-c".into(), "import pytest".into()],
                env: common_env(p, Path::new("/nonexistent")),
                results_file: None,
                tool: "pytest",
            };
            let probe = results_dir()?;
            let mut quick = policy.clone();
            quick.timeout = Some(std::time::Duration::from_secs(60));
            let exec = run_invocation(sb, p, &inv, probe.path(), &quick, env, env_removed, hooks)?;
            if exec.exit_code != Some(0) && exec.limit.is_none() && exec.signal.is_none() {
                let how = match &p.env {
                    Some(e) => format!("{py} -m pip install pytest (the {} environment)", e.source),
                    None => format!("{py} -m pip install pytest"),
                };
                return missing(format!("pytest is not installed for {py}: `{how}`"));
            }
            Ok(())
        }
        "nextest" => {
            let found = search_path(env).iter().any(|d| d.join("cargo-nextest").is_file());
            if found {
                Ok(())
            } else {
                missing(
                    "cargo-nextest is not installed: `cargo install cargo-nextest --locked`".into(),
                )
            }
        }
        "jest" | "vitest" | "tsc" => {
            if Path::new(&node_bin(p, tool)).exists() {
                return Ok(());
            }
            let package = if tool == "tsc" { "typescript" } else { tool };
            missing(format!(
                "{tool} is not installed in this project (no node_modules/.bin/{tool}): \
                 `npm install --save-dev {package}`"
            ))
        }
        _ => Ok(()),
    }
}

/// The directories of `PATH` in `env`, and cargo's own `bin/` (where `cargo
/// install` puts plugins, often left off `PATH`).
fn search_path(env: &[(String, String)]) -> Vec<PathBuf> {
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut dirs: Vec<PathBuf> =
        get("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    match (get("CARGO_HOME"), get("HOME")) {
        (Some(c), _) => dirs.push(PathBuf::from(c).join("bin")),
        (None, Some(h)) => dirs.push(PathBuf::from(h).join(".cargo/bin")),
        _ => {}
    }
    dirs
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
    let env = command_env(p, inv, results, env);
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

/// The environment a project command sees: the user's (`env`, secrets already
/// removed), the project environment's `bin/` first on `PATH`, the
/// invocation's own variables, and a private writable home.
///
/// Why a private `HOME`: the sandbox keeps the user's home read-only, and test
/// suites write there (caches, config files a test creates); a read-only home
/// fails tests that pass in a shell. The toolchains that find their installation
/// through `HOME` (`~/.cargo`, `~/.rustup`, `~/go`, `pip install --user`'s
/// `~/.local`) keep finding it: their variables are set to the real places
/// when the user did not set them.
pub(crate) fn command_env(
    p: &Project,
    inv: &Invocation,
    results: &Path,
    env: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out = env.to_vec();
    let mut set = |k: &str, v: String| {
        out.retain(|(kk, _)| kk != k);
        if !v.is_empty() {
            out.push((k.to_owned(), v));
        }
    };
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    if let Some(real_home) = get("HOME").map(PathBuf::from) {
        let home = results.join("home");
        if std::fs::create_dir_all(&home).is_ok() {
            for (var, dir) in [
                ("CARGO_HOME", ".cargo"),
                ("RUSTUP_HOME", ".rustup"),
                ("GOPATH", "go"),
                ("PYTHONUSERBASE", ".local"),
            ] {
                if get(var).is_none() && real_home.join(dir).is_dir() {
                    set(var, real_home.join(dir).display().to_string());
                }
            }
            for xdg in ["XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"] {
                if get(xdg).is_some() {
                    let dir = home.join(
                        xdg.trim_start_matches("XDG_")
                            .trim_end_matches("_HOME")
                            .to_ascii_lowercase(),
                    );
                    set(xdg, dir.display().to_string());
                }
            }
            set("HOME", home.display().to_string());
        }
    }
    if let Some(tool_env) = &p.env
        && !tool_env.path_dirs.is_empty()
    {
        let mut dirs: Vec<PathBuf> = tool_env.path_dirs.clone();
        if let Some(path) = get("PATH") {
            dirs.extend(std::env::split_paths(&path));
        }
        if let Ok(joined) = std::env::join_paths(dirs) {
            set("PATH", joined.to_string_lossy().into_owned());
        }
    }
    for (k, v) in &inv.env {
        if k == PYTHONPATH_FIRST {
            let value = match get("PYTHONPATH") {
                Some(user) if !user.is_empty() => format!("{v}:{user}"),
                _ => v.clone(),
            };
            set("PYTHONPATH", value);
        } else {
            set(k, v.clone());
        }
    }
    out
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
            let got = detect_project(t.root(), &DetectOptions::default())
                .ok()
                .map(|p| (p.kind, p.test_tool));
            assert_eq!(got, *want, "{fixture}");
        }
        let t = test_support::TempProject::with_fixture("//- Cargo.toml\n[package]");
        let p =
            detect_project(t.root(), &DetectOptions { nextest: true, ..DetectOptions::default() })
                .unwrap();
        assert_eq!(p.test_tool, TestTool::Nextest);
        let err =
            detect_project(test_support::TempProject::new().root(), &DetectOptions::default())
                .unwrap_err();
        assert_eq!(err.code(), protocol::ErrorCode::UnknownProject);
    }

    #[test]
    fn commands_see_the_users_environment_with_a_private_home() {
        let t = test_support::TempProject::with_fixture("//- pyproject.toml\n");
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".cargo")).unwrap();
        let results = tempfile::tempdir().unwrap();
        let mut p = detect_project(t.root(), &DetectOptions::default()).unwrap();
        p.env = Some(env::ToolEnv {
            source: ".venv".into(),
            path_dirs: vec![PathBuf::from("/proj/.venv/bin")],
            vars: vec![("VIRTUAL_ENV".into(), "/proj/.venv".into())],
            ..env::ToolEnv::default()
        });
        let user = vec![
            ("HOME".to_owned(), home.path().display().to_string()),
            ("PATH".to_owned(), "/usr/bin".to_owned()),
            ("NO_COLOR".to_owned(), "1".to_owned()),
            ("XDG_CACHE_HOME".to_owned(), "/home/u/.cache".to_owned()),
            ("PYTHONPATH".to_owned(), "/mine".to_owned()),
        ];
        let inv = Invocation {
            argv: vec![],
            env: vec![(PYTHONPATH_FIRST.into(), "/copy/src".into())],
            results_file: None,
            tool: "pytest",
        };
        let got = command_env(&p, &inv, results.path(), &user);
        let get = |k: &str| got.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let private = results.path().join("home");
        assert_eq!(get("HOME"), Some(private.to_str().unwrap()));
        assert!(private.is_dir(), "the private home exists and is writable");
        let cargo = home.path().join(".cargo");
        assert_eq!(get("CARGO_HOME"), Some(cargo.to_str().unwrap()), "toolchains found as before");
        assert_eq!(get("RUSTUP_HOME"), None, "only homes that exist");
        assert_eq!(get("XDG_CACHE_HOME"), Some(private.join("cache").to_str().unwrap()));
        assert_eq!(get("PATH"), Some("/proj/.venv/bin:/usr/bin"));
        assert_eq!(get("PYTHONPATH"), Some("/copy/src:/mine"), "the copy first, the user's kept");
        assert_eq!(get("NO_COLOR"), Some("1"), "the user's own variables stay");
        assert!(got.iter().all(|(k, _)| k != PYTHONPATH_FIRST));
        let plain = test_invocation(&p, Path::new("/r"), Network::Off, &[]);
        assert!(plain.env.iter().all(|(k, _)| k != "NO_COLOR" && k != "PYTHONDONTWRITEBYTECODE"));
    }

    #[test]
    fn dotnet_target_is_the_single_solution() {
        let t = test_support::TempProject::with_fixture(
            "//- a.sln\n\n//- src/a.csproj\n\n//- b.csproj\n",
        );
        let p = detect_project(t.root(), &DetectOptions::default()).unwrap();
        assert_eq!(p.target, Some(t.root().join("a.sln")));
        let t = test_support::TempProject::with_fixture("//- a.csproj\n\n//- b.csproj\n");
        assert_eq!(detect_project(t.root(), &DetectOptions::default()).unwrap().target, None);
    }

    #[test]
    fn cargo_builds_in_the_workspace_whatever_the_callers_target_dir() {
        // An inherited CARGO_TARGET_DIR outside the workspace is read-only inside the
        // sandbox; the invocation's own value (applied after the inherited
        // environment) keeps cargo in the project's `target/`.
        let t = test_support::TempProject::with_fixture("//- Cargo.toml\n[package]");
        let p = detect_project(t.root(), &DetectOptions::default()).unwrap();
        let want = t.root().join("target").display().to_string();
        for env in [
            test_invocation(&p, Path::new("/r"), Network::Off, &[]).env,
            build_invocation(&p, Path::new("/r"), Network::Off).unwrap().env,
        ] {
            assert!(env.contains(&("CARGO_TARGET_DIR".to_owned(), want.clone())), "{env:?}");
        }
    }

    #[test]
    fn invocations_write_results_outside_the_workspace() {
        let t = test_support::TempProject::with_fixture("//- pyproject.toml\n");
        let p = detect_project(t.root(), &DetectOptions::default()).unwrap();
        let inv = test_invocation(&p, Path::new("/r"), Network::Off, &[]);
        assert_eq!(inv.results_file.as_deref(), Some(Path::new("/r/junit.xml")));
        assert!(inv.argv.contains(&"--junitxml=/r/junit.xml".to_owned()));
        let t = test_support::TempProject::with_fixture("//- Cargo.toml\n");
        let p = detect_project(t.root(), &DetectOptions::default()).unwrap();
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
