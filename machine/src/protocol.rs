//! What goes in and out of the machine: `Input`, `Effect`, `Decision`, stop reasons
//! and the run configuration (limits) that travels with each prompt.

use serde::{Deserialize, Serialize};

use super::types::{
    CallId, EntryId, ProviderError, StepNo, StepOutcome, StreamEvent, ToolCall, ToolOutcome, Usage,
    UserOrigin,
};

/// Defaults of [`Limits`]; SPEC.md "Defaults" quotes these.
pub const DEFAULT_MAX_STEPS: u32 = 32;
pub const DEFAULT_MAX_TOKENS: u64 = 400_000;
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8_192;
pub const DEFAULT_COMPACT_AT_TOKENS: u64 = 150_000;
/// The ratio of the usage estimate for a step that reports none (SPEC.md §9.2),
/// recorded in the configuration of every run started now.
pub const DEFAULT_ESTIMATE_BYTES_PER_TOKEN: u32 = 4;

/// The limits of one run. Recorded inside the prompt entry, so that replay uses the
/// limits the run had, never today's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Steps allowed since the run started or since the last delivered message.
    pub max_steps: u32,
    /// Spend budget: cumulative tokens over the run (input, output and cached
    /// prompt tokens, see `Usage::spend`); 0 = no cap.
    pub max_tokens: u64,
    /// Output tokens allowed per step (sent with each request).
    pub max_output_tokens: u32,
    /// Compact when the last request's reported input tokens reach this; 0 = never.
    pub compact_at_tokens: u64,
}

/// The decision vocabulary, written once: every [`Decision`] variant with its entry
/// type name (its serde tag). `$m` is called with `decisions: [Variant "name", …]`
/// after the tokens `$extra`; from it come [`Decision::type_name`],
/// [`Decision::TYPE_NAMES`] and the log index's kinds.
#[macro_export]
macro_rules! for_each_decision {
    ($m:ident $($extra:tt)*) => {
        $m! {
            $($extra)*
            decisions: [
                StepStarted "step_started",
                Delivered "delivered",
                ToolDispatched "tool_dispatched",
                Approval "approval",
                SyntheticResult "synthetic_result",
                CompactionStarted "compaction_started",
                Compacted "compacted",
                Ignored "ignored",
                RunFinished "run_finished",
            ]
        }
    };
}

/// [`Decision::type_name`] and [`Decision::TYPE_NAMES`] from the vocabulary.
macro_rules! decision_names {
    (decisions: [$($v:ident $name:literal,)*]) => {
        impl Decision {
            /// The entry type name of this decision (its serde tag).
            pub fn type_name(&self) -> &'static str {
                match self {
                    $(Decision::$v { .. } => $name,)*
                }
            }

            /// Every decision type name, for the log reader's dispatch.
            pub const TYPE_NAMES: [&'static str; [$($name),*].len()] = [$($name),*];
        }
    };
}
for_each_decision!(decision_names);

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: DEFAULT_MAX_STEPS,
            max_tokens: DEFAULT_MAX_TOKENS,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            compact_at_tokens: DEFAULT_COMPACT_AT_TOKENS,
        }
    }
}

/// The configuration a run is decided under; part of the prompt input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    pub limits: Limits,
    /// Names of the tools the model may call; any other name is rejected.
    pub tools: Vec<String>,
    /// The tools that change the workspace (they go through `permissions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mutating: Vec<String>,
    #[serde(default)]
    pub permissions: Permissions,
    /// Bytes per token of the estimate made for a step that reports no usage
    /// (SPEC.md §9.2); 0 = no estimate. Absent (0) in runs recorded before estimates
    /// existed, so those replay as they ran.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub estimate_bytes_per_token: u32,
    /// The tools' sandbox (SPEC.md §21.7); absent for executors without one (and in
    /// runs recorded before the sandbox existed, which replay as they ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxConfig>,
}

/// The sandbox a run's tools ran under, and the calls it makes the policy ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxConfig {
    /// The effective mode (`off` also when the kernel cannot sandbox).
    pub mode: SandboxMode,
    /// `--sandbox-network`: the sandbox lets the network through.
    #[serde(default, skip_serializing_if = "is_false")]
    pub network: bool,
    /// Tools that are asked whatever the policy, `yolo` included
    /// (`bash_outside_sandbox`); `readonly` still denies them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub always_ask: Vec<String>,
    /// No one can answer a question (a one-shot run without a terminal): an
    /// always-asked call is denied (`no_one_to_ask`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub unattended: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What the sandbox lets bash and the file tools do (SPEC.md §21.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes nowhere but a private temporary directory; `edit` and `write` refused.
    ReadOnly,
    /// Writes only beneath the workspace and a private temporary directory.
    WorkspaceWrite,
    /// No sandbox.
    Off,
}

impl SandboxMode {
    /// The name as the command line and the config file spell it.
    pub fn name(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::Off => "off",
        }
    }
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// The permission policy for mutating tools. Read-only tools never ask.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Permissions {
    /// Ask the user for each mutating call not covered by a grant.
    Ask,
    /// Deny every mutating call.
    Readonly,
    /// Allow every call.
    #[default]
    Yolo,
}

/// An answer to an approval question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Allow,
    Deny,
}

/// How far a user's "allow" reaches: `y` once, `a` this tool for the rest of the
/// session, `A` this exact call (tool and arguments) for the rest of the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalScope {
    Once,
    Tool,
    Call,
}

/// Who answered an approval automatically (a user's answer is an input instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovedBy {
    /// `--permissions yolo`.
    PolicyYolo,
    /// `--permissions readonly`.
    PolicyReadonly,
    /// An always-asked call (§18.2) with no one to ask: a one-shot run without a
    /// terminal.
    NoOneToAsk,
    /// An earlier `a`: this tool is allowed for the session.
    ToolGrant,
    /// An earlier `A`: this exact call is allowed for the session.
    CallGrant,
}

/// Everything the machine consumes. Each variant but `Stream` is recorded as its own
/// entry before it is applied; `Stream` events are recorded together in the step's
/// entry when the step settles (see SPEC.md "What a crash can lose").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A user message that starts a run.
    Prompt { text: String, config: RunConfig },
    /// A message to deliver at the next safe boundary of the running run.
    Steer { entry: EntryId, text: String },
    /// A message to deliver when the run would otherwise finish.
    FollowUp { entry: EntryId, text: String },
    /// Stop the running run: cancel what is in flight, settle it, finish.
    Interrupt,
    /// One normalized provider event of step `step`.
    Stream { step: StepNo, event: StreamEvent },
    /// The provider stream of `step` ended; `entry` is the step's entry.
    StepEnded {
        step: StepNo,
        entry: EntryId,
        outcome: StepOutcome,
    },
    /// A dispatched tool call settled. `spent`: tokens the call spent that count
    /// against the run's spend budget (a `task` call: its sub-agent's usage, SPEC.md
    /// §29.3); `None` for every other tool (and in logs recorded before delegation).
    ToolSettled {
        call_id: CallId,
        outcome: ToolOutcome,
        spent: Option<Usage>,
    },
    /// The compaction summary came back (`Err` when summarizing failed).
    CompactionDone {
        result: Result<String, ProviderError>,
    },
    /// The previous process ended without settling this run (crash or kill); settle
    /// whatever is unsettled and finish.
    Recover,
    /// The user asked to compact the context now (`/compact`), between runs.
    Compact { config: RunConfig },
    /// The user answered the approval question for a mutating call. `message` is
    /// what the user told the model with a denial ("do X instead"); it joins the
    /// denial result. With `allow` it is ignored.
    Approval {
        call_id: CallId,
        verdict: Verdict,
        scope: ApprovalScope,
        message: Option<String>,
    },
    /// The executor's check of a call waiting for approval, made before the user is
    /// asked, found that it cannot succeed (SPEC.md §18.3): `content` is the error
    /// the call would have returned. The call settles with it, not run and not
    /// asked about.
    CheckFailed { call_id: CallId, content: String },
    /// The user reverted file changes (`/undo`), between runs: `note` tells the model.
    Undo { note: String },
    /// The memory index the next run's requests carry (SPEC.md §28), recorded before
    /// that run's prompt: held for the run the next prompt starts, whose every
    /// `step_started` mixes `hash` (blake3 of the index text) into its context hash.
    MemoryIndex { hash: String },
}

/// A decision: an effect that changes the conversation, recorded as an entry and
/// compared, payload included, by replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Decision {
    /// Start model step `step` with a context of `messages` messages whose running
    /// blake3 hash is `context_hash`.
    StepStarted {
        step: StepNo,
        messages: u32,
        context_hash: String,
    },
    /// A queued steer or follow-up becomes a user message now.
    Delivered {
        origin: UserOrigin,
        queued: EntryId,
        text: String,
    },
    /// A validated tool call is dispatched to the executor.
    ToolDispatched { step: StepNo, call: ToolCall },
    /// A mutating call was allowed or denied without asking.
    Approval {
        call_id: CallId,
        tool: String,
        verdict: Verdict,
        by: ApprovedBy,
    },
    /// A tool call that is not run: its result is made here and handed to the model.
    SyntheticResult {
        call: ToolCall,
        reason: SyntheticReason,
        content: String,
    },
    /// Summarize the context up to (not including) `first_kept`.
    CompactionStarted {
        first_kept: EntryId,
        tokens_before: u64,
    },
    /// The compaction: `summary` replaces everything before `first_kept`.
    Compacted {
        summary: String,
        first_kept: EntryId,
        tokens_before: u64,
        tokens_after: u64,
    },
    /// The input just recorded has no effect, for `reason`.
    Ignored { reason: IgnoreReason },
    /// The run is over.
    RunFinished(RunEnd),
}

/// How a run ended: the payload of [`Decision::RunFinished`], one value that the
/// views, the checker and the property tests take whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunEnd {
    pub reason: StopReason,
    /// Steps taken in the run.
    pub steps: u32,
    /// The run's usage, summed over its steps.
    pub usage: Usage,
    /// Queued messages never delivered (the interface offers them back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undelivered: Vec<EntryId>,
}

/// Why a tool call got a synthetic result instead of running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyntheticReason {
    /// The arguments are not a JSON object.
    InvalidArguments,
    /// No tool of that name is available.
    UnknownTool,
    /// The step hit its output limit, so the call may be truncated.
    OutputLimit,
    /// The run was interrupted before the call could run.
    Interrupted,
    /// The process ended while the call was in flight; whether it ran is unknown.
    Lost,
    /// The permission policy or the user denied the call.
    Denied,
    /// Checked before the user was asked, the call could not succeed: its result is
    /// the error it would have returned (`Input::CheckFailed`).
    WouldFail,
    /// Another call of the same response has the same id.
    DuplicateId,
}

/// Why an input had no effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IgnoreReason {
    /// A steer, follow-up, interrupt or recover with no run in progress.
    NoRunInProgress,
    /// A prompt while a run is in progress (steer or follow-up instead).
    RunInProgress,
    /// A stream event or stream end for a step that is not streaming (late).
    LateStreamEvent,
    /// A tool result for a call that already settled or was never dispatched.
    LateToolResult,
    /// A compaction result with no compaction in flight.
    LateCompaction,
    /// A second interrupt while the first is settling.
    AlreadyInterrupting,
    /// An approval answer (or a failed check) for a call that is not waiting for one.
    LateApproval,
    /// A compaction request with no middle section to summarize.
    NothingToCompact,
}

/// Why a run finished. Each stop condition has its own reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without tool calls and nothing is pending.
    Completed,
    /// `max_steps` steps since the run started or the last delivered message.
    MaxSteps { limit: u32 },
    /// The spend budget is used up.
    MaxTokens { limit: u64, spent: u64 },
    /// The response hit its output limit (`finish: length`).
    OutputLimit,
    /// The provider withheld the response (`finish: content_filter`).
    ContentFilter,
    /// The user interrupted.
    Interrupted,
    /// The provider failed.
    ProviderError { error: ProviderError },
    /// The provider refused the request as too long for the model's context, and
    /// compacting did not help: there was nothing to compact or the summary was
    /// refused too (`compacted` false), or the retry after a compaction was refused
    /// again (`compacted` true). `error` is the last refusal.
    ContextOverflow {
        error: ProviderError,
        compacted: bool,
    },
    /// The previous process ended without finishing the run (recovered on open).
    Crashed,
}

impl StopReason {
    /// This reason's `kind`, as it is serialized (`max_steps`): the one table of the
    /// names that reports, journals and traces show.
    pub fn kind(&self) -> &'static str {
        match self {
            StopReason::Completed => "completed",
            StopReason::MaxSteps { .. } => "max_steps",
            StopReason::MaxTokens { .. } => "max_tokens",
            StopReason::OutputLimit => "output_limit",
            StopReason::ContentFilter => "content_filter",
            StopReason::Interrupted => "interrupted",
            StopReason::ProviderError { .. } => "provider_error",
            StopReason::ContextOverflow { .. } => "context_overflow",
            StopReason::Crashed => "crashed",
        }
    }
}

/// What the machine asks the runtime to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Append this decision to the log.
    Record(Decision),
    /// Call the model for `step` with [`Machine::context`](super::Machine::context).
    /// Follows its `Record(StepStarted)`; the runtime makes the log durable first.
    CallModel { step: StepNo },
    /// Execute this tool call. Follows its `Record(ToolDispatched)`; durable first.
    ExecuteTool { call: ToolCall },
    /// Ask the user whether this mutating call may run; the answer comes back as
    /// `Input::Approval`.
    AskApproval { call: ToolCall },
    /// Cancel the model call of `step`; its end comes back as `StepEnded`.
    CancelModel { step: StepNo },
    /// Cancel a running tool; its settlement comes back as `ToolSettled`.
    CancelTool { call_id: CallId },
    /// Summarize context messages `0..upto` (the middle); the result comes back as
    /// `CompactionDone`. Follows its `Record(CompactionStarted)`; durable first.
    Summarize { upto: usize },
    /// Cancel the summarization in flight.
    CancelSummarize,
    /// Not a decision: something the user interface shows.
    Notify(Notice),
}

/// A piece of a step's text or reasoning as it streams in, for the interface to show
/// (the step's entry holds the stream events themselves): a [`Notice`] of the machine
/// and a run event of the runtime alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delta {
    pub step: StepNo,
    pub text: String,
}

/// Things worth showing that are not decisions (the runtime turns them into events).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    TextDelta(Delta),
    ReasoningDelta(Delta),
    /// A queued message waits for its boundary.
    Queued {
        origin: UserOrigin,
        text: String,
    },
    /// The provider started the step's message over: what was shown of it so far
    /// is discarded (see [`StreamEvent::Restarted`](super::StreamEvent::Restarted)).
    Restarted {
        step: StepNo,
        reason: String,
    },
    /// The provider's request failed before any output and is tried again after
    /// `delay_ms` (see [`StreamEvent::Retrying`](super::StreamEvent::Retrying));
    /// `attempt` is the attempt about to be made.
    Retrying {
        step: StepNo,
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
}
