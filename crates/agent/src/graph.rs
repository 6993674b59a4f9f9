//! The coding graph as configuration: the seed's graph (seed 000 §3.1.3) plus the
//! nodes a project adds, each run by an agent of its choosing — a reviewer
//! between CODE and VALIDATE, a security checker after VALIDATE, a plan critic
//! after PLAN.
//!
//! A custom node is placed after one of the seed's working nodes (between it and
//! its successor) and names the nodes its agent may send the run to (seed 001's
//! `NextNode`): the successor (the default, "go on") and, to send work back, the
//! node before (CODE for a change, PLAN for a plan). Its agent answers with a
//! verdict; a run sent back carries the agent's words to the coder (or planner)
//! and counts as a round, so a reviewer that never agrees escalates to a human
//! like a validation that never passes. Several nodes at one place run one after
//! another, or all at once with `parallelAgentExecution` (read-only agents only:
//! their answers are combined, the first that sends work back wins).
//!
//! Everything is checked when the orchestrator opens, with a message naming the
//! node and what is wrong: an unknown agent, a place that is not a working node,
//! a next node the graph does not have, a name taken.

use std::sync::Arc;

use serde::Deserialize;
use workflow::{END, Graph, NodeContext};

use protocol::nodes;

use crate::{
    AgentSet,
    error::{Error, Result},
    nodes as n,
    orchestrator::{RunState, Shared},
};

/// Custom nodes and how they run (`agent.workflow` and
/// `agent.parallelAgentExecution` in the configuration).
#[derive(Debug, Clone, Default)]
pub struct GraphSpec {
    pub nodes: Vec<CustomNode>,
    /// Nodes placed at the same point run their agents at the same time.
    pub parallel: bool,
    /// The rules CRITIC checks every round's change against (`guardrails:`);
    /// `None`: none.
    pub guardrails: Option<guard::RuleSet>,
}

/// One node a project adds to the coding graph.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CustomNode {
    /// The node's name in the run (`REVIEW`); upper case by convention.
    pub node: String,
    /// The agent that runs it.
    pub agent: String,
    /// The working node it follows: `PLAN`, `CODE` or `VALIDATE`.
    pub after: String,
    /// Where the agent may send the run. Default: on (the successor), or back
    /// (`PLAN` after PLAN, `CODE` otherwise).
    #[serde(default)]
    pub next: Vec<String>,
}

/// The seed's working nodes a custom node may follow, with the node after each.
const PLACES: &[(&str, &str)] = &[
    (nodes::PLAN, nodes::WAIT_PLAN_APPROVAL),
    // After CODE means after its critique: nodes placed there see a change the
    // guardrails let through.
    (nodes::CODE, nodes::VALIDATE),
    (nodes::VALIDATE, nodes::DECIDE),
];

/// The seed's node names (a custom node may not take one).
const SEED: &[&str] = &[
    nodes::INIT,
    nodes::PLAN,
    nodes::ANSWER,
    nodes::WAIT_PLAN_APPROVAL,
    nodes::BASELINE,
    nodes::CODE,
    nodes::CRITIC,
    nodes::VALIDATE,
    nodes::DECIDE,
    nodes::SUCCESS,
    nodes::WAIT_REVIEW,
    nodes::ESCALATE,
    nodes::WAIT_HUMAN,
];

/// A group of custom nodes at one place, in the graph as one node when they run
/// in parallel.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    /// The graph node's name (the first node's, for a parallel group).
    pub(crate) name: String,
    pub(crate) members: Vec<CustomNode>,
    /// The node after this one when its agents agree.
    pub(crate) on: String,
    /// Where the agents may send the run (the union of the members').
    pub(crate) allowed: Vec<String>,
    /// Where work is sent back to (CODE, or PLAN after PLAN).
    pub(crate) back: String,
}

impl GraphSpec {
    /// Checks the spec against the agents and places the nodes: each place's
    /// nodes in the order given, chained one after another (or grouped when
    /// parallel); the first's predecessor is the place.
    pub(crate) fn place(&self, agents: &AgentSet) -> Result<Vec<Placed>> {
        let bad = |node: &CustomNode, why: String| {
            Error::InvalidRequest(format!("agent.workflow node `{}`: {why}", node.node))
        };
        let mut seen: Vec<&str> = Vec::new();
        for node in &self.nodes {
            if node.node.is_empty()
                || !node.node.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                return Err(bad(node, "a node's name is letters, digits and `_`".into()));
            }
            if SEED.contains(&node.node.as_str()) || seen.contains(&node.node.as_str()) {
                return Err(bad(node, "the name is taken".into()));
            }
            seen.push(&node.node);
            if agents.get(&node.agent).is_none() {
                let known: Vec<&str> = agents.names().collect();
                return Err(bad(
                    node,
                    format!("no agent `{}` (known: {})", node.agent, known.join(", ")),
                ));
            }
            if !PLACES.iter().any(|(p, _)| *p == node.after) {
                return Err(bad(
                    node,
                    format!("`after: {}` must be PLAN, CODE or VALIDATE", node.after),
                ));
            }
        }
        let mut placed = Vec::new();
        for (place, successor) in PLACES {
            let here: Vec<&CustomNode> = self.nodes.iter().filter(|c| c.after == *place).collect();
            if here.is_empty() {
                continue;
            }
            let back = if *place == nodes::PLAN { nodes::PLAN } else { nodes::CODE };
            let groups: Vec<Vec<&CustomNode>> = if self.parallel {
                vec![here]
            } else {
                here.into_iter().map(|c| vec![c]).collect()
            };
            let names: Vec<String> = groups.iter().map(|g| g[0].node.clone()).collect();
            for (i, group) in groups.iter().enumerate() {
                let on = names.get(i + 1).cloned().unwrap_or_else(|| (*successor).to_owned());
                let mut allowed = vec![on.clone(), back.to_owned()];
                for member in group {
                    for next in &member.next {
                        // The names a node may be sent to: the seed's, and the
                        // custom nodes' (a later reviewer).
                        let known = SEED.contains(&next.as_str())
                            || self.nodes.iter().any(|c| &c.node == next);
                        if !known || next == &member.node {
                            return Err(bad(
                                member,
                                format!("next node `{next}` is not a node it can go to"),
                            ));
                        }
                        if !allowed.contains(next) {
                            allowed.push(next.clone());
                        }
                    }
                }
                if self.parallel
                    && group.len() > 1
                    && let Some(editor) = group.iter().find(|m| writes(agents, &m.agent))
                {
                    return Err(bad(
                        editor,
                        format!(
                            "agent `{}` edits files, and agents that run in parallel may only \
                             read (set parallelAgentExecution: false, or drop its change/write \
                             tools)",
                            editor.agent
                        ),
                    ));
                }
                placed.push(Placed {
                    name: group[0].node.clone(),
                    members: group.iter().map(|c| (*c).clone()).collect(),
                    on,
                    allowed,
                    back: back.to_owned(),
                });
            }
        }
        Ok(placed)
    }
}

/// Whether an agent can edit files: it has a tool that writes.
fn writes(agents: &AgentSet, name: &str) -> bool {
    agents.get(name).is_some_and(|a| {
        a.required_tools
            .iter()
            .any(|t| ["change", "write", "edit_code", "exec"].contains(&t.as_str()))
    })
}

/// The coding graph: the seed's, with `placed` nodes spliced in.
pub(crate) fn build(shared: &Arc<Shared>, placed: &[Placed]) -> Graph<RunState> {
    let mut g = Graph::new();
    let node = |f: n::NodeFn| {
        let shared = Arc::clone(shared);
        move |s: RunState, cx: &mut NodeContext<'_>| n::run(f, &shared, s, cx)
    };
    // The node after each working node: the first custom node there, or the seed's.
    let after = |place: &str, seed: &str| {
        placed
            .iter()
            .find(|p| p.members.iter().any(|m| m.after == place))
            .map_or_else(|| seed.to_owned(), |p| p.name.clone())
    };
    g.add_node(nodes::INIT, node(n::init))
        .add_node(nodes::PLAN, node(n::plan))
        .add_node(nodes::ANSWER, node(n::answer_question))
        .add_node(nodes::WAIT_PLAN_APPROVAL, node(n::wait_plan_approval))
        .add_node(nodes::BASELINE, node(crate::validate::baseline))
        .add_node(nodes::CODE, node(n::code))
        .add_node(nodes::CRITIC, node(crate::critic::critic))
        .add_node(nodes::VALIDATE, node(crate::validate::validate))
        .add_node(nodes::DECIDE, node(n::decide))
        .add_node(nodes::WAIT_REVIEW, node(n::wait_review))
        .add_node(nodes::SUCCESS, node(n::success))
        .add_node(nodes::ESCALATE, node(n::escalate))
        .add_node(nodes::WAIT_HUMAN, node(n::wait_human))
        .set_entry(nodes::INIT)
        .add_divert_target(nodes::WAIT_HUMAN)
        .add_conditional_edges(nodes::INIT, &[nodes::PLAN, nodes::ANSWER], |s: &RunState| {
            n::after_init(&s.0)
        })
        .add_conditional_edges(nodes::ANSWER, &[END, nodes::WAIT_HUMAN], |s: &RunState| {
            n::after_answer(&s.0).to_owned()
        })
        .add_edge(nodes::PLAN, &after(nodes::PLAN, nodes::WAIT_PLAN_APPROVAL))
        .add_conditional_edges(
            nodes::WAIT_PLAN_APPROVAL,
            &[nodes::BASELINE, nodes::CODE, nodes::PLAN],
            |s: &RunState| n::after_plan_gate(&s.0),
        )
        .add_edge(nodes::BASELINE, nodes::CODE)
        .add_conditional_edges(
            nodes::CODE,
            &[nodes::CRITIC, nodes::CODE, nodes::PLAN],
            |s: &RunState| n::after_code(&s.0),
        )
        .add_conditional_edges(
            nodes::CRITIC,
            &[&after(nodes::CODE, nodes::VALIDATE), nodes::CODE, nodes::ESCALATE],
            {
                let on = after(nodes::CODE, nodes::VALIDATE);
                move |s: &RunState| crate::critic::after_critic(&s.0, &on)
            },
        )
        .add_edge(nodes::VALIDATE, &after(nodes::VALIDATE, nodes::DECIDE))
        .add_conditional_edges(
            nodes::DECIDE,
            &[nodes::SUCCESS, nodes::WAIT_REVIEW, nodes::CODE, nodes::ESCALATE],
            |s: &RunState| n::after_decide(&s.0),
        )
        .add_conditional_edges(
            nodes::WAIT_REVIEW,
            &[nodes::SUCCESS, nodes::CODE],
            |s: &RunState| n::after_review(&s.0),
        )
        .add_conditional_edges(
            nodes::SUCCESS,
            &[END, nodes::VALIDATE, nodes::CODE],
            |s: &RunState| n::after_success(&s.0),
        )
        .add_edge(nodes::ESCALATE, nodes::WAIT_HUMAN)
        .add_conditional_edges(
            nodes::WAIT_HUMAN,
            &[nodes::PLAN, nodes::CODE, nodes::ANSWER],
            |s: &RunState| n::after_human(&s.0),
        );
    for p in placed {
        let (shared, spec) = (Arc::clone(shared), p.clone());
        g.add_node(&p.name, move |s: RunState, cx: &mut NodeContext<'_>| {
            crate::review::run(&shared, &spec, s, cx)
        });
        let mut targets: Vec<&str> = p.allowed.iter().map(String::as_str).collect();
        if !targets.contains(&nodes::ESCALATE) {
            targets.push(nodes::ESCALATE);
        }
        let on = p.on.clone();
        g.add_conditional_edges(&p.name, &targets, move |s: &RunState| {
            s.0.next_node.clone().unwrap_or_else(|| on.clone())
        });
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AgentDirs;

    fn agents() -> AgentSet {
        let dir = tempfile::tempdir().unwrap();
        for (name, tools) in [("reviewer", "[read, navigate]"), ("fixer", "[read, change]")] {
            let d = dir.path().join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("agent.yaml"),
                format!("name: {name}\ndescription: d\nrequiredTools: {tools}\n"),
            )
            .unwrap();
            std::fs::write(d.join("prompt.md"), "# R\n").unwrap();
        }
        let set = AgentSet::load(&AgentDirs { user: None, project: vec![dir.path().to_owned()] })
            .unwrap();
        std::mem::forget(dir);
        set
    }

    fn node(name: &str, agent: &str, after: &str, next: &[&str]) -> CustomNode {
        CustomNode {
            node: name.into(),
            agent: agent.into(),
            after: after.into(),
            next: next.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn nodes_are_placed_after_their_working_node_and_checked() {
        let a = agents();
        let spec = GraphSpec {
            nodes: vec![
                node("REVIEW", "reviewer", "CODE", &[]),
                node("SECURITY", "reviewer", "CODE", &["ESCALATE"]),
                node("PLAN_CRITIC", "reviewer", "PLAN", &[]),
            ],
            ..GraphSpec::default()
        };
        let placed = spec.place(&a).unwrap();
        let got: Vec<(String, String, Vec<String>)> =
            placed.iter().map(|p| (p.name.clone(), p.on.clone(), p.allowed.clone())).collect();
        let s = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            vec![
                (
                    "PLAN_CRITIC".into(),
                    "WAIT_PLAN_APPROVAL".into(),
                    s(&["WAIT_PLAN_APPROVAL", "PLAN"])
                ),
                ("REVIEW".into(), "SECURITY".into(), s(&["SECURITY", "CODE"])),
                ("SECURITY".into(), "VALIDATE".into(), s(&["VALIDATE", "CODE", "ESCALATE"])),
            ]
        );
        let parallel = GraphSpec { parallel: true, ..spec.clone() };
        let placed = parallel.place(&a).unwrap();
        assert_eq!(placed[1].members.len(), 2, "one node runs both reviewers");

        // (spec, error)
        let cases = [
            (node("REVIEW", "nobody", "CODE", &[]), "no agent `nobody`"),
            (node("CODE", "reviewer", "CODE", &[]), "the name is taken"),
            (node("CRITIC", "reviewer", "CODE", &[]), "the name is taken"),
            (node("REVIEW", "reviewer", "SUCCESS", &[]), "must be PLAN, CODE or VALIDATE"),
            (node("REVIEW", "reviewer", "CODE", &["NOWHERE"]), "next node `NOWHERE`"),
            (node("re view", "reviewer", "CODE", &[]), "letters, digits"),
        ];
        for (n, want) in cases {
            let err = GraphSpec { nodes: vec![n], ..GraphSpec::default() }.place(&a).unwrap_err();
            assert!(err.to_string().contains(want), "{err}");
        }
        let editors = GraphSpec {
            nodes: vec![node("A", "reviewer", "CODE", &[]), node("B", "fixer", "CODE", &[])],
            parallel: true,
            ..GraphSpec::default()
        };
        let err = editors.place(&a).unwrap_err();
        assert!(err.to_string().contains("may only read"), "{err}");
    }
}
