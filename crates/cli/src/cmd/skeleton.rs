use std::path::PathBuf;

use anyhow::Result;
use code_index::{Index, Skeleton};
use serde::Serialize;

use super::{Ctx, index::index_config};
use crate::output::Output;

#[derive(Debug, clap::Args)]
pub struct SkeletonArgs {
    /// The file, relative to the current directory.
    pub file: PathBuf,
}

#[derive(Serialize)]
struct SkeletonOutput<'a> {
    path: String,
    language: &'static str,
    #[serde(flatten)]
    skeleton: &'a Skeleton,
}

pub fn run(ctx: &Ctx, out: &Output, args: &SkeletonArgs) -> Result<i32> {
    // A skeleton is computed from the file as it is now; the index only supplies
    // the root (and the path jail), so no update is needed.
    let index = Index::open(&ctx.root, index_config(ctx, &[], None)?)?;
    let rel = index.relative_path(&ctx.cwd, &args.file)?;
    let (lang, bytes, analysis) = index.analyze_file(&rel)?;
    let skeleton = code_index::render_skeleton(&bytes, &analysis);
    if out.json {
        out.json(&SkeletonOutput { path: rel, language: lang.name(), skeleton: &skeleton })?;
        return Ok(0);
    }
    let mut stdout_text = skeleton.text.clone();
    if stdout_text.ends_with('\n') {
        stdout_text.pop();
    }
    if !stdout_text.is_empty() {
        out.line(stdout_text);
    }
    let dim = out.style_out().dim();
    out.line(
        dim.apply_to(format!(
            "-- {rel}: {} definitions, {} of {} lines, {} of {} tokens ({:.0}%)",
            skeleton.definitions,
            skeleton.shown_lines,
            skeleton.file_lines,
            skeleton.skeleton_tokens,
            skeleton.file_tokens,
            skeleton.ratio * 100.0
        ))
        .to_string(),
    );
    Ok(0)
}
