//! The graph: named nodes, one outgoing edge per node (fixed or routed by a
//! function of the state), an entry, and the end marker. `build` checks it once,
//! so that a run never meets a dangling edge.

use std::{
    collections::{HashMap, HashSet, VecDeque},
    sync::Arc,
};

use crate::{
    error::{Error, Result},
    node::Node,
};

/// The end of every workflow: an edge to `END` finishes the run `succeeded`.
pub const END: &str = "__end__";

type Router<S> = Arc<dyn Fn(&S) -> String + Send + Sync>;

enum Edge<S> {
    To(String),
    Branch { targets: Vec<String>, router: Router<S> },
}

impl<S> Edge<S> {
    fn targets(&self) -> &[String] {
        match self {
            Edge::To(t) => std::slice::from_ref(t),
            Edge::Branch { targets, .. } => targets,
        }
    }
}

impl<S> Clone for Edge<S> {
    fn clone(&self) -> Self {
        match self {
            Edge::To(t) => Edge::To(t.clone()),
            Edge::Branch { targets, router } => {
                Edge::Branch { targets: targets.clone(), router: router.clone() }
            }
        }
    }
}

/// A workflow graph being built. Mistakes (a duplicate node, a second edge from a
/// node, an edge to nowhere) are collected and reported together by
/// [`build`](Graph::build).
pub struct Graph<S> {
    nodes: Vec<(String, Arc<dyn Node<S>>)>,
    edges: Vec<(String, Edge<S>)>,
    entry: Option<String>,
    divert_targets: Vec<String>,
    problems: Vec<String>,
}

impl<S: 'static> Default for Graph<S> {
    fn default() -> Self {
        Graph::new()
    }
}

impl<S: 'static> Graph<S> {
    pub fn new() -> Graph<S> {
        Graph {
            nodes: Vec::new(),
            edges: Vec::new(),
            entry: None,
            divert_targets: Vec::new(),
            problems: Vec::new(),
        }
    }

    pub fn add_node(&mut self, name: &str, node: impl Node<S> + 'static) -> &mut Self {
        if name.is_empty() || name == END {
            self.problems.push(format!("{name:?} cannot name a node"));
        } else if self.nodes.iter().any(|(n, _)| n == name) {
            self.problems.push(format!("node {name} is added twice"));
        } else {
            self.nodes.push((name.to_owned(), Arc::new(node)));
        }
        self
    }

    /// After `from` runs, go to `to` (a node or [`END`]).
    pub fn add_edge(&mut self, from: &str, to: &str) -> &mut Self {
        self.push_edge(from, Edge::To(to.to_owned()))
    }

    /// After `from` runs, go where `router` says, one of `targets` (nodes or
    /// [`END`]). A router that answers something else fails the run at `from`
    /// (`INVALID_STATE`).
    pub fn add_conditional_edges<R: AsRef<str>>(
        &mut self,
        from: &str,
        targets: &[&str],
        router: impl Fn(&S) -> R + Send + Sync + 'static,
    ) -> &mut Self {
        let router: Router<S> = Arc::new(move |s| router(s).as_ref().to_owned());
        let targets = targets.iter().map(|t| (*t).to_owned()).collect();
        self.push_edge(from, Edge::Branch { targets, router })
    }

    fn push_edge(&mut self, from: &str, edge: Edge<S>) -> &mut Self {
        if self.edges.iter().any(|(f, _)| f == from) {
            self.problems.push(format!("node {from} has a second outgoing edge"));
        } else {
            self.edges.push((from.to_owned(), edge));
        }
        self
    }

    pub fn set_entry(&mut self, name: &str) -> &mut Self {
        self.entry = Some(name.to_owned());
        self
    }

    /// Declares a node that policies may send the run to
    /// ([`PolicyDecision::Divert`](crate::PolicyDecision::Divert)), e.g. WAIT_HUMAN.
    /// It counts as reachable; a divert to an undeclared node fails the run.
    pub fn add_divert_target(&mut self, name: &str) -> &mut Self {
        self.divert_targets.push(name.to_owned());
        self
    }

    /// Splices `name` into the existing edge `from -> to`: `from` now leads to
    /// `name` (where its router answered `to`, it now answers `name`), and `name`
    /// leads to `to`. A critic or guardrail between CODE and VALIDATE is one call,
    /// without rewriting the graph. The edge must have been added before.
    pub fn insert_between(
        &mut self,
        from: &str,
        to: &str,
        name: &str,
        node: impl Node<S> + 'static,
    ) -> &mut Self {
        let Some((_, edge)) =
            self.edges.iter_mut().find(|(f, e)| f == from && e.targets().iter().any(|t| t == to))
        else {
            self.problems.push(format!("insert_between: no edge from {from} to {to}"));
            return self;
        };
        *edge = match edge.clone() {
            Edge::To(_) => Edge::To(name.to_owned()),
            Edge::Branch { targets, router } => {
                let targets = targets
                    .into_iter()
                    .map(|t| if t == to { name.to_owned() } else { t })
                    .collect();
                let (to, name) = (to.to_owned(), name.to_owned());
                let router: Router<S> = Arc::new(move |s| {
                    let next = router(s);
                    if next == to { name.clone() } else { next }
                });
                Edge::Branch { targets, router }
            }
        };
        self.add_node(name, node).add_edge(name, to)
    }

    /// Checks the graph: an entry that is a node; every edge from a node to a node
    /// or [`END`]; one edge out of every node; every node reachable from the entry
    /// or a divert target; [`END`] reachable from every node. Returns every problem at once.
    pub fn build(self) -> Result<CompiledGraph<S>> {
        let mut problems = self.problems;
        let is_node = |n: &str| self.nodes.iter().any(|(name, _)| name == n);
        match &self.entry {
            None => problems.push("no entry node (set_entry)".to_owned()),
            Some(e) if !is_node(e) => problems.push(format!("entry {e} is not a node")),
            Some(_) => {}
        }
        for t in &self.divert_targets {
            if !is_node(t) {
                problems.push(format!("divert target {t} is not a node"));
            }
        }
        for (from, edge) in &self.edges {
            if !is_node(from) {
                problems.push(format!("edge from unknown node {from}"));
            }
            if edge.targets().is_empty() {
                problems.push(format!("conditional edges of {from} have no targets"));
            }
            for t in edge.targets() {
                if t != END && !is_node(t) {
                    problems.push(format!("edge from {from} to unknown node {t}"));
                }
            }
        }
        let edges: HashMap<String, Edge<S>> = self.edges.into_iter().collect();
        for (name, _) in &self.nodes {
            if !edges.contains_key(name) {
                problems
                    .push(format!("node {name} has no outgoing edge (add one, to END if it ends)"));
            }
        }
        // Reachability, once there is an entry to start from. Whether a node can
        // reach END is only known once every edge leads somewhere.
        let edges_ok = problems.is_empty();
        if let Some(entry) = self.entry.clone().filter(|e| is_node(e)) {
            let roots = std::iter::once(&entry).chain(&self.divert_targets);
            let reached = reach(roots, |n| edges.get(n).map(Edge::targets).unwrap_or_default());
            let mut into: HashMap<&str, Vec<String>> = HashMap::new();
            for (from, edge) in &edges {
                for t in edge.targets() {
                    into.entry(t.as_str()).or_default().push(from.clone());
                }
            }
            let end = END.to_owned();
            let ending = reach([&end], |n| into.get(n).map(Vec::as_slice).unwrap_or_default());
            for (name, _) in &self.nodes {
                if !reached.contains(name.as_str()) {
                    problems.push(format!("node {name} is not reachable from the entry"));
                } else if edges_ok && !ending.contains(name.as_str()) {
                    problems.push(format!("node {name} can never reach END"));
                }
            }
        }
        if !problems.is_empty() {
            return Err(Error::InvalidGraph { problems });
        }
        Ok(CompiledGraph {
            order: self.nodes.iter().map(|(n, _)| n.clone()).collect(),
            nodes: self.nodes.into_iter().collect(),
            edges,
            entry: self.entry.unwrap_or_default(),
            divert_targets: self.divert_targets,
        })
    }
}

/// Names reachable from `roots` (themselves included) following `next`.
fn reach<'a>(
    roots: impl IntoIterator<Item = &'a String>,
    next: impl Fn(&str) -> &'a [String],
) -> HashSet<&'a str> {
    let mut seen: HashSet<&str> = roots.into_iter().map(String::as_str).collect();
    let mut queue: VecDeque<&str> = seen.iter().copied().collect();
    while let Some(n) = queue.pop_front() {
        for t in next(n) {
            if seen.insert(t.as_str()) {
                queue.push_back(t.as_str());
            }
        }
    }
    seen
}

/// A checked graph, shared by runners (`Arc`).
pub struct CompiledGraph<S> {
    nodes: HashMap<String, Arc<dyn Node<S>>>,
    edges: HashMap<String, Edge<S>>,
    entry: String,
    order: Vec<String>,
    divert_targets: Vec<String>,
}

impl<S> CompiledGraph<S> {
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// Node names in the order they were added.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(String::as_str)
    }

    /// Where `from` may lead (its edge's declared targets).
    pub fn targets(&self, from: &str) -> &[String] {
        self.edges.get(from).map(Edge::targets).unwrap_or_default()
    }

    /// Whether policies may divert the run to `name`.
    pub fn is_divert_target(&self, name: &str) -> bool {
        self.divert_targets.iter().any(|t| t == name)
    }

    pub(crate) fn node(&self, name: &str) -> Option<&dyn Node<S>> {
        self.nodes.get(name).map(|n| &**n)
    }

    /// The node after `from` for this state, or why there is none.
    pub(crate) fn next(&self, from: &str, state: &S) -> Result<String, String> {
        match self.edges.get(from) {
            None => Err(format!("{from} has no outgoing edge")),
            Some(Edge::To(t)) => Ok(t.clone()),
            Some(Edge::Branch { targets, router }) => {
                let next = router(state);
                if targets.contains(&next) {
                    Ok(next)
                } else {
                    Err(format!("the router of {from} answered {next:?}, not one of {targets:?}"))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::{NodeContext, NodeError, NodeOutcome};

    fn pass(s: u32, _: &mut NodeContext<'_>) -> Result<NodeOutcome<u32>, NodeError> {
        Ok(NodeOutcome::Continue(s))
    }

    /// Builds a graph from a tiny text: `entry X`, `node X`, `divert X`, `X -> Y`,
    /// `X ?> Y|Z` (conditional, the router always answers the first target).
    fn graph(spec: &str) -> Graph<u32> {
        let mut g = Graph::new();
        for line in spec.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if let Some(n) = line.strip_prefix("entry ") {
                g.set_entry(n);
            } else if let Some(n) = line.strip_prefix("divert ") {
                g.add_divert_target(n);
            } else if let Some(n) = line.strip_prefix("node ") {
                g.add_node(n, pass);
            } else if let Some((a, b)) = line.split_once(" -> ") {
                g.add_edge(a, b);
            } else if let Some((a, b)) = line.split_once(" ?>") {
                let b = b.trim();
                let targets: Vec<&str> = if b.is_empty() { vec![] } else { b.split('|').collect() };
                let first = targets.first().map(|t| (*t).to_owned()).unwrap_or_default();
                g.add_conditional_edges(a, &targets, move |_| first.clone());
            } else {
                panic!("bad spec line {line}");
            }
        }
        g
    }

    fn problems(spec: &str) -> Vec<String> {
        match graph(spec).build() {
            Ok(_) => vec![],
            Err(Error::InvalidGraph { problems }) => problems,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn build_reports_every_problem() {
        let cases: &[(&str, &[&str])] = &[
            ("entry A\nnode A\nA -> __end__", &[]),
            ("node A\nA -> __end__", &["no entry node (set_entry)"]),
            ("entry B\nnode A\nA -> __end__", &["entry B is not a node"]),
            ("entry A\nnode A\nA -> B", &["edge from A to unknown node B"]),
            ("entry A\nnode A\nA -> __end__\nC -> A", &["edge from unknown node C"]),
            ("entry A\nnode A\nnode A\nA -> __end__", &["node A is added twice"]),
            ("entry A\nnode A\nnode __end__\nA -> __end__", &["\"__end__\" cannot name a node"]),
            ("entry A\nnode A\nA -> __end__\nA -> A", &["node A has a second outgoing edge"]),
            (
                "entry A\nnode A\nnode B\nA -> __end__",
                &[
                    "node B has no outgoing edge (add one, to END if it ends)",
                    "node B is not reachable from the entry",
                ],
            ),
            (
                "entry A\nnode A\nnode B\nA -> __end__\nB -> __end__",
                &["node B is not reachable from the entry"],
            ),
            (
                "entry A\nnode A\nnode B\nA -> B\nB -> A",
                &["node A can never reach END", "node B can never reach END"],
            ),
            ("entry A\nnode A\nA ?> ", &["conditional edges of A have no targets"]),
            ("entry A\nnode A\nA ?> A|X", &["edge from A to unknown node X"]),
            ("entry A\nnode A\nA -> __end__\ndivert H", &["divert target H is not a node"]),
            // A node only policies lead to is reachable when declared.
            ("entry A\nnode A\nnode H\nA -> __end__\nH -> A\ndivert H", &[]),
            // A loop with an exit is fine.
            ("entry A\nnode A\nnode B\nA -> B\nB ?> A|__end__", &[]),
        ];
        for (spec, want) in cases {
            let mut got = problems(spec);
            got.sort();
            assert_eq!(got, *want, "{spec}");
        }
    }

    #[test]
    fn conditional_edges_route_by_state() {
        let mut g = Graph::new();
        g.add_node("A", pass)
            .add_node("small", pass)
            .add_node("big", pass)
            .add_conditional_edges(
                "A",
                &["small", "big"],
                |s: &u32| if *s < 10 { "small" } else { "big" },
            )
            .add_edge("small", END)
            .add_edge("big", END)
            .set_entry("A");
        let g = g.build().unwrap();
        assert_eq!(g.next("A", &3).unwrap(), "small");
        assert_eq!(g.next("A", &30).unwrap(), "big");
        assert_eq!(g.next("big", &30).unwrap(), END);
    }

    #[test]
    fn a_router_answering_an_undeclared_target_is_an_error() {
        let mut g = Graph::new();
        g.add_node("A", pass)
            .add_conditional_edges("A", &[END], |s: &u32| format!("N{s}"))
            .set_entry("A");
        let g = g.build().unwrap();
        let err = g.next("A", &1).unwrap_err();
        assert!(err.contains("answered \"N1\""), "{err}");
    }

    #[test]
    fn insert_between_splices_fixed_and_routed_edges() {
        let mut g = Graph::new();
        g.add_node("CODE", pass)
            .add_node("VALIDATE", pass)
            .add_node("DECIDE", pass)
            .add_edge("CODE", "VALIDATE")
            .add_edge("VALIDATE", "DECIDE")
            .add_conditional_edges(
                "DECIDE",
                &["CODE", END],
                |s: &u32| if *s < 3 { "CODE" } else { END },
            )
            .set_entry("CODE")
            .insert_between("CODE", "VALIDATE", "CRITIC", pass)
            .insert_between("DECIDE", "CODE", "GUARD", pass);
        let g = g.build().unwrap();
        assert_eq!(g.next("CODE", &0).unwrap(), "CRITIC");
        assert_eq!(g.next("CRITIC", &0).unwrap(), "VALIDATE");
        assert_eq!(g.next("DECIDE", &0).unwrap(), "GUARD");
        assert_eq!(g.next("DECIDE", &5).unwrap(), END);
        assert_eq!(g.next("GUARD", &0).unwrap(), "CODE");
        assert_eq!(g.targets("DECIDE"), ["GUARD", END]);

        let mut g = graph("entry A\nnode A\nA -> __end__");
        g.insert_between("A", "B", "X", pass);
        assert_eq!(
            match g.build() {
                Err(Error::InvalidGraph { problems }) => problems,
                _ => vec![],
            },
            ["insert_between: no edge from A to B"]
        );
    }
}
