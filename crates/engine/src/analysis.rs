//! Analyses over the snapshot that several pillars share: impact radius, the role
//! of a file, its risks and the recommendations that follow, breaking-change risk.
//! The decisions are pure functions of numbers, tested as tables.

use std::{
    collections::{HashMap, HashSet},
    path::Path,
};

use code_graph::{Snapshot, TargetKind};
use code_index::{DefId, FileId};
use protocol::{
    ArchitecturalRole, ChangedSymbol, Churn, Complexity, HotSpot, ImpactRadius, Risk, RiskLevel,
    SymbolChange,
};

/// One rule for "is this a test file" across the workspace: ranking and the pillars
/// must agree on it.
pub(crate) use code_graph::is_test_path;

/// Branch points in source text: a rough cyclomatic count that needs no grammar
/// knowledge beyond keywords shared by the ten languages.
pub(crate) fn count_branches(source: &str) -> u32 {
    const WORDS: [&str; 10] =
        ["if", "elif", "for", "while", "case", "catch", "except", "match", "when", "guard"];
    let mut n = 0u32;
    let bytes = source.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &source[start..i];
            if WORDS.contains(&word) {
                n += 1;
            }
            continue;
        }
        if (c == b'&' || c == b'|') && bytes.get(i + 1) == Some(&c) {
            n += 1;
            i += 2;
            continue;
        }
        if c == b'?' {
            match bytes.get(i + 1) {
                Some(b'?') => {
                    i += 2;
                    continue;
                }
                Some(b'.') => {}
                _ => n += 1,
            }
        }
        i += 1;
    }
    n
}

/// Weighted edges to or from other files.
type Edges = Vec<(FileId, f64)>;

/// Files that depend on `f` (fan-in) and that `f` depends on (fan-out), as
/// `code_graph::impact` counts them (its direct dependents), each with the weight of
/// the file graph's edge (0 for an import of a package root's re-exports).
pub(crate) fn fan(snap: &Snapshot, f: FileId) -> (Edges, Edges) {
    let c = code_graph::coupling(snap, f);
    let weight = |adj: &[(FileId, f64)], g: FileId| {
        adj.iter().find(|(h, _)| *h == g).map_or(0.0, |(_, w)| *w)
    };
    let inn = c.dependents.iter().map(|&g| (g, weight(&snap.graphs.file_in[f as usize], g)));
    let out = c.dependencies.iter().map(|&g| (g, weight(&snap.graphs.file_out[f as usize], g)));
    (inn.collect(), out.collect())
}

/// The impact of changing `files` (or one definition), as `code_graph::impact`
/// computes it: the one definition of dependents.
fn impact_of(
    snap: &Snapshot,
    files: &[FileId],
    def: Option<DefId>,
    depth: u32,
) -> code_graph::Impact {
    let path = |f: FileId| snap.project.file(f).path.clone();
    let target = code_graph::Target {
        spec: files.first().map(|&f| path(f)).unwrap_or_default(),
        kind: if def.is_some() { TargetKind::Symbol } else { TargetKind::File },
        files: files.iter().map(|&f| path(f)).collect(),
        symbols: def.map(|d| code_graph::symbol_ref(&snap.project, d)).into_iter().collect(),
        file_ids: files.to_vec(),
        def_ids: def.into_iter().collect(),
    };
    // Listed only within `depth` (the radius counts every file either way): a
    // central file reaches most of a project, and listing each reached definition
    // copies its path and name.
    let opts = code_graph::ImpactOptions { depth, limit: usize::MAX };
    code_graph::impact(snap, &target, &opts)
}

/// Files depending on `start` within `depth` levels, with their distance, nearest
/// first (see [`impact_of`]).
pub(crate) fn dependents(snap: &Snapshot, start: &[FileId], depth: u32) -> Vec<(FileId, u32)> {
    impact_of(snap, start, None, depth)
        .dependents
        .iter()
        .filter(|d| d.distance <= depth)
        .filter_map(|d| Some((snap.project.file_id(&d.path)?, d.distance)))
        .collect()
}

/// Call sites of a definition that are sure (`code_graph::is_sure`): a guess — one
/// of several same-named definitions, a method matched by name on a receiver of
/// unknown type — proves little about any one of them.
pub(crate) fn resolved_callers(
    snap: &Snapshot,
    def: code_index::DefId,
) -> impl Iterator<Item = &code_graph::SymbolEdge> {
    snap.graphs.callers(def).filter(|e| code_graph::is_sure(&snap.project, e))
}

/// How far a change to `files` (or to the definition `def` in them) reaches within
/// `depth` levels: counts, the nearest dependents, and the tests among them or named
/// after the files, all from `code_graph::impact`.
pub(crate) fn impact_radius(
    snap: &Snapshot,
    files: &[FileId],
    def: Option<DefId>,
    depth: u32,
    test_files: &[String],
) -> (ImpactRadius, code_graph::Radius) {
    let impact = impact_of(snap, files, def, depth);
    let mut reached: Vec<(FileId, u32)> = impact
        .dependents
        .iter()
        .filter(|d| d.distance <= depth)
        .filter_map(|d| Some((snap.project.file_id(&d.path)?, d.distance)))
        .collect();
    reached.sort_by(|a, b| {
        a.1.cmp(&b.1).then(snap.file_rank[b.0 as usize].total_cmp(&snap.file_rank[a.0 as usize]))
    });
    let path = |f: FileId| snap.project.file(f).path.clone();
    let mut tests: Vec<String> =
        reached.iter().map(|&(f, _)| path(f)).filter(|p| is_test_path(p)).collect();
    // The tests impact found (named after the target, or reaching it), then those
    // named after the file even when the graph missed them (fixtures loaded by
    // name, dynamic imports).
    for t in &impact.tests {
        if !tests.contains(&t.path) {
            tests.push(t.path.clone());
        }
    }
    if tests.len() < 20 && !files.is_empty() {
        for &f in files {
            for t in named_after(test_files, &snap.project.file(f).path) {
                if !tests.contains(&t) {
                    tests.push(t);
                }
            }
            if tests.len() >= 20 {
                break;
            }
        }
    }
    tests.truncate(20);
    let radius = ImpactRadius {
        direct: impact.radius.direct,
        transitive: reached.len() as u32,
        depth,
        nearest: reached.iter().take(10).map(|&(f, _)| path(f)).collect(),
        tests,
    };
    (radius, impact.radius)
}

/// Test files named after the file, as `code_graph::impact` names them: the
/// test's subject (`test_subject`: `tests/test_cart.py`, `cart_test.go`,
/// `CartTests.cs`) is the file's module (`module_stem`: `cart.py`, `cart/__init__.py`).
pub(crate) fn tests_named_after(snap: &Snapshot, path: &str) -> Vec<String> {
    named_after(&test_files(snap), path)
}

/// The project's test files (`Session::impact_radius` keeps them per snapshot:
/// scanning every path was a twentieth of a first `understand`).
pub(crate) fn test_files(snap: &Snapshot) -> Vec<String> {
    snap.project.files.iter().map(|f| &f.path).filter(|p| is_test_path(p)).cloned().collect()
}

/// [`tests_named_after`] over a list from [`test_files`], at most five.
fn named_after(tests: &[String], path: &str) -> Vec<String> {
    let stem = code_graph::module_stem(path);
    // Two letters name too many things (`io`, `ui`).
    if stem.len() < 3 {
        return Vec::new();
    }
    tests
        .iter()
        .filter(|t| code_graph::test_subject(t).is_some_and(|s| s == stem))
        .take(5)
        .cloned()
        .collect()
}

/// The role of a file from its coupling and centrality (seed 004 §3.2, with fan-in
/// meaning "depended upon by", counted as `code_graph::impact` counts direct
/// dependents). Like the report's roles, never peripheral with several
/// dependents (`code_graph::SEVERAL_DEPENDENTS`).
pub(crate) fn role(
    is_test: bool,
    rank_percentile: f64,
    fan_in: u32,
    fan_out: u32,
) -> ArchitecturalRole {
    let several = code_graph::SEVERAL_DEPENDENTS;
    if is_test {
        ArchitecturalRole::Test
    } else if rank_percentile <= 0.05 && fan_in >= 5 || fan_in >= 10 {
        ArchitecturalRole::Core
    } else if fan_in >= several && fan_out <= fan_in / 2 {
        ArchitecturalRole::Utility
    } else if fan_out >= 5 && fan_in < several {
        ArchitecturalRole::Integration
    } else if fan_in >= several {
        ArchitecturalRole::Core
    } else {
        ArchitecturalRole::Peripheral
    }
}

/// What the numbers of a file say about changing it.
pub(crate) struct RiskInput {
    pub complexity: Complexity,
    pub syntax_errors: u32,
    pub tests: usize,
    pub is_test: bool,
    pub hot_spot: Option<f64>,
    /// How far a change reaches (`code_graph::impact`), whose risk level is the
    /// one `impact` reports.
    pub reach: Option<code_graph::Radius>,
}

pub(crate) fn risks(i: &RiskInput) -> Vec<Risk> {
    let c = &i.complexity;
    let mut out = Vec::new();
    let mut push = |level, code: &str, message: String| {
        out.push(Risk { level, code: code.to_owned(), message });
    };
    if i.syntax_errors > 0 {
        push(
            RiskLevel::High,
            "SYNTAX_ERRORS",
            format!("the file has {} syntax error node(s) as it is now", i.syntax_errors),
        );
    }
    if let Some(r) = &i.reach {
        let level = match r.risk {
            code_graph::Risk::High => Some(RiskLevel::High),
            code_graph::Risk::Medium => Some(RiskLevel::Medium),
            _ => None,
        };
        if let Some(level) = level {
            push(
                level,
                "IMPACT",
                format!(
                    "a change reaches {} file(s), {} directly ({:.0}% of the project)",
                    r.total,
                    r.direct,
                    r.share * 100.0
                ),
            );
        }
    }
    if c.fan_in >= 30 {
        push(RiskLevel::High, "HIGH_FAN_IN", format!("{} files depend on it", c.fan_in));
    } else if c.fan_in >= 10 {
        push(RiskLevel::Medium, "HIGH_FAN_IN", format!("{} files depend on it", c.fan_in));
    }
    if let Some(score) = i.hot_spot.filter(|s| *s >= 0.5) {
        push(
            RiskLevel::Medium,
            "HOTSPOT",
            format!("it changes often and is complex (hotspot score {score:.2})"),
        );
    }
    if c.symbols >= 60 && c.fan_in >= 10 {
        push(
            RiskLevel::Medium,
            "GOD_MODULE",
            format!("{} definitions in one file that {} files depend on", c.symbols, c.fan_in),
        );
    }
    if c.loc >= 1500 {
        push(RiskLevel::Low, "LARGE_FILE", format!("{} lines", c.loc));
    }
    if c.loc > 0 && c.branches * 4 > c.loc && c.branches >= 40 {
        push(RiskLevel::Low, "BRANCHY", format!("{} branch points in {} lines", c.branches, c.loc));
    }
    if !i.is_test && i.tests == 0 && c.symbols > 0 {
        push(
            RiskLevel::Low,
            "UNTESTED",
            "no test file depends on it or is named after it".to_owned(),
        );
    }
    out.sort_by_key(|b| std::cmp::Reverse(b.level));
    out
}

pub(crate) fn recommendations(risks: &[Risk], role: ArchitecturalRole) -> Vec<String> {
    let mut out = Vec::new();
    for r in risks {
        let text = match r.code.as_str() {
            "SYNTAX_ERRORS" => {
                "Fix the syntax errors first: symbols and graphs past them are incomplete."
            }
            "IMPACT" => {
                "Preview the change (`change` dry run, `includeImpact`) and run the affected tests."
            }
            "HIGH_FAN_IN" => {
                "Keep its public signatures stable; change with `includeImpact` and run the suggested tests."
            }
            "HOTSPOT" => "Prefer small, well-tested changes here; it is where bugs have collected.",
            "GOD_MODULE" => "Consider splitting it along its responsibilities before adding more.",
            "LARGE_FILE" => "Read it by skeleton and fragments rather than whole.",
            "BRANCHY" => "Cover the branches you touch with tests.",
            "UNTESTED" => "Add a test before changing behaviour (`write` with template `test`).",
            _ => continue,
        };
        if !out.iter().any(|t: &String| t == text) {
            out.push(text.to_owned());
        }
    }
    if out.is_empty() {
        out.push(
            match role {
                ArchitecturalRole::Core => {
                    "Central file: preview changes with `change` (dry run) and check the impact."
                }
                ArchitecturalRole::Test => {
                    "A test: run it with `manage` {\"command\": \"test\"} after changes."
                }
                _ => "Low risk: change it directly; the post-edit check guards syntax.",
            }
            .to_owned(),
        );
    }
    out
}

/// How likely a change breaks callers (seed 004 §3.3, from the symbols it touches).
pub(crate) fn breaking_change_risk(
    changed: &[ChangedSymbol],
    affected_hot_spots: usize,
) -> (RiskLevel, Vec<String>) {
    let mut found: Vec<(RiskLevel, String)> = Vec::new();
    for c in changed {
        let name = &c.qualified_name;
        let hit = match c.change {
            SymbolChange::Removed if c.callers > 0 => Some((
                RiskLevel::High,
                format!("{name} is removed but called from {} place(s)", c.callers),
            )),
            SymbolChange::SignatureChanged if c.callers >= 10 || c.caller_files >= 3 => Some((
                RiskLevel::High,
                format!(
                    "the signature of {name} changes and {} call site(s) in {} file(s) use it",
                    c.callers, c.caller_files
                ),
            )),
            SymbolChange::SignatureChanged if c.callers > 0 => Some((
                RiskLevel::Medium,
                format!("the signature of {name} changes; {} call site(s) use it", c.callers),
            )),
            SymbolChange::SignatureChanged | SymbolChange::Removed => Some((
                RiskLevel::Low,
                format!("{name} changes its interface but nothing indexed calls it"),
            )),
            SymbolChange::BodyChanged if c.callers >= 20 => Some((
                RiskLevel::Low,
                format!("{name} behaves differently for {} call site(s)", c.callers),
            )),
            _ => None,
        };
        found.extend(hit);
    }
    let symbols_level = found.iter().map(|f| f.0).max().unwrap_or(RiskLevel::None);
    if affected_hot_spots > 0 {
        let l = if symbols_level >= RiskLevel::Medium { RiskLevel::High } else { RiskLevel::Low };
        found.push((l, format!("{affected_hot_spots} hotspot file(s) are affected")));
    }
    let level = found.iter().map(|f| f.0).max().unwrap_or(RiskLevel::None);
    (level, found.into_iter().map(|f| f.1).collect())
}

/// Hotspots of the project: files that change often (git churn, recency-weighted)
/// and are complex and depended on, scored 0..1 against the hottest. Code that does
/// not change is not a hotspot, so without history there are none.
pub(crate) fn hot_spots(snap: &Snapshot, churn: Option<&Churn>, root: &Path) -> Vec<HotSpot> {
    let Some(churn) = churn.filter(|c| c.available) else { return Vec::new() };
    let sources = code_index::DiskSources::new(root.to_owned(), 4 << 20);
    let opts = code_graph::HotspotOptions { half_life_days: 90.0, limit: 50, under: String::new() };
    let found = code_graph::hotspots(snap, Some(churn), &sources, &opts);
    let top = found.files.iter().map(|f| f.score).fold(0.0_f64, f64::max);
    if top <= 0.0 {
        return Vec::new();
    }
    found
        .files
        .iter()
        .filter(|f| f.score > 0.0)
        .map(|f| {
            let c = f.churn.as_ref();
            HotSpot {
                path: f.path.clone(),
                score: round6(f.score / top),
                commits: c.map(|c| c.commits),
                reason: format!(
                    "{} commits, {} lines changed; {} decision points, {} dependents",
                    c.map_or(0, |c| c.commits),
                    c.map_or(0, |c| c.lines),
                    f.complexity.decisions,
                    f.fan_in
                ),
            }
        })
        .collect()
}

/// Call sites per definition from other places, and the files they are in.
pub(crate) fn caller_counts(snap: &Snapshot, def: code_index::DefId) -> (u32, u32) {
    let mut files = HashSet::new();
    let mut n = 0;
    for e in resolved_callers(snap, def) {
        n += 1;
        files.insert(e.from_file);
    }
    (n, files.len() as u32)
}

/// Place of each file by PageRank (1 = most central), computed once per snapshot.
pub(crate) fn rank_positions(snap: &Snapshot) -> HashMap<FileId, u32> {
    let mut order: Vec<FileId> = (0..snap.file_rank.len() as FileId).collect();
    order.sort_by(|a, b| snap.file_rank[*b as usize].total_cmp(&snap.file_rank[*a as usize]));
    order.into_iter().enumerate().map(|(i, f)| (f, i as u32 + 1)).collect()
}

/// Six decimals: enough for a rank, and stable in snapshots.
pub(crate) fn round6(x: f64) -> f64 {
    (x * 1_000_000.0).round() / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths() {
        for (p, want) in [
            ("tests/test_app.py", true),
            ("src/app.py", false),
            ("pkg/server_test.go", true),
            ("web/button.test.tsx", true),
            ("src/Calculator.Tests.cs", true),
            ("src/contest.py", false),
            ("crates/a/tests/suite/edit.rs", true),
        ] {
            assert_eq!(is_test_path(p), want, "{p}");
        }
    }

    #[test]
    fn tests_named_after_a_file() {
        // (test file, source file, named after). This used its own affix list
        // (lowercased `{stem}test.` and the like) where impact used
        // `test_subject`/`module_stem`; the rows marked `changed` answered the
        // other way before.
        let table = [
            ("tests/test_cart.py", "shop/cart.py", true),
            ("pkg/cart_test.go", "pkg/cart.go", true),
            ("web/cart.test.ts", "web/cart.ts", true),
            ("web/cart.spec.ts", "web/cart.ts", true),
            ("Shop.Tests/CartTests.cs", "Shop/Cart.cs", true),
            ("src/test/java/CartTest.java", "src/main/java/Cart.java", true),
            ("tests/cart.py", "shop/cart.py", true), // changed
            ("tests/test_cart.py", "shop/cart/__init__.py", true), // changed
            ("tests/test_shopping_cart.py", "shop/shoppingCart.ts", true), // changed
            ("tests/carttest.py", "shop/cart.py", false), // changed
            ("tests/test_cartography.py", "shop/cart.py", false),
            ("tests/test_io.py", "pkg/io.py", false),
        ];
        for (test, source, want) in table {
            assert_eq!(
                named_after(&[test.to_owned()], source),
                if want { vec![test] } else { vec![] },
                "{test} {source}"
            );
        }
    }

    #[test]
    fn branches_counted() {
        for (src, want) in [
            ("if a && b { x } else if c { y }", 3),
            ("for x in y:\n  while z: pass\n", 2),
            ("let ok = a ? b : c; x ?? y; a?.b", 1),
            ("identifier_if = iffy", 0),
            ("try { } catch (e) { } switch (x) { case 1: case 2: }", 3),
        ] {
            assert_eq!(count_branches(src), want, "{src}");
        }
    }

    #[test]
    fn roles_table() {
        use ArchitecturalRole as R;
        for (is_test, pct, fan_in, fan_out, want) in [
            (true, 0.01, 50, 3, R::Test),
            (false, 0.01, 12, 4, R::Core),
            (false, 0.40, 6, 1, R::Utility),
            (false, 0.40, 1, 9, R::Integration),
            (false, 0.30, 15, 12, R::Core),
            (false, 0.90, 0, 1, R::Peripheral),
        ] {
            assert_eq!(role(is_test, pct, fan_in, fan_out), want, "{pct} {fan_in} {fan_out}");
        }
    }

    fn changed(change: SymbolChange, callers: u32, caller_files: u32) -> ChangedSymbol {
        ChangedSymbol {
            path: "a.py".into(),
            qualified_name: "f".into(),
            kind: "function".into(),
            change,
            callers,
            caller_files,
        }
    }

    #[test]
    fn breaking_change_risk_table() {
        use SymbolChange as C;
        for (symbols, hot, want) in [
            (vec![], 0, RiskLevel::None),
            (vec![changed(C::BodyChanged, 3, 1)], 0, RiskLevel::None),
            (vec![changed(C::BodyChanged, 25, 4)], 0, RiskLevel::Low),
            (vec![changed(C::SignatureChanged, 0, 0)], 0, RiskLevel::Low),
            (vec![changed(C::SignatureChanged, 2, 1)], 0, RiskLevel::Medium),
            (vec![changed(C::SignatureChanged, 4, 3)], 0, RiskLevel::High),
            (vec![changed(C::Removed, 1, 1)], 0, RiskLevel::High),
            (vec![changed(C::Added, 0, 0)], 0, RiskLevel::None),
            (vec![], 2, RiskLevel::Low),
            (vec![changed(C::SignatureChanged, 2, 1)], 1, RiskLevel::High),
        ] {
            let (got, reasons) = breaking_change_risk(&symbols, hot);
            assert_eq!(got, want, "{symbols:?} hot={hot}");
            assert_eq!(got == RiskLevel::None, reasons.is_empty());
        }
    }

    #[test]
    fn risks_and_recommendations() {
        let input = RiskInput {
            complexity: Complexity {
                loc: 2000,
                symbols: 80,
                branches: 600,
                dependencies: 3,
                fan_in: 35,
                fan_out: 3,
            },
            syntax_errors: 1,
            tests: 0,
            is_test: false,
            hot_spot: Some(0.8),
            reach: None,
        };
        let r = risks(&input);
        let codes: Vec<&str> = r.iter().map(|r| r.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "SYNTAX_ERRORS",
                "HIGH_FAN_IN",
                "HOTSPOT",
                "GOD_MODULE",
                "LARGE_FILE",
                "BRANCHY",
                "UNTESTED"
            ]
        );
        assert_eq!(recommendations(&r, ArchitecturalRole::Core).len(), 7);
        let calm = RiskInput {
            complexity: Complexity { loc: 40, symbols: 2, ..Default::default() },
            syntax_errors: 0,
            tests: 1,
            is_test: false,
            hot_spot: None,
            reach: None,
        };
        assert!(risks(&calm).is_empty());
        assert_eq!(recommendations(&[], ArchitecturalRole::Peripheral).len(), 1);
    }
}
