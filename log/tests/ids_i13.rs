//! Entry ids at the top of `u64`: a log may hold any id (a hostile or damaged file
//! with a valid hash chain), and the writer never wraps or panics on it.

use chrono::{DateTime, TimeZone, Utc};
use xcsh_log::{Body, Entry, LogError, Record, SessionHeader, SessionWriter};
use xcsh_machine::EntryId;

fn ts() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
}

/// A session of a header (id 0) and one label with id `last`.
fn session_ending_at(dir: &std::path::Path, last: u64) -> std::path::PathBuf {
    let header = Body::Record(Record::Session(Box::new(SessionHeader::new("s", "/w"))));
    let (mut bytes, hash) = Entry::encode(EntryId(0), None, None, ts(), &header);
    let label = Body::Record(Record::Label {
        target: EntryId(0),
        name: "top".into(),
    });
    let (line, _) = Entry::encode(EntryId(last), Some(EntryId(0)), Some(&hash), ts(), &label);
    bytes.extend_from_slice(&line);
    let path = dir.join("s.jsonl");
    std::fs::write(&path, bytes).unwrap();
    path
}

fn label() -> Body {
    Body::Record(Record::Label {
        target: EntryId(0),
        name: "more".into(),
    })
}

#[test]
fn the_writer_gives_the_last_id_there_is_and_then_refuses_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = session_ending_at(dir.path(), u64::MAX - 1);
    let (mut writer, _) = SessionWriter::open(&path).unwrap();
    let (id, _) = writer.append(EntryId(0), ts(), &label()).unwrap();
    assert_eq!(id, EntryId(u64::MAX));
    let err = writer.append(EntryId(0), ts(), &label()).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::IdsExhausted {
                id: EntryId(u64::MAX),
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: entry 18446744073709551615 has the largest possible id; nothing can be appended to this session",
            path.display()
        )
    );
    // Reopened, the same: nothing was written by the refused append.
    drop(writer);
    let (mut writer, log) = SessionWriter::open(&path).unwrap();
    assert_eq!(log.entries.len(), 3);
    assert!(matches!(
        writer.append(EntryId(0), ts(), &label()),
        Err(LogError::IdsExhausted { .. })
    ));
}

#[test]
fn a_first_line_that_is_not_json_is_another_file_and_a_damaged_header_is_malformed() {
    assert!(LogError::not_json(b"hello"));
    assert!(LogError::not_json(b"\x7fELF\x02\x01"));
    // JSON, or the start of an entry, or what a crash leaves: a damaged session.
    for damaged in [
        &b"[1, 2]"[..],
        b"{\"v\":1,\"id\":0}{\"v\":1}",
        b"{\"v\":1,\"id\":",
        b"",
        b"\0\0\0\0",
    ] {
        assert!(!LogError::not_json(damaged), "{damaged:?}");
    }
}
