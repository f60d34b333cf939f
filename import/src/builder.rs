//! The common builder every format's parser writes through: it appends entries with
//! the log crate's own writer (so the hash chain and the parents are the log's), keeps
//! the run state and the model context at each entry (a step's `step_started` names
//! the context it was requested with), pairs tool results with their calls, writes a
//! `branch` entry before a second child, and counts what it mapped and kept.

use std::collections::HashMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use xcsh_log::foreign::{ForeignRecord, RawJson, SourceFormat};
use xcsh_log::{
    Body, Entry, FORMAT_VERSION, Record, SessionHeader, SessionWriter, StepRecord, TimedEvent,
    ToolResultRecord, contribution,
};
use xcsh_machine::{
    Assembler, CallId, Context, ContextItem, Decision, EntryId, FinishReason, Limits, Message,
    Permissions, RunConfig, RunEnd, StepNo, StepOutcome, StopReason, StreamEvent, ToolCall,
    ToolOutcome, Usage, UserOrigin,
};

use crate::ImportError;
use crate::summary::Summary;

/// One assistant turn of the source (one model response), as the parsers read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Reply {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish: Option<FinishReason>,
}

/// The run an entry is in, as the entries up to it say.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    open: bool,
    steps: u32,
    usage: Usage,
}

/// What the builder keeps of each entry it wrote (indexed by id).
#[derive(Debug)]
struct Node {
    parent: Option<EntryId>,
    contribution: Option<ContextItem>,
    /// A `compacted` decision: its summary and first kept entry.
    compaction: Option<(String, EntryId)>,
    has_child: bool,
    run: Run,
}

pub(crate) struct Builder {
    writer: SessionWriter,
    format: SourceFormat,
    nodes: Vec<Node>,
    /// Each call's name and the group (its step's calls) it belongs to.
    calls: HashMap<CallId, (String, usize)>,
    /// The entry the next result of each step's calls goes under.
    groups: Vec<EntryId>,
    /// The context after one entry (the last one asked for, usually the tip).
    cache: Option<(EntryId, Context)>,
    pub summary: Summary,
    /// The time of the last entry written: an entry whose source record has none.
    last_ts: DateTime<Utc>,
    config: RunConfig,
}

/// The configuration of an imported user message: not known (the other agent's
/// limits and tools are its own), so none: no limits, no tools.
fn unknown_config() -> RunConfig {
    RunConfig {
        limits: Limits {
            max_steps: 0,
            max_tokens: 0,
            max_output_tokens: 0,
            compact_at_tokens: 0,
        },
        tools: Vec::new(),
        mutating: Vec::new(),
        permissions: Permissions::Yolo,
        estimate_bytes_per_token: 0,
        sandbox: None,
    }
}

fn add(a: Usage, b: Usage) -> Usage {
    Usage {
        input_tokens: a.input_tokens + b.input_tokens,
        output_tokens: a.output_tokens + b.output_tokens,
        cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
        cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
        estimated: a.estimated || b.estimated,
    }
}

impl Builder {
    /// Creates `out` holding `header` (entry 0), written at `ts`.
    pub fn create(
        out: &Path,
        format: SourceFormat,
        header: SessionHeader,
        ts: DateTime<Utc>,
    ) -> Result<Builder, ImportError> {
        if out.exists() {
            return Err(ImportError::Exists {
                path: out.to_path_buf(),
            });
        }
        let writer = SessionWriter::create(out, header, ts)?;
        Ok(Builder {
            writer,
            format,
            nodes: vec![Node {
                parent: None,
                contribution: None,
                compaction: None,
                has_child: false,
                run: Run::default(),
            }],
            calls: HashMap::new(),
            groups: Vec::new(),
            cache: None,
            summary: Summary::default(),
            last_ts: ts,
            config: unknown_config(),
        })
    }

    pub fn root(&self) -> EntryId {
        EntryId(0)
    }

    /// The last entry written.
    pub fn last(&self) -> EntryId {
        self.writer.last_id()
    }

    /// `ts`, or the last entry's time for a record without one (never earlier).
    pub fn time(&mut self, ts: Option<DateTime<Utc>>) -> DateTime<Utc> {
        if let Some(t) = ts {
            self.last_ts = t;
        }
        self.last_ts
    }

    pub fn finish(mut self) -> Result<Summary, ImportError> {
        self.writer.sync()?;
        Ok(self.summary)
    }

    fn run(&self, at: EntryId) -> Run {
        self.nodes[at.0 as usize].run
    }

    /// Appends `body` under `parent`, after a `branch` entry when `parent` has a
    /// child already.
    fn append(
        &mut self,
        parent: EntryId,
        ts: DateTime<Utc>,
        body: Body,
    ) -> Result<EntryId, ImportError> {
        let parent = if self.nodes[parent.0 as usize].has_child {
            let from_leaf = self.writer.last_id();
            self.raw_append(parent, ts, Body::Record(Record::Branch { from_leaf }))?
        } else {
            parent
        };
        self.raw_append(parent, ts, body)
    }

    fn raw_append(
        &mut self,
        parent: EntryId,
        ts: DateTime<Utc>,
        body: Body,
    ) -> Result<EntryId, ImportError> {
        let (id, hash) = self.writer.append(parent, ts, &body)?;
        let before = self.run(parent);
        let run = match &body {
            Body::Record(Record::UserMessage { .. } | Record::Compact { .. }) => Run {
                open: true,
                ..Run::default()
            },
            Body::Record(Record::Step(s)) => Run {
                steps: before.steps + 1,
                usage: add(before.usage, s.message.usage),
                ..before
            },
            Body::Decision(Decision::RunFinished { .. }) => Run {
                open: false,
                ..before
            },
            _ => before,
        };
        let compaction = match &body {
            Body::Decision(Decision::Compacted {
                summary,
                first_kept,
                ..
            }) => Some((summary.clone(), *first_kept)),
            _ => None,
        };
        let entry = Entry {
            v: FORMAT_VERSION,
            id,
            parent: Some(parent),
            ts,
            body,
            hash,
        };
        let item = contribution(&entry);
        debug_assert_eq!(id.0 as usize, self.nodes.len());
        self.nodes.push(Node {
            parent: Some(parent),
            contribution: item,
            compaction,
            has_child: false,
            run,
        });
        self.nodes[parent.0 as usize].has_child = true;
        Ok(id)
    }

    /// The model context after entry `at` (as `xcsh_log::rebuild_context` makes it).
    fn context_at(&mut self, at: EntryId) -> Context {
        // Walk back to the cached entry (or the root), noting a compaction.
        let mut path = Vec::new();
        let mut cur = Some(at);
        let mut compacted = false;
        let cached = self.cache.as_ref().map(|(id, _)| *id);
        while let Some(id) = cur {
            if Some(id) == cached && !compacted {
                break;
            }
            let node = &self.nodes[id.0 as usize];
            compacted |= node.compaction.is_some();
            path.push(id);
            cur = node.parent;
        }
        let mut ctx = match (cur, self.cache.take()) {
            (Some(_), Some((_, ctx))) => ctx,
            _ => {
                // From the root: start at the newest compaction on the path.
                path.reverse();
                let newest = path
                    .iter()
                    .rposition(|id| self.nodes[id.0 as usize].compaction.is_some());
                let mut ctx = Context::default();
                let mut from = 0;
                if let Some(at) = newest {
                    let (summary, first_kept) = self.nodes[path[at].0 as usize]
                        .compaction
                        .clone()
                        .unwrap_or_default();
                    ctx.push(None, Message::Summary { text: summary });
                    from = path[..at]
                        .iter()
                        .position(|id| *id == first_kept)
                        .unwrap_or(at);
                }
                path.drain(..from);
                path.reverse();
                ctx
            }
        };
        for id in path.iter().rev() {
            if let Some(item) = &self.nodes[id.0 as usize].contribution {
                ctx.push(item.source, item.message.clone());
            }
        }
        self.cache = Some((at, ctx.clone()));
        ctx
    }

    /// A user prompt under `parent` (closing the run before it, if open).
    pub fn user(
        &mut self,
        parent: EntryId,
        ts: DateTime<Utc>,
        text: String,
    ) -> Result<EntryId, ImportError> {
        let at = self.between_runs(parent, ts)?;
        let config = self.config.clone();
        self.append(at, ts, Body::Record(Record::UserMessage { text, config }))
    }

    /// Where a new run starts under `parent`: `parent` itself, or the finish of the
    /// run open there (written now, `completed`).
    fn between_runs(&mut self, parent: EntryId, ts: DateTime<Utc>) -> Result<EntryId, ImportError> {
        if self.run(parent).open {
            return self.finish_run(parent, ts, StopReason::Completed);
        }
        Ok(parent)
    }

    /// Text the user sent along with tool results, mid-run: a `steer` delivered at
    /// once (the results have settled), as xcsh delivers a steer; a prompt when no
    /// run is open.
    pub fn steer(
        &mut self,
        parent: EntryId,
        ts: DateTime<Utc>,
        text: String,
    ) -> Result<EntryId, ImportError> {
        if !self.run(parent).open {
            return self.user(parent, ts, text);
        }
        let queued = self.append(
            parent,
            ts,
            Body::Record(Record::Steer { text: text.clone() }),
        )?;
        self.append(
            queued,
            ts,
            Body::Decision(Decision::Delivered {
                origin: UserOrigin::Steer,
                queued,
                text,
            }),
        )
    }

    fn finish_run(
        &mut self,
        at: EntryId,
        ts: DateTime<Utc>,
        reason: StopReason,
    ) -> Result<EntryId, ImportError> {
        let run = self.run(at);
        self.append(
            at,
            ts,
            Body::Decision(Decision::RunFinished(RunEnd {
                reason,
                steps: run.steps,
                usage: run.usage,
                undelivered: Vec::new(),
            })),
        )
    }

    /// One model response under `parent`: `step_started` (with the context it was
    /// requested with), the `step` record, a `tool_dispatched` per call, and the run's
    /// finish when it asked for no tool. Returns the last entry written.
    pub fn step(
        &mut self,
        parent: EntryId,
        ts: DateTime<Utc>,
        reply: Reply,
    ) -> Result<EntryId, ImportError> {
        let ctx = self.context_at(parent);
        let step = StepNo(self.run(parent).steps + 1);
        let mut at = self.append(
            parent,
            ts,
            Body::Decision(Decision::StepStarted {
                step,
                messages: u32::try_from(ctx.len()).unwrap_or(u32::MAX),
                context_hash: ctx.hash_hex(),
            }),
        )?;
        let events = events(&reply);
        let mut assembler = Assembler::default();
        for e in &events {
            assembler.push(&e.event);
        }
        let message = assembler.finish();
        let calls = message.tool_calls.clone();
        let finish = message.finish;
        at = self.append(
            at,
            ts,
            Body::Record(Record::Step(Box::new(StepRecord {
                step,
                events,
                outcome: StepOutcome::Completed,
                message,
            }))),
        )?;
        let group = self.groups.len();
        for call in calls.iter() {
            at = self.append(
                at,
                ts,
                Body::Decision(Decision::ToolDispatched {
                    step,
                    call: call.clone(),
                }),
            )?;
            self.calls
                .insert(call.id.clone(), (call.name.clone(), group));
        }
        self.groups.push(at);
        if calls.is_empty() {
            let reason = match finish {
                Some(FinishReason::Length) => StopReason::OutputLimit,
                Some(FinishReason::ContentFilter) => StopReason::ContentFilter,
                Some(FinishReason::Stop | FinishReason::ToolCalls | FinishReason::Error) | None => {
                    StopReason::Completed
                }
            };
            at = self.finish_run(at, ts, reason)?;
        }
        Ok(at)
    }

    /// The result of call `call_id` under `parent`, or, when the results of its
    /// step's calls written already are further down that branch (Claude Code hangs
    /// parallel results off different records of one response), after the last of
    /// them: the results of a step stay on one branch. Returns the entry written.
    pub fn result(
        &mut self,
        parent: EntryId,
        ts: DateTime<Utc>,
        call_id: CallId,
        name: Option<String>,
        outcome: ToolOutcome,
    ) -> Result<EntryId, ImportError> {
        let (known, group) = match self.calls.get(&call_id) {
            Some((n, g)) => (Some(n.clone()), Some(*g)),
            None => (None, None),
        };
        let parent = match group {
            Some(g) if self.is_below(self.groups[g], parent) => self.groups[g],
            Some(_) | None => parent,
        };
        let record = ToolResultRecord {
            call_id,
            name: known.or(name).unwrap_or_default(),
            outcome,
            duration_ms: 0,
            changes: Vec::new(),
            child: None,
        };
        let id = self.append(
            parent,
            ts,
            Body::Record(Record::ToolResult(Box::new(record))),
        )?;
        if let Some(g) = group {
            self.groups[g] = id;
        }
        Ok(id)
    }

    /// Whether `entry` is a descendant of `ancestor` (a few generations down).
    fn is_below(&self, entry: EntryId, ancestor: EntryId) -> bool {
        let mut cur = self.nodes[entry.0 as usize].parent;
        for _ in 0..256 {
            match cur {
                Some(id) if id == ancestor => return true,
                Some(id) => cur = self.nodes[id.0 as usize].parent,
                None => return false,
            }
        }
        false
    }

    /// A compaction under `parent`: `summary` replaces everything before
    /// `first_kept` (`None`: everything before `parent`, which is kept: the
    /// run's finish when the source compacted between turns, adding nothing).
    pub fn compacted(
        &mut self,
        parent: EntryId,
        ts: DateTime<Utc>,
        summary: String,
        first_kept: Option<EntryId>,
        tokens_before: u64,
    ) -> Result<EntryId, ImportError> {
        // A compaction between turns is a run of its own, as `/compact` is in xcsh.
        let mut at = self.between_runs(parent, ts)?;
        let first_kept = first_kept.unwrap_or(at);
        let config = self.config.clone();
        at = self.append(at, ts, Body::Record(Record::Compact { config }))?;
        at = self.append(
            at,
            ts,
            Body::Decision(Decision::Compacted {
                summary,
                first_kept,
                tokens_before,
                tokens_after: 0,
            }),
        )?;
        self.finish_run(at, ts, StopReason::Completed)
    }

    /// A source record kept verbatim under `parent`: counted as kept (`kind`).
    pub fn foreign(
        &mut self,
        parent: EntryId,
        ts: DateTime<Utc>,
        line: u64,
        source_type: Option<String>,
        raw: &str,
        kind: &str,
    ) -> Result<EntryId, ImportError> {
        let raw = match RawJson::parse(raw) {
            Ok(r) => r,
            // A malformed line (kept under --lenient): as a JSON string.
            Err(_) => RawJson(serde_json::value::to_raw_value(raw)?),
        };
        self.summary.kept(kind);
        self.append(
            parent,
            ts,
            Body::Record(Record::Foreign(ForeignRecord {
                format: self.format,
                line,
                source_type,
                raw,
            })),
        )
    }
}

/// The stream events a step's reply stands for (all at 0 ms: the source kept no
/// stream), in the order a provider sends them.
fn events(reply: &Reply) -> Vec<TimedEvent> {
    let mut out = Vec::new();
    let mut push = |event| out.push(TimedEvent { ms: 0, event });
    if !reply.reasoning.is_empty() {
        push(StreamEvent::ReasoningDelta {
            text: reply.reasoning.clone(),
        });
    }
    if !reply.text.is_empty() {
        push(StreamEvent::TextDelta {
            text: reply.text.clone(),
        });
    }
    for (i, call) in reply.tool_calls.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        push(StreamEvent::ToolCallStart {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        push(StreamEvent::ToolCallDelta {
            index,
            arguments: call.arguments.clone(),
        });
        push(StreamEvent::ToolCallEnd { index });
    }
    push(StreamEvent::Usage { usage: reply.usage });
    let finish = reply.finish.unwrap_or(if reply.tool_calls.is_empty() {
        FinishReason::Stop
    } else {
        FinishReason::ToolCalls
    });
    push(StreamEvent::Finish { reason: finish });
    out
}
