//! The machine's part of memory (SPEC.md §28.4): the memory index recorded before a
//! prompt is held for the run that prompt starts and mixed into its steps' context
//! hash (`start_step`).

use super::{Effect, IgnoreReason, Machine, Phase, ignore};

impl Machine {
    /// The memory index of the next run, between runs: held until a prompt starts
    /// that run (a later index replaces it); no decision. During a run it is
    /// ignored: a run's index is fixed when it starts (SPEC.md §28.4).
    pub(super) fn on_memory_index(&mut self, hash: String, out: &mut Vec<Effect>) {
        match self.phase {
            Phase::Idle | Phase::Finished(_) => self.memory = Some(hash),
            Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => {
                ignore(IgnoreReason::RunInProgress, out)
            }
        }
    }

    /// The memory index hash held for the next run (SPEC.md §28).
    pub fn memory_index(&self) -> Option<&str> {
        self.memory.as_deref()
    }
}
