//! One-line summaries of entries, decisions, messages and stop reasons, for reports:
//! short enough for a terminal line, specific enough to recognize the entry.

use serde::Serialize;
use xcsh_log::{Body, Entry, Record};
use xcsh_machine::{Assembler, Decision, Message, Phase, StopReason, Usage, UserOrigin};

/// The longest quoted text kept in a summary, in characters.
const QUOTE: usize = 48;

/// An entry named in a report: its id, line, type and a one-line summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntryRef {
    pub id: xcsh_machine::EntryId,
    pub line: Option<u32>,
    #[serde(rename = "type")]
    pub type_name: String,
    pub summary: String,
}

impl EntryRef {
    pub fn new(entry: &Entry, line: Option<u32>) -> EntryRef {
        EntryRef {
            id: entry.id,
            line,
            type_name: entry.type_name().to_string(),
            summary: entry_summary(entry),
        }
    }
}

/// The phase a machine is in, without its data: what a minimized log must keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    Idle,
    Streaming,
    RunningTools,
    Compacting,
    Finished,
}

impl PhaseKind {
    pub fn of(phase: &Phase) -> PhaseKind {
        match phase {
            Phase::Idle => PhaseKind::Idle,
            Phase::Streaming(_) => PhaseKind::Streaming,
            Phase::RunningTools(_) => PhaseKind::RunningTools,
            Phase::Compacting(_) => PhaseKind::Compacting,
            Phase::Finished(_) => PhaseKind::Finished,
        }
    }
}

/// The phase in words, with its data (`running 2 tool call(s) of step 3`).
pub fn phase_name(phase: &Phase) -> String {
    match phase {
        Phase::Idle => "idle".into(),
        Phase::Streaming(s) => {
            let flag = if s.interrupted { ", interrupted" } else { "" };
            format!("streaming step {}{flag}", s.step)
        }
        Phase::RunningTools(t) => {
            let waiting = if t.awaiting.is_empty() {
                String::new()
            } else {
                format!(", {} awaiting approval", t.awaiting.len())
            };
            let flag = if t.interrupted { ", interrupted" } else { "" };
            format!(
                "running {} tool call(s) of step {}{waiting}{flag}",
                t.pending.len(),
                t.step
            )
        }
        Phase::Compacting(c) => {
            let flag = if c.interrupted { ", interrupted" } else { "" };
            format!("compacting (first kept entry {}){flag}", c.first_kept)
        }
        Phase::Finished(r) => format!("finished: {}", stop_reason(r)),
    }
}

/// A stop reason in words (`max_steps (limit 4)`).
pub fn stop_reason(reason: &StopReason) -> String {
    match reason {
        StopReason::Completed
        | StopReason::OutputLimit
        | StopReason::ContentFilter
        | StopReason::Interrupted
        | StopReason::Crashed => reason.kind().into(),
        StopReason::MaxSteps { limit } => format!("max_steps (limit {limit})"),
        StopReason::MaxTokens { limit, spent } => {
            format!("max_tokens (limit {limit}, spent {spent})")
        }
        StopReason::ProviderError { error } => {
            format!(
                "provider_error ({}: {})",
                tag(&error.kind),
                clip(&error.message)
            )
        }
        StopReason::ContextOverflow { error, compacted } => {
            format!(
                "context_overflow ({}{})",
                if *compacted { "after compacting: " } else { "" },
                clip(&error.message)
            )
        }
    }
}

/// The snake_case name serde gives a unit-like enum value.
pub(crate) fn tag<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value)
        .unwrap_or_default()
        .trim_matches('"')
        .to_string()
}

/// Text on one line, cut to `QUOTE` characters.
pub(crate) fn clip(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= QUOTE {
        line
    } else {
        let cut: String = line.chars().take(QUOTE - 1).collect();
        format!("{cut}…")
    }
}

fn quote(text: &str) -> String {
    format!("\"{}\"", clip(text))
}

fn usage(u: &Usage) -> String {
    let mut s = format!("{} in / {} out", u.input_tokens, u.output_tokens);
    if u.cache_read_tokens > 0 || u.cache_write_tokens > 0 {
        s.push_str(&format!(
            " (cache {} read / {} written)",
            u.cache_read_tokens, u.cache_write_tokens
        ));
    }
    s
}

fn short_hash(hash: &str) -> &str {
    hash.get(..8).unwrap_or(hash)
}

/// What an entry holds, on one line.
pub fn entry_summary(entry: &Entry) -> String {
    match &entry.body {
        Body::Record(r) => record_summary(r),
        Body::Decision(d) => decision_summary(d),
        Body::Unknown { .. } => "(a type this version does not know; feeds nothing)".into(),
    }
}

fn record_summary(record: &Record) -> String {
    match record {
        Record::Session(h) => format!("session {} in {}", h.session_id, h.cwd),
        Record::Branch { from_leaf } => {
            format!("a new branch (the previous leaf was {from_leaf})")
        }
        Record::Label { target, name } => format!("label {} on entry {target}", quote(name)),
        Record::Undo { run, files, note } => {
            format!(
                "undo of the run at entry {run}: {} file(s) reverted{}",
                files.len(),
                match note {
                    Some(note) => format!("; the model is told {}", quote(note)),
                    None => String::new(),
                }
            )
        }
        Record::Workspace { from, to } => {
            format!("the session moved from the workspace {from} to {to}")
        }
        Record::Foreign(f) => match &f.source_type {
            Some(t) => format!(
                "a {} record {t:?} (line {}) kept verbatim",
                f.format, f.line
            ),
            None => format!("{} line {} kept verbatim", f.format, f.line),
        },
        Record::MemoryIndex(m) => m.summary(),
        Record::MemoryExtraction(m) => m.summary(),
        Record::MemorySnapshot(m) => m.summary(),
        Record::MemoryForget(m) => m.summary(),
        Record::UserMessage { text, config } => {
            let l = &config.limits;
            format!(
                "{} (max_steps {}, max_tokens {}, compact_at_tokens {}, {})",
                quote(text),
                l.max_steps,
                l.max_tokens,
                l.compact_at_tokens,
                tag(&config.permissions)
            )
        }
        Record::Steer { text } | Record::FollowUp { text } => quote(text),
        Record::Interrupt {} => "the user interrupted".into(),
        Record::Step(s) => {
            // The events are what the machine sees; `message` is derived and kept
            // for readers, so summarize what the events assemble to.
            let mut assembler = Assembler::default();
            for e in &s.events {
                assembler.push(&e.event);
            }
            let a = assembler.finish();
            let mut parts = vec![format!("step {} {}", s.step, tag_outcome(&s.outcome))];
            if !a.text.is_empty() {
                parts.push(quote(&a.text));
            }
            if !a.tool_calls.is_empty() {
                let names: Vec<&str> = a.tool_calls.iter().map(|c| c.name.as_str()).collect();
                parts.push(format!("{} call(s): {}", names.len(), names.join(", ")));
            }
            if let Some(f) = a.finish {
                parts.push(format!("finish {}", tag(&f)));
            }
            parts.push(usage(&a.usage));
            parts.join(", ")
        }
        Record::ToolResult(r) => format!(
            "{} {} {}: {}",
            r.call_id,
            r.name,
            tag(&r.outcome.status),
            clip(&r.outcome.content)
        ),
        Record::CompactionSummary { summary, error } => match (summary, error) {
            (_, Some(e)) if summary.is_none() => {
                format!("failed: {}: {}", tag(&e.kind), clip(&e.message))
            }
            (s, _) => format!("summary {}", quote(s.as_deref().unwrap_or(""))),
        },
        Record::Recovered { note } => clip(note),
        Record::LateEvent { step, event } => format!("late {} of step {step}", event_kind(event)),
        Record::Compact { config } => format!(
            "compact the context now (max_output_tokens {})",
            config.limits.max_output_tokens
        ),
        Record::ApprovalAnswer {
            call_id,
            verdict,
            scope,
            message,
        } => match message {
            None => format!("{call_id}: {} ({})", tag(verdict), tag(scope)),
            Some(m) => format!("{call_id}: {} ({}): {m:?}", tag(verdict), tag(scope)),
        },
    }
}

fn tag_outcome(outcome: &xcsh_machine::StepOutcome) -> String {
    match outcome {
        xcsh_machine::StepOutcome::Completed => "completed".into(),
        xcsh_machine::StepOutcome::Aborted => "aborted".into(),
        xcsh_machine::StepOutcome::Failed { error } => {
            format!("failed ({}: {})", tag(&error.kind), clip(&error.message))
        }
    }
}

fn event_kind(event: &xcsh_machine::StreamEvent) -> String {
    serde_json::to_value(event)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "event".into())
}

/// What a decision says, on one line.
pub fn decision_summary(decision: &Decision) -> String {
    match decision {
        Decision::StepStarted {
            step,
            messages,
            context_hash,
        } => format!(
            "step {step}, {messages} message(s), context {}",
            short_hash(context_hash)
        ),
        Decision::Delivered {
            origin,
            queued,
            text,
        } => format!("{} of entry {queued}: {}", tag(origin), quote(text)),
        Decision::ToolDispatched { step, call } => {
            format!(
                "step {step}: {} {} {}",
                call.id,
                call.name,
                clip(&call.arguments)
            )
        }
        Decision::Approval {
            call_id,
            tool,
            verdict,
            by,
        } => format!("{call_id} {tool}: {} by {}", tag(verdict), tag(by)),
        Decision::SyntheticResult { call, reason, .. } => {
            format!("{} {}: {}", call.id, call.name, tag(reason))
        }
        Decision::CompactionStarted {
            first_kept,
            tokens_before,
        } => format!("first kept entry {first_kept}, {tokens_before} tokens before"),
        Decision::Compacted {
            first_kept,
            tokens_before,
            tokens_after,
            ..
        } => format!("first kept entry {first_kept}, {tokens_before} -> {tokens_after} tokens"),
        Decision::Ignored { reason } => tag(reason),
        Decision::RunFinished {
            reason,
            steps,
            usage: u,
            undelivered,
        } => {
            let mut s = format!(
                "{} after {steps} step(s), {}",
                stop_reason(reason),
                usage(u)
            );
            if !undelivered.is_empty() {
                let ids: Vec<String> = undelivered.iter().map(ToString::to_string).collect();
                s.push_str(&format!(", undelivered {}", ids.join(", ")));
            }
            s
        }
    }
}

/// A context message: its role and what it says, on one line.
pub fn message_summary(message: &Message) -> (String, String) {
    match message {
        Message::User { origin, text } => {
            let role = match origin {
                UserOrigin::Prompt => "user",
                UserOrigin::Steer => "user (steer)",
                UserOrigin::FollowUp => "user (follow-up)",
                UserOrigin::Undo => "note (undo)",
            };
            (role.into(), quote(text))
        }
        Message::Assistant {
            text, tool_calls, ..
        } => {
            let mut parts = Vec::new();
            if !text.is_empty() {
                parts.push(quote(text));
            }
            for c in tool_calls {
                parts.push(format!("{} {}", c.name, clip(&c.arguments)));
            }
            if parts.is_empty() {
                parts.push("(empty)".into());
            }
            ("assistant".into(), parts.join(" + "))
        }
        Message::ToolResult {
            call_id,
            name,
            is_error,
            content,
        } => {
            let status = if *is_error { "error" } else { "ok" };
            (
                "tool_result".into(),
                format!("{call_id} {name} {status}: {}", clip(content)),
            )
        }
        Message::Summary { text } => ("summary".into(), quote(text)),
    }
}
