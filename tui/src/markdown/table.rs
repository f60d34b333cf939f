//! A Markdown table laid out to a width: columns fitted (cells wrap at words), or,
//! when the columns cannot get a readable width, one `Header: value` line per cell.

use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::Theme;
use crate::text::{Flow, indented, width_of, wrap};
use crate::theme::Role;

/// A column gets at least its longest word up to this many columns (or its whole
/// width when narrower); a table whose columns cannot all get that falls back to the
/// per-row layout.
const MIN_COLUMN: usize = 10;
const SEPARATOR: &str = " │ ";

type Cell = Vec<Span<'static>>;

/// A table's cells as they are parsed.
#[derive(Debug, Default)]
pub(super) struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    pub(super) fn new(aligns: Vec<Alignment>) -> Table {
        Table {
            aligns,
            rows: Vec::new(),
        }
    }

    /// A new row (the first is the header).
    pub(super) fn row(&mut self) {
        self.rows.push(Vec::new());
    }

    pub(super) fn new_cell(&mut self) {
        if self.rows.is_empty() {
            self.row();
        }
        if let Some(row) = self.rows.last_mut() {
            row.push(Vec::new());
        }
    }

    /// The cell being filled.
    pub(super) fn cell(&mut self) -> &mut Cell {
        if self.rows.last().is_none_or(|r| r.is_empty()) {
            self.new_cell();
        }
        let row = self.rows.len() - 1;
        let cell = self.rows[row].len() - 1;
        &mut self.rows[row][cell]
    }

    /// The table's lines at `avail` columns; an empty line is a blank line.
    pub(super) fn lines(mut self, avail: usize, theme: &Theme) -> Vec<Line<'static>> {
        let n = self
            .rows
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .max(self.aligns.len());
        if n == 0 {
            return Vec::new();
        }
        for row in &mut self.rows {
            row.resize(n, Vec::new());
        }
        if let Some(header) = self.rows.first_mut() {
            for cell in header {
                for span in cell {
                    span.style = span.style.add_modifier(Modifier::BOLD);
                }
            }
        }
        match self.widths(n, avail) {
            Some(widths) => self.grid(&widths, theme),
            None => self.per_row(avail, theme),
        }
    }

    /// Column widths that fit `avail`, or none when a column would be unreadable.
    fn widths(&self, n: usize, avail: usize) -> Option<Vec<usize>> {
        let natural: Vec<usize> = (0..n)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| width_of(&r[c]))
                    .max()
                    .unwrap_or(0)
                    .max(1)
            })
            .collect();
        let seps = SEPARATOR.width() * (n - 1);
        if natural.iter().sum::<usize>() + seps <= avail {
            return Some(natural);
        }
        let budget = avail.checked_sub(seps)?;
        let longest_word = |c: usize| {
            self.rows
                .iter()
                .flat_map(|r| {
                    let text: String = r[c].iter().map(|s| s.content.as_ref()).collect();
                    text.split(' ')
                        .map(UnicodeWidthStr::width)
                        .collect::<Vec<_>>()
                })
                .max()
                .unwrap_or(1)
        };
        let mut widths: Vec<usize> = (0..n)
            .map(|c| natural[c].min(longest_word(c).clamp(3, MIN_COLUMN)))
            .collect();
        let mut left = budget.checked_sub(widths.iter().sum())?;
        // The columns short of their natural width get one column at a time, the
        // shortest of them first, until the width is used.
        while left > 0 {
            let Some(c) = (0..n)
                .filter(|&c| widths[c] < natural[c])
                .max_by_key(|&c| (natural[c] - widths[c], usize::MAX - c))
            else {
                break;
            };
            widths[c] += 1;
            left -= 1;
        }
        Some(widths)
    }

    fn grid(&self, widths: &[usize], theme: &Theme) -> Vec<Line<'static>> {
        let dim = theme.style(Role::Dim);
        let n = widths.len();
        let mut out = Vec::new();
        for (r, row) in self.rows.iter().enumerate() {
            let cells: Vec<Vec<Line<'static>>> = row
                .iter()
                .zip(widths)
                .map(|(cell, &w)| {
                    wrap(
                        &Line::from(cell.clone()),
                        u16::try_from(w).unwrap_or(u16::MAX),
                    )
                })
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1);
            for i in 0..height {
                let mut spans: Vec<Span<'static>> = Vec::new();
                for (c, lines) in cells.iter().enumerate() {
                    if c > 0 {
                        spans.push(Span::styled(SEPARATOR, dim));
                    }
                    let content = lines.get(i).map(|l| l.spans.clone()).unwrap_or_default();
                    let last = c + 1 == n;
                    pad(&mut spans, content, widths[c], self.align(c), last);
                }
                trim_end(&mut spans);
                out.push(Line::from(spans));
            }
            if r == 0 {
                let rule: Vec<String> = widths.iter().map(|&w| "─".repeat(w)).collect();
                out.push(Line::from(Span::styled(rule.join("─┼─"), dim)));
            }
        }
        out
    }

    fn per_row(&self, avail: usize, theme: &Theme) -> Vec<Line<'static>> {
        let width = u16::try_from(avail).unwrap_or(u16::MAX);
        let indent = vec![Span::raw("  ")];
        let Some((header, body)) = self.rows.split_first() else {
            return Vec::new();
        };
        if body.is_empty() {
            let mut spans = Vec::new();
            for (c, cell) in header.iter().enumerate() {
                if c > 0 {
                    spans.push(Span::styled(SEPARATOR, theme.style(Role::Dim)));
                }
                spans.extend(cell.iter().cloned());
            }
            return wrap(&Line::from(spans), width);
        }
        let mut out = Vec::new();
        for (r, row) in body.iter().enumerate() {
            if r > 0 {
                out.push(Line::default());
            }
            for (c, cell) in row.iter().enumerate() {
                let mut spans: Vec<Span<'static>> = if header[c].is_empty() {
                    let bold = Style::default().add_modifier(Modifier::BOLD);
                    vec![Span::styled(format!("column {}", c + 1), bold)]
                } else {
                    header[c].clone()
                };
                spans.push(Span::styled(":", theme.style(Role::Dim)));
                if !cell.is_empty() {
                    spans.push(Span::raw(" "));
                    spans.extend(cell.iter().cloned());
                }
                out.extend(indented(
                    &Line::from(spans),
                    width,
                    Vec::new(),
                    indent.clone(),
                    Flow::Words,
                ));
            }
        }
        out
    }

    fn align(&self, c: usize) -> Alignment {
        self.aligns.get(c).copied().unwrap_or(Alignment::None)
    }
}

/// `content` padded to `width` by `align` (a left-aligned last cell is not padded).
fn pad(
    spans: &mut Vec<Span<'static>>,
    content: Vec<Span<'static>>,
    width: usize,
    align: Alignment,
    last: bool,
) {
    let gap = width.saturating_sub(width_of(&content));
    let (before, after) = match align {
        Alignment::Right => (gap, 0),
        Alignment::Center => (gap / 2, gap - gap / 2),
        Alignment::Left | Alignment::None => (0, gap),
    };
    if before > 0 {
        spans.push(Span::raw(" ".repeat(before)));
    }
    spans.extend(content);
    if after > 0 && !last {
        spans.push(Span::raw(" ".repeat(after)));
    }
}

fn trim_end(spans: &mut Vec<Span<'static>>) {
    while let Some(last) = spans.last_mut() {
        let trimmed = last.content.trim_end();
        if trimmed.is_empty() {
            spans.pop();
        } else {
            if trimmed.len() != last.content.len() {
                last.content = trimmed.to_string().into();
            }
            break;
        }
    }
}
