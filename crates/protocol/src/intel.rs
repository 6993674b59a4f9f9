//! Answers of the code-intelligence operations (`status`, `index`, `skeleton`,
//! `search`, `localize`, `repomap`, `hotspots`): what `code-index` computes, as
//! plain data every driver and client reads. `code-index` fills these types in
//! and re-exports them under its own names.

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
    Text { symbol: String, line: u32, score: f32 },
    /// The file is close in the dependency graph to files found by other signals.
    Graph { near: String },
    /// An extra retriever (embeddings) ranked one of its definitions high: the
    /// file's best one (`symbol` empty for the file's top level) and its rank
    /// among the files that retriever found.
    Similar { retriever: String, symbol: String, line: u32, rank: u32 },
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
