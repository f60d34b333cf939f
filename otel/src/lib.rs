//! Traces: a session log (all branches, and its sub-agents' sessions) as
//! OpenTelemetry spans following the GenAI semantic conventions (SPEC.md "Traces
//! (OpenTelemetry)"), written as OTLP/JSON or sent over OTLP/HTTP. Every id is derived
//! from the session and entry ids, so exporting twice gives the same spans.

mod ids;
mod map;
mod otlp;

pub use ids::{span_id, trace_id};
pub use map::{Options, spans, spans_of_family, spans_of_last_run};
/// The span type the functions here return (the SDK's).
pub use opentelemetry_sdk::trace::SpanData;
pub use otlp::{Endpoint, send, send_blocking, to_otlp_json, traces_url};

/// What can go wrong turning a session into spans or sending them.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    #[error(transparent)]
    Log(#[from] xcsh_log::LogError),
    #[error("cannot encode the spans as OTLP/JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("bad OTLP endpoint {url:?}: {reason}")]
    Endpoint { url: String, reason: String },
    #[error("cannot send the spans to {url}: {reason}")]
    Send { url: String, reason: String },
}

#[cfg(test)]
mod tests;
