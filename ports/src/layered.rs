//! An executor built on another: [`Layered`] offers an inner executor's tools as a
//! [`Layer`] changes them, runs the layer's own tools in the layer and hands every
//! other call to the inner executor as it came (the `task` tool, `memory_read` and a
//! sub-agent's subset of its parent's tools are layers).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use xcsh_log::ChildRun;
use xcsh_log::blobs::{BlobStore, Dispatch};
use xcsh_machine::{CallId, SandboxConfig, ToolCall, ToolOutcome, ToolStatus};

use crate::{BoxFuture, CallContext, ToolExecutor, ToolSpec};

/// What a [`Layered`] executor changes of its inner executor. Every method has a
/// default that changes nothing.
pub trait Layer: Send + Sync + 'static {
    /// The tools offered, from the inner executor's.
    fn specs(&self, inner: Vec<ToolSpec>) -> Vec<ToolSpec> {
        inner
    }
    /// Whether the calls of the tool `name` run in this layer ([`Layer::execute`])
    /// rather than in the inner executor.
    fn owns(&self, name: &str) -> bool {
        let _ = name;
        false
    }
    /// Runs `call`, of a tool this layer owns. The default (for a layer that owns
    /// no tool) says there is no such tool.
    fn execute(&self, call: ToolCall, context: CallContext) -> BoxFuture<ToolOutcome> {
        let _ = context;
        let content = format!("error: no tool named `{}`", call.name);
        Box::pin(async move {
            ToolOutcome {
                status: ToolStatus::Error,
                content,
            }
        })
    }
    /// The mutating tools, from the inner executor's.
    fn mutating(&self, inner: Vec<String>) -> Vec<String> {
        inner
    }
    /// The sandbox, from the inner executor's.
    fn sandbox(&self, inner: Option<SandboxConfig>) -> Option<SandboxConfig> {
        inner
    }
    /// The sub-agent run call `id` started, if this layer ran the call (for any
    /// other call the inner executor's is taken).
    fn take_child_run(&self, id: &CallId) -> Option<ChildRun> {
        let _ = id;
        None
    }
}

/// The executor `inner` as `layer` changes it.
pub struct Layered<L> {
    inner: Arc<dyn ToolExecutor>,
    layer: L,
}

impl<L: Layer> Layered<L> {
    pub fn new(inner: Arc<dyn ToolExecutor>, layer: L) -> Layered<L> {
        Layered { inner, layer }
    }
}

impl<L: Layer> ToolExecutor for Layered<L> {
    fn specs(&self) -> Vec<ToolSpec> {
        self.layer.specs(self.inner.specs())
    }

    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        if self.layer.owns(&call.name) {
            return self.layer.execute(call, CallContext::new(cancel));
        }
        self.inner.execute(call, cancel)
    }

    fn execute_with(&self, call: ToolCall, context: CallContext) -> BoxFuture<ToolOutcome> {
        if self.layer.owns(&call.name) {
            return self.layer.execute(call, context);
        }
        self.inner.execute_with(call, context)
    }

    /// A layer's own tools start once durable; the inner executor's say for theirs.
    fn starts_gated(&self, call: &ToolCall) -> bool {
        !self.layer.owns(&call.name) && self.inner.starts_gated(call)
    }

    /// A layer's own tools are not checked; the inner executor checks its own.
    fn check(&self, call: &ToolCall) -> Option<String> {
        if self.layer.owns(&call.name) {
            return None;
        }
        self.inner.check(call)
    }

    fn mutating(&self) -> Vec<String> {
        self.layer.mutating(self.inner.mutating())
    }

    fn take_file_changes(&self, id: &CallId) -> Vec<xcsh_log::FileChange> {
        self.inner.take_file_changes(id)
    }

    fn take_child_run(&self, id: &CallId) -> Option<ChildRun> {
        self.layer
            .take_child_run(id)
            .or_else(|| self.inner.take_child_run(id))
    }

    fn results_durable(&self, dispatches: &[Dispatch]) {
        self.inner.results_durable(dispatches);
    }

    fn before_images(&self) -> Option<BlobStore> {
        self.inner.before_images()
    }

    fn sandbox(&self) -> Option<SandboxConfig> {
        self.layer.sandbox(self.inner.sandbox())
    }
}
