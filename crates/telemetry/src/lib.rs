//! Logs and OpenTelemetry for the binary, set up once: `tracing` is the one
//! instrumentation API of every crate, and this crate decides where it goes.
//!
//! The key decisions:
//!
//! - **Libraries speak `tracing` only.** Spans (today the command, each
//!   workflow node, each model call and each tool call; agent turns, sandbox
//!   commands and edit transactions are still to come) carry
//!   OpenTelemetry's names as fields (`otel.name`, `gen_ai.request.model`,
//!   `gen_ai.usage.input_tokens`, ...); metrics are events on the target
//!   [`METRICS_TARGET`] whose fields follow `tracing-opentelemetry`'s
//!   convention (`histogram.gen_ai.client.token.usage = n`,
//!   `monotonic_counter.ironbees.runs = 1`), the other fields their attributes.
//!   No library depends on an OpenTelemetry crate.
//! - **Nothing when not configured.** Without an OTLP endpoint no exporter,
//!   provider, runtime or thread exists and no OpenTelemetry layer is
//!   installed: the metric and content events are disabled callsites, which
//!   `tracing` skips at the cost of a load and a branch (with no logs either,
//!   no subscriber is installed at all).
//! - **Export is sampled and batched**: a parent-based trace-id ratio sampler,
//!   the SDK's batch span processor and periodic metric reader (each its own
//!   thread), OTLP over gRPC (tonic, on a one-worker runtime of ours) or
//!   HTTP/protobuf (blocking reqwest). [`Guard::shutdown`] flushes both at the
//!   end of a command.
//! - **A collector never fails a command**: exports retry once, and what
//!   failed comes back from [`Guard::shutdown`] as sentences for a warning
//!   (the endpoint shown without user information).
//! - **No prompt or secret text in spans** unless content capture is on: the
//!   messages, tool arguments and answers go as events on [`CONTENT_TARGET`],
//!   enabled only then (and never in logs); no library emits them yet, so
//!   today spans carry no content at all.
//! - Logs go to stderr, as text or JSON lines ([`LogFormat`]), filtered by an
//!   `EnvFilter` expression (`IRONBEES_LOG`).
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod export;
mod init;
mod settings;

pub use crate::{
    init::{Guard, init},
    settings::{
        CONTENT_TARGET, Error, LogFormat, LogSettings, METRICS_TARGET, Otlp, Protocol, Settings,
    },
};
