//! Synthetic sessions for benchmarks and developer tools (`xcsh debug gen-session`):
//! realistic logs of any length, played through the production journal ([`Player`]: the
//! real machine and the real [`SessionWriter`], so the hash chain is real and the log
//! replays clean), deterministic from a seed.
//!
//! Shape: runs of 1 to 12 tool rounds (1 to 3 calls each, `edit` and `bash` approved
//! by the `yolo` policy), text deltas streamed in small chunks, most entries a few
//! hundred bytes (448 on average), about 2% tool results of 1–4 KiB and about 1% messages
//! (prompts, final answers) of 2–10 KiB, all sizes of whole lines,
//! occasional steers, follow-ups and interrupts, compactions when the reported input
//! tokens reach `compact_at_tokens`, labels, and `branch` records that continue from an
//! earlier settled boundary (with the machine as it was there). [`SynthShape`] makes
//! other shapes for the benchmarks of the views: a branch per run, shorter runs, a
//! long chain of labels at the end.

pub mod family;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use chrono::{DateTime, TimeDelta, Utc};

use super::{Action, Journal, Player, TimedLog};
use xcsh_log::{
    Body, LogError, Record, SessionHeader, SessionLog, SessionWriter, StepRecord, TimedEvent,
    ToolResultRecord, read_session,
};
use xcsh_machine::{
    CallId, EntryId, FinishReason, Limits, Machine, Permissions, RunConfig, StepNo, StepOutcome,
    StreamEvent, ToolCall, ToolOutcome, ToolStatus, Usage,
};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthOptions {
    /// Entries in the file, the header included.
    pub entries: u64,
    pub seed: u64,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            entries: 1_000_000,
            seed: 1,
        }
    }
}

/// The shape of a generated session beyond its length and seed; the default is the
/// realistic mix described in the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthShape {
    /// The chance per run, in thousandths, that it continues from an earlier settled
    /// boundary (a `branch` record first): 5 by default, 1000 for a run per branch.
    pub branch_per_mille: u64,
    /// Tool rounds per run at most (at least 1): 12 by default.
    pub max_rounds: u64,
    /// The file ends with this many labels, each on the label before it (the first on
    /// the leaf); 0 by default.
    pub label_chain: u64,
}

impl Default for SynthShape {
    fn default() -> Self {
        SynthShape {
            branch_per_mille: 5,
            max_rounds: 12,
            label_chain: 0,
        }
    }
}

/// The session the benchmarks read: the file `XCSH_BENCH_SESSION` if set, else one
/// generated in a fresh temporary directory named after `tag` (`XCSH_BENCH_ENTRIES`
/// entries, default 50,000, seed 1). Panics when it cannot be made: a benchmark
/// without its session has nothing to measure.
pub fn bench_session(tag: &str) -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("XCSH_BENCH_SESSION") {
        return p.into();
    }
    let entries = std::env::var("XCSH_BENCH_ENTRIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000);
    let dir = std::env::temp_dir().join(format!("xcsh-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("session.jsonl");
    let _ = std::fs::remove_file(&path);
    generate(&path, SynthOptions { entries, seed: 1 }).expect("a generated session");
    path
}

/// A bench binary's session, made once per process: [`bench_session`] of its tag,
/// and the log read from it (`static SESSION: BenchSession = BenchSession::new("log");`).
pub struct BenchSession {
    tag: &'static str,
    path: OnceLock<PathBuf>,
    log: OnceLock<SessionLog>,
}

impl BenchSession {
    pub const fn new(tag: &'static str) -> BenchSession {
        BenchSession {
            tag,
            path: OnceLock::new(),
            log: OnceLock::new(),
        }
    }

    /// The session file, generated on the first call.
    pub fn path(&self) -> &Path {
        self.path.get_or_init(|| bench_session(self.tag))
    }

    /// The session read (every line decoded and verified), on the first call.
    pub fn log(&self) -> &SessionLog {
        self.log
            .get_or_init(|| read_session(self.path()).expect("the session reads"))
    }
}

/// What was generated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SynthReport {
    pub entries: u64,
    pub bytes: u64,
    pub runs: u64,
    pub steps: u64,
    pub tool_results: u64,
    pub big_tool_results: u64,
    pub big_messages: u64,
    pub compactions: u64,
    pub branches: u64,
    pub labels: u64,
    pub leaf: EntryId,
}

/// splitmix64: small, fast, and good enough for picking shapes.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with probability `per_mille / 1000`.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.next_u64() % 1000 < per_mille
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next_u64() % items.len() as u64) as usize]
    }
}

const WORDS: [&str; 48] = [
    "the", "test", "fails", "because", "parser", "returns", "an", "error", "when", "input", "is",
    "empty", "so", "we", "should", "check", "length", "first", "then", "call", "function",
    "module", "config", "value", "file", "line", "build", "cargo", "struct", "field", "option",
    "result", "match", "branch", "session", "entry", "hash", "reader", "writer", "index", "loop",
    "thread", "buffer", "offset", "parent", "child", "token", "stream",
];

const FILES: [&str; 8] = [
    "src/lib.rs",
    "src/main.rs",
    "src/parser.rs",
    "src/config.rs",
    "tests/cli.rs",
    "core/src/log/reader.rs",
    "README.md",
    "Cargo.toml",
];

/// Tools the generated calls pick from (read and grep most often); `edit` and `bash`
/// are mutating (approved by the `yolo` policy).
const TOOLS: [&str; 8] = [
    "read", "edit", "grep", "bash", "read", "edit", "list", "bash",
];

/// About `len` bytes of prose (whole words, sometimes a newline).
fn prose(rng: &mut Rng, len: usize) -> String {
    let mut s = String::with_capacity(len + 16);
    while s.len() < len {
        if !s.is_empty() {
            s.push(if rng.chance(40) { '\n' } else { ' ' });
        }
        s.push_str(rng.pick(&WORDS));
    }
    s
}

/// Splits text into stream deltas of 16 to 64 bytes (at char boundaries).
fn deltas(rng: &mut Rng, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut n = (rng.range(16, 64) as usize).min(rest.len());
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        out.push(rest[..n].to_string());
        rest = &rest[n..];
    }
    out
}

struct Gen {
    rng: Rng,
    p: Player,
    target: u64,
    report: SynthReport,
    /// Settled boundaries (the last entry of a finished run) and the machine there.
    boundaries: VecDeque<(EntryId, Machine)>,
    /// Step entries on the current branch, for labels.
    recent: Vec<EntryId>,
    config: RunConfig,
    run: u64,
    t0: DateTime<Utc>,
    shape: SynthShape,
}

/// Entries a run may need at most once it has started (it finishes within them).
const RUN_RESERVE: u64 = 48;

impl Gen {
    fn remaining(&self) -> u64 {
        self.target.saturating_sub(self.p.log.writer.next_id().0)
    }

    fn record(&mut self, record: Record) -> Result<Vec<Action>, LogError> {
        self.p.record(record)
    }

    fn label(&mut self) -> Result<(), LogError> {
        let target = match self.recent.as_slice() {
            [] => self.p.leaf(),
            r => r[(self.rng.next_u64() % r.len() as u64) as usize],
        };
        let name = format!("{} {}", self.rng.pick(&WORDS), self.report.labels + 1);
        self.append_label(target, name)?;
        Ok(())
    }

    /// Appends `label {target, name}` as a child of `target`; returns its id.
    fn append_label(&mut self, target: EntryId, name: String) -> Result<EntryId, LogError> {
        let next = i64::try_from(self.p.log.writer.next_id().0).unwrap_or(i64::MAX);
        let (id, _) = self.p.log.writer.append(
            target,
            self.t0 + TimeDelta::milliseconds(next),
            &Body::Record(Record::Label { target, name }),
        )?;
        self.report.labels += 1;
        Ok(id)
    }

    fn branch(&mut self) -> Result<(), LogError> {
        // An earlier boundary than the current leaf, with the machine as it was there.
        let Some((at, machine)) = self
            .boundaries
            .iter()
            .rev()
            .skip(1)
            .nth((self.rng.next_u64() % 3) as usize)
            .cloned()
        else {
            return Ok(());
        };
        self.p.branch(at, machine)?;
        self.report.branches += 1;
        self.recent.clear();
        Ok(())
    }

    fn tool_call(&mut self, step: StepNo, n: u32) -> (String, String, String) {
        let name = self.rng.pick(&TOOLS).to_string();
        let file = self.rng.pick(&FILES);
        let arguments = match name.as_str() {
            "read" | "list" => format!("{{\"path\":\"{file}\"}}"),
            "grep" => format!("{{\"pattern\":\"{}\"}}", self.rng.pick(&WORDS)),
            "edit" => format!(
                "{{\"path\":\"{file}\",\"old\":\"{}\",\"new\":\"{}\"}}",
                self.rng.pick(&WORDS),
                self.rng.pick(&WORDS)
            ),
            _ => format!("{{\"command\":\"cargo test {}\"}}", self.rng.pick(&WORDS)),
        };
        let id = format!("call_{}_{}_{n}", self.run, step.0);
        (id, name, arguments)
    }

    /// The stream events of one step: text, then tool calls, usage, finish.
    fn step_record(&mut self, step: StepNo, calls: u32) -> StepRecord {
        let mut events = Vec::new();
        let mut ms = self.rng.range(200, 900);
        let big = calls == 0 && self.rng.chance(330);
        let text_len = if big {
            self.report.big_messages += 1;
            self.rng.range(560, 900) as usize
        } else if calls == 0 {
            self.rng.range(20, 160) as usize
        } else if self.rng.chance(200) {
            self.rng.range(10, 40) as usize
        } else {
            0
        };
        let text = prose(&mut self.rng, text_len);
        for d in deltas(&mut self.rng, &text) {
            ms += self.rng.range(5, 40);
            events.push(TimedEvent {
                ms,
                event: StreamEvent::TextDelta { text: d },
            });
        }
        for n in 0..calls {
            let (id, name, arguments) = self.tool_call(step, n + 1);
            ms += self.rng.range(5, 40);
            events.push(TimedEvent {
                ms,
                event: StreamEvent::ToolCallStart {
                    index: n,
                    id: CallId(id),
                    name,
                },
            });
            events.push(TimedEvent {
                ms,
                event: StreamEvent::ToolCallDelta {
                    index: n,
                    arguments,
                },
            });
            events.push(TimedEvent {
                ms,
                event: StreamEvent::ToolCallEnd { index: n },
            });
        }
        // The provider reports the context it saw: about the machine's estimate.
        let input_tokens = self.p.machine().context().estimate_tokens() + 1_500;
        events.push(TimedEvent {
            ms,
            event: StreamEvent::Usage {
                usage: Usage {
                    input_tokens,
                    output_tokens: self.rng.range(10, 400),
                    cache_read_tokens: 0,
                    cache_write_tokens: 0,
                    estimated: false,
                },
            },
        });
        events.push(TimedEvent {
            ms,
            event: StreamEvent::Finish {
                reason: if calls > 0 {
                    FinishReason::ToolCalls
                } else {
                    FinishReason::Stop
                },
            },
        });
        StepRecord {
            step,
            events,
            outcome: StepOutcome::Completed,
            message: Default::default(),
        }
    }

    fn tool_result(&mut self, call: &ToolCall) -> ToolResultRecord {
        let big = self.rng.chance(85);
        let len = if big {
            self.report.big_tool_results += 1;
            self.rng.range(1_024, 2_048) as usize
        } else {
            self.rng.range(10, 50) as usize
        };
        let status = if self.rng.chance(40) {
            ToolStatus::Error
        } else {
            ToolStatus::Ok
        };
        self.report.tool_results += 1;
        ToolResultRecord {
            call_id: call.id.clone(),
            name: call.name.clone(),
            outcome: ToolOutcome {
                status,
                content: prose(&mut self.rng, len),
            },
            duration_ms: self.rng.range(1, 3_000),
            changes: Vec::new(),
            child: None,
        }
    }

    /// One run, from its prompt until the machine finishes it.
    fn run(&mut self) -> Result<(), LogError> {
        self.run += 1;
        self.report.runs += 1;
        let rounds = self.rng.range(1, self.shape.max_rounds.max(1));
        let n = if self.rng.chance(40) {
            self.report.big_messages += 1;
            self.rng.range(2_048, 8_192)
        } else {
            self.rng.range(30, 300)
        };
        let text = prose(&mut self.rng, n as usize);
        let mut effects = self.record(Record::UserMessage {
            text,
            config: self.config.clone(),
        })?;
        let mut model: Option<StepNo> = None;
        let mut tools: VecDeque<ToolCall> = VecDeque::new();
        let mut summarize = false;
        let mut round = 0;
        loop {
            for e in effects.drain(..) {
                match e {
                    Action::StartModel { step } => model = Some(step),
                    Action::StartTool { call, .. } => tools.push_back(call),
                    Action::Summarize { .. } => summarize = true,
                    Action::Emit(_)
                    | Action::Sync
                    | Action::Check { .. }
                    | Action::Ask { .. }
                    | Action::CancelModel { .. }
                    | Action::CancelTool { .. }
                    | Action::CancelSummary
                    | Action::StartExtraction { .. }
                    | Action::CancelExtraction
                    | Action::WriteNotes(_)
                    | Action::Release(_) => {}
                }
            }
            if !self.p.machine().is_running() {
                return Ok(());
            }
            let late = self.remaining() < RUN_RESERVE / 2;
            effects = if summarize {
                summarize = false;
                self.report.compactions += 1;
                let n = self.rng.range(300, 1_200) as usize;
                let summary = Some(prose(&mut self.rng, n));
                self.record(Record::CompactionSummary {
                    summary,
                    error: None,
                })?
            } else if let Some(call) = tools.pop_front() {
                if !late && self.rng.chance(6) {
                    let text = prose(&mut self.rng, 60);
                    self.record(Record::FollowUp { text })?;
                }
                let result = self.tool_result(&call);
                self.record(Record::ToolResult(Box::new(result)))?
            } else if let Some(step) = model.take() {
                if !late && self.rng.chance(10) {
                    let text = prose(&mut self.rng, 80);
                    let more = self.record(Record::Steer { text })?;
                    debug_assert!(more.iter().all(|e| matches!(e, Action::Emit(_))));
                }
                let interrupt = !late && self.rng.chance(3);
                if interrupt {
                    self.record(Record::Interrupt {})?;
                }
                round += 1;
                let calls = if late || round > rounds {
                    0
                } else {
                    match self.rng.range(0, 99) {
                        0..85 => 1,
                        85..97 => 2,
                        _ => 3,
                    }
                };
                let mut record = self.step_record(step, calls);
                if interrupt {
                    record.outcome = StepOutcome::Aborted;
                }
                self.report.steps += 1;
                let id = self.p.log.writer.next_id();
                let made = self.record(Record::Step(Box::new(record)))?;
                self.recent.push(id);
                made
            } else {
                // The machine runs but asked for nothing: a bug in this generator.
                return Err(LogError::Io {
                    path: self.p.log.writer.path().to_path_buf(),
                    error: std::io::Error::other("synth: the run waits for nothing"),
                });
            };
        }
    }
}

/// Writes a new session of `opts.entries` entries at `path` (which must not exist).
pub fn generate(path: &Path, opts: SynthOptions) -> Result<SynthReport, LogError> {
    generate_shaped(path, opts, SynthShape::default())
}

/// [`generate`] with another shape: more branches, shorter runs, a chain of labels at
/// the end (`label_chain` is capped so that the header and one run still fit).
pub fn generate_shaped(
    path: &Path,
    opts: SynthOptions,
    shape: SynthShape,
) -> Result<SynthReport, LogError> {
    let t0 = DateTime::parse_from_rfc3339("2026-01-05T09:00:00.000Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default();
    let header = SessionHeader::new(format!("synth-{}", opts.seed), "/work/synth");
    let writer = SessionWriter::create(path, header, t0)?;
    let config = RunConfig {
        limits: Limits {
            compact_at_tokens: 24_000,
            max_tokens: 0,
            ..Limits::default()
        },
        tools: vec![
            "read".into(),
            "grep".into(),
            "list".into(),
            "edit".into(),
            "bash".into(),
        ],
        mutating: vec!["edit".into(), "bash".into()],
        permissions: Permissions::Yolo,
        estimate_bytes_per_token: 0,
        sandbox: None,
    };
    let mut g = Gen {
        rng: Rng::new(opts.seed),
        p: Player::new(
            Journal::new(Machine::new(), EntryId(0)),
            TimedLog::new(writer, t0),
        ),
        target: opts.entries.max(1),
        report: SynthReport::default(),
        boundaries: VecDeque::from([(EntryId(0), Machine::new())]),
        recent: Vec::new(),
        config,
        run: 0,
        t0,
        shape,
    };
    let chain = shape
        .label_chain
        .min(g.target.saturating_sub(RUN_RESERVE + 1));
    while g.remaining() > RUN_RESERVE + chain {
        if g.rng.chance(shape.branch_per_mille) {
            g.branch()?;
        }
        if g.rng.chance(30) {
            g.label()?;
        }
        g.run()?;
        g.boundaries.push_back((g.p.leaf(), g.p.machine().clone()));
        if g.boundaries.len() > 6 {
            g.boundaries.pop_front();
        }
    }
    while g.remaining() > chain {
        g.label()?;
    }
    let mut target = g.p.leaf();
    while g.remaining() > 0 {
        let name = format!("chain {}", g.report.labels + 1);
        target = g.append_label(target, name)?;
    }
    g.p.log.writer.sync()?;
    g.report.entries = g.p.log.writer.next_id().0;
    g.report.leaf = g.p.leaf();
    g.report.bytes = std::fs::metadata(path)
        .map_err(|e| LogError::io(path, e))?
        .len();
    Ok(g.report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcsh_log::read_session;

    /// 3,000 entries of seed 7.
    const OPTIONS: SynthOptions = SynthOptions {
        entries: 3_000,
        seed: 7,
    };

    /// What `generator` writes into a new directory: the file's bytes, the log read
    /// back from it and the generator's report.
    fn generated(
        generator: impl FnOnce(&Path) -> Result<SynthReport, LogError>,
    ) -> (Vec<u8>, SessionLog, SynthReport) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let report = generator(&path).unwrap();
        (
            std::fs::read(&path).unwrap(),
            read_session(&path).unwrap(),
            report,
        )
    }

    #[test]
    fn a_generated_session_reads_back_with_every_entry_and_is_deterministic() {
        let (bytes, log, report) = generated(|path| generate(path, OPTIONS));
        let (again, ..) = generated(|path| generate(path, OPTIONS));
        assert_eq!(bytes, again);
        assert_eq!(log.entries.len(), 3_000);
        assert_eq!(report.entries, 3_000);
        assert!(report.runs > 10, "{report:?}");
        assert_eq!(log.leaf(), report.leaf);
    }

    #[test]
    fn a_shaped_session_has_a_branch_per_run_and_ends_with_a_chain_of_labels() {
        let shape = SynthShape {
            branch_per_mille: 1000,
            max_rounds: 1,
            label_chain: 500,
        };
        let (_, log, report) = generated(|path| generate_shaped(path, OPTIONS, shape));
        assert_eq!(log.entries.len(), 3_000);
        // Every run but the first two continues from an earlier boundary.
        assert!(report.branches + 2 >= report.runs, "{report:?}");
        let tail = &log.entries[2_500..];
        let mut target = report.leaf;
        for e in tail {
            assert_eq!(
                (e.parent, &e.body),
                (
                    Some(target),
                    &Body::Record(Record::Label {
                        target,
                        name: format!("chain {}", report.labels + e.id.0 - 2_999),
                    })
                )
            );
            target = e.id;
        }
        assert_eq!(log.leaf(), report.leaf);
    }
}
