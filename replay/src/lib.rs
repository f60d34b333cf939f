//! xcsh-replay: re-runs the current machine over a recorded branch and checks that
//! it re-makes every recorded decision, payload included; reports the first
//! divergence with the entry, the input that led to it and a readable diff. Also:
//! the machine's state at any entry (`--until`), replays under changed settings
//! (`--set`), whole directories of sessions in parallel, and delta debugging that cuts
//! a diverging session down to a small one that diverges the same way.

mod dir;
mod fast;
mod fields;
mod minimize;
mod overrides;
pub mod render;
pub mod rewrite;
mod state;
mod stream;
mod summary;

use std::collections::VecDeque;
use std::path::PathBuf;

use serde::Serialize;
use xcsh_core::log::{Entry, LogError, SessionLog, entry_decision, entry_inputs};
use xcsh_core::machine::{Decision, Effect, EntryId, Machine};

pub use dir::{SessionResult, SessionRun, find_sessions, replay_all};
pub use fields::changed_fields;
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
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
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
}

/// A replay: the counts of what was fed and compared, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub report: ReplayReport,
    pub outcome: Outcome,
}

/// Replays the branch ending at `leaf`.
pub fn replay_branch(log: &SessionLog, leaf: EntryId) -> Result<ReplayReport, ReplayError> {
    let replay = replay(log, leaf, &ReplayOptions::default())?;
    match replay.outcome {
        Outcome::Clean | Outcome::Stopped(_) => Ok(replay.report),
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
    Ok(run(&entries, &|id| log.line_of(id), options))
}

/// The entries from the root to `leaf`, root first (following each entry's parent).
pub(crate) fn branch(log: &SessionLog, leaf: EntryId) -> Result<Vec<&Entry>, ReplayError> {
    let mut path = Vec::new();
    let mut current = Some(leaf);
    while let Some(id) = current {
        let entry = log
            .get(id)
            .ok_or_else(|| ReplayError::Log(log.no_entry(id)))?;
        if path.len() >= log.entries.len() {
            return Err(ReplayError::Log(LogError::Cycle {
                path: log.path.clone(),
                id: leaf,
            }));
        }
        path.push(entry);
        current = entry.parent;
    }
    path.reverse();
    Ok(path)
}

/// The replay proper, over a branch given as its entries (root first).
pub(crate) fn run(
    entries: &[&Entry],
    line_of: &dyn Fn(EntryId) -> Option<u32>,
    options: &ReplayOptions,
) -> Replay {
    let mut runner = Runner::new(options);
    for entry in entries {
        if let Some(outcome) = runner.feed(*entry, line_of(entry.id)) {
            return runner.end(outcome);
        }
    }
    runner.finish()
}

/// The replay of a branch fed one entry at a time (root first), keeping only the
/// last few entries (for a divergence report). `E` is how the entries are held: a
/// reference into a log read whole, or a shared pointer to one decoded on the fly.
pub(crate) struct Runner<'o, E> {
    machine: Machine,
    expected: VecDeque<Decision>,
    report: ReplayReport,
    /// The last input applied and how many recorded decisions have followed it.
    after_input: Option<(E, Option<u32>)>,
    since_input: usize,
    options: &'o ReplayOptions,
    /// The last [`PATH_SHOWN`] entries fed, with their lines.
    window: VecDeque<(E, Option<u32>)>,
}

impl<'o, E: std::borrow::Borrow<Entry> + Clone> Runner<'o, E> {
    pub(crate) fn new(options: &'o ReplayOptions) -> Self {
        Runner {
            machine: Machine::new(),
            expected: VecDeque::new(),
            report: ReplayReport {
                entries: 0,
                inputs: 0,
                decisions: 0,
            },
            after_input: None,
            since_input: 0,
            options,
            window: VecDeque::with_capacity(PATH_SHOWN + 1),
        }
    }

    fn diverged(
        &self,
        at: Option<(&Entry, Option<u32>)>,
        kind: DivergenceKind,
        recorded: Option<&Decision>,
        remade: Option<Decision>,
    ) -> Outcome {
        let input = self.after_input.as_ref();
        Outcome::Diverged(Box::new(Divergence {
            kind,
            entry: at.map(|(e, _)| e.id),
            line: at.and_then(|(_, l)| l),
            entry_type: at.map(|(e, _)| e.type_name().to_string()),
            after_input: input.map(|(e, _)| e.borrow().id),
            input: input.map(|(e, l)| EntryRef::new(e.borrow(), *l)),
            decision_index: self.since_input,
            diff: diff(recorded, remade.as_ref()),
            recorded: recorded.cloned(),
            remade,
            phase: phase_name(self.machine.phase()),
            phase_kind: PhaseKind::of(self.machine.phase()),
            path: self
                .window
                .iter()
                .map(|(e, l)| EntryRef::new(e.borrow(), *l))
                .collect(),
        }))
    }

    /// Feeds the next entry of the branch; `Some` when the replay ends with it.
    pub(crate) fn feed(&mut self, held: E, line: Option<u32>) -> Option<Outcome> {
        if self.window.len() == PATH_SHOWN {
            self.window.pop_front();
        }
        self.window.push_back((held.clone(), line));
        let entry: &Entry = held.borrow();
        self.report.entries += 1;
        if entry.body.is_input() {
            if let Some(missing) = self.expected.pop_front() {
                return Some(self.diverged(
                    Some((entry, line)),
                    DivergenceKind::MissingDecision,
                    None,
                    Some(missing),
                ));
            }
            self.report.inputs += 1;
            for input in entry_inputs(entry) {
                for effect in self.machine.handle(self.options.overrides.apply(input)) {
                    if let Effect::Record(d) = effect {
                        self.expected.push_back(d);
                    }
                }
            }
            self.after_input = Some((held.clone(), line));
            self.since_input = 0;
        } else if let Some(recorded) = entry_decision(entry) {
            self.report.decisions += 1;
            let kind = match self.expected.pop_front() {
                Some(remade) if remade == *recorded => None,
                Some(remade) => Some((DivergenceKind::DecisionDiffers, Some(remade))),
                None => Some((DivergenceKind::UnexpectedDecision, None)),
            };
            if let Some((kind, remade)) = kind {
                return Some(self.diverged(Some((entry, line)), kind, Some(recorded), remade));
            }
            self.since_input += 1;
        }
        // Structure (session, branch, label) and unknown entries neither feed nor
        // compare anything.
        if self.options.until == Some(entry.id) {
            let here = EntryRef::new(entry, line);
            let owed = self.expected.iter().cloned().collect();
            return Some(Outcome::Stopped(Box::new(Replayed::capture(
                here,
                &self.machine,
                owed,
            ))));
        }
        None
    }

    /// The replay, ended early with `outcome`.
    pub(crate) fn end(self, outcome: Outcome) -> Replay {
        Replay {
            report: self.report,
            outcome,
        }
    }

    /// The replay, at the end of the branch.
    pub(crate) fn finish(mut self) -> Replay {
        if let Some(missing) = self.expected.pop_front() {
            let outcome = self.diverged(None, DivergenceKind::MissingDecision, None, Some(missing));
            return self.end(outcome);
        }
        self.end(Outcome::Clean)
    }
}

fn pretty(d: Option<&Decision>) -> String {
    d.map(|d| serde_json::to_string_pretty(d).unwrap_or_default() + "\n")
        .unwrap_or_default()
}

fn diff(recorded: Option<&Decision>, remade: Option<&Decision>) -> String {
    let (a, b) = (pretty(recorded), pretty(remade));
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .header("recorded", "re-made")
        .to_string()
}

#[cfg(test)]
mod tests;
