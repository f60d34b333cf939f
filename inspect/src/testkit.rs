//! Test helpers: real session logs made with the core's journal (`Player`) from scripted
//! inputs, and `retime`, which rewrites a log with deterministic times (and session
//! id and cwd) so that snapshots hold across regenerations of a fixture.

use std::path::{Path, PathBuf};

use chrono::{DateTime, TimeDelta, Utc};
use xcsh_journal::{Action, Journal, Player, TimedLog};
use xcsh_log::machine_at::rebuild_machine;
use xcsh_log::{
    Body, Entry, EntryHash, Record, SessionHeader, SessionLog, SessionWriter, StepRecord,
    TimedEvent, ToolResultRecord, read_session,
};
use xcsh_machine::{
    Assembled, CallId, Decision, EntryId, FinishReason, Limits, Permissions, RunConfig, StepNo,
    StepOutcome, StreamEvent, ToolCall, ToolOutcome, ToolStatus, Usage,
};

pub fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

pub fn config(max_tokens: u64) -> RunConfig {
    RunConfig {
        limits: Limits {
            max_tokens,
            ..Limits::default()
        },
        tools: vec!["echo".into(), "sleep".into()],
        mutating: Vec::new(),
        permissions: Permissions::Yolo,
        estimate_bytes_per_token: 0,
        sandbox: None,
    }
}

/// Builds a session through a real machine and writer.
pub struct Kit {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
    rec: Option<Player>,
    /// The calls the last record call started, if it started any.
    pub calls: Vec<ToolCall>,
}

impl Kit {
    pub fn new(name: &str) -> Kit {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("{name}.jsonl"));
        let header = SessionHeader {
            session_id: "test".into(),
            cwd: "/work".into(),
            forked_from: None,
        };
        let writer = SessionWriter::create(&path, header, t0()).unwrap();
        let rec = Player::new(
            Journal::new(xcsh_machine::Machine::new(), EntryId(0)),
            TimedLog::new(writer, t0()),
        );
        Kit {
            dir,
            path,
            rec: Some(rec),
            calls: Vec::new(),
        }
    }

    fn rec(&mut self) -> &mut Player {
        self.rec.as_mut().unwrap()
    }

    pub fn leaf(&self) -> EntryId {
        self.rec.as_ref().unwrap().leaf()
    }

    pub fn record(&mut self, record: Record) -> Vec<Action> {
        let actions = self.rec().record(record).unwrap();
        let calls: Vec<ToolCall> = actions
            .iter()
            .filter_map(|e| match e {
                Action::StartTool { call, .. } => Some(call.clone()),
                _ => None,
            })
            .collect();
        if !calls.is_empty() {
            self.calls = calls;
        }
        actions
    }

    pub fn prompt(&mut self, text: &str) {
        self.prompt_with(text, config(400_000));
    }

    pub fn prompt_with(&mut self, text: &str, config: RunConfig) {
        self.record(Record::UserMessage {
            text: text.into(),
            config,
        });
    }

    pub fn steer(&mut self, text: &str) {
        self.record(Record::Steer { text: text.into() });
    }

    pub fn follow_up(&mut self, text: &str) {
        self.record(Record::FollowUp { text: text.into() });
    }

    /// Step `n` streams `text` and asks for `calls` (name, arguments).
    pub fn step(&mut self, n: u32, text: &str, calls: &[(&str, &str)]) {
        self.step_full(step_record(
            n,
            "",
            text,
            calls,
            100 * u64::from(n),
            StepOutcome::Completed,
        ));
    }

    /// Records `step` (a [`step_record`]), forgetting the calls of the one before.
    pub fn step_full(&mut self, step: Record) {
        self.calls.clear();
        self.record(step);
    }

    /// Settles every call the last step dispatched with `ok` and its arguments echoed.
    pub fn settle_all(&mut self) {
        for call in std::mem::take(&mut self.calls) {
            self.settle(&call.id.0, &call.name, ToolStatus::Ok, &call.arguments);
        }
    }

    pub fn settle(&mut self, id: &str, name: &str, status: ToolStatus, content: &str) {
        self.record(Record::ToolResult(ToolResultRecord {
            call_id: CallId(id.into()),
            name: name.into(),
            outcome: ToolOutcome {
                status,
                content: content.into(),
            },
            duration_ms: 7,
            changes: Vec::new(),
        }));
    }

    /// Continues on a new branch from `at` (a settled boundary), as `--at` does.
    pub fn branch_at(&mut self, at: EntryId) {
        let rec = self.rec.take().unwrap();
        drop(rec);
        let (mut writer, log) = SessionWriter::open(&self.path).unwrap();
        let (machine, boundary) = rebuild_machine(&log, at).unwrap();
        assert_eq!(boundary, Some(at), "branch at a settled boundary");
        let from_leaf = log.leaf();
        let ts = log.entries.last().unwrap().ts + TimeDelta::milliseconds(1);
        let (id, _) = writer
            .append(at, ts, &Body::Record(Record::Branch { from_leaf }))
            .unwrap();
        self.rec = Some(Player::new(
            Journal::new(machine, id),
            TimedLog::new(writer, ts),
        ));
    }

    /// Appends a raw body after the leaf without applying it.
    pub fn append_raw(&mut self, parent: EntryId, body: Body) -> EntryId {
        let rec = self.rec();
        let ts = t0() + TimeDelta::seconds(1);
        rec.log.writer.append(parent, ts, &body).unwrap().0
    }

    /// Ends writing; returns the log with deterministic times.
    pub fn finish(mut self) -> (tempfile::TempDir, SessionLog) {
        drop(self.rec.take());
        let out = self.dir.path().join("retimed.jsonl");
        retime(&self.path, &out);
        std::fs::rename(&out, &self.path).unwrap();
        let log = read_session(&self.path).unwrap();
        (self.dir, log)
    }
}

pub fn step_record(
    n: u32,
    reasoning: &str,
    text: &str,
    calls: &[(&str, &str)],
    input_tokens: u64,
    outcome: StepOutcome,
) -> Record {
    let mut events = Vec::new();
    let mut ev = |event| events.push(TimedEvent { ms: 0, event });
    if !reasoning.is_empty() {
        ev(StreamEvent::ReasoningDelta {
            text: reasoning.into(),
        });
    }
    for chunk in text.as_bytes().chunks(12) {
        ev(StreamEvent::TextDelta {
            text: String::from_utf8_lossy(chunk).into_owned(),
        });
    }
    for (i, (name, args)) in calls.iter().enumerate() {
        let index = u32::try_from(i).unwrap();
        ev(StreamEvent::ToolCallStart {
            index,
            id: CallId(format!("call_{n}_{}", i + 1)),
            name: (*name).into(),
        });
        ev(StreamEvent::ToolCallDelta {
            index,
            arguments: (*args).into(),
        });
        ev(StreamEvent::ToolCallEnd { index });
    }
    let usage = Usage {
        input_tokens,
        output_tokens: 10,
        cache_read_tokens: if n > 1 { 50 } else { 0 },
        cache_write_tokens: 0,
        estimated: false,
    };
    if matches!(outcome, StepOutcome::Completed) {
        ev(StreamEvent::Usage { usage });
        ev(StreamEvent::Finish {
            reason: if calls.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            },
        });
    }
    Record::Step(StepRecord {
        step: StepNo(n),
        events,
        outcome,
        message: Assembled::default(),
    })
}

/// Rewrites the session at `input` into `output` with deterministic times: the
/// header at 2026-01-01T00:00:00Z, the entry on line L at 10·(L−1) ms; the events of
/// a step spread evenly between its `step_started` and its `step` entry; a tool's
/// `duration_ms` the time from its dispatch to its result; session id `fixture`
/// (`origin` in a fork's origin label), cwd `/workspace` (also in the paths of file
/// changes). Everything else (ids, parents, bodies) is kept; hashes are
/// recomputed.
pub fn retime(input: &Path, output: &Path) -> SessionLog {
    let log = read_session(input).unwrap();
    let line_ts = |line: u32| t0() + TimeDelta::milliseconds(10 * i64::from(line - 1));
    let mut started: std::collections::HashMap<(EntryId, u32), u32> = Default::default();
    let mut dispatched: std::collections::HashMap<String, u32> = Default::default();
    let mut hashes: std::collections::HashMap<EntryId, EntryHash> = Default::default();
    // The step_started line of each step entry: walk the parent chain.
    let mut bytes = Vec::new();
    for (entry, &line) in log.entries.iter().zip(&log.lines) {
        let mut body = entry.body.clone();
        match &mut body {
            Body::Record(Record::Session(h)) => {
                h.session_id = "fixture".into();
                h.cwd = "/workspace".into();
                if let Some(f) = &mut h.forked_from {
                    f.session_id = "origin".into();
                }
            }
            Body::Record(Record::Label { name, .. }) => {
                // The origin label of a fork names its source session.
                if let Some(rest) = name.strip_prefix(crate::fork::ORIGIN_PREFIX)
                    && let Some((_, at)) = rest.rsplit_once(" @ ")
                {
                    *name = crate::fork::origin_label("origin", at.parse().unwrap());
                }
            }
            Body::Decision(Decision::StepStarted { step, .. }) => {
                started.insert((entry.id, step.0), line);
            }
            Body::Decision(Decision::ToolDispatched { call, .. }) => {
                dispatched.insert(call.id.0.clone(), line);
            }
            Body::Record(Record::Step(s)) => {
                let mut cur = entry.parent;
                let mut from = line;
                while let Some(id) = cur {
                    if let Some(&l) = started.get(&(id, s.step.0)) {
                        from = l;
                        break;
                    }
                    cur = log.get(id).and_then(|e| e.parent);
                }
                let window = 10 * u64::from(line - from);
                let n = s.events.len() as u64;
                for (k, e) in s.events.iter_mut().enumerate() {
                    e.ms = window * (k as u64 + 1) / (n + 1);
                }
            }
            Body::Record(Record::ToolResult(t)) => {
                let from = dispatched.get(&t.call_id.0).copied().unwrap_or(line);
                t.duration_ms = 10 * u64::from(line.saturating_sub(from));
                for c in &mut t.changes {
                    if let Ok(rest) = c.path.strip_prefix(&log.header().cwd) {
                        c.path = Path::new("/workspace").join(rest);
                    }
                }
            }
            _ => {}
        }
        let parent_hash = entry.parent.and_then(|p| hashes.get(&p).copied());
        let (bytes_line, hash) = Entry::encode(
            entry.id,
            entry.parent,
            parent_hash.as_ref(),
            line_ts(line),
            &body,
        );
        hashes.insert(entry.id, hash);
        bytes.extend_from_slice(&bytes_line);
    }
    std::fs::write(output, bytes).unwrap();
    read_session(output).unwrap()
}

/// A session with a tool round (two parallel calls), a steer that arrives during
/// step 1 and is delivered after the tools, and a follow-up delivered at the
/// would-be finish.
pub fn steer_session() -> (tempfile::TempDir, SessionLog) {
    let mut k = Kit::new("steer");
    k.prompt("list the files and say hello");
    k.steer("also check b");
    k.step(
        1,
        "looking",
        &[("echo", r#"{"a":1}"#), ("echo", r#"{"b":2}"#)],
    );
    k.follow_up("then summarize");
    k.settle_all();
    k.step(2, "done with both", &[]);
    k.step(3, "summary: all good", &[]);
    k.finish()
}

/// Two runs, then a new branch from the end of the first run with a third run.
pub fn branched_session() -> (tempfile::TempDir, SessionLog) {
    branched().finish()
}

/// [`branched_session`], still open for more entries.
pub fn branched() -> Kit {
    let mut k = Kit::new("branched");
    k.prompt("first task");
    k.step(1, "working", &[("echo", r#"{"x":1}"#)]);
    k.settle_all();
    k.step(2, "first done", &[]);
    let end_of_first = k.leaf();
    k.prompt("second task");
    k.step(1, "second done", &[]);
    k.branch_at(end_of_first);
    k.prompt("instead, another task");
    k.step_full(step_record(
        1,
        "thinking about\nthe alternative",
        "alternative done",
        &[],
        150,
        StepOutcome::Completed,
    ));
    k
}

/// A run that compacts after its second tool round (`compact_at_tokens` 150), then
/// finishes; then a label on the first prompt.
pub fn compaction_session() -> (tempfile::TempDir, SessionLog) {
    let mut k = Kit::new("compaction");
    let mut cfg = config(400_000);
    cfg.limits.compact_at_tokens = 150;
    k.prompt_with("refactor the module", cfg);
    k.step(1, "reading", &[("echo", r#"{"f":"a.rs"}"#)]);
    k.settle_all();
    k.step(2, "editing", &[("echo", r#"{"f":"b.rs"}"#)]);
    k.settle_all();
    k.record(Record::CompactionSummary {
        summary: Some("read a.rs, edited b.rs".into()),
        error: None,
    });
    k.step(3, "all refactored", &[]);
    let leaf = k.leaf();
    k.append_raw(
        EntryId(1),
        Body::Record(Record::Label {
            target: EntryId(1),
            name: "start".into(),
        }),
    );
    assert_eq!(k.leaf(), leaf);
    k.finish()
}
