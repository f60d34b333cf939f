//! The approval question for a mutating call: what will happen (the diff an
//! `edit`/`write` would make to the file as it is now, bash's full command and its
//! working directory, any other tool's arguments), then the answers `y` `a` `A` `n`
//! `m`, or, after `m`, the message the user is typing for the model. The header says
//! how many more questions wait behind this one (`· 2 more waiting`). Fits a height
//! budget: the preview is cut first (`… N more lines (Ctrl-T shows all)`).

use ratatui::text::{Line, Span};
use xcsh_machine::ApprovalScope;
use xcsh_runtime::ApprovalRequest;

use crate::Theme;
use crate::diffview::{self, Diff};
use crate::fmt;
use crate::theme::Role;
use crate::tool_card::args::{self, ToolArgs};

/// What the call would do, computed before asking (the app reads the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preview {
    /// An `edit` or `write`: the change to the file's current content.
    Change {
        /// The diff from the file now to what the call leaves.
        diff: Diff,
        /// Why the edit would not apply as it is (the tool will refuse it); the diff
        /// is then `old_string` → `new_string`.
        problem: Option<String>,
        /// The file does not exist yet.
        new_file: bool,
    },
    /// A `bash` command, in full, and where it runs.
    Command {
        command: String,
        cwd: String,
        timeout_ms: Option<u64>,
    },
    /// Any other call: its arguments pretty-printed (or as written, if not JSON).
    Arguments { text: String },
}

/// What the call `name(arguments)` would do. `current` is the content of the file
/// an `edit` or `write` names (`None`: it does not exist); `cwd` is where `bash`
/// runs. Pure: the app reads the file.
pub fn preview(name: &str, arguments: &str, current: Option<&str>, cwd: &str) -> Preview {
    match ToolArgs::parse(name, arguments) {
        ToolArgs::Write { content, .. } => Preview::Change {
            diff: Diff::new(current, &content),
            problem: None,
            new_file: current.is_none(),
        },
        ToolArgs::Edit {
            old_string,
            new_string,
            replace_all,
            ..
        } => {
            let applied = match current {
                Some(text) => args::apply_edit(text, &old_string, &new_string, replace_all)
                    .map(|after| Diff::new(Some(text), &after))
                    .map_err(|p| format!("{}: the edit will fail", p.describe())),
                None => Err("the file does not exist: the edit will fail".to_owned()),
            };
            match applied {
                Ok(diff) => Preview::Change {
                    diff,
                    problem: None,
                    new_file: false,
                },
                Err(problem) => Preview::Change {
                    diff: Diff::new(Some(&old_string), &new_string),
                    problem: Some(problem),
                    new_file: false,
                },
            }
        }
        ToolArgs::Bash {
            command,
            timeout_ms,
        } => Preview::Command {
            command,
            cwd: cwd.to_owned(),
            timeout_ms,
        },
        ToolArgs::Read { .. }
        | ToolArgs::List { .. }
        | ToolArgs::Grep { .. }
        | ToolArgs::Glob { .. }
        | ToolArgs::Other { .. } => Preview::Arguments {
            text: match serde_json::from_str::<serde_json::Value>(arguments) {
                Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_else(|_| arguments.to_owned()),
                Err(_) => arguments.to_owned(),
            },
        },
    }
}

/// An answer key of the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// `y`: allow this call once.
    Once,
    /// `a`: allow this tool for the rest of the session.
    Tool,
    /// `A`: allow this exact call (tool and arguments) for the rest of the session.
    Call,
    /// `n`: deny.
    Deny,
    /// `m`: deny and tell the model what to do instead (opens the message mode).
    DenyWithMessage,
}

impl Choice {
    /// The choice of a key, if it is one.
    pub fn from_key(key: char) -> Option<Choice> {
        Some(match key {
            'y' | 'Y' => Choice::Once,
            'a' => Choice::Tool,
            'A' => Choice::Call,
            'n' | 'N' => Choice::Deny,
            'm' | 'M' => Choice::DenyWithMessage,
            _ => return None,
        })
    }

    /// The scope of an allowing choice.
    pub fn scope(self) -> Option<ApprovalScope> {
        match self {
            Choice::Once => Some(ApprovalScope::Once),
            Choice::Tool => Some(ApprovalScope::Tool),
            Choice::Call => Some(ApprovalScope::Call),
            Choice::Deny | Choice::DenyWithMessage => None,
        }
    }
}

/// What the bottom of the question shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode<'a> {
    /// The answer keys.
    Choosing,
    /// After `m`: the message the user is typing (the editor's text).
    Message { text: &'a str },
}

/// The open approval question for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    name: String,
    args: ToolArgs,
    preview: Preview,
    /// How many more questions wait behind this one (the header says so when > 0).
    waiting: u32,
}

const MORE_HINT: &str = " (Ctrl-T shows all)";

impl Approval {
    pub fn new(name: &str, arguments: &str, preview: Preview) -> Approval {
        Approval {
            name: name.to_owned(),
            args: ToolArgs::parse(name, arguments),
            preview,
            waiting: 0,
        }
    }

    /// The question `request` puts; `current` is the content of the file an `edit`
    /// or `write` names (read by the front end), `None` when it does not exist.
    pub fn of_request(request: &ApprovalRequest, current: Option<&str>) -> Approval {
        let call = &request.call;
        let preview = preview(&call.name, &call.arguments, current, &request.cwd);
        Approval::new(&call.name, &call.arguments, preview).with_waiting(request.waiting)
    }

    /// The question with `waiting` more questions behind it.
    pub fn with_waiting(self, waiting: u32) -> Approval {
        Approval { waiting, ..self }
    }

    pub fn preview(&self) -> &Preview {
        &self.preview
    }

    /// The question at `width` columns in at most `max_rows` rows (the answers
    /// always show; the preview is cut to what is left).
    pub fn lines(
        &self,
        width: u16,
        max_rows: usize,
        mode: Mode<'_>,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let tail = self.tail(width, mode, theme);
        let header = self.header(width, theme);
        let mut out = Vec::new();
        let room = max_rows.saturating_sub(tail.len());
        if room >= 1 {
            out.push(header);
        }
        let budget = room.saturating_sub(1);
        if budget >= 1 {
            let mut preview = self.preview_lines(width, theme);
            if preview.len() > budget {
                preview = self.preview_cut(width, budget, theme);
            }
            out.extend(preview);
        }
        out.extend(tail);
        out.into_iter()
            .map(|l| Line::from(fmt::clip_spans(l.spans, usize::from(width))))
            .collect()
    }

    /// The whole preview, uncut (what Ctrl-T shows).
    pub fn preview_lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let inner = width.saturating_sub(2);
        let lines = match &self.preview {
            Preview::Change {
                diff,
                problem,
                new_file,
            } => {
                let mut lines = Vec::new();
                if let Some(problem) = problem {
                    lines.extend(crate::text::wrap(
                        &Line::from(Span::styled(problem.clone(), theme.style(Role::Warning))),
                        inner,
                    ));
                }
                if *new_file {
                    lines.push(Line::from(Span::styled(
                        "new file",
                        theme.style(Role::DiffHeader),
                    )));
                }
                lines.extend(diff.lines(inner, theme));
                lines
            }
            Preview::Command {
                command,
                cwd,
                timeout_ms,
            } => {
                let body = fmt::plain(&fmt::clean(command.trim_end()), theme.style(Role::Text));
                let mut lines = fmt::prefixed(
                    body,
                    inner,
                    Span::styled("$ ", theme.style(Role::Dim)),
                    Span::raw("  "),
                );
                let timeout = match timeout_ms {
                    Some(ms) => format!(" · timeout {}", fmt::duration(*ms)),
                    None => String::new(),
                };
                let room = usize::from(inner).saturating_sub(3 + timeout.len());
                let place = format!("in {}{timeout}", fmt::shorten_path(&fmt::clean(cwd), room));
                lines.push(Line::from(Span::styled(
                    fmt::clip(&place, usize::from(inner)),
                    theme.style(Role::Dim),
                )));
                lines
            }
            Preview::Arguments { text } => fmt::plain(&fmt::clean(text), theme.style(Role::Dim))
                .iter()
                .flat_map(|l| crate::text::wrap(l, inner))
                .collect(),
        };
        lines.into_iter().map(indent).collect()
    }

    /// The preview in `budget` rows (at least one), its last saying what is left out:
    /// a diff's lines (as the card in history counts them), else the rows.
    fn preview_cut(&self, width: u16, budget: usize, theme: &Theme) -> Vec<Line<'static>> {
        let inner = width.saturating_sub(2);
        if let Preview::Change {
            diff,
            problem: None,
            new_file: false,
        } = &self.preview
        {
            return diff
                .lines_cut(inner, budget, MORE_HINT, theme)
                .into_iter()
                .map(indent)
                .collect();
        }
        let mut preview = self.preview_lines(width, theme);
        let hidden = preview.len() - (budget - 1);
        preview.truncate(budget - 1);
        preview.push(indent(diffview::more_line(hidden, MORE_HINT, inner, theme)));
        preview
    }

    fn header(&self, width: u16, theme: &Theme) -> Line<'static> {
        let lead = Line::from(vec![
            Span::styled("? ", theme.style(Role::Warning)),
            Span::styled("allow ", theme.style(Role::Text)),
        ]);
        self.heading(lead, width, theme)
    }

    /// The header after `lead` (the UI's `? allow `, the line mode's `[approve] `):
    /// the tool, what the call names (not bash's command: the preview has it), a
    /// change's `+A -D`, and how many more questions wait.
    pub fn heading(&self, lead: Line<'static>, width: u16, theme: &Theme) -> Line<'static> {
        let mut spans = lead.spans;
        spans.push(Span::styled(self.name.clone(), theme.style(Role::Tool)));
        let mut meta = Vec::new();
        if let Preview::Change { diff, .. } = &self.preview {
            meta.push(Span::styled(" · ", theme.style(Role::Dim)));
            meta.extend(diff.stat().spans(theme));
        }
        let mut waiting = Vec::new();
        if self.waiting > 0 {
            waiting.push(Span::styled(
                format!(" · {} more waiting", self.waiting),
                theme.style(Role::Dim),
            ));
        }
        let fixed = |count: &[Span<'static>]| {
            crate::text::width_of(&spans)
                + crate::text::width_of(&meta)
                + crate::text::width_of(count)
        };
        // bash's command is in the preview, in full; the header names the others, in
        // at least 8 columns: when they do not fit with the count, the count goes.
        let describes = !matches!(self.args, ToolArgs::Bash { .. });
        let floor = if describes { 1 + 8 } else { 0 };
        if fixed(&waiting) + floor > usize::from(width) {
            waiting.clear();
        }
        if describes {
            let room = usize::from(width)
                .saturating_sub(fixed(&waiting) + 1)
                .max(8);
            spans.push(Span::raw(" "));
            spans.extend(crate::tool_card::describe(&self.args, room, theme));
        }
        spans.extend(meta);
        spans.extend(waiting);
        Line::from(fmt::clip_spans(spans, usize::from(width)))
    }

    /// The rows under the preview: the answer keys, or the message being typed.
    fn tail(&self, width: u16, mode: Mode<'_>, theme: &Theme) -> Vec<Line<'static>> {
        match mode {
            Mode::Choosing => {
                let always = format!("always {}", self.name);
                let items = [
                    ("y", "once"),
                    ("a", always.as_str()),
                    ("A", "this exact call"),
                    ("n", "deny"),
                    ("m", "deny with a message"),
                ];
                pack(&items, width, theme)
            }
            Mode::Message { text } => {
                let mut out = vec![indent(Line::from(Span::styled(
                    fmt::clip(
                        "deny, and tell the model instead:",
                        usize::from(width.saturating_sub(2)),
                    ),
                    theme.style(Role::Text),
                )))];
                let mut body = fmt::plain(&fmt::clean(text), theme.style(Role::User));
                if let Some(last) = body.last_mut() {
                    last.spans.push(Span::styled("▏", theme.style(Role::Dim)));
                }
                out.extend(fmt::prefixed(
                    body,
                    width,
                    Span::styled("  › ", theme.style(Role::User)),
                    Span::raw("    "),
                ));
                out.extend(pack(&[("Enter", "sends"), ("Esc", "back")], width, theme));
                out
            }
        }
    }
}

/// `key label · key label …` packed into as few rows as fit `width`, two columns in.
fn pack(items: &[(&str, &str)], width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let max = usize::from(width.saturating_sub(2)).max(1);
    let mut rows: Vec<Vec<Span<'static>>> = Vec::new();
    let mut used = 0;
    for (key, label) in items {
        let item_width = fmt::width(key) + 1 + fmt::width(label);
        let sep = 3;
        match rows.last_mut() {
            Some(row) if used + sep + item_width <= max => {
                row.push(Span::styled(" · ", theme.style(Role::Dim)));
                used += sep;
            }
            Some(_) | None => {
                rows.push(Vec::new());
                used = 0;
            }
        }
        if let Some(row) = rows.last_mut() {
            row.push(Span::styled((*key).to_owned(), theme.style(Role::Key)));
            row.push(Span::styled(format!(" {label}"), theme.style(Role::Dim)));
            used += item_width;
        }
    }
    rows.into_iter()
        .map(|row| indent(Line::from(fmt::clip_spans(row, max))))
        .collect()
}

/// `line` two columns in.
fn indent(line: Line<'static>) -> Line<'static> {
    let mut spans = vec![Span::raw("  ")];
    spans.extend(line.spans);
    Line::from(spans)
}

#[cfg(test)]
mod tests;
