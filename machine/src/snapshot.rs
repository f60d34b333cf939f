//! A machine at rest as plain data: what a session's derived index keeps so that
//! resuming a long session does not replay its whole branch. Only a machine between
//! runs (idle or finished) has a snapshot; restoring it gives back the same machine
//! (same context and context hash, counters, grants and queues).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::approval::Grants;
use super::context::{Context, ContextItem};
use super::protocol::StopReason;
use super::types::{EntryId, Message};
use super::{Machine, Phase, RunState};

/// The state of a machine between runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineSnapshot {
    /// `None`: no run has started yet (idle); else how the last run finished.
    pub finished: Option<StopReason>,
    /// The context messages, each with the entry it came from.
    pub context: Vec<(Option<EntryId>, Message)>,
    pub run: RunState,
    pub steers: VecDeque<(EntryId, String)>,
    pub follow_ups: VecDeque<(EntryId, String)>,
    pub grants: Grants,
    /// The memory index held for the next run (SPEC.md §28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

impl Machine {
    /// The machine as data, when no run is in progress (`None` while one is: its
    /// state lives in effects in flight and is rebuilt by replay instead).
    pub fn snapshot(&self) -> Option<MachineSnapshot> {
        let finished = match &self.phase {
            Phase::Idle => None,
            Phase::Finished(reason) => Some(reason.clone()),
            Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => return None,
        };
        Some(MachineSnapshot {
            finished,
            context: self
                .context
                .items()
                .map(|(source, message)| (source, message.clone()))
                .collect(),
            run: self.run.clone(),
            steers: self.steers.clone(),
            follow_ups: self.follow_ups.clone(),
            grants: self.grants.clone(),
            memory: self.memory.clone(),
        })
    }

    /// The machine a snapshot was taken of (its context hash is recomputed).
    pub fn from_snapshot(s: MachineSnapshot) -> Machine {
        Machine {
            phase: s.finished.map_or(Phase::Idle, Phase::Finished),
            context: Context::from_items(
                s.context
                    .into_iter()
                    .map(|(source, message)| ContextItem { source, message })
                    .collect(),
            ),
            run: s.run,
            steers: s.steers,
            follow_ups: s.follow_ups,
            grants: s.grants,
            memory: s.memory,
        }
    }
}
