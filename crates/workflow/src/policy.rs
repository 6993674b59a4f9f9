//! Policies: decisions taken before each node, as pure functions returning an enum
//! (budgets, loop detection, guardrails). The execution's own limits (`timeout`,
//! `max_steps` of `RunOptions`) are one more such function, [`limits`].

use std::time::Duration;

/// What a policy sees besides the node and the state.
#[derive(Debug, Clone)]
pub struct RunInfo<'a> {
    pub run_id: &'a str,
    /// The run's kind, as given to `start`.
    pub kind: &'a str,
    /// When the run was created (ms since the Unix epoch): a budget over the run's
    /// whole life starts here.
    pub created_ms: i64,
    /// Nodes run by this execution (this `start` or `resume` call) so far.
    pub steps: u32,
    /// Time since this execution began.
    pub elapsed: Duration,
}

/// A policy's answer before a node runs.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyDecision<S> {
    /// Run the node.
    Proceed,
    /// Run `to` instead, from `state` (e.g. to WAIT_HUMAN when a budget is spent);
    /// `to` must be declared with `Graph::add_divert_target`, or the run fails.
    /// Checkpointed, with a `diverted` event carrying the reason. A divert to the
    /// node about to run is a `Proceed` with `state`, so a policy that keeps
    /// answering "go to WAIT_HUMAN" does not loop there.
    Divert { to: String, state: S, reason: String },
    /// Stop and wait at this node, as if it had interrupted; `resume` asks the
    /// policies again.
    Pause { reason: String },
}

/// A decision taken before every node. Policies are asked in the order they were
/// added; the first answer that is not `Proceed` wins.
pub trait Policy<S>: Send + Sync {
    fn before_node(&self, node: &str, state: &S, run: &RunInfo<'_>) -> PolicyDecision<S>;
}

impl<S, F> Policy<S> for F
where
    F: Fn(&str, &S, &RunInfo<'_>) -> PolicyDecision<S> + Send + Sync,
{
    fn before_node(&self, node: &str, state: &S, run: &RunInfo<'_>) -> PolicyDecision<S> {
        self(node, state, run)
    }
}

/// The execution's limits: a pause once `timeout` has passed or `max_steps` nodes
/// have run in this execution. Neither is a failure: no work is lost, and the run
/// waits at the node it would have run next.
pub(crate) fn limits(
    timeout: Option<Duration>,
    max_steps: Option<u32>,
    run: &RunInfo<'_>,
) -> Option<String> {
    if let Some(t) = timeout.filter(|t| run.elapsed >= *t) {
        return Some(format!("time limit of {t:?} reached in this execution"));
    }
    if let Some(n) = max_steps.filter(|n| run.steps >= *n) {
        return Some(format!("step limit reached: {n} nodes run in this execution"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_pause_at_the_first_node_past_them() {
        let s = Duration::from_secs;
        let cases = [
            // timeout, max_steps, elapsed, steps, paused because
            (None, None, s(100), 100, None),
            (Some(s(10)), None, s(9), 0, None),
            (Some(s(10)), None, s(10), 0, Some("time limit of 10s reached in this execution")),
            (None, Some(3), s(0), 2, None),
            (None, Some(3), s(0), 3, Some("step limit reached: 3 nodes run in this execution")),
            (None, Some(0), s(0), 0, Some("step limit reached: 0 nodes run in this execution")),
            (Some(s(1)), Some(1), s(5), 5, Some("time limit of 1s reached in this execution")),
        ];
        for (timeout, max_steps, elapsed, steps, want) in cases {
            let run = RunInfo { run_id: "r", kind: "k", created_ms: 0, steps, elapsed };
            assert_eq!(
                limits(timeout, max_steps, &run).as_deref(),
                want,
                "{timeout:?} {max_steps:?} {elapsed:?} {steps}"
            );
        }
    }
}
