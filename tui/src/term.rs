//! The real terminal: history written into the terminal's own scrollback, a live
//! area drawn below it, and full-screen overlays on the alternate screen.
//!
//! The live area (the streaming message, running tools, the question, the input
//! and status line) sits right under the last history line, and at the bottom of
//! the screen once history fills it. A finished history item is written once, above
//! the live area, as ordinary terminal output: the terminal scrolls it into its
//! scrollback (so scrolling, search, copy and tmux history work, and it stays after
//! exit). Each frame rewrites only the live rows that changed, inside a synchronized
//! update, so nothing flickers. After a resize the terminal may have re-flowed what
//! it shows; the live area is then found again from the cursor (parked at its top
//! left between frames) and redrawn, and history is never rewritten.
//!
//! Architecture Invariant: this module is the only one that writes to the terminal.

use std::io::{self, Write};

use crossterm::cursor::{Hide, MoveTo, MoveToColumn, Show};
use crossterm::style::{Attribute, Print, PrintStyledContent, ResetColor, SetAttribute, Stylize};
use crossterm::terminal::{
    self, BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate, EnterAlternateScreen,
    LeaveAlternateScreen,
};
use crossterm::{ExecutableCommand, QueueableCommand, event};
use ratatui::backend::{CrosstermBackend, IntoCrossterm};
use ratatui::buffer::Buffer;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::{Terminal, TerminalOptions, Viewport};

/// The terminal in the UI's hands: raw mode, bracketed paste, the cursor hidden
/// (the editor draws its own). Dropping it gives the terminal back as it was.
pub struct Screen {
    out: io::Stdout,
    width: u16,
    height: u16,
    /// The row after the last history line on screen.
    history_bottom: u16,
    /// Where the live area was drawn, and its rows as last drawn.
    live_top: u16,
    rows: Vec<String>,
    /// The overlay's full-screen terminal while one is open.
    overlay: Option<Terminal<CrosstermBackend<io::Stdout>>>,
    /// The terminal was resized while the overlay was open: the main screen was
    /// re-flowed behind it, and the live area is found again when it closes.
    resized_under_overlay: bool,
    entered: bool,
}

impl Screen {
    /// Takes the terminal: raw mode, bracketed paste, cursor hidden. History starts
    /// at the cursor's row.
    pub fn enter() -> io::Result<Screen> {
        terminal::enable_raw_mode()?;
        let mut out = io::stdout();
        out.execute(event::EnableBracketedPaste)?;
        out.execute(Hide)?;
        let (width, height) = terminal::size()?;
        let (_, row) = crossterm::cursor::position().unwrap_or((0, height.saturating_sub(1)));
        Ok(Screen {
            out,
            width,
            height,
            history_bottom: row,
            live_top: row,
            rows: Vec::new(),
            overlay: None,
            resized_under_overlay: false,
            entered: true,
        })
    }

    pub fn width(&self) -> u16 {
        self.width
    }

    pub fn height(&self) -> u16 {
        self.height
    }

    /// The most rows the live area may take (history keeps at least one row).
    pub fn max_live_height(&self) -> u16 {
        self.height.saturating_sub(1).max(1)
    }

    /// Writes finished history lines (already wrapped to the width) above the live
    /// area, once.
    pub fn insert_history(&mut self, lines: &[Line<'static>]) -> io::Result<()> {
        if lines.is_empty() || self.overlay.is_some() {
            return Ok(());
        }
        self.out.queue(BeginSynchronizedUpdate)?;
        // The live area is rewritten below the new lines.
        self.clear_live()?;
        for line in lines {
            if self.history_bottom >= self.height {
                // The screen is full: scroll everything up one row; the top row goes
                // into the terminal's scrollback.
                self.out.queue(MoveTo(0, self.height - 1))?;
                self.out.queue(Print("\n"))?;
                self.history_bottom = self.height - 1;
            }
            self.out.queue(MoveTo(0, self.history_bottom))?;
            self.out.queue(Clear(ClearType::CurrentLine))?;
            write_line(&mut self.out, line, self.width)?;
            self.history_bottom += 1;
        }
        self.live_top = self.history_bottom;
        self.rows.clear();
        self.out
            .queue(MoveTo(0, self.live_top.min(self.height - 1)))?;
        self.out.queue(EndSynchronizedUpdate)?;
        self.out.flush()
    }

    /// Draws the live area from `buffer` (the screen's width; its height is the
    /// live area's; the input's cursor is drawn in it, reversed).
    pub fn draw_live(&mut self, buffer: &Buffer) -> io::Result<()> {
        if self.overlay.is_some() {
            return Ok(());
        }
        let height = buffer.area.height.min(self.max_live_height());
        self.out.queue(BeginSynchronizedUpdate)?;
        // Make room: the live area needs `height` rows below the history.
        let bottom = self.history_bottom.saturating_add(height);
        if bottom > self.height {
            let lift = bottom - self.height;
            self.clear_live()?;
            self.out.queue(MoveTo(0, self.height - 1))?;
            // Line feeds at the bottom row scroll the screen: the top rows go into
            // the terminal's scrollback (a scroll-up sequence would not, in some).
            self.out.queue(Print("\n".repeat(usize::from(lift))))?;
            self.history_bottom = self.history_bottom.saturating_sub(lift);
        }
        self.live_top = self.history_bottom;
        let rows: Vec<String> = (0..height).map(|y| row_ansi(buffer, y)).collect();
        for (y, row) in rows.iter().enumerate() {
            if self.rows.get(y) == Some(row) {
                continue;
            }
            let y = u16::try_from(y).unwrap_or(u16::MAX);
            self.out.queue(MoveTo(0, self.live_top + y))?;
            // The whole row erased first, not its end after: a terminal that re-flows
            // (tmux, kitty, iTerm2) keeps a row as wide as the longest text it held
            // through erase-to-end, so a resize would wrap a short row (the input once
            // its placeholder was longer) and lose track of the parked cursor.
            self.out.queue(Clear(ClearType::CurrentLine))?;
            self.out.queue(Print(row))?;
            self.out.queue(ResetColor)?;
            self.out.queue(SetAttribute(Attribute::Reset))?;
        }
        if rows.len() < self.rows.len() {
            let below = self.live_top + height;
            if below < self.height {
                self.erase_from(below)?;
            }
        }
        self.rows = rows;
        // Parked at the live area's top left: after a re-flow the cursor is where
        // the live area begins (see `resized`).
        self.out.queue(MoveTo(0, self.live_top))?;
        self.out.queue(EndSynchronizedUpdate)?;
        self.out.flush()
    }

    /// The terminal was resized to `width` × `height`: find the live area again
    /// and forget what was drawn (the next frame draws all of it).
    pub fn resized(&mut self, width: u16, height: u16) -> io::Result<()> {
        self.width = width;
        self.height = height.max(1);
        if let Some(t) = &mut self.overlay {
            t.autoresize()?;
            self.resized_under_overlay = true;
            return Ok(());
        }
        let row = crossterm::cursor::position()
            .map(|(_, row)| row)
            .unwrap_or(self.live_top);
        self.live_top = row.min(self.height - 1);
        self.history_bottom = self.live_top;
        self.erase_from(self.live_top)?;
        self.out.queue(MoveTo(0, self.live_top))?;
        self.out.flush()?;
        self.rows.clear();
        Ok(())
    }

    /// Clears the screen's history part and the live area (`/clear`): the
    /// terminal's scrollback keeps what it has; the session is untouched.
    pub fn clear(&mut self) -> io::Result<()> {
        self.out.queue(MoveTo(0, 0))?;
        self.out.queue(Clear(ClearType::All))?;
        self.out.flush()?;
        self.history_bottom = 0;
        self.live_top = 0;
        self.rows.clear();
        Ok(())
    }

    /// Opens a full-screen overlay on the alternate screen.
    pub fn open_overlay(&mut self) -> io::Result<()> {
        if self.overlay.is_some() {
            return Ok(());
        }
        self.out.execute(EnterAlternateScreen)?;
        let terminal = Terminal::with_options(
            CrosstermBackend::new(io::stdout()),
            TerminalOptions {
                viewport: Viewport::Fullscreen,
            },
        )?;
        self.overlay = Some(terminal);
        Ok(())
    }

    /// Draws the open overlay.
    pub fn draw_overlay(&mut self, draw: impl FnOnce(&mut ratatui::Frame)) -> io::Result<()> {
        if let Some(t) = &mut self.overlay {
            t.draw(draw)?;
            t.hide_cursor()?;
        }
        Ok(())
    }

    pub fn overlay_open(&self) -> bool {
        self.overlay.is_some()
    }

    /// Closes the overlay: back to the main screen, history as it was; the live
    /// area is drawn again by the next frame. After a resize while it was open (its
    /// event handled then, or not yet), the terminal has re-flowed the main screen
    /// as it gave it back, and moved the cursor parked at the live area's top with
    /// it: the live area is found again there, as after any resize (its old rows
    /// erased, and the size they were drawn at forgotten).
    pub fn close_overlay(&mut self) -> io::Result<()> {
        if self.overlay.take().is_some() {
            self.out.execute(LeaveAlternateScreen)?;
            self.out.execute(Hide)?;
            self.rows.clear();
            let (width, height) = terminal::size()?;
            let resized = std::mem::take(&mut self.resized_under_overlay);
            if resized || (width, height) != (self.width, self.height) {
                self.resized(width, height)?;
            }
        }
        Ok(())
    }

    /// Erases the live area (the cursor ends at its top).
    fn clear_live(&mut self) -> io::Result<()> {
        self.erase_from(self.live_top)?;
        self.rows.clear();
        Ok(())
    }

    /// Erases the rows from `top` to the bottom of the screen, one by one: an erase
    /// to the end of the screen from its top left is, in tmux, a clear that pushes
    /// what the screen shows into the scrollback (the live area after a resize had
    /// put it there, a stale copy above the new one).
    fn erase_from(&mut self, top: u16) -> io::Result<()> {
        for row in top..self.height {
            self.out.queue(MoveTo(0, row))?;
            self.out.queue(Clear(ClearType::CurrentLine))?;
        }
        Ok(())
    }

    /// Gives the terminal back: the live area erased, the cursor after the history
    /// (so the shell prompt follows the conversation), raw mode off.
    pub fn leave(&mut self) -> io::Result<()> {
        if !self.entered {
            return Ok(());
        }
        self.entered = false;
        self.close_overlay()?;
        self.clear_live()?;
        self.out
            .queue(MoveTo(0, self.history_bottom.min(self.height - 1)))?;
        self.out.queue(MoveToColumn(0))?;
        self.out.queue(Show)?;
        self.out.queue(event::DisableBracketedPaste)?;
        self.out.flush()?;
        terminal::disable_raw_mode()
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.leave();
    }
}

/// Writes `line` at the cursor, styled, cut at `width` columns.
fn write_line(out: &mut impl Write, line: &Line<'static>, width: u16) -> io::Result<()> {
    let mut used = 0usize;
    let width = usize::from(width);
    for span in &line.spans {
        let style = line.style.patch(span.style);
        let mut text = String::new();
        for ch in span.content.chars() {
            let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + w > width {
                break;
            }
            used += w;
            text.push(ch);
        }
        print_styled(out, &text, style)?;
        if used >= width {
            break;
        }
    }
    out.queue(ResetColor)?;
    out.queue(SetAttribute(Attribute::Reset))?;
    Ok(())
}

fn print_styled(out: &mut impl Write, text: &str, style: Style) -> io::Result<()> {
    if text.is_empty() {
        return Ok(());
    }
    let content: crossterm::style::ContentStyle = style.into_crossterm();
    out.queue(PrintStyledContent(
        crossterm::style::StyledContent::new(content, text).stylize(),
    ))?;
    Ok(())
}

/// Row `y` of `buffer` as styled terminal text (trailing blanks dropped).
fn row_ansi(buffer: &Buffer, y: u16) -> String {
    let area = buffer.area;
    let row = area.top() + y;
    // The cells drawn (a wide character's continuation cells are not), and where
    // the last one that is not a plain blank ends.
    let mut drawn: Vec<&ratatui::buffer::Cell> = Vec::with_capacity(usize::from(area.width));
    let mut last_non_blank = 0usize;
    let mut skip = 0usize;
    for x in area.left()..area.right() {
        let cell = &buffer[(x, row)];
        if skip > 0 {
            skip -= 1;
            continue;
        }
        let symbol = cell.symbol();
        skip = unicode_width::UnicodeWidthStr::width(symbol).max(1) - 1;
        drawn.push(cell);
        let blank = symbol == " " && cell.bg == ratatui::style::Color::Reset;
        if !blank || cell.modifier.contains(ratatui::style::Modifier::REVERSED) {
            last_non_blank = drawn.len();
        }
    }
    drawn.truncate(last_non_blank);
    let mut out: Vec<u8> = Vec::new();
    let mut run = String::new();
    let mut run_style = Style::default();
    for cell in drawn {
        let style = cell.style();
        if style != run_style && !run.is_empty() {
            let _ = print_styled(&mut out, &run, run_style);
            run.clear();
        }
        run_style = style;
        run.push_str(cell.symbol());
    }
    let _ = print_styled(&mut out, &run, run_style);
    String::from_utf8(out).unwrap_or_default()
}

/// Terminal events (keys, pastes, resizes), as the reader thread sends them.
pub use crossterm::event::{Event, KeyEventKind};

/// Reads terminal events on a thread of its own until `tx` closes. It polls (four
/// times a second when nothing happens) rather than blocking in a read, so that
/// the cursor-position query of [`Screen::resized`] is never stuck behind it.
pub fn read_events(tx: &tokio::sync::mpsc::UnboundedSender<Event>) {
    loop {
        match event::poll(std::time::Duration::from_millis(250)) {
            Ok(true) => match event::read() {
                Ok(event) => {
                    if tx.send(event).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            },
            Ok(false) => {
                if tx.is_closed() {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}
