//! The shared body of the event-mapper fuzz targets. The input is either an SSE
//! stream (any bytes; the seeds are the recorded streams rebuilt as SSE), parsed and
//! fed to the protocol's mapper the way the HTTP driver does, or, when it starts
//! with a NUL byte, raw events: `TYPE \x01 DATA` records separated by NUL bytes (an
//! empty TYPE is no `event:` field), so that event types and data may hold any
//! character, line breaks included. The normalized events go through the machine's
//! `Assembler` too. Checked: no panic; the driver's parse is the same whole and in
//! chunks; a mapper that failed is not fed again.

use xcsh_machine::Assembler;
use xcsh_providers::regress::{self, Protocol};

pub fn fuzz(protocol: Protocol, data: &[u8]) {
    if let Some(raw) = data.strip_prefix(b"\0") {
        let mut mapper = protocol.mapper();
        let mut assembler = Assembler::default();
        for record in raw.split(|&b| b == 0) {
            let (kind, payload) = match record.iter().position(|&b| b == 1) {
                Some(at) => (&record[..at], &record[at + 1..]),
                None => (&[][..], record),
            };
            let kind = String::from_utf8_lossy(kind);
            let payload = String::from_utf8_lossy(payload);
            let kind = (!kind.is_empty()).then_some(kind.as_ref());
            match mapper.on_event(kind, &payload) {
                Ok(events) => events.iter().for_each(|e| assembler.push(e)),
                Err(_) => return,
            }
        }
        for event in mapper.finish() {
            assembler.push(&event);
        }
        let _ = mapper.is_complete();
        let _ = assembler.finish();
        return;
    }
    let whole = regress::parse_whole(protocol, data);
    let mut assembler = Assembler::default();
    whole.events.iter().for_each(|e| assembler.push(e));
    let _ = regress::assembled_line(&whole);
    let seed = data
        .iter()
        .fold(0u64, |h, &b| h.rotate_left(5) ^ u64::from(b));
    assert_eq!(
        regress::parse_random(protocol, data, seed),
        whole,
        "the same events in random chunks"
    );
}
