//! The OTLP exporters and the SDK providers over them.

use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::{
    Resource,
    metrics::{PeriodicReader, SdkMeterProvider},
    trace::{Sampler, SdkTracerProvider},
};

use crate::settings::{Error, Otlp, Protocol, Settings};

pub(crate) type Providers = (SdkTracerProvider, SdkMeterProvider, Option<tokio::runtime::Runtime>);

pub(crate) fn providers(otlp: &Otlp, settings: &Settings) -> Result<Providers, Error> {
    // reqwest is built without a TLS provider of its own (see `llm`).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut resource = Resource::builder().with_service_name(settings.service_name.clone());
    if !settings.service_version.is_empty() {
        resource = resource.with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            settings.service_version.clone(),
        ));
    }
    let resource = resource.build();
    let err = |e: opentelemetry_otlp::ExporterBuildError| Error::Exporter(e.to_string());
    let (spans, metrics, rt) = match otlp.protocol {
        Protocol::Grpc => {
            // tonic's channel needs a tokio runtime for its connection task.
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("otlp-grpc")
                .enable_all()
                .build()
                .map_err(Error::Runtime)?;
            let _entered = rt.enter();
            let mut metadata = tonic_metadata(&otlp.headers);
            let spans = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(otlp.traces_endpoint.clone())
                .with_timeout(otlp.timeout)
                .with_metadata(metadata.clone())
                .with_retry_policy(retry())
                .build()
                .map_err(err)?;
            let metrics = opentelemetry_otlp::MetricExporter::builder()
                .with_tonic()
                .with_endpoint(otlp.metrics_endpoint.clone())
                .with_timeout(otlp.timeout)
                .with_metadata(std::mem::take(&mut metadata))
                .with_retry_policy(retry())
                .build()
                .map_err(err)?;
            drop(_entered);
            (spans, metrics, Some(rt))
        }
        Protocol::HttpProtobuf => {
            let headers: std::collections::HashMap<String, String> =
                otlp.headers.iter().cloned().collect();
            let spans = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(otlp.traces_endpoint.clone())
                .with_timeout(otlp.timeout)
                .with_headers(headers.clone())
                .with_retry_policy(retry())
                .build()
                .map_err(err)?;
            let metrics = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(otlp.metrics_endpoint.clone())
                .with_timeout(otlp.timeout)
                .with_headers(headers)
                .with_retry_policy(retry())
                .build()
                .map_err(err)?;
            (spans, metrics, None)
        }
    };
    let ratio = settings.sample_ratio.clamp(0.0, 1.0);
    let tracer = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio))))
        .with_resource(resource.clone())
        .build();
    let reader = PeriodicReader::builder(metrics).with_interval(settings.metrics_interval).build();
    let meter = SdkMeterProvider::builder().with_reader(reader).with_resource(resource).build();
    Ok((tracer, meter, rt))
}

/// `https://user:pass@host/x` as `https://host/x`.
pub(crate) fn without_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_owned(),
    }
}

/// One retry: a command must not wait seconds on its way out for a collector
/// that is down.
fn retry() -> opentelemetry_otlp::RetryPolicy {
    opentelemetry_otlp::RetryPolicy::recommended().with_max_retries(1)
}

fn tonic_metadata(
    headers: &[(String, String)],
) -> opentelemetry_otlp::tonic_types::metadata::MetadataMap {
    let mut map = http::HeaderMap::new();
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (
            http::HeaderName::from_bytes(k.to_ascii_lowercase().as_bytes()),
            http::HeaderValue::from_str(v),
        ) {
            map.insert(k, v);
        }
    }
    opentelemetry_otlp::tonic_types::metadata::MetadataMap::from_headers(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_never_show_credentials_in_the_endpoint() {
        assert_eq!(
            without_userinfo("https://me:s3cret@otel.example.com:4318/v1/traces"),
            "https://otel.example.com:4318/v1/traces"
        );
        assert_eq!(without_userinfo("http://localhost:4317"), "http://localhost:4317");
    }
}
