//! The sandbox helper as its own executable, for this crate's tests and for embedding
//! programs other than `ironbees` (which answers to the same arguments itself).
fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).and_then(|a| a.to_str()) == Some(sandbox::HELPER_ARG) {
        std::process::exit(sandbox::helper_main(&args[2..]));
    }
    std::process::exit(2);
}
