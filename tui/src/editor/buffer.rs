//! The editor's text and cursor: cluster-correct moves and edits over a `String`.
//!
//! The cursor is a byte offset that always sits on a cluster boundary. A cluster is
//! a character with the zero-width characters that follow it (combining marks,
//! variation selectors, a zero-width joiner and the character it joins, the second
//! half of a flag): an approximation of Unicode grapheme clusters that never splits
//! a `char` and keeps emoji sequences and accented letters whole.

use unicode_width::UnicodeWidthChar;

/// Text with a cursor (a byte offset on a cluster boundary).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TextBuffer {
    text: String,
    cursor: usize,
}

const ZWJ: char = '\u{200d}';

fn is_regional_indicator(c: char) -> bool {
    ('\u{1f1e6}'..='\u{1f1ff}').contains(&c)
}

/// Whether `c` continues the cluster of the character before it.
fn extends(c: char) -> bool {
    c != '\n' && c != '\t' && !c.is_control() && c.width() == Some(0)
}

/// The byte length of the cluster starting at the beginning of `s` (0 if empty).
pub(crate) fn cluster_len(s: &str) -> usize {
    let mut chars = s.char_indices();
    let Some((_, first)) = chars.next() else {
        return 0;
    };
    let mut end = first.len_utf8();
    if first == '\n' {
        return end;
    }
    let mut after_zwj = false;
    let mut flag_half = is_regional_indicator(first);
    for (i, c) in chars {
        if after_zwj || extends(c) || (flag_half && is_regional_indicator(c)) {
            flag_half = false;
            after_zwj = c == ZWJ;
            end = i + c.len_utf8();
        } else {
            break;
        }
    }
    end
}

/// The clusters of `s` with their byte offsets.
pub(crate) fn clusters(s: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let len = cluster_len(&s[at..]);
        (len > 0).then(|| {
            let start = at;
            at += len;
            (start, &s[start..at])
        })
    })
}

/// The start of the cluster that ends at `at` (at > 0, on a boundary).
fn prev_boundary(s: &str, at: usize) -> usize {
    // Clusters are found forward from the start of the line: a cluster never
    // spans a newline, so the scan is bounded by the line.
    let line_start = s[..at].rfind('\n').map_or(0, |i| i + 1);
    if line_start == at {
        return at - 1; // the newline itself
    }
    let mut prev = line_start;
    for (start, _) in clusters(&s[line_start..at]) {
        prev = line_start + start;
    }
    prev
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl TextBuffer {
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn cursor(&self) -> usize {
        self.cursor
    }

    /// Replaces the text; the cursor goes to its end.
    pub(crate) fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    /// Replaces the text and puts the cursor at `cursor` (moved back onto a boundary).
    pub(crate) fn set_with_cursor(&mut self, text: &str, cursor: usize) {
        self.text = text.to_string();
        let mut at = cursor.min(self.text.len());
        while !self.text.is_char_boundary(at) {
            at -= 1;
        }
        self.cursor = self.snap(at);
    }

    /// `at` moved back to the start of the cluster it falls in.
    fn snap(&self, at: usize) -> usize {
        let line_start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        let mut start = line_start;
        for (s, c) in clusters(&self.text[line_start..]) {
            if line_start + s + c.len() > at {
                return line_start + s;
            }
            start = line_start + s + c.len();
        }
        start
    }

    /// Takes the text out, leaving the buffer empty.
    pub(crate) fn take(&mut self) -> String {
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    pub(crate) fn insert(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    /// Replaces `range` (bytes) with `s`; the cursor goes after it.
    pub(crate) fn replace(&mut self, range: std::ops::Range<usize>, s: &str) {
        self.text.replace_range(range.clone(), s);
        self.cursor = range.start + s.len();
    }

    fn delete(&mut self, range: std::ops::Range<usize>) -> String {
        let removed = self.text[range.clone()].to_string();
        self.text.replace_range(range.clone(), "");
        self.cursor = range.start;
        removed
    }

    pub(crate) fn left(&mut self) -> bool {
        if self.cursor == 0 {
            return false;
        }
        self.cursor = prev_boundary(&self.text, self.cursor);
        true
    }

    pub(crate) fn right(&mut self) -> bool {
        let len = cluster_len(&self.text[self.cursor..]);
        self.cursor += len;
        len > 0
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    /// Puts the cursor at `to`; whether it moved.
    fn move_to(&mut self, to: usize) -> bool {
        std::mem::replace(&mut self.cursor, to) != to
    }

    /// Puts the cursor at `to`, a cluster boundary of the text.
    pub(crate) fn place(&mut self, to: usize) {
        self.cursor = to.min(self.text.len());
    }

    pub(crate) fn home(&mut self) -> bool {
        self.move_to(self.line_start())
    }

    pub(crate) fn end(&mut self) -> bool {
        self.move_to(self.line_end())
    }

    fn word_left_target(&self) -> usize {
        let before = &self.text[..self.cursor];
        let mut at = before.len();
        let mut chars = before.char_indices().rev().peekable();
        while let Some((i, _)) = chars.next_if(|&(_, c)| !is_word_char(c)) {
            at = i;
        }
        while let Some((i, _)) = chars.next_if(|&(_, c)| is_word_char(c)) {
            at = i;
        }
        self.snap(at)
    }

    fn word_right_target(&self) -> usize {
        let after = &self.text[self.cursor..];
        let mut chars = after.char_indices().peekable();
        while chars.next_if(|&(_, c)| !is_word_char(c)).is_some() {}
        while chars.next_if(|&(_, c)| is_word_char(c)).is_some() {}
        let at = chars
            .peek()
            .map_or(self.text.len(), |&(i, _)| self.cursor + i);
        // Forward to the end of the cluster the word ends in.
        let mut end = self.snap(at);
        while end < at {
            end += cluster_len(&self.text[end..]);
        }
        end
    }

    pub(crate) fn word_left(&mut self) -> bool {
        self.move_to(self.word_left_target())
    }

    pub(crate) fn word_right(&mut self) -> bool {
        self.move_to(self.word_right_target())
    }

    /// Backspace: the cluster before the cursor.
    pub(crate) fn backspace(&mut self) -> bool {
        if self.cursor == 0 {
            return false;
        }
        let from = prev_boundary(&self.text, self.cursor);
        self.delete(from..self.cursor);
        true
    }

    /// Delete: the cluster under the cursor.
    pub(crate) fn delete_forward(&mut self) -> bool {
        let len = cluster_len(&self.text[self.cursor..]);
        if len == 0 {
            return false;
        }
        self.delete(self.cursor..self.cursor + len);
        true
    }

    /// Ctrl-W: back over whitespace, then to the previous whitespace. The removed text.
    pub(crate) fn delete_word_back(&mut self) -> Option<String> {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        let from = trimmed.rfind(char::is_whitespace).map_or(0, |i| {
            i + trimmed[i..].chars().next().map_or(1, char::len_utf8)
        });
        (from < self.cursor).then(|| self.delete(from..self.cursor))
    }

    /// Alt-Backspace: back to the start of the previous word.
    pub(crate) fn delete_word_left(&mut self) -> Option<String> {
        let from = self.word_left_target();
        (from < self.cursor).then(|| self.delete(from..self.cursor))
    }

    /// Alt-D: forward to the end of the next word.
    pub(crate) fn delete_word_right(&mut self) -> Option<String> {
        let to = self.word_right_target();
        (to > self.cursor).then(|| self.delete(self.cursor..to))
    }

    /// Ctrl-U: to the start of the line (at the start: the newline before it).
    pub(crate) fn delete_to_line_start(&mut self) -> Option<String> {
        let from = self.line_start();
        let from = if from == self.cursor {
            from.saturating_sub(1)
        } else {
            from
        };
        (from < self.cursor).then(|| self.delete(from..self.cursor))
    }

    /// Ctrl-K: to the end of the line (at the end: the newline after it).
    pub(crate) fn delete_to_line_end(&mut self) -> Option<String> {
        let to = self.line_end();
        let to = if to == self.cursor && to < self.text.len() {
            to + 1
        } else {
            to
        };
        (to > self.cursor).then(|| {
            let cursor = self.cursor;
            let removed = self.delete(cursor..to);
            self.cursor = cursor;
            removed
        })
    }

    /// Whether the cursor is on the first line of the text.
    pub(crate) fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains('\n')
    }

    /// Whether the cursor is on the last line of the text.
    pub(crate) fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    /// The display column of the cursor within its line.
    pub(crate) fn column(&self) -> usize {
        crate::editor::render::width_of(&self.text[self.line_start()..self.cursor])
    }

    /// Moves to the previous (`up`) or next line, at display column `column` or the
    /// nearest boundary before it. False on the first (last) line.
    pub(crate) fn vertical(&mut self, up: bool, column: usize) -> bool {
        let target_start = if up {
            if self.on_first_line() {
                return false;
            }
            let prev_end = self.line_start() - 1;
            self.text[..prev_end].rfind('\n').map_or(0, |i| i + 1)
        } else {
            if self.on_last_line() {
                return false;
            }
            self.line_end() + 1
        };
        let line_end = self.text[target_start..]
            .find('\n')
            .map_or(self.text.len(), |i| target_start + i);
        let mut at = target_start;
        let mut used = 0;
        for (start, c) in clusters(&self.text[target_start..line_end]) {
            let w = crate::editor::render::width_of(c);
            if used + w > column {
                break;
            }
            used += w;
            at = target_start + start + c.len();
        }
        self.cursor = at;
        true
    }
}
