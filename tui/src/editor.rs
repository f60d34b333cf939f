//! The input editor: a multi-line text box as a pure state machine over key
//! events and pastes, with history (Up/Down, Ctrl-R) and the completion popups.
//!
//! OWNER: helper "input".
//!
//! The app forwards every key ([`Editor::on_key`]) and bracketed paste
//! ([`Editor::on_paste`]) and acts on the [`EditorOutcome`]; it draws the editor
//! with [`Editor::render`] into [`Editor::desired_height`] rows and puts the
//! terminal's cursor at [`Editor::cursor_position`]. No IO happens here except in
//! [`History::load`] and [`History::save`], which the app calls.
//!
//! Keys: Enter submits, Alt-Enter / Shift-Enter / Ctrl-Enter / Ctrl-J insert a
//! newline, Tab queues while a turn runs ([`Editor::set_queueing`]; otherwise it
//! only completes in a popup: it never sends), Esc closes the popup or clears the
//! text, Ctrl-C interrupts (clearing the text; in a search it cancels the search),
//! Ctrl-D on an empty text is end of input, Up/Down move between lines and past the
//! first/last line walk the history, Ctrl-R searches it; Left/Right (Ctrl-B/F),
//! Home/End (Ctrl-A/E), words with Alt- or Ctrl- Left/Right (Alt-B/F),
//! Backspace/Delete, Ctrl-W (word back to whitespace), Alt-Backspace / Alt-D
//! (word), Ctrl-U / Ctrl-K (to line start / end), Ctrl-Y (yank the last deletion).
//! In the `/` popup Enter runs the selected command (one that needs an argument is
//! completed instead) and Tab completes it; in the `@` popup both complete.

mod buffer;
mod history;
mod paste;
mod render;
mod search;
#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub use history::{
    DEFAULT_HISTORY_CAP, History, HistoryError, format as format_history, parse as parse_history,
};

use buffer::TextBuffer;
use search::ReverseSearch;

use crate::Theme;
use crate::complete::{Completer, FileIndex, Popup, PopupKind};
use crate::theme::Role;

/// The input takes at most this many rows (it scrolls to keep the cursor visible).
pub const MAX_INPUT_ROWS: u16 = 10;

/// The placeholder shown in an empty editor unless the app sets another.
pub const DEFAULT_PLACEHOLDER: &str =
    "Ask xcsh to do something · / for commands · @ to mention a file";

/// The editing keys, each with what it does, as `/help` lists them (its `editing:`
/// group).
pub const EDITING_KEYS: &[(&str, &str)] = &[
    (
        "Alt-Enter",
        "newline (also Ctrl-J, and Shift-Enter where the terminal tells it from Enter)",
    ),
    ("Ctrl-A/E", "start / end of the line"),
    ("Alt-B/F", "a word back / forward (also Ctrl-Left/Right)"),
    ("Ctrl-W", "delete the word before the cursor"),
    ("Ctrl-U/K", "delete to the start / end of the line"),
    ("Ctrl-Y", "put back what was deleted last"),
    (
        "Ctrl-R",
        "search the history (Ctrl-R again: older; Enter takes it, Esc cancels)",
    ),
];

const PROMPT: &str = "› ";
const INDENT: &str = "  ";

/// What a key or paste did, for the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorOutcome {
    /// Nothing changed (a key the editor does not use, or a move that cannot move).
    Nothing,
    /// The text, cursor, popup or search changed: redraw.
    Changed,
    /// Enter on a non-blank text: the text, exactly as typed, each paste's placeholder
    /// its text (Enter in the `/` popup: `/name` of the selected command). The editor
    /// is now empty and the text in its history.
    Submit(String),
    /// Tab (popup closed) on a non-blank text while queueing is on
    /// ([`Editor::set_queueing`]): a follow-up to queue. The editor is now empty.
    Queue(String),
    /// Esc cleared the text.
    Cleared,
    /// Esc on an empty editor with nothing open: the app's to use.
    Cancel,
    /// Ctrl-D on an empty editor.
    Eof,
    /// Ctrl-C; `cleared` if it cleared some text.
    Interrupt { cleared: bool },
    /// The reverse history search started, took its match, or was cancelled.
    Search(SearchEvent),
}

/// A step of the reverse history search (Ctrl-R).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchEvent {
    Started,
    /// The match is now the editor's text.
    Accepted,
    /// The text before the search is back.
    Cancelled,
}

/// A history walk (Up past the first line): the entry shown and the draft it hid.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Walk {
    index: usize,
    draft: String,
}

/// The input editor.
#[derive(Debug, Clone)]
pub struct Editor {
    buffer: TextBuffer,
    history: History,
    walk: Option<Walk>,
    search: Option<ReverseSearch>,
    completer: Completer,
    popup: Option<Popup>,
    /// The text for which Esc closed the popup: it stays closed until the text changes.
    dismissed: Option<String>,
    /// The last text deleted by a word or line deletion (Ctrl-Y inserts it).
    killed: String,
    /// The column Up/Down aim for, kept across vertical moves.
    column: Option<usize>,
    placeholder: String,
    /// The first input row shown (a view detail, kept between draws).
    scroll: Cell<usize>,
    /// The width the editor was last laid out at (0: not yet).
    width: Cell<u16>,
    /// Tab queues a follow-up (a turn runs); otherwise Tab outside a popup does
    /// nothing.
    queueing: bool,
    pastes: paste::Pastes,
}

impl Default for Editor {
    fn default() -> Self {
        Editor::new(History::default(), Completer::default())
    }
}

fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

impl Editor {
    /// An empty editor over `history`, completing with `completer`.
    pub fn new(history: History, completer: Completer) -> Editor {
        Editor {
            buffer: TextBuffer::default(),
            history,
            walk: None,
            search: None,
            completer,
            popup: None,
            dismissed: None,
            killed: String::new(),
            column: None,
            placeholder: DEFAULT_PLACEHOLDER.to_string(),
            scroll: Cell::new(0),
            width: Cell::new(0),
            queueing: false,
            pastes: paste::Pastes::default(),
        }
    }

    /// Whether Tab queues the text as a follow-up: on while a turn runs. Off, Tab
    /// outside a popup does nothing (it never sends).
    pub fn set_queueing(&mut self, on: bool) {
        self.queueing = on;
    }

    /// The text shown (dimmed) while the editor is empty.
    pub fn set_placeholder(&mut self, placeholder: &str) {
        self.placeholder = placeholder.to_string();
    }

    /// The files `@` completes from (e.g. once a background scan is done).
    pub fn set_files(&mut self, files: Arc<FileIndex>) {
        self.completer.set_files(files);
        self.refresh_popup();
    }

    /// The text.
    pub fn text(&self) -> &str {
        self.buffer.text()
    }

    /// The cursor, a byte offset into [`Editor::text`].
    pub fn cursor(&self) -> usize {
        self.buffer.cursor()
    }

    pub fn is_empty(&self) -> bool {
        self.buffer.text().is_empty()
    }

    /// Replaces the text (newlines normalized), the cursor at its end.
    pub fn set_text(&mut self, text: &str) {
        self.buffer.set(&normalize_newlines(text));
        self.edited();
    }

    /// Empties the input and closes the search; the text goes into the history (Up
    /// brings it back), each paste's placeholder its text.
    pub fn clear(&mut self) {
        let text = self.pastes.release(&self.buffer.take());
        self.history.record(&text);
        self.walk = None;
        self.search = None;
        self.edited();
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    /// The history, e.g. to [`History::save`] it after a submit.
    pub fn history_mut(&mut self) -> &mut History {
        &mut self.history
    }

    /// The open popup, if any.
    pub fn popup(&self) -> Option<&Popup> {
        self.popup.as_ref()
    }

    /// Whether a reverse history search is open.
    pub fn is_searching(&self) -> bool {
        self.search.is_some()
    }

    /// Handles one key.
    pub fn on_key(&mut self, key: KeyEvent) -> EditorOutcome {
        if key.kind == KeyEventKind::Release {
            return EditorOutcome::Nothing;
        }
        if self.search.is_some() {
            return self.search_key(key);
        }
        if let Some(outcome) = self.popup_key(key) {
            return outcome;
        }
        self.edit_key(key)
    }

    /// Inserts pasted text, newlines kept (`\r\n`, `\r`: `\n`); a long one as a placeholder.
    pub fn on_paste(&mut self, text: &str) -> EditorOutcome {
        let text = normalize_newlines(text);
        if text.is_empty() {
            return EditorOutcome::Nothing;
        }
        if let Some(search) = &mut self.search {
            search.query.push_str(&text.replace('\n', " "));
            search.narrow(self.history.entries());
            return EditorOutcome::Changed;
        }
        self.buffer.insert(&self.pastes.hold(text));
        self.edited();
        EditorOutcome::Changed
    }

    /// The text changed: the history walk ends, the popup follows the text.
    fn edited(&mut self) {
        self.walk = None;
        self.column = None;
        self.refresh_popup();
    }

    /// The cursor moved (not vertically).
    fn moved(&mut self) {
        self.column = None;
        self.refresh_popup();
    }

    fn refresh_popup(&mut self) {
        if self.dismissed.as_deref() == Some(self.buffer.text()) {
            self.popup = None;
            return;
        }
        self.dismissed = None;
        let mut popup = self
            .completer
            .popup(self.buffer.text(), self.buffer.cursor());
        if let (Some(new), Some(old)) = (&mut popup, &self.popup) {
            new.keep_selection(old);
        }
        self.popup = popup;
    }

    /// Shows `text` without opening a popup for it (a history entry).
    fn show_recalled(&mut self, text: &str) {
        self.buffer.set(text);
        self.column = None;
        self.dismissed = Some(text.to_string());
        self.popup = None;
    }

    fn take(&mut self) -> String {
        let text = self.pastes.release(&self.buffer.take());
        self.history.record(&text);
        self.walk = None;
        self.column = None;
        self.dismissed = None;
        self.popup = None;
        text
    }

    fn popup_key(&mut self, key: KeyEvent) -> Option<EditorOutcome> {
        let popup = self.popup.as_mut()?;
        if popup.items().is_empty() {
            // "No matching files": Esc closes it, Tab has nothing to complete,
            // every other key works as without a popup.
            match key.code {
                KeyCode::Esc => {}
                KeyCode::Tab if key.modifiers.is_empty() => return Some(EditorOutcome::Nothing),
                _ => return None,
            }
        }
        let plain = key.modifiers.difference(KeyModifiers::SHIFT).is_empty();
        let ctrl = key.modifiers == KeyModifiers::CONTROL;
        match key.code {
            KeyCode::Up | KeyCode::BackTab if plain => popup.select(false),
            KeyCode::Char('p') if ctrl => popup.select(false),
            KeyCode::Down if plain => popup.select(true),
            KeyCode::Char('n') if ctrl => popup.select(true),
            KeyCode::Esc => {
                self.dismissed = Some(self.buffer.text().to_string());
                self.popup = None;
            }
            KeyCode::Tab if key.modifiers.is_empty() => self.complete(),
            KeyCode::Enter if key.modifiers.is_empty() => {
                if let Some(command) = popup.command_to_run() {
                    self.buffer.set(&command);
                    return Some(EditorOutcome::Submit(self.take()));
                }
                self.complete();
            }
            _ => return None,
        }
        Some(EditorOutcome::Changed)
    }

    fn complete(&mut self) {
        let Some(completion) = self.popup.as_ref().and_then(Popup::completion) else {
            return;
        };
        let rest = &self.buffer.text()[completion.range.end..];
        let kind = self.popup.as_ref().map(Popup::kind);
        if completion.insert.ends_with(' ') && rest.starts_with(char::is_whitespace) {
            let insert = completion.insert.trim_end();
            self.buffer.replace(completion.range, insert);
            self.buffer.right();
        } else {
            self.buffer.replace(completion.range, &completion.insert);
        }
        self.edited();
        if kind == Some(PopupKind::File) {
            // The cursor is past the mention: no popup until the user types again.
            self.popup = None;
        }
    }

    fn edit_key(&mut self, key: KeyEvent) -> EditorOutcome {
        use EditorOutcome::{Changed, Nothing};
        let m = key.modifiers;
        let ctrl = m == KeyModifiers::CONTROL;
        let alt = m == KeyModifiers::ALT;
        let plain = m.difference(KeyModifiers::SHIFT).is_empty();
        let changed = |b: bool| if b { Changed } else { Nothing };
        match key.code {
            KeyCode::Enter if m.is_empty() => {
                if self.buffer.text().trim().is_empty() {
                    Nothing
                } else {
                    EditorOutcome::Submit(self.take())
                }
            }
            // Alt-Enter, Shift-Enter (where the terminal tells it from Enter),
            // Ctrl-Enter.
            KeyCode::Enter => self.insert("\n"),
            KeyCode::Char('j') if ctrl => self.insert("\n"),
            KeyCode::Tab if m.is_empty() && self.queueing => self.queue(),
            // A cleared draft goes into the history: Up brings it back.
            KeyCode::Esc => {
                if self.buffer.text().is_empty() {
                    EditorOutcome::Cancel
                } else {
                    self.clear();
                    EditorOutcome::Cleared
                }
            }
            KeyCode::Char('c') if ctrl => {
                let cleared = !self.buffer.text().is_empty();
                self.clear();
                EditorOutcome::Interrupt { cleared }
            }
            KeyCode::Char('d') if ctrl => {
                if self.buffer.text().is_empty() {
                    EditorOutcome::Eof
                } else {
                    self.delete(true)
                }
            }
            KeyCode::Char('r') if ctrl => {
                let saved = (self.buffer.text().to_string(), self.buffer.cursor());
                self.search = Some(ReverseSearch::new(saved));
                self.popup = None;
                EditorOutcome::Search(SearchEvent::Started)
            }
            KeyCode::Up if plain => self.up(),
            KeyCode::Char('p') if ctrl => self.up(),
            KeyCode::Down if plain => self.down(),
            KeyCode::Char('n') if ctrl => self.down(),
            KeyCode::Left if plain => self.go(TextBuffer::left),
            KeyCode::Char('b') if ctrl => self.go(TextBuffer::left),
            KeyCode::Right if plain => self.go(TextBuffer::right),
            KeyCode::Char('f') if ctrl => self.go(TextBuffer::right),
            KeyCode::Left if alt || ctrl => self.go(TextBuffer::word_left),
            KeyCode::Char('b') if alt => self.go(TextBuffer::word_left),
            KeyCode::Right if alt || ctrl => self.go(TextBuffer::word_right),
            KeyCode::Char('f') if alt => self.go(TextBuffer::word_right),
            KeyCode::Home if plain => self.go(TextBuffer::home),
            KeyCode::Char('a') if ctrl => self.go(TextBuffer::home),
            KeyCode::End if plain => self.go(TextBuffer::end),
            KeyCode::Char('e') if ctrl => self.go(TextBuffer::end),
            KeyCode::Backspace if plain => self.delete(false),
            KeyCode::Char('h') if ctrl => self.delete(false),
            KeyCode::Delete if plain => self.delete(true),
            KeyCode::Backspace if alt || ctrl => self.kill(TextBuffer::delete_word_left),
            KeyCode::Char('w') if ctrl => self.kill(TextBuffer::delete_word_back),
            KeyCode::Char('d') if alt => self.kill(TextBuffer::delete_word_right),
            KeyCode::Delete if alt || ctrl => self.kill(TextBuffer::delete_word_right),
            KeyCode::Char('u') if ctrl => self.kill(TextBuffer::delete_to_line_start),
            KeyCode::Char('k') if ctrl => self.kill(TextBuffer::delete_to_line_end),
            KeyCode::Char('y') if ctrl => {
                let killed = self.killed.clone();
                changed(!killed.is_empty() && self.insert(&killed) == Changed)
            }
            KeyCode::Char(c) if plain || m == KeyModifiers::CONTROL | KeyModifiers::ALT => {
                self.insert(c.encode_utf8(&mut [0; 4]))
            }
            _ => Nothing,
        }
    }

    fn insert(&mut self, s: &str) -> EditorOutcome {
        self.buffer.insert(s);
        self.edited();
        EditorOutcome::Changed
    }

    fn queue(&mut self) -> EditorOutcome {
        if self.buffer.text().trim().is_empty() {
            EditorOutcome::Nothing
        } else {
            EditorOutcome::Queue(self.take())
        }
    }

    /// A cursor move.
    fn go(&mut self, step: fn(&mut TextBuffer) -> bool) -> EditorOutcome {
        self.apply(step, Self::moved)
    }

    /// An edit of the text.
    fn edit(&mut self, step: fn(&mut TextBuffer) -> bool) -> EditorOutcome {
        self.apply(step, Self::edited)
    }

    /// `step` on the buffer, then `after` if it changed something.
    fn apply(&mut self, step: fn(&mut TextBuffer) -> bool, after: fn(&mut Self)) -> EditorOutcome {
        if step(&mut self.buffer) {
            after(self);
            EditorOutcome::Changed
        } else {
            EditorOutcome::Nothing
        }
    }

    fn kill(&mut self, step: fn(&mut TextBuffer) -> Option<String>) -> EditorOutcome {
        match step(&mut self.buffer) {
            Some(removed) => {
                self.killed = removed;
                self.edited();
                EditorOutcome::Changed
            }
            None => EditorOutcome::Nothing,
        }
    }

    fn vertical(&mut self, up: bool) -> bool {
        // Drawn at a width: by screen rows, so that Up on a long wrapped line goes to
        // the row above, not to the history.
        let width = usize::from(self.width.get()).saturating_sub(2);
        if width > 0 {
            let text = self.buffer.text();
            let Some((at, column)) =
                render::row_move(text, self.buffer.cursor(), width, up, self.column)
            else {
                return false;
            };
            self.buffer.place(at);
            self.column = Some(column);
            self.refresh_popup();
            return true;
        }
        let column = self.column.unwrap_or_else(|| self.buffer.column());
        let moved = self.buffer.vertical(up, column);
        if moved {
            self.column = Some(column);
            self.refresh_popup();
        }
        moved
    }

    fn up(&mut self) -> EditorOutcome {
        if self.vertical(true) {
            return EditorOutcome::Changed;
        }
        let entries = self.history.entries();
        let index = match &self.walk {
            None if entries.is_empty() => return EditorOutcome::Nothing,
            None => entries.len() - 1,
            Some(walk) if walk.index == 0 => return EditorOutcome::Nothing,
            Some(walk) => walk.index - 1,
        };
        let entry = entries[index].clone();
        let draft = match self.walk.take() {
            Some(walk) => walk.draft,
            None => self.buffer.text().to_string(),
        };
        self.show_recalled(&entry);
        self.walk = Some(Walk { index, draft });
        EditorOutcome::Changed
    }

    fn down(&mut self) -> EditorOutcome {
        if self.vertical(false) {
            return EditorOutcome::Changed;
        }
        let Some(walk) = self.walk.take() else {
            return EditorOutcome::Nothing;
        };
        let entries = self.history.entries();
        if walk.index + 1 < entries.len() {
            let entry = entries[walk.index + 1].clone();
            self.show_recalled(&entry);
            self.walk = Some(Walk {
                index: walk.index + 1,
                draft: walk.draft,
            });
        } else {
            self.buffer.set(&walk.draft);
            self.column = None;
            self.refresh_popup();
        }
        EditorOutcome::Changed
    }

    fn search_key(&mut self, key: KeyEvent) -> EditorOutcome {
        let Some(search) = &mut self.search else {
            return EditorOutcome::Nothing;
        };
        let m = key.modifiers;
        let ctrl = m == KeyModifiers::CONTROL;
        let entries = self.history.entries();
        match key.code {
            KeyCode::Char('r') if ctrl => search.older(entries),
            KeyCode::Esc => return self.end_search(false),
            KeyCode::Char('g' | 'c') if ctrl => return self.end_search(false),
            KeyCode::Enter if m.is_empty() => return self.end_search(true),
            KeyCode::Backspace if m.difference(KeyModifiers::SHIFT).is_empty() => {
                search.query.pop();
                search.found = None;
                search.narrow(entries);
            }
            KeyCode::Char(c) if m.difference(KeyModifiers::SHIFT).is_empty() => {
                search.query.push(c);
                search.narrow(entries);
            }
            _ => {
                // Any other key takes the match and then does what it does.
                self.end_search(true);
                return match self.on_key(key) {
                    EditorOutcome::Nothing => EditorOutcome::Search(SearchEvent::Accepted),
                    other => other,
                };
            }
        }
        EditorOutcome::Changed
    }

    fn end_search(&mut self, accept: bool) -> EditorOutcome {
        let Some(search) = self.search.take() else {
            return EditorOutcome::Nothing;
        };
        let found = search
            .matched(self.history.entries())
            .map(|(entry, _)| entry.to_string());
        match found {
            Some(entry) if accept => {
                self.show_recalled(&entry);
                self.walk = None;
                EditorOutcome::Search(SearchEvent::Accepted)
            }
            Some(_) | None => {
                let (text, cursor) = search.saved;
                self.buffer.set_with_cursor(&text, cursor);
                self.refresh_popup();
                EditorOutcome::Search(if accept {
                    SearchEvent::Accepted
                } else {
                    SearchEvent::Cancelled
                })
            }
        }
    }
}

/// What the input rows show: the text laid out, with its prefixes.
struct View {
    text: String,
    rows: Vec<render::Row>,
    cursor: (usize, usize),
    /// Bytes of `text` before this are the search's header (dimmed).
    header: usize,
    /// Columns taken by the prefix (`› ` or none in a search).
    prefix: usize,
}

impl Editor {
    fn view(&self, width: u16) -> View {
        let width = usize::from(width);
        if let Some(search) = &self.search {
            let matched = search.matched(self.history.entries());
            let header = format!(
                "({}reverse-i-search)'{}': ",
                if search.failed { "failed " } else { "" },
                search.query
            );
            let (entry, at) = matched.unwrap_or(("", 0));
            let text = format!("{header}{entry}");
            let (rows, cursor) = render::layout(&text, header.len() + at, width);
            return View {
                text,
                rows,
                cursor,
                header: header.len(),
                prefix: 0,
            };
        }
        let text = self.buffer.text().to_string();
        let (rows, cursor) = render::layout(&text, self.buffer.cursor(), width.saturating_sub(2));
        View {
            text,
            rows,
            cursor,
            header: 0,
            prefix: 2,
        }
    }

    fn popup_rows(&self) -> u16 {
        self.popup.as_ref().map_or(0, Popup::height)
    }

    /// The rows the editor wants at `width`: the popup's and the input's (at most
    /// [`MAX_INPUT_ROWS`]).
    pub fn desired_height(&self, width: u16) -> u16 {
        self.width.set(width);
        let rows = u16::try_from(self.view(width).rows.len()).unwrap_or(u16::MAX);
        self.popup_rows() + rows.clamp(1, MAX_INPUT_ROWS)
    }

    /// Splits `area` into the popup's rows (above) and the input's.
    fn areas(&self, area: Rect, view: &View) -> (Rect, Rect) {
        let wanted = u16::try_from(view.rows.len())
            .unwrap_or(u16::MAX)
            .clamp(1, MAX_INPUT_ROWS);
        let input = wanted.min(area.height);
        let popup = self.popup_rows().min(area.height - input);
        (
            Rect::new(area.x, area.y, area.width, popup),
            Rect::new(area.x, area.y + popup, area.width, input),
        )
    }

    fn top(&self, view: &View, height: u16) -> usize {
        render::scroll(
            self.scroll.get(),
            view.cursor.0,
            view.rows.len(),
            usize::from(height),
        )
    }

    /// Draws the popup (if open) above the input into `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        self.width.set(area.width);
        let view = self.view(area.width);
        let (popup_area, input_area) = self.areas(area, &view);
        if let Some(popup) = &self.popup
            && popup_area.height > 0
        {
            popup.render(popup_area, buf, theme);
        }
        if input_area.height == 0 || input_area.width == 0 {
            return;
        }
        let top = self.top(&view, input_area.height);
        self.scroll.set(top);
        if self.search.is_none() && view.text.is_empty() {
            let width = usize::from(input_area.width).saturating_sub(2);
            let placeholder = fit_placeholder(&self.placeholder, width);
            let line = Line::from(vec![
                Span::styled(PROMPT, theme.style(Role::User)),
                Span::styled(placeholder, theme.style(Role::Dim)),
            ]);
            buf.set_line(input_area.x, input_area.y, &line, input_area.width);
            return;
        }
        let (first, rest) = if view.prefix == 0 {
            (Span::raw(""), Span::raw(""))
        } else {
            (
                Span::styled(PROMPT, theme.style(Role::User)),
                Span::raw(INDENT),
            )
        };
        render::draw_rows(
            &view.text,
            &view.rows,
            top,
            input_area,
            buf,
            (&first, &rest),
            (theme.style(Role::Text), theme.style(Role::Dim)),
            view.header,
        );
    }

    /// Where the terminal's cursor goes when the editor is drawn into `area`.
    pub fn cursor_position(&self, area: Rect) -> (u16, u16) {
        let view = self.view(area.width);
        let (_, input) = self.areas(area, &view);
        let top = self.top(&view, input.height);
        let row = view.cursor.0.saturating_sub(top);
        let x = (view.prefix + view.cursor.1).min(usize::from(area.width.saturating_sub(1)));
        // Both are clamped to the area, which fits u16.
        (
            area.x + x as u16,
            input.y + (row as u16).min(input.height.saturating_sub(1)),
        )
    }
}

/// As many of the placeholder's ` · `-separated hints as fit in `width`, or the
/// first one cut with `…`.
fn fit_placeholder(placeholder: &str, width: usize) -> String {
    let mut out = String::new();
    for part in placeholder.split(" · ") {
        let candidate = if out.is_empty() {
            part.to_string()
        } else {
            format!("{out} · {part}")
        };
        if render::width_of(&candidate) > width {
            break;
        }
        out = candidate;
    }
    if !out.is_empty() || width == 0 {
        return out;
    }
    let mut used = 0;
    for (_, c) in buffer::clusters(placeholder) {
        let w = render::width_of(c);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push_str(c);
    }
    out.push('…');
    out
}
