//! `ironbees change`: apply an edit request (JSON, or the common single replace
//! from flags) through the edit engine, printing the unified diff.

use std::{
    io::Read,
    path::{Path, PathBuf},
    sync::Arc,
};

use anyhow::{Context, Result};
use edit::Engine;
use protocol::{
    ChangeOptions, ChangeRequest, CheckLevel, EditOp, EditRequest, EditResult, ErrorCode,
    ErrorInfo, LineRange,
};

use super::{
    Ctx,
    session::{open_session, with_call},
};
use crate::{
    exit::{self, cli_error, exit_code},
    output::Output,
};

pub const AFTER_HELP: &str = "\
Examples:
  ironbees change src/app.py --find 'return 1' --replace 'return 2'
  ironbees change src/app.py --lines 10-12 --replace-file new_body.py --dry-run
  ironbees change --edits request.json --json
  echo '{\"edits\":[{\"op\":\"rename\",\"path\":\"a.rs\",\"newPath\":\"b.rs\"}]}' | ironbees change --edits -

The request JSON is the MCP `change` tool's: {\"description\", \"target\", \"edits\": [...],
\"options\": {\"dryRun\"}}; ops: replace (targetString, replacementString, lineRange,
expectedOccurrences, replaceAll), replaceLines, insert (position, line | targetString,
text), replaceSymbol (qualifiedName, part), create (content, overwrite), delete, rename
(newPath); each may carry expectedHash. Paths in JSON are relative to the project root.
The diff goes to stdout (a patch `git apply` accepts); notes go to stderr.
Exit 9: NO_MATCH, AMBIGUOUS_MATCH, HASH_MISMATCH or ALREADY_EXISTS (nothing was changed).";

#[derive(Debug, clap::Args)]
pub struct ChangeArgs {
    /// The file to change (with --find/--lines), relative to the current directory.
    pub file: Option<PathBuf>,
    /// The text to replace (exactly once unless --all or --occurrences).
    #[arg(long, value_name = "TEXT", conflicts_with = "find_file", allow_hyphen_values = true)]
    pub find: Option<String>,
    /// Read the text to replace from a file.
    #[arg(long, value_name = "PATH")]
    pub find_file: Option<PathBuf>,
    /// The replacement text.
    #[arg(long, value_name = "TEXT", conflicts_with = "replace_file", allow_hyphen_values = true)]
    pub replace: Option<String>,
    /// Read the replacement text from a file.
    #[arg(long, value_name = "PATH")]
    pub replace_file: Option<PathBuf>,
    /// Replace every occurrence.
    #[arg(long)]
    pub all: bool,
    /// Expect exactly N occurrences and replace them all.
    #[arg(long, value_name = "N")]
    pub occurrences: Option<u32>,
    /// Lines START-END: with --find, where to look; without, the lines to replace.
    #[arg(long, value_name = "RANGE")]
    pub lines: Option<String>,
    /// Refuse unless the file's SHA-256 is this (as you last read it).
    #[arg(long, value_name = "SHA256")]
    pub expected_hash: Option<String>,
    /// The request as JSON from a file, or `-` for stdin.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["file", "find", "find_file", "lines"])]
    pub edits: Option<String>,
    /// What the change is for (shown by `ironbees history`).
    #[arg(long, short = 'm', value_name = "TEXT")]
    pub message: Option<String>,
    /// Show the diff, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The post-edit check: syntax (default: the edited files must not gain syntax
    /// errors), build (also the project's build in the sandbox), none. A failed check
    /// rolls the change back.
    #[arg(long, value_name = "LEVEL", default_value = "syntax", value_parser = ["none", "syntax", "build"])]
    pub check: String,
}

/// Opens the engine with the configured limits and the code-index locator, and
/// reports what recovery did (an earlier run was killed mid-transaction).
pub fn open_engine(ctx: &Ctx, out: &Output) -> Result<Engine> {
    let options = ctx.host.edit_options()?;
    let mut engine = Engine::open(&ctx.root, options)?;
    engine.set_symbol_locator(Arc::new(engine::IndexLocator));
    let rec = engine.recovery();
    for id in &rec.rolled_back {
        out.warn(format!("an interrupted edit ({id}) was rolled back; its files are as before it"));
    }
    for c in &rec.conflicts {
        out.warn(format!(
            "{} changed after edit {} was interrupted; left as it is{}",
            c.path,
            c.transaction,
            c.saved_to
                .as_ref()
                .map(|s| format!(" (the earlier version is in {s})"))
                .unwrap_or_default()
        ));
    }
    Ok(engine)
}

pub fn run(ctx: &Ctx, out: &Output, args: &ChangeArgs) -> Result<i32> {
    let req = build_request(ctx, args)?;
    // The same `change` operation MCP and the agents call; the CLI applies unless
    // asked to preview (the operation's own default is to preview).
    let check = match args.check.as_str() {
        "none" => CheckLevel::None,
        "build" => CheckLevel::Build,
        _ => CheckLevel::Syntax,
    };
    let change = ChangeRequest {
        description: args.message.clone().or(req.description),
        target: req.target,
        edits: req.edits,
        options: ChangeOptions {
            dry_run: Some(args.dry_run || req.options.dry_run),
            include_impact: Some(false),
            auto_rollback: Some(true),
            check: Some(check),
        },
    };
    let session = open_session(ctx, out, false)?;
    match with_call(ctx, out, |call| session.change(&change, call)) {
        Ok(r) => {
            for w in &r.guidance.warnings {
                out.warn(format!("[{}] {}", w.code, w.message));
            }
            print_result(out, &r.edit_result, "change");
            Ok(0)
        }
        Err(e) => report_error(out, &exit::error_info(&e)),
    }
}

/// Prints an error with its candidates (text mode) and returns its exit code.
pub fn report_error(out: &Output, info: &ErrorInfo) -> Result<i32> {
    let info = info.clone();
    out.error(&info);
    if !out.json {
        print_candidates(out, &info);
    }
    Ok(exit_code(info.code))
}

fn print_candidates(out: &Output, info: &ErrorInfo) {
    let dim = out.style_err().dim();
    let what = if info.code == ErrorCode::AmbiguousMatch { "match" } else { "closest" };
    for c in &info.details.candidates {
        let sim = c.similarity.map(|s| format!(" ({:.0}% similar)", s * 100.0));
        let (start, end) = (c.line_range.start, c.line_range.end);
        eprintln!("  {what} at lines {start}-{end}{}:", sim.unwrap_or_default());
        for line in c.preview.lines() {
            eprintln!("    {}", dim.apply_to(format!("| {line}")));
        }
    }
}

fn build_request(ctx: &Ctx, args: &ChangeArgs) -> Result<EditRequest> {
    if let Some(src) = &args.edits {
        let text = if src == "-" {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).context("reading the request from stdin")?;
            s
        } else {
            std::fs::read_to_string(ctx.cwd.join(src))
                .with_context(|| format!("reading the request from {src}"))?
        };
        return parse_request(&text);
    }
    let Some(file) = &args.file else {
        return Err(cli_error(
            ErrorCode::InvalidArgument,
            "name a FILE with --find/--lines and --replace, or give --edits FILE|-",
        ));
    };
    // Absolute, so the engine's path jail judges the path exactly as given.
    let path = ctx.cwd.join(file).display().to_string();
    let read = |p: &Path| {
        std::fs::read_to_string(ctx.cwd.join(p)).with_context(|| format!("reading {}", p.display()))
    };
    let find = match (&args.find, &args.find_file) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(p)) => Some(read(p)?),
        (None, None) => None,
    };
    let replacement = match (&args.replace, &args.replace_file) {
        (Some(t), _) => t.clone(),
        (None, Some(p)) => read(p)?,
        (None, None) => {
            return Err(cli_error(
                ErrorCode::InvalidArgument,
                "--replace TEXT (or --replace-file) is required",
            ));
        }
    };
    let lines = match &args.lines {
        Some(l) => Some(LineRange::parse(l).map_err(|e| cli_error(ErrorCode::InvalidArgument, e))?),
        None => None,
    };
    let op = match (find, lines) {
        (Some(target), line_range) => EditOp::Replace {
            path,
            target_string: target,
            replacement_string: replacement,
            line_range,
            expected_occurrences: args.occurrences,
            replace_all: args.all,
            expected_hash: args.expected_hash.clone(),
        },
        (None, Some(line_range)) => EditOp::ReplaceLines {
            path,
            line_range,
            replacement_string: replacement,
            expected_hash: args.expected_hash.clone(),
        },
        (None, None) => {
            return Err(cli_error(
                ErrorCode::InvalidArgument,
                "say what to replace: --find TEXT, --find-file PATH or --lines START-END",
            ));
        }
    };
    Ok(EditRequest { edits: vec![op], ..Default::default() })
}

/// A request object, or a bare list of edits.
fn parse_request(text: &str) -> Result<EditRequest> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        cli_error(ErrorCode::InvalidArgument, format!("the request is not JSON: {e}"))
    })?;
    let value = if value.is_array() { serde_json::json!({ "edits": value }) } else { value };
    serde_json::from_value(value)
        .map_err(|e| cli_error(ErrorCode::InvalidArgument, format!("bad edit request: {e}")))
}

/// The diff on stdout (colored on a terminal), notes and the summary on stderr.
pub fn print_result(out: &Output, result: &EditResult, verb: &str) {
    if out.json {
        let _ = out.json(result);
        return;
    }
    let style = out.style_out();
    for f in &result.files {
        for line in f.diff.lines() {
            let styled = if line.starts_with("diff --git")
                || line.starts_with("+++")
                || line.starts_with("---")
            {
                style.clone().bold().apply_to(line)
            } else if line.starts_with('+') {
                style.clone().green().apply_to(line)
            } else if line.starts_with('-') {
                style.clone().red().apply_to(line)
            } else if line.starts_with("@@") {
                style.clone().cyan().apply_to(line)
            } else {
                style.apply_to(line)
            };
            out.line(styled.to_string());
        }
        for e in &f.edits {
            for n in &e.normalizations {
                eprintln!("note: {} edits[{}]: {}", f.path, e.index, describe_normalization(n));
            }
        }
    }
    let (added, removed): (u32, u32) =
        result.files.iter().fold((0, 0), |(a, r), f| (a + f.lines_added, r + f.lines_removed));
    let files =
        result.files.iter().filter(|f| f.old_hash != f.new_hash || f.new_path.is_some()).count();
    let summary =
        format!("{files} file{} changed, +{added} -{removed}", if files == 1 { "" } else { "s" });
    let s = out.style_err().dim();
    match (&result.transaction_id, result.dry_run) {
        (_, true) => eprintln!("{}", s.apply_to(format!("dry run: {summary}; nothing written"))),
        (Some(id), false) => eprintln!(
            "{}",
            s.apply_to(format!(
                "{verb} {id}: {summary} (`ironbees {} {id}` reverts it)",
                if verb == "undo" { "redo" } else { "undo" }
            ))
        ),
        (None, false) => {
            eprintln!("{}", s.apply_to("no change: the files already have this content"))
        }
    }
}

fn describe_normalization(n: &protocol::Normalization) -> String {
    use protocol::Normalization as N;
    match n {
        N::LineEndings { file } => format!("line endings written as the file's ({file})"),
        N::TrailingWhitespace => "matched ignoring trailing whitespace".to_owned(),
        N::Indentation { added, .. } if !added.is_empty() => {
            format!(
                "matched with indentation {added:?} less than the file's; replacement indented to fit"
            )
        }
        N::Indentation { removed, .. } => {
            format!(
                "matched with indentation {removed:?} more than the file's; replacement dedented to fit"
            )
        }
        N::TabsAsSpaces { tab_width } => {
            format!(
                "matched with spaces for tabs (tab width {tab_width}); replacement uses the file's tabs"
            )
        }
        other => format!("{other:?}"),
    }
}
