//! The editor's layout: soft-wrapping the text into rows (at word boundaries when
//! it can), where the cursor lands, and drawing the rows into a buffer.

use std::borrow::Cow;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::buffer::clusters;

/// A tab is shown as this many spaces.
const TAB: &str = "    ";

/// How a cluster is shown: tabs as spaces, control characters as visible symbols.
pub(crate) fn display(cluster: &str) -> Cow<'_, str> {
    if cluster == "\t" {
        Cow::Borrowed(TAB)
    } else {
        xcsh_inspect::terminal::neutralize(cluster)
    }
}

/// The display width of `s` as the editor shows it.
pub(crate) fn width_of(s: &str) -> usize {
    clusters(s).map(|(_, c)| display(c).width()).sum()
}

/// One screen row: a byte range of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Whether the row starts a line of the text (not a wrapped continuation).
    pub(crate) line_start: bool,
}

/// The rows of `text` wrapped to `width` columns, and the cursor's (row, column).
/// A cursor at the end of a full row gets a row of its own.
pub(crate) fn layout(text: &str, cursor: usize, width: usize) -> (Vec<Row>, (usize, usize)) {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut line_start = 0;
    for line in text.split('\n') {
        wrap_line(text, line_start, line_start + line.len(), width, &mut rows);
        line_start += line.len() + 1;
    }
    let mut at = (0, 0);
    for (i, row) in rows.iter().enumerate() {
        let last_of_line = rows.get(i + 1).is_none_or(|next| next.line_start);
        if row.start <= cursor && (cursor < row.end || (cursor == row.end && last_of_line)) {
            at = (i, width_of(&text[row.start..cursor]));
            break;
        }
    }
    if at.1 >= width {
        let end = rows[at.0].end;
        rows.insert(
            at.0 + 1,
            Row {
                start: end,
                end,
                line_start: false,
            },
        );
        at = (at.0 + 1, 0);
    }
    (rows, at)
}

/// The cursor one screen row up (`up`) or down from `cursor` in `text` wrapped to
/// `width`, at display `column` of that row (the cursor's own column when `None`) or
/// the nearest boundary before it, with the column kept; `None` on the first (last)
/// row.
pub(crate) fn row_move(
    text: &str,
    cursor: usize,
    width: usize,
    up: bool,
    column: Option<usize>,
) -> Option<(usize, usize)> {
    let (rows, (row, own)) = layout(text, cursor, width);
    let column = column.unwrap_or(own);
    let target = if up { row.checked_sub(1)? } else { row + 1 };
    let r = *rows.get(target)?;
    // A wrapped row's end is where the next row starts: the cursor stays before it.
    let wrapped = rows.get(target + 1).is_some_and(|next| !next.line_start);
    let mut at = r.start;
    let mut used = 0;
    for (offset, c) in clusters(&text[r.start..r.end]) {
        let w = display(c).width();
        let after = r.start + offset + c.len();
        if used + w > column || (wrapped && after == r.end) {
            break;
        }
        used += w;
        at = after;
    }
    Some((at, column))
}

fn wrap_line(text: &str, start: usize, end: usize, width: usize, rows: &mut Vec<Row>) {
    let mut row_start = start;
    let mut used = 0;
    // The end of the last whitespace in the row, and the width up to it.
    let mut last_break: Option<(usize, usize)> = None;
    let mut first = true;
    for (offset, c) in clusters(&text[start..end]) {
        let at = start + offset;
        let w = display(c).width();
        if used + w > width && at > row_start {
            let (cut, cut_used) = match last_break {
                Some((b, bw)) if b > row_start && b < at + c.len() => (b, bw),
                Some(_) | None => (at, used),
            };
            rows.push(Row {
                start: row_start,
                end: cut,
                line_start: first,
            });
            first = false;
            row_start = cut;
            used -= cut_used;
            last_break = None;
        }
        used += w;
        if c.chars().all(char::is_whitespace) {
            last_break = Some((at + c.len(), used));
        }
    }
    rows.push(Row {
        start: row_start,
        end,
        line_start: first,
    });
}

/// The first visible row for a window of `height` rows that shows `cursor_row`,
/// moving as little as possible from `previous`.
pub(crate) fn scroll(previous: usize, cursor_row: usize, rows: usize, height: usize) -> usize {
    let height = height.max(1);
    let max_top = rows.saturating_sub(height);
    crate::overlay::scrolled(previous.min(max_top), cursor_row, height)
}

/// Draws `rows[top..]` of `text` into `area`, each after its prefix (`first` for a
/// line's first row, `rest` otherwise), styling bytes before `dim_until` as `dim`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn draw_rows(
    text: &str,
    rows: &[Row],
    top: usize,
    area: Rect,
    buf: &mut Buffer,
    prefixes: (&Span<'static>, &Span<'static>),
    styles: (Style, Style),
    dim_until: usize,
) {
    let (text_style, dim_style) = styles;
    for (i, row) in rows
        .iter()
        .skip(top)
        .take(usize::from(area.height))
        .enumerate()
    {
        let prefix = if top + i == 0 { prefixes.0 } else { prefixes.1 };
        let mut spans = vec![prefix.clone()];
        let mut dim = String::new();
        let mut plain = String::new();
        for (offset, c) in clusters(&text[row.start..row.end]) {
            if row.start + offset < dim_until {
                dim.push_str(&display(c));
            } else {
                plain.push_str(&display(c));
            }
        }
        if !dim.is_empty() {
            spans.push(Span::styled(dim, dim_style));
        }
        if !plain.is_empty() {
            spans.push(Span::styled(plain, text_style));
        }
        // i < area.height: fits u16.
        buf.set_line(area.x, area.y + i as u16, &Line::from(spans), area.width);
    }
}
