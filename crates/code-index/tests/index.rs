//! The index as a user sees it: incremental updates, bad input, cancellation and
//! concurrent readers, on real temporary directories.

use std::time::{Duration, SystemTime};

use code_index::{
    Call, CancellationToken, Index, IndexConfig, NoProgress, Progress, SymbolQuery, UpdateReport,
};
use protocol::{ErrorCode, SymbolKind};
use test_support::TempProject;

fn update(index: &mut Index) -> UpdateReport {
    index.update(&Call::new(&NoProgress, &CancellationToken::new())).expect("update")
}

fn names(index: &Index, file: Option<&str>) -> Vec<String> {
    let q = SymbolQuery { file: file.map(str::to_owned), ..Default::default() };
    index
        .symbols(&q)
        .unwrap()
        .into_iter()
        .map(|s| format!("{}:{}", s.path, s.qualified_name))
        .collect()
}

fn project() -> TempProject {
    TempProject::with_fixture(
        r#"
        //- src/app.py
        class App:
            def run(self):
                return helper()

        def helper():
            return 1
        //- src/lib.rs
        pub struct Config;
        impl Config { pub fn load() -> Self { Config } }
        //- web/main.ts
        export function main(): void {}
        //- README.md
        # readme
        "#,
    )
}

#[test]
fn second_run_reparses_only_what_changed() {
    let p = project();
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    let first = update(&mut index);
    assert_eq!((first.added, first.parsed, first.unchanged), (3, 3, 0));
    assert_eq!(
        names(&index, None),
        [
            "src/app.py:App",
            "src/app.py:App.run",
            "src/app.py:helper",
            "src/lib.rs:Config",
            "src/lib.rs:Config::load",
            "web/main.ts:main"
        ]
    );

    // README.md is skipped (unknown language), and unchanged too.
    let again = update(&mut index);
    assert_eq!((again.parsed, again.unchanged, again.added, again.modified), (0, 4, 0, 0));

    p.write("src/app.py", "def helper():\n    return 2\n\ndef extra():\n    pass\n");
    let changed = update(&mut index);
    assert_eq!((changed.parsed, changed.modified, changed.unchanged), (1, 1, 3));
    assert_eq!(names(&index, Some("src/app.py")), ["src/app.py:helper", "src/app.py:extra"]);
}

#[test]
fn touching_a_file_rehashes_but_does_not_reparse() {
    let p = project();
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    let f = std::fs::File::options().write(true).open(p.path("src/lib.rs")).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(5)).unwrap();
    let r = update(&mut index);
    assert_eq!((r.parsed, r.modified, r.reused), (0, 0, 0));
    assert_eq!(r.unchanged, 4);
}

/// Status says what the next update would find: a file rewritten with the bytes
/// the index has (an undo, a rolled-back edit) is not modified however its time
/// moved, and an edit is modified even when it kept size and time (issue 32.8:
/// 108 files "modified" after a rolled-back edit, then `index` parsed none).
#[test]
fn status_calls_modified_only_what_the_update_would_reindex() {
    let later = |p: &TempProject| {
        let f = std::fs::File::options().write(true).open(p.path("a.py")).unwrap();
        f.set_modified(SystemTime::now() + Duration::from_secs(5)).unwrap();
    };
    type Case = (&'static str, &'static str, bool, u64);
    // (what happened, the new content, a later mtime, modified)
    let cases: &[Case] = &[
        ("rewritten with the same bytes", "def one(): pass\n", true, 0),
        ("touched", "", true, 0),
        ("same size, other bytes, later", "def two(): pass\n", true, 1),
        ("same size and time, other bytes", "def two(): pass\n", false, 1),
        ("other size", "def three(): pass\n", true, 1),
    ];
    for (what, content, move_time, modified) in cases {
        let p = TempProject::with_fixture("//- a.py\ndef one(): pass\n");
        let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
        update(&mut index);
        let mtime = std::fs::metadata(p.path("a.py")).unwrap().modified().unwrap();
        if !content.is_empty() {
            p.write("a.py", *content);
        }
        if *move_time {
            later(&p);
        } else {
            let f = std::fs::File::options().write(true).open(p.path("a.py")).unwrap();
            f.set_modified(mtime).unwrap();
        }
        let stale = index.status().unwrap().stale.unwrap();
        assert_eq!(stale.modified, *modified, "{what}: {stale:?}");
        assert_eq!(update(&mut index).modified, *modified, "{what}: the update agrees");
    }
}

#[test]
fn renames_and_copies_reuse_stored_content() {
    let p = project();
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    std::fs::rename(p.path("src/app.py"), p.path("src/moved.py")).unwrap();
    std::fs::copy(p.path("src/lib.rs"), p.path("src/copy.rs")).unwrap();
    let r = update(&mut index);
    assert_eq!((r.parsed, r.reused, r.added, r.deleted), (0, 2, 2, 1));
    let all = names(&index, None);
    assert!(all.contains(&"src/moved.py:App.run".to_owned()), "{all:?}");
    assert!(all.contains(&"src/copy.rs:Config::load".to_owned()), "{all:?}");
    assert!(!all.iter().any(|n| n.starts_with("src/app.py")), "{all:?}");
}

#[test]
fn deleted_files_leave_the_index() {
    let p = project();
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    std::fs::remove_file(p.path("web/main.ts")).unwrap();
    let r = update(&mut index);
    assert_eq!(r.deleted, 1);
    assert!(names(&index, Some("web/")).is_empty());
    assert_eq!(index.status().unwrap().files, 2);
}

#[test]
fn same_size_same_time_edit_is_caught_by_the_racy_window() {
    // An edit that keeps size and modification time (a coarse clock, or a tool that
    // restores mtimes) right after an update must still be seen.
    let p = TempProject::with_fixture("//- a.py\ndef one(): pass\n");
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    let mtime = std::fs::metadata(p.path("a.py")).unwrap().modified().unwrap();
    p.write("a.py", "def two(): pass\n");
    std::fs::File::options().write(true).open(p.path("a.py")).unwrap().set_modified(mtime).unwrap();
    let r = update(&mut index);
    assert_eq!(r.modified, 1);
    assert_eq!(names(&index, None), ["a.py:two"]);
}

#[test]
fn gitignore_ignore_files_and_excludes_are_respected() {
    let p = TempProject::with_fixture(
        r#"
        //- .gitignore
        build/
        //- .ignore
        gen_*.py
        //- .ironbeesignore
        legacy/
        //- build/out.py
        def built(): pass
        //- gen_a.py
        def generated(): pass
        //- legacy/old.py
        def old(): pass
        //- vendor/dep.py
        def dep(): pass
        //- keep.py
        def keep(): pass
        "#,
    );
    let cfg = IndexConfig { exclude: vec!["vendor/".to_owned()], ..IndexConfig::default() };
    let mut index = Index::open(p.root(), cfg).unwrap();
    update(&mut index);
    assert_eq!(names(&index, None), ["keep.py:keep"]);
}

#[test]
fn bad_exclude_glob_is_an_invalid_argument() {
    let p = project();
    let cfg = IndexConfig { exclude: vec!["a/{b".to_owned()], ..IndexConfig::default() };
    let mut index = Index::open(p.root(), cfg).unwrap();
    let err = index.update(&Call::new(&NoProgress, &CancellationToken::new())).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert!(err.to_string().contains("a/{b"), "{err}");
}

fn skipped(index: &Index) -> Vec<(ErrorCode, String)> {
    let mut out: Vec<(ErrorCode, String)> = index
        .status()
        .unwrap()
        .skipped
        .into_iter()
        .flat_map(|g| g.examples.into_iter().map(|e| (e.code, e.path)))
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

/// Sets a file's mtime an hour back, as for a file that was not just written.
fn age(p: &TempProject, rel: &str) {
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(p.path(rel)).unwrap().set_modified(hour_ago).unwrap();
}

#[test]
fn bad_files_are_skipped_with_a_code_and_the_rest_is_indexed() {
    let p = project();
    p.write("bin/blob.py", b"def x():\0\0\0 pass\n");
    p.write("big/huge.py", format!("X = '{}'\n", "a".repeat(5000)));
    // An hour old: out of the racy window, so an unchanged file is not re-read.
    age(&p, "big/huge.py");
    let cfg = IndexConfig { max_file_size: 1000, ..IndexConfig::default() };
    let mut index = Index::open(p.root(), cfg).unwrap();
    update(&mut index);
    assert_eq!(
        skipped(&index),
        [
            (ErrorCode::UnknownLanguage, "README.md".to_owned()),
            (ErrorCode::FileTooLarge, "big/huge.py".to_owned()),
            (ErrorCode::BinaryFile, "bin/blob.py".to_owned()),
        ]
    );
    // The good files are all there.
    assert_eq!(index.status().unwrap().files, 3);
    // A skipped file that becomes valid is indexed on the next run.
    p.write("bin/blob.py", "def now_text(): pass\n");
    update(&mut index);
    assert_eq!(names(&index, Some("bin/blob.py")), ["bin/blob.py:now_text"]);
    assert!(!skipped(&index).iter().any(|(_, p)| p == "bin/blob.py"));
    // Raising the limit indexes the large file without it changing.
    let cfg = IndexConfig { max_file_size: 1 << 20, ..IndexConfig::default() };
    let mut index = Index::open(p.root(), cfg).unwrap();
    update(&mut index);
    assert_eq!(names(&index, Some("big/huge.py")), ["big/huge.py:X"]);
    // Lowering it again skips the file, though it did not change.
    let cfg = IndexConfig { max_file_size: 1000, ..IndexConfig::default() };
    let mut index = Index::open(p.root(), cfg).unwrap();
    update(&mut index);
    assert!(names(&index, Some("big/huge.py")).is_empty());
    assert!(skipped(&index).contains(&(ErrorCode::FileTooLarge, "big/huge.py".to_owned())));
}

#[test]
fn minified_javascript_is_skipped_unless_asked_for() {
    let p = project();
    // A bundle: one long line of short names.
    let bundle = format!("!function(){{{}}}();\n", "var a=function(b){return b+1};".repeat(200));
    p.write("static/app.min.js", &bundle);
    // Real code with one long line (a data table) is not minified.
    let table = format!("export const TABLE = '{}';\n", "x".repeat(3000));
    let mut readable = String::from("export function render(el) {\n  return el;\n}\n");
    readable.push_str(&table);
    readable
        .push_str(&"// a comment line of ordinary length, padding the average down\n".repeat(80));
    p.write("static/app.js", &readable);
    p.write("static/tiny.js", "export const one = () => 1; export const two = () => 2;");
    for f in ["static/app.min.js", "static/app.js", "static/tiny.js"] {
        age(&p, f);
    }
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    let skips = skipped(&index);
    assert!(
        skips.contains(&(ErrorCode::MinifiedFile, "static/app.min.js".to_owned())),
        "{skips:?}"
    );
    assert_eq!(
        names(&index, Some("static/app.js")),
        ["static/app.js:render", "static/app.js:TABLE"]
    );
    assert_eq!(names(&index, Some("static/tiny.js")), ["static/tiny.js:one", "static/tiny.js:two"]);
    assert!(names(&index, Some("static/app.min.js")).is_empty());

    // Asked for, the bundle is indexed like any file.
    let cfg = IndexConfig { include_minified: true, ..IndexConfig::default() };
    let mut index = Index::open(p.root(), cfg).unwrap();
    update(&mut index);
    assert!(!skipped(&index).iter().any(|(_, path)| path == "static/app.min.js"));
    assert!(names(&index, Some("static/app.min.js")).contains(&"static/app.min.js:a".to_owned()));

    // Back to the default, the bundle is skipped again though it did not change;
    // the readable files stay.
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    assert!(names(&index, Some("static/app.min.js")).is_empty());
    assert!(skipped(&index).contains(&(ErrorCode::MinifiedFile, "static/app.min.js".to_owned())));
    assert_eq!(names(&index, Some("static/tiny.js")), ["static/tiny.js:one", "static/tiny.js:two"]);
}

#[test]
fn invalid_utf8_and_syntax_errors_are_indexed_and_reported() {
    let p = TempProject::new();
    p.write("latin1.py", b"# caf\xe9\ndef f(): pass\n");
    p.write("broken.py", "def ok(): pass\n\ndef bad(:\n    pass\n");
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    assert_eq!(names(&index, None), ["broken.py:ok", "broken.py:bad", "latin1.py:f"]);
    let st = index.status().unwrap();
    assert_eq!(st.invalid_utf8, ["latin1.py"]);
    assert_eq!(st.files_with_syntax_errors, 1);
    assert_eq!(st.syntax_errors[0].path, "broken.py");
    assert!(st.syntax_errors[0].error_nodes >= 1);
}

#[cfg(unix)]
#[test]
fn symlink_loops_and_escapes_are_recorded_not_followed() {
    let outside = TempProject::with_fixture("//- secret.py\ndef secret(): pass\n");
    let p = project();
    std::os::unix::fs::symlink("..", p.path("src/loop")).unwrap();
    std::os::unix::fs::symlink(outside.root(), p.path("escape")).unwrap();
    std::os::unix::fs::symlink(outside.path("secret.py"), p.path("secret_link.py")).unwrap();
    std::os::unix::fs::symlink("src", p.path("inside")).unwrap();
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    let skipped = skipped(&index);
    assert!(skipped.contains(&(ErrorCode::SymlinkLoop, "src/loop".to_owned())), "{skipped:?}");
    assert!(skipped.contains(&(ErrorCode::PathOutsideRoot, "escape".to_owned())), "{skipped:?}");
    assert!(
        skipped.contains(&(ErrorCode::PathOutsideRoot, "secret_link.py".to_owned())),
        "{skipped:?}"
    );
    let all = names(&index, None);
    assert!(!all.iter().any(|n| n.contains("secret")), "{all:?}");
    // A link that stays inside the root is followed.
    assert!(all.contains(&"inside/app.py:App".to_owned()), "{all:?}");
}

#[test]
fn root_that_is_not_a_directory_is_refused() {
    let p = project();
    let err = Index::open(&p.path("README.md"), IndexConfig::default()).err().unwrap();
    assert_eq!(err.code(), ErrorCode::NotADirectory);
    let err = Index::open(&p.path("nope"), IndexConfig::default()).err().unwrap();
    assert_eq!(err.code(), ErrorCode::NotFound);
}

#[test]
fn paths_outside_the_root_are_refused() {
    let p = project();
    let index = Index::open(p.root(), IndexConfig::default()).unwrap();
    let err = index.relative_path(p.root(), std::path::Path::new("../../etc/passwd")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::PathOutsideRoot);
    let err = index.relative_path(p.root(), std::path::Path::new("/etc/passwd")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::PathOutsideRoot);
    assert_eq!(
        index.relative_path(&p.path("src"), std::path::Path::new("app.py")).unwrap(),
        "src/app.py"
    );
}

/// Cancels the update after its first committed batch.
struct CancelAfterFirstBatch<'a>(&'a CancellationToken);
impl Progress for CancelAfterFirstBatch<'_> {
    fn advance(&self, _n: u64) {
        self.0.cancel();
    }
}

#[test]
fn cancelled_update_leaves_a_consistent_index_that_the_next_run_completes() {
    let p = TempProject::new();
    for i in 0..1500 {
        p.write(
            &format!("pkg/m{i:04}.py"),
            format!("class C{i}:\n    def m{i}(self):\n        return {i}\n"),
        );
    }
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    let cancel = CancellationToken::new();
    let err = index.update(&Call::new(&CancelAfterFirstBatch(&cancel), &cancel)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled);

    // Whatever was committed is complete: every indexed file has both its symbols.
    let st = index.status().unwrap();
    assert!(st.files > 0 && st.files < 1500, "partial progress expected, got {} files", st.files);
    assert_eq!(st.symbols, st.files * 2);

    // A first index this large is a bulk load, which builds the name indexes at the
    // end; a cancelled one builds them before it returns.
    assert_eq!(lookup_indexes(&p), ["ref_names_name", "symbols_name"]);

    let r = update(&mut index);
    assert_eq!(r.added + st.files, 1500);
    let st = index.status().unwrap();
    assert_eq!((st.files, st.symbols), (1500, 3000));
    assert!(st.stale.unwrap().is_fresh());
    assert_eq!(lookup_indexes(&p), ["ref_names_name", "symbols_name"]);
    let q = SymbolQuery { name: Some("m1234".into()), ..Default::default() };
    let found: Vec<String> =
        index.symbols(&q).unwrap().into_iter().map(|s| s.qualified_name).collect();
    assert_eq!(found, ["C1234.m1234"]);
}

/// The indexes on the database, by name (SQLite's automatic ones left out).
fn lookup_indexes(p: &TempProject) -> Vec<String> {
    let conn = rusqlite::Connection::open(p.path(".ironbees/index.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%_name' ORDER BY name",
        )
        .unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
}

#[test]
fn a_killed_bulk_load_answers_correctly_and_the_next_update_rebuilds_its_indexes() {
    let p = project();
    p.write("src/other.py", "from app import helper\n\ndef caller():\n    return helper()\n");
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    let before = (names(&index, None), index.references("helper").unwrap());
    // What a bulk load killed before its end leaves: the rows, not the name indexes.
    let conn = rusqlite::Connection::open(p.path(".ironbees/index.db")).unwrap();
    conn.execute_batch("DROP INDEX symbols_name; DROP INDEX ref_names_name;").unwrap();
    drop(conn);

    let reader = Index::open(p.root(), IndexConfig::default()).unwrap();
    assert_eq!((names(&reader, None), reader.references("helper").unwrap()), before);
    assert!(lookup_indexes(&p).is_empty());
    let r = update(&mut index);
    assert_eq!(r.parsed, 0, "nothing changed: {r:?}");
    assert_eq!(lookup_indexes(&p), ["ref_names_name", "symbols_name"]);
    assert_eq!((names(&index, None), index.references("helper").unwrap()), before);
}

#[test]
fn readers_are_not_blocked_by_an_open_write_transaction() {
    let p = project();
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    // Another process holds a write transaction with uncommitted changes.
    let writer = rusqlite::Connection::open(p.path(".ironbees/index.db")).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE; DELETE FROM symbols;").unwrap();
    let reader = Index::open(p.root(), IndexConfig::default()).unwrap();
    assert_eq!(names(&reader, None).len(), 6, "reader sees the last committed state");
    writer.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn a_second_updater_does_not_wait_in_try_update() {
    let p = project();
    let mut a = Index::open(p.root(), IndexConfig::default()).unwrap();
    let mut b = Index::open(p.root(), IndexConfig::default()).unwrap();
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(p.path(".ironbees/index.lock"))
        .unwrap();
    lock.lock().unwrap();
    assert!(b.try_update(&Call::new(&NoProgress, &CancellationToken::new())).unwrap().is_none());
    drop(lock);
    assert!(a.try_update(&Call::new(&NoProgress, &CancellationToken::new())).unwrap().is_some());
}

#[test]
fn damaged_or_newer_databases_are_reported_and_rebuildable() {
    let p = project();
    drop(Index::open(p.root(), IndexConfig::default()).unwrap());
    std::fs::write(
        p.path(".ironbees/index.db"),
        b"this is not a database at all, just text padding it out",
    )
    .unwrap();
    for f in ["index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(p.path(&format!(".ironbees/{f}")));
    }
    let err = Index::open(p.root(), IndexConfig::default()).err().unwrap();
    assert_eq!(err.code(), ErrorCode::IndexCorrupt);
    assert!(err.to_string().contains("--rebuild"), "{err}");

    let mut index = Index::rebuild(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    assert_eq!(index.status().unwrap().files, 3);
    drop(index);

    let conn = rusqlite::Connection::open(p.path(".ironbees/index.db")).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let err = Index::open(p.root(), IndexConfig::default()).err().unwrap();
    assert_eq!(err.code(), ErrorCode::IndexCorrupt);
    assert!(err.to_string().contains("newer"), "{err}");

    // The current version number but a table missing (a database made by a build
    // whose schema differed): a clear INDEX_CORRUPT, not "no such table" later.
    let mut index = Index::rebuild(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    drop(index);
    let conn = rusqlite::Connection::open(p.path(".ironbees/index.db")).unwrap();
    conn.execute_batch("DROP TABLE ref_names").unwrap();
    drop(conn);
    let err = Index::open(p.root(), IndexConfig::default()).err().unwrap();
    assert_eq!(err.code(), ErrorCode::IndexCorrupt);
    let msg = err.to_string();
    assert!(msg.contains("ref_names") && msg.contains("--rebuild"), "{msg}");
    let mut index = Index::rebuild(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    assert_eq!(index.status().unwrap().files, 3);
}

#[test]
fn symbol_queries_filter_by_glob_kind_file_and_case() {
    let p = project();
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    let q = |name: Option<&str>, kind: Option<SymbolKind>, file: Option<&str>, ic: bool| {
        let q = SymbolQuery {
            name: name.map(str::to_owned),
            kind,
            file: file.map(str::to_owned),
            ignore_case: ic,
            limit: None,
        };
        index.symbols(&q).unwrap().into_iter().map(|s| s.qualified_name).collect::<Vec<_>>()
    };
    assert_eq!(q(Some("help*"), None, None, false), ["helper"]);
    assert_eq!(q(Some("HELPER"), None, None, true), ["helper"]);
    assert_eq!(q(Some("HELPER"), None, None, false), Vec::<String>::new());
    assert_eq!(q(Some("App.*"), None, None, false), ["App.run"]);
    assert_eq!(q(Some("Config::*"), None, None, false), ["Config::load"]);
    assert_eq!(q(None, Some(SymbolKind::Method), None, false), ["App.run", "Config::load"]);
    assert_eq!(q(None, None, Some("web"), false), ["main"]);
    assert_eq!(q(None, None, Some("*.rs"), false), ["Config", "Config::load"]);
}

#[test]
fn state_dir_is_created_and_git_ignored() {
    let p = project();
    let _ = Index::open(p.root(), IndexConfig::default()).unwrap();
    assert_eq!(p.read(".ironbees/.gitignore"), "*\n");
}

#[test]
fn references_name_their_file_line_kind_and_enclosing_definition() {
    let p = project();
    p.write(
        "src/other.py",
        "from app import helper\n\ndef caller():\n    return helper() + helper()\n",
    );
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    update(&mut index);
    let hits: Vec<String> = index
        .references("helper")
        .unwrap()
        .into_iter()
        .map(|h| {
            format!(
                "{}:{}:{} {:?} in {}",
                h.path,
                h.line,
                h.column,
                h.kind,
                h.enclosing.unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        hits,
        [
            "src/app.py:3:16 Call in App.run",
            "src/other.py:1:17 Use in ",
            "src/other.py:4:12 Call in caller",
            "src/other.py:4:23 Call in caller",
        ]
    );
}
