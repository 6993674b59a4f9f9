//! Derived data kept between processes: the project snapshot, stored under the
//! key of what it was built from.
//!
//! A one-shot command (a script, a CI job, a short-lived agent) used to rebuild
//! the snapshot from the index on every call: load every definition and
//! reference, resolve, rank. The snapshot is a function of the index's content and
//! the manifests (`Snapshot::inputs` hashes both in milliseconds), so the first
//! process that builds it for a key writes it to `.ironbees/derived/snapshot.bin`
//! and the next ones decode it instead.
//!
//! Crash safety: the bytes go to a file of this process's own, are synced, and
//! are renamed over the old file, so a process killed while writing leaves the
//! previous snapshot whole (and usable for its key); a later write removes the
//! partial file once it is old enough not to be a live writer's. A file that does not decode (another key, another build of
//! ironbees, damage) is ignored and replaced. Failing to write is not an error:
//! the answer is computed either way.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicU64, Ordering as AtomicOrdering},
    },
    thread::JoinHandle,
    time::{Duration, Instant, SystemTime},
};

use code_graph::{Decoded, Derivation, Snapshot, StoredBytes};
use code_index::Index;
use protocol::{SnapshotDerivation, SnapshotReport};
use stdx::Call;

use crate::error::Result;

/// Where snapshots are stored, and how.
pub(crate) struct SnapshotStore {
    dir: PathBuf,
    /// The thread storing the last snapshot derived: the answer does not wait
    /// for the file (a second of writing on a large tree), the next load and
    /// the end of the process do.
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for SnapshotStore {
    fn drop(&mut self) {
        self.wait();
    }
}

/// Tells this process's temporary files apart (a server stores one snapshot
/// after another).
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Leftovers of killed writers older than this are removed.
const STALE_TEMP: Duration = Duration::from_secs(600);

impl SnapshotStore {
    pub(crate) fn new(dir: PathBuf) -> SnapshotStore {
        SnapshotStore { dir, writer: Mutex::new(None) }
    }

    pub(crate) fn path(&self) -> PathBuf {
        self.dir.join("snapshot.bin")
    }

    /// The snapshot of the index as it is: decoded when stored under the same
    /// key; else the stored one updated for the files that changed since (same
    /// build of ironbees, same manifests), or one built from scratch; then stored.
    pub(crate) fn load(
        &self,
        index: &Index,
        call: &Call<'_>,
    ) -> Result<(Arc<Snapshot>, SnapshotReport)> {
        // A writer still storing the last one: its file is the one to start from.
        self.wait();
        let started = Instant::now();
        let inputs = Snapshot::inputs(index)?;
        let key = with_build_identity(&inputs.key);
        let base = with_build_identity(&inputs.base);
        let earlier = match self.decode(&key, &base) {
            Some(Decoded::Current(snap)) => {
                let report = SnapshotReport {
                    derivation: SnapshotDerivation::Stored,
                    changed_files: 0,
                    resolved_files: 0,
                    duration_ms: started.elapsed().as_millis() as u64,
                };
                return Ok((Arc::new(snap), report));
            }
            Some(Decoded::Earlier(snap)) => Some(snap),
            None => None,
        };
        call.progress.phase(
            if earlier.is_some() {
                "updating the project snapshot"
            } else {
                "building the project snapshot"
            },
            None,
        );
        let (snap, how) = Snapshot::derive(index, inputs, earlier)?;
        let (derivation, changed_files, resolved_files) = match how {
            Derivation::Updated { changed, resolved } => {
                (SnapshotDerivation::Updated, changed as u64, resolved as u64)
            }
            _ => {
                let n = snap.project.files.len() as u64;
                (SnapshotDerivation::Built, n, n)
            }
        };
        let snap = Arc::new(snap);
        // Another process may have updated the index while this one read it:
        // then what was derived is not surely the key's, and is not stored.
        let unchanged = Snapshot::inputs(index).is_ok_and(|i| with_build_identity(&i.key) == key);
        if unchanged && let Err(e) = self.store_in_background(Arc::clone(&snap), key, base) {
            call.progress.warning(
                protocol::ErrorCode::Io.as_str(),
                &format!(
                    "could not store the project snapshot in {}: {e}; answers are right, \
                     but every new process builds it again",
                    self.dir.display()
                ),
            );
        }
        let duration_ms = started.elapsed().as_millis() as u64;
        Ok((snap, SnapshotReport { derivation, changed_files, resolved_files, duration_ms }))
    }

    /// Waits for the writer, if one is storing a snapshot.
    pub(crate) fn wait(&self) {
        let writer = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(w) = writer {
            let _ = w.join();
        }
    }

    /// Removes the stored snapshot (a rebuild from scratch).
    pub(crate) fn forget(&self) {
        self.wait();
        let _ = fs::remove_file(self.path());
    }

    /// The stored snapshot, if it is whole and `key`'s, or `base`'s.
    ///
    /// The file is memory-mapped: the reference edges are decoded from the map
    /// only when a call needs them, so a query that does not (localization) never
    /// has them in memory, and the pages decoding has read are handed back to the
    /// kernel as it goes. The map stays valid while the file is replaced: writers
    /// rename a new file over it, never write into it.
    #[allow(unsafe_code, reason = "memory-mapping the stored snapshot")]
    fn decode(&self, key: &[u8; 32], base: &[u8; 32]) -> Option<Decoded> {
        let file = fs::File::open(self.path()).ok()?;
        // SAFETY: the file is only ever replaced by a rename (`store`), never
        // truncated or written in place, so the mapped bytes cannot change or
        // vanish under us.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        Snapshot::decode(Arc::new(Mapped(map)), key, base)
    }

    /// Stores `snap` under `key` and `base`, atomically, streamed to the file
    /// (no copy of it in memory), from a thread of its own. What can fail
    /// before any work (the directory, the file) fails here; a write that fails
    /// later leaves the previous file, and the next process derives it again.
    fn store_in_background(
        &self,
        snap: Arc<Snapshot>,
        key: [u8; 32],
        base: [u8; 32],
    ) -> std::io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let seq = TEMP_SEQ.fetch_add(1, AtomicOrdering::Relaxed);
        let tmp = self.dir.join(format!("snapshot.bin.{}-{seq}.tmp", std::process::id()));
        let file = fs::File::create(&tmp)?;
        let (dir, path) = (self.dir.clone(), self.path());
        let writer =
            std::thread::Builder::new().name("snapshot-store".into()).spawn(move || {
                let result = (|| {
                    let file = Pausing { file, writes: 0 };
                    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
                    snap.write_to(&key, &base, &mut w)?;
                    let file = w.into_inner().map_err(|e| e.into_error())?.file;
                    // Synced before the rename, so that the name never points at
                    // bytes still in flight; a file damaged anyway (a power loss on
                    // a file system that reorders) fails its CRC and is rebuilt.
                    file.sync_all()?;
                    fs::rename(&tmp, &path)?;
                    // The rename itself survives a power loss only once the
                    // directory is synced.
                    stdx::sync_dir_best_effort(&dir);
                    std::io::Result::Ok(())
                })();
                if result.is_err() {
                    let _ = fs::remove_file(&tmp);
                }
                // An update reads the lookups from the stored file, not from here.
                snap.forget_lookups();
                remove_stale_temps(&dir);
            })?;
        *self.writer.lock().unwrap_or_else(|p| p.into_inner()) = Some(writer);
        Ok(())
    }
}

/// A stored snapshot, memory-mapped.
struct Mapped(memmap2::Mmap);

impl StoredBytes for Mapped {
    fn bytes(&self) -> &[u8] {
        &self.0
    }

    #[allow(unsafe_code, reason = "handing back pages of the stored snapshot's map")]
    fn release(&self, range: std::ops::Range<usize>) {
        // SAFETY: a read-only shared file mapping: dropped pages are read again
        // from the file if touched, with the same content.
        let _ = unsafe {
            self.0.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                range.start,
                range.len(),
            )
        };
    }
}

/// The file being written, with the crash test's pause point after its first
/// write: the process can be killed with part of the snapshot on disk.
struct Pausing {
    file: fs::File,
    writes: u32,
}

impl Write for Pausing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writes += 1;
        if self.writes == 2 {
            pause_point("snapshot-half-written");
        }
        self.file.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl std::io::Seek for Pausing {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.file.seek(pos)
    }
}

/// Partial files of writers that were killed, once they are old enough not to
/// belong to one still writing.
fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let now = SystemTime::now();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with("snapshot.bin.") && name.ends_with(".tmp")) {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).unwrap_or_default() > STALE_TEMP);
        let ours = name.starts_with(&format!("snapshot.bin.{}-", std::process::id()));
        if old && !ours {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// `key` made specific to this build of ironbees: another build may lay the
/// snapshot out differently or resolve differently, and must not read ours. The
/// executable's size and modification time stand for the build (a hash of 100+
/// MiB would cost more than the snapshot saves).
fn with_build_identity(key: &[u8; 32]) -> [u8; 32] {
    static BUILD: OnceLock<String> = OnceLock::new();
    let build = BUILD.get_or_init(|| {
        let exe = std::env::current_exe().ok();
        let meta = exe.as_ref().and_then(|p| fs::metadata(p).ok());
        let mtime = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos());
        format!("{} {:?} {:?} {:?}", env!("CARGO_PKG_VERSION"), exe, meta.map(|m| m.len()), mtime)
    });
    let mut h = stdx::ContentHasher::new();
    h.update(key);
    h.update(build.as_bytes());
    h.finish()
}

/// A place a crash test stops the process at (debug builds only): with
/// `IRONBEES_TEST_PAUSE_AT=<name>` the process says `PAUSED <name>` on stderr and
/// waits to be killed.
fn pause_point(name: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("IRONBEES_TEST_PAUSE_AT").is_ok_and(|v| v == name) {
        // The one place the engine writes to stderr: a test protocol, debug builds only.
        #[allow(clippy::print_stderr)]
        {
            eprintln!("PAUSED {name}");
        }
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = name;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A killed writer's file is left alone while it may still be written, and
    /// removed once old; the stored snapshot is never touched by the cleanup.
    #[test]
    fn only_old_partial_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let young = dir.path().join("snapshot.bin.999999.tmp");
        let old = dir.path().join("snapshot.bin.999998.tmp");
        let kept = dir.path().join("snapshot.bin");
        for p in [&young, &old, &kept] {
            fs::write(p, b"x").unwrap();
        }
        let f = fs::File::options().write(true).open(&old).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(3600)).unwrap();
        let f = fs::File::options().write(true).open(&kept).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(3600)).unwrap();
        remove_stale_temps(dir.path());
        assert!(young.exists());
        assert!(!old.exists());
        assert!(kept.exists());
    }
}
