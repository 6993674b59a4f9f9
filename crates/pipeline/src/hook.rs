//! `install-hook`: a post-commit hook that starts the pipeline in the
//! background, so the user's commit returns at once.
//!
//! Not re-entrant: every git command the pipeline runs, and the pipeline the
//! hook starts, carry `IRONBEES_PIPELINE=1`, which the hook checks first
//! (`ironbees commit` sets it too: it starts the pipeline itself). The hub's
//! commits never reach it anyway: the hub is another repository.

use std::path::{Path, PathBuf};

use protocol::ErrorCode;

use crate::{
    error::{Error, Result},
    git::git_ok,
    layout::Layout,
};

const MARKER: &str = "# installed by `ironbees pipeline install-hook`";

/// What `install_hook` did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HookOutcome {
    pub path: PathBuf,
    /// False when our hook was there already (rewritten).
    pub created: bool,
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The hook's text: `program` (this binary) with `args` before the command.
pub fn hook_script(program: &Path, args: &[String], root: &Path, log: &Path) -> String {
    let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
    format!(
        "#!/bin/sh\n{MARKER}\n\
         # Starts the commit pipeline on the new commit, in the background; answer its\n\
         # approvals with `pipeline resume ID --approve` (or set pipeline.autoApprove).\n\
         [ -n \"$IRONBEES_PIPELINE\" ] && exit 0\n\
         mkdir -p {logdir}\n\
         ( IRONBEES_PIPELINE=1 nohup {program} -C {root} {args} pipeline start </dev/null >>{log} 2>&1 & )\n\
         exit 0\n",
        logdir = quote(&log.parent().unwrap_or(Path::new(".")).display().to_string()),
        program = quote(&program.display().to_string()),
        root = quote(&root.display().to_string()),
        args = args.join(" "),
        log = quote(&log.display().to_string()),
    )
}

/// Writes `.git/hooks/post-commit` (wherever `git rev-parse --git-path hooks`
/// says); refuses to replace a hook that is not ours.
pub fn install_hook(layout: &Layout, program: &Path, args: &[String]) -> Result<HookOutcome> {
    let hooks = git_ok(&layout.root, &["rev-parse", "--git-path", "hooks"], None).map_err(|e| {
        Error::Precondition {
            code: ErrorCode::NotFound,
            message: format!("not a git repository: {e}"),
        }
    })?;
    let dir = layout.root.join(hooks);
    let path = dir.join("post-commit");
    let created = match std::fs::read_to_string(&path) {
        Ok(text) if text.contains(MARKER) => false,
        Ok(_) => {
            return Err(Error::Precondition {
                code: ErrorCode::AlreadyExists,
                message: format!(
                    "{} exists and is not ironbees' hook: add `{} pipeline start &` to it yourself",
                    path.display(),
                    program.display()
                ),
            });
        }
        Err(_) => true,
    };
    let log = layout.logs_dir().join("hook.log");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    std::fs::write(&path, hook_script(program, args, &layout.root, &log))
        .map_err(|e| Error::io(&path, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io(&path, e))?;
    }
    Ok(HookOutcome { path, created })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_skips_the_pipelines_own_commits_and_quotes_paths() {
        let s = hook_script(
            Path::new("/bin/iron bees"),
            &["--commitly".into()],
            Path::new("/p/it's"),
            Path::new("/p/.ironbees/logs/hook.log"),
        );
        assert!(s.contains("[ -n \"$IRONBEES_PIPELINE\" ] && exit 0\n"));
        assert!(s.contains("nohup '/bin/iron bees' -C '/p/it'\\''s' '--commitly' pipeline start"));
        assert!(s.ends_with("exit 0\n"));
    }
}
