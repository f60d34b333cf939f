//! An incremental Server-Sent Events parser (the WHATWG "event stream" format):
//! bytes in, in any chunking, complete events out.
//!
//! It is correct however the bytes are split: inside a line, inside a UTF-8
//! character, between the `\r` and `\n` of a CRLF. Lines end with `\r\n`, `\r` or
//! `\n`; lines starting with `:` are comments; `data:` lines of one event are joined
//! with `\n`; `event:` and `id:` are kept; a blank line dispatches the event. Each
//! byte is looked at once: a partial line waits in a buffer and only the new bytes
//! are scanned, so feeding a stream byte by byte costs no more than feeding it whole.

use xcsh_machine::{ProviderError, ProviderErrorKind, StreamEvent};

/// A wire protocol's event mapper: sans-IO, one SSE event in, normalized events out.
/// Every adapter (`openai`, `anthropic`, `responses`) implements it; the HTTP driver
/// and the regression suite feed it.
pub trait StreamMapper: Send {
    /// One SSE event: its `event:` type (if any) and its `data:` payload. An `Err` is
    /// the stream's end: an in-band error or a payload that cannot be parsed.
    fn on_event(
        &mut self,
        event_type: Option<&str>,
        data: &str,
    ) -> Result<Vec<StreamEvent>, ProviderError>;
    /// The byte stream ended: whatever the mapper still holds (by default nothing:
    /// events go out as they arrive).
    fn finish(&mut self) -> Vec<StreamEvent> {
        Vec::new()
    }
    /// The protocol's end marker arrived: a stream that ends before this broke off.
    fn is_complete(&self) -> bool;
}

/// Parses one `data:` payload as JSON; a payload that is not JSON is `malformed`.
pub fn parse_payload(data: &str, what: &str) -> Result<serde_json::Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| {
        let mut head: String = data.chars().take(120).collect();
        if head.len() < data.len() {
            head.push('…');
        }
        malformed(format!("{what} is not valid JSON ({e}): {head}"))
    })
}

/// An event the mapper passes over, named by its type.
pub fn skipped(event_type: &str) -> StreamEvent {
    StreamEvent::Skipped {
        event_type: event_type.to_string(),
    }
}

/// The message a stream has open (a Messages message, a Responses response), to tell
/// a restart (a new one before the open one ended: a provider or a proxy started over)
/// from the next message of a multi-request exchange.
#[derive(Debug, Default)]
pub struct OpenMessage {
    /// A message started and has not ended.
    pub open: bool,
    /// Its id, for the restart notice.
    pub id: Option<String>,
}

impl OpenMessage {
    /// Message `id` starts. When one was still open, the `restarted` event that says
    /// so: `reason` is given the new id as ` (ID)` (empty without one) and the open
    /// message's id (`unnamed` when it had none).
    pub fn start(
        &mut self,
        id: Option<String>,
        unnamed: &str,
        reason: impl FnOnce(String, &str) -> String,
    ) -> Option<StreamEvent> {
        let restart = self.open.then(|| {
            let new = id.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
            StreamEvent::Restarted {
                reason: reason(new, self.id.as_deref().unwrap_or(unnamed)),
            }
        });
        self.open = true;
        self.id = id;
        restart
    }
}

/// A block or item of type `kind` that the mapper does not use, passed over as
/// `skipped` under `EVENT:NAME`: its name (`(untyped)` without a type).
pub fn skip_unknown(out: &mut Vec<StreamEvent>, event: &str, kind: &str) -> String {
    let name = if kind.is_empty() { "(untyped)" } else { kind };
    out.push(skipped(&format!("{event}:{name}")));
    name.to_string()
}

/// Pushes `make(text)` onto `out` unless `text` is empty: an empty delta says nothing.
pub fn push_text(out: &mut Vec<StreamEvent>, text: &str, make: fn(String) -> StreamEvent) {
    if !text.is_empty() {
        out.push(make(text.to_string()));
    }
}

/// A `malformed` provider error.
pub fn malformed(message: String) -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::Malformed,
        message,
    }
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, if the event had one (the spec's default is "message").
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id in force when the event was dispatched.
    pub id: Option<String>,
}

/// The parser's state between chunks.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the line in progress (no terminator yet).
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` at the start of the next one
    /// belongs to that line ending.
    after_cr: bool,
    /// The byte-order mark was checked (only the very first bytes may carry one).
    bom_checked: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    last_id: Option<String>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Feeds the next bytes; returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut bytes = bytes;
        if !self.bom_checked {
            // The BOM may itself be split across chunks: wait for three bytes.
            let have = self.line.len() + bytes.len();
            if have < BOM.len() && BOM.starts_with(&[self.line.as_slice(), bytes].concat()) {
                self.line.extend_from_slice(bytes);
                return out;
            }
            self.bom_checked = true;
            let mut head = std::mem::take(&mut self.line);
            head.extend_from_slice(bytes);
            let start = if head.starts_with(BOM) { BOM.len() } else { 0 };
            // Re-run on the joined head (at most two bytes were waiting).
            return self.push_checked(&head[start..]);
        }
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        self.scan(bytes, &mut out);
        out
    }

    fn push_checked(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        self.scan(bytes, &mut out);
        out
    }

    fn scan(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => {
                    self.end_line(&bytes[start..i], out);
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    self.end_line(&bytes[start..i], out);
                    i += 1;
                    if i == bytes.len() {
                        self.after_cr = true;
                    } else if bytes[i] == b'\n' {
                        i += 1;
                    }
                    start = i;
                }
                _ => i += 1,
            }
        }
        self.line.extend_from_slice(&bytes[start..]);
    }

    /// The stream ended: a last line without terminator is processed, and an event
    /// still open (no blank line after it) is dispatched.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.bom_checked {
            self.bom_checked = true;
            if self.line.as_slice() == BOM || BOM.starts_with(&self.line) {
                self.line.clear();
            }
        }
        if !self.line.is_empty() {
            self.end_line(&[], &mut out);
        }
        self.dispatch(&mut out);
        out
    }

    /// Bytes held for the line and the event in progress (what an event that never
    /// ends makes grow).
    pub fn pending_len(&self) -> usize {
        self.line.len() + self.data.len()
    }

    /// True when no partial line or event is pending.
    pub fn is_idle(&self) -> bool {
        self.line.is_empty() && !self.has_data && self.event.is_none()
    }

    fn end_line(&mut self, tail: &[u8], out: &mut Vec<SseEvent>) {
        let owned;
        let line: &[u8] = if self.line.is_empty() {
            tail
        } else {
            self.line.extend_from_slice(tail);
            owned = std::mem::take(&mut self.line);
            &owned
        };
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        let value = String::from_utf8_lossy(value);
        match name {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"event" => self.event = Some(value.into_owned()),
            b"id" if !value.contains('\0') => {
                self.last_id = Some(value.into_owned());
            }
            // `retry:` and unknown fields are ignored, as the spec says.
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            // An event without data is not dispatched (the spec resets the type).
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone(),
        });
    }
}

/// Parses a whole byte string (a convenience for tests and tools).
pub fn parse_all(bytes: &[u8]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = parser.push(bytes);
    events.extend(parser.finish());
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
            id: id.map(str::to_string),
        }
    }

    /// Feeds `bytes` split at `cuts` (sorted offsets) and collects every event.
    fn chunked(bytes: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        let mut prev = 0;
        for &c in cuts {
            out.extend(parser.push(&bytes[prev..c]));
            prev = c;
        }
        out.extend(parser.push(&bytes[prev..]));
        out.extend(parser.finish());
        out
    }

    fn byte_by_byte(bytes: &[u8]) -> Vec<SseEvent> {
        let cuts: Vec<usize> = (1..bytes.len()).collect();
        chunked(bytes, &cuts)
    }

    const SAMPLE: &str = "\u{FEFF}: a comment\r\nevent: greet\r\nid: 7\r\ndata: héllo\r\ndata:wörld ✓\r\n\r\n\
        data: plain\n\n\
        event: cr\rdata: one\rdata:  two spaces\r\r\
        retry: 100\nunknown: x\ndata\n\n\
        event: lonely\n\n\
        data: {\"a\":1}\n\n";

    fn sample_expected() -> Vec<SseEvent> {
        vec![
            ev(Some("greet"), "héllo\nwörld ✓", Some("7")),
            ev(None, "plain", Some("7")),
            ev(Some("cr"), "one\n two spaces", Some("7")),
            ev(None, "", Some("7")),
            ev(None, "{\"a\":1}", Some("7")),
        ]
    }

    #[test]
    fn whole_stream() {
        assert_eq!(parse_all(SAMPLE.as_bytes()), sample_expected());
    }

    #[test]
    fn byte_by_byte_equals_whole() {
        assert_eq!(byte_by_byte(SAMPLE.as_bytes()), sample_expected());
    }

    #[test]
    fn every_single_split_equals_whole() {
        let bytes = SAMPLE.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(chunked(bytes, &[cut]), sample_expected(), "cut at {cut}");
        }
    }

    #[test]
    fn every_pair_of_splits_equals_whole() {
        let bytes = SAMPLE.as_bytes();
        for a in 0..=bytes.len() {
            for b in a..=bytes.len() {
                assert_eq!(chunked(bytes, &[a, b]), sample_expected(), "cuts {a},{b}");
            }
        }
    }

    #[test]
    fn utf8_character_split_across_chunks() {
        // "✓" is three bytes: split after the first and after the second.
        let text = "data: ✓✓\n\n".as_bytes();
        let check = text.iter().position(|&b| b == 0xE2).unwrap();
        assert_eq!(
            chunked(text, &[check + 1, check + 2]),
            vec![ev(None, "✓✓", None)]
        );
    }

    #[test]
    fn crlf_split_between_cr_and_lf() {
        let text = b"data: a\r\n\r\ndata: b\r\n\r\n";
        // Cut right after each \r: the following \n must not count as a blank line.
        assert_eq!(
            chunked(text, &[8, 10]),
            vec![ev(None, "a", None), ev(None, "b", None)]
        );
        // A lone \r chunk followed by an empty chunk then \n.
        let mut p = SseParser::new();
        let mut out = p.push(b"data: x\r");
        out.extend(p.push(b""));
        out.extend(p.push(b"\n"));
        out.extend(p.push(b"\r\n"));
        assert_eq!(out, vec![ev(None, "x", None)]);
        // `\r` | `\n` | `\n`: the first `\n` completes the CRLF, the second is the
        // blank line.
        let mut p = SseParser::new();
        let mut out = p.push(b"data: y\r");
        out.extend(p.push(b"\n"));
        assert_eq!(out, vec![]);
        out.extend(p.push(b"\n"));
        assert_eq!(out, vec![ev(None, "y", None)]);
    }

    #[test]
    fn final_event_without_blank_line_is_delivered_by_finish() {
        let mut p = SseParser::new();
        assert_eq!(p.push(b"event: last\ndata: tail"), vec![]);
        assert!(!p.is_idle());
        assert_eq!(p.finish(), vec![ev(Some("last"), "tail", None)]);
        let mut p = SseParser::new();
        assert_eq!(p.push(b"data: tail\n"), vec![]);
        assert_eq!(p.finish(), vec![ev(None, "tail", None)]);
    }

    #[test]
    fn comments_and_blank_lines_alone_dispatch_nothing() {
        assert_eq!(parse_all(b": ping\n\n: ping\r\n\r\n\n\n"), vec![]);
    }

    #[test]
    fn id_with_nul_is_ignored_and_id_persists() {
        assert_eq!(
            parse_all(b"id: 1\ndata: a\n\nid: x\0y\ndata: b\n\n"),
            vec![ev(None, "a", Some("1")), ev(None, "b", Some("1"))]
        );
    }

    #[test]
    fn seeded_random_chunkings_equal_whole() {
        let bytes = SAMPLE.as_bytes();
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for _ in 0..200 {
            let mut cuts = Vec::new();
            for pos in 1..bytes.len() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if state.is_multiple_of(4) {
                    cuts.push(pos);
                }
            }
            assert_eq!(chunked(bytes, &cuts), sample_expected(), "cuts {cuts:?}");
        }
    }

    #[test]
    fn bom_only_at_start_and_split() {
        let mut p = SseParser::new();
        let mut out = p.push(b"\xEF");
        out.extend(p.push(b"\xBB"));
        out.extend(p.push(b"\xBFdata: x\n\n"));
        assert_eq!(out, vec![ev(None, "x", None)]);
        // A BOM later in the stream is part of the data.
        assert_eq!(
            parse_all(b"data: a\n\n\xEF\xBB\xBFdata: b\n\n")[0],
            ev(None, "a", None)
        );
    }
}
