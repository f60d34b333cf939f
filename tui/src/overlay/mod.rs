//! Full-screen overlays on the alternate screen: the transcript (Ctrl-T), the branch
//! tree navigator (`/tree`), the session picker (`/resume`) and the diff viewer
//! (`/diff`). Each is a pure widget with key handling behind [`Overlay`]: the app
//! draws it into the whole screen, hands it every key, and acts on what it returns
//! ([`OverlayOutcome`]); none of them reads the log, the clock or a file itself.
//!
//! OWNER: helper "overlays". One frame ([`draw_chrome`]: title, position, key hints)
//! and one scrollable viewer ([`Pager`]) serve every overlay.

mod diff;
mod pager;
mod picker;
mod transcript;
mod tree;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;
use xcsh_machine::EntryId;

use crate::Theme;
use crate::cells::Cell;
use crate::theme::Role;

pub use diff::DiffOverlay;
pub use pager::{Pager, PagerKey};
pub use picker::{Picker, PickerRow, format_age, format_size};
pub use transcript::Transcript;
pub use tree::TreeNav;

/// A full-screen overlay: drawn into the whole screen, given every key while open.
pub trait Overlay {
    /// Draws the overlay (frame included) into `area`. `&mut` because an overlay
    /// re-lays itself out when the width changes and remembers the height it got
    /// (for paging).
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme);
    /// What a key does.
    fn on_key(&mut self, key: KeyEvent) -> OverlayOutcome;
    /// The overlay's title (as its frame shows it).
    fn title(&self) -> String;
    /// Entries were recorded since it opened: what it shows of the log is read again
    /// at the next draw. Only the transcript follows the conversation.
    fn refresh(&mut self) {}
    /// What the step in flight has streamed so far, not in the log yet (transient;
    /// its entry replaces it once recorded), given before each draw. Only the
    /// transcript shows it.
    fn set_live(&mut self, _live: Vec<Cell>) {}
}

/// What the app does after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverlayOutcome {
    /// Keep the overlay open (and redraw it).
    Stay,
    /// Close the overlay, back to the inline view.
    Close,
    /// Close the overlay and do this.
    Act(OverlayAction),
}

/// What an overlay asks the app to do (the app owns the log and the runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverlayAction {
    /// Continue from this entry, as `/at ENTRY` does (the tree navigator's Enter).
    ContinueAt(EntryId),
    /// Label this entry, as `/label` does (the tree navigator's `l`).
    Label { entry: EntryId, name: String },
    /// Resume the session in this file (the session picker's Enter).
    Resume(PathBuf),
}

/// The footer of an overlay's frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Footer<'a> {
    /// Key hints: `(key, what it does)`, drawn while they fit.
    Hints(&'a [(&'a str, &'a str)]),
    /// A line being typed: the label (`/`, `label #13: `), the text, a cursor.
    Prompt { label: String, text: String },
    /// A message (a search's `match 2/5`), then key hints.
    Message {
        text: String,
        hints: &'a [(&'a str, &'a str)],
    },
}

/// The rows of `area` between an overlay's title and footer ([`draw_chrome`]).
pub fn chrome_body(area: Rect) -> Rect {
    match area.height {
        0 | 1 => Rect::new(area.x, area.y + area.height, area.width, 0),
        h => Rect::new(area.x, area.y + 1, area.width, h - 2),
    }
}

/// Draws an overlay's frame into `area`: the title on the first row (the position,
/// e.g. `42/310`, at its right), the footer on the last; returns the rows between
/// (empty when `area` has fewer than three rows).
pub fn draw_chrome(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    title: &str,
    position: &str,
    footer: Footer<'_>,
) -> Rect {
    if area.height == 0 || area.width == 0 {
        return chrome_body(area);
    }
    let width = usize::from(area.width);
    // The header: the title, the position right-aligned when both fit.
    let pos_w = position.width();
    let mut header = Vec::new();
    if pos_w + 2 < width {
        header.push(Span::styled(title.to_string(), theme.style(Role::Heading)));
        let mut line = clip(Line::from(header), width - pos_w - 1);
        let pad = width - line.width() - pos_w;
        line.spans.push(Span::raw(" ".repeat(pad)));
        line.spans
            .push(Span::styled(position.to_string(), theme.style(Role::Dim)));
        buf.set_line(area.x, area.y, &line, area.width);
    } else {
        header.push(Span::styled(title.to_string(), theme.style(Role::Heading)));
        buf.set_line(area.x, area.y, &clip(Line::from(header), width), area.width);
    }
    if area.height >= 2 {
        let bottom = area.y + area.height - 1;
        let line = footer_line(footer, theme, width);
        buf.set_line(area.x, bottom, &line, area.width);
    }
    chrome_body(area)
}

fn footer_line(footer: Footer<'_>, theme: &Theme, width: usize) -> Line<'static> {
    match footer {
        Footer::Hints(hints) => hints_line(Vec::new(), hints, theme, width),
        Footer::Message { text, hints } => {
            let lead = vec![Span::styled(text, theme.style(Role::Warning))];
            hints_line(lead, hints, theme, width)
        }
        Footer::Prompt { label, text } => {
            let cursor = Span::styled(" ", theme.style(Role::Selected));
            let label = Span::styled(label, theme.style(Role::Key));
            // The end of a long text stays visible: it is where one types.
            let room = width.saturating_sub(label.width() + 1);
            let text = tail(&text, room);
            Line::from(vec![label, Span::raw(text), cursor])
        }
    }
}

/// `lead`, then as many hints as fit in `width`, two spaces apart.
fn hints_line(
    mut spans: Vec<Span<'static>>,
    hints: &[(&str, &str)],
    theme: &Theme,
    width: usize,
) -> Line<'static> {
    let mut used: usize = spans.iter().map(|s| s.width()).sum();
    if used > width {
        return clip(Line::from(spans), width);
    }
    for (key, what) in hints {
        let sep = if used == 0 { 0 } else { 2 };
        let w = sep + key.width() + 1 + what.width();
        if used + w > width {
            break;
        }
        if sep > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(key.to_string(), theme.style(Role::Key)));
        spans.push(Span::styled(format!(" {what}"), theme.style(Role::Dim)));
        used += w;
    }
    Line::from(spans)
}

/// `line` cut to `width` columns, its last column `…` when something was cut.
pub(crate) fn clip(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut out = Vec::new();
    let room = width.saturating_sub(1);
    let mut used = 0;
    let mut last_style = Style::default();
    'spans: for span in line.spans {
        let mut piece = String::new();
        for ch in span.content.chars() {
            let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + w > room {
                if !piece.is_empty() {
                    out.push(Span::styled(piece, span.style));
                }
                last_style = span.style;
                break 'spans;
            }
            used += w;
            piece.push(ch);
        }
        last_style = span.style;
        out.push(Span::styled(piece, span.style));
    }
    if width > 0 {
        out.push(Span::styled("…", last_style));
    }
    Line {
        spans: out,
        style: line.style,
        alignment: line.alignment,
    }
}

/// The first row shown of a list of rows `height` high whose first row shown was `top`,
/// moved as little as needed for the row `cursor` to be shown.
pub(crate) fn scrolled(top: usize, cursor: usize, height: usize) -> usize {
    if cursor < top {
        cursor
    } else if cursor >= top + height {
        cursor + 1 - height
    } else {
        top
    }
}

/// The row of the cursor: `line` padded to `width` columns, shown as selected.
fn selected(mut line: Line<'static>, width: usize, theme: &Theme) -> Line<'static> {
    let pad = width.saturating_sub(line.width());
    line.spans.push(Span::raw(" ".repeat(pad)));
    line.patch_style(theme.style(Role::Selected))
}

/// Draws rows `top..len` of a list into `area`, as many as fit, one a row
/// (`line(i)` for row `i`), the row `cursor` selected; returns the position the
/// chrome shows (`3/12`).
fn draw_list(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    (top, cursor, len): (usize, usize, usize),
    line: impl Fn(usize) -> Line<'static>,
) -> String {
    let width = usize::from(area.width);
    for (row, i) in (top..len).take(usize::from(area.height)).enumerate() {
        let mut l = line(i);
        if i == cursor {
            l = selected(l, width, theme);
        }
        buf.set_line(area.x, area.y + row as u16, &l, area.width);
    }
    format!("{}/{}", (cursor + 1).min(len), len)
}

/// The end of `text` that fits in `width` columns (`…` first when cut; a path
/// shows as `…/src/lib.rs`).
fn tail(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out: Vec<char> = Vec::new();
    let mut used = 1;
    for ch in text.chars().rev() {
        let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        out.push(ch);
    }
    out.push('…');
    out.into_iter().rev().collect()
}

/// The key as a plain character, if it is one (no Ctrl, no Alt).
pub(crate) fn plain_char(key: &KeyEvent) -> Option<char> {
    use crossterm::event::{KeyCode, KeyModifiers};
    match key.code {
        KeyCode::Char(c)
            if !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            Some(c)
        }
        _ => None,
    }
}

/// The key is a press (or a repeat), not a release: terminals with the kitty
/// protocol report releases too.
pub(crate) fn is_press(key: &KeyEvent) -> bool {
    !matches!(key.kind, crossterm::event::KeyEventKind::Release)
}
