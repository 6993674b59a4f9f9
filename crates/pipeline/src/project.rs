//! The user's repository as the pipeline reads it (never writes), and the hub
//! clone `init` creates.

use std::path::{Path, PathBuf};

use protocol::{CommitInfo, ErrorCode, PipelineConfig};

use crate::{
    error::{Error, Result},
    git::{git, git_ok},
    layout::Layout,
};

/// What a pipeline starts from: the user's branch and HEAD, the remote.
#[derive(Debug, Clone)]
pub(crate) struct Project {
    pub branch: String,
    pub head: String,
    pub remote: String,
    pub remote_url: String,
    pub target_branch: String,
}

fn precondition(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::Precondition { code, message: message.into() }
}

/// Reads the branch, HEAD and remote; a detached HEAD, a missing remote or no
/// repository is a precondition error with its code.
pub(crate) fn inspect(root: &Path, config: &PipelineConfig) -> Result<Project> {
    if git(root, &["rev-parse", "--is-inside-work-tree"], None).ok().as_deref() != Ok("true") {
        return Err(precondition(
            ErrorCode::NotFound,
            format!("{} is not a git working tree: the commit pipeline needs one", root.display()),
        ));
    }
    let branch =
        git(root, &["symbolic-ref", "--short", "-q", "HEAD"], None).ok().map_err(|_| {
            precondition(
                ErrorCode::DetachedHead,
                "HEAD is detached: check out a branch first (the pipeline pushes to a branch)",
            )
        })?;
    let head = git_ok(root, &["rev-parse", "HEAD"], None).map_err(|e| {
        precondition(ErrorCode::NotFound, format!("the repository has no commit yet ({e})"))
    })?;
    let remote = config.git.remote.clone().unwrap_or_else(|| "origin".to_owned());
    let url = git_ok(root, &["remote", "get-url", &remote], None).map_err(|_| {
        precondition(
            ErrorCode::NotFound,
            format!(
                "the repository has no remote `{remote}`: add one (`git remote add {remote} URL`) \
                 or set pipeline.git.remote"
            ),
        )
    })?;
    let target_branch = config.git.branch.clone().unwrap_or_else(|| branch.clone());
    Ok(Project { branch, head, remote, remote_url: absolute_url(root, &url), target_branch })
}

/// A remote given as a relative path is relative to the project; the hub lives
/// elsewhere, so it gets the absolute path.
fn absolute_url(root: &Path, url: &str) -> String {
    let looks_local = !url.contains("://") && !url.contains('@') && !url.starts_with('/');
    if looks_local && root.join(url).exists() {
        return root.join(url).display().to_string();
    }
    url.to_owned()
}

/// Refuses a working tree with uncommitted changes to tracked files.
pub(crate) fn check_clean(root: &Path) -> Result<()> {
    let status = git_ok(root, &["status", "--porcelain", "--untracked-files=no"], None)
        .map_err(|e| Error::Git { args: "status".into(), cwd: root.to_owned(), message: e })?;
    if !status.is_empty() {
        let files: Vec<&str> = status.lines().take(5).collect();
        return Err(precondition(
            ErrorCode::DirtyWorkingTree,
            format!(
                "the working tree has uncommitted changes ({}): commit or stash them first",
                files.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The commits of `range` (`a..b`), oldest first.
pub(crate) fn commits(cwd: &Path, range: &str) -> Vec<CommitInfo> {
    let out = git(cwd, &["log", "--reverse", "--format=%H%x1f%an%x1f%ct%x1f%s", range], None);
    let Ok(text) = out.ok() else { return Vec::new() };
    text.lines()
        .filter_map(|l| {
            let mut parts = l.split('\u{1f}');
            Some(CommitInfo {
                sha: parts.next()?.to_owned(),
                author: parts.next()?.to_owned(),
                timestamp: parts.next()?.parse().unwrap_or(0),
                message: parts.next().unwrap_or_default().to_owned(),
            })
        })
        .collect()
}

/// What `init` did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InitOutcome {
    pub hub: PathBuf,
    /// False when the hub existed already (a second `init` is fine).
    pub created: bool,
    pub remote_url: String,
    pub branch: String,
}

/// `pipeline init`: refuses a dirty tree or a detached HEAD, creates the state
/// directories and the hub clone (seed §2.2, §11.1). Idempotent.
pub fn init(layout: &Layout, config: &PipelineConfig) -> Result<InitOutcome> {
    let project = inspect(&layout.root, config)?;
    check_clean(&layout.root)?;
    for dir in [layout.cache_dir(), layout.logs_dir(), layout.report_dir()] {
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    }
    let created = ensure_hub(layout, &project)?;
    Ok(InitOutcome {
        hub: layout.hub.clone(),
        created,
        remote_url: project.remote_url,
        branch: project.target_branch,
    })
}

/// Creates the hub when it does not exist: a clone of the remote, with the
/// user's identity for its commits and `logs/` kept out of its git.
pub(crate) fn ensure_hub(layout: &Layout, project: &Project) -> Result<bool> {
    let hub = &layout.hub;
    if hub.join(".git").is_dir() {
        let url = git(hub, &["remote", "get-url", "origin"], None).ok().unwrap_or_default();
        if url != project.remote_url {
            return Err(precondition(
                ErrorCode::AlreadyExists,
                format!(
                    "{} exists and is a clone of {url}, not of {}: remove it or set \
                     pipeline.hubPath",
                    hub.display(),
                    project.remote_url
                ),
            ));
        }
        return Ok(false);
    }
    if hub.exists() && std::fs::read_dir(hub).map(|mut d| d.next().is_some()).unwrap_or(true) {
        return Err(precondition(
            ErrorCode::AlreadyExists,
            format!(
                "{} exists and is not a git clone: remove it or set pipeline.hubPath",
                hub.display()
            ),
        ));
    }
    let parent = hub.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let hub_arg = hub.display().to_string();
    git_ok(parent, &["clone", "--quiet", &project.remote_url, &hub_arg], None).map_err(|e| {
        Error::Git {
            args: format!("clone {}", project.remote_url),
            cwd: parent.to_owned(),
            message: e,
        }
    })?;
    for key in ["user.name", "user.email"] {
        if let Ok(v) = git_ok(&layout.root, &["config", key], None) {
            let _ = git_ok(hub, &["config", key, &v], None);
        }
    }
    for line in ["/logs/", "/report/", "/.env"] {
        exclude_in_hub(hub, line)?;
    }
    Ok(true)
}

/// A line of the hub's `.git/info/exclude` (the pipeline's logs, reports and
/// the copied `.env` never reach a stage's commit), added when missing.
fn exclude_in_hub(hub: &Path, line: &str) -> Result<()> {
    let exclude = hub.join(".git/info/exclude");
    let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
    if text.lines().any(|l| l.trim() == line) {
        return Ok(());
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    std::fs::create_dir_all(hub.join(".git/info")).map_err(|e| Error::io(hub, e))?;
    std::fs::write(&exclude, text).map_err(|e| Error::io(&exclude, e))
}

/// Seed §2.1, §10.2, §12.1: the project's `.env` — kept out of git, so no
/// commit brings it — copied into the hub for the commands run there, readable
/// by its owner only and excluded from the hub's git, so no stage commits or
/// pushes it. A `.env` removed from the project is removed from the hub. A
/// tracked `.env` is already in the commits (and the remote): it is not
/// copied, and the answer is a warning that says so.
pub(crate) fn copy_dotenv(layout: &Layout) -> Result<Option<String>> {
    let hub = &layout.hub;
    exclude_in_hub(hub, "/.env")?;
    let tracked =
        |cwd: &Path| git_ok(cwd, &["ls-files", "--error-unmatch", "--", ".env"], None).is_ok();
    if tracked(&layout.root) {
        return Ok(Some(
            "`.env` is tracked by git, so its values are in your commits and on the remote; \
             it was not copied to the hub (add it to .gitignore and `git rm --cached .env`)"
                .into(),
        ));
    }
    let src = layout.root.join(".env");
    let dst = hub.join(".env");
    match std::fs::read(&src) {
        Ok(bytes) => write_private(&dst, &bytes).map(|()| None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if dst.exists() && !tracked(hub) {
                std::fs::remove_file(&dst).map_err(|e| Error::io(&dst, e))?;
            }
            Ok(None)
        }
        Err(e) => Err(Error::io(&src, e)),
    }
}

/// Writes a file only its owner can read (mode 0600 before any byte is in it).
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        // An older copy may have other permissions: tightened before writing.
        if path.exists() {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| Error::io(path, e))?;
        }
    }
    let mut f = options.open(path).map_err(|e| Error::io(path, e))?;
    f.write_all(bytes).map_err(|e| Error::io(path, e))
}
