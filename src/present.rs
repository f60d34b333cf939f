//! Presentation shared by the one-shot run (`run.rs`) and the interactive front ends
//! (`interactive/`): how an approval answer is typed and read, how a stop reason and a
//! tool result are put in words.

use xcsh_machine::{ApprovalScope, Verdict};
use xcsh_runtime::ApprovalAnswer;

/// The choices of an approval question, as both text modes print them.
pub(crate) const APPROVAL_CHOICES: &str =
    "[y] once  [a] this tool for the session  [A] this exact call  [n] deny";

/// `y` (once), `a` (this tool for the session), `A` (this exact call), `n` (deny).
pub(crate) fn parse_answer(line: &str) -> Option<ApprovalAnswer> {
    let (verdict, scope) = match line.trim() {
        "y" | "Y" | "yes" => (Verdict::Allow, ApprovalScope::Once),
        "a" => (Verdict::Allow, ApprovalScope::Tool),
        "A" => (Verdict::Allow, ApprovalScope::Call),
        "n" | "N" | "no" => (Verdict::Deny, ApprovalScope::Once),
        _ => return None,
    };
    Some(ApprovalAnswer {
        verdict,
        scope,
        message: None,
    })
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
