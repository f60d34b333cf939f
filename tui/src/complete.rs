//! Completion popups for the editor: slash commands (from a list the app gives)
//! and `@path` mentions (fuzzy over the workspace's files), plus [`mentions`], which
//! finds the `@path` tokens of a submitted message.
//!
//! OWNER: helper "input".
//!
//! A mention is an `@` at the start of the text or after whitespace, followed by
//! one or more non-whitespace characters (so `a@b.c` is an e-mail address, not a
//! mention). Pure except [`FileIndex::scan`].

mod files;
mod fuzzy;
#[cfg(test)]
mod tests;

use std::ops::Range;
use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

pub use files::{DEFAULT_FILE_LIMIT, FileIndex};
pub use fuzzy::{Matcher, rank};

use crate::Theme;
use crate::theme::Role;

/// At most this many rows of a popup are shown (it scrolls past them).
pub const POPUP_ROWS: usize = 8;
/// At most this many files are listed for a mention.
const FILE_ITEMS: usize = 50;

/// A slash command the popup offers: its name (without the `/`), one-line help
/// and the other names it answers to (`quit` for `exit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    pub name: String,
    pub help: String,
    pub aliases: Vec<String>,
}

/// What the popups complete from: the app's commands and the workspace's files.
#[derive(Debug, Clone, Default)]
pub struct Completer {
    commands: Vec<CommandSpec>,
    files: Arc<FileIndex>,
}

/// Which popup is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopupKind {
    /// `/name`: slash commands.
    Command,
    /// `@path`: a file mention.
    File,
}

/// One row of a popup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PopupItem {
    /// The command name (without `/`) or the file path.
    pub value: String,
    /// The command's help (empty for files).
    pub detail: String,
    /// The character indices of `value` the query matched (for highlighting).
    pub positions: Vec<usize>,
}

/// An open popup: its rows, the selected one and the part of the text a completion
/// replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Popup {
    kind: PopupKind,
    items: Vec<PopupItem>,
    selected: usize,
    /// The byte range of the text the popup completes (`/name` or `@partial`).
    token: Range<usize>,
    /// The query typed (the token without its `/` or `@`).
    query: String,
}

/// A completion to apply: replace `range` (bytes of the text) with `insert`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub range: Range<usize>,
    pub insert: String,
}

impl Completer {
    /// A completer for `commands` (`(name, help)`; a leading `/` on the name is
    /// dropped), with no files yet.
    pub fn new(commands: &[(&str, &str)]) -> Completer {
        Completer {
            commands: commands
                .iter()
                .map(|(name, help)| CommandSpec {
                    name: name.trim_start_matches('/').to_string(),
                    help: help.to_string(),
                    aliases: Vec::new(),
                })
                .collect(),
            files: Arc::default(),
        }
    }

    /// `alias` is another name of the command `of`: the popup lists it, in the
    /// command's place, when what is typed starts it and not the command's name
    /// (`/q` lists `/quit`, `/e` lists `/exit`).
    pub fn with_alias(mut self, alias: &str, of: &str) -> Completer {
        let alias = alias.trim_start_matches('/').to_string();
        if let Some(c) = self
            .commands
            .iter_mut()
            .find(|c| c.name == of.trim_start_matches('/'))
        {
            c.aliases.push(alias);
        }
        self
    }

    /// The files `@` completes from (e.g. once a background scan is done).
    pub fn set_files(&mut self, files: Arc<FileIndex>) {
        self.files = files;
    }

    pub fn commands(&self) -> &[CommandSpec] {
        &self.commands
    }

    /// The popup for `text` with the cursor at byte `cursor`, if one applies.
    pub fn popup(&self, text: &str, cursor: usize) -> Option<Popup> {
        if let Some(query) = text.strip_prefix('/')
            && !text.contains(char::is_whitespace)
        {
            let items = self.command_items(query);
            return (!items.is_empty()).then(|| Popup {
                kind: PopupKind::Command,
                items,
                selected: 0,
                token: 0..text.len(),
                query: query.to_string(),
            });
        }
        let token = word_at(text, cursor);
        let query = text[token.clone()].strip_prefix('@')?;
        Some(Popup {
            kind: PopupKind::File,
            items: self.file_items(query),
            selected: 0,
            token,
            query: query.to_string(),
        })
    }

    /// Commands whose name (or an alias) starts with `query`, the shortest first
    /// (the exact name, then `/quit` before `/queue` for `/q`; in the list's order
    /// when nothing is typed), then those whose name contains it.
    fn command_items(&self, query: &str) -> Vec<PopupItem> {
        let query_lower = query.to_lowercase();
        let item = |c: &CommandSpec, value: &str, at: usize| PopupItem {
            value: value.to_string(),
            detail: c.help.clone(),
            positions: (at..at + query.chars().count()).collect(),
        };
        let starts = |name: &str| name.to_lowercase().starts_with(&query_lower);
        let mut prefix = Vec::new();
        let mut inner = Vec::new();
        for c in &self.commands {
            let lower = c.name.to_lowercase();
            if starts(&c.name) {
                prefix.push(item(c, &c.name, 0));
            } else if let Some(alias) = c.aliases.iter().find(|a| starts(a)) {
                prefix.push(item(c, alias, 0));
            } else if let Some(at) = lower.find(&query_lower) {
                inner.push(item(c, &c.name, lower[..at].chars().count()));
            }
        }
        if !query.is_empty() {
            prefix.sort_by_key(|i| i.value.chars().count());
        }
        prefix.extend(inner);
        prefix
    }

    fn file_items(&self, query: &str) -> Vec<PopupItem> {
        let paths = self.files.paths();
        let mut matcher = Matcher::new(query);
        rank(query, paths, FILE_ITEMS)
            .into_iter()
            .map(|i| {
                let value = paths[i].clone();
                let positions = matcher
                    .positions(&value)
                    .map(|(_, p)| p)
                    .unwrap_or_default();
                PopupItem {
                    value,
                    detail: String::new(),
                    positions,
                }
            })
            .collect()
    }
}

/// Whether a command's help says it needs an argument: it starts with the
/// argument's name in capitals and `: ` (`TEXT: a follow-up…`).
fn needs_argument(help: &str) -> bool {
    help.split_once(": ")
        .is_some_and(|(arg, _)| !arg.is_empty() && arg.chars().all(|c| c.is_ascii_uppercase()))
}

/// The byte range of the whitespace-delimited word around `cursor`.
fn word_at(text: &str, cursor: usize) -> Range<usize> {
    let start = text[..cursor]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[cursor..]
        .find(char::is_whitespace)
        .map_or(text.len(), |i| cursor + i);
    start..end
}

impl Popup {
    pub fn kind(&self) -> PopupKind {
        self.kind
    }

    pub fn items(&self) -> &[PopupItem] {
        &self.items
    }

    /// The selected row's index.
    pub fn selected_index(&self) -> usize {
        self.selected
    }

    pub fn selected(&self) -> Option<&PopupItem> {
        self.items.get(self.selected)
    }

    /// The query typed (the token without its `/` or `@`).
    pub fn query(&self) -> &str {
        &self.query
    }

    /// Keeps the selection of `previous` if the same value is still listed.
    pub(crate) fn keep_selection(&mut self, previous: &Popup) {
        if previous.kind != self.kind {
            return;
        }
        if let Some(value) = previous.selected().map(|i| &i.value)
            && let Some(at) = self.items.iter().position(|i| &i.value == value)
        {
            self.selected = at;
        }
    }

    /// Moves the selection down (`forward`) or up, wrapping around.
    pub fn select(&mut self, forward: bool) {
        let n = self.items.len();
        if n == 0 {
            return;
        }
        self.selected = if forward {
            (self.selected + 1) % n
        } else {
            (self.selected + n - 1) % n
        };
    }

    /// What Enter sends from a command popup: `/name` of the selected command,
    /// unless it needs an argument (its help starts `ARG: `, as `TEXT: …` does;
    /// `[NAME]: …` is optional), which Enter completes to `/name ` and waits for.
    pub fn command_to_run(&self) -> Option<String> {
        let item = self
            .selected()
            .filter(|_| self.kind == PopupKind::Command)?;
        (!needs_argument(&item.detail)).then(|| format!("/{}", item.value))
    }

    /// The completion of the selected row: `/name ` or `@path ` over the token.
    pub fn completion(&self) -> Option<Completion> {
        let item = self.selected()?;
        let insert = match self.kind {
            PopupKind::Command => format!("/{} ", item.value),
            PopupKind::File => mention_of(&item.value),
        };
        Some(Completion {
            range: self.token.clone(),
            insert,
        })
    }

    /// The rows this popup takes.
    pub fn height(&self) -> u16 {
        // At most POPUP_ROWS (8): fits u16.
        self.items.len().clamp(1, POPUP_ROWS) as u16
    }

    /// Draws the popup into `area` (its top `height()` rows).
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = usize::from(area.width);
        let rows = usize::from(area.height).min(usize::from(self.height()));
        if width == 0 || rows == 0 {
            return;
        }
        if self.items.is_empty() {
            let line = Line::from(Span::styled(
                truncate("no matching files", width),
                theme.style(Role::Dim),
            ));
            buf.set_line(area.x, area.y, &line, area.width);
            return;
        }
        let top = (self.selected + 1).saturating_sub(rows);
        let name_width = self
            .items
            .iter()
            .map(|i| i.value.width() + 1)
            .max()
            .unwrap_or(0)
            .min(width / 2);
        for (row, (index, item)) in self
            .items
            .iter()
            .enumerate()
            .skip(top)
            .take(rows)
            .enumerate()
        {
            let y = area.y + row as u16; // row < rows <= area.height
            let line = match self.kind {
                PopupKind::Command => command_line(item, name_width, width, theme),
                PopupKind::File => file_line(item, width, theme),
            };
            buf.set_line(area.x, y, &line, area.width);
            if index == self.selected {
                buf.set_style(
                    Rect::new(area.x, y, area.width, 1),
                    theme.style(Role::Selected),
                );
            }
        }
    }
}

fn command_line(item: &PopupItem, name_width: usize, width: usize, theme: &Theme) -> Line<'static> {
    let name = truncate(&format!("/{}", item.value), name_width.max(2));
    let pad = name_width.saturating_sub(name.width());
    let mut spans = vec![Span::styled(name, theme.style(Role::Key))];
    let rest = width.saturating_sub(name_width + 2);
    if rest > 0 && !item.detail.is_empty() {
        spans.push(Span::raw(" ".repeat(pad + 2)));
        spans.push(Span::styled(
            truncate(&item.detail, rest),
            theme.style(Role::Dim),
        ));
    }
    Line::from(spans)
}

/// A path, shortened from the left to fit, matched characters highlighted.
fn file_line(item: &PopupItem, width: usize, theme: &Theme) -> Line<'static> {
    let chars: Vec<char> = item.value.chars().collect();
    let mut skip = 0;
    let mut used = item.value.width();
    let shortened = used > width;
    if shortened {
        // Room for "…": drop characters from the left until the rest fits.
        while skip < chars.len() && used + 1 > width {
            used -= unicode_width::UnicodeWidthChar::width(chars[skip]).unwrap_or(0);
            skip += 1;
        }
        // Start at a path segment when one is left to start at.
        if let Some(slash) = chars[skip..].iter().position(|&c| c == '/')
            && skip + slash + 1 < chars.len()
        {
            skip += slash;
        }
    }
    let mut spans = Vec::new();
    if shortened {
        spans.push(Span::styled("…", theme.style(Role::Dim)));
    }
    let mut run = String::new();
    let mut run_hit = false;
    for (i, &c) in chars.iter().enumerate().skip(skip) {
        let hit = item.positions.contains(&i);
        if hit != run_hit && !run.is_empty() {
            spans.push(styled_run(std::mem::take(&mut run), run_hit, theme));
        }
        run_hit = hit;
        run.push(c);
    }
    if !run.is_empty() {
        spans.push(styled_run(run, run_hit, theme));
    }
    Line::from(spans)
}

fn styled_run(text: String, hit: bool, theme: &Theme) -> Span<'static> {
    let text = xcsh_inspect::terminal::neutralize(&text).into_owned();
    if hit {
        Span::styled(text, theme.style(Role::Key))
    } else {
        Span::styled(text, theme.style(Role::Text))
    }
}

/// `s` cut to `width` columns, ending in `…` when cut.
fn truncate(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

pub use xcsh_log::mention::mentions;

/// How the `@` popup writes `path` into the message: `@path`, or `@"path"` when it
/// holds white space (see [`mentions`]).
fn mention_of(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        format!("@\"{path}\" ")
    } else {
        format!("@{path} ")
    }
}
