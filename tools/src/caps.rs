//! Output caps shared by every standard tool: at most [`MAX_OUTPUT_LINES`] lines and
//! [`MAX_OUTPUT_BYTES`] bytes of text go back to the model, and whatever was cut is
//! reported in a trailer at the end of the result.

/// Default cap on the bytes of one tool result (and of each of bash's streams).
pub const MAX_OUTPUT_BYTES: usize = 50 * 1024;

/// Default cap on the lines of one tool result (and of each of bash's streams); for
/// `list`, `grep` and `glob` it is also the cap on entries, matches and paths.
pub const MAX_OUTPUT_LINES: usize = 2000;

/// The caps in force for one executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub max_bytes: usize,
    pub max_lines: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            max_bytes: MAX_OUTPUT_BYTES,
            max_lines: MAX_OUTPUT_LINES,
        }
    }
}

/// Collects output lines up to the caps while counting every line offered, so the
/// trailer can say exactly what was cut.
#[derive(Debug)]
pub(crate) struct CappedLines {
    caps: Caps,
    text: String,
    shown_lines: usize,
    shown_bytes: usize,
    total_lines: usize,
    total_bytes: usize,
    full: bool,
}

impl CappedLines {
    pub(crate) fn new(caps: Caps) -> Self {
        CappedLines {
            caps,
            text: String::new(),
            shown_lines: 0,
            shown_bytes: 0,
            total_lines: 0,
            total_bytes: 0,
            full: false,
        }
    }

    /// Offers one line (without its newline). Each line counts its newline as a byte.
    pub(crate) fn push(&mut self, line: &str) {
        self.push_prefix(line, line.len());
    }

    /// Offers one line of `len` bytes of which only `prefix` is at hand (a reader
    /// streaming a long line keeps at most the byte cap of it); `prefix` must hold
    /// the whole line, or at least the byte cap of it.
    pub(crate) fn push_prefix(&mut self, line: &str, len: usize) {
        let need = len + 1;
        self.total_lines += 1;
        self.total_bytes += need;
        if self.full {
            return;
        }
        if self.shown_lines >= self.caps.max_lines {
            self.full = true;
            return;
        }
        if self.shown_bytes + need > self.caps.max_bytes {
            // A first line longer than the whole byte cap is shown cut, so the result
            // is never empty just because one line is huge.
            if self.shown_lines == 0 {
                let cut = floor_char_boundary(line, self.caps.max_bytes.saturating_sub(1));
                self.text.push_str(&line[..cut]);
                self.text.push('\n');
                self.shown_bytes = cut + 1;
                self.shown_lines = 1;
            }
            self.full = true;
            return;
        }
        self.text.push_str(line);
        self.text.push('\n');
        self.shown_bytes += need;
        self.shown_lines += 1;
    }

    /// Whether anything offered was left out.
    pub(crate) fn truncated(&self) -> bool {
        self.total_bytes > self.shown_bytes
    }

    pub(crate) fn shown_lines(&self) -> usize {
        self.shown_lines
    }

    pub(crate) fn total_lines(&self) -> usize {
        self.total_lines
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total_lines == 0
    }

    /// Raises the totals to counts known from elsewhere (bash keeps only a prefix of
    /// each stream but counts all of it).
    pub(crate) fn raise_totals(&mut self, total_lines: usize, total_bytes: usize) {
        self.total_lines = self.total_lines.max(total_lines);
        self.total_bytes = self.total_bytes.max(total_bytes);
    }

    /// The kept text (no final newline), followed by the truncation trailer when
    /// something was cut; `hint` tells the model how to see the rest.
    pub(crate) fn finish(self, hint: Option<&str>) -> String {
        let truncated = self.truncated();
        let mut text = self.text;
        if text.ends_with('\n') {
            text.pop();
        }
        if truncated {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!(
                "[output truncated: {} of {} lines, {} of {} bytes shown; cap {} lines / {} bytes",
                self.shown_lines,
                self.total_lines,
                self.shown_bytes,
                self.total_bytes,
                self.caps.max_lines,
                self.caps.max_bytes,
            ));
            if let Some(hint) = hint {
                text.push_str("; ");
                text.push_str(hint);
            }
            text.push(']');
        }
        text
    }
}

/// The largest char boundary of `s` not after `index`.
pub(crate) fn floor_char_boundary(s: &str, index: usize) -> usize {
    if index >= s.len() {
        return s.len();
    }
    let mut i = index;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capped(caps: Caps, lines: &[&str]) -> String {
        let mut c = CappedLines::new(caps);
        for l in lines {
            c.push(l);
        }
        c.finish(Some("narrow it"))
    }

    #[test]
    fn caps_cut_by_lines_bytes_and_one_huge_line() {
        let small = Caps {
            max_bytes: 10,
            max_lines: 2,
        };
        let cases: &[(&[&str], &str)] = &[
            (&["a", "b"], "a\nb"),
            (
                &["a", "b", "c"],
                "a\nb\n[output truncated: 2 of 3 lines, 4 of 6 bytes shown; cap 2 lines / 10 bytes; narrow it]",
            ),
            (
                &["abcd", "efghij"],
                "abcd\n[output truncated: 1 of 2 lines, 5 of 12 bytes shown; cap 2 lines / 10 bytes; narrow it]",
            ),
            (
                &["0123456789abc"],
                "012345678\n[output truncated: 1 of 1 lines, 10 of 14 bytes shown; cap 2 lines / 10 bytes; narrow it]",
            ),
            (&[], ""),
        ];
        for (lines, want) in cases {
            assert_eq!(capped(small, lines), *want, "lines {lines:?}");
        }
    }

    #[test]
    fn floor_char_boundary_never_splits_a_char() {
        assert_eq!(floor_char_boundary("héllo", 2), 1);
        assert_eq!(floor_char_boundary("héllo", 3), 3);
        assert_eq!(floor_char_boundary("hé", 10), 3);
    }
}
