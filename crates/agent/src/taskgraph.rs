//! The plan as a task graph (seed 002, M0): which step waits for which, and the
//! steps in dependency order as groups that do not depend on each other. Pure
//! functions of the plan, tested as tables.
//!
//! Dependencies are the planner's (`dependsOn`) when it gives any, else rules:
//! a step follows the earlier steps on the same file, a step on a test file
//! follows the earlier steps on code, a step follows the earlier step that
//! creates a file it names, and a step with no file follows everything before
//! it. A cycle, a step that depends on itself or on a step that does not exist
//! is an error the planner gets back. The steps are still coded in one
//! coder round, in this order (the graph is in the plan the coder reads);
//! running groups in parallel and replanning after a failed step are not built.

use std::collections::{BTreeMap, BTreeSet};

use protocol::{ExecutionPlan, PlanStep, TaskGraph};

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

    #[test]
    fn no_steps_no_groups() {
        assert_eq!(graph(vec![]).unwrap().groups, Vec::<Vec<u32>>::new());
    }
}
