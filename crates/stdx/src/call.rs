//! The one way a long operation is watched and stopped: a [`Call`] carries what
//! it reports to ([`Progress`]) and what cancels it ([`CancellationToken`]).
//!
//! Every driver makes one per request: the CLI from Ctrl-C and a progress bar, the
//! MCP server from the client's cancellation and progress token, an agent from
//! its run. The token is tokio-util's (cloneable, cheap to poll from blocking code
//! with [`CancellationToken::is_cancelled`], awaitable from async code), so the
//! model client, the sandbox and the indexer all stop on the same signal without
//! being bridged by hand.

pub use tokio_util::sync::CancellationToken;

/// Which stream of a command's output a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// What a long operation reports as it goes. Every method has a no-op default, so
/// a sink implements only what it shows.
pub trait Progress: Sync {
    /// A new phase starts; `total` is its number of steps when known.
    fn phase(&self, _name: &str, _total: Option<u64>) {}
    /// `n` more steps of the current phase are done.
    fn advance(&self, _n: u64) {}
    /// A project command wrote `bytes` (builds, tests, `exec`), as it ran.
    fn output(&self, _stream: OutputStream, _bytes: &[u8]) {}
    /// Something the caller should know that the answer itself does not say (the
    /// index was being updated by another process, say), with its machine code.
    fn warning(&self, _code: &str, _message: &str) {}
}

/// A [`Progress`] that ignores everything.
pub struct NoProgress;

impl Progress for NoProgress {}

/// What one request reports to and is cancelled by.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub progress: &'a dyn Progress,
    pub cancel: &'a CancellationToken,
}

impl<'a> Call<'a> {
    pub fn new(progress: &'a dyn Progress, cancel: &'a CancellationToken) -> Call<'a> {
        Call { progress, cancel }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_sees_its_token_cancelled_from_anywhere() {
        let token = CancellationToken::new();
        let call = Call::new(&NoProgress, &token);
        assert!(!call.is_cancelled());
        let child = token.clone();
        std::thread::spawn(move || child.cancel()).join().unwrap();
        assert!(call.is_cancelled());
    }
}
