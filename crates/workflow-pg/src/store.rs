//! [`PgStore`]: the schema, its migration, and the trait's calls.

use std::{sync::Arc, time::Duration};

use postgres::{Row, Transaction};
use protocol::{CheckpointMeta, RunEvent, RunSummary};
use serde_json::Value;
use workflow::{
    Checkpoint, CheckpointStore, DEFAULT_LEASE, Error, Heartbeat, Job, Result, RunFilter, RunLock,
    lease_owner, validate_run_id,
};

use crate::pool::Pool;

/// The database's clock in milliseconds since the epoch.
const NOW_MS: &str = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

const SCHEMA_VERSION: i32 = 1;

const SCHEMA: &str = "
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    status TEXT NOT NULL,
    status_type TEXT NOT NULL,
    node TEXT NOT NULL,
    seq BIGINT NOT NULL,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
    metadata TEXT NOT NULL
);
CREATE INDEX runs_updated ON runs(updated_ms);
CREATE TABLE checkpoints (
    run_id TEXT NOT NULL REFERENCES runs(id),
    seq BIGINT NOT NULL,
    state_id TEXT NOT NULL UNIQUE,
    node TEXT NOT NULL,
    iteration BIGINT NOT NULL,
    time_ms BIGINT NOT NULL,
    status TEXT NOT NULL,
    state TEXT NOT NULL,
    input TEXT,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE events (
    run_id TEXT NOT NULL REFERENCES runs(id),
    seq BIGINT NOT NULL,
    time_ms BIGINT NOT NULL,
    kind TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE effects (
    run_id TEXT NOT NULL REFERENCES runs(id),
    key TEXT NOT NULL,
    time_ms BIGINT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE TABLE jobs (
    id BIGSERIAL PRIMARY KEY,
    run_id TEXT NOT NULL,
    input TEXT,
    answers BIGINT,
    created_ms BIGINT NOT NULL,
    due_ms BIGINT NOT NULL,
    owner TEXT,
    lease_until TIMESTAMPTZ,
    attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_due ON jobs(due_ms, id);
CREATE TABLE run_leases (
    run_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE FUNCTION ironbees_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% rows are immutable', TG_TABLE_NAME; END $$;
CREATE FUNCTION ironbees_next_seq() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE last BIGINT;
BEGIN
    EXECUTE format('SELECT COALESCE(MAX(seq), 0) FROM %I.%I WHERE run_id = $1',
                   TG_TABLE_SCHEMA, TG_TABLE_NAME) INTO last USING NEW.run_id;
    IF NEW.seq <> last + 1 THEN
        RAISE EXCEPTION '% seq % is not the next one of run % (%)', TG_TABLE_NAME, NEW.seq, NEW.run_id, last + 1;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER checkpoints_in_order BEFORE INSERT ON checkpoints
    FOR EACH ROW EXECUTE FUNCTION ironbees_next_seq();
CREATE TRIGGER checkpoints_immutable BEFORE UPDATE OR DELETE ON checkpoints
    FOR EACH ROW EXECUTE FUNCTION ironbees_immutable();
CREATE TRIGGER events_in_order BEFORE INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION ironbees_next_seq();
CREATE TRIGGER events_immutable BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION ironbees_immutable();
CREATE TRIGGER effects_immutable BEFORE UPDATE OR DELETE ON effects
    FOR EACH ROW EXECUTE FUNCTION ironbees_immutable();
";

/// How a [`PgStore`] connects and leases.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// How long a run lease or a job claim lasts without renewal; renewed every
    /// third of it. A dead replica's runs are taken over after about this long.
    pub lease: Duration,
    /// Keep the tables in this schema (created if missing) instead of the
    /// connection's default: several stores in one database (tests, tenants).
    pub schema: Option<String>,
    /// Connections kept open between calls.
    pub pool: usize,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions { lease: DEFAULT_LEASE, schema: None, pool: 8 }
    }
}

struct Inner {
    pool: Pool,
    owner: String,
    lease: Duration,
}

/// [`CheckpointStore`] on PostgreSQL; see the crate's documentation.
pub struct PgStore {
    inner: Arc<Inner>,
    _heartbeat: Heartbeat,
}

impl PgStore {
    /// Connects (a `postgres://` URL or a `key=value` connection string),
    /// creates or migrates the schema, and starts renewing this store's leases.
    pub fn connect(url: &str, options: PgOptions) -> Result<PgStore> {
        if let Some(s) = &options.schema {
            let ok = !s.is_empty()
                && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !ok {
                return Err(Error::store(
                    format!("schema name {s:?}"),
                    std::io::Error::other("use lowercase letters, digits and '_'"),
                ));
            }
        }
        let pool = Pool::new(url, options.schema.clone(), options.pool.max(1))?;
        migrate(&pool)?;
        let inner = Arc::new(Inner {
            pool,
            owner: lease_owner(),
            lease: options.lease.max(Duration::from_millis(30)),
        });
        let hb = Arc::clone(&inner);
        let heartbeat = Heartbeat::start("ironbees-pg-lease", inner.lease / 3, move || {
            if let Err(e) = hb.renew() {
                tracing::warn!(error = %e, "renewing leases");
            }
        });
        Ok(PgStore { inner, _heartbeat: heartbeat })
    }

    /// This store's name as a lease holder.
    pub fn owner(&self) -> &str {
        &self.inner.owner
    }
}

/// Creates the schema once, under an advisory lock so that replicas starting
/// together do not race.
fn migrate(pool: &Pool) -> Result<()> {
    let ctx = || format!("creating the schema in {}", pool.shown);
    let mut c = pool.get()?;
    let mut tx = c.transaction().map_err(|e| Error::store(ctx(), e))?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(7450231098);
         CREATE TABLE IF NOT EXISTS ironbees_schema (version INTEGER NOT NULL)",
    )
    .map_err(|e| Error::store(ctx(), e))?;
    let version: i32 = tx
        .query_opt("SELECT version FROM ironbees_schema", &[])
        .map_err(|e| Error::store(ctx(), e))?
        .map_or(0, |r| r.get(0));
    if version > SCHEMA_VERSION {
        return Err(Error::Corrupt {
            context: ctx(),
            reason: format!(
                "schema {version} is newer than this ironbees supports ({SCHEMA_VERSION})"
            ),
        });
    }
    if version < 1 {
        tx.batch_execute(SCHEMA).map_err(|e| Error::store(ctx(), e))?;
        tx.execute("INSERT INTO ironbees_schema (version) VALUES (1)", &[])
            .map_err(|e| Error::store(ctx(), e))?;
    }
    tx.commit().map_err(|e| Error::store(ctx(), e))
}

impl Inner {
    /// Runs `f` with a pooled connection. A `postgres` client blocks on its own
    /// runtime, which tokio forbids on a thread already inside one (an agent's
    /// node streaming a model answer emits events from within `block_on`):
    /// there, `f` runs on a short-lived thread of its own.
    fn run<T: Send>(&self, f: impl FnOnce(&mut postgres::Client) -> Result<T> + Send) -> Result<T> {
        let call = || {
            let mut c = self.pool.get()?;
            f(&mut c)
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return call();
        }
        std::thread::scope(|scope| {
            scope.spawn(call).join().unwrap_or_else(|_| {
                Err(Error::store("a database call", std::io::Error::other("it panicked")))
            })
        })
    }

    fn err(&self, what: &str, run_id: &str) -> impl Fn(postgres::Error) -> Error + use<> {
        let context = format!("{what} of run {run_id:?} in {}", self.pool.shown);
        move |e| Error::store(context.clone(), e)
    }

    fn lease_secs(&self) -> f64 {
        self.lease.as_secs_f64()
    }

    fn renew(&self) -> Result<()> {
        let err = self.err("renewing leases", "*");
        let secs = self.lease_secs();
        self.run(|c| {
            c.execute(
                "UPDATE run_leases SET expires_at = clock_timestamp() + make_interval(secs => $2)
             WHERE owner = $1",
                &[&self.owner, &secs],
            )
            .map_err(&err)?;
            c.execute(
                "UPDATE jobs SET lease_until = clock_timestamp() + make_interval(secs => $2)
             WHERE owner = $1",
                &[&self.owner, &secs],
            )
            .map_err(&err)?;
            Ok(())
        })
    }

    /// Fails unless this store holds the run's lease; keeps it held (`FOR
    /// SHARE`) until `tx` ends, so no takeover commits in between.
    fn fence(&self, tx: &mut Transaction<'_>, run_id: &str) -> Result<()> {
        let holder: Option<String> = tx
            .query_opt("SELECT owner FROM run_leases WHERE run_id = $1 FOR SHARE", &[&run_id])
            .map_err(self.err("checking the lease", run_id))?
            .map(|r| r.get(0));
        match holder {
            Some(h) if h == self.owner => Ok(()),
            other => Err(Error::Busy {
                run_id: run_id.to_owned(),
                holder: match other {
                    Some(h) => format!(" by {h}: this process lost its lease"),
                    None => " by nobody: this process does not hold its lease".into(),
                },
            }),
        }
    }
}

/// Held while this process executes a run; drops the lease row when dropped.
struct Lease {
    inner: Arc<Inner>,
    run_id: String,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let done = self.inner.run(|c| {
            c.execute(
                "DELETE FROM run_leases WHERE run_id = $1 AND owner = $2",
                &[&self.run_id, &self.inner.owner],
            )
            .map_err(self.inner.err("releasing the lease", &self.run_id))
            .map(drop)
        });
        if let Err(e) = done {
            // It runs out by itself.
            tracing::warn!(run = %self.run_id, error = %e, "releasing a run lease");
        }
    }
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("wire types serialize")
}

fn decode<T: serde::de::DeserializeOwned>(r: &Row, i: usize, what: &str) -> Result<T> {
    let text: String = r.get(i);
    serde_json::from_str(&text)
        .map_err(|e| Error::Corrupt { context: what.to_owned(), reason: e.to_string() })
}

const RUN_COLUMNS: &str =
    "id, kind, created_ms, updated_ms, status, node, seq, cancel_requested, metadata";

fn run_row(r: &Row) -> Result<RunSummary> {
    Ok(RunSummary {
        id: r.get(0),
        kind: r.get(1),
        created_ms: r.get(2),
        updated_ms: r.get(3),
        status: decode(r, 4, "a run's status")?,
        node: r.get(5),
        seq: r.get::<_, i64>(6) as u64,
        cancel_requested: r.get(7),
        metadata: decode(r, 8, "a run's metadata")?,
    })
}

const CHECKPOINT_COLUMNS: &str = "run_id, seq, state_id, node, iteration, time_ms, status";

fn meta_row(r: &Row) -> Result<CheckpointMeta> {
    Ok(CheckpointMeta {
        run_id: r.get(0),
        seq: r.get::<_, i64>(1) as u64,
        state_id: r.get(2),
        node: r.get(3),
        iteration: r.get::<_, i64>(4) as u32,
        time_ms: r.get(5),
        status: decode(r, 6, "a checkpoint's status")?,
    })
}

fn checkpoint_row(r: &Row) -> Result<Checkpoint> {
    let input: Option<String> = r.get(8);
    Ok(Checkpoint {
        meta: meta_row(r)?,
        state: decode(r, 7, "a checkpoint's state")?,
        input: match input {
            None => None,
            Some(_) => Some(decode(r, 8, "a checkpoint's input")?),
        },
    })
}

const JOB_COLUMNS: &str = "id, run_id, input, answers, attempts";

fn job_row(r: &Row) -> Result<Job> {
    let input: Option<String> = r.get(2);
    Ok(Job {
        id: r.get(0),
        run_id: r.get(1),
        input: match input {
            None => None,
            Some(_) => Some(decode(r, 2, "a job's input")?),
        },
        answers: r.get::<_, Option<i64>>(3).map(|a| a as u64),
        attempts: r.get::<_, i32>(4) as u32,
    })
}

fn insert_checkpoint(
    tx: &mut Transaction<'_>,
    cp: &Checkpoint,
) -> std::result::Result<(), postgres::Error> {
    let m = &cp.meta;
    tx.execute(
        "INSERT INTO checkpoints (run_id, seq, state_id, node, iteration, time_ms, status, state, input)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        &[
            &m.run_id,
            &(m.seq as i64),
            &m.state_id,
            &m.node,
            &i64::from(m.iteration),
            &m.time_ms,
            &json(&m.status),
            &json(&cp.state),
            &cp.input.as_ref().map(json),
        ],
    )?;
    Ok(())
}

fn insert_events(
    tx: &mut Transaction<'_>,
    events: &[RunEvent],
) -> std::result::Result<(), postgres::Error> {
    if events.is_empty() {
        return Ok(());
    }
    let stmt =
        tx.prepare("INSERT INTO events (run_id, seq, time_ms, kind) VALUES ($1, $2, $3, $4)")?;
    for e in events {
        tx.execute(&stmt, &[&e.run_id, &(e.seq as i64), &e.time_ms, &json(&e.kind)])?;
    }
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl CheckpointStore for PgStore {
    fn try_lock_run(&self, run_id: &str) -> Result<RunLock> {
        validate_run_id(run_id)?;
        let s = &self.inner;
        let err = s.err("leasing", run_id);
        s.run(|c| {
            let taken = c
                .query_opt(
                    "INSERT INTO run_leases (run_id, owner, expires_at)
                 VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3))
                 ON CONFLICT (run_id) DO UPDATE
                     SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
                     WHERE run_leases.expires_at < clock_timestamp()
                 RETURNING run_id",
                    &[&run_id, &s.owner, &s.lease_secs()],
                )
                .map_err(&err)?
                .is_some();
            if taken {
                return Ok(RunLock::new(Lease { inner: Arc::clone(s), run_id: run_id.to_owned() }));
            }
            let holder: Option<String> = c
                .query_opt("SELECT owner FROM run_leases WHERE run_id = $1", &[&run_id])
                .map_err(&err)?
                .map(|r| r.get(0));
            Err(Error::Busy {
                run_id: run_id.to_owned(),
                holder: holder.map(|h| format!(" ({h})")).unwrap_or_default(),
            })
        })
    }

    fn create_run(&self, run: &RunSummary, first: &Checkpoint, events: &[RunEvent]) -> Result<()> {
        let s = &self.inner;
        let err = s.err("creating", &run.id);
        s.run(|c| {
            let mut tx = c.transaction().map_err(&err)?;
            s.fence(&mut tx, &run.id)?;
            let inserted = tx
            .execute(
                "INSERT INTO runs (id, kind, created_ms, updated_ms, status, status_type, node, seq,
                                   cancel_requested, metadata)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                 ON CONFLICT (id) DO NOTHING",
                &[
                    &run.id,
                    &run.kind,
                    &run.created_ms,
                    &run.updated_ms,
                    &json(&run.status),
                    &run.status.name(),
                    &run.node,
                    &(run.seq as i64),
                    &run.cancel_requested,
                    &json(&run.metadata),
                ],
            )
            .map_err(&err)?;
            if inserted == 0 {
                return Err(Error::RunExists { run_id: run.id.clone() });
            }
            insert_checkpoint(&mut tx, first).map_err(&err)?;
            insert_events(&mut tx, events).map_err(&err)?;
            workflow::crash_point("checkpoint uncommitted");
            tx.commit().map_err(&err)
        })
    }

    fn append(&self, checkpoint: Option<&Checkpoint>, events: &[RunEvent]) -> Result<()> {
        let Some(run_id) = checkpoint.map(|c| &c.meta.run_id).or(events.first().map(|e| &e.run_id))
        else {
            return Ok(());
        };
        let s = &self.inner;
        let err = s.err("appending to", run_id);
        s.run(|c| {
        let mut tx = c.transaction().map_err(&err)?;
        s.fence(&mut tx, run_id)?;
        if let Some(cp) = checkpoint {
            insert_checkpoint(&mut tx, cp).map_err(&err)?;
            let m = &cp.meta;
            tx.execute(
                "UPDATE runs SET status = $2, status_type = $3, node = $4, seq = $5, updated_ms = $6
                 WHERE id = $1",
                &[&m.run_id, &json(&m.status), &m.status.name(), &m.node, &(m.seq as i64), &m.time_ms],
            )
            .map_err(&err)?;
        }
        insert_events(&mut tx, events).map_err(&err)?;
        if checkpoint.is_some() {
            workflow::crash_point("checkpoint uncommitted");
        }
        tx.commit().map_err(&err)
        })
    }

    fn run(&self, run_id: &str) -> Result<Option<RunSummary>> {
        let s = &self.inner;
        let row = s.run(|c| {
            c.query_opt(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"), &[&run_id])
                .map_err(s.err("reading", run_id))
        })?;
        row.as_ref().map(run_row).transpose()
    }

    fn find_runs(&self, word: &str, limit: usize) -> Result<Vec<String>> {
        let s = &self.inner;
        let err = s.err("looking up", word);
        s.run(|c| {
            if let Some(r) = c
                .query_opt("SELECT run_id FROM checkpoints WHERE state_id = $1", &[&word])
                .map_err(&err)?
            {
                return Ok(vec![r.get(0)]);
            }
            if let Some(r) =
                c.query_opt("SELECT id FROM runs WHERE id = $1", &[&word]).map_err(&err)?
            {
                return Ok(vec![r.get(0)]);
            }
            let limit = limit.min(i64::MAX as usize) as i64;
            let rows = c
                .query(
                    "SELECT id FROM runs WHERE left(id, length($1)) = $1 ORDER BY id LIMIT $2",
                    &[&word, &limit],
                )
                .map_err(&err)?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>> {
        let s = &self.inner;
        let limit = filter.limit.map_or(i64::MAX, |l| l.min(i64::MAX as usize) as i64);
        let offset = filter.offset.min(i64::MAX as usize) as i64;
        let rows = s.run(|c| c
            .query(
                &format!(
                    "SELECT {RUN_COLUMNS} FROM runs
                     WHERE ($1::text IS NULL OR kind = $1) AND ($2::text IS NULL OR status_type = $2)
                     ORDER BY updated_ms DESC, id LIMIT $3 OFFSET $4"
                ),
                &[&filter.kind, &filter.status, &limit, &offset],
            )
            .map_err(s.err("listing", "*")))?;
        rows.iter().map(run_row).collect()
    }

    fn latest_checkpoint(&self, run_id: &str) -> Result<Option<Checkpoint>> {
        let s = &self.inner;
        let row = s.run(|c| {
            c.query_opt(
                &format!(
                    "SELECT {CHECKPOINT_COLUMNS}, state, input FROM checkpoints
                     WHERE run_id = $1 ORDER BY seq DESC LIMIT 1"
                ),
                &[&run_id],
            )
            .map_err(s.err("reading the latest checkpoint", run_id))
        })?;
        row.as_ref().map(checkpoint_row).transpose()
    }

    fn checkpoint(&self, run_id: &str, seq: u64) -> Result<Option<Checkpoint>> {
        let s = &self.inner;
        let row = s.run(|c| {
            c.query_opt(
                &format!(
                    "SELECT {CHECKPOINT_COLUMNS}, state, input FROM checkpoints
                     WHERE run_id = $1 AND seq = $2"
                ),
                &[&run_id, &(seq as i64)],
            )
            .map_err(s.err("reading a checkpoint", run_id))
        })?;
        row.as_ref().map(checkpoint_row).transpose()
    }

    fn checkpoints(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        let s = &self.inner;
        let rows = s.run(|c| {
            c.query(
                &format!(
                    "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE run_id = $1 ORDER BY seq"
                ),
                &[&run_id],
            )
            .map_err(s.err("reading the checkpoints", run_id))
        })?;
        rows.iter().map(meta_row).collect()
    }

    fn events(&self, run_id: &str, after_seq: u64, limit: usize) -> Result<Vec<RunEvent>> {
        let s = &self.inner;
        let limit = limit.min(i64::MAX as usize) as i64;
        let rows = s.run(|c| {
            c.query(
                "SELECT seq, time_ms, kind FROM events WHERE run_id = $1 AND seq > $2
                 ORDER BY seq LIMIT $3",
                &[&run_id, &(after_seq as i64), &limit],
            )
            .map_err(s.err("reading the events", run_id))
        })?;
        rows.iter()
            .map(|r| {
                Ok(RunEvent {
                    run_id: run_id.to_owned(),
                    seq: r.get::<_, i64>(0) as u64,
                    time_ms: r.get(1),
                    kind: decode(r, 2, "an event")?,
                })
            })
            .collect()
    }

    fn last_event_seq(&self, run_id: &str) -> Result<u64> {
        let s = &self.inner;
        let row = s.run(|c| {
            c.query_one("SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = $1", &[&run_id])
                .map_err(s.err("reading the events", run_id))
        })?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    fn request_cancel(&self, run_id: &str) -> Result<bool> {
        let s = &self.inner;
        let n = s.run(|c| {
            c.execute("UPDATE runs SET cancel_requested = TRUE WHERE id = $1", &[&run_id])
                .map_err(s.err("cancelling", run_id))
        })?;
        Ok(n > 0)
    }

    fn cancel_requested(&self, run_id: &str) -> Result<bool> {
        let s = &self.inner;
        let row = s.run(|c| {
            c.query_opt("SELECT cancel_requested FROM runs WHERE id = $1", &[&run_id])
                .map_err(s.err("reading the cancel flag", run_id))
        })?;
        Ok(row.is_some_and(|r| r.get(0)))
    }

    fn effect(&self, run_id: &str, key: &str) -> Result<Option<Value>> {
        let s = &self.inner;
        let row = s.run(|c| {
            c.query_opt(
                "SELECT value FROM effects WHERE run_id = $1 AND key = $2",
                &[&run_id, &key],
            )
            .map_err(s.err("reading an effect", run_id))
        })?;
        row.as_ref().map(|r| decode(r, 0, "an effect")).transpose()
    }

    fn record_effect(&self, run_id: &str, key: &str, value: &Value) -> Result<()> {
        let s = &self.inner;
        let err = s.err("recording an effect", run_id);
        s.run(|c| {
            let mut tx = c.transaction().map_err(&err)?;
            s.fence(&mut tx, run_id)?;
            tx.execute(
                "INSERT INTO effects (run_id, key, time_ms, value) VALUES ($1, $2, $3, $4)",
                &[&run_id, &key, &now_ms(), &json(value)],
            )
            .map_err(&err)?;
            tx.commit().map_err(&err)
        })
    }

    fn enqueue(&self, run_id: &str, input: Option<&Value>, answers: Option<u64>) -> Result<i64> {
        validate_run_id(run_id)?;
        let s = &self.inner;
        let row = s.run(|c| {
            c.query_one(
                &format!(
                    "INSERT INTO jobs (run_id, input, answers, created_ms, due_ms)
                     VALUES ($1, $2, $3, {NOW_MS}, {NOW_MS}) RETURNING id"
                ),
                &[&run_id, &input.map(json), &answers.map(|a| a as i64)],
            )
            .map_err(s.err("queueing a job", run_id))
        })?;
        Ok(row.get(0))
    }

    fn claim_job(&self) -> Result<Option<Job>> {
        let s = &self.inner;
        let row = s.run(|c| {
            c.query_opt(
                &format!(
                    "UPDATE jobs SET owner = $1,
                         lease_until = clock_timestamp() + make_interval(secs => $2),
                         attempts = attempts + 1
                     WHERE id = (
                         SELECT id FROM jobs
                         WHERE due_ms <= {NOW_MS}
                           AND (owner IS NULL OR lease_until < clock_timestamp())
                         ORDER BY id
                         FOR UPDATE SKIP LOCKED
                         LIMIT 1)
                     RETURNING {JOB_COLUMNS}"
                ),
                &[&s.owner, &s.lease_secs()],
            )
            .map_err(s.err("claiming a job", "*"))
        })?;
        row.as_ref().map(job_row).transpose()
    }

    fn release_job(&self, id: i64, delay: Duration) -> Result<()> {
        let s = &self.inner;
        let delay_ms = delay.as_millis().min(i64::MAX as u128) as i64;
        s.run(|c| {
            c.execute(
                &format!(
                    "UPDATE jobs SET owner = NULL, lease_until = NULL, due_ms = {NOW_MS} + $3
                     WHERE id = $1 AND owner = $2"
                ),
                &[&id, &s.owner, &delay_ms],
            )
            .map_err(s.err("releasing a job", &id.to_string()))
        })?;
        Ok(())
    }

    fn finish_job(&self, id: i64) -> Result<()> {
        let s = &self.inner;
        s.run(|c| {
            c.execute("DELETE FROM jobs WHERE id = $1", &[&id])
                .map_err(s.err("finishing a job", &id.to_string()))
        })?;
        Ok(())
    }

    fn jobs(&self) -> Result<Vec<Job>> {
        let s = &self.inner;
        let rows = s.run(|c| {
            c.query(&format!("SELECT {JOB_COLUMNS} FROM jobs ORDER BY id"), &[])
                .map_err(s.err("listing jobs", "*"))
        })?;
        rows.iter().map(job_row).collect()
    }
}
