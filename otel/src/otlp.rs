//! The two ways out: OTLP/JSON (one `ExportTraceServiceRequest` per line, the
//! collector's file format) through opentelemetry-proto's transform, and OTLP/HTTP
//! (protobuf, `POST {endpoint}/v1/traces`) through opentelemetry-otlp's exporter.

use std::collections::BTreeMap;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use opentelemetry_semantic_conventions::attribute as semconv;

use crate::OtelError;

/// The resource every span is under: `service.name` = `xcsh` and its version (no
/// detectors: the host and process would make two exports differ).
fn resource() -> Resource {
    Resource::builder_empty()
        .with_attributes([
            KeyValue::new(semconv::SERVICE_NAME, "xcsh"),
            KeyValue::new(semconv::SERVICE_VERSION, env!("CARGO_PKG_VERSION")),
        ])
        .build()
}

/// The spans as one OTLP/JSON `ExportTraceServiceRequest`, on one line with its
/// newline.
pub fn to_otlp_json(spans: Vec<SpanData>) -> Result<String, OtelError> {
    let mut request = ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(
            spans,
            &ResourceAttributesWithSchema::from(&resource()),
        ),
    };
    // The SDK's resource is a hash map: its attributes in key order, for identical
    // exports.
    for rs in &mut request.resource_spans {
        if let Some(r) = &mut rs.resource {
            r.attributes.sort_by(|a, b| a.key.cmp(&b.key));
        }
    }
    let mut line = serde_json::to_string(&request)?;
    line.push('\n');
    Ok(line)
}

/// Where `send` sends: the collector's base URL (`/v1/traces` is added unless it is
/// there), extra headers (e.g. `Authorization` for Langfuse) and the bound on the
/// whole request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    pub headers: BTreeMap<String, String>,
    pub timeout: Duration,
}

impl Endpoint {
    /// `url` with no headers and a 5 s timeout.
    pub fn new(url: &str) -> Endpoint {
        Endpoint {
            url: url.to_owned(),
            headers: BTreeMap::new(),
            timeout: Duration::from_secs(5),
        }
    }
}

/// The OTLP/HTTP traces URL of a collector's base URL.
pub fn traces_url(base: &str) -> Result<String, OtelError> {
    let bad = |reason: &str| OtelError::Endpoint {
        url: base.to_owned(),
        reason: reason.to_owned(),
    };
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(bad("it must start with http:// or https://"));
    }
    let trimmed = base.trim_end_matches('/');
    if trimmed.ends_with("/v1/traces") {
        Ok(trimmed.to_owned())
    } else {
        Ok(format!("{trimmed}/v1/traces"))
    }
}

/// Sends the spans in one OTLP/HTTP protobuf request (on the caller's tokio runtime).
pub async fn send(spans: Vec<SpanData>, to: &Endpoint) -> Result<(), OtelError> {
    let url = traces_url(&to.url)?;
    let failed = |reason: String| OtelError::Send {
        url: url.clone(),
        reason,
    };
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url.clone())
        .with_timeout(to.timeout)
        .with_headers(to.headers.clone().into_iter().collect())
        .build()
        .map_err(|e| failed(e.to_string()))?;
    exporter.set_resource(&resource());
    // The exporter's client has the timeout; this bounds a connect that hangs too.
    let sent = tokio::time::timeout(to.timeout + Duration::from_secs(1), exporter.export(spans))
        .await
        .map_err(|_| failed(format!("no answer within {:?}", to.timeout)))?;
    sent.map_err(|e| failed(e.to_string()))?;
    let _ = exporter.shutdown();
    Ok(())
}

/// [`send`] on a runtime of its own (for callers outside tokio).
pub fn send_blocking(spans: Vec<SpanData>, to: &Endpoint) -> Result<(), OtelError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| OtelError::Send {
            url: to.url.clone(),
            reason: format!("cannot start the runtime: {e}"),
        })?;
    rt.block_on(send(spans, to))
}
