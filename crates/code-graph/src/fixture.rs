//! Test fixtures: a `//- path` text fixture as a snapshot with its sources.

use std::collections::HashMap;

use code_index::{Language, Project, analyze};

use crate::{resolve::Manifest, snapshot::Snapshot};

pub struct Fixture {
    pub snapshot: Snapshot,
    pub sources: HashMap<String, String>,
}

/// Files with a known language are analyzed; others (Cargo.toml, go.mod) become
/// manifests for import resolution. Every file is a source.
pub fn fixture(text: &str) -> Fixture {
    let mut files = Vec::new();
    let mut manifests = Vec::new();
    let mut sources = HashMap::new();
    for (path, body) in test_support::parse_fixture(text) {
        match Language::from_path(std::path::Path::new(&path)) {
            Some(lang) => files.push((path.clone(), lang, analyze(lang, body.as_bytes()))),
            None => manifests.push(Manifest { path: path.clone(), text: body.clone() }),
        }
        sources.insert(path, body);
    }
    // As the store loads them: by path.
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Fixture { snapshot: Snapshot::build(Project::from_analyses(files), manifests), sources }
}
