//! Building an index entry by entry, in file order (from a log being read, or to
//! extend an index by the lines appended since it was written).

use super::*;
use xcsh_machine::RunEnd;

/// Builds an index entry by entry (in file order).
#[derive(Debug, Default)]
pub struct IndexBuilder {
    pub(super) data: IndexData,
    /// Position of each id.
    positions: HashMap<u64, u32>,
}

impl IndexBuilder {
    pub fn new() -> IndexBuilder {
        IndexBuilder {
            data: IndexData {
                version: INDEX_VERSION,
                ..IndexData::default()
            },
            positions: HashMap::new(),
        }
    }

    /// Continues an index (to add the lines appended since it was written).
    pub fn resume(data: IndexData) -> IndexBuilder {
        let mut data = data;
        data.offsets.pop();
        let positions = data
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| (*id, u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        IndexBuilder { data, positions }
    }

    pub fn len(&self) -> usize {
        self.data.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.ids.is_empty()
    }

    /// The hash of an indexed entry.
    pub fn hash_of(&self, id: EntryId) -> Option<EntryHash> {
        let pos = *self.positions.get(&id.0)?;
        self.data.hashes.get(pos as usize).map(|h| EntryHash(*h))
    }

    fn text(&mut self, s: &str) -> StrRef {
        let start = u32::try_from(self.data.text.len()).unwrap_or(u32::MAX);
        self.data.text.push_str(s);
        StrRef {
            start,
            len: u32::try_from(s.len()).unwrap_or(u32::MAX),
        }
    }

    fn row<T>(table: &mut Vec<T>, row: T) -> u32 {
        table.push(row);
        u32::try_from(table.len() - 1).unwrap_or(u32::MAX)
    }

    /// A row of the tools table (`status` as [`ToolRow::status`]).
    fn tool_row(&mut self, call_id: &str, name: &str, status: u8, duration_ms: u64) -> u32 {
        let row = ToolRow {
            call_id: self.text(call_id),
            name: self.text(name),
            status,
            duration_ms,
        };
        Self::row(&mut self.data.tools, row)
    }

    /// A row of the calls table; an absent text is the empty [`StrRef::default`].
    fn call_row(&mut self, call_id: Option<&str>, name: Option<&str>, step: u32) -> u32 {
        let mut text = |t: Option<&str>| t.map_or_else(StrRef::default, |t| self.text(t));
        let row = CallRow {
            call_id: text(call_id),
            name: text(name),
            step,
        };
        Self::row(&mut self.data.calls, row)
    }

    /// Adds the entry whose line starts at `offset`.
    pub fn push(&mut self, offset: u64, entry: &Entry) {
        let pos = u32::try_from(self.data.ids.len()).unwrap_or(u32::MAX);
        if pos == 0
            && let Body::Record(Record::Session(h)) = &entry.body
        {
            self.data.session_id.clone_from(&h.session_id);
            self.data.cwd.clone_from(&h.cwd);
            self.data.forked_from = h
                .forked_from
                .as_ref()
                .map(|f| (f.session_id.clone(), f.entry.0));
            self.data.started_ms = entry.ts.timestamp_millis();
        }
        let parent = entry
            .parent
            .and_then(|p| self.positions.get(&p.0).copied())
            .unwrap_or(NO_PARENT);
        self.positions.insert(entry.id.0, pos);
        let kind = Kind::of(&entry.body);
        let aux = self.summary(kind, entry);
        let d = &mut self.data;
        d.offsets.push(offset);
        d.ids.push(entry.id.0);
        d.parents.push(parent);
        d.kinds.push(kind);
        d.aux.push(aux);
        d.hashes.push(entry.hash.0);
        d.ts_ns
            .push(entry.ts.timestamp_nanos_opt().unwrap_or(i64::MIN));
    }

    fn prompt(&mut self, text: &str, max_tokens: u64) -> u32 {
        let preview = preview(text);
        let preview = self.text(&preview);
        Self::row(
            &mut self.data.prompts,
            PromptRow {
                preview,
                max_tokens,
            },
        )
    }

    /// The row of a step (or an extraction, step 0) in the steps table.
    fn step_row(
        &mut self,
        step: u32,
        events: &[crate::entry::TimedEvent],
        outcome: &StepOutcome,
        message: &xcsh_machine::Assembled,
    ) -> u32 {
        let u = &message.usage;
        let calls_start = u32::try_from(self.data.call_ids.len()).unwrap_or(u32::MAX);
        for c in &message.tool_calls {
            let id = self.text(&c.id.0);
            self.data.call_ids.push(id);
        }
        let ttft_ms = events
            .iter()
            .find(|t| {
                matches!(
                    t.event,
                    StreamEvent::TextDelta { .. }
                        | StreamEvent::ReasoningDelta { .. }
                        | StreamEvent::ToolCallStart { .. }
                )
            })
            .map_or(NONE, |t| t.ms);
        let tool_calls = u32::try_from(message.tool_calls.len()).unwrap_or(u32::MAX);
        let finish_error = message.finish == Some(FinishReason::Error);
        let (outcome, error_kind, error_text) = match outcome {
            StepOutcome::Completed => (0, 0, ""),
            StepOutcome::Failed { error } => (1, kind_code(error.kind), error.message.as_str()),
            StepOutcome::Aborted => (2, 0, ""),
        };
        let error_message = self.text(error_text);
        let row = StepRow {
            step,
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
            ttft_ms,
            stream_ms: events.last().map_or(NONE, |t| t.ms),
            retries: u32::try_from(
                events
                    .iter()
                    .filter(|t| matches!(t.event, StreamEvent::Retrying { .. }))
                    .count(),
            )
            .unwrap_or(u32::MAX),
            tool_calls,
            calls_start,
            outcome,
            finish_error,
            estimated: u.estimated,
            error_kind,
            error_message,
        };
        Self::row(&mut self.data.steps, row)
    }

    /// The row of the entry's summary in its kind's table.
    fn summary(&mut self, kind: Kind, entry: &Entry) -> u32 {
        match &entry.body {
            Body::Record(r) => match r {
                Record::Branch { from_leaf } => Self::row(&mut self.data.branches, from_leaf.0),
                Record::Label { target, name } => {
                    let name = self.text(name);
                    Self::row(
                        &mut self.data.labels,
                        LabelRow {
                            target: target.0,
                            name,
                        },
                    )
                }
                Record::UserMessage { text, config } => self.prompt(text, config.limits.max_tokens),
                Record::Compact { config } => self.prompt("", config.limits.max_tokens),
                Record::Steer { text } | Record::FollowUp { text } => self.prompt(text, 0),
                Record::Step(s) => self.step_row(s.step.0, &s.events, &s.outcome, &s.message),
                // The extraction is a step of its own kind (step 0): `stats` counts it.
                Record::MemoryExtraction(x) => self.step_row(0, &x.events, &x.outcome, &x.message),
                Record::ToolResult(t) => {
                    let status = match t.outcome.status {
                        ToolStatus::Ok => 0,
                        ToolStatus::Error => 1,
                        ToolStatus::Cancelled => 2,
                    };
                    self.tool_row(&t.call_id.0, &t.name, status, t.duration_ms)
                }
                Record::LateEvent { step, .. } => step.0,
                Record::ApprovalAnswer { call_id, .. } | Record::CheckFailed { call_id, .. } => {
                    self.call_row(Some(&call_id.0), None, 0)
                }
                Record::Session(_)
                | Record::Interrupt {}
                | Record::CompactionSummary { .. }
                | Record::Recovered { .. }
                | Record::Undo { .. }
                | crate::setting_record!()
                | Record::MemoryIndex(_)
                | Record::MemorySnapshot(_)
                | Record::MemoryForget(_)
                | Record::Foreign(_) => u32::MAX,
            },
            Body::Decision(d) => match d {
                Decision::Delivered { origin, .. } => match origin {
                    UserOrigin::Prompt => 0,
                    UserOrigin::Steer => 1,
                    UserOrigin::FollowUp => 2,
                    UserOrigin::Undo => 3,
                },
                Decision::SyntheticResult { call, .. } => {
                    self.tool_row(&call.id.0, &call.name, 3, 0)
                }
                Decision::Compacted {
                    tokens_before,
                    tokens_after,
                    ..
                } => Self::row(
                    &mut self.data.compactions,
                    CompactionRow {
                        tokens_before: *tokens_before,
                        tokens_after: *tokens_after,
                    },
                ),
                Decision::RunFinished(RunEnd { reason, usage, .. }) => {
                    let (code, a, b, kind, message) = match reason {
                        StopReason::Completed => (0, 0, 0, 0, ""),
                        StopReason::MaxSteps { limit } => (1, u64::from(*limit), 0, 0, ""),
                        StopReason::MaxTokens { limit, spent } => (2, *limit, *spent, 0, ""),
                        StopReason::OutputLimit => (3, 0, 0, 0, ""),
                        StopReason::ContentFilter => (4, 0, 0, 0, ""),
                        StopReason::Interrupted => (5, 0, 0, 0, ""),
                        StopReason::ProviderError { error } => {
                            (6, 0, 0, kind_code(error.kind), error.message.as_str())
                        }
                        StopReason::Crashed => (7, 0, 0, 0, ""),
                        StopReason::ContextOverflow { error, compacted } => (
                            8,
                            u64::from(*compacted),
                            0,
                            kind_code(error.kind),
                            error.message.as_str(),
                        ),
                    };
                    let error_message = self.text(message);
                    Self::row(
                        &mut self.data.finishes,
                        FinishRow {
                            spend: usage.spend(),
                            estimated: usage.estimated,
                            reason: code,
                            a,
                            b,
                            error_kind: kind,
                            error_message,
                        },
                    )
                }
                Decision::StepStarted { step, .. } => step.0,
                Decision::ToolDispatched { step, call } => {
                    self.call_row(Some(&call.id.0), Some(&call.name), step.0)
                }
                Decision::Approval { tool, .. } => self.call_row(None, Some(tool), 0),
                Decision::CompactionStarted { .. } | Decision::Ignored { .. } => u32::MAX,
            },
            Body::Unknown { type_name, .. } => {
                debug_assert_eq!(kind, Kind::Unknown);
                let name = self.text(type_name);
                Self::row(&mut self.data.unknown, name)
            }
        }
    }

    /// The index of the lines pushed, which end at `covered`.
    pub fn finish(mut self, covered: u64) -> IndexData {
        self.data.covered = covered;
        self.data.offsets.push(covered);
        self.data
    }
}
