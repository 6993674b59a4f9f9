//! The long-lived state of one project: index, snapshot, search index, edit engine,
//! and how they are kept fresh.
//!
//! Freshness: a file watcher (inotify through `notify`) only sets a dirty flag; the
//! next call runs `Index::try_update`, whose walk decides what really changed, and
//! rebuilds the snapshot only when something did (or when another process wrote
//! the index database meanwhile). The watcher is a trigger, never the source of
//! truth, so a lost or coalesced event costs nothing but a walk. Without a watcher
//! (inotify limits, or turned off) every call walks. The files a call names are
//! also checked by content hash against the snapshot, which closes the window
//! between a client's write and the watcher's event.

use std::{
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::SystemTime,
};

use code_index::{Index, IndexConfig, Progress, SearchIndex, Snapshot};
use edit::{Engine, EngineOptions, SymbolLocator, SymbolSpan};
use protocol::{ErrorCode, Warning, WarningLevel};

use crate::error::{Error, Result};

/// What a call reports to and is cancelled by.
pub struct Call<'a> {
    pub progress: &'a dyn Progress,
    pub cancel: &'a AtomicBool,
}

impl<'a> Call<'a> {
    pub fn new(progress: &'a dyn Progress, cancel: &'a AtomicBool) -> Call<'a> {
        Call { progress, cancel }
    }

    pub(crate) fn check_cancel(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) { Err(Error::Cancelled) } else { Ok(()) }
    }
}

/// How to run project commands (tests, builds), given by the binary.
#[derive(Debug, Clone)]
pub struct SandboxSetup {
    pub config: sandbox::SandboxConfig,
    pub policy: sandbox::Policy,
    /// The environment for commands (already filtered of secrets) and the names removed.
    pub env: Vec<(String, String)>,
    pub env_removed: Vec<String>,
}

/// How a [`Workspace`] is opened.
#[derive(Debug, Clone)]
pub struct WorkspaceOptions {
    pub index: IndexConfig,
    pub edit: EngineOptions,
    /// Watch the tree for changes (else every call walks it).
    pub watch: bool,
    /// Needed by `manage test` and `change` with `check: build`.
    pub sandbox: Option<SandboxSetup>,
}

impl Default for WorkspaceOptions {
    fn default() -> Self {
        WorkspaceOptions {
            index: IndexConfig::default(),
            edit: EngineOptions::default(),
            watch: true,
            sandbox: None,
        }
    }
}

/// One project root and everything the pillars compute from. See the module docs
/// for how it stays fresh. `Send`, not `Sync`: a server keeps it behind a mutex.
pub struct Workspace {
    pub(crate) root: PathBuf,
    pub(crate) index: Index,
    pub(crate) engine: Engine,
    pub(crate) options: WorkspaceOptions,
    pub(crate) snapshot: Option<Arc<Snapshot>>,
    search: Option<SearchIndex>,
    dirty: Arc<AtomicBool>,
    watcher: Option<notify::RecommendedWatcher>,
    /// (mtime, size) of the index database files after our last look.
    db_stamp: Vec<Option<(SystemTime, u64)>>,
    pub(crate) sandbox: Option<sandbox::Sandbox>,
}

impl Workspace {
    /// Opens the index and the edit engine of `root` (recovering an interrupted
    /// edit) and starts the watcher. The snapshot is built by the first call.
    pub fn open(root: &Path, options: WorkspaceOptions) -> Result<Workspace> {
        let index = Index::open(root, options.index.clone())?;
        let root = index.root().to_owned();
        let mut engine = Engine::open(&root, options.edit.clone())?;
        engine.set_symbol_locator(Arc::new(IndexLocator));
        let dirty = Arc::new(AtomicBool::new(true));
        let watcher = if options.watch { start_watcher(&root, Arc::clone(&dirty)) } else { None };
        Ok(Workspace {
            root,
            index,
            engine,
            options,
            snapshot: None,
            search: None,
            dirty,
            watcher,
            db_stamp: Vec::new(),
            sandbox: None,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What the edit engine repaired when it opened (an interrupted transaction).
    pub fn recovery(&self) -> &edit::Recovery {
        self.engine.recovery()
    }

    /// `watcher` or `polling`.
    pub fn freshness_mode(&self) -> &'static str {
        if self.watcher.is_some() { "watcher" } else { "polling" }
    }

    /// Marks the workspace dirty: the next call re-checks the files.
    pub fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::SeqCst);
    }

    /// Brings the index and snapshot up to date when something may have changed.
    /// Returns warnings (INDEX_STALE when another process holds the index lock).
    pub(crate) fn refresh(&mut self, call: &Call<'_>) -> Result<Vec<Warning>> {
        let dirty = self.dirty.swap(false, Ordering::SeqCst);
        if !dirty && self.watcher.is_some() && self.snapshot.is_some() {
            return Ok(Vec::new());
        }
        let before = self.db_files_stamp();
        let report = match self.index.try_update(call.progress, call.cancel) {
            Ok(r) => r,
            Err(code_index::Error::Cancelled) => {
                self.dirty.store(true, Ordering::SeqCst);
                return Err(Error::Cancelled);
            }
            Err(e) => {
                self.dirty.store(true, Ordering::SeqCst);
                return Err(e.into());
            }
        };
        let mut warnings = Vec::new();
        let changed = match &report {
            Some(r) => r.added + r.modified + r.deleted > 0,
            None => {
                // Another process is updating: answer from the last committed state
                // and try again next call.
                self.dirty.store(true, Ordering::SeqCst);
                warnings.push(stale_warning());
                true
            }
        };
        let foreign_write = !self.db_stamp.is_empty() && before != self.db_stamp;
        if self.snapshot.is_none() || changed || foreign_write {
            call.progress.phase("building the project snapshot", None);
            self.snapshot = Some(Arc::new(self.index.snapshot()?));
            self.search = None;
        }
        self.db_stamp = self.db_files_stamp();
        Ok(warnings)
    }

    /// Refreshes, then checks the named files' content against the snapshot and
    /// refreshes again if one differs (a write the watcher has not reported yet).
    pub(crate) fn fresh_snapshot(
        &mut self,
        call: &Call<'_>,
        paths: &[&str],
    ) -> Result<(Arc<Snapshot>, Vec<Warning>)> {
        let mut warnings = self.refresh(call)?;
        let snap = self.snapshot.clone().expect("refresh builds the snapshot");
        let differs = paths.iter().any(|p| {
            let on_disk = std::fs::read(self.root.join(p)).ok().map(|b| stdx::sha256_hex(&b));
            let indexed = snap.project.file_id(p).map(|f| snap.project.file(f).hash.clone());
            match (on_disk, indexed) {
                (Some(d), Some(i)) => d != i,
                (Some(_), None) => code_index::Language::from_path(Path::new(p)).is_some(),
                (None, Some(_)) => true,
                (None, None) => false,
            }
        });
        if differs {
            self.mark_dirty();
            warnings.extend(self.refresh(call)?);
        }
        Ok((self.snapshot.clone().expect("refresh builds the snapshot"), warnings))
    }

    /// The search index, synced with the current snapshot (built on first use).
    pub(crate) fn search(&mut self) -> Result<&SearchIndex> {
        if self.search.is_none() {
            let snap = self.snapshot.clone().expect("call refresh first");
            self.search = Some(self.index.search_index(&snap)?);
        }
        Ok(self.search.as_ref().expect("just built"))
    }

    /// The sandbox (probed on first use).
    pub(crate) fn sandbox(&mut self) -> Result<(&sandbox::Sandbox, SandboxSetup)> {
        let Some(setup) = self.options.sandbox.clone() else {
            return Err(Error::Unavailable(
                "this workspace was opened without a sandbox; run the tests with `ironbees test`"
                    .to_owned(),
            ));
        };
        if self.sandbox.is_none() {
            self.sandbox = Some(sandbox::Sandbox::new(setup.config.clone())?);
        }
        Ok((self.sandbox.as_ref().expect("just set"), setup))
    }

    /// A user path (relative to the root, or absolute inside it) as a root-relative
    /// path; PATH_OUTSIDE_ROOT otherwise.
    pub(crate) fn rel_path(&self, user: &str) -> Result<String> {
        let user = user.trim();
        if user.is_empty() {
            return Err(Error::InvalidArgument("the path is empty".to_owned()));
        }
        if user.len() > stdx::MAX_PATH_BYTES {
            return Err(Error::InvalidArgument(format!(
                "the path is {} bytes long ({}); a path is at most {} bytes",
                user.len(),
                stdx::clip(user, 80),
                stdx::MAX_PATH_BYTES
            )));
        }
        let rel = self.index.relative_path(&self.root, Path::new(user))?;
        let first = rel.split('/').next().unwrap_or("");
        if first == ".git" || first == code_index::STATE_DIR {
            return Err(Error::Index(code_index::Error::PathOutsideRoot {
                path: PathBuf::from(user),
                root: self.root.clone(),
            }));
        }
        Ok(rel)
    }

    /// Rebuilds the index: incrementally (waiting for another updater), or from
    /// scratch.
    pub(crate) fn rebuild(
        &mut self,
        full: bool,
        call: &Call<'_>,
    ) -> Result<code_index::UpdateReport> {
        if full {
            self.search = None;
            self.snapshot = None;
            self.index = Index::rebuild(&self.root, self.options.index.clone())?;
        }
        let report = match self.index.update(call.progress, call.cancel) {
            Err(code_index::Error::Cancelled) => return Err(Error::Cancelled),
            other => other?,
        };
        call.progress.phase("building the project snapshot", None);
        self.snapshot = Some(Arc::new(self.index.snapshot()?));
        self.search = None;
        self.dirty.store(false, Ordering::SeqCst);
        self.db_stamp = self.db_files_stamp();
        Ok(report)
    }

    fn db_files_stamp(&self) -> Vec<Option<(SystemTime, u64)>> {
        let dir = self.index.state_dir();
        ["index.db", "index.db-wal"]
            .iter()
            .map(|n| {
                let m = std::fs::metadata(dir.join(n)).ok()?;
                Some((m.modified().ok()?, m.len()))
            })
            .collect()
    }
}

pub(crate) fn stale_warning() -> Warning {
    Warning {
        severity: WarningLevel::Warning,
        code: ErrorCode::IndexStale.as_str().to_owned(),
        message: "another process is updating the index; this answer comes from its last \
                  committed state and may miss the newest changes"
            .to_owned(),
        affected: Vec::new(),
        mitigation: Some("call `manage` with {\"command\": \"rebuild\"} to wait for it".to_owned()),
    }
}

/// Starts a recursive watcher that sets `dirty` on any change outside `.git/` and
/// `.ironbees/`. None when the platform refuses (the workspace then polls).
fn start_watcher(root: &Path, dirty: Arc<AtomicBool>) -> Option<notify::RecommendedWatcher> {
    use notify::{EventKind, RecursiveMode, Watcher, event::AccessKind};
    let internal = [root.join(".git"), root.join(code_index::STATE_DIR)];
    let mut watcher =
        notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
            Ok(ev) => {
                let relevant = match ev.kind {
                    EventKind::Access(AccessKind::Close(notify::event::AccessMode::Write)) => true,
                    EventKind::Access(_) => false,
                    _ => true,
                };
                if relevant && ev.paths.iter().any(|p| !internal.iter().any(|i| p.starts_with(i))) {
                    dirty.store(true, Ordering::SeqCst);
                }
            }
            // An overflowed queue or a watch error: re-check everything.
            Err(_) => dirty.store(true, Ordering::SeqCst),
        })
        .ok()?;
    watcher.watch(root, RecursiveMode::Recursive).ok()?;
    Some(watcher)
}

/// `replaceSymbol` through the code index: definitions of the exact bytes being
/// edited, by qualified name. The one locator every edit engine of ours uses (the
/// pillars' and `ironbees change`'s).
pub struct IndexLocator;

impl SymbolLocator for IndexLocator {
    fn locate(
        &self,
        path: &str,
        bytes: &[u8],
        name: &str,
    ) -> std::result::Result<Vec<SymbolSpan>, String> {
        let lang = code_index::Language::from_path(Path::new(path))
            .ok_or_else(|| "no grammar for this file type".to_owned())?;
        Ok(code_index::analyze(lang, bytes)
            .definitions
            .into_iter()
            .filter(|d| d.qualified_name == name)
            .map(|d| SymbolSpan { start_byte: d.start_byte, end_byte: d.end_byte, body: d.body })
            .collect())
    }

    fn names(&self, path: &str, bytes: &[u8]) -> Vec<String> {
        match code_index::Language::from_path(Path::new(path)) {
            Some(lang) => code_index::analyze(lang, bytes)
                .definitions
                .into_iter()
                .map(|d| d.qualified_name)
                .collect(),
            None => Vec::new(),
        }
    }
}
