//! The deterministic trace and span ids: blake3 of the session id (and entry id),
//! truncated, never all-zero (an all-zero id is invalid in OpenTelemetry).

use opentelemetry::trace::{SpanId, TraceId};
use xcsh_machine::EntryId;

fn nonzero<const N: usize>(mut bytes: [u8; N]) -> [u8; N] {
    if bytes.iter().all(|b| *b == 0) {
        bytes[N - 1] = 1;
    }
    bytes
}

/// The trace of a session (and of its sub-agents): the first 16 bytes of
/// blake3(`xcsh-trace:{session}`).
pub fn trace_id(session: &str) -> TraceId {
    let h = blake3::hash(format!("xcsh-trace:{session}").as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&h.as_bytes()[..16]);
    TraceId::from_bytes(nonzero(b))
}

/// The span of an entry: the first 8 bytes of blake3(`xcsh-span:{session}:{entry}`).
pub fn span_id(session: &str, entry: EntryId) -> SpanId {
    let h = blake3::hash(format!("xcsh-span:{session}:{}", entry.0).as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&h.as_bytes()[..8]);
    SpanId::from_bytes(nonzero(b))
}
