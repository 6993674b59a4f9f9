//! An in-memory snapshot of the whole index, the input of every graph, ranking and
//! search computation.
//!
//! Loaded in one pass from the store: files, their definitions, imports and decoded
//! references. Names are interned (`NameId`) so that resolving millions of
//! references against definitions is integer hashing, not string comparison.

use protocol::SymbolKind;
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

use crate::{
    error::{Error, Result},
    extract::RefKind,
    lang::Language,
    store::Store,
};

/// Index of a file in [`Project::files`].
pub type FileId = u32;
/// An interned name.
pub type NameId = u32;

/// A definition, by file and position in that file's definition list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DefId {
    pub file: FileId,
    pub ord: u32,
}

/// Interned strings.
#[derive(Debug, Default)]
pub struct Interner {
    /// SipHash on purpose: these keys are the repository's identifiers, which a
    /// hostile repository could pick to collide under FxHash. Since references are
    /// decoded per file's distinct names, this map is not hot.
    ids: std::collections::HashMap<String, NameId>,
    names: Vec<String>,
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> NameId {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.names.len() as NameId;
        self.names.push(s.to_owned());
        self.ids.insert(s.to_owned(), id);
        id
    }

    pub fn get(&self, s: &str) -> Option<NameId> {
        self.ids.get(s).copied()
    }

    pub fn name(&self, id: NameId) -> &str {
        &self.names[id as usize]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// A definition as the project snapshot holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Def {
    pub name: NameId,
    pub qualified_name: String,
    pub kind: SymbolKind,
    pub line: u32,
    pub end_line: u32,
    pub name_line: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    pub body: Option<(u32, u32)>,
    pub signature: String,
    pub doc: Option<String>,
    pub parent: Option<u32>,
}

/// A reference with an interned name.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Ref {
    pub name: NameId,
    pub kind: RefKind,
    pub line: u32,
    pub column: u32,
    pub enclosing: Option<u32>,
    /// A member call's receiver type, when the file states it.
    pub receiver: Option<NameId>,
}

/// An import as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ImportRow {
    pub text: String,
    pub module: String,
    pub line: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProjectFile {
    pub path: String,
    pub language: Language,
    pub package: Option<String>,
    pub lines: u32,
    pub hash: String,
    pub defs: Vec<Def>,
    pub imports: Vec<ImportRow>,
    /// Read only while the graphs are built, then dropped (code-graph's
    /// `Snapshot::build`), and never serialized: most of the memory a snapshot
    /// would otherwise hold.
    #[serde(skip)]
    pub refs: Vec<Ref>,
}

/// Every indexed file with its definitions, imports and references.
///
/// Serialized as its names and files; the lookup tables are rebuilt on decode.
#[derive(Debug, Default)]
pub struct Project {
    pub names: Interner,
    pub files: Vec<ProjectFile>,
    by_path: std::collections::HashMap<String, FileId>,
    /// Definitions by name.
    defs_by_name: HashMap<NameId, Vec<DefId>>,
}

impl Serialize for Project {
    /// Only the names definitions carry, renumbered: the references, whose names
    /// are most of the interner, are not serialized, and nothing else holds a
    /// `NameId`. Files and definitions are written through views that serialize
    /// exactly as [`ProjectFile`] and [`Def`] deserialize (the round-trip test
    /// in code-graph's snapshot checks it), so nothing is copied.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut renumber: HashMap<NameId, NameId> = HashMap::default();
        let mut names: Vec<&str> = Vec::new();
        for d in self.files.iter().flat_map(|f| &f.defs) {
            renumber.entry(d.name).or_insert_with(|| {
                names.push(self.names.name(d.name));
                (names.len() - 1) as NameId
            });
        }
        let files: Vec<FileView<'_>> = self
            .files
            .iter()
            .map(|f| FileView {
                path: &f.path,
                language: f.language,
                package: &f.package,
                lines: f.lines,
                hash: &f.hash,
                defs: DefsView(&f.defs, &renumber),
                imports: &f.imports,
            })
            .collect();
        (names, files).serialize(s)
    }
}

/// A [`ProjectFile`] as serialized (its fields in order, no references).
#[derive(Serialize)]
struct FileView<'a> {
    path: &'a str,
    language: Language,
    package: &'a Option<String>,
    lines: u32,
    hash: &'a str,
    defs: DefsView<'a>,
    imports: &'a [ImportRow],
}

/// A file's definitions with their names renumbered.
struct DefsView<'a>(&'a [Def], &'a HashMap<NameId, NameId>);

impl Serialize for DefsView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for d in self.0 {
            seq.serialize_element(&DefView {
                name: self.1[&d.name],
                qualified_name: &d.qualified_name,
                kind: d.kind,
                line: d.line,
                end_line: d.end_line,
                name_line: d.name_line,
                start_byte: d.start_byte,
                end_byte: d.end_byte,
                body: d.body,
                signature: &d.signature,
                doc: &d.doc,
                parent: d.parent,
            })?;
        }
        seq.end()
    }
}

/// A [`Def`] as serialized.
#[derive(Serialize)]
struct DefView<'a> {
    name: NameId,
    qualified_name: &'a str,
    kind: SymbolKind,
    line: u32,
    end_line: u32,
    name_line: u32,
    start_byte: u32,
    end_byte: u32,
    body: Option<(u32, u32)>,
    signature: &'a str,
    doc: &'a Option<String>,
    parent: Option<u32>,
}

impl<'de> Deserialize<'de> for Project {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let (names, files): (Vec<String>, Vec<ProjectFile>) = Deserialize::deserialize(d)?;
        let ids = names.iter().enumerate().map(|(i, n)| (n.clone(), i as NameId)).collect();
        let by_path =
            files.iter().enumerate().map(|(i, f)| (f.path.clone(), i as FileId)).collect();
        let mut project = Project {
            names: Interner { ids, names },
            files,
            by_path,
            defs_by_name: HashMap::default(),
        };
        project.index_definitions();
        Ok(project)
    }
}

/// A file as the index lists it (see [`crate::Index::listing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    pub path: String,
    pub hash: String,
    pub language: Language,
}

/// A definition from a row of `symbols` whose name is column `at` (the rest
/// follow in the table's order, `parent` last).
fn def_row(r: &rusqlite::Row<'_>, at: usize, names: &mut Interner) -> rusqlite::Result<Def> {
    let name: String = r.get(at)?;
    let kind: String = r.get(at + 2)?;
    let body = match (r.get::<_, Option<u32>>(at + 8)?, r.get::<_, Option<u32>>(at + 9)?) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => None,
    };
    Ok(Def {
        name: names.intern(&name),
        qualified_name: r.get(at + 1)?,
        kind: SymbolKind::parse(&kind).unwrap_or(SymbolKind::Function),
        line: r.get(at + 3)?,
        end_line: r.get(at + 4)?,
        name_line: r.get(at + 5)?,
        start_byte: r.get(at + 6)?,
        end_byte: r.get(at + 7)?,
        body,
        signature: r.get(at + 10)?,
        doc: r.get(at + 11)?,
        parent: r.get(at + 12)?,
    })
}

impl Project {
    pub(crate) fn load(store: &Store) -> Result<Project> {
        let conn = store.conn();
        let err = |e| Error::db(store.path(), e);
        let mut project = Project::default();
        let mut blob_to_files: HashMap<i64, Vec<FileId>> = HashMap::default();
        {
            let mut stmt = conn
                .prepare(
                    "SELECT f.path, b.id, b.language, b.package, b.lines, b.hash, b.refs
                     FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path",
                )
                .map_err(err)?;
            let mut rows = stmt.query([]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                let path: String = r.get(0).map_err(err)?;
                let blob: i64 = r.get(1).map_err(err)?;
                let lang_name: String = r.get(2).map_err(err)?;
                let Some(language) = Language::from_name(&lang_name) else { continue };
                let bytes: Vec<u8> = r.get(6).map_err(err)?;
                let names = &mut project.names;
                let refs = crate::refcodec::decode_interned(&bytes, |name| names.intern(name))
                    .ok_or_else(|| Error::Corrupt {
                        path: store.path().to_owned(),
                        reason: format!("references of {path} cannot be decoded"),
                    })?;
                let id = project.files.len() as FileId;
                project.by_path.insert(path.clone(), id);
                blob_to_files.entry(blob).or_default().push(id);
                project.files.push(ProjectFile {
                    path,
                    language,
                    package: r.get(3).map_err(err)?,
                    lines: r.get(4).map_err(err)?,
                    hash: r.get(5).map_err(err)?,
                    defs: Vec::new(),
                    imports: Vec::new(),
                    refs,
                });
            }
        }
        {
            let mut stmt = conn
                .prepare(
                    "SELECT blob_id, name, qualified_name, kind, line, end_line, name_line, start_byte, end_byte,
                            body_start, body_end, signature, doc, parent
                     FROM symbols ORDER BY blob_id, ord",
                )
                .map_err(err)?;
            let mut rows = stmt.query([]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                let blob: i64 = r.get(0).map_err(err)?;
                let Some(files) = blob_to_files.get(&blob) else { continue };
                let def = def_row(r, 1, &mut project.names).map_err(err)?;
                for &f in files {
                    project.files[f as usize].defs.push(def.clone());
                }
            }
        }
        {
            let mut stmt = conn
                .prepare("SELECT blob_id, text, module, line FROM imports ORDER BY blob_id, ord")
                .map_err(err)?;
            let mut rows = stmt.query([]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                let blob: i64 = r.get(0).map_err(err)?;
                let Some(files) = blob_to_files.get(&blob) else { continue };
                let row = ImportRow {
                    text: r.get(1).map_err(err)?,
                    module: r.get(2).map_err(err)?,
                    line: r.get(3).map_err(err)?,
                };
                for &f in files {
                    project.files[f as usize].imports.push(row.clone());
                }
            }
        }
        project.index_definitions();
        Ok(project)
    }

    /// Some files as `load` reads them, in the order of `paths` (a path the
    /// index does not have is an error: the caller read the listing first, under
    /// the same lock). Names are interned into `names`; references are decoded
    /// only when `refs` (resolution needs them, nothing else does).
    pub(crate) fn load_files(
        store: &Store,
        paths: &[&str],
        names: &mut Interner,
        refs: bool,
    ) -> Result<Vec<ProjectFile>> {
        let conn = store.conn();
        let err = |e| Error::db(store.path(), e);
        let mut file_stmt = conn
            .prepare_cached(
                "SELECT b.id, b.language, b.package, b.lines, b.hash, b.refs
                 FROM files f JOIN blobs b ON b.id = f.blob_id WHERE f.path = ?1",
            )
            .map_err(err)?;
        let mut def_stmt = conn
            .prepare_cached(
                "SELECT name, qualified_name, kind, line, end_line, name_line, start_byte, end_byte,
                        body_start, body_end, signature, doc, parent
                 FROM symbols WHERE blob_id = ?1 ORDER BY ord",
            )
            .map_err(err)?;
        let mut import_stmt = conn
            .prepare_cached(
                "SELECT text, module, line FROM imports WHERE blob_id = ?1 ORDER BY ord",
            )
            .map_err(err)?;
        let mut out = Vec::with_capacity(paths.len());
        for &path in paths {
            let mut rows = file_stmt.query([path]).map_err(err)?;
            let Some(r) = rows.next().map_err(err)? else {
                return Err(Error::Corrupt {
                    path: store.path().to_owned(),
                    reason: format!("{path} left the index while it was read"),
                });
            };
            let blob: i64 = r.get(0).map_err(err)?;
            let lang_name: String = r.get(1).map_err(err)?;
            let language = Language::from_name(&lang_name).ok_or_else(|| Error::Corrupt {
                path: store.path().to_owned(),
                reason: format!("{path} has an unknown language {lang_name:?}"),
            })?;
            let decoded = if refs {
                let bytes: Vec<u8> = r.get(5).map_err(err)?;
                crate::refcodec::decode_interned(&bytes, |name| names.intern(name)).ok_or_else(
                    || Error::Corrupt {
                        path: store.path().to_owned(),
                        reason: format!("references of {path} cannot be decoded"),
                    },
                )?
            } else {
                Vec::new()
            };
            let mut file = ProjectFile {
                path: path.to_owned(),
                language,
                package: r.get(2).map_err(err)?,
                lines: r.get(3).map_err(err)?,
                hash: r.get(4).map_err(err)?,
                defs: Vec::new(),
                imports: Vec::new(),
                refs: decoded,
            };
            drop(rows);
            let mut rows = def_stmt.query([blob]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                file.defs.push(def_row(r, 0, names).map_err(err)?);
            }
            let mut rows = import_stmt.query([blob]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                file.imports.push(ImportRow {
                    text: r.get(0).map_err(err)?,
                    module: r.get(1).map_err(err)?,
                    line: r.get(2).map_err(err)?,
                });
            }
            out.push(file);
        }
        Ok(out)
    }

    /// Every file's path, content hash and language, in path order: what tells
    /// a stored project which of its files changed. Milliseconds.
    pub(crate) fn listing(store: &Store) -> Result<Vec<FileStamp>> {
        let conn = store.conn();
        let err = |e| Error::db(store.path(), e);
        let mut stmt = conn
            .prepare(
                "SELECT f.path, b.hash, b.language FROM files f
                 JOIN blobs b ON b.id = f.blob_id ORDER BY f.path",
            )
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(err)? {
            let lang: String = r.get(2).map_err(err)?;
            // `load` leaves out what it has no language for; so does the listing.
            let Some(language) = Language::from_name(&lang) else { continue };
            out.push(FileStamp {
                path: r.get(0).map_err(err)?,
                hash: r.get(1).map_err(err)?,
                language,
            });
        }
        Ok(out)
    }

    /// See [`crate::Index::content_key`]. Reads the same rows `load` joins, without
    /// their contents: milliseconds where `load` takes seconds.
    pub(crate) fn content_key(store: &Store) -> Result<[u8; 32]> {
        let conn = store.conn();
        let err = |e| Error::db(store.path(), e);
        let mut h = stdx::ContentHasher::new();
        h.update(&crate::store::EXTRACTOR_REVISION.to_le_bytes());
        h.update(&crate::store::SCHEMA_VERSION.to_le_bytes());
        for (sql, tag) in [
            (
                "SELECT f.path, b.hash || ' ' || b.language FROM files f
                 JOIN blobs b ON b.id = f.blob_id ORDER BY f.path",
                b'f',
            ),
            // Manifests are among the skipped files (import resolution reads them).
            ("SELECT path, code FROM skipped ORDER BY path", b's'),
        ] {
            let mut stmt = conn.prepare(sql).map_err(err)?;
            let mut rows = stmt.query([]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                let a = r.get_ref(0).map_err(err)?.as_bytes().unwrap_or_default();
                let b = r.get_ref(1).map_err(err)?.as_bytes().unwrap_or_default();
                h.update(&[tag]);
                h.update(&(a.len() as u64).to_le_bytes());
                h.update(a);
                h.update(&(b.len() as u64).to_le_bytes());
                h.update(b);
            }
        }
        Ok(h.finish())
    }

    /// Builds a project from analyses directly (tests, fixtures).
    pub fn from_analyses(files: Vec<(String, Language, crate::extract::FileAnalysis)>) -> Project {
        let mut project = Project::default();
        for (path, language, a) in files {
            let refs = a
                .references
                .iter()
                .map(|r| Ref {
                    name: project.names.intern(&r.name),
                    kind: r.kind,
                    line: r.line,
                    column: r.column,
                    enclosing: r.enclosing,
                    receiver: r.receiver.as_deref().map(|t| project.names.intern(t)),
                })
                .collect();
            let defs = a
                .definitions
                .iter()
                .map(|d| Def {
                    name: project.names.intern(&d.name),
                    qualified_name: d.qualified_name.clone(),
                    kind: d.kind,
                    line: d.line,
                    end_line: d.end_line,
                    name_line: d.name_line,
                    start_byte: d.start_byte,
                    end_byte: d.end_byte,
                    body: d.body,
                    signature: d.signature.clone(),
                    doc: d.doc.clone(),
                    parent: d.parent,
                })
                .collect();
            let imports = a
                .imports
                .iter()
                .map(|i| ImportRow { text: i.text.clone(), module: i.module.clone(), line: i.line })
                .collect();
            let id = project.files.len() as FileId;
            project.by_path.insert(path.clone(), id);
            project.files.push(ProjectFile {
                path,
                language,
                package: a.package.clone(),
                lines: a.lines,
                hash: String::new(),
                defs,
                imports,
                refs,
            });
        }
        project.index_definitions();
        project
    }

    /// A project of these files (in path order) and names: what an update of a
    /// stored project assembles from the files it kept and the ones it read again.
    pub fn from_parts(names: Interner, files: Vec<ProjectFile>) -> Project {
        debug_assert!(files.windows(2).all(|w| w[0].path < w[1].path), "files in path order");
        let by_path =
            files.iter().enumerate().map(|(i, f)| (f.path.clone(), i as FileId)).collect();
        let mut project = Project { names, files, by_path, defs_by_name: HashMap::default() };
        project.index_definitions();
        project
    }

    /// The names and files (see [`Project::from_parts`]).
    pub fn into_parts(self) -> (Interner, Vec<ProjectFile>) {
        (self.names, self.files)
    }

    /// Each name's definitions in (file, ord) order: `graph::resolve_ref` finds a
    /// file's own definitions by binary search.
    fn index_definitions(&mut self) {
        self.defs_by_name.clear();
        for (f, file) in self.files.iter().enumerate() {
            for (ord, d) in file.defs.iter().enumerate() {
                self.defs_by_name
                    .entry(d.name)
                    .or_default()
                    .push(DefId { file: f as FileId, ord: ord as u32 });
            }
        }
    }

    pub fn file_id(&self, path: &str) -> Option<FileId> {
        self.by_path.get(path).copied()
    }

    pub fn file(&self, id: FileId) -> &ProjectFile {
        &self.files[id as usize]
    }

    pub fn def(&self, id: DefId) -> &Def {
        &self.files[id.file as usize].defs[id.ord as usize]
    }

    /// Every definition named `name`.
    pub fn defs_named(&self, name: NameId) -> &[DefId] {
        self.defs_by_name.get(&name).map_or(&[], Vec::as_slice)
    }

    pub fn defs_named_str(&self, name: &str) -> &[DefId] {
        self.names.get(name).map_or(&[], |n| self.defs_named(n))
    }

    /// All definitions, in file and source order.
    pub fn all_defs(&self) -> impl Iterator<Item = DefId> + '_ {
        self.files.iter().enumerate().flat_map(|(f, file)| {
            (0..file.defs.len() as u32).map(move |ord| DefId { file: f as FileId, ord })
        })
    }

    /// The definition at a 1-based line in a file (innermost containing it).
    pub fn def_at(&self, file: FileId, line: u32) -> Option<DefId> {
        let defs = &self.files[file as usize].defs;
        defs.iter()
            .enumerate()
            .filter(|(_, d)| d.line <= line && line <= d.end_line)
            .max_by_key(|(_, d)| (d.line, std::cmp::Reverse(d.end_line)))
            .map(|(ord, _)| DefId { file, ord: ord as u32 })
    }
}
