//! The run's event stream (what `--json` prints, one per line) and its result.

use serde::Serialize;

use crate::machine::{
    ApprovedBy, CallId, EntryId, FinishReason, IgnoreReason, ProviderError, StepNo, StopReason,
    SyntheticReason, ToolStatus, Usage, UserOrigin, Verdict,
};

/// One event of a run, in the order the owner task saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    /// The session is open; entries will be appended after `leaf`.
    RunStarted {
        session_id: String,
        session_path: String,
        leaf: EntryId,
    },
    /// Something the user should know (a repaired log, a recovered run, a branch).
    Notice {
        message: String,
    },
    StepStarted {
        step: StepNo,
    },
    TextDelta {
        step: StepNo,
        text: String,
    },
    ReasoningDelta {
        step: StepNo,
        text: String,
    },
    /// The step's stream settled.
    StepFinished {
        step: StepNo,
        usage: Usage,
        finish: Option<FinishReason>,
        /// `completed`, `failed` or `aborted`.
        outcome: &'static str,
        /// Why a `failed` step failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ProviderError>,
    },
    /// A validated tool call was dispatched.
    ToolCall {
        step: StepNo,
        call_id: CallId,
        name: String,
        arguments: String,
    },
    /// A tool call settled (or got a synthetic result without running).
    ToolResult {
        call_id: CallId,
        name: String,
        status: ToolStatus,
        content: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        synthetic: Option<SyntheticReason>,
        duration_ms: u64,
    },
    /// A mutating call waits for the user's approval.
    ApprovalRequested {
        call_id: CallId,
        name: String,
        arguments: String,
    },
    /// A mutating call was allowed or denied without asking (policy or grant).
    Approval {
        call_id: CallId,
        name: String,
        verdict: Verdict,
        by: ApprovedBy,
    },
    /// A steer or follow-up arrived and waits for its boundary.
    Queued {
        origin: UserOrigin,
        text: String,
    },
    /// A queued message became a user message.
    Delivered {
        origin: UserOrigin,
        text: String,
    },
    CompactionStarted {
        tokens_before: u64,
    },
    Compacted {
        tokens_before: u64,
        tokens_after: u64,
    },
    /// An input had no effect.
    Ignored {
        reason: IgnoreReason,
    },
    RunFinished {
        reason: StopReason,
        steps: u32,
        usage: Usage,
    },
}

/// What a finished run reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunResult {
    pub final_text: String,
    pub stop_reason: StopReason,
    pub usage: Usage,
    pub steps: u32,
    pub compactions: u32,
    pub session_id: String,
    pub session_path: String,
    /// Steers and follow-ups that were queued but never delivered.
    pub undelivered: Vec<String>,
}
