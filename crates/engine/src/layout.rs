//! The layout of `.ironbees/`, in one place.
//!
//! Every piece of state a session keeps lives under the project's `.ironbees/`
//! directory (git-ignored by its own `.gitignore`). The directory's name is
//! `stdx::STATE_DIR`; the crates that own a part of it (the index, the edit
//! engine) use that name and their own file names, listed here so a newcomer finds
//! them all at once:
//!
//! | path | owner | what |
//! | --- | --- | --- |
//! | `index.db`, `index.lock` | code-index | the index (SQLite, WAL) and its updater lock |
//! | `search/` | retrieval | the BM25 index (tantivy) |
//! | `derived/` | engine | `snapshot.bin`: the project snapshot, stored under its key |
//! | `edits/` | edit | journal, blobs, `history.db`, `lock`, `recovered/` |
//! | `embeddings/` | engine | vectors per embedding model |
//! | `runs/` | agent runs | `workflow.db` (checkpoints, events), run locks |
//! | `agents/` | the user | project agent definitions (`NAME/agent.yaml`) |
//! | `config.yaml` | the user | project configuration (read by the binary) |

use std::path::{Path, PathBuf};

/// Where a session's state lives.
#[derive(Debug, Clone)]
pub struct Layout {
    state: PathBuf,
}

impl Layout {
    pub fn new(root: &Path) -> Layout {
        Layout { state: root.join(stdx::STATE_DIR) }
    }

    /// `.ironbees/`.
    pub fn state_dir(&self) -> &Path {
        &self.state
    }

    /// Data derived from the index and kept between processes (the snapshot).
    pub fn derived_dir(&self) -> PathBuf {
        self.state.join("derived")
    }

    /// Cached vectors of each embedding model.
    pub fn embeddings_dir(&self) -> PathBuf {
        self.state.join("embeddings")
    }

    /// Agent runs: the workflow store (checkpoints, events, locks).
    pub fn runs_dir(&self) -> PathBuf {
        self.state.join("runs")
    }

    /// The project's own agent definitions under `.ironbees/`.
    pub fn agents_dir(&self) -> PathBuf {
        self.state.join("agents")
    }
}
