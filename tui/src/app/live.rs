//! The live area of a frame: the streaming tail, running tools, the question, the
//! pending area, the plan's checklist, the input, the status line and the footer, drawn into a buffer.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use super::{App, Focus};
use crate::Theme;
use crate::approval::Mode;
use crate::cells::assistant_lines;
use crate::status::{Status, footer};
use crate::theme::Role;

impl App {
    /// The live area at `width`, at most `max_height` rows: the streaming
    /// message's tail, running tools, the question, the pending area, the input,
    /// the status line and the footer. The editor's cursor is drawn reversed.
    pub fn render_live(&mut self, width: u16, max_height: u16, now_ms: u64) -> Buffer {
        self.width = width;
        let theme = self.theme;
        let mut top: Vec<Line<'static>> = Vec::new();
        if let Some(r) = &self.reasoning {
            top.extend(reasoning_tail(&r.text, width, &theme));
        }
        if let Some(s) = &self.stream {
            let tail = s.markdown.tail(self.body_width(), &theme);
            if !tail.is_empty() {
                top.extend(assistant_lines(tail, width, !s.started, &theme));
            }
        }
        for card in self.tools.iter() {
            if self
                .question
                .as_ref()
                .is_some_and(|q| &q.call_id == card.call_id())
            {
                continue;
            }
            top.extend(card.lines(width, now_ms, &theme));
        }
        let mut middle: Vec<Line<'static>> = Vec::new();
        if let Some(q) = &self.question {
            let mode = match &q.message {
                Some(text) => Mode::Message { text },
                None => Mode::Choosing,
            };
            let budget = usize::from(max_height.saturating_sub(8).max(6));
            if !top.is_empty() {
                middle.push(Line::default());
            }
            middle.extend(q.approval.lines(width, budget, mode, &theme));
        }
        middle.extend(self.pending.lines(width, &theme));
        if let Some(p) = &self.plan {
            middle.extend(crate::plan::live_lines(&p.plan, width, &theme));
        }
        let status = Status {
            provider: self.info.provider.clone(),
            model: self.info.model.clone(),
            permissions: self.info.permissions,
            sandbox: self.info.sandbox.clone(),
            session_id: self.info.session_id.clone().unwrap_or_default(),
            turn: self.turn,
            context_tokens: self.context_tokens,
            compact_at: self.info.compact_at,
            spent: self.spent,
            budget: self.info.budget,
            estimated: self.estimated,
            retry: self.retry.clone(),
        }
        .line(width, now_ms, &theme);
        let footer = footer(self.footer_state(), width, &theme);
        let editor_height = self.editor.desired_height(width).max(1);
        let rows = |lines: &[Line<'static>]| u16::try_from(lines.len()).unwrap_or(u16::MAX);
        // A blank row above the input, the status line and the footer.
        let fixed = rows(&middle)
            .saturating_add(editor_height)
            .saturating_add(3);
        let room = max_height.saturating_sub(fixed);
        if rows(&top) > room {
            let cut = usize::from(rows(&top) - room);
            top.drain(..cut);
        }
        let height = rows(&top).saturating_add(fixed).min(max_height).max(1);
        let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
        let mut y = 0u16;
        for part in [&top, &middle] {
            let h = rows(part).min(height - y);
            if h > 0 {
                Paragraph::new(part.clone()).render(Rect::new(0, y, width, h), &mut buf);
            }
            y += h;
        }
        y = (y + 1).min(height);
        let eh = editor_height.min(height.saturating_sub(y).saturating_sub(2).max(1));
        let editor_area = Rect::new(0, y, width, eh.min(height - y));
        self.editor.render(editor_area, &mut buf, &theme);
        if self.focus == Focus::Editor && editor_area.height > 0 {
            let (x, cy) = self.editor.cursor_position(editor_area);
            if x < width && cy < height {
                let cell = &mut buf[(x, cy)];
                cell.set_style(cell.style().add_modifier(Modifier::REVERSED));
            }
        }
        y += editor_area.height;
        for line in [status, footer] {
            if y < height {
                buf.set_line(0, y, &line, width);
                y += 1;
            }
        }
        buf
    }
}

/// The last lines of the reasoning being streamed, dimmed, under `∴ thinking…`.
fn reasoning_tail(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let style = theme.style(Role::Reasoning);
    let mut out = vec![Line::styled("∴ thinking…", style)];
    let clean = crate::fmt::clean(text.trim_end());
    let lines: Vec<&str> = clean.lines().collect();
    let from = lines.len().saturating_sub(3);
    for l in &lines[from..] {
        out.extend(crate::text::wrap(
            &Line::styled(format!("  {l}"), style),
            width,
        ));
    }
    out
}
