//! Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), read after
//! codex-rs/protocol's `RolloutLine` (`{timestamp, type, payload}`) and `RolloutItem`
//! (`session_meta`, `response_item`, `event_msg`, `turn_context`, `compacted`, and
//! the newer `world_state` and `token_usage_record`). A rollout is linear: each
//! entry goes under the previous one. The model's side of a response (its
//! `reasoning`, assistant `message` and tool calls, until its usage record or the
//! next result or prompt) becomes one step.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::value::RawValue;
use xcsh_machine::{CallId, EntryId, ToolCall, ToolOutcome, ToolStatus, Usage};

use crate::builder::{Builder, Reply};
use crate::{Head, ImportError, Source, parse_ts};
use xcsh_log::foreign::ForeignFork;

/// Context Codex injects as user messages: not typed by the user.
const INJECTED: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md",
    "<turn_aborted>",
    "<user_shell_command>",
    "<skills_instructions>",
];

#[derive(Deserialize)]
struct Line {
    timestamp: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    payload: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct SessionMeta {
    id: String,
    #[serde(default)]
    cwd: String,
    timestamp: Option<String>,
    cli_version: Option<String>,
    forked_from_id: Option<String>,
    forked_from_ordinal_exclusive: Option<u64>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item {
    Message {
        role: String,
        #[serde(default)]
        content: Vec<Content>,
    },
    Reasoning {
        #[serde(default)]
        summary: Vec<Content>,
        #[serde(default)]
        content: Option<Vec<Content>>,
    },
    FunctionCall {
        name: String,
        arguments: String,
        call_id: String,
    },
    CustomToolCall {
        name: String,
        input: String,
        call_id: String,
    },
    LocalShellCall {
        call_id: Option<String>,
        id: Option<String>,
        action: Box<RawValue>,
    },
    FunctionCallOutput {
        call_id: String,
        output: Output,
    },
    CustomToolCallOutput {
        call_id: String,
        output: Output,
    },
    #[serde(other)]
    Other,
}

/// A content part (`input_text`, `output_text`, `summary_text`, `reasoning_text`,
/// images and the like: text only).
#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    text: Option<String>,
}

/// A tool's output: a string (how `FunctionCallOutputPayload` serializes), content
/// parts, or the older `{content, success}` object.
#[derive(Deserialize)]
#[serde(untagged)]
enum Output {
    Text(String),
    Parts(Vec<Content>),
    Payload {
        content: String,
        success: Option<bool>,
    },
}

#[derive(Deserialize)]
struct UsageRecord {
    usage: TokenUsage,
}

#[derive(Deserialize)]
struct TokenUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    cached_input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

impl TokenUsage {
    fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(self.cached_input_tokens),
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cached_input_tokens,
            ..Usage::default()
        }
    }
}

#[derive(Deserialize)]
struct Compacted {
    message: String,
}

fn text_of(parts: &[Content]) -> String {
    parts.iter().filter_map(|c| c.text.as_deref()).collect()
}

pub(crate) fn head(src: &Source) -> Option<Head> {
    let (_, text) = src.lines.first()?;
    let line: Line = serde_json::from_str(text).ok()?;
    if line.kind != "session_meta" {
        return None;
    }
    let meta: SessionMeta = serde_json::from_str(line.payload?.get()).ok()?;
    Some(Head {
        ts: meta
            .timestamp
            .as_deref()
            .or(line.timestamp.as_deref())
            .and_then(parse_ts),
        version: meta.cli_version,
        forked_from: meta.forked_from_id.map(|session_id| ForeignFork {
            session_id,
            records: meta.forked_from_ordinal_exclusive,
        }),
        session_id: meta.id,
        cwd: meta.cwd,
    })
}

/// The reader's state: the tip (everything goes under it) and the response being
/// assembled.
struct Reader {
    tip: EntryId,
    pending: Option<(DateTime<Utc>, Reply)>,
}

impl Reader {
    fn reply(&mut self, ts: DateTime<Utc>) -> &mut Reply {
        &mut self.pending.get_or_insert_with(|| (ts, Reply::default())).1
    }

    /// Writes the response assembled so far as a step.
    fn flush(&mut self, b: &mut Builder) -> Result<(), ImportError> {
        if let Some((ts, reply)) = self.pending.take() {
            self.tip = b.step(self.tip, ts, reply)?;
        }
        Ok(())
    }

    fn keep(
        &mut self,
        b: &mut Builder,
        ts: DateTime<Utc>,
        no: u64,
        kind: &str,
        sub: Option<&str>,
        text: &str,
    ) -> Result<(), ImportError> {
        let label = match sub {
            Some(s) => format!("{kind}/{s}"),
            None => kind.to_string(),
        };
        self.tip = b.foreign(self.tip, ts, no, Some(kind.to_string()), text, &label)?;
        Ok(())
    }
}

/// The `type` inside a payload, for the summary's kinds.
#[derive(Deserialize)]
struct Tagged {
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// What the pre-scan reads of a line.
#[derive(Deserialize)]
struct Probe {
    #[serde(rename = "type")]
    kind: Option<String>,
    payload: Option<PayloadProbe>,
}

#[derive(Deserialize)]
struct PayloadProbe {
    #[serde(rename = "type")]
    kind: Option<String>,
    role: Option<String>,
}

/// The lines of the summary requests before each `compacted` record: the model's
/// answer (and its reasoning and usage) since the turn started, which Codex records
/// before the compaction. They are kept as foreign: the `compacted` entry holds the
/// summary.
fn summary_lines(src: &Source) -> std::collections::HashSet<u64> {
    let probes: Vec<(u64, Option<Probe>)> = src
        .lines
        .iter()
        .map(|(no, t)| (*no, serde_json::from_str(t).ok()))
        .collect();
    let mut out = std::collections::HashSet::new();
    for (i, (_, p)) in probes.iter().enumerate() {
        if p.as_ref().and_then(|p| p.kind.as_deref()) != Some("compacted") {
            continue;
        }
        for (no, p) in probes[..i].iter().rev() {
            let Some(p) = p else { break };
            let sub = p.payload.as_ref().and_then(|q| q.kind.as_deref());
            let role = p.payload.as_ref().and_then(|q| q.role.as_deref());
            match (p.kind.as_deref(), sub, role) {
                (Some("response_item"), Some("message"), Some("assistant"))
                | (Some("response_item"), Some("reasoning"), _)
                | (Some("token_usage_record"), _, _) => {
                    out.insert(*no);
                }
                (Some("response_item"), _, _) | (Some("event_msg"), Some("task_started"), _) => {
                    break;
                }
                _ => {}
            }
        }
    }
    out
}

pub(crate) fn import(src: &Source, b: &mut Builder) -> Result<(), ImportError> {
    let summaries = summary_lines(src);
    let mut r = Reader {
        tip: b.root(),
        pending: None,
    };
    for (no, text) in &src.lines {
        let no = *no;
        let Some(line) = src.parse::<Line>(no, text)? else {
            let ts = b.time(None);
            r.flush(b)?;
            r.tip = b.foreign(r.tip, ts, no, None, text, "(malformed)")?;
            continue;
        };
        let ts = b.time(line.timestamp.as_deref().and_then(parse_ts));
        let payload = line.payload.as_deref().map(RawValue::get).unwrap_or("null");
        let sub = serde_json::from_str::<Tagged>(payload)
            .ok()
            .and_then(|t| t.kind);
        if summaries.contains(&no) {
            let sub = format!(
                "{} (compaction summary request)",
                sub.as_deref().unwrap_or("?")
            );
            r.keep(b, ts, no, &line.kind, Some(&sub), text)?;
            continue;
        }
        match line.kind.as_str() {
            "response_item" => {
                let item: Item = match serde_json::from_str(payload) {
                    Ok(i) => i,
                    Err(e) if !src.lenient => return Err(src.malformed(no, e.to_string())),
                    Err(_) => Item::Other,
                };
                response_item(&mut r, b, ts, no, item, text, sub.as_deref())?;
            }
            "token_usage_record" if r.pending.is_some() => {
                if let Ok(u) = serde_json::from_str::<UsageRecord>(payload) {
                    r.reply(ts).usage = u.usage.usage();
                }
                b.summary.mapped("token_usage_record");
                r.flush(b)?;
            }
            "compacted" => match serde_json::from_str::<Compacted>(payload) {
                Ok(c) => {
                    r.flush(b)?;
                    b.summary.mapped("compacted");
                    r.tip = b.compacted(r.tip, ts, c.message, None, 0)?;
                }
                Err(_) => r.keep(b, ts, no, &line.kind, None, text)?,
            },
            "event_msg" => r.keep(b, ts, no, &line.kind, sub.as_deref(), text)?,
            _ => r.keep(b, ts, no, &line.kind, None, text)?,
        }
    }
    r.flush(b)?;
    Ok(())
}

fn response_item(
    r: &mut Reader,
    b: &mut Builder,
    ts: DateTime<Utc>,
    no: u64,
    item: Item,
    text: &str,
    sub: Option<&str>,
) -> Result<(), ImportError> {
    let kind = format!("response_item/{}", sub.unwrap_or("?"));
    // The items that are a tool call of the response end in the match; every other
    // item returns from it.
    let call = match item {
        Item::Message { role, content } if role == "user" => {
            let said = text_of(&content);
            r.flush(b)?;
            if INJECTED.iter().any(|p| said.starts_with(p)) {
                let sub = Some("message (injected context)");
                return r.keep(b, ts, no, "response_item", sub, text);
            }
            b.summary.mapped(&kind);
            r.tip = b.user(r.tip, ts, said)?;
            return Ok(());
        }
        Item::Message { role, content } if role == "assistant" => {
            r.reply(ts).text.push_str(&text_of(&content));
            b.summary.mapped(&kind);
            return Ok(());
        }
        Item::Reasoning { summary, content } => {
            let mut said = summary
                .iter()
                .filter_map(|c| c.text.as_deref())
                .collect::<Vec<_>>()
                .join("\n");
            if said.is_empty() {
                said = content.as_deref().map(text_of).unwrap_or_default();
            }
            let reply = r.reply(ts);
            if !reply.reasoning.is_empty() && !said.is_empty() {
                reply.reasoning.push('\n');
            }
            reply.reasoning.push_str(&said);
            b.summary.mapped(&kind);
            return Ok(());
        }
        Item::FunctionCall {
            name,
            arguments,
            call_id,
        } => ToolCall {
            id: CallId(call_id),
            name,
            arguments,
        },
        Item::CustomToolCall {
            name,
            input,
            call_id,
        } => ToolCall {
            id: CallId(call_id),
            name,
            // A freeform tool's input is text: as a JSON string argument.
            arguments: serde_json::to_string(&input)?,
        },
        Item::LocalShellCall {
            call_id,
            id,
            action,
        } => ToolCall {
            id: CallId(call_id.or(id).unwrap_or_else(|| format!("line-{no}"))),
            name: "local_shell".into(),
            arguments: action.get().to_string(),
        },
        Item::FunctionCallOutput { call_id, output }
        | Item::CustomToolCallOutput { call_id, output } => {
            r.flush(b)?;
            b.summary.mapped(&kind);
            r.tip = b.result(r.tip, ts, CallId(call_id), None, outcome(output))?;
            return Ok(());
        }
        Item::Message { .. } | Item::Other => {
            r.flush(b)?;
            return r.keep(b, ts, no, "response_item", sub, text);
        }
    };
    r.reply(ts).tool_calls.push(call);
    b.summary.mapped(&kind);
    Ok(())
}

/// A result's status: Codex's exec output says `Process exited with code N` (an
/// error when N is not 0); the older payload has `success`.
fn outcome(output: Output) -> ToolOutcome {
    let (content, success) = match output {
        Output::Text(t) => (t, None),
        Output::Parts(p) => (text_of(&p), None),
        Output::Payload { content, success } => (content, success),
    };
    let exited_badly = content
        .lines()
        .find_map(|l| l.strip_prefix("Process exited with code "))
        .is_some_and(|code| code.trim() != "0");
    let status = if success == Some(false) || exited_badly {
        ToolStatus::Error
    } else {
        ToolStatus::Ok
    };
    ToolOutcome { status, content }
}
