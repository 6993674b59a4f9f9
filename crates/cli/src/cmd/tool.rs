//! `ironbees tools` and `ironbees tool NAME [JSON]`: the engine's registry from the
//! command line — every operation the MCP server and the agents call, by name,
//! with the same JSON arguments and the same answer.

use std::io::Read;

use anyhow::{Context, Result};
use engine::Registry;
use protocol::ErrorCode;
use serde::Serialize;
use serde_json::Value;

use super::{
    Ctx,
    session::{CliProgress, PassThrough, open_session},
};
use crate::{exit::cli_error, output::Output};

pub const TOOLS_HELP: &str = "\
Examples:
  ironbees tools                       every tool: name, effect, what it does
  ironbees tools --json                with the input and output JSON Schemas";

pub const TOOL_HELP: &str = "\
Examples:
  ironbees tool localize '{\"query\": \"checkout ignores the discount\", \"k\": 5}'
  echo '{\"target\": \"Cart.total\"}' | ironbees tool understand -
  ironbees tool change '{\"edits\": [...], \"options\": {\"dryRun\": false}}'

The arguments are the tool's JSON, exactly as an MCP client sends them (`ironbees tools
--json` prints each input schema). The answer is the tool's JSON on stdout; a failure
is `{\"error\": ..., \"guidance\": ...}` on stderr with the error's exit code.";

#[derive(Debug, clap::Args)]
pub struct ToolsArgs {}

#[derive(Debug, clap::Args)]
pub struct ToolArgs {
    /// The tool (`ironbees tools` lists them).
    pub name: String,
    /// Its arguments as a JSON object, or `-` to read them from stdin (default `{}`).
    pub arguments: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed<'a> {
    name: &'a str,
    title: &'a str,
    description: &'a str,
    effect: protocol::Effect,
    source: &'a protocol::ToolSource,
    input_schema: &'a serde_json::Map<String, Value>,
    output_schema: &'a serde_json::Map<String, Value>,
}

pub fn list(_ctx: &Ctx, out: &Output, _args: &ToolsArgs) -> Result<i32> {
    let registry = Registry::new();
    if out.json {
        let all: Vec<Listed<'_>> = registry
            .tools()
            .map(|t| Listed {
                name: &t.spec.name,
                title: &t.spec.title,
                description: &t.spec.description,
                effect: t.spec.effect,
                source: &t.spec.source,
                input_schema: &t.spec.input_schema,
                output_schema: &t.spec.output_schema,
            })
            .collect();
        out.json(&all)?;
        return Ok(0);
    }
    let bold = out.style_out().bold();
    let dim = out.style_out().dim();
    for t in registry.tools() {
        let effect = match t.spec.effect {
            protocol::Effect::Read => "reads",
            protocol::Effect::Edit => "edits",
            protocol::Effect::Run => "runs",
            protocol::Effect::History => "history",
            _ => "outside",
        };
        let first = t.spec.description.split(". ").next().unwrap_or_default();
        out.line(format!(
            "{:<22} {}  {}",
            bold.apply_to(&t.spec.name),
            dim.apply_to(format!("{effect:<7}")),
            first
        ));
    }
    Ok(0)
}

pub fn call(ctx: &Ctx, out: &Output, args: &ToolArgs) -> Result<i32> {
    let text = match args.arguments.as_deref() {
        None => "{}".to_owned(),
        Some("-") => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).context("reading the arguments from stdin")?;
            s
        }
        Some(s) => s.to_owned(),
    };
    let arguments: Value = serde_json::from_str(&text).map_err(|e| {
        cli_error(ErrorCode::InvalidArgument, format!("the arguments are not JSON: {e}"))
    })?;
    if !arguments.is_object() {
        return Err(cli_error(
            ErrorCode::InvalidArgument,
            "the arguments must be a JSON object (`{}` for none)",
        ));
    }
    let registry = Registry::new();
    let session = open_session(ctx, out, false)?;
    let progress = CliProgress::new(out, Some(PassThrough::Stderr));
    let call = engine::Call::new(&progress, &ctx.cancel);
    let result = registry.call(&session, &call, &args.name, arguments);
    progress.finish();
    match result {
        Ok(v) => {
            out.json(&v)?;
            Ok(0)
        }
        Err(e) => {
            // The same body an MCP client gets as structured content.
            let body = serde_json::to_string(&e.to_body()).unwrap_or_default();
            eprintln!("{body}");
            Ok(crate::exit::exit_code_of(&e.info))
        }
    }
}
