//! One project's session: everything the operations compute from, shared by many
//! concurrent callers, and how it is kept fresh.
//!
//! Concurrency: readers never wait for a writer. The snapshot (definitions,
//! graphs, ranks) is an `Arc` swapped under a short `RwLock`; a call clones the
//! `Arc` and works on it unlocked. The edit engine is the one writer, behind its
//! own mutex: a transaction, post-edit build included, holds only that lock, so
//! `understand`, `navigate`, `read` or `search` calls running meanwhile are not
//! queued behind it. History is read through a second engine handle (another
//! SQLite connection), so listing transactions does not wait for one to commit.
//! Refreshing the index takes the index mutex; concurrent callers that find the
//! session dirty wait for the one refresh rather than each running their own.
//!
//! Freshness: a file watcher (inotify through `notify`) only sets a dirty flag;
//! the next call runs `Index::try_update`, whose walk decides what really
//! changed, and rebuilds the snapshot only when something did (or when another
//! process wrote the index database meanwhile). The watcher is a trigger, never
//! the source of truth, so a lost or coalesced event costs nothing but a walk.
//! Without a watcher (inotify limits, or turned off) every call walks. The files
//! a call names are also checked by content hash against the snapshot, which
//! closes the window between a client's write and the watcher's event.

use std::{
    borrow::Cow,
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, MutexGuard, OnceLock, RwLock,
        atomic::{AtomicBool, Ordering},
        mpsc,
    },
    time::SystemTime,
};

use code_graph::Snapshot;
use code_index::{DefId, FileId, Index, IndexConfig};
use edit::{Engine, EngineOptions, SymbolLocator, SymbolSpan};
use protocol::{ErrorCode, TransactionCommitted, Warning, WarningLevel};
use retrieval::SearchIndex;
use stdx::Call;

use crate::{
    derived::SnapshotStore,
    error::{Error, Result},
    layout::Layout,
};

/// How to run project commands (tests, builds), given by the binary.
#[derive(Debug, Clone)]
pub struct SandboxSetup {
    pub config: sandbox::SandboxConfig,
    /// The policy before a request's own options (the `sandbox:` configuration).
    pub policy: sandbox::Policy,
    /// The environment for commands (already filtered of secrets) and the names removed.
    pub env: Vec<(String, String)>,
    pub env_removed: Vec<String>,
}

/// The project's own build and test commands (the `validate:` configuration, or
/// what its AGENTS.md states), run instead of the detected ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectCommands {
    /// `Some(empty)`: the project has no build step.
    pub build: Option<Vec<String>>,
    pub test: Option<Vec<String>>,
    /// Where they came from (`.ironbees/config.yaml`, `AGENTS.md`), for reports.
    pub source: Option<String>,
}

/// How a [`Session`] is opened. The binary fills it from the configuration files
/// and the environment; the engine reads neither.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    pub index: IndexConfig,
    pub edit: EngineOptions,
    /// Watch the tree for changes (else every call walks it).
    pub watch: bool,
    /// Needed by `build`, `test`, `exec`, `manage test` and `change` with
    /// `check: build`.
    pub sandbox: Option<SandboxSetup>,
    /// The model providers, for `--embeddings` and the agents.
    pub llm: Option<llm::Settings>,
    /// Start the index over instead of opening it (`index --rebuild` on a damaged
    /// database, which could not be opened).
    pub rebuild_index: bool,
    /// The project's own build and test commands.
    pub commands: ProjectCommands,
    /// Rules every applied `change` must keep (`guardrails.onChange`); agent
    /// runs are checked by their CRITIC node instead.
    pub guardrails: Option<guard::RuleSet>,
    /// The rules in effect, whether or not `change` is checked against them
    /// (`guard_check`); `None` when guardrails are turned off.
    pub guard_rules: Option<guard::RuleSet>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            index: IndexConfig::default(),
            edit: EngineOptions::default(),
            watch: true,
            sandbox: None,
            llm: None,
            rebuild_index: false,
            commands: ProjectCommands::default(),
            guardrails: None,
            guard_rules: None,
        }
    }
}

/// One project root and everything the operations compute from. `Sync`: share it
/// in an `Arc` between threads (an MCP server, an HTTP server, agents).
pub struct Session {
    pub(crate) root: PathBuf,
    pub(crate) layout: Layout,
    pub(crate) options: SessionOptions,
    /// The index database: updates, and the queries that need it (status, symbols).
    index: Mutex<Index>,
    snapshot: RwLock<Option<Arc<Snapshot>>>,
    /// The index changed since `snapshot` was built; the next call that needs it
    /// rebuilds it (or decodes the stored one).
    snapshot_stale: AtomicBool,
    /// The snapshot stored between processes (`.ironbees/derived/`).
    snapshots: SnapshotStore,
    /// How the last snapshot this session loaded came to be (`index` reports it).
    pub(crate) last_derivation: Mutex<Option<protocol::SnapshotReport>>,
    /// The search index of one snapshot (rebuilt lazily when the snapshot changes).
    search: Mutex<Option<(Arc<Snapshot>, Arc<SearchIndex>)>>,
    /// (mtime, size) of the index database files after our last look.
    db_stamp: Mutex<Vec<Option<(SystemTime, u64)>>>,
    dirty: Arc<AtomicBool>,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    watching: bool,
    /// The one writer into the project.
    edits: Mutex<Engine>,
    /// A second handle on the edit history, for reads while a transaction runs.
    history: Mutex<Option<Engine>>,
    sandbox: OnceLock<std::result::Result<sandbox::Sandbox, String>>,
    pub(crate) churn: crate::churn::ChurnCache,
    /// Who hears of committed transactions ([`Session::subscribe_commits`]).
    commits: Commits,
    /// The files analyzed last ([`Session::analyzed`]).
    analyses: Mutex<Vec<Arc<Analyzed>>>,
    /// Token counts of whole texts by SHA-256 ([`Session::tokens_of`]).
    token_counts: Mutex<Vec<(String, usize)>>,
    /// Impact radii of one snapshot ([`Session::impact_radius`]).
    impacts: Mutex<ImpactMemo>,
}

/// What `impact_radius` found for (file, definition, depth) on the snapshot
/// `of` points at (a `Weak` keeps the address from being reused by another).
#[derive(Default)]
struct ImpactMemo {
    of: std::sync::Weak<Snapshot>,
    radii: HashMap<(FileId, Option<DefId>, u32), (protocol::ImpactRadius, protocol::Radius)>,
    /// The snapshot's test files, for the tests named after a target.
    tests: Option<Arc<Vec<String>>>,
}

/// Radii kept per snapshot: an agent's or a client's working set, not the
/// project (a radius is a few hundred bytes).
const IMPACTS_KEPT: usize = 512;

/// A project file as read and analyzed by [`Session::analyzed`].
pub(crate) struct Analyzed {
    pub(crate) path: String,
    pub(crate) lang: code_index::Language,
    pub(crate) bytes: Vec<u8>,
    /// SHA-256 of `bytes`, hex.
    pub(crate) hash: String,
    pub(crate) analysis: code_index::FileAnalysis,
    skeleton: OnceLock<String>,
}

impl Analyzed {
    /// The file's outline (`code_index::skeleton_text`), rendered once.
    pub(crate) fn skeleton_text(&self) -> &str {
        self.skeleton.get_or_init(|| code_index::skeleton_text(&self.bytes, &self.analysis))
    }
}

/// Files whose analysis [`Session::analyzed`] keeps: what an agent or a client
/// looks at over a few calls, not the project.
const ANALYSES_KEPT: usize = 16;

/// Whole texts whose token counts [`Session::tokens_of`] keeps (a hash and a
/// number each).
const TOKEN_COUNTS_KEPT: usize = 256;

/// The subscribers to committed transactions: one channel each, dropped once its
/// receiver is gone. The edit engine's commit hook sends to them, under the
/// engine's lock and after the commit, so a send must never block (unbounded).
#[derive(Clone, Default)]
struct Commits(Arc<Mutex<Vec<mpsc::Sender<TransactionCommitted>>>>);

impl Commits {
    fn subscribe(&self) -> mpsc::Receiver<TransactionCommitted> {
        let (tx, rx) = mpsc::channel();
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(tx);
        rx
    }

    fn announce(&self, committed: &TransactionCommitted) {
        let mut subscribers = self.0.lock().unwrap_or_else(|p| p.into_inner());
        subscribers.retain(|s| s.send(committed.clone()).is_ok());
    }
}

impl Session {
    /// Opens the index and the edit engine of `root` (recovering an interrupted
    /// edit) and starts the watcher. The snapshot is built by the first call.
    pub fn open(root: &Path, options: SessionOptions) -> Result<Session> {
        let index = if options.rebuild_index {
            Index::rebuild(root, options.index.clone())?
        } else {
            Index::open(root, options.index.clone())?
        };
        let root = index.root().to_owned();
        let mut engine = Engine::open(&root, options.edit.clone())?;
        engine.set_symbol_locator(Arc::new(IndexLocator));
        let commits = Commits::default();
        let announce = commits.clone();
        engine.set_commit_hook(Box::new(move |c| announce.announce(c)));
        let dirty = Arc::new(AtomicBool::new(true));
        let watcher = if options.watch { start_watcher(&root, Arc::clone(&dirty)) } else { None };
        let layout = Layout::new(&root);
        Ok(Session {
            snapshots: SnapshotStore::new(layout.derived_dir()),
            last_derivation: Mutex::new(None),
            layout,
            root,
            options,
            index: Mutex::new(index),
            snapshot: RwLock::new(None),
            snapshot_stale: AtomicBool::new(false),
            search: Mutex::new(None),
            db_stamp: Mutex::new(Vec::new()),
            dirty,
            watching: watcher.is_some(),
            watcher: Mutex::new(watcher),
            edits: Mutex::new(engine),
            history: Mutex::new(None),
            sandbox: OnceLock::new(),
            churn: crate::churn::ChurnCache::default(),
            commits,
            analyses: Mutex::new(Vec::new()),
            token_counts: Mutex::new(Vec::new()),
            impacts: Mutex::new(ImpactMemo::default()),
        })
    }

    /// `analysis::impact_radius` of one file (or one of its definitions), kept
    /// for the snapshot it was computed on: the closure over the dependents is a
    /// quarter of a warm `understand` of a central file (Django's `query.py`
    /// reaches most of the project) and the same for every call until the
    /// snapshot changes.
    pub(crate) fn impact_radius(
        &self,
        snap: &Arc<Snapshot>,
        file: FileId,
        def: Option<DefId>,
        depth: u32,
    ) -> (protocol::ImpactRadius, protocol::Radius) {
        let key = (file, def, depth);
        let kept_tests = {
            let memo = self.impacts.lock().unwrap_or_else(|p| p.into_inner());
            let same = std::ptr::eq(memo.of.as_ptr(), Arc::as_ptr(snap));
            if same && let Some(hit) = memo.radii.get(&key) {
                return hit.clone();
            }
            memo.tests.clone().filter(|_| same)
        };
        let tests = kept_tests.unwrap_or_else(|| Arc::new(crate::analysis::test_files(snap)));
        let found = crate::analysis::impact_radius(snap, &[file], def, depth, &tests);
        let mut memo = self.impacts.lock().unwrap_or_else(|p| p.into_inner());
        if !std::ptr::eq(memo.of.as_ptr(), Arc::as_ptr(snap)) {
            *memo = ImpactMemo { of: Arc::downgrade(snap), radii: HashMap::new(), tests: None };
        }
        if memo.radii.len() >= IMPACTS_KEPT {
            memo.radii.clear();
        }
        memo.tests = Some(tests);
        memo.radii.insert(key, found.clone());
        found
    }

    /// A project file read from disk now and analyzed, the analysis reused while
    /// the file's content is the same: `understand`, `skeleton` and a rerank's
    /// outlines parse a file again on every call otherwise (a quarter of a warm
    /// `understand` of Django's 2.6k-line `query.py`). The content is read and
    /// hashed every time, so a changed file is never answered from the cache,
    /// whatever the watcher has seen.
    pub(crate) fn analyzed(&self, rel: &str) -> Result<Arc<Analyzed>> {
        let (lang, bytes) = self.index_db().read_source(rel)?;
        let hash = stdx::sha256_hex(&bytes);
        Ok(self.analysis_of(rel, lang, Cow::Owned(bytes), hash))
    }

    /// [`Session::analyzed`] of content the caller has read and hashed (`hash`,
    /// SHA-256 hex; `read`'s file, a run's overlay): kept by its hash like a
    /// file's, and copied only when it is not kept yet.
    pub(crate) fn analysis_of(
        &self,
        rel: &str,
        lang: code_index::Language,
        bytes: Cow<'_, [u8]>,
        hash: String,
    ) -> Arc<Analyzed> {
        let mut kept = self.analyses.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = kept.iter().position(|a| a.path == rel && a.hash == hash) {
            let hit = kept.remove(i);
            kept.push(Arc::clone(&hit));
            return hit;
        }
        drop(kept);
        let analysis = code_index::analyze_outline(lang, &bytes);
        let fresh = Arc::new(Analyzed {
            path: rel.to_owned(),
            lang,
            bytes: bytes.into_owned(),
            hash,
            analysis,
            skeleton: OnceLock::new(),
        });
        let mut kept = self.analyses.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|a| a.path != rel);
        if kept.len() >= ANALYSES_KEPT {
            kept.remove(0);
        }
        kept.push(Arc::clone(&fresh));
        fresh
    }

    /// The tokens of `text`, whose SHA-256 hex is `hash`, counted once while the
    /// content is the same: counting is most of a large file's `read`, and an
    /// agent reads the same file again.
    pub(crate) fn tokens_of(&self, hash: &str, text: &str) -> usize {
        {
            let kept = self.token_counts.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((_, n)) = kept.iter().find(|(h, _)| h == hash) {
                return *n;
            }
        }
        let n = code_index::count_tokens(text);
        let mut kept = self.token_counts.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= TOKEN_COUNTS_KEPT {
            kept.remove(0);
        }
        kept.push((hash.to_owned(), n));
        n
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the session's state lives under `.ironbees/`.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Subscribes to the transactions this session commits: every applied
    /// `change`, `write`, undo and redo (through any tool) sends one
    /// [`TransactionCommitted`] once its history row is durable, before the call
    /// returns. A dry run, a rolled-back change and a refused one send nothing.
    /// Dropping the receiver unsubscribes. Only this session's commits: another
    /// process's (the CLI beside a server) are not announced here.
    pub fn subscribe_commits(&self) -> mpsc::Receiver<TransactionCommitted> {
        self.commits.subscribe()
    }

    /// What the edit engine repaired when it opened (an interrupted transaction).
    pub fn recovery(&self) -> edit::Recovery {
        self.edits().recovery().clone()
    }

    /// `watcher` or `polling`.
    pub fn freshness_mode(&self) -> &'static str {
        if self.watching { "watcher" } else { "polling" }
    }

    /// Stops watching the tree (a session about to end, or a test that must poll).
    pub fn stop_watching(&self) {
        if let Ok(mut w) = self.watcher.lock() {
            *w = None;
        }
    }

    /// Marks the session dirty: the next call re-checks the files.
    pub fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::SeqCst);
    }

    /// The one writer. Held for a whole transaction (its check included).
    pub(crate) fn edits(&self) -> MutexGuard<'_, Engine> {
        // A panic in an earlier call must not take the session down with it.
        self.edits.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A reader of the edit history that does not wait for a running transaction.
    pub(crate) fn with_history<T>(&self, f: impl FnOnce(&Engine) -> Result<T>) -> Result<T> {
        let mut guard = self.history.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(Engine::open(&self.root, self.options.edit.clone())?);
        }
        f(guard.as_ref().expect("just opened"))
    }

    pub(crate) fn index_db(&self) -> MutexGuard<'_, Index> {
        self.index.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Brings the index up to date when something may have changed, and the
    /// snapshot too when `want_snapshot` (a call that answers from the index alone,
    /// such as `symbols`, does not pay for it). Returns warnings (INDEX_STALE when
    /// another process holds the index lock).
    pub(crate) fn refresh(&self, call: &Call<'_>, want_snapshot: bool) -> Result<Vec<Warning>> {
        let current = || {
            self.snapshot.read().unwrap_or_else(|p| p.into_inner()).is_some()
                && !self.snapshot_stale.load(Ordering::SeqCst)
        };
        if self.watching && !self.dirty.load(Ordering::SeqCst) && (!want_snapshot || current()) {
            return Ok(Vec::new());
        }
        // One refresh at a time; the others find it done when they get the lock.
        let mut index = self.index_db();
        let dirty = self.dirty.swap(false, Ordering::SeqCst);
        let mut warnings = Vec::new();
        if !self.watching || dirty {
            let before = self.db_files_stamp(&index);
            let report = match index.try_update(call) {
                Ok(r) => r,
                Err(e) => {
                    self.mark_dirty();
                    return Err(match e {
                        code_index::Error::Cancelled => Error::Cancelled,
                        e => e.into(),
                    });
                }
            };
            let changed = match &report {
                Some(r) => r.added + r.modified + r.deleted > 0,
                None => {
                    // Another process is updating: answer from the last committed
                    // state and try again next call.
                    self.mark_dirty();
                    warnings.push(stale_warning());
                    true
                }
            };
            let mut stamp = self.db_stamp.lock().unwrap_or_else(|p| p.into_inner());
            let foreign_write = !stamp.is_empty() && before != *stamp;
            if changed || foreign_write {
                // Kept until rebuilt: a caller holding it reads a consistent past.
                self.snapshot_stale.store(true, Ordering::SeqCst);
            }
            *stamp = self.db_files_stamp(&index);
        }
        if want_snapshot && !current() {
            // Under the index lock, so no other refresh marks it stale meanwhile;
            // marked fresh only once built (a failed build leaves it stale).
            let (snap, report) = self.snapshots.load(&index, call)?;
            *self.snapshot.write().unwrap_or_else(|p| p.into_inner()) = Some(snap);
            *self.last_derivation.lock().unwrap_or_else(|p| p.into_inner()) = Some(report);
            self.snapshot_stale.store(false, Ordering::SeqCst);
        }
        Ok(warnings)
    }

    /// Brings the index up to date with files the edit engine just wrote (a
    /// change, an undo, a redo, a rolled-back change). A process that ends after
    /// the edit (the CLI) would otherwise leave the index behind the files, and
    /// `status` would ask for an `index` (issue 32.8). Never fails: the edit is
    /// done, and an error here must not read as the edit's (a caller would retry
    /// an undo and undo one more); it becomes a warning, the session stays dirty.
    pub(crate) fn refresh_after_edit(&self, call: &Call<'_>) -> Vec<Warning> {
        self.mark_dirty();
        self.refresh(call, false).unwrap_or_else(|e| {
            vec![Warning {
                severity: WarningLevel::Warning,
                code: e.code().as_str().to_owned(),
                message: format!("the edit is done, but the index was not refreshed: {e}"),
                affected: Vec::new(),
                mitigation: Some("the next call refreshes it (or run `ironbees index`)".into()),
            }]
        })
    }

    /// The current snapshot, refreshed first; its warnings go to the call's
    /// progress sink (the answer has no place for them).
    pub(crate) fn snapshot(&self, call: &Call<'_>) -> Result<(Arc<Snapshot>, Vec<Warning>)> {
        let (snap, warnings) = self.fresh_snapshot(call, &[])?;
        for w in &warnings {
            call.progress.warning(&w.code, &w.message);
        }
        Ok((snap, warnings))
    }

    /// Refreshes, then checks the named files' content against the snapshot and
    /// refreshes again if one differs (a write the watcher has not reported yet).
    pub(crate) fn fresh_snapshot(
        &self,
        call: &Call<'_>,
        paths: &[&str],
    ) -> Result<(Arc<Snapshot>, Vec<Warning>)> {
        let hashes: Vec<Option<String>> = paths
            .iter()
            .map(|p| std::fs::read(self.root.join(p)).ok().map(|b| stdx::sha256_hex(&b)))
            .collect();
        let known: Vec<(&str, Option<&str>)> =
            paths.iter().zip(&hashes).map(|(p, h)| (*p, h.as_deref())).collect();
        self.fresh_snapshot_for(call, &known)
    }

    /// [`Session::fresh_snapshot`] for files whose content hash the caller knows
    /// (`None`: absent), e.g. from the edit engine's plan, which just read them.
    pub(crate) fn fresh_snapshot_for(
        &self,
        call: &Call<'_>,
        files: &[(&str, Option<&str>)],
    ) -> Result<(Arc<Snapshot>, Vec<Warning>)> {
        let mut warnings = self.refresh(call, true)?;
        let snap = self.current_snapshot();
        let differs = files.iter().any(|&(p, on_disk)| {
            let indexed = snap.project.file_id(p).map(|f| snap.project.file(f).hash.as_str());
            match (on_disk, indexed) {
                (Some(d), Some(i)) => d != i,
                (Some(_), None) => code_index::Language::from_path(Path::new(p)).is_some(),
                (None, Some(_)) => true,
                (None, None) => false,
            }
        });
        if differs {
            self.mark_dirty();
            warnings.extend(self.refresh(call, true)?);
        }
        Ok((self.current_snapshot(), warnings))
    }

    pub(crate) fn current_snapshot(&self) -> Arc<Snapshot> {
        self.snapshot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .expect("refresh builds the snapshot")
    }

    /// The search index, synced with `snap` (built on first use, rebuilt when the
    /// snapshot changed).
    pub(crate) fn search_index(&self, snap: &Arc<Snapshot>) -> Result<Arc<SearchIndex>> {
        let mut guard = self.search.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((s, idx)) = guard.as_ref()
            && Arc::ptr_eq(s, snap)
        {
            return Ok(Arc::clone(idx));
        }
        let idx = Arc::new(SearchIndex::sync(&mut self.index_db(), snap)?);
        *guard = Some((Arc::clone(snap), Arc::clone(&idx)));
        Ok(idx)
    }

    /// The sandbox (probed on first use).
    /// The project's configured build and test commands.
    pub fn commands(&self) -> &ProjectCommands {
        &self.options.commands
    }

    /// The project at `ws` (the project, or a copy of it) as the runners see it:
    /// detected, its environment found as the user's shell would (in the
    /// project, not the copy), or only its configured commands when no tool is
    /// detected but some are configured.
    pub(crate) fn detect_at(&self, ws: &Path, nextest: bool) -> Result<sandbox::Project> {
        let env = self.options.sandbox.as_ref().map(|s| s.env.clone()).unwrap_or_default();
        let opts = sandbox::DetectOptions { nextest, origin: Some(self.root.clone()), env };
        match sandbox::detect_project(ws, &opts) {
            Err(sandbox::Error::UnknownProject { .. })
                if self.options.commands.build.is_some()
                    || self.options.commands.test.is_some() =>
            {
                Ok(sandbox::Project::commands_only(ws, &self.root))
            }
            other => Ok(other?),
        }
    }

    pub(crate) fn sandbox(&self) -> Result<(&sandbox::Sandbox, &SandboxSetup)> {
        let Some(setup) = self.options.sandbox.as_ref() else {
            return Err(Error::Unavailable(
                "this session was opened without a sandbox; run the tests with `ironbees test`"
                    .to_owned(),
            ));
        };
        let sb = self
            .sandbox
            .get_or_init(|| sandbox::Sandbox::new(setup.config.clone()).map_err(|e| e.to_string()));
        match sb {
            Ok(sb) => Ok((sb, setup)),
            Err(message) => Err(Error::Sandbox(sandbox::Error::Unavailable(message.clone()))),
        }
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
        let rel = code_index::relative_path(&self.root, &self.root, Path::new(user))?;
        let first = rel.split('/').next().unwrap_or("");
        // Inside the project, but not the project's files: say whose they are
        // rather than "outside the root" (issue 24.15).
        let owner = match first {
            ".git" => Some("inside .git/, which git owns; ironbees neither reads nor edits it"),
            stdx::STATE_DIR => Some("inside .ironbees/, ironbees' own state; not a project file"),
            _ => None,
        };
        if let Some(reason) = owner {
            return Err(Error::Edit(edit::Error::PathOutsideRoot {
                path: rel,
                reason: reason.to_owned(),
            }));
        }
        Ok(rel)
    }

    /// Rebuilds the index: incrementally (waiting for another updater), or from
    /// scratch.
    pub(crate) fn rebuild(&self, full: bool, call: &Call<'_>) -> Result<code_index::UpdateReport> {
        let mut index = self.index_db();
        if full {
            *self.search.lock().unwrap_or_else(|p| p.into_inner()) = None;
            *index = Index::rebuild(&self.root, self.options.index.clone())?;
            // Starting over means the derived data too, whatever its key says.
            self.snapshots.forget();
        }
        let report = match index.update(call) {
            Err(code_index::Error::Cancelled) => return Err(Error::Cancelled),
            other => other?,
        };
        let (snap, derivation) = self.snapshots.load(&index, call)?;
        *self.snapshot.write().unwrap_or_else(|p| p.into_inner()) = Some(snap);
        *self.last_derivation.lock().unwrap_or_else(|p| p.into_inner()) = Some(derivation);
        self.snapshot_stale.store(false, Ordering::SeqCst);
        self.dirty.store(false, Ordering::SeqCst);
        *self.db_stamp.lock().unwrap_or_else(|p| p.into_inner()) = self.db_files_stamp(&index);
        Ok(report)
    }

    fn db_files_stamp(&self, index: &Index) -> Vec<Option<(SystemTime, u64)>> {
        let dir = index.state_dir();
        ["index.db", "index.db-wal"]
            .iter()
            .map(|n| {
                let m = std::fs::metadata(dir.join(n)).ok()?;
                Some((m.modified().ok()?, m.len()))
            })
            .collect()
    }
}

/// Fails with `Cancelled` once the call's token fired: checked between steps,
/// where stopping leaves nothing half done.
pub(crate) fn check_cancel(call: &Call<'_>) -> Result<()> {
    if call.is_cancelled() { Err(Error::Cancelled) } else { Ok(()) }
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
/// `.ironbees/`. None when the platform refuses (the session then polls).
fn start_watcher(root: &Path, dirty: Arc<AtomicBool>) -> Option<notify::RecommendedWatcher> {
    use notify::{EventKind, RecursiveMode, Watcher, event::AccessKind};
    let internal = [root.join(".git"), root.join(stdx::STATE_DIR)];
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
/// edited, by qualified name. The one locator every edit engine of ours uses.
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

#[cfg(test)]
mod tests {
    use test_support::TempProject;

    use super::*;

    #[test]
    fn token_counts_are_kept_by_content_hash() {
        let p = TempProject::new();
        std::fs::create_dir_all(p.path(".git")).unwrap();
        p.write("a.py", "x = 1\n");
        let s =
            Session::open(p.root(), SessionOptions { watch: false, ..Default::default() }).unwrap();
        let text = "def f(x):\n    return x + 1\n";
        let n = s.tokens_of("h1", text);
        assert_eq!(n, code_index::count_tokens(text));
        // The same hash is the same content: the kept count is the answer.
        assert_eq!(s.tokens_of("h1", "anything else entirely, and longer"), n);
        assert_ne!(s.tokens_of("h2", "anything else entirely, and longer"), n);
    }

    /// The analysis is reused while the content is the same, and never once it
    /// changed, even with no watcher to say so; past the kept number the oldest
    /// file goes first.
    #[test]
    fn analyses_are_reused_for_the_same_content_only() {
        let p = TempProject::new();
        std::fs::create_dir_all(p.path(".git")).unwrap();
        for n in 0..=ANALYSES_KEPT {
            p.write(&format!("m{n}.py"), format!("def f{n}():\n    return 1\n"));
        }
        let s =
            Session::open(p.root(), SessionOptions { watch: false, ..Default::default() }).unwrap();
        let names = |a: &Analyzed| -> Vec<String> {
            a.analysis.definitions.iter().map(|d| d.qualified_name.clone()).collect()
        };
        let first = s.analyzed("m0.py").unwrap();
        assert!(Arc::ptr_eq(&first, &s.analyzed("m0.py").unwrap()), "same content: reused");
        p.write("m0.py", "def g():\n    return 2\n");
        let changed = s.analyzed("m0.py").unwrap();
        assert!(!Arc::ptr_eq(&first, &changed));
        assert_eq!(names(&changed), ["g"]);
        assert_eq!(changed.hash, stdx::sha256_hex(b"def g():\n    return 2\n"));
        // ANALYSES_KEPT other files later, m0.py is the oldest and is parsed again.
        for n in 1..=ANALYSES_KEPT {
            s.analyzed(&format!("m{n}.py")).unwrap();
        }
        assert!(!Arc::ptr_eq(&changed, &s.analyzed("m0.py").unwrap()), "evicted");
        assert!(matches!(s.analyzed("nope.py"), Err(Error::Index(_))));
    }

    /// A radius is reused on the snapshot it was computed on, and computed again
    /// on the next one: a new dependent counts at once.
    #[test]
    fn impact_radii_last_as_long_as_their_snapshot() {
        let p = TempProject::new();
        std::fs::create_dir_all(p.path(".git")).unwrap();
        p.write("core.py", "def f():\n    return 1\n");
        p.write("a.py", "from core import f\n\ndef g():\n    return f()\n");
        let s =
            Session::open(p.root(), SessionOptions { watch: false, ..Default::default() }).unwrap();
        let cancel = stdx::CancellationToken::new();
        let call = Call::new(&stdx::NoProgress, &cancel);
        let radius = |s: &Session| {
            let (snap, _) = s.snapshot(&call).unwrap();
            let core = snap.project.file_id("core.py").unwrap();
            (Arc::clone(&snap), s.impact_radius(&snap, core, None, 3).0)
        };
        let (first_snap, first) = radius(&s);
        assert_eq!(first.nearest, ["a.py"]);
        let (same_snap, again) = radius(&s);
        assert!(Arc::ptr_eq(&first_snap, &same_snap));
        assert_eq!(again, first);
        p.write("b.py", "from core import f\n\nX = f()\n");
        let (next_snap, next) = radius(&s);
        assert!(!Arc::ptr_eq(&first_snap, &next_snap), "the index saw b.py");
        assert_eq!(next.nearest.len(), 2, "{next:?}");
        assert!(next.nearest.contains(&"b.py".to_owned()));
    }
}
