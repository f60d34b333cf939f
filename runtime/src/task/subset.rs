//! What a sub-agent runs with: a subset of its parent's tools (the same executor,
//! offering fewer), and its parent's provider, its requests tagged with the agent's
//! name (`Provider::stream_as`, which the faux provider serves a family by).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use xcsh_log::blobs::{BlobStore, Dispatch};
use xcsh_machine::{CallId, ProviderError, SandboxConfig, ToolCall, ToolOutcome};
use xcsh_providers::{BoxFuture, ModelRequest, Provider, StreamSink};
use xcsh_tools::{ToolExecutor, ToolProgress, ToolSpec};

/// The parent's executor, offering only `names` (the machine rejects any other
/// name before a call reaches it).
pub(crate) struct Subset {
    inner: Arc<dyn ToolExecutor>,
    names: Vec<String>,
}

impl Subset {
    pub(crate) fn new(inner: Arc<dyn ToolExecutor>, names: Vec<String>) -> Subset {
        Subset { inner, names }
    }
}

impl ToolExecutor for Subset {
    fn specs(&self) -> Vec<ToolSpec> {
        self.inner
            .specs()
            .into_iter()
            .filter(|s| self.names.contains(&s.name))
            .collect()
    }

    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        self.inner.execute(call, cancel)
    }

    fn execute_with_progress(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        progress: ToolProgress,
    ) -> BoxFuture<ToolOutcome> {
        self.inner.execute_with_progress(call, cancel, progress)
    }

    fn mutating(&self) -> Vec<String> {
        self.inner
            .mutating()
            .into_iter()
            .filter(|n| self.names.contains(n))
            .collect()
    }

    fn take_file_changes(&self, id: &CallId) -> Vec<xcsh_log::FileChange> {
        self.inner.take_file_changes(id)
    }

    fn execute_dispatched(
        &self,
        call: ToolCall,
        dispatch: Dispatch,
        cancel: CancellationToken,
        progress: ToolProgress,
    ) -> BoxFuture<ToolOutcome> {
        self.inner
            .execute_dispatched(call, dispatch, cancel, progress)
    }

    fn results_durable(&self, dispatches: &[Dispatch]) {
        self.inner.results_durable(dispatches);
    }

    fn before_images(&self) -> Option<BlobStore> {
        self.inner.before_images()
    }

    fn sandbox(&self) -> Option<SandboxConfig> {
        self.inner.sandbox().map(|mut sandbox| {
            sandbox.always_ask.retain(|n| self.names.contains(n));
            sandbox
        })
    }
}

/// The parent's provider, for the sub-agent `agent`.
pub(crate) struct AgentProvider {
    pub(crate) inner: Arc<dyn Provider>,
    pub(crate) agent: String,
}

impl Provider for AgentProvider {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn stream(
        &self,
        request: ModelRequest,
        sink: StreamSink,
        cancel: CancellationToken,
    ) -> BoxFuture<Result<(), ProviderError>> {
        self.inner.stream_as(&self.agent, request, sink, cancel)
    }

    fn render_request(&self, request: &ModelRequest) -> serde_json::Value {
        self.inner.render_request(request)
    }
}
