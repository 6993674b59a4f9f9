//! Budgets, accounting, cancellation, and secrets that never show.

use std::{
    io::Write,
    sync::{Arc, Mutex},
    time::Duration,
};

use llm::{Budget, Budgets, CallOptions, CancellationToken, Error, Llm, Request, StreamEvent};
use protocol::ErrorCode;
use test_support::mock_llm::{Fault, MockLlm, MockUsage, Reply};

use super::*;

#[tokio::test]
async fn usage_and_cost_add_up_per_workflow_and_session() {
    let mock = MockLlm::start();
    mock.set_default(Reply::text("ok").usage(MockUsage {
        input: 1000,
        output: 100,
        cache_read: 0,
        cache_write: 0,
    }));
    let llm = anthropic(&mock);
    let wf = |w: &str| CallOptions { workflow: Some(w.into()), ..CallOptions::default() };
    for opts in [wf("a"), wf("a"), wf("b"), CallOptions::default()] {
        llm.complete(&Request::new("hi"), &opts).await.unwrap();
    }
    let one = (1000.0 * 3.0 + 100.0 * 15.0) / 1e6;
    let a = llm.ledger().workflow("a");
    assert_eq!((a.calls, a.usage.input_tokens, a.usage.output_tokens), (2, 2000, 200));
    assert!((a.cost_usd - 2.0 * one).abs() < 1e-12);
    assert_eq!(llm.ledger().workflow("b").calls, 1);
    let s = llm.ledger().session();
    assert_eq!((s.calls, s.usage.total()), (4, 4400));
    assert!((s.cost_usd - 4.0 * one).abs() < 1e-12);
}

#[tokio::test]
async fn a_token_budget_stops_a_stream_and_refuses_the_next_call() {
    let mock = MockLlm::start();
    // 40 tokens, then an answer far longer than what is left of the budget.
    mock.push(Reply::text("short").usage(MockUsage {
        input: 30,
        output: 10,
        cache_read: 0,
        cache_write: 0,
    }));
    // It would stream 250 deltas, then hold the connection: only a client that
    // stops reading and closes it lets the server see the end.
    mock.push(Reply::text("word ".repeat(400)).delta_chars(8).fault(Fault::HangAfter(200)));
    let mut s = env_settings(base(), Some(&mock), None);
    s.budget =
        Budgets { session: Budget { max_tokens: Some(100), max_usd: None }, ..Budgets::default() };
    let llm = Llm::new(&s).unwrap();
    let opts = CallOptions::default();
    llm.complete(&Request::new("hi"), &opts).await.unwrap();

    let mut text = String::new();
    let err = llm
        .stream(&Request::new("hi"), &opts, &mut |e| {
            if let StreamEvent::TextDelta { text: t } = e {
                text.push_str(t);
            }
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BudgetExceeded, "{err}");
    assert!(err.to_string().contains("of 100 tokens"), "{err}");
    assert!(!text.is_empty() && text.len() < 2000, "stopped part-way: {} bytes", text.len());
    assert_eq!(mock.request_count(), 2, "a budget stop is not retried");
    assert!(
        mock.disconnected(1, Duration::from_secs(30)).await,
        "the stream's connection was closed"
    );
    assert!(llm.ledger().session().usage.total() > 100, "the partial call is booked");

    let err = llm.complete(&Request::new("again"), &opts).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::BudgetExceeded);
    assert_eq!(mock.request_count(), 2, "refused before any request");
}

#[tokio::test]
async fn a_usd_budget_per_workflow_leaves_other_workflows_alone() {
    let mock = MockLlm::start();
    // $0.018 per call at Sonnet prices
    mock.set_default(Reply::text("ok").usage(MockUsage {
        input: 1000,
        output: 1000,
        cache_read: 0,
        cache_write: 0,
    }));
    let mut s = env_settings(base(), Some(&mock), None);
    s.budget = Budgets {
        workflow: Budget { max_tokens: None, max_usd: Some(0.03) },
        ..Budgets::default()
    };
    let llm = Llm::new(&s).unwrap();
    let wf = |w: &str| CallOptions { workflow: Some(w.into()), ..CallOptions::default() };
    llm.complete(&Request::new("1"), &wf("x")).await.unwrap();
    llm.complete(&Request::new("2"), &wf("x")).await.unwrap();
    let err = llm.complete(&Request::new("3"), &wf("x")).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::BudgetExceeded);
    assert!(err.to_string().contains("workflow \"x\""), "{err}");
    llm.complete(&Request::new("4"), &wf("y")).await.unwrap();
    assert_eq!(mock.request_count(), 3);
}

#[tokio::test]
async fn a_usd_budget_needs_a_price() {
    let mock = MockLlm::start();
    let mut s = base();
    s.providers.insert(
        "local".into(),
        llm::ProviderSettings {
            kind: Some(llm::ProviderKind::OpenaiCompatible),
            base_url: Some(mock.openai_url()),
            model: Some("mystery-model".into()),
            ..Default::default()
        },
    );
    s.budget.session.max_usd = Some(1.0);
    let llm = Llm::new(&s.with_standard_env(&Default::default())).unwrap();
    let err = llm.complete(&Request::new("hi"), &CallOptions::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert!(err.to_string().contains("no price"), "{err}");
    assert_eq!(mock.request_count(), 0);
}

#[tokio::test]
async fn cancellation_ends_an_open_stream_and_closes_the_connection() {
    for llm_of in [anthropic as fn(&MockLlm) -> Llm, openai] {
        let mock = MockLlm::start();
        mock.set_default(
            Reply::text("hello world, this stream never ends").fault(Fault::HangAfter(4)),
        );
        let llm = llm_of(&mock);
        let cancel = CancellationToken::new();
        let opts = CallOptions { cancel: cancel.clone(), ..CallOptions::default() };
        let mut got_text = false;
        let req = Request::new("hi");
        let mut on = |e: &StreamEvent| {
            if matches!(e, StreamEvent::TextDelta { .. }) && !got_text {
                got_text = true;
                cancel.cancel(); // the user pressed Ctrl-C while text was arriving
            }
        };
        let call = llm.stream(&req, &opts, &mut on);
        // A hang guard, not a speed assertion: the stream would otherwise stay open.
        let r = tokio::time::timeout(Duration::from_secs(30), call)
            .await
            .expect("cancel ends the stream");
        assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
        assert!(got_text);
        assert!(
            mock.disconnected(1, Duration::from_secs(30)).await,
            "the server saw the connection close"
        );
        assert_eq!(mock.request_count(), 1, "a cancelled call is not retried");
    }
}

#[tokio::test]
async fn cancellation_during_a_retry_wait_returns_at_once() {
    let mock = MockLlm::start();
    mock.set_default(Reply::rate_limited("4"));
    let llm = anthropic(&mock);
    let cancel = CancellationToken::new();
    let opts = CallOptions { cancel: cancel.clone(), ..CallOptions::default() };
    let mut on = |e: &StreamEvent| {
        if matches!(e, StreamEvent::Retrying { .. }) {
            cancel.cancel();
        }
    };
    let req = Request::new("hi");
    let r = tokio::time::timeout(Duration::from_secs(30), llm.stream(&req, &opts, &mut on))
        .await
        .expect("hang guard");
    assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
    assert_eq!(mock.request_count(), 1);
}

/// A `MakeWriter` into a shared buffer.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Capture {
    type Writer = Capture;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[tokio::test]
async fn no_secret_in_any_log_line_error_or_debug_output() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(capture.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let a = MockLlm::start();
    let o = MockLlm::start();
    // The server echoes the key back in its error body (as some proxies do).
    a.set_default(Reply::status_body(
        401,
        format!(r#"{{"error":{{"message":"bad key {ANTHROPIC_KEY}"}}}}"#),
    ));
    o.push(Reply::status(500))
        .push(Reply::text("ok").fault(Fault::ResetAfter(2)))
        .push(Reply::text("ok"));
    let settings = env_settings(base(), Some(&a), Some(&o));
    let llm = Llm::new(&settings).unwrap();
    let resp = llm.stream(&Request::new("hi"), &CallOptions::default(), &mut |_| {}).await.unwrap();
    assert_eq!(resp.provider, "openai");

    // and a failure whose error carries the echoed body
    let err = llm
        .complete(
            &Request::new("hi"),
            &CallOptions { provider: Some("anthropic".into()), ..Default::default() },
        )
        .await
        .unwrap_err();

    let logs = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("retrying") && logs.contains("falling back"),
        "the logs say something:\n{logs}"
    );
    let shown = [
        logs,
        err.to_string(),
        format!("{err:?}"),
        format!("{settings:?}"),
        format!("{llm:?}"),
        serde_json::to_string(&settings).unwrap(),
        serde_json::to_string(&llm.providers()).unwrap(),
    ];
    for text in shown {
        assert!(
            !text.contains(ANTHROPIC_KEY) && !text.contains(OPENAI_KEY),
            "a key leaked:\n{text}"
        );
        assert!(!text.contains("SECRET"), "part of a key leaked:\n{text}");
    }
    // ...while the servers did get the keys.
    assert_eq!(a.requests()[0].header("x-api-key"), Some(ANTHROPIC_KEY));
}
