//! `ironbees tools list|call`: the registry from the command line — every
//! built-in operation and every tool of the configured MCP servers, by name,
//! with the same JSON arguments and the same answer the MCP server and the
//! agents get. `ironbees tools` (= `tools list`) and `ironbees tool NAME JSON`
//! (= `tools call NAME --args JSON`) stay as they were.

use std::io::Read;

use anyhow::{Context, Result};
use protocol::{ErrorCode, ToolSource};
use serde::Serialize;
use serde_json::Value;

use super::{
    Ctx,
    session::{CliProgress, PassThrough, open_session},
};
use crate::{exit::cli_error, output::Output};

pub const TOOLS_HELP: &str = "\
Examples:
  ironbees tools list                  every tool: name, effect, source, what it does
  ironbees tools list --json           with the input and output JSON Schemas
  ironbees tools call git.git_status --args '{\"repo_path\": \".\"}'
  ironbees tools call localize --args '{\"query\": \"checkout ignores the discount\"}'

Tools of the MCP servers configured under `mcp.servers` are named SERVER.TOOL; a
server that does not start is left out with a warning (or, when `required`, stops
the command with TOOL_EXECUTION_FAILED). `ironbees tools` alone lists.";

pub const TOOL_HELP: &str = "\
Examples:
  ironbees tool localize '{\"query\": \"checkout ignores the discount\", \"k\": 5}'
  echo '{\"target\": \"Cart.total\"}' | ironbees tool understand -
  ironbees tool change '{\"edits\": [...], \"options\": {\"dryRun\": false}}'

The same as `ironbees tools call NAME --args JSON`. The arguments are the tool's
JSON, exactly as an MCP client sends them (`ironbees tools list --json` prints each
input schema). The answer is the tool's JSON on stdout; a failure is
`{\"error\": ..., \"guidance\": ...}` on stderr with the error's exit code.";

#[derive(Debug, clap::Args)]
pub struct ToolsArgs {
    #[command(subcommand)]
    pub command: Option<ToolsCommand>,
}

#[derive(Debug, clap::Subcommand)]
pub enum ToolsCommand {
    /// Every tool: built-in ones and the configured MCP servers' (`--json`: with
    /// source and schemas).
    List,
    /// Call one tool by name with its JSON arguments.
    Call(CallArgs),
}

#[derive(Debug, clap::Args)]
pub struct CallArgs {
    /// The tool (`ironbees tools list` lists them; an MCP server's are SERVER.TOOL).
    pub name: String,
    /// Its arguments as a JSON object, or `-` to read them from stdin (default `{}`).
    #[arg(long = "args", value_name = "JSON")]
    pub arguments: Option<String>,
}

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

/// The registry with every configured server started (their notices shown).
pub fn tools(ctx: &Ctx, out: &Output) -> Result<host::Tools> {
    let (tools, notices) = ctx.host.tools()?;
    super::show_notices(out, notices);
    Ok(tools)
}

/// `ironbees tools [list|call]`.
pub fn run(ctx: &Ctx, out: &Output, args: &ToolsArgs) -> Result<i32> {
    match &args.command {
        None | Some(ToolsCommand::List) => list(ctx, out),
        Some(ToolsCommand::Call(c)) => call_tool(ctx, out, &c.name, c.arguments.as_deref()),
    }
}

fn list(ctx: &Ctx, out: &Output) -> Result<i32> {
    let tools = tools(ctx, out)?;
    let registry = &tools.registry;
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
    let width = registry.names().iter().map(|n| n.len()).max().unwrap_or(20).clamp(20, 40);
    let mut last_source = None;
    for t in registry.tools() {
        if last_source != Some(&t.spec.source) {
            if let ToolSource::Server { server } = &t.spec.source {
                let pid = tools
                    .servers
                    .servers()
                    .into_iter()
                    .find(|s| &s.name == server)
                    .and_then(|s| s.pid)
                    .map(|p| format!(", pid {p}"))
                    .unwrap_or_default();
                out.line(format!("\n{}", dim.apply_to(format!("MCP server `{server}`{pid}:"))));
            }
            last_source = Some(&t.spec.source);
        }
        let effect = match t.spec.effect {
            protocol::Effect::Read => "reads",
            protocol::Effect::Edit => "edits",
            protocol::Effect::Run => "runs",
            protocol::Effect::History => "history",
            _ => "outside",
        };
        let first = t.spec.description.split(". ").next().unwrap_or_default();
        let first = first.lines().next().unwrap_or_default();
        out.line(format!(
            "{:<width$} {}  {}",
            bold.apply_to(&t.spec.name),
            dim.apply_to(format!("{effect:<7}")),
            stdx::clip(first, 120)
        ));
    }
    Ok(0)
}

/// `ironbees tool NAME [JSON]`, the older form of `tools call`.
pub fn call(ctx: &Ctx, out: &Output, args: &ToolArgs) -> Result<i32> {
    call_tool(ctx, out, &args.name, args.arguments.as_deref())
}

fn call_tool(ctx: &Ctx, out: &Output, name: &str, arguments: Option<&str>) -> Result<i32> {
    let text = match arguments {
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
    // Only the server the tool belongs to is started (none for a built-in tool).
    let (tools, notices) = ctx.host.tools_for(name)?;
    super::show_notices(out, notices);
    let session = open_session(ctx, out, false)?;
    let progress = CliProgress::new(out, Some(PassThrough::Stderr));
    let call = engine::Call::new(&progress, &ctx.cancel);
    let result = tools.registry.call(&session, &call, name, arguments);
    progress.finish();
    tools.shutdown();
    match result {
        Ok(v) => {
            out.json(&v)?;
            Ok(0)
        }
        Err(e) => {
            // The same body an MCP client gets as structured content.
            let body = serde_json::to_string(&e.to_body()).unwrap_or_default();
            #[allow(clippy::print_stderr)]
            {
                eprintln!("{body}");
            }
            Ok(crate::exit::exit_code_of(&e.info))
        }
    }
}
