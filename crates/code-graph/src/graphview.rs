//! Graph queries around a target, as a small graph: file dependencies and
//! dependents, a file's or a definition's calls, call trees up (callers) and down
//! (callees). One shape for all of them ([`GraphView`]): nodes with their distance
//! and the node they were reached from (a breadth-first tree, for display), and
//! every edge found between them with its kind, resolution and weight. Rendered as
//! an indented tree ([`GraphView::render_tree`]) or a Mermaid flowchart
//! ([`GraphView::to_mermaid`]).

use std::collections::{HashMap, HashSet, VecDeque};

use code_index::{DefId, FileId, Project, RefKind};

use crate::{
    depgraph::{DepGraph, edge_trust},
    snapshot::Snapshot,
    target::{Target, TargetKind},
};
pub use protocol::{EdgeKind, GraphEdge, GraphNode, GraphQuery, GraphView};

/// Below this trust an edge is a guess: drawn dashed, marked `guess`, left out by
/// `include_guesses: false`, and never walked through.
const GUESS_BELOW: f64 = 0.5;

/// How far and how wide to walk.
#[derive(Debug, Clone)]
pub struct GraphOptions {
    pub depth: u32,
    /// Stop after this many nodes.
    pub max_nodes: usize,
    /// Include guessed references (one of several same-named definitions, method
    /// calls matched by name only). Included or not, the walk does not go on
    /// through one.
    pub include_guesses: bool,
}

impl Default for GraphOptions {
    fn default() -> Self {
        GraphOptions { depth: 1, max_nodes: 300, include_guesses: true }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    File(FileId),
    Def(DefId),
    Top(FileId),
}

struct Builder<'a> {
    project: &'a Project,
    ids: HashMap<Key, usize>,
    nodes: Vec<GraphNode>,
    edges: Vec<GraphEdge>,
    seen_edges: HashSet<(usize, usize, u8)>,
    max_nodes: usize,
    truncated: bool,
}

impl Builder<'_> {
    /// The node for `key`, added at `distance` from `parent` if new. None when the
    /// node limit is reached.
    fn node(&mut self, key: Key, distance: u32, parent: Option<usize>) -> Option<(usize, bool)> {
        if let Some(&id) = self.ids.get(&key) {
            return Some((id, false));
        }
        if self.nodes.len() >= self.max_nodes {
            self.truncated = true;
            return None;
        }
        let p = self.project;
        let (path, symbol, kind, line) = match key {
            Key::File(f) => (p.file(f).path.clone(), None, None, None),
            Key::Top(f) => (p.file(f).path.clone(), None, None, None),
            Key::Def(d) => {
                let def = p.def(d);
                (
                    p.file(d.file).path.clone(),
                    Some(def.qualified_name.clone()),
                    Some(def.kind),
                    Some(def.line),
                )
            }
        };
        let id = self.nodes.len();
        self.nodes.push(GraphNode { id, path, symbol, kind, line, distance, parent });
        self.ids.insert(key, id);
        Some((id, true))
    }

    fn edge(&mut self, e: GraphEdge) {
        let k = match e.kind {
            EdgeKind::Import => 0,
            EdgeKind::Reference => 1,
            EdgeKind::Call => 2,
            EdgeKind::Type => 3,
            EdgeKind::Use => 4,
        };
        if self.seen_edges.insert((e.from, e.to, k)) {
            self.edges.push(e);
        }
    }
}

fn ref_kind(k: RefKind) -> EdgeKind {
    match k {
        RefKind::Call | RefKind::MemberCall | RefKind::SelfCall => EdgeKind::Call,
        RefKind::Type => EdgeKind::Type,
        RefKind::Use => EdgeKind::Use,
    }
}

/// Answers `query` around `target`.
pub fn graph_view(
    snapshot: &Snapshot,
    target: &Target,
    query: GraphQuery,
    opts: &GraphOptions,
) -> GraphView {
    let project = &snapshot.project;
    let mut b = Builder {
        project,
        ids: HashMap::new(),
        nodes: Vec::new(),
        edges: Vec::new(),
        seen_edges: Default::default(),
        max_nodes: opts.max_nodes.max(1),
        truncated: false,
    };
    let mut externals = Vec::new();
    let file_level = target.kind != TargetKind::Symbol;
    let depth = if query == GraphQuery::Calls { 1 } else { opts.depth };
    match query {
        GraphQuery::Deps | GraphQuery::Dependents if file_level => {
            let reverse = query == GraphQuery::Dependents;
            let deps = DepGraph::build(snapshot);
            for &f in &target.file_ids {
                b.node(Key::File(f), 0, None);
                if !reverse {
                    for e in &snapshot.graphs.externals[f as usize] {
                        if !externals.contains(e) {
                            externals.push(e.clone());
                        }
                    }
                }
            }
            for (f, d, via) in deps.closure(&target.file_ids, reverse, depth) {
                let parent = b.ids[&Key::File(via)];
                let Some((id, _)) = b.node(Key::File(f), d, Some(parent)) else { break };
                let _ = id;
            }
            // Every edge between the nodes found.
            let files: Vec<(FileId, usize)> = b
                .ids
                .iter()
                .filter_map(|(k, &id)| match k {
                    Key::File(f) => Some((*f, id)),
                    _ => None,
                })
                .collect();
            let ids: HashMap<FileId, usize> = files.iter().copied().collect();
            let mut sorted = files.clone();
            sorted.sort_by_key(|x| x.1);
            for (f, from) in sorted {
                for &t in &deps.out[f as usize] {
                    if let Some(&to) = ids.get(&t) {
                        let import = snapshot.graphs.file_imports[f as usize].contains(&t);
                        b.edge(GraphEdge {
                            from,
                            to,
                            kind: if import { EdgeKind::Import } else { EdgeKind::Reference },
                            resolution: None,
                            confidence: 1.0,
                            line: None,
                        });
                    }
                }
            }
        }
        _ => {
            let start: Vec<Key> = if file_level {
                let mut keys = Vec::new();
                for &f in &target.file_ids {
                    keys.push(Key::Top(f));
                    for ord in 0..project.file(f).defs.len() as u32 {
                        keys.push(Key::Def(DefId { file: f, ord }));
                    }
                }
                keys
            } else {
                target.def_ids.iter().map(|&d| Key::Def(d)).collect()
            };
            let (calls_only, reverse) = match query {
                GraphQuery::Deps => (false, false),
                GraphQuery::Dependents => (false, true),
                GraphQuery::Calls | GraphQuery::Callees => (true, false),
                GraphQuery::Callers => (true, true),
            };
            symbol_walk(
                snapshot,
                &mut b,
                &start,
                depth,
                calls_only,
                reverse,
                opts.include_guesses,
                query == GraphQuery::Calls,
            );
        }
    }
    GraphView {
        query,
        target: target.resolved(),
        depth,
        nodes: b.nodes,
        edges: b.edges,
        externals,
        truncated: b.truncated,
    }
}

#[allow(clippy::too_many_arguments)]
fn symbol_walk(
    snapshot: &Snapshot,
    b: &mut Builder<'_>,
    start: &[Key],
    depth: u32,
    calls_only: bool,
    reverse: bool,
    include_guesses: bool,
    only_from_start: bool,
) {
    let project = &snapshot.project;
    // Adjacency over symbol edges, by node key.
    let mut adj: HashMap<Key, Vec<usize>> = HashMap::new();
    for (i, e) in snapshot.graphs.symbol_edges().iter().enumerate() {
        if calls_only && !e.kind.is_call() {
            continue;
        }
        if !include_guesses && edge_trust(project, e) < GUESS_BELOW {
            continue;
        }
        let from = e.from.map_or(Key::Top(e.from_file), Key::Def);
        let key = if reverse { Key::Def(e.to) } else { from };
        adj.entry(key).or_default().push(i);
    }
    // Sure edges first: they are listed first, and a node both a sure edge and a
    // guess reach is placed (and walked on from) under the sure one.
    let edges = snapshot.graphs.symbol_edges();
    for list in adj.values_mut() {
        list.sort_by_key(|&i| edge_trust(project, &edges[i]) < GUESS_BELOW);
    }
    let mut queue: VecDeque<(Key, u32)> = VecDeque::new();
    let mut expanded: HashSet<Key> = HashSet::new();
    for &k in start {
        // A file's top level is only a node when it has edges of its own.
        if matches!(k, Key::Top(_)) && !adj.contains_key(&k) {
            continue;
        }
        if b.node(k, 0, None).is_some() && expanded.insert(k) {
            queue.push_back((k, 0));
        }
    }
    while let Some((k, d)) = queue.pop_front() {
        if d >= depth {
            continue;
        }
        let Some(edges) = adj.get(&k) else { continue };
        let here = b.ids[&k];
        for &i in edges {
            let e = &snapshot.graphs.symbol_edges()[i];
            let other = if reverse {
                e.from.map_or(Key::Top(e.from_file), Key::Def)
            } else {
                Key::Def(e.to)
            };
            let Some((id, _)) = b.node(other, d + 1, Some(here)) else { return };
            let (from, to) = if reverse { (id, here) } else { (here, id) };
            let trust = edge_trust(project, e);
            b.edge(GraphEdge {
                from,
                to,
                kind: ref_kind(e.kind),
                resolution: Some(e.resolution),
                confidence: trust,
                line: Some(e.line),
            });
            // A guess is shown, not followed: the callers of a guessed caller are
            // a guess about a guess. Every `x.get()` of a project is a guessed
            // caller of each `get` method; walking on from all of them filled
            // `graph callers Session.get` with the callers of dict lookups.
            if trust >= GUESS_BELOW && !only_from_start && expanded.insert(other) {
                queue.push_back((other, d + 1));
            }
        }
    }
}

/// Renderings of a [`GraphView`] (a trait, since the view is protocol's).
pub trait RenderGraph {
    /// An indented tree from the target's nodes, each child with how it is tied to
    /// its parent. Nodes reached again by another path are not repeated.
    fn render_tree(&self) -> String;
    /// A Mermaid flowchart: the target's nodes highlighted, guessed edges dotted.
    fn to_mermaid(&self) -> String;
}

impl RenderGraph for GraphView {
    fn render_tree(&self) -> String {
        Render(self).render_tree()
    }

    fn to_mermaid(&self) -> String {
        Render(self).to_mermaid()
    }
}

/// The renderer over a borrowed view.
struct Render<'a>(&'a GraphView);

impl std::ops::Deref for Render<'_> {
    type Target = GraphView;
    fn deref(&self) -> &GraphView {
        self.0
    }
}

impl Render<'_> {
    fn label(&self, n: &GraphNode) -> String {
        let file_graph = self.target.kind != TargetKind::Symbol
            && matches!(self.query, GraphQuery::Deps | GraphQuery::Dependents);
        match (&n.symbol, n.line) {
            (Some(s), Some(l)) => format!("{}:{l} {s}", n.path),
            _ if file_graph => n.path.clone(),
            _ => format!("{} <top level>", n.path),
        }
    }

    /// An indented tree from the target's nodes, each child with how it is tied to
    /// its parent. Nodes reached again by another path are not repeated.
    pub fn render_tree(&self) -> String {
        if self.query == GraphQuery::Calls {
            return self.render_calls();
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for n in &self.nodes {
            if let Some(p) = n.parent {
                children[p].push(n.id);
            }
        }
        // The edge that tied each node to its tree parent.
        let mut tie: HashMap<usize, &GraphEdge> = HashMap::new();
        for e in &self.edges {
            for (child, parent) in [(e.to, e.from), (e.from, e.to)] {
                if self.nodes[child].parent == Some(parent) {
                    tie.entry(child).or_insert(e);
                }
            }
        }
        let mut out = String::new();
        for root in self.nodes.iter().filter(|n| n.parent.is_none()) {
            if self.nodes.len() > 1
                && children[root.id].is_empty()
                && self.target.kind != TargetKind::Symbol
                && root.symbol.is_some()
            {
                continue; // a definition of the file with no edges: noise
            }
            out.push_str(&self.label(root));
            if let Some(k) = root.kind {
                out.push_str(&format!(" ({k})"));
            }
            out.push('\n');
            self.tree_children(&children, &tie, root.id, "", &mut out);
        }
        if !self.externals.is_empty() {
            out.push_str(&format!("external: {}\n", self.externals.join(", ")));
        }
        if self.truncated {
            out.push_str(&format!("… stopped at {} nodes\n", self.nodes.len()));
        }
        out
    }

    /// `calls`: every call edge leaving the target, grouped by the calling
    /// definition in source order.
    fn render_calls(&self) -> String {
        let mut by_from: Vec<(usize, Vec<&GraphEdge>)> = Vec::new();
        for e in &self.edges {
            match by_from.iter_mut().find(|(f, _)| *f == e.from) {
                Some((_, list)) => list.push(e),
                None => by_from.push((e.from, vec![e])),
            }
        }
        by_from.sort_by_key(|(f, _)| (self.nodes[*f].line.unwrap_or(0), *f));
        let mut out = String::new();
        for (from, mut edges) in by_from {
            let n = &self.nodes[from];
            out.push_str(&self.label(n));
            if let Some(k) = n.kind {
                out.push_str(&format!(" ({k})"));
            }
            out.push('\n');
            edges.sort_by_key(|e| (e.line, e.to));
            for (i, e) in edges.iter().enumerate() {
                let last = i + 1 == edges.len();
                out.push_str(&format!(
                    "{}{}  [{}]\n",
                    if last { "└─ " } else { "├─ " },
                    self.label(&self.nodes[e.to]),
                    describe_edge(e)
                ));
            }
        }
        if out.is_empty() {
            out.push_str(&format!("{}: no calls\n", self.target.spec));
        }
        if self.truncated {
            out.push_str(&format!("… stopped at {} nodes\n", self.nodes.len()));
        }
        out
    }

    fn tree_children(
        &self,
        children: &[Vec<usize>],
        tie: &HashMap<usize, &GraphEdge>,
        node: usize,
        prefix: &str,
        out: &mut String,
    ) {
        let kids = &children[node];
        for (i, &c) in kids.iter().enumerate() {
            let last = i + 1 == kids.len();
            let n = &self.nodes[c];
            let how = tie.get(&c).map(|e| describe_edge(e)).unwrap_or_default();
            out.push_str(&format!(
                "{prefix}{}{}{}\n",
                if last { "└─ " } else { "├─ " },
                self.label(n),
                if how.is_empty() { String::new() } else { format!("  [{how}]") }
            ));
            let next = format!("{prefix}{}", if last { "   " } else { "│  " });
            self.tree_children(children, tie, c, &next, out);
        }
    }

    /// A Mermaid flowchart: the target's nodes highlighted, guessed edges dotted.
    pub fn to_mermaid(&self) -> String {
        let mut out = String::from("flowchart LR\n");
        for n in &self.nodes {
            let label = match &n.symbol {
                Some(s) => {
                    format!("{}<br/><small>{}</small>", mermaid_escape(s), mermaid_escape(&n.path))
                }
                None => mermaid_escape(&n.path),
            };
            out.push_str(&format!("  n{}[\"{label}\"]\n", n.id));
        }
        for e in &self.edges {
            let arrow = if e.confidence < GUESS_BELOW { "-.->" } else { "-->" };
            let label = match e.kind {
                EdgeKind::Import => "import",
                EdgeKind::Reference => "uses",
                EdgeKind::Call => "calls",
                EdgeKind::Type => "type",
                EdgeKind::Use => "uses",
            };
            out.push_str(&format!("  n{} {arrow}|{label}| n{}\n", e.from, e.to));
        }
        let targets: Vec<String> =
            self.nodes.iter().filter(|n| n.distance == 0).map(|n| format!("n{}", n.id)).collect();
        if !targets.is_empty() {
            out.push_str("  classDef target fill:#ffd166,stroke:#333\n");
            out.push_str(&format!("  class {} target\n", targets.join(",")));
        }
        out
    }
}

/// `call, imported, line 10`; `guess` when the edge is a guess.
fn describe_edge(e: &GraphEdge) -> String {
    let mut how = vec![format!("{:?}", e.kind).to_lowercase()];
    if let Some(r) = e.resolution {
        how.push(format!("{r:?}").to_lowercase());
    }
    if e.confidence < GUESS_BELOW {
        how.push("guess".into());
    }
    if let Some(l) = e.line {
        how.push(format!("line {l}"));
    }
    how.join(", ")
}

/// Text safe inside a quoted Mermaid label.
pub(crate) fn mermaid_escape(s: &str) -> String {
    s.replace('"', "#quot;").replace('<', "#lt;").replace('>', "#gt;")
}

#[cfg(test)]
mod tests;
