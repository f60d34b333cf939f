//! What a sub-agent runs with: a subset of its parent's tools (the same executor,
//! offering fewer), and its parent's provider, its requests tagged with the agent's
//! name (`StreamCall::agent`, which the faux provider serves a family by).

use std::sync::Arc;

use xcsh_machine::{ProviderError, SandboxConfig};
use xcsh_providers::{BoxFuture, Provider, StreamCall, Wrapper};
use xcsh_tools::{Layer, ToolSpec};

/// The parent's executor offering only these tools (the machine rejects any other
/// name before a call reaches it).
pub(crate) struct Only(pub(crate) Vec<String>);

impl Layer for Only {
    fn specs(&self, inner: Vec<ToolSpec>) -> Vec<ToolSpec> {
        inner
            .into_iter()
            .filter(|s| self.0.contains(&s.name))
            .collect()
    }

    fn mutating(&self, inner: Vec<String>) -> Vec<String> {
        inner.into_iter().filter(|n| self.0.contains(n)).collect()
    }

    fn sandbox(&self, inner: Option<SandboxConfig>) -> Option<SandboxConfig> {
        inner.map(|mut sandbox| {
            sandbox.always_ask.retain(|n| self.0.contains(n));
            sandbox
        })
    }
}

/// The parent's provider, for the sub-agent `agent`.
pub(crate) struct AgentProvider {
    pub(crate) inner: Arc<dyn Provider>,
    pub(crate) agent: String,
}

impl Wrapper for AgentProvider {
    fn inner(&self) -> &dyn Provider {
        &*self.inner
    }

    fn stream_inner(&self, call: StreamCall) -> BoxFuture<Result<(), ProviderError>> {
        self.inner.stream(StreamCall {
            agent: Some(self.agent.clone()),
            ..call
        })
    }
}
