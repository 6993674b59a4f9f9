mod concurrency;
mod encoding;
mod errors;
mod symbols;
mod transactions;
mod undo_redo;

use std::{path::Path, sync::Arc};

use edit::{Engine, EngineOptions, SymbolLocator, SymbolSpan};
use protocol::{EditRequest, EditResult, ErrorCode, ErrorInfo};
use serde_json::{Value, json};
use test_support::TempProject;

/// An engine on a project, with the code-index locator the CLI uses.
pub fn engine(p: &TempProject) -> Engine {
    engine_with(p, EngineOptions::default())
}

pub fn engine_with(p: &TempProject, options: EngineOptions) -> Engine {
    let mut e = Engine::open(p.root(), options).expect("open engine");
    e.set_symbol_locator(Arc::new(IndexLocator));
    e
}

/// Builds a request from JSON (`{"edits": [...]}`) or a bare edit list.
pub fn request(v: Value) -> EditRequest {
    let v = if v.is_array() { json!({ "edits": v }) } else { v };
    serde_json::from_value(v).expect("valid request JSON")
}

pub fn apply(e: &mut Engine, v: Value) -> Result<EditResult, edit::Error> {
    e.apply(&request(v))
}

/// Applies and expects failure; returns the wire form of the error.
pub fn fail(e: &mut Engine, v: Value) -> ErrorInfo {
    match apply(e, v) {
        Ok(r) => panic!("expected an error, got {r:#?}"),
        Err(err) => err.to_info(),
    }
}

pub fn assert_code(info: &ErrorInfo, code: ErrorCode) {
    assert_eq!(info.code, code, "{info:#?}");
}

pub fn sha(bytes: impl AsRef<[u8]>) -> String {
    stdx::sha256_hex(bytes.as_ref())
}

/// Every file under the root except `.ironbees/`, with its bytes: a snapshot to
/// compare whole projects.
pub fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = stdx::to_slash(p.strip_prefix(root).unwrap());
            if rel == ".ironbees" {
                continue;
            }
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.push((format!("{rel} -> {}", target.display()), Vec::new()));
            } else if ft.is_dir() {
                out.push((format!("{rel}/"), Vec::new()));
                walk(root, &p, out);
            } else {
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    walk(root, root, &mut out);
    out
}

#[cfg(unix)]
pub fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// `replaceSymbol` through the real code index, as the CLI wires it.
pub struct IndexLocator;

impl SymbolLocator for IndexLocator {
    fn locate(&self, path: &str, bytes: &[u8], name: &str) -> Result<Vec<SymbolSpan>, String> {
        let lang = code_index::Language::from_path(Path::new(path))
            .ok_or_else(|| format!("no grammar for {path}"))?;
        Ok(code_index::analyze(lang, bytes)
            .definitions
            .into_iter()
            .filter(|d| d.qualified_name == name)
            .map(|d| SymbolSpan { start_byte: d.start_byte, end_byte: d.end_byte, body: d.body })
            .collect())
    }

    fn names(&self, path: &str, bytes: &[u8]) -> Vec<String> {
        let Some(lang) = code_index::Language::from_path(Path::new(path)) else {
            return Vec::new();
        };
        code_index::analyze(lang, bytes).definitions.into_iter().map(|d| d.qualified_name).collect()
    }
}
