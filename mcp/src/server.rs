//! One MCP server: started over its transport (spawned, initialized, its tools
//! listed, all within its startup deadline), its tools as xcsh tools, and one call
//! of one of them (validated, with its timeout and cancellation, the server's exit
//! an error outcome).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, ServerResult,
};
use rmcp::service::{
    ClientInitializeError, Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError,
};
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;
use xcsh_machine::{ToolCall, ToolOutcome};
use xcsh_ports::ToolSpec;
use xcsh_ports::arguments::{self, ArgumentSchema};
use xcsh_ports::outcome::{cancelled, error};

use crate::config::{ServerConfig, Transport};
use crate::http::HttpClient;
use crate::{content, naming, registry};

/// Changes a server's command before it is spawned (the binary applies the
/// sandbox of the run's tools here).
pub type Prepare = Arc<dyn Fn(&mut tokio::process::Command) + Send + Sync>;

/// What every server of a run starts with.
#[derive(Clone, Default)]
pub struct StartOptions {
    /// Where a stdio server runs unless its `cwd` says otherwise: the workspace.
    pub cwd: PathBuf,
    /// The environment a stdio server starts from (its `env` is added): the one
    /// bash gets, secrets removed.
    pub env: Vec<(OsString, OsString)>,
    /// Applied to every stdio server's command.
    pub prepare: Option<Prepare>,
}

impl std::fmt::Debug for StartOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartOptions")
            .field("cwd", &self.cwd)
            .field("prepare", &self.prepare.is_some())
            .finish_non_exhaustive()
    }
}

/// One tool of a server, as the model sees it.
pub struct McpTool {
    /// Its name for the model (`mcp__SERVER__TOOL`).
    pub name: String,
    /// Its name on the server.
    pub remote: String,
    /// The server marks it `readOnlyHint: true`: it never asks for approval.
    pub read_only: bool,
    pub spec: ToolSpec,
    schema: ArgumentSchema,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .field("read_only", &self.read_only)
            .finish_non_exhaustive()
    }
}

/// How many lines of a server's stderr are kept (the last ones), to say why it
/// failed.
const STDERR_LINES: usize = 5;

/// How long closing a streamable HTTP server's session may take (its DELETE).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

type Service = RunningService<RoleClient, ClientConfig>;

/// A started server.
pub(crate) struct Server {
    pub name: String,
    pub tools: Vec<McpTool>,
    tool_timeout: Duration,
    /// Whom requests go to.
    peer: Peer<RoleClient>,
    /// The running connection, until the server is shut down or closed.
    service: Mutex<Option<Service>>,
    /// The process group of a stdio server (its pid), 0 when there is none.
    pgid: Arc<AtomicI32>,
    stderr: Arc<Stderr>,
    /// Why the server is gone, once it is.
    exited: Mutex<Option<String>>,
    /// A streamable HTTP server (not xcsh's process: it does not exit, it stops
    /// answering).
    remote: bool,
}

/// The handler xcsh answers a server with: it names itself and offers no
/// capability (no sampling, roots or elicitation).
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("xcsh", env!("CARGO_PKG_VERSION")),
    )
}

/// The last lines of a stdio server's stderr, and the task reading them (none for a
/// `url` server), so that a server that crashed is described with what it wrote
/// before it died: its stderr is read to the end first.
#[derive(Default)]
struct Stderr {
    lines: Mutex<VecDeque<String>>,
    reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// How long a crashed server's stderr is waited for (its end comes when the process
/// is gone, unless a child of it still holds the pipe).
const STDERR_DRAIN: Duration = Duration::from_secs(1);

impl Stderr {
    /// Waits (at most [`STDERR_DRAIN`]) until the server's stderr is read to its end.
    async fn drained(&self) {
        let reader = lock(&self.reader).take();
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(STDERR_DRAIN, reader).await;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts the server of `config` within its startup deadline; the error says why
/// it did not start (its process group is killed then).
pub(crate) async fn start(config: &ServerConfig, options: &StartOptions) -> Result<Server, String> {
    let pgid = Arc::new(AtomicI32::new(0));
    let stderr = Arc::new(Stderr::default());
    let started = tokio::time::timeout(
        config.startup_timeout,
        connect(config, options, Arc::clone(&pgid), Arc::clone(&stderr)),
    )
    .await;
    let failure = match started {
        Ok(Ok((client, tools))) => {
            return Ok(Server {
                name: config.name.clone(),
                tools,
                tool_timeout: config.tool_timeout,
                peer: client.peer().clone(),
                service: Mutex::new(Some(client)),
                pgid,
                stderr,
                exited: Mutex::new(None),
                remote: matches!(config.transport, Transport::StreamableHttp { .. }),
            });
        }
        Ok(Err(why)) => why,
        Err(_) => format!(
            "it did not start within {} (startup_timeout_sec)",
            seconds(config.startup_timeout)
        ),
    };
    kill_group(&pgid);
    stderr.drained().await;
    Err(format!("{failure}{}", tail(&stderr)))
}

/// `N s` for a duration.
pub(crate) fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

/// The last lines of the server's stderr, as a suffix of a message (empty when it
/// wrote none).
fn tail(stderr: &Stderr) -> String {
    let lines = lock(&stderr.lines);
    if lines.is_empty() {
        return String::new();
    }
    let joined: Vec<&str> = lines.iter().map(String::as_str).collect();
    format!(" (its stderr ends: {})", joined.join(" | "))
}

fn kill_group(pgid: &AtomicI32) {
    let pid = pgid.swap(0, Ordering::SeqCst);
    if pid > 0 {
        registry::forget(pid);
        // SAFETY: killpg only sends a signal, to the group this server leads.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}

type Connected = (Service, Vec<McpTool>);

async fn connect(
    config: &ServerConfig,
    options: &StartOptions,
    pgid: Arc<AtomicI32>,
    stderr: Arc<Stderr>,
) -> Result<Connected, String> {
    let client = match &config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let child = Child {
                command,
                args,
                env,
                cwd: cwd.as_ref(),
            };
            spawn(child, options, pgid, stderr).await?
        }
        Transport::StreamableHttp { url } => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            config.retry_config = Arc::new(reconnects());
            let transport = StreamableHttpClientTransport::with_client(HttpClient::new()?, config);
            client_info()
                .serve(transport)
                .await
                .map_err(http_handshake_error)?
        }
    };
    let tools = list_tools(config, &client).await?;
    Ok((client, tools))
}

/// How a dropped SSE stream of a streamable HTTP server is reopened: 3 times, after
/// 0.25, 0.5 and 1 s; then a call waiting on it ends as the server gone (rmcp's
/// default tries forever, and the call would wait for its tool timeout).
fn reconnects() -> ExponentialBackoff {
    let mut backoff = ExponentialBackoff::default();
    backoff.max_times = Some(3);
    backoff.base_duration = Duration::from_millis(250);
    backoff.max_delay = Some(Duration::from_secs(1));
    backoff
}

/// Why the handshake with a streamable HTTP server failed: the HTTP error itself,
/// without the transport's type name that rmcp's message carries.
fn http_handshake_error(e: ClientInitializeError) -> String {
    match e {
        ClientInitializeError::TransportError { error, context } => {
            format!("the MCP handshake failed ({context}): {}", error.error)
        }
        other => format!("the MCP handshake failed: {other}"),
    }
}

/// What a stdio server is started from.
struct Child<'a> {
    command: &'a str,
    args: &'a [String],
    env: &'a std::collections::BTreeMap<String, String>,
    cwd: Option<&'a PathBuf>,
}

/// Spawns a stdio server and initializes it.
async fn spawn(
    child: Child<'_>,
    options: &StartOptions,
    pgid: Arc<AtomicI32>,
    stderr: Arc<Stderr>,
) -> Result<Service, String> {
    let Child {
        command,
        args,
        env,
        cwd,
    } = child;
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args)
        .env_clear()
        .envs(options.env.iter().map(|(k, v)| (k, v)))
        .envs(env)
        .current_dir(cwd.unwrap_or(&options.cwd))
        .process_group(0)
        .kill_on_drop(true);
    if let Some(prepare) = &options.prepare {
        prepare(&mut cmd);
    }
    let (transport, err) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{command}`: {e}"))?;
    if let Some(pid) = transport.id().and_then(|p| i32::try_from(p).ok()) {
        pgid.store(pid, Ordering::SeqCst);
        registry::remember(pid);
    }
    if let Some(err) = err {
        let kept = Arc::clone(&stderr);
        let reader = tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(err).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut kept = lock(&kept.lines);
                if kept.len() == STDERR_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
        *lock(&stderr.reader) = Some(reader);
    }
    client_info()
        .serve(transport)
        .await
        .map_err(|e| format!("the MCP handshake failed: {e}"))
}

/// The tools of a started server, as xcsh tools.
async fn list_tools(config: &ServerConfig, client: &Service) -> Result<Vec<McpTool>, String> {
    let listed = client
        .list_all_tools()
        .await
        .map_err(|e| format!("listing its tools failed: {e}"))?;
    let mut tools = Vec::with_capacity(listed.len());
    for tool in listed {
        let parameters = serde_json::Value::Object((*tool.input_schema).clone());
        let schema = ArgumentSchema::new(&parameters).map_err(|e| {
            format!(
                "the input schema of its tool `{}` is not usable: {e}",
                tool.name
            )
        })?;
        let name = naming::qualified(&config.name, &tool.name);
        let read_only = tool
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        tools.push(McpTool {
            spec: ToolSpec {
                name: name.clone(),
                description: tool.description.as_deref().unwrap_or_default().to_owned(),
                parameters,
            },
            name,
            remote: tool.name.to_string(),
            read_only,
            schema,
        });
    }
    Ok(tools)
}

/// What ended a call's wait.
enum Ended {
    Answer(Box<Result<ServerResult, ServiceError>>),
    Closed,
    Cancelled,
    TimedOut,
}

impl Server {
    /// Kills the server's process group and drops its connection, a streamable
    /// HTTP session closing in the background (idempotent).
    pub(crate) fn kill(&self) {
        kill_group(&self.pgid);
        drop(lock(&self.service).take());
        let mut exited = lock(&self.exited);
        exited.get_or_insert_with(|| "it was shut down".to_owned());
    }

    /// Closes the connection and waits, at most [`CLOSE_TIMEOUT`], for it to end
    /// (a streamable HTTP session's DELETE), then kills the server's process group.
    pub(crate) async fn close(&self) {
        let service = lock(&self.service).take();
        if let Some(mut service) = service {
            let _ = service.close_with_timeout(CLOSE_TIMEOUT).await;
        }
        self.kill();
    }

    fn exited_error(&self, why: &str) -> ToolOutcome {
        let gone = if self.remote {
            "stopped answering"
        } else {
            "exited"
        };
        error(format!(
            "MCP server {} {gone}: {why}{}; its tools are unavailable for the rest of the session",
            self.name,
            tail(&self.stderr)
        ))
    }

    /// Runs `call` of `tool` (one of this server's).
    pub(crate) async fn call(
        &self,
        tool: &McpTool,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> ToolOutcome {
        let value = match arguments::parse(&call.name, &call.arguments) {
            Ok(value) => value,
            Err(message) => return error(message),
        };
        if let Err(message) = tool.schema.validate(&call.name, &value) {
            return error(message);
        }
        if let Some(why) = lock(&self.exited).clone() {
            return self.exited_error(&why);
        }
        if cancel.is_cancelled() {
            return cancelled(&call.name);
        }
        let serde_json::Value::Object(object) = value else {
            return error(format!(
                "invalid arguments for `{}` (the call was not run): they are not a JSON object",
                call.name
            ));
        };
        let mut params = CallToolRequestParams::new(tool.remote.clone());
        params.arguments = Some(object);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut handle = match self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => {
                return self
                    .gone(&format!("the request could not be sent ({e})"))
                    .await;
            }
        };
        let ended = tokio::select! {
            biased;
            answer = &mut handle.rx => match answer {
                Ok(answer) => Ended::Answer(Box::new(answer)),
                Err(_) => Ended::Closed,
            },
            () = cancel.cancelled() => Ended::Cancelled,
            () = tokio::time::sleep(self.tool_timeout) => Ended::TimedOut,
        };
        let ended = match ended {
            Ended::Answer(answer) => Ok(*answer),
            other => Err(other),
        };
        match ended {
            Ok(Ok(ServerResult::CallToolResult(result))) => content::outcome(&result),
            Ok(Ok(_)) => error(format!(
                "MCP server {} answered `{}` with something other than a tool result",
                self.name, tool.remote
            )),
            Ok(Err(ServiceError::McpError(e))) => error(format!(
                "MCP server {} refused the call: {} (error {})",
                self.name, e.message, e.code.0
            )),
            Ok(Err(ServiceError::TransportClosed)) | Err(Ended::Closed) => {
                self.gone("the connection closed during the call").await
            }
            // A streamable HTTP request that got no answer (the server is down):
            // this call's error; the next call tries again.
            Ok(Err(ServiceError::TransportSend(e))) => error(format!(
                "MCP server {} could not be reached: {}",
                self.name, e.error
            )),
            Ok(Err(e)) => error(format!("MCP server {}: {e}", self.name)),
            Err(Ended::Cancelled) => {
                let _ = handle
                    .cancel(Some("cancelled by the user".to_owned()))
                    .await;
                cancelled(&call.name)
            }
            Err(Ended::TimedOut | Ended::Answer(_)) => {
                let _ = handle
                    .cancel(Some("timed out (tool_timeout_sec)".to_owned()))
                    .await;
                error(format!(
                    "MCP tool `{}` timed out after {} (tool_timeout_sec of [mcp_servers.{}]); the server was told to cancel it",
                    call.name,
                    seconds(self.tool_timeout),
                    self.name
                ))
            }
        }
    }

    /// The server went away: every later call of its tools is this error too.
    async fn gone(&self, why: &str) -> ToolOutcome {
        lock(&self.exited).get_or_insert_with(|| why.to_owned());
        kill_group(&self.pgid);
        self.stderr.drained().await;
        self.exited_error(why)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        kill_group(&self.pgid);
    }
}
