//! The `task` tool as the model sees it (its spec) and its arguments, checked in
//! xcsh's own words: a wrong call is an error result naming what is wrong.

use serde_json::{Value, json};

use xcsh_machine::TASK_TOOL;
use xcsh_tools::ToolSpec;

/// What the tool tells the model (after Claude Code's Task tool).
const DESCRIPTION: &str = "Start a sub-agent: a separate run, with a fresh context, that works on `prompt` with a subset of your tools and returns its final message to you (only that message: not its tool calls). Use it for self-contained work whose details you do not need to see, such as a search across many files. Several `task` calls in one response run at the same time. The sub-agent knows only what `prompt` says: give it everything it needs, and say what its final message must contain. By default it has the read-only tools; name `tools` to give it others (a sub-agent that may change files needs the user's approval).";

/// The `task` tool's spec (what `--show-context` shows of it).
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: TASK_TOOL.into(),
        description: DESCRIPTION.into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "minLength": 1,
                    "description": "A short label of the task (3 to 5 words), shown to the user."
                },
                "prompt": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The task, complete: the sub-agent sees nothing else."
                },
                "tools": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The tools the sub-agent may use, among yours (default: the read-only ones)."
                },
                "max_steps": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "At most this many model steps (default and cap: half of the steps you have left)."
                }
            },
            "required": ["description", "prompt"],
            "additionalProperties": false
        }),
    }
}

/// A `task` call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskArgs {
    pub description: String,
    pub prompt: String,
    /// `None`: the default set.
    pub tools: Option<Vec<String>>,
    pub max_steps: Option<u32>,
}

/// Reads the arguments of a `task` call; the error says what is wrong.
pub(crate) fn parse(arguments: &str) -> Result<TaskArgs, String> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else {
        return Err("they are not a JSON object".into());
    };
    if let Some(key) = map
        .keys()
        .find(|k| !["description", "prompt", "tools", "max_steps"].contains(&k.as_str()))
    {
        return Err(format!(
            "there is no parameter `{key}` (the parameters are description, prompt, tools, max_steps)"
        ));
    }
    let text_of = |name: &str| match map.get(name) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("`{name}` is empty")),
        Some(_) => Err(format!("`{name}` must be a string")),
        None => Err(format!("`{name}` is missing")),
    };
    let description = text_of("description")?;
    let prompt = text_of("prompt")?;
    let tools = match map.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::Array(names)) => Some(
            names
                .iter()
                .map(|n| n.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or("`tools` must be a list of tool names")?,
        ),
        Some(_) => return Err("`tools` must be a list of tool names".into()),
    };
    let max_steps = match map.get("max_steps") {
        None | Some(Value::Null) => None,
        Some(n) => Some(
            n.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|&n| n >= 1)
                .ok_or("`max_steps` must be a whole number of at least 1")?,
        ),
    };
    Ok(TaskArgs {
        description,
        prompt,
        tools,
        max_steps,
    })
}

/// The sub-agent's tools: `asked` (each one the parent has, never `task`), else the
/// parent's tools that are not mutating, `task` aside (SPEC.md §29.1).
pub(crate) fn child_tools(
    asked: Option<&[String]>,
    parent: &[String],
    mutating: &[String],
) -> Result<Vec<String>, String> {
    let Some(asked) = asked else {
        return Ok(parent
            .iter()
            .filter(|t| *t != TASK_TOOL && !mutating.contains(t))
            .cloned()
            .collect());
    };
    let mut tools: Vec<String> = Vec::new();
    for name in asked {
        if name == TASK_TOOL {
            return Err(
                "a sub-agent cannot start sub-agents of its own (`task` in `tools`)".into(),
            );
        }
        if !parent.contains(name) {
            let have: Vec<&str> = parent
                .iter()
                .map(String::as_str)
                .filter(|t| *t != TASK_TOOL)
                .collect();
            return Err(format!(
                "there is no tool `{name}` to give the sub-agent (the tools are: {})",
                have.join(", ")
            ));
        }
        if !tools.contains(name) {
            tools.push(name.clone());
        }
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_read_and_a_wrong_one_is_named() {
        assert_eq!(
            parse(
                r#"{"description":"find uses","prompt":"grep for x","tools":["grep"],"max_steps":3}"#
            ),
            Ok(TaskArgs {
                description: "find uses".into(),
                prompt: "grep for x".into(),
                tools: Some(vec!["grep".into()]),
                max_steps: Some(3),
            })
        );
        let wrong = [
            (r#"[1]"#, "they are not a JSON object"),
            (r#"{"prompt":"p"}"#, "`description` is missing"),
            (r#"{"description":"d","prompt":" "}"#, "`prompt` is empty"),
            (
                r#"{"description":"d","prompt":"p","tools":"read"}"#,
                "`tools` must be a list of tool names",
            ),
            (
                r#"{"description":"d","prompt":"p","max_steps":0}"#,
                "`max_steps` must be a whole number of at least 1",
            ),
            (
                r#"{"description":"d","prompt":"p","model":"x"}"#,
                "there is no parameter `model` (the parameters are description, prompt, tools, max_steps)",
            ),
        ];
        for (arguments, error) in wrong {
            assert_eq!(parse(arguments), Err(error.to_string()), "{arguments}");
        }
    }

    #[test]
    fn the_default_tools_are_the_parents_read_only_ones_and_asked_ones_must_exist() {
        let parent: Vec<String> = ["read", "grep", "edit", "bash", "plan", "task"]
            .map(String::from)
            .to_vec();
        let mutating: Vec<String> = ["edit", "bash"].map(String::from).to_vec();
        assert_eq!(
            child_tools(None, &parent, &mutating),
            Ok(["read", "grep", "plan"].map(String::from).to_vec())
        );
        let asked = ["bash".to_string(), "read".into(), "bash".into()];
        assert_eq!(
            child_tools(Some(&asked), &parent, &mutating),
            Ok(["bash", "read"].map(String::from).to_vec())
        );
        assert_eq!(
            child_tools(Some(&["write".to_string()]), &parent, &mutating),
            Err("there is no tool `write` to give the sub-agent (the tools are: read, grep, edit, bash, plan)".into())
        );
        assert_eq!(
            child_tools(Some(&["task".to_string()]), &parent, &mutating),
            Err("a sub-agent cannot start sub-agents of its own (`task` in `tools`)".into())
        );
    }
}
