//! Command lines for the external backends, as pure functions: `bwrap` (namespaces
//! and mounts by bubblewrap, our helper inside for Landlock, seccomp and rlimits)
//! and `docker`/`podman run`.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use crate::policy::{Network, WorkspaceMode};

/// What the bubblewrap command line needs.
#[derive(Debug, Clone)]
pub struct BwrapArgs<'a> {
    pub workspace: &'a Path,
    pub cwd: &'a Path,
    pub writable: &'a [PathBuf],
    pub hidden: &'a [(PathBuf, bool)],
    pub keep_visible: &'a [PathBuf],
    /// Needed paths under `/tmp` and `/dev/shm`, bound back read-only.
    pub keep_private: &'a [PathBuf],
    pub hide_run: bool,
    pub network: Network,
    pub tmpfs_bytes: u64,
}

/// `bwrap` arguments up to and including `--`; the caller appends the inner command.
pub fn bwrap_args(a: &BwrapArgs<'_>) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut push = |xs: &[&str]| v.extend(xs.iter().map(|s| (*s).to_owned()));
    push(&[
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]);
    if a.network == Network::Off {
        push(&["--unshare-net"]);
    }
    push(&[
        "--hostname",
        "ironbees-sandbox",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]);
    let size = a.tmpfs_bytes.to_string();
    push(&["--size", &size, "--tmpfs", "/tmp"]);
    for k in a.keep_private {
        let k = k.to_string_lossy();
        push(&["--ro-bind-try", &k, &k]);
    }
    if a.hide_run && Path::new("/run").is_dir() {
        push(&["--tmpfs", "/run"]);
        for k in a.keep_visible {
            let k = k.to_string_lossy();
            push(&["--ro-bind-try", &k, &k]);
        }
        push(&["--remount-ro", "/run"]);
    }
    // A throwaway workspace arrives here as a copy already (no overlays in bwrap 0.8).
    let ws = a.workspace.to_string_lossy();
    push(&["--bind", &ws, &ws]);
    for w in a.writable {
        let w = w.to_string_lossy();
        push(&["--bind", &w, &w]);
    }
    // Secrets last: they stay hidden even inside the workspace (a home directory).
    for (p, is_dir) in a.hidden {
        let p = p.to_string_lossy();
        if *is_dir {
            push(&["--tmpfs", &p, "--remount-ro", &p]);
        } else {
            push(&["--ro-bind", "/dev/null", &p]);
        }
    }
    let cwd = a.cwd.to_string_lossy();
    push(&["--chdir", &cwd, "--"]);
    v
}

/// What the container command line needs.
#[derive(Debug, Clone)]
pub struct ContainerArgs<'a> {
    pub name: &'a str,
    pub image: &'a str,
    pub workspace: &'a Path,
    pub cwd: &'a Path,
    pub writable: &'a [PathBuf],
    pub network: Network,
    pub workspace_mode: WorkspaceMode,
    pub memory_bytes: Option<u64>,
    pub max_processes: Option<u32>,
    pub cpu_time: Option<Duration>,
    pub tmpfs_bytes: u64,
    pub uid: u32,
    pub gid: u32,
    pub env: &'a [(String, String)],
    pub argv: &'a [String],
}

/// `docker run` / `podman run` arguments (without the engine's path).
pub fn container_args(a: &ContainerArgs<'_>) -> Vec<String> {
    let mut v: Vec<String> = vec!["run".into(), "--rm".into(), "--name".into(), a.name.into()];
    v.extend(["--init".into(), "--read-only".into(), "--cap-drop".into(), "ALL".into()]);
    v.extend(["--security-opt".into(), "no-new-privileges".into()]);
    v.extend(["--user".into(), format!("{}:{}", a.uid, a.gid)]);
    if a.network == Network::Off {
        v.extend(["--network".into(), "none".into()]);
    }
    if let Some(m) = a.memory_bytes {
        v.extend(["--memory".into(), m.to_string(), "--memory-swap".into(), m.to_string()]);
    }
    if let Some(p) = a.max_processes {
        v.extend(["--pids-limit".into(), p.to_string()]);
    }
    if let Some(c) = a.cpu_time {
        v.extend(["--ulimit".into(), format!("cpu={}:{}", c.as_secs(), c.as_secs() + 1)]);
    }
    v.extend(["--tmpfs".into(), format!("/tmp:rw,size={},mode=1777", a.tmpfs_bytes)]);
    let ws = a.workspace.to_string_lossy();
    let mode = match a.workspace_mode {
        WorkspaceMode::Writable => "rw",
        // The runner copies the workspace first; the copy is mounted.
        WorkspaceMode::Throwaway => "rw",
    };
    v.extend(["--volume".into(), format!("{ws}:{ws}:{mode}")]);
    for w in a.writable {
        let w = w.to_string_lossy();
        v.extend(["--volume".into(), format!("{w}:{w}:rw")]);
    }
    for (k, val) in a.env {
        v.extend(["--env".into(), format!("{k}={val}")]);
    }
    v.extend(["--workdir".into(), a.cwd.to_string_lossy().into_owned(), a.image.into()]);
    v.extend(a.argv.iter().cloned());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[String], flag: &str) -> Vec<String> {
        v.windows(2).filter(|w| w[0] == flag).map(|w| w[1].clone()).collect()
    }

    #[test]
    fn bwrap_mounts_in_the_right_order() {
        let hidden =
            vec![(PathBuf::from("/home/u/.ssh"), true), (PathBuf::from("/home/u/.netrc"), false)];
        let writable = vec![PathBuf::from("/home/u/.cache/x")];
        let args = bwrap_args(&BwrapArgs {
            workspace: Path::new("/tmp/ws"),
            cwd: Path::new("/tmp/ws/sub"),
            writable: &writable,
            hidden: &hidden,
            keep_visible: &[],
            keep_private: &[PathBuf::from("/tmp/toolchain")],
            hide_run: false,
            network: Network::Off,
            tmpfs_bytes: 1024,
        });
        let pos = |s: &str| {
            args.iter().position(|a| a == s).unwrap_or_else(|| panic!("{s} missing: {args:?}"))
        };
        assert!(args.contains(&"--unshare-net".to_owned()));
        // The tmpfs on /tmp comes before the workspace under /tmp is bound.
        assert!(pos("/tmp") < pos("/tmp/ws"));
        // A toolchain under /tmp is bound back (read-only) on top of that tmpfs.
        assert!(pos("/tmp") < pos("/tmp/toolchain"));
        assert_eq!(pairs(&args, "--ro-bind-try"), vec!["/tmp/toolchain".to_owned()]);
        assert!(pos("/home/u/.ssh") > pos("/tmp/ws"), "secrets are hidden after the binds");
        assert_eq!(pairs(&args, "--ro-bind"), vec!["/".to_owned(), "/dev/null".to_owned()]);
        assert_eq!(pairs(&args, "--chdir"), vec!["/tmp/ws/sub".to_owned()]);
        assert_eq!(args.last().unwrap(), "--");
    }

    #[test]
    fn bwrap_network_on_shares_the_network() {
        let args = bwrap_args(&BwrapArgs {
            workspace: Path::new("/w"),
            cwd: Path::new("/w"),
            writable: &[],
            hidden: &[],
            keep_visible: &[],
            keep_private: &[],
            hide_run: false,
            network: Network::On,
            tmpfs_bytes: 1024,
        });
        assert!(!args.contains(&"--unshare-net".to_owned()));
        assert_eq!(pairs(&args, "--bind"), vec!["/w".to_owned()]);
    }

    #[test]
    fn container_command_line() {
        let env = vec![("PATH".to_owned(), "/usr/bin".to_owned())];
        let argv = vec!["cargo".to_owned(), "test".to_owned()];
        let args = container_args(&ContainerArgs {
            name: "ironbees-1",
            image: "rust:1",
            workspace: Path::new("/src/p"),
            cwd: Path::new("/src/p"),
            writable: &[],
            network: Network::Off,
            workspace_mode: WorkspaceMode::Writable,
            memory_bytes: Some(1 << 30),
            max_processes: Some(64),
            cpu_time: None,
            tmpfs_bytes: 1 << 20,
            uid: 1000,
            gid: 1000,
            env: &env,
            argv: &argv,
        });
        assert_eq!(args[0], "run");
        assert_eq!(pairs(&args, "--network"), vec!["none"]);
        assert_eq!(pairs(&args, "--memory"), vec![(1u64 << 30).to_string()]);
        assert_eq!(pairs(&args, "--pids-limit"), vec!["64"]);
        assert_eq!(pairs(&args, "--volume"), vec!["/src/p:/src/p:rw"]);
        assert_eq!(pairs(&args, "--user"), vec!["1000:1000"]);
        assert!(args.contains(&"--read-only".to_owned()));
        assert_eq!(&args[args.len() - 3..], ["rust:1", "cargo", "test"]);
    }
}
