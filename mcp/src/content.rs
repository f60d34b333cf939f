//! An MCP tool result as the text of a tool outcome: the text blocks as they came,
//! every other block as one line saying what it was, the structured content as
//! JSON when the server sent no text, and `isError` as an error outcome.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use xcsh_machine::{ToolOutcome, ToolStatus};

/// The outcome of a call that returned `result`.
pub fn outcome(result: &CallToolResult) -> ToolOutcome {
    let mut parts: Vec<String> = result.content.iter().map(block).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let status = if result.is_error == Some(true) {
        ToolStatus::Error
    } else {
        ToolStatus::Ok
    };
    ToolOutcome {
        status,
        content: parts.join("\n"),
    }
}

/// One content block as text.
fn block(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!(
            "[image: {}, {} bytes of base64, not shown]",
            i.mime_type,
            i.data.len()
        ),
        ContentBlock::Audio(a) => format!(
            "[audio: {}, {} bytes of base64, not shown]",
            a.mime_type,
            a.data.len()
        ),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents { uri, blob, .. } => {
                format!(
                    "[resource {uri}: {} bytes of base64, not shown]",
                    blob.len()
                )
            }
            _ => "[a resource of a kind xcsh does not know, not shown]".to_owned(),
        },
        ContentBlock::ResourceLink(l) => format!("[resource link: {} ({})]", l.uri, l.name),
        _ => "[a content block of a kind xcsh does not know, not shown]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(json: serde_json::Value) -> CallToolResult {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn text_blocks_are_joined_by_newlines() {
        let r = result(serde_json::json!({"content": [
            {"type": "text", "text": "Echo: hi"},
            {"type": "text", "text": "second"}
        ]}));
        assert_eq!(
            outcome(&r),
            ToolOutcome {
                status: ToolStatus::Ok,
                content: "Echo: hi\nsecond".into()
            }
        );
    }

    #[test]
    fn is_error_makes_an_error_outcome() {
        let r = result(
            serde_json::json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
        );
        assert_eq!(
            outcome(&r),
            ToolOutcome {
                status: ToolStatus::Error,
                content: "boom".into()
            }
        );
    }

    #[test]
    fn structured_content_stands_in_when_there_is_no_text() {
        let r = result(serde_json::json!({"content": [], "structuredContent": {"sum": 3}}));
        assert_eq!(outcome(&r).content, r#"{"sum":3}"#);
    }

    #[test]
    fn an_image_is_named_not_inlined() {
        let r = result(serde_json::json!({"content": [
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}
        ]}));
        assert_eq!(
            outcome(&r).content,
            "[image: image/png, 8 bytes of base64, not shown]"
        );
    }
}
