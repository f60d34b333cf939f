//! [`Journal`]: one run's machine and the rules of the order in which its log is
//! written (see the module documentation of [`crate`]).

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

mod memory;
mod questions;

use memory::MemoryStage;

use super::{Append, RunEvent, RunResult};
use xcsh_log::memory::{MemoryIndexRecord, ProposedNote, SnapshotRecord};
use xcsh_log::plan::{PLAN_TOOL, Plan};
use xcsh_log::{Body, LogError, Record, RecordedInput, StepRecord, TimedEvent, ToolResultRecord};
use xcsh_machine::{
    ApprovalScope, CallId, Decision, Effect, EntryId, Input, Machine, Message, Notice, Phase,
    ProviderError, RunConfig, RunEnd, StepNo, StepOutcome, StopReason, StreamEvent, ToolCall,
    ToolStatus, Usage, Verdict,
};

/// What the owner observed.
#[derive(Debug, Clone, PartialEq)]
pub enum Happening {
    /// The run's task: a user message.
    Prompt {
        text: String,
        config: RunConfig,
    },
    /// The run's task: compact the context now.
    Compact {
        config: RunConfig,
    },
    Steer(String),
    FollowUp(String),
    Interrupt,
    /// An event of `step`'s stream (secrets already redacted by the owner).
    Stream {
        step: StepNo,
        event: StreamEvent,
    },
    /// `step`'s stream ended; `Err` is an error, or the end of a cancelled call.
    StreamEnded {
        step: StepNo,
        result: Result<(), ProviderError>,
    },
    /// A dispatched tool call ended (not yet settled: see [`Journal`]).
    ToolEnded(ToolEnd),
    /// The user's answer to the approval question about `call_id`.
    Answered {
        call_id: CallId,
        verdict: Verdict,
        scope: ApprovalScope,
        /// With a denial, what the user tells the model (not blank).
        message: Option<String>,
    },
    /// The check of `call_id` before its question ([`Action::Check`]): `Some` with
    /// the error the call would return when it cannot succeed.
    Checked {
        call_id: CallId,
        failure: Option<String>,
    },
    /// The summary of a compaction came back.
    SummaryEnded(Result<String, ProviderError>),
    /// Everything appended so far is durable.
    Synced,
    /// An input record that the run loop does not make from what happens (a
    /// recovery, an undo, a branch, or a test's straggler): appended as it is, then
    /// its inputs applied.
    Recorded(Record),
    /// The memory index of the turn about to start (SPEC.md §28), before its prompt.
    MemoryIndex(MemoryIndexRecord),
    /// The memory extraction call ended: its events (secrets redacted) with their
    /// timing since it started, and `Err` for an error or a cancelled call's end.
    ExtractionEnded {
        events: Vec<TimedEvent>,
        result: Result<(), ProviderError>,
        /// The answer's whole text with every known secret replaced (redacted as
        /// one text, so that a secret split across deltas is caught too): what the
        /// notes are parsed from.
        answer: String,
    },
    /// The extraction's notes were written; the notes now.
    NotesWritten(SnapshotRecord),
}

/// A tool call that ended: its outcome, how long it ran, what it changed, the
/// sub-agent run of a `task` call; exactly what its `tool_result` entry records.
pub type ToolEnd = ToolResultRecord;

/// What the owner must do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Show this event (the owner may batch them until it waits).
    Emit(RunEvent),
    /// Make everything appended durable, then report [`Happening::Synced`].
    Sync,
    /// Call the model for `step` with the machine's context.
    StartModel {
        step: StepNo,
    },
    /// Cancel the model call of `step`; its end still comes as `StreamEnded`.
    CancelModel {
        step: StepNo,
    },
    /// Start `call`, dispatched by entry `dispatched` (what names its before-images).
    StartTool {
        call: ToolCall,
        dispatched: EntryId,
    },
    /// Cancel call `call_id`; its end still comes as `ToolEnded`.
    CancelTool {
        call_id: CallId,
    },
    /// Check `call` before the user is asked about it (can it succeed?); the result
    /// comes as `Checked`. Only then is the question put, if it can.
    Check {
        call: ToolCall,
    },
    /// Ask the user about `call`; the answer comes as `Answered`.
    Ask {
        call: ToolCall,
        /// How many other calls the machine awaits an answer for: the questions
        /// queued behind this one, each put in turn unless an earlier answer's grant
        /// covers it first (so "N more waiting", never "1 of N").
        waiting: u32,
    },
    /// Summarize context messages `0..upto`; the result comes as `SummaryEnded`.
    Summarize {
        upto: usize,
    },
    CancelSummary,
    /// Extract memory notes from the turn (these messages, from its prompt on)
    /// with one model call; its end comes as `ExtractionEnded`.
    StartExtraction {
        turn: Vec<Message>,
    },
    /// Cancel the extraction call; its end still comes as `ExtractionEnded`.
    CancelExtraction,
    /// Write these notes (atomically, each); the result comes as `NotesWritten`.
    WriteNotes(Vec<ProposedNote>),
    /// The results of the calls dispatched by these entries are durable: their
    /// before-images may go.
    Release(Vec<EntryId>),
}

/// The step whose stream is open.
#[derive(Debug, Clone)]
struct OpenStep {
    step: StepNo,
    started: Duration,
    events: Vec<TimedEvent>,
    /// The journal asked for its cancellation: an error end is an abort.
    cancelled: bool,
}

/// A dispatched call, in dispatch order, and its end once it came.
#[derive(Debug, Clone)]
struct InFlight {
    call_id: CallId,
    dispatched: EntryId,
    ended: Option<ToolEnd>,
    /// The plan a `plan` call sets, if its arguments are a valid plan: shown
    /// (`RunEvent::Plan`) once its ok result is recorded.
    plan: Option<Plan>,
}

/// One run's machine and the order of its log. See [`crate`].
#[derive(Debug, Clone)]
pub struct Journal {
    machine: Machine,
    /// The last entry appended (or the run's starting leaf).
    leaf: EntryId,
    open_step: Option<OpenStep>,
    in_flight: Vec<InFlight>,
    /// Approval questions not yet put, in call order.
    questions: VecDeque<ToolCall>,
    /// The call whose question is with the user now, or being checked before it is
    /// put (`checking`).
    asking: Option<ToolCall>,
    /// `asking` is being checked; its question is not put yet.
    checking: bool,
    /// Calls whose results were appended since the last sync (by dispatch entry).
    settled_unsynced: Vec<EntryId>,
    /// Every steer and follow-up of the run, by entry.
    queued: BTreeMap<EntryId, String>,
    undelivered: Vec<EntryId>,
    /// The task was ignored (nothing to compact): no run took place.
    nothing_done: bool,
    /// The run's memory: off, or where its extraction is (SPEC.md §28).
    memory: MemoryStage,
}

impl Journal {
    /// A journal continuing after `leaf`, where the machine is `machine`.
    pub fn new(machine: Machine, leaf: EntryId) -> Journal {
        Journal {
            machine,
            leaf,
            open_step: None,
            in_flight: Vec::new(),
            questions: VecDeque::new(),
            asking: None,
            checking: false,
            settled_unsynced: Vec::new(),
            queued: BTreeMap::new(),
            undelivered: Vec::new(),
            nothing_done: false,
            memory: MemoryStage::Off,
        }
    }

    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// The last entry appended.
    pub fn leaf(&self) -> EntryId {
        self.leaf
    }

    /// The run is over: it finished (and its memory extraction, if any, is over
    /// too), or its task was ignored.
    pub fn finished(&self) -> bool {
        (self.nothing_done || self.run_finished()) && !self.memory.busy()
    }

    /// The task was ignored (a compaction with nothing to compact).
    pub fn nothing_done(&self) -> bool {
        self.nothing_done
    }

    /// The step whose stream is open, and whether its cancellation was asked.
    pub fn streaming(&self) -> Option<(StepNo, bool)> {
        self.open_step.as_ref().map(|o| (o.step, o.cancelled))
    }

    /// The call whose approval question is with the user.
    pub fn asking(&self) -> Option<&ToolCall> {
        self.asking.as_ref()
    }

    /// Dispatched calls that have not ended, in dispatch order.
    pub fn running(&self) -> impl Iterator<Item = &CallId> {
        self.in_flight
            .iter()
            .filter(|f| f.ended.is_none())
            .map(|f| &f.call_id)
    }

    fn run_finished(&self) -> bool {
        match self.machine.phase() {
            Phase::Finished(_) => true,
            Phase::Idle | Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => {
                false
            }
        }
    }

    /// Takes in what happened at `now` (any origin the caller keeps; only
    /// differences are used), appending through `log`; returns what to do.
    pub fn on(
        &mut self,
        happening: Happening,
        now: Duration,
        log: &mut dyn Append,
    ) -> Result<Vec<Action>, LogError> {
        let mut pass = Pass {
            log,
            now,
            out: Vec::new(),
        };
        self.happen(happening, &mut pass)?;
        Ok(pass.out)
    }

    fn happen(&mut self, happening: Happening, s: &mut Pass<'_>) -> Result<(), LogError> {
        match happening {
            Happening::Prompt { text, config } => {
                self.append(
                    s,
                    Body::Record(Record::UserMessage {
                        text: text.clone(),
                        config: config.clone(),
                    }),
                )?;
                self.apply(s, Input::Prompt { text, config })
            }
            Happening::Compact { config } => {
                self.append(
                    s,
                    Body::Record(Record::Compact {
                        config: config.clone(),
                    }),
                )?;
                self.apply(s, Input::Compact { config })?;
                // Nothing to compact: the `ignored` decision says so.
                self.nothing_done = !self.machine.is_running();
                Ok(())
            }
            Happening::Steer(text) => {
                let entry = self.append(s, Body::Record(Record::Steer { text: text.clone() }))?;
                self.queued.insert(entry, text.clone());
                self.apply(s, Input::Steer { entry, text })?;
                self.mark_if_ignored(entry);
                Ok(())
            }
            Happening::FollowUp(text) => {
                let entry =
                    self.append(s, Body::Record(Record::FollowUp { text: text.clone() }))?;
                self.queued.insert(entry, text.clone());
                self.apply(s, Input::FollowUp { entry, text })?;
                self.mark_if_ignored(entry);
                Ok(())
            }
            Happening::Interrupt => {
                self.append(s, Body::Record(Record::Interrupt {}))?;
                self.apply(s, Input::Interrupt)?;
                self.interrupt_memory(s);
                Ok(())
            }
            Happening::MemoryIndex(index) => self.on_memory_index(s, index),
            Happening::ExtractionEnded {
                events,
                result,
                answer,
            } => self.on_extraction_end(s, events, result, &answer),
            Happening::NotesWritten(snapshot) => self.on_notes_written(s, snapshot),
            Happening::Stream { step, event } => self.on_stream(s, step, event),
            Happening::StreamEnded { step, result } => self.on_stream_end(s, step, result),
            Happening::ToolEnded(end) => self.on_tool_end(s, end),
            Happening::Answered {
                call_id,
                verdict,
                scope,
                message,
            } => self.on_answered(s, call_id, verdict, scope, message),
            Happening::Checked { call_id, failure } => self.on_checked(s, call_id, failure),
            Happening::SummaryEnded(result) => {
                let (summary, error) = match &result {
                    Ok(text) => (Some(text.clone()), None),
                    Err(e) => (None, Some(e.clone())),
                };
                self.append(
                    s,
                    Body::Record(Record::CompactionSummary { summary, error }),
                )?;
                self.apply(s, Input::CompactionDone { result })
            }
            Happening::Synced => {
                if !self.settled_unsynced.is_empty() {
                    s.out
                        .push(Action::Release(std::mem::take(&mut self.settled_unsynced)));
                }
                Ok(())
            }
            Happening::Recorded(record) => {
                let id = self.append(s, Body::Record(record.clone()))?;
                for input in RecordedInput::of(id, record).into_iter().flatten() {
                    self.apply(s, input)?;
                }
                // Such an input (a recovery) may end the step streaming: what its
                // stream still sends is late.
                let streams = match self.machine.phase() {
                    Phase::Streaming(st) => Some(st.step),
                    Phase::Idle
                    | Phase::RunningTools(_)
                    | Phase::Compacting(_)
                    | Phase::Finished(_) => None,
                };
                if self.open_step.as_ref().map(|o| o.step) != streams {
                    self.open_step = None;
                }
                // ... and settle the calls in flight (a recovery's synthetic results):
                // an end held for one of them belonged to the process that ended, and
                // must never settle a later call that reuses its id.
                let (pending, awaiting) = match self.machine.phase() {
                    Phase::RunningTools(t) => (t.pending.clone(), t.awaiting.clone()),
                    Phase::Idle
                    | Phase::Streaming(_)
                    | Phase::Compacting(_)
                    | Phase::Finished(_) => (Vec::new(), Vec::new()),
                };
                self.in_flight
                    .retain(|f| pending.iter().any(|c| c.id == f.call_id));
                self.questions.retain(|q| awaiting.contains(q));
                if self.asking.as_ref().is_some_and(|a| !awaiting.contains(a)) {
                    self.asking = None;
                    self.checking = false;
                }
                Ok(())
            }
        }
    }

    fn on_stream(
        &mut self,
        s: &mut Pass<'_>,
        step: StepNo,
        event: StreamEvent,
    ) -> Result<(), LogError> {
        match self.open_step.as_mut().filter(|o| o.step == step) {
            Some(open) => {
                let ms = u64::try_from(s.now.saturating_sub(open.started).as_millis())
                    .unwrap_or(u64::MAX);
                open.events.push(TimedEvent {
                    ms,
                    event: event.clone(),
                });
            }
            None => {
                self.append(
                    s,
                    Body::Record(Record::LateEvent {
                        step,
                        event: event.clone(),
                    }),
                )?;
            }
        }
        self.apply(s, Input::Stream { step, event })
    }

    fn on_stream_end(
        &mut self,
        s: &mut Pass<'_>,
        step: StepNo,
        result: Result<(), ProviderError>,
    ) -> Result<(), LogError> {
        // A second end for a stream already settled carries nothing to record.
        let Some(open) = self.open_step.take_if(|o| o.step == step) else {
            return Ok(());
        };
        let outcome = match result {
            Ok(()) => StepOutcome::Completed,
            Err(_) if open.cancelled => StepOutcome::Aborted,
            Err(error) => StepOutcome::Failed { error },
        };
        let message = self.machine.step_message(&outcome).unwrap_or_default();
        s.emit(RunEvent::StepFinished {
            step,
            usage: message.usage,
            finish: message.finish,
            outcome: match outcome {
                StepOutcome::Completed => "completed",
                StepOutcome::Failed { .. } => "failed",
                StepOutcome::Aborted => "aborted",
            },
            error: match &outcome {
                StepOutcome::Failed { error } => Some(error.clone()),
                StepOutcome::Completed | StepOutcome::Aborted => None,
            },
        });
        let entry = self.append(
            s,
            Body::Record(Record::Step(Box::new(StepRecord {
                step,
                events: open.events,
                outcome: outcome.clone(),
                message,
            }))),
        )?;
        self.apply(
            s,
            Input::StepEnded {
                step,
                entry,
                outcome,
            },
        )
    }

    fn on_tool_end(&mut self, s: &mut Pass<'_>, end: ToolEnd) -> Result<(), LogError> {
        s.emit(RunEvent::ToolResult {
            call_id: end.call_id.clone(),
            name: end.name.clone(),
            status: end.outcome.status,
            content: end.outcome.content.clone(),
            arguments: None,
            synthetic: None,
            duration_ms: end.duration_ms,
            changes: end.changes.clone(),
        });
        if let Some(slot) = self.in_flight.iter_mut().find(|f| f.call_id == end.call_id) {
            slot.ended = Some(end);
        }
        while self.in_flight.first().is_some_and(|f| f.ended.is_some()) {
            let first = self.in_flight.remove(0);
            let Some(end) = first.ended else {
                continue;
            };
            let (call_id, outcome) = (end.call_id.clone(), end.outcome.clone());
            let spent = end.child.as_ref().and_then(|c| c.usage);
            self.append(s, Body::Record(Record::ToolResult(Box::new(end))))?;
            if let (ToolStatus::Ok, Some(plan)) = (outcome.status, first.plan) {
                s.emit(RunEvent::Plan {
                    call_id: call_id.clone(),
                    plan,
                });
            }
            self.settled_unsynced.push(first.dispatched);
            self.apply(
                s,
                Input::ToolSettled {
                    call_id,
                    outcome,
                    spent,
                },
            )?;
        }
        Ok(())
    }

    /// A message that arrived after the run finished was recorded and ignored: it
    /// is reported as undelivered.
    fn mark_if_ignored(&mut self, entry: EntryId) {
        if self.run_finished() {
            self.undelivered.push(entry);
        }
    }

    fn append(&mut self, s: &mut Pass<'_>, body: Body) -> Result<EntryId, LogError> {
        let id = s.log.append(self.leaf, &body)?;
        self.leaf = id;
        Ok(id)
    }

    fn apply(&mut self, s: &mut Pass<'_>, input: Input) -> Result<(), LogError> {
        for effect in self.machine.handle(input) {
            self.effect(s, effect)?;
        }
        self.after_apply(s);
        Ok(())
    }

    fn effect(&mut self, s: &mut Pass<'_>, effect: Effect) -> Result<(), LogError> {
        match effect {
            Effect::Record(decision) => {
                s.emit(decision_event(&decision));
                if let Decision::RunFinished(RunEnd { undelivered, .. }) = &decision {
                    self.undelivered.clone_from(undelivered);
                }
                self.append(s, Body::Decision(decision))?;
            }
            Effect::CallModel { step } => {
                s.out.push(Action::Sync);
                s.out.push(Action::StartModel { step });
                self.open_step = Some(OpenStep {
                    step,
                    started: s.now,
                    events: Vec::new(),
                    cancelled: false,
                });
            }
            Effect::ExecuteTool { call } => {
                // `ExecuteTool` follows its `Record(ToolDispatched)`: the leaf.
                let dispatched = self.leaf;
                self.in_flight.push(InFlight {
                    call_id: call.id.clone(),
                    dispatched,
                    ended: None,
                    plan: (call.name == PLAN_TOOL)
                        .then(|| Plan::parse(&call.arguments).ok())
                        .flatten(),
                });
                s.out.push(Action::Sync);
                s.out.push(Action::StartTool { call, dispatched });
            }
            Effect::AskApproval { call } => {
                self.questions.push_back(call);
                self.ask_next(s);
            }
            Effect::CancelModel { step } => {
                if let Some(open) = self.open_step.as_mut().filter(|o| o.step == step) {
                    open.cancelled = true;
                    s.out.push(Action::CancelModel { step });
                }
            }
            Effect::CancelTool { call_id } => s.out.push(Action::CancelTool { call_id }),
            Effect::Summarize { upto } => {
                s.out.push(Action::Sync);
                s.out.push(Action::Summarize { upto });
            }
            Effect::CancelSummarize => s.out.push(Action::CancelSummary),
            Effect::Notify(notice) => s.emit(notice_event(notice)),
        }
        Ok(())
    }

    /// What the run reports once it is over.
    pub fn result(&self, session_id: String, session_path: String) -> RunResult {
        if self.nothing_done {
            return RunResult {
                final_text: String::new(),
                stop_reason: StopReason::Completed,
                usage: Usage::default(),
                steps: 0,
                compactions: 0,
                session_id,
                session_path,
                undelivered: Vec::new(),
            };
        }
        let run = self.machine.run();
        let stop_reason = match self.machine.phase() {
            Phase::Finished(r) => r.clone(),
            // The owner only reports a result once the machine finished.
            Phase::Idle | Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => {
                StopReason::Crashed
            }
        };
        RunResult {
            final_text: run.final_text.clone(),
            stop_reason,
            usage: run.usage,
            steps: run.steps,
            compactions: run.compactions,
            session_id,
            session_path,
            undelivered: self
                .undelivered
                .iter()
                .filter_map(|id| self.queued.get(id).cloned())
                .collect(),
        }
    }
}

/// One call of [`Journal::on`]: where it appends, its time, what it asks for.
struct Pass<'a> {
    log: &'a mut dyn Append,
    now: Duration,
    out: Vec<Action>,
}

impl Pass<'_> {
    fn emit(&mut self, event: RunEvent) {
        self.out.push(Action::Emit(event));
    }
}

fn notice_event(notice: Notice) -> RunEvent {
    match notice {
        Notice::TextDelta(delta) => RunEvent::TextDelta(delta),
        Notice::ReasoningDelta(delta) => RunEvent::ReasoningDelta(delta),
        Notice::Queued { origin, text } => RunEvent::Queued { origin, text },
        Notice::Restarted { step, reason } => RunEvent::Notice {
            message: format!(
                "the provider restarted its response in step {step} ({reason}): what was shown of it before is discarded"
            ),
        },
        Notice::Retrying {
            step,
            attempt,
            delay_ms,
            reason,
        } => RunEvent::Retrying {
            step,
            attempt,
            delay_ms,
            reason,
        },
    }
}

fn decision_event(decision: &Decision) -> RunEvent {
    match decision {
        Decision::StepStarted { step, .. } => RunEvent::StepStarted { step: *step },
        Decision::Delivered { origin, text, .. } => RunEvent::Delivered {
            origin: *origin,
            text: text.clone(),
        },
        Decision::ToolDispatched { step, call } => RunEvent::ToolCall {
            step: *step,
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        },
        Decision::SyntheticResult {
            call,
            reason,
            content,
        } => RunEvent::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            status: ToolStatus::Error,
            content: content.clone(),
            arguments: Some(call.arguments.clone()),
            synthetic: Some(*reason),
            duration_ms: 0,
            changes: Vec::new(),
        },
        Decision::CompactionStarted { tokens_before, .. } => RunEvent::CompactionStarted {
            tokens_before: *tokens_before,
        },
        Decision::Compacted {
            tokens_before,
            tokens_after,
            ..
        } => RunEvent::Compacted {
            tokens_before: *tokens_before,
            tokens_after: *tokens_after,
        },
        Decision::Ignored { reason } => RunEvent::Ignored { reason: *reason },
        Decision::Approval {
            call_id,
            tool,
            verdict,
            by,
        } => RunEvent::Approval {
            call_id: call_id.clone(),
            name: tool.clone(),
            verdict: *verdict,
            by: *by,
        },
        Decision::RunFinished(end) => RunEvent::RunFinished {
            reason: end.reason.clone(),
            steps: end.steps,
            usage: end.usage,
        },
    }
}
