//! The tool results every executor (the standard tools, MCP servers) hands back the
//! same way: a failure that says why, and a call the user cancelled.

use xcsh_machine::{ToolOutcome, ToolStatus};

use crate::CANCELLED_NOTE;

/// A failed call's result: `content` says why.
pub fn error(content: String) -> ToolOutcome {
    ToolOutcome {
        status: ToolStatus::Error,
        content,
    }
}

/// The result of a call to `tool` that the user cancelled (`read cancelled by the
/// user; …`).
pub fn cancelled(tool: &str) -> ToolOutcome {
    ToolOutcome {
        status: ToolStatus::Cancelled,
        content: format!("{tool} {CANCELLED_NOTE}"),
    }
}
