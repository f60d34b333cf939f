//! The run's event stream (what `--json` prints, one per line) and its result.

use serde::Serialize;

use xcsh_log::FileChange;
use xcsh_log::plan::Plan;
use xcsh_ports::OutputStream;

use xcsh_machine::{
    ApprovedBy, CallId, Delta, EntryId, FinishReason, IgnoreReason, ProviderError, StepNo,
    StopReason, SyntheticReason, ToolStatus, Usage, UserOrigin, Verdict,
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
    /// The provider's request for `step` failed before any output (`reason`, e.g.
    /// `http 429 …`) and is tried again in `delay_ms`; `attempt` is the attempt
    /// about to be made (2 for the first retry). Recorded inside the step's events.
    Retrying {
        step: StepNo,
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    StepStarted {
        step: StepNo,
    },
    TextDelta(Delta),
    ReasoningDelta(Delta),
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
    /// Transient: a piece of a running tool call's output (bash's stdout or
    /// stderr as it is read, whole lines where possible), for the interface to show
    /// while the call runs. Never recorded and never an input: the call's result
    /// (`ToolResult`, and its `tool_result` entry) is what counts; at most
    /// [`MAX_PROGRESS_BYTES`](xcsh_ports::MAX_PROGRESS_BYTES) per call are sent.
    ToolOutput {
        call_id: CallId,
        stream: OutputStream,
        text: String,
    },
    /// A tool call settled (or got a synthetic result without running).
    ToolResult {
        call_id: CallId,
        name: String,
        status: ToolStatus,
        content: String,
        /// A synthetic result's call arguments: no `tool_call` event came before it
        /// (the call never ran), so this is where an interface learns them.
        #[serde(skip_serializing_if = "Option::is_none")]
        arguments: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        synthetic: Option<SyntheticReason>,
        duration_ms: u64,
        /// The files the call changed (an `edit` or `write`), as recorded in its
        /// `tool_result` entry: `before` lets an interface draw the diff with line
        /// numbers. Empty for other calls and synthetic results. Not serialized
        /// (`--json` lines carry no file contents; the log has them).
        #[serde(skip)]
        changes: Vec<FileChange>,
    },
    /// The task plan changed: a `plan` call's ok result was recorded (SPEC.md §27);
    /// `plan` is the whole plan now.
    Plan {
        call_id: CallId,
        plan: Plan,
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
    /// The memory index this turn's requests carry was recorded (SPEC.md §28).
    MemoryIndex {
        notes: u32,
        hash: String,
    },
    /// The memory extraction after the turn settled: `completed`, `failed` or
    /// `aborted`, its usage, the notes it proposed (`scope/name`) and what was
    /// refused.
    MemoryExtracted {
        outcome: &'static str,
        usage: Usage,
        notes: Vec<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        problems: Vec<String>,
    },
    /// The extraction's notes were written: which (`scope/name`), and the notes
    /// that could not be.
    MemoryWritten {
        written: Vec<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        errors: Vec<String>,
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
