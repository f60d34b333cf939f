//! Markdown (CommonMark + tables, strikethrough, task lists) to styled, wrapped lines,
//! incrementally as a message streams in.
//!
//! OWNER: helper "markdown".
//!
//! How it reads in a terminal (choices a user of Codex / Claude Code would expect,
//! and that survive copying out of the scrollback):
//!
//! - Headings keep their `#` marks (the level shows) in the heading style.
//! - Emphasis is italic, strong bold, strikethrough crossed out. Inline code is in the
//!   inline-code colour; without colour (`NO_COLOR`) it keeps its backticks, since
//!   nothing else would mark it.
//! - A link shows its text, then its URL dimmed in parentheses unless both are the same.
//! - Block quotes get a `│ ` bar; lists `- ` or the item's own number (`3. `) with a
//!   hanging indent; task items `[x]` / `[ ]`. A loose list keeps a blank line between
//!   items, a tight one none.
//! - Code blocks keep their fence lines (dimmed), so where code starts and ends shows
//!   with and without colour and a copy is valid Markdown; their lines are highlighted
//!   ([`crate::highlight`]) and never reflowed at spaces: a line longer than the width
//!   is cut at the width onto the next row (nothing is lost, unlike a terminal that
//!   truncates). An unclosed fence ends with the message (its closing fence shown).
//! - Tables fit their columns to the width (cells wrap); when the columns cannot get
//!   a readable width, each row is shown as `Header: value` lines instead.
//! - Line breaks in the source are kept (a model's single newline means one); text is
//!   then wrapped at word boundaries to the width.
//! - One blank line between blocks.
//!
//! Model text is untrusted: every piece of it passes through
//! [`xcsh_inspect::terminal::neutralize`] before it becomes a span.
//!
//! The document is split into top-level chunks at lines where a block surely starts
//! ([`MarkdownStream`]); each chunk is rendered on its own and chunks are joined by one
//! blank line, so that a streamed message renders exactly as the whole one does. A
//! consequence: a reference-style link (`[text][ref]`) resolves only when its
//! definition is in the same chunk.

mod block;
mod stream;
mod table;
#[cfg(test)]
mod tests;

use ratatui::text::Line;

pub use stream::MarkdownStream;

use crate::Theme;

/// `source` rendered at `width` columns: every line at most `width` wide (except a
/// single character wider than the width, which stands alone).
pub fn render(source: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut stream = MarkdownStream::new();
    stream.push(source);
    stream.finish(width, theme)
}
