//! The engine: locking, the transaction protocol, recovery, undo/redo, history.
//!
//! The protocol of one transaction (every step synced before the next):
//!
//! 1. every before/after content is stored as a blob;
//! 2. the journal record (all transitions) is written;
//! 3. each project file is replaced atomically (temp file, fsync, rename, dir
//!    fsync), after checking it is still the version the plan read;
//! 4. the caller's check runs (if any);
//! 5. the history row is committed: this is the commit point;
//! 6. the journal record is deleted.
//!
//! A crash before 5 leaves a journal without a history row: the next open rolls
//! it back. A crash after 5 leaves a journal with a row: the next open deletes the
//! journal. Rolling back never overwrites a file that is in neither of the two
//! versions the record names (someone edited it since); it is left alone, its
//! intended content saved under `.ironbees/edits/recovered/`, and reported.

use std::{
    collections::{HashMap, HashSet},
    fs::File,
    io::{self, Read, Seek, Write},
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use protocol::{
    EditRequest, EditResult, ErrorCode, FileChange, FileChangeKind, TransactionCommitted,
    TransactionKind, TransactionState, TransactionSummary,
};

use crate::{
    error::{Error, Result},
    failpoint,
    history::{self, History},
    plan::{self, Content, Slot},
    store::{Kind, RECORD_VERSION, Store, Transition, TxRecord, Version},
    symbol::SymbolLocator,
};

/// The directory under the project root where ironbees keeps its state.
pub use stdx::STATE_DIR;

/// Limits of the engine. The defaults suit a source repository.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Files larger than this are refused (`FILE_TOO_LARGE`): their old content is
    /// kept for undo. Default 16 MiB.
    pub max_file_size: u64,
    /// Keep at most this many transactions in history (older ones can no longer be
    /// undone). Default 500.
    pub history_limit: usize,
    /// Keep at most this many bytes of stored file versions; the oldest
    /// transactions go first (the newest is always kept). Default 512 MiB.
    pub history_max_bytes: u64,
    /// How long to wait for another writer before failing with `BUSY`. Default 10 s.
    pub lock_timeout: Duration,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            max_file_size: 16 * 1024 * 1024,
            history_limit: 500,
            history_max_bytes: 512 * 1024 * 1024,
            lock_timeout: Duration::from_secs(10),
        }
    }
}

/// Why the caller's post-edit check failed ([`Engine::apply_checked`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailure {
    /// The code the error carries (e.g. `SYNTAX_ERROR`, `TOOL_EXECUTION_FAILED`).
    pub code: ErrorCode,
    pub message: String,
}

/// What opening the engine found and repaired.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Interrupted transactions that were rolled back (they never committed).
    pub rolled_back: Vec<String>,
    /// Committed transactions whose bookkeeping was finished.
    pub completed: Vec<String>,
    /// Files a rollback did not touch because they changed after the crash.
    pub conflicts: Vec<RecoveryConflict>,
}

impl Recovery {
    pub fn is_empty(&self) -> bool {
        self.rolled_back.is_empty() && self.completed.is_empty() && self.conflicts.is_empty()
    }
}

/// A file an interrupted transaction could not restore without losing later work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryConflict {
    pub transaction: String,
    pub path: String,
    /// Where the version the rollback would have restored was saved (relative to
    /// the root), when there was one.
    pub saved_to: Option<String>,
}

/// Whether an edit transaction of `root` was interrupted and awaits recovery (its
/// journal is not empty). Cheap — one directory listing, nothing created — so
/// every command can ask before it reads the project, and open an [`Engine`]
/// (which recovers) only when the answer is yes: no command may see, index or
/// report the half-applied files of a killed multi-file edit.
pub fn needs_recovery(root: &Path) -> bool {
    let journal = root.join(STATE_DIR).join("edits").join("journal");
    std::fs::read_dir(journal).is_ok_and(|mut rd| rd.next().is_some())
}

/// A shadow overlay: files by root-relative path as a run has them, `None` where it
/// deleted one. See [`Engine::preview_over`].
pub type Overlay = std::collections::BTreeMap<String, Option<Vec<u8>>>;

/// A file's content before and after a planned change (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileVersions {
    /// The path before the change (a rename's source).
    pub path: String,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
}

/// The result of [`Engine::preview`]: the dry run's answer and the contents.
#[derive(Debug, Clone)]
pub struct Preview {
    pub result: EditResult,
    /// One per `result.files` entry, in the same order.
    pub files: Vec<FileVersions>,
}

/// A change planned against the files as they are ([`Engine::prepare`]): the
/// preview a caller shows or analyzes, and what [`Engine::commit`] writes. A
/// caller that previews and then applies commits this, so the change applied is
/// the change previewed, planned once.
pub struct Planned {
    /// The dry run's answer and every file's contents before and after.
    pub preview: Preview,
    plan: plan::Plan,
    description: Option<String>,
}

/// Told of every transaction the engine commits ([`Engine::set_commit_hook`]).
pub type CommitHook = Box<dyn Fn(&TransactionCommitted) + Send>;

/// The edit engine of one project root. See the crate documentation.
pub struct Engine {
    root: PathBuf,
    store: Store,
    history: History,
    options: EngineOptions,
    default_mode: u32,
    locator: Option<Arc<dyn SymbolLocator>>,
    recovery: Recovery,
    lock_path: PathBuf,
    on_commit: Option<CommitHook>,
}

impl Engine {
    /// Opens the engine for `root`, creating `.ironbees/edits/` on first use, and
    /// recovers any transaction a crash interrupted.
    pub fn open(root: &Path, options: EngineOptions) -> Result<Engine> {
        let meta = std::fs::metadata(root).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Error::NotFound { path: root.display().to_string() },
            _ => Error::io(root.display().to_string(), e),
        })?;
        if !meta.is_dir() {
            return Err(Error::InvalidArgument {
                edit: None,
                message: format!("{} is not a directory", root.display()),
            });
        }
        let root = root.canonicalize().map_err(|e| Error::io(root.display().to_string(), e))?;
        let state = ensure_state_dir(&root)?;
        let store = Store::open(&state)?;
        let history = History::open(&store.dir.join("history.db"))?;
        let default_mode = probe_default_mode(&store.dir);
        let lock_path = store.dir.join("lock");
        let mut engine = Engine {
            root,
            store,
            history,
            options,
            default_mode,
            locator: None,
            recovery: Recovery::default(),
            lock_path,
            on_commit: None,
        };
        engine.try_recover()?;
        Ok(engine)
    }

    /// Recovers interrupted transactions unless another process holds the lock (a
    /// live writer: its journal is in flight, not abandoned). Never waits, so
    /// readers (history, dry runs) are not blocked by a long post-edit check.
    fn try_recover(&mut self) -> Result<()> {
        if let Some(lock) = self.try_lock()? {
            self.recover_locked()?;
            drop(lock);
        }
        Ok(())
    }

    /// Sets the locator `replaceSymbol` uses.
    pub fn set_symbol_locator(&mut self, locator: Arc<dyn SymbolLocator>) {
        self.locator = Some(locator);
    }

    /// Calls `hook` with every transaction this engine commits (an edit, an undo,
    /// a redo), once, after its history row is committed and before the call
    /// that committed it returns; never for a dry run or a transaction rolled
    /// back. It runs under the engine's writer lock: it should only hand the
    /// announcement on (a channel), not act on it.
    pub fn set_commit_hook(&mut self, hook: CommitHook) {
        self.on_commit = Some(hook);
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What recovery did so far (at open and before each write).
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// A dry run that also hands back every file's content before and after: what
    /// a caller analyzes (which definitions a change touches) or keeps in an
    /// overlay, without reading the files again or re-applying the diffs.
    pub fn preview(&mut self, req: &EditRequest) -> Result<Preview> {
        self.prepare(req).map(|p| p.preview)
    }

    /// Plans `req` against the files as they are now (a dry run: nothing is
    /// written, no lock is taken), keeping the plan for [`Engine::commit`].
    pub fn prepare(&mut self, req: &EditRequest) -> Result<Planned> {
        // Plan against a recovered project, not a crashed writer's half state.
        self.try_recover()?;
        let plan = self.plan(req)?;
        Ok(Planned {
            preview: Preview {
                result: EditResult { transaction_id: None, dry_run: true, files: plan.changes() },
                files: plan.versions(),
            },
            plan,
            description: req.description.clone(),
        })
    }

    /// Applies a change [`Engine::prepare`] planned, as one transaction, with
    /// `check` run as in [`Engine::apply_checked`]. The files are not read and
    /// matched again: each must still be the version the plan read, or nothing
    /// is written and the answer is `HASH_MISMATCH` (a file changed between the
    /// preview and the apply; plan again).
    pub fn commit(
        &mut self,
        planned: Planned,
        check: &mut dyn FnMut(&[FileChange]) -> std::result::Result<(), CheckFailure>,
    ) -> Result<EditResult> {
        let _lock = self.lock()?;
        self.recover_locked()?;
        let Planned { preview, plan, description } = planned;
        // Before anything is written: a file whose metadata moved since the plan
        // read it is hashed, and one that is no longer that version refuses the
        // whole transaction. (The hash is checked again just before each rename.)
        for s in plan.slots.iter().filter(|s| s.before != s.after) {
            let unchanged = match std::fs::symlink_metadata(&s.abs) {
                Ok(m) => s.stamp.is_some_and(|st| st == plan::Stamp::of(&m)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => s.before.is_none(),
                Err(e) => return Err(Error::io(&s.rel, e)),
            };
            if unchanged {
                continue;
            }
            let cur = self.current_hash(&s.rel)?;
            let planned_hash = s.before.as_ref().map(|c| c.hash.as_str());
            if cur.as_deref() != planned_hash {
                return Err(Error::HashMismatch {
                    path: s.rel.clone(),
                    edit: None,
                    message: "changed since the change was planned (previewed); nothing was \
                              written: preview it again"
                        .to_owned(),
                    expected: planned_hash.map(str::to_owned),
                    current: cur,
                    changed_by: None,
                });
            }
        }
        self.commit_locked(&plan, description, preview.result.files, check)
    }

    /// [`Engine::preview`] against a shadow overlay: files `overlay` holds are read
    /// from it (`None`: deleted there) instead of the disk. A run's coder edits
    /// through this, keeping its changes out of the working tree until they are
    /// validated and approved; the answer's `after` contents are the overlay's next
    /// versions. Nothing is written.
    pub fn preview_over(&mut self, req: &EditRequest, overlay: &Overlay) -> Result<Preview> {
        self.try_recover()?;
        let mut ctx = self.ctx();
        ctx.overlay = Some(overlay);
        let plan = plan::build(&ctx, req)?;
        Ok(Preview {
            result: EditResult { transaction_id: None, dry_run: true, files: plan.changes() },
            files: plan.versions(),
        })
    }

    /// Applies a change request as one transaction (or, with `dryRun`, only
    /// computes it).
    pub fn apply(&mut self, req: &EditRequest) -> Result<EditResult> {
        self.apply_checked(req, &mut |_| Ok(()))
    }

    /// Like [`Engine::apply`], then runs `check` with the files written and before
    /// the transaction commits; when it fails, every file is restored and the
    /// error ([`Error::CheckFailed`]) carries the check's code and message. A
    /// process killed during the check is rolled back on the next open.
    pub fn apply_checked(
        &mut self,
        req: &EditRequest,
        check: &mut dyn FnMut(&[FileChange]) -> std::result::Result<(), CheckFailure>,
    ) -> Result<EditResult> {
        if req.options.dry_run {
            // Plan against a recovered project, not a crashed writer's half state.
            self.try_recover()?;
            let plan = self.plan(req)?;
            return Ok(EditResult { transaction_id: None, dry_run: true, files: plan.changes() });
        }
        let _lock = self.lock()?;
        self.recover_locked()?;
        let plan = self.plan(req)?;
        let changes = plan.changes();
        self.commit_locked(&plan, req.description.clone(), changes, check)
    }

    /// Executes `plan` (whose `changes` these are) under the writer lock.
    fn commit_locked(
        &mut self,
        plan: &plan::Plan,
        description: Option<String>,
        changes: Vec<FileChange>,
        check: &mut dyn FnMut(&[FileChange]) -> std::result::Result<(), CheckFailure>,
    ) -> Result<EditResult> {
        let transitions = plan.transitions();
        if transitions.is_empty() {
            return Ok(EditResult { transaction_id: None, dry_run: false, files: changes });
        }
        let mut contents = HashMap::new();
        for s in &plan.slots {
            for c in [&s.before, &s.after].into_iter().flatten() {
                contents.insert(c.hash.clone(), c.bytes.clone());
            }
        }
        let rec = TxRecord {
            version: RECORD_VERSION,
            id: new_id(),
            kind: Kind::Edit,
            target: None,
            time_unix_ms: now_ms(),
            description: description.unwrap_or_else(|| describe(&changes)),
            transitions,
            created_dirs: plan.created_dirs.clone(),
        };
        self.execute(&rec, &contents, None, &mut || check(&changes))?;
        self.prune_best_effort(false);
        Ok(EditResult { transaction_id: Some(rec.id), dry_run: false, files: changes })
    }

    /// Undoes an edit transaction (the newest applied one when `id` is `None`).
    /// Refused with `HASH_MISMATCH` when a file it changed was changed again since,
    /// naming the later transaction when there is one: undo never clobbers work.
    pub fn undo(&mut self, id: Option<&str>, dry_run: bool) -> Result<EditResult> {
        self.undo_redo(id, dry_run, true)
    }

    /// Re-applies an undone edit (the most recently undone when `id` is `None`),
    /// when its files are still as the undo left them.
    pub fn redo(&mut self, id: Option<&str>, dry_run: bool) -> Result<EditResult> {
        self.undo_redo(id, dry_run, false)
    }

    fn undo_redo(&mut self, id: Option<&str>, dry_run: bool, undo: bool) -> Result<EditResult> {
        let _lock = if dry_run {
            self.try_recover()?;
            None
        } else {
            let lock = self.lock()?;
            self.recover_locked()?;
            Some(lock)
        };
        let verb = if undo { "undo" } else { "redo" };
        let row = match id {
            Some(id) => self.history.find(id)?,
            None => {
                let latest = if undo {
                    self.history.latest_applied_edit()?
                } else {
                    self.history.latest_undone_edit()?
                };
                latest.ok_or_else(|| {
                    Error::InvalidState(format!(
                        "nothing to {verb}: no {} edit in the history",
                        if undo { "applied" } else { "undone" }
                    ))
                })?
            }
        };
        let orig = &row.record;
        if orig.kind != Kind::Edit {
            return Err(Error::InvalidState(format!(
                "{} is itself an {}; {verb} the edit {} instead",
                orig.id,
                if orig.kind == Kind::Undo { "undo" } else { "redo" },
                orig.target.as_deref().unwrap_or("?")
            )));
        }
        let (want_state, next_state) = if undo {
            (history::APPLIED, history::UNDONE)
        } else {
            (history::UNDONE, history::APPLIED)
        };
        if row.state != want_state {
            return Err(Error::InvalidState(if undo {
                format!("{} is already undone; `redo` re-applies it", orig.id)
            } else {
                format!("{} is applied, not undone; there is nothing to redo", orig.id)
            }));
        }
        // The files must be exactly as the transaction (or its undo) left them.
        let transitions: Vec<Transition> = if undo {
            orig.transitions
                .iter()
                .rev()
                .map(|t| Transition {
                    path: t.path.clone(),
                    before: t.after.clone(),
                    after: t.before.clone(),
                })
                .collect()
        } else {
            orig.transitions.clone()
        };
        for t in &transitions {
            let cur = self.current_hash(&t.path)?;
            if cur.as_deref() != t.before.as_ref().map(|v| v.hash.as_str()) {
                let changed_by = self.history.later_touching(row.seq, &t.path)?;
                return Err(Error::HashMismatch {
                    path: t.path.clone(),
                    edit: None,
                    message: format!(
                        "changed since {} {}{}; refusing to {verb} (it would overwrite that change)",
                        if undo { "transaction" } else { "the undo of" },
                        orig.id,
                        match &changed_by {
                            Some(c) => format!(", by transaction {c} ({verb} that first)"),
                            None => " outside ironbees".to_owned(),
                        }
                    ),
                    expected: t.before.as_ref().map(|v| v.hash.clone()),
                    current: cur,
                    changed_by,
                });
            }
        }
        let mut contents = HashMap::new();
        for t in &transitions {
            for v in [&t.before, &t.after].into_iter().flatten() {
                if !contents.contains_key(&v.hash) {
                    contents.insert(v.hash.clone(), self.store.get_blob(&v.hash)?);
                }
            }
        }
        let changes = self.changes_of(&transitions, &contents);
        if dry_run {
            return Ok(EditResult { transaction_id: None, dry_run: true, files: changes });
        }
        let created_dirs = self.missing_parents(&transitions)?;
        let rec = TxRecord {
            version: RECORD_VERSION,
            id: new_id(),
            kind: if undo { Kind::Undo } else { Kind::Redo },
            target: Some(orig.id.clone()),
            time_unix_ms: now_ms(),
            description: format!("{verb} {}: {}", orig.id, orig.description),
            transitions,
            created_dirs,
        };
        self.execute(&rec, &contents, Some(next_state), &mut || Ok(()))?;
        if undo {
            // Directories the edit created go with it when they are empty again.
            for d in orig.created_dirs.iter().rev() {
                let _ = std::fs::remove_dir(self.root.join(d));
            }
        }
        self.prune_best_effort(false);
        Ok(EditResult { transaction_id: Some(rec.id), dry_run: false, files: changes })
    }

    /// The newest `limit` transactions, newest first.
    pub fn history(&self, limit: usize) -> Result<Vec<TransactionSummary>> {
        Ok(self.history.list(limit)?.iter().map(summary).collect())
    }

    /// One transaction with its per-file diffs (from the stored versions).
    pub fn transaction(&self, id: &str) -> Result<(TransactionSummary, Vec<FileChange>)> {
        let row = self.history.find(id)?;
        let mut contents = HashMap::new();
        for t in &row.record.transitions {
            for v in [&t.before, &t.after].into_iter().flatten() {
                if !contents.contains_key(&v.hash) {
                    contents.insert(v.hash.clone(), self.store.get_blob(&v.hash)?);
                }
            }
        }
        Ok((summary(&row), self.changes_of(&row.record.transitions, &contents)))
    }

    /// SHA-256 of a project file as it is now: the `expectedHash` for the next edit.
    pub fn file_hash(&self, path: &str) -> Result<String> {
        let r = crate::jail::resolve(&self.root, path, crate::jail::Use::Content)?;
        let ctx = self.ctx();
        match plan::read_state(&ctx, &r.rel, &r.abs)? {
            Some(c) => Ok(c.hash),
            None => Err(Error::NotFound { path: r.rel }),
        }
    }

    fn ctx(&self) -> plan::Ctx<'_> {
        plan::Ctx {
            root: &self.root,
            max_file_size: self.options.max_file_size,
            default_mode: self.default_mode,
            locator: self.locator.as_deref(),
            overlay: None,
        }
    }

    fn plan(&self, req: &EditRequest) -> Result<plan::Plan> {
        plan::build(&self.ctx(), req)
    }

    // --- the transaction protocol -----------------------------------------------------

    fn execute(
        &mut self,
        rec: &TxRecord,
        contents: &HashMap<String, Vec<u8>>,
        target_state: Option<&str>,
        check: &mut dyn FnMut() -> std::result::Result<(), CheckFailure>,
    ) -> Result<()> {
        let versions = rec.transitions.iter().flat_map(|t| [&t.before, &t.after]).flatten();
        self.store.put_blobs(versions.map(|v| contents[&v.hash].as_slice()))?;
        self.store.write_journal(rec)?;
        failpoint::hit("journal written");
        if let Err(e) = self.write_files(rec, contents) {
            self.abort(rec)?;
            return Err(e);
        }
        if let Err(f) = check() {
            let left = self.abort(rec)?;
            let mut message = f.message;
            if !left.is_empty() {
                // The check itself changed files (a formatter, a code generator):
                // those are kept, and what the rollback would have written is saved.
                let list: Vec<String> = left
                    .iter()
                    .map(|c| match &c.saved_to {
                        Some(s) => format!("{} (earlier version saved to {s})", c.path),
                        None => c.path.clone(),
                    })
                    .collect();
                message.push_str(&format!(
                    "; changed during the check and left as they are: {}",
                    list.join(", ")
                ));
            }
            return Err(Error::CheckFailed { code: f.code, message });
        }
        failpoint::hit("check passed");
        if let Err(e) = self.history.commit(rec, target_state) {
            // Not committed (SQLite rolled its transaction back): undo the files.
            self.abort(rec)?;
            return Err(e);
        }
        failpoint::hit("committed");
        // Committed: from here on nothing may report failure. A journal that cannot
        // be deleted now is deleted by the next recovery (its history row exists).
        self.sweep_temp_files(rec);
        let _ = self.store.remove_journal(&rec.id);
        failpoint::hit("journal removed");
        if let Some(hook) = &self.on_commit {
            hook(&committed(rec));
        }
        Ok(())
    }

    /// Rolls back a transaction that did not commit, in this process.
    /// Returns the files it had to leave alone (changed by someone else meanwhile).
    fn abort(&mut self, rec: &TxRecord) -> Result<Vec<RecoveryConflict>> {
        let conflicts = self.roll_back(rec)?;
        self.recovery.conflicts.extend(conflicts.clone());
        self.store.remove_journal(&rec.id)?;
        Ok(conflicts)
    }

    fn write_files(&self, rec: &TxRecord, contents: &HashMap<String, Vec<u8>>) -> Result<()> {
        for d in &rec.created_dirs {
            let p = self.root.join(d);
            match std::fs::create_dir(&p) {
                Ok(()) => {
                    if let Some(parent) = p.parent() {
                        stdx::sync_dir_best_effort(parent);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && p.is_dir() => {}
                Err(e) => return Err(Error::io(d.clone(), e)),
            }
            failpoint::hit("directory created");
        }
        for t in &rec.transitions {
            // The plan read this file under the lock, but editors do not take our
            // lock: make sure it is still the version the plan saw.
            let cur = self.current_hash(&t.path)?;
            if cur.as_deref() != t.before.as_ref().map(|v| v.hash.as_str()) {
                return Err(Error::HashMismatch {
                    path: t.path.clone(),
                    edit: None,
                    message: "changed by another program while the edit was being applied; \
                              nothing was changed, try again"
                        .to_owned(),
                    expected: t.before.as_ref().map(|v| v.hash.clone()),
                    current: cur,
                    changed_by: None,
                });
            }
            failpoint::hit("file checked");
            self.set_file(&t.path, t.after.as_ref(), |h| Ok(contents[h].clone()))?;
            failpoint::hit("file written");
        }
        Ok(())
    }

    /// Puts `path` into `version` (absent: removed).
    fn set_file(
        &self,
        path: &str,
        version: Option<&Version>,
        bytes_of: impl Fn(&str) -> Result<Vec<u8>>,
    ) -> Result<()> {
        let abs = self.root.join(path);
        match version {
            Some(v) => {
                let bytes = bytes_of(&v.hash)?;
                if let Some(parent) = abs.parent()
                    && !parent.is_dir()
                {
                    std::fs::create_dir_all(parent).map_err(|e| Error::io(path, e))?;
                }
                stdx::atomic_write_with(&abs, &bytes, permissions(v.mode))
                    .map_err(|e| Error::io(path, e))
            }
            None => match std::fs::remove_file(&abs) {
                Ok(()) => {
                    if let Some(parent) = abs.parent() {
                        stdx::sync_dir_best_effort(parent);
                    }
                    Ok(())
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(Error::io(path, e)),
            },
        }
    }

    /// The hash of a project file now (`None`: absent). Anything that is not a
    /// readable regular file within the size limit counts as "some other version".
    fn current_hash(&self, path: &str) -> Result<Option<String>> {
        let abs = self.root.join(path);
        match std::fs::symlink_metadata(&abs) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
            Ok(m) if !m.is_file() => return Ok(Some("(not a regular file)".to_owned())),
            Ok(_) => {}
        }
        match stdx::read_to_end_limited(&abs, self.options.max_file_size.max(1)) {
            Ok(stdx::ReadLimited::Complete(b)) => Ok(Some(stdx::sha256_hex(&b))),
            Ok(stdx::ReadLimited::TooLarge { .. }) => Ok(Some("(too large)".to_owned())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// Restores every file of an uncommitted transaction, newest change first.
    fn roll_back(&self, rec: &TxRecord) -> Result<Vec<RecoveryConflict>> {
        let mut conflicts = Vec::new();
        for t in rec.transitions.iter().rev() {
            let cur = self.current_hash(&t.path)?;
            let is = |v: &Option<Version>| cur.as_deref() == v.as_ref().map(|v| v.hash.as_str());
            if is(&t.before) {
                continue;
            }
            if is(&t.after) {
                self.set_file(&t.path, t.before.as_ref(), |h| self.store.get_blob(h))?;
                failpoint::hit("file restored");
                continue;
            }
            // Neither version: someone changed the file after the crash. Keep their
            // work; save what we would have restored next to our state.
            let saved_to = match &t.before {
                Some(v) => {
                    let bytes = self.store.get_blob(&v.hash)?;
                    let dest = self.store.recovered.join(&rec.id).join(&t.path);
                    if let Some(parent) = dest.parent() {
                        std::fs::create_dir_all(parent)
                            .map_err(|e| Error::io(parent.display().to_string(), e))?;
                    }
                    stdx::atomic_write(&dest, &bytes)
                        .map_err(|e| Error::io(dest.display().to_string(), e))?;
                    Some(stdx::to_slash(dest.strip_prefix(&self.root).unwrap_or(&dest)))
                }
                None => None,
            };
            conflicts.push(RecoveryConflict {
                transaction: rec.id.clone(),
                path: t.path.clone(),
                saved_to,
            });
        }
        for d in rec.created_dirs.iter().rev() {
            // Only empty ones: anything else in them is not ours to delete.
            let _ = std::fs::remove_dir(self.root.join(d));
        }
        self.sweep_temp_files(rec);
        Ok(conflicts)
    }

    /// Removes temporary files an interrupted atomic write left next to the files of
    /// `rec` (ours by name; we hold the lock, so no write of ours is in flight).
    fn sweep_temp_files(&self, rec: &TxRecord) {
        let mut dirs: HashSet<PathBuf> = HashSet::new();
        for t in &rec.transitions {
            if let Some(p) = self.root.join(&t.path).parent() {
                dirs.insert(p.to_owned());
            }
        }
        for d in dirs {
            let Ok(rd) = std::fs::read_dir(&d) else { continue };
            for e in rd.flatten() {
                if e.file_name().to_string_lossy().starts_with(".ironbees-tmp-") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }

    fn recover_locked(&mut self) -> Result<()> {
        let journals = self.store.journals()?;
        let mut rolled_back = false;
        for rec in journals {
            if self.history.contains(&rec.id)? {
                self.sweep_temp_files(&rec);
                self.store.remove_journal(&rec.id)?;
                self.recovery.completed.push(rec.id);
            } else {
                let conflicts = self.roll_back(&rec)?;
                self.recovery.conflicts.extend(conflicts);
                self.store.remove_journal(&rec.id)?;
                failpoint::hit("journal rolled back");
                self.recovery.rolled_back.push(rec.id);
                rolled_back = true;
            }
        }
        if rolled_back {
            // Blobs of transactions that never committed are referenced by nothing.
            self.prune_best_effort(true);
        }
        Ok(())
    }

    // --- history bookkeeping ----------------------------------------------------------

    /// Drops the oldest transactions beyond the limits and deletes blobs nothing
    /// references. Failing here loses nothing (the next run tries again), so errors
    /// are ignored.
    fn prune_best_effort(&mut self, sweep_anyway: bool) {
        let _ = self.prune(sweep_anyway);
    }

    fn prune(&mut self, sweep_anyway: bool) -> Result<()> {
        let rows = self.history.all()?;
        let mut cut = rows.len().saturating_sub(self.options.history_limit.max(1));
        let mut seen = HashSet::new();
        let mut total = 0u64;
        for (i, row) in rows.iter().enumerate().rev() {
            for t in &row.record.transitions {
                for v in [&t.before, &t.after].into_iter().flatten() {
                    if seen.insert(v.hash.clone()) {
                        total += v.size;
                    }
                }
            }
            if total > self.options.history_max_bytes && i + 1 < rows.len() {
                cut = cut.max(i + 1);
                break;
            }
        }
        if cut == 0 && !sweep_anyway {
            return Ok(());
        }
        let seqs: Vec<i64> = rows[..cut].iter().map(|r| r.seq).collect();
        self.history.remove(&seqs)?;
        let mut keep: HashSet<String> = HashSet::new();
        for row in &rows[cut..] {
            for t in &row.record.transitions {
                for v in [&t.before, &t.after].into_iter().flatten() {
                    keep.insert(v.hash.clone());
                }
            }
        }
        for rec in self.store.journals()? {
            for t in &rec.transitions {
                for v in [&t.before, &t.after].into_iter().flatten() {
                    keep.insert(v.hash.clone());
                }
            }
        }
        for name in self.store.blob_names()? {
            if !keep.contains(&name) {
                self.store.remove_blob(&name);
            }
        }
        Ok(())
    }

    /// Parent directories the `after` versions need that do not exist now.
    fn missing_parents(&self, transitions: &[Transition]) -> Result<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        for t in transitions.iter().filter(|t| t.after.is_some()) {
            let parts: Vec<&str> = t.path.split('/').collect();
            let mut rel = String::new();
            for part in &parts[..parts.len() - 1] {
                if !rel.is_empty() {
                    rel.push('/');
                }
                rel.push_str(part);
                match std::fs::symlink_metadata(self.root.join(&rel)) {
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => {
                        return Err(Error::InvalidState(format!(
                            "cannot restore {}: {rel} is no longer a directory",
                            t.path
                        )));
                    }
                    Err(_) => {
                        if !out.contains(&rel) {
                            out.push(rel.clone());
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    fn changes_of(
        &self,
        transitions: &[Transition],
        contents: &HashMap<String, Vec<u8>>,
    ) -> Vec<FileChange> {
        let content = |v: &Option<Version>| {
            v.as_ref().map(|v| Content {
                bytes: contents.get(&v.hash).cloned().unwrap_or_default(),
                hash: v.hash.clone(),
                mode: v.mode,
            })
        };
        transitions
            .iter()
            .map(|t| {
                let slot = Slot {
                    rel: t.path.clone(),
                    abs: self.root.join(&t.path),
                    before: content(&t.before),
                    after: content(&t.after),
                    edits: Vec::new(),
                    moved_to: None,
                    is_destination: false,
                    stamp: None,
                };
                let kind = match (&t.before, &t.after) {
                    (None, _) => FileChangeKind::Created,
                    (_, None) => FileChangeKind::Deleted,
                    _ => FileChangeKind::Modified,
                };
                plan::change(&slot, &slot, None, kind)
            })
            .collect()
    }

    // --- the writer lock --------------------------------------------------------------

    fn lock_file(&self) -> Result<File> {
        File::options()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&self.lock_path)
            .map_err(|e| Error::io(self.lock_path.display().to_string(), e))
    }

    fn try_lock(&self) -> Result<Option<File>> {
        let mut f = self.lock_file()?;
        match f.try_lock() {
            Ok(()) => {
                mark_holder(&mut f);
                Ok(Some(f))
            }
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(Error::io(self.lock_path.display().to_string(), e))
            }
        }
    }

    fn lock(&self) -> Result<File> {
        let mut f = self.lock_file()?;
        let deadline = Instant::now() + self.options.lock_timeout;
        loop {
            match f.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    if Instant::now() >= deadline {
                        let mut holder = String::new();
                        let _ = f.read_to_string(&mut holder);
                        let holder = holder.trim();
                        return Err(Error::Busy {
                            holder: if holder.is_empty() {
                                String::new()
                            } else {
                                format!(" (pid {holder})")
                            },
                        });
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(Error::io(self.lock_path.display().to_string(), e));
                }
            }
        }
        mark_holder(&mut f);
        Ok(f)
    }
}

/// Writes our pid into the lock file, for the BUSY message of the next writer.
fn mark_holder(f: &mut File) {
    let _ = f.set_len(0);
    let _ = f.rewind();
    let _ = write!(f, "{}", std::process::id());
}

fn summary(row: &history::Row) -> TransactionSummary {
    let r = &row.record;
    let mut files: Vec<String> = Vec::new();
    for t in &r.transitions {
        if !files.contains(&t.path) {
            files.push(t.path.clone());
        }
    }
    TransactionSummary {
        id: r.id.clone(),
        kind: match r.kind {
            Kind::Edit => TransactionKind::Edit,
            Kind::Undo => TransactionKind::Undo,
            Kind::Redo => TransactionKind::Redo,
        },
        target: r.target.clone(),
        time_unix_ms: r.time_unix_ms,
        description: r.description.clone(),
        state: match row.state.as_str() {
            history::APPLIED => TransactionState::Applied,
            history::UNDONE => TransactionState::Undone,
            _ => TransactionState::Done,
        },
        files,
    }
}

/// The announcement of a committed transaction.
fn committed(rec: &TxRecord) -> TransactionCommitted {
    let mut files: Vec<String> = Vec::new();
    for t in &rec.transitions {
        if !files.contains(&t.path) {
            files.push(t.path.clone());
        }
    }
    TransactionCommitted {
        transaction_id: rec.id.clone(),
        kind: match rec.kind {
            Kind::Edit => TransactionKind::Edit,
            Kind::Undo => TransactionKind::Undo,
            Kind::Redo => TransactionKind::Redo,
        },
        target: rec.target.clone(),
        description: rec.description.clone(),
        files,
        time_unix_ms: rec.time_unix_ms,
    }
}

/// A short description from the changes: `modify a.rs, create b.rs`.
fn describe(changes: &[FileChange]) -> String {
    let parts: Vec<String> = changes
        .iter()
        .map(|c| {
            let verb = match c.kind {
                FileChangeKind::Created => "create",
                FileChangeKind::Deleted => "delete",
                FileChangeKind::Renamed => "rename",
                _ => "modify",
            };
            match &c.new_path {
                Some(n) => format!("{verb} {} -> {n}", c.path),
                None => format!("{verb} {}", c.path),
            }
        })
        .collect();
    let mut s = parts.join(", ");
    if s.chars().count() > 200 {
        s = s.chars().take(197).collect::<String>() + "...";
    }
    s
}

fn ensure_state_dir(root: &Path) -> Result<PathBuf> {
    let dir = root.join(STATE_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
    // Ignored by git even when the project's own .gitignore does not mention it.
    let gi = dir.join(".gitignore");
    if !gi.exists() {
        std::fs::write(&gi, "*\n").map_err(|e| Error::io(gi.display().to_string(), e))?;
    }
    Ok(dir)
}

/// The permissions a new file gets here (0o666 minus the umask), learned by
/// creating one: std cannot read the umask without unsafe code.
fn probe_default_mode(dir: &Path) -> u32 {
    let p = dir.join(format!(".mode-probe-{}", std::process::id()));
    let mode =
        File::create(&p).and_then(|f| f.metadata()).map(|m| plan::mode_of(&m)).unwrap_or(0o644);
    let _ = std::fs::remove_file(&p);
    mode
}

#[cfg(unix)]
fn permissions(mode: u32) -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn permissions(_mode: u32) -> Option<std::fs::Permissions> {
    // Only a read-only flag exists here; an existing file's is kept.
    None
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A fresh transaction id: 12 hex digits of a hash of the time, the pid and a
/// counter (history orders by commit, not by id; ids only need to be unique).
fn new_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let h = stdx::sha256_hex(format!("{nanos}/{}/{n}", std::process::id()).as_bytes());
    h[..12].to_owned()
}
