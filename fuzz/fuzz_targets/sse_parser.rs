//! Fuzzes the SSE parser: arbitrary bytes in arbitrary chunkings. The first byte
//! picks the chunk lengths; the events must be the same whole, in those chunks and
//! byte by byte (the parser claims to be chunking-invariant), and nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xcsh_providers::sse::{SseEvent, SseParser};

fn parse<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.push(chunk));
    }
    events.extend(parser.finish());
    assert!(parser.is_idle(), "nothing pending after finish");
    events
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let whole = parse([body]);
    // Chunk lengths cycle through 1..=pick%16+1; with bit 4 of `pick`, an empty
    // chunk follows every seventh.
    let mut chunks = Vec::new();
    let mut at = 0;
    let mut n = 0usize;
    while at < body.len() {
        let len = 1 + n % (usize::from(pick % 16) + 1);
        let end = (at + len).min(body.len());
        chunks.push(&body[at..end]);
        if pick & 0x10 != 0 && n % 7 == 6 {
            chunks.push(&body[end..end]);
        }
        at = end;
        n += 1;
    }
    assert_eq!(parse(chunks), whole, "chunked as picked");
    assert_eq!(parse(body.chunks(1)), whole, "byte by byte");
});
