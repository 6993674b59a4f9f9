//! Times loading the project snapshot and building its graphs:
//! `cargo run --release -p code-graph --example snapshot -- DIR`.
#![allow(clippy::print_stdout)]

fn main() {
    let root = std::env::args().nth(1).expect("DIR");
    let index =
        code_index::Index::open(std::path::Path::new(&root), code_index::IndexConfig::default())
            .unwrap();
    let t = std::time::Instant::now();
    let snap = code_graph::Snapshot::load(&index).unwrap();
    let edges = snap.graphs.symbol_edges().len();
    println!(
        "snapshot: {} files, {edges} symbol edges in {:?}",
        snap.project.files.len(),
        t.elapsed()
    );
    let mut top: Vec<(usize, f64)> = snap.file_rank.iter().copied().enumerate().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (f, r) in top.iter().take(10) {
        println!("{r:.5} {}", snap.project.files[*f].path);
    }
}
