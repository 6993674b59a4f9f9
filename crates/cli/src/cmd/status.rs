use anyhow::Result;

use super::{
    Ctx,
    session::{open_session, with_call},
};
use crate::output::Output;

#[derive(Debug, clap::Args)]
pub struct StatusArgs {}

pub fn run(ctx: &Ctx, out: &Output, _args: &StatusArgs) -> Result<i32> {
    let session = open_session(ctx, out, false)?;
    let st = with_call(ctx, out, |call| session.status(&protocol::StatusRequest {}, call))?;
    if out.json {
        out.json(&st)?;
        return Ok(0);
    }
    let bold = out.style_out().bold();
    let warn = out.style_out().yellow();
    out.line(format!("{} {}", bold.apply_to("root:"), st.root));
    out.line(format!(
        "{} {} (schema {})",
        bold.apply_to("database:"),
        st.database,
        st.schema_version
    ));
    match st.last_update {
        Some(t) => out.line(format!("{} {}", bold.apply_to("last update:"), format_age(t))),
        None => out.line(format!("{} never; run `ironbees index`", bold.apply_to("last update:"))),
    }
    out.line(format!(
        "{} {} files, {} symbols, {} references, {} imports",
        bold.apply_to("index:"),
        st.files,
        st.symbols,
        st.references,
        st.imports
    ));
    for l in &st.languages {
        out.line(format!(
            "  {:<11} {:>6} files {:>8} lines {:>7} symbols{}",
            l.language,
            l.files,
            l.lines,
            l.symbols,
            if l.files_with_errors > 0 {
                format!("  ({} with syntax errors)", l.files_with_errors)
            } else {
                String::new()
            }
        ));
    }
    match &st.stale {
        Some(stale) if stale.is_fresh() => out.line(format!("{} up to date", bold.apply_to("staleness:"))),
        Some(stale) => out.line(format!(
            "{} {} modified, {} added, {} deleted since the last update (e.g. {}); run `ironbees index`",
            warn.apply_to("staleness:"),
            stale.modified,
            stale.added,
            stale.deleted,
            stale.examples.join(", ")
        )),
        None => {}
    }
    if !st.skipped.is_empty() {
        out.line(bold.apply_to("skipped:").to_string());
        for g in &st.skipped {
            out.line(format!("  {} {} files", g.code, g.count));
            for ex in &g.examples {
                out.line(format!("    {}: {}", ex.path, ex.reason));
            }
        }
    }
    if st.files_with_syntax_errors > 0 {
        out.line(format!(
            "{} {} files indexed as far as they parse",
            warn.apply_to("syntax errors:"),
            st.files_with_syntax_errors
        ));
        for p in &st.syntax_errors {
            out.line(format!("  {} ({} error nodes)", p.path, p.error_nodes));
        }
    }
    if !st.invalid_utf8.is_empty() {
        out.line(format!(
            "{} {} files indexed with replacement characters",
            warn.apply_to("invalid UTF-8:"),
            st.invalid_utf8.len()
        ));
        for p in st.invalid_utf8.iter().take(10) {
            out.line(format!("  {p}"));
        }
    }
    Ok(0)
}

fn format_age(unix_secs: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let age = (now - unix_secs).max(0);
    match age {
        0..60 => format!("{age}s ago"),
        60..3600 => format!("{}m ago", age / 60),
        3600..86400 => format!("{}h ago", age / 3600),
        _ => format!("{}d ago", age / 86400),
    }
}
