//! Markdown (CommonMark + tables) to styled, wrapped lines, incrementally as a
//! message streams in.
//!
//! OWNER: helper "markdown" replaces this first version (plain text, no Markdown).

use ratatui::text::Line;

use crate::Theme;

/// `source` rendered at `width` columns.
pub fn render(source: &str, width: u16, _theme: &Theme) -> Vec<Line<'static>> {
    source
        .lines()
        .flat_map(|l| crate::text::wrap(&Line::from(l.to_string()), width))
        .collect()
}
