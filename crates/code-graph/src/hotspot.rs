//! Hotspots: code that changes often *and* is hard to change.
//!
//! Three measures per file and per definition, each normalized to 0..1 over the
//! project by `ln(1 + x) / ln(1 + max)` (heavy tails stay comparable):
//!
//! - **churn** (with history): `0.4·recency + 0.3·commits + 0.3·lines changed`,
//!   where recency sums `0.5^(age / half-life)` over the commits, age measured from
//!   the newest commit read (so the same history gives the same answer tomorrow);
//! - **complexity**: `0.4·decision points + 0.3·lines + 0.3·the most complex
//!   function's decision points` (a file), or `0.6·decision points + 0.4·lines` (a
//!   definition). Decision points are McCabe's, counted by `complexity.rs`;
//! - **fan-in**: files depending on it (a file), or distinct definitions and files
//!   referencing it (a definition).
//!
//! With history, `score = churn · (0.5 + 0.5 · structure)` where
//! `structure = 0.6·complexity + 0.4·fan-in`: code that never changes is not a
//! hotspot however complex it is, and among code that changes, the complex and
//! depended-upon rises. Without history the score is `structure` alone and
//! [`Hotspots::basis`] says so; no churn is shown as absent, never as zero. Tests
//! count half: a churning test file matters less than the code it tests.
//!
//! Per-definition churn needs to know where each commit changed a file
//! ([`protocol::Churn::lines`]); without it, definitions are ranked by structure.

use std::collections::HashSet;

use protocol::{Churn, SymbolKind};

use code_index::{DefId, FileId, Sources, decisions_in, decisions_per_line};

use crate::{
    depgraph::{DepGraph, edge_trust},
    snapshot::Snapshot,
    testfiles::{test_convention, vendored_files},
};
pub use protocol::{
    ChurnStats, CodeComplexity as Complexity, FileHotspot, HistoryInfo, HotspotBasis, Hotspots,
    ScoreParts, SymbolHotspot,
};

/// How hotspots are computed.
#[derive(Debug, Clone)]
pub struct HotspotOptions {
    /// Half-life of a commit's weight, in days.
    pub half_life_days: f64,
    /// How many files and definitions to return.
    pub limit: usize,
    /// Only files under this directory prefix (`""` for all).
    pub under: String,
}

impl Default for HotspotOptions {
    fn default() -> Self {
        HotspotOptions { half_life_days: 90.0, limit: 20, under: String::new() }
    }
}

/// Every file's (and definition's) measures, before ranking: what reports need.
pub(crate) struct Measures {
    pub basis: HotspotBasis,
    pub files: Vec<FileHotspot>,
    pub symbols: Vec<(DefId, SymbolHotspot)>,
}

fn lnorm(x: f64, max: f64) -> f64 {
    if max <= 0.0 { 0.0 } else { (1.0 + x).ln() / (1.0 + max).ln() }
}

/// Hotspots from the snapshot, the history (None or unavailable: by structure) and
/// the files' contents (for decision points).
pub fn hotspots(
    snapshot: &Snapshot,
    churn: Option<&Churn>,
    sources: &dyn Sources,
    opts: &HotspotOptions,
) -> Hotspots {
    let deps = DepGraph::build(snapshot);
    let m = measure(snapshot, &deps, churn, sources, opts);
    let history = history_info(churn);
    let vendored = vendored_files(&snapshot.project, |p| sources.read(p));
    let concentration =
        churn.filter(|c| c.available).map(|c| concentration(snapshot, c, &vendored).0);
    let copied = |p: &str| snapshot.project.file_id(p).is_some_and(|f| vendored[f as usize]);
    let under = |p: &str| stdx::is_within(p, &opts.under);
    let mut files: Vec<FileHotspot> = m
        .files
        .into_iter()
        .filter(|f| f.score > 0.0 && under(&f.path) && !copied(&f.path))
        .collect();
    files.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
    files.truncate(opts.limit);
    let mut symbols: Vec<SymbolHotspot> = m
        .symbols
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| s.score > 0.0 && under(&s.symbol.path) && !copied(&s.symbol.path))
        .collect();
    symbols.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.symbol.path.cmp(&b.symbol.path))
            .then_with(|| a.symbol.line.cmp(&b.symbol.line))
    });
    symbols.truncate(opts.limit);
    Hotspots { basis: m.basis, history, files, symbols, concentration }
}

pub(crate) fn history_info(churn: Option<&Churn>) -> HistoryInfo {
    match churn {
        Some(c) => HistoryInfo {
            available: c.available,
            reason: c.reason.clone(),
            commits: c.commits,
            head: c.head.clone(),
            newest: c.newest,
            oldest: c.oldest,
            shallow: c.shallow,
            symbol_churn: c.available && c.lines,
        },
        None => HistoryInfo {
            available: false,
            reason: Some("history was not read".into()),
            commits: 0,
            head: None,
            newest: None,
            oldest: None,
            shallow: false,
            symbol_churn: false,
        },
    }
}

/// Share of changed lines held by the top 10% (at least one) of changed files
/// that are in the index and the project's own (`vendored` is
/// [`vendored_files`]), and those files.
pub(crate) fn concentration(
    snapshot: &Snapshot,
    churn: &Churn,
    vendored: &[bool],
) -> (f64, Vec<String>) {
    let mut amounts: Vec<(u64, &str)> = churn
        .files
        .iter()
        .filter(|f| snapshot.project.file_id(&f.path).is_some_and(|id| !vendored[id as usize]))
        .map(|f| {
            let lines = f.added + f.deleted;
            (if lines > 0 { lines } else { u64::from(f.commits) }, f.path.as_str())
        })
        .collect();
    let total: u64 = amounts.iter().map(|a| a.0).sum();
    if total == 0 {
        return (0.0, Vec::new());
    }
    amounts.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let top = amounts.len().div_ceil(10).max(1);
    let share = amounts[..top].iter().map(|a| a.0).sum::<u64>() as f64 / total as f64;
    (share, amounts[..top].iter().map(|a| a.1.to_owned()).collect())
}

pub(crate) fn measure(
    snapshot: &Snapshot,
    deps: &DepGraph,
    churn: Option<&Churn>,
    sources: &dyn Sources,
    opts: &HotspotOptions,
) -> Measures {
    let project = &snapshot.project;
    let churn = churn.filter(|c| c.available);
    let basis = if churn.is_some() { HotspotBasis::History } else { HotspotBasis::Structure };
    let newest = churn.and_then(|c| c.newest).unwrap_or(0);
    let half_life = opts.half_life_days.max(0.01) * 86_400.0;
    let weight = |t: i64| 0.5f64.powf((newest - t).max(0) as f64 / half_life);

    // Incoming references per definition: distinct (referencing def or file).
    let mut referrers: Vec<HashSet<(FileId, Option<u32>)>> = Vec::new();
    let mut base = Vec::with_capacity(project.files.len());
    let mut total = 0usize;
    for f in &project.files {
        base.push(total);
        total += f.defs.len();
    }
    referrers.resize_with(total, HashSet::new);
    for e in snapshot.graphs.symbol_edges() {
        if edge_trust(project, e) < 0.5 {
            continue;
        }
        let key = (e.from_file, e.from.map(|d| d.ord));
        referrers[base[e.to.file as usize] + e.to.ord as usize].insert(key);
    }

    let mut files = Vec::with_capacity(project.files.len());
    let mut symbols: Vec<(DefId, SymbolHotspot)> = Vec::new();
    for (f, file) in project.files.iter().enumerate() {
        let f = f as FileId;
        let per_line = sources
            .read(&file.path)
            .map(|b| decisions_per_line(file.language, &b))
            .unwrap_or_default();
        let fc = churn.and_then(|c| c.file(&file.path));
        let mut max_cyclomatic = 0;
        for (ord, d) in file.defs.iter().enumerate() {
            let decisions = decisions_in(&per_line, d.line, d.end_line);
            if d.kind.is_callable() {
                max_cyclomatic = max_cyclomatic.max(1 + decisions);
            }
            if !hotspot_kind(d.kind) {
                continue;
            }
            let sym_churn = match (churn, fc) {
                (Some(c), Some(fc)) if c.lines => {
                    let mut stats = ChurnStats {
                        commits: 0,
                        lines: 0,
                        recency: 0.0,
                        authors: None,
                        last_change: None,
                    };
                    for ch in &fc.changes {
                        let overlap: u64 = ch
                            .lines
                            .iter()
                            .map(|s| {
                                let (a, b) = (s.start.max(d.line), s.end.min(d.end_line));
                                u64::from(if a <= b { b - a + 1 } else { 0 })
                            })
                            .sum();
                        if overlap > 0 {
                            stats.commits += 1;
                            stats.lines += overlap;
                            stats.recency += weight(ch.time);
                            stats.last_change =
                                Some(stats.last_change.unwrap_or(ch.time).max(ch.time));
                        }
                    }
                    Some(stats)
                }
                (Some(c), None) if c.lines => Some(ChurnStats {
                    commits: 0,
                    lines: 0,
                    recency: 0.0,
                    authors: None,
                    last_change: None,
                }),
                _ => None,
            };
            let id = DefId { file: f, ord: ord as u32 };
            symbols.push((
                id,
                SymbolHotspot {
                    symbol: crate::target::symbol_ref(project, id),
                    score: 0.0,
                    churn: sym_churn,
                    complexity: Complexity {
                        lines: d.end_line - d.line + 1,
                        decisions,
                        definitions: 0,
                        max_cyclomatic: 0,
                    },
                    fan_in: referrers[base[f as usize] + ord].len() as u32,
                    parts: ScoreParts { churn: None, complexity: 0.0, fan_in: 0.0 },
                },
            ));
        }
        let file_churn = match (churn, fc) {
            (Some(_), Some(fc)) => Some(ChurnStats {
                commits: fc.commits,
                lines: fc.added + fc.deleted,
                recency: fc.changes.iter().map(|c| weight(c.time)).sum(),
                authors: Some(fc.authors),
                last_change: Some(fc.last_change),
            }),
            (Some(_), None) => Some(ChurnStats {
                commits: 0,
                lines: 0,
                recency: 0.0,
                authors: Some(0),
                last_change: None,
            }),
            _ => None,
        };
        files.push(FileHotspot {
            path: file.path.clone(),
            score: 0.0,
            churn: file_churn,
            complexity: Complexity {
                lines: file.lines,
                decisions: per_line.iter().map(|&c| u32::from(c)).sum(),
                definitions: file.defs.len() as u32,
                max_cyclomatic,
            },
            fan_in: deps.inn[f as usize].len() as u32,
            test: test_convention(project, f)
                .is_some_and(|(k, _)| k != crate::testfiles::TestKind::Inline),
            parts: ScoreParts { churn: None, complexity: 0.0, fan_in: 0.0 },
        });
    }

    // Normalize and score files.
    let max = |it: &mut dyn Iterator<Item = f64>| it.fold(0.0f64, f64::max);
    let fmax = |g: &dyn Fn(&FileHotspot) -> f64| max(&mut files.iter().map(g));
    let (m_rec, m_com, m_lin) = (
        fmax(&|f| f.churn.as_ref().map_or(0.0, |c| c.recency)),
        fmax(&|f| f.churn.as_ref().map_or(0.0, |c| f64::from(c.commits))),
        fmax(&|f| f.churn.as_ref().map_or(0.0, |c| c.lines as f64)),
    );
    let (m_dec, m_lines, m_cyc, m_fan) = (
        fmax(&|f| f64::from(f.complexity.decisions)),
        fmax(&|f| f64::from(f.complexity.lines)),
        fmax(&|f| f64::from(f.complexity.max_cyclomatic)),
        fmax(&|f| f64::from(f.fan_in)),
    );
    for f in &mut files {
        let churn_n = f.churn.as_ref().map(|c| {
            0.4 * lnorm(c.recency, m_rec)
                + 0.3 * lnorm(f64::from(c.commits), m_com)
                + 0.3 * lnorm(c.lines as f64, m_lin)
        });
        let complexity = 0.4 * lnorm(f64::from(f.complexity.decisions), m_dec)
            + 0.3 * lnorm(f64::from(f.complexity.lines), m_lines)
            + 0.3 * lnorm(f64::from(f.complexity.max_cyclomatic), m_cyc);
        let fan_in = lnorm(f64::from(f.fan_in), m_fan);
        f.parts = ScoreParts { churn: churn_n, complexity, fan_in };
        f.score = score(churn_n, complexity, fan_in) * if f.test { 0.5 } else { 1.0 };
    }

    let smax = |g: &dyn Fn(&SymbolHotspot) -> f64| max(&mut symbols.iter().map(|(_, s)| g(s)));
    let (s_rec, s_com, s_lin) = (
        smax(&|s| s.churn.as_ref().map_or(0.0, |c| c.recency)),
        smax(&|s| s.churn.as_ref().map_or(0.0, |c| f64::from(c.commits))),
        smax(&|s| s.churn.as_ref().map_or(0.0, |c| c.lines as f64)),
    );
    let (s_dec, s_lines, s_fan) = (
        smax(&|s| f64::from(s.complexity.decisions)),
        smax(&|s| f64::from(s.complexity.lines)),
        smax(&|s| f64::from(s.fan_in)),
    );
    for (id, s) in &mut symbols {
        let churn_n = s.churn.as_ref().map(|c| {
            0.4 * lnorm(c.recency, s_rec)
                + 0.3 * lnorm(f64::from(c.commits), s_com)
                + 0.3 * lnorm(c.lines as f64, s_lin)
        });
        let complexity = 0.6 * lnorm(f64::from(s.complexity.decisions), s_dec)
            + 0.4 * lnorm(f64::from(s.complexity.lines), s_lines);
        let fan_in = lnorm(f64::from(s.fan_in), s_fan);
        s.parts = ScoreParts { churn: churn_n, complexity, fan_in };
        let test = files[id.file as usize].test;
        s.score = score(churn_n, complexity, fan_in) * if test { 0.5 } else { 1.0 };
    }
    Measures { basis, files, symbols }
}

fn score(churn: Option<f64>, complexity: f64, fan_in: f64) -> f64 {
    let structure = 0.6 * complexity + 0.4 * fan_in;
    match churn {
        Some(c) => c * (0.5 + 0.5 * structure),
        None => structure,
    }
}

/// Definitions that are units of change: functions, methods and data types.
/// Classes and modules are left out: their churn is their members'.
fn hotspot_kind(kind: SymbolKind) -> bool {
    kind.is_callable()
        || matches!(
            kind,
            SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Union
                | SymbolKind::Record
                | SymbolKind::Interface
                | SymbolKind::Trait
        )
}

#[cfg(test)]
mod tests;
