//! Long pastes as placeholders: a bracketed paste of more than [`MAX_LINES`] lines or
//! [`MAX_CHARS`] characters goes into the input as one token, `[Pasted text #N +L
//! lines]`, and the editor keeps the text behind it. Backspace or Delete at a token
//! removes it whole; taking the text out (a submit, a queued follow-up, a clear into
//! the history) expands every token back to its paste, exactly as pasted.

use std::ops::Range;

use super::buffer::TextBuffer;
use super::{Editor, EditorOutcome};

/// A paste of more lines than this becomes a placeholder.
pub(crate) const MAX_LINES: usize = 10;
/// A paste of more characters than this becomes a placeholder.
pub(crate) const MAX_CHARS: usize = 1_000;

/// The pastes behind the placeholders of one input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pastes {
    /// How many pastes became placeholders in this input (the last one's `#N`).
    count: usize,
    /// Each placeholder still in use with its paste.
    held: Vec<(String, String)>,
}

impl Pastes {
    /// What goes into the input for the paste `text` (newlines normalized): a new
    /// placeholder (its text kept) if it is long and not all whitespace, else `text`.
    pub(crate) fn hold(&mut self, text: String) -> String {
        let lines = text.lines().count();
        let long = lines > MAX_LINES || text.chars().count() > MAX_CHARS;
        if !long || text.trim().is_empty() {
            return text;
        }
        self.count += 1;
        let unit = if lines == 1 { "line" } else { "lines" };
        let token = format!("[Pasted text #{} +{lines} {unit}]", self.count);
        self.held.push((token.clone(), text));
        token
    }

    /// `text` with every placeholder in it replaced by its paste, in one pass (a
    /// paste's own text is never searched for placeholders); the pastes are
    /// forgotten, the next one is `#1` again.
    pub(crate) fn release(&mut self, text: &str) -> String {
        let mut found: Vec<(Range<usize>, &str)> = self
            .held
            .iter()
            .flat_map(|(token, paste)| {
                text.match_indices(token.as_str())
                    .map(move |(at, _)| (at..at + token.len(), paste.as_str()))
            })
            .collect();
        found.sort_by_key(|(range, _)| range.start);
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (range, paste) in found {
            if range.start < at {
                continue;
            }
            out.push_str(&text[at..range.start]);
            out.push_str(paste);
            at = range.end;
        }
        out.push_str(&text[at..]);
        *self = Pastes::default();
        out
    }

    /// The placeholder in `text` that Backspace (`forward` false: the cursor is
    /// inside it or just after it) or Delete (the cursor is inside it or at its
    /// start) at `cursor` removes.
    fn token_at(&self, text: &str, cursor: usize, forward: bool) -> Option<Range<usize>> {
        self.held.iter().find_map(|(token, _)| {
            text.match_indices(token.as_str())
                .map(|(at, _)| at..at + token.len())
                .find(|range| {
                    if forward {
                        range.start <= cursor && cursor < range.end
                    } else {
                        range.start < cursor && cursor <= range.end
                    }
                })
        })
    }

    /// Forgets the paste behind `token` unless `token` is still in one of `texts`.
    fn drop_unused(&mut self, token: &str, texts: [&str; 2]) {
        if !texts.iter().any(|text| text.contains(token)) {
            self.held.retain(|(held, _)| held != token);
        }
    }
}

impl Editor {
    /// Backspace (`forward` false) or Delete: at a placeholder, the whole placeholder
    /// and its paste; elsewhere a cluster.
    pub(super) fn delete(&mut self, forward: bool) -> EditorOutcome {
        let (text, cursor) = (self.buffer.text(), self.buffer.cursor());
        let Some(range) = self.pastes.token_at(text, cursor, forward) else {
            return self.edit(if forward {
                TextBuffer::delete_forward
            } else {
                TextBuffer::backspace
            });
        };
        let token = text[range.clone()].to_string();
        self.buffer.replace(range, "");
        let texts = [self.buffer.text(), self.killed.as_str()];
        self.pastes.drop_unused(&token, texts);
        self.edited();
        EditorOutcome::Changed
    }
}
