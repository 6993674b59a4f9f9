//! The SQLite store: `dir/workflow.db` and one lock file per run in `dir/locks/`.
//!
//! WAL with `synchronous=NORMAL`: a commit survives the process being killed at
//! any instant (what the crash test checks); a power cut may lose the last few
//! commits, never corrupt the database, and since commits are applied in order the
//! run then resumes from an earlier checkpoint, whose effect records are as old.
//! Immutability is the database's job, not only ours: triggers refuse any update
//! or delete of checkpoints, events and effects, and any checkpoint or event whose
//! `seq` is not the next one of its run.

use std::{
    fs::{File, OpenOptions},
    io::{Read, Seek, Write},
    path::{Path, PathBuf},
    sync::{Mutex, MutexGuard},
    time::Duration,
};

use protocol::{CheckpointMeta, RunEvent, RunSummary};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use crate::{
    error::{Error, Result},
    failpoint,
    lease::{DEFAULT_LEASE, Heartbeat, lease_owner},
    store::{Checkpoint, CheckpointStore, Job, RunFilter, RunLock, validate_run_id},
};

const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    status TEXT NOT NULL,          -- RunStatus as JSON
    status_type TEXT NOT NULL,     -- its type tag, for filters
    node TEXT NOT NULL,            -- of the latest checkpoint
    seq INTEGER NOT NULL,          -- of the latest checkpoint
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    metadata TEXT NOT NULL
);
CREATE INDEX runs_updated ON runs(updated_ms);

CREATE TABLE checkpoints (
    run_id TEXT NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,
    state_id TEXT NOT NULL UNIQUE,
    node TEXT NOT NULL,
    iteration INTEGER NOT NULL,
    time_ms INTEGER NOT NULL,
    status TEXT NOT NULL,
    state TEXT NOT NULL,
    input TEXT,
    PRIMARY KEY (run_id, seq)
);
CREATE TRIGGER checkpoints_in_order BEFORE INSERT ON checkpoints
    WHEN NEW.seq <> 1 + (SELECT COALESCE(MAX(seq), 0) FROM checkpoints WHERE run_id = NEW.run_id)
    BEGIN SELECT RAISE(ABORT, 'checkpoint seq is not the next one of its run'); END;
CREATE TRIGGER checkpoints_no_update BEFORE UPDATE ON checkpoints
    BEGIN SELECT RAISE(ABORT, 'checkpoints are immutable'); END;
CREATE TRIGGER checkpoints_no_delete BEFORE DELETE ON checkpoints
    BEGIN SELECT RAISE(ABORT, 'checkpoints are immutable'); END;

CREATE TABLE events (
    run_id TEXT NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,
    time_ms INTEGER NOT NULL,
    kind TEXT NOT NULL,            -- RunEventKind as JSON
    PRIMARY KEY (run_id, seq)
);
CREATE TRIGGER events_in_order BEFORE INSERT ON events
    WHEN NEW.seq <> 1 + (SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = NEW.run_id)
    BEGIN SELECT RAISE(ABORT, 'event seq is not the next one of its run'); END;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'events are immutable'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'events are immutable'); END;

CREATE TABLE effects (
    run_id TEXT NOT NULL REFERENCES runs(id),
    key TEXT NOT NULL,
    time_ms INTEGER NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE TRIGGER effects_no_update BEFORE UPDATE ON effects
    BEGIN SELECT RAISE(ABORT, 'effects are immutable'); END;
CREATE TRIGGER effects_no_delete BEFORE DELETE ON effects
    BEGIN SELECT RAISE(ABORT, 'effects are immutable'); END;
";

/// Version 2: the work queue. A job is claimed by a store (`owner`) until
/// `lease_until_ms`, which the owner's heartbeat pushes forward.
const SCHEMA_2: &str = "
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    input TEXT,
    answers INTEGER,
    created_ms INTEGER NOT NULL,
    due_ms INTEGER NOT NULL,
    owner TEXT,
    lease_until_ms INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_due ON jobs(due_ms, id);
";

/// [`CheckpointStore`] on SQLite. One connection behind a mutex: the engine
/// writes from one thread per run, and other processes (another run, a cancel, a
/// reader) open their own store on the same directory.
pub struct SqliteStore {
    conn: Mutex<Connection>,
    db: PathBuf,
    locks: PathBuf,
    /// Who this store is when it claims jobs, and for how long a claim lasts.
    owner: String,
    lease: Duration,
    /// Renews this store's job claims; started by the first claim.
    heartbeat: Mutex<Option<Heartbeat>>,
}

impl SqliteStore {
    /// Opens (creating) `dir/workflow.db` and `dir/locks/`, migrating the schema.
    pub fn open(dir: &Path) -> Result<SqliteStore> {
        let locks = dir.join("locks");
        std::fs::create_dir_all(&locks)
            .map_err(|e| Error::store(format!("creating {}", locks.display()), e))?;
        let db = dir.join("workflow.db");
        let ctx = || format!("opening {}", db.display());
        let mut conn = Connection::open(&db).map_err(|e| Error::store(ctx(), e))?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(|e| Error::store(ctx(), e))?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
        )
        .map_err(|e| Error::store(ctx(), e))?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| Error::store(ctx(), e))?;
        if version > SCHEMA_VERSION {
            return Err(Error::Corrupt {
                context: ctx(),
                reason: format!(
                    "schema {version} is newer than this ironbees supports ({SCHEMA_VERSION})"
                ),
            });
        }
        // Forward migrations under the write lock, the version read again inside:
        // two processes opening a new project at once must not both create it.
        if version < SCHEMA_VERSION {
            let migrating =
                |e| Error::store(format!("migrating the schema in {}", db.display()), e);
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(migrating)?;
            let now: i64 =
                tx.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(migrating)?;
            if now < 1 {
                tx.execute_batch(&format!("{SCHEMA} PRAGMA user_version = 1;"))
                    .map_err(migrating)?;
            }
            if now < 2 {
                tx.execute_batch(&format!("{SCHEMA_2} PRAGMA user_version = 2;"))
                    .map_err(migrating)?;
            }
            tx.commit().map_err(migrating)?;
        }
        Ok(SqliteStore {
            conn: Mutex::new(conn),
            db,
            locks,
            owner: lease_owner(),
            lease: DEFAULT_LEASE,
            heartbeat: Mutex::new(None),
        })
    }

    /// How long this store's job claims last without renewal (renewed every
    /// third of it while the process lives).
    pub fn with_lease(mut self, lease: Duration) -> SqliteStore {
        self.lease = lease;
        self
    }

    /// Starts renewing this store's claims, once, on its own connection.
    fn start_heartbeat(&self) -> Result<()> {
        let mut hb = self.heartbeat.lock().unwrap_or_else(|p| p.into_inner());
        if hb.is_some() {
            return Ok(());
        }
        let conn = Connection::open(&self.db)
            .map_err(|e| Error::store(format!("opening {}", self.db.display()), e))?;
        let _ = conn.busy_timeout(Duration::from_secs(10));
        let (owner, lease) = (self.owner.clone(), self.lease);
        *hb = Some(Heartbeat::start("ironbees-wf-lease", lease / 3, move || {
            let until = crate::runner::now_ms() + lease.as_millis() as i64;
            if let Err(e) = conn.execute(
                "UPDATE jobs SET lease_until_ms = ?2 WHERE owner = ?1",
                params![owner, until],
            ) {
                tracing::warn!(error = %e, "renewing job leases");
            }
        }));
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.db
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the connection leaves no open transaction behind
        // (rusqlite's `Transaction` rolls back on drop), so the connection is fine.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn err(&self, what: &str, run_id: &str) -> impl Fn(rusqlite::Error) -> Error + use<> {
        let context = format!("{what} of run {run_id:?} in {}", self.db.display());
        move |e| Error::store(context.clone(), e)
    }
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("wire types serialize")
}

fn insert_checkpoint(tx: &rusqlite::Transaction<'_>, cp: &Checkpoint) -> rusqlite::Result<()> {
    let m = &cp.meta;
    tx.prepare_cached(
        "INSERT INTO checkpoints (run_id, seq, state_id, node, iteration, time_ms, status, state, input)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        m.run_id,
        m.seq as i64,
        m.state_id,
        m.node,
        m.iteration,
        m.time_ms,
        json(&m.status),
        json(&cp.state),
        cp.input.as_ref().map(json),
    ])?;
    Ok(())
}

fn insert_events(tx: &rusqlite::Transaction<'_>, events: &[RunEvent]) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO events (run_id, seq, time_ms, kind) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for e in events {
        stmt.execute(params![e.run_id, e.seq as i64, e.time_ms, json(&e.kind)])?;
    }
    Ok(())
}

/// Decodes a JSON column, as a SQLite conversion error when it does not parse.
fn decode<T: serde::de::DeserializeOwned>(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<T> {
    let text: String = r.get(i)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

const RUN_COLUMNS: &str =
    "id, kind, created_ms, updated_ms, status, node, seq, cancel_requested, metadata";

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunSummary> {
    Ok(RunSummary {
        id: r.get(0)?,
        kind: r.get(1)?,
        created_ms: r.get(2)?,
        updated_ms: r.get(3)?,
        status: decode(r, 4)?,
        node: r.get(5)?,
        seq: r.get::<_, i64>(6)? as u64,
        cancel_requested: r.get(7)?,
        metadata: decode(r, 8)?,
    })
}

const CHECKPOINT_COLUMNS: &str = "run_id, seq, state_id, node, iteration, time_ms, status";

fn meta_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CheckpointMeta> {
    Ok(CheckpointMeta {
        run_id: r.get(0)?,
        seq: r.get::<_, i64>(1)? as u64,
        state_id: r.get(2)?,
        node: r.get(3)?,
        iteration: r.get(4)?,
        time_ms: r.get(5)?,
        status: decode(r, 6)?,
    })
}

fn checkpoint_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Checkpoint> {
    let input: Option<String> = r.get(8)?;
    let input = match input {
        None => None,
        Some(_) => Some(decode(r, 8)?),
    };
    Ok(Checkpoint { meta: meta_row(r)?, state: decode(r, 7)?, input })
}

impl CheckpointStore for SqliteStore {
    fn try_lock_run(&self, run_id: &str) -> Result<RunLock> {
        validate_run_id(run_id)?;
        let path = self.locks.join(format!("{run_id}.lock"));
        let io = |e| Error::store(format!("locking {}", path.display()), e);
        // Lock files stay: deleting one would let a waiting opener lock an unlinked
        // file while a newcomer locks a fresh one.
        let mut f: File = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match f.try_lock() {
            Ok(()) => {
                // Our pid, for the next caller's Busy message.
                let _ = f.set_len(0);
                let _ = f.rewind();
                let _ = write!(f, "{}", std::process::id());
                Ok(RunLock::new(f))
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = f.read_to_string(&mut pid);
                let pid = pid.trim();
                Err(Error::Busy {
                    run_id: run_id.to_owned(),
                    holder: if pid.is_empty() { String::new() } else { format!(" (pid {pid})") },
                })
            }
            Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
        }
    }

    fn create_run(&self, run: &RunSummary, first: &Checkpoint, events: &[RunEvent]) -> Result<()> {
        let err = self.err("creating", &run.id);
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(&err)?;
        let exists = tx
            .query_row("SELECT 1 FROM runs WHERE id = ?1", [&run.id], |_| Ok(()))
            .optional()
            .map_err(&err)?
            .is_some();
        if exists {
            return Err(Error::RunExists { run_id: run.id.clone() });
        }
        tx.execute(
            "INSERT INTO runs (id, kind, created_ms, updated_ms, status, status_type, node, seq,
                               cancel_requested, metadata)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                run.id,
                run.kind,
                run.created_ms,
                run.updated_ms,
                json(&run.status),
                run.status.name(),
                run.node,
                run.seq as i64,
                run.cancel_requested,
                json(&run.metadata),
            ],
        )
        .map_err(&err)?;
        insert_checkpoint(&tx, first).map_err(&err)?;
        insert_events(&tx, events).map_err(&err)?;
        failpoint::hit("checkpoint uncommitted");
        tx.commit().map_err(&err)
    }

    fn append(&self, checkpoint: Option<&Checkpoint>, events: &[RunEvent]) -> Result<()> {
        let Some(run_id) = checkpoint.map(|c| &c.meta.run_id).or(events.first().map(|e| &e.run_id))
        else {
            return Ok(());
        };
        let err = self.err("appending to", run_id);
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(&err)?;
        if let Some(cp) = checkpoint {
            insert_checkpoint(&tx, cp).map_err(&err)?;
            let m = &cp.meta;
            tx.prepare_cached(
                "UPDATE runs SET status = ?2, status_type = ?3, node = ?4, seq = ?5, updated_ms = ?6
                 WHERE id = ?1",
            )
            .and_then(|mut s| {
                s.execute(params![
                    m.run_id,
                    json(&m.status),
                    m.status.name(),
                    m.node,
                    m.seq as i64,
                    m.time_ms
                ])
            })
            .map_err(&err)?;
        }
        insert_events(&tx, events).map_err(&err)?;
        if checkpoint.is_some() {
            failpoint::hit("checkpoint uncommitted");
        }
        tx.commit().map_err(&err)
    }

    fn run(&self, run_id: &str) -> Result<Option<RunSummary>> {
        self.conn()
            .query_row(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"), [run_id], run_row)
            .optional()
            .map_err(self.err("reading", run_id))
    }

    fn find_runs(&self, word: &str, limit: usize) -> Result<Vec<String>> {
        let conn = self.conn();
        let err = self.err("looking up", word);
        let by_state: Option<String> = conn
            .query_row("SELECT run_id FROM checkpoints WHERE state_id = ?1", [word], |r| r.get(0))
            .optional()
            .map_err(&err)?;
        if let Some(id) = by_state {
            return Ok(vec![id]);
        }
        let exact: Option<String> = conn
            .query_row("SELECT id FROM runs WHERE id = ?1", [word], |r| r.get(0))
            .optional()
            .map_err(&err)?;
        if let Some(id) = exact {
            return Ok(vec![id]);
        }
        let mut stmt = conn
            .prepare_cached(
                "SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT ?2",
            )
            .map_err(&err)?;
        let limit = limit.min(i64::MAX as usize) as i64;
        stmt.query_map(params![word, limit], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(&err)
    }

    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>> {
        let conn = self.conn();
        let limit = filter.limit.map_or(-1, |l| l.min(i64::MAX as usize) as i64);
        let offset = filter.offset.min(i64::MAX as usize) as i64;
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM runs
                 WHERE (?1 IS NULL OR kind = ?1) AND (?2 IS NULL OR status_type = ?2)
                 ORDER BY updated_ms DESC, id LIMIT ?3 OFFSET ?4"
            ))
            .map_err(self.err("listing", "*"))?;
        stmt.query_map(params![filter.kind, filter.status, limit, offset], run_row)
            .and_then(|rows| rows.collect())
            .map_err(self.err("listing", "*"))
    }

    fn latest_checkpoint(&self, run_id: &str) -> Result<Option<Checkpoint>> {
        self.conn()
            .prepare_cached(&format!(
                "SELECT {CHECKPOINT_COLUMNS}, state, input FROM checkpoints
                 WHERE run_id = ?1 ORDER BY seq DESC LIMIT 1"
            ))
            .and_then(|mut s| s.query_row([run_id], checkpoint_row).optional())
            .map_err(self.err("reading the latest checkpoint", run_id))
    }

    fn checkpoint(&self, run_id: &str, seq: u64) -> Result<Option<Checkpoint>> {
        self.conn()
            .query_row(
                &format!(
                    "SELECT {CHECKPOINT_COLUMNS}, state, input FROM checkpoints
                     WHERE run_id = ?1 AND seq = ?2"
                ),
                params![run_id, seq as i64],
                checkpoint_row,
            )
            .optional()
            .map_err(self.err("reading a checkpoint", run_id))
    }

    fn checkpoints(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        let conn = self.conn();
        let err = self.err("reading the checkpoints", run_id);
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE run_id = ?1 ORDER BY seq"
            ))
            .map_err(&err)?;
        stmt.query_map([run_id], meta_row).and_then(|rows| rows.collect()).map_err(&err)
    }

    fn events(&self, run_id: &str, after_seq: u64, limit: usize) -> Result<Vec<RunEvent>> {
        let conn = self.conn();
        let err = self.err("reading the events", run_id);
        let mut stmt = conn
            .prepare_cached(
                "SELECT seq, time_ms, kind FROM events WHERE run_id = ?1 AND seq > ?2
                 ORDER BY seq LIMIT ?3",
            )
            .map_err(&err)?;
        let limit = limit.min(i64::MAX as usize) as i64;
        stmt.query_map(params![run_id, after_seq as i64, limit], |r| {
            Ok(RunEvent {
                run_id: run_id.to_owned(),
                seq: r.get::<_, i64>(0)? as u64,
                time_ms: r.get(1)?,
                kind: decode(r, 2)?,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(&err)
    }

    fn last_event_seq(&self, run_id: &str) -> Result<u64> {
        self.conn()
            .query_row(
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?1",
                [run_id],
                |r| r.get::<_, i64>(0).map(|n| n as u64),
            )
            .map_err(self.err("reading the events", run_id))
    }

    fn request_cancel(&self, run_id: &str) -> Result<bool> {
        self.conn()
            .execute("UPDATE runs SET cancel_requested = 1 WHERE id = ?1", [run_id])
            .map(|n| n > 0)
            .map_err(self.err("cancelling", run_id))
    }

    fn cancel_requested(&self, run_id: &str) -> Result<bool> {
        self.conn()
            .prepare_cached("SELECT cancel_requested FROM runs WHERE id = ?1")
            .and_then(|mut s| s.query_row([run_id], |r| r.get(0)).optional())
            .map(|o| o.unwrap_or(false))
            .map_err(self.err("reading the cancel flag", run_id))
    }

    fn effect(&self, run_id: &str, key: &str) -> Result<Option<Value>> {
        self.conn()
            .prepare_cached("SELECT value FROM effects WHERE run_id = ?1 AND key = ?2")
            .and_then(|mut s| s.query_row([run_id, key], |r| decode(r, 0)).optional())
            .map_err(self.err("reading an effect", run_id))
    }

    fn record_effect(&self, run_id: &str, key: &str, value: &Value) -> Result<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO effects (run_id, key, time_ms, value) VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut s| s.execute(params![run_id, key, crate::runner::now_ms(), json(value)]))
            .map(drop)
            .map_err(self.err("recording an effect", run_id))
    }

    fn enqueue(&self, run_id: &str, input: Option<&Value>, answers: Option<u64>) -> Result<i64> {
        validate_run_id(run_id)?;
        let now = crate::runner::now_ms();
        let conn = self.conn();
        conn.prepare_cached(
            "INSERT INTO jobs (run_id, input, answers, created_ms, due_ms) VALUES (?1, ?2, ?3, ?4, ?4)",
        )
        .and_then(|mut s| {
            s.execute(params![run_id, input.map(json), answers.map(|a| a as i64), now])
        })
        .map(|_| conn.last_insert_rowid())
        .map_err(self.err("queueing a job", run_id))
    }

    fn claim_job(&self) -> Result<Option<Job>> {
        let err = self.err("claiming a job", "*");
        let now = crate::runner::now_ms();
        let job = {
            let mut conn = self.conn();
            let tx =
                conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(&err)?;
            let job = tx
                .prepare_cached(&format!(
                    "SELECT {JOB_COLUMNS} FROM jobs
                     WHERE due_ms <= ?1 AND (owner IS NULL OR lease_until_ms < ?1)
                     ORDER BY id LIMIT 1"
                ))
                .and_then(|mut s| s.query_row([now], job_row).optional())
                .map_err(&err)?;
            let Some(mut job) = job else { return Ok(None) };
            tx.execute(
                "UPDATE jobs SET owner = ?2, lease_until_ms = ?3, attempts = attempts + 1
                 WHERE id = ?1",
                params![job.id, self.owner, now + self.lease.as_millis() as i64],
            )
            .map_err(&err)?;
            tx.commit().map_err(&err)?;
            job.attempts += 1;
            job
        };
        self.start_heartbeat()?;
        Ok(Some(job))
    }

    fn release_job(&self, id: i64, delay: Duration) -> Result<()> {
        let due = crate::runner::now_ms() + delay.as_millis() as i64;
        self.conn()
            .execute(
                "UPDATE jobs SET owner = NULL, lease_until_ms = 0, due_ms = ?3
                 WHERE id = ?1 AND owner = ?2",
                params![id, self.owner, due],
            )
            .map(drop)
            .map_err(self.err("releasing a job", &id.to_string()))
    }

    fn finish_job(&self, id: i64) -> Result<()> {
        self.conn()
            .execute("DELETE FROM jobs WHERE id = ?1", [id])
            .map(drop)
            .map_err(self.err("finishing a job", &id.to_string()))
    }

    fn jobs(&self) -> Result<Vec<Job>> {
        let conn = self.conn();
        let err = self.err("listing jobs", "*");
        let mut stmt = conn
            .prepare_cached(&format!("SELECT {JOB_COLUMNS} FROM jobs ORDER BY id"))
            .map_err(&err)?;
        stmt.query_map([], job_row).and_then(|rows| rows.collect()).map_err(&err)
    }
}

const JOB_COLUMNS: &str = "id, run_id, input, answers, attempts";

fn job_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Job> {
    let input: Option<String> = r.get(2)?;
    Ok(Job {
        id: r.get(0)?,
        run_id: r.get(1)?,
        input: match input {
            None => None,
            Some(_) => Some(decode(r, 2)?),
        },
        answers: r.get::<_, Option<i64>>(3)?.map(|a| a as u64),
        attempts: r.get(4)?,
    })
}

#[cfg(test)]
mod tests {
    use protocol::RunStatus;

    use super::*;

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(SqliteStore::open(dir.path()).unwrap());
        let conn = Connection::open(dir.path().join("workflow.db")).unwrap();
        conn.pragma_update(None, "user_version", 3).unwrap();
        drop(conn);
        let err = SqliteStore::open(dir.path()).err().unwrap();
        assert!(err.to_string().contains("schema 3 is newer"), "{err}");
        assert_eq!(err.code(), protocol::ErrorCode::Io);
    }

    #[test]
    fn reopening_keeps_the_schema_and_the_data() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        store.conn().execute("INSERT INTO runs VALUES ('r','k',1,1,'{\"type\":\"running\"}','running','A',1,0,'null')", []).unwrap();
        drop(store);
        let store = SqliteStore::open(dir.path()).unwrap();
        assert_eq!(store.run("r").unwrap().unwrap().status, RunStatus::Running);
        assert!(dir.path().join("locks").is_dir());
    }
}
