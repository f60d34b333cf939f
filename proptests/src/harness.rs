//! Runs a script in the syntax of `machine/src/tests.rs` (see its module doc)
//! through a bare machine, the way that module's `Harness` does, and returns the
//! decisions. It lets the property tests check that a printed script says what the
//! generated run did, so that pasting it into a given/when/then test reproduces it.
//! Keep it in step with that harness.

use xcsh_machine::{
    CallId, Decision, Effect, EntryId, Input, Limits, Machine, Permissions, RunConfig, StepNo,
    StepOutcome, StreamEvent, ToolOutcome, ToolStatus, Usage,
};

use crate::play::{disconnect, summary_error, too_long};

/// The decisions a script makes, in order, or why a line does not parse.
pub fn run_script(script: &str) -> Result<Vec<Decision>, String> {
    let mut machine = Machine::new();
    let mut config = RunConfig {
        limits: Limits::default(),
        tools: vec!["echo".into(), "read".into()],
        mutating: Vec::new(),
        permissions: Permissions::Yolo,
        estimate_bytes_per_token: 0,
        sandbox: None,
    };
    let mut next_entry = 1u64;
    let mut entry = || {
        next_entry += 1;
        EntryId(next_entry)
    };
    let mut decisions = Vec::new();
    for line in script.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || format!("cannot read script line {line:?}");
        let (cmd, rest) = line.split_once(' ').unwrap_or((line, ""));
        let inputs = match cmd {
            "config" => {
                for kv in rest.split_whitespace() {
                    let (k, v) = kv.split_once('=').ok_or_else(bad)?;
                    let n = || v.parse::<u64>().map_err(|_| bad());
                    match k {
                        "max_steps" => config.limits.max_steps = n()? as u32,
                        "max_tokens" => config.limits.max_tokens = n()?,
                        "compact_at" => config.limits.compact_at_tokens = n()?,
                        "estimate" => config.estimate_bytes_per_token = n()? as u32,
                        "tools" => config.tools = v.split(',').map(String::from).collect(),
                        "mutating" => config.mutating = v.split(',').map(String::from).collect(),
                        "permissions" => {
                            config.permissions =
                                serde_json::from_str(&format!("\"{v}\"")).map_err(|_| bad())?
                        }
                        _ => return Err(bad()),
                    }
                }
                Vec::new()
            }
            "prompt" => vec![Input::Prompt {
                text: rest.into(),
                config: config.clone(),
            }],
            "steer" => vec![Input::Steer {
                entry: entry(),
                text: rest.into(),
            }],
            "follow" => vec![Input::FollowUp {
                entry: entry(),
                text: rest.into(),
            }],
            "interrupt" => vec![Input::Interrupt],
            "compact" => vec![Input::Compact {
                config: config.clone(),
            }],
            "recover" => vec![Input::Recover],
            "undo" => vec![Input::Undo { note: rest.into() }],
            "delta" => {
                let (n, text) = rest.split_once(' ').ok_or_else(bad)?;
                vec![Input::Stream {
                    step: StepNo(n.parse().map_err(|_| bad())?),
                    event: StreamEvent::TextDelta { text: text.into() },
                }]
            }
            "end" => {
                let (n, how) = rest.split_once(' ').ok_or_else(bad)?;
                let outcome = match how {
                    "completed" => StepOutcome::Completed,
                    "aborted" => StepOutcome::Aborted,
                    "failed" => StepOutcome::Failed {
                        error: disconnect(),
                    },
                    "overflow" => StepOutcome::Failed { error: too_long() },
                    _ => return Err(bad()),
                };
                vec![Input::StepEnded {
                    step: StepNo(n.parse().map_err(|_| bad())?),
                    entry: entry(),
                    outcome,
                }]
            }
            "step" => {
                let mut words = rest.split_whitespace();
                let step = StepNo(words.next().and_then(|w| w.parse().ok()).ok_or_else(bad)?);
                let mut inputs = Vec::new();
                for word in words {
                    let (k, v) = word.split_once('=').ok_or_else(bad)?;
                    let mut push = |event| inputs.push(Input::Stream { step, event });
                    match k {
                        "text" => push(StreamEvent::TextDelta { text: v.into() }),
                        "calls" => {
                            for (i, call) in v.split(',').enumerate() {
                                let (name, args) = call.split_once(':').unwrap_or((call, "{}"));
                                let index = u32::try_from(i).map_err(|_| bad())?;
                                push(StreamEvent::ToolCallStart {
                                    index,
                                    id: CallId(format!("c{}{}", step.0, i + 1)),
                                    name: name.into(),
                                });
                                push(StreamEvent::ToolCallDelta {
                                    index,
                                    arguments: args.into(),
                                });
                                push(StreamEvent::ToolCallEnd { index });
                            }
                        }
                        "finish" => push(StreamEvent::Finish {
                            reason: serde_json::from_str(&format!("\"{v}\"")).map_err(|_| bad())?,
                        }),
                        "usage" => {
                            let (i, o) = v.split_once('/').ok_or_else(bad)?;
                            push(StreamEvent::Usage {
                                usage: Usage {
                                    input_tokens: i.parse().map_err(|_| bad())?,
                                    output_tokens: o.parse().map_err(|_| bad())?,
                                    ..Usage::default()
                                },
                            });
                        }
                        _ => return Err(bad()),
                    }
                }
                inputs.push(Input::StepEnded {
                    step,
                    entry: entry(),
                    outcome: StepOutcome::Completed,
                });
                inputs
            }
            "tool" => {
                let mut parts = rest.splitn(3, ' ');
                let id = parts.next().ok_or_else(bad)?;
                let status = match parts.next() {
                    Some("ok") => ToolStatus::Ok,
                    Some("error") => ToolStatus::Error,
                    Some("cancelled") => ToolStatus::Cancelled,
                    _ => return Err(bad()),
                };
                vec![Input::ToolSettled {
                    call_id: CallId(id.into()),
                    outcome: ToolOutcome {
                        status,
                        content: parts.next().unwrap_or("").to_string(),
                    },
                }]
            }
            "approve" => {
                let (id, answer) = rest.split_once(' ').ok_or_else(bad)?;
                let (verdict, scope) = match answer {
                    "y" => crate::Answer::Once,
                    "a" => crate::Answer::Tool,
                    "A" => crate::Answer::Call,
                    "n" => crate::Answer::Deny,
                    _ => return Err(bad()),
                }
                .verdict_scope();
                vec![Input::Approval {
                    call_id: CallId(id.into()),
                    verdict,
                    scope,
                    message: None,
                }]
            }
            "summary" => vec![Input::CompactionDone {
                result: Ok(rest.into()),
            }],
            "summary-failed" => vec![Input::CompactionDone {
                result: Err(summary_error()),
            }],
            _ => return Err(bad()),
        };
        for input in inputs {
            for effect in machine.handle(input) {
                if let Effect::Record(d) = effect {
                    decisions.push(d);
                }
            }
        }
    }
    Ok(decisions)
}
