//! Dev-only helpers for tests: multi-file text fixtures written into temporary
//! directories.
//!
//! A fixture is one string with `//- path` headers, as in rust-analyzer:
//!
//! ```text
//! //- src/lib.rs
//! pub fn a() {}
//! //- src/b.py
//! def b(): pass
//! ```
//!
//! With the `mock-llm` feature, [`mock_llm`] is a local HTTP server that speaks the
//! Anthropic Messages and OpenAI Chat Completions wire formats (JSON and SSE) and
//! injects faults: the only fake in ironbees' tests, and only at the wire.
//!
//! With the `postgres` feature, [`postgres::PgServer`] starts a real PostgreSQL
//! server in a temporary directory (the replicas' store is tested against the
//! real thing, never a fake).
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "mock-llm")]
pub mod mock_llm;
#[cfg(feature = "postgres")]
pub mod postgres;

use std::path::{Path, PathBuf};

/// A temporary project directory, removed on drop.
pub struct TempProject {
    dir: tempfile::TempDir,
}

impl TempProject {
    /// An empty project.
    pub fn new() -> TempProject {
        TempProject {
            dir: tempfile::Builder::new()
                .prefix("ironbees-test-")
                .tempdir()
                .expect("create temp dir"),
        }
    }

    /// A project holding the files of a `//- path` fixture.
    pub fn with_fixture(fixture: &str) -> TempProject {
        let p = TempProject::new();
        for (path, text) in parse_fixture(fixture) {
            p.write(&path, &text);
        }
        p
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes a file, creating parent directories.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent dirs");
        }
        std::fs::write(&p, contents).expect("write fixture file");
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read file")
    }
}

impl Default for TempProject {
    fn default() -> Self {
        Self::new()
    }
}

/// Splits a `//- path` fixture into (path, text) pairs. Text before the first header
/// is ignored; a common leading indentation is removed.
pub fn parse_fixture(fixture: &str) -> Vec<(String, String)> {
    let fixture = dedent(fixture);
    let mut out: Vec<(String, String)> = Vec::new();
    for line in fixture.lines() {
        if let Some(path) = line.strip_prefix("//- ") {
            out.push((path.trim().to_owned(), String::new()));
        } else if let Some((_, text)) = out.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    out
}

fn dedent(s: &str) -> String {
    let indent = s
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    s.lines()
        .map(|l| if l.len() >= indent { &l[indent..] } else { l.trim_start() })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_splits_files() {
        let files = parse_fixture(
            "
            //- a/b.rs
            fn x() {}
            //- c.py
            def y():
                pass
            ",
        );
        assert_eq!(files.len(), 2);
        assert_eq!(files[0], ("a/b.rs".to_owned(), "fn x() {}\n".to_owned()));
        assert_eq!(files[1].1, "def y():\n    pass\n");
    }
}
