//! The shadow workspace: a real directory holding the project with a run's overlay
//! applied, where the validator builds and runs the tests.
//!
//! A run keeps the coder's edits in an [`edit::Overlay`] and leaves the working tree
//! alone until they pass, but compilers and test runners want files on disk. So a
//! run keeps a *copy* of the project (under the state directory,
//! `.ironbees/runs/work/<run-id>`) and [`ShadowWorkspace::sync`] brings it up to date
//! before each validation: the project's current files, then the overlay on top.
//!
//! Why a copy and not an overlay filesystem (overlayfs, FUSE): a copy needs no
//! privileges and no kernel feature, so it works the same in every sandbox backend,
//! and on a machine that has none.
//!
//! Why some directories are linked, not copied: the files a build needs that git
//! ignores are mostly installed dependencies (`node_modules`, a virtualenv), large
//! and slow to copy, and read-only to a build. Those are symlinked to the original
//! (see [`LINKED_DIRS`]), and so is the metadata of an installed package in the
//! tree (`*.egg-info`, `*.dist-info`: `importlib.metadata` finds a package's
//! version there). Other ignored directories are build outputs; they are left
//! out, and the build tool recreates them inside the copy.
//!
//! What the copy holds is what the project holds: the files the ignore rules
//! keep, every file git tracks whatever `.gitignore` says (a committed
//! `_version.py` that a pattern ignores is still the project's), and the ignored
//! code files in the project's own directories (a `_version.py` an installer
//! wrote, an extension module built in place). Ignored *directories* are left
//! out (build outputs) or linked (dependencies); other ignored files (logs, a
//! `.env`, keys) stay out.
//!
//! Why the copy persists between syncs: those build outputs stay, so the second
//! validation of a run is an incremental build, not a clean one. Syncs are
//! incremental too: a manifest next to the copy remembers each copied file's size
//! and modification time in the project, so an unchanged project costs one walk and
//! one `stat` per file (plus a lookup of each [`LINKED_DIRS`] name per directory);
//! only changed files are copied, and an overlay file is written only when its bytes
//! differ from the copy's, so the build tool sees no needless change.
//!
//! The manifest is deleted when a sync starts and written (atomically) when it ends:
//! a sync that was killed half-way leaves no manifest, and the next one recopies
//! everything rather than trusting a half-made copy.
//!
//! A command an agent runs in the copy (`exec`, `test`) may write anywhere in it.
//! Such a run marks the copy *dirty* first; the next sync then also checks each
//! copied file against what it left there (the copy-side stamp in the manifest)
//! and removes files nobody put there, so a validation never tests what a
//! command wrote instead of what the run changed.

use std::{
    collections::{BTreeMap, BTreeSet, HashSet},
    ffi::OsString,
    fs, io,
    path::{Component, Path, PathBuf},
    sync::Mutex,
    time::{SystemTime, UNIX_EPOCH},
};

use protocol::ErrorCode;
use serde::{Deserialize, Serialize};

/// Git-ignored directories that are linked into the copy instead of left out: they
/// hold installed dependencies that a build or a test run reads but that no build
/// recreates (an `npm install` or `pip install` is not part of validating), and they
/// are too large to copy on every run. A directory of one of these names that is
/// *not* ignored (a committed `vendor/`) is project source and copied like any other.
const LINKED_DIRS: &[&str] = &["node_modules", ".venv", "venv", ".tox", "vendor"];

/// Ignored directories of these suffixes are linked too: the metadata an
/// installed package keeps in the tree. Looked for at the root and in `src/`
/// and `lib/`, where packaging tools write it.
const METADATA_SUFFIXES: &[&str] = &[".egg-info", ".dist-info"];
const METADATA_PARENTS: &[&str] = &["", "src", "lib"];

/// Names never copied, at any depth and whatever the ignore files say: git's own
/// data (a `.git` file too, which would point the copy at the real repository) and
/// ironbees' state directory, which holds the copy itself.
const NEVER_COPIED: &[&str] = &[".git", stdx::STATE_DIR];

/// Bumped when the manifest's meaning changes; another version reads as no manifest.
const MANIFEST_VERSION: u32 = 2;

/// A project file modified this soon before a sync started may have been modified
/// again after it was copied without its size or modification time changing
/// (timestamps are coarse: a kernel tick, a second on some filesystems). Such a file
/// is copied again by the next sync — git's "racily clean" entries.
const RACY_NS: i64 = 2_000_000_000;

/// What can go wrong bringing the copy up to date.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WorkspaceError {
    /// Reading the project or writing the copy failed (permissions, a full disk, a
    /// file that vanished while being copied). The next sync may succeed.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// An overlay path that is not a plain relative path inside the project, or
    /// that lies under a symlinked directory of the copy (writing it would change
    /// files outside the copy); also a copy directory that holds the project. A bug
    /// in the caller: never retried.
    #[error("bad path {path:?}: {reason}")]
    BadPath { path: String, reason: &'static str },
    /// Walking the project failed: an unreadable directory, so the copy would miss
    /// files.
    #[error("walking the project: {0}")]
    Walk(String),
}

impl WorkspaceError {
    pub(crate) fn code(&self) -> ErrorCode {
        match self {
            WorkspaceError::BadPath { .. } => ErrorCode::InvalidArgument,
            WorkspaceError::Io { .. } | WorkspaceError::Walk(_) => ErrorCode::Io,
        }
    }
}

/// What one [`ShadowWorkspace::sync`] did: the `workspace` event's counts.
pub(crate) type SyncReport = protocol::WorkspaceSync;

/// A copy of the project that a run builds and tests in: the project's files with
/// the run's overlay on top, kept up to date by [`ShadowWorkspace::sync`] and kept
/// between syncs so builds are incremental.
#[derive(Debug)]
pub(crate) struct ShadowWorkspace {
    root: PathBuf,
    dir: PathBuf,
    manifest: PathBuf,
    /// Present while a command may have written into the copy.
    dirty: PathBuf,
}

impl ShadowWorkspace {
    /// `project_root`: the project; `dir`: where the copy lives (e.g.
    /// `<root>/.ironbees/runs/work/<run-id>`; inside the project's state directory,
    /// which is itself never copied). The manifest lives next to `dir`, as
    /// `<dir>.manifest.json`, out of sight of the tests that run in the copy.
    /// Creates nothing yet.
    pub(crate) fn new(project_root: &Path, dir: &Path) -> ShadowWorkspace {
        let name = dir.file_name().map_or_else(OsString::new, OsString::from);
        let beside = |suffix: &str| {
            let mut n = name.clone();
            n.push(suffix);
            dir.with_file_name(n)
        };
        ShadowWorkspace {
            root: project_root.to_owned(),
            dir: dir.to_owned(),
            manifest: beside(".manifest.json"),
            dirty: beside(".dirty"),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }

    /// Says a command is about to run in the copy: the next sync verifies it.
    pub(crate) fn mark_dirty(&self) -> Result<(), WorkspaceError> {
        fs::write(&self.dirty, b"").map_err(io_err(&self.dirty))
    }

    /// Brings the copy up to date: the project's current files, with `overlay` on
    /// top. Creates the copy on the first call.
    pub(crate) fn sync(&self, overlay: &edit::Overlay) -> Result<SyncReport, WorkspaceError> {
        // Before anything is created, so a bad overlay changes nothing.
        for path in overlay.keys() {
            check_overlay_path(path)?;
        }
        if self.dir.file_name().is_none() {
            return Err(bad_dir(&self.dir, "names no directory of its own (ends in `..`)"));
        }
        let started_ns = now_ns();
        let root = canonical(&self.root)?;
        let existed = fs::symlink_metadata(&self.dir).is_ok();
        fs::create_dir_all(&self.dir).map_err(io_err(&self.dir))?;
        let dir = canonical(&self.dir)?;
        if root.starts_with(&dir) {
            return Err(bad_dir(&self.dir, "holds the project; the copy must live beside it"));
        }
        let manifest_at = dir.with_file_name(self.manifest.file_name().unwrap_or_default());

        let previous = self.load_manifest(&root, &dir);
        let recovering = previous.is_none() && existed;
        let dirty = self.dirty.exists();
        let project = walk_project(&root, &[dir.clone(), manifest_at])?;
        for path in overlay.keys() {
            project.check_not_under_link(path)?;
        }
        // From here until the new manifest is written, the copy matches no manifest;
        // if this sync dies, the next one must not trust the old one.
        remove_file_if_exists(&self.manifest)?;

        let mut report = SyncReport::default();
        let mut next = Manifest {
            version: MANIFEST_VERSION,
            root: root.clone(),
            dir: dir.clone(),
            started_ns,
            ..Manifest::default()
        };
        let prev = previous.unwrap_or_default();

        // Removals first, so that a path that changes kind (a file that became a
        // directory) is free when the copies below recreate it.
        for rel in prev.files.keys() {
            if !project.entries.contains_key(rel)
                && !overlay.contains_key(rel)
                && remove_in_copy(&dir, rel)?
            {
                report.removed += 1;
            }
        }
        for rel in &prev.overlay {
            if !project.entries.contains_key(rel)
                && !overlay.contains_key(rel)
                && remove_in_copy(&dir, rel)?
            {
                report.removed += 1;
            }
        }
        for rel in prev.linked.keys() {
            if !project.linked.contains_key(rel) {
                let link = dir.join(rel);
                // Only our link: a directory a tool made there is its business.
                if fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()) {
                    fs::remove_file(&link).map_err(io_err(&link))?;
                    report.removed += 1;
                }
            }
        }

        for (rel, original) in &project.linked {
            let link = dir.join(rel);
            let current = prev.linked.get(rel) == Some(original)
                && fs::read_link(&link).is_ok_and(|target| &target == original);
            if !current {
                clear_for(&link)?;
                make_symlink(original, &link, true).map_err(io_err(&link))?;
                report.linked += 1;
            }
            next.linked.insert(rel.clone(), original.clone());
        }

        for (rel, found) in &project.entries {
            if overlay.contains_key(rel) {
                continue;
            }
            let in_copy = || {
                let meta = fs::symlink_metadata(dir.join(rel)).ok()?;
                let kind = if meta.file_type().is_symlink() { Kind::Symlink } else { Kind::File };
                Some(Stamp::of(kind, &meta))
            };
            let trusted = prev.files.get(rel) == Some(&found.stamp)
                && !prev.overlay.contains(rel)
                && found.stamp.mtime_ns.saturating_add(RACY_NS) < prev.started_ns
                && (!dirty || prev.copies.get(rel).is_some_and(|c| in_copy() == Some(*c)));
            let copy_stamp = if trusted {
                prev.copies.get(rel).copied()
            } else {
                copy_entry(&root, &dir, rel, found)?;
                report.copied += 1;
                in_copy()
            };
            next.files.insert(rel.clone(), found.stamp);
            if let Some(c) = copy_stamp {
                next.copies.insert(rel.clone(), c);
            }
        }

        // Deletions before writes: an overlay may delete the file `a` and create
        // `a/b`.
        for (rel, _) in overlay.iter().filter(|(_, bytes)| bytes.is_none()) {
            if remove_in_copy(&dir, rel)? {
                report.removed += 1;
            }
        }
        for (rel, bytes) in overlay.iter().filter_map(|(rel, b)| Some((rel, b.as_deref()?))) {
            let perms = project
                .entries
                .get(rel)
                .filter(|f| f.stamp.kind == Kind::File)
                .map(|f| &f.permissions);
            if write_overlay(&dir.join(rel), bytes, perms)? {
                report.overlay_written += 1;
            }
        }
        next.overlay = overlay.keys().cloned().collect();

        if recovering || dirty {
            // Recovering from a killed sync (or a lost manifest): the copy may hold
            // files an earlier project or overlay had that this one has not; after
            // a command, files it made.
            let keep = |rel: &str| {
                project.entries.contains_key(rel)
                    || project.linked.contains_key(rel)
                    || overlay.get(rel).is_some_and(Option::is_some)
            };
            report.removed += sweep_strays(&dir, &keep)? as u64;
        }

        let json = serde_json::to_vec_pretty(&next)
            .map_err(|e| WorkspaceError::Io { path: self.manifest.clone(), source: e.into() })?;
        stdx::atomic_write(&self.manifest, &json).map_err(io_err(&self.manifest))?;
        remove_file_if_exists(&self.dirty)?;
        Ok(report)
    }

    /// Deletes the copy and its manifest (after the run ends). Dependency links are
    /// removed as links; what they point to is left alone.
    pub(crate) fn remove(&self) -> Result<(), WorkspaceError> {
        // The manifest first: a removal that dies half-way leaves a copy that the
        // next sync (if any) will not trust.
        remove_file_if_exists(&self.manifest)?;
        remove_file_if_exists(&self.dirty)?;
        if let (Ok(root), Ok(dir)) = (self.root.canonicalize(), self.dir.canonicalize())
            && root.starts_with(&dir)
        {
            return Err(bad_dir(&self.dir, "holds the project; refusing to delete it"));
        }
        // `remove_dir_all` removes symlinks, it does not follow them, so a linked
        // `node_modules` survives.
        match fs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err(&self.dir)(e)),
            _ => Ok(()),
        }
    }

    /// The manifest of the last finished sync, if it describes this copy of this
    /// project; anything else (missing, damaged, another version) reads as none.
    fn load_manifest(&self, root: &Path, dir: &Path) -> Option<Manifest> {
        let bytes = match fs::read(&self.manifest) {
            Ok(b) => b,
            Err(e) => {
                if e.kind() != io::ErrorKind::NotFound {
                    let path = self.manifest.display();
                    tracing::warn!(%path, error = %e, "unreadable workspace manifest; recopying");
                }
                return None;
            }
        };
        match serde_json::from_slice::<Manifest>(&bytes) {
            Ok(m) if m.version == MANIFEST_VERSION && m.root == root && m.dir == dir => Some(m),
            Ok(_) => None,
            Err(e) => {
                let path = self.manifest.display();
                tracing::warn!(%path, error = %e, "damaged workspace manifest; recopying");
                None
            }
        }
    }
}

/// What the copy held after the last finished sync. Invariant: `files` and
/// `overlay` are disjoint (an overlay path holds the overlay's bytes, not a copy).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    version: u32,
    root: PathBuf,
    dir: PathBuf,
    /// When the sync that wrote this manifest started (for [`RACY_NS`]).
    started_ns: i64,
    /// Files and symlinks copied from the project, with their stamp in the project
    /// at the time.
    files: BTreeMap<String, Stamp>,
    /// The same files' stamps in the copy once copied: a dirty copy is checked
    /// against them.
    #[serde(default)]
    copies: BTreeMap<String, Stamp>,
    /// Dependency directories linked, with the original they point to.
    linked: BTreeMap<String, PathBuf>,
    /// Every path the overlay wrote or deleted.
    overlay: BTreeSet<String>,
}

/// How a project file looked when it was copied: if any of it changed, the file is
/// copied again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stamp {
    kind: Kind,
    size: u64,
    mtime_ns: i64,
    /// Unix permission bits: a `chmod +x` changes neither size nor mtime.
    mode: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Kind {
    File,
    Symlink,
}

impl Stamp {
    fn of(kind: Kind, meta: &fs::Metadata) -> Stamp {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        Stamp { kind, size: meta.len(), mtime_ns, mode: mode(meta) }
    }
}

#[cfg(unix)]
fn mode(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode()
}

#[cfg(not(unix))]
fn mode(meta: &fs::Metadata) -> u32 {
    u32::from(meta.permissions().readonly())
}

/// The project as the walk found it.
#[derive(Debug, Default)]
struct Project {
    /// Files and symlinks to copy, by `/`-separated path relative to the root.
    entries: BTreeMap<String, Found>,
    /// Ignored dependency directories to link: relative path → the original.
    linked: BTreeMap<String, PathBuf>,
}

#[derive(Debug)]
struct Found {
    stamp: Stamp,
    permissions: fs::Permissions,
}

impl Project {
    /// Refuses an overlay path under a symlinked directory of the copy: writing it
    /// would go through the link and change the project (or its dependencies)
    /// before validation.
    fn check_not_under_link(&self, path: &str) -> Result<(), WorkspaceError> {
        for (slash, _) in path.match_indices('/') {
            let ancestor = &path[..slash];
            if self.linked.contains_key(ancestor)
                || self.entries.get(ancestor).is_some_and(|f| f.stamp.kind == Kind::Symlink)
            {
                return Err(WorkspaceError::BadPath {
                    path: path.to_owned(),
                    reason: "lies under a symlinked directory; \
                             writing it would change files outside the copy",
                });
            }
        }
        Ok(())
    }
}

/// Checks an overlay key is a plain relative path, `/`-separated, as the edit engine
/// makes them: anything else could write outside the copy or into git's or our data.
fn check_overlay_path(path: &str) -> Result<(), WorkspaceError> {
    let bad = |reason| Err(WorkspaceError::BadPath { path: path.to_owned(), reason });
    if path.is_empty() {
        return bad("empty");
    }
    if path.contains('\0') {
        return bad("contains a NUL byte");
    }
    if path.starts_with('/')
        || Path::new(path)
            .components()
            .any(|c| matches!(c, Component::RootDir | Component::Prefix(_)))
    {
        return bad("absolute; overlay paths are relative to the project root");
    }
    if cfg!(windows) && path.contains('\\') {
        return bad("uses `\\`; overlay paths are `/`-separated");
    }
    for part in path.split('/') {
        match part {
            ".." => return bad("climbs out with `..`"),
            "" | "." => return bad("not normalized (an empty or `.` component)"),
            _ if NEVER_COPIED.contains(&part) => {
                return bad("inside `.git` or `.ironbees`, which belong to git and to ironbees");
            }
            _ => {}
        }
    }
    Ok(())
}

/// What one walked entry is.
enum Visited {
    Entry(String, Found),
    Dir(String),
}

/// A walk of `root` as git sees the project: ignore files apply with or without a
/// `.git` directory (exported trees keep theirs), hidden files are project files,
/// symlinks are entries, not followed. `.ironbeesignore` does not apply: it keeps
/// files out of the index, not out of a build. `skip`: absolute paths left out
/// (the copy and its manifest, when they live inside the project). `parents`:
/// whether ignore files above `root` apply (they do to a project inside a larger
/// repository; above the copy are the real project's, anchored elsewhere).
fn walker(root: &Path, skip: Vec<PathBuf>, parents: bool) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(root);
    builder.hidden(false).require_git(false).follow_links(false).parents(parents);
    builder.filter_entry(move |e| {
        let name = e.file_name().to_str().unwrap_or_default();
        let never = e.depth() > 0 && NEVER_COPIED.contains(&name);
        !never && !skip.iter().any(|s| s == e.path())
    });
    builder
}

/// Walks the project: its files and symlinks, then the ignored dependency
/// directories next to its directories.
fn walk_project(root: &Path, skip: &[PathBuf]) -> Result<Project, WorkspaceError> {
    let Walked { entries, dirs } = walk(walker(root, skip.to_vec(), true), root)?;
    let mut project = Project { entries: entries.into_iter().collect(), ..Project::default() };
    // The walk skips ignored directories without showing them, so each one that
    // may be a dependency directory is looked up by name. One that is not ignored
    // was walked, and is copied.
    let walked: HashSet<&str> = dirs.iter().map(String::as_str).collect();
    for parent in &dirs {
        for name in LINKED_DIRS {
            let rel =
                if parent.is_empty() { (*name).to_owned() } else { format!("{parent}/{name}") };
            if walked.contains(rel.as_str()) || project.entries.contains_key(&rel) {
                continue;
            }
            let original = root.join(&rel);
            if !skip.contains(&original) && fs::metadata(&original).is_ok_and(|m| m.is_dir()) {
                project.linked.insert(rel, original);
            }
        }
    }
    for parent in METADATA_PARENTS {
        let Ok(read) = fs::read_dir(root.join(parent)) else { continue };
        for entry in read.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            if !METADATA_SUFFIXES.iter().any(|s| name.ends_with(s)) {
                continue;
            }
            let rel = if parent.is_empty() { name } else { format!("{parent}/{name}") };
            let walked_into = project.entries.keys().any(|k| k.starts_with(&format!("{rel}/")));
            if !walked_into && entry.path().is_dir() && !skip.contains(&entry.path()) {
                project.linked.insert(rel, entry.path());
            }
        }
    }
    add_ignored_files(root, &dirs, skip, &mut project);
    add_tracked(root, skip, &mut project)?;
    Ok(project)
}

/// Ignored files bigger than this stay out of the copy: a database dump or a
/// downloaded dataset is not what a build or a test suite is made of, and
/// copying it on every run would cost more than the run.
const MAX_IGNORED_FILE: u64 = 16 << 20;

/// The ignored files worth copying: code, by extension. An installer's version
/// module, generated code, a compiled extension module — what an import needs.
/// Other ignored files (logs, a `.env`, keys, local data) stay out: the
/// project's tests have done without them since they were cloned, and an agent
/// that runs commands in the copy has no business reading them.
fn ignored_but_code(name: &str) -> bool {
    const CODE: &[&str] = &[
        "py", "pyi", "so", "pyd", "dylib", "js", "mjs", "cjs", "ts", "go", "rs", "java", "kt", "c",
        "h", "cc", "cpp", "hpp", "cs", "rb",
    ];
    name.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && CODE.contains(&ext))
        // `_ext.cpython-311-x86_64-linux-gnu.so`, `libfoo.so.1`
        || name.contains(".so.")
}

/// Adds the ignored code files that sit in the project's own directories (not
/// in ignored directories, which are build outputs or linked dependencies): a
/// version module an installer writes (`src/_pytest/_version.py`, which pytest's
/// own `.gitignore` names), an extension module built in place (`*.so`).
/// Without them the copy imports differently from the project, and every test
/// fails for a reason the change never had.
fn add_ignored_files(root: &Path, dirs: &[String], skip: &[PathBuf], project: &mut Project) {
    for parent in dirs {
        let at = if parent.is_empty() { root.to_owned() } else { root.join(parent) };
        // A directory that vanished since the walk: nothing of it to add.
        let Ok(read) = fs::read_dir(&at) else { continue };
        for entry in read.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            let rel = if parent.is_empty() { name.clone() } else { format!("{parent}/{name}") };
            if project.entries.contains_key(&rel)
                || project.linked.contains_key(&rel)
                || NEVER_COPIED.contains(&name.as_str())
                || !ignored_but_code(&name)
                || skip.contains(&entry.path())
            {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let kind = if meta.file_type().is_symlink() {
                Kind::Symlink
            } else if meta.is_file() && meta.len() <= MAX_IGNORED_FILE {
                Kind::File
            } else {
                continue;
            };
            let found = Found { stamp: Stamp::of(kind, &meta), permissions: meta.permissions() };
            project.entries.insert(rel, found);
        }
    }
}

/// Adds the files git tracks that the ignore rules left out (outside git's and
/// our own directories, and not under a symlink).
fn add_tracked(root: &Path, skip: &[PathBuf], project: &mut Project) -> Result<(), WorkspaceError> {
    let tracked = match git::tracked_files(root) {
        Ok(Some(files)) => files,
        // Not a repository, or git is not there: the ignore rules are all we have.
        Ok(None) => return Ok(()),
        Err(e) => {
            tracing::warn!(error = %e, "listing the files git tracks; copying what the ignore rules keep");
            return Ok(());
        }
    };
    for rel in tracked {
        if project.entries.contains_key(&rel)
            || rel.split('/').any(|part| NEVER_COPIED.contains(&part))
            || check_overlay_path(&rel).is_err()
        {
            continue;
        }
        let path = root.join(&rel);
        if skip.iter().any(|s| path.starts_with(s)) || project.check_not_under_link(&rel).is_err() {
            continue;
        }
        // Only what is there: a tracked file deleted in the working tree is gone.
        let Ok(meta) = fs::symlink_metadata(&path) else { continue };
        let kind = if meta.file_type().is_symlink() {
            Kind::Symlink
        } else if meta.is_file() {
            Kind::File
        } else {
            continue;
        };
        // A tracked file under an ignored directory: its ancestors must not be
        // symlinks leading out of the project.
        if path.parent().and_then(|p| p.canonicalize().ok()).is_some_and(|p| !p.starts_with(root)) {
            continue;
        }
        let found = Found { stamp: Stamp::of(kind, &meta), permissions: meta.permissions() };
        project.entries.insert(rel, found);
    }
    Ok(())
}

/// What a walk found: files and symlinks, and directories (`""` for the root).
#[derive(Default)]
struct Walked {
    entries: Vec<(String, Found)>,
    dirs: Vec<String>,
}

/// Runs `walker`, which starts at `root`.
fn walk(walker: ignore::WalkBuilder, root: &Path) -> Result<Walked, WorkspaceError> {
    #[derive(Default)]
    struct Collected {
        walked: Walked,
        error: Option<WorkspaceError>,
    }
    let out = Mutex::new(Collected::default());
    // Parallel: an unchanged project costs a `stat` per file, and those overlap well.
    walker.build_parallel().run(|| {
        let out = &out;
        Box::new(move |item| {
            let visited = visit(root, item);
            let mut out = out.lock().expect("not poisoned");
            match visited {
                Ok(Some(Visited::Entry(rel, found))) => out.walked.entries.push((rel, found)),
                Ok(Some(Visited::Dir(rel))) => out.walked.dirs.push(rel),
                Ok(None) => {}
                Err(e) => {
                    out.error.get_or_insert(e);
                    return ignore::WalkState::Quit;
                }
            }
            ignore::WalkState::Continue
        })
    });
    let out = out.into_inner().expect("not poisoned");
    match out.error {
        Some(e) => Err(e),
        None => Ok(out.walked),
    }
}

fn visit(
    root: &Path,
    item: Result<ignore::DirEntry, ignore::Error>,
) -> Result<Option<Visited>, WorkspaceError> {
    let entry = match item {
        Ok(e) => e,
        // A malformed line in an ignore file: the rest of the file still applies,
        // and refusing to validate over it would help no one.
        Err(err) if err.is_partial() => {
            tracing::warn!(error = %err, "ignore file partly unreadable");
            return Ok(None);
        }
        Err(err) => return Err(WorkspaceError::Walk(err.to_string())),
    };
    let Some(file_type) = entry.file_type() else { return Ok(None) };
    let Some(rel) = entry.path().strip_prefix(root).ok().and_then(Path::to_str) else {
        // The manifest is JSON and overlay paths are strings; such names are rare
        // enough in what a build reads to skip with a word.
        tracing::warn!(path = %entry.path().display(), "skipping a path that is not UTF-8");
        return Ok(None);
    };
    let rel = stdx::to_slash(Path::new(rel));
    let kind = if file_type.is_dir() {
        return Ok(Some(Visited::Dir(rel)));
    } else if file_type.is_symlink() {
        Kind::Symlink
    } else if file_type.is_file() {
        Kind::File
    } else {
        // Sockets, FIFOs, devices: nothing a build reads.
        return Ok(None);
    };
    let meta = match entry.metadata() {
        Ok(m) => m,
        // Deleted between the listing and the `stat`: no longer part of the project.
        Err(err) if err.io_error().is_some_and(|e| e.kind() == io::ErrorKind::NotFound) => {
            return Ok(None);
        }
        Err(err) => return Err(WorkspaceError::Walk(err.to_string())),
    };
    let found = Found { stamp: Stamp::of(kind, &meta), permissions: meta.permissions() };
    Ok(Some(Visited::Entry(rel, found)))
}

/// Copies a project file or recreates a project symlink at the same place in the
/// copy. The copy gets a fresh modification time, not the project's: a file
/// restored after the overlay let go of it must look newer than the build outputs
/// made from the overlay's version, or the build tool would keep those.
fn copy_entry(root: &Path, dir: &Path, rel: &str, found: &Found) -> Result<(), WorkspaceError> {
    let src = root.join(rel);
    let dest = dir.join(rel);
    clear_for(&dest)?;
    match found.stamp.kind {
        Kind::File => {
            // `fs::copy` keeps the permissions (an executable `gradlew`).
            fs::copy(&src, &dest).map_err(io_err(&src))?;
        }
        Kind::Symlink => {
            let target = fs::read_link(&src).map_err(io_err(&src))?;
            let is_dir = fs::metadata(&src).is_ok_and(|m| m.is_dir());
            let target = link_target_in_copy(root, dir, rel, &target);
            make_symlink(&target, &dest, is_dir).map_err(io_err(&dest))?;
        }
    }
    Ok(())
}

/// Where the copy's symlink at `rel` points, given that the project's points at
/// `target`. A relative target inside the project is kept (the copy has the same
/// layout); one that climbs out of the project is made absolute, since from the
/// copy's place it would land elsewhere; an absolute target inside the project is
/// moved into the copy, so the copy sees its own (overlaid) files.
fn link_target_in_copy(root: &Path, dir: &Path, rel: &str, target: &Path) -> PathBuf {
    let parent = Path::new(rel).parent().unwrap_or(Path::new(""));
    if target.is_absolute() {
        return match target.strip_prefix(root) {
            Ok(inside) => dir.join(inside),
            Err(_) => target.to_owned(),
        };
    }
    if stdx::normalize_rel(&parent.join(target)).is_some() {
        return target.to_owned();
    }
    let mut absolute = root.join(parent);
    for c in target.components() {
        match c {
            Component::ParentDir => {
                absolute.pop();
            }
            Component::CurDir => {}
            other => absolute.push(other),
        }
    }
    absolute
}

/// Writes an overlay file unless the copy already holds exactly `bytes` (its
/// modification time then stays, and the build tool rebuilds nothing). `perms`: the
/// project file's permissions, which a file the overlay creates in the copy takes.
/// Returns whether it wrote.
fn write_overlay(
    dest: &Path,
    bytes: &[u8],
    perms: Option<&fs::Permissions>,
) -> Result<bool, WorkspaceError> {
    match fs::symlink_metadata(dest) {
        Ok(meta) if meta.is_file() => {
            if meta.len() == bytes.len() as u64 && fs::read(dest).map_err(io_err(dest))? == bytes {
                return Ok(false);
            }
            // In place: the file keeps its permissions.
            fs::write(dest, bytes).map_err(io_err(dest))?;
        }
        _ => {
            // Never through a symlink: it may point into the project.
            clear_for(dest)?;
            fs::write(dest, bytes).map_err(io_err(dest))?;
            if let Some(perms) = perms {
                fs::set_permissions(dest, perms.clone()).map_err(io_err(dest))?;
            }
        }
    }
    Ok(true)
}

/// Makes room for a new file or symlink at `path`: whatever is there (a file, a
/// symlink, a directory a tool made) goes, and missing parent directories are made.
fn clear_for(path: &Path) -> Result<(), WorkspaceError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path).map_err(io_err(path))?,
        Ok(_) => fs::remove_file(path).map_err(io_err(path))?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(path)(e)),
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    Ok(())
}

/// Removes the file or symlink at `rel` in the copy, then the directories that
/// leaves empty. A directory at `rel` is left alone: we only ever put files there.
/// Returns whether something was removed.
fn remove_in_copy(dir: &Path, rel: &str) -> Result<bool, WorkspaceError> {
    let path = dir.join(rel);
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() => return Ok(false),
        Ok(_) => fs::remove_file(&path).map_err(io_err(&path))?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_err(&path)(e)),
    }
    // Best effort: `remove_dir` fails on the first directory that still holds
    // something, which is where pruning stops.
    let mut parent = path.parent();
    while let Some(p) = parent {
        if p == dir || fs::remove_dir(p).is_err() {
            break;
        }
        parent = p.parent();
    }
    Ok(true)
}

/// Removes the copy's files and symlinks that `keep` does not name, walking the copy
/// with its own ignore files so build outputs stay. Returns how many it removed.
fn sweep_strays(dir: &Path, keep: &dyn Fn(&str) -> bool) -> Result<usize, WorkspaceError> {
    let entries = walk(walker(dir, Vec::new(), false), dir)?.entries;
    let mut removed = 0;
    for (rel, _) in entries {
        if !keep(&rel) && remove_in_copy(dir, &rel)? {
            removed += 1;
        }
    }
    Ok(removed)
}

fn remove_file_if_exists(path: &Path) -> Result<(), WorkspaceError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err(path)(e)),
        _ => Ok(()),
    }
}

fn canonical(path: &Path) -> Result<PathBuf, WorkspaceError> {
    path.canonicalize().map_err(io_err(path))
}

fn bad_dir(dir: &Path, reason: &'static str) -> WorkspaceError {
    WorkspaceError::BadPath { path: dir.display().to_string(), reason }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> WorkspaceError + '_ {
    move |source| WorkspaceError::Io { path: path.to_owned(), source }
}

fn now_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
}

#[cfg(unix)]
fn make_symlink(target: &Path, link: &Path, _is_dir: bool) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(windows)]
fn make_symlink(target: &Path, link: &Path, is_dir: bool) -> io::Result<()> {
    if is_dir {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    }
}

#[cfg(not(any(unix, windows)))]
fn make_symlink(_target: &Path, _link: &Path, _is_dir: bool) -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "symlinks are not supported here"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use expect_test::{Expect, expect};
    use test_support::{TempProject, parse_fixture};

    use super::*;

    /// A project from a `//- path` fixture, its files dated an hour back (older than
    /// [`RACY_NS`], as a project is when a run starts), and a workspace where a run
    /// keeps it.
    fn setup(fixture: &str) -> (TempProject, ShadowWorkspace) {
        let project = TempProject::new();
        for (path, text) in parse_fixture(fixture) {
            project.write(&path, &text);
            age(&project.path(&path));
        }
        let ws = ShadowWorkspace::new(project.root(), &project.path(".ironbees/runs/work/r1"));
        (project, ws)
    }

    fn age(path: &Path) {
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        fs::File::options().write(true).open(path).unwrap().set_modified(hour_ago).unwrap();
    }

    fn overlay(entries: &[(&str, Option<&str>)]) -> edit::Overlay {
        entries.iter().map(|(p, t)| ((*p).to_owned(), t.map(|t| t.as_bytes().to_vec()))).collect()
    }

    fn report(copied: u64, removed: u64, overlay_written: u64, linked: u64) -> SyncReport {
        SyncReport { copied, removed, overlay_written, linked }
    }

    /// The copy as text: a file as `path: content`, a symlink as `path -> target`,
    /// with the project's and the copy's absolute paths shown as `$ROOT` and `$COPY`.
    fn listing(project: &TempProject, ws: &ShadowWorkspace) -> String {
        fn visit(dir: &Path, base: &Path, out: &mut Vec<String>) {
            let mut children: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap()).collect();
            children.sort_by_key(|e| e.file_name());
            for child in children {
                let path = child.path();
                let rel = stdx::to_slash(path.strip_prefix(base).unwrap());
                let ty = child.file_type().unwrap();
                if ty.is_symlink() {
                    out.push(format!("{rel} -> {}", fs::read_link(&path).unwrap().display()));
                } else if ty.is_dir() {
                    visit(&path, base, out);
                } else {
                    let text = fs::read_to_string(&path).unwrap();
                    out.push(format!("{rel}: {}", text.trim_end()));
                }
            }
        }
        let mut out = Vec::new();
        visit(ws.path(), ws.path(), &mut out);
        let root = project.root().canonicalize().unwrap();
        let copy = ws.path().canonicalize().unwrap();
        out.join("\n")
            .replace(&copy.display().to_string(), "$COPY")
            .replace(&root.display().to_string(), "$ROOT")
    }

    fn check_first_sync(fixture: &str, expect: Expect) {
        let (project, ws) = setup(fixture);
        ws.sync(&edit::Overlay::new()).unwrap();
        expect.assert_eq(&listing(&project, &ws));
    }

    #[test]
    fn first_sync_copies_what_git_would_track() {
        // Not a git repository: `.gitignore` applies all the same.
        check_first_sync(
            r#"
            //- .gitignore
            target/
            *.log
            //- .ignore
            secret.txt
            //- secret.txt
            s
            //- .env.example
            hidden files are project files
            //- src/lib.rs
            fn a() {}
            //- src/debug.log
            log
            //- target/debug/app
            build output
            //- .ironbees/index.db
            state
            //- sub/.ironbees/x
            nested state
            //- sub/.git
            gitdir: ../.git/modules/sub
            //- sub/mod.rs
            mod m;
            "#,
            expect![[r#"
                .env.example: hidden files are project files
                .gitignore: target/
                *.log
                .ignore: secret.txt
                src/lib.rs: fn a() {}
                sub/mod.rs: mod m;"#]],
        );
        // A git repository: its excludes apply, its data is never copied.
        check_first_sync(
            r#"
            //- .git/HEAD
            ref: refs/heads/main
            //- .git/info/exclude
            local.txt
            //- local.txt
            mine
            //- main.py
            print()
            "#,
            expect![[r#"main.py: print()"#]],
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_recreated_not_followed() {
        let (project, ws) = setup(
            r#"
            //- src/lib.rs
            fn a() {}
            "#,
        );
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("shared.txt"), "shared").unwrap();
        let root = project.root().canonicalize().unwrap();
        let link = |target: &Path, at: &str| std::os::unix::fs::symlink(target, project.path(at));
        link(Path::new("src/lib.rs"), "lib-link").unwrap();
        link(Path::new("src"), "src-link").unwrap();
        link(&root.join("src/lib.rs"), "absolute-inside").unwrap();
        link(&outside.path().join("shared.txt"), "absolute-outside").unwrap();
        let climbing = Path::new("../../..").join(outside.path().strip_prefix("/").unwrap());
        fs::create_dir_all(project.path("deep")).unwrap();
        link(&climbing.join("shared.txt"), "deep/relative-outside").unwrap();
        link(Path::new("nowhere"), "dangling").unwrap();

        let r = ws.sync(&edit::Overlay::new()).unwrap();
        assert_eq!(r, report(7, 0, 0, 0));
        let outside = outside.path().canonicalize().unwrap();
        let listing = listing(&project, &ws).replace(&outside.display().to_string(), "$OUT");
        expect![[r#"
            absolute-inside -> $COPY/src/lib.rs
            absolute-outside -> $OUT/shared.txt
            dangling -> nowhere
            deep/relative-outside -> $OUT/shared.txt
            lib-link -> src/lib.rs
            src/lib.rs: fn a() {}
            src-link -> src"#]]
        .assert_eq(&listing);
    }

    #[cfg(unix)]
    #[test]
    fn ignored_dependency_dirs_are_linked_build_outputs_left_out() {
        let (project, ws) = setup(
            r#"
            //- .gitignore
            node_modules/
            .venv/
            __pycache__/
            dist/
            //- node_modules/left-pad/index.js
            module.exports = 1
            //- web/node_modules/react/index.js
            react
            //- web/package.json
            {}
            //- .venv/bin/python
            py
            //- vendor/dep.go
            package dep
            //- app/__pycache__/a.pyc
            bytecode
            //- dist/app.js
            bundle
            "#,
        );
        let r = ws.sync(&edit::Overlay::new()).unwrap();
        assert_eq!(r, report(3, 0, 0, 3));
        expect![[r#"
            .gitignore: node_modules/
            .venv/
            __pycache__/
            dist/
            .venv -> $ROOT/.venv
            node_modules -> $ROOT/node_modules
            vendor/dep.go: package dep
            web/node_modules -> $ROOT/web/node_modules
            web/package.json: {}"#]]
        .assert_eq(&listing(&project, &ws));
        assert_eq!(ws.sync(&edit::Overlay::new()).unwrap(), report(0, 0, 0, 0), "links kept");

        fs::remove_dir_all(project.path("web/node_modules")).unwrap();
        assert_eq!(ws.sync(&edit::Overlay::new()).unwrap(), report(0, 1, 0, 0), "link dropped");
        assert!(fs::symlink_metadata(ws.path().join("web/node_modules")).is_err());
    }

    /// `git` in the fixture's project (a test's own setup, not a project command).
    fn git(project: &TempProject, args: &[&str]) {
        #[allow(clippy::disallowed_methods)]
        let out = std::process::Command::new("git")
            .current_dir(project.root())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    #[test]
    fn ignored_code_files_in_project_dirs_are_copied_other_ignored_files_not() {
        // pytest's `.gitignore` names `src/_pytest/_version.py`, which its
        // installer writes: without it the copy's pytest is version "unknown"
        // and cannot start. An extension module built in place is imported the
        // same way. A `.env`, a log and anything in an ignored directory stay out.
        let (project, ws) = setup(
            r#"
            //- .gitignore
            src/pkg/_version.py
            *.so
            *.log
            .env
            build/
            __pycache__/
            //- src/pkg/__init__.py
            from ._version import v
            //- src/pkg/_version.py
            v = "1.0"
            //- src/pkg/_speedups.cpython-311-x86_64-linux-gnu.so
            ELF
            //- .env
            TOKEN=x
            //- run.log
            log
            //- build/lib/pkg/__init__.py
            stale
            //- src/pkg/__pycache__/x.cpython-311.pyc
            bytecode
            "#,
        );
        git(&project, &["init", "-q"]);
        git(&project, &["add", "."]);
        ws.sync(&edit::Overlay::new()).unwrap();
        expect![[r#"
            .gitignore: src/pkg/_version.py
            *.so
            *.log
            .env
            build/
            __pycache__/
            src/pkg/__init__.py: from ._version import v
            src/pkg/_speedups.cpython-311-x86_64-linux-gnu.so: ELF
            src/pkg/_version.py: v = "1.0""#]]
        .assert_eq(&listing(&project, &ws));
        // Kept up to date like any other file.
        project.write("src/pkg/_version.py", "v = \"2.0\"");
        age(&project.path("src/pkg/_version.py"));
        ws.sync(&edit::Overlay::new()).unwrap();
        assert_eq!(
            fs::read_to_string(ws.path().join("src/pkg/_version.py")).unwrap(),
            "v = \"2.0\""
        );
    }

    #[test]
    fn tracked_files_git_ignores_are_copied_and_package_metadata_linked() {
        // pytest commits `src/_pytest/_version.py` although `.gitignore` names it;
        // flask commits `tests/test_apps/.env`; `pip install -e .` writes
        // `src/pkg.egg-info`, which git ignores and `importlib.metadata` reads.
        let (project, ws) = setup(
            r#"
            //- .gitignore
            src/pkg/_version.py
            .env
            *.egg-info/
            build/
            //- src/pkg/__init__.py
            from ._version import v
            //- src/pkg/_version.py
            v = "1.0"
            //- tests/test_apps/.env
            FOO=env
            //- src/pkg.egg-info/PKG-INFO
            Name: pkg
            //- build/lib/pkg/__init__.py
            stale
            "#,
        );
        git(&project, &["init", "-q"]);
        git(&project, &["add", "."]);
        git(&project, &["add", "-f", "src/pkg/_version.py", "tests/test_apps/.env"]);
        ws.sync(&edit::Overlay::new()).unwrap();
        expect![[r#"
            .gitignore: src/pkg/_version.py
            .env
            *.egg-info/
            build/
            src/pkg/__init__.py: from ._version import v
            src/pkg/_version.py: v = "1.0"
            src/pkg.egg-info -> $ROOT/src/pkg.egg-info
            tests/test_apps/.env: FOO=env"#]]
        .assert_eq(&listing(&project, &ws));
    }

    #[test]
    fn what_a_command_wrote_in_the_copy_is_undone_by_the_next_sync() {
        let (project, ws) = setup(
            r#"
            //- conftest.py
            X = 1
            //- app.py
            def f(): pass
            "#,
        );
        ws.sync(&edit::Overlay::new()).unwrap();
        // A command run in the copy (an agent's `exec`) rewrites a file and adds one.
        ws.mark_dirty().unwrap();
        fs::write(ws.path().join("conftest.py"), "X = 2  # the command's\n").unwrap();
        fs::write(ws.path().join("injected_test.py"), "def test(): pass\n").unwrap();
        let r = ws.sync(&edit::Overlay::new()).unwrap();
        assert_eq!(r, report(1, 1, 0, 0));
        expect![[r#"
            app.py: def f(): pass
            conftest.py: X = 1"#]]
        .assert_eq(&listing(&project, &ws));
        // Clean again: the next sync trusts the copy.
        assert_eq!(ws.sync(&edit::Overlay::new()).unwrap(), report(0, 0, 0, 0));
    }

    #[test]
    fn second_sync_of_an_unchanged_project_copies_nothing() {
        let (project, ws) = setup(
            r#"
            //- Cargo.toml
            [package]
            //- src/main.rs
            fn main() {}
            //- src/util.rs
            fn u() {}
            "#,
        );
        let edits = overlay(&[("src/util.rs", Some("fn v() {}"))]);
        assert_eq!(ws.sync(&edits).unwrap(), report(2, 0, 1, 0));
        assert_eq!(ws.sync(&edits).unwrap(), report(0, 0, 0, 0));
        // The manifest lives next to the copy, where tests in the copy cannot see it.
        assert!(project.path(".ironbees/runs/work/r1.manifest.json").is_file());
        assert!(!listing(&project, &ws).contains("manifest"));
    }

    #[test]
    fn project_changes_reach_the_copy_and_build_outputs_stay() {
        let (project, ws) = setup(
            r#"
            //- .gitignore
            target/
            //- src/lib.rs
            mod a;
            //- src/a.rs
            fn a() {}
            //- src/gone/b.rs
            fn b() {}
            //- same_size.rs
            one
            //- became_dir
            file
            "#,
        );
        ws.sync(&edit::Overlay::new()).unwrap();
        // What the build tool makes in the copy is its own.
        fs::create_dir_all(ws.path().join("target/debug")).unwrap();
        fs::write(ws.path().join("target/debug/app"), "binary").unwrap();
        fs::write(ws.path().join("Cargo.lock"), "made by cargo").unwrap();

        project.write("src/lib.rs", "mod a;\nmod c;");
        project.write("src/c.rs", "fn c() {}");
        fs::remove_dir_all(project.path("src/gone")).unwrap();
        project.write("same_size.rs", "two");
        fs::remove_file(project.path("became_dir")).unwrap();
        project.write("became_dir/inner", "now a directory");
        for path in ["src/lib.rs", "src/c.rs", "became_dir/inner"] {
            age(&project.path(path));
        }
        // Same size, but a different (still old) modification time.
        let earlier = SystemTime::now() - Duration::from_secs(7200);
        let same_size = fs::File::options().write(true).open(project.path("same_size.rs"));
        same_size.unwrap().set_modified(earlier).unwrap();

        assert_eq!(ws.sync(&edit::Overlay::new()).unwrap(), report(4, 2, 0, 0));
        expect![[r#"
            .gitignore: target/
            Cargo.lock: made by cargo
            became_dir/inner: now a directory
            same_size.rs: two
            src/a.rs: fn a() {}
            src/c.rs: fn c() {}
            src/lib.rs: mod a;
            mod c;
            target/debug/app: binary"#]]
        .assert_eq(&listing(&project, &ws));
    }

    #[test]
    fn a_file_changed_right_after_it_was_copied_is_copied_again() {
        let (project, ws) = setup("");
        project.write("a.rs", "one"); // Edited just before the run started.
        assert_eq!(ws.sync(&edit::Overlay::new()).unwrap(), report(1, 0, 0, 0));
        // Edited again in the same clock tick: same size, same modification time.
        let stamp = fs::metadata(project.path("a.rs")).unwrap().modified().unwrap();
        project.write("a.rs", "two");
        fs::File::options()
            .write(true)
            .open(project.path("a.rs"))
            .unwrap()
            .set_modified(stamp)
            .unwrap();
        assert_eq!(ws.sync(&edit::Overlay::new()).unwrap(), report(1, 0, 0, 0));
        assert_eq!(fs::read_to_string(ws.path().join("a.rs")).unwrap(), "two");
    }

    #[test]
    fn overlay_is_applied_on_top_and_withdrawn_cleanly() {
        let (project, ws) = setup(
            r#"
            //- src/lib.rs
            original
            //- src/old.rs
            old
            //- a
            a file the overlay turns into a directory
            "#,
        );
        type Step = (&'static [(&'static str, Option<&'static str>)], SyncReport, Expect);
        let steps: &[Step] = &[
            (
                &[
                    ("src/lib.rs", Some("edited")),
                    ("src/new/deep.rs", Some("new")),
                    ("src/old.rs", None),
                    ("a", None),
                    ("a/b", Some("under a")),
                ],
                // `src/old.rs` and `a` were never copied: nothing to remove.
                report(0, 0, 3, 0),
                expect![[r#"
                    a/b: under a
                    src/lib.rs: edited
                    src/new/deep.rs: new"#]],
            ),
            (
                &[("src/lib.rs", Some("edited again")), ("src/old.rs", None)],
                report(1, 2, 1, 0),
                expect![[r#"
                    a: a file the overlay turns into a directory
                    src/lib.rs: edited again"#]],
            ),
            (
                &[],
                report(2, 0, 0, 0),
                expect![[r#"
                    a: a file the overlay turns into a directory
                    src/lib.rs: original
                    src/old.rs: old"#]],
            ),
        ];
        for (edits, expected, listed) in steps {
            assert_eq!(&ws.sync(&overlay(edits)).unwrap(), expected, "{edits:?}");
            listed.assert_eq(&listing(&project, &ws));
        }
    }

    #[test]
    fn an_unchanged_overlay_file_is_not_rewritten() {
        let (project, ws) = setup(
            r#"
            //- src/lib.rs
            original
            "#,
        );
        let edits = overlay(&[("src/lib.rs", Some("edited")), ("src/new.rs", Some("new"))]);
        assert_eq!(ws.sync(&edits).unwrap(), report(0, 0, 2, 0));
        let long_ago = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        for path in ["src/lib.rs", "src/new.rs"] {
            let file = fs::File::options().write(true).open(ws.path().join(path)).unwrap();
            file.set_modified(long_ago).unwrap();
        }
        assert_eq!(ws.sync(&edits).unwrap(), report(0, 0, 0, 0));
        for path in ["src/lib.rs", "src/new.rs"] {
            let mtime = fs::metadata(ws.path().join(path)).unwrap().modified().unwrap();
            assert_eq!(mtime, long_ago, "{path} was touched");
        }
        // The project's own content, as an overlay entry, is not a change either.
        let edits = overlay(&[("src/lib.rs", Some("original\n"))]);
        fs::write(ws.path().join("src/lib.rs"), "original\n").unwrap();
        assert_eq!(ws.sync(&edits).unwrap(), report(0, 1, 0, 0));
        let _ = project;
    }

    #[cfg(unix)]
    #[test]
    fn a_file_the_overlay_rewrites_keeps_the_project_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let (project, ws) = setup(
            r#"
            //- gradlew
            #!/bin/sh
            "#,
        );
        fs::set_permissions(project.path("gradlew"), fs::Permissions::from_mode(0o755)).unwrap();
        ws.sync(&overlay(&[("gradlew", Some("#!/bin/sh\nexec java"))])).unwrap();
        let mode = fs::metadata(ws.path().join("gradlew")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    #[test]
    fn a_copy_without_its_manifest_is_not_trusted() {
        let fixture = r#"
            //- .gitignore
            target/
            //- src/lib.rs
            original
            //- src/a.rs
            a
            "#;
        type Damage = (&'static str, fn(&Path));
        let damages: &[Damage] = &[
            ("missing", |m| fs::remove_file(m).unwrap()),
            ("unreadable", |m| fs::write(m, "{ half a manif").unwrap()),
            ("another version", |m| {
                let text = fs::read_to_string(m).unwrap();
                fs::write(m, text.replace("\"version\": 2", "\"version\": 999")).unwrap();
            }),
        ];
        for (damage, inflict) in damages {
            let (project, ws) = setup(fixture);
            ws.sync(&overlay(&[("src/extra.rs", Some("from an earlier overlay"))])).unwrap();
            fs::create_dir_all(ws.path().join("target")).unwrap();
            fs::write(ws.path().join("target/out"), "build output").unwrap();
            // Killed half-way through copying a file:
            fs::write(ws.path().join("src/lib.rs"), "origi").unwrap();
            inflict(&project.path(".ironbees/runs/work/r1.manifest.json"));

            let r = ws.sync(&edit::Overlay::new()).unwrap();
            assert_eq!(r, report(3, 1, 0, 0), "{damage}");
            expect![[r#"
                .gitignore: target/
                src/a.rs: a
                src/lib.rs: original
                target/out: build output"#]]
            .assert_eq(&listing(&project, &ws));
            assert_eq!(ws.sync(&edit::Overlay::new()).unwrap(), report(0, 0, 0, 0), "{damage}");
        }
    }

    #[test]
    fn overlay_paths_are_checked() {
        let (project, ws) = setup(
            r#"
            //- src/lib.rs
            x
            "#,
        );
        for (path, reason) in [
            ("", "empty"),
            ("/etc/passwd", "absolute; overlay paths are relative to the project root"),
            ("../outside.rs", "climbs out with `..`"),
            ("src/../../outside.rs", "climbs out with `..`"),
            ("src//lib.rs", "not normalized (an empty or `.` component)"),
            ("./src/lib.rs", "not normalized (an empty or `.` component)"),
            ("src/", "not normalized (an empty or `.` component)"),
            (
                ".git/hooks/pre-commit",
                "inside `.git` or `.ironbees`, which belong to git and to ironbees",
            ),
            (
                "sub/.ironbees/x",
                "inside `.git` or `.ironbees`, which belong to git and to ironbees",
            ),
            ("a\0b", "contains a NUL byte"),
        ] {
            let err = ws.sync(&overlay(&[("ok.rs", Some("fine")), (path, Some("x"))])).unwrap_err();
            match &err {
                WorkspaceError::BadPath { path: p, reason: r } => {
                    assert_eq!((p.as_str(), *r), (path, reason));
                }
                other => panic!("{path:?}: {other}"),
            }
            assert_eq!(err.code(), ErrorCode::InvalidArgument);
        }
        assert!(!ws.path().exists(), "a refused overlay creates nothing");
        for path in [".gitignore", "src/.github/ci.yml", "a.git/b", "src/lib.rs"] {
            ws.sync(&overlay(&[(path, Some("fine"))])).unwrap();
        }
        let _ = project;
    }

    #[cfg(unix)]
    #[test]
    fn overlay_paths_under_a_link_are_refused() {
        let (project, ws) = setup(
            r#"
            //- .gitignore
            node_modules/
            //- node_modules/dep/index.js
            original
            //- src/lib.rs
            x
            "#,
        );
        std::os::unix::fs::symlink("src", project.path("src-link")).unwrap();
        ws.sync(&edit::Overlay::new()).unwrap();
        for path in ["node_modules/dep/index.js", "src-link/lib.rs"] {
            for edit in [Some("patched"), None] {
                let err = ws.sync(&overlay(&[(path, edit)])).unwrap_err();
                assert!(matches!(err, WorkspaceError::BadPath { .. }), "{path}: {err}");
            }
        }
        assert_eq!(project.read("node_modules/dep/index.js"), "original\n");
        assert_eq!(project.read("src/lib.rs"), "x\n");
        // A refused sync changed nothing, so the last manifest still holds.
        assert!(project.path(".ironbees/runs/work/r1.manifest.json").is_file());
    }

    #[cfg(unix)]
    #[test]
    fn remove_deletes_the_copy_and_manifest_but_not_what_links_point_to() {
        let (project, ws) = setup(
            r#"
            //- .gitignore
            .venv/
            //- .venv/lib/site.py
            site
            //- app.py
            app
            "#,
        );
        ws.sync(&edit::Overlay::new()).unwrap();
        assert!(fs::symlink_metadata(ws.path().join(".venv")).unwrap().file_type().is_symlink());
        ws.remove().unwrap();
        assert!(!ws.path().exists());
        assert!(!project.path(".ironbees/runs/work/r1.manifest.json").exists());
        assert_eq!(project.read(".venv/lib/site.py"), "site\n");
        ws.remove().unwrap(); // Nothing left to remove is fine.
    }

    #[test]
    fn a_copy_that_would_hold_the_project_is_refused() {
        let project = TempProject::new();
        project.write("a.rs", "a");
        for dir in [project.root().to_owned(), project.root().join("..")] {
            let ws = ShadowWorkspace::new(project.root(), &dir);
            let err = ws.sync(&edit::Overlay::new()).unwrap_err();
            assert!(matches!(err, WorkspaceError::BadPath { .. }), "{}: {err}", dir.display());
            assert!(matches!(ws.remove(), Err(WorkspaceError::BadPath { .. })));
        }
        assert_eq!(project.read("a.rs"), "a");
    }

    #[test]
    fn errors_carry_their_codes_and_context() {
        let io = WorkspaceError::Io {
            path: PathBuf::from("src/a.rs"),
            source: io::Error::new(io::ErrorKind::PermissionDenied, "denied"),
        };
        assert_eq!(io.to_string(), "src/a.rs: denied");
        for (err, code) in [
            (io, ErrorCode::Io),
            (WorkspaceError::Walk("x".to_owned()), ErrorCode::Io),
            (
                WorkspaceError::BadPath { path: "..".to_owned(), reason: "r" },
                ErrorCode::InvalidArgument,
            ),
        ] {
            assert_eq!(err.code(), code, "{err}");
        }
        let json = serde_json::to_string(&report(1, 2, 3, 4)).unwrap();
        assert_eq!(json, r#"{"copied":1,"removed":2,"overlayWritten":3,"linked":4}"#);
    }
}
