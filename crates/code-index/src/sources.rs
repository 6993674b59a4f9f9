//! Reading file contents for analyses that need more than the index stores (the
//! lines a repository map shows, branch counts for complexity).
//!
//! A trait rather than a path so that analyses stay testable on in-memory fixtures
//! and a long-running server can serve contents from its own cache.

use std::{collections::HashMap, path::PathBuf};

/// File contents by project-relative path.
pub trait Sources: Sync {
    /// The bytes of `path`, or None when it cannot be read (deleted since the index
    /// was updated, unreadable, too large).
    fn read(&self, path: &str) -> Option<Vec<u8>>;
}

/// Files read from disk under a project root (see [`crate::index::Index::sources`]).
#[derive(Debug, Clone)]
pub struct DiskSources {
    root: PathBuf,
    max_file_size: u64,
}

impl DiskSources {
    pub fn new(root: PathBuf, max_file_size: u64) -> DiskSources {
        DiskSources { root, max_file_size }
    }
}

impl Sources for DiskSources {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        // Index paths are relative and normalized; refuse anything else rather than
        // read outside the root.
        if path.starts_with('/') || path.split('/').any(|c| c == "..") {
            return None;
        }
        match stdx::read_to_end_limited(&self.root.join(path), self.max_file_size) {
            Ok(stdx::ReadLimited::Complete(bytes)) => Some(bytes),
            _ => None,
        }
    }
}

/// In-memory contents (tests, callers holding files already).
impl Sources for HashMap<String, String> {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.get(path).map(|s| s.as_bytes().to_vec())
    }
}
