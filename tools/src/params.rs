//! A tool's parameters, described once as data (`Param`): `schema` makes of them the
//! JSON schema the model is given and each call's arguments are validated against
//! (an object of exactly these properties). The typed `Args` of each tool then
//! deserialize arguments that passed it.

use serde_json::{Map, Value, json};

/// One parameter of a tool: its name, its JSON type with its bounds, whether it is
/// required, and what it is for (the model reads it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Param {
    name: &'static str,
    kind: Kind,
    required: bool,
    description: &'static str,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A string of at least `min_length` characters (0: any string).
    String {
        min_length: u64,
    },
    /// An integer from `minimum`, up to `maximum` when there is one.
    Integer {
        minimum: u64,
        maximum: Option<u64>,
    },
    Boolean,
}

impl Param {
    /// A non-empty string.
    pub(crate) const fn text(name: &'static str, description: &'static str) -> Param {
        Param::of(name, Kind::String { min_length: 1 }, description)
    }

    /// Any string, the empty one too.
    pub(crate) const fn string(name: &'static str, description: &'static str) -> Param {
        Param::of(name, Kind::String { min_length: 0 }, description)
    }

    /// An integer of at least `minimum`.
    pub(crate) const fn integer(
        name: &'static str,
        minimum: u64,
        description: &'static str,
    ) -> Param {
        let kind = Kind::Integer {
            minimum,
            maximum: None,
        };
        Param::of(name, kind, description)
    }

    pub(crate) const fn boolean(name: &'static str, description: &'static str) -> Param {
        Param::of(name, Kind::Boolean, description)
    }

    const fn of(name: &'static str, kind: Kind, description: &'static str) -> Param {
        Param {
            name,
            kind,
            required: false,
            description,
        }
    }

    /// This parameter, required.
    pub(crate) const fn required(self) -> Param {
        Param {
            required: true,
            ..self
        }
    }

    /// This integer, at most `maximum`.
    pub(crate) const fn at_most(self, maximum: u64) -> Param {
        let kind = match self.kind {
            Kind::Integer { minimum, .. } => Kind::Integer {
                minimum,
                maximum: Some(maximum),
            },
            other => other,
        };
        Param { kind, ..self }
    }

    fn schema(&self) -> Value {
        let mut schema = match self.kind {
            Kind::String { min_length: 0 } => json!({"type": "string"}),
            Kind::String { min_length } => json!({"type": "string", "minLength": min_length}),
            Kind::Integer { minimum, maximum } => {
                let mut schema = json!({"type": "integer", "minimum": minimum});
                if let Some(maximum) = maximum {
                    schema["maximum"] = json!(maximum);
                }
                schema
            }
            Kind::Boolean => json!({"type": "boolean"}),
        };
        schema["description"] = json!(self.description);
        schema
    }
}

/// The JSON schema of a tool taking `params`: an object of those properties and no
/// others, the required ones listed in order.
pub(crate) fn schema(params: &[Param]) -> Value {
    let properties: Map<String, Value> = params
        .iter()
        .map(|p| (p.name.to_owned(), p.schema()))
        .collect();
    let required: Vec<&str> = params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}
