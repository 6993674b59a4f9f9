//! Bringing the index up to date with the files on disk.
//!
//! The walk is compared with what the database knows. A file whose size and
//! modification time are unchanged is not read at all; a changed one is read and
//! hashed, and parsed only when no stored blob has its content. Workers (rayon) read
//! and parse in parallel and send results to this thread, the only writer, which
//! commits them in batches: a killed or cancelled run leaves every file either at its
//! old state or its new one, and the next run continues from there.

use std::{
    collections::{HashMap, HashSet},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use protocol::ErrorCode;
use rayon::prelude::*;
use stdx::CancellationToken;

use crate::{
    error::{Error, Result},
    extract::{FileAnalysis, analyze},
    lang::Language,
    store::{self, Batch, FileRow, Store},
    walk::{Entry, walk},
};
pub use protocol::UpdateReport;
use stdx::Progress;

/// Files with a modification time this close to the last run are re-hashed even
/// when size and time match: the filesystem clock may not have ticked between an
/// edit and that run (git's "racy clean" problem).
pub(crate) const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// Commit at least this often, so readers and Ctrl-C see progress.
const BATCH_FILES: usize = 500;
const BATCH_TIME: Duration = Duration::from_millis(250);

/// From this many files to parse, when they are at least as many as the index
/// already holds, an update is a bulk load (see `store::LOOKUP_INDEXES`).
const BULK_MIN_FILES: usize = 1000;

enum Work {
    Read {
        rel: String,
        abs: std::path::PathBuf,
        lang: Language,
        size: u64,
        mtime_ns: i64,
        /// The content hash the index has for this path, if any.
        old_hash: Option<String>,
    },
}

enum Outcome {
    Indexed {
        rel: String,
        abs: std::path::PathBuf,
        lang: Language,
        hash: String,
        size: u64,
        mtime_ns: i64,
        lossy: bool,
        /// None: a stored blob has this content already.
        analysis: Option<FileAnalysis>,
        old_hash: Option<String>,
    },
    Skipped {
        rel: String,
        code: ErrorCode,
        reason: String,
        size: u64,
        mtime_ns: i64,
    },
    Vanished {
        rel: String,
    },
}

pub(crate) struct Options<'a> {
    pub exclude: &'a [String],
    pub max_file_size: u64,
    pub include_minified: bool,
}

pub(crate) fn update(
    store: &mut Store,
    root: &std::path::Path,
    opts: &Options<'_>,
    progress: &dyn Progress,
    cancel: &CancellationToken,
) -> Result<UpdateReport> {
    let started = Instant::now();
    let started_ns = now_ns();
    let mut report = UpdateReport::default();

    // A different extractor means different parse results for the same bytes.
    let extractor = extractor_version();
    if store.meta("extractor")?.as_deref() != Some(extractor.as_str()) {
        let batch = store.begin()?;
        batch.clear_parse_results()?;
        batch.set_meta("extractor", &extractor)?;
        batch.commit()?;
    }
    // The settings that admit a file (the size limit, minified bundles) can be
    // tightened between runs. A file indexed under looser ones must then be checked
    // again: unchanged on disk, it would otherwise stay indexed for good.
    let admission =
        format!("max_file_size={} include_minified={}", opts.max_file_size, opts.include_minified);
    let recheck = store.meta("admission")?.as_deref() != Some(admission.as_str());
    let last_started: i64 =
        store.meta("last_update_started_ns")?.and_then(|v| v.parse().ok()).unwrap_or(0);
    let known_files = store.files()?;
    progress.phase("walking", None);
    // On a first index nearly every source file is parsed: compile the queries while
    // the walk runs. Not otherwise: one edited file needs one language's query.
    let warm_up = |lang| {
        if known_files.is_empty() {
            crate::extract::warm_up(lang);
        }
    };
    let entries = walk(root, opts.exclude, cancel, &warm_up)?;
    report.files_seen = entries.len() as u64;
    let known_skips = store.skipped()?;
    let known_blobs = store.blobs()?;
    let mut work = Vec::new();
    let mut direct: Vec<Outcome> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::with_capacity(entries.len());
    for entry in &entries {
        seen.insert(entry.rel());
        match entry {
            Entry::File { rel, abs, lang, size, mtime_ns } => {
                let racy = *mtime_ns >= last_started - RACY_WINDOW_NS;
                if let Some(FileRow { size: s, mtime_ns: m, .. }) = known_files.get(rel)
                    && s == size
                    && m == mtime_ns
                    && !racy
                    && !(recheck
                        && (*size > opts.max_file_size
                            || (!opts.include_minified && lang.is_javascript_family())))
                {
                    report.unchanged += 1;
                    continue;
                }
                if let Some(skip) = known_skips.get(rel) {
                    // A file skipped for its size or content stays skipped until it
                    // changes, or until the setting that skipped it does.
                    let still_applies = match skip.code.as_str() {
                        c if c == ErrorCode::Unreadable.as_str() => false,
                        c if c == ErrorCode::FileTooLarge.as_str() => *size > opts.max_file_size,
                        c if c == ErrorCode::MinifiedFile.as_str() => !opts.include_minified,
                        _ => true,
                    };
                    if skip.size == *size && skip.mtime_ns == *mtime_ns && !racy && still_applies {
                        report.unchanged += 1;
                        continue;
                    }
                }
                if *size > opts.max_file_size {
                    direct.push(Outcome::Skipped {
                        rel: rel.clone(),
                        code: ErrorCode::FileTooLarge,
                        reason: format!(
                            "{size} bytes is over the {} byte limit (index.max_file_size)",
                            opts.max_file_size
                        ),
                        size: *size,
                        mtime_ns: *mtime_ns,
                    });
                    continue;
                }
                work.push(Work::Read {
                    rel: rel.clone(),
                    abs: abs.clone(),
                    lang: *lang,
                    size: *size,
                    mtime_ns: *mtime_ns,
                    old_hash: known_files.get(rel).map(|f| f.hash.clone()),
                });
            }
            Entry::Skip { rel, code, reason, size, mtime_ns } => {
                if let Some(k) = known_skips.get(rel)
                    && k.code == code.as_str()
                    && k.size == *size
                    && k.mtime_ns == *mtime_ns
                {
                    report.unchanged += 1;
                    continue;
                }
                direct.push(Outcome::Skipped {
                    rel: rel.clone(),
                    code: *code,
                    reason: reason.clone(),
                    size: *size,
                    mtime_ns: *mtime_ns,
                });
            }
        }
    }
    let deleted: Vec<&String> = known_files
        .keys()
        .chain(known_skips.keys())
        .filter(|p| !seen.contains(p.as_str()))
        .collect();
    report.deleted = known_files.keys().filter(|p| !seen.contains(p.as_str())).count() as u64;

    // Largest first: the pool then ends on small files, not with one worker still
    // parsing a big one while the other has nothing left (in path order, one
    // worker parsed alone for the last 200 ms of a cold index of Django).
    work.sort_unstable_by_key(|Work::Read { size, .. }| std::cmp::Reverse(*size));

    // A bulk load (a first index, a rebuild, a new extractor) builds the lookup
    // indexes once at the end instead of updating them row by row.
    let bulk = work.len() >= BULK_MIN_FILES && work.len() >= known_files.len();
    if bulk {
        let batch = store.begin()?;
        batch.drop_lookup_indexes()?;
        batch.commit()?;
    }

    progress.phase("indexing", Some(work.len() as u64));
    let (tx, rx) = crossbeam_channel::bounded::<Outcome>(256);
    let mut write_result: Result<()> = Ok(());
    // The writer runs on this thread, outside rayon's pool: `rayon::scope` would run
    // it on a pool worker, and a writer blocked on the channel would take one of the
    // (on 2 cores, two) parsing threads away.
    std::thread::scope(|s| {
        let known_blobs = &known_blobs;
        s.spawn(move || {
            // One file per job: rayon otherwise hands out runs of files that are
            // processed in sequence, and one worker can end up parsing the rest of
            // a run while the other has nothing to steal.
            work.into_par_iter().with_max_len(1).for_each_with(tx, |tx, w| {
                if cancel.is_cancelled() {
                    return;
                }
                let _ = tx.send(process(w, opts, known_blobs));
            });
        });
        write_result = write_all(store, direct, rx, &mut report, progress, cancel);
    });
    write_result?;
    if cancel.is_cancelled() {
        if bulk {
            // What was loaded stays, and is as fast to query as after a full run.
            let batch = store.begin()?;
            batch.ensure_lookup_indexes()?;
            batch.commit()?;
        }
        return Err(Error::Cancelled);
    }

    let batch = store.begin()?;
    // Builds them after a bulk load, and repairs them after one that was killed.
    // (Built at three quarters of the files instead, to overlap the parsing of the
    // rest, the remaining rows went through random B-tree inserts whose commits
    // rewrote index pages all over the WAL: the writer's CPU time rose by 40%.)
    batch.ensure_lookup_indexes()?;
    for path in &deleted {
        batch.delete_path(path)?;
    }
    batch.collect_garbage()?;
    batch.set_meta("admission", &admission)?;
    batch.set_meta("last_update_started_ns", &started_ns.to_string())?;
    batch.set_meta("last_update_finished_ns", &now_ns().to_string())?;
    batch.commit()?;
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

fn write_all(
    store: &mut Store,
    direct: Vec<Outcome>,
    rx: crossbeam_channel::Receiver<Outcome>,
    report: &mut UpdateReport,
    progress: &dyn Progress,
    cancel: &CancellationToken,
) -> Result<()> {
    // Each outcome is written as it arrives, into a transaction committed every
    // BATCH_FILES or BATCH_TIME: when the last worker finishes, only its last
    // results are left to write, not a whole batch.
    let mut batch = store.begin()?;
    let mut in_batch = direct.len() as u64;
    for o in direct {
        apply(&batch, o, report)?;
    }
    let mut last_commit = Instant::now();
    loop {
        let wait = BATCH_TIME.saturating_sub(last_commit.elapsed());
        let next = rx.recv_timeout(wait);
        let done = matches!(next, Err(crossbeam_channel::RecvTimeoutError::Disconnected));
        if let Ok(o) = next {
            apply(&batch, o, report)?;
            in_batch += 1;
        }
        if cancel.is_cancelled() {
            // What this transaction holds is rolled back (dropped). Drain, so the
            // workers are not blocked on a full channel.
            drop(batch);
            while rx.recv().is_ok() {}
            return Ok(());
        }
        if done || in_batch >= BATCH_FILES as u64 || last_commit.elapsed() >= BATCH_TIME {
            batch.commit()?;
            progress.advance(in_batch);
            if done {
                return Ok(());
            }
            batch = store.begin()?;
            in_batch = 0;
            last_commit = Instant::now();
        }
    }
}

/// Writes one outcome into the open transaction.
fn apply(batch: &Batch<'_>, outcome: Outcome, report: &mut UpdateReport) -> Result<()> {
    match outcome {
        Outcome::Indexed { rel, abs, lang, hash, size, mtime_ns, lossy, analysis, old_hash } => {
            let same_content = old_hash.as_deref() == Some(hash.as_str());
            let blob_id = match (&analysis, batch.find_blob(&hash, lang)?) {
                (None, Some(id)) => {
                    if !same_content {
                        report.reused += 1;
                    }
                    id
                }
                // Parsed twice: identical files in one run (a hundred `__init__.py`).
                (Some(_), Some(id)) => {
                    report.parsed += 1;
                    id
                }
                (Some(a), None) => {
                    report.parsed += 1;
                    batch.insert_blob(&hash, lang, a)?
                }
                // The blob we meant to reuse is gone (another process collected it):
                // parse again rather than store an empty result.
                (None, None) => match std::fs::read(&abs) {
                    Ok(bytes) if stdx::sha256_hex(&bytes) == hash => {
                        report.parsed += 1;
                        batch.blob(&hash, lang, &analyze(lang, &bytes))?
                    }
                    _ => return Ok(()), // changed again meanwhile: the next run sees it
                },
            };
            batch.upsert_file(&rel, blob_id, size, mtime_ns, lossy)?;
            match old_hash {
                None => report.added += 1,
                // Touched, or rewritten with the same bytes.
                Some(_) if same_content => report.unchanged += 1,
                Some(_) => report.modified += 1,
            }
        }
        Outcome::Skipped { rel, code, reason, size, mtime_ns } => {
            report.skipped += 1;
            batch.upsert_skip(&rel, code.as_str(), &reason, size, mtime_ns)?;
        }
        Outcome::Vanished { rel } => batch.delete_path(&rel)?,
    }
    Ok(())
}

fn process(
    work: Work,
    opts: &Options<'_>,
    known_blobs: &HashMap<(String, String), i64>,
) -> Outcome {
    let Work::Read { rel, abs, lang, size, mtime_ns, old_hash } = work;
    let max_size = opts.max_file_size;
    let bytes = match stdx::read_to_end_limited(&abs, max_size) {
        Ok(stdx::ReadLimited::Complete(b)) => b,
        Ok(stdx::ReadLimited::TooLarge { size }) => {
            return Outcome::Skipped {
                rel,
                code: ErrorCode::FileTooLarge,
                reason: format!(
                    "{size} bytes is over the {max_size} byte limit (index.max_file_size)"
                ),
                size,
                mtime_ns,
            };
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Outcome::Vanished { rel },
        Err(e) => {
            return Outcome::Skipped {
                rel,
                code: ErrorCode::Unreadable,
                reason: e.to_string(),
                size,
                mtime_ns,
            };
        }
    };
    if looks_binary(&bytes) {
        return Outcome::Skipped {
            rel,
            code: ErrorCode::BinaryFile,
            reason: "contains NUL bytes; looks binary".to_owned(),
            size,
            mtime_ns,
        };
    }
    if !opts.include_minified && lang.is_javascript_family() && looks_minified(&bytes) {
        return Outcome::Skipped {
            rel,
            code: ErrorCode::MinifiedFile,
            reason: "looks minified (long lines); set index.include_minified to index it"
                .to_owned(),
            size,
            mtime_ns,
        };
    }
    let lossy = std::str::from_utf8(&bytes).is_err();
    let hash = stdx::sha256_hex(&bytes);
    let analysis = if known_blobs.contains_key(&(hash.clone(), lang.name().to_owned())) {
        None
    } else {
        Some(analyze(lang, &bytes))
    };
    Outcome::Indexed { rel, abs, lang, hash, size, mtime_ns, lossy, analysis, old_hash }
}

/// GitHub linguist's heuristic for minified files: lines averaging over 110 bytes.
/// Small files are exempt, so a short one-liner is still indexed. Why skip them at
/// all: a bundle's single-letter names are noise in every search and reference
/// list, its definitions duplicate the unminified source next to it, and parsing a
/// 100 KB line costs as much as a module of real code.
pub(crate) fn looks_minified(bytes: &[u8]) -> bool {
    const MIN_SIZE: usize = 1024;
    const MAX_AVERAGE_LINE: usize = 110;
    if bytes.len() < MIN_SIZE {
        return false;
    }
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    bytes.len() / lines > MAX_AVERAGE_LINE
}

/// Git's heuristic: a NUL byte in the first 8000 bytes.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8000)].contains(&0)
}

fn now_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
}

/// Identifies the extraction logic: the query files plus a revision number.
pub(crate) fn extractor_version() -> String {
    let mut h = stdx::ContentHasher::new();
    h.update(&store::EXTRACTOR_REVISION.to_le_bytes());
    for lang in Language::ALL {
        h.update(lang.query_source().as_bytes());
    }
    h.finish_hex()[..16].to_owned()
}
