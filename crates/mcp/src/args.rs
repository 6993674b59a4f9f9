//! Tool inputs as JSON Schema (schemars): names as in seed 004 §4.2. Each is
//! converted to its `protocol` request through JSON, so the lenient parsing of
//! edits (inferred `op`, `lineRange` forms) lives in one place.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `"12-20"`, `"12"`, `[12, 20]` or `{"start": 12, "end": 20}` (1-based, inclusive).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum LineRangeArg {
    /// `"START-END"` or `"LINE"`.
    Text(String),
    /// `[START, END]`.
    Pair([u32; 2]),
    /// `{"start": START, "end": END}`.
    Object { start: u32, end: Option<u32> },
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DepthArg {
    Shallow,
    Standard,
    Deep,
}

/// What `understand` includes (each defaults to true).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IncludeArg {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skeleton: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_graph: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_spots: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_rank: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impact: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnderstandArgs {
    /// What to understand: a file or directory path relative to the project root
    /// (`src/auth.py`, `crates/edit/`, `.`), a symbol (`Server.start`,
    /// `edit::Engine::apply`, `handleAuth`), or a question in English or Korean
    /// ("how are sessions expired?", "handleAuth 인증 로직 파악").
    pub target: String,
    /// Call-graph and dependency levels: shallow 1, standard 2 (default), deep 3.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<DepthArg>,
    /// Parts of the answer to include (all by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<IncludeArg>,
    /// Most tokens the answer may take (default 8000); parts are cut to fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum EditOpArg {
    Replace,
    ReplaceLines,
    Insert,
    ReplaceSymbol,
    Create,
    Delete,
    Rename,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PositionArg {
    Before,
    After,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SymbolPartArg {
    Definition,
    Body,
}

/// One edit. Without `op` it is inferred: `targetString` → replace, `lineRange`
/// with `replacementString` → replaceLines, `qualifiedName` → replaceSymbol,
/// `position` → insert, `newPath` → rename.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditArg {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<EditOpArg>,
    /// The file, relative to the project root (default: the request's `target`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The exact current text to replace (copy it from `read`). Matched exactly,
    /// then tolerating indentation, trailing whitespace and line endings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_string: Option<String>,
    /// The new text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement_string: Option<String>,
    /// Where to look for `targetString`, or the lines `replaceLines` replaces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_range: Option<LineRangeArg>,
    /// SHA-256 of the file as you last read it (`hash` from `read`/`understand`):
    /// the edit is refused with HASH_MISMATCH if the file changed since.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_hash: Option<String>,
    /// replace: how many occurrences are expected (all are replaced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_occurrences: Option<u32>,
    /// replace: every occurrence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace_all: Option<bool>,
    /// insert: before or after the anchor (`line` or `targetString`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<PositionArg>,
    /// insert: the anchor line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// insert: the lines to insert.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// replaceSymbol: the definition (`Server.start`, `util::parse`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qualified_name: Option<String>,
    /// replaceSymbol: the whole definition (default) or its body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<SymbolPartArg>,
    /// create: the file's content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// create: replace an existing file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<bool>,
    /// rename: the new path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_path: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CheckArg {
    None,
    Syntax,
    Build,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeOptionsArg {
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
    pub check: Option<CheckArg>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeArgs {
    /// What the change is for (kept in the edit history).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The file of edits that name no `path`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The edits, applied together as one all-or-nothing transaction. All see the
    /// files as they were before the request.
    pub edits: Vec<EditArg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<ChangeOptionsArg>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum NavigateActionArg {
    Definition,
    References,
    Callers,
    Callees,
    Implementations,
    Hierarchy,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavigateArgs {
    /// What to find; default `references` (the definitions always come along).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<NavigateActionArg>,
    /// A symbol (`Server.start`, `parse`) or `path:line`.
    pub target: String,
    /// Levels for callers, callees and hierarchy (default 1, at most 5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// At most this many results (default 50).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Only definitions in this file or directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ViewArg {
    Full,
    Skeleton,
    Fragment,
    Diff,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadArgs {
    /// The file, relative to the project root.
    pub target: String,
    /// full (default), skeleton (signatures with line numbers, bodies elided),
    /// fragment (with lineRange or symbol), diff (with against).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<ViewArg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_range: Option<LineRangeArg>,
    /// A definition's qualified name: its lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// diff: `HEAD` or an edit transaction id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteArgs {
    /// The file to create, relative to the project root.
    pub path: String,
    /// The content (or use `template` or `from`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// A built-in template for the file's language: module, test, class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// An existing project file to copy, with its name replaced in every case form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Template variables (`name` defaults to the file stem; `package`, `namespace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<BTreeMap<String, String>>,
    /// Replace an existing file (undoable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<bool>,
    /// Show what would be written, write nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandArg {
    Status,
    Undo,
    Redo,
    History,
    Rebuild,
    Test,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ScopeArg {
    Incremental,
    Full,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManageArgs {
    /// status | undo | redo | history | rebuild | test.
    pub command: CommandArg,
    /// undo/redo/history: a transaction id (a unique prefix works); default: the newest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// rebuild: incremental (default, changed files only) or full (from scratch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeArg>,
    /// history: at most this many (default 20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// test: test files or test names to run (default: the whole suite).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<String>>,
    /// undo/redo: show what would change, write nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
}

// --- compatibility tools ----------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchProjectArgs {
    /// Words, identifiers, a question or an error message.
    pub query: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_results: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadCodeArgs {
    pub file_path: String,
    /// full (default), skeleton or fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<ViewArg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_range: Option<LineRangeArg>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum EditCodeOperation {
    Replace,
    Create,
    Delete,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditCodeEdit {
    pub file_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<EditCodeOperation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_string: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement_string: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_range: Option<LineRangeArg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_hash: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditCodeArgs {
    /// The file of edits that name no `filePath`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    pub edits: Vec<EditCodeEdit>,
    /// Default false (this tool applies, as it always did; `change` previews).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RelationMode {
    Calls,
    Dependencies,
    References,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Direction {
    Upstream,
    Downstream,
    Both,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnalyzeRelationshipArgs {
    /// A symbol (calls, references) or a file (dependencies).
    pub target: String,
    pub mode: RelationMode,
    /// upstream: who calls / depends on it; downstream: what it calls / depends on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListDirectoryArgs {
    /// A directory relative to the project root (default: the root).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Levels to descend (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetHierarchyArgs {
    /// A class, struct, trait or interface.
    pub target: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManageProjectArgs {
    /// status | undo | redo | history | rebuild | test.
    pub command: CommandArg,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}
