//! A tool call's arguments checked before the call runs, the same way for every
//! executor (the standard tools, MCP servers' tools): parsed as JSON (empty text is
//! `{}`) and validated against the tool's JSON schema, every violation named by its
//! JSON pointer.

use serde_json::Value;

/// A tool's argument schema, compiled once.
pub struct ArgumentSchema {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for ArgumentSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentSchema").finish_non_exhaustive()
    }
}

impl ArgumentSchema {
    /// Compiles `schema`; the error says why it is not a usable JSON schema.
    pub fn new(schema: &Value) -> Result<ArgumentSchema, String> {
        jsonschema::validator_for(schema)
            .map(|validator| ArgumentSchema { validator })
            .map_err(|e| e.to_string())
    }

    /// Every violation of the tool `name`'s schema by `value`, sorted, with its JSON
    /// pointer, as the message of the error result (the call is not run), or nothing.
    pub fn validate(&self, name: &str, value: &Value) -> Result<(), String> {
        let mut violations: Vec<(String, String)> = self
            .validator
            .iter_errors(value)
            .map(|e| (e.instance_path().as_str().to_owned(), e.to_string()))
            .collect();
        if violations.is_empty() {
            return Ok(());
        }
        violations.sort();
        violations.dedup();
        let mut message = format!("invalid arguments for `{name}` (the call was not run):");
        for (pointer, violation) in violations {
            if pointer.is_empty() {
                message.push_str(&format!("\n- at \"\" (the arguments object): {violation}"));
            } else {
                message.push_str(&format!("\n- at \"{pointer}\": {violation}"));
            }
        }
        Err(message)
    }
}

/// The arguments of a call of the tool `name` as JSON (empty text counts as `{}`,
/// as some providers send it for calls without arguments).
pub fn parse(name: &str, text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(text).map_err(|_| {
        let why = xcsh_machine::not_an_object(text).unwrap_or("they are not valid JSON");
        format!("invalid arguments for `{name}` (the call was not run): {why}")
    })
}
