//! One-pass deserialization of the two log types whose derived form would buffer
//! (`#[serde(flatten)]`): [`TimedEvent`] and [`ToolResultRecord`]. They take what the
//! derived forms take (fields in any order, unknown fields ignored, the same
//! missing-field errors); the writer's field order (`ms`, `kind` first) is read
//! without buffering, any other order through a `serde_json::Value`.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::{ChildRun, FileChange, TimedEvent, ToolResultRecord};
use xcsh_machine::{CallId, FinishReason, StreamEvent, ToolOutcome, ToolStatus, Usage};

/// The fields of any stream event, as they come.
#[derive(Default)]
struct Fields {
    text: Option<String>,
    signature: Option<String>,
    index: Option<u32>,
    id: Option<CallId>,
    name: Option<String>,
    arguments: Option<String>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
    reason: Option<String>,
    attempt: Option<u32>,
    delay_ms: Option<u64>,
    event_type: Option<String>,
    data: Option<String>,
    max_output_tokens: Option<u32>,
    output_bytes: Option<u64>,
}

fn take<T, E: de::Error>(v: Option<T>, name: &'static str) -> Result<T, E> {
    v.ok_or_else(|| E::missing_field(name))
}

fn event<E: de::Error>(kind: &str, f: Fields) -> Result<StreamEvent, E> {
    Ok(match kind {
        "text_delta" => StreamEvent::TextDelta {
            text: take(f.text, "text")?,
        },
        "reasoning_delta" => StreamEvent::ReasoningDelta {
            text: take(f.text, "text")?,
        },
        "reasoning_signature" => StreamEvent::ReasoningSignature {
            signature: take(f.signature, "signature")?,
        },
        "tool_call_start" => StreamEvent::ToolCallStart {
            index: take(f.index, "index")?,
            id: take(f.id, "id")?,
            name: take(f.name, "name")?,
        },
        "tool_call_delta" => StreamEvent::ToolCallDelta {
            index: take(f.index, "index")?,
            arguments: take(f.arguments, "arguments")?,
        },
        "tool_call_end" => StreamEvent::ToolCallEnd {
            index: take(f.index, "index")?,
        },
        "usage" => StreamEvent::Usage {
            usage: take(f.usage, "usage")?,
        },
        "finish" => StreamEvent::Finish {
            reason: take(f.finish, "reason")?,
        },
        "retrying" => StreamEvent::Retrying {
            attempt: take(f.attempt, "attempt")?,
            reason: take(f.reason, "reason")?,
            delay_ms: take(f.delay_ms, "delay_ms")?,
        },
        "skipped" => StreamEvent::Skipped {
            event_type: take(f.event_type, "event_type")?,
        },
        "restarted" => StreamEvent::Restarted {
            reason: take(f.reason, "reason")?,
        },
        "reasoning_block_start" => StreamEvent::ReasoningBlockStart {},
        "reasoning_redacted" => StreamEvent::ReasoningRedacted {
            data: take(f.data, "data")?,
        },
        "output_limit_exceeded" => StreamEvent::OutputLimitExceeded {
            max_output_tokens: take(f.max_output_tokens, "max_output_tokens")?,
            output_bytes: take(f.output_bytes, "output_bytes")?,
        },
        other => {
            return Err(E::unknown_variant(other, &StreamEvent::KINDS));
        }
    })
}

/// Reads one field of an event whose kind is known (`reason` is a finish reason
/// or a retry's reason according to it).
fn field<'de, A: MapAccess<'de>>(
    map: &mut A,
    key: &str,
    kind: &str,
    f: &mut Fields,
) -> Result<(), A::Error> {
    fn once<T>(slot: &mut Option<T>, v: T, name: &'static str) -> Result<(), String> {
        if slot.is_some() {
            return Err(format!("duplicate field `{name}`"));
        }
        *slot = Some(v);
        Ok(())
    }
    let r = match key {
        "text" => once(&mut f.text, map.next_value()?, "text"),
        "signature" => once(&mut f.signature, map.next_value()?, "signature"),
        "index" => once(&mut f.index, map.next_value()?, "index"),
        "id" => once(&mut f.id, map.next_value()?, "id"),
        "name" => once(&mut f.name, map.next_value()?, "name"),
        "arguments" => once(&mut f.arguments, map.next_value()?, "arguments"),
        "usage" => once(&mut f.usage, map.next_value()?, "usage"),
        "reason" if kind == "finish" => once(&mut f.finish, map.next_value()?, "reason"),
        "reason" => once(&mut f.reason, map.next_value()?, "reason"),
        "attempt" => once(&mut f.attempt, map.next_value()?, "attempt"),
        "delay_ms" => once(&mut f.delay_ms, map.next_value()?, "delay_ms"),
        "event_type" => once(&mut f.event_type, map.next_value()?, "event_type"),
        "data" => once(&mut f.data, map.next_value()?, "data"),
        "max_output_tokens" => once(
            &mut f.max_output_tokens,
            map.next_value()?,
            "max_output_tokens",
        ),
        "output_bytes" => once(&mut f.output_bytes, map.next_value()?, "output_bytes"),
        _ => {
            map.next_value::<IgnoredAny>()?;
            Ok(())
        }
    };
    r.map_err(de::Error::custom)
}

impl<'de> Deserialize<'de> for TimedEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TimedEvent, D::Error> {
        d.deserialize_map(TimedEventVisitor)
    }
}

struct TimedEventVisitor;

impl<'de> Visitor<'de> for TimedEventVisitor {
    type Value = TimedEvent;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a timed stream event")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TimedEvent, A::Error> {
        let mut ms: Option<u64> = None;
        let mut kind: Option<String> = None;
        let mut fields = Fields::default();
        // A field before `kind` (not the writer's order): every field is kept as
        // a JSON value and the event converted from them at the end.
        let mut values: Option<serde_json::Map<String, serde_json::Value>> = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match (key.as_ref(), &kind, &mut values) {
                ("ms", _, _) if ms.is_none() => ms = Some(map.next_value()?),
                ("ms", _, _) => return Err(de::Error::duplicate_field("ms")),
                ("kind", Some(_), _) => return Err(de::Error::duplicate_field("kind")),
                ("kind", None, _) => kind = Some(map.next_value()?),
                (k, _, Some(values)) => {
                    values.insert(k.to_string(), map.next_value()?);
                }
                (k, Some(kind), None) => field(&mut map, k, kind, &mut fields)?,
                (k, None, None) => {
                    let mut first = serde_json::Map::new();
                    first.insert(k.to_string(), map.next_value()?);
                    values = Some(first);
                }
            }
        }
        let ms = ms.ok_or_else(|| de::Error::missing_field("ms"))?;
        let kind = kind.ok_or_else(|| de::Error::missing_field("kind"))?;
        let event = match values {
            Some(mut values) => {
                values.insert("kind".into(), kind.into());
                serde_json::from_value(serde_json::Value::Object(values))
                    .map_err(de::Error::custom)?
            }
            None => event(&kind, fields)?,
        };
        Ok(TimedEvent { ms, event })
    }
}

impl<'de> Deserialize<'de> for ToolResultRecord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ToolResultRecord, D::Error> {
        d.deserialize_map(ToolResultVisitor)
    }
}

struct ToolResultVisitor;

impl<'de> Visitor<'de> for ToolResultVisitor {
    type Value = ToolResultRecord;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tool result")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolResultRecord, A::Error> {
        let mut call_id: Option<CallId> = None;
        let mut name: Option<String> = None;
        let mut status: Option<ToolStatus> = None;
        let mut content: Option<String> = None;
        let mut duration_ms: Option<u64> = None;
        let mut changes: Option<Vec<FileChange>> = None;
        let mut child: Option<ChildRun> = None;
        macro_rules! once {
            ($slot:ident, $name:literal) => {{
                if $slot.is_some() {
                    return Err(de::Error::duplicate_field($name));
                }
                $slot = Some(map.next_value()?);
            }};
        }
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "call_id" => once!(call_id, "call_id"),
                "name" => once!(name, "name"),
                "status" => once!(status, "status"),
                "content" => once!(content, "content"),
                "duration_ms" => once!(duration_ms, "duration_ms"),
                "changes" => once!(changes, "changes"),
                "child" => once!(child, "child"),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(ToolResultRecord {
            call_id: take(call_id, "call_id")?,
            name: take(name, "name")?,
            outcome: ToolOutcome {
                status: take(status, "status")?,
                content: take(content, "content")?,
            },
            duration_ms: take(duration_ms, "duration_ms")?,
            changes: changes.unwrap_or_default(),
            child,
        })
    }
}
