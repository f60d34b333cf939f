//! The interactive commands' work, shared by the terminal UI and the plain line
//! mode: each one reads or changes the session and returns what to tell the user.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use tokio::sync::{mpsc, oneshot};
use xcsh_inspect::Style;
use xcsh_log::{Body, Record, SessionLog, read_session};
use xcsh_machine::{
    ApprovalScope, Decision, EntryId, Permissions, RunEnd, ToolCall, Usage, Verdict,
};
use xcsh_providers::BoxFuture;
use xcsh_runtime::{
    ApprovalAnswer, ApprovalRequest, Approver, RunHandle, RunOptions, SessionTarget, Task,
    branch_at, run_agent,
};

use crate::sessions;
use crate::setup::Setup;

/// Every command with its one-line help, in the order `/help` lists them.
pub const COMMANDS: &[(&str, &str)] = &[
    ("help", "the commands and keys"),
    (
        "status",
        "provider, model, permissions, session, limits, what is allowed",
    ),
    (
        "tree",
        "the branch tree of this session (the TUI's: navigate, continue from, label)",
    ),
    (
        "at",
        "ENTRY: continue from an earlier entry or label (a new branch)",
    ),
    ("fork", "a new session file from here"),
    ("label", "NAME: name the current entry"),
    ("resume", "pick another session of this workspace"),
    (
        "new",
        "start a new conversation (a new session of this workspace)",
    ),
    ("usage", "tokens spent in this session"),
    ("diff", "what this session changed in the workspace"),
    ("plan", "the task plan at the current entry"),
    (
        "undo",
        "revert the last turn's file changes (if unchanged since)",
    ),
    ("compact", "summarize the conversation now"),
    (
        "memory",
        "[NAME]: the memory index, or a note (forget NAME deletes one)",
    ),
    ("model", "[NAME]: show or switch the model"),
    ("pending", "the queued steers and follow-ups"),
    (
        "queue",
        "TEXT: a follow-up, delivered when the turn would finish (idle: sent now)",
    ),
    (
        "clear",
        "clear the screen only (the conversation goes on; /new starts a new one)",
    ),
    ("exit", "leave xcsh (also /quit, Ctrl-D)"),
];

/// Whether `/name` is a command: one of [`COMMANDS`] or `/quit` (`/exit`'s alias,
/// left out of the popup so that it lists each command once).
pub fn is_command(name: &str) -> bool {
    name == "quit" || COMMANDS.iter().any(|(n, _)| *n == name)
}

/// An approval question and where its answer goes.
pub type Question = (ApprovalRequest, oneshot::Sender<ApprovalAnswer>);

/// Puts approval questions to the front end over a channel; a question that cannot
/// be put, or is dropped unanswered, is a denial.
pub struct ChannelApprover(pub mpsc::UnboundedSender<Question>);

impl Approver for ChannelApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<ApprovalAnswer> {
        let (tx, rx) = oneshot::channel();
        let sent = self.0.send((request, tx)).is_ok();
        Box::pin(async move {
            let deny = ApprovalAnswer::new(Verdict::Deny, ApprovalScope::Once);
            if !sent {
                return deny;
            }
            rx.await.unwrap_or(deny)
        })
    }
}

/// Starts a run of `task` in the session at `session` (a new session of the
/// workspace when there is none yet), and sets `session` to the run's session; also
/// whether that session is new.
pub fn start(
    setup: &Setup,
    session: &mut Option<PathBuf>,
    task: Task,
    approver: Arc<dyn Approver>,
) -> Result<(RunHandle, bool)> {
    let handle = run(setup, session.as_deref(), task, approver)?;
    let new = session.is_none();
    *session = Some(handle.session_path.clone());
    Ok((handle, new))
}

fn run(
    setup: &Setup,
    session: Option<&Path>,
    task: Task,
    approver: Arc<dyn Approver>,
) -> Result<RunHandle> {
    let session = match session {
        Some(path) => SessionTarget::Existing {
            path: path.to_path_buf(),
            at: None,
        },
        None => {
            let (session_id, path) = sessions::new_session(&setup.cwd)?;
            SessionTarget::New {
                path,
                session_id,
                cwd: setup.cwd.display().to_string(),
            }
        }
    };
    Ok(run_agent(crate::setup::offer_task(
        setup.delegate,
        RunOptions {
            session,
            task,
            limits: setup.limits,
            system_prompt: setup.system_prompt.clone(),
            provider: Arc::clone(&setup.provider),
            tools: Arc::clone(&setup.tools),
            permissions: setup.permissions,
            approver: Some(approver),
            max_parallel_tools: setup.max_parallel_tools,
            secrets: setup.secrets.clone(),
            memory: setup.memory.clone(),
            provider_record: Some(setup.choice.clone()),
        },
    ))?)
}

/// `/at ENTRY`: ENTRY is `N`, `#N` or a label's name (SPEC.md §25).
pub fn at(path: &Path, arg: &str) -> Result<String> {
    if arg.trim().is_empty() {
        anyhow::bail!(
            "/at ENTRY: give an entry id (a number such as 12) or a label's name (see /tree)"
        );
    }
    continue_at(path, xcsh_inspect::resolve_entry_at(path, arg)?)
}

/// Continues from `entry` on a new branch (`/at`, Enter in the tree navigator).
pub fn continue_at(path: &Path, entry: EntryId) -> Result<String> {
    let id = branch_at(path, entry)?;
    Ok(format!(
        "continuing from entry {entry} (branch record {id}); the next prompt goes there"
    ))
}

/// The context size the status line shows for the branch ending at the session's
/// leaf, as a running session shows it: the newer of its last step's reported
/// context and its last compaction's size after it; `None` before either (or when
/// that step reported none).
pub fn branch_context(log: &SessionLog) -> Result<Option<u64>> {
    let branch = xcsh_log::Dag::from_log(log).path_to_root(log.leaf())?;
    let newest = branch
        .iter()
        .rev()
        .find_map(|id| match log.get(*id).map(|e| &e.body) {
            Some(Body::Record(Record::Step(s))) => Some(s.message.usage.context_tokens()),
            Some(Body::Decision(Decision::Compacted { tokens_after, .. })) => Some(*tokens_after),
            _ => None,
        });
    Ok(newest.filter(|t| *t > 0))
}

/// `/usage`.
pub fn usage(path: &Path) -> Result<String> {
    let log = read_session(path)?;
    let mut total = Usage::default();
    let mut runs = 0;
    for e in &log.entries {
        if let Body::Decision(Decision::RunFinished(RunEnd { usage, .. })) = &e.body {
            total.add(usage);
            runs += 1;
        }
    }
    let approx = if total.estimated { "~" } else { "" };
    Ok(format!(
        "{runs} run(s) · input {approx}{} · output {approx}{} · cache read {} · cache write {} · total {approx}{}",
        total.input_tokens,
        total.output_tokens,
        total.cache_read_tokens,
        total.cache_write_tokens,
        total.spend()
    ))
}

/// `/tree` as text.
pub fn tree_text(path: &Path) -> Result<String> {
    let log = read_session(path)?;
    let tree = xcsh_inspect::tree::build(&log, false);
    Ok(xcsh_inspect::tree::render(&tree, Style::plain()))
}

/// `/label NAME` on `entry` (the leaf when `None`).
pub fn label(path: &Path, entry: Option<EntryId>, name: &str) -> Result<String> {
    if name.is_empty() {
        anyhow::bail!("/label NAME: give the name");
    }
    let entry = match entry {
        Some(e) => e,
        None => read_session(path)?.leaf(),
    };
    let (id, _) = xcsh_inspect::fork::label(path, entry, name, chrono::Utc::now())?;
    Ok(format!(
        "{} on entry {entry} (label entry {id})",
        xcsh_log::describe::quoted(name)
    ))
}

/// `/fork`: the new session's path and what to say.
pub fn fork(path: &Path, workspace: &Path) -> Result<(PathBuf, String)> {
    let log = read_session(path)?;
    let leaf = log.leaf();
    let origin = xcsh_log::session_id(path, &log.header().session_id).to_string();
    let (_, out) = sessions::new_session(workspace)?;
    xcsh_inspect::fork::fork(path, leaf, &origin, &out, chrono::Utc::now())?;
    let said = format!(
        "a new session from entry {leaf}: {}; the next prompt goes there",
        out.display()
    );
    Ok((out, said))
}

/// `/diff` as text.
pub fn diff_text(path: &Path) -> Result<String> {
    let log = read_session(path)?;
    let files = xcsh_inspect::diff::workspace::changes(&log);
    Ok(if files.is_empty() {
        "this session changed no file".to_string()
    } else {
        xcsh_inspect::diff::workspace::render(&files, Style::plain())
    })
}

/// `/plan`: the task plan at the leaf.
pub fn plan_text(path: &Path) -> Result<String> {
    let log = read_session(path)?;
    Ok(xcsh_inspect::plan::view(&log, log.leaf())?.text())
}

/// `/undo`.
pub fn undo(path: &Path) -> Result<String> {
    Ok(crate::undo::undo_last_run(path)?.said())
}

/// `/model [NAME]`.
pub fn model(setup: &mut Setup, arg: &str) -> Result<String> {
    // A refused switch says only why; the model did not change.
    if !arg.is_empty() {
        setup.switch_model(arg)?;
    }
    Ok(format!(
        "{} ({})",
        setup.provider.model(),
        setup.provider.name()
    ))
}

/// `/status` (both front ends): the setup, then the grants of `session` at its leaf
/// (when any).
pub fn status(s: &Setup, session: Option<&Path>) -> String {
    let mut rows = vec![
        (
            "provider",
            format!("{} · model {}", s.provider.name(), s.provider.model()),
        ),
        (
            "permissions",
            format!(
                "{} · sandbox {}",
                permissions_name(s.permissions),
                sandbox_name(s.sandbox)
            ),
        ),
        ("workspace", s.cwd.display().to_string()),
        (
            "session",
            session.map_or(
                "none yet".to_string(),
                |p| match xcsh_log::file_session_id(p) {
                    Some(id) => format!("{id} · {}", p.display()),
                    None => p.display().to_string(),
                },
            ),
        ),
        (
            "limits",
            format!(
                "{} steps · compact at {} tokens · budget {} tokens",
                s.limits.max_steps, s.limits.compact_at_tokens, s.limits.max_tokens
            ),
        ),
    ];
    if let Some(path) = session {
        let allowed = match read_session(path)
            .map_err(anyhow::Error::from)
            .and_then(|log| Ok(xcsh_runtime::rebuild_machine(&log, log.leaf())?))
        {
            Ok((machine, _)) => grants_status(machine.grants()),
            Err(e) => format!("cannot read the session: {}", crate::chain(&e)),
        };
        if !allowed.is_empty() {
            rows.push(("allowed", allowed));
        }
    }
    // A listing, as `/help` writes one: each value in one column, under which a
    // long one wraps.
    let rows: Vec<String> = rows
        .into_iter()
        .map(|(label, value)| format!("  {label:<12} {value}"))
        .collect();
    rows.join("\n")
}

/// `/status`'s `allowed` row: the tools allowed for the session (`a`) and the count
/// of exact calls allowed (`A`), each only when there is one, as the machine rebuilt
/// at the leaf holds them; empty when there is neither.
fn grants_status(grants: &xcsh_machine::Grants) -> String {
    let mut parts = Vec::new();
    let tools: Vec<&str> = grants.tools().collect();
    if !tools.is_empty() {
        parts.push(format!("{} for the session", tools.join(", ")));
    }
    if grants.call_count() > 0 {
        parts.push(format!("{} exact call(s)", grants.call_count()));
    }
    parts.join(" · ")
}

/// The sandbox as the status line shows it: the mode, `+net` with the network.
pub fn sandbox_name(p: xcsh_tools::sandbox::SandboxPolicy) -> String {
    match p.mode {
        xcsh_tools::sandbox::SandboxMode::Off => "off".to_owned(),
        mode if p.network => format!("{} +net", mode.name()),
        mode => mode.name().to_owned(),
    }
}

fn permissions_name(p: Permissions) -> &'static str {
    match p {
        Permissions::Ask => "ask",
        Permissions::Readonly => "readonly",
        Permissions::Yolo => "yolo",
    }
}

/// What an edit or write would change now: the file's content (for the
/// approval's diff), if it exists.
pub fn current_content(call: &ToolCall, cwd: &Path) -> Option<String> {
    if call.name != "edit" && call.name != "write" {
        return None;
    }
    let args: serde_json::Value = serde_json::from_str(&call.arguments).ok()?;
    let path = args.get("path")?.as_str()?;
    std::fs::read_to_string(cwd.join(path)).ok()
}

/// What both modes say of `/name` when no command has that name.
pub(super) fn unknown(name: &str) -> String {
    format!("/{name}: unknown command (/help lists them)")
}

/// What an interactive mode says as it ends, once the session has a file: how to
/// come back to it (as Codex and Claude Code say it).
pub(super) fn resume_hint(session: Option<&Path>) -> Option<String> {
    Some(format!(
        "to continue this session: xcsh --resume {}",
        resume_arg(session?)
    ))
}

/// What `xcsh --resume` takes to continue the session at `path`: its id, else the path.
fn resume_arg(path: &Path) -> String {
    xcsh_log::file_session_id(path).map_or_else(|| path.display().to_string(), str::to_owned)
}

/// `/new` (while idle): the session is left, so that the next prompt starts a new
/// one in the workspace, as a fresh `xcsh` does; what to say, with how to come back
/// to the one left, if there was one.
pub(super) fn new_session(session: &mut Option<PathBuf>) -> String {
    let said = "the next prompt starts it";
    match session.take() {
        Some(left) => format!("{said} (the last one: xcsh --resume {})", resume_arg(&left)),
        None => said.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    /// The context shown for a branch is the newest of its last step's and its
    /// last compaction's: at the compaction, its size after; before it, the step
    /// that asked; after it, the next step's.
    #[test]
    fn the_branch_context_is_the_newest_step_or_compaction_on_the_path() {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/sessions/compaction.jsonl");
        let text = std::fs::read_to_string(&fixture).expect("the compaction fixture");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let context_up_to = |last: usize| {
            let path = dir.path().join(format!("upto-{last}.jsonl"));
            let lines: Vec<&str> = text.lines().take(last + 1).collect();
            std::fs::write(&path, lines.join("\n") + "\n").expect("write");
            super::branch_context(&xcsh_log::read_session(&path).expect("read"))
                .expect("a path to the root")
        };
        // Entries 3 and 7 are steps (600 and 1200 in), 12 the compaction (30 after),
        // 14 the step after it (400 in).
        assert_eq!(
            [0, 3, 9, 12, 14].map(context_up_to),
            [None, Some(600), Some(1200), Some(30), Some(400)]
        );
    }

    #[test]
    fn status_ends_with_the_tools_and_the_count_of_calls_allowed_for_the_session() {
        use xcsh_machine::{ApprovalScope, Grants, ToolCall};
        let call = |name: &str, command: &str| ToolCall {
            id: xcsh_machine::CallId("c".into()),
            name: name.into(),
            arguments: format!(r#"{{"command":"{command}"}}"#),
        };
        let mut grants = Grants::default();
        assert_eq!(super::grants_status(&grants), "");
        grants.grant(&call("bash", "ls"), ApprovalScope::Call);
        assert_eq!(super::grants_status(&grants), "1 exact call(s)");
        grants.grant(&call("edit", ""), ApprovalScope::Tool);
        grants.grant(&call("bash", ""), ApprovalScope::Tool);
        grants.grant(&call("bash", "pwd"), ApprovalScope::Call);
        assert_eq!(
            super::grants_status(&grants),
            "bash, edit for the session · 2 exact call(s)"
        );
    }
}
