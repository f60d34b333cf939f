//! The transcript overlay (Ctrl-T): the whole conversation with every tool output in
//! full, scrollable and searchable, re-wrapped to the current width. Its lines come
//! from a render callback (the log's cells, `crate::cells`), called again when the
//! width changes or the app says entries were recorded ([`Overlay::refresh`]); under
//! them, what the step in flight has streamed so far ([`Overlay::set_live`]).

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::pager::PAGER_HINTS;
use super::{Overlay, OverlayOutcome, Pager, PagerKey, chrome_body};
use crate::Theme;
use crate::cells::{Cell, transcript_lines};

/// Renders the whole conversation wrapped to a width.
pub type RenderLines = Box<dyn Fn(u16) -> Vec<Line<'static>>>;

/// The transcript overlay.
pub struct Transcript {
    render: RenderLines,
    /// It follows the conversation (refreshes, shows the live cells).
    follows: bool,
    /// The width the pager's lines were rendered at (`None`: render again).
    width: Option<u16>,
    /// How many of the pager's lines are `render`'s (the live cells' follow).
    rendered: usize,
    /// What is streamed and not recorded yet (transient).
    live: Vec<Cell>,
    /// The pager shows `live` as it is.
    live_shown: bool,
    pager: Pager,
}

impl Transcript {
    /// A transcript of what `render` draws at a width, following the conversation;
    /// it opens at the bottom (the newest), and stays there as the conversation grows
    /// while it is there.
    pub fn new(render: RenderLines) -> Transcript {
        Transcript {
            render,
            follows: true,
            width: None,
            rendered: 0,
            live: Vec::new(),
            live_shown: true,
            pager: Pager::at_end(),
        }
    }

    /// A transcript of something that does not grow (an approval's whole preview):
    /// it ignores [`Overlay::refresh`] and [`Overlay::set_live`].
    pub fn fixed(render: RenderLines) -> Transcript {
        Transcript {
            follows: false,
            ..Transcript::new(render)
        }
    }

    /// The pager (for the app's tests and for scrolling from outside).
    pub fn pager(&self) -> &Pager {
        &self.pager
    }

    /// The live cells' lines at `width`, a blank line before them after others.
    fn live_lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = transcript_lines(&self.live, width, theme);
        if self.rendered > 0 && !lines.is_empty() {
            lines.insert(0, Line::default());
        }
        lines
    }
}

impl Overlay for Transcript {
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let body = chrome_body(area);
        if self.width != Some(body.width) {
            let mut lines = (self.render)(body.width);
            self.rendered = lines.len();
            lines.extend(self.live_lines(body.width, theme));
            self.pager.set_lines(lines);
            self.width = Some(body.width);
            self.live_shown = true;
        } else if !self.live_shown {
            let tail = self.live_lines(body.width, theme);
            self.pager.replace_from(self.rendered, tail);
            self.live_shown = true;
        }
        let title = self.title();
        self.pager
            .render_framed(area, buf, theme, &title, PAGER_HINTS);
    }

    fn on_key(&mut self, key: KeyEvent) -> OverlayOutcome {
        match self.pager.on_key(key) {
            PagerKey::Close => OverlayOutcome::Close,
            PagerKey::Handled | PagerKey::Ignored => OverlayOutcome::Stay,
        }
    }

    fn title(&self) -> String {
        "transcript".into()
    }

    /// The conversation changed (entries were appended): render it again at the next
    /// draw. A transcript at the bottom follows the new lines.
    fn refresh(&mut self) {
        if self.follows {
            self.width = None;
        }
    }

    fn set_live(&mut self, live: Vec<Cell>) {
        if self.follows && live != self.live {
            self.live = live;
            self.live_shown = false;
        }
    }
}
