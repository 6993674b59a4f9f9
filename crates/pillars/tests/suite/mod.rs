mod budget;
mod change;
mod dependents;
mod navigate;

use std::sync::atomic::AtomicBool;

use pillars::{Call, NoProgress, Workspace, WorkspaceOptions};
use test_support::TempProject;

/// A workspace that checks the files on every call (no watcher thread).
pub(crate) fn open(p: &TempProject) -> Workspace {
    std::fs::create_dir_all(p.path(".git")).unwrap();
    Workspace::open(p.root(), WorkspaceOptions { watch: false, ..Default::default() }).unwrap()
}

/// Runs `f` with a fresh `Call` (no progress, never cancelled).
pub(crate) fn call<T>(f: impl FnOnce(&Call<'_>) -> T) -> T {
    let cancel = AtomicBool::new(false);
    f(&Call::new(&NoProgress, &cancel))
}
