//! Git churn for the session: read once per HEAD and window, shared by every call
//! that ranks by change (`understand`'s hotspots, `hotspots`, `report`).

use std::sync::{Arc, Mutex};

use protocol::{Churn, ChurnWindow};

use crate::{
    Session,
    error::{Error, Result},
};

/// The last churn read, keyed by what it depends on.
#[derive(Default)]
pub(crate) struct ChurnCache {
    last: Mutex<Option<(Key, Arc<Churn>)>>,
}

#[derive(PartialEq, Eq, Clone)]
struct Key {
    head: Option<String>,
    max_commits: Option<u32>,
    since: Option<String>,
    lines: bool,
}

impl Session {
    /// The project's churn over `opts`' window, or an unavailable history with the
    /// reason (not a repository, git missing or failing: an answer, not an error).
    /// A `since` git reads no date in is an error: an empty window would look like
    /// a quiet history. Cached until HEAD moves.
    pub(crate) fn churn(&self, opts: &git::ChurnOptions) -> Result<Arc<Churn>> {
        let window = ChurnWindow { max_commits: opts.max_commits, since: opts.since.clone() };
        if opts.max_commits == Some(0) {
            return Err(Error::InvalidArgument("maxCommits must be at least 1".into()));
        }
        let head = git::head(&self.root).ok().flatten();
        let key = Key {
            head: head.clone(),
            max_commits: opts.max_commits,
            since: opts.since.clone(),
            lines: opts.lines,
        };
        let mut last = self.churn.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((k, c)) = last.as_ref()
            && *k == key
            && head.is_some()
        {
            return Ok(Arc::clone(c));
        }
        let churn = match git::churn(&self.root, opts) {
            Ok(c) => c,
            Err(e @ git::Error::InvalidDate { .. }) => return Err(e.into()),
            Err(e) => Churn::unavailable(e.to_string(), window),
        };
        let churn = Arc::new(churn);
        *last = Some((key, Arc::clone(&churn)));
        Ok(churn)
    }
}
