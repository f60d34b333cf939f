//! From entries back to machine inputs and decisions: what resume and replay feed
//! the machine, and what they compare its decisions with. [`RecordedInput::of`] is
//! the one conversion of a record to the inputs it recorded; every reader of
//! inputs (resume, `rebuild_machine`, replay, the property tests) goes through it.

use super::entry::{Body, Entry, Record, StepRecord, TimedEvent, ToolResultRecord};
use xcsh_machine::{Assembled, Decision, EntryId, Input, StepNo, StepOutcome};

/// The machine inputs one input entry recorded, in the order they were applied.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordedInput {
    /// The one input of every input entry but a step.
    One(Input),
    /// A step entry: its stream events (`Input::Stream`), then its end
    /// (`Input::StepEnded`), kept apart so that they are made one at a time.
    Step {
        step: StepNo,
        entry: EntryId,
        events: Vec<TimedEvent>,
        outcome: StepOutcome,
    },
}

impl RecordedInput {
    /// The inputs of `record` written as entry `id`; `None` for the records that
    /// are no input (the header, structure, an `undo` without a note). Takes the
    /// record: its text and events move into the inputs.
    pub fn of(id: EntryId, record: Record) -> Option<RecordedInput> {
        let one = match record {
            Record::Session(_)
            | Record::Branch { .. }
            | Record::Label { .. }
            | Record::Undo { note: None, .. }
            | crate::setting_record!()
            | Record::MemoryExtraction(_)
            | Record::MemorySnapshot(_)
            | Record::MemoryForget(_)
            | Record::Foreign(_) => return None,
            Record::MemoryIndex(m) => Input::MemoryIndex { hash: m.hash },
            Record::Step(step) => {
                return Some(RecordedInput::Step {
                    step: step.step,
                    entry: id,
                    events: step.events,
                    outcome: step.outcome,
                });
            }
            Record::Undo {
                note: Some(note), ..
            } => Input::Undo { note },
            Record::UserMessage { text, config } => Input::Prompt { text, config },
            Record::Steer { text } => Input::Steer { entry: id, text },
            Record::FollowUp { text } => Input::FollowUp { entry: id, text },
            Record::Interrupt {} => Input::Interrupt,
            Record::ToolResult(r) => Input::ToolSettled {
                call_id: r.call_id,
                outcome: r.outcome,
                spent: r.child.and_then(|c| c.usage),
            },
            Record::CompactionSummary { summary, error } => Input::CompactionDone {
                result: match (summary, error) {
                    (Some(s), _) => Ok(s),
                    (None, Some(e)) => Err(e),
                    (None, None) => Ok(String::new()),
                },
            },
            Record::Recovered { .. } => Input::Recover,
            Record::LateEvent { step, event } => Input::Stream { step, event },
            Record::Compact { config } => Input::Compact { config },
            Record::ApprovalAnswer {
                call_id,
                verdict,
                scope,
                message,
            } => Input::Approval {
                call_id,
                verdict,
                scope,
                message,
            },
            Record::CheckFailed { call_id, content } => Input::CheckFailed { call_id, content },
        };
        Some(RecordedInput::One(one))
    }

    /// [`RecordedInput::of`] the entry's record (`None` for decisions and unknown
    /// entries).
    pub fn of_entry(entry: Entry) -> Option<RecordedInput> {
        match entry.body {
            Body::Record(r) => RecordedInput::of(entry.id, r),
            Body::Decision(_) | Body::Unknown { .. } => None,
        }
    }

    /// [`RecordedInput::of_entry`] for an entry that is kept: copies only what the
    /// inputs carry (a step's events and outcome, not its assembled message; a tool
    /// result's outcome, not its changes).
    pub fn cloned(entry: &Entry) -> Option<RecordedInput> {
        let record = match &entry.body {
            Body::Record(Record::Step(s)) => Record::Step(Box::new(StepRecord {
                step: s.step,
                events: s.events.clone(),
                outcome: s.outcome.clone(),
                message: Assembled::default(),
            })),
            Body::Record(Record::ToolResult(r)) => Record::ToolResult(Box::new(ToolResultRecord {
                call_id: r.call_id.clone(),
                name: String::new(),
                outcome: r.outcome.clone(),
                duration_ms: 0,
                changes: Vec::new(),
                // Its usage is an input (what a sub-agent spent, SPEC.md §29.3).
                child: r.child.clone(),
            })),
            Body::Record(r) if r.is_input() => r.clone(),
            Body::Record(_) | Body::Decision(_) | Body::Unknown { .. } => return None,
        };
        RecordedInput::of(entry.id, record)
    }
}

impl IntoIterator for RecordedInput {
    type Item = Input;
    type IntoIter = Inputs;

    fn into_iter(self) -> Inputs {
        match self {
            RecordedInput::One(input) => Inputs {
                step: None,
                last: Some(input),
            },
            RecordedInput::Step {
                step,
                entry,
                events,
                outcome,
            } => Inputs {
                step: Some((step, events.into_iter())),
                last: Some(Input::StepEnded {
                    step,
                    entry,
                    outcome,
                }),
            },
        }
    }
}

/// The inputs of a [`RecordedInput`], in order, made as they are taken.
#[derive(Debug)]
pub struct Inputs {
    /// A step's stream events still to come.
    step: Option<(StepNo, std::vec::IntoIter<TimedEvent>)>,
    /// The one input, or a step's end.
    last: Option<Input>,
}

impl Iterator for Inputs {
    type Item = Input;

    fn next(&mut self) -> Option<Input> {
        if let Some((step, events)) = &mut self.step {
            if let Some(e) = events.next() {
                return Some(Input::Stream {
                    step: *step,
                    event: e.event,
                });
            }
            self.step = None;
        }
        self.last.take()
    }
}

/// The decision an entry recorded, if it is one.
pub fn entry_decision(entry: &Entry) -> Option<&Decision> {
    match &entry.body {
        Body::Decision(d) => Some(d),
        Body::Record(_) | Body::Unknown { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcsh_machine::CallId;

    /// Every input the entry recorded, taken from a copy of it and from the entry.
    fn both(entry: &Entry) -> (Vec<Input>, Vec<Input>) {
        let cloned = RecordedInput::cloned(entry).into_iter().flatten().collect();
        let owned = RecordedInput::of_entry(entry.clone())
            .into_iter()
            .flatten()
            .collect();
        (cloned, owned)
    }

    /// An `undo` entry written before the note existed (its next prompt carried the
    /// note instead) stays structure, so old logs replay as they ran; one with a note
    /// is the machine's `Undo` input.
    #[test]
    fn an_undo_entry_is_an_input_only_with_a_note() {
        let old = r#"{"v":1,"id":9,"parent":8,"ts":"2026-11-30T04:05:20.189Z","type":"undo","data":{"run":1,"files":["/w/f.txt"]},"hash":"0000000000000000000000000000000000000000000000000000000000000000"}"#;
        let new = r#"{"v":1,"id":9,"parent":8,"ts":"2026-11-30T04:05:20.189Z","type":"undo","data":{"run":1,"files":["/w/f.txt"],"note":"[Note: reverted]"},"hash":"0000000000000000000000000000000000000000000000000000000000000000"}"#;
        let old = Entry::decode(old).unwrap();
        let new = Entry::decode(new).unwrap();
        assert!(!old.body.is_input());
        assert_eq!(both(&old), (Vec::new(), Vec::new()));
        assert!(new.body.is_input());
        let note = vec![Input::Undo {
            note: "[Note: reverted]".into(),
        }];
        assert_eq!(both(&new), (note.clone(), note));
    }

    /// An `approval_answer` written before denials carried a message reads with
    /// none, and writes back byte for byte; one with a message feeds it to the
    /// machine.
    #[test]
    fn an_approval_answer_without_a_message_reads_as_none() {
        let old = r#"{"v":1,"id":5,"parent":4,"ts":"2026-11-30T04:05:20.189Z","type":"approval_answer","data":{"call_id":"c1","verdict":"deny","scope":"once"},"hash":"0000000000000000000000000000000000000000000000000000000000000000"}"#;
        let new = r#"{"v":1,"id":5,"parent":4,"ts":"2026-11-30T04:05:20.189Z","type":"approval_answer","data":{"call_id":"c1","verdict":"deny","scope":"once","message":"use b.txt"},"hash":"0000000000000000000000000000000000000000000000000000000000000000"}"#;
        let old_entry = Entry::decode(old).unwrap();
        let new_entry = Entry::decode(new).unwrap();
        let input = |message: Option<&str>| Input::Approval {
            call_id: CallId("c1".into()),
            verdict: xcsh_machine::Verdict::Deny,
            scope: xcsh_machine::ApprovalScope::Once,
            message: message.map(str::to_owned),
        };
        assert_eq!(both(&old_entry), (vec![input(None)], vec![input(None)]));
        let message = vec![input(Some("use b.txt"))];
        assert_eq!(both(&new_entry), (message.clone(), message));
        // Written back, each line is the same up to its hash.
        for (entry, line) in [(&old_entry, old), (&new_entry, new)] {
            let (encoded, _) = Entry::encode(entry.id, entry.parent, None, entry.ts, &entry.body);
            let encoded = String::from_utf8(encoded).unwrap();
            let cut = |l: &str| l[..l.find(",\"hash\"").unwrap()].to_owned();
            assert_eq!(cut(&encoded), cut(line));
        }
    }

    /// Over a generated session with every kind of entry: an entry records inputs
    /// exactly when it is an input, and a kept entry's copy gives the same inputs as
    /// the entry itself; a step gives its events, then its end.
    #[test]
    fn a_copied_entry_records_the_inputs_of_the_entry() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = crate::writer::testutil::generated(dir.path());
        let log = crate::read_session(&path).unwrap();
        let mut steps = 0;
        for entry in &log.entries {
            let (cloned, owned) = both(entry);
            assert_eq!(cloned, owned, "entry {}", entry.id);
            assert_eq!(
                !owned.is_empty(),
                entry.body.is_input(),
                "entry {}",
                entry.id
            );
            if let Body::Record(Record::Step(s)) = &entry.body {
                steps += 1;
                assert_eq!(owned.len(), s.events.len() + 1);
                assert!(
                    matches!(owned.last(), Some(Input::StepEnded { entry: e, .. }) if *e == entry.id)
                );
            }
        }
        assert!(steps > 0);
    }
}
