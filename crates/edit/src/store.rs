//! The engine's files under `.ironbees/edits/`: content-addressed blobs and the
//! write-ahead journal.
//!
//! A transaction is described by a [`TxRecord`]: for every file, the version before
//! and after (content hash, size, permissions; `None` = absent). Contents live in
//! `blobs/<sha256>`, written and synced before the record; the record is written
//! (atomically, synced) to `journal/<id>.json` before any project file is touched.
//! From then on every project file is, at each instant, one of the two versions the
//! record names, and the record is enough to go back (or to know we are done).

use std::{
    io::{self, Write},
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use crate::{
    error::{Error, Result},
    failpoint,
};

/// One version of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Version {
    /// SHA-256 of the content, lower-case hex; the blob's name.
    pub hash: String,
    pub size: u64,
    /// Unix permission bits (`0o644`); other platforms record 0o644.
    pub mode: u32,
}

/// One file's change within a transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Transition {
    /// Relative to the project root, `/`-separated.
    pub path: String,
    pub before: Option<Version>,
    pub after: Option<Version>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Kind {
    Edit,
    Undo,
    Redo,
}

/// A transaction as journaled before it runs and as kept in history after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TxRecord {
    pub version: u32,
    pub id: String,
    pub kind: Kind,
    /// For undo/redo: the edit transaction they act on.
    pub target: Option<String>,
    pub time_unix_ms: i64,
    pub description: String,
    /// In the order they are applied (rolled back in reverse).
    pub transitions: Vec<Transition>,
    /// Directories this transaction creates (parents first); removed again, when
    /// empty, by a rollback or an undo.
    pub created_dirs: Vec<String>,
}

pub(crate) const RECORD_VERSION: u32 = 1;

/// Paths of the engine's state.
pub(crate) struct Store {
    pub dir: PathBuf,
    journal: PathBuf,
    blobs: PathBuf,
    pub recovered: PathBuf,
}

impl Store {
    /// Creates the directories under `state_dir` (`.ironbees/`) on first use.
    pub(crate) fn open(state_dir: &Path) -> Result<Store> {
        let dir = state_dir.join("edits");
        let store = Store {
            journal: dir.join("journal"),
            blobs: dir.join("blobs"),
            recovered: dir.join("recovered"),
            dir,
        };
        for d in [&store.journal, &store.blobs] {
            std::fs::create_dir_all(d).map_err(|e| Error::io(d.display().to_string(), e))?;
        }
        Ok(store)
    }

    fn blob_path(&self, hash: &str) -> PathBuf {
        self.blobs.join(hash)
    }

    /// Stores each content under its hash (once). Everything is synced before this
    /// returns, the directory once for all: a journal may only name blobs that are
    /// on disk.
    pub(crate) fn put_blobs<'a>(&self, contents: impl IntoIterator<Item = &'a [u8]>) -> Result<()> {
        let mut wrote = false;
        for bytes in contents {
            let hash = stdx::sha256_hex(bytes);
            let p = self.blob_path(&hash);
            // Already stored (an earlier transaction had this content): trust it
            // only if it still verifies, or a damaged blob would be what a rollback
            // restores.
            if let Ok(m) = std::fs::metadata(&p)
                && m.len() == bytes.len() as u64
                && std::fs::read(&p).is_ok_and(|b| stdx::sha256_hex(&b) == hash)
            {
                continue;
            }
            let err = |e: io::Error| Error::io(p.display().to_string(), e);
            let mut tmp = tempfile::Builder::new()
                .prefix(".ironbees-tmp-")
                .tempfile_in(&self.blobs)
                .map_err(err)?;
            tmp.write_all(bytes).map_err(err)?;
            tmp.as_file().sync_all().map_err(err)?;
            tmp.persist(&p).map_err(|e| err(e.error))?;
            wrote = true;
            failpoint::hit("blob stored");
        }
        if wrote {
            stdx::sync_dir_best_effort(&self.blobs);
        }
        Ok(())
    }

    /// Reads a blob and checks it against its name.
    pub(crate) fn get_blob(&self, hash: &str) -> Result<Vec<u8>> {
        let p = self.blob_path(hash);
        let bytes = std::fs::read(&p).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Error::Corrupt {
                path: p.display().to_string(),
                reason: "a stored file version is missing from the edit store".to_owned(),
            },
            _ => Error::io(p.display().to_string(), e),
        })?;
        if stdx::sha256_hex(&bytes) != hash {
            return Err(Error::Corrupt {
                path: p.display().to_string(),
                reason: "a stored file version does not match its hash (disk corruption?)"
                    .to_owned(),
            });
        }
        Ok(bytes)
    }

    pub(crate) fn blob_names(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let rd = std::fs::read_dir(&self.blobs)
            .map_err(|e| Error::io(self.blobs.display().to_string(), e))?;
        for entry in rd.flatten() {
            out.push(entry.file_name().to_string_lossy().into_owned());
        }
        Ok(out)
    }

    pub(crate) fn remove_blob(&self, name: &str) {
        // Best effort: an orphan blob costs only space and goes with the next sweep.
        let _ = std::fs::remove_file(self.blobs.join(name));
    }

    fn journal_path(&self, id: &str) -> PathBuf {
        self.journal.join(format!("{id}.json"))
    }

    /// Writes the journal record, synced (file and directory) before returning.
    pub(crate) fn write_journal(&self, rec: &TxRecord) -> Result<()> {
        let p = self.journal_path(&rec.id);
        let json = serde_json::to_vec_pretty(rec).expect("records serialize");
        stdx::atomic_write(&p, &json).map_err(|e| Error::io(p.display().to_string(), e))
    }

    pub(crate) fn remove_journal(&self, id: &str) -> Result<()> {
        let p = self.journal_path(id);
        match std::fs::remove_file(&p) {
            Ok(()) => {
                stdx::sync_dir_best_effort(&self.journal);
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(p.display().to_string(), e)),
        }
    }

    /// Every journal record left behind, oldest first. A record that does not parse
    /// is an error: the engine refuses to guess what was in flight.
    pub(crate) fn journals(&self) -> Result<Vec<TxRecord>> {
        let rd = std::fs::read_dir(&self.journal)
            .map_err(|e| Error::io(self.journal.display().to_string(), e))?;
        let mut out = Vec::new();
        for entry in rd.flatten() {
            let p = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".ironbees-tmp-") {
                // A journal write that never completed: nothing was applied after it.
                let _ = std::fs::remove_file(&p);
                continue;
            }
            if !name.ends_with(".json") {
                continue;
            }
            let bytes = std::fs::read(&p).map_err(|e| Error::io(p.display().to_string(), e))?;
            let rec: TxRecord = serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt {
                path: p.display().to_string(),
                reason: format!(
                    "unreadable edit journal ({e}); the files it names may be half-changed. \
                     Check them, then delete this file to continue"
                ),
            })?;
            out.push(rec);
        }
        out.sort_by(|a, b| a.time_unix_ms.cmp(&b.time_unix_ms).then(a.id.cmp(&b.id)));
        // Blob writes interrupted before their rename leave temp files behind.
        if let Ok(rd) = std::fs::read_dir(&self.blobs) {
            for entry in rd.flatten() {
                if entry.file_name().to_string_lossy().starts_with(".ironbees-tmp-") {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        Ok(out)
    }
}
