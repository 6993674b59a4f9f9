//! What the parent tells the helper (`Spec`, one JSON argument) and what the helper
//! tells the parent (`Event`s, JSON lines on file descriptor 3).

use std::path::PathBuf;

use protocol::LimitKind;
use serde::{Deserialize, Serialize};

/// The first argument that turns the ironbees binary into the sandbox helper.
pub const HELPER_ARG: &str = "__ironbees-sandbox-helper";

/// The descriptor the helper reports on.
pub const STATUS_FD: i32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Our own namespaces and mounts, then the supervisor as PID 1.
    Namespaces,
    /// No namespaces: a supervisor (child subreaper) over a process group.
    Plain,
    /// Started by bwrap inside its namespaces: supervisor, then the inner stage.
    BwrapInner,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rlimits {
    pub cpu_secs: Option<u64>,
    pub data_bytes: Option<u64>,
    pub nproc: Option<u64>,
    pub fsize_bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overlay {
    pub upper: PathBuf,
    pub work: PathBuf,
    /// Where the overlay is assembled before it is moved over the workspace.
    pub staging: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    pub mode: Mode,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub workspace: PathBuf,
    pub overlay: Option<Overlay>,
    /// Writable paths besides the workspace.
    pub writable: Vec<PathBuf>,
    /// (path, is_dir) to mount over.
    pub hidden: Vec<(PathBuf, bool)>,
    /// Read-only paths to keep visible under a hidden `/run` (DNS with network on).
    pub keep_visible: Vec<PathBuf>,
    /// Read-only paths under the private `/tmp` and `/dev/shm` that the command
    /// needs (a toolchain or checkout there): bound back after those mounts.
    #[serde(default)]
    pub keep_private: Vec<PathBuf>,
    pub hide_run: bool,
    /// Landlock: read roots (`/` split around hidden paths) and write roots.
    pub read_roots: Vec<PathBuf>,
    pub write_roots: Vec<PathBuf>,
    pub network_namespace: bool,
    pub uid: u32,
    pub gid: u32,
    pub landlock: bool,
    pub landlock_deny_tcp: bool,
    pub seccomp: bool,
    pub seccomp_deny_inet: bool,
    pub rlimits: Rlimits,
    pub timeout_ms: Option<u64>,
    /// Kill the tree when its resident memory passes this (no cgroup).
    pub memory_monitor: Option<u64>,
    /// Report `processes` when the tree reaches this many (no cgroup).
    pub process_monitor: Option<u32>,
    /// `cgroup.procs` files to join before anything else.
    pub cgroup_procs: Vec<PathBuf>,
    pub tmpfs_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The inner stage is about to exec the command with these protections.
    Applied {
        landlock_abi: Option<u32>,
        landlock_error: Option<String>,
        seccomp: bool,
        seccomp_error: Option<String>,
        rlimits: Vec<String>,
        warnings: Vec<String>,
    },
    /// Setting up failed before the command started.
    SetupFailed { stage: String, message: String },
    /// `execvp` failed.
    ExecFailed { errno: i32, message: String },
    /// The command ended (and every leftover process was killed and reaped).
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
        limit: Option<LimitKind>,
        limit_detail: Option<String>,
        cpu_ms: u64,
        max_rss_kb: u64,
        leftovers: u32,
        peak_tree_rss: Option<u64>,
        peak_processes: Option<u32>,
        /// The PID namespace's pid_max, when it enforces the process limit.
        pid_max: Option<u32>,
        duration_ms: u64,
    },
    /// Answer to a probe.
    Probe {
        user_namespaces: bool,
        mount_api: bool,
        overlay: bool,
        landlock_abi: u32,
        seccomp: bool,
        notes: Vec<String>,
    },
}
