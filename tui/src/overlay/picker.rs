//! The session picker (`/resume`, and `xcsh --resume` without a session): the
//! sessions the app listed, most recently active first, each with how long ago it
//! was last active, its size, branches and first prompt; typing filters them (over
//! the prompt and the id), Enter resumes the selected one. The session xcsh is in
//! is marked (`•` and `(current)`).

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;
use xcsh_inspect::SessionSummary;
use xcsh_inspect::terminal::neutralize;
use xcsh_log::describe::quoted;

use super::{
    Footer, Overlay, OverlayAction, OverlayOutcome, chrome_body, clip, draw_chrome, is_press,
    plain_char,
};
use crate::Theme;
use crate::theme::Role;

/// One session of the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerRow {
    /// The session file (what Enter resumes).
    pub path: PathBuf,
    pub id: String,
    /// The first prompt, on one line.
    pub first_prompt: String,
    pub size_bytes: u64,
    pub branches: usize,
    /// When it was last active (the time of its last entry), in ms since the Unix
    /// epoch: what the rows are ordered by, and the age they show.
    pub active_ms: i64,
    pub workspace: String,
}

impl PickerRow {
    /// The row of a session from its summary and its file's size.
    pub fn from_summary(s: &SessionSummary, size_bytes: u64) -> PickerRow {
        PickerRow {
            path: PathBuf::from(&s.path),
            id: s.id.clone(),
            first_prompt: s.first_message.clone(),
            size_bytes,
            branches: s.branches,
            active_ms: s.active_ms,
            workspace: s.workspace.clone(),
        }
    }
}

/// The session picker.
pub struct Picker {
    /// Most recently active first.
    rows: Vec<PickerRow>,
    now_unix_ms: i64,
    filter: String,
    /// The rows the filter keeps (positions in `rows`).
    shown: Vec<usize>,
    /// The selected position in `shown`.
    cursor: usize,
    top: usize,
    /// The session files that could not be read, each as its error (which names
    /// the file): shown below the list, once.
    unreadable: Vec<String>,
    /// The session file xcsh is in, whose row is marked.
    current: Option<PathBuf>,
}

const HINTS: &[(&str, &str)] = &[
    ("type", "to filter"),
    ("↑↓", "move"),
    ("Enter", "resume"),
    ("Esc", "close"),
];

impl Picker {
    /// The picker over `rows`, shown most recently active first (rows active at the
    /// same time in the order given), with ages relative to `now_unix_ms` (the app
    /// reads the clock; ms since the Unix epoch).
    pub fn new(mut rows: Vec<PickerRow>, now_unix_ms: i64) -> Picker {
        rows.sort_by_key(|r| std::cmp::Reverse(r.active_ms));
        let mut picker = Picker {
            rows,
            now_unix_ms,
            filter: String::new(),
            shown: Vec::new(),
            cursor: 0,
            top: 0,
            unreadable: Vec::new(),
            current: None,
        };
        picker.apply_filter();
        picker
    }

    /// The picker, also naming the session files that could not be read (each as
    /// its error, which names the file), below the list as `! ERROR`.
    pub fn with_unreadable(mut self, unreadable: Vec<String>) -> Picker {
        self.unreadable = unreadable;
        self
    }

    /// The picker, marking the row of the session file xcsh is in (`current`).
    pub fn with_current(mut self, current: Option<PathBuf>) -> Picker {
        self.current = current;
        self
    }

    /// Whether `path` is the session xcsh is in.
    fn is_current(&self, path: &Path) -> bool {
        self.current.as_deref() == Some(path)
    }

    /// The filter typed so far.
    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// The selected session, if any row is shown.
    pub fn selected(&self) -> Option<&PickerRow> {
        self.shown.get(self.cursor).map(|&i| &self.rows[i])
    }

    fn apply_filter(&mut self) {
        let needle = self.filter.to_lowercase();
        self.shown = (0..self.rows.len())
            .filter(|&i| {
                let r = &self.rows[i];
                needle.is_empty()
                    || r.first_prompt.to_lowercase().contains(&needle)
                    || r.id.to_lowercase().contains(&needle)
            })
            .collect();
        self.cursor = 0;
        self.top = 0;
    }

    fn move_to(&mut self, at: usize) {
        self.cursor = at.min(self.shown.len().saturating_sub(1));
    }

    /// The columns at `width`: the id from 80 columns on, the workspace from 110.
    fn columns(&self, width: usize) -> Columns {
        let id = if width >= 80 {
            self.rows
                .iter()
                .map(|r| r.id.width())
                .max()
                .unwrap_or(0)
                .min(24)
        } else {
            0
        };
        let workspace = if width >= 110 { 28 } else { 0 };
        let tail: usize = [id, workspace]
            .iter()
            .map(|&w| if w > 0 { w + 2 } else { 0 })
            .sum();
        let prompt = width.saturating_sub(FIXED + tail);
        Columns {
            prompt,
            id,
            workspace,
        }
    }

    fn row_line(&self, r: &PickerRow, cols: Columns, theme: &Theme) -> Line<'static> {
        let age = format_age(self.now_unix_ms.saturating_sub(r.active_ms));
        let size = format_size(r.size_bytes);
        // The current session: `•` at the age's left (an age takes at most 4 of its
        // 7 columns), `(current)` before its prompt.
        let (mark, label) = if self.is_current(&r.path) {
            ("•", CURRENT)
        } else {
            (" ", "")
        };
        let prompt = if r.first_prompt.is_empty() {
            "(no prompt)".to_string()
        } else {
            neutralize(&r.first_prompt).into_owned()
        };
        let mut spans = vec![
            Span::styled(mark, theme.style(Role::Success)),
            Span::styled(format!("{age:>w$}  ", w = AGE - 1), theme.style(Role::Dim)),
            Span::styled(format!("{size:>6}  "), theme.style(Role::Dim)),
            Span::styled(format!("{:>2}  ", r.branches), theme.style(Role::Dim)),
        ];
        let label = clip(
            Line::from(Span::styled(label, theme.style(Role::Success))),
            cols.prompt,
        );
        let room = cols.prompt.saturating_sub(label.width());
        let prompt = clip(Line::from(prompt), room);
        let pad = room.saturating_sub(prompt.width());
        spans.extend(label.spans);
        spans.extend(prompt.spans);
        if cols.id > 0 {
            let id = super::tail(&neutralize(&r.id), cols.id);
            let id_pad = cols.id.saturating_sub(id.width());
            spans.push(Span::raw(" ".repeat(pad + 2)));
            spans.push(Span::styled(id, theme.style(Role::Dim)));
            if cols.workspace > 0 {
                let ws = super::tail(&neutralize(&r.workspace), cols.workspace);
                spans.push(Span::raw(" ".repeat(id_pad + 2)));
                spans.push(Span::styled(ws, theme.style(Role::Dim)));
            }
        }
        Line::from(spans)
    }

    fn header_line(&self, cols: Columns, width: usize, theme: &Theme) -> Line<'static> {
        let mut text = format!(
            "{:>AGE$}  {:>6}  {:>2}  {:<w$}",
            "updated",
            "size",
            "br",
            "first prompt",
            w = cols.prompt
        );
        if cols.id > 0 {
            text.push_str(&format!("  {:<w$}", "id", w = cols.id));
            if cols.workspace > 0 {
                text.push_str("  workspace");
            }
        }
        clip(
            Line::from(Span::styled(text, theme.style(Role::Dim))),
            width,
        )
    }
}

/// What the current session's prompt starts with.
const CURRENT: &str = "(current) ";

/// The width of the age column (`updated`: how long ago the session was last
/// active).
const AGE: usize = 7;

/// The columns of the age, size and branches, and the two spaces after each.
const FIXED: usize = AGE + 2 + 6 + 2 + 2 + 2;

/// The widths of the picker's flexible columns (0: not shown).
#[derive(Debug, Clone, Copy)]
struct Columns {
    prompt: usize,
    id: usize,
    workspace: usize,
}

/// `ms` as an age: `42s`, `3m`, `2h`, `4d` (a negative age, a clock gone back, is
/// `0s`).
pub fn format_age(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3_600 => format!("{}m", s / 60),
        3_600..86_400 => format!("{}h", s / 3_600),
        _ => format!("{}d", s / 86_400),
    }
}

/// `bytes` for a person: `512 B`, `12 KB`, `3.4 MB`, `1.2 GB` (units of 1024).
pub fn format_size(bytes: u64) -> String {
    const K: u64 = 1024;
    match bytes {
        0..K => format!("{bytes} B"),
        K..0x10_0000 => format!("{} KB", bytes.div_ceil(K)),
        0x10_0000..0x4000_0000 => format!("{:.1} MB", bytes as f64 / (K * K) as f64),
        _ => format!("{:.1} GB", bytes as f64 / (K * K * K) as f64),
    }
}

impl Overlay for Picker {
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let body = chrome_body(area);
        let width = usize::from(body.width);
        let cols = self.columns(width);
        if body.height > 0 {
            let header = self.header_line(cols, width, theme);
            buf.set_line(body.x, body.y, &header, body.width);
        }
        // The unreadable files take the last rows, leaving the header and a row of
        // the list.
        let notes = u16::try_from(self.unreadable.len())
            .unwrap_or(u16::MAX)
            .min(body.height.saturating_sub(2));
        for (i, error) in self.unreadable.iter().take(usize::from(notes)).enumerate() {
            // The file by its name (the folder is the sessions'), so that which file
            // and why fit the row.
            let named = match error.find(".jsonl") {
                Some(end) => {
                    let (path, rest) = error.split_at(end + ".jsonl".len());
                    let name = path.rsplit('/').next().unwrap_or(path);
                    format!("{name}{rest}")
                }
                None => error.clone(),
            };
            let text = format!("! {}", neutralize(&named));
            let line = clip(
                Line::from(Span::styled(text, theme.style(Role::Warning))),
                width,
            );
            let y = body.y + body.height - notes + i as u16;
            buf.set_line(body.x, y, &line, body.width);
        }
        let list = Rect::new(
            body.x,
            body.y + 1,
            body.width,
            body.height.saturating_sub(1 + notes),
        );
        let height = usize::from(list.height).max(1);
        self.top = super::scrolled(self.top, self.cursor, height);
        if self.shown.is_empty() && list.height > 0 {
            let text = if self.rows.is_empty() {
                "no sessions in this workspace yet".to_string()
            } else {
                format!("no session matches {}", quoted(&self.filter))
            };
            let line = clip(
                Line::from(Span::styled(text, theme.style(Role::Dim))),
                width,
            );
            buf.set_line(list.x, list.y, &line, list.width);
        }
        let rows = (self.top, self.cursor, self.shown.len());
        let position = super::draw_list(list, buf, theme, rows, |at| {
            clip(
                self.row_line(&self.rows[self.shown[at]], cols, theme),
                width,
            )
        });
        let footer = if self.filter.is_empty() {
            Footer::Hints(HINTS)
        } else {
            Footer::Prompt {
                label: "filter: ".into(),
                text: self.filter.clone(),
            }
        };
        draw_chrome(area, buf, theme, &self.title(), &position, footer);
    }

    fn on_key(&mut self, key: KeyEvent) -> OverlayOutcome {
        if !is_press(&key) {
            return OverlayOutcome::Stay;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return OverlayOutcome::Close,
            // As a prompt is left (`xcsh --resume` exits when its picker closes).
            KeyCode::Char('c' | 'd') if ctrl => return OverlayOutcome::Close,
            KeyCode::Enter => {
                if let Some(r) = self.selected() {
                    return OverlayOutcome::Act(OverlayAction::Resume(r.path.clone()));
                }
            }
            KeyCode::Up => self.move_to(self.cursor.saturating_sub(1)),
            KeyCode::Down => self.move_to(self.cursor + 1),
            KeyCode::PageUp => self.move_to(self.cursor.saturating_sub(10)),
            KeyCode::PageDown => self.move_to(self.cursor + 10),
            KeyCode::Home => self.move_to(0),
            KeyCode::End => self.move_to(usize::MAX),
            KeyCode::Backspace => {
                if self.filter.pop().is_some() {
                    self.apply_filter();
                }
            }
            _ => {
                if let Some(c) = plain_char(&key) {
                    self.filter.push(c);
                    self.apply_filter();
                }
            }
        }
        OverlayOutcome::Stay
    }

    fn title(&self) -> String {
        "resume a session".into()
    }
}
