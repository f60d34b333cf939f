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
    Body, Dag, LogError, Record, SessionHeader, SessionLog, SessionWriter, entry_decision,
    entry_inputs,
};
use crate::machine::{
    ApprovalScope, EntryId, Limits, Machine, Pending, Permissions, Phase, ToolCall, Verdict,
};
use crate::provider::{BoxFuture, Provider};
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
    /// The policy for mutating tools. `Ask` without an `approver` allows them.
    pub permissions: Permissions,
    /// Answers approval questions in `Ask` mode.
    pub approver: Option<Arc<dyn Approver>>,
}

/// A question for the user: may this mutating call run?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub call: ToolCall,
    /// The workspace the call would run in.
    pub cwd: String,
}

/// The user's answer: `y` = allow once, `a` = this tool for the session, `A` = this
/// exact call for the session, `n` = deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalAnswer {
    pub verdict: Verdict,
    pub scope: ApprovalScope,
}

/// Answers approval questions (the interactive prompt, or a library callback).
pub trait Approver: Send + Sync + 'static {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<ApprovalAnswer>;
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
    let (mut writer, machine, leaf, notices, session_id, cwd) = open_session(&opts.session)?;
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

/// The open writer, the rebuilt machine, the leaf, notices, session id and cwd.
type Opened = (SessionWriter, Machine, EntryId, Vec<String>, String, String);

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
                cwd.clone(),
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
    let cwd = log.header().cwd.clone();
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
        if boundary != Some(target) {
            return Err(RuntimeError::NotABoundary {
                entry: target,
                phase: if machine.is_running() {
                    describe(machine.phase())
                } else {
                    "the decisions it led to come after it".into()
                },
                suggestion: {
                    let before = match boundary {
                        Some(b) if b != EntryId(0) => {
                            format!("entry {b} (the end of the previous run)")
                        }
                        Some(_) | None => "entry 0 (the session start)".to_string(),
                    };
                    match run_end_after(&log, last, target) {
                        Some(end) => format!("{before} or entry {end} (where this run finished)"),
                        None => before,
                    }
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
    Ok((writer, machine, leaf, notices, session_id, cwd))
}

/// Replays the inputs on the path to `leaf` through a fresh machine (effects are
/// discarded: they already happened). Returns the machine and the last entry on
/// the path where no run was in progress and every decision made so far is on the
/// path (a settled boundary).
pub fn rebuild_machine(
    log: &SessionLog,
    leaf: EntryId,
) -> Result<(Machine, Option<EntryId>), RuntimeError> {
    let dag = Dag::from_log(log);
    let path = dag.path_to_root(leaf)?;
    let mut machine = Machine::new();
    let mut boundary = None;
    // Decisions the machine made whose entries have not yet appeared on the path: an
    // entry is a boundary only when none are owed (the run's `run_finished` is in).
    let mut owed = 0usize;
    for id in path {
        let entry = log.get(id).ok_or(RuntimeError::NoSuchEntry {
            path: log.path.clone(),
            entry: id,
        })?;
        for input in entry_inputs(entry) {
            owed += machine
                .handle(input)
                .iter()
                .filter(|e| matches!(e, crate::machine::Effect::Record(_)))
                .count();
        }
        if entry_decision(entry).is_some() {
            owed = owed.saturating_sub(1);
        }
        if !machine.is_running() && owed == 0 {
            boundary = Some(id);
        }
    }
    Ok((machine, boundary))
}

/// The first `run_finished` after `target` on the branch ending at `leaf`.
fn run_end_after(log: &SessionLog, leaf: EntryId, target: EntryId) -> Option<EntryId> {
    let path = Dag::from_log(log).path_to_root(leaf).ok()?;
    let from = path.iter().position(|id| *id == target)?;
    path[from..].iter().copied().find(|id| {
        log.get(*id)
            .and_then(entry_decision)
            .is_some_and(|d| matches!(d, crate::machine::Decision::RunFinished { .. }))
    })
}

fn describe(phase: &Phase) -> String {
    match phase {
        Phase::Idle => "idle".into(),
        Phase::Streaming(s) => format!("step {} streaming", s.step),
        Phase::RunningTools(t) => format!(
            "{} tool call(s) of step {} running",
            t.pending.len() + t.awaiting.len(),
            t.step
        ),
        Phase::Compacting(_) => "compacting".into(),
        Phase::Finished(r) => format!("finished: {r:?}"),
    }
}
