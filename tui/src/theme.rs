//! The UI's styles by role, and whether colour is on (`NO_COLOR`, `--plain`).
//!
//! Every widget takes its styles from a [`Theme`]; none names a colour itself, so
//! that `NO_COLOR` (https://no-color.org) turns every colour off in one place while
//! bold, dim, italic and reversed (which carry meaning without colour) stay.

use ratatui::style::{Color, Modifier, Style};

/// The UI's styles. `color: false` keeps modifiers and drops every colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

/// What a piece of text is, for its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Plain text.
    Text,
    /// Secondary text: hints, counts, elapsed times, tree guides.
    Dim,
    /// The user's own messages (the `›` marker and its text).
    User,
    /// The assistant's marker (`•`).
    Assistant,
    /// Reasoning (thinking) text: dim and italic.
    Reasoning,
    /// A tool's name in a card header.
    Tool,
    /// A successful outcome (`✓`, an exit code 0).
    Success,
    /// A failed outcome (`✗`, a non-zero exit, a provider error).
    Error,
    /// A denied or cancelled call, a warning, a retry.
    Warning,
    /// Lines added in a diff.
    DiffAdd,
    /// Lines removed in a diff.
    DiffRemove,
    /// A diff's `@@` hunk header and file header.
    DiffHeader,
    /// Markdown headings.
    Heading,
    /// Inline `code`.
    InlineCode,
    /// A link's URL.
    Link,
    /// Quoted text (`>`).
    Quote,
    /// A key in the footer's hints (`Ctrl-C`).
    Key,
    /// The selected row of a list or popup.
    Selected,
    /// The status line's background text.
    Status,
    /// A label in the tree.
    Label,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to a non-empty value.
    pub fn from_env() -> Theme {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme { color: !no_color }
    }

    pub const COLOR: Theme = Theme { color: true };
    pub const MONO: Theme = Theme { color: false };

    /// The style of `role`.
    pub fn style(&self, role: Role) -> Style {
        let (fg, modifier) = match role {
            Role::Text => (None, Modifier::empty()),
            Role::Dim => (None, Modifier::DIM),
            Role::User => (Some(Color::Cyan), Modifier::BOLD),
            Role::Assistant => (Some(Color::Magenta), Modifier::BOLD),
            Role::Reasoning => (None, Modifier::DIM | Modifier::ITALIC),
            Role::Tool => (Some(Color::Blue), Modifier::BOLD),
            Role::Success => (Some(Color::Green), Modifier::empty()),
            Role::Error => (Some(Color::Red), Modifier::BOLD),
            Role::Warning => (Some(Color::Yellow), Modifier::empty()),
            Role::DiffAdd => (Some(Color::Green), Modifier::empty()),
            Role::DiffRemove => (Some(Color::Red), Modifier::empty()),
            Role::DiffHeader => (Some(Color::Cyan), Modifier::DIM),
            Role::Heading => (Some(Color::Magenta), Modifier::BOLD),
            Role::InlineCode => (Some(Color::Yellow), Modifier::empty()),
            Role::Link => (Some(Color::Blue), Modifier::UNDERLINED),
            Role::Quote => (Some(Color::Green), Modifier::ITALIC),
            Role::Key => (Some(Color::Cyan), Modifier::BOLD),
            Role::Selected => (None, Modifier::REVERSED),
            Role::Status => (None, Modifier::DIM),
            Role::Label => (Some(Color::Yellow), Modifier::BOLD),
        };
        let style = Style::default().add_modifier(modifier);
        match fg {
            Some(c) if self.color => style.fg(c),
            Some(_) | None => style,
        }
    }

    /// A syntax highlighter's colour, or nothing without colour.
    pub fn rgb(&self, r: u8, g: u8, b: u8) -> Style {
        if self.color {
            Style::default().fg(Color::Rgb(r, g, b))
        } else {
            Style::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_colour_the_modifiers_stay_and_the_colours_go() {
        assert_eq!(
            Theme::MONO.style(Role::Error),
            Style::default().add_modifier(Modifier::BOLD)
        );
        assert_eq!(
            Theme::COLOR.style(Role::Error),
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
        );
    }
}
