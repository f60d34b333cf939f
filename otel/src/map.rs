//! The span mapping: each run of a session (a `user_message` or `compact` entry to
//! its `run_finished`) becomes an `invoke_agent` root span with a `chat` span per
//! step, an `execute_tool` span per tool call and a `compaction` span per compaction;
//! a sub-agent's runs hang under their parent's `task` call. The table is in SPEC.md
//! "Traces (OpenTelemetry)".

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use opentelemetry::trace::{
    Event, Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use opentelemetry_semantic_conventions::attribute as semconv;
use xcsh_log::family::Member;
use xcsh_log::{Body, Entry, Record, SessionLog, ToolResultRecord};
use xcsh_machine::{
    Assembled, CallId, Decision, EntryId, FinishReason, RunEnd, StepNo, StepOutcome, StopReason,
    ToolCall, ToolStatus, Usage,
};

use crate::ids::{span_id, trace_id};

/// Newer GenAI names that the semantic-conventions crate (0.31) does not have yet.
const GEN_AI_PROVIDER_NAME: &str = "gen_ai.provider.name";
const GEN_AI_INPUT_MESSAGES: &str = "gen_ai.input.messages";
const GEN_AI_OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
/// OpenInference's span kind and token counts (what Arize Phoenix shows).
const OI_SPAN_KIND: &str = "openinference.span.kind";
const OI_PROMPT_TOKENS: &str = "llm.token_count.prompt";
const OI_COMPLETION_TOKENS: &str = "llm.token_count.completion";
const OI_TOTAL_TOKENS: &str = "llm.token_count.total";
const OI_MODEL_NAME: &str = "llm.model_name";

/// What the spans carry beyond what the log records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Message content (prompt, completion, tool arguments and results):
    /// `--otel-content`, off by default as the conventions ask.
    pub content: bool,
    /// The provider (`gen_ai.provider.name`), when the caller knows it: the log does
    /// not record it.
    pub provider: Option<String>,
    /// The model asked for (`gen_ai.request.model`), when the caller knows it.
    pub model: Option<String>,
}

/// The spans of one session, in the order their entries start. A sub-agent's
/// session goes in its parent's trace, under the parent's `task` call.
pub fn spans(log: &SessionLog, opts: &Options) -> Vec<SpanData> {
    let trace = trace_of(log);
    let mut out = Vec::new();
    Session::new(log, trace, opts).map_into(Keep::All, &mut out);
    out
}

/// The spans of a session and every loaded sub-agent session below it, all in the
/// trace of the session the family was loaded from.
pub fn spans_of_family(family: &Member<SessionLog>, opts: &Options) -> Vec<SpanData> {
    let trace = trace_of(&family.data);
    let mut out = Vec::new();
    for m in family.members() {
        Session::new(&m.data, trace, opts).map_into(Keep::All, &mut out);
    }
    out
}

/// The spans of the last run in the file of the family's session (the run a
/// `xcsh run` just finished) and of the sub-agent sessions its `task` calls started.
pub fn spans_of_last_run(family: &Member<SessionLog>, opts: &Options) -> Vec<SpanData> {
    let trace = trace_of(&family.data);
    let mut out = Vec::new();
    let mut kept: HashMap<&str, HashSet<EntryId>> = HashMap::new();
    for (i, m) in family.members().into_iter().enumerate() {
        let h = m.data.header();
        let keep = if i == 0 {
            Keep::Last
        } else {
            match &h.parent {
                Some(p)
                    if kept
                        .get(p.session_id.as_str())
                        .is_some_and(|k| k.contains(&p.entry)) =>
                {
                    Keep::All
                }
                _ => continue,
            }
        };
        let entries = Session::new(&m.data, trace, opts).map_into(keep, &mut out);
        kept.insert(&h.session_id, entries);
    }
    out
}

/// Which runs of a session become spans.
#[derive(Debug, Clone, Copy)]
enum Keep {
    All,
    /// The last run in file order.
    Last,
}

/// A session's trace: its own, or (a sub-agent's) its parent's.
fn trace_of(log: &SessionLog) -> TraceId {
    let h = log.header();
    trace_id(h.parent.as_ref().map_or(&h.session_id, |p| &p.session_id))
}

fn time(ts: &DateTime<Utc>) -> SystemTime {
    SystemTime::from(*ts)
}

fn kv(key: &'static str, value: impl Into<Value>) -> KeyValue {
    KeyValue::new(key, value)
}

fn int(n: u64) -> Value {
    Value::I64(i64::try_from(n).unwrap_or(i64::MAX))
}

fn error(description: impl Into<Cow<'static, str>>) -> Status {
    Status::Error {
        description: description.into(),
    }
}

fn finish_word(f: FinishReason) -> &'static str {
    match f {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Error => "error",
    }
}

/// Keeps an approval event of `call_id` for its tool span (the call is dispatched
/// after its approval, so the span does not exist yet).
fn approval_event(
    approvals: &mut HashMap<CallId, Vec<Event>>,
    call_id: &CallId,
    name: &'static str,
    ts: &DateTime<Utc>,
    attrs: Vec<KeyValue>,
) {
    let event = Event::new(name, time(ts), attrs, 0);
    approvals.entry(call_id.clone()).or_default().push(event);
}

/// A JSON word of a serde enum (`ProviderErrorKind`, `SyntheticReason`, …).
fn word(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "unknown".to_owned(),
    }
}

/// The usage attributes (GenAI and OpenInference) of a step or run.
fn usage_attrs(usage: &Usage, out: &mut Vec<KeyValue>) {
    out.push(kv(
        semconv::GEN_AI_USAGE_INPUT_TOKENS,
        int(usage.input_tokens),
    ));
    out.push(kv(
        semconv::GEN_AI_USAGE_OUTPUT_TOKENS,
        int(usage.output_tokens),
    ));
    if usage.cache_read_tokens > 0 {
        out.push(kv(
            "xcsh.usage.cache_read_tokens",
            int(usage.cache_read_tokens),
        ));
    }
    if usage.cache_write_tokens > 0 {
        out.push(kv(
            "xcsh.usage.cache_write_tokens",
            int(usage.cache_write_tokens),
        ));
    }
    if usage.estimated {
        out.push(kv("xcsh.usage.estimated", true));
    }
}

/// `[{"role":..,"parts":[{"type":"text","content":..}]}]`, the conventions' message
/// shape.
fn text_message(role: &str, text: &str) -> String {
    serde_json::json!([{"role": role, "parts": [{"type": "text", "content": text}]}]).to_string()
}

fn output_message(m: &Assembled) -> String {
    let mut parts = Vec::new();
    if !m.text.is_empty() {
        parts.push(serde_json::json!({"type": "text", "content": m.text}));
    }
    for c in &m.tool_calls {
        let args = serde_json::from_str::<serde_json::Value>(&c.arguments)
            .unwrap_or_else(|_| serde_json::Value::String(c.arguments.clone()));
        parts.push(serde_json::json!({"type": "tool_call", "id": c.id.0, "name": c.name, "arguments": args}));
    }
    let finish = m.finish.map_or("stop", finish_word);
    serde_json::json!([{"role": "assistant", "parts": parts, "finish_reason": finish}]).to_string()
}

/// One span under construction.
struct Open<'a> {
    entry: &'a Entry,
    parent: SpanId,
    name: String,
    kind: SpanKind,
    attrs: Vec<KeyValue>,
    events: Vec<Event>,
    links: Vec<Link>,
}

/// One run: its entries, in order (a chain in the DAG).
struct Run<'a> {
    entries: Vec<&'a Entry>,
    finished: bool,
}

/// The mapping of one session's log.
struct Session<'a> {
    log: &'a SessionLog,
    id: &'a str,
    trace: TraceId,
    opts: &'a Options,
    scope: InstrumentationScope,
    /// The span a run's root hangs under (a sub-agent's: its parent's `task` call).
    root_parent: SpanId,
}

impl<'a> Session<'a> {
    fn new(log: &'a SessionLog, trace: TraceId, opts: &'a Options) -> Session<'a> {
        let h = log.header();
        let root_parent = h
            .parent
            .as_ref()
            .map_or(SpanId::INVALID, |p| span_id(&p.session_id, p.entry));
        Session {
            log,
            id: &h.session_id,
            trace,
            opts,
            scope: InstrumentationScope::builder("xcsh")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
            root_parent,
        }
    }

    fn context(&self, entry: EntryId) -> SpanContext {
        SpanContext::new(
            self.trace,
            span_id(self.id, entry),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        )
    }

    fn finish(&self, open: Open<'_>, end: &Entry, status: Status, out: &mut Vec<SpanData>) {
        out.push(SpanData {
            span_context: self.context(open.entry.id),
            parent_span_id: open.parent,
            parent_span_is_remote: false,
            span_kind: open.kind,
            name: open.name.into(),
            start_time: time(&open.entry.ts),
            end_time: time(&end.ts.max(open.entry.ts)),
            attributes: open.attrs,
            dropped_attributes_count: 0,
            events: {
                let mut events = SpanEvents::default();
                events.events = open.events;
                events
            },
            links: {
                let mut links = SpanLinks::default();
                links.links = open.links;
                links
            },
            status,
            instrumentation_scope: self.scope.clone(),
        });
    }

    /// The runs of the log, all branches, in file order.
    fn runs(&self) -> Vec<Run<'a>> {
        let mut runs: Vec<Run<'a>> = Vec::new();
        let mut run_of: HashMap<EntryId, usize> = HashMap::new();
        for e in &self.log.entries {
            let open_parent = e
                .parent
                .and_then(|p| run_of.get(&p).copied())
                .filter(|&r| !runs[r].finished);
            let starts = matches!(
                e.body,
                Body::Record(Record::UserMessage { .. } | Record::Compact { .. })
            );
            let r = match (open_parent, starts) {
                (Some(r), _) => r,
                (None, true) => {
                    runs.push(Run {
                        entries: Vec::new(),
                        finished: false,
                    });
                    runs.len() - 1
                }
                (None, false) => continue,
            };
            runs[r].entries.push(e);
            run_of.insert(e.id, r);
            if matches!(e.body, Body::Decision(Decision::RunFinished { .. })) {
                runs[r].finished = true;
            }
        }
        runs
    }

    /// The spans of the runs `keep` says; returns the entries of those runs.
    fn map_into(&self, keep: Keep, out: &mut Vec<SpanData>) -> HashSet<EntryId> {
        let runs = self.runs();
        let mut run_of: HashMap<EntryId, usize> = HashMap::new();
        for (i, r) in runs.iter().enumerate() {
            for e in &r.entries {
                run_of.insert(e.id, i);
            }
        }
        let mut continued: HashSet<EntryId> = HashSet::new();
        let mut kept = HashSet::new();
        for (i, run) in runs.iter().enumerate() {
            let links = self.links(run, &runs, &run_of, &mut continued);
            if matches!(keep, Keep::All) || i + 1 == runs.len() {
                kept.extend(run.entries.iter().map(|e| e.id));
                self.run_spans(run, links, out);
            }
        }
        kept
    }

    /// The link of a run to the run whose history it continues: `previous_turn` for
    /// the first run after a finished run, `branched_from` for any other.
    fn links(
        &self,
        run: &Run<'a>,
        runs: &[Run<'a>],
        run_of: &HashMap<EntryId, usize>,
        continued: &mut HashSet<EntryId>,
    ) -> Vec<Link> {
        let mut at = run.entries[0].parent;
        let mut guard = 0;
        while let Some(p) = at {
            if run_of.contains_key(&p) || guard > self.log.entries.len() {
                break;
            }
            at = self.log.get(p).and_then(|e| e.parent);
            guard += 1;
        }
        let Some(point) = at.filter(|p| run_of.contains_key(p)) else {
            return Vec::new();
        };
        let before = &runs[run_of[&point]];
        let at_end = before.finished && before.entries.last().map(|e| e.id) == Some(point);
        let kind = if at_end && continued.insert(point) {
            "previous_turn"
        } else {
            "branched_from"
        };
        vec![Link::new(
            self.context(before.entries[0].id),
            vec![
                kv("xcsh.link.type", kind),
                kv("xcsh.link.entry", int(point.0)),
            ],
            0,
        )]
    }

    fn model_attrs(&self, attrs: &mut Vec<KeyValue>) {
        if let Some(p) = &self.opts.provider {
            attrs.push(kv(GEN_AI_PROVIDER_NAME, p.clone()));
            attrs.push(kv(semconv::GEN_AI_SYSTEM, p.clone()));
        }
        if let Some(m) = &self.opts.model {
            attrs.push(kv(semconv::GEN_AI_REQUEST_MODEL, m.clone()));
            attrs.push(kv(OI_MODEL_NAME, m.clone()));
        }
    }

    fn run_spans(&self, run: &Run<'a>, links: Vec<Link>, out: &mut Vec<SpanData>) {
        let start = run.entries[0];
        let last = *run.entries.last().unwrap_or(&start);
        let root = span_id(self.id, start.id);
        let mut attrs = vec![
            kv(semconv::GEN_AI_OPERATION_NAME, "invoke_agent"),
            kv(semconv::GEN_AI_AGENT_NAME, "xcsh"),
            kv(semconv::GEN_AI_CONVERSATION_ID, self.id.to_owned()),
            kv(OI_SPAN_KIND, "AGENT"),
            kv("xcsh.session.id", self.id.to_owned()),
            kv("xcsh.entry", int(start.id.0)),
        ];
        self.model_attrs(&mut attrs);
        match &start.body {
            Body::Record(Record::UserMessage { text, .. }) => {
                attrs.push(kv("xcsh.run.trigger", "prompt"));
                if self.opts.content {
                    attrs.push(kv(GEN_AI_INPUT_MESSAGES, text_message("user", text)));
                }
            }
            _ => attrs.push(kv("xcsh.run.trigger", "compact")),
        }
        let mut root_span = Open {
            entry: start,
            parent: self.root_parent,
            name: "invoke_agent xcsh".to_owned(),
            kind: SpanKind::Internal,
            attrs,
            events: Vec::new(),
            links,
        };
        let mut status = error("the run did not finish (no run_finished entry)");
        let mut steps: BTreeMap<StepNo, &Entry> = BTreeMap::new();
        let mut tools: BTreeMap<CallId, (Open<'_>, ToolCall)> = BTreeMap::new();
        let mut approvals: HashMap<CallId, Vec<Event>> = HashMap::new();
        let mut compaction: Option<Open<'_>> = None;
        let mut answer: Option<&Assembled> = None;
        for e in &run.entries[1..] {
            match &e.body {
                Body::Decision(Decision::StepStarted { step, .. }) => {
                    steps.insert(*step, e);
                }
                Body::Record(Record::Step(s)) => {
                    let begun = steps.remove(&s.step).unwrap_or(e);
                    let (span, st) = self.chat(begun, root, s.step, &s.message, &s.outcome);
                    self.finish(span, e, st, out);
                    if matches!(s.outcome, StepOutcome::Completed) {
                        answer = Some(&s.message);
                    }
                }
                Body::Decision(Decision::ToolDispatched { step, call }) => {
                    let mut span = self.tool(e, root, *step, call);
                    span.events
                        .extend(approvals.remove(&call.id).unwrap_or_default());
                    tools.insert(call.id.clone(), (span, call.clone()));
                }
                Body::Decision(Decision::Approval {
                    call_id,
                    verdict,
                    by,
                    ..
                }) => approval_event(
                    &mut approvals,
                    call_id,
                    "approval",
                    &e.ts,
                    vec![
                        kv("xcsh.approval.verdict", word(verdict)),
                        kv("xcsh.approval.by", word(by)),
                    ],
                ),
                Body::Record(Record::ApprovalAnswer {
                    call_id, verdict, ..
                }) => approval_event(
                    &mut approvals,
                    call_id,
                    "approval_answer",
                    &e.ts,
                    vec![kv("xcsh.approval.verdict", word(verdict))],
                ),
                Body::Record(Record::ToolResult(r)) => {
                    let (mut span, call) = match tools.remove(&r.call_id) {
                        Some(t) => t,
                        None => {
                            let call = ToolCall {
                                id: r.call_id.clone(),
                                name: r.name.clone(),
                                arguments: String::new(),
                            };
                            (self.tool(e, root, StepNo(0), &call), call)
                        }
                    };
                    let st = self.tool_result(&mut span, &call, r);
                    self.finish(span, e, st, out);
                }
                Body::Decision(Decision::SyntheticResult {
                    call,
                    reason,
                    content,
                }) => {
                    let mut span = self.tool(e, root, StepNo(0), call);
                    span.events
                        .extend(approvals.remove(&call.id).unwrap_or_default());
                    let reason = word(reason);
                    span.attrs.push(kv("xcsh.tool.synthetic", reason.clone()));
                    span.attrs.push(kv(semconv::ERROR_TYPE, reason.clone()));
                    if self.opts.content {
                        span.attrs
                            .push(kv(GEN_AI_TOOL_CALL_RESULT, content.clone()));
                    }
                    self.finish(span, e, error(format!("not run: {reason}")), out);
                }
                Body::Decision(Decision::CompactionStarted {
                    first_kept,
                    tokens_before,
                }) => {
                    compaction = Some(Open {
                        entry: e,
                        parent: root,
                        name: "compaction".to_owned(),
                        kind: SpanKind::Internal,
                        attrs: vec![
                            kv(OI_SPAN_KIND, "CHAIN"),
                            kv("xcsh.entry", int(e.id.0)),
                            kv("xcsh.compaction.first_kept", int(first_kept.0)),
                            kv("xcsh.compaction.tokens_before", int(*tokens_before)),
                        ],
                        events: Vec::new(),
                        links: Vec::new(),
                    });
                }
                Body::Record(Record::CompactionSummary {
                    error: Some(err), ..
                }) => {
                    if let Some(mut span) = compaction.take() {
                        span.attrs.push(kv(semconv::ERROR_TYPE, word(&err.kind)));
                        self.finish(span, e, error(err.to_string()), out);
                    }
                }
                Body::Decision(Decision::Compacted {
                    summary,
                    tokens_after,
                    ..
                }) => {
                    if let Some(mut span) = compaction.take() {
                        span.attrs
                            .push(kv("xcsh.compaction.tokens_after", int(*tokens_after)));
                        if self.opts.content {
                            span.attrs
                                .push(kv("xcsh.compaction.summary", summary.clone()));
                        }
                        self.finish(span, e, Status::Unset, out);
                    }
                }
                Body::Record(Record::Steer { .. }) => {
                    root_span.events.push(self.event("steer", e));
                }
                Body::Record(Record::FollowUp { .. }) => {
                    root_span.events.push(self.event("follow_up", e));
                }
                Body::Record(Record::Interrupt {}) => {
                    root_span.events.push(self.event("interrupt", e));
                }
                Body::Record(Record::Recovered { .. }) => {
                    root_span.events.push(self.event("recovered", e));
                }
                Body::Decision(Decision::RunFinished(RunEnd {
                    reason,
                    steps: n,
                    usage,
                    ..
                })) => {
                    root_span.attrs.push(kv("xcsh.stop_reason", reason.kind()));
                    root_span.attrs.push(kv("xcsh.steps", i64::from(*n)));
                    usage_attrs(usage, &mut root_span.attrs);
                    status = match reason {
                        StopReason::ProviderError { error: err }
                        | StopReason::ContextOverflow { error: err, .. } => {
                            root_span.attrs.push(kv(semconv::ERROR_TYPE, reason.kind()));
                            error(err.to_string())
                        }
                        StopReason::Crashed => {
                            root_span.attrs.push(kv(semconv::ERROR_TYPE, "crashed"));
                            error("the process ended during the run")
                        }
                        _ => Status::Unset,
                    };
                }
                _ => {}
            }
        }
        // Whatever never settled ends with the run, as an error.
        let unsettled = || error("not settled when the run ended");
        for (begun_step, begun) in steps {
            let mut span = self.chat_open(begun, root, begun_step);
            span.attrs.push(kv(semconv::ERROR_TYPE, "unsettled"));
            self.finish(span, last, unsettled(), out);
        }
        for (_, (span, _)) in tools {
            self.finish(span, last, unsettled(), out);
        }
        if let Some(span) = compaction {
            self.finish(span, last, unsettled(), out);
        }
        if self.opts.content
            && let Some(m) = answer
            && !m.text.is_empty()
        {
            root_span.attrs.push(kv(
                GEN_AI_OUTPUT_MESSAGES,
                text_message("assistant", &m.text),
            ));
        }
        self.finish(root_span, last, status, out);
    }

    fn event(&self, name: &'static str, e: &Entry) -> Event {
        Event::new(name, time(&e.ts), vec![kv("xcsh.entry", int(e.id.0))], 0)
    }

    fn chat_open(&self, begun: &'a Entry, root: SpanId, step: StepNo) -> Open<'a> {
        let mut attrs = vec![
            kv(semconv::GEN_AI_OPERATION_NAME, "chat"),
            kv(OI_SPAN_KIND, "LLM"),
            kv("xcsh.entry", int(begun.id.0)),
            kv("xcsh.step", i64::from(step.0)),
        ];
        self.model_attrs(&mut attrs);
        let name = match &self.opts.model {
            Some(m) => format!("chat {m}"),
            None => "chat".to_owned(),
        };
        Open {
            entry: begun,
            parent: root,
            name,
            kind: SpanKind::Client,
            attrs,
            events: Vec::new(),
            links: Vec::new(),
        }
    }

    fn chat(
        &self,
        begun: &'a Entry,
        root: SpanId,
        step: StepNo,
        m: &Assembled,
        outcome: &StepOutcome,
    ) -> (Open<'a>, Status) {
        let mut span = self.chat_open(begun, root, step);
        usage_attrs(&m.usage, &mut span.attrs);
        span.attrs
            .push(kv(OI_PROMPT_TOKENS, int(m.usage.input_tokens)));
        span.attrs
            .push(kv(OI_COMPLETION_TOKENS, int(m.usage.output_tokens)));
        span.attrs.push(kv(
            OI_TOTAL_TOKENS,
            int(m.usage.input_tokens.saturating_add(m.usage.output_tokens)),
        ));
        if let Some(f) = m.finish {
            span.attrs.push(kv(
                semconv::GEN_AI_RESPONSE_FINISH_REASONS,
                Value::Array(Array::String(vec![StringValue::from(finish_word(f))])),
            ));
        }
        if self.opts.content {
            span.attrs
                .push(kv(GEN_AI_OUTPUT_MESSAGES, output_message(m)));
        }
        let status = match outcome {
            StepOutcome::Completed if m.finish == Some(FinishReason::Error) => {
                span.attrs.push(kv(semconv::ERROR_TYPE, "finish_error"));
                error("the provider finished the response with an error")
            }
            StepOutcome::Completed => Status::Unset,
            StepOutcome::Failed { error: err } => {
                span.attrs.push(kv(semconv::ERROR_TYPE, word(&err.kind)));
                error(err.to_string())
            }
            StepOutcome::Aborted => {
                span.attrs.push(kv(semconv::ERROR_TYPE, "aborted"));
                error("the step was aborted (interrupt)")
            }
        };
        (span, status)
    }

    fn tool(&self, e: &'a Entry, root: SpanId, step: StepNo, call: &ToolCall) -> Open<'a> {
        let mut attrs = vec![
            kv(semconv::GEN_AI_OPERATION_NAME, "execute_tool"),
            kv(semconv::GEN_AI_TOOL_NAME, call.name.clone()),
            kv(semconv::GEN_AI_TOOL_CALL_ID, call.id.0.clone()),
            kv(semconv::GEN_AI_TOOL_TYPE, "function"),
            kv(OI_SPAN_KIND, "TOOL"),
            kv("tool.name", call.name.clone()),
            kv("xcsh.entry", int(e.id.0)),
        ];
        if step.0 > 0 {
            attrs.push(kv("xcsh.step", i64::from(step.0)));
        }
        if self.opts.content && !call.arguments.is_empty() {
            attrs.push(kv(GEN_AI_TOOL_CALL_ARGUMENTS, call.arguments.clone()));
        }
        Open {
            entry: e,
            parent: root,
            name: format!("execute_tool {}", call.name),
            kind: SpanKind::Internal,
            attrs,
            events: Vec::new(),
            links: Vec::new(),
        }
    }

    fn tool_result(&self, span: &mut Open<'_>, call: &ToolCall, r: &ToolResultRecord) -> Status {
        let status = word(&r.outcome.status);
        span.attrs.push(kv("xcsh.tool.status", status.clone()));
        span.attrs
            .push(kv("xcsh.tool.duration_ms", int(r.duration_ms)));
        if let Some(child) = &r.child {
            span.attrs
                .push(kv("xcsh.child.session_id", child.session_id.clone()));
            if let Some(u) = &child.usage {
                usage_attrs(u, &mut span.attrs);
            }
        }
        if self.opts.content {
            span.attrs
                .push(kv(GEN_AI_TOOL_CALL_RESULT, r.outcome.content.clone()));
        }
        match r.outcome.status {
            ToolStatus::Ok => Status::Unset,
            ToolStatus::Error | ToolStatus::Cancelled => {
                span.attrs.push(kv(semconv::ERROR_TYPE, status.clone()));
                error(format!(
                    "the tool `{}` {}",
                    call.name,
                    match r.outcome.status {
                        ToolStatus::Cancelled => "was cancelled",
                        _ => "failed",
                    }
                ))
            }
        }
    }
}
