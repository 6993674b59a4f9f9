//! The execution's time limit inside a node: a model call or a command under way
//! when the limit passes is cut, and the run pauses for a human with the reason.
//!
//! The policy checks the limit before each node; that alone lets one hung model
//! call (a server that accepts the connection and never answers) keep a run with
//! `--timeout 5s` alive for minutes. So a node bounds what it waits for by the
//! same deadline: a model call through `tokio::time::timeout_at`, a sandboxed
//! command or tool call through a cancellation token the deadline fires. What
//! was spent before stays in the state.

use std::time::{Duration, Instant};

use protocol::CodingState;
use stdx::CancellationToken;

/// When this execution must stop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limit {
    started: Instant,
    seconds: u64,
}

impl Limit {
    /// The limit of the execution that started at `started`.
    pub(crate) fn of(s: &CodingState, started: Instant) -> Limit {
        Limit { started, seconds: s.settings.timeout_seconds }
    }

    /// The deadline, when there is a limit.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        (self.seconds > 0).then(|| self.started + Duration::from_secs(self.seconds))
    }

    pub(crate) fn passed(&self) -> bool {
        self.deadline().is_some_and(|d| Instant::now() >= d)
    }

    /// The pause reason once the limit has passed (the same words as the policy's).
    pub(crate) fn reason(&self, what: &str) -> String {
        format!(
            "time limit reached: this execution ran {}s (limit {}s) and {what} was cut short; \
             resume to go on",
            self.started.elapsed().as_secs(),
            self.seconds
        )
    }

    /// A token that fires when `parent` does (a Ctrl-C, a cancel) or when the
    /// deadline passes; the guard stops the timer. Check [`passed`](Self::passed)
    /// after a cancelled call to tell the two apart.
    pub(crate) fn token(
        &self,
        parent: &CancellationToken,
        rt: &tokio::runtime::Handle,
    ) -> (CancellationToken, TimerGuard) {
        let token = parent.child_token();
        let timer = self.deadline().map(|at| {
            let fire = token.clone();
            rt.spawn(async move {
                tokio::time::sleep_until(at.into()).await;
                fire.cancel();
            })
        });
        (token, TimerGuard(timer))
    }
}

/// Stops a deadline's timer when the call it bounded is over.
pub(crate) struct TimerGuard(Option<tokio::task::JoinHandle<()>>);

impl Drop for TimerGuard {
    fn drop(&mut self) {
        if let Some(t) = &self.0 {
            t.abort();
        }
    }
}
