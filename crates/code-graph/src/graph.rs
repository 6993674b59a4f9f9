//! Dependency, reference and call graphs.
//!
//! Built in memory from a [`Project`] and its resolved imports:
//!
//! - **symbol edges**: every reference resolved to the definitions it may mean, in
//!   order of confidence: the enclosing scope (a method of the same class), the
//!   receiver's stated type (`linter: PyLinter` … `linter.check()`), the same
//!   file, a name the file imports (or any name of a file it imports), the unique
//!   definition of that name in the project, or, failing all, every definition of the
//!   name with a weight split between them (ambiguous; kept, but weak);
//! - **call edges**: the symbol edges of call references, between definitions;
//! - **file edges**: imports plus references to names defined in another file, each
//!   name's contribution damped (`sqrt` of its count, less for short, private or
//!   dunder names), as Aider's repository map does.

use std::{
    cell::RefCell,
    collections::VecDeque,
    ops::Range,
    sync::{Arc, OnceLock},
};

use protocol::SymbolKind;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde::{Deserialize, Serialize};

use code_index::{
    Def, DefId, FileId, Language, NameId, Project, RefKind, is_js_global, parameter_list,
    return_type,
};

use crate::{
    resolve::{ImportTarget, Manifest, ResolvedImport, RustCrates, resolve_imports},
    snapshot::{CHUNK, Releasing},
    testfiles::is_test_path,
};
pub use protocol::Resolution;

/// How much a resolution counts in the graphs (a method, since `Resolution` is
/// protocol's).
trait Weight {
    fn weight(self) -> f64;
}

impl Weight for Resolution {
    fn weight(self) -> f64 {
        match self {
            Resolution::Local => 1.0,
            Resolution::Receiver => 1.0,
            Resolution::SameFile => 1.0,
            Resolution::Imported => 1.0,
            Resolution::Global => 0.7,
            Resolution::Ambiguous => 0.3,
            // Not used for guesses, which carry their name resolution's weight.
            Resolution::NameOnly => 0.3,
        }
    }
}

/// A reference from a definition (or a file's top level) to a definition.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SymbolEdge {
    pub from_file: FileId,
    /// The enclosing definition of the reference; None at a file's top level.
    pub from: Option<DefId>,
    pub to: DefId,
    pub kind: RefKind,
    pub resolution: Resolution,
    pub weight: f64,
    pub line: u32,
}

/// All graphs of a project.
///
/// Serialized without the reference edges, which a stored snapshot keeps as
/// bytes beside the rest and decodes on first use ([`Graphs::symbol_edges`]):
/// they are the largest part, and localization never reads them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Graphs {
    pub imports: Vec<Vec<ResolvedImport>>,
    /// Weighted file adjacency (both directions), import and reference edges merged.
    pub file_out: Vec<Vec<(FileId, f64)>>,
    pub file_in: Vec<Vec<(FileId, f64)>>,
    /// Files each file imports (resolved imports only).
    pub file_imports: Vec<Vec<FileId>>,
    /// External modules each file imports.
    pub externals: Vec<Vec<String>>,
    #[serde(skip)]
    edges: Stored<EdgeIndex>,
    /// What each file's resolution looked up (an update's input only).
    #[serde(skip)]
    asked: std::sync::Mutex<Asked>,
}

/// What each file's resolution looked up (and, once stored, where each file's
/// edges are among the stored bytes): built (kept until stored), still encoded
/// in a stored snapshot, or let go.
#[derive(Default)]
enum Asked {
    #[default]
    Gone,
    Built(Arc<AskedNames>, Option<Arc<EdgeRuns>>),
    Encoded(SharedBytes, Range<usize>),
}

impl std::fmt::Debug for Asked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Asked::Gone => f.write_str("Gone"),
            Asked::Built(a, _) => write!(f, "Built({} files)", a.files()),
            Asked::Encoded(_, r) => write!(f, "Encoded({r:?})"),
        }
    }
}

/// Where each file's edges are in the stored edge list: how many, and how many
/// bytes (postcard's encoding of `Vec<SymbolEdge>`: the count, then the edges
/// in file order). An update that renumbers nothing copies kept files' edges
/// as bytes.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct EdgeRuns {
    pub(crate) counts: Vec<u32>,
    pub(crate) lens: Vec<u32>,
}

/// The third section of a stored snapshot: what an update reads.
#[derive(Default)]
struct UpdateAid {
    asked: Arc<AskedNames>,
    runs: Arc<EdgeRuns>,
}

impl Serialize for UpdateAid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (&*self.asked, &*self.runs).serialize(s)
    }
}

impl<'de> Deserialize<'de> for UpdateAid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<UpdateAid, D::Error> {
        let (asked, runs) = <(AskedNames, EdgeRuns)>::deserialize(d)?;
        Ok(UpdateAid { asked: Arc::new(asked), runs: Arc::new(runs) })
    }
}

/// Appends the postcard bytes of `value` (an edge, a count) to `out`.
pub(crate) fn encode_into(out: &mut Vec<u8>, value: &impl Serialize) {
    let mut buf = [0u8; 64];
    let bytes = postcard::to_slice(value, &mut buf).expect("an edge or a count fits 64 bytes");
    out.extend_from_slice(bytes);
}

/// A part of the graphs that a stored snapshot keeps as bytes beside the rest:
/// built, or still encoded.
struct Stored<T> {
    built: OnceLock<T>,
    /// Where its postcard bytes are (a stored snapshot, often memory-mapped, so
    /// untouched pages cost nothing), checked by the caller (a CRC).
    encoded: Option<(SharedBytes, Range<usize>)>,
}

impl<T> Default for Stored<T> {
    fn default() -> Self {
        Stored { built: OnceLock::new(), encoded: None }
    }
}

impl<T: Default> Stored<T> {
    fn built(value: T) -> Stored<T> {
        Stored { built: OnceLock::from(value), encoded: None }
    }

    fn encoded(bytes: SharedBytes, range: Range<usize>) -> Stored<T> {
        Stored { built: OnceLock::new(), encoded: Some((bytes, range)) }
    }

    /// The value, decoded from its bytes on first use by `decode`, once and
    /// for good: the pages go back to the owner of the bytes as decoding moves
    /// on, and all of them at the end.
    fn get(&self, decode: impl FnOnce(Releasing<'_, '_>) -> T) -> &T {
        self.built.get_or_init(|| {
            // Neither built nor stored: graphs of nothing (`Graphs::default()`).
            let Some((stored, range)) = &self.encoded else {
                return T::default();
            };
            let release = |r| stored.release(r);
            let value =
                decode(Releasing::new(&stored.bytes()[range.clone()], range.start, &release));
            stored.release(range.clone());
            value
        })
    }

    /// The stored bytes, while the value is not decoded.
    fn still_encoded(&self) -> Option<(&SharedBytes, &Range<usize>)> {
        match (self.built.get(), &self.encoded) {
            (None, Some((stored, range))) => Some((stored, range)),
            _ => None,
        }
    }
}

/// Bytes shared with the one who read them (a memory-mapped file, a buffer).
pub type SharedBytes = Arc<dyn StoredBytes>;

/// Where a stored snapshot's bytes are.
pub trait StoredBytes: Send + Sync {
    fn bytes(&self) -> &[u8];

    /// `range` has been read and will not be read again soon: a memory map may
    /// hand those pages back (they are read again from the file if touched).
    fn release(&self, _range: Range<usize>) {}
}

impl StoredBytes for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl<T> std::fmt::Debug for Stored<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stored")
            .field("built", &self.built.get().is_some())
            .field("encoded", &self.encoded.as_ref().map(|(_, r)| r.clone()))
            .finish()
    }
}

#[derive(Debug, Default)]
struct EdgeIndex {
    list: Vec<SymbolEdge>,
    /// Built on first use: writing a snapshot, or ranking files, needs none.
    calls: OnceLock<(CallIndex, CallIndex)>,
    /// Every edge by the definition it reaches, built on first use.
    into: OnceLock<CallIndex>,
}

impl EdgeIndex {
    fn new(list: Vec<SymbolEdge>) -> EdgeIndex {
        EdgeIndex { list, calls: OnceLock::new(), into: OnceLock::new() }
    }

    /// (calls out of, calls into) each definition.
    fn calls(&self) -> &(CallIndex, CallIndex) {
        self.calls.get_or_init(|| call_indexes(&self.list))
    }

    fn into(&self) -> &CallIndex {
        self.into.get_or_init(|| {
            let mut into: CallIndex = HashMap::default();
            for (i, e) in self.list.iter().enumerate() {
                into.entry(e.to).or_default().push(i);
            }
            into
        })
    }
}

type CallIndex = HashMap<DefId, Vec<usize>>;

/// A decoded edge list, allocated once at its final size: serde's own `Vec`
/// grows by doubling from a cautious guess, and for millions of edges the copies
/// and fresh pages were a fifth of a stored snapshot's decoding.
struct EdgeList(Vec<SymbolEdge>);

impl<'de> Deserialize<'de> for EdgeList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<EdgeList, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = EdgeList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of edges")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<EdgeList, A::Error> {
                // Trusted length (checked bytes), bounded anyway.
                let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 26));
                while let Some(e) = seq.next_element()? {
                    list.push(e);
                }
                Ok(EdgeList(list))
            }
        }
        d.deserialize_seq(Visit)
    }
}

/// Call edges by the definition they leave and by the one they reach, as indexes
/// into `edges`.
fn call_indexes(edges: &[SymbolEdge]) -> (CallIndex, CallIndex) {
    let mut calls_out: CallIndex = HashMap::default();
    let mut calls_in: CallIndex = HashMap::default();
    for (i, e) in edges.iter().enumerate() {
        if !e.kind.is_call() {
            continue;
        }
        if let Some(from) = e.from {
            calls_out.entry(from).or_default().push(i);
        }
        calls_in.entry(e.to).or_default().push(i);
    }
    (calls_out, calls_in)
}

/// The definitions a reference may mean, with how and how strongly.
type Resolved = Vec<(DefId, Resolution, f64)>;

/// Names too generic to tie files together when they are ambiguous.
const MAX_CANDIDATES: usize = 12;

impl Graphs {
    pub fn build(project: &Project, manifests: &[Manifest]) -> Graphs {
        let imports = resolve_imports(project, manifests);
        let n = project.files.len();
        let resolver = Resolver::new(project, manifests, n);
        let mut file_imports = Vec::with_capacity(n);
        let mut externals = Vec::with_capacity(n);
        let mut rows = Vec::with_capacity(n);
        let mut asked = AskedBuilder::default();
        let mut symbol_edges = Vec::new();
        resolver.resolve_files(0..n as FileId, &imports, |_, r| {
            symbol_edges.extend(r.edges);
            asked.push(r.asked);
            rows.push(r.row);
            file_imports.push(r.files);
            externals.push(r.externals);
        });
        Graphs::assemble(imports, rows, file_imports, externals, symbol_edges, asked.finish())
    }

    /// [`Graphs::assemble`] with the edges as bytes (postcard's
    /// `Vec<SymbolEdge>`) and where each file's are: an update that copied
    /// them as bytes keeps them so, decoded only if a call needs them.
    pub(crate) fn assemble_encoded(
        imports: Vec<Vec<ResolvedImport>>,
        file_out: Vec<Vec<(FileId, f64)>>,
        file_imports: Vec<Vec<FileId>>,
        externals: Vec<Vec<String>>,
        edges: Vec<u8>,
        runs: EdgeRuns,
        asked: AskedNames,
    ) -> Graphs {
        let len = edges.len();
        let edges = Stored::encoded(Arc::new(edges), 0..len);
        let asked = Asked::Built(Arc::new(asked), Some(Arc::new(runs)));
        Graphs::from_parts(imports, file_out, file_imports, externals, edges, asked)
    }

    /// Graphs from their per-file parts: `file_in` is `file_out` turned around.
    pub(crate) fn assemble(
        imports: Vec<Vec<ResolvedImport>>,
        file_out: Vec<Vec<(FileId, f64)>>,
        file_imports: Vec<Vec<FileId>>,
        externals: Vec<Vec<String>>,
        symbol_edges: Vec<SymbolEdge>,
        asked: AskedNames,
    ) -> Graphs {
        let edges = Stored::built(EdgeIndex::new(symbol_edges));
        let asked = Asked::Built(Arc::new(asked), None);
        Graphs::from_parts(imports, file_out, file_imports, externals, edges, asked)
    }

    fn from_parts(
        imports: Vec<Vec<ResolvedImport>>,
        file_out: Vec<Vec<(FileId, f64)>>,
        file_imports: Vec<Vec<FileId>>,
        externals: Vec<Vec<String>>,
        edges: Stored<EdgeIndex>,
        asked: Asked,
    ) -> Graphs {
        let mut file_in = vec![Vec::new(); file_out.len()];
        for (from, row) in file_out.iter().enumerate() {
            for &(to, w) in row {
                file_in[to as usize].push((from as FileId, w));
            }
        }
        Graphs {
            imports,
            file_out,
            file_in,
            file_imports,
            externals,
            edges,
            asked: std::sync::Mutex::new(asked),
        }
    }

    /// Every reference edge (decoded on first use in a stored snapshot).
    pub fn symbol_edges(&self) -> &[SymbolEdge] {
        &self.edge_index().list
    }

    fn edge_index(&self) -> &EdgeIndex {
        // The bytes were checked whole (length and CRC) before they were kept,
        // and written by `Snapshot::write_to` of this very build (the stored
        // snapshot's key names the build): failing here is a bug, not damage.
        self.edges.get(|flavor| {
            let mut de = postcard::Deserializer::from_flavor(flavor);
            EdgeIndex::new(EdgeList::deserialize(&mut de).expect("stored edges decode").0)
        })
    }

    /// Calls `each` with every reference edge in order: from the list when it
    /// is decoded already, else decoding them one by one from the stored bytes
    /// without keeping them (a pass over all edges, in a one-shot process, would
    /// otherwise hold hundreds of MiB on a large tree for nothing).
    pub fn for_each_edge(&self, mut each: impl FnMut(&SymbolEdge)) {
        match self.edges.still_encoded() {
            Some((stored, range)) => {
                let bytes = &stored.bytes()[range.clone()];
                let (n, mut rest) =
                    postcard::take_from_bytes::<usize>(bytes).expect("stored edges decode");
                let mut released = 0;
                for _ in 0..n {
                    let (e, more) =
                        postcard::take_from_bytes::<SymbolEdge>(rest).expect("stored edges decode");
                    each(&e);
                    rest = more;
                    // Read once: the pages behind go back as the pass moves on.
                    let read = bytes.len() - rest.len();
                    if read - released >= CHUNK {
                        stored.release(range.start + released..range.start + read);
                        released = read;
                    }
                }
                stored.release(range.start + released..range.end);
            }
            None => self.symbol_edges().iter().for_each(each),
        }
    }

    /// How many reference edges there are, without decoding them.
    pub(crate) fn edge_count(&self) -> usize {
        match self.encoded_edge_bytes() {
            Some(bytes) => postcard::take_from_bytes::<usize>(bytes).map_or(0, |(n, _)| n),
            None => self.symbol_edges().len(),
        }
    }

    /// Lets go of built lookups (once stored, an update reads them from the
    /// stored bytes).
    pub(crate) fn forget_lookups(&self) {
        let mut asked = self.asked.lock().unwrap_or_else(|p| p.into_inner());
        if let Asked::Built(..) = *asked {
            *asked = Asked::Gone;
        }
    }

    /// The lookups and, when known, the edge runs (see [`EdgeRuns`]): decoded
    /// from stored bytes on every call (only an update, or storing, reads
    /// them, once).
    pub(crate) fn aid(&self) -> (Arc<AskedNames>, Option<Arc<EdgeRuns>>) {
        match &*self.asked.lock().unwrap_or_else(|p| p.into_inner()) {
            Asked::Gone => (Arc::default(), None),
            Asked::Built(a, runs) => (Arc::clone(a), runs.clone()),
            Asked::Encoded(bytes, range) => {
                let aid: UpdateAid = postcard::from_bytes(&bytes.bytes()[range.clone()])
                    .expect("stored lookups decode");
                (aid.asked, Some(aid.runs))
            }
        }
    }

    /// The stored edge list's bytes (count, then edges), while the edges are
    /// still encoded ([`Graphs::aid`] says where each file's are).
    pub(crate) fn encoded_edge_bytes(&self) -> Option<&[u8]> {
        self.edges.still_encoded().map(|(stored, range)| &stored.bytes()[range.clone()])
    }

    /// Writes the reference edges as postcard's `Vec<SymbolEdge>` (bytes
    /// copied as they are when still encoded), then the third section's
    /// value: the lookups and where each of `files` files' edges went.
    pub(crate) fn write_edges(
        &self,
        files: usize,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<impl Serialize + use<>> {
        let (asked, runs) = self.aid();
        if let (Some(runs), Some(bytes)) = (runs, self.encoded_edge_bytes()) {
            out.write_all(bytes)?;
            return Ok(UpdateAid { asked, runs });
        }
        let edges = self.symbol_edges();
        let mut runs = EdgeRuns { counts: vec![0; files], lens: vec![0; files] };
        let mut buf = Vec::with_capacity(1 << 16);
        encode_into(&mut buf, &edges.len());
        for e in edges {
            let before = buf.len();
            encode_into(&mut buf, e);
            let f = e.from_file as usize;
            runs.counts[f] += 1;
            runs.lens[f] += (buf.len() - before) as u32;
            if buf.len() >= 1 << 16 {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
        out.write_all(&buf)?;
        Ok(UpdateAid { asked, runs: Arc::new(runs) })
    }

    /// These graphs with their reference edges and lookups as
    /// `Snapshot::write_to` wrote them (at those ranges of `bytes`), decoded
    /// when first asked for.
    pub(crate) fn with_encoded_parts(
        mut self,
        bytes: SharedBytes,
        edges: Range<usize>,
        asked: Range<usize>,
    ) -> Graphs {
        self.edges = Stored::encoded(Arc::clone(&bytes), edges);
        self.asked = std::sync::Mutex::new(Asked::Encoded(bytes, asked));
        self
    }

    /// Call edges leaving a definition.
    pub fn callees(&self, def: DefId) -> impl Iterator<Item = &SymbolEdge> {
        let e = self.edge_index();
        e.calls().0.get(&def).into_iter().flatten().map(|&i| &e.list[i])
    }

    /// Call edges arriving at a definition.
    pub fn callers(&self, def: DefId) -> impl Iterator<Item = &SymbolEdge> {
        let e = self.edge_index();
        e.calls().1.get(&def).into_iter().flatten().map(|&i| &e.list[i])
    }

    /// Every edge arriving at a definition (calls, type uses, imports ...), in the
    /// order of [`Graphs::symbol_edges`]: `references` without a scan of them all.
    pub fn edges_into(&self, def: DefId) -> impl Iterator<Item = &SymbolEdge> {
        let e = self.edge_index();
        e.into().get(&def).into_iter().flatten().map(|&i| &e.list[i])
    }

    /// Definitions reachable from `start` over call edges (callees, or callers when
    /// `reverse`), with their distance, up to `depth`. Breadth-first; each definition
    /// once, at its shortest distance.
    pub fn call_closure(
        &self,
        start: DefId,
        depth: u32,
        reverse: bool,
    ) -> Vec<(DefId, u32, Resolution)> {
        let mut seen: HashSet<DefId> = std::iter::once(start).collect();
        let mut out = Vec::new();
        let mut queue = VecDeque::from([(start, 0u32)]);
        while let Some((d, dist)) = queue.pop_front() {
            if dist == depth {
                continue;
            }
            let edges: Vec<&SymbolEdge> =
                if reverse { self.callers(d).collect() } else { self.callees(d).collect() };
            for e in edges {
                let next = if reverse {
                    match e.from {
                        Some(from) => from,
                        None => continue,
                    }
                } else {
                    e.to
                };
                if seen.insert(next) {
                    out.push((next, dist + 1, e.resolution));
                    queue.push_back((next, dist + 1));
                }
            }
        }
        out
    }

    /// Files reachable over file edges (dependencies, or dependents when `reverse`),
    /// with their distance, up to `depth`.
    pub fn file_closure(&self, start: &[FileId], depth: u32, reverse: bool) -> Vec<(FileId, u32)> {
        let mut seen: HashSet<FileId> = start.iter().copied().collect();
        let mut out = Vec::new();
        let mut queue: VecDeque<(FileId, u32)> = start.iter().map(|&f| (f, 0)).collect();
        while let Some((f, dist)) = queue.pop_front() {
            if dist == depth {
                continue;
            }
            let adj = if reverse { &self.file_in[f as usize] } else { &self.file_out[f as usize] };
            for &(g, _) in adj {
                if seen.insert(g) {
                    out.push((g, dist + 1));
                    queue.push_back((g, dist + 1));
                }
            }
        }
        out
    }
}

/// What one file's resolution knows of its imports.
pub(crate) struct FileLinks<'a> {
    /// Files it imports (resolved imports only), each once, in import order.
    pub(crate) files: Vec<FileId>,
    /// External modules it imports, each once.
    pub(crate) externals: Vec<String>,
    /// Names imported explicitly → the files they come from.
    imported_names: HashMap<&'a str, Vec<FileId>>,
    /// Names imported from outside the project (`from requests import Session`,
    /// `use std::collections::HashMap`).
    external_names: HashSet<&'a str>,
    imported_files: HashSet<FileId>,
}

impl<'a> FileLinks<'a> {
    pub(crate) fn new(f: FileId, imports: &'a [ResolvedImport]) -> FileLinks<'a> {
        let mut links = FileLinks {
            files: Vec::new(),
            externals: Vec::new(),
            imported_names: HashMap::default(),
            external_names: HashSet::default(),
            imported_files: HashSet::default(),
        };
        for imp in imports {
            match &imp.target {
                ImportTarget::Files(files) => {
                    for &t in files {
                        if t != f && !links.files.contains(&t) {
                            links.files.push(t);
                        }
                    }
                    for (name, alias) in &imp.names {
                        for key in [name, alias] {
                            links
                                .imported_names
                                .entry(key.as_str())
                                .or_default()
                                .extend(files.iter().copied());
                        }
                    }
                }
                ImportTarget::External(e) => {
                    if !links.externals.contains(e) {
                        links.externals.push(e.clone());
                    }
                    for (_, alias) in &imp.names {
                        links.external_names.insert(alias.as_str());
                    }
                }
            }
        }
        links.imported_files = links.files.iter().copied().collect();
        links
    }
}

/// What every file's resolution shares: the crates Rust files belong to, which
/// files are tests.
pub(crate) struct Resolver<'p> {
    project: &'p Project,
    crates: RustCrates,
    is_test: Vec<bool>,
    /// Definitions by name and language family (see [`family`]), in (file,
    /// ord) order: a reference never means a definition of another family
    /// outside its own file, and common names (`get`, `new`, `run`) have
    /// thousands of definitions across languages. Not built for a handful of
    /// files (an update): `reachable` refuses the others anyway.
    by_family: Option<HashMap<(NameId, u8), Vec<DefId>>>,
}

/// Below this many files to resolve, candidates are not indexed by family.
const FAMILY_INDEX_FROM: usize = 1024;

/// Languages that link with each other share a family (`Language::links_with`).
fn family(lang: Language) -> u8 {
    match lang {
        Language::JavaScript | Language::TypeScript | Language::Tsx => 0,
        Language::C | Language::Cpp => 1,
        Language::Python => 2,
        Language::Rust => 3,
        Language::Go => 4,
        Language::Java => 5,
        Language::CSharp => 6,
    }
}

impl<'p> Resolver<'p> {
    /// A resolver for `files` files of `project` (how many decides whether
    /// candidates are indexed by family first).
    pub(crate) fn new(project: &'p Project, manifests: &[Manifest], files: usize) -> Resolver<'p> {
        let by_family = (files >= FAMILY_INDEX_FROM).then(|| {
            let mut by_family: HashMap<(NameId, u8), Vec<DefId>> = HashMap::default();
            for (f, file) in project.files.iter().enumerate() {
                let fam = family(file.language);
                for (ord, d) in file.defs.iter().enumerate() {
                    by_family
                        .entry((d.name, fam))
                        .or_default()
                        .push(DefId { file: f as FileId, ord: ord as u32 });
                }
            }
            by_family
        });
        Resolver {
            project,
            crates: RustCrates::new(project, manifests),
            is_test: project.files.iter().map(|f| is_test_path(&f.path)).collect(),
            by_family,
        }
    }

    /// Resolves file `f`'s references, appending their edges to `out`; returns
    /// every name it looked definitions up by (what its edges depend on besides
    /// the file itself and its imports).
    fn resolve_file(
        &self,
        f: FileId,
        links: &FileLinks<'_>,
        out: &mut Vec<SymbolEdge>,
    ) -> Vec<&'p str> {
        let project = self.project;
        let look = Lookups {
            project,
            by_family: self.by_family.as_ref(),
            asked: RefCell::new(Vec::new()),
        };
        let file = project.file(f);
        // Resolution depends on (name, kind class, enclosing scope, receiver
        // type): cache it.
        let mut cache: HashMap<(NameId, u8, Option<u32>, Option<NameId>), Resolved> =
            HashMap::default();
        for r in &file.refs {
            let class = kind_class(r.kind);
            let scope = r.enclosing.and_then(|e| file.defs[e as usize].parent);
            let key = (r.name, class, r.enclosing, r.receiver);
            let targets = cache.entry(key).or_insert_with(|| {
                resolve_ref(
                    &look,
                    f,
                    r.name,
                    r.kind,
                    r.receiver,
                    r.enclosing,
                    scope,
                    links,
                    &self.crates,
                    &self.is_test,
                )
            });
            for &(to, resolution, weight) in targets.iter() {
                let from = r.enclosing.map(|e| DefId { file: f, ord: e });
                if from == Some(to) {
                    continue; // recursion is not a dependency
                }
                out.push(SymbolEdge {
                    from_file: f,
                    from,
                    to,
                    kind: r.kind,
                    resolution,
                    weight,
                    line: r.line,
                });
            }
        }
        look.asked.into_inner()
    }
}

/// One file resolved: its edges, the names it looked up, its row of the file
/// graph, the files and external modules it imports.
pub(crate) struct FileResolution<'p> {
    pub(crate) edges: Vec<SymbolEdge>,
    pub(crate) asked: Vec<&'p str>,
    pub(crate) row: Vec<(FileId, f64)>,
    pub(crate) files: Vec<FileId>,
    pub(crate) externals: Vec<String>,
}

/// Files resolved at once, in parallel: a bound on the results held before
/// they are handed over.
const RESOLVE_CHUNK: usize = 512;

impl<'p> Resolver<'p> {
    /// Resolves `files` (their imports resolved in `imports`, by file) on the
    /// rayon pool, handing each file's results to `take` in the order given:
    /// the same whatever the thread count.
    pub(crate) fn resolve_files(
        &self,
        files: impl IntoIterator<Item = FileId>,
        imports: &[Vec<ResolvedImport>],
        mut take: impl FnMut(FileId, FileResolution<'p>),
    ) {
        use rayon::prelude::*;
        let files: Vec<FileId> = files.into_iter().collect();
        for chunk in files.chunks(RESOLVE_CHUNK) {
            let done: Vec<FileResolution<'p>> = chunk
                .par_iter()
                .map(|&f| {
                    let links = FileLinks::new(f, &imports[f as usize]);
                    let mut edges = Vec::new();
                    let asked = self.resolve_file(f, &links, &mut edges);
                    let row = file_row(self.project, &edges, &links.files);
                    FileResolution {
                        edges,
                        asked,
                        row,
                        files: links.files,
                        externals: links.externals,
                    }
                })
                .collect();
            for (&f, r) in chunk.iter().zip(done) {
                take(f, r);
            }
        }
    }
}

/// The project's definitions by name, each name asked for written down.
struct Lookups<'p, 'r> {
    project: &'p Project,
    by_family: Option<&'r HashMap<(NameId, u8), Vec<DefId>>>,
    asked: RefCell<Vec<&'p str>>,
}

impl<'p, 'r> Lookups<'p, 'r> {
    /// The definitions named `name` a reference in a file of `lang` may mean:
    /// its own file's and its language family's (a subset of `named`'s).
    fn named_for(&self, name: NameId, lang: Language) -> &'r [DefId]
    where
        'p: 'r,
    {
        match self.by_family {
            Some(by) => {
                self.asked.borrow_mut().push(self.project.names.name(name));
                by.get(&(name, family(lang))).map_or(&[], Vec::as_slice)
            }
            None => self.named(name),
        }
    }

    fn named(&self, name: NameId) -> &'p [DefId] {
        self.asked.borrow_mut().push(self.project.names.name(name));
        self.project.defs_named(name)
    }

    fn named_str(&self, name: &'p str) -> &'p [DefId] {
        self.asked.borrow_mut().push(name);
        self.project.defs_named_str(name)
    }
}

/// One file's row of the file graph: its imports, plus its references to other
/// files' definitions, damped per (file, name) (`sqrt` of the count, times the
/// name's specificity). Summed in the order the edges first name each (file,
/// name), so the row is a function of the file's edges alone, whatever the
/// names' numbering.
fn file_row(project: &Project, edges: &[SymbolEdge], imports: &[FileId]) -> Vec<(FileId, f64)> {
    let mut slot: HashMap<(FileId, NameId), usize> = HashMap::default();
    let mut per_name: Vec<(FileId, NameId, f64, u32)> = Vec::new();
    for e in edges {
        if e.to.file == e.from_file {
            continue;
        }
        let name = project.def(e.to).name;
        let kind_weight = match e.kind {
            RefKind::Call | RefKind::MemberCall | RefKind::SelfCall | RefKind::Type => 1.0,
            RefKind::Use => 0.5,
        };
        let i = *slot.entry((e.to.file, name)).or_insert_with(|| {
            per_name.push((e.to.file, name, 0.0, 0));
            per_name.len() - 1
        });
        let entry = &mut per_name[i];
        entry.2 = entry.2.max(e.weight * kind_weight);
        entry.3 += 1;
    }
    let mut at: HashMap<FileId, usize> = HashMap::default();
    let mut row: Vec<(FileId, f64)> = Vec::new();
    let mut add = |to: FileId, w: f64| {
        let i = *at.entry(to).or_insert_with(|| {
            row.push((to, 0.0));
            row.len() - 1
        });
        row[i].1 += w;
    };
    for (to, name, w, count) in per_name {
        add(to, w * name_specificity(project.names.name(name)) * f64::from(count).sqrt());
    }
    for &t in imports {
        add(t, 1.0);
    }
    row.sort_by_key(|&(to, _)| to);
    row
}

/// Per file, the names its resolution looked definitions up by: a change to
/// the definitions of none of them leaves its edges as they are.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct AskedNames {
    pub(crate) names: Vec<String>,
    /// File `f`'s names are `ids[starts[f]..starts[f + 1]]`, sorted.
    starts: Vec<u32>,
    ids: Vec<u32>,
}

impl AskedNames {
    pub(crate) fn of(&self, f: FileId) -> &[u32] {
        let f = f as usize;
        match (self.starts.get(f), self.starts.get(f + 1)) {
            (Some(&a), Some(&b)) => &self.ids[a as usize..b as usize],
            _ => &[],
        }
    }

    pub(crate) fn files(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }
}

/// Builds [`AskedNames`] file by file, numbering names as they come (after
/// the ones of a table it starts from).
#[derive(Default)]
pub(crate) struct AskedBuilder {
    ids: std::collections::HashMap<String, u32>,
    names: Vec<String>,
    starts: Vec<u32>,
    list: Vec<u32>,
}

impl AskedBuilder {
    /// Starts from `names`, keeping their numbers (a stored table that files
    /// kept as they were still point into); only the names in `fresh` (what
    /// the files resolved again looked up) are looked for in it, in one pass,
    /// rather than the whole table hashed.
    pub(crate) fn with_names<'a>(
        names: Vec<String>,
        fresh: impl IntoIterator<Item = &'a str>,
    ) -> AskedBuilder {
        let fresh: HashSet<&str> = fresh.into_iter().collect();
        let ids = names
            .iter()
            .enumerate()
            .filter(|(_, n)| fresh.contains(n.as_str()))
            .map(|(i, n)| (n.clone(), i as u32))
            .collect();
        AskedBuilder { ids, names, starts: Vec::new(), list: Vec::new() }
    }

    /// The next file's names.
    pub(crate) fn push(&mut self, asked: Vec<&str>) {
        let start = self.list.len();
        for name in asked {
            let id = match self.ids.get(name) {
                Some(&id) => id,
                None => {
                    let id = self.names.len() as u32;
                    self.names.push(name.to_owned());
                    self.ids.insert(name.to_owned(), id);
                    id
                }
            };
            self.list.push(id);
        }
        self.list[start..].sort_unstable();
        let mut kept = start;
        for i in start..self.list.len() {
            if kept == start || self.list[i] != self.list[kept - 1] {
                self.list[kept] = self.list[i];
                kept += 1;
            }
        }
        self.list.truncate(kept);
        self.starts.push(start as u32);
    }

    /// The next file's names as already numbered (a file kept as it was).
    pub(crate) fn push_ids(&mut self, ids: &[u32]) {
        self.starts.push(self.list.len() as u32);
        self.list.extend_from_slice(ids);
    }

    pub(crate) fn finish(mut self) -> AskedNames {
        self.starts.push(self.list.len() as u32);
        AskedNames { names: self.names, starts: self.starts, ids: self.list }
    }
}

fn kind_class(kind: RefKind) -> u8 {
    match kind {
        RefKind::Call => 0,
        RefKind::MemberCall => 3,
        RefKind::SelfCall => 4,
        RefKind::Type => 1,
        RefKind::Use => 2,
    }
}

/// Whether a definition of `kind` can be what a reference of `ref_kind` means.
fn compatible(ref_kind: RefKind, kind: SymbolKind) -> bool {
    match ref_kind {
        // Modules and namespaces are containers but are never called or used as
        // types (`analysis::target()` calls a function, not the module `target`).
        RefKind::Call | RefKind::MemberCall | RefKind::SelfCall => {
            kind.is_callable() || is_type_container(kind) || kind == SymbolKind::TypeAlias
        }
        RefKind::Type => is_type_container(kind) || kind == SymbolKind::TypeAlias,
        RefKind::Use => !matches!(kind, SymbolKind::Module | SymbolKind::Namespace),
    }
}

pub fn is_type_container(kind: SymbolKind) -> bool {
    kind.is_container() && !matches!(kind, SymbolKind::Module | SymbolKind::Namespace)
}

#[allow(clippy::too_many_arguments)]
fn resolve_ref<'p>(
    look: &Lookups<'p, '_>,
    file: FileId,
    name: NameId,
    kind: RefKind,
    receiver: Option<NameId>,
    enclosing: Option<u32>,
    scope: Option<u32>,
    links: &FileLinks<'_>,
    crates: &RustCrates,
    is_test: &[bool],
) -> Resolved {
    let project = look.project;
    let (imported_names, external_names, imported_files) =
        (&links.imported_names, &links.external_names, &links.imported_files);
    // `check(arg)` in Python cannot mean `PyLinter.check`, whatever is imported: a
    // method is reached through `self.`, a receiver or a type path. (In Java, C# and
    // C++ a bare call does reach the class's and its bases' methods.)
    let lang = project.file(file).language;
    // Every use below is filtered by `reachable`, which holds only for this
    // file's definitions and its language family's.
    let named = look.named_for(name, lang);
    let bare = kind == RefKind::Call && bare_calls_skip_members(lang);
    // C++ reaches them only from a method: from a free function, `helper()` is
    // no class's `helper`, declared in the class body or defined out of line.
    let cpp_class = (lang == Language::Cpp && matches!(kind, RefKind::Call | RefKind::SelfCall))
        .then(|| cpp_method_class(look, file, enclosing));
    let cpp_free = kind == RefKind::Call && cpp_class == Some(None);
    let out_of_line_method = |d: &DefId| {
        owner_of(&project.def(*d).qualified_name).is_some_and(|o| is_class_name(look, o))
    };
    // The other way round, `self.save()` means a method, of this class or a base
    // (maybe in another file), never the module-level `save` next to the class.
    // (Only where every method has its class as parent: not Rust's `impl` in
    // another file, nor C++'s out-of-line `A::f`, nor Go's receivers.)
    let on_self = kind == RefKind::SelfCall
        && matches!(
            lang,
            Language::Python
                | Language::JavaScript
                | Language::TypeScript
                | Language::Tsx
                | Language::Java
                | Language::CSharp
        );
    // And a Java call never means a Python function of the same name, nor a Rust
    // call a function of a crate its own crate does not depend on.
    let reachable = |d: &DefId| {
        compatible(kind, project.def(*d).kind)
            && !(bare && is_member(project, *d))
            && !(cpp_free && (is_member(project, *d) || out_of_line_method(d)))
            && (!on_self || is_member(project, *d))
            && (d.file == file
                || (lang.links_with(project.file(d.file).language)
                    && crates.may_reach(file, d.file)))
    };
    // C++'s `ns::f()` (the receiver is a scope, `ns::`): a class's method is
    // reached only with the class in the scope (`ns::Foo::f`, matched below
    // against the qualified names); a scope that matches nothing is a namespace
    // we cannot place, whose `f` is no class's method.
    let cpp_scoped = lang == Language::Cpp
        && kind == RefKind::MemberCall
        && receiver.is_some_and(|t| project.names.name(t).ends_with("::"));
    let is_compatible = |d: &DefId| {
        reachable(d) && !(cpp_scoped && (is_member(project, *d) || out_of_line_method(d)))
    };
    if !named.iter().any(reachable) {
        return Vec::new();
    }
    let one = |d: DefId, r: Resolution| vec![(d, r, r.weight())];
    // The methods named like the call of the types `owners` (or their bases), the
    // definitions this file has or imports first (a type name may be defined in
    // several places).
    let typed = |owners: Vec<&'p str>| -> Option<Resolved> {
        if owners.is_empty() {
            return None;
        }
        let compatible: Vec<DefId> = named.iter().copied().filter(is_compatible).collect();
        let owned = methods_of(look, &compatible, owners.clone());
        let imported = |d: &DefId| {
            imported_files.contains(&d.file)
                || owners
                    .iter()
                    .any(|o| imported_names.get(o).is_some_and(|fs| fs.contains(&d.file)))
        };
        let mut hits: Vec<DefId> = owned.iter().copied().filter(|d| d.file == file).collect();
        if hits.is_empty() {
            hits = owned.iter().copied().filter(imported).collect();
        }
        if hits.is_empty() {
            hits = owned;
        }
        (!hits.is_empty() && hits.len() <= MAX_CANDIDATES)
            .then(|| split(hits, Resolution::Receiver))
    };
    if let Some(t) = receiver.filter(|_| kind == RefKind::MemberCall) {
        'receiver: {
            let t_name = written_type(
                look,
                file,
                project.names.name(t),
                // `auto r = make(); r->next()` in a C++ method: `make()` is the
                // class's (or a base's) before any free function, as the bare
                // call itself is.
                if lang == Language::Cpp { cpp_method_class(look, file, enclosing) } else { None },
                &is_compatible,
                links,
            );
            if let Some(t_name) = t_name
                && let Some(found) = typed(vec![t_name])
            {
                return found;
            }
            // C++'s `log::flush()`, `db::impl::open()` (the receiver is the scope and
            // `::`): the definition qualified by that scope. Failing that, a
            // namespace of ours (an inline namespace between, a `using`
            // declaration) or one we cannot place (an alias declared in a header,
            // a library's) is left to the name, as a call without a scope is.
            if lang == Language::Cpp
                && let Some(scope) = t_name.and_then(|s| s.strip_suffix("::"))
            {
                if scope == "std" || scope.starts_with("std::") {
                    return Vec::new();
                }
                let tail = format!("{scope}::{}", project.names.name(name));
                let hits: Vec<DefId> = named
                    .iter()
                    .copied()
                    .filter(reachable)
                    .filter(|d| {
                        let q = &project.def(*d).qualified_name;
                        q.strip_suffix(tail.as_str())
                            .is_some_and(|head| head.is_empty() || head.ends_with("::"))
                    })
                    .collect();
                if !hits.is_empty() && hits.len() <= MAX_CANDIDATES {
                    return split(hits, Resolution::Receiver);
                }
                break 'receiver;
            }
            // `import shop` … `shop.total()`: a function of that module. (Not an
            // imported class's: `Order.save()` that `Order` inherits from elsewhere is
            // no module-level `save` next to it.)
            let module = t_name.is_some_and(|n| !n.starts_with(|c: char| c.is_uppercase()));
            let files = t_name.filter(|_| module).and_then(|t| imported_names.get(t));
            // Go's imports do not say what name they bind: `store.Open()` is a function
            // of one of the packages the file imports (and `strings.Split()`, of none).
            let go_package = module && lang == Language::Go && files.is_none();
            if files.is_some() || go_package {
                let hits: Vec<DefId> = named
                    .iter()
                    .copied()
                    .filter(|d| {
                        is_compatible(d)
                            && files
                                .map_or(imported_files.contains(&d.file), |fs| fs.contains(&d.file))
                    })
                    .filter(|d| project.def(*d).parent.is_none())
                    .filter(|d| !(go_package && project.def(*d).kind == SymbolKind::Method))
                    .collect();
                if !hits.is_empty() {
                    return split(hits, Resolution::Imported);
                }
            }
            if let Some(t_name) = t_name
                && look.named_str(t_name).is_empty()
                && (external_names.contains(t_name)
                    || is_builtin_type(lang, t_name)
                    || matches!(
                        lang,
                        Language::Java | Language::CSharp | Language::Go | Language::Cpp
                    ))
            {
                // The receiver is of a type the project does not define and that
                // comes from elsewhere (`str`, `Vec`, `Object`, an imported
                // `requests.Session`): its methods are not ours, whatever their names.
                // (In Python, JS and Rust a name of unknown origin may still be an
                // alias of one of ours; in Java, C#, Go and C++ a declared type is a
                // type's own name, or a `typedef`/`using` the project defines. A name
                // the project defines as something else may be an inherited field:
                // `Expression.IsMatch()` in C#.)
                return Vec::new();
            }
            // A project type without a method of that name, nor its bases (as far as
            // their classes' headers name them): a trait's default, a base from
            // elsewhere, a dynamic attribute. Fall back to the name.
        }
    }
    // The same scope: a sibling of the enclosing definition (a method of the same
    // class), or a definition nested in it. `defs_named` is in (file, ord) order, so
    // this file's share is a binary search away; common names (`get`, `__init__`)
    // have thousands of definitions, and this runs once per distinct reference.
    let start = named.partition_point(|d| d.file < file);
    let end = start + named[start..].partition_point(|d| d.file == file);
    let same_file = || named[start..end].iter().copied().filter(is_compatible);
    // Past this point a member call's receiver has no type we know (or one without
    // that method): `x.get()` matched by the name alone, whether to a method of this
    // file, of a file this file imports or the project's only `get`, is a guess.
    // `session_hooks.get(..)` in requests' sessions.py is a dict's, not `Session.get`
    // next to it; `os.environ.get(..)` is not `RequestsCookieJar.get` of the
    // imported cookies.py; flask's `app.config.update(..)` is not the tutorial's
    // `update` view. (`self.m()` is a `SelfCall`; a path, Rust's `util::f()` or
    // C++'s `ns::f()`, names no value and keeps its resolution, and so does a class
    // constructed through a module path, `shop.cart.Cart()`: no value has a method
    // named like a class.)
    let guess_only = kind == RefKind::MemberCall
        && !receiver.is_some_and(|t| project.names.name(t).ends_with("::"));
    let guess = |d: &DefId| guess_only && !is_type_container(project.def(*d).kind);
    let member_guess = |d: DefId, r: Resolution| {
        if guess(&d) { vec![(d, Resolution::NameOnly, r.weight())] } else { one(d, r) }
    };
    let split_guess = |hits: Vec<DefId>, r: Resolution| {
        if hits.iter().any(guess) {
            let w = r.weight() / hits.len() as f64;
            hits.into_iter().map(|d| (d, Resolution::NameOnly, w)).collect()
        } else {
            split(hits, r)
        }
    };
    if let Some(d) = same_file().find(|d| {
        let p = project.def(*d).parent;
        (scope.is_some() && p == scope) || (enclosing.is_some() && p == enclosing)
    }) {
        return member_guess(d, Resolution::Local);
    }
    // C++'s `helper()` and `this->helper()` in a method are looked up in the
    // method's class and its bases before the namespace: `Foo::helper`, or
    // `Base::flush` that `Foo` inherits, never another class's `Bar::helper` that
    // happens to be defined first in the file.
    if let Some(Some(class)) = cpp_class
        && let Some(found) = typed(vec![class])
    {
        return found;
    }
    // `self.m()` that the class does not define: its bases' (as its header names
    // them, nearest first), before any same-file method of another class.
    if on_self
        && let Some(class) = enclosing_class(project, file, enclosing)
        && let Some(found) = typed(base_names(&class.signature, lang))
    {
        return found;
    }
    if let Some(d) =
        same_file().find(|d| project.def(*d).parent.is_none()).or_else(|| same_file().next())
    {
        return member_guess(d, Resolution::SameFile);
    }
    let candidates = || named.iter().copied().filter(is_compatible);
    if let Some(files) = imported_names.get(project.names.name(name)) {
        let hits: Vec<DefId> = candidates().filter(|d| files.contains(&d.file)).collect();
        if !hits.is_empty() {
            return split_guess(hits, Resolution::Imported);
        }
    }
    let hits: Vec<DefId> = candidates().filter(|d| imported_files.contains(&d.file)).collect();
    if !hits.is_empty() {
        return split_guess(hits, Resolution::Imported);
    }
    // By name alone, code outside the tests never means something defined in a
    // test (a helper of `index.test.ts`, a stub of `Promise` in an e2e fixture);
    // an explicit import of test code still counts (above).
    let by_name = || candidates().filter(|d| is_test[file as usize] || !is_test[d.file as usize]);
    let mut first = by_name().take(MAX_CANDIDATES + 1);
    match (first.next(), first.count() + 1) {
        (Some(d), 1) => member_guess(d, Resolution::Global),
        (Some(_), n) if n <= MAX_CANDIDATES && kind != RefKind::Use => {
            split(by_name().collect(), Resolution::Ambiguous)
        }
        _ => Vec::new(),
    }
}

/// `hits`, the definitions one reference may mean, each with its share of the
/// resolution's weight.
fn split(hits: Vec<DefId>, r: Resolution) -> Resolved {
    let w = r.weight() / hits.len() as f64;
    hits.into_iter().map(|d| (d, r, w)).collect()
}

/// The type a receiver's written type (see `Receivers::type_of`) comes to: `Foo`
/// itself, or what the calls it spells are declared to return (see
/// [`return_type`]): `make()` a free function, `Foo.make()` a method of `Foo` or
/// of a base, `shop.make()` a function of the module (or Go package) imported as
/// `shop`, and chains of them (`make()?.reader().next()`). A leading bare call
/// in a method of `this_class` (C++) is that class's method first.
fn written_type<'p>(
    look: &Lookups<'p, '_>,
    file: FileId,
    written: &'p str,
    this_class: Option<&'p str>,
    is_compatible: &impl Fn(&DefId) -> bool,
    links: &FileLinks<'_>,
) -> Option<&'p str> {
    let project = look.project;
    let call = |s: &'p str| {
        s.strip_suffix("()?")
            .map(|f| (f, true))
            .or_else(|| s.strip_suffix("()").map(|f| (f, false)))
    };
    let returned =
        |f: &'p str, unwrapped: bool| returned_type(look, file, f, unwrapped, is_compatible, links);
    let methods_named = |method: &'p str| -> Option<Vec<DefId>> {
        Some(
            look.named_str(method)
                .iter()
                .copied()
                .filter(|d| project.def(*d).kind.is_callable() && is_compatible(d))
                .collect(),
        )
    };
    // The type the methods `owned` agree they return.
    let agreed = |owned: &[DefId], unwrapped: bool| -> Option<&'p str> {
        // Overloads (and a method of several types of that name) must agree.
        let mut types = owned.iter().map(|d| {
            let def = project.def(*d);
            let lang = project.file(d.file).language;
            return_type(&def.signature, project.names.name(def.name), unwrapped, lang)
        });
        let first = types.next()??;
        types.all(|other| other == Some(first)).then_some(first)
    };
    let mut segments = written.split('.');
    let first = segments.next()?;
    let mut t = match call(first) {
        Some((f, unwrapped)) => {
            let own = this_class.and_then(|class| {
                let owned = methods_of(look, &methods_named(f)?, vec![class]);
                (!owned.is_empty()).then(|| agreed(&owned, unwrapped))
            });
            match own {
                Some(t) => t?,
                None => returned(f, unwrapped)?,
            }
        }
        None => first,
    };
    for segment in segments {
        let (method, unwrapped) = call(segment)?;
        let methods = methods_named(method)?;
        let mut owned = methods_of(look, &methods, vec![t]);
        if owned.is_empty() && t.starts_with(|c: char| c.is_lowercase()) {
            // `shop.make()`, Go's `store.Open()`: a function of the module or
            // package imported under that name (of a file this file imports, where
            // the import does not say which: Go's packages). None of a package from
            // elsewhere (`template.New()`), whatever the project defines.
            let files = links.imported_names.get(t);
            owned = methods
                .iter()
                .copied()
                .filter(|d| !is_member(project, *d) && project.def(*d).kind != SymbolKind::Method)
                .filter(|d| {
                    files.map_or(links.imported_files.contains(&d.file), |fs| fs.contains(&d.file))
                })
                .collect();
        }
        t = agreed(&owned, unwrapped)?;
    }
    Some(t)
}

/// The type a free function named `f` is declared to return (see
/// [`return_type`]): the definition this file has or imports, else the only one.
fn returned_type<'p>(
    look: &Lookups<'p, '_>,
    file: FileId,
    f: &'p str,
    unwrapped: bool,
    is_compatible: &impl Fn(&DefId) -> bool,
    links: &FileLinks<'_>,
) -> Option<&'p str> {
    let project = look.project;
    let functions: Vec<DefId> = look
        .named_str(f)
        .iter()
        .copied()
        .filter(|d| {
            project.def(*d).kind.is_callable() && !is_member(project, *d) && is_compatible(d)
        })
        .collect();
    let imported = |d: &&DefId| {
        links.imported_files.contains(&d.file)
            || links.imported_names.get(f).is_some_and(|fs| fs.contains(&d.file))
    };
    let pick = functions
        .iter()
        .find(|d| d.file == file)
        .or_else(|| functions.iter().find(imported))
        .or_else(|| functions.first().filter(|_| functions.len() == 1))?;
    let def = project.def(*pick);
    return_type(&def.signature, f, unwrapped, project.file(pick.file).language)
}

/// The innermost class (or other type) around `enclosing`.
fn enclosing_class(project: &Project, file: FileId, enclosing: Option<u32>) -> Option<&Def> {
    let mut cur = enclosing;
    while let Some(ord) = cur {
        let def = project.def(DefId { file, ord });
        if is_type_container(def.kind) {
            return Some(def);
        }
        cur = def.parent;
    }
    None
}

/// The class a C++ definition belongs to, for the methods a bare call in it may
/// mean: the class whose body holds it, or the one its out-of-line name spells
/// (`void Foo::run() {..}`, in a namespace or not, → `Foo`, when the project has
/// a class `Foo`; `ns::helper()` in `namespace ns` has none).
fn cpp_method_class<'p>(
    look: &Lookups<'p, '_>,
    file: FileId,
    enclosing: Option<u32>,
) -> Option<&'p str> {
    let project = look.project;
    if let Some(class) = enclosing_class(project, file, enclosing) {
        return Some(project.names.name(class.name));
    }
    // At namespace level (or the file's): a free function, or a method defined
    // out of line.
    let def = project.def(DefId { file, ord: enclosing? });
    owner_of(&def.qualified_name).filter(|o| is_class_name(look, o))
}

/// Whether the project defines a class (struct, interface, …) named `name`.
fn is_class_name<'p>(look: &Lookups<'p, '_>, name: &'p str) -> bool {
    look.named_str(name).iter().any(|c| is_type_container(look.project.def(*c).kind))
}

/// Of `candidates` (definitions named like the call), the methods types named
/// `owners` have: their own, else those of their nearest bases that define one (up
/// to four levels; bases as the class headers name them, see [`base_names`]).
pub fn methods_of_type<'p>(
    project: &'p Project,
    candidates: &[DefId],
    owners: Vec<&'p str>,
) -> Vec<DefId> {
    methods_of(
        &Lookups { project, by_family: None, asked: RefCell::new(Vec::new()) },
        candidates,
        owners,
    )
}

/// [`methods_of_type`], the classes looked up through `look`.
fn methods_of<'p>(
    look: &Lookups<'p, '_>,
    candidates: &[DefId],
    mut owners: Vec<&'p str>,
) -> Vec<DefId> {
    let project = look.project;
    let mut seen: HashSet<&str> = owners.iter().copied().collect();
    for _ in 0..5 {
        let hits: Vec<DefId> = candidates
            .iter()
            .copied()
            .filter(|d| {
                owner_of(&project.def(*d).qualified_name).is_some_and(|o| owners.contains(&o))
            })
            .collect();
        if !hits.is_empty() {
            return hits;
        }
        let mut next = Vec::new();
        for owner in &owners {
            for &c in look.named_str(owner) {
                let class = project.def(c);
                if !is_type_container(class.kind) {
                    continue;
                }
                for base in base_names(&class.signature, project.file(c.file).language) {
                    if seen.insert(base) {
                        next.push(base);
                    }
                }
            }
        }
        if next.is_empty() {
            break;
        }
        owners = next;
    }
    Vec::new()
}

/// The type a member belongs to: `Foo` for `Foo.check`, `Foo::new` and
/// `pkg.mod.Foo.check` (the segment before the definition's own name).
fn owner_of(qualified_name: &str) -> Option<&str> {
    let cut = qualified_name.rfind(['.', ':'])?;
    let owner = qualified_name[..cut].trim_end_matches(':');
    owner.rsplit(['.', ':']).next()
}

/// The base classes a class header names, last path segment only:
/// `class Cat(animals.Pet, Generic[T], metaclass=M):` → `Pet`, `Generic`;
/// `export class Map2 extends Base<K> implements I` → `Base` (Java likewise);
/// `class Linter : Base, IChecker` → `Base`, `IChecker`; C++'s `class DBImpl :
/// public DB` → `DB`. (Interfaces after
/// `implements` and Rust traits are left out: a call through them is not to their
/// own body. C# does not tell its interfaces apart from the base class.)
fn base_names(signature: &str, lang: Language) -> Vec<&str> {
    let list = match lang {
        Language::Python => {
            // `class Name(` — not a parenthesis in a trailing comment.
            let Some((open, close)) =
                parameter_list(signature).filter(|&(open, _)| !signature[..open].contains(':'))
            else {
                return Vec::new();
            };
            &signature[open + 1..close.unwrap_or(signature.len())]
        }
        Language::JavaScript | Language::TypeScript | Language::Tsx | Language::Java => {
            let Some((_, rest)) = signature.split_once(" extends ") else { return Vec::new() };
            rest.split(" implements ").next().unwrap_or(rest)
        }
        // `class Linter : Base, IChecker where T : new()`: the base class and the
        // interfaces, which C# does not tell apart.
        Language::CSharp => {
            let header = signature.split(" where ").next().unwrap_or(signature);
            let Some((_, rest)) = header.split_once(" : ") else { return Vec::new() };
            rest
        }
        // `class DBImpl : public DB, private Base`: a single colon, not `::`.
        Language::Cpp => {
            let bytes = signature.as_bytes();
            let Some(colon) = (0..bytes.len()).find(|&i| {
                bytes[i] == b':'
                    && bytes.get(i + 1) != Some(&b':')
                    && (i == 0 || bytes[i - 1] != b':')
            }) else {
                return Vec::new();
            };
            &signature[colon + 1..]
        }
        _ => return Vec::new(),
    };
    // Top-level commas only: `Generic[K, V]`, `Map<string, number>`.
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in list.char_indices().chain(std::iter::once((list.len(), ','))) {
        match c {
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => depth -= 1,
            ',' if depth == 0 => {
                let item = list[start..i].trim();
                start = i + 1;
                if item.contains('=') {
                    continue; // `metaclass=ABCMeta`
                }
                // (C++'s `public virtual Base`: the last word.)
                let item = item
                    .split_whitespace()
                    .find(|w| !matches!(*w, "public" | "protected" | "private" | "virtual"))
                    .unwrap_or(item);
                let head = item.split(['[', '<', '(', ' ', '{']).next().unwrap_or(item);
                let name = head.rsplit(['.', ':']).next().unwrap_or(head);
                if !name.is_empty() {
                    out.push(name);
                }
            }
            _ => {}
        }
    }
    out
}

/// The language's own types, whose methods a project cannot define (Rust's trait
/// impls for them are found as members: `impl Tr for String` defines `String::m`).
pub fn is_builtin_type(lang: Language, t: &str) -> bool {
    match lang {
        Language::Python => matches!(
            t,
            "str"
                | "bytes"
                | "int"
                | "float"
                | "complex"
                | "bool"
                | "list"
                | "dict"
                | "set"
                | "tuple"
                | "frozenset"
                | "bytearray"
                | "range"
                | "slice"
                | "object"
                | "type"
                | "super"
                | "List"
                | "Dict"
                | "Set"
                | "Tuple"
        ),
        Language::Rust => matches!(
            t,
            "String"
                | "str"
                | "Vec"
                | "VecDeque"
                | "HashMap"
                | "HashSet"
                | "BTreeMap"
                | "BTreeSet"
                | "Option"
                | "Result"
                | "PathBuf"
                | "Path"
                | "Cow"
        ),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            is_js_global(lang, t)
                || matches!(
                    t,
                    "string"
                        | "number"
                        | "boolean"
                        | "Array"
                        | "Map"
                        | "Set"
                        | "WeakMap"
                        | "Promise"
                        | "Object"
                        | "String"
                        | "Number"
                        | "Date"
                        | "RegExp"
                        | "Error"
                        | "Math"
                        | "Symbol"
                        | "Reflect"
                        | "Buffer"
                )
        }
        _ => false,
    }
}

/// Languages in which a call by a bare name never means a method.
fn bare_calls_skip_members(lang: Language) -> bool {
    !matches!(lang, Language::Java | Language::CSharp | Language::Cpp)
}

/// A definition inside a class, struct, trait, interface or `impl`.
fn is_member(project: &Project, d: DefId) -> bool {
    project
        .def(d)
        .parent
        .is_some_and(|p| is_type_container(project.def(DefId { file: d.file, ord: p }).kind))
}

/// How much a shared name says about two files being related.
pub(crate) fn name_specificity(name: &str) -> f64 {
    if name.starts_with("__") && name.ends_with("__") {
        return 0.1; // dunders: everyone has them
    }
    let mut s = 1.0;
    if name.starts_with('_') {
        s *= 0.5;
    }
    match name.chars().count() {
        0..=2 => s *= 0.2,
        3..=4 => s *= 0.6,
        _ => {}
    }
    s
}

#[cfg(test)]
mod tests;
