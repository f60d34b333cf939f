//! Presentation shared by the one-shot run (`run.rs`) and the interactive front ends
//! (`interactive/`): how an approval question is put and its answer typed and read,
//! how a stop reason and a tool result are put in words.

use xcsh_machine::{ApprovalScope, Verdict};
use xcsh_runtime::ApprovalAnswer;

/// The choices of an approval question, as both text modes print them (two lines:
/// the second is indented as the first is by its printer).
pub(crate) const APPROVAL_CHOICES: &str = concat!(
    "[y] once  [a] this tool for the session  [A] this exact call  [n] deny\n",
    "  [m] deny with a message to the model (m TEXT, or m alone and TEXT on the next line)"
);

/// What a text mode prints after `m` alone: the next line is the message.
pub(crate) const MESSAGE_PROMPT: &str =
    "  the message to the model (an empty line denies without one):";

/// ` · N more waiting` when `waiting` more questions wait behind this one, else
/// nothing.
pub(crate) fn more_waiting(waiting: u32) -> String {
    if waiting > 0 {
        format!(" · {waiting} more waiting")
    } else {
        String::new()
    }
}

/// A line typed at an approval question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// The whole answer.
    Answer(ApprovalAnswer),
    /// `m` alone: the message to the model comes on the next line ([`denial`]).
    Message,
}

/// `y` (once), `a` (this tool for the session), `A` (this exact call), `n` (deny),
/// `m TEXT` (deny and tell the model TEXT), `m` alone (the message comes next).
pub(crate) fn parse_answer(line: &str) -> Option<Reply> {
    let line = line.trim();
    if let Some(text) = line.strip_prefix(['m', 'M']) {
        if text.is_empty() {
            return Some(Reply::Message);
        }
        if text.starts_with(char::is_whitespace) {
            return Some(Reply::Answer(denial(text)));
        }
    }
    let (verdict, scope) = match line {
        "y" | "Y" | "yes" => (Verdict::Allow, ApprovalScope::Once),
        "a" => (Verdict::Allow, ApprovalScope::Tool),
        "A" => (Verdict::Allow, ApprovalScope::Call),
        "n" | "N" | "no" => (Verdict::Deny, ApprovalScope::Once),
        _ => return None,
    };
    Some(Reply::Answer(ApprovalAnswer::new(verdict, scope)))
}

/// A denial telling the model `message` (trimmed); a blank one is a plain deny.
pub(crate) fn denial(message: &str) -> ApprovalAnswer {
    match message.trim() {
        "" => ApprovalAnswer::new(Verdict::Deny, ApprovalScope::Once),
        text => ApprovalAnswer::deny_with(text),
    }
}

/// The first line of a tool result and, when it has more, ` (+N lines)`.
pub(crate) fn first_line(content: &str) -> (&str, String) {
    let first = content.lines().next().unwrap_or("");
    let more = content.lines().count().saturating_sub(1);
    let more = if more > 0 {
        format!(" (+{more} lines)")
    } else {
        String::new()
    };
    (first, more)
}

/// What a refusal of the request as too long says (a step's `context_overflow`).
pub(crate) fn context_overflow(message: &str) -> String {
    format!("the provider refused the request as too long for the model's context: {message}")
}

/// The items of a queue joined by ` | `, or `none`.
pub(crate) fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(" | ")
    }
}
