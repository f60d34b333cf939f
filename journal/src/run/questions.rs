//! The approval questions of a run, one at a time (SPEC.md §18.3): each call the
//! machine routes to the user is checked first (`Action::Check`), then asked about
//! (`Action::Ask`), and the answer, or a failed check, is recorded and applied.

use super::{Action, Journal, Pass};
use crate::RunEvent;
use xcsh_log::{Body, LogError, Record};
use xcsh_machine::{ApprovalScope, CallId, Input, Phase, Verdict};

impl Journal {
    /// The user's answer: recorded, applied, and the next question checked.
    pub(super) fn on_answered(
        &mut self,
        s: &mut Pass<'_>,
        call_id: CallId,
        verdict: Verdict,
        scope: ApprovalScope,
        message: Option<String>,
    ) -> Result<(), LogError> {
        self.asking = None;
        self.checking = false;
        self.append(
            s,
            Body::Record(Record::ApprovalAnswer {
                call_id: call_id.clone(),
                verdict,
                scope,
                message: message.clone(),
            }),
        )?;
        self.apply(
            s,
            Input::Approval {
                call_id,
                verdict,
                scope,
                message,
            },
        )?;
        self.ask_next(s);
        Ok(())
    }

    /// Puts one question at a time, skipping calls the machine no longer waits on
    /// (a grant from an earlier answer covered them, or an interrupt); each is
    /// checked first ([`Action::Check`]).
    pub(super) fn ask_next(&mut self, s: &mut Pass<'_>) {
        if self.asking.is_some() {
            return;
        }
        let waiting = self.awaited();
        while let Some(call) = self.questions.pop_front() {
            if !waiting.contains(&call.id) {
                continue;
            }
            self.asking = Some(call.clone());
            self.checking = true;
            s.out.push(Action::Check { call });
            return;
        }
    }

    /// The calls the machine awaits an answer for.
    fn awaited(&self) -> Vec<CallId> {
        match self.machine.phase() {
            Phase::RunningTools(t) => t.awaiting.iter().map(|c| c.id.clone()).collect(),
            Phase::Idle | Phase::Streaming(_) | Phase::Compacting(_) | Phase::Finished(_) => {
                Vec::new()
            }
        }
    }

    /// The check of the call about to be asked about came back: a call that cannot
    /// succeed settles with its error (recorded, so replay makes the same result)
    /// and the next question is checked; else its question is put. A check of a
    /// call no longer awaited (an interrupt, an answer meanwhile) is dropped.
    pub(super) fn on_checked(
        &mut self,
        s: &mut Pass<'_>,
        call_id: CallId,
        failure: Option<String>,
    ) -> Result<(), LogError> {
        let checked = self.checking && self.asking.as_ref().is_some_and(|c| c.id == call_id);
        let waiting = self.awaited();
        if !checked || !waiting.contains(&call_id) {
            return Ok(());
        }
        self.checking = false;
        let Some(content) = failure else {
            let Some(call) = self.asking.clone() else {
                return Ok(());
            };
            s.emit(RunEvent::ApprovalRequested {
                call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            });
            // The calls behind this one: every other call the machine awaits. Each is
            // in `questions`, or joins it later in this pass: the machine's state
            // already holds every call its effects ask about, one effect at a time.
            let behind = waiting.iter().filter(|id| **id != call.id).count();
            s.out.push(Action::Ask {
                call,
                waiting: u32::try_from(behind).unwrap_or(u32::MAX),
            });
            return Ok(());
        };
        self.asking = None;
        self.append(
            s,
            Body::Record(Record::CheckFailed {
                call_id: call_id.clone(),
                content: content.clone(),
            }),
        )?;
        self.apply(s, Input::CheckFailed { call_id, content })?;
        self.ask_next(s);
        Ok(())
    }
}
