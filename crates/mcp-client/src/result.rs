//! A server's answer as the registry passes it on: the MCP result as JSON
//! (`content` blocks, `structuredContent`), secrets masked and cut to the
//! server's size limit, so that nothing larger ever reaches a model, an event
//! or a log.

use serde_json::{Map, Value};

/// Binary blobs (images, audio) larger than this are replaced by a note: a
/// model is sent text.
const MAX_BLOB: usize = 1024;

/// `result` (a `CallToolResult` as JSON) masked with `mask` and cut to `max`
/// bytes of text and structured content. Returns the answer and whether
/// anything was cut.
pub(crate) fn limit(result: Value, max: usize, mask: &dyn Fn(&str) -> String) -> (Value, bool) {
    let Value::Object(mut m) = result else { return (result, false) };
    let mut cut = false;
    let mut content: Vec<Value> = match m.remove("content") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    for block in &mut content {
        let Value::Object(b) = block else { continue };
        if let Some(Value::String(t)) = b.get_mut("text") {
            *t = mask(t);
        }
        let kind = b.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        if let Some(Value::String(data)) = b.get("data")
            && data.len() > MAX_BLOB
        {
            let mime = b.get("mimeType").and_then(Value::as_str).unwrap_or("binary").to_owned();
            let note = format!("[{kind} {mime}, {} bytes of base64 not shown]", data.len());
            *block = text_block(note);
            cut = true;
        }
    }
    let mut structured = m.remove("structuredContent");
    if let Some(s) = &structured {
        let raw = s.to_string();
        let text = mask(&raw);
        let has_text = content.iter().any(|b| b.get("text").is_some());
        if text.len() > max || (has_text && text.len() > max / 2) {
            // Servers repeat structured content as text; when both cannot fit,
            // the text stays (it is what a model reads).
            if !has_text {
                content.push(text_block(text));
            }
            structured = None;
            cut = true;
        } else if text != raw {
            structured = serde_json::from_str(&text).ok();
        }
    }
    let used = structured.as_ref().map_or(0, |s| s.to_string().len());
    let budget = max.saturating_sub(used);
    let total: usize = content.iter().filter_map(|b| b.get("text")?.as_str()).map(str::len).sum();
    if total > budget {
        for block in &mut content {
            if let Some(Value::String(t)) = block.get_mut("text") {
                let share = (budget as u128 * t.len() as u128 / total.max(1) as u128) as usize;
                *t = stdx::clip(t, share.max(256)).into_owned();
            }
        }
        cut = true;
    }
    let mut out = Map::new();
    out.insert("content".into(), Value::Array(content));
    if let Some(s) = structured {
        out.insert("structuredContent".into(), s);
    }
    if let Some(e) = m.remove("isError") {
        out.insert("isError".into(), e);
    }
    (Value::Object(out), cut)
}

fn text_block(text: String) -> Value {
    serde_json::json!({"type": "text", "text": text})
}

#[cfg(test)]
mod tests {
    use engine::render_text;
    use serde_json::json;

    use super::*;

    #[test]
    fn results_are_masked_and_cut_to_the_limit() {
        let mask = |t: &str| t.replace("sk-secret", "***");
        let big = "x".repeat(10_000);
        let r = json!({"content": [{"type": "text", "text": format!("key sk-secret {big}")},
                                   {"type": "image", "data": "A".repeat(5000), "mimeType": "image/png"}],
                       "structuredContent": {"all": big}});
        let (v, cut) = limit(r, 2048, &mask);
        assert!(cut);
        let text = v.to_string();
        assert!(!text.contains("sk-secret") && text.len() < 3000, "{text}");
        assert!(v.get("structuredContent").is_none());
        assert!(render_text(&v).contains("image/png, 5000 bytes"), "{}", render_text(&v));

        let small = json!({"content": [], "structuredContent": {"n": 1}});
        let (v, cut) = limit(small, 2048, &mask);
        assert!(!cut);
        assert_eq!(render_text(&v), r#"{"n":1}"#);
    }
}
