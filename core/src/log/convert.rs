//! From entries back to machine inputs and decisions: what resume and replay feed
//! the machine, and what they compare its decisions with.

use super::entry::{Body, Entry, Record};
use crate::machine::{Decision, EntryId, Input};

/// The inputs an entry recorded, in the order they were applied: a `step` entry
/// yields its stream events and then its end. Empty for decisions and structure.
pub fn entry_inputs(entry: &Entry) -> Vec<Input> {
    match &entry.body {
        Body::Record(r) => record_inputs(entry.id, r),
        Body::Decision(_) | Body::Unknown { .. } => Vec::new(),
    }
}

/// The inputs of `record` written as entry `id`.
pub fn record_inputs(id: EntryId, record: &Record) -> Vec<Input> {
    match record {
        Record::Session(_)
        | Record::Branch { .. }
        | Record::Label { .. }
        | Record::Undo { note: None, .. }
        | Record::Workspace { .. } => Vec::new(),
        Record::Undo {
            note: Some(note), ..
        } => vec![Input::Undo { note: note.clone() }],
        Record::UserMessage { text, config } => vec![Input::Prompt {
            text: text.clone(),
            config: config.clone(),
        }],
        Record::Steer { text } => vec![Input::Steer {
            entry: id,
            text: text.clone(),
        }],
        Record::FollowUp { text } => vec![Input::FollowUp {
            entry: id,
            text: text.clone(),
        }],
        Record::Interrupt {} => vec![Input::Interrupt],
        Record::Step(step) => {
            let mut inputs: Vec<Input> = step
                .events
                .iter()
                .map(|e| Input::Stream {
                    step: step.step,
                    event: e.event.clone(),
                })
                .collect();
            inputs.push(Input::StepEnded {
                step: step.step,
                entry: id,
                outcome: step.outcome.clone(),
            });
            inputs
        }
        Record::ToolResult(r) => vec![Input::ToolSettled {
            call_id: r.call_id.clone(),
            outcome: r.outcome.clone(),
        }],
        Record::CompactionSummary { summary, error } => vec![Input::CompactionDone {
            result: match (summary, error) {
                (Some(s), _) => Ok(s.clone()),
                (None, Some(e)) => Err(e.clone()),
                (None, None) => Ok(String::new()),
            },
        }],
        Record::Recovered { .. } => vec![Input::Recover],
        Record::LateEvent { step, event } => vec![Input::Stream {
            step: *step,
            event: event.clone(),
        }],
        Record::Compact { config } => vec![Input::Compact {
            config: config.clone(),
        }],
        Record::ApprovalAnswer {
            call_id,
            verdict,
            scope,
            message,
        } => vec![Input::Approval {
            call_id: call_id.clone(),
            verdict: *verdict,
            scope: *scope,
            message: message.clone(),
        }],
    }
}

/// [`entry_inputs`], taking the entry: its text and events move into the inputs
/// instead of being copied (what resuming, which drops the entries, uses).
pub fn into_inputs(entry: Entry) -> Vec<Input> {
    let id = entry.id;
    let record = match entry.body {
        Body::Record(r) => r,
        Body::Decision(_) | Body::Unknown { .. } => return Vec::new(),
    };
    match record {
        Record::UserMessage { text, config } => vec![Input::Prompt { text, config }],
        Record::Steer { text } => vec![Input::Steer { entry: id, text }],
        Record::FollowUp { text } => vec![Input::FollowUp { entry: id, text }],
        Record::Step(step) => {
            let mut inputs: Vec<Input> = Vec::with_capacity(step.events.len() + 1);
            inputs.extend(step.events.into_iter().map(|e| Input::Stream {
                step: step.step,
                event: e.event,
            }));
            inputs.push(Input::StepEnded {
                step: step.step,
                entry: id,
                outcome: step.outcome,
            });
            inputs
        }
        Record::ToolResult(r) => vec![Input::ToolSettled {
            call_id: r.call_id,
            outcome: r.outcome,
        }],
        other => record_inputs(id, &other),
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
    use crate::machine::CallId;

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
        assert_eq!(entry_inputs(&old), Vec::new());
        assert!(new.body.is_input());
        assert_eq!(
            entry_inputs(&new),
            vec![Input::Undo {
                note: "[Note: reverted]".into()
            }]
        );
        assert_eq!(into_inputs(new.clone()), entry_inputs(&new));
        assert_eq!(into_inputs(old), Vec::new());
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
            verdict: crate::machine::Verdict::Deny,
            scope: crate::machine::ApprovalScope::Once,
            message: message.map(str::to_owned),
        };
        assert_eq!(entry_inputs(&old_entry), vec![input(None)]);
        assert_eq!(into_inputs(old_entry.clone()), vec![input(None)]);
        assert_eq!(entry_inputs(&new_entry), vec![input(Some("use b.txt"))]);
        assert_eq!(
            into_inputs(new_entry.clone()),
            vec![input(Some("use b.txt"))]
        );
        // Written back, each line is the same up to its hash.
        for (entry, line) in [(&old_entry, old), (&new_entry, new)] {
            let (encoded, _) = Entry::encode(entry.id, entry.parent, None, entry.ts, &entry.body);
            let encoded = String::from_utf8(encoded).unwrap();
            let cut = |l: &str| l[..l.find(",\"hash\"").unwrap()].to_owned();
            assert_eq!(cut(&encoded), cut(line));
        }
    }
}
