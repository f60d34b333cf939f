//! The script language of the machine's given/when/then transcripts (`tests.rs`) and of
//! the property tests' printed scripts: one input per line, read into [`Input`]s.
//!
//! Script lines (one input each, `#` starts a comment):
//! - `config max_steps=N max_tokens=N compact_at=N tools=a,b` (applies to later prompts;
//!   `estimate=N` sets the ratio of the usage estimate, 0 by default); config also takes
//!   `mutating=a,b permissions=ask|readonly|yolo`
//! - `usage N IN/OUT`: the usage the next `step N` line reports when it names none
//! - `prompt TEXT`, `steer TEXT`, `follow TEXT`, `interrupt`, `recover`, `compact`,
//!   `undo NOTE` (the note of an `/undo`), `memory HASH` (the memory index of the
//!   next run, by its hash)
//! - `step N [text=WORD] [calls=NAME:ARGS,NAME:ARGS] [dup=N] [finish=F] [usage=IN/OUT]`:
//!   the whole stream of step N (events, then a completed end); call `i` of step N has
//!   the id `cNi`; `dup=N`: N calls of `echo` that all carry the id `same`
//! - `delta N TEXT` (one text delta), `end N completed|aborted|failed|overflow`
//!   (`overflow`: the provider refused the request as too long for the context)
//! - `tool ID ok|error|cancelled [spent=IN/OUT] TEXT` (`spent`: what a `task` call's
//!   sub-agent spent, counted against the budget), `summary TEXT`, `summary-failed`
//! - `retry N ATTEMPT DELAY_MS REASON` (the provider retries step N's request)
//! - `approve ID y|a|A|n [MESSAGE]` (a user's answer; a denial may carry a message
//!   for the model)
//! - `check ID ERROR` (the check before the question found that call ID would fail
//!   with ERROR)

use std::collections::BTreeMap;
use std::fmt;

use crate::{
    ApprovalScope, CallId, EntryId, Input, Limits, Permissions, ProviderError, ProviderErrorKind,
    RunConfig, StepNo, StepOutcome, StreamEvent, ToolOutcome, ToolStatus, Usage, Verdict,
};

/// The provider error of `end N failed`.
pub fn disconnect() -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::Disconnected,
        message: "connection reset after 12 bytes".into(),
    }
}

/// The provider error of `end N overflow`: the request refused as too long.
pub fn too_long() -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::ContextOverflow,
        message: "prompt is too long: 9000 tokens > 8192 maximum".into(),
    }
}

/// The provider error of `summary-failed`.
pub fn summary_error() -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::Http,
        message: "503".into(),
    }
}

/// A line the reader does not understand, and the word in it that it does not know
/// (none when a word is missing or a number does not parse).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    pub line: String,
    pub unknown: Option<String>,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read script line {:?}", self.line)?;
        match &self.unknown {
            Some(word) => write!(f, ": it has no `{word}`"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for ScriptError {}

/// Reads a script line by line: the configuration the next prompt carries, the entry
/// ids of the inputs that need one (2, 3, …: the header and the prompt come first) and
/// the usage set aside for later steps.
#[derive(Debug, Clone)]
pub struct ScriptReader {
    config: RunConfig,
    next_entry: u64,
    usage: BTreeMap<u32, Usage>,
}

impl Default for ScriptReader {
    fn default() -> ScriptReader {
        ScriptReader::new()
    }
}

impl ScriptReader {
    /// A reader whose prompts carry the default limits, the tools `echo` and `read`,
    /// no mutating tool and `yolo`.
    pub fn new() -> ScriptReader {
        ScriptReader {
            config: RunConfig {
                limits: Limits::default(),
                tools: vec!["echo".into(), "read".into()],
                mutating: Vec::new(),
                permissions: Permissions::Yolo,
                estimate_bytes_per_token: 0,
                sandbox: None,
            },
            next_entry: 1,
            usage: BTreeMap::new(),
        }
    }

    fn entry(&mut self) -> EntryId {
        self.next_entry += 1;
        EntryId(self.next_entry)
    }

    /// The inputs of one line, in order: none for a blank line, a comment, `config`
    /// and `usage`; a `step` line's stream events, then its end.
    pub fn read(&mut self, line: &str) -> Result<Vec<Input>, ScriptError> {
        let line = line.trim();
        let bad = || ScriptError {
            line: line.into(),
            unknown: None,
        };
        let unknown = |word: &str| ScriptError {
            line: line.into(),
            unknown: Some(word.into()),
        };
        if line.is_empty() || line.starts_with('#') {
            return Ok(Vec::new());
        }
        let (cmd, rest) = line.split_once(' ').unwrap_or((line, ""));
        let input = match cmd {
            "config" => {
                for kv in rest.split_whitespace() {
                    let (k, v) = kv.split_once('=').ok_or_else(bad)?;
                    let l = &mut self.config.limits;
                    match k {
                        "max_steps" => l.max_steps = v.parse().map_err(|_| bad())?,
                        "max_tokens" => l.max_tokens = v.parse().map_err(|_| bad())?,
                        "compact_at" => l.compact_at_tokens = v.parse().map_err(|_| bad())?,
                        "estimate" => {
                            self.config.estimate_bytes_per_token = v.parse().map_err(|_| bad())?
                        }
                        "tools" => self.config.tools = v.split(',').map(String::from).collect(),
                        "mutating" => {
                            self.config.mutating = v.split(',').map(String::from).collect()
                        }
                        "permissions" => {
                            self.config.permissions =
                                serde_json::from_str(&format!("\"{v}\"")).map_err(|_| bad())?
                        }
                        other => return Err(unknown(other)),
                    }
                }
                return Ok(Vec::new());
            }
            "usage" => {
                let (n, usage) = rest.split_once(' ').ok_or_else(bad)?;
                let n = n.parse().map_err(|_| bad())?;
                self.usage.insert(n, usage_of(usage).ok_or_else(bad)?);
                return Ok(Vec::new());
            }
            "step" => return self.step(rest, bad, unknown),
            "prompt" => Input::Prompt {
                text: rest.into(),
                config: self.config.clone(),
            },
            "steer" => Input::Steer {
                entry: self.entry(),
                text: rest.into(),
            },
            "follow" => Input::FollowUp {
                entry: self.entry(),
                text: rest.into(),
            },
            "interrupt" => Input::Interrupt,
            "compact" => Input::Compact {
                config: self.config.clone(),
            },
            "recover" => Input::Recover,
            "undo" => Input::Undo { note: rest.into() },
            "check" => {
                let (id, error) = rest.split_once(' ').ok_or_else(bad)?;
                Input::CheckFailed {
                    call_id: CallId(id.into()),
                    content: error.into(),
                }
            }
            "memory" => Input::MemoryIndex { hash: rest.into() },
            "delta" => {
                let (n, text) = rest.split_once(' ').ok_or_else(bad)?;
                Input::Stream {
                    step: StepNo(n.parse().map_err(|_| bad())?),
                    event: StreamEvent::TextDelta { text: text.into() },
                }
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
                    other => return Err(unknown(other)),
                };
                Input::StepEnded {
                    step: StepNo(n.parse().map_err(|_| bad())?),
                    entry: self.entry(),
                    outcome,
                }
            }
            "tool" => {
                let mut parts = rest.splitn(3, ' ');
                let id = parts.next().ok_or_else(bad)?;
                let status = match parts.next() {
                    Some("ok") => ToolStatus::Ok,
                    Some("error") => ToolStatus::Error,
                    Some("cancelled") => ToolStatus::Cancelled,
                    other => return Err(unknown(other.unwrap_or_default())),
                };
                let mut text = parts.next().unwrap_or("");
                let mut spent = None;
                if let Some(rest) = text.strip_prefix("spent=") {
                    let (usage, after) = rest.split_once(' ').unwrap_or((rest, ""));
                    spent = Some(usage_of(usage).ok_or_else(bad)?);
                    text = after;
                }
                Input::ToolSettled {
                    call_id: CallId(id.into()),
                    outcome: ToolOutcome {
                        status,
                        content: text.to_string(),
                    },
                    spent,
                }
            }
            "approve" => {
                let (id, answer) = rest.split_once(' ').ok_or_else(bad)?;
                let (answer, message) = match answer.split_once(' ') {
                    Some((answer, message)) => (answer, Some(message.to_owned())),
                    None => (answer, None),
                };
                let (verdict, scope) = match answer {
                    "y" => (Verdict::Allow, ApprovalScope::Once),
                    "a" => (Verdict::Allow, ApprovalScope::Tool),
                    "A" => (Verdict::Allow, ApprovalScope::Call),
                    "n" => (Verdict::Deny, ApprovalScope::Once),
                    other => return Err(unknown(other)),
                };
                Input::Approval {
                    call_id: CallId(id.into()),
                    verdict,
                    scope,
                    message,
                }
            }
            "retry" => {
                let mut parts = rest.splitn(4, ' ');
                let step = StepNo(parse(parts.next()).ok_or_else(bad)?);
                let attempt = parse(parts.next()).ok_or_else(bad)?;
                let delay_ms = parse(parts.next()).ok_or_else(bad)?;
                Input::Stream {
                    step,
                    event: StreamEvent::Retrying {
                        attempt,
                        reason: parts.next().unwrap_or("").to_owned(),
                        delay_ms,
                    },
                }
            }
            "summary" => Input::CompactionDone {
                result: Ok(rest.into()),
            },
            "summary-failed" => Input::CompactionDone {
                result: Err(summary_error()),
            },
            other => return Err(unknown(other)),
        };
        Ok(vec![input])
    }

    /// `step N ...`: the stream events of step N, then its completed end.
    fn step(
        &mut self,
        rest: &str,
        bad: impl Fn() -> ScriptError,
        unknown: impl Fn(&str) -> ScriptError,
    ) -> Result<Vec<Input>, ScriptError> {
        let mut words = rest.split_whitespace();
        let step = StepNo(parse(words.next()).ok_or_else(&bad)?);
        let mut events = Vec::new();
        let mut preset = self.usage.remove(&step.0);
        for word in words {
            let (k, v) = word.split_once('=').ok_or_else(&bad)?;
            match k {
                "text" => events.push(StreamEvent::TextDelta { text: v.into() }),
                "dup" => {
                    for i in 0..parse::<u32>(Some(v)).ok_or_else(&bad)? {
                        events.push(StreamEvent::ToolCallStart {
                            index: i,
                            id: CallId("same".into()),
                            name: "echo".into(),
                        });
                        events.push(StreamEvent::ToolCallDelta {
                            index: i,
                            arguments: format!("{{\"n\":{i}}}"),
                        });
                    }
                }
                "calls" => {
                    for (i, call) in v.split(',').enumerate() {
                        let (name, args) = call.split_once(':').unwrap_or((call, "{}"));
                        let index = u32::try_from(i).map_err(|_| bad())?;
                        events.push(StreamEvent::ToolCallStart {
                            index,
                            id: CallId(format!("c{}{}", step.0, i + 1)),
                            name: name.into(),
                        });
                        events.push(StreamEvent::ToolCallDelta {
                            index,
                            arguments: args.into(),
                        });
                        events.push(StreamEvent::ToolCallEnd { index });
                    }
                }
                "finish" => events.push(StreamEvent::Finish {
                    reason: serde_json::from_str(&format!("\"{v}\"")).map_err(|_| bad())?,
                }),
                "usage" => {
                    preset = None;
                    events.push(StreamEvent::Usage {
                        usage: usage_of(v).ok_or_else(&bad)?,
                    });
                }
                other => return Err(unknown(other)),
            }
        }
        events.extend(preset.map(|usage| StreamEvent::Usage { usage }));
        let mut inputs: Vec<Input> = events
            .into_iter()
            .map(|event| Input::Stream { step, event })
            .collect();
        inputs.push(Input::StepEnded {
            step,
            entry: self.entry(),
            outcome: StepOutcome::Completed,
        });
        Ok(inputs)
    }
}

/// `IN/OUT`: a usage of IN input and OUT output tokens.
fn usage_of(text: &str) -> Option<Usage> {
    let (i, o) = text.split_once('/')?;
    Some(Usage {
        input_tokens: i.parse().ok()?,
        output_tokens: o.parse().ok()?,
        ..Usage::default()
    })
}

fn parse<T: std::str::FromStr>(word: Option<&str>) -> Option<T> {
    word?.parse().ok()
}
