//! What the two wire formats share: the parsed answer, stream decoding, and the
//! per-call options a format needs.

use serde_json::Value;

use crate::{
    settings::ProviderKind,
    sse::SseEvent,
    types::{Content, StopReason, StreamEvent, Usage},
};

/// The effective options of one call, after request and provider defaults merged.
#[derive(Debug, Clone)]
pub(crate) struct CallShape<'a> {
    pub kind: ProviderKind,
    pub model: &'a str,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub prompt_caching: bool,
    pub stream: bool,
}

/// An answer as a wire format parsed it.
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    pub model: String,
    pub content: Vec<Content>,
    pub stop_reason: StopReason,
    /// `None` when the server reported none.
    pub usage: Option<Usage>,
}

#[derive(Debug)]
pub(crate) enum DecodeError {
    /// The bytes break the format (malformed JSON, missing fields, truncation).
    Bad(String),
    /// The server reported an error inside a 200 response (a stream `error` event).
    Server(String),
}

/// Turns a format's SSE events into [`StreamEvent`]s and, at the end, a [`Parsed`].
pub(crate) trait Decoder: Send {
    /// Handles one event; returns true when it was the last one.
    fn event(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<bool, DecodeError>;
    /// The answer, once the last event was seen.
    fn finish(self: Box<Self>) -> Result<Parsed, DecodeError>;
}

/// A tool call being assembled from stream fragments.
#[derive(Debug, Default)]
pub(crate) struct ToolAcc {
    pub id: String,
    pub name: String,
    pub args: String,
}

impl ToolAcc {
    pub fn into_content(self) -> Result<Content, DecodeError> {
        let input = parse_args(&self.name, &self.args)?;
        Ok(Content::ToolUse { id: self.id, name: self.name, input })
    }
}

/// Tool arguments: a JSON object; empty means `{}` (a tool without parameters).
pub(crate) fn parse_args(name: &str, args: &str) -> Result<Value, DecodeError> {
    if args.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_str(args).map_err(|e| {
        DecodeError::Bad(format!("arguments of tool call {name:?} are not JSON ({e})"))
    })
}

pub(crate) fn json<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

pub(crate) fn u64_at(v: &Value, path: &[&str]) -> u64 {
    json(v, path).and_then(Value::as_u64).unwrap_or(0)
}

pub(crate) fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    json(v, path).and_then(Value::as_str)
}
