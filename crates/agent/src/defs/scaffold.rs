//! `ironbees agents new NAME`: the files of a new agent, for the caller to write
//! (through the edit engine, the only writer into a project).

use crate::error::{Error, Result};

/// The files of a new agent named `name`: `NAME/agent.yaml` and `NAME/prompt.md`
/// (relative to an agents directory), a template to edit. It loads as it is.
///
/// A new definition of a built-in agent (`coder`) replaces the built-in; it
/// starts from the built-in's tools and prompt, so the run keeps working (a
/// coder without `change` and `write` could change nothing) until the author
/// decides otherwise.
pub fn scaffold(name: &str, description: Option<&str>) -> Result<Vec<(String, String)>> {
    super::check_name(name)
        .map_err(|reason| Error::InvalidName { name: name.to_string(), reason })?;
    let builtin = super::BUILT_INS.iter().find(|(n, _, _)| *n == name);
    let description = description.map(str::trim).filter(|d| !d.is_empty());
    let quoted = double_quoted(description.unwrap_or("What this agent does, in one line"));
    let mut yaml = AGENT_YAML.replace("{name}", name).replace("{description}", &quoted);
    let mut prompt = PROMPT_MD.replace("{name}", name);
    if let Some((_, builtin_yaml, builtin_prompt)) = builtin {
        let tools: String = builtin_yaml
            .split("requiredTools:")
            .nth(1)
            .map(|rest| {
                rest.lines()
                    .skip(1)
                    .take_while(|l| l.trim_start().starts_with("- "))
                    .map(|l| format!("{l}\n"))
                    .collect()
            })
            .unwrap_or_default();
        let template_tools = "  - understand\n  - navigate\n  - read\n  - search\n";
        yaml = yaml.replace(
            template_tools,
            &format!("# The built-in {name}'s tools: it needs them to do its job.\n{tools}"),
        );
        prompt = (*builtin_prompt).to_owned();
    }
    Ok(vec![(format!("{name}/agent.yaml"), yaml), (format!("{name}/prompt.md"), prompt)])
}

/// Whether `name` is a built-in agent's (a new one replaces it).
pub fn is_built_in(name: &str) -> bool {
    super::BUILT_INS.iter().any(|(n, _, _)| *n == name)
}

/// `text` as a YAML double-quoted scalar, so any description (colons, quotes, `#`,
/// newlines) loads back unchanged. Control characters and the non-characters YAML
/// refuses to read raw are escaped.
fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}') => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

const AGENT_YAML: &str = r#"# An ironbees agent. The directory name must stay equal to `name`; unknown keys
# are errors, so a typo is reported rather than ignored.
name: {name}
description: {description}
version: 0.1.0

# The tools the agent may call. Reading: understand, navigate, read, search,
# localize, repomap. Writing: change, write.
requiredTools:
  - understand
  - navigate
  - read
  - search

# The system prompt, relative to this directory.
promptTemplate: prompt.md

# Model settings for this agent only; each overrides the configured one.
# llmConfig:
#   model: claude-sonnet-4-20250514
#   maxTokens: 8192
#   temperature: 0.0

# Settings for individual tools, by tool name, passed to the tool as written.
# toolConfig:
#   search: {}
"#;

const PROMPT_MD: &str = r#"# {name}

You are {name}, an agent working on a real software repository, in whatever
language it is written.

## Your task

Say what the agent is for, what it receives (the user's request, a plan, the
output of a failed build) and what it must produce.

## How to work

1. Find the code that matters before answering: `search` and `understand` for an
   overview, `navigate` for definitions, callers and references, `read` for the text.
2. Base every statement on code you have read; name files as `path:line`.
3. Follow the project's conventions and the AGENTS.md instructions given below.

## Output

Describe the exact shape of the answer (plain text, a list, a JSON object) so
that whoever reads it, a person or another agent, can rely on it.
"#;
