//! The architecture report: one document from the index, the graphs and the
//! history, for people (Markdown) and programs (JSON, the same content).
//!
//! Sections: an overview; the most central files and definitions (PageRank) with
//! their inferred roles (`roles.rs`); the role distribution; hotspots and hotspot
//! clusters (hotspot files that depend on each other, as connected components);
//! the blast radius of the files that reach furthest (definition-level impact,
//! `impact.rs`, for the files the file graph says reach furthest); import cycles;
//! insights; and a Mermaid diagram of the directories and their dependencies.
//!
//! Insights are a pure function of those facts ([`insights`]), each with a
//! severity, the files concerned and a recommendation:
//!
//! - **god module** — a file in the top decile of the project for dependents,
//!   dependencies and size at once (and at least 5, 5 and 300 lines);
//! - **high blast radius** — a change reaches a fifth of the project or 20 files
//!   directly;
//! - **hotspot concentration** — the top 10% of changed files hold at least half
//!   of the changed lines;
//! - **untested hotspot** — a top hotspot no test file reaches or is named after;
//! - **dependency cycle** — files importing each other (flagged higher where
//!   import cycles break programs: Python, JavaScript/TypeScript, Go).

use std::collections::{BTreeMap, HashMap, HashSet};

use protocol::{Churn, SymbolKind};

use code_index::{DefId, FileId, Language, Sources};

use crate::{
    depgraph::DepGraph,
    graphview::mermaid_escape,
    hotspot::{FileHotspot, HotspotBasis, HotspotOptions, concentration, history_info, measure},
    impact::{ImpactOptions, Risk, impact_with},
    roles::{Role, RoleFacts, file_facts, infer_role, percentiles},
    snapshot::Snapshot,
    symrank::SymbolGraph,
    target::{Target, TargetKind},
    testfiles::{is_test_path, vendored_files},
};
pub use protocol::{
    ArchitectureReport as Report, BlastRadius, CentralFile as RankedFile,
    CentralSymbol as RankedSymbol, HotspotCluster, Insight, InsightKind,
    InsightSeverity as Severity, LanguageShare, Overview, RoleCount,
};

/// What to put in a report.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The project's name, for the title.
    pub title: String,
    /// Rows per ranked section.
    pub top: usize,
    pub half_life_days: f64,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions { title: "project".into(), top: 15, half_life_days: 90.0 }
    }
}

/// Builds the report.
pub fn report(
    snapshot: &Snapshot,
    churn: Option<&Churn>,
    sources: &dyn Sources,
    opts: &ReportOptions,
) -> Report {
    let project = &snapshot.project;
    let n = project.files.len();
    let top = opts.top.max(1);
    let graph = snapshot.impact_graph();
    let deps = &graph.deps;
    let facts = file_facts(snapshot, deps);
    let roles: Vec<(Role, String)> = facts.iter().map(infer_role).collect();
    let vendored = vendored_files(project, |p| sources.read(p));
    let own = |f: usize| !vendored[f];
    let is_copy = |p: &str| project.file_id(p).is_some_and(|f| vendored[f as usize]);

    // Overview.
    let mut langs: BTreeMap<Language, (u32, u64)> = BTreeMap::new();
    for f in &project.files {
        let e = langs.entry(f.language).or_default();
        e.0 += 1;
        e.1 += u64::from(f.lines);
    }
    let mut languages: Vec<LanguageShare> = langs
        .into_iter()
        .map(|(language, (files, lines))| LanguageShare {
            language: language.name().to_owned(),
            files,
            lines,
        })
        .collect();
    languages.sort_by_key(|l| std::cmp::Reverse(l.lines));
    let overview = Overview {
        files: n as u32,
        lines: project.files.iter().map(|f| u64::from(f.lines)).sum(),
        definitions: project.files.iter().map(|f| f.defs.len() as u32).sum(),
        languages,
        test_files: facts.iter().filter(|f| f.test).count() as u32,
        vendored_files: vendored.iter().filter(|v| **v).count() as u32,
        import_edges: snapshot.graphs.file_imports.iter().map(|v| v.len() as u32).sum(),
        reference_edges: snapshot.graphs.symbol_edges().len() as u32,
    };

    // Central files and definitions.
    let mut order: Vec<usize> = (0..n).filter(|&f| own(f)).collect();
    order.sort_by(|&a, &b| snapshot.file_rank[b].total_cmp(&snapshot.file_rank[a]).then(a.cmp(&b)));
    let top_files: Vec<RankedFile> = order
        .iter()
        .take(top)
        .map(|&f| RankedFile {
            path: project.files[f].path.clone(),
            score: snapshot.file_rank[f],
            role: roles[f].0,
            why: roles[f].1.clone(),
            fan_in: facts[f].fan_in,
            fan_out: facts[f].fan_out,
            lines: project.files[f].lines,
        })
        .collect();
    let top_symbols = top_symbols(snapshot, &vendored, top);

    // Roles.
    let mut counts: HashMap<Role, u32> = HashMap::new();
    for f in (0..n).filter(|&f| own(f)) {
        *counts.entry(roles[f].0).or_default() += 1;
    }
    let counted: u32 = counts.values().sum();
    let roles_dist: Vec<RoleCount> = Role::ALL
        .iter()
        .filter_map(|r| {
            let files = *counts.get(r)?;
            Some(RoleCount { role: *r, files, share: f64::from(files) / f64::from(counted.max(1)) })
        })
        .collect();

    // Hotspots and clusters.
    let hopts =
        HotspotOptions { half_life_days: opts.half_life_days, limit: top, under: String::new() };
    let measures = measure(snapshot, deps, churn, sources, &hopts);
    let mut hot: Vec<FileHotspot> =
        measures.files.into_iter().filter(|h| h.score > 0.0 && !is_copy(&h.path)).collect();
    hot.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
    hot.truncate(top.max(20));
    let clusters = clusters(project, deps, &hot);
    hot.truncate(top);
    let (concentration, concentrated) = match churn.filter(|c| c.available) {
        Some(c) => {
            let (share, files) = concentration(snapshot, c, &vendored);
            (Some(share), files)
        }
        None => (None, Vec::new()),
    };

    // Blast radius: the file graph says who might reach furthest; definition-level
    // impact says how far they do.
    let reach = deps.dependents_counts();
    let mut candidates: Vec<usize> = (0..n).filter(|&f| own(f) && !facts[f].test).collect();
    candidates.sort_by(|&a, &b| match &reach {
        Some(r) => r[b].cmp(&r[a]).then(a.cmp(&b)),
        None => facts[b].fan_in.cmp(&facts[a].fan_in).then(a.cmp(&b)),
    });
    candidates.truncate(top * 3);
    let file_target = |f: usize| Target {
        spec: project.files[f].path.clone(),
        kind: TargetKind::File,
        files: vec![project.files[f].path.clone()],
        symbols: Vec::new(),
        file_ids: vec![f as FileId],
        def_ids: Vec::new(),
    };
    let iopts = ImpactOptions { depth: 0, limit: 0 };
    let mut blast: Vec<BlastRadius> = candidates
        .iter()
        .map(|&f| {
            let i = impact_with(snapshot, graph, &file_target(f), &iopts);
            BlastRadius {
                path: project.files[f].path.clone(),
                radius: i.radius,
                tests: i.tests.len() as u32,
            }
        })
        .filter(|b| b.radius.total > 0)
        .collect();
    blast.sort_by(|a, b| {
        b.radius
            .total
            .cmp(&a.radius.total)
            .then(b.radius.weighted.total_cmp(&a.radius.weighted))
            .then_with(|| a.path.cmp(&b.path))
    });
    blast.truncate(top);

    // Untested hotspots: the top ones no test reaches or is named after.
    let untested: Vec<String> = hot
        .iter()
        .take(10)
        .filter(|h| !h.test)
        .filter(|h| {
            project.file_id(&h.path).is_some_and(|f| {
                impact_with(snapshot, graph, &file_target(f as usize), &iopts).tests.is_empty()
            })
        })
        .map(|h| h.path.clone())
        .collect();

    let cycles: Vec<Vec<String>> = DepGraph::cycles(&deps.imports)
        .into_iter()
        .filter(|c| c.iter().all(|&f| own(f as usize)))
        .map(|c| c.iter().map(|&f| project.file(f).path.clone()).collect())
        .collect();

    let history = history_info(churn);
    let insights = insights(&InsightFacts {
        files: &facts,
        vendored: &vendored,
        blast: &blast,
        concentration,
        concentrated: &concentrated,
        untested: &untested,
        cycles: &cycles,
        languages: &project.files.iter().map(|f| f.language).collect::<Vec<_>>(),
        paths: &project.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
    });
    let mermaid = module_diagram(snapshot, deps, &vendored, &hot, &top_files);
    Report {
        title: opts.title.clone(),
        overview,
        history,
        top_files,
        top_symbols,
        roles: roles_dist,
        hotspot_basis: measures.basis,
        hotspots: hot,
        hotspot_clusters: clusters,
        concentration,
        blast_radius: blast,
        cycles,
        insights,
        mermaid,
    }
}

fn top_symbols(snapshot: &Snapshot, vendored: &[bool], top: usize) -> Vec<RankedSymbol> {
    let project = &snapshot.project;
    let g = SymbolGraph::build(snapshot, 0.0);
    let rank = g.rank(None);
    let mut used_by: HashMap<DefId, HashSet<FileId>> = HashMap::new();
    let mut calls_out: HashMap<DefId, u32> = HashMap::new();
    for e in snapshot.graphs.symbol_edges() {
        if crate::depgraph::edge_trust(project, e) < 0.5 {
            continue;
        }
        if e.from_file != e.to.file {
            used_by.entry(e.to).or_default().insert(e.from_file);
        }
        if let Some(from) = e.from {
            *calls_out.entry(from).or_default() += 1;
        }
    }
    let mut defs: Vec<(DefId, f64)> = project
        .all_defs()
        .filter(|d| !vendored[d.file as usize] && !g.test_file[d.file as usize])
        .map(|d| (d, rank[g.def_node(d) as usize]))
        .collect();
    defs.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    defs.truncate(top);
    defs.into_iter()
        .map(|(d, score)| {
            let def = project.def(d);
            let used = used_by.get(&d).map_or(0, |s| s.len() as u32);
            let has_methods = project
                .file(d.file)
                .defs
                .iter()
                .any(|c| c.parent == Some(d.ord) && c.kind.is_callable());
            let role = symbol_role(
                def.kind,
                project.names.name(def.name),
                has_methods,
                used,
                calls_out.get(&d).copied().unwrap_or(0),
            );
            RankedSymbol {
                symbol: crate::target::symbol_ref(project, d),
                score,
                role,
                used_by_files: used,
            }
        })
        .collect()
}

/// The role of a central definition: `main` is an entry point; interfaces and
/// traits are interfaces; data types (and classes without methods) are models; a
/// function used by several files that calls little is a utility; anything else
/// this central is core.
pub fn symbol_role(
    kind: SymbolKind,
    name: &str,
    has_methods: bool,
    used_by_files: u32,
    calls: u32,
) -> Role {
    match kind {
        _ if name == "main" => Role::EntryPoint,
        SymbolKind::Interface | SymbolKind::Trait => Role::Interface,
        SymbolKind::Struct
        | SymbolKind::Record
        | SymbolKind::Enum
        | SymbolKind::Union
        | SymbolKind::TypeAlias => Role::Model,
        SymbolKind::Class if !has_methods => Role::Model,
        SymbolKind::Constant => Role::Config,
        k if k.is_callable() && used_by_files >= 3 && calls <= 2 => Role::Utility,
        _ => Role::Core,
    }
}

/// Connected components (size ≥ 2) of the top hotspot files under "depends on"
/// in either direction, by total score.
fn clusters(
    project: &code_index::Project,
    deps: &DepGraph,
    hot: &[FileHotspot],
) -> Vec<HotspotCluster> {
    let ids: Vec<FileId> = hot.iter().filter_map(|h| project.file_id(&h.path)).collect();
    let index: HashMap<FileId, usize> = ids.iter().enumerate().map(|(i, &f)| (f, i)).collect();
    let mut parent: Vec<usize> = (0..ids.len()).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for (i, &f) in ids.iter().enumerate() {
        for t in &deps.out[f as usize] {
            if let Some(&j) = index.get(t) {
                edges.push((i, j));
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                parent[a] = b;
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..ids.len() {
        let r = find(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    let mut out: Vec<HotspotCluster> = groups
        .into_values()
        .filter(|g| g.len() > 1)
        .map(|g| {
            let files: Vec<String> = g.iter().map(|&i| hot[i].path.clone()).collect();
            let set: HashSet<usize> = g.iter().copied().collect();
            HotspotCluster {
                directory: common_dir(&files),
                score: g.iter().map(|&i| hot[i].score).sum(),
                edges: edges.iter().filter(|(a, b)| set.contains(a) && set.contains(b)).count()
                    as u32,
                files,
            }
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

fn common_dir(paths: &[String]) -> String {
    let mut common: Vec<&str> = match paths.first() {
        Some(p) => p.split('/').collect(),
        None => return String::new(),
    };
    common.pop();
    for p in &paths[1..] {
        let parts: Vec<&str> = p.split('/').collect();
        let same = common.iter().zip(&parts[..parts.len() - 1]).take_while(|(a, b)| a == b).count();
        common.truncate(same);
    }
    common.join("/")
}

/// What [`insights`] looks at.
pub struct InsightFacts<'a> {
    pub files: &'a [RoleFacts],
    pub vendored: &'a [bool],
    pub blast: &'a [BlastRadius],
    pub concentration: Option<f64>,
    /// The files holding that share.
    pub concentrated: &'a [String],
    pub untested: &'a [String],
    pub cycles: &'a [Vec<String>],
    pub languages: &'a [Language],
    pub paths: &'a [String],
}

/// The insight rules (see the module documentation), most severe first.
pub fn insights(f: &InsightFacts<'_>) -> Vec<Insight> {
    let mut out = Vec::new();
    let own: Vec<usize> =
        (0..f.files.len()).filter(|&i| !f.vendored[i] && !f.files[i].test).collect();
    let pct = |get: &dyn Fn(&RoleFacts) -> f64| -> Vec<f64> {
        let values: Vec<f64> = own.iter().map(|&i| get(&f.files[i])).collect();
        percentiles(&values)
    };
    let (p_in, p_out) = (pct(&|x| f64::from(x.fan_in)), pct(&|x| f64::from(x.fan_out)));
    let p_size = pct(&|x| {
        f64::from(x.functions + x.methods + x.data_types + x.classes + x.interfaces + x.constants)
    });
    for (k, &i) in own.iter().enumerate() {
        let x = &f.files[i];
        let defs = x.functions + x.methods + x.data_types + x.classes + x.interfaces + x.constants;
        if own.len() >= 10
            && p_in[k] >= 0.9
            && p_out[k] >= 0.9
            && p_size[k] >= 0.9
            && x.fan_in >= 5
            && x.fan_out >= 5
            && defs >= 20
        {
            let severity =
                if x.fan_in >= 15 && x.fan_out >= 15 { Severity::High } else { Severity::Medium };
            out.push(Insight {
                kind: InsightKind::GodModule,
                severity,
                title: format!("God module: {}", x.path),
                description: format!(
                    "{} is among the top 10% of files for dependents ({}), dependencies ({}) and definitions ({}) at once: it knows much and much knows it.",
                    x.path, x.fan_in, x.fan_out, defs
                ),
                files: vec![x.path.clone()],
                recommendation: "Split it along the groups of definitions its dependents actually use; move what only one caller needs next to that caller.".into(),
            });
        }
    }
    let high: Vec<&BlastRadius> = f.blast.iter().filter(|b| b.radius.risk == Risk::High).collect();
    if !high.is_empty() {
        out.push(Insight {
            kind: InsightKind::HighBlastRadius,
            severity: Severity::High,
            title: format!("{} file(s) with a high blast radius", high.len()),
            description: high
                .iter()
                .take(5)
                .map(|b| format!("{} reaches {} files ({:.0}% of the project, {} directly)", b.path, b.radius.total, b.radius.share * 100.0, b.radius.direct))
                .collect::<Vec<_>>()
                .join("; "),
            files: high.iter().map(|b| b.path.clone()).collect(),
            recommendation: "Run `ironbees impact FILE` before changing these and the listed tests after; keep their interfaces stable.".into(),
        });
    }
    if let Some(c) = f.concentration.filter(|c| *c >= 0.5) {
        let files = f.concentrated.to_vec();
        out.push(Insight {
            kind: InsightKind::HotspotConcentration,
            severity: if c >= 0.7 { Severity::High } else { Severity::Medium },
            title: "Change is concentrated in few files".into(),
            description: format!("The top 10% of changed files hold {:.0}% of the changed lines.", c * 100.0),
            files,
            recommendation: "These files are where refactoring pays off first: simplify their most complex functions and cover them with tests.".into(),
        });
    }
    if !f.untested.is_empty() {
        out.push(Insight {
            kind: InsightKind::UntestedHotspot,
            severity: Severity::Medium,
            title: format!("{} hotspot(s) without tests", f.untested.len()),
            description: "No test file reaches these hotspots through references or imports, and none is named after them.".into(),
            files: f.untested.to_vec(),
            recommendation: "Add tests before the next change to these files.".into(),
        });
    }
    for cycle in f.cycles {
        let lang = f.paths.iter().position(|p| Some(p) == cycle.first()).map(|i| f.languages[i]);
        let breaks = matches!(
            lang,
            Some(
                Language::Python
                    | Language::JavaScript
                    | Language::TypeScript
                    | Language::Tsx
                    | Language::Go
            )
        );
        let severity = match (breaks, cycle.len()) {
            (true, n) if n >= 4 => Severity::High,
            (true, _) => Severity::Medium,
            (false, _) => Severity::Low,
        };
        out.push(Insight {
            kind: InsightKind::DependencyCycle,
            severity,
            title: format!("Import cycle of {} files", cycle.len()),
            description: format!("{} import each other.", cycle.join(", ")),
            files: cycle.clone(),
            recommendation: if breaks {
                "Break the cycle: move what both sides need into a module both import, or import lazily where it is used.".into()
            } else {
                "Modules that import each other change together; consider whether they are one module.".into()
            },
        });
    }
    out.sort_by_key(|i| i.severity);
    out
}

/// Directories as nodes, their dependencies as edges: at most 14 nodes and the 24
/// heaviest edges. The depth is the deepest at which the project still has at
/// most 14 directories (below a single top directory, if everything is in one).
/// A project in fewer than three directories is drawn file by file instead.
fn module_diagram(
    snapshot: &Snapshot,
    deps: &DepGraph,
    vendored: &[bool],
    hot: &[FileHotspot],
    central: &[RankedFile],
) -> String {
    let project = &snapshot.project;
    let is_test = |f: usize| is_test_path(&project.files[f].path);
    // The layout (how deep to group) is chosen from the code; test directories are
    // drawn too, as test modules, so that what tests depend on shows.
    let all: Vec<usize> = (0..project.files.len()).filter(|&f| !vendored[f]).collect();
    let files: Vec<usize> = all.iter().copied().filter(|&f| !is_test(f)).collect();
    let group_at = |f: usize, depth: usize| -> String {
        let parts: Vec<&str> = project.files[f].path.split('/').collect();
        let dirs = &parts[..parts.len() - 1];
        if dirs.is_empty() { "(root)".to_owned() } else { dirs[..depth.min(dirs.len())].join("/") }
    };
    let count =
        |depth: usize| files.iter().map(|&f| group_at(f, depth)).collect::<HashSet<_>>().len();
    let mut depth = 1;
    while depth < 8 && count(depth) == 1 && count(depth + 1) > 1 {
        depth += 1;
    }
    while depth < 8 && count(depth + 1) <= 14 && count(depth + 1) > count(depth) {
        depth += 1;
    }
    if count(depth) < 3 {
        return file_diagram(snapshot, deps, &files, hot, central);
    }
    let group: HashMap<usize, String> = all.iter().map(|&f| (f, group_at(f, depth))).collect();
    // Per group: files, and how many are tests.
    let mut sizes: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for (&f, g) in &group {
        let e = sizes.entry(g.clone()).or_default();
        e.0 += 1;
        e.1 += u32::from(is_test(f));
    }
    // Keep the 14 largest groups of code and the 4 largest of tests only.
    // (group, files, tests only)
    type Group = (String, u32, bool);
    let (mut kept, mut tests): (Vec<Group>, Vec<Group>) =
        sizes.into_iter().map(|(g, (n, t))| (g, n, t == n)).partition(|(_, _, test)| !test);
    for (list, max) in [(&mut kept, 14), (&mut tests, 4)] {
        list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        list.truncate(max);
    }
    kept.extend(tests);
    kept.sort();
    let id: HashMap<&str, usize> =
        kept.iter().enumerate().map(|(i, (g, ..))| (g.as_str(), i)).collect();
    let mut weights: HashMap<(usize, usize), u32> = HashMap::new();
    for (&f, g) in &group {
        let Some(&a) = id.get(g.as_str()) else { continue };
        for &t in &deps.out[f] {
            let Some(h) = group.get(&(t as usize)) else { continue };
            if let Some(&b) = id.get(h.as_str())
                && a != b
            {
                *weights.entry((a, b)).or_default() += 1;
            }
        }
    }
    let mut edges: Vec<((usize, usize), u32)> = weights.into_iter().collect();
    edges.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    edges.truncate(24);
    edges.sort();
    let hot_groups: HashSet<&str> = hot
        .iter()
        .take(10)
        .filter_map(|h| {
            project.file_id(&h.path).and_then(|f| group.get(&(f as usize))).map(String::as_str)
        })
        .collect();
    let core_groups: HashSet<&str> = central
        .iter()
        .take(5)
        .filter_map(|c| {
            project.file_id(&c.path).and_then(|f| group.get(&(f as usize))).map(String::as_str)
        })
        .collect();
    let mut out = String::from("flowchart LR\n");
    for (i, (g, n, test)) in kept.iter().enumerate() {
        let class = if *test {
            ":::test"
        } else if hot_groups.contains(g.as_str()) {
            ":::hotspot"
        } else if core_groups.contains(g.as_str()) {
            ":::core"
        } else {
            ""
        };
        out.push_str(&format!(
            "  m{i}[\"{}<br/><small>{n} files</small>\"]{class}\n",
            mermaid_escape(g)
        ));
    }
    for ((a, b), w) in &edges {
        out.push_str(&format!("  m{a} -->|{w}| m{b}\n"));
    }
    out.push_str("  classDef hotspot fill:#ff6b6b,stroke:#333\n");
    out.push_str("  classDef core fill:#4ecdc4,stroke:#333\n");
    if kept.iter().any(|k| k.2) {
        out.push_str("  classDef test fill:#eeeeee,stroke:#999,stroke-dasharray:3 3\n");
    }
    out
}

/// For projects in one or two directories: the 14 most central files as nodes.
fn file_diagram(
    snapshot: &Snapshot,
    deps: &DepGraph,
    files: &[usize],
    hot: &[FileHotspot],
    central: &[RankedFile],
) -> String {
    let project = &snapshot.project;
    let mut chosen: Vec<usize> = files.to_vec();
    chosen
        .sort_by(|&a, &b| snapshot.file_rank[b].total_cmp(&snapshot.file_rank[a]).then(a.cmp(&b)));
    chosen.truncate(14);
    chosen.sort_unstable();
    let id: HashMap<usize, usize> = chosen.iter().enumerate().map(|(i, &f)| (f, i)).collect();
    let hot: HashSet<&str> = hot.iter().take(10).map(|h| h.path.as_str()).collect();
    let core: HashSet<&str> = central.iter().take(5).map(|c| c.path.as_str()).collect();
    let mut out = String::from("flowchart LR\n");
    for (i, &f) in chosen.iter().enumerate() {
        let path = project.files[f].path.as_str();
        let class = if hot.contains(path) {
            ":::hotspot"
        } else if core.contains(path) {
            ":::core"
        } else {
            ""
        };
        out.push_str(&format!("  m{i}[\"{}\"]{class}\n", mermaid_escape(path)));
    }
    for (i, &f) in chosen.iter().enumerate() {
        for t in &deps.out[f] {
            if let Some(j) = id.get(&(*t as usize)) {
                out.push_str(&format!("  m{i} --> m{j}\n"));
            }
        }
    }
    out.push_str("  classDef hotspot fill:#ff6b6b,stroke:#333\n");
    out.push_str("  classDef core fill:#4ecdc4,stroke:#333\n");
    out
}

/// The report as Markdown (a trait, since the report is protocol's).
pub trait ToMarkdown {
    /// GitHub-flavoured, Mermaid in a fenced block.
    fn to_markdown(&self) -> String;
}

impl ToMarkdown for Report {
    /// The report as Markdown (GitHub-flavoured, Mermaid in a fenced block).
    fn to_markdown(&self) -> String {
        let mut md = String::new();
        let o = &self.overview;
        md.push_str(&format!("# Architecture report: {}\n\n", self.title));
        let h = &self.history;
        let history = if h.available {
            format!(
                "git history: {} commits{}",
                h.commits,
                if h.shallow { " (shallow clone)" } else { "" }
            )
        } else {
            format!("no git history ({})", h.reason.as_deref().unwrap_or("unknown"))
        };
        md.push_str(&format!("_From the index ({} files) and {history}._\n\n", o.files));

        md.push_str("## Overview\n\n| | |\n|---|---|\n");
        md.push_str(&format!(
            "| files | {} ({} tests, {} vendored) |\n",
            o.files, o.test_files, o.vendored_files
        ));
        md.push_str(&format!("| lines | {} |\n| definitions | {} |\n", o.lines, o.definitions));
        md.push_str(&format!(
            "| imports between files | {} |\n| references between definitions | {} |\n",
            o.import_edges, o.reference_edges
        ));
        let langs: Vec<String> = o
            .languages
            .iter()
            .map(|l| format!("{} {} files / {} lines", l.language, l.files, l.lines))
            .collect();
        md.push_str(&format!("| languages | {} |\n\n", langs.join(", ")));

        md.push_str("## Most central files\n\nPageRank over the file dependency graph; roles are inferred from graph position, contents and names.\n\n");
        md.push_str("| # | file | role | why | dependents | dependencies | lines |\n|---|---|---|---|---|---|---|\n");
        for (i, f) in self.top_files.iter().enumerate() {
            md.push_str(&format!(
                "| {} | `{}` | {} | {} | {} | {} | {} |\n",
                i + 1,
                f.path,
                f.role,
                md_cell(&f.why),
                f.fan_in,
                f.fan_out,
                f.lines
            ));
        }
        md.push_str("\n## Most central definitions\n\n| # | definition | kind | role | used by files | where |\n|---|---|---|---|---|---|\n");
        for (i, s) in self.top_symbols.iter().enumerate() {
            md.push_str(&format!(
                "| {} | `{}` | {} | {} | {} | `{}:{}` |\n",
                i + 1,
                md_cell(&s.symbol.qualified_name),
                s.symbol.kind,
                s.role,
                s.used_by_files,
                s.symbol.path,
                s.symbol.line
            ));
        }
        md.push_str("\n## Roles\n\n| role | files | share |\n|---|---|---|\n");
        for r in &self.roles {
            md.push_str(&format!("| {} | {} | {:.0}% |\n", r.role, r.files, r.share * 100.0));
        }

        md.push_str("\n## Hotspots\n\n");
        md.push_str(match self.hotspot_basis {
            HotspotBasis::History => "Churn × (complexity and fan-in): code that changes often and is hard to change.\n\n",
            HotspotBasis::Structure => "No history: ranked by complexity and fan-in only.\n\n",
        });
        if self.hotspots.is_empty() {
            md.push_str("None: nothing changed in the window.\n");
        } else {
            md.push_str("| # | file | score | commits | changed lines | decisions | max cyclomatic | dependents |\n|---|---|---|---|---|---|---|---|\n");
            for (i, f) in self.hotspots.iter().enumerate() {
                let (commits, lines) =
                    f.churn.as_ref().map_or(("–".to_owned(), "–".to_owned()), |c| {
                        (c.commits.to_string(), c.lines.to_string())
                    });
                md.push_str(&format!(
                    "| {} | `{}`{} | {:.3} | {commits} | {lines} | {} | {} | {} |\n",
                    i + 1,
                    f.path,
                    if f.test { " (test)" } else { "" },
                    f.score,
                    f.complexity.decisions,
                    f.complexity.max_cyclomatic,
                    f.fan_in
                ));
            }
        }
        if let Some(c) = self.concentration {
            md.push_str(&format!(
                "\nThe top 10% of changed files hold {:.0}% of the changed lines.\n",
                c * 100.0
            ));
        }
        if !self.hotspot_clusters.is_empty() {
            md.push_str(
                "\n### Hotspot clusters\n\nHotspots that depend on each other change together.\n\n",
            );
            for c in &self.hotspot_clusters {
                md.push_str(&format!(
                    "- `{}/` — {} files, {} dependencies among them, score {:.2}: {}\n",
                    if c.directory.is_empty() { "." } else { &c.directory },
                    c.files.len(),
                    c.edges,
                    c.score,
                    c.files.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
                ));
            }
        }

        md.push_str("\n## Blast radius\n\nFiles whose changes reach furthest (definition-level reverse dependencies).\n\n");
        md.push_str("| file | direct | within 3 | total | share | risk | tests |\n|---|---|---|---|---|---|---|\n");
        for b in &self.blast_radius {
            let r = &b.radius;
            md.push_str(&format!(
                "| `{}` | {} | {} | {} | {:.1}% | {} | {} |\n",
                b.path,
                r.direct,
                r.within_3,
                r.total,
                r.share * 100.0,
                format!("{:?}", r.risk).to_lowercase(),
                b.tests
            ));
        }
        if !self.cycles.is_empty() {
            md.push_str("\n## Import cycles\n\n");
            for c in self.cycles.iter().take(10) {
                md.push_str(&format!(
                    "- {}\n",
                    c.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(" ⇄ ")
                ));
            }
            if self.cycles.len() > 10 {
                md.push_str(&format!("- … and {} more\n", self.cycles.len() - 10));
            }
        }
        md.push_str("\n## Insights\n\n");
        if self.insights.is_empty() {
            md.push_str("Nothing stands out.\n");
        }
        for i in &self.insights {
            let files = if i.files.is_empty() || i.kind == InsightKind::DependencyCycle {
                String::new()
            } else {
                format!(
                    " ({})",
                    i.files.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
                )
            };
            md.push_str(&format!(
                "- **[{}] {}**{files} — {} _{}_\n",
                format!("{:?}", i.severity).to_lowercase(),
                i.title,
                i.description,
                i.recommendation
            ));
        }
        md.push_str("\n## Module map\n\nDirectories (or, in a small project, files) and the file dependencies between them; red: hotspots, teal: the most central files.\n\n```mermaid\n");
        md.push_str(&self.mermaid);
        md.push_str("```\n");
        md
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests;
