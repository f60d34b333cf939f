//! The replay of a clean branch without the bookkeeping of a divergence report: each
//! entry is turned into what the machine consumes (its inputs, moved out of the
//! entry, or its decision) on a decoding worker, and nothing of it is kept once fed.
//! It only tells whether the branch replays clean; when it does not, the caller
//! replays again with [`crate::Runner`], which makes the report (the machine is
//! deterministic, so that pass diverges at the same place).

use std::collections::VecDeque;

use xcsh_core::log::{Body, Entry, Record, TimedEvent, into_inputs};
use xcsh_core::machine::{Decision, Effect, EntryId, Input, Machine, StepNo, StepOutcome};

use crate::{ReplayOptions, ReplayReport};

/// An entry as [`FastRunner`] needs it.
pub(crate) struct Fed {
    pub id: EntryId,
    pub parent: Option<EntryId>,
    pub what: What,
}

/// What an entry gives the machine.
pub(crate) enum What {
    /// A step entry: its stream events, then its end (as [`into_inputs`] makes
    /// them, without a vector of inputs).
    Step {
        step: StepNo,
        entry: EntryId,
        events: Vec<TimedEvent>,
        outcome: StepOutcome,
    },
    /// The one input of an input entry.
    Input(Input),
    /// An input entry's inputs, in order.
    Inputs(Vec<Input>),
    /// A recorded decision.
    Decision(Decision),
    /// Structure and unknown entries: nothing.
    Nothing,
}

impl Fed {
    /// Takes `entry` apart (what a decoding worker does).
    pub(crate) fn of(entry: Entry) -> Fed {
        let (id, parent) = (entry.id, entry.parent);
        let what = if entry.body.is_input() {
            match entry.body {
                Body::Record(Record::Step(s)) => What::Step {
                    step: s.step,
                    entry: id,
                    events: s.events,
                    outcome: s.outcome,
                },
                _ => {
                    let mut inputs = into_inputs(entry);
                    match (inputs.pop(), inputs.is_empty()) {
                        (Some(one), true) => What::Input(one),
                        (Some(last), false) => {
                            inputs.push(last);
                            What::Inputs(inputs)
                        }
                        (None, _) => What::Inputs(inputs),
                    }
                }
            }
        } else {
            match entry.body {
                Body::Decision(d) => What::Decision(d),
                Body::Record(_) | Body::Unknown { .. } => What::Nothing,
            }
        };
        Fed { id, parent, what }
    }
}

/// Feeds a branch to the machine and compares each recorded decision, counting as
/// [`crate::Runner`] does.
pub(crate) struct FastRunner<'o> {
    machine: Machine,
    expected: VecDeque<Decision>,
    report: ReplayReport,
    options: &'o ReplayOptions,
}

impl<'o> FastRunner<'o> {
    pub(crate) fn new(options: &'o ReplayOptions) -> Self {
        FastRunner {
            machine: Machine::new(),
            expected: VecDeque::new(),
            report: ReplayReport {
                entries: 0,
                inputs: 0,
                decisions: 0,
            },
            options,
        }
    }

    /// Feeds the next entry of the branch; `false` when the replay diverges here.
    pub(crate) fn feed(&mut self, what: What) -> bool {
        self.report.entries += 1;
        if matches!(what, What::Step { .. } | What::Input(_) | What::Inputs(_)) {
            if !self.expected.is_empty() {
                return false;
            }
            self.report.inputs += 1;
        }
        match what {
            What::Step {
                step,
                entry,
                events,
                outcome,
            } => {
                for e in events {
                    self.handle(Input::Stream {
                        step,
                        event: e.event,
                    });
                }
                self.handle(Input::StepEnded {
                    step,
                    entry,
                    outcome,
                });
                true
            }
            What::Input(input) => {
                self.handle(input);
                true
            }
            What::Inputs(inputs) => {
                for input in inputs {
                    self.handle(input);
                }
                true
            }
            What::Decision(recorded) => {
                self.report.decisions += 1;
                self.expected
                    .pop_front()
                    .is_some_and(|remade| remade == recorded)
            }
            What::Nothing => true,
        }
    }

    /// Applies one input and keeps the decisions it makes, to be compared.
    fn handle(&mut self, input: Input) {
        for effect in self.machine.handle(self.options.overrides.apply(input)) {
            if let Effect::Record(d) = effect {
                self.expected.push_back(d);
            }
        }
    }

    /// The counts of a clean replay; `None` if the machine made a decision the log
    /// does not record.
    pub(crate) fn finish(self) -> Option<ReplayReport> {
        self.expected.is_empty().then_some(self.report)
    }
}
