//! The `/tree` navigator: the session's branch tree drawn as `xcsh tree` draws it
//! (the same rows, guides and node text: `xcsh_inspect::tree::for_each_row` and
//! `node_line`), a cursor over its rows (turns, or every entry with `f`), Enter to
//! continue from the selected node (as `/at`), `l` to label it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;
use xcsh_inspect::Style as InspectStyle;
use xcsh_inspect::terminal::neutralize;
use xcsh_inspect::tree::{Node, Tree, for_each_row, node_line};
use xcsh_machine::EntryId;

use super::{
    Footer, Overlay, OverlayAction, OverlayOutcome, chrome_body, clip, draw_chrome, is_press,
    plain_char,
};
use crate::Theme;
use crate::theme::Role;

/// Builds the session's tree: turns (`false`) or every entry (`true`), e.g.
/// `move |full| xcsh_inspect::tree::build(&log, full)`.
pub type BuildTree = Box<dyn Fn(bool) -> Tree>;

/// The tree navigator.
pub struct TreeNav {
    build: BuildTree,
    full: bool,
    session_id: String,
    forked_from: Option<String>,
    rows: Vec<NavRow>,
    cursor: usize,
    /// The first row shown.
    top: usize,
    /// The label being typed (`l`), if any.
    prompt: Option<String>,
}

/// One row as drawn: its guide, its text in parts (each neutralized), what it
/// stands for.
#[derive(Debug, Clone)]
struct NavRow {
    guide: String,
    /// `#1..8`.
    ids: String,
    /// The rest of `node_line` before the labels.
    body: String,
    /// ` [#8: name]` for each label.
    labels: String,
    /// ` ┬ 2 branches at #8`.
    branches: String,
    /// ` ◀ leaf`.
    leaf: String,
    first: EntryId,
    last: EntryId,
    depth: usize,
    branch_point: bool,
}

impl NavRow {
    fn new(guide: &str, node: &Node, depth: usize, full: bool) -> NavRow {
        // `node_line` ends with the labels, the branch point, the leaf mark, in that
        // order: taken off from the end, so that each part gets its own style.
        let mut text = node_line(node, InspectStyle::plain(), full);
        let mut take = |suffix: String| {
            if !suffix.is_empty() && text.ends_with(&suffix) {
                text.truncate(text.len() - suffix.len());
                neutralize(&suffix).into_owned()
            } else {
                String::new()
            }
        };
        let leaf = take(if node.leaf {
            " ◀ leaf".into()
        } else {
            String::new()
        });
        let branches = take(if node.branches.is_empty() {
            String::new()
        } else {
            format!(" ┬ {} branches at #{}", node.branches.len() + 1, node.last)
        });
        let labels = take(
            node.labels
                .iter()
                .map(|l| format!(" [#{}: {}]", l.target, l.name))
                .collect(),
        );
        let (ids, body) = match text.split_once(' ') {
            Some((ids, body)) => (ids.to_string(), format!(" {}", neutralize(body))),
            None => (neutralize(&text).into_owned(), String::new()),
        };
        NavRow {
            guide: guide.to_string(),
            ids,
            body,
            labels,
            branches,
            leaf,
            first: node.first,
            last: node.last,
            depth,
            branch_point: !node.branches.is_empty(),
        }
    }

    /// The row in `width` columns. When it does not fit, the node's text is cut
    /// (`…`) before its marks: the branch point's mark goes first, then the text, so
    /// the labels and the leaf stay in sight on a narrow terminal.
    fn line(&self, theme: &Theme, width: usize) -> Line<'static> {
        let head = vec![
            Span::styled(self.guide.clone(), theme.style(Role::Dim)),
            Span::styled(self.ids.clone(), theme.style(Role::Dim)),
        ];
        let mut marks = vec![
            (&self.labels, Role::Label),
            (&self.branches, Role::Dim),
            (&self.leaf, Role::Success),
        ];
        let body = Span::styled(self.body.clone(), theme.style(Role::Text));
        let w = |parts: &[(&String, Role)]| parts.iter().map(|(t, _)| t.width()).sum::<usize>();
        let head_w = self.guide.width() + self.ids.width();
        if head_w + body.width() + w(&marks) > width {
            marks.retain(|(t, _)| !std::ptr::eq(*t, &self.branches));
        }
        let room = width.saturating_sub(head_w + w(&marks));
        let mut spans = head;
        if room >= 8 || body.width() <= room {
            spans.extend(clip(Line::from(body), room).spans);
        } else {
            // Too narrow for the marks: cut the whole row instead.
            spans.push(body);
        }
        for (text, role) in marks {
            if !text.is_empty() {
                spans.push(Span::styled(text.clone(), theme.style(role)));
            }
        }
        clip(Line::from(spans), width)
    }
}

const HINTS: &[(&str, &str)] = &[
    ("↑↓", "move"),
    ("←→", "branch"),
    ("Enter", "continue here"),
    ("l", "label"),
    ("f", "turns/entries"),
    ("q", "close"),
];

impl TreeNav {
    /// The navigator over the tree `build` makes (turns first), the cursor on the
    /// recorded leaf.
    pub fn new(build: BuildTree) -> TreeNav {
        let mut nav = TreeNav {
            build,
            full: false,
            session_id: String::new(),
            forked_from: None,
            rows: Vec::new(),
            cursor: 0,
            top: 0,
            prompt: None,
        };
        nav.rebuild(None);
        nav
    }

    /// Builds the tree again (the session changed, or `f`); the cursor stays on the
    /// node holding `keep` (else the leaf).
    fn rebuild(&mut self, keep: Option<EntryId>) {
        let tree = (self.build)(self.full);
        let mut rows = Vec::new();
        for_each_row(&tree, &mut |row| {
            rows.push(NavRow::new(row.guide, row.node, row.depth, tree.full));
        });
        self.session_id = neutralize(&tree.session_id).into_owned();
        self.forked_from = tree
            .forked_from
            .as_deref()
            .map(|f| neutralize(f).into_owned());
        self.rows = rows;
        let find = |e: EntryId| {
            // The node that starts at it, else the (smallest) one holding it.
            self.rows.iter().position(|r| r.first == e).or_else(|| {
                self.rows
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.first <= e && e <= r.last)
                    .min_by_key(|(_, r)| r.last.0 - r.first.0)
                    .map(|(i, _)| i)
            })
        };
        self.cursor = keep.and_then(find).or_else(|| find(tree.leaf)).unwrap_or(0);
    }

    /// Builds the tree again from the session (after an append), keeping the cursor
    /// on its entry.
    pub fn refresh(&mut self) {
        let keep = self.rows.get(self.cursor).map(|r| r.last);
        self.rebuild(keep);
    }

    /// The entry Enter continues from and `l` labels: the selected node's last.
    pub fn selected(&self) -> Option<EntryId> {
        self.rows.get(self.cursor).map(|r| r.last)
    }

    fn move_to(&mut self, row: usize) {
        self.cursor = row.min(self.rows.len().saturating_sub(1));
    }

    /// The branch point the cursor's branch hangs off (from the main lane: the
    /// branch point above).
    fn parent_branch_point(&self) -> Option<usize> {
        let here = self.rows.get(self.cursor)?;
        (0..self.cursor).rev().find(|&i| {
            let r = &self.rows[i];
            if here.depth == 0 {
                r.branch_point
            } else {
                r.depth < here.depth
            }
        })
    }

    /// Into the first branch of a branch point, else to the next branch point.
    fn next_branch(&self) -> Option<usize> {
        let here = self.rows.get(self.cursor)?;
        if here.branch_point {
            return Some(self.cursor + 1).filter(|&i| i < self.rows.len());
        }
        (self.cursor + 1..self.rows.len()).find(|&i| self.rows[i].branch_point)
    }

    fn prompt_key(&mut self, key: KeyEvent) -> OverlayOutcome {
        let Some(name) = self.prompt.as_mut() else {
            return OverlayOutcome::Stay;
        };
        match key.code {
            KeyCode::Esc => self.prompt = None,
            KeyCode::Enter => {
                let name = name.trim().to_string();
                self.prompt = None;
                if let Some(entry) = self.selected().filter(|_| !name.is_empty()) {
                    return OverlayOutcome::Act(OverlayAction::Label { entry, name });
                }
            }
            KeyCode::Backspace => {
                name.pop();
            }
            _ => {
                if let Some(c) = plain_char(&key) {
                    name.push(c);
                }
            }
        }
        OverlayOutcome::Stay
    }
}

impl Overlay for TreeNav {
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let body = chrome_body(area);
        let height = usize::from(body.height).max(1);
        // Keep the cursor in view.
        self.top = super::scrolled(self.top, self.cursor, height);
        self.top = self.top.min(self.rows.len().saturating_sub(height));
        let width = usize::from(body.width);
        let rows = (self.top, self.cursor, self.rows.len());
        let position =
            super::draw_list(body, buf, theme, rows, |i| self.rows[i].line(theme, width));
        let footer = match (&self.prompt, self.selected()) {
            (Some(name), Some(entry)) => Footer::Prompt {
                label: format!("label #{entry}: "),
                text: name.clone(),
            },
            (Some(_), None) | (None, _) => Footer::Hints(HINTS),
        };
        draw_chrome(area, buf, theme, &self.title(), &position, footer);
    }

    fn on_key(&mut self, key: KeyEvent) -> OverlayOutcome {
        if !is_press(&key) {
            return OverlayOutcome::Stay;
        }
        if self.prompt.is_some() {
            return self.prompt_key(key);
        }
        let page = 10;
        match key.code {
            KeyCode::Up => self.move_to(self.cursor.saturating_sub(1)),
            KeyCode::Down => self.move_to(self.cursor + 1),
            KeyCode::PageUp => self.move_to(self.cursor.saturating_sub(page)),
            KeyCode::PageDown => self.move_to(self.cursor + page),
            KeyCode::Home => self.move_to(0),
            KeyCode::End => self.move_to(usize::MAX),
            KeyCode::Left => {
                if let Some(i) = self.parent_branch_point() {
                    self.move_to(i);
                }
            }
            KeyCode::Right => {
                if let Some(i) = self.next_branch() {
                    self.move_to(i);
                }
            }
            KeyCode::Enter => {
                if let Some(entry) = self.selected() {
                    return OverlayOutcome::Act(OverlayAction::ContinueAt(entry));
                }
            }
            KeyCode::Esc => return OverlayOutcome::Close,
            _ => match plain_char(&key) {
                Some('k') => self.move_to(self.cursor.saturating_sub(1)),
                Some('j') => self.move_to(self.cursor + 1),
                Some('g') => self.move_to(0),
                Some('G') => self.move_to(usize::MAX),
                Some('h') => {
                    if let Some(i) = self.parent_branch_point() {
                        self.move_to(i);
                    }
                }
                Some('l') if !self.rows.is_empty() => self.prompt = Some(String::new()),
                Some('f') => {
                    let keep = self.selected();
                    self.full = !self.full;
                    self.rebuild(keep);
                }
                Some('q') => return OverlayOutcome::Close,
                _ => {}
            },
        }
        OverlayOutcome::Stay
    }

    fn title(&self) -> String {
        let what = if self.full { "entries" } else { "turns" };
        match &self.forked_from {
            Some(f) => format!("tree · {} · {what} · forked from {f}", self.session_id),
            None => format!("tree · {} · {what}", self.session_id),
        }
    }
}
