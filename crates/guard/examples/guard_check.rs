//! What `ironbees guard check --diff FILE --json` does with no project rules,
//! without building the CLI: for scripts/bench_guard.py (`--ironbees`).
//! Usage: guard_check guard check --diff FILE --json  (exit 11 when blocked).
#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(i) = args.iter().position(|a| a == "--diff") else {
        eprintln!("usage: guard_check guard check --diff FILE --json");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&args[i + 1]).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[i + 1]);
        std::process::exit(2);
    });
    let report = guard::RuleSet::defaults().check(&guard::Change::from_unified_diff(&text));
    println!("{}", serde_json::to_string_pretty(&report).expect("a report serializes"));
    if report.blocked {
        std::process::exit(11);
    }
}
