//! The MCP servers of a run (SPEC.md §32): `[mcp_servers]` of config.toml resolved,
//! the servers started under the sandbox of the run's tools with the environment
//! bash gets ([`start`]), their notices printed; and `xcsh mcp`, which starts them
//! the same way, lists each server's state and tools, and stops them.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use xcsh_mcp::{McpServers, ServerState, StartOptions, Transport};
use xcsh_tools::sandbox::{Sandbox, SandboxMode, SandboxPolicy};

use crate::config;

#[derive(Debug, Args)]
pub struct McpArgs {}

/// Starts the configured servers for a run in the workspace `cwd`: under the
/// sandbox `policy` (when it is on), with the environment `env` (bash's, secrets
/// removed); each failure is a notice on stderr.
pub(crate) async fn start(
    cwd: &Path,
    policy: SandboxPolicy,
    env: &xcsh_log::secrets::ShellEnv,
    notify: bool,
) -> Result<Arc<McpServers>> {
    let path = config::path()?;
    let file = config::load(&path)?;
    let configs =
        xcsh_mcp::resolve_all(&file.mcp_servers).with_context(|| path.display().to_string())?;
    if configs.is_empty() {
        return Ok(Arc::new(McpServers::none()));
    }
    let prepare: Option<xcsh_mcp::Prepare> = match policy.mode {
        SandboxMode::Off => None,
        SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite => {
            let sandbox = Sandbox::new(cwd, policy)
                .context("cannot prepare the sandbox of the MCP servers")?;
            Some(Arc::new(move |cmd: &mut tokio::process::Command| {
                sandbox.confine(cmd);
            }))
        }
    };
    let options = StartOptions {
        cwd: cwd.to_path_buf(),
        env: env
            .vars()
            .filter(|(k, _)| *k != xcsh_tools::procs::MARKER_VAR)
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        prepare,
    };
    let servers = McpServers::start(configs, options).await;
    for notice in servers.notices().iter().filter(|_| notify) {
        eprintln!("xcsh: {}", xcsh_inspect::terminal::neutralize(notice));
    }
    Ok(Arc::new(servers))
}

pub fn main(_args: McpArgs) -> Result<ExitCode> {
    let here = std::env::current_dir()?;
    let cwd = crate::sessions::workspace_root(&here.canonicalize().unwrap_or(here))?;
    let path = config::path()?;
    let file = config::load(&path)?;
    if file.mcp_servers.is_empty() {
        println!(
            "no MCP servers are configured (add [mcp_servers.NAME] to {})",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let effective = config::resolve(&file, &path, None, &config::Layer::default())?;
    let (policy, _) = config::effective_sandbox(effective.sandbox_policy());
    let env = effective.env_policy().apply(std::env::vars_os());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let text = runtime.block_on(async {
        let servers = start(&cwd, policy, &env, false).await?;
        let text = render(&servers);
        servers.close().await;
        anyhow::Ok(text)
    })?;
    print!("{}", xcsh_inspect::terminal::neutralize(&text));
    Ok(ExitCode::SUCCESS)
}

/// The listing: per server its transport and state, then one line per tool (name,
/// read-only or mutating, the first line of its description).
pub(crate) fn render(servers: &McpServers) -> String {
    let mut out = String::new();
    for view in servers.views() {
        let transport = match &view.config.transport {
            Transport::Stdio { command, args, .. } => {
                let mut words = vec![command.as_str()];
                words.extend(args.iter().map(String::as_str));
                format!("stdio: {}", words.join(" "))
            }
            Transport::StreamableHttp { url } => format!("streamable HTTP: {url}"),
        };
        let state = match view.state {
            ServerState::Started => format!(
                "started, {} tool(s), tool timeout {}",
                view.tools.len(),
                xcsh_mcp::seconds(view.config.tool_timeout)
            ),
            ServerState::Failed(why) => format!("failed: {why}"),
            ServerState::Disabled => "disabled (enabled = false)".to_owned(),
        };
        out.push_str(&format!("{} ({transport}): {state}\n", view.name));
        let width = view.tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
        for tool in view.tools {
            let kind = if tool.read_only {
                "read-only"
            } else {
                "mutating "
            };
            let first = tool.spec.description.lines().next().unwrap_or("").trim();
            out.push_str(format!("  {:width$}  {kind}  {first}", tool.name).trim_end());
            out.push('\n');
        }
    }
    out
}
