//! `StandardTools`: the seven standard tools (read, list, grep, glob, edit, write,
//! bash) behind the [`ToolExecutor`] trait. Every call's arguments are validated
//! against the tool's JSON schema before it runs; edit and write record the file
//! changes they make, per call id.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::blobs::{BeforeImage, BlobStore, Dispatch};
use super::caps::Caps;
use super::sandbox::{OUTSIDE_TOOL, Sandbox, SandboxMode, SandboxPolicy};
use super::workspace::Scan;
pub use super::workspace::{FileChange, ToolError, Workspace};
use super::{CallContext, ToolExecutor, ToolSpec};
use super::{bash, edit, glob, grep, list, params, plan, read, write};
use xcsh_log::secrets::ShellEnv;
use xcsh_machine::{CallId, ToolCall, ToolOutcome, ToolStatus};
use xcsh_ports::BoxFuture;
use xcsh_ports::arguments::{self, ArgumentSchema};
use xcsh_ports::outcome::{cancelled, error};

/// The tools that only look at the workspace; they never need approval.
pub const READ_ONLY_TOOLS: [&str; 4] = ["read", "list", "grep", "glob"];

/// The tools that can change the workspace (or anything else); they go through the
/// permission policy.
pub const MUTATING_TOOLS: [&str; 3] = ["edit", "write", "bash"];

/// Whether the tool named `name` can change things (`edit`, `write`, `bash`).
pub fn is_mutating(name: &str) -> bool {
    MUTATING_TOOLS.contains(&name)
}

/// Settings of a [`StandardTools`] executor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOptions {
    /// Output caps of every tool (and of each bash stream).
    pub caps: Caps,
    /// bash's timeout when a call gives no `timeout_ms`.
    pub bash_timeout: Duration,
    /// The whole environment bash runs with (nothing else is inherited). The
    /// default is this process's environment without the secret-named variables
    /// ([`xcsh_log::secrets::EnvPolicy`]); the binary builds it from `[shell_env]`.
    pub shell_env: ShellEnv,
    /// Where `edit` and `write` keep the before-images of the files they change
    /// (§21.6; the binary uses `$XCSH_HOME/blobs`); `None` keeps none.
    pub blobs: Option<BlobStore>,
    /// The sandbox of bash and the file tools (§21.7); `off` unless set (the
    /// binary's default is `workspace-write` where the kernel has it).
    pub sandbox: SandboxPolicy,
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            caps: Caps::default(),
            bash_timeout: bash::DEFAULT_TIMEOUT,
            shell_env: ShellEnv::default(),
            blobs: None,
            sandbox: SandboxPolicy {
                mode: SandboxMode::Off,
                network: false,
            },
        }
    }
}

struct Tool {
    spec: ToolSpec,
    schema: ArgumentSchema,
}

struct Inner {
    workspace: Workspace,
    options: ToolOptions,
    tools: Vec<Tool>,
    changes: Mutex<BTreeMap<CallId, Vec<FileChange>>>,
    /// The prepared sandbox of bash calls (`None` with `off`).
    sandbox: Option<Arc<Sandbox>>,
    /// How bash calls start their shells (the program found once, the gate).
    shells: bash::Shells,
}

/// The standard tools over one workspace, for one run (or session): the
/// read-before-write ledger and the recorded file changes live here. Cheap to clone
/// (clones share everything).
#[derive(Clone)]
pub struct StandardTools {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for StandardTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StandardTools")
            .field("root", &self.inner.workspace.root())
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl StandardTools {
    /// The standard tools over the workspace at `root` (an existing directory), with
    /// the default caps and bash timeout.
    pub fn new(root: &Path) -> Result<StandardTools, ToolError> {
        Self::with_options(root, ToolOptions::default())
    }

    /// The standard tools with explicit settings.
    pub fn with_options(root: &Path, options: ToolOptions) -> Result<StandardTools, ToolError> {
        let workspace = Workspace::new(root)?;
        let sandbox = match options.sandbox.mode {
            SandboxMode::Off => None,
            SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite => {
                Some(Sandbox::new(workspace.root(), options.sandbox)?)
            }
        };
        let specs = Self::specs_of(sandbox.is_some());
        let shells = bash::Shells::new(
            workspace.root(),
            options.shell_env.clone(),
            options.bash_timeout,
        );
        let mut tools = Vec::with_capacity(specs.len());
        for spec in specs {
            let schema =
                ArgumentSchema::new(&spec.parameters).map_err(|message| ToolError::Schema {
                    tool: spec.name.clone(),
                    message,
                })?;
            tools.push(Tool { spec, schema });
        }
        Ok(StandardTools {
            inner: Arc::new(Inner {
                workspace,
                options,
                tools,
                changes: Mutex::new(BTreeMap::new()),
                sandbox,
                shells,
            }),
        })
    }

    /// The specs of the standard tools: the seven, `bash_outside_sandbox` when
    /// `sandboxed` (§21.7), and `plan` (§27), always.
    pub fn specs_of(sandboxed: bool) -> Vec<ToolSpec> {
        let mut defs = vec![
            (read::NAME, read::DESCRIPTION, read::PARAMS),
            (list::NAME, list::DESCRIPTION, list::PARAMS),
            (grep::NAME, grep::DESCRIPTION, grep::PARAMS),
            (glob::NAME, glob::DESCRIPTION, glob::PARAMS),
            (edit::NAME, edit::DESCRIPTION, edit::PARAMS),
            (write::NAME, write::DESCRIPTION, write::PARAMS),
            (bash::NAME, bash::DESCRIPTION, bash::PARAMS),
        ];
        if sandboxed {
            defs.push((OUTSIDE_TOOL, bash::OUTSIDE_DESCRIPTION, bash::PARAMS));
        }
        defs.into_iter()
            .map(|(name, description, parameters)| ToolSpec {
                name: name.to_owned(),
                description: match name {
                    bash::NAME if sandboxed => {
                        format!("{description} {}", bash::SANDBOXED_DESCRIPTION)
                    }
                    _ => description.to_owned(),
                },
                parameters: params::schema(parameters),
            })
            .chain([plan::spec()])
            .collect()
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        self.inner.workspace.root()
    }

    /// The workspace (path resolution and the read-before-write ledger).
    pub fn workspace(&self) -> &Workspace {
        &self.inner.workspace
    }

    /// The file changes made by the call `id` (empty for a call that changed no
    /// file), in order.
    pub fn file_changes(&self, id: &CallId) -> Vec<FileChange> {
        self.inner
            .lock_changes()
            .get(id)
            .cloned()
            .unwrap_or_default()
    }

    /// Like [`Self::file_changes`], and forgets them (once they are recorded).
    pub fn take_file_changes(&self, id: &CallId) -> Vec<FileChange> {
        self.inner.lock_changes().remove(id).unwrap_or_default()
    }
}

impl ToolExecutor for StandardTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.inner.tools.iter().map(|t| t.spec.clone()).collect()
    }

    fn take_file_changes(&self, id: &CallId) -> Vec<FileChange> {
        StandardTools::take_file_changes(self, id)
    }

    fn mutating(&self) -> Vec<String> {
        let mut names: Vec<String> = MUTATING_TOOLS.iter().map(|n| (*n).to_owned()).collect();
        if self.inner.sandbox.is_some() {
            names.push(OUTSIDE_TOOL.to_owned());
        }
        names
    }

    fn sandbox(&self) -> Option<xcsh_machine::SandboxConfig> {
        let policy = self.inner.options.sandbox;
        Some(xcsh_machine::SandboxConfig {
            mode: policy.mode,
            network: policy.network && policy.mode != SandboxMode::Off,
            always_ask: match self.inner.sandbox {
                Some(_) => vec![OUTSIDE_TOOL.to_owned()],
                None => Vec::new(),
            },
            unattended: false,
        })
    }

    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        self.execute_with(call, CallContext::new(cancel))
    }

    /// `edit` and `write` are worked out as they would be run, up to the change
    /// (`edit::plan`, `write::plan`): an error there is the call's result. bash
    /// cannot be known to fail without running it.
    fn check(&self, call: &ToolCall) -> Option<String> {
        let inner = &self.inner;
        if !matches!(call.name.as_str(), "edit" | "write") {
            return None;
        }
        let value = match inner.arguments(call) {
            Ok(value) => value,
            Err(outcome) => return Some(outcome.content),
        };
        if inner.options.sandbox.mode == SandboxMode::ReadOnly {
            return Some(read_only(&call.name));
        }
        let planned = if call.name == "edit" {
            typed(&call.name, value).map(|args| edit::plan(&inner.workspace, &args).map(drop))
        } else {
            typed(&call.name, value).map(|args| write::plan(&inner.workspace, &args).map(drop))
        };
        match planned {
            Ok(Ok(())) => None,
            Ok(Err(message)) => Some(error(message).content),
            Err(outcome) => Some(outcome.content),
        }
    }

    /// bash reports its stdout and stderr as they are read; the other tools report
    /// nothing (their results come at once). `edit` and `write` keep before-images
    /// of a call with a dispatch.
    ///
    /// A bash call started before its dispatch is durable spawns its shell now, held
    /// at a gate that opens once `context.durable` resolves.
    fn execute_with(&self, call: ToolCall, context: CallContext) -> BoxFuture<ToolOutcome> {
        let inner = Arc::clone(&self.inner);
        if !context.durable.is_now() && self.starts_gated(&call) {
            return match inner.start_gated(&call) {
                Ok(shell) => Box::pin(async move {
                    let CallContext {
                        cancel,
                        progress,
                        durable,
                        ..
                    } = context;
                    bash::finish(shell, inner.options.caps, None, cancel, progress, durable).await
                }),
                Err(outcome) => Box::pin(std::future::ready(outcome)),
            };
        }
        Box::pin(async move { Inner::execute(inner, call, context).await })
    }

    /// bash outside a sandbox, when its shell holds at the gate (tried once).
    fn starts_gated(&self, call: &ToolCall) -> bool {
        call.name == bash::NAME && self.inner.sandbox.is_none() && self.inner.shells.gate_holds()
    }

    /// Removes the manifests of calls whose results are durable (and the blobs no
    /// other manifest names). Best effort: what is left is swept with its session.
    fn results_durable(&self, dispatches: &[Dispatch]) {
        if let Some(store) = &self.inner.options.blobs {
            let names: Vec<_> = dispatches
                .iter()
                .map(|d| (d.session_id.clone(), d.entry))
                .collect();
            let _ = store.release(&names);
        }
    }

    fn before_images(&self) -> Option<BlobStore> {
        self.inner.options.blobs.clone()
    }
}

fn outcome(result: Result<String, String>) -> ToolOutcome {
    match result {
        Ok(content) => ToolOutcome {
            status: ToolStatus::Ok,
            content,
        },
        Err(content) => error(content),
    }
}

/// Typed arguments from validated JSON.
/// Why `edit` or `write` (`name`) is not run in a read-only sandbox.
fn read_only(name: &str) -> String {
    format!(
        "`{name}` was not run: the sandbox is read-only (--sandbox read-only), so no file may be changed; tell the user what you would change instead"
    )
}

fn typed<T: DeserializeOwned>(name: &str, value: Value) -> Result<T, ToolOutcome> {
    serde_json::from_value(value).map_err(|_| {
        error(format!(
            "invalid arguments for `{name}` (the call was not run): they do not have the types of the tool's parameters"
        ))
    })
}

/// What the scan tool `name` (`list`, `grep`, `glob`) returns.
fn scanned(
    name: &str,
    value: Value,
    scan: Scan<'_>,
) -> Result<Result<String, String>, ToolOutcome> {
    match name {
        "list" => typed(name, value).map(|a| list::run(scan, a)),
        "grep" => typed(name, value).map(|a| grep::run(scan, a)),
        "glob" => typed(name, value).map(|a| glob::run(scan, a)),
        other => Ok(Err(format!("no tool named `{other}`"))),
    }
}

impl Inner {
    fn lock_changes(&self) -> std::sync::MutexGuard<'_, BTreeMap<CallId, Vec<FileChange>>> {
        self.changes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The call's arguments, checked against its tool's schema; or its result.
    fn arguments(&self, call: &ToolCall) -> Result<Value, ToolOutcome> {
        let Some(tool) = self.tools.iter().find(|t| t.spec.name == call.name) else {
            let names: Vec<&str> = self.tools.iter().map(|t| t.spec.name.as_str()).collect();
            return Err(error(format!(
                "no tool named `{}`; the tools are: {}",
                call.name,
                names.join(", ")
            )));
        };
        let value = arguments::parse(&call.name, &call.arguments).map_err(error)?;
        tool.schema
            .validate(&tool.spec.name, &value)
            .map_err(error)?;
        Ok(value)
    }

    /// A bash call's shell, started held at its gate.
    fn start_gated(&self, call: &ToolCall) -> Result<bash::Shell, ToolOutcome> {
        let args = self
            .arguments(call)
            .and_then(|value| typed(&call.name, value))?;
        self.shells.start(&call.id, None, &args, true)
    }

    async fn execute(this: Arc<Inner>, call: ToolCall, context: CallContext) -> ToolOutcome {
        let CallContext {
            cancel,
            progress,
            dispatch,
            run: _,
            durable,
        } = context;
        // Started before its dispatch was durable: nothing happens until it is.
        if !durable.wait().await {
            return error(format!(
                "`{}` was not run: its dispatch could not be made durable",
                call.name
            ));
        }
        let value = match this.arguments(&call) {
            Ok(value) => value,
            Err(outcome) => return outcome,
        };
        if cancel.is_cancelled() {
            return cancelled(&call.name);
        }
        let caps = this.options.caps;
        match call.name.as_str() {
            "bash" | OUTSIDE_TOOL => match typed(&call.name, value) {
                Ok(args) => {
                    this.shells
                        .run(
                            &call.id,
                            caps,
                            this.sandbox.as_ref().filter(|_| call.name == "bash"),
                            args,
                            cancel,
                            progress,
                        )
                        .await
                }
                Err(outcome) => outcome,
            },
            plan::NAME => plan::run(&call.arguments),
            // Quick and not cancellable once started: the change is made whole or
            // not at all, never reported cancelled while it still lands.
            "edit" | "write" if this.options.sandbox.mode == SandboxMode::ReadOnly => {
                error(read_only(&call.name))
            }
            "edit" | "write" => {
                let name = call.name.clone();
                let worker = Arc::clone(&this);
                let id = call.id.clone();
                let joined = tokio::task::spawn_blocking(move || {
                    // The before-image, durable before the file is replaced: kept
                    // when there is a store and the call's dispatch entry is known.
                    let keep = |image: BeforeImage<'_>| -> Result<(), String> {
                        let (Some(store), Some(dispatch)) = (&worker.options.blobs, &dispatch)
                        else {
                            return Ok(());
                        };
                        store
                            .save(dispatch, &id, &name, &[image])
                            .map(drop)
                            .map_err(|e| {
                                format!(
                                    "`{name}` did not change `{}`: its content could not be saved first for undo ({e})",
                                    worker.workspace.display_path(image.path)
                                )
                            })
                    };
                    let result = if name == "edit" {
                        typed(&name, value)
                            .map(|args| edit::run(&worker.workspace, caps, args, &keep))
                    } else {
                        typed(&name, value).map(|args| write::run(&worker.workspace, args, &keep))
                    };
                    match result {
                        Ok(Ok((content, change))) => {
                            worker
                                .lock_changes()
                                .entry(call.id)
                                .or_default()
                                .push(change);
                            outcome(Ok(content))
                        }
                        Ok(Err(message)) => error(message),
                        Err(outcome) => outcome,
                    }
                })
                .await;
                joined.unwrap_or_else(|e| error(format!("`{}` failed: {e}", call.name)))
            }
            _ => {
                let name = call.name.clone();
                let worker = Arc::clone(&this);
                let token = cancel.clone();
                let job = tokio::task::spawn_blocking(move || {
                    let scan = Scan {
                        ws: &worker.workspace,
                        caps,
                        cancel: &token,
                    };
                    let result = match name.as_str() {
                        "read" => typed(&name, value).map(|a| {
                            read::run(scan.ws, caps, a).map(|r| (r.text, Some((r.path, r.hash))))
                        }),
                        other => scanned(other, value, scan).map(|r| r.map(|t| (t, None))),
                    };
                    match result {
                        Ok(Ok((text, read))) => (outcome(Ok(text)), read),
                        Ok(Err(message)) => (error(message), None),
                        Err(outcome) => (outcome, None),
                    }
                });
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => cancelled(&call.name),
                    joined = job => match joined {
                        Ok((outcome, read)) => {
                            // Only a read whose result is delivered counts as read.
                            if let Some((path, hash)) = read {
                                this.workspace.record_hash(&path, hash);
                            }
                            outcome
                        }
                        Err(e) => error(format!("`{}` failed: {e}", call.name)),
                    },
                }
            }
        }
    }
}
