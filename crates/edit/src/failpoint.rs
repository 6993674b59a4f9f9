//! Crash points for the crash test (`crash_tests.rs`), compiled only into this
//! crate's unit-test binary: release builds carry no trace of them.
//!
//! The test re-runs its own binary as a child with `IRONBEES_CRASH_AT=N`; at the
//! N-th point passed, the child reports the point's name on stdout and blocks, and
//! the parent kills it with SIGKILL. Every name marks a step boundary of the
//! transaction protocol (see `engine.rs`).

#[cfg(test)]
pub(crate) use imp::{arm, hit, passed};

#[cfg(not(test))]
#[inline(always)]
pub(crate) fn hit(_name: &str) {}

#[cfg(test)]
mod imp {
    use std::{
        io::Write,
        sync::{
            Mutex,
            atomic::{AtomicU64, Ordering},
        },
    };

    /// Points left before the one that stops the process; 0 = disarmed.
    static COUNTDOWN: AtomicU64 = AtomicU64::new(0);
    /// Points passed so far (to learn how many a scenario has).
    static PASSED: AtomicU64 = AtomicU64::new(0);

    pub fn arm(n: u64) {
        COUNTDOWN.store(n, Ordering::SeqCst);
    }

    /// Names of the points passed so far, in order.
    static NAMES: Mutex<Vec<String>> = Mutex::new(Vec::new());

    pub fn passed() -> Vec<String> {
        NAMES.lock().unwrap().clone()
    }

    pub fn hit(name: &str) {
        PASSED.fetch_add(1, Ordering::SeqCst);
        NAMES.lock().unwrap().push(name.to_owned());
        let left = COUNTDOWN.load(Ordering::SeqCst);
        if left == 0 {
            return;
        }
        if COUNTDOWN.fetch_sub(1, Ordering::SeqCst) == 1 {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "CRASHPOINT {name}");
            let _ = out.flush();
            // Wait for the parent's SIGKILL; never return into the protocol.
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
    }
}
