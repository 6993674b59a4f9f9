//! The Anthropic Messages API: request bodies, JSON answers and the SSE stream
//! (`message_start`, `content_block_start/delta/stop`, `message_delta`,
//! `message_stop`, `ping`, `error`).

use serde_json::{Value, json};

use crate::{
    sse::SseEvent,
    types::{Content, Message, Request, Role, StopReason, StreamEvent, ToolChoice, Usage},
    wire::{CallShape, DecodeError, Decoder, Parsed, ToolAcc, str_at, u64_at},
};

pub(crate) const API_VERSION: &str = "2023-06-01";
/// The API requires `max_tokens`; this fits every current model.
const DEFAULT_MAX_TOKENS: u32 = 4096;

pub(crate) fn url(base: &str) -> String {
    format!("{}/v1/messages", base.trim_end_matches('/'))
}

pub(crate) fn body(req: &Request, shape: &CallShape<'_>) -> Value {
    let cache = || json!({"type": "ephemeral"});
    let mut b = json!({
        "model": shape.model,
        "max_tokens": shape.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": req.messages.iter().map(message).collect::<Vec<_>>(),
    });
    if let Some(system) = &req.system {
        let mut block = json!({"type": "text", "text": system});
        if shape.prompt_caching {
            block["cache_control"] = cache();
        }
        b["system"] = json!([block]);
    }
    let mut tools: Vec<Value> = req
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    let mut choice = match &req.tool_choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
        ToolChoice::None => json!({"type": "none"}),
    };
    // Structured output as a forced tool call: the tool's input is the answer.
    if let Some(schema) = &req.output_schema {
        tools.push(json!({
            "name": schema.name,
            "description": "Return the answer in exactly this structure.",
            "input_schema": schema.schema,
        }));
        choice = json!({"type": "tool", "name": schema.name});
    }
    if !tools.is_empty() {
        if shape.prompt_caching {
            // One breakpoint after the tools caches all of them (they come first).
            if let Some(last) = tools.last_mut() {
                last["cache_control"] = cache();
            }
        }
        b["tools"] = Value::Array(tools);
        b["tool_choice"] = choice;
    }
    if shape.prompt_caching && req.messages.len() > 1 {
        // In a conversation, cache the prefix up to the newest turn as well.
        if let Some(block) = b["messages"]
            .as_array_mut()
            .and_then(|m| m.last_mut())
            .and_then(|m| m["content"].as_array_mut())
            .and_then(|c| c.last_mut())
        {
            block["cache_control"] = cache();
        }
    }
    if let Some(t) = shape.temperature {
        // 0.3f32 serialized as f32 is 0.30000001192092896: send the number the
        // user wrote.
        b["temperature"] = json!(stdx::widen(t));
    }
    if shape.stream {
        b["stream"] = json!(true);
    }
    b
}

fn message(m: &Message) -> Value {
    let role = match m.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let content: Vec<Value> = m
        .content
        .iter()
        .map(|c| match c {
            Content::Text { text } => json!({"type": "text", "text": text}),
            Content::ToolUse { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
            Content::ToolResult { tool_use_id, content, is_error } => json!({
                "type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error,
            }),
        })
        .collect();
    json!({"role": role, "content": content})
}

fn stop_reason(s: Option<&str>) -> StopReason {
    match s {
        Some("end_turn") => StopReason::EndTurn,
        Some("max_tokens") => StopReason::MaxTokens,
        Some("tool_use") => StopReason::ToolUse,
        Some("stop_sequence") => StopReason::StopSequence,
        Some("refusal") => StopReason::ContentFilter,
        _ => StopReason::Other,
    }
}

fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: u64_at(u, &["input_tokens"]),
        output_tokens: u64_at(u, &["output_tokens"]),
        cache_read_tokens: u64_at(u, &["cache_read_input_tokens"]),
        cache_write_tokens: u64_at(u, &["cache_creation_input_tokens"]),
        estimated: false,
    }
}

/// A complete (non-streaming) answer.
pub(crate) fn parse(bytes: &[u8]) -> Result<Parsed, DecodeError> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| DecodeError::Bad(format!("response is not JSON ({e})")))?;
    if str_at(&v, &["type"]) == Some("error") {
        return Err(DecodeError::Server(
            str_at(&v, &["error", "message"]).unwrap_or("error").to_owned(),
        ));
    }
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| DecodeError::Bad("response has no `content` array".into()))?;
    let mut content = Vec::new();
    for b in blocks {
        match str_at(b, &["type"]) {
            Some("text") => {
                content.push(Content::Text { text: str_at(b, &["text"]).unwrap_or("").to_owned() })
            }
            Some("tool_use") => content.push(Content::ToolUse {
                id: str_at(b, &["id"]).unwrap_or("").to_owned(),
                name: str_at(b, &["name"]).unwrap_or("").to_owned(),
                input: b.get("input").cloned().unwrap_or_else(|| json!({})),
            }),
            _ => {} // thinking, redacted_thinking, server tool blocks
        }
    }
    Ok(Parsed {
        model: str_at(&v, &["model"]).unwrap_or("").to_owned(),
        content,
        stop_reason: stop_reason(str_at(&v, &["stop_reason"])),
        usage: v.get("usage").map(usage),
    })
}

enum Block {
    Text(String),
    Tool { ordinal: usize, acc: ToolAcc },
    Other,
}

#[derive(Default)]
pub(crate) struct StreamDecoder {
    model: String,
    blocks: Vec<(u64, Block)>,
    tools: usize,
    usage: Option<Usage>,
    stop: Option<String>,
    done: bool,
}

impl StreamDecoder {
    fn block(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks.iter_mut().find(|(i, _)| *i == index).map(|(_, b)| b)
    }
}

impl Decoder for StreamDecoder {
    fn event(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<bool, DecodeError> {
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
            DecodeError::Bad(format!("stream event {:?} is not JSON ({e})", ev.event))
        })?;
        let kind = str_at(&v, &["type"]).unwrap_or(ev.event.as_str()).to_owned();
        match kind.as_str() {
            "message_start" => {
                self.model = str_at(&v, &["message", "model"]).unwrap_or("").to_owned();
                self.usage = v.get("message").and_then(|m| m.get("usage")).map(usage);
            }
            "content_block_start" => {
                let index = u64_at(&v, &["index"]);
                let cb = v.get("content_block").cloned().unwrap_or_default();
                let block = match str_at(&cb, &["type"]) {
                    Some("text") => {
                        let t = str_at(&cb, &["text"]).unwrap_or("").to_owned();
                        if !t.is_empty() {
                            out.push(StreamEvent::TextDelta { text: t.clone() });
                        }
                        Block::Text(t)
                    }
                    Some("tool_use") => {
                        let ordinal = self.tools;
                        self.tools += 1;
                        let acc = ToolAcc {
                            id: str_at(&cb, &["id"]).unwrap_or("").to_owned(),
                            name: str_at(&cb, &["name"]).unwrap_or("").to_owned(),
                            args: String::new(),
                        };
                        out.push(StreamEvent::ToolCallStart {
                            index: ordinal,
                            id: acc.id.clone(),
                            name: acc.name.clone(),
                        });
                        Block::Tool { ordinal, acc }
                    }
                    _ => Block::Other,
                };
                self.blocks.push((index, block));
            }
            "content_block_delta" => {
                let index = u64_at(&v, &["index"]);
                let delta = v.get("delta").cloned().unwrap_or_default();
                let block = self.block(index).ok_or_else(|| {
                    DecodeError::Bad(format!("delta for unknown content block {index}"))
                })?;
                match (str_at(&delta, &["type"]), block) {
                    (Some("text_delta"), Block::Text(t)) => {
                        let piece = str_at(&delta, &["text"]).unwrap_or("");
                        t.push_str(piece);
                        out.push(StreamEvent::TextDelta { text: piece.to_owned() });
                    }
                    (Some("input_json_delta"), Block::Tool { ordinal, acc }) => {
                        let piece = str_at(&delta, &["partial_json"]).unwrap_or("");
                        acc.args.push_str(piece);
                        out.push(StreamEvent::ToolCallDelta {
                            index: *ordinal,
                            json: piece.to_owned(),
                        });
                    }
                    _ => {} // thinking_delta, signature_delta, citations
                }
            }
            "message_delta" => {
                if let Some(r) = str_at(&v, &["delta", "stop_reason"]) {
                    self.stop = Some(r.to_owned());
                }
                if let Some(u) = v.get("usage") {
                    let cur = self.usage.get_or_insert_with(Usage::default);
                    // `output_tokens` is cumulative; newer servers repeat the input counts.
                    cur.output_tokens = u64_at(u, &["output_tokens"]).max(cur.output_tokens);
                    for (field, slot) in [
                        ("input_tokens", &mut cur.input_tokens),
                        ("cache_read_input_tokens", &mut cur.cache_read_tokens),
                        ("cache_creation_input_tokens", &mut cur.cache_write_tokens),
                    ] {
                        if let Some(n) = u.get(field).and_then(Value::as_u64) {
                            *slot = n;
                        }
                    }
                }
            }
            "message_stop" => {
                self.done = true;
                return Ok(true);
            }
            "error" => {
                let msg = str_at(&v, &["error", "message"]).unwrap_or("error event");
                let typ = str_at(&v, &["error", "type"]).unwrap_or("error");
                return Err(DecodeError::Server(format!("{typ}: {msg}")));
            }
            _ => {} // ping, content_block_stop, future events
        }
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<Parsed, DecodeError> {
        if !self.done {
            return Err(DecodeError::Bad(
                "the stream ended before `message_stop` (truncated)".into(),
            ));
        }
        let mut content = Vec::new();
        for (_, b) in self.blocks {
            match b {
                Block::Text(text) => content.push(Content::Text { text }),
                Block::Tool { acc, .. } => content.push(acc.into_content()?),
                Block::Other => {}
            }
        }
        Ok(Parsed {
            model: self.model,
            content,
            stop_reason: stop_reason(self.stop.as_deref()),
            usage: self.usage,
        })
    }
}

/// Checks a structured answer: the forced tool call's input.
pub(crate) fn structured(content: &[Content], name: &str) -> Option<Value> {
    content.iter().find_map(|c| match c {
        Content::ToolUse { name: n, input, .. } if n == name => Some(input.clone()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::settings::ProviderKind;

    #[test]
    fn without_caching_no_cache_control_and_required_max_tokens() {
        let shape = CallShape {
            kind: ProviderKind::Anthropic,
            model: "claude-haiku-4-5",
            max_tokens: None,
            temperature: None,
            prompt_caching: false,
            stream: false,
        };
        let b = body(&Request::new("hi").with_system("sys"), &shape);
        assert_eq!(b["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(b["system"], json!([{"type": "text", "text": "sys"}]));
        assert_eq!(b.get("temperature"), None);
        assert_eq!(b.get("tools"), None);
        assert!(!b.to_string().contains("cache_control"));
    }

    #[test]
    fn json_answers() {
        let ok = br#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
            "content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Hi"},
                       {"type":"tool_use","id":"toolu_1","name":"w","input":{"city":"Oslo"}}],
            "stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":3,"cache_read_input_tokens":7,"cache_creation_input_tokens":2}}"#;
        let p = parse(ok).unwrap();
        assert_eq!(p.content.len(), 2, "thinking blocks are not content");
        assert_eq!(p.stop_reason, StopReason::ToolUse);
        let u = p.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens),
            (10, 3, 7, 2)
        );
        let err = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert!(matches!(parse(err), Err(DecodeError::Server(m)) if m == "Overloaded"));
        assert!(matches!(parse(b"<html>"), Err(DecodeError::Bad(_))));
    }

    #[test]
    fn a_stream_without_message_stop_is_truncated() {
        let mut d = Box::<StreamDecoder>::default();
        let mut out = Vec::new();
        let ev = |data: serde_json::Value| SseEvent { event: "x".into(), data: data.to_string() };
        d.event(&ev(json!({"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 3}}})), &mut out).unwrap();
        d.event(&ev(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})), &mut out)
            .unwrap();
        d.event(&ev(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "par"}})), &mut out)
            .unwrap();
        assert_eq!(out, vec![StreamEvent::TextDelta { text: "par".into() }]);
        assert!(matches!(d.finish(), Err(DecodeError::Bad(m)) if m.contains("truncated")));
    }
}
