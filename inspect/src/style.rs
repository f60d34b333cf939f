//! Terminal colors, only when asked for: on a terminal and never with `NO_COLOR`.

/// The SGR codes [`Style`] paints with: `0`, the reset after each, then the code of
/// each [`Paint`] in its order.
const PAINTS: [&str; 9] = ["0", "1", "2", "31", "32", "33", "34", "35", "36"];

/// A paint the views use (its ANSI SGR code is in [`PAINTS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    Bold,
    Dim,
    Red,
    Green,
    Yellow,
    Blue,
    Magenta,
    Cyan,
}

/// Whether output is colored, and the few paints the views use (ANSI SGR codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub color: bool,
}

impl Style {
    /// No color (files, pipes, tests).
    pub fn plain() -> Style {
        Style { color: false }
    }

    /// Color when the output is a terminal and `NO_COLOR` is unset or empty
    /// (<https://no-color.org>).
    pub fn for_output(is_terminal: bool) -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: is_terminal && !no_color,
        }
    }

    /// What a view prints, made safe for a terminal ([`crate::terminal::neutralize`]);
    /// when this style paints, the SGR sequences it paints with ([`PAINTS`]) are kept,
    /// so that the view's own colors survive and nothing else does.
    pub fn neutralize<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let keep: &[&str] = if self.color { &PAINTS } else { &[] };
        crate::terminal::neutralize_keeping(text, keep)
    }

    /// `text` in `paint`, when this style colors and there is text.
    pub fn paint(&self, paint: Paint, text: &str) -> String {
        let code = PAINTS[paint as usize + 1];
        if self.color && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_style_never_paints() {
        assert_eq!(Style::plain().paint(Paint::Red, "x"), "x");
        assert_eq!(Style::for_output(false).paint(Paint::Bold, "x"), "x");
        assert_eq!(
            Style { color: true }.paint(Paint::Red, "x"),
            "\x1b[31mx\x1b[0m"
        );
        assert_eq!(Style { color: true }.paint(Paint::Red, ""), "");
        // The first and the last paint, at their places in PAINTS.
        let both = [Paint::Bold, Paint::Cyan].map(|p| Style { color: true }.paint(p, "x"));
        assert_eq!(both, ["\x1b[1mx\x1b[0m", "\x1b[36mx\x1b[0m"]);
    }

    #[test]
    fn a_colored_style_keeps_its_own_paints_and_neutralizes_the_rest() {
        let painted = format!(
            "{} {}",
            Style { color: true }.paint(Paint::Red, "x"),
            "\x1b]0;t\x07"
        );
        assert_eq!(
            Style { color: true }.neutralize(&painted),
            "\x1b[31mx\x1b[0m ␛]0;t␇"
        );
        assert_eq!(Style::plain().neutralize(&painted), "␛[31mx␛[0m ␛]0;t␇");
    }
}
