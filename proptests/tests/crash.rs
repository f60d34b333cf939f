//! Crash safety of the session log: generated logs cut at every line boundary and at
//! a dense sample of byte offsets (every offset within the last two lines, a stride
//! elsewhere), and logs damaged as a crash or a power cut damages them (a line glued
//! to the next, invalid UTF-8, a zero-filled tail). Reopening with
//! `SessionWriter::open` keeps every complete line, repairs a torn tail into its
//! sidecar and reports it, or refuses with an error naming the line and changes
//! nothing; appending afterwards gives a log that reads and replays clean.
#![cfg(not(feature = "broken-steer"))]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use proptest::prelude::*;
use xcsh_journal::{Journal, Player, TimedLog};
use xcsh_log::{
    Entry, LogError, Record, SessionLog, SessionWriter, TornTail, entry_decision, read_session,
};
use xcsh_machine::{Decision, Effect, EntryId, Limits, Machine, Permissions, RunConfig};
use xcsh_proptests::{
    Script, branching_script, cases, check_invariants, play, scratch_dir, script,
};
use xcsh_runtime::{RunOptions, SessionTarget, Task, rebuild_machine, run_agent};

/// A played log: its bytes, its entries, and where each line ends (after its `\n`).
struct Original {
    bytes: Vec<u8>,
    entries: Vec<Entry>,
    ends: Vec<usize>,
}

fn original(s: &Script) -> Original {
    let played = play(s);
    let bytes = std::fs::read(&played.path).unwrap();
    let entries = read_session(&played.path).unwrap().entries;
    let ends = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    Original {
        bytes,
        entries,
        ends,
    }
}

/// Cut points: every line boundary, every offset within the last two lines and
/// one byte either side of each boundary, and every 127th offset elsewhere.
fn offsets(o: &Original) -> Vec<usize> {
    let len = o.bytes.len();
    let tail_start = o.ends.len().checked_sub(3).map_or(0, |i| o.ends[i]);
    let mut cuts: std::collections::BTreeSet<usize> = (0..=len).step_by(127).collect();
    cuts.extend(tail_start..=len);
    for &end in &o.ends {
        cuts.extend([end.saturating_sub(1), end, (end + 1).min(len)]);
    }
    cuts.into_iter().collect()
}

fn sidecar(path: &Path, offset: usize) -> PathBuf {
    PathBuf::from(format!("{}.torn-{offset}", path.display()))
}

fn t(n: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + n, 0).unwrap()
}

/// The decisions the machine makes on the path to `leaf` that the log does not
/// hold: a crash between an input's line and its decisions' lines leaves them out.
fn owed_decisions(log: &SessionLog, leaf: EntryId) -> Vec<Decision> {
    let path = xcsh_log::Dag::from_log(log).path_to_root(leaf).unwrap();
    let mut machine = Machine::new();
    let mut owed = std::collections::VecDeque::new();
    for id in path {
        let entry = log.get(id).unwrap();
        for input in xcsh_log::RecordedInput::cloned(entry).into_iter().flatten() {
            for effect in machine.handle(input) {
                if let Effect::Record(d) = effect {
                    owed.push_back(d);
                }
            }
        }
        if entry_decision(entry).is_some() {
            owed.pop_front();
        }
    }
    owed.into()
}

/// Reopens a cut log as the runtime does (repair, rebuild, re-record the decisions a
/// cut left out, recover an unfinished run), through the journal's `Player`, which can then
/// append many runs quickly (the derived-index test grows logs with it).
fn resume(path: &Path) -> Result<Player, String> {
    let (mut writer, log) = SessionWriter::open(path).map_err(|e| e.to_string())?;
    let leaf = log.leaf();
    let (machine, _) = rebuild_machine(&log, leaf).map_err(|e| e.to_string())?;
    let mut leaf = leaf;
    for d in owed_decisions(&log, leaf) {
        leaf = writer
            .append(leaf, t(1), &xcsh_log::Body::Decision(d))
            .map_err(|e| e.to_string())?
            .0;
    }
    let mut rec = Player::new(Journal::new(machine, leaf), TimedLog::new(writer, t(2)));
    if rec.machine().is_running() {
        rec.record(Record::Recovered {
            note: "the previous run ended without finishing".into(),
        })
        .map_err(|e| e.to_string())?;
    }
    Ok(rec)
}

/// Runs one prompt with `text` to a final answer.
fn one_more_run(rec: &mut Player, text: &str) -> Result<(), String> {
    let config = RunConfig {
        limits: Limits::default(),
        tools: vec!["echo".into()],
        mutating: Vec::new(),
        permissions: Permissions::Yolo,
        estimate_bytes_per_token: 0,
        sandbox: None,
    };
    rec.record(Record::UserMessage {
        text: text.into(),
        config,
    })
    .map_err(|e| e.to_string())?;
    let step = rec.machine().run().steps;
    rec.record(Record::Step(Box::new(xcsh_log::StepRecord {
        step: xcsh_machine::StepNo(step),
        events: vec![xcsh_log::TimedEvent {
            ms: 1,
            event: xcsh_machine::StreamEvent::TextDelta {
                text: "done".into(),
            },
        }],
        outcome: xcsh_machine::StepOutcome::Completed,
        message: Default::default(),
    })))
    .map_err(|e| e.to_string())?;
    Ok(())
}

/// The options of `xcsh run --continue` on the session at `path`: one prompt, which
/// the faux provider answers with `done`, under `--permissions yolo`.
fn continuing(path: &Path) -> Result<RunOptions, String> {
    let session = SessionTarget::Existing {
        path: path.to_path_buf(),
        at: None,
    };
    let provider = xcsh_providers::faux::FauxProvider::from_script("t", r#"{"text":"done"}"#)
        .map_err(|(line, e)| format!("faux script line {line}: {e}"))?;
    Ok(RunOptions::new(
        session,
        Task::Prompt("after the crash".into()),
        Arc::new(provider),
        Arc::new(xcsh_tools::testing::TestTools),
    ))
}

/// Continues a session as `xcsh run --continue` does: `run_agent` on the existing
/// file (repair, rebuild, re-record what a cut left out, recover), one prompt that
/// the faux provider answers; returns the log as read back.
fn continue_with_the_runtime(path: &Path) -> Result<SessionLog, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let result = runtime.block_on(async {
        let handle = run_agent(continuing(path)?).map_err(|e| e.to_string())?;
        handle.result().await.map_err(|e| e.to_string())
    })?;
    if (&result.stop_reason, result.final_text.as_str())
        != (&xcsh_machine::StopReason::Completed, "done")
    {
        return Err(format!("the continued run ended {result:?}"));
    }
    read_session(path).map_err(|e| e.to_string())
}

/// A log that reads clean (no torn tail), replays clean and keeps the invariants.
fn valid(log: &SessionLog) -> Result<(), String> {
    if log.torn_tail.is_some() {
        return Err(format!("a torn tail after appending: {:?}", log.torn_tail));
    }
    xcsh_replay::replay_branch(log, log.leaf()).map_err(|e| format!("{e}: {e:?}"))?;
    check_invariants(log)
}

fn crash_config() -> ProptestConfig {
    ProptestConfig {
        cases: (cases() / 16).max(8),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(crash_config())]

    /// Cases: `PROPTEST_CASES`/16 logs (16 by default), each cut at every line
    /// boundary and a dense sample of byte offsets (see `offsets`).
    #[test]
    fn a_log_cut_at_any_byte_reopens_with_every_complete_line_and_the_torn_tail_repaired(s in script()) {
        let o = original(&s);
        let dir = scratch_dir();
        for cut in offsets(&o) {
            let path = dir.path().join(format!("cut-{cut}.jsonl"));
            std::fs::write(&path, &o.bytes[..cut]).unwrap();
            let complete = o.ends.iter().filter(|&&e| e <= cut).count();
            let boundary = if complete == 0 { 0 } else { o.ends[complete - 1] };
            let opened = SessionWriter::open(&path);
            if complete == 0 {
                // Not even the header is whole: nothing to keep, nothing changed.
                prop_assert!(matches!(opened, Err(LogError::NotASession { .. })), "cut {}: {:?}", cut, opened.map(|(_, l)| l));
                prop_assert_eq!(std::fs::read(&path).unwrap(), &o.bytes[..cut]);
                continue;
            }
            let (writer, log) = opened.map_err(|e| TestCaseError::fail(format!("cut {cut}: {e}")))?;
            drop(writer);
            prop_assert_eq!(&log.entries, &o.entries[..complete].to_vec(), "cut {}", cut);
            let torn = (cut > boundary).then(|| TornTail {
                offset: boundary as u64,
                len: (cut - boundary) as u64,
                sidecar: Some(sidecar(&path, boundary)),
            });
            prop_assert_eq!(&log.torn_tail, &torn, "cut {}", cut);
            if cut > boundary {
                prop_assert_eq!(std::fs::read(sidecar(&path, boundary)).unwrap(), &o.bytes[boundary..cut]);
            }
            prop_assert_eq!(std::fs::read(&path).unwrap(), &o.bytes[..boundary], "cut {}", cut);
            if cut == boundary {
                // Continue there with the runtime: the log reads, replays and keeps
                // the invariants.
                let again = continue_with_the_runtime(&path).map_err(|e| TestCaseError::fail(format!("cut {cut}: {e}")))?;
                prop_assert_eq!(&again.entries[..complete], &o.entries[..complete], "cut {}", cut);
                valid(&again).map_err(|e| TestCaseError::fail(format!("cut {cut}: {e}")))?;
            } else {
                // The repaired file is the file cut at `boundary` (resumed above, at
                // that boundary's own cut): it takes an append and reads clean.
                let (mut writer, log) = SessionWriter::open(&path).map_err(|e| TestCaseError::fail(format!("cut {cut}: reopening the repaired file: {e}")))?;
                prop_assert_eq!(&log.torn_tail, &None);
                let label = xcsh_log::Body::Record(Record::Label { target: log.leaf(), name: "after".into() });
                let (id, _) = writer.append(log.leaf(), t(3), &label).map_err(|e| TestCaseError::fail(e.to_string()))?;
                drop(writer);
                let again = read_session(&path).map_err(|e| TestCaseError::fail(format!("cut {cut}: {e}")))?;
                prop_assert_eq!(&again.entries[..complete], &o.entries[..complete], "cut {}", cut);
                prop_assert_eq!((again.entries.len(), again.entries[complete].id, &again.torn_tail), (complete + 1, id, &None));
            }
            for name in [path.clone(), sidecar(&path, boundary)] {
                let _ = std::fs::remove_file(name);
            }
        }
    }
}

fn generated(seed: u64) -> Original {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::new_with_rng(
        ProptestConfig::default(),
        proptest::test_runner::TestRng::from_seed(
            proptest::test_runner::RngAlgorithm::ChaCha,
            &[seed as u8; 32],
        ),
    );
    // A session long enough to have several runs.
    loop {
        let s = branching_script().new_tree(&mut runner).unwrap().current();
        let o = original(&s);
        if o.entries.len() >= 20 {
            return o;
        }
    }
}

/// Opens `bytes` as a session file; returns the error and checks that the file and
/// its directory are as they were (no repair, no sidecar).
fn refused(bytes: &[u8]) -> String {
    let dir = scratch_dir();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let err = match SessionWriter::open(&path) {
        Ok((_, log)) => panic!("opened a damaged log: {:?}", log.torn_tail),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file is unchanged"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".torn-"))
        .collect();
    assert_eq!(names, Vec::<String>::new(), "no sidecar");
    let read = read_session(&path).unwrap_err().to_string();
    assert_eq!(read, err, "reading reports what opening reports");
    err.replace(&path.display().to_string(), "PATH")
}

#[test]
fn a_line_glued_to_the_next_is_refused_naming_the_line_and_nothing_is_changed() {
    for seed in 0..4 {
        let o = generated(seed);
        for k in 0..o.ends.len() - 1 {
            let mut bytes = o.bytes.clone();
            bytes.remove(o.ends[k] - 1);
            let err = refused(&bytes);
            let line = k + 1;
            assert!(
                err.starts_with(&format!(
                    "PATH:{line}: malformed entry: not valid JSON for an entry: trailing characters at line 1 column "
                )),
                "glued line {line}: {err}"
            );
        }
    }
}

#[test]
fn a_line_with_invalid_utf8_is_refused_naming_the_line_and_nothing_is_changed() {
    for seed in 0..4 {
        let o = generated(seed);
        for k in 0..o.ends.len() {
            let start = if k == 0 { 0 } else { o.ends[k - 1] };
            let at = start + 20;
            let mut bytes = o.bytes.clone();
            bytes[at] = 0xff;
            let err = refused(&bytes);
            assert_eq!(
                err,
                format!(
                    "PATH:{}: malformed entry: not valid JSON for an entry: the line is not valid UTF-8 (invalid utf-8 sequence of 1 bytes from index 20)",
                    k + 1
                )
            );
        }
    }
}

#[test]
fn invalid_utf8_in_a_torn_last_line_is_repaired_like_any_torn_tail() {
    let o = generated(7);
    let dir = scratch_dir();
    let path = dir.path().join("s.jsonl");
    let mut bytes = o.bytes.clone();
    bytes.extend_from_slice(b"{\"v\":1,\"id\":\xff\xfe");
    std::fs::write(&path, &bytes).unwrap();
    let (w, log) = SessionWriter::open(&path).unwrap();
    drop(w);
    assert_eq!(log.entries, o.entries);
    assert_eq!(
        log.torn_tail,
        Some(TornTail {
            offset: o.bytes.len() as u64,
            len: 14,
            sidecar: Some(sidecar(&path, o.bytes.len())),
        })
    );
    assert_eq!(
        std::fs::read(sidecar(&path, o.bytes.len())).unwrap(),
        &bytes[o.bytes.len()..]
    );
    valid(&continue_with_the_runtime(&path).unwrap()).unwrap();
}

/// A power cut can leave the end of the file zero-filled (the size was written, the
/// data blocks were not): zeros from some offset to the end, or zeros appended.
#[test]
fn a_zero_filled_tail_is_repaired_as_torn_and_no_complete_line_is_lost() {
    for seed in 0..4 {
        let o = generated(seed);
        let dir = scratch_dir();
        let len = o.bytes.len();
        let tail = len - o.ends[o.ends.len() - 3];
        let mut cases: Vec<(usize, usize)> = (1..=tail + 1).map(|zeroed| (len, zeroed)).collect();
        cases.extend([(len + 4096, 4096), (len + 1, 1)]);
        let mut resumed = std::collections::BTreeSet::new();
        for (n, (size, zeroed)) in cases.into_iter().enumerate() {
            let path = dir.path().join(format!("s{n}.jsonl"));
            let mut bytes = o.bytes.clone();
            bytes.resize(size, 0);
            let from = size - zeroed;
            bytes[from..].fill(0);
            std::fs::write(&path, &bytes).unwrap();
            let complete = o.ends.iter().filter(|&&e| e <= from).count();
            let boundary = o.ends[complete - 1];
            let (w, log) = SessionWriter::open(&path).unwrap();
            drop(w);
            assert_eq!(log.entries, o.entries[..complete], "zeroed from {from}");
            assert_eq!(
                log.torn_tail,
                Some(TornTail {
                    offset: boundary as u64,
                    len: (size - boundary) as u64,
                    sidecar: Some(sidecar(&path, boundary)),
                }),
                "zeroed from {from}"
            );
            assert_eq!(
                std::fs::read(sidecar(&path, boundary)).unwrap(),
                &bytes[boundary..]
            );
            // The repaired file is the log cut at `boundary`: resumed once per
            // boundary (the cases of one boundary repair to the same bytes).
            if resumed.insert(boundary) {
                valid(&continue_with_the_runtime(&path).unwrap()).unwrap();
            }
        }
    }
}

/// Zeros inside the file followed by intact lines make a complete line that is not
/// an entry: refused, naming it, nothing changed.
#[test]
fn a_zero_filled_block_before_intact_lines_is_refused_naming_the_line() {
    let o = generated(3);
    let k = o.ends.len() / 2;
    let (start, end) = (o.ends[k - 1], o.ends[k] - 1);
    let mut bytes = o.bytes.clone();
    bytes[start..end].fill(0);
    assert_eq!(
        refused(&bytes),
        format!(
            "PATH:{}: malformed entry: not valid JSON for an entry: the line is {} NUL bytes (a write lost in a power cut?)",
            k + 1,
            end - start
        )
    );
    let mut partly = o.bytes.clone();
    partly[start + 10..end].fill(0);
    let err = refused(&partly);
    assert!(
        err.starts_with(&format!("PATH:{}: malformed entry: ", k + 1)),
        "{err}"
    );
}

/// A kill between two appends leaves an input's line without the lines of its
/// decisions. `run_agent` reopening such a log re-records the decisions the machine
/// owes (they follow from the recorded inputs) before it recovers the unfinished run,
/// so the log replays (it did not: the regression test of that bug).
#[test]
fn the_runtime_resuming_a_log_cut_between_an_input_and_its_decisions_leaves_a_log_that_replays() {
    let o = generated(1);
    let dir = scratch_dir();
    let mut failures = Vec::new();
    for (k, entry) in o.entries.iter().enumerate() {
        let next_is_decision = o
            .entries
            .get(k + 1)
            .is_some_and(|e| entry_decision(e).is_some());
        if !entry.body.is_input() || !next_is_decision {
            continue;
        }
        let path = dir.path().join(format!("cut-{k}.jsonl"));
        std::fs::write(&path, &o.bytes[..o.ends[k]]).unwrap();
        let checked = continue_with_the_runtime(&path).and_then(|log| {
            if log.entries[..=k] != o.entries[..=k] {
                return Err("lost a complete line".into());
            }
            valid(&log)
        });
        if let Err(e) = checked {
            failures.push(format!(
                "cut after line {} ({}): {e}",
                k + 1,
                entry.type_name()
            ));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

/// The runtime resumes at the leaf through `SessionWriter::open_branch`, which trusts
/// the derived index beside the log (`<log>.idx`, written for logs of 1 MiB or more)
/// as far as it still matches the log. A log cut behind its index's back (a crash
/// that lost lines the index covers), then possibly grown again by other lines, must
/// open on exactly the branch, leaf and torn tail that `SessionWriter::open` finds.
#[test]
fn a_log_cut_behind_its_derived_index_opens_on_the_same_branch_as_without_it() {
    use xcsh_journal::synth::{SynthOptions, generate};
    use xcsh_log::index::{
        INDEX_MIN_BYTES, IndexSource, index_path, open_existing_index, open_index,
    };
    use xcsh_log::{BranchEntry, Dag};

    let dir = scratch_dir();
    let big = dir.path().join("big.jsonl");
    generate(
        &big,
        SynthOptions {
            entries: 5000,
            seed: 11,
        },
    )
    .unwrap();
    let bytes = std::fs::read(&big).unwrap();
    assert!(
        bytes.len() as u64 >= INDEX_MIN_BYTES,
        "{} bytes",
        bytes.len()
    );
    open_index(&big).unwrap();
    let index = std::fs::read(index_path(&big)).expect("the index was written");
    assert_eq!(
        open_existing_index(&big).unwrap().map(|i| i.source),
        Some(IndexSource::Valid),
        "the index of the whole log is used"
    );
    let ends: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    let n = ends.len();
    let mut cuts: Vec<usize> = ends[n - 20..].to_vec();
    cuts.extend((ends[n - 3]..bytes.len()).step_by(397));
    cuts.extend([ends[n / 2], ends[n / 2] + 5, ends[10]]);
    for (k, cut) in cuts.into_iter().enumerate() {
        for regrow in [false, true] {
            let what = format!("cut at {cut} of {}, regrown: {regrow}", bytes.len());
            let path = dir.path().join(format!("cut-{k}-{regrow}.jsonl"));
            let reference = dir.path().join(format!("ref-{k}-{regrow}.jsonl"));
            std::fs::write(&path, &bytes[..cut]).unwrap();
            if regrow {
                // Runs after the crash grow the file past its old length: the index
                // still covers that many bytes, but other lines.
                let mut rec = resume(&path).unwrap();
                while std::fs::metadata(&path).unwrap().len() <= bytes.len() as u64 {
                    one_more_run(&mut rec, &"after the crash ".repeat(200)).unwrap();
                }
            }
            std::fs::copy(&path, &reference).unwrap();
            std::fs::write(index_path(&path), &index).unwrap();
            let source = open_existing_index(&path).unwrap().map(|i| i.source);
            if cut == bytes.len() {
                // Nothing was cut: the index is used, extended by what was appended.
                let extended = matches!(source, Some(IndexSource::Extended { .. }));
                assert_eq!(
                    (source == Some(IndexSource::Valid), extended),
                    (!regrow, regrow),
                    "{what}: {source:?}"
                );
            } else {
                assert_eq!(source, None, "{what}: the stale index is not used");
            }
            let want = SessionWriter::open(&reference);
            let mut branch = Vec::new();
            let got = SessionWriter::open_branch(&path, &mut |e| branch.push(e));
            let (want, got) = match (want, got) {
                (Err(w), Err(g)) => {
                    let shown = |e: LogError, p: &Path| {
                        e.to_string().replace(&p.display().to_string(), "PATH")
                    };
                    assert_eq!(shown(g, &path), shown(w, &reference), "{what}");
                    continue;
                }
                (Ok((_, want)), Ok((_, got))) => (want, got),
                (w, g) => panic!(
                    "{what}: open gives {:?}, open_branch gives {:?}",
                    w.map(|(_, l)| l.leaf()),
                    g.map(|(_, i)| i.leaf)
                ),
            };
            assert_eq!(got.leaf, want.leaf(), "{what}");
            assert_eq!(
                got.torn_tail.as_ref().map(|t| (t.offset, t.len)),
                want.torn_tail.as_ref().map(|t| (t.offset, t.len)),
                "{what}"
            );
            let path_ids = Dag::from_log(&want).path_to_root(want.leaf()).unwrap();
            let ids: Vec<EntryId> = branch
                .iter()
                .map(|e| match e {
                    BranchEntry::Decoded(entry) => entry.id,
                    BranchEntry::Decision(id) | BranchEntry::Other(id) => *id,
                    // Only a resume that replays a long branch saves a snapshot.
                    BranchEntry::Snapshot { at, .. } => {
                        panic!("{what}: no snapshot was saved, yet one is given at {at}")
                    }
                })
                .collect();
            assert_eq!(ids, path_ids, "{what}");
            for e in &branch {
                match e {
                    BranchEntry::Decoded(entry) => {
                        assert_eq!(Some(entry), want.get(entry.id), "{what}")
                    }
                    BranchEntry::Decision(id) => assert!(
                        want.get(*id).and_then(entry_decision).is_some(),
                        "{what}: {id} is a decision"
                    ),
                    BranchEntry::Other(id) => assert!(
                        want.get(*id)
                            .is_some_and(|x| !x.body.is_input() && entry_decision(x).is_none()),
                        "{what}: {id} is structure"
                    ),
                    BranchEntry::Snapshot { .. } => unreachable!("refused above"),
                }
            }
        }
    }
}

/// A crash mid-append leaves a torn last line; the next run (`run_agent` on the
/// session, as `--continue` does) repairs it, says so in a notice naming the bytes,
/// the offset and the sidecar, and leaves a log that replays.
#[test]
fn the_runtime_reports_the_repair_of_a_torn_tail_and_the_resumed_log_replays() {
    use xcsh_runtime::RunEvent;
    let o = generated(2);
    let dir = scratch_dir();
    let path = dir.path().join("s.jsonl");
    let torn = b"{\"v\":1,\"id\":999,\"parent\":3,\"ts\":\"2026-";
    let mut bytes = o.bytes.clone();
    bytes.extend_from_slice(torn);
    std::fs::write(&path, &bytes).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (result, notices) = runtime.block_on(async {
        let mut handle = run_agent(continuing(&path).unwrap()).unwrap();
        let mut notices = Vec::new();
        while let Some(event) = handle.events.recv().await {
            if let RunEvent::Notice { message } = event {
                notices.push(message);
            }
        }
        (handle.result().await, notices)
    });
    let result = result.unwrap();
    assert_eq!(
        (result.stop_reason, result.final_text.as_str()),
        (xcsh_machine::StopReason::Completed, "done")
    );
    let offset = o.bytes.len();
    assert_eq!(
        notices.first(),
        Some(&format!(
            "{}: repaired a torn last line: {} byte(s) at offset {offset} were cut off and kept in {}",
            path.display(),
            torn.len(),
            sidecar(&path, offset).display()
        ))
    );
    assert_eq!(std::fs::read(sidecar(&path, offset)).unwrap(), torn);
    let log = read_session(&path).unwrap();
    assert_eq!(log.entries[..o.entries.len()], o.entries);
    valid(&log).unwrap();
}
