//! Claude Code transcripts (`~/.claude/projects/-PATH-/SESSION.jsonl`, and a
//! sub-agent's `SESSION/subagents/agent-ID.jsonl`, imported on its own). Claude Code
//! has no public source: this follows its documentation, the anthropics/claude-code
//! issues and the samples. Records with a `uuid` form a tree by `parentUuid`
//! (`user`, `assistant`, `system`, `attachment`); a `compact_boundary` system
//! record starts a new root and names its logical parent (`logicalParentUuid`).
//! One model response is several `assistant` records, one per content block,
//! chained, with the same `message.id`: they become one step. Records outside the
//! tree (`queue-operation`, `last-prompt`, `summary`, …) are kept as foreign on the
//! way to the next tree record, so that they add no branch.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use xcsh_machine::{CallId, EntryId, FinishReason, ToolOutcome, ToolStatus, Usage};

use crate::builder::{Builder, Reply};
use crate::content::{Block, Content, blocks_of, texts};
use crate::{Head, ImportError, Source, parse_ts};

#[derive(Deserialize)]
struct Record {
    #[serde(rename = "type")]
    kind: Option<String>,
    subtype: Option<String>,
    uuid: Option<String>,
    #[serde(rename = "parentUuid")]
    parent_uuid: Option<String>,
    #[serde(rename = "logicalParentUuid")]
    logical_parent_uuid: Option<String>,
    #[serde(default, rename = "isSidechain")]
    is_sidechain: bool,
    #[serde(default, rename = "isMeta")]
    is_meta: bool,
    #[serde(default, rename = "isCompactSummary")]
    is_compact_summary: bool,
    timestamp: Option<String>,
    message: Option<Message>,
    #[serde(rename = "compactMetadata")]
    compact_metadata: Option<CompactMetadata>,
}

#[derive(Deserialize)]
struct HeadProbe {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    #[serde(rename = "agentId")]
    agent_id: Option<String>,
    cwd: Option<String>,
    version: Option<String>,
    timestamp: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    id: Option<String>,
    content: Option<Content>,
    usage: Option<ClaudeUsage>,
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct CompactMetadata {
    #[serde(default, rename = "preTokens")]
    pre_tokens: u64,
}

#[derive(Deserialize)]
struct ClaudeUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
}

pub(crate) fn head(src: &Source) -> Option<Head> {
    let mut head: Option<Head> = None;
    for (_, text) in &src.lines {
        let Ok(h) = serde_json::from_str::<HeadProbe>(text) else {
            continue;
        };
        let (Some(session), Some(cwd)) = (h.session_id, h.cwd) else {
            continue;
        };
        head = Some(Head {
            // A sub-agent's records carry its parent's session id and its own agent id.
            session_id: match h.agent_id {
                Some(agent) => format!("{session}/agent-{agent}"),
                None => session,
            },
            cwd,
            version: h.version,
            ts: h.timestamp.as_deref().and_then(parse_ts),
            forked_from: None,
        });
        break;
    }
    let first_ts = src
        .lines
        .iter()
        .find_map(|(_, t)| serde_json::from_str::<HeadProbe>(t).ok()?.timestamp);
    head.map(|mut h| {
        h.ts = first_ts.as_deref().and_then(parse_ts).or(h.ts);
        h
    })
}

/// The assistant records of one response read so far.
struct Group {
    message_id: String,
    /// The entry the step goes under.
    parent: EntryId,
    last_uuid: String,
    uuids: Vec<String>,
    ts: DateTime<Utc>,
    reply: Reply,
    thinking: Vec<String>,
    texts: Vec<String>,
}

struct Reader<'a> {
    src: &'a Source,
    /// The xcsh entry each record's children go under, by uuid.
    tips: HashMap<String, EntryId>,
    /// Records outside the tree, waiting for the next tree record: (line, type, text).
    waiting: Vec<(u64, Option<String>, String, DateTime<Utc>)>,
    group: Option<Group>,
    /// The `preTokens` of the last compact boundary.
    tokens_before: u64,
    /// Whether the file's tree is a sub-agent's (its first tree record is a sidechain).
    sidechain_file: Option<bool>,
}

impl Reader<'_> {
    fn parent(&self, b: &Builder, uuid: Option<&str>, no: u64) -> Result<EntryId, ImportError> {
        match uuid {
            None => Ok(b.root()),
            Some(p) => self.tips.get(p).copied().ok_or_else(|| {
                self.src
                    .malformed(no, format!("parentUuid {p:?} names no earlier record"))
            }),
        }
    }

    /// The records waiting, kept as foreign under `at`; the last one's entry.
    fn drain(&mut self, b: &mut Builder, mut at: EntryId) -> Result<EntryId, ImportError> {
        for (no, kind, text, ts) in std::mem::take(&mut self.waiting) {
            let label = kind.clone().unwrap_or_else(|| "(malformed)".into());
            at = b.foreign(at, ts, no, kind, &text, &label)?;
        }
        Ok(at)
    }

    /// Writes the response read so far as one step.
    fn flush(&mut self, b: &mut Builder) -> Result<(), ImportError> {
        let Some(mut g) = self.group.take() else {
            return Ok(());
        };
        let parent = g.parent;
        g.reply.text = g.texts.join("\n");
        g.reply.reasoning = g.thinking.join("\n");
        let at = b.step(parent, g.ts, g.reply)?;
        for u in g.uuids {
            self.tips.insert(u, at);
        }
        Ok(())
    }
}

pub(crate) fn import(src: &Source, b: &mut Builder) -> Result<(), ImportError> {
    let mut r = Reader {
        src,
        tips: HashMap::new(),
        waiting: Vec::new(),
        group: None,
        tokens_before: 0,
        sidechain_file: None,
    };
    for (no, text) in &src.lines {
        let no = *no;
        let Some(rec) = src.parse::<Record>(no, text)? else {
            let ts = b.time(None);
            r.waiting.push((no, None, text.clone(), ts));
            continue;
        };
        let ts = b.time(rec.timestamp.as_deref().and_then(parse_ts));
        let kind = rec.kind.clone().unwrap_or_else(|| "?".into());
        let Some(uuid) = rec.uuid.clone() else {
            r.waiting.push((no, rec.kind.clone(), text.clone(), ts));
            continue;
        };
        let sidechain_file = *r.sidechain_file.get_or_insert(rec.is_sidechain);
        // Continues the response being read?
        if kind == "assistant"
            && let Some(g) = &mut r.group
            && rec.parent_uuid.as_deref() == Some(g.last_uuid.as_str())
            && rec.message.as_ref().and_then(|m| m.id.as_deref()) == Some(g.message_id.as_str())
        {
            g.last_uuid = uuid.clone();
            g.uuids.push(uuid);
            if let Some(m) = rec.message {
                add_to(g, m);
            }
            b.summary.mapped("assistant");
            continue;
        }
        r.flush(b)?;
        let parent_uuid = rec
            .parent_uuid
            .as_deref()
            .or(rec.logical_parent_uuid.as_deref());
        let parent = r.parent(b, parent_uuid, no)?;
        let parent = r.drain(b, parent)?;
        let at = if rec.is_sidechain != sidechain_file {
            // A sidechain inside a session file (older versions): kept, not mapped.
            b.foreign(
                parent,
                ts,
                no,
                Some(kind.clone()),
                text,
                &format!("{kind} (sidechain)"),
            )?
        } else {
            match kind.as_str() {
                "assistant" => {
                    let Some(m) = rec.message else {
                        return Err(
                            src.malformed(no, "an assistant record without a message".into())
                        );
                    };
                    let mut g = Group {
                        message_id: m.id.clone().unwrap_or_else(|| format!("line-{no}")),
                        parent,
                        last_uuid: uuid.clone(),
                        uuids: vec![uuid.clone()],
                        ts,
                        reply: Reply::default(),
                        thinking: Vec::new(),
                        texts: Vec::new(),
                    };
                    add_to(&mut g, m);
                    b.summary.mapped("assistant");
                    r.group = Some(g);
                    continue;
                }
                "user" => user(&mut r, b, parent, ts, no, rec, text)?,
                _ => {
                    // A compact boundary is kept as foreign too; the compaction it
                    // starts takes its token count.
                    if kind == "system" && rec.subtype.as_deref() == Some("compact_boundary") {
                        r.tokens_before = rec.compact_metadata.as_ref().map_or(0, |m| m.pre_tokens);
                    }
                    let label = match &rec.subtype {
                        Some(s) => format!("{kind}/{s}"),
                        None => kind.clone(),
                    };
                    b.foreign(parent, ts, no, Some(kind.clone()), text, &label)?
                }
            }
        };
        r.tips.insert(uuid, at);
    }
    r.flush(b)?;
    if !r.waiting.is_empty() {
        let at = b.last();
        r.drain(b, at)?;
    }
    Ok(())
}

/// Adds one assistant record's content to the response.
fn add_to(g: &mut Group, m: Message) {
    for block in blocks_of(m.content) {
        match block.kind.as_str() {
            "text" => g.texts.extend(block.text),
            "thinking" => g.thinking.extend(block.thinking.filter(|t| !t.is_empty())),
            "tool_use" => g.reply.tool_calls.push(block.into_call()),
            _ => {}
        }
    }
    if let Some(u) = m.usage {
        g.reply.usage = Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_input_tokens,
            cache_write_tokens: u.cache_creation_input_tokens,
            estimated: false,
        };
    }
    if let Some(reason) = m.stop_reason.as_deref() {
        g.reply.finish = match reason {
            "end_turn" | "stop_sequence" | "pause_turn" => Some(FinishReason::Stop),
            "tool_use" => Some(FinishReason::ToolCalls),
            "max_tokens" => Some(FinishReason::Length),
            "refusal" => Some(FinishReason::ContentFilter),
            _ => None,
        };
    }
}

fn user(
    r: &mut Reader<'_>,
    b: &mut Builder,
    parent: EntryId,
    ts: DateTime<Utc>,
    no: u64,
    mut rec: Record,
    text: &str,
) -> Result<EntryId, ImportError> {
    let blocks = blocks_of(rec.message.as_mut().and_then(|m| m.content.take()));
    let results: Vec<&Block> = blocks.iter().filter(|b| b.kind == "tool_result").collect();
    if !results.is_empty() {
        let mut at = parent;
        for res in results {
            let outcome = ToolOutcome {
                status: if res.is_error {
                    ToolStatus::Error
                } else {
                    ToolStatus::Ok
                },
                content: match &res.content {
                    None => String::new(),
                    Some(Content::Text(text)) => text.clone(),
                    Some(Content::Blocks(blocks)) => texts(blocks),
                },
            };
            let call = CallId(res.tool_use_id.clone().unwrap_or_default());
            at = b.result(at, ts, call, None, outcome)?;
        }
        b.summary.mapped("user (tool result)");
        let said = texts(&blocks);
        if !said.is_empty() {
            at = b.steer(at, ts, said)?;
        }
        return Ok(at);
    }
    let said = texts(&blocks);
    if rec.is_compact_summary {
        b.summary.mapped("user (compact summary)");
        let tokens = std::mem::take(&mut r.tokens_before);
        return b.compacted(parent, ts, said, None, tokens);
    }
    if rec.is_meta {
        return b.foreign(parent, ts, no, Some("user".into()), text, "user (meta)");
    }
    if said.starts_with("<command-") || said.starts_with("<local-command-") {
        return b.foreign(parent, ts, no, Some("user".into()), text, "user (command)");
    }
    b.summary.mapped("user");
    b.user(parent, ts, said)
}
