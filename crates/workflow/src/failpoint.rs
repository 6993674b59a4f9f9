//! Crash points for the crash test (`crash_test.rs`), compiled only into this
//! crate's unit-test binary and into builds with the `crash-test` feature (the
//! tests of another store, `workflow-pg`, which pass the same points from its
//! own code through [`crate::crash_point`]); other builds carry no trace of them.
//!
//! The test re-runs its own binary as a child with `IRONBEES_WF_CRASH_AT=N`; at
//! the N-th point passed, the child reports the point's name on stdout and blocks,
//! and the parent kills it with SIGKILL. The points: `run created`, `node started`,
//! `effect ran` (the effect's function returned, its result not yet recorded),
//! `effect recorded`, `checkpoint uncommitted` (rows inserted, transaction open),
//! `checkpoint committed`.

#[cfg(any(test, feature = "crash-test"))]
pub(crate) use imp::{arm, hit, passed};

#[cfg(not(any(test, feature = "crash-test")))]
#[inline(always)]
pub(crate) fn hit(_name: &str) {}

#[cfg(any(test, feature = "crash-test"))]
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

    /// Names of the points passed so far, in order.
    static NAMES: Mutex<Vec<String>> = Mutex::new(Vec::new());

    pub fn arm(n: u64) {
        COUNTDOWN.store(n, Ordering::SeqCst);
    }

    pub fn passed() -> Vec<String> {
        NAMES.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn hit(name: &str) {
        if COUNTDOWN.load(Ordering::SeqCst) == 0 {
            // Disarmed (every test but the crash test's child): nothing to record.
            return;
        }
        NAMES.lock().unwrap_or_else(|p| p.into_inner()).push(name.to_owned());
        if COUNTDOWN.fetch_sub(1, Ordering::SeqCst) == 1 {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "CRASHPOINT {name}");
            let _ = out.flush();
            // Wait for the parent's SIGKILL; never return into the engine.
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
    }
}
