//! Times parsing + extraction alone over a tree (no database), to split index cost:
//! `cargo run --release -p code-index --example analyze_all -- DIR [THREADS]`.
#![allow(clippy::print_stdout)]

use rayon::prelude::*;

fn main() {
    let root = std::env::args().nth(1).expect("DIR");
    let files: Vec<_> = ignore::WalkBuilder::new(&root)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| code_index::Language::from_path(e.path()).map(|l| (l, e.into_path())))
        .collect();
    let t = std::time::Instant::now();
    let bytes: Vec<_> = files.iter().map(|(l, p)| (*l, std::fs::read(p).unwrap())).collect();
    println!("read {} files in {:?}", bytes.len(), t.elapsed());
    let threads: Vec<usize> = match std::env::args().nth(2) {
        Some(t) => vec![t.parse().expect("thread count")],
        None => vec![1, 2],
    };
    if std::env::var_os("PARSE_ONLY").is_some() {
        let t = std::time::Instant::now();
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&tree_sitter_python::LANGUAGE.into()).unwrap();
        let mut nodes = 0usize;
        for (l, b) in &bytes {
            if *l == code_index::Language::Python {
                let tree = parser.parse(b, None).unwrap();
                nodes += tree.root_node().descendant_count();
            }
        }
        println!("parse only (python files): {nodes} nodes in {:?}", t.elapsed());
        if let Some(q) = std::env::var_os("QUERY") {
            use streaming_iterator::StreamingIterator;
            let query =
                tree_sitter::Query::new(&tree_sitter_python::LANGUAGE.into(), q.to_str().unwrap())
                    .unwrap();
            let trees: Vec<_> = bytes
                .iter()
                .filter(|(l, _)| *l == code_index::Language::Python)
                .map(|(_, b)| (parser.parse(b, None).unwrap(), b))
                .collect();
            let t = std::time::Instant::now();
            let mut n = 0;
            let mut cursor = tree_sitter::QueryCursor::new();
            for (tree, b) in &trees {
                let mut m = cursor.matches(&query, tree.root_node(), b.as_slice());
                while m.next().is_some() {
                    n += 1;
                }
            }
            println!("query: {n} matches in {:?}", t.elapsed());
            let t = std::time::Instant::now();
            let mut k = 0usize;
            for (tree, _) in &trees {
                let mut c = tree.walk();
                'w: loop {
                    k += c.node().kind_id() as usize & 1;
                    if c.goto_first_child() {
                        continue;
                    }
                    while !c.goto_next_sibling() {
                        if !c.goto_parent() {
                            break 'w;
                        }
                    }
                }
            }
            println!("walk: {k} in {:?}", t.elapsed());
        }
        return;
    }
    for threads in threads {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let t = std::time::Instant::now();
        let (defs, refs): (usize, usize) = pool.install(|| {
            bytes
                .par_iter()
                .map(|(l, b)| {
                    let a = code_index::analyze(*l, b);
                    (a.definitions.len(), a.references.len())
                })
                .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        });
        println!("{threads} thread(s): analyze {defs} defs {refs} refs in {:?}", t.elapsed());
    }
}
