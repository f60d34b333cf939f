//! The vocabulary shared by the machine, the log and the runtime: ids, messages,
//! tool calls, usage and the normalized provider stream events.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Identifies one entry (one JSONL line) within a session. Ids are a counter assigned
/// by the log writer: deterministic, unique within a session, kept when a path is
/// copied into a fork.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct EntryId(pub u64);

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::str::FromStr for EntryId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.trim_start_matches('#').parse().map(EntryId)
    }
}

/// A step's number within its run, starting at 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StepNo(pub u32);

impl fmt::Display for StepNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The provider's id of one tool call (`call_…`, `toolu_…`, or the faux provider's
/// `call_<line>_<n>`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallId(pub String);

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One tool call as the model requested it. `arguments` is the JSON text exactly as
/// the model produced it (as OpenAI's wire format carries it): the machine checks that
/// it is a JSON object, the tool checks it against its schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: CallId,
    pub name: String,
    pub arguments: String,
}

/// Token counts reported by the provider for one step (or summed over a run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// The counts (of a sum: some of them) are xcsh's estimate, not the provider's
    /// report: the step reported no usage (SPEC.md §9.2). Omitted when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub estimated: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Usage {
    /// Tokens charged against the spend budget: everything sent and received.
    /// Saturating, as every sum here: a provider or a log may report any number.
    pub fn spend(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }

    /// The input the provider saw, cached prompt tokens included.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }

    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
        self.estimated |= other.estimated;
    }
}

/// Why the model stopped producing output, normalized across wire protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    Error,
}

/// A normalized provider stream event. Every adapter maps its wire protocol to these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StreamEvent {
    TextDelta {
        text: String,
    },
    ReasoningDelta {
        text: String,
    },
    /// Opaque provider data that must accompany the reasoning when it is sent back
    /// (Anthropic's thinking `signature`, OpenAI Responses' `encrypted_content`).
    ReasoningSignature {
        signature: String,
    },
    /// A tool call begins; `index` orders the calls of one step.
    ToolCallStart {
        index: u32,
        id: CallId,
        name: String,
    },
    ToolCallDelta {
        index: u32,
        arguments: String,
    },
    /// The call's arguments are complete.
    ToolCallEnd {
        index: u32,
    },
    /// The step's usage so far; the last one of a step is the step's usage.
    Usage {
        usage: Usage,
    },
    Finish {
        reason: FinishReason,
    },
    /// The request failed before any output and is tried again after `delay_ms`.
    Retrying {
        attempt: u32,
        reason: String,
        delay_ms: u64,
    },
    /// A provider event the adapter does not use (server-side tools, pings, images),
    /// passed over and counted so that nothing disappears silently.
    Skipped {
        event_type: String,
    },
    /// The provider started the message over inside the same stream (`reason` says
    /// how it showed): everything assembled so far in the step is discarded, and the
    /// step's message is the restarted one.
    Restarted {
        reason: String,
    },
    /// The reasoning events that follow form a block of their own, with its own
    /// signature (sent before each reasoning block of a message but the first:
    /// Anthropic's several `thinking` blocks).
    ReasoningBlockStart {},
    /// A reasoning block the provider keeps encrypted (Anthropic's
    /// `redacted_thinking`): `data` is sent back unchanged.
    ReasoningRedacted {
        data: String,
    },
    /// The client stopped reading the stream: the step's output (text, reasoning
    /// and tool-call arguments, `output_bytes` of it so far) clearly exceeded the
    /// request's `max_output_tokens`. A `finish` `length` follows.
    OutputLimitExceeded {
        max_output_tokens: u32,
        output_bytes: u64,
    },
}

impl StreamEvent {
    /// Every event's `kind` (its serde tag), in declaration order: the one list the
    /// log's decoder, `xcsh events --type` and the views use.
    pub const KINDS: [&'static str; 14] = [
        "text_delta",
        "reasoning_delta",
        "reasoning_signature",
        "tool_call_start",
        "tool_call_delta",
        "tool_call_end",
        "usage",
        "finish",
        "retrying",
        "skipped",
        "restarted",
        "reasoning_block_start",
        "reasoning_redacted",
        "output_limit_exceeded",
    ];

    /// This event's `kind`, as it is serialized (one of [`StreamEvent::KINDS`]).
    pub fn kind(&self) -> &'static str {
        let i = match self {
            StreamEvent::TextDelta { .. } => 0,
            StreamEvent::ReasoningDelta { .. } => 1,
            StreamEvent::ReasoningSignature { .. } => 2,
            StreamEvent::ToolCallStart { .. } => 3,
            StreamEvent::ToolCallDelta { .. } => 4,
            StreamEvent::ToolCallEnd { .. } => 5,
            StreamEvent::Usage { .. } => 6,
            StreamEvent::Finish { .. } => 7,
            StreamEvent::Retrying { .. } => 8,
            StreamEvent::Skipped { .. } => 9,
            StreamEvent::Restarted { .. } => 10,
            StreamEvent::ReasoningBlockStart {} => 11,
            StreamEvent::ReasoningRedacted { .. } => 12,
            StreamEvent::OutputLimitExceeded { .. } => 13,
        };
        Self::KINDS[i]
    }
}

/// How a provider step ended, as the runtime observed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StepOutcome {
    /// The stream ended normally.
    Completed,
    /// The provider failed (HTTP error, in-band error event, disconnect, idle timeout).
    Failed { error: ProviderError },
    /// The runtime cancelled the stream (interrupt).
    Aborted,
}

/// A provider failure, typed enough to decide and readable enough to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderError {
    pub kind: ProviderErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderErrorKind {
    /// The HTTP request failed before any output (after retries).
    Http,
    /// The provider reported an error in the stream or in a JSON error body.
    Api,
    /// The stream broke off before it finished.
    Disconnected,
    /// No bytes arrived within the idle timeout.
    IdleTimeout,
    /// The stream could not be parsed.
    Malformed,
    /// A scripted (faux) provider ran out of steps.
    ScriptExhausted,
    /// The provider refused the request as too long for the model's context
    /// (OpenAI `context_length_exceeded`, Anthropic `prompt is too long`, llama.cpp
    /// `exceed_context_size_error`): the machine compacts and retries (SPEC.md §9.16).
    ContextOverflow,
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

/// How a tool execution settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Ok,
    Error,
    /// Stopped by an interrupt; side effects it already had were not undone.
    Cancelled,
}

/// What a tool execution returned: the text handed back to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutcome {
    pub status: ToolStatus,
    pub content: String,
}

/// Where a user message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserOrigin {
    Prompt,
    Steer,
    FollowUp,
    /// Not typed by the user: xcsh's note that the user reverted file changes with
    /// `/undo` (SPEC.md §17.3), told to the model on the branch where it happened.
    Undo,
}

/// One message of the model context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        origin: UserOrigin,
        text: String,
    },
    Assistant {
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        reasoning: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        reasoning_signature: String,
        /// Set when the reasoning came in several blocks (see [`Assembled`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning_blocks: Vec<ReasoningBlock>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: CallId,
        name: String,
        is_error: bool,
        content: String,
    },
    /// A compaction summary standing in for the messages it replaced.
    Summary {
        text: String,
    },
}

/// One reasoning block of a message, as the provider produced it: its text and
/// signature, or, for a redacted block, the provider's encrypted `redacted` data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningBlock {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub signature: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub redacted: String,
}

impl ReasoningBlock {
    fn is_empty(&self) -> bool {
        self.text.is_empty() && self.signature.is_empty() && self.redacted.is_empty()
    }
}

/// The assistant message assembled from one step's stream events.
///
/// Reasoning in one block (every step of logs older than `reasoning_blocks`) is
/// `reasoning` and `reasoning_signature`. Reasoning in several blocks (a
/// [`StreamEvent::ReasoningBlockStart`] or [`StreamEvent::ReasoningRedacted`]
/// arrived) is `reasoning_blocks`, each with its own text and signature, in order;
/// `reasoning` is then their texts joined with a blank line (what is shown) and
/// `reasoning_signature` is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assembled {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning_signature: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning_blocks: Vec<ReasoningBlock>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish: Option<FinishReason>,
    /// Count of provider events passed over (see [`StreamEvent::Skipped`]).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub skipped: u32,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// Folds a step's stream events into an [`Assembled`] message. Pure and total:
/// a delta for an index that never started creates the call with an empty name,
/// which validation then rejects, rather than being dropped.
#[derive(Debug, Clone, Default)]
pub struct Assembler {
    assembled: Assembled,
    /// The provider's tool-call index of each entry of `assembled.tool_calls`, sorted.
    indices: Vec<u32>,
}

impl Assembler {
    pub fn push(&mut self, event: &StreamEvent) {
        let a = &mut self.assembled;
        match event {
            StreamEvent::TextDelta { text } => a.text.push_str(text),
            StreamEvent::ReasoningDelta { text } => match a.reasoning_blocks.last_mut() {
                None => a.reasoning.push_str(text),
                Some(block) => {
                    if block.text.is_empty() && !a.reasoning.is_empty() && !text.is_empty() {
                        a.reasoning.push_str("\n\n");
                    }
                    a.reasoning.push_str(text);
                    block.text.push_str(text);
                }
            },
            StreamEvent::ReasoningSignature { signature } => match a.reasoning_blocks.last_mut() {
                None => a.reasoning_signature.push_str(signature),
                Some(block) => block.signature.push_str(signature),
            },
            StreamEvent::ReasoningBlockStart {} => {
                self.reasoning_blocks().push(ReasoningBlock::default());
            }
            StreamEvent::ReasoningRedacted { data } => {
                let blocks = self.reasoning_blocks();
                match blocks.last_mut() {
                    Some(block) if block.is_empty() || !block.redacted.is_empty() => {
                        block.redacted.push_str(data)
                    }
                    Some(_) | None => blocks.push(ReasoningBlock {
                        redacted: data.clone(),
                        ..ReasoningBlock::default()
                    }),
                }
            }
            StreamEvent::ToolCallStart { index, id, name } => {
                let call = self.call_mut(*index);
                call.id = id.clone();
                call.name = name.clone();
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                self.call_mut(*index).arguments.push_str(arguments);
            }
            StreamEvent::ToolCallEnd { .. } => {}
            StreamEvent::Usage { usage } => a.usage = *usage,
            StreamEvent::Finish { reason } => a.finish = Some(*reason),
            StreamEvent::Skipped { .. } => a.skipped += 1,
            StreamEvent::Retrying { .. } => {}
            StreamEvent::Restarted { .. } => self.restart(),
            StreamEvent::OutputLimitExceeded { .. } => {}
        }
    }

    /// The reasoning blocks, the reasoning so far becoming the first of them.
    fn reasoning_blocks(&mut self) -> &mut Vec<ReasoningBlock> {
        let a = &mut self.assembled;
        if a.reasoning_blocks.is_empty()
            && !(a.reasoning.is_empty() && a.reasoning_signature.is_empty())
        {
            a.reasoning_blocks.push(ReasoningBlock {
                text: a.reasoning.clone(),
                signature: std::mem::take(&mut a.reasoning_signature),
                redacted: String::new(),
            });
        }
        &mut a.reasoning_blocks
    }

    /// Discards the message assembled so far; the usage (the last report wins) and
    /// the count of skipped events stay.
    fn restart(&mut self) {
        let a = &mut self.assembled;
        *a = Assembled {
            usage: a.usage,
            skipped: a.skipped,
            ..Assembled::default()
        };
        self.indices.clear();
    }

    pub fn assembled(&self) -> &Assembled {
        &self.assembled
    }

    pub fn finish(self) -> Assembled {
        self.assembled
    }

    fn call_mut(&mut self, index: u32) -> &mut ToolCall {
        let pos = match self.indices.binary_search(&index) {
            Ok(pos) => pos,
            Err(pos) => {
                self.assembled.tool_calls.insert(
                    pos,
                    ToolCall {
                        id: CallId(format!("index-{index}")),
                        name: String::new(),
                        arguments: String::new(),
                    },
                );
                self.indices.insert(pos, index);
                pos
            }
        };
        &mut self.assembled.tool_calls[pos]
    }
}
