//! `plan {explanation?, items: [{text, status}]}`: the model writes its task plan
//! (SPEC.md §27). Read-only and never approval-gated; each call replaces the plan.
//! The checks and the types are the log's (`xcsh_log::plan`), because the fold, the
//! views and the journal use the same ones; a broken plan is an error result naming
//! what is wrong, and an ok result is the plan read back as a checklist.

use serde_json::{Value, json};

use super::ToolSpec;
use xcsh_log::plan::{MAX_EXPLANATION_CHARS, MAX_ITEMS, MAX_TEXT_CHARS, PLAN_TOOL, Plan};
use xcsh_machine::{ToolOutcome, ToolStatus};

pub const NAME: &str = PLAN_TOOL;

pub const DESCRIPTION: &str = "Write your plan for a task of several steps, as a checklist the \
user can see. Each call replaces the whole plan: send every item each time, each with a short \
text and a status (`pending`, `in_progress` or `completed`). Keep exactly one item \
`in_progress` while you work and mark items `completed` as soon as they are done; add, drop \
or reword items as you learn more. `explanation` says briefly why the plan changed. Not \
needed for a simple one-step request.";

/// The JSON schema of the arguments (the rules it cannot say are checked by
/// [`Plan::parse`]).
pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "explanation": {
                "type": "string",
                "maxLength": MAX_EXPLANATION_CHARS,
                "description": "Why the plan is what it is now (optional, one or two sentences)."
            },
            "items": {
                "type": "array",
                "maxItems": MAX_ITEMS,
                "description": "The whole plan, in order; at most one item in_progress.",
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": MAX_TEXT_CHARS,
                            "description": "The step, in a few words (one line)."
                        },
                        "status": {
                            "type": "string",
                            "enum": ["pending", "in_progress", "completed"],
                            "description": "Where the step is."
                        }
                    },
                    "required": ["text", "status"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["items"],
        "additionalProperties": false
    })
}

/// The tool's spec.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.to_owned(),
        description: DESCRIPTION.to_owned(),
        parameters: parameters(),
    }
}

/// Runs one `plan` call: the plan read back, or an error naming what is wrong.
pub fn run(arguments: &str) -> ToolOutcome {
    match Plan::parse(arguments) {
        Ok(plan) => ToolOutcome {
            status: ToolStatus::Ok,
            content: plan.tool_result(),
        },
        Err(e) => ToolOutcome {
            status: ToolStatus::Error,
            content: format!("invalid plan (the plan was not changed): {e}"),
        },
    }
}
