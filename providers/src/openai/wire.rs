//! The Chat Completions request body: borrowed structs, serialized straight to the
//! bytes sent, and to a `serde_json::Value` only for `--show-context`. Their fields
//! are declared in the order a `Value` object (a `BTreeMap`) sorts its keys, so the
//! bytes sent are the shown value's, as they were when the body was built as one.

use std::borrow::Cow;

use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use serde_json::Value;

use super::super::ModelRequest;
use super::summary_text;
use xcsh_machine::Message;

/// The body for `request`: system prompt first, messages in order, tools as
/// functions. Reasoning is not sent back: Chat Completions has no field for it.
/// `legacy_max_tokens` names the limit `max_tokens` instead of
/// `max_completion_tokens`.
pub fn body<'a>(model: &'a str, request: &'a ModelRequest, legacy_max_tokens: bool) -> Body<'a> {
    let (max_completion_tokens, max_tokens) = if legacy_max_tokens {
        (None, Some(request.max_output_tokens))
    } else {
        (Some(request.max_output_tokens), None)
    };
    Body {
        max_completion_tokens,
        max_tokens,
        messages: Messages(request),
        model,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        tools: request
            .tools
            .iter()
            .map(|t| Tool {
                function: ToolFunction {
                    description: &t.description,
                    name: &t.name,
                    parameters: &t.parameters,
                },
                kind: "function",
            })
            .collect(),
    }
}

#[derive(Serialize)]
pub struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    pub messages: Messages<'a>,
    pub model: &'a str,
    pub stream: bool,
    pub stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
}

#[derive(Serialize)]
pub struct StreamOptions {
    pub include_usage: bool,
}

#[derive(Serialize)]
pub struct Tool<'a> {
    pub function: ToolFunction<'a>,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

#[derive(Serialize)]
pub struct ToolFunction<'a> {
    pub description: &'a str,
    pub name: &'a str,
    pub parameters: &'a Value,
}

/// The system prompt (when there is one), then the messages.
pub struct Messages<'a>(pub &'a ModelRequest);

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = self.0;
        let mut seq = serializer.serialize_seq(None)?;
        if !request.system.is_empty() {
            seq.serialize_element(&Plain {
                content: Cow::Borrowed(&request.system),
                role: "system",
            })?;
        }
        for message in &request.messages {
            match message {
                Message::User { text, .. } => seq.serialize_element(&Plain {
                    content: Cow::Borrowed(text),
                    role: "user",
                })?,
                Message::Summary { text } => seq.serialize_element(&Plain {
                    content: Cow::Owned(summary_text(text)),
                    role: "user",
                })?,
                Message::Assistant {
                    text, tool_calls, ..
                } => seq.serialize_element(&Assistant {
                    content: (tool_calls.is_empty() || !text.is_empty()).then_some(text.as_str()),
                    role: "assistant",
                    tool_calls: tool_calls
                        .iter()
                        .map(|c| Call {
                            function: CallFunction {
                                arguments: &c.arguments,
                                name: &c.name,
                            },
                            id: &c.id.0,
                            kind: "function",
                        })
                        .collect(),
                })?,
                Message::ToolResult {
                    call_id, content, ..
                } => seq.serialize_element(&ToolResult {
                    content,
                    role: "tool",
                    tool_call_id: &call_id.0,
                })?,
            }
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct Plain<'a> {
    content: Cow<'a, str>,
    role: &'static str,
}

#[derive(Serialize)]
struct Assistant<'a> {
    /// `null` when the message is only tool calls.
    content: Option<&'a str>,
    role: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Call<'a>>,
}

#[derive(Serialize)]
struct Call<'a> {
    function: CallFunction<'a>,
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    arguments: &'a str,
    name: &'a str,
}

#[derive(Serialize)]
struct ToolResult<'a> {
    content: &'a str,
    role: &'static str,
    tool_call_id: &'a str,
}
