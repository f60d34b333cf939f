//! Output caps shared by every standard tool: at most [`MAX_OUTPUT_LINES`] lines and
//! [`MAX_OUTPUT_BYTES`] bytes of text go back to the model, and whatever was cut is
//! reported in a marker line. Most results keep their start, the marker trailing
//! it (their hints go on from where it stops); bash's streams keep their start and
//! their end, the marker between them ([`CappedLines::head_and_tail`]), since a
//! command's outcome (the error, the summary, the end of a stack trace) is at its
//! end. One implementation serves both: a result kept head only is one whose tail
//! has no share of the caps. A stream written as bytes ([`CappedLines::write`]) loses
//! its terminal escape sequences and control bytes first ([`escapes`]).

use std::collections::VecDeque;

pub(crate) use escapes::Escapes;

mod escapes;

/// Default cap on the bytes of one tool result (and of each of bash's streams).
pub const MAX_OUTPUT_BYTES: usize = 50 * 1024;

/// Default cap on the lines of one tool result (and of each of bash's streams); for
/// `list`, `grep` and `glob` it is also the cap on entries, matches and paths.
pub const MAX_OUTPUT_LINES: usize = 2000;

/// The share of the line and byte caps, in percent, that a stream kept head and
/// tail ([`CappedLines::head_and_tail`]) gives its head; the tail has the rest
/// (with the default caps: 800 lines / 20480 bytes, then 1200 lines / 30720 bytes).
pub const HEAD_PERCENT: usize = 40;

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

/// Collects output up to the caps while counting all of it, so the marker can say
/// exactly what was cut. What it holds is bounded by the byte cap however much is
/// offered: the first bytes (the head's share of the byte cap) and a ring of the
/// last ones (the tail's share; none for a result kept head only). The lines shown
/// are cut out of those at the end ([`CappedLines::finish`]).
#[derive(Debug)]
pub(crate) struct CappedLines {
    caps: Caps,
    /// The head's share of the caps: all of them when no tail is kept.
    head_lines: usize,
    head_bytes: usize,
    /// The first bytes offered, at most `head_bytes`.
    head: Vec<u8>,
    /// Whether bytes may still go to `head` (not once some were skipped).
    head_open: bool,
    /// The last bytes offered after the head, at most `max_bytes - head_bytes`.
    tail: VecDeque<u8>,
    /// Whether bytes were dropped between `head` and `tail` (else the two are the
    /// whole output).
    gap: bool,
    /// Whether `tail` begins a line (the byte dropped just before it is a newline).
    tail_at_line: bool,
    total_bytes: usize,
    newlines: usize,
    ends_with_newline: bool,
    /// A carriage return that ended the last bytes written: dropped if a newline
    /// follows it (a CRLF line end shows, and counts, as a newline).
    cr: bool,
    /// Where [`write`](Self::write)'s stream is in an escape sequence.
    escapes: Escapes,
    /// The text of the chunk being written, once stripped (kept for its capacity).
    stripped: Vec<u8>,
}

/// The part of the output shown: the head's bytes and lines, then the tail's.
struct Shown {
    head: Vec<u8>,
    head_lines: usize,
    tail: Vec<u8>,
    tail_lines: usize,
}

impl CappedLines {
    /// Keeps the start of the output: what is cut is its end (`read`, `list`,
    /// `grep`, `glob`, `edit`'s diff, whose hints continue from where it stopped).
    pub(crate) fn new(caps: Caps) -> Self {
        Self::with_head(caps, caps.max_lines, caps.max_bytes)
    }

    /// Keeps the start and the end of the output ([`HEAD_PERCENT`] of each cap for
    /// the start, the rest for the end): what is cut is its middle (bash's streams).
    pub(crate) fn head_and_tail(caps: Caps) -> Self {
        Self::with_head(
            caps,
            caps.max_lines * HEAD_PERCENT / 100,
            caps.max_bytes * HEAD_PERCENT / 100,
        )
    }

    fn with_head(caps: Caps, head_lines: usize, head_bytes: usize) -> Self {
        CappedLines {
            caps,
            head_lines,
            head_bytes,
            head: Vec::new(),
            head_open: true,
            tail: VecDeque::new(),
            gap: false,
            tail_at_line: false,
            total_bytes: 0,
            newlines: 0,
            ends_with_newline: false,
            cr: false,
            escapes: Escapes::default(),
            stripped: Vec::new(),
        }
    }

    fn tail_bytes(&self) -> usize {
        self.caps.max_bytes - self.head_bytes
    }

    fn tail_lines(&self) -> usize {
        self.caps.max_lines - self.head_lines
    }

    /// Offers one line (without its newline). Each line counts its newline as a byte.
    pub(crate) fn push(&mut self, line: &str) {
        self.append(line.as_bytes());
        self.append(b"\n");
    }

    /// Offers one line of `len` bytes of which only `prefix` is at hand (a reader
    /// streaming a long line keeps at most the byte cap of it); `prefix` must hold
    /// the whole line, or at least the byte cap of it.
    pub(crate) fn push_prefix(&mut self, prefix: &str, len: usize) {
        self.append(prefix.as_bytes());
        self.skip(len.saturating_sub(prefix.len()));
        self.append(b"\n");
    }

    /// Offers a piece of a byte stream (bash's output, read as it comes): its
    /// escape sequences and control bytes are removed (a sequence may span pieces,
    /// [`Escapes`]), lines end at a newline, and a carriage return just before one
    /// is dropped. The last piece may end without a newline. Bytes that are not
    /// UTF-8 are shown as U+FFFD.
    ///
    /// Every count (the lines and bytes in the truncation marker) is of the text
    /// after that removal, what the model sees: the escapes removed are not
    /// reported as output left out, as the CRs of CRLF line ends are not.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        let mut stripped = std::mem::take(&mut self.stripped);
        stripped.clear();
        self.escapes.strip(bytes, &mut stripped);
        self.write_text(&stripped);
        self.stripped = stripped;
    }

    /// [`write`](Self::write) for a piece already stripped of escapes.
    fn write_text(&mut self, mut bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if std::mem::take(&mut self.cr) && bytes[0] != b'\n' {
            self.append(b"\r");
        }
        let held = bytes.last() == Some(&b'\r');
        if held {
            bytes = &bytes[..bytes.len() - 1];
        }
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', bytes) {
            if nl > start && bytes[nl - 1] == b'\r' {
                self.append(&bytes[start..nl - 1]);
                start = nl;
            }
        }
        self.append(&bytes[start..]);
        self.cr = held;
    }

    /// Takes bytes as they are: into the head while it has room, the rest into the
    /// tail's ring (the oldest dropped).
    fn append(&mut self, bytes: &[u8]) {
        let Some(&last) = bytes.last() else {
            return;
        };
        self.total_bytes += bytes.len();
        self.newlines += memchr::memchr_iter(b'\n', bytes).count();
        self.ends_with_newline = last == b'\n';
        let room = if self.head_open {
            self.head_bytes - self.head.len()
        } else {
            0
        };
        let (head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(head);
        let cap = self.tail_bytes();
        if rest.len() > cap {
            // All the ring held is dropped, and the start of `rest`.
            self.gap = true;
            self.tail_at_line = rest[rest.len() - cap - 1] == b'\n';
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - cap..]);
        } else {
            self.tail.extend(rest);
            let over = self.tail.len() - cap.min(self.tail.len());
            if over > 0 {
                self.gap = true;
                self.tail_at_line = self.tail[over - 1] == b'\n';
                self.tail.drain(..over);
            }
        }
    }

    /// Counts `len` bytes (none of them a newline) that are not at hand: nothing
    /// after them joins what was kept before them.
    fn skip(&mut self, len: usize) {
        if len == 0 {
            return;
        }
        self.total_bytes += len;
        self.ends_with_newline = false;
        self.head_open = false;
        self.gap = true;
        self.tail.clear();
        self.tail_at_line = false;
    }

    /// A carriage return held back by [`write`](Self::write) is output after all.
    fn close(&mut self) {
        if std::mem::take(&mut self.cr) {
            self.append(b"\r");
        }
    }

    /// Lines offered (the last may lack its newline).
    pub(crate) fn total_lines(&self) -> usize {
        if self.ends_with_newline || self.total_bytes == 0 {
            self.newlines
        } else {
            self.newlines + 1
        }
    }

    /// Whether anything offered was left out.
    pub(crate) fn truncated(&self) -> bool {
        self.gap
            || self.total_lines() > self.caps.max_lines
            || self.total_bytes > self.caps.max_bytes
    }

    /// Lines shown (a line shown cut counts).
    pub(crate) fn shown_lines(&self) -> usize {
        let shown = self.shown();
        shown.head_lines + shown.tail_lines
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total_bytes == 0 && !self.cr
    }

    /// What is shown: everything when it fits the caps; otherwise the head's whole
    /// lines within its share of the caps and the tail's within the rest. A head or
    /// tail whose first (last) line alone is over its share of the bytes shows that
    /// line cut, so it is not empty just because one line is huge.
    fn shown(&self) -> Shown {
        let whole = (!self.gap).then(|| {
            let mut whole = self.head.clone();
            whole.extend(&self.tail);
            whole
        });
        if !self.truncated() {
            return Shown {
                head: whole.unwrap_or_default(),
                head_lines: self.total_lines(),
                tail: Vec::new(),
                tail_lines: 0,
            };
        }
        let ring: Vec<u8>;
        let (front, back, back_at_line) = match &whole {
            Some(whole) => (whole.as_slice(), whole.as_slice(), true),
            None => {
                ring = self.tail.iter().copied().collect();
                (self.head.as_slice(), ring.as_slice(), self.tail_at_line)
            }
        };
        let (head_end, head_lines) = first_lines(front, self.head_lines, self.head_bytes);
        let (tail_start, tail_lines) =
            last_lines(back, back_at_line, self.tail_lines(), self.tail_bytes());
        Shown {
            head: front[..head_end].to_vec(),
            head_lines,
            tail: back[tail_start..].to_vec(),
            tail_lines,
        }
    }

    /// The text shown (no final newline) and, when something was cut, the marker:
    /// at the end (`N of M lines … shown`) when only the head is kept, else between
    /// the head and the tail (`N of M lines … left out here`). `hint` tells the
    /// model how to see the rest.
    pub(crate) fn finish(mut self, hint: Option<&str>) -> String {
        self.close();
        let shown = self.shown();
        let mut text = String::from_utf8_lossy(&shown.head).into_owned();
        if text.ends_with('\n') {
            text.pop();
        }
        if !self.truncated() {
            return text;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        let total_lines = self.total_lines();
        let (lines, bytes, how) = if self.tail_lines() == 0 {
            (shown.head_lines, shown.head.len(), "shown")
        } else {
            // A line cut at both ends is shown once.
            (
                total_lines.saturating_sub(shown.head_lines + shown.tail_lines),
                self.total_bytes
                    .saturating_sub(shown.head.len() + shown.tail.len()),
                "left out here",
            )
        };
        text.push_str(&format!(
            "[output truncated: {lines} of {total_lines} lines, {bytes} of {} bytes {how}; cap {} lines / {} bytes",
            self.total_bytes, self.caps.max_lines, self.caps.max_bytes,
        ));
        if let Some(hint) = hint {
            text.push_str("; ");
            text.push_str(hint);
        }
        text.push(']');
        if !shown.tail.is_empty() {
            text.push('\n');
            let tail = String::from_utf8_lossy(&shown.tail);
            text.push_str(tail.strip_suffix('\n').unwrap_or(&tail));
        }
        text
    }
}

/// The end of the first whole lines of `bytes` (each with its newline) within
/// `lines` and `bytes_cap`, and how many; when not even one fits, the first line
/// cut at `bytes_cap` (never inside a UTF-8 character).
fn first_lines(bytes: &[u8], lines: usize, bytes_cap: usize) -> (usize, usize) {
    let mut end = 0;
    let mut n = 0;
    for nl in memchr::memchr_iter(b'\n', bytes) {
        if n == lines || nl + 1 > bytes_cap {
            break;
        }
        end = nl + 1;
        n += 1;
    }
    if n == 0 && lines > 0 && !bytes.is_empty() {
        let line_end = memchr::memchr(b'\n', bytes).unwrap_or(bytes.len());
        end = whole_chars(&bytes[..line_end.min(bytes_cap)]);
        n = 1;
    }
    (end, n)
}

/// The start of the last whole lines of `bytes` (the last may lack its newline)
/// within `lines` and `bytes_cap`, and how many; `at_line` says whether `bytes`
/// begins a line. When not even one fits, the end of the last line within
/// `bytes_cap` (never starting inside a UTF-8 character).
fn last_lines(bytes: &[u8], at_line: bool, lines: usize, bytes_cap: usize) -> (usize, usize) {
    let len = bytes.len();
    let body = if bytes.last() == Some(&b'\n') {
        len - 1
    } else {
        len
    };
    let mut start = len;
    let mut n = 0;
    let mut search = body;
    while n < lines {
        let line_start = match memchr::memrchr(b'\n', &bytes[..search]) {
            Some(nl) => nl + 1,
            None if at_line => 0,
            None => break,
        };
        if len - line_start > bytes_cap {
            break;
        }
        start = line_start;
        n += 1;
        if line_start == 0 {
            break;
        }
        search = line_start - 1;
    }
    if n == 0 && lines > 0 && len > 0 {
        let line_start = memchr::memrchr(b'\n', &bytes[..body]).map_or(0, |nl| nl + 1);
        let from = line_start.max(len.saturating_sub(bytes_cap));
        start = from + char_start(&bytes[from..]);
        n = 1;
    }
    (start, n)
}

/// The length of `bytes` without a UTF-8 character cut at its end.
fn whole_chars(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for back in 1..=len.min(4) {
        let b = bytes[len - back];
        if b & 0xC0 != 0x80 {
            let need = match b {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if need > back { len - back } else { len };
        }
    }
    len
}

/// How many bytes at the start of `bytes` continue a UTF-8 character begun before
/// it (at most 3).
fn char_start(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|b| **b & 0xC0 == 0x80)
        .count()
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

    const HINT: &str = "narrow it";

    fn cap(max_lines: usize, max_bytes: usize) -> Caps {
        Caps {
            max_bytes,
            max_lines,
        }
    }

    fn capped(caps: Caps, lines: &[&str]) -> String {
        let mut c = CappedLines::new(caps);
        for l in lines {
            c.push(l);
        }
        c.finish(Some(HINT))
    }

    /// `bytes` written to a stream kept head and tail, in pieces of `piece` bytes.
    fn streamed(caps: Caps, bytes: &[u8], piece: usize) -> String {
        let mut c = CappedLines::head_and_tail(caps);
        for chunk in bytes.chunks(piece) {
            c.write(chunk);
        }
        c.finish(Some(HINT))
    }

    /// Lines `from..=to` of `seq`'s output, without the last newline.
    fn seq(from: usize, to: usize) -> String {
        (from..=to)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn caps_cut_by_lines_bytes_and_one_huge_line() {
        let small = cap(2, 10);
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
                "0123456789\n[output truncated: 1 of 1 lines, 10 of 14 bytes shown; cap 2 lines / 10 bytes; narrow it]",
            ),
            (&[], ""),
        ];
        for (lines, want) in cases {
            assert_eq!(capped(small, lines), *want, "lines {lines:?}");
        }
    }

    #[test]
    fn head_and_tail_keep_the_start_and_the_end_with_the_marker_between() {
        let four = cap(4, 1000);
        let ten = format!("{}\n", seq(1, 10));
        // 40% of 4 lines is 1 for the head; the tail has 3.
        let want = "1\n[output truncated: 6 of 10 lines, 12 of 21 bytes left out here; cap 4 lines / 1000 bytes; narrow it]\n8\n9\n10";
        for piece in [1, 2, 3, 1000] {
            assert_eq!(
                streamed(four, ten.as_bytes(), piece),
                want,
                "pieces of {piece}"
            );
        }
        // Within the caps, all of it.
        assert_eq!(streamed(four, b"1\n2\n3\n4\n", 3), "1\n2\n3\n4");
        assert_eq!(streamed(four, b"", 3), "");
        // By bytes: 40% of 10 bytes is 4 for the head (two lines), 6 for the tail
        // (two lines: the ring holds `\n9\n10\n`, the 8 before it is cut).
        let bytes = cap(100, 10);
        assert_eq!(
            streamed(bytes, ten.as_bytes(), 4),
            "1\n2\n[output truncated: 6 of 10 lines, 12 of 21 bytes left out here; cap 100 lines / 10 bytes; narrow it]\n9\n10"
        );
    }

    #[test]
    fn the_tail_of_a_long_output_is_kept_with_bounded_memory() {
        let line = |i: usize| format!("{i:05} {}", "x".repeat(20));
        let long = |from: usize, to: usize| (from..=to).map(line).collect::<Vec<_>>().join("\n");
        let cases = [
            // `seq 1 5000` is within the byte cap: the head's 800 lines and the
            // tail's 1200.
            (
                seq(1, 5000),
                seq(1, 800),
                "3000 of 5000 lines, 14801 of 23893 bytes",
                seq(3801, 5000),
            ),
            // Lines of 27 bytes, 135000 bytes in all: the byte cap binds, 20480
            // bytes (758 lines) for the head and 30720 (1137 lines) for the tail.
            (
                long(1, 5000),
                long(1, 758),
                "3105 of 5000 lines, 83835 of 135000 bytes",
                long(3864, 5000),
            ),
        ];
        for (out, head, cut, tail) in cases {
            let mut c = CappedLines::head_and_tail(Caps::default());
            for chunk in format!("{out}\n").as_bytes().chunks(8192) {
                c.write(chunk);
                assert!(c.head.len() + c.tail.len() <= MAX_OUTPUT_BYTES);
            }
            assert_eq!(
                c.finish(Some(HINT)),
                format!(
                    "{head}\n[output truncated: {cut} left out here; cap 2000 lines / 51200 bytes; narrow it]\n{tail}"
                )
            );
        }
    }

    #[test]
    fn a_line_longer_than_the_byte_cap_is_shown_cut_at_both_ends() {
        let caps = cap(4, 10);
        let alphabet = b"abcdefghijklmnopqrstuvwxyz\n";
        assert_eq!(
            streamed(caps, alphabet, 5),
            "abcd\n[output truncated: 0 of 1 lines, 17 of 27 bytes left out here; cap 4 lines / 10 bytes; narrow it]\nvwxyz"
        );
        // Short lines around it are shown whole; the huge line is left out.
        assert_eq!(
            streamed(caps, b"a\nbcdefghijklmnopqrstuvwxyz\nz\n", 7),
            "a\n[output truncated: 1 of 3 lines, 26 of 30 bytes left out here; cap 4 lines / 10 bytes; narrow it]\nz"
        );
        // Kept head only, its start.
        assert_eq!(
            capped(caps, &["abcdefghijklmnopqrstuvwxyz"]),
            "abcdefghij\n[output truncated: 1 of 1 lines, 10 of 27 bytes shown; cap 4 lines / 10 bytes; narrow it]"
        );
    }

    #[test]
    fn output_without_a_final_newline() {
        let caps = cap(4, 1000);
        assert_eq!(streamed(caps, b"a\nb", 1), "a\nb");
        assert_eq!(
            streamed(caps, seq(1, 10).as_bytes(), 3),
            "1\n[output truncated: 6 of 10 lines, 12 of 20 bytes left out here; cap 4 lines / 1000 bytes; narrow it]\n8\n9\n10"
        );
        // A progress line rewritten with CRs and never ended: its end is shown.
        let bytes = cap(4, 10);
        assert_eq!(
            streamed(bytes, b"10%\r20%\r30%\r40%", 2),
            "10%\r\n[output truncated: 0 of 1 lines, 5 of 15 bytes left out here; cap 4 lines / 10 bytes; narrow it]\n0%\r40%"
        );
    }

    #[test]
    fn a_cut_never_splits_a_utf8_character() {
        // The head's 4 bytes end inside the second `é`, the tail's 6 start inside one.
        let text = format!("a{}z", "é".repeat(7));
        let caps = cap(4, 10);
        assert_eq!(
            streamed(caps, text.as_bytes(), 3),
            "aé\n[output truncated: 0 of 1 lines, 8 of 16 bytes left out here; cap 4 lines / 10 bytes; narrow it]\nééz"
        );
        assert_eq!(
            capped(caps, &["aéééééé"]),
            "aéééé\n[output truncated: 1 of 1 lines, 9 of 14 bytes shown; cap 4 lines / 10 bytes; narrow it]"
        );
        // Three- and four-byte characters.
        let text = format!("{}\n", "€🦀".repeat(5));
        assert_eq!(
            streamed(caps, text.as_bytes(), 4),
            "€\n[output truncated: 0 of 1 lines, 28 of 36 bytes left out here; cap 4 lines / 10 bytes; narrow it]\n🦀"
        );
    }

    #[test]
    fn crlf_line_ends_are_newlines_and_not_counted_as_cut() {
        let caps = cap(4, 1000);
        // Split inside a CRLF too.
        for piece in [1, 2, 6, 100] {
            assert_eq!(streamed(caps, b"line1\r\nline2\r\n", piece), "line1\nline2");
        }
        let crlf: String = (1..=10).map(|i| format!("{i}\r\n")).collect();
        assert_eq!(
            streamed(caps, crlf.as_bytes(), 3),
            "1\n[output truncated: 6 of 10 lines, 12 of 21 bytes left out here; cap 4 lines / 1000 bytes; narrow it]\n8\n9\n10"
        );
        // An empty piece between a CR and its newline changes nothing.
        let mut c = CappedLines::head_and_tail(caps);
        for piece in [&b"a\r"[..], b"", b"\nb\n"] {
            c.write(piece);
        }
        assert_eq!(c.finish(None), "a\nb");
        // Bytes that are not UTF-8 are shown as U+FFFD, counted as they were.
        assert_eq!(streamed(caps, b"a\xffb\n", 2), "a\u{fffd}b");
        // A CR not before a newline is output, at the end too.
        assert_eq!(streamed(caps, b"a\r\r\nb\r", 1), "a\r\nb\r");
        // Exactly the byte cap once the CRs are dropped.
        let cap = cap(4, 6);
        assert_eq!(streamed(cap, b"ab\r\ncd\r\n", 3), "ab\ncd");
    }

    /// Colour codes split across pieces, and one between a CR and its newline: the
    /// counts in the marker are of the text without them (the same as for the
    /// plain CRLF output above).
    #[test]
    fn escapes_are_removed_across_pieces_and_not_counted_as_cut() {
        let coloured: String = (1..=10)
            .map(|i| format!("\x1b[32m{i}\r\x1b[0m\n"))
            .collect();
        assert_eq!(
            streamed(cap(4, 1000), coloured.as_bytes(), 3),
            "1\n[output truncated: 6 of 10 lines, 12 of 21 bytes left out here; cap 4 lines / 1000 bytes; narrow it]\n8\n9\n10"
        );
    }

    #[test]
    fn floor_char_boundary_never_splits_a_char() {
        assert_eq!(floor_char_boundary("héllo", 2), 1);
        assert_eq!(floor_char_boundary("héllo", 3), 3);
        assert_eq!(floor_char_boundary("hé", 10), 3);
    }
}
