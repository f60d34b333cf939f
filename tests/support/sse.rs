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
            Wire::Anthropic => anthropic_message(
                100,
                anthropic_tool_use(0, "toolu_1", "read", &[r#"{"path":"#, r#""a.txt"}"#]),
                "tool_use",
                20,
            ),
            Wire::Responses => {
                let item = r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.txt\"}","status":"completed"}"#;
                responses_step(
                    "resp_1",
                    r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"","status":"in_progress"}"#,
                    (
                        "response.function_call_arguments.delta",
                        r#""item_id":"fc_1","output_index":0,"delta":"{\"path\":\"a.txt\"}""#
                            .into(),
                    ),
                    item,
                    (100, 20),
                )
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
            Wire::Anthropic => anthropic_message(150, anthropic_text(0, text), "end_turn", 10),
            Wire::Responses => {
                let item = format!(
                    r#"{{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{{"type":"output_text","text":{quoted},"annotations":[]}}]}}"#
                );
                responses_step(
                    "resp_2",
                    r#"{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}"#,
                    (
                        "response.output_text.delta",
                        format!(
                            r#""item_id":"msg_1","output_index":0,"content_index":0,"delta":{quoted}"#
                        ),
                    ),
                    &item,
                    (150, 10),
                )
            }
        }
    }
}

/// A Responses stream of one output item: `response.created` (response `id`), the
/// item added as it starts (`added`), one delta (its event name and its fields after
/// the sequence number), the item done (`item`, whole), and `response.completed`
/// with the usage (input, output tokens).
fn responses_step(
    id: &str,
    added: &str,
    (delta, fields): (&str, String),
    item: &str,
    (input, output): (u64, u64),
) -> Vec<String> {
    let total = input + output;
    vec![
        event(
            "response.created",
            &format!(
                r#"{{"type":"response.created","sequence_number":0,"response":{{"id":"{id}","object":"response","status":"in_progress","output":[]}}}}"#
            ),
        ),
        event(
            "response.output_item.added",
            &format!(
                r#"{{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{added}}}"#
            ),
        ),
        event(
            delta,
            &format!(r#"{{"type":"{delta}","sequence_number":2,{fields}}}"#),
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
                r#"{{"type":"response.completed","sequence_number":4,"response":{{"id":"{id}","object":"response","status":"completed","output":[{item}],"usage":{{"input_tokens":{input},"output_tokens":{output},"total_tokens":{total}}}}}}}"#
            ),
        ),
    ]
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

/// A whole Anthropic message: its start (`input` tokens), `blocks`, its end with
/// `reason` and `output` tokens.
pub fn anthropic_message(
    input: u64,
    blocks: Vec<String>,
    reason: &str,
    output: u64,
) -> Vec<String> {
    let mut frames = vec![anthropic_start(input)];
    frames.extend(blocks);
    frames.push(anthropic_end(reason, output));
    frames.push(event("message_stop", r#"{"type":"message_stop"}"#));
    frames
}

/// An Anthropic `content_block_start` of `block` (its JSON) at `index`.
pub fn anthropic_block_start(index: usize, block: &str) -> String {
    event(
        "content_block_start",
        &format!(r#"{{"type":"content_block_start","index":{index},"content_block":{block}}}"#),
    )
}

/// An Anthropic `content_block_delta` of `delta` (its JSON) at `index`.
pub fn anthropic_delta(index: usize, delta: &str) -> String {
    event(
        "content_block_delta",
        &format!(r#"{{"type":"content_block_delta","index":{index},"delta":{delta}}}"#),
    )
}

pub fn anthropic_block_stop(index: usize) -> String {
    event(
        "content_block_stop",
        &format!(r#"{{"type":"content_block_stop","index":{index}}}"#),
    )
}

/// A text block at `index`, its text in one delta.
pub fn anthropic_text(index: usize, text: &str) -> Vec<String> {
    let text = serde_json::to_string(text).unwrap();
    vec![
        anthropic_block_start(index, r#"{"type":"text","text":""}"#),
        anthropic_delta(index, &format!(r#"{{"type":"text_delta","text":{text}}}"#)),
        anthropic_block_stop(index),
    ]
}

/// A thinking block at `index`: its thinking in one delta, then its signature.
pub fn anthropic_thinking(index: usize, thinking: &str, signature: &str) -> Vec<String> {
    let thinking = serde_json::to_string(thinking).unwrap();
    let signature = serde_json::to_string(signature).unwrap();
    vec![
        anthropic_block_start(index, r#"{"type":"thinking","thinking":"","signature":""}"#),
        anthropic_delta(
            index,
            &format!(r#"{{"type":"thinking_delta","thinking":{thinking}}}"#),
        ),
        anthropic_delta(
            index,
            &format!(r#"{{"type":"signature_delta","signature":{signature}}}"#),
        ),
        anthropic_block_stop(index),
    ]
}

/// The start of a `tool_use` block at `index` and its input, a delta per piece of
/// `json` (without the block's stop: [`anthropic_tool_use`] has it).
pub fn anthropic_tool_input(index: usize, id: &str, name: &str, json: &[&str]) -> Vec<String> {
    let mut frames = vec![anthropic_block_start(
        index,
        &format!(r#"{{"type":"tool_use","id":"{id}","name":"{name}","input":{{}}}}"#),
    )];
    frames.extend(json.iter().map(|piece| {
        let piece = serde_json::to_string(piece).unwrap();
        anthropic_delta(
            index,
            &format!(r#"{{"type":"input_json_delta","partial_json":{piece}}}"#),
        )
    }));
    frames
}

/// A whole `tool_use` block at `index`, its input a delta per piece of `json`.
pub fn anthropic_tool_use(index: usize, id: &str, name: &str, json: &[&str]) -> Vec<String> {
    let mut frames = anthropic_tool_input(index, id, name, json);
    frames.push(anthropic_block_stop(index));
    frames
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
    openai_step(text, Some((id, name, args)), Some(prompt_tokens))
}

/// An OpenAI Chat Completions step answering with text in chunks.
pub fn openai_text(text: &[&str], prompt_tokens: u64) -> Vec<String> {
    openai_step(text, None, Some(prompt_tokens))
}

/// [`openai_call`] without text and without a usage chunk (as llama.cpp's server
/// streams even when `include_usage` is asked for).
pub fn openai_call_without_usage(id: &str, name: &str, args: &str) -> Vec<String> {
    openai_step(&[], Some((id, name, args)), None)
}

/// [`openai_text`] of one chunk, without a usage chunk.
pub fn openai_text_without_usage(text: &str) -> Vec<String> {
    openai_step(&[text], None, None)
}

/// Text in chunks, then the call `(id, name, args)` if any; the usage chunk, when
/// `prompt_tokens` is given, reports 10 output tokens.
fn openai_step(
    text: &[&str],
    call: Option<(&str, &str, &str)>,
    prompt_tokens: Option<u64>,
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
    let finish = match call {
        Some((id, name, args)) => {
            let args = serde_json::to_string(args).unwrap();
            frames.push(chat(&format!(
                r#"{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"{id}","type":"function","function":{{"name":"{name}","arguments":{args}}}}}]}},"finish_reason":null}}"#
            )));
            "tool_calls"
        }
        None => "stop",
    };
    frames.push(chat(&format!(
        r#"{{"index":0,"delta":{{}},"finish_reason":"{finish}"}}"#
    )));
    if let Some(prompt_tokens) = prompt_tokens {
        frames.push(chat_usage(prompt_tokens, 10));
    }
    frames.push("data: [DONE]\n\n".into());
    frames
}
