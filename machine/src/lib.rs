//! The agent state machine: pure and sans-IO. Inputs in, effects out; no clock, no
//! IO, no randomness. Same state + same input = same effects, always.
//!
//! Architecture Invariant: nothing in this module touches an async runtime, the file
//! system, the clock or a random source. Time and ids arrive inside inputs.

mod approval;
mod build_id;
mod context;
mod estimate;
mod memory;
mod messages;
mod overflow;
mod protocol;
pub mod script;
mod snapshot;
mod tools;
mod types;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

pub use approval::{Grants, TASK_TOOL, read_only_task};
pub use build_id::BUILD_INPUTS;
pub use context::{Context, ContextItem};
pub use messages::Messages;
pub use protocol::*;
pub use snapshot::MachineSnapshot;
pub use tools::not_an_object;
pub use types::*;

/// The phase of the machine. Per-phase data lives inside the variants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// No run has started since this machine was made.
    Idle,
    /// A model call is in flight.
    Streaming(Streaming),
    /// The step's dispatched tool calls are running.
    RunningTools(RunningTools),
    /// A compaction summary is being made.
    Compacting(Compacting),
    /// The last run finished for this reason; a prompt starts the next run.
    Finished(StopReason),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Streaming {
    pub step: StepNo,
    pub assembler: AssemblerState,
    pub interrupted: bool,
    /// This step retries one the provider refused as too long for the context, after
    /// a compaction (SPEC.md §9.16): a second refusal stops the run.
    pub retry: bool,
}

/// Wraps the [`Assembler`] so that `Phase` can derive `PartialEq`.
#[derive(Debug, Clone, Default)]
pub struct AssemblerState(pub Assembler);

impl PartialEq for AssemblerState {
    fn eq(&self, other: &Self) -> bool {
        self.0.assembled() == other.0.assembled()
    }
}
impl Eq for AssemblerState {}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningTools {
    pub step: StepNo,
    /// Dispatched calls not yet settled, in dispatch order.
    pub pending: Vec<ToolCall>,
    /// Mutating calls waiting for the user's approval, in call order.
    pub awaiting: Vec<ToolCall>,
    pub interrupted: bool,
}

impl RunningTools {
    fn empty() -> RunningTools {
        RunningTools {
            step: StepNo(0),
            pending: Vec::new(),
            awaiting: Vec::new(),
            interrupted: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compacting {
    pub first_kept: EntryId,
    pub upto: usize,
    pub tokens_before: u64,
    pub interrupted: bool,
    /// Asked for by the user (`Input::Compact`): the run ends when it is done.
    pub forced: bool,
    /// The provider refused the last step as too long for the context: the step is
    /// retried when the compaction is done (SPEC.md §9.16).
    pub retry: bool,
}

/// Counters of the run in progress (or of the last run, once finished).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunState {
    pub config: Option<RunConfig>,
    pub steps: u32,
    /// Steps since the run started or since the last delivered message.
    pub steps_in_window: u32,
    pub usage: Usage,
    /// The provider-reported input tokens of the last request.
    pub last_input_tokens: u64,
    pub compactions: u32,
    /// Text of the last assistant message of the run.
    pub final_text: String,
    /// The hash of the memory index this run's requests carry (SPEC.md §28): mixed
    /// into the context hash of each of its steps. Absent without memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// What the run's `task` calls spent (their sub-agents' usage, SPEC.md §29.3):
    /// counted against the spend budget with `usage`, reported apart from it.
    #[serde(default)]
    pub delegated: Usage,
}

/// The agent state machine. See SPEC.md "Phase × input".
#[derive(Debug, Clone)]
pub struct Machine {
    phase: Phase,
    context: Context,
    run: RunState,
    steers: VecDeque<(EntryId, String)>,
    follow_ups: VecDeque<(EntryId, String)>,
    grants: Grants,
    /// The memory index recorded for the run the next prompt starts (its hash).
    memory: Option<String>,
}

impl Default for Machine {
    fn default() -> Self {
        Machine::new()
    }
}

impl Machine {
    pub fn new() -> Machine {
        Machine {
            phase: Phase::Idle,
            context: Context::default(),
            run: RunState::default(),
            steers: VecDeque::new(),
            follow_ups: VecDeque::new(),
            grants: Grants::default(),
            memory: None,
        }
    }

    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    pub fn context(&self) -> &Context {
        &self.context
    }

    pub fn run(&self) -> &RunState {
        &self.run
    }

    /// The limits of the current (or last) run.
    pub fn limits(&self) -> Limits {
        self.run
            .config
            .as_ref()
            .map(|c| c.limits)
            .unwrap_or_default()
    }

    /// What the user allowed for the session with `a` and `A`.
    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// True while a run is in progress (streaming, running tools or compacting).
    pub fn is_running(&self) -> bool {
        match self.phase {
            Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => true,
            Phase::Idle | Phase::Finished(_) => false,
        }
    }

    /// The queued steers and follow-ups, each in arrival order.
    pub fn pending(&self) -> Pending {
        Pending {
            steers: self.steers.iter().map(|(_, t)| t.clone()).collect(),
            follow_ups: self.follow_ups.iter().map(|(_, t)| t.clone()).collect(),
        }
    }

    /// The assistant message assembled so far in the step that is streaming.
    pub fn streaming(&self) -> Option<&Assembled> {
        match &self.phase {
            Phase::Streaming(s) => Some(s.assembler.0.assembled()),
            Phase::Idle | Phase::RunningTools(_) | Phase::Compacting(_) | Phase::Finished(_) => {
                None
            }
        }
    }

    /// Consumes one input and returns the effects, decisions first where a decision
    /// starts an external effect.
    #[must_use = "effects must be carried out and decisions recorded"]
    pub fn handle(&mut self, input: Input) -> Vec<Effect> {
        let mut out = Vec::new();
        match input {
            Input::Prompt { text, config } => self.on_prompt(text, config, &mut out),
            Input::Steer { entry, text } => self.on_queue(UserOrigin::Steer, entry, text, &mut out),
            Input::FollowUp { entry, text } => {
                self.on_queue(UserOrigin::FollowUp, entry, text, &mut out)
            }
            Input::Interrupt => self.on_interrupt(&mut out),
            Input::Stream { step, event } => self.on_stream(step, event, &mut out),
            Input::StepEnded {
                step,
                entry,
                outcome,
            } => self.on_step_ended(step, entry, outcome, &mut out),
            Input::ToolSettled {
                call_id,
                outcome,
                spent,
            } => self.on_tool_settled(call_id, outcome, spent, &mut out),
            Input::CompactionDone { result } => self.on_compaction_done(result, &mut out),
            Input::Recover => self.on_recover(&mut out),
            Input::Compact { config } => self.on_compact(config, &mut out),
            Input::Approval {
                call_id,
                verdict,
                scope,
                message,
            } => self.on_approval(call_id, verdict, scope, message, &mut out),
            Input::CheckFailed { call_id, content } => {
                self.on_check_failed(call_id, content, &mut out)
            }
            Input::Undo { note } => self.on_undo(note, &mut out),
            Input::MemoryIndex { hash } => self.on_memory_index(hash, &mut out),
        }
        out
    }

    /// `/undo` between runs: its note joins the context, so the next request on this
    /// branch tells the model (SPEC.md §17.3); no decision.
    fn on_undo(&mut self, note: String, out: &mut Vec<Effect>) {
        match self.phase {
            Phase::Idle | Phase::Finished(_) => self.context.push(
                None,
                Message::User {
                    origin: UserOrigin::Undo,
                    text: note,
                },
            ),
            Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => {
                ignore(IgnoreReason::RunInProgress, out)
            }
        }
    }

    fn on_prompt(&mut self, text: String, config: RunConfig, out: &mut Vec<Effect>) {
        match self.phase {
            Phase::Idle | Phase::Finished(_) => {
                self.run = RunState {
                    config: Some(config),
                    memory: self.memory.take(),
                    ..RunState::default()
                };
                self.context.push(
                    None,
                    Message::User {
                        origin: UserOrigin::Prompt,
                        text,
                    },
                );
                self.start_step(out);
            }
            Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => {
                ignore(IgnoreReason::RunInProgress, out)
            }
        }
    }

    fn on_queue(
        &mut self,
        origin: UserOrigin,
        entry: EntryId,
        text: String,
        out: &mut Vec<Effect>,
    ) {
        match self.phase {
            Phase::Idle | Phase::Finished(_) => ignore(IgnoreReason::NoRunInProgress, out),
            Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => {
                out.push(Effect::Notify(Notice::Queued {
                    origin,
                    text: text.clone(),
                }));
                match origin {
                    UserOrigin::Steer => self.steers.push_back((entry, text)),
                    UserOrigin::FollowUp | UserOrigin::Prompt | UserOrigin::Undo => {
                        self.follow_ups.push_back((entry, text))
                    }
                }
            }
        }
    }

    fn on_interrupt(&mut self, out: &mut Vec<Effect>) {
        match &mut self.phase {
            Phase::Idle | Phase::Finished(_) => ignore(IgnoreReason::NoRunInProgress, out),
            Phase::Streaming(s) if s.interrupted => ignore(IgnoreReason::AlreadyInterrupting, out),
            Phase::Streaming(s) => {
                s.interrupted = true;
                out.push(Effect::CancelModel { step: s.step });
            }
            Phase::RunningTools(t) if t.interrupted => {
                ignore(IgnoreReason::AlreadyInterrupting, out)
            }
            Phase::RunningTools(t) => {
                let mut tools = std::mem::replace(t, RunningTools::empty());
                tools.interrupted = true;
                for call in &tools.pending {
                    out.push(Effect::CancelTool {
                        call_id: call.id.clone(),
                    });
                }
                let awaiting = std::mem::take(&mut tools.awaiting);
                self.synthesize_all(&awaiting, SyntheticReason::Interrupted, out);
                self.tools_progress(tools, out);
            }
            Phase::Compacting(c) if c.interrupted => ignore(IgnoreReason::AlreadyInterrupting, out),
            Phase::Compacting(c) => {
                c.interrupted = true;
                out.push(Effect::CancelSummarize);
            }
        }
    }

    fn on_stream(&mut self, step: StepNo, event: StreamEvent, out: &mut Vec<Effect>) {
        match &mut self.phase {
            Phase::Streaming(s) if s.step == step => {
                match &event {
                    StreamEvent::TextDelta { text } => {
                        out.push(Effect::Notify(Notice::TextDelta(Delta {
                            step,
                            text: text.clone(),
                        })))
                    }
                    StreamEvent::ReasoningDelta { text } => {
                        out.push(Effect::Notify(Notice::ReasoningDelta(Delta {
                            step,
                            text: text.clone(),
                        })))
                    }
                    StreamEvent::Restarted { reason } => {
                        out.push(Effect::Notify(Notice::Restarted {
                            step,
                            reason: reason.clone(),
                        }))
                    }
                    StreamEvent::Retrying {
                        attempt,
                        reason,
                        delay_ms,
                    } => out.push(Effect::Notify(Notice::Retrying {
                        step,
                        attempt: *attempt,
                        delay_ms: *delay_ms,
                        reason: reason.clone(),
                    })),
                    StreamEvent::ReasoningSignature { .. }
                    | StreamEvent::ReasoningBlockStart {}
                    | StreamEvent::ReasoningRedacted { .. }
                    | StreamEvent::OutputLimitExceeded { .. }
                    | StreamEvent::ToolCallStart { .. }
                    | StreamEvent::ToolCallDelta { .. }
                    | StreamEvent::ToolCallEnd { .. }
                    | StreamEvent::Usage { .. }
                    | StreamEvent::Finish { .. }
                    | StreamEvent::Skipped { .. } => {}
                }
                s.assembler.0.push(&event);
            }
            Phase::Streaming(_)
            | Phase::Idle
            | Phase::RunningTools(_)
            | Phase::Compacting(_)
            | Phase::Finished(_) => ignore(IgnoreReason::LateStreamEvent, out),
        }
    }

    fn on_step_ended(
        &mut self,
        step: StepNo,
        entry: EntryId,
        outcome: StepOutcome,
        out: &mut Vec<Effect>,
    ) {
        let streaming = match &mut self.phase {
            Phase::Streaming(s) if s.step == step => std::mem::take(&mut s.assembler),
            Phase::Streaming(_)
            | Phase::Idle
            | Phase::RunningTools(_)
            | Phase::Compacting(_)
            | Phase::Finished(_) => return ignore(IgnoreReason::LateStreamEvent, out),
        };
        let interrupted = matches!(&self.phase, Phase::Streaming(s) if s.interrupted);
        let retried = matches!(&self.phase, Phase::Streaming(s) if s.retry);
        let mut a = streaming.0.finish();
        a.usage = self.step_usage(&a, &outcome);
        self.run.usage.add(&a.usage);
        // The context size the provider saw: cached prompt tokens count too.
        self.run.last_input_tokens = a.usage.context_tokens();

        let error = match outcome {
            // A stream that ended normally but says it failed is a provider error.
            StepOutcome::Completed if a.finish == Some(FinishReason::Error) => {
                Some(StopReason::ProviderError {
                    error: ProviderError {
                        kind: ProviderErrorKind::Api,
                        message: "the provider ended the response with finish reason `error`"
                            .into(),
                    },
                })
            }
            StepOutcome::Completed => None,
            StepOutcome::Failed { error } => Some(StopReason::ProviderError { error }),
            StepOutcome::Aborted => Some(StopReason::Interrupted),
        };
        if let Some(reason) = error {
            // A step that did not complete keeps its prose, never its tool calls: they
            // may be partial and would have no results.
            a.tool_calls.clear();
            self.push_assistant(entry, a);
            let reason = if interrupted {
                StopReason::Interrupted
            } else {
                reason
            };
            if let StopReason::ProviderError { error } = reason {
                if error.kind == ProviderErrorKind::ContextOverflow {
                    return self.on_overflow(error, retried, out);
                }
                return self.finish(StopReason::ProviderError { error }, out);
            }
            return self.finish(reason, out);
        }

        let calls = a.tool_calls.clone();
        let finish = a.finish;
        self.push_assistant(entry, a);
        if interrupted {
            self.synthesize_all(&calls, SyntheticReason::Interrupted, out);
            return self.finish(StopReason::Interrupted, out);
        }
        if finish == Some(FinishReason::Length) {
            self.synthesize_all(&calls, SyntheticReason::OutputLimit, out);
            return self.finish(StopReason::OutputLimit, out);
        }
        if calls.is_empty() {
            if finish == Some(FinishReason::ContentFilter) {
                return self.finish(StopReason::ContentFilter, out);
            }
            return self.would_finish(out);
        }
        let mut tools = RunningTools {
            step,
            pending: Vec::new(),
            awaiting: Vec::new(),
            interrupted: false,
        };
        let mut seen = std::collections::BTreeSet::new();
        for call in calls {
            if !seen.insert(call.id.clone()) {
                let content = format!(
                    "error: another call of this response already has the id `{}`; this one was not run",
                    call.id
                );
                self.synthesize(call, SyntheticReason::DuplicateId, content, out);
                continue;
            }
            if let Err((reason, content)) = self.validate(&call) {
                self.synthesize(call, reason, content, out);
                continue;
            }
            self.route(&mut tools, call, out);
        }
        self.tools_progress(tools, out);
    }

    fn on_compaction_done(&mut self, result: Result<String, ProviderError>, out: &mut Vec<Effect>) {
        let c = match &self.phase {
            Phase::Compacting(c) => c.clone(),
            Phase::Idle | Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Finished(_) => {
                return ignore(IgnoreReason::LateCompaction, out);
            }
        };
        if c.interrupted {
            return self.finish(StopReason::Interrupted, out);
        }
        let result = match result {
            Err(error) if c.forced => return self.finish(StopReason::ProviderError { error }, out),
            // The step cannot be retried over a context that is still too long.
            Err(error) if c.retry && error.kind == ProviderErrorKind::ContextOverflow => {
                return self.finish(
                    StopReason::ContextOverflow {
                        error,
                        compacted: false,
                    },
                    out,
                );
            }
            Err(error) if c.retry => return self.finish(StopReason::ProviderError { error }, out),
            other => other,
        };
        if let Ok(summary) = result {
            self.context.compact(c.upto, summary.clone());
            self.run.compactions += 1;
            out.push(Effect::Record(Decision::Compacted {
                summary,
                first_kept: c.first_kept,
                tokens_before: c.tokens_before,
                tokens_after: self.context.estimate_tokens(),
            }));
        }
        if c.forced {
            return self.finish(StopReason::Completed, out);
        }
        if c.retry {
            return self.retry_step(out);
        }
        // A failed summary is recorded in its input entry; the run goes on uncompacted.
        self.continue_run(out);
    }

    /// `/compact`: between runs, summarize the middle of the context now.
    fn on_compact(&mut self, config: RunConfig, out: &mut Vec<Effect>) {
        match self.phase {
            Phase::Idle | Phase::Finished(_) => {}
            Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => {
                return ignore(IgnoreReason::RunInProgress, out);
            }
        }
        let Some((upto, first_kept)) = self.middle_section() else {
            return ignore(IgnoreReason::NothingToCompact, out);
        };
        self.run = RunState {
            config: Some(config),
            ..RunState::default()
        };
        self.start_compaction(
            upto,
            first_kept,
            self.context.estimate_tokens(),
            true,
            false,
            out,
        );
    }

    fn start_compaction(
        &mut self,
        upto: usize,
        first_kept: EntryId,
        tokens_before: u64,
        forced: bool,
        retry: bool,
        out: &mut Vec<Effect>,
    ) {
        out.push(Effect::Record(Decision::CompactionStarted {
            first_kept,
            tokens_before,
        }));
        out.push(Effect::Summarize { upto });
        self.phase = Phase::Compacting(Compacting {
            first_kept,
            upto,
            tokens_before,
            interrupted: false,
            forced,
            retry,
        });
    }

    fn on_recover(&mut self, out: &mut Vec<Effect>) {
        match &self.phase {
            Phase::Idle | Phase::Finished(_) => ignore(IgnoreReason::NoRunInProgress, out),
            Phase::Streaming(_) | Phase::Compacting(_) => self.finish(StopReason::Crashed, out),
            Phase::RunningTools(t) => {
                let (running, waiting) = (t.pending.clone(), t.awaiting.clone());
                self.synthesize_all(&running, SyntheticReason::Lost, out);
                self.synthesize_all(&waiting, SyntheticReason::Interrupted, out);
                self.finish(StopReason::Crashed, out);
            }
        }
    }

    /// The boundary after a tool-requesting step's tools have all settled.
    fn after_tools(&mut self, out: &mut Vec<Effect>) {
        let limits = self.limits();
        // A run about to stop for a limit does not compact first.
        if let Some(reason) = self.over_budget(limits) {
            return self.finish(reason, out);
        }
        if self.steers.is_empty() && self.run.steps_in_window >= limits.max_steps {
            return self.finish(
                StopReason::MaxSteps {
                    limit: limits.max_steps,
                },
                out,
            );
        }
        if limits.compact_at_tokens > 0
            && self.run.last_input_tokens >= limits.compact_at_tokens
            && let Some((upto, first_kept)) = self.middle_section()
        {
            let tokens_before = self.run.last_input_tokens;
            return self.start_compaction(upto, first_kept, tokens_before, false, false, out);
        }
        self.continue_run(out);
    }

    /// The tail kept by a compaction starts at the last assistant message (the step
    /// that just requested tools); the middle is everything before it and must hold
    /// at least one assistant message to be worth summarizing.
    fn middle_section(&self) -> Option<(usize, EntryId)> {
        let messages = self.context.messages();
        let tail = messages
            .iter()
            .rposition(|m| matches!(m, Message::Assistant { .. }))?;
        let first_kept = self.context.source(tail)?;
        let has_middle = messages
            .iter()
            .take(tail)
            .any(|m| matches!(m, Message::Assistant { .. }));
        has_middle.then_some((tail, first_kept))
    }

    /// Between steps of a run that goes on: budget, steers, step window, next step.
    fn continue_run(&mut self, out: &mut Vec<Effect>) {
        let limits = self.limits();
        if let Some(reason) = self.over_budget(limits) {
            return self.finish(reason, out);
        }
        if !self.steers.is_empty() {
            self.deliver_steers(out);
        } else if self.run.steps_in_window >= limits.max_steps {
            return self.finish(
                StopReason::MaxSteps {
                    limit: limits.max_steps,
                },
                out,
            );
        }
        self.start_step(out);
    }

    /// The model answered without tool calls: deliver what is pending, or finish.
    fn would_finish(&mut self, out: &mut Vec<Effect>) {
        if self.steers.is_empty() && self.follow_ups.is_empty() {
            return self.finish(StopReason::Completed, out);
        }
        if let Some(reason) = self.over_budget(self.limits()) {
            return self.finish(reason, out);
        }
        if !self.steers.is_empty() {
            self.deliver_steers(out);
        } else if let Some((entry, text)) = self.follow_ups.pop_front() {
            self.deliver(UserOrigin::FollowUp, entry, text, out);
        }
        self.start_step(out);
    }

    /// Tokens charged against the run's spend budget so far: its own steps' and
    /// those its `task` calls' sub-agents spent.
    pub fn spent(&self) -> u64 {
        self.run
            .usage
            .spend()
            .saturating_add(self.run.delegated.spend())
    }

    fn over_budget(&self, limits: Limits) -> Option<StopReason> {
        let spent = self.spent();
        (limits.max_tokens > 0 && spent >= limits.max_tokens).then_some(StopReason::MaxTokens {
            limit: limits.max_tokens,
            spent,
        })
    }

    fn deliver_steers(&mut self, out: &mut Vec<Effect>) {
        while let Some((entry, text)) = self.steers.pop_front() {
            self.deliver(UserOrigin::Steer, entry, text, out);
        }
    }

    fn deliver(
        &mut self,
        origin: UserOrigin,
        queued: EntryId,
        text: String,
        out: &mut Vec<Effect>,
    ) {
        self.run.steps_in_window = 0;
        self.context.push(
            None,
            Message::User {
                origin,
                text: text.clone(),
            },
        );
        out.push(Effect::Record(Decision::Delivered {
            origin,
            queued,
            text,
        }));
    }

    fn start_step(&mut self, out: &mut Vec<Effect>) {
        self.run.steps += 1;
        self.run.steps_in_window += 1;
        let step = StepNo(self.run.steps);
        out.push(Effect::Record(Decision::StepStarted {
            step,
            messages: u32::try_from(self.context.len()).unwrap_or(u32::MAX),
            context_hash: match &self.run.memory {
                None => self.context.hash_hex(),
                Some(index) => self.context.hash_with(index),
            },
        }));
        out.push(Effect::CallModel { step });
        self.phase = Phase::Streaming(Streaming {
            step,
            assembler: AssemblerState::default(),
            interrupted: false,
            retry: false,
        });
    }

    fn finish(&mut self, reason: StopReason, out: &mut Vec<Effect>) {
        let undelivered = self
            .steers
            .drain(..)
            .chain(self.follow_ups.drain(..))
            .map(|(entry, _)| entry)
            .collect();
        out.push(Effect::Record(Decision::RunFinished(RunEnd {
            reason: reason.clone(),
            steps: self.run.steps,
            usage: self.run.usage,
            undelivered,
        })));
        self.phase = Phase::Finished(reason);
    }

    /// Adds a step's assistant message to the context, unless it says nothing.
    fn push_assistant(&mut self, entry: EntryId, a: Assembled) {
        if a.text.is_empty()
            && a.reasoning.is_empty()
            && a.reasoning_blocks.is_empty()
            && a.tool_calls.is_empty()
        {
            return;
        }
        self.run.final_text.clone_from(&a.text);
        self.context.push(
            Some(entry),
            Message::Assistant {
                text: a.text,
                reasoning: a.reasoning,
                reasoning_signature: a.reasoning_signature,
                reasoning_blocks: a.reasoning_blocks,
                tool_calls: a.tool_calls,
            },
        );
    }
}

/// The queued messages, each queue in arrival order.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pending {
    pub steers: Vec<String>,
    pub follow_ups: Vec<String>,
}

fn ignore(reason: IgnoreReason, out: &mut Vec<Effect>) {
    out.push(Effect::Record(Decision::Ignored { reason }));
}
