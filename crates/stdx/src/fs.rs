use std::{
    fs::File,
    io::{self, Read, Write},
    path::Path,
};

/// Replaces `path` with `bytes` so that a reader (or a crash) sees either the old
/// content or the new one, never a mix.
///
/// Writes a temporary file in the same directory (same filesystem, so the rename is
/// atomic), flushes it to disk, keeps the old file's permissions, renames it over the
/// target and syncs the directory so the rename itself survives a power cut.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    atomic_write_with(path, bytes, None)
}

/// [`atomic_write`] with explicit permissions for the new file. With `None`, an
/// existing file's permissions (and, where we may, its owner) are kept and a new
/// file gets the temporary file's (owner-only) permissions.
///
/// The permissions are set on the temporary file before the rename, so no reader
/// and no crash ever sees the new content with the wrong mode.
pub fn atomic_write_with(
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new().prefix(".ironbees-tmp-").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    let existing = std::fs::metadata(path).ok();
    match (permissions, &existing) {
        (Some(p), _) => tmp.as_file().set_permissions(p)?,
        (None, Some(meta)) => tmp.as_file().set_permissions(meta.permissions())?,
        (None, None) => {}
    }
    #[cfg(unix)]
    if let Some(meta) = &existing {
        keep_owner(tmp.as_file(), meta);
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(())
}

/// A file replaced by root (or by a member of the file's group) would otherwise
/// change hands. Best effort: an unprivileged process may not give files away, and
/// then the file is ours, as with any editor that writes by rename.
#[cfg(unix)]
fn keep_owner(tmp: &File, meta: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    let Ok(tmp_meta) = tmp.metadata() else { return };
    if tmp_meta.uid() != meta.uid() || tmp_meta.gid() != meta.gid() {
        let _ = std::os::unix::fs::fchown(tmp, Some(meta.uid()), Some(meta.gid()));
    }
}

/// Syncs a directory so that entries created, renamed or removed in it survive a
/// power cut. Best effort, like the directory sync in [`atomic_write`].
pub fn sync_dir_best_effort(dir: &Path) {
    sync_dir(dir);
}

#[cfg(unix)]
fn sync_dir(dir: &Path) {
    // Best effort: some filesystems refuse fsync on directories; the rename already happened.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) {}

/// What [`read_to_end_limited`] found.
#[derive(Debug)]
pub enum ReadLimited {
    /// The whole file, no longer than the limit.
    Complete(Vec<u8>),
    /// The file is longer than the limit; only its size is known.
    TooLarge { size: u64 },
}

/// Reads a whole file unless it is larger than `limit` bytes.
///
/// The size is checked on the open handle and enforced while reading, so a file that
/// grows between `stat` and `read` cannot make us allocate without bound.
pub fn read_to_end_limited(path: &Path, limit: u64) -> io::Result<ReadLimited> {
    let file = File::open(path)?;
    let size = file.metadata()?.len();
    if size > limit {
        return Ok(ReadLimited::TooLarge { size });
    }
    let mut buf = Vec::with_capacity(size as usize);
    file.take(limit + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Ok(ReadLimited::TooLarge { size: buf.len() as u64 });
    }
    Ok(ReadLimited::Complete(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o750)).unwrap();
        }
        atomic_write(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o750);
        }
        // No temporary file is left behind.
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    #[cfg(unix)]
    fn atomic_write_with_sets_permissions_of_new_and_existing_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.sh");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        atomic_write_with(&p, b"#!/bin/sh\n", Some(std::fs::Permissions::from_mode(0o751)))
            .unwrap();
        assert_eq!(mode(&p), 0o751);
        atomic_write_with(&p, b"#!/bin/sh\n:\n", Some(std::fs::Permissions::from_mode(0o640)))
            .unwrap();
        assert_eq!(mode(&p), 0o640);
        assert_eq!(std::fs::read(&p).unwrap(), b"#!/bin/sh\n:\n");
        atomic_write_with(&p, b"x", None).unwrap();
        assert_eq!(mode(&p), 0o640, "None keeps the existing file's permissions");
    }

    #[test]
    fn read_limited_reports_large_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b'x'; 100]).unwrap();
        assert!(matches!(
            read_to_end_limited(&p, 99).unwrap(),
            ReadLimited::TooLarge { size: 100 }
        ));
        assert!(
            matches!(read_to_end_limited(&p, 100).unwrap(), ReadLimited::Complete(v) if v.len() == 100)
        );
    }
}
