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
    let (_dir, path) = crate::writer::testutil::scratch();
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

/// Each damage to the sample log is the reader's error naming the file (`PATH`)
/// and the line.
#[test]
fn a_damaged_log_is_an_error_naming_its_line() {
    type Damage = fn(&mut Vec<Vec<u8>>);
    let rows: [(&str, Damage, &str); 9] = [
        (
            "an edited line is a hash mismatch",
            |lines| {
                let edited = String::from_utf8(lines[2].clone())
                    .unwrap()
                    .replace("hello", "HELLO");
                assert_ne!(edited.as_bytes(), lines[2].as_slice());
                lines[2] = edited.into_bytes();
            },
            "PATH:3: entry 2 fails its hash check (the line or its parent was altered)",
        ),
        (
            "a removed middle line is a missing parent of the next line",
            |lines| {
                lines.remove(2);
            },
            "PATH:3: entry 3 names parent 2, which does not appear earlier in the file",
        ),
        (
            "a malformed complete line in the middle",
            |lines| lines[3] = b"{\"v\":1,\"id\":\n".to_vec(),
            "PATH:4: malformed entry: the line has no trailing \"hash\" field",
        ),
        (
            "an empty line is malformed",
            |lines| lines.insert(2, b"\n".to_vec()),
            "PATH:3: malformed entry: not valid JSON for an entry: the line is empty",
        ),
        (
            "a complete line of NUL bytes is malformed",
            |lines| lines.insert(4, b"\0\0\0\0\n".to_vec()),
            "PATH:5: malformed entry: not valid JSON for an entry: the line is 4 NUL bytes (a write lost in a power cut?)",
        ),
        (
            "a line of invalid UTF-8 is malformed",
            |lines| lines[1][20] = 0xff,
            "PATH:2: malformed entry: not valid JSON for an entry: the line is not valid UTF-8 (invalid utf-8 sequence of 1 bytes from index 20)",
        ),
        (
            "a duplicate id",
            |lines| {
                let again = lines[2].clone();
                lines.push(again);
            },
            "PATH:6: entry id 2 appears a second time",
        ),
        (
            "a file not starting with a session record is not a session",
            |lines| {
                lines.remove(0);
            },
            "PATH: not a session log (the first line is not a parentless `session` record)",
        ),
        (
            "a parentless line after the header is an orphan",
            |lines| {
                let (orphan, _) = Entry::encode(EntryId(5), None, None, ts(5), &sample_bodies()[0]);
                lines.push(orphan);
            },
            "PATH:6: entry 5 has no parent (only the session header may lack one)",
        ),
    ];
    for (row, damage, want) in rows {
        let (_dir, path) = crate::writer::testutil::scratch();
        write_sample(&path);
        let mut lines = lines_of(&path);
        damage(&mut lines);
        write_lines(&path, &lines);
        let want = want.replace("PATH", &path.display().to_string());
        assert_eq!(read_err(&path), want, "{row}");
    }
}

#[test]
fn an_empty_file_is_not_a_session() {
    let (_dir, path) = crate::writer::testutil::scratch();
    std::fs::write(&path, b"").unwrap();
    assert!(matches!(
        read_session(&path),
        Err(LogError::NotASession { path: p }) if p == path
    ));
}

#[test]
fn reading_reports_a_torn_tail_without_repairing_it() {
    let (_dir, path) = crate::writer::testutil::scratch();
    let entries = write_sample(&path);
    let (full, torn) = crate::writer::testutil::append_tail(&path, b"{\"v\":1,\"id\":5");
    let log = read_session(&path).unwrap();
    assert_eq!(log.entries, entries);
    assert_eq!(
        log.torn_tail,
        crate::writer::testutil::torn(full.len(), 13, None)
    );
    assert_eq!(std::fs::read(&path).unwrap(), torn);
}

#[test]
fn an_unknown_entry_type_is_kept_and_listed() {
    let (_dir, path) = crate::writer::testutil::scratch();
    let mut entries = write_sample(&path);
    let (mut w, _) = crate::SessionWriter::open(&path).unwrap();
    let body = Body::Unknown {
        type_name: "from_the_future".into(),
        data: serde_json::value::RawValue::from_string(r#"{"x":[1,2]}"#.into()).unwrap(),
    };
    entries.push(crate::writer::testutil::append_entry(&mut w, 4, 5, body));
    drop(w);
    let log = read_session(&path).unwrap();
    assert_eq!(log.entries, entries);
    assert_eq!(log.unknown, vec![(6, "from_the_future".to_string())]);
}

#[test]
fn the_streaming_reader_yields_numbered_entries_and_keeps_the_torn_bytes() {
    let (_dir, path) = crate::writer::testutil::scratch();
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
