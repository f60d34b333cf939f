//! The model context the machine maintains: messages with the entry each came from,
//! and a running blake3 hash over them so that a step's decision names its context.

use super::types::{EntryId, Message};

/// One context message and, where it has one, the entry it came from (the step
/// entry of an assistant message). Compaction's `first_kept` is such an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextItem {
    pub source: Option<EntryId>,
    pub message: Message,
}

/// The ordered messages of the active branch, as the next request will carry them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    items: Vec<ContextItem>,
    hash: [u8; 32],
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
        self.hash = chain(&self.hash, &message);
        self.items.push(ContextItem { source, message });
    }

    pub fn items(&self) -> &[ContextItem] {
        &self.items
    }

    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.items.iter().map(|i| &i.message)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Hex of the running hash: blake3 chained over the canonical JSON of each message.
    pub fn hash_hex(&self) -> String {
        blake3::Hash::from_bytes(self.hash).to_hex().to_string()
    }

    /// Replaces messages `0..upto` by one summary message.
    pub fn compact(&mut self, upto: usize, summary: String) {
        let tail = self.items.split_off(upto);
        let mut items = Vec::with_capacity(tail.len() + 1);
        items.push(ContextItem {
            source: None,
            message: Message::Summary { text: summary },
        });
        items.extend(tail);
        *self = Context::from_items(items);
    }

    /// A rough token estimate (4 bytes a token) used for `tokens_after`.
    pub fn estimate_tokens(&self) -> u64 {
        let bytes: usize = self.items.iter().map(|i| message_len(&i.message)).sum();
        bytes.div_ceil(4) as u64
    }
}

fn message_len(m: &Message) -> usize {
    match m {
        Message::User { text, .. } | Message::Summary { text } => text.len(),
        Message::Assistant {
            text,
            reasoning,
            tool_calls,
            ..
        } => {
            text.len()
                + reasoning.len()
                + tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.len())
                    .sum::<usize>()
        }
        Message::ToolResult { content, .. } => content.len(),
    }
}

fn chain(prev: &[u8; 32], message: &Message) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(prev);
    // Serializing a plain data enum to JSON cannot fail (no maps with non-string
    // keys, no custom serializers), so the error branch is unreachable.
    let bytes = serde_json::to_vec(message).unwrap_or_default();
    h.update(&bytes);
    *h.finalize().as_bytes()
}
