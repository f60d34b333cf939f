//! Syntax highlighting of fenced code blocks (syntect, pure-Rust regex backend).
//!
//! OWNER: helper "markdown".
//!
//! The syntaxes and the theme (`base16-ocean.dark`) are loaded once per process
//! ([`OnceLock`]). Colours go through [`Theme::rgb`], so `NO_COLOR` drops them while
//! syntect's bold/italic/underline stay. A language syntect does not know (or no
//! language at all) gives plain code in the [`Role::Text`] style. Highlighting is
//! line by line with the parser's state carried forward, so a code block that streams
//! in can be highlighted one complete line at a time, and gives the same spans as the
//! whole block highlighted at once.

use std::sync::OnceLock;

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use syntect::highlighting::{FontStyle, HighlightIterator, HighlightState, Highlighter};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use crate::Theme;
use crate::theme::Role;

/// The highlighter's theme, from syntect's default themes.
const THEME_NAME: &str = "base16-ocean.dark";

struct Assets {
    syntaxes: SyntaxSet,
    highlighter: Highlighter<'static>,
}

fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    static THEMES: OnceLock<syntect::highlighting::ThemeSet> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let themes = THEMES.get_or_init(syntect::highlighting::ThemeSet::load_defaults);
        // The default theme set always holds base16-ocean.dark; another default
        // theme stands in should a syntect release ever drop it.
        let theme = themes
            .themes
            .get(THEME_NAME)
            .or_else(|| themes.themes.values().next());
        let highlighter = match theme {
            Some(theme) => Highlighter::new(theme),
            None => Highlighter::new(Box::leak(Box::default())),
        };
        Assets {
            syntaxes: SyntaxSet::load_defaults_newlines(),
            highlighter,
        }
    })
}

/// The syntax for a fence's language token (`rust`, `rs`, `py`, `sh`, `json`, …), or
/// none for a language syntect's default syntaxes lack (then the code is plain).
fn syntax_for(lang: &str) -> Option<&'static SyntaxReference> {
    let lang = lang.trim().to_ascii_lowercase();
    if lang.is_empty() {
        return None;
    }
    // Common fence names that are neither an extension nor a syntax's name.
    let token = match lang.as_str() {
        "shell" | "bash" | "zsh" | "console" | "shellsession" => "sh",
        "python3" | "py3" => "py",
        "typescript" | "ts" | "tsx" | "jsx" | "mjs" | "cjs" | "javascript" => "js",
        "golang" => "go",
        "c++" => "cpp",
        "yml" => "yaml",
        "patch" => "diff",
        "jsonc" | "json5" => "json",
        other => other,
    };
    assets().syntaxes.find_syntax_by_token(token)
}

/// Highlights a code block line by line. Each line's spans depend only on the lines
/// before it, so a streamed block is highlighted as its lines complete.
#[derive(Clone)]
pub struct CodeHighlighter {
    state: Option<(ParseState, HighlightState)>,
}

impl std::fmt::Debug for CodeHighlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeHighlighter")
            .field("highlighted", &self.state.is_some())
            .finish()
    }
}

impl CodeHighlighter {
    /// A highlighter for `lang` (a fence's first info word); plain for an unknown or
    /// empty language.
    pub fn new(lang: &str) -> CodeHighlighter {
        let state = syntax_for(lang).map(|syntax| {
            let assets = assets();
            (
                ParseState::new(syntax),
                HighlightState::new(&assets.highlighter, ScopeStack::new()),
            )
        });
        CodeHighlighter { state }
    }

    /// Whether a syntax was found for the language.
    pub fn is_highlighted(&self) -> bool {
        self.state.is_some()
    }

    /// The spans of one line of code (`line` without its newline; it is neutralized
    /// here, tabs expanded to 4-column stops). Never empty for a non-empty line.
    pub fn line(&mut self, line: &str, theme: &Theme) -> Vec<Span<'static>> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let plain = || {
            let text = expand_tabs(&xcsh_inspect::terminal::neutralize(line));
            if text.is_empty() {
                Vec::new()
            } else {
                vec![Span::styled(text, theme.style(Role::Text))]
            }
        };
        let Some((parse, highlight)) = &mut self.state else {
            return plain();
        };
        let assets = assets();
        // The "newlines" syntaxes expect each line with its newline.
        let with_newline = format!("{line}\n");
        let Ok(ops) = parse.parse_line(&with_newline, &assets.syntaxes) else {
            // A syntax that fails on some input: the rest of the block is plain.
            self.state = None;
            return plain();
        };
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut column = 0;
        for (style, piece) in
            HighlightIterator::new(highlight, &ops, &with_newline, &assets.highlighter)
        {
            let piece = piece.trim_end_matches(['\n', '\r']);
            if piece.is_empty() {
                continue;
            }
            let text = xcsh_inspect::terminal::neutralize(piece);
            let text = expand_tabs_from(&text, &mut column);
            push_merged(&mut spans, text, to_style(style, theme));
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

fn to_style(style: syntect::highlighting::Style, theme: &Theme) -> Style {
    let fg = style.foreground;
    let mut out = theme.rgb(fg.r, fg.g, fg.b);
    for (font, modifier) in [
        (FontStyle::BOLD, Modifier::BOLD),
        (FontStyle::ITALIC, Modifier::ITALIC),
        (FontStyle::UNDERLINE, Modifier::UNDERLINED),
    ] {
        if style.font_style.contains(font) {
            out = out.add_modifier(modifier);
        }
    }
    out
}

fn push_merged(spans: &mut Vec<Span<'static>>, text: String, style: Style) {
    if let Some(last) = spans.last_mut()
        && last.style == style
    {
        last.content.to_mut().push_str(&text);
        return;
    }
    spans.push(Span::styled(text, style));
}

fn expand_tabs(text: &str) -> String {
    let mut column = 0;
    expand_tabs_from(text, &mut column)
}

/// `text` with each tab replaced by spaces up to the next 4-column stop, `column`
/// being the line's column where `text` starts (advanced past it).
fn expand_tabs_from(text: &str, column: &mut usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let mut out = String::with_capacity(text.len());
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::styled;
    use ratatui::text::Line;

    fn lines(code: &str, lang: &str, theme: &Theme) -> Vec<Line<'static>> {
        highlight(code, lang, theme)
            .into_iter()
            .map(Line::from)
            .collect()
    }

    #[test]
    fn rust_is_highlighted_with_the_themes_colours() {
        expect_test::expect![[r#"
            ⟦#b48ead:fn⟧⟦#c0c5ce: ⟧⟦#8fa1b3:main⟧⟦#c0c5ce:() {⟧
            ⟦#c0c5ce:    ⟧⟦#b48ead:let⟧⟦#c0c5ce: x = ⟧⟦#d08770:1⟧⟦#c0c5ce:;⟧
            ⟦#c0c5ce:}⟧
        "#]]
        .assert_eq(&styled(&lines(
            "fn main() {\n    let x = 1;\n}",
            "rust",
            &Theme::COLOR,
        )));
    }

    #[test]
    fn fence_names_find_their_syntax() {
        for lang in [
            "rust", "rs", "py", "python", "sh", "bash", "json", "js", "ts", "yaml", "go", "c",
            "diff",
        ] {
            assert!(CodeHighlighter::new(lang).is_highlighted(), "{lang}");
        }
    }

    #[test]
    fn an_unknown_or_missing_language_is_plain_code() {
        for lang in ["", "nosuchlang", "text"] {
            let mut h = CodeHighlighter::new(lang);
            assert!(!h.is_highlighted() || lang == "text", "{lang}");
            if !h.is_highlighted() {
                assert_eq!(h.line("a\tb", &Theme::COLOR), vec![Span::raw("a   b")]);
            }
        }
    }

    #[test]
    fn without_colour_no_colour_is_left() {
        let text = styled(&lines("fn main() {}", "rust", &Theme::MONO));
        assert!(!text.contains('#'), "{text}");
        assert!(text.contains("fn main() {}"), "{text}");
    }

    #[test]
    fn control_characters_in_code_are_neutralized() {
        let spans = CodeHighlighter::new("rust").line("let s = \"\x1b[31m\";", &Theme::COLOR);
        let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "let s = \"␛[31m\";");
    }
}
