//! Landlock through its three system calls (no wrapper crate: the ABI is three
//! structs, and owning it lets us degrade per ABI version explicitly).
//!
//! Rules are allow-lists. Read and execute are allowed on `/` split around the hidden
//! paths (`policy::split_read_roots`), writes on the workspace, the writable paths and
//! the private temporary directory, device writes on `/dev`. From ABI 4 TCP bind and
//! connect can be denied; from ABI 6 signals and abstract UNIX sockets are scoped to
//! the sandbox.

use std::{
    ffi::CString,
    os::{fd::AsRawFd, unix::ffi::OsStrExt},
    path::{Path, PathBuf},
};

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;

pub const FS_EXECUTE: u64 = 1 << 0;
pub const FS_WRITE_FILE: u64 = 1 << 1;
pub const FS_READ_FILE: u64 = 1 << 2;
pub const FS_READ_DIR: u64 = 1 << 3;
const FS_REMOVE_DIR: u64 = 1 << 4;
const FS_REMOVE_FILE: u64 = 1 << 5;
const FS_MAKE_CHAR: u64 = 1 << 6;
const FS_MAKE_DIR: u64 = 1 << 7;
const FS_MAKE_REG: u64 = 1 << 8;
const FS_MAKE_SOCK: u64 = 1 << 9;
const FS_MAKE_FIFO: u64 = 1 << 10;
const FS_MAKE_BLOCK: u64 = 1 << 11;
const FS_MAKE_SYM: u64 = 1 << 12;
const FS_REFER: u64 = 1 << 13; // ABI 2
const FS_TRUNCATE: u64 = 1 << 14; // ABI 3
const FS_IOCTL_DEV: u64 = 1 << 15; // ABI 5
const NET_BIND_TCP: u64 = 1 << 0; // ABI 4
const NET_CONNECT_TCP: u64 = 1 << 1;
const SCOPE_ABSTRACT_UNIX: u64 = 1 << 0; // ABI 6
const SCOPE_SIGNAL: u64 = 1 << 1;

/// Rights that apply to regular files (the kernel rejects directory-only rights on a
/// file rule).
const FILE_RIGHTS: u64 = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;
pub const READ: u64 = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
pub const WRITE: u64 = FS_WRITE_FILE
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_CHAR
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_MAKE_SOCK
    | FS_MAKE_FIFO
    | FS_MAKE_BLOCK
    | FS_MAKE_SYM
    | FS_REFER
    | FS_TRUNCATE
    | FS_IOCTL_DEV;
/// Writing to device nodes (`/dev/null`, terminals) and their ioctls.
pub const DEVICE: u64 = FS_WRITE_FILE | FS_IOCTL_DEV | FS_TRUNCATE;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI version the kernel offers, 0 when none.
pub fn abi_version() -> u32 {
    // SAFETY: the "version" query takes no attribute pointer and size 0.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if v < 0 { 0 } else { v as u32 }
}

fn fs_rights_for(abi: u32) -> u64 {
    let mut all = READ | WRITE;
    if abi < 2 {
        all &= !FS_REFER;
    }
    if abi < 3 {
        all &= !FS_TRUNCATE;
    }
    if abi < 5 {
        all &= !FS_IOCTL_DEV;
    }
    all
}

/// One allow rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub path: PathBuf,
    pub access: u64,
}

/// What to enforce.
#[derive(Debug, Clone, Default)]
pub struct Ruleset {
    pub rules: Vec<Rule>,
    pub deny_tcp: bool,
}

/// What the kernel enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enforced {
    pub abi: u32,
    /// Rules whose path could not be opened (missing paths are skipped silently;
    /// these are the others).
    pub skipped: Vec<String>,
    pub tcp_denied: bool,
    pub scoped: bool,
}

/// Restricts the calling thread (and its future children) to `set`. Requires
/// `PR_SET_NO_NEW_PRIVS` (set here). Runs in the sandboxed child before exec.
pub fn restrict_self(set: &Ruleset) -> Result<Enforced, String> {
    let abi = abi_version();
    if abi == 0 {
        return Err("Landlock is not available in this kernel".into());
    }
    let handled_fs = fs_rights_for(abi);
    let handled_net = if set.deny_tcp && abi >= 4 { NET_BIND_TCP | NET_CONNECT_TCP } else { 0 };
    let scoped = if abi >= 6 { SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL } else { 0 };
    let attr =
        RulesetAttr { handled_access_fs: handled_fs, handled_access_net: handled_net, scoped };
    // SAFETY: `attr` is a valid, initialized struct of the size we pass; unknown
    // trailing fields are zero as the kernel requires.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if fd < 0 {
        return Err(format!("landlock_create_ruleset: {}", std::io::Error::last_os_error()));
    }
    let ruleset_fd = fd as i32;
    let mut skipped = Vec::new();
    for rule in &set.rules {
        let Ok(c) = CString::new(rule.path.as_os_str().as_bytes()) else { continue };
        // O_PATH: no permission needed, and never blocks (a plain open of a FIFO
        // among the rule paths would wait for a writer forever).
        // SAFETY: `c` is a valid NUL-terminated path.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::NotFound {
                skipped.push(rule.path.display().to_string());
            }
            continue;
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        let is_dir = {
            // SAFETY: fstat on our descriptor into a zeroed struct we own.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
            ok && (st.st_mode & libc::S_IFMT) == libc::S_IFDIR
        };
        let mut access = rule.access & handled_fs;
        if !is_dir {
            access &= FILE_RIGHTS;
        }
        if access == 0 {
            continue;
        }
        let attr = PathBeneathAttr { allowed_access: access, parent_fd: file.as_raw_fd() };
        // SAFETY: valid ruleset fd, valid packed attribute struct.
        let r = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset_fd,
                RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            )
        };
        if r < 0 {
            skipped.push(format!("{}: {}", rule.path.display(), std::io::Error::last_os_error()));
        }
    }
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(format!("PR_SET_NO_NEW_PRIVS: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: valid ruleset fd, no flags.
    let r = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset_fd, 0u32) };
    let err = std::io::Error::last_os_error();
    // SAFETY: we own the ruleset fd.
    unsafe { libc::close(ruleset_fd) };
    if r < 0 {
        return Err(format!("landlock_restrict_self: {err}"));
    }
    Ok(Enforced { abi, skipped, tcp_denied: handled_net != 0, scoped: scoped != 0 })
}

/// Device nodes a command may write to (and `ioctl`). Not all of `/dev`: without a
/// mount namespace `/dev/shm` there is the host's.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Rules for a sandbox: read on `read_roots`, full access on `write_roots`, write
/// and ioctl on the usual device nodes.
pub fn rules(read_roots: &[PathBuf], write_roots: &[PathBuf]) -> Vec<Rule> {
    let mut out: Vec<Rule> =
        read_roots.iter().map(|p| Rule { path: p.clone(), access: READ }).collect();
    out.extend(write_roots.iter().map(|p| Rule { path: p.clone(), access: READ | WRITE }));
    out.extend(DEVICES.iter().map(|d| Rule { path: Path::new(d).to_path_buf(), access: DEVICE }));
    out
}
