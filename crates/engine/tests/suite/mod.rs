mod budget;
mod change;
mod dependents;
mod navigate;
mod shadow;

use engine::{Call, CancellationToken, NoProgress, Session, SessionOptions};
use test_support::TempProject;

/// A session that checks the files on every call (no watcher thread).
pub(crate) fn open(p: &TempProject) -> Session {
    std::fs::create_dir_all(p.path(".git")).unwrap();
    Session::open(p.root(), SessionOptions { watch: false, ..Default::default() }).unwrap()
}

/// Runs `f` with a fresh `Call` (no progress, never cancelled).
pub(crate) fn call<T>(f: impl FnOnce(&Call<'_>) -> T) -> T {
    let cancel = CancellationToken::new();
    f(&Call::new(&NoProgress, &cancel))
}
