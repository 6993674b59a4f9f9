//! Failure handling against injected faults: retries, Retry-After, timeouts, the
//! circuit breaker and the fallback chain.

use std::time::Duration;

use llm::{
    BreakerPolicy, BreakerState, CallOptions, Error, Llm, Request, RetryPolicy, StreamEvent,
    Timeouts,
};
use protocol::ErrorCode;
use test_support::mock_llm::{Fault, MockLlm, Reply};

use super::*;

async fn stream(llm: &Llm) -> (Result<llm::Response, Error>, Events) {
    let mut ev = Events::default();
    let r = llm
        .stream(&Request::new("hi"), &CallOptions::default(), &mut |e| ev.0.push(e.clone()))
        .await;
    (r, ev)
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after_then_succeeds() {
    let mock = MockLlm::start();
    mock.push(Reply::rate_limited("1")).push(Reply::text("after the wait"));
    let (r, ev) = stream(&anthropic(&mock)).await;
    let resp = r.unwrap();
    assert_eq!(resp.text(), "after the wait");
    assert_eq!(resp.attempts, 2);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    // The server asked for one second; the client must not come back sooner.
    let gap = reqs[1].at.duration_since(reqs[0].at);
    assert!(gap >= Duration::from_millis(990), "retried after {gap:?}, before Retry-After");
    assert_eq!(
        ev.count(
            |e| matches!(e, StreamEvent::Retrying { attempt: 1, delay_ms, .. } if *delay_ms >= 1000)
        ),
        1
    );
}

#[tokio::test]
async fn a_retry_after_too_long_is_not_waited_for() {
    let mock = MockLlm::start();
    mock.push(Reply::rate_limited("3600"));
    let (r, _) = stream(&anthropic(&mock)).await;
    let err = r.unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmRateLimited, "{err}");
    assert!(err.to_string().contains("retry after 3600"), "{err}");
    assert_eq!(mock.request_count(), 1);
}

#[tokio::test]
async fn server_errors_and_malformed_json_are_retried_then_succeed() {
    for first in [Reply::status(500), Reply::status(529), Reply::malformed()] {
        let mock = MockLlm::start();
        mock.push(first.clone()).push(Reply::text("fine now"));
        let llm = openai(&mock);
        let resp = llm.complete(&Request::new("hi"), &CallOptions::default()).await.unwrap();
        assert_eq!(resp.text(), "fine now", "after {first:?}");
        assert_eq!(mock.request_count(), 2);
    }
}

#[tokio::test]
async fn retries_give_up_with_the_right_code() {
    let mock = MockLlm::start();
    mock.set_default(Reply::malformed());
    let (r, _) = stream(&anthropic(&mock)).await;
    let err = r.unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmBadResponse, "{err}");
    assert_eq!(mock.request_count(), 3, "max_attempts = 3");

    let mock = MockLlm::start();
    mock.set_default(Reply::status(503));
    let err =
        openai(&mock).complete(&Request::new("hi"), &CallOptions::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmUnavailable, "{err}");
    assert!(err.to_string().contains("HTTP 503"), "{err}");
}

#[tokio::test]
async fn a_refused_request_is_not_retried() {
    let mock = MockLlm::start();
    mock.set_default(Reply::status(400));
    let err =
        anthropic(&mock).complete(&Request::new("hi"), &CallOptions::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    assert!(err.to_string().contains("invalid request"), "the server's message is kept: {err}");
    assert_eq!(mock.request_count(), 1);
}

#[tokio::test]
async fn reset_mid_stream_withdraws_partial_output_and_retries() {
    for llm_of in [anthropic as fn(&MockLlm) -> Llm, openai] {
        let mock = MockLlm::start();
        mock.push(Reply::text("a long answer that breaks").fault(Fault::ResetAfter(4)));
        mock.push(Reply::text("the whole answer"));
        let (r, ev) = stream(&llm_of(&mock)).await;
        assert_eq!(r.unwrap().text(), "the whole answer");
        let reset =
            ev.0.iter()
                .position(|e| matches!(e, StreamEvent::Reset { .. }))
                .expect("a Reset event");
        assert!(
            ev.0[..reset].iter().any(|e| matches!(e, StreamEvent::TextDelta { .. })),
            "partial text came before the reset"
        );
        assert_eq!(ev.text(), "the whole answer", "after the reset only the new answer counts");
        assert_eq!(mock.request_count(), 2);
    }
}

#[tokio::test]
async fn an_error_event_inside_a_stream_is_retried() {
    for llm_of in [anthropic as fn(&MockLlm) -> Llm, openai] {
        let mock = MockLlm::start();
        mock.push(Reply::text("partial then overloaded").fault(Fault::ErrorEventAfter(3)));
        mock.push(Reply::text("complete"));
        let (r, ev) = stream(&llm_of(&mock)).await;
        assert_eq!(r.unwrap().text(), "complete");
        let reason = ev.0.iter().find_map(|e| match e {
            StreamEvent::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        });
        let reason = reason.expect("retried");
        assert!(reason.contains("server error"), "{reason}");
        assert_eq!(ev.text(), "complete");
    }
}

#[tokio::test]
async fn a_missing_structured_answer_is_retried_as_a_bad_response() {
    let mock = MockLlm::start();
    mock.push(Reply::text("Sure! Here is the plan: step one...")); // prose, not JSON
    mock.push(Reply::structured(serde_json::json!({"steps": 2})));
    let llm = openai(&mock);
    let req =
        Request::new("plan").with_output_schema("plan", serde_json::json!({"type": "object"}));
    let resp = llm.complete(&req, &CallOptions::default()).await.unwrap();
    assert_eq!(resp.structured, Some(serde_json::json!({"steps": 2})));
    assert_eq!(resp.attempts, 2);
}

#[tokio::test]
async fn a_model_override_is_for_the_primary_only() {
    let a = MockLlm::start();
    a.set_default(Reply::status(404));
    let o = MockLlm::start();
    let llm = Llm::new(&env_settings(base(), Some(&a), Some(&o))).unwrap();
    let req = Request::new("hi").with_model("claude-opus-4-5");
    let resp = llm.complete(&req, &CallOptions::default()).await.unwrap();
    assert_eq!(resp.provider, "openai", "a 404 (wrong URL or model) hands over at once");
    assert_eq!(a.request_count(), 1);
    assert_eq!(a.requests()[0].body["model"], "claude-opus-4-5");
    assert_eq!(o.requests()[0].body["model"], "qwen2.5-coder:7b", "the fallback's own model");
}

#[tokio::test]
async fn truncated_stream_is_a_bad_response_not_a_short_answer() {
    for llm_of in [anthropic as fn(&MockLlm) -> Llm, openai] {
        let mock = MockLlm::start();
        mock.set_default(Reply::text("cut off here").fault(Fault::TruncateAfter(3)));
        let (r, ev) = stream(&llm_of(&mock)).await;
        let err = r.unwrap_err();
        assert_eq!(err.code(), ErrorCode::LlmBadResponse, "{err}");
        assert!(err.to_string().contains("truncated"), "{err}");
        assert_eq!(mock.request_count(), 3);
        assert_eq!(ev.text(), "", "no partial answer survives");
    }
}

#[tokio::test]
async fn malformed_sse_event_is_a_bad_response() {
    let mock = MockLlm::start();
    mock.push(Reply::malformed()).push(Reply::text("good"));
    let (r, _) = stream(&anthropic(&mock)).await;
    assert_eq!(r.unwrap().text(), "good");
    assert_eq!(mock.request_count(), 2);
}

#[tokio::test]
async fn slow_first_byte_hits_the_first_token_timeout_then_retries() {
    let mock = MockLlm::start();
    mock.push(Reply::text("too late").first_byte_delay(Duration::from_secs(3)));
    mock.push(Reply::text("on time"));
    let mut s = env_settings(base(), Some(&mock), None);
    s.timeouts = Timeouts { first_token_secs: 0.5, ..s.timeouts };
    let llm = Llm::new(&s).unwrap();
    let (r, ev) = stream(&llm).await;
    assert_eq!(r.unwrap().text(), "on time");
    let reason = ev.0.iter().find_map(|e| match e {
        StreamEvent::Retrying { reason, .. } => Some(reason.clone()),
        _ => None,
    });
    assert!(reason.unwrap().contains("first-token"), "the timeout is named");
}

#[tokio::test]
async fn stalled_stream_hits_the_idle_timeout() {
    let mock = MockLlm::start();
    mock.set_default(Reply::text("stalls").fault(Fault::HangAfter(3)));
    let mut s = env_settings(base(), Some(&mock), None);
    s.timeouts = Timeouts { idle_secs: 0.3, ..s.timeouts };
    s.retry = RetryPolicy { max_attempts: 1, ..s.retry };
    let (r, _) = stream(&Llm::new(&s).unwrap()).await;
    let err = r.unwrap_err();
    assert!(matches!(err, Error::Timeout { phase: llm::TimeoutPhase::Idle, .. }), "{err}");
    assert_eq!(err.code(), ErrorCode::LlmUnavailable);
    assert!(mock.disconnected(1, Duration::from_secs(30)).await, "the connection was closed");
}

#[tokio::test]
async fn breaker_opens_after_repeated_failures_and_recovers_after_a_probe() {
    let mock = MockLlm::start();
    mock.set_default(Reply::status(500));
    let mut s = env_settings(base(), Some(&mock), None);
    s.retry = RetryPolicy { max_attempts: 1, ..s.retry };
    s.breaker = BreakerPolicy { failure_threshold: 2, open_secs: 1.5 };
    let llm = Llm::new(&s).unwrap();
    let req = Request::new("hi");
    let opts = CallOptions::default();
    for _ in 0..2 {
        let e = llm.complete(&req, &opts).await.unwrap_err();
        assert!(matches!(e, Error::Server { status: 500, .. }), "{e}");
    }
    assert!(matches!(llm.breaker_state("anthropic"), Some(BreakerState::Open { .. })));
    // Open: refused without a request, naming the failure that opened it.
    let e = llm.complete(&req, &opts).await.unwrap_err();
    assert!(matches!(e, Error::CircuitOpen { .. }), "{e}");
    assert!(e.to_string().contains("(anthropic: server error (HTTP 500)"), "{e}");
    assert_eq!(e.code(), ErrorCode::LlmUnavailable);
    assert_eq!(mock.request_count(), 2, "an open circuit sends nothing");

    // After open_secs one probe goes through; it fails, so the circuit opens again.
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let e = llm.complete(&req, &opts).await.unwrap_err();
    assert!(matches!(e, Error::Server { .. }), "{e}");
    assert_eq!(mock.request_count(), 3);
    assert!(matches!(llm.complete(&req, &opts).await.unwrap_err(), Error::CircuitOpen { .. }));

    // The server recovers; the next probe succeeds and closes the circuit.
    mock.set_default(Reply::text("back"));
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(llm.complete(&req, &opts).await.unwrap().text(), "back");
    assert_eq!(llm.breaker_state("anthropic"), Some(BreakerState::Closed { failures: 0 }));
    assert_eq!(llm.complete(&req, &opts).await.unwrap().text(), "back");
}

#[tokio::test]
async fn fallback_takes_over_when_the_primary_fails() {
    let primary = MockLlm::start();
    primary.set_default(Reply::status(503));
    let secondary = MockLlm::start();
    secondary.set_default(Reply::text("from the fallback"));
    let llm = Llm::new(&env_settings(base(), Some(&primary), Some(&secondary))).unwrap();
    let (r, ev) = stream(&llm).await;
    let resp = r.unwrap();
    assert_eq!(resp.text(), "from the fallback");
    assert_eq!(resp.provider, "openai");
    assert_eq!(resp.model, "qwen2.5-coder:7b");
    assert_eq!(resp.attempts, 4, "three on the primary, one on the fallback");
    assert_eq!(primary.request_count(), 3);
    assert_eq!(secondary.request_count(), 1);
    assert_eq!(ev.count(|e| matches!(e, StreamEvent::Fallback { from, to, .. } if from == "anthropic" && to == "openai")), 1);
}

#[tokio::test]
async fn fallback_is_immediate_on_bad_credentials_and_when_the_circuit_is_open() {
    let primary = MockLlm::start();
    primary.set_default(Reply::status(401));
    let secondary = MockLlm::start();
    let mut s = env_settings(base(), Some(&primary), Some(&secondary));
    s.breaker = BreakerPolicy { failure_threshold: 1, open_secs: 60.0 };
    let llm = Llm::new(&s).unwrap();
    let resp = llm.complete(&Request::new("hi"), &CallOptions::default()).await.unwrap();
    assert_eq!(resp.provider, "openai");
    assert_eq!(primary.request_count(), 1, "a 401 is not retried");
    // The 401 opened the primary's circuit: the next call goes straight to the fallback.
    let resp = llm.complete(&Request::new("hi"), &CallOptions::default()).await.unwrap();
    assert_eq!(resp.provider, "openai");
    assert_eq!(primary.request_count(), 1);
}

#[tokio::test]
async fn when_every_provider_fails_the_error_lists_them() {
    let a = MockLlm::start();
    a.set_default(Reply::status(500));
    let o = MockLlm::start();
    o.set_default(Reply::rate_limited("3600"));
    let llm = Llm::new(&env_settings(base(), Some(&a), Some(&o))).unwrap();
    let err = llm.complete(&Request::new("hi"), &CallOptions::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmRateLimited, "the last provider's code: {err}");
    let msg = err.to_string();
    assert!(
        msg.contains("anthropic: server error") && msg.contains("openai: rate limited"),
        "{msg}"
    );
}

#[tokio::test]
async fn connection_refused_is_a_network_error() {
    let mock = MockLlm::start();
    let mut s = env_settings(base(), Some(&mock), None);
    drop(mock); // nothing listens there any more
    s.retry = RetryPolicy { max_attempts: 2, ..s.retry };
    let err = Llm::new(&s)
        .unwrap()
        .complete(&Request::new("hi"), &CallOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Network { .. }), "{err}");
    assert_eq!(err.code(), ErrorCode::LlmUnavailable);
}

#[tokio::test]
async fn a_non_streaming_answer_may_take_longer_than_the_first_token_timeout() {
    // Without streaming the server is silent until the whole answer is ready.
    let mock = MockLlm::start();
    mock.push(Reply::text("slow but whole").first_byte_delay(Duration::from_millis(800)));
    let mut s = env_settings(base(), Some(&mock), None);
    s.timeouts = Timeouts { first_token_secs: 0.2, ..s.timeouts };
    let resp =
        Llm::new(&s).unwrap().complete(&Request::new("hi"), &CallOptions::default()).await.unwrap();
    assert_eq!(resp.text(), "slow but whole");
    assert_eq!(mock.request_count(), 1);
}

#[test]
fn a_missing_key_is_a_configuration_error_for_the_vendors_own_endpoint_only() {
    let mut s = base();
    s.providers.insert("anthropic".into(), llm::ProviderSettings::default());
    let err = Llm::new(&s.clone().with_standard_env(&Default::default())).unwrap_err();
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
    // A gateway that adds credentials itself.
    s.providers.get_mut("anthropic").unwrap().base_url = Some("http://127.0.0.1:4000".into());
    assert!(Llm::new(&s.with_standard_env(&Default::default())).is_ok());
}

#[tokio::test]
async fn a_stream_request_answered_without_events_says_what_came_instead() {
    let mock = MockLlm::start();
    mock.set_default(Reply::status_body(
        200,
        "<html><body>Please log in to the proxy</body></html>",
    ));
    let mut s = env_settings(base(), Some(&mock), None);
    s.retry = RetryPolicy { max_attempts: 1, ..s.retry };
    let (r, _) = stream(&Llm::new(&s).unwrap()).await;
    let err = r.unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmBadResponse);
    assert!(
        err.to_string().contains("expected server-sent events, got: <html><body>Please log in"),
        "{err}"
    );
}

#[test]
fn timeouts_must_be_positive() {
    let mock = MockLlm::start();
    let mut s = env_settings(base(), Some(&mock), None);
    s.timeouts.total_secs = 0.0;
    let err = Llm::new(&s).unwrap_err();
    assert!(err.to_string().contains("llm.timeouts.total_secs"), "{err}");
}

#[tokio::test]
async fn a_circuit_opened_by_the_call_itself_stops_its_retries_with_the_real_error() {
    let mock = MockLlm::start();
    mock.set_default(Reply::status(502));
    let mut s = env_settings(base(), Some(&mock), None);
    s.retry = RetryPolicy { max_attempts: 4, ..s.retry };
    s.breaker = BreakerPolicy { failure_threshold: 2, open_secs: 60.0 };
    let err = Llm::new(&s)
        .unwrap()
        .complete(&Request::new("hi"), &CallOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Server { status: 502, .. }), "{err}");
    assert_eq!(mock.request_count(), 2, "the open circuit ends the retries");
}
