//! Policies decide before each node: proceed, pause there, or divert elsewhere.
//! One table: each case is the policies, and the run they must produce.

use protocol::{RunEventKind, RunStatus};
use serde_json::json;
use workflow::{END, Graph, PolicyDecision, RunInfo, RunOptions, Runner};

use super::{Task, ask, names, shared, store};

type P = Box<dyn Fn(&str, &Task, &RunInfo<'_>) -> PolicyDecision<Task> + Send + Sync>;

/// `A -> B -> C -> END`, plus WAIT_HUMAN (asks, then goes on to C), which only
/// policies lead to.
fn graph() -> Graph<Task> {
    let mut g = super::line();
    g.add_node("WAIT_HUMAN", ask("WAIT_HUMAN")).add_edge("WAIT_HUMAN", "C");
    g.add_divert_target("WAIT_HUMAN").add_divert_target("C");
    g
}

fn at(node: &'static str, d: impl Fn(&Task) -> PolicyDecision<Task> + Send + Sync + 'static) -> P {
    Box::new(
        move |n: &str, s: &Task, _: &RunInfo<'_>| {
            if n == node { d(s) } else { PolicyDecision::Proceed }
        },
    )
}

fn divert(to: &str, reason: &str) -> impl Fn(&Task) -> PolicyDecision<Task> + Send + Sync + use<> {
    let (to, reason) = (to.to_owned(), reason.to_owned());
    move |s: &Task| PolicyDecision::Divert {
        to: to.clone(),
        state: s.clone(),
        reason: reason.clone(),
    }
}

fn pause(reason: &'static str) -> impl Fn(&Task) -> PolicyDecision<Task> + Send + Sync {
    move |_: &Task| PolicyDecision::Pause { reason: reason.to_owned() }
}

#[test]
fn policies_as_a_table() {
    struct Case {
        name: &'static str,
        policies: Vec<P>,
        status: &'static str,
        node: &'static str,
        visited: &'static [&'static str],
        event: Option<RunEventKind>,
    }
    let cases = vec![
        Case {
            name: "no policy",
            policies: vec![],
            status: "succeeded",
            node: END,
            visited: &["A", "B", "C"],
            event: None,
        },
        Case {
            name: "pause before B waits at B",
            policies: vec![at("B", pause("budget spent"))],
            status: "waiting",
            node: "B",
            visited: &["A"],
            event: Some(RunEventKind::Paused { node: "B".into(), reason: "budget spent".into() }),
        },
        Case {
            name: "divert B to C with a changed state skips B",
            policies: vec![at("B", |s: &Task| PolicyDecision::Divert {
                to: "C".into(),
                state: Task { n: 99, ..s.clone() },
                reason: "skip".into(),
            })],
            status: "succeeded",
            node: END,
            visited: &["A", "C"],
            event: Some(RunEventKind::Diverted {
                from: "B".into(),
                to: "C".into(),
                reason: "skip".into(),
            }),
        },
        Case {
            name: "divert to WAIT_HUMAN waits there (the policy keeps answering WAIT_HUMAN: proceed)",
            policies: vec![Box::new(|n: &str, s: &Task, _: &RunInfo<'_>| {
                if n == "A" {
                    PolicyDecision::Proceed
                } else {
                    divert("WAIT_HUMAN", "loop detected")(s)
                }
            })],
            status: "waiting",
            node: "WAIT_HUMAN",
            visited: &["A"],
            event: Some(RunEventKind::Diverted {
                from: "B".into(),
                to: "WAIT_HUMAN".into(),
                reason: "loop detected".into(),
            }),
        },
        Case {
            name: "the first policy that does not proceed wins",
            policies: vec![
                at("A", |_: &Task| PolicyDecision::Proceed),
                at("C", pause("second")),
                at("C", pause("third")),
            ],
            status: "waiting",
            node: "C",
            visited: &["A", "B"],
            event: Some(RunEventKind::Paused { node: "C".into(), reason: "second".into() }),
        },
        Case {
            name: "a divert to an undeclared node fails the run",
            policies: vec![at("B", divert("A", "back"))],
            status: "failed",
            node: "B",
            visited: &["A"],
            event: None,
        },
        Case {
            name: "policies diverting in a circle fail the run instead of looping",
            policies: vec![at("C", divert("WAIT_HUMAN", "x")), at("WAIT_HUMAN", divert("C", "y"))],
            status: "failed",
            node: "C",
            visited: &["A", "B"],
            event: None,
        },
    ];
    for case in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut r = Runner::new(shared(graph()), store(dir.path()));
        for p in case.policies {
            r = r.with_policy(p);
        }
        let report = r.start(Some("p"), "test", Task::default(), RunOptions::default()).unwrap();
        let ctx = format!("{}: {:?}", case.name, report.status);
        assert_eq!(report.status.name(), case.status, "{ctx}");
        assert_eq!(report.checkpoint.node, case.node, "{ctx}");
        assert_eq!(names(&report.state.visited), case.visited, "{ctx}");
        if let Some(want) = case.event {
            let kinds: Vec<_> = r.events("p", 0).unwrap().into_iter().map(|e| e.kind).collect();
            assert!(kinds.contains(&want), "{ctx}: no {want:?} in {kinds:?}");
        }
        if case.name.starts_with("divert B to C") {
            assert_eq!(report.state.n, 99, "{ctx}: the policy's state is used");
        }
    }
}

#[test]
fn a_run_diverted_to_a_human_finishes_after_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    // Divert once: when the state has no answer yet.
    let policy = |n: &str, s: &Task, _: &RunInfo<'_>| match (n, &s.answer) {
        ("B", None) => PolicyDecision::Divert {
            to: "WAIT_HUMAN".into(),
            state: s.clone(),
            reason: "needs review".into(),
        },
        _ => PolicyDecision::Proceed,
    };
    let r = Runner::new(shared(graph()), store(dir.path())).with_policy(policy);
    let first = r.start(Some("h"), "test", Task::default(), RunOptions::default()).unwrap();
    assert_eq!(first.status.name(), "waiting");
    let done = r.resume("h", Some(json!("go on"))).unwrap();
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(names(&done.state.visited), ["A", "WAIT_HUMAN", "C"]);
}

#[test]
fn policies_see_the_steps_of_this_execution() {
    let dir = tempfile::tempdir().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let r = Runner::new(shared(super::line()), store(dir.path())).with_policy(
        move |n: &str, _: &Task, run: &RunInfo<'_>| {
            log.lock().unwrap().push((n.to_owned(), run.steps, run.kind.to_owned()));
            PolicyDecision::Proceed
        },
    );
    r.start(None, "kind-x", Task::default(), RunOptions::default()).unwrap();
    let seen = seen.lock().unwrap().clone();
    let want: Vec<(String, u32, String)> = [("A", 0), ("B", 1), ("C", 2)]
        .iter()
        .map(|(n, s)| (n.to_string(), *s, "kind-x".into()))
        .collect();
    assert_eq!(seen, want);
}
