//! The derived forms (`#[serde(flatten)]`) of the two types the log deserializes by
//! hand ([`fast`](super::fast)), as the format defines them: what the hand-written
//! deserializers are tested against, and what `examples/parse_floor.rs` parses with.

use serde::Deserialize;
use xcsh_machine::{CallId, StreamEvent, ToolOutcome};

use super::FileChange;

/// A stream event and when it arrived (the log's `TimedEvent`).
#[derive(Debug, PartialEq, Deserialize)]
pub(crate) struct DerivedEvent {
    pub(crate) ms: u64,
    #[serde(flatten)]
    pub(crate) event: StreamEvent,
}

/// A tool result (the log's `ToolResultRecord`).
#[derive(Debug, PartialEq, Deserialize)]
pub(crate) struct DerivedResult {
    pub(crate) call_id: CallId,
    pub(crate) name: String,
    #[serde(flatten)]
    pub(crate) outcome: ToolOutcome,
    pub(crate) duration_ms: u64,
    #[serde(default)]
    pub(crate) changes: Vec<FileChange>,
}
