//! The runtime: one owner task per run owns the [`Machine`] and the log writer;
//! providers, tools and the user send it inputs over one channel. Every input is
//! recorded before it is applied; every decision is recorded as it is made; a
//! decision that starts a model call or a tool is durable (fsynced) before it starts.

mod inflight;
pub mod instructions;
pub mod interrupted;
pub mod memory;
mod owner;
mod session;
pub mod task;

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

pub use session::{Reopened, recover, reopen_at_leaf};
pub use xcsh_journal::{RunEvent, RunResult};
pub use xcsh_log::machine_at::{branch_at, move_workspace, rebuild_machine};
pub use xcsh_ports::{ApprovalAnswer, ApprovalRequest, Approver};

use xcsh_log::LogError;
use xcsh_machine::{EntryId, Limits, Pending, Permissions};
use xcsh_providers::Provider;
use xcsh_tools::ToolExecutor;

/// Which session a run writes to.
#[derive(Debug, Clone)]
pub enum SessionTarget {
    /// Create a new session file at `path`.
    New {
        path: PathBuf,
        session_id: String,
        cwd: String,
    },
    /// Continue an existing session at its leaf, or at `at` (a new branch).
    Existing { path: PathBuf, at: Option<EntryId> },
}

/// What a run does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Task {
    /// Answer a user message (the usual run).
    Prompt(String),
    /// Compact the session's context now (`/compact`), without a model step.
    Compact,
}

/// Everything a run needs.
pub struct RunOptions {
    pub session: SessionTarget,
    pub task: Task,
    pub limits: Limits,
    pub system_prompt: String,
    pub provider: Arc<dyn Provider>,
    pub tools: Arc<dyn ToolExecutor>,
    /// The policy for mutating tools. `Ask` without an `approver` allows them.
    pub permissions: Permissions,
    /// Answers approval questions in `Ask` mode.
    pub approver: Option<Arc<dyn Approver>>,
    /// At most this many tool calls of a step run at once; the others wait, in
    /// dispatch order ([`DEFAULT_MAX_PARALLEL_TOOLS`] unless configured).
    pub max_parallel_tools: NonZeroUsize,
    /// Secret values kept out of the log: replaced in tool results and provider
    /// errors before they become inputs, and in every line written (§21.5).
    pub secrets: xcsh_log::secrets::Secrets,
    /// Memory (SPEC.md §28): `None` = off. With it, the turn's memory index is
    /// recorded and carried, and a completed turn is followed by an extraction.
    pub memory: Option<memory::MemoryOptions>,
    /// What `provider` is made of (SPEC.md §22.2): appended as a `provider` entry
    /// before the run's prompt when the branch's last one differs (or there is
    /// none), for a later `--resume`. `None` records nothing.
    pub provider_record: Option<xcsh_log::ProviderRecord>,
}

impl RunOptions {
    /// A run of `task` on `session` with `provider` and `tools`, and the defaults
    /// for the rest: default limits, no system prompt, `yolo` (no one to ask), the
    /// default parallelism, no secrets, no memory, no provider record. A caller
    /// sets what it needs with struct update syntax.
    pub fn new(
        session: SessionTarget,
        task: Task,
        provider: Arc<dyn Provider>,
        tools: Arc<dyn ToolExecutor>,
    ) -> RunOptions {
        RunOptions {
            session,
            task,
            limits: Limits::default(),
            system_prompt: String::new(),
            provider,
            tools,
            permissions: Permissions::Yolo,
            approver: None,
            max_parallel_tools: DEFAULT_MAX_PARALLEL_TOOLS,
            secrets: Default::default(),
            memory: None,
            provider_record: None,
        }
    }
}

/// How many tool calls run at once unless configured (`--max-parallel-tools`).
pub const DEFAULT_MAX_PARALLEL_TOOLS: NonZeroUsize = NonZeroUsize::new(8).unwrap();

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("the run's task ended unexpectedly: {0}")]
    TaskFailed(String),
}

/// Commands the user sends to a running run.
#[derive(Debug)]
pub(crate) enum Command {
    Steer(String),
    FollowUp(String),
    Interrupt,
    Pending(oneshot::Sender<Pending>),
}

/// A running run: its event stream, its commands, and its result.
pub struct RunHandle {
    pub events: mpsc::UnboundedReceiver<RunEvent>,
    commands: mpsc::UnboundedSender<Command>,
    task: tokio::task::JoinHandle<Result<RunResult, RuntimeError>>,
    pub session_path: PathBuf,
}

impl RunHandle {
    /// Queue a message for the next safe boundary (after the step's tools settle).
    /// False when the run is over and took nothing.
    pub fn steer(&self, text: impl Into<String>) -> bool {
        self.commands.send(Command::Steer(text.into())).is_ok()
    }

    /// Queue a message for when the run would otherwise finish. False when the run
    /// is over and took nothing.
    pub fn follow_up(&self, text: impl Into<String>) -> bool {
        self.commands.send(Command::FollowUp(text.into())).is_ok()
    }

    /// Stop the run: in-flight work is cancelled and settles as such. False when
    /// the run is already over.
    pub fn interrupt(&self) -> bool {
        self.commands.send(Command::Interrupt).is_ok()
    }

    /// A sender for commands that outlives borrows of the handle (signal handlers).
    pub fn interrupter(&self) -> Interrupter {
        Interrupter(self.commands.clone())
    }

    /// The queued steers and follow-ups (empty once the run has finished).
    pub async fn pending(&self) -> Pending {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(Command::Pending(tx)).is_err() {
            return Pending::default();
        }
        rx.await.unwrap_or_default()
    }

    /// Waits for the run to finish.
    pub async fn result(self) -> Result<RunResult, RuntimeError> {
        match self.task.await {
            Ok(r) => r,
            Err(e) => Err(RuntimeError::TaskFailed(e.to_string())),
        }
    }
}

/// Interrupts a run from anywhere (a Ctrl-C handler).
#[derive(Debug, Clone)]
pub struct Interrupter(mpsc::UnboundedSender<Command>);

impl Interrupter {
    pub fn interrupt(&self) {
        let _ = self.0.send(Command::Interrupt);
    }
}

/// Opens or creates the session (synchronously, so that a locked session fails at
/// once), rebuilds the machine, records the prompt, and spawns the owner task.
pub fn run_agent(opts: RunOptions) -> Result<RunHandle, RuntimeError> {
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let (mut writer, machine, mut leaf, mut notices, session_id, cwd, lost) =
        session::open_session(&opts.session, opts.provider_record.as_ref())?;
    // A new session's header holds it; a run on an existing one records a change.
    if let (SessionTarget::Existing { .. }, Some(provider)) = (&opts.session, &opts.provider_record)
    {
        session::record_provider(&mut writer, &mut leaf, provider)?;
    }
    // What the calls a crash interrupted may have changed (§21.6).
    if let (false, Some(store)) = (lost.is_empty(), opts.tools.before_images()) {
        match interrupted::interrupted(&store, &session_id, &lost, leaf) {
            Ok(calls) => notices.extend(
                calls
                    .iter()
                    .map(|c| interrupted::describe(c, std::path::Path::new(&cwd), &session_id)),
            ),
            Err(e) => notices.push(format!(
                "cannot tell what the interrupted calls changed: {e}"
            )),
        }
    }
    let path = writer.path().to_path_buf();
    let _ = events_tx.send(RunEvent::RunStarted {
        session_id: session_id.clone(),
        session_path: path.display().to_string(),
        leaf,
    });
    for message in notices {
        let _ = events_tx.send(RunEvent::Notice { message });
    }
    writer.sync()?;
    writer.set_secrets(opts.secrets.clone());
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let owner = owner::Owner::new(
        opts,
        writer,
        machine,
        owner::Session {
            leaf,
            id: session_id,
            cwd,
        },
        events_tx,
        cmd_rx,
    );
    let task = tokio::spawn(owner.run());
    Ok(RunHandle {
        events: events_rx,
        commands: cmd_tx,
        task,
        session_path: path,
    })
}
