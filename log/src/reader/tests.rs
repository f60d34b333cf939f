//! Tests of the reader: damaged logs named by file and line, torn tails, unknown
//! types and batched reading.

use super::*;
use crate::writer::testutil::{header, sample_bodies, ts, write_sample};

fn lines_of(path: &Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn write_lines(path: &Path, lines: &[Vec<u8>]) {
    std::fs::write(path, lines.concat()).unwrap();
}

fn read_err(path: &Path) -> String {
    read_session(path).unwrap_err().to_string()
}

#[test]
fn a_written_log_reads_back_with_line_numbers_and_no_findings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let entries = write_sample(&path);
    let log = read_session(&path).unwrap();
    assert_eq!(log.entries, entries);
    assert_eq!(log.lines, vec![1, 2, 3, 4, 5]);
    assert_eq!(log.torn_tail, None);
    assert_eq!(log.unknown, vec![]);
    assert_eq!(log.header(), &header());
    assert_eq!(log.get(EntryId(3)), Some(&entries[3]));
    assert_eq!(log.get(EntryId(9)), None);
    assert_eq!(log.line_of(EntryId(3)), Some(4));
    assert_eq!(log.leaf(), EntryId(4));
}

#[test]
fn an_edited_line_is_a_hash_mismatch_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_sample(&path);
    let mut lines = lines_of(&path);
    let edited = String::from_utf8(lines[2].clone())
        .unwrap()
        .replace("hello", "HELLO");
    assert_ne!(edited.as_bytes(), lines[2].as_slice());
    lines[2] = edited.into_bytes();
    write_lines(&path, &lines);
    assert_eq!(
        read_err(&path),
        format!(
            "{}:3: entry 2 fails its hash check (the line or its parent was altered)",
            path.display()
        )
    );
}

#[test]
fn a_removed_middle_line_is_a_missing_parent_naming_the_next_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_sample(&path);
    let mut lines = lines_of(&path);
    lines.remove(2);
    write_lines(&path, &lines);
    assert_eq!(
        read_err(&path),
        format!(
            "{}:3: entry 3 names parent 2, which does not appear earlier in the file",
            path.display()
        )
    );
}

#[test]
fn a_malformed_complete_line_in_the_middle_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_sample(&path);
    let mut lines = lines_of(&path);
    lines[3] = b"{\"v\":1,\"id\":\n".to_vec();
    write_lines(&path, &lines);
    assert_eq!(
        read_err(&path),
        format!(
            "{}:4: malformed entry: the line has no trailing \"hash\" field",
            path.display()
        )
    );
}

#[test]
fn an_empty_line_is_malformed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_sample(&path);
    let mut lines = lines_of(&path);
    lines.insert(2, b"\n".to_vec());
    write_lines(&path, &lines);
    assert_eq!(
        read_err(&path),
        format!(
            "{}:3: malformed entry: not valid JSON for an entry: the line is empty",
            path.display()
        )
    );
}

#[test]
fn a_complete_line_of_nul_bytes_is_malformed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_sample(&path);
    let mut lines = lines_of(&path);
    lines.insert(4, b"\0\0\0\0\n".to_vec());
    write_lines(&path, &lines);
    assert_eq!(
        read_err(&path),
        format!(
            "{}:5: malformed entry: not valid JSON for an entry: the line is 4 NUL bytes (a write lost in a power cut?)",
            path.display()
        )
    );
}

#[test]
fn a_line_of_invalid_utf8_is_malformed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_sample(&path);
    let mut lines = lines_of(&path);
    lines[1][20] = 0xff;
    write_lines(&path, &lines);
    assert_eq!(
        read_err(&path),
        format!(
            "{}:2: malformed entry: not valid JSON for an entry: the line is not valid UTF-8 (invalid utf-8 sequence of 1 bytes from index 20)",
            path.display()
        )
    );
}

#[test]
fn a_duplicate_id_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_sample(&path);
    let mut lines = lines_of(&path);
    let again = lines[2].clone();
    lines.push(again);
    write_lines(&path, &lines);
    assert_eq!(
        read_err(&path),
        format!("{}:6: entry id 2 appears a second time", path.display())
    );
}

#[test]
fn a_file_not_starting_with_a_session_record_is_not_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_sample(&path);
    let mut lines = lines_of(&path);
    lines.remove(0);
    write_lines(&path, &lines);
    assert_eq!(
        read_err(&path),
        format!(
            "{}: not a session log (the first line is not a parentless `session` record)",
            path.display()
        )
    );
}

#[test]
fn an_empty_file_is_not_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, b"").unwrap();
    assert!(matches!(
        read_session(&path),
        Err(LogError::NotASession { path: p }) if p == path
    ));
}

#[test]
fn a_parentless_line_after_the_header_is_an_orphan() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_sample(&path);
    let mut lines = lines_of(&path);
    let (orphan, _) = Entry::encode(EntryId(5), None, None, ts(5), &sample_bodies()[0]);
    lines.push(orphan);
    write_lines(&path, &lines);
    assert_eq!(
        read_err(&path),
        format!(
            "{}:6: entry 5 has no parent (only the session header may lack one)",
            path.display()
        )
    );
}

#[test]
fn reading_reports_a_torn_tail_without_repairing_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let entries = write_sample(&path);
    let full = std::fs::read(&path).unwrap();
    let mut torn = full.clone();
    torn.extend_from_slice(b"{\"v\":1,\"id\":5");
    std::fs::write(&path, &torn).unwrap();
    let log = read_session(&path).unwrap();
    assert_eq!(log.entries, entries);
    assert_eq!(
        log.torn_tail,
        Some(TornTail {
            offset: full.len() as u64,
            len: 13,
            sidecar: None
        })
    );
    assert_eq!(std::fs::read(&path).unwrap(), torn);
}

#[test]
fn an_unknown_entry_type_is_kept_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut entries = write_sample(&path);
    let (mut w, _) = crate::SessionWriter::open(&path).unwrap();
    let body = Body::Unknown {
        type_name: "from_the_future".into(),
        data: serde_json::value::RawValue::from_string(r#"{"x":[1,2]}"#.into()).unwrap(),
    };
    let (id, hash) = w.append(EntryId(4), ts(5), &body).unwrap();
    drop(w);
    entries.push(Entry {
        v: 1,
        id,
        parent: Some(EntryId(4)),
        ts: ts(5),
        body,
        hash,
    });
    let log = read_session(&path).unwrap();
    assert_eq!(log.entries, entries);
    assert_eq!(log.unknown, vec![(6, "from_the_future".to_string())]);
}

#[test]
fn the_streaming_reader_yields_numbered_entries_and_keeps_the_torn_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let entries = write_sample(&path);
    let mut bytes = std::fs::read(&path).unwrap();
    let complete = bytes.len() as u64;
    bytes.extend_from_slice(b"{\"v\"");
    let mut reader = LogReader::new(&path, bytes.as_slice());
    let got: Vec<(u32, Entry)> = (&mut reader).map(Result::unwrap).collect();
    let want: Vec<(u32, Entry)> = (1..).zip(entries.iter().cloned()).collect();
    assert_eq!(got, want);
    assert_eq!(reader.torn_tail(), Some(&b"{\"v\""[..]));
    assert_eq!(reader.offset(), complete);
    assert_eq!(reader.lines_read(), 5);
    assert_eq!(reader.hash_of(EntryId(4)), Some(entries[4].hash));
}

/// The batched, two-thread reading (`read_session`) finds what reading line by
/// line finds: the same entries, or the same first error, wherever it is.
#[test]
fn batched_reading_matches_line_by_line_reading_on_damaged_logs() {
    let dir = tempfile::tempdir().unwrap();
    let (path, good) = crate::writer::testutil::generated(dir.path());
    let one_by_one = |bytes: &[u8]| -> Result<Vec<(u32, Entry)>, String> {
        LogReader::new(&path, bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    };
    let batched = |bytes: &[u8]| -> Result<Vec<(u32, Entry)>, String> {
        read_log(&path, bytes, 0)
            .map(|o| o.log.lines.into_iter().zip(o.log.entries).collect())
            .map_err(|e| e.to_string())
    };
    assert_eq!(batched(&good), one_by_one(&good));
    let lines = lines_of(&path);
    let mut errors = 0;
    for (case, k, bytes) in crate::writer::testutil::damaged_copies(&lines, 5) {
        let (a, b) = (batched(&bytes), one_by_one(&bytes));
        errors += usize::from(a.is_err());
        assert_eq!(a, b, "case {case} at line {k}");
    }
    assert!(errors > 30, "{errors}");
}
