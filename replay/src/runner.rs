//! The one replay runner: feeds a branch to the machine one entry at a time (root
//! first) and compares each recorded decision with the one the machine re-makes,
//! payload included. What it keeps for a divergence report is chosen by how it holds
//! the entries ([`Held`]): a reference into a log read whole or a shared pointer to
//! an entry decoded on the fly keeps the last few entries and the last input, to be
//! shown; `()` keeps nothing, for the streamed pass that only tells whether a branch
//! replays clean (a divergence there is replayed again holding the entries: the
//! machine is deterministic, so that pass diverges at the same place).

use std::collections::VecDeque;
use std::rc::Rc;

use xcsh_log::{Body, Entry, RecordedInput, entry_decision};
use xcsh_machine::{Decision, Effect, EntryId, Machine};

use crate::{
    CutOff, Divergence, DivergenceKind, EntryRef, Outcome, PATH_SHOWN, PhaseKind, Replay,
    ReplayOptions, ReplayReport, Replayed, phase_name,
};

/// What an entry gives the machine, taken apart from it (on a decoding worker, for
/// a streamed replay).
pub(crate) enum Fed {
    /// An input entry's inputs.
    Inputs(RecordedInput),
    /// A recorded decision, to be compared.
    Decision(Decision),
    /// Structure (session, branch, label) and unknown entries: nothing.
    Nothing,
}

impl Fed {
    /// Takes `entry` apart: its inputs and decision move out of it.
    pub(crate) fn of(entry: Entry) -> Fed {
        match entry.body {
            Body::Decision(d) => Fed::Decision(d),
            body => {
                RecordedInput::of_entry(Entry { body, ..entry }).map_or(Fed::Nothing, Fed::Inputs)
            }
        }
    }

    /// What a kept `entry` gives the machine (copied out of it).
    pub(crate) fn cloned(entry: &Entry) -> Fed {
        match entry_decision(entry) {
            Some(d) => Fed::Decision(d.clone()),
            None => RecordedInput::cloned(entry).map_or(Fed::Nothing, Fed::Inputs),
        }
    }
}

/// How the runner holds the entries it was fed: what a divergence report can show.
pub(crate) trait Held: Clone {
    /// The entry, when it is held.
    fn entry(&self) -> Option<&Entry>;
}

/// Nothing is held: the report names only the entry and the decisions.
impl Held for () {
    fn entry(&self) -> Option<&Entry> {
        None
    }
}

impl Held for &Entry {
    fn entry(&self) -> Option<&Entry> {
        Some(self)
    }
}

impl Held for Rc<Entry> {
    fn entry(&self) -> Option<&Entry> {
        Some(self)
    }
}

/// An entry fed: its id and line, and the entry as held.
#[derive(Clone)]
struct Shown<E> {
    id: EntryId,
    line: Option<u32>,
    held: E,
}

impl<E: Held> Shown<E> {
    /// The entry as a report names it (its type and summary only when held).
    fn entry_ref(&self) -> EntryRef {
        match self.held.entry() {
            Some(e) => EntryRef::new(e, self.line),
            None => EntryRef {
                id: self.id,
                line: self.line,
                type_name: String::new(),
                summary: String::new(),
            },
        }
    }
}

/// The replay of one branch fed one entry at a time.
pub(crate) struct Runner<'o, E> {
    machine: Machine,
    /// The decisions re-made and not yet compared with the log's.
    expected: VecDeque<Decision>,
    report: ReplayReport,
    options: &'o ReplayOptions,
    /// The last input applied and how many recorded decisions have followed it.
    after_input: Option<Shown<E>>,
    since_input: usize,
    /// The last [`PATH_SHOWN`] entries fed.
    window: VecDeque<Shown<E>>,
}

impl<'o, E: Held> Runner<'o, E> {
    pub(crate) fn new(options: &'o ReplayOptions) -> Self {
        Runner {
            machine: Machine::new(),
            expected: VecDeque::new(),
            report: ReplayReport {
                entries: 0,
                inputs: 0,
                decisions: 0,
            },
            options,
            after_input: None,
            since_input: 0,
            window: VecDeque::with_capacity(PATH_SHOWN + 1),
        }
    }

    fn diverged(
        &self,
        at: Option<&Shown<E>>,
        kind: DivergenceKind,
        recorded: Option<Decision>,
        remade: Option<Decision>,
    ) -> Outcome {
        let input = self.after_input.as_ref();
        Outcome::Diverged(Box::new(Divergence {
            kind,
            entry: at.map(|s| s.id),
            line: at.and_then(|s| s.line),
            entry_type: at
                .and_then(|s| s.held.entry())
                .map(|e| e.type_name().to_string()),
            after_input: input.map(|s| s.id),
            input: input.map(Shown::entry_ref),
            decision_index: self.since_input,
            diff: crate::diff(recorded.as_ref(), remade.as_ref()),
            recorded,
            remade,
            phase: phase_name(self.machine.phase()),
            phase_kind: PhaseKind::of(self.machine.phase()),
            path: self.window.iter().map(Shown::entry_ref).collect(),
        }))
    }

    /// Feeds the next entry of the branch, entry `id` at `line`, which gives the
    /// machine `fed` and is held as `held`; `Some` when the replay ends with it.
    pub(crate) fn feed(
        &mut self,
        id: EntryId,
        fed: Fed,
        held: E,
        line: Option<u32>,
    ) -> Option<Outcome> {
        if self.window.len() == PATH_SHOWN {
            self.window.pop_front();
        }
        self.window.push_back(Shown { id, line, held });
        self.report.entries += 1;
        match fed {
            Fed::Inputs(inputs) => {
                if let Some(missing) = self.expected.pop_front() {
                    let at = self.window.back();
                    return Some(self.diverged(
                        at,
                        DivergenceKind::MissingDecision,
                        None,
                        Some(missing),
                    ));
                }
                self.report.inputs += 1;
                for input in inputs {
                    for effect in self.machine.handle(self.options.overrides.apply(input)) {
                        if let Effect::Record(d) = effect {
                            self.expected.push_back(d);
                        }
                    }
                }
                self.after_input = self.window.back().cloned();
                self.since_input = 0;
            }
            Fed::Decision(recorded) => {
                self.report.decisions += 1;
                let kind = match self.expected.pop_front() {
                    Some(remade) if remade == recorded => None,
                    Some(remade) => Some((DivergenceKind::DecisionDiffers, Some(remade))),
                    None => Some((DivergenceKind::UnexpectedDecision, None)),
                };
                if let Some((kind, remade)) = kind {
                    let at = self.window.back();
                    return Some(self.diverged(at, kind, Some(recorded), remade));
                }
                self.since_input += 1;
            }
            // Structure and unknown entries neither feed nor compare anything.
            Fed::Nothing => {}
        }
        if self.options.until == Some(id) {
            let here = self.window.back().map(Shown::entry_ref)?;
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
            torn: None,
        }
    }

    /// The replay, at the end of the branch. A branch that ends inside a run (the
    /// machine is in one, or owes the `run_finished` that ends it) was cut off: what
    /// the machine owes there is what the process did not write, not a divergence.
    pub(crate) fn finish(mut self) -> Replay {
        let in_run = self.machine.is_running();
        let finishing = self
            .expected
            .iter()
            .any(|d| matches!(d, Decision::RunFinished { .. }));
        if (in_run || finishing)
            && let Some(last) = self.window.back().map(Shown::entry_ref)
        {
            let cut = CutOff {
                last,
                phase: phase_name(self.machine.phase()),
                phase_kind: PhaseKind::of(self.machine.phase()),
                owed: self.expected.drain(..).collect(),
            };
            return self.end(Outcome::CutOff(Box::new(cut)));
        }
        if let Some(missing) = self.expected.pop_front() {
            let outcome = self.diverged(None, DivergenceKind::MissingDecision, None, Some(missing));
            return self.end(outcome);
        }
        self.end(Outcome::Clean)
    }
}
