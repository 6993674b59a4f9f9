//! `Llm::embed` against the mock's `/embeddings` endpoint: the wire format, the
//! retry policy, and every broken answer refused with a machine code.

use std::time::Duration;

use llm::{CallOptions, EmbeddingSettings, Error, Llm, Settings};
use protocol::ErrorCode;
use test_support::mock_llm::{MockLlm, Reply, mock_embedding};

use super::{OPENAI_KEY, anthropic, compatible, compatible_settings, openai};

fn texts(t: &[&str]) -> Vec<String> {
    t.iter().map(|s| (*s).to_owned()).collect()
}

fn compatible_with_model(mock: &MockLlm, model: &str) -> Llm {
    Llm::new(&with_model(compatible_settings(mock), model)).unwrap()
}

fn with_model(mut s: Settings, model: &str) -> Settings {
    s.embeddings = EmbeddingSettings { model: Some(model.into()), ..EmbeddingSettings::default() };
    s
}

#[tokio::test]
async fn vectors_come_back_in_input_order_with_usage_booked() {
    let mock = MockLlm::start();
    let llm = openai(&mock);
    let input = texts(&["parse the config file", "render a chart"]);
    let e = llm.embed(&input, &CallOptions::default()).await.unwrap();
    assert_eq!(e.model, "text-embedding-3-small", "OpenAI's default embedding model");
    assert_eq!(e.vectors, vec![mock_embedding(&input[0]), mock_embedding(&input[1])]);
    assert_eq!(e.usage.input_tokens, 7);
    assert!(!e.usage.estimated);
    assert_eq!(llm.ledger().session().usage.input_tokens, 7);

    let r = &mock.requests()[0];
    assert!(r.path.ends_with("/v1/embeddings"), "{}", r.path);
    assert_eq!(r.header("authorization"), Some(format!("Bearer {OPENAI_KEY}").as_str()));
    assert_eq!(r.body["model"], "text-embedding-3-small");
    assert_eq!(r.body["input"][1], "render a chart");
    assert_eq!(r.body["encoding_format"], "float");
}

#[tokio::test]
async fn an_index_out_of_order_is_put_back_in_place() {
    let mock = MockLlm::start();
    mock.push(Reply::status_body(
        200,
        r#"{"data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}]}"#,
    ));
    let e = compatible_with_model(&mock, "nomic-embed-text")
        .embed(&texts(&["a", "b"]), &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(e.vectors, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
    assert!(e.usage.estimated, "no usage in the answer: estimated");
    assert_eq!(mock.requests()[0].body["model"], "nomic-embed-text");
}

#[tokio::test]
async fn broken_answers_are_bad_responses() {
    let bodies = [
        (r#"{"data": [{"index": 0, "embedding": [1.0]}]}"#, "1 embeddings for 2 inputs"),
        (
            r#"{"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]}"#,
            "repeated",
        ),
        (
            r#"{"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}"#,
            "different lengths",
        ),
        (
            r#"{"data": [{"index": 0, "embedding": "AAAA"}, {"index": 1, "embedding": [1.0]}]}"#,
            "encoding_format",
        ),
        (
            r#"{"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": ["x"]}]}"#,
            "not all numbers",
        ),
        (r#"{"object": "list"}"#, "no `data`"),
    ];
    for (body, says) in bodies {
        let mock = MockLlm::start();
        // Retried as any bad response: every attempt gets the same body.
        mock.set_default(Reply::status_body(200, body));
        let err = compatible_with_model(&mock, "m")
            .embed(&texts(&["a", "b"]), &CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::LlmBadResponse, "{body}: {err}");
        assert!(err.to_string().contains(says), "{body}: {err}");
    }
    let mock = MockLlm::start();
    mock.set_default(Reply::malformed());
    let err = compatible_with_model(&mock, "m")
        .embed(&texts(&["a"]), &CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmBadResponse, "{err}");
    assert!(err.to_string().contains("not JSON"), "{err}");
}

#[tokio::test]
async fn a_429_is_waited_out_and_retried() {
    let mock = MockLlm::start();
    mock.push(Reply::rate_limited("1"));
    let llm = compatible_with_model(&mock, "m");
    let start = std::time::Instant::now();
    let e = llm.embed(&texts(&["x"]), &CallOptions::default()).await.unwrap();
    assert_eq!(e.vectors.len(), 1);
    assert_eq!(mock.request_count(), 2);
    assert!(start.elapsed() >= Duration::from_millis(900), "Retry-After was honoured");
}

#[tokio::test]
async fn rate_limits_that_persist_end_with_the_rate_limit_code() {
    let mock = MockLlm::start();
    mock.set_default(Reply::status(429));
    let err = compatible_with_model(&mock, "m")
        .embed(&texts(&["x"]), &CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmRateLimited, "{err}");
    assert_eq!(mock.request_count(), 3, "max_attempts");
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let mock = MockLlm::start();
    mock.set_default(Reply::text("").first_byte_delay(Duration::from_secs(30)));
    let mut s = with_model(compatible_settings(&mock), "m");
    s.timeouts.total_secs = 0.3;
    s.retry.max_attempts = 1;
    let llm = Llm::new(&s).unwrap();
    let err = llm.embed(&texts(&["x"]), &CallOptions::default()).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert_eq!(err.code(), ErrorCode::LlmUnavailable);
}

#[tokio::test]
async fn providers_without_an_embeddings_model_are_refused_before_any_request() {
    let mock = MockLlm::start();
    let err = anthropic(&mock).embed(&texts(&["x"]), &CallOptions::default()).await.unwrap_err();
    assert!(err.to_string().contains("Anthropic has no embeddings API"), "{err}");
    let err = compatible(&mock).embed(&texts(&["x"]), &CallOptions::default()).await.unwrap_err();
    assert!(err.to_string().contains("llm.embeddings.model"), "{err}");
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "a configuration error: {err}");
    assert_eq!(mock.request_count(), 0);
}

#[tokio::test]
async fn a_cancelled_call_ends_promptly() {
    let mock = MockLlm::start();
    mock.set_default(Reply::text("").first_byte_delay(Duration::from_secs(30)));
    let llm = compatible_with_model(&mock, "m");
    let opts = CallOptions::default();
    let cancel = opts.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let err = llm.embed(&texts(&["x"]), &opts).await.unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err}");
}
