//! The plain line mode of interactive xcsh (`--plain`, `TERM=dumb`, or stdout not
//! a terminal): a line editor (rustyline, with history) over the runtime. At
//! the prompt a line starts a turn; while the agent works a line is a steer and
//! `/queue TEXT` a follow-up. Ctrl-C stops the running turn (again at the prompt:
//! exit); Ctrl-D on an empty prompt exits. Run output is printed above the prompt,
//! every line neutralized (`xcsh_inspect::terminal`): model text and tool output are
//! shown, never obeyed by the terminal.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use rustyline::ExternalPrinter;
use rustyline::error::ReadlineError;
use tokio::sync::mpsc;
use xcsh_machine::{Delta, IgnoreReason, ToolStatus, Verdict};
use xcsh_runtime::{RunEvent, RunHandle, SessionTarget, Task, branch_at};
use xcsh_tui::approval::Approval;
use xcsh_tui::tool_card::{TAIL_LINES, outcome};
use xcsh_tui::{Line, Theme, fmt};

use super::commands;
use crate::present::{
    APPROVAL_CHOICES, MESSAGE_PROMPT, Reply, context_overflow, denial, first_line, list,
    parse_answer,
};
use crate::sessions;
use crate::setup::Setup;
use crate::signals::{self, Signals, Termination};

/// What the line-editor thread reports.
enum UiInput {
    Line(String),
    CtrlC,
    CtrlD,
    Failed(String),
}

/// Writes straight to stdout (where rustyline has no external printer).
struct StdoutPrinter;

impl ExternalPrinter for StdoutPrinter {
    fn print(&mut self, msg: String) -> rustyline::Result<()> {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(msg.as_bytes())?;
        out.flush()?;
        Ok(())
    }
}

/// Prints above the prompt, whole lines at a time, neutralized. Every message ends
/// with a newline: between two `readline` calls rustyline writes messages as they are.
struct Out {
    printer: Box<dyn ExternalPrinter + Send>,
    /// Streamed text not yet ended by a newline.
    partial: String,
    /// Streamed reasoning not yet ended by a newline.
    thinking: String,
}

impl Out {
    fn new(printer: Box<dyn ExternalPrinter + Send>) -> Out {
        Out {
            printer,
            partial: String::new(),
            thinking: String::new(),
        }
    }

    fn line(&mut self, text: impl Into<String>) {
        self.flush();
        self.print(text.into());
    }

    fn print(&mut self, text: String) {
        let mut text = match xcsh_inspect::terminal::neutralize(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(safe) => safe,
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let _ = self.printer.print(text);
    }

    fn text(&mut self, delta: &str) {
        self.partial.push_str(delta);
        while let Some(pos) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=pos).collect();
            self.print(line);
        }
    }

    /// Reasoning, shown as it arrives, each line marked `∴`.
    fn reasoning(&mut self, delta: &str) {
        self.thinking.push_str(delta);
        while let Some(pos) = self.thinking.find('\n') {
            let line: String = self.thinking.drain(..=pos).collect();
            self.print(format!("  ∴ {}", line.trim_end()));
        }
    }

    fn flush(&mut self) {
        if !self.thinking.is_empty() {
            let line = std::mem::take(&mut self.thinking);
            self.print(format!("  ∴ {}", line.trim_end()));
        }
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.print(line);
        }
    }
}

struct Running {
    handle: RunHandle,
    /// Exit once this run has settled (Ctrl-D during a run).
    exit_after: bool,
}

/// The open approval question: the next line answers it.
struct Asking {
    question: commands::Question,
    /// `m` was typed alone: the next line is the message to the model.
    message_next: bool,
}

impl Asking {
    /// Puts `question` as the terminal UI's shows it, in plain text: a header
    /// (the tool, what it names, a change's `+A -D`, how many more wait), what the
    /// call would do (the diff against `current`, the content of the file an edit
    /// or write names; bash's command and where it runs; other arguments
    /// pretty-printed), then the choices.
    fn put(question: commands::Question, current: Option<&str>, out: &mut Out) -> Asking {
        let approval = Approval::of_request(&question.0, current);
        // Not wrapped: the terminal (or the reader) does that.
        let (width, theme) = (u16::MAX, Theme::MONO);
        let mut text = approval
            .heading(Line::from("[approve] "), width, &theme)
            .to_string();
        for line in approval.preview_lines(width, &theme) {
            text.push('\n');
            text.push_str(line.to_string().trim_end());
        }
        out.line(format!("{text}\n  {APPROVAL_CHOICES}"));
        Asking {
            question,
            message_next: false,
        }
    }

    /// Takes the line typed while the question is open (trimmed): sends the answer
    /// it makes, or says what to type and gives the question back.
    fn take(mut self, line: &str, out: &mut Out) -> Option<Asking> {
        let reply = if self.message_next {
            Some(Reply::Answer(denial(line)))
        } else {
            parse_answer(line)
        };
        match reply {
            Some(Reply::Answer(answer)) => {
                let _ = self.question.1.send(answer);
                return None;
            }
            Some(Reply::Message) => {
                out.line(MESSAGE_PROMPT);
                self.message_next = true;
            }
            None => out.line("(answer y, a, A, n or m)"),
        }
        Some(self)
    }
}

struct Ui {
    setup: Setup,
    out: Out,
    session: Option<PathBuf>,
    running: Option<Running>,
    question: Option<Asking>,
    questions: mpsc::UnboundedReceiver<commands::Question>,
    approver: Arc<commands::ChannelApprover>,
    ctrl_c_once: bool,
    /// A termination signal came while a turn ran (a second one exits now).
    signalled: bool,
}

pub async fn main(setup: Setup, mut signals: Signals) -> Result<ExitCode> {
    println!(
        "xcsh · {} · {} · /help for commands, Ctrl-D to exit",
        setup.provider.name(),
        setup.provider.model()
    );
    if let SessionTarget::Existing { path, .. } = &setup.session {
        println!("continuing {}", path.display());
        // What a crash interrupted, before anything changes the session (§21.6).
        for line in crate::undo::interrupted_at_leaf(path)? {
            eprintln!("xcsh: {line}");
        }
    }
    let history = sessions::home()?.join("history");
    let mut editor = rustyline::DefaultEditor::new().context("cannot start the line editor")?;
    let _ = editor.load_history(&history);
    // A terminal rustyline cannot draw on (TERM=dumb, stdout not a terminal) has no
    // printer above the prompt: lines are then written to stdout as they come.
    let printer: Box<dyn ExternalPrinter + Send> = match editor.create_external_printer() {
        Ok(p) => Box::new(p),
        Err(_) => Box::new(StdoutPrinter),
    };
    let (input_tx, mut input) = mpsc::unbounded_channel();
    std::thread::spawn(move || read_lines(editor, &history, &input_tx));
    let session = match &setup.session {
        SessionTarget::Existing { path, at } => {
            if let Some(at) = at {
                let id = branch_at(path, *at)?;
                println!("continuing from entry {at} on a new branch (branch record {id})");
            }
            Some(path.clone())
        }
        SessionTarget::New { .. } => None,
    };
    let mut ui = Ui::new(setup, Out::new(printer), session);
    loop {
        let event = match ui.running.as_mut() {
            Some(r) => tokio::select! {
                biased;
                t = signals.recv() => Step::Signal(t),
                Some(i) = input.recv() => Step::Input(i),
                Some(q) = ui.questions.recv() => Step::Question(q),
                e = r.handle.events.recv() => Step::Event(e),
            },
            None => tokio::select! {
                biased;
                t = signals.recv() => Step::Signal(t),
                i = input.recv() => match i {
                    Some(i) => Step::Input(i),
                    None => break,
                },
            },
        };
        let go_on = match event {
            Step::Signal(t) => ui.on_signal(t),
            Step::Input(i) => ui.on_input(i).await?,
            Step::Question(q) => {
                // The events sent before the question (the step's text) are printed
                // first: the select polls questions before events.
                while let Some(e) = ui
                    .running
                    .as_mut()
                    .and_then(|r| r.handle.events.try_recv().ok())
                {
                    ui.on_event(e);
                }
                ui.ask(q);
                true
            }
            Step::Event(Some(e)) => {
                ui.on_event(e);
                true
            }
            Step::Event(None) => ui.on_run_end().await?,
        };
        if !go_on {
            break;
        }
    }
    if let Some(hint) = commands::resume_hint(ui.session.as_deref()) {
        // Written directly: after Ctrl-D the line reader has ended, and with it the
        // printer that writes above its prompt (a line sent to it would be lost).
        // `\r`: the terminal may still be raw (`/quit` leaves the reader waiting).
        ui.out.flush();
        print!("\r{hint}\r\n");
        let _ = std::io::Write::flush(&mut std::io::stdout());
    }
    Ok(ExitCode::SUCCESS)
}

enum Step {
    Signal(Termination),
    Input(UiInput),
    Question(commands::Question),
    Event(Option<RunEvent>),
}

fn read_lines(
    mut editor: rustyline::DefaultEditor,
    history: &Path,
    tx: &mpsc::UnboundedSender<UiInput>,
) {
    loop {
        let input = match editor.readline("› ") {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                    let _ = editor.save_history(history);
                }
                UiInput::Line(line)
            }
            Err(ReadlineError::Interrupted) => UiInput::CtrlC,
            Err(ReadlineError::Eof) => UiInput::CtrlD,
            Err(e) => {
                let _ = tx.send(UiInput::Failed(e.to_string()));
                return;
            }
        };
        if tx.send(input).is_err() {
            return;
        }
    }
}

/// The commands of [`commands::COMMANDS`] this mode carries out while idle, those
/// it carries out while a turn runs, and those it carries out at any time, in the
/// order `/help` lists them. The others are the terminal UI's ([`TUI_ONLY`]).
const IDLE_COMMANDS: &[&str] = &[
    "tree", "at", "fork", "label", "new", "usage", "diff", "plan", "undo", "compact", "memory",
    "model", "exit",
];
const RUNNING_COMMANDS: &[&str] = &["queue", "pending"];
const ANY_TIME_COMMANDS: &[&str] = &["status", "help"];

/// What this mode's `/help` says of a command where [`commands::COMMANDS`] says
/// what the terminal UI does.
const PLAIN_HELP: &[(&str, &str)] = &[
    (
        "status",
        "provider, model, permissions, sandbox, workspace, session, limits, and what is allowed for the session",
    ),
    (
        "tree",
        "the branch tree of this session, as text (/at ENTRY continues from an entry)",
    ),
    ("help", "this list"),
];

/// The commands of the terminal UI alone, with what to do here instead.
const TUI_ONLY: &[(&str, &str)] = &[
    (
        "resume",
        "to continue another session, exit and start xcsh --plain --resume SESSION; xcsh sessions lists them",
    ),
    (
        "clear",
        "this mode only prints lines, it has no screen to clear",
    ),
];

/// What `/NAME` answers when it is a command of the terminal UI alone.
fn tui_only(name: &str) -> Option<String> {
    if !commands::is_command(name) || is_plain_command(name) {
        return None;
    }
    Some(match TUI_ONLY.iter().find(|(n, _)| *n == name) {
        Some((_, instead)) => format!("(/{name} is the terminal UI's: {instead})"),
        None => format!("(/{name} is the terminal UI's)"),
    })
}

/// Whether this mode carries out `/name` (in some state).
fn is_plain_command(name: &str) -> bool {
    name == "quit"
        || [IDLE_COMMANDS, RUNNING_COMMANDS, ANY_TIME_COMMANDS]
            .iter()
            .any(|names| names.contains(&name))
}

/// `/help`: the commands of each state, each with its help from [`PLAIN_HELP`], else
/// from [`commands::COMMANDS`] (`NAME ARG` where the help starts with `ARG: `), and
/// the keys.
fn help() -> String {
    let rows = |names: &[&str]| -> String {
        let mut out = String::new();
        for name in names {
            let help = PLAIN_HELP
                .iter()
                .chain(commands::COMMANDS)
                .find(|(n, _)| n == name)
                .map_or("", |(_, help)| help);
            let (usage, help) = match help.split_once(": ") {
                Some((arg, rest)) if !arg.contains(' ') => (format!("/{name} {arg}"), rest),
                _ => (format!("/{name}"), help),
            };
            out.push_str(&format!("  {usage:<22}{help}\n"));
        }
        out
    };
    format!(
        "while idle: a line starts a turn\n{}  Ctrl-C                twice (or Ctrl-D) to exit\nwhile a turn runs: a line is a steer (delivered after the step's tools)\n{}  Ctrl-C                stop the turn\n  Ctrl-D                stop the turn, then exit\nat any time:\n{}at an approval question: a line answers it (y, a, A, n or m, as it lists them)",
        rows(IDLE_COMMANDS),
        rows(RUNNING_COMMANDS),
        rows(ANY_TIME_COMMANDS)
    )
}

impl Ui {
    fn new(setup: Setup, out: Out, session: Option<PathBuf>) -> Ui {
        let (question_tx, questions) = mpsc::unbounded_channel();
        Ui {
            setup,
            out,
            session,
            running: None,
            question: None,
            questions,
            approver: Arc::new(commands::ChannelApprover(question_tx)),
            ctrl_c_once: false,
            signalled: false,
        }
    }

    /// Handles one line or key; false to exit.
    async fn on_input(&mut self, input: UiInput) -> Result<bool> {
        let line = match input {
            UiInput::Line(line) => {
                self.ctrl_c_once = false;
                line
            }
            UiInput::CtrlC => return Ok(self.on_ctrl_c()),
            UiInput::CtrlD => {
                if let Some(r) = &mut self.running {
                    self.out.line("[interrupting the turn, then exiting]");
                    r.handle.interrupt();
                    r.exit_after = true;
                    return Ok(true);
                }
                return Ok(false);
            }
            UiInput::Failed(e) => {
                self.out.line(format!("xcsh: the line editor failed: {e}"));
                return Ok(false);
            }
        };
        if let Some(question) = self.question.take() {
            self.question = question.take(line.trim(), &mut self.out);
            return Ok(true);
        }
        let text = line.trim();
        if text.is_empty() {
            return Ok(true);
        }
        if self.running.is_some() {
            self.while_running(text).await;
            return Ok(true);
        }
        if let Some(command) = text.strip_prefix('/') {
            return self.command(command).await;
        }
        self.start(Task::Prompt(text.to_string()))?;
        Ok(true)
    }

    /// SIGTERM or SIGHUP: the running turn is interrupted and the session ends once
    /// it settled; a second one (or one while idle) exits now. False to exit.
    fn on_signal(&mut self, t: Termination) -> bool {
        if t == Termination::Hangup {
            signals::detach_terminal();
        }
        let Some(r) = &mut self.running else {
            return false;
        };
        if std::mem::replace(&mut self.signalled, true) {
            signals::exit_now(t.exit());
        }
        self.out.line(format!(
            "[{}: interrupting the turn, then exiting]",
            t.name()
        ));
        r.handle.interrupt();
        r.exit_after = true;
        true
    }

    fn on_ctrl_c(&mut self) -> bool {
        if let Some(r) = &self.running {
            self.out.line("[stopping the turn]");
            r.handle.interrupt();
            return true;
        }
        if std::mem::replace(&mut self.ctrl_c_once, true) {
            return false;
        }
        self.out.line("(Ctrl-C again or Ctrl-D to exit)");
        true
    }

    async fn while_running(&mut self, text: &str) {
        let Some(r) = &self.running else { return };
        if let Some(rest) = text.strip_prefix("/queue ") {
            r.handle.follow_up(rest.trim());
        } else if text == "/pending" {
            let p = r.handle.pending().await;
            self.out.line(format!(
                "[pending] steers: {} · follow-ups: {}",
                list(&p.steers),
                list(&p.follow_ups)
            ));
        } else if text == "/help" {
            self.out.line(help());
        } else if text == "/status" {
            self.status();
        } else if let Some(command) = text.strip_prefix('/') {
            let name = command.split_whitespace().next().unwrap_or("");
            if let Some(said) = tui_only(name) {
                self.out.line(said);
            } else if IDLE_COMMANDS.contains(&name) {
                self.out
                    .line("(that command cannot run during a turn: send it again once the turn ends; Ctrl-C stops it)");
            } else {
                self.out.line(commands::unknown(name));
            }
        } else {
            r.handle.steer(text);
        }
    }

    fn ask(&mut self, question: commands::Question) {
        let (request, _) = &question;
        let current = commands::current_content(&request.call, Path::new(&request.cwd));
        self.question = Some(Asking::put(question, current.as_deref(), &mut self.out));
    }

    /// `/status`: the facts the terminal UI's `/status` gives.
    fn status(&mut self) {
        let said = commands::status(&self.setup, self.session.as_deref());
        self.out.line(format!("[status]\n{said}"));
    }

    fn start(&mut self, task: Task) -> Result<()> {
        let (handle, new) =
            commands::start(&self.setup, &mut self.session, task, self.approver.clone())?;
        if new {
            self.out
                .line(format!("[session] {}", handle.session_path.display()));
        }
        self.running = Some(Running {
            handle,
            exit_after: false,
        });
        Ok(())
    }

    fn on_event(&mut self, event: RunEvent) {
        match event {
            RunEvent::TextDelta(Delta { text, .. }) => {
                if !self.out.thinking.is_empty() {
                    self.out.flush();
                }
                self.out.text(&text)
            }
            RunEvent::ReasoningDelta(Delta { text, .. }) => self.out.reasoning(&text),
            RunEvent::Notice { message } => self.out.line(format!("[note] {message}")),
            RunEvent::MemoryIndex { .. } | RunEvent::MemoryExtracted { .. } => {}
            RunEvent::MemoryWritten { written, .. } => self
                .out
                .line(format!("[memory] wrote {}", written.join(", "))),
            RunEvent::StepFinished {
                error: Some(error), ..
            } if error.kind == xcsh_machine::ProviderErrorKind::ContextOverflow => {
                self.out.flush();
                self.out
                    .line(format!("[context] {}", context_overflow(&error.message)));
            }
            RunEvent::StepFinished { .. } => self.out.flush(),
            RunEvent::ToolCall {
                name, arguments, ..
            } => self.out.line(format!("[{name}] {}", clip(&arguments, 200))),
            RunEvent::ToolResult {
                name,
                status,
                content,
                synthetic,
                ..
            } => self
                .out
                .line(tool_result(&name, status, &content, synthetic.is_some())),
            RunEvent::Plan { plan, .. } => {
                for line in plan.checklist().lines() {
                    self.out.line(format!("[plan] {line}"));
                }
            }
            RunEvent::Queued { origin, text } => {
                self.out.line(format!("[queued {origin:?}] {text}"))
            }
            RunEvent::Delivered { origin, text } => {
                self.out.line(format!("[delivered {origin:?}] {text}"))
            }
            RunEvent::Compacted {
                tokens_before,
                tokens_after,
            } => self.out.line(format!(
                "[compacted] {tokens_before} → {tokens_after} tokens"
            )),
            // A call let run without asking is not announced (nor is it in the
            // terminal UI); one denied without asking says why, in its words.
            RunEvent::Approval {
                name,
                verdict: Verdict::Deny,
                by,
                ..
            } => self
                .out
                .line(format!("[{name}] denied ({})", fmt::approved_by(by))),
            RunEvent::Approval { .. } => {}
            RunEvent::RunFinished {
                reason,
                steps,
                usage,
            } => {
                self.out.flush();
                let approx = if usage.estimated { "~" } else { "" };
                self.out.line(format!(
                    "[{}] {steps} step(s) · {approx}{} in / {approx}{} out tokens{}",
                    fmt::why_stopped(&reason),
                    usage.context_tokens(),
                    usage.output_tokens,
                    if usage.estimated {
                        " (estimated: the provider reported no usage)"
                    } else {
                        ""
                    }
                ));
            }
            RunEvent::Ignored {
                reason: IgnoreReason::NothingToCompact,
            } => self
                .out
                .line("[compact] nothing to compact yet: the conversation has no earlier turn"),
            RunEvent::RunStarted { .. }
            | RunEvent::StepStarted { .. }
            | RunEvent::ApprovalRequested { .. }
            | RunEvent::CompactionStarted { .. }
            | RunEvent::ToolOutput { .. }
            | RunEvent::Retrying { .. }
            | RunEvent::Ignored { .. } => {}
        }
    }

    /// The run's event stream ended: collect its result. False to exit.
    async fn on_run_end(&mut self) -> Result<bool> {
        let Some(running) = self.running.take() else {
            return Ok(true);
        };
        self.question = None;
        match running.handle.result().await {
            Ok(result) => {
                if !result.undelivered.is_empty() {
                    self.out.line(format!(
                        "[not delivered] {}",
                        result.undelivered.join(" · ")
                    ));
                }
            }
            Err(e) => self.out.line(format!("xcsh: the run failed: {e}")),
        }
        xcsh_tools::procs::end_orphans();
        Ok(!running.exit_after)
    }

    async fn command(&mut self, command: &str) -> Result<bool> {
        let (name, arg) = command.split_once(' ').unwrap_or((command, ""));
        let arg = arg.trim();
        if let Some(said) = tui_only(name) {
            self.out.line(said);
            return Ok(true);
        }
        if !is_plain_command(name) {
            self.out.line(commands::unknown(name));
            return Ok(true);
        }
        match name {
            "help" => self.out.line(help()),
            "status" => self.status(),
            "exit" | "quit" => return Ok(false),
            // Idle, a follow-up has no turn to wait for: it is the next prompt.
            "queue" if !arg.is_empty() => self.start(Task::Prompt(arg.to_string()))?,
            "compact" => {
                if self.session.is_none() {
                    self.out.line("(nothing to compact yet)");
                } else {
                    self.start(Task::Compact)?;
                }
            }
            "memory" => {
                match crate::memory_cmd::command(&self.setup.cwd, self.session.as_deref(), arg) {
                    Ok(said) => self.out.line(format!("[memory] {said}")),
                    Err(e) => self.out.line(format!("xcsh: {}", crate::chain(&e))),
                }
            }
            "model" => match commands::model(&mut self.setup, arg) {
                Ok(said) => self.out.line(format!("[model] {said}")),
                Err(e) => self.out.line(format!("xcsh: {}", crate::chain(&e))),
            },
            "new" => {
                let said = commands::new_session(&mut self.session);
                self.out.line(format!("[new session] {said}"));
            }
            _ => {
                let Some(path) = self.session.clone() else {
                    self.out.line("(no session yet: send a prompt first)");
                    return Ok(true);
                };
                if let Err(e) = self.session_command(name, arg, &path) {
                    self.out.line(format!("xcsh: {}", crate::chain(&e)));
                }
            }
        }
        Ok(true)
    }

    fn session_command(&mut self, name: &str, arg: &str, path: &Path) -> Result<()> {
        match name {
            "at" => self
                .out
                .line(format!("[branch] {}", commands::at(path, arg)?)),
            "usage" => self.out.line(format!("[usage] {}", commands::usage(path)?)),
            "tree" => self.out.line(commands::tree_text(path)?),
            "label" => self
                .out
                .line(format!("[label] {}", commands::label(path, None, arg)?)),
            "fork" => {
                let (out, said) = commands::fork(path, &self.setup.cwd)?;
                self.out.line(format!("[fork] {said}"));
                self.session = Some(out);
            }
            "diff" => self
                .out
                .line(format!("[diff] {}", commands::diff_text(path)?)),
            "undo" => self.out.line(format!("[undo] {}", commands::undo(path)?)),
            "plan" => {
                for line in commands::plan_text(path)?.lines() {
                    self.out.line(format!("[plan] {line}"));
                }
            }
            other => self.out.line(commands::unknown(other)),
        }
        Ok(())
    }
}

/// A tool result: `  [NAME] STATUS: WHAT`. A bash call that ran says how it ended
/// (as its card does: `exit 0`, `signal 9`), with its notes and its last
/// [`TAIL_LINES`] lines of output under it; a read-only tool that succeeded gives its
/// card's summary (`read 20 lines of 200`); any other result its first line.
fn tool_result(name: &str, status: ToolStatus, content: &str, synthetic: bool) -> String {
    let head = format!("  [{name}] {status:?}: ");
    if !synthetic && name == "bash" {
        let bash = outcome::bash(content);
        if let Some((ending, _)) = bash.ending() {
            let (skipped, tail) = bash.tail(TAIL_LINES);
            let earlier = outcome::earlier(skipped);
            let under = bash
                .notes
                .iter()
                .map(String::as_str)
                .chain(earlier.as_deref())
                .chain(tail.iter().map(String::as_str))
                .map(|line| format!("\n    {}", clip(line, 200).trim_end()));
            return format!("{head}{ending}{}", under.collect::<String>());
        }
    }
    let summary = match (synthetic, status) {
        (false, ToolStatus::Ok) => outcome::summary(name, content),
        _ => None,
    };
    match summary {
        Some(summary) => format!("{head}{summary}"),
        None => {
            let (first, more) = first_line(content);
            format!("{head}{}{more}", clip(first, 160))
        }
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::{Arc, Mutex};

    use xcsh_machine::{
        ApprovalScope, ApprovedBy, CallId, Limits, Permissions, ToolCall, ToolStatus, Verdict,
    };
    use xcsh_runtime::{ApprovalAnswer, ApprovalRequest, RunEvent, SessionTarget};

    use super::{Asking, Out, Ui, UiInput};
    use crate::setup::Setup;

    /// Collects what would be printed above the prompt.
    struct Collect(Arc<Mutex<Vec<String>>>);

    impl rustyline::ExternalPrinter for Collect {
        fn print(&mut self, msg: String) -> rustyline::Result<()> {
            self.0.lock().unwrap().push(msg);
            Ok(())
        }
    }

    /// An `Out` whose lines are collected, and what it printed.
    fn collected() -> (Out, Arc<Mutex<Vec<String>>>) {
        let printed = Arc::new(Mutex::new(Vec::new()));
        let out = Out::new(Box::new(Collect(Arc::clone(&printed))));
        (out, printed)
    }

    /// Everything printed so far, as one text.
    fn transcript(printed: &Mutex<Vec<String>>) -> String {
        printed.lock().unwrap().concat()
    }

    /// What `events` print, the mode idle in a temporary workspace.
    fn shown(events: Vec<RunEvent>) -> String {
        let work = tempfile::tempdir().unwrap();
        let (out, printed) = collected();
        let mut ui = Ui::new(setup(work.path()), out, None);
        for event in events {
            ui.on_event(event);
        }
        transcript(&printed)
    }

    /// `call(arguments)` asked about in `/w`, with `current` the content of the file
    /// it names: what the question prints.
    fn asked(name: &str, arguments: &str, current: Option<&str>) -> String {
        let (mut out, printed) = collected();
        let request = ApprovalRequest {
            call: ToolCall {
                id: CallId("c1".into()),
                name: name.into(),
                arguments: arguments.into(),
            },
            cwd: "/w".into(),
            waiting: 0,
        };
        let (tx, _rx) = tokio::sync::oneshot::channel();
        Asking::put((request, tx), current, &mut out);
        transcript(&printed)
    }

    fn result(name: &str, status: ToolStatus, content: &str) -> RunEvent {
        RunEvent::ToolResult {
            call_id: CallId("c1".into()),
            name: name.into(),
            status,
            content: content.into(),
            arguments: None,
            synthetic: None,
            duration_ms: 1200,
            changes: Vec::new(),
        }
    }

    /// A setup of the faux provider (it plays nothing) and the test tools in `cwd`,
    /// with the default limits, asking for approvals, without a sandbox.
    fn setup(cwd: &Path) -> Setup {
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            provider: crate::providers::ProviderArgs,
        }
        let config = Default::default();
        let effective =
            crate::config::resolve(&config, Path::new("config.toml"), None, &Default::default())
                .unwrap();
        Setup {
            cwd: cwd.to_path_buf(),
            session: SessionTarget::New {
                path: cwd.join("new.jsonl"),
                session_id: "new".into(),
                cwd: cwd.display().to_string(),
            },
            limits: Limits::default(),
            system_prompt: String::new(),
            provider: Arc::new(xcsh_providers::faux::FauxProvider::from_steps(
                "test",
                Vec::new(),
            )),
            choice: crate::providers::Choice {
                provider: "faux".into(),
                model: None,
                base_url: None,
                script: Some(cwd.join("test.jsonl")),
            },
            tools: Arc::new(xcsh_tools::testing::TestTools),
            permissions: Permissions::Ask,
            max_parallel_tools: std::num::NonZeroUsize::MIN,
            provider_args: <Flags as clap::Parser>::parse_from(["xcsh"]).provider,
            effective,
            secrets: Default::default(),
            sandbox: xcsh_tools::sandbox::SandboxPolicy {
                mode: xcsh_tools::sandbox::SandboxMode::Off,
                network: false,
            },
            memory: None,
            delegate: false,
        }
    }

    /// The mode idle in a temporary workspace, in a copy of the fixture `session`
    /// (none: before the first prompt): each command typed in turn (after `› `), and
    /// what it printed, the workspace written `WORK`.
    async fn typed_while_idle(lines: &[&str], session: Option<&str>) -> String {
        typed(lines, session, Vec::new()).await
    }

    /// Typed in [`typed`]: the running turn goes on to its end and what it reports
    /// is printed.
    const TURN_ENDS: &str = "(the turn ends)";

    /// As [`typed_while_idle`], each line typed as at the prompt (a prompt starts a
    /// turn; while it runs, a line is what this mode makes of it then), the model
    /// playing `script`; [`TURN_ENDS`] is not typed: the turn runs to its end.
    async fn typed(
        lines: &[&str],
        session: Option<&str>,
        script: Vec<xcsh_providers::faux::ScriptStep>,
    ) -> String {
        let work = tempfile::tempdir().unwrap();
        let (out, printed) = collected();
        let session = session.map(|fixture| {
            let path = work.path().join(fixture);
            let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions");
            std::fs::copy(from.join(fixture), &path).unwrap();
            path
        });
        let mut setup = setup(work.path());
        setup.provider = Arc::new(xcsh_providers::faux::FauxProvider::from_steps(
            "test", script,
        ));
        let mut ui = Ui::new(setup, out, session);
        for line in lines {
            if *line == TURN_ENDS {
                while let Some(event) = ui.running.as_mut().unwrap().handle.events.recv().await {
                    ui.on_event(event);
                }
                assert!(ui.on_run_end().await.unwrap());
                continue;
            }
            printed.lock().unwrap().push(format!("› {line}\n"));
            assert!(ui.on_input(UiInput::Line(line.to_string())).await.unwrap());
        }
        transcript(&printed).replace(&work.path().display().to_string(), "WORK")
    }

    /// A question about a write with two more waiting behind it, and `lines` typed
    /// at it in turn: what was printed (each typed line after `› `), and the answer
    /// sent, if one was.
    fn typed_at_a_question(lines: &[&str]) -> (String, Option<ApprovalAnswer>) {
        let (mut out, printed) = collected();
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        let request = ApprovalRequest {
            call: ToolCall {
                id: CallId("c1".into()),
                name: "write".into(),
                arguments: r#"{"path":"a.txt","content":"x"}"#.into(),
            },
            cwd: "/w".into(),
            waiting: 2,
        };
        let mut asking = Some(Asking::put((request, tx), None, &mut out));
        for line in lines {
            printed.lock().unwrap().push(format!("› {line}\n"));
            asking = asking.and_then(|a| a.take(line.trim(), &mut out));
        }
        let transcript = printed.lock().unwrap().concat();
        (transcript, rx.try_recv().ok())
    }

    #[test]
    fn m_alone_asks_for_the_message_and_the_next_line_denies_with_it() {
        let (printed, answer) = typed_at_a_question(&["x", "m", "use b.txt instead"]);
        expect_test::expect![[r#"
            [approve] write a.txt · +1 · 2 more waiting
              new file
              @@ -0,0 +1 @@
                1 +x
              [y] once  [a] this tool for the session  [A] this exact call  [n] deny
              [m] deny with a message to the model (m TEXT, or m alone and TEXT on the next line)
            › x
            (answer y, a, A, n or m)
            › m
              the message to the model (an empty line denies without one):
            › use b.txt instead
        "#]]
        .assert_eq(&printed);
        assert_eq!(answer, Some(ApprovalAnswer::deny_with("use b.txt instead")));
    }

    #[test]
    fn m_with_text_denies_with_it_at_once_and_an_empty_message_is_a_plain_deny() {
        let deny = ApprovalAnswer::new(Verdict::Deny, ApprovalScope::Once);
        assert_eq!(
            [
                typed_at_a_question(&["m keep a.txt as it is"]).1,
                typed_at_a_question(&["m", ""]).1,
                typed_at_a_question(&["m"]).1,
                typed_at_a_question(&["a"]).1,
            ],
            [
                Some(ApprovalAnswer::deny_with("keep a.txt as it is")),
                Some(deny),
                None,
                Some(ApprovalAnswer::new(Verdict::Allow, ApprovalScope::Tool)),
            ]
        );
    }

    #[test]
    fn streamed_text_is_printed_line_by_line_and_neutralized() {
        let (mut out, printed) = collected();
        // An OSC 52 clipboard write split over two deltas, and a title change.
        out.text("copy \x1b]5");
        out.text("2;c;aGk=\x07 done\n\x1b]0;title\x07");
        out.flush();
        assert_eq!(
            *printed.lock().unwrap(),
            ["copy ␛]52;c;aGk=␇ done\n", "␛]0;title␇\n"]
        );
    }

    /// `/help` says what this mode does, state by state, and a command of the
    /// terminal UI alone says what to do here instead.
    #[tokio::test]
    async fn help_lists_what_this_mode_does_and_the_terminal_uis_commands_say_so() {
        let printed = typed_while_idle(&["/help", "/resume", "/clear", "/nope"], None).await;
        expect_test::expect![[r#"
            › /help
            while idle: a line starts a turn
              /tree                 the branch tree of this session, as text (/at ENTRY continues from an entry)
              /at ENTRY             continue from an earlier entry or label (a new branch)
              /fork                 a new session file from here
              /label NAME           name the current entry
              /new                  start a new conversation (a new session of this workspace)
              /usage                tokens spent in this session
              /diff                 what this session changed in the workspace
              /plan                 the task plan at the current entry
              /undo                 revert the last turn's file changes (if unchanged since)
              /compact              summarize the conversation now
              /memory [NAME]        the memory index, or a note (forget NAME deletes one)
              /model [NAME]         show or switch the model
              /exit                 leave xcsh (also /quit, Ctrl-D)
              Ctrl-C                twice (or Ctrl-D) to exit
            while a turn runs: a line is a steer (delivered after the step's tools)
              /queue TEXT           a follow-up, delivered when the turn would finish (idle: sent now)
              /pending              the queued steers and follow-ups
              Ctrl-C                stop the turn
              Ctrl-D                stop the turn, then exit
            at any time:
              /status               provider, model, permissions, sandbox, workspace, session, limits, and what is allowed for the session
              /help                 this list
            at an approval question: a line answers it (y, a, A, n or m, as it lists them)
            › /resume
            (/resume is the terminal UI's: to continue another session, exit and start xcsh --plain --resume SESSION; xcsh sessions lists them)
            › /clear
            (/clear is the terminal UI's: this mode only prints lines, it has no screen to clear)
            › /nope
            /nope: unknown command (/help lists them)
        "#]]
        .assert_eq(&printed);
    }

    /// `/status`: the terminal UI's facts, in a session (without one, as after `/new`,
    /// its session is `none yet`: `new_is_refused_during_a_turn_and_then_leaves_the_session`).
    #[tokio::test]
    async fn status_gives_the_setup_and_the_session() {
        let during = typed_while_idle(&["/status"], Some("plain.jsonl")).await;
        expect_test::expect![[r#"
            › /status
            [status]
              provider     faux · model faux-script
              permissions  ask · sandbox off
              workspace    WORK
              session      WORK/plain.jsonl
              limits       32 steps · compact at 150000 tokens · budget 400000 tokens
        "#]]
        .assert_eq(&during);
    }

    /// `/new` while a turn runs is refused as the idle state's other commands are;
    /// after it, the session is left (the next prompt starts a new one: `/status`
    /// has none) and how to come back to it is said, and `/new` again leaves none.
    #[tokio::test]
    async fn new_is_refused_during_a_turn_and_then_leaves_the_session() {
        let script = vec![xcsh_providers::faux::ScriptStep {
            text: "Hello.".into(),
            ..Default::default()
        }];
        let lines = ["hi", "/new", TURN_ENDS, "/new", "/status", "/new"];
        let printed = typed(&lines, Some("plain.jsonl"), script).await;
        expect_test::expect![[r#"
            › hi
            › /new
            (that command cannot run during a turn: send it again once the turn ends; Ctrl-C stops it)
            Hello.
            [done] 1 step(s) · 16 in / 2 out tokens
            › /new
            [new session] the next prompt starts it (the last one: xcsh --resume WORK/plain.jsonl)
            › /status
            [status]
              provider     faux · model faux-script
              permissions  ask · sandbox off
              workspace    WORK
              session      none yet
              limits       32 steps · compact at 150000 tokens · budget 400000 tokens
            › /new
            [new session] the next prompt starts it
        "#]]
        .assert_eq(&printed);
    }

    /// A bash result shows how the call ended and its last lines, the earlier ones
    /// counted; a read-only tool's its card's summary; a failure its first line.
    #[test]
    fn a_bash_result_shows_its_exit_and_last_lines_and_others_a_summary() {
        let lines: Vec<String> = (1..=2004).map(|n| format!("line {n}")).collect();
        let long = format!(
            "exit code: 0\nduration: 1200 ms\nstdout:\n{}\n\nstderr: (empty)",
            lines.join("\n")
        );
        let killed = "timed out after 100 ms; process group 7 was killed\nexit code: none (killed by signal 9)\nduration: 101 ms\nstdout:\nstarted\nstderr: (empty)";
        let read = "     1\tfn a() {}\n     2\tfn b() {}\n[lines 1-2 of 200 shown; continue with offset 3]";
        let printed = shown(vec![
            RunEvent::ToolCall {
                step: xcsh_machine::StepNo(1),
                call_id: CallId("c1".into()),
                name: "bash".into(),
                arguments: r#"{"command":"seq 2004"}"#.into(),
            },
            result("bash", ToolStatus::Ok, &long),
            result("bash", ToolStatus::Error, killed),
            result("read", ToolStatus::Ok, read),
            result(
                "edit",
                ToolStatus::Error,
                "`old_string` not found in a.txt\nnear: x",
            ),
        ]);
        expect_test::expect![[r#"
            [bash] {"command":"seq 2004"}
              [bash] Ok: exit 0
                … 1999 earlier lines
                line 2000
                line 2001
                line 2002
                line 2003
                line 2004
              [bash] Error: signal 9
                timed out after 100 ms; process group 7 was killed
                started
              [read] Ok: read 2 lines of 200
              [edit] Error: `old_string` not found in a.txt (+1 lines)
        "#]]
        .assert_eq(&printed);
    }

    /// An edit's question shows the diff against the file as it is now; bash's, the
    /// command and where it runs; another tool's, its arguments pretty-printed.
    #[test]
    fn an_approval_shows_what_the_call_would_do() {
        let edit = r#"{"path":"src/main.rs","old_string":"\"hi\"","new_string":"\"hello\""}"#;
        let file = "fn main() {\n    println!(\"hi\");\n}\n";
        let printed = [
            asked("edit", edit, Some(file)),
            asked("bash", r#"{"command":"cargo test\n  --workspace"}"#, None),
            asked("fetch", r#"{"url":"https://example.com","max":3}"#, None),
        ];
        expect_test::expect![[r#"
            [approve] edit src/main.rs · +1 -1
              @@ -1,3 +1,3 @@
              1 1  fn main() {
              2   -    println!("hi");
                2 +    println!("hello");
              3 3  }
              [y] once  [a] this tool for the session  [A] this exact call  [n] deny
              [m] deny with a message to the model (m TEXT, or m alone and TEXT on the next line)
            [approve] bash
              $ cargo test
                  --workspace
              in /w
              [y] once  [a] this tool for the session  [A] this exact call  [n] deny
              [m] deny with a message to the model (m TEXT, or m alone and TEXT on the next line)
            [approve] fetch {"max":3,"url":"https://example.com"}
              {
                "max": 3,
                "url": "https://example.com"
              }
              [y] once  [a] this tool for the session  [A] this exact call  [n] deny
              [m] deny with a message to the model (m TEXT, or m alone and TEXT on the next line)
        "#]]
        .assert_eq(&printed.concat());
    }

    /// A call let run without asking (`--permissions yolo`, a grant) prints nothing
    /// of its approval, as in the terminal UI; one denied without asking says why.
    #[test]
    fn an_approval_without_asking_is_silent_and_a_denial_says_why() {
        let approval = |verdict, by| RunEvent::Approval {
            call_id: CallId("c1".into()),
            name: "bash".into(),
            verdict,
            by,
        };
        let printed = shown(vec![
            approval(Verdict::Allow, ApprovedBy::PolicyYolo),
            approval(Verdict::Allow, ApprovedBy::ToolGrant),
            approval(Verdict::Deny, ApprovedBy::PolicyReadonly),
        ]);
        expect_test::expect![[r#"
            [bash] denied (the session is read-only: --permissions readonly)
        "#]]
        .assert_eq(&printed);
    }

    /// `/at` takes a label's name as well as an entry id; a name that is neither
    /// lists the session's labels.
    #[tokio::test]
    async fn at_goes_to_a_labelled_entry() {
        let printed = typed_while_idle(
            &["/label mark", "/at mark", "/at nope"],
            Some("plain.jsonl"),
        )
        .await;
        expect_test::expect![[r#"
            › /label mark
            [label] "mark" on entry 4 (label entry 5)
            › /at mark
            [branch] continuing from entry 4 (branch record 6); the next prompt goes there
            › /at nope
            xcsh: no entry or label "nope" in WORK/plain.jsonl; its labels, newest first: "mark"
        "#]]
        .assert_eq(&printed);
    }
}
