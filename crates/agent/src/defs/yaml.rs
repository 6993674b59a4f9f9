//! `agent.yaml` as written, and positions in it.
//!
//! yaml_serde has no spans, but every error it returns carries the position of the
//! event it failed at. Syntax and type errors therefore come with a line and
//! column for free, and [`value_position`] gets one for checks made after parsing
//! by deserializing again and failing on purpose at the value it is asked about.

use std::{collections::BTreeMap, fmt};

use serde::{
    Deserialize, Deserializer,
    de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor},
};

use super::{AgentDef, AgentSource, DEFAULT_PROMPT, LlmConfig};
use crate::error::Position;

/// The keys of `agent.yaml` (seed 001 §5.2). Unknown keys are errors.
#[derive(Debug, Deserialize)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "an agent definition (a mapping with `name`, `description`, ...)"
)]
pub(super) struct Manifest {
    pub(super) name: String,
    description: String,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    required_tools: Vec<String>,
    #[serde(default = "default_prompt")]
    pub(super) prompt_template: String,
    #[serde(default)]
    llm_config: Option<LlmConfig>,
    #[serde(default)]
    tool_config: BTreeMap<String, serde_json::Value>,
}

fn default_prompt() -> String {
    DEFAULT_PROMPT.to_string()
}

impl Manifest {
    pub(super) fn into_def(self, prompt: String, source: AgentSource) -> AgentDef {
        AgentDef {
            name: self.name,
            description: self.description,
            version: self.version,
            required_tools: self.required_tools,
            prompt_template: self.prompt_template,
            llm_config: self.llm_config,
            tool_config: self.tool_config,
            prompt,
            source,
        }
    }
}

/// Parses `text`; an error is the position (when the library knows it) and the
/// message without the library's own " at line L column C" suffix, which the
/// caller prints in front as `file:L:C:`.
pub(super) fn parse(text: &str) -> Result<Manifest, (Option<Position>, String)> {
    yaml_serde::from_str(text).map_err(|e| {
        let at = e.location().map(|l| Position { line: l.line(), column: l.column() });
        let mut message = e.to_string();
        if let Some(p) = at {
            let suffix = format!(" at line {} column {}", p.line, p.column);
            if let Some(i) = message.find(&suffix) {
                message.replace_range(i..i + suffix.len(), "");
            }
        }
        // serde reports a repeated key at the start of the mapping; the second
        // occurrence is where the user looks.
        if let Some(key) =
            message.strip_prefix("duplicate field `").and_then(|m| m.strip_suffix('`'))
        {
            return (nth_value_position(text, key, 2).or(at), message);
        }
        // libyaml's message for a tab in indentation does not say "tab".
        let char_at = |p: Position| {
            text.lines().nth(p.line.checked_sub(1)?)?.chars().nth(p.column.checked_sub(1)?)
        };
        if at.and_then(char_at) == Some('\t') {
            message.push_str(" (a tab: YAML indents with spaces)");
        }
        // An empty file is "EOF while parsing a value", which says nothing to a
        // person editing agent.yaml.
        if text.trim().is_empty() {
            message = "the file is empty; it needs at least `name` and `description`".into();
        }
        (at, message)
    })
}

/// Where the value of the top-level `key` starts, if the document has that key.
/// Call it on text that [`parse`] accepted.
pub(super) fn value_position(text: &str, key: &str) -> Option<Position> {
    nth_value_position(text, key, 1)
}

/// Where the value of the `nth` (1-based) occurrence of the top-level `key` starts.
fn nth_value_position(text: &str, key: &str, nth: usize) -> Option<Position> {
    let find = FindKey { key, nth };
    let err = find.deserialize(yaml_serde::Deserializer::from_str(text)).err()?;
    err.location().map(|l| Position { line: l.line(), column: l.column() })
}

/// Walks the top-level mapping and fails at the value of the `nth` `key`.
struct FindKey<'a> {
    key: &'a str,
    nth: usize,
}

impl<'de> DeserializeSeed<'de> for FindKey<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FindKey<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = 0;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.key {
                seen += 1;
                if seen == self.nth {
                    return map.next_value_seed(FailHere);
                }
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// Fails on whatever value it is given; the deserializer stamps the error with
/// that value's position.
struct FailHere;

impl<'de> DeserializeSeed<'de> for FailHere {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FailHere {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Every `visit_*` keeps serde's default, an "invalid type" error.
        f.write_str("nothing (locating a value)")
    }
}
