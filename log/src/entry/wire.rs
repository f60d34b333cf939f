//! The one-pass decoding of a line: a map visitor over the envelope that, on reaching
//! `data`, deserializes the body straight into the type its `type` names (the derived
//! adjacently tagged `Record` or `Decision`, fed a two-key map of the tag and the
//! borrowed content), so that no line is parsed twice and nothing is buffered.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{
    self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor, value::StrDeserializer,
};
use serde::{Deserialize, forward_to_deserialize_any};
use serde_json::value::RawValue;

use super::{Body, Record};
use xcsh_machine::{Decision, EntryId};

/// The envelope and body of a line (the hash is read positionally).
pub(super) struct Parts<'a> {
    pub v: u32,
    pub id: EntryId,
    pub parent: Option<EntryId>,
    pub ts: Cow<'a, str>,
    pub body: Body,
}

#[derive(Clone, Copy)]
enum Kind {
    Record,
    Decision,
    Unknown,
}

fn kind(name: &str) -> Kind {
    if Decision::TYPE_NAMES.contains(&name) {
        Kind::Decision
    } else if Record::TYPE_NAMES.contains(&name) {
        Kind::Record
    } else {
        Kind::Unknown
    }
}

enum Key {
    V,
    Id,
    Parent,
    Ts,
    Type,
    Data,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an entry field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "v" => Key::V,
                    "id" => Key::Id,
                    "parent" => Key::Parent,
                    "ts" => Key::Ts,
                    "type" => Key::Type,
                    "data" => Key::Data,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

/// The body of type `name` from `data`.
fn read_body<'de, A: MapAccess<'de>>(name: &str, map: &mut A) -> Result<Body, A::Error> {
    Ok(match kind(name) {
        Kind::Decision => Body::Decision(map.next_value_seed(Tagged::<Decision>::new(name))?),
        Kind::Record => Body::Record(map.next_value_seed(Tagged::<Record>::new(name))?),
        Kind::Unknown => Body::Unknown {
            type_name: name.to_string(),
            data: map.next_value::<Box<RawValue>>()?,
        },
    })
}

/// The same, from `data` read earlier as raw JSON (a line with `data` before
/// `type`, which this writer never writes but a reader takes).
fn body_from_raw<E: de::Error>(name: &str, raw: &RawValue) -> Result<Body, E> {
    let text = raw.get();
    let mut d = serde_json::Deserializer::from_str(text);
    let result = match kind(name) {
        Kind::Decision => Tagged::<Decision>::new(name)
            .deserialize(&mut d)
            .map(Body::Decision),
        Kind::Record => Tagged::<Record>::new(name)
            .deserialize(&mut d)
            .map(Body::Record),
        Kind::Unknown => {
            return Ok(Body::Unknown {
                type_name: name.to_string(),
                data: raw.to_owned(),
            });
        }
    };
    result.map_err(E::custom)
}

impl<'de> Deserialize<'de> for Parts<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Parts<'de>, D::Error> {
        d.deserialize_map(PartsVisitor)
    }
}

struct PartsVisitor;

impl<'de> Visitor<'de> for PartsVisitor {
    type Value = Parts<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an entry")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts<'de>, A::Error> {
        let mut v = None;
        let mut id = None;
        let mut parent = None;
        let mut ts: Option<Cow<'de, str>> = None;
        let mut type_name: Option<Cow<'de, str>> = None;
        let mut body = None;
        let mut early: Option<&'de RawValue> = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::V if v.is_none() => v = Some(map.next_value()?),
                Key::Id if id.is_none() => id = Some(map.next_value()?),
                Key::Parent if parent.is_none() => {
                    parent = Some(map.next_value::<Option<EntryId>>()?)
                }
                Key::Ts if ts.is_none() => ts = Some(map.next_value()?),
                Key::Type if type_name.is_none() => type_name = Some(map.next_value()?),
                Key::Data if body.is_none() && early.is_none() => match &type_name {
                    Some(name) => body = Some(read_body(name, &mut map)?),
                    None => early = Some(map.next_value()?),
                },
                Key::V => return Err(de::Error::duplicate_field("v")),
                Key::Id => return Err(de::Error::duplicate_field("id")),
                Key::Parent => return Err(de::Error::duplicate_field("parent")),
                Key::Ts => return Err(de::Error::duplicate_field("ts")),
                Key::Type => return Err(de::Error::duplicate_field("type")),
                Key::Data => return Err(de::Error::duplicate_field("data")),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let v = v.ok_or_else(|| de::Error::missing_field("v"))?;
        let id = id.ok_or_else(|| de::Error::missing_field("id"))?;
        let ts = ts.ok_or_else(|| de::Error::missing_field("ts"))?;
        let name = type_name.ok_or_else(|| de::Error::missing_field("type"))?;
        let body = match (body, early) {
            (Some(b), _) => b,
            (None, Some(raw)) => body_from_raw(&name, raw)?,
            (None, None) => return Err(de::Error::missing_field("data")),
        };
        Ok(Parts {
            v,
            id,
            parent: parent.flatten(),
            ts,
            body,
        })
    }
}

/// Deserializes an adjacently tagged `T` whose tag is known (`name`) from the
/// content alone.
struct Tagged<'n, T> {
    name: &'n str,
    _t: PhantomData<T>,
}

impl<'n, T> Tagged<'n, T> {
    fn new(name: &'n str) -> Self {
        Tagged {
            name,
            _t: PhantomData,
        }
    }
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Tagged<'_, T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        T::deserialize(TagAndContent {
            name: self.name,
            content: d,
        })
    }
}

/// A deserializer that presents `{"type": name, "data": <content>}`.
struct TagAndContent<'n, D> {
    name: &'n str,
    content: D,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for TagAndContent<'_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        visitor.visit_map(TagMap {
            name: self.name,
            content: Some(self.content),
            state: 0,
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct TagMap<'n, D> {
    name: &'n str,
    content: Option<D>,
    /// 0: the `type` key is next; 1: its value; 2: the `data` key; 3: its
    /// value; 4: done.
    state: u8,
}

impl<'de, D: Deserializer<'de>> MapAccess<'de> for TagMap<'_, D> {
    type Error = D::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, D::Error> {
        let key = match self.state {
            0 => "type",
            2 => "data",
            _ => return Ok(None),
        };
        self.state += 1;
        seed.deserialize(StrDeserializer::<D::Error>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, D::Error> {
        match (self.state, self.content.take()) {
            (1, content) => {
                self.content = content;
                self.state = 2;
                seed.deserialize(StrDeserializer::<D::Error>::new(self.name))
            }
            (3, Some(content)) => {
                self.state = 4;
                seed.deserialize(content)
            }
            _ => Err(de::Error::custom("entry body read out of order")),
        }
    }
}
