//! The tool-executor interface and the built-in test tools (`echo`, `sleep`). The
//! standard tools (read, write, edit, bash, …) implement the same trait.

pub mod testing;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::machine::{ToolCall, ToolOutcome};
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
}

/// The sentence every cancelled tool result carries.
pub const CANCELLED_NOTE: &str =
    "cancelled by the user; side effects it already had were not undone";
