//! The `task` tool (SPEC.md §29): a sub-agent is a full run of its own, in a session
//! file beside its parent's whose header links back to the parent's dispatch of the
//! call, started with `run_agent` on the parent's provider, a subset of its tools,
//! its secrets, permissions and approver, and limits sized from what the parent had
//! left (passed in with the call, read from the parent's machine). The call's result
//! names the child session and carries its final text, stop reason and usage; the
//! link and the usage are recorded in the call's `tool_result` (`take_child_run`).
//! Cancelling the call interrupts the child; whatever goes wrong with the child is
//! the call's error result, never the parent's failure.

mod args;
pub(crate) mod children;
mod subset;

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use chrono::Utc;

use crate::{Approver, RunOptions, RunResult, SessionTarget, Task, run_agent};
use xcsh_log::secrets::Secrets;
use xcsh_log::{ChildRun, ParentLink, SessionHeader, SessionWriter};
use xcsh_machine::{
    CallId, Limits, Permissions, StopReason, TASK_TOOL, ToolCall, ToolOutcome, ToolStatus,
};
use xcsh_ports::outcome::error;
use xcsh_ports::{CANCELLED_NOTE, OutputStream, RunHeadroom};
use xcsh_providers::{BoxFuture, Provider};
use xcsh_tools::{CallContext, Layer, Layered, ToolExecutor, ToolSpec};

pub use args::spec;
use args::{TaskArgs, child_tools, parse};
use subset::{AgentProvider, Only};

/// What a sub-agent is told besides its parent's system prompt.
pub const SUBAGENT_PROMPT: &str = "You are a sub-agent: another agent gave you the task in the user's message with its `task` tool. Do it with the tools you have, without asking questions (no one will answer them). Your final message is all the other agent receives of your work: make it complete and to the point.";

/// Offers the `task` tool in the run `opts` describes: its tools are wrapped so that
/// a `task` call starts a sub-agent with what the run has (its provider, tools,
/// permissions, approver, secrets, system prompt and concurrency cap).
pub fn delegating(opts: RunOptions) -> RunOptions {
    let delegation = Delegation {
        tools: Arc::clone(&opts.tools),
        parent: Arc::new(ParentRun {
            provider: Arc::clone(&opts.provider),
            approver: opts.approver.clone(),
            permissions: opts.permissions,
            secrets: opts.secrets.clone(),
            max_parallel_tools: opts.max_parallel_tools,
            system_prompt: opts.system_prompt.clone(),
            provider_record: opts.provider_record.clone(),
        }),
        children: Arc::default(),
    };
    let tools: Arc<dyn ToolExecutor> = Arc::new(Layered::new(Arc::clone(&opts.tools), delegation));
    RunOptions { tools, ..opts }
}

/// What a sub-agent inherits from its parent's run.
struct ParentRun {
    provider: Arc<dyn Provider>,
    approver: Option<Arc<dyn Approver>>,
    permissions: Permissions,
    secrets: Secrets,
    max_parallel_tools: NonZeroUsize,
    system_prompt: String,
    /// What `provider` is made of, recorded in the sub-agent's session too.
    provider_record: Option<xcsh_log::ProviderRecord>,
}

/// The layer that adds `task` to the run's executor.
struct Delegation {
    /// The run's executor (the one this layer is on): a sub-agent's tools are a
    /// subset of its tools.
    tools: Arc<dyn ToolExecutor>,
    parent: Arc<ParentRun>,
    /// The child run of each `task` call that settled, until the owner takes it.
    children: Arc<Mutex<BTreeMap<CallId, ChildRun>>>,
}

impl Delegation {
    /// Starts the sub-agent of `call` and returns its future, or the error result
    /// of a call that cannot start one (one made outside a run has no dispatch to
    /// link a child to).
    fn start(
        &self,
        call: ToolCall,
        context: CallContext,
    ) -> Result<BoxFuture<ToolOutcome>, String> {
        let CallContext {
            cancel,
            progress,
            dispatch: Some(dispatch),
            run: Some(run),
            // Not gated (`starts_gated` is false): durable before the call starts.
            durable: _,
        } = context
        else {
            return Err(
                "error: `task` starts a sub-agent only inside a run; no sub-agent was started"
                    .into(),
            );
        };
        let args = parse(&call.arguments).map_err(|why| {
            format!("error: the arguments of `task` are wrong: {why}; no sub-agent was started")
        })?;
        let parent_tools: Vec<String> = self.tools.specs().into_iter().map(|s| s.name).collect();
        let names = child_tools(args.tools.as_deref(), &parent_tools, &self.tools.mutating())
            .map_err(|why| format!("error: {why}; no sub-agent was started"))?;
        let limits = child_limits(&run, args.max_steps);
        let cannot = |e: &dyn std::fmt::Display| format!("error: cannot start the sub-agent: {e}");
        let dir = dispatch
            .session_path
            .parent()
            .ok_or_else(|| cannot(&"the parent session has no folder"))?;
        let (session_id, name) = xcsh_log::new_session_name(Utc::now());
        let path = dir.join(&name);
        let header = SessionHeader {
            session_id: session_id.clone(),
            cwd: run.cwd.clone(),
            forked_from: None,
            parent: Some(ParentLink {
                session_id: dispatch.session_id.clone(),
                entry: dispatch.entry,
                call_id: call.id.clone(),
            }),
            imported: None,
            provider: self.parent.provider_record.clone(),
        };
        drop(SessionWriter::create(&path, header, Utc::now()).map_err(|e| cannot(&e))?);
        let child = ChildRun {
            session_id,
            file: name,
            usage: None,
        };
        let parent = &self.parent;
        let TaskArgs {
            description,
            prompt,
            ..
        } = args;
        let opts = RunOptions {
            session: SessionTarget::Existing {
                path: path.clone(),
                at: None,
            },
            task: Task::Prompt(prompt),
            limits,
            system_prompt: format!("{}\n\n{SUBAGENT_PROMPT}", parent.system_prompt),
            provider: Arc::new(AgentProvider {
                inner: Arc::clone(&parent.provider),
                agent: description.clone(),
            }),
            tools: Arc::new(Layered::new(Arc::clone(&self.tools), Only(names))),
            permissions: parent.permissions,
            approver: parent.approver.clone(),
            max_parallel_tools: parent.max_parallel_tools,
            secrets: parent.secrets.clone(),
            // A sub-agent runs without memory: no index, no extraction (SPEC §29.1).
            memory: None,
            provider_record: parent.provider_record.clone(),
        };
        let children = Arc::clone(&self.children);
        let call_id = call.id;
        let mut handle = match run_agent(opts) {
            Ok(handle) => handle,
            Err(e) => {
                // The file exists: the result still names it.
                lock(&children).insert(call_id, child);
                return Err(cannot(&e));
            }
        };
        Ok(Box::pin(async move {
            let interrupter = handle.interrupter();
            let (_, closed) = tokio::sync::mpsc::unbounded_channel();
            let mut events = std::mem::replace(&mut handle.events, closed);
            // Transient: the child's tool calls, as the call's live output.
            tokio::spawn(async move {
                while let Some(event) = events.recv().await {
                    if let crate::RunEvent::ToolCall {
                        name, arguments, ..
                    } = event
                    {
                        progress.report(OutputStream::Stdout, &format!("[{name}] {arguments}\n"));
                    }
                }
            });
            let result = handle.result();
            tokio::pin!(result);
            let result = tokio::select! {
                biased;
                r = &mut result => r,
                () = cancel.cancelled() => {
                    // Interrupt flows down: the child settles `interrupted`.
                    interrupter.interrupt();
                    result.await
                }
            };
            let (outcome, usage) = match result {
                Ok(r) => (report(&description, &child, &r), Some(r.usage)),
                Err(e) => (
                    error(format!(
                        "error: the sub-agent `{description}` (session {}) failed: {e}",
                        child.session_id
                    )),
                    None,
                ),
            };
            lock(&children).insert(call_id, ChildRun { usage, ..child });
            outcome
        }))
    }
}

fn lock(
    children: &Mutex<BTreeMap<CallId, ChildRun>>,
) -> std::sync::MutexGuard<'_, BTreeMap<CallId, ChildRun>> {
    // A poisoned lock only means a call panicked while inserting: the map holds.
    children.lock().unwrap_or_else(|p| p.into_inner())
}

/// The sub-agent's limits: at most half the steps left in the parent's window (at
/// least 1; `max_steps` may ask for fewer), half the spend budget left (at least 1
/// token; no cap when the parent has none), and the parent's output and compaction
/// limits (SPEC.md §29.3).
fn child_limits(run: &RunHeadroom, asked: Option<u32>) -> Limits {
    let steps_left = run.limits.max_steps.saturating_sub(run.steps_in_window);
    let half = (steps_left / 2).max(1);
    let max_tokens = match run.limits.max_tokens {
        0 => 0,
        cap => (cap.saturating_sub(run.spent) / 2).max(1),
    };
    Limits {
        max_steps: asked.map_or(half, |n| n.min(half)),
        max_tokens,
        ..run.limits
    }
}

/// The result the parent's model reads of a sub-agent's run.
fn report(description: &str, child: &ChildRun, r: &RunResult) -> ToolOutcome {
    let how = match &r.stop_reason {
        StopReason::Completed => "completed".to_string(),
        StopReason::MaxSteps { limit } => format!("stopped: it used its {limit} step(s)"),
        StopReason::MaxTokens { limit, spent } => {
            format!("stopped: it spent {spent} tokens of its budget of {limit}")
        }
        StopReason::OutputLimit => "stopped: a response hit its output limit".into(),
        StopReason::ContentFilter => "stopped: the provider withheld a response".into(),
        StopReason::Interrupted => "was interrupted".into(),
        StopReason::ProviderError { error } => {
            format!("failed: the provider failed: {}", error.message)
        }
        StopReason::ContextOverflow { error, .. } => format!(
            "failed: its context is too long for the model: {}",
            error.message
        ),
        StopReason::Crashed => "crashed".into(),
    };
    let head = format!(
        "the sub-agent `{description}` (session {}) {how}, after {} step(s) spending {} tokens",
        child.session_id,
        r.steps,
        r.usage.spend()
    );
    let text = if r.final_text.is_empty() {
        "(it wrote no final message)"
    } else {
        r.final_text.as_str()
    };
    let (status, content) = match &r.stop_reason {
        StopReason::Completed => (
            ToolStatus::Ok,
            format!("{head}. Its final message:\n\n{text}"),
        ),
        StopReason::Interrupted => (
            ToolStatus::Cancelled,
            format!("{CANCELLED_NOTE}: {head}. Its last message:\n\n{text}"),
        ),
        StopReason::MaxSteps { .. }
        | StopReason::MaxTokens { .. }
        | StopReason::OutputLimit
        | StopReason::ContentFilter
        | StopReason::ProviderError { .. }
        | StopReason::ContextOverflow { .. }
        | StopReason::Crashed => (
            ToolStatus::Error,
            format!("error: {head}. Its last message:\n\n{text}"),
        ),
    };
    ToolOutcome { status, content }
}

/// `task` is gated by what its sub-agent may do (the machine's `read_only_task`),
/// not as a mutating tool: `mutating` keeps the inner executor's.
impl Layer for Delegation {
    fn specs(&self, mut inner: Vec<ToolSpec>) -> Vec<ToolSpec> {
        if !inner.iter().any(|s| s.name == TASK_TOOL) {
            inner.push(args::spec());
        }
        inner
    }

    fn take_child_run(&self, id: &CallId) -> Option<ChildRun> {
        lock(&self.children).remove(id)
    }

    fn owns(&self, name: &str) -> bool {
        name == TASK_TOOL
    }

    fn execute(&self, call: ToolCall, context: CallContext) -> BoxFuture<ToolOutcome> {
        match self.start(call, context) {
            Ok(work) => work,
            Err(content) => Box::pin(async move { error(content) }),
        }
    }
}

#[cfg(test)]
mod tests;
