//! Prints the tree-sitter parse tree of a file, for writing query patterns:
//! `cargo run -p code-index --example tree -- FILE [START_LINE END_LINE]`.
#![allow(clippy::print_stdout)]

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = std::path::Path::new(&args[0]);
    let lang = code_index::Language::from_path(path).expect("a known extension");
    let src = std::fs::read(path).expect("readable file");
    let range = match (args.get(1), args.get(2)) {
        (Some(a), Some(b)) => Some((a.parse::<usize>().unwrap(), b.parse::<usize>().unwrap())),
        _ => None,
    };
    print!("{}", code_index::debug_tree(lang, &src, range));
}
