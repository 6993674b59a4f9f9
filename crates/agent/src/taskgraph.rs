//! The plan as a task graph (seed 002, M0): which step waits for which, and the
//! steps in dependency order as groups that do not depend on each other. Pure
//! functions of the plan, tested as tables.
//!
//! Dependencies are the planner's (`dependsOn`) when it gives any, else rules:
//! a step follows the earlier steps on the same file, a step on a test file
//! follows the earlier steps on code, a step follows the earlier step that
//! creates a file it names, and a step with no file follows everything before
//! it. A cycle, a step that depends on itself or on a step that does not exist
//! is an error the planner gets back.
//!
//! CODE works through the graph in rounds ([`schedule`]): one coder turn per
//! group, in order, or with `parallelAgentExecution` one turn per step of a
//! group at once. The rounds are fitted to the run's budget before the human
//! sees the plan: a coder turn is estimated to cost what the planner's did, and
//! while the estimate exceeds the time or tokens left, parallel rounds become
//! serial and adjacent rounds merge, down to one turn for the whole plan (what
//! a plan cost before the graph ran). A step whose file a round left unchanged,
//! or whose parallel edit clashed with another's, has failed ([`failed_steps`],
//! [`merge_parallel`]): the planner makes the plan again, once.

use std::collections::{BTreeMap, BTreeSet};

use protocol::{ExecutionPlan, OverlayFile, PlanStep, TaskEstimate, TaskGraph, TaskRound};

use crate::validate::looks_like_test;

/// The task graph of `plan`'s steps, or why it has none.
pub(crate) fn build(plan: &ExecutionPlan) -> Result<TaskGraph, String> {
    let steps = &plan.steps;
    let numbers: BTreeSet<u32> = steps.iter().map(|s| s.number).collect();
    let given = steps.iter().any(|s| !s.depends_on.is_empty());
    let mut edges: BTreeSet<[u32; 2]> = BTreeSet::new();
    if given {
        for s in steps {
            for &d in &s.depends_on {
                if d == s.number {
                    return Err(format!("step {} depends on itself", s.number));
                }
                if !numbers.contains(&d) {
                    return Err(format!(
                        "step {} depends on step {d}, which does not exist",
                        s.number
                    ));
                }
                edges.insert([d, s.number]);
            }
        }
    } else {
        for (j, s) in steps.iter().enumerate() {
            for earlier in &steps[..j] {
                if by_rule(earlier, s) {
                    edges.insert([earlier.number, s.number]);
                }
            }
        }
    }
    let groups = levels(&numbers, &edges)?;
    Ok(TaskGraph {
        edges: edges.into_iter().collect(),
        groups,
        source: if given { "planner" } else { "rules" }.into(),
        rounds: Vec::new(),
        estimate: None,
    })
}

/// Whether `later` waits for `earlier` by the rules.
fn by_rule(earlier: &PlanStep, later: &PlanStep) -> bool {
    let (Some(a), Some(b)) = (&earlier.file_path, &later.file_path) else {
        // A step about no file in particular is ordered after what came before.
        return later.file_path.is_none();
    };
    if a == b {
        return true;
    }
    if looks_like_test(b) && !looks_like_test(a) {
        return true;
    }
    let name = a.rsplit('/').next().unwrap_or(a);
    let stem = name.split('.').next().unwrap_or(name);
    earlier.action_type == "CREATE"
        && (later.description.contains(name)
            || (stem.len() >= 4 && later.description.contains(stem)))
}

/// Kahn's algorithm by levels: each group holds the steps whose dependencies
/// are all in earlier groups, in step order; a cycle is named.
fn levels(nodes: &BTreeSet<u32>, edges: &BTreeSet<[u32; 2]>) -> Result<Vec<Vec<u32>>, String> {
    let mut waits: BTreeMap<u32, usize> = nodes.iter().map(|n| (*n, 0)).collect();
    for [_, after] in edges {
        *waits.entry(*after).or_default() += 1;
    }
    let mut groups = Vec::new();
    let mut done = 0;
    while done < nodes.len() {
        let ready: Vec<u32> = waits.iter().filter(|(_, w)| **w == 0).map(|(n, _)| *n).collect();
        if ready.is_empty() {
            let stuck: Vec<String> = waits.keys().map(u32::to_string).collect();
            return Err(format!("steps {} depend on each other in a cycle", stuck.join(", ")));
        }
        for n in &ready {
            waits.remove(n);
            for [before, after] in edges {
                if before == n
                    && let Some(w) = waits.get_mut(after)
                {
                    *w -= 1;
                }
            }
        }
        done += ready.len();
        groups.push(ready);
    }
    Ok(groups)
}

/// What one coder turn is estimated to cost (the planner's turn: its wall time
/// and tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TurnCost {
    pub(crate) ms: u64,
    pub(crate) tokens: u64,
}

/// What coding may spend, and whether a group's steps may run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) ms: u64,
    pub(crate) tokens: Option<u64>,
    pub(crate) parallel: bool,
}

/// The coding rounds for `groups` within `budget`, and their estimate. A parallel
/// round costs one turn's time and one turn's tokens per step; a serial round
/// one turn of each. Over budget, the largest parallel round becomes serial when
/// tokens are short, else the adjacent rounds with the fewest steps together
/// merge, until the estimate fits or one serial round is left.
pub(crate) fn schedule(
    groups: &[Vec<u32>],
    cost: TurnCost,
    budget: Budget,
) -> (Vec<TaskRound>, TaskEstimate) {
    let mut rounds: Vec<TaskRound> = groups
        .iter()
        .map(|g| TaskRound { steps: g.clone(), parallel: budget.parallel && g.len() > 1 })
        .collect();
    let estimate = |rounds: &[TaskRound]| {
        let ms = cost.ms * rounds.len() as u64;
        let turns: u64 =
            rounds.iter().map(|r| if r.parallel { r.steps.len() as u64 } else { 1 }).sum();
        (ms, cost.tokens * turns)
    };
    loop {
        let (ms, tokens) = estimate(&rounds);
        let time_short = ms > budget.ms;
        let tokens_short = budget.tokens.is_some_and(|b| tokens > b);
        if !time_short && !tokens_short {
            break;
        }
        let widest = (0..rounds.len())
            .filter(|&i| rounds[i].parallel)
            .max_by_key(|&i| (rounds[i].steps.len(), std::cmp::Reverse(i)));
        if let Some(i) = widest.filter(|_| tokens_short || rounds.len() == 1) {
            rounds[i].parallel = false;
            continue;
        }
        if rounds.len() < 2 {
            break;
        }
        let i = (0..rounds.len() - 1)
            .min_by_key(|&i| (rounds[i].steps.len() + rounds[i + 1].steps.len(), i))
            .unwrap_or(0);
        let next = rounds.remove(i + 1);
        rounds[i].steps.extend(next.steps);
        rounds[i].parallel = false;
    }
    let (ms, tokens) = estimate(&rounds);
    let estimate = TaskEstimate {
        turn_ms: cost.ms,
        turn_tokens: cost.tokens,
        ms,
        tokens,
        budget_ms: budget.ms,
        budget_tokens: budget.tokens,
        rounds_before: groups.len() as u32,
    };
    (rounds, estimate)
}

/// Fits `plan`'s task graph to `budget`: its rounds and their estimate.
pub(crate) fn fit(plan: &mut ExecutionPlan, cost: TurnCost, budget: Budget) {
    if let Some(g) = plan.task_graph.as_mut() {
        let (rounds, estimate) = schedule(&g.groups, cost, budget);
        g.rounds = rounds;
        g.estimate = Some(Box::new(estimate));
    }
}

/// The rounds CODE works through for `plan`: the task graph's, or one round of
/// every step for a plan without them (a human's edited plan, an old run).
pub(crate) fn rounds_of(plan: &ExecutionPlan) -> Vec<TaskRound> {
    match plan.task_graph.as_ref().filter(|g| !g.rounds.is_empty()) {
        Some(g) => g.rounds.clone(),
        None => vec![TaskRound {
            steps: plan.steps.iter().map(|s| s.number).collect(),
            parallel: false,
        }],
    }
}

fn normal(path: &str) -> &str {
    path.trim_start_matches("./")
}

fn content_of<'a>(overlay: &'a [OverlayFile], path: &str) -> Option<Option<&'a str>> {
    overlay.iter().find(|f| normal(&f.path) == normal(path)).map(|f| f.content.as_deref())
}

/// The steps of `steps` that name a file the round left as it was (`before` and
/// `after` are the overlay around the round), with why.
pub(crate) fn failed_steps(
    plan: &ExecutionPlan,
    steps: &[u32],
    before: &[OverlayFile],
    after: &[OverlayFile],
) -> Vec<(u32, String)> {
    plan.steps
        .iter()
        .filter(|s| steps.contains(&s.number))
        .filter_map(|s| {
            let file = s.file_path.as_deref()?;
            (content_of(before, file) == content_of(after, file))
                .then(|| (s.number, format!("`{file}` was left unchanged")))
        })
        .collect()
}

/// Parallel turns' overlays merged onto `base`: each turn's changed files (added,
/// edited or removed against `base`) are taken in step order; a file a second
/// turn changed differently is a clash, and that step has failed.
pub(crate) fn merge_parallel(
    base: &[OverlayFile],
    turns: &[(u32, Vec<OverlayFile>)],
) -> (Vec<OverlayFile>, Vec<(u32, String)>) {
    let mut merged = base.to_vec();
    let mut taken: BTreeMap<String, u32> = BTreeMap::new();
    let mut clashes = Vec::new();
    for (step, overlay) in turns {
        let changed: Vec<&OverlayFile> = overlay
            .iter()
            .filter(|f| content_of(base, &f.path) != Some(f.content.as_deref()))
            .collect();
        let clash = changed.iter().find_map(|f| {
            let by = taken.get(normal(&f.path))?;
            (content_of(&merged, &f.path) != Some(f.content.as_deref()))
                .then(|| format!("its edit of `{}` clashed with step {by}'s", f.path))
        });
        if let Some(reason) = clash {
            clashes.push((*step, reason));
            continue;
        }
        for f in changed {
            taken.insert(normal(&f.path).to_owned(), *step);
            match merged.iter_mut().find(|m| normal(&m.path) == normal(&f.path)) {
                Some(m) => *m = f.clone(),
                None => merged.push(f.clone()),
            }
        }
    }
    (merged, clashes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(number: u32, action: &str, file: Option<&str>, what: &str, deps: &[u32]) -> PlanStep {
        PlanStep {
            number,
            description: what.into(),
            action_type: action.into(),
            file_path: file.map(Into::into),
            rationale: None,
            depends_on: deps.to_vec(),
        }
    }

    fn graph(steps: Vec<PlanStep>) -> Result<TaskGraph, String> {
        build(&ExecutionPlan { steps, ..ExecutionPlan::default() })
    }

    #[test]
    fn rules_order_same_files_tests_after_code_and_created_files_first() {
        let cases: Vec<(Vec<PlanStep>, &str)> = vec![
            // Independent files: one group, in parallel.
            (
                vec![
                    step(1, "MODIFY", Some("a.py"), "x", &[]),
                    step(2, "MODIFY", Some("b.py"), "y", &[]),
                ],
                "1, 2",
            ),
            // The same file: in order.
            (
                vec![
                    step(1, "MODIFY", Some("a.py"), "x", &[]),
                    step(2, "MODIFY", Some("a.py"), "y", &[]),
                ],
                "1 → 2",
            ),
            // A test after the code; two code files in parallel before it.
            (
                vec![
                    step(1, "MODIFY", Some("calc.py"), "guard", &[]),
                    step(2, "MODIFY", Some("util.py"), "helper", &[]),
                    step(3, "MODIFY", Some("tests/test_calc.py"), "test it", &[]),
                ],
                "1, 2 → 3",
            ),
            // A created module before the step that imports it by name.
            (
                vec![
                    step(1, "CREATE", Some("pkg/money.py"), "the Money type", &[]),
                    step(2, "MODIFY", Some("pkg/cart.py"), "use money.Money for totals", &[]),
                    step(3, "MODIFY", Some("pkg/other.py"), "unrelated", &[]),
                ],
                "1, 3 → 2",
            ),
            // A step about no file waits for everything before it.
            (
                vec![
                    step(1, "MODIFY", Some("a.py"), "x", &[]),
                    step(2, "REFACTOR", None, "tidy up", &[]),
                ],
                "1 → 2",
            ),
        ];
        for (steps, want) in cases {
            let g = graph(steps).unwrap();
            assert_eq!(g.source, "rules");
            assert_eq!(g.order_text(), want, "{g:?}");
        }
    }

    #[test]
    fn the_planners_dependencies_win_and_are_checked() {
        let g = graph(vec![
            step(1, "MODIFY", Some("a.py"), "x", &[]),
            step(2, "MODIFY", Some("a.py"), "y", &[]),
            step(3, "MODIFY", Some("b.py"), "z", &[1]),
        ])
        .unwrap();
        assert_eq!((g.source.as_str(), g.order_text()), ("planner", "1, 2 → 3".to_owned()));
        assert_eq!(g.edges, vec![[1, 3]]);
        let errors = [
            (vec![step(1, "MODIFY", Some("a.py"), "x", &[1])], "step 1 depends on itself"),
            (vec![step(1, "MODIFY", Some("a.py"), "x", &[4])], "step 4, which does not exist"),
            (
                vec![
                    step(1, "MODIFY", Some("a.py"), "x", &[2]),
                    step(2, "MODIFY", Some("b.py"), "y", &[1]),
                    step(3, "MODIFY", Some("c.py"), "z", &[]),
                ],
                "steps 1, 2 depend on each other in a cycle",
            ),
        ];
        for (steps, want) in errors {
            let e = graph(steps).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }

    /// The rounds in the words `runs show` prints them in.
    fn rounds_text(rounds: &[TaskRound]) -> String {
        TaskGraph { rounds: rounds.to_vec(), ..TaskGraph::default() }.rounds_text()
    }

    #[test]
    fn rounds_fit_the_budget_serial_before_merged() {
        let groups = vec![vec![1, 2], vec![3], vec![4, 5, 6], vec![7]];
        let turn = TurnCost { ms: 10_000, tokens: 2_000 };
        let plenty = Budget { ms: 1_000_000, tokens: None, parallel: false };
        #[rustfmt::skip]
        let cases: Vec<(Budget, &str, (u64, u64))> = vec![
            // Room for every group: one turn each, in order.
            (plenty, "1, 2 → 3 → 4, 5, 6 → 7", (40_000, 8_000)),
            // Parallel: a group's steps at once, each its own turn's tokens.
            (Budget { parallel: true, ..plenty }, "[1 | 2] → 3 → [4 | 5 | 6] → 7", (40_000, 14_000)),
            // Tokens short: the widest parallel round goes serial first.
            (Budget { parallel: true, tokens: Some(10_000), ..plenty }, "[1 | 2] → 3 → 4, 5, 6 → 7", (40_000, 10_000)),
            // Time short: the adjacent rounds with the fewest steps merge (3 with 1, 2).
            (Budget { ms: 30_000, ..plenty }, "1, 2, 3 → 4, 5, 6 → 7", (30_000, 6_000)),
            (Budget { ms: 20_000, ..plenty }, "1, 2, 3 → 4, 5, 6, 7", (20_000, 4_000)),
            // Never below one turn, even when that does not fit.
            (Budget { ms: 1_000, ..plenty }, "1, 2, 3, 4, 5, 6, 7", (10_000, 2_000)),
            (Budget { parallel: true, tokens: Some(1), ..plenty }, "1, 2, 3, 4, 5, 6, 7", (10_000, 2_000)),
        ];
        for (budget, want, (ms, tokens)) in cases {
            let (rounds, est) = schedule(&groups, turn, budget);
            assert_eq!(rounds_text(&rounds), want, "{budget:?}");
            assert_eq!((est.ms, est.tokens, est.rounds_before), (ms, tokens, 4), "{budget:?}");
        }
        // A model that answers at once fits anything; one step is one round.
        let free = TurnCost { ms: 0, tokens: 0 };
        let (rounds, _) =
            schedule(&groups, free, Budget { ms: 0, tokens: Some(0), parallel: true });
        assert_eq!(rounds_text(&rounds), "[1 | 2] → 3 → [4 | 5 | 6] → 7");
        let (rounds, _) = schedule(&[vec![1]], turn, Budget { parallel: true, ..plenty });
        assert_eq!(rounds_text(&rounds), "1");
    }

    fn file(path: &str, content: Option<&str>) -> OverlayFile {
        OverlayFile {
            path: path.into(),
            content: content.map(Into::into),
            base_hash: None,
            base: None,
        }
    }

    #[test]
    fn a_step_whose_file_stayed_the_same_failed() {
        let plan = ExecutionPlan {
            steps: vec![
                step(1, "MODIFY", Some("a.py"), "x", &[]),
                step(2, "CREATE", Some("./b.py"), "y", &[]),
                step(3, "DELETE", Some("c.py"), "z", &[]),
                step(4, "REFACTOR", None, "tidy", &[]),
            ],
            ..ExecutionPlan::default()
        };
        let before = vec![file("a.py", Some("old"))];
        #[rustfmt::skip]
        let cases: Vec<(Vec<OverlayFile>, Vec<u32>)> = vec![
            (vec![file("a.py", Some("new")), file("b.py", Some("b")), file("c.py", None)], vec![]),
            // a.py edited back to what it was, b.py never made, c.py untouched.
            (vec![file("a.py", Some("old"))], vec![1, 2, 3]),
            (vec![file("a.py", Some("new")), file("c.py", None)], vec![2]),
        ];
        for (after, want) in cases {
            let failed: Vec<u32> = failed_steps(&plan, &[1, 2, 3, 4], &before, &after)
                .into_iter()
                .map(|(n, _)| n)
                .collect();
            assert_eq!(failed, want, "{after:?}");
        }
        // Only the round's steps are judged.
        assert!(failed_steps(&plan, &[4], &before, &before).is_empty());
    }

    #[test]
    fn parallel_turns_merge_unless_they_clash() {
        let base = vec![file("a.py", Some("a0"))];
        let turns = vec![
            (1, vec![file("a.py", Some("a1"))]),
            (2, vec![file("a.py", Some("a0")), file("b.py", Some("b1"))]),
            // Step 3 edits a.py too, differently: it clashes and none of it is taken.
            (3, vec![file("a.py", Some("a3")), file("c.py", Some("c3"))]),
            // Step 4 made the same edit as step 1: no clash.
            (4, vec![file("a.py", Some("a1")), file("d.py", Some("d4"))]),
        ];
        let (merged, clashes) = merge_parallel(&base, &turns);
        let got: Vec<(&str, Option<&str>)> =
            merged.iter().map(|f| (f.path.as_str(), f.content.as_deref())).collect();
        assert_eq!(got, vec![("a.py", Some("a1")), ("b.py", Some("b1")), ("d.py", Some("d4"))]);
        assert_eq!(clashes.len(), 1);
        assert_eq!(clashes[0].0, 3);
        assert!(clashes[0].1.contains("clashed with step 1"), "{:?}", clashes[0]);
    }

    #[test]
    fn no_steps_no_groups() {
        assert_eq!(graph(vec![]).unwrap().groups, Vec::<Vec<u32>>::new());
    }
}
