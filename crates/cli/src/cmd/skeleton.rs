use std::path::PathBuf;

use anyhow::Result;
use protocol::SkeletonRequest;

use super::{
    Ctx,
    session::{open_session, user_path, with_call},
};
use crate::output::Output;

#[derive(Debug, clap::Args)]
pub struct SkeletonArgs {
    /// The file, relative to the current directory.
    pub file: PathBuf,
}

pub fn run(ctx: &Ctx, out: &Output, args: &SkeletonArgs) -> Result<i32> {
    let session = open_session(ctx, out, false)?;
    let req = SkeletonRequest { path: user_path(ctx, &args.file) };
    let r = with_call(ctx, out, |call| session.skeleton(&req, call))?;
    if out.json {
        out.json(&r)?;
        return Ok(0);
    }
    let (rel, skeleton) = (&r.path, &r.skeleton);
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
