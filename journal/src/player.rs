//! [`Player`]: the production [`Journal`] driven synchronously from records, for the
//! property tests, replay's and inspect's test logs and the fixture generator
//! ([`super::synth`]). Each record is played as the owner would see it happen (a
//! step's events one by one, then its end; a tool result as its call's end), so a
//! log made here is one the runtime could have written, settlement order included.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use super::{Action, Append, Happening, Journal};
use xcsh_log::{Body, LogError, Record, SessionWriter, setting_record};
use xcsh_machine::{EntryId, Machine, ProviderError, ProviderErrorKind, StepOutcome};

/// A real log: the session writer, each entry stamped 1 ms after the one before.
pub struct TimedLog {
    pub writer: SessionWriter,
    /// The last timestamp given.
    pub ts: DateTime<Utc>,
}

impl TimedLog {
    /// Stamps start 1 ms after `ts`.
    pub fn new(writer: SessionWriter, ts: DateTime<Utc>) -> TimedLog {
        TimedLog { writer, ts }
    }
}

impl Append for TimedLog {
    fn append(&mut self, parent: EntryId, body: &Body) -> Result<EntryId, LogError> {
        self.ts += TimeDelta::milliseconds(1);
        Ok(self.writer.append(parent, self.ts, body)?.0)
    }
}

/// A log in memory: ids counted on from the first, the bodies kept in order.
#[derive(Debug, Clone, Default)]
pub struct MemoryLog {
    pub entries: Vec<(EntryId, Body)>,
    next: u64,
}

impl MemoryLog {
    /// The first entry appended gets id `first`.
    pub fn starting_at(first: EntryId) -> MemoryLog {
        MemoryLog {
            entries: Vec::new(),
            next: first.0,
        }
    }
}

impl Append for MemoryLog {
    fn append(&mut self, _parent: EntryId, body: &Body) -> Result<EntryId, LogError> {
        let id = EntryId(self.next);
        self.next += 1;
        self.entries.push((id, body.clone()));
        Ok(id)
    }
}

/// The journal of one run, driven from records. Its clock stands still but while a
/// step streams: a step's events are taken in at their recorded `ms` after the
/// step started, so their timing is kept.
pub struct Player<L: Append = TimedLog> {
    pub journal: Journal,
    pub log: L,
    now: Duration,
}

impl<L: Append> Player<L> {
    pub fn new(journal: Journal, log: L) -> Player<L> {
        Player {
            journal,
            log,
            now: Duration::ZERO,
        }
    }

    pub fn machine(&self) -> &Machine {
        self.journal.machine()
    }

    pub fn leaf(&self) -> EntryId {
        self.journal.leaf()
    }

    /// Takes in `happening` now; a [`Action::Sync`] is answered with
    /// [`Happening::Synced`] (the log is not synced: the caller syncs at the end).
    /// Returns every action.
    pub fn on(&mut self, happening: Happening) -> Result<Vec<Action>, LogError> {
        let mut actions = self.journal.on(happening, self.now, &mut self.log)?;
        if actions.contains(&Action::Sync) {
            let more = self
                .journal
                .on(Happening::Synced, self.now, &mut self.log)?;
            actions.extend(more);
        }
        Ok(actions)
    }

    /// Plays `record` as the owner would see it happen, and returns every action:
    /// a step of the step streaming as its events then its end (its `message` is
    /// the machine's, whatever the record says; an `aborted` end is an error end,
    /// an abort only when the journal cancelled the step), a tool result of a
    /// running call as its end (held until the calls dispatched before it ended),
    /// an approval answer, a summary and the user's commands as such. Any other
    /// record (a late step or tool result, a recovery, an undo, a branch) is
    /// recorded as it is ([`Happening::Recorded`]).
    pub fn record(&mut self, record: Record) -> Result<Vec<Action>, LogError> {
        match record {
            Record::UserMessage { text, config } => self.on(Happening::Prompt { text, config }),
            Record::Compact { config } => self.on(Happening::Compact { config }),
            Record::Steer { text } => self.on(Happening::Steer(text)),
            Record::FollowUp { text } => self.on(Happening::FollowUp(text)),
            Record::Interrupt {} => self.on(Happening::Interrupt),
            Record::Step(step)
                if self
                    .journal
                    .streaming()
                    .is_some_and(|(open, _)| open == step.step) =>
            {
                let started = self.now;
                let mut actions = Vec::new();
                for e in step.events {
                    self.now = started + Duration::from_millis(e.ms);
                    actions.extend(self.on(Happening::Stream {
                        step: step.step,
                        event: e.event,
                    })?);
                }
                let result = match step.outcome {
                    StepOutcome::Completed => Ok(()),
                    StepOutcome::Failed { error } => Err(error),
                    StepOutcome::Aborted => Err(ProviderError {
                        kind: ProviderErrorKind::Disconnected,
                        message: "the stream ended when it was cancelled".into(),
                    }),
                };
                actions.extend(self.on(Happening::StreamEnded {
                    step: step.step,
                    result,
                })?);
                Ok(actions)
            }
            Record::ToolResult(r) if self.journal.running().any(|id| *id == r.call_id) => {
                self.on(Happening::ToolEnded(*r))
            }
            Record::ApprovalAnswer {
                call_id,
                verdict,
                scope,
                message,
            } => self.on(Happening::Answered {
                call_id,
                verdict,
                scope,
                message,
            }),
            Record::CheckFailed { call_id, content } => self.on(Happening::Checked {
                call_id,
                failure: Some(content),
            }),
            Record::CompactionSummary { summary, error } => {
                self.on(Happening::SummaryEnded(match (summary, error) {
                    (Some(s), _) => Ok(s),
                    (None, Some(e)) => Err(e),
                    (None, None) => Ok(String::new()),
                }))
            }
            Record::LateEvent { step, event } => self.on(Happening::Stream { step, event }),
            Record::MemoryIndex(index) => self.on(Happening::MemoryIndex(index)),
            Record::MemoryExtraction(x) => self.on(Happening::ExtractionEnded {
                answer: x.message.text,
                events: x.events,
                result: match x.outcome {
                    StepOutcome::Completed => Ok(()),
                    StepOutcome::Failed { error } => Err(error),
                    StepOutcome::Aborted => Err(ProviderError {
                        kind: ProviderErrorKind::Disconnected,
                        message: "the stream ended when it was cancelled".into(),
                    }),
                },
            }),
            Record::MemorySnapshot(snapshot) => self.on(Happening::NotesWritten(snapshot)),
            record @ (Record::Session(_)
            | Record::MemoryForget(_)
            | Record::Branch { .. }
            | Record::Label { .. }
            | Record::Undo { .. }
            | setting_record!()
            | Record::Foreign(_)
            | Record::Recovered { .. }
            | Record::Step(_)
            | Record::ToolResult(_)) => self.on(Happening::Recorded(record)),
        }
    }

    /// Continues on a new branch from `at`, where the machine was `machine` (a
    /// settled boundary): a `branch` record first.
    pub fn branch(&mut self, at: EntryId, machine: Machine) -> Result<Vec<Action>, LogError> {
        let from_leaf = self.leaf();
        self.journal = Journal::new(machine, at);
        self.record(Record::Branch { from_leaf })
    }
}
