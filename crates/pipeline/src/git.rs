//! The pipeline's git: the real `git` CLI, every command logged.
//!
//! The `git` crate is read-only by design; the pipeline writes (fetch,
//! checkout, cherry-pick, commit, push, branch deletion), in the hub only —
//! never in the user's repository, which it only reads. `git` is a configured
//! tool, not a project command, so it runs directly (as in `crates/git`).

use std::path::Path;

use crate::layout::Logs;

/// What a git command did.
#[derive(Debug, Clone, Default)]
pub(crate) struct GitOut {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl GitOut {
    /// Standard output trimmed, or the error's words.
    pub(crate) fn ok(self) -> Result<String, String> {
        if self.success {
            Ok(self.stdout.trim().to_owned())
        } else {
            let why = if self.stderr.trim().is_empty() { self.stdout } else { self.stderr };
            Err(why.trim().to_owned())
        }
    }
}

/// Runs `git args` in `cwd`, logging the command and its outcome. The
/// environment marks the process as the pipeline's (`IRONBEES_PIPELINE=1`), so
/// the post-commit hook never fires for it, and never prompts.
pub(crate) fn git(cwd: &Path, args: &[&str], logs: Option<&Logs>) -> GitOut {
    #[allow(clippy::disallowed_methods)] // git is a tool, not a project command (see module docs)
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(cwd)
        .env("IRONBEES_PIPELINE", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null())
        .output();
    let out = match output {
        Ok(o) => GitOut {
            success: o.status.success(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        },
        Err(e) => {
            GitOut { success: false, stdout: String::new(), stderr: format!("cannot run git: {e}") }
        }
    };
    if let Some(logs) = logs {
        let status = if out.success { "ok" } else { "FAILED" };
        let mut line = format!("[{}] git {} → {status}", cwd.display(), args.join(" "));
        let detail = if out.success { "" } else { out.stderr.trim() };
        if !detail.is_empty() {
            line.push_str(&format!(": {}", stdx::clip(detail, 2000)));
        }
        logs.git(&line);
    }
    out
}

/// `git args` that must succeed, its output trimmed.
pub(crate) fn git_ok(cwd: &Path, args: &[&str], logs: Option<&Logs>) -> Result<String, String> {
    git(cwd, args, logs).ok().map_err(|e| format!("git {}: {e}", args.join(" ")))
}
