//! `ironbees agents list | show NAME | new NAME`: the agents a run uses, where
//! each comes from, and a scaffold for a new one.

use anyhow::Result;
use protocol::{ChangeOptions, ChangeRequest, EditOp};

use super::{Ctx, session};
use crate::{
    exit::cli_error,
    output::{Output, wrap},
};

pub const AFTER_HELP: &str = "\
Examples:
  ironbees agents list
  ironbees agents show coder            its definition and prompt
  ironbees agents new reviewer --description \"Reviews diffs for security issues\"

Agents are directories NAME/agent.yaml + prompt.md. Built-in planner, coder and
validator ship in the binary; ~/.config/ironbees/agents/, then the project's
agents/ and .ironbees/agents/ override them by name or add new ones.";

#[derive(Debug, clap::Subcommand)]
pub enum AgentsCommand {
    /// Every agent, with its source (built-in, user, project).
    List,
    /// One agent's definition and prompt.
    Show { name: String },
    /// Scaffold a new agent in the project's agents/ (journaled: `undo` removes it).
    New {
        name: String,
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
    },
}

pub fn run(ctx: &Ctx, out: &Output, cmd: &AgentsCommand) -> Result<i32> {
    match cmd {
        AgentsCommand::List => {
            let set = ctx.host.agents()?;
            if out.json {
                out.json(&set.iter().collect::<Vec<_>>())?;
                return Ok(0);
            }
            // The whole description, wrapped to the terminal (it was cut at 40
            // characters, issue 32.7); the tools and the source on the line below.
            let name_width = set.iter().map(|a| a.name.chars().count()).max().unwrap_or(0).max(10);
            let indent = " ".repeat(name_width + 2);
            let text_width = out.width().map(|w| w.saturating_sub(indent.len()).max(20));
            let dim = out.style_out().dim();
            for a in set.iter() {
                for (i, line) in wrap(&a.description, text_width).iter().enumerate() {
                    let head =
                        if i == 0 { format!("{:<name_width$}  ", a.name) } else { indent.clone() };
                    out.line(format!("{head}{line}"));
                }
                out.line(format!(
                    "{indent}{}",
                    dim.apply_to(format!("tools: {}  [{}]", a.required_tools.join(", "), a.source))
                ));
            }
            Ok(0)
        }
        AgentsCommand::Show { name } => {
            let set = ctx.host.agents()?;
            let a = set.get(name).ok_or_else(|| {
                cli_error(
                    protocol::ErrorCode::NotFound,
                    format!(
                        "no agent named {name:?} (agents: {})",
                        set.names().collect::<Vec<_>>().join(", ")
                    ),
                )
            })?;
            if out.json {
                out.json(a)?;
                return Ok(0);
            }
            out.line(format!("name:          {}", a.name));
            out.line(format!("description:   {}", a.description));
            out.line(format!("source:        {}", a.source));
            out.line(format!("requiredTools: {}", a.required_tools.join(", ")));
            if let Some(c) = &a.llm_config {
                out.line(format!(
                    "llmConfig:     model {}, maxTokens {}, temperature {}",
                    c.model.as_deref().unwrap_or("(configured)"),
                    c.max_tokens.map_or("(default)".into(), |n| n.to_string()),
                    c.temperature.map_or("(default)".into(), |t| t.to_string())
                ));
            }
            out.line("");
            out.line(&a.prompt);
            Ok(0)
        }
        AgentsCommand::New { name, description } => {
            if agent::is_built_in(name) {
                out.warn(format!(
                    "`{name}` is a built-in agent: the new definition replaces it, starting from \
                     its tools and prompt (edit requiredTools only if you mean to take tools away)"
                ));
            }
            let files = agent::scaffold(name, description.as_deref())?;
            // The project's `agents/` (the seed's convention; `.ironbees/` is
            // ironbees' own state, which edits never touch).
            let dir = format!("agents/{name}");
            let edits = files
                .iter()
                .map(|(file, content)| EditOp::Create {
                    path: format!("agents/{file}"),
                    content: content.clone(),
                    overwrite: false,
                    expected_hash: None,
                })
                .collect();
            let s = session::open_session(ctx, out, false)?;
            let req = ChangeRequest {
                description: Some(format!("ironbees agents new {name}")),
                target: None,
                edits,
                options: ChangeOptions {
                    dry_run: Some(false),
                    include_impact: Some(false),
                    check: Some(protocol::CheckLevel::None),
                    ..ChangeOptions::default()
                },
            };
            let resp = session::with_call(ctx, out, |call| s.change(&req, call))?;
            if out.json {
                out.json(&resp.edit_result)?;
            } else {
                for (file, _) in &files {
                    out.line(format!("created agents/{file}"));
                }
                out.note(format!(
                    "edit {dir}/prompt.md and {dir}/agent.yaml (its requiredTools); `ironbees undo {}` removes it",
                    resp.transaction_id.as_deref().unwrap_or("")
                ));
                if !agent::is_built_in(name) {
                    out.note(format!(
                        "to run it in agent mode, place it in the coding graph in \
                         .ironbees/config.yaml:\n  agent:\n    workflow:\n      - node: {}\n        agent: {name}\n        after: CODE        # PLAN, CODE or VALIDATE\n        next: [VALIDATE, CODE]",
                        name.to_ascii_uppercase().replace('-', "_")
                    ));
                }
            }
            Ok(0)
        }
    }
}
