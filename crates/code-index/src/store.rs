//! The on-disk index: one SQLite database, `.ironbees/index.db`.
//!
//! Why SQLite: readers must keep working while an index run writes (WAL gives
//! snapshot reads next to one writer), a killed run must leave a consistent index
//! (every batch is one transaction), and the data is relational (files → blobs →
//! symbols, references, imports) with lookups by name.
//!
//! Parse results are keyed by *content*, not by path: `blobs` holds one row per
//! (content hash, language), `files` maps paths to blobs. Renaming a file, or having
//! a hundred identical `__init__.py`, costs no re-parse and no duplicate rows.
//!
//! The schema version is `PRAGMA user_version`; [`MIGRATIONS`] brings an older
//! database forward in one transaction, and a newer one is refused. The extractor
//! version (a hash of the query files and [`EXTRACTOR_REVISION`]) is stored in `meta`:
//! when the queries change, every blob is re-parsed on the next run.

use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
    time::Duration,
};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::{
    error::{Error, Result},
    extract::FileAnalysis,
    lang::Language,
};

/// Bump when extraction changes in a way the query files don't show (2: `self_call`;
/// 3: receiver types; 4: receivers set from calls and imports; 5: Go, Java and C#
/// receivers, Java's `obj.m()` a member call; 6: receivers set from method calls;
/// 7: C++ receivers; 8: C/C++ macros before a return type masked; 9: fields of
/// classes the file defines; 10: Rust `self.` fields and `impl` types; 11: Python's
/// `cls(..)` constructs the enclosing class, C++'s `std::f()` has `std` as its
/// receiver; 12: C++'s `a::b::f()` is a call, and a lower-case scope its
/// receiver; 13: C++ calls with template arguments, `a::f<T>()` and
/// `o.get<T>()`, are calls with receivers; 14: Rust's `util::f()` has the path
/// `util::` as its receiver, C#'s conversion operators are named `operator T`,
/// runs of line comments above a definition (its doc) are read from the source,
/// and long runs of Python comment lines are masked for the parser; 15: C/C++
/// macro lines where a member or declaration goes are masked for the parser; 16: a
/// C++ return type the grammar read as a scope, `Result<A> Result<B>::get`, is no
/// part of the qualified name; 17: Python comment runs are masked whatever their
/// lines' indentation; 18: C/C++ `__has_include(<h>)`, a macro before a return type
/// ending its line or before a destructor masked for the parser; 19: C/C++
/// conditionals that split a declaration or expression read as their last branch).
/// The test
/// `extraction_changes_bump_the_revision` fails when extraction of the samples in
/// `tests/fingerprint/` changes without a bump.
pub(crate) const EXTRACTOR_REVISION: u32 = 19;

/// Forward migrations; `MIGRATIONS[i]` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1
    r#"
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE blobs(
        id INTEGER PRIMARY KEY,
        hash TEXT NOT NULL,
        language TEXT NOT NULL,
        lines INTEGER NOT NULL,
        error_nodes INTEGER NOT NULL,
        package TEXT,
        n_symbols INTEGER NOT NULL,
        n_refs INTEGER NOT NULL,
        n_imports INTEGER NOT NULL,
        -- every reference, encoded by refcodec.rs
        refs BLOB NOT NULL,
        UNIQUE(hash, language)
    );
    CREATE TABLE files(
        path TEXT PRIMARY KEY,
        blob_id INTEGER NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        lossy INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    CREATE INDEX files_blob ON files(blob_id);
    CREATE TABLE symbols(
        blob_id INTEGER NOT NULL,
        ord INTEGER NOT NULL,
        name TEXT NOT NULL,
        qualified_name TEXT NOT NULL,
        kind TEXT NOT NULL,
        start_byte INTEGER NOT NULL,
        end_byte INTEGER NOT NULL,
        line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        name_line INTEGER NOT NULL,
        body_start INTEGER,
        body_end INTEGER,
        signature TEXT NOT NULL,
        doc TEXT,
        doc_line INTEGER,
        parent INTEGER,
        PRIMARY KEY(blob_id, ord)
    ) WITHOUT ROWID;
    CREATE INDEX symbols_name ON symbols(name);
    -- Which files use a name: each distinct name once per blob.
    CREATE TABLE ref_names(
        name TEXT NOT NULL,
        blob_id INTEGER NOT NULL,
        PRIMARY KEY(name, blob_id)
    ) WITHOUT ROWID;
    CREATE INDEX ref_names_blob ON ref_names(blob_id);
    CREATE TABLE imports(
        blob_id INTEGER NOT NULL,
        ord INTEGER NOT NULL,
        text TEXT NOT NULL,
        module TEXT NOT NULL,
        line INTEGER NOT NULL,
        PRIMARY KEY(blob_id, ord)
    ) WITHOUT ROWID;
    CREATE TABLE skipped(
        path TEXT PRIMARY KEY,
        code TEXT NOT NULL,
        reason TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 1 -> 2: what the search index (tantivy, .ironbees/search/) holds, per file.
    r#"
    CREATE TABLE search_files(
        path TEXT PRIMARY KEY,
        hash TEXT NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 2 -> 3: `ref_names` keyed by blob, so a bulk load appends instead of inserting
    // all over a name-ordered B-tree; lookups by name go through an index.
    r#"
    CREATE TABLE ref_names_v3(
        blob_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        PRIMARY KEY(blob_id, name)
    ) WITHOUT ROWID;
    INSERT INTO ref_names_v3(blob_id, name) SELECT blob_id, name FROM ref_names ORDER BY blob_id, name;
    DROP TABLE ref_names;
    ALTER TABLE ref_names_v3 RENAME TO ref_names;
    CREATE INDEX ref_names_name ON ref_names(name);
    "#,
];

/// The indexes that serve lookups by name. A bulk load drops them and builds them
/// once at the end ([`Batch::ensure_lookup_indexes`]): inserting hundreds of
/// thousands of names in random order into a B-tree costs several times what one
/// sort does, and every commit would rewrite most of its pages into the WAL.
/// `IF NOT EXISTS` makes the end of every update a repair, so a bulk load that was
/// killed leaves an index that is slower until the next update, never wrong.
const LOOKUP_INDEXES: &[(&str, &str)] = &[
    ("symbols_name", "CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name)"),
    ("ref_names_name", "CREATE INDEX IF NOT EXISTS ref_names_name ON ref_names(name)"),
];

pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The tables the migrations leave, read from their SQL: created, not dropped,
/// renamed to their last name.
fn expected_tables() -> Vec<&'static str> {
    let mut tables: Vec<&str> = Vec::new();
    for statement in MIGRATIONS.iter().flat_map(|sql| sql.split(';')) {
        let words: Vec<&str> = statement
            .lines()
            .filter(|l| !l.trim_start().starts_with("--"))
            .flat_map(|l| l.split(|c: char| c == '(' || c.is_whitespace()))
            .filter(|w| !w.is_empty())
            .collect();
        match words.as_slice() {
            ["CREATE", "TABLE", name, ..] => tables.push(name),
            ["DROP", "TABLE", name, ..] => tables.retain(|t| t != name),
            ["ALTER", "TABLE", from, "RENAME", "TO", to, ..] => {
                tables.retain(|t| t != from);
                tables.push(to);
            }
            _ => {}
        }
    }
    tables
}

/// What the database knows about an indexed file.
#[derive(Debug, Clone)]
pub(crate) struct FileRow {
    /// Content hash of the blob the file points at.
    pub hash: String,
    pub size: u64,
    pub mtime_ns: i64,
}

/// What the database knows about a skipped file.
#[derive(Debug, Clone)]
pub(crate) struct SkipRow {
    pub code: String,
    pub size: u64,
    pub mtime_ns: i64,
}

pub(crate) struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the database and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| Error::db(path, e))?;
        let mut store = Store { conn, path: path.to_owned() };
        store.configure()?;
        store.migrate()?;
        Ok(store)
    }

    fn err(&self, e: rusqlite::Error) -> Error {
        Error::db(&self.path, e)
    }

    fn configure(&self) -> Result<()> {
        // Another process may be writing: wait for it rather than failing at once.
        self.conn.busy_timeout(Duration::from_secs(30)).map_err(|e| self.err(e))?;
        // WAL: readers see the last committed batch while a writer runs.
        // synchronous=NORMAL is durable across process kills (not power cuts of the
        // last few transactions), which is what an index that can be rebuilt needs.
        //
        // Switching a new database to WAL takes an exclusive lock, and SQLite
        // answers BUSY at once instead of waiting when this connection already
        // holds a shared lock another process is also waiting to upgrade (its
        // busy handler would deadlock): seen with 8 processes opening a new
        // project at once under load. So the switch is retried until the same
        // 30 s are up.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            match self.conn.execute_batch("PRAGMA journal_mode=WAL;") {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if matches!(
                        f.code,
                        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                    ) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(self.err(e)),
            }
        }
        self.conn
            .execute_batch(
                "PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-32000;",
            )
            .map_err(|e| self.err(e))
    }

    fn migrate(&mut self) -> Result<()> {
        let version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if version > SCHEMA_VERSION {
            return Err(Error::Corrupt {
                path: self.path.clone(),
                reason: format!(
                    "schema version {version} is newer than this ironbees supports ({SCHEMA_VERSION})"
                ),
            });
        }
        if version < SCHEMA_VERSION {
            // IMMEDIATE, and the version read again inside: two processes opening a
            // new project at once would otherwise both run the first migration,
            // and the second fail with "table meta already exists".
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(|e| Error::db(&self.path, e))?;
            let version: i64 = tx
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(|e| Error::db(&self.path, e))?;
            for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
                tx.execute_batch(sql).map_err(|e| Error::db(&self.path, e))?;
                tx.pragma_update(None, "user_version", i as i64 + 1)
                    .map_err(|e| Error::db(&self.path, e))?;
            }
            tx.commit().map_err(|e| Error::db(&self.path, e))?;
        }
        self.check_tables(version)
    }

    /// The version number alone cannot tell a database made by a build whose
    /// schema differed at the same version (a development build); without this,
    /// the first query would fail with a bare "no such table". One read of
    /// `sqlite_master` per open.
    fn check_tables(&self, version: i64) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .map_err(|e| self.err(e))?;
        let present: HashSet<String> = stmt
            .query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))?;
        let missing: Vec<&str> =
            expected_tables().into_iter().filter(|t| !present.contains(*t)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(Error::Corrupt {
            path: self.path.clone(),
            reason: format!(
                "schema version {version} lacks table(s) {} (made by a different build)",
                missing.join(", ")
            ),
        })
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    pub fn files(&self) -> Result<HashMap<String, FileRow>> {
        let mut stmt =
            self.conn.prepare("SELECT f.path, b.hash, f.size, f.mtime_ns FROM files f JOIN blobs b ON b.id = f.blob_id").map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    FileRow {
                        hash: r.get(1)?,
                        size: r.get::<_, i64>(2)? as u64,
                        mtime_ns: r.get(3)?,
                    },
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>().map_err(|e| self.err(e))
    }

    pub fn skipped(&self) -> Result<HashMap<String, SkipRow>> {
        let mut stmt = self
            .conn
            .prepare("SELECT path, code, size, mtime_ns FROM skipped")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    SkipRow {
                        code: r.get(1)?,
                        size: r.get::<_, i64>(2)? as u64,
                        mtime_ns: r.get(3)?,
                    },
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>().map_err(|e| self.err(e))
    }

    /// (hash, language) → blob id, for every stored blob.
    pub fn blobs(&self) -> Result<HashMap<(String, String), i64>> {
        let mut stmt =
            self.conn.prepare("SELECT hash, language, id FROM blobs").map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>().map_err(|e| self.err(e))
    }

    /// path → content hash of what the search index holds.
    pub fn search_files(&self) -> Result<HashMap<String, String>> {
        let mut stmt =
            self.conn.prepare("SELECT path, hash FROM search_files").map_err(|e| self.err(e))?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>().map_err(|e| self.err(e))
    }

    /// Records a change of what the search index holds: every row replaced when
    /// `replace_all` (a new or rebuilt search index), then `removed` paths deleted
    /// and `set` paths written. One transaction.
    pub fn update_search_files(
        &mut self,
        replace_all: bool,
        removed: &[&str],
        set: &[(&str, &str)],
    ) -> Result<()> {
        let batch = self.begin()?;
        if replace_all {
            batch.tx.execute("DELETE FROM search_files", []).map_err(|e| batch.err(e))?;
        }
        {
            let mut delete = batch
                .tx
                .prepare("DELETE FROM search_files WHERE path = ?1")
                .map_err(|e| batch.err(e))?;
            for p in removed {
                delete.execute([p]).map_err(|e| batch.err(e))?;
            }
            let mut insert = batch
                .tx
                .prepare("INSERT OR REPLACE INTO search_files(path, hash) VALUES (?1, ?2)")
                .map_err(|e| batch.err(e))?;
            for (p, h) in set {
                insert.execute([p, h]).map_err(|e| batch.err(e))?;
            }
        }
        batch.commit()
    }

    pub fn begin(&mut self) -> Result<Batch<'_>> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| Error::db(&path, e))?;
        Ok(Batch { tx, path })
    }
}

/// One write transaction. Dropping it without [`Batch::commit`] rolls everything back.
pub(crate) struct Batch<'c> {
    tx: rusqlite::Transaction<'c>,
    path: PathBuf,
}

impl Batch<'_> {
    fn err(&self, e: rusqlite::Error) -> Error {
        Error::db(&self.path, e)
    }

    pub fn commit(self) -> Result<()> {
        let path = self.path.clone();
        self.tx.commit().map_err(|e| Error::db(&path, e))
    }

    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.tx
            .execute("INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [key, value])
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn find_blob(&self, hash: &str, lang: Language) -> Result<Option<i64>> {
        self.tx
            .prepare_cached("SELECT id FROM blobs WHERE hash = ?1 AND language = ?2")
            .and_then(|mut s| s.query_row(params![hash, lang.name()], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))
    }

    /// Finds the blob for (hash, language) or inserts it with its analysis.
    pub fn blob(&self, hash: &str, lang: Language, analysis: &FileAnalysis) -> Result<i64> {
        if let Some(id) = self.find_blob(hash, lang)? {
            return Ok(id);
        }
        self.insert_blob(hash, lang, analysis)
    }

    /// Inserts a blob the caller has just looked for and not found.
    pub fn insert_blob(&self, hash: &str, lang: Language, a: &FileAnalysis) -> Result<i64> {
        self.insert_blob_rows(hash, lang, a).map_err(|e| self.err(e))
    }

    fn insert_blob_rows(
        &self,
        hash: &str,
        lang: Language,
        a: &FileAnalysis,
    ) -> rusqlite::Result<i64> {
        let (refs, mut names) = crate::refcodec::encode(&a.references);
        self.tx
            .prepare_cached(
                "INSERT INTO blobs(hash, language, lines, error_nodes, package, n_symbols, n_refs, n_imports, refs)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                hash,
                lang.name(),
                a.lines,
                a.error_nodes,
                a.package,
                a.definitions.len() as i64,
                a.references.len() as i64,
                a.imports.len() as i64,
                refs,
            ])?;
        let id = self.tx.last_insert_rowid();
        let mut sym = self.tx.prepare_cached(
            "INSERT INTO symbols(blob_id, ord, name, qualified_name, kind, start_byte, end_byte, line, end_line, name_line, body_start, body_end, signature, doc, doc_line, parent)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        )?;
        for (ord, d) in a.definitions.iter().enumerate() {
            sym.execute(params![
                id,
                ord as i64,
                d.name,
                d.qualified_name,
                d.kind.as_str(),
                d.start_byte,
                d.end_byte,
                d.line,
                d.end_line,
                d.name_line,
                d.body.map(|b| b.0),
                d.body.map(|b| b.1),
                d.signature,
                d.doc,
                d.doc_line,
                d.parent,
            ])?;
        }
        // In key order: appended to the table's B-tree rather than inserted into it.
        names.sort_unstable();
        let mut rn =
            self.tx.prepare_cached("INSERT INTO ref_names(blob_id, name) VALUES (?1, ?2)")?;
        for name in names {
            rn.execute(params![id, name])?;
        }
        let mut im = self.tx.prepare_cached(
            "INSERT INTO imports(blob_id, ord, text, module, line) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for (ord, i) in a.imports.iter().enumerate() {
            im.execute(params![id, ord as i64, i.text, i.module, i.line])?;
        }
        Ok(id)
    }

    pub fn upsert_file(
        &self,
        path: &str,
        blob_id: i64,
        size: u64,
        mtime_ns: i64,
        lossy: bool,
    ) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO files(path, blob_id, size, mtime_ns, lossy) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(path) DO UPDATE SET blob_id = excluded.blob_id, size = excluded.size, mtime_ns = excluded.mtime_ns, lossy = excluded.lossy",
            )
            .and_then(|mut s| s.execute(params![path, blob_id, size as i64, mtime_ns, lossy]))
            .map_err(|e| self.err(e))?;
        self.tx
            .prepare_cached("DELETE FROM skipped WHERE path = ?1")
            .and_then(|mut s| s.execute([path]))
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn upsert_skip(
        &self,
        path: &str,
        code: &str,
        reason: &str,
        size: u64,
        mtime_ns: i64,
    ) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO skipped(path, code, reason, size, mtime_ns) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(path) DO UPDATE SET code = excluded.code, reason = excluded.reason, size = excluded.size, mtime_ns = excluded.mtime_ns",
            )
            .and_then(|mut s| s.execute(params![path, code, reason, size as i64, mtime_ns]))
            .map_err(|e| self.err(e))?;
        self.tx
            .prepare_cached("DELETE FROM files WHERE path = ?1")
            .and_then(|mut s| s.execute([path]))
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn delete_path(&self, path: &str) -> Result<()> {
        for sql in ["DELETE FROM files WHERE path = ?1", "DELETE FROM skipped WHERE path = ?1"] {
            self.tx
                .prepare_cached(sql)
                .and_then(|mut s| s.execute([path]))
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Removes blobs no file points at any more, with their rows.
    pub fn collect_garbage(&self) -> Result<u64> {
        let sql = "
            CREATE TEMP TABLE IF NOT EXISTS orphans(id INTEGER PRIMARY KEY);
            DELETE FROM orphans;
            INSERT INTO orphans SELECT id FROM blobs WHERE id NOT IN (SELECT blob_id FROM files);
            DELETE FROM symbols WHERE blob_id IN (SELECT id FROM orphans);
            DELETE FROM ref_names WHERE blob_id IN (SELECT id FROM orphans);
            DELETE FROM imports WHERE blob_id IN (SELECT id FROM orphans);
            DELETE FROM blobs WHERE id IN (SELECT id FROM orphans);";
        self.tx.execute_batch(sql).map_err(|e| self.err(e))?;
        self.tx
            .query_row("SELECT count(*) FROM orphans", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| self.err(e))
    }

    /// Drops the lookup indexes before a bulk load; see [`LOOKUP_INDEXES`].
    pub fn drop_lookup_indexes(&self) -> Result<()> {
        for (name, _) in LOOKUP_INDEXES {
            self.tx
                .execute_batch(&format!("DROP INDEX IF EXISTS {name}"))
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Builds whichever lookup index is missing; cheap when none is.
    pub fn ensure_lookup_indexes(&self) -> Result<()> {
        for (_, sql) in LOOKUP_INDEXES {
            self.tx.execute_batch(sql).map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Forgets every parse result (the extractor changed): files will be re-parsed.
    pub fn clear_parse_results(&self) -> Result<()> {
        self.tx
            .execute_batch(
                "DELETE FROM symbols; DELETE FROM ref_names; DELETE FROM imports; DELETE FROM files; DELETE FROM blobs;
                 DELETE FROM search_files;",
            )
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_database_keeps_its_rows_through_the_migrations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        // A database as the build with schema version 2 left it.
        let conn = Connection::open(&path).unwrap();
        for sql in &MIGRATIONS[..2] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO blobs(id, hash, language, lines, error_nodes, n_symbols, n_refs, n_imports, refs)
                 VALUES (1, 'h1', 'python', 1, 0, 0, 2, 0, x''), (2, 'h2', 'python', 1, 0, 0, 1, 0, x'');
             INSERT INTO ref_names(name, blob_id) VALUES ('run', 1), ('helper', 1), ('run', 2);
             PRAGMA user_version = 2;",
        )
        .unwrap();
        drop(conn);

        let store = Store::open(&path).unwrap();
        let version: i64 =
            store.conn().pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let mut stmt = store
            .conn()
            .prepare("SELECT blob_id FROM ref_names WHERE name = 'run' ORDER BY blob_id")
            .unwrap();
        let blobs: Vec<i64> =
            stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap();
        assert_eq!(blobs, [1, 2]);
        let plan: String = store
            .conn()
            .query_row(
                "EXPLAIN QUERY PLAN SELECT blob_id FROM ref_names WHERE name = 'run'",
                [],
                |r| r.get(3),
            )
            .unwrap();
        assert!(plan.contains("ref_names_name"), "lookups by name use the index: {plan}");
    }
}
