//! Parsers: pure functions from a tool's output to diagnostics and test results.
//! Each is tested on real output recorded from the tool (`tests/fixtures/recorded`).

use std::{collections::BTreeMap, path::Path, sync::OnceLock};

use protocol::{Diagnostic, Severity, TestFailure, TestResult};
use regex::Regex;
use serde_json::Value;

fn re(cell: &'static OnceLock<Regex>, pat: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pat).expect("valid regex"))
}

// --- cargo ------------------------------------------------------------------------

/// Cargo's `--message-format=json` lines: (errors, warnings, build-finished success).
/// Duplicates (the same warning from the lib and its test target) are dropped, and
/// so are the "aborting due to" / "N warnings emitted" summaries.
pub fn parse_cargo_messages(stdout: &str) -> (Vec<Diagnostic>, Vec<Diagnostic>, Option<bool>) {
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut warnings: Vec<Diagnostic> = Vec::new();
    let mut finished = None;
    for line in stdout.lines() {
        if !line.starts_with("{\"reason\":") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        match v["reason"].as_str() {
            Some("build-finished") => finished = v["success"].as_bool(),
            Some("compiler-message") => {
                let m = &v["message"];
                let level = m["level"].as_str().unwrap_or("");
                let severity = match level {
                    "error" | "error: internal compiler error" => Severity::Error,
                    "warning" => Severity::Warning,
                    _ => continue,
                };
                let message = m["message"].as_str().unwrap_or("").to_owned();
                let spans = m["spans"].as_array().cloned().unwrap_or_default();
                if spans.is_empty() && is_rustc_summary(&message) {
                    continue;
                }
                let primary = spans.iter().find(|s| s["is_primary"].as_bool() == Some(true));
                let d = Diagnostic {
                    severity,
                    code: m["code"]["code"].as_str().map(str::to_owned),
                    message,
                    file: primary.and_then(|s| s["file_name"].as_str()).map(str::to_owned),
                    line: primary.and_then(|s| s["line_start"].as_u64()).map(|n| n as u32),
                    column: primary.and_then(|s| s["column_start"].as_u64()).map(|n| n as u32),
                };
                let list = if severity == Severity::Error { &mut errors } else { &mut warnings };
                if !list.contains(&d) {
                    list.push(d);
                }
            }
            _ => {}
        }
    }
    (errors, warnings, finished)
}

fn is_rustc_summary(msg: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    msg.starts_with("aborting due to")
        || re(&R, r"^\d+ warnings? emitted$").is_match(msg)
        || msg.starts_with("For more information about")
}

/// Where a Rust panic happened and what it said, from test output.
fn rust_panic(text: &str) -> (String, Option<String>, Option<u32>) {
    static NEW: OnceLock<Regex> = OnceLock::new();
    static OLD: OnceLock<Regex> = OnceLock::new();
    // Rust ≥ 1.73: "thread 'x' (123) panicked at src/lib.rs:6:26:\nmessage..."
    let new = re(&NEW, r"(?m)^thread '[^']*'(?: \(\d+\))? panicked at ([^\n]+?):(\d+):(\d+):\n");
    if let Some(c) = new.captures(text) {
        let rest = &text[c.get(0).unwrap().end()..];
        let msg: Vec<&str> = rest
            .lines()
            .take_while(|l| !l.starts_with("stack backtrace:") && !l.starts_with("note: "))
            .collect();
        return (msg.join("\n").trim().to_owned(), Some(c[1].to_owned()), c[2].parse().ok());
    }
    // Older: "thread 'x' panicked at 'message', src/lib.rs:6:5"
    let old = re(&OLD, r"(?m)^thread '[^']*' panicked at '(.*)', ([^\n]+?):(\d+):(\d+)$");
    if let Some(c) = old.captures(text) {
        return (c[1].to_owned(), Some(c[2].to_owned()), c[3].parse().ok());
    }
    (text.trim().lines().next().unwrap_or("").to_owned(), None, None)
}

fn backtrace_of(text: &str) -> Option<String> {
    let i = text.find("stack backtrace:")?;
    Some(text[i..].trim_end().to_owned())
}

/// libtest's text output (`cargo test`), summed over every test binary. Crashes of
/// a test binary (a signal, an abort) come from cargo's stderr.
pub fn parse_libtest(stdout: &str, stderr: &str) -> TestResult {
    static RESULT: OnceLock<Regex> = OnceLock::new();
    static LINE: OnceLock<Regex> = OnceLock::new();
    let result_re = re(
        &RESULT,
        r"(?m)^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out(?:; finished in ([0-9.]+)s)?",
    );
    let line_re = re(&LINE, r"(?m)^test (\S+)(?: - should panic)? \.\.\. (ok|FAILED|ignored)");
    let mut r = TestResult { tool: "cargo".into(), ..Default::default() };
    let mut secs = 0.0;
    for c in result_re.captures_iter(stdout) {
        let n = |i: usize| c[i].parse::<u32>().unwrap_or(0);
        r.passed += n(1);
        r.failed += n(2);
        r.skipped += n(3);
        secs += c.get(6).and_then(|m| m.as_str().parse::<f64>().ok()).unwrap_or(0.0);
    }
    r.total = r.passed + r.failed + r.skipped;
    r.duration_ms = (secs * 1000.0) as u64;
    let failed: Vec<String> = line_re
        .captures_iter(stdout)
        .filter(|c| &c[2] == "FAILED")
        .map(|c| c[1].to_owned())
        .collect();
    // "---- name stdout ----" blocks hold each failure's output.
    let mut blocks: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in stdout.lines() {
        if let Some(name) = line.strip_prefix("---- ").and_then(|l| l.strip_suffix(" stdout ----"))
        {
            current = Some(name.to_owned());
            blocks.entry(name.to_owned()).or_default();
            continue;
        }
        if line == "failures:" || line.starts_with("test result:") {
            current = None;
            continue;
        }
        if let Some(c) = &current {
            let b = blocks.get_mut(c).expect("entry exists");
            b.push_str(line);
            b.push('\n');
        }
    }
    for name in failed {
        let text = blocks.get(&name).cloned().unwrap_or_default();
        let (message, file, line) = rust_panic(&text);
        r.failures.push(TestFailure {
            name,
            message,
            stack_trace: backtrace_of(&text),
            file,
            line,
        });
    }
    // A test binary that died (signal, abort) prints no "test result" for itself.
    static CRASH: OnceLock<Regex> = OnceLock::new();
    let crash = re(&CRASH, r"process didn't exit successfully: `[^`]*` \(([^)]*)\)");
    if let Some(c) = crash.captures(stderr)
        && c[1].contains("signal")
    {
        r.incomplete = Some(format!("a test binary crashed ({})", &c[1]));
    }
    r
}

/// `cargo nextest run --message-format libtest-json-plus` (one JSON event per line).
/// Counted from the per-test events; the last event of each test wins (retries).
pub fn parse_nextest_libtest_json(stdout: &str) -> TestResult {
    let mut r = TestResult { tool: "nextest".into(), ..Default::default() };
    let mut last: BTreeMap<String, Value> = BTreeMap::new();
    let mut secs = 0.0;
    for line in stdout.lines() {
        if !line.starts_with("{\"type\":") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        if let (Some("test"), Some("ok" | "failed" | "ignored" | "timeout")) =
            (v["type"].as_str(), v["event"].as_str())
        {
            let name = v["name"].as_str().unwrap_or("").replace('$', "::");
            secs += v["exec_time"].as_f64().unwrap_or(0.0);
            last.insert(name, v);
        }
    }
    for (name, v) in last {
        match v["event"].as_str() {
            Some("ok") => r.passed += 1,
            Some("ignored") => r.skipped += 1,
            _ => {
                r.failed += 1;
                let out = v["stdout"].as_str().unwrap_or("");
                let (mut message, file, line) = rust_panic(out);
                if v["event"] == "timeout" {
                    message = format!("timed out (nextest slow-timeout): {message}");
                }
                r.failures.push(TestFailure {
                    name,
                    message,
                    stack_trace: backtrace_of(out),
                    file,
                    line,
                });
            }
        }
    }
    r.total = r.passed + r.failed + r.skipped;
    r.duration_ms = (secs * 1000.0) as u64;
    r
}

// --- JUnit XML (pytest) -------------------------------------------------------------

/// A JUnit XML report (pytest `--junitxml`, and any tool that writes the format).
pub fn parse_junit_xml(xml: &str, tool: &str) -> Result<TestResult, String> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("JUnit XML: {e}"))?;
    let mut r = TestResult { tool: tool.into(), ..Default::default() };
    let mut secs = 0.0;
    for suite in doc.descendants().filter(|n| n.has_tag_name("testsuite")) {
        secs += suite.attribute("time").and_then(|t| t.parse::<f64>().ok()).unwrap_or(0.0);
    }
    for case in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
        r.total += 1;
        let class = case.attribute("classname").unwrap_or("");
        let name = case.attribute("name").unwrap_or("");
        let full = if class.is_empty() { name.to_owned() } else { format!("{class}::{name}") };
        let bad = case.children().find(|c| c.has_tag_name("failure") || c.has_tag_name("error"));
        if let Some(f) = bad {
            r.failed += 1;
            let text = f.text().unwrap_or("").to_owned();
            let mut message = f.attribute("message").unwrap_or("").to_owned();
            if f.has_tag_name("error") && !message.is_empty() {
                message = format!("error: {message}");
            }
            if message.is_empty() {
                message = text
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim()
                    .to_owned();
            }
            let (file, line) = pytest_location(&text).map(|(f, l)| (Some(f), Some(l))).unwrap_or((
                case.attribute("file").map(str::to_owned),
                case.attribute("line").and_then(|l| l.parse().ok()),
            ));
            r.failures.push(TestFailure {
                name: full,
                message,
                stack_trace: (!text.is_empty()).then_some(text),
                file,
                line,
            });
        } else if case.children().any(|c| c.has_tag_name("skipped")) {
            r.skipped += 1;
        } else {
            r.passed += 1;
        }
    }
    r.duration_ms = (secs * 1000.0) as u64;
    Ok(r)
}

/// Where a pytest failure points: the last project-relative `path.py:LINE:` of the
/// traceback (the assertion), else the `File "...", line N` of a syntax error.
fn pytest_location(text: &str) -> Option<(String, u32)> {
    static R: OnceLock<Regex> = OnceLock::new();
    static SYNTAX: OnceLock<Regex> = OnceLock::new();
    let r = re(&R, r"(?m)^([^\s:/<][^:\n]*\.py):(\d+):");
    if let Some(c) = r.captures_iter(text).last() {
        return Some((c[1].to_owned(), c[2].parse().unwrap_or(0)));
    }
    let s = re(&SYNTAX, r#"File "([^"]+\.py)", line (\d+)"#);
    s.captures_iter(text).last().map(|c| (c[1].to_owned(), c[2].parse().unwrap_or(0)))
}

// --- .NET ---------------------------------------------------------------------------

/// A `dotnet test --logger trx` report (Visual Studio TeamTest 2010 schema).
pub fn parse_trx(xml: &str) -> Result<TestResult, String> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("TRX: {e}"))?;
    let mut r = TestResult { tool: "dotnet".into(), ..Default::default() };
    // Test definitions give the class of each test id.
    let mut class_of: BTreeMap<&str, &str> = BTreeMap::new();
    for ut in doc.descendants().filter(|n| n.has_tag_name("UnitTest")) {
        if let (Some(id), Some(m)) =
            (ut.attribute("id"), ut.children().find(|c| c.has_tag_name("TestMethod")))
        {
            class_of.insert(id, m.attribute("className").unwrap_or(""));
        }
    }
    for res in doc.descendants().filter(|n| n.has_tag_name("UnitTestResult")) {
        // Data-driven tests nest their rows as InnerResults; count the leaves.
        if res.descendants().skip(1).any(|d| d.has_tag_name("UnitTestResult")) {
            continue;
        }
        r.total += 1;
        r.duration_ms += res.attribute("duration").map(trx_duration_ms).unwrap_or(0);
        match res.attribute("outcome").unwrap_or("") {
            "Passed" => r.passed += 1,
            "NotExecuted" | "Inconclusive" | "Pending" | "NotRunnable" => r.skipped += 1,
            _ => {
                r.failed += 1;
                let name = res.attribute("testName").unwrap_or("").to_owned();
                let find = |tag: &str| {
                    res.descendants()
                        .find(|d| d.has_tag_name(tag))
                        .and_then(|n| n.text())
                        .map(str::to_owned)
                };
                let message = find("Message").map(|m| m.replace('\r', "")).unwrap_or_else(|| {
                    format!("outcome {}", res.attribute("outcome").unwrap_or("unknown"))
                });
                let stack = find("StackTrace").map(|t| t.replace('\r', ""));
                let (file, line) = stack
                    .as_deref()
                    .and_then(dotnet_location)
                    .map_or((None, None), |(f, l)| (Some(f), Some(l)));
                let class =
                    res.attribute("testId").and_then(|id| class_of.get(id)).copied().unwrap_or("");
                let class = class.split(',').next().unwrap_or("");
                let full = if class.is_empty() || name.contains('.') {
                    name
                } else {
                    format!("{class}.{name}")
                };
                r.failures.push(TestFailure {
                    name: full,
                    message: message.trim().to_owned(),
                    stack_trace: stack,
                    file,
                    line,
                });
            }
        }
    }
    // Test frameworks log every failing test as an "Error" run info too (xUnit's
    // "[FAIL]" lines); only the test host's own errors mean the run was cut short.
    let host_errors: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("RunInfo") && n.attribute("outcome") == Some("Error"))
        .filter_map(|n| n.descendants().find(|d| d.has_tag_name("Text")).and_then(|t| t.text()))
        .map(|t| t.trim().to_owned())
        .filter(|t| {
            let l = t.to_ascii_lowercase();
            l.contains("aborted") || l.contains("crashed") || l.contains("test host process")
        })
        .collect();
    if !host_errors.is_empty() {
        r.incomplete = Some(format!("the test host reported: {}", host_errors.join("; ")));
    }
    if r.incomplete.is_none()
        && doc
            .descendants()
            .find(|n| n.has_tag_name("ResultSummary"))
            .is_some_and(|s| s.attribute("outcome") == Some("Aborted"))
    {
        r.incomplete = Some("the test run was aborted".into());
    }
    Ok(r)
}

fn trx_duration_ms(d: &str) -> u64 {
    // hh:mm:ss.fffffff
    let mut parts = d.split(':');
    let (Some(h), Some(m), Some(s)) = (parts.next(), parts.next(), parts.next()) else { return 0 };
    let h: f64 = h.parse().unwrap_or(0.0);
    let m: f64 = m.parse().unwrap_or(0.0);
    let s: f64 = s.parse().unwrap_or(0.0);
    ((h * 3600.0 + m * 60.0 + s) * 1000.0) as u64
}

/// `at Ns.Class.Method() in /src/File.cs:line 23`
fn dotnet_location(stack: &str) -> Option<(String, u32)> {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = re(&R, r" in (.+?):line (\d+)");
    r.captures(stack).map(|c| (c[1].to_owned(), c[2].parse().unwrap_or(0)))
}

/// MSBuild-style diagnostics (`dotnet build`, `tsc --pretty false`):
/// `path(line,col): error CODE: message [project]`. Paths under `root` are made
/// relative; repeats (MSBuild prints each diagnostic again in its summary) dropped.
pub fn parse_msbuild_lines(text: &str, root: &Path) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    static LOC: OnceLock<Regex> = OnceLock::new();
    static NOLOC: OnceLock<Regex> = OnceLock::new();
    let loc = re(
        &LOC,
        r"^\s*(?P<file>[^\s(][^(]*?)\((?P<line>\d+),(?P<col>\d+)(?:,\d+,\d+)?\): (?P<sev>error|warning) (?P<code>[A-Za-z]+\d+): (?P<msg>.*?)(?: \[[^\]]+\])?$",
    );
    let noloc = re(
        &NOLOC,
        r"^\s*(?P<origin>[A-Za-z][\w.\-]*(?: [\w.\-]+)?) : (?P<sev>error|warning) (?P<code>[A-Za-z]+\d+): (?P<msg>.*?)(?: \[[^\]]+\])?$",
    );
    let root_s = format!("{}/", root.display());
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut warnings: Vec<Diagnostic> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim_end_matches('\r');
        let d = if let Some(c) = loc.captures(line) {
            let file = c["file"].trim().to_owned();
            let file = file.strip_prefix(&root_s).map(str::to_owned).unwrap_or(file);
            Some((
                c["sev"].to_owned(),
                Diagnostic {
                    severity: Severity::Error,
                    code: Some(c["code"].to_owned()),
                    message: c["msg"].to_owned(),
                    file: Some(file),
                    line: c["line"].parse().ok(),
                    column: c["col"].parse().ok(),
                },
            ))
        } else {
            noloc.captures(line).map(|c| {
                (
                    c["sev"].to_owned(),
                    Diagnostic {
                        severity: Severity::Error,
                        code: Some(c["code"].to_owned()),
                        message: c["msg"].to_owned(),
                        file: None,
                        line: None,
                        column: None,
                    },
                )
            })
        };
        let Some((sev, mut d)) = d else { continue };
        let list = if sev == "error" {
            &mut errors
        } else {
            d.severity = Severity::Warning;
            &mut warnings
        };
        if !list.contains(&d) {
            list.push(d);
        }
    }
    (errors, warnings)
}

// --- Go -------------------------------------------------------------------------------

/// Compiler errors from `go build` / `go test` stderr: `./main.go:5:2: message`.
pub fn parse_go_build(stderr: &str) -> Vec<Diagnostic> {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = re(&R, r"^(?P<file>[^\s:#][^:\n]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$");
    let mut out: Vec<Diagnostic> = Vec::new();
    for line in stderr.lines() {
        if let Some(c) = r.captures(line) {
            let d = Diagnostic {
                severity: Severity::Error,
                code: None,
                message: c["msg"].to_owned(),
                file: Some(c["file"].trim_start_matches("./").to_owned()),
                line: c["line"].parse().ok(),
                column: c.name("col").and_then(|m| m.as_str().parse().ok()),
            };
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// `go test -json` events. Subtests count as tests; their parents do not.
pub fn parse_go_test_json(stdout: &str) -> TestResult {
    let mut r = TestResult { tool: "go".into(), ..Default::default() };
    let mut outputs: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut final_action: BTreeMap<(String, String), (String, f64)> = BTreeMap::new();
    let mut build_failed: Vec<String> = Vec::new();
    let mut secs = 0.0;
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            // Before Go 1.24 a package that fails to build is reported in plain text.
            if let Some(rest) = line.strip_prefix("FAIL\t")
                && let Some(pkg) = rest
                    .strip_suffix(" [build failed]")
                    .or_else(|| rest.strip_suffix(" [setup failed]"))
            {
                build_failed.push(pkg.to_owned());
            }
            continue;
        };
        let pkg = v["Package"].as_str().unwrap_or("").to_owned();
        let action = v["Action"].as_str().unwrap_or("");
        match v["Test"].as_str() {
            Some(test) => {
                let key = (pkg, test.to_owned());
                match action {
                    "output" => {
                        outputs.entry(key).or_default().push_str(v["Output"].as_str().unwrap_or(""))
                    }
                    "pass" | "fail" | "skip" => {
                        final_action
                            .insert(key, (action.to_owned(), v["Elapsed"].as_f64().unwrap_or(0.0)));
                    }
                    _ => {}
                }
            }
            None => match action {
                "pass" | "fail" => {
                    secs += v["Elapsed"].as_f64().unwrap_or(0.0);
                    if action == "fail" {
                        let out =
                            outputs.get(&(pkg.clone(), String::new())).cloned().unwrap_or_default();
                        if out.contains("[build failed]") || out.contains("[setup failed]") {
                            build_failed.push(pkg);
                        }
                    }
                }
                "output" => outputs
                    .entry((pkg, String::new()))
                    .or_default()
                    .push_str(v["Output"].as_str().unwrap_or("")),
                _ => {}
            },
        }
    }
    // Count leaves: a test with subtests is reported through its subtests.
    let names: Vec<(String, String)> = final_action.keys().cloned().collect();
    for (key, (action, _)) in &final_action {
        let prefix = format!("{}/", key.1);
        if names.iter().any(|(p, t)| p == &key.0 && t.starts_with(&prefix)) {
            continue;
        }
        match action.as_str() {
            "pass" => r.passed += 1,
            "skip" => r.skipped += 1,
            _ => {
                r.failed += 1;
                let out = outputs.get(key).cloned().unwrap_or_default();
                let (message, file, line) = go_failure(&out);
                r.failures.push(TestFailure {
                    name: format!("{}.{}", key.0, key.1),
                    message,
                    stack_trace: (!out.trim().is_empty()).then(|| out.trim_end().to_owned()),
                    file,
                    line,
                });
            }
        }
    }
    r.total = r.passed + r.failed + r.skipped;
    r.duration_ms = (secs * 1000.0) as u64;
    if !build_failed.is_empty() {
        r.incomplete = Some(format!("build failed: {}", build_failed.join(", ")));
    }
    r
}

/// `    main_test.go:12: got 3, want 4` lines in a test's output.
fn go_failure(out: &str) -> (String, Option<String>, Option<u32>) {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = re(&R, r"(?m)^\s+([\w./-]+\.go):(\d+): (.*)$");
    let found: Vec<(String, u32, String)> = r
        .captures_iter(out)
        .map(|c| (c[1].to_owned(), c[2].parse().unwrap_or(0), c[3].to_owned()))
        .collect();
    if let Some((f, l, _)) = found.first() {
        let msg = found.iter().map(|(_, _, m)| m.as_str()).collect::<Vec<_>>().join("\n");
        return (msg, Some(f.clone()), Some(*l));
    }
    if let Some(p) = out.lines().find(|l| l.starts_with("panic:")) {
        return (p.to_owned(), None, None);
    }
    (
        out.lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with("=== "))
            .unwrap_or("failed")
            .trim()
            .to_owned(),
        None,
        None,
    )
}

// --- jest / vitest ----------------------------------------------------------------

/// The JSON report of jest (`--json`) or vitest (`--reporter=json`, same shape).
pub fn parse_jest_json(text: &str, tool: &str) -> Result<TestResult, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("{tool} JSON: {e}"))?;
    let n = |k: &str| v[k].as_u64().unwrap_or(0) as u32;
    let mut r = TestResult {
        tool: tool.into(),
        total: n("numTotalTests"),
        passed: n("numPassedTests"),
        failed: n("numFailedTests"),
        skipped: n("numPendingTests") + n("numTodoTests"),
        ..Default::default()
    };
    let mut start = v["startTime"].as_f64().unwrap_or(0.0);
    let mut end: f64 = 0.0;
    let mut suite_errors = Vec::new();
    for suite in v["testResults"].as_array().into_iter().flatten() {
        let file = suite["name"].as_str().unwrap_or("").to_owned();
        if let Some(e) = suite["endTime"].as_f64() {
            end = end.max(e);
        }
        if let Some(s) = suite["startTime"].as_f64()
            && (start == 0.0 || s < start)
        {
            start = s;
        }
        for a in suite["assertionResults"].as_array().into_iter().flatten() {
            if a["status"] != "failed" {
                continue;
            }
            let msgs: Vec<&str> = a["failureMessages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m.as_str())
                .collect();
            let joined = msgs.join("\n");
            let message = joined.lines().next().unwrap_or("").trim().to_owned();
            let line = a["location"]["line"]
                .as_u64()
                .map(|l| l as u32)
                .or_else(|| js_location(&joined, &file));
            r.failures.push(TestFailure {
                name: a["fullName"]
                    .as_str()
                    .unwrap_or(a["title"].as_str().unwrap_or(""))
                    .to_owned(),
                message,
                stack_trace: (!joined.is_empty()).then_some(joined.clone()),
                file: Some(file.clone()),
                line,
            });
        }
        // A suite that failed to run (syntax error, import failure) has no assertions.
        if suite["status"] == "failed"
            && suite["assertionResults"].as_array().is_none_or(|a| a.is_empty())
        {
            let msg = suite["message"].as_str().unwrap_or("").trim().to_owned();
            suite_errors.push(file.clone());
            r.failed += 1;
            r.total += 1;
            r.failures.push(TestFailure {
                name: file.clone(),
                message: msg
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("test file failed to run")
                    .trim()
                    .to_owned(),
                stack_trace: (!msg.is_empty()).then_some(msg),
                file: Some(file),
                line: None,
            });
        }
    }
    if end > start && start > 0.0 {
        r.duration_ms = (end - start) as u64;
    }
    Ok(r)
}

fn js_location(stack: &str, file: &str) -> Option<u32> {
    let needle = format!("{file}:");
    let i = stack.find(&needle)?;
    stack[i + needle.len()..].split(':').next()?.parse().ok()
}

/// A closing "N passed, N failed[, N skipped]" line, the plain convention for a
/// test command's summary.
pub fn closing_counts(text: &str) -> Option<(u32, u32, u32)> {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = re(&R, r"(?m)^(?:\w+: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$");
    let c = r.captures_iter(text).last()?;
    Some((
        c[1].parse().ok()?,
        c[2].parse().ok()?,
        c.get(3).and_then(|m| m.as_str().parse().ok()).unwrap_or(0),
    ))
}
