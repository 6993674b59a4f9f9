//! Repository facts: where the work tree is, what HEAD is, a file as HEAD has it.

use std::path::{Path, PathBuf};

use crate::{
    error::Result,
    run::{failed, git, not_a_repository},
};

/// The top of the work tree containing `dir`; None when `dir` is not in one.
pub fn toplevel(dir: &Path) -> Result<Option<PathBuf>> {
    let out = git(dir, &["rev-parse", "--show-toplevel"])?;
    if !out.status.success() {
        if not_a_repository(&out) {
            return Ok(None);
        }
        return Err(failed(dir, &["rev-parse", "--show-toplevel"], &out));
    }
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok((!text.is_empty()).then(|| PathBuf::from(text)))
}

/// Whether `dir` is inside a git work tree.
pub fn is_repository(dir: &Path) -> Result<bool> {
    Ok(toplevel(dir)?.is_some())
}

/// The commit HEAD points at; None outside a repository or before the first commit.
pub fn head(dir: &Path) -> Result<Option<String>> {
    let out = git(dir, &["rev-parse", "--verify", "-q", "HEAD"])?;
    if !out.status.success() {
        if not_a_repository(&out) || out.stderr.is_empty() {
            return Ok(None);
        }
        return Err(failed(dir, &["rev-parse", "--verify", "-q", "HEAD"], &out));
    }
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok((!text.is_empty()).then_some(text))
}

/// The content of `rel` (relative to `dir`, `/`-separated) as committed at HEAD;
/// None when the file is not in HEAD, there is no commit yet, or `dir` is not in a
/// repository. Bytes as stored (no filters, no text conversion).
pub fn file_at_head(dir: &Path, rel: &str) -> Result<Option<Vec<u8>>> {
    // `HEAD:./p` is relative to the current directory, so `dir` may be a
    // subdirectory of the work tree.
    let spec = format!("HEAD:./{}", rel.trim_start_matches("./"));
    let out = git(dir, &["cat-file", "blob", &spec])?;
    if out.status.success() {
        return Ok(Some(out.stdout));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let missing = not_a_repository(&out)
        || err.contains("does not exist")
        || err.contains("not a valid object name")
        || err.contains("invalid object name")
        || err.contains("exists on disk, but not in")
        || err.contains("bad file")
        || err.contains("unable to resolve");
    if missing {
        return Ok(None);
    }
    Err(failed(dir, &["cat-file", "blob", &spec], &out))
}

/// The files git tracks under `dir` (relative to it, `/`-separated), whatever the
/// ignore files say: a tracked file matching `.gitignore` (a committed
/// `_version.py`, a test's `.env`) is still the project's. None when `dir` is not
/// in a work tree.
pub fn tracked_files(dir: &Path) -> Result<Option<Vec<String>>> {
    let args = ["ls-files", "-z", "--cached", "--full-name", "--", "."];
    let out = git(dir, &args)?;
    if !out.status.success() {
        if not_a_repository(&out) {
            return Ok(None);
        }
        return Err(failed(dir, &args, &out));
    }
    // `--full-name` gives paths from the top of the work tree; make them relative
    // to `dir` (which may be a subdirectory of it).
    let Some(top) = toplevel(dir)? else { return Ok(None) };
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_owned());
    let prefix = canonical
        .strip_prefix(top.canonicalize().unwrap_or(top))
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    let prefix = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
    Ok(Some(
        out.stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .filter_map(|p| std::str::from_utf8(p).ok())
            .filter_map(|p| p.strip_prefix(prefix.as_str()).map(str::to_owned))
            .collect(),
    ))
}

/// What [`diff`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffOf<'a> {
    /// The index against HEAD: what `git commit` would record (a pre-commit hook).
    Staged,
    /// The work tree against HEAD, staged or not (untracked files are not in it).
    WorkTree,
    /// A revision range (`main..HEAD`, `HEAD~3`), as `git diff` reads it.
    Revs(&'a str),
}

/// A unified diff without context lines (`-U0`), `a/`/`b/` prefixes, paths
/// unquoted, no external diff drivers or text conversion: the format a patch
/// file has, for tools that read the lines a change adds.
pub fn diff(dir: &Path, of: DiffOf<'_>) -> Result<String> {
    let mut args = vec![
        "-c",
        "core.quotePath=false",
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "-U0",
        "--src-prefix=a/",
        "--dst-prefix=b/",
    ];
    match of {
        DiffOf::Staged => args.push("--cached"),
        DiffOf::WorkTree => args.push("HEAD"),
        DiffOf::Revs(r) => {
            // A range starting with `-` would be read as an option.
            if r.starts_with('-') {
                return Err(crate::Error::Failed {
                    dir: dir.to_owned(),
                    args: format!("diff {r}"),
                    stderr: "a revision range cannot start with `-`".into(),
                });
            }
            args.push(r);
        }
    }
    args.push("--");
    let out = git(dir, &args)?;
    if !out.status.success() {
        return Err(failed(dir, &args, &out));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
