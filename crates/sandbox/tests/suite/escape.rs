//! The escape suite. Each attempt runs under every backend this machine offers
//! (`namespaces`, `bubblewrap`, `none`); each must be blocked or killed, and when a
//! limit ends it, the result must name that limit. Where a backend cannot block an
//! attempt (no network namespace in `none`), the test asserts that the `isolation`
//! report says which weaker protection is in force instead.
//!
//! Positive controls sit beside the attacks: the workspace is writable, loopback
//! inside the sandbox works, so a sandbox that denies everything fails here too.

use std::{
    net::{TcpListener, UdpSocket},
    path::Path,
    time::{Duration, Instant},
};

use protocol::LimitKind;
use sandbox::{BackendChoice, Policy, WorkspaceMode};
use test_support::TempProject;

use super::support::*;

fn policy(setup: Setup) -> Policy {
    Policy {
        backend: setup.backend(),
        timeout: Some(Duration::from_secs(30)),
        cgroups: matches!(setup, Setup::Backend(_)),
        ..Policy::default()
    }
}

/// Bubblewrap must be installed where this suite runs (CI installs it): a missing
/// backend fails here rather than passing silently.
fn require(setup: Setup) {
    let backend = setup.backend();
    if backend == BackendChoice::Bubblewrap {
        assert!(
            sandbox().caps().bubblewrap.is_some(),
            "bubblewrap is not usable here ({:?}); install it (apt-get install bubblewrap)",
            sandbox().caps().notes
        );
    }
    if backend == BackendChoice::Namespaces {
        assert!(
            sandbox().caps().user_namespaces,
            "user namespaces do not work here: {:?}",
            sandbox().caps().notes
        );
    }
}

fn marker() -> String {
    format!("ironbees-escape-{}-{}", std::process::id(), rand_u64())
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    h.finish()
}

/// Host processes whose command line contains `needle`.
fn host_processes_with(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline"))
            && String::from_utf8_lossy(&cmd).contains(needle)
        {
            out.push(pid);
        }
    }
    out
}

macro_rules! for_each_backend {
    ($($name:ident),* $(,)?) => {
        mod namespaces { $( #[test] fn $name() { super::$name(super::Setup::Backend(sandbox::BackendChoice::Namespaces)) } )* }
        mod bubblewrap { $( #[test] fn $name() { super::$name(super::Setup::Backend(sandbox::BackendChoice::Bubblewrap)) } )* }
        mod no_namespaces { $( #[test] fn $name() { super::$name(super::Setup::Backend(sandbox::BackendChoice::None)) } )* }
        // The fallbacks for hosts without a delegated cgroup: rlimits and monitors.
        mod namespaces_without_cgroup { $( #[test] fn $name() { super::$name(super::Setup::NoCgroup(sandbox::BackendChoice::Namespaces)) } )* }
        mod no_namespaces_without_cgroup { $( #[test] fn $name() { super::$name(super::Setup::NoCgroup(sandbox::BackendChoice::None)) } )* }
    };
}

/// One configuration of the suite.
#[derive(Clone, Copy)]
enum Setup {
    Backend(BackendChoice),
    NoCgroup(BackendChoice),
}

impl Setup {
    fn backend(self) -> BackendChoice {
        match self {
            Setup::Backend(b) | Setup::NoCgroup(b) => b,
        }
    }
}

for_each_backend!(
    tcp_to_host_loopback_is_blocked,
    name_resolution_and_udp_out_are_blocked,
    writes_outside_the_workspace_fail,
    hidden_secrets_cannot_be_read,
    fork_bomb_is_contained_and_named,
    memory_past_the_limit_is_killed_and_named,
    timeout_kills_the_whole_tree,
    daemon_left_behind_is_killed,
    loopback_inside_the_sandbox_works,
    throwaway_workspace_keeps_the_original,
    mount_and_namespace_calls_are_denied,
    a_toolchain_under_tmp_stays_visible_and_tmp_is_private_and_writable,
);

fn tcp_to_host_loopback_is_blocked(setup: Setup) {
    require(setup);
    let b = setup.backend();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let ws = TempProject::new();
    let r = sh(
        ws.root(),
        &policy(setup),
        &format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')\""
        ),
    );
    // Whatever the backend, the listener outside must never see a connection.
    std::thread::sleep(Duration::from_millis(50));
    assert!(listener.accept().is_err(), "the sandboxed command reached a host listener: {r:#?}");
    assert!(!r.stdout.text.contains("CONNECTED"));
    assert_ne!(r.exit_code, Some(0));
    match b {
        BackendChoice::None => {
            assert!(!r.isolation.network_namespace);
            assert!(
                r.isolation.network_enforcement.iter().any(|e| e == "seccomp" || e == "landlock"),
                "{:?}",
                r.isolation
            );
            assert!(r.isolation.warnings.iter().any(|w| w.contains("network off")));
        }
        _ => assert!(r.isolation.network_namespace, "{:?}", r.isolation),
    }
}

fn name_resolution_and_udp_out_are_blocked(setup: Setup) {
    require(setup);
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let port = udp.local_addr().unwrap().port();
    let ws = TempProject::new();
    // A DNS query is a UDP datagram to a resolver: send one to a host socket, then
    // ask the system resolver for a public name.
    let script = [
        "python3 - <<'EOF'",
        "import socket",
        "try:",
        "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
        &format!("    s.sendto(b'query', ('127.0.0.1', {port})); print('SENT')"),
        "except OSError as e:",
        "    print('send failed', e)",
        "try:",
        "    print('RESOLVED', socket.getaddrinfo('crates.io', 443))",
        "except OSError as e:",
        "    print('resolve failed', e)",
        "EOF",
    ]
    .join("\n");
    let r = sh(ws.root(), &policy(setup), &script);
    let mut buf = [0u8; 16];
    assert!(udp.recv(&mut buf).is_err(), "a datagram from the sandbox reached the host: {r:#?}");
    assert!(
        !r.stdout.text.contains("RESOLVED"),
        "name resolved inside the sandbox: {}",
        r.stdout.text
    );
    assert!(r.stdout.text.contains("resolve failed"), "{r:#?}");
}

fn writes_outside_the_workspace_fail(setup: Setup) {
    require(setup);
    let outer = TempProject::new();
    outer.write("ws/keep.txt", "x");
    let ws = outer.path("ws");
    let m = marker();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let targets = [
        outer.path(&format!("{m}-sibling")),
        Path::new(&home).join(format!("{m}-home")),
        Path::new("/etc").join(format!("{m}-etc")),
        Path::new("/var/tmp").join(format!("{m}-vartmp")),
        Path::new("/dev/shm").join(format!("{m}-shm")),
    ];
    // The workspace lives under /tmp here; its sibling path then lands in the
    // sandbox's private /tmp (a throwaway tmpfs), so for it (and /dev/shm, private
    // too with namespaces) only the host side counts.
    let script = targets
        .iter()
        .map(|t| {
            let private = t.starts_with("/tmp") || t.starts_with("/dev/shm");
            let tag = if private { "PRIVATE" } else { "WROTE" };
            format!("echo pwned > '{}' 2>/dev/null && echo {tag} {}", t.display(), t.display())
        })
        .collect::<Vec<_>>()
        .join("; ")
        + "; echo ok > inside.txt && echo INSIDE";
    // An existing file of the host's: modifying it is writing outside too.
    let shm = Path::new("/dev/shm").join(format!("{m}-existing"));
    std::fs::write(&shm, "orig").unwrap();
    let script = format!("{script}; echo changed > '{}' 2>/dev/null", shm.display());
    let r = sh(&ws, &policy(setup), &script);
    let shm_after = std::fs::read_to_string(&shm).unwrap();
    std::fs::remove_file(&shm).unwrap();
    assert_eq!(shm_after, "orig", "a host file in /dev/shm was modified: {r:#?}");
    for t in &targets {
        assert!(!t.exists(), "{} was written from the sandbox: {r:#?}", t.display());
    }
    assert!(!r.stdout.text.contains("WROTE"), "{}", r.stdout.text);
    // Positive control: the workspace itself is writable.
    assert!(r.stdout.text.contains("INSIDE"), "{r:#?}");
    assert_eq!(std::fs::read_to_string(ws.join("inside.txt")).unwrap(), "ok\n");
}

fn hidden_secrets_cannot_be_read(setup: Setup) {
    require(setup);
    // A home of our own with credentials in it, and a `.env` above the workspace.
    let fake_home = TempProject::new();
    fake_home.write(".ssh/id_ed25519", "SECRET-SSH-KEY");
    fake_home.write(".aws/credentials", "SECRET-AWS");
    fake_home.write(".netrc", "SECRET-NETRC");
    let outer = TempProject::new();
    outer.write(".env", "SECRET-DOTENV");
    outer.write("ws/.env", "PROJECT-ENV-IS-FINE");
    let mut cfg = config();
    cfg.home = Some(fake_home.root().to_path_buf());
    let sb = sandbox::Sandbox::new(cfg).unwrap();
    let h = fake_home.root().display();
    let r = run_with(
        &sb,
        &outer.path("ws"),
        &policy(setup),
        &format!(
            "cat {h}/.ssh/id_ed25519 {h}/.aws/credentials {h}/.netrc ../.env 2>&1; ls -a {h}/.ssh 2>&1; cat .env"
        ),
    );
    for secret in ["SECRET-SSH-KEY", "SECRET-AWS", "SECRET-NETRC", "SECRET-DOTENV"] {
        assert!(!r.stdout.text.contains(secret), "{secret} leaked: {}", r.stdout.text);
    }
    assert!(r.stdout.text.contains("PROJECT-ENV-IS-FINE"), "{r:#?}");
    let hidden = &r.isolation.hidden_paths;
    for p in [".ssh", ".aws", ".netrc"] {
        let full = std::fs::canonicalize(fake_home.path(p)).unwrap();
        assert!(
            hidden.contains(&full.display().to_string()),
            "{p} not reported hidden: {hidden:?}"
        );
    }
    // The home directory itself as the workspace: its secrets stay hidden.
    let r = run_with(
        &sb,
        fake_home.root(),
        &policy(setup),
        "cat .ssh/id_ed25519 .aws/credentials .netrc 2>&1; echo done",
    );
    assert!(r.stdout.text.contains("done"), "{r:#?}");
    for secret in ["SECRET-SSH-KEY", "SECRET-AWS", "SECRET-NETRC"] {
        assert!(
            !r.stdout.text.contains(secret),
            "{secret} leaked from a home workspace: {}",
            r.stdout.text
        );
    }
}

fn fork_bomb_is_contained_and_named(setup: Setup) {
    require(setup);
    let ws = TempProject::new();
    let m = marker();
    let p =
        Policy { max_processes: Some(64), timeout: Some(Duration::from_secs(20)), ..policy(setup) };
    // Without a cgroup the limit is a sampling monitor (plus pid_max in a PID
    // namespace, at least 300): a real bomb's processes are too short-lived for a
    // sample to be sure to see them, and without namespaces as root nothing would
    // stop it before the machine runs out of processes. There a steady spawner
    // stands in for it, and the report must say how the limit is enforced.
    let hard_limit = matches!(setup, Setup::Backend(_));
    // Never start a real bomb without the cgroup that stops it.
    assert!(
        !hard_limit || sandbox().caps().cgroup.is_some(),
        "no usable cgroup on this machine ({:?}): the process limit cannot be hard here",
        sandbox().caps().notes
    );
    let script = if hard_limit {
        "b(){ b|b& }; b; sleep 2"
    } else {
        "i=0; while [ $i -lt 400 ]; do sleep 30 & i=$((i+1)); done; wait"
    };
    let start = Instant::now();
    let r = sandbox()
        .run(&request(ws.root(), &["sh", "-c", script, &m]), &p, &sandbox::Hooks::default())
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(15), "the bomb ran {:?}", start.elapsed());
    assert_eq!(r.limit, Some(LimitKind::Processes), "{r:#?}");
    assert!(host_processes_with(&m).is_empty(), "bomb processes survived the sandbox");
    let enforcement = r.isolation.process_enforcement.as_deref().unwrap_or("");
    match setup {
        Setup::Backend(_) => assert_eq!(enforcement, "cgroup", "{:?}", r.isolation),
        Setup::NoCgroup(BackendChoice::Namespaces) => {
            assert!(enforcement.starts_with("pid_max("), "{:?}", r.isolation)
        }
        Setup::NoCgroup(_) => {
            assert_eq!(enforcement, "rlimit_nproc+monitor");
            assert!(
                r.isolation.warnings.iter().any(|w| w.contains("RLIMIT_NPROC")),
                "{:?}",
                r.isolation
            );
        }
    }
}

fn memory_past_the_limit_is_killed_and_named(setup: Setup) {
    require(setup);
    let ws = TempProject::new();
    let p = Policy { memory_bytes: Some(128 << 20), ..policy(setup) };
    // Touch every page (a zero-filled allocation would stay virtual).
    let r = sh(ws.root(), &p, "python3 -c \"a = b'x' * (512 * 1024 * 1024); print('ALLOCATED')\"");
    assert!(!r.stdout.text.contains("ALLOCATED"), "{r:#?}");
    assert_ne!(r.exit_code, Some(0));
    if r.isolation.cgroup.is_some() {
        assert_eq!(r.limit, Some(LimitKind::Memory), "{r:#?}");
        assert!(r.peak_memory_bytes.unwrap() <= (128 << 20) + (8 << 20), "{r:#?}");
    } else {
        // Without a cgroup the allocation fails per process (RLIMIT_DATA): blocked,
        // and the report says how.
        assert_eq!(r.isolation.memory_enforcement.as_deref(), Some("rlimit_data+monitor"));
        assert!(
            r.stderr.text.contains("MemoryError") || r.limit == Some(LimitKind::Memory),
            "{r:#?}"
        );
    }
}

fn timeout_kills_the_whole_tree(setup: Setup) {
    require(setup);
    let ws = TempProject::new();
    let m = marker();
    let p = Policy { timeout: Some(Duration::from_secs(1)), ..policy(setup) };
    let start = Instant::now();
    let r = sandbox()
        .run(
            &request(ws.root(), &["sh", "-c", "sleep 60 & sleep 60; wait", &m]),
            &p,
            &sandbox::Hooks::default(),
        )
        .unwrap();
    let took = start.elapsed();
    assert_eq!(r.limit, Some(LimitKind::Timeout), "{r:#?}");
    assert!(r.limit_detail.as_deref().unwrap().contains("1s"), "{r:#?}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(r.signal.as_deref(), Some("SIGKILL"));
    assert!(host_processes_with(&m).is_empty(), "processes survived the timeout");
}

fn daemon_left_behind_is_killed(setup: Setup) {
    require(setup);
    let ws = TempProject::new();
    let m = marker();
    // Double fork and a new session: out of the command's process group and session.
    let script = format!("(setsid sh -c 'sleep 300; echo {m}' > /dev/null 2>&1 &) ; echo started");
    let r = sh(ws.root(), &policy(setup), &script);
    assert_eq!(r.exit_code, Some(0), "{r:#?}");
    assert!(r.limit.is_none());
    assert!(r.leftover_processes_killed >= 1, "{r:#?}");
    std::thread::sleep(Duration::from_millis(100));
    assert!(host_processes_with(&m).is_empty(), "the daemon survived the sandbox");
}

fn loopback_inside_the_sandbox_works(setup: Setup) {
    require(setup);
    let b = setup.backend();
    let ws = TempProject::new();
    let script = [
        "python3 - <<'EOF'",
        "import socket, threading",
        "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)",
        "port = srv.getsockname()[1]",
        "t = threading.Thread(target=lambda: srv.accept()[0].sendall(b'pong')); t.start()",
        "c = socket.create_connection(('127.0.0.1', port)); print(c.recv(4).decode())",
        "EOF",
    ]
    .join("\n");
    let r = sh(ws.root(), &policy(setup), &script);
    if b == BackendChoice::None {
        // No network namespace: with the network off, IP sockets are denied
        // altogether, loopback included; the report says so.
        assert!(!r.stdout.text.contains("pong"));
        assert!(r.isolation.warnings.iter().any(|w| w.contains("loopback")), "{:?}", r.isolation);
    } else {
        assert!(r.stdout.text.contains("pong"), "{r:#?}");
    }
}

/// Issue 24: the sandbox's private `/tmp` hid whatever the command needed there: a
/// clone under `/tmp` lost its helper binary (bwrap) and its `node_modules` (linked
/// to a shared install), a toolchain on `PATH` under `/tmp` vanished. Needed paths
/// stay visible, read-only; the command still gets a private, writable temp dir.
fn a_toolchain_under_tmp_stays_visible_and_tmp_is_private_and_writable(setup: Setup) {
    require(setup);
    let toolchain = TempProject::new(); // under /tmp
    assert!(toolchain.root().starts_with("/tmp"), "the test needs a toolchain under /tmp");
    toolchain.write(
        "bin/ib-tool",
        "#!/bin/sh\necho \"TOOL OK $(cat \"$(dirname \"$0\")/../share/data.txt\")\"\n",
    );
    toolchain.write("share/data.txt", "with its data");
    std::fs::set_permissions(
        toolchain.path("bin/ib-tool"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let shared = TempProject::new(); // a shared install the workspace links to
    shared.write("lib/mod.js", "linked module");
    shared.write("crates/sandbox/Cargo.toml", "");
    let ws = TempProject::new();
    // Written as a test writes it, through `..` (CARGO_MANIFEST_DIR/../../lib).
    std::os::unix::fs::symlink(shared.path("crates/sandbox/../../lib"), ws.path("node_modules"))
        .unwrap();
    let mut req = request(
        ws.root(),
        &[
            "sh",
            "-c",
            "ib-tool; cat node_modules/mod.js; echo; echo t > \"$TMPDIR/a\" && cat \"$TMPDIR/a\" \
             && echo TMPDIR WRITABLE; echo x > /tmp/ib-private-probe 2>/dev/null && echo TMP WRITABLE; \
             echo y > \"$(dirname \"$(command -v ib-tool)\")/planted\" 2>/dev/null && echo PLANTED",
        ],
    );
    let path = format!("{}:{}", toolchain.path("bin").display(), std::env::var("PATH").unwrap());
    req.env.retain(|(k, _)| k != "PATH");
    req.env.push(("PATH".into(), path));
    let r = sandbox().run(&req, &policy(setup), &sandbox::Hooks::default()).expect("run");
    let out = &r.stdout.text;
    assert!(out.contains("TOOL OK with its data"), "the toolchain under /tmp vanished: {r:#?}");
    assert!(out.contains("linked module"), "the workspace's symlink target vanished: {r:#?}");
    assert!(out.contains("TMPDIR WRITABLE"), "no private writable temp dir: {r:#?}");
    // Kept visible is not made writable.
    assert!(!out.contains("PLANTED"), "{r:#?}");
    assert!(!toolchain.path("bin/planted").exists());
    if setup.backend() != BackendChoice::None {
        // With namespaces /tmp itself is the sandbox's own tmpfs: writable, and
        // nothing reaches the host's.
        assert!(out.contains("TMP WRITABLE"), "{r:#?}");
        assert!(!Path::new("/tmp/ib-private-probe").exists());
    } else {
        // Without namespaces only $TMPDIR is private; the host's /tmp stays closed.
        assert!(!out.contains("TMP WRITABLE"), "{r:#?}");
    }
}

fn throwaway_workspace_keeps_the_original(setup: Setup) {
    require(setup);
    let ws = TempProject::new();
    ws.write("a.txt", "original");
    let p = Policy { workspace: WorkspaceMode::Throwaway, ..policy(setup) };
    let r = sh(ws.root(), &p, "echo changed > a.txt; echo new > b.txt; cat a.txt b.txt");
    assert_eq!(r.stdout.text, "changed\nnew\n", "{r:#?}");
    assert_eq!(ws.read("a.txt"), "original");
    assert!(!ws.path("b.txt").exists());
    assert!(r.isolation.workspace.starts_with("throwaway"), "{:?}", r.isolation);
}

fn mount_and_namespace_calls_are_denied(setup: Setup) {
    require(setup);
    let ws = TempProject::new();
    let r = sh(
        ws.root(),
        &policy(setup),
        "mkdir m; mount -t tmpfs none m 2>&1 && echo MOUNTED; unshare -U true 2>&1 && echo UNSHARED; true",
    );
    assert!(!r.stdout.text.contains("MOUNTED"), "{r:#?}");
    assert!(!r.stdout.text.contains("UNSHARED"), "{r:#?}");
    assert!(r.isolation.seccomp, "{:?}", r.isolation);
}

#[test]
fn network_on_reaches_the_host() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let ws = TempProject::new();
    let p = Policy { network: sandbox::Network::On, ..quick_policy() };
    let r = sh(
        ws.root(),
        &p,
        &format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('CONNECTED')\""
        ),
    );
    assert!(r.stdout.text.contains("CONNECTED"), "{r:#?}");
    assert!(!r.isolation.network_namespace);
    assert_eq!(r.isolation.network, "on");
    assert!(listener.accept().is_ok());
}

#[test]
fn isolation_report_is_complete_on_this_machine() {
    let ws = TempProject::new();
    let r = sh(ws.root(), &quick_policy(), "true");
    let iso = &r.isolation;
    assert_eq!(iso.backend, "namespaces");
    assert!(
        iso.user_namespace && iso.pid_namespace && iso.mount_namespace && iso.network_namespace
    );
    assert_eq!(iso.filesystem, "read_only_root");
    assert!(iso.landlock.as_deref().is_some_and(|l| l.starts_with("abi")), "{iso:?}");
    assert!(iso.seccomp);
    assert!(iso.rlimits.contains(&"core".to_owned()));
    assert_eq!(r.exit_code, Some(0));
    // Only our own processes are visible.
    let r = sh(ws.root(), &quick_policy(), "ls /proc | grep -c '^[0-9]'");
    let n: u32 = r.stdout.text.trim().parse().unwrap();
    assert!(n <= 4, "saw {n} processes: {r:#?}");
}

#[test]
fn output_limit_kills_and_is_named() {
    let ws = TempProject::new();
    let p = Policy { max_output_bytes: Some(1 << 20), capture_bytes: 4096, ..quick_policy() };
    let r = sh(ws.root(), &p, "yes");
    assert_eq!(r.limit, Some(LimitKind::Output), "{r:#?}");
    assert!(r.stdout.truncated);
    assert!(r.stdout.text.len() < 8192);
}

#[test]
fn cpu_time_limit_is_named() {
    let ws = TempProject::new();
    let p = Policy { cpu_time: Some(Duration::from_secs(1)), ..quick_policy() };
    let r = sh(ws.root(), &p, "while :; do :; done");
    assert_eq!(r.limit, Some(LimitKind::CpuTime), "{r:#?}");
}

#[test]
fn missing_command_is_a_clear_error() {
    let ws = TempProject::new();
    let err = sandbox()
        .run(
            &request(ws.root(), &["definitely-not-a-command-xyz"]),
            &quick_policy(),
            &sandbox::Hooks::default(),
        )
        .unwrap_err();
    assert_eq!(err.code(), protocol::ErrorCode::CommandNotFound, "{err}");
    assert!(err.to_string().contains("definitely-not-a-command-xyz"));
}

#[test]
fn cwd_outside_the_workspace_is_refused() {
    let ws = TempProject::new();
    let mut req = request(ws.root(), &["true"]);
    req.cwd = Some("/etc".into());
    let err = sandbox().run(&req, &quick_policy(), &sandbox::Hooks::default()).unwrap_err();
    assert_eq!(err.code(), protocol::ErrorCode::InvalidArgument, "{err}");
}

#[test]
fn strict_refuses_when_protections_are_missing() {
    let ws = TempProject::new();
    let p = Policy { backend: BackendChoice::None, strict: true, ..quick_policy() };
    let err =
        sandbox().run(&request(ws.root(), &["true"]), &p, &sandbox::Hooks::default()).unwrap_err();
    assert_eq!(err.code(), protocol::ErrorCode::SandboxUnavailable, "{err}");
}

#[test]
fn streaming_hook_sees_output_in_order() {
    let ws = TempProject::new();
    let seen = std::sync::Mutex::new(Vec::<u8>::new());
    let hook = |s: sandbox::Stream, b: &[u8]| {
        if s == sandbox::Stream::Stdout {
            seen.lock().unwrap().extend_from_slice(b);
        }
    };
    let hooks = sandbox::Hooks { on_output: Some(&hook), cancel: None };
    let r = sandbox()
        .run(
            &request(ws.root(), &["sh", "-c", "for i in 1 2 3; do echo $i; done"]),
            &quick_policy(),
            &hooks,
        )
        .unwrap();
    assert_eq!(String::from_utf8(seen.into_inner().unwrap()).unwrap(), "1\n2\n3\n");
    assert_eq!(r.stdout.text, "1\n2\n3\n");
}

#[test]
fn cancel_kills_the_tree() {
    let ws = TempProject::new();
    let m = marker();
    let flag = stdx::CancellationToken::new();
    let hooks = sandbox::Hooks { on_output: None, cancel: Some(&flag) };
    let start = Instant::now();
    let err = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            flag.cancel();
        });
        sandbox().run(&request(ws.root(), &["sh", "-c", "sleep 60", &m]), &quick_policy(), &hooks)
    })
    .unwrap_err();
    assert_eq!(err.code(), protocol::ErrorCode::Cancelled);
    assert!(start.elapsed() < Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(100));
    assert!(host_processes_with(&m).is_empty());
}

/// Regression: Landlock rules were opened with a plain `open`, which blocks on a FIFO
/// until a writer appears; a FIFO beside a hidden `.env` hung every command run
/// without namespaces until its timeout.
#[test]
#[allow(unsafe_code)] // mkfifo(3): std has no safe wrapper
fn fifo_next_to_a_hidden_path_does_not_hang_the_sandbox() {
    let outer = TempProject::new();
    outer.write(".env", "SECRET");
    outer.write("ws/a.txt", "a");
    let fifo = std::ffi::CString::new(outer.path("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let p = Policy {
        backend: BackendChoice::None,
        timeout: Some(Duration::from_secs(10)),
        ..Policy::default()
    };
    let start = Instant::now();
    let r = sh(&outer.path("ws"), &p, "cat a.txt ../.env 2>/dev/null");
    assert!(r.limit.is_none(), "{r:#?}");
    assert_eq!(r.stdout.text, "a");
    assert!(start.elapsed() < Duration::from_secs(5));
}

/// Without namespaces a process that leaves the helper's session can outlive a
/// forced kill (output limit) and keep the output pipe open: the run must still
/// return, and say what happened.
#[test]
fn escaped_writer_cannot_hang_the_parent() {
    let ws = TempProject::new();
    let m = marker();
    let p = Policy {
        backend: BackendChoice::None,
        max_output_bytes: Some(1 << 20),
        timeout: Some(Duration::from_secs(30)),
        ..Policy::default()
    };
    let start = Instant::now();
    let r = sandbox()
        .run(
            &request(ws.root(), &["sh", "-c", "(setsid sh -c 'sleep 60' \"$0\" &); yes", &m]),
            &p,
            &sandbox::Hooks::default(),
        )
        .unwrap();
    let took = start.elapsed();
    let survivors = host_processes_with(&m);
    for &pid in &survivors {
        kill(pid); // the escaped sleeper, if it is still there
    }
    assert_eq!(r.limit, Some(LimitKind::Output), "{r:#?}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    if r.isolation.cgroup.is_some() {
        // The cgroup reaches it: killed, nothing abandoned.
        assert!(survivors.is_empty(), "{survivors:?}");
        assert!(!r.isolation.warnings.iter().any(|w| w.contains("kept the output pipes open")));
    } else {
        assert!(
            r.isolation.warnings.iter().any(|w| w.contains("kept the output pipes open")),
            "{:?}",
            r.isolation
        );
    }
}

#[allow(unsafe_code)] // kill(2) on a pid we found by our own marker
fn kill(pid: i32) {
    // SAFETY: plain syscall with integer arguments.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

#[test]
fn probe_cache_is_used_only_when_trusted() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempProject::new();
    let path = dir.path("cache/probe.json");
    let mut cfg = config();
    cfg.probe_cache = Some(path.clone());
    let sb = sandbox::Sandbox::new(cfg.clone()).unwrap();
    assert!(sb.caps().user_namespaces);
    let text = std::fs::read_to_string(&path).expect("the probe was cached");
    // Edit the cached answer: a trusted cache is believed...
    let edited = text.replace("\"user_namespaces\":true", "\"user_namespaces\":false");
    assert_ne!(edited, text);
    std::fs::write(&path, &edited).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(!sandbox::Sandbox::new(cfg.clone()).unwrap().caps().user_namespaces);
    // ...one others could have written is not.
    std::fs::write(&path, &edited).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(sandbox::Sandbox::new(cfg).unwrap().caps().user_namespaces);
}

/// Regression: without namespaces the supervisor was dumpable, so the command
/// (same uid) could open /proc/<supervisor>/fd/3 and write a fake report.
#[test]
fn the_command_cannot_forge_the_report() {
    let ws = TempProject::new();
    let p = Policy { backend: BackendChoice::None, ..quick_policy() };
    let forged = r#"{"event":"exited","code":0,"signal":null,"limit":null,"limit_detail":null,"cpu_ms":0,"max_rss_kb":0,"leftovers":0,"peak_tree_rss":null,"peak_processes":null,"pid_max":null,"duration_ms":0}"#;
    let r = sh(
        ws.root(),
        &p,
        &format!(
            "echo '{forged}' > /proc/$PPID/fd/3 && echo FORGED; echo '{forged}' > /proc/1/fd/3 && echo FORGED1; exit 7"
        ),
    );
    assert!(!r.stdout.text.contains("FORGED"), "{r:#?}");
    assert_eq!(r.exit_code, Some(7), "{r:#?}");
}
