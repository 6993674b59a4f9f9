//! What the analysis commands (`graph`, `impact`, `hotspots`, `report`) share:
//! resolving a target the user typed, reading the git history, a spinner.

use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Ctx;
use crate::output::Output;

/// What the user typed, as the engine resolves it: a path (the part before `:line`)
/// that exists relative to the current directory, or climbs out of it, is made
/// absolute; anything else (a symbol, a root-relative path suffix) goes as typed.
pub fn target_spec(ctx: &Ctx, spec: &str) -> String {
    let spec = spec.trim();
    let (path_part, rest) = match spec.find([':', ' ']) {
        Some(i) if !spec[i..].starts_with("::") => (&spec[..i], &spec[i..]),
        _ => (spec, ""),
    };
    if path_part.is_empty() || Path::new(path_part).is_absolute() {
        return spec.to_owned();
    }
    let climbs = path_part == ".." || path_part.starts_with("../");
    let here = ctx.cwd.join(path_part);
    if climbs || here.exists() {
        return format!("{}{rest}", here.display());
    }
    spec.to_owned()
}

/// Which history to read.
#[derive(Debug, Clone, clap::Args)]
pub struct HistoryArgs {
    /// Read at most the newest N non-merge commits.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub max_commits: u32,
    /// Only commits after this date (`2024-01-01`, `6 months ago`).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Do not read the git history: rank by structure only.
    #[arg(long)]
    pub no_history: bool,
}

impl HistoryArgs {
    /// The window as the `hotspots` and `report` operations take it.
    pub fn window(&self) -> protocol::HistoryWindow {
        protocol::HistoryWindow {
            max_commits: Some(self.max_commits),
            since: self.since.clone(),
            no_history: self.no_history,
        }
    }
}

/// A spinner on stderr while something slow runs, only on a terminal.
pub struct Spinner(Option<ProgressBar>);

impl Spinner {
    pub fn new(out: &Output, msg: &str) -> Spinner {
        Spinner((out.stderr_is_tty && !out.json).then(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            b.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
            b.set_message(msg.to_owned());
            b.enable_steady_tick(std::time::Duration::from_millis(100));
            b
        }))
    }

    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

/// `2024-03-01` from Unix seconds (UTC).
pub fn date(secs: i64) -> String {
    stdx::utc_date(secs)
}
