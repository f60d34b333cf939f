//! The Responses request body: borrowed structs, serialized straight to the bytes
//! sent, and to a `serde_json::Value` only for `--show-context`. Their fields are
//! declared in the order a `Value` object (a `BTreeMap`) sorts its keys, so the
//! bytes sent are the shown value's, as they were when the body was built as one.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::super::ModelRequest;
use super::{reasoning_items, summary_text};
use xcsh_machine::Message;

/// The body for `request`: `instructions` is the system prompt, `input` the
/// messages as items (an assistant turn becomes its reasoning items, its text
/// message and its `function_call`s; a tool result a `function_call_output`).
/// Requests are stateless (`store: false`); with `encrypted_reasoning` (for the
/// reasoning models, [`super::reasoning_model`]; the others reject it) they ask for
/// `reasoning.encrypted_content`, so that reasoning travels with the conversation.
/// Tools are non-strict functions (strict mode would require schemas that list
/// every property as required).
pub fn body<'a>(model: &'a str, request: &'a ModelRequest, encrypted_reasoning: bool) -> Body<'a> {
    let mut input = Vec::new();
    for message in &request.messages {
        match message {
            Message::User { text, .. } => input.push(user_item(Cow::Borrowed(text))),
            Message::Summary { text } => input.push(user_item(Cow::Owned(summary_text(text)))),
            Message::Assistant {
                text,
                reasoning,
                reasoning_signature,
                tool_calls,
                ..
            } => {
                for (n, (id, encrypted_content)) in
                    reasoning_items(reasoning_signature).into_iter().enumerate()
                {
                    let summary = if n == 0 && !reasoning.is_empty() {
                        vec![Part {
                            text: Cow::Borrowed(reasoning),
                            kind: "summary_text",
                        }]
                    } else {
                        Vec::new()
                    };
                    input.push(Item::Reasoning(Reasoning {
                        encrypted_content,
                        id,
                        summary,
                        kind: "reasoning",
                    }));
                }
                if !text.is_empty() {
                    input.push(Item::Message(MessageItem {
                        content: [Part {
                            text: Cow::Borrowed(text),
                            kind: "output_text",
                        }],
                        role: "assistant",
                        kind: "message",
                    }));
                }
                for call in tool_calls {
                    input.push(Item::Call(Call {
                        arguments: &call.arguments,
                        call_id: &call.id.0,
                        name: &call.name,
                        kind: "function_call",
                    }));
                }
            }
            Message::ToolResult {
                call_id, content, ..
            } => input.push(Item::Output(Output {
                call_id: &call_id.0,
                output: content,
                kind: "function_call_output",
            })),
        }
    }
    Body {
        include: encrypted_reasoning.then_some(["reasoning.encrypted_content"]),
        input,
        instructions: (!request.system.is_empty()).then_some(request.system.as_str()),
        max_output_tokens: request.max_output_tokens,
        model,
        store: false,
        stream: true,
        tools: request
            .tools
            .iter()
            .map(|t| Tool {
                description: &t.description,
                name: &t.name,
                parameters: &t.parameters,
                strict: false,
                kind: "function",
            })
            .collect(),
    }
}

fn user_item(text: Cow<'_, str>) -> Item<'_> {
    Item::Message(MessageItem {
        content: [Part {
            text,
            kind: "input_text",
        }],
        role: "user",
        kind: "message",
    })
}

#[derive(Serialize)]
pub struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<[&'static str; 1]>,
    pub input: Vec<Item<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<&'a str>,
    pub max_output_tokens: u32,
    pub model: &'a str,
    pub store: bool,
    pub stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
}

#[derive(Serialize)]
pub struct Tool<'a> {
    pub description: &'a str,
    pub name: &'a str,
    pub parameters: &'a Value,
    pub strict: bool,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// An input item (each with its `type` among its keys, in key order).
#[derive(Serialize)]
#[serde(untagged)]
pub enum Item<'a> {
    Reasoning(Reasoning<'a>),
    Message(MessageItem<'a>),
    Call(Call<'a>),
    Output(Output<'a>),
}

#[derive(Serialize)]
pub struct Reasoning<'a> {
    encrypted_content: String,
    id: String,
    summary: Vec<Part<'a>>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
pub struct MessageItem<'a> {
    content: [Part<'a>; 1],
    role: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// A text part of a message or a reasoning summary.
#[derive(Serialize)]
pub struct Part<'a> {
    text: Cow<'a, str>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
pub struct Call<'a> {
    arguments: &'a str,
    call_id: &'a str,
    name: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
pub struct Output<'a> {
    call_id: &'a str,
    output: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}
