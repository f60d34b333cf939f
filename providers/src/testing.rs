//! What the protocols' tests share: a mapper fed whole events, the events it gives
//! as JSON lines, the message they assemble to, and the values the tests compare
//! with (tool calls, usage, errors, a request with every kind of message).

use serde_json::{Value, json};

use crate::ModelRequest;
use crate::http;
use crate::sse::StreamMapper;
use xcsh_machine::{
    Assembled, Assembler, CallId, FinishReason, Message, ProviderError, ProviderErrorKind,
    StreamEvent, ToolCall, Usage, UserOrigin,
};
use xcsh_ports::ToolSpec;

/// Feeds each `(event type, data)` to `mapper`, then finishes it: the events,
/// and the error that ended the stream early.
pub(crate) fn run_mapper<'a>(
    mut mapper: impl StreamMapper,
    events: impl IntoIterator<Item = (Option<&'a str>, &'a str)>,
) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut out = Vec::new();
    for (kind, data) in events {
        match mapper.on_event(kind, data) {
            Ok(e) => out.extend(e),
            Err(e) => return (out, Some(e)),
        }
    }
    out.extend(mapper.finish());
    (out, None)
}

/// The `event:` type an event's data names in its `type` (as the Anthropic and
/// Responses APIs name their events; a Chat Completions chunk names none).
fn event_type(data: &str) -> Option<String> {
    serde_json::from_str::<Value>(data)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string))
}

/// Each line as the data of one event, with its [`event_type`], fed to a new `M`: the
/// events, and the error that ended the stream early.
pub(crate) fn run<M: StreamMapper + Default>(
    lines: &[&str],
) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let kinds: Vec<Option<String>> = lines.iter().map(|line| event_type(line)).collect();
    run_mapper(
        M::default(),
        kinds
            .iter()
            .map(Option::as_deref)
            .zip(lines.iter().copied()),
    )
}

/// Plays a mapper transcript (`providers/test_data/mappers/`) through a new `M` and
/// returns the one it makes: each `> ` line is the data of one event (with its
/// [`event_type`]), followed by the events the mapper gave for it, one JSON line
/// each; then `end` and what finishing the stream gave. `# ` lines stay as they are.
/// An error ends the stream: it is the `! ` line under its event.
fn play<M: StreamMapper + Default>(text: &str) -> String {
    fn push(out: &mut String, events: &[StreamEvent]) {
        for e in events {
            out.push_str(&format!("  {}\n", serde_json::to_string(e).unwrap()));
        }
    }
    let mut mapper = M::default();
    let mut out = String::new();
    let mut failed = false;
    for line in text.lines().filter(|l| !l.starts_with("  ") && *l != "end") {
        out.push_str(&format!("{line}\n"));
        match line.strip_prefix("> ") {
            Some(data) if !failed => match mapper.on_event(event_type(data).as_deref(), data) {
                Ok(events) => push(&mut out, &events),
                Err(e) => {
                    out.push_str(&format!("  ! {:?}: {}\n", e.kind, e.message));
                    failed = true;
                }
            },
            _ => {}
        }
    }
    if !failed {
        out.push_str("end\n");
        push(&mut out, &mapper.finish());
    }
    out
}

/// Each mapper transcript under `providers/test_data/mappers/<protocol>/`, played
/// through that protocol's mapper, makes the events it holds (`UPDATE_EXPECT=1`
/// writes what it made instead).
#[test]
fn every_mapper_transcript_plays_as_written() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/mappers");
    let mut played = 0;
    for (protocol, play) in [
        (
            "anthropic",
            play::<crate::anthropic::AnthropicMapper> as fn(&str) -> String,
        ),
        ("openai", play::<crate::openai::OpenAiMapper>),
        ("responses", play::<crate::responses::ResponsesMapper>),
    ] {
        let dir = root.join(protocol);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("a directory entry reads").path())
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            expect_test::expect_file![&file].assert_eq(&play(&text));
            played += 1;
        }
    }
    assert!(
        played >= 9,
        "{played} mapper transcripts under {}",
        root.display()
    );
}

/// The lines, fed through [`run`], end without an error: the message they
/// assemble to, and the reasons of the `restarted` events.
pub(crate) fn assembled<M: StreamMapper + Default>(lines: &[&str]) -> (Assembled, Vec<String>) {
    let (events, err) = run::<M>(lines);
    assert!(err.is_none(), "{err:?}");
    let reasons = restarts(&events).into_iter().map(String::from).collect();
    (assemble(&events), reasons)
}

/// A stream that started over: the `attempts`' lines, then those of the `end`,
/// [`assembled`].
pub(crate) fn restarted<M: StreamMapper + Default>(
    attempts: &[String],
    end: &[&str],
) -> (Assembled, Vec<String>) {
    let lines: Vec<&str> = attempts
        .iter()
        .map(String::as_str)
        .chain(end.iter().copied())
        .collect();
    assembled::<M>(&lines)
}

/// One JSON line per event.
pub(crate) fn render(events: &[StreamEvent]) -> String {
    events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Folds events into the assembled message, as the machine does.
pub(crate) fn assemble(events: &[StreamEvent]) -> Assembled {
    let mut a = Assembler::default();
    events.iter().for_each(|e| a.push(e));
    a.finish()
}

/// The reasons of the `restarted` events among `events`.
pub(crate) fn restarts(events: &[StreamEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Restarted { reason } => Some(reason.as_str()),
            _ => None,
        })
        .collect()
}

/// The step asked for exactly `calls`, and finished for them.
pub(crate) fn assert_tool_calls(a: &Assembled, calls: &[ToolCall]) {
    assert_eq!(a.tool_calls, calls);
    assert_eq!(a.finish, Some(FinishReason::ToolCalls));
}

/// The lines, fed through [`run`], end without an error in a step that calls, in
/// parallel, `read` with `{"path":"a"}` (id `ids[0]`) and `list` with `{"dir":"."}`
/// (id `ids[1]`); the events.
pub(crate) fn parallel_read_and_list<M: StreamMapper + Default>(
    lines: &[&str],
    ids: [&str; 2],
) -> Vec<StreamEvent> {
    let (events, err) = run::<M>(lines);
    assert!(err.is_none(), "{err:?}");
    assert_tool_calls(
        &assemble(&events),
        &[
            call(ids[0], "read", r#"{"path":"a"}"#),
            call(ids[1], "list", r#"{"dir":"."}"#),
        ],
    );
    events
}

/// A tool call.
pub(crate) fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: CallId(id.into()),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// Usage with only input and output tokens.
pub(crate) fn usage(input_tokens: u64, output_tokens: u64) -> Usage {
    Usage {
        input_tokens,
        output_tokens,
        ..Usage::default()
    }
}

/// An `api` error with `message`.
pub(crate) fn api_error(message: &str) -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::Api,
        message: message.into(),
    }
}

/// An assistant message without reasoning.
pub(crate) fn assistant(text: &str, tool_calls: Vec<ToolCall>) -> Message {
    Message::Assistant {
        text: text.into(),
        reasoning: String::new(),
        reasoning_signature: String::new(),
        reasoning_blocks: vec![],
        tool_calls,
    }
}

/// The result of `read` call `call_id`.
pub(crate) fn read_result(call_id: &str, is_error: bool, content: &str) -> Message {
    Message::ToolResult {
        call_id: CallId(call_id.into()),
        name: "read".into(),
        is_error,
        content: content.into(),
    }
}

/// Each case's lines, fed through `run`, end the stream with a `malformed` error of
/// exactly that message; a failing case names its lines.
pub(crate) fn assert_malformed<'a>(
    run: impl Fn(&[&'a str]) -> (Vec<StreamEvent>, Option<ProviderError>),
    cases: impl IntoIterator<Item = (Vec<&'a str>, String)>,
) {
    for (lines, message) in cases {
        assert_eq!(
            run(&lines).1.map(|e| (e.kind, e.message)),
            Some((ProviderErrorKind::Malformed, message)),
            "{lines:?}"
        );
    }
}

/// A request with every kind of message: a summary, a prompt, an assistant message
/// with reasoning and a call, its result, a steer, a call that failed, a final text.
pub(crate) fn sample_request() -> ModelRequest {
    ModelRequest {
        system: "You are terse.".into(),
        messages: vec![
            Message::Summary {
                text: "Earlier we listed files.".into(),
            },
            Message::User {
                origin: UserOrigin::Prompt,
                text: "read a.txt".into(),
            },
            Message::Assistant {
                text: "Reading.".into(),
                reasoning: "The user wants a.txt.".into(),
                reasoning_signature: "sig".into(),
                reasoning_blocks: vec![],
                tool_calls: vec![call("call_1", "read", r#"{"path":"a.txt"}"#)],
            },
            read_result("call_1", false, "hello"),
            Message::User {
                origin: UserOrigin::Steer,
                text: "also b".into(),
            },
            assistant("", vec![call("call_2", "read", r#"{"path":"b.txt"}"#)]),
            read_result("call_2", true, "error: no such file"),
            assistant("Done.", vec![]),
        ]
        .into(),
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}),
        }],
        max_output_tokens: 1024,
    }
}

/// A request body as the snapshots show it: pretty JSON in which the sample request's
/// tool schema, wherever it stands whole, reads `"<the read tool's parameters>"`.
pub(crate) fn pretty_body(body: &Value) -> String {
    fn mark(value: &mut Value, schema: &Value) {
        if value == schema {
            *value = Value::String("<the read tool's parameters>".into());
        } else if let Value::Object(map) = value {
            map.values_mut().for_each(|v| mark(v, schema));
        } else if let Value::Array(items) = value {
            items.iter_mut().for_each(|v| mark(v, schema));
        }
    }
    let mut body = body.clone();
    mark(&mut body, &sample_request().tools[0].parameters);
    serde_json::to_string_pretty(&body).unwrap()
}

/// The bytes a body is sent as are its shown value's, compact: its fields are
/// declared in the value's (sorted) key order, as the bytes were when the body
/// was built as a `Value`.
pub(crate) fn sent_is_shown(body: &impl serde::Serialize) {
    assert_eq!(
        serde_json::to_string(body).unwrap(),
        http::shown_body(body).to_string()
    );
}
