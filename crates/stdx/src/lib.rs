//! Small helpers shared by every ironbees crate.
//!
//! Nothing here knows about code, indexes or agents; these are the few things that
//! would otherwise be written three times: how a file's content is hashed (the key of
//! the index and the edit engine's precondition), how a file is replaced without a
//! reader ever seeing half of it, how paths are shown (always relative, always `/`),
//! and how far apart two names are (`edit_distance`).
//!
//! ```
//! let h = stdx::sha256_hex(b"hello");
//! assert_eq!(h.len(), 64);
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// The directory at a project's root where ironbees keeps its state (the index, the
/// edit journal, runs); named once, here.
pub const STATE_DIR: &str = ".ironbees";

mod call;
mod distance;
mod fs;
mod hash;
mod memory;
mod path;
mod text;
mod time;

pub use crate::{
    call::{Call, CancellationToken, NoProgress, OutputStream, Progress},
    distance::{edit_distance, edit_distance_within},
    fs::{ReadLimited, atomic_write, atomic_write_with, read_to_end_limited, sync_dir_best_effort},
    hash::{ContentHasher, sha256, sha256_hex},
    memory::{ProcessMemory, process_memory},
    path::{is_within, normalize_rel, to_slash},
    text::{MAX_PATH_BYTES, clip, widen},
    time::{now_ms, rfc3339_utc, utc_date},
};
