//! One-pass deserialization of the two log types whose derived form would buffer
//! (`#[serde(flatten)]`): [`TimedEvent`] and [`ToolResultRecord`]. They take what the
//! derived forms take (fields in any order, unknown fields ignored, the same
//! missing-field errors); the writer's field order (`ms`, `kind` first) is read
//! without buffering, any other order through a `serde_json::Value`.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::{ChildRun, FileChange, TimedEvent, ToolResultRecord};
use xcsh_machine::{CallId, FinishReason, StreamEvent, ToolOutcome, ToolStatus, Usage};

/// Declares [`Fields`], the fields of any stream event as they come, and [`field`],
/// which reads one of them by its name (`reason` is a finish reason or a retry's
/// reason according to the event's kind).
macro_rules! fields {
    ($($name:ident: $ty:ty,)*) => {
        #[derive(Default)]
        struct Fields {
            /// A `finish` event's `reason`.
            finish: Option<FinishReason>,
            $($name: Option<$ty>,)*
        }

        /// Reads one field of an event whose kind is known.
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
                "reason" if kind == "finish" => once(&mut f.finish, map.next_value()?, "reason"),
                $(stringify!($name) => once(&mut f.$name, map.next_value()?, stringify!($name)),)*
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    Ok(())
                }
            };
            r.map_err(de::Error::custom)
        }
    };
}

fields! {
    text: String,
    signature: String,
    index: u32,
    id: CallId,
    name: String,
    arguments: String,
    usage: Usage,
    reason: String,
    attempt: u32,
    delay_ms: u64,
    event_type: String,
    data: String,
    max_output_tokens: u32,
    output_bytes: u64,
}

fn take<T, E: de::Error>(v: Option<T>, name: &'static str) -> Result<T, E> {
    v.ok_or_else(|| E::missing_field(name))
}

/// Builds the event of `kind` from its fields: each kind's variant and the slots of
/// [`Fields`] its fields come from.
macro_rules! events {
    ($kind:ident, $f:ident, $($name:literal => $variant:ident { $($field:ident: $slot:ident),* },)*) => {
        match $kind {
            $($name => StreamEvent::$variant { $($field: take($f.$slot, stringify!($field))?),* },)*
            other => return Err(E::unknown_variant(other, &StreamEvent::KINDS)),
        }
    };
}

fn event<E: de::Error>(kind: &str, f: Fields) -> Result<StreamEvent, E> {
    Ok(events! { kind, f,
        "text_delta" => TextDelta { text: text },
        "reasoning_delta" => ReasoningDelta { text: text },
        "reasoning_signature" => ReasoningSignature { signature: signature },
        "tool_call_start" => ToolCallStart { index: index, id: id, name: name },
        "tool_call_delta" => ToolCallDelta { index: index, arguments: arguments },
        "tool_call_end" => ToolCallEnd { index: index },
        "usage" => Usage { usage: usage },
        "finish" => Finish { reason: finish },
        "retrying" => Retrying { attempt: attempt, reason: reason, delay_ms: delay_ms },
        "skipped" => Skipped { event_type: event_type },
        "restarted" => Restarted { reason: reason },
        "reasoning_block_start" => ReasoningBlockStart {},
        "reasoning_redacted" => ReasoningRedacted { data: data },
        "output_limit_exceeded" => OutputLimitExceeded {
            max_output_tokens: max_output_tokens, output_bytes: output_bytes
        },
    })
}

/// A type read from a JSON map in one pass, by [`MapVisitor`].
trait FromMap: Sized {
    /// What a map of this type is, for serde's error messages.
    const EXPECTING: &'static str;

    fn from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

struct MapVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: FromMap> Visitor<'de> for MapVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
}

/// `Deserialize` for each type read by [`FromMap`] (the orphan rule forbids one
/// blanket impl).
macro_rules! deserialize_from_map {
    ($($ty:ty),*) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                d.deserialize_map(MapVisitor::<$ty>(std::marker::PhantomData))
            }
        }
    )*};
}

deserialize_from_map!(TimedEvent, ToolResultRecord);

impl FromMap for TimedEvent {
    const EXPECTING: &'static str = "a timed stream event";

    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<TimedEvent, A::Error> {
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

impl FromMap for ToolResultRecord {
    const EXPECTING: &'static str = "a tool result";

    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<ToolResultRecord, A::Error> {
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
