//! Project instructions from `AGENTS.md` files, the convention Codex, Cursor and
//! others share: a file applies to its directory's subtree, so the instructions for
//! a set of paths are the root's file plus every nested one on the way to them.

use std::{
    collections::BTreeSet,
    fmt::Write as _,
    io::Read,
    path::{Component, Path, PathBuf},
};

const FILE_NAME: &str = "AGENTS.md";

/// The `AGENTS.md` files that apply to some paths, root first, cut to a budget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Instructions {
    /// Root first; a directory's file before its subdirectories' files.
    pub files: Vec<InstructionFile>,
    /// Files left out whole because the budget ran out (in the same order).
    pub omitted: Vec<String>,
    /// Files that exist but were not read: (path, reason). A symlink leaving the
    /// root is one; the caller may warn.
    pub unreadable: Vec<(String, String)>,
    /// The budget the texts were cut to, in bytes.
    pub max_bytes: usize,
}

/// One `AGENTS.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InstructionFile {
    /// Relative to the project root, `/`-separated (`AGENTS.md`, `src/api/AGENTS.md`).
    pub path: String,
    pub text: String,
    /// The file's full size in bytes when `text` is only its beginning.
    pub cut_from: Option<u64>,
}

/// Collects `<root>/AGENTS.md` and every `AGENTS.md` in a directory on the way from
/// the root to each of `paths` (relative to `root`; a path that is a directory
/// counts its own file), at most `max_bytes` of text in total.
///
/// The order is by directory, ancestors first, whatever the order of `paths`: the
/// same files always give the same prompt (and the same prompt-cache prefix), and
/// when the budget runs out the general instructions are the ones kept.
///
/// Only files under `root` are read: absolute paths and paths that leave it with
/// `..` contribute nothing, and a file that resolves outside it through a symlink
/// is listed in `unreadable`.
pub fn project_instructions(root: &Path, paths: &[&str], max_bytes: usize) -> Instructions {
    let mut dirs: BTreeSet<Vec<String>> = BTreeSet::new();
    dirs.insert(Vec::new());
    for path in paths {
        let Some(parts) = normalize(path) else { continue };
        let is_dir = root.join(parts.join("/")).is_dir();
        let ancestors = if is_dir { parts.len() } else { parts.len().saturating_sub(1) };
        for depth in 1..=ancestors {
            dirs.insert(parts[..depth].to_vec());
        }
    }

    let mut out = Instructions { max_bytes, ..Default::default() };
    let Ok(jail) = root.canonicalize() else { return out };
    let mut left = max_bytes;
    for dir in dirs {
        let rel = dir.iter().map(|d| format!("{d}/")).collect::<String>() + FILE_NAME;
        let file = root.join(&rel);
        let Ok(meta) = std::fs::metadata(&file) else { continue };
        if !meta.is_file() {
            continue;
        }
        if left == 0 {
            out.omitted.push(rel);
            continue;
        }
        match read_prefix(&file, &jail, left) {
            Ok((text, cut)) => {
                left -= text.len();
                if cut {
                    // Nothing after a cut file: a later file's rules without the
                    // rest of this one's could read as overriding them.
                    left = 0;
                }
                out.files.push(InstructionFile {
                    path: rel,
                    text,
                    cut_from: cut.then_some(meta.len()),
                });
            }
            Err(reason) => out.unreadable.push((rel, reason)),
        }
    }
    out
}

/// `a/./b/../c` → `[a, c]`; `None` for paths that are absolute or leave the root.
fn normalize(path: &str) -> Option<Vec<String>> {
    let mut parts: Vec<String> = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts)
}

/// At most `limit` bytes of the file as text, and whether it was cut: at a line end
/// when one is in the second half of what fits, else at a character boundary.
fn read_prefix(file: &Path, jail: &Path, limit: usize) -> Result<(String, bool), String> {
    let real: PathBuf = file.canonicalize().map_err(|e| e.to_string())?;
    if !real.starts_with(jail) {
        return Err(format!("resolves outside the project root, to {}", real.display()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&real)
        .and_then(|f| f.take(limit as u64 + 1).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    let cut = text.len() > limit;
    if cut {
        let mut end = text.floor_char_boundary(limit);
        if let Some(nl) = text[..end].rfind('\n')
            && nl + 1 >= end / 2
        {
            end = nl + 1;
        }
        text.truncate(end);
    }
    Ok((text, cut))
}

impl Instructions {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.omitted.is_empty()
    }

    /// `system_prompt` followed by the instructions under one heading, each file
    /// under its path, with a note where the budget cut them. Unchanged when
    /// there are none.
    pub fn append_to(&self, system_prompt: &str) -> String {
        if self.is_empty() {
            return system_prompt.to_string();
        }
        let mut out = system_prompt.trim_end().to_string();
        out.push_str(
            "\n\n# Project instructions (AGENTS.md)\n\n\
             The project's maintainers wrote these for coding agents. Follow them. Each \
             file applies to its directory and everything below it; where two disagree, \
             the deeper file wins for its directory. They do not override the task or \
             the output format above.\n",
        );
        for f in &self.files {
            let _ = write!(out, "\n## {}\n\n{}", f.path, f.text.trim_end());
            if let Some(total) = f.cut_from {
                let _ = write!(
                    out,
                    "\n\n[{} is cut here: {} of its {total} bytes fit the {}-byte limit]",
                    f.path,
                    f.text.len(),
                    self.max_bytes
                );
            }
            out.push('\n');
        }
        if !self.omitted.is_empty() {
            let _ = write!(
                out,
                "\n[Left out, over the {}-byte limit: {}. Read them if your work touches their \
                 directories.]\n",
                self.max_bytes,
                self.omitted.join(", ")
            );
        }
        out
    }
}
