//! Tests of the span mapping over the fixture sessions (`fixtures/sessions/`): the
//! span tree as a snapshot, ids, links, content opt-in, and the OTLP/JSON encoding.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use expect_test::{Expect, ExpectFile, expect, expect_file};
use opentelemetry::trace::{SpanId, Status};
use opentelemetry_sdk::trace::SpanData;
use xcsh_log::family::{Depth, load_family};
use xcsh_log::read_session;
use xcsh_machine::EntryId;

use crate::{Options, span_id, spans, spans_of_family, to_otlp_json, trace_id, traces_url};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/sessions")
        .join(name)
}

fn of(name: &str, opts: &Options) -> Vec<SpanData> {
    spans(&read_session(&fixture(name)).unwrap(), opts)
}

fn ms(t: SystemTime, zero: SystemTime) -> u128 {
    t.duration_since(zero).map_or(0, |d| d.as_millis())
}

/// The span tree: one line per span (children indented under their parent, in
/// start order), its id, times in ms from the first span's start, status, links and
/// attributes.
fn tree(spans: &[SpanData]) -> String {
    let zero = spans.iter().map(|s| s.start_time).min().unwrap();
    let ids: Vec<SpanId> = spans.iter().map(|s| s.span_context.span_id()).collect();
    let mut out = String::new();
    let mut roots: Vec<&SpanData> = spans
        .iter()
        .filter(|s| !ids.contains(&s.parent_span_id))
        .collect();
    roots.sort_by_key(|s| s.start_time);
    fn walk(s: &SpanData, all: &[SpanData], depth: usize, zero: SystemTime, out: &mut String) {
        let pad = "  ".repeat(depth);
        let status = match &s.status {
            Status::Unset => String::new(),
            Status::Ok => " OK".to_owned(),
            Status::Error { description } => format!(" ERROR({description})"),
        };
        let parent = if depth == 0 && s.parent_span_id != SpanId::INVALID {
            format!(" parent={}", s.parent_span_id)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{pad}{} [{}]{parent} {:?} {}..{}ms{status}\n",
            s.name,
            s.span_context.span_id(),
            s.span_kind,
            ms(s.start_time, zero),
            ms(s.end_time, zero),
        ));
        for l in s.links.iter() {
            let a: Vec<String> = l
                .attributes
                .iter()
                .map(|kv| format!("{}={}", kv.key, kv.value))
                .collect();
            out.push_str(&format!(
                "{pad}  link -> {} {}\n",
                l.span_context.span_id(),
                a.join(" ")
            ));
        }
        for e in s.events.iter() {
            out.push_str(&format!(
                "{pad}  event {} at {}ms\n",
                e.name,
                ms(e.timestamp, zero)
            ));
        }
        let attrs: Vec<String> = s
            .attributes
            .iter()
            .map(|kv| format!("{}={}", kv.key, kv.value))
            .collect();
        out.push_str(&format!("{pad}  {}\n", attrs.join(" ")));
        let mut kids: Vec<&SpanData> = all
            .iter()
            .filter(|c| c.parent_span_id == s.span_context.span_id())
            .collect();
        kids.sort_by_key(|c| c.start_time);
        for c in kids {
            walk(c, all, depth + 1, zero, out);
        }
    }
    for r in roots {
        walk(r, spans, 0, zero, &mut out);
    }
    out
}

fn check(spans: &[SpanData], expect: Expect) {
    expect.assert_eq(&tree(spans));
}

/// `check` against a golden file (`otel/tests/golden/`, `UPDATE_EXPECT=1` rewrites
/// it), for the larger span trees.
fn check_file(spans: &[SpanData], expect: ExpectFile) {
    expect.assert_eq(&tree(spans));
}

#[test]
fn tool_rounds_map_to_one_agent_span_with_chat_and_tool_spans() {
    check_file(
        &of("tool-rounds.jsonl", &Options::default()),
        expect_file![
            "../tests/golden/tool-rounds-map-to-one-agent-span-with-chat-and-tool-spans.txt"
        ],
    );
}

#[test]
fn a_delegation_family_nests_each_child_run_under_its_task_call() {
    let family = load_family(&fixture("delegation/parent.jsonl"), Depth::All).unwrap();
    let spans = spans_of_family(&family, &Options::default());
    let trace = trace_id("8425a5fca572");
    assert!(spans.iter().all(|s| s.span_context.trace_id() == trace));
    check_file(
        &spans,
        expect_file![
            "../tests/golden/a-delegation-family-nests-each-child-run-under-its-task-call.txt"
        ],
    );
}

#[test]
fn a_child_session_alone_is_in_its_parents_trace_under_the_task_call() {
    let spans = of(
        "delegation/2026-12-02T00-11-56-840Z_6e2e26526091.jsonl",
        &Options::default(),
    );
    let root = spans
        .iter()
        .find(|s| s.name == "invoke_agent xcsh")
        .unwrap();
    assert_eq!(root.span_context.trace_id(), trace_id("8425a5fca572"));
    assert_eq!(root.parent_span_id, span_id("8425a5fca572", EntryId(4)));
}

#[test]
fn branch_at_links_the_branch_run_to_the_run_it_branched_from() {
    check_file(
        &of("branch-at.jsonl", &Options::default()),
        expect_file![
            "../tests/golden/branch-at-links-the-branch-run-to-the-run-it-branched-from.txt"
        ],
    );
}

#[test]
fn compaction_is_a_span_of_its_own() {
    check_file(
        &of("compaction.jsonl", &Options::default()),
        expect_file!["../tests/golden/compaction-is-a-span-of-its-own.txt"],
    );
}

#[test]
fn a_provider_error_is_the_error_status_of_the_step_and_the_run() {
    check(
        &of("provider-error.jsonl", &Options::default()),
        expect![[r#"
        invoke_agent xcsh [e3cdd1dff189b4af] Internal 0..7ms ERROR(Api: overloaded: the server is busy (529))
          gen_ai.operation.name=invoke_agent gen_ai.agent.name=xcsh gen_ai.conversation.id=77725f204f4c openinference.span.kind=AGENT xcsh.session.id=77725f204f4c xcsh.entry=1 xcsh.run.trigger=prompt xcsh.stop_reason=provider_error xcsh.steps=2 gen_ai.usage.input_tokens=200 gen_ai.usage.output_tokens=10 error.type=provider_error
          chat [c083748c09cf4798] Client 0..1ms
            gen_ai.operation.name=chat openinference.span.kind=LLM xcsh.entry=2 xcsh.step=1 gen_ai.usage.input_tokens=200 gen_ai.usage.output_tokens=10 llm.token_count.prompt=200 llm.token_count.completion=10 llm.token_count.total=210 gen_ai.response.finish_reasons=["tool_calls"]
          execute_tool echo [db5128f6be31973e] Internal 1..3ms
            gen_ai.operation.name=execute_tool gen_ai.tool.name=echo gen_ai.tool.call.id=call_1_1 gen_ai.tool.type=function openinference.span.kind=TOOL tool.name=echo xcsh.entry=4 xcsh.step=1 xcsh.tool.status=ok xcsh.tool.duration_ms=0
          chat [37053663e018fada] Client 3..7ms ERROR(Api: overloaded: the server is busy (529))
            gen_ai.operation.name=chat openinference.span.kind=LLM xcsh.entry=6 xcsh.step=2 gen_ai.usage.input_tokens=0 gen_ai.usage.output_tokens=0 llm.token_count.prompt=0 llm.token_count.completion=0 llm.token_count.total=0 error.type=api
    "#]],
    );
}

#[test]
fn the_provider_and_model_when_known_name_the_chat_spans() {
    let opts = Options {
        provider: Some("openai".into()),
        model: Some("gpt-5".into()),
        ..Options::default()
    };
    let spans = of("plain.jsonl", &opts);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["chat gpt-5", "invoke_agent xcsh"]);
    let chat = &spans[0];
    let get = |k: &str| {
        chat.attributes
            .iter()
            .find(|kv| kv.key.as_str() == k)
            .map(|kv| kv.value.to_string())
    };
    assert_eq!(get("gen_ai.provider.name").as_deref(), Some("openai"));
    assert_eq!(get("gen_ai.request.model").as_deref(), Some("gpt-5"));
}

#[test]
fn message_content_is_exported_only_with_the_opt_in() {
    let content_keys = [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    ];
    let keys = |spans: &[SpanData]| -> Vec<String> {
        let mut k: Vec<String> = spans
            .iter()
            .flat_map(|s| s.attributes.iter().map(|kv| kv.key.to_string()))
            .filter(|k| content_keys.contains(&k.as_str()))
            .collect();
        k.sort();
        k.dedup();
        k
    };
    assert_eq!(
        keys(&of("tool-rounds.jsonl", &Options::default())),
        Vec::<String>::new()
    );
    let with = of(
        "tool-rounds.jsonl",
        &Options {
            content: true,
            ..Options::default()
        },
    );
    assert_eq!(keys(&with), content_keys.map(String::from).to_vec());
}

#[test]
fn exporting_twice_gives_identical_otlp_json() {
    let a = to_otlp_json(of("tool-rounds.jsonl", &Options::default())).unwrap();
    let b = to_otlp_json(of("tool-rounds.jsonl", &Options::default())).unwrap();
    assert!(a == b, "two exports differ");
}

#[test]
fn otlp_json_carries_hex_ids_and_the_xcsh_resource() {
    let json = to_otlp_json(of("plain.jsonl", &Options::default())).unwrap();
    assert!(json.ends_with('\n') && json.lines().count() == 1);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rs = &v["resourceSpans"][0];
    let service = rs["resource"]["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == "service.name")
        .unwrap();
    assert_eq!(service["value"]["stringValue"], "xcsh");
    let spans = rs["scopeSpans"][0]["spans"].as_array().unwrap();
    assert_eq!(spans.len(), 2);
    let session = read_session(&fixture("plain.jsonl")).unwrap();
    let trace = trace_id(&session.header().session_id).to_string();
    assert_eq!(spans[0]["traceId"], trace.as_str());
    assert_eq!(trace.len(), 32);
}

#[test]
fn ids_are_blake3_of_the_session_and_entry_and_never_zero() {
    let t = trace_id("abc");
    assert_eq!(
        t.to_string(),
        blake3::hash(b"xcsh-trace:abc").to_hex()[..32].to_string()
    );
    let s = span_id("abc", EntryId(7));
    assert_eq!(
        s.to_string(),
        blake3::hash(b"xcsh-span:abc:7").to_hex()[..16].to_string()
    );
    assert_ne!(span_id("abc", EntryId(7)), span_id("abc", EntryId(8)));
    assert_ne!(s, SpanId::INVALID);
}

#[test]
fn the_traces_url_adds_v1_traces_once() {
    assert_eq!(
        traces_url("http://127.0.0.1:4318").unwrap(),
        "http://127.0.0.1:4318/v1/traces"
    );
    assert_eq!(traces_url("http://h:1/").unwrap(), "http://h:1/v1/traces");
    assert_eq!(
        traces_url("https://h/api/public/otel/v1/traces").unwrap(),
        "https://h/api/public/otel/v1/traces"
    );
    assert!(traces_url("127.0.0.1:4318").is_err());
}

#[test]
fn an_interrupt_is_an_event_and_the_cancelled_tool_an_error() {
    check(
        &of("interrupt.jsonl", &Options::default()),
        expect![[r#"
        invoke_agent xcsh [15b92d6e768f20d6] Internal 0..3ms
          event interrupt at 3ms
          gen_ai.operation.name=invoke_agent gen_ai.agent.name=xcsh gen_ai.conversation.id=8c4ee0b4f824 openinference.span.kind=AGENT xcsh.session.id=8c4ee0b4f824 xcsh.entry=1 xcsh.run.trigger=prompt xcsh.stop_reason=interrupted xcsh.steps=1 gen_ai.usage.input_tokens=200 gen_ai.usage.output_tokens=16
          chat [f1580720073b5db7] Client 0..2ms
            gen_ai.operation.name=chat openinference.span.kind=LLM xcsh.entry=2 xcsh.step=1 gen_ai.usage.input_tokens=200 gen_ai.usage.output_tokens=16 llm.token_count.prompt=200 llm.token_count.completion=16 llm.token_count.total=216 gen_ai.response.finish_reasons=["tool_calls"]
          execute_tool sleep [c9b5e8645b8d2192] Internal 2..3ms ERROR(the tool `sleep` was cancelled)
            gen_ai.operation.name=execute_tool gen_ai.tool.name=sleep gen_ai.tool.call.id=call_1_1 gen_ai.tool.type=function openinference.span.kind=TOOL tool.name=sleep xcsh.entry=4 xcsh.step=1 xcsh.tool.status=cancelled xcsh.tool.duration_ms=0 error.type=cancelled
    "#]],
    );
}

#[test]
fn a_call_cut_by_the_output_limit_is_a_synthetic_tool_span_with_an_error() {
    check(
        &of("length-stop.jsonl", &Options::default()),
        expect![[r#"
        invoke_agent xcsh [cabb59eb820b3097] Internal 0..5ms
          gen_ai.operation.name=invoke_agent gen_ai.agent.name=xcsh gen_ai.conversation.id=6070e1b776b2 openinference.span.kind=AGENT xcsh.session.id=6070e1b776b2 xcsh.entry=1 xcsh.run.trigger=prompt xcsh.stop_reason=output_limit xcsh.steps=1 gen_ai.usage.input_tokens=300 gen_ai.usage.output_tokens=8192
          chat [05c3f619bf9f3f83] Client 1..4ms
            gen_ai.operation.name=chat openinference.span.kind=LLM xcsh.entry=2 xcsh.step=1 gen_ai.usage.input_tokens=300 gen_ai.usage.output_tokens=8192 llm.token_count.prompt=300 llm.token_count.completion=8192 llm.token_count.total=8492 gen_ai.response.finish_reasons=["length"]
          execute_tool echo [a9b0186a1082cf8a] Internal 5..5ms ERROR(not run: output_limit)
            gen_ai.operation.name=execute_tool gen_ai.tool.name=echo gen_ai.tool.call.id=call_1_1 gen_ai.tool.type=function openinference.span.kind=TOOL tool.name=echo xcsh.entry=4 xcsh.tool.synthetic=output_limit error.type=output_limit
    "#]],
    );
}

#[test]
fn a_run_cut_off_before_run_finished_ends_in_error_at_its_last_entry() {
    // A crash after the first tool call: the first 6 lines of a log (a valid prefix
    // of the hash chain).
    let text = std::fs::read_to_string(fixture("tool-rounds.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jsonl");
    let head: String = text.lines().take(6).map(|l| format!("{l}\n")).collect();
    std::fs::write(&cut, head).unwrap();
    let spans = spans(&read_session(&cut).unwrap(), &Options::default());
    check(
        &spans,
        expect![[r#"
        invoke_agent xcsh [bb610af3f0532dd0] Internal 0..4ms ERROR(the run did not finish (no run_finished entry))
          gen_ai.operation.name=invoke_agent gen_ai.agent.name=xcsh gen_ai.conversation.id=8547e68d4a82 openinference.span.kind=AGENT xcsh.session.id=8547e68d4a82 xcsh.entry=1 xcsh.run.trigger=prompt
          chat [abde350629ec037c] Client 0..1ms
            gen_ai.operation.name=chat openinference.span.kind=LLM xcsh.entry=2 xcsh.step=1 gen_ai.usage.input_tokens=400 gen_ai.usage.output_tokens=24 llm.token_count.prompt=400 llm.token_count.completion=24 llm.token_count.total=424 gen_ai.response.finish_reasons=["tool_calls"]
          execute_tool list [a1bcc438bd25e8dd] Internal 2..4ms
            gen_ai.operation.name=execute_tool gen_ai.tool.name=list gen_ai.tool.call.id=call_1_1 gen_ai.tool.type=function openinference.span.kind=TOOL tool.name=list xcsh.entry=4 xcsh.step=1 xcsh.tool.status=ok xcsh.tool.duration_ms=2
    "#]],
    );
}

#[test]
fn after_a_run_only_the_last_run_of_the_file_is_sent() {
    let family = load_family(&fixture("branch-at.jsonl"), Depth::All).unwrap();
    let last = crate::spans_of_last_run(&family, &Options::default());
    let entries: Vec<String> = last
        .iter()
        .map(|s| format!("{} {}", s.name, s.span_context.span_id()))
        .collect();
    let session = &family.data.header().session_id;
    assert_eq!(
        entries,
        [
            format!("chat {}", span_id(session, EntryId(11))),
            format!("invoke_agent xcsh {}", span_id(session, EntryId(10))),
        ]
    );
    // A delegating run takes its sub-agents along.
    let family = load_family(&fixture("delegation/parent.jsonl"), Depth::All).unwrap();
    assert_eq!(
        crate::spans_of_last_run(&family, &Options::default()).len(),
        11
    );
}
