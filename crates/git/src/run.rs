//! Running `git` with settings that make its output parseable whatever the user's
//! configuration says.

use std::{
    path::Path,
    process::{Command, Output, Stdio},
};

use crate::error::{Error, Result};

/// Configuration that changes output formats; pinned for every call.
const PINNED: &[&str] = &[
    "-c",
    "core.quotePath=true",
    "-c",
    "color.ui=false",
    "-c",
    "log.showSignature=false",
    "-c",
    "diff.renames=true",
];

/// Runs `git <args>` in `dir` and returns its output, whatever the exit status.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<Output> {
    // git is a read-only tool here, not a project command: it runs directly rather
    // than through the sandbox (see ARCHITECTURE.md, `crates/git`).
    #[allow(clippy::disallowed_methods)]
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(PINNED)
        .args(args)
        .stdin(Stdio::null())
        // Never prompt for credentials, never take the index lock for a read,
        // stable English messages for the few we recognize.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    cmd.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotInstalled,
        _ => Error::Io { dir: dir.to_owned(), source: e },
    })
}

/// Like [`git`], but a non-zero exit is an error.
pub(crate) fn git_ok(dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = git(dir, args)?;
    if !out.status.success() {
        return Err(failed(dir, args, &out));
    }
    Ok(out.stdout)
}

pub(crate) fn failed(dir: &Path, args: &[&str], out: &Output) -> Error {
    Error::Failed {
        dir: dir.to_owned(),
        args: args.join(" "),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
    }
}

/// git's stderr says the directory is not in a work tree (or repository).
pub(crate) fn not_a_repository(out: &Output) -> bool {
    let err = String::from_utf8_lossy(&out.stderr);
    err.contains("not a git repository") || err.contains("not a work tree")
}
