//! What the analysis commands (`graph`, `impact`, `hotspots`, `report`) share:
//! resolving a target the user typed, reading the git history, a spinner.

use std::path::Path;

use anyhow::Result;
use code_index::{Index, Snapshot, Target, TargetOptions, resolve_target};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use protocol::{Churn, ChurnWindow, ErrorCode};

use super::Ctx;
use crate::{exit::cli_error, output::Output};

/// Resolves what the user typed: an existing path (absolute, or relative to the
/// current directory) is made relative to the root first; anything else (a symbol,
/// `path:line`, a path suffix) is resolved by the index, relative paths from the
/// current directory.
pub fn target(
    ctx: &Ctx,
    index: &Index,
    snapshot: &Snapshot,
    spec: &str,
    all: bool,
) -> Result<Target> {
    let cwd = index.relative_path(&ctx.cwd, Path::new(".")).unwrap_or_default();
    // A path that leaves the project (`../x.py`, `/elsewhere/x.py:3`) is refused as
    // such, existing or not, rather than looked up as a symbol named like it.
    let path_part = spec.split([':', ' ']).next().unwrap_or(spec);
    if Path::new(path_part).is_absolute() || path_part == ".." || path_part.starts_with("../") {
        index.relative_path(&ctx.cwd, Path::new(path_part))?;
    }
    let on_disk = ctx.cwd.join(spec);
    if !spec.is_empty() && on_disk.exists() {
        let rel = index.relative_path(&ctx.cwd, Path::new(spec))?;
        let spec = if rel.is_empty() { ".".to_owned() } else { rel };
        return Ok(resolve_target(
            &snapshot.project,
            &spec,
            &TargetOptions { cwd: String::new(), all },
        )?);
    }
    Ok(resolve_target(&snapshot.project, spec, &TargetOptions { cwd, all })?)
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

/// The churn of the project under its root, or an unavailable history with the
/// reason (not a repository, git missing, git failed: a warning, not an error).
/// A window the user asked for that cannot hold a commit (`--max-commits 0`, a
/// `--since` git reads no date in) is an error: an empty answer would look like
/// a quiet history.
pub fn churn(ctx: &Ctx, out: &Output, args: &HistoryArgs, lines: bool) -> Result<Churn> {
    let window = ChurnWindow { max_commits: Some(args.max_commits), since: args.since.clone() };
    if args.no_history {
        return Ok(Churn::unavailable("history not read (--no-history)", window));
    }
    if args.max_commits == 0 {
        return Err(cli_error(ErrorCode::InvalidArgument, "--max-commits must be at least 1"));
    }
    let spin = Spinner::new(out, "reading git history");
    let opts =
        git::ChurnOptions { max_commits: Some(args.max_commits), since: args.since.clone(), lines };
    let result = git::churn(&ctx.root, &opts);
    spin.finish();
    match result {
        Ok(c) => Ok(c),
        Err(e @ git::Error::InvalidDate { .. }) => Err(e.into()),
        Err(e) => {
            out.warn(format!("no history: {e}"));
            Ok(Churn::unavailable(e.to_string(), window))
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

/// `2024-03-01` from Unix seconds (UTC), without a date library.
pub fn date(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    format!("{:04}-{:02}-{:02}", if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates() {
        assert_eq!(super::date(0), "1970-01-01");
        assert_eq!(super::date(1_709_251_200), "2024-03-01");
        assert_eq!(super::date(951_782_400), "2000-02-29");
    }
}
