//! A tool call's arguments read for display (the seven standard tools' schemas, in
//! `xcsh_tools`), and the one implementation of what an `edit` does to a
//! file's text, shared by the approval preview and the finished card.

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// A call's arguments as the UI shows them. Arguments that do not parse (not JSON,
/// a missing or mistyped field) are [`ToolArgs::Other`], shown raw: never an error.
/// Read from the arguments' object tagged with the tool's name (`tool`); a missing
/// or `null` optional field is `None`, a missing or `null` flag `false`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "tool", rename_all = "lowercase")]
pub enum ToolArgs {
    Bash {
        command: String,
        timeout_ms: Option<u64>,
    },
    Edit {
        path: String,
        old_string: String,
        new_string: String,
        #[serde(default, deserialize_with = "flag")]
        replace_all: bool,
    },
    Write {
        path: String,
        content: String,
    },
    Read {
        path: String,
        offset: Option<u64>,
        limit: Option<u64>,
    },
    List {
        path: Option<String>,
        #[serde(default, deserialize_with = "flag")]
        recursive: bool,
    },
    Grep {
        pattern: String,
        path: Option<String>,
        glob: Option<String>,
    },
    Glob {
        pattern: String,
        path: Option<String>,
    },
    /// An unknown tool, or arguments that do not fit the tool's schema: the text
    /// as the model wrote it, compacted when it is a JSON value.
    #[serde(skip)]
    Other {
        compact: String,
    },
}

/// A flag: `false` when `null` (or, with `default`, missing).
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(false))
}

impl ToolArgs {
    /// Reads `arguments` (the JSON text the model produced) for the tool `name`.
    pub fn parse(name: &str, arguments: &str) -> ToolArgs {
        let value: Option<Value> = serde_json::from_str(arguments).ok();
        let parsed = value
            .as_ref()
            .and_then(Value::as_object)
            .and_then(|o| Self::from_object(name, o));
        match parsed {
            Some(args) => args,
            None => ToolArgs::Other {
                compact: match value {
                    Some(v) => v.to_string(),
                    None => arguments.trim().to_owned(),
                },
            },
        }
    }

    fn from_object(name: &str, o: &Map<String, Value>) -> Option<ToolArgs> {
        let mut tagged = o.clone();
        tagged.insert("tool".into(), name.into());
        ToolArgs::deserialize(Value::Object(tagged)).ok()
    }

    /// The file an `edit` or `write` changes.
    pub fn changed_path(&self) -> Option<&str> {
        match self {
            ToolArgs::Edit { path, .. } | ToolArgs::Write { path, .. } => Some(path),
            ToolArgs::Bash { .. }
            | ToolArgs::Read { .. }
            | ToolArgs::List { .. }
            | ToolArgs::Grep { .. }
            | ToolArgs::Glob { .. }
            | ToolArgs::Other { .. } => None,
        }
    }

    /// `read`'s range as `10-30`, `10-` (from line 10 on) or `1-20`; `None` for the
    /// whole file.
    pub fn read_range(offset: Option<u64>, limit: Option<u64>) -> Option<String> {
        match (offset, limit) {
            (None, None) => None,
            (start, Some(limit)) => {
                let start = start.unwrap_or(1).max(1);
                Some(format!(
                    "{start}-{}",
                    start.saturating_add(limit.max(1) - 1)
                ))
            }
            (Some(start), None) => Some(format!("{start}-")),
        }
    }
}

/// Why an `edit` cannot apply to a file's text (the tool would refuse it too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditProblem {
    /// `old_string` and `new_string` are the same.
    Identical,
    /// `old_string` does not occur.
    NotFound,
    /// `old_string` occurs `count` times and `replace_all` is off.
    Ambiguous { count: usize },
}

impl EditProblem {
    /// What the tool would say, in a few words.
    pub fn describe(&self) -> String {
        match self {
            EditProblem::Identical => "old_string and new_string are identical".to_owned(),
            EditProblem::NotFound => "old_string is not in the file".to_owned(),
            EditProblem::Ambiguous { count } => {
                format!("old_string occurs {count} times (replace_all is off)")
            }
        }
    }
}

/// The text `current` becomes after the edit: the same rules as the `edit` tool
/// (`tools/src/edit.rs`): one exact occurrence, or every one with
/// `replace_all`.
pub fn apply_edit(
    current: &str,
    old_string: &str,
    new_string: &str,
    replace_all: bool,
) -> Result<String, EditProblem> {
    if old_string == new_string {
        return Err(EditProblem::Identical);
    }
    let count = current.matches(old_string).count();
    if count == 0 || old_string.is_empty() {
        return Err(EditProblem::NotFound);
    }
    if count > 1 && !replace_all {
        return Err(EditProblem::Ambiguous { count });
    }
    Ok(if replace_all {
        current.replace(old_string, new_string)
    } else {
        current.replacen(old_string, new_string, 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_standard_tools_arguments_parse_and_bad_ones_stay_raw() {
        assert_eq!(
            ToolArgs::parse("read", r#"{"path":"src/lib.rs","offset":10,"limit":21}"#),
            ToolArgs::Read {
                path: "src/lib.rs".into(),
                offset: Some(10),
                limit: Some(21)
            }
        );
        assert_eq!(
            ToolArgs::parse("list", "{}"),
            ToolArgs::List {
                path: None,
                recursive: false
            }
        );
        assert_eq!(
            ToolArgs::parse("read", r#"{"path": 3}"#),
            ToolArgs::Other {
                compact: r#"{"path":3}"#.into()
            }
        );
        assert_eq!(
            ToolArgs::parse("bash", "{not json"),
            ToolArgs::Other {
                compact: "{not json".into()
            }
        );
        assert_eq!(
            ToolArgs::parse("deploy", r#"{ "to" : "prod" }"#),
            ToolArgs::Other {
                compact: r#"{"to":"prod"}"#.into()
            }
        );
    }

    #[test]
    fn a_read_range_names_first_and_last_line() {
        assert_eq!(
            ToolArgs::read_range(Some(10), Some(21)).as_deref(),
            Some("10-30")
        );
        assert_eq!(ToolArgs::read_range(Some(10), None).as_deref(), Some("10-"));
        assert_eq!(
            ToolArgs::read_range(None, Some(20)).as_deref(),
            Some("1-20")
        );
        assert_eq!(ToolArgs::read_range(None, None), None);
    }

    #[test]
    fn an_edit_applies_as_the_tool_applies_it() {
        assert_eq!(apply_edit("a b a", "b", "c", false), Ok("a c a".into()));
        assert_eq!(
            apply_edit("a b a", "a", "c", false),
            Err(EditProblem::Ambiguous { count: 2 })
        );
        assert_eq!(apply_edit("a b a", "a", "c", true), Ok("c b c".into()));
        assert_eq!(apply_edit("a", "x", "y", false), Err(EditProblem::NotFound));
        assert_eq!(
            apply_edit("a", "a", "a", false),
            Err(EditProblem::Identical)
        );
    }
}
