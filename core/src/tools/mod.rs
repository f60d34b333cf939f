//! The tool-executor interface and the built-in test tools (`echo`, `sleep`). The
//! standard tools (read, write, edit, bash, …) implement the same trait.

mod bash;
pub mod caps;
mod edit;
mod glob;
mod grep;
mod list;
mod read;
pub mod standard;
pub mod testing;
pub mod workspace;
mod write;

pub use standard::{StandardTools, ToolOptions, is_mutating};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::machine::{CallId, ToolCall, ToolOutcome};
use crate::provider::BoxFuture;

/// A tool as the model sees it: name, description and JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// Runs tool calls. `execute` resolves exactly once; when `cancel` fires it stops
/// the work and resolves with status `cancelled`, saying plainly that side effects
/// already had were not undone.
pub trait ToolExecutor: Send + Sync + 'static {
    fn specs(&self) -> Vec<ToolSpec>;
    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome>;
    /// The names of the tools that change the workspace; they go through the
    /// permission policy. Read-only tools never ask.
    fn mutating(&self) -> Vec<String> {
        Vec::new()
    }
    /// The files call `id` changed, taken once after it settled (the runtime records
    /// them in the call's `tool_result` entry).
    fn take_file_changes(&self, _id: &CallId) -> Vec<crate::log::FileChange> {
        Vec::new()
    }
}

/// The sentence every cancelled tool result carries.
pub const CANCELLED_NOTE: &str =
    "cancelled by the user; side effects it already had were not undone";
