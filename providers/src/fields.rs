//! Typed reads of a provider's JSON: a field that is absent or `null` is `None`, one
//! of the expected type is `Some`, and anything else is a `malformed` error that
//! names the payload, the field and what arrived (`a Chat Completions chunk:
//! choices[0].delta.content is a number (42), expected a string, an array of content
//! parts or null`). Wrong types are never read as "absent".

use serde_json::Value;

use super::errors::stream_error;
use super::sse::{StreamMapper, malformed, parse_payload, skipped};
use xcsh_machine::{ProviderError, StreamEvent};

/// Reads fields of one payload; `what` names the payload in errors (`a Chat
/// Completions chunk`, `an Anthropic content_block_delta event`).
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    pub what: &'a str,
}

impl<'a> Reader<'a> {
    pub fn new(what: &'a str) -> Reader<'a> {
        Reader { what }
    }

    /// The error for `value` at `path` where `expected` was wanted.
    pub fn wrong(self, path: &str, value: &Value, expected: &str) -> ProviderError {
        malformed(format!(
            "{}: {path} is {}, expected {expected}",
            self.what,
            describe(value)
        ))
    }

    /// `value` as `pick` reads it: `None` when absent or `null`, an error naming
    /// `path` and `expected` when `pick` finds no such value.
    fn read<'v, T>(
        self,
        value: Option<&'v Value>,
        path: impl FnOnce() -> String,
        expected: &str,
        pick: fn(&'v Value) -> Option<T>,
    ) -> Result<Option<T>, ProviderError> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match pick(v) {
                Some(t) => Ok(Some(t)),
                None => Err(self.wrong(&path(), v, expected)),
            },
        }
    }

    pub fn str(
        self,
        value: Option<&Value>,
        path: impl FnOnce() -> String,
    ) -> Result<Option<&str>, ProviderError> {
        self.read(value, path, "a string", Value::as_str)
    }

    /// A non-negative integer (an index, a token count).
    pub fn uint(
        self,
        value: Option<&Value>,
        path: impl FnOnce() -> String,
    ) -> Result<Option<u64>, ProviderError> {
        self.read(value, path, "a non-negative integer", Value::as_u64)
    }

    pub fn array(
        self,
        value: Option<&Value>,
        path: impl FnOnce() -> String,
    ) -> Result<Option<&Vec<Value>>, ProviderError> {
        self.read(value, path, "an array", Value::as_array)
    }

    /// The object `payload[key]`, or `null` when it is absent (its fields then read
    /// as absent).
    pub fn member<'v>(self, payload: &'v Value, key: &str) -> Result<&'v Value, ProviderError> {
        Ok(self
            .object(payload.get(key), || key.to_string())?
            .unwrap_or(&Value::Null))
    }

    /// The string `object[key]` (named `path.key` in errors), or `""` when absent.
    pub fn text<'v>(
        self,
        object: &'v Value,
        path: &str,
        key: &str,
    ) -> Result<&'v str, ProviderError> {
        Ok(self
            .str(object.get(key), || format!("{path}.{key}"))?
            .unwrap_or(""))
    }

    /// An object (returned as the value, to read its fields with `get`).
    pub fn object(
        self,
        value: Option<&Value>,
        path: impl FnOnce() -> String,
    ) -> Result<Option<&Value>, ProviderError> {
        self.read(value, path, "an object", |v| v.is_object().then_some(v))
    }
}

/// What a JSON value is, with a short excerpt: `a number (42)`, `a string ("x")`,
/// `an object ({"a":1})`.
pub fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_string(),
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let text = value.to_string();
    let mut excerpt: String = text.chars().take(60).collect();
    if excerpt.len() < text.len() {
        excerpt.push('…');
    }
    format!("{kind} ({excerpt})")
}

/// The mapper of a protocol whose events name their type in the payload (Anthropic
/// Messages, OpenAI Responses). Its [`StreamMapper`] reads each event's payload and
/// type (the payload's `type`, else the SSE `event:` type, else empty) and hands them
/// to [`on_typed`](TypedMapper::on_typed), which puts the events it maps in
/// [`events`](TypedMapper::events).
pub trait TypedMapper: Send {
    /// The protocol in errors, with its article: `an Anthropic` names the events `an
    /// Anthropic stream event` (one not read yet) and `an Anthropic message_delta event`.
    const EVENTS: &'static str;
    /// One event of type `kind`, `r` naming it in errors; `Ok(false)` for a type the
    /// mapper does not map: `error` (the API's error, which ends the stream) or one
    /// it does not know (passed over as `skipped`).
    fn on_typed(&mut self, kind: &str, payload: &Value, r: Reader) -> Result<bool, ProviderError>;
    /// Where `on_typed` puts the events it maps.
    fn events(&mut self) -> &mut Vec<StreamEvent>;
    /// The protocol's end marker arrived ([`StreamMapper::is_complete`]).
    fn ended(&self) -> bool;
}

impl<M: TypedMapper> StreamMapper for M {
    fn on_event(
        &mut self,
        event_type: Option<&str>,
        data: &str,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        let what = format!("{} stream event", M::EVENTS);
        let payload = parse_payload(data, &what)?;
        let kind = Reader::new(&what)
            .str(payload.get("type"), || "type".into())?
            .or(event_type)
            .unwrap_or("");
        let what = format!("{} {kind} event", M::EVENTS);
        let known = self.on_typed(kind, &payload, Reader::new(&what));
        let mut out = std::mem::take(self.events());
        if !known? {
            // An `error` event is the API's in-band error; any other is passed over.
            if kind == "error" {
                return Err(stream_error(&payload));
            }
            out.push(skipped(if kind.is_empty() { "(untyped)" } else { kind }));
        }
        Ok(out)
    }

    fn is_complete(&self) -> bool {
        self.ended()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use xcsh_machine::ProviderErrorKind;

    #[test]
    fn absent_and_null_are_none_and_wrong_types_are_named() {
        let r = Reader::new("a test payload");
        let v = json!({"s": "x", "n": 3, "neg": -1, "null": null, "a": [1], "o": {"k": 1}});
        assert_eq!(r.str(v.get("s"), || "s".into()), Ok(Some("x")));
        assert_eq!(r.str(v.get("missing"), || "missing".into()), Ok(None));
        assert_eq!(r.str(v.get("null"), || "null".into()), Ok(None));
        assert_eq!(r.uint(v.get("n"), || "n".into()), Ok(Some(3)));
        assert_eq!(
            r.array(v.get("a"), || "a".into()).map(|a| a.map(Vec::len)),
            Ok(Some(1))
        );
        assert!(r.object(v.get("o"), || "o".into()).unwrap().is_some());
        let err = r
            .uint(v.get("neg"), || "tool_calls[0].index".into())
            .unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::Malformed);
        assert_eq!(
            err.message,
            "a test payload: tool_calls[0].index is a number (-1), expected a non-negative integer"
        );
        assert_eq!(
            r.str(v.get("o"), || "o".into()).unwrap_err().message,
            "a test payload: o is an object ({\"k\":1}), expected a string"
        );
        assert_eq!(
            describe(&json!("y".repeat(100))),
            format!("a string (\"{}…)", "y".repeat(59))
        );
    }
}
