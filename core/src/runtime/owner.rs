//! The owner task of one run: the only place that touches the machine and the log
//! writer. Everything else (provider streams, tools, the user) sends it messages.
//! The provider's stream future is polled by the owner task itself rather than by a
//! task of its own (its events still come over the stream channel): on the way of
//! every step, each hop between tasks is a wake-up, on a multi-thread runtime often
//! a context switch. Tool calls are polled there too (their blocking work runs on
//! the blocking pool); what still runs when the run ends is handed to tasks of its
//! own to finish. Events for the interface are sent in one batch
//! when the owner is about to wait (for the next input, or for the disk).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::inflight::{CatchUnwind, Done, Ended, InFlight, ModelCall, ToolSlots, next_model_end};
use super::{
    ApprovalRequest, Approver, Command, RunEvent, RunOptions, RunResult, RuntimeError, Task,
};
use crate::log::{Body, Record, SessionWriter, StepRecord, TimedEvent, ToolResultRecord};
use crate::machine::{
    CallId, Decision, Effect, EntryId, Input, Machine, Notice, Permissions, Phase, ProviderError,
    ProviderErrorKind, RunConfig, StepNo, StepOutcome, StopReason, StreamEvent, ToolCall,
    ToolStatus,
};
use crate::provider::{ModelRequest, Provider, StreamItem, StreamSink};
use crate::tools::blobs::Dispatch;
use crate::tools::{OutputStream, ToolExecutor, ToolProgress, ToolSpec};

/// Transient output of a running tool call, on its way to the owner task.
type Progress = (CallId, OutputStream, String);

/// Where the run writes: its leaf, the session id, the workspace.
pub(crate) struct Session {
    pub leaf: EntryId,
    pub id: String,
    pub cwd: String,
}

/// The step whose stream is open.
struct OpenStep {
    step: StepNo,
    started: Instant,
    events: Vec<TimedEvent>,
    cancel: CancellationToken,
}

pub(crate) struct Owner {
    machine: Machine,
    writer: SessionWriter,
    leaf: EntryId,
    session_id: String,
    cwd: String,
    approver: Option<Arc<dyn Approver>>,
    /// Approval questions not yet put to the user, in call order.
    questions: std::collections::VecDeque<ToolCall>,
    /// Whether a question is with the user now.
    asking: bool,
    /// The task was ignored (nothing to compact): no run took place.
    nothing_done: bool,
    events: mpsc::UnboundedSender<RunEvent>,
    /// Events not yet sent: they go out together when the owner is about to wait
    /// (for the next input, or for the disk before an effect), so that the reader
    /// is woken once for them rather than once each.
    outbox: Vec<RunEvent>,
    commands: mpsc::UnboundedReceiver<Command>,
    provider: Arc<dyn Provider>,
    tools: Arc<dyn ToolExecutor>,
    specs: Vec<ToolSpec>,
    system: String,
    task: Option<(Task, RunConfig)>,
    stream_tx: mpsc::UnboundedSender<(StepNo, StreamItem)>,
    stream_rx: mpsc::UnboundedReceiver<(StepNo, StreamItem)>,
    done_tx: mpsc::UnboundedSender<Done>,
    done_rx: mpsc::UnboundedReceiver<Done>,
    /// Transient tool output (`ToolOutput` events); a call sends all of it before
    /// its future resolves, and this channel is read before tool ends, so a call's
    /// output events always come before its result.
    progress_tx: mpsc::UnboundedSender<Progress>,
    progress_rx: mpsc::UnboundedReceiver<Progress>,
    open_step: Option<OpenStep>,
    /// Provider streams still running (the open step's, and any cancelled one that
    /// has not ended yet).
    model_calls: Vec<ModelCall>,
    /// Tool calls running (at most `max_parallel_tools`) or waiting to start, and
    /// those that ended, not yet handled.
    tool_slots: ToolSlots,
    /// Dispatched tool calls in dispatch order. They run concurrently, but their
    /// settlements are recorded and applied in this order, so that one script
    /// always writes one log (a finished call waits for the calls before it).
    in_flight: Vec<InFlight>,
    /// Calls whose `tool_result` is appended but not yet synced: once it is, their
    /// before-images are released (SPEC.md §21.6).
    settled_unsynced: Vec<Dispatch>,
    summary_token: Option<CancellationToken>,
    queued: BTreeMap<EntryId, String>,
    undelivered: Vec<EntryId>,
}

impl Owner {
    pub(crate) fn new(
        opts: RunOptions,
        writer: SessionWriter,
        machine: Machine,
        session: Session,
        events: mpsc::UnboundedSender<RunEvent>,
        commands: mpsc::UnboundedReceiver<Command>,
    ) -> Owner {
        let (stream_tx, stream_rx) = mpsc::unbounded_channel();
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        let (progress_tx, progress_rx) = mpsc::unbounded_channel();
        let specs = opts.tools.specs();
        // `Ask` with nobody to ask: mutations are allowed (SPEC.md "Permissions").
        let permissions = match (opts.permissions, &opts.approver) {
            (Permissions::Ask, None) => Permissions::Yolo,
            (p, _) => p,
        };
        let config = RunConfig {
            limits: opts.limits,
            tools: specs.iter().map(|s| s.name.clone()).collect(),
            mutating: opts.tools.mutating(),
            permissions,
            estimate_bytes_per_token: crate::machine::DEFAULT_ESTIMATE_BYTES_PER_TOKEN,
            sandbox: opts.tools.sandbox().map(|mut sandbox| {
                sandbox.unattended = opts.approver.is_none();
                sandbox
            }),
        };
        Owner {
            machine,
            writer,
            leaf: session.leaf,
            session_id: session.id,
            cwd: session.cwd,
            approver: opts.approver,
            questions: std::collections::VecDeque::new(),
            asking: false,
            nothing_done: false,
            events,
            outbox: Vec::new(),
            commands,
            provider: opts.provider,
            tools: Arc::clone(&opts.tools),
            specs,
            system: opts.system_prompt,
            task: Some((opts.task, config)),
            stream_tx,
            stream_rx,
            done_tx,
            done_rx,
            progress_tx,
            progress_rx,
            open_step: None,
            model_calls: Vec::new(),
            tool_slots: ToolSlots::new(Arc::clone(&opts.tools), opts.max_parallel_tools),
            in_flight: Vec::new(),
            settled_unsynced: Vec::new(),
            summary_token: None,
            queued: BTreeMap::new(),
            undelivered: Vec::new(),
        }
    }

    pub(crate) async fn run(mut self) -> Result<RunResult, RuntimeError> {
        let outcome = self.drive().await;
        self.flush_events();
        if outcome.is_err() {
            // A log failure ends the run: stop everything still in flight.
            self.cancel_all();
        }
        // Whatever still runs (cancelled, or ignored once the run settled) is
        // driven to its end in a task of its own, as a tool may still have to
        // clean up (kill its processes) and a recording to be written.
        for call in self.model_calls.drain(..) {
            tokio::spawn(call.stream);
        }
        for run in self.tool_slots.take_running() {
            tokio::spawn(run.work);
        }
        self.writer.sync()?;
        self.release_settled();
        outcome?;
        Ok(self.result())
    }

    async fn drive(&mut self) -> Result<(), RuntimeError> {
        match self.task.take() {
            Some((Task::Prompt(text), config)) => {
                self.append(Body::Record(Record::UserMessage {
                    text: text.clone(),
                    config: config.clone(),
                }))?;
                self.apply(Input::Prompt { text, config })?;
            }
            Some((Task::Compact, config)) => {
                self.append(Body::Record(Record::Compact {
                    config: config.clone(),
                }))?;
                self.apply(Input::Compact { config })?;
                if !self.machine.is_running() {
                    // Nothing to compact: the `ignored` decision says so.
                    self.nothing_done = true;
                    return Ok(());
                }
            }
            None => {}
        }
        while !self.finished() {
            self.flush_events();
            // Biased: the user's commands (an interrupt above all) go first.
            tokio::select! {
                biased;
                Some(cmd) = self.commands.recv() => self.on_command(cmd)?,
                Some((step, item)) = self.stream_rx.recv() => self.on_stream(step, item)?,
                Some(done) = self.done_rx.recv() => self.on_done(done)?,
                Some((call_id, stream, text)) = self.progress_rx.recv() => {
                    self.emit(RunEvent::ToolOutput { call_id, stream, text });
                }
                (step, result) = next_model_end(&mut self.model_calls) => {
                    // Behind the events the stream sent before it ended.
                    let _ = self.stream_tx.send((step, StreamItem::End(result)));
                }
                done = self.tool_slots.next_end() => {
                    self.on_done(done)?;
                }
                else => break,
            }
        }
        // Commands that raced with the finish are recorded (and ignored) too; closing
        // first makes every later send fail, so the handle reports it was too late.
        self.commands.close();
        while let Ok(cmd) = self.commands.try_recv() {
            self.on_command(cmd)?;
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        match self.machine.phase() {
            Phase::Finished(_) => true,
            Phase::Idle | Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => {
                false
            }
        }
    }

    fn result(&self) -> RunResult {
        if self.nothing_done {
            return RunResult {
                final_text: String::new(),
                stop_reason: StopReason::Completed,
                usage: crate::machine::Usage::default(),
                steps: 0,
                compactions: 0,
                session_id: self.session_id.clone(),
                session_path: self.writer.path().display().to_string(),
                undelivered: Vec::new(),
            };
        }
        let run = self.machine.run();
        let stop_reason = match self.machine.phase() {
            Phase::Finished(r) => r.clone(),
            // `drive` only returns Ok once the machine finished.
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
            session_id: self.session_id.clone(),
            session_path: self.writer.path().display().to_string(),
            undelivered: self
                .undelivered
                .iter()
                .filter_map(|id| self.queued.get(id).cloned())
                .collect(),
        }
    }

    fn emit(&mut self, event: RunEvent) {
        self.outbox.push(event);
    }

    /// Sends the events emitted since the last flush.
    fn flush_events(&mut self) {
        for event in self.outbox.drain(..) {
            // The receiver may be gone (a library user that ignores events): fine.
            let _ = self.events.send(event);
        }
    }

    /// Makes the log durable before an effect starts (write-ahead). The waiting
    /// events go out first: their reader works while the disk does.
    fn sync_before_effect(&mut self) -> Result<(), RuntimeError> {
        self.flush_events();
        self.writer.sync()?;
        self.release_settled();
        Ok(())
    }

    /// The results appended before the last sync are durable: the before-images
    /// of their calls are no longer needed.
    fn release_settled(&mut self) {
        if !self.settled_unsynced.is_empty() {
            self.tools
                .results_durable(&std::mem::take(&mut self.settled_unsynced));
        }
    }

    fn append(&mut self, body: Body) -> Result<EntryId, RuntimeError> {
        let (id, _) = self.writer.append(self.leaf, Utc::now(), &body)?;
        self.leaf = id;
        Ok(id)
    }

    fn apply(&mut self, input: Input) -> Result<(), RuntimeError> {
        for effect in self.machine.handle(input) {
            self.effect(effect)?;
        }
        Ok(())
    }

    fn on_stream(&mut self, step: StepNo, mut item: StreamItem) -> Result<(), RuntimeError> {
        // A retried error's body may quote a secret: redacted before it is an input.
        if let StreamItem::Event(StreamEvent::Retrying { reason, .. }) = &mut item {
            self.writer.secrets().redact_in_place(reason);
        }
        let open = self.open_step.as_mut().filter(|o| o.step == step);
        match (item, open) {
            (StreamItem::Event(event), Some(open)) => {
                let ms = u64::try_from(open.started.elapsed().as_millis()).unwrap_or(u64::MAX);
                open.events.push(TimedEvent {
                    ms,
                    event: event.clone(),
                });
                self.apply(Input::Stream { step, event })
            }
            (StreamItem::Event(event), None) => {
                self.append(Body::Record(Record::LateEvent {
                    step,
                    event: event.clone(),
                }))?;
                self.apply(Input::Stream { step, event })
            }
            (StreamItem::End(result), Some(_)) => {
                let Some(open) = self.open_step.take() else {
                    return Ok(());
                };
                let outcome = match result {
                    Ok(()) => StepOutcome::Completed,
                    Err(_) if open.cancel.is_cancelled() => StepOutcome::Aborted,
                    Err(mut error) => {
                        self.writer.secrets().redact_in_place(&mut error.message);
                        StepOutcome::Failed { error }
                    }
                };
                let message = self.machine.step_message(&outcome).unwrap_or_default();
                self.emit(RunEvent::StepFinished {
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
                let entry = self.append(Body::Record(Record::Step(StepRecord {
                    step,
                    events: open.events,
                    outcome: outcome.clone(),
                    message,
                })))?;
                self.apply(Input::StepEnded {
                    step,
                    entry,
                    outcome,
                })
            }
            // A second end for a stream already settled carries nothing to record.
            (StreamItem::End(_), None) => Ok(()),
        }
    }

    fn on_done(&mut self, done: Done) -> Result<(), RuntimeError> {
        match done {
            Done::Tool {
                call,
                mut outcome,
                duration_ms,
            } => {
                // Redacted before it becomes an input: the log and the machine's
                // context hold the same text, so replay stays exact (§21.5).
                self.writer.secrets().redact_in_place(&mut outcome.content);
                let changes = self.tools.take_file_changes(&call.id);
                self.emit(RunEvent::ToolResult {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    status: outcome.status,
                    content: outcome.content.clone(),
                    synthetic: None,
                    duration_ms,
                    changes: changes.clone(),
                });
                if let Some(slot) = self.in_flight.iter_mut().find(|f| f.call_id == call.id) {
                    slot.done = Some(Ended {
                        call,
                        outcome,
                        duration_ms,
                        changes,
                    });
                }
                while self.in_flight.first().is_some_and(|f| f.done.is_some()) {
                    let first = self.in_flight.remove(0);
                    if let Some(ended) = first.done {
                        self.settle_tool(ended)?;
                        self.settled_unsynced.push(first.dispatch);
                    }
                }
                Ok(())
            }
            Done::Approval { call_id, answer } => {
                self.asking = false;
                let message = answer.recorded_message();
                self.append(Body::Record(Record::ApprovalAnswer {
                    call_id: call_id.clone(),
                    verdict: answer.verdict,
                    scope: answer.scope,
                    message: message.clone(),
                }))?;
                self.apply(Input::Approval {
                    call_id,
                    verdict: answer.verdict,
                    scope: answer.scope,
                    message,
                })?;
                self.ask_next();
                Ok(())
            }
            Done::Summary(mut result) => {
                self.summary_token = None;
                if let Err(e) = &mut result {
                    self.writer.secrets().redact_in_place(&mut e.message);
                }
                let (summary, error) = match &result {
                    Ok(s) => (Some(s.clone()), None),
                    Err(e) => (None, Some(e.clone())),
                };
                self.append(Body::Record(Record::CompactionSummary { summary, error }))?;
                self.apply(Input::CompactionDone { result })
            }
        }
    }

    fn settle_tool(&mut self, ended: Ended) -> Result<(), RuntimeError> {
        let Ended {
            call,
            outcome,
            duration_ms,
            changes,
        } = ended;
        self.append(Body::Record(Record::ToolResult(ToolResultRecord {
            call_id: call.id.clone(),
            name: call.name,
            outcome: outcome.clone(),
            duration_ms,
            changes,
        })))?;
        self.apply(Input::ToolSettled {
            call_id: call.id,
            outcome,
        })
    }

    /// A message that arrived after the run finished was recorded and ignored: it
    /// is reported as undelivered.
    fn mark_if_ignored(&mut self, entry: EntryId) {
        if self.finished() {
            self.undelivered.push(entry);
        }
    }

    fn on_command(&mut self, cmd: Command) -> Result<(), RuntimeError> {
        match cmd {
            Command::Steer(text) => {
                let entry = self.append(Body::Record(Record::Steer { text: text.clone() }))?;
                self.queued.insert(entry, text.clone());
                self.apply(Input::Steer { entry, text })?;
                self.mark_if_ignored(entry);
                Ok(())
            }
            Command::FollowUp(text) => {
                let entry = self.append(Body::Record(Record::FollowUp { text: text.clone() }))?;
                self.queued.insert(entry, text.clone());
                self.apply(Input::FollowUp { entry, text })?;
                self.mark_if_ignored(entry);
                Ok(())
            }
            Command::Interrupt => {
                self.append(Body::Record(Record::Interrupt {}))?;
                self.apply(Input::Interrupt)
            }
            Command::Pending(reply) => {
                let _ = reply.send(self.machine.pending());
                Ok(())
            }
        }
    }

    fn effect(&mut self, effect: Effect) -> Result<(), RuntimeError> {
        match effect {
            Effect::Record(decision) => {
                self.emit_decision(&decision);
                if let Decision::RunFinished { undelivered, .. } = &decision {
                    self.undelivered.clone_from(undelivered);
                }
                self.append(Body::Decision(decision))?;
            }
            Effect::CallModel { step } => {
                // Write-ahead: the decision that starts the call is durable first.
                self.sync_before_effect()?;
                let cancel = CancellationToken::new();
                let request = self.request();
                let sink = StreamSink::new(step, self.stream_tx.clone());
                // A provider that panics instead of returning its future fails the
                // step like any provider error; the run settles.
                let provider = Arc::clone(&self.provider);
                let token = cancel.clone();
                let stream = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                    provider.stream(request, sink, token)
                }))
                .unwrap_or_else(|_| {
                    Box::pin(async {
                        Err(ProviderError {
                            kind: ProviderErrorKind::Malformed,
                            message: "the provider panicked starting the request".into(),
                        })
                    })
                });
                self.model_calls.push(ModelCall {
                    step,
                    stream: CatchUnwind(stream),
                });
                self.open_step = Some(OpenStep {
                    step,
                    started: Instant::now(),
                    events: Vec::new(),
                    cancel,
                });
            }
            Effect::ExecuteTool { call } => {
                self.sync_before_effect()?;
                let cancel = CancellationToken::new();
                // `ExecuteTool` follows its `Record(ToolDispatched)`: the leaf.
                let dispatch = Dispatch {
                    session_id: self.session_id.clone(),
                    session_path: self.writer.path().to_path_buf(),
                    entry: self.leaf,
                };
                self.in_flight.push(InFlight {
                    call_id: call.id.clone(),
                    dispatch: dispatch.clone(),
                    cancel: cancel.clone(),
                    done: None,
                });
                let progress = self.progress_sink(&call.id);
                self.tool_slots.dispatch(call, dispatch, cancel, progress);
            }
            Effect::AskApproval { call } => {
                self.questions.push_back(call);
                self.ask_next();
            }
            Effect::CancelModel { step } => {
                if let Some(open) = self.open_step.as_ref().filter(|o| o.step == step) {
                    open.cancel.cancel();
                }
            }
            Effect::CancelTool { call_id } => {
                if let Some(f) = self.in_flight.iter().find(|f| f.call_id == call_id) {
                    f.cancel.cancel();
                }
                // A call still waiting for a slot settles without starting.
                self.tool_slots.cancel_waiting(&call_id);
            }
            Effect::Summarize { upto } => {
                self.sync_before_effect()?;
                let cancel = CancellationToken::new();
                self.summary_token = Some(cancel.clone());
                self.spawn_summary(upto, cancel);
            }
            Effect::CancelSummarize => {
                if let Some(token) = &self.summary_token {
                    token.cancel();
                }
            }
            Effect::Notify(notice) => self.emit(match notice {
                Notice::TextDelta { step, text } => RunEvent::TextDelta { step, text },
                Notice::ReasoningDelta { step, text } => RunEvent::ReasoningDelta { step, text },
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
            }),
        }
        Ok(())
    }

    /// Asks the user one question at a time, skipping calls the machine no longer
    /// waits on (a grant from an earlier answer covered them, or an interrupt).
    fn ask_next(&mut self) {
        if self.asking {
            return;
        }
        let waiting: Vec<CallId> = match self.machine.phase() {
            Phase::RunningTools(t) => t.awaiting.iter().map(|c| c.id.clone()).collect(),
            Phase::Idle | Phase::Streaming(_) | Phase::Compacting(_) | Phase::Finished(_) => {
                Vec::new()
            }
        };
        while let Some(call) = self.questions.pop_front() {
            if !waiting.contains(&call.id) {
                continue;
            }
            // `Ask` is only in effect with an approver (see `Owner::new`).
            let Some(approver) = self.approver.clone() else {
                return;
            };
            self.emit(RunEvent::ApprovalRequested {
                call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            });
            // The request is shown before the question is put.
            self.flush_events();
            let call_id = call.id.clone();
            let question = approver.decide(ApprovalRequest {
                call,
                cwd: self.cwd.clone(),
            });
            let tx = self.done_tx.clone();
            tokio::spawn(async move {
                let answer = question.await;
                let _ = tx.send(Done::Approval { call_id, answer });
            });
            self.asking = true;
            return;
        }
    }

    fn emit_decision(&mut self, decision: &Decision) {
        let event = match decision {
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
            Decision::RunFinished {
                reason,
                steps,
                usage,
                ..
            } => RunEvent::RunFinished {
                reason: reason.clone(),
                steps: *steps,
                usage: *usage,
            },
        };
        self.emit(event);
    }

    /// The sink of call `id`'s transient output: each piece reaches the owner task
    /// and becomes a `ToolOutput` event (never an entry, never an input).
    fn progress_sink(&self, id: &CallId) -> ToolProgress {
        let tx = self.progress_tx.clone();
        let id = id.clone();
        ToolProgress::new(move |stream, text| {
            // The run may be over (the receiver gone): the output is not needed.
            let _ = tx.send((id.clone(), stream, text.to_owned()));
        })
    }

    fn request(&self) -> ModelRequest {
        ModelRequest {
            system: self.system.clone(),
            messages: self.machine.context().messages().cloned().collect(),
            tools: self.specs.clone(),
            max_output_tokens: self.machine.limits().max_output_tokens,
        }
    }

    /// A summary is an ordinary model request over the middle of the context, with
    /// an instruction to summarize; its text is the summary.
    fn spawn_summary(&self, upto: usize, cancel: CancellationToken) {
        let mut messages: Vec<_> = self
            .machine
            .context()
            .messages()
            .take(upto)
            .cloned()
            .collect();
        messages.push(crate::machine::Message::User {
            origin: crate::machine::UserOrigin::Prompt,
            text: SUMMARY_INSTRUCTION.to_string(),
        });
        let request = ModelRequest {
            system: self.system.clone(),
            messages,
            tools: Vec::new(),
            max_output_tokens: self.machine.limits().max_output_tokens,
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let stream = self
            .provider
            .stream(request, StreamSink::new(StepNo(0), tx), cancel);
        let done = self.done_tx.clone();
        tokio::spawn(async move {
            let collect = tokio::spawn(async move {
                let mut text = String::new();
                while let Some((_, item)) = rx.recv().await {
                    if let StreamItem::Event(StreamEvent::TextDelta { text: t }) = item {
                        text.push_str(&t);
                    }
                }
                text
            });
            let result = match tokio::spawn(stream).await {
                Ok(r) => r,
                Err(e) => Err(ProviderError {
                    kind: ProviderErrorKind::Malformed,
                    message: format!("the provider task failed: {e}"),
                }),
            };
            let text = collect.await.unwrap_or_default();
            let _ = done.send(Done::Summary(result.map(|()| text)));
        });
    }

    fn cancel_all(&mut self) {
        if let Some(open) = &self.open_step {
            open.cancel.cancel();
        }
        for f in &self.in_flight {
            f.cancel.cancel();
        }
        if let Some(token) = &self.summary_token {
            token.cancel();
        }
    }
}

/// The instruction appended to the middle of the context to make a summary.
pub const SUMMARY_INSTRUCTION: &str = "Summarize the conversation so far for your own later use: the user's goals, decisions made, files and facts learned, and work remaining. Be concise and specific.";
