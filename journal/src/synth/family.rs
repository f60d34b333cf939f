//! A synthetic family of sessions (SPEC.md §29.6) for the tests of the family views,
//! of `replay --deep` and of the binary: a parent whose first step starts two
//! sub-agents at once (`childa01`, which delegates to a grandchild `grand001` and
//! finishes, and `childb01`, whose provider fails), then a third `task` call whose
//! child file (`childc01`) is never written. Every file is played through the
//! production journal ([`Player`]) into a real [`SessionWriter`], so each replays
//! clean; headers and results carry the links exactly as SPEC.md §29 has them.
//! Times are 1 ms apart per file, from 2026-01-01T00:00:00Z: the children start at
//! their dispatch and the parent goes on after them.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::{Journal, Player, TimedLog};
use xcsh_log::{
    Body, ChildRun, LogError, ParentLink, Record, SessionHeader, SessionWriter, StepRecord,
    TimedEvent, ToolResultRecord,
};
use xcsh_machine::{
    Assembled, CallId, Decision, EntryId, FinishReason, Limits, Machine, Permissions,
    ProviderError, ProviderErrorKind, RunConfig, StepNo, StepOutcome, StreamEvent, ToolOutcome,
    ToolStatus, Usage,
};

/// The file name of session `id` (as xcsh names them: `<time>_<id>.jsonl`).
pub fn file_of(id: &str) -> String {
    format!("2026-01-01T00-00-00-000Z_{id}.jsonl")
}

/// Writes the family into `dir`; returns the parent's file.
pub fn write_family(dir: &Path) -> Result<PathBuf, LogError> {
    let parent_path = dir.join(file_of("parent01"));
    let t0 = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default();
    let mut p = Member::create(dir, "parent01", None, t0)?;
    p.prompt("split the work")?;
    p.step(
        1,
        "delegating",
        &[r#"{"prompt":"look at a"}"#, r#"{"prompt":"look at b"}"#],
    )?;
    let start = p.now();
    let a_link = link(&parent_path, "parent01", "call_1_1")?;
    let b_link = link(&parent_path, "parent01", "call_1_2")?;

    // childa01 delegates once more, to grand001.
    let mut a = Member::create(dir, "childa01", Some(a_link), start)?;
    a.prompt("look at a")?;
    a.step(1, "asking deeper", &[r#"{"prompt":"deeper"}"#])?;
    let g_link = link(&dir.join(file_of("childa01")), "childa01", "call_1_1")?;
    let mut g = Member::create(dir, "grand001", Some(g_link), a.now())?;
    g.prompt("deeper")?;
    g.step(1, "found it deep down", &[])?;
    a.wait_until(g.now());
    drop(g);
    a.settle("call_1_1", ToolStatus::Ok, "found it deep down", "grand001")?;
    a.step(2, "a is fine", &[])?;

    // childb01's provider fails.
    let mut b = Member::create(dir, "childb01", Some(b_link), start)?;
    b.prompt("look at b")?;
    b.record(Record::Step(Box::new(StepRecord {
        step: StepNo(1),
        events: Vec::new(),
        outcome: StepOutcome::Failed {
            error: ProviderError {
                kind: ProviderErrorKind::Http,
                message: "503 service unavailable".into(),
            },
        },
        message: Assembled::default(),
    })))?;

    p.wait_until(a.now().max(b.now()));
    drop((a, b));
    p.settle("call_1_1", ToolStatus::Ok, "a is fine", "childa01")?;
    p.settle(
        "call_1_2",
        ToolStatus::Error,
        "sub-agent childb01 failed: 503 service unavailable",
        "childb01",
    )?;
    p.step(2, "one more look", &[r#"{"prompt":"look at c"}"#])?;
    p.settle("call_2_1", ToolStatus::Ok, "c is fine", "childc01")?;
    p.step(3, "all done", &[])?;
    Ok(parent_path)
}

/// One session of the family being written.
struct Member(Player<TimedLog>);

impl Member {
    fn create(
        dir: &Path,
        id: &str,
        parent: Option<ParentLink>,
        start: DateTime<Utc>,
    ) -> Result<Member, LogError> {
        let header = SessionHeader {
            session_id: id.into(),
            cwd: "/workspace".into(),
            forked_from: None,
            parent,
            imported: None,
            provider: None,
        };
        let writer = SessionWriter::create(&dir.join(file_of(id)), header, start)?;
        Ok(Member(Player::new(
            Journal::new(Machine::new(), EntryId(0)),
            TimedLog::new(writer, start),
        )))
    }

    fn now(&self) -> DateTime<Utc> {
        self.0.log.ts
    }

    fn wait_until(&mut self, ts: DateTime<Utc>) {
        self.0.log.ts = self.0.log.ts.max(ts);
    }

    fn record(&mut self, record: Record) -> Result<(), LogError> {
        self.0.record(record).map(drop)
    }

    fn prompt(&mut self, text: &str) -> Result<(), LogError> {
        let config = RunConfig {
            limits: Limits {
                max_tokens: 400_000,
                ..Limits::default()
            },
            tools: vec!["echo".into(), "sleep".into(), "task".into()],
            mutating: Vec::new(),
            permissions: Permissions::Yolo,
            estimate_bytes_per_token: 0,
            sandbox: None,
        };
        self.record(Record::UserMessage {
            text: text.into(),
            config,
        })
    }

    /// Step `n` streams `text` (in chunks of 12 bytes) and asks for one `task` call
    /// per arguments in `tasks` (ids `call_N_K`); usage 100·n in, 10 out.
    fn step(&mut self, n: u32, text: &str, tasks: &[&str]) -> Result<(), LogError> {
        let mut events = Vec::new();
        let mut ev = |event| events.push(TimedEvent { ms: 0, event });
        for chunk in text.as_bytes().chunks(12) {
            ev(StreamEvent::TextDelta {
                text: String::from_utf8_lossy(chunk).into_owned(),
            });
        }
        for (index, args) in (0u32..).zip(tasks) {
            ev(StreamEvent::ToolCallStart {
                index,
                id: CallId(format!("call_{n}_{}", index + 1)),
                name: "task".into(),
            });
            ev(StreamEvent::ToolCallDelta {
                index,
                arguments: (*args).into(),
            });
            ev(StreamEvent::ToolCallEnd { index });
        }
        ev(StreamEvent::Usage {
            usage: Usage {
                input_tokens: 100 * u64::from(n),
                output_tokens: 10,
                cache_read_tokens: if n > 1 { 50 } else { 0 },
                cache_write_tokens: 0,
                estimated: false,
            },
        });
        ev(StreamEvent::Finish {
            reason: if tasks.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            },
        });
        self.record(Record::Step(Box::new(StepRecord {
            step: StepNo(n),
            events,
            outcome: StepOutcome::Completed,
            message: Assembled::default(),
        })))
    }

    /// Settles `task` call `call` with `content`, its result naming child `child`.
    fn settle(
        &mut self,
        call: &str,
        status: ToolStatus,
        content: &str,
        child: &str,
    ) -> Result<(), LogError> {
        self.record(Record::ToolResult(Box::new(ToolResultRecord {
            call_id: CallId(call.into()),
            name: "task".into(),
            outcome: ToolOutcome {
                status,
                content: content.into(),
            },
            duration_ms: 7,
            changes: Vec::new(),
            child: Some(ChildRun {
                session_id: child.into(),
                file: file_of(child),
                usage: None,
            }),
        })))
    }
}

/// The link back to the `tool_dispatched` entry of `call` in the session at `path`.
fn link(path: &Path, id: &str, call: &str) -> Result<ParentLink, LogError> {
    let log = xcsh_log::read_session(path)?;
    let entry = log
        .entries
        .iter()
        .find_map(|e| match &e.body {
            Body::Decision(Decision::ToolDispatched { call: c, .. }) if c.id.0 == call => {
                Some(e.id)
            }
            _ => None,
        })
        .unwrap_or(EntryId(0));
    Ok(ParentLink {
        session_id: id.into(),
        entry,
        call_id: CallId(call.into()),
    })
}
