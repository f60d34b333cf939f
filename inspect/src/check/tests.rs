//! The checker on real logs: clean sessions pass; each kind of damage is found and
//! named by the right entries. Broken logs are made by rewriting lines; ordering
//! violations are re-encoded with valid hashes, so that only the order is wrong.

use std::path::{Path, PathBuf};

use xcsh_log::{Body, Entry, EntryHash, Record, SessionLog};
use xcsh_machine::EntryId;

use super::*;
use crate::testkit;

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(
        path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
}

/// Writes the header, then the entries `order` names (`None` = a copy of the entry
/// under a new id), as one chain with valid hashes.
fn rechain(log: &SessionLog, name: &str, order: &[(EntryId, Option<EntryId>)]) -> PathBuf {
    let path = log.path.with_file_name(name);
    let header = &log.entries[0];
    let (mut bytes, mut prev_hash) = Entry::encode(header.id, None, None, header.ts, &header.body);
    let mut prev = header.id;
    for (from, new_id) in order {
        let e = log.get(*from).unwrap();
        let id = new_id.unwrap_or(e.id);
        let (line, hash): (Vec<u8>, EntryHash) =
            Entry::encode(id, Some(prev), Some(&prev_hash), e.ts, &e.body);
        bytes.extend_from_slice(&line);
        prev = id;
        prev_hash = hash;
    }
    std::fs::write(&path, bytes).unwrap();
    path
}

/// [`rechain`] with the entries in the order `ids` gives.
fn reordered(log: &SessionLog, name: &str, ids: &[u64]) -> PathBuf {
    let order: Vec<_> = ids.iter().map(|&i| (EntryId(i), None)).collect();
    rechain(log, name, &order)
}

fn ids(range: std::ops::RangeInclusive<u64>) -> Vec<(EntryId, Option<EntryId>)> {
    range.map(|i| (EntryId(i), None)).collect()
}

/// The steer session with its lines changed by `damage` (which also sees the log as
/// it was written).
fn damaged(damage: impl FnOnce(&SessionLog, &mut Vec<String>)) -> (tempfile::TempDir, SessionLog) {
    let (dir, log) = testkit::steer_session();
    let mut lines = lines_of(&log.path);
    damage(&log, &mut lines);
    write_lines(&log.path, &lines);
    (dir, log)
}

/// The line (without its newline) of a label `name` on `target` (whose hash is
/// `hash`), written as entry `id`, a child of its target.
fn label_line(
    id: u64,
    target: EntryId,
    hash: &EntryHash,
    ts: chrono::DateTime<chrono::Utc>,
    name: &str,
) -> String {
    let body = Body::Record(Record::Label {
        target,
        name: name.into(),
    });
    let (line, _) = Entry::encode(EntryId(id), Some(target), Some(hash), ts, &body);
    String::from_utf8(line).unwrap().trim_end().to_string()
}

fn report_text(path: &Path) -> String {
    let r = check_file(path).unwrap();
    render(&r, Style::plain()).replace(&path.display().to_string(), "S")
}

fn kinds(path: &Path) -> Vec<(&'static str, Vec<EntryId>)> {
    check_file(path)
        .unwrap()
        .findings
        .into_iter()
        .map(|f| (f.kind, f.entries))
        .collect()
}

#[test]
fn clean_sessions_pass() {
    for (dir, log) in [
        testkit::steer_session(),
        testkit::branched_session(),
        testkit::compaction_session(),
    ] {
        let r = check_file(&log.path).unwrap();
        assert!(r.findings.is_empty(), "{}", render(&r, Style::plain()));
        drop(dir);
    }
    let (_dir, log) = testkit::branched_session();
    expect_test::expect![[r#"
        S: ok: 18 entries on 18 line(s), 2 branch(es); hash chain and ordering verified
    "#]]
    .assert_eq(&report_text(&log.path));
}

#[test]
fn an_edited_entry_is_a_hash_mismatch_on_its_line_only() {
    let (_dir, log) = damaged(|_, lines| {
        lines[3] = lines[3].replace("also check b", "also check c");
    });
    expect_test::expect![[r#"
        error   hash_mismatch          entry #3 (line 4): entry 3 fails its hash check (the line or its parent was altered)
        S: 1 error(s), 0 warning(s) in 17 line(s)
    "#]]
    .assert_eq(&report_text(&log.path));
}

#[test]
fn a_removed_entry_is_a_missing_parent_of_its_child() {
    let (_dir, log) = damaged(|_, lines| {
        lines.remove(5); // entry 5, the first dispatch
    });
    expect_test::expect![[r#"
        error   missing_parent         entry #6 (line 6): entry 6 names parent 5, which does not appear earlier in the file
        S: 1 error(s), 0 warning(s) in 16 line(s)
    "#]]
    .assert_eq(&report_text(&log.path));
}

#[test]
fn a_duplicated_tool_result_is_settled_twice() {
    let (_dir, log) = testkit::steer_session();
    // 8 is the result of call_1_1 (dispatched by 5); a copy of it as 100 follows it.
    let mut order = ids(1..=8);
    order.push((EntryId(8), Some(EntryId(100))));
    order.extend(ids(9..=16));
    let path = rechain(&log, "dup.jsonl", &order);
    assert_eq!(
        kinds(&path),
        [("settled_twice", vec![EntryId(5), EntryId(8), EntryId(100)])]
    );
    expect_test::expect![[r#"
        error   settled_twice          entries #5 #8 #100 (lines 6, 9, 10): call call_1_1 is settled twice: by 8 and again by 100
        S: 1 error(s), 0 warning(s) in 18 line(s)
    "#]]
    .assert_eq(&report_text(&path));
}

/// An entry of the steer session moved to just before another (re-chained with
/// valid hashes, so that only the order is wrong): each row is found as its kind,
/// named by its entries.
#[test]
fn moved_entries_are_found_out_of_order() {
    // (what moves, the entry moved, the entry it now precedes, the finding: its
    // kind, and the entry it names after the moved one)
    type Row = (&'static str, u64, u64, &'static str, u64);
    let rows: [Row; 4] = [
        (
            "result 8 (call_1_1) before its dispatch 5",
            8,
            5,
            "result_before_call",
            5,
        ),
        (
            "delivery 10 of steer 3 before the results 8, 9",
            10,
            7,
            "delivered_mid_step",
            5,
        ),
        (
            "delivery 10 while the step still streams",
            10,
            4,
            "delivered_mid_step",
            2,
        ),
        (
            "follow-up delivery 13 after the tools (before 11)",
            13,
            11,
            "follow_up_not_at_finish",
            4,
        ),
    ];
    let (_dir, log) = testkit::steer_session();
    for (i, (row, moved, before, kind, witness)) in rows.into_iter().enumerate() {
        let mut order: Vec<u64> = (1..=16).filter(|&e| e != moved).collect();
        let at = order.iter().position(|&e| e == before).unwrap();
        order.insert(at, moved);
        let path = reordered(&log, &format!("moved-{i}.jsonl"), &order);
        assert_eq!(
            kinds(&path),
            [(kind, vec![EntryId(moved), EntryId(witness)])],
            "{row}"
        );
    }
}

#[test]
fn an_entry_after_the_finish_is_found() {
    let (_dir, log) = testkit::steer_session();
    // A copy of step 15 after run_finished 16.
    let mut order = ids(1..=16);
    order.push((EntryId(15), Some(EntryId(17))));
    let path = rechain(&log, "after.jsonl", &order);
    let k = kinds(&path);
    assert!(
        k.contains(&("after_finish", vec![EntryId(16), EntryId(17)])),
        "{k:?}"
    );
}

#[test]
fn torn_malformed_unknown_and_duplicate_lines_are_reported_with_their_lines() {
    let (_dir, log) = testkit::steer_session();
    let mut lines = lines_of(&log.path);
    lines[7] = "{\"v\":1,\"id\":".into();
    let dup = lines[2].clone();
    lines.push(dup);
    let unknown = {
        let leaf = log.get(EntryId(16)).unwrap();
        let body = Body::Unknown {
            type_name: "from_the_future".into(),
            data: serde_json::value::RawValue::from_string("{}".into()).unwrap(),
        };
        let (line, _) = Entry::encode(EntryId(17), Some(leaf.id), Some(&leaf.hash), leaf.ts, &body);
        String::from_utf8(line).unwrap().trim_end().to_string()
    };
    lines.push(unknown);
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    text.push_str("{\"v\":1,\"id\":18");
    std::fs::write(&log.path, text).unwrap();
    expect_test::expect![[r#"
        error   duplicate_id           entry #2 (lines 3, 18): entry id 2 appears a second time
        error   malformed              line 8: malformed entry: the line has no trailing "hash" field
        error   missing_parent         entry #8 (line 9): entry 8 names parent 7, which does not appear earlier in the file
        warning unknown_type           entry #17 (line 19): type `from_the_future` is not known to this version (kept, not used)
        warning torn_tail              line 20: the last line has no newline: 14 byte(s) a crash left behind (the writer cuts them off, into a sidecar, when it next opens the file)
        S: 3 error(s), 2 warning(s) in 19 line(s)
    "#]].assert_eq(&report_text(&log.path));
}

#[test]
fn parent_links_that_loop_are_a_cycle() {
    let (_dir, log) = testkit::steer_session();
    let header = &log.entries[0];
    let mut bytes = std::fs::read(&log.path).unwrap();
    // 20 → 21 → 20, each line encoded against the other's (future) hash.
    let body = Body::Record(Record::Steer { text: "x".into() });
    let (_, h21) = Entry::encode(EntryId(21), Some(EntryId(20)), None, header.ts, &body);
    let (l20, _) = Entry::encode(EntryId(20), Some(EntryId(21)), Some(&h21), header.ts, &body);
    bytes.extend_from_slice(&l20);
    let (l21, _) = Entry::encode(EntryId(21), Some(EntryId(20)), None, header.ts, &body);
    bytes.extend_from_slice(&l21);
    std::fs::write(&log.path, bytes).unwrap();
    let k = kinds(&log.path);
    assert!(
        k.contains(&("cycle", vec![EntryId(20), EntryId(21)])),
        "{k:?}"
    );
    assert!(
        k.contains(&("child_before_parent", vec![EntryId(20), EntryId(21)])),
        "{k:?}"
    );
}

#[test]
fn the_one_pass_check_of_a_clean_session_agrees_with_the_exhaustive_one() {
    let (_dir, path, _) = testkit::synth(6_000, 21, Default::default());
    let bytes = std::fs::read(&path).unwrap();
    let fast = check_file(&path).unwrap();
    let slow = check_exhaustively(&path, &bytes);
    assert_eq!(fast.findings, vec![]);
    assert_eq!(slow.findings, vec![]);
    assert_eq!(
        (fast.lines, fast.entries, fast.branches),
        (slow.lines, slow.entries, slow.branches)
    );
    assert!(fast.branches > 1, "{}", fast.branches);
}

/// Two branches, one of whose leaves (entry 12, the end of the second run) has a
/// label hanging off it: the label is not a branch and does not hide one.
fn labelled_leaf_session() -> (tempfile::TempDir, SessionLog) {
    let (dir, log) = testkit::branched_session();
    let mut lines = lines_of(&log.path);
    let parent = log.get(EntryId(12)).unwrap();
    lines.push(label_line(18, parent.id, &parent.hash, parent.ts, "second"));
    write_lines(&log.path, &lines);
    let log = xcsh_log::read_session(&log.path).unwrap();
    (dir, log)
}

#[test]
fn a_label_on_a_leaf_is_not_a_branch_and_hides_none() {
    let (_dir, log) = labelled_leaf_session();
    let bytes = std::fs::read(&log.path).unwrap();
    let index = xcsh_log::index::index_of(&log, None).unwrap();
    let sessions = crate::summary::summarize_indexed(&log.path, index.data()).branches;
    let fast = check_file(&log.path).unwrap();
    let slow = check_exhaustively(&log.path, &bytes);
    assert_eq!(
        (fast.findings.len(), fast.branches, slow.branches, sessions),
        (0, 2, 2, 2)
    );
}

/// A steer after the second run's finish, on the leaf of its branch; a label on the
/// steer. The branch is still followed, so the steer is found.
#[test]
fn an_ordering_violation_under_a_label_is_found() {
    let (_dir, log) = testkit::branched_session();
    let path = rechain(&log, "late-steer.jsonl", &ids(1..=12));
    let log = xcsh_log::read_session(&path).unwrap();
    let mut lines = lines_of(&path);
    let last = log.get(EntryId(12)).unwrap();
    let (steer, steer_hash) = Entry::encode(
        EntryId(13),
        Some(EntryId(12)),
        Some(&last.hash),
        last.ts,
        &Body::Record(Record::Steer {
            text: "too late".into(),
        }),
    );
    lines.push(String::from_utf8(steer).unwrap().trim_end().to_string());
    lines.push(label_line(14, EntryId(13), &steer_hash, last.ts, "late"));
    write_lines(&path, &lines);
    assert_eq!(
        kinds(&path),
        vec![
            ("after_finish", vec![EntryId(12), EntryId(13)]),
            ("queued_outside_run", vec![EntryId(13)]),
        ]
    );
}

/// The lenient checker and the strict reader verify lines with the same `Chain`:
/// for the same broken log, the reader's error is the checker's finding of that
/// kind with the file and line in front, word for word.
#[test]
fn the_checker_words_an_integrity_error_as_the_reader_does() {
    type Damage = fn(&SessionLog, &mut Vec<String>);
    let rows: [(&str, &str, Damage); 6] = [
        ("an edited entry", "hash_mismatch", |_, lines| {
            lines[3] = lines[3].replace("also check b", "also check c");
        }),
        ("a removed entry", "missing_parent", |_, lines| {
            lines.remove(5);
        }),
        ("a duplicated line", "duplicate_id", |_, lines| {
            let dup = lines[2].clone();
            lines.insert(4, dup);
        }),
        ("a line without its hash", "malformed", |_, lines| {
            lines[7] = "{\"v\":1,\"id\":".into();
        }),
        ("an entry without a parent", "orphan", |log, lines| {
            let e = log.get(EntryId(6)).unwrap();
            let (line, _) = Entry::encode(e.id, None, None, e.ts, &e.body);
            lines[6] = String::from_utf8(line).unwrap().trim_end().to_string();
        }),
        (
            "a first line that is not JSON",
            "not_a_session",
            |_, lines| {
                lines[0] = "hello".into();
            },
        ),
    ];
    for (row, kind, damage) in rows {
        let (_dir, log) = damaged(damage);
        let reader = xcsh_log::read_session(&log.path).unwrap_err().to_string();
        let report = check_file(&log.path).unwrap();
        let first = report
            .findings
            .iter()
            .find(|f| f.kind == kind)
            .unwrap_or_else(|| panic!("{row}: no {kind} in {:?}", report.findings));
        let at = match kind {
            "not_a_session" => format!("{}: ", log.path.display()),
            _ => format!("{}:{}: ", log.path.display(), first.lines.last().unwrap()),
        };
        assert_eq!(reader, format!("{at}{}", first.message), "{row}");
    }
}

#[test]
fn an_empty_file_is_named_and_said_to_be_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.jsonl");
    std::fs::write(&path, "").unwrap();
    expect_test::expect![[r#"
        error   not_a_session          S: the file is empty (0 bytes): not a session log, which starts with its `session` header line
        S: 1 error(s), 0 warning(s) in 0 line(s)
    "#]]
    .assert_eq(&report_text(&path));
}
