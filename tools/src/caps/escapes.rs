//! Removes terminal escape and control sequences from a byte stream (bash's output)
//! before it is capped, so the model reads the text a terminal would show, not
//! colour codes: a small state machine fed chunk by chunk, carrying an unfinished
//! sequence over to the next chunk.
//!
//! Removed: CSI sequences (`ESC [` parameters, intermediates, a final byte: colours,
//! cursor moves), strings (`ESC ]` OSC such as hyperlinks and titles, and `ESC P`
//! DCS, `ESC X` SOS, `ESC ^` PM, `ESC _` APC) up to BEL or `ESC \`, other escape
//! sequences (`ESC` intermediates and a final byte: `ESC 7`, `ESC ( B`), and every
//! other C0 control byte but newline, tab and carriage return (which the caps
//! handle). Bytes from 0x80 are never removed outside a sequence, so UTF-8 passes
//! through untouched, however it is split.
//!
//! A malformed sequence never hides text beyond what could belong to it: a byte that
//! cannot continue it (a control byte, a byte from 0x80, a newline in a string) ends
//! it and is then treated as text, so an unterminated OSC swallows at most the rest
//! of its line, and a sequence cut off by the end of the output is dropped.

const ESC: u8 = 0x1B;
const BEL: u8 = 0x07;
/// CAN and SUB cancel a sequence in progress (ECMA-48).
const CAN: u8 = 0x18;
const SUB: u8 = 0x1A;

/// Where the stream is: in text, or inside a sequence begun in an earlier byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Text,
    /// After `ESC`.
    Esc,
    /// After `ESC` and one or more intermediate bytes (0x20-0x2F).
    EscIntermediate,
    /// After `ESC [`: parameter and intermediate bytes up to a final byte.
    Csi,
    /// After `ESC ]` (or `P`, `X`, `^`, `_`): up to BEL or `ESC \`.
    String,
}

/// The stripper of one stream; [`strip`](Escapes::strip) it each chunk in order.
#[derive(Debug, Default)]
pub(crate) struct Escapes {
    state: State,
}

/// A byte removed in text: a C0 control (ESC included) other than newline, tab and
/// carriage return.
fn is_removed_control(b: u8) -> bool {
    b < 0x20 && !matches!(b, b'\n' | b'\t' | b'\r')
}

impl Escapes {
    /// Appends to `out` the text of `bytes`, the next chunk of the stream, without
    /// its escape sequences and control bytes.
    pub(crate) fn strip(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Text {
                // Text runs to the next byte removed; that byte is skipped (an ESC
                // starts a sequence).
                let rest = &bytes[i..];
                let run = rest
                    .iter()
                    .position(|&b| is_removed_control(b))
                    .unwrap_or(rest.len());
                out.extend_from_slice(&rest[..run]);
                i += run;
                if let Some(&b) = bytes.get(i) {
                    if b == ESC {
                        self.state = State::Esc;
                    }
                    i += 1;
                }
                continue;
            }
            let (next, consumed) = self.step(bytes[i]);
            self.state = next;
            if consumed {
                i += 1;
            }
        }
    }

    /// The state after byte `b` inside a sequence, and whether `b` belonged to it
    /// (else it ended the sequence and is read again as text).
    fn step(&self, b: u8) -> (State, bool) {
        match (self.state, b) {
            (State::Esc, b'[') => (State::Csi, true),
            (State::Esc, b']' | b'P' | b'X' | b'^' | b'_') => (State::String, true),
            (State::Esc | State::EscIntermediate, 0x20..=0x2F) => (State::EscIntermediate, true),
            (State::Esc | State::EscIntermediate, 0x30..=0x7E) => (State::Text, true),
            (State::Csi, 0x20..=0x3F) => (State::Csi, true),
            (State::Csi, 0x40..=0x7E) => (State::Text, true),
            (State::String, BEL | CAN | SUB) => (State::Text, true),
            // `ESC \` ends the string; any other escape after it is read as one.
            (State::String, ESC) => (State::Esc, true),
            (State::String, b'\n') => (State::Text, false),
            (State::String, _) => (State::String, true),
            _ => (State::Text, false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Colour (CSI), an OSC 8 hyperlink ended once by `ESC \` and once by BEL, and
    /// a three-byte UTF-8 character.
    const SAMPLE: &[u8] = b"\x1b[1;31merror\x1b[0m: see \x1b]8;;https://example.com/a\x1b\\the docs\x1b]8;;\x07 \xe2\x9c\x93 done\n";
    const SAMPLE_TEXT: &str = "error: see the docs \u{2713} done\n";

    fn stripped(chunks: &[&[u8]]) -> String {
        let mut escapes = Escapes::default();
        let mut out = Vec::new();
        for chunk in chunks {
            escapes.strip(chunk, &mut out);
        }
        String::from_utf8(out).expect("the UTF-8 passes through whole")
    }

    #[test]
    fn sample_fed_byte_by_byte_loses_its_escapes_and_keeps_its_utf8() {
        let bytes: Vec<&[u8]> = SAMPLE.chunks(1).collect();
        assert_eq!(stripped(&bytes), SAMPLE_TEXT);
    }

    #[test]
    fn sample_split_in_two_anywhere_loses_its_escapes_and_keeps_its_utf8() {
        for at in 0..=SAMPLE.len() {
            let (a, b) = SAMPLE.split_at(at);
            assert_eq!(stripped(&[a, b]), SAMPLE_TEXT, "split at {at}");
        }
    }

    #[test]
    fn controls_other_than_newline_tab_and_cr_are_removed() {
        assert_eq!(
            stripped(&[b"a\x07b\x08c\x00d\te\r\nf\x7f"]),
            "abcd\te\r\nf\x7f"
        );
    }

    #[test]
    fn two_byte_and_charset_escapes_are_removed() {
        assert_eq!(stripped(&[b"\x1b7a\x1b8\x1b(Bb\x1b=c\x1b\x1b[md"]), "abcd");
    }

    #[test]
    fn an_unterminated_osc_hides_at_most_the_rest_of_its_line() {
        assert_eq!(stripped(&[b"a\x1b]0;title\nb\n"]), "a\nb\n");
    }

    #[test]
    fn a_byte_that_cannot_continue_a_sequence_is_text() {
        assert_eq!(
            stripped(&[b"a\x1b[31\nb\x1b\xc3\xa9c\x1b[1"]),
            "a\nb\u{e9}c"
        );
    }
}
