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
        | Record::Undo { .. }
        | Record::Workspace { .. } => Vec::new(),
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
        } => vec![Input::Approval {
            call_id: call_id.clone(),
            verdict: *verdict,
            scope: *scope,
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
