//! The storage boundary. JSON in, JSON out, nothing SQLite-specific: SQLite
//! (`SqliteStore`, embedded) and PostgreSQL (the `workflow-pg` crate, for replicas)
//! implement it, and the same tests run against both.

use protocol::{CheckpointMeta, RunEvent, RunSummary};
use serde_json::Value;

use crate::error::{Error, Result};

/// A checkpoint row: its metadata, the state as JSON, and the input the run was
/// resumed with (present on the checkpoint a `resume` writes, so that a crash
/// before the resumed node finishes does not lose the human's answer).
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    pub meta: CheckpointMeta,
    pub state: Value,
    pub input: Option<Value>,
}

/// Which runs [`CheckpointStore::list_runs`] returns, most recently updated first.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    pub kind: Option<String>,
    /// A status's `type` tag (`waiting`, `running`, ...; `RunStatus::name`).
    pub status: Option<String>,
    /// At most this many (all when `None`).
    pub limit: Option<usize>,
    /// Skip this many first (paging).
    pub offset: usize,
}

/// A submission waiting in the work queue: drive `run_id`, with `input` (a
/// human's answer) for the checkpoint `answers`. Any process sharing the store
/// may claim it; the claim is a lease its store renews while the process lives,
/// so a job whose process died is claimed again.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: i64,
    pub run_id: String,
    pub input: Option<Value>,
    /// The checkpoint `seq` the job was made for (see `RunOptions::answers`).
    pub answers: Option<u64>,
    /// Times the job was claimed, this claim included.
    pub attempts: u32,
}

/// Proof that this process executes a run; the run is released when it drops
/// (and by the operating system when the process dies).
pub struct RunLock(#[allow(dead_code)] Box<dyn Send + Sync>); // held only to be dropped

impl RunLock {
    /// Wraps whatever holds the backend's lock (an open locked file, a database
    /// session holding an advisory lock).
    pub fn new(guard: impl Send + Sync + 'static) -> RunLock {
        RunLock(Box::new(guard))
    }
}

/// Where runs, checkpoints, events and effects live.
///
/// Contract: checkpoint and event rows are append-only and never change; their
/// `seq`s are 1, 2, 3, ... per run (an append with any other `seq` fails); a
/// checkpoint and the events appended with it commit together, and the run's
/// summary follows its latest checkpoint in the same commit. Only the holder of a
/// run's lock appends to it.
pub trait CheckpointStore: Send + Sync {
    /// Takes the run's exclusive lock, or fails with [`Error::Busy`]. The run need
    /// not exist yet (`start` locks before creating it).
    fn try_lock_run(&self, run_id: &str) -> Result<RunLock>;

    /// Creates a run with its first checkpoint and events, or fails with
    /// [`Error::RunExists`].
    fn create_run(&self, run: &RunSummary, first: &Checkpoint, events: &[RunEvent]) -> Result<()>;

    /// Appends a checkpoint (updating the run's summary) and/or events, atomically.
    fn append(&self, checkpoint: Option<&Checkpoint>, events: &[RunEvent]) -> Result<()>;

    fn run(&self, run_id: &str) -> Result<Option<RunSummary>>;

    /// The ids of runs a person's word may mean: the run whose checkpoint has this
    /// `stateId`, the run with this id, or the runs whose ids start with it (at
    /// most `limit`).
    fn find_runs(&self, word: &str, limit: usize) -> Result<Vec<String>>;

    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>>;

    fn latest_checkpoint(&self, run_id: &str) -> Result<Option<Checkpoint>>;

    fn checkpoint(&self, run_id: &str, seq: u64) -> Result<Option<Checkpoint>>;

    /// Every checkpoint's metadata, oldest first.
    fn checkpoints(&self, run_id: &str) -> Result<Vec<CheckpointMeta>>;

    /// Events with `seq > after_seq`, oldest first, at most `limit`.
    fn events(&self, run_id: &str, after_seq: u64, limit: usize) -> Result<Vec<RunEvent>>;

    /// The `seq` of the run's latest event (0 when none).
    fn last_event_seq(&self, run_id: &str) -> Result<u64>;

    /// Sets the run's cancel flag; false when there is no such run.
    fn request_cancel(&self, run_id: &str) -> Result<bool>;

    fn cancel_requested(&self, run_id: &str) -> Result<bool>;

    /// The recorded result of the run's effect `key`.
    fn effect(&self, run_id: &str, key: &str) -> Result<Option<Value>>;

    /// Records an effect's result; recording a key twice is an error.
    fn record_effect(&self, run_id: &str, key: &str, value: &Value) -> Result<()>;

    /// Queues a job; returns its id. Jobs are claimed oldest first.
    fn enqueue(&self, run_id: &str, input: Option<&Value>, answers: Option<u64>) -> Result<i64>;

    /// Claims the oldest job that is due and that no live process holds (never
    /// claimed, released, or claimed by a process whose lease ran out). The claim
    /// is leased to this store, which renews it until the job is finished or
    /// released, or the process dies. Concurrent claimers never get the same job.
    fn claim_job(&self) -> Result<Option<Job>>;

    /// Gives a claimed job back to the queue, due again after `delay`.
    fn release_job(&self, id: i64, delay: std::time::Duration) -> Result<()>;

    /// Removes a job that is done (or no longer means anything).
    fn finish_job(&self, id: i64) -> Result<()>;

    /// Jobs waiting or claimed, oldest first (for status pages and tests).
    fn jobs(&self) -> Result<Vec<Job>>;
}

/// Run ids name lock files and appear in URLs: `[A-Za-z0-9._-]`, 1 to 100
/// characters, not starting with a dot. (Public for other stores.)
pub fn validate_run_id(run_id: &str) -> Result<()> {
    let reason = if run_id.is_empty() || run_id.len() > 100 {
        "must be 1 to 100 characters"
    } else if run_id.starts_with('.') {
        "must not start with a dot"
    } else if !run_id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) {
        "may contain only letters, digits, '.', '_' and '-'"
    } else {
        return Ok(());
    };
    Err(Error::InvalidRunId { run_id: run_id.to_owned(), reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_safe_file_names() {
        for ok in ["r1", "agent-2026.11.27_a", "A", &"x".repeat(100)] {
            assert!(validate_run_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".hidden", "..", "a/b", "a b", "ü", &"x".repeat(101), "a\\b"] {
            assert!(validate_run_id(bad).is_err(), "{bad}");
        }
    }
}
