//! The one scrollable viewer of the overlays: lines already wrapped to the width,
//! scrolled by line and page, searched with `/` (matches highlighted, `n`/`N` to
//! the next and previous one). The transcript and the diff viewer are built on it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use xcsh_log::describe::quoted;

use super::{Footer, chrome_body, draw_chrome, is_press, plain_char};
use crate::Theme;
use crate::theme::Role;

/// A scrollable view of lines with search.
#[derive(Debug, Default)]
pub struct Pager {
    lines: Vec<Line<'static>>,
    /// The first line shown.
    top: usize,
    /// Rows of the body at the last render (0 before the first).
    height: usize,
    /// Stay at the bottom as lines are added (set at the end, cleared by scrolling
    /// up).
    follow: bool,
    search: Search,
}

#[derive(Debug, Default)]
enum Search {
    #[default]
    Off,
    /// `/` was pressed: the query being typed.
    Typing(String),
    /// A query was entered: its matches (in order) and the current one.
    Active {
        query: String,
        matches: Vec<Match>,
        current: usize,
    },
}

/// A match: its line and its character range in the line's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Match {
    line: usize,
    start: usize,
    len: usize,
}

/// What the pager did with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PagerKey {
    /// It used the key (scrolled, searched): redraw.
    Handled,
    /// `q`, or Esc without an active search: close the overlay.
    Close,
    /// Not a pager key: the overlay may use it (`n` without a search, …).
    Ignored,
}

/// The pager's key hints (for a footer).
pub const PAGER_HINTS: &[(&str, &str)] = &[
    ("↑↓", "scroll"),
    ("PgUp/PgDn", "page"),
    ("g/G", "top/end"),
    ("/", "search"),
    ("q", "close"),
];

impl Pager {
    /// An empty pager, at the top.
    pub fn new() -> Pager {
        Pager::default()
    }

    /// An empty pager that starts at the bottom and follows what is added there.
    pub fn at_end() -> Pager {
        Pager {
            follow: true,
            ..Pager::default()
        }
    }

    /// Replaces the lines (re-wrapped, or more of them): a pager at the bottom stays
    /// at the bottom; otherwise the first line shown stays where it is. The search
    /// is run again over the new lines.
    pub fn set_lines(&mut self, lines: Vec<Line<'static>>) {
        self.lines = lines;
        if let Search::Active {
            query,
            matches,
            current,
        } = &mut self.search
        {
            *matches = find(&self.lines, query);
            *current = (*current).min(matches.len().saturating_sub(1));
        }
        self.settle();
    }

    /// Replaces the lines from `from` on with `tail` (an end that changes more often
    /// than the rest), as [`Pager::set_lines`] does.
    pub fn replace_from(&mut self, from: usize, tail: Vec<Line<'static>>) {
        let mut lines = std::mem::take(&mut self.lines);
        lines.truncate(from);
        lines.extend(tail);
        self.set_lines(lines);
    }

    /// The lines shown.
    pub fn lines(&self) -> &[Line<'static>] {
        &self.lines
    }

    /// The first line shown.
    pub fn top(&self) -> usize {
        self.top
    }

    /// Shows `line` at the top (or as near as the end allows).
    pub fn scroll_to(&mut self, line: usize) {
        self.top = line;
        self.follow = false;
        self.settle();
    }

    /// Shows the last lines, and follows what is added.
    pub fn scroll_to_end(&mut self) {
        self.follow = true;
        self.settle();
    }

    /// The last line is shown.
    pub fn at_bottom(&self) -> bool {
        self.follow || self.top >= self.max_top()
    }

    /// `LAST/TOTAL`: the last line shown and the number of lines (`42/310`).
    pub fn position(&self) -> String {
        let last = (self.top + self.height.max(1)).min(self.lines.len());
        format!("{last}/{}", self.lines.len())
    }

    /// A query is being typed (every key goes to it).
    pub fn typing(&self) -> bool {
        matches!(self.search, Search::Typing(_))
    }

    /// The footer to show: the query being typed, the current match, or `hints`.
    pub fn footer<'a>(&self, hints: &'a [(&'a str, &'a str)]) -> Footer<'a> {
        match &self.search {
            Search::Off => Footer::Hints(hints),
            Search::Typing(q) => Footer::Prompt {
                label: "/".into(),
                text: q.clone(),
            },
            Search::Active {
                query,
                matches,
                current,
            } => {
                let query = quoted(query);
                let text = if matches.is_empty() {
                    format!("no match for {query}")
                } else {
                    format!("match {}/{} for {query}", current + 1, matches.len())
                };
                Footer::Message {
                    text,
                    hints: SEARCH_HINTS,
                }
            }
        }
    }

    fn max_top(&self) -> usize {
        self.lines.len().saturating_sub(self.height.max(1))
    }

    /// Keeps `top` in range (at the end when following).
    fn settle(&mut self) {
        let max = self.max_top();
        if self.follow || self.top > max {
            self.top = max;
        }
    }

    fn scroll_by(&mut self, delta: isize) {
        let max = self.max_top();
        self.top = self.top.saturating_add_signed(delta).min(max);
        self.follow = self.top == max && delta > 0;
    }

    /// What a key does.
    pub fn on_key(&mut self, key: KeyEvent) -> PagerKey {
        if !is_press(&key) {
            return PagerKey::Ignored;
        }
        if let Search::Typing(query) = &mut self.search {
            match key.code {
                KeyCode::Esc => self.search = Search::Off,
                KeyCode::Enter => {
                    let query = std::mem::take(query);
                    self.start_search(query);
                }
                KeyCode::Backspace => {
                    if query.pop().is_none() {
                        self.search = Search::Off;
                    }
                }
                _ => {
                    if let Some(c) = plain_char(&key) {
                        query.push(c);
                    }
                }
            }
            return PagerKey::Handled;
        }
        let page = self.height.max(1) as isize;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Up => self.scroll_by(-1),
            KeyCode::Down => self.scroll_by(1),
            KeyCode::PageUp => self.scroll_by(-page),
            KeyCode::PageDown => self.scroll_by(page),
            KeyCode::Home => self.scroll_to(0),
            KeyCode::End => self.scroll_to_end(),
            KeyCode::Esc => {
                if matches!(self.search, Search::Active { .. }) {
                    self.search = Search::Off;
                } else {
                    return PagerKey::Close;
                }
            }
            KeyCode::Char('u') if ctrl => self.scroll_by(-(page / 2).max(1)),
            KeyCode::Char('d') if ctrl => self.scroll_by((page / 2).max(1)),
            _ => match plain_char(&key) {
                Some('k') => self.scroll_by(-1),
                Some('j') => self.scroll_by(1),
                Some(' ') => self.scroll_by(page),
                Some('b') => self.scroll_by(-page),
                Some('g') => self.scroll_to(0),
                Some('G') => self.scroll_to_end(),
                Some('q') => return PagerKey::Close,
                Some('/') => self.search = Search::Typing(String::new()),
                Some('n') if matches!(self.search, Search::Active { .. }) => self.next_match(1),
                Some('N') if matches!(self.search, Search::Active { .. }) => self.next_match(-1),
                _ => return PagerKey::Ignored,
            },
        }
        PagerKey::Handled
    }

    /// Searches for `query` (case-insensitive) and shows the first match from the
    /// top of the view on.
    fn start_search(&mut self, query: String) {
        if query.is_empty() {
            self.search = Search::Off;
            return;
        }
        let matches = find(&self.lines, &query);
        let current = matches.iter().position(|m| m.line >= self.top).unwrap_or(0);
        let line = matches.get(current).map(|m| m.line);
        self.search = Search::Active {
            query,
            matches,
            current,
        };
        if let Some(line) = line {
            self.reveal(line);
        }
    }

    /// The next (`1`) or previous (`-1`) match, round the end.
    fn next_match(&mut self, step: isize) {
        let Search::Active {
            matches, current, ..
        } = &mut self.search
        else {
            return;
        };
        if matches.is_empty() {
            return;
        }
        let n = matches.len() as isize;
        *current = (*current as isize + step).rem_euclid(n) as usize;
        let line = matches[*current].line;
        self.reveal(line);
    }

    /// Scrolls so that `line` is shown (a third of the way down when it was not).
    fn reveal(&mut self, line: usize) {
        let height = self.height.max(1);
        if line < self.top || line >= self.top + height {
            self.top = line.saturating_sub(height / 3);
        }
        self.follow = false;
        self.settle();
    }

    /// Draws the pager in an overlay's frame over `area` ([`draw_chrome`]): `title`,
    /// the position, and `hints` (with the search's state) in the footer.
    pub fn render_framed(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        title: &str,
        hints: &[(&str, &str)],
    ) {
        self.render(chrome_body(area), buf, theme);
        draw_chrome(
            area,
            buf,
            theme,
            title,
            &self.position(),
            self.footer(hints),
        );
    }

    /// Draws the visible lines into `area` (and remembers its height for paging).
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        self.height = usize::from(area.height);
        self.settle();
        let (matches, current) = match &self.search {
            Search::Active {
                matches, current, ..
            } => (matches.as_slice(), Some(*current)),
            Search::Off | Search::Typing(_) => (&[][..], None),
        };
        for row in 0..area.height {
            let at = self.top + usize::from(row);
            let Some(line) = self.lines.get(at) else {
                break;
            };
            let from = matches.partition_point(|m| m.line < at);
            let to = matches.partition_point(|m| m.line <= at);
            let line = if from == to {
                line.clone()
            } else {
                let ranges: Vec<(usize, usize, Style)> = (from..to)
                    .map(|i| {
                        let role = if Some(i) == current {
                            Role::Selected
                        } else {
                            Role::Label
                        };
                        (matches[i].start, matches[i].len, theme.style(role))
                    })
                    .collect();
                highlight(line, &ranges)
            };
            buf.set_line(area.x, area.y + row, &line, area.width);
        }
    }
}

const SEARCH_HINTS: &[(&str, &str)] =
    &[("n/N", "next/prev"), ("Esc", "end search"), ("q", "close")];

/// A character as searched: lower case (one character for one, so that positions
/// agree).
fn fold(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// Every case-insensitive occurrence of `query` in `lines` (within a line), in order.
fn find(lines: &[Line<'static>], query: &str) -> Vec<Match> {
    let needle: Vec<char> = query.chars().map(fold).collect();
    if needle.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let hay: Vec<char> = line
            .spans
            .iter()
            .flat_map(|s| s.content.chars())
            .map(fold)
            .collect();
        let mut at = 0;
        while at + needle.len() <= hay.len() {
            if hay[at..at + needle.len()] == needle[..] {
                out.push(Match {
                    line: i,
                    start: at,
                    len: needle.len(),
                });
                at += needle.len();
            } else {
                at += 1;
            }
        }
    }
    out
}

/// `line` with the character ranges `(start, len, style)` (in order, apart) patched
/// with their style.
fn highlight(line: &Line<'static>, ranges: &[(usize, usize, Style)]) -> Line<'static> {
    let mut spans = Vec::new();
    let mut pos = 0;
    let mut r = 0;
    for span in &line.spans {
        let mut piece = String::new();
        let mut piece_style = None;
        for ch in span.content.chars() {
            while r < ranges.len() && pos >= ranges[r].0 + ranges[r].1 {
                r += 1;
            }
            let style = match ranges.get(r) {
                Some(&(start, _, s)) if pos >= start => span.style.patch(s),
                _ => span.style,
            };
            if piece_style.is_some_and(|p| p != style) {
                spans.push(Span::styled(
                    std::mem::take(&mut piece),
                    piece_style.unwrap_or(style),
                ));
            }
            piece_style = Some(style);
            piece.push(ch);
            pos += 1;
        }
        if let Some(style) = piece_style {
            spans.push(Span::styled(piece, style));
        }
    }
    Line {
        spans,
        style: line.style,
        alignment: line.alignment,
    }
}
