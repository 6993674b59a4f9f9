//! The settings the host fills in: logs, where and how to export.

use std::time::Duration;

/// The target of metric events (see the crate's doc).
pub const METRICS_TARGET: &str = "ironbees::metrics";
/// The target of events that carry prompts, answers and tool arguments:
/// exported only with content capture on, never logged.
pub const CONTENT_TARGET: &str = "gen_ai.content";

/// How logs are written to stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// The log settings: a filter (`IRONBEES_LOG`), else none (no logs).
#[derive(Debug, Clone, Default)]
pub struct LogSettings {
    /// An `EnvFilter` expression (`debug`, `llm=trace,info`); `None`: no logs.
    pub filter: Option<String>,
    pub format: LogFormat,
    /// Colors (text on a terminal).
    pub ansi: bool,
}

/// OTLP's two wire protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// gRPC (port 4317).
    Grpc,
    /// HTTP with protobuf bodies (port 4318, `/v1/traces`, `/v1/metrics`).
    HttpProtobuf,
}

/// Where and how to export.
#[derive(Debug, Clone)]
pub struct Otlp {
    pub protocol: Protocol,
    /// gRPC: the collector's address; HTTP: the full traces URL.
    pub traces_endpoint: String,
    /// gRPC: the collector's address; HTTP: the full metrics URL.
    pub metrics_endpoint: String,
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
}

/// The OpenTelemetry settings (the host reads them from `observability:` and
/// the standard `OTEL_*` variables).
#[derive(Debug, Clone)]
pub struct Settings {
    /// `None`: nothing is exported, nothing started.
    pub otlp: Option<Otlp>,
    pub service_name: String,
    pub service_version: String,
    /// The share of traces kept (a trace-id ratio; children follow their parent).
    pub sample_ratio: f64,
    /// Prompts, answers and tool arguments as span events.
    pub capture_content: bool,
    pub metrics_interval: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            otlp: None,
            service_name: "ironbees".into(),
            service_version: String::new(),
            sample_ratio: 1.0,
            capture_content: false,
            metrics_interval: Duration::from_secs(60),
        }
    }
}

/// What went wrong setting up the export.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("OpenTelemetry exporter: {0}")]
    Exporter(String),
    #[error("starting the OpenTelemetry exporter's runtime: {0}")]
    Runtime(#[source] std::io::Error),
}
