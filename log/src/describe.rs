//! One wording of an entry on one line (after its type), for every view that names
//! entries: inspect's timeline, `tree --full` and checker, and replay's reports; with
//! the pieces it is made of (text on one line, a value's serde name, a stop reason, a
//! step outcome, a stream event), which the views use on their own too.

use serde::Serialize;
use serde_json::Value;
use xcsh_machine::{Decision, StepOutcome, StopReason, StreamEvent, UserOrigin};

use crate::entry::{Body, Entry, Record};
use crate::foreign::ForeignRecord;

/// The text on one line (whitespace collapsed), at most `max` characters (`…` when cut).
pub fn one_line(text: &str, max: usize) -> String {
    // The words joined by single spaces, read only as far as `cut` looks (one
    // character past `max`, or past 1): a long text costs no more than a short one.
    let seen = max.max(1) + 1;
    let mut line = String::new();
    let mut chars = 0;
    for word in text.split_whitespace() {
        if chars >= seen {
            break;
        }
        if !line.is_empty() {
            line.push(' ');
            chars += 1;
        }
        let room = seen - chars.min(seen);
        let word = word
            .char_indices()
            .nth(room)
            .map_or(word, |(at, _)| &word[..at]);
        line.push_str(word);
        chars += word.chars().count();
    }
    cut(&line, max)
}

/// `text` in double quotes, as every view that quotes text on one line shows it (a
/// turn's prompt in `tree`, an entry's text in `tree --full`, `events`, `check`).
/// Only what would break the quoted line or the terminal is escaped: the quote and
/// the backslash (`\"`, `\\`), line breaks and tabs (`\n`, `\r`, `\t`), every other
/// control character (C0, DEL, C1: `\u{1b}`), the line and paragraph separators
/// (U+2028, U+2029) and the bidi embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069), which would reorder what follows on the line. Everything else
/// passes through, so a grapheme cluster stays whole: zero-width joiners, variation
/// selectors, combining marks: a family emoji stays one emoji, where `{:?}` writes
/// `👩\u{200d}👩\u{200d}👧`.
pub fn quoted(text: &str) -> String {
    let mut s = String::with_capacity(text.len() + 2);
    s.push('"');
    // Plain printable ASCII, possibly cut with `…` (what previews mostly are), needs
    // no look at each character.
    if text
        .strip_suffix('…')
        .unwrap_or(text)
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\')
    {
        s.push_str(text);
    } else {
        for c in text.chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                '\n' => s.push_str("\\n"),
                '\r' => s.push_str("\\r"),
                '\t' => s.push_str("\\t"),
                c if breaks_the_line(c) => s.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
                c => s.push(c),
            }
        }
    }
    s.push('"');
    s
}

/// Whether [`quoted`] escapes `c` (besides the quote, the backslash, `\n`, `\r`, `\t`).
fn breaks_the_line(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// At most `max` characters of `text`, `…` when cut.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        // More than `max - 1` characters: cut unless it is exactly `max`.
        Some((at, _)) if text[at..].chars().nth(1).is_some() => format!("{}…", &text[..at]),
        _ => text.to_string(),
    }
}

/// The snake_case name serde gives a unit-like enum value (`no_run_in_progress`).
pub fn serde_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::from("?"),
    }
}

/// A JSON value with every object's keys in sorted order, whatever serde_json's map
/// keeps, so that two values print alike when they are equal.
pub fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = serde_json::Map::new();
            for k in keys {
                out.insert(k.clone(), canonical(&map[k]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Tool arguments (JSON text as the model produced it) on one line: the canonical
/// compact JSON when it parses, else the text as it is.
pub fn args_compact(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v) => canonical(&v).to_string(),
        Err(_) => arguments.to_string(),
    }
}

/// Who speaks a user message, as a heading names it: `User`, `User (steer)`,
/// `User (follow-up)`, or `Note` (xcsh's own note of an undo, SPEC.md §17.3).
pub fn speaker(origin: UserOrigin) -> &'static str {
    match origin {
        UserOrigin::Prompt => "User",
        UserOrigin::Steer => "User (steer)",
        UserOrigin::FollowUp => "User (follow-up)",
        UserOrigin::Undo => "Note",
    }
}

/// A stop reason in a few words: `completed`, `max_tokens 1000 (1234 spent)`.
pub fn stop_text(reason: &StopReason) -> String {
    match reason {
        StopReason::Completed
        | StopReason::OutputLimit
        | StopReason::ContentFilter
        | StopReason::Interrupted
        | StopReason::Crashed => reason.kind().into(),
        StopReason::MaxSteps { limit } => format!("max_steps {limit}"),
        StopReason::MaxTokens { limit, spent } => format!("max_tokens {limit} ({spent} spent)"),
        StopReason::ProviderError { error } => {
            format!(
                "provider_error {}: {}",
                serde_name(&error.kind),
                one_line(&error.message, 80)
            )
        }
        StopReason::ContextOverflow { error, compacted } => format!(
            "context_overflow{}: {}",
            if *compacted { " after compacting" } else { "" },
            one_line(&error.message, 80)
        ),
    }
}

/// A step's outcome in a few words: `completed`, `failed http: 503 …`, `aborted`.
pub fn outcome_text(outcome: &StepOutcome) -> String {
    match outcome {
        StepOutcome::Completed => "completed".into(),
        StepOutcome::Failed { error } => format!(
            "failed {}: {}",
            serde_name(&error.kind),
            one_line(&error.message, 80)
        ),
        StepOutcome::Aborted => "aborted".into(),
    }
}

/// A stream event in a few words.
pub fn event_text(event: &StreamEvent) -> String {
    match event {
        StreamEvent::TextDelta { text } | StreamEvent::ReasoningDelta { text } => {
            quoted(&cut(text, 60))
        }
        StreamEvent::ReasoningSignature { signature } => {
            format!("{} byte(s)", signature.len())
        }
        StreamEvent::ToolCallStart { index, id, name } => format!("[{index}] {name} {id}"),
        StreamEvent::ToolCallDelta { index, arguments } => {
            format!("[{index}] {}", quoted(&cut(arguments, 60)))
        }
        StreamEvent::ToolCallEnd { index } => format!("[{index}]"),
        StreamEvent::Usage { usage } => format!(
            "in {} out {}{}",
            usage.input_tokens,
            usage.output_tokens,
            cache_text(usage.cache_read_tokens, usage.cache_write_tokens)
        ),
        StreamEvent::Finish { reason } => serde_name(reason),
        StreamEvent::Retrying {
            attempt,
            reason,
            delay_ms,
        } => format!(
            "attempt {attempt} in {delay_ms}ms: {}",
            one_line(reason, 60)
        ),
        StreamEvent::Skipped { event_type } => event_type.clone(),
        StreamEvent::Restarted { reason } => one_line(reason, 60),
        StreamEvent::ReasoningBlockStart {} => String::new(),
        StreamEvent::ReasoningRedacted { data } => format!("{} byte(s)", data.len()),
        StreamEvent::OutputLimitExceeded {
            max_output_tokens,
            output_bytes,
        } => format!("{output_bytes} bytes of output for max {max_output_tokens} tokens"),
    }
}

fn cache_text(read: u64, write: u64) -> String {
    match (read, write) {
        (0, 0) => String::new(),
        (r, w) => format!(" cache r {r} w {w}"),
    }
}

/// A `foreign` entry in a few words: the source format, the record's type and line.
pub fn foreign_text(f: &ForeignRecord) -> String {
    match &f.source_type {
        Some(t) => format!(
            "{} record {} (line {}), kept verbatim",
            f.format,
            quoted(t),
            f.line
        ),
        None => format!("{} line {}, kept verbatim", f.format, f.line),
    }
}

/// An entry in a few words (after its type).
pub fn entry_text(entry: &Entry) -> String {
    match &entry.body {
        Body::Record(r) => record_text(r),
        Body::Decision(d) => decision_text(d),
        Body::Unknown { type_name, .. } => format!("(unknown type {type_name})"),
    }
}

/// A record in a few words (after its type).
pub fn record_text(record: &Record) -> String {
    match record {
        Record::Session(h) => match &h.forked_from {
            Some(f) => format!(
                "{} {} (forked from {} @ {})",
                h.session_id, h.cwd, f.session_id, f.entry
            ),
            None => format!("{} {}", h.session_id, h.cwd),
        },
        Record::Branch { from_leaf } => format!("new branch (the leaf was {from_leaf})"),
        Record::Label { target, name } => format!("{} on {target}", quoted(name)),
        Record::Undo { run, files, .. } => {
            format!("undo of run {run}: {} file(s)", files.len())
        }
        Record::Workspace { from, to } => format!("moved from {from} to {to}"),
        Record::Provider(p) => p.to_string(),
        Record::Foreign(f) => foreign_text(f),
        Record::MemoryIndex(m) => m.summary(),
        Record::MemoryExtraction(m) => m.summary(),
        Record::MemorySnapshot(m) => m.summary(),
        Record::MemoryForget(m) => m.summary(),
        Record::UserMessage { text, .. } => quoted(&one_line(text, 60)),
        Record::Steer { text } | Record::FollowUp { text } => quoted(&one_line(text, 60)),
        Record::Interrupt {} => String::new(),
        Record::Step(s) => {
            let m = &s.message;
            let mut parts = vec![format!("step {}", s.step)];
            if !m.text.is_empty() {
                parts.push(quoted(&one_line(&m.text, 40)));
            }
            if !m.tool_calls.is_empty() {
                let names: Vec<&str> = m.tool_calls.iter().map(|c| c.name.as_str()).collect();
                parts.push(format!("calls {}", names.join(",")));
            }
            parts.push(outcome_text(&s.outcome));
            parts.join(" ")
        }
        Record::ToolResult(t) => format!(
            "{} {} {} {}ms {}",
            t.call_id,
            t.name,
            serde_name(&t.outcome.status),
            t.duration_ms,
            quoted(&one_line(&t.outcome.content, 40))
        ),
        Record::CompactionSummary { summary, error } => match (summary, error) {
            (_, Some(e)) => format!("failed: {}", one_line(&e.message, 60)),
            (Some(s), None) => quoted(&one_line(s, 60)),
            (None, None) => String::from("(empty)"),
        },
        Record::Recovered { note } => one_line(note, 80),
        Record::Compact { .. } => "compact the context now (/compact)".into(),
        Record::LateEvent { step, event } => format!("step {step} {}", event_text(event)),
        Record::CheckFailed { call_id, content } => {
            format!("{call_id} would fail: {}", quoted(&one_line(content, 60)))
        }
        Record::ApprovalAnswer {
            call_id,
            verdict,
            scope,
            message,
        } => match message {
            None => format!("{call_id} {} ({})", serde_name(verdict), serde_name(scope)),
            Some(m) => format!(
                "{call_id} {} ({}): {}",
                serde_name(verdict),
                serde_name(scope),
                quoted(m)
            ),
        },
    }
}

/// A decision in a few words (after its type).
pub fn decision_text(decision: &Decision) -> String {
    match decision {
        Decision::StepStarted { step, messages, .. } => {
            format!("step {step} with {messages} message(s)")
        }
        Decision::Delivered {
            origin,
            queued,
            text,
        } => format!(
            "{} from {queued}: {}",
            serde_name(origin),
            quoted(&one_line(text, 50))
        ),
        Decision::ToolDispatched { step, call } => format!(
            "step {step} {} {} {}",
            call.id,
            call.name,
            cut(&args_compact(&call.arguments), 60)
        ),
        Decision::Approval {
            call_id,
            tool,
            verdict,
            by,
        } => format!(
            "{call_id} {tool} {} by {}",
            serde_name(verdict),
            serde_name(by)
        ),
        Decision::SyntheticResult { call, reason, .. } => {
            format!("{} {} {}", call.id, call.name, serde_name(reason))
        }
        Decision::CompactionStarted {
            first_kept,
            tokens_before,
        } => format!("keeps from {first_kept}, {tokens_before} tokens before"),
        Decision::Compacted {
            first_kept,
            tokens_before,
            tokens_after,
            ..
        } => format!("keeps from {first_kept}, tokens {tokens_before} -> {tokens_after}"),
        Decision::Ignored { reason } => serde_name(reason),
        Decision::RunFinished(end) => {
            let mut s = format!(
                "{} after {} step(s), {} tokens",
                stop_text(&end.reason),
                end.steps,
                end.usage.spend()
            );
            if !end.undelivered.is_empty() {
                let ids: Vec<String> = end.undelivered.iter().map(ToString::to_string).collect();
                s.push_str(&format!(", undelivered {}", ids.join(",")));
            }
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `one_line` reads a text only as far as it shows, and shows what collapsing the
    /// whole text and cutting it would: every cut point, around every kind of word.
    #[test]
    fn one_line_is_the_whole_text_collapsed_then_cut() {
        let texts = [
            "",
            "   ",
            "one",
            "  two  words ",
            "a\tb\nc  d",
            "exactly ten",
            "héllo wörld — ünïcode ✓ text",
            "averyveryverylongwordwithoutanyspaceinitatall and more",
            "x y z w v u t s r q p o n m l k j i h g f e d c b a",
        ];
        for text in texts {
            let whole = text.split_whitespace().collect::<Vec<_>>().join(" ");
            for max in 0..=60 {
                assert_eq!(one_line(text, max), cut(&whole, max), "{text:?} at {max}");
            }
        }
    }

    /// The memory extraction's input names its speakers so (SPEC.md §28): what a
    /// model reads must not change.
    #[test]
    fn each_origin_has_its_speaker() {
        use UserOrigin::*;
        assert_eq!(
            [Prompt, Steer, FollowUp, Undo].map(speaker),
            ["User", "User (steer)", "User (follow-up)", "Note"]
        );
    }

    /// Zero-width joiners, variation selectors and combining marks are parts of
    /// what a person sees as one character: quoting leaves them as they are.
    #[test]
    fn quoting_keeps_grapheme_clusters_whole() {
        let texts = [
            "third 日本語 X🎉👩\u{200d}👩\u{200d}👧 é",
            "❤\u{fe0f} 🏳\u{fe0f}\u{200d}🌈",
            "e\u{301}",
            "👍🏽",
        ];
        assert_eq!(
            texts.map(quoted),
            texts.map(|t| format!("\"{t}\"")),
            "{:?}",
            texts.map(quoted)
        );
    }

    /// What would end the quote, break the line, or act on a terminal is escaped.
    #[test]
    fn quoting_escapes_what_would_break_the_line() {
        assert_eq!(
            quoted("say \"hi\" \\ a\nb\tc\rd \u{1b}[2J \u{7f}\u{9b}\u{2028}\u{202e}x\u{2069}"),
            r#""say \"hi\" \\ a\nb\tc\rd \u{1b}[2J \u{7f}\u{9b}\u{2028}\u{202e}x\u{2069}""#
        );
    }

    /// For text without format characters, quoting is `{:?}` (with its fast path
    /// for plain ASCII).
    #[test]
    fn quoting_ordinary_text_is_debug_formatting() {
        for text in [
            "plain words",
            "it's",
            "say \"hi\"",
            "back\\slash",
            "tab\there",
            "line\nbreak",
            "é ü 日本語 🎉",
            "…",
            "cut…",
            "…cut…",
            "",
        ] {
            assert_eq!(quoted(text), format!("{text:?}"), "{text}");
        }
    }

    #[test]
    fn arguments_print_canonically() {
        assert_eq!(
            args_compact(r#"{"b":1, "a":[2,{"d":1,"c":2}]}"#),
            r#"{"a":[2,{"c":2,"d":1}],"b":1}"#
        );
        assert_eq!(args_compact("{oops"), "{oops");
    }
}
