//! MCP servers as tools (SPEC.md §32): the servers of `[mcp_servers.NAME]` started
//! concurrently over stdio or streamable HTTP (our reqwest 0.12 client under its
//! transport, `http.rs`) with the official SDK (`rmcp`), each within its startup
//! deadline, their tools offered to the model as `mcp__NAME__TOOL` with the
//! server's input schema ([`McpServers::layered`]), validated like every tool call,
//! mutating unless marked `readOnlyHint`, each call under its timeout and the run's
//! cancellation. Only `xcsh run` and the interactive mode start servers: replay
//! and `--redrive` serve the recorded results and never reach this crate.

mod config;
mod content;
mod http;
pub mod naming;
mod registry;
mod server;
mod servers;

pub use config::{
    ConfigError, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ServerConfig, ServerToml,
    Transport, resolve_all,
};
pub use registry::kill_all;
pub use server::{McpTool, Prepare, StartOptions};
pub use servers::{McpLayer, McpServers, ServerState, ServerView};

/// `N s` for a timeout, as the messages write it.
pub fn seconds(d: std::time::Duration) -> String {
    server::seconds(d)
}
