//! `ironbees undo`, `ironbees redo`, `ironbees history`: the edit engine's
//! transactions.

use anyhow::Result;
use protocol::{
    HistoryRequest, RedoRequest, TransactionKind, TransactionState, TransactionSummary, UndoRequest,
};
use serde::Serialize;

use super::{
    Ctx,
    change::{print_result, report_error},
    session::{open_session, with_call},
};
use crate::{exit, output::Output};

#[derive(Debug, clap::Args)]
pub struct UndoArgs {
    /// The transaction (an id or a unique prefix); default: the newest applied edit.
    pub id: Option<String>,
    /// Show what would be restored, write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// Show this transaction with its diffs.
    pub id: Option<String>,
    /// At most N transactions, newest first.
    #[arg(long, short = 'n', value_name = "N", default_value_t = 20)]
    pub limit: usize,
}

pub fn undo(ctx: &Ctx, out: &Output, args: &UndoArgs) -> Result<i32> {
    let session = open_session(ctx, out, false)?;
    let req = UndoRequest { id: args.id.clone(), dry_run: args.dry_run };
    match with_call(ctx, out, |call| session.undo(&req, call)) {
        Ok(r) => {
            print_result(out, &r, "undo");
            Ok(0)
        }
        Err(e) => report_error(out, &exit::error_info(&e)),
    }
}

pub fn redo(ctx: &Ctx, out: &Output, args: &UndoArgs) -> Result<i32> {
    let session = open_session(ctx, out, false)?;
    let req = RedoRequest { id: args.id.clone(), dry_run: args.dry_run };
    match with_call(ctx, out, |call| session.redo(&req, call)) {
        Ok(r) => {
            print_result(out, &r, "redo");
            Ok(0)
        }
        Err(e) => report_error(out, &exit::error_info(&e)),
    }
}

#[derive(Serialize)]
struct Shown<'a> {
    #[serde(flatten)]
    summary: &'a TransactionSummary,
    changes: &'a [protocol::FileChange],
}

pub fn history(ctx: &Ctx, out: &Output, args: &HistoryArgs) -> Result<i32> {
    let session = open_session(ctx, out, false)?;
    let req = HistoryRequest { id: args.id.clone(), limit: Some(args.limit as u32) };
    let r = match with_call(ctx, out, |call| session.history(&req, call)) {
        Ok(r) => r,
        Err(e) => return report_error(out, &exit::error_info(&e)),
    };
    if let (Some(changes), Some(summary)) = (&r.changes, r.transactions.first()) {
        if out.json {
            out.json(&Shown { summary, changes })?;
            return Ok(0);
        }
        out.line(line(out, summary));
        for f in changes {
            for l in f.diff.lines() {
                out.line(l);
            }
        }
        return Ok(0);
    }
    if out.json {
        out.json(&r.transactions)?;
        return Ok(0);
    }
    if r.transactions.is_empty() {
        eprintln!("no edits yet");
    }
    for t in &r.transactions {
        out.line(line(out, t));
    }
    Ok(0)
}

fn line(out: &Output, t: &TransactionSummary) -> String {
    let style = out.style_out();
    let state = match (t.kind, t.state) {
        (TransactionKind::Edit, TransactionState::Applied) => {
            style.clone().green().apply_to("applied")
        }
        (TransactionKind::Edit, TransactionState::Undone) => {
            style.clone().yellow().apply_to("undone ")
        }
        (TransactionKind::Undo, _) => style.clone().dim().apply_to("undo   "),
        (TransactionKind::Redo, _) => style.clone().dim().apply_to("redo   "),
        _ => style.clone().apply_to("?      "),
    };
    let files = match t.files.len() {
        0..=3 => t.files.join(", "),
        n => format!("{}, ... ({n} files)", t.files[..2].join(", ")),
    };
    format!(
        "{}  {}  {state}  {}  {}",
        style.clone().yellow().apply_to(&t.id),
        utc(t.time_unix_ms),
        t.description,
        style.clone().dim().apply_to(format!("[{files}]"))
    )
}

/// `YYYY-MM-DD HH:MM:SS` UTC from Unix milliseconds (civil-from-days, H. Hinnant).
fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00");
        assert_eq!(super::utc(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(super::utc(1_795_000_000_123), "2026-11-18 11:06:40");
    }
}
