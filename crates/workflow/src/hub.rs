//! Following a run's events as they are written: stored events first, then new
//! ones as they come, from any process.
//!
//! Events are rows in the store, so a subscriber only needs to know when to read
//! again. Within the process that executes the run, the journal tells an
//! [`EventHub`] after every commit and a waiting subscriber wakes at once; a run
//! executed by another process (another `ironbees` command, another replica) is
//! seen by reading the store again every poll interval. Either way a subscriber
//! reads from its cursor, so it never misses or repeats an event.

use std::{
    collections::HashMap,
    sync::{Arc, Condvar, Mutex},
    time::{Duration, Instant},
};

use protocol::RunEvent;

use crate::{error::Result, store::CheckpointStore};

/// Tells subscribers in this process that a run has new events.
#[derive(Debug, Default)]
pub struct EventHub {
    /// The latest event `seq` published per run.
    latest: Mutex<HashMap<String, u64>>,
    changed: Condvar,
}

impl EventHub {
    pub(crate) fn published(&self, run_id: &str, seq: u64) {
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        let entry = latest.entry(run_id.to_owned()).or_default();
        *entry = (*entry).max(seq);
        drop(latest);
        self.changed.notify_all();
    }

    /// Waits until this process publishes an event of `run_id` after `after`, or
    /// `timeout` passes. True when one was published.
    fn wait(&self, run_id: &str, after: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if latest.get(run_id).is_some_and(|&s| s > after) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            latest = self
                .changed
                .wait_timeout(latest, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

/// One subscriber's view of a run's events: a cursor into them.
pub struct Subscription {
    pub(crate) store: Arc<dyn CheckpointStore>,
    pub(crate) hub: Arc<EventHub>,
    pub(crate) run_id: String,
    pub(crate) cursor: u64,
    /// How often the store is read again while no event of this process comes
    /// (events another process writes).
    pub(crate) poll: Duration,
}

/// Events read from the store at once, at most.
const BATCH: usize = 500;

impl Subscription {
    /// The events after the cursor, waiting up to `wait` for the first of them;
    /// empty when none came in that time. The cursor moves past what is returned.
    pub fn next_batch(&mut self, wait: Duration) -> Result<Vec<RunEvent>> {
        let deadline = Instant::now() + wait;
        loop {
            let events = self.store.events(&self.run_id, self.cursor, BATCH)?;
            if let Some(last) = events.last() {
                self.cursor = last.seq;
                return Ok(events);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(events);
            }
            self.hub.wait(&self.run_id, self.cursor, (deadline - now).min(self.poll));
        }
    }

    /// The `seq` of the last event returned (or the one the subscription started
    /// after).
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }
}
