//! Wire types of the edit engine: the request (operations, preconditions, options),
//! the result (per-file diffs, normalizations, the transaction id, new hashes), the
//! details carried by edit errors, and transaction history entries.
//!
//! Field names are camelCase where the seed's `change` tool uses them
//! (`targetString`, `replacementString`, `lineRange`, `expectedHash`, `dryRun`).
//! Requests are parsed leniently (a missing `op` is inferred, `lineRange` may be
//! `"12-20"`, `[12, 20]` or `{"start": 12, "end": 20}`, a request-level `target`
//! supplies the path of edits that name none) and always serialized in one canonical
//! shape.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One change request: operations applied together as one all-or-nothing transaction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditRequest {
    /// What the change is for; shown in history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The path used by operations that name none (the seed's `target`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub edits: Vec<EditOp>,
    #[serde(default)]
    pub options: EditOptions,
}

/// Options of a change request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct EditOptions {
    /// Compute everything (matches, diffs, new hashes) and write nothing.
    pub dry_run: bool,
    /// For the `change` pillar: attach an impact report. The edit engine ignores it.
    pub include_impact: bool,
    /// For the `change` pillar: run a post-edit check and roll back when it fails.
    /// The edit engine offers the mechanism (`Engine::apply_checked`); the caller
    /// chooses the check.
    pub auto_rollback: bool,
}

/// A 1-based, inclusive range of lines.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(try_from = "LineRangeWire")]
pub struct LineRange {
    pub start: u32,
    pub end: u32,
}

impl LineRange {
    pub fn new(start: u32, end: u32) -> LineRange {
        LineRange { start, end }
    }

    /// Parses `"12"`, `"12-20"` or `"12:20"`.
    pub fn parse(s: &str) -> Result<LineRange, String> {
        let s = s.trim();
        let (a, b) = match s.split_once(['-', ':', ',']) {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (s, s),
        };
        let num = |t: &str| {
            t.parse::<u32>().map_err(|_| format!("bad line range {s:?}: expected `START-END`"))
        };
        LineRange::checked(num(a)?, num(b)?)
    }

    fn checked(start: u32, end: u32) -> Result<LineRange, String> {
        if start == 0 {
            return Err("line numbers start at 1".to_owned());
        }
        if end < start {
            return Err(format!("line range {start}-{end} ends before it starts"));
        }
        Ok(LineRange { start, end })
    }

    pub fn contains(&self, other: &LineRange) -> bool {
        self.start <= other.start && other.end <= self.end
    }
}

impl std::fmt::Display for LineRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum LineRangeWire {
    Text(String),
    Pair([u32; 2]),
    Single(u32),
    Object { start: u32, end: Option<u32> },
}

impl TryFrom<LineRangeWire> for LineRange {
    type Error = String;
    fn try_from(w: LineRangeWire) -> Result<LineRange, String> {
        match w {
            LineRangeWire::Text(s) => LineRange::parse(&s),
            LineRangeWire::Pair([a, b]) => LineRange::checked(a, b),
            LineRangeWire::Single(a) => LineRange::checked(a, a),
            LineRangeWire::Object { start, end } => LineRange::checked(start, end.unwrap_or(start)),
        }
    }
}

/// Where an insertion goes relative to its anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum InsertPosition {
    Before,
    After,
}

/// Which part of a definition `replaceSymbol` replaces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SymbolPart {
    /// The whole definition (decorators and attributes included, as the index sees it).
    #[default]
    Definition,
    /// Only the body. When the body is a `{ ... }` block and the replacement does not
    /// start with `{`, the braces are kept and the replacement goes between them.
    Body,
}

/// One operation of a change request. Every path is relative to the project root
/// (or absolute inside it). Every operation on an existing file may carry
/// `expectedHash`: the SHA-256 (lower-case hex) of the file as the caller last read
/// it; a different file fails the whole request with `HASH_MISMATCH`.
///
/// All operations of one request see the files as they were before the request:
/// line numbers and anchors refer to that version, and two operations may not
/// touch overlapping text of one file (`INVALID_ARGUMENT`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "camelCase", try_from = "RawEdit")]
#[non_exhaustive]
pub enum EditOp {
    /// Replace `targetString` with `replacementString`. Exactly one occurrence is
    /// expected unless `expectedOccurrences` or `replaceAll` says otherwise;
    /// `lineRange` restricts the search. Tolerant of indentation, trailing
    /// whitespace and line-ending drift (reported as normalizations); never applies
    /// an ambiguous match.
    #[serde(rename_all = "camelCase")]
    Replace {
        path: String,
        target_string: String,
        replacement_string: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line_range: Option<LineRange>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_occurrences: Option<u32>,
        #[serde(default, skip_serializing_if = "is_false")]
        replace_all: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_hash: Option<String>,
    },
    /// Replace whole lines `lineRange` with `replacementString` (empty: delete them).
    #[serde(rename_all = "camelCase")]
    ReplaceLines {
        path: String,
        line_range: LineRange,
        replacement_string: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_hash: Option<String>,
    },
    /// Insert `text` as whole lines before or after an anchor: a line number
    /// (`line`; `before` N+1 or `after` N appends to a file of N lines, `after` 0
    /// puts the text first) or the lines matched by `targetString` (matched like
    /// `replace`, exactly once).
    #[serde(rename_all = "camelCase")]
    Insert {
        path: String,
        position: InsertPosition,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target_string: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line_range: Option<LineRange>,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_hash: Option<String>,
    },
    /// Replace a definition (or its body) found by qualified name (`Server.start`,
    /// `util::parse`). `lineRange` picks one of several definitions of that name.
    #[serde(rename_all = "camelCase")]
    ReplaceSymbol {
        path: String,
        qualified_name: String,
        replacement_string: String,
        #[serde(default)]
        part: SymbolPart,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line_range: Option<LineRange>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_hash: Option<String>,
    },
    /// Create a file (parent directories too). Fails with `ALREADY_EXISTS` unless
    /// `overwrite` is set.
    #[serde(rename_all = "camelCase")]
    Create {
        path: String,
        content: String,
        #[serde(default, skip_serializing_if = "is_false")]
        overwrite: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_hash: Option<String>,
    },
    /// Delete a file.
    #[serde(rename_all = "camelCase")]
    Delete {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_hash: Option<String>,
    },
    /// Rename or move a file. `newPath` must not exist. Text operations on `path`
    /// in the same request are applied to the content that moves.
    #[serde(rename_all = "camelCase")]
    Rename {
        path: String,
        new_path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_hash: Option<String>,
    },
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

impl EditOp {
    /// The file the operation reads (for `rename`, the source).
    pub fn path(&self) -> &str {
        match self {
            EditOp::Replace { path, .. }
            | EditOp::ReplaceLines { path, .. }
            | EditOp::Insert { path, .. }
            | EditOp::ReplaceSymbol { path, .. }
            | EditOp::Create { path, .. }
            | EditOp::Delete { path, .. }
            | EditOp::Rename { path, .. } => path,
        }
    }

    pub fn expected_hash(&self) -> Option<&str> {
        match self {
            EditOp::Replace { expected_hash, .. }
            | EditOp::ReplaceLines { expected_hash, .. }
            | EditOp::Insert { expected_hash, .. }
            | EditOp::ReplaceSymbol { expected_hash, .. }
            | EditOp::Create { expected_hash, .. }
            | EditOp::Delete { expected_hash, .. }
            | EditOp::Rename { expected_hash, .. } => expected_hash.as_deref(),
        }
    }

    /// The wire name (`replace`, `replaceLines`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            EditOp::Replace { .. } => "replace",
            EditOp::ReplaceLines { .. } => "replaceLines",
            EditOp::Insert { .. } => "insert",
            EditOp::ReplaceSymbol { .. } => "replaceSymbol",
            EditOp::Create { .. } => "create",
            EditOp::Delete { .. } => "delete",
            EditOp::Rename { .. } => "rename",
        }
    }

    /// Sets the path of an operation that was written without one (the request's
    /// `target`). The empty path is what the parser leaves when `path` is missing.
    pub fn fill_path(&mut self, target: &str) {
        let p = match self {
            EditOp::Replace { path, .. }
            | EditOp::ReplaceLines { path, .. }
            | EditOp::Insert { path, .. }
            | EditOp::ReplaceSymbol { path, .. }
            | EditOp::Create { path, .. }
            | EditOp::Delete { path, .. }
            | EditOp::Rename { path, .. } => path,
        };
        if p.is_empty() {
            *p = target.to_owned();
        }
    }
}

/// The flat wire form every operation is parsed from, so a missing `op` can be
/// inferred (the seed's edits carry only `targetString`/`replacementString`/
/// `lineRange`) and a missing field is reported by name.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "Edit")]
struct RawEdit {
    /// replace, replaceLines, insert, replaceSymbol, create, delete, rename. Without
    /// it, inferred: `targetString` → replace, `lineRange` with `replacementString`
    /// → replaceLines, `qualifiedName` → replaceSymbol, `position` → insert,
    /// `newPath` → rename.
    op: Option<String>,
    /// The file, relative to the project root (default: the request's `target`).
    #[serde(alias = "file")]
    path: Option<String>,
    /// The exact current text to replace (copy it from `read`). Matched exactly,
    /// then tolerating indentation, trailing whitespace and line endings.
    target_string: Option<String>,
    /// The new text.
    replacement_string: Option<String>,
    /// Where to look for `targetString`, or the lines `replaceLines` replaces:
    /// `"12-20"`, `"12"`, `[12, 20]` or `{"start": 12, "end": 20}` (1-based,
    /// inclusive).
    line_range: Option<LineRange>,
    /// replace: how many occurrences are expected (all are replaced).
    expected_occurrences: Option<u32>,
    /// replace: every occurrence.
    #[serde(default)]
    replace_all: bool,
    /// SHA-256 of the file as you last read it (`hash` from `read`/`understand`):
    /// the edit is refused with HASH_MISMATCH if the file changed since.
    expected_hash: Option<String>,
    /// insert: before or after the anchor (`line` or `targetString`).
    position: Option<InsertPosition>,
    /// insert: the anchor line.
    line: Option<u32>,
    /// insert: the lines to insert.
    text: Option<String>,
    /// replaceSymbol: the definition (`Server.start`, `util::parse`).
    qualified_name: Option<String>,
    /// replaceSymbol: the whole definition (default) or its body.
    part: Option<SymbolPart>,
    /// create: the file's content.
    content: Option<String>,
    /// create: replace an existing file.
    #[serde(default)]
    overwrite: bool,
    /// rename: the new path.
    new_path: Option<String>,
}

impl TryFrom<RawEdit> for EditOp {
    type Error = String;

    fn try_from(r: RawEdit) -> Result<EditOp, String> {
        let op = match r.op.as_deref() {
            Some(op) => op.to_owned(),
            None if r.qualified_name.is_some() => "replaceSymbol".to_owned(),
            None if r.target_string.is_some() && r.position.is_none() => "replace".to_owned(),
            None if r.position.is_some() => "insert".to_owned(),
            None if r.line_range.is_some() && r.replacement_string.is_some() => {
                "replaceLines".to_owned()
            }
            None if r.new_path.is_some() => "rename".to_owned(),
            None => {
                return Err("an edit needs `op` (replace, replaceLines, insert, replaceSymbol, \
                            create, delete, rename)"
                    .to_owned());
            }
        };
        let path = r.path.unwrap_or_default();
        let need =
            |v: Option<String>, field: &str| v.ok_or_else(|| format!("`{op}` needs `{field}`"));
        let edit = match op.as_str() {
            "replace" => EditOp::Replace {
                path,
                target_string: need(r.target_string, "targetString")?,
                replacement_string: need(r.replacement_string, "replacementString")?,
                line_range: r.line_range,
                expected_occurrences: r.expected_occurrences,
                replace_all: r.replace_all,
                expected_hash: r.expected_hash,
            },
            "replaceLines" => EditOp::ReplaceLines {
                path,
                line_range: r.line_range.ok_or("`replaceLines` needs `lineRange`")?,
                replacement_string: need(r.replacement_string, "replacementString")?,
                expected_hash: r.expected_hash,
            },
            "insert" => EditOp::Insert {
                path,
                position: r.position.ok_or("`insert` needs `position` (before or after)")?,
                line: r.line,
                target_string: r.target_string,
                line_range: r.line_range,
                text: need(r.text, "text")?,
                expected_hash: r.expected_hash,
            },
            "replaceSymbol" => EditOp::ReplaceSymbol {
                path,
                qualified_name: need(r.qualified_name, "qualifiedName")?,
                replacement_string: need(r.replacement_string, "replacementString")?,
                part: r.part.unwrap_or_default(),
                line_range: r.line_range,
                expected_hash: r.expected_hash,
            },
            "create" => EditOp::Create {
                path,
                content: need(r.content, "content")?,
                overwrite: r.overwrite,
                expected_hash: r.expected_hash,
            },
            "delete" => EditOp::Delete { path, expected_hash: r.expected_hash },
            "rename" | "move" => EditOp::Rename {
                path,
                new_path: need(r.new_path, "newPath")?,
                expected_hash: r.expected_hash,
            },
            other => {
                return Err(format!(
                    "unknown op {other:?}; one of replace, replaceLines, insert, replaceSymbol, \
                     create, delete, rename"
                ));
            }
        };
        Ok(edit)
    }
}

/// Something the matcher forgave, reported so the caller can fix its picture of the
/// file. Each says how the replacement was adapted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Normalization {
    /// The text used other line endings than the file; the replacement was written
    /// with the file's (`crlf` or `lf`).
    LineEndings { file: String },
    /// Lines matched only after ignoring trailing whitespace.
    TrailingWhitespace,
    /// The whole block matched with uniformly different indentation; the replacement
    /// was re-indented by the same amount (`added` or `removed` is the prefix).
    #[serde(rename_all = "camelCase")]
    Indentation {
        #[serde(default, skip_serializing_if = "String::is_empty")]
        added: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        removed: String,
    },
    /// Indentation matched only with tabs expanded (`tabWidth` columns); the
    /// replacement was re-indented with the file's tabs.
    #[serde(rename_all = "camelCase")]
    TabsAsSpaces { tab_width: u32 },
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum FileChangeKind {
    Modified,
    Created,
    Deleted,
    Renamed,
}

/// Where one operation landed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedEdit {
    /// The operation's index in the request.
    pub index: usize,
    /// The lines it replaced (or inserted next to) in the file before the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_range: Option<LineRange>,
    /// The lines its text occupies in the file after the change (none when it
    /// removed text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_line_range: Option<LineRange>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub normalizations: Vec<Normalization>,
}

/// One file of a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// The file (for a rename, where it was).
    pub path: String,
    /// For a rename: where it is now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_path: Option<String>,
    pub kind: FileChangeKind,
    /// SHA-256 before the change (absent for a created file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_hash: Option<String>,
    /// SHA-256 after the change (absent for a deleted file): the next `expectedHash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_hash: Option<String>,
    /// A unified diff with git-style headers (`git apply` accepts it).
    pub diff: String,
    pub lines_added: u32,
    pub lines_removed: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<AppliedEdit>,
}

/// The answer to a change request, an undo or a redo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditResult {
    /// The transaction's id (for `undo`/`redo`); absent for a dry run or when
    /// nothing changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
    pub dry_run: bool,
    /// Files in the order they appear in the request.
    pub files: Vec<FileChange>,
}

/// What a transaction was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TransactionKind {
    /// A change request.
    Edit,
    /// Undid the edit named by `target`.
    Undo,
    /// Re-applied the edit named by `target`.
    Redo,
}

/// Whether an edit's changes are in the files now (as far as ironbees knows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TransactionState {
    /// An edit whose changes are applied (or re-applied by a redo).
    Applied,
    /// An edit that was undone.
    Undone,
    /// An undo or redo (not undoable itself: redo or undo the edit instead).
    Done,
}

/// One entry of the edit history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionSummary {
    pub id: String,
    pub kind: TransactionKind,
    /// For an undo or redo: the edit it undid or re-applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Milliseconds since the Unix epoch, when the transaction committed.
    pub time_unix_ms: i64,
    pub description: String,
    pub state: TransactionState,
    /// Every path the transaction touched (both ends of a rename).
    pub files: Vec<String>,
}

/// A transaction the edit engine committed (an edit, an undo or a redo),
/// announced once to the session's subscribers after its history row is
/// durable (`engine::Session::subscribe_commits`). A dry run, a rolled-back
/// change and a refused one (`HASH_MISMATCH`, a failed check) commit nothing and
/// announce nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionCommitted {
    pub transaction_id: String,
    pub kind: TransactionKind,
    /// For an undo or redo: the edit it undid or re-applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub description: String,
    /// Every path the transaction changed, root-relative (both ends of a rename).
    pub files: Vec<String>,
    /// Milliseconds since the Unix epoch, when the transaction began.
    pub time_unix_ms: i64,
}

/// A candidate location reported by `NO_MATCH` (closest text) or `AMBIGUOUS_MATCH`
/// (every match).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchCandidate {
    pub line_range: LineRange,
    /// 0..1, how close the text is to `targetString` (NO_MATCH only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// The candidate's text, cut to a few lines.
    pub preview: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_range_accepts_every_wire_form() {
        for (json, want) in [
            (r#""12-20""#, Some((12, 20))),
            (r#""7""#, Some((7, 7))),
            (r#"[3, 4]"#, Some((3, 4))),
            (r#"5"#, Some((5, 5))),
            (r#"{"start": 2, "end": 9}"#, Some((2, 9))),
            (r#""0-3""#, None),
            (r#""9-3""#, None),
            (r#""a-b""#, None),
        ] {
            let got = serde_json::from_str::<LineRange>(json).ok().map(|r| (r.start, r.end));
            assert_eq!(got, want, "{json}");
        }
        assert_eq!(serde_json::to_string(&LineRange::new(1, 2)).unwrap(), r#"{"start":1,"end":2}"#);
    }

    #[test]
    fn seed_shaped_request_parses_with_inferred_ops_and_target() {
        let req: EditRequest = serde_json::from_str(
            r#"{"target": "src/a.ts", "description": "rate limit",
                "edits": [
                  {"targetString": "a", "replacementString": "b"},
                  {"lineRange": "3-4", "replacementString": "c"},
                  {"op": "create", "path": "n.txt", "content": "x"}
                ],
                "options": {"dryRun": true, "includeImpact": true}}"#,
        )
        .unwrap();
        assert!(req.options.dry_run && req.options.include_impact && !req.options.auto_rollback);
        assert_eq!(req.edits[0].name(), "replace");
        assert_eq!(req.edits[0].path(), "");
        assert_eq!(req.edits[1].name(), "replaceLines");
        assert_eq!(req.edits[2].path(), "n.txt");
    }

    #[test]
    fn bad_edits_name_the_missing_field() {
        for (json, needle) in [
            (r#"{"op": "replace", "path": "a", "targetString": "x"}"#, "replacementString"),
            (r#"{"op": "frobnicate", "path": "a"}"#, "unknown op"),
            (r#"{"path": "a"}"#, "needs `op`"),
            (r#"{"op": "insert", "path": "a", "text": "x"}"#, "position"),
            (r#"{"op": "delete", "path": "a", "bogus": 1}"#, "bogus"),
        ] {
            let err = serde_json::from_str::<EditOp>(json).unwrap_err().to_string();
            assert!(err.contains(needle), "{json}: {err}");
        }
    }

    #[test]
    fn normalizations_and_details_wire_shape() {
        let n = vec![
            Normalization::LineEndings { file: "crlf".into() },
            Normalization::TrailingWhitespace,
            Normalization::Indentation { added: "    ".into(), removed: String::new() },
            Normalization::TabsAsSpaces { tab_width: 4 },
        ];
        assert_eq!(
            serde_json::to_string(&n).unwrap(),
            r#"[{"kind":"lineEndings","file":"crlf"},{"kind":"trailingWhitespace"},{"kind":"indentation","added":"    "},{"kind":"tabsAsSpaces","tabWidth":4}]"#
        );
        let d = crate::ErrorDetails {
            edit_index: Some(1),
            current_hash: Some("ab".into()),
            ..Default::default()
        };
        assert_eq!(serde_json::to_string(&d).unwrap(), r#"{"editIndex":1,"currentHash":"ab"}"#);
        assert!(crate::ErrorDetails::default().is_empty());
    }

    #[test]
    fn ops_round_trip_in_canonical_form() {
        let op = EditOp::Replace {
            path: "a.rs".into(),
            target_string: "x".into(),
            replacement_string: "y".into(),
            line_range: Some(LineRange::new(1, 3)),
            expected_occurrences: None,
            replace_all: false,
            expected_hash: None,
        };
        let json = serde_json::to_string(&op).unwrap();
        assert_eq!(
            json,
            r#"{"op":"replace","path":"a.rs","targetString":"x","replacementString":"y","lineRange":{"start":1,"end":3}}"#
        );
        assert_eq!(serde_json::from_str::<EditOp>(&json).unwrap(), op);
    }
}
