//! Hand-written SSE bodies for each wire protocol, written from the providers' API
//! documentation: a step that calls `read {"path":"a.txt"}`, and a step that answers
//! with text.

/// The three wire protocols, named as `--provider` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
    Responses,
}

impl Wire {
    pub const ALL: [Wire; 3] = [Wire::OpenAi, Wire::Anthropic, Wire::Responses];

    pub fn flag(self) -> &'static str {
        match self {
            Wire::OpenAi => "openai",
            Wire::Anthropic => "anthropic",
            Wire::Responses => "openai-responses",
        }
    }

    /// The `--base-url` for a server at `url`.
    pub fn base_url(self, url: &str) -> String {
        match self {
            Wire::OpenAi | Wire::Responses => format!("{url}/v1"),
            Wire::Anthropic => url.to_string(),
        }
    }

    /// The request path the provider posts to.
    pub fn path(self) -> &'static str {
        match self {
            Wire::OpenAi => "/v1/chat/completions",
            Wire::Anthropic => "/v1/messages",
            Wire::Responses => "/v1/responses",
        }
    }

    pub fn tool_step(self) -> Vec<String> {
        match self {
            Wire::OpenAi => vec![
                chat(
                    r#"{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]},"finish_reason":null}"#,
                ),
                chat(
                    r#"{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]},"finish_reason":null}"#,
                ),
                chat(
                    r#"{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]},"finish_reason":null}"#,
                ),
                chat(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#),
                chat_usage(100, 20),
                "data: [DONE]\n\n".into(),
            ],
            Wire::Anthropic => vec![
                anthropic_start(100),
                event(
                    "content_block_start",
                    r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}"#,
                ),
                event(
                    "content_block_delta",
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}"#,
                ),
                event(
                    "content_block_delta",
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}"#,
                ),
                event(
                    "content_block_stop",
                    r#"{"type":"content_block_stop","index":0}"#,
                ),
                anthropic_end("tool_use", 20),
                event("message_stop", r#"{"type":"message_stop"}"#),
            ],
            Wire::Responses => {
                let item = r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.txt\"}","status":"completed"}"#;
                vec![
                    event(
                        "response.created",
                        r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}"#,
                    ),
                    event(
                        "response.output_item.added",
                        r#"{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"","status":"in_progress"}}"#,
                    ),
                    event(
                        "response.function_call_arguments.delta",
                        r#"{"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_1","output_index":0,"delta":"{\"path\":\"a.txt\"}"}"#,
                    ),
                    event(
                        "response.output_item.done",
                        &format!(
                            r#"{{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{item}}}"#
                        ),
                    ),
                    event(
                        "response.completed",
                        &format!(
                            r#"{{"type":"response.completed","sequence_number":4,"response":{{"id":"resp_1","object":"response","status":"completed","output":[{item}],"usage":{{"input_tokens":100,"output_tokens":20,"total_tokens":120}}}}}}"#
                        ),
                    ),
                ]
            }
        }
    }

    pub fn text_step(self, text: &str) -> Vec<String> {
        let quoted = serde_json::to_string(text).unwrap();
        match self {
            Wire::OpenAi => vec![
                chat(&format!(
                    r#"{{"index":0,"delta":{{"role":"assistant","content":{quoted}}},"finish_reason":null}}"#
                )),
                chat(r#"{"index":0,"delta":{},"finish_reason":"stop"}"#),
                chat_usage(150, 10),
                "data: [DONE]\n\n".into(),
            ],
            Wire::Anthropic => vec![
                anthropic_start(150),
                event(
                    "content_block_start",
                    r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
                ),
                event(
                    "content_block_delta",
                    &format!(
                        r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{quoted}}}}}"#
                    ),
                ),
                event(
                    "content_block_stop",
                    r#"{"type":"content_block_stop","index":0}"#,
                ),
                anthropic_end("end_turn", 10),
                event("message_stop", r#"{"type":"message_stop"}"#),
            ],
            Wire::Responses => {
                let item = format!(
                    r#"{{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{{"type":"output_text","text":{quoted},"annotations":[]}}]}}"#
                );
                vec![
                    event(
                        "response.created",
                        r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_2","object":"response","status":"in_progress","output":[]}}"#,
                    ),
                    event(
                        "response.output_item.added",
                        r#"{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}}"#,
                    ),
                    event(
                        "response.output_text.delta",
                        &format!(
                            r#"{{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":{quoted}}}"#
                        ),
                    ),
                    event(
                        "response.output_item.done",
                        &format!(
                            r#"{{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{item}}}"#
                        ),
                    ),
                    event(
                        "response.completed",
                        &format!(
                            r#"{{"type":"response.completed","sequence_number":4,"response":{{"id":"resp_2","object":"response","status":"completed","output":[{item}],"usage":{{"input_tokens":150,"output_tokens":10,"total_tokens":160}}}}}}"#
                        ),
                    ),
                ]
            }
        }
    }
}

pub fn chat(choice: &str) -> String {
    format!(
        "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{choice}]}}\n\n"
    )
}

pub fn chat_usage(input: u64, output: u64) -> String {
    format!(
        "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],\"usage\":{{\"prompt_tokens\":{input},\"completion_tokens\":{output},\"total_tokens\":{}}}}}\n\n",
        input + output
    )
}

pub fn event(name: &str, data: &str) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

pub fn anthropic_start(input: u64) -> String {
    event(
        "message_start",
        &format!(
            r#"{{"type":"message_start","message":{{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"stop_sequence":null,"usage":{{"input_tokens":{input},"output_tokens":1}}}}}}"#
        ),
    )
}

pub fn anthropic_end(reason: &str, output: u64) -> String {
    event(
        "message_delta",
        &format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"{reason}","stop_sequence":null}},"usage":{{"output_tokens":{output}}}}}"#
        ),
    )
}

/// An OpenAI Chat Completions step: optional text in chunks, then one tool call,
/// with `prompt_tokens` reported as the request's input.
pub fn openai_call(
    text: &[&str],
    id: &str,
    name: &str,
    args: &str,
    prompt_tokens: u64,
) -> Vec<String> {
    let mut frames: Vec<String> = text
        .iter()
        .map(|t| {
            let q = serde_json::to_string(t).unwrap();
            chat(&format!(
                r#"{{"index":0,"delta":{{"content":{q}}},"finish_reason":null}}"#
            ))
        })
        .collect();
    let args = serde_json::to_string(args).unwrap();
    frames.push(chat(&format!(
        r#"{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"{id}","type":"function","function":{{"name":"{name}","arguments":{args}}}}}]}},"finish_reason":null}}"#
    )));
    frames.push(chat(
        r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#,
    ));
    frames.push(chat_usage(prompt_tokens, 10));
    frames.push("data: [DONE]\n\n".into());
    frames
}

/// An OpenAI Chat Completions step answering with text in chunks.
pub fn openai_text(text: &[&str], prompt_tokens: u64) -> Vec<String> {
    let mut frames: Vec<String> = text
        .iter()
        .map(|t| {
            let q = serde_json::to_string(t).unwrap();
            chat(&format!(
                r#"{{"index":0,"delta":{{"content":{q}}},"finish_reason":null}}"#
            ))
        })
        .collect();
    frames.push(chat(r#"{"index":0,"delta":{},"finish_reason":"stop"}"#));
    frames.push(chat_usage(prompt_tokens, 10));
    frames.push("data: [DONE]\n\n".into());
    frames
}
