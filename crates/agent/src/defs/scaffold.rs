//! `ironbees agents new NAME`: the files of a new agent, for the caller to write
//! (through the edit engine, the only writer into a project).

use crate::error::{Error, Result};

/// The files of a new agent named `name`: `NAME/agent.yaml` and `NAME/prompt.md`
/// (relative to an agents directory), a template to edit. It loads as it is.
pub fn scaffold(name: &str, description: Option<&str>) -> Result<Vec<(String, String)>> {
    super::check_name(name)
        .map_err(|reason| Error::InvalidName { name: name.to_string(), reason })?;
    let description = description.map(str::trim).filter(|d| !d.is_empty());
    let quoted = double_quoted(description.unwrap_or("What this agent does, in one line"));
    let yaml = AGENT_YAML.replace("{name}", name).replace("{description}", &quoted);
    let prompt = PROMPT_MD.replace("{name}", name);
    Ok(vec![(format!("{name}/agent.yaml"), yaml), (format!("{name}/prompt.md"), prompt)])
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
