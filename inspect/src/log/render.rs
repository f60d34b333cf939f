//! The conversation of `xcsh log` as text: one item at a time.

use xcsh_machine::{ToolStatus, UserOrigin};

use super::{Item, REASONING_CHARS, RESULT_CHARS, RESULT_LINES, Reasoning, origin_word};
use crate::common::{cap, one_line, serde_name, stop_text};
use crate::style::{Paint, Style};

fn indent(text: &str) -> String {
    indent_by(text, "    ")
}

fn indent_by(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| format!("{by}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The conversation as text, reasoning folded.
pub fn render(items: &[Item], style: Style) -> String {
    render_with(items, style, Reasoning::Folded)
}

/// The conversation as text, reasoning shown as `reasoning` says.
pub fn render_with(items: &[Item], style: Style, reasoning: Reasoning) -> String {
    let mut out = String::new();
    for it in items {
        render_item(it, style, reasoning, &mut out);
    }
    out
}

/// One item of the conversation as text (its lines, each ending in a newline),
/// appended to `out`.
pub fn render_item(it: &Item, style: Style, reasoning: Reasoning, out: &mut String) {
    let mut push = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    {
        match it {
            Item::Session {
                session_id,
                cwd,
                forked_from,
                ..
            } => {
                push(style.paint(Paint::Dim, &format!("session {session_id} in {cwd}")));
                if let Some(f) = forked_from {
                    push(style.paint(Paint::Dim, &format!("forked from {f}")));
                }
            }
            Item::User(u) => {
                let head = match (u.origin, u.queued) {
                    (UserOrigin::Prompt, _) => format!("\n▶ user #{}", u.entry),
                    (o, Some(q)) => format!(
                        "▶ {} #{} (delivered, arrived as #{q})",
                        origin_word(o),
                        u.entry
                    ),
                    (o, None) => format!("▶ {} #{}", origin_word(o), u.entry),
                };
                push(style.paint(Paint::Bold, &style.paint(Paint::Cyan, &head)));
                push(indent(&u.text));
            }
            Item::Queued {
                entry,
                origin,
                text,
            } => push(style.paint(
                Paint::Cyan,
                &format!(
                    "⧗ {} arrived #{entry}: {}",
                    origin_word(*origin),
                    one_line(text, 100)
                ),
            )),
            Item::Assistant(a) => {
                let mut head = format!(
                    "◆ assistant #{} · step {} · {} in / {} out",
                    a.entry, a.step, a.usage.input_tokens, a.usage.output_tokens
                );
                if let Some(outcome) = a.unless_completed() {
                    head.push_str(&format!(" · {outcome}"));
                }
                push(style.paint(Paint::Bold, &head));
                if !a.reasoning.trim().is_empty() {
                    let head = format!("    (reasoning, {} chars)", a.reasoning_chars);
                    push(style.paint(
                        Paint::Dim,
                        &match reasoning {
                            Reasoning::Folded => {
                                format!("{head} {}", one_line(&a.reasoning, REASONING_CHARS))
                            }
                            // Two columns deeper than the text it comes before.
                            Reasoning::Full => {
                                format!("{head}\n{}", indent(&indent_by(&a.reasoning, "  ")))
                            }
                        },
                    ));
                }
                if !a.text.is_empty() {
                    push(indent(&a.text));
                }
                for c in &a.tool_calls {
                    push(style.paint(
                        Paint::Yellow,
                        &format!(
                            "    → {} {} {}",
                            c.name,
                            c.id,
                            crate::common::cut(&c.arguments, 300)
                        ),
                    ));
                }
            }
            Item::ToolResult(r) => {
                let head = format!("← {} {} #{} · {}", r.name, r.call_id, r.entry, r.how(" · "));
                push(if r.status == ToolStatus::Ok {
                    style.paint(Paint::Green, &head)
                } else {
                    style.paint(Paint::Red, &head)
                });
                if !r.content.is_empty() {
                    push(indent(&cap(&r.content, RESULT_LINES, RESULT_CHARS)));
                }
                for path in &r.changed {
                    push(style.paint(Paint::Dim, &format!("    changed {path}")));
                }
            }
            Item::Approval {
                entry,
                call_id,
                tool,
                verdict,
                by,
            } => push(style.paint(
                Paint::Magenta,
                &format!(
                    "✓ approval #{entry}: {tool} {call_id} {} by {}",
                    serde_name(verdict),
                    serde_name(by)
                ),
            )),
            Item::ApprovalAnswer {
                entry,
                call_id,
                verdict,
                scope,
            } => push(style.paint(
                Paint::Magenta,
                &format!(
                    "✓ the user answered #{entry}: {call_id} {} ({})",
                    serde_name(verdict),
                    serde_name(scope)
                ),
            )),
            Item::Interrupt { entry } => {
                push(style.paint(Paint::Red, &format!("✗ interrupt #{entry}")))
            }
            Item::Ignored { entry, reason } => push(style.paint(
                Paint::Dim,
                &format!("  (ignored #{entry}: {})", serde_name(reason)),
            )),
            Item::Compaction {
                entry,
                summary,
                first_kept,
                tokens_before,
                tokens_after,
            } => {
                push(style.paint(Paint::Blue, &format!(
                    "⇢ compacted #{entry}: {tokens_before} → {tokens_after} tokens, kept from #{first_kept}"
                )));
                push(indent(&cap(summary, RESULT_LINES, RESULT_CHARS)));
            }
            Item::CompactionFailed { entry, error } => push(style.paint(
                Paint::Red,
                &format!("⇢ compaction failed #{entry}: {error}"),
            )),
            Item::RunFinished {
                entry,
                reason,
                steps,
                tokens,
                undelivered,
            } => {
                let mut s = format!(
                    "■ run finished #{entry}: {} · {steps} step(s) · {tokens} tokens",
                    stop_text(reason)
                );
                if !undelivered.is_empty() {
                    let ids: Vec<String> = undelivered.iter().map(|i| format!("#{i}")).collect();
                    s.push_str(&format!(" · undelivered {}", ids.join(", ")));
                }
                push(style.paint(Paint::Dim, &s));
            }
            Item::Branch { entry, from_leaf } => push(style.paint(
                Paint::Blue,
                &format!("\n↳ branch #{entry}: continues here (the leaf was #{from_leaf})"),
            )),
            Item::Label {
                entry,
                target,
                name,
            } => push(style.paint(
                Paint::Magenta,
                &format!("◇ label #{entry} on #{target}: {name}"),
            )),
            Item::Recovered { entry, note } => {
                push(style.paint(Paint::Red, &format!("! recovered #{entry}: {note}")))
            }
            Item::Undo {
                entry,
                run,
                files,
                note,
            } => push(style.paint(
                Paint::Magenta,
                &format!(
                    "↶ undo #{entry}: the file changes of run #{run} reverted: {}{}",
                    files.join(", "),
                    if note.is_some() {
                        " (the model is told with the next request on this branch)"
                    } else {
                        ""
                    }
                ),
            )),
            Item::Memory { entry, text, .. } => {
                push(style.paint(Paint::Blue, &format!("\n◆ {text} #{entry}")))
            }
            Item::Foreign { entry, text } => {
                push(style.paint(Paint::Dim, &format!("\n⇢ foreign #{entry}: {text}")))
            }
            Item::Workspace { entry, from, to } => push(style.paint(
                Paint::Blue,
                &format!("\n⇢ workspace #{entry}: the session moved from {from} to {to}"),
            )),
            Item::Provider { entry, provider } => {
                push(style.paint(Paint::Blue, &format!("\n⇢ provider #{entry}: {provider}")))
            }
            Item::CompactRequest { entry } => push(style.paint(
                Paint::Blue,
                &format!("\n⇢ compact requested #{entry} (/compact)"),
            )),
            Item::LateEvent { entry, step } => push(style.paint(
                Paint::Dim,
                &format!("  (a late stream event of step {step} #{entry})"),
            )),
            Item::Unknown { entry, type_name } => push(style.paint(
                Paint::Dim,
                &format!("? #{entry} of unknown type {type_name}"),
            )),
        }
    }
}
