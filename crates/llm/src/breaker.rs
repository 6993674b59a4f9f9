//! A circuit breaker per provider: after `failure_threshold` consecutive failures
//! the provider is skipped for `open_secs`; then one probe call is let through
//! (half-open). Its success closes the circuit, its failure opens it again.
//!
//! The transitions are pure functions of (state, event, now), tested as a table;
//! [`Breaker`] only adds the lock.

use std::{
    sync::Mutex,
    time::{Duration, Instant},
};

use serde::{Deserialize, Serialize};

/// `llm.breaker` in the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BreakerPolicy {
    /// Consecutive failed attempts that open the circuit (0 disables the breaker).
    pub failure_threshold: u32,
    /// How long an open circuit rejects calls before a probe.
    pub open_secs: f64,
}

impl Default for BreakerPolicy {
    fn default() -> Self {
        BreakerPolicy { failure_threshold: 5, open_secs: 30.0 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    Closed {
        failures: u32,
    },
    Open {
        until: Instant,
    },
    /// One probe is in flight; everyone else is rejected until it ends.
    HalfOpen,
}

/// The answer to "may I call this provider now?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    Yes,
    /// Yes, as the half-open probe.
    Probe,
    /// No; try again in this long.
    No(Duration),
}

/// Whether a call may go ahead, and the state after asking.
pub fn admit(state: BreakerState, now: Instant) -> (Admit, BreakerState) {
    match state {
        BreakerState::Closed { .. } => (Admit::Yes, state),
        BreakerState::Open { until } if now >= until => (Admit::Probe, BreakerState::HalfOpen),
        BreakerState::Open { until } => (Admit::No(until - now), state),
        // A probe is out; its result decides. Callers meanwhile go elsewhere.
        BreakerState::HalfOpen => (Admit::No(Duration::ZERO), state),
    }
}

/// The state after an attempt ended.
pub fn record(
    state: BreakerState,
    failed: bool,
    now: Instant,
    policy: &BreakerPolicy,
) -> BreakerState {
    let open =
        || BreakerState::Open { until: now + Duration::from_secs_f64(policy.open_secs.max(0.0)) };
    match (state, failed) {
        (_, false) => BreakerState::Closed { failures: 0 },
        (_, true) if policy.failure_threshold == 0 => BreakerState::Closed { failures: 0 },
        (BreakerState::Closed { failures }, true) if failures + 1 >= policy.failure_threshold => {
            open()
        }
        (BreakerState::Closed { failures }, true) => {
            BreakerState::Closed { failures: failures + 1 }
        }
        (BreakerState::HalfOpen, true) => open(),
        // A failure reported while open (a call admitted before it opened): stay open.
        (s @ BreakerState::Open { .. }, true) => s,
    }
}

/// The state after an attempt ended with no verdict on the provider (the caller
/// cancelled, a budget stopped it): a probe's slot is handed back.
pub fn release(state: BreakerState, now: Instant) -> BreakerState {
    match state {
        BreakerState::HalfOpen => BreakerState::Open { until: now },
        s => s,
    }
}

/// The shared, locked breaker of one provider.
#[derive(Debug)]
pub struct Breaker {
    state: Mutex<BreakerState>,
    policy: BreakerPolicy,
}

impl Breaker {
    pub fn new(policy: BreakerPolicy) -> Breaker {
        Breaker { state: Mutex::new(BreakerState::Closed { failures: 0 }), policy }
    }

    pub fn admit(&self, now: Instant) -> Admit {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (a, next) = admit(*s, now);
        *s = next;
        a
    }

    /// Records an attempt's end; returns the new state when it changed kind
    /// (closed → open, half-open → closed, ...) so the caller can log it.
    pub fn record(&self, failed: bool, now: Instant) -> Option<BreakerState> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let next = record(*s, failed, now, &self.policy);
        let changed = std::mem::discriminant(&*s) != std::mem::discriminant(&next);
        *s = next;
        changed.then_some(next)
    }

    pub fn release(&self, now: Instant) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        *s = release(*s, now);
    }

    pub fn state(&self) -> BreakerState {
        *self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transitions() {
        let t0 = Instant::now();
        let s = |n| Duration::from_secs(n);
        let policy = BreakerPolicy { failure_threshold: 3, open_secs: 10.0 };
        use BreakerState::*;
        // (state, failed, next)
        let table = [
            (Closed { failures: 0 }, true, Closed { failures: 1 }),
            (Closed { failures: 1 }, true, Closed { failures: 2 }),
            (Closed { failures: 2 }, true, Open { until: t0 + s(10) }),
            (Closed { failures: 2 }, false, Closed { failures: 0 }),
            (HalfOpen, false, Closed { failures: 0 }),
            (HalfOpen, true, Open { until: t0 + s(10) }),
            (Open { until: t0 + s(3) }, true, Open { until: t0 + s(3) }),
        ];
        for (state, failed, want) in table {
            assert_eq!(record(state, failed, t0, &policy), want, "{state:?} failed={failed}");
        }
        let off = BreakerPolicy { failure_threshold: 0, open_secs: 10.0 };
        assert_eq!(record(Closed { failures: 0 }, true, t0, &off), Closed { failures: 0 });
    }

    #[test]
    fn admission() {
        let t0 = Instant::now();
        let s = |n| Duration::from_secs(n);
        use BreakerState::*;
        assert_eq!(admit(Closed { failures: 2 }, t0), (Admit::Yes, Closed { failures: 2 }));
        assert_eq!(
            admit(Open { until: t0 + s(5) }, t0),
            (Admit::No(s(5)), Open { until: t0 + s(5) })
        );
        assert_eq!(admit(Open { until: t0 }, t0 + s(1)), (Admit::Probe, HalfOpen));
        assert_eq!(admit(HalfOpen, t0), (Admit::No(Duration::ZERO), HalfOpen));
        // a cancelled probe hands its slot back: the next caller probes
        assert_eq!(release(HalfOpen, t0), Open { until: t0 });
        assert_eq!(admit(release(HalfOpen, t0), t0), (Admit::Probe, HalfOpen));
        assert_eq!(release(Closed { failures: 1 }, t0), Closed { failures: 1 });
    }
}
