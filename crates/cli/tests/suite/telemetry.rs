//! OpenTelemetry end to end (issue 35): the binary exports its spans and
//! metrics over OTLP/HTTP (protobuf) to a receiver here, which decodes every
//! request with the official OTLP protobuf definitions (the `opentelemetry-proto`
//! crate's generated types, `ExportTraceServiceRequest` and
//! `ExportMetricsServiceRequest`) — nothing of ours between the wire and the
//! assertions but the HTTP/1.1 framing (read the head, then `Content-Length`
//! bytes, as `test_support::mock_llm` does). Over gRPC the receiver is
//! `tests/receivers/otlp_grpc.py`: the `opentelemetry-proto` PyPI package's
//! generated servicers on `grpcio` (installed by `scripts/test` under
//! `target/test-deps/otlp-receiver`; missing, the test skips loudly, and fails
//! under `CI`). A collector that is down costs a warning, never the command.

use std::{
    collections::BTreeMap,
    io::{BufRead, BufReader, Read, Write},
    net::{TcpListener, TcpStream},
    process::Command,
    sync::{Arc, Mutex},
};

use opentelemetry_proto::tonic::{
    collector::{metrics::v1::ExportMetricsServiceRequest, trace::v1::ExportTraceServiceRequest},
    common::v1::{KeyValue, any_value},
    metrics::v1::metric,
    trace::v1::Span,
};
use prost::Message;
use serde_json::Value;
use test_support::{TempProject, mock_llm::MockLlm};

use super::{
    Out,
    agent::{calc_project, calculator_model, ironbees, ok, usage},
};

/// What the receiver got, decoded.
#[derive(Default)]
struct Received {
    traces: Vec<ExportTraceServiceRequest>,
    metrics: Vec<ExportMetricsServiceRequest>,
    /// `(path, content-type)` of every request.
    requests: Vec<(String, String)>,
}

/// An OTLP/HTTP receiver on a free port: `POST /v1/traces` and `/v1/metrics`
/// with protobuf bodies, each answered `200` with the empty response message.
struct Receiver {
    port: u16,
    got: Arc<Mutex<Received>>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let got = Arc::new(Mutex::new(Received::default()));
        let g = got.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let g = g.clone();
                std::thread::spawn(move || serve(conn, &g));
            }
        });
        Receiver { port, got }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn spans(&self) -> Vec<Span> {
        let got = self.got.lock().unwrap();
        got.traces
            .iter()
            .flat_map(|r| &r.resource_spans)
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| s.spans.clone())
            .collect()
    }

    fn service_names(&self) -> Vec<String> {
        let got = self.got.lock().unwrap();
        got.traces
            .iter()
            .flat_map(|r| &r.resource_spans)
            .filter_map(|r| r.resource.as_ref())
            .filter_map(|r| attr(&r.attributes, "service.name"))
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    }

    /// A sum's (counter's) total over its data points, 0 when not exported.
    fn sum(&self, name: &str) -> f64 {
        use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as N;
        let got = self.got.lock().unwrap();
        // Cumulative temporality: the last export has the totals.
        let last = got
            .metrics
            .iter()
            .flat_map(|r| &r.resource_metrics)
            .flat_map(|r| &r.scope_metrics)
            .flat_map(|s| &s.metrics)
            .rfind(|m| m.name == name);
        let Some(metric::Data::Sum(s)) = last.and_then(|m| m.data.as_ref()) else {
            return 0.0;
        };
        s.data_points
            .iter()
            .map(|p| match p.value {
                Some(N::AsDouble(d)) => d,
                Some(N::AsInt(i)) => i as f64,
                None => 0.0,
            })
            .sum()
    }

    /// Each histogram's data points as `(attributes, count, sum)`, by metric
    /// name, from the last export (cumulative temporality: it has the totals).
    fn histograms(&self) -> BTreeMap<String, Vec<(Vec<KeyValue>, u64, f64)>> {
        let got = self.got.lock().unwrap();
        let mut out: BTreeMap<String, Vec<_>> = BTreeMap::new();
        for m in got
            .metrics
            .last()
            .into_iter()
            .flat_map(|r| &r.resource_metrics)
            .flat_map(|r| &r.scope_metrics)
            .flat_map(|s| &s.metrics)
        {
            if let Some(metric::Data::Histogram(h)) = &m.data {
                for p in &h.data_points {
                    out.entry(m.name.clone()).or_default().push((
                        p.attributes.clone(),
                        p.count,
                        p.sum.unwrap_or_default(),
                    ));
                }
            }
        }
        out
    }
}

/// One keep-alive connection: requests until the client closes it.
fn serve(conn: TcpStream, got: &Mutex<Received>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut conn = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or_default().to_owned();
        let (mut len, mut content_type) = (0usize, String::new());
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':').unwrap_or((h, ""));
            match k.to_ascii_lowercase().as_str() {
                "content-length" => len = v.trim().parse().unwrap(),
                "content-type" => content_type = v.trim().to_owned(),
                "transfer-encoding" | "content-encoding" => {
                    panic!("the receiver reads plain bodies only: {h}")
                }
                _ => {}
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        let reply: Vec<u8> = {
            let mut g = got.lock().unwrap();
            g.requests.push((path.clone(), content_type));
            match path.as_str() {
                "/v1/traces" => {
                    g.traces.push(ExportTraceServiceRequest::decode(body.as_slice()).unwrap());
                }
                "/v1/metrics" => {
                    g.metrics.push(ExportMetricsServiceRequest::decode(body.as_slice()).unwrap());
                }
                other => panic!("unexpected OTLP path {other}"),
            }
            Vec::new() // the empty Export*ServiceResponse
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: {}\r\n\r\n",
            reply.len()
        );
        if conn.write_all(head.as_bytes()).and_then(|()| conn.write_all(&reply)).is_err() {
            return;
        }
    }
}

/// An attribute's value as JSON (strings, integers, doubles, booleans).
fn attr(attrs: &[KeyValue], key: &str) -> Option<Value> {
    let kv = attrs.iter().find(|kv| kv.key == key)?;
    Some(match kv.value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(s) => Value::from(s.clone()),
        any_value::Value::IntValue(i) => Value::from(*i),
        any_value::Value::DoubleValue(d) => Value::from(*d),
        any_value::Value::BoolValue(b) => Value::from(*b),
        other => Value::from(format!("{other:?}")),
    })
}

fn a(span: &Span, key: &str) -> Value {
    attr(&span.attributes, key).unwrap_or(Value::Null)
}

fn named<'a>(spans: &'a [Span], prefix: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name.starts_with(prefix)).collect()
}

/// The binary in `p`, no user configuration, no `OTEL_*` from outside.
fn bin(p: &TempProject) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ironbees"));
    c.arg("-C").arg(p.root());
    c.env("XDG_CONFIG_HOME", p.root().join(".no-user-config"));
    super::without_model_env(&mut c);
    without_otel_env(&mut c);
    c
}

fn without_otel_env(c: &mut Command) {
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") {
            c.env_remove(&k);
        }
    }
}

fn run(c: &mut Command) -> Out {
    Out::from(c.output().unwrap())
}

const FILE: &str = "def f():\n    return 1\n";

#[test]
fn a_tool_call_exports_its_execute_tool_span_under_the_command_span() {
    let receiver = Receiver::start();
    let p = TempProject::new();
    p.write("a.py", FILE);
    // Configured in the project (`observability:`), not by variables.
    p.write(
        ".ironbees/config.yaml",
        format!(
            "observability:\n  service_name: ironbees-test\n  otlp:\n    endpoint: {}\n    protocol: http/protobuf\n    headers:\n      x-api-key: sk-telemetry-secret\n",
            receiver.endpoint()
        ),
    );
    let o = run(bin(&p).args(["tool", "read", r#"{"target": "a.py"}"#]));
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("return 1"), "{}", o.stdout);
    assert!(!o.stderr.contains("warning"), "{}", o.stderr);

    let spans = receiver.spans();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    let root = named(&spans, "ironbees tool");
    assert_eq!(root.len(), 1, "{names:?}");
    let root = root[0];
    assert!(root.parent_span_id.is_empty(), "the command's span is the root");
    assert_eq!(a(root, "ironbees.command"), "tool");
    assert_eq!(a(root, "ironbees.exit_code"), 0);
    let tool = named(&spans, "execute_tool");
    assert_eq!(tool.len(), 1, "{names:?}");
    let tool = tool[0];
    assert_eq!(tool.name, "execute_tool read");
    assert_eq!(tool.trace_id, root.trace_id, "one trace");
    assert_eq!(tool.parent_span_id, root.span_id, "the tool call is the command's child");
    assert_eq!(a(tool, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(a(tool, "gen_ai.tool.name"), "read");
    assert_eq!(a(tool, "ironbees.tool.source"), "builtin");
    assert!(tool.end_time_unix_nano >= tool.start_time_unix_nano);
    assert_eq!(receiver.service_names(), ["ironbees-test"]);
    // The tool's duration as a histogram, one call.
    let h = receiver.histograms();
    let durations = h.get("ironbees.tool.duration").expect("ironbees.tool.duration exported");
    assert_eq!(durations.iter().map(|d| d.1).sum::<u64>(), 1, "{durations:?}");
    // The wire: OTLP/HTTP with protobuf bodies, the configured header sent but
    // never recorded in a span.
    let got = receiver.got.lock().unwrap();
    assert!(
        got.requests.iter().all(|(_, ct)| ct == "application/x-protobuf"),
        "{:?}",
        got.requests
    );
    let everything = format!("{:?}{:?}", got.traces, got.metrics);
    assert!(!everything.contains("sk-telemetry-secret"));
}

#[test]
fn a_failing_tool_call_marks_its_span_as_an_error() {
    let receiver = Receiver::start();
    let p = TempProject::new();
    p.write("a.py", FILE);
    let o = run(bin(&p)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        .args(["tool", "read", r#"{"target": "missing.py"}"#]));
    assert_ne!(o.code, 0, "{}", o.stdout);
    let spans = receiver.spans();
    let tool = named(&spans, "execute_tool read");
    assert_eq!(tool.len(), 1);
    let code = a(tool[0], "error.type");
    assert!(code.as_str().is_some_and(|c| !c.is_empty()), "{:?}", tool[0].attributes);
    // Status code 2 is ERROR in the OTLP definitions.
    assert_eq!(tool[0].status.as_ref().map(|s| s.code), Some(2));
    let root = named(&spans, "ironbees tool")[0];
    assert_eq!(a(root, "ironbees.exit_code"), o.code);
}

#[test]
fn an_agent_run_exports_model_calls_with_their_token_usage() {
    let receiver = Receiver::start();
    let p = calc_project();
    let mock = MockLlm::start();
    calculator_model(&mock, super::agent::GUARDED);
    let mut c = ironbees(p.root(), &mock);
    without_otel_env(&mut c);
    // The standard variables, a base endpoint: the signals' paths are added.
    c.env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        .args(["run", "--yes", "--json", "Fix the division by zero bug in calculate()"]);
    let o = super::agent::run(c);
    ok(&o);
    assert_eq!(o.outcome()["status"]["type"], "succeeded", "{}", o.stderr);

    let spans = receiver.spans();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    let root = named(&spans, "ironbees run");
    assert_eq!(root.len(), 1, "{names:?}");
    let chats = named(&spans, "chat ");
    let model_requests = mock.requests().len();
    assert_eq!(chats.len(), model_requests, "one span per model call: {names:?}");
    let u = usage();
    for chat in &chats {
        assert_eq!(a(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(a(chat, "gen_ai.provider.name"), "anthropic");
        assert!(a(chat, "gen_ai.request.model").as_str().is_some_and(|m| !m.is_empty()));
        assert_eq!(a(chat, "gen_ai.usage.input_tokens"), u.input);
        assert_eq!(a(chat, "gen_ai.usage.output_tokens"), u.output);
        assert_eq!(chat.kind, 3, "SPAN_KIND_CLIENT");
        assert_eq!(chat.trace_id, root[0].trace_id, "the run's trace: {}", chat.name);
        // No prompt text, no key.
        let all = format!("{:?}", chat.attributes);
        assert!(!all.contains("calculate") && !all.contains("sk-ant"), "{all}");
    }
    // The run's nodes are the command's children; each model call is a node's.
    let nodes = named(&spans, "node ");
    assert!(nodes.len() >= 3, "plan, code, validate at least: {names:?}");
    for node in &nodes {
        assert_eq!(node.parent_span_id, root[0].span_id, "{}", node.name);
        assert!(a(node, "ironbees.run.id").as_str().is_some_and(|id| !id.is_empty()));
    }
    // Each model call is an agent turn's, and each turn a node's.
    let parent_of = |s: &Span| spans.iter().find(|p| p.span_id == s.parent_span_id);
    for chat in &chats {
        let turn = parent_of(chat);
        assert!(
            turn.is_some_and(|t| t.name.starts_with("invoke_agent ")),
            "{}: {names:?}",
            chat.name
        );
        let node = parent_of(turn.unwrap());
        assert!(node.is_some_and(|n| n.name.starts_with("node ")), "{names:?}");
    }
    let turns = named(&spans, "invoke_agent ");
    for agent in ["planner", "coder"] {
        assert!(
            turns.iter().any(|t| a(t, "gen_ai.agent.name") == agent),
            "a turn of the {agent}: {names:?}"
        );
    }
    // The change the coder made went through the registry, in the coder's turn.
    let tools = named(&spans, "execute_tool change");
    assert!(!tools.is_empty(), "{names:?}");
    assert_eq!(tools[0].trace_id, root[0].trace_id);
    let parent = parent_of(tools[0]);
    assert!(parent.is_some_and(|p| a(p, "gen_ai.agent.name") == "coder"), "{names:?}");
    // The tests ran in the sandbox (program name only, no arguments), and the
    // change was applied at the end as one edit transaction.
    let commands = named(&spans, "sandbox.exec ");
    assert!(
        commands
            .iter()
            .any(|c| a(c, "process.executable.name").as_str().is_some_and(|p| p.contains("py"))
                && a(c, "process.exit.code") == 0),
        "{names:?}"
    );
    for c in &commands {
        let all = format!("{:?}", c.attributes);
        assert!(!all.contains("test_calc"), "no arguments: {all}");
    }
    let tx = named(&spans, "edit.transaction");
    assert_eq!(tx.len(), 1, "{names:?}");
    assert!(parent_of(tx[0]).is_some_and(|p| p.name == "node SUCCESS"), "{names:?}");
    // The token metric adds up to the model calls' usage.
    let h = receiver.histograms();
    let tokens = h.get("gen_ai.client.token.usage").expect("gen_ai.client.token.usage exported");
    let sum_of = |kind: &str| -> f64 {
        tokens
            .iter()
            .filter(|(attrs, ..)| {
                attr(attrs, "gen_ai.token.type").as_ref() == Some(&Value::from(kind))
            })
            .map(|(_, _, sum)| sum)
            .sum()
    };
    assert_eq!(sum_of("input"), (u.input * model_requests as u64) as f64);
    assert_eq!(sum_of("output"), (u.output * model_requests as u64) as f64);
    // ... which is the run's own ledger, and so is the cost.
    let spend = &o.outcome()["state"]["spend"];
    assert_eq!(sum_of("input"), spend["inputTokens"].as_f64().unwrap(), "{spend}");
    assert_eq!(sum_of("output"), spend["outputTokens"].as_f64().unwrap(), "{spend}");
    assert_eq!(chats.len() as u64, spend["modelCalls"].as_u64().unwrap(), "{spend}");
    let cost = receiver.sum("ironbees.llm.cost_usd");
    assert!((cost - spend["costUsd"].as_f64().unwrap()).abs() < 1e-9, "{cost} vs {spend}");
    // Each model call's duration; the command's, with its outcome.
    let calls = h.get("gen_ai.client.operation.duration").expect("operation duration");
    assert_eq!(calls.iter().map(|c| c.1).sum::<u64>(), model_requests as u64);
    let commands = h.get("ironbees.command.duration").expect("command duration");
    assert_eq!(commands.len(), 1, "{commands:?}");
    assert_eq!(attr(&commands[0].0, "ironbees.command"), Some(Value::from("run")));
    assert_eq!(attr(&commands[0].0, "ironbees.exit_code"), Some(Value::from(0)));
}

#[test]
fn a_collector_that_is_down_costs_a_warning_not_the_command() {
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let p = TempProject::new();
    p.write("a.py", FILE);
    let plain = run(bin(&p).args(["tool", "read", r#"{"target": "a.py"}"#]));
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    for protocol in ["http/protobuf", "grpc"] {
        let started = std::time::Instant::now();
        let o = run(bin(&p)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{port}"))
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
            .args(["tool", "read", r#"{"target": "a.py"}"#]));
        assert_eq!(o.code, 0, "{protocol}: {}", o.stderr);
        assert_eq!(o.stdout, plain.stdout, "{protocol}: the same answer");
        assert!(
            o.stderr.contains("warning: telemetry: exporting spans to")
                && o.stderr.contains(&port.to_string()),
            "{protocol}: {}",
            o.stderr
        );
        assert!(started.elapsed().as_secs() < 10, "{protocol}: {:?}", started.elapsed());
    }
}

/// Where `scripts/test` installs the gRPC receiver's packages (`grpcio`,
/// `opentelemetry-proto`), if it did.
fn grpc_receiver_deps() -> Option<std::path::PathBuf> {
    let dir = super::mcp::deps().join("otlp-receiver");
    let present = Command::new("python3")
        .args(["-c", "import grpc, opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc"])
        .env("PYTHONPATH", &dir)
        .output()
        .is_ok_and(|o| o.status.success());
    super::mcp::client_available(
        "the OTLP/gRPC receiver's packages (grpcio, opentelemetry-proto)",
        present,
        "python3 -m pip install --target target/test-deps/otlp-receiver grpcio opentelemetry-proto",
    )
    .then_some(dir)
}

/// The span named `name` in the receiver's JSON (protobuf's JSON mapping).
fn json_span<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    let names: Vec<&Value> = spans.iter().map(|s| &s["name"]).collect();
    spans.iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("no {name} in {names:?}"))
}

fn json_attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    span["attributes"]
        .as_array()
        .and_then(|a| a.iter().find(|kv| kv["key"] == key))
        .map_or(&Value::Null, |kv| &kv["value"])
}

#[test]
fn grpc_export_reaches_a_python_receiver_on_the_official_protobufs() {
    use std::process::Stdio;
    let Some(deps) = grpc_receiver_deps() else { return };
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/receivers/otlp_grpc.py");
    let mut receiver = Command::new("python3")
        .arg(&script)
        .env("PYTHONPATH", &deps)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(receiver.stdout.take().unwrap()).lines();
    let port: u16 = lines.next().unwrap().unwrap().trim().parse().unwrap();
    let p = TempProject::new();
    p.write("a.py", FILE);
    let o = run(bin(&p)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{port}"))
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-team=bees")
        .args(["tool", "read", r#"{"target": "a.py"}"#]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stderr.contains("warning"), "{}", o.stderr);
    // The export is over when the command has exited: stop the receiver, read all.
    drop(receiver.stdin.take());
    let exports: Vec<Value> = lines.map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect();
    assert!(receiver.wait().unwrap().success());

    let traces: Vec<&Value> = exports.iter().filter(|e| e["signal"] == "traces").collect();
    assert!(!traces.is_empty(), "{exports:?}");
    assert!(traces.iter().all(|t| t["metadata"]["x-team"] == "bees"), "the configured header");
    let spans: Vec<Value> = traces
        .iter()
        .flat_map(|t| t["request"]["resource_spans"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r["scope_spans"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["spans"].as_array().cloned().unwrap_or_default())
        .collect();
    let root = json_span(&spans, "ironbees tool");
    let tool = json_span(&spans, "execute_tool read");
    assert_eq!(tool["trace_id"], root["trace_id"]);
    assert_eq!(tool["parent_span_id"], root["span_id"]);
    assert_eq!(json_attr(tool, "gen_ai.tool.name")["string_value"], "read");
    // int64 is a string in protobuf's JSON mapping.
    assert_eq!(json_attr(root, "ironbees.exit_code")["int_value"], "0");
    let metrics = exports.iter().find(|e| e["signal"] == "metrics").expect("metrics exported");
    let text = metrics["request"].to_string();
    assert!(text.contains("\"ironbees.tool.duration\""), "{text}");
}

/// The names of a live process's threads (`/proc/PID/task/*/comm`).
fn thread_names(pid: u32) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn without_an_endpoint_no_exporter_thread_starts() {
    let receiver = Receiver::start();
    let p = TempProject::new();
    p.write("a.py", FILE);
    // The SDK's batch span processor and periodic metric reader run on threads
    // of their own ("OpenTelemetry.Traces.BatchProcessor", cut to 15 bytes by
    // the kernel); the gRPC exporter on "otlp-grpc".
    let exporter = |n: &String| n.starts_with("OpenTelemetry") || n.starts_with("otlp");
    let threads = |endpoint: Option<&str>| {
        let mut s = super::mcp::Raw::ready_with(p.root(), |c| {
            without_otel_env(c);
            if let Some(e) = endpoint {
                c.env("OTEL_EXPORTER_OTLP_ENDPOINT", e)
                    .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
            }
        });
        // A call answered: whatever starts at startup has started.
        s.call(1, "read", serde_json::json!({"target": "a.py"}));
        let names = thread_names(s.child.id());
        s.child.kill().unwrap();
        s.child.wait().unwrap();
        names
    };
    let off = threads(None);
    assert!(!off.iter().any(exporter), "no exporter without an endpoint: {off:?}");
    let on = threads(Some(&receiver.endpoint()));
    assert!(on.iter().any(exporter), "the exporter's threads with one: {on:?}");
}
