//! Tests of the writer: appends, the lock, reopening and torn-tail repair.

use super::testutil::*;
use super::*;
use crate::read_session;

#[test]
fn create_append_read_round_trip_with_chained_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/s.jsonl");
    let mut w = SessionWriter::create(&path, header(), ts(0)).unwrap();
    let mut want = Vec::new();
    let (line, h0) = Entry::encode(
        EntryId(0),
        None,
        None,
        ts(0),
        &Body::Record(Record::Session(Box::new(header()))),
    );
    let mut bytes = line;
    want.push(Entry {
        v: 1,
        id: EntryId(0),
        parent: None,
        ts: ts(0),
        body: Body::Record(Record::Session(Box::new(header()))),
        hash: h0,
    });
    for ((n, body), parent) in (1..).zip(sample_bodies()).zip(SAMPLE_PARENTS) {
        let parent = EntryId(parent);
        let parent_hash = want[parent.0 as usize].hash;
        let (line, hash) = Entry::encode(
            EntryId(n),
            Some(parent),
            Some(&parent_hash),
            ts(n as u32),
            &body,
        );
        bytes.extend_from_slice(&line);
        assert_eq!(
            w.append(parent, ts(n as u32), &body).unwrap(),
            (EntryId(n), hash)
        );
        want.push(Entry {
            v: 1,
            id: EntryId(n),
            parent: Some(parent),
            ts: ts(n as u32),
            body,
            hash,
        });
    }
    assert_eq!((w.next_id(), w.last_id()), (EntryId(5), EntryId(4)));
    w.sync().unwrap();
    drop(w);
    assert_eq!(fs::read(&path).unwrap(), bytes);
    let log = read_session(&path).unwrap();
    assert_eq!(log.entries, want);
    assert_eq!(log.lines, vec![1, 2, 3, 4, 5]);
}

#[test]
fn reopening_continues_ids_and_chains_to_known_hashes() {
    let (_dir, path) = crate::writer::testutil::scratch();
    let mut entries = write_sample(&path);
    let (mut w, log) = SessionWriter::open(&path).unwrap();
    assert_eq!(log.entries, entries);
    assert_eq!(log.torn_tail, None);
    assert_eq!((w.next_id(), w.last_id()), (EntryId(5), EntryId(4)));
    let body = Body::Record(Record::Steer { text: "s".into() });
    entries.push(append_entry(&mut w, 3, 9, body));
    drop(w);
    assert_eq!(read_session(&path).unwrap().entries, entries);
}

#[test]
fn a_secret_in_an_appended_entry_is_redacted_and_the_line_still_verifies() {
    let (_dir, path) = crate::writer::testutil::scratch();
    let mut w = SessionWriter::create(&path, header(), ts(0)).unwrap();
    w.set_secrets(Secrets::new([("OPENAI_API_KEY", "sk-test-0123456789")]));
    let body = Body::Record(Record::Steer {
        text: "the key is sk-test-0123456789.".into(),
    });
    let (id, hash) = w.append(EntryId(0), ts(1), &body).unwrap();
    drop(w);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("sk-test-0123456789"), "{text}");
    let log = read_session(&path).unwrap();
    assert_eq!(
        log.entries[1],
        Entry {
            v: 1,
            id,
            parent: Some(EntryId(0)),
            ts: ts(1),
            body: Body::Record(Record::Steer {
                text: "the key is [redacted:OPENAI_API_KEY].".into()
            }),
            hash,
        }
    );
}

#[test]
fn appending_under_an_unknown_parent_fails() {
    let (_dir, path) = crate::writer::testutil::scratch();
    let mut w = SessionWriter::create(&path, header(), ts(0)).unwrap();
    let err = w
        .append(EntryId(7), ts(1), &Body::Record(Record::Interrupt {}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: there is no entry 7", path.display())
    );
    assert_eq!(w.next_id(), EntryId(1));
}

#[test]
fn creating_over_an_existing_file_fails() {
    let (_dir, path) = crate::writer::testutil::scratch();
    write_sample(&path);
    let err = SessionWriter::create(&path, header(), ts(0)).unwrap_err();
    assert!(
        matches!(&err, LogError::Io { path: p, error } if *p == path && error.kind() == std::io::ErrorKind::AlreadyExists),
        "{err}"
    );
}

#[test]
fn a_second_writer_is_refused_naming_the_holder_pid() {
    let (_dir, path) = crate::writer::testutil::scratch();
    let _holder = SessionWriter::create(&path, header(), ts(0)).unwrap();
    let err = SessionWriter::open(&path).unwrap_err();
    let holder = format!(
        "pid {} ({}) since 2026-11-30T03:00:00.125Z",
        std::process::id(),
        command_name()
    );
    assert_eq!(
        err.to_string(),
        format!(
            "session {} is already being written by {holder}; wait for it to finish, or stop that process",
            path.display()
        )
    );
    assert!(matches!(err, LogError::Locked { path: p, holder: h } if p == path && h == holder));
}

#[test]
fn a_refused_writer_without_lock_info_names_an_unknown_process() {
    let (_dir, path) = crate::writer::testutil::scratch();
    let _holder = SessionWriter::create(&path, header(), ts(0)).unwrap();
    fs::remove_file(lock_info_path(&path)).unwrap();
    let err = SessionWriter::open(&path).unwrap_err();
    assert!(
        matches!(&err, LogError::Locked { holder, .. } if holder == "an unknown process"),
        "{err}"
    );
}

#[test]
fn dropping_the_writer_releases_the_lock() {
    let (_dir, path) = crate::writer::testutil::scratch();
    drop(SessionWriter::create(&path, header(), ts(0)).unwrap());
    let (w, log) = SessionWriter::open(&path).unwrap();
    assert_eq!(w.next_id(), EntryId(1));
    assert_eq!(log.entries.len(), 1);
}

#[test]
fn a_closed_writer_leaves_no_lock_note_beside_the_log() {
    let (dir, path) = crate::writer::testutil::scratch();
    let w = SessionWriter::create(&path, header(), ts(0)).unwrap();
    assert!(
        lock_info_path(&path).exists(),
        "the holder is described while it writes"
    );
    drop(w);
    let (w, _) = SessionWriter::open(&path).unwrap();
    drop(w);
    let (w, _) = SessionWriter::open_branch(&path, &mut |_| {}).unwrap();
    drop(w);
    assert_eq!(dir_names(dir.path()), vec!["s.jsonl".to_string()]);
}

#[test]
fn a_stale_lock_note_of_a_killed_writer_is_replaced_then_removed() {
    let (dir, path) = crate::writer::testutil::scratch();
    drop(SessionWriter::create(&path, header(), ts(0)).unwrap());
    // What a SIGKILLed writer leaves: the note, but no lock (the kernel dropped it).
    fs::write(
        lock_info_path(&path),
        "pid 4194304 (xcsh) since 2026-11-30T03:00:00.125Z\n",
    )
    .unwrap();
    let (w, _) = SessionWriter::open(&path).unwrap();
    let note = fs::read_to_string(lock_info_path(&path)).unwrap();
    assert!(
        note.starts_with(&format!("pid {} (", std::process::id())),
        "{note}"
    );
    drop(w);
    assert_eq!(dir_names(dir.path()), vec!["s.jsonl".to_string()]);
}

#[test]
fn a_writer_refused_by_a_malformed_log_leaves_no_lock_note() {
    let (dir, path) = crate::writer::testutil::scratch();
    fs::write(&path, "not a session\n").unwrap();
    assert!(SessionWriter::open(&path).is_err());
    assert!(SessionWriter::open_branch(&path, &mut |_| {}).is_err());
    assert_eq!(dir_names(dir.path()), vec!["s.jsonl".to_string()]);
}

#[test]
fn a_refused_second_writer_leaves_the_holders_note_in_place() {
    let (_dir, path) = crate::writer::testutil::scratch();
    let holder = SessionWriter::create(&path, header(), ts(0)).unwrap();
    let note = fs::read_to_string(lock_info_path(&path)).unwrap();
    assert!(SessionWriter::open(&path).is_err());
    assert_eq!(fs::read_to_string(lock_info_path(&path)).unwrap(), note);
    drop(holder);
    assert!(!lock_info_path(&path).exists());
}

fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_file_cut_at_a_line_boundary_opens_without_repair() {
    let (dir, path) = crate::writer::testutil::scratch();
    let entries = write_sample(&path);
    let full = fs::read(&path).unwrap();
    let cut = full.len() - full.rsplit(|&b| b == b'\n').nth(1).unwrap().len() - 1;
    fs::write(&path, &full[..cut]).unwrap();
    let (w, log) = SessionWriter::open(&path).unwrap();
    assert_eq!(log.entries, entries[..4]);
    assert_eq!(log.torn_tail, None);
    assert_eq!((w.next_id(), w.last_id()), (EntryId(4), EntryId(3)));
    drop(w);
    assert_eq!(fs::read(&path).unwrap(), &full[..cut]);
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names.iter().filter(|n| n.contains(".torn-")).count(),
        0,
        "{names:?}"
    );
}

#[test]
fn a_torn_last_line_is_repaired_at_every_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.jsonl");
    let entries = write_sample(&original);
    let full = fs::read(&original).unwrap();
    let last_len = full[..full.len() - 1]
        .rsplit(|&b| b == b'\n')
        .next()
        .unwrap()
        .len()
        + 1;
    let start = full.len() - last_len;
    let steer = Body::Record(Record::Steer {
        text: "after".into(),
    });
    for k in 1..last_len {
        let path = dir.path().join(format!("cut-{k}.jsonl"));
        fs::write(&path, &full[..start + k]).unwrap();

        let (mut w, log) = SessionWriter::open(&path).unwrap();
        let sidecar = dir.path().join(format!("cut-{k}.jsonl.torn-{start}"));
        assert_eq!(log.entries, entries[..4], "cut at {k}");
        assert_eq!(log.torn_tail, torn(start, k, Some(&sidecar)), "cut at {k}");
        assert_eq!(fs::read(&sidecar).unwrap(), &full[start..start + k]);
        assert_eq!(fs::read(&path).unwrap(), &full[..start]);

        let (id, hash) = w.append(EntryId(2), ts(9), &steer).unwrap();
        assert_eq!(id, EntryId(4));
        drop(w);
        let mut want = entries[..4].to_vec();
        want.push(Entry {
            v: 1,
            id,
            parent: Some(EntryId(2)),
            ts: ts(9),
            body: steer.clone(),
            hash,
        });
        let again = read_session(&path).unwrap();
        assert_eq!(again.entries, want, "cut at {k}");
        assert_eq!(again.torn_tail, None);
    }
}

#[test]
fn a_zero_filled_tail_is_repaired_as_torn() {
    let (dir, path) = crate::writer::testutil::scratch();
    let entries = write_sample(&path);
    let (full, _) = append_tail(&path, &[0u8; 100]);

    let (_w, log) = SessionWriter::open(&path).unwrap();
    let sidecar = dir.path().join(format!("s.jsonl.torn-{}", full.len()));
    assert_eq!(log.entries, entries);
    assert_eq!(log.torn_tail, torn(full.len(), 100, Some(&sidecar)));
    assert_eq!(fs::read(&sidecar).unwrap(), vec![0u8; 100]);
    assert_eq!(fs::read(&path).unwrap(), full);
}

#[test]
fn a_second_repair_at_the_same_offset_keeps_the_first_sidecar() {
    let (dir, path) = crate::writer::testutil::scratch();
    write_sample(&path);
    let full = fs::read(&path).unwrap();
    for tail in [&b"first"[..], &b"second"[..]] {
        fs::write(&path, [&full[..], tail].concat()).unwrap();
        drop(SessionWriter::open(&path).unwrap());
    }
    let first = dir.path().join(format!("s.jsonl.torn-{}", full.len()));
    let second = dir.path().join(format!("s.jsonl.torn-{}.1", full.len()));
    assert_eq!(
        (fs::read(&first).unwrap(), fs::read(&second).unwrap()),
        (b"first".to_vec(), b"second".to_vec())
    );
}

#[test]
fn a_malformed_complete_line_is_not_repaired() {
    let (_dir, path) = crate::writer::testutil::scratch();
    write_sample(&path);
    let (_, damaged) = append_tail(&path, b"garbage\n{\"torn");
    let err = SessionWriter::open(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:6: malformed entry: the line has no trailing \"hash\" field",
            path.display()
        )
    );
    assert_eq!(fs::read(&path).unwrap(), damaged);
}
