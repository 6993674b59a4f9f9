//! The run's shadow overlay as the state keeps it ([`OverlayFile`]s, each with
//! the working tree's hash it was based on) and as the edit engine plans against
//! it ([`edit::Overlay`]), and what it amounts to: per-file diffs for the human,
//! and the one transaction that applies it.

use protocol::{EditOp, EditType, FileEdit, OverlayFile};

use crate::orchestrator::Shared;

/// The edit engine's view of the state's overlay.
pub(crate) fn to_edit(files: &[OverlayFile]) -> edit::Overlay {
    files
        .iter()
        .map(|f| (f.path.clone(), f.content.as_ref().map(|c| c.as_bytes().to_vec())))
        .collect()
}

/// The state's overlay after edits: each file keeps the base it had; a file new
/// to the overlay is based on the working tree as it is now (its hash, or none
/// when it does not exist), which is what the edit engine planned against.
pub(crate) fn from_edit(
    overlay: &edit::Overlay,
    before: &[OverlayFile],
    shared: &Shared,
) -> Vec<OverlayFile> {
    overlay
        .iter()
        .map(|(path, content)| {
            let (base_hash, base) = match before.iter().find(|f| &f.path == path) {
                Some(f) => (f.base_hash.clone(), f.base.clone()),
                None => {
                    let bytes = std::fs::read(shared.session.root().join(path)).ok();
                    let hash = bytes.as_ref().map(|b| stdx::sha256_hex(b));
                    (hash, bytes.and_then(|b| String::from_utf8(b).ok()))
                }
            };
            OverlayFile {
                path: path.clone(),
                content: content.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()),
                base_hash,
                base,
            }
        })
        .collect()
}

fn disk_text(shared: &Shared, path: &str) -> Option<String> {
    std::fs::read(shared.session.root().join(path))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The run's change, file by file, against the working tree (files the overlay
/// holds unchanged are left out).
pub(crate) fn diffs(files: &[OverlayFile], shared: &Shared) -> Vec<FileEdit> {
    let mut out = Vec::new();
    for f in files {
        let disk = disk_text(shared, &f.path);
        if disk.as_deref() == f.content.as_deref() {
            continue;
        }
        let kind = match (&disk, &f.content) {
            (None, _) => EditType::Create,
            (Some(_), None) => EditType::Delete,
            (Some(_), Some(_)) => EditType::Modify,
        };
        let diff = edit::unified_diff(
            &f.path,
            disk.as_deref().map(str::as_bytes),
            f.content.as_deref().map(str::as_bytes),
        );
        out.push(FileEdit { file_path: f.path.clone(), diff, kind });
    }
    out
}

/// The run's change as guardrails read it: each file's text in the working tree
/// and in the overlay.
pub(crate) fn change(files: &[OverlayFile], shared: &Shared) -> guard::Change {
    let texts: Vec<(&str, Option<String>, Option<&str>)> = files
        .iter()
        .map(|f| (f.path.as_str(), disk_text(shared, &f.path), f.content.as_deref()))
        .collect();
    let borrowed: Vec<(&str, Option<&str>, Option<&str>)> =
        texts.iter().map(|(p, before, after)| (*p, before.as_deref(), *after)).collect();
    guard::Change::from_files(&borrowed)
}

/// The edits that apply the overlay to the working tree as one transaction: each
/// file replaced, created or deleted only if the working tree still has the
/// version the run started from (`expectedHash`), so a file someone changed
/// meanwhile makes the whole apply fail instead of being overwritten.
pub(crate) fn apply_ops(files: &[OverlayFile], shared: &Shared) -> Vec<EditOp> {
    let mut ops = Vec::new();
    for f in files {
        let disk = disk_text(shared, &f.path);
        if disk.as_deref() == f.content.as_deref() {
            continue;
        }
        ops.push(match &f.content {
            Some(content) => EditOp::Create {
                path: f.path.clone(),
                content: content.clone(),
                overwrite: f.base_hash.is_some(),
                expected_hash: f.base_hash.clone(),
            },
            None => EditOp::Delete { path: f.path.clone(), expected_hash: f.base_hash.clone() },
        });
    }
    ops
}
