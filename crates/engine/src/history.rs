//! `undo`, `redo`, `history`: the edit engine's transactions.

use protocol::{EditResult, HistoryRequest, HistoryResponse, RedoRequest, UndoRequest};
use stdx::Call;

use crate::{Session, error::Result};

impl Session {
    /// Undoes an edit (the newest applied one by default). Refused with
    /// `HASH_MISMATCH` when a file changed since. The index is refreshed after,
    /// as after a `change`.
    pub fn undo(&self, req: &UndoRequest, call: &Call<'_>) -> Result<EditResult> {
        let r = self.edits().undo(req.id.as_deref(), req.dry_run)?;
        if !req.dry_run {
            for w in self.refresh_after_edit(call) {
                call.progress.warning(&w.code, &w.message);
            }
        }
        Ok(r)
    }

    /// Re-applies an undone edit (the most recently undone one by default); the
    /// index is refreshed after.
    pub fn redo(&self, req: &RedoRequest, call: &Call<'_>) -> Result<EditResult> {
        let r = self.edits().redo(req.id.as_deref(), req.dry_run)?;
        if !req.dry_run {
            for w in self.refresh_after_edit(call) {
                call.progress.warning(&w.code, &w.message);
            }
        }
        Ok(r)
    }

    /// The transactions, newest first, or one with its changes. Read through a
    /// second handle: a running transaction does not hold it up.
    pub fn history(&self, req: &HistoryRequest, _call: &Call<'_>) -> Result<HistoryResponse> {
        self.with_history(|h| match &req.id {
            Some(id) => {
                let (summary, changes) = h.transaction(id)?;
                Ok(HistoryResponse { transactions: vec![summary], changes: Some(changes) })
            }
            None => {
                let limit = req.limit.unwrap_or(20).clamp(1, 500) as usize;
                Ok(HistoryResponse { transactions: h.history(limit)?, changes: None })
            }
        })
    }
}
