//! A seccomp-BPF deny-list, assembled here (about forty instructions, no wrapper
//! crate: we need the x32 check and argument tests that generic builders lack).
//!
//! Denied with `EPERM`: changing mounts or namespaces (mount, umount, pivot_root, the
//! new mount API, unshare, setns, namespace flags on clone), loading kernel code
//! (modules, kexec, bpf), keyrings, userfaultfd, perf events, io_uring (its operations
//! bypass seccomp), `TIOCSTI`/`TIOCLINUX` (typing into a terminal), and with the
//! network off but no network namespace, IPv4/IPv6 sockets. `clone3` gets `ENOSYS`
//! (its flags live in memory a filter cannot read) so libc falls back to `clone`.
//! Any other architecture's system calls kill the process; on x86-64 so do x32 ones.

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SockFilter {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const SockFilter,
}

const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD (0) | BPF_W (0) | BPF_ABS (0x20)
const BPF_JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JGE_K: u16 = 0x05 | 0x30;
const BPF_JSET_K: u16 = 0x05 | 0x40;
const BPF_RET_K: u16 = 0x06;

const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_ALLOW: u32 = 0x7fff_0000;

const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const fn off_arg_lo(i: u32) -> u32 {
    16 + 8 * i
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 62 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 183 | 0x8000_0000 | 0x4000_0000;
/// Other architectures: no filter (reported as "seccomp unavailable").
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: u32 = 0;

/// Options for the filter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Deny `socket(AF_INET | AF_INET6, ...)`.
    pub deny_inet: bool,
}

/// System calls denied outright.
fn denied() -> Vec<i64> {
    vec![
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_open_by_handle_at,
        libc::SYS_acct,
        libc::SYS_quotactl,
    ]
}

const NAMESPACE_FLAGS: u32 = (libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP) as u32;

#[derive(Clone, Copy)]
enum Target {
    Next,
    Skip(u8),
    Eperm,
    Enosys,
    Label(usize),
}

struct Asm {
    code: Vec<(u16, Target, Target, u32)>,
    labels: Vec<Option<usize>>,
}

impl Asm {
    fn stmt(&mut self, code: u16, k: u32) {
        self.code.push((code, Target::Next, Target::Next, k));
    }
    fn jump(&mut self, code: u16, k: u32, jt: Target, jf: Target) {
        self.code.push((code, jt, jf, k));
    }
    fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }
    fn place(&mut self, l: usize) {
        self.labels[l] = Some(self.code.len());
    }
    fn finish(mut self) -> Vec<SockFilter> {
        let eperm = self.code.len();
        self.stmt(BPF_RET_K, RET_ERRNO | libc::EPERM as u32);
        let enosys = self.code.len();
        self.stmt(BPF_RET_K, RET_ERRNO | libc::ENOSYS as u32);
        let resolve = |at: usize, t: Target, labels: &[Option<usize>]| -> u8 {
            let dest = match t {
                Target::Next => return 0,
                Target::Skip(n) => return n,
                Target::Eperm => eperm,
                Target::Enosys => enosys,
                Target::Label(l) => labels[l].expect("label placed"),
            };
            let off = dest - at - 1;
            u8::try_from(off).expect("seccomp jump fits in 255 instructions")
        };
        self.code
            .iter()
            .enumerate()
            .map(|(i, &(code, jt, jf, k))| SockFilter {
                code,
                jt: resolve(i, jt, &self.labels),
                jf: resolve(i, jf, &self.labels),
                k,
            })
            .collect()
    }
}

/// Assembles the filter program.
pub fn program(opts: Options) -> Vec<SockFilter> {
    let mut a = Asm { code: Vec::new(), labels: Vec::new() };
    a.stmt(BPF_LD_W_ABS, OFF_ARCH);
    a.jump(BPF_JEQ_K, AUDIT_ARCH, Target::Skip(1), Target::Next);
    a.stmt(BPF_RET_K, RET_KILL_PROCESS);
    a.stmt(BPF_LD_W_ABS, OFF_NR);
    #[cfg(target_arch = "x86_64")]
    a.jump(BPF_JGE_K, 0x4000_0000, Target::Eperm, Target::Next); // x32 ABI
    for nr in denied() {
        a.jump(BPF_JEQ_K, nr as u32, Target::Eperm, Target::Next);
    }
    a.jump(BPF_JEQ_K, libc::SYS_clone3 as u32, Target::Enosys, Target::Next);
    let l_clone = a.label();
    let l_ioctl = a.label();
    let l_socket = a.label();
    a.jump(BPF_JEQ_K, libc::SYS_clone as u32, Target::Label(l_clone), Target::Next);
    a.jump(BPF_JEQ_K, libc::SYS_ioctl as u32, Target::Label(l_ioctl), Target::Next);
    if opts.deny_inet {
        a.jump(BPF_JEQ_K, libc::SYS_socket as u32, Target::Label(l_socket), Target::Next);
    }
    a.stmt(BPF_RET_K, RET_ALLOW);

    a.place(l_clone);
    a.stmt(BPF_LD_W_ABS, off_arg_lo(0));
    a.jump(BPF_JSET_K, NAMESPACE_FLAGS, Target::Eperm, Target::Next);
    a.stmt(BPF_RET_K, RET_ALLOW);

    a.place(l_ioctl);
    a.stmt(BPF_LD_W_ABS, off_arg_lo(1));
    a.jump(BPF_JEQ_K, libc::TIOCSTI as u32, Target::Eperm, Target::Next);
    a.jump(BPF_JEQ_K, libc::TIOCLINUX as u32, Target::Eperm, Target::Next);
    a.stmt(BPF_RET_K, RET_ALLOW);

    a.place(l_socket);
    if opts.deny_inet {
        a.stmt(BPF_LD_W_ABS, off_arg_lo(0));
        a.jump(BPF_JEQ_K, libc::AF_INET as u32, Target::Eperm, Target::Next);
        a.jump(BPF_JEQ_K, libc::AF_INET6 as u32, Target::Eperm, Target::Next);
    }
    a.stmt(BPF_RET_K, RET_ALLOW);
    a.finish()
}

/// Whether this kernel accepts seccomp filters (without installing one), on an
/// architecture whose filter we assemble.
pub fn available() -> bool {
    if AUDIT_ARCH == 0 {
        return false;
    }
    // SAFETY: PR_GET_SECCOMP takes no pointers.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// Installs the filter on the calling thread. `PR_SET_NO_NEW_PRIVS` must be set.
pub fn install(opts: Options) -> Result<(), String> {
    let prog = program(opts);
    let fprog = SockFprog { len: prog.len() as u16, filter: prog.as_ptr() };
    // SAFETY: `fprog` points at `prog`, alive for the duration of the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            1u32, /* SECCOMP_SET_MODE_FILTER */
            0u32,
            &fprog as *const SockFprog,
        )
    };
    if r != 0 {
        return Err(format!("seccomp: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny interpreter for the instructions we emit, so the program's decisions
    /// can be checked as a table without installing it.
    fn run(prog: &[SockFilter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let ins = prog[pc];
            match ins.code {
                BPF_LD_W_ABS => {
                    let o = ins.k as usize;
                    acc = u32::from_le_bytes(data[o..o + 4].try_into().unwrap());
                    pc += 1;
                }
                BPF_RET_K => return ins.k,
                c => {
                    let hit = match c {
                        BPF_JEQ_K => acc == ins.k,
                        BPF_JGE_K => acc >= ins.k,
                        BPF_JSET_K => acc & ins.k != 0,
                        _ => panic!("unknown op {c:#x}"),
                    };
                    pc += 1 + usize::from(if hit { ins.jt } else { ins.jf });
                }
            }
        }
    }

    #[test]
    #[allow(clippy::unnecessary_cast, clippy::type_complexity)] // ioctl numbers' type varies by target
    fn decisions_table() {
        let eperm = RET_ERRNO | libc::EPERM as u32;
        let enosys = RET_ERRNO | libc::ENOSYS as u32;
        let plain = program(Options { deny_inet: false });
        let no_inet = program(Options { deny_inet: true });
        let a = AUDIT_ARCH;
        let z = [0u64; 6];
        let table: &[(&[SockFilter], u32, i64, [u64; 6], u32)] = &[
            (&plain, a, libc::SYS_read, z, RET_ALLOW),
            (&plain, a, libc::SYS_mount, z, eperm),
            (&plain, a, libc::SYS_unshare, z, eperm),
            (&plain, a, libc::SYS_io_uring_setup, z, eperm),
            (&plain, a, libc::SYS_clone3, z, enosys),
            (&plain, a, libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0], RET_ALLOW),
            (&plain, a, libc::SYS_clone, [libc::CLONE_NEWUSER as u64, 0, 0, 0, 0, 0], eperm),
            (&plain, a, libc::SYS_ioctl, [0, libc::TIOCSTI as u64, 0, 0, 0, 0], eperm),
            (&plain, a, libc::SYS_ioctl, [0, libc::TCGETS as u64, 0, 0, 0, 0], RET_ALLOW),
            (&plain, a, libc::SYS_socket, [libc::AF_INET as u64, 0, 0, 0, 0, 0], RET_ALLOW),
            (&no_inet, a, libc::SYS_socket, [libc::AF_INET as u64, 0, 0, 0, 0, 0], eperm),
            (&no_inet, a, libc::SYS_socket, [libc::AF_INET6 as u64, 0, 0, 0, 0, 0], eperm),
            (&no_inet, a, libc::SYS_socket, [libc::AF_UNIX as u64, 0, 0, 0, 0, 0], RET_ALLOW),
            (&no_inet, a, libc::SYS_mount, z, eperm),
            (&plain, 0x4000_0003, libc::SYS_read, z, RET_KILL_PROCESS), // i386
        ];
        for (i, &(prog, arch, nr, args, want)) in table.iter().enumerate() {
            assert_eq!(run(prog, arch, nr as u32, args), want, "row {i}: nr {nr}");
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(run(&plain, a, 0x4000_0000 + libc::SYS_mount as u32, z), eperm);
    }
}
