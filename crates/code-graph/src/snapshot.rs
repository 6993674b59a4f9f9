//! The project in memory with its graphs, and their serialized form.
//!
//! Building a snapshot (loading every file's definitions and references, resolving
//! imports and references, ranking) is most of a one-shot query's time and memory.
//! It is a function of the index's content and the manifests, so it is built once
//! per [`SnapshotInputs::key`] and kept serialized: [`Snapshot::encode`] /
//! [`Snapshot::decode`]. A snapshot holds no references once built (only the
//! build reads them), so neither form has them. Where the bytes live is the
//! caller's business (the engine owns `.ironbees/`).

use std::{
    io::{Seek, SeekFrom, Write},
    ops::Range,
    sync::{Arc, OnceLock},
};

use code_index::{Index, Project, Result};
use serde::Deserialize;

use crate::{
    Derivation,
    graph::{Graphs, SharedBytes},
    impact::ImpactGraph,
    rank::pagerank,
    resolve::{MANIFEST_NAMES, Manifest, in_node_modules},
};

/// The project in memory with its graphs: what retrieval computes from.
pub struct Snapshot {
    pub project: Project,
    pub graphs: Graphs,
    /// PageRank of every file over the file graph (sums to 1).
    pub file_rank: Vec<f64>,
    /// The sure dependencies impact, roles and reports count dependents over, built
    /// on first use.
    impact_graph: OnceLock<ImpactGraph>,
}

/// What a snapshot is built from, read cheaply: the manifests and a key of the
/// index's content and theirs.
pub struct SnapshotInputs {
    /// Of the index's content and the manifests: a snapshot stored under this
    /// key is the one to build.
    pub key: [u8; 32],
    /// Of the manifests alone: a snapshot stored under this base (and another
    /// key) can be updated for the files that changed ([`Snapshot::derive`]).
    pub base: [u8; 32],
    manifests: Vec<Manifest>,
}

/// A stored snapshot, as [`Snapshot::decode`] found it.
pub enum Decoded {
    /// Stored under the key asked for: the snapshot to use.
    Current(Snapshot),
    /// Stored under the same base and another key: one to update.
    Earlier(Snapshot),
}

/// The start of an encoded snapshot. The engine's key also names the build of
/// ironbees, which keeps another build's layout out; a new layout still gets a
/// new magic.
const MAGIC: &[u8; 8] = b"IBSNAP03";

/// Writes one section: a header left blank, the value, then the header filled
/// in with the length and CRC-32 of what was written.
fn write_section<W: Write + Seek>(w: &mut W, value: &impl serde::Serialize) -> std::io::Result<()> {
    write_section_with(w, |out| {
        postcard::to_io(value, out).map(|_| ()).map_err(std::io::Error::other)
    })
}

/// [`write_section`] of what `body` writes.
fn write_section_with<W: Write + Seek, T>(
    w: &mut W,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<T>,
) -> std::io::Result<T> {
    struct Counting<'a, W> {
        inner: &'a mut W,
        crc: crc32fast::Hasher,
        len: u64,
    }
    impl<W: Write> Write for Counting<'_, W> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = self.inner.write(buf)?;
            self.crc.update(&buf[..n]);
            self.len += n as u64;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.inner.flush()
        }
    }
    let header = w.stream_position()?;
    w.write_all(&[0; 12])?;
    // Buffered before the CRC: postcard writes a field at a time, and a CRC
    // update per few bytes was most of the cost of storing a snapshot.
    let counting = Counting { inner: &mut *w, crc: crc32fast::Hasher::new(), len: 0 };
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, counting);
    let out = body(&mut buffered)?;
    let c = buffered.into_inner().map_err(|e| e.into_error())?;
    let (len, crc) = (c.len, c.crc.finalize());
    let end = w.stream_position()?;
    w.seek(SeekFrom::Start(header))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&crc.to_le_bytes())?;
    w.seek(SeekFrom::Start(end))?;
    Ok(out)
}

/// The range of the section that starts at `at` (its length, its CRC-32, its
/// bytes), when the bytes are all there and match the CRC. The bytes are checked
/// in chunks, each given to `release` once checked.
fn section(all: &[u8], at: usize, release: &dyn Fn(Range<usize>)) -> Option<Range<usize>> {
    let (len, rest) = all.get(at..)?.split_first_chunk::<8>()?;
    let (crc, rest) = rest.split_first_chunk::<4>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    if len > rest.len() {
        return None;
    }
    let body = at + 12..at + 12 + len;
    let mut h = crc32fast::Hasher::new();
    for start in body.clone().step_by(CHUNK) {
        let chunk = start..(start + CHUNK).min(body.end);
        h.update(&all[chunk.clone()]);
        release(chunk);
    }
    (h.finalize() == u32::from_le_bytes(*crc)).then_some(body)
}

/// How much of a section is checked, or decoded, before its pages are released.
pub(crate) const CHUNK: usize = 8 << 20;

/// postcard's slice flavor, telling `release` of every [`CHUNK`] it has read
/// (as offsets from `base`): decoding never goes back.
pub(crate) struct Releasing<'de, 'r> {
    bytes: &'de [u8],
    pos: usize,
    /// Everything before this has been released.
    released: usize,
    base: usize,
    release: &'r dyn Fn(Range<usize>),
}

impl<'de, 'r> Releasing<'de, 'r> {
    pub(crate) fn new(bytes: &'de [u8], base: usize, release: &'r dyn Fn(Range<usize>)) -> Self {
        Releasing { bytes, pos: 0, released: 0, base, release }
    }

    fn advanced(&mut self) {
        if self.pos - self.released >= CHUNK {
            (self.release)(self.base + self.released..self.base + self.pos);
            self.released = self.pos;
        }
    }
}

impl<'de, 'r: 'de> postcard::de_flavors::Flavor<'de> for Releasing<'de, 'r> {
    type Remainder = &'de [u8];
    type Source = &'de [u8];

    fn pop(&mut self) -> postcard::Result<u8> {
        let b = *self.bytes.get(self.pos).ok_or(postcard::Error::DeserializeUnexpectedEnd)?;
        self.pos += 1;
        self.advanced();
        Ok(b)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.bytes.len() - self.pos)
    }

    fn try_take_n(&mut self, ct: usize) -> postcard::Result<&'de [u8]> {
        let end = self.pos.checked_add(ct).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(postcard::Error::DeserializeUnexpectedEnd)?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        self.advanced();
        Ok(out)
    }

    fn finalize(self) -> postcard::Result<&'de [u8]> {
        Ok(&self.bytes[self.pos..])
    }
}

impl Snapshot {
    /// Everything in memory: files, definitions, references, resolved imports,
    /// graphs and the global file ranking. The input of retrieval.
    pub fn load(index: &Index) -> Result<Snapshot> {
        let inputs = Snapshot::inputs(index)?;
        Snapshot::load_with(index, inputs)
    }

    /// The key of the snapshot [`Snapshot::load`] would build now, and the
    /// manifests it would read, without building it.
    pub fn inputs(index: &Index) -> Result<SnapshotInputs> {
        let manifests = manifests(index)?;
        let mut h = stdx::ContentHasher::new();
        h.update(MAGIC);
        for m in &manifests {
            for part in [m.path.as_bytes(), m.text.as_bytes()] {
                h.update(&(part.len() as u64).to_le_bytes());
                h.update(part);
            }
        }
        let base = h.finish();
        let mut h = stdx::ContentHasher::new();
        h.update(&base);
        h.update(&index.content_key()?);
        Ok(SnapshotInputs { key: h.finish(), base, manifests })
    }

    /// [`Snapshot::load`] with the inputs already read.
    pub fn load_with(index: &Index, inputs: SnapshotInputs) -> Result<Snapshot> {
        Ok(Snapshot::build(index.project()?, inputs.manifests))
    }

    /// The snapshot of `inputs`: `earlier` (stored under the same base, see
    /// [`Decoded::Earlier`]) updated for the files that changed since, or
    /// built from scratch when there is none or too much changed.
    pub fn derive(
        index: &Index,
        inputs: SnapshotInputs,
        earlier: Option<Snapshot>,
    ) -> Result<(Snapshot, Derivation)> {
        if let Some(earlier) = earlier
            && let Some(updated) = crate::update::update(earlier, index, &inputs.manifests)?
        {
            return Ok(updated);
        }
        Ok((Snapshot::load_with(index, inputs)?, Derivation::Built))
    }

    /// The snapshot as bytes, under `key` and `base` (see [`Snapshot::write_to`]).
    pub fn encode(&self, key: &[u8; 32], base: &[u8; 32]) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        self.write_to(key, base, &mut out).expect("writing to memory cannot fail");
        out.into_inner()
    }

    /// Writes the snapshot under `key` and `base` (see [`Snapshot::decode`]),
    /// streamed: no copy of it is held in memory. Layout: magic, key, base,
    /// then three sections, each its length (u64 LE), its CRC-32 (u32 LE) and
    /// its postcard bytes: the project, graphs and ranks; the reference edges
    /// (decoded when first used); what each file's resolution looked up (read
    /// only by an update).
    pub fn write_to<W: Write + Seek>(
        &self,
        key: &[u8; 32],
        base: &[u8; 32],
        w: &mut W,
    ) -> std::io::Result<()> {
        w.write_all(MAGIC)?;
        w.write_all(key)?;
        w.write_all(base)?;
        write_section(w, &(&self.project, &self.graphs, &self.file_rank))?;
        let files = self.project.files.len();
        let aid = write_section_with(w, |out| self.graphs.write_edges(files, out))?;
        write_section(w, &aid)
    }

    /// A snapshot encoded under `key` ([`Decoded::Current`]) or, failing that,
    /// under `base` ([`Decoded::Earlier`]); `None` when the bytes are another
    /// base's, another layout's, cut short or damaged (the caller builds it
    /// again).
    ///
    /// The reference edges and lookups stay in `bytes` until first used; the
    /// ranges read are handed back as decoding moves on (`StoredBytes::release`).
    pub fn decode(bytes: SharedBytes, key: &[u8; 32], base: &[u8; 32]) -> Option<Decoded> {
        let stored = Arc::clone(&bytes);
        let release = &|r: Range<usize>| stored.release(r);
        let all: &[u8] = bytes.bytes();
        let rest = all.strip_prefix(MAGIC.as_slice())?;
        let (stored_key, rest) = rest.split_first_chunk::<32>()?;
        let rest = rest.strip_prefix(base.as_slice())?;
        let start = all.len() - rest.len();
        let body = section(all, start, &|_| {})?;
        let edges = section(all, body.end, release)?;
        let asked = section(all, edges.end, release)?;
        if asked.end != all.len() {
            return None;
        }
        // Released as it is read: the bytes and what they decode to would
        // otherwise both be resident at the end (tens of MiB on a large tree).
        let mut de = postcard::Deserializer::from_flavor(Releasing::new(
            &all[body.clone()],
            body.start,
            release,
        ));
        let decoded = <(Project, Graphs, Vec<f64>)>::deserialize(&mut de);
        release(body);
        let (project, graphs, file_rank) = decoded.ok()?;
        if !de.finalize().ok()?.is_empty()
            || file_rank.len() != project.files.len()
            || graphs.file_out.len() != project.files.len()
        {
            return None;
        }
        let current = stored_key == key;
        let graphs = graphs.with_encoded_parts(bytes, edges, asked);
        let snapshot = Snapshot::new(project, graphs, file_rank);
        Some(if current { Decoded::Current(snapshot) } else { Decoded::Earlier(snapshot) })
    }

    /// Drops what each file's resolution looked up (only an update of this
    /// snapshot reads it, and it reads it from the stored bytes): a writer keeps
    /// it no longer than it takes to store it.
    pub fn forget_lookups(&self) {
        self.graphs.forget_lookups();
    }

    pub(crate) fn new(project: Project, graphs: Graphs, file_rank: Vec<f64>) -> Snapshot {
        Snapshot { project, graphs, file_rank, impact_graph: OnceLock::new() }
    }

    /// The graphs of a project in hand (text fixtures, tests).
    pub fn build(mut project: Project, manifests: Vec<Manifest>) -> Snapshot {
        let graphs = Graphs::build(&project, &manifests);
        // Only the graph build reads the references: a snapshot holds none, built
        // or decoded alike (they were most of a long-running server's memory).
        for f in &mut project.files {
            f.refs = Vec::new();
        }
        let file_rank = pagerank(&graphs.file_out, None, 0.85);
        Snapshot::new(project, graphs, file_rank)
    }

    pub(crate) fn impact_graph(&self) -> &ImpactGraph {
        self.impact_graph.get_or_init(|| ImpactGraph::build(self))
    }
}

/// The small non-code files import resolution reads (Cargo.toml, go.mod,
/// tsconfig.json, jsconfig.json, package.json), found by the walk and read now.
fn manifests(index: &Index) -> Result<Vec<Manifest>> {
    let mut out = Vec::new();
    for path in index.unindexed_paths()? {
        let name = path.rsplit('/').next().unwrap_or(&path);
        // Installed packages (when no ignore file hides them) would be read on
        // every snapshot, thousands of them, for nothing.
        if !MANIFEST_NAMES.contains(&name) || in_node_modules(&path) {
            continue;
        }
        if let Ok(stdx::ReadLimited::Complete(bytes)) =
            stdx::read_to_end_limited(&index.root().join(&path), 1 << 20)
            && let Ok(text) = String::from_utf8(bytes)
        {
            out.push(Manifest { path, text });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::{Decoded, Snapshot, fixture::fixture};

    const BASE: [u8; 32] = [9; 32];

    /// The snapshot stored under `key`, and only that.
    fn decode(bytes: Vec<u8>, key: &[u8; 32]) -> Option<Snapshot> {
        match Snapshot::decode(Arc::new(bytes), key, &BASE)? {
            Decoded::Current(s) => Some(s),
            Decoded::Earlier(_) => None,
        }
    }

    fn sample() -> Snapshot {
        fixture(
            r#"
//- src/cart.py
from src.prices import total

class Cart:
    def checkout(self, items):
        """Charges the customer."""
        return total(items)
//- src/prices.py
def total(items):
    return sum(items) - discount(items)

def discount(items):
    return 0
//- web/app.ts
import { render } from "./view";
export function main() { render(); }
//- web/view.ts
export function render() {}
"#,
        )
        .snapshot
    }

    /// Everything comes back (a snapshot holds no references: only the build reads them): the
    /// same names, files, definitions, imports, resolved imports, edges, call
    /// indexes and ranks.
    #[test]
    fn a_decoded_snapshot_is_the_encoded_one_without_references() {
        let snap = sample();
        let key = [7u8; 32];
        let back = decode(snap.encode(&key, &BASE), &key).expect("decodes");
        let (a, b) = (&snap.project, &back.project);
        // Only the names definitions carry come back, renumbered.
        assert!(b.names.len() < a.names.len(), "{} names", b.names.len());
        assert_eq!(a.files.len(), b.files.len());
        for (fa, fb) in a.files.iter().zip(&b.files) {
            assert_eq!(fa.path, fb.path);
            assert_eq!(b.file_id(&fb.path), a.file_id(&fa.path));
            let unnamed = |defs: &[code_index::Def]| {
                defs.iter()
                    .map(|d| code_index::Def { name: 0, ..d.clone() })
                    .map(|d| format!("{d:?}"))
                    .collect::<Vec<_>>()
            };
            assert_eq!(unnamed(&fa.defs), unnamed(&fb.defs));
            assert_eq!(format!("{:?}", fa.imports), format!("{:?}", fb.imports));
            assert!(fa.refs.is_empty() && fb.refs.is_empty());
        }
        for (fa, fb) in a.files.iter().zip(&b.files) {
            for (da, db) in fa.defs.iter().zip(&fb.defs) {
                assert_eq!(a.names.name(da.name), b.names.name(db.name));
                assert_eq!(
                    a.defs_named(da.name),
                    b.defs_named(b.names.get(a.names.name(da.name)).unwrap())
                );
            }
        }
        assert!(a.names.get("sum").is_some() && b.names.get("sum").is_none());
        assert_eq!(snap.graphs.symbol_edges(), back.graphs.symbol_edges());
        assert_eq!(snap.graphs.imports, back.graphs.imports);
        assert_eq!(snap.graphs.file_out, back.graphs.file_out);
        assert_eq!(snap.graphs.file_in, back.graphs.file_in);
        assert_eq!(snap.file_rank, back.file_rank);
        for f in 0..a.files.len() as u32 {
            for ord in 0..a.files[f as usize].defs.len() as u32 {
                let d = code_index::DefId { file: f, ord };
                let callers = |s: &Snapshot| s.graphs.callers(d).copied().collect::<Vec<_>>();
                let callees = |s: &Snapshot| s.graphs.callees(d).copied().collect::<Vec<_>>();
                assert_eq!(callers(&snap), callers(&back));
                assert_eq!(callees(&snap), callees(&back));
            }
        }
        assert!(snap.graphs.symbol_edges().len() >= 3, "{:?}", snap.graphs.symbol_edges());
    }

    /// Another key's bytes are an earlier snapshot of the same base (one to
    /// update), another base's or layout's, or damaged bytes are not a snapshot.
    #[test]
    fn only_whole_bytes_under_the_same_key_decode() {
        let snap = sample();
        let bytes = snap.encode(&[1; 32], &BASE);
        let shared = |b: &Vec<u8>| Arc::new(b.clone());
        assert!(matches!(
            Snapshot::decode(shared(&bytes), &[2; 32], &BASE),
            Some(Decoded::Earlier(_))
        ));
        assert!(Snapshot::decode(shared(&bytes), &[1; 32], &[8; 32]).is_none());
        assert!(decode(bytes.clone(), &[2; 32]).is_none());
        for cut in [0, 8, 40, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(bytes[..cut].to_vec(), &[1; 32]).is_none(), "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        let mid = bytes.len() / 2;
        flipped[mid] ^= 0x10;
        assert!(decode(flipped, &[1; 32]).is_none(), "a flipped bit");
        // The edges and lookups, decoded only when used, are checked when the
        // snapshot is.
        let asked_len = {
            let aid =
                snap.graphs.write_edges(snap.project.files.len(), &mut std::io::sink()).unwrap();
            postcard::to_allocvec(&aid).unwrap().len() + 12
        };
        let edges_end = bytes.len() - asked_len;
        for at in [edges_end - 1, bytes.len() - 1] {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x01;
            assert!(decode(flipped, &[1; 32]).is_none(), "a flipped bit at {at}");
        }
        let mut other_layout = bytes.clone();
        other_layout[7] ^= 1;
        assert!(decode(other_layout, &[1; 32]).is_none());
        assert!(decode(bytes, &[1; 32]).is_some());
    }
}
