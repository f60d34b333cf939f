//! Tests of `responses.rs`.

use super::*;
use crate::testing::{
    api_error, assert_malformed, assert_tool_calls, call, parallel_read_and_list, pretty_body,
    restarted, run, sample_request, sent_is_shown,
};
use expect_test::expect;
use serde_json::json;
use xcsh_machine::Message;

/// The body of `request` as `--show-context` shows it, with
/// `reasoning.encrypted_content` asked for the reasoning models, as by default.
fn shown(model: &str, request: &ModelRequest) -> Value {
    http::shown_body(&wire::body(model, request, reasoning_model(model)))
}

#[test]
fn parallel_function_calls_with_fragmented_arguments() {
    parallel_read_and_list::<ResponsesMapper>(
        &[
            r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
            r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_A","name":"read"}}"#,
            r#"{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_2","type":"function_call","status":"in_progress","arguments":"","call_id":"call_B","name":"list"}}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"path\""}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_2","output_index":1,"delta":"{\"dir\":\".\"}"}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":":\"a\"}"}"#,
            r#"{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"arguments":"{\"path\":\"a\"}"}"#,
            r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"path\":\"a\"}","call_id":"call_A","name":"read"}}"#,
            r#"{"type":"response.function_call_arguments.done","item_id":"fc_2","output_index":1,"arguments":"{\"dir\":\".\"}"}"#,
            r#"{"type":"response.output_item.done","output_index":1,"item":{"id":"fc_2","type":"function_call","status":"completed","arguments":"{\"dir\":\".\"}","call_id":"call_B","name":"list"}}"#,
            r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":10,"output_tokens":5}}}"#,
        ],
        ["call_A", "call_B"],
    );
}

#[test]
fn failures_refusals_and_incomplete() {
    let (_, err) = run::<ResponsesMapper>(&[
        r#"{"type":"response.created","response":{"status":"in_progress"}}"#,
        r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed."}}}"#,
    ]);
    assert_eq!(err, Some(api_error("The model failed. (server_error)")));
    let (_, err) = run::<ResponsesMapper>(&[
        r#"{"type":"error","code":"rate_limit_exceeded","message":"Slow down.","param":null,"sequence_number":1}"#,
    ]);
    assert_eq!(
        err.map(|e| e.message),
        Some("Slow down. (rate_limit_exceeded)".into())
    );
    let (_, err) = run::<ResponsesMapper>(&[
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","content":[]}}"#,
        r#"{"type":"response.content_part.added","output_index":0,"part":{"type":"refusal","refusal":""}}"#,
        r#"{"type":"response.refusal.delta","output_index":0,"delta":"I can't"}"#,
        r#"{"type":"response.refusal.done","output_index":0,"refusal":"I can't help."}"#,
    ]);
    assert_eq!(
        err.map(|e| e.message),
        Some("the model refused: I can't help.".into())
    );
    let (events, err) = run::<ResponsesMapper>(&[
        r#"{"type":"response.created","response":{"status":"in_progress"}}"#,
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"Lo"}"#,
        r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":3,"output_tokens":9}}}"#,
    ]);
    assert!(err.is_none());
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish {
            reason: FinishReason::Length
        })
    );
}

#[test]
fn a_second_response_created_before_completion_restarts_the_response() {
    // One attempt at response `n`, up to the first fragment of its `read` call.
    let attempt = |n: &str, plan: &str, encrypted: &str, call: &str, fragment: &str| {
        let (resp, rs, fc) = (format!("resp_{n}"), format!("rs_{n}"), format!("fc_{n}"));
        [
            json!({"type":"response.created","response":{"id":resp,"status":"in_progress"}}),
            json!({"type":"response.output_item.added","output_index":0,"item":{"id":rs,"type":"reasoning","summary":[]}}),
            json!({"type":"response.reasoning_summary_text.delta","item_id":rs,"output_index":0,"summary_index":0,"delta":plan}),
            json!({"type":"response.output_item.done","output_index":0,"item":{"id":rs,"type":"reasoning","encrypted_content":encrypted,"summary":[{"type":"summary_text","text":plan}]}}),
            json!({"type":"response.output_item.added","output_index":1,"item":{"id":fc,"type":"function_call","status":"in_progress","arguments":"","call_id":call,"name":"read"}}),
            json!({"type":"response.function_call_arguments.delta","item_id":fc,"output_index":1,"delta":fragment}),
        ]
        .map(|event| event.to_string())
        .to_vec()
    };
    let attempts = [
        attempt("1", "Plan A", "gAAA", "call_A", r#"{"pa"#),
        attempt("2", "Plan B", "gBBB", "call_B", r#"{"path":"b.txt"}"#),
    ]
    .concat();
    let (a, reasons) = restarted::<ResponsesMapper>(
        &attempts,
        &[
            r#"{"type":"response.output_item.done","output_index":1,"item":{"id":"fc_2","type":"function_call","status":"completed","arguments":"{\"path\":\"b.txt\"}","call_id":"call_B","name":"read"}}"#,
            r#"{"type":"response.completed","response":{"id":"resp_2","status":"completed","usage":{"input_tokens":10,"output_tokens":5}}}"#,
        ],
    );
    assert_eq!(
        (a.reasoning.as_str(), a.reasoning_signature.as_str()),
        ("Plan B", r#"{"id":"rs_2","encrypted_content":"gBBB"}"#)
    );
    assert_tool_calls(&a, &[call("call_B", "read", r#"{"path":"b.txt"}"#)]);
    assert_eq!(
        reasons,
        ["response.created (resp_2) before resp_1 completed"]
    );
}

#[test]
fn every_wrong_type_in_a_responses_event_is_an_error_never_a_silent_drop() {
    let created = r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#;
    let call = r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"fc","type":"function_call","arguments":"","call_id":"c","name":"read"}}"#;
    let cases = [
        (
            vec![
                created,
                r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":5}"#,
            ],
            "a Responses response.output_text.delta event: delta is a number (5), expected a string",
        ),
        (
            vec![
                created,
                r#"{"type":"response.output_text.delta","output_index":-1,"content_index":0,"delta":"x"}"#,
            ],
            "a Responses response.output_text.delta event: output_index is a number (-1), expected a non-negative integer",
        ),
        (
            vec![
                created,
                r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"fc","type":"function_call","arguments":"","call_id":9,"name":"read"}}"#,
            ],
            "a Responses response.output_item.added event: item.call_id is a number (9), expected a string",
        ),
        (
            vec![
                created,
                call,
                r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":{"a":1}}"#,
            ],
            r#"a Responses response.function_call_arguments.delta event: delta is an object ({"a":1}), expected a string"#,
        ),
        (
            vec![
                created,
                r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"rs","type":"reasoning","encrypted_content":1,"summary":[]}}"#,
            ],
            "a Responses response.output_item.done event: item.encrypted_content is a number (1), expected a string",
        ),
        (
            vec![
                created,
                r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":"10","output_tokens":1}}}"#,
            ],
            r#"a Responses response.completed event: response.usage.input_tokens is a string ("10"), expected a non-negative integer"#,
        ),
        (
            vec![
                created,
                r#"{"type":"response.output_item.added","output_index":0,"item":"message"}"#,
            ],
            r#"a Responses response.output_item.added event: item is a string ("message"), expected an object"#,
        ),
    ];
    assert_malformed(
        run::<ResponsesMapper>,
        cases.map(|(lines, message)| (lines, message.to_string())),
    );
}

#[test]
fn request_renders_every_message_kind() {
    let mut request = sample_request();
    if let Message::Assistant {
        reasoning_signature,
        ..
    } = request.messages.make_mut(2)
    {
        *reasoning_signature =
            r#"{"encrypted_content":"gAAA","id":"rs_1"}{"encrypted_content":"gBBB","id":"rs_2"}"#
                .into();
    }
    assert!(shown("gpt-4.1", &request).get("include").is_none());
    assert!(reasoning_model("openai/o4-mini") && reasoning_model("gpt-5.1-codex-max"));
    let body = shown("gpt-5", &request);
    sent_is_shown(&wire::body("gpt-5", &request, true));
    expect![[r#"
        {
          "include": [
            "reasoning.encrypted_content"
          ],
          "input": [
            {
              "content": [
                {
                  "text": "[Summary of the earlier conversation]\nEarlier we listed files.",
                  "type": "input_text"
                }
              ],
              "role": "user",
              "type": "message"
            },
            {
              "content": [
                {
                  "text": "read a.txt",
                  "type": "input_text"
                }
              ],
              "role": "user",
              "type": "message"
            },
            {
              "encrypted_content": "gAAA",
              "id": "rs_1",
              "summary": [
                {
                  "text": "The user wants a.txt.",
                  "type": "summary_text"
                }
              ],
              "type": "reasoning"
            },
            {
              "encrypted_content": "gBBB",
              "id": "rs_2",
              "summary": [],
              "type": "reasoning"
            },
            {
              "content": [
                {
                  "text": "Reading.",
                  "type": "output_text"
                }
              ],
              "role": "assistant",
              "type": "message"
            },
            {
              "arguments": "{\"path\":\"a.txt\"}",
              "call_id": "call_1",
              "name": "read",
              "type": "function_call"
            },
            {
              "call_id": "call_1",
              "output": "hello",
              "type": "function_call_output"
            },
            {
              "content": [
                {
                  "text": "also b",
                  "type": "input_text"
                }
              ],
              "role": "user",
              "type": "message"
            },
            {
              "arguments": "{\"path\":\"b.txt\"}",
              "call_id": "call_2",
              "name": "read",
              "type": "function_call"
            },
            {
              "call_id": "call_2",
              "output": "error: no such file",
              "type": "function_call_output"
            },
            {
              "content": [
                {
                  "text": "Done.",
                  "type": "output_text"
                }
              ],
              "role": "assistant",
              "type": "message"
            }
          ],
          "instructions": "You are terse.",
          "max_output_tokens": 1024,
          "model": "gpt-5",
          "store": false,
          "stream": true,
          "tools": [
            {
              "description": "Read a file",
              "name": "read",
              "parameters": "<the read tool's parameters>",
              "strict": false,
              "type": "function"
            }
          ]
        }"#]]
    .assert_eq(&pretty_body(&body));
}
