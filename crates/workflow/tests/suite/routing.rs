//! A run follows fixed and conditional edges, loops, and ends at END.

use protocol::RunStatus;
use workflow::{END, Graph, NodeContext, NodeOutcome, RunOptions};

use super::{Task, names, runner, visit};

/// CODE -> VALIDATE -> DECIDE, looping back to CODE until three rounds are done.
fn agent_like() -> Graph<Task> {
    let mut g = Graph::new();
    g.add_node("CODE", |mut s: Task, _: &mut NodeContext<'_>| {
        s.n += 1;
        s.visited.push(format!("CODE{}", s.n));
        Ok(NodeOutcome::Continue(s))
    })
    .add_node("VALIDATE", visit("VALIDATE"))
    .add_node("DECIDE", visit("DECIDE"))
    .add_node("SUCCESS", visit("SUCCESS"))
    .add_edge("CODE", "VALIDATE")
    .add_edge("VALIDATE", "DECIDE")
    .add_conditional_edges(
        "DECIDE",
        &["CODE", "SUCCESS"],
        |s: &Task| {
            if s.n < 3 { "CODE" } else { "SUCCESS" }
        },
    )
    .add_edge("SUCCESS", END)
    .set_entry("CODE");
    g
}

#[test]
fn conditional_edges_loop_until_the_router_says_done() {
    let dir = tempfile::tempdir().unwrap();
    let r = runner(agent_like(), dir.path());
    let report = r.start(Some("loop"), "test", Task::default(), RunOptions::default()).unwrap();
    assert_eq!(report.status, RunStatus::Succeeded);
    assert_eq!(
        names(&report.state.visited),
        [
            "CODE1", "VALIDATE", "DECIDE", "CODE2", "VALIDATE", "DECIDE", "CODE3", "VALIDATE",
            "DECIDE", "SUCCESS"
        ]
    );
    assert_eq!(report.steps, 10);
    // Each checkpoint names the node to run next and the state's iteration.
    let nodes: Vec<(String, u32)> =
        r.history("loop").unwrap().into_iter().map(|c| (c.node, c.iteration)).collect();
    assert_eq!(nodes[0], ("CODE".to_owned(), 0));
    assert_eq!(nodes[1], ("VALIDATE".to_owned(), 1));
    assert_eq!(nodes[4], ("VALIDATE".to_owned(), 2));
    assert_eq!(nodes.last().unwrap(), &(END.to_owned(), 3));
}

#[test]
fn a_critic_spliced_between_code_and_validate_runs_every_round() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = agent_like();
    g.insert_between("CODE", "VALIDATE", "CRITIC", visit("CRITIC"));
    let report =
        runner(g, dir.path()).start(None, "test", Task::default(), RunOptions::default()).unwrap();
    assert_eq!(report.status, RunStatus::Succeeded);
    let v = names(&report.state.visited);
    assert_eq!(v.iter().filter(|n| **n == "CRITIC").count(), 3);
    assert_eq!(&v[..4], ["CODE1", "CRITIC", "VALIDATE", "DECIDE"]);
}

#[test]
fn a_router_answering_an_undeclared_node_fails_the_run_at_its_node() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = Graph::new();
    g.add_node("A", visit("A"))
        .add_conditional_edges("A", &[END], |_: &Task| "NOWHERE")
        .set_entry("A");
    let report =
        runner(g, dir.path()).start(None, "test", Task::default(), RunOptions::default()).unwrap();
    match &report.status {
        RunStatus::Failed { code, message } => {
            assert_eq!(code, "INVALID_STATE");
            assert!(message.contains("\"NOWHERE\""), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(report.checkpoint.node, "A");
    assert!(report.state.visited.is_empty(), "the failed node's input state is kept");
}

#[test]
fn build_refuses_a_graph_with_a_dangling_edge() {
    let mut g = super::line();
    g.add_node("D", visit("D")).add_edge("D", "E");
    let err = g.build().err().unwrap();
    assert_eq!(err.code(), protocol::ErrorCode::InvalidArgument);
    let text = err.to_string();
    assert!(text.contains("edge from D to unknown node E"), "{text}");
    assert!(text.contains("node D is not reachable from the entry"), "{text}");
}
