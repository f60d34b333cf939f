//! Styled text helpers shared by every widget: word wrapping of styled lines.
//!
//! OWNER: helper "markdown" replaces this first version (which wraps by characters).

use ratatui::text::{Line, Span};

/// `line` wrapped to `width` columns (at least 1).
pub fn wrap(line: &Line<'static>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut out = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for span in &line.spans {
        let mut piece = String::new();
        for ch in span.content.chars() {
            if used == width {
                current.push(Span::styled(std::mem::take(&mut piece), span.style));
                out.push(Line::from(std::mem::take(&mut current)));
                used = 0;
            }
            piece.push(ch);
            used += 1;
        }
        if !piece.is_empty() {
            current.push(Span::styled(piece, span.style));
        }
    }
    out.push(Line::from(current));
    out
}
