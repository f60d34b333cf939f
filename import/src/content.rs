//! A message's content in pi's and Claude Code's records: a string or an array of
//! blocks, read into one block type. The two formats' blocks differ in a few fields
//! only: a tool call's arguments are `input` in Claude Code's `tool_use` and
//! `arguments` in pi's `toolCall`, and only Claude Code has `tool_result` blocks
//! (`tool_use_id`, `content`, `is_error`).

use serde::Deserialize;
use serde_json::value::RawValue;
use xcsh_machine::{CallId, ToolCall};

/// A message's `content`: a string or an array of blocks. Anything else fails the
/// record's parse, so that its line is an error naming it (or, with `--lenient`, a
/// foreign entry), never text dropped.
pub(crate) enum Content {
    Text(String),
    Blocks(Vec<Block>),
}

/// By hand, not `#[serde(untagged)]`: untagged buffers the value, and the blocks'
/// `RawValue` fields (tool arguments) cannot be read from a buffer.
impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Content;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or an array of content blocks")
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Content, E> {
                Ok(Content::Text(s.to_owned()))
            }

            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Content, E> {
                Ok(Content::Text(s))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Content, A::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element()? {
                    blocks.push(block);
                }
                Ok(Content::Blocks(blocks))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// A content block: `text`, `thinking`, a tool call (Claude Code's `tool_use`, pi's
/// `toolCall`), Claude Code's `tool_result` (whose `content` is a string or text
/// blocks), images and the rest.
#[derive(Default, Deserialize)]
pub(crate) struct Block {
    #[serde(rename = "type")]
    pub kind: String,
    pub text: Option<String>,
    pub thinking: Option<String>,
    pub id: Option<String>,
    pub name: Option<String>,
    /// A `tool_use` block's arguments (Claude Code).
    pub input: Option<Box<RawValue>>,
    /// A `toolCall` block's arguments (pi).
    pub arguments: Option<Box<RawValue>>,
    pub tool_use_id: Option<String>,
    pub content: Option<Content>,
    #[serde(default)]
    pub is_error: bool,
}

impl Block {
    /// The call of a tool call block (its arguments `{}` when it has none).
    pub(crate) fn into_call(self) -> ToolCall {
        ToolCall {
            id: CallId(self.id.unwrap_or_default()),
            name: self.name.unwrap_or_default(),
            arguments: self
                .input
                .or(self.arguments)
                .map_or_else(|| "{}".into(), |a| a.get().to_string()),
        }
    }
}

/// The blocks of `content`: a string is one `text` block; none when it is absent.
pub(crate) fn blocks_of(content: Option<Content>) -> Vec<Block> {
    match content {
        None => Vec::new(),
        Some(Content::Text(text)) => vec![Block {
            kind: "text".into(),
            text: Some(text),
            ..Block::default()
        }],
        Some(Content::Blocks(blocks)) => blocks,
    }
}

/// The text of a message: its `text` blocks' texts, one a line; other blocks
/// (thinking, tool calls, images) are not text.
pub(crate) fn texts(blocks: &[Block]) -> String {
    blocks
        .iter()
        .filter(|b| b.kind == "text")
        .filter_map(|b| b.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}
