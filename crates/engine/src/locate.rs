//! From what a caller typed to definitions and files: `Server.start`,
//! `edit::Engine::apply`, `parse`, `src/app.py:42`.

use code_graph::Snapshot;
use code_index::{DefId, FileId};

/// `a::b`, `a#b`, `a->b`, `a/b` and `a.b` all mean the same path of names.
pub(crate) fn normalize(name: &str) -> String {
    name.trim().replace("::", ".").replace("->", ".").replace(['#', '/'], ".")
}

fn last_segment(norm: &str) -> &str {
    norm.rsplit('.').next().unwrap_or(norm)
}

/// `path:line` when `path` is an indexed file.
pub(crate) fn path_line(snap: &Snapshot, target: &str) -> Option<(FileId, u32)> {
    let (path, line) = target.rsplit_once(':')?;
    let line: u32 = line.trim().parse().ok()?;
    let path = path.trim().trim_start_matches("./");
    Some((snap.project.file_id(path)?, line))
}

/// Definitions `target` names, best first: exact qualified name, then a qualified
/// suffix (`Engine.apply` for `edit.Engine.apply`), then the bare name; within
/// each, source files before tests and central files first. `within` keeps only
/// definitions in that file or directory.
pub(crate) fn find_defs(snap: &Snapshot, target: &str, within: Option<&str>) -> Vec<DefId> {
    let p = &snap.project;
    if let Some((file, line)) = path_line(snap, target) {
        return p.def_at(file, line).into_iter().collect();
    }
    let norm = normalize(target);
    let last = last_segment(&norm);
    if last.is_empty() {
        return Vec::new();
    }
    let qualified = norm.contains('.');
    let inside = |d: &DefId| match within {
        Some(w) => {
            let path = &p.file(d.file).path;
            let w = w.trim_end_matches('/');
            path == w || path.starts_with(&format!("{w}/"))
        }
        None => true,
    };
    let mut cands: Vec<DefId> = p.defs_named_str(last).iter().copied().filter(inside).collect();
    if cands.is_empty() {
        // Case-insensitive name, for people who type `httprequest`.
        let lower = last.to_lowercase();
        for id in 0..p.names.len() as u32 {
            if p.names.name(id).to_lowercase() == lower {
                cands.extend(p.defs_named(id).iter().copied().filter(inside));
            }
        }
    }
    let qn = |d: &DefId| normalize(&p.def(*d).qualified_name);
    let exact: Vec<DefId> = cands.iter().copied().filter(|d| qn(d) == norm).collect();
    let mut out = if !exact.is_empty() {
        exact
    } else {
        let suffix: Vec<DefId> =
            cands.iter().copied().filter(|d| qn(d).ends_with(&format!(".{norm}"))).collect();
        if !suffix.is_empty() {
            suffix
        } else if qualified {
            // `Session.resolve_redirects` where `Session` inherits the method
            // (issue 24.14): the nearest base's. Else `module.func` where the module
            // is the file: definitions whose file path mentions the qualifier.
            let owner = norm.rsplit('.').nth(1).unwrap_or_default();
            let inherited = code_graph::methods_of_type(p, &cands, vec![owner]);
            if !inherited.is_empty() {
                inherited
            } else {
                let qual =
                    norm.rsplit_once('.').map(|(q, _)| q.replace('.', "/")).unwrap_or_default();
                cands.into_iter().filter(|d| p.file(d.file).path.contains(&qual)).collect()
            }
        } else {
            cands
        }
    };
    out.sort_by(|a, b| {
        let key = |d: &DefId| {
            let path = &p.file(d.file).path;
            (
                crate::analysis::is_test_path(path),
                std::cmp::Reverse(OrdF64(snap.file_rank[d.file as usize])),
            )
        };
        key(a).cmp(&key(b)).then(a.cmp(b))
    });
    out
}

/// Names in the project closest to `wanted` (for NOT_FOUND), at most five.
pub(crate) fn similar_names(snap: &Snapshot, wanted: &str) -> Vec<String> {
    let norm = normalize(wanted);
    let w = last_segment(&norm).to_lowercase();
    if w.is_empty() {
        return Vec::new();
    }
    let p = &snap.project;
    let limit = (w.chars().count() / 3).clamp(1, 3);
    let mut scored: Vec<(usize, String)> = Vec::new();
    for id in 0..p.names.len() as u32 {
        let defs = p.defs_named(id);
        if defs.is_empty() {
            continue;
        }
        let name = p.names.name(id);
        let lower = name.to_lowercase();
        let d = if lower.contains(&w) || (w.len() >= 4 && w.contains(&lower) && lower.len() >= 4) {
            Some(0)
        } else {
            stdx::edit_distance_within(&lower, &w, limit)
        };
        if let Some(d) = d {
            scored.push((d, p.def(defs[0]).qualified_name.clone()));
        }
    }
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, n)| n).collect()
}

/// An f64 with a total order (NaN last), for sort keys.
pub(crate) struct OrdF64(pub f64);
impl PartialEq for OrdF64 {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for OrdF64 {}
impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdF64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_normalize() {
        for (input, want) in [
            ("edit::Engine::apply", "edit.Engine.apply"),
            ("Server#start", "Server.start"),
            (" a->b ", "a.b"),
            ("pkg/mod.fn", "pkg.mod.fn"),
        ] {
            assert_eq!(normalize(input), want, "{input}");
        }
    }
}
