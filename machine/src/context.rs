//! The model context the machine maintains: messages with the entry each came from,
//! and a running blake3 hash over them so that a step's decision names its context.

use std::sync::Arc;

use super::messages::Messages;
use super::types::{EntryId, Message, ToolCall};

/// One context message and, where it has one, the entry it came from (the step
/// entry of an assistant message). Compaction's `first_kept` is such an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextItem {
    pub source: Option<EntryId>,
    pub message: Message,
}

/// The ordered messages of the active branch, as the next request will carry them.
/// The messages are shared ([`Messages`]): a request takes them as a pointer copy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// The entry each message came from, by position in `messages`.
    sources: Vec<Option<EntryId>>,
    messages: Messages,
    hash: [u8; 32],
    /// The bytes the token estimate counts, over `messages` (kept as they change).
    bytes: usize,
    /// The buffer each message is serialized into to be hashed (reused).
    scratch: Scratch,
}

/// A reusable byte buffer that is no part of the value: any two are equal, and a
/// clone starts empty.
#[derive(Default)]
struct Scratch(Vec<u8>);

impl Clone for Scratch {
    fn clone(&self) -> Self {
        Scratch::default()
    }
}

impl PartialEq for Scratch {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Scratch {}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scratch")
    }
}

impl Context {
    pub fn from_items(items: Vec<ContextItem>) -> Context {
        let mut ctx = Context::default();
        for item in items {
            ctx.push(item.source, item.message);
        }
        ctx
    }

    pub fn push(&mut self, source: Option<EntryId>, message: Message) {
        self.push_shared(source, Arc::new(message));
    }

    fn push_shared(&mut self, source: Option<EntryId>, message: Arc<Message>) {
        self.hash = chain(&self.hash, &message, &mut self.scratch.0);
        self.bytes += message_len(&message);
        self.sources.push(source);
        self.messages.push_shared(message);
    }

    /// Each message with the entry it came from, in order.
    pub fn items(
        &self,
    ) -> impl DoubleEndedIterator<Item = (Option<EntryId>, &Message)> + ExactSizeIterator {
        self.sources.iter().copied().zip(self.messages.iter())
    }

    /// The items as owned values (each message copied).
    pub fn to_items(&self) -> Vec<ContextItem> {
        self.items()
            .map(|(source, message)| ContextItem {
                source,
                message: message.clone(),
            })
            .collect()
    }

    /// The entry the message at `index` came from (`None` past the end too).
    pub fn source(&self, index: usize) -> Option<EntryId> {
        self.sources.get(index).copied().flatten()
    }

    /// The messages, shared: cloning them is a pointer copy.
    pub fn messages(&self) -> &Messages {
        &self.messages
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Hex of the running hash: blake3 chained over the canonical JSON of each message.
    pub fn hash_hex(&self) -> String {
        blake3::Hash::from_bytes(self.hash).to_hex().to_string()
    }

    /// Hex of the running hash with the memory index hash `index` mixed in (SPEC.md
    /// §28): blake3 of the running hash, `memory_index:` and `index`.
    pub fn hash_with(&self, index: &str) -> String {
        let mut h = blake3::Hasher::new();
        h.update(&self.hash);
        h.update(b"memory_index:");
        h.update(index.as_bytes());
        h.finalize().to_hex().to_string()
    }

    /// Replaces messages `0..upto` by one summary message.
    pub fn compact(&mut self, upto: usize, summary: String) {
        let tail: Vec<_> = self.sources[upto..]
            .iter()
            .copied()
            .zip(self.messages.shared()[upto..].iter().cloned())
            .collect();
        let scratch = std::mem::take(&mut self.scratch);
        *self = Context {
            scratch,
            ..Context::default()
        };
        self.push(None, Message::Summary { text: summary });
        for (source, message) in tail {
            self.push_shared(source, message);
        }
    }

    /// A rough token estimate (4 bytes a token) used for `tokens_after`.
    pub fn estimate_tokens(&self) -> u64 {
        estimate_tokens(self.bytes, 4)
    }

    /// The bytes the token estimates count: text, reasoning, tool-call names and
    /// arguments, tool-result contents and summaries.
    pub fn estimate_bytes(&self) -> usize {
        self.bytes
    }
}

/// ⌈`bytes` / `bytes_per_token`⌉ (a ratio of 0 counts as 1).
pub fn estimate_tokens(bytes: usize, bytes_per_token: u32) -> u64 {
    let ratio = usize::try_from(bytes_per_token.max(1)).unwrap_or(usize::MAX);
    u64::try_from(bytes.div_ceil(ratio)).unwrap_or(u64::MAX)
}

/// The bytes an assistant's output counts in the estimates.
pub fn output_bytes(text: &str, reasoning: &str, tool_calls: &[ToolCall]) -> usize {
    text.len()
        + reasoning.len()
        + tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len())
            .sum::<usize>()
}

fn message_len(m: &Message) -> usize {
    match m {
        Message::User { text, .. } | Message::Summary { text } => text.len(),
        Message::Assistant {
            text,
            reasoning,
            tool_calls,
            ..
        } => output_bytes(text, reasoning, tool_calls),
        Message::ToolResult { content, .. } => content.len(),
    }
}

/// blake3 of `prev` and the JSON of `message`, serialized into `scratch`.
fn chain(prev: &[u8; 32], message: &Message, scratch: &mut Vec<u8>) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(prev);
    scratch.clear();
    // Serializing a plain data enum to JSON cannot fail (no maps with non-string
    // keys, no custom serializers), so the error branch is unreachable; the buffer
    // is emptied so that it would hash as the empty serialization did.
    if serde_json::to_writer(&mut *scratch, message).is_err() {
        scratch.clear();
    }
    h.update(scratch);
    *h.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{CallId, ToolCall, UserOrigin};

    /// The running hash is blake3 chained over the JSON of each message, whatever
    /// buffer serializes them; compacting rehashes from the summary on.
    #[test]
    fn the_hash_chains_the_json_of_each_message() {
        let messages = vec![
            Message::User {
                origin: UserOrigin::Prompt,
                text: "fix \"it\"\n\u{1}é".into(),
            },
            Message::Assistant {
                text: "ok".into(),
                reasoning: String::new(),
                reasoning_signature: String::new(),
                reasoning_blocks: Vec::new(),
                tool_calls: vec![ToolCall {
                    id: CallId("call_1".into()),
                    name: "read".into(),
                    arguments: "{\"path\":\"a\\\\b\"}".into(),
                }],
            },
            Message::ToolResult {
                call_id: CallId("call_1".into()),
                name: "read".into(),
                is_error: false,
                content: "x".repeat(5000),
            },
        ];
        let expected = |messages: &[Message]| {
            let mut hash = [0u8; 32];
            for m in messages {
                let mut h = blake3::Hasher::new();
                h.update(&hash);
                h.update(&serde_json::to_vec(m).unwrap());
                hash = *h.finalize().as_bytes();
            }
            blake3::Hash::from_bytes(hash).to_hex().to_string()
        };
        let mut ctx = Context::default();
        for m in &messages {
            ctx.push(None, m.clone());
        }
        assert_eq!(ctx.hash_hex(), expected(&messages));
        assert_eq!(ctx.clone(), ctx);
        ctx.compact(2, "sum".into());
        let mut after = vec![Message::Summary { text: "sum".into() }];
        after.push(messages[2].clone());
        assert_eq!(ctx.hash_hex(), expected(&after));
        assert_eq!(ctx, Context::from_items(ctx.to_items()));
    }
}
