//! Each wire format end to end: request shape on the wire, streamed deltas, the
//! assembled answer, usage and cost.

use llm::{CallOptions, Content, Message, Request, StopReason, StreamEvent, ToolDef};
use serde_json::json;
use test_support::mock_llm::{MockLlm, MockUsage, Reply};

use super::*;

fn weather_tool() -> ToolDef {
    ToolDef {
        name: "get_weather".into(),
        description: "Weather for a city".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    }
}

#[tokio::test]
async fn anthropic_streams_text_and_tool_calls_split_across_chunks() {
    let mock = MockLlm::start();
    let args = json!({"city": "Paris", "units": "celsius", "days": [1, 2, 3]});
    mock.push(
        Reply::tool_calls("Let me check the weather.", vec![("get_weather", args.clone())])
            .usage(MockUsage { input: 20, output: 30, cache_read: 100, cache_write: 50 })
            .write_size(7),
    );
    let llm = anthropic(&mock);
    let req =
        Request::new("Weather in Paris?").with_system("You are terse.").with_tool(weather_tool());
    let mut ev = Events::default();
    let resp =
        llm.stream(&req, &CallOptions::default(), &mut |e| ev.0.push(e.clone())).await.unwrap();

    assert_eq!(ev.text(), "Let me check the weather.");
    assert!(
        ev.count(|e| matches!(e, StreamEvent::TextDelta { .. })) > 3,
        "text arrives in several deltas"
    );
    let fragments: String =
        ev.0.iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallDelta { index: 0, json } => Some(json.as_str()),
                _ => None,
            })
            .collect();
    assert_eq!(serde_json::from_str::<serde_json::Value>(&fragments).unwrap(), args);
    assert!(
        ev.count(|e| matches!(e, StreamEvent::ToolCallStart { name, .. } if name == "get_weather"))
            == 1
    );

    assert_eq!(resp.text(), "Let me check the weather.");
    let calls: Vec<_> = resp.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].1, "get_weather");
    assert_eq!(calls[0].2, &args);
    assert!(calls[0].0.starts_with("toolu_"));
    assert_eq!(resp.stop_reason, StopReason::ToolUse);
    assert_eq!(resp.provider, "anthropic");
    assert_eq!((resp.usage.input_tokens, resp.usage.output_tokens), (20, 30));
    assert_eq!((resp.usage.cache_read_tokens, resp.usage.cache_write_tokens), (100, 50));
    // claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per MTok
    let want = (20.0 * 3.0 + 30.0 * 15.0 + 100.0 * 0.3 + 50.0 * 3.75) / 1e6;
    assert!((resp.cost_usd.unwrap() - want).abs() < 1e-12, "{:?}", resp.cost_usd);

    let r = &mock.requests()[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["model"], "claude-sonnet-4-5");
    assert!(r.body["max_tokens"].as_u64().unwrap() > 0, "required by the API");
    assert_eq!(r.body["system"][0]["text"], "You are terse.");
    assert_eq!(r.body["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(r.body["tools"][0]["name"], "get_weather");
    assert_eq!(r.body["tools"][0]["input_schema"]["required"][0], "city");
    assert_eq!(r.body["tools"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(r.body["messages"][0]["content"][0]["text"], "Weather in Paris?");
}

#[tokio::test]
async fn anthropic_tool_results_round_trip_and_json_mode() {
    let mock = MockLlm::start();
    mock.push(Reply::text("It is sunny.").write_size(3));
    let llm = anthropic(&mock);
    let mut req = Request::new("Weather in Paris?").with_tool(weather_tool());
    req.messages.push(Message {
        role: llm::Role::Assistant,
        content: vec![Content::ToolUse {
            id: "toolu_1".into(),
            name: "get_weather".into(),
            input: json!({"city": "Paris"}),
        }],
    });
    req.messages.push(Message::tool_result("toolu_1", "sunny, 21C"));
    let resp = llm.complete(&req, &CallOptions::default()).await.unwrap();
    assert_eq!(resp.text(), "It is sunny.");
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    let r = &mock.requests()[0];
    assert_eq!(r.body.get("stream"), None, "complete() is a plain JSON call");
    assert_eq!(r.body["messages"][1]["content"][0]["type"], "tool_use");
    let result = &r.body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert_eq!(result["content"], "sunny, 21C");
    // a conversation caches its prefix at the newest turn
    assert_eq!(result["cache_control"]["type"], "ephemeral");
}

#[tokio::test]
async fn anthropic_structured_output_is_a_forced_tool_call() {
    let mock = MockLlm::start();
    let plan = json!({"summary": "add a test", "steps": ["write it", "run it"]});
    mock.push(Reply::structured(plan.clone()));
    let llm = anthropic(&mock);
    let schema = json!({"type": "object", "properties": {"summary": {"type": "string"}, "steps": {"type": "array"}}});
    let req = Request::new("Plan it").with_output_schema("plan", schema.clone());
    let resp = llm.stream(&req, &CallOptions::default(), &mut |_| {}).await.unwrap();
    assert_eq!(resp.structured, Some(plan));
    let r = &mock.requests()[0];
    assert_eq!(r.body["tool_choice"], json!({"type": "tool", "name": "plan"}));
    assert_eq!(r.body["tools"][0]["input_schema"], schema);
}

#[tokio::test]
async fn openai_streams_tool_calls_and_reports_cached_tokens() {
    let mock = MockLlm::start();
    let a1 = json!({"city": "Oslo"});
    let a2 = json!({"city": "Lima", "note": "two calls in one answer"});
    mock.push(
        Reply::tool_calls("", vec![("get_weather", a1.clone()), ("get_weather", a2.clone())])
            .usage(MockUsage { input: 900, output: 40, cache_read: 100, cache_write: 0 })
            .write_size(11),
    );
    let llm = openai(&mock);
    let req = Request::new("Weather in Oslo and Lima?")
        .with_system("Be brief.")
        .with_tool(weather_tool())
        .with_max_tokens(300);
    let mut ev = Events::default();
    let resp =
        llm.stream(&req, &CallOptions::default(), &mut |e| ev.0.push(e.clone())).await.unwrap();
    let calls: Vec<_> = resp.tool_calls().map(|(_, _, a)| a.clone()).collect();
    assert_eq!(calls, vec![a1, a2]);
    assert_eq!(ev.count(|e| matches!(e, StreamEvent::ToolCallStart { .. })), 2);
    assert_eq!(resp.stop_reason, StopReason::ToolUse);
    // prompt_tokens 1000 of which 100 cached
    assert_eq!(
        (resp.usage.input_tokens, resp.usage.cache_read_tokens, resp.usage.output_tokens),
        (900, 100, 40)
    );
    let want = (900.0 * 2.5 + 100.0 * 1.25 + 40.0 * 10.0) / 1e6; // gpt-4o
    assert!((resp.cost_usd.unwrap() - want).abs() < 1e-12);

    let r = &mock.requests()[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some(format!("Bearer {OPENAI_KEY}").as_str()));
    assert_eq!(r.header("x-api-key"), None);
    assert_eq!(r.body["messages"][0], json!({"role": "system", "content": "Be brief."}));
    assert_eq!(r.body["tools"][0]["type"], "function");
    assert_eq!(r.body["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(r.body["stream_options"]["include_usage"], true);
    assert_eq!(r.body["max_completion_tokens"], 300);
    assert_eq!(r.body.get("max_tokens"), None);
}

#[tokio::test]
async fn openai_structured_output_uses_json_schema_response_format() {
    let mock = MockLlm::start();
    let answer = json!({"verdict": "ok", "score": 3});
    mock.push(Reply::structured(answer.clone()));
    let llm = openai(&mock);
    let schema = json!({"type": "object", "properties": {"verdict": {"type": "string"}, "score": {"type": "integer"}},
                        "required": ["verdict", "score"], "additionalProperties": false});
    let req = Request::new("Judge").with_output_schema("judgement", schema.clone());
    let resp = llm.complete(&req, &CallOptions::default()).await.unwrap();
    assert_eq!(resp.structured, Some(answer));
    let rf = &mock.requests()[0].body["response_format"];
    assert_eq!(rf["type"], "json_schema");
    assert_eq!(rf["json_schema"]["name"], "judgement");
    assert_eq!(rf["json_schema"]["schema"], schema);
    assert_eq!(rf["json_schema"]["strict"], true, "closed schema: strict");
}

#[tokio::test]
async fn compatible_server_without_key_gets_max_tokens_and_no_auth_header() {
    let mock = MockLlm::start();
    mock.push(Reply::text("local answer").model("llama3.2:latest"));
    let llm = compatible(&mock);
    let mut text = String::new();
    let resp = llm
        .stream(&Request::new("hi"), &CallOptions::default(), &mut |e| {
            if let StreamEvent::TextDelta { text: t } = e {
                text.push_str(t);
            }
        })
        .await
        .unwrap();
    assert_eq!(text, "local answer");
    assert_eq!(resp.model, "llama3.2:latest");
    assert_eq!(resp.cost_usd, None, "no price known for a local model");
    let r = &mock.requests()[0];
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.body["max_tokens"], 256);
    assert_eq!(r.body.get("max_completion_tokens"), None);
}
