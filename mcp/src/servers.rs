//! The MCP servers of a run ([`McpServers`]): started concurrently, each within
//! its deadline, their state for `xcsh mcp` and the start-up notices, and the
//! [`Layer`] that offers their tools beside an executor's own.

use std::collections::BTreeMap;
use std::sync::Arc;

use xcsh_machine::{ToolCall, ToolOutcome, ToolStatus};
use xcsh_ports::{BoxFuture, CallContext, Layer, Layered, ToolExecutor, ToolSpec};

use crate::config::ServerConfig;
use crate::server::{self, McpTool, Server, StartOptions};

/// Where a configured server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Running; its tools are offered.
    Started,
    /// Did not start: why. Its tools are not offered.
    Failed(String),
    /// `enabled = false`: not started.
    Disabled,
}

struct Entry {
    config: ServerConfig,
    state: ServerState,
    server: Option<Arc<Server>>,
}

/// One server as `xcsh mcp` shows it.
#[derive(Debug)]
pub struct ServerView<'a> {
    pub name: &'a str,
    pub config: &'a ServerConfig,
    pub state: &'a ServerState,
    /// Its tools, in the server's order (none unless started).
    pub tools: &'a [McpTool],
}

/// The configured servers of a run, in name order.
pub struct McpServers {
    entries: Vec<Entry>,
    /// Qualified tool name → (entry, tool).
    tools: BTreeMap<String, (usize, usize)>,
    /// What start-up has to say (a failed server, a tool name taken twice).
    notices: Vec<String>,
    /// What the servers were started with, kept while they run (the sandbox the
    /// hook confines them to owns their temporary directory).
    _options: StartOptions,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServers")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl McpServers {
    /// No server.
    pub fn none() -> McpServers {
        McpServers {
            entries: Vec::new(),
            tools: BTreeMap::new(),
            notices: Vec::new(),
            _options: StartOptions::default(),
        }
    }

    /// Starts every enabled server of `configs` at once; returns when each has
    /// started or failed (at the latest when the longest startup deadline passed).
    pub async fn start(configs: Vec<ServerConfig>, options: StartOptions) -> McpServers {
        let mut pending = Vec::with_capacity(configs.len());
        for config in configs {
            let handle = config.enabled.then(|| {
                let (config, options) = (config.clone(), options.clone());
                tokio::spawn(async move { server::start(&config, &options).await })
            });
            pending.push((config, handle));
        }
        let mut entries = Vec::with_capacity(pending.len());
        for (config, handle) in pending {
            let (state, server) = match handle {
                None => (ServerState::Disabled, None),
                Some(handle) => match handle.await {
                    Ok(Ok(server)) => (ServerState::Started, Some(Arc::new(server))),
                    Ok(Err(why)) => (ServerState::Failed(why), None),
                    Err(e) => (
                        ServerState::Failed(format!("its start-up failed: {e}")),
                        None,
                    ),
                },
            };
            entries.push(Entry {
                config,
                state,
                server,
            });
        }
        let mut notices = Vec::new();
        let mut tools = BTreeMap::new();
        for (i, entry) in entries.iter().enumerate() {
            if let ServerState::Failed(why) = &entry.state {
                notices.push(format!(
                    "MCP server {} failed to start: {why}; its tools are unavailable",
                    entry.config.name
                ));
            }
            for (j, tool) in entry.server.iter().flat_map(|s| s.tools.iter()).enumerate() {
                if tools.insert(tool.name.clone(), (i, j)).is_some() {
                    notices.push(format!(
                        "MCP server {}: two tools are named `{}`; the later one is offered",
                        entry.config.name, tool.name
                    ));
                }
            }
        }
        McpServers {
            entries,
            tools,
            notices,
            _options: options,
        }
    }

    /// The notices of start-up, one line each.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// Every configured server, in name order.
    pub fn views(&self) -> Vec<ServerView<'_>> {
        self.entries
            .iter()
            .map(|e| ServerView {
                name: &e.config.name,
                config: &e.config,
                state: &e.state,
                tools: e.server.as_deref().map_or(&[][..], |s| &s.tools[..]),
            })
            .collect()
    }

    /// Whether no server started (nothing to offer).
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Kills every server's process group. Their tools' later calls are errors.
    pub fn shutdown(&self) {
        for server in self.entries.iter().filter_map(|e| e.server.as_ref()) {
            server.kill();
        }
    }

    /// Closes every server: each connection ended (a streamable HTTP session
    /// deleted, each within a bound), then every process group killed.
    pub async fn close(&self) {
        let closing = self
            .entries
            .iter()
            .filter_map(|e| e.server.as_ref())
            .map(|server| server.close());
        futures::future::join_all(closing).await;
    }

    fn tool(&self, name: &str) -> Option<(&Arc<Server>, &McpTool)> {
        let (i, j) = *self.tools.get(name)?;
        let server = self.entries[i].server.as_ref()?;
        Some((server, &server.tools[j]))
    }

    /// `inner` with the servers' tools beside its own.
    pub fn layered(self: &Arc<McpServers>, inner: Arc<dyn ToolExecutor>) -> Arc<dyn ToolExecutor> {
        Arc::new(Layered::new(inner, McpLayer(Arc::clone(self))))
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The servers' tools as a [`Layer`]: offered after the inner executor's, run on
/// their server, mutating unless the server marks them read-only.
pub struct McpLayer(pub Arc<McpServers>);

impl Layer for McpLayer {
    /// The servers' tools after the inner executor's, in name order.
    fn specs(&self, mut inner: Vec<ToolSpec>) -> Vec<ToolSpec> {
        inner.extend(
            self.0
                .tools
                .keys()
                .filter_map(|name| self.0.tool(name))
                .map(|(_, tool)| tool.spec.clone()),
        );
        inner
    }

    fn owns(&self, name: &str) -> bool {
        self.0.tools.contains_key(name)
    }

    fn execute(&self, call: ToolCall, context: CallContext) -> BoxFuture<ToolOutcome> {
        let servers = Arc::clone(&self.0);
        Box::pin(async move {
            match servers.tool(&call.name) {
                Some((server, tool)) => server.call(tool, &call, &context.cancel).await,
                None => ToolOutcome {
                    status: ToolStatus::Error,
                    content: format!("error: no tool named `{}`", call.name),
                },
            }
        })
    }

    fn mutating(&self, mut inner: Vec<String>) -> Vec<String> {
        inner.extend(
            self.0
                .tools
                .keys()
                .filter(|name| self.0.tool(name).is_some_and(|(_, t)| !t.read_only))
                .cloned(),
        );
        inner
    }
}
