//! OpenAI Chat Completions, also spoken by Ollama, vLLM, llama.cpp server and LM
//! Studio: request bodies, JSON answers and the SSE stream of
//! `chat.completion.chunk` objects ending in `data: [DONE]`.

use serde_json::{Value, json};

use crate::{
    settings::ProviderKind,
    sse::SseEvent,
    types::{Content, Message, Request, Role, StopReason, StreamEvent, ToolChoice, Usage},
    wire::{CallShape, DecodeError, Decoder, Parsed, ToolAcc, json, parse_args, str_at, u64_at},
};

pub(crate) fn url(base: &str) -> String {
    format!("{}/chat/completions", base.trim_end_matches('/'))
}

pub(crate) fn embeddings_url(base: &str) -> String {
    format!("{}/embeddings", base.trim_end_matches('/'))
}

pub(crate) fn models_url(base: &str) -> String {
    format!("{}/models", base.trim_end_matches('/'))
}

/// The model ids of a `GET /models` answer (`{"data": [{"id": ...}]}`), in the
/// server's order. Ollama, vLLM, llama.cpp server and LM Studio all answer so.
pub(crate) fn parse_models(bytes: &[u8]) -> Result<Vec<String>, String> {
    let v: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the model list is not JSON: {e}"))?;
    let data = v
        .get("data")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| "the model list has no `data` array".to_owned())?;
    Ok(data.iter().filter_map(|m| m.get("id")?.as_str().map(str::to_owned)).collect())
}

pub(crate) fn embeddings_body(model: &str, texts: &[String]) -> Value {
    json!({"model": model, "input": texts, "encoding_format": "float"})
}

/// What `POST /embeddings` answered: one vector per input, in input order.
#[derive(Debug, Clone)]
pub(crate) struct ParsedEmbeddings {
    pub vectors: Vec<Vec<f32>>,
    pub prompt_tokens: Option<u64>,
}

/// `{"data": [{"index": i, "embedding": [...]}, ...], "usage": {...}}`. Servers
/// may answer out of order (the API says `index` is what counts); a missing,
/// duplicated or extra index, vectors of different lengths, or a non-number are
/// a broken answer, not something to guess around: a vector paired with the
/// wrong text would silently rank the wrong code.
pub(crate) fn parse_embeddings(bytes: &[u8], n: usize) -> Result<ParsedEmbeddings, DecodeError> {
    let v = answer(bytes)?;
    let data = json(&v, &["data"])
        .and_then(Value::as_array)
        .ok_or_else(|| DecodeError::Bad("response has no `data` array".into()))?;
    if data.len() != n {
        return Err(DecodeError::Bad(format!("{} embeddings for {n} inputs", data.len())));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; n];
    for (pos, item) in data.iter().enumerate() {
        let index = item.get("index").map_or(Some(pos), |i| i.as_u64().map(|i| i as usize));
        let index = index.filter(|&i| i < n && vectors[i].is_none()).ok_or_else(|| {
            DecodeError::Bad(format!("embedding {pos} has a bad or repeated `index`"))
        })?;
        let numbers = item.get("embedding").and_then(Value::as_array).ok_or_else(|| {
            DecodeError::Bad(format!(
                "embedding {index} is not an array of numbers (was `encoding_format` ignored?)"
            ))
        })?;
        let vector = numbers
            .iter()
            .map(|x| x.as_f64().filter(|x| x.is_finite()).map(|x| x as f32))
            .collect::<Option<Vec<f32>>>()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                DecodeError::Bad(format!("embedding {index} is empty or not all numbers"))
            })?;
        vectors[index] = Some(vector);
    }
    let vectors: Vec<Vec<f32>> =
        vectors.into_iter().map(|v| v.expect("every index filled")).collect();
    if let Some(d) = vectors.iter().find(|v| v.len() != vectors[0].len()) {
        return Err(DecodeError::Bad(format!(
            "embeddings of different lengths ({} and {})",
            vectors[0].len(),
            d.len()
        )));
    }
    Ok(ParsedEmbeddings {
        vectors,
        prompt_tokens: json(&v, &["usage", "prompt_tokens"]).and_then(Value::as_u64),
    })
}

pub(crate) fn body(req: &Request, shape: &CallShape<'_>) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for m in &req.messages {
        push_message(&mut messages, m);
    }
    let mut b = json!({"model": shape.model, "messages": messages});
    if !req.tools.is_empty() {
        b["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema,
                }})
            })
            .collect();
        b["tool_choice"] = match &req.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
        };
    }
    if let Some(schema) = &req.output_schema {
        // `strict` needs a closed schema (additionalProperties: false, all required);
        // asking for it with an open one is refused, so it follows the schema.
        let strict = schema.schema.get("additionalProperties") == Some(&Value::Bool(false));
        b["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": schema.schema, "strict": strict},
        });
    }
    if let Some(n) = shape.max_tokens {
        // OpenAI's reasoning models refuse `max_tokens`; compatible servers know only it.
        let field = match shape.kind {
            ProviderKind::Openai => "max_completion_tokens",
            _ => "max_tokens",
        };
        b[field] = json!(n);
    }
    if let Some(t) = shape.temperature {
        // 0.3f32 serialized as f32 is 0.30000001192092896: send the number the
        // user wrote.
        b["temperature"] = json!(stdx::widen(t));
    }
    if shape.stream {
        b["stream"] = json!(true);
        b["stream_options"] = json!({"include_usage": true});
    }
    b
}

fn push_message(out: &mut Vec<Value>, m: &Message) {
    match m.role {
        Role::User => {
            let mut text = String::new();
            for c in &m.content {
                match c {
                    Content::Text { text: t } => text.push_str(t),
                    Content::ToolResult { tool_use_id, content, is_error } => {
                        let content =
                            if *is_error { format!("error: {content}") } else { content.clone() };
                        out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
                    }
                    Content::ToolUse { .. } => {}
                }
            }
            if !text.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
        }
        Role::Assistant => {
            let mut text = String::new();
            let mut calls = Vec::new();
            for c in &m.content {
                match c {
                    Content::Text { text: t } => text.push_str(t),
                    Content::ToolUse { id, name, input } => calls.push(json!({
                        "id": id, "type": "function",
                        "function": {"name": name, "arguments": input.to_string()},
                    })),
                    Content::ToolResult { .. } => {}
                }
            }
            let mut msg = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            if !calls.is_empty() {
                msg["tool_calls"] = Value::Array(calls);
            }
            out.push(msg);
        }
    }
}

fn stop_reason(s: Option<&str>) -> StopReason {
    match s {
        Some("stop") => StopReason::EndTurn,
        Some("length") => StopReason::MaxTokens,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("content_filter") => StopReason::ContentFilter,
        _ => StopReason::Other,
    }
}

/// `prompt_tokens` includes cached input; ours does not (see [`Usage`]).
fn usage(u: &Value) -> Usage {
    let cached = u64_at(u, &["prompt_tokens_details", "cached_tokens"]);
    Usage {
        input_tokens: u64_at(u, &["prompt_tokens"]).saturating_sub(cached),
        output_tokens: u64_at(u, &["completion_tokens"]),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        estimated: false,
    }
}

/// A whole JSON answer, unless it is not JSON or is an `{"error": ...}`.
fn answer(bytes: &[u8]) -> Result<Value, DecodeError> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| DecodeError::Bad(format!("response is not JSON ({e})")))?;
    match server_error(&v) {
        Some(e) => Err(e),
        None => Ok(v),
    }
}

fn server_error(v: &Value) -> Option<DecodeError> {
    let e = v.get("error")?;
    let msg = str_at(e, &["message"]).or_else(|| e.as_str()).unwrap_or("error");
    Some(DecodeError::Server(msg.to_owned()))
}

pub(crate) fn parse(bytes: &[u8]) -> Result<Parsed, DecodeError> {
    let v = answer(bytes)?;
    let choice = json(&v, &["choices"])
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| DecodeError::Bad("response has no `choices`".into()))?;
    let msg = choice.get("message").cloned().unwrap_or_default();
    let mut content = Vec::new();
    if let Some(t) = str_at(&msg, &["content"]).filter(|t| !t.is_empty()) {
        content.push(Content::Text { text: t.to_owned() });
    }
    if let Some(r) = str_at(&msg, &["refusal"]) {
        content.push(Content::Text { text: r.to_owned() });
    }
    for (i, call) in
        msg.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate()
    {
        let name = str_at(call, &["function", "name"]).unwrap_or("").to_owned();
        let args = str_at(call, &["function", "arguments"]).unwrap_or("");
        content.push(Content::ToolUse {
            id: str_at(call, &["id"]).map_or_else(|| format!("call_{i}"), str::to_owned),
            input: parse_args(&name, args)?,
            name,
        });
    }
    Ok(Parsed {
        model: str_at(&v, &["model"]).unwrap_or("").to_owned(),
        content,
        stop_reason: stop_reason(str_at(choice, &["finish_reason"])),
        usage: v.get("usage").filter(|u| u.is_object()).map(usage),
    })
}

#[derive(Default)]
pub(crate) struct StreamDecoder {
    model: String,
    text: String,
    /// By the chunk's `index` field, in order of first appearance.
    tools: Vec<(u64, ToolAcc)>,
    usage: Option<Usage>,
    finish: Option<String>,
    done: bool,
}

impl Decoder for StreamDecoder {
    fn event(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<bool, DecodeError> {
        if ev.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        let v: Value = serde_json::from_str(&ev.data)
            .map_err(|e| DecodeError::Bad(format!("stream chunk is not JSON ({e})")))?;
        if let Some(e) = server_error(&v) {
            return Err(e);
        }
        if let Some(m) = str_at(&v, &["model"]).filter(|m| !m.is_empty()) {
            self.model = m.to_owned();
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage(u));
        }
        let Some(choice) = json(&v, &["choices"]).and_then(Value::as_array).and_then(|c| c.first())
        else {
            return Ok(false); // the usage-only chunk
        };
        if let Some(r) = str_at(choice, &["finish_reason"]) {
            self.finish = Some(r.to_owned());
        }
        let delta = choice.get("delta").cloned().unwrap_or_default();
        if let Some(t) = str_at(&delta, &["content"]).filter(|t| !t.is_empty()) {
            self.text.push_str(t);
            out.push(StreamEvent::TextDelta { text: t.to_owned() });
        }
        for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let index =
                call.get("index").and_then(Value::as_u64).unwrap_or(self.tools.len() as u64);
            let pos = match self.tools.iter().position(|(i, _)| *i == index) {
                Some(p) => p,
                None => {
                    let acc = ToolAcc {
                        id: str_at(call, &["id"])
                            .map_or_else(|| format!("call_{index}"), str::to_owned),
                        name: str_at(call, &["function", "name"]).unwrap_or("").to_owned(),
                        args: String::new(),
                    };
                    out.push(StreamEvent::ToolCallStart {
                        index: self.tools.len(),
                        id: acc.id.clone(),
                        name: acc.name.clone(),
                    });
                    self.tools.push((index, acc));
                    self.tools.len() - 1
                }
            };
            if let Some(piece) = str_at(call, &["function", "arguments"]).filter(|a| !a.is_empty())
            {
                self.tools[pos].1.args.push_str(piece);
                out.push(StreamEvent::ToolCallDelta { index: pos, json: piece.to_owned() });
            }
        }
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<Parsed, DecodeError> {
        // `[DONE]` is the end; a server that closes right after `finish_reason` (some
        // compatible servers do) is complete too. Anything else was cut off.
        if !self.done && self.finish.is_none() {
            return Err(DecodeError::Bad(
                "the stream ended before `finish_reason` or `[DONE]` (truncated)".into(),
            ));
        }
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(Content::Text { text: self.text });
        }
        for (_, acc) in self.tools {
            content.push(acc.into_content()?);
        }
        Ok(Parsed {
            model: self.model,
            content,
            stop_reason: stop_reason(self.finish.as_deref()),
            usage: self.usage,
        })
    }
}

/// The structured answer: the text, parsed as JSON.
pub(crate) fn structured(content: &[Content]) -> Result<Value, String> {
    let text: String = content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    serde_json::from_str(text.trim()).map_err(|e| format!("structured answer is not JSON ({e})"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::ToolDef;

    fn shape(kind: ProviderKind, stream: bool) -> CallShape<'static> {
        CallShape {
            kind,
            model: "m",
            max_tokens: Some(100),
            temperature: Some(0.0),
            prompt_caching: true,
            stream,
        }
    }

    #[test]
    fn a_tool_conversation_maps_to_tool_messages() {
        let mut req = Request::new("weather?").with_system("sys").with_tool(ToolDef {
            name: "w".into(),
            description: "weather".into(),
            input_schema: json!({"type": "object"}),
        });
        req.messages.push(Message {
            role: Role::Assistant,
            content: vec![
                Content::Text { text: "checking".into() },
                Content::ToolUse {
                    id: "c1".into(),
                    name: "w".into(),
                    input: json!({"city": "Oslo"}),
                },
            ],
        });
        req.messages.push(Message {
            role: Role::User,
            content: vec![
                Content::ToolResult {
                    tool_use_id: "c1".into(),
                    content: "sunny".into(),
                    is_error: false,
                },
                Content::Text { text: "and tomorrow?".into() },
            ],
        });
        req.tool_choice = ToolChoice::Tool("w".into());
        let b = body(&req, &shape(ProviderKind::OpenaiCompatible, false));
        assert_eq!(
            b["messages"],
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": "checking", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{\"city\":\"Oslo\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
                {"role": "user", "content": "and tomorrow?"},
            ])
        );
        assert_eq!(b["tool_choice"], json!({"type": "function", "function": {"name": "w"}}));
        assert_eq!(b["max_tokens"], 100);
        assert_eq!(b["temperature"], 0.0);
        let warm = CallShape { temperature: Some(0.3), ..shape(ProviderKind::Openai, false) };
        assert_eq!(body(&req, &warm)["temperature"].to_string(), "0.3", "not 0.30000001192092896");
        assert_eq!(b.get("stream"), None);
        assert_eq!(b.get("response_format"), None);
    }

    #[test]
    fn json_answers_with_tool_calls_and_refusals() {
        let ok = br#"{"model":"gpt-4o-2024-08-06","choices":[{"message":{"role":"assistant","content":null,
            "tool_calls":[{"id":"call_1","type":"function","function":{"name":"w","arguments":"{\"city\":\"Oslo\"}"}}]},
            "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":20}}}"#;
        let p = parse(ok).unwrap();
        assert_eq!(p.model, "gpt-4o-2024-08-06");
        assert_eq!(p.stop_reason, StopReason::ToolUse);
        assert_eq!(
            p.content,
            vec![Content::ToolUse {
                id: "call_1".into(),
                name: "w".into(),
                input: json!({"city": "Oslo"})
            }]
        );
        let u = p.usage.unwrap();
        assert_eq!((u.input_tokens, u.cache_read_tokens, u.output_tokens), (30, 20, 5));

        let bad_args = br#"{"choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"w","arguments":"{\"ci"}}]},"finish_reason":"tool_calls"}]}"#;
        assert!(matches!(parse(bad_args), Err(DecodeError::Bad(m)) if m.contains("not JSON")));
        assert!(
            matches!(parse(br#"{"error":{"message":"boom"}}"#), Err(DecodeError::Server(m)) if m == "boom")
        );
        assert!(matches!(parse(br#"{"choices":[]}"#), Err(DecodeError::Bad(_))));
    }

    #[test]
    fn a_stream_ending_after_finish_reason_without_done_is_complete() {
        let mut d = Box::<StreamDecoder>::default();
        let mut out = Vec::new();
        for data in [
            r#"{"choices":[{"delta":{"content":"hi"}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
        ] {
            d.event(&SseEvent { event: "message".into(), data: data.into() }, &mut out).unwrap();
        }
        let p = d.finish().unwrap();
        assert_eq!(p.content, vec![Content::Text { text: "hi".into() }]);
        assert_eq!(p.usage, None, "no usage chunk: the client estimates");
    }
}
