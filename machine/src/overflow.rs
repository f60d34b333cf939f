//! A request the provider refuses as too long for the model's context: compact, then
//! retry the step once (SPEC.md §9.16).

use super::protocol::{Effect, StopReason};
use super::types::ProviderError;
use super::{Machine, Phase};

impl Machine {
    /// The provider refused the streaming step as too long for the context (SPEC.md
    /// §9.16): compact and retry the step once; with nothing to compact, or when the
    /// refused step was that retry, the run stops `context_overflow` (and with the
    /// spend budget used up, `max_tokens`).
    pub(super) fn on_overflow(
        &mut self,
        error: ProviderError,
        retried: bool,
        out: &mut Vec<Effect>,
    ) {
        if let Some(reason) = self.over_budget(self.limits()) {
            return self.finish(reason, out);
        }
        if retried {
            return self.finish(
                StopReason::ContextOverflow {
                    error,
                    compacted: true,
                },
                out,
            );
        }
        match self.middle_section() {
            Some((upto, first_kept)) => {
                let tokens_before = self.context.estimate_tokens();
                self.start_compaction(upto, first_kept, tokens_before, false, true, out);
            }
            None => self.finish(
                StopReason::ContextOverflow {
                    error,
                    compacted: false,
                },
                out,
            ),
        }
    }

    /// After the compaction an overflow made: the refused step starts again, over the
    /// compacted context. It takes the refused step's place in the window, and
    /// nothing else is checked or delivered first (the refused request cost nothing).
    pub(super) fn retry_step(&mut self, out: &mut Vec<Effect>) {
        self.run.steps_in_window = self.run.steps_in_window.saturating_sub(1);
        self.start_step(out);
        if let Phase::Streaming(s) = &mut self.phase {
            s.retry = true;
        }
    }
}
