//! Finding the files to index.
//!
//! `.gitignore` (even without a `.git` directory: exported trees keep their ignore
//! files), `.ignore`, `.ironbeesignore` and the configured exclude globs decide what is
//! looked at; hidden files and directories are skipped, as ripgrep does. Symlinks
//! are followed only while they stay inside the root; loops and escapes are recorded
//! as skipped files with their reason, never followed.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::UNIX_EPOCH,
};

use ignore::{WalkBuilder, overrides::OverrideBuilder};
use protocol::ErrorCode;
use stdx::CancellationToken;

use crate::{
    error::{Error, Result},
    lang::Language,
};

/// A file found by the walk.
#[derive(Debug, Clone)]
pub(crate) enum Entry {
    File { rel: String, abs: PathBuf, lang: Language, size: u64, mtime_ns: i64 },
    Skip { rel: String, code: ErrorCode, reason: String, size: u64, mtime_ns: i64 },
}

impl Entry {
    pub fn rel(&self) -> &str {
        match self {
            Entry::File { rel, .. } | Entry::Skip { rel, .. } => rel,
        }
    }
}

/// Directories that are never project source, whatever the ignore files say.
const ALWAYS_EXCLUDED: &[&str] = &[".git", ".ironbees", ".hg", ".svn"];

/// Walks `root`; `on_source` is called with the language of each source file as it
/// is found (from the walker's threads).
pub(crate) fn walk(
    root: &Path,
    exclude: &[String],
    cancel: &CancellationToken,
    on_source: &(dyn Fn(Language) + Sync),
) -> Result<Vec<Entry>> {
    let mut overrides = OverrideBuilder::new(root);
    for glob in exclude {
        // In an override set, `!glob` means "ignore what matches" (gitignore syntax).
        overrides
            .add(&format!("!{glob}"))
            .map_err(|e| Error::InvalidArgument(format!("bad exclude glob {glob:?}: {e}")))?;
    }
    let overrides =
        overrides.build().map_err(|e| Error::InvalidArgument(format!("bad exclude globs: {e}")))?;
    let canonical_root =
        root.canonicalize().map_err(|e| Error::Io { path: root.to_owned(), source: e })?;

    let escapes: Arc<Mutex<Vec<Entry>>> = Arc::default();
    let escapes_in_filter = Arc::clone(&escapes);
    let root_for_filter = canonical_root.clone();
    let root_owned = root.to_owned();

    let walker = WalkBuilder::new(root)
        .follow_links(true)
        .require_git(false)
        .add_custom_ignore_filename(".ironbeesignore")
        .overrides(overrides)
        .filter_entry(move |e| {
            let name = e.file_name().to_string_lossy();
            if e.depth() > 0
                && e.file_type().is_some_and(|t| t.is_dir())
                && ALWAYS_EXCLUDED.contains(&name.as_ref())
            {
                return false;
            }
            if e.path_is_symlink() {
                match e.path().canonicalize() {
                    Ok(target) if target.starts_with(&root_for_filter) => true,
                    Ok(target) => {
                        let rel = rel_path(&root_owned, e.path());
                        escapes_in_filter.lock().expect("not poisoned").push(Entry::Skip {
                            rel,
                            code: ErrorCode::PathOutsideRoot,
                            reason: format!(
                                "symlink to {} leaves the project root",
                                target.display()
                            ),
                            size: 0,
                            mtime_ns: 0,
                        });
                        false
                    }
                    // A dangling link: nothing to index, and the walker reports it.
                    Err(_) => true,
                }
            } else {
                true
            }
        })
        .build_parallel();

    // Parallel: the walk of a large tree is mostly `stat` calls, which overlap well.
    let found: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
    walker.run(|| {
        let found = &found;
        Box::new(move |item| {
            if cancel.is_cancelled() {
                return ignore::WalkState::Quit;
            }
            if let Some(entry) = classify(root, item) {
                if let Entry::File { lang, .. } = &entry {
                    on_source(*lang);
                }
                found.lock().expect("not poisoned").push(entry);
            }
            ignore::WalkState::Continue
        })
    });
    if cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    let mut out = found.into_inner().expect("not poisoned");
    out.extend(std::mem::take(&mut *escapes.lock().expect("not poisoned")));
    out.sort_by(|a, b| a.rel().cmp(b.rel()));
    out.dedup_by(|a, b| a.rel() == b.rel());
    Ok(out)
}

/// One walked item: a file to index, a file to skip, or nothing (directories).
fn classify(root: &Path, item: Result<ignore::DirEntry, ignore::Error>) -> Option<Entry> {
    let entry = match item {
        Ok(e) => e,
        Err(err) => return Some(walk_error(root, err)),
    };
    if !entry.file_type().is_some_and(|t| t.is_file()) {
        return None;
    }
    let rel = rel_path(root, entry.path());
    let meta = match entry.metadata() {
        Ok(m) => m,
        Err(err) => {
            return Some(Entry::Skip {
                rel,
                code: ErrorCode::Unreadable,
                reason: err.to_string(),
                size: 0,
                mtime_ns: 0,
            });
        }
    };
    let size = meta.len();
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    Some(match Language::from_path(entry.path()) {
        Some(lang) => Entry::File { rel, abs: entry.into_path(), lang, size, mtime_ns },
        None => {
            let reason = match entry.path().extension() {
                Some(ext) => format!("no grammar for .{} files", ext.to_string_lossy()),
                None => "no grammar for files without an extension".to_owned(),
            };
            Entry::Skip { rel, code: ErrorCode::UnknownLanguage, reason, size, mtime_ns }
        }
    })
}

fn walk_error(root: &Path, err: ignore::Error) -> Entry {
    fn inner(root: &Path, err: &ignore::Error, path: Option<&Path>) -> Entry {
        match err {
            ignore::Error::WithPath { path, err } => inner(root, err, Some(path)),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                inner(root, err, path)
            }
            ignore::Error::Loop { ancestor, child } => Entry::Skip {
                rel: rel_path(root, child),
                code: ErrorCode::SymlinkLoop,
                reason: format!("symlink loop back to {}", rel_path(root, ancestor)),
                size: 0,
                mtime_ns: 0,
            },
            other => Entry::Skip {
                rel: path.map_or_else(|| "?".to_owned(), |p| rel_path(root, p)),
                code: ErrorCode::Unreadable,
                reason: other.to_string(),
                size: 0,
                mtime_ns: 0,
            },
        }
    }
    inner(root, &err, None)
}

pub(crate) fn rel_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    stdx::to_slash(rel)
}
