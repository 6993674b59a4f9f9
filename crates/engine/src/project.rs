//! `build`, `test`, `exec`: project commands in the sandbox, and how a request's
//! sandbox options combine with the configured policy.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use protocol::{
    BuildRequest, BuildResponse, ExecRequest, ExecResult, ProjectInfo, SandboxOptions, TestRequest,
    TestResponse,
};
use sandbox::{BackendChoice, Hooks, Network, Policy, RunRequest, StdinMode, WorkspaceMode};
use stdx::{Call, OutputStream};

use crate::{
    Session,
    error::{Error, Result},
};

/// Who is asking: the user at a terminal may widen the sandbox (a writable path, the
/// network); a tool call from a model or an MCP client may only narrow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// The person running the command: any option is theirs to choose.
    User,
    /// A model or a client: options that widen the configured policy are refused.
    Tool,
}

/// Parses `90s`, `10m`, `1h`, `500ms` or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let s = s.trim();
    let bad = || Error::InvalidArgument(format!("bad duration {s:?} (try 90s, 10m, 1h)"));
    let (num, mult_ms) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60_000.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3_600_000.0)
    } else {
        (s, 1000.0)
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !(v.is_finite() && v > 0.0) {
        return Err(bad());
    }
    Ok(Duration::from_millis((v * mult_ms).round() as u64))
}

/// Parses `512M`, `2G`, `1GiB`, `100k` (binary multiples). A unit is required: a
/// bare `2048` is too easy to mean megabytes and get bytes.
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let bad = || Error::InvalidArgument(format!("bad size {s:?} (give a unit: 512M, 2G, 100k)"));
    let lower = t.to_ascii_lowercase();
    let stripped = lower.trim_end_matches("ib").trim_end_matches('b');
    let (num, mult) = match stripped.chars().last() {
        Some('k') => (&stripped[..stripped.len() - 1], 1u64 << 10),
        Some('m') => (&stripped[..stripped.len() - 1], 1 << 20),
        Some('g') => (&stripped[..stripped.len() - 1], 1 << 30),
        Some('t') => (&stripped[..stripped.len() - 1], 1 << 40),
        _ => return Err(bad()),
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !(v.is_finite() && v > 0.0) {
        return Err(bad());
    }
    Ok((v * mult as f64) as u64)
}

/// `base` with `opts` applied on top; relative paths are taken from `dir`. A pure
/// function of its inputs (the `sandbox:` section and a request's options both
/// go through it). Under [`Trust::Tool`], options that widen what `base` allows
/// (another writable path, the network on, another backend, no strictness, a
/// workspace elsewhere) are `INVALID_ARGUMENT`.
pub fn apply_sandbox_options(
    base: &Policy,
    opts: &SandboxOptions,
    dir: &Path,
    trust: Trust,
) -> Result<Policy> {
    let mut p = base.clone();
    let widen = |what: &str| -> Result<()> {
        match trust {
            Trust::User => Ok(()),
            Trust::Tool => Err(Error::InvalidArgument(format!(
                "a tool call may not widen the sandbox ({what}); the configuration decides that"
            ))),
        }
    };
    if let Some(t) = &opts.timeout {
        p.timeout = Some(parse_duration(t)?);
    }
    if let Some(m) = &opts.memory {
        p.memory_bytes = Some(parse_size(m)?);
    }
    if let Some(c) = &opts.cpu {
        p.cpu_time = Some(parse_duration(c)?);
    }
    if let Some(n) = opts.processes {
        if n == 0 {
            return Err(Error::InvalidArgument("processes must be at least 1".into()));
        }
        p.max_processes = Some(n);
    }
    if let Some(n) = &opts.network {
        p.network = match n.as_str() {
            "on" => Network::On,
            "off" => Network::Off,
            other => {
                return Err(Error::InvalidArgument(format!(
                    "network takes on or off, not {other:?}"
                )));
            }
        };
        if p.network == Network::On && base.network == Network::Off {
            widen("network on")?;
        }
    }
    if let Some(o) = &opts.max_output {
        p.max_output_bytes = Some(parse_size(o)?);
    }
    let abs = |v: &String| {
        let v = PathBuf::from(v);
        if v.is_absolute() { v } else { dir.join(v) }
    };
    if !opts.writable.is_empty() {
        widen("writable paths")?;
        p.writable.extend(opts.writable.iter().map(abs));
    }
    p.hidden.extend(opts.hide.iter().map(abs));
    if opts.throwaway {
        p.workspace = WorkspaceMode::Throwaway;
    }
    if let Some(b) = &opts.backend {
        let choice = BackendChoice::parse(b).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "unknown backend {b:?} (auto, namespaces, bubblewrap, container, none)"
            ))
        })?;
        if choice != base.backend {
            widen("another backend")?;
        }
        p.backend = choice;
    }
    if let Some(i) = &opts.image {
        p.container_image = Some(i.clone());
    }
    p.strict = base.strict || opts.strict;
    if opts.workspace.is_some() {
        widen("another workspace")?;
    }
    Ok(p)
}

fn project_info(p: &sandbox::Project) -> ProjectInfo {
    let name = |v: serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    ProjectInfo {
        root: p.root.display().to_string(),
        kind: name(serde_json::to_value(p.kind).unwrap_or_default()),
        test_tool: name(serde_json::to_value(p.test_tool).unwrap_or_default()),
        target: p.target.as_ref().map(|t| t.display().to_string()),
        typescript: p.typescript,
    }
}

impl Session {
    /// The policy and workspace of a project command: the configured policy with
    /// the request's options on top.
    fn command_policy(&self, opts: &SandboxOptions, trust: Trust) -> Result<(Policy, PathBuf)> {
        let (_, setup) = self.sandbox()?;
        let policy = apply_sandbox_options(&setup.policy, opts, &self.root, trust)?;
        let ws = match &opts.workspace {
            Some(w) if Path::new(w).is_absolute() => PathBuf::from(w),
            Some(w) => self.root.join(w),
            None => self.root.clone(),
        };
        Ok((policy, ws))
    }

    /// A tool call's request for a command in a run's shadow: the configured
    /// policy narrowed by the call's own options (a tool call never widens it),
    /// run in the run's workspace copy `at`.
    fn shadowed(opts: &SandboxOptions, at: &Path) -> SandboxOptions {
        SandboxOptions { workspace: Some(at.display().to_string()), ..opts.clone() }
    }

    /// `build` in a run's workspace copy (a tool call inside a run).
    pub(crate) fn build_at(
        &self,
        req: &BuildRequest,
        at: &Path,
        call: &Call<'_>,
    ) -> Result<BuildResponse> {
        apply_sandbox_options(&self.sandbox()?.1.policy, &req.sandbox, &self.root, Trust::Tool)?;
        let req = BuildRequest { sandbox: Session::shadowed(&req.sandbox, at) };
        self.build_as(&req, Trust::User, call)
    }

    /// `test` in a run's workspace copy (a tool call inside a run).
    pub(crate) fn test_at(
        &self,
        req: &TestRequest,
        at: &Path,
        call: &Call<'_>,
    ) -> Result<TestResponse> {
        apply_sandbox_options(&self.sandbox()?.1.policy, &req.sandbox, &self.root, Trust::Tool)?;
        let req = TestRequest { sandbox: Session::shadowed(&req.sandbox, at), ..req.clone() };
        self.test_as(&req, Trust::User, call)
    }

    /// `exec` in a run's workspace copy (a tool call inside a run): what the
    /// command writes lands in the copy, which the next sync restores.
    pub(crate) fn exec_at(
        &self,
        req: &ExecRequest,
        at: &Path,
        call: &Call<'_>,
    ) -> Result<ExecResult> {
        apply_sandbox_options(&self.sandbox()?.1.policy, &req.sandbox, &self.root, Trust::Tool)?;
        let req = ExecRequest { sandbox: Session::shadowed(&req.sandbox, at), ..req.clone() };
        self.exec_as(&req, Trust::User, StdinMode::Null, call)
    }

    pub fn build(&self, req: &BuildRequest, call: &Call<'_>) -> Result<BuildResponse> {
        self.build_as(req, Trust::Tool, call)
    }

    /// `build` with the caller's trust (the CLI passes [`Trust::User`]).
    pub fn build_as(
        &self,
        req: &BuildRequest,
        trust: Trust,
        call: &Call<'_>,
    ) -> Result<BuildResponse> {
        let (policy, ws) = self.command_policy(&req.sandbox, trust)?;
        let project = self.detect_at(&ws, false)?;
        let (sb, setup) = self.sandbox()?;
        let out = |s: sandbox::Stream, b: &[u8]| call.progress.output(stream(s), b);
        let hooks = Hooks { on_output: Some(&out), cancel: Some(call.cancel) };
        call.progress.phase("building", None);
        let configured = self.commands().build.as_deref();
        let (build, exec) = match configured {
            // Configured as having no build step.
            Some([]) => (
                protocol::BuildResult { success: true, tool: "none".into(), ..Default::default() },
                None,
            ),
            command => sandbox::build(
                sb,
                &project,
                command,
                &policy,
                &setup.env,
                &setup.env_removed,
                &hooks,
            )
            .map_err(cancelled)?,
        };
        Ok(BuildResponse { project: project_info(&project), build, exec })
    }

    pub fn test(&self, req: &TestRequest, call: &Call<'_>) -> Result<TestResponse> {
        self.test_as(req, Trust::Tool, call)
    }

    /// `test` with the caller's trust (the CLI passes [`Trust::User`]).
    pub fn test_as(
        &self,
        req: &TestRequest,
        trust: Trust,
        call: &Call<'_>,
    ) -> Result<TestResponse> {
        let (policy, ws) = self.command_policy(&req.sandbox, trust)?;
        // A command in the request runs as given; else the project's configured
        // test command (which selects its own tests: targets cannot narrow it);
        // else the detected tool, narrowed to the targets.
        let configured = self.commands().test.clone().filter(|c| !c.is_empty());
        let command = match (req.command.is_empty(), configured) {
            (false, _) => Some(req.command.clone()),
            (true, Some(c)) => Some(c),
            (true, None) => None,
        };
        let project = match &command {
            None => Some(self.detect_at(&ws, req.nextest)?),
            Some(_) if req.command.is_empty() => self.detect_at(&ws, req.nextest).ok(),
            Some(_) => None,
        };
        let targets = if command.is_some() { &[][..] } else { &req.targets[..] };
        let (sb, setup) = self.sandbox()?;
        let out = |s: sandbox::Stream, b: &[u8]| call.progress.output(stream(s), b);
        let hooks = Hooks { on_output: Some(&out), cancel: Some(call.cancel) };
        call.progress.phase("running the tests", None);
        let (test, exec) = sandbox::test(
            sb,
            project.as_ref(),
            command.as_deref(),
            targets,
            &ws,
            &policy,
            &setup.env,
            &setup.env_removed,
            &hooks,
        )
        .map_err(cancelled)?;
        Ok(TestResponse { project: project.as_ref().map(project_info), test, exec })
    }

    pub fn exec(&self, req: &ExecRequest, call: &Call<'_>) -> Result<ExecResult> {
        self.exec_as(req, Trust::Tool, StdinMode::Null, call)
    }

    /// `exec` with the caller's trust and stdin (the CLI passes its own terminal).
    pub fn exec_as(
        &self,
        req: &ExecRequest,
        trust: Trust,
        stdin: StdinMode,
        call: &Call<'_>,
    ) -> Result<ExecResult> {
        if req.command.is_empty() || req.command[0].is_empty() {
            return Err(Error::InvalidArgument("`command` is empty: give a program".into()));
        }
        let (policy, ws) = self.command_policy(&req.sandbox, trust)?;
        let (sb, setup) = self.sandbox()?;
        let run = RunRequest {
            argv: req.command.clone(),
            cwd: req.cwd.as_ref().map(|c| ws.join(c)),
            workspace: ws,
            env: setup.env.clone(),
            env_removed: setup.env_removed.clone(),
            stdin,
        };
        let out = |s: sandbox::Stream, b: &[u8]| call.progress.output(stream(s), b);
        let hooks = Hooks { on_output: Some(&out), cancel: Some(call.cancel) };
        sb.run(&run, &policy, &hooks).map_err(cancelled)
    }

    /// The isolation warnings a policy would get here, before anything runs.
    pub fn sandbox_warnings(&self, opts: &SandboxOptions, trust: Trust) -> Result<Vec<String>> {
        let (policy, _) = self.command_policy(opts, trust)?;
        let (sb, _) = self.sandbox()?;
        Ok(sb.plan(&policy)?.warnings)
    }
}

fn stream(s: sandbox::Stream) -> OutputStream {
    match s {
        sandbox::Stream::Stdout => OutputStream::Stdout,
        sandbox::Stream::Stderr => OutputStream::Stderr,
    }
}

fn cancelled(e: sandbox::Error) -> Error {
    match e {
        sandbox::Error::Cancelled => Error::Cancelled,
        other => Error::Sandbox(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_sizes() {
        for (s, ms) in [
            ("90s", 90_000),
            ("10m", 600_000),
            ("1h", 3_600_000),
            ("500ms", 500),
            ("2", 2000),
            ("1.5s", 1500),
        ] {
            assert_eq!(parse_duration(s).unwrap(), Duration::from_millis(ms), "{s}");
        }
        for bad in ["", "x", "-1s", "0", "10parsecs"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        for (s, b) in [
            ("512M", 512u64 << 20),
            ("2G", 2 << 30),
            ("1GiB", 1 << 30),
            ("100k", 100 << 10),
            ("1.5g", 3 << 29),
        ] {
            assert_eq!(parse_size(s).unwrap(), b, "{s}");
        }
        for bad in ["", "lots", "-5M", "0", "2048"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    /// A tool call may narrow the configured sandbox, never widen it; the user may.
    #[test]
    fn tool_calls_cannot_widen_the_sandbox() {
        let base = Policy::default();
        let dir = Path::new("/w");
        let o = |f: &dyn Fn(&mut SandboxOptions)| {
            let mut o = SandboxOptions::default();
            f(&mut o);
            o
        };
        // (options, allowed for a tool call)
        let table: Vec<(SandboxOptions, bool)> = vec![
            (o(&|o| o.timeout = Some("30s".into())), true),
            (o(&|o| o.memory = Some("1G".into())), true),
            (o(&|o| o.hide = vec!["/opt/keys".into()]), true),
            (o(&|o| o.throwaway = true), true),
            (o(&|o| o.network = Some("off".into())), true),
            (o(&|o| o.strict = true), true),
            (o(&|o| o.network = Some("on".into())), false),
            (o(&|o| o.writable = vec!["/etc".into()]), false),
            (o(&|o| o.backend = Some("none".into())), false),
            (o(&|o| o.workspace = Some("/".into())), false),
        ];
        for (opts, allowed) in table {
            let tool = apply_sandbox_options(&base, &opts, dir, Trust::Tool);
            assert_eq!(tool.is_ok(), allowed, "{opts:?}");
            assert!(apply_sandbox_options(&base, &opts, dir, Trust::User).is_ok(), "{opts:?}");
        }
        let p = apply_sandbox_options(
            &base,
            &o(&|o| o.hide = vec!["secrets".into()]),
            dir,
            Trust::Tool,
        )
        .unwrap();
        assert!(p.hidden.contains(&PathBuf::from("/w/secrets")));
        let err = apply_sandbox_options(&base, &o(&|o| o.processes = Some(0)), dir, Trust::User);
        assert!(err.is_err());
    }
}
