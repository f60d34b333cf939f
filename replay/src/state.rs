//! `Replayed`: the machine's state at an entry of a replayed branch (time travel with
//! `--until`): phase, run counters, pending messages, the context, and the decisions
//! the machine has made that the log records after that entry.

use serde::Serialize;
use xcsh_machine::{Decision, Machine, Pending, RunConfig, Usage};

use crate::summary::{EntryRef, PhaseKind, message_summary, phase_name};

/// How many of the last context messages a snapshot shows.
pub const LAST_MESSAGES: usize = 5;

/// The machine's state after an entry was replayed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Replayed {
    /// The entry replay stopped after.
    pub entry: EntryRef,
    pub phase: String,
    pub phase_kind: PhaseKind,
    pub run: RunSnapshot,
    pub pending: Pending,
    pub context: ContextSnapshot,
    /// Decisions already made that the log records after this entry (an input's
    /// decisions come right after it).
    pub owed: Vec<Decision>,
}

/// The counters of the run in progress (or of the last run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunSnapshot {
    /// The run's configuration as recorded (with `--set` overrides applied); `None`
    /// before the first prompt.
    pub config: Option<RunConfig>,
    pub steps: u32,
    pub steps_in_window: u32,
    pub usage: Usage,
    /// The spend counted against `max_tokens`.
    pub spent: u64,
    pub last_input_tokens: u64,
    pub compactions: u32,
}

/// The model context: its size, hash, and its last messages summarized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextSnapshot {
    pub messages: usize,
    pub hash: String,
    pub last: Vec<MessageRef>,
}

/// One context message, summarized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageRef {
    pub index: usize,
    /// The entry it came from, where it has one (an assistant message's step).
    pub source: Option<xcsh_machine::EntryId>,
    pub role: String,
    pub summary: String,
}

impl Replayed {
    pub(crate) fn capture(entry: EntryRef, machine: &Machine, owed: Vec<Decision>) -> Replayed {
        let run = machine.run();
        let count = machine.context().len();
        let from = count.saturating_sub(LAST_MESSAGES);
        let last = machine
            .context()
            .items()
            .skip(from)
            .enumerate()
            .map(|(i, (source, message))| {
                let (role, summary) = message_summary(message);
                MessageRef {
                    index: from + i,
                    source,
                    role,
                    summary,
                }
            })
            .collect();
        Replayed {
            entry,
            phase: phase_name(machine.phase()),
            phase_kind: PhaseKind::of(machine.phase()),
            run: RunSnapshot {
                config: run.config.clone(),
                steps: run.steps,
                steps_in_window: run.steps_in_window,
                usage: run.usage,
                spent: run.usage.spend(),
                last_input_tokens: run.last_input_tokens,
                compactions: run.compactions,
            },
            pending: machine.pending(),
            context: ContextSnapshot {
                messages: count,
                hash: machine.context().hash_hex(),
                last,
            },
            owed,
        }
    }
}
