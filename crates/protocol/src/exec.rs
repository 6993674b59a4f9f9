//! Results of running project commands: the sandbox's `ExecResult` with its
//! `Isolation` report, and the parsed `BuildResult` / `TestResult` the runners produce.
//!
//! These cross the wire (CLI `--json`, MCP, the agent's VALIDATE step, the pipeline), so
//! they are plain data: durations in milliseconds, sizes in bytes, paths as written by
//! the tool (relative to the project root when the tool said so).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which limit stopped a command. The text form is what `--json` shows under `limit`
/// (and what clients match on together with the `SANDBOX_LIMIT` error code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LimitKind {
    /// Wall-clock time ran out; the whole process tree was killed.
    Timeout,
    /// The memory limit was reached (an out-of-memory kill in the sandbox's cgroup, or
    /// the sandbox's own monitor saw the tree's resident memory pass the limit).
    Memory,
    /// A process used up its CPU-time allowance (`RLIMIT_CPU`).
    CpuTime,
    /// The process-count limit was reached (forks failed).
    Processes,
    /// The command wrote more output than allowed and was killed.
    Output,
    /// A process tried to write a file larger than allowed (`RLIMIT_FSIZE`).
    FileSize,
}

impl LimitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::Timeout => "timeout",
            LimitKind::Memory => "memory",
            LimitKind::CpuTime => "cpu_time",
            LimitKind::Processes => "processes",
            LimitKind::Output => "output",
            LimitKind::FileSize => "file_size",
        }
    }
}

impl std::fmt::Display for LimitKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a command was isolated. Every protection says whether it is active; nothing
/// here is a wish. `warnings` lists what was requested (or is normally on) but could
/// not be provided on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Isolation {
    /// `namespaces` (ironbees' own helper), `bubblewrap`, `container` or `none`.
    pub backend: String,
    pub user_namespace: bool,
    pub pid_namespace: bool,
    pub mount_namespace: bool,
    /// A private network namespace (only a loopback interface inside).
    pub network_namespace: bool,
    /// `off` (no route out), `on` (host network) — and how `off` is enforced in
    /// `network_enforcement` (`namespace`, `seccomp`, `landlock`, `container`).
    pub network: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_enforcement: Vec<String>,
    /// Filesystem view: `read_only_root` when everything but the writable paths is
    /// mounted read-only; `landlock` when only Landlock enforces it; `none`.
    pub filesystem: String,
    /// `writable` (the workspace itself) or `throwaway` (an overlay or copy whose
    /// changes are discarded).
    pub workspace: String,
    /// `abi<N>` when a Landlock ruleset is enforced; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock: Option<String>,
    pub seccomp: bool,
    /// Resource limits set with `setrlimit` (`cpu`, `data`, `nproc`, `fsize`, `core`).
    pub rlimits: Vec<String>,
    /// `v1` or `v2` when a cgroup enforces memory and process limits for the whole
    /// tree; absent when not available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// How the memory limit is enforced: `cgroup` (whole tree), `rlimit_data+monitor`
    /// (per process, plus a sampling monitor over the tree), `container`, or absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_enforcement: Option<String>,
    /// How the process-count limit is enforced: `cgroup`, `rlimit_nproc`, `container`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_enforcement: Option<String>,
    /// Secret locations made unreadable (mounted over, or excluded by Landlock).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden_paths: Vec<String>,
    /// Environment variable names removed because they look like credentials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_removed: Vec<String>,
    /// Every requested or default protection that is not active, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One captured output stream, bounded: when the command wrote more than the capture
/// limit, `text` keeps the head and the tail with a marker line between them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapturedOutput {
    /// The retained bytes as UTF-8 (invalid sequences replaced).
    pub text: String,
    pub truncated: bool,
    /// Everything the command wrote to this stream, retained or not.
    pub total_bytes: u64,
}

/// What happened when a command ran in the sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecResult {
    pub command: Vec<String>,
    /// The exit status when the command exited normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended the command (`SIGKILL`, `SIGSEGV`, ...), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The limit that stopped the command, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitKind>,
    /// A sentence about the limit (`"wall-clock timeout of 2s"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_detail: Option<String>,
    pub duration_ms: u64,
    /// CPU time (user + system) of the command and every process it waited for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_time_ms: Option<u64>,
    /// Peak memory, with its source in `peak_memory_source`: `cgroup` (the whole tree)
    /// or `max_rss` (the largest single process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_source: Option<String>,
    /// Processes still running when the command exited, killed by the sandbox.
    #[serde(default)]
    pub leftover_processes_killed: u32,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub isolation: Isolation,
}

impl ExecResult {
    /// Exited with status 0 and no limit fired.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && self.limit.is_none()
    }

    /// `SANDBOX_LIMIT` with the limit's name in `details.limit`, when one fired.
    pub fn limit_error(&self) -> Option<crate::ErrorInfo> {
        let limit = self.limit?;
        let mut info = crate::ErrorInfo::new(
            crate::ErrorCode::SandboxLimit,
            format!("{limit} limit: {}", self.limit_detail.as_deref().unwrap_or("fired")),
        );
        info.details.limit = Some(limit);
        Some(info)
    }
}

/// How severe a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// A compiler or build-tool message with its location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    pub severity: Severity,
    /// The tool's code (`E0308`, `CS0103`, `unused_variables`), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

/// The outcome of a build.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuildResult {
    pub success: bool,
    /// The build tool (`cargo`, `dotnet`, `go`, `tsc`, `command`).
    pub tool: String,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    pub duration_ms: u64,
}

/// One failed test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestFailure {
    /// The fully qualified test name as the tool prints it.
    pub name: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_trace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// The outcome of a test run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestResult {
    /// Every test passed, at least one test ran, and the run was not cut short.
    pub success: bool,
    /// The test tool (`cargo`, `nextest`, `pytest`, `dotnet`, `go`, `jest`, `vitest`,
    /// `command`).
    pub tool: String,
    pub total: u32,
    pub passed: u32,
    pub failed: u32,
    pub skipped: u32,
    pub failures: Vec<TestFailure>,
    pub duration_ms: u64,
    /// Set when the results could not be complete: the tool crashed or was stopped by
    /// a limit before reporting, or the test code did not compile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// Compile errors that kept tests from running (cargo, go, dotnet).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build_errors: Vec<Diagnostic>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_text_matches_serde_form() {
        for l in [
            LimitKind::Timeout,
            LimitKind::Memory,
            LimitKind::CpuTime,
            LimitKind::Processes,
            LimitKind::Output,
            LimitKind::FileSize,
        ] {
            assert_eq!(serde_json::to_string(&l).unwrap(), format!("\"{}\"", l.as_str()));
        }
    }

    #[test]
    fn a_fired_limit_is_a_sandbox_limit_error_naming_it() {
        let r = ExecResult {
            limit: Some(LimitKind::Memory),
            limit_detail: Some("memory limit of 1 GiB".into()),
            ..Default::default()
        };
        let e = r.limit_error().unwrap();
        assert_eq!(e.code, crate::ErrorCode::SandboxLimit);
        assert_eq!(e.details.limit, Some(LimitKind::Memory));
        assert_eq!(
            serde_json::to_value(&e).unwrap()["details"],
            serde_json::json!({"limit": "memory"})
        );
        assert_eq!(e.message, "memory limit: memory limit of 1 GiB");
        assert!(ExecResult::default().limit_error().is_none());
    }

    #[test]
    fn success_needs_zero_exit_and_no_limit() {
        let mut r = ExecResult { exit_code: Some(0), ..Default::default() };
        assert!(r.success());
        r.limit = Some(LimitKind::Output);
        assert!(!r.success());
        r.limit = None;
        r.exit_code = None;
        r.signal = Some("SIGKILL".into());
        assert!(!r.success());
    }
}
