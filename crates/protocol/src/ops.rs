//! The closed set of operations every driver calls.
//!
//! The CLI's subcommands, `ironbees mcp`, the HTTP server and our own agents do
//! not each define what they can do: they all call these operations through the
//! engine's registry. An [`Operation`] names one; its request type implements
//! [`Op`], which ties it to its response type, so a handler, a driver and a
//! schema all agree on the shapes by construction. The tool a model sees is the
//! operation's [`Operation::name`], [`Operation::description`] and the JSON
//! Schemas derived (schemars) from the request and the response.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::{BuildResult, EditResult, ExecResult, FileChange, TestResult, TransactionSummary};

/// What an operation does to the world, for approval policies and tool hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Effect {
    /// Reads the project and the index only (the index may be refreshed).
    Read,
    /// Writes project files, through the edit engine (journaled, undoable).
    Edit,
    /// Runs project commands in the sandbox (builds, tests, any command).
    Run,
    /// Changes the edit history or the index wholesale (undo, redo, rebuild).
    History,
    /// Acts on something outside the project that ironbees cannot see into (an
    /// outside tool: a database, a ticket system, the network).
    External,
}

/// Where a tool comes from: ironbees itself, or an outside server (an MCP server
/// configured under `mcp.servers`, its tools named `server.tool`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum ToolSource {
    BuiltIn,
    Server { server: String },
}

macro_rules! operations {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $title:literal, $effect:ident, $desc:expr; )*) => {
        /// Every operation, by its tool name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
        #[non_exhaustive]
        pub enum Operation {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
        }

        impl Operation {
            /// Every operation, in declaration order (the order tools are listed in).
            pub const ALL: &'static [Operation] = &[$(Operation::$variant,)*];

            /// The tool name (`understand`, `localize`, `search_project`, ...).
            pub fn name(self) -> &'static str {
                match self { $(Operation::$variant => $name,)* }
            }

            /// A short human title.
            pub fn title(self) -> &'static str {
                match self { $(Operation::$variant => $title,)* }
            }

            pub fn effect(self) -> Effect {
                match self { $(Operation::$variant => Effect::$effect,)* }
            }

            /// What a model reads to choose the tool.
            pub fn description(self) -> &'static str {
                match self { $(Operation::$variant => $desc,)* }
            }

            pub fn from_name(name: &str) -> Option<Operation> {
                match name { $($name => Some(Operation::$variant),)* _ => None }
            }
        }
    };
}

operations! {
    // --- the six pillars ---------------------------------------------------------------
    Understand = "understand", "Understand code", Read,
        "Understand a file, directory, symbol or question in ONE call: skeleton, symbols \
with signatures, dependencies and dependents, call graph (calls in/out), PageRank, hotspots \
(git churn), impact radius (dependents, affected tests), and a synthesized report \
(architectural role, complexity with fan-in/fan-out, risks, recommendations), plus guidance \
with ready next tool calls. `target` may be a path, a symbol (`Server.start`) or a question \
in English or Korean. Answers include each file's `hash` to pass as `expectedHash` to \
`change`. Bounded by `budget` tokens.";
    Change = "change", "Change code (checked, reversible)", Edit,
        "Change code safely: edits (targetString/replacementString, lineRange, \
replaceSymbol by qualifiedName, insert, create, delete, rename), each with `expectedHash` \
(sha256 of the file as you read it), applied as ONE all-or-nothing journaled transaction. \
PREVIEW BY DEFAULT: without options.dryRun=false nothing is written and you get the diffs \
and the impact report (changed symbols, affected files and hotspots, breaking-change risk, \
suggested tests with priority). With dryRun=false the edit is applied, checked (no new \
syntax errors; check=build also builds) and rolled back automatically when the check fails; \
the answer has the transactionId for `undo`. Errors (NO_MATCH, AMBIGUOUS_MATCH, \
HASH_MISMATCH, PATH_OUTSIDE_ROOT) change nothing and carry a recovery strategy.";
    Navigate = "navigate", "Navigate symbols", Read,
        "Navigate the code graph: definition, references (the default), callers, callees \
(with depth), implementations and type hierarchy (supertypes and subtypes) of a symbol \
(`Server.start`, `parse`) or of `path:line`. Results carry path, line, the enclosing \
definition and the source line.";
    Read = "read", "Read a file", Read,
        "Read a file: full (large files are cut with a warning), skeleton (signatures and \
first doc lines with the file's true line numbers, bodies elided), fragment (lineRange \
\"10-40\" or a definition by `symbol`), or diff (`against`: HEAD or an edit transaction \
id). Always from disk, with the file's current sha256 `hash` (the next `expectedHash`).";
    Write = "write", "Write a new file", Edit,
        "Create a file from `content`, a built-in `template` (module, test, class; for the \
file's language, with `variables`), or `from` an existing file (copied with its name \
replaced in every case form: snake_case, CamelCase, kebab-case, UPPER_CASE). Journaled and \
undoable; refuses to overwrite unless `overwrite` is true.";
    Manage = "manage", "Manage project state", History,
        "Manage the project: `status` (index, freshness, recent edits, test tool), `undo` / \
`redo` (an edit transaction, default the newest; refused if a file changed since), \
`history` (with `id`: that transaction's diffs), `rebuild` (the index, incremental or full), \
`test` (detect and run the project's tests in the sandbox, optionally only `targets`; \
progress notifications while it runs).";

    // --- code intelligence ---------------------------------------------------------------
    Symbols = "symbols", "List definitions", Read,
        "List definitions from the index: by name glob (`parse_*`, `Router.*`), kind \
(function, class, method, struct, ...), file or directory. Each with path, line range, \
qualified name and signature.";
    Skeleton = "skeleton", "Outline a file", Read,
        "The skeleton of one file: signatures, type definitions and first doc lines with \
the file's true line numbers, bodies elided, and how many tokens that saves.";
    Search = "search", "Search definitions", Read,
        "Find definitions by name (typos and prefixes too), words, path or error message: \
BM25, name, path, verbatim-phrase and graph-neighbour retrievers fused by rank, weighted by \
the kind of query. Each hit names the retrievers that found it.";
    Localize = "localize", "Localize an issue", Read,
        "The files an issue, bug report, question or stack trace is most likely about, best \
first, with evidence (matching definitions and lines, stack frames, literals, graph \
neighbours).";
    Repomap = "repomap", "Map the repository", Read,
        "A ranked map of the repository: skeleton lines of the most central definitions \
(PageRank over references, personalized by `focus` files or directories and a `query`), \
fitted exactly to a token budget.";
    Graph = "graph", "Dependency and call graphs", Read,
        "File dependencies (`deps`, with `reverse` for dependents) and call trees \
(`callers`, `callees`, `calls`) of a file, `path:line` or qualified name, as a tree or \
Mermaid; guessed edges are marked and not walked through.";
    Impact = "impact", "Impact of a change", Read,
        "What a change to a file or definition reaches: dependents with their distance, the \
impact radius, the risk, and the test files likely affected.";
    Hotspots = "hotspots", "Find hotspots", Read,
        "Files and definitions that change often (git churn, recency-weighted) and are \
complex and depended on; ranked by structure alone when there is no history, and the answer \
says why.";
    Report = "report", "Architecture report", Read,
        "An architecture report: overview, central files and definitions with their roles, \
hotspot clusters, blast radius, dependency cycles, insights and a Mermaid module map.";
    Status = "status", "Index status", Read,
        "The index's state: files, symbols and references per language, files skipped and \
why, files with syntax errors, and whether the index is up to date with the files.";
    Index = "index", "Build the index", Read,
        "Build or refresh the index (incremental: only changed files are parsed; `rebuild` \
starts over), and with it the search index and the stored project snapshot, so \
that the queries after it pay for neither.";

    // --- edit history ----------------------------------------------------------------------
    Undo = "undo", "Undo an edit", History,
        "Undo an edit transaction (the newest applied one, or `id`; a unique prefix works). \
Refused with HASH_MISMATCH when a file changed since, naming the later change.";
    Redo = "redo", "Redo an edit", History,
        "Re-apply the most recently undone edit (or `id`), when its files are still as the \
undo left them.";
    History = "history", "Edit history", Read,
        "Edit transactions, newest first (id, time, state, description, files); with `id`, \
that transaction's per-file diffs.";

    // --- project commands --------------------------------------------------------------------
    Build = "build", "Build the project", Run,
        "Detect the project (cargo, dotnet, go, TypeScript) and build it in the sandbox: \
errors and warnings with code, file, line and column.";
    Test = "test", "Run the tests", Run,
        "Run the project's tests in the sandbox (cargo/nextest, pytest, dotnet, go, jest, \
vitest, or a given command): totals, and each failure with its message and location. A test \
tool that is not installed is COMMAND_NOT_FOUND, not a failed test.";
    Exec = "exec", "Run a command", Run,
        "Run one command in the sandbox: network off, the workspace writable, the rest \
read-only, secrets hidden, the whole process tree killed at the end; exit code, signal, \
the limit that fired, bounded output and the isolation in force.";

    // --- seed 002's layers -------------------------------------------------------------------
    Route = "route", "Route a request", Read,
        "The router's decision for a request in English or Korean (seed 002, Layer 1), \
without running it: the intent, whether it needs a change (plan, code, validate) or can be \
answered from the index, the retrievers to run and how many results, within a budget.";
    GuardCheck = "guard_check", "Check a change against the guardrails", Read,
        "Check a change against the project's guardrails (lines and files changed, secrets, \
hard-coded URLs, the project's own rules): the work tree against HEAD (default), the staged \
change, a revision range, or a unified diff given as text. Findings with rule, severity, \
file and line; `blocked` when a blocker fired.";

    // --- superseded tools, kept for clients written against them -------------------------------
    SearchProject = "search_project", "Search the project (superseded)", Read,
        "Superseded by `navigate` and `understand`. Search definitions by name and rank \
files for a query (identifiers, a question, an error message).";
    ReadCode = "read_code", "Read code (superseded)", Read,
        "Superseded by `read`. Read a file in full, as a skeleton, or a fragment by lineRange.";
    EditCode = "edit_code", "Edit code (superseded)", Edit,
        "Superseded by `change`. Apply edits (replace by targetString or lineRange, create, \
delete) at once as one checked transaction; dryRun defaults to false here.";
    AnalyzeRelationship = "analyze_relationship", "Analyze relationships (superseded)", Read,
        "Superseded by `navigate` (calls, references) and `understand` (dependencies). \
Relationships of a symbol or file: calls (upstream = callers, downstream = callees), \
references, dependencies (upstream = dependents, downstream = imports).";
    ListDirectory = "list_directory", "List a directory (superseded)", Read,
        "Superseded by `understand` on a directory. List a directory (gitignore-aware), with \
each indexed file's language, line count and number of definitions.";
    GetHierarchy = "get_hierarchy", "Type hierarchy (superseded)", Read,
        "Superseded by `navigate` with action `hierarchy`. Supertypes and subtypes of a type.";
    ManageProject = "manage_project", "Manage the project (superseded)", History,
        "Superseded by `manage`. status, undo, redo, history, rebuild or test.";
}

impl Operation {
    /// The pillar or operation a superseded tool's answers point to.
    pub fn superseded_by(self) -> Option<Operation> {
        match self {
            Operation::SearchProject => Some(Operation::Understand),
            Operation::ReadCode => Some(Operation::Read),
            Operation::EditCode => Some(Operation::Change),
            Operation::AnalyzeRelationship => Some(Operation::Navigate),
            Operation::ListDirectory => Some(Operation::Understand),
            Operation::GetHierarchy => Some(Operation::Navigate),
            Operation::ManageProject => Some(Operation::Manage),
            _ => None,
        }
    }

    pub fn read_only(self) -> bool {
        self.effect() == Effect::Read
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A request type of one operation, tied to its response type.
pub trait Op: Serialize + DeserializeOwned + JsonSchema + Send + Sync + 'static {
    const OPERATION: Operation;
    type Response: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
}

/// `impl Op for Request { OPERATION; Response }`, one line each.
#[macro_export]
macro_rules! impl_ops {
    ($( $req:ty => $op:ident, $resp:ty; )*) => {
        $( impl $crate::Op for $req {
            const OPERATION: $crate::Operation = $crate::Operation::$op;
            type Response = $resp;
        } )*
    };
}

// --- code intelligence ------------------------------------------------------------------------

/// `symbols`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SymbolsRequest {
    /// Name glob (`parse_*`, `*Error`); matched against the qualified name when it
    /// contains `.` or `::` (`Router.*`). Without glob characters: exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// function, method, class, struct, enum, interface, trait, ... (`symbols` lists
    /// the kinds in its error when one is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Only this file, directory or path glob (relative to the project root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Match the name without regard to case.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub ignore_case: bool,
    /// At most this many definitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// The answer of `symbols`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolsResponse {
    pub symbols: Vec<crate::Symbol>,
}

/// `skeleton`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkeletonRequest {
    /// The file, relative to the project root.
    pub path: String,
}

/// The answer of `skeleton`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkeletonResponse {
    pub path: String,
    pub language: String,
    #[serde(flatten)]
    pub skeleton: crate::Skeleton,
}

/// `status` (no arguments).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatusRequest {}

/// `index`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexRequest {
    /// More paths to leave out (gitignore syntax), on top of the configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Skip files larger than this many bytes (default 4 MiB, or the configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_size: Option<u64>,
    /// Start over instead of updating incrementally.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub rebuild: bool,
}

/// The answer of `index`: what this run did and what the index now holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexResponse {
    pub root: String,
    pub update: crate::UpdateReport,
    pub files: u64,
    pub symbols: u64,
    pub references: u64,
    pub imports: u64,
    pub languages: Vec<crate::LanguageStats>,
    pub skipped: Vec<crate::SkipGroup>,
    /// How the project snapshot (resolved graphs, ranks) was brought up to
    /// date; absent when it already was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotReport>,
}

/// How a project snapshot came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotReport {
    pub derivation: SnapshotDerivation,
    /// Files read again: changed, added or removed since the stored snapshot
    /// (every file when built).
    pub changed_files: u64,
    /// Files whose references were resolved again.
    pub resolved_files: u64,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SnapshotDerivation {
    /// The stored snapshot was current: decoded.
    Stored,
    /// The stored snapshot was updated for the files that changed since.
    Updated,
    /// Built from scratch (none stored, another build's or manifests', or too
    /// much changed).
    Built,
}

/// `search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchRequest {
    /// A name (typos and prefixes too), words, a path or an error message.
    pub query: String,
    /// Number of hits (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// Add the configured embedding model (`llm.embeddings`) as one more retriever.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub embeddings: bool,
}

/// `localize`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalizeRequest {
    /// The request: an issue, a bug report, a question, a stack trace (at most 1 MiB).
    pub query: String,
    /// Number of files (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// Include every file's feature values.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub explain: bool,
    /// Add the configured embedding model's ranking as one more vote.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub embeddings: bool,
    /// Feature weights for experiments (`only=text`, `graph=0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<String>,
    /// Ask the configured model which of the first candidates the request needs
    /// (shown their outlines) and fuse its picks with the ranking as one vote.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub rerank: bool,
}

/// The answer of `localize`: files best first, each with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LocalizeResponse {
    pub files: Vec<crate::FileResult>,
    /// With `rerank`: what the model was asked and answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RerankReport>,
}

/// The model's part in a reranked `localize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RerankReport {
    /// The model that answered (`provider/model`).
    pub model: String,
    /// The candidates it was shown, best first by the signals.
    pub candidates: Vec<String>,
    /// The candidates it picked, in its order (paths it made up are dropped).
    pub picks: Vec<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Why its answer was not used (the ranking is then the signals' alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::ErrorInfo>,
}

/// `repomap`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepomapRequest {
    /// The token budget (o200k) the map is fitted to (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
    /// Files or directories to personalize the ranking toward (not shown themselves).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub focus: Vec<String>,
    /// Words, names or an issue to personalize the ranking toward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

/// Which history `hotspots` and `report` read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryWindow {
    /// Read at most the newest N non-merge commits (default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_commits: Option<u32>,
    /// Only commits after this date (`2024-01-01`, `6 months ago`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Do not read the git history: rank by structure only.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub no_history: bool,
}

/// `hotspots`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HotspotsRequest {
    /// How many files and definitions (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<u32>,
    /// Only files under this directory (relative to the project root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    /// Half-life of a commit's weight, in days (default 90).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_life_days: Option<f64>,
    #[serde(default)]
    pub history: HistoryWindow,
}

/// `graph`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GraphRequest {
    /// deps (what it depends on), dependents, calls (every call leaving it, one
    /// level), callers, callees.
    pub query: crate::GraphQuery,
    /// A file, a directory, `path:line`, `path::name`, or a (qualified) name.
    pub target: String,
    /// Levels to walk (default 1 for deps and dependents, 3 for callers and callees).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// Take every definition a name matches instead of refusing an ambiguous name.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub all: bool,
    /// Leave out guessed edges (references resolved by name only).
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub no_guesses: bool,
    /// Stop after this many nodes (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes: Option<u32>,
}

/// `impact`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImpactRequest {
    /// A file, a directory, `path:line` or a (qualified) name.
    pub target: String,
    /// Levels of dependents to follow (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// At most this many dependents listed (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Take every definition a name matches instead of refusing an ambiguous name.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub all: bool,
}

/// `report`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportRequest {
    /// Files and definitions per ranking (default 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<u32>,
    /// Half-life of a commit's weight, in days (default 90).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_life_days: Option<f64>,
    #[serde(default)]
    pub history: HistoryWindow,
}

// --- edit history ----------------------------------------------------------------------------

/// `undo` and `redo`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoRequest {
    /// The transaction (a unique prefix works); default the newest applied edit (for
    /// `redo`, the most recently undone one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Show what would change and write nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// `redo`: the same fields as [`UndoRequest`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedoRequest {
    /// The transaction to re-apply; default the most recently undone edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Show what would change and write nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// `history`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryRequest {
    /// One transaction (a unique prefix works): its summary and per-file diffs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// How many transactions to list, newest first (default 20, at most 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// The answer of `history`: the list, or with `id` that one transaction and its
/// changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryResponse {
    pub transactions: Vec<TransactionSummary>,
    /// With `id`: the transaction's per-file diffs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<FileChange>>,
}

// --- project commands ----------------------------------------------------------------------

/// How a project command is confined, on top of the `sandbox:` configuration. Every
/// field is optional; the configuration and the built-in defaults fill the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxOptions {
    /// Wall-clock limit (`90s`, `10m`, `1h`; plain numbers are seconds); kills the
    /// whole process tree. Default 10m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Memory limit for the tree (`512M`, `2G`). Default 4G.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// CPU-time limit per process (`30s`). Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Processes (and threads) at once. Default 512.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u32>,
    /// `off` (default: a private network namespace, loopback only) or `on`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// More writable paths besides the workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<String>,
    /// More paths to hide, besides the built-in secret locations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hide: Vec<String>,
    /// Run on a throwaway layer over the workspace: the command's writes are discarded.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub throwaway: bool,
    /// The workspace (writable; everything else read-only). Default the project root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// `auto`, `namespaces`, `bubblewrap`, `container` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The image for the container backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Refuse to run (SANDBOX_UNAVAILABLE) when a protection is missing here.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub strict: bool,
    /// Kill the command when it has written this much output (default 256M).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<String>,
}

/// `build`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuildRequest {
    #[serde(default)]
    pub sandbox: SandboxOptions,
}

/// `test`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestRequest {
    #[serde(default)]
    pub sandbox: SandboxOptions,
    /// cargo projects: run the tests with `cargo nextest`.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub nextest: bool,
    /// Run this command instead of the detected tool; judged by its exit code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Only these tests (files, `file::name`, test names), with the detected tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
}

/// What the build and test runners detected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectInfo {
    pub root: String,
    /// `cargo`, `python`, `dotnet`, `go` or `node`.
    pub kind: String,
    /// `cargo_test`, `nextest`, `pytest`, `dotnet_test`, `go_test`, `jest` or `vitest`.
    pub test_tool: String,
    /// The `.sln`/`.csproj` built (.NET), when there is exactly one at the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Node: TypeScript is installed, so `tsc --noEmit` is the build.
    pub typescript: bool,
}

/// The answer of `build`: the parsed result, and the run when something ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuildResponse {
    pub project: ProjectInfo,
    pub build: BuildResult,
    /// The build command's run (null when the project has nothing to build).
    pub exec: Option<ExecResult>,
}

/// The answer of `test`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestResponse {
    /// The detected project (absent when a command was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<ProjectInfo>,
    pub test: TestResult,
    pub exec: ExecResult,
}

/// `exec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecRequest {
    /// The program and its arguments.
    pub command: Vec<String>,
    #[serde(default)]
    pub sandbox: SandboxOptions,
    /// Where the command starts, relative to the workspace (default its root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// `route`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RouteRequest {
    /// The request, as a user would type it.
    pub request: String,
    /// Time and tokens the retrieval may take (default: 3000 ms, the default
    /// token budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::RouteBudget>,
}

/// `guard_check`: which change. At most one of `diff`, `staged` and `range`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardCheckRequest {
    /// A unified diff (as `git diff` or `diff -u` writes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// What `git commit` would record: the index against HEAD.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub staged: bool,
    /// A revision range (`main..HEAD`, `HEAD~3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
}

impl_ops! {
    RouteRequest => Route, crate::Route;
    GuardCheckRequest => GuardCheck, crate::GuardReport;
    SymbolsRequest => Symbols, SymbolsResponse;
    SkeletonRequest => Skeleton, SkeletonResponse;
    StatusRequest => Status, crate::IndexStatus;
    IndexRequest => Index, IndexResponse;
    SearchRequest => Search, crate::SearchResults;
    LocalizeRequest => Localize, LocalizeResponse;
    RepomapRequest => Repomap, crate::RepoMap;
    HotspotsRequest => Hotspots, crate::Hotspots;
    GraphRequest => Graph, crate::GraphView;
    ImpactRequest => Impact, crate::Impact;
    ReportRequest => Report, crate::ArchitectureReport;
    crate::UnderstandRequest => Understand, crate::UnderstandResponse;
    crate::ChangeRequest => Change, crate::ChangeResponse;
    crate::NavigateRequest => Navigate, crate::NavigateResponse;
    crate::ReadRequest => Read, crate::ReadResponse;
    crate::WriteRequest => Write, crate::WriteResponse;
    crate::ManageRequest => Manage, crate::ManageResponse;
    UndoRequest => Undo, EditResult;
    RedoRequest => Redo, EditResult;
    HistoryRequest => History, HistoryResponse;
    BuildRequest => Build, BuildResponse;
    TestRequest => Test, TestResponse;
    ExecRequest => Exec, ExecResult;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for op in Operation::ALL {
            assert!(seen.insert(op.name()), "{op} twice");
            assert_eq!(Operation::from_name(op.name()), Some(*op));
            let json = serde_json::to_string(op).unwrap();
            assert_eq!(json, format!("\"{}\"", op.name()));
            assert!(!op.description().is_empty() && !op.title().is_empty());
        }
        assert_eq!(Operation::from_name("nope"), None);
    }
}
