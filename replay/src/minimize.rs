//! `--minimize`: delta debugging (Zeller's ddmin) that cuts a diverging branch down to
//! a small log showing the same first divergence (same kind, same decision types,
//! same phase kind), first over whole runs, then over steps, then over single tool
//! calls.
//!
//! A candidate keeps some of the branch's input entries. It is not the old log with
//! lines deleted (a cut step would change every later `step_started`'s step number and
//! context hash, so every cut would diverge earlier): it is the log a recording would
//! have written for those inputs. The kept inputs are fed to a fresh machine (with the
//! recorded configs, no `--set`), step entries are renumbered to the step the machine
//! is streaming, and the decisions it makes are written, except where the original
//! log recorded something else after the same input: there the recorded difference is
//! carried over (a changed field onto the re-made decision, a decision of another type
//! or one the machine does not make as recorded, a decision the log lacks left out).
//! The branch is cut after the divergence, since nothing later can matter. The result
//! is written through a fresh `SessionWriter` (new ids and hashes; ids inside bodies
//! point at the kept entries) and replayed once more to confirm it.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use xcsh_log::{
    Body, Entry, EntryHash, FORMAT_VERSION, Record, RecordedInput, SessionLog, entry_decision,
};
use xcsh_machine::{Assembler, Decision, Effect, EntryId, Machine, Phase, StepNo, StreamEvent};

use crate::fields::differences;
use crate::rewrite::{IdMap, write_chain};
use crate::{
    Divergence, DivergenceKind, Outcome, Overrides, PhaseKind, ReplayError, ReplayOptions, branch,
    run,
};

/// What a minimized log must keep of the first divergence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Signature {
    pub kind: DivergenceKind,
    pub recorded: Option<&'static str>,
    pub remade: Option<&'static str>,
    pub phase: PhaseKind,
}

impl Signature {
    pub fn of(d: &Divergence) -> Signature {
        Signature {
            kind: d.kind,
            recorded: d.recorded.as_ref().map(Decision::type_name),
            remade: d.remade.as_ref().map(Decision::type_name),
            phase: d.phase_kind,
        }
    }
}

/// The size of a branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Size {
    pub entries: usize,
    /// Prompts (`user_message`).
    pub runs: usize,
    /// Steps started (`step_started`).
    pub steps: usize,
    /// Tool calls decided (`tool_dispatched` and `synthetic_result`).
    pub tool_calls: usize,
}

impl Size {
    fn of(entries: &[&Entry]) -> Size {
        let count = |f: &dyn Fn(&Body) -> bool| entries.iter().filter(|e| f(&e.body)).count();
        Size {
            entries: entries.len(),
            runs: count(&|b| matches!(b, Body::Record(Record::UserMessage { .. }))),
            steps: count(&|b| matches!(b, Body::Decision(Decision::StepStarted { .. }))),
            tool_calls: count(&|b| {
                matches!(
                    b,
                    Body::Decision(
                        Decision::ToolDispatched { .. } | Decision::SyntheticResult { .. }
                    )
                )
            }),
        }
    }
}

/// A minimized session, written.
#[derive(Debug, Clone)]
pub struct Minimized {
    pub before: Size,
    pub after: Size,
    pub signature: Signature,
    /// The divergence as the written log shows it.
    pub divergence: Divergence,
    /// How many candidates were replayed.
    pub tests: usize,
    pub log: SessionLog,
}

/// Minimizes the branch ending at `leaf`, which must diverge when replayed with
/// `overrides`, and writes the result to `out` (a new file).
pub fn minimize(
    log: &SessionLog,
    leaf: EntryId,
    overrides: &Overrides,
    out: &Path,
) -> Result<Minimized, ReplayError> {
    let options = ReplayOptions {
        until: None,
        overrides: *overrides,
    };
    let path = branch(log, leaf)?;
    let before = Size::of(&path);
    let Outcome::Diverged(first) = run(&path, &|id| log.line_of(id), &options).outcome else {
        return Err(ReplayError::NoDivergence {
            path: log.path.clone(),
        });
    };
    let signature = Signature::of(&first);
    // Nothing after the divergence can matter.
    let end = first
        .entry
        .and_then(|id| path.iter().position(|e| e.id == id))
        .unwrap_or(path.len().saturating_sub(1));
    let Some((header, rest)) = path.get(..=end).and_then(<[&Entry]>::split_first) else {
        return Err(ReplayError::Minimize {
            path: log.path.clone(),
            why: "the branch is empty".into(),
        });
    };
    let plan = Plan::new(header, rest);
    let mut tests = 0usize;
    let mut check = |cut: &Cut| {
        tests += 1;
        let entries = plan.build(cut);
        diverges_as(&entries, plan.header, &options) == Some(signature)
    };
    let mut cut = Cut::none(plan.groups.len());
    if !check(&cut) {
        return Err(ReplayError::Minimize {
            path: log.path.clone(),
            why: "the divergence does not survive rewriting the branch as a fresh log (it depends on entry ids or structure entries), so it cannot be minimized".into(),
        });
    }

    // Whole runs.
    let runs = plan.runs();
    let kept = ddmin((0..runs.len()).collect(), |keep| {
        check(&cut.dropping(units_not_in(&runs, keep), &[]))
    });
    cut = cut.dropping(units_not_in(&runs, &kept), &[]);

    // Steps of the kept runs.
    let steps = plan.steps(&cut);
    let kept = ddmin((0..steps.len()).collect(), |keep| {
        check(&cut.dropping(units_not_in(&steps, keep), &[]))
    });
    cut = cut.dropping(units_not_in(&steps, &kept), &[]);

    // Single tool calls of the kept steps.
    let calls = plan.calls(&cut);
    let kept = ddmin((0..calls.len()).collect(), |keep| {
        let (drop, removed) = calls_not_in(&calls, keep);
        check(&cut.dropping(drop, &removed))
    });
    let (drop, removed) = calls_not_in(&calls, &kept);
    cut = cut.dropping(drop, &removed);

    let entries = plan.build(&cut);
    let header = match &plan.header.body {
        Body::Record(Record::Session(h)) => xcsh_log::SessionHeader::clone(h),
        Body::Record(_) | Body::Decision(_) | Body::Unknown { .. } => log.header().clone(),
    };
    let written = write_chain(out, header, plan.header.ts, &entries)?;
    let replayed = crate::replay(&written, written.leaf(), &options)?;
    let Outcome::Diverged(divergence) = replayed.outcome else {
        return Err(ReplayError::Minimize {
            path: out.to_path_buf(),
            why: "the minimized log, read back, no longer diverges".into(),
        });
    };
    if Signature::of(&divergence) != signature {
        return Err(ReplayError::Minimize {
            path: out.to_path_buf(),
            why: "the minimized log, read back, diverges differently".into(),
        });
    }
    let all: Vec<&Entry> = written.entries.iter().collect();
    Ok(Minimized {
        before,
        after: Size::of(&all),
        signature,
        divergence: *divergence,
        tests,
        log: written,
    })
}

/// The signature of the first divergence of `entries` (after `header`), if any.
fn diverges_as(entries: &[Entry], header: &Entry, options: &ReplayOptions) -> Option<Signature> {
    let mut all: Vec<&Entry> = Vec::with_capacity(entries.len() + 1);
    all.push(header);
    all.extend(entries.iter());
    // A chain written from id 0: entry N is on line N + 1.
    let line_of = |id: EntryId| u32::try_from(id.0 + 1).ok();
    match run(&all, &line_of, options).outcome {
        Outcome::Diverged(d) => Some(Signature::of(&d)),
        Outcome::Clean | Outcome::Stopped(_) | Outcome::CutOff(_) => None,
    }
}

/// The classic ddmin: the smallest subset of `units` (1-minimal: no single unit can
/// go) for which `test` holds, given that it holds for all of them.
fn ddmin(units: Vec<usize>, mut test: impl FnMut(&[usize]) -> bool) -> Vec<usize> {
    if units.is_empty() || test(&[]) {
        return Vec::new();
    }
    let mut current = units;
    let mut n = 2usize;
    while current.len() >= 2 {
        let size = current.len().div_ceil(n);
        let subsets: Vec<Vec<usize>> = current.chunks(size).map(<[usize]>::to_vec).collect();
        let mut next = None;
        for s in &subsets {
            if test(s) {
                next = Some((s.clone(), 2));
                break;
            }
        }
        if next.is_none() && subsets.len() > 2 {
            for k in 0..subsets.len() {
                let complement: Vec<usize> = subsets
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != k)
                    .flat_map(|(_, s)| s.iter().copied())
                    .collect();
                if test(&complement) {
                    next = Some((complement, (n - 1).max(2)));
                    break;
                }
            }
        }
        match next {
            Some((subset, granularity)) => {
                current = subset;
                n = granularity;
            }
            None if n >= current.len() => break,
            None => n = (2 * n).min(current.len()),
        }
    }
    current
}

/// A group is one input entry of the branch with the decisions recorded after it.
struct Group<'a> {
    /// The input entry.
    entry: &'a Entry,
    /// The decision entries the log has after it, before the next input.
    recorded: Vec<&'a Entry>,
    /// The decisions a fresh machine makes for it on the whole branch.
    original: Vec<Decision>,
}

/// A unit of cutting: groups that go together, and tool calls removed from step
/// entries (group, call index).
#[derive(Debug, Clone, Default)]
struct Unit {
    groups: Vec<usize>,
    calls: Vec<(usize, u32)>,
}

/// Which groups are dropped and which tool calls are taken out of kept steps.
#[derive(Debug, Clone)]
struct Cut {
    dropped: Vec<bool>,
    calls: BTreeSet<(usize, u32)>,
}

impl Cut {
    fn none(groups: usize) -> Cut {
        Cut {
            dropped: vec![false; groups],
            calls: BTreeSet::new(),
        }
    }

    fn dropping(&self, groups: Vec<usize>, calls: &[(usize, u32)]) -> Cut {
        let mut cut = self.clone();
        for g in groups {
            if let Some(d) = cut.dropped.get_mut(g) {
                *d = true;
            }
        }
        cut.calls.extend(calls.iter().copied());
        cut
    }
}

fn units_not_in(units: &[Unit], keep: &[usize]) -> Vec<usize> {
    units
        .iter()
        .enumerate()
        .filter(|(i, _)| !keep.contains(i))
        .flat_map(|(_, u)| u.groups.iter().copied())
        .collect()
}

fn calls_not_in(units: &[Unit], keep: &[usize]) -> (Vec<usize>, Vec<(usize, u32)>) {
    let mut groups = Vec::new();
    let mut calls = Vec::new();
    for (i, u) in units.iter().enumerate() {
        if !keep.contains(&i) {
            groups.extend(u.groups.iter().copied());
            calls.extend(u.calls.iter().copied());
        }
    }
    (groups, calls)
}

struct Plan<'a> {
    header: &'a Entry,
    /// Decision entries before the first input (kept as they are).
    prelude: Vec<&'a Entry>,
    groups: Vec<Group<'a>>,
}

impl<'a> Plan<'a> {
    /// The plan over a branch: its header and the entries after it.
    fn new(header: &'a Entry, rest: &[&'a Entry]) -> Plan<'a> {
        let mut prelude = Vec::new();
        let mut groups: Vec<Group<'a>> = Vec::new();
        for &entry in rest {
            if entry.body.is_input() {
                groups.push(Group {
                    entry,
                    recorded: Vec::new(),
                    original: Vec::new(),
                });
            } else if entry_decision(entry).is_some() {
                match groups.last_mut() {
                    Some(g) => g.recorded.push(entry),
                    None => prelude.push(entry),
                }
            }
            // Structure and unknown entries are left out: they feed nothing.
        }
        let mut machine = Machine::new();
        for g in &mut groups {
            g.original = decide(&mut machine, RecordedInput::cloned(g.entry));
        }
        Plan {
            header,
            prelude,
            groups,
        }
    }

    fn record(&self, g: usize) -> Option<&'a Record> {
        match &self.groups[g].entry.body {
            Body::Record(r) => Some(r),
            Body::Decision(_) | Body::Unknown { .. } => None,
        }
    }

    /// Each run: its prompt and every input up to the next prompt.
    fn runs(&self) -> Vec<Unit> {
        let mut runs: Vec<Unit> = Vec::new();
        for g in 0..self.groups.len() {
            // A prompt starts a run; so does `/compact` (it ends with `run_finished`).
            let starts = matches!(
                self.record(g),
                Some(Record::UserMessage { .. } | Record::Compact { .. })
            );
            if starts {
                runs.push(Unit {
                    groups: vec![g],
                    calls: Vec::new(),
                });
            } else if let Some(run) = runs.last_mut() {
                run.groups.push(g);
            }
            // Inputs before the first prompt belong to no run and are always kept.
        }
        runs
    }

    /// Each kept step: its `step` entry and the inputs after it up to the next step
    /// or prompt (its tool results, steers, a compaction summary, …).
    fn steps(&self, cut: &Cut) -> Vec<Unit> {
        let mut steps: Vec<Unit> = Vec::new();
        let mut open = false;
        for g in 0..self.groups.len() {
            match self.record(g) {
                Some(Record::Step(_)) => {
                    open = true;
                    if !cut.dropped[g] {
                        steps.push(Unit {
                            groups: vec![g],
                            calls: Vec::new(),
                        });
                    } else {
                        open = false;
                    }
                }
                Some(Record::UserMessage { .. } | Record::Compact { .. }) => open = false,
                _ => {
                    if open
                        && !cut.dropped[g]
                        && let Some(step) = steps.last_mut()
                    {
                        step.groups.push(g);
                    }
                }
            }
        }
        steps
    }

    /// Each tool call of a kept step: its events in the step entry, and its result
    /// and approval answer among the inputs of that step.
    fn calls(&self, cut: &Cut) -> Vec<Unit> {
        let mut calls = Vec::new();
        for step in self.steps(cut) {
            let Some(&g) = step.groups.first() else {
                continue;
            };
            let Some(Record::Step(record)) = self.record(g) else {
                continue;
            };
            for e in &record.events {
                let StreamEvent::ToolCallStart { index, id, .. } = &e.event else {
                    continue;
                };
                if cut.calls.contains(&(g, *index)) {
                    continue;
                }
                let followers = step.groups[1..].iter().copied().filter(|&f| {
                    matches!(self.record(f),
                        Some(Record::ToolResult(r)) if r.call_id == *id)
                        || matches!(self.record(f),
                        Some(Record::ApprovalAnswer { call_id, .. }) if call_id == id)
                });
                calls.push(Unit {
                    groups: followers.collect(),
                    calls: vec![(g, *index)],
                });
            }
        }
        calls
    }

    /// The log a recording of the kept inputs would have written (without header),
    /// with the recorded differences carried over.
    fn build(&self, cut: &Cut) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        let push = |out: &mut Vec<Entry>, body: Body, ts| {
            let id = EntryId(out.len() as u64 + 1);
            out.push(Entry {
                v: FORMAT_VERSION,
                id,
                parent: Some(EntryId(id.0 - 1)),
                ts,
                body,
                hash: EntryHash::default(),
            });
            id
        };
        let mut ids = IdMap::default();
        ids.insert(EntryId(0), EntryId(0));
        for e in &self.prelude {
            push(&mut out, ids.body(e.body.clone()), e.ts);
        }
        let mut machine = Machine::new();
        for (g, group) in self.groups.iter().enumerate() {
            if cut.dropped[g] {
                continue;
            }
            let Some(record) = self.record(g) else {
                continue;
            };
            let record = adjust(record.clone(), g, cut, &machine);
            let id = push(&mut out, Body::Record(record.clone()), group.entry.ts);
            ids.insert(group.entry.id, id);
            let made = decide(&mut machine, RecordedInput::of(id, record));
            for j in 0..made.len().max(group.recorded.len()) {
                let recorded = group.recorded.get(j).copied();
                let r = recorded.and_then(entry_decision);
                let chosen = match (made.get(j), group.original.get(j), r) {
                    (d, Some(o), Some(r)) if o == r => d.cloned(),
                    (Some(d), Some(o), Some(r)) => Some(transplant(d, o, r, &ids)),
                    (None, Some(_), Some(_)) => None,
                    (_, None, Some(r)) => Some(ids.decision(r.clone())),
                    (Some(d), None, None) => Some(d.clone()),
                    (_, Some(_), None) | (None, None, None) => None,
                };
                if let Some(d) = chosen {
                    let ts = recorded.map_or(group.entry.ts, |e| e.ts);
                    push(&mut out, Body::Decision(d), ts);
                }
            }
        }
        out
    }
}

/// Feeds inputs to the machine and returns the decisions it makes.
fn decide(machine: &mut Machine, inputs: Option<RecordedInput>) -> Vec<Decision> {
    let mut made = Vec::new();
    for input in inputs.into_iter().flatten() {
        for effect in machine.handle(input) {
            if let Effect::Record(d) = effect {
                made.push(d);
            }
        }
    }
    made
}

/// A kept input as the candidate records it: tool calls cut out of a step, and a
/// step numbered as the step the machine is streaming (as the runtime writes it).
fn adjust(mut record: Record, g: usize, cut: &Cut, machine: &Machine) -> Record {
    let streaming = match machine.phase() {
        Phase::Streaming(s) => Some(s.step),
        Phase::Idle | Phase::RunningTools(_) | Phase::Compacting(_) | Phase::Finished(_) => None,
    };
    match &mut record {
        Record::Step(step) => {
            let removed: Vec<u32> = cut
                .calls
                .range((g, 0)..=(g, u32::MAX))
                .map(|&(_, i)| i)
                .collect();
            if !removed.is_empty() {
                step.events.retain(|e| match &e.event {
                    StreamEvent::ToolCallStart { index, .. }
                    | StreamEvent::ToolCallDelta { index, .. }
                    | StreamEvent::ToolCallEnd { index } => !removed.contains(index),
                    _ => true,
                });
                let mut assembler = Assembler::default();
                for e in &step.events {
                    assembler.push(&e.event);
                }
                step.message = assembler.finish();
            }
            if let Some(s) = streaming {
                step.step = s;
            }
        }
        // Still late: never the step that is streaming now.
        Record::LateEvent { step, .. } if streaming == Some(*step) => *step = StepNo(0),
        _ => {}
    }
    record
}

/// The decision the candidate records where the original log recorded `r` and the
/// machine, on the whole branch, made `o`: the candidate's own decision `d` with
/// the fields in which `r` differs from `o` taken from `r`. A decision of another
/// type is taken whole.
fn transplant(d: &Decision, o: &Decision, r: &Decision, ids: &IdMap) -> Decision {
    let whole = || ids.decision(r.clone());
    if o.type_name() != r.type_name() {
        return whole();
    }
    let (Ok(ov), Ok(rv), Ok(mut dv)) = (
        serde_json::to_value(o),
        serde_json::to_value(r),
        serde_json::to_value(d),
    ) else {
        return whole();
    };
    let mut changes = Vec::new();
    differences(&ov, &rv, &mut Vec::new(), &mut changes);
    for (path, value) in changes {
        let value = value.map(|v| map_ids(&path, v, ids));
        if !set(&mut dv, &path, value) {
            return whole();
        }
    }
    serde_json::from_value(dv).unwrap_or_else(|_| whole())
}

/// Sets (or, with `None`, removes) the value at `path`; false if the path is not there.
fn set(root: &mut Value, path: &[String], value: Option<Value>) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return match value {
            Some(v) => {
                *root = v;
                true
            }
            None => false,
        };
    };
    let mut node = root;
    for key in parents {
        node = match node {
            Value::Object(m) => match m.get_mut(key) {
                Some(n) => n,
                None => return false,
            },
            Value::Array(a) => match key.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(n) => n,
                None => return false,
            },
            _ => return false,
        };
    }
    match (node, value) {
        (Value::Object(m), Some(v)) => {
            m.insert(last.clone(), v);
            true
        }
        (Value::Object(m), None) => {
            m.remove(last);
            true
        }
        (Value::Array(a), Some(v)) => match last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
            Some(slot) => {
                *slot = v;
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// A value carried over into an id field names the old entry: give it its new id.
fn map_ids(path: &[String], value: Value, ids: &IdMap) -> Value {
    let is_id = path
        .iter()
        .any(|k| k == "queued" || k == "first_kept" || k == "undelivered");
    if !is_id {
        return value;
    }
    let one = |v: Value| match v.as_u64().and_then(|n| ids.get(EntryId(n))) {
        Some(new) => Value::from(new.0),
        None => v,
    };
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(one).collect()),
        other => one(other),
    }
}

#[cfg(test)]
mod tests {
    use super::ddmin;

    #[test]
    fn ddmin_finds_the_units_a_failure_needs() {
        let mut tests = 0;
        let kept = ddmin((0..40).collect(), |s| {
            tests += 1;
            s.contains(&7) && s.contains(&31)
        });
        assert_eq!(kept, [7, 31]);
        assert!(tests < 60, "{tests} tests");
        assert_eq!(ddmin((0..5).collect(), |_| true), Vec::<usize>::new());
        assert_eq!(ddmin((0..5).collect(), |s| s.len() == 5), [0, 1, 2, 3, 4]);
    }
}
