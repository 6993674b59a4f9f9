//! BASELINE and VALIDATE: the project's own build and tests, run in the run's
//! workspace copy, judged against the project as it was before the run.
//!
//! - **The baseline.** Before the first change the project is built and tested as
//!   it is. A project that does not build then stops the run at once
//!   (`BASELINE_FAILED`): nothing a coder does could be validated. Tests that
//!   fail then are *pre-existing*: reported with every validation, never blamed
//!   on the change.
//! - **The tests the change reaches first.** With `validate.tests: both` (the
//!   default), a round runs the tests that reach the definitions the change
//!   touches (`impact` of each changed place; pytest gets the test functions as
//!   node ids), or for a change outside definitions the tests nearest the file,
//!   the changed test files and the last round's failures; only when those pass
//!   does the whole suite run, once, before the change is accepted. A suite of
//!   minutes costs seconds per round.
//! - **Failures by cause.** A missing test tool is found before the run (the
//!   runners' preflight: `COMMAND_NOT_FOUND`), a failing test is one the tool
//!   reports, a new failure is one the baseline did not have.

use std::collections::BTreeSet;

use llm::Message;
use protocol::{
    Baseline, BuildRequest, CodingState, CommandKind, CommandScope, ErrorCode, ImpactRequest,
    RunEventKind, SandboxOptions, TestRequest, TestResponse, TestResult, TestScope, Validation,
};
use workflow::{NodeContext, NodeError};

use crate::{
    limit::Limit,
    model::{Turn, TurnEnd},
    nodes::{Outcome, Step, call_err, instructions, workspace},
    orchestrator::Shared,
    overlay, policy,
    suite::PytestSuite,
};

/// Output kept for the coder when a failure has no structured message.
const OUTPUT_TAIL: usize = 3000;

/// More target files than this and the targeted run is no cheaper than the suite.
const MAX_TARGETS: usize = 40;
/// More test functions than this (pytest node ids) and their files are run.
const MAX_NODE_IDS: usize = 300;
/// A change in more separate places of a file than this is targeted by file.
const MAX_CHANGED_PLACES: usize = 8;
/// Test files named after the changed modules and their packages that the
/// targeted run adds, at most; more is a name too common to say where to look.
const MAX_NAMED_FILES: usize = 4;

/// The overlay's fingerprint: what VALIDATE last checked.
fn overlay_fingerprint(files: &[protocol::OverlayFile]) -> String {
    let mut h = stdx::ContentHasher::new();
    for f in files {
        h.update(f.path.as_bytes());
        h.update(&[0]);
        h.update(f.content.as_deref().unwrap_or("\u{0}deleted").as_bytes());
        h.update(&[0]);
    }
    h.finish_hex()
}

const CHANGED_NOTHING: &str = "You changed nothing since this failure; it stands.";

/// What running a project command gave.
enum Ran<T> {
    Done(T),
    /// No build or test tool in the project (`UNKNOWN_PROJECT`).
    Nothing,
    /// The execution's time limit cut it: the pause reason.
    Paused(String),
}

/// Runs project commands in the run's workspace copy, bounded by the
/// execution's time limit.
struct Commands<'a> {
    shared: &'a Shared,
    sandbox: SandboxOptions,
    limit: Limit,
}

impl Commands<'_> {
    fn new<'a>(shared: &'a Shared, s: &CodingState, cx: &NodeContext<'_>) -> Commands<'a> {
        let ws = workspace(shared, cx.run_id());
        Commands {
            shared,
            sandbox: SandboxOptions {
                workspace: Some(ws.path().display().to_string()),
                ..SandboxOptions::default()
            },
            limit: Limit::of(s, cx.execution_started()),
        }
    }

    /// Runs `f` with a call the deadline (or the user) cancels.
    fn bounded<T>(
        &self,
        cx: &NodeContext<'_>,
        what: &str,
        f: impl FnOnce(&stdx::Call<'_>) -> engine::Result<T>,
    ) -> Result<Ran<T>, NodeError> {
        if self.limit.passed() {
            return Ok(Ran::Paused(self.limit.reason(what)));
        }
        let (cancel, _timer) = self.limit.token(cx.cancellation_token(), &self.shared.rt);
        let call = stdx::Call::new(&stdx::NoProgress, &cancel);
        match f(&call) {
            Ok(v) => Ok(Ran::Done(v)),
            Err(e) if e.to_info().code == ErrorCode::UnknownProject => Ok(Ran::Nothing),
            Err(engine::Error::Cancelled) if cx.is_cancelled() => {
                Err(NodeError::new("CANCELLED", "cancelled"))
            }
            Err(engine::Error::Cancelled) if self.limit.passed() => {
                Ok(Ran::Paused(self.limit.reason(what)))
            }
            Err(engine::Error::Cancelled) => Err(NodeError::new("CANCELLED", "cancelled")),
            Err(e) => Err(call_err(e)),
        }
    }

    fn build(&self, cx: &NodeContext<'_>) -> Result<Ran<protocol::BuildResponse>, NodeError> {
        let req = BuildRequest { sandbox: self.sandbox.clone() };
        let session = &self.shared.session;
        self.bounded(cx, "the build", |call| session.build_as(&req, engine::Trust::User, call))
    }

    fn test(
        &self,
        cx: &NodeContext<'_>,
        targets: &[String],
    ) -> Result<Ran<TestResponse>, NodeError> {
        let req = TestRequest {
            sandbox: self.sandbox.clone(),
            targets: targets.to_vec(),
            ..TestRequest::default()
        };
        let session = &self.shared.session;
        self.bounded(cx, "the tests", |call| session.test_as(&req, engine::Trust::User, call))
    }
}

/// What the run is about, to tell a failure the run must fix from one it may
/// leave alone: the test files that reach the plan's and the change's files (and
/// the changed test files), the modules and packages those files are in, and the
/// words of the request and the plan.
#[derive(Debug, Default)]
struct Related {
    files: BTreeSet<String>,
    /// What a test file near the change is named after ([`subjects_of`]).
    subjects: BTreeSet<String>,
    words: BTreeSet<String>,
    /// The request's and the plan's text, for tests named in it verbatim.
    text: String,
}

impl Related {
    fn gather(shared: &Shared, s: &CodingState, cx: &NodeContext<'_>) -> Related {
        let mut paths: BTreeSet<&str> = s.overlay.iter().map(|f| f.path.as_str()).collect();
        if let Some(plan) = &s.plan {
            paths.extend(plan.affected_files.iter().map(String::as_str));
        }
        let call = stdx::Call::new(&stdx::NoProgress, cx.cancellation_token());
        let mut files = BTreeSet::new();
        let mut subjects = BTreeSet::new();
        for path in paths {
            if looks_like_test(path) {
                files.insert(path.to_owned());
                continue;
            }
            subjects.extend(subjects_of(path));
            let req = reach(path.to_owned());
            // Every test `impact` finds within four steps, as the targeted run
            // selects them: a failure there that was already there is the change's
            // only while the change fixes nothing (`judge`'s progress), so a fix is
            // not blamed for what the environment broke (flask's suite under a
            // newer Werkzeug, all within a few steps of any file), and a change
            // that fixes nothing is not excused for the bug's own test two steps
            // away (pylint 7114's `unittest_lint.py` from `expand_modules.py`,
            // which the nearest-tests-only rule let a no-op through).
            if let Ok(impact) = shared.session.impact(&req, &call) {
                files.extend(impact.tests.into_iter().map(|t| t.path));
            }
        }
        let mut text = format!("{} {}", s.user_request, s.spec.as_deref().unwrap_or_default());
        if let Some(plan) = &s.plan {
            text.push_str(&plan.summary);
            for step in &plan.steps {
                text.push(' ');
                text.push_str(&step.description);
            }
        }
        Related { files, subjects, words: words(&text), text }
    }

    /// How a failing test concerns the run: named verbatim in the request or the
    /// plan (`test_parse_header`); near the change (in a test file near it, or
    /// described by the request's words: `test_divide_by_zero` for "divide by
    /// zero"); or neither. Words alone are only nearness: short names match prose
    /// too easily (flask's `test_cli_name` in "a blueprint's name").
    ///
    /// A test file is near also when it is named after the changed module or a
    /// package around it: pytest's own tests load the code as a plugin through
    /// `testdir`, not by import, so `impact` does not reach `testing/test_mark.py`
    /// from `mark/evaluate.py`, and a no-op was excused for the bug's test there
    /// (pytest 7373's `test_reevaluate_dynamic_expr`). The words would not have
    /// caught it, the path's words added or not: `reevaluate`, `dynamic` and
    /// `expr` are neither the request's nor the path's.
    fn concern(&self, name: &str, file: Option<&str>) -> Concern {
        let short = name.rsplit("::").next().unwrap_or(name);
        let short = short.split('[').next().unwrap_or(short);
        let own = words(short.trim_start_matches("test_").trim_start_matches("test"));
        let named_near =
            |f: &str| engine::test_subject(f).is_some_and(|s| self.subjects.contains(&s));
        if short.len() >= 6 && self.text.contains(short) {
            Concern::Named
        } else if file.is_some_and(|f| self.files.contains(f) || named_near(f))
            || (!own.is_empty() && own.iter().all(|w| self.words.contains(w)))
        {
            Concern::Near
        } else {
            Concern::Other
        }
    }
}

/// Directories that say where code is laid out, not which part of the project
/// it is: a test file named after one (`test_utils.py`, `test_core.py`) is no
/// nearer to a change under it than to any other.
const LAYOUT_DIRS: &[&str] = &[
    "src", "lib", "pkg", "internal", "source", "sources", "packages", "crates", "modules", "apps",
    "app", "cmd", "python", "main", "java", "com", "org", "core", "common", "utils", "util",
    "helpers", "shared", "base",
];

/// What a test file of a change in `path` is named after, as `impact` names
/// tests after a module (`module_stem`, `test_subject`): the file's module and
/// each package around it (`src/_pytest/mark/evaluate.py`: `evaluate`, `mark`).
/// Not the outermost package, the first directory past the layout's: it names
/// the whole project (`_pytest`, flask's `flask`, a crate's own name), and every
/// test of a single-package project would be near. Nor two-letter names (`io`).
fn subjects_of(path: &str) -> Vec<String> {
    let mut dirs: Vec<&str> = path.split('/').collect();
    dirs.pop();
    let packages = dirs
        .into_iter()
        .skip_while(|d| LAYOUT_DIRS.contains(d))
        .skip(1)
        .filter(|d| !LAYOUT_DIRS.contains(d))
        .map(engine::module_stem);
    std::iter::once(engine::module_stem(path)).chain(packages).filter(|s| s.len() >= 3).collect()
}

/// How a failing test concerns a run ([`Related::concern`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Concern {
    Named,
    Near,
    Other,
}

/// The words of a text as identifiers split them (`divide_by_zero`,
/// `divideByZero`, "divide by zero": `divide`, `zero`), lowercased, short words
/// left out.
fn words(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in text.chars().chain(std::iter::once(' ')) {
        let boundary = !c.is_alphanumeric() || (c.is_uppercase() && prev_lower);
        if boundary && !word.is_empty() {
            if word.len() >= 4 {
                out.insert(singular(std::mem::take(&mut word)));
            }
            word.clear();
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase();
    }
    out
}

/// A plural's singular, as far as a test's name and an issue's prose differ:
/// `paths` and `ignores` in "`--recursive` ignores `ignore-paths`" are
/// `test_ignore_path_recursive` (pylint 7080). Only a final `s`, not of `ss`,
/// `us` or `is` (`class`, `status`, `analysis`), on words of five letters or more.
fn singular(mut word: String) -> String {
    if word.len() >= 5
        && word.ends_with('s')
        && !(word.ends_with("ss") || word.ends_with("us") || word.ends_with("is"))
    {
        word.pop();
    }
    word
}

/// The test file a failing test lives in: the tool's `file` when it names a test
/// file, else (pytest) the module path of its name (`tests.test_app.TestX::t` →
/// `tests/test_app.py`), when that file exists in `root`.
fn test_file_of(f: &protocol::TestFailure, root: &std::path::Path) -> Option<String> {
    if let Some(file) = &f.file
        && looks_like_test(file)
    {
        return Some(file.clone());
    }
    let module = f.name.split("::").next()?;
    let parts: Vec<&str> = module.split('.').collect();
    (1..=parts.len())
        .rev()
        .map(|i| format!("{}.py", parts[..i].join("/")))
        .find(|p| root.join(p).is_file())
        .or_else(|| f.file.clone())
}

/// The test files to run `new` (failure names of `t`) on their own: one per
/// failure, for the tools that select by file; None when a failure's file is not
/// known (then the failure stands).
fn isolation_targets(
    t: &TestResult,
    new: &[String],
    root: &std::path::Path,
) -> Option<Vec<String>> {
    if !matches!(t.tool.as_str(), "pytest" | "jest" | "vitest" | "go") {
        return None;
    }
    let mut files = BTreeSet::new();
    for name in new {
        let f = t.failures.iter().find(|f| &f.name == name)?;
        let file = test_file_of(f, root)?;
        if !root.join(&file).is_file() {
            return None;
        }
        files.insert(file);
    }
    (!files.is_empty() && files.len() <= MAX_TARGETS).then(|| files.into_iter().collect())
}

/// The failures of `new` that the isolated run `alone` shows depend on the order
/// tests ran in: all of them or none. Only a run that completed and ran tests
/// can clear a failure, and only when none of `new` failed again.
fn order_dependent(new: &[String], alone: &TestResult) -> Option<Vec<String>> {
    if alone.incomplete.is_some() || !alone.build_errors.is_empty() || alone.total == 0 {
        return None;
    }
    let failing: BTreeSet<&str> = alone.failures.iter().map(|f| f.name.as_str()).collect();
    if new.iter().any(|n| failing.contains(n.as_str())) {
        return None;
    }
    Some(new.to_vec())
}

/// A test run's failures split: new ones (the change's), and those the baseline
/// had too.
struct Judged {
    new: Vec<String>,
    pre_existing: Vec<String>,
    /// Nothing ran, and nothing failed to: not a verdict on the change.
    ran_none: bool,
    /// The tool's result counts as a pass for the change.
    passed: bool,
}

/// Splits a run's failures: new ones (the change's), and those the baseline had
/// too that the change need not fix (reported, not blamed).
///
/// A failure the baseline had too is still the change's when the run is about
/// it: named in the request or the plan, always; in a test file near the change,
/// unless the change made progress — a test that failed before, and ran again,
/// passes now (wherever it is: the bug report's test may be two calls away, as
/// requests' `test_response_decode_unicode` is from `utils.py`). That keeps both
/// promises: a change that fixes nothing (a no-op, a wrong fix) fails on the
/// near tests, where a bug's failing test mostly is, and a fix is not blamed for
/// tests next to it that the environment broke long before the run (flask's
/// suite under a newer Werkzeug: hundreds of failures, all in files that use
/// what any fix touches).
///
/// `concern`: how a failing test concerns the run; `selected`: whether a test
/// was among those this run ran.
fn judge(
    t: &TestResult,
    baseline: Option<&Baseline>,
    concern: &dyn Fn(&protocol::TestFailure) -> Concern,
    selected: &dyn Fn(&protocol::TestFailure) -> bool,
) -> Judged {
    let before: BTreeSet<&str> =
        baseline.map(|b| b.failing_tests.iter().map(String::as_str).collect()).unwrap_or_default();
    let now: BTreeSet<&str> = t.failures.iter().map(|f| f.name.as_str()).collect();
    // Progress needs a run that completed: a crash hides failures, not fixes them.
    let progress = t.incomplete.is_none()
        && t.build_errors.is_empty()
        && t.total > 0
        && before.iter().any(|name| {
            let f = protocol::TestFailure {
                name: (*name).to_owned(),
                message: String::new(),
                stack_trace: None,
                file: None,
                line: None,
            };
            !now.contains(name) && selected(&f)
        });
    let (pre_existing, new): (Vec<&protocol::TestFailure>, Vec<&protocol::TestFailure>) =
        t.failures.iter().partition(|f| {
            before.contains(f.name.as_str())
                && match concern(f) {
                    Concern::Named => false,
                    Concern::Near => progress,
                    Concern::Other => true,
                }
        });
    let pre_existing: Vec<String> = pre_existing.into_iter().map(|f| f.name.clone()).collect();
    let new: Vec<String> = new.into_iter().map(|f| f.name.clone()).collect();
    let ran_none = t.total == 0
        && t.failures.is_empty()
        && t.build_errors.is_empty()
        && t.incomplete.is_none();
    // A run that could not complete is a failure of the change unless the suite
    // could not complete before it either.
    let incomplete_now = t.incomplete.is_some() || !t.build_errors.is_empty();
    let incomplete_before = baseline.is_some_and(|b| b.incomplete.is_some());
    let passed = t.success
        || (new.is_empty() && !pre_existing.is_empty() && !incomplete_now)
        || (new.is_empty() && incomplete_now && incomplete_before);
    Judged { new, pre_existing, ran_none, passed }
}

// --- BASELINE ------------------------------------------------------------------------------

/// The node: takes the baseline once per run (when `settings.baseline`).
pub(crate) fn baseline(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    if let Some(reason) = ensure_baseline(shared, s, cx)? {
        s.pause_reason = Some(reason);
    }
    Ok(Step::Continue)
}

/// Builds and tests the project as it is, once; `Some(reason)` when the time
/// limit cut it. A project that does not build fails the node
/// (`BASELINE_FAILED`): the run stops at once with the build's errors.
fn ensure_baseline(
    shared: &Shared,
    s: &mut CodingState,
    cx: &mut NodeContext<'_>,
) -> Result<Option<String>, NodeError> {
    if !s.settings.baseline || s.baseline.is_some() {
        return Ok(None);
    }
    let ws = workspace(shared, cx.run_id());
    let report = ws.sync(&edit::Overlay::new()).map_err(|e| {
        NodeError::new(e.code().as_str(), format!("preparing the run's workspace: {e}"))
    })?;
    cx.emit(RunEventKind::Workspace { path: ws.path().display().to_string(), sync: report });
    let commands = Commands::new(shared, s, cx);
    match commands.build(cx)? {
        Ran::Paused(reason) => return Ok(Some(reason)),
        Ran::Nothing => {}
        Ran::Done(b) => {
            if b.exec.is_some() {
                emit_build(cx, &b);
            }
            if !b.build.success {
                let mut text = String::new();
                for d in b.build.errors.iter().take(20) {
                    text.push_str(&format!("\n- {}", diagnostic(d)));
                }
                if b.build.errors.is_empty()
                    && let Some(e) = &b.exec
                {
                    text.push_str(&tail(&e.stderr.text, &e.stdout.text));
                }
                return Err(NodeError::new(
                    ErrorCode::BaselineFailed.as_str(),
                    format!(
                        "the project does not build before any change ({}), so no change could \
                         be validated; fix the build (or set `validate.build` in \
                         .ironbees/config.yaml), then `ironbees runs resume {}`:{text}",
                        b.build.tool,
                        cx.run_id()
                    ),
                ));
            }
        }
    }
    let t = match commands.test(cx, &[])? {
        Ran::Paused(reason) => return Ok(Some(reason)),
        Ran::Nothing => {
            s.baseline = Some(Baseline { test_tool: "none".into(), ..Baseline::default() });
            return Ok(None);
        }
        Ran::Done(t) => t,
    };
    let failing: Vec<String> = t.test.failures.iter().map(|f| f.name.clone()).collect();
    let event = CommandEvent {
        kind: CommandKind::Test,
        scope: Some(CommandScope::Baseline),
        failed: t.test.failed.max(failing.len() as u32),
        total: t.test.total,
    };
    event.emit(
        cx,
        &t.test.tool,
        t.test.success,
        t.test.duration_ms,
        Some(&t.exec),
        bounded_names(failing.iter().cloned()),
        vec![],
    );
    if !failing.is_empty() {
        cx.emit(RunEventKind::Warning {
            code: "PRE_EXISTING_FAILURES".into(),
            message: format!(
                "{} test(s) fail before any change; they are reported, not blamed on this run: {}",
                failing.len(),
                stdx::clip(&failing.join(", "), 600)
            ),
        });
    }
    if let Some(why) = &t.test.incomplete {
        cx.emit(RunEventKind::Warning {
            code: "BASELINE_INCOMPLETE".into(),
            message: format!(
                "the tests could not complete before any change ({why}); a run that cannot \
                 complete after the change either is reviewed by a human"
            ),
        });
    }
    s.baseline = Some(Baseline {
        test_tool: t.test.tool.clone(),
        failing_tests: failing,
        total: t.test.total,
        incomplete: t.test.incomplete.clone(),
        duration_ms: t.exec.duration_ms,
    });
    Ok(None)
}

// --- VALIDATE ------------------------------------------------------------------------------

pub(crate) fn validate(shared: &Shared, s: &mut CodingState, cx: &mut NodeContext<'_>) -> Outcome {
    // A coder round that changed nothing after a failure gets the same failure:
    // building and testing the same files again would only cost time and a
    // validator call. It counts as the same failure again (the loop detector's).
    let fingerprint = overlay_fingerprint(&s.overlay);
    if s.validation == Some(Validation::Failed)
        && s.validated_overlay.as_ref() == Some(&fingerprint)
        && let Some(last) = s.recent.last().cloned()
    {
        s.recent.push(last);
        if let Some(e) = &s.error_context
            && !e.starts_with(CHANGED_NOTHING)
        {
            s.error_context = Some(format!("{CHANGED_NOTHING}\n\n{e}"));
        }
        cx.emit(RunEventKind::ValidationReused {
            reason: "the run's files did not change since the last failure".into(),
        });
        return Ok(Step::Continue);
    }
    if let Some(reason) = ensure_baseline(shared, s, cx)? {
        return Ok(pause(s, reason));
    }
    let ws = workspace(shared, cx.run_id());
    let report = ws.sync(&overlay::to_edit(&s.overlay)).map_err(|e| {
        NodeError::new(e.code().as_str(), format!("preparing the run's workspace: {e}"))
    })?;
    cx.emit(RunEventKind::Workspace { path: ws.path().display().to_string(), sync: report });
    let commands = Commands::new(shared, s, cx);
    // Whether a command actually checked the change (a build that ran, tests that
    // ran): a project with neither has not been validated, whatever passed.
    let mut checked = false;
    let mut inconclusive = false;
    let mut failure = None;
    // Build first: its errors say more than a test run that could not compile.
    match commands.build(cx)? {
        Ran::Paused(reason) => return Ok(pause(s, reason)),
        Ran::Nothing => {}
        Ran::Done(b) => {
            // Python and plain Node projects have no build step: nothing ran.
            if b.exec.is_some() {
                checked = true;
                emit_build(cx, &b);
            }
            if !b.build.success {
                let mut text = format!("The build ({}) failed:\n", b.build.tool);
                for d in b.build.errors.iter().take(20) {
                    text.push_str(&format!("- {}\n", diagnostic(d)));
                }
                if b.build.errors.is_empty()
                    && let Some(e) = &b.exec
                {
                    text.push_str(&tail(&e.stderr.text, &e.stdout.text));
                }
                failure = Some(text);
            }
            s.build_result = Some(b.build);
        }
    }
    if failure.is_none() {
        let mut scopes = test_scopes(shared, s, cx);
        let related = Related::gather(shared, s, cx);
        let root = ws.path().to_owned();
        let concern =
            |f: &protocol::TestFailure| related.concern(&f.name, test_file_of(f, &root).as_deref());
        let mut next = 0;
        while let Some((scope, targets)) = scopes.get(next).cloned() {
            next += 1;
            let t = match commands.test(cx, &targets)? {
                Ran::Paused(reason) => return Ok(pause(s, reason)),
                Ran::Nothing => break,
                Ran::Done(t) => t,
            };
            // Whether a test was among those this run ran: every test for the
            // whole suite; for a targeted run, those in its files (or, for
            // cargo, matching its filters).
            let selected = |f: &protocol::TestFailure| {
                targets.is_empty()
                    || test_file_of(f, &root).is_some_and(|p| {
                        targets.contains(&p) || targets.iter().any(|t| names_test(t, &p, &f.name))
                    })
                    || targets.iter().any(|t| f.name.contains(t.as_str()))
            };
            let mut j = judge(&t.test, s.baseline.as_ref(), &concern, &selected);
            checked |= !j.ran_none;
            let failed = t.test.failed.max(t.test.failures.len() as u32);
            let event = CommandEvent {
                kind: CommandKind::Test,
                scope: Some(scope),
                failed,
                total: t.test.total,
            };
            event.emit(
                cx,
                &t.test.tool,
                j.passed,
                t.test.duration_ms,
                Some(&t.exec),
                bounded_names(t.test.failures.iter().map(|f| f.name.clone())),
                bounded_names(j.pre_existing.iter().cloned()),
            );
            // A targeted run that could not even start its tests (a usage error,
            // a conftest of the selection that does not import) says nothing about
            // the change: the whole suite, as the baseline ran it, decides.
            if scope == CommandScope::Targeted
                && !j.passed
                && t.test.incomplete.is_some()
                && t.test.failures.is_empty()
            {
                if !scopes.iter().any(|(scope, _)| *scope == CommandScope::Full) {
                    scopes.push((CommandScope::Full, Vec::new()));
                }
                continue;
            }
            // New failures of a targeted run whose test files pass when run on
            // their own depended on the tests run before them (state one test
            // leaves for another: a targeted run orders other files before them
            // than the baseline's whole suite did), not on the change. Each is
            // reported, not blamed. The whole suite runs in the baseline's order,
            // so a new failure there is not explained by order.
            if !j.passed
                && !j.new.is_empty()
                && scope == CommandScope::Targeted
                && t.test.incomplete.is_none()
                && t.test.build_errors.is_empty()
                && let Some(files) = isolation_targets(&t.test, &j.new, &root)
                // The same files again: nothing else ran before them.
                && files.iter().map(String::as_str).collect::<BTreeSet<_>>()
                    != targets.iter().map(|t| file_part(t)).collect::<BTreeSet<_>>()
            {
                let alone = match commands.test(cx, &files)? {
                    Ran::Paused(reason) => return Ok(pause(s, reason)),
                    Ran::Nothing => None,
                    Ran::Done(alone) => Some(alone),
                };
                if let Some(alone) = alone {
                    let excused = order_dependent(&j.new, &alone.test);
                    let event = CommandEvent {
                        kind: CommandKind::Test,
                        scope: Some(CommandScope::Isolated),
                        failed: alone.test.failed.max(alone.test.failures.len() as u32),
                        total: alone.test.total,
                    };
                    event.emit(
                        cx,
                        &alone.test.tool,
                        excused.is_some(),
                        alone.test.duration_ms,
                        Some(&alone.exec),
                        bounded_names(alone.test.failures.iter().map(|f| f.name.clone())),
                        vec![],
                    );
                    if let Some(excused) = excused {
                        cx.emit(RunEventKind::Warning {
                            code: "ORDER_DEPENDENT_FAILURES".into(),
                            message: format!(
                                "{} test(s) failed after other tests but pass in their own files; they \
                                 depend on the order tests run in, not on this change: {}",
                                excused.len(),
                                stdx::clip(&excused.join(", "), 600)
                            ),
                        });
                        j.pre_existing.extend(excused);
                        j.new.clear();
                        j.passed = true;
                    }
                }
            }
            let still_broken = t.test.incomplete.is_some()
                && s.baseline.as_ref().is_some_and(|b| b.incomplete.is_some());
            inconclusive |= still_broken && j.new.is_empty();
            let passed = j.passed;
            if !passed && !j.ran_none {
                failure = Some(test_failure(&t.test, &t.exec, &j));
            }
            s.test_result = Some(t.test);
            if !passed {
                break;
            }
        }
    }
    match failure {
        None if !checked || inconclusive => {
            s.error_context = None;
            s.validation = Some(Validation::Unchecked);
            let reason = if inconclusive {
                "the tests could not complete before the change and cannot after it: a human \
                 reviews the change"
            } else {
                "no build step ran and no test was found: a human reviews the change"
            };
            cx.emit(RunEventKind::ValidationSkipped { reason: reason.into() });
        }
        None => {
            s.error_context = None;
            s.validation = Some(Validation::Passed);
        }
        Some(text) => {
            s.recent.push(policy::failure_fingerprint(&text));
            s.validation = Some(Validation::Failed);
            let diagnosis = diagnose(shared, s, &text, cx)?;
            s.error_context = Some(match diagnosis {
                Some(d) => format!("{text}\n## Diagnosis\n\n{d}\n"),
                None => text,
            });
        }
    }
    // Recorded last: a round cut short must be validated again.
    s.validated_overlay = Some(fingerprint);
    Ok(Step::Continue)
}

/// A validation the time limit cut: nothing is concluded, and the run stops for
/// a human before DECIDE.
fn pause(s: &mut CodingState, reason: String) -> Step {
    s.validation = None;
    s.pause_reason = Some(reason);
    Step::Continue
}

/// The test runs of this validation, in order: the targeted run (when the scope
/// asks for one and targets are found), then the whole suite (unless only
/// targeted runs are asked for).
fn test_scopes(
    shared: &Shared,
    s: &CodingState,
    cx: &NodeContext<'_>,
) -> Vec<(CommandScope, Vec<String>)> {
    let full = (CommandScope::Full, Vec::new());
    // A configured test command selects its own tests.
    if shared.session.commands().test.is_some() {
        return vec![full];
    }
    match s.settings.tests {
        TestScope::Full => vec![full],
        scope => {
            let targets = targets(shared, s, cx);
            match (scope, targets.is_empty()) {
                (_, true) => vec![full],
                (TestScope::Targeted, false) => vec![(CommandScope::Targeted, targets)],
                (_, false) => vec![(CommandScope::Targeted, targets), full],
            }
        }
    }
}

/// The tests the change reaches, in the test tool's selection syntax: for tools
/// that select by file (pytest, jest, vitest, go), the tests that reach the
/// changed definitions (`definition_tests`; pytest's as `file::Class::test`
/// node ids), else the nearest test files `impact` finds for the changed file
/// (`nearest_tests`), the changed test files, and the files of the last
/// round's new failures; for cargo, the last round's failing test names. Empty
/// when the tool is not known yet or there are too many to be worth it.
fn targets(shared: &Shared, s: &CodingState, cx: &NodeContext<'_>) -> Vec<String> {
    let tool = s
        .test_result
        .as_ref()
        .map(|t| t.tool.clone())
        .or_else(|| s.baseline.as_ref().map(|b| b.test_tool.clone()))
        .unwrap_or_default();
    let pre: BTreeSet<&str> = s
        .baseline
        .as_ref()
        .map(|b| b.failing_tests.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let last_failures = s
        .test_result
        .iter()
        .flat_map(|t| t.failures.iter())
        .filter(|f| !pre.contains(f.name.as_str()));
    let mut out = BTreeSet::new();
    match tool.as_str() {
        "pytest" | "jest" | "vitest" | "go" => {
            let call = stdx::Call::new(&stdx::NoProgress, cx.cancellation_token());
            let mut functions: BTreeSet<String> = BTreeSet::new();
            let mut subjects: BTreeSet<String> = BTreeSet::new();
            let mut reached: BTreeSet<String> = BTreeSet::new();
            for f in &s.overlay {
                if f.content.is_none() {
                    continue;
                }
                if looks_like_test(&f.path) {
                    out.insert(f.path.clone());
                    continue;
                }
                subjects.extend(subjects_of(&f.path));
                let file_impact = reach(f.path.clone());
                let file_tests =
                    shared.session.impact(&file_impact, &call).map(|i| i.tests).unwrap_or_default();
                reached.extend(file_tests.iter().map(|t| t.path.clone()));
                // The tests that reach the definitions the change touches; a
                // change outside any (top-level code) or in many places: the
                // tests nearest the file.
                match definition_tests(shared, s, &f.path, &call) {
                    Some(tests) if !tests.is_empty() => {
                        // Functions are cheap to run wherever they are; whole
                        // files only the nearest.
                        let mut whole = Vec::new();
                        for t in tests {
                            if tool == "pytest" && t.functions.iter().any(|f| collected(f)) {
                                functions.extend(
                                    t.functions
                                        .iter()
                                        .filter(|f| collected(f))
                                        .map(|f| format!("{}::{}", t.path, f.replace('.', "::"))),
                                );
                            } else {
                                whole.push(t);
                            }
                        }
                        out.extend(nearest_tests(whole));
                    }
                    _ => out.extend(nearest_tests(file_tests)),
                }
            }
            let ws = workspace(shared, cx.run_id());
            // Named after the change but out of `impact`'s reach: whole files
            // (what `impact` reaches is targeted more finely above).
            out.extend(
                named_tests(ws.path(), &subjects).into_iter().filter(|t| !reached.contains(t)),
            );
            out.extend(last_failures.filter_map(|f| test_file_of(f, ws.path())));
            // Too many functions: their files.
            if functions.len() > MAX_NODE_IDS {
                out.extend(functions.iter().map(|n| file_part(n).to_owned()));
                functions.clear();
            }
            // A file run whole selects its functions already.
            functions.retain(|n| !out.contains(file_part(n)));
            out.extend(functions);
            // Only files that exist in the copy (a deleted test, a stale path).
            out.retain(|p| ws.path().join(file_part(p)).is_file());
            // Only what the project's own suite collects (its `testpaths`, its
            // `python_files`): not a helper module under `tests/`, not an example
            // project's tests with their own conftest. A test file the run
            // changed is run whatever the configuration says.
            if tool == "pytest" {
                let suite = PytestSuite::load(ws.path());
                let changed: BTreeSet<&str> = s.overlay.iter().map(|f| f.path.as_str()).collect();
                out.retain(|p| changed.contains(file_part(p)) || suite.collects(file_part(p)));
            }
        }
        "cargo" | "nextest" => out.extend(last_failures.map(|f| f.name.clone())),
        _ => {}
    }
    let files: BTreeSet<&str> = out.iter().map(|t| file_part(t)).collect();
    if files.len() > MAX_TARGETS {
        return Vec::new();
    }
    out.into_iter().collect()
}

/// The test files in the copy at `root` named after a changed module or a
/// package around it (`subjects_of`): `testing/test_mark.py` for
/// `src/_pytest/mark/evaluate.py`. `impact` does not reach them when the tests
/// load the code another way (pytest's plugins through `testdir`, pylint run in
/// a subprocess), and the bug's own test is often there: run first, a change
/// that fixes nothing is rejected in seconds, not after the whole suite. None
/// when more than [`MAX_NAMED_FILES`] are so named. Links (a linked `.venv`,
/// `node_modules`) are not followed, nor hidden directories.
fn named_tests(root: &std::path::Path, subjects: &BTreeSet<String>) -> Vec<String> {
    if subjects.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    // The copy holds what the project tracks; the walk's own filters would read
    // the project's ignore files above the copy (`.ironbees/` is ignored there).
    let walk = ignore::WalkBuilder::new(root).standard_filters(false).hidden(true).build();
    for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else { continue };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if looks_like_test(&rel)
            && engine::test_subject(&rel).is_some_and(|t| subjects.contains(&t))
        {
            found.push(rel);
            if found.len() > MAX_NAMED_FILES {
                return Vec::new();
            }
        }
    }
    found
}

/// What VALIDATE asks `impact` for: everything within four steps of `target`
/// (what the targeted run selects from and what a failure is judged near by).
fn reach(target: String) -> ImpactRequest {
    ImpactRequest { target, depth: Some(4), limit: Some(200), all: true }
}

/// The file of a target: `tests/test_a.py` of `tests/test_a.py::TestA::test_b`.
fn file_part(target: &str) -> &str {
    target.split("::").next().unwrap_or(target)
}

/// The tests that reach the definitions a file's change touches: `impact` of
/// `path:line` for each place the change is (its lines in the working tree's
/// version, which the index holds). `None` when that is not known or not a
/// definition: no diff, a change in top-level code, too many places.
fn definition_tests(
    shared: &Shared,
    s: &CodingState,
    path: &str,
    call: &stdx::Call<'_>,
) -> Option<Vec<protocol::AffectedTest>> {
    let diff = s.code_diffs.iter().find(|d| d.file_path == path)?;
    let places = changed_places(&diff.diff);
    if places.is_empty() || places.len() > MAX_CHANGED_PLACES {
        return None;
    }
    let mut tests = Vec::new();
    for line in places {
        let req = reach(format!("{path}:{line}"));
        let impact = shared.session.impact(&req, call).ok()?;
        if impact.target.kind != protocol::ResolvedKind::Symbol {
            return None;
        }
        let reached = impact.tests.iter().any(|t| !t.functions.is_empty());
        tests.extend(impact.tests);
        if reached {
            continue;
        }
        // A method no test function reaches (called through `self`, a dispatch
        // table; a test file only named after the module): the tests of its
        // class, the nearest unit that has callers.
        for symbol in &impact.target.symbols {
            if let Some(container) = container_of(&symbol.qualified_name) {
                let req = reach(container.to_owned());
                if let Ok(class) = shared.session.impact(&req, call)
                    && class.target.files.iter().any(|f| f == path)
                {
                    tests.extend(class.tests);
                }
            }
        }
    }
    Some(tests)
}

/// Whether pytest collects a test file's function by its default names
/// (`test*` functions, `Test*` classes and their `test*` methods): a fixture or
/// a helper that reaches the change is no node id (pytest would answer "not
/// found" and the targeted run would not start).
fn collected(qualified: &str) -> bool {
    let parts: Vec<&str> = qualified.split('.').collect();
    match parts.as_slice() {
        [f] => f.starts_with("test") || f.starts_with("Test"),
        [classes @ .., f] => classes.iter().all(|c| c.starts_with("Test")) && f.starts_with("test"),
        [] => false,
    }
}

/// `Class` of `Class.method` (`::` for Rust and C++); None at the top level.
fn container_of(qualified: &str) -> Option<&str> {
    let cut =
        qualified.rfind("::").map(|i| (i, 2)).or_else(|| qualified.rfind('.').map(|i| (i, 1)));
    cut.map(|(i, _)| &qualified[..i]).filter(|c| !c.is_empty())
}

/// Where a unified diff changes its old side: one line per run of changed
/// lines (the first removed line, or for lines only added, the line they follow).
fn changed_places(diff: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut old = 0u32;
    let mut in_run = false;
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("@@ -") {
            let start = rest.split([',', ' ']).next().and_then(|n| n.parse::<u32>().ok());
            old = start.unwrap_or(1);
            in_run = false;
            continue;
        }
        if line.starts_with("---") || line.starts_with("+++") {
            continue;
        }
        match line.as_bytes().first() {
            Some(b'-') => {
                if !in_run {
                    out.push(old.max(1));
                    in_run = true;
                }
                old += 1;
            }
            Some(b'+') => {
                if !in_run {
                    out.push(old.saturating_sub(1).max(1));
                    in_run = true;
                }
            }
            _ => {
                in_run = false;
                old += 1;
            }
        }
    }
    out.dedup();
    out
}

/// The affected tests nearest the changed file: those that import it directly
/// (or are named after it), else those at the smallest distance there is. The
/// farther ones reach it through a module most of a suite imports (seaborn's
/// `axisgrid` through `distributions`, `relational`, ...): running them first
/// would be the whole suite twice. They run in the whole suite, and a failure
/// there is still judged near by `Related` (depth 4).
fn nearest_tests(tests: Vec<protocol::AffectedTest>) -> impl Iterator<Item = String> {
    let nearest = tests.iter().filter_map(|t| t.distance).min().unwrap_or(1).max(1);
    tests.into_iter().filter(move |t| t.distance.is_none_or(|d| d <= nearest)).map(|t| t.path)
}

/// Whether the pytest node id `target` (`tests/test_a.py::TestA::test_b`)
/// selected the failure `name` (JUnit's `tests.test_a.TestA::test_b[param]`)
/// of the file `file`.
fn names_test(target: &str, file: &str, name: &str) -> bool {
    let Some((path, function)) = target.split_once("::") else { return false };
    if path != file {
        return false;
    }
    let function = function.replace("::", ".");
    let name = name.replace("::", ".");
    let name = name.split('[').next().unwrap_or(&name);
    name == function || name.ends_with(&format!(".{function}"))
}

/// A test file by the common conventions (the index's own notion needs the
/// graph; this is only to put a changed test first).
pub(crate) fn looks_like_test(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || name.contains(".test.")
        || name.contains(".spec.")
        || path.starts_with("tests/")
        || path.contains("/tests/")
}

/// The validator's explanation of a failure, when there is a validator and the
/// budget allows; its absence only makes the coder's context thinner.
fn diagnose(
    shared: &Shared,
    s: &mut CodingState,
    failure: &str,
    cx: &mut NodeContext<'_>,
) -> Result<Option<String>, NodeError> {
    let Some(validator) = shared.agents.get("validator") else { return Ok(None) };
    let user = format!(
        "## The plan\n\n{}\n\n## What the coder says it changed\n\n{}\n\n## The failed validation\n\n{failure}\n",
        serde_json::to_string_pretty(&s.plan).unwrap_or_default(),
        s.coder_summary.as_deref().unwrap_or("(no summary)")
    );
    let system = instructions(shared, &[]).append_to(&validator.prompt);
    let mut turn =
        Turn { agent: validator, system, messages: vec![Message::user(user)], schema: None };
    Ok(match turn.run(shared, s, cx)? {
        TurnEnd::Answer { text, .. } if !text.trim().is_empty() => Some(text),
        TurnEnd::Answer { .. } => None,
        TurnEnd::Paused(reason) => {
            cx.emit(RunEventKind::DiagnosisSkipped { reason });
            None
        }
    })
}

fn diagnostic(d: &protocol::Diagnostic) -> String {
    let at = match (&d.file, d.line) {
        (Some(f), Some(l)) => format!("{f}:{l}: "),
        (Some(f), None) => format!("{f}: "),
        _ => String::new(),
    };
    format!("{at}{}", d.message)
}

/// The change's failing tests with their messages (what the coder needs first),
/// the ones that failed before the change named apart, or the output's end when
/// the tool reported none.
fn test_failure(t: &TestResult, exec: &protocol::ExecResult, j: &Judged) -> String {
    let mut text = format!(
        "The tests ({}) failed: {} passed, {} failed of {}.\n",
        t.tool, t.passed, t.failed, t.total
    );
    if let Some(why) = &t.incomplete {
        text.push_str(&format!("The run was incomplete: {why}\n"));
    }
    for d in t.build_errors.iter().take(20) {
        text.push_str(&format!("- {}\n", diagnostic(d)));
    }
    let new: BTreeSet<&str> = j.new.iter().map(String::as_str).collect();
    for f in t.failures.iter().filter(|f| new.contains(f.name.as_str())).take(10) {
        let at = match (&f.file, f.line) {
            (Some(file), Some(l)) => format!(" ({file}:{l})"),
            _ => String::new(),
        };
        text.push_str(&format!("\n### {}{at}\n{}\n", f.name, stdx::clip(&f.message, 2000)));
    }
    if !j.pre_existing.is_empty() {
        text.push_str(&format!(
            "\nThese failed before the run's first change too; leave them alone: {}\n",
            stdx::clip(&j.pre_existing.join(", "), 1000)
        ));
    }
    if t.failures.is_empty() && t.build_errors.is_empty() {
        text.push_str(&tail(&exec.stderr.text, &exec.stdout.text));
    }
    text
}

fn tail(stderr: &str, stdout: &str) -> String {
    let both = format!("{stdout}\n{stderr}");
    let trimmed = both.trim();
    let start = trimmed.len().saturating_sub(OUTPUT_TAIL);
    let start = (start..trimmed.len()).find(|i| trimmed.is_char_boundary(*i)).unwrap_or(0);
    format!("\nOutput (end):\n```\n{}\n```\n", &trimmed[start..])
}

/// What a `command` event names: every failure, until the names add up to
/// [`MAX_NAMED_BYTES`] (the event's `failed` keeps the exact count).
const MAX_NAMED_BYTES: usize = 16 * 1024;

fn bounded_names(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut used = 0;
    let mut out = Vec::new();
    for name in names {
        used += name.len();
        if used > MAX_NAMED_BYTES {
            break;
        }
        out.push(name);
    }
    out
}

/// The `command` event of a build that ran: its errors, by name.
fn emit_build(cx: &mut NodeContext<'_>, b: &protocol::BuildResponse) {
    let errors = bounded_names(b.build.errors.iter().map(diagnostic));
    let failed = b.build.errors.len() as u32;
    let event = CommandEvent { kind: CommandKind::Build, scope: None, failed, total: 0 };
    event.emit(
        cx,
        &b.build.tool,
        b.build.success,
        b.build.duration_ms,
        b.exec.as_ref(),
        errors,
        vec![],
    );
}

/// The parts of a `command` event that say what ran.
struct CommandEvent {
    kind: CommandKind,
    scope: Option<CommandScope>,
    failed: u32,
    total: u32,
}

impl CommandEvent {
    #[allow(clippy::too_many_arguments)] // the event's fields
    fn emit(
        self,
        cx: &mut NodeContext<'_>,
        tool: &str,
        success: bool,
        duration_ms: u64,
        exec: Option<&protocol::ExecResult>,
        failures: Vec<String>,
        pre_existing: Vec<String>,
    ) {
        cx.emit(RunEventKind::Command {
            kind: self.kind,
            scope: self.scope,
            tool: tool.to_owned(),
            success,
            duration_ms,
            wall_ms: exec.map(|e| e.duration_ms),
            failures,
            failed: self.failed,
            command: exec.map(|e| e.command.clone()).unwrap_or_default(),
            exit_code: exec.and_then(|e| e.exit_code),
            output_tail: exec
                .map(|e| {
                    stdx::clip(&format!("{}{}", e.stdout.text, e.stderr.text), 1500).into_owned()
                })
                .unwrap_or_default(),
            pre_existing,
            total: self.total,
        });
    }
}

#[cfg(test)]
mod tests {
    use protocol::TestFailure;

    use super::*;

    fn result(total: u32, failing: &[&str], incomplete: Option<&str>) -> TestResult {
        TestResult {
            success: failing.is_empty() && incomplete.is_none() && total > 0,
            tool: "pytest".into(),
            total,
            passed: total - failing.len() as u32,
            failed: failing.len() as u32,
            failures: failing
                .iter()
                .map(|n| TestFailure {
                    name: (*n).into(),
                    message: String::new(),
                    stack_trace: None,
                    file: None,
                    line: None,
                })
                .collect(),
            incomplete: incomplete.map(str::to_owned),
            ..TestResult::default()
        }
    }

    #[test]
    fn failures_are_judged_against_the_baseline() {
        let base = |failing: &[&str], incomplete: Option<&str>| Baseline {
            test_tool: "pytest".into(),
            failing_tests: failing.iter().map(|s| s.to_string()).collect(),
            total: 10,
            incomplete: incomplete.map(str::to_owned),
            duration_ms: 0,
        };
        // (result, baseline, passed, new, pre-existing)
        type Case<'a> = (TestResult, Option<Baseline>, bool, Vec<&'a str>, Vec<&'a str>);
        let cases: Vec<Case<'_>> = vec![
            (result(10, &[], None), None, true, vec![], vec![]),
            (result(10, &["a"], None), None, false, vec!["a"], vec![]),
            (result(10, &["a"], None), Some(base(&["a"], None)), true, vec![], vec!["a"]),
            (result(10, &["a", "b"], None), Some(base(&["a"], None)), false, vec!["b"], vec!["a"]),
            // Broken before and after: not the change's doing.
            (
                result(0, &[], Some("crashed")),
                Some(base(&[], Some("crashed"))),
                true,
                vec![],
                vec![],
            ),
            // Broken only after: the change's.
            (result(0, &[], Some("crashed")), Some(base(&[], None)), false, vec![], vec![]),
            (
                result(3, &["a"], Some("timeout")),
                Some(base(&["a"], None)),
                false,
                vec![],
                vec!["a"],
            ),
        ];
        let unrelated = |_: &TestFailure| Concern::Other;
        for (i, (t, b, passed, new, pre)) in cases.into_iter().enumerate() {
            let j = judge(&t, b.as_ref(), &unrelated, &|_| true);
            assert_eq!(j.passed, passed, "case {i}");
            assert_eq!(j.new, new, "case {i}");
            assert_eq!(j.pre_existing, pre, "case {i}");
        }
    }

    #[test]
    fn new_failures_that_pass_in_their_own_files_are_order_dependent() {
        let new = vec!["tests.test_regr::test_package[x]".to_owned(), "tests.test_b::t".to_owned()];
        // (the isolated run, whether the new failures are excused)
        let cases: Vec<(TestResult, bool)> = vec![
            // Both pass alone (another test of those files may fail: not ours).
            (result(20, &[], None), true),
            (result(20, &["tests.test_b::other"], None), true),
            // One fails again: the change's, both stand.
            (result(20, &["tests.test_b::t"], None), false),
            // A run that did not complete, or ran nothing, clears nothing.
            (result(5, &[], Some("interrupted")), false),
            (result(0, &[], None), false),
        ];
        for (i, (alone, excused)) in cases.into_iter().enumerate() {
            assert_eq!(order_dependent(&new, &alone).is_some(), excused, "case {i}");
        }
        let mut build_failed = result(20, &[], None);
        build_failed.build_errors.push(protocol::Diagnostic {
            severity: protocol::Severity::Error,
            code: None,
            message: "syntax error".into(),
            file: None,
            line: None,
            column: None,
        });
        assert!(order_dependent(&new, &build_failed).is_none());

        // The files to run: one per failure, only where the file is known.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/test_regr.py"), "").unwrap();
        std::fs::write(dir.path().join("tests/test_b.py"), "").unwrap();
        let t = result(20, &["tests.test_regr::test_package[x]", "tests.test_b::t"], None);
        assert_eq!(
            isolation_targets(&t, &new, dir.path()),
            Some(vec!["tests/test_b.py".to_owned(), "tests/test_regr.py".to_owned()])
        );
        let unknown = result(20, &["tests.test_gone::t"], None);
        assert_eq!(
            isolation_targets(&unknown, &["tests.test_gone::t".to_owned()], dir.path()),
            None
        );
        let mut cargo = t.clone();
        cargo.tool = "cargo".into();
        assert_eq!(isolation_targets(&cargo, &new, dir.path()), None);
    }

    #[test]
    fn a_pre_existing_failure_the_run_is_about_is_not_excused() {
        let b = Baseline {
            test_tool: "pytest".into(),
            failing_tests: vec![
                "test_calc::test_divide_by_zero".into(),
                "test_io::test_net".into(),
            ],
            total: 3,
            ..Baseline::default()
        };
        let related = Related {
            files: ["test_calc.py".to_owned()].into(),
            words: words("Fix the division by zero bug in calculate()"),
            ..Related::default()
        };
        let t = result(3, &["test_calc::test_divide_by_zero", "test_io::test_net"], None);
        let concern = |f: &TestFailure| {
            related.concern(&f.name, Some(&format!("{}.py", f.name.split("::").next().unwrap())))
        };
        let j = judge(&t, Some(&b), &concern, &|_| true);
        assert!(!j.passed);
        assert_eq!(j.new, ["test_calc::test_divide_by_zero"]);
        assert_eq!(j.pre_existing, ["test_io::test_net"]);
        // Named in the request, wherever it lives.
        let text = "make test_parse_header pass; parsing a body must not divide by zero";
        let by_name = Related { words: words(text), text: text.into(), ..Related::default() };
        assert_eq!(by_name.concern("tests.test_http::test_parse_header", None), Concern::Named);
        assert_eq!(
            by_name.concern("tests.test_http::test_parse_header[utf8]", None),
            Concern::Named
        );
        assert_eq!(by_name.concern("tests.test_http::test_divide_by_zero", None), Concern::Near);
        assert_eq!(by_name.concern("tests.test_http::test_parse_body", None), Concern::Near);
        assert_eq!(by_name.concern("tests.test_http::test_cookies", None), Concern::Other);
        // Plurals in the prose, singulars in the name (pylint 7080's bug test).
        let prose = "`--recursive=y` ignores `ignore-paths` in the current directory";
        let plural = Related { words: words(prose), text: prose.into(), ..Related::default() };
        assert_eq!(
            plural
                .concern("tests.test_self.TestRunTC::test_ignore_path_recursive_current_dir", None),
            Concern::Near
        );
        assert_eq!(words("classes status analysis class"), words("classe status analysis class"));
        assert!(words("status analysis class").contains("status"));
    }

    #[test]
    fn test_files_named_after_the_changed_module_or_package_are_near() {
        // (changed file, failing test's file, concern)
        let cases = [
            // pytest 7373: the bug's test, which no import path reaches.
            ("src/_pytest/mark/evaluate.py", "testing/test_mark.py", Concern::Near),
            ("src/_pytest/mark/evaluate.py", "tests/mark/test_evaluate.py", Concern::Near),
            // The outermost package names the whole project.
            ("src/_pytest/mark/evaluate.py", "testing/test_pytest.py", Concern::Other),
            ("src/_pytest/mark/evaluate.py", "testing/test_src.py", Concern::Other),
            ("src/_pytest/mark/evaluate.py", "testing/test_skipping.py", Concern::Other),
            ("src/_pytest/mark/evaluate.py", "testing/test_mark_expression.py", Concern::Other),
            ("lib/matplotlib/axes/_base.py", "lib/matplotlib/tests/test_axes.py", Concern::Near),
            ("lib/matplotlib/axes/_base.py", "lib/matplotlib/tests/test_base.py", Concern::Near),
            (
                "lib/matplotlib/axes/_base.py",
                "lib/matplotlib/tests/test_matplotlib.py",
                Concern::Other,
            ),
            ("lib/matplotlib/axes/_base.py", "lib/matplotlib/tests/test_lib.py", Concern::Other),
            ("requests/utils.py", "tests/test_utils.py", Concern::Near),
            ("requests/utils.py", "tests/test_requests.py", Concern::Other),
            ("src/flask/json/provider.py", "tests/test_json.py", Concern::Near),
            ("src/flask/json/provider.py", "tests/test_flask.py", Concern::Other),
            ("crates/agent/src/validate.rs", "crates/agent/tests/validate.rs", Concern::Near),
            ("crates/agent/src/validate.rs", "crates/agent/tests/agent.rs", Concern::Other),
            ("astropy/io/fits/card.py", "astropy/io/tests/test_io.py", Concern::Other),
            ("astropy/io/fits/card.py", "astropy/io/fits/tests/test_fits.py", Concern::Near),
            ("pkg/core/utils/strings.go", "pkg/core/utils/utils_test.go", Concern::Other),
        ];
        let request = "Incorrect caching of skipif/xfail string condition evaluation";
        for (changed, file, want) in cases {
            let related = Related {
                subjects: subjects_of(changed).into_iter().collect(),
                words: words(request),
                text: request.into(),
                ..Related::default()
            };
            assert_eq!(
                related.concern("t::test_something_else", Some(file)),
                want,
                "{changed} {file}"
            );
        }
        // The no-op of 7373 is rejected; the fix, which makes the bug's test
        // pass, is not blamed for the other pre-existing failure near it.
        let related = Related {
            subjects: subjects_of("src/_pytest/mark/evaluate.py").into_iter().collect(),
            words: words(request),
            text: request.into(),
            ..Related::default()
        };
        let bug = "testing.test_mark.TestFunctional::test_reevaluate_dynamic_expr";
        let env = "testing.test_mark::test_parameterset_for_parametrize_marks";
        let b = Baseline {
            test_tool: "pytest".into(),
            failing_tests: vec![bug.into(), env.into()],
            total: 50,
            ..Baseline::default()
        };
        let concern = |_: &TestFailure| related.concern(bug, Some("testing/test_mark.py"));
        let all = |_: &TestFailure| true;
        let noop = judge(&result(50, &[bug, env], None), Some(&b), &concern, &all);
        assert_eq!((noop.passed, noop.new.len()), (false, 2));
        let fixed = judge(&result(50, &[env], None), Some(&b), &concern, &all);
        assert!(fixed.passed && fixed.new.is_empty(), "{:?}", fixed.new);
    }

    #[test]
    fn near_failures_from_before_are_excused_once_the_change_fixes_one_of_them() {
        // flask under a newer Werkzeug: test_basic and test_testing fail before
        // any change, in files near every fix; the issue's own test is
        // test_cli::test_routes (failing before, near too).
        let b = Baseline {
            test_tool: "pytest".into(),
            failing_tests: vec![
                "tests.test_cli::test_routes".into(),
                "tests.test_basic::test_session".into(),
                "tests.test_testing::test_client".into(),
                "tests.test_network::test_mirror".into(),
            ],
            total: 50,
            ..Baseline::default()
        };
        let related = Related {
            files: ["tests/test_cli.py", "tests/test_basic.py", "tests/test_testing.py"]
                .map(str::to_owned)
                .into(),
            words: words("flask routes should show the subdomain"),
            ..Related::default()
        };
        let concern = |f: &TestFailure| {
            let module = f.name.split("::").next().unwrap();
            related.concern(&f.name, Some(&format!("{}.py", module.replace('.', "/"))))
        };
        let all = |_: &TestFailure| true;
        let env = ["tests.test_basic::test_session", "tests.test_testing::test_client"];
        let mut with_network: Vec<&str> = env.to_vec();
        with_network.push("tests.test_network::test_mirror");
        // (failing after the change, selected, passed, new)
        type Case<'a> = (Vec<&'a str>, &'a dyn Fn(&TestFailure) -> bool, bool, Vec<&'a str>);
        let cases: Vec<Case<'_>> = vec![
            // The fix: test_routes passes now; the environment's failures stay.
            (with_network.clone(), &all, true, vec![]),
            // A no-op: everything fails as before; the near ones are the change's.
            (
                [&["tests.test_cli::test_routes"][..], &with_network].concat(),
                &all,
                false,
                vec![
                    "tests.test_cli::test_routes",
                    "tests.test_basic::test_session",
                    "tests.test_testing::test_client",
                ],
            ),
            // test_routes was not run (a targeted run of test_basic only): no
            // progress is shown, so nothing near is excused.
            (
                env.to_vec(),
                &|f: &TestFailure| f.name.starts_with("tests.test_basic"),
                false,
                vec!["tests.test_basic::test_session", "tests.test_testing::test_client"],
            ),
            // The fix, and a test that passed before fails now: that one is new.
            (
                [&with_network[..], &["tests.test_cli::test_other"]].concat(),
                &all,
                false,
                vec!["tests.test_cli::test_other"],
            ),
        ];
        for (i, (failing, selected, passed, new)) in cases.into_iter().enumerate() {
            let t = result(50, &failing, None);
            let j = judge(&t, Some(&b), &concern, selected);
            assert_eq!(
                (j.passed, j.new.clone()),
                (passed, new.iter().map(|s| s.to_string()).collect()),
                "case {i}"
            );
        }
        // A run that crashed shows no progress, whatever it did not report.
        let crashed = result(10, &env, Some("crashed"));
        assert!(!judge(&crashed, Some(&b), &concern, &all).passed);
        // requests: the report's test (test_requests.py) is two calls from the
        // fix in utils.py, and test_utils.py, near, has not imported since
        // before the run. The far test passing now is progress all the same.
        let b = Baseline {
            test_tool: "pytest".into(),
            failing_tests: vec![
                "tests.test_requests::test_decode".into(),
                "tests.test_utils::TestSuperLen".into(),
            ],
            total: 50,
            ..Baseline::default()
        };
        let related = Related {
            files: ["tests/test_utils.py".to_owned()].into(),
            words: words("iter_content returns bytes"),
            ..Related::default()
        };
        let concern = |f: &TestFailure| {
            let module = f.name.split("::").next().unwrap();
            related.concern(&f.name, Some(&format!("{}.py", module.replace('.', "/"))))
        };
        let fixed =
            judge(&result(50, &["tests.test_utils::TestSuperLen"], None), Some(&b), &concern, &all);
        assert!(fixed.passed && fixed.new.is_empty(), "{:?}", fixed.new);
        let noop = judge(
            &result(
                50,
                &["tests.test_requests::test_decode", "tests.test_utils::TestSuperLen"],
                None,
            ),
            Some(&b),
            &concern,
            &all,
        );
        assert_eq!(
            (noop.passed, noop.new),
            (false, vec!["tests.test_utils::TestSuperLen".to_owned()])
        );
    }

    #[test]
    fn words_split_identifiers_and_prose_alike() {
        assert_eq!(words("divideByZero in parse_header()"), words("divide by zero, parse header"));
        assert!(words("x io db").is_empty(), "short words say nothing");
    }

    #[test]
    fn the_nearest_affected_tests_run_first() {
        let test = |path: &str, distance: Option<u32>| protocol::AffectedTest {
            path: path.into(),
            priority: protocol::AffectedTestPriority::High,
            distance,
            convention: "test_*.py".into(),
            reasons: vec![],
            functions: vec![],
        };
        let nearest =
            |tests: Vec<protocol::AffectedTest>| nearest_tests(tests).collect::<Vec<String>>();
        // Direct importers and tests named after the file; not those reached
        // through another module.
        assert_eq!(
            nearest(vec![
                test("tests/test_grid.py", Some(1)),
                test("tests/test_dist.py", Some(2)),
                test("tests/test_named_grid.py", None),
                test("tests/test_far.py", Some(4)),
            ]),
            ["tests/test_grid.py", "tests/test_named_grid.py"]
        );
        // Nothing imports it directly: the closest there are.
        assert_eq!(
            nearest(vec![
                test("tests/test_a.py", Some(3)),
                test("tests/test_b.py", Some(2)),
                test("tests/test_c.py", Some(2)),
            ]),
            ["tests/test_b.py", "tests/test_c.py"]
        );
        assert!(nearest(vec![]).is_empty());
    }

    #[test]
    fn a_diff_says_where_it_changes_the_old_side() {
        let diff = [
            "--- a/calc.py",
            "+++ b/calc.py",
            "@@ -3,4 +3,6 @@ def div(a, b):",
            " ctx",
            "-    return a / b",
            "+    if b == 0:",
            "+        raise ValueError",
            "+    return a / b",
            " ctx",
            "@@ -20,2 +22,3 @@",
            " ctx",
            "+    added()",
            " ctx",
            "@@ -1,0 +1,1 @@",
            "+import os",
        ]
        .join("\n");
        let diff = diff.as_str();
        assert_eq!(changed_places(diff), vec![4, 20, 1]);
        assert!(changed_places("").is_empty());
    }

    #[test]
    fn only_what_pytest_collects_becomes_a_node_id() {
        for (name, want) in [
            ("test_div", true),
            ("TestPairGrid", true),
            ("TestPairGrid.test_corner", true),
            ("TestOuter.TestInner.test_x", true),
            ("penguins", false),
            ("TestPairGrid.helper", false),
            ("Helper.test_x", false),
        ] {
            assert_eq!(collected(name), want, "{name}");
        }
    }

    #[test]
    fn a_methods_container_is_its_class() {
        for (q, want) in [
            ("HueMapping._lookup_single", Some("HueMapping")),
            ("http::Client::send", Some("http::Client")),
            ("a.B.c", Some("a.B")),
            ("calculate", None),
        ] {
            assert_eq!(container_of(q), want, "{q}");
        }
    }

    #[test]
    fn pytest_node_ids_select_their_failures() {
        let cases = [
            ("tests/t.py::TestA::test_b", "tests/t.py", "tests.t.TestA::test_b", true),
            ("tests/t.py::TestA::test_b", "tests/t.py", "tests.t.TestA::test_b[x-1]", true),
            ("tests/t.py::test_b", "tests/t.py", "tests.t::test_b", true),
            ("tests/t.py::TestA::test_b", "tests/t.py", "tests.t.TestA::test_bc", false),
            ("tests/t.py::TestA::test_b", "tests/u.py", "tests.u.TestA::test_b", false),
            ("tests/t.py", "tests/t.py", "tests.t::test_b", false),
        ];
        for (target, file, name, want) in cases {
            assert_eq!(names_test(target, file, name), want, "{target} {name}");
        }
    }

    #[test]
    fn test_files_by_their_names() {
        for (path, test) in [
            ("tests/test_app.py", true),
            ("src/app_test.go", true),
            ("web/button.test.tsx", true),
            ("pkg/tests/helpers.py", true),
            ("src/app.py", false),
            ("testing.py", false),
        ] {
            assert_eq!(looks_like_test(path), test, "{path}");
        }
    }
}
