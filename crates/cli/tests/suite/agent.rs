//! Agent mode end to end: `ironbees run` and `ironbees runs` on fixture projects,
//! validated by the real runners (pytest, cargo) in the sandbox, with the model
//! played by the wire-level mock.
//!
//! The mock answers as a function of the conversation (`set_responder`), not of
//! the call count: the planner's request gets a plan, the coder's first turn an
//! edit, its turn after a tool result a summary, the validator's a diagnosis. So a
//! run killed and resumed, which repeats model calls, meets the same model.

use super::Out;
use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{Command, Stdio},
    time::Duration,
};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{Value, json};
use test_support::{
    TempProject,
    mock_llm::{MockLlm, MockUsage, Reply},
};

pub(crate) const CALC: &str = "def calculate(a, b, op):\n    if op == \"+\":\n        return a + b\n    if op == \"/\":\n        return a / b\n    raise ValueError(op)\n";
pub(crate) const TEST_CALC: &str = "import pytest\nfrom calc import calculate\n\n\ndef test_add():\n    assert calculate(1, 2, \"+\") == 3\n\n\ndef test_divide_by_zero():\n    with pytest.raises(ValueError):\n        calculate(1, 0, \"/\")\n";
pub(crate) const DIVISION: &str = "        return a / b";
pub(crate) const GUARDED: &str =
    "        if b == 0:\n            raise ValueError(\"division by zero\")\n        return a / b";
const WRONG: &str = "        if b == 0:\n            return None\n        return a / b";

pub(crate) fn calc_project() -> TempProject {
    let p = TempProject::new();
    p.write("calc.py", CALC);
    p.write("test_calc.py", TEST_CALC);
    p
}

pub(crate) fn plan_json(file: &str, what: &str) -> String {
    json!({
        "spec": format!("{what}; everything else unchanged."),
        "plan": {
            "summary": what,
            "steps": [{"number": 1, "description": what, "actionType": "MODIFY", "filePath": file,
                       "rationale": "the failing test expects it"}],
            "affectedFiles": [file],
            "complexity": "LOW"
        }
    })
    .to_string()
}

/// Which agent a request is for, from its system prompt's title.
pub(crate) fn agent_of(body: &Value) -> &'static str {
    let system = body["system"].to_string();
    ["Planner", "Coder", "Validator"]
        .into_iter()
        .find(|a| system.contains(&format!("# {a}")))
        .unwrap_or("unknown")
}

/// All the text the model was sent in this request's messages.
pub(super) fn conversation(body: &Value) -> String {
    body["messages"].to_string()
}

/// Whether the last message is a tool result (the agent's turn goes on).
pub(crate) fn after_tool(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["content"].to_string().contains("tool_result"))
}

pub(crate) fn replace_args(path: &str, hash: &str, from: &str, to: &str) -> Value {
    json!({"edits": [{"path": path, "targetString": from, "replacementString": to, "expectedHash": hash}],
           "options": {"dryRun": false}})
}

pub(crate) fn usage() -> MockUsage {
    MockUsage { input: 1000, output: 100, ..MockUsage::default() }
}

/// The calculator's model: plans the guard, edits `calc.py` (`first` on the first
/// round, the right guard once validation has failed), then says it is done.
pub(crate) fn calculator_model(mock: &MockLlm, first: &'static str) {
    let hash = stdx::sha256_hex(CALC.as_bytes());
    let wrong = CALC.replace(DIVISION, WRONG);
    let wrong_hash = stdx::sha256_hex(wrong.as_bytes());
    mock.set_responder(move |body| {
        let reply = match agent_of(body) {
            "Planner" => Reply::text(plan_json("calc.py", "Raise ValueError when calculate() divides by zero")),
            "Validator" => Reply::text(
                "Cause: calculate() returns None for b == 0 instead of raising.\nFix: calc.py:6 raise ValueError(\"division by zero\").",
            ),
            "Coder" if after_tool(body) => Reply::text("Guarded the division in calculate()."),
            "Coder" if conversation(body).contains("Validation failed") => Reply::tool_calls(
                "",
                vec![("change", replace_args("calc.py", &wrong_hash, WRONG, GUARDED))],
            ),
            "Coder" => Reply::tool_calls("", vec![("change", replace_args("calc.py", &hash, DIVISION, first))]),
            _ => return None,
        };
        Some(reply.usage(usage()))
    });
}

/// The binary in `dir` with the mock as its only model and no user configuration.
pub(crate) fn ironbees(dir: &Path, mock: &MockLlm) -> Command {
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.arg("-C").arg(dir);
    c.env("XDG_CONFIG_HOME", dir.join(".no-user-config"));
    super::without_model_env(&mut c);
    c.env("ANTHROPIC_API_KEY", "sk-ant-agent-test").env("ANTHROPIC_BASE_URL", mock.url());
    c.stdin(Stdio::null());
    c
}

impl Out {
    /// The JSON Lines of a `--json` run: its events, then its outcome.
    pub(crate) fn lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    pub(crate) fn outcome(&self) -> Value {
        self.lines().last().map(|l| l["outcome"].clone()).unwrap_or_default()
    }

    fn run_id(&self) -> String {
        self.outcome()["runId"].as_str().unwrap_or_default().to_owned()
    }

    /// The events of one kind (`toolCall`, `command`, ...).
    pub(crate) fn events(&self, kind: &str) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|l| l["kind"]["type"] == kind)
            .map(|l| l["kind"].clone())
            .collect()
    }
}

/// Runs the binary in `p` with `args` and the mock as its model.
pub(crate) fn cli(p: &TempProject, mock: &MockLlm, args: &[&str]) -> Out {
    let mut c = ironbees(p.root(), mock);
    c.args(args);
    run(c)
}

pub(crate) fn run(mut c: Command) -> Out {
    let o = c.output().unwrap();
    Out::from(o)
}

pub(crate) fn ok(o: &Out) {
    assert_eq!(o.code, 0, "stdout:\n{}\nstderr:\n{}", o.stdout, o.stderr);
}

/// The validations' test runs (not the baseline's).
fn test_runs(o: &Out) -> Vec<Value> {
    o.events("command")
        .into_iter()
        .filter(|c| c["kind"] == "test" && c["scope"] != "baseline")
        .collect()
}

fn coder_requests(mock: &MockLlm) -> Vec<Value> {
    mock.requests().into_iter().map(|r| r.body).filter(|b| agent_of(b) == "Coder").collect()
}

// --- scenario 1: the seed's division by zero -------------------------------------------

#[test]
fn fixes_the_division_by_zero_bug_and_one_undo_restores_the_original() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let o =
        cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug in calculate()"]);
    ok(&o);
    let outcome = o.outcome();
    assert_eq!(outcome["status"]["type"], "succeeded", "{}", o.stderr);
    assert_eq!(outcome["state"]["iterationCount"], 1);
    assert_eq!(
        p.read("calc.py"),
        CALC.replace(DIVISION, GUARDED),
        "the fix is in the working tree"
    );
    let tests = o.events("command");
    assert!(
        tests.iter().any(|c| c["kind"] == "test" && c["tool"] == "pytest" && c["success"] == true),
        "{tests:?}"
    );
    // One transaction for the whole run: one undo restores the original.
    let tx = outcome["state"]["transactionId"].as_str().unwrap().to_owned();
    let history = cli(&p, &mock, &["history", "--json"]);
    let history: Value = serde_json::from_str(&history.stdout).unwrap();
    let runs: Vec<&Value> = history
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["description"].as_str().unwrap().starts_with("ironbees run "))
        .collect();
    assert_eq!(runs.len(), 1, "{history}");
    assert_eq!(runs[0]["id"], tx.as_str());
    ok(&cli(&p, &mock, &["undo"]));
    assert_eq!(p.read("calc.py"), CALC);
    // Nothing of the run is left behind but its record.
    assert!(!p.path(".ironbees/runs/work").join(o.run_id()).exists());
}

// --- scenario 2: a new function in a cargo project, plan approved later ---------------

const LIB_RS: &str = "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n}\n";
const SUBTRACT: &str = "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\npub fn subtract(a: i64, b: i64) -> i64 {\n    a - b\n}\n";
const SUBTRACT_TEST: &str = "    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n\n    #[test]\n    fn subtracts() {\n        assert_eq!(subtract(5, 3), 2);\n    }\n";

#[test]
fn adds_a_subtract_function_to_a_cargo_project_once_the_plan_is_approved() {
    let p = TempProject::new();
    p.write(
        "Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    p.write("src/lib.rs", LIB_RS);
    p.write(".gitignore", "target/\n");
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(LIB_RS.as_bytes());
    mock.set_responder(move |body| {
        let add_fn = "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n";
        let test_fn = "    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n";
        Some(match agent_of(body) {
            "Planner" => Reply::text(plan_json("src/lib.rs", "Add subtract(a, b) returning a - b, with a test")),
            "Coder" if after_tool(body) => Reply::text("Added subtract() and its test."),
            "Coder" => Reply::tool_calls(
                "I'll add the function and a test.",
                vec![(
                    "change",
                    json!({"edits": [
                        {"path": "src/lib.rs", "targetString": add_fn, "replacementString": SUBTRACT, "expectedHash": hash},
                        {"path": "src/lib.rs", "targetString": test_fn, "replacementString": SUBTRACT_TEST, "expectedHash": hash}
                    ], "options": {"dryRun": false}}),
                )],
            ),
            _ => return None,
        })
    });
    // Without --yes and without a terminal, the run waits for the plan's approval.
    let first = cli(&p, &mock, &["run", "Add a subtract() function"]);
    assert_eq!(first.code, 10, "{}\n{}", first.stdout, first.stderr);
    assert!(first.stdout.contains("waits at WAIT_PLAN_APPROVAL"), "{}", first.stdout);
    assert_eq!(p.read("src/lib.rs"), LIB_RS);
    let id = first.stdout.split_whitespace().nth(1).unwrap().to_owned();
    let shown = cli(&p, &mock, &["runs", "show", &id]);
    assert!(shown.stdout.contains("[MODIFY] src/lib.rs: Add subtract(a, b)"), "{}", shown.stdout);
    let done = cli(&p, &mock, &["--json", "runs", "approve", &id]);
    ok(&done);
    let tests = test_runs(&done);
    assert_eq!(tests.len(), 1, "{tests:?}");
    assert_eq!(tests[0]["tool"], "cargo");
    assert_eq!(tests[0]["success"], true);
    let first_test = done.events("command").into_iter().find(|c| c["kind"] == "test").unwrap();
    assert_eq!(first_test["scope"], "baseline", "built and tested before the change");
    let lib = p.read("src/lib.rs");
    assert!(
        lib.contains("pub fn subtract(a: i64, b: i64) -> i64") && lib.contains("fn subtracts()"),
        "{lib}"
    );
    // The run built in its own copy; the project has no build output of it.
    assert!(!p.path("target").exists());
}

// --- scenario 3: a wrong first fix ------------------------------------------------------

#[test]
fn a_wrong_first_fix_goes_back_to_the_coder_with_the_failing_test() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, WRONG);
    let o =
        cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug in calculate()"]);
    ok(&o);
    assert_eq!(o.outcome()["state"]["iterationCount"], 2);
    let coder = coder_requests(&mock);
    // Round 1: the edit, then the summary; round 2 starts with the failure.
    let round2 = conversation(&coder[2]);
    assert!(round2.contains("Validation failed after round 1"), "{round2}");
    assert!(round2.contains("test_divide_by_zero"), "{round2}");
    assert!(round2.contains("DID NOT RAISE"), "{round2}");
    assert!(round2.contains("returns None for b == 0"), "the validator's diagnosis: {round2}");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
    let decisions = o.events("decision");
    assert_eq!(
        decisions.iter().map(|d| d["next"].as_str().unwrap()).collect::<Vec<_>>(),
        ["CODE", "SUCCESS"]
    );
}

// --- scenario 4: never fixed ------------------------------------------------------------

#[test]
fn a_bug_never_fixed_escalates_to_a_human_whose_feedback_reaches_the_coder() {
    let p = calc_project();
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(CALC.as_bytes());
    mock.set_responder(move |body| {
        let conv = conversation(body);
        Some(match agent_of(body) {
            "Planner" => Reply::text(plan_json("calc.py", "Make calculate() safe")),
            "Validator" => Reply::text("Cause: nothing changed."),
            "Coder" if after_tool(body) => Reply::text("Done."),
            "Coder" if conv.contains("raise ValueError when b is 0") => Reply::tool_calls(
                "",
                vec![("change", replace_args("calc.py", &hash, DIVISION, GUARDED))],
            ),
            // A coder that believes the code is fine.
            "Coder" => Reply::text("The code already handles this; no change needed."),
            _ => return None,
        })
    });
    let o = cli(
        &p,
        &mock,
        &["run", "--yes", "--json", "--max-iterations", "2", "Fix the division by zero bug"],
    );
    assert_eq!(o.code, 10, "{}", o.stderr);
    let outcome = o.outcome();
    assert_eq!(outcome["status"]["node"], "WAIT_HUMAN");
    assert_eq!(outcome["status"]["reason"], "2 rounds of coding did not make validation pass");
    // Round 2 changed nothing: its validation is the first one's, not run again.
    assert_eq!(o.events("validationReused").len(), 1);
    assert_eq!(test_runs(&o).len(), 1);
    assert_eq!(outcome["state"]["iterationCount"], 2);
    assert_eq!(p.read("calc.py"), CALC);
    let id = o.run_id();
    let done = cli(
        &p,
        &mock,
        &["--json", "runs", "approve", &id, "--feedback", "raise ValueError when b is 0"],
    );
    ok(&done);
    let last = coder_requests(&mock).into_iter().rev().nth(1).unwrap();
    assert!(conversation(&last).contains("Feedback from a human"), "{last}");
    assert_eq!(done.outcome()["state"]["iterationCount"], 3);
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
}

// --- scenario 5: a plan rejected with feedback ------------------------------------------

#[test]
fn a_rejected_plan_is_made_again_with_the_feedback() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let first = cli(&p, &mock, &["run", "--json", "Fix the division by zero bug"]);
    assert_eq!(first.code, 10);
    let id = first.run_id();
    let again = cli(
        &p,
        &mock,
        &["--json", "runs", "reject", &id, "--feedback", "Say which exception callers get"],
    );
    assert_eq!(again.code, 10, "{}", again.stderr);
    assert_eq!(again.outcome()["status"]["node"], "WAIT_PLAN_APPROVAL");
    let planner: Vec<Value> =
        mock.requests().into_iter().map(|r| r.body).filter(|b| agent_of(b) == "Planner").collect();
    assert_eq!(planner.len(), 2);
    let second = conversation(&planner[1]);
    assert!(second.contains("Reviewer feedback on the previous plan"), "{second}");
    assert!(second.contains("Say which exception callers get"), "{second}");
    assert!(second.contains("The previous plan"), "{second}");
    assert!(coder_requests(&mock).is_empty(), "nothing is coded before approval");
    ok(&cli(&p, &mock, &["--json", "runs", "approve", &id]));
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
}

// --- scenario 7: cancel mid-run ---------------------------------------------------------

/// A coder whose edit lands in the overlay and whose last word never comes (a
/// minute's delay): the run is cancelled meanwhile.
fn hanging_coder(mock: &MockLlm) {
    let hash = stdx::sha256_hex(CALC.as_bytes());
    mock.set_responder(move |body| {
        Some(match agent_of(body) {
            "Planner" => Reply::text(plan_json("calc.py", "Guard the division")),
            "Coder" if after_tool(body) => {
                Reply::text("Done.").first_byte_delay(Duration::from_secs(60))
            }
            "Coder" => Reply::tool_calls(
                "",
                vec![("change", replace_args("calc.py", &hash, DIVISION, GUARDED))],
            ),
            _ => return None,
        })
    });
}

type Lines = std::io::Lines<BufReader<std::process::ChildStdout>>;

/// Starts a `--json` run and reads its events until the coder's edit is in the
/// overlay; returns the process, the rest of its output and the run id.
fn start_until_edited(p: &TempProject, mock: &MockLlm) -> (std::process::Child, Lines, String) {
    let mut child = ironbees(p.root(), mock)
        .args(["run", "--yes", "--json", "Fix the division by zero bug"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut id = String::new();
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        id = v["runId"].as_str().unwrap_or_default().to_owned();
        if v["kind"]["type"] == "toolResult" {
            break;
        }
    }
    (child, lines, id)
}

/// Waits for a run's process; its exit code and its outcome line.
fn finished(mut child: std::process::Child, lines: Lines) -> (Option<i32>, Value) {
    let status = child.wait().unwrap();
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let outcome = rest.last().map(|l| serde_json::from_str(l).unwrap()).unwrap_or_default();
    (status.code(), outcome)
}

#[test]
fn a_run_cancelled_from_another_process_applies_nothing() {
    let p = calc_project();
    let mock = MockLlm::start();
    hanging_coder(&mock);
    let (child, lines, id) = start_until_edited(&p, &mock);
    ok(&cli(&p, &mock, &["runs", "cancel", &id]));
    let (code, outcome) = finished(child, lines);
    assert_eq!(code, Some(130), "{outcome}");
    assert_eq!(outcome["outcome"]["status"]["type"], "cancelled");
    assert_eq!(p.read("calc.py"), CALC, "nothing applied");
    let resume = cli(&p, &mock, &["runs", "resume", &id]);
    assert_eq!(resume.code, 1, "a cancelled run stays cancelled: {}", resume.stderr);
    assert!(resume.stderr.contains("INVALID_STATE"), "{}", resume.stderr);
}

#[test]
fn ctrl_c_cancels_the_run_and_applies_nothing() {
    let p = calc_project();
    let mock = MockLlm::start();
    hanging_coder(&mock);
    let (child, lines, _) = start_until_edited(&p, &mock);
    let sigint = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sigint.success());
    let (code, outcome) = finished(child, lines);
    assert_eq!(code, Some(130), "{outcome}");
    assert_eq!(outcome["outcome"]["status"]["type"], "cancelled");
    assert_eq!(p.read("calc.py"), CALC);
}

// --- scenario 8: budget -----------------------------------------------------------------

#[test]
fn a_spent_budget_pauses_the_run_for_a_human_who_can_raise_it() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let o = cli(
        &p,
        &mock,
        &["run", "--yes", "--json", "--budget-usd", "0.001", "Fix the division by zero bug"],
    );
    assert_eq!(o.code, 10, "{}", o.stderr);
    let outcome = o.outcome();
    assert_eq!(outcome["status"]["node"], "WAIT_HUMAN");
    let reason = outcome["status"]["reason"].as_str().unwrap();
    assert!(reason.starts_with("budget spent: $0.0045 of $0.0010"), "{reason}");
    assert_eq!(
        outcome["state"]["plan"]["summary"],
        "Raise ValueError when calculate() divides by zero"
    );
    assert!(coder_requests(&mock).is_empty(), "paused before coding");
    // Answering without more budget pauses again; with it, the run goes on.
    let again = cli(&p, &mock, &["--json", "runs", "approve", &o.run_id()]);
    assert_eq!(again.code, 10);
    ok(&cli(&p, &mock, &["--json", "runs", "approve", &o.run_id(), "--budget-usd", "1"]));
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
}

// --- scenario 9: a loop -----------------------------------------------------------------

#[test]
fn the_same_tool_call_with_the_same_answer_three_times_is_a_loop() {
    let p = calc_project();
    let mock = MockLlm::start();
    mock.set_responder(move |body| {
        Some(match agent_of(body) {
            "Planner" => Reply::text(plan_json("calc.py", "Guard the division")),
            "Coder" => Reply::tool_calls(
                "Let me look again.",
                vec![("read", json!({"target": "calc.py"}))],
            ),
            _ => return None,
        })
    });
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    let outcome = o.outcome();
    assert_eq!(outcome["status"]["node"], "WAIT_HUMAN");
    let reason = outcome["status"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "agent `coder`: loop detected: `read` was called 3 times with the same arguments"
        ),
        "{reason}"
    );
    assert_eq!(coder_requests(&mock).len(), 3, "stopped at the third identical call");
    assert!(test_runs(&o).is_empty(), "nothing was validated");
}

// --- scenario 10: a malformed plan ------------------------------------------------------

#[test]
fn a_malformed_plan_is_sent_back_once_then_fails_with_a_code() {
    let p = calc_project();
    let mock = MockLlm::start();
    mock.set_responder(|body| {
        (agent_of(body) == "Planner")
            .then(|| Reply::text("I would add a check for zero in calculate()."))
    });
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let status = &o.outcome()["status"];
    assert_eq!(status["type"], "failed");
    assert_eq!(status["code"], "AGENT_EXECUTION_FAILED");
    assert_eq!(
        status["message"],
        "the planner's answer was not a valid plan twice; last error: there is no JSON object in the answer"
    );
    let planner = mock.requests();
    assert_eq!(planner.len(), 2, "one retry, no more");
    // The failed node's model calls stay on the run's bill (the budget counts them).
    assert_eq!(o.outcome()["state"]["spend"]["modelCalls"], 2);
    let retry = conversation(&planner[1].body);
    assert!(
        retry.contains("Your answer is not a valid plan: there is no JSON object in the answer"),
        "{retry}"
    );

    // A fenced plan after one bad answer is fine.
    let mock = MockLlm::start();
    mock.push(Reply::text("Sure! Here is my plan."));
    mock.push(Reply::text(format!("```json\n{}\n```", plan_json("calc.py", "Guard the division"))));
    let o = cli(&p, &mock, &["run", "--json", "Fix the division by zero bug"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    assert_eq!(o.outcome()["status"]["node"], "WAIT_PLAN_APPROVAL");
    assert_eq!(o.events("planRejected").len(), 1);
}

// --- the plan's task graph (seed 002, M0) ---------------------------------------------

/// A planner's dependencies that go round in a circle are sent back to it; the
/// plan that follows carries its task graph (the rules' order: the code, then
/// its test), which `runs show` prints with the plan the human approves.
#[test]
fn a_plans_steps_come_as_a_task_graph_and_a_cycle_is_sent_back() {
    let p = calc_project();
    let step = |n: u32, file: &str, deps: &[u32]| {
        json!({"number": n, "description": format!("change {file}"), "actionType": "MODIFY",
               "filePath": file, "dependsOn": deps})
    };
    let answer = |steps: Vec<Value>| {
        json!({"spec": "Guard the division.", "plan": {"summary": "Guard the division and test it",
               "steps": steps, "complexity": "LOW"}})
        .to_string()
    };
    let mock = MockLlm::start();
    mock.push(Reply::text(answer(vec![step(1, "calc.py", &[2]), step(2, "test_calc.py", &[1])])));
    mock.push(Reply::text(answer(vec![
        step(1, "calc.py", &[]),
        step(2, "test_calc.py", &[]),
        step(3, "README.md", &[]),
    ])));
    let o = cli(&p, &mock, &["run", "--json", "Fix the division by zero bug"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    let rejected = o.events("planRejected");
    assert_eq!(rejected.len(), 1);
    assert!(rejected[0]["error"].to_string().contains("cycle"), "{:?}", rejected[0]);
    let graph = &o.outcome()["state"]["plan"]["taskGraph"];
    assert_eq!(graph["source"], "rules", "{graph}");
    assert_eq!(graph["groups"], json!([[1, 3], [2]]), "the test after the code: {graph}");
    let id = o.run_id();
    let shown = cli(&p, &mock, &["runs", "show", &id]);
    assert!(shown.stdout.contains("order: 1, 3 → 2"), "{}", shown.stdout);
}

/// A plan of numbered steps for `plan_steps`' planner: `(number, action, file, what)`.
fn steps_plan(steps: &[(u32, &str, &str, &str)]) -> String {
    let steps: Vec<Value> = steps
        .iter()
        .map(|(n, action, file, what)| {
            json!({"number": n, "description": what, "actionType": action, "filePath": file})
        })
        .collect();
    json!({"spec": "Guard the division and test it.", "plan": {"summary": "Guard the division",
           "steps": steps, "complexity": "MEDIUM"}})
    .to_string()
}

/// The task graph runs round by round: the code, then its test, one coder turn
/// each, each told what is done and what comes later. The coder does not do the
/// test step (the test is there already): that step failed, so the planner makes
/// the plan again, once, with the reason; the new plan's one step is coded in one
/// turn and the run succeeds with the first round's edit.
#[test]
fn the_task_graph_is_coded_round_by_round_and_a_step_not_done_is_planned_again() {
    let p = calc_project();
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(CALC.as_bytes());
    mock.set_responder(move |body| {
        let conv = conversation(body);
        let reply = match agent_of(body) {
            "Planner" if conv.contains("A step of the plan could not be done") => {
                Reply::text(steps_plan(&[(1, "MODIFY", "calc.py", "raise ValueError on b == 0")]))
            }
            "Planner" => Reply::text(steps_plan(&[
                (1, "MODIFY", "calc.py", "raise ValueError on b == 0"),
                (2, "MODIFY", "test_calc.py", "test the zero division"),
            ])),
            "Coder" if after_tool(body) => Reply::text("Guarded the division."),
            "Coder" if conv.contains("round 2 of 2") => {
                Reply::text("test_divide_by_zero already covers it; I changed nothing.")
            }
            "Coder" if conv.contains("round 1 of 2") => Reply::tool_calls(
                "",
                vec![("change", replace_args("calc.py", &hash, DIVISION, GUARDED))],
            ),
            "Coder" => Reply::text("The guard from the first round is in place."),
            _ => return None,
        };
        Some(reply.usage(usage()))
    });
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug"]);
    ok(&o);
    let rounds: Vec<(u64, u64, Value)> = o
        .events("taskRound")
        .iter()
        .map(|r| (r["round"].as_u64().unwrap(), r["rounds"].as_u64().unwrap(), r["steps"].clone()))
        .collect();
    assert_eq!(rounds, vec![(1, 2, json!([1])), (2, 2, json!([2]))]);
    let failed = o.events("taskFailed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!((failed[0]["step"].clone(), failed[0]["replan"].clone()), (json!(2), json!(true)));
    assert!(failed[0]["reason"].as_str().unwrap().contains("test_calc.py"), "{failed:?}");
    // Each round's coder was told its step, what was done and what comes later.
    let coder: Vec<String> =
        coder_requests(&mock).iter().filter(|b| !after_tool(b)).map(conversation).collect();
    assert_eq!(coder.len(), 3, "two rounds, then one turn for the new plan");
    assert!(coder[0].contains("Steps 2 come in later rounds"), "{}", coder[0]);
    assert!(coder[1].contains("Steps 1 are done"), "{}", coder[1]);
    assert!(!coder[2].contains("This round"), "a one-step plan is one turn: {}", coder[2]);
    // The planner was asked again with the step and the coder's words.
    let planner: Vec<String> = mock
        .requests()
        .into_iter()
        .filter(|r| agent_of(&r.body) == "Planner")
        .map(|r| conversation(&r.body))
        .collect();
    assert_eq!(planner.len(), 2);
    assert!(planner[1].contains("already covers it"), "{}", planner[1]);
    let state = &o.outcome()["state"];
    assert_eq!((state["replans"].clone(), state["iterationCount"].clone()), (json!(1), json!(1)));
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
    assert_eq!(p.read("test_calc.py"), TEST_CALC);
}

/// The test [`two_round_model`]'s second round adds to `test_calc.py`.
const EXTRA_TEST: &str = "\n\ndef test_divide():\n    assert calculate(4, 2, \"/\") == 2\n";

/// A two-step plan coded in two rounds: the guard in `calc.py`, then a test in
/// `test_calc.py`. With `loop_until`, the first round's coder reads `calc.py`
/// again and again until the conversation holds those words (a human's).
fn two_round_model(mock: &MockLlm, loop_until: Option<&'static str>) {
    let hash = stdx::sha256_hex(CALC.as_bytes());
    let test_hash = stdx::sha256_hex(TEST_CALC.as_bytes());
    mock.set_responder(move |body| {
        let conv = conversation(body);
        let looping = loop_until.is_some_and(|words| !conv.contains(words));
        let reply = match agent_of(body) {
            "Planner" => Reply::text(steps_plan(&[
                (1, "MODIFY", "calc.py", "raise ValueError on b == 0"),
                (2, "MODIFY", "test_calc.py", "test a division"),
            ])),
            "Coder" if conv.contains("round 1 of 2") && looping => Reply::tool_calls(
                "Let me look again.",
                vec![("read", json!({"target": "calc.py"}))],
            ),
            "Coder" if after_tool(body) => Reply::text("Done."),
            "Coder" if conv.contains("round 1 of 2") => Reply::tool_calls(
                "",
                vec![("change", replace_args("calc.py", &hash, DIVISION, GUARDED))],
            ),
            "Coder" if conv.contains("round 2 of 2") => {
                let at = "calculate(1, 0, \"/\")\n";
                let with_test = format!("{at}{EXTRA_TEST}");
                Reply::tool_calls(
                    "",
                    vec![("change", replace_args("test_calc.py", &test_hash, at, &with_test))],
                )
            }
            _ => return None,
        };
        Some(reply.usage(usage()))
    });
}

/// Killed as the second round starts (the first round's checkpoint written), a
/// run resumes at the second round: the first round's coder is not asked again
/// and both rounds' edits are applied once.
#[test]
fn a_run_killed_between_rounds_resumes_at_the_next_round() {
    let p = calc_project();
    let mock = MockLlm::start();
    two_round_model(&mock, None);
    let mut child = ironbees(p.root(), &mock)
        .args(["run", "--yes", "--json", "Fix the division by zero bug"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut id = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(r) = v["runId"].as_str() {
            id = r.to_owned();
        }
        if v["kind"]["type"] == "taskRound" && v["kind"]["round"] == 2 {
            child.kill().unwrap(); // SIGKILL
            break;
        }
    }
    child.wait().unwrap();
    assert!(!id.is_empty());
    let resumed = cli(&p, &mock, &["--json", "runs", "resume", &id]);
    ok(&resumed);
    assert_eq!(resumed.outcome()["status"]["type"], "succeeded");
    let firsts: Vec<String> =
        coder_requests(&mock).iter().filter(|b| !after_tool(b)).map(conversation).collect();
    assert_eq!(firsts.iter().filter(|c| c.contains("round 1 of 2")).count(), 1, "{firsts:?}");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
    assert!(p.read("test_calc.py").ends_with(EXTRA_TEST), "{}", p.read("test_calc.py"));
    let history = cli(&p, &mock, &["history", "--json"]);
    let history: Value = serde_json::from_str(&history.stdout).unwrap();
    assert_eq!(history.as_array().unwrap().len(), 1, "one transaction: {history}");
}

/// A round a limit stops (the coder reads the same file over and over) waits for
/// a human; once answered, that round runs again with the human's words, and the
/// next round after it.
#[test]
fn a_round_stopped_by_a_loop_runs_again_after_the_human_answers() {
    let p = calc_project();
    let mock = MockLlm::start();
    two_round_model(&mock, Some("stop reading"));
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    assert_eq!(o.outcome()["status"]["node"], "WAIT_HUMAN");
    assert!(o.outcome()["state"]["stepsDone"].as_array().is_none_or(|d| d.is_empty()));
    let id = o.run_id();
    let done =
        cli(&p, &mock, &["--json", "runs", "approve", &id, "--feedback", "stop reading and edit"]);
    ok(&done);
    let rounds: Vec<u64> =
        done.events("taskRound").iter().map(|r| r["round"].as_u64().unwrap()).collect();
    assert_eq!(rounds, [1, 2], "the stopped round again, then the next");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
    assert!(p.read("test_calc.py").ends_with(EXTRA_TEST));
}

/// With `parallelAgentExecution`, independent steps are coded at once, one coder
/// turn each; their edits are merged and applied as one change.
#[test]
fn independent_steps_are_coded_at_once_and_applied_together() {
    let p = calc_project();
    p.write(".ironbees/config.yaml", "agent:\n  parallelAgentExecution: true\n");
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(CALC.as_bytes());
    mock.set_responder(move |body| {
        let conv = conversation(body);
        let reply = match agent_of(body) {
            "Planner" => Reply::text(steps_plan(&[
                (1, "MODIFY", "calc.py", "raise ValueError on b == 0"),
                (2, "CREATE", "errors.py", "a message for the error"),
            ])),
            "Coder" if after_tool(body) => Reply::text("Done."),
            "Coder" if conv.contains("): step 1\\n") => Reply::tool_calls(
                "",
                vec![("change", replace_args("calc.py", &hash, DIVISION, GUARDED))],
            ),
            "Coder" if conv.contains("): step 2\\n") => Reply::tool_calls(
                "",
                vec![(
                    "write",
                    json!({"path": "errors.py", "content": "ZERO = \"division by zero\"\n"}),
                )],
            ),
            _ => return None,
        };
        Some(reply.usage(usage()))
    });
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug"]);
    ok(&o);
    let rounds = o.events("taskRound");
    assert_eq!(rounds.len(), 1, "{rounds:?}");
    assert_eq!(
        (rounds[0]["steps"].clone(), rounds[0]["parallel"].clone()),
        (json!([1, 2]), json!(true))
    );
    assert!(o.events("taskFailed").is_empty(), "{:?}", o.events("taskFailed"));
    let firsts: Vec<String> =
        coder_requests(&mock).iter().filter(|b| !after_tool(b)).map(conversation).collect();
    assert_eq!(firsts.len(), 2);
    assert!(firsts.iter().all(|c| c.contains("at the same time by other coders")), "{firsts:?}");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
    assert_eq!(p.read("errors.py"), "ZERO = \"division by zero\"\n");
    // Both turns' spend is the run's: the planner's call and two turns of two calls.
    assert_eq!(o.outcome()["state"]["spend"]["modelCalls"], 5, "{}", o.outcome()["state"]["spend"]);
}

/// A token budget too small for a turn per round shrinks the task graph to one
/// coder turn before the plan is shown; `runs show` says so.
#[test]
fn a_tight_token_budget_codes_the_plan_in_one_turn() {
    let p = calc_project();
    let mock = MockLlm::start();
    let plan = steps_plan(&[
        (1, "MODIFY", "calc.py", "raise ValueError on b == 0"),
        (2, "MODIFY", "test_calc.py", "test the zero division"),
    ]);
    mock.set_responder(move |body| match agent_of(body) {
        "Planner" => Some(Reply::text(plan.clone()).usage(usage())),
        _ => None,
    });
    // The planner's turn costs 1,100 tokens; 2,900 are left of 4,000 after it:
    // enough for two turns of 1,100... and with 3,000, 1,900 are not.
    for (budget, rounds) in
        [("4000", json!([{"steps": [1]}, {"steps": [2]}])), ("3000", json!([{"steps": [1, 2]}]))]
    {
        let o = cli(
            &p,
            &mock,
            &["run", "--json", "--budget-tokens", budget, "Fix the division by zero bug"],
        );
        assert_eq!(o.code, 10, "waits at the plan: {}", o.stderr);
        let graph = &o.events("plan")[0]["plan"]["taskGraph"];
        assert_eq!(graph["rounds"], rounds, "{graph}");
        assert_eq!(graph["estimate"]["roundsBefore"], 2, "{graph}");
        let shown = cli(&p, &mock, &["runs", "show", &o.run_id()]);
        let one =
            shown.stdout.contains("coded in one turn: the run's time or token budget fits no more");
        assert_eq!(one, budget == "3000", "{}", shown.stdout);
        assert_eq!(
            shown.stdout.contains("coded in rounds: 1 → 2"),
            budget == "4000",
            "{}",
            shown.stdout
        );
    }
}

// --- scenario 6: killed at every node boundary ------------------------------------------

/// Starts a run and SIGKILLs it when `at` (a node starting, or a custom event)
/// is reported; returns the run id.
fn run_and_kill(p: &TempProject, mock: &MockLlm, at: &str) -> String {
    let mut child = ironbees(p.root(), mock)
        .args(["run", "--yes", "--json", "Fix the division by zero bug in calculate()"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut id = String::new();
    let mut killed = false;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(r) = v["runId"].as_str() {
            id = r.to_owned();
        }
        let k = &v["kind"];
        let hit = (k["type"] == "nodeStarted" && k["node"] == at) || k["type"] == at;
        if hit {
            child.kill().unwrap(); // SIGKILL
            killed = true;
            break;
        }
    }
    child.wait().unwrap();
    assert!(killed, "the run never reached {at}");
    id
}

#[test]
fn a_run_killed_at_any_node_boundary_resumes_to_the_same_end_without_applying_twice() {
    // Each node's start (its checkpoint committed), the coder's edit in the
    // overlay, and the apply reported (the effect ran; its record and the final
    // checkpoint may or may not have been written when the kill lands).
    let points = [
        "PLAN",
        "WAIT_PLAN_APPROVAL",
        "CODE",
        "toolResult",
        "VALIDATE",
        "DECIDE",
        "SUCCESS",
        "applied",
    ];
    for at in points {
        let p = calc_project();
        let mock = MockLlm::start();
        calculator_model(&mock, GUARDED);
        let id = run_and_kill(&p, &mock, at);
        let resumed = cli(&p, &mock, &["--json", "runs", "resume", &id]);
        let state = if resumed.stderr.contains("has succeeded") {
            // The kill came after the run's last checkpoint (a busy machine can
            // take that long to deliver it after SUCCESS): nothing to resume.
            let shown = cli(&p, &mock, &["--json", "runs", "show", &id]);
            serde_json::from_str::<Value>(&shown.stdout).unwrap()["state"].clone()
        } else {
            assert_eq!(resumed.code, 0, "killed at {at}: {}", resumed.stderr);
            assert_eq!(resumed.outcome()["status"]["type"], "succeeded", "killed at {at}");
            resumed.outcome()["state"].clone()
        };
        assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED), "killed at {at}");
        let history = cli(&p, &mock, &["history", "--json"]);
        let history: Value = serde_json::from_str(&history.stdout).unwrap();
        assert_eq!(
            history.as_array().unwrap().len(),
            1,
            "killed at {at}: one transaction, {history}"
        );
        assert_eq!(history[0]["id"], state["transactionId"], "killed at {at}");
    }
}

#[test]
fn an_apply_whose_record_was_lost_is_found_in_the_history_not_repeated() {
    // The window the effect's record cannot close: the transaction committed, the
    // process died before recording it. Made exact here by applying the run's
    // change by hand, under the run's description, to a run killed before it applied
    // (at VALIDATE: a second of pytest away from SUCCESS, so the kill always lands
    // first).
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let id = run_and_kill(&p, &mock, "VALIDATE");
    let request = "Fix the division by zero bug in calculate()";
    let edits = json!({"edits": [{"path": "calc.py", "targetString": DIVISION, "replacementString": GUARDED}]});
    p.write("edits.json", edits.to_string());
    ok(&cli(
        &p,
        &mock,
        &["change", "--edits", "edits.json", "-m", &format!("ironbees run {id}: {request}")],
    ));
    let resumed = cli(&p, &mock, &["--json", "runs", "resume", &id]);
    ok(&resumed);
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
    let history = cli(&p, &mock, &["history", "--json"]);
    let history: Value = serde_json::from_str(&history.stdout).unwrap();
    assert_eq!(history.as_array().unwrap().len(), 1, "{history}");
    assert_eq!(history[0]["id"], resumed.outcome()["state"]["transactionId"]);
}

// --- the event log and the --json schema ------------------------------------------------

/// A run's events, one line each, without what varies from run to run (ids,
/// times, durations, token deltas).
fn event_log(o: &Out) -> String {
    let mut out = String::new();
    for l in o.lines() {
        let Some(k) = l.get("kind") else { continue };
        let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let d = k;
        let line = match s(&k["type"]).as_str() {
            "modelDelta" | "context" | "workspace" => continue,
            "modelCall" => format!("  modelCall {} tools={}", s(&d["agent"]), d["toolCalls"]),
            "toolCall" => format!("  toolCall {} {}", s(&d["agent"]), s(&d["name"])),
            "toolResult" => {
                format!("  toolResult {} {} ok={}", s(&d["agent"]), s(&d["name"]), d["ok"])
            }
            "command" => {
                format!("  command {} {} success={}", s(&d["kind"]), s(&d["tool"]), d["success"])
            }
            "decision" => format!("  decision passed={} next={}", d["passed"], s(&d["next"])),
            "applied" => format!("  applied files={}", d["files"]),
            "approved" | "rejected" | "plan" | "diff" | "escalated" | "validationSkipped"
            | "validationReused" | "planRejected" | "warning" => format!("  {}", s(&k["type"])),
            "checkpoint" => format!("checkpoint {} {}", s(&k["node"]), s(&k["status"]["type"])),
            "nodeStarted" => format!("nodeStarted {}", s(&k["node"])),
            "runStarted" => format!("runStarted {}", s(&k["entry"])),
            "runFinished" => format!("runFinished {}", s(&k["status"]["type"])),
            other => other.to_owned(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

// --- a question (seed 002: answered without the plan/code loop) ------------------------

/// A model whose answerer explains `calculate()`; any other agent is a test
/// failure (the mock answers nothing, and the run fails).
fn answering_model(mock: &MockLlm) {
    mock.set_responder(|body| {
        let system = body["system"].to_string();
        if system.contains("# Answerer") {
            Some(
                Reply::text("calculate() in calc.py:1 divides a by b; for b == 0 it returns None.")
                    .usage(usage()),
            )
        } else if agent_of(body) == "Planner" {
            Some(Reply::text(plan_json("calc.py", "Explain in a docstring")).usage(usage()))
        } else {
            None
        }
    });
}

/// `agent.rerankContext`: the files of Layer 0 are the ones `localize --rerank`
/// gives, the model's pick first (the same engine operation as the command).
#[test]
fn the_planners_files_can_be_reranked_by_the_model() {
    let p = calc_project();
    p.write(".ironbees/config.yaml", "agent:\n  rerankContext: true\n");
    let mock = MockLlm::start();
    mock.set_responder(|body| {
        let system = body["system"].to_string();
        if system.contains("You locate the source files") {
            Some(Reply::structured(json!({"files": ["test_calc.py"]})).usage(usage()))
        } else if system.contains("# Answerer") {
            Some(Reply::text("calculate() in calc.py:1 divides a by b.").usage(usage()))
        } else {
            None
        }
    });
    let o = cli(&p, &mock, &["run", "--json", "Explain how calculate() handles division"]);
    ok(&o);
    assert_eq!(o.outcome()["status"]["type"], "succeeded", "{}", o.stderr);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "the rerank, then the answer");
    let shown = requests[0].body.to_string();
    assert!(shown.contains("### 1. calc.py") && shown.contains("### 2. test_calc.py"), "{shown}");
    let sent = requests[1].body.to_string();
    let at = |path: &str| {
        sent.find(&format!("- {path} (score")).unwrap_or_else(|| panic!("{path}: {sent}"))
    };
    assert!(at("test_calc.py") < at("calc.py"), "the model's pick first: {sent}");
    // Without the setting, no rerank: the answer is the only call.
    p.write(".ironbees/config.yaml", "agent:\n  rerankContext: false\n");
    let before = mock.request_count();
    ok(&cli(&p, &mock, &["run", "--json", "Explain how calculate() handles division"]));
    assert_eq!(mock.request_count(), before + 1);
}

#[test]
fn a_question_is_answered_from_the_code_without_a_plan_or_a_change() {
    let p = calc_project();
    let mock = MockLlm::start();
    answering_model(&mock);
    let o = cli(&p, &mock, &["run", "--json", "Explain how calculate() handles division"]);
    ok(&o);
    let routed = o.events("routed");
    assert_eq!(routed[0]["route"]["intent"], "explain", "{routed:?}");
    let answer = o.events("answer");
    assert!(answer[0]["text"].as_str().unwrap().contains("calc.py:1"), "{answer:?}");
    assert_eq!(o.outcome()["status"]["type"], "succeeded", "{}", o.stderr);
    assert_eq!(o.outcome()["state"]["answer"], answer[0]["text"]);
    // No plan, no gate (no --yes was needed), nothing built or tested, nothing changed.
    for kind in ["plan", "interrupted", "command", "applied"] {
        assert!(o.events(kind).is_empty(), "{kind}: {}", o.stdout);
    }
    assert_eq!(p.read("calc.py"), CALC);
    // One model call, with Layer 0 in it (calc.py's outline), well under the
    // seed's 10,000 tokens.
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].body.to_string();
    assert!(sent.contains("def calculate"), "the outline of calc.py: {sent}");
    assert!(sent.len() / 4 < 10_000, "{} bytes", sent.len());
    // Tokens per layer: the answerer's model call, and Layer 0's parts.
    let spend = &o.outcome()["state"]["spend"];
    assert_eq!(spend["byAgent"]["answerer"]["modelCalls"], 1, "{spend}");
    assert_eq!(spend["byAgent"]["answerer"]["inputTokens"], spend["inputTokens"], "{spend}");
    let context = &spend["contextTokens"];
    assert!(context["localized"].as_u64().unwrap() > 0, "{spend}");
    // The definition the question names, with its body (Layer 0's third part).
    assert!(context["definitions"].as_u64().unwrap() > 0, "{spend}");
    assert!(sent.contains("Definitions the request names"), "{sent}");
    assert!(sent.contains("calculate` in calc.py:"), "{sent}");
    assert!(
        context.as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum::<u64>() < 10_000
    );
    assert_eq!(o.events("context")[0]["tokens"], *context, "the event says the same");
    // The text output shows the answer.
    let text = cli(&p, &mock, &["run", "Explain how calculate() handles division"]);
    ok(&text);
    assert!(text.stdout.contains("for b == 0 it returns None"), "{}", text.stdout);
}

#[test]
fn plan_forces_a_change_and_a_long_report_with_question_words_is_a_change() {
    let p = calc_project();
    let mock = MockLlm::start();
    answering_model(&mock);
    // --plan: the planner is asked, and the run waits at the plan gate.
    let o =
        cli(&p, &mock, &["run", "--json", "--plan", "Explain how calculate() handles division"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    assert_eq!(o.events("plan").len(), 1);
    assert!(o.events("answer").is_empty());
    // A bug report: long, with "why" and "describe" in it, still a change.
    let report = format!(
        "calculate() returns None on division by zero\n\n**Describe the bug**\nWhy does \
         calculate(1, 0) give None? {}\nExpected: a ValueError.",
        "It should raise like Python does. ".repeat(8)
    );
    let o = cli(&p, &mock, &["run", "--json", &report]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    assert_eq!(o.events("plan").len(), 1, "{}", o.stdout);
    assert!(o.events("answer").is_empty());
}

#[test]
fn the_event_log_of_scenario_one() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let o =
        cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug in calculate()"]);
    ok(&o);
    expect_test::expect![[r#"
        runStarted INIT
        checkpoint INIT running
        nodeStarted INIT
        routed
        checkpoint PLAN running
        nodeStarted PLAN
          modelCall planner tools=0
          plan
        checkpoint WAIT_PLAN_APPROVAL running
        nodeStarted WAIT_PLAN_APPROVAL
          approved
        checkpoint BASELINE running
        nodeStarted BASELINE
          command test pytest success=false
          warning
        checkpoint CODE running
        nodeStarted CODE
          modelCall coder tools=1
          toolCall coder change
          toolResult coder change ok=true
          modelCall coder tools=0
          diff
        checkpoint CRITIC running
        nodeStarted CRITIC
        critique
        checkpoint VALIDATE running
        nodeStarted VALIDATE
          command test pytest success=true
          command test pytest success=true
        checkpoint DECIDE running
        nodeStarted DECIDE
          decision passed=true next=SUCCESS
        checkpoint SUCCESS running
        nodeStarted SUCCESS
          applied files=["calc.py"]
        checkpoint __end__ succeeded
        runFinished succeeded
    "#]]
    .assert_eq(&event_log(&o));
}

#[test]
fn json_lines_follow_the_documented_schema() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, WRONG);
    let o =
        cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug in calculate()"]);
    ok(&o);
    let lines = o.lines();
    let (last, events) = lines.split_last().unwrap();
    let mut seq = 0;
    for e in events {
        let ev: protocol::RunEvent =
            serde_json::from_value(e.clone()).unwrap_or_else(|err| panic!("{err}: {e}"));
        assert_eq!(ev.seq, seq + 1, "events are numbered without gaps");
        seq = ev.seq;
        assert_eq!(serde_json::to_value(&ev).unwrap(), *e, "no field is lost or added");
    }
    let outcome = &last["outcome"];
    let state: protocol::CodingState = serde_json::from_value(outcome["state"].clone()).unwrap();
    assert_eq!(state.user_request, "Fix the division by zero bug in calculate()");
    assert_eq!(state.iteration_count, 2);
    assert!(state.spend.model_calls >= 5 && state.spend.cost_usd > 0.0, "{:?}", state.spend);
    let status: protocol::RunStatus = serde_json::from_value(outcome["status"].clone()).unwrap();
    assert_eq!(status, protocol::RunStatus::Succeeded);
    assert_eq!(outcome["runId"], events[0]["runId"]);
    // `runs log` replays the same events.
    let log = cli(&p, &mock, &["--json", "runs", "log", outcome["runId"].as_str().unwrap()]);
    assert_eq!(log.stdout.lines().count(), events.len());
}

// --- the quick start --------------------------------------------------------------------

#[test]
fn the_demo_fixes_its_calculator_in_two_rounds_without_a_configured_model() {
    let home = TempProject::new();
    let project = home.path("calc");
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.current_dir(home.root()).env("XDG_CONFIG_HOME", home.path(".no-user-config"));
    super::without_model_env(&mut c);
    c.args(["--json", "demo", "--dir"]).arg(&project).stdin(Stdio::null());
    let o = run(c);
    ok(&o);
    assert!(o.stderr.contains("a scripted model answers"), "{}", o.stderr);
    let outcome = o.outcome();
    assert_eq!(outcome["status"]["type"], "succeeded");
    assert_eq!(outcome["state"]["iterationCount"], 2, "the demo shows the loop");
    let lib = std::fs::read_to_string(project.join("src/lib.rs")).unwrap();
    assert!(lib.contains("'/' if b == 0 => Err(\"division by zero\".to_owned()),"), "{lib}");
    let tests = test_runs(&o);
    assert_eq!(
        tests.iter().map(|t| t["success"].as_bool().unwrap()).collect::<Vec<_>>(),
        [false, true],
        "cargo test fails on the first fix and passes on the second"
    );
    assert_eq!(tests[0]["failures"], json!(["tests::dividing_by_zero_is_an_error"]));
}

// --- bad input, lost nothing ------------------------------------------------------------

#[test]
fn a_rate_limited_model_fails_the_run_resumably_with_its_code() {
    let p = calc_project();
    let mock = MockLlm::start();
    mock.set_default(Reply::rate_limited("0"));
    let o = run({
        let mut c = ironbees(p.root(), &mock);
        c.env("IRONBEES_LLM__RETRY__MAX_ATTEMPTS", "1");
        c.args(["run", "--yes", "--json", "Fix the division by zero bug in calculate()"]);
        c
    });
    assert_eq!(o.code, 7, "{}", o.stderr);
    let status = &o.outcome()["status"];
    assert_eq!(status["type"], "failed");
    assert_eq!(status["code"], "LLM_RATE_LIMITED");
    // The node was tried three times (two retries of a retryable failure).
    let failed: Vec<Value> =
        o.lines().into_iter().filter(|l| l["kind"]["type"] == "nodeFailed").collect();
    assert_eq!(failed.len(), 3, "{failed:?}");
    assert_eq!(p.read("calc.py"), CALC);
    // Once the provider answers again, the run goes on from where it failed.
    calculator_model(&mock, GUARDED);
    mock.set_default(Reply::text("unused"));
    let resumed = cli(&p, &mock, &["--json", "runs", "resume", &o.run_id()]);
    ok(&resumed);
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
}

#[test]
fn a_file_changed_during_review_is_merged_validated_again_and_keeps_the_users_edit() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let o = cli(
        &p,
        &mock,
        &["run", "--yes", "--review", "--json", "Fix the division by zero bug in calculate()"],
    );
    assert_eq!(o.code, 10, "{}", o.stderr);
    assert_eq!(o.outcome()["status"]["node"], "WAIT_REVIEW");
    let diffs = o.outcome()["state"]["codeDiffs"].to_string();
    assert!(diffs.contains("+            raise ValueError"), "{diffs}");
    assert_eq!(p.read("calc.py"), CALC, "nothing applied before the review");
    // Someone edits another line of the file meanwhile.
    let mine = CALC.replace("raise ValueError(op)", "raise ValueError(f\"unknown op {op}\")");
    p.write("calc.py", &mine);
    let approved = cli(&p, &mock, &["--json", "runs", "approve", &o.run_id()]);
    assert_eq!(approved.code, 10, "merged, validated again, and shown again: {}", approved.stderr);
    let warned = approved.events("warning");
    assert!(
        warned.iter().any(|w| w["code"] == "WORKTREE_CHANGED"
            && w["message"].as_str().unwrap().contains("merged the run's change onto calc.py")),
        "{warned:?}"
    );
    let tested = test_runs(&approved);
    assert_eq!(tested.last().unwrap()["scope"], "full", "the merged change is tested: {tested:?}");
    assert_eq!(p.read("calc.py"), mine, "still nothing applied");
    let done = cli(&p, &mock, &["--json", "runs", "approve", &o.run_id()]);
    ok(&done);
    assert_eq!(p.read("calc.py"), mine.replace(DIVISION, GUARDED), "both edits are in");
}

#[test]
fn a_file_changed_on_the_same_lines_goes_back_to_the_coder_with_the_new_version() {
    let p = calc_project();
    let mock = MockLlm::start();
    // The user guards the division their own way while the run waits.
    let theirs = CALC.replace(DIVISION, "        assert b != 0\n        return a / b");
    let hash = stdx::sha256_hex(CALC.as_bytes());
    mock.set_responder(move |body| {
        let conv = conversation(body);
        let reply = match agent_of(body) {
            "Planner" => Reply::text(plan_json("calc.py", "Raise ValueError for b == 0")),
            "Coder" if after_tool(body) => Reply::text("Guarded."),
            // Back with the user's version: the guard goes before their assert.
            "Coder" if conv.contains("someone changed these files") => Reply::tool_calls(
                "",
                vec![("change", json!({"edits": [{"path": "calc.py",
                    "targetString": "        assert b != 0\n",
                    "replacementString": "        if b == 0:\n            raise ValueError(\"division by zero\")\n        assert b != 0\n"}],
                    "options": {"dryRun": false}}))],
            ),
            "Coder" => Reply::tool_calls("", vec![("change", replace_args("calc.py", &hash, DIVISION, GUARDED))]),
            "Validator" => Reply::text("Cause: see the failure."),
            _ => return None,
        };
        Some(reply.usage(usage()))
    });
    let o = cli(&p, &mock, &["run", "--yes", "--review", "--json", "Fix the division by zero bug"]);
    assert_eq!(o.outcome()["status"]["node"], "WAIT_REVIEW", "{}", o.stderr);
    p.write("calc.py", &theirs);
    let again = cli(&p, &mock, &["--json", "runs", "approve", &o.run_id()]);
    assert_eq!(again.code, 10, "{}", again.stderr);
    assert_eq!(again.outcome()["status"]["node"], "WAIT_REVIEW", "{}", again.outcome());
    let warning = again.events("warning");
    assert!(warning[0]["message"].as_str().unwrap().contains("back to the coder for calc.py"));
    let code_rounds = again
        .lines()
        .iter()
        .filter(|l| l["kind"]["type"] == "nodeStarted" && l["kind"]["node"] == "CODE")
        .count();
    assert_eq!(code_rounds, 1, "one more coding round");
    assert_eq!(p.read("calc.py"), theirs, "the user's version untouched");
    ok(&cli(&p, &mock, &["--json", "runs", "approve", &o.run_id()]));
    let applied = p.read("calc.py");
    assert!(applied.contains("assert b != 0") && applied.contains("division by zero"), "{applied}");
}

#[test]
fn a_hung_test_is_cut_by_the_sandbox_limit_and_reported() {
    let p = calc_project();
    p.write(".ironbees/config.yaml", "sandbox:\n  timeout: 3s\n");
    let mock = MockLlm::start();
    // The coder's change makes the division hang.
    calculator_model(&mock, "        while b == 0:\n            pass\n        return a / b");
    let o = cli(
        &p,
        &mock,
        &["run", "--yes", "--json", "--max-iterations", "1", "Fix the division by zero bug"],
    );
    assert_eq!(o.code, 10, "{}", o.stderr);
    let outcome = o.outcome();
    assert_eq!(outcome["status"]["node"], "WAIT_HUMAN");
    let context = outcome["state"]["errorContext"].as_str().unwrap();
    assert!(context.contains("incomplete") && context.contains("timeout"), "{context}");
    assert_eq!(p.read("calc.py"), CALC);
}

#[test]
fn on_a_terminal_the_run_asks_at_the_plan_and_takes_the_answer() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let bin = assert_cmd::cargo::cargo_bin("ironbees");
    // `script` gives the run a terminal; "y" answers the plan's question.
    let cmd = format!(
        "{} -C {} run 'Fix the division by zero bug in calculate()'",
        bin.display(),
        p.root().display()
    );
    let mut c = Command::new("script");
    c.args(["-qec", &cmd, "/dev/null"]);
    c.env("XDG_CONFIG_HOME", p.path(".no-user-config"));
    super::without_model_env(&mut c);
    c.env("ANTHROPIC_API_KEY", "sk-ant-agent-test").env("ANTHROPIC_BASE_URL", mock.url());
    let mut child = c.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().unwrap();
        std::thread::sleep(Duration::from_secs(3));
        stdin.write_all(b"y\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Approve the plan? [y]es"), "{text}");
    assert!(text.contains("1. [MODIFY] calc.py: Raise ValueError"), "{text}");
    assert!(text.contains("succeeded after 1 round(s)"), "{text}");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
}

#[test]
fn agents_are_listed_shown_and_scaffolded_and_runs_listed_without_a_model() {
    let p = calc_project();
    let mock = MockLlm::start();
    let bare = |args: &[&str]| {
        let mut c = ironbees(p.root(), &mock);
        c.env_remove("ANTHROPIC_API_KEY").env_remove("ANTHROPIC_BASE_URL").args(args);
        run(c)
    };
    let list = bare(&["--json", "agents", "list"]);
    ok(&list);
    let names: Vec<String> = serde_json::from_str::<Vec<Value>>(&list.stdout)
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["answerer", "coder", "critic", "planner", "validator"]);
    // Issue 32.7: the text list has every description whole (cut at 40
    // characters before); off a terminal nothing wraps.
    let text = bare(&["agents", "list"]);
    ok(&text);
    for a in serde_json::from_str::<Vec<Value>>(&list.stdout).unwrap() {
        let (name, description) = (a["name"].as_str().unwrap(), a["description"].as_str().unwrap());
        assert!(description.len() > 60, "{name}: a description worth the test: {description}");
        let line = format!("{name:<10}  {description}\n");
        assert!(text.stdout.contains(&line), "{line:?} in:\n{}", text.stdout);
    }
    let planner = bare(&["agents", "show", "planner"]);
    ok(&planner);
    assert!(
        planner
            .stdout
            .contains("requiredTools: understand, navigate, read, localize, search, repomap")
    );
    assert!(planner.stdout.contains("# Planner"), "the prompt is shown");
    let new =
        bare(&["agents", "new", "reviewer", "--description", "Reviews diffs for security issues"]);
    ok(&new);
    assert!(
        p.path("agents/reviewer/agent.yaml").exists()
            && p.path("agents/reviewer/prompt.md").exists()
    );
    let shown = bare(&["--json", "agents", "show", "reviewer"]);
    ok(&shown);
    let def: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(def["description"], "Reviews diffs for security issues");
    assert_eq!(def["source"]["kind"], "project");
    // A broken definition is an error with its file and line.
    p.write("agents/reviewer/agent.yaml", "name: reviewer\ndescription: x\nrequiredTools: [read\n");
    let broken = bare(&["agents", "list"]);
    assert_eq!(broken.code, 2, "{}", broken.stderr);
    assert!(broken.stderr.contains("agents/reviewer/agent.yaml:"), "{}", broken.stderr);
    std::fs::remove_dir_all(p.path("agents")).unwrap();
    // Runs are listed, shown and cancelled without any model configured.
    let runs = bare(&["--json", "runs", "list"]);
    ok(&runs);
    assert_eq!(runs.stdout.trim(), "[]");
    let missing = bare(&["runs", "show", "nope"]);
    assert_eq!(missing.code, 3);
    assert!(missing.stderr.contains("STATE_NOT_FOUND"), "{}", missing.stderr);
    let no_model = bare(&["run", "--yes", "Fix it"]);
    assert_eq!(no_model.code, 2, "{}", no_model.stderr);
    assert!(no_model.stderr.contains("no model provider is configured"), "{}", no_model.stderr);
}

#[test]
fn a_change_nothing_can_validate_waits_for_a_human_even_with_yes() {
    let p = TempProject::new();
    let greet = "def greet(name):\n    return 'Hello ' + name\n";
    p.write("greet.py", greet);
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(greet.as_bytes());
    mock.set_responder(move |body| {
        Some(match agent_of(body) {
            "Planner" => Reply::text(plan_json("greet.py", "Greet with a comma")),
            "Coder" if after_tool(body) => Reply::text("Done."),
            "Coder" => Reply::tool_calls(
                "",
                vec![("change", replace_args("greet.py", &hash, "'Hello '", "'Hello, '"))],
            ),
            _ => return None,
        })
    });
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Greet with a comma"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    let status = &o.outcome()["status"];
    assert_eq!(status["node"], "WAIT_REVIEW");
    assert!(status["reason"].as_str().unwrap().starts_with("nothing could validate this change"));
    assert_eq!(p.read("greet.py"), greet);
    ok(&cli(&p, &mock, &["--json", "runs", "approve", &o.run_id()]));
    assert_eq!(p.read("greet.py"), greet.replace("'Hello '", "'Hello, '"));
}

// --- naming runs, reading them after a crash, requests from files -------------------------

#[test]
fn runs_are_named_by_prefix_or_state_id_and_show_agrees_with_list_after_a_crash() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    let id = run_and_kill(&p, &mock, "VALIDATE");
    let list = cli(&p, &mock, &["--json", "runs", "list"]);
    ok(&list);
    let listed: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(listed[0]["node"], "VALIDATE", "{listed}");
    // By a unique prefix: where the run is, as `runs list` says, and its stateId.
    let shown = cli(&p, &mock, &["--json", "runs", "show", &id[..6]]);
    ok(&shown);
    let shown: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(shown["checkpoint"]["node"], "VALIDATE");
    let state_id = shown["state"]["stateId"].as_str().unwrap().to_owned();
    assert_eq!(state_id, shown["checkpoint"]["stateId"].as_str().unwrap());
    assert!(state_id.starts_with(&id), "{state_id}");
    let text = cli(&p, &mock, &["runs", "show", &state_id]);
    ok(&text);
    assert!(text.stdout.contains("status:    running at VALIDATE"), "{}", text.stdout);
    // Finished: answering or resuming it again is an invalid state, said as such
    // even with no model configured.
    ok(&cli(&p, &mock, &["--json", "runs", "resume", &id]));
    let mut c = ironbees(p.root(), &mock);
    c.env_remove("ANTHROPIC_API_KEY").env_remove("ANTHROPIC_BASE_URL");
    c.args(["runs", "approve", &id[..6]]);
    let again = run(c);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(again.stderr.contains("INVALID_STATE"), "{}", again.stderr);
    assert!(again.stderr.contains("has succeeded; there is nothing to answer"), "{}", again.stderr);
}

#[test]
fn a_long_request_comes_from_a_file_or_standard_input() {
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, GUARDED);
    // Past what one argument may hold (128 KiB on Linux).
    let long = format!(
        "Fix the division by zero bug in calculate().\n{}",
        "Context line.\n".repeat(15_000)
    );
    p.write("request.md", &long);
    let o = cli(&p, &mock, &["run", "--yes", "--json", "--request-file", "request.md"]);
    ok(&o);
    assert_eq!(o.outcome()["state"]["userRequest"], long.trim());
    // Issue 32.7: `runs list` shows 70 bytes of it, on one line, and says how
    // many the list leaves out (it said "[154 bytes cut]": the count of a second
    // cut of the 200-byte excerpt the run stores).
    let list = cli(&p, &mock, &["runs", "list"]);
    ok(&list);
    let cut = format!("…[{} bytes cut]…", long.trim().len() - 70);
    let line = list.stdout.lines().find(|l| l.contains("Fix the division")).unwrap_or_default();
    assert!(line.contains(&cut) && line.ends_with("line. Context line."), "{cut} in {line:?}");
    let mut c = ironbees(p.root(), &mock);
    c.args(["run", "--yes", "--json", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = c.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"Fix the division by zero bug")
        .unwrap();
    let o = Out::from(child.wait_with_output().unwrap());
    assert_eq!(o.outcome()["state"]["userRequest"], "Fix the division by zero bug", "{}", o.stderr);
    let both = cli(&p, &mock, &["run", "x", "--request-file", "request.md"]);
    assert_eq!(both.code, 2, "{}", both.stderr);
}

// --- the shadow: whatever a project's agent.yaml lists ------------------------------------

/// What a run may leave behind: the working tree's files, the edit history and
/// what the index holds.
fn fingerprint(p: &TempProject, mock: &MockLlm) -> (Vec<(String, String)>, String, String) {
    let mut files: Vec<(String, String)> = ["calc.py", "test_calc.py", "keep.py", "new.py"]
        .iter()
        .filter(|f| p.path(f).exists())
        .map(|f| (f.to_string(), p.read(f)))
        .collect();
    files.sort();
    let history = cli(p, mock, &["--json", "history"]).stdout;
    let symbols = cli(p, mock, &["--json", "symbols"]).stdout;
    (files, history, symbols)
}

#[test]
fn no_tool_a_projects_coder_lists_reaches_the_working_tree_the_history_or_the_index() {
    let p = calc_project();
    p.write("keep.py", "KEEP = 1\n");
    p.write(
        ".ironbees/agents/coder/agent.yaml",
        "name: coder\ndescription: a coder with every tool\nrequiredTools: [read, change, write, \
         edit_code, exec, undo, redo, manage, build, test, index, manage_project]\npromptTemplate: prompt.md\n",
    );
    p.write(".ironbees/agents/coder/prompt.md", "# Coder\nDo it.\n");
    let mock = MockLlm::start();
    // One call of each tool that acts, the ones that could escape the shadow
    // first; each answer goes back to the model.
    let calls = vec![
        ("exec", json!({"command": ["sh", "-c", "echo X > keep.py; echo Y > new.py"]})),
        (
            "edit_code",
            json!({"filePath": "keep.py", "edits": [{"targetString": "KEEP = 1", "replacementString": "KEEP = 2"}]}),
        ),
        ("undo", json!({})),
        ("redo", json!({})),
        ("manage", json!({"command": "undo"})),
        ("manage_project", json!({"command": "rebuild"})),
        ("write", json!({"path": "new.py", "content": "NEW = 1\n"})),
        ("change", replace_args("calc.py", &stdx::sha256_hex(CALC.as_bytes()), DIVISION, GUARDED)),
        ("test", json!({})),
        ("index", json!({})),
    ];
    let n = calls.len();
    mock.set_responder(move |body| {
        Some(match agent_of(body) {
            "Planner" => Reply::text(plan_json("calc.py", "Guard the division")),
            "Coder" if after_tool(body) => Reply::text("Done."),
            "Coder" => Reply::tool_calls("", calls.clone()),
            _ => return None,
        })
    });
    let before = fingerprint(&p, &mock);
    let o = cli(&p, &mock, &["run", "--yes", "--review", "--json", "Fix the division by zero bug"]);
    assert_eq!(o.code, 10, "{}", o.stderr);
    assert_eq!(o.outcome()["status"]["node"], "WAIT_REVIEW", "{}", o.outcome());
    let results = o.events("toolResult");
    assert_eq!(results.len(), n, "{results:?}");
    let code = |name: &str| {
        results.iter().find(|r| r["name"] == name).map(|r| r["code"].clone()).unwrap_or_default()
    };
    for refused in ["undo", "redo", "manage", "manage_project"] {
        assert_eq!(code(refused), "SHADOW_REFUSED", "{refused}: {results:?}");
    }
    for ok in ["exec", "edit_code", "write", "change", "test", "index"] {
        assert!(results.iter().any(|r| r["name"] == ok && r["ok"] == true), "{ok}: {results:?}");
    }
    assert_eq!(fingerprint(&p, &mock), before, "waiting for review: nothing outside the run");
    // The run's own change holds the edits, not what `exec` wrote in its copy.
    let overlay = o.outcome()["state"]["overlay"].to_string();
    assert!(overlay.contains("KEEP = 2") && overlay.contains("NEW = 1"), "{overlay}");
    assert!(!overlay.contains("X\\n"), "a command's writes in the copy are not the change");
    let rejected = cli(&p, &mock, &["--json", "runs", "reject", &o.run_id(), "--feedback", "no"]);
    assert_eq!(rejected.code, 10, "reworked, and waiting for review again: {}", rejected.stderr);
    assert_eq!(fingerprint(&p, &mock), before, "a second round: still nothing outside the run");
    ok(&cli(&p, &mock, &["--json", "runs", "cancel", &o.run_id()]));
    assert_eq!(fingerprint(&p, &mock), before, "rejected and cancelled: nothing changed");
}

// --- the open agent graph -------------------------------------------------------------------

#[test]
fn a_reviewer_placed_between_code_and_validate_sends_the_change_back_once() {
    let p = calc_project();
    p.write(
        "agents/reviewer/agent.yaml",
        "name: reviewer\ndescription: Reviews the change\nrequiredTools: [read]\n",
    );
    p.write("agents/reviewer/prompt.md", "# Reviewer\nReview the change.\n");
    p.write(
        ".ironbees/config.yaml",
        "agent:\n  workflow:\n    - node: REVIEW\n      agent: reviewer\n      after: CODE\n      next: [VALIDATE, CODE]\n",
    );
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(CALC.as_bytes());
    let wrong = CALC.replace(DIVISION, WRONG);
    let wrong_hash = stdx::sha256_hex(wrong.as_bytes());
    mock.set_responder(move |body| {
        let conv = conversation(body);
        let system = body["system"].to_string();
        let reply = if system.contains("# Reviewer") {
            // The first change returns None; the reviewer wants a ValueError.
            if conv.contains("return None") {
                Reply::text("The guard returns None.\n{\"nextNode\": \"CODE\", \"message\": \"raise ValueError instead of returning None\"}")
            } else {
                Reply::text("{\"nextNode\": \"VALIDATE\", \"message\": \"looks right\"}")
            }
        } else {
            match agent_of(body) {
                "Planner" => Reply::text(plan_json("calc.py", "Guard the division")),
                "Coder" if after_tool(body) => Reply::text("Done."),
                "Coder" if conv.contains("sent back by a reviewer") => Reply::tool_calls(
                    "",
                    vec![("change", replace_args("calc.py", &wrong_hash, WRONG, GUARDED))],
                ),
                "Coder" => Reply::tool_calls("", vec![("change", replace_args("calc.py", &hash, DIVISION, WRONG))]),
                _ => return None,
            }
        };
        Some(reply.usage(usage()))
    });
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug"]);
    ok(&o);
    let verdicts = o.events("agentVerdict");
    let nexts: Vec<&str> = verdicts.iter().map(|v| v["next"].as_str().unwrap()).collect();
    assert_eq!(nexts, ["CODE", "VALIDATE"], "{verdicts:?}");
    assert_eq!(verdicts[0]["agent"], "reviewer");
    assert_eq!(verdicts[0]["node"], "REVIEW");
    assert_eq!(o.outcome()["state"]["iterationCount"], 2, "the rejection cost a round");
    // VALIDATE ran only on the change the reviewer let through.
    let runs = test_runs(&o);
    assert!(!runs.is_empty() && runs.iter().all(|t| t["success"] == true), "{runs:?}");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));

    // A workflow naming an agent that does not exist fails before any model call.
    p.write(
        ".ironbees/config.yaml",
        "agent:\n  workflow:\n    - node: REVIEW\n      agent: nobody\n      after: CODE\n",
    );
    let bad = cli(&p, &mock, &["run", "--yes", "--json", "Anything"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("agent.workflow node `REVIEW`: no agent `nobody`"),
        "{}",
        bad.stderr
    );
}

#[test]
fn a_new_definition_of_a_built_in_agent_keeps_its_tools_and_says_so() {
    let p = calc_project();
    let mock = MockLlm::start();
    let o = cli(&p, &mock, &["agents", "new", "coder"]);
    ok(&o);
    assert!(o.stderr.contains("`coder` is a built-in agent"), "{}", o.stderr);
    let yaml = p.read("agents/coder/agent.yaml");
    assert!(yaml.contains("  - change\n") && yaml.contains("  - write\n"), "{yaml}");
    assert!(p.read("agents/coder/prompt.md").contains("# Coder"), "the built-in's prompt");
    let shown = cli(&p, &mock, &["--json", "agents", "show", "coder"]);
    let def: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(def["source"]["kind"], "project");
    assert!(def["requiredTools"].as_array().unwrap().contains(&json!("change")));
    // A new name is told how to run it.
    let r = cli(&p, &mock, &["agents", "new", "security"]);
    assert!(r.stderr.contains("workflow:") && r.stderr.contains("agent: security"), "{}", r.stderr);
}

// --- CRITIC: guardrails and the model review ----------------------------------------------

/// A key in Stripe's live format: the guardrails must stop it before validation.
const LIVE_KEY: &str = "STRIPE_KEY = \"sk_live_4eC39HqLyjWDarjtT1zdp7dc\"\n";

#[test]
fn a_secret_in_a_change_is_blocked_before_validation_and_the_coder_removes_it() {
    let p = calc_project();
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(CALC.as_bytes());
    let leaked = format!("{LIVE_KEY}{}", CALC.replace(DIVISION, GUARDED));
    let leaked_hash = stdx::sha256_hex(leaked.as_bytes());
    mock.set_responder(move |body| {
        let conv = conversation(body);
        let reply = match agent_of(body) {
            "Planner" => Reply::text(plan_json("calc.py", "Guard the division")),
            "Coder" if after_tool(body) => Reply::text("Done."),
            "Coder" if conv.contains("GUARDRAIL_BLOCKED G002") => Reply::tool_calls(
                "",
                vec![("change", replace_args("calc.py", &leaked_hash, LIVE_KEY, ""))],
            ),
            "Coder" => Reply::tool_calls(
                "",
                vec![(
                    "change",
                    json!({"edits": [{"path": "calc.py", "targetString": CALC, "replacementString": leaked, "expectedHash": hash}],
                           "options": {"dryRun": false}}),
                )],
            ),
            _ => return None,
        };
        Some(reply.usage(usage()))
    });
    let o = cli(&p, &mock, &["run", "--yes", "--json", "Fix the division by zero bug"]);
    ok(&o);
    let critiques = o.events("critique");
    let verdicts: Vec<(bool, u64)> = critiques
        .iter()
        .map(|c| (c["critique"]["approved"] == true, c["critique"]["iteration"].as_u64().unwrap()))
        .collect();
    assert_eq!(verdicts, [(false, 1), (true, 2)], "{critiques:?}");
    let finding = &critiques[0]["critique"]["guardrails"]["findings"][0];
    assert_eq!(
        (&finding["ruleId"], &finding["file"], &finding["line"], &finding["severity"]),
        (&json!("G002"), &json!("calc.py"), &json!(1), &json!("blocker")),
        "{finding}"
    );
    assert!(
        !finding["message"].as_str().unwrap().contains("4eC39HqLyjWDarjtT1zdp7dc"),
        "the report masks the secret: {finding}"
    );
    // The blocked round was never built or tested: one validation, of the fix.
    let decisions = o.events("decision");
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0]["iteration"], 2);
    assert_eq!(o.outcome()["state"]["iterationCount"], 2, "the block cost a round");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
}

#[test]
fn add_1000_lines_of_logging_is_stopped_by_the_line_limit_and_escalates() {
    let p = calc_project();
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(CALC.as_bytes());
    let logging: String = (0..1000).map(|i| format!("print('calculate: step {i}')\n")).collect();
    let logged = format!("{CALC}{logging}");
    mock.set_responder(move |body| {
        let reply = match agent_of(body) {
            "Planner" => Reply::text(plan_json("calc.py", "Add 1000 lines of logging")),
            "Coder" if after_tool(body) => Reply::text("Added the logging."),
            "Coder" => Reply::tool_calls(
                "",
                vec![(
                    "change",
                    json!({"edits": [{"path": "calc.py", "targetString": CALC, "replacementString": logged, "expectedHash": hash}],
                           "options": {"dryRun": false}}),
                )],
            ),
            _ => return None,
        };
        Some(reply.usage(usage()))
    });
    let o = cli(
        &p,
        &mock,
        &[
            "run",
            "--yes",
            "--json",
            "--max-iterations",
            "1",
            "Add 1000 lines of logging to every file",
        ],
    );
    assert_eq!(o.code, 10, "waits for a human\n{}\n{}", o.stdout, o.stderr);
    let critique = &o.events("critique")[0]["critique"];
    assert_eq!(critique["guardrails"]["findings"][0]["ruleId"], "G001", "{critique}");
    let escalated = o.events("escalated");
    assert!(escalated[0]["reason"].as_str().unwrap().contains("LOC_LIMIT"), "{escalated:?}");
    assert!(test_runs(&o).is_empty(), "nothing blocked is validated");
    assert_eq!(p.read("calc.py"), CALC, "the working tree is untouched");

    // A project that raises the limit lets the same change through to validation.
    p.write(".ironbees/config.yaml", "guardrails:\n  rules:\n    G001: {maxLines: 2000}\n");
    let o = cli(
        &p,
        &mock,
        &[
            "run",
            "--yes",
            "--json",
            "--max-iterations",
            "1",
            "Add 1000 lines of logging to every file",
        ],
    );
    assert_eq!(o.events("critique")[0]["critique"]["approved"], true);
    assert!(!test_runs(&o).is_empty(), "the change went on to validation");
}

#[test]
fn the_critic_reviews_with_a_schema_and_its_blocker_sends_the_change_back() {
    let p = calc_project();
    let mock = MockLlm::start();
    let hash = stdx::sha256_hex(CALC.as_bytes());
    let wrong = CALC.replace(DIVISION, WRONG);
    let wrong_hash = stdx::sha256_hex(wrong.as_bytes());
    mock.set_responder(move |body| {
        let conv = conversation(body);
        let system = body["system"].to_string();
        let reply = if system.contains("# Critic") {
            // Asked for the schema as a forced tool call (Anthropic's way).
            assert_eq!(body["tool_choice"]["name"], "critique", "{}", body["tool_choice"]);
            let review = if conv.contains("return None") {
                json!({"approved": false,
                       "issues": [{"severity": "blocker", "message": "callers expect ValueError, not None", "file": "calc.py", "line": 6}],
                       "suggestions": ["raise ValueError(\"division by zero\")"]})
            } else {
                json!({"approved": true, "issues": [{"severity": "minor", "message": "a docstring would help"}], "suggestions": []})
            };
            Reply::tool_calls("", vec![("critique", review)])
        } else {
            match agent_of(body) {
                "Planner" => Reply::text(plan_json("calc.py", "Guard the division")),
                "Coder" if after_tool(body) => Reply::text("Done."),
                "Coder" if conv.contains("callers expect ValueError") => Reply::tool_calls(
                    "",
                    vec![("change", replace_args("calc.py", &wrong_hash, WRONG, GUARDED))],
                ),
                "Coder" => Reply::tool_calls("", vec![("change", replace_args("calc.py", &hash, DIVISION, WRONG))]),
                _ => return None,
            }
        };
        Some(reply.usage(usage()))
    });
    let o = cli(&p, &mock, &["run", "--yes", "--json", "--critic", "Fix the division by zero bug"]);
    ok(&o);
    let critiques: Vec<Value> =
        o.events("critique").into_iter().map(|c| c["critique"].clone()).collect();
    assert_eq!(critiques.len(), 2, "{critiques:?}");
    assert_eq!(
        (&critiques[0]["approved"], &critiques[0]["reviewed"]),
        (&json!(false), &json!(true))
    );
    assert_eq!(critiques[0]["issues"][0]["severity"], "blocker");
    assert_eq!(critiques[0]["issues"][0]["line"], 6);
    assert_eq!(critiques[1]["approved"], true);
    assert_eq!(critiques[1]["issues"][0]["severity"], "info", "`minor` is read as info");
    let state = &o.outcome()["state"];
    assert_eq!(state["iterationCount"], 2);
    assert_eq!(state["critique"]["approved"], true, "the verdict is in the state");
    // The critic's calls are the run's: booked to its spend, reported as events.
    let critic_calls = o.events("modelCall").into_iter().filter(|c| c["agent"] == "critic").count();
    assert_eq!(critic_calls, 2);
    let decisions = o.events("decision");
    assert_eq!(decisions.len(), 1, "only the approved change was validated: {decisions:?}");
    assert_eq!(p.read("calc.py"), CALC.replace(DIVISION, GUARDED));
}
