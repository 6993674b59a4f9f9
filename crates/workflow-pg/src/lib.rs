//! The workflow engine's [`CheckpointStore`] on PostgreSQL, for replicas: several
//! `ironbees serve` processes (on one machine or many) pointed at one database
//! share runs, checkpoints, events and a work queue.
//!
//! The key decisions:
//!
//! - **The run lock is a lease.** SQLite's store locks a file, which the kernel
//!   releases when the process dies. Here the lock is a row (`run_leases`: run,
//!   owner, expiry) that a heartbeat thread of the holding process pushes forward
//!   every third of the lease. A process killed with SIGKILL stops renewing; when
//!   its lease runs out, another replica takes the run (and the work-queue job
//!   that drove it, leased the same way) and resumes it from its last checkpoint.
//!   Times are the database's clock, so replicas need not agree on theirs.
//! - **Appends are fenced.** Every append, effect record and run creation checks,
//!   in its own transaction, that this process still owns the run's lease (the
//!   row locked `FOR SHARE`, so a takeover waits for the append to commit). A
//!   process that was only paused past its lease finds the run taken and fails
//!   instead of writing beside the new holder. Sequence numbers stay gapless
//!   (primary keys plus a trigger, as in SQLite) and rows immutable (triggers).
//! - **The queue is `FOR UPDATE SKIP LOCKED`.** Concurrent claimers never block
//!   each other or get the same job.
//!
//! The client is the synchronous `postgres` crate: the store boundary is blocking
//! (the engine runs nodes on plain threads), so call it from threads, never from
//! an async task (a server wraps calls in `spawn_blocking`). A small pool of
//! connections serves concurrent callers.
//!
//! ```no_run
//! let store = workflow_pg::PgStore::connect("postgres://ironbees@db/ironbees", Default::default())?;
//! # Ok::<(), workflow::Error>(())
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod pool;
mod store;

#[cfg(test)]
mod tests;

pub use crate::store::{PgOptions, PgStore};
