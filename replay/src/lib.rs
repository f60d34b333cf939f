//! xcsh-replay: re-runs the current machine over a recorded branch and checks that
//! it re-makes every recorded decision, payload included; reports the first
//! divergence with the entry, the input that led to it and a readable diff. Also:
//! the machine's state at any entry (`--until`), replays under changed settings
//! (`--set`), whole directories of sessions in parallel, and delta debugging that cuts
//! a diverging session down to a small one that diverges the same way.

mod dir;
mod family;
mod fields;
mod imported;
mod minimize;
mod overrides;
pub mod render;
pub mod rewrite;
mod runner;
mod state;
mod stream;
mod summary;

use std::path::PathBuf;

use serde::Serialize;
use xcsh_log::{Entry, LogError, SessionLog};
use xcsh_machine::{Decision, EntryId};

use runner::{Fed, Runner};

pub use dir::{SessionResult, SessionRun, find_sessions, replay_all};
pub use family::replay_family;
pub use fields::changed_fields;
pub use imported::{ContextMismatch, ImportedCheck, check_imported};
pub use minimize::{Minimized, Signature, Size, minimize};
pub use overrides::{KEYS as SET_KEYS, Overrides};
pub use state::{ContextSnapshot, LAST_MESSAGES, MessageRef, Replayed, RunSnapshot};
pub use stream::{FileReplay, replay_file};
pub use summary::{EntryRef, PhaseKind, decision_summary, entry_summary, phase_name};

/// How many entries up to a divergence its report lists.
pub const PATH_SHOWN: usize = 8;

/// A clean replay: what was fed and compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReplayReport {
    pub entries: usize,
    pub inputs: usize,
    pub decisions: usize,
}

/// What kind of difference replay found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// The machine re-made a different decision than the one recorded here.
    DecisionDiffers,
    /// The log records a decision the machine did not make.
    UnexpectedDecision,
    /// The machine made a decision the log does not record (before this entry).
    MissingDecision,
}

impl DivergenceKind {
    /// What the kind means, in words.
    pub fn describe(self) -> &'static str {
        match self {
            DivergenceKind::DecisionDiffers => {
                "the machine re-made a different decision than the one recorded"
            }
            DivergenceKind::UnexpectedDecision => {
                "the log records a decision the machine did not make"
            }
            DivergenceKind::MissingDecision => {
                "the machine made a decision the log does not record"
            }
        }
    }
}

/// The first place where today's machine decides differently from the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Divergence {
    pub kind: DivergenceKind,
    /// The entry where the difference shows (None: the end of the branch).
    pub entry: Option<EntryId>,
    pub line: Option<u32>,
    /// The type of that entry.
    pub entry_type: Option<String>,
    /// The last input entry applied before the divergence.
    pub after_input: Option<EntryId>,
    /// That input, summarized.
    pub input: Option<EntryRef>,
    /// Which of the decisions that input led to diverged (0 = the first).
    pub decision_index: usize,
    pub recorded: Option<Decision>,
    pub remade: Option<Decision>,
    /// The machine's phase when it diverged.
    pub phase: String,
    pub phase_kind: PhaseKind,
    /// A line diff of the recorded and re-made decisions (pretty JSON).
    pub diff: String,
    /// The last entries of the branch up to and including the divergence (at most
    /// [`PATH_SHOWN`]), oldest first.
    pub path: Vec<EntryRef>,
}

/// A branch that ends inside a run: the log holds no `run_finished` for its last
/// run, as when the process ended (a crash, `kill -9`, a power cut) before the
/// run's end was written, or while the run is still going. Not a divergence: every
/// decision the log records was re-made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CutOff {
    /// The last entry of the branch, where the log ends.
    pub last: EntryRef,
    /// The machine's phase after it.
    pub phase: String,
    pub phase_kind: PhaseKind,
    /// The decisions the machine made after the last entry that the log does not
    /// record (the process ended before writing them), in order.
    pub owed: Vec<Decision>,
}

/// A session file's torn last line: the bytes after its last newline, a write a
/// crash cut short. The readers leave it out (§12.5), so replay does too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Torn {
    /// Its 1-based line number.
    pub line: u32,
    /// Its length in bytes.
    pub bytes: u64,
}

impl Torn {
    /// The torn line of `log`, if it has one.
    pub fn of(log: &SessionLog) -> Option<Torn> {
        let torn = log.torn_tail.as_ref()?;
        // Every complete line is an entry: the torn one comes after the last.
        Some(Torn::after(
            log.lines.last().copied().unwrap_or(0),
            torn.len,
        ))
    }

    /// The torn line after `complete` complete lines, of `bytes` bytes.
    pub(crate) fn after(complete: u32, bytes: u64) -> Torn {
        Torn {
            line: complete.saturating_add(1),
            bytes,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("replay diverged at {}: {:?}", .0.entry.map(|e| format!("entry {e}")).unwrap_or_else(|| "the end of the branch".into()), .0.kind)]
    Diverged(Box<Divergence>),
    #[error("{path}: entry {entry} is not on the branch that ends at entry {leaf}")]
    NotOnBranch {
        path: PathBuf,
        entry: EntryId,
        leaf: EntryId,
    },
    #[error("--set {setting}: {why}")]
    BadSetting { setting: String, why: String },
    #[error("{path}: replays without divergence, so there is nothing to minimize")]
    NoDivergence { path: PathBuf },
    #[error("{path}: {why}")]
    Minimize { path: PathBuf, why: String },
}

/// What replay should do besides checking every decision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayOptions {
    /// Stop after this entry and capture the machine's state there.
    pub until: Option<EntryId>,
    /// Settings that replace the recorded ones in every prompt of the branch.
    pub overrides: Overrides,
}

/// How a replay ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every recorded decision was re-made.
    Clean,
    /// The first divergence.
    Diverged(Box<Divergence>),
    /// Stopped after the `until` entry with no divergence before it.
    Stopped(Box<Replayed>),
    /// Every recorded decision was re-made, but the branch ends inside a run.
    CutOff(Box<CutOff>),
}

/// A replay: the counts of what was fed and compared, how it ended, and the file's
/// torn last line (when the file was read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub report: ReplayReport,
    pub outcome: Outcome,
    pub torn: Option<Torn>,
}

/// Replays the branch ending at `leaf`.
pub fn replay_branch(log: &SessionLog, leaf: EntryId) -> Result<ReplayReport, ReplayError> {
    let replay = replay(log, leaf, &ReplayOptions::default())?;
    match replay.outcome {
        Outcome::Clean | Outcome::Stopped(_) | Outcome::CutOff(_) => Ok(replay.report),
        Outcome::Diverged(d) => Err(ReplayError::Diverged(d)),
    }
}

/// Replays the branch ending at `leaf` with `options`. A divergence is an outcome,
/// not an error; errors are about reading the log or an `until` off the branch.
pub fn replay(
    log: &SessionLog,
    leaf: EntryId,
    options: &ReplayOptions,
) -> Result<Replay, ReplayError> {
    let entries = branch(log, leaf)?;
    if let Some(until) = options.until
        && log.get(until).is_none()
    {
        return Err(ReplayError::Log(log.no_entry(until)));
    }
    if let Some(until) = options.until
        && !entries.iter().any(|e| e.id == until)
    {
        return Err(ReplayError::NotOnBranch {
            path: log.path.clone(),
            entry: until,
            leaf,
        });
    }
    let mut replay = run(&entries, &|id| log.line_of(id), options);
    replay.torn = Torn::of(log);
    Ok(replay)
}

/// The entries from the root to `leaf`, root first (following each entry's parent).
pub(crate) fn branch(log: &SessionLog, leaf: EntryId) -> Result<Vec<&Entry>, ReplayError> {
    Ok(log.branch(leaf, |id| log.no_entry(id))?)
}

/// The replay proper, over a branch given as its entries (root first).
pub(crate) fn run(
    entries: &[&Entry],
    line_of: &dyn Fn(EntryId) -> Option<u32>,
    options: &ReplayOptions,
) -> Replay {
    let mut runner = Runner::new(options);
    for &entry in entries {
        let fed = Fed::cloned(entry);
        if let Some(outcome) = runner.feed(entry.id, fed, entry, line_of(entry.id)) {
            return runner.end(outcome);
        }
    }
    runner.finish()
}

fn pretty(d: Option<&Decision>) -> String {
    d.map(|d| serde_json::to_string_pretty(d).unwrap_or_default() + "\n")
        .unwrap_or_default()
}

pub(crate) fn diff(recorded: Option<&Decision>, remade: Option<&Decision>) -> String {
    let (a, b) = (pretty(recorded), pretty(remade));
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .header("recorded", "re-made")
        .to_string()
}

#[cfg(test)]
mod tests;
