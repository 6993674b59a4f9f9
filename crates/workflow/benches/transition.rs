//! What one transition costs: from a node's start to the next node's start, with
//! the node itself doing nothing, so what is measured is the engine (cancel check,
//! policies, the `nodeStarted` event, routing, serializing a ~2 KB state, the
//! checkpoint + event commit in SQLite, WAL, `synchronous=NORMAL`).
//!
//! One run loops a node over itself; the event sink timestamps each `nodeStarted`.
//! Prints p50/p90/p99 over all transitions of several runs, on a temporary
//! directory in the current directory (the disk, not a tmpfs).
//!
//! Run: `cargo bench -p workflow --bench transition`
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use protocol::{RunEvent, RunEventKind, RunStatus};
use serde::{Deserialize, Serialize};
use workflow::{
    END, Graph, NodeContext, NodeOutcome, RunOptions, Runner, SqliteStore, WorkflowState,
};

const RUNS: usize = 4;
const PER_RUN: u32 = 1000;

#[derive(Clone, Serialize, Deserialize)]
struct State {
    round: u32,
    task: String,
    files: Vec<String>,
    notes: BTreeMap<String, String>,
}

impl WorkflowState for State {
    fn iteration(&self) -> u32 {
        self.round
    }
}

fn state() -> State {
    State {
        round: 0,
        task: "Fix the off-by-one in the pagination of the search results page. ".repeat(4),
        files: (0..20).map(|i| format!("src/module_{i}/component_{i}.rs")).collect(),
        notes: (0..24)
            .map(|i| (format!("note{i}"), format!("observation number {i} about the code")))
            .collect(),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let size = serde_json::to_string(&state()).unwrap().len();
    let mut g = Graph::new();
    g.add_node("STEP", |mut s: State, _: &mut NodeContext<'_>| {
        s.round += 1;
        Ok(NodeOutcome::Continue(s))
    })
    .add_conditional_edges(
        "STEP",
        &["STEP", END],
        |s: &State| {
            if s.round < PER_RUN { "STEP" } else { END }
        },
    )
    .set_entry("STEP");
    let graph = Arc::new(g.build().unwrap());
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let store = Arc::new(SqliteStore::open(dir.path()).unwrap());

    let starts = Arc::new(Mutex::new(Vec::<Instant>::with_capacity(RUNS * PER_RUN as usize)));
    let sink = starts.clone();
    let runner = Runner::new(graph, store).with_events(Arc::new(move |e: &RunEvent| {
        if let RunEventKind::NodeStarted { .. } = e.kind {
            sink.lock().unwrap().push(Instant::now());
        }
    }));
    let mut gaps = Vec::new();
    let t = Instant::now();
    for run in 0..RUNS {
        starts.lock().unwrap().clear();
        let report =
            runner.start(Some(&format!("bench-{run}")), "bench", state(), RunOptions::default());
        assert_eq!(report.unwrap().status, RunStatus::Succeeded);
        let s = starts.lock().unwrap();
        gaps.extend(s.windows(2).map(|w| w[1] - w[0]));
    }
    let total = t.elapsed();
    gaps.sort();
    let n = gaps.len();
    println!(
        "state: {size} bytes of JSON; {RUNS} runs x {PER_RUN} transitions; {}",
        dir.path().display()
    );
    println!(
        "per transition: p50 {:?}  p90 {:?}  p99 {:?}  max {:?}",
        percentile(&gaps, 0.5),
        percentile(&gaps, 0.9),
        percentile(&gaps, 0.99),
        gaps[n - 1]
    );
    println!(
        "{n} transitions measured; {:.0} transitions/s overall (run creation included)",
        (RUNS as f64 * PER_RUN as f64) / total.as_secs_f64()
    );
    println!(
        "workflow.db: {} KiB",
        std::fs::metadata(dir.path().join("workflow.db")).map_or(0, |m| m.len() / 1024)
    );
}
