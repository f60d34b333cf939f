//! The usage a settling step counts: the provider's report, or an estimate when it
//! reported none (SPEC.md §9.2), computed from the recorded inputs only so that replay
//! re-makes it.

use super::Machine;
use super::context;
use super::types::{Assembled, StepOutcome, Usage};

impl Machine {
    /// The assistant message of the step that is streaming as its `step` entry
    /// records it when the step ends with `outcome`: the assembly, with the usage the
    /// step counts (an estimate when the provider reported none, SPEC.md §9.2).
    pub fn step_message(&self, outcome: &StepOutcome) -> Option<Assembled> {
        let mut a = self.streaming()?.clone();
        a.usage = self.step_usage(&a, outcome);
        Some(a)
    }

    /// The usage a settling step counts: the provider's; or, when a completed step
    /// reported none (no usage, or every count 0) and the run records a ratio, an
    /// estimate marked `estimated`: the request's context (the machine's context
    /// while the step streams) and the step's output, each ⌈bytes / ratio⌉.
    pub(super) fn step_usage(&self, a: &Assembled, outcome: &StepOutcome) -> Usage {
        let ratio = self
            .run
            .config
            .as_ref()
            .map_or(0, |c| c.estimate_bytes_per_token);
        let completed = match outcome {
            StepOutcome::Completed => true,
            StepOutcome::Failed { .. } | StepOutcome::Aborted => false,
        };
        if ratio == 0 || a.usage.spend() > 0 || !completed {
            return a.usage;
        }
        let output = context::output_bytes(&a.text, &a.reasoning, &a.tool_calls);
        Usage {
            input_tokens: context::estimate_tokens(self.context.estimate_bytes(), ratio),
            output_tokens: context::estimate_tokens(output, ratio),
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            estimated: true,
        }
    }
}
