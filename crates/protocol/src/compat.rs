//! The superseded low-level tools (`search_project`, `read_code`, `edit_code`,
//! `analyze_relationship`, `list_directory`, `get_hierarchy`, `manage_project`),
//! kept for MCP clients written against them. Each is answered by a pillar; the
//! answers that are not a pillar's own carry guidance pointing to the pillar that
//! supersedes the tool.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    ChangeResponse, EditOp, Guidance, LineRange, Location, ManageRequest, ManageResponse,
    NavigateResponse, RankedFile, ReadResponse, ReadView, impl_ops,
};

/// `search_project`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchProjectRequest {
    /// Words, identifiers, a question or an error message.
    pub query: String,
    /// At most this many definitions and files (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<u32>,
}

/// The answer of `search_project`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchProjectResponse {
    pub symbols: Vec<Location>,
    pub files: Vec<RankedFile>,
    pub guidance: Guidance,
}

/// `read_code`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadCodeRequest {
    pub file_path: String,
    /// full (default), skeleton or fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ReadView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_range: Option<LineRange>,
}

/// What one `edit_code` edit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum EditCodeOperation {
    Replace,
    Create,
    Delete,
}

/// One `edit_code` edit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditCodeEdit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<EditCodeOperation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_string: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement_string: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_range: Option<LineRange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_hash: Option<String>,
}

impl EditCodeEdit {
    /// The edit engine's operation for this edit (`path` when it names none).
    pub fn to_op(&self, path: Option<&str>) -> Result<EditOp, String> {
        let path = self.file_path.as_deref().or(path).unwrap_or_default().to_owned();
        let mut v = serde_json::json!({"path": path});
        let set = |v: &mut serde_json::Value, k: &str, x: &Option<String>| {
            if let Some(x) = x {
                v[k] = serde_json::json!(x);
            }
        };
        set(&mut v, "expectedHash", &self.expected_hash);
        if let Some(r) = self.line_range {
            v["lineRange"] = serde_json::json!(r.to_string());
        }
        match self.operation {
            Some(EditCodeOperation::Create) => {
                v["op"] = serde_json::json!("create");
                v["content"] =
                    serde_json::json!(self.replacement_string.clone().unwrap_or_default());
            }
            Some(EditCodeOperation::Delete) => v["op"] = serde_json::json!("delete"),
            _ => {
                set(&mut v, "targetString", &self.target_string);
                set(&mut v, "replacementString", &self.replacement_string);
            }
        }
        serde_json::from_value(v).map_err(|e| e.to_string())
    }
}

/// `edit_code`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditCodeRequest {
    /// The file of edits that name no `filePath`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    pub edits: Vec<EditCodeEdit>,
    /// Default false (this tool applies, as it always did; `change` previews).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
}

/// What `analyze_relationship` follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum RelationMode {
    Calls,
    Dependencies,
    References,
}

/// Which way `analyze_relationship` looks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Direction {
    Upstream,
    Downstream,
    #[default]
    Both,
}

/// `analyze_relationship`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnalyzeRelationshipRequest {
    /// A symbol (calls, references) or a file (dependencies).
    pub target: String,
    pub mode: RelationMode,
    /// upstream: who calls / depends on it; downstream: what it calls / depends on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
}

/// The answer of `analyze_relationship`: the fields of its mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnalyzeRelationshipResponse {
    pub target: String,
    /// dependencies, upstream: the files that depend on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependents: Option<Vec<crate::FileEdge>>,
    /// dependencies, downstream: the files it depends on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<crate::FileEdge>>,
    /// dependencies: modules outside the project it imports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<Vec<Location>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callers: Option<Vec<Location>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callees: Option<Vec<Location>>,
    pub guidance: Guidance,
}

/// `list_directory`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListDirectoryRequest {
    /// A directory relative to the project root (default: the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Levels to descend (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
}

/// Whether a directory entry is a file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum EntryType {
    File,
    Directory,
}

/// One entry of `list_directory`; indexed files say what the index knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DirEntry {
    pub path: String,
    #[serde(rename = "type")]
    pub kind: EntryType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definitions: Option<u32>,
}

/// The answer of `list_directory`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListDirectoryResponse {
    pub path: String,
    pub entries: Vec<DirEntry>,
    pub guidance: Guidance,
}

/// `get_hierarchy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetHierarchyRequest {
    /// A class, struct, trait or interface.
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
}

/// `manage_project`: `manage`'s request under the old name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ManageProjectRequest(pub ManageRequest);

impl_ops! {
    SearchProjectRequest => SearchProject, SearchProjectResponse;
    ReadCodeRequest => ReadCode, ReadResponse;
    EditCodeRequest => EditCode, ChangeResponse;
    AnalyzeRelationshipRequest => AnalyzeRelationship, AnalyzeRelationshipResponse;
    ListDirectoryRequest => ListDirectory, ListDirectoryResponse;
    GetHierarchyRequest => GetHierarchy, NavigateResponse;
    ManageProjectRequest => ManageProject, ManageResponse;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_code_edits_become_edit_operations() {
        let e = EditCodeEdit {
            target_string: Some("a".into()),
            replacement_string: Some("b".into()),
            ..Default::default()
        };
        assert_eq!(e.to_op(Some("x.py")).unwrap().name(), "replace");
        let c = EditCodeEdit {
            operation: Some(EditCodeOperation::Create),
            file_path: Some("n.py".into()),
            replacement_string: Some("x = 1\n".into()),
            ..Default::default()
        };
        let op = c.to_op(None).unwrap();
        assert_eq!((op.name(), op.path()), ("create", "n.py"));
        let d = EditCodeEdit { operation: Some(EditCodeOperation::Delete), ..Default::default() };
        assert_eq!(d.to_op(Some("x.py")).unwrap().name(), "delete");
        assert!(EditCodeEdit::default().to_op(Some("x.py")).is_err(), "no op to infer");
    }
}
