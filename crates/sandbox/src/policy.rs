//! What the caller asks for (`Policy`), what the host offers (`HostCaps`), and the pure
//! decisions between them: which backend runs a command and which protections that
//! gives (`plan`), which paths hold secrets, which environment variables look like
//! credentials. Everything here is data in, data out, tested as tables.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use protocol::LimitKind;
use serde::{Deserialize, Serialize};

/// Network access for the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// No route out: a private network namespace with only a loopback interface (or,
    /// without namespaces, socket creation for IP families denied).
    Off,
    /// The host's network.
    On,
}

/// What the command may do to the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceMode {
    /// Writes land in the workspace.
    Writable,
    /// Writes land in a throwaway layer (an overlay, or a copy) discarded afterwards.
    Throwaway,
}

/// Which isolation mechanism to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BackendChoice {
    /// The strongest available: namespaces, then bubblewrap, then none (with warnings).
    /// The container backend is never chosen automatically: it needs an image.
    Auto,
    /// ironbees' own helper: user, pid, mount, ipc, uts and network namespaces,
    /// Landlock, seccomp, rlimits, cgroups when delegated.
    Namespaces,
    /// `bwrap` for the namespaces and mounts, ironbees' helper inside it for Landlock,
    /// seccomp and rlimits.
    Bubblewrap,
    /// `docker run` / `podman run` with an image.
    Container,
    /// No namespaces: a supervised process group with Landlock, seccomp and rlimits
    /// where the kernel offers them.
    None,
}

impl BackendChoice {
    pub fn parse(s: &str) -> Option<BackendChoice> {
        Some(match s {
            "auto" => BackendChoice::Auto,
            "namespaces" => BackendChoice::Namespaces,
            "bubblewrap" | "bwrap" => BackendChoice::Bubblewrap,
            "container" => BackendChoice::Container,
            "none" => BackendChoice::None,
            _ => return None,
        })
    }
}

/// The backend that actually runs a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    Namespaces,
    Bubblewrap,
    Container,
    None,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Namespaces => "namespaces",
            Backend::Bubblewrap => "bubblewrap",
            Backend::Container => "container",
            Backend::None => "none",
        }
    }
}

/// Limits and isolation for one command. `Policy::default()` is the safe default:
/// network off, workspace writable, everything else read-only, secrets hidden,
/// 10 minutes, 4 GiB, 512 processes, 1 MiB of each output stream kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Wall-clock limit; the whole process tree is killed when it fires.
    pub timeout: Option<Duration>,
    /// Memory limit for the whole tree (cgroup) or per process (rlimit) + monitor.
    pub memory_bytes: Option<u64>,
    /// CPU time per process (`RLIMIT_CPU`).
    pub cpu_time: Option<Duration>,
    /// Processes (and threads) the command may have at once.
    pub max_processes: Option<u32>,
    /// Largest file a process may write (`RLIMIT_FSIZE`).
    pub max_file_size: Option<u64>,
    /// Output (stdout + stderr) after which the command is killed.
    pub max_output_bytes: Option<u64>,
    /// Bytes of each stream kept in the result (head and tail halves).
    pub capture_bytes: usize,
    pub network: Network,
    pub workspace: WorkspaceMode,
    /// More writable paths (caches, build directories outside the workspace).
    pub writable: Vec<PathBuf>,
    /// More paths to hide, on top of the built-in secret locations.
    pub hidden: Vec<PathBuf>,
    /// Size of the private `/tmp` (and `/dev/shm`) tmpfs.
    pub tmpfs_bytes: u64,
    pub backend: BackendChoice,
    /// Refuse to run when any protection of the plan is missing.
    pub strict: bool,
    /// Image for the container backend.
    pub container_image: Option<String>,
    /// Use a per-run cgroup when the host delegates one (off: rlimits and the
    /// sandbox's own monitors only).
    pub cgroups: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            timeout: Some(Duration::from_secs(600)),
            memory_bytes: Some(4 << 30),
            cpu_time: None,
            max_processes: Some(512),
            max_file_size: Some(4 << 30),
            max_output_bytes: Some(256 << 20),
            capture_bytes: 1 << 20,
            network: Network::Off,
            workspace: WorkspaceMode::Writable,
            writable: Vec::new(),
            hidden: Vec::new(),
            tmpfs_bytes: 1 << 30,
            backend: BackendChoice::Auto,
            strict: false,
            container_image: None,
            cgroups: true,
        }
    }
}

/// What this host offers, as found by probing (see `probe.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCaps {
    /// Unprivileged user namespaces (with pid, mount, net, ipc, uts inside) work.
    pub user_namespaces: bool,
    /// The new mount API (`open_tree`, `move_mount`, `mount_setattr`) works inside.
    pub mount_api: bool,
    /// overlayfs can be mounted inside a user namespace.
    pub overlay: bool,
    /// Landlock ABI version, 0 when Landlock is unavailable.
    pub landlock_abi: u32,
    /// seccomp filters can be installed.
    pub seccomp: bool,
    /// `bwrap` found and able to create a sandbox.
    pub bubblewrap: Option<PathBuf>,
    /// A reachable container engine (`docker` or `podman` path), if probed.
    pub container_engine: Option<PathBuf>,
    /// `v1` or `v2` when per-run cgroups with memory and pids controllers can be made.
    pub cgroup: Option<String>,
    /// The reasons behind each `false`, for warnings.
    pub notes: Vec<String>,
}

/// How a command will run: the backend and each protection it brings. The runner
/// copies this into the result's `Isolation` and adds what it learns at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub backend: Backend,
    pub namespaces: bool,
    pub network_namespace: bool,
    /// Deny IPv4/IPv6 sockets with seccomp (network off without a namespace).
    pub seccomp_deny_inet: bool,
    /// Deny TCP bind/connect with Landlock (network off without a namespace).
    pub landlock_deny_tcp: bool,
    pub landlock: bool,
    pub seccomp: bool,
    pub cgroup: bool,
    /// Throwaway workspace through an overlay mount (`false`: through a copy).
    pub overlay: bool,
    pub warnings: Vec<String>,
}

/// Why a plan cannot be carried out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanRefusal {
    /// The named backend is not available here.
    BackendUnavailable { backend: Backend, reason: String },
    /// `strict` was set and these protections are missing.
    Strict { missing: Vec<String> },
    /// The container backend needs an image.
    NoImage,
}

impl std::fmt::Display for PlanRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanRefusal::BackendUnavailable { backend, reason } => {
                write!(f, "the {} backend is not available: {reason}", backend.as_str())
            }
            PlanRefusal::Strict { missing } => {
                write!(f, "strict isolation requested but missing: {}", missing.join("; "))
            }
            PlanRefusal::NoImage => f.write_str("the container backend needs an image"),
        }
    }
}

/// Chooses the backend and protections for `policy` on a host with `caps`.
pub fn plan(policy: &Policy, caps: &HostCaps) -> Result<Plan, PlanRefusal> {
    let backend = match policy.backend {
        BackendChoice::Auto => {
            if caps.user_namespaces && caps.mount_api {
                Backend::Namespaces
            } else if caps.bubblewrap.is_some() {
                Backend::Bubblewrap
            } else {
                Backend::None
            }
        }
        BackendChoice::Namespaces => {
            if !(caps.user_namespaces && caps.mount_api) {
                return Err(PlanRefusal::BackendUnavailable {
                    backend: Backend::Namespaces,
                    reason: reason(caps, "user namespaces or the new mount API do not work"),
                });
            }
            Backend::Namespaces
        }
        BackendChoice::Bubblewrap => {
            if caps.bubblewrap.is_none() {
                return Err(PlanRefusal::BackendUnavailable {
                    backend: Backend::Bubblewrap,
                    reason: "bwrap is not installed or cannot create a sandbox".into(),
                });
            }
            Backend::Bubblewrap
        }
        BackendChoice::Container => {
            if caps.container_engine.is_none() {
                let notes: Vec<&str> = caps
                    .notes
                    .iter()
                    .filter(|n| n.contains("container") || n.contains("docker"))
                    .map(String::as_str)
                    .collect();
                return Err(PlanRefusal::BackendUnavailable {
                    backend: Backend::Container,
                    reason: if notes.is_empty() {
                        "no reachable docker or podman engine".into()
                    } else {
                        notes.join("; ")
                    },
                });
            }
            if policy.container_image.is_none() {
                return Err(PlanRefusal::NoImage);
            }
            Backend::Container
        }
        BackendChoice::None => Backend::None,
    };

    let mut warnings = Vec::new();
    let namespaces = matches!(backend, Backend::Namespaces | Backend::Bubblewrap);
    let container = backend == Backend::Container;
    let net_off = policy.network == Network::Off;
    let network_namespace = net_off && namespaces;
    // Inside the helper (namespaces, bubblewrap, none) Landlock and seccomp apply;
    // a container brings its own seccomp profile and no Landlock of ours.
    let landlock = !container && caps.landlock_abi >= 1;
    let seccomp = !container && caps.seccomp;
    let seccomp_deny_inet = net_off && !namespaces && !container && seccomp;
    let landlock_deny_tcp = net_off && !namespaces && !container && caps.landlock_abi >= 4;
    let cgroup = !container && caps.cgroup.is_some() && policy.cgroups;
    // bwrap learnt overlays only in 0.9 (Debian 12 ships 0.8): it gets a copy.
    let overlay = policy.workspace == WorkspaceMode::Throwaway
        && backend == Backend::Namespaces
        && caps.overlay;

    let mut missing = Vec::new();
    if backend == Backend::None {
        let why = if policy.backend == BackendChoice::None {
            "backend `none` requested".to_owned()
        } else {
            reason(caps, "no user namespaces and no bubblewrap")
        };
        missing.push(format!(
            "no namespaces ({why}): the command sees the host's processes (and can read \
             the environment of this user's other processes in /proc) and the filesystem \
             layout; a daemon that escapes the process group is found only as an orphan"
        ));
    }
    if !container && !landlock {
        missing.push(if namespaces {
            "Landlock unavailable: only the read-only mounts protect the filesystem".to_owned()
        } else {
            "Landlock unavailable: NOTHING stops writes outside the workspace or reads of \
             secrets"
                .to_owned()
        });
    }
    if !container && !seccomp {
        missing.push("seccomp unavailable: dangerous system calls are not filtered".to_owned());
    }
    if net_off && !network_namespace && !container {
        if !seccomp_deny_inet && !landlock_deny_tcp {
            missing.push("network off requested but NOT enforced (no namespace, seccomp or Landlock network rules)".to_owned());
        } else {
            missing.push(
                "network off enforced only by denying IP sockets (no private network \
                 namespace): local loopback servers cannot run either"
                    .to_owned(),
            );
        }
    }
    if !container && !cgroup {
        if policy.memory_bytes.is_some() {
            missing.push(
                "no delegated cgroup: the memory limit applies per process (RLIMIT_DATA) \
                 plus a sampling monitor over the tree, not as one hard limit for the tree"
                    .to_owned(),
            );
        }
        if policy.max_processes.is_some() && !namespaces {
            missing.push(
                "no delegated cgroup and no user namespace: the process limit \
                 (RLIMIT_NPROC) counts all of this user's processes and is not enforced \
                 for root"
                    .to_owned(),
            );
        }
    }
    if policy.workspace == WorkspaceMode::Throwaway && !overlay && !container {
        warnings.push(
            "throwaway workspace by copying (no overlayfs): large workspaces are slow".to_owned(),
        );
    }
    if policy.strict && !missing.is_empty() {
        return Err(PlanRefusal::Strict { missing });
    }
    warnings.splice(0..0, missing);
    Ok(Plan {
        backend,
        namespaces,
        network_namespace,
        seccomp_deny_inet,
        landlock_deny_tcp,
        landlock,
        seccomp,
        cgroup,
        overlay,
        warnings,
    })
}

fn reason(caps: &HostCaps, default: &str) -> String {
    if caps.notes.is_empty() { default.to_owned() } else { caps.notes.join("; ") }
}

/// When several limits fired, the one to report: the cause before the consequence.
/// A fork bomb hits the process limit and then runs into the timeout; a leak hits
/// the memory limit and may then also exceed CPU time.
pub fn primary_limit(fired: &[LimitKind]) -> Option<LimitKind> {
    const ORDER: [LimitKind; 6] = [
        LimitKind::Memory,
        LimitKind::Processes,
        LimitKind::FileSize,
        LimitKind::Output,
        LimitKind::CpuTime,
        LimitKind::Timeout,
    ];
    ORDER.into_iter().find(|l| fired.contains(l))
}

/// Where credentials usually live, relative to the home directory. Hidden from every
/// sandboxed command (mounted over with an empty directory or file, and excluded from
/// Landlock's read rules).
pub const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".config/hub",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".config/ironbees",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
];

/// System files that hold secrets (readable when the sandbox runs as root).
pub const SYSTEM_SECRETS: &[&str] = &["/etc/shadow", "/etc/gshadow", "/etc/ssh", "/root/.ssh"];

/// Candidate secret paths for a workspace: the home secrets, the system secrets,
/// `.env` files in every ancestor of the workspace and in the home directory (never
/// inside the workspace: its own `.env` is the project's business), plus `extra`.
/// The caller keeps those that exist ([`existing_hidden`]).
pub fn secret_candidates(
    home: Option<&Path>,
    workspace: &Path,
    ancestor_entries: &dyn Fn(&Path) -> Vec<String>,
    extra: &[PathBuf],
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(home) = home {
        out.extend(HOME_SECRETS.iter().map(|s| home.join(s)));
    }
    out.extend(SYSTEM_SECRETS.iter().map(PathBuf::from));
    let mut dirs: Vec<&Path> = workspace.ancestors().skip(1).collect();
    if let Some(home) = home {
        dirs.push(home);
    }
    for dir in dirs {
        for name in ancestor_entries(dir) {
            if is_env_file(&name) {
                out.push(dir.join(name));
            }
        }
    }
    out.extend(extra.iter().cloned());
    // Never hide the workspace or anything that contains it: that would hide the
    // project itself. Secret locations *inside* it stay hidden (a workspace that is
    // the home directory must not expose ~/.ssh); `.env` files are only collected
    // outside it, so the project's own `.env` stays visible.
    out.retain(|p| !workspace.starts_with(p));
    out.sort();
    out.dedup();
    out
}

/// `.env`, `.env.local`, `.env.production`, ... (not `.envrc`, a direnv script).
pub fn is_env_file(name: &str) -> bool {
    name == ".env" || (name.starts_with(".env.") && name.len() > 5)
}

/// Environment variables that look like credentials: removed before the command runs.
pub fn is_secret_env(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "GPG_AGENT_INFO",
        "DOCKER_AUTH_CONFIG",
        "KUBECONFIG",
        "NETRC",
        "DATABASE_URL",
        "VAULT_ADDR",
    ];
    const PREFIXES: &[&str] = &["AWS_", "AZURE_", "GOOGLE_APPLICATION_", "GCLOUD_", "ARM_CLIENT_"];
    const MARKERS: &[&str] = &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
        "AUTH",
    ];
    let upper = name.to_ascii_uppercase();
    EXACT.contains(&upper.as_str())
        || PREFIXES.iter().any(|p| upper.starts_with(p))
        || MARKERS.iter().any(|m| upper.contains(m))
}

/// Splits an environment into what the command gets and the names removed.
pub fn filter_env(
    vars: impl IntoIterator<Item = (String, String)>,
) -> (Vec<(String, String)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for (k, v) in vars {
        if is_secret_env(&k) {
            removed.push(k);
        } else {
            kept.push((k, v));
        }
    }
    removed.sort();
    (kept, removed)
}

/// Splits read access to `/` into allowed subtrees that leave out `hidden`: for
/// every hidden path, each ancestor's other entries are allowed instead of the
/// ancestor. Landlock rules are allow-lists, so this is how "everything but" is said.
/// `list_dir` returns a directory's entry names (empty when unreadable).
pub fn split_read_roots(
    hidden: &[PathBuf],
    list_dir: &dyn Fn(&Path) -> Vec<String>,
) -> Vec<PathBuf> {
    split_roots(&[PathBuf::from("/")], hidden, list_dir)
}

/// Splits each of `roots` around the `hidden` paths beneath it (see
/// [`split_read_roots`]); write roots need it too, or a workspace rule would grant
/// access to the secrets inside it.
pub fn split_roots(
    roots: &[PathBuf],
    hidden: &[PathBuf],
    list_dir: &dyn Fn(&Path) -> Vec<String>,
) -> Vec<PathBuf> {
    fn go(
        dir: &Path,
        hidden: &[PathBuf],
        list_dir: &dyn Fn(&Path) -> Vec<String>,
        out: &mut Vec<PathBuf>,
    ) {
        let under: Vec<PathBuf> = hidden.iter().filter(|h| h.starts_with(dir)).cloned().collect();
        if under.is_empty() {
            out.push(dir.to_path_buf());
            return;
        }
        if under.iter().any(|h| h == dir) {
            return;
        }
        for name in list_dir(dir) {
            go(&dir.join(name), &under, list_dir, out);
        }
    }
    let mut out = Vec::new();
    for r in roots {
        go(r, hidden, list_dir, &mut out);
    }
    out
}

/// The directories the sandbox covers with fresh private mounts: whatever lived
/// there on the host is gone inside unless [`keep_through_private_mounts`] keeps it.
pub const PRIVATE_MOUNTS: [&str; 2] = ["/tmp", "/dev/shm"];

/// Of the paths a command needs (`candidates`: the sandbox helper, the program and
/// its installation, `PATH` entries, toolchain homes, where the workspace's
/// symlinks lead), those the private `/tmp` and `/dev/shm` would hide, to be bound
/// back read-only at the same place. A checkout, a toolchain or our own helper
/// under `/tmp` must work like anywhere else; the private mount itself is never
/// given up (a candidate that *is* `/tmp` is dropped), nor is anything inside the
/// workspace, which is attached anyway. Nested candidates collapse to the outer one.
pub fn keep_through_private_mounts(candidates: &[PathBuf], workspace: &Path) -> Vec<PathBuf> {
    let mut keep: Vec<PathBuf> = candidates
        .iter()
        .filter(|c| c.is_absolute())
        .filter(|c| PRIVATE_MOUNTS.iter().any(|m| c.starts_with(m) && c.as_path() != Path::new(m)))
        .filter(|c| !c.starts_with(workspace))
        .cloned()
        .collect();
    keep.sort();
    keep.dedup();
    let all = keep.clone();
    keep.retain(|c| !all.iter().any(|o| o != c && c.starts_with(o)));
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(userns: bool, bwrap: bool, landlock: u32, seccomp: bool, cgroup: bool) -> HostCaps {
        HostCaps {
            user_namespaces: userns,
            mount_api: userns,
            overlay: userns,
            landlock_abi: landlock,
            seccomp,
            bubblewrap: bwrap.then(|| PathBuf::from("/usr/bin/bwrap")),
            container_engine: None,
            cgroup: cgroup.then(|| "v2".to_owned()),
            notes: vec![],
        }
    }

    #[test]
    fn backend_choice_table() {
        use Backend as B;
        use BackendChoice as C;
        // (requested, userns, bwrap, expected backend or None for refusal)
        let table: &[(C, bool, bool, Option<B>)] = &[
            (C::Auto, true, true, Some(B::Namespaces)),
            (C::Auto, true, false, Some(B::Namespaces)),
            (C::Auto, false, true, Some(B::Bubblewrap)),
            (C::Auto, false, false, Some(B::None)),
            (C::Namespaces, true, false, Some(B::Namespaces)),
            (C::Namespaces, false, true, None),
            (C::Bubblewrap, true, true, Some(B::Bubblewrap)),
            (C::Bubblewrap, true, false, None),
            (C::None, true, true, Some(B::None)),
            (C::Container, true, true, None),
        ];
        for &(req, userns, bwrap, want) in table {
            let policy = Policy { backend: req, ..Policy::default() };
            let got = plan(&policy, &caps(userns, bwrap, 7, true, true)).ok().map(|p| p.backend);
            assert_eq!(got, want, "{req:?} userns={userns} bwrap={bwrap}");
        }
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn network_off_enforcement_table() {
        // (backend, landlock abi, seccomp) -> (netns, seccomp inet, landlock tcp, warned)
        let table: &[(BackendChoice, u32, bool, (bool, bool, bool, bool))] = &[
            (BackendChoice::Namespaces, 7, true, (true, false, false, false)),
            (BackendChoice::Bubblewrap, 7, true, (true, false, false, false)),
            (BackendChoice::None, 7, true, (false, true, true, true)),
            (BackendChoice::None, 3, true, (false, true, false, true)),
            (BackendChoice::None, 0, false, (false, false, false, true)),
        ];
        for &(backend, abi, seccomp, want) in table {
            let policy = Policy { backend, ..Policy::default() };
            let p = plan(&policy, &caps(true, true, abi, seccomp, true)).unwrap();
            let warned = p.warnings.iter().any(|w| w.contains("network off"));
            assert_eq!(
                (p.network_namespace, p.seccomp_deny_inet, p.landlock_deny_tcp, warned),
                want,
                "{backend:?} abi={abi} seccomp={seccomp}"
            );
        }
        let on = Policy { network: Network::On, ..Policy::default() };
        let p = plan(&on, &caps(true, true, 7, true, true)).unwrap();
        assert!(!p.network_namespace && !p.seccomp_deny_inet && !p.landlock_deny_tcp);
    }

    #[test]
    fn missing_protections_warn_or_refuse_when_strict() {
        let weak = caps(false, false, 0, false, false);
        let p = plan(&Policy::default(), &weak).unwrap();
        assert_eq!(p.backend, Backend::None);
        let text = p.warnings.join("\n");
        for needle in [
            "no namespaces",
            "Landlock unavailable",
            "seccomp unavailable",
            "NOT enforced",
            "RLIMIT_DATA",
        ] {
            assert!(text.contains(needle), "missing warning {needle:?} in {text}");
        }
        let strict = Policy { strict: true, ..Policy::default() };
        match plan(&strict, &weak) {
            Err(PlanRefusal::Strict { missing }) => assert!(missing.len() >= 4),
            other => panic!("expected a strict refusal, got {other:?}"),
        }
        // Everything available: no warnings, strict passes.
        let p = plan(&strict, &caps(true, false, 7, true, true)).unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn container_needs_engine_and_image() {
        let mut c = caps(true, false, 7, true, true);
        let policy = Policy { backend: BackendChoice::Container, ..Policy::default() };
        assert!(matches!(
            plan(&policy, &c),
            Err(PlanRefusal::BackendUnavailable { backend: Backend::Container, .. })
        ));
        c.container_engine = Some("/usr/bin/docker".into());
        assert_eq!(plan(&policy, &c), Err(PlanRefusal::NoImage));
        let policy = Policy { container_image: Some("rust:1".into()), ..policy };
        let p = plan(&policy, &c).unwrap();
        assert_eq!(p.backend, Backend::Container);
        assert!(!p.landlock && !p.seccomp && !p.cgroup);
    }

    #[test]
    fn throwaway_uses_overlay_when_possible() {
        let policy = Policy { workspace: WorkspaceMode::Throwaway, ..Policy::default() };
        assert!(plan(&policy, &caps(true, false, 7, true, true)).unwrap().overlay);
        let p = plan(
            &Policy { backend: BackendChoice::None, ..policy },
            &caps(true, false, 7, true, true),
        )
        .unwrap();
        assert!(!p.overlay);
        assert!(p.warnings.iter().any(|w| w.contains("copying")));
    }

    #[test]
    fn secret_candidates_cover_home_ancestors_and_skip_workspace() {
        let ws = Path::new("/home/u/src/proj");
        let entries = |d: &Path| -> Vec<String> {
            match d.to_str().unwrap() {
                "/home/u/src" => vec![".env".into(), ".envrc".into(), "other".into()],
                "/home/u" => vec![".env.local".into()],
                _ => vec![],
            }
        };
        let got = secret_candidates(
            Some(Path::new("/home/u")),
            ws,
            &entries,
            &[PathBuf::from("/opt/keys")],
        );
        for want in [
            "/home/u/.ssh",
            "/home/u/.aws",
            "/home/u/src/.env",
            "/home/u/.env.local",
            "/etc/shadow",
            "/opt/keys",
        ] {
            assert!(got.contains(&PathBuf::from(want)), "missing {want}");
        }
        assert!(!got.contains(&PathBuf::from("/home/u/src/.envrc")));
        // A workspace inside a secret location keeps it visible.
        let got = secret_candidates(
            Some(Path::new("/home/u")),
            Path::new("/home/u/.ssh/x"),
            &entries,
            &[],
        );
        assert!(!got.contains(&PathBuf::from("/home/u/.ssh")));
    }

    #[test]
    fn primary_limit_table() {
        use LimitKind::*;
        let table: &[(&[LimitKind], Option<LimitKind>)] = &[
            (&[], None),
            (&[Timeout], Some(Timeout)),
            (&[Timeout, Processes], Some(Processes)),
            (&[CpuTime, Memory], Some(Memory)),
            (&[Output, Timeout], Some(Output)),
            (&[FileSize, CpuTime], Some(FileSize)),
        ];
        for (fired, want) in table {
            assert_eq!(primary_limit(fired), *want, "{fired:?}");
        }
    }

    #[test]
    fn env_filter_table() {
        let table = [
            ("PATH", false),
            ("HOME", false),
            ("CARGO_HOME", false),
            ("GITHUB_TOKEN", true),
            ("OPENAI_API_KEY", true),
            ("AWS_PROFILE", true),
            ("SSH_AUTH_SOCK", true),
            ("DB_PASSWORD", true),
            ("MY_SECRET_THING", true),
            ("RUST_LOG", false),
            ("AUTHOR_NAME", true), // conservative: contains AUTH
        ];
        for (name, secret) in table {
            assert_eq!(is_secret_env(name), secret, "{name}");
        }
        let (kept, removed) =
            filter_env([("PATH".into(), "/bin".into()), ("GH_TOKEN".into(), "x".into())]);
        assert_eq!(kept, vec![("PATH".to_owned(), "/bin".to_owned())]);
        assert_eq!(removed, vec!["GH_TOKEN".to_owned()]);
    }

    #[test]
    fn read_roots_leave_out_hidden_paths() {
        let tree = |d: &Path| -> Vec<String> {
            let names: &[&str] = match d.to_str().unwrap() {
                "/" => &["bin", "home", "etc"],
                "/home" => &["u"],
                "/home/u" => &[".ssh", "src", ".bashrc"],
                "/etc" => &["shadow", "passwd"],
                _ => &[],
            };
            names.iter().map(|s| s.to_string()).collect()
        };
        let hidden = [PathBuf::from("/home/u/.ssh"), PathBuf::from("/etc/shadow")];
        let got = split_read_roots(&hidden, &tree);
        let want: Vec<PathBuf> = ["/bin", "/home/u/src", "/home/u/.bashrc", "/etc/passwd"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(got, want);
        assert_eq!(split_read_roots(&[], &tree), vec![PathBuf::from("/")]);
        // A write root (a home-directory workspace) is split the same way.
        let got = split_roots(&[PathBuf::from("/home/u")], &hidden, &tree);
        assert_eq!(got, vec![PathBuf::from("/home/u/src"), PathBuf::from("/home/u/.bashrc")]);
    }

    #[test]
    fn what_lives_under_tmp_and_is_needed_stays_visible() {
        let p = |s: &str| PathBuf::from(s);
        // (candidates, workspace, kept)
        let table: &[(&[&str], &str, &[&str])] = &[
            // A clone under /tmp: our own helper binary, the node_modules its fixtures link to.
            (
                &[
                    "/tmp/ci/main/target/debug/ironbees-sandbox-helper",
                    "/tmp/ci/main/target/test-deps/node/node_modules",
                    "/usr/bin",
                ],
                "/tmp/ironbees-test-1",
                &[
                    "/tmp/ci/main/target/debug/ironbees-sandbox-helper",
                    "/tmp/ci/main/target/test-deps/node/node_modules",
                ],
            ),
            // A toolchain home under /tmp and a PATH entry inside it: one bind.
            (&["/tmp/rust/.cargo", "/tmp/rust/.cargo/bin"], "/home/u/ws", &["/tmp/rust/.cargo"]),
            // The private /tmp itself is never given up; /dev/shm entries are kept.
            (&["/tmp", "/dev/shm/venv"], "/home/u/ws", &["/dev/shm/venv"]),
            // Inside the workspace: attached anyway.
            (&["/tmp/x/node_modules/.bin"], "/tmp/x", &[]),
            // /tmpfoo is not under /tmp; relative paths are ignored.
            (&["/tmpfoo/bin", "rel/bin"], "/w", &[]),
        ];
        for (cands, ws, want) in table {
            let cands: Vec<PathBuf> = cands.iter().map(|c| p(c)).collect();
            let got = keep_through_private_mounts(&cands, Path::new(ws));
            let want: Vec<PathBuf> = want.iter().map(|c| p(c)).collect();
            assert_eq!(got, want, "{cands:?} in {ws}");
        }
    }
}
