use anyhow::Result;
use code_index::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use protocol::IndexRequest;

use super::{
    Ctx,
    session::{open_session_with, with_call},
};
use crate::output::Output;

#[derive(Debug, clap::Args)]
pub struct IndexArgs {
    /// Skip paths matching this gitignore-style glob (repeatable; adds to `index.exclude`).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Skip files larger than this many bytes (default 4194304, or `index.max_file_size`).
    #[arg(long, value_name = "BYTES")]
    pub max_file_size: Option<u64>,
    /// Delete the index database and index everything again (for a damaged index).
    #[arg(long)]
    pub rebuild: bool,
}

/// Says why an answer is empty when nothing is indexed: an empty list alone reads
/// as "no match" (an empty directory, a project in a language with no grammar).
pub fn warn_nothing_indexed(ctx: &Ctx, out: &Output) {
    out.warn(format!(
        "nothing is indexed in {}: no source file of a supported language \
         (`ironbees index --json` lists what was skipped and why)",
        ctx.root.display()
    ));
}

pub fn run(ctx: &Ctx, out: &Output, args: &IndexArgs) -> Result<i32> {
    let session = open_session_with(ctx, out, false, args.rebuild)?;
    let req = IndexRequest {
        exclude: args.exclude.clone(),
        max_file_size: args.max_file_size,
        rebuild: args.rebuild,
    };
    let r = with_call(ctx, out, |call| session.index(&req, call))?;
    if out.json {
        out.json(&r)?;
        return Ok(0);
    }
    let (report, status) = (&r.update, &r);
    let bold = out.style_out().bold();
    out.line(format!(
        "{} {} files, {} symbols, {} references in {:.2}s",
        bold.apply_to("indexed"),
        status.files,
        status.symbols,
        status.references,
        report.duration_ms as f64 / 1000.0
    ));
    out.line(format!(
        "  this run: {} parsed, {} reused by content, {} unchanged, {} added, {} modified, {} deleted, {} newly skipped",
        report.parsed, report.reused, report.unchanged, report.added, report.modified, report.deleted, report.skipped
    ));
    if let Some(snap) = &r.snapshot {
        let secs = snap.duration_ms as f64 / 1000.0;
        out.line(match snap.derivation {
            protocol::SnapshotDerivation::Updated => format!(
                "  snapshot: updated in {secs:.2}s ({} changed file(s), {} resolved again)",
                snap.changed_files, snap.resolved_files
            ),
            protocol::SnapshotDerivation::Stored => "  snapshot: already current".to_owned(),
            _ => format!("  snapshot: built in {secs:.2}s"),
        });
    }
    let langs: Vec<String> =
        status.languages.iter().map(|l| format!("{} {}", l.language, l.files)).collect();
    if !langs.is_empty() {
        out.line(format!("  languages: {}", langs.join(", ")));
    }
    let skipped: u64 = status.skipped.iter().map(|g| g.count).sum();
    if skipped > 0 {
        let groups: Vec<String> =
            status.skipped.iter().map(|g| format!("{} {}", g.count, g.code)).collect();
        out.line(format!("  skipped: {} ({}); see `ironbees status`", skipped, groups.join(", ")));
    }
    Ok(0)
}

/// An indicatif bar on stderr, drawn only when stderr is a terminal.
pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    pub fn new(out: &Output) -> Bar {
        let bar = (out.stderr_is_tty && !out.json).then(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template("{spinner} {msg} {wide_bar} {pos}/{len} ({eta})")
                    .expect("valid template"),
            );
            b
        });
        Bar { bar }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    /// Runs `f` with the bar hidden, so a line printed meanwhile is not drawn over.
    pub fn suspend(&self, f: impl FnOnce()) {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }
}

impl Progress for Bar {
    fn phase(&self, name: &str, total: Option<u64>) {
        if let Some(b) = &self.bar {
            b.set_message(name.to_owned());
            b.set_position(0);
            b.set_length(total.unwrap_or(0));
            b.enable_steady_tick(std::time::Duration::from_millis(100));
        }
    }

    fn advance(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }
}
