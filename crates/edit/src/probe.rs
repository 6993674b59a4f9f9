//! Counters for tests that check how much work an edit does (the engine's
//! "a change reads each file once" test): which files a plan read from disk and
//! how many plans were built, per thread so that tests running in parallel do not
//! see each other's. Compiled only into this crate's tests and, for other
//! crates' tests, with the `probe` feature; otherwise every hook is empty.

#[cfg(any(test, feature = "probe"))]
mod imp {
    use std::cell::RefCell;

    /// What the hooks recorded on this thread since the last [`take`].
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct Counts {
        /// Root-relative paths a plan read from disk, in order (one per read).
        pub reads: Vec<String>,
        /// Plans built (previews and applies alike).
        pub plans: usize,
    }

    thread_local! {
        static COUNTS: RefCell<Counts> = RefCell::new(Counts::default());
    }

    pub(crate) fn read(rel: &str) {
        COUNTS.with(|c| c.borrow_mut().reads.push(rel.to_owned()));
    }

    pub(crate) fn plan() {
        COUNTS.with(|c| c.borrow_mut().plans += 1);
    }

    /// This thread's counts so far, which start again from zero.
    pub fn take() -> Counts {
        COUNTS.with(|c| std::mem::take(&mut *c.borrow_mut()))
    }
}

#[cfg(any(test, feature = "probe"))]
pub use imp::{Counts, take};
#[cfg(any(test, feature = "probe"))]
pub(crate) use imp::{plan, read};

#[cfg(not(any(test, feature = "probe")))]
#[inline(always)]
pub(crate) fn read(_rel: &str) {}

#[cfg(not(any(test, feature = "probe")))]
#[inline(always)]
pub(crate) fn plan() {}
