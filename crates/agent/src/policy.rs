//! The run's decisions, as pure functions of its state, tested as tables: where
//! DECIDE goes, when a run must stop for a human (budget, time, a loop), and what
//! counts as the same failure or the same tool call twice.
//!
//! None of them kills a run: a limit reached sends it to WAIT_HUMAN with the
//! reason, its overlay and history intact, and a human decides what next.

use std::time::Duration;

use protocol::{CodingState, nodes};

/// Where DECIDE sends the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// Validation passed: apply (or, with `--review`, show the diff first).
    Pass,
    /// Validation failed and rounds are left: CODE again with the error context.
    Retry,
    /// Rounds used up, or the same failure over and over: a human decides.
    Escalate(String),
}

/// Same failure this many validations in a row: the coder is not getting
/// anywhere, and more rounds would only spend money.
pub(crate) const SAME_FAILURE_LIMIT: usize = 3;

/// The same tool call with the same answer this many times in one agent turn is a
/// loop: the model is not learning anything from the repetition.
pub(crate) const SAME_CALL_LIMIT: usize = 3;

/// DECIDE, from the validation's outcome (`passed`), the rounds done and allowed,
/// and the fingerprints of the failures so far (newest last).
pub(crate) fn decide(
    passed: bool,
    iteration: u32,
    max_iterations: u32,
    failures: &[String],
) -> Route {
    if passed {
        return Route::Pass;
    }
    if let Some(last) = failures.last()
        && failures.len() >= SAME_FAILURE_LIMIT
        && failures[failures.len() - SAME_FAILURE_LIMIT..].iter().all(|f| f == last)
    {
        return Route::Escalate(format!(
            "the same failure {SAME_FAILURE_LIMIT} validations in a row: the coder is not \
             making progress"
        ));
    }
    if iteration >= max_iterations {
        return Route::Escalate(format!(
            "{max_iterations} rounds of coding did not make validation pass"
        ));
    }
    Route::Retry
}

/// Why the run must stop for a human before `node`, if it must: a pause a node
/// asked for (a loop, a budget hit mid-call, a call the time limit cut), the USD
/// or token budget spent, or the execution's time limit passed. Asked before the
/// nodes that spend money or time (and DECIDE, for a node's pause); the gates and
/// the final apply always run.
pub(crate) fn pause_before(node: &str, state: &CodingState, elapsed: Duration) -> Option<String> {
    // A pause a node asked for (its call was cut by the time limit, a loop) also
    // stops DECIDE, which would otherwise judge a validation that did not finish.
    if let Some(r) = &state.pause_reason
        && [nodes::PLAN, nodes::BASELINE, nodes::CODE, nodes::VALIDATE, nodes::DECIDE]
            .contains(&node)
    {
        return Some(r.clone());
    }
    if ![nodes::PLAN, nodes::BASELINE, nodes::CODE, nodes::VALIDATE].contains(&node) {
        return None;
    }
    over_budget(state).or_else(|| {
        let limit = state.settings.timeout_seconds;
        (limit > 0 && elapsed >= Duration::from_secs(limit)).then(|| {
            format!(
                "time limit reached: this execution ran {}s (limit {limit}s); resume to go on",
                elapsed.as_secs()
            )
        })
    })
}

/// The run's budget, if spent.
pub(crate) fn over_budget(state: &CodingState) -> Option<String> {
    let spend = &state.spend;
    if let Some(b) = state.settings.budget_usd
        && spend.cost_usd >= b
    {
        return Some(format!(
            "budget spent: ${:.4} of ${b:.4} (raise it with `runs approve ID --budget-usd N`)",
            spend.cost_usd
        ));
    }
    let tokens = spend.input_tokens + spend.output_tokens;
    if let Some(b) = state.settings.budget_tokens
        && tokens >= b
    {
        return Some(format!("token budget spent: {tokens} of {b} tokens"));
    }
    None
}

/// Counts tool calls by fingerprint within one agent turn.
#[derive(Debug, Default)]
pub(crate) struct LoopDetector {
    seen: std::collections::HashMap<u64, usize>,
}

impl LoopDetector {
    /// Records a call (tool, arguments, answer); the reason when it is the
    /// [`SAME_CALL_LIMIT`]th identical one.
    pub(crate) fn record(&mut self, tool: &str, arguments: &str, answer: &str) -> Option<String> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (tool, arguments, answer).hash(&mut h);
        let n = self.seen.entry(h.finish()).or_default();
        *n += 1;
        (*n >= SAME_CALL_LIMIT).then(|| {
            format!(
                "loop detected: `{tool}` was called {n} times with the same arguments and got \
                 the same answer ({})",
                stdx::clip(arguments, 200)
            )
        })
    }
}

/// A failure's fingerprint: what failed, without the numbers that change from
/// run to run (durations, pids, ports), so the same failure compares equal.
pub(crate) fn failure_fingerprint(summary: &str) -> String {
    let mut out = String::with_capacity(summary.len());
    let mut digits = false;
    for c in summary.chars() {
        if c.is_ascii_digit() {
            if !digits {
                out.push('#');
            }
            digits = true;
        } else {
            digits = false;
            out.push(c);
        }
    }
    stdx::sha256_hex(out.as_bytes())[..16].to_owned()
}

#[cfg(test)]
mod tests {
    use protocol::{RunSettings, RunSpend};

    use super::*;

    #[test]
    fn decide_routes() {
        let f = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cases: &[(bool, u32, u32, Vec<String>, Route)] = &[
            (true, 1, 5, f(&[]), Route::Pass),
            (true, 5, 5, f(&["a", "a", "a"]), Route::Pass),
            (false, 1, 5, f(&["a"]), Route::Retry),
            (false, 4, 5, f(&["a", "b", "a", "b"]), Route::Retry),
            (false, 2, 5, f(&["a", "a"]), Route::Retry),
            (
                false,
                5,
                5,
                f(&["a", "b", "c", "d", "e"]),
                Route::Escalate("5 rounds of coding did not make validation pass".into()),
            ),
            (
                false,
                3,
                5,
                f(&["x", "a", "a", "a"]),
                Route::Escalate(
                    "the same failure 3 validations in a row: the coder is not making progress"
                        .into(),
                ),
            ),
            (
                false,
                0,
                0,
                f(&[]),
                Route::Escalate("0 rounds of coding did not make validation pass".into()),
            ),
        ];
        for (passed, it, max, failures, want) in cases {
            assert_eq!(
                &decide(*passed, *it, *max, failures),
                want,
                "{passed} {it}/{max} {failures:?}"
            );
        }
    }

    #[test]
    fn pauses_before_spending_nodes_only() {
        let state =
            |usd: Option<f64>, tokens: Option<u64>, spent: f64, used: u64, paused: Option<&str>| {
                let mut s = CodingState::new(
                    "r",
                    "req",
                    RunSettings {
                        budget_usd: usd,
                        budget_tokens: tokens,
                        timeout_seconds: 300,
                        ..RunSettings::default()
                    },
                );
                s.spend = RunSpend {
                    cost_usd: spent,
                    input_tokens: used,
                    output_tokens: 0,
                    ..RunSpend::default()
                };
                s.pause_reason = paused.map(str::to_owned);
                s
            };
        let secs = Duration::from_secs;
        let cases = [
            // node, state, elapsed, paused because
            (nodes::CODE, state(None, None, 9.0, 9, None), secs(1), None),
            (nodes::CODE, state(Some(1.0), None, 0.99, 0, None), secs(1), None),
            (
                nodes::CODE,
                state(Some(1.0), None, 1.0, 0, None),
                secs(1),
                Some(
                    "budget spent: $1.0000 of $1.0000 (raise it with `runs approve ID --budget-usd N`)",
                ),
            ),
            (nodes::SUCCESS, state(Some(1.0), None, 5.0, 0, None), secs(1), None),
            (nodes::WAIT_HUMAN, state(Some(1.0), None, 5.0, 0, Some("loop")), secs(999), None),
            (
                nodes::PLAN,
                state(None, Some(100), 0.0, 100, None),
                secs(1),
                Some("token budget spent: 100 of 100 tokens"),
            ),
            (
                nodes::VALIDATE,
                state(None, None, 0.0, 0, Some("loop detected")),
                secs(1),
                Some("loop detected"),
            ),
            (
                nodes::CODE,
                state(None, None, 0.0, 0, None),
                secs(300),
                Some("time limit reached: this execution ran 300s (limit 300s); resume to go on"),
            ),
            (nodes::DECIDE, state(None, None, 0.0, 0, None), secs(301), None),
            (
                nodes::DECIDE,
                state(None, None, 0.0, 0, Some("time limit reached")),
                secs(1),
                Some("time limit reached"),
            ),
            (
                nodes::BASELINE,
                state(None, None, 0.0, 0, None),
                secs(300),
                Some("time limit reached: this execution ran 300s (limit 300s); resume to go on"),
            ),
        ];
        for (node, s, elapsed, want) in cases {
            assert_eq!(pause_before(node, &s, elapsed).as_deref(), want, "{node} {elapsed:?}");
        }
    }

    #[test]
    fn the_third_identical_call_is_a_loop() {
        let mut d = LoopDetector::default();
        assert_eq!(d.record("read", "{\"target\":\"a.py\"}", "x"), None);
        assert_eq!(d.record("read", "{\"target\":\"a.py\"}", "y"), None, "another answer");
        assert_eq!(d.record("read", "{\"target\":\"b.py\"}", "x"), None, "other arguments");
        assert_eq!(d.record("read", "{\"target\":\"a.py\"}", "x"), None);
        let third = d.record("read", "{\"target\":\"a.py\"}", "x").unwrap();
        assert!(third.starts_with("loop detected: `read` was called 3 times"), "{third}");
    }

    #[test]
    fn failures_compare_without_their_numbers() {
        let a = failure_fingerprint("test_div failed: ZeroDivisionError in 0.03s (pid 4411)");
        let b = failure_fingerprint("test_div failed: ZeroDivisionError in 0.15s (pid 4523)");
        let c = failure_fingerprint("test_add failed: assert 3 == 4");
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
