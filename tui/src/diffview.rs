//! A unified diff as styled lines: the one diff view of the UI (tool cards,
//! approvals, the `/diff` overlay). Hunks with `@@` headers, an old/new line-number
//! gutter, `-`/`+` markers in the diff roles, three lines of context, a cut at a
//! number of rows (`… N more lines`) and a `--stat`-like summary (`+3 -1`).

use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};

use crate::Theme;
use crate::fmt;
use crate::theme::Role;

/// Lines of unchanged context around each change.
pub const CONTEXT: usize = 3;

/// How many lines a diff adds and removes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiffStat {
    pub added: usize,
    pub removed: usize,
}

impl DiffStat {
    /// `+3 -1` (each count in its diff role); `+3` alone for a new file's diff
    /// (nothing removed), `no changes` when both are zero.
    pub fn spans(&self, theme: &Theme) -> Vec<Span<'static>> {
        let mut out = Vec::new();
        if self.added == 0 && self.removed == 0 {
            out.push(Span::styled("no changes", theme.style(Role::Dim)));
            return out;
        }
        out.push(Span::styled(
            format!("+{}", self.added),
            theme.style(Role::DiffAdd),
        ));
        if self.removed > 0 {
            out.push(Span::raw(" "));
            out.push(Span::styled(
                format!("-{}", self.removed),
                theme.style(Role::DiffRemove),
            ));
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    /// `@@ -old_start,old_len +new_start,new_len @@`
    Hunk(String),
    Line {
        old: Option<usize>,
        new: Option<usize>,
        tag: ChangeTag,
        text: String,
    },
}

/// The diff from one text to another, computed once and drawn at any width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    rows: Vec<Row>,
    stat: DiffStat,
    /// The widest line number, for the gutter.
    number_width: usize,
}

impl Diff {
    /// The diff from `before` to `after`; `before` is `None` for a file that does
    /// not exist yet (every line is added).
    pub fn new(before: Option<&str>, after: &str) -> Diff {
        let old = before.unwrap_or("");
        let diff = TextDiff::from_lines(old, after);
        let mut rows = Vec::new();
        let mut stat = DiffStat::default();
        let mut widest = 0;
        for group in diff.grouped_ops(CONTEXT) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            rows.push(Row::Hunk(format!(
                "@@ -{} +{} @@",
                range(old_range.start, old_range.len()),
                range(new_range.start, new_range.len()),
            )));
            for op in &group {
                for change in diff.iter_changes(op) {
                    let tag = change.tag();
                    match tag {
                        ChangeTag::Insert => stat.added += 1,
                        ChangeTag::Delete => stat.removed += 1,
                        ChangeTag::Equal => {}
                    }
                    let old = change.old_index().map(|i| i + 1);
                    let new = change.new_index().map(|i| i + 1);
                    widest = widest.max(old.unwrap_or(0)).max(new.unwrap_or(0));
                    let text = change.value().trim_end_matches(['\n', '\r']).to_owned();
                    rows.push(Row::Line {
                        old,
                        new,
                        tag,
                        text,
                    });
                }
            }
        }
        Diff {
            rows,
            stat,
            number_width: widest.to_string().len(),
        }
    }

    /// How many lines were added and removed.
    pub fn stat(&self) -> DiffStat {
        self.stat
    }

    /// Whether the two texts are the same.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Every row of the diff wrapped to `width` columns.
    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for row in &self.rows {
            out.extend(self.row_lines(row, width, theme));
        }
        out
    }

    /// The diff in at most `max_lines` rows (at least one): when it is longer, the
    /// last row says `… N more lines` followed by `hint` (e.g. ` (Ctrl-T shows all)`),
    /// N counting the diff's lines left out, not the screen rows they would wrap to.
    pub fn lines_cut(
        &self,
        width: u16,
        max_lines: usize,
        hint: &str,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let max_lines = max_lines.max(1);
        let per_row: Vec<Vec<Line<'static>>> = self
            .rows
            .iter()
            .map(|row| self.row_lines(row, width, theme))
            .collect();
        if per_row.iter().map(Vec::len).sum::<usize>() <= max_lines {
            return per_row.into_iter().flatten().collect();
        }
        let mut lines = Vec::new();
        let mut shown = 0;
        for row in &per_row {
            if lines.len() + row.len() > max_lines - 1 {
                break;
            }
            lines.extend(row.iter().cloned());
            shown += 1;
        }
        lines.push(more_line(per_row.len() - shown, hint, width, theme));
        lines
    }

    fn row_lines(&self, row: &Row, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        match row {
            Row::Hunk(header) => vec![Line::from(Span::styled(
                fmt::clip(header, usize::from(width)),
                theme.style(Role::DiffHeader),
            ))],
            Row::Line {
                old,
                new,
                tag,
                text,
            } => {
                let n = self.number_width;
                let number = |v: &Option<usize>| match v {
                    Some(v) => format!("{v:>n$}"),
                    None => " ".repeat(n),
                };
                let (marker, role) = match tag {
                    ChangeTag::Delete => ('-', Role::DiffRemove),
                    ChangeTag::Insert => ('+', Role::DiffAdd),
                    ChangeTag::Equal => (' ', Role::Text),
                };
                let gutter = format!("{} {} ", number(old), number(new));
                let blank = " ".repeat(gutter.len());
                let style = theme.style(role);
                let body = Line::from(Span::styled(fmt::clean(text), style));
                // The gutter is dropped when it would leave less than 8 columns.
                let (first, rest) = if usize::from(width) >= gutter.len() + 9 {
                    (gutter, blank)
                } else {
                    (String::new(), String::new())
                };
                fmt::prefixed(
                    vec![body],
                    width,
                    Span::styled(format!("{first}{marker}"), style),
                    Span::styled(format!("{rest} "), style),
                )
                .into_iter()
                .map(|line| dim_gutter(line, first.len(), theme))
                .collect()
            }
        }
    }
}

/// `start,len` of a hunk range as unified diffs write it (1-based; a range of one
/// line is just its number, an empty range names the line before it).
fn range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// The line numbers of a diff row in the dim role (they are not the change).
fn dim_gutter(line: Line<'static>, gutter: usize, theme: &Theme) -> Line<'static> {
    if gutter == 0 {
        return line;
    }
    let mut spans = line.spans;
    if let Some(first) = spans.first_mut()
        && first.content.len() > gutter
    {
        let content = first.content.to_string();
        let (numbers, marker) = content.split_at(gutter);
        let marker = Span::styled(marker.to_owned(), first.style);
        *first = Span::styled(numbers.to_owned(), theme.style(Role::Dim));
        spans.insert(1, marker);
    }
    Line::from(spans)
}

/// `… N more lines` + `hint`, dim.
pub fn more_line(hidden: usize, hint: &str, width: u16, theme: &Theme) -> Line<'static> {
    let plural = if hidden == 1 { "line" } else { "lines" };
    Line::from(Span::styled(
        fmt::clip(
            &format!("… {hidden} more {plural}{hint}"),
            usize::from(width),
        ),
        theme.style(Role::Dim),
    ))
}

/// The unified diff from `before` to `after`, unwrapped (the first version's API,
/// kept for callers that wrap themselves).
pub fn unified(before: &str, after: &str, theme: &Theme) -> Vec<Line<'static>> {
    Diff::new(Some(before), after).lines(u16::MAX, theme)
}

/// The unified diff from `before` (`None`: a new file) to `after` at `width`
/// columns, cut at `max_lines` rows when given.
pub fn unified_at(
    before: Option<&str>,
    after: &str,
    width: u16,
    max_lines: Option<usize>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let diff = Diff::new(before, after);
    match max_lines {
        Some(max) => diff.lines_cut(width, max, "", theme),
        None => diff.lines(width, theme),
    }
}

#[cfg(test)]
mod tests;
