//! Where a pipeline's files live: the project's state directory (`.ironbees/`
//! or, as `commitly`, `.commitly/`) and the hub clone beside the project.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use crate::error::{Error, Result};

/// The paths of one project's pipeline.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The user's project (the working tree the pipeline never writes).
    pub root: PathBuf,
    /// `.ironbees/` or `.commitly/`: cache, logs, reports, the run store.
    pub state_dir: PathBuf,
    /// The hub clone, `{parent}/.commitly_hub_{project}` unless configured.
    pub hub: PathBuf,
    pub project: String,
}

impl Layout {
    /// The layout of the project at `root` with its state in `root/state_dir_name`;
    /// `hub` (configured) relative to the project root.
    pub fn new(
        root: &Path,
        state_dir_name: &str,
        project: Option<&str>,
        hub: Option<&str>,
    ) -> Layout {
        let project = project
            .map(str::to_owned)
            .or_else(|| root.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "project".to_owned());
        let hub = match hub {
            Some(h) => root.join(h),
            None => default_hub(root, &project),
        };
        Layout { root: root.to_owned(), state_dir: root.join(state_dir_name), hub, project }
    }

    pub fn cache_dir(&self) -> PathBuf {
        self.state_dir.join("cache")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.state_dir.join("logs")
    }

    pub fn report_dir(&self) -> PathBuf {
        self.state_dir.join("report")
    }

    /// The run store's directory (`workflow.db`), shared with agent runs.
    pub fn runs_dir(&self) -> PathBuf {
        self.state_dir.join("runs")
    }

    pub fn hub_logs_dir(&self) -> PathBuf {
        self.hub.join("logs")
    }
}

/// Seed §2.2: `{project's parent}/.commitly_hub_{project}`.
pub fn default_hub(root: &Path, project: &str) -> PathBuf {
    root.parent().unwrap_or(root).join(format!(".commitly_hub_{project}"))
}

/// A stage's directory name in logs and its cache file's stem (seed §2.1).
pub(crate) fn agent_name(stage: &str) -> String {
    match stage {
        "refactor" => "refactoring_agent".to_owned(),
        "notify" => "slack_agent".to_owned(),
        s => format!("{s}_agent"),
    }
}

/// The log files of one pipeline: per stage (in the project and, the seed's
/// "hub logs", in the hub's `logs/`, which the hub's git excludes), and every
/// git command in `logs/git/`.
#[derive(Debug, Clone)]
pub(crate) struct Logs {
    local: PathBuf,
    hub: PathBuf,
    id: String,
}

impl Logs {
    pub(crate) fn new(layout: &Layout, pipeline_id: &str) -> Logs {
        Logs { local: layout.logs_dir(), hub: layout.hub_logs_dir(), id: pipeline_id.to_owned() }
    }

    /// Appends a line to the stage's log, in both places. Logging never fails a
    /// stage: a log that cannot be written is reported once by tracing.
    pub(crate) fn stage(&self, stage: &str, line: &str) {
        let name = format!("{}.log", self.id);
        for dir in [&self.local, &self.hub] {
            append(&dir.join(agent_name(stage)).join(&name), line);
        }
    }

    pub(crate) fn git(&self, line: &str) {
        append(&self.local.join("git").join(format!("{}.log", self.id)), line);
    }

    /// Seed §7.2: the error log JSON, hub-side and local; returns the local path.
    pub(crate) fn error(&self, stage: &str, json: &serde_json::Value) -> Result<PathBuf> {
        let stamp = stamp(stdx::now_ms());
        let name = format!("error_{stamp}_{}.log", self.id);
        let text = serde_json::to_string_pretty(json).unwrap_or_default();
        let mut local = None;
        for dir in [&self.local, &self.hub] {
            let path = dir.join(agent_name(stage)).join(&name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            std::fs::write(&path, &text).map_err(|e| Error::io(&path, e))?;
            local.get_or_insert(path);
        }
        Ok(local.unwrap_or_default())
    }
}

fn append(path: &Path, line: &str) {
    let write = || -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        writeln!(f, "{} {line}", stdx::rfc3339_utc(stdx::now_ms()))
    };
    if let Err(e) = write() {
        tracing::warn!(path = %path.display(), error = %e, "pipeline log not written");
    }
}

/// Seed §8.1: local logs are kept `days` days. Files under `logs/<agent>/`
/// modified longer ago are removed (best effort: a file that cannot be read
/// or removed stays); returns how many went.
pub(crate) fn prune_logs(logs: &Path, days: u32, now: std::time::SystemTime) -> usize {
    let max_age = std::time::Duration::from_secs(u64::from(days) * 86_400);
    let mut removed = 0;
    let Ok(dirs) = std::fs::read_dir(logs) else { return 0 };
    for dir in dirs.flatten() {
        let Ok(files) = std::fs::read_dir(dir.path()) else { continue };
        for file in files.flatten() {
            let old = file
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age > max_age);
            if old && file.path().is_file() && std::fs::remove_file(file.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// `2026-11-28T01-45-00` (a file name's timestamp, UTC).
pub(crate) fn stamp(ms: i64) -> String {
    let t = stdx::rfc3339_utc(ms);
    t[..19].replace(':', "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_seed() {
        let l = Layout::new(Path::new("/w/my_project/Commitly"), ".commitly", None, None);
        assert_eq!(l.hub, Path::new("/w/my_project/.commitly_hub_Commitly"));
        assert_eq!(l.cache_dir(), Path::new("/w/my_project/Commitly/.commitly/cache"));
        let l = Layout::new(Path::new("/w/p"), ".ironbees", Some("api"), Some("../hubs/api"));
        assert_eq!((l.project.as_str(), l.hub.as_path()), ("api", Path::new("/w/p/../hubs/api")));
        let names: Vec<String> = protocol::stages::ALL.iter().map(|s| agent_name(s)).collect();
        assert_eq!(
            names,
            [
                "clone_agent",
                "code_agent",
                "test_agent",
                "refactoring_agent",
                "sync_agent",
                "slack_agent"
            ]
        );
        assert_eq!(stamp(1_761_042_615_000), "2025-10-21T10-30-15");
    }

    #[test]
    fn old_logs_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path();
        std::fs::create_dir_all(logs.join("code_agent")).unwrap();
        std::fs::write(logs.join("code_agent/old.log"), "x").unwrap();
        std::fs::write(logs.join("code_agent/new.log"), "x").unwrap();
        let month = std::time::Duration::from_secs(31 * 86_400);
        let old =
            std::fs::File::options().write(true).open(logs.join("code_agent/old.log")).unwrap();
        old.set_modified(std::time::SystemTime::now() - month).unwrap();
        assert_eq!(prune_logs(logs, 30, std::time::SystemTime::now()), 1);
        assert!(logs.join("code_agent/new.log").exists());
        assert!(!logs.join("code_agent/old.log").exists());
    }
}
