//! Syntax highlighting of fenced code blocks: one small table-driven lexer
//! ([`lexer`]) over languages described as data ([`languages`]).
//!
//! OWNER: helper "markdown".
//!
//! Each token class has a colour of the `base16-ocean.dark` palette, through
//! [`Theme::rgb`], so `NO_COLOR` drops the colours while bold stays. A language not in
//! [`languages::LANGUAGES`] (or no language at all) gives plain code in the
//! [`Role::Text`] style. Highlighting is line by line with what a line leaves open (a
//! block comment, a multi-line string, a markup tag) carried forward, so a code block
//! that streams in can be highlighted one complete line at a time, and gives the same
//! spans as the whole block highlighted at once.

mod languages;
mod lexer;

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use crate::Theme;
use crate::theme::Role;
use languages::Language;
use lexer::{State, Token};

/// Highlights a code block line by line. Each line's spans depend only on the lines
/// before it, so a streamed block is highlighted as its lines complete.
#[derive(Clone)]
pub struct CodeHighlighter {
    language: Option<&'static Language>,
    state: State,
}

impl std::fmt::Debug for CodeHighlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeHighlighter")
            .field("language", &self.language.and_then(|l| l.names.first()))
            .field("state", &self.state)
            .finish()
    }
}

impl CodeHighlighter {
    /// A highlighter for `lang` (a fence's first info word); plain for an unknown or
    /// empty language.
    pub fn new(lang: &str) -> CodeHighlighter {
        CodeHighlighter {
            language: languages::language_for(lang),
            state: State::Code,
        }
    }

    /// Whether the language is one the highlighter knows.
    pub fn is_highlighted(&self) -> bool {
        self.language.is_some()
    }

    /// The spans of one line of code (`line` without its newline; it is neutralized
    /// here, tabs expanded to 4-column stops). Never empty for a non-empty line.
    pub fn line(&mut self, line: &str, theme: &Theme) -> Vec<Span<'static>> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut column = 0;
        let Some(language) = self.language else {
            push_piece(&mut spans, line, &mut column, theme.style(Role::Text));
            return spans;
        };
        for (token, start, end) in lexer::lex(language, &mut self.state, line) {
            push_piece(
                &mut spans,
                &line[start..end],
                &mut column,
                style(token, theme),
            );
        }
        spans
    }
}

/// The spans of a whole code block in `lang`, one `Vec` per line.
pub fn highlight(code: &str, lang: &str, theme: &Theme) -> Vec<Vec<Span<'static>>> {
    let mut highlighter = CodeHighlighter::new(lang);
    code.lines()
        .map(|line| highlighter.line(line, theme))
        .collect()
}

/// A token's style: its colour from the `base16-ocean.dark` palette.
fn style(token: Token, theme: &Theme) -> Style {
    let (rgb, modifier) = match token {
        Token::Keyword => (0xb48ead, Modifier::empty()),
        Token::Type => (0xebcb8b, Modifier::empty()),
        Token::Function => (0x8fa1b3, Modifier::empty()),
        Token::Macro | Token::Escape | Token::Hunk => (0x96b5b4, Modifier::empty()),
        Token::String | Token::Inserted => (0xa3be8c, Modifier::empty()),
        Token::Number | Token::Attribute => (0xd08770, Modifier::empty()),
        Token::Comment => (0x65737e, Modifier::empty()),
        Token::Variable | Token::Tag | Token::Deleted => (0xbf616a, Modifier::empty()),
        Token::Operator | Token::Punctuation | Token::Plain => (0xc0c5ce, Modifier::empty()),
        Token::Header => (0xc0c5ce, Modifier::BOLD),
    };
    let [_, r, g, b] = u32::to_be_bytes(rgb);
    theme.rgb(r, g, b).add_modifier(modifier)
}

/// Appends `piece` (neutralized, tabs expanded from `column`) in `style`, to the last
/// span when it has that style.
fn push_piece(spans: &mut Vec<Span<'static>>, piece: &str, column: &mut usize, style: Style) {
    if piece.is_empty() {
        return;
    }
    let piece = xcsh_inspect::terminal::neutralize(piece);
    match spans.last_mut() {
        Some(last) if last.style == style => {
            expand_tabs_into(&piece, column, last.content.to_mut())
        }
        _ => {
            let mut text = String::with_capacity(piece.len());
            expand_tabs_into(&piece, column, &mut text);
            spans.push(Span::styled(text, style));
        }
    }
}

/// Appends `text` to `out` with each tab replaced by spaces up to the next 4-column
/// stop, `column` being the line's column where `text` starts (advanced past it).
fn expand_tabs_into(text: &str, column: &mut usize, out: &mut String) {
    use unicode_width::UnicodeWidthChar;
    for c in text.chars() {
        if c == '\t' {
            let n = 4 - *column % 4;
            out.extend(std::iter::repeat_n(' ', n));
            *column += n;
        } else {
            out.push(c);
            *column += c.width().unwrap_or(0);
        }
    }
}

#[cfg(test)]
mod tests;
