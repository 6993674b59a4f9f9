//! The helper: the ironbees binary re-executed as `ironbees __ironbees-sandbox-helper
//! run SPEC` (codex's arg0 trick). A fresh, single-threaded process can unshare
//! namespaces, mount, fork a PID-1 supervisor and apply Landlock and seccomp in plain
//! Rust, without the async-signal-safety limits of a `pre_exec` hook in the
//! multi-threaded parent.
//!
//! ```text
//! parent ─spawn─▶ helper: join cgroup, PDEATHSIG, unshare(user,mnt,pid,ipc,uts[,net]),
//!                         uid/gid maps, loopback up
//!                   └─fork─▶ supervisor (PID 1): mounts, setsid, not dumpable
//!                              └─fork─▶ inner stage: rlimits, Landlock, caps, seccomp
//!                                         └─exec─▶ command
//! ```
//! The supervisor enforces the timeout and the monitors, kills whatever is left when
//! the command exits (every process of the PID namespace), and reports on fd 3.
//! When the helper dies, PDEATHSIG kills the supervisor and with it the namespace.

use std::{
    ffi::{CString, OsString},
    fs::File,
    io::Write,
    os::{
        fd::{AsRawFd, FromRawFd},
        unix::ffi::OsStrExt,
    },
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use protocol::LimitKind;

use crate::{
    landlock, seccomp,
    spec::{Event, Mode, STATUS_FD, Spec},
};

/// Entry point when the binary runs as the helper. `args` are the arguments after
/// [`crate::HELPER_ARG`]. Returns the process exit code.
pub fn helper_main(args: &[OsString]) -> i32 {
    let sub = args.first().and_then(|a| a.to_str()).unwrap_or("");
    if sub == "noop" {
        return 0;
    }
    // SAFETY: F_GETFD only asks whether the descriptor is open.
    if unsafe { libc::fcntl(STATUS_FD, libc::F_GETFD) } < 0 {
        return 125; // started without a status pipe: not by a sandbox parent
    }
    // SAFETY: fd 3 is open and was set up by the parent as our status pipe; we take
    // ownership of it.
    let mut status = unsafe { File::from_raw_fd(STATUS_FD) };
    set_cloexec(STATUS_FD);
    match sub {
        "probe" => {
            let ev = probe();
            report(&mut status, &ev);
            0
        }
        "run" => {
            let Some(spec) =
                args.get(1).and_then(|s| serde_json::from_slice::<Spec>(s.as_bytes()).ok())
            else {
                report(&mut status, &setup_failed("spec", "missing or malformed spec"));
                return 125;
            };
            run(&spec, &mut status)
        }
        _ => {
            report(&mut status, &setup_failed("args", "unknown helper mode"));
            125
        }
    }
}

fn setup_failed(stage: &str, message: impl Into<String>) -> Event {
    Event::SetupFailed { stage: stage.into(), message: message.into() }
}

fn report(status: &mut File, ev: &Event) {
    let mut line = serde_json::to_vec(ev).unwrap_or_default();
    line.push(b'\n');
    let _ = status.write_all(&line);
}

fn set_cloexec(fd: i32) {
    // SAFETY: fcntl on a descriptor number; harmless if it is not open.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
}

fn last_err() -> String {
    std::io::Error::last_os_error().to_string()
}

fn run(spec: &Spec, status: &mut File) -> i32 {
    for f in &spec.cgroup_procs {
        if let Err(e) = std::fs::write(f, format!("{}\n", std::process::id())) {
            report(status, &setup_failed("cgroup", format!("{}: {e}", f.display())));
            return 125;
        }
    }
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    // SAFETY: getppid has no preconditions.
    if spec.mode != Mode::BwrapInner && unsafe { libc::getppid() } == 1 {
        return 125; // the parent is already gone (inside bwrap, PID 1 is bwrap)
    }
    match spec.mode {
        Mode::Namespaces => run_namespaces(spec, status),
        Mode::Plain => {
            // SAFETY: plain syscalls with integer arguments.
            unsafe {
                libc::setsid();
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            }
            supervise(spec, status, Kill::Tree, None)
        }
        // bwrap made the namespaces; its own PID 1 reaps. We are a process inside.
        Mode::BwrapInner => supervise(spec, status, Kill::Namespace, None),
    }
}

fn run_namespaces(spec: &Spec, status: &mut File) -> i32 {
    let mut flags = libc::CLONE_NEWUSER
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS;
    if spec.network_namespace {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: unshare with flags only; we are single-threaded (required for NEWUSER).
    if unsafe { libc::unshare(flags) } != 0 {
        report(status, &setup_failed("unshare", last_err()));
        return 125;
    }
    if let Err(e) = write_id_maps(spec.uid, spec.gid) {
        report(status, &setup_failed("uid_map", e));
        return 125;
    }
    if spec.network_namespace
        && let Err(e) = loopback_up()
    {
        report(status, &setup_failed("loopback", e));
        return 125;
    }
    // SAFETY: single-threaded process; the child only runs our own code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        report(status, &setup_failed("fork", last_err()));
        return 125;
    }
    if pid == 0 {
        // PID 1 of the new namespace.
        // SAFETY: prctl with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
        if let Err((stage, e)) = setup_mounts(spec) {
            report(status, &setup_failed(&stage, e));
            exit_now(125);
        }
        // Without a cgroup, RLIMIT_NPROC does not bind host root even inside a user
        // namespace; a per-namespace pid_max (Linux 6.14+) does, for everyone.
        let pid_max = spec.rlimits.nproc.and_then(|n| {
            let v = (n + 1).max(PID_MAX_MIN);
            std::fs::write("/proc/sys/kernel/pid_max", v.to_string()).ok().map(|()| v as u32)
        });
        const HOSTNAME: &[u8] = b"ironbees-sandbox";
        // SAFETY: sethostname reads exactly `len` bytes from a static buffer; setsid
        // and prctl take integers.
        unsafe {
            libc::sethostname(HOSTNAME.as_ptr().cast(), HOSTNAME.len());
            libc::setsid();
            // Not dumpable: the command cannot ptrace the supervisor, which keeps
            // capabilities in the user namespace.
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
        let code = supervise(spec, status, Kill::Namespace, pid_max);
        exit_now(code);
    }
    let (code, _) = wait_child(pid);
    code.unwrap_or(125)
}

/// The kernel's floor for pid_max (RESERVED_PIDS + 1).
const PID_MAX_MIN: u64 = 301;

fn exit_now(code: i32) -> ! {
    // SAFETY: _exit skips atexit handlers, right for a forked child.
    unsafe { libc::_exit(code) }
}

fn write_id_maps(uid: u32, gid: u32) -> Result<(), String> {
    let w = |p: &str, s: String| std::fs::write(p, s).map_err(|e| format!("{p}: {e}"));
    w("/proc/self/setgroups", "deny".into())?;
    w("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    w("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

#[repr(C)]
struct IfReqFlags {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// A new network namespace has a loopback interface that is down; tests that talk
/// to themselves over 127.0.0.1 need it up.
fn loopback_up() -> Result<(), String> {
    // SAFETY: socket with constant arguments.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(last_err());
    }
    // SAFETY: we own `fd`.
    let sock = unsafe { File::from_raw_fd(fd) };
    let mut req = IfReqFlags { name: [0; 16], flags: 0, _pad: [0; 22] };
    req.name[..2].copy_from_slice(b"lo");
    // SAFETY: SIOCGIFFLAGS/SIOCSIFFLAGS read and write an ifreq we own.
    unsafe {
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) < 0 {
            return Err(last_err());
        }
        req.flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &req) < 0 {
            return Err(last_err());
        }
    }
    Ok(())
}

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
}

fn sys_mount(
    src: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), String> {
    let src = src.map(|s| CString::new(s).unwrap_or_default());
    let fstype = fstype.map(|s| CString::new(s).unwrap_or_default());
    let data = data.map(|s| CString::new(s).unwrap_or_default());
    let t = cpath(target);
    // SAFETY: all pointers are valid NUL-terminated strings or null.
    let r = unsafe {
        libc::mount(
            src.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            t.as_ptr(),
            fstype.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            flags,
            data.as_ref().map_or(std::ptr::null(), |s| s.as_ptr() as *const libc::c_void),
        )
    };
    if r != 0 { Err(format!("{}: {}", target.display(), last_err())) } else { Ok(()) }
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: u32 = 0x8000;
const OPEN_TREE_CLONE: u32 = 1;
const MOVE_MOUNT_F_EMPTY_PATH: u32 = 4;

fn mount_setattr(dirfd: i32, path: &Path, flags: u32, set: u64, clr: u64) -> Result<(), String> {
    let attr = MountAttr { attr_set: set, attr_clr: clr, propagation: 0, userns_fd: 0 };
    let p = cpath(path);
    // SAFETY: valid path, valid attr struct of the size passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            p.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r != 0 { Err(format!("mount_setattr {}: {}", path.display(), last_err())) } else { Ok(()) }
}

/// A detached copy of the mount tree at `path` (taken before anything covers it).
fn open_tree(path: &Path) -> Result<File, String> {
    let p = cpath(path);
    // SAFETY: valid path.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            p.as_ptr(),
            OPEN_TREE_CLONE | AT_RECURSIVE | libc::O_CLOEXEC as u32,
        )
    };
    if fd < 0 {
        return Err(format!("open_tree {}: {}", path.display(), last_err()));
    }
    // SAFETY: fresh descriptor we own.
    Ok(unsafe { File::from_raw_fd(fd as i32) })
}

fn move_mount(tree: &File, target: &Path) -> Result<(), String> {
    let empty = CString::default();
    let t = cpath(target);
    // SAFETY: valid descriptors and paths.
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            empty.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if r != 0 { Err(format!("move_mount {}: {}", target.display(), last_err())) } else { Ok(()) }
}

fn empty_path() -> &'static Path {
    Path::new("")
}

/// The filesystem view: everything read-only, a private `/tmp`, `/dev/shm` and
/// `/proc`, hidden secrets, then the workspace and the writable paths on top.
fn setup_mounts(spec: &Spec) -> Result<(), (String, String)> {
    let st = |stage: &str| {
        let stage = stage.to_owned();
        move |e: String| (stage.clone(), e)
    };
    sys_mount(None, Path::new("/"), None, libc::MS_REC | libc::MS_PRIVATE, None)
        .map_err(st("make mounts private"))?;

    // Phase A: capture what must stay reachable, before anything is covered (the
    // workspace may live under /tmp, which gets a fresh tmpfs).
    let mut attach: Vec<(File, PathBuf)> = Vec::new();
    let ws_tree = match &spec.overlay {
        Some(o) => {
            let data = format!(
                "lowerdir={},upperdir={},workdir={}",
                overlay_escape(&spec.workspace),
                overlay_escape(&o.upper),
                overlay_escape(&o.work)
            );
            sys_mount(Some("overlay"), &o.staging, Some("overlay"), 0, Some(&data))
                .map_err(st("overlay"))?;
            open_tree(&o.staging).map_err(st("overlay"))?
        }
        None => open_tree(&spec.workspace).map_err(st("workspace"))?,
    };
    fd_setattr(&ws_tree, 0, MOUNT_ATTR_RDONLY).map_err(st("workspace writable"))?;
    attach.push((ws_tree, spec.workspace.clone()));
    for w in &spec.writable {
        let t = open_tree(w).map_err(st("writable path"))?;
        fd_setattr(&t, 0, MOUNT_ATTR_RDONLY).map_err(st("writable path"))?;
        attach.push((t, w.clone()));
    }
    // Needed paths under /tmp and /dev/shm (a toolchain, a checkout there), read-only.
    let mut keep_private: Vec<(File, PathBuf, bool)> = Vec::new();
    for k in &spec.keep_private {
        if let Ok(t) = open_tree(k) {
            let _ = fd_setattr(&t, MOUNT_ATTR_RDONLY, 0);
            keep_private.push((t, k.clone(), k.is_dir()));
        }
    }
    let mut keep: Vec<(File, PathBuf)> = Vec::new();
    for k in &spec.keep_visible {
        if let Ok(t) = open_tree(k) {
            let _ = fd_setattr(&t, MOUNT_ATTR_RDONLY, 0);
            keep.push((t, k.clone()));
        }
    }

    // Phase B: the whole tree read-only.
    mount_setattr(libc::AT_FDCWD, Path::new("/"), AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0)
        .map_err(st("read-only root"))?;

    // Phase C: fresh private mounts.
    let nosuid_nodev = libc::MS_NOSUID | libc::MS_NODEV;
    let tmp_opts = format!("size={},mode=1777", spec.tmpfs_bytes);
    sys_mount(Some("tmpfs"), Path::new("/tmp"), Some("tmpfs"), nosuid_nodev, Some(&tmp_opts))
        .map_err(st("/tmp"))?;
    if Path::new("/dev/shm").is_dir() {
        sys_mount(
            Some("tmpfs"),
            Path::new("/dev/shm"),
            Some("tmpfs"),
            nosuid_nodev,
            Some(&tmp_opts),
        )
        .map_err(st("/dev/shm"))?;
    }
    for (t, p, is_dir) in &keep_private {
        let point = if *is_dir {
            mkdir_p_tmpfs(p)
        } else {
            p.parent().map_or(Ok(()), mkdir_p_tmpfs).and_then(|()| {
                File::create(p).map(drop).map_err(|e| format!("{}: {e}", p.display()))
            })
        };
        point.map_err(st("keep under /tmp"))?;
        move_mount(t, p).map_err(st("keep under /tmp"))?;
    }
    sys_mount(
        Some("proc"),
        Path::new("/proc"),
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    )
    .map_err(st("/proc"))?;
    if spec.hide_run && Path::new("/run").is_dir() {
        hide_dir(Path::new("/run")).map_err(st("/run"))?;
        for (t, p) in keep {
            let _ = mkdir_p_tmpfs(&p);
            let _ = move_mount(&t, &p);
        }
    }
    // /run was hidden after the read-only pass: make it read-only too.
    if spec.hide_run && Path::new("/run").is_dir() {
        let _ = sys_mount(None, Path::new("/run"), None, libc::MS_REMOUNT | libc::MS_RDONLY, None);
    }

    // Phase D: the writable trees on top.
    for (t, target) in &attach {
        if !target.exists() {
            mkdir_p_tmpfs(target).map_err(st("mount point"))?;
        }
        move_mount(t, target).map_err(st("attach"))?;
    }
    // Phase E: secrets, last, so that those inside an attached tree (a workspace that
    // is the home directory) are covered too.
    for (path, is_dir) in &spec.hidden {
        if std::fs::symlink_metadata(path).is_err() {
            continue; // under a fresh tmpfs now, or gone since the parent looked
        }
        if *is_dir {
            hide_dir(path).map_err(st("hide"))?;
        } else {
            sys_mount(Some("/dev/null"), path, None, libc::MS_BIND, None).map_err(st("hide"))?;
            let _ = sys_mount(
                None,
                path,
                None,
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY,
                None,
            );
        }
    }
    Ok(())
}

fn fd_setattr(tree: &File, set: u64, clr: u64) -> Result<(), String> {
    let fd = tree.as_raw_fd();
    let flags = libc::AT_EMPTY_PATH as u32;
    // A submount locked read-only by the host cannot be made writable: then only the
    // top of the tree changes and the locked submount stays as the host has it.
    mount_setattr(fd, empty_path(), flags | AT_RECURSIVE, set, clr)
        .or_else(|_| mount_setattr(fd, empty_path(), flags, set, clr))
}

fn hide_dir(path: &Path) -> Result<(), String> {
    sys_mount(
        Some("tmpfs"),
        path,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        Some("size=16k,mode=755"),
    )
}

/// Creates a mount point inside a tmpfs we mounted (the rest is read-only).
fn mkdir_p_tmpfs(p: &Path) -> Result<(), String> {
    std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn overlay_escape(p: &Path) -> String {
    let s = p.to_string_lossy();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, ',' | ':' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// How to kill everything the command left.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kill {
    /// Every process of the PID namespace we are in (`kill(-1)`).
    Namespace,
    /// Our descendants (we are a child subreaper): walk `/proc/<pid>/task/*/children`.
    Tree,
}

fn wait_child(pid: i32) -> (Option<i32>, Option<i32>) {
    let mut st = 0;
    loop {
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(pid, &mut st, 0) };
        if r == pid {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return (None, None);
        }
    }
    decode(st)
}

fn decode(st: i32) -> (Option<i32>, Option<i32>) {
    if libc::WIFEXITED(st) {
        (Some(libc::WEXITSTATUS(st)), None)
    } else if libc::WIFSIGNALED(st) {
        (None, Some(libc::WTERMSIG(st)))
    } else {
        (None, None)
    }
}

fn pidfd_open(pid: i32) -> Option<File> {
    // SAFETY: pidfd_open with a pid and no flags.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: fresh descriptor we own.
    (fd >= 0).then(|| unsafe { File::from_raw_fd(fd as i32) })
}

/// Processes visible in `/proc` (in a PID namespace: all of the namespace's).
fn ns_pids() -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else { return Vec::new() };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect()
}

fn children_of(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return out };
    for t in rd.flatten() {
        if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(s.split_whitespace().filter_map(|x| x.parse::<i32>().ok()));
        }
    }
    out
}

fn descendants(root: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        for c in children_of(p) {
            if !out.contains(&c) {
                out.push(c);
                stack.push(c);
            }
        }
    }
    out
}

fn is_zombie(pid: i32) -> bool {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return true };
    // The state follows the command name, which is in parentheses and may hold spaces.
    s.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next()) == Some('Z')
}

fn rss_bytes(pid: i32) -> u64 {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/statm")) else { return 0 };
    let pages: u64 = s.split_whitespace().nth(1).and_then(|x| x.parse().ok()).unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

/// The processes the sandbox is responsible for, excluding ourselves (and the
/// namespace's init when that is not us).
fn tree(kill: Kill) -> Vec<i32> {
    let me = std::process::id() as i32;
    match kill {
        Kill::Namespace => {
            ns_pids().into_iter().filter(|&p| p != me && p != 1 && !is_zombie(p)).collect()
        }
        Kill::Tree => descendants(me).into_iter().filter(|&p| !is_zombie(p)).collect(),
    }
}

fn kill_all(kill: Kill) {
    match kill {
        // SAFETY: kill(-1) inside our own PID namespace reaches only its processes.
        Kill::Namespace => unsafe {
            libc::kill(-1, libc::SIGKILL);
        },
        Kill::Tree => {
            for p in tree(kill) {
                // SAFETY: signalling our own descendants.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
        }
    }
}

fn reap_nohang() -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    loop {
        let mut st = 0;
        // SAFETY: waitpid with a valid status pointer.
        let r = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
        if r <= 0 {
            return out;
        }
        out.push((r, st));
    }
}

/// Forks the command, enforces the timeout and monitors, reports `Exited`.
fn supervise(spec: &Spec, status: &mut File, kill: Kill, pid_max: Option<u32>) -> i32 {
    // Not dumpable: the command, same uid as we are, must not open our
    // /proc/<pid>/fd/3 and write fake reports (or ptrace us). Exec resets it for
    // the command itself.
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    let start = Instant::now();
    // SAFETY: single-threaded process; the child runs only `inner`.
    let child = unsafe { libc::fork() };
    if child < 0 {
        report(status, &setup_failed("fork", last_err()));
        return 125;
    }
    if child == 0 {
        inner(spec, status);
    }
    let pidfd = pidfd_open(child);
    let deadline = spec.timeout_ms.map(|ms| start + Duration::from_millis(ms));
    let sample = spec.memory_monitor.is_some() || spec.process_monitor.is_some();
    // Fast enough that a fork bomb without a hard limit is caught early.
    let tick = Duration::from_millis(if spec.process_monitor.is_some() { 10 } else { 25 });
    let mut child_status: Option<i32> = None;
    let mut limit: Option<(LimitKind, String)> = None;
    let mut peak_rss: u64 = 0;
    let mut peak_procs: u32 = 0;
    loop {
        for (pid, st) in reap_nohang() {
            if pid == child {
                child_status = Some(st);
            }
        }
        if child_status.is_some() {
            break;
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            limit = Some((
                LimitKind::Timeout,
                format!("wall-clock timeout of {}", fmt_ms(spec.timeout_ms.unwrap_or(0))),
            ));
            break;
        }
        if sample {
            let pids = tree(kill);
            peak_procs = peak_procs.max(pids.len() as u32);
            if let Some(n) = spec.process_monitor
                && pids.len() as u32 > n
            {
                limit = Some((
                    LimitKind::Processes,
                    format!("the tree passed the process limit of {n} (killed by the monitor)"),
                ));
                break;
            }
            let rss: u64 = if spec.memory_monitor.is_some() {
                pids.iter().map(|&p| rss_bytes(p)).sum()
            } else {
                0
            };
            peak_rss = peak_rss.max(rss);
            if let Some(m) = spec.memory_monitor
                && rss > m
            {
                limit = Some((
                    LimitKind::Memory,
                    format!("resident memory of the tree passed {}", fmt_bytes(m)),
                ));
                break;
            }
        }
        let mut wait = if sample { tick } else { Duration::from_secs(3600) };
        if let Some(d) = deadline {
            wait = wait.min(d.saturating_duration_since(now));
        }
        match &pidfd {
            Some(fd) => {
                let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                let ms = wait.as_millis().min(i32::MAX as u128) as i32;
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut pfd, 1, ms.max(1)) };
            }
            None => std::thread::sleep(wait.min(Duration::from_millis(10))),
        }
    }
    let ran_for = start.elapsed();

    // Everything still alive is either the command (a limit fired) or left behind.
    let mut leftovers = 0u32;
    if limit.is_some() {
        kill_all(kill);
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child, libc::SIGKILL) };
    } else {
        leftovers = tree(kill).len() as u32;
        // What the command left behind is a sample of the tree too, and on a
        // loaded machine the only one: a spawner that hits pid_max or
        // RLIMIT_NPROC can fail and exit between two ticks, its children alive.
        peak_procs = peak_procs.max(leftovers);
        if leftovers > 0 {
            kill_all(kill);
        }
    }
    // Reap: the command (if a limit fired) and every orphan that is ours to reap.
    let reap_deadline = Instant::now() + Duration::from_secs(5);
    loop {
        for (pid, st) in reap_nohang() {
            if pid == child && child_status.is_none() {
                child_status = Some(st);
            }
        }
        let left = tree(kill);
        let child_done = child_status.is_some();
        if child_done && left.is_empty() {
            break;
        }
        if Instant::now() > reap_deadline {
            break;
        }
        if !left.is_empty() {
            kill_all(kill);
        }
        std::thread::sleep(Duration::from_millis(2));
    }

    let (code, signal) = child_status.map(decode).unwrap_or((None, Some(libc::SIGKILL)));
    // SAFETY: getrusage writes into a struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        ru
    };
    let cpu_ms = (ru.ru_utime.tv_sec as u64 + ru.ru_stime.tv_sec as u64) * 1000
        + (ru.ru_utime.tv_usec as u64 + ru.ru_stime.tv_usec as u64) / 1000;
    if limit.is_none() {
        limit = classify_signal(signal, cpu_ms, spec);
    }
    // A fork bomb sits at the limit; a normal program stays well under it.
    if limit.is_none()
        && let Some(n) = spec.process_monitor
        && peak_procs + 2 >= n
    {
        limit = Some((LimitKind::Processes, format!("the tree reached the process limit of {n}")));
    }
    let (limit, limit_detail) = match limit {
        Some((l, d)) => (Some(l), Some(d)),
        None => (None, None),
    };
    report(
        status,
        &Event::Exited {
            code,
            signal,
            limit,
            limit_detail,
            cpu_ms,
            max_rss_kb: ru.ru_maxrss as u64,
            leftovers,
            peak_tree_rss: spec.memory_monitor.map(|_| peak_rss),
            peak_processes: spec.process_monitor.map(|_| peak_procs),
            pid_max,
            duration_ms: ran_for.as_millis() as u64,
        },
    );
    0
}

/// Limits that announce themselves with a signal.
fn classify_signal(signal: Option<i32>, cpu_ms: u64, spec: &Spec) -> Option<(LimitKind, String)> {
    let sig = signal?;
    let cpu_limit = spec.rlimits.cpu_secs;
    if sig == libc::SIGXCPU
        || (sig == libc::SIGKILL && cpu_limit.is_some_and(|c| cpu_ms >= c * 1000))
    {
        return Some((
            LimitKind::CpuTime,
            format!("CPU time limit of {}s", cpu_limit.unwrap_or(0)),
        ));
    }
    if sig == libc::SIGXFSZ {
        return Some((
            LimitKind::FileSize,
            format!("file size limit of {}", fmt_bytes(spec.rlimits.fsize_bytes.unwrap_or(0))),
        ));
    }
    None
}

pub(crate) fn fmt_ms(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

pub(crate) fn fmt_bytes(b: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if v.fract() == 0.0 { format!("{v:.0} {}", U[i]) } else { format!("{v:.1} {}", U[i]) }
}

/// The last stage before exec: limits, Landlock, capabilities, seccomp. Never returns.
fn inner(spec: &Spec, status: &mut File) -> ! {
    // SAFETY: resetting signal state for the command: Rust ignores SIGPIPE, and an
    // ignored signal stays ignored across exec.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
    // Plain mode: the command stays in the helper's process group (the helper is
    // its session leader), so the parent can kill the group if it must kill us.
    let mut warnings = Vec::new();
    let mut rl = Vec::new();
    let mut set_rl = |name: &str, res, v: u64, hard: u64| {
        let lim = libc::rlimit { rlim_cur: v, rlim_max: hard };
        // SAFETY: setrlimit with a valid struct.
        if unsafe { libc::setrlimit(res, &lim) } == 0 {
            rl.push(name.to_owned());
        } else {
            warnings.push(format!("setrlimit {name}: {}", last_err()));
        }
    };
    let r = &spec.rlimits;
    if let Some(c) = r.cpu_secs {
        set_rl("cpu", libc::RLIMIT_CPU, c, c + 1);
    }
    if let Some(d) = r.data_bytes {
        set_rl("data", libc::RLIMIT_DATA, d, d);
    }
    if let Some(n) = r.nproc {
        set_rl("nproc", libc::RLIMIT_NPROC, n, n);
    }
    if let Some(f) = r.fsize_bytes {
        set_rl("fsize", libc::RLIMIT_FSIZE, f, f);
    }
    set_rl("core", libc::RLIMIT_CORE, 0, 0);
    // Nothing but stdio and the status pipe (closed on exec) reaches the command.
    // SAFETY: close_range with constant arguments.
    unsafe { libc::close_range(3, u32::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) };

    let (mut landlock_abi, mut landlock_error) = (None, None);
    if spec.landlock {
        let set = landlock::Ruleset {
            rules: landlock::rules(&spec.read_roots, &spec.write_roots),
            deny_tcp: spec.landlock_deny_tcp,
        };
        match landlock::restrict_self(&set) {
            Ok(e) => {
                landlock_abi = Some(e.abi);
                if !e.skipped.is_empty() {
                    warnings.push(format!("landlock rules skipped: {}", e.skipped.join(", ")));
                }
            }
            Err(e) => landlock_error = Some(e),
        }
    }
    // SAFETY: prctl with integer arguments. Capabilities are dropped from the bounding
    // set so that exec grants none, even to uid 0 inside the user namespace.
    unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
    }
    let (mut seccomp_ok, mut seccomp_error) = (false, None);
    if spec.seccomp {
        match seccomp::install(seccomp::Options { deny_inet: spec.seccomp_deny_inet }) {
            Ok(()) => seccomp_ok = true,
            Err(e) => seccomp_error = Some(e),
        }
    }
    report(
        status,
        &Event::Applied {
            landlock_abi,
            landlock_error,
            seccomp: seccomp_ok,
            seccomp_error,
            rlimits: rl,
            warnings,
        },
    );
    if let Err(e) = std::env::set_current_dir(&spec.cwd) {
        report(status, &setup_failed("chdir", format!("{}: {e}", spec.cwd.display())));
        exit_now(125);
    }
    let argv: Vec<CString> =
        spec.argv.iter().map(|a| CString::new(a.as_bytes()).unwrap_or_default()).collect();
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: argv is a NULL-terminated array of valid C strings kept alive here.
    unsafe { libc::execvp(ptrs[0], ptrs.as_ptr()) };
    let err = std::io::Error::last_os_error();
    report(
        status,
        &Event::ExecFailed { errno: err.raw_os_error().unwrap_or(0), message: err.to_string() },
    );
    exit_now(127)
}

/// What this kernel lets an unprivileged process do, found by trying it in a child.
fn probe() -> Event {
    let landlock_abi = landlock::abi_version();
    let seccomp = seccomp::available();
    let mut notes = Vec::new();
    // The namespace test runs in a child: unshare changes the caller for good.
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 into a valid array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        notes.push(format!("pipe: {}", last_err()));
        return Event::Probe {
            user_namespaces: false,
            mount_api: false,
            overlay: false,
            landlock_abi,
            seccomp,
            notes,
        };
    }
    // SAFETY: single-threaded process.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: we own the write end.
        let mut w = unsafe { File::from_raw_fd(fds[1]) };
        let result = probe_namespaces();
        let _ = w.write_all(result.as_bytes());
        exit_now(0);
    }
    // SAFETY: close our copy of the write end.
    unsafe { libc::close(fds[1]) };
    // SAFETY: we own the read end.
    let mut r = unsafe { File::from_raw_fd(fds[0]) };
    let mut out = String::new();
    let _ = std::io::Read::read_to_string(&mut r, &mut out);
    wait_child(pid);
    let mut parts = out.splitn(4, '\n');
    let userns = parts.next() == Some("1");
    let mount_api = parts.next() == Some("1");
    let overlay = parts.next() == Some("1");
    if let Some(n) = parts.next() {
        notes.extend(n.lines().filter(|l| !l.is_empty()).map(str::to_owned));
    }
    if landlock_abi == 0 {
        notes.push("Landlock is not enabled in this kernel (lsm= boot parameter)".into());
    }
    Event::Probe { user_namespaces: userns, mount_api, overlay, landlock_abi, seccomp, notes }
}

fn probe_namespaces() -> String {
    // SAFETY: plain syscalls; this is a throwaway child process.
    let uid = unsafe { libc::geteuid() };
    // SAFETY: as above.
    let gid = unsafe { libc::getegid() };
    let flags = libc::CLONE_NEWUSER
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWNET
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS;
    // SAFETY: unshare with flags only, in a single-threaded child.
    if unsafe { libc::unshare(flags) } != 0 {
        return format!("0\n0\n0\nunprivileged user namespaces: {}\n", last_err());
    }
    if let Err(e) = write_id_maps(uid, gid) {
        return format!("0\n0\n0\nuser namespace id maps: {e}\n");
    }
    let mut notes = String::new();
    let mount_api = (|| -> Result<(), String> {
        sys_mount(None, Path::new("/"), None, libc::MS_REC | libc::MS_PRIVATE, None)?;
        let t = open_tree(Path::new("/tmp"))?;
        mount_setattr(
            t.as_raw_fd(),
            empty_path(),
            libc::AT_EMPTY_PATH as u32,
            MOUNT_ATTR_RDONLY,
            0,
        )?;
        sys_mount(Some("tmpfs"), Path::new("/tmp"), Some("tmpfs"), 0, Some("size=1m"))?;
        Ok(())
    })();
    let mount_ok = match mount_api {
        Ok(()) => true,
        Err(e) => {
            notes.push_str(&format!("mount namespace setup: {e}\n"));
            false
        }
    };
    let overlay = mount_ok
        && (|| -> Result<(), String> {
            for d in ["l", "u", "w", "m"] {
                std::fs::create_dir(format!("/tmp/{d}")).map_err(|e| e.to_string())?;
            }
            sys_mount(
                Some("overlay"),
                Path::new("/tmp/m"),
                Some("overlay"),
                0,
                Some("lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w"),
            )
        })()
        .map_err(|e| notes.push_str(&format!("overlayfs in a user namespace: {e}\n")))
        .is_ok();
    format!("1\n{}\n{}\n{notes}", u8::from(mount_ok), u8::from(overlay))
}
