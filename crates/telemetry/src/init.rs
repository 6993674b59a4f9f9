//! The global subscriber and the guard that flushes the export.

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::{metrics::SdkMeterProvider, trace::SdkTracerProvider};
use tracing::Level;
use tracing_subscriber::{
    Layer,
    filter::{FilterExt, Targets},
    layer::SubscriberExt,
    util::SubscriberInitExt,
};

use crate::{
    export::{providers, without_userinfo},
    settings::{CONTENT_TARGET, Error, LogFormat, LogSettings, METRICS_TARGET, Settings},
};

/// The installed providers: flushed and shut down by [`Guard::shutdown`] (or
/// on drop). Keep it until the process ends.
#[derive(Default)]
pub struct Guard {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
    /// gRPC's channel lives on this runtime.
    rt: Option<tokio::runtime::Runtime>,
    /// Where spans go (for warnings), without any user information.
    endpoint: String,
}

impl Guard {
    /// Whether an exporter is running.
    pub fn exporting(&self) -> bool {
        self.tracer.is_some()
    }

    /// Exports what is buffered and stops the exporters (each signal's last
    /// export is tried twice, then given up). What failed (a collector down or
    /// refusing) comes back as sentences for a warning: telemetry never fails
    /// a command.
    pub fn shutdown(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(t) = self.tracer.take() {
            // A flush says why an export failed; a shutdown does not.
            if let Err(e) = t.force_flush() {
                problems.push(format!("exporting spans to {}: {e}", self.endpoint));
            }
            let _ = t.shutdown_with_timeout(SHUTDOWN_LIMIT);
        }
        if let Some(m) = self.meter.take()
            && let Err(e) = m.shutdown_with_timeout(SHUTDOWN_LIMIT)
        {
            problems.push(format!("exporting metrics to {}: {e}", self.endpoint));
        }
        if let Some(rt) = self.rt.take() {
            rt.shutdown_timeout(Duration::from_secs(1));
        }
        problems
    }
}

/// How long stopping an exporter may take once its last batch is sent.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(2);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Installs the global subscriber: logs per `logs`, and, when `settings` has
/// an endpoint, the OpenTelemetry span and metric layers. A subscriber
/// installed already (tests) is kept.
pub fn init(logs: &LogSettings, settings: &Settings) -> Result<Guard, Error> {
    let mut guard = Guard::default();
    let fmt = logs.filter.as_deref().map(|filter| {
        let env = tracing_subscriber::EnvFilter::try_new(filter)
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        // Metric events are not log lines, and content never goes to logs.
        let not_ours = tracing_subscriber::filter::filter_fn(|m| {
            m.target() != METRICS_TARGET && !m.target().starts_with(CONTENT_TARGET)
        });
        let base = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
        let layer: Box<dyn Layer<_> + Send + Sync> = match logs.format {
            LogFormat::Json => base.json().with_current_span(true).with_span_list(false).boxed(),
            LogFormat::Text => base.with_ansi(logs.ansi).boxed(),
        };
        layer.with_filter(env.and(not_ours)).boxed()
    });
    if fmt.is_none() && settings.otlp.is_none() {
        // No logs, no export: no subscriber at all, every callsite stays off.
        return Ok(guard);
    }
    let (spans, metrics) = match &settings.otlp {
        None => (None, None),
        Some(otlp) => {
            let (tracer, meter, rt) = providers(otlp, settings)?;
            let spans = tracing_opentelemetry::layer()
                .with_tracer(tracer.tracer("ironbees"))
                .with_filter(span_targets(settings.capture_content));
            let metrics = tracing_opentelemetry::MetricsLayer::new(meter.clone())
                .with_filter(Targets::new().with_target(METRICS_TARGET, Level::TRACE));
            guard = Guard {
                tracer: Some(tracer),
                meter: Some(meter),
                rt,
                endpoint: without_userinfo(&otlp.traces_endpoint),
            };
            (Some(spans), Some(metrics))
        }
    };
    let _ = tracing_subscriber::registry().with(fmt).with(spans).with(metrics).try_init();
    Ok(guard)
}

/// What becomes spans: ours at info and above; the libraries underneath (HTTP,
/// gRPC, the exporter itself) not at all; content events only when captured.
fn span_targets(capture_content: bool) -> Targets {
    use tracing::level_filters::LevelFilter;
    let mut t = Targets::new()
        .with_default(Level::INFO)
        .with_target(METRICS_TARGET, LevelFilter::OFF)
        .with_target(
            CONTENT_TARGET,
            if capture_content { LevelFilter::TRACE } else { LevelFilter::OFF },
        );
    for noisy in [
        "h2",
        "hyper",
        "hyper_util",
        "tonic",
        "tower",
        "reqwest",
        "opentelemetry",
        "opentelemetry_sdk",
        "opentelemetry_otlp",
        "rmcp",
    ] {
        t = t.with_target(noisy, LevelFilter::OFF);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_configured_means_nothing_started() {
        let g = init(&LogSettings::default(), &Settings::default()).unwrap();
        assert!(!g.exporting());
    }
}
