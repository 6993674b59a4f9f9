//! Fan-out of a run's events to many streaming clients.
//!
//! One loader per watched run (a blocking thread following the store with a
//! `workflow::Subscription`, woken at once by this process's commits, by polling
//! for other processes') appends each event, rendered to JSON once, to the
//! run's feed and tells the clients. Each client is a cursor into the feed: it
//! starts after its `Last-Event-ID` and takes every event after it, so a client
//! that reconnects misses nothing and sees nothing twice. A feed whose run has
//! finished, or that nobody has watched for a while, is dropped; a new client
//! loads it again from the store.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use agent::Orchestrator;
use protocol::{RunEvent, RunEventKind};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// One event as clients receive it.
pub(crate) struct Item {
    pub(crate) seq: u64,
    pub(crate) json: Arc<str>,
    /// An execution stopped here: the run waits, paused, or ended (an `execute`
    /// stream ends after it).
    pub(crate) stops: bool,
    /// The checkpoint this event reports (`checkpoint` events).
    pub(crate) checkpoint: Option<u64>,
}

/// A run's events so far.
pub(crate) struct Feed {
    items: RwLock<Vec<Arc<Item>>>,
    /// The number of events loaded (the last `seq`).
    loaded: watch::Sender<u64>,
    /// The run is finished and every event is loaded; or the loader failed.
    closed: AtomicBool,
}

impl Feed {
    /// The events after `cursor` (a `seq`), oldest first.
    pub(crate) fn after(&self, cursor: u64) -> Vec<Arc<Item>> {
        let items = self.items.read().unwrap_or_else(|p| p.into_inner());
        let from = (cursor as usize).min(items.len());
        items[from..].to_vec()
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.loaded.subscribe()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    pub(crate) fn len(&self) -> u64 {
        *self.loaded.borrow()
    }
}

/// The feeds of the runs being watched.
#[derive(Default)]
pub(crate) struct Feeds {
    map: Mutex<HashMap<String, Arc<Feed>>>,
}

/// How long a feed nobody watches is kept.
const IDLE: Duration = Duration::from_secs(30);

impl Feeds {
    /// The run's feed, started if nobody watches it yet.
    pub(crate) fn get(&self, this: &Arc<crate::app::AppState>, run_id: &str) -> Arc<Feed> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = map.get(run_id) {
            return Arc::clone(f);
        }
        let feed = Arc::new(Feed {
            items: RwLock::new(Vec::new()),
            loaded: watch::channel(0).0,
            closed: AtomicBool::new(false),
        });
        map.insert(run_id.to_owned(), Arc::clone(&feed));
        let (st, run_id, f) = (Arc::clone(this), run_id.to_owned(), Arc::clone(&feed));
        tokio::task::spawn_blocking(move || {
            load(&st.orch, &run_id, &f, &st.shutdown);
            f.closed.store(true, Ordering::SeqCst);
            f.loaded.send_modify(|_| {});
            let mut map = st.feeds.map.lock().unwrap_or_else(|p| p.into_inner());
            if map.get(&run_id).is_some_and(|g| Arc::ptr_eq(g, &f)) {
                map.remove(&run_id);
            }
        });
        feed
    }
}

/// Follows the run in the store until it finishes, nobody has watched for
/// [`IDLE`], or the server shuts down.
fn load(orch: &Orchestrator, run_id: &str, feed: &Arc<Feed>, shutdown: &CancellationToken) {
    let mut sub = orch.subscribe(run_id, 0);
    let mut watched = Instant::now();
    loop {
        if shutdown.is_cancelled() {
            return;
        }
        // The map and this loader hold two references; more are clients.
        if Arc::strong_count(feed) > 2 {
            watched = Instant::now();
        } else if watched.elapsed() > IDLE {
            return;
        }
        let batch = match sub.next_batch(Duration::from_millis(500)) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(run = run_id, error = %e, "following a run's events");
                return;
            }
        };
        if batch.is_empty() {
            continue;
        }
        let finished = batch.iter().any(finishes);
        let items: Vec<Arc<Item>> = batch.iter().map(item).collect();
        let last = batch.last().map_or(0, |e| e.seq);
        feed.items.write().unwrap_or_else(|p| p.into_inner()).extend(items);
        feed.loaded.send_replace(last);
        if finished {
            return;
        }
    }
}

fn item(e: &RunEvent) -> Arc<Item> {
    let stops = matches!(
        e.kind,
        RunEventKind::Interrupted { .. }
            | RunEventKind::Paused { .. }
            | RunEventKind::RunFinished { .. }
    );
    let checkpoint = match &e.kind {
        RunEventKind::Checkpoint { seq, .. } => Some(*seq),
        _ => None,
    };
    let json = serde_json::to_string(e).expect("events serialize");
    Arc::new(Item { seq: e.seq, json: json.into(), stops, checkpoint })
}

/// The run will write nothing more: it ended for good.
fn finishes(e: &RunEvent) -> bool {
    matches!(&e.kind, RunEventKind::RunFinished { status } if status.is_finished())
}
