//! The owner task of one run: it polls the provider's and the tools' futures, reads
//! the channels (the user's commands, stream items, ended work) and carries out the
//! [`Action`]s of the run's [`Journal`], which decides everything the log's order
//! depends on. The provider's stream future is polled by the owner task itself
//! rather than by a task of its own (its events still come over the stream
//! channel): on the way of every step, each hop between tasks is a wake-up, on a
//! multi-thread runtime often a context switch. Tool calls are polled there too
//! (their blocking work runs on the blocking pool); what still runs when the run
//! ends is handed to tasks of its own to finish. Events for the interface are sent
//! in one batch when the owner is about to wait (for the next input, or for the
//! disk).

use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::inflight::{CatchUnwind, Done, ModelCall, ToolSlots, next_model_end};
use super::{ApprovalRequest, Approver, Command, RunOptions, RunResult, RuntimeError, Task};
use xcsh_journal::{Action, Append, Happening, Journal, RunEvent, ToolEnd};
use xcsh_log::blobs::Dispatch;
use xcsh_log::{Body, LogError, SessionWriter};
use xcsh_machine::{
    CallId, EntryId, Machine, Permissions, ProviderError, ProviderErrorKind, RunConfig, StepNo,
    StreamEvent,
};
use xcsh_ports::{Durable, MakeDurable};
use xcsh_providers::{ModelRequest, Provider, StreamCall, StreamItem, StreamSink};
use xcsh_tools::{CallContext, OutputStream, ToolExecutor, ToolProgress, ToolSpec};

/// Transient output of a running tool call, on its way to the owner task.
type Progress = (CallId, OutputStream, String);

/// Where the run writes: its leaf, the session id, the workspace.
pub(crate) struct Session {
    pub leaf: EntryId,
    pub id: String,
    pub cwd: String,
}

/// The channels of the owner task.
struct Mailbox {
    events: mpsc::UnboundedSender<RunEvent>,
    commands: mpsc::UnboundedReceiver<Command>,
    stream_tx: mpsc::UnboundedSender<(StepNo, StreamItem)>,
    stream_rx: mpsc::UnboundedReceiver<(StepNo, StreamItem)>,
    done_tx: mpsc::UnboundedSender<Done>,
    done_rx: mpsc::UnboundedReceiver<Done>,
    /// Transient tool output (`ToolOutput` events); a call sends all of it before
    /// its future resolves, and this channel is read before tool ends, so a call's
    /// output events always come before its result.
    progress_tx: mpsc::UnboundedSender<Progress>,
    progress_rx: mpsc::UnboundedReceiver<Progress>,
}

/// What a model request is made of, besides the machine's context.
struct Requests {
    provider: Arc<dyn Provider>,
    specs: Vec<ToolSpec>,
    system: String,
    /// Memory, when on (SPEC.md §28), and the index text of this turn.
    memory: Option<super::memory::MemoryOptions>,
    index: Option<String>,
}

/// The work in flight and the tokens that cancel it.
struct Work {
    /// Provider streams still running (the open step's, and any cancelled one that
    /// has not ended yet).
    model_calls: Vec<ModelCall>,
    /// Tool calls running (at most `max_parallel_tools`) or waiting to start, and
    /// those that ended, not yet handled.
    tool_slots: ToolSlots,
    /// The last model call's token.
    step: Option<CancellationToken>,
    /// The tokens of the tool calls that have not ended, in dispatch order.
    tools: Vec<(CallId, CancellationToken)>,
    summary: Option<CancellationToken>,
    extraction: Option<CancellationToken>,
}

pub(crate) struct Owner {
    journal: Journal,
    writer: SessionWriter,
    session: Session,
    approver: Option<Arc<dyn Approver>>,
    requests: Requests,
    tools: Arc<dyn ToolExecutor>,
    task: Option<(Task, RunConfig)>,
    mail: Mailbox,
    /// Events not yet sent: they go out together when the owner is about to wait
    /// (for the next input, or for the disk before an effect), so that the reader
    /// is woken once for them rather than once each.
    outbox: Vec<RunEvent>,
    work: Work,
    /// A sync the journal asked for and the owner has not made yet: it is made
    /// before the next action that needs it, or when the actions of a happening
    /// are done, whichever comes first; meanwhile a tool call the executor starts
    /// gated is started, so that it starts up while the disk works (SPEC.md §21.4).
    sync_due: Option<(MakeDurable, Durable)>,
    /// The journal's time is measured from here.
    origin: Instant,
}

/// The session writer as the journal's port: each entry stamped with the time.
struct Stamped<'a>(&'a mut SessionWriter);

impl Append for Stamped<'_> {
    fn append(&mut self, parent: EntryId, body: &Body) -> Result<EntryId, LogError> {
        Ok(self.0.append(parent, Utc::now(), body)?.0)
    }
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
            estimate_bytes_per_token: xcsh_machine::DEFAULT_ESTIMATE_BYTES_PER_TOKEN,
            sandbox: opts.tools.sandbox().map(|mut sandbox| {
                sandbox.unattended = opts.approver.is_none();
                sandbox
            }),
        };
        Owner {
            journal: Journal::new(machine, session.leaf),
            writer,
            session,
            approver: opts.approver,
            requests: Requests {
                provider: opts.provider,
                specs,
                system: opts.system_prompt,
                memory: opts.memory,
                index: None,
            },
            tools: Arc::clone(&opts.tools),
            task: Some((opts.task, config)),
            mail: Mailbox {
                events,
                commands,
                stream_tx,
                stream_rx,
                done_tx,
                done_rx,
                progress_tx,
                progress_rx,
            },
            outbox: Vec::new(),
            work: Work {
                model_calls: Vec::new(),
                tool_slots: ToolSlots::new(Arc::clone(&opts.tools), opts.max_parallel_tools),
                step: None,
                tools: Vec::new(),
                summary: None,
                extraction: None,
            },
            sync_due: None,
            origin: Instant::now(),
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
        for call in self.work.model_calls.drain(..) {
            tokio::spawn(call.stream);
        }
        for run in self.work.tool_slots.take_running() {
            tokio::spawn(run.work);
        }
        self.writer.sync()?;
        self.happen(Happening::Synced)?;
        outcome?;
        Ok(self.journal.result(
            self.session.id.clone(),
            self.writer.path().display().to_string(),
        ))
    }

    async fn drive(&mut self) -> Result<(), RuntimeError> {
        match self.task.take() {
            Some((Task::Prompt(text), config)) => {
                self.record_memory_index()?;
                self.happen(Happening::Prompt { text, config })?
            }
            Some((Task::Compact, config)) => {
                self.happen(Happening::Compact { config })?;
                if self.journal.nothing_done() {
                    return Ok(());
                }
            }
            None => {}
        }
        while !self.journal.finished() {
            self.flush_events();
            let mail = &mut self.mail;
            // Biased: the user's commands (an interrupt above all) go first.
            tokio::select! {
                biased;
                Some(cmd) = mail.commands.recv() => self.on_command(cmd)?,
                Some((step, item)) = mail.stream_rx.recv() => self.on_stream(step, item)?,
                Some(done) = mail.done_rx.recv() => self.on_done(done)?,
                Some((call_id, stream, text)) = mail.progress_rx.recv() => {
                    self.outbox.push(RunEvent::ToolOutput { call_id, stream, text });
                }
                (step, result) = next_model_end(&mut self.work.model_calls) => {
                    // Behind the events the stream sent before it ended.
                    let _ = self.mail.stream_tx.send((step, StreamItem::End(result)));
                }
                done = self.work.tool_slots.next_end() => self.on_done(done)?,
                else => break,
            }
        }
        // Commands that raced with the finish are recorded (and ignored) too; closing
        // first makes every later send fail, so the handle reports it was too late.
        self.mail.commands.close();
        while let Ok(cmd) = self.mail.commands.try_recv() {
            self.on_command(cmd)?;
        }
        Ok(())
    }

    /// With memory on: the index as it is now, recorded before the prompt, and
    /// carried by this turn's requests after the project instructions.
    fn record_memory_index(&mut self) -> Result<(), RuntimeError> {
        let Some(memory) = &self.requests.memory else {
            return Ok(());
        };
        let index = memory.store.index();
        for broken in &index.broken {
            self.outbox.push(RunEvent::Notice {
                message: broken.to_string(),
            });
        }
        self.requests.index = Some(index.text.clone());
        self.happen(Happening::MemoryIndex(
            xcsh_log::memory::MemoryIndexRecord {
                text: index.text,
                hash: index.hash,
                notes: index.notes,
            },
        ))
    }

    /// The system prompt of this turn's requests (with the memory index, if on).
    fn system(&self) -> String {
        match &self.requests.index {
            Some(index) => super::memory::system_with_index(&self.requests.system, index),
            None => self.requests.system.clone(),
        }
    }

    /// Sends the events emitted since the last flush.
    fn flush_events(&mut self) {
        for event in self.outbox.drain(..) {
            // The receiver may be gone (a library user that ignores events): fine.
            let _ = self.mail.events.send(event);
        }
    }

    /// Hands `happening` to the journal and carries out what it asks for.
    fn happen(&mut self, happening: Happening) -> Result<(), RuntimeError> {
        let now = self.origin.elapsed();
        let actions = self
            .journal
            .on(happening, now, &mut Stamped(&mut self.writer))?;
        for action in actions {
            self.act(action)?;
        }
        self.sync_if_due()
    }

    /// Makes the sync that is due (write-ahead): the waiting events go out first,
    /// their reader works while the disk does; then the calls started gated may go.
    fn sync_if_due(&mut self) -> Result<(), RuntimeError> {
        if let Some((durable, _)) = self.sync_due.take() {
            self.flush_events();
            // On an error, `durable` is dropped unsaid: the gated calls never start.
            self.writer.sync()?;
            durable.done();
            self.happen(Happening::Synced)?;
        }
        Ok(())
    }

    fn on_stream(&mut self, step: StepNo, mut item: StreamItem) -> Result<(), RuntimeError> {
        // What reaches the journal is redacted: the log and the machine's context hold
        // the same text, so replay stays exact (§21.5).
        let secrets = self.writer.secrets();
        match &mut item {
            // A retried error's body may quote a secret.
            StreamItem::Event(StreamEvent::Retrying { reason, .. }) => {
                secrets.redact_in_place(reason);
            }
            StreamItem::End(Err(error)) => secrets.redact_in_place(&mut error.message),
            StreamItem::Event(_) | StreamItem::End(Ok(())) => {}
        }
        self.happen(match item {
            StreamItem::Event(event) => Happening::Stream { step, event },
            StreamItem::End(result) => Happening::StreamEnded { step, result },
        })
    }

    fn on_done(&mut self, done: Done) -> Result<(), RuntimeError> {
        match done {
            Done::Tool {
                call,
                mut outcome,
                duration_ms,
            } => {
                self.writer.secrets().redact_in_place(&mut outcome.content);
                let changes = self.tools.take_file_changes(&call.id);
                let child = self.tools.take_child_run(&call.id);
                self.work.tools.retain(|(id, _)| *id != call.id);
                self.happen(Happening::ToolEnded(ToolEnd {
                    call_id: call.id,
                    name: call.name,
                    outcome,
                    duration_ms,
                    changes,
                    child,
                }))
            }
            Done::Approval { call_id, answer } => self.happen(Happening::Answered {
                call_id,
                verdict: answer.verdict,
                scope: answer.scope,
                message: answer.recorded_message(),
            }),
            Done::Checked {
                call_id,
                mut failure,
            } => {
                if let Some(error) = &mut failure {
                    self.writer.secrets().redact_in_place(error);
                }
                self.happen(Happening::Checked { call_id, failure })
            }
            Done::Summary(mut result) => {
                self.work.summary = None;
                if let Err(e) = &mut result {
                    self.writer.secrets().redact_in_place(&mut e.message);
                }
                self.happen(Happening::SummaryEnded(result))
            }
            Done::Extraction {
                mut events,
                mut result,
            } => {
                self.work.extraction = None;
                let secrets = self.writer.secrets();
                for e in &mut events {
                    match &mut e.event {
                        StreamEvent::TextDelta { text } | StreamEvent::ReasoningDelta { text } => {
                            secrets.redact_in_place(text)
                        }
                        StreamEvent::Retrying { reason, .. } => secrets.redact_in_place(reason),
                        _ => {}
                    }
                }
                if let Err(e) = &mut result {
                    secrets.redact_in_place(&mut e.message);
                }
                let mut assembler = xcsh_machine::Assembler::default();
                for e in &events {
                    assembler.push(&e.event);
                }
                let answer = secrets.redact(&assembler.finish().text).into_owned();
                self.happen(Happening::ExtractionEnded {
                    events,
                    result,
                    answer,
                })
            }
        }
    }

    fn on_command(&mut self, cmd: Command) -> Result<(), RuntimeError> {
        match cmd {
            Command::Steer(text) => self.happen(Happening::Steer(text)),
            Command::FollowUp(text) => self.happen(Happening::FollowUp(text)),
            Command::Interrupt => self.happen(Happening::Interrupt),
            Command::Pending(reply) => {
                let _ = reply.send(self.journal.machine().pending());
                Ok(())
            }
        }
    }

    fn dispatch(&self, entry: EntryId) -> Dispatch {
        Dispatch {
            session_id: self.session.id.clone(),
            session_path: self.writer.path().to_path_buf(),
            entry,
        }
    }

    /// What the run has left, read from its machine, for a call that starts now
    /// (the `task` tool sizes its sub-agent from it, SPEC.md §29.3).
    fn headroom(&self) -> xcsh_ports::RunHeadroom {
        let machine = self.journal.machine();
        xcsh_ports::RunHeadroom {
            limits: machine.limits(),
            steps_in_window: machine.run().steps_in_window,
            spent: machine.spent(),
            cwd: self.session.cwd.clone(),
        }
    }

    fn act(&mut self, action: Action) -> Result<(), RuntimeError> {
        // What may come before the sync that is due: events, the sync itself, and a
        // tool call its executor starts gated. Anything else (a new action too) is
        // carried out after it.
        let before_sync = match &action {
            Action::Emit(_) | Action::Sync => true,
            Action::StartTool { call, .. } => self.tools.starts_gated(call),
            _ => false,
        };
        if !before_sync {
            self.sync_if_due()?;
        }
        match action {
            Action::Emit(event) => self.outbox.push(event),
            Action::Sync => {
                if self.sync_due.is_none() {
                    self.sync_due = Some(Durable::pending());
                }
            }
            Action::Release(entries) => {
                let released: Vec<Dispatch> =
                    entries.into_iter().map(|e| self.dispatch(e)).collect();
                self.tools.results_durable(&released);
            }
            Action::StartModel { step } => self.start_model(step),
            Action::CancelModel { .. } => {
                if let Some(token) = &self.work.step {
                    token.cancel();
                }
            }
            Action::StartTool { call, dispatched } => {
                let cancel = CancellationToken::new();
                self.work.tools.push((call.id.clone(), cancel.clone()));
                let progress = self.progress_sink(&call.id);
                let context = CallContext {
                    cancel,
                    progress,
                    dispatch: Some(self.dispatch(dispatched)),
                    run: Some(self.headroom()),
                    durable: match &self.sync_due {
                        Some((_, durable)) => durable.clone(),
                        None => Durable::now(),
                    },
                };
                self.work.tool_slots.dispatch(call, context);
            }
            Action::CancelTool { call_id } => {
                if let Some((_, token)) = self.work.tools.iter().find(|(id, _)| *id == call_id) {
                    token.cancel();
                }
                // A call still waiting for a slot settles without starting.
                self.work.tool_slots.cancel_waiting(&call_id);
            }
            Action::Check { call } => {
                // The check reads files: on the blocking pool, its result as mail.
                let tools = Arc::clone(&self.tools);
                let tx = self.mail.done_tx.clone();
                tokio::task::spawn_blocking(move || {
                    let failure = tools.check(&call);
                    let _ = tx.send(Done::Checked {
                        call_id: call.id,
                        failure,
                    });
                });
            }
            Action::Ask { call, waiting } => {
                // `Ask` is only in effect with an approver (see `Owner::new`).
                let Some(approver) = self.approver.clone() else {
                    return Ok(());
                };
                // The request is shown before the question is put.
                self.flush_events();
                let call_id = call.id.clone();
                let question = approver.decide(ApprovalRequest {
                    call,
                    cwd: self.session.cwd.clone(),
                    waiting,
                });
                let tx = self.mail.done_tx.clone();
                tokio::spawn(async move {
                    let answer = question.await;
                    let _ = tx.send(Done::Approval { call_id, answer });
                });
            }
            Action::Summarize { upto } => {
                let cancel = CancellationToken::new();
                self.work.summary = Some(cancel.clone());
                self.spawn_summary(upto, cancel);
            }
            Action::CancelSummary => {
                if let Some(token) = &self.work.summary {
                    token.cancel();
                }
            }
            Action::StartExtraction { turn } => self.start_extraction(turn),
            Action::CancelExtraction => {
                if let Some(token) = &self.work.extraction {
                    token.cancel();
                }
            }
            Action::WriteNotes(notes) => {
                let Some(memory) = &self.requests.memory else {
                    return Ok(());
                };
                let mut notes = notes;
                let secrets = self.writer.secrets();
                for n in &mut notes {
                    secrets.redact_in_place(&mut n.body);
                    secrets.redact_in_place(&mut n.description);
                }
                let snapshot = memory.store.write_all(&notes);
                self.happen(Happening::NotesWritten(snapshot))?;
            }
        }
        Ok(())
    }

    /// The extraction call over `turn` (SPEC.md §28.5): the fixed prompt and the
    /// current index as the system prompt, the filtered turn as the one message.
    fn start_extraction(&mut self, turn: Vec<xcsh_machine::Message>) {
        let Some(memory) = &self.requests.memory else {
            return;
        };
        let mut private = xcsh_tools::memory::Private::new(&memory.root);
        let text = super::memory::render_turn(turn, &mut private, self.writer.secrets());
        let system = match &self.requests.index {
            Some(index) => {
                super::memory::system_with_index(super::memory::EXTRACTION_PROMPT, index)
            }
            None => super::memory::EXTRACTION_PROMPT.to_string(),
        };
        let request = ModelRequest {
            system,
            messages: vec![xcsh_machine::Message::User {
                origin: xcsh_machine::UserOrigin::Prompt,
                text,
            }]
            .into(),
            tools: Vec::new(),
            max_output_tokens: self.journal.machine().limits().max_output_tokens,
        };
        let cancel = CancellationToken::new();
        self.work.extraction = Some(cancel.clone());
        super::memory::spawn_extraction(
            &self.requests.provider,
            request,
            cancel,
            self.mail.done_tx.clone(),
        );
    }

    fn start_model(&mut self, step: StepNo) {
        let cancel = CancellationToken::new();
        let request = self.request();
        let sink = StreamSink::new(step, self.mail.stream_tx.clone());
        // A provider that panics instead of returning its future fails the step
        // like any provider error; the run settles.
        let provider = Arc::clone(&self.requests.provider);
        let token = cancel.clone();
        let stream = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            provider.stream(StreamCall::new(request, sink, token))
        }))
        .unwrap_or_else(|_| {
            Box::pin(async {
                Err(ProviderError {
                    kind: ProviderErrorKind::Malformed,
                    message: "the provider panicked starting the request".into(),
                })
            })
        });
        self.work.model_calls.push(ModelCall {
            step,
            stream: CatchUnwind(stream),
        });
        self.work.step = Some(cancel);
    }

    /// The sink of call `id`'s transient output: each piece reaches the owner task
    /// and becomes a `ToolOutput` event (never an entry, never an input).
    fn progress_sink(&self, id: &CallId) -> ToolProgress {
        let tx = self.mail.progress_tx.clone();
        let id = id.clone();
        ToolProgress::new(move |stream, text| {
            // The run may be over (the receiver gone): the output is not needed.
            let _ = tx.send((id.clone(), stream, text.to_owned()));
        })
    }

    fn request(&self) -> ModelRequest {
        ModelRequest {
            system: self.system(),
            // Shared with the context: a pointer copy, not a copy of the messages.
            messages: self.journal.machine().context().messages().clone(),
            tools: self.requests.specs.clone(),
            max_output_tokens: self.journal.machine().limits().max_output_tokens,
        }
    }

    /// A summary is an ordinary model request over the middle of the context, with
    /// an instruction to summarize; its text is the summary.
    fn spawn_summary(&self, upto: usize, cancel: CancellationToken) {
        let mut messages = self.journal.machine().context().messages().prefix(upto);
        messages.push(xcsh_machine::Message::User {
            origin: xcsh_machine::UserOrigin::Prompt,
            text: SUMMARY_INSTRUCTION.to_string(),
        });
        let request = ModelRequest {
            system: self.system(),
            messages,
            tools: Vec::new(),
            max_output_tokens: self.journal.machine().limits().max_output_tokens,
        };
        super::inflight::spawn_side_call(
            &self.requests.provider,
            request,
            cancel,
            self.mail.done_tx.clone(),
            |text: &mut String, event| {
                if let StreamEvent::TextDelta { text: t } = event {
                    text.push_str(&t);
                }
            },
            |result, text| Done::Summary(result.map(|()| text)),
        );
    }

    fn cancel_all(&mut self) {
        let work = &self.work;
        for token in work.step.iter().chain(work.tools.iter().map(|(_, t)| t)) {
            token.cancel();
        }
        for token in work.summary.iter().chain(&work.extraction) {
            token.cancel();
        }
    }
}

/// The instruction appended to the middle of the context to make a summary.
pub const SUMMARY_INSTRUCTION: &str = "Summarize the conversation so far for your own later use: the user's goals, decisions made, files and facts learned, and work remaining. Be concise and specific.";
