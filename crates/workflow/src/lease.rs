//! Leases for stores shared by processes that may die: who holds a claim, and the
//! thread that keeps a live process's claims from running out.
//!
//! A lease is a claim with an end time that its holder keeps pushing forward. A
//! process killed with SIGKILL stops pushing, its leases run out, and another
//! process may claim what it held; nothing needs to notice the death.

use std::{
    sync::mpsc,
    thread::JoinHandle,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

/// How long a claim lasts without renewal unless a store is told otherwise: long
/// enough that a busy machine's renewals (every third of it) are never late, short
/// enough that a dead replica's runs are taken over within seconds.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(15);

/// A name for one holder of leases (a store in one process), unique across
/// machines and restarts: host name, process id and 32 random bits.
pub fn lease_owner() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    format!(
        "{}:{}:{:08x}",
        if host.is_empty() { "host" } else { &host },
        std::process::id(),
        h.finish() as u32
    )
}

/// A thread that calls `renew` every `every` until the `Heartbeat` is dropped
/// (or the process dies, which is the point).
pub struct Heartbeat {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    pub fn start(name: &str, every: Duration, renew: impl Fn() + Send + 'static) -> Heartbeat {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    renew();
                }
            })
            .ok();
        Heartbeat { stop: Some(stop), thread }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            // The renewal is quick; never wait on ourselves.
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}
