//! From a request to a plan: every file's content before and after, computed in
//! memory. Nothing here writes; a dry run stops after this step.
//!
//! All operations see the files as they were before the request (line numbers and
//! anchors refer to that version). Each text operation becomes one or more splices
//! (byte range → new text) of its file; splices of one file must not overlap and are
//! applied together. Whole-file operations (create, delete, rename) own their path:
//! only a rename may be combined with text operations on its source.

use std::{
    collections::HashMap,
    io,
    path::{Path, PathBuf},
};

use protocol::{
    AppliedEdit, EditOp, EditRequest, FileChange, FileChangeKind, InsertPosition, LineRange,
    Normalization,
};

use crate::{
    diff,
    error::{Error, Result},
    jail::{self, Use},
    matching::{self, MatchError, Want},
    store::{Transition, Version},
    symbol::{self, SymbolLocator},
    text::{self, BOM, LineIndex},
};

pub(crate) struct Ctx<'a> {
    pub root: &'a Path,
    pub max_file_size: u64,
    /// Permissions of files ironbees creates (the umask's default).
    pub default_mode: u32,
    pub locator: Option<&'a dyn SymbolLocator>,
    /// Files as a shadow overlay has them (`None`: deleted there), read instead of
    /// the disk: a plan against a run's unapplied changes.
    pub overlay: Option<&'a crate::engine::Overlay>,
}

/// A file's content with its hash and permissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Content {
    pub bytes: Vec<u8>,
    pub hash: String,
    pub mode: u32,
}

impl Content {
    pub(crate) fn new(bytes: Vec<u8>, mode: u32) -> Content {
        let hash = stdx::sha256_hex(&bytes);
        Content { bytes, hash, mode }
    }

    pub(crate) fn version(&self) -> Version {
        Version { hash: self.hash.clone(), size: self.bytes.len() as u64, mode: self.mode }
    }
}

/// One path of the plan.
pub(crate) struct Slot {
    pub rel: String,
    pub abs: PathBuf,
    pub before: Option<Content>,
    pub after: Option<Content>,
    pub edits: Vec<AppliedEdit>,
    /// For a rename's source: the destination slot's index.
    pub moved_to: Option<usize>,
    /// A rename's destination (shown as part of its source's change).
    pub is_destination: bool,
    /// The file's metadata when the plan read it (`None`: absent, or read from an
    /// overlay): a commit of the plan compares it first and hashes the file only
    /// when it differs.
    pub stamp: Option<Stamp>,
}

/// What the file system says of a file without reading it: when it differs from
/// the plan's, the file may have changed since; when it is the same, the hash
/// checked just before each rename still decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    /// (inode, ctime seconds, ctime nanoseconds): a rename over the file or any
    /// write changes them, and no program can set them back.
    #[cfg(unix)]
    inode: (u64, i64, i64),
}

impl Stamp {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            inode: (meta.ino(), meta.ctime(), meta.ctime_nsec()),
        }
    }
}

pub(crate) struct Plan {
    pub slots: Vec<Slot>,
    /// Directories to create, parents first (relative paths).
    pub created_dirs: Vec<String>,
}

impl Plan {
    /// The transitions of slots that change, writes first (a rename's destination
    /// exists before its source goes), then removals.
    pub(crate) fn transitions(&self) -> Vec<Transition> {
        let changed = self.slots.iter().filter(|s| s.before != s.after);
        let (writes, removals): (Vec<&Slot>, Vec<&Slot>) = changed.partition(|s| s.after.is_some());
        writes
            .into_iter()
            .chain(removals)
            .map(|s| Transition {
                path: s.rel.clone(),
                before: s.before.as_ref().map(Content::version),
                after: s.after.as_ref().map(Content::version),
            })
            .collect()
    }

    /// Each changed file's content before and after, keyed like [`Plan::changes`]
    /// (a rename by its source path, with the destination's content after).
    pub(crate) fn versions(&self) -> Vec<crate::FileVersions> {
        self.slots
            .iter()
            .filter(|s| !s.is_destination)
            .map(|s| {
                let new_slot = s.moved_to.map_or(s, |d| &self.slots[d]);
                crate::FileVersions {
                    path: s.rel.clone(),
                    before: s.before.as_ref().map(|c| c.bytes.clone()),
                    after: new_slot.after.as_ref().map(|c| c.bytes.clone()),
                }
            })
            .collect()
    }

    /// The per-file results, in request order, a rename shown as one change.
    pub(crate) fn changes(&self) -> Vec<FileChange> {
        let mut out = Vec::new();
        for s in self.slots.iter().filter(|s| !s.is_destination) {
            let (new_slot, new_path) = match s.moved_to {
                Some(d) => (&self.slots[d], Some(self.slots[d].rel.clone())),
                None => (s, None),
            };
            let kind = match (&s.before, &new_slot.after, s.moved_to) {
                (_, _, Some(_)) => FileChangeKind::Renamed,
                (None, Some(_), _) => FileChangeKind::Created,
                (Some(_), None, _) => FileChangeKind::Deleted,
                _ => FileChangeKind::Modified,
            };
            out.push(change(s, new_slot, new_path, kind));
        }
        out
    }
}

pub(crate) fn change(
    old: &Slot,
    new: &Slot,
    new_path: Option<String>,
    kind: FileChangeKind,
) -> FileChange {
    fn side<'a>(rel: &'a str, c: &'a Option<Content>, fallback_mode: u32) -> diff::Side<'a> {
        diff::Side {
            path: rel,
            bytes: c.as_ref().map(|c| c.bytes.as_slice()),
            mode: c.as_ref().map_or(fallback_mode, |c| c.mode),
        }
    }
    let old_mode = old.before.as_ref().map_or(0o644, |c| c.mode);
    let new_mode = new.after.as_ref().map_or(old_mode, |c| c.mode);
    let (diff, lines_added, lines_removed) =
        diff::render(&side(&old.rel, &old.before, new_mode), &side(&new.rel, &new.after, old_mode));
    let mut edits = old.edits.clone();
    edits.sort_by_key(|e| e.index);
    FileChange {
        path: old.rel.clone(),
        new_path,
        kind,
        old_hash: old.before.as_ref().map(|c| c.hash.clone()),
        new_hash: new.after.as_ref().map(|c| c.hash.clone()),
        diff,
        lines_added,
        lines_removed,
        edits,
    }
}

/// Builds the plan for `req` against the files as they are now.
pub(crate) fn build(ctx: &Ctx<'_>, req: &EditRequest) -> Result<Plan> {
    crate::probe::plan();
    if req.edits.is_empty() {
        return Err(Error::InvalidArgument {
            edit: None,
            message: "the request has no edits".to_owned(),
        });
    }
    let mut ops = req.edits.clone();
    for (i, op) in ops.iter_mut().enumerate() {
        if let Some(t) = &req.target {
            op.fill_path(t);
        }
        if op.path().is_empty() {
            return Err(Error::InvalidArgument {
                edit: Some(i),
                message: format!("`{}` names no path (and the request has no target)", op.name()),
            });
        }
    }

    // Resolve every path through the jail and group operations by file.
    let mut slots: Vec<Slot> = Vec::new();
    let mut by_rel: HashMap<String, usize> = HashMap::new();
    let mut ops_of: Vec<Vec<usize>> = Vec::new();
    let mut destinations: Vec<(usize, jail::Resolved)> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let usage = match op {
            EditOp::Delete { .. } | EditOp::Rename { .. } => Use::Entry,
            _ => Use::Content,
        };
        let r = jail::resolve(ctx.root, op.path(), usage).map_err(|e| e.at_edit(i))?;
        let slot = *by_rel.entry(r.rel.clone()).or_insert_with(|| {
            slots.push(Slot {
                rel: r.rel.clone(),
                abs: r.abs.clone(),
                before: None,
                after: None,
                edits: Vec::new(),
                moved_to: None,
                is_destination: false,
                stamp: None,
            });
            ops_of.push(Vec::new());
            slots.len() - 1
        });
        ops_of[slot].push(i);
        if let EditOp::Rename { new_path, .. } = op {
            let d = jail::resolve(ctx.root, new_path, Use::Entry).map_err(|e| e.at_edit(i))?;
            destinations.push((i, d));
        }
    }
    check_conflicts(&ops, &slots, &ops_of, &destinations)?;

    // Read what is there now and check preconditions.
    for (si, slot) in slots.iter_mut().enumerate() {
        let first = ops_of[si][0];
        let (before, stamp) =
            read_state_stamped(ctx, &slot.rel, &slot.abs).map_err(|e| e.at_edit(first))?;
        (slot.before, slot.stamp) = (before, stamp);
        for &i in &ops_of[si] {
            let op = &ops[i];
            let must_exist = !matches!(op, EditOp::Create { .. });
            if must_exist && slot.before.is_none() {
                return Err(Error::NotFound { path: slot.rel.clone() });
            }
            if let Some(expected) = op.expected_hash() {
                check_hash(&slot.rel, i, expected, slot.before.as_ref())?;
            }
        }
    }

    // Compute the new contents.
    for si in 0..slots.len() {
        let idx = ops_of[si].clone();
        let whole = idx.iter().copied().find(|&i| {
            matches!(ops[i], EditOp::Create { .. } | EditOp::Delete { .. } | EditOp::Rename { .. })
        });
        let text_ops: Vec<usize> = idx.iter().copied().filter(|&i| Some(i) != whole).collect();
        let slot = &mut slots[si];
        let mut after = slot.before.clone();
        if !text_ops.is_empty() {
            let before = slot.before.as_ref().expect("checked: text ops need the file");
            let (bytes, edits) = apply_text_ops(ctx, &slot.rel, before, &ops, &text_ops)?;
            after = Some(Content::new(bytes, before.mode));
            slot.edits = edits;
        }
        match whole.map(|i| (i, &ops[i])) {
            Some((_, EditOp::Create { content, overwrite, .. })) => {
                if slot.before.is_some() && !overwrite {
                    return Err(Error::AlreadyExists {
                        path: slot.rel.clone(),
                        hint: " (set `overwrite` to replace it)",
                    });
                }
                let mode = slot.before.as_ref().map_or(ctx.default_mode, |c| c.mode);
                after = Some(Content::new(content.clone().into_bytes(), mode));
            }
            Some((_, EditOp::Delete { .. })) => after = None,
            Some((i, EditOp::Rename { .. })) => {
                let d = destinations
                    .iter()
                    .find(|(j, _)| *j == i)
                    .map(|(_, d)| d.clone())
                    .expect("every rename has a destination");
                if read_state(ctx, &d.rel, &d.abs).map_err(|e| e.at_edit(i))?.is_some() {
                    return Err(Error::AlreadyExists {
                        path: d.rel.clone(),
                        hint: " (a rename never replaces a file; delete it first)",
                    });
                }
                let moved = after.take();
                let slot_count = slots.len();
                slots[si].moved_to = Some(slot_count);
                slots.push(Slot {
                    rel: d.rel,
                    abs: d.abs,
                    before: None,
                    after: moved,
                    edits: Vec::new(),
                    moved_to: None,
                    is_destination: true,
                    stamp: None,
                });
                slots[si].after = None;
                continue;
            }
            _ => {}
        }
        slots[si].after = after;
    }

    let created_dirs = dirs_to_create(ctx.root, &slots)?;
    Ok(Plan { slots, created_dirs })
}

/// Refuses requests whose operations fight over a path.
fn check_conflicts(
    ops: &[EditOp],
    slots: &[Slot],
    ops_of: &[Vec<usize>],
    destinations: &[(usize, jail::Resolved)],
) -> Result<()> {
    let conflict = |i: usize, j: usize, path: &str, why: &str| Error::InvalidArgument {
        edit: Some(j),
        message: format!("edits[{i}] and edits[{j}] both {why} {path}"),
    };
    for (si, idx) in ops_of.iter().enumerate() {
        let path = &slots[si].rel;
        let whole: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|&i| {
                matches!(
                    ops[i],
                    EditOp::Create { .. } | EditOp::Delete { .. } | EditOp::Rename { .. }
                )
            })
            .collect();
        if whole.len() > 1 {
            return Err(conflict(whole[0], whole[1], path, "create, delete or rename"));
        }
        if let Some(&w) = whole.first()
            && !matches!(ops[w], EditOp::Rename { .. })
            && let Some(&other) = idx.iter().find(|&&i| i != w)
        {
            return Err(Error::InvalidArgument {
                edit: Some(other.max(w)),
                message: format!(
                    "edits[{}] {}s {path}, so edits[{}] cannot also change it in the same request{}",
                    w,
                    ops[w].name(),
                    other,
                    if matches!(ops[w], EditOp::Create { .. }) {
                        " (put the final text in `content`)"
                    } else {
                        ""
                    }
                ),
            });
        }
    }
    for (k, (i, d)) in destinations.iter().enumerate() {
        if let Some(si) = slots.iter().position(|s| s.rel == d.rel) {
            return Err(conflict(ops_of[si][0], *i, &d.rel, "name"));
        }
        if let Some((j, _)) = destinations[..k].iter().find(|(_, e)| e.rel == d.rel) {
            return Err(conflict(*j, *i, &d.rel, "rename to"));
        }
    }
    Ok(())
}

/// The file at `abs` now: absent, or its content. Directories and other special
/// files are refused.
pub(crate) fn read_state(ctx: &Ctx<'_>, rel: &str, abs: &Path) -> Result<Option<Content>> {
    read_state_stamped(ctx, rel, abs).map(|(c, _)| c)
}

/// [`read_state`] with the file's [`Stamp`] as it was read (none from an overlay).
fn read_state_stamped(
    ctx: &Ctx<'_>,
    rel: &str,
    abs: &Path,
) -> Result<(Option<Content>, Option<Stamp>)> {
    if let Some(shadowed) = ctx.overlay.and_then(|o| o.get(rel)) {
        // The overlay's version; the file's mode stays the disk's when it has one.
        let mode = std::fs::symlink_metadata(abs).map_or(ctx.default_mode, |m| mode_of(&m));
        return Ok((shadowed.as_ref().map(|b| Content::new(b.clone(), mode)), None));
    }
    let meta = match std::fs::symlink_metadata(abs) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((None, None)),
        Err(e) => return Err(Error::io(rel, e)),
    };
    if meta.is_dir() {
        return Err(Error::InvalidArgument {
            edit: None,
            message: format!("{rel} is a directory"),
        });
    }
    if !meta.is_file() {
        return Err(Error::InvalidArgument {
            edit: None,
            message: format!("{rel} is not a regular file"),
        });
    }
    let bytes = match stdx::read_to_end_limited(abs, ctx.max_file_size) {
        Ok(stdx::ReadLimited::Complete(b)) => b,
        Ok(stdx::ReadLimited::TooLarge { size }) => {
            return Err(Error::FileTooLarge {
                path: rel.to_owned(),
                size,
                limit: ctx.max_file_size,
            });
        }
        Err(e) => return Err(Error::io(rel, e)),
    };
    crate::probe::read(rel);
    Ok((Some(Content::new(bytes, mode_of(&meta))), Some(Stamp::of(&meta))))
}

#[cfg(unix)]
pub(crate) fn mode_of(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
pub(crate) fn mode_of(_meta: &std::fs::Metadata) -> u32 {
    0o644
}

/// Accepts `HEX` or `sha256:HEX`, any case.
pub(crate) fn normalize_hash(h: &str) -> Option<String> {
    let h = h.trim();
    let h = h.strip_prefix("sha256:").unwrap_or(h).to_ascii_lowercase();
    (h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit())).then_some(h)
}

fn check_hash(rel: &str, edit: usize, expected: &str, current: Option<&Content>) -> Result<()> {
    let Some(want) = normalize_hash(expected) else {
        return Err(Error::InvalidArgument {
            edit: Some(edit),
            message: format!("expectedHash {expected:?} is not a SHA-256 hex digest"),
        });
    };
    let cur = current.map(|c| c.hash.clone());
    if cur.as_deref() != Some(want.as_str()) {
        return Err(Error::HashMismatch {
            path: rel.to_owned(),
            edit: Some(edit),
            message: match &cur {
                Some(_) => format!(
                    "edits[{edit}]: the file changed since it was read (expectedHash differs); \
                     read it again and redo the edit"
                ),
                None => format!("edits[{edit}]: expectedHash given, but the file does not exist"),
            },
            expected: Some(want),
            current: cur,
            changed_by: None,
        });
    }
    Ok(())
}

/// Decodes a file for text operations: no NUL bytes, valid UTF-8; the BOM is set
/// aside (and put back on write).
fn decode<'a>(rel: &str, bytes: &'a [u8]) -> Result<(bool, &'a str)> {
    if bytes.contains(&0) {
        return Err(Error::BinaryFile { path: rel.to_owned() });
    }
    let s = std::str::from_utf8(bytes).map_err(|e| Error::InvalidUtf8 {
        path: rel.to_owned(),
        line: bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() as u32 + 1,
    })?;
    Ok(match s.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, s),
    })
}

/// A planned replacement in one file.
struct Splice {
    start: usize,
    end: usize,
    text: String,
    index: usize,
    line_range: Option<LineRange>,
    normalizations: Vec<Normalization>,
}

fn apply_text_ops(
    ctx: &Ctx<'_>,
    rel: &str,
    before: &Content,
    ops: &[EditOp],
    idx: &[usize],
) -> Result<(Vec<u8>, Vec<AppliedEdit>)> {
    let (bom, text) = decode(rel, &before.bytes)?;
    let ix = LineIndex::new(text);
    let eol = text::dominant_eol(text);
    let mut splices = Vec::new();
    for &i in idx {
        splices.extend(splices_for(ctx, rel, text, &ix, eol, &ops[i], i)?);
    }
    splices.sort_by_key(|s| (s.start, s.end, s.index));
    for w in splices.windows(2) {
        if w[1].start < w[0].end {
            let (a, b) = (&w[0], &w[1]);
            return Err(Error::InvalidArgument {
                edit: Some(a.index.max(b.index)),
                message: format!(
                    "edits[{}] and edits[{}] change overlapping text of {rel} (lines {}); \
                     combine them into one edit",
                    a.index.min(b.index),
                    a.index.max(b.index),
                    ix.lines_of(b.start, a.end.max(b.start + 1))
                ),
            });
        }
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut placed = Vec::new();
    let mut at = 0;
    for s in &splices {
        out.push_str(&text[at..s.start]);
        let new_start = out.len();
        out.push_str(&s.text);
        placed.push((new_start, out.len()));
        at = s.end;
    }
    out.push_str(&text[at..]);
    let new_ix = LineIndex::new(&out);
    let edits = splices
        .into_iter()
        .zip(placed)
        .map(|(s, (ns, ne))| AppliedEdit {
            index: s.index,
            line_range: s.line_range,
            new_line_range: (ne > ns).then(|| new_ix.lines_of(ns, ne)),
            normalizations: s.normalizations,
        })
        .collect();
    let mut bytes = Vec::with_capacity(out.len() + 3);
    if bom {
        bytes.extend_from_slice(BOM.as_bytes());
    }
    bytes.extend_from_slice(out.as_bytes());
    Ok((bytes, edits))
}

fn match_error(rel: &str, index: usize, e: MatchError) -> Error {
    match e {
        MatchError::NoMatch { message, candidates } => Error::NoMatch {
            path: rel.to_owned(),
            edit: index,
            message,
            candidates,
            similar_names: Vec::new(),
        },
        MatchError::Ambiguous { message, candidates } => {
            Error::AmbiguousMatch { path: rel.to_owned(), edit: index, message, candidates }
        }
    }
}

fn bad(index: usize, message: String) -> Error {
    Error::InvalidArgument { edit: Some(index), message }
}

fn splices_for(
    ctx: &Ctx<'_>,
    rel: &str,
    text: &str,
    ix: &LineIndex,
    eol: text::Eol,
    op: &EditOp,
    index: usize,
) -> Result<Vec<Splice>> {
    let lines = ix.count();
    // Replacement text written the file's way; a conversion is reported.
    let fit = |lf: &str, original: &str, norms: &mut Vec<Normalization>| -> String {
        let n = Normalization::LineEndings { file: eol.name().to_owned() };
        if original.contains('\n')
            && text::with_eol(original, eol) != original
            && !norms.contains(&n)
        {
            norms.push(n);
        }
        text::with_eol(lf, eol)
    };
    match op {
        EditOp::Replace {
            target_string,
            replacement_string,
            line_range,
            expected_occurrences,
            replace_all,
            ..
        } => {
            if target_string.is_empty() {
                return Err(bad(index, "targetString is empty; use `insert` to add text".into()));
            }
            check_range(index, *line_range, lines)?;
            let want = match (expected_occurrences, replace_all) {
                (Some(0), _) => {
                    return Err(bad(index, "expectedOccurrences must be at least 1".into()));
                }
                (Some(n), _) => Want::Exactly(*n),
                (None, true) => Want::All,
                (None, false) => Want::Exactly(1),
            };
            let found = matching::find(text, target_string, *line_range, want)
                .map_err(|e| match_error(rel, index, e))?;
            let mut norms = found.normalizations.clone();
            let lf = found.reindent.apply(&text::to_lf(replacement_string));
            let body = fit(&lf, replacement_string, &mut norms);
            Ok(found
                .spans
                .iter()
                .map(|&(s, e)| Splice {
                    start: s,
                    end: e,
                    text: body.clone(),
                    index,
                    line_range: Some(ix.lines_of(s, e)),
                    normalizations: norms.clone(),
                })
                .collect())
        }
        EditOp::ReplaceLines { line_range, replacement_string, .. } => {
            check_range(index, Some(*line_range), lines)?;
            let (s, e) = (ix.start_of(line_range.start), ix.end_of(line_range.end));
            let region_ends_line = text[..e].ends_with('\n');
            let mut lf = text::to_lf(replacement_string);
            if !lf.is_empty() {
                if region_ends_line && !lf.ends_with('\n') {
                    lf.push('\n');
                } else if !region_ends_line && lf.ends_with('\n') {
                    lf.pop();
                }
            }
            let mut norms = Vec::new();
            let body = fit(&lf, replacement_string, &mut norms);
            Ok(vec![Splice {
                start: s,
                end: e,
                text: body,
                index,
                line_range: Some(*line_range),
                normalizations: norms,
            }])
        }
        EditOp::Insert { position, line, target_string, line_range, text: ins, .. } => {
            if ins.is_empty() {
                return Err(bad(index, "`insert` has empty text".into()));
            }
            let (offset, anchor, reindent, mut norms) = match (line, target_string) {
                (Some(_), Some(_)) | (None, None) => {
                    return Err(bad(
                        index,
                        "`insert` needs exactly one anchor: `line` or `targetString`".into(),
                    ));
                }
                (Some(n), None) => {
                    let n = *n;
                    let offset = match position {
                        InsertPosition::Before if (1..=lines + 1).contains(&n) => ix.start_of(n),
                        InsertPosition::After if n == 0 => 0,
                        InsertPosition::After if n <= lines => ix.end_of(n),
                        _ => {
                            return Err(bad(
                                index,
                                format!(
                                    "line {n} is out of range: the file has {lines} lines \
                                     (`before` 1..={}, `after` 0..={lines})",
                                    lines + 1
                                ),
                            ));
                        }
                    };
                    let anchor = (n >= 1 && n <= lines).then(|| LineRange::new(n, n));
                    (offset, anchor, matching::Reindent::None, Vec::new())
                }
                (None, Some(t)) => {
                    if t.is_empty() {
                        return Err(bad(index, "targetString is empty".into()));
                    }
                    check_range(index, *line_range, lines)?;
                    let found = matching::find(text, t, *line_range, Want::Exactly(1))
                        .map_err(|e| match_error(rel, index, e))?;
                    let (s, e) = found.spans[0];
                    let r = ix.lines_of(s, e);
                    let offset = match position {
                        InsertPosition::Before => ix.start_of(r.start),
                        _ => ix.end_of(r.end),
                    };
                    (offset, Some(r), found.reindent, found.normalizations)
                }
            };
            let mut lf = reindent.apply(&text::to_lf(ins));
            if !lf.ends_with('\n') {
                lf.push('\n');
            }
            if offset == text.len() && !text.is_empty() && !text.ends_with('\n') {
                // After a last line without a line break: break it, keep none at the end.
                lf.pop();
                lf.insert(0, '\n');
            }
            let body = fit(&lf, ins, &mut norms);
            Ok(vec![Splice {
                start: offset,
                end: offset,
                text: body,
                index,
                line_range: anchor,
                normalizations: norms,
            }])
        }
        EditOp::ReplaceSymbol { qualified_name, replacement_string, part, line_range, .. } => {
            let Some(locator) = ctx.locator else {
                return Err(bad(
                    index,
                    "replaceSymbol needs a symbol locator, and none is configured".into(),
                ));
            };
            check_range(index, *line_range, lines)?;
            let spans = locator
                .locate(rel, text.as_bytes(), qualified_name)
                .map_err(|e| bad(index, format!("cannot find definitions in {rel}: {e}")))?;
            let spans: Vec<_> = spans
                .into_iter()
                .filter(|s| {
                    line_range.is_none_or(|r| {
                        let l = ix.line_of(s.start_byte as usize);
                        r.start <= l && l <= r.end
                    })
                })
                .collect();
            let cand = |s: &symbol::SymbolSpan| {
                let (a, b) = (s.start_byte as usize, (s.end_byte as usize).min(text.len()));
                let r = ix.lines_of(a, b);
                protocol::MatchCandidate {
                    line_range: r,
                    similarity: None,
                    preview: text::preview(&text[ix.start_of(r.start)..ix.end_of(r.end)], 3, 300),
                }
            };
            match spans.len() {
                0 => {
                    let similar =
                        symbol::similar_names(qualified_name, &locator.names(rel, text.as_bytes()));
                    let hint = if similar.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; similar: {}",
                            similar.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
                        )
                    };
                    Err(Error::NoMatch {
                        path: rel.to_owned(),
                        edit: index,
                        message: format!(
                            "no definition named {qualified_name:?}{}{hint}",
                            match line_range {
                                Some(r) => format!(" starting within lines {r}"),
                                None => String::new(),
                            }
                        ),
                        candidates: Vec::new(),
                        similar_names: similar,
                    })
                }
                1 => {
                    let sp = symbol::splice(text, spans[0], *part, replacement_string, eol)
                        .map_err(|e| bad(index, format!("{qualified_name}: {e}")))?;
                    let r = ix.lines_of(sp.start, sp.end.max(sp.start));
                    Ok(vec![Splice {
                        start: sp.start,
                        end: sp.end,
                        text: sp.text,
                        index,
                        line_range: Some(r),
                        normalizations: sp.normalizations,
                    }])
                }
                n => Err(Error::AmbiguousMatch {
                    path: rel.to_owned(),
                    edit: index,
                    message: format!(
                        "{n} definitions are named {qualified_name:?}; pick one with lineRange"
                    ),
                    candidates: spans.iter().map(cand).collect(),
                }),
            }
        }
        EditOp::Create { .. } | EditOp::Delete { .. } | EditOp::Rename { .. } => Ok(Vec::new()),
        other => Err(bad(index, format!("`{}` is not supported by this engine", other.name()))),
    }
}

fn check_range(index: usize, r: Option<LineRange>, lines: u32) -> Result<()> {
    match r {
        Some(r) if r.end > lines => {
            Err(bad(index, format!("lineRange {r} is past the end of the file ({lines} lines)")))
        }
        _ => Ok(()),
    }
}

/// Directories that must exist before the new files are written, parents first.
fn dirs_to_create(root: &Path, slots: &[Slot]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for s in slots.iter().filter(|s| s.before.is_none() && s.after.is_some()) {
        let parts: Vec<&str> = s.rel.split('/').collect();
        let mut rel = String::new();
        for part in &parts[..parts.len() - 1] {
            if !rel.is_empty() {
                rel.push('/');
            }
            rel.push_str(part);
            match std::fs::symlink_metadata(root.join(&rel)) {
                Ok(m) if m.is_dir() => {}
                // Symlinks on the way were resolved by the jail; what remains is real.
                Ok(_) => {
                    return Err(Error::InvalidArgument {
                        edit: None,
                        message: format!("cannot create {}: {rel} is not a directory", s.rel),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    if !out.contains(&rel) {
                        out.push(rel.clone());
                    }
                }
                Err(e) => return Err(Error::io(rel, e)),
            }
        }
    }
    Ok(out)
}
