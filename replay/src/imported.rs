//! Replaying an imported session (SPEC.md §33): another agent made its decisions,
//! so today's machine cannot be asked to re-make them. What the log itself can show
//! is checked instead: the hash chain (verified by the reader), that the context each
//! step was requested with rebuilds from the entries before it (its message count
//! and hash, as `step_started` recorded them), and that the context rebuilds at every
//! leaf.

use std::collections::HashSet;

use xcsh_log::foreign::ImportedFrom;
use xcsh_log::{Body, LogError, SessionLog, rebuild_context};
use xcsh_machine::{Context, Decision, EntryId};

/// What [`check_imported`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedCheck {
    pub imported: ImportedFrom,
    pub entries: usize,
    /// Steps whose recorded request context was rebuilt.
    pub steps: usize,
    pub leaves: usize,
    /// Steps whose context does not rebuild as recorded.
    pub mismatches: Vec<ContextMismatch>,
}

/// A `step_started` whose recorded context differs from the rebuilt one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextMismatch {
    pub step_started: EntryId,
    pub recorded_messages: u32,
    pub rebuilt_messages: usize,
}

/// The checks of an imported session; `None` for a session that was not imported.
pub fn check_imported(log: &SessionLog) -> Result<Option<ImportedCheck>, LogError> {
    let Some(imported) = log.header().imported.clone() else {
        return Ok(None);
    };
    let mut steps = 0;
    let mut mismatches = Vec::new();
    let mut parents = HashSet::new();
    for e in &log.entries {
        parents.extend(e.parent);
        if let (
            Body::Decision(Decision::StepStarted {
                messages,
                context_hash,
                ..
            }),
            Some(parent),
        ) = (&e.body, e.parent)
        {
            steps += 1;
            let ctx = Context::from_items(rebuild_context(log, parent)?);
            if ctx.len() != *messages as usize || ctx.hash_hex() != *context_hash {
                mismatches.push(ContextMismatch {
                    step_started: e.id,
                    recorded_messages: *messages,
                    rebuilt_messages: ctx.len(),
                });
            }
        }
    }
    let mut leaves = 0;
    for e in log.entries.iter().filter(|e| !parents.contains(&e.id)) {
        rebuild_context(log, e.id)?;
        leaves += 1;
    }
    Ok(Some(ImportedCheck {
        imported,
        entries: log.entries.len(),
        steps,
        leaves,
        mismatches,
    }))
}
