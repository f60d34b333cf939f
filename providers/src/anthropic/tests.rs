//! Tests of `anthropic.rs`.

use super::*;
use crate::sse::StreamMapper;
use crate::testing::{
    api_error, assemble, assert_malformed, assert_tool_calls, assistant, call, pretty_body,
    restarted, run, sample_request, sent_is_shown, usage,
};
use expect_test::expect;
use serde_json::json;
use xcsh_machine::Message;
use xcsh_machine::{ProviderErrorKind, ReasoningBlock, UserOrigin};
use xcsh_ports::ToolSpec;

/// The body of `request` as `--show-context` shows it.
fn shown(request: &ModelRequest) -> Value {
    http::shown_body(&wire::body("claude", request))
}

#[test]
fn thinking_with_signature_then_parallel_tool_uses() {
    let (events, err) = run::<AnthropicMapper>(&[
        r#"{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Two files."}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAh"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_a","name":"read","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"}"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_b","name":"list","input":{}}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    assert!(err.is_none());
    let a = assemble(&events);
    assert_eq!(a.reasoning, "Two files.");
    assert_eq!(a.reasoning_signature, "EqQBCgIYAh");
    assert_tool_calls(
        &a,
        &[
            call("toolu_a", "read", r#"{"path": "a"}"#),
            call("toolu_b", "list", "{}"),
        ],
    );
    assert_eq!(a.usage, usage(10, 40));
}

#[test]
fn error_event_and_stop_reasons() {
    let (events, err) = run::<AnthropicMapper>(&[
        r#"{"type":"message_start","message":{"content":[],"usage":{"input_tokens":1,"output_tokens":1}}}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ]);
    assert_eq!(events.len(), 1);
    assert_eq!(err, Some(api_error("Overloaded (overloaded_error)")));
    assert_eq!(stop_reason("max_tokens"), FinishReason::Length);
    assert_eq!(stop_reason("refusal"), FinishReason::ContentFilter);
    assert_eq!(stop_reason("stop_sequence"), FinishReason::Stop);
    let (_, err) = run::<AnthropicMapper>(&["not json"]);
    assert_eq!(err.map(|e| e.kind), Some(ProviderErrorKind::Malformed));
}

#[test]
fn iterations_are_summed_and_messages_add_up() {
    let (events, _) = run::<AnthropicMapper>(&[
        r#"{"type":"message_start","message":{"content":[],"usage":{"input_tokens":100,"output_tokens":1}}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":100,"output_tokens":20}}"#,
        r#"{"type":"message_stop"}"#,
        r#"{"type":"message_start","message":{"content":[],"usage":{"input_tokens":50,"output_tokens":1}}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":5,"output_tokens":7,"iterations":[{"type":"compaction","input_tokens":50,"output_tokens":4},{"type":"message","input_tokens":5,"output_tokens":7}]}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    assert_eq!(assemble(&events).usage, usage(155, 31));
}

#[test]
fn a_restarted_anthropic_stream_keeps_only_the_second_message() {
    // One attempt at the message, up to the first fragment of its `read` call.
    let attempt = |id: &str, thinking: &str, signature: &str, tool: &str, fragment: &str| {
        [
            json!({"type":"message_start","message":{"id":id,"type":"message","role":"assistant","content":[],"usage":{"input_tokens":30,"output_tokens":1}}}),
            json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":thinking}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":signature}}),
            json!({"type":"content_block_stop","index":0}),
            json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":tool,"name":"read","input":{}}}),
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":fragment}}),
        ]
        .map(|event| event.to_string())
        .to_vec()
    };
    let attempts = [
        attempt("msg_1", "First try.", "SIG_A", "toolu_a", r#"{"path": "a"#),
        attempt(
            "msg_2",
            "Second try.",
            "SIG_B",
            "toolu_b",
            r#"{"path": "b.txt"}"#,
        ),
    ]
    .concat();
    let (a, reasons) = restarted::<AnthropicMapper>(
        &attempts,
        &[
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}"#,
            r#"{"type":"message_stop"}"#,
        ],
    );
    assert_eq!(
        (a.reasoning.as_str(), a.reasoning_signature.as_str()),
        ("Second try.", "SIG_B")
    );
    assert_tool_calls(&a, &[call("toolu_b", "read", r#"{"path": "b.txt"}"#)]);
    assert_eq!(a.usage, usage(30, 12));
    assert_eq!(
        reasons,
        ["message_start (msg_2) before message_stop of msg_1"]
    );
}

#[test]
fn several_thinking_blocks_keep_their_own_text_and_signature() {
    let (events, err) = run::<AnthropicMapper>(&[
        r#"{"type":"message_start","message":{"id":"msg_1","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"One."}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG_1"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgB"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"thinking_delta","thinking":"Two."}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"signature_delta","signature":"SIG_2"}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Done."}}"#,
        r#"{"type":"content_block_stop","index":3}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    assert!(err.is_none(), "{err:?}");
    let a = assemble(&events);
    let block = |text: &str, signature: &str, redacted: &str| ReasoningBlock {
        text: text.into(),
        signature: signature.into(),
        redacted: redacted.into(),
    };
    assert_eq!(
        a.reasoning_blocks,
        vec![
            block("One.", "SIG_1", ""),
            block("", "", "EmwKAhgB"),
            block("Two.", "SIG_2", ""),
        ]
    );
    assert_eq!(
        (a.reasoning.as_str(), a.reasoning_signature.as_str()),
        ("One.\n\nTwo.", "")
    );
    // Sent back unchanged and in order, before the text.
    let mut request = sample_request();
    request.messages = vec![Message::Assistant {
        text: a.text,
        reasoning: a.reasoning,
        reasoning_signature: a.reasoning_signature,
        reasoning_blocks: a.reasoning_blocks,
        tool_calls: a.tool_calls,
    }]
    .into();
    assert_eq!(
        shown(&request)["messages"][0]["content"],
        json!([
            {"type": "thinking", "thinking": "One.", "signature": "SIG_1"},
            {"type": "redacted_thinking", "data": "EmwKAhgB"},
            {"type": "thinking", "thinking": "Two.", "signature": "SIG_2"},
            {"type": "text", "text": "Done."},
        ])
    );
}

#[test]
fn one_thinking_block_assembles_as_before() {
    let (events, _) = run::<AnthropicMapper>(&[
        r#"{"type":"message_start","message":{"content":[]}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Only."}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    let a = assemble(&events);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        r#"{"reasoning":"Only.","reasoning_signature":"SIG","usage":{"input_tokens":0,"output_tokens":0},"finish":null}"#
    );
}

#[test]
fn every_wrong_type_in_an_anthropic_event_is_an_error_never_a_silent_drop() {
    let start = r#"{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}"#;
    let text =
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#;
    let tool = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"read","input":{}}}"#;
    let cases = [
        (
            vec![
                start,
                text,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}"#,
            ],
            "an Anthropic content_block_delta event: delta.text is a number (5), expected a string",
        ),
        (
            vec![
                start,
                r#"{"type":"content_block_start","index":-1,"content_block":{"type":"text","text":""}}"#,
            ],
            "an Anthropic content_block_start event: index is a number (-1), expected a non-negative integer",
        ),
        (
            vec![
                start,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":7,"input":{}}}"#,
            ],
            "an Anthropic content_block_start event: content_block.name is a number (7), expected a string",
        ),
        (
            vec![
                start,
                tool,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":{"a":1}}}"#,
            ],
            r#"an Anthropic content_block_delta event: delta.partial_json is an object ({"a":1}), expected a string"#,
        ),
        (
            vec![
                start,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":3}}"#,
            ],
            "an Anthropic content_block_start event: content_block.signature is a number (3), expected a string",
        ),
        (
            vec![
                start,
                r#"{"type":"message_delta","delta":{"stop_reason":1},"usage":{"output_tokens":2}}"#,
            ],
            "an Anthropic message_delta event: delta.stop_reason is a number (1), expected a string",
        ),
        (
            vec![
                start,
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":"12"}}"#,
            ],
            r#"an Anthropic message_delta event: usage.output_tokens is a string ("12"), expected a non-negative integer"#,
        ),
        (
            vec![r#"{"type":"message_start","message":{"content":{"type":"text"}}}"#],
            r#"an Anthropic message_start event: message.content is an object ({"type":"text"}), expected an array"#,
        ),
        (
            vec![r#"{"type":7}"#],
            "an Anthropic stream event: type is a number (7), expected a string",
        ),
    ];
    assert_malformed(
        run::<AnthropicMapper>,
        cases.map(|(lines, message)| (lines, message.to_string())),
    );
}

#[test]
fn completeness_needs_message_stop() {
    let mut m = AnthropicMapper::default();
    m.on_event(None, r#"{"type":"message_start","message":{"content":[]}}"#)
        .unwrap();
    assert!(!m.is_complete());
    m.on_event(None, r#"{"type":"message_stop"}"#).unwrap();
    assert!(m.is_complete());
}

#[test]
fn request_renders_every_message_kind() {
    let mut request = sample_request();
    request.messages.push(Message::User {
        origin: UserOrigin::FollowUp,
        text: "thanks".into(),
    });
    request
        .messages
        .push(assistant("", vec![call("toolu_x", "read", "{not json")]));
    request.tools.push(ToolSpec {
        name: "list".into(),
        description: "List a directory".into(),
        parameters: json!({"type":"object"}),
    });
    let body = http::shown_body(&wire::body("claude-test", &request));
    sent_is_shown(&wire::body("claude-test", &request));
    expect![[r#"
        {
          "max_tokens": 1024,
          "messages": [
            {
              "content": [
                {
                  "text": "[Summary of the earlier conversation]\nEarlier we listed files.",
                  "type": "text"
                },
                {
                  "text": "read a.txt",
                  "type": "text"
                }
              ],
              "role": "user"
            },
            {
              "content": [
                {
                  "signature": "sig",
                  "thinking": "The user wants a.txt.",
                  "type": "thinking"
                },
                {
                  "text": "Reading.",
                  "type": "text"
                },
                {
                  "id": "call_1",
                  "input": {
                    "path": "a.txt"
                  },
                  "name": "read",
                  "type": "tool_use"
                }
              ],
              "role": "assistant"
            },
            {
              "content": [
                {
                  "content": "hello",
                  "tool_use_id": "call_1",
                  "type": "tool_result"
                },
                {
                  "text": "also b",
                  "type": "text"
                }
              ],
              "role": "user"
            },
            {
              "content": [
                {
                  "id": "call_2",
                  "input": {
                    "path": "b.txt"
                  },
                  "name": "read",
                  "type": "tool_use"
                }
              ],
              "role": "assistant"
            },
            {
              "content": [
                {
                  "content": "error: no such file",
                  "is_error": true,
                  "tool_use_id": "call_2",
                  "type": "tool_result"
                }
              ],
              "role": "user"
            },
            {
              "content": [
                {
                  "text": "Done.",
                  "type": "text"
                }
              ],
              "role": "assistant"
            },
            {
              "content": [
                {
                  "text": "thanks",
                  "type": "text"
                }
              ],
              "role": "user"
            },
            {
              "content": [
                {
                  "id": "toolu_x",
                  "input": {
                    "_invalid_arguments": "{not json"
                  },
                  "name": "read",
                  "type": "tool_use"
                }
              ],
              "role": "assistant"
            }
          ],
          "model": "claude-test",
          "stream": true,
          "system": "You are terse.",
          "tools": [
            {
              "description": "Read a file",
              "input_schema": "<the read tool's parameters>",
              "name": "read"
            },
            {
              "description": "List a directory",
              "input_schema": {
                "type": "object"
              },
              "name": "list"
            }
          ]
        }"#]]
    .assert_eq(&pretty_body(&body));
}
