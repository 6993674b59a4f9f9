use anyhow::Result;
use code_graph::RenderGraph;
use protocol::{GraphQuery, GraphRequest};

use super::{
    Ctx, analysis,
    session::{open_session, with_call},
};
use crate::output::Output;

pub const AFTER_HELP: &str = "\
Examples:
  ironbees graph deps src/app.py --depth 2       files app.py depends on
  ironbees graph deps src/app.py --reverse       files depending on app.py
  ironbees graph calls src/app.py                every call made in app.py
  ironbees graph callers Cart.total --depth 3    who calls Cart.total, as a tree
  ironbees graph callees 'shop/cart.py:42' --format mermaid

TARGET is a file, a directory, `path:line`, `path::name`, or a (qualified) name:
`Cart.total`, `http::Client::send`. A name with several definitions is refused with
AMBIGUOUS_MATCH and the candidates (exit 9) unless --all is given. Edges marked
`guess` are references resolved by name only (one of several definitions, or a
method call matched by its name). A tree shows them but does not go on through them
(a guessed caller's callers are not listed); --no-guesses leaves them out.";

#[derive(Debug, clap::Subcommand)]
pub enum GraphCommand {
    /// Dependencies of a file (files) or a definition (definitions it references);
    /// with --reverse, dependents.
    Deps(DepsArgs),
    /// The calls made in a file or by a definition, one level, with where and how
    /// each was resolved.
    Calls(GraphArgs),
    /// Who calls a definition, as a tree.
    Callers(TreeArgs),
    /// What a definition calls, as a tree.
    Callees(TreeArgs),
}

#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// A file, directory, `path:line`, `path::name` or (qualified) name.
    pub target: String,
    /// Output: an indented tree, or a Mermaid flowchart.
    #[arg(long, value_enum, default_value = "tree")]
    pub format: GraphFormat,
    /// Take every definition a name matches instead of refusing an ambiguous name.
    #[arg(long)]
    pub all: bool,
    /// Leave out references resolved by name only.
    #[arg(long)]
    pub no_guesses: bool,
    /// Stop after this many nodes.
    #[arg(long, default_value_t = 300, value_name = "N")]
    pub max_nodes: usize,
}

#[derive(Debug, clap::Args)]
pub struct DepsArgs {
    #[command(flatten)]
    pub common: GraphArgs,
    /// How many steps to follow.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub depth: u32,
    /// Dependents instead of dependencies.
    #[arg(long)]
    pub reverse: bool,
}

#[derive(Debug, clap::Args)]
pub struct TreeArgs {
    #[command(flatten)]
    pub common: GraphArgs,
    /// How many steps to follow.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub depth: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    Tree,
    Mermaid,
}

pub fn run(ctx: &Ctx, out: &Output, cmd: &GraphCommand) -> Result<i32> {
    let (common, query, depth) = match cmd {
        GraphCommand::Deps(a) => {
            (&a.common, if a.reverse { GraphQuery::Dependents } else { GraphQuery::Deps }, a.depth)
        }
        GraphCommand::Calls(a) => (a, GraphQuery::Calls, 1),
        GraphCommand::Callers(a) => (&a.common, GraphQuery::Callers, a.depth),
        GraphCommand::Callees(a) => (&a.common, GraphQuery::Callees, a.depth),
    };
    let req = GraphRequest {
        query,
        target: analysis::target_spec(ctx, &common.target),
        depth: Some(depth),
        all: common.all,
        no_guesses: common.no_guesses,
        max_nodes: Some(common.max_nodes as u32),
    };
    let session = open_session(ctx, out, false)?;
    let view = with_call(ctx, out, |call| session.graph(&req, call))?;
    if out.json {
        out.json(&view)?;
        return Ok(0);
    }
    let text = match common.format {
        GraphFormat::Tree => view.render_tree(),
        GraphFormat::Mermaid => view.to_mermaid(),
    };
    out.line(text.trim_end());
    Ok(0)
}
