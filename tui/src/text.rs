//! Styled text helpers shared by every widget: word wrapping of styled lines.
//!
//! OWNER: helper "markdown".
//!
//! Widths are display columns (`unicode-width`: CJK and most emoji take 2, combining
//! marks 0). A width of 0 behaves as 1; nothing here panics or loops for any width.
//! [`wrap`] breaks at spaces and keeps every span's style; a word longer than the
//! width starts a line of its own and is broken at the width. [`indented`]
//! adds a hanging indent (list items, quotes, table cells). [`break_at_width`] cuts at
//! the width without looking for spaces (code, where a space is not a break point).

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The display width of `spans`.
pub fn width_of(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}

/// `line` wrapped to `width` columns (at least 1) at word boundaries. Leading spaces of
/// the line stay (indentation); spaces where a line is broken are dropped.
pub fn wrap(line: &Line<'static>, width: u16) -> Vec<Line<'static>> {
    let limit = usize::from(width.max(1));
    wrap_lines(line, limit, limit)
        .into_iter()
        .map(|spans| with_line_attrs(line, spans))
        .collect()
}

/// Where [`indented`] cuts a line into rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// At word boundaries, as [`wrap`] does (prose).
    Words,
    /// Wherever the width is reached, spaces included, as [`break_at_width`] does
    /// (code: nothing is dropped, nothing reflowed).
    Width,
}

/// `line` cut into rows of `width` columns as `flow` says, with `first_prefix` before
/// its first row and `rest_prefix` before every other (a hanging indent: `- ` then
/// `  `). The text gets what the prefix leaves, at least 1 column.
pub fn indented(
    line: &Line<'static>,
    width: u16,
    first_prefix: Vec<Span<'static>>,
    rest_prefix: Vec<Span<'static>>,
    flow: Flow,
) -> Vec<Line<'static>> {
    let i = Indent::fit(width, first_prefix, rest_prefix);
    let rows = match flow {
        Flow::Words => wrap_lines(line, i.first, i.rest),
        Flow::Width => {
            let mut rows = Rows::new(i.first, i.rest);
            for span in &line.spans {
                for c in span.content.chars() {
                    rows.push_char(c, span.style, true);
                }
            }
            rows.finish()
        }
    };
    prefixed(line, rows, i.first_prefix, i.rest_prefix)
}

/// Two prefixes fitted to a width, and the columns each leaves for text.
struct Indent {
    first_prefix: Vec<Span<'static>>,
    rest_prefix: Vec<Span<'static>>,
    /// The columns of the first row's text (at least 1).
    first: usize,
    /// The columns of every other row's text (at least 1).
    rest: usize,
}

impl Indent {
    /// Each prefix cut to leave at least 2 of `width` columns (at least 1).
    fn fit(width: u16, first_prefix: Vec<Span<'static>>, rest_prefix: Vec<Span<'static>>) -> Self {
        let width = usize::from(width.max(1));
        let first_prefix = fit_prefix(first_prefix, width.saturating_sub(2));
        let rest_prefix = fit_prefix(rest_prefix, width.saturating_sub(2));
        Indent {
            first: width.saturating_sub(width_of(&first_prefix)).max(1),
            rest: width.saturating_sub(width_of(&rest_prefix)).max(1),
            first_prefix,
            rest_prefix,
        }
    }
}

/// `line` cut into rows of `width` columns (at least 1) wherever the width is reached,
/// spaces included (for code: nothing is dropped, nothing reflowed).
pub fn break_at_width(line: &Line<'static>, width: u16) -> Vec<Line<'static>> {
    indented(line, width, Vec::new(), Vec::new(), Flow::Width)
}

/// `prefix` cut to at most `max` columns: a prefix as wide as the width would leave
/// the text no room, so the text keeps at least two columns (a wide character).
fn fit_prefix(prefix: Vec<Span<'static>>, max: usize) -> Vec<Span<'static>> {
    if width_of(&prefix) <= max {
        return prefix;
    }
    let mut out = Vec::new();
    let mut used = 0;
    for span in prefix {
        let mut text = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > max {
                break;
            }
            used += w;
            text.push(c);
        }
        if !text.is_empty() {
            out.push(Span::styled(text, span.style));
        }
        if used >= max {
            break;
        }
    }
    out
}

fn prefixed(
    line: &Line<'static>,
    rows: Vec<Vec<Span<'static>>>,
    first_prefix: Vec<Span<'static>>,
    rest_prefix: Vec<Span<'static>>,
) -> Vec<Line<'static>> {
    rows.into_iter()
        .enumerate()
        .map(|(i, spans)| {
            let mut all = if i == 0 {
                first_prefix.clone()
            } else {
                rest_prefix.clone()
            };
            all.extend(spans);
            with_line_attrs(line, all)
        })
        .collect()
}

fn with_line_attrs(line: &Line<'static>, spans: Vec<Span<'static>>) -> Line<'static> {
    let mut out = Line::from(spans).style(line.style);
    out.alignment = line.alignment;
    out
}

/// The rows being built: the current row's spans and width, and the width limits.
struct Rows {
    done: Vec<Vec<Span<'static>>>,
    row: Vec<Span<'static>>,
    used: usize,
    first: usize,
    rest: usize,
}

impl Rows {
    fn new(first: usize, rest: usize) -> Rows {
        Rows {
            done: Vec::new(),
            row: Vec::new(),
            used: 0,
            first,
            rest,
        }
    }

    fn limit(&self) -> usize {
        if self.done.is_empty() {
            self.first
        } else {
            self.rest
        }
    }

    fn room(&self) -> usize {
        self.limit().saturating_sub(self.used)
    }

    fn break_row(&mut self) {
        self.done.push(std::mem::take(&mut self.row));
        self.used = 0;
    }

    fn push_str(&mut self, text: &str, style: Style, w: usize) {
        if text.is_empty() {
            return;
        }
        self.used += w;
        if let Some(last) = self.row.last_mut()
            && last.style == style
        {
            last.content.to_mut().push_str(text);
            return;
        }
        self.row.push(Span::styled(text.to_string(), style));
    }

    /// One character; breaks the row first when it does not fit (never on an empty
    /// row, so a character wider than the limit stands alone).
    fn push_char(&mut self, c: char, style: Style, keep_spaces: bool) {
        let w = c.width().unwrap_or(0);
        if w > 0 && self.used > 0 && self.used + w > self.limit() {
            self.break_row();
            if !keep_spaces && c == ' ' {
                return;
            }
        }
        let mut buf = [0; 4];
        self.push_str(c.encode_utf8(&mut buf), style, w);
    }

    fn finish(mut self) -> Vec<Vec<Span<'static>>> {
        self.done.push(self.row);
        self.done
    }
}

/// A run of text in one style, part of a word or of the spaces between words.
struct Piece<'a> {
    text: &'a str,
    style: Style,
}

fn wrap_lines(line: &Line<'static>, first: usize, rest: usize) -> Vec<Vec<Span<'static>>> {
    let mut rows = Rows::new(first, rest);
    let mut word: Vec<Piece<'_>> = Vec::new();
    let mut word_width = 0;
    let mut spaces: Vec<Piece<'_>> = Vec::new();
    let mut spaces_width = 0;
    // Leading spaces of the whole line are indentation: they are kept.
    let mut leading = true;
    for span in &line.spans {
        let text = span.content.as_ref();
        let mut start = 0;
        while start < text.len() {
            let rest_text = &text[start..];
            let is_space = rest_text.starts_with(' ');
            let len = rest_text
                .find(|c: char| (c == ' ') != is_space)
                .unwrap_or(rest_text.len());
            let piece = Piece {
                text: &rest_text[..len],
                style: span.style,
            };
            start += len;
            if is_space {
                if !word.is_empty() {
                    place_word(&mut rows, &mut spaces, &mut word, spaces_width, word_width);
                    spaces_width = 0;
                    word_width = 0;
                }
                spaces_width += piece.text.width();
                spaces.push(piece);
            } else {
                if leading && !spaces.is_empty() {
                    for s in spaces.drain(..) {
                        for c in s.text.chars() {
                            rows.push_char(c, s.style, true);
                        }
                    }
                    spaces_width = 0;
                }
                leading = false;
                word_width += piece.text.width();
                word.push(piece);
            }
        }
    }
    if !word.is_empty() {
        place_word(&mut rows, &mut spaces, &mut word, spaces_width, word_width);
    } else {
        // Trailing spaces stay as far as they fit on the row.
        for s in spaces.drain(..) {
            for c in s.text.chars() {
                if rows.room() == 0 {
                    break;
                }
                rows.push_char(c, s.style, true);
            }
        }
    }
    rows.finish()
}

/// Places `word` (after `spaces`) on the current row, on a new row, or, longer than a
/// row, broken across rows starting on a row of its own.
fn place_word(
    rows: &mut Rows,
    spaces: &mut Vec<Piece<'_>>,
    word: &mut Vec<Piece<'_>>,
    spaces_width: usize,
    word_width: usize,
) {
    if rows.used + spaces_width + word_width <= rows.limit() {
        for s in spaces.drain(..) {
            rows.push_str(s.text, s.style, s.text.width());
        }
        for p in word.drain(..) {
            rows.push_str(p.text, p.style, p.text.width());
        }
        return;
    }
    spaces.clear();
    if rows.used > 0 {
        rows.break_row();
    }
    if word_width <= rows.limit() {
        for p in word.drain(..) {
            rows.push_str(p.text, p.style, p.text.width());
        }
        return;
    }
    for p in word.drain(..) {
        for c in p.text.chars() {
            rows.push_char(c, p.style, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::style::{Color, Modifier};

    use super::*;
    use crate::testkit::styled;

    fn texts(lines: &[Line<'static>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    /// `wrap` of plain text: (what the row proves, the text, the width, the rows).
    #[test]
    fn wrap_table() {
        #[rustfmt::skip]
        let rows: &[(&str, &str, u16, &[&str])] = &[
            ("words wrap at spaces and the break spaces go", "the quick brown fox jumps over the lazy dog", 10, &["the quick", "brown fox", "jumps over", "the lazy", "dog"]),
            ("a word longer than the width starts its own row and breaks", "see https://example.com/a/long/path ok", 10, &["see", "https://ex", "ample.com/", "a/long/pat", "h ok"]),
            ("wide characters count two columns", "日本語の テキスト 🦀🦀 ok", 6, &["日本語", "の", "テキス", "ト", "🦀🦀", "ok"]),
            ("leading indentation stays", "    indented text", 12, &["    indented", "text"]),
            ("an empty line is one row", "", 12, &[""]),
        ];
        for (name, text, width, want) in rows {
            assert_eq!(texts(&wrap(&Line::from(*text), *width)), *want, "{name}");
        }
    }

    #[test]
    fn styles_are_kept_across_breaks_and_words_of_several_spans_stay_whole() {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let red = Style::default().fg(Color::Red);
        let line = Line::from(vec![
            Span::raw("one "),
            Span::styled("two thr", bold),
            Span::styled("ee four", red),
        ]);
        expect_test::expect![[r#"
            one ⟦bold:two⟧
            ⟦bold:thr⟧⟦red:ee⟧
            ⟦red:four⟧
        "#]]
        .assert_eq(&styled(&wrap(&line, 7)));
    }

    #[test]
    fn a_hanging_indent_prefixes_every_row() {
        let line = Line::from("an item that wraps onto more rows");
        let lines = indented(
            &line,
            14,
            vec![Span::raw("- ")],
            vec![Span::raw("  ")],
            Flow::Words,
        );
        assert_eq!(
            texts(&lines),
            ["- an item that", "  wraps onto", "  more rows"]
        );
    }

    #[test]
    fn code_breaks_at_the_width_keeping_every_space() {
        let line = Line::from("let  x = 1;   // c");
        assert_eq!(
            texts(&break_at_width(&line, 7)),
            ["let  x ", "= 1;   ", "// c"]
        );
    }

    #[test]
    fn no_width_panics_and_zero_behaves_as_one() {
        let line = Line::from(vec![
            Span::raw("  a 日本 🦀 x\u{301}y "),
            Span::raw("longword  "),
        ]);
        for width in [0, 1, 2, 3, 5, 40, u16::MAX] {
            for lines in [
                wrap(&line, width),
                indented(
                    &line,
                    width,
                    vec![Span::raw("│ - ")],
                    vec![Span::raw("│   ")],
                    Flow::Words,
                ),
                break_at_width(&line, width),
            ] {
                assert!(!lines.is_empty());
                let all: String = texts(&lines).concat().replace(['│', '-', ' '], "");
                assert!(all.contains("a日本🦀x\u{301}ylongword"), "{width}: {all}");
            }
        }
        assert_eq!(texts(&wrap(&Line::from("abc"), 0)), ["a", "b", "c"]);
    }
}
