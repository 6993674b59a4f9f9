//! The provider-neutral vocabulary: requests, messages, tools, responses, usage and
//! stream events. Each wire format (`anthropic.rs`, `openai.rs`) translates to and
//! from these types and nothing else.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One model call. Build it with [`Request::new`] and the `with_*` methods.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Request {
    /// The model of the first provider tried (fallbacks from other vendors use
    /// their own configured model); `None` means the configured model.
    pub model: Option<String>,
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDef>,
    pub tool_choice: ToolChoice,
    /// Ask for a JSON answer that follows this schema ([`Response::structured`]).
    pub output_schema: Option<OutputSchema>,
    /// Upper bound on output tokens; `None` means the provider's configured value.
    pub max_tokens: Option<u32>,
    /// `None` means the provider's configured value, else the server's default.
    pub temperature: Option<f32>,
}

impl Request {
    /// A request with one user message.
    pub fn new(user_text: impl Into<String>) -> Request {
        Request { messages: vec![Message::user(user_text)], ..Request::default() }
    }

    pub fn with_system(mut self, system: impl Into<String>) -> Request {
        self.system = Some(system.into());
        self
    }

    pub fn with_tool(mut self, tool: ToolDef) -> Request {
        self.tools.push(tool);
        self
    }

    pub fn with_output_schema(mut self, name: impl Into<String>, schema: Value) -> Request {
        self.output_schema = Some(OutputSchema { name: name.into(), schema });
        self
    }

    pub fn with_max_tokens(mut self, n: u32) -> Request {
        self.max_tokens = Some(n);
        self
    }

    pub fn with_model(mut self, model: impl Into<String>) -> Request {
        self.model = Some(model.into());
        self
    }

    /// Characters of all text in the request: the basis of the input estimate used
    /// when a server reports no usage.
    pub(crate) fn text_len(&self) -> usize {
        let mut n = self.system.as_deref().map_or(0, str::len);
        for m in &self.messages {
            for c in &m.content {
                n += match c {
                    Content::Text { text } => text.len(),
                    Content::ToolUse { name, input, .. } => name.len() + input.to_string().len(),
                    Content::ToolResult { content, .. } => content.len(),
                };
            }
        }
        for t in &self.tools {
            n += t.name.len() + t.description.len() + t.input_schema.to_string().len();
        }
        n
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One turn of the conversation. Tool results travel in user messages (as Anthropic
/// models them); the OpenAI format turns each into a `tool` message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Content>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Message {
        Message { role: Role::User, content: vec![Content::Text { text: text.into() }] }
    }

    pub fn assistant(text: impl Into<String>) -> Message {
        Message { role: Role::Assistant, content: vec![Content::Text { text: text.into() }] }
    }

    /// The assistant turn a [`Response`] stands for, to continue the conversation.
    pub fn from_response(resp: &Response) -> Message {
        Message { role: Role::Assistant, content: resp.content.clone() }
    }

    /// A user turn answering one tool call.
    pub fn tool_result(tool_use_id: impl Into<String>, content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: vec![Content::ToolResult {
                tool_use_id: tool_use_id.into(),
                content: content.into(),
                is_error: false,
            }],
        }
    }
}

/// A block of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    /// The model asks to call a tool; `input` follows the tool's schema.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// The caller's answer to a [`Content::ToolUse`].
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
    },
}

/// A tool the model may call. `input_schema` is a JSON Schema object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "type", content = "name", rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must call some tool.
    Required,
    /// The model must call this tool.
    Tool(String),
    /// Tools are described but must not be called.
    None,
}

/// A JSON Schema the answer must follow. OpenAI and compatible servers get it as a
/// `json_schema` response format; Anthropic as a forced tool call named `name`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutputSchema {
    pub name: String,
    pub schema: Value,
}

// The model's own vocabulary (why it stopped, the tokens) belongs to the
// protocol: agent runs report it in their events, camelCase like every event.
pub use protocol::{StopReason, Usage};

/// The answer to a call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Response {
    /// The configured name of the provider that answered (after any fallback).
    pub provider: String,
    /// The model as the server named it.
    pub model: String,
    pub content: Vec<Content>,
    /// The parsed JSON answer when the request had an [`OutputSchema`].
    pub structured: Option<Value>,
    pub stop_reason: StopReason,
    pub usage: Usage,
    /// `None` when no price is known for the model.
    pub cost_usd: Option<f64>,
    /// From the first request byte to the last response byte of the answering attempt.
    pub latency_ms: u64,
    /// Attempts made across providers, this one included.
    pub attempts: u32,
}

impl Response {
    /// All text blocks joined.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for c in &self.content {
            if let Content::Text { text } = c {
                s.push_str(text);
            }
        }
        s
    }

    /// The tool calls, in order: (id, name, input).
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|c| match c {
            Content::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

/// The JSON object in a model's text answer: from its first `{` to its last `}`,
/// without the code fence or the prose small models put around it. `None` when
/// there is no `{`, or no `}` after it.
pub fn json_object_in(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let end = text.rfind('}').filter(|&end| end > start)?;
    Some(&text[start..=end])
}

/// What a streaming call reports as it goes, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StreamEvent {
    /// An attempt starts on this provider.
    Started { provider: String, model: String },
    /// More answer text.
    TextDelta { text: String },
    /// A tool call begins; its arguments follow as [`StreamEvent::ToolCallDelta`]s.
    ToolCallStart { index: usize, id: String, name: String },
    /// A fragment of a tool call's JSON arguments (not valid JSON on its own).
    ToolCallDelta { index: usize, json: String },
    /// The attempt failed after output was reported: discard everything reported
    /// since the last `Started`. A retry or the fallback provider follows.
    Reset { reason: String },
    /// A retryable failure; the next attempt starts after `delay_ms`.
    Retrying { provider: String, attempt: u32, delay_ms: u64, reason: String },
    /// The provider gave up (or its circuit is open); the next one in the chain takes over.
    Fallback { from: String, to: String, reason: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_object_of_an_answer() {
        // (answer, object)
        let cases = [
            (r#"{"a": 1}"#, Some(r#"{"a": 1}"#)),
            ("Sure!\n```json\n{\"a\": {\"b\": 2}}\n```\nDone.", Some(r#"{"a": {"b": 2}}"#)),
            ("no JSON here", None),
            (r#"{"a": 1"#, None),
            ("} then {", None),
        ];
        for (text, want) in cases {
            assert_eq!(json_object_in(text), want, "{text:?}");
        }
    }
}
