//! Wire types of the six pillars (`understand`, `change`, `navigate`, `read`,
//! `write`, `manage`), the guidance payload every answer carries, and the intent a
//! natural-language request is routed to.
//!
//! Field names are camelCase as in seed 004 (`target`, `depth`, `include`,
//! `contextSummary`, `nextActions`, `dryRun`, `includeImpact`, `autoRollback`).
//! Requests are lenient (every option has a default); answers are always
//! serialized in one shape. The MCP server, the CLI (`--json`) and the agent speak
//! these types.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    EditOp, EditResult, ErrorCode, ErrorInfo, LanguageStats, LineRange, TestResult,
    TransactionSummary,
};

// --- routing -------------------------------------------------------------------------

/// One of the six pillars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Pillar {
    Understand,
    Change,
    Navigate,
    Read,
    Write,
    Manage,
}

impl Pillar {
    pub const ALL: [Pillar; 6] = [
        Pillar::Understand,
        Pillar::Change,
        Pillar::Navigate,
        Pillar::Read,
        Pillar::Write,
        Pillar::Manage,
    ];

    /// The tool name (`understand`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Pillar::Understand => "understand",
            Pillar::Change => "change",
            Pillar::Navigate => "navigate",
            Pillar::Read => "read",
            Pillar::Write => "write",
            Pillar::Manage => "manage",
        }
    }
}

impl std::fmt::Display for Pillar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a piece of a request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TargetKind {
    /// A file or directory path (`src/auth.py`, `crates/edit/`).
    Path,
    /// A code identifier (`handleAuth`, `Server.start`, `edit::Engine`).
    Symbol,
    /// Text in quotes: a message, a literal to find.
    Quoted,
    /// A natural-language question.
    Question,
}

/// One target extracted from a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntentTarget {
    pub kind: TargetKind,
    pub text: String,
}

/// How wide an answer should look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Scope {
    File,
    Symbol,
    Project,
}

/// Constraints a request states ("2 levels deep", "preview only", "with impact").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntentConstraints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_impact: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_range: Option<LineRange>,
}

/// A natural-language request routed to a pillar (seed 004 §3.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    pub pillar: Pillar,
    /// The pillar's action: `comprehend`, `modify`, `add`, `references`, `callers`,
    /// `skeleton`, `diff`, `create`, `undo`, `test`, ...
    pub action: String,
    pub targets: Vec<IntentTarget>,
    pub constraints: IntentConstraints,
    /// 0..1: how sure the router is (one clear cue: ~0.8; cues for several pillars
    /// lower it; none: the fallback, 0.3).
    pub confidence: f64,
}

// --- guidance ------------------------------------------------------------------------

/// A tool call the agent can send as is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NextAction {
    /// 1 = do this first.
    pub priority: u8,
    /// The tool (`read`, `change`, `manage`, ...).
    pub tool: String,
    /// Its arguments, ready to send.
    pub arguments: serde_json::Value,
    /// What the call does, in one line.
    pub description: String,
    /// Why it is suggested.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rationale: String,
}

/// How serious a warning is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum WarningLevel {
    Info,
    Warning,
    Critical,
}

/// Something the agent should know before acting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    pub severity: WarningLevel,
    /// A stable code: an [`ErrorCode`] text (`INDEX_STALE`) or a warning's own
    /// (`HOTSPOT_AFFECTED`, `HIGH_FAN_IN`, `SYNTAX_ERRORS`, `TRUNCATED`).
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub affected: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mitigation: Option<String>,
}

/// What to do after an error with this code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecoveryStrategy {
    pub code: ErrorCode,
    /// The strategy in a sentence or two.
    pub strategy: String,
    /// Calls that carry it out, first one first.
    pub actions: Vec<NextAction>,
}

/// The guidance payload of every answer (seed 004 §3.4).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Guidance {
    /// One paragraph: what was looked at and what it means.
    pub context_summary: String,
    /// Prioritized, at most five.
    pub next_actions: Vec<NextAction>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// Present when the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryStrategy>,
}

/// A failed pillar call on the wire: the error, its recovery, and guidance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PillarError {
    #[serde(flatten)]
    pub error: ErrorInfo,
    pub guidance: Guidance,
}

// --- shared pieces ---------------------------------------------------------------------

/// How deep `understand` (and call graphs) go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Depth {
    Shallow,
    #[default]
    Standard,
    Deep,
}

impl Depth {
    /// Call-graph and dependency levels.
    pub fn levels(self) -> u32 {
        match self {
            Depth::Shallow => 1,
            Depth::Standard => 2,
            Depth::Deep => 3,
        }
    }
}

/// A definition, briefly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SymbolBrief {
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub signature: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Call sites calling it (resolved call edges).
    #[serde(default)]
    pub callers: u32,
    /// Definitions it calls.
    #[serde(default)]
    pub callees: u32,
}

/// A file another file depends on, or that depends on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileEdge {
    pub path: String,
    /// Import and reference weight between the two files.
    pub weight: f64,
    /// Whether an import statement ties them (else only references do).
    pub imported: bool,
}

/// A call between definitions. `path` and `line` locate the far end: the callee
/// for calls out of the subject, the call site for calls into it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallEdge {
    /// The calling definition (a file path for top-level code).
    pub caller: String,
    pub callee: String,
    pub path: String,
    pub line: u32,
    /// 1 = direct.
    pub distance: u32,
    /// How the call was tied to the definition: `local`, `same_file`, `imported`,
    /// `global`, `ambiguous`.
    pub resolution: String,
    /// How many call sites this edge stands for.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub count: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// A file that changes often and is complex: where bugs collect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HotSpot {
    pub path: String,
    /// 0..1 within the project.
    pub score: f64,
    /// Commits touching the file in the analysed history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits: Option<u32>,
    /// Why it is a hotspot, in a few words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// How far a change to a file or symbol reaches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImpactRadius {
    /// Files depending on it directly.
    pub direct: u32,
    /// Files depending on it within `depth` levels (direct included).
    pub transitive: u32,
    pub depth: u32,
    /// The nearest dependents, closest first (at most ten).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nearest: Vec<String>,
    /// Test files among the dependents, closest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
}

/// The architectural role of a file (seed 004 §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ArchitecturalRole {
    /// Central and depended upon by many.
    Core,
    /// Depended upon, depends on little.
    Utility,
    /// Depends on many (wires things together).
    Integration,
    /// Neither.
    Peripheral,
    /// A test file.
    Test,
}

/// Size and coupling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Complexity {
    pub loc: u32,
    pub symbols: u32,
    /// Branch points (`if`, `for`, `while`, `match`/`switch` arms, `catch`, `&&`,
    /// `||`, ...) counted in the source.
    pub branches: u32,
    /// Files it depends on.
    pub dependencies: u32,
    /// Files depending on it.
    pub fan_in: u32,
    /// Files it depends on, imports and references together.
    pub fan_out: u32,
}

/// Severity of a risk or of a change.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum RiskLevel {
    #[default]
    None,
    Low,
    Medium,
    High,
}

/// One risk a report found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Risk {
    pub level: RiskLevel,
    /// A stable code: `HIGH_FAN_IN`, `HOTSPOT`, `LARGE_FILE`, `SYNTAX_ERRORS`,
    /// `UNTESTED`, `GOD_MODULE`, ...
    pub code: String,
    pub message: String,
}

/// The synthesized report of `understand` (seed 004 §3.2 `SynthesizedReport`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub summary: String,
    pub architectural_role: ArchitecturalRole,
    pub complexity: Complexity,
    pub risks: Vec<Risk>,
    pub recommendations: Vec<String>,
}

// --- understand ------------------------------------------------------------------------

/// What `understand` includes (all by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct UnderstandInclude {
    pub skeleton: bool,
    pub call_graph: bool,
    pub dependencies: bool,
    pub hot_spots: bool,
    pub page_rank: bool,
    pub impact: bool,
    pub report: bool,
}

impl Default for UnderstandInclude {
    fn default() -> Self {
        UnderstandInclude {
            skeleton: true,
            call_graph: true,
            dependencies: true,
            hot_spots: true,
            page_rank: true,
            impact: true,
            report: true,
        }
    }
}

/// `understand`: a path, a symbol or a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnderstandRequest {
    /// What to understand: a file or directory path relative to the project root
    /// (`src/auth.py`, `crates/edit/`, `.`), a symbol (`Server.start`,
    /// `edit::Engine::apply`, `handleAuth`), or a question in English or Korean
    /// ("how are sessions expired?", "handleAuth 인증 로직 파악").
    pub target: String,
    /// Call-graph and dependency levels: shallow 1, standard 2 (default), deep 3.
    #[serde(default)]
    pub depth: Depth,
    /// Parts of the answer to include (all by default).
    #[serde(default)]
    pub include: UnderstandInclude,
    /// Most tokens (o200k) the answer may take; parts are cut to fit (default 8000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
}

/// One file, understood.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileInsight {
    pub path: String,
    pub language: String,
    pub lines: u32,
    /// SHA-256 of the file as read now: the `expectedHash` for a `change`.
    pub hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skeleton: Option<String>,
    pub symbols: Vec<SymbolBrief>,
    /// Files it imports or references, strongest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<FileEdge>,
    /// Files importing or referencing it, strongest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependents: Vec<FileEdge>,
    /// External modules it imports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external: Vec<String>,
    /// Calls leaving the file's definitions for other files, most called first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls_out: Vec<CallEdge>,
    /// Calls into the file's definitions from other files, most called first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls_in: Vec<CallEdge>,
    /// PageRank over the file graph, and the file's place (1 = most central).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_rank: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_spot: Option<HotSpot>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<ImpactRadius>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
    #[serde(default)]
    pub syntax_errors: u32,
}

/// One definition, understood.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SymbolInsight {
    #[serde(flatten)]
    pub symbol: SymbolBrief,
    /// The definition's source when it fits the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// SHA-256 of its file: the `expectedHash` for a `change`.
    pub file_hash: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callers: Vec<CallEdge>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callees: Vec<CallEdge>,
    /// Uses of its name anywhere (calls, types, other uses), and in how many files.
    pub references: u32,
    pub reference_files: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<ImpactRadius>,
}

/// A file a question led to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RankedFile {
    pub path: String,
    pub score: f64,
    /// Why it ranks, in short phrases.
    pub evidence: Vec<String>,
}

/// The answer of `understand`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnderstandResponse {
    pub target: String,
    /// What the target was taken as.
    pub resolved_as: TargetKind,
    /// For a question: the files it led to, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranked: Vec<RankedFile>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileInsight>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<SymbolInsight>,
    /// The project's hotspots nearest the target (when asked for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hot_spots: Vec<HotSpot>,
    /// Tokens (o200k) of this answer, and whether parts were cut to fit the budget.
    pub tokens: u32,
    pub truncated: bool,
    pub guidance: Guidance,
}

// --- change ----------------------------------------------------------------------------

/// The check run after the edit is written and before it commits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CheckLevel {
    None,
    /// The edited files must not gain syntax errors (tree-sitter).
    #[default]
    Syntax,
    /// Syntax, then the project's build in the sandbox must succeed.
    Build,
}

/// Options of `change`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ChangeOptions {
    /// Default true: validate and preview (diffs + impact), write nothing. Send
    /// false to apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// Default true: changed symbols, affected files and hotspots, breaking-change
    /// risk, suggested tests with priority.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_impact: Option<bool>,
    /// Default true: run the post-edit check and roll back when it fails.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_rollback: Option<bool>,
    /// The post-edit check: syntax (default: the edited files gain no syntax
    /// errors), build (also the project's build in the sandbox), none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckLevel>,
}

/// `change`: edits (the edit engine's operations) with a description.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRequest {
    /// What the change is for (kept in the edit history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The file of edits that name no `path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The edits, applied together as one all-or-nothing transaction. All see the
    /// files as they were before the request.
    pub edits: Vec<EditOp>,
    #[serde(default)]
    pub options: ChangeOptions,
}

/// How a definition changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SymbolChange {
    Added,
    Removed,
    /// Its signature (the text up to its body) changed: callers may break.
    SignatureChanged,
    BodyChanged,
}

/// A definition a change touches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangedSymbol {
    pub path: String,
    pub qualified_name: String,
    pub kind: String,
    pub change: SymbolChange,
    /// Call sites of it elsewhere, and in how many files.
    pub callers: u32,
    pub caller_files: u32,
}

/// How much a test matters for a change.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum TestPriority {
    Critical,
    Important,
    Optional,
}

/// A test file worth running after a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuggestedTest {
    pub path: String,
    pub priority: TestPriority,
    pub reason: String,
}

/// A file a change may affect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AffectedFile {
    pub path: String,
    /// 0 = changed, 1 = depends on a changed file, ...
    pub distance: u32,
}

/// The impact report of `change` (seed 004 §3.3 `ImpactReport`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImpactReport {
    pub changed_symbols: Vec<ChangedSymbol>,
    pub affected_files: Vec<AffectedFile>,
    /// Files affected beyond the changed ones.
    pub radius: u32,
    pub affected_hot_spots: Vec<HotSpot>,
    pub breaking_change_risk: RiskLevel,
    /// Why the risk is what it is.
    pub reasons: Vec<String>,
    pub suggested_tests: Vec<SuggestedTest>,
}

/// What the post-edit check said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    pub level: CheckLevel,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The change was written and then restored because the check failed.
    pub rolled_back: bool,
}

/// The answer of `change`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeResponse {
    /// The edit was applied (or, for a dry run, would apply cleanly).
    pub success: bool,
    pub dry_run: bool,
    /// The transaction (for `manage` undo/redo); absent for a dry run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
    pub rollback_available: bool,
    pub edit_result: EditResult,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<ImpactReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckReport>,
    pub guidance: Guidance,
}

// --- navigate --------------------------------------------------------------------------

/// What `navigate` looks for. The default is `references`: with the answer's
/// `definitions` that is "where is it, and who uses it", what a bare
/// `{"target": "add"}` means.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum NavigateAction {
    Definition,
    #[default]
    References,
    Callers,
    Callees,
    Implementations,
    /// Supertypes and subtypes.
    Hierarchy,
}

impl NavigateAction {
    pub fn as_str(self) -> &'static str {
        match self {
            NavigateAction::Definition => "definition",
            NavigateAction::References => "references",
            NavigateAction::Callers => "callers",
            NavigateAction::Callees => "callees",
            NavigateAction::Implementations => "implementations",
            NavigateAction::Hierarchy => "hierarchy",
        }
    }
}

/// `navigate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavigateRequest {
    /// Default `references` (the definitions come with every answer).
    #[serde(default)]
    pub action: NavigateAction,
    /// A symbol (`Server.start`, `parse`), or `path:line` for what is there.
    pub target: String,
    /// Levels for callers/callees/hierarchy (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// At most this many results (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Only definitions in this file or directory (to pick among same names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// A place in the project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    pub path: String,
    pub line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The definition there (or the one containing a reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qualified_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The signature, or the source line of a reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
    /// `call`/`type`/`use` for references; `supertype`/`subtype` in a hierarchy;
    /// the resolution for call edges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
}

/// The answer of `navigate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavigateResponse {
    pub action: NavigateAction,
    pub target: String,
    /// The definitions the target was resolved to.
    pub definitions: Vec<Location>,
    pub results: Vec<Location>,
    /// Results before the limit.
    pub total: u32,
    pub truncated: bool,
    pub guidance: Guidance,
}

// --- read ------------------------------------------------------------------------------

/// How `read` shows a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ReadView {
    Full,
    Skeleton,
    Fragment,
    Diff,
}

/// `read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadRequest {
    /// The file, relative to the project root.
    pub target: String,
    /// Default: `fragment` with `lineRange`/`symbol`, `diff` with `against`, else
    /// `full` (a large file is cut with a warning; ask for `skeleton`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ReadView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_range: Option<LineRange>,
    /// A definition's qualified name: its lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// For `diff`: `HEAD` (the committed version) or a transaction id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
}

/// The answer of `read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadResponse {
    pub path: String,
    pub view: ReadView,
    /// The text: the file or fragment as is (no line numbers), the skeleton with
    /// line numbers, or a unified diff.
    pub content: String,
    /// SHA-256 of the whole file now: the `expectedHash` for a `change`.
    pub hash: String,
    /// Lines in the file.
    pub lines: u32,
    /// The lines `content` holds (fragment and full).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_range: Option<LineRange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub tokens: u32,
    pub truncated: bool,
    /// A diff view of a file that is the same as what it is compared with:
    /// `content` is empty (as `git diff` prints nothing), and this says why.
    #[serde(default, skip_serializing_if = "crate::edit::is_false")]
    pub unchanged: bool,
    pub guidance: Guidance,
}

// --- write -----------------------------------------------------------------------------

/// `write`: create a file from content, a built-in template or an existing file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteRequest {
    /// The file to create, relative to the root.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// A built-in template (`module`, `test`, `class`) for the file's language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// An existing project file to scaffold from: copied with its name replaced
    /// (in snake_case, CamelCase, kebab-case and UPPER_CASE forms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Template variables (`name` defaults to the file stem; `package`, `namespace`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variables: BTreeMap<String, String>,
    /// Replace an existing file (undoable).
    #[serde(default)]
    pub overwrite: bool,
    /// Show what would be written, write nothing.
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The answer of `write`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteResponse {
    pub path: String,
    pub dry_run: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
    pub edit_result: EditResult,
    pub guidance: Guidance,
}

// --- manage ----------------------------------------------------------------------------

/// What `manage` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ManageCommand {
    Status,
    Undo,
    Redo,
    History,
    Rebuild,
    Test,
}

impl ManageCommand {
    pub fn as_str(self) -> &'static str {
        match self {
            ManageCommand::Status => "status",
            ManageCommand::Undo => "undo",
            ManageCommand::Redo => "redo",
            ManageCommand::History => "history",
            ManageCommand::Rebuild => "rebuild",
            ManageCommand::Test => "test",
        }
    }
}

/// Incremental (changed files only) or full (from scratch) rebuild.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum RebuildScope {
    #[default]
    Incremental,
    Full,
}

/// `manage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManageRequest {
    /// status | undo | redo | history | rebuild | test.
    pub command: ManageCommand,
    /// undo/redo/history: a transaction id (a unique prefix works).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// rebuild: incremental (default, changed files only) or full (from scratch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<RebuildScope>,
    /// history: at most this many (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// test: test files or test names to run (default: the whole suite).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// undo/redo: show what would change, write nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// The project and index state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectStatus {
    pub root: String,
    pub files: u64,
    pub symbols: u64,
    pub references: u64,
    pub languages: Vec<LanguageStats>,
    pub files_with_syntax_errors: u64,
    /// Unix seconds of the last complete index update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update: Option<i64>,
    /// The index matches the files on disk.
    pub fresh: bool,
    /// How changes underneath are noticed: `watcher` or `polling`.
    pub freshness: String,
    /// The detected test tool (`pytest`, `cargo`, ...), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_tool: Option<String>,
    /// The newest edit transactions.
    pub recent_edits: Vec<TransactionSummary>,
    /// Resident memory of the process answering (a long-running MCP or HTTP
    /// server holds the project snapshot), where the platform reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<ProcessMemoryInfo>,
}

/// A process's resident memory, in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessMemoryInfo {
    pub resident_bytes: u64,
    pub peak_resident_bytes: u64,
}

/// What a rebuild did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RebuildReport {
    pub scope: RebuildScope,
    pub files_seen: u64,
    pub added: u64,
    pub modified: u64,
    pub deleted: u64,
    pub parsed: u64,
    pub duration_ms: u64,
}

/// The answer of `manage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManageResponse {
    pub command: ManageCommand,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ProjectStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_result: Option<EditResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<TransactionSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<RebuildReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<TestResult>,
    pub guidance: Guidance,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_shaped_change_request_parses_with_defaults() {
        let req: ChangeRequest = serde_json::from_str(
            r#"{"target": "src/a.py", "description": "rate limit",
                "edits": [{"targetString": "a", "replacementString": "b", "expectedHash": "ab"}],
                "options": {"dryRun": false, "includeImpact": true}}"#,
        )
        .unwrap();
        assert_eq!(req.options.dry_run, Some(false));
        assert_eq!(req.options.auto_rollback, None);
        assert_eq!(req.edits[0].expected_hash(), Some("ab"));
    }

    #[test]
    fn understand_request_defaults_include_everything() {
        let req: UnderstandRequest =
            serde_json::from_str(r#"{"target": "x", "include": {"callGraph": false}}"#).unwrap();
        assert_eq!(req.depth, Depth::Standard);
        assert!(!req.include.call_graph && req.include.skeleton && req.include.report);
    }

    #[test]
    fn guidance_wire_shape() {
        let g = Guidance {
            context_summary: "s".into(),
            next_actions: vec![NextAction {
                priority: 1,
                tool: "read".into(),
                arguments: serde_json::json!({"target": "a.py"}),
                description: "d".into(),
                rationale: String::new(),
            }],
            warnings: vec![],
            recovery: None,
        };
        assert_eq!(
            serde_json::to_string(&g).unwrap(),
            r#"{"contextSummary":"s","nextActions":[{"priority":1,"tool":"read","arguments":{"target":"a.py"},"description":"d"}]}"#
        );
        let e = PillarError {
            error: ErrorInfo::new(ErrorCode::NoMatch, "m"),
            guidance: Guidance::default(),
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["code"], "NO_MATCH");
        assert!(v["guidance"].is_object());
    }

    #[test]
    fn manage_and_navigate_requests_parse() {
        let m: ManageRequest =
            serde_json::from_str(r#"{"command": "rebuild", "scope": "full"}"#).unwrap();
        assert_eq!((m.command, m.scope), (ManageCommand::Rebuild, Some(RebuildScope::Full)));
        let n: NavigateRequest =
            serde_json::from_str(r#"{"action": "callers", "target": "f", "depth": 2}"#).unwrap();
        assert_eq!(n.action, NavigateAction::Callers);
        assert!(serde_json::from_str::<ManageRequest>(r#"{"command": "explode"}"#).is_err());
    }
}
