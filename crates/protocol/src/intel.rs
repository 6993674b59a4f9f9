//! Answers of the code-intelligence operations (`status`, `index`, `skeleton`,
//! `search`, `localize`, `repomap`, `hotspots`, `graph`, `impact`, `report`): what
//! `code-index`, `code-graph` and `retrieval` compute, as plain data every driver
//! and client reads. Those crates fill these types in and re-export them under
//! their own names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{ErrorCode, FileSkip, LanguageStats, SymbolKind};

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A file that parsed with syntax errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ParseProblem {
    pub path: String,
    pub error_nodes: u32,
}

/// Skipped files of one kind, with a few examples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkipGroup {
    pub code: ErrorCode,
    pub count: u64,
    pub examples: Vec<FileSkip>,
}

/// Files on disk that differ from the index.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Staleness {
    pub modified: u64,
    pub added: u64,
    pub deleted: u64,
    /// Up to ten changed paths.
    pub examples: Vec<String>,
}

/// What the index holds and how fresh it is (`status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexStatus {
    pub root: String,
    pub database: String,
    pub schema_version: i64,
    pub files: u64,
    pub symbols: u64,
    pub references: u64,
    pub imports: u64,
    pub languages: Vec<LanguageStats>,
    pub skipped: Vec<SkipGroup>,
    pub files_with_syntax_errors: u64,
    /// The files with the most syntax errors (up to ten).
    pub syntax_errors: Vec<ParseProblem>,
    /// Files that are not valid UTF-8, indexed with replacement characters.
    pub invalid_utf8: Vec<String>,
    /// Unix time (seconds) the last complete update finished; None if never.
    pub last_update: Option<i64>,
    /// Files changed on disk since the last update; None when not computed
    /// (a summary skips the walk it needs).
    pub stale: Option<Staleness>,
}

/// What one update did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct UpdateReport {
    /// Files looked at (indexed or skipped).
    pub files_seen: u64,
    pub added: u64,
    pub modified: u64,
    pub deleted: u64,
    pub unchanged: u64,
    /// Files read and parsed in this run.
    pub parsed: u64,
    /// Changed files whose content was already in the index (renames, copies, touches).
    pub reused: u64,
    /// Files skipped in this run (binary, too large, unknown language, ...).
    pub skipped: u64,
    pub duration_ms: u64,
}

/// A rendered skeleton and how much smaller it is than the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Skeleton {
    /// Lines as `  12│ text`, with `⋮` where lines were elided.
    pub text: String,
    pub definitions: usize,
    pub file_lines: u32,
    pub shown_lines: usize,
    pub file_tokens: usize,
    pub skeleton_tokens: usize,
    /// `skeleton_tokens / file_tokens` (0 for an empty file).
    pub ratio: f64,
}

/// A definition as results show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolRef {
    pub path: String,
    pub qualified_name: String,
    pub kind: SymbolKind,
    pub line: u32,
    pub end_line: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueryKind {
    /// One identifier: `Router`, `parse_args`, `http::Client::send`.
    Symbol,
    /// A path: `src/app/models.py`, `lib/util.go`.
    File,
    /// A stack trace or an error message.
    ErrorTrace,
    /// Words: "where are retries configured".
    Concept,
}

/// The weight of each retriever in the fusion.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MixWeights {
    pub bm25: f64,
    pub name: f64,
    pub path: f64,
    pub literal: f64,
    pub graph: f64,
    /// The caller's extra retriever, when there is one.
    pub extra: f64,
}

/// Which retriever found a hit, and at what rank (1-based).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Matched {
    pub retriever: String,
    pub rank: u32,
}

/// One result: a definition (or a file's top level, kind `file`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchHit {
    pub path: String,
    pub qualified_name: String,
    pub kind: String,
    pub line: u32,
    pub end_line: u32,
    /// The fused score (sum of `weight / (60 + rank)`).
    pub score: f64,
    pub matched: Vec<Matched>,
}

/// What `search` found, with how it read the query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchResults {
    pub query_kind: QueryKind,
    pub weights: MixWeights,
    pub hits: Vec<SearchHit>,
}

/// Why a file is in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Evidence {
    /// A stack-trace frame points into the file.
    Frame { line: Option<u32>, function: Option<String> },
    /// The text names the file (or a module that is this file).
    PathMentioned { text: String },
    /// The file defines an identifier the text mentions.
    Defines { symbol: String, line: u32, mention: String },
    /// The file contains a quoted string or option from the text.
    Literal { text: String, line: u32 },
    /// A chunk of the file matches the text (BM25).
    Text { symbol: String, line: u32, score: f64 },
    /// The file is close in the dependency graph to files found by other signals.
    Graph { near: String },
    /// An extra retriever (embeddings) ranked one of its definitions high: the
    /// file's best one (`symbol` empty for the file's top level) and its rank
    /// among the files that retriever found.
    Similar { retriever: String, symbol: String, line: u32, rank: u32 },
    /// A model shown the first candidates' outlines picked the file, `rank`-th
    /// (`localize`'s rerank).
    Picked { model: String, rank: u32 },
}

/// One ranked file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileResult {
    pub path: String,
    pub score: f64,
    pub evidence: Vec<Evidence>,
    /// Feature values by name, with `explain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub features: Option<std::collections::BTreeMap<String, f64>>,
}

/// One definition in the map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MapSymbol {
    pub qualified_name: String,
    pub kind: SymbolKind,
    pub line: u32,
    pub rank: f64,
}

/// One file in the map, with the definitions shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MapFile {
    pub path: String,
    pub role: FileRole,
    pub symbols: Vec<MapSymbol>,
}

/// What personalized the ranking.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct MapSeeds {
    pub focus: Vec<String>,
    /// Files the query names.
    pub files: Vec<String>,
    /// Definitions the query names (`path:line qualified_name`).
    pub symbols: Vec<String>,
    /// Definitions matched by text search.
    pub search_hits: usize,
}

/// A rendered repository map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RepoMap {
    pub text: String,
    /// Tokens of `text` (`o200k_base`), at most `budget`.
    pub tokens: usize,
    pub budget: usize,
    /// Files shown with definitions, in map order.
    pub files: Vec<MapFile>,
    /// Files listed by path only, after them.
    pub more_files: Vec<String>,
    /// Definitions shown, and ranked definitions there were to choose from.
    pub definitions: usize,
    pub candidates: usize,
    pub seeds: MapSeeds,
}

/// Churn of a file or definition over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChurnStats {
    pub commits: u32,
    /// Lines added plus deleted (for a definition: changed lines inside it).
    pub lines: u64,
    /// Recency-weighted commits.
    pub recency: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authors: Option<u32>,
    /// Unix seconds of the newest change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_change: Option<i64>,
}

/// Size and decision points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CodeComplexity {
    pub lines: u32,
    /// McCabe decision points (the whole file, or the definition).
    pub decisions: u32,
    /// Definitions in the file (0 for a definition).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub definitions: u32,
    /// The most complex function's cyclomatic number (1 + its decisions), for a file.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_cyclomatic: u32,
}

/// The normalized parts a score is made of (0..1 each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScoreParts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub churn: Option<f64>,
    pub complexity: f64,
    pub fan_in: f64,
}

/// What the scores are based on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HotspotBasis {
    /// Churn × structure.
    History,
    /// No history: complexity and fan-in only.
    Structure,
}

/// The history the scores used, or why there was none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryInfo {
    pub available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub commits: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oldest: Option<i64>,
    pub shallow: bool,
    /// Whether definitions have their own churn (line ranges were read).
    pub symbol_churn: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileHotspot {
    pub path: String,
    pub score: f64,
    /// None without history (not zero: unknown).
    pub churn: Option<ChurnStats>,
    pub complexity: CodeComplexity,
    /// Files depending on this one.
    pub fan_in: u32,
    pub test: bool,
    pub parts: ScoreParts,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolHotspot {
    #[serde(flatten)]
    pub symbol: SymbolRef,
    pub score: f64,
    pub churn: Option<ChurnStats>,
    pub complexity: CodeComplexity,
    /// Distinct definitions (and files' top levels) referencing it.
    pub fan_in: u32,
    pub parts: ScoreParts,
}

/// Hotspots of a project, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hotspots {
    pub basis: HotspotBasis,
    pub history: HistoryInfo,
    pub files: Vec<FileHotspot>,
    pub symbols: Vec<SymbolHotspot>,
    /// Share of all changed lines (or commits, for binary-only histories) held by
    /// the top 10% of changed files; None without history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concentration: Option<f64>,
}

/// An architectural role.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FileRole {
    EntryPoint,
    Core,
    Interface,
    Model,
    Utility,
    Config,
    Test,
    Peripheral,
}

impl FileRole {
    pub const ALL: [FileRole; 8] = [
        FileRole::EntryPoint,
        FileRole::Core,
        FileRole::Interface,
        FileRole::Model,
        FileRole::Utility,
        FileRole::Config,
        FileRole::Test,
        FileRole::Peripheral,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FileRole::EntryPoint => "entry point",
            FileRole::Core => "core",
            FileRole::Interface => "interface",
            FileRole::Model => "model",
            FileRole::Utility => "utility",
            FileRole::Config => "config",
            FileRole::Test => "test",
            FileRole::Peripheral => "peripheral",
        }
    }
}

impl std::fmt::Display for FileRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Staleness {
    pub fn is_fresh(&self) -> bool {
        self.modified == 0 && self.added == 0 && self.deleted == 0
    }
}

// --- graphs, impact, the architecture report ----------------------------------------

/// How a reference was tied to a definition.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Defined in the same class/module scope as the reference.
    Local,
    /// A method of the type the file gives the receiver (`x = Foo()`, `x: Foo`,
    /// `Foo::new()`) or one of its bases, or (`self.m()`) of a base of the
    /// enclosing class; the weight is split if several types have that name.
    Receiver,
    SameFile,
    /// Imported by name, or defined in a file this file imports.
    Imported,
    /// The only definition of that name in the project.
    Global,
    /// One of several definitions of that name; the weight is split.
    Ambiguous,
    /// A member call on a receiver of unknown type (`x.update()`) matched by its
    /// name alone, in the same file, a file this file imports or the project: a
    /// guess, never a dependency or a sure caller (see `depgraph::edge_trust`).
    /// For ranking it keeps the weight that name resolution gives (split between
    /// the candidates): the file graph is tuned to count every plausible link, and
    /// localization measured the same with it, one instance worse without.
    NameOnly,
}

/// What a target turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResolvedKind {
    File,
    Directory,
    Symbol,
}

/// Which graph to walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GraphQuery {
    /// What the target depends on (files for a file, definitions for a symbol).
    Deps,
    /// What depends on the target.
    Dependents,
    /// The call edges leaving the target (every definition of a file), one level.
    Calls,
    /// Who calls the target, transitively.
    Callers,
    /// What the target calls, transitively.
    Callees,
}

/// What an edge is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// A resolved import (files).
    Import,
    /// References between files without an import.
    Reference,
    Call,
    Type,
    Use,
}

/// A node: a file, a definition, or a file's top-level code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GraphNode {
    pub id: usize,
    pub path: String,
    /// The definition's qualified name; None for a file (or its top level).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<SymbolKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub distance: u32,
    /// The node it was first reached from (None for the target's own nodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
}

/// An edge, always from the depending node to the node depended on (caller to
/// callee), whichever direction the query walked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GraphEdge {
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    /// How sure the edge is (0..1): the reference's trust, 1 for imports.
    pub confidence: f64,
    /// Where the reference is (in the `from` node's file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// What a target the user typed turned out to be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResolvedTarget {
    /// What the user wrote.
    pub spec: String,
    pub kind: ResolvedKind,
    /// The file(s) the target is, or the files its definitions are in.
    pub files: Vec<String>,
    /// The definitions, for a symbol target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<SymbolRef>,
}

/// The answer to a graph query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GraphView {
    pub query: GraphQuery,
    pub target: ResolvedTarget,
    pub depth: u32,
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    /// External modules the target files import (`deps` of files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub externals: Vec<String>,
    /// The walk stopped at the node limit.
    pub truncated: bool,
}

/// What changing a target affects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Impact {
    pub target: ResolvedTarget,
    pub radius: Radius,
    /// Dependent files, nearest first.
    pub dependents: Vec<Dependent>,
    /// Referencing definitions, nearest first (definition targets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<SymbolDependent>,
    /// References that may mean the target (one of several same-named
    /// definitions); not followed further.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub possible: Vec<SymbolDependent>,
    pub tests: Vec<AffectedTest>,
    /// Dependents (files, definitions) found but not listed (depth, limit).
    pub unlisted: usize,
}

/// A file depending on the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dependent {
    pub path: String,
    pub distance: u32,
    /// The file it depends on, one step closer to the target.
    pub via: String,
    pub test: bool,
}

/// A definition (or a file's top level) referencing the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolDependent {
    pub path: String,
    /// None for a file's top-level code.
    pub qualified_name: Option<String>,
    pub kind: Option<SymbolKind>,
    pub line: u32,
    pub distance: u32,
    /// The definition it references, one step closer to the target.
    pub via: String,
}

/// A test file likely affected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AffectedTest {
    pub path: String,
    pub priority: AffectedTestPriority,
    /// Distance in the closure; None when only its name ties it to the target.
    pub distance: Option<u32>,
    /// The convention that makes it a test file.
    pub convention: String,
    pub reasons: Vec<String>,
    /// Test functions in it that reach the target (or are named after it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<String>,
}

/// How far a change reaches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Radius {
    /// Dependent files at distance 1, within 2, within 3, at any distance.
    pub direct: u32,
    pub within_2: u32,
    pub within_3: u32,
    pub total: u32,
    /// `Σ 0.5^(distance - 1)` over dependent files: near dependents weigh most.
    pub weighted: f64,
    /// `total` over the number of files in the project.
    pub share: f64,
    pub risk: ImpactRisk,
}

/// How risky a change is, by how far it reaches.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ImpactRisk {
    Low,
    Medium,
    High,
}

/// Test priority.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AffectedTestPriority {
    High,
    Medium,
    Low,
}

/// The architecture report (`report`): overview, central files and definitions
/// with roles, hotspot clusters, blast radius, cycles, insights, a module map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArchitectureReport {
    pub title: String,
    pub overview: Overview,
    pub history: HistoryInfo,
    pub top_files: Vec<CentralFile>,
    pub top_symbols: Vec<CentralSymbol>,
    pub roles: Vec<RoleCount>,
    pub hotspot_basis: HotspotBasis,
    pub hotspots: Vec<FileHotspot>,
    pub hotspot_clusters: Vec<HotspotCluster>,
    /// Share of changed lines in the top 10% of changed files (with history).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concentration: Option<f64>,
    pub blast_radius: Vec<BlastRadius>,
    /// Import cycles, largest first.
    pub cycles: Vec<Vec<String>>,
    pub insights: Vec<Insight>,
    /// A Mermaid flowchart of directories and their dependencies.
    pub mermaid: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Overview {
    pub files: u32,
    pub lines: u64,
    pub definitions: u32,
    pub languages: Vec<LanguageShare>,
    pub test_files: u32,
    /// Vendored or minified files (left out of every ranking).
    pub vendored_files: u32,
    /// Resolved imports between files, and references between definitions.
    pub import_edges: u32,
    pub reference_edges: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CentralFile {
    pub path: String,
    /// PageRank over the file graph (the project sums to 1).
    pub score: f64,
    pub role: FileRole,
    /// Why the role was inferred.
    pub why: String,
    pub fan_in: u32,
    pub fan_out: u32,
    pub lines: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CentralSymbol {
    #[serde(flatten)]
    pub symbol: SymbolRef,
    /// PageRank over the definition graph.
    pub score: f64,
    pub role: FileRole,
    /// Distinct files referencing it (other than its own).
    pub used_by_files: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BlastRadius {
    pub path: String,
    #[serde(flatten)]
    pub radius: Radius,
    /// Test files likely affected.
    pub tests: u32,
}

/// Hotspot files that depend on each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HotspotCluster {
    /// Their common directory (`""` for the root).
    pub directory: String,
    pub files: Vec<String>,
    /// Sum of their hotspot scores.
    pub score: f64,
    /// Dependencies among them.
    pub edges: u32,
}

/// Something worth acting on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Insight {
    pub kind: InsightKind,
    pub severity: InsightSeverity,
    pub title: String,
    pub description: String,
    pub files: Vec<String>,
    pub recommendation: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InsightKind {
    GodModule,
    HighBlastRadius,
    HotspotConcentration,
    UntestedHotspot,
    DependencyCycle,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LanguageShare {
    pub language: String,
    pub files: u32,
    pub lines: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoleCount {
    pub role: FileRole,
    pub files: u32,
    pub share: f64,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum InsightSeverity {
    High,
    Medium,
    Low,
}
