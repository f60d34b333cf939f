//! The transcript overlay (Ctrl-T): the whole conversation with every tool output in
//! full, scrollable and searchable, re-wrapped to the current width. Its lines come
//! from a render callback (the app's history cells, `crate::cells`), called again
//! when the width changes or the app says there is more ([`Transcript::refresh`]).

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::pager::PAGER_HINTS;
use super::{Overlay, OverlayOutcome, Pager, PagerKey, chrome_body, draw_chrome};
use crate::Theme;

/// Renders the whole conversation wrapped to a width.
pub type RenderLines = Box<dyn Fn(u16) -> Vec<Line<'static>>>;

/// The transcript overlay.
pub struct Transcript {
    render: RenderLines,
    /// The width the pager's lines were rendered at (`None`: render again).
    width: Option<u16>,
    pager: Pager,
}

impl Transcript {
    /// A transcript of what `render` draws at a width; it opens at the bottom (the
    /// newest), and stays there as the conversation grows while it is there.
    pub fn new(render: RenderLines) -> Transcript {
        Transcript {
            render,
            width: None,
            pager: Pager::at_end(),
        }
    }

    /// The conversation changed (an item was appended): render it again at the next
    /// draw. A transcript at the bottom follows the new lines.
    pub fn refresh(&mut self) {
        self.width = None;
    }

    /// The pager (for the app's tests and for scrolling from outside).
    pub fn pager(&self) -> &Pager {
        &self.pager
    }
}

impl Overlay for Transcript {
    fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let body = chrome_body(area);
        if self.width != Some(body.width) {
            self.pager.set_lines((self.render)(body.width));
            self.width = Some(body.width);
        }
        self.pager.render(body, buf, theme);
        let footer = self.pager.footer(PAGER_HINTS);
        let position = self.pager.position();
        draw_chrome(area, buf, theme, &self.title(), &position, footer);
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
}
