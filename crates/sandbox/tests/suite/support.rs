//! Shared helpers: a sandbox built on this crate's helper executable.
#![allow(dead_code)]

use std::{path::Path, sync::OnceLock, time::Duration};

use protocol::ExecResult;
use sandbox::{Hooks, Policy, RunRequest, Sandbox, SandboxConfig, StdinMode};

pub fn config() -> SandboxConfig {
    SandboxConfig {
        helper: env!("CARGO_BIN_EXE_ironbees-sandbox-helper").into(),
        home: std::env::var_os("HOME").map(Into::into),
        temp_dir: std::env::temp_dir(),
        search_path: std::env::var_os("PATH"),
        probe_container: false,
        probe_bubblewrap: true,
        probe_cache: None,
    }
}

pub fn sandbox() -> &'static Sandbox {
    static SB: OnceLock<Sandbox> = OnceLock::new();
    SB.get_or_init(|| Sandbox::new(config()).expect("sandbox probe"))
}

pub fn env() -> Vec<(String, String)> {
    let (kept, _) = sandbox::filter_env(std::env::vars());
    kept
}

pub fn request(ws: &Path, argv: &[&str]) -> RunRequest {
    RunRequest {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        workspace: ws.to_path_buf(),
        cwd: None,
        env: env(),
        env_removed: vec![],
        stdin: StdinMode::Null,
    }
}

pub fn quick_policy() -> Policy {
    Policy { timeout: Some(Duration::from_secs(30)), ..Policy::default() }
}

pub fn run_with(sb: &Sandbox, ws: &Path, policy: &Policy, script: &str) -> ExecResult {
    sb.run(&request(ws, &["sh", "-c", script]), policy, &Hooks::default()).expect("run")
}

pub fn sh(ws: &Path, policy: &Policy, script: &str) -> ExecResult {
    run_with(sandbox(), ws, policy, script)
}
