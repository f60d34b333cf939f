//! An overlay open during a turn: the transcript follows it (read again from the log
//! when a run event recorded an entry, the step in flight shown under it as it
//! streams), and an approval question that waits is announced on the overlay's last
//! row, Esc closing the overlay and giving the question the keys.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Line;
use xcsh_runtime::RunEvent;

use super::{Action, App, Focus};
use crate::cells::Cell;
use crate::fmt;
use crate::overlay::OverlayOutcome;
use crate::theme::Role;

/// What the step in flight has streamed so far, as its `step` entry will hold it
/// (transient: the entry is the truth and replaces it in the transcript).
#[derive(Debug, Default)]
pub(super) struct StepSoFar {
    reasoning: String,
    text: String,
}

impl StepSoFar {
    /// Its cells, as the log's step entry will make them.
    fn cells(&self) -> Vec<Cell> {
        crate::cells::step_cells(&self.reasoning, &self.text)
    }
}

/// Whether the log may hold more once `event` arrives (the runtime writes an entry
/// before it sends the events it caused). Only the transient events (deltas, a
/// running tool's output, a retry, recorded in its step's entry when the step ends)
/// and those that only say something (a notice, a compaction starting) surely do
/// not; any other, a kind added later too, costs at most one read of the log before
/// the next frame, where a missed one would leave the transcript behind.
fn records_entry(event: &RunEvent) -> bool {
    !matches!(
        event,
        RunEvent::TextDelta(_)
            | RunEvent::ReasoningDelta(_)
            | RunEvent::ToolOutput { .. }
            | RunEvent::Retrying { .. }
            | RunEvent::Notice { .. }
            | RunEvent::CompactionStarted { .. }
    )
}

impl App {
    /// Keeps the step in flight and the open overlay up to date with `event`.
    pub(super) fn follow(&mut self, event: &RunEvent) {
        match event {
            RunEvent::TextDelta(d) => self.so_far.text.push_str(&d.text),
            RunEvent::ReasoningDelta(d) => self.so_far.reasoning.push_str(&d.text),
            RunEvent::RunStarted { .. }
            | RunEvent::StepFinished { .. }
            | RunEvent::RunFinished { .. } => self.so_far = StepSoFar::default(),
            _ => {}
        }
        if records_entry(event) {
            self.refresh_overlay();
        }
    }

    /// The log may hold more than the open overlay shows (the run ended, entries were
    /// recorded): it reads it again at the next draw.
    pub(super) fn refresh_overlay(&mut self) {
        if let Some(o) = &mut self.overlay {
            o.refresh();
        }
    }

    /// A key while an overlay is open. Esc while a question waits closes it and gives
    /// the question the keys (the overlay's last row says so).
    pub(super) fn overlay_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if self.question.is_some() && key.code == KeyCode::Esc && key.modifiers.is_empty() {
            self.overlay = None;
            self.focus = Focus::Question;
            return Vec::new();
        }
        let Some(overlay) = &mut self.overlay else {
            return Vec::new();
        };
        match overlay.on_key(key) {
            OverlayOutcome::Stay => Vec::new(),
            OverlayOutcome::Close => {
                self.overlay = None;
                Vec::new()
            }
            OverlayOutcome::Act(action) => {
                self.overlay = None;
                vec![Action::Overlay(action)]
            }
        }
    }

    /// Draws the open overlay; while a question waits, its last row says so.
    pub fn render_overlay(&mut self, area: Rect, buf: &mut Buffer) {
        let theme = self.theme;
        let waiting = self.question.as_ref().map(|q| q.tool.clone());
        let live = self.so_far.cells();
        let Some(o) = &mut self.overlay else {
            return;
        };
        o.set_live(live);
        let mut area = area;
        if let Some(tool) = waiting
            && area.height > 0
        {
            area.height -= 1;
            let style = theme.style(Role::Warning).add_modifier(Modifier::BOLD);
            let text = format!("! approval waiting: {} · Esc to answer", fmt::clean(&tool));
            let line = Line::styled(fmt::clip(&text, usize::from(area.width)), style);
            buf.set_line(area.x, area.y + area.height, &line, area.width);
        }
        o.render(area, buf, &theme);
    }
}
