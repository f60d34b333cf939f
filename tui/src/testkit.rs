//! Test helpers shared by the widget tests: draw lines or a widget into ratatui's
//! `TestBackend` and read the screen back as text (for expect-test snapshots).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

/// The screen's text, one row per line, trailing spaces trimmed.
pub fn text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        for x in area.left()..area.right() {
            row.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// Draws `draw` into a `width` × `height` TestBackend; returns its buffer.
pub fn draw(width: u16, height: u16, draw: impl FnOnce(&mut ratatui::Frame)) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal.draw(draw).expect("drawing into a TestBackend");
    terminal.backend().buffer().clone()
}

/// `lines` drawn at `width` (as many rows as there are lines), as text.
pub fn lines_text(lines: &[Line<'static>], width: u16) -> String {
    let height = u16::try_from(lines.len().max(1)).expect("a test screen under 65536 rows");
    let buffer = draw(width, height, |f| {
        Paragraph::new(lines.to_vec()).render(Rect::new(0, 0, width, height), f.buffer_mut())
    });
    text(&buffer)
}

/// Two renderings of one thing for one snapshot, at 40 columns and at 120, between
/// them `---`; the second is written `(the same at 120 columns)` when it is the
/// first again, and in it a run of two or more lines that are the first's lines at
/// the same places is written `(lines A-B as above)`.
pub fn narrow_and_wide(narrow: String, wide: String) -> String {
    if wide == narrow {
        return format!("{narrow}---\n(the same at 120 columns)\n");
    }
    let above: Vec<&str> = narrow.lines().collect();
    let lines: Vec<&str> = wide.lines().collect();
    let same = |k: usize| above.get(k) == lines.get(k);
    let mut out = format!("{narrow}---\n");
    let mut i = 0;
    while i < lines.len() {
        let end = (i..lines.len()).find(|&k| !same(k)).unwrap_or(lines.len());
        if end - i >= 2 {
            out.push_str(&format!("(lines {}-{end} as above)\n", i + 1));
            i = end;
        } else {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
        }
    }
    if !wide.ends_with('\n') {
        out.pop();
    }
    out
}

/// `lines` as text with each styled run marked: `⟦red,bold:text⟧`. Unstyled text is
/// written as it is.
pub fn styled(lines: &[Line<'static>]) -> String {
    let mut out = String::new();
    for line in lines {
        for span in &line.spans {
            let style = line.style.patch(span.style);
            let tag = tag(style);
            if tag.is_empty() {
                out.push_str(&span.content);
            } else {
                out.push_str(&format!("⟦{tag}:{}⟧", span.content));
            }
        }
        out.push('\n');
    }
    out
}

fn tag(style: Style) -> String {
    let mut parts = Vec::new();
    if let Some(fg) = style.fg {
        parts.push(color(fg));
    }
    if let Some(bg) = style.bg {
        parts.push(format!("on-{}", color(bg)));
    }
    for (m, name) in [
        (Modifier::BOLD, "bold"),
        (Modifier::DIM, "dim"),
        (Modifier::ITALIC, "italic"),
        (Modifier::UNDERLINED, "underlined"),
        (Modifier::REVERSED, "reversed"),
        (Modifier::CROSSED_OUT, "crossed"),
    ] {
        if style.add_modifier.contains(m) {
            parts.push(name.to_string());
        }
    }
    parts.join(",")
}

fn color(c: Color) -> String {
    match c {
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        other => format!("{other:?}").to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use ratatui::text::Span;

    use super::*;
    use crate::Theme;
    use crate::theme::Role;

    #[test]
    fn styled_marks_each_styled_run_and_leaves_plain_text_alone() {
        let line = Line::from(vec![
            Span::raw("ok "),
            Span::styled("bad", Theme::COLOR.style(Role::Error)),
        ]);
        expect_test::expect![[r#"
            ok ⟦red,bold:bad⟧
        "#]]
        .assert_eq(&styled(&[line]));
    }

    #[test]
    fn lines_text_draws_through_a_test_backend() {
        let lines = vec![Line::from("one"), Line::from("two   ")];
        assert_eq!(lines_text(&lines, 10), "one\ntwo\n");
    }
}
