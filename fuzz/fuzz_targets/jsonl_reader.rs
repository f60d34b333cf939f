//! Fuzzes the session log reader: `Entry::decode` on every line of the input, and
//! `LogReader` (what `read_session` and `SessionWriter::open` run) over the whole
//! input as a file. No input may panic, hang or allocate without bound; a line that
//! decodes must re-encode to a line that decodes to the same entry body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xcsh_core::log::{Entry, LogReader};

fuzz_target!(|data: &[u8]| {
    for line in data.split(|&b| b == b'\n') {
        let _ = Entry::verify(line, None);
        let Ok(text) = std::str::from_utf8(line) else {
            continue;
        };
        let Ok(entry) = Entry::decode(text) else {
            continue;
        };
        let (again, hash) = Entry::encode(entry.id, entry.parent, None, entry.ts, &entry.body);
        let again = std::str::from_utf8(&again).expect("an encoded line is UTF-8");
        let back = Entry::decode(again.trim_end_matches('\n')).expect("a re-encoded line decodes");
        assert_eq!(back.body, entry.body, "the body survives a re-encoding");
        assert_eq!(
            (back.id, back.parent, back.hash),
            (entry.id, entry.parent, hash)
        );
    }
    let mut reader = LogReader::new("fuzz.jsonl", data);
    let mut lines = 0u32;
    for item in &mut reader {
        match item {
            Ok((line, _)) => {
                lines += 1;
                assert_eq!(line, lines, "entries come numbered in order");
            }
            Err(_) => break,
        }
    }
    assert!(reader.offset() as usize <= data.len());
    if let Some(torn) = reader.torn_tail() {
        assert_eq!(reader.offset() as usize + torn.len(), data.len());
        assert!(!torn.contains(&b'\n'));
    }
});
