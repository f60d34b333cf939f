//! The `/diff` overlay: the files the session changed (`xcsh diff --workspace`'s
//! report: `xcsh_inspect::diff::workspace::changes`), one section per file (its
//! heading and notes as `xcsh diff --workspace` writes them, then its unified diff
//! drawn by `crate::diffview::unified`), on the shared pager; `n`/`p` jump between
//! files.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use xcsh_inspect::Style as InspectStyle;
use xcsh_inspect::diff::workspace::{FileReport, heading, notes, render as render_report};
use xcsh_inspect::terminal::neutralize;

use super::{Overlay, OverlayOutcome, Pager, PagerKey, chrome_body, is_press, plain_char};
use crate::Theme;
use crate::theme::Role;

/// The diff overlay.
pub struct DiffOverlay {
    files: Vec<FileReport>,
    /// The width and theme the pager's lines were laid out for.
    built: Option<(u16, Theme)>,
    /// The line where each file's section starts.
    starts: Vec<usize>,
    /// The file `n`/`p` went to, and the top it left the pager at: the file shown
    /// while the view stays there (the last sections may be too short to reach the
    /// top).
    jumped: Option<(usize, usize)>,
    pager: Pager,
}

const HINTS: &[(&str, &str)] = &[
    ("n/p", "next/prev file"),
    ("↑↓", "scroll"),
    ("PgUp/PgDn", "page"),
    ("/", "search"),
    ("q", "close"),
];

impl DiffOverlay {
    /// The overlay over the report of `changes(&log)` (the app builds it: it reads
    /// the files as they are now).
    pub fn new(files: Vec<FileReport>) -> DiffOverlay {
        DiffOverlay {
            files,
            built: None,
            starts: Vec::new(),
            jumped: None,
            pager: Pager::new(),
        }
    }

    /// The pager (for the app's tests and for scrolling from outside).
    pub fn pager(&self) -> &Pager {
        &self.pager
    }

    /// The lines of every section at `width`, and where each starts.
    fn layout(&self, width: u16, theme: &Theme) -> (Vec<Line<'static>>, Vec<usize>) {
        let mut lines = Vec::new();
        let mut starts = Vec::new();
        let push = |lines: &mut Vec<Line<'static>>, line: Line<'static>| {
            lines.extend(crate::text::wrap(&line, width));
        };
        if self.files.is_empty() {
            let none = render_report(&[], InspectStyle::plain());
            push(
                &mut lines,
                Line::from(Span::styled(
                    none.trim_end().to_string(),
                    theme.style(Role::Dim),
                )),
            );
        }
        for (i, f) in self.files.iter().enumerate() {
            if i > 0 {
                lines.push(Line::default());
            }
            starts.push(lines.len());
            let head = neutralize(&heading(f)).into_owned();
            push(
                &mut lines,
                Line::from(Span::styled(head, theme.style(Role::Heading))),
            );
            for note in notes(f) {
                push(
                    &mut lines,
                    Line::from(Span::styled(format!("  {note}"), theme.style(Role::Dim))),
                );
            }
            if !f.diff.is_empty() {
                let before = neutralize(&f.before_text);
                let after = neutralize(&f.now_text);
                for line in crate::diffview::unified(&before, &after, theme) {
                    push(&mut lines, line);
                }
            }
        }
        (lines, starts)
    }

    /// The file shown: the one `n`/`p` went to while the view is still there, else
    /// the last one starting at or above the top line.
    fn current(&self) -> usize {
        let top = self.pager.top();
        match self.jumped {
            Some((file, at)) if at == top => file,
            _ => self.starts.partition_point(|&s| s <= top).saturating_sub(1),
        }
    }

    fn jump(&mut self, file: usize) {
        if let Some(&start) = self.starts.get(file) {
            self.pager.scroll_to(start);
            self.jumped = Some((file, self.pager.top()));
        }
    }
}

impl Overlay for DiffOverlay {
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let body = chrome_body(area);
        if self.built != Some((body.width, *theme)) {
            let (lines, starts) = self.layout(body.width, theme);
            self.pager.set_lines(lines);
            self.starts = starts;
            self.built = Some((body.width, *theme));
            self.jumped = None;
        }
        let title = self.title();
        self.pager.render_framed(area, buf, theme, &title, HINTS);
    }

    fn on_key(&mut self, key: KeyEvent) -> OverlayOutcome {
        if !is_press(&key) {
            return OverlayOutcome::Stay;
        }
        match self.pager.on_key(key) {
            PagerKey::Close => return OverlayOutcome::Close,
            PagerKey::Handled => return OverlayOutcome::Stay,
            PagerKey::Ignored => {}
        }
        let current = self.current();
        match (key.code, plain_char(&key)) {
            (_, Some('n' | ']')) | (KeyCode::Tab, _) => self.jump(current + 1),
            (_, Some('p' | '[')) | (KeyCode::BackTab, _) => {
                let start = self.starts.get(current).copied().unwrap_or(0);
                if self.pager.top() > start {
                    self.jump(current);
                } else {
                    self.jump(current.saturating_sub(1));
                }
            }
            _ => {}
        }
        OverlayOutcome::Stay
    }

    fn title(&self) -> String {
        match self.files.len() {
            0 => "diff · no files changed".into(),
            n => format!("diff · file {}/{n}", self.current() + 1),
        }
    }
}
