//! The Messages request body: borrowed structs, serialized straight to the bytes
//! sent, and to a `serde_json::Value` only for `--show-context`. Their fields are
//! declared in the order a `Value` object (a `BTreeMap`) sorts its keys, so the
//! bytes sent are the shown value's, as they were when the body was built as one.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::super::ModelRequest;
use super::summary_text;
use xcsh_machine::Message;

/// The body for `request`. Consecutive messages of one role are merged (the API
/// wants them alternating): tool results and a following user message share one
/// user turn, tool results first. An assistant turn carries its thinking (with its
/// signature; thinking without one cannot be sent back and is dropped), text and
/// `tool_use` blocks.
pub fn body<'a>(model: &'a str, request: &'a ModelRequest) -> Body<'a> {
    let mut messages: Vec<Turn<'a>> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Block<'a>>| {
        if blocks.is_empty() {
            return;
        }
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => messages.push(Turn {
                content: blocks,
                role,
            }),
        }
    };
    for message in &request.messages {
        match message {
            Message::User { text, .. } => push("user", text_block(Cow::Borrowed(text))),
            Message::Summary { text } => push("user", text_block(Cow::Owned(summary_text(text)))),
            Message::Assistant {
                text,
                reasoning,
                reasoning_signature,
                reasoning_blocks,
                tool_calls,
            } => {
                let mut blocks = Vec::new();
                if reasoning_blocks.is_empty() {
                    if !reasoning_signature.is_empty() {
                        blocks.push(thinking_block(reasoning, reasoning_signature));
                    }
                } else {
                    // Each block as it came, in order: a redacted block as its data,
                    // a thinking block with its own signature (one without a
                    // signature cannot be sent back).
                    for block in reasoning_blocks {
                        if !block.redacted.is_empty() {
                            blocks.push(Block::Redacted(Redacted {
                                data: &block.redacted,
                                kind: "redacted_thinking",
                            }));
                        } else if !block.signature.is_empty() {
                            blocks.push(thinking_block(&block.text, &block.signature));
                        }
                    }
                }
                blocks.extend(text_block(Cow::Borrowed(text)));
                for call in tool_calls {
                    blocks.push(Block::ToolUse(ToolUse {
                        id: &call.id.0,
                        input: tool_input(&call.arguments),
                        name: &call.name,
                        kind: "tool_use",
                    }));
                }
                push("assistant", blocks);
            }
            Message::ToolResult {
                call_id,
                is_error,
                content,
                ..
            } => push(
                "user",
                vec![Block::ToolResult(ToolResult {
                    content,
                    is_error: *is_error,
                    tool_use_id: &call_id.0,
                    kind: "tool_result",
                })],
            ),
        }
    }
    Body {
        max_tokens: request.max_output_tokens,
        messages,
        model,
        stream: true,
        system: (!request.system.is_empty()).then_some(request.system.as_str()),
        tools: request
            .tools
            .iter()
            .map(|t| Tool {
                description: &t.description,
                input_schema: &t.parameters,
                name: &t.name,
            })
            .collect(),
    }
}

fn thinking_block<'a>(thinking: &'a str, signature: &'a str) -> Block<'a> {
    Block::Thinking(Thinking {
        signature,
        thinking,
        kind: "thinking",
    })
}

/// The API rejects empty text blocks: empty text is no block.
fn text_block(text: Cow<'_, str>) -> Vec<Block<'_>> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![Block::Text(Text { text, kind: "text" })]
    }
}

/// `tool_use.input` must be an object: the arguments when they are one, otherwise
/// (the model produced invalid JSON, which was returned to it as an error) the raw
/// text under `_invalid_arguments`, so that the model still sees what it sent.
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => serde_json::json!({ "_invalid_arguments": arguments }),
    }
}

#[derive(Serialize)]
pub struct Body<'a> {
    pub max_tokens: u32,
    pub messages: Vec<Turn<'a>>,
    pub model: &'a str,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
}

/// One turn of the alternating conversation.
#[derive(Serialize)]
pub struct Turn<'a> {
    pub content: Vec<Block<'a>>,
    pub role: &'static str,
}

#[derive(Serialize)]
pub struct Tool<'a> {
    pub description: &'a str,
    pub input_schema: &'a Value,
    pub name: &'a str,
}

/// A content block (each with its `type` among its keys, in key order).
#[derive(Serialize)]
#[serde(untagged)]
pub enum Block<'a> {
    Text(Text<'a>),
    Thinking(Thinking<'a>),
    Redacted(Redacted<'a>),
    ToolUse(ToolUse<'a>),
    ToolResult(ToolResult<'a>),
}

#[derive(Serialize)]
pub struct Text<'a> {
    text: Cow<'a, str>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
pub struct Thinking<'a> {
    signature: &'a str,
    thinking: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
pub struct Redacted<'a> {
    data: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
pub struct ToolUse<'a> {
    id: &'a str,
    input: Value,
    name: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
pub struct ToolResult<'a> {
    content: &'a str,
    /// Sent only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
    tool_use_id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}
