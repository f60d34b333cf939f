//! The history model: the conversation as cells (user messages, assistant
//! messages, reasoning, tool cards, notices, compactions, turn ends), each drawn as
//! wrapped, styled lines; and the same cells rebuilt from a session log's entries
//! (resuming a session, the transcript overlay): the log is the truth, cells are
//! its view. A grant (`a`, `A`) is said where the live view said it.

use std::collections::BTreeMap;

use ratatui::text::{Line, Span};
use xcsh_log::plan::{Plan, plan_history};
use xcsh_log::{Body, Dag, Entry, LogError, Record, SessionLog};
use xcsh_machine::{
    ApprovalScope, CallId, Decision, EntryId, StepOutcome, StopReason, ToolCall, ToolStatus, Usage,
    UserOrigin, Verdict,
};

use crate::Theme;
use crate::fmt;
use crate::text::Flow;
use crate::theme::Role;
use crate::tool_card::{Before, ToolCard, ToolFinish};

/// How much a notice matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// One item of the history.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A user message: a prompt, or a steer or follow-up once delivered.
    User {
        origin: UserOrigin,
        text: String,
    },
    /// An assistant message's text (Markdown, rendered at the width it is drawn).
    Assistant {
        markdown: String,
    },
    /// A step's reasoning; collapsed it is one line.
    Reasoning {
        text: String,
        expanded: bool,
    },
    Tool(ToolCard),
    Notice {
        level: Level,
        text: String,
    },
    /// The context was compacted.
    Compaction {
        tokens_before: u64,
        tokens_after: u64,
    },
    /// The task plan changed (an ok `plan` call): the whole plan now.
    Plan(Plan),
    /// A run (turn) ended.
    TurnEnd {
        reason: StopReason,
        steps: u32,
        usage: Usage,
        /// From its prompt to its end, when known.
        elapsed_ms: Option<u64>,
    },
}

impl Cell {
    /// The cell of a user message from its text as the log records it (and the model
    /// reads it): a prompt shows what was typed, with `(attached: P, …)` for the files
    /// its `@path` mentions attached ([`crate::mention::split`]). The one maker of a
    /// user message's cell, live and rebuilt from the log alike.
    pub fn user_message(origin: UserOrigin, recorded: &str) -> Cell {
        let text = match (origin, crate::mention::split(recorded)) {
            (UserOrigin::Prompt, (typed, attached)) if !attached.is_empty() => {
                format!("{typed}\n(attached: {})", attached.join(", "))
            }
            _ => recorded.to_string(),
        };
        Cell::User { origin, text }
    }

    /// The cell at `width` columns (no blank line around it: see [`lines_of`]).
    pub fn lines(&self, width: u16, now_ms: u64, theme: &Theme) -> Vec<Line<'static>> {
        match self {
            Cell::User { origin, text } => {
                let kind = match origin {
                    UserOrigin::Prompt => None,
                    UserOrigin::Steer => Some("steer · "),
                    UserOrigin::FollowUp => Some("follow-up · "),
                    UserOrigin::Undo => Some("undo note · "),
                };
                let mut body = fmt::plain(&fmt::clean(text.trim_end()), theme.style(Role::Text));
                if let (Some(kind), Some(first)) = (kind, body.first_mut()) {
                    first
                        .spans
                        .insert(0, Span::styled(kind, theme.style(Role::Dim)));
                }
                fmt::prefixed(
                    body,
                    width,
                    Span::styled("› ", theme.style(Role::User)),
                    Span::raw("  "),
                )
            }
            Cell::Assistant { markdown } => {
                let source = fmt::clean(markdown.trim());
                let body = crate::markdown::render(&source, width.saturating_sub(2).max(1), theme);
                assistant_lines(body, width, true, theme)
            }
            Cell::Reasoning { text, expanded } => {
                let style = theme.style(Role::Reasoning);
                let text = fmt::clean(text.trim());
                let count = text.lines().count();
                if !*expanded {
                    let plural = if count == 1 { "line" } else { "lines" };
                    let line = format!(
                        "∴ thinking · {count} {plural} (Ctrl-T shows it; Ctrl-O, the next in full)"
                    );
                    return vec![Line::from(Span::styled(
                        fmt::clip(&line, usize::from(width)),
                        style,
                    ))];
                }
                let mut out = vec![Line::from(Span::styled("∴ thinking", style))];
                out.extend(fmt::prefixed(
                    fmt::plain(&text, style),
                    width,
                    Span::raw("  "),
                    Span::raw("  "),
                ));
                out
            }
            Cell::Tool(card) => card.lines(width, now_ms, theme),
            Cell::Notice { level, text } => {
                let (mark, role) = match level {
                    Level::Info => ("· ", Role::Dim),
                    Level::Warning => ("! ", Role::Warning),
                    Level::Error => ("✗ ", Role::Error),
                };
                notice_lines(
                    fmt::plain(&fmt::clean(text.trim_end()), theme.style(role)),
                    width,
                    Span::styled(mark, theme.style(role)),
                )
            }
            Cell::Compaction {
                tokens_before,
                tokens_after,
            } => vec![Line::from(Span::styled(
                fmt::clip(
                    &format!(
                        "≡ compacted · {} → {} tokens",
                        fmt::tokens(*tokens_before),
                        fmt::tokens(*tokens_after)
                    ),
                    usize::from(width),
                ),
                theme.style(Role::Dim),
            ))],
            Cell::Plan(plan) => crate::plan::history_lines(plan, width, theme),
            Cell::TurnEnd {
                reason,
                steps,
                usage,
                elapsed_ms,
            } => turn_end(reason, *steps, usage, *elapsed_ms, width, theme),
        }
    }
}

/// A notice's lines at `width`: `mark` before the first row, two spaces before the
/// others. A row of a listing, `  LABEL  DESCRIPTION` (indented, two or more spaces
/// after the label, as `/help` writes its commands and keys), wraps under its
/// description, when that leaves the description at least half the width; any other
/// line wraps under the text's start.
fn notice_lines(lines: Vec<Line<'static>>, width: u16, mark: Span<'static>) -> Vec<Line<'static>> {
    let inner = width.saturating_sub(2);
    let half = usize::from(inner) / 2;
    let rows = lines.into_iter().flat_map(|line| {
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        let hang = description_column(&text)
            .filter(|column| usize::from(inner).saturating_sub(*column) >= half)
            .map(|column| vec![Span::raw(" ".repeat(column))])
            .unwrap_or_default();
        crate::text::indented(&line, inner, Vec::new(), hang, Flow::Words)
    });
    indented(rows.collect(), width, mark)
}

/// Where the description of a listing row `  LABEL  DESCRIPTION` starts (display
/// columns), if `text` is one: indented, a label, two or more spaces, a description.
fn description_column(text: &str) -> Option<usize> {
    let label = text.trim_start_matches(' ');
    if label.len() == text.len() || label.is_empty() {
        return None;
    }
    let gap = label.find("  ")?;
    let description = label[gap..].trim_start_matches(' ');
    if description.is_empty() {
        return None;
    }
    Some(fmt::width(&text[..text.len() - description.len()]))
}

/// What a user's `a` (`scope` tool) or `A` (call) allowed `tool` for the rest of
/// the session, as history says it: the one maker of these words, live when the
/// question is answered and rebuilt from the log; `None` for `y` (this call only).
pub fn grant_notice(tool: &str, scope: ApprovalScope) -> Option<String> {
    let tool = fmt::clean(tool);
    match scope {
        ApprovalScope::Tool => Some(format!(
            "{tool}: allowed without asking for the rest of this session (a)"
        )),
        ApprovalScope::Call => Some(format!(
            "{tool}: this exact call allowed without asking for the rest of this session (A)"
        )),
        ApprovalScope::Once => None,
    }
}

/// `body` (already wrapped to `width - 2`) with `first` before its first row and
/// two spaces before the others.
/// An assistant message's rendered body (Markdown at `width - 2`) laid out at
/// `width`: the `•` marker on the first line when `first`, every other line
/// indented. The one layout of assistant text, streamed in pieces or whole.
pub fn assistant_lines(
    body: Vec<Line<'static>>,
    width: u16,
    first: bool,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let marker = if first {
        Span::styled("• ", theme.style(Role::Assistant))
    } else {
        Span::raw("  ")
    };
    indented(body, width, marker)
}

fn indented(body: Vec<Line<'static>>, width: u16, first: Span<'static>) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for line in body {
        let prefix = if out.is_empty() {
            first.clone()
        } else {
            Span::raw("  ")
        };
        let mut spans = vec![prefix];
        spans.extend(line.spans);
        out.push(Line::from(fmt::clip_spans(spans, usize::from(width))).style(line.style));
    }
    if out.is_empty() {
        out.push(Line::from(first));
    }
    out
}

/// `─ done · 3 steps · 1.2k in / 340 out · 14.0s`, or why the turn stopped.
fn turn_end(
    reason: &StopReason,
    steps: u32,
    usage: &Usage,
    elapsed_ms: Option<u64>,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let what = fmt::why_stopped(reason);
    let role = match reason {
        StopReason::Completed => Role::Dim,
        StopReason::Interrupted
        | StopReason::MaxSteps { .. }
        | StopReason::MaxTokens { .. }
        | StopReason::OutputLimit
        | StopReason::ContentFilter => Role::Warning,
        StopReason::ProviderError { .. }
        | StopReason::ContextOverflow { .. }
        | StopReason::Crashed => Role::Error,
    };
    let approx = if usage.estimated { "~" } else { "" };
    let plural = if steps == 1 { "step" } else { "steps" };
    let mut facts = format!(
        " · {steps} {plural} · {approx}{} in / {approx}{} out",
        fmt::tokens(usage.context_tokens()),
        fmt::tokens(usage.output_tokens)
    );
    if let Some(ms) = elapsed_ms {
        facts.push_str(&format!(" · {}", fmt::duration(ms)));
    }
    let line = Line::from(vec![
        Span::styled(format!("─ {}", fmt::clean(&what)), theme.style(role)),
        Span::styled(facts, theme.style(Role::Dim)),
    ]);
    crate::text::wrap(&line, width)
        .into_iter()
        .map(|l| Line::from(fmt::clip_spans(l.spans, usize::from(width))))
        .collect()
}

/// Every cell at `width`, one blank line between cells.
pub fn lines_of(cells: &[Cell], width: u16, now_ms: u64, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push(Line::default());
        }
        out.extend(cell.lines(width, now_ms, theme));
    }
    out
}

/// The transcript (Ctrl-T): every cell at `width`, one blank line between cells,
/// tool calls with their whole output and reasoning in full.
pub fn transcript_lines(cells: &[Cell], width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push(Line::default());
        }
        match cell {
            Cell::Tool(card) => out.extend(card.lines_full(width, 0, theme)),
            Cell::Reasoning { text, .. } => out.extend(
                Cell::Reasoning {
                    text: text.clone(),
                    expanded: true,
                }
                .lines(width, 0, theme),
            ),
            other => out.extend(other.lines(width, 0, theme)),
        }
    }
    out
}

/// The cells of a step's message: its reasoning (collapsed), then its text, each
/// when not blank. The one maker of them: from a `step` entry, and in the transcript
/// for the step in flight, from what it has streamed so far.
pub fn step_cells(reasoning: &str, text: &str) -> Vec<Cell> {
    let mut cells = Vec::new();
    if !reasoning.trim().is_empty() {
        cells.push(Cell::Reasoning {
            text: reasoning.to_string(),
            expanded: false,
        });
    }
    if !text.trim().is_empty() {
        cells.push(Cell::Assistant {
            markdown: text.to_string(),
        });
    }
    cells
}

/// The conversation on the branch from the root to `leaf`, as cells rebuilt from
/// the recorded entries.
pub fn from_entries(log: &SessionLog, leaf: EntryId) -> Result<Vec<Cell>, LogError> {
    if log.get(leaf).is_none() {
        return Err(log.no_entry(leaf));
    }
    let path = Dag::from_log(log).path_to_root(leaf)?;
    let entries: Vec<&Entry> = path.iter().filter_map(|id| log.get(*id)).collect();
    Ok(from_branch(log, &entries))
}

/// The cells of `entries` (a branch, root first); `log` resolves the ids that
/// decisions name (undelivered messages).
pub fn from_branch(log: &SessionLog, entries: &[&Entry]) -> Vec<Cell> {
    let mut cells = Vec::new();
    let mut cards: BTreeMap<CallId, usize> = BTreeMap::new();
    let mut turn_start = None;
    let mut answers = Answers::default();
    // The ok results of valid `plan` calls become the plan's cells, not tool cards.
    let plans: BTreeMap<EntryId, Plan> = plan_history(entries.iter().copied())
        .into_iter()
        .map(|u| (u.entry, u.plan))
        .collect();
    for entry in entries {
        // An `a`/`A` said so as it was answered, before the call's card (which goes to
        // history when the call ends): here, before the card its dispatch makes.
        if let Some(text) = answers
            .on(entry)
            .and_then(|(call, scope)| grant_notice(&call.name, scope))
        {
            cells.push(Cell::Notice {
                level: Level::Info,
                text,
            });
        }
        if let (Some(plan), Body::Record(Record::ToolResult(r))) =
            (plans.get(&entry.id), &entry.body)
        {
            let i = card_index(&mut cells, &mut cards, &r.call_id, &r.name, "{}");
            if let Some(cell) = cells.get_mut(i) {
                *cell = Cell::Plan(plan.clone());
            }
            continue;
        }
        match &entry.body {
            Body::Record(record) => {
                on_record(record, entry, &mut cells, &mut cards, &mut turn_start)
            }
            Body::Decision(decision) => {
                on_decision(log, decision, entry, &mut cells, &mut cards, turn_start)
            }
            Body::Unknown { type_name, .. } => cells.push(Cell::Notice {
                level: Level::Warning,
                text: format!(
                    "entry #{} has a type this version does not know: {type_name}",
                    entry.id
                ),
            }),
        }
    }
    cells
}

fn on_record<'e>(
    record: &Record,
    entry: &'e Entry,
    cells: &mut Vec<Cell>,
    cards: &mut BTreeMap<CallId, usize>,
    turn_start: &mut Option<&'e Entry>,
) {
    let mut notice = |level, text| cells.push(Cell::Notice { level, text });
    match record {
        Record::UserMessage { text, .. } => {
            // Call ids are unique within a run only (the faux provider's repeat).
            cards.clear();
            *turn_start = Some(entry);
            cells.push(Cell::user_message(UserOrigin::Prompt, text));
        }
        Record::Step(step) => {
            if let StepOutcome::Failed { error } = &step.outcome {
                notice(
                    Level::Error,
                    format!(
                        "the provider failed: {}: {}",
                        fmt::kind_name(error.kind),
                        error.message
                    ),
                );
            }
            cells.extend(step_cells(&step.message.reasoning, &step.message.text));
        }
        Record::ToolResult(result) => {
            let finish = ToolFinish {
                status: result.outcome.status,
                content: result.outcome.content.clone(),
                duration_ms: result.duration_ms,
                synthetic: None,
                before: result.changes.first().map(Before::from).unwrap_or_default(),
            };
            let i = card_index(cells, cards, &result.call_id, &result.name, "{}");
            if let Some(Cell::Tool(card)) = cells.get_mut(i) {
                card.finish(finish);
            }
        }
        Record::CompactionSummary {
            error: Some(error), ..
        } => notice(
            Level::Warning,
            format!("compaction failed: {}", error.message),
        ),
        Record::Recovered { note } => notice(Level::Warning, note.clone()),
        // A `/compact` starts a run of its own: its end is timed from here, as live.
        Record::Compact { .. } => *turn_start = Some(entry),
        Record::Undo { run, files, .. } => {
            let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            let plural = if files.len() == 1 { "file" } else { "files" };
            notice(
                Level::Info,
                format!(
                    "undo: {} {plural} of the run at #{run} put back ({})",
                    files.len(),
                    names.join(", ")
                ),
            );
        }
        Record::Branch { .. } => notice(
            Level::Info,
            format!(
                "continued from entry #{} on a new branch",
                entry.parent.map_or(0, |p| p.0)
            ),
        ),
        Record::Workspace { to, .. } => notice(Level::Info, format!("the workspace is now {to}")),
        Record::MemorySnapshot(m) => notice(Level::Info, m.summary()),
        Record::MemoryForget(m) => notice(Level::Info, m.summary()),
        Record::MemoryIndex(_) | Record::MemoryExtraction(_) | Record::Foreign(_) => {}
        // The status line shows the provider and model the session runs with.
        Record::Provider(_) => {}
        Record::CompactionSummary { error: None, .. }
        | Record::Session(_)
        | Record::Label { .. }
        | Record::Steer { .. }
        | Record::FollowUp { .. }
        | Record::Interrupt {}
        | Record::LateEvent { .. }
        | Record::ApprovalAnswer { .. }
        // The call's card shows the error, from its synthetic result.
        | Record::CheckFailed { .. } => {}
    }
}

fn on_decision(
    log: &SessionLog,
    decision: &Decision,
    entry: &Entry,
    cells: &mut Vec<Cell>,
    cards: &mut BTreeMap<CallId, usize>,
    turn_start: Option<&Entry>,
) {
    match decision {
        Decision::Delivered { origin, text, .. } => cells.push(Cell::user_message(*origin, text)),
        Decision::ToolDispatched { call, .. } => {
            card_index(cells, cards, &call.id, &call.name, &call.arguments);
        }
        Decision::SyntheticResult {
            call,
            reason,
            content,
        } => {
            let i = card_index(cells, cards, &call.id, &call.name, &call.arguments);
            if let Some(Cell::Tool(card)) = cells.get_mut(i) {
                card.finish(ToolFinish {
                    status: ToolStatus::Error,
                    content: content.clone(),
                    duration_ms: 0,
                    synthetic: Some(*reason),
                    before: Before::NotRecorded,
                });
            }
        }
        Decision::Compacted {
            tokens_before,
            tokens_after,
            ..
        } => cells.push(Cell::Compaction {
            tokens_before: *tokens_before,
            tokens_after: *tokens_after,
        }),
        Decision::RunFinished(end) => {
            if !end.undelivered.is_empty() {
                let texts: Vec<String> = end
                    .undelivered
                    .iter()
                    .filter_map(|id| match log.get(*id).map(|e| &e.body) {
                        Some(Body::Record(Record::Steer { text } | Record::FollowUp { text })) => {
                            Some(fmt::clip(text.trim(), 60))
                        }
                        _ => None,
                    })
                    .collect();
                cells.push(Cell::Notice {
                    level: Level::Warning,
                    text: format!("not delivered: {}", texts.join(" · ")),
                });
            }
            let elapsed_ms = turn_start
                .and_then(|start| u64::try_from((entry.ts - start.ts).num_milliseconds()).ok());
            cells.push(Cell::TurnEnd {
                reason: end.reason.clone(),
                steps: end.steps,
                usage: end.usage,
                elapsed_ms,
            });
        }
        Decision::StepStarted { .. }
        | Decision::Approval { .. }
        | Decision::CompactionStarted { .. }
        | Decision::Ignored { .. } => {}
    }
}

/// The user's answers on a branch followed to the calls they allowed. The machine
/// grants on an `allow` answer to a call waiting for one and dispatches that call at
/// once, so a grant is the `tool_dispatched` after its `approval_answer`; an answer
/// the machine ignored (`late_approval`) dispatches nothing and grants nothing.
#[derive(Default)]
struct Answers {
    /// The calls answered `a` or `A`, not yet dispatched.
    allowed: BTreeMap<CallId, ApprovalScope>,
}

impl Answers {
    /// The call `entry` dispatches on a user's `a` or `A`, with that scope.
    fn on<'e>(&mut self, entry: &'e Entry) -> Option<(&'e ToolCall, ApprovalScope)> {
        match &entry.body {
            // Call ids are unique within a run only.
            Body::Record(Record::UserMessage { .. }) => {
                self.allowed.clear();
                None
            }
            Body::Record(Record::ApprovalAnswer {
                call_id,
                verdict,
                scope,
                ..
            }) => {
                match (verdict, scope) {
                    (Verdict::Allow, ApprovalScope::Tool | ApprovalScope::Call) => {
                        self.allowed.insert(call_id.clone(), *scope);
                    }
                    (Verdict::Allow, ApprovalScope::Once) | (Verdict::Deny, _) => {
                        self.allowed.remove(call_id);
                    }
                }
                None
            }
            Body::Decision(Decision::ToolDispatched { call, .. }) => {
                self.allowed.remove(&call.id).map(|scope| (call, scope))
            }
            Body::Record(_) | Body::Decision(_) | Body::Unknown { .. } => None,
        }
    }
}

/// The index of the card of `call_id`, made (queued) if there is none yet.
fn card_index(
    cells: &mut Vec<Cell>,
    cards: &mut BTreeMap<CallId, usize>,
    call_id: &CallId,
    name: &str,
    arguments: &str,
) -> usize {
    *cards.entry(call_id.clone()).or_insert_with(|| {
        cells.push(Cell::Tool(ToolCard::new(call_id.clone(), name, arguments)));
        cells.len() - 1
    })
}

#[cfg(test)]
mod tests;
