//! Tests of `openai.rs`.

use super::*;
use crate::Provider;
use crate::testing::{
    api_error, assembled, assert_malformed, assert_tool_calls, call, parallel_read_and_list,
    pretty_body, render, run, sample_request, sent_is_shown,
};
use expect_test::expect;
use xcsh_machine::Message;
use xcsh_machine::UserOrigin;

#[test]
fn parallel_tool_calls_with_fragmented_arguments() {
    let events = parallel_read_and_list::<OpenAiMapper>(
        &[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"list","arguments":"{\"dir"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\":\".\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}"#,
            "[DONE]",
        ],
        ["call_a", "call_b"],
    );
    expect![[r#"
        {"kind":"tool_call_start","index":0,"id":"call_a","name":"read"}
        {"kind":"tool_call_delta","index":0,"arguments":"{\"pa"}
        {"kind":"tool_call_start","index":1,"id":"call_b","name":"list"}
        {"kind":"tool_call_delta","index":1,"arguments":"{\"dir"}
        {"kind":"tool_call_delta","index":0,"arguments":"th\":\"a\"}"}
        {"kind":"tool_call_delta","index":1,"arguments":"\":\".\"}"}
        {"kind":"tool_call_end","index":0}
        {"kind":"tool_call_end","index":1}
        {"kind":"usage","usage":{"input_tokens":5,"output_tokens":9}}
        {"kind":"finish","reason":"tool_calls"}"#]]
    .assert_eq(&render(&events));
}

#[test]
fn refusal_and_error_chunks_are_api_errors() {
    let (_, err) = run::<OpenAiMapper>(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":"I can't "}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"refusal":"help with that."}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
    ]);
    assert_eq!(
        err,
        Some(api_error("the model refused: I can't help with that."))
    );
    let (events, err) = run::<OpenAiMapper>(&[
        r#"{"choices":[{"index":0,"delta":{"content":"par"}}]}"#,
        r#"{"error":{"message":"Provider returned error","code":502}}"#,
    ]);
    assert_eq!(events.len(), 1);
    assert_eq!(
        err.map(|e| (e.kind, e.message)),
        Some((
            ProviderErrorKind::Api,
            "Provider returned error (502)".to_string()
        ))
    );
    let (_, err) = run::<OpenAiMapper>(&["{not json"]);
    assert_eq!(err.map(|e| e.kind), Some(ProviderErrorKind::Malformed));
}

#[test]
fn a_chat_stream_restarted_with_a_new_id_keeps_only_the_second_message() {
    let (a, restarts) = assembled::<OpenAiMapper>(&[
        r#"{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":"Hmm, "}}]}"#,
        r#"{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"Let me re"}}]}"#,
        r#"{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"pa"}}]}}]}"#,
        r#"{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
        r#"{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"content":"Reading b."}}]}"#,
        r#"{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"read","arguments":"{\"path\":\"b.txt\"}"}}]}}]}"#,
        r#"{"id":"chatcmpl-2","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"id":"chatcmpl-2","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":7,"total_tokens":16}}"#,
        "[DONE]",
    ]);
    assert_eq!((a.text.as_str(), a.reasoning.as_str()), ("Reading b.", ""));
    assert_tool_calls(&a, &[call("call_b", "read", r#"{"path":"b.txt"}"#)]);
    assert_eq!(
        restarts,
        ["a chunk with the new id chatcmpl-2 (the message so far was chatcmpl-1)"]
    );
}

fn malformed_message(lines: &[&str]) -> Option<(ProviderErrorKind, String)> {
    run::<OpenAiMapper>(lines).1.map(|e| (e.kind, e.message))
}

#[test]
fn a_numeric_content_is_an_error_that_names_it() {
    assert_eq!(
        malformed_message(&[r#"{"choices":[{"index":0,"delta":{"content":42}}]}"#]),
        Some((
            ProviderErrorKind::Malformed,
            "a Chat Completions chunk: choices[0].delta.content is a number (42), expected a string, an array of content parts or null".into()
        ))
    );
}

#[test]
fn a_negative_tool_call_index_is_an_error_that_names_it() {
    assert_eq!(
        malformed_message(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"call_1","type":"function","function":{"name":"read","arguments":"{}"}}]}}]}"#
        ]),
        Some((
            ProviderErrorKind::Malformed,
            "a Chat Completions chunk: choices[0].delta.tool_calls[0].index is a number (-1), expected a non-negative integer".into()
        ))
    );
}

#[test]
fn every_wrong_type_in_a_chat_chunk_is_an_error_never_a_silent_drop() {
    let cases = [
        (
            r#"{"choices":{"index":0}}"#,
            r#"choices is an object ({"index":0}), expected an array"#,
        ),
        (
            r#"{"choices":[{"index":"0","delta":{}}]}"#,
            r#"choices[0].index is a string ("0"), expected a non-negative integer"#,
        ),
        (
            r#"{"choices":[{"index":0,"delta":"hi"}]}"#,
            r#"choices[0].delta is a string ("hi"), expected an object"#,
        ),
        (
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":["a"]}}]}"#,
            r#"choices[0].delta.reasoning_content is an array (["a"]), expected a string"#,
        ),
        (
            r#"{"choices":[{"index":0,"delta":{"refusal":true}}]}"#,
            "choices[0].delta.refusal is a boolean (true), expected a string",
        ),
        (
            r#"{"choices":[{"index":0,"delta":{"tool_calls":{"index":0}}}]}"#,
            r#"choices[0].delta.tool_calls is an object ({"index":0}), expected an array"#,
        ),
        (
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":{"a":1}}}]}}]}"#,
            r#"choices[0].delta.tool_calls[0].function.arguments is an object ({"a":1}), expected a string"#,
        ),
        (
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":7,"function":{"name":"f"}}]}}]}"#,
            "choices[0].delta.tool_calls[0].id is a number (7), expected a string",
        ),
        (
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":1}]}"#,
            "choices[0].finish_reason is a number (1), expected a string",
        ),
        (
            r#"{"choices":[],"usage":{"prompt_tokens":"12","completion_tokens":3}}"#,
            r#"usage.prompt_tokens is a string ("12"), expected a non-negative integer"#,
        ),
        (
            r#"{"choices":[],"usage":12}"#,
            "usage is a number (12), expected an object",
        ),
        (
            r#"{"id":5,"choices":[]}"#,
            "id is a number (5), expected a string",
        ),
        (
            r#"{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":3}]}}]}"#,
            "choices[0].delta.content[0].text is a number (3), expected a string",
        ),
    ];
    assert_malformed(
        run::<OpenAiMapper>,
        cases.map(|(line, message)| (vec![line], format!("a Chat Completions chunk: {message}"))),
    );
}

#[test]
fn completeness() {
    let mut m = OpenAiMapper::default();
    m.on_event(None, r#"{"choices":[{"index":0,"delta":{"content":"a"}}]}"#)
        .unwrap();
    assert!(!m.is_complete());
    m.on_event(None, "[DONE]").unwrap();
    assert!(m.is_complete());
}

#[test]
fn request_renders_every_message_kind() {
    let body = http::shown_body(&wire::body("gpt-test", &sample_request(), false));
    expect![[r#"
        {
          "max_completion_tokens": 1024,
          "messages": [
            {
              "content": "You are terse.",
              "role": "system"
            },
            {
              "content": "[Summary of the earlier conversation]\nEarlier we listed files.",
              "role": "user"
            },
            {
              "content": "read a.txt",
              "role": "user"
            },
            {
              "content": "Reading.",
              "role": "assistant",
              "tool_calls": [
                {
                  "function": {
                    "arguments": "{\"path\":\"a.txt\"}",
                    "name": "read"
                  },
                  "id": "call_1",
                  "type": "function"
                }
              ]
            },
            {
              "content": "hello",
              "role": "tool",
              "tool_call_id": "call_1"
            },
            {
              "content": "also b",
              "role": "user"
            },
            {
              "content": null,
              "role": "assistant",
              "tool_calls": [
                {
                  "function": {
                    "arguments": "{\"path\":\"b.txt\"}",
                    "name": "read"
                  },
                  "id": "call_2",
                  "type": "function"
                }
              ]
            },
            {
              "content": "error: no such file",
              "role": "tool",
              "tool_call_id": "call_2"
            },
            {
              "content": "Done.",
              "role": "assistant"
            }
          ],
          "model": "gpt-test",
          "stream": true,
          "stream_options": {
            "include_usage": true
          },
          "tools": [
            {
              "function": {
                "description": "Read a file",
                "name": "read",
                "parameters": "<the read tool's parameters>"
              },
              "type": "function"
            }
          ]
        }"#]]
    .assert_eq(&pretty_body(&body));
}

#[test]
fn the_bytes_sent_are_the_shown_body_in_key_order() {
    let mut bare = sample_request();
    bare.system = String::new();
    bare.tools.clear();
    bare.messages.push(Message::User {
        origin: UserOrigin::Prompt,
        text: "quotes \" and \\ and \u{1} and é and \n".into(),
    });
    let empty = ModelRequest {
        system: String::new(),
        messages: Default::default(),
        tools: Vec::new(),
        max_output_tokens: 0,
    };
    for request in [&sample_request(), &bare, &empty] {
        for legacy in [false, true] {
            sent_is_shown(&wire::body("m\"odel", request, legacy));
        }
    }
}

#[test]
fn compatible_servers_get_max_tokens() {
    let config = HttpConfig::new("http://127.0.0.1:1/v1", None, "m");
    let p = OpenAiProvider::new(config).unwrap();
    let body = p.render_request(&sample_request());
    assert_eq!(body["max_tokens"], 1024);
    assert!(body.get("max_completion_tokens").is_none());
    let config = HttpConfig::new("https://api.openai.com/v1", Some("k".into()), "m");
    let p = OpenAiProvider::new(config).unwrap();
    assert_eq!(
        p.render_request(&sample_request())["max_completion_tokens"],
        1024
    );
}
