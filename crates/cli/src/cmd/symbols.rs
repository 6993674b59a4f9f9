//! `ironbees symbols`: the `symbols` operation.

use anyhow::Result;
use protocol::{ErrorCode, SymbolsRequest};

use super::{
    Ctx,
    session::{open_session, user_path, with_call},
};
use crate::{exit::cli_error, output::Output};

#[derive(Debug, clap::Args)]
pub struct SymbolsArgs {
    /// Name glob (`parse_*`, `*Error`); matched against the qualified name when it
    /// contains `.` or `::` (`Router.*`). Without glob characters: exact.
    #[arg(long, short = 'n', value_name = "PATTERN")]
    pub name: Option<String>,
    /// Only this kind: function, method, class, struct, union, enum, trait, interface,
    /// record, module, namespace, constant, type_alias, property, macro.
    #[arg(long, short = 'k', value_name = "K")]
    pub kind: Option<String>,
    /// Only this file, directory or path glob (relative to the current directory).
    #[arg(long, short = 'f', value_name = "F")]
    pub file: Option<String>,
    /// Match the name case-insensitively.
    #[arg(long, short = 'i')]
    pub ignore_case: bool,
    /// At most N results.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

pub fn run(ctx: &Ctx, out: &Output, args: &SymbolsArgs) -> Result<i32> {
    if args.limit == Some(0) {
        return Err(cli_error(ErrorCode::InvalidArgument, "--limit must be at least 1"));
    }
    let file = match &args.file {
        None => None,
        // A glob is relative to the root as written; a path is resolved from the cwd.
        Some(f) if f.contains(['*', '?', '[']) => Some(f.clone()),
        Some(f) => Some(user_path(ctx, std::path::Path::new(f))),
    };
    let req = SymbolsRequest {
        name: args.name.clone(),
        kind: args.kind.clone(),
        file,
        ignore_case: args.ignore_case,
        limit: args.limit.map(|n| n as u32),
    };
    let session = open_session(ctx, out, false)?;
    let symbols = with_call(ctx, out, |call| session.symbols(&req, call))?.symbols;
    if out.json {
        out.json(&symbols)?;
        return Ok(0);
    }
    let dim = out.style_out().dim();
    let kind_style = out.style_out().cyan();
    for s in &symbols {
        out.line(format!(
            "{}:{} {} {}  {}",
            s.path,
            s.line,
            kind_style.apply_to(s.kind.as_str()),
            s.qualified_name,
            dim.apply_to(&s.signature)
        ));
    }
    Ok(0)
}
