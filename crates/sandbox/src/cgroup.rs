//! Per-run cgroups: one hard memory limit and one process limit for the whole tree,
//! its true peak memory, and an exact answer to "did the limit fire".
//!
//! cgroup v2 is used when the current cgroup delegates the `memory` and `pids`
//! controllers to its children (`cgroup.subtree_control`) and is writable; otherwise
//! cgroup v1 when the `memory` and `pids` hierarchies are mounted and our cgroups in
//! them are writable (typically as root on hybrid hosts). Otherwise none, and the
//! plan says so.

use std::path::{Path, PathBuf};

/// Where per-run cgroups can be created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupBase {
    V2 { dir: PathBuf },
    V1 { memory: PathBuf, pids: PathBuf },
}

impl CgroupBase {
    pub fn version(&self) -> &'static str {
        match self {
            CgroupBase::V2 { .. } => "v2",
            CgroupBase::V1 { .. } => "v1",
        }
    }
}

/// One mount from `/proc/self/mountinfo` that matters here.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CgMount {
    root: String,
    mount_point: String,
    v2: bool,
    controllers: Vec<String>,
}

fn parse_mountinfo(text: &str) -> Vec<CgMount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((pre, post)) = line.split_once(" - ") else { continue };
        let pre: Vec<&str> = pre.split(' ').collect();
        let post: Vec<&str> = post.split(' ').collect();
        if pre.len() < 5 || post.len() < 3 {
            continue;
        }
        let fstype = post[0];
        if fstype != "cgroup" && fstype != "cgroup2" {
            continue;
        }
        out.push(CgMount {
            root: unescape(pre[3]),
            mount_point: unescape(pre[4]),
            v2: fstype == "cgroup2",
            controllers: post[2].split(',').map(str::to_owned).collect(),
        });
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
}

/// Finds candidate bases from `/proc/self/cgroup` and `/proc/self/mountinfo`.
/// Returns v2 first when both exist; the caller tries them in order.
pub fn candidates(proc_cgroup: &str, mountinfo: &str) -> Vec<CgroupBase> {
    let mounts = parse_mountinfo(mountinfo);
    let mut v2_path = None;
    let mut v1: Vec<(Vec<String>, String)> = Vec::new();
    for line in proc_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(ctrl), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if id == "0" && ctrl.is_empty() {
            v2_path = Some(path.to_owned());
        } else {
            v1.push((ctrl.split(',').map(str::to_owned).collect(), path.to_owned()));
        }
    }
    let locate = |m: &CgMount, path: &str| -> Option<PathBuf> {
        let rel = path.strip_prefix(m.root.trim_end_matches('/')).unwrap_or(path);
        if !path.starts_with(&m.root) && m.root != "/" {
            return None;
        }
        Some(Path::new(&m.mount_point).join(rel.trim_start_matches('/')))
    };
    let mut out = Vec::new();
    if let Some(dir) =
        v2_path.as_deref().zip(mounts.iter().find(|m| m.v2)).and_then(|(p, m)| locate(m, p))
    {
        out.push(CgroupBase::V2 { dir });
    }
    let find_v1 = |name: &str| -> Option<PathBuf> {
        let (_, path) = v1.iter().find(|(c, _)| c.iter().any(|c| c == name))?;
        let m = mounts.iter().find(|m| !m.v2 && m.controllers.iter().any(|c| c == name))?;
        locate(m, path)
    };
    if let (Some(memory), Some(pids)) = (find_v1("memory"), find_v1("pids")) {
        out.push(CgroupBase::V1 { memory, pids });
    }
    out
}

/// Checks that a base can really host per-run cgroups (controllers delegated,
/// directories writable) by creating and removing a probe cgroup.
pub fn usable(base: &CgroupBase) -> Result<(), String> {
    match base {
        CgroupBase::V2 { dir } => {
            let sub = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            for c in ["memory", "pids"] {
                if !sub.split_whitespace().any(|x| x == c) {
                    return Err(format!(
                        "cgroup v2: the `{c}` controller is not delegated to children of {}",
                        dir.display()
                    ));
                }
            }
            probe_dir(dir)
        }
        CgroupBase::V1 { memory, pids } => {
            probe_dir(memory)?;
            probe_dir(pids)
        }
    }
}

fn probe_dir(dir: &Path) -> Result<(), String> {
    let p = dir.join(format!("ironbees-probe-{}", std::process::id()));
    std::fs::create_dir(&p)
        .map_err(|e| format!("cannot create a cgroup in {}: {e}", dir.display()))?;
    let _ = std::fs::remove_dir(&p);
    Ok(())
}

/// A cgroup made for one run; removed by [`RunCgroup::remove`].
#[derive(Debug)]
pub struct RunCgroup {
    base: CgroupBase,
    dirs: Vec<PathBuf>,
}

/// What the cgroup saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CgroupStats {
    pub peak_memory: Option<u64>,
    pub oom_kills: u64,
    pub pids_max_hits: u64,
}

impl RunCgroup {
    pub fn create(
        base: &CgroupBase,
        name: &str,
        memory: Option<u64>,
        pids: Option<u32>,
    ) -> Result<RunCgroup, String> {
        let dirs: Vec<PathBuf> = match base {
            CgroupBase::V2 { dir } => vec![dir.join(name)],
            CgroupBase::V1 { memory, pids } => vec![memory.join(name), pids.join(name)],
        };
        for d in &dirs {
            std::fs::create_dir(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        let cg = RunCgroup { base: base.clone(), dirs };
        let set = |d: &Path, file: &str, value: String, required: bool| -> Result<(), String> {
            match std::fs::write(d.join(file), &value) {
                Ok(()) => Ok(()),
                Err(_) if !required => Ok(()),
                Err(e) => Err(format!("{}/{file} = {value}: {e}", d.display())),
            }
        };
        let r = (|| {
            match &cg.base {
                CgroupBase::V2 { .. } => {
                    let d = &cg.dirs[0];
                    if let Some(m) = memory {
                        set(d, "memory.max", m.to_string(), true)?;
                        set(d, "memory.swap.max", "0".into(), false)?;
                    }
                    if let Some(p) = pids {
                        set(d, "pids.max", p.to_string(), true)?;
                    }
                }
                CgroupBase::V1 { .. } => {
                    if let Some(m) = memory {
                        set(&cg.dirs[0], "memory.limit_in_bytes", m.to_string(), true)?;
                        set(&cg.dirs[0], "memory.memsw.limit_in_bytes", m.to_string(), false)?;
                    }
                    if let Some(p) = pids {
                        set(&cg.dirs[1], "pids.max", p.to_string(), true)?;
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            cg.remove();
            return Err(e);
        }
        Ok(cg)
    }

    /// The `cgroup.procs` files the helper writes its pid into.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    pub fn stats(&self) -> CgroupStats {
        let read = |d: &Path, f: &str| std::fs::read_to_string(d.join(f)).unwrap_or_default();
        let key = |text: &str, k: &str| -> u64 {
            text.lines().find_map(|l| l.strip_prefix(k)?.trim().parse().ok()).unwrap_or(0)
        };
        match &self.base {
            CgroupBase::V2 { .. } => {
                let d = &self.dirs[0];
                CgroupStats {
                    peak_memory: read(d, "memory.peak").trim().parse().ok(),
                    oom_kills: key(&read(d, "memory.events"), "oom_kill "),
                    pids_max_hits: key(&read(d, "pids.events"), "max "),
                }
            }
            CgroupBase::V1 { .. } => CgroupStats {
                peak_memory: read(&self.dirs[0], "memory.max_usage_in_bytes").trim().parse().ok(),
                oom_kills: key(&read(&self.dirs[0], "memory.oom_control"), "oom_kill "),
                pids_max_hits: key(&read(&self.dirs[1], "pids.events"), "max "),
            },
        }
    }

    /// Kills every process in the cgroup (it stays; see [`RunCgroup::remove`]).
    pub fn kill_all(&self) {
        for d in &self.dirs {
            let procs = std::fs::read_to_string(d.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                // SAFETY: kill with a pid read from our own cgroup.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }

    /// Kills anything still in the cgroup, then removes it.
    pub fn remove(&self) {
        for d in &self.dirs {
            for _ in 0..50 {
                let procs = std::fs::read_to_string(d.join("cgroup.procs")).unwrap_or_default();
                for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    // SAFETY: kill with a pid read from our own cgroup.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
                if std::fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO_HYBRID: &str = "\
25 1 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
30 25 0:27 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
31 25 0:28 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
32 25 0:29 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn hybrid_host_offers_v2_then_v1() {
        let proc_cgroup = "8:pids:/\n4:memory:/process_api/abc\n0::/\n";
        let got = candidates(proc_cgroup, MOUNTINFO_HYBRID);
        assert_eq!(
            got,
            vec![
                CgroupBase::V2 { dir: "/sys/fs/cgroup/unified/".into() },
                CgroupBase::V1 {
                    memory: "/sys/fs/cgroup/memory/process_api/abc".into(),
                    pids: "/sys/fs/cgroup/pids/".into()
                },
            ]
        );
    }

    #[test]
    fn pure_v2_host() {
        let mi = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        let got = candidates("0::/user.slice/user-1000.slice/session-2.scope\n", mi);
        assert_eq!(
            got,
            vec![CgroupBase::V2 {
                dir: "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope".into()
            }]
        );
    }

    #[test]
    fn no_cgroup_mounts_no_candidates() {
        assert!(candidates("0::/\n", "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n").is_empty());
    }
}
