//! Running project commands under limits and isolation, and turning build and test
//! output into data.
//!
//! The key design decision: isolation is done by a *helper process*, the ironbees
//! binary re-executed with [`HELPER_ARG`] (the caller's `main` hands those arguments
//! to [`helper_main`] before doing anything else). A fresh single-threaded process can
//! create user, PID, mount, IPC, UTS and network namespaces, remount the world
//! read-only, and apply Landlock, seccomp and rlimits in plain Rust, then supervise
//! the command as PID 1 of its namespace, so that a timeout, a memory monitor or the
//! end of the command kills *every* process it started, daemons included.
//!
//! Nothing is pretended: [`Sandbox::new`] probes what the kernel allows, [`plan`]
//! decides the backend and lists every missing protection as a warning (or refuses
//! with `strict`), and each [`protocol::ExecResult`] carries an `isolation` report of
//! what was actually enforced, as the helper saw it just before `exec`.
//!
//! ```no_run
//! use sandbox::{Policy, RunRequest, Sandbox, SandboxConfig, StdinMode, Hooks};
//! let sb = Sandbox::new(SandboxConfig {
//!     helper: std::env::current_exe()?,
//!     home: Some("/home/me".into()),
//!     temp_dir: std::env::temp_dir(),
//!     search_path: std::env::var_os("PATH"),
//!     probe_container: false,
//!     probe_bubblewrap: false,
//!     probe_cache: None,
//! })?;
//! let req = RunRequest {
//!     argv: vec!["cargo".into(), "test".into()],
//!     workspace: "/home/me/project".into(),
//!     cwd: None,
//!     env: vec![],
//!     env_removed: vec![],
//!     stdin: StdinMode::Null,
//! };
//! let result = sb.run(&req, &Policy::default(), &Hooks::default())?;
//! println!("{:?} {:?}", result.exit_code, result.limit);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The runners ([`detect_project`], [`build`], [`test`]) pick a project's build and
//! test commands and parse their output (cargo JSON, libtest, nextest, JUnit XML,
//! TRX, `go test -json`, jest/vitest JSON, compiler diagnostics) into
//! [`protocol::BuildResult`] and [`protocol::TestResult`].
#![deny(clippy::print_stdout, clippy::print_stderr)]
// Namespaces, mounts, Landlock, seccomp and rlimits are system calls without safe
// wrappers (or with wrappers that would hide the details we must control); every
// unsafe block says why it is sound.
#![allow(unsafe_code)]

pub use crate::{
    error::Error,
    helper::helper_main,
    policy::{
        Backend, BackendChoice, HostCaps, Network, Plan, PlanRefusal, Policy, WorkspaceMode,
        filter_env, is_secret_env, plan,
    },
    run::{Hooks, OutputFn, RunRequest, Sandbox, SandboxConfig, StdinMode, Stream},
    runners::{
        DetectOptions, Invocation, Project, ProjectKind, TestTool, build, build_invocation,
        detect_project, test, test_invocation,
    },
    spec::HELPER_ARG,
};

mod backend;
mod capture;
mod cgroup;
mod error;
mod helper;
mod landlock;
mod policy;
mod run;
pub mod runners;
mod seccomp;
mod spec;
