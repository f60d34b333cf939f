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
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use xcsh_core::machine::{
    ApprovalScope, IgnoreReason, ProviderErrorKind, StepNo, UserOrigin, Verdict,
};
use xcsh_core::runtime::{ApprovalAnswer, ApprovalRequest, RunEvent};

use crate::cells::{Cell, NoticeLevel};
use crate::editor::{Editor, EditorOutcome};
use crate::markdown::MarkdownStream;
use crate::overlay::{Overlay, OverlayAction, OverlayOutcome};
use crate::status::{Footer, FooterState, StatusLine};
use crate::theme::Role;
use crate::tool_card::{ToolCard, ToolFinish};
use crate::{Theme, approval, pending};

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
    /// The first finished block carries the `•` marker.
    started: bool,
}

/// The reasoning being streamed (transient).
struct LiveReasoning {
    text: String,
}

/// The open approval question.
struct LiveQuestion {
    request: ApprovalRequest,
    /// The current content of the file an edit or write would change, read by the
    /// controller when the question came.
    current: Option<String>,
    /// `Some` while the user types the message of a denial (`m`).
    message: Option<String>,
}

/// Which part of the live area takes keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Focus {
    Editor,
    Question,
}

/// What the status line shows (the controller sets the fixed parts).
#[derive(Debug, Clone, Default)]
pub struct StatusInfo {
    pub provider: String,
    pub model: String,
    pub permissions: String,
    pub max_steps: u32,
    pub compact_at: u64,
    pub budget: u64,
    pub session_id: Option<String>,
}

/// The app: the live area's state and the history not yet written.
pub struct App {
    theme: Theme,
    info: StatusInfo,
    /// Cells finished but not yet written into the terminal's history.
    finished: Vec<Cell>,
    /// Lines rendered for history (finished stream blocks) waiting to be written.
    finished_lines: Vec<Line<'static>>,
    stream: Option<LiveStream>,
    reasoning: Option<LiveReasoning>,
    tools: Vec<ToolCard>,
    question: Option<LiveQuestion>,
    pending: Vec<(UserOrigin, String)>,
    editor: Editor,
    focus: Focus,
    overlay: Option<Box<dyn Overlay>>,
    /// The running turn: when it started, its step, its last context size, spend.
    turn: Option<Turn>,
    retry: Option<String>,
    context_tokens: u64,
    spent: u64,
    estimated: bool,
    show_reasoning: bool,
    ctrl_c_armed: bool,
    width: u16,
}

struct Turn {
    started_ms: u64,
    step: StepNo,
    steps: u32,
}

impl App {
    pub fn new(theme: Theme, info: StatusInfo, editor: Editor) -> App {
        App {
            theme,
            info,
            finished: Vec::new(),
            finished_lines: Vec::new(),
            stream: None,
            reasoning: None,
            tools: Vec::new(),
            question: None,
            pending: Vec::new(),
            editor,
            focus: Focus::Editor,
            overlay: None,
            turn: None,
            retry: None,
            context_tokens: 0,
            spent: 0,
            estimated: false,
            show_reasoning: false,
            ctrl_c_armed: false,
            width: 80,
        }
    }

    pub fn theme(&self) -> Theme {
        self.theme
    }

    pub fn info_mut(&mut self) -> &mut StatusInfo {
        &mut self.info
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
        self.finished.push(cell);
    }

    /// A line of information for history.
    pub fn notice(&mut self, level: NoticeLevel, text: impl Into<String>) {
        self.push_cell(Cell::Notice {
            level,
            text: text.into(),
        });
    }

    /// The lines to write into history now, rendered at `width`.
    pub fn take_history(&mut self, width: u16, now_ms: u64) -> Vec<Line<'static>> {
        self.width = width;
        let mut out = std::mem::take(&mut self.finished_lines);
        for cell in std::mem::take(&mut self.finished) {
            if !out.is_empty() || !matches!(cell, Cell::Assistant { .. }) {
                // One blank line between cells.
            }
            out.extend(cell.lines(width, now_ms, &self.theme));
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

    /// Draws the open overlay.
    pub fn render_overlay(&mut self, area: Rect, buf: &mut Buffer) {
        let theme = self.theme;
        if let Some(o) = &mut self.overlay {
            o.render(area, buf, &theme);
        }
    }

    // ---- run events ----

    /// A run event (`now_ms` since the UI started).
    pub fn on_run_event(&mut self, event: RunEvent, now_ms: u64) {
        match event {
            RunEvent::RunStarted { .. } => {
                self.turn = Some(Turn {
                    started_ms: now_ms,
                    step: 0,
                    steps: 0,
                });
                self.retry = None;
            }
            RunEvent::Notice { message } => self.notice(NoticeLevel::Info, message),
            RunEvent::StepStarted { step } => {
                if let Some(t) = &mut self.turn {
                    t.step = step;
                    t.steps += 1;
                }
            }
            RunEvent::TextDelta { text, .. } => {
                self.retry = None;
                self.end_reasoning();
                let width = self.body_width();
                let theme = self.theme;
                let stream = self.stream.get_or_insert_with(|| LiveStream {
                    markdown: MarkdownStream::new(),
                    started: false,
                });
                stream.markdown.push(&text);
                let lines = stream.markdown.take_finished(width, &theme);
                if !lines.is_empty() {
                    let first = !stream.started;
                    stream.started = true;
                    self.finished_lines
                        .extend(assistant_lines(lines, first, &self.theme));
                }
            }
            RunEvent::ReasoningDelta { text, .. } => {
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
                self.end_stream();
                if usage.context_tokens() > 0 {
                    self.context_tokens = usage.context_tokens();
                }
                self.estimated |= usage.estimated;
                if let Some(error) = error {
                    let text = if error.kind == ProviderErrorKind::ContextOverflow {
                        format!(
                            "the provider refused the request as too long for the model's context: {}",
                            error.message
                        )
                    } else {
                        format!("the model step failed: {}", error.message)
                    };
                    self.notice(NoticeLevel::Error, text);
                }
            }
            RunEvent::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => {
                let card = match self.tools.iter_mut().find(|c| c.call_id() == &call_id) {
                    Some(card) => card,
                    None => {
                        self.tools.push(ToolCard::new(call_id, name, arguments));
                        let last = self.tools.len() - 1;
                        &mut self.tools[last]
                    }
                };
                card.start(now_ms);
            }
            RunEvent::ToolOutput { call_id, text, .. } => {
                if let Some(card) = self.tools.iter_mut().find(|c| c.call_id() == &call_id) {
                    card.push_output(&text);
                }
            }
            RunEvent::ToolResult {
                call_id,
                name,
                status,
                content,
                synthetic,
                duration_ms,
                changes,
            } => {
                let mut card = match self.tools.iter().position(|c| c.call_id() == &call_id) {
                    Some(i) => self.tools.remove(i),
                    None => ToolCard::new(call_id.clone(), name, String::new()),
                };
                if self
                    .question
                    .as_ref()
                    .is_some_and(|q| q.request.call.id == call_id)
                {
                    self.question = None;
                    self.focus = Focus::Editor;
                }
                card.finish(ToolFinish {
                    status,
                    content,
                    duration_ms,
                    synthetic,
                    before: changes.into_iter().next().and_then(|c| c.before),
                });
                self.push_cell(Cell::Tool(card));
            }
            RunEvent::ApprovalRequested {
                call_id,
                name,
                arguments,
            } => {
                if !self.tools.iter().any(|c| c.call_id() == &call_id) {
                    self.tools.push(ToolCard::new(call_id, name, arguments));
                }
            }
            RunEvent::Approval {
                name, verdict, by, ..
            } => {
                if verdict == Verdict::Deny {
                    self.notice(NoticeLevel::Warning, format!("{name}: denied ({by:?})"));
                }
            }
            RunEvent::Queued { origin, text } => self.pending.push((origin, text)),
            RunEvent::Delivered { origin, text } => {
                if let Some(i) = self.pending.iter().position(|(o, t)| *o == origin && *t == text)
                {
                    self.pending.remove(i);
                }
                self.push_cell(Cell::User { text, origin });
            }
            RunEvent::CompactionStarted { tokens_before } => self.notice(
                NoticeLevel::Info,
                format!("compacting the conversation ({tokens_before} tokens)…"),
            ),
            RunEvent::Compacted {
                tokens_before,
                tokens_after,
            } => {
                self.context_tokens = tokens_after;
                self.notice(
                    NoticeLevel::Info,
                    format!("compacted: {tokens_before} → {tokens_after} tokens"),
                )
            }
            RunEvent::Retrying {
                attempt,
                delay_ms,
                reason,
                ..
            } => {
                self.retry = Some(format!(
                    "retrying in {}: {reason} (attempt {attempt})",
                    seconds(delay_ms)
                ));
            }
            RunEvent::Ignored {
                reason: IgnoreReason::NothingToCompact,
            } => self.notice(
                NoticeLevel::Info,
                "nothing to compact yet: the conversation has no earlier turn",
            ),
            RunEvent::Ignored { .. } => {}
            RunEvent::RunFinished {
                reason,
                steps,
                usage,
            } => {
                self.end_reasoning();
                self.end_stream();
                for card in std::mem::take(&mut self.tools) {
                    self.push_cell(Cell::Tool(card));
                }
                self.question = None;
                self.focus = Focus::Editor;
                self.spent = self.spent.saturating_add(usage.spend());
                self.estimated |= usage.estimated;
                let elapsed_ms = self
                    .turn
                    .take()
                    .map_or(0, |t| now_ms.saturating_sub(t.started_ms));
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

    /// The run's event stream ended (its result is in): what is still live goes
    /// into history.
    pub fn on_run_end(&mut self, now_ms: u64) {
        if self.turn.is_some() {
            self.end_reasoning();
            self.end_stream();
            for card in std::mem::take(&mut self.tools) {
                self.push_cell(Cell::Tool(card));
            }
            self.turn = None;
            let _ = now_ms;
        }
        self.question = None;
        self.focus = Focus::Editor;
        self.pending.clear();
    }

    /// An approval question came; `current` is the file's content an edit or
    /// write would change (read by the controller).
    pub fn ask(&mut self, request: ApprovalRequest, current: Option<String>) {
        self.question = Some(LiveQuestion {
            request,
            current,
            message: None,
        });
        self.focus = Focus::Question;
    }

    fn body_width(&self) -> u16 {
        self.width.saturating_sub(2).max(1)
    }

    fn end_stream(&mut self) {
        if let Some(mut stream) = self.stream.take() {
            let width = self.body_width();
            let lines = stream.markdown.finish(width, &self.theme);
            let first = !stream.started;
            if !lines.is_empty() {
                self.finished_lines
                    .extend(assistant_lines(lines, first, &self.theme));
            }
            self.finished_lines.push(Line::default());
        }
    }

    fn end_reasoning(&mut self) {
        if let Some(r) = self.reasoning.take() {
            if !r.text.trim().is_empty() {
                self.push_cell(Cell::Reasoning {
                    text: r.text,
                    expanded: self.show_reasoning,
                });
            }
        }
    }

    // ---- keys ----

    /// A key; the actions it asks for.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if let Some(overlay) = &mut self.overlay {
            return match overlay.on_key(key) {
                OverlayOutcome::Stay => Vec::new(),
                OverlayOutcome::Close => {
                    self.overlay = None;
                    Vec::new()
                }
                OverlayOutcome::Act(action) => {
                    self.overlay = None;
                    vec![Action::Overlay(action)]
                }
            };
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('t') if ctrl => return vec![Action::Transcript],
            KeyCode::Char('o') if ctrl => {
                self.show_reasoning = !self.show_reasoning;
                self.notice(
                    NoticeLevel::Info,
                    if self.show_reasoning {
                        "reasoning: shown in full from now on (Ctrl-O hides it)"
                    } else {
                        "reasoning: collapsed to one line from now on (Ctrl-O shows it)"
                    },
                );
                return Vec::new();
            }
            KeyCode::Char('c') if ctrl => return self.ctrl_c(),
            _ => {}
        }
        if key.code != KeyCode::Char('c') || !ctrl {
            self.ctrl_c_armed = false;
        }
        if self.focus == Focus::Question && self.question.is_some() {
            return self.question_key(key);
        }
        match self.editor.on_key(key) {
            EditorOutcome::Submit(text) => self.submit(text, false),
            EditorOutcome::Queue(text) => self.submit(text, true),
            EditorOutcome::Eof => {
                if self.working() {
                    self.notice(NoticeLevel::Info, "stopping the turn, then exiting");
                    vec![Action::Interrupt, Action::Exit]
                } else {
                    vec![Action::Exit]
                }
            }
            EditorOutcome::EscapeEmpty => {
                if self.question.is_some() {
                    self.focus = Focus::Question;
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Pasted text (bracketed paste): into the editor, newlines kept.
    pub fn on_paste(&mut self, text: &str) {
        if self.overlay.is_none() {
            if let Some(q) = &mut self.question {
                if let Some(m) = &mut q.message {
                    m.push_str(&text.replace(['\r', '\n'], " "));
                    return;
                }
            }
            self.focus = Focus::Editor;
            self.editor.on_paste(text);
        }
    }

    fn ctrl_c(&mut self) -> Vec<Action> {
        if self.working() {
            self.notice(NoticeLevel::Warning, "stopping the turn (Ctrl-C)");
            return vec![Action::Interrupt];
        }
        if !self.editor.is_empty() {
            self.editor.clear();
            return Vec::new();
        }
        if std::mem::replace(&mut self.ctrl_c_armed, true) {
            return vec![Action::Exit];
        }
        self.notice(NoticeLevel::Info, "Ctrl-C again or Ctrl-D to exit");
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
            if name == "queue" && self.working() {
                return vec![Action::FollowUp(arg)];
            }
            if name == "clear" {
                return vec![Action::Command { name, arg }];
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

    fn question_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some(q) = &mut self.question else {
            return Vec::new();
        };
        if let Some(message) = &mut q.message {
            match key.code {
                KeyCode::Enter => {
                    let message = message.trim().to_string();
                    return self.answer(Verdict::Deny, ApprovalScope::Once, Some(message));
                }
                KeyCode::Esc => q.message = None,
                KeyCode::Backspace => {
                    message.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    message.push(c)
                }
                _ => {}
            }
            return Vec::new();
        }
        match key.code {
            KeyCode::Char('y') => self.answer(Verdict::Allow, ApprovalScope::Once, None),
            KeyCode::Char('a') => self.answer(Verdict::Allow, ApprovalScope::Tool, None),
            KeyCode::Char('A') => self.answer(Verdict::Allow, ApprovalScope::Call, None),
            KeyCode::Char('n') => self.answer(Verdict::Deny, ApprovalScope::Once, None),
            KeyCode::Char('m') => {
                q.message = Some(String::new());
                Vec::new()
            }
            KeyCode::Esc | KeyCode::Tab => {
                self.focus = Focus::Editor;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn answer(
        &mut self,
        verdict: Verdict,
        scope: ApprovalScope,
        message: Option<String>,
    ) -> Vec<Action> {
        self.question = None;
        self.focus = Focus::Editor;
        let message = message.filter(|m| !m.is_empty());
        vec![Action::Answer(ApprovalAnswer {
            verdict,
            scope,
            message,
        })]
    }

    /// Time passed: disarms nothing, but animations move (the caller redraws).
    pub fn tick(&mut self, _now_ms: u64) {}

    // ---- the live area ----

    /// The live area at `width`, at most `max_height` rows, and where the editor's
    /// cursor is in it.
    pub fn render_live(&mut self, width: u16, max_height: u16, now_ms: u64) -> Buffer {
        self.width = width;
        let theme = self.theme;
        let mut top: Vec<Line<'static>> = Vec::new();
        if let Some(r) = &self.reasoning {
            let lines: Vec<&str> = r.text.lines().collect();
            let from = lines.len().saturating_sub(3);
            top.push(Line::styled("∴ thinking…", theme.style(Role::Reasoning)));
            for l in &lines[from..] {
                let safe = xcsh_inspect::terminal::neutralize(l).into_owned();
                top.extend(crate::text::wrap(
                    &Line::styled(format!("  {safe}"), theme.style(Role::Reasoning)),
                    width,
                ));
            }
        }
        if let Some(s) = &self.stream {
            let tail = s.markdown.tail(self.body_width(), &theme);
            top.extend(assistant_lines(tail, !s.started, &theme));
        }
        for card in &self.tools {
            if self
                .question
                .as_ref()
                .is_some_and(|q| q.request.call.id == *card.call_id())
            {
                continue;
            }
            top.extend(card.lines(width, now_ms, &theme));
        }
        let mut middle: Vec<Line<'static>> = Vec::new();
        if let Some(q) = &self.question {
            let budget = max_height.saturating_sub(8).max(4);
            middle.extend(approval::lines(
                &q.request,
                q.current.as_deref(),
                q.message.as_deref(),
                self.focus == Focus::Question,
                width,
                budget,
                &theme,
            ));
        }
        middle.extend(pending::lines(&self.pending, width, &theme));
        let status = StatusLine {
            provider: &self.info.provider,
            model: &self.info.model,
            permissions: &self.info.permissions,
            step: self.turn.as_ref().map(|t| (t.steps, self.info.max_steps)),
            context_tokens: self.context_tokens,
            compact_at: self.info.compact_at,
            spent: self.spent,
            budget: self.info.budget,
            estimated: self.estimated,
            elapsed_ms: self
                .turn
                .as_ref()
                .map(|t| now_ms.saturating_sub(t.started_ms)),
            retry: self.retry.as_deref(),
            session_id: self.info.session_id.as_deref(),
        }
        .line(width, &theme);
        let footer = Footer {
            state: if self.question.is_some() && self.focus == Focus::Question {
                FooterState::Asking
            } else if self.working() {
                FooterState::Working
            } else {
                FooterState::Idle
            },
        }
        .line(width, &theme);
        let editor_height = self.editor.desired_height(width);
        let fixed = u16::try_from(middle.len())
            .unwrap_or(u16::MAX)
            .saturating_add(editor_height)
            .saturating_add(2);
        let room = max_height.saturating_sub(fixed);
        let top_len = u16::try_from(top.len()).unwrap_or(u16::MAX);
        if top_len > room {
            top.drain(..usize::from(top_len - room));
        }
        let height = (u16::try_from(top.len()).unwrap_or(u16::MAX))
            .saturating_add(fixed)
            .min(max_height)
            .max(1);
        let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
        let mut y = 0u16;
        for part in [&top, &middle] {
            let h = u16::try_from(part.len()).unwrap_or(u16::MAX).min(height - y);
            Paragraph::new(part.clone()).render(Rect::new(0, y, width, h), &mut buf);
            y += h;
        }
        let eh = editor_height.min(height.saturating_sub(y + 2).max(1));
        let editor_area = Rect::new(0, y, width, eh);
        self.editor.render(editor_area, &mut buf, &theme);
        if self.focus == Focus::Editor && self.overlay.is_none() {
            if let Some(Position { x, y }) = self.editor.cursor_position(editor_area) {
                if x < width && y < height {
                    let cell = &mut buf[(x, y)];
                    cell.set_style(cell.style().add_modifier(ratatui::style::Modifier::REVERSED));
                }
            }
        }
        y += eh;
        for line in [status, footer] {
            if y < height {
                Paragraph::new(line).render(Rect::new(0, y, width, 1), &mut buf);
                y += 1;
            }
        }
        buf
    }
}

/// Assistant lines: the first block's first line with the `•` marker, every line
/// indented by two columns.
fn assistant_lines(lines: Vec<Line<'static>>, first: bool, theme: &Theme) -> Vec<Line<'static>> {
    lines
        .into_iter()
        .enumerate()
        .map(|(i, mut line)| {
            let marker = if first && i == 0 {
                Span::styled("• ", theme.style(Role::Assistant))
            } else {
                Span::raw("  ")
            };
            line.spans.insert(0, marker);
            line
        })
        .collect()
}

fn seconds(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{} s", ms.div_ceil(1000))
    }
}
