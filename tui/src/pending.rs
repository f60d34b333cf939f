//! The pending area: steers and follow-ups the user sent while the agent works,
//! shown (one line each, clipped, with their kind) from their `queued` event until
//! their `delivered` event, or until the run ends without delivering them.

use ratatui::text::{Line, Span};
use xcsh_machine::UserOrigin;

use crate::Theme;
use crate::fmt;
use crate::theme::Role;

/// One queued message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingItem {
    pub origin: UserOrigin,
    pub text: String,
}

/// The queued messages, in arrival order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pending {
    items: Vec<PendingItem>,
}

impl Pending {
    /// A `queued` event: the message waits for its boundary.
    pub fn queued(&mut self, origin: UserOrigin, text: &str) {
        self.items.push(PendingItem {
            origin,
            text: text.to_owned(),
        });
    }

    /// A `delivered` event: the first waiting message of that kind and text leaves
    /// the area (steers and follow-ups are each delivered in arrival order).
    pub fn delivered(&mut self, origin: UserOrigin, text: &str) {
        if let Some(i) = self
            .items
            .iter()
            .position(|p| p.origin == origin && p.text == text)
            .or_else(|| self.items.iter().position(|p| p.origin == origin))
        {
            self.items.remove(i);
        }
    }

    /// The run ended: what was never delivered, which leaves the area.
    pub fn take(&mut self) -> Vec<PendingItem> {
        std::mem::take(&mut self.items)
    }

    pub fn items(&self) -> &[PendingItem] {
        &self.items
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// One line per message: `↳ steer  fix the tests first…`.
    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let width = usize::from(width);
        self.items
            .iter()
            .map(|item| {
                let kind = match item.origin {
                    UserOrigin::Steer => "steer",
                    UserOrigin::FollowUp => "queued",
                    UserOrigin::Prompt => "prompt",
                    UserOrigin::Undo => "undo",
                };
                let mut lines = item.text.trim().lines();
                let first = fmt::clean(lines.next().unwrap_or(""));
                let more = if lines.next().is_some() { " …" } else { "" };
                let spans = vec![
                    Span::styled("↳ ", theme.style(Role::Dim)),
                    Span::styled(format!("{kind:<6} "), theme.style(Role::Label)),
                    Span::styled(first, theme.style(Role::Text)),
                    Span::styled(more, theme.style(Role::Dim)),
                ];
                Line::from(fmt::clip_spans(spans, width))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::testkit::{lines_text, styled};

    fn sample() -> Pending {
        let mut p = Pending::default();
        p.queued(
            UserOrigin::Steer,
            "actually, keep the old function name and only fix the tests",
        );
        p.queued(UserOrigin::FollowUp, "then run clippy\nand fmt");
        p.queued(UserOrigin::Steer, "and \x1b[2J do not clear my screen");
        p
    }

    #[test]
    fn queued_messages_show_one_clipped_line_each_with_their_kind() {
        let p = sample();
        expect![[r#"
            ↳ steer  actually, keep the old functio…
            ↳ queued then run clippy …
            ↳ steer  and ␛[2J do not clear my screen
            ---
            ↳ steer  actually, keep the old function name and only fix the tests
            (lines 2-3 as above)
        "#]]
        .assert_eq(&crate::testkit::narrow_and_wide(
            lines_text(&p.lines(40, &Theme::COLOR), 40),
            lines_text(&p.lines(120, &Theme::COLOR), 120),
        ));
        expect![[r#"
            ⟦dim:↳ ⟧⟦yellow,bold:queued ⟧then run clippy⟦dim: …⟧
        "#]]
        .assert_eq(&styled(&p.lines(120, &Theme::COLOR)[1..2]));
    }

    #[test]
    fn a_delivered_message_leaves_and_the_rest_stay_in_order() {
        let mut p = sample();
        p.delivered(
            UserOrigin::Steer,
            "actually, keep the old function name and only fix the tests",
        );
        let texts: Vec<&str> = p.items().iter().map(|i| i.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "then run clippy\nand fmt",
                "and \x1b[2J do not clear my screen"
            ]
        );
        let left = p.take();
        assert_eq!(left.len(), 2);
        assert!(p.is_empty());
        assert!(p.lines(40, &Theme::COLOR).is_empty());
    }
}
