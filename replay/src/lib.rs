//! xcsh-replay: re-runs the current machine over a recorded branch and checks that
//! it re-makes every recorded decision, payload included; reports the first
//! divergence with the entry, the input that led to it and a readable diff.

use std::collections::VecDeque;

use serde::Serialize;
use xcsh_core::log::{Dag, LogError, SessionLog, entry_decision, entry_inputs};
use xcsh_core::machine::{Decision, Effect, EntryId, Machine, Phase};

/// A clean replay: what was fed and compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReplayReport {
    pub entries: usize,
    pub inputs: usize,
    pub decisions: usize,
}

/// What kind of difference replay found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// The machine re-made a different decision than the one recorded here.
    DecisionDiffers,
    /// The log records a decision the machine did not make.
    UnexpectedDecision,
    /// The machine made a decision the log does not record (before this entry).
    MissingDecision,
}

/// The first place where today's machine decides differently from the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Divergence {
    pub kind: DivergenceKind,
    /// The entry where the difference shows (None: the end of the branch).
    pub entry: Option<EntryId>,
    pub line: Option<u32>,
    /// The last input entry applied before the divergence.
    pub after_input: Option<EntryId>,
    pub recorded: Option<Decision>,
    pub remade: Option<Decision>,
    /// The machine's phase when it diverged.
    pub phase: String,
    /// A line diff of the recorded and re-made decisions (pretty JSON).
    pub diff: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("replay diverged at {}: {:?}", .0.entry.map(|e| format!("entry {e}")).unwrap_or_else(|| "the end of the branch".into()), .0.kind)]
    Diverged(Box<Divergence>),
}

/// Replays the branch ending at `leaf`.
pub fn replay_branch(log: &SessionLog, leaf: EntryId) -> Result<ReplayReport, ReplayError> {
    let dag = Dag::from_log(log);
    let path = dag.path_to_root(leaf)?;
    let mut machine = Machine::new();
    let mut expected: VecDeque<Decision> = VecDeque::new();
    let mut report = ReplayReport {
        entries: 0,
        inputs: 0,
        decisions: 0,
    };
    let mut after_input = None;
    for id in path {
        let entry = log.get(id).ok_or(LogError::UnknownEntry {
            path: log.path.clone(),
            id,
        })?;
        report.entries += 1;
        let diverged =
            |kind, recorded: Option<&Decision>, remade: Option<Decision>, m: &Machine| {
                ReplayError::Diverged(Box::new(Divergence {
                    kind,
                    entry: Some(id),
                    line: log.line_of(id),
                    after_input,
                    diff: diff(recorded, remade.as_ref()),
                    recorded: recorded.cloned(),
                    remade,
                    phase: phase_name(m.phase()),
                }))
            };
        if entry.body.is_input() {
            if let Some(missing) = expected.pop_front() {
                return Err(diverged(
                    DivergenceKind::MissingDecision,
                    None,
                    Some(missing),
                    &machine,
                ));
            }
            report.inputs += 1;
            for input in entry_inputs(entry) {
                for effect in machine.handle(input) {
                    if let Effect::Record(d) = effect {
                        expected.push_back(d);
                    }
                }
            }
            after_input = Some(id);
        } else if let Some(recorded) = entry_decision(entry) {
            report.decisions += 1;
            match expected.pop_front() {
                Some(remade) if remade == *recorded => {}
                Some(remade) => {
                    return Err(diverged(
                        DivergenceKind::DecisionDiffers,
                        Some(recorded),
                        Some(remade),
                        &machine,
                    ));
                }
                None => {
                    return Err(diverged(
                        DivergenceKind::UnexpectedDecision,
                        Some(recorded),
                        None,
                        &machine,
                    ));
                }
            }
        }
        // Structure (session, branch, label) and unknown entries neither feed nor
        // compare anything.
    }
    if let Some(missing) = expected.pop_front() {
        return Err(ReplayError::Diverged(Box::new(Divergence {
            kind: DivergenceKind::MissingDecision,
            entry: None,
            line: None,
            after_input,
            diff: diff(None, Some(&missing)),
            recorded: None,
            remade: Some(missing),
            phase: phase_name(machine.phase()),
        })));
    }
    Ok(report)
}

fn phase_name(phase: &Phase) -> String {
    match phase {
        Phase::Idle => "idle".into(),
        Phase::Streaming(s) => format!("streaming step {}", s.step),
        Phase::RunningTools(t) => format!(
            "running {} tool call(s) of step {}",
            t.pending.len(),
            t.step
        ),
        Phase::Compacting(_) => "compacting".into(),
        Phase::Finished(r) => format!("finished ({r:?})"),
    }
}

fn pretty(d: Option<&Decision>) -> String {
    d.map(|d| serde_json::to_string_pretty(d).unwrap_or_default() + "\n")
        .unwrap_or_default()
}

fn diff(recorded: Option<&Decision>, remade: Option<&Decision>) -> String {
    let (a, b) = (pretty(recorded), pretty(remade));
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .header("recorded", "re-made")
        .to_string()
}

#[cfg(test)]
mod tests;
