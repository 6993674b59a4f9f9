//! What a journaled transaction costs next to writing the files directly.
//!
//! Side by side, interleaved, on the same disk: for 1 and for 10 files of 4 KiB,
//! (a) `std::fs::write` (no durability), (b) `stdx::atomic_write` per file (temp
//! file, fsync, rename, directory fsync: what a careful editor does), and (c)
//! `Engine::apply` of one request replacing one line in each file (blobs, journal,
//! atomic writes, history commit, pruning). Prints per-transaction medians and the
//! ratio of (c) to (b).
//!
//! Run: `cargo bench -p edit --bench overhead`
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::{path::Path, time::Instant};

use edit::{Engine, EngineOptions};
use protocol::EditRequest;

const ROUNDS: usize = 5;
const PER_ROUND: usize = 20;

fn content(i: usize, v: usize) -> String {
    let mut s = format!("version {v} of file {i}\n");
    while s.len() < 4096 {
        s.push_str("some ordinary line of source text in this file\n");
    }
    s
}

fn request(files: usize, v: usize) -> EditRequest {
    let edits: Vec<serde_json::Value> = (0..files)
        .map(|i| {
            serde_json::json!({"op": "replace", "path": format!("f{i}.txt"),
                "targetString": format!("version {v} of file {i}\n"),
                "replacementString": format!("version {} of file {i}\n", v + 1)})
        })
        .collect();
    serde_json::from_value(serde_json::json!({ "edits": edits })).unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn setup(root: &Path, files: usize) {
    for i in 0..files {
        std::fs::write(root.join(format!("f{i}.txt")), content(i, 0)).unwrap();
    }
}

fn main() {
    println!("| files | fs::write | atomic_write (fsync) | Engine::apply | apply / atomic_write |");
    println!("| --- | --- | --- | --- | --- |");
    for files in [1usize, 10] {
        let (mut plain, mut atomic, mut engine_t) = (Vec::new(), Vec::new(), Vec::new());
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let (a, b, c) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
        for d in [&a, &b, &c] {
            std::fs::create_dir_all(d).unwrap();
            setup(d, files);
        }
        let mut engine = Engine::open(&c, EngineOptions::default()).unwrap();
        let mut v = 0;
        for _ in 0..ROUNDS {
            for _ in 0..PER_ROUND {
                let t = Instant::now();
                for i in 0..files {
                    std::fs::write(a.join(format!("f{i}.txt")), content(i, v + 1)).unwrap();
                }
                plain.push(t.elapsed().as_secs_f64());
                let t = Instant::now();
                for i in 0..files {
                    stdx::atomic_write(&b.join(format!("f{i}.txt")), content(i, v + 1).as_bytes())
                        .unwrap();
                }
                atomic.push(t.elapsed().as_secs_f64());
                let req = request(files, v);
                let t = Instant::now();
                engine.apply(&req).unwrap();
                engine_t.push(t.elapsed().as_secs_f64());
                v += 1;
            }
        }
        let (p, at, e) = (median(plain), median(atomic), median(engine_t));
        println!(
            "| {files} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2}x |",
            p * 1e3,
            at * 1e3,
            e * 1e3,
            e / at
        );
    }
}
