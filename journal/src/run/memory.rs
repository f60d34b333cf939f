//! The memory side of a run (SPEC.md §28), in the journal's order: the index
//! recorded before the prompt (then applied), extraction started once the run
//! finished `completed` (after a sync), its end recorded as a `memory_extraction`
//! entry, the notes it proposes written, and the `memory_snapshot` that follows.

use std::time::Duration;

use super::{Action, Journal, Pass};
use crate::RunEvent;
use xcsh_log::memory::{
    ExtractionRecord, MemoryIndexRecord, ProposedNote, SnapshotRecord, parse_extraction,
};
use xcsh_log::{Body, LogError, Record, TimedEvent};
use xcsh_machine::{
    Assembler, Input, Message, Phase, ProviderError, StepOutcome, StopReason, UserOrigin,
};

/// Where the run is with its memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MemoryStage {
    /// No memory index was recorded for this run: nothing to do.
    Off,
    /// The index was recorded; extraction follows a completed finish.
    Armed,
    /// The extraction call is in flight (`cancelled`: the journal asked to stop it).
    Extracting { started: Duration, cancelled: bool },
    /// The proposed notes are being written.
    Writing,
    /// Extraction is over (done, skipped, failed or interrupted).
    Done,
}

impl MemoryStage {
    /// Extraction or its writes are still under way: the run is not over.
    pub(super) fn busy(self) -> bool {
        match self {
            MemoryStage::Extracting { .. } | MemoryStage::Writing => true,
            MemoryStage::Off | MemoryStage::Armed | MemoryStage::Done => false,
        }
    }
}

impl Journal {
    /// `memory_index`: recorded, then applied; a run that starts after it extracts.
    pub(super) fn on_memory_index(
        &mut self,
        s: &mut Pass<'_>,
        index: MemoryIndexRecord,
    ) -> Result<(), LogError> {
        let hash = index.hash.clone();
        s.emit(RunEvent::MemoryIndex {
            notes: u32::try_from(index.notes.len()).unwrap_or(u32::MAX),
            hash: hash.clone(),
        });
        self.append(s, Body::Record(Record::MemoryIndex(index)))?;
        let between_runs = !self.machine.is_running();
        self.apply(s, Input::MemoryIndex { hash })?;
        if between_runs && self.memory == MemoryStage::Off {
            self.memory = MemoryStage::Armed;
        }
        Ok(())
    }

    /// After an input was applied: a run with memory that just finished starts its
    /// extraction when it completed; any other stop skips it, with a notice.
    pub(super) fn after_apply(&mut self, s: &mut Pass<'_>) {
        if self.memory != MemoryStage::Armed {
            return;
        }
        let reason = match self.machine.phase() {
            Phase::Finished(reason) => reason.clone(),
            Phase::Idle | Phase::Streaming(_) | Phase::RunningTools(_) | Phase::Compacting(_) => {
                return;
            }
        };
        match reason {
            StopReason::Completed => {
                self.memory = MemoryStage::Extracting {
                    started: s.now,
                    cancelled: false,
                };
                s.out.push(Action::Sync);
                s.out.push(Action::StartExtraction {
                    turn: self.turn_messages(),
                });
            }
            StopReason::MaxSteps { .. }
            | StopReason::MaxTokens { .. }
            | StopReason::OutputLimit
            | StopReason::ContentFilter
            | StopReason::Interrupted
            | StopReason::ProviderError { .. }
            | StopReason::ContextOverflow { .. }
            | StopReason::Crashed => {
                self.memory = MemoryStage::Done;
                s.emit(RunEvent::Notice {
                    message: format!(
                        "memory: no extraction, the turn did not complete ({})",
                        reason.kind()
                    ),
                });
            }
        }
    }

    /// The turn the extraction reads: the context from the run's prompt on (from
    /// the summary on, when a compaction summarized the prompt away).
    fn turn_messages(&self) -> Vec<Message> {
        let messages = self.machine.context().messages();
        let from = messages
            .iter()
            .rposition(|m| {
                matches!(
                    m,
                    Message::User {
                        origin: UserOrigin::Prompt,
                        ..
                    }
                )
            })
            .or_else(|| {
                messages
                    .iter()
                    .rposition(|m| matches!(m, Message::Summary { .. }))
            })
            .unwrap_or(0);
        messages.iter().skip(from).cloned().collect()
    }

    /// An interrupt while extracting cancels it (the machine, finished, ignores the
    /// interrupt itself).
    pub(super) fn interrupt_memory(&mut self, s: &mut Pass<'_>) {
        if let MemoryStage::Extracting { cancelled, .. } = &mut self.memory
            && !*cancelled
        {
            *cancelled = true;
            s.out.push(Action::CancelExtraction);
        }
    }

    /// The extraction call ended: its events, how, and its answer's text with the
    /// secrets redacted (by the owner). Recorded as `memory_extraction`; its valid notes are then written.
    pub(super) fn on_extraction_end(
        &mut self,
        s: &mut Pass<'_>,
        events: Vec<TimedEvent>,
        result: Result<(), ProviderError>,
        answer: &str,
    ) -> Result<(), LogError> {
        let MemoryStage::Extracting { cancelled, .. } = self.memory else {
            return Ok(());
        };
        let outcome = match result {
            Ok(()) => StepOutcome::Completed,
            Err(_) if cancelled => StepOutcome::Aborted,
            Err(error) => StepOutcome::Failed { error },
        };
        let mut assembler = Assembler::default();
        for e in &events {
            assembler.push(&e.event);
        }
        let message = assembler.finish();
        let (notes, problems) = match &outcome {
            StepOutcome::Completed => parse_extraction(answer),
            StepOutcome::Failed { .. } | StepOutcome::Aborted => (Vec::new(), Vec::new()),
        };
        s.emit(RunEvent::MemoryExtracted {
            outcome: match outcome {
                StepOutcome::Completed => "completed",
                StepOutcome::Failed { .. } => "failed",
                StepOutcome::Aborted => "aborted",
            },
            usage: message.usage,
            notes: notes.iter().map(note_name).collect(),
            problems: problems.clone(),
        });
        match &outcome {
            StepOutcome::Failed { error } => s.emit(RunEvent::Notice {
                message: format!(
                    "memory: the extraction failed ({}); the turn is unaffected",
                    error.message
                ),
            }),
            StepOutcome::Aborted => s.emit(RunEvent::Notice {
                message: "memory: the extraction was interrupted; no note was written".into(),
            }),
            StepOutcome::Completed => {}
        }
        for problem in &problems {
            s.emit(RunEvent::Notice {
                message: format!("memory: {problem}"),
            });
        }
        self.append(
            s,
            Body::Record(Record::MemoryExtraction(Box::new(ExtractionRecord {
                events,
                outcome,
                message,
                notes: notes.clone(),
                problems,
            }))),
        )?;
        if notes.is_empty() {
            self.memory = MemoryStage::Done;
        } else {
            self.memory = MemoryStage::Writing;
            s.out.push(Action::WriteNotes(notes));
        }
        Ok(())
    }

    /// The notes were written: the snapshot is recorded, and the run is over.
    pub(super) fn on_notes_written(
        &mut self,
        s: &mut Pass<'_>,
        snapshot: SnapshotRecord,
    ) -> Result<(), LogError> {
        if self.memory != MemoryStage::Writing {
            return Ok(());
        }
        s.emit(RunEvent::MemoryWritten {
            written: snapshot
                .written
                .iter()
                .map(|n| format!("{}/{}", n.scope.name(), n.name))
                .collect(),
            errors: snapshot.errors.clone(),
        });
        self.append(s, Body::Record(Record::MemorySnapshot(snapshot)))?;
        self.memory = MemoryStage::Done;
        Ok(())
    }
}

fn note_name(n: &ProposedNote) -> String {
    format!("{}/{}", n.scope.name(), n.name)
}
