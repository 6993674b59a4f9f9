//! VALIDATE on projects as users have them (issues 32 and 39): the project's own
//! environment (a virtualenv with an editable install, no activation), the copy
//! holding what the project holds, a private writable home, the user's
//! environment otherwise; the baseline (a project that does not build stops at
//! once, failures that were there already are reported, not blamed); the tests
//! the change reaches first; commands from the configuration; and the limits a
//! run promises (a hung model cut by `--timeout`, a budget a model without a
//! price cannot keep).

use std::{path::Path, process::Command, time::Duration};

use serde_json::{Value, json};
use test_support::{
    TempProject,
    mock_llm::{MockLlm, MockUsage, Reply},
};

use super::Out;

/// The binary in `dir` with the mock as its only model.
fn ironbees(dir: &Path, mock: &MockLlm) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("ironbees"));
    c.arg("-C").arg(dir);
    c.env("XDG_CONFIG_HOME", dir.join(".no-user-config"));
    super::without_model_env(&mut c);
    // A user's shell would not have these set for the project; the run must not
    // need them.
    c.env_remove("VIRTUAL_ENV").env_remove("PYTHONPATH");
    c.env("ANTHROPIC_API_KEY", "sk-ant-validation-test").env("ANTHROPIC_BASE_URL", mock.url());
    c.stdin(std::process::Stdio::null());
    c
}

fn cli(p: &TempProject, mock: &MockLlm, args: &[&str]) -> Out {
    let mut c = ironbees(p.root(), mock);
    c.args(args);
    Out::from(c.output().unwrap())
}

fn lines(o: &Out) -> Vec<Value> {
    o.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn outcome(o: &Out) -> Value {
    lines(o).last().map(|l| l["outcome"].clone()).unwrap_or_default()
}

fn events(o: &Out, kind: &str) -> Vec<Value> {
    lines(o).into_iter().filter(|l| l["kind"]["type"] == kind).map(|l| l["kind"].clone()).collect()
}

fn agent_of(body: &Value) -> &'static str {
    let system = body["system"].to_string();
    ["Planner", "Coder", "Validator"]
        .into_iter()
        .find(|a| system.contains(&format!("# {a}")))
        .unwrap_or("unknown")
}

fn after_tool(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["content"].to_string().contains("tool_result"))
}

fn plan(file: &str, what: &str) -> String {
    json!({"spec": what, "plan": {"summary": what, "steps": [{"number": 1, "description": what,
        "actionType": "MODIFY", "filePath": file}], "affectedFiles": [file], "complexity": "LOW"}})
    .to_string()
}

/// A model that plans `file`, replaces `from` by `to` in it (no hash: the
/// project's files differ from test to test), then says it is done.
pub(super) fn fixing_model(
    mock: &MockLlm,
    file: &'static str,
    from: &'static str,
    to: &'static str,
) {
    mock.set_responder(move |body| {
        let reply = match agent_of(body) {
            "Planner" => Reply::text(plan(file, "Fix the bug")),
            "Validator" => Reply::text("Cause: the change did not fix it."),
            "Coder" if after_tool(body) => Reply::text("Fixed."),
            "Coder" => Reply::tool_calls(
                "",
                vec![(
                    "change",
                    json!({"edits": [{"path": file, "targetString": from, "replacementString": to}],
                           "options": {"dryRun": false}}),
                )],
            ),
            _ => return None,
        };
        Some(reply.usage(MockUsage { input: 100, output: 10, ..MockUsage::default() }))
    });
}

fn ok(o: &Out) {
    assert_eq!(o.code, 0, "stdout:\n{}\nstderr:\n{}", o.stdout, o.stderr);
}

/// A validation's test runs, not the baseline's.
fn test_runs(o: &Out) -> Vec<Value> {
    events(o, "command")
        .into_iter()
        .filter(|c| c["kind"] == "test" && c["scope"] != "baseline")
        .collect()
}

/// The scopes of `runs` (from [`test_runs`]), in order.
fn scopes_of(runs: &[Value]) -> Vec<&str> {
    runs.iter().map(|r| r["scope"].as_str().unwrap()).collect()
}

#[allow(clippy::disallowed_methods)] // test setup: a virtualenv, as a user makes one
fn sh(dir: &Path, program: &str, args: &[&str]) {
    let out = Command::new(program).current_dir(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

// --- the project's environment ------------------------------------------------------------

/// A src-layout package installed in editable mode into the project's `.venv`
/// (made as a user makes it; pytest comes from the system's site-packages so the
/// test needs no network), whose tests also start a new interpreter and write
/// under the home directory and read the environment.
fn src_layout_project() -> TempProject {
    let p = TempProject::new();
    p.write(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n\
         [project]\nname = \"shapes\"\nversion = \"1.0\"\n\n[tool.setuptools.packages.find]\nwhere = [\"src\"]\n",
    );
    p.write("src/shapes/__init__.py", "def area(w, h):\n    return w + h\n");
    p.write(
        "tests/test_shapes.py",
        "import os, pathlib, subprocess, sys\n\n\
         from shapes import area\n\n\
         def test_area():\n    assert area(2, 3) == 6\n\n\
         def test_area_in_a_new_interpreter():\n\
         \x20   out = subprocess.run([sys.executable, '-c', 'from shapes import area; print(area(2, 3))'],\n\
         \x20                        capture_output=True, text=True, check=True)\n\
         \x20   assert out.stdout.strip() == '6'\n\n\
         def test_writes_under_home():\n\
         \x20   cache = pathlib.Path.home() / '.cache' / 'shapes'\n\
         \x20   cache.mkdir(parents=True, exist_ok=True)\n\
         \x20   (cache / 'x').write_text('ok')\n\n\
         def test_sees_the_users_environment():\n\
         \x20   assert os.environ.get('FORCE_COLOR') == '1'\n\
         \x20   assert 'NO_COLOR' not in os.environ\n",
    );
    p.write(".gitignore", ".venv/\n*.egg-info/\n__pycache__/\n");
    sh(p.root(), "python3", &["-m", "venv", "--system-site-packages", ".venv"]);
    sh(
        p.root(),
        ".venv/bin/python",
        &[
            "-m",
            "pip",
            "install",
            "-q",
            "--no-build-isolation",
            "--no-deps",
            "--no-index",
            "-e",
            ".",
        ],
    );
    p
}

#[test]
fn an_editable_install_in_the_projects_venv_validates_green_without_activation() {
    let p = src_layout_project();
    let mock = MockLlm::start();
    fixing_model(&mock, "src/shapes/__init__.py", "return w + h", "return w * h");
    // pytest's own suite asserts on FORCE_COLOR: the user's variables reach the
    // tests, and ironbees adds no NO_COLOR of its own.
    let mut c = ironbees(p.root(), &mock);
    c.env("FORCE_COLOR", "1").env_remove("NO_COLOR");
    c.args(["run", "--yes", "--json", "Fix area(): it adds instead of multiplying"]);
    let o = Out::from(c.output().unwrap());
    ok(&o);
    let runs = test_runs(&o);
    let full = runs.last().unwrap();
    assert_eq!(full["scope"], "full", "{runs:?}");
    assert_eq!(
        (full["success"].as_bool(), full["total"].as_u64()),
        (Some(true), Some(4)),
        "{full}"
    );
    // The tests ran with the project's interpreter, and imported the copy: the
    // fix was only there (a new interpreter saw it too).
    assert!(full["command"][0].as_str().unwrap().ends_with("/.venv/bin/python"), "{full}");
    let baseline = events(&o, "command").into_iter().find(|c| c["scope"] == "baseline").unwrap();
    assert_eq!(
        baseline["failures"],
        json!([
            "tests.test_shapes::test_area",
            "tests.test_shapes::test_area_in_a_new_interpreter"
        ]),
        "before the fix, the other two passed: home writable, environment the user's"
    );
    assert!(p.read("src/shapes/__init__.py").contains("return w * h"));
}

#[test]
fn the_tests_the_change_reaches_run_first_then_the_whole_suite_once() {
    let p = TempProject::new();
    p.write("calc.py", "def div(a, b):\n    return a / b\n");
    // A fixture that calls `div` reaches it too, but is no test: not a node id.
    p.write(
        "test_calc.py",
        "import pytest\nfrom calc import div\n\n@pytest.fixture\ndef half():\n    return div(1, 2)\n\n\
         def test_div_zero():\n    with pytest.raises(ValueError):\n        div(1, 0)\n",
    );
    p.write("strings.py", "def shout(s):\n    return s.upper()\n");
    p.write(
        "test_strings.py",
        "from strings import shout\n\ndef test_shout():\n    assert shout('a') == 'A'\n",
    );
    // Reached through `stats.mean`, which calls `div`: a test function that
    // reaches the changed definition runs first too; `test_strings.py` waits.
    p.write(
        "stats.py",
        "from calc import div\n\ndef mean(xs):\n    return div(sum(xs), len(xs))\n",
    );
    p.write(
        "test_stats.py",
        "from stats import mean\n\ndef test_mean():\n    assert mean([1, 3]) == 2\n",
    );
    let mock = MockLlm::start();
    fixing_model(
        &mock,
        "calc.py",
        "    return a / b",
        "    if b == 0:\n        raise ValueError('zero')\n    return a / b",
    );
    let o =
        cli(&p, &mock, &["run", "--yes", "--json", "Make div raise ValueError for a zero divisor"]);
    ok(&o);
    let runs = test_runs(&o);
    let scopes = scopes_of(&runs);
    assert_eq!(scopes, ["targeted", "full"], "{runs:?}");
    assert_eq!(runs[0]["total"], 2, "the functions reaching div: {}", runs[0]);
    let targeted = runs[0]["command"].to_string();
    assert!(
        targeted.contains("test_calc.py::test_div_zero")
            && targeted.contains("test_stats.py::test_mean")
            && !targeted.contains("test_strings"),
        "{targeted}"
    );
    assert_eq!(runs[1]["total"], 3);

    // `validate.tests: full` runs the suite every round; `targeted`, only the
    // reached tests.
    for (scope, want) in [("full", vec!["full"]), ("targeted", vec!["targeted"])] {
        let p2 = TempProject::new();
        for f in [
            "calc.py",
            "test_calc.py",
            "strings.py",
            "test_strings.py",
            "stats.py",
            "test_stats.py",
        ] {
            p2.write(
                f,
                p.read(f).replace("    if b == 0:\n        raise ValueError('zero')\n", ""),
            );
        }
        p2.write(".ironbees/config.yaml", format!("validate:\n  tests: {scope}\n"));
        let o = cli(
            &p2,
            &mock,
            &["run", "--yes", "--json", "Make div raise ValueError for a zero divisor"],
        );
        ok(&o);
        let runs = test_runs(&o);
        assert_eq!(scopes_of(&runs), want, "validate.tests: {scope}");
    }
}

/// A method no test calls by name (seaborn's `HueMapping._lookup_single`, called
/// through `self` in `__call__`): the tests of its class run first, as
/// functions, not every file that imports the module.
#[test]
fn a_method_reached_only_through_its_class_runs_the_class_tests_first() {
    let p = TempProject::new();
    p.write(
        "colors.py",
        "class Mapping:\n    def __init__(self, table):\n        self.table = table\n\n\
         \x20   def __call__(self, key):\n        return self._resolve(key)\n\n\
         \x20   def _resolve(self, key):\n        return self.table[key]\n",
    );
    p.write(
        "test_mapping.py",
        "import pytest\nfrom colors import Mapping\n\n\
         def test_lookup():\n    assert Mapping({'a': 1})('a') == 1\n\n\
         def test_missing():\n    assert Mapping({})('b') is None\n",
    );
    p.write("test_other.py", "import colors\n\ndef test_other():\n    assert colors is not None\n");
    let mock = MockLlm::start();
    fixing_model(
        &mock,
        "colors.py",
        "        return self.table[key]",
        "        return self.table.get(key)",
    );
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Return None for a missing key in Mapping"]);
    ok(&o);
    let runs = test_runs(&o);
    assert_eq!(scopes_of(&runs), ["targeted", "full"], "{runs:?}");
    let targeted = runs[0]["command"].to_string();
    assert!(
        targeted.contains("test_mapping.py::test_lookup")
            && targeted.contains("test_mapping.py::test_missing")
            && !targeted.contains("test_other"),
        "{targeted}"
    );
    assert_eq!(runs[0]["total"], 2, "{}", runs[0]);
}

/// What pytest's and flask's own repositories hold: a version module the
/// installer wrote and `.gitignore` names (without it the package does not
/// import), `testpaths` that keep an example project's tests (whose conftest
/// imports a package this environment never installed) out of the suite, a
/// helper module under `tests/`, and a test module that has not imported since
/// before the run.
#[test]
fn a_project_as_pytest_and_flask_hold_theirs_validates_green() {
    let p = TempProject::new();
    p.write(".gitignore", "pkg/_version.py\n__pycache__/\n");
    p.write("setup.cfg", "[tool:pytest]\ntestpaths = tests\n");
    p.write("pkg/__init__.py", "from ._version import version\n");
    p.write("pkg/_version.py", "version = '1.0'\n");
    p.write("pkg/calc.py", "def div(a, b):\n    return a / b\n");
    p.write(
        "tests/test_calc.py",
        "import pytest\nimport pkg\nfrom pkg.calc import div\n\n\
         def test_version():\n    assert pkg.version == '1.0'\n\n\
         def test_div_zero():\n    with pytest.raises(ValueError):\n        div(1, 0)\n",
    );
    p.write("tests/helpers.py", "from pkg.calc import div\n\nHALF = div(1, 2)\n");
    p.write(
        "tests/test_legacy.py",
        "import a_module_nobody_installed\n\ndef test_old():\n    pass\n",
    );
    p.write("examples/app/tests/conftest.py", "from exampleapp import create_app\n");
    p.write(
        "examples/app/tests/test_app.py",
        "from pkg.calc import div\n\ndef test_app():\n    assert div(4, 2) == 2\n",
    );
    sh(p.root(), "git", &["init", "-q"]);
    sh(p.root(), "git", &["add", "."]);
    let mock = MockLlm::start();
    fixing_model(
        &mock,
        "pkg/calc.py",
        "    return a / b",
        "    if b == 0:\n        raise ValueError('zero')\n    return a / b",
    );
    let o =
        cli(&p, &mock, &["run", "--yes", "--json", "Make div raise ValueError for a zero divisor"]);
    ok(&o);
    let runs = test_runs(&o);
    let scopes = scopes_of(&runs);
    assert_eq!(scopes, ["targeted", "full"], "{runs:?}");
    let targeted = runs[0]["command"].to_string();
    assert!(targeted.contains("tests/test_calc.py"), "{targeted}");
    assert!(
        !targeted.contains("examples/") && !targeted.contains("helpers.py"),
        "only what the suite collects: {targeted}"
    );
    assert_eq!(runs[0]["success"], true, "{}", runs[0]);
    // The module that does not import is reported, and the rest of the suite ran.
    let full = &runs[1];
    assert_eq!(full["success"], true, "{full}");
    assert!(full["preExisting"].to_string().contains("test_legacy"), "{full}");
    assert_eq!(full["total"].as_u64(), Some(3), "{full}");
    assert!(p.read("pkg/calc.py").contains("ValueError"));
}

/// A test that fails only after another test leaves state behind (pylint's
/// `test_regr::test_package` after `unittest_lint.py`): the targeted run orders
/// the files the change reaches without the file that cleans up, the baseline's
/// whole suite had it in between. Run in its own file the test passes, so the
/// failure is reported as order-dependent and the fix goes through.
#[test]
fn a_failure_that_passes_in_its_own_file_is_order_dependent_not_the_change() {
    let p = TempProject::new();
    p.write("pkg/__init__.py", "");
    p.write("pkg/calc.py", "def div(a, b):\n    return a / b\n");
    p.write(
        "tests/test_a_leak.py",
        "import os\nfrom pkg.calc import div\n\n\
         def test_leaves_a_flag():\n    os.environ['IRONBEES_ORDER_FLAG'] = '1'\n    assert div(4, 2) == 2\n",
    );
    p.write(
        "tests/test_m_reset.py",
        "import os\n\ndef test_cleans_up():\n    os.environ.pop('IRONBEES_ORDER_FLAG', None)\n",
    );
    p.write(
        "tests/test_z_calc.py",
        "import os\nimport pytest\nfrom pkg.calc import div\n\n\
         def test_clean_environment():\n    assert 'IRONBEES_ORDER_FLAG' not in os.environ\n    assert div(2, 1) == 2\n\n\
         def test_div_zero():\n    with pytest.raises(ValueError):\n        div(1, 0)\n",
    );
    sh(p.root(), "git", &["init", "-q"]);
    sh(p.root(), "git", &["add", "."]);
    let mock = MockLlm::start();
    fixing_model(
        &mock,
        "pkg/calc.py",
        "    return a / b",
        "    if b == 0:\n        raise ValueError('zero')\n    return a / b",
    );
    let o =
        cli(&p, &mock, &["run", "--yes", "--json", "Make div raise ValueError for a zero divisor"]);
    ok(&o);
    let runs = test_runs(&o);
    let scopes = scopes_of(&runs);
    assert_eq!(scopes, ["targeted", "isolated", "full"], "{runs:?}");
    let targeted = runs[0]["command"].to_string();
    assert!(
        targeted.contains("tests/test_a_leak.py") && !targeted.contains("test_m_reset"),
        "{targeted}"
    );
    assert!(runs[0]["failures"].to_string().contains("test_clean_environment"), "{}", runs[0]);
    let alone = runs[1]["command"].to_string();
    assert!(alone.contains("tests/test_z_calc.py") && !alone.contains("test_a_leak"), "{alone}");
    assert_eq!(runs[1]["success"], true, "{}", runs[1]);
    assert_eq!(runs[2]["success"], true, "{}", runs[2]);
    let warned: Vec<Value> = events(&o, "warning")
        .into_iter()
        .filter(|w| w["code"] == "ORDER_DEPENDENT_FAILURES")
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", events(&o, "warning"));
    let message = warned[0]["message"].as_str().unwrap();
    assert!(message.contains("test_clean_environment"), "{message}");
    assert!(message.contains("own files; they depend on the order"), "{message}");
    assert!(p.read("pkg/calc.py").contains("ValueError"));
}

/// A no-op first change still fails: the test fails in its own file too.
#[test]
fn a_failure_that_fails_in_its_own_file_too_stays_the_changes() {
    let p = TempProject::new();
    p.write("pkg/__init__.py", "");
    p.write("pkg/calc.py", "def div(a, b):\n    return a / b\n");
    p.write(
        "tests/test_calc.py",
        "import pytest\nfrom pkg.calc import div\n\n\
         def test_div():\n    assert div(4, 2) == 2\n",
    );
    p.write(
        "tests/test_other.py",
        "from pkg.calc import div\n\ndef test_div_by_one():\n    assert div(3, 1) == 3\n",
    );
    sh(p.root(), "git", &["init", "-q"]);
    sh(p.root(), "git", &["add", "."]);
    let mock = MockLlm::start();
    // A "fix" that breaks the test it reaches.
    fixing_model(&mock, "pkg/calc.py", "    return a / b", "    return a * b");
    let o = cli(&p, &mock, &["run", "--yes", "--json", "--max-iterations", "1", "Make div faster"]);
    let runs = test_runs(&o);
    let scopes = scopes_of(&runs);
    assert_eq!(&scopes[..2], ["targeted", "isolated"], "{runs:?}");
    assert_eq!(runs[1]["success"], false, "{}", runs[1]);
    assert!(
        events(&o, "warning").iter().all(|w| w["code"] != "ORDER_DEPENDENT_FAILURES"),
        "{:?}",
        events(&o, "warning")
    );
    assert!(!p.read("pkg/calc.py").contains("a * b"), "a failing change is not applied");
}

/// The bug's own test fails before the run, two imports away from the file the
/// change touches (pylint 7114: `unittest_lint.py` from `expand_modules.py`). A
/// change that fixes nothing does not pass on it as "failing before".
#[test]
fn a_change_that_fixes_nothing_is_blamed_for_the_failing_test_two_steps_away() {
    let p = TempProject::new();
    p.write("pkg/__init__.py", "");
    p.write("pkg/core.py", "def add(a, b):\n    return a - b\n");
    p.write("pkg/api.py", "from pkg.core import add\n\ndef plus(a, b):\n    return add(a, b)\n");
    p.write(
        "tests/test_api.py",
        "from pkg.api import plus\n\ndef test_plus():\n    assert plus(2, 2) == 4\n",
    );
    sh(p.root(), "git", &["init", "-q"]);
    sh(p.root(), "git", &["add", "."]);
    let mock = MockLlm::start();
    // A comment: the round "changes" core.py and fixes nothing.
    fixing_model(&mock, "pkg/core.py", "    return a - b", "    return a - b  # checked");
    let o = cli(
        &p,
        &mock,
        &["run", "--yes", "--json", "--max-iterations", "1", "Fix the arithmetic in core"],
    );
    let runs = test_runs(&o);
    assert!(!runs.is_empty(), "{}", o.stdout);
    assert_eq!(runs[0]["success"], false, "{}", runs[0]);
    assert!(runs[0]["failures"].to_string().contains("test_plus"), "{}", runs[0]);
    assert!(!runs[0]["preExisting"].to_string().contains("test_plus"), "{}", runs[0]);
    assert!(!p.read("pkg/core.py").contains("checked"), "nothing is applied");
}

/// The bug's own test fails before the run and reaches the changed module by no
/// import: it loads it by name, as pytest's tests load a plugin through
/// `testdir` (pytest 7373: `testing/test_mark.py` for `mark/evaluate.py`). It is
/// near all the same, named after the module's package, so a change that fixes
/// nothing does not pass on it as "failing before".
#[test]
fn a_change_that_fixes_nothing_is_blamed_for_the_test_named_after_its_package() {
    let p = TempProject::new();
    p.write("shop/__init__.py", "");
    p.write("shop/mark/__init__.py", "");
    p.write("shop/mark/evaluate.py", "def cached(expr):\n    return True\n");
    p.write(
        "tests/test_mark.py",
        "import importlib\n\n\
         def test_reevaluate_dynamic_expr():\n    \
         plugin = importlib.import_module('shop.mark.' + 'evaluate')\n    \
         assert plugin.cached('x') is False\n",
    );
    sh(p.root(), "git", &["init", "-q"]);
    sh(p.root(), "git", &["add", "."]);
    let mock = MockLlm::start();
    fixing_model(&mock, "shop/mark/evaluate.py", "    return True", "    return True  # checked");
    let o = cli(
        &p,
        &mock,
        &[
            "run",
            "--yes",
            "--json",
            "--max-iterations",
            "1",
            "Incorrect caching of skipif string condition evaluation",
        ],
    );
    let runs = test_runs(&o);
    assert!(!runs.is_empty(), "{}", o.stdout);
    // Not reached by `impact` (imported by name at run time), but named after the
    // package: it runs first, and the no-op is rejected there.
    assert_eq!(runs[0]["scope"], "targeted", "{}", runs[0]);
    assert!(runs[0]["command"].to_string().contains("tests/test_mark.py"), "{}", runs[0]);
    assert_eq!(runs[0]["success"], false, "{}", runs[0]);
    assert!(
        runs[0]["failures"].to_string().contains("test_reevaluate_dynamic_expr"),
        "{}",
        runs[0]
    );
    assert!(!runs[0]["preExisting"].to_string().contains("test_reevaluate"), "{}", runs[0]);
    assert!(!p.read("shop/mark/evaluate.py").contains("checked"), "nothing is applied");
}

// --- the baseline ------------------------------------------------------------------------

#[test]
fn a_failure_that_was_there_before_is_reported_not_blamed() {
    let p = TempProject::new();
    p.write("calc.py", "def div(a, b):\n    return a / b\n");
    p.write("test_calc.py", "import pytest\nfrom calc import div\n\ndef test_div_zero():\n    with pytest.raises(ValueError):\n        div(1, 0)\n");
    // Broken before the run, and nothing the request is about.
    p.write(
        "test_network.py",
        "def test_reaches_the_mirror():\n    assert False, 'no network here'\n",
    );
    let mock = MockLlm::start();
    fixing_model(
        &mock,
        "calc.py",
        "    return a / b",
        "    if b == 0:\n        raise ValueError('zero')\n    return a / b",
    );
    let o =
        cli(&p, &mock, &["run", "--yes", "--json", "Make div raise ValueError for a zero divisor"]);
    ok(&o);
    let warning = events(&o, "warning");
    assert!(
        warning.iter().any(|w| w["code"] == "PRE_EXISTING_FAILURES"
            && w["message"].as_str().unwrap().contains("test_network::test_reaches_the_mirror")),
        "{warning:?}"
    );
    let full = test_runs(&o).into_iter().find(|r| r["scope"] == "full").unwrap();
    assert_eq!(full["success"], true, "{full}");
    assert_eq!(full["preExisting"], json!(["test_network::test_reaches_the_mirror"]));
    assert_eq!(outcome(&o)["state"]["iterationCount"], 1);
}

#[test]
fn a_change_that_does_not_fix_the_failing_test_is_rejected() {
    // The failing test the request is about fails before the run too: it is
    // not excused. A no-op first change goes back to the coder.
    let p = TempProject::new();
    p.write("calc.py", "def div(a, b):\n    return a / b\n");
    p.write("test_calc.py", "import pytest\nfrom calc import div\n\ndef test_div_zero():\n    with pytest.raises(ValueError):\n        div(1, 0)\n");
    let mock = MockLlm::start();
    fixing_model(&mock, "calc.py", "def div(a, b):\n", "def div(a, b):\n    # divides\n");
    let o = cli(
        &p,
        &mock,
        &[
            "run",
            "--yes",
            "--json",
            "--max-iterations",
            "1",
            "Make div raise ValueError for a zero divisor",
        ],
    );
    assert_eq!(o.code, 10, "{}", o.stderr);
    let runs = test_runs(&o);
    assert_eq!(runs[0]["success"], false, "{runs:?}");
    assert_eq!(runs[0]["failures"], json!(["test_calc::test_div_zero"]));
    assert_eq!(outcome(&o)["status"]["node"], "WAIT_HUMAN");
}

#[test]
fn a_project_that_does_not_build_before_any_change_stops_at_once() {
    let p = TempProject::new();
    p.write(
        "Cargo.toml",
        "[package]\nname = \"broken\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    p.write("src/lib.rs", "pub fn f() -> i32 { \"not a number\" }\n");
    p.write(".gitignore", "target/\n");
    let mock = MockLlm::start();
    fixing_model(&mock, "src/lib.rs", "pub fn f", "pub fn g");
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Add g()"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let status = &outcome(&o)["status"];
    assert_eq!(status["code"], "BASELINE_FAILED", "{status}");
    assert!(status["message"].as_str().unwrap().contains("does not build before any change"));
    assert!(status["message"].as_str().unwrap().contains("mismatched types"), "{status}");
    let coder = mock.requests().into_iter().filter(|r| agent_of(&r.body) == "Coder").count();
    assert_eq!(coder, 0, "no coding round was spent on it");
}

#[test]
fn a_crate_with_a_nightly_only_bench_validates_on_stable() {
    // strsim 0.11 ships `benches/benches.rs` with `#![feature(test)]`: building
    // every target on stable fails whatever the coder does.
    let p = TempProject::new();
    p.write("Cargo.toml", "[package]\nname = \"sim\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    p.write(
        "src/lib.rs",
        "pub fn hamming(a: &str, b: &str) -> usize {\n    a.chars().zip(b.chars()).filter(|(x, y)| x == y).count()\n}\n\n\
         #[cfg(test)]\nmod tests {\n    #[test]\n    fn counts_differences() {\n        assert_eq!(super::hamming(\"abc\", \"abd\"), 1);\n    }\n}\n",
    );
    p.write("benches/benches.rs", "#![feature(test)]\nextern crate test;\n\n#[bench]\nfn b(bencher: &mut test::Bencher) { bencher.iter(|| 1) }\n");
    p.write(".gitignore", "target/\n");
    let mock = MockLlm::start();
    fixing_model(&mock, "src/lib.rs", "filter(|(x, y)| x == y)", "filter(|(x, y)| x != y)");
    let o =
        cli(&p, &mock, &["run", "--yes", "--json", "hamming() counts matches, not differences"]);
    ok(&o);
    let builds: Vec<Value> =
        events(&o, "command").into_iter().filter(|c| c["kind"] == "build").collect();
    assert!(builds.iter().all(|b| b["success"] == true), "{builds:?}");
    assert!(builds[0]["command"].to_string().contains("--tests"), "{}", builds[0]);
    let built = cli(&p, &mock, &["--json", "build"]);
    ok(&built);
}

#[test]
fn configured_commands_replace_the_detected_ones() {
    let p = TempProject::new();
    p.write("calc.sh", "div() { echo $(( $1 / $2 )); }\n");
    p.write("check.sh", ". ./calc.sh\n[ \"$(div 6 3)\" = 2 ] && echo '1 passed, 0 failed'\n");
    p.write(".ironbees/config.yaml", "validate:\n  build: none\n  test: sh check.sh\n");
    let mock = MockLlm::start();
    fixing_model(&mock, "calc.sh", "$1 / $2", "$1 / $2 ");
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Tidy div"]);
    ok(&o);
    let runs = test_runs(&o);
    assert_eq!(runs[0]["tool"], "command", "{runs:?}");
    assert_eq!(runs[0]["command"], json!(["sh", "check.sh"]));
    // And `ironbees test` uses it too.
    let t = cli(&p, &mock, &["--json", "test"]);
    ok(&t);
    let v: Value = serde_json::from_str(&t.stdout).unwrap();
    assert_eq!(v["exec"]["command"], json!(["sh", "check.sh"]));
    // AGENTS.md stated commands are used when the configuration says none.
    let q = TempProject::new();
    q.write("calc.sh", "div() { echo $(( $1 / $2 )); }\n");
    q.write("check.sh", ". ./calc.sh\n[ \"$(div 6 3)\" = 2 ]\n");
    q.write("AGENTS.md", "# Conventions\n\n- Test: `sh check.sh`\n");
    let t = cli(&q, &mock, &["--json", "test"]);
    ok(&t);
    let v: Value = serde_json::from_str(&t.stdout).unwrap();
    assert_eq!(v["exec"]["command"], json!(["sh", "check.sh"]));
}

// --- the run's limits ------------------------------------------------------------------

#[test]
fn the_time_limit_cuts_a_model_call_that_never_answers() {
    let p = TempProject::new();
    p.write("calc.py", "def div(a, b):\n    return a / b\n");
    let mock = MockLlm::start();
    // Accepts the connection and sends nothing for ten minutes.
    mock.set_default(Reply::text("late").first_byte_delay(Duration::from_secs(600)));
    let started = std::time::Instant::now();
    let o = cli(&p, &mock, &["run", "--yes", "--json", "--timeout", "3s", "Fix div"]);
    let took = started.elapsed();
    assert_eq!(o.code, 10, "{}", o.stderr);
    assert!(took < Duration::from_secs(30), "the run stopped after {took:?}");
    let status = &outcome(&o)["status"];
    assert_eq!(status["node"], "WAIT_HUMAN", "{status}");
    let reason = status["reason"].as_str().unwrap();
    assert!(reason.starts_with("time limit reached") && reason.contains("model call"), "{reason}");
}

#[test]
fn a_usd_budget_on_a_model_without_a_price_is_said_at_the_start_and_tokens_still_count() {
    let p = TempProject::new();
    p.write("calc.py", "def div(a, b):\n    return a / b\n");
    let mock = MockLlm::start();
    mock.set_default(
        Reply::text(plan("calc.py", "Fix div"))
            .model("local-model-without-a-price")
            .usage(MockUsage { input: 800, output: 300, ..MockUsage::default() }),
    );
    let mut c = ironbees(p.root(), &mock);
    c.env("ANTHROPIC_MODEL", "local-model-without-a-price");
    c.args(["run", "--json", "--budget-usd", "0.01", "--budget-tokens", "1000", "Fix div"]);
    let o = Out::from(c.output().unwrap());
    let warnings = events(&o, "warning");
    let first = lines(&o).iter().position(|l| l["kind"]["type"] == "warning").unwrap();
    let planner = lines(&o).iter().position(|l| l["kind"]["type"] == "modelCall").unwrap();
    assert!(first < planner, "said before any model call");
    assert_eq!(warnings[0]["code"], "BUDGET_UNENFORCEABLE");
    assert!(
        warnings[0]["message"].as_str().unwrap().contains("no known price")
            && warnings[0]["message"]
                .as_str()
                .unwrap()
                .contains("token budget (1000 tokens) is enforced"),
        "{warnings:?}"
    );
    assert_eq!(o.code, 10, "{}", o.stderr);
    // The plan's 1,100 tokens spent the token budget: approving goes no further.
    let id = outcome(&o)["runId"].as_str().unwrap().to_owned();
    let mut c = ironbees(p.root(), &mock);
    c.env("ANTHROPIC_MODEL", "local-model-without-a-price");
    c.args(["--json", "runs", "approve", &id]);
    let o = Out::from(c.output().unwrap());
    assert_eq!(
        outcome(&o)["status"]["reason"],
        "token budget spent: 1100 of 1000 tokens",
        "{}",
        o.stdout
    );
}
