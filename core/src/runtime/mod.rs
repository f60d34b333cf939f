//! The runtime: one owner task per run owns the [`Machine`] and the log writer;
//! providers, tools and the user send it inputs over one channel. Every input is
//! recorded before it is applied; every decision is recorded as it is made; a
//! decision that starts a model call or a tool is durable (fsynced) before it starts.

mod events;
mod owner;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Utc;
use tokio::sync::{mpsc, oneshot};

pub use events::{RunEvent, RunResult};

use crate::log::{
    Body, Dag, LogError, Record, SessionHeader, SessionLog, SessionWriter, entry_inputs,
};
use crate::machine::{EntryId, Limits, Machine, Pending, Phase};
use crate::provider::Provider;
use crate::tools::ToolExecutor;

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

/// Everything a run needs.
pub struct RunOptions {
    pub session: SessionTarget,
    pub prompt: String,
    pub limits: Limits,
    pub system_prompt: String,
    pub provider: Arc<dyn Provider>,
    pub tools: Arc<dyn ToolExecutor>,
}

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(
        "entry {entry} is inside a run ({phase}); continue from a settled boundary instead: {suggestion}"
    )]
    NotABoundary {
        entry: EntryId,
        phase: String,
        suggestion: String,
    },
    #[error("{path}: there is no entry {entry} in this session")]
    NoSuchEntry { path: PathBuf, entry: EntryId },
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
    pub fn steer(&self, text: impl Into<String>) {
        let _ = self.commands.send(Command::Steer(text.into()));
    }

    /// Queue a message for when the run would otherwise finish.
    pub fn follow_up(&self, text: impl Into<String>) {
        let _ = self.commands.send(Command::FollowUp(text.into()));
    }

    /// Stop the run: in-flight work is cancelled and settles as such.
    pub fn interrupt(&self) {
        let _ = self.commands.send(Command::Interrupt);
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
    let (mut writer, machine, leaf, notices, session_id) = open_session(&opts.session)?;
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
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let owner = owner::Owner::new(opts, writer, machine, leaf, events_tx, cmd_rx, session_id);
    let task = tokio::spawn(owner.run());
    Ok(RunHandle {
        events: events_rx,
        commands: cmd_tx,
        task,
        session_path: path,
    })
}

type Opened = (SessionWriter, Machine, EntryId, Vec<String>, String);

fn open_session(target: &SessionTarget) -> Result<Opened, RuntimeError> {
    match target {
        SessionTarget::New {
            path,
            session_id,
            cwd,
        } => {
            let header = SessionHeader {
                session_id: session_id.clone(),
                cwd: cwd.clone(),
                forked_from: None,
            };
            let writer = SessionWriter::create(path, header, Utc::now())?;
            Ok((
                writer,
                Machine::new(),
                EntryId(0),
                Vec::new(),
                session_id.clone(),
            ))
        }
        SessionTarget::Existing { path, at } => open_existing(path, *at),
    }
}

fn open_existing(path: &Path, at: Option<EntryId>) -> Result<Opened, RuntimeError> {
    let (mut writer, log) = SessionWriter::open(path)?;
    let mut notices = Vec::new();
    if let Some(torn) = &log.torn_tail {
        notices.push(format!(
            "{}: repaired a torn last line: {} byte(s) at offset {} were cut off{}",
            path.display(),
            torn.len,
            torn.offset,
            torn.sidecar
                .as_ref()
                .map(|p| format!(" and kept in {}", p.display()))
                .unwrap_or_default()
        ));
    }
    let session_id = log.header().session_id.clone();
    let last = log.leaf();
    let target = at.unwrap_or(last);
    if log.get(target).is_none() {
        return Err(RuntimeError::NoSuchEntry {
            path: path.to_path_buf(),
            entry: target,
        });
    }
    let (mut machine, boundary) = rebuild_machine(&log, target)?;
    let mut leaf = target;
    if at.is_some() && target != last {
        if machine.is_running() {
            return Err(RuntimeError::NotABoundary {
                entry: target,
                phase: describe(machine.phase()),
                suggestion: match boundary {
                    Some(b) if b != EntryId(0) => {
                        format!("entry {b} (the end of the previous run)")
                    }
                    Some(_) | None => "entry 0 (the session start)".to_string(),
                },
            });
        }
        let (id, _) = writer.append(
            target,
            Utc::now(),
            &Body::Record(Record::Branch { from_leaf: last }),
        )?;
        leaf = id;
        notices.push(format!(
            "continuing from entry {target} on a new branch (the previous leaf was {last})"
        ));
    }
    if machine.is_running() {
        // The previous process died mid-run: settle what it left unsettled.
        let note = format!(
            "the previous run ended without finishing ({}); unsettled work is settled now",
            describe(machine.phase())
        );
        let (id, _) = writer.append(
            leaf,
            Utc::now(),
            &Body::Record(Record::Recovered { note: note.clone() }),
        )?;
        leaf = id;
        for effect in machine.handle(crate::machine::Input::Recover) {
            if let crate::machine::Effect::Record(d) = effect {
                let (id, _) = writer.append(leaf, Utc::now(), &Body::Decision(d))?;
                leaf = id;
            }
        }
        notices.push(note);
    }
    Ok((writer, machine, leaf, notices, session_id))
}

/// Replays the inputs on the path to `leaf` through a fresh machine (effects are
/// discarded: they already happened). Returns the machine and the last entry on
/// the path where no run was in progress.
pub fn rebuild_machine(
    log: &SessionLog,
    leaf: EntryId,
) -> Result<(Machine, Option<EntryId>), RuntimeError> {
    let dag = Dag::build(&log.entries);
    let path = dag.path_to_root(leaf)?;
    let mut machine = Machine::new();
    let mut boundary = None;
    for id in path {
        let entry = log.get(id).ok_or(RuntimeError::NoSuchEntry {
            path: log.path.clone(),
            entry: id,
        })?;
        for input in entry_inputs(entry) {
            let _ = machine.handle(input);
        }
        if !machine.is_running() {
            boundary = Some(id);
        }
    }
    Ok((machine, boundary))
}

fn describe(phase: &Phase) -> String {
    match phase {
        Phase::Idle => "idle".into(),
        Phase::Streaming(s) => format!("step {} streaming", s.step),
        Phase::RunningTools(t) => format!(
            "{} tool call(s) of step {} running",
            t.pending.len(),
            t.step
        ),
        Phase::Compacting(_) => "compacting".into(),
        Phase::Finished(r) => format!("finished: {r:?}"),
    }
}
