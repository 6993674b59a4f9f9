//! Test fixtures: a `//- path` text fixture as a snapshot with its sources.

use std::collections::HashMap;

use code_index::{FileAnalysis, Language, Project, analyze};

use crate::{resolve::Manifest, snapshot::Snapshot};

pub struct Fixture {
    pub snapshot: Snapshot,
    pub sources: HashMap<String, String>,
}

/// Files with a known language are analyzed; others (Cargo.toml, go.mod) become
/// manifests for import resolution. Every file is a source.
pub fn fixture(text: &str) -> Fixture {
    let (mut files, manifests, sources) = split(text);
    // As the store loads them: by path.
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Fixture { snapshot: Snapshot::build(Project::from_analyses(files), manifests), sources }
}

/// The fixture's source files as a project in the fixture's order (the tests of
/// resolution and of the graph build number files as written), and its other
/// files as manifests.
#[cfg(test)]
pub(crate) fn project_and_manifests(text: &str) -> (Project, Vec<Manifest>) {
    let (files, manifests, _) = split(text);
    (Project::from_analyses(files), manifests)
}

type Analyzed = Vec<(String, Language, FileAnalysis)>;

/// The fixture's files, in order: analyzed when a language is known, else
/// manifests; and every file's text.
fn split(text: &str) -> (Analyzed, Vec<Manifest>, HashMap<String, String>) {
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
    (files, manifests, sources)
}
