//! A tool call's card in the history: the call in a readable form, a spinner and
//! elapsed time while it runs (with bash's live output), then its outcome: bash's
//! exit code and last lines, a coloured diff for `edit`/`write`, a one-line count
//! for read/list/grep/glob, the first lines of an error. Denied and cancelled calls
//! look different from failures, which look different from successes.

pub mod args;
pub mod outcome;

use std::collections::VecDeque;

use ratatui::text::{Line, Span};
use xcsh_log::FileChange;
use xcsh_machine::{CallId, SyntheticReason, ToolStatus};

use crate::Theme;
use crate::diffview::Diff;
use crate::fmt;
use crate::theme::Role;
use args::ToolArgs;

/// The spinner's frames; one every [`SPINNER_FRAME_MS`].
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
pub const SPINNER_FRAME_MS: u64 = 80;
/// Output lines a card shows (live or finished) in its compact form.
pub const TAIL_LINES: usize = 5;
/// Rows of diff a card shows in its compact form.
pub const DIFF_LINES: usize = 16;
/// Lines of an error or denial a card shows in its compact form.
pub const ERROR_LINES: usize = 3;
/// Lines the transient tail keeps (older ones are only counted).
pub const TRANSIENT_KEEP: usize = 64;
/// Bytes of one live output line kept (the rest of a very long line is dropped).
const TRANSIENT_LINE_BYTES: usize = 1024;

/// The spinner frame at `now_ms`.
pub fn spinner(now_ms: u64) -> char {
    SPINNER[usize::try_from((now_ms / SPINNER_FRAME_MS) % 10).unwrap_or(0)]
}

/// TRANSIENT: the live output of a running call (bash), as the executor reports it
/// in progress events. Never recorded and never a source of truth: it is bounded
/// (the last [`TRANSIENT_KEEP`] lines; older ones are only counted) and dropped
/// when the call finishes, whose recorded result replaces it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransientTail {
    lines: VecDeque<String>,
    /// The line still being written (no newline yet).
    partial: String,
    /// Complete lines pushed out of `lines`.
    dropped: usize,
}

impl TransientTail {
    /// Appends a chunk of output. A carriage return not followed by a newline
    /// starts the current line over (progress bars redraw themselves that way).
    pub fn push(&mut self, chunk: &str) {
        let mut rest = chunk;
        while !rest.is_empty() {
            let cut = rest.find(['\n', '\r']).unwrap_or(rest.len());
            let room = TRANSIENT_LINE_BYTES.saturating_sub(self.partial.len());
            let piece = &rest[..cut];
            let end = floor_boundary(piece, room);
            self.partial.push_str(&piece[..end]);
            rest = &rest[cut..];
            if let Some(after) = rest
                .strip_prefix("\r\n")
                .or_else(|| rest.strip_prefix('\n'))
            {
                self.lines.push_back(std::mem::take(&mut self.partial));
                if self.lines.len() > TRANSIENT_KEEP {
                    self.lines.pop_front();
                    self.dropped += 1;
                }
                rest = after;
            } else if let Some(after) = rest.strip_prefix('\r') {
                self.partial.clear();
                rest = after;
            }
        }
    }

    /// The last `n` lines (the partial one included) and how many came before.
    fn tail(&self, n: usize) -> (usize, Vec<&str>) {
        let mut all: Vec<&str> = self.lines.iter().map(String::as_str).collect();
        if !self.partial.is_empty() {
            all.push(&self.partial);
        }
        let skip = all.len().saturating_sub(n);
        (self.dropped + skip, all.split_off(skip))
    }
}

fn floor_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    (0..=at).rev().find(|i| s.is_char_boundary(*i)).unwrap_or(0)
}

/// What an `edit` or `write` found in its file, from the recorded [`FileChange`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Before {
    /// No file change was recorded (an old log, a failed call): an edit's diff is
    /// then drawn from `old_string` to `new_string`.
    #[default]
    NotRecorded,
    /// The call created the file.
    Created,
    /// The file's content before the call.
    Content(String),
}

impl From<&FileChange> for Before {
    fn from(change: &FileChange) -> Before {
        match &change.before {
            Some(text) => Before::Content(text.clone()),
            None => Before::Created,
        }
    }
}

/// How a call settled, as the card's mark shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// `✓`
    Succeeded,
    /// `✗`: the tool failed, or the call could not run.
    Failed,
    /// `⊘ denied`: the permission policy or the user said no.
    Denied,
    /// `■ cancelled`: an interrupt stopped it, or it never ran because of one.
    Cancelled,
}

impl Outcome {
    fn of(status: ToolStatus, synthetic: Option<SyntheticReason>) -> Outcome {
        match synthetic {
            Some(SyntheticReason::Denied) => Outcome::Denied,
            Some(SyntheticReason::Interrupted) => Outcome::Cancelled,
            Some(
                SyntheticReason::InvalidArguments
                | SyntheticReason::UnknownTool
                | SyntheticReason::OutputLimit
                | SyntheticReason::Lost
                | SyntheticReason::DuplicateId
                | SyntheticReason::WouldFail,
            ) => Outcome::Failed,
            None => match status {
                ToolStatus::Ok => Outcome::Succeeded,
                ToolStatus::Error => Outcome::Failed,
                ToolStatus::Cancelled => Outcome::Cancelled,
            },
        }
    }

    fn mark(self) -> (&'static str, Role) {
        match self {
            Outcome::Succeeded => ("✓", Role::Success),
            Outcome::Failed => ("✗", Role::Error),
            Outcome::Denied => ("⊘", Role::Warning),
            Outcome::Cancelled => ("■", Role::Warning),
        }
    }
}

/// How a call settled: the `tool_result` (or `synthetic_result`) the app saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFinish {
    pub status: ToolStatus,
    /// The result text handed to the model.
    pub content: String,
    pub duration_ms: u64,
    /// Set when the call did not run (denied, interrupted, invalid, …).
    pub synthetic: Option<SyntheticReason>,
    /// The file's content before an `edit`/`write` (from the recorded change).
    pub before: Before,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Finished {
    outcome: Outcome,
    content: String,
    duration_ms: u64,
    synthetic: Option<SyntheticReason>,
    /// The change of a successful `edit`/`write`.
    diff: Option<Diff>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Known, not started (dispatched with others, or before its approval).
    Queued,
    /// Waiting for the user's approval.
    Asking,
    Running {
        started_ms: u64,
        live: TransientTail,
    },
    Finished(Box<Finished>),
}

/// One tool call's card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCard {
    call_id: CallId,
    name: String,
    args: ToolArgs,
    state: State,
}

impl ToolCard {
    /// A card for the call `name(arguments)`; `arguments` is the JSON text the
    /// model produced (anything renders, parsed or not).
    pub fn new(call_id: CallId, name: &str, arguments: &str) -> ToolCard {
        ToolCard {
            call_id,
            name: name.to_owned(),
            args: ToolArgs::parse(name, arguments),
            state: State::Queued,
        }
    }

    pub fn call_id(&self) -> &CallId {
        &self.call_id
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn args(&self) -> &ToolArgs {
        &self.args
    }

    /// The call waits for the user's approval.
    pub fn ask(&mut self) {
        if matches!(self.state, State::Queued) {
            self.state = State::Asking;
        }
    }

    /// The call was dispatched at `now_ms`.
    pub fn start(&mut self, now_ms: u64) {
        if !matches!(self.state, State::Finished(_)) {
            self.state = State::Running {
                started_ms: now_ms,
                live: TransientTail::default(),
            };
        }
    }

    /// TRANSIENT live output of the running call (ignored once it finished).
    pub fn push_output(&mut self, chunk: &str) {
        if let State::Running { live, .. } = &mut self.state {
            live.push(chunk);
        }
    }

    /// The call settled; the live output is dropped for the recorded result.
    pub fn finish(&mut self, finish: ToolFinish) {
        let outcome = Outcome::of(finish.status, finish.synthetic);
        let diff = match outcome {
            Outcome::Succeeded => self.diff(&finish.before),
            Outcome::Failed | Outcome::Denied | Outcome::Cancelled => None,
        };
        self.state = State::Finished(Box::new(Finished {
            outcome,
            content: finish.content,
            duration_ms: finish.duration_ms,
            synthetic: finish.synthetic,
            diff,
        }));
    }

    /// How it settled, once it did.
    pub fn outcome(&self) -> Option<Outcome> {
        match &self.state {
            State::Finished(f) => Some(f.outcome),
            State::Queued | State::Asking | State::Running { .. } => None,
        }
    }

    pub fn is_finished(&self) -> bool {
        self.outcome().is_some()
    }

    /// The change an `edit` or `write` made, from what the file held before.
    fn diff(&self, before: &Before) -> Option<Diff> {
        match (&self.args, before) {
            (ToolArgs::Write { content, .. }, Before::Content(b)) => {
                Some(Diff::new(Some(b), content))
            }
            (ToolArgs::Write { content, .. }, Before::Created | Before::NotRecorded) => {
                Some(Diff::new(None, content))
            }
            (
                ToolArgs::Edit {
                    old_string,
                    new_string,
                    replace_all,
                    ..
                },
                before,
            ) => {
                if let Before::Content(b) = before
                    && let Ok(after) = args::apply_edit(b, old_string, new_string, *replace_all)
                {
                    return Some(Diff::new(Some(b), &after));
                }
                Some(Diff::new(Some(old_string), new_string))
            }
            _ => None,
        }
    }

    /// The card at `width` columns in its compact form (the history).
    pub fn lines(&self, width: u16, now_ms: u64, theme: &Theme) -> Vec<Line<'static>> {
        self.render(width, now_ms, theme, false)
    }

    /// The card with its whole output and diff (the transcript overlay).
    pub fn lines_full(&self, width: u16, now_ms: u64, theme: &Theme) -> Vec<Line<'static>> {
        self.render(width, now_ms, theme, true)
    }

    fn render(&self, width: u16, now_ms: u64, theme: &Theme, full: bool) -> Vec<Line<'static>> {
        let (mark, meta, body) = match &self.state {
            State::Queued => (
                Span::styled("○", theme.style(Role::Dim)),
                vec![Span::styled(" · waiting", theme.style(Role::Dim))],
                Vec::new(),
            ),
            State::Asking => (
                Span::styled("?", theme.style(Role::Warning)),
                vec![Span::styled(
                    " · waiting for approval",
                    theme.style(Role::Warning),
                )],
                Vec::new(),
            ),
            State::Running { started_ms, live } => {
                let elapsed = now_ms.saturating_sub(*started_ms);
                let keep = if full { TRANSIENT_KEEP } else { TAIL_LINES };
                let (earlier, tail) = live.tail(keep);
                let mut body = earlier_line(earlier, theme);
                body.extend(
                    tail.iter()
                        .map(|l| Line::from(Span::styled(fmt::clean(l), theme.style(Role::Dim)))),
                );
                (
                    Span::styled(spinner(now_ms).to_string(), theme.style(Role::Tool)),
                    vec![Span::styled(
                        format!(" · {}", fmt::duration(elapsed)),
                        theme.style(Role::Dim),
                    )],
                    body,
                )
            }
            State::Finished(f) => {
                let (symbol, role) = f.outcome.mark();
                let (meta, body) = self.finished(f, width, theme, full);
                (Span::styled(symbol, theme.style(role)), meta, body)
            }
        };
        let mut out = vec![self.header(mark, meta, width, theme)];
        let mut body = body;
        // The transcript shows a command the header may cut whole: one of several
        // lines, or one too long for the header's room beside the name and meta.
        if full
            && let ToolArgs::Bash { command, .. } = &self.args
            && (command.contains('\n')
                || fmt::width(command) > usize::from(width).saturating_sub(32))
        {
            let mut cmd = fmt::plain(&fmt::clean(command), theme.style(Role::Text));
            cmd.append(&mut body);
            body = cmd;
        }
        if !body.is_empty() {
            out.extend(fmt::prefixed(
                body,
                width,
                Span::styled("  └ ", theme.style(Role::Dim)),
                Span::raw("    "),
            ));
        }
        out
    }

    /// The header row: mark, tool name, the call in a readable form, then `meta`.
    fn header(
        &self,
        mark: Span<'static>,
        meta: Vec<Span<'static>>,
        width: u16,
        theme: &Theme,
    ) -> Line<'static> {
        let name = Span::styled(self.name.clone(), theme.style(Role::Tool));
        let fixed = 2 + fmt::width(&name.content) + 1;
        let meta_width: usize = meta.iter().map(|s| fmt::width(&s.content)).sum();
        let room = usize::from(width).saturating_sub(fixed + meta_width).max(8);
        let mut spans = vec![mark, Span::raw(" "), name, Span::raw(" ")];
        spans.extend(describe(&self.args, room, theme));
        spans.extend(meta);
        Line::from(fmt::clip_spans(spans, usize::from(width)))
    }

    /// A finished card's header meta (` · exit 1 · 3.2s`) and body.
    fn finished(
        &self,
        f: &Finished,
        width: u16,
        theme: &Theme,
        full: bool,
    ) -> (Vec<Span<'static>>, Vec<Line<'static>>) {
        let dim = theme.style(Role::Dim);
        let mut meta = Vec::new();
        let mut body = Vec::new();
        let sep = || Span::styled(" · ", dim);
        match f.outcome {
            Outcome::Denied => {
                meta.extend([sep(), Span::styled("denied", theme.style(Role::Warning))]);
            }
            Outcome::Cancelled => {
                meta.extend([sep(), Span::styled("cancelled", theme.style(Role::Warning))]);
            }
            Outcome::Failed | Outcome::Succeeded => {}
        }
        let lines_of = |role: Role, max: usize| {
            let cleaned = fmt::clean(f.content.trim_end());
            let mut lines = fmt::plain(&cleaned, theme.style(role));
            let more = lines.len().saturating_sub(max);
            if more > 0 && !full {
                lines.truncate(max);
                lines.push(crate::diffview::more_line(more, "", width, theme));
            }
            lines
        };
        match (&self.args, f.synthetic) {
            (_, Some(reason)) => {
                let role = match f.outcome {
                    Outcome::Failed => Role::Error,
                    Outcome::Succeeded | Outcome::Denied | Outcome::Cancelled => Role::Warning,
                };
                if reason == SyntheticReason::Lost {
                    meta.extend([sep(), Span::styled("lost", theme.style(Role::Error))]);
                }
                body = lines_of(role, ERROR_LINES);
            }
            (ToolArgs::Bash { .. }, None) => {
                let result = outcome::bash(&f.content);
                if let Some((text, ending)) = result.ending() {
                    let role = match (f.outcome, ending) {
                        (Outcome::Cancelled, _) => Role::Dim,
                        (_, outcome::Ending::Signal) => Role::Warning,
                        (_, outcome::Ending::Success) => Role::Dim,
                        (_, outcome::Ending::Failure) => Role::Error,
                    };
                    meta.extend([sep(), Span::styled(text, theme.style(role))]);
                }
                // The header says "cancelled" already.
                let cancelled = format!("bash {}", xcsh_tools::CANCELLED_NOTE);
                for note in result.notes.iter().filter(|n| !n.starts_with(&cancelled)) {
                    body.push(Line::from(Span::styled(
                        fmt::clean(note),
                        theme.style(Role::Warning),
                    )));
                }
                let (skip, output) = result.tail(if full { usize::MAX } else { TAIL_LINES });
                // In history a line takes at most two rows (a minified file or a
                // progress line of 5,000 characters would fill the screen); the
                // transcript shows it whole.
                let most = if full {
                    usize::MAX
                } else {
                    usize::from(width.saturating_sub(4)).max(1) * 2
                };
                body.extend(earlier_line(skip, theme));
                body.extend(
                    output
                        .iter()
                        .map(|l| Line::from(Span::styled(fmt::clip(&fmt::clean(l), most), dim))),
                );
            }
            (ToolArgs::Edit { .. } | ToolArgs::Write { .. }, None) if f.diff.is_some() => {
                if let Some(diff) = &f.diff {
                    meta.push(sep());
                    meta.extend(diff.stat().spans(theme));
                    let inner = width.saturating_sub(4);
                    body = if full {
                        diff.lines(inner, theme)
                    } else {
                        diff.lines_cut(inner, DIFF_LINES, " (Ctrl-T shows all)", theme)
                    };
                }
            }
            (_, None) if f.outcome == Outcome::Failed => body = lines_of(Role::Error, ERROR_LINES),
            (_, None) if f.outcome == Outcome::Cancelled => body = lines_of(Role::Warning, 1),
            (_, None) => match outcome::summary(&self.name, &f.content) {
                Some(summary) if !full => body.push(Line::from(Span::styled(summary, dim))),
                Some(_) | None => body = lines_of(Role::Dim, ERROR_LINES),
            },
        }
        if f.synthetic.is_none() {
            meta.extend([sep(), Span::styled(fmt::duration(f.duration_ms), dim)]);
        }
        (meta, body)
    }
}

/// `… N earlier lines`, or nothing.
fn earlier_line(n: usize, theme: &Theme) -> Vec<Line<'static>> {
    outcome::earlier(n)
        .map(|text| Line::from(Span::styled(text, theme.style(Role::Dim))))
        .into_iter()
        .collect()
}

/// The call in a readable form, at most `max` columns: bash's command (first
/// line), the path of edit/write/list, `path:10-30` for read, the pattern and
/// path of grep/glob, an unknown tool's compact arguments.
pub fn describe(args: &ToolArgs, max: usize, theme: &Theme) -> Vec<Span<'static>> {
    let text = theme.style(Role::Text);
    let dim = theme.style(Role::Dim);
    let clean = |s: &str| fmt::clean(s).replace('\n', " ");
    let spans = match args {
        ToolArgs::Bash { command, .. } => {
            let mut lines = command.trim().lines();
            let first = clean(lines.next().unwrap_or(""));
            let more = lines.next().is_some();
            let mut spans = vec![Span::styled(first, text)];
            if more {
                spans.push(Span::styled(" …", dim));
            }
            spans
        }
        ToolArgs::Edit { path, .. } | ToolArgs::Write { path, .. } => {
            vec![Span::styled(fmt::shorten_path(&clean(path), max), text)]
        }
        ToolArgs::Read {
            path,
            offset,
            limit,
        } => match ToolArgs::read_range(*offset, *limit) {
            Some(range) => {
                let room = max.saturating_sub(range.len() + 1);
                vec![
                    Span::styled(fmt::shorten_path(&clean(path), room), text),
                    Span::styled(format!(":{range}"), dim),
                ]
            }
            None => vec![Span::styled(fmt::shorten_path(&clean(path), max), text)],
        },
        ToolArgs::List { path, recursive } => {
            let suffix = if *recursive { " (recursive)" } else { "" };
            let room = max.saturating_sub(suffix.len());
            vec![
                Span::styled(
                    fmt::shorten_path(&clean(path.as_deref().unwrap_or(".")), room),
                    text,
                ),
                Span::styled(suffix, dim),
            ]
        }
        ToolArgs::Grep {
            pattern,
            path,
            glob,
        } => {
            let mut spans = vec![Span::styled(clean(pattern), text)];
            if let Some(path) = path {
                spans.push(Span::styled(" in ", dim));
                spans.push(Span::styled(clean(path), text));
            }
            if let Some(glob) = glob {
                spans.push(Span::styled(format!(" ({})", clean(glob)), dim));
            }
            spans
        }
        ToolArgs::Glob { pattern, path } => {
            let mut spans = vec![Span::styled(clean(pattern), text)];
            if let Some(path) = path {
                spans.push(Span::styled(" in ", dim));
                spans.push(Span::styled(clean(path), text));
            }
            spans
        }
        ToolArgs::Other { compact } => vec![Span::styled(clean(compact), dim)],
    };
    fmt::clip_spans(spans, max)
}

#[cfg(test)]
mod tests;
