//! The run invariants of SPEC.md, checked over a written log path by path (root to
//! each leaf), entry by entry, from the entries alone: nothing here asks the machine.
//!
//! - every step and every tool call settles exactly once, and nothing is decided
//!   after a run finishes;
//! - steers are delivered only at boundaries (no step streaming, no call unsettled,
//!   the next step starting at once), before follow-ups, each queue in arrival order;
//!   a pending message keeps the run alive; `run_finished.undelivered` is exactly
//!   what was still queued;
//! - `max_steps` counts from the last delivered message; the spend budget is never
//!   exceeded by more than one step's usage; the stop reason names the limit that
//!   stopped the run, with the run's own figures;
//! - mutating calls run only when allowed (by the policy, a grant or an answer);
//! - a step refused as too long for the context is followed by a compaction and one
//!   retry (which takes its place in the window), or the run stops
//!   `context_overflow`, `compacted` saying whether the retry was refused.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use xcsh_log::{Body, Dag, Entry, Record, RecordedInput, SessionLog, StepRecord};
use xcsh_machine::{
    Decision, EntryId, FinishReason, Input, Limits, Permissions, RunEnd, StepNo, StepOutcome,
    StopReason, Usage, UserOrigin, Verdict,
};

/// Checks every path from the root to a leaf of `log`. Returns the first violation,
/// naming the entry.
pub fn check_invariants(log: &SessionLog) -> Result<(), String> {
    let dag = Dag::from_log(log);
    for leaf in dag.leaves() {
        let ids = dag.path_to_root(leaf).map_err(|e| e.to_string())?;
        let path: Vec<&Entry> = ids.iter().filter_map(|id| log.get(*id)).collect();
        if path.len() != ids.len() {
            return Err(format!("the path to leaf {leaf} names a missing entry"));
        }
        check_path(&path).map_err(|e| format!("on the branch ending at entry {leaf}: {e}"))?;
    }
    Ok(())
}

/// The state of the run in progress on one path.
#[derive(Default)]
struct Run {
    running: bool,
    limits: Limits,
    permissions: Permissions,
    /// Spend of the run's settled steps, and the spend when the last step started.
    spent: u64,
    spent_at_last_start: u64,
    usage: Usage,
    /// Steps started in the run, and since the last delivered message.
    steps: u32,
    window: u32,
    open_step: Option<StepNo>,
    /// Call ids of completed steps' tool calls (each occurrence counts), and how many
    /// results (real or synthetic) each got.
    requested: BTreeMap<String, u32>,
    settled: BTreeMap<String, u32>,
    /// Dispatched calls not yet settled.
    in_flight: BTreeSet<String>,
    steers: VecDeque<EntryId>,
    follow_ups: VecDeque<EntryId>,
    /// Mutating calls allowed (by an answer or an automatic approval), not yet run.
    allowed: Vec<String>,
    /// A message was just delivered: the next decision must start a step.
    delivering: bool,
    /// The run was started by a prompt (not by `/compact`).
    by_prompt: bool,
    /// Where the run is in recovering from a refusal as too long for the context.
    overflow: Overflow,
}

/// The recovery from a step refused as too long for the context.
#[derive(Default, Clone, Copy, PartialEq, Eq, Debug)]
enum Overflow {
    #[default]
    None,
    /// The last step was refused.
    Refused,
    /// A compaction started after the refusal.
    Compacting,
    /// The step after that compaction (the retry) started.
    Retried,
    /// The retry was refused too.
    RefusedRetry,
}

impl Run {
    fn start(&mut self, limits: Limits, permissions: Permissions) {
        *self = Run {
            running: true,
            limits,
            permissions,
            ..Run::default()
        };
    }
}

/// Checks one path (root first).
pub fn check_path(entries: &[&Entry]) -> Result<(), String> {
    let mut run = Run::default();
    for (i, entry) in entries.iter().enumerate() {
        let id = entry.id;
        let fail = |what: String| Err(format!("entry {id} ({}): {what}", entry.type_name()));
        let ignored = entry.body.is_input()
            && matches!(
                entries.get(i + 1).map(|e| &e.body),
                Some(Body::Decision(Decision::Ignored { .. }))
            );
        if run.delivering && !matches!(entry.body, Body::Decision(_)) {
            return fail("a delivered message was not followed by a step".into());
        }
        match &entry.body {
            Body::Record(_) => {
                if let Err(e) = on_record(&mut run, entry, ignored) {
                    return fail(e);
                }
            }
            Body::Decision(d) => {
                if let Err(e) = on_decision(&mut run, d) {
                    return fail(e);
                }
            }
            Body::Unknown { type_name, .. } => {
                return fail(format!("an entry of unknown type {type_name}"));
            }
        }
    }
    Ok(())
}

fn on_record(run: &mut Run, entry: &Entry, ignored: bool) -> Result<(), String> {
    // A step is checked from what the log keeps of it for readers (the calls its
    // message requested, its usage); every other record as the inputs it recorded,
    // through the one conversion (structure records none).
    if let Body::Record(Record::Step(s)) = &entry.body {
        return on_step(run, s, ignored);
    }
    let Some(RecordedInput::One(input)) = RecordedInput::cloned(entry) else {
        return Ok(());
    };
    match input {
        Input::Prompt { config, .. } => match (ignored, run.running) {
            (false, true) => return Err("a prompt started a run inside a run".into()),
            (true, false) => return Err("a prompt with no run in progress was ignored".into()),
            (false, false) => {
                run.start(config.limits, config.permissions);
                run.by_prompt = true;
            }
            (true, true) => {}
        },
        Input::Compact { config } => {
            if !ignored {
                if run.running {
                    return Err("a compaction started inside a run".into());
                }
                run.start(config.limits, config.permissions);
            }
        }
        Input::Steer { entry, .. } | Input::FollowUp { entry, .. } => {
            applied_iff(
                run.running,
                ignored,
                || "a message during a run was ignored".into(),
                || "a message with no run in progress was queued".into(),
            )?;
            if !ignored {
                match input {
                    Input::Steer { .. } => run.steers.push_back(entry),
                    _ => run.follow_ups.push_back(entry),
                }
            }
        }
        Input::ToolSettled { call_id, .. } => {
            if applied_iff(
                run.in_flight.contains(&call_id.0),
                ignored,
                || format!("the result of in-flight call {call_id} was ignored"),
                || format!("a result for {call_id}, which is not in flight"),
            )? {
                run.in_flight.remove(&call_id.0);
                *run.settled.entry(call_id.0).or_default() += 1;
            }
        }
        Input::Recover => {
            if ignored == run.running {
                return Err("recover did not match whether a run was in progress".into());
            }
            // The step in flight is abandoned with the process that ran it.
            run.open_step = None;
        }
        Input::Approval {
            call_id,
            verdict: Verdict::Allow,
            ..
        } if !ignored => run.allowed.push(call_id.0),
        Input::Undo { .. } => {
            applied_iff(
                !run.running,
                ignored,
                || "an undo between runs was ignored".into(),
                || "an undo during a run was applied".into(),
            )?;
        }
        // Checked through the decisions they lead to (`check_decision`).
        Input::Interrupt | Input::CompactionDone { .. } | Input::MemoryIndex { .. } => {}
        // A step's inputs are `on_step`'s; a denial or a failed check settles the call
        // with a `synthetic_result`.
        Input::Stream { .. } | Input::StepEnded { .. } => {}
        Input::Approval { .. } | Input::CheckFailed { .. } => {}
    }
    Ok(())
}

/// A step settled: its calls are requested, its usage spent.
fn on_step(run: &mut Run, s: &StepRecord, ignored: bool) -> Result<(), String> {
    if applied_iff(
        run.open_step == Some(s.step),
        ignored,
        || format!("the end of streaming step {} was ignored", s.step),
        || format!("step {} settled but it was not streaming", s.step),
    )? {
        run.open_step = None;
        let refused = matches!(&s.outcome, StepOutcome::Failed { error }
            if error.kind == xcsh_machine::ProviderErrorKind::ContextOverflow);
        run.overflow = match (refused, run.overflow) {
            (true, Overflow::Retried) => Overflow::RefusedRetry,
            (true, _) => Overflow::Refused,
            (false, _) => Overflow::None,
        };
        let spend = s.message.usage.spend();
        run.spent += spend;
        run.usage.add(&s.message.usage);
        let kept =
            s.outcome == StepOutcome::Completed && s.message.finish != Some(FinishReason::Error);
        if kept {
            for call in &s.message.tool_calls {
                *run.requested.entry(call.id.0.clone()).or_default() += 1;
            }
        }
    }
    Ok(())
}

/// An input that should apply exactly when `applies` was `ignored`, or not: the error
/// says which way it went wrong; otherwise `applies`, for the caller to fold it in.
fn applied_iff(
    applies: bool,
    ignored: bool,
    wrongly_ignored: impl FnOnce() -> String,
    wrongly_applied: impl FnOnce() -> String,
) -> Result<bool, String> {
    match (applies, ignored) {
        (true, true) => Err(wrongly_ignored()),
        (false, false) => Err(wrongly_applied()),
        (true, false) | (false, true) => Ok(applies),
    }
}

/// Fails unless nothing is in progress when `what` happens: no step streaming, no
/// tool call unsettled.
fn nothing_in_progress(run: &Run, what: impl std::fmt::Display) -> Result<(), String> {
    if let Some(open) = run.open_step {
        return Err(format!("{what} while step {open} streamed"));
    }
    if !run.in_flight.is_empty() {
        return Err(format!(
            "{what} while calls were unsettled: {:?}",
            run.in_flight
        ));
    }
    Ok(())
}

fn on_decision(run: &mut Run, d: &Decision) -> Result<(), String> {
    if !run.running && !matches!(d, Decision::Ignored { .. }) {
        return Err("a decision with no run in progress".into());
    }
    if run.delivering && !matches!(d, Decision::Delivered { .. } | Decision::StepStarted { .. }) {
        return Err("a delivered message was not followed by a step".into());
    }
    match d {
        Decision::StepStarted { step, .. } => {
            run.delivering = false;
            nothing_in_progress(run, format_args!("step {step} started"))?;
            let retry = match run.overflow {
                Overflow::Compacting => true,
                Overflow::None | Overflow::Retried => false,
                Overflow::Refused | Overflow::RefusedRetry => {
                    return Err(format!(
                        "step {step} started after a refusal as too long, without a compaction"
                    ));
                }
            };
            run.overflow = if retry {
                Overflow::Retried
            } else {
                Overflow::None
            };
            if run.limits.max_tokens > 0 && run.spent >= run.limits.max_tokens {
                return Err(format!(
                    "step {step} started with {} of {} tokens spent",
                    run.spent, run.limits.max_tokens
                ));
            }
            run.steps += 1;
            if !retry {
                run.window += 1;
            }
            if *step != StepNo(run.steps) {
                return Err(format!("step {step} is step {} of the run", run.steps));
            }
            if run.window > run.limits.max_steps.max(1) {
                return Err(format!(
                    "step {} of a window of {}",
                    run.window, run.limits.max_steps
                ));
            }
            run.open_step = Some(*step);
            run.spent_at_last_start = run.spent;
        }
        Decision::ToolDispatched { call, .. } => {
            if call.name == "write" {
                if run.permissions == Permissions::Readonly {
                    return Err(format!("{} dispatched under readonly", call.id));
                }
                let Some(pos) = run.allowed.iter().position(|a| *a == call.id.0) else {
                    return Err(format!("{} dispatched without an approval", call.id));
                };
                run.allowed.remove(pos);
            }
            if !run.in_flight.insert(call.id.0.clone()) {
                return Err(format!("{} dispatched twice", call.id));
            }
        }
        Decision::SyntheticResult { call, reason, .. } => {
            if *reason == xcsh_machine::SyntheticReason::Lost && !run.in_flight.remove(&call.id.0) {
                return Err(format!("{} lost but it was not in flight", call.id));
            }
            *run.settled.entry(call.id.0.clone()).or_default() += 1;
        }
        Decision::Delivered { origin, queued, .. } => {
            nothing_in_progress(run, "a message delivered")?;
            let queue = match origin {
                UserOrigin::Steer => &mut run.steers,
                UserOrigin::FollowUp => {
                    if !run.steers.is_empty() {
                        return Err("a follow-up delivered before the pending steers".into());
                    }
                    &mut run.follow_ups
                }
                UserOrigin::Prompt => return Err("a prompt delivered as a queued message".into()),
                UserOrigin::Undo => return Err("an undo note delivered as a queued message".into()),
            };
            match queue.pop_front() {
                Some(first) if first == *queued => {}
                first => {
                    return Err(format!(
                        "delivered {queued}, but the first queued {origin:?} was {first:?}"
                    ));
                }
            }
            run.window = 0;
            run.delivering = true;
        }
        Decision::Approval {
            call_id,
            verdict: Verdict::Allow,
            ..
        } => run.allowed.push(call_id.0.clone()),
        Decision::RunFinished(end) => {
            run.running = false;
            finished(run, end)?;
            run.steers.clear();
            run.follow_ups.clear();
        }
        Decision::CompactionStarted { .. } => {
            if run.overflow == Overflow::Refused {
                run.overflow = Overflow::Compacting;
            }
        }
        Decision::Approval { .. } | Decision::Compacted { .. } | Decision::Ignored { .. } => {}
    }
    Ok(())
}

fn finished(run: &Run, end: &RunEnd) -> Result<(), String> {
    let RunEnd {
        reason,
        steps,
        usage,
        undelivered,
    } = end;
    nothing_in_progress(run, "the run finished")?;
    if run.settled != run.requested {
        return Err(format!(
            "tool calls requested {:?} but settled {:?}",
            run.requested, run.settled
        ));
    }
    if (*steps, *usage) != (run.steps, run.usage) {
        return Err(format!(
            "run_finished says {steps} steps and {usage:?}; the log holds {} and {:?}",
            run.steps, run.usage
        ));
    }
    let queued: Vec<EntryId> = run.steers.iter().chain(&run.follow_ups).copied().collect();
    if *undelivered != queued {
        return Err(format!(
            "undelivered {undelivered:?}, but still queued: {queued:?}"
        ));
    }
    let budget = run.limits.max_tokens;
    let over_budget = budget > 0 && run.spent >= budget;
    if budget > 0 && run.spent_at_last_start >= budget && run.steps > 0 {
        return Err(format!(
            "spent {} of {budget} before the last step started",
            run.spent_at_last_start
        ));
    }
    match reason {
        StopReason::Completed if run.by_prompt && !queued.is_empty() => {
            Err("completed with messages still pending".into())
        }
        StopReason::MaxSteps { limit } => {
            if *limit != run.limits.max_steps {
                return Err(format!(
                    "max_steps {limit}, but the run's limit is {}",
                    run.limits.max_steps
                ));
            }
            if run.window < (*limit).max(1) {
                return Err(format!(
                    "stopped for max_steps {limit} after {} steps of the window",
                    run.window
                ));
            }
            if over_budget {
                return Err("stopped for max_steps with the budget used up".into());
            }
            if !run.steers.is_empty() {
                return Err("stopped for max_steps with a steer to deliver".into());
            }
            Ok(())
        }
        StopReason::MaxTokens { limit, spent } => {
            if (*limit, *spent) != (budget, run.spent) || !over_budget {
                return Err(format!(
                    "max_tokens {{limit {limit}, spent {spent}}}, but the run's budget is {budget} and it spent {}",
                    run.spent
                ));
            }
            Ok(())
        }
        StopReason::ContextOverflow { compacted, .. } => {
            let expected = match run.overflow {
                Overflow::RefusedRetry => true,
                Overflow::Refused | Overflow::Compacting => false,
                Overflow::None | Overflow::Retried => {
                    return Err("context_overflow without a refused step".into());
                }
            };
            if *compacted != expected {
                return Err(format!(
                    "context_overflow {{compacted: {compacted}}} after {:?}",
                    run.overflow
                ));
            }
            Ok(())
        }
        StopReason::Completed
        | StopReason::OutputLimit
        | StopReason::ContentFilter
        | StopReason::Interrupted
        | StopReason::ProviderError { .. }
        | StopReason::Crashed => Ok(()),
    }
}
