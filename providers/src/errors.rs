//! What a provider's error object says: its message ([`error_message`]) and its kind
//! ([`api_error_kind`]: a refusal of a context too long for the model is
//! `context_overflow`, anything else `api`), and how a compaction summary reads.

use serde_json::Value;

use xcsh_machine::{ProviderError, ProviderErrorKind};

/// How a compaction summary reads as a user message.
pub fn summary_text(text: &str) -> String {
    format!("[Summary of the earlier conversation]\n{text}")
}

/// The message of a provider's error object: `{"message": …, "code"|"type": …}`
/// (OpenAI, Anthropic's inner `error`, OpenRouter), as `message (code)`.
pub fn error_message(error: &Value) -> Option<String> {
    let error = match error.get("error") {
        Some(inner) if inner.is_object() => inner,
        _ => error,
    };
    let message = error.get("message").and_then(Value::as_str)?;
    let code = error
        .get("code")
        .filter(|c| !c.is_null())
        .or_else(|| error.get("type").filter(|t| t.as_str() != Some("error")))
        .map(|c| match c {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    Some(match code {
        Some(code) if !code.is_empty() => format!("{message} ({code})"),
        _ => message.to_string(),
    })
}

/// Whether a provider's error object refuses the request as too long for the model's
/// context: OpenAI's (and Groq's, OpenAI Responses') `code` `context_length_exceeded`,
/// llama.cpp's server's `type` `exceed_context_size_error` (`request (N tokens)
/// exceeds the available context size (M tokens)`), Anthropic's
/// `invalid_request_error` `prompt is too long: N tokens > M maximum`, and the
/// messages of servers that send no such code (vLLM, DeepSeek, Mistral, OpenRouter:
/// `maximum context length`; xAI: `maximum prompt length`; Responses: `exceeds the
/// context window`).
pub fn is_context_overflow(error: &Value) -> bool {
    let error = match error.get("error") {
        Some(inner) if inner.is_object() => inner,
        _ => error,
    };
    let field = |name: &str| error.get(name).and_then(Value::as_str);
    if field("code") == Some("context_length_exceeded")
        || field("type") == Some("exceed_context_size_error")
    {
        return true;
    }
    let message = field("message").unwrap_or("").to_ascii_lowercase();
    [
        "prompt is too long",
        "exceeds the available context size",
        "maximum context length",
        "maximum prompt length",
        "context_length_exceeded",
        "exceeds the context window",
    ]
    .iter()
    .any(|p| message.contains(p))
}

/// The kind of a provider's error object: `context_overflow` when it refuses the
/// request as too long ([`is_context_overflow`]), else `api`.
pub fn api_error_kind(error: &Value) -> ProviderErrorKind {
    if is_context_overflow(error) {
        ProviderErrorKind::ContextOverflow
    } else {
        ProviderErrorKind::Api
    }
}

/// A stream's in-band `error` event: its provider's message (or a plain one when it
/// has none), of the kind [`api_error_kind`] says.
pub fn stream_error(payload: &Value) -> ProviderError {
    ProviderError {
        kind: api_error_kind(payload),
        message: error_message(payload).unwrap_or_else(|| "the stream reported an error".into()),
    }
}
