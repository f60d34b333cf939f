//! `xcsh diff --context`: the model context each branch would send next (rebuilt
//! from the log), message by message; the first message that differs first.

use serde::Serialize;
use similar::{Algorithm, DiffOp, TextDiff, capture_diff_slices};
use xcsh_log::rebuild_context;
use xcsh_machine::{Message, UserOrigin};

use super::Side;
use crate::common::{args_pretty, serde_name};
use crate::error::InspectError;
use crate::style::{Paint, Style};

/// One context message as text.
pub fn message_text(m: &Message) -> String {
    match m {
        Message::User { origin, text } => match origin {
            UserOrigin::Prompt => format!("user:\n{text}"),
            o => format!("user ({}):\n{text}", serde_name(o)),
        },
        Message::Assistant {
            text,
            reasoning,
            tool_calls,
            ..
        } => {
            let mut s = String::from("assistant:");
            if !reasoning.is_empty() {
                s.push_str(&format!("\n(reasoning) {reasoning}"));
            }
            if !text.is_empty() {
                s.push_str(&format!("\n{text}"));
            }
            for c in tool_calls {
                s.push_str(&format!(
                    "\ncall {} {}:\n{}",
                    c.id,
                    c.name,
                    args_pretty(&c.arguments)
                ));
            }
            s
        }
        Message::ToolResult {
            call_id,
            name,
            is_error,
            content,
        } => format!(
            "tool result {call_id} {name}{}:\n{content}",
            if *is_error { " (error)" } else { "" }
        ),
        Message::Summary { text } => format!("summary:\n{text}"),
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ContextReport {
    pub a: String,
    pub b: String,
    pub a_messages: usize,
    pub b_messages: usize,
    /// 0-based index of the first message that differs (in A's numbering), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<usize>,
    /// A unified diff of the two contexts, one message per block.
    pub diff: String,
}

/// Compares the contexts at the two leaves.
pub fn compare(a: &Side<'_>, b: &Side<'_>) -> Result<ContextReport, InspectError> {
    let ca: Vec<String> = rebuild_context(a.log, a.leaf)?
        .iter()
        .map(|i| message_text(&i.message))
        .collect();
    let cb: Vec<String> = rebuild_context(b.log, b.leaf)?
        .iter()
        .map(|i| message_text(&i.message))
        .collect();
    let first_difference = capture_diff_slices(Algorithm::Myers, &ca, &cb)
        .iter()
        .find_map(|op| match op {
            DiffOp::Equal { .. } => None,
            DiffOp::Delete { old_index, .. }
            | DiffOp::Insert { old_index, .. }
            | DiffOp::Replace { old_index, .. } => Some(*old_index),
        });
    let whole = |c: &[String]| -> String {
        c.iter()
            .enumerate()
            .map(|(i, m)| format!("[{i}] {m}\n"))
            .collect()
    };
    let (ta, tb) = (whole(&ca), whole(&cb));
    let diff = TextDiff::from_lines(&ta, &tb)
        .unified_diff()
        .context_radius(3)
        .header("A (next request)", "B (next request)")
        .to_string();
    Ok(ContextReport {
        a: a.name.clone(),
        b: b.name.clone(),
        a_messages: ca.len(),
        b_messages: cb.len(),
        first_difference,
        diff,
    })
}

pub fn render(r: &ContextReport, style: Style) -> String {
    let mut out = format!(
        "A = {} ({} message(s))\nB = {} ({} message(s))\n",
        r.a, r.a_messages, r.b, r.b_messages
    );
    match r.first_difference {
        None => out.push_str(&style.paint(Paint::Green, "the two contexts are the same\n")),
        Some(i) => {
            out.push_str(&style.paint(Paint::Bold, &format!("first difference: message [{i}]\n")));
            super::push_unified(&mut out, &r.diff, style);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;

    #[test]
    fn the_contexts_of_two_branches() {
        let (_dir, log) = testkit::branched_session();
        let [a, b] = crate::diff::tests::the_two_branches(&log);
        let r = compare(&a, &b).unwrap();
        assert_eq!(r.first_difference, Some(4));
        expect_test::expect![[r#"
            A = S@12 (6 message(s))
            B = S@17 (6 message(s))
            first difference: message [4]
            --- A (next request)
            +++ B (next request)
            @@ -11,6 +11,8 @@
             [3] assistant:
             first done
             [4] user:
            -second task
            +instead, another task
             [5] assistant:
            -second done
            +(reasoning) thinking about
            +the alternative
            +alternative done
        "#]]
        .assert_eq(&render(&r, Style::plain()));
    }
}
