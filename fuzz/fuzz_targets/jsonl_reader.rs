//! Fuzzes the session log reader: `Entry::decode` on every line of the input, and
//! `LogReader` (what `read_session` and `SessionWriter::open` run) over the whole
//! input as a file, and again over the input's decodable lines re-encoded with their
//! hash chain made whole (random bytes never carry a valid blake3 hash, so without
//! this the reader's checks after the hash, ids, parents and its hash index, would
//! see only the seeds). No input may panic, hang or allocate without bound; a line
//! that decodes must re-encode to a line that decodes to the same entry body.
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use xcsh_log::{Entry, LogReader};

fn read(data: &[u8]) {
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
}

fuzz_target!(|data: &[u8]| {
    let mut hashes = HashMap::new();
    let mut chained = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        let _ = Entry::verify(line, None);
        let Some(entry) = std::str::from_utf8(line)
            .ok()
            .and_then(|t| Entry::decode(t).ok())
        else {
            continue;
        };
        let (again, hash) = entry.reencode(None);
        let again = std::str::from_utf8(&again).expect("an encoded line is UTF-8");
        let back = Entry::decode(again.trim_end_matches('\n')).expect("a re-encoded line decodes");
        assert_eq!(back.body, entry.body, "the body survives a re-encoding");
        assert_eq!(
            (back.id, back.parent, back.hash),
            (entry.id, entry.parent, hash)
        );
        let parent_hash = entry.parent.and_then(|p| hashes.get(&p).copied());
        let (line, hash) = entry.reencode(parent_hash.as_ref());
        hashes.entry(entry.id).or_insert(hash);
        chained.extend_from_slice(&line);
    }
    read(data);
    read(&chained);
});
