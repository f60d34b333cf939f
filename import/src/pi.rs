//! pi sessions (`~/.pi/agent/sessions/--CWD--/*.jsonl`), read after pi-mono's
//! packages/coding-agent/src/core/session-manager.ts: a `session` header line
//! (`version` 3, 2, or none for 1), then entries forming a tree by `id`/`parentId`
//! (version 1: no ids, each entry follows the one before it, as pi's own v1→v2
//! migration chains them; version 3 renamed the `hookMessage` role `custom`).
//! `message` entries hold an agent message (`user`, `assistant`, `toolResult`;
//! `bashExecution`, `custom`/`hookMessage` are kept as foreign), `compaction`
//! becomes xcsh's compaction; `model_change`, `thinking_level_change`,
//! `branch_summary`, `label`, `custom` and the rest are kept as foreign, in their
//! place in the tree.

use std::collections::HashMap;

use serde::Deserialize;
use xcsh_machine::{CallId, EntryId, FinishReason, ToolOutcome, ToolStatus, Usage};

use crate::builder::{Builder, Reply};
use crate::content::{Block, Content, blocks_of, texts};
use crate::{Head, ImportError, Source, parse_ts};

#[derive(Deserialize)]
struct Header {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    version: Option<u32>,
    timestamp: Option<String>,
    #[serde(default)]
    cwd: String,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    #[serde(rename = "parentId")]
    parent_id: Option<String>,
    timestamp: Option<String>,
}

#[derive(Deserialize)]
struct MessageEntry {
    message: Message,
}

/// An agent message (`role`: `user`, `assistant`, `toolResult`, or one of pi's
/// own: `bashExecution`, `custom`, `hookMessage`), read as one struct: the fields of
/// each role are optional here.
#[derive(Deserialize)]
struct Message {
    role: String,
    content: Option<Content>,
    usage: Option<PiUsage>,
    #[serde(rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(rename = "toolCallId")]
    tool_call_id: Option<String>,
    #[serde(rename = "toolName")]
    tool_name: Option<String>,
    #[serde(default, rename = "isError")]
    is_error: bool,
}

#[derive(Deserialize)]
struct PiUsage {
    #[serde(default)]
    input: u64,
    #[serde(default)]
    output: u64,
    #[serde(default, rename = "cacheRead")]
    cache_read: u64,
    #[serde(default, rename = "cacheWrite")]
    cache_write: u64,
}

#[derive(Deserialize)]
struct Compaction {
    summary: String,
    #[serde(rename = "firstKeptEntryId")]
    first_kept_entry_id: Option<String>,
    /// Version 1: the index of the first kept entry among the entries.
    #[serde(rename = "firstKeptEntryIndex")]
    first_kept_entry_index: Option<usize>,
    #[serde(default, rename = "tokensBefore")]
    tokens_before: u64,
}

pub(crate) fn head(src: &Source) -> Option<Head> {
    let (_, text) = src.lines.first()?;
    let h: Header = serde_json::from_str(text).ok()?;
    if h.kind != "session" {
        return None;
    }
    Some(Head {
        ts: h.timestamp.as_deref().and_then(parse_ts),
        version: Some(h.version.unwrap_or(1).to_string()),
        forked_from: None,
        session_id: h.id,
        cwd: h.cwd,
    })
}

fn reply(content: Vec<Block>, usage: Option<PiUsage>, stop: Option<&str>) -> Reply {
    let mut r = Reply {
        text: texts(&content),
        ..Reply::default()
    };
    let mut thinking = Vec::new();
    for b in content {
        match b.kind.as_str() {
            "thinking" => thinking.extend(b.thinking),
            "toolCall" => r.tool_calls.push(b.into_call()),
            _ => {}
        }
    }
    r.reasoning = thinking.join("\n");
    if let Some(u) = usage {
        r.usage = Usage {
            input_tokens: u.input,
            output_tokens: u.output,
            cache_read_tokens: u.cache_read,
            cache_write_tokens: u.cache_write,
            estimated: false,
        };
    }
    r.finish = match stop {
        Some("stop") => Some(FinishReason::Stop),
        Some("length") => Some(FinishReason::Length),
        Some("toolUse") => Some(FinishReason::ToolCalls),
        Some("error" | "aborted") => Some(FinishReason::Error),
        _ => None,
    };
    r
}

pub(crate) fn import(src: &Source, b: &mut Builder) -> Result<(), ImportError> {
    let version = head(src).and_then(|h| h.version).unwrap_or_default();
    let linear = version == "1";
    // Each pi entry's id (version 1: its line) and the xcsh entry its children go under.
    let mut tips: HashMap<String, EntryId> = HashMap::new();
    // Version 1: the xcsh entry of each entry by its index (header excluded).
    let mut by_index: Vec<EntryId> = Vec::new();
    let mut top = b.root();
    let mut last = b.root();
    for (i, (no, text)) in src.lines.iter().enumerate() {
        let no = *no;
        let Some(entry) = src.parse::<Entry>(no, text)? else {
            let ts = b.time(None);
            last = b.foreign(last, ts, no, None, text, "(malformed)")?;
            continue;
        };
        let ts = b.time(entry.timestamp.as_deref().and_then(parse_ts));
        if i == 0 && entry.kind == "session" {
            top = b.foreign(top, ts, no, Some(entry.kind.clone()), text, "session")?;
            last = top;
            continue;
        }
        let parent = if linear {
            last
        } else {
            match entry.parent_id.as_deref() {
                None => top,
                Some(p) => *tips.get(p).ok_or_else(|| {
                    src.malformed(no, format!("parentId {p:?} names no earlier entry"))
                })?,
            }
        };
        let kind = entry.kind.as_str();
        let at = match kind {
            "message" => message(src, b, parent, ts, no, text)?,
            "compaction" => match serde_json::from_str::<Compaction>(text) {
                Ok(c) => {
                    let first_kept = match (&c.first_kept_entry_id, c.first_kept_entry_index) {
                        (Some(id), _) => tips.get(id).copied(),
                        (None, Some(i)) => by_index.get(i).copied(),
                        (None, None) => None,
                    };
                    b.summary.mapped("compaction");
                    b.compacted(parent, ts, c.summary, first_kept, c.tokens_before)?
                }
                Err(e) if !src.lenient => return Err(src.malformed(no, e.to_string())),
                Err(_) => b.foreign(parent, ts, no, Some(kind.into()), text, kind)?,
            },
            _ => b.foreign(parent, ts, no, Some(kind.into()), text, kind)?,
        };
        tips.insert(entry.id.unwrap_or_else(|| format!("line-{no}")), at);
        by_index.push(at);
        last = at;
    }
    Ok(())
}

fn message(
    src: &Source,
    b: &mut Builder,
    parent: EntryId,
    ts: chrono::DateTime<chrono::Utc>,
    no: u64,
    text: &str,
) -> Result<EntryId, ImportError> {
    let m = match serde_json::from_str::<MessageEntry>(text) {
        Ok(m) => m.message,
        Err(e) if !src.lenient => return Err(src.malformed(no, e.to_string())),
        Err(_) => return b.foreign(parent, ts, no, None, text, "(malformed)"),
    };
    let blocks = blocks_of(m.content);
    match m.role.as_str() {
        "user" => {
            b.summary.mapped("message/user");
            b.user(parent, ts, texts(&blocks))
        }
        "assistant" => {
            b.summary.mapped("message/assistant");
            b.step(parent, ts, reply(blocks, m.usage, m.stop_reason.as_deref()))
        }
        "toolResult" => {
            b.summary.mapped("message/toolResult");
            let status = if m.is_error {
                ToolStatus::Error
            } else {
                ToolStatus::Ok
            };
            let outcome = ToolOutcome {
                status,
                content: texts(&blocks),
            };
            let call = CallId(m.tool_call_id.unwrap_or_default());
            b.result(parent, ts, call, m.tool_name, outcome)
        }
        role => b.foreign(
            parent,
            ts,
            no,
            Some("message".into()),
            text,
            &format!("message/{role}"),
        ),
    }
}
