//! The crash test: a real child process runs a workflow (effects, a loop, an
//! interrupt answered by a resume) and is killed with SIGKILL at every crash point
//! of `failpoint.rs` in turn; a second child, resuming, is killed again at one of
//! its first points; then a fresh store and runner in this process resume the run
//! to its end. The final state must equal an uninterrupted run's, and every effect
//! must have run exactly once, except the one a kill caught between running and
//! recording (the documented window), which ran twice and whose own idempotence
//! kept its output single.
//!
//! The crash points exist only in this crate's unit-test binary and in builds
//! with the `crash-test` feature, so the harness is here, generic over the
//! store: [`sigkill_at_every_crash_point`] runs it against a store made by the
//! caller's factory, the child being the caller's own test binary running its
//! ignored test named `child_test` that calls [`child`] with the same factory
//! (this crate: SQLite; `workflow-pg`: PostgreSQL).
#![allow(clippy::disallowed_methods)] // the test starts itself as the child process
#![allow(clippy::print_stdout)] // the child reports to its parent on stdout
#![allow(clippy::unwrap_used, clippy::missing_panics_doc)] // a test harness

use std::{
    collections::BTreeMap,
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::Arc,
};

use protocol::RunStatus;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    CheckpointStore, END, Error, Graph, NodeContext, NodeError, NodeOutcome, RunOptions, RunReport,
    Runner, WorkflowState, failpoint,
};

/// Makes the store of the run under `root` (the same one for the same root,
/// in any process).
pub type StoreFactory = fn(&Path) -> Arc<dyn CheckpointStore>;

const ROOT_VAR: &str = "IRONBEES_WF_CRASH_ROOT";
const AT_VAR: &str = "IRONBEES_WF_CRASH_AT";
const MODE_VAR: &str = "IRONBEES_WF_CRASH_MODE";
const RUN: &str = "crash";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    log: Vec<String>,
    round: u32,
    /// What each effect returned (recorded results on a re-run).
    sent: Vec<Value>,
    approval: Option<Value>,
}

impl WorkflowState for State {
    fn iteration(&self) -> u32 {
        self.round
    }
}

/// An effect as a real one would be: every call is counted in `calls.log`, and its
/// output (`outbox.log`) is idempotent on its own terms, written only if absent.
fn send(root: &Path, key: &str) -> Result<Value, NodeError> {
    let io = |e: std::io::Error| NodeError::new("IO_ERROR", e.to_string());
    let append =
        |name: &str| std::fs::OpenOptions::new().create(true).append(true).open(root.join(name));
    writeln!(append("calls.log").map_err(io)?, "{key}").map_err(io)?;
    let outbox = std::fs::read_to_string(root.join("outbox.log")).unwrap_or_default();
    if !outbox.lines().any(|l| l == key) {
        writeln!(append("outbox.log").map_err(io)?, "{key}").map_err(io)?;
    }
    Ok(json!({ "sent": key }))
}

/// INIT -> WORK (three rounds, an effect each) -> APPROVE (interrupt, then an
/// effect) -> DONE -> END.
fn runner(root: &Path, store: StoreFactory) -> Runner<State> {
    let mut g = Graph::new();
    let r = root.to_owned();
    g.add_node("INIT", move |mut s: State, cx: &mut NodeContext<'_>| {
        s.sent.push(cx.effect("init", || send(&r, "init"))?);
        s.log.push("INIT".into());
        Ok(NodeOutcome::Continue(s))
    });
    let r = root.to_owned();
    g.add_node("WORK", move |mut s: State, cx: &mut NodeContext<'_>| {
        s.round += 1;
        let key = format!("work-{}", s.round);
        s.sent.push(cx.effect(&key, || send(&r, &key))?);
        s.log.push(key);
        Ok(NodeOutcome::Continue(s))
    });
    let r = root.to_owned();
    g.add_node("APPROVE", move |mut s: State, cx: &mut NodeContext<'_>| {
        let Some(answer) = cx.resume_input().cloned() else {
            return Ok(NodeOutcome::Interrupt {
                payload: json!({ "rounds": s.round }),
                reason: "approve".into(),
                state: s,
            });
        };
        s.sent.push(cx.effect("notify", || send(&r, "notify"))?);
        s.approval = Some(answer);
        s.log.push("APPROVE".into());
        Ok(NodeOutcome::Continue(s))
    });
    g.add_node("DONE", |mut s: State, _: &mut NodeContext<'_>| {
        s.log.push("DONE".into());
        Ok(NodeOutcome::Continue(s))
    });
    g.add_edge("INIT", "WORK")
        .add_conditional_edges("WORK", &["WORK", "APPROVE"], |s: &State| {
            if s.round < 3 { "WORK" } else { "APPROVE" }
        })
        .add_edge("APPROVE", "DONE")
        .add_edge("DONE", END)
        .set_entry("INIT");
    Runner::new(Arc::new(g.build().unwrap()), store(root))
}

/// Retries a call while another (killed) process's lease on the run has not
/// run out yet (a store whose locks are leases, not the kernel's file locks).
fn patiently<T>(mut f: impl FnMut() -> crate::Result<T>) -> crate::Result<T> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match f() {
            Err(Error::Busy { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// The child's work: start, then answer the interrupt.
fn scenario(root: &Path, store: StoreFactory) {
    let r = runner(root, store);
    let report = r.start(Some(RUN), "crash-test", State::default(), RunOptions::default()).unwrap();
    assert_eq!(report.status.name(), "waiting");
    let report = r.resume(RUN, Some(json!("yes"))).unwrap();
    assert_eq!(report.status, RunStatus::Succeeded);
}

/// What anyone does with a run found after a crash: start it if it never got
/// created, answer it if it waits, resume it otherwise, until it succeeds. Its
/// answer differs from the scenario's, to tell whether an answer the scenario gave
/// before the kill was kept.
fn finish(root: &Path, store: StoreFactory) -> State {
    let r = runner(root, store);
    for _ in 0..10 {
        let report: crate::Result<RunReport<State>> = patiently(|| match r.state(RUN)? {
            None => r.start(Some(RUN), "crash-test", State::default(), RunOptions::default()),
            Some((cp, state)) => match cp.meta.status {
                RunStatus::Succeeded => Ok(RunReport {
                    run_id: RUN.into(),
                    status: RunStatus::Succeeded,
                    checkpoint: cp.meta,
                    state,
                    steps: 0,
                }),
                RunStatus::Waiting { .. } => r.resume(RUN, Some(json!("late"))),
                _ => r.resume(RUN, None),
            },
        });
        let report = report.unwrap();
        if report.status == RunStatus::Succeeded {
            return report.state;
        }
    }
    panic!("the run did not finish");
}

/// Runs this binary's `child` test; returns the crash point's name if it was
/// reached (then the child was SIGKILLed) and the child's stdout.
fn run_child(child_test: &str, root: &Path, mode: &str, at: u64) -> (Option<String>, Vec<String>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([child_test, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(ROOT_VAR, root)
        .env(AT_VAR, at.to_string())
        .env(MODE_VAR, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut crashed = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        // libtest may print `test crash_tests::child ... ` on the same line first.
        if let Some(i) = line.find("CRASHPOINT ") {
            crashed = Some(line[i + "CRASHPOINT ".len()..].to_owned());
            child.kill().unwrap(); // SIGKILL
            break;
        }
        lines.push(line);
    }
    let status = child.wait().unwrap();
    if crashed.is_none() {
        assert!(status.success(), "child failed: {lines:?}");
    }
    (crashed, lines)
}

/// The child's side: call it from an ignored test (the one named `child_test`
/// in [`sigkill_at_every_crash_point`]); it does nothing without the variables
/// the parent sets.
pub fn child(store: StoreFactory) {
    let (Ok(root), Ok(at), Ok(mode)) =
        (std::env::var(ROOT_VAR), std::env::var(AT_VAR), std::env::var(MODE_VAR))
    else {
        return;
    };
    failpoint::arm(at.parse().unwrap());
    let root = PathBuf::from(root);
    match mode.as_str() {
        "scenario" => scenario(&root, store),
        "recover" => drop(finish(&root, store)),
        other => panic!("unknown mode {other}"),
    }
    println!("\nPASSED {}", failpoint::passed().join("|"));
}

fn counts(path: &Path) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for l in std::fs::read_to_string(path).unwrap_or_default().lines() {
        *out.entry(l.to_owned()).or_default() += 1;
    }
    out
}

/// The crash test against the factory's store; `child_test` is the exact name
/// of the caller's ignored test that calls [`child`].
pub fn sigkill_at_every_crash_point(store: StoreFactory, child_test: &str, scratch: &Path) {
    let keys = ["init", "notify", "work-1", "work-2", "work-3"];
    let once: BTreeMap<String, usize> = keys.iter().map(|k| (k.to_string(), 1)).collect();

    // The uninterrupted run, in this process.
    let clean = scratch.join("clean");
    std::fs::create_dir_all(&clean).unwrap();
    scenario(&clean, store);
    let want = runner(&clean, store).state(RUN).unwrap().unwrap().1;
    assert_eq!(want.log, ["INIT", "work-1", "work-2", "work-3", "APPROVE", "DONE"]);
    assert_eq!(counts(&clean.join("calls.log")), once);

    // How many crash points the scenario passes: a child that is never stopped.
    let count = scratch.join("count");
    std::fs::create_dir_all(&count).unwrap();
    let (crashed, out) = run_child(child_test, &count, "scenario", u64::MAX);
    assert!(crashed.is_none());
    let points: Vec<String> = out
        .iter()
        .find_map(|l| l.find("PASSED ").map(|i| l[i + "PASSED ".len()..].to_owned()))
        .expect("the child reports its crash points")
        .split('|')
        .map(str::to_owned)
        .collect();
    let total = points.len() as u64;
    assert!(total >= 30, "only {total} crash points: {points:?}");

    let mut seen = BTreeMap::<String, u32>::new();
    for at in 1..=total {
        let root = scratch.join(format!("p{at}"));
        std::fs::create_dir_all(&root).unwrap();
        let (point, _) = run_child(child_test, &root, "scenario", at);
        let point = point.unwrap_or_else(|| panic!("crash point {at} of {total} not reached"));
        *seen.entry(point.clone()).or_default() += 1;
        // Killed again while resuming, at one of its first points (when it has any).
        let (again, _) = run_child(child_test, &root, "recover", at % 4 + 1);
        let context = format!("killed at #{at} ({point}), then at {again:?}");

        let got = finish(&root, store);
        // The answer is the first one a checkpoint recorded: the scenario's, unless
        // it was killed before its resume committed.
        let r = runner(&root, store);
        let first_answer = r
            .history(RUN)
            .unwrap()
            .iter()
            .find_map(|c| r.store().checkpoint(RUN, c.seq).unwrap().unwrap().input);
        assert_eq!(got.approval, first_answer, "{context}");
        assert_eq!(State { approval: want.approval.clone(), ..got }, want, "{context}");
        let calls = counts(&root.join("calls.log"));
        // Each kill between an effect and its record makes one extra call.
        let windows = usize::from(point == "effect ran")
            + usize::from(again.as_deref() == Some("effect ran"));
        assert_eq!(calls.keys().collect::<Vec<_>>(), once.keys().collect::<Vec<_>>(), "{context}");
        let extra: usize = calls.values().map(|n| n - 1).sum();
        assert_eq!(extra, windows, "{context}: {calls:?}");
        assert_eq!(counts(&root.join("outbox.log")), once, "{context}");
        // The history is whole: numbered without gaps and ending in success.
        let history = r.history(RUN).unwrap();
        assert!(history.iter().zip(1..).all(|(c, i)| c.seq == i), "{context}");
        assert_eq!(history.last().unwrap().status, RunStatus::Succeeded, "{context}");
        drop(r);
        std::fs::remove_dir_all(&root).unwrap();
    }
    for name in [
        "run created",
        "node started",
        "effect ran",
        "effect recorded",
        "checkpoint uncommitted",
        "checkpoint committed",
    ] {
        assert!(seen.contains_key(name), "never killed at {name:?}: {seen:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(root: &Path) -> Arc<dyn CheckpointStore> {
        Arc::new(crate::SqliteStore::open(&root.join("wf")).unwrap())
    }

    #[test]
    #[ignore = "the crash test's child process; does nothing without its variables"]
    fn child() {
        super::child(sqlite);
    }

    #[test]
    fn sigkill_at_every_crash_point_then_resume_ends_as_an_uninterrupted_run() {
        let scratch = tempfile::tempdir().unwrap();
        sigkill_at_every_crash_point(sqlite, "crash_test::tests::child", scratch.path());
    }
}
