//! The UI's state: what is live on screen, what waits to be written into history,
//! and the keys' meaning in each state. Pure: run events and keys in (time passed
//! in as `now_ms`), actions for the controller and frames out.
//!
//! Architecture Invariant: the app never runs anything or touches the log; every
//! effect is an [`Action`] the controller (the binary's `interactive` module)
//! carries out. What it holds of the past is only what has not been written into
//! the terminal's history yet; the transient parts (the streaming message, the
//! live reasoning, running tool cards and their output) are `Live*` types.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::Line;
use xcsh_machine::{CallId, Delta, IgnoreReason, Permissions, ProviderErrorKind, Verdict};
use xcsh_runtime::{ApprovalAnswer, RunEvent};

use crate::Theme;
use crate::approval::Approval;
use crate::cells::{Cell, Level, assistant_lines};
use crate::editor::{Editor, EditorOutcome};
use crate::fmt;
use crate::markdown::MarkdownStream;
use crate::overlay::{Overlay, OverlayAction};
use crate::pending::Pending;
use crate::status::{FooterState, Retry, Turn};
use crate::tool_card::{Before, ToolFinish};
use follow::StepSoFar;
use tools::LiveTools;

/// What the controller is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Start a turn with this message (idle).
    Prompt(String),
    /// A message for the running turn, delivered after the step's tools.
    Steer(String),
    /// A message for when the running turn would finish.
    FollowUp(String),
    /// A slash command (`/tree` is `Command { name: "tree", arg: "" }`).
    Command { name: String, arg: String },
    /// The answer to the open approval question.
    Answer(ApprovalAnswer),
    /// Stop the running turn.
    Interrupt,
    /// Open the transcript overlay (Ctrl-T).
    Transcript,
    /// Leave xcsh (once the running turn, if any, has been stopped).
    Exit,
    /// What an overlay asked for.
    Overlay(OverlayAction),
}

/// The message being streamed (transient: the recorded step is the truth).
struct LiveStream {
    markdown: MarkdownStream,
    /// A finished block of it was written (it carried the `•` marker).
    started: bool,
}

/// The reasoning being streamed (transient).
struct LiveReasoning {
    text: String,
}

/// The task plan as the running turn last set it (transient: the `plan` call's
/// recorded result is the truth); shown as a checklist while the turn runs.
struct LivePlan {
    plan: xcsh_log::plan::Plan,
}

/// The open approval question.
struct LiveQuestion {
    call_id: CallId,
    /// The tool asked about (`a` allows it for the session).
    tool: String,
    approval: Approval,
    /// `Some` while the user types the message of a denial (`m`).
    message: Option<String>,
}

/// Which part of the live area takes keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Focus {
    Editor,
    Question,
}

/// What waits to be written into history, in order.
enum Item {
    Cell(Cell),
    /// Finished blocks of the streamed message, laid out; `gap` when they begin a
    /// message (a blank line before them).
    Lines {
        lines: Vec<Line<'static>>,
        gap: bool,
    },
}

/// The fixed parts of the status line (the controller sets them).
#[derive(Debug, Clone)]
pub struct StatusInfo {
    pub provider: String,
    pub model: String,
    pub permissions: Permissions,
    pub max_steps: u32,
    pub compact_at: u64,
    pub budget: u64,
    pub session_id: Option<String>,
    /// The tools' sandbox (`workspace-write`, `read-only`, `off`), when known.
    pub sandbox: Option<String>,
}

/// The app: the live area's state and the history not yet written.
pub struct App {
    theme: Theme,
    info: StatusInfo,
    queue: Vec<Item>,
    /// Notices that came while a message streamed (see `notice`).
    deferred: Vec<Cell>,
    /// Something was written into history (items get a blank line between).
    wrote_any: bool,
    stream: Option<LiveStream>,
    reasoning: Option<LiveReasoning>,
    tools: LiveTools,
    question: Option<LiveQuestion>,
    plan: Option<LivePlan>,
    pending: Pending,
    editor: Editor,
    focus: Focus,
    /// When a key last changed the draft (ms on the controller's clock; transient): a
    /// question that opens while a draft is being typed leaves it the keys.
    key_at_ms: Option<u64>,
    overlay: Option<Box<dyn Overlay>>,
    /// What the step in flight has streamed so far, for the transcript (transient).
    so_far: StepSoFar,
    /// The running turn (its step and start, for the status line).
    turn: Option<Turn>,
    retry: Option<Retry>,
    context_tokens: Option<u64>,
    spent: u64,
    estimated: bool,
    show_reasoning: bool,
    ctrl_c_armed: bool,
    /// `/clear` asked for a clear screen (the controller's screen does it).
    clear_requested: bool,
    width: u16,
}

impl App {
    pub fn new(theme: Theme, info: StatusInfo, editor: Editor) -> App {
        App {
            theme,
            info,
            queue: Vec::new(),
            deferred: Vec::new(),
            wrote_any: false,
            stream: None,
            reasoning: None,
            tools: LiveTools::default(),
            question: None,
            plan: None,
            pending: Pending::default(),
            editor,
            focus: Focus::Editor,
            key_at_ms: None,
            overlay: None,
            so_far: StepSoFar::default(),
            turn: None,
            retry: None,
            context_tokens: None,
            spent: 0,
            estimated: false,
            show_reasoning: false,
            ctrl_c_armed: false,
            clear_requested: false,
            width: 80,
        }
    }

    pub fn theme(&self) -> Theme {
        self.theme
    }

    pub fn info_mut(&mut self) -> &mut StatusInfo {
        &mut self.info
    }

    /// The context size the status line shows, for a session continued or resumed:
    /// its last step's (`None` before any), until the next step reports its own.
    pub fn set_context(&mut self, tokens: Option<u64>) {
        self.context_tokens = tokens;
    }

    /// `/new`: the status line shows nothing of the session left (its id, context
    /// and spend) until the next prompt starts the new one.
    pub fn forget_session(&mut self) {
        self.info.session_id = None;
        self.context_tokens = None;
        self.spent = 0;
        self.estimated = false;
    }

    pub fn editor_mut(&mut self) -> &mut Editor {
        &mut self.editor
    }

    /// A turn is running.
    pub fn working(&self) -> bool {
        self.turn.is_some()
    }

    /// Something on screen moves with time (a spinner, an elapsed time): the
    /// controller ticks the app while this holds, and not otherwise.
    pub fn animating(&self) -> bool {
        self.turn.is_some()
    }

    /// Adds a finished cell to history (the user's prompt once recorded, a
    /// command's output, cells rebuilt from the log on resume).
    pub fn push_cell(&mut self, cell: Cell) {
        self.queue.push(Item::Cell(cell));
    }

    /// A line of information for history. One that comes while a message or its
    /// reasoning streams is written after it: a notice never splits a message.
    pub fn notice(&mut self, level: Level, text: impl Into<String>) {
        let cell = Cell::Notice {
            level,
            text: text.into(),
        };
        if self.stream.is_some() || self.reasoning.is_some() {
            self.deferred.push(cell);
        } else {
            self.push_cell(cell);
        }
    }

    /// Writes the notices held back while a message streamed, once it has ended.
    fn flush_deferred(&mut self) {
        if self.stream.is_none() && self.reasoning.is_none() {
            self.queue.extend(
                std::mem::take(&mut self.deferred)
                    .into_iter()
                    .map(Item::Cell),
            );
        }
    }

    /// `/clear`: the controller clears the screen; the session keeps everything
    /// (Ctrl-T shows it).
    pub fn clear_view(&mut self) {
        self.clear_requested = true;
        self.wrote_any = false;
    }

    /// Whether `/clear` was asked for since the last call.
    pub fn take_clear(&mut self) -> bool {
        std::mem::take(&mut self.clear_requested)
    }

    /// The lines to write into history now, laid out at `width`.
    pub fn take_history(&mut self, width: u16, now_ms: u64) -> Vec<Line<'static>> {
        self.width = width;
        let mut out = Vec::new();
        for item in std::mem::take(&mut self.queue) {
            match item {
                Item::Cell(cell) => {
                    if self.wrote_any {
                        out.push(Line::default());
                    }
                    out.extend(cell.lines(width, now_ms, &self.theme));
                }
                Item::Lines { lines, gap } => {
                    if gap && self.wrote_any {
                        out.push(Line::default());
                    }
                    out.extend(lines);
                }
            }
            self.wrote_any = true;
        }
        out
    }

    /// Opens an overlay (the controller built it from the log).
    pub fn open_overlay(&mut self, overlay: Box<dyn Overlay>) {
        self.overlay = Some(overlay);
    }

    pub fn overlay_open(&self) -> bool {
        self.overlay.is_some()
    }

    // ---- run events ----

    /// A run event (`now_ms` since the UI started).
    pub fn on_run_event(&mut self, event: RunEvent, now_ms: u64) {
        self.follow(&event);
        match event {
            RunEvent::RunStarted { .. } => {
                self.turn = Some(Turn {
                    step: 0,
                    max_steps: self.info.max_steps,
                    started_ms: now_ms,
                });
                self.retry = None;
                // The budget is the run's (`max_tokens`): the spend shown is the
                // running (else the last) run's.
                self.spent = 0;
                self.estimated = false;
            }
            RunEvent::Notice { message } => self.notice(Level::Info, message),
            // The index is in the request; the history shows what extraction wrote.
            RunEvent::MemoryIndex { .. } | RunEvent::MemoryExtracted { .. } => {}
            RunEvent::MemoryWritten { written, .. } => {
                self.notice(Level::Info, format!("memory: wrote {}", written.join(", ")))
            }
            RunEvent::StepStarted { .. } => {
                if let Some(t) = &mut self.turn {
                    t.step = t.step.saturating_add(1);
                }
            }
            RunEvent::Retrying {
                attempt,
                delay_ms,
                reason,
                ..
            } => {
                self.retry = Some(Retry {
                    reason: format!("{reason} (attempt {attempt})"),
                    at_ms: now_ms.saturating_add(delay_ms),
                });
            }
            RunEvent::TextDelta(Delta { text, .. }) => {
                self.retry = None;
                self.end_reasoning();
                let stream = self.stream.get_or_insert_with(|| LiveStream {
                    markdown: MarkdownStream::new(),
                    started: false,
                });
                stream.markdown.push(&text);
                self.take_stream_blocks(false);
            }
            RunEvent::ReasoningDelta(Delta { text, .. }) => {
                self.retry = None;
                self.reasoning
                    .get_or_insert_with(|| LiveReasoning {
                        text: String::new(),
                    })
                    .text
                    .push_str(&text);
            }
            RunEvent::StepFinished { usage, error, .. } => {
                self.end_reasoning();
                self.take_stream_blocks(true);
                if usage.context_tokens() > 0 {
                    self.context_tokens = Some(usage.context_tokens());
                }
                self.spent = self.spent.saturating_add(usage.spend());
                self.estimated |= usage.estimated;
                // A step that failed otherwise ends the run: the turn's end line says
                // why, once (as a resumed session shows it).
                if let Some(error) = error
                    && error.kind == ProviderErrorKind::ContextOverflow
                {
                    self.notice(
                        Level::Error,
                        format!(
                            "the provider refused the request as too long for the model's context: {}",
                            error.message
                        ),
                    );
                }
            }
            RunEvent::ApprovalRequested {
                call_id,
                name,
                arguments,
            } => self.tools.asked(&call_id, &name, &arguments),
            RunEvent::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => self.tools.dispatched(&call_id, &name, &arguments, now_ms),
            RunEvent::ToolOutput { call_id, text, .. } => self.tools.output(&call_id, &text),
            RunEvent::ToolResult {
                call_id,
                name,
                status,
                content,
                arguments,
                synthetic,
                duration_ms,
                changes,
            } => {
                if self.question.as_ref().is_some_and(|q| q.call_id == call_id) {
                    self.question = None;
                    self.focus = Focus::Editor;
                }
                let finish = ToolFinish {
                    status,
                    content,
                    duration_ms,
                    synthetic,
                    before: changes.first().map_or(Before::NotRecorded, Before::from),
                };
                let arguments = arguments.as_deref().unwrap_or_default();
                for card in self.tools.finished(&call_id, &name, arguments, finish) {
                    self.push_cell(Cell::Tool(card));
                }
            }
            RunEvent::Plan { call_id, plan } => {
                // The call's card, if still waiting for history, becomes the plan's cell.
                let card = self.queue.iter().rposition(
                    |item| matches!(item, Item::Cell(Cell::Tool(c)) if c.call_id() == &call_id),
                );
                match card {
                    Some(i) => self.queue[i] = Item::Cell(Cell::Plan(plan.clone())),
                    None => self.push_cell(Cell::Plan(plan.clone())),
                }
                self.plan = Some(LivePlan { plan });
            }
            RunEvent::Approval {
                name, verdict, by, ..
            } => {
                if verdict == Verdict::Deny {
                    self.notice(
                        Level::Warning,
                        format!("{name}: denied ({})", fmt::approved_by(by)),
                    );
                }
            }
            RunEvent::Queued { origin, text } => self.pending.queued(origin, &text),
            RunEvent::Delivered { origin, text } => {
                self.pending.delivered(origin, &text);
                self.push_cell(Cell::user_message(origin, &text));
            }
            RunEvent::CompactionStarted { tokens_before } => self.notice(
                Level::Info,
                format!("compacting the conversation ({tokens_before} tokens)…"),
            ),
            RunEvent::Compacted {
                tokens_before,
                tokens_after,
            } => {
                self.context_tokens = Some(tokens_after);
                self.push_cell(Cell::Compaction {
                    tokens_before,
                    tokens_after,
                });
            }
            RunEvent::Ignored {
                reason: IgnoreReason::NothingToCompact,
            } => self.notice(
                Level::Info,
                "nothing to compact yet: the conversation has no earlier turn",
            ),
            RunEvent::Ignored { .. } => {}
            RunEvent::RunFinished {
                reason,
                steps,
                usage,
            } => {
                self.settle_live();
                self.estimated |= usage.estimated;
                let elapsed_ms = self
                    .turn
                    .take()
                    .map(|t| now_ms.saturating_sub(t.started_ms));
                self.retry = None;
                self.push_cell(Cell::TurnEnd {
                    reason,
                    steps,
                    usage,
                    elapsed_ms,
                });
            }
        }
    }

    /// The run's event stream ended: what is still live goes into history.
    pub fn on_run_end(&mut self) {
        self.settle_live();
        self.so_far = StepSoFar::default();
        self.refresh_overlay();
        self.turn = None;
        self.retry = None;
        for item in self.pending.take() {
            self.notice(
                Level::Warning,
                format!("not delivered ({:?}): {}", item.origin, item.text),
            );
        }
    }

    fn settle_live(&mut self) {
        self.end_reasoning();
        self.take_stream_blocks(true);
        for card in self.tools.drain() {
            self.push_cell(Cell::Tool(card));
        }
        self.question = None;
        self.focus = Focus::Editor;
        self.plan = None;
    }

    fn body_width(&self) -> u16 {
        self.width.saturating_sub(2).max(1)
    }

    /// Moves the streamed message's finished blocks into history; with `all`, the
    /// rest too (the step ended).
    fn take_stream_blocks(&mut self, all: bool) {
        let width = self.body_width();
        let theme = self.theme;
        let Some(stream) = &mut self.stream else {
            return;
        };
        let body = if all {
            stream.markdown.finish(width, &theme)
        } else {
            stream.markdown.take_finished(width, &theme)
        };
        if !body.is_empty() {
            let gap = !stream.started;
            let lines = assistant_lines(body, self.width, gap, &theme);
            stream.started = true;
            self.queue.push(Item::Lines { lines, gap });
        }
        if all {
            self.stream = None;
            self.flush_deferred();
        }
    }

    fn end_reasoning(&mut self) {
        if let Some(r) = self.reasoning.take()
            && !r.text.trim().is_empty()
        {
            self.push_cell(Cell::Reasoning {
                text: r.text,
                expanded: self.show_reasoning,
            });
        }
        self.flush_deferred();
    }

    // ---- keys ----

    /// A key that came at `now_ms`: [`on_key`](Self::on_key), and, when it changed
    /// the draft, the time, which tells a question that opens just after whether the
    /// user is typing (an answer, a move, a command is no typing).
    pub fn on_key_at(&mut self, key: KeyEvent, now_ms: u64) -> Vec<Action> {
        let before = self.editor.text().to_string();
        let actions = self.on_key(key);
        if actions.iter().any(|a| matches!(a, Action::Answer(_))) {
            // Answering, the user is with the questions: the next one takes the keys.
            self.key_at_ms = None;
        } else if self.editor.text() != before {
            self.key_at_ms = Some(now_ms);
        }
        actions
    }

    /// A key; the actions it asks for.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if self.overlay.is_some() {
            return self.overlay_key(key);
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // In a history search Ctrl-C is the editor's: it cancels the search.
        let is_ctrl_c = ctrl && key.code == KeyCode::Char('c') && !self.editor.is_searching();
        if !is_ctrl_c {
            self.ctrl_c_armed = false;
        }
        match key.code {
            KeyCode::Char('t') if ctrl => return vec![Action::Transcript],
            KeyCode::Char('o') if ctrl => {
                self.show_reasoning = !self.show_reasoning;
                self.notice(
                    Level::Info,
                    if self.show_reasoning {
                        "reasoning: shown in full from now on (Ctrl-O collapses it)"
                    } else {
                        "reasoning: one line from now on (Ctrl-O shows it)"
                    },
                );
                return Vec::new();
            }
            _ if is_ctrl_c => return self.ctrl_c(),
            _ => {}
        }
        if self.focus == Focus::Question && self.question.is_some() {
            return self.question_key(key);
        }
        // A question waits behind a draft: Esc goes back to it and keeps the draft.
        if self.question.is_some()
            && key.code == KeyCode::Esc
            && key.modifiers.is_empty()
            && self.editor.popup().is_none()
            && !self.editor.is_searching()
        {
            self.focus = Focus::Question;
            return Vec::new();
        }
        // Esc and an answer key typed quickly arrive as Alt-KEY: the answer.
        if let Some(actions) = self.alt_answer(key) {
            return actions;
        }
        // Tab queues a follow-up while a turn runs; on an idle prompt it never sends.
        self.editor.set_queueing(self.working());
        match self.editor.on_key(key) {
            EditorOutcome::Submit(text) => self.submit(text, false),
            EditorOutcome::Queue(text) => self.submit(text, true),
            EditorOutcome::Eof => {
                if self.working() {
                    self.notice(Level::Info, "stopping the turn, then exiting");
                    vec![Action::Interrupt, Action::Exit]
                } else {
                    vec![Action::Exit]
                }
            }
            EditorOutcome::Cancel => {
                if self.question.is_some() {
                    self.focus = Focus::Question;
                    Vec::new()
                } else if self.working() {
                    self.interrupt("Esc")
                } else {
                    Vec::new()
                }
            }
            EditorOutcome::Interrupt { .. } => self.ctrl_c(),
            EditorOutcome::Nothing
            | EditorOutcome::Changed
            | EditorOutcome::Cleared
            | EditorOutcome::Search(_) => Vec::new(),
        }
    }

    /// Pasted text (bracketed paste): into the editor, newlines kept, a long paste
    /// as a placeholder the editor sends as the text (into a denial's message, on
    /// one line).
    pub fn on_paste(&mut self, text: &str) {
        if self.overlay.is_some() {
            return;
        }
        if let Some(q) = &mut self.question
            && let Some(m) = &mut q.message
        {
            m.push_str(&text.replace(['\r', '\n'], " "));
            return;
        }
        self.focus = Focus::Editor;
        self.editor.on_paste(text);
    }

    /// Stops the running turn (`key` names what asked, in the notice).
    fn interrupt(&mut self, key: &str) -> Vec<Action> {
        self.notice(Level::Warning, format!("stopping the turn ({key})"));
        vec![Action::Interrupt]
    }

    fn ctrl_c(&mut self) -> Vec<Action> {
        if self.working() {
            return self.interrupt("Ctrl-C");
        }
        if !self.editor.is_empty() {
            self.editor.clear();
            return Vec::new();
        }
        if std::mem::replace(&mut self.ctrl_c_armed, true) {
            return vec![Action::Exit];
        }
        Vec::new()
    }

    fn submit(&mut self, text: String, queue: bool) -> Vec<Action> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Vec::new();
        }
        if let Some(command) = trimmed.strip_prefix('/') {
            let (name, arg) = command.split_once(' ').unwrap_or((command, ""));
            let (name, arg) = (name.to_string(), arg.trim().to_string());
            // `/queue` without its text is the command's, which asks for it.
            if name == "queue" && self.working() && !arg.is_empty() {
                return vec![Action::FollowUp(arg)];
            }
            return vec![Action::Command { name, arg }];
        }
        let text = trimmed.to_string();
        match (self.working(), queue) {
            (true, false) => vec![Action::Steer(text)],
            (true, true) => vec![Action::FollowUp(text)],
            (false, _) => vec![Action::Prompt(text)],
        }
    }

    fn footer_state(&self) -> FooterState {
        match &self.question {
            Some(q) if self.focus == Focus::Question => {
                if q.message.is_some() {
                    FooterState::DenyMessage
                } else {
                    FooterState::Asking
                }
            }
            _ if self.editor.is_searching() => FooterState::Searching,
            Some(_) => FooterState::QuestionWaits,
            _ if self.working() => FooterState::Working,
            _ if self.ctrl_c_armed => FooterState::ConfirmExit,
            _ => FooterState::Idle,
        }
    }
}

mod follow;
mod live;
mod question;
#[cfg(test)]
mod tests;
mod tools;
