//! Updating a stored snapshot for the files that changed since it was built.
//!
//! A snapshot is a pure function of the index's files (and the manifests), and
//! most of it is per file: a file's edges are a function of its own references
//! and definitions, its resolved imports, and the definitions of the names its
//! resolution looked up (see `AskedNames`); its row of the file graph is a
//! function of its edges and imports. So when some files changed:
//!
//! 1. the changed and added files are read again from the index, the removed
//!    ones dropped;
//! 2. the *changed names* are the names whose definitions in those files differ
//!    in anything resolution reads (kind, whether a class holds it, qualified
//!    name, signature), or whose files appeared or went; a change inside
//!    function bodies changes none;
//! 3. imports are resolved again: for the changed files only, unless what
//!    import resolution reads of the project (paths, languages, packages, C#
//!    namespaces) changed, and then for every file;
//! 4. a file is resolved again when it changed, when its imports now resolve
//!    differently, or when it looked up a changed name; every other file keeps
//!    its edges, lookups and row (file and definition numbers renumbered);
//! 5. the file ranks are computed again (one power iteration over the file
//!    graph, a small part of the work).
//!
//! The result is the snapshot a build from scratch gives (the tests compare
//! them, edge for edge and rank for rank); when too much changed to be worth it,
//! the caller builds from scratch.

use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use code_index::{Def, DefId, FileId, Index, Language, Project, ProjectFile, Result};
use protocol::SymbolKind;

use crate::{
    Snapshot,
    graph::{
        AskedBuilder, EdgeRuns, FileLinks, Graphs, Resolver, SymbolEdge, encode_into,
        is_type_container,
    },
    rank::pagerank,
    resolve::{Manifest, ResolvedImport, resolve_imports, resolve_imports_of},
};

/// How a snapshot came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Derivation {
    /// From scratch: every file read and resolved.
    Built,
    /// From a stored one: `changed` files read again (changed, added or
    /// removed), `resolved` files' references resolved again.
    Updated { changed: usize, resolved: usize },
}

/// Past this share of the files changed, an update is not worth its
/// bookkeeping: the caller builds from scratch.
const MAX_CHANGED_SHARE: f64 = 0.25;

/// Where each file of the new project comes from.
enum Slot {
    /// Unchanged: the earlier snapshot's file of this number.
    Kept(FileId),
    /// Read again (changed: the earlier file of this number; or added), the
    /// `n`th file read.
    Read { earlier: Option<FileId>, n: usize },
}

/// What resolution reads of a definition, besides its name and file.
#[derive(PartialEq)]
struct DefShape<'a> {
    kind: SymbolKind,
    /// Top level, in a class (or other type), or in something else.
    held: Option<bool>,
    qualified_name: &'a str,
    signature: &'a str,
}

fn shape<'a>(defs: &'a [Def], d: &'a Def) -> DefShape<'a> {
    DefShape {
        kind: d.kind,
        held: d.parent.map(|p| is_type_container(defs[p as usize].kind)),
        qualified_name: &d.qualified_name,
        signature: &d.signature,
    }
}

/// The definitions of `file` by name, in order.
fn by_name<'a>(
    project_names: &'a code_index::Interner,
    file: &'a ProjectFile,
) -> HashMap<&'a str, Vec<u32>> {
    let mut out: HashMap<&str, Vec<u32>> = HashMap::default();
    for (ord, d) in file.defs.iter().enumerate() {
        out.entry(project_names.name(d.name)).or_default().push(ord as u32);
    }
    out
}

/// What import resolution reads of a file besides its path.
fn import_context(file: &ProjectFile) -> (Language, Option<&str>, Vec<&str>) {
    let namespaces = file
        .defs
        .iter()
        .filter(|d| d.kind == SymbolKind::Namespace)
        .map(|d| d.qualified_name.as_str())
        .collect();
    (file.language, file.package.as_deref(), namespaces)
}

/// `earlier` brought up to the index's files, or `None` when too much changed
/// (build from scratch). `manifests` must be the ones `earlier` was built
/// with (the caller's key says so).
pub(crate) fn update(
    earlier: Snapshot,
    index: &Index,
    manifests: &[Manifest],
) -> Result<Option<(Snapshot, Derivation)>> {
    let listing = index.listing()?;
    let Snapshot { project: old, graphs: mut old_graphs, file_rank: old_rank, .. } = earlier;

    // 1. Which files changed: a merge of two path-ordered lists.
    let mut slots = Vec::with_capacity(listing.len());
    let mut to_read: Vec<&str> = Vec::new();
    let mut removed: Vec<FileId> = Vec::new();
    let mut i = 0;
    for stamp in &listing {
        while i < old.files.len() && old.files[i].path < stamp.path {
            removed.push(i as FileId);
            i += 1;
        }
        let earlier = (i < old.files.len() && old.files[i].path == stamp.path).then(|| {
            i += 1;
            (i - 1) as FileId
        });
        match earlier {
            Some(e)
                if old.files[e as usize].hash == stamp.hash
                    && old.files[e as usize].language == stamp.language =>
            {
                slots.push(Slot::Kept(e));
            }
            _ => {
                slots.push(Slot::Read { earlier, n: to_read.len() });
                to_read.push(&stamp.path);
            }
        }
    }
    removed.extend(i as FileId..old.files.len() as FileId);
    let changed = to_read.len() + removed.len();
    if changed == 0 {
        let snapshot = Snapshot::new(old, old_graphs, old_rank);
        return Ok(Some((snapshot, Derivation::Updated { changed: 0, resolved: 0 })));
    }
    if changed as f64 > MAX_CHANGED_SHARE * listing.len().max(old.files.len()) as f64 {
        return Ok(None);
    }

    let (mut names, mut old_files) = old.into_parts();
    // Another process updating the index between the listing and this read:
    // what it saw is gone, and a build from scratch reads it all afresh.
    let mut read = match index.project_files(&to_read, &mut names, true) {
        Err(code_index::Error::Corrupt { .. }) => return Ok(None),
        other => other?,
    };

    // 2. The changed names, and where a changed file's unchanged definitions
    // went (`moved[old file][old ord]`).
    let mut changed_names: HashSet<String> = HashSet::default();
    let mut moved: HashMap<FileId, Vec<Option<u32>>> = HashMap::default();
    for slot in &slots {
        let Slot::Read { earlier, n } = *slot else { continue };
        let new = &read[n];
        let Some(e) = earlier else {
            changed_names.extend(new.defs.iter().map(|d| names.name(d.name).to_owned()));
            continue;
        };
        let old_file = &old_files[e as usize];
        let mut map = vec![None; old_file.defs.len()];
        if old_file.language != new.language {
            for d in old_file.defs.iter().chain(&new.defs) {
                changed_names.insert(names.name(d.name).to_owned());
            }
        } else {
            let (old_by, new_by) = (by_name(&names, old_file), by_name(&names, new));
            for (name, old_ords) in &old_by {
                let same = new_by.get(name).is_some_and(|new_ords| {
                    new_ords.len() == old_ords.len()
                        && old_ords.iter().zip(new_ords).all(|(&a, &b)| {
                            shape(&old_file.defs, &old_file.defs[a as usize])
                                == shape(&new.defs, &new.defs[b as usize])
                        })
                });
                if same {
                    for (&a, &b) in old_ords.iter().zip(&new_by[name]) {
                        map[a as usize] = Some(b);
                    }
                } else {
                    changed_names.insert((*name).to_owned());
                }
            }
            for name in new_by.keys().filter(|n| !old_by.contains_key(*n)) {
                changed_names.insert((*name).to_owned());
            }
        }
        moved.insert(e, map);
    }
    for &e in &removed {
        changed_names
            .extend(old_files[e as usize].defs.iter().map(|d| names.name(d.name).to_owned()));
    }

    // Whether import resolution sees the same project: no file came or went,
    // and no changed file changed what it reads of one.
    let same_context = removed.is_empty()
        && slots.iter().all(|s| match *s {
            Slot::Kept(_) => true,
            Slot::Read { earlier: None, .. } => false,
            Slot::Read { earlier: Some(e), n } => {
                import_context(&old_files[e as usize]) == import_context(&read[n])
            }
        });

    // Old file number → new, for every file still there (changed ones too).
    let mut renumber: Vec<Option<FileId>> = vec![None; old_files.len()];
    for (f, slot) in slots.iter().enumerate() {
        match *slot {
            Slot::Kept(e) | Slot::Read { earlier: Some(e), .. } => {
                renumber[e as usize] = Some(f as FileId)
            }
            Slot::Read { earlier: None, .. } => {}
        }
    }

    // The new project: kept files moved over, read ones put in place.
    let mut files = Vec::with_capacity(slots.len());
    let mut read_iter = read.iter_mut();
    for slot in &slots {
        match *slot {
            Slot::Kept(e) => {
                files.push(std::mem::replace(&mut old_files[e as usize], empty_file()))
            }
            Slot::Read { .. } => files.push(std::mem::replace(
                read_iter.next().expect("one per read slot"),
                empty_file(),
            )),
        }
    }
    // (Old versions of changed files are still in `old_files`, for nothing more.)
    drop(read);
    let mut project = Project::from_parts(names, files);

    // 3. Imports (the stored ones moved out, not copied).
    let mut old_imports = std::mem::take(&mut old_graphs.imports);
    let renumber_import = |imp: &ResolvedImport| -> Option<ResolvedImport> {
        let mut imp = imp.clone();
        if let crate::resolve::ImportTarget::Files(fs) = &mut imp.target {
            for f in fs.iter_mut() {
                *f = renumber[*f as usize]?;
            }
        }
        Some(imp)
    };
    let imports: Vec<Vec<ResolvedImport>>;
    let mut affected = vec![false; slots.len()];
    if same_context {
        let reread: Vec<FileId> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, Slot::Read { .. }))
            .map(|(f, _)| f as FileId)
            .collect();
        let mut fresh = resolve_imports_of(&project, manifests, &reread).into_iter();
        imports = slots
            .iter()
            .map(|s| match *s {
                // Same numbers: no file came or went.
                Slot::Kept(e) => std::mem::take(&mut old_imports[e as usize]),
                Slot::Read { .. } => fresh.next().expect("one per read file"),
            })
            .collect();
    } else {
        imports = resolve_imports(&project, manifests);
        for (f, slot) in slots.iter().enumerate() {
            if let Slot::Kept(e) = *slot {
                let before: Option<Vec<ResolvedImport>> =
                    old_imports[e as usize].iter().map(renumber_import).collect();
                if before.as_ref() != Some(&imports[f]) {
                    affected[f] = true;
                }
            }
        }
    }

    // 4. Which files to resolve again.
    let (asked, runs) = old_graphs.aid();
    let hit_ids: HashSet<u32> = asked
        .names
        .iter()
        .enumerate()
        .filter(|(_, n)| changed_names.contains(n.as_str()))
        .map(|(i, _)| i as u32)
        .collect();
    let renumber_def = |d: DefId| -> Option<DefId> {
        let file = renumber[d.file as usize]?;
        let ord = match moved.get(&d.file) {
            Some(map) => (*map.get(d.ord as usize)?)?,
            None => d.ord,
        };
        Some(DefId { file, ord })
    };
    let renumber_edge = |e: &SymbolEdge| -> Option<SymbolEdge> {
        Some(SymbolEdge {
            from_file: renumber[e.from_file as usize]?,
            from: match e.from {
                Some(d) => Some(renumber_def(d)?),
                None => None,
            },
            to: renumber_def(e.to)?,
            ..*e
        })
    };
    let renumber_row = |row: &[(FileId, f64)]| -> Option<Vec<(FileId, f64)>> {
        row.iter().map(|&(to, w)| Some((renumber[to as usize]?, w))).collect()
    };
    for (f, slot) in slots.iter().enumerate() {
        let Slot::Kept(e) = *slot else {
            affected[f] = true;
            continue;
        };
        affected[f] |= e as usize >= asked.files()
            || asked.of(e).iter().any(|id| hit_ids.contains(id))
            || renumber_row(&old_graphs.file_out[e as usize]).is_none();
    }

    // References of the kept files to resolve again (changed files have theirs).
    let again: Vec<FileId> = (0..slots.len() as FileId)
        .filter(|&f| affected[f as usize] && matches!(slots[f as usize], Slot::Kept(_)))
        .collect();
    let paths: Vec<String> = again.iter().map(|&f| project.file(f).path.clone()).collect();
    let path_refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let reread = match index.project_files(&path_refs, &mut project.names, true) {
        Err(code_index::Error::Corrupt { .. }) => return Ok(None),
        other => other?,
    };
    for (&f, file) in again.iter().zip(reread) {
        project.files[f as usize].refs = file.refs;
    }

    // Resolve the affected files; the others keep their rows.
    let resolver = Resolver::new(&project, manifests, affected.iter().filter(|&&a| a).count());
    let n = slots.len();
    let mut fresh_edges: Vec<Option<Vec<SymbolEdge>>> = (0..n).map(|_| None).collect();
    let mut fresh_asked: Vec<Option<Vec<&str>>> = (0..n).map(|_| None).collect();
    let mut rows: Vec<Vec<(FileId, f64)>> = vec![Vec::new(); n];
    let mut file_imports = vec![Vec::new(); n];
    let mut externals = vec![Vec::new(); n];
    let mut resolved = 0;
    let affected_files = (0..n as FileId).filter(|&f| affected[f as usize]);
    resolver.resolve_files(affected_files, &imports, |f, r| {
        let f = f as usize;
        resolved += 1;
        fresh_edges[f] = Some(r.edges);
        fresh_asked[f] = Some(r.asked);
        rows[f] = r.row;
        file_imports[f] = r.files;
        externals[f] = r.externals;
    });
    for (f, slot) in slots.iter().enumerate() {
        if let Slot::Kept(e) = *slot
            && !affected[f]
        {
            let links = FileLinks::new(f as FileId, &imports[f]);
            rows[f] = renumber_row(&old_graphs.file_out[e as usize]).expect("checked above");
            file_imports[f] = links.files;
            externals[f] = links.externals;
        }
    }
    drop(resolver);

    // The table is the stored one's (decoded for this update alone: taken, not
    // copied, when no one else holds it).
    let (names, asked) = match Arc::try_unwrap(asked) {
        Ok(mut a) => (std::mem::take(&mut a.names), Arc::new(a)),
        Err(a) => (a.names.clone(), a),
    };
    let fresh_names = fresh_asked.iter().flatten().flatten().copied();
    let mut builder = AskedBuilder::with_names(names, fresh_names);
    for (f, slot) in slots.iter().enumerate() {
        match (fresh_asked[f].take(), slot) {
            (Some(fresh), _) => builder.push(fresh),
            (None, Slot::Kept(e)) => builder.push_ids(asked.of(*e)),
            (None, Slot::Read { .. }) => unreachable!("read files are affected"),
        }
    }
    let new_asked = builder.finish();

    // Nothing renumbered (no file came or went, no kept definition moved): the
    // kept files' edges are the stored bytes, copied as they are.
    let identity = removed.is_empty()
        && slots.iter().all(|s| !matches!(s, Slot::Read { earlier: None, .. }))
        && moved
            .values()
            .all(|m| m.iter().enumerate().all(|(a, b)| b.is_none_or(|b| b as usize == a)));
    let stored = old_graphs.encoded_edge_bytes().zip(runs).filter(|(_, runs)| {
        identity && runs.counts.len() == old_files.len() && runs.lens.len() == old_files.len()
    });
    let graphs = if let Some((bytes, runs)) = stored {
        let Ok((_, rest)) = postcard::take_from_bytes::<usize>(bytes) else {
            return Ok(None);
        };
        let mut at = bytes.len() - rest.len();
        let mut starts = Vec::with_capacity(n);
        for &len in &runs.lens {
            starts.push(at);
            at += len as usize;
        }
        if at != bytes.len() {
            return Ok(None); // not the runs of these bytes
        }
        let total: usize = (0..n)
            .map(|f| match &fresh_edges[f] {
                Some(fresh) => fresh.len(),
                None => runs.counts[f] as usize,
            })
            .sum();
        let mut out = Vec::with_capacity(bytes.len() + (1 << 16));
        encode_into(&mut out, &total);
        let mut new_runs = EdgeRuns { counts: vec![0; n], lens: vec![0; n] };
        for f in 0..n {
            let before = out.len();
            match fresh_edges[f].take() {
                Some(fresh) => {
                    for e in &fresh {
                        encode_into(&mut out, e);
                    }
                    new_runs.counts[f] = fresh.len() as u32;
                }
                None => {
                    out.extend_from_slice(&bytes[starts[f]..starts[f] + runs.lens[f] as usize]);
                    new_runs.counts[f] = runs.counts[f];
                }
            }
            new_runs.lens[f] = (out.len() - before) as u32;
        }
        Graphs::assemble_encoded(imports, rows, file_imports, externals, out, new_runs, new_asked)
    } else {
        // The edges in file order: the kept files' streamed from the stored
        // snapshot (in the same order) and renumbered, the others' fresh ones
        // between them.
        let fresh: usize = fresh_edges.iter().flatten().map(Vec::len).sum();
        let mut edges = Vec::with_capacity(old_graphs.edge_count() + fresh);
        let mut next = 0;
        let mut emit_until = |upto: usize, edges: &mut Vec<SymbolEdge>| {
            while next < upto {
                if let Some(fresh) = fresh_edges[next].take() {
                    edges.extend(fresh);
                }
                next += 1;
            }
        };
        // Everything a kept file's edges point at is still there: it looked
        // up no changed name. Should that ever not hold, the update gives up
        // rather than keep an edge to nothing.
        let mut lost = false;
        old_graphs.for_each_edge(|e| {
            let Some(f) = renumber[e.from_file as usize] else { return };
            if affected[f as usize] {
                return;
            }
            emit_until(f as usize, &mut edges);
            match renumber_edge(e) {
                Some(e) => edges.push(e),
                None => lost = true,
            }
        });
        if lost {
            return Ok(None);
        }
        emit_until(n, &mut edges);
        Graphs::assemble(imports, rows, file_imports, externals, edges, new_asked)
    };
    for f in &mut project.files {
        f.refs = Vec::new();
    }
    // 5. Ranks.
    let file_rank = pagerank(&graphs.file_out, None, 0.85);
    Ok(Some((Snapshot::new(project, graphs, file_rank), Derivation::Updated { changed, resolved })))
}

fn empty_file() -> ProjectFile {
    ProjectFile {
        path: String::new(),
        language: Language::Python,
        package: None,
        lines: 0,
        hash: String::new(),
        defs: Vec::new(),
        imports: Vec::new(),
        refs: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
