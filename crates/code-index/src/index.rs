//! The on-disk index of one project: open, update, and the read-side queries.

use std::{
    collections::HashMap,
    fs::File,
    path::{Path, PathBuf},
};

use protocol::{ErrorCode, Symbol};
use stdx::{Call, CancellationToken, STATE_DIR};

use crate::{
    error::{Error, Result},
    extract::{FileAnalysis, analyze},
    indexer::{self, UpdateReport},
    lang::Language,
    project::{FileStamp, Interner, Project, ProjectFile},
    query::{self, ReferenceHit, Staleness, Status, SymbolQuery},
    skeleton::{Skeleton, render as render_skeleton},
    sources::DiskSources,
    store, walk,
};

/// How the index walks and reads the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexConfig {
    /// Gitignore-style globs, relative to the root, never indexed.
    pub exclude: Vec<String>,
    /// Files larger than this are skipped (`FILE_TOO_LARGE`).
    pub max_file_size: u64,
    /// Index minified JavaScript/TypeScript too (skipped as `MINIFIED_FILE` by default).
    pub include_minified: bool,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig { exclude: Vec::new(), max_file_size: 4 * 1024 * 1024, include_minified: false }
    }
}

/// The project root for a start directory: the nearest ancestor holding `.ironbees/`
/// or `.git`, else the start directory itself (as git finds its work tree).
pub fn discover_root(start: &Path) -> Result<PathBuf> {
    let meta = std::fs::metadata(start).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound { path: start.to_owned() },
        _ => Error::Io { path: start.to_owned(), source: e },
    })?;
    if !meta.is_dir() {
        return Err(Error::NotADirectory { path: start.to_owned() });
    }
    let start =
        start.canonicalize().map_err(|e| Error::Io { path: start.to_owned(), source: e })?;
    for dir in start.ancestors() {
        if dir.join(STATE_DIR).is_dir() || dir.join(".git").exists() {
            return Ok(dir.to_owned());
        }
    }
    Ok(start)
}

/// The update lock (`.ironbees/index.lock`), held until dropped.
#[derive(Debug)]
pub struct UpdateLock {
    _file: File,
}

/// An open index over one project root.
pub struct Index {
    root: PathBuf,
    state_dir: PathBuf,
    store: store::Store,
    config: IndexConfig,
}

impl Index {
    /// Opens the index of `root`, creating `.ironbees/` and the database on first use.
    pub fn open(root: &Path, config: IndexConfig) -> Result<Index> {
        let meta = std::fs::metadata(root).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound { path: root.to_owned() },
            _ => Error::Io { path: root.to_owned(), source: e },
        })?;
        if !meta.is_dir() {
            return Err(Error::NotADirectory { path: root.to_owned() });
        }
        let root =
            root.canonicalize().map_err(|e| Error::Io { path: root.to_owned(), source: e })?;
        let state_dir = ensure_state_dir(&root)?;
        let store = store::Store::open(&state_dir.join("index.db"))?;
        Ok(Index { root, state_dir, store, config })
    }

    /// Deletes the database (damaged, or from a newer schema) and opens a fresh one.
    pub fn rebuild(root: &Path, config: IndexConfig) -> Result<Index> {
        let root_c =
            root.canonicalize().map_err(|e| Error::Io { path: root.to_owned(), source: e })?;
        let state_dir = ensure_state_dir(&root_c)?;
        for name in ["index.db", "index.db-wal", "index.db-shm"] {
            let p = state_dir.join(name);
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::Io { path: p, source: e }),
            }
        }
        Index::open(root, config)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// Brings the index up to date, waiting for another process's update to finish.
    /// Progress goes to the call's sink (its `advance` from the writer thread after
    /// every committed batch, so it must be cheap); its token cancels between batches.
    pub fn update(&mut self, call: &Call<'_>) -> Result<UpdateReport> {
        let lock = self.lock_file()?;
        lock.lock()
            .map_err(|e| Error::Io { path: self.state_dir.join("index.lock"), source: e })?;
        self.update_locked(call)
    }

    /// Like [`Index::update`], but returns `Ok(None)` at once when another process is
    /// updating: readers then answer from the last committed state instead of waiting.
    pub fn try_update(&mut self, call: &Call<'_>) -> Result<Option<UpdateReport>> {
        let lock = self.lock_file()?;
        match lock.try_lock() {
            Ok(()) => self.update_locked(call).map(Some),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(Error::Io { path: self.state_dir.join("index.lock"), source: e })
            }
        }
    }

    fn lock_file(&self) -> Result<File> {
        let path = self.state_dir.join("index.lock");
        File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::Io { path, source: e })
    }

    fn update_locked(&mut self, call: &Call<'_>) -> Result<UpdateReport> {
        let opts = indexer::Options {
            exclude: &self.config.exclude,
            max_file_size: self.config.max_file_size,
            include_minified: self.config.include_minified,
        };
        indexer::update(&mut self.store, &self.root, &opts, call.progress, call.cancel)
    }

    /// Definitions matching `query`, ordered by path and position.
    pub fn symbols(&self, query: &SymbolQuery) -> Result<Vec<Symbol>> {
        query::symbols(&self.store, query)
    }

    /// Every indexed file with its definitions, imports and references, in memory
    /// (one pass over the store): the input of the graphs.
    pub fn project(&self) -> Result<Project> {
        Project::load(&self.store)
    }

    /// Every indexed file's path, content hash and language, in path order
    /// (database reads only): which files of a project loaded earlier changed.
    pub fn listing(&self) -> Result<Vec<FileStamp>> {
        Project::listing(&self.store)
    }

    /// Some files as [`Index::project`] loads them, in the order given, their
    /// names interned into `names`; references only when `refs`. What an update
    /// of a stored project reads instead of everything.
    pub fn project_files(
        &self,
        paths: &[&str],
        names: &mut Interner,
        refs: bool,
    ) -> Result<Vec<ProjectFile>> {
        Project::load_files(&self.store, paths, names, refs)
    }

    /// A key of what [`Index::project`] would return (SHA-256 of every file's path,
    /// content hash and language, the skipped paths, the extractor revision and the
    /// schema), read without loading it: derived data stored under that key is still
    /// the project's as long as the key is the same.
    pub fn content_key(&self) -> Result<[u8; 32]> {
        Project::content_key(&self.store)
    }

    /// Paths the walk found but did not index (no grammar, too large, binary, ...),
    /// sorted: where import resolution finds its manifests (`Cargo.toml`, `go.mod`).
    pub fn unindexed_paths(&self) -> Result<Vec<String>> {
        let mut paths: Vec<String> = self.store.skipped()?.into_keys().collect();
        paths.sort();
        Ok(paths)
    }

    /// The update lock, unless another process holds it (or it cannot be taken):
    /// what a writer of derived state under `.ironbees/` (the search index) holds
    /// so that no update runs meanwhile. Released when dropped.
    pub fn try_lock_updates(&self) -> Result<Option<UpdateLock>> {
        let file = self.lock_file()?;
        Ok(file.try_lock().is_ok().then_some(UpdateLock { _file: file }))
    }

    /// What the search index holds, by path: the content hash each file had when it
    /// was added. Kept in the store so that a rebuild of the index forgets it too.
    pub fn search_files(&self) -> Result<HashMap<String, String>> {
        self.store.search_files()
    }

    /// Records a change of what the search index holds (see
    /// [`Index::search_files`]): all rows replaced first when `replace_all`, then
    /// `removed` paths forgotten and `set` paths recorded with their hash. A
    /// one-file change writes one row, not the whole project's.
    pub fn update_search_files(
        &mut self,
        replace_all: bool,
        removed: &[&str],
        set: &[(&str, &str)],
    ) -> Result<()> {
        self.store.update_search_files(replace_all, removed, set)
    }

    /// Every use of `name` in the project (calls, type uses, other identifier uses),
    /// with the definition each is in, ordered by path and position.
    pub fn references(&self, name: &str) -> Result<Vec<ReferenceHit>> {
        query::references(&self.store, name)
    }

    /// Counts, languages, skipped files and staleness. Walks the tree to find what
    /// changed since the last update, reading only the files an update would hash.
    pub fn status(&self) -> Result<Status> {
        let mut status = self.summary()?;
        status.stale = Some(self.staleness()?);
        Ok(status)
    }

    /// Like [`Index::status`] without staleness: database reads only, no walk.
    pub fn summary(&self) -> Result<Status> {
        let (files, symbols, references, imports) = query::counts(&self.store)?;
        let (files_with_syntax_errors, syntax_errors) = query::syntax_errors(&self.store)?;
        let last_update = self
            .store
            .meta("last_update_finished_ns")?
            .and_then(|v| v.parse::<i64>().ok())
            .map(|ns| ns / 1_000_000_000);
        Ok(Status {
            root: self.root.display().to_string(),
            database: self.store.path().display().to_string(),
            schema_version: store::SCHEMA_VERSION,
            files,
            symbols,
            references,
            imports,
            languages: query::languages(&self.store)?,
            skipped: query::skip_groups(&self.store)?,
            files_with_syntax_errors,
            syntax_errors,
            invalid_utf8: query::lossy_files(&self.store)?,
            last_update,
            stale: None,
        })
    }

    fn staleness(&self) -> Result<Staleness> {
        let entries =
            walk::walk(&self.root, &self.config.exclude, &CancellationToken::new(), &|_| {})?;
        let known = self.store.files()?;
        let skipped = self.store.skipped()?;
        let last_started: i64 =
            self.store.meta("last_update_started_ns")?.and_then(|v| v.parse().ok()).unwrap_or(0);
        let mut st = Staleness::default();
        let mut seen = std::collections::HashSet::new();
        for e in &entries {
            let walk::Entry::File { rel, abs, size, mtime_ns, .. } = e else { continue };
            seen.insert(rel.as_str());
            match known.get(rel) {
                Some(row)
                    if row.size == *size
                        && row.mtime_ns == *mtime_ns
                        && *mtime_ns < last_started - indexer::RACY_WINDOW_NS => {}
                // Rewritten (an undo, a rolled-back edit, a checkout) or racy: the
                // update would hash it and find it unchanged when the bytes are the
                // ones indexed, so status must not call it modified either (issue 32.8).
                Some(row) if row.size == *size && self.same_content(abs, &row.hash) => {}
                Some(_) => {
                    st.modified += 1;
                    push_example(&mut st.examples, rel);
                }
                None => match skipped.get(rel) {
                    Some(s) if s.size == *size && s.mtime_ns == *mtime_ns => {}
                    _ => {
                        st.added += 1;
                        push_example(&mut st.examples, rel);
                    }
                },
            }
        }
        for rel in known.keys().filter(|k| !seen.contains(k.as_str())) {
            st.deleted += 1;
            push_example(&mut st.examples, rel);
        }
        Ok(st)
    }

    /// Whether the file at `abs` still has the content hash `hash` (what the
    /// update compares when size and time do not settle it).
    fn same_content(&self, abs: &Path, hash: &str) -> bool {
        match stdx::read_to_end_limited(abs, self.config.max_file_size) {
            Ok(stdx::ReadLimited::Complete(bytes)) => stdx::sha256_hex(&bytes) == hash,
            _ => false,
        }
    }

    /// Resolves a user-supplied path (absolute, or relative to `cwd`) to a path
    /// relative to the root, refusing anything outside it.
    pub fn relative_path(&self, cwd: &Path, user_path: &Path) -> Result<String> {
        relative_path(&self.root, cwd, user_path)
    }

    /// Reads a project file from disk and analyzes it (fresh, not from the store).
    pub fn analyze_file(&self, rel: &str) -> Result<(Language, Vec<u8>, FileAnalysis)> {
        let (lang, bytes) = self.read_source(rel)?;
        let analysis = analyze(lang, &bytes);
        Ok((lang, bytes, analysis))
    }

    /// Reads a project file that can be analyzed: a known language, within the
    /// size limit, not binary.
    pub fn read_source(&self, rel: &str) -> Result<(Language, Vec<u8>)> {
        let path = self.root.join(rel);
        let lang = Language::from_path(&path).ok_or_else(|| Error::Unsupported {
            path: PathBuf::from(rel),
            code: ErrorCode::UnknownLanguage,
            reason: "no grammar for this file type".to_owned(),
        })?;
        let bytes = match stdx::read_to_end_limited(&path, self.config.max_file_size) {
            Ok(stdx::ReadLimited::Complete(b)) => b,
            Ok(stdx::ReadLimited::TooLarge { size }) => {
                return Err(Error::Unsupported {
                    path: PathBuf::from(rel),
                    code: ErrorCode::FileTooLarge,
                    reason: format!(
                        "{size} bytes is over the {} byte limit",
                        self.config.max_file_size
                    ),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NotFound { path: PathBuf::from(rel) });
            }
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                return Err(Error::Unsupported {
                    path: PathBuf::from(rel),
                    code: ErrorCode::InvalidArgument,
                    reason: "is a directory".to_owned(),
                });
            }
            Err(e) => return Err(Error::Io { path: PathBuf::from(rel), source: e }),
        };
        if indexer::looks_binary(&bytes) {
            return Err(Error::Unsupported {
                path: PathBuf::from(rel),
                code: ErrorCode::BinaryFile,
                reason: "contains NUL bytes; looks binary".to_owned(),
            });
        }
        Ok((lang, bytes))
    }

    /// Reads project files from disk (for analyses that show or measure lines).
    pub fn sources(&self) -> DiskSources {
        DiskSources::new(self.root.clone(), self.config.max_file_size)
    }

    /// The skeleton of one project file.
    pub fn skeleton(&self, rel: &str) -> Result<Skeleton> {
        let (_, bytes, analysis) = self.analyze_file(rel)?;
        Ok(render_skeleton(&bytes, &analysis))
    }
}

fn push_example(examples: &mut Vec<String>, rel: &str) {
    if examples.len() < 10 {
        examples.push(rel.to_owned());
    }
}

fn ensure_state_dir(root: &Path) -> Result<PathBuf> {
    let dir = root.join(STATE_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::Io { path: dir.clone(), source: e })?;
    // Ignored by git even when the project's own .gitignore does not mention it.
    let gi = dir.join(".gitignore");
    if !gi.exists() {
        std::fs::write(&gi, "*\n").map_err(|e| Error::Io { path: gi, source: e })?;
    }
    Ok(dir)
}

/// A path the user typed (absolute, or relative to `cwd`) as a `/`-separated path
/// relative to the canonical `root`; `PATH_OUTSIDE_ROOT` when it leaves the root
/// (through `..`, an absolute path, or a symlink of an existing file).
pub fn relative_path(root: &Path, cwd: &Path, user_path: &Path) -> Result<String> {
    let joined = if user_path.is_absolute() { user_path.to_owned() } else { cwd.join(user_path) };
    // Canonicalize when the file exists, so symlinks cannot smuggle a path out.
    let resolved = match joined.canonicalize() {
        Ok(p) => p,
        Err(_) => lexical_absolute(&joined),
    };
    match resolved.strip_prefix(root) {
        Ok(rel) => Ok(stdx::to_slash(rel)),
        Err(_) => Err(Error::PathOutsideRoot { path: user_path.to_owned(), root: root.to_owned() }),
    }
}

fn lexical_absolute(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
