//! Fixtures shared by the log's tests: sample headers, bodies and logs, and damaged
//! copies of a log.

use std::path::Path;

use chrono::{DateTime, Utc};

use super::SessionWriter;
use crate::{Body, Entry, Record, SessionHeader, StepRecord, TimedEvent, TornTail};

/// 40 damaged copies of a log given as its lines (each with its newline): in
/// turn a flipped byte, a removed line, a malformed line, a line written twice
/// and two lines swapped, at a line after the header drawn from `seed`. Yields
/// (case, line, bytes).
pub fn damaged_copies(lines: &[Vec<u8>], seed: u64) -> Vec<(usize, usize, Vec<u8>)> {
    let mut rng = xcsh_journal::synth::Rng::new(seed);
    (0..40)
        .map(|case| {
            let mut damaged = lines.to_vec();
            let k = 1 + (rng.next_u64() % (lines.len() as u64 - 1)) as usize;
            match case % 5 {
                0 => damaged[k][30] ^= 1,
                1 => {
                    damaged.remove(k);
                }
                2 => damaged[k] = b"{\"v\":1}\n".to_vec(),
                3 => {
                    let again = damaged[k].clone();
                    damaged.insert(k + 7, again);
                }
                _ => damaged.swap(k, k - 1),
            }
            (case, k, damaged.concat())
        })
        .collect()
}
use xcsh_machine::{
    Assembled, Decision, EntryId, FinishReason, Limits, RunConfig, RunEnd, StepNo, StepOutcome,
    StopReason, StreamEvent, Usage,
};

/// A new directory, and the path of a session file `s.jsonl` in it (not created).
pub fn scratch() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    (dir, path)
}

/// 2026-11-30T03:00:0n.125Z
pub fn ts(n: u32) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&format!("2026-11-30T03:00:{n:02}.125Z"))
        .unwrap()
        .with_timezone(&Utc)
}

pub fn header() -> SessionHeader {
    SessionHeader::new("s-1", "/work")
}

/// A generated session of 2,000 entries in `dir`, and its bytes.
pub fn generated(dir: &Path) -> (std::path::PathBuf, Vec<u8>) {
    let path = dir.join("big.jsonl");
    let options = xcsh_journal::synth::SynthOptions {
        entries: 2_000,
        seed: 11,
    };
    xcsh_journal::synth::generate(&path, options).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

pub fn config() -> RunConfig {
    RunConfig {
        limits: Limits::default(),
        tools: vec!["echo".into()],
        mutating: Vec::new(),
        permissions: xcsh_machine::Permissions::Yolo,
        estimate_bytes_per_token: 0,
        sandbox: None,
    }
}

/// The bodies of entries 1..=4 of [`write_sample`].
pub fn sample_bodies() -> Vec<Body> {
    let usage = Usage {
        input_tokens: 10,
        output_tokens: 1,
        ..Usage::default()
    };
    vec![
        Body::Record(Record::UserMessage {
            text: "hi".into(),
            config: config(),
        }),
        Body::Record(Record::Step(Box::new(StepRecord {
            step: StepNo(1),
            events: vec![
                TimedEvent {
                    ms: 5,
                    event: StreamEvent::TextDelta {
                        text: "hello".into(),
                    },
                },
                TimedEvent {
                    ms: 6,
                    event: StreamEvent::Finish {
                        reason: FinishReason::Stop,
                    },
                },
            ],
            outcome: StepOutcome::Completed,
            message: Assembled {
                text: "hello".into(),
                usage,
                finish: Some(FinishReason::Stop),
                ..Assembled::default()
            },
        }))),
        Body::Record(Record::Label {
            target: EntryId(2),
            name: "greeting".into(),
        }),
        Body::Decision(Decision::RunFinished(RunEnd {
            reason: StopReason::Completed,
            steps: 1,
            usage,
            undelivered: vec![],
        })),
    ]
}

/// Parents of entries 1..=4 of [`write_sample`] (the label hangs off the step).
pub const SAMPLE_PARENTS: [u64; 4] = [0, 1, 2, 2];

/// The torn tail of `len` bytes at `offset`, copied to `sidecar` if repaired.
pub fn torn(offset: usize, len: usize, sidecar: Option<&Path>) -> Option<TornTail> {
    Some(TornTail {
        offset: offset as u64,
        len: len as u64,
        sidecar: sidecar.map(Path::to_path_buf),
    })
}

/// Appends `tail` (a torn or damaged end) to the file at `path`; returns the file's
/// bytes before and after.
pub fn append_tail(path: &Path, tail: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let full = std::fs::read(path).unwrap();
    let mut damaged = full.clone();
    damaged.extend_from_slice(tail);
    std::fs::write(path, &damaged).unwrap();
    (full, damaged)
}

/// Appends `body` under entry `parent` at `ts(n)`; returns the entry as the reader
/// should decode it.
pub fn append_entry(w: &mut SessionWriter, parent: u64, n: u32, body: Body) -> Entry {
    let (id, hash) = w.append(EntryId(parent), ts(n), &body).unwrap();
    Entry {
        v: 1,
        id,
        parent: Some(EntryId(parent)),
        ts: ts(n),
        body,
        hash,
    }
}

/// Creates a session at `path` with five entries (header, prompt, step, label,
/// run_finished) and returns them as the reader should decode them.
pub fn write_sample(path: &Path) -> Vec<Entry> {
    let mut w = SessionWriter::create(path, header(), ts(0)).unwrap();
    let mut entries = vec![Entry {
        v: 1,
        id: EntryId(0),
        parent: None,
        ts: ts(0),
        body: Body::Record(Record::Session(Box::new(header()))),
        hash: w.hash_of(EntryId(0)).unwrap(),
    }];
    for ((n, body), parent) in (1..).zip(sample_bodies()).zip(SAMPLE_PARENTS) {
        entries.push(append_entry(&mut w, parent, n, body));
    }
    w.sync().unwrap();
    entries
}
