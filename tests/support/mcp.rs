//! What the MCP end-to-end tests share (tests/mcp_e2e.rs over stdio,
//! tests/mcp_http_e2e.rs over streamable HTTP): finding server-everything, the loud
//! skip of a missing dependency, and the faux script steps and tool outcomes the
//! tests write and read.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::env::lines;

/// The pinned version scripts/setup-test-deps.sh installs.
pub const EVERYTHING_VERSION: &str = "2026.8.31";

/// Whether an external thing a test needs is here: skipped loudly outside CI,
/// required under `CI=true`.
pub fn available(what: &str, found: bool) -> bool {
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{what} is missing: run scripts/setup-test-deps.sh"
        );
        eprintln!("SKIPPED: {what} is missing (run scripts/setup-test-deps.sh to install it)");
    }
    found
}

/// The entry point of server-everything when it and `node` are installed.
pub fn everything_entry() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let entry = cache.join(format!(
        "xcsh-test-deps/mcp-everything-{EVERYTHING_VERSION}/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    ));
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let found = node && entry.is_file();
    available("node or @modelcontextprotocol/server-everything", found).then_some(entry)
}

/// A faux step calling `name` with `arguments`.
pub fn call(name: &str, arguments: serde_json::Value) -> String {
    serde_json::json!({"tool_calls": [{"name": name, "arguments": arguments}]}).to_string()
}

/// A faux step answering `t`.
pub fn text(t: &str) -> String {
    serde_json::json!({ "text": t }).to_string()
}

/// The outcomes of the session's tool results, in order.
pub fn outcomes(session: &Path) -> Vec<serde_json::Value> {
    lines(session)
        .into_iter()
        .filter(|v| v["type"] == "tool_result")
        .map(
            |v| serde_json::json!({"status": v["data"]["status"], "content": v["data"]["content"]}),
        )
        .collect()
}
