//! The parent side: probe the host once, then for each command plan the isolation,
//! prepare cgroups and throwaway layers, spawn the helper, stream and bound the
//! output, enforce a backstop timeout, and turn the helper's reports into an
//! [`ExecResult`].

#![allow(clippy::disallowed_methods)] // this crate is where project processes start

use std::{
    ffi::OsString,
    fs::File,
    io::{BufRead, BufReader, Read},
    os::{
        fd::{AsRawFd, FromRawFd},
        unix::process::CommandExt,
    },
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::{
        Mutex,
        atomic::{AtomicBool, Ordering},
        mpsc,
    },
    time::{Duration, Instant},
};

use protocol::{ExecResult, Isolation, LimitKind};

use crate::{
    Error,
    backend::{self, BwrapArgs, ContainerArgs},
    capture::Capture,
    cgroup::{self, CgroupBase, RunCgroup},
    helper::{fmt_bytes, fmt_ms},
    policy::{self, Backend, HostCaps, Network, Plan, Policy, WorkspaceMode},
    spec::{Event, HELPER_ARG, Mode, Overlay, Rlimits, STATUS_FD, Spec},
};

/// Where things are; given by the caller (libraries read no environment).
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The executable that answers to [`HELPER_ARG`] (the `ironbees` binary itself).
    pub helper: PathBuf,
    /// The user's home directory: its secret locations are hidden.
    pub home: Option<PathBuf>,
    /// Where per-run scratch directories go (throwaway layers, copies).
    pub temp_dir: PathBuf,
    /// `PATH` to search for `bwrap`, `docker` and `podman`.
    pub search_path: Option<OsString>,
    /// Probe for a container engine (slow when none answers; off by default).
    pub probe_container: bool,
    /// Probe bubblewrap even when namespaces work (it is always probed when they
    /// do not, as the fallback).
    pub probe_bubblewrap: bool,
    /// A file to keep the kernel probe's answer in between runs (a directory only
    /// the user can write, e.g. `$XDG_RUNTIME_DIR`). Valid for one boot, one kernel
    /// and one helper binary; ignored unless owned by us and not writable by others.
    pub probe_cache: Option<PathBuf>,
}

/// Stdin of the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinMode {
    Null,
    Inherit,
}

/// Which stream a chunk of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One command to run.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub argv: Vec<String>,
    /// The project directory: writable (or throwaway); everything else read-only.
    pub workspace: PathBuf,
    /// Where the command starts; inside the workspace. Defaults to the workspace.
    pub cwd: Option<PathBuf>,
    /// The complete environment of the command (filter it with
    /// [`crate::filter_env`] first; names removed go in `env_removed`).
    pub env: Vec<(String, String)>,
    pub env_removed: Vec<String>,
    pub stdin: StdinMode,
}

/// Receives output chunks as they arrive.
pub type OutputFn<'a> = dyn Fn(Stream, &[u8]) + Sync + 'a;

/// Callbacks while a command runs.
#[derive(Default)]
pub struct Hooks<'a> {
    /// Called with every chunk of output as it arrives (from reader threads).
    pub on_output: Option<&'a OutputFn<'a>>,
    /// Checked every few milliseconds; when set the tree is killed and
    /// [`Error::Cancelled`] returned.
    pub cancel: Option<&'a stdx::CancellationToken>,
}

/// A sandbox for one machine: probes once, runs many commands.
#[derive(Debug)]
pub struct Sandbox {
    cfg: SandboxConfig,
    caps: HostCaps,
    cgroup_base: Option<CgroupBase>,
}

impl Sandbox {
    /// Probes what the host offers (a few milliseconds: one helper process).
    pub fn new(cfg: SandboxConfig) -> Result<Sandbox, Error> {
        if !cfg.helper.is_file() {
            return Err(Error::Setup {
                stage: "helper".into(),
                message: format!("sandbox helper {} not found", cfg.helper.display()),
            });
        }
        let mut caps = cached_probe(&cfg)?;
        let mut cgroup_base = None;
        let proc_cg = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut cg_notes = Vec::new();
        for base in cgroup::candidates(&proc_cg, &mountinfo) {
            match cgroup::usable(&base) {
                Ok(()) => {
                    caps.cgroup = Some(base.version().to_owned());
                    cgroup_base = Some(base);
                    break;
                }
                Err(e) => cg_notes.push(e),
            }
        }
        if cgroup_base.is_none() {
            caps.notes.push(if cg_notes.is_empty() {
                "no cgroup hierarchy with memory and pids controllers".to_owned()
            } else {
                cg_notes.join("; ")
            });
        }
        if cfg.probe_bubblewrap || !(caps.user_namespaces && caps.mount_api) {
            // Only when it may be used: running bwrap costs a few milliseconds.
            if let Some(bwrap) = find_in_path(cfg.search_path.as_deref(), "bwrap") {
                match probe_bwrap(&bwrap, &cfg.helper) {
                    Ok(()) => caps.bubblewrap = Some(bwrap),
                    Err(e) => caps.notes.push(format!("bubblewrap found but unusable: {e}")),
                }
            }
        }
        if cfg.probe_container {
            match probe_container(cfg.search_path.as_deref()) {
                Ok(engine) => caps.container_engine = Some(engine),
                Err(e) => caps.notes.push(e),
            }
        }
        Ok(Sandbox { cfg, caps, cgroup_base })
    }

    /// What the probe found.
    pub fn caps(&self) -> &HostCaps {
        &self.caps
    }

    /// Plans without running: the backend and warnings a command would get.
    pub fn plan(&self, policy: &Policy) -> Result<Plan, Error> {
        policy::plan(policy, &self.caps).map_err(|r| Error::Unavailable(r.to_string()))
    }

    /// Runs one command under `policy`.
    pub fn run(
        &self,
        req: &RunRequest,
        policy: &Policy,
        hooks: &Hooks<'_>,
    ) -> Result<ExecResult, Error> {
        // One span per command when telemetry is exported. The program's file
        // name only: arguments and the environment may carry secrets.
        let program = req
            .argv
            .first()
            .map(|a| Path::new(a).file_name().map_or(a.as_str(), |n| n.to_str().unwrap_or("?")))
            .unwrap_or_default()
            .to_owned();
        let span = tracing::info_span!(
            "sandbox.exec",
            otel.name = %format!("sandbox.exec {program}"),
            process.executable.name = %program,
            process.exit.code = tracing::field::Empty,
            ironbees.sandbox.backend = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let _entered = span.enter();
        let result = self.run_in_span(req, policy, hooks);
        match &result {
            Ok(r) => {
                span.record("ironbees.sandbox.backend", r.isolation.backend.as_str());
                if let Some(code) = r.exit_code {
                    span.record("process.exit.code", i64::from(code));
                }
                if r.exit_code != Some(0) {
                    span.record("otel.status_code", "ERROR");
                }
            }
            Err(e) => {
                span.record("error.type", e.code().as_str());
                span.record("otel.status_code", "ERROR");
            }
        }
        result
    }

    fn run_in_span(
        &self,
        req: &RunRequest,
        policy: &Policy,
        hooks: &Hooks<'_>,
    ) -> Result<ExecResult, Error> {
        let plan = self.plan(policy)?;
        if req.argv.is_empty() || req.argv[0].is_empty() {
            return Err(Error::InvalidRequest("no command given".into()));
        }
        let workspace = canonical_dir(&req.workspace)?;
        let cwd = match &req.cwd {
            Some(c) => canonical_dir(&if c.is_absolute() { c.clone() } else { workspace.join(c) })?,
            None => workspace.clone(),
        };
        if !cwd.starts_with(&workspace) {
            return Err(Error::InvalidRequest(format!(
                "working directory {} is outside the workspace {}",
                cwd.display(),
                workspace.display()
            )));
        }
        let mut writable = Vec::new();
        for w in &policy.writable {
            writable.push(canonical_dir(w)?);
        }
        let scratch = tempfile::Builder::new()
            .prefix("ironbees-run-")
            .tempdir_in(&self.cfg.temp_dir)
            .map_err(|e| {
                Error::io(
                    format!("creating a scratch directory in {}", self.cfg.temp_dir.display()),
                    e,
                )
            })?;
        if scratch.path().starts_with(&workspace) {
            return Err(Error::InvalidRequest(format!(
                "the scratch directory {} is inside the workspace; choose another temp dir",
                scratch.path().display()
            )));
        }

        // A throwaway workspace without overlayfs: run in a copy.
        let (run_ws, run_cwd) = if policy.workspace == WorkspaceMode::Throwaway && !plan.overlay {
            let copy = scratch.path().join("workspace");
            copy_tree(&workspace, &copy).map_err(|e| Error::io("copying the workspace", e))?;
            let rel = cwd.strip_prefix(&workspace).unwrap_or(Path::new(""));
            (copy.clone(), copy.join(rel))
        } else {
            (workspace.clone(), cwd.clone())
        };

        let hidden = hidden_paths(self.cfg.home.as_deref(), &run_ws, &policy.hidden, &writable);
        let broad_workspace = workspace == Path::new("/")
            || self
                .cfg
                .home
                .as_deref()
                .is_some_and(|h| std::fs::canonicalize(h).is_ok_and(|h| h == workspace));
        let hidden_list: Vec<PathBuf> = hidden.iter().map(|(p, _)| p.clone()).collect();
        let read_roots = policy::split_read_roots(&hidden_list, &list_dir);

        let mut isolation = Isolation {
            backend: plan.backend.as_str().to_owned(),
            network: match policy.network {
                Network::Off => "off".into(),
                Network::On => "on".into(),
            },
            workspace: match policy.workspace {
                WorkspaceMode::Writable => "writable".into(),
                WorkspaceMode::Throwaway => {
                    if plan.overlay {
                        "throwaway(overlay)".into()
                    } else {
                        "throwaway(copy)".into()
                    }
                }
            },
            hidden_paths: hidden_list.iter().map(|p| p.display().to_string()).collect(),
            env_removed: req.env_removed.clone(),
            warnings: plan.warnings.clone(),
            ..Isolation::default()
        };
        if broad_workspace {
            isolation.warnings.push(format!(
                "the workspace is {}: everything under it is writable (secret locations stay hidden)",
                workspace.display()
            ));
        }

        if plan.backend == Backend::Container {
            return self
                .run_container(req, policy, &plan, &run_ws, &run_cwd, &writable, isolation, hooks);
        }

        let run_id = format!("ironbees-{}-{}", std::process::id(), unique());
        let cg = if plan.cgroup {
            match RunCgroup::create(
                self.cgroup_base.as_ref().expect("plan.cgroup implies a base"),
                &run_id,
                policy.memory_bytes,
                policy.max_processes,
            ) {
                Ok(cg) => Some(cg),
                Err(e) => {
                    isolation.warnings.push(format!(
                        "cgroup could not be created ({e}): limits fall back to rlimits"
                    ));
                    None
                }
            }
        } else {
            None
        };
        let cgroup_on = cg.is_some();

        let private_tmp = scratch.path().join("tmp");
        std::fs::create_dir(&private_tmp).map_err(|e| Error::io("creating the private tmp", e))?;
        let mut write_roots = vec![run_ws.clone()];
        write_roots.extend(writable.iter().cloned());
        let mut env = req.env.clone();
        if plan.namespaces {
            write_roots.extend([PathBuf::from("/tmp"), PathBuf::from("/dev/shm")]);
            set_env(&mut env, "TMPDIR", "/tmp");
        } else {
            write_roots.push(private_tmp.clone());
            set_env(&mut env, "TMPDIR", &private_tmp.to_string_lossy());
        }

        let overlay = if plan.overlay && plan.backend == Backend::Namespaces {
            let o = Overlay {
                upper: scratch.path().join("upper"),
                work: scratch.path().join("work"),
                staging: scratch.path().join("merged"),
            };
            for d in [&o.upper, &o.work, &o.staging] {
                std::fs::create_dir(d)
                    .map_err(|e| Error::io("creating the overlay directories", e))?;
            }
            Some(o)
        } else {
            None
        };
        // SAFETY: getuid/getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let hide_run = true;
        let keep_visible: Vec<PathBuf> = if policy.network == Network::On {
            vec![PathBuf::from("/run/systemd/resolve")]
        } else {
            Vec::new()
        };
        let keep_private = policy::keep_through_private_mounts(
            &needed_paths(req, &run_ws, &env, &self.cfg.helper, plan.backend),
            &run_ws,
        );
        let cg_files = cg.as_ref().map(|c| c.procs_files()).unwrap_or_default();
        let spec = Spec {
            mode: match plan.backend {
                Backend::Namespaces => Mode::Namespaces,
                Backend::Bubblewrap => Mode::BwrapInner,
                _ => Mode::Plain,
            },
            argv: req.argv.clone(),
            cwd: run_cwd.clone(),
            workspace: run_ws.clone(),
            overlay,
            writable: writable.clone(),
            hidden: hidden.clone(),
            keep_visible: keep_visible.clone(),
            keep_private: keep_private.clone(),
            hide_run,
            read_roots,
            write_roots: policy::split_roots(&write_roots, &hidden_list, &list_dir),
            network_namespace: plan.network_namespace,
            uid,
            gid,
            landlock: plan.landlock,
            landlock_deny_tcp: plan.landlock_deny_tcp,
            seccomp: plan.seccomp,
            seccomp_deny_inet: plan.seccomp_deny_inet,
            rlimits: Rlimits {
                cpu_secs: policy.cpu_time.map(|d| d.as_secs().max(1)),
                data_bytes: if cgroup_on { None } else { policy.memory_bytes },
                nproc: if cgroup_on { None } else { policy.max_processes.map(u64::from) },
                fsize_bytes: policy.max_file_size,
            },
            timeout_ms: policy.timeout.map(|d| d.as_millis() as u64),
            memory_monitor: if cgroup_on { None } else { policy.memory_bytes },
            process_monitor: if cgroup_on { None } else { policy.max_processes },
            // bwrap's first process joins (see below): inside, cgroupfs is read-only.
            cgroup_procs: if plan.backend == Backend::Bubblewrap {
                Vec::new()
            } else {
                cg_files.clone()
            },
            tmpfs_bytes: policy.tmpfs_bytes,
        };
        let spec_json = serde_json::to_string(&spec).expect("spec serializes");
        let mut cmd = if plan.backend == Backend::Bubblewrap {
            let bwrap = self.caps.bubblewrap.as_ref().expect("plan implies bwrap");
            let mut c = Command::new(bwrap);
            c.args(backend::bwrap_args(&BwrapArgs {
                workspace: &run_ws,
                cwd: &run_cwd,
                writable: &writable,
                hidden: &hidden,
                keep_visible: &keep_visible,
                keep_private: &keep_private,
                hide_run,
                network: policy.network,
                tmpfs_bytes: policy.tmpfs_bytes,
            }));
            c.arg(&self.cfg.helper).args([HELPER_ARG, "run", &spec_json]);
            c
        } else {
            let mut c = Command::new(&self.cfg.helper);
            c.args([HELPER_ARG, "run", &spec_json]);
            c
        };
        cmd.env_clear().envs(env.iter().map(|(k, v)| (k, v))).current_dir(&run_cwd);
        if plan.backend == Backend::Bubblewrap {
            // bwrap cannot join our cgroup for us; the helper inside cannot either
            // (cgroupfs is read-only there), so the first process joins here.
            let files = cg_files;
            // SAFETY: the hook only opens and writes files (no allocation after the
            // strings are built here) in the forked child.
            let paths: Vec<std::ffi::CString> = files
                .iter()
                .map(|p| {
                    std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap_or_default()
                })
                .collect();
            unsafe {
                cmd.pre_exec(move || {
                    let pid = libc::getpid();
                    let mut buf = [0u8; 16];
                    let n = fmt_pid(pid, &mut buf);
                    for p in &paths {
                        let fd = libc::open(p.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                        if fd >= 0 {
                            libc::write(fd, buf.as_ptr() as *const libc::c_void, n);
                            libc::close(fd);
                        }
                    }
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                    Ok(())
                });
            }
        }
        let kill_rest = || {
            if let Some(c) = &cg {
                c.kill_all();
            }
        };
        let outcome = spawn_and_wait(cmd, req.stdin, policy, hooks, &kill_rest);
        let stats = cg.as_ref().map(|c| c.stats());
        if let Some(c) = &cg {
            c.remove();
        }
        drop(scratch);
        let outcome = outcome?;
        let cg_version = cg.as_ref().and(self.cgroup_base.as_ref()).map(|b| b.version());
        assemble(req, policy, &plan, isolation, outcome, stats, cg_version)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_container(
        &self,
        req: &RunRequest,
        policy: &Policy,
        _plan: &Plan,
        ws: &Path,
        cwd: &Path,
        writable: &[PathBuf],
        mut isolation: Isolation,
        hooks: &Hooks<'_>,
    ) -> Result<ExecResult, Error> {
        let engine = self.caps.container_engine.as_ref().expect("plan implies an engine");
        let name = format!("ironbees-{}-{}", std::process::id(), unique());
        // SAFETY: getuid/getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let args = backend::container_args(&ContainerArgs {
            name: &name,
            image: policy.container_image.as_deref().unwrap_or_default(),
            workspace: ws,
            cwd,
            writable,
            network: policy.network,
            workspace_mode: policy.workspace,
            memory_bytes: policy.memory_bytes,
            max_processes: policy.max_processes,
            cpu_time: policy.cpu_time,
            tmpfs_bytes: policy.tmpfs_bytes,
            uid,
            gid,
            env: &req.env,
            argv: &req.argv,
        });
        let mut cmd = Command::new(engine);
        cmd.args(&args);
        isolation.user_namespace = false;
        isolation.pid_namespace = true;
        isolation.mount_namespace = true;
        isolation.network_namespace = policy.network == Network::Off;
        if isolation.network_namespace {
            isolation.network_enforcement = vec!["container".into()];
        }
        isolation.filesystem = "container".into();
        isolation.memory_enforcement = policy.memory_bytes.map(|_| "container".into());
        isolation.process_enforcement = policy.max_processes.map(|_| "container".into());
        isolation.hidden_paths.clear(); // the container sees only the workspace
        let outcome = spawn_and_wait(cmd, req.stdin, policy, hooks, &|| {});
        if outcome.as_ref().map(|o| o.killed.is_some()).unwrap_or(true) {
            let _ = Command::new(engine)
                .args(["kill", &name])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let o = outcome?;
        let mut r = ExecResult {
            command: req.argv.clone(),
            duration_ms: o.duration.as_millis() as u64,
            stdout: o.stdout,
            stderr: o.stderr,
            isolation,
            ..ExecResult::default()
        };
        match o.killed {
            Some((l, d)) => {
                r.limit = Some(l);
                r.limit_detail = Some(d);
                r.signal = Some("SIGKILL".into());
            }
            None => {
                r.exit_code = o.helper_code;
                if o.helper_code == Some(137) && policy.memory_bytes.is_some() {
                    r.isolation.warnings.push(
                        "exit 137 from the container: killed, possibly by its memory limit".into(),
                    );
                }
            }
        }
        Ok(r)
    }
}

fn fmt_pid(pid: i32, buf: &mut [u8; 16]) -> usize {
    let mut digits = [0u8; 12];
    let mut n = 0;
    let mut v = pid.max(0) as u32;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..n {
        buf[i] = digits[n - 1 - i];
    }
    buf[n] = b'\n';
    n + 1
}

fn set_env(env: &mut Vec<(String, String)>, k: &str, v: &str) {
    env.retain(|(kk, _)| kk != k);
    env.push((k.to_owned(), v.to_owned()));
}

fn unique() -> u64 {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn canonical_dir(p: &Path) -> Result<PathBuf, Error> {
    let c = std::fs::canonicalize(p).map_err(|_| Error::NotFound { path: p.to_path_buf() })?;
    if !c.is_dir() {
        return Err(Error::NotFound { path: p.to_path_buf() });
    }
    Ok(c)
}

fn list_dir(p: &Path) -> Vec<String> {
    std::fs::read_dir(p)
        .map(|rd| rd.flatten().filter_map(|e| e.file_name().into_string().ok()).collect())
        .unwrap_or_default()
}

/// Secret locations that exist, with whether each is a directory. Paths inside a
/// writable path stay visible (the caller asked for them).
fn hidden_paths(
    home: Option<&Path>,
    workspace: &Path,
    extra: &[PathBuf],
    writable: &[PathBuf],
) -> Vec<(PathBuf, bool)> {
    policy::secret_candidates(home, workspace, &list_dir, extra)
        .into_iter()
        .filter(|p| !writable.iter().any(|w| p.starts_with(w) || w.starts_with(p)))
        .filter_map(|p| {
            let m = std::fs::metadata(&p).ok()?;
            let real = std::fs::canonicalize(&p).ok()?;
            Some((real, m.is_dir()))
        })
        .collect()
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let ft = e.file_type()?;
        let dst = to.join(e.file_name());
        if ft.is_dir() {
            copy_tree(&e.path(), &dst)?;
        } else if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(e.path())?, &dst)?;
        } else if ft.is_file() {
            std::fs::copy(e.path(), &dst)?;
        }
    }
    let perm = std::fs::metadata(from)?.permissions();
    std::fs::set_permissions(to, perm)
}

pub(crate) fn find_in_path(path: Option<&std::ffi::OsStr>, name: &str) -> Option<PathBuf> {
    let path = path?;
    std::env::split_paths(path).map(|d| d.join(name)).find(|p| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    })
}

fn status_pipe() -> Result<(File, File), Error> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 into a valid array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::io("creating the status pipe", std::io::Error::last_os_error()));
    }
    // SAFETY: fresh descriptors we own.
    Ok(unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) })
}

/// Makes the status pipe's write end the child's fd 3.
fn pass_status_fd(cmd: &mut Command, w: &File) {
    let wfd = w.as_raw_fd();
    // SAFETY: dup2/fcntl are async-signal-safe; no allocation in the hook.
    unsafe {
        cmd.pre_exec(move || {
            if wfd == STATUS_FD {
                libc::fcntl(wfd, libc::F_SETFD, 0);
            } else if libc::dup2(wfd, STATUS_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn probe_helper(helper: &Path) -> Result<HostCaps, Error> {
    let (r, w) = status_pipe()?;
    let mut cmd = Command::new(helper);
    cmd.args([HELPER_ARG, "probe"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    pass_status_fd(&mut cmd, &w);
    let mut child =
        cmd.spawn().map_err(|e| Error::io(format!("starting {}", helper.display()), e))?;
    drop(w);
    let mut out = String::new();
    let _ = BufReader::new(r).read_to_string(&mut out);
    let _ = child.wait();
    for line in out.lines() {
        if let Ok(Event::Probe {
            user_namespaces,
            mount_api,
            overlay,
            landlock_abi,
            seccomp,
            notes,
        }) = serde_json::from_str(line)
        {
            return Ok(HostCaps {
                user_namespaces,
                mount_api,
                overlay,
                landlock_abi,
                seccomp,
                notes,
                ..HostCaps::default()
            });
        }
    }
    Err(Error::Setup {
        stage: "probe".into(),
        message: format!("the helper {} did not answer the probe", helper.display()),
    })
}

/// What identifies a probe answer: boot, kernel, helper binary.
fn probe_key(helper: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let m = std::fs::metadata(helper).ok()?;
    Some(format!(
        "{}|{}|{}|{}|{}",
        boot.trim(),
        kernel.trim(),
        helper.display(),
        m.len(),
        m.mtime_nsec() + m.mtime() * 1_000_000_000
    ))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ProbeCache {
    key: String,
    caps: HostCaps,
}

fn cached_probe(cfg: &SandboxConfig) -> Result<HostCaps, Error> {
    use std::os::unix::fs::MetadataExt;
    let key = probe_key(&cfg.helper);
    if let (Some(path), Some(key)) = (&cfg.probe_cache, &key) {
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        let trusted = std::fs::symlink_metadata(path)
            .is_ok_and(|m| m.is_file() && m.uid() == uid && m.mode() & 0o022 == 0);
        if trusted
            && let Ok(text) = std::fs::read_to_string(path)
            && let Ok(c) = serde_json::from_str::<ProbeCache>(&text)
            && &c.key == key
        {
            return Ok(c.caps);
        }
    }
    let caps = probe_helper(&cfg.helper)?;
    if let (Some(path), Some(key)) = (&cfg.probe_cache, key) {
        let text =
            serde_json::to_string(&ProbeCache { key, caps: caps.clone() }).unwrap_or_default();
        // Best effort: a cache that cannot be written only costs the next probe.
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
            if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) {
                use std::io::Write;
                if tmp.write_all(text.as_bytes()).is_ok() {
                    let _ = tmp.persist(path);
                }
            }
        }
    }
    Ok(caps)
}

fn probe_bwrap(bwrap: &Path, helper: &Path) -> Result<(), String> {
    let out = Command::new(bwrap)
        .args(["--unshare-user", "--unshare-pid", "--unshare-net", "--die-with-parent"])
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--"])
        .arg(helper)
        .args([HELPER_ARG, "noop"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// Finds a container engine that answers (`docker info` / `podman info` within 5s).
fn probe_container(path: Option<&std::ffi::OsStr>) -> Result<PathBuf, String> {
    let mut tried = Vec::new();
    for name in ["docker", "podman"] {
        let Some(engine) = find_in_path(path, name) else { continue };
        let mut child = match Command::new(&engine)
            .args(["info", "--format", "{{.ServerVersion}}"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                tried.push(format!("{name}: {e}"));
                continue;
            }
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match child.try_wait() {
                Ok(Some(st)) if st.success() => return Ok(engine),
                Ok(Some(_)) => {
                    tried.push(format!("{name}: the client found no running engine"));
                    break;
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    tried.push(format!("{name}: no answer from the engine within 5s"));
                    break;
                }
            }
        }
    }
    if tried.is_empty() {
        Err("no docker or podman client in PATH".into())
    } else {
        Err(format!("container engine unreachable ({})", tried.join("; ")))
    }
}

/// What the parent observed.
struct Outcome {
    helper_code: Option<i32>,
    helper_signal: Option<i32>,
    events: Vec<Event>,
    stdout: protocol::CapturedOutput,
    stderr: protocol::CapturedOutput,
    duration: Duration,
    /// Set when the parent killed the helper (output limit, backstop timeout).
    killed: Option<(LimitKind, String)>,
    /// A process outside the sandbox's reach kept the output pipes open.
    abandoned_output: bool,
}

/// `kill_rest` kills whatever the helper leaves behind that its own death does not
/// take down (the run's cgroup), for a process that holds the output open.
fn spawn_and_wait(
    mut cmd: Command,
    stdin: StdinMode,
    policy: &Policy,
    hooks: &Hooks<'_>,
    kill_rest: &dyn Fn(),
) -> Result<Outcome, Error> {
    let (status_r, status_w) = status_pipe()?;
    pass_status_fd(&mut cmd, &status_w);
    cmd.stdin(match stdin {
        StdinMode::Null => Stdio::null(),
        StdinMode::Inherit => Stdio::inherit(),
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| Error::io("starting the sandbox", e))?;
    drop(status_w);
    let pid = child.id() as i32;
    let out_r = child.stdout.take().expect("piped");
    let err_r = child.stderr.take().expect("piped");
    // Killing the helper takes the sandbox down: with namespaces through PDEATHSIG
    // and the PID namespace; without, through the helper's process group.
    let kill_helper = || {
        // SAFETY: signalling our own child and the process group it leads.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
            libc::kill(pid, libc::SIGKILL);
        }
    };

    let total_out = std::sync::atomic::AtomicU64::new(0);
    let over_limit = AtomicBool::new(false);
    let stop_pumps = AtomicBool::new(false);
    let pumps_done = std::sync::atomic::AtomicUsize::new(0);
    let mut abandoned_output = false;
    let caps = (
        Mutex::new(Capture::new(policy.capture_bytes)),
        Mutex::new(Capture::new(policy.capture_bytes)),
    );
    let (tx, rx) = mpsc::channel::<std::io::Result<std::process::ExitStatus>>();
    let mut events = Vec::new();
    let mut killed: Option<(LimitKind, String)> = None;
    let mut cancelled = false;

    let result = std::thread::scope(|s| {
        let pump = |r: File, which: Stream| {
            let cap = match which {
                Stream::Stdout => &caps.0,
                Stream::Stderr => &caps.1,
            };
            let (total_out, over_limit, stop, done) =
                (&total_out, &over_limit, &stop_pumps, &pumps_done);
            let on_output = hooks.on_output;
            let kill_helper = &kill_helper;
            move || {
                let mut r = r;
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    // Poll so that a process that keeps the pipe open after the
                    // sandbox is gone cannot hold us here forever.
                    let mut pfd =
                        libc::pollfd { fd: r.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                    // SAFETY: one valid pollfd.
                    let ready = unsafe { libc::poll(&mut pfd, 1, 50) };
                    if ready == 0 {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        continue;
                    }
                    let n = match r.read(&mut buf) {
                        Ok(0) => break,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => break,
                        Ok(n) => n,
                    };
                    let t = total_out.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
                    if policy.max_output_bytes.is_some_and(|m| t > m) {
                        if !over_limit.swap(true, Ordering::Relaxed) {
                            kill_helper();
                        }
                        continue; // drain without keeping
                    }
                    cap.lock().expect("capture lock").push(&buf[..n]);
                    if let Some(f) = on_output {
                        f(which, &buf[..n]);
                    }
                }
                done.fetch_add(1, Ordering::SeqCst);
            }
        };
        // SAFETY: taking ownership of the pipe descriptors from ChildStdout/ChildStderr.
        let (out_f, err_f) = unsafe {
            use std::os::fd::IntoRawFd;
            (File::from_raw_fd(out_r.into_raw_fd()), File::from_raw_fd(err_r.into_raw_fd()))
        };
        s.spawn(pump(out_f, Stream::Stdout));
        s.spawn(pump(err_f, Stream::Stderr));
        let status_thread = s.spawn(move || {
            let mut evs = Vec::new();
            for line in BufReader::new(status_r).lines() {
                let Ok(line) = line else { break };
                if let Ok(ev) = serde_json::from_str::<Event>(&line) {
                    evs.push(ev);
                }
            }
            evs
        });
        s.spawn(move || {
            let _ = tx.send(child.wait());
        });
        // The helper enforces the timeout; this is the backstop if it cannot.
        let backstop = policy.timeout.map(|t| start + t + Duration::from_secs(5));
        let status = loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(st) => break st.ok(),
                Err(mpsc::RecvTimeoutError::Disconnected) => break None,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if hooks.cancel.is_some_and(|c| c.is_cancelled()) && !cancelled {
                cancelled = true;
                kill_helper();
            }
            if killed.is_none() && backstop.is_some_and(|b| Instant::now() > b) {
                killed = Some((
                    LimitKind::Timeout,
                    format!(
                        "wall-clock timeout of {} (enforced by the parent: the sandbox did not stop in time)",
                        fmt_ms(policy.timeout.unwrap_or_default().as_millis() as u64)
                    ),
                ));
                kill_helper();
            }
        };
        let duration = start.elapsed();
        // The helper is gone. Its output normally ends with it; give stragglers a
        // moment, then kill what is left of its group and stop reading.
        let drain_deadline = Instant::now() + Duration::from_secs(2);
        while pumps_done.load(Ordering::SeqCst) < 2 && Instant::now() < drain_deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if pumps_done.load(Ordering::SeqCst) < 2 {
            kill_helper();
            kill_rest();
            std::thread::sleep(Duration::from_millis(100));
            abandoned_output = pumps_done.load(Ordering::SeqCst) < 2;
            stop_pumps.store(true, Ordering::Relaxed);
        }
        events = status_thread.join().unwrap_or_default();
        use std::os::unix::process::ExitStatusExt;
        if over_limit.load(Ordering::Relaxed) && killed.is_none() {
            killed = Some((
                LimitKind::Output,
                format!("output passed {}", fmt_bytes(policy.max_output_bytes.unwrap_or(0))),
            ));
        }
        let (code, sig) = match status {
            Some(st) => (st.code(), st.signal()),
            None => (None, None),
        };
        (code, sig, duration)
    });
    if cancelled {
        return Err(Error::Cancelled);
    }
    let (code, sig, duration) = result;
    let (c0, c1) = caps;
    Ok(Outcome {
        helper_code: code,
        helper_signal: sig,
        events,
        stdout: c0.into_inner().expect("capture lock").finish(),
        stderr: c1.into_inner().expect("capture lock").finish(),
        duration,
        killed,
        abandoned_output,
    })
}

fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("SIG{sig}"),
    };
    name.to_owned()
}

fn assemble(
    req: &RunRequest,
    policy: &Policy,
    plan: &Plan,
    mut iso: Isolation,
    o: Outcome,
    stats: Option<cgroup::CgroupStats>,
    cgroup_version: Option<&'static str>,
) -> Result<ExecResult, Error> {
    let cgroup_on = cgroup_version.is_some();
    iso.user_namespace = plan.namespaces;
    iso.pid_namespace = plan.namespaces;
    iso.mount_namespace = plan.namespaces;
    iso.network_namespace = plan.network_namespace;
    if policy.network == Network::Off {
        if plan.network_namespace {
            iso.network_enforcement.push("namespace".into());
        }
        if plan.seccomp_deny_inet {
            iso.network_enforcement.push("seccomp".into());
        }
    }
    iso.filesystem = if plan.namespaces { "read_only_root".into() } else { "landlock".into() };
    let mut r = ExecResult {
        command: req.argv.clone(),
        duration_ms: o.duration.as_millis() as u64,
        stdout: o.stdout,
        stderr: o.stderr,
        ..ExecResult::default()
    };
    let mut exited = None;
    let mut applied_seen = false;
    for ev in o.events {
        match ev {
            // Only the first report counts: it is written before the command runs.
            Event::Applied { .. } if applied_seen => {}
            Event::Applied {
                landlock_abi,
                landlock_error,
                seccomp,
                seccomp_error,
                rlimits,
                warnings,
            } => {
                iso.landlock = landlock_abi.map(|a| format!("abi{a}"));
                if let Some(e) = landlock_error {
                    iso.warnings.push(format!("Landlock NOT enforced: {e}"));
                    if !plan.namespaces {
                        iso.filesystem = "none".into();
                    }
                }
                if plan.landlock_deny_tcp && landlock_abi.is_some_and(|a| a >= 4) {
                    iso.network_enforcement.push("landlock".into());
                }
                iso.seccomp = seccomp;
                if let Some(e) = seccomp_error {
                    iso.warnings.push(format!("seccomp NOT installed: {e}"));
                }
                iso.rlimits = rlimits;
                iso.warnings.extend(warnings);
                applied_seen = true;
            }
            Event::SetupFailed { stage, message } => {
                return Err(Error::Setup { stage, message });
            }
            Event::ExecFailed { errno, message } => {
                let program = req.argv[0].clone();
                let reason = if errno == libc::ENOENT {
                    "command not found".to_owned()
                } else if errno == libc::EACCES {
                    "permission denied (not executable, or outside what the sandbox lets run)"
                        .to_owned()
                } else {
                    message
                };
                return Err(Error::CommandNotFound { program, reason });
            }
            Event::Exited { .. } => exited = Some(ev),
            Event::Probe { .. } => {}
        }
    }
    if !plan.landlock && !plan.namespaces {
        iso.filesystem = "none".into();
    }
    iso.cgroup = cgroup_version.map(str::to_owned);
    iso.memory_enforcement = policy
        .memory_bytes
        .map(|_| if cgroup_on { "cgroup".into() } else { "rlimit_data+monitor".into() });
    iso.process_enforcement = policy
        .max_processes
        .map(|_| if cgroup_on { "cgroup".into() } else { "rlimit_nproc+monitor".into() });
    if !cgroup_on && policy.max_processes.is_some() && plan.namespaces {
        // Host root is exempt from RLIMIT_NPROC even in a user namespace.
        // SAFETY: getuid has no preconditions.
        if unsafe { libc::getuid() } == 0 {
            iso.warnings.push(
                "no cgroup and running as root: RLIMIT_NPROC does not bind; processes are \
                 limited by the PID namespace's pid_max (Linux 6.14+, at least 300) and the \
                 sandbox's monitor"
                    .into(),
            );
        }
    }

    let mut fired: Vec<(LimitKind, String)> = Vec::new();
    if let Some(k) = o.killed {
        fired.push(k);
        r.signal = Some("SIGKILL".into());
    }
    match exited {
        Some(Event::Exited {
            code,
            signal,
            limit,
            limit_detail,
            cpu_ms,
            max_rss_kb,
            leftovers,
            peak_tree_rss,
            duration_ms,
            pid_max,
            ..
        }) => {
            if let Some(n) = pid_max {
                iso.process_enforcement = Some(format!("pid_max({n})+monitor"));
            }
            r.exit_code = code;
            r.signal = signal.map(signal_name);
            if let Some(l) = limit {
                fired.push((l, limit_detail.unwrap_or_default()));
            }
            r.cpu_time_ms = Some(cpu_ms);
            r.leftover_processes_killed = leftovers;
            // The supervisor's clock starts at the fork of the command: no helper
            // start-up in it.
            r.duration_ms = duration_ms;
            match (&stats, peak_tree_rss) {
                (Some(s), _) if s.peak_memory.is_some() => {
                    r.peak_memory_bytes = s.peak_memory;
                    r.peak_memory_source = Some("cgroup".into());
                }
                (_, Some(t)) if t > max_rss_kb * 1024 => {
                    r.peak_memory_bytes = Some(t);
                    r.peak_memory_source = Some("sampled_tree_rss".into());
                }
                _ => {
                    r.peak_memory_bytes = Some(max_rss_kb * 1024);
                    r.peak_memory_source = Some("max_rss".into());
                }
            }
        }
        _ if fired.is_empty() && o.helper_code == Some(125) => {
            return Err(Error::Setup {
                stage: "helper".into(),
                message: "the sandbox helper failed before reporting (exit 125)".into(),
            });
        }
        _ if fired.is_empty() => {
            // The helper died without a report: the supervisor was killed from
            // outside, or the cgroup's OOM killer chose it.
            r.signal = o.helper_signal.map(signal_name);
            r.exit_code = if o.helper_signal.is_some() { None } else { o.helper_code };
            iso.warnings.push("the sandbox supervisor ended without reporting".into());
        }
        _ => {}
    }
    if let Some(s) = &stats {
        if s.oom_kills > 0 {
            fired.push((
                LimitKind::Memory,
                format!(
                    "memory limit of {} (the cgroup's OOM killer ended {} process(es))",
                    fmt_bytes(policy.memory_bytes.unwrap_or(0)),
                    s.oom_kills
                ),
            ));
        }
        if s.pids_max_hits > 0 {
            fired.push((
                LimitKind::Processes,
                format!(
                    "process limit of {} ({} fork(s) refused)",
                    policy.max_processes.unwrap_or(0),
                    s.pids_max_hits
                ),
            ));
        }
    }
    if o.abandoned_output {
        iso.warnings.push(
            "a process kept the output pipes open after the command ended; it could not be \
             killed and output after that point was not collected"
                .into(),
        );
    }
    let kinds: Vec<LimitKind> = fired.iter().map(|(k, _)| *k).collect();
    if let Some(primary) = policy::primary_limit(&kinds) {
        let mut detail =
            fired.iter().find(|(k, _)| *k == primary).map(|(_, d)| d.clone()).unwrap_or_default();
        for (k, d) in &fired {
            if *k != primary && !detail.contains(d.as_str()) {
                detail.push_str(&format!("; then {k}: {d}"));
            }
        }
        r.limit = Some(primary);
        r.limit_detail = Some(detail);
    }
    r.isolation = iso;
    Ok(r)
}

/// Everything outside the workspace a command may need to find where it is, as
/// candidates for [`policy::keep_through_private_mounts`]: the helper itself (bwrap
/// executes it inside), the program as `PATH` finds it, and every `PATH` entry,
/// each with its installation prefix (`<prefix>/bin` needs `<prefix>/lib`), toolchain homes named by the environment, and where the
/// workspace's top-level symlinks lead (`node_modules` linked to a shared install).
/// Both the path as written and its canonical form count: a symlink's target must
/// be visible for the link to work.
fn needed_paths(
    req: &RunRequest,
    ws: &Path,
    env: &[(String, String)],
    helper: &Path,
    backend: Backend,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut add = |p: PathBuf| {
        if let Ok(c) = std::fs::canonicalize(&p) {
            if c != p {
                out.push(c);
            }
            out.push(p);
        }
    };
    if backend == Backend::Bubblewrap {
        add(helper.to_path_buf());
    }
    let var = |k: &str| env.iter().find(|(kk, _)| kk == k).map(|(_, v)| v.as_str());
    let path_dirs: Vec<PathBuf> =
        var("PATH").map(|p| std::env::split_paths(p).collect()).unwrap_or_default();
    let prog = Path::new(&req.argv[0]);
    let found = if prog.components().count() > 1 {
        let base = req.cwd.as_deref().map_or_else(|| ws.to_path_buf(), |c| ws.join(c));
        Some(base.join(prog))
    } else {
        path_dirs.iter().map(|d| d.join(prog)).find(|p| p.is_file())
    };
    // `<prefix>/bin/tool` needs the rest of its prefix (lib/, share/).
    let prefix = |dir: &Path| -> PathBuf {
        if dir.ends_with("bin") { dir.parent().unwrap_or(dir) } else { dir }.to_path_buf()
    };
    if let Some(p) = found {
        for q in [Some(p.clone()), std::fs::canonicalize(&p).ok()].into_iter().flatten() {
            if let Some(dir) = q.parent() {
                add(prefix(dir));
            }
        }
    }
    for d in path_dirs {
        add(prefix(&d));
    }
    for k in [
        "CARGO_HOME",
        "RUSTUP_HOME",
        "GOROOT",
        "GOPATH",
        "JAVA_HOME",
        "DOTNET_ROOT",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "PYENV_ROOT",
        "NVM_DIR",
        "NODE_PATH",
    ] {
        if let Some(v) = var(k) {
            for p in std::env::split_paths(v) {
                add(p);
            }
        }
    }
    if let Ok(rd) = std::fs::read_dir(ws) {
        for e in rd.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_symlink()) {
                continue;
            }
            if let Ok(target) = std::fs::canonicalize(e.path()) {
                add(target);
            }
            // The link's text is walked as written: `/x/crates/y/../../deps` needs
            // `/x/crates/y` to exist for its `..` to lead anywhere.
            if let Ok(text) = std::fs::read_link(e.path()) {
                let written = ws.join(text);
                let walked: PathBuf = written
                    .components()
                    .take_while(|c| !matches!(c, std::path::Component::ParentDir))
                    .collect();
                if walked != written {
                    add(walked);
                }
            }
        }
    }
    out
}
