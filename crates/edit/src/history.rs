//! Transaction history in SQLite (`.ironbees/edits/history.db`).
//!
//! A history row is also the transaction's commit record: a journal whose id has a
//! row here committed (recovery only finishes the bookkeeping), one without a row
//! did not (recovery rolls it back). SQLite gives the two properties this needs in
//! one commit: the row appears durably (WAL, `synchronous=FULL`) together with the
//! state change of the edit an undo or redo acts on, and nothing half-written is
//! ever read back. Pruning and lookups by id prefix are plain queries.

use std::{path::Path, time::Duration};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::{
    error::{Error, Result},
    store::{Kind, TxRecord},
};

const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE tx (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    target TEXT,
    time_ms INTEGER NOT NULL,
    description TEXT NOT NULL,
    state TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX tx_target ON tx(target);
";

/// A transaction's state column.
pub(crate) const APPLIED: &str = "applied";
pub(crate) const UNDONE: &str = "undone";
pub(crate) const DONE: &str = "done";

pub(crate) struct Row {
    pub seq: i64,
    pub state: String,
    pub record: TxRecord,
}

pub(crate) struct History {
    conn: Connection,
    path: std::path::PathBuf,
}

impl History {
    pub(crate) fn open(path: &Path) -> Result<History> {
        let err = |e: rusqlite::Error| {
            use rusqlite::ErrorCode as C;
            match e.sqlite_error_code() {
                Some(C::DatabaseCorrupt | C::NotADatabase) => Error::Corrupt {
                    path: path.display().to_string(),
                    reason: format!(
                        "the edit history is damaged ({e}). Edits are refused until it is \
                         moved aside; a new history starts then (older edits can no longer \
                         be undone)"
                    ),
                },
                _ => Error::History { path: path.to_owned(), source: e },
            }
        };
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(err)?;
        conn.busy_timeout(Duration::from_secs(30)).map_err(err)?;
        // synchronous=FULL: a row is the commit record, so it must survive a power
        // cut once `commit` returns, before the journal is deleted.
        conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;").map_err(err)?;
        let version: i64 =
            conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(err)?;
        if version > SCHEMA_VERSION {
            return Err(Error::Corrupt {
                path: path.display().to_string(),
                reason: format!(
                    "edit history schema {version} is newer than this ironbees supports \
                     ({SCHEMA_VERSION})"
                ),
            });
        }
        if version < SCHEMA_VERSION {
            // The version read again under the write lock: another process
            // opening the same new project may have created the schema meanwhile.
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            let now: i64 =
                tx.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(err)?;
            if now < SCHEMA_VERSION {
                tx.execute_batch(&format!("{SCHEMA} PRAGMA user_version = {SCHEMA_VERSION};"))
                    .map_err(err)?;
            }
            tx.commit().map_err(err)?;
        }
        Ok(History { conn, path: path.to_owned() })
    }

    fn err(&self, e: rusqlite::Error) -> Error {
        Error::History { path: self.path.clone(), source: e }
    }

    pub(crate) fn contains(&self, id: &str) -> Result<bool> {
        self.conn
            .query_row("SELECT 1 FROM tx WHERE id = ?1", [id], |_| Ok(()))
            .optional()
            .map(|o| o.is_some())
            .map_err(|e| self.err(e))
    }

    /// Commits a transaction: its row, and the new state of the edit it acts on.
    pub(crate) fn commit(&mut self, rec: &TxRecord, target_state: Option<&str>) -> Result<()> {
        let json = serde_json::to_string(rec).expect("records serialize");
        let (kind, state) = match rec.kind {
            Kind::Edit => ("edit", APPLIED),
            Kind::Undo => ("undo", DONE),
            Kind::Redo => ("redo", DONE),
        };
        let path = self.path.clone();
        let err = |e| Error::History { path: path.clone(), source: e };
        let tx = self.conn.transaction().map_err(err)?;
        tx.execute(
            "INSERT INTO tx (id, kind, target, time_ms, description, state, record)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![rec.id, kind, rec.target, rec.time_unix_ms, rec.description, state, json],
        )
        .map_err(err)?;
        if let (Some(target), Some(st)) = (&rec.target, target_state) {
            tx.execute("UPDATE tx SET state = ?1 WHERE id = ?2", params![st, target])
                .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, String, String)> {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    }

    fn decode(&self, (seq, state, json): (i64, String, String)) -> Result<Row> {
        let record = serde_json::from_str(&json).map_err(|e| Error::Corrupt {
            path: self.path.display().to_string(),
            reason: format!("history row {seq} does not parse: {e}"),
        })?;
        Ok(Row { seq, state, record })
    }

    fn query(&self, sql: &str, params: impl rusqlite::Params) -> Result<Vec<Row>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let raw = stmt
            .query_map(params, Self::row)
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        raw.into_iter().map(|r| self.decode(r)).collect()
    }

    /// The transaction with this id, or the only one whose id starts with it.
    pub(crate) fn find(&self, id: &str) -> Result<Row> {
        let not_found = |hint: String| Error::TransactionNotFound { id: id.to_owned(), hint };
        if id.is_empty() {
            return Err(not_found(String::new()));
        }
        let exact = self.query("SELECT seq, state, record FROM tx WHERE id = ?1", [id])?;
        if let Some(r) = exact.into_iter().next() {
            return Ok(r);
        }
        let pattern = format!("{}%", id.replace(['%', '_'], ""));
        let mut hits =
            self.query("SELECT seq, state, record FROM tx WHERE id LIKE ?1 LIMIT 5", [pattern])?;
        match hits.len() {
            0 => Err(not_found(" (pruned, or never existed; `ironbees history` lists it)".into())),
            1 => Ok(hits.remove(0)),
            _ => Err(Error::InvalidArgument {
                edit: None,
                message: format!(
                    "transaction id prefix {id:?} is ambiguous: {}",
                    hits.iter().map(|h| h.record.id.as_str()).collect::<Vec<_>>().join(", ")
                ),
            }),
        }
    }

    /// Newest first.
    pub(crate) fn list(&self, limit: usize) -> Result<Vec<Row>> {
        self.query(
            "SELECT seq, state, record FROM tx ORDER BY seq DESC LIMIT ?1",
            [limit.min(i64::MAX as usize) as i64],
        )
    }

    /// The newest edit whose changes are applied: what a plain `undo` undoes.
    pub(crate) fn latest_applied_edit(&self) -> Result<Option<Row>> {
        Ok(self
            .query(
                "SELECT seq, state, record FROM tx WHERE kind = 'edit' AND state = 'applied'
                 ORDER BY seq DESC LIMIT 1",
                [],
            )?
            .into_iter()
            .next())
    }

    /// The edit undone most recently and not redone since: what a plain `redo` redoes.
    pub(crate) fn latest_undone_edit(&self) -> Result<Option<Row>> {
        Ok(self
            .query(
                "SELECT e.seq, e.state, e.record FROM tx e JOIN tx u
                   ON u.target = e.id AND u.kind = 'undo'
                 WHERE e.kind = 'edit' AND e.state = 'undone'
                 ORDER BY u.seq DESC LIMIT 1",
                [],
            )?
            .into_iter()
            .next())
    }

    /// The first transaction after `seq` that changed `path`.
    pub(crate) fn later_touching(&self, seq: i64, path: &str) -> Result<Option<String>> {
        let rows =
            self.query("SELECT seq, state, record FROM tx WHERE seq > ?1 ORDER BY seq", [seq])?;
        Ok(rows
            .into_iter()
            .find(|r| r.record.transitions.iter().any(|t| t.path == path))
            .map(|r| r.record.id))
    }

    /// Every record, oldest first (for pruning and blob sweeps).
    pub(crate) fn all(&self) -> Result<Vec<Row>> {
        self.query("SELECT seq, state, record FROM tx ORDER BY seq", [])
    }

    /// Deletes the rows of these transactions.
    pub(crate) fn remove(&mut self, seqs: &[i64]) -> Result<()> {
        let path = self.path.clone();
        let err = |e| Error::History { path: path.clone(), source: e };
        let tx = self.conn.transaction().map_err(err)?;
        for s in seqs {
            tx.execute("DELETE FROM tx WHERE seq = ?1", [s]).map_err(err)?;
        }
        tx.commit().map_err(err)
    }
}
