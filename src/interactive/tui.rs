//! The terminal UI's controller: it owns the runs and the session, feeds the view
//! (`xcsh_tui::app::App`) run events and what it reads from the log, and carries
//! out the view's actions. One loop: keys (from a reader thread), run events,
//! approval questions and frame ticks, drawn at most ~60 times a second and not at
//! all while nothing changes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio::sync::{mpsc, oneshot};
use xcsh_log::read_session;
use xcsh_machine::{ToolCall, UserOrigin};
use xcsh_runtime::{ApprovalAnswer, RunEvent, RunHandle, SessionTarget, Task, branch_at};
use xcsh_tui::app::{Action, App, StatusInfo};
use xcsh_tui::cells::{Cell, Level as NoticeLevel};
use xcsh_tui::overlay::OverlayAction;
use xcsh_tui::term::{Event, KeyEventKind, Screen};
use xcsh_tui::{Theme, complete, editor, mention, overlay};

use super::commands;
use crate::present::list;
use crate::sessions;
use crate::setup::Setup;
use crate::signals::{self, Signals, Termination};

mod session;

/// At most one frame per this long (~60 per second).
const FRAME: Duration = Duration::from_millis(16);
/// How often a spinner and elapsed times move while a turn runs.
const TICK: Duration = Duration::from_millis(100);

struct Running {
    handle: RunHandle,
    exit_after: bool,
}

struct Controller {
    setup: Setup,
    session: Option<PathBuf>,
    /// `xcsh --resume` without a session: the picker opened at start is the way
    /// in, and leaving it without a pick leaves xcsh (nothing resumed).
    picking: Picking,
    running: Option<Running>,
    question: Option<oneshot::Sender<ApprovalAnswer>>,
    approver: Arc<commands::ChannelApprover>,
    app: App,
    started: Instant,
    exit: bool,
}

/// The picker opened at start (`xcsh --resume` without a session).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Picking {
    /// None was opened, or a session was picked from it.
    No,
    /// It is open.
    Open,
    /// It was closed without a pick (Esc, Ctrl-C, Ctrl-D): xcsh exits.
    Left,
}

/// The terminal UI; with `pick` (`xcsh --resume` without a session) it opens on the
/// session picker of this workspace, and leaving that without a pick exits.
pub async fn main(setup: Setup, mut signals: Signals, pick: bool) -> Result<ExitCode> {
    let theme = Theme::from_env();
    let history = sessions::home()?.join("history");
    let completer = complete::Completer::new(commands::COMMANDS).with_alias("quit", "exit");
    // The workspace's files for `@` completion, walked off the loop (a large
    // workspace must not delay the first frame), and again after each turn (it may
    // have made files).
    let (files_tx, mut files) = mpsc::unbounded_channel();
    walk_files(&setup.cwd, &files_tx);
    let history = match editor::History::load(&history, 1000) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("xcsh: {e} (starting with an empty input history)");
            editor::History::new(1000)
        }
    };
    let editor = editor::Editor::new(history, completer);
    let info = StatusInfo {
        provider: setup.provider.name().to_string(),
        model: setup.provider.model().to_string(),
        permissions: setup.permissions,
        max_steps: setup.limits.max_steps,
        compact_at: setup.limits.compact_at_tokens,
        budget: setup.limits.max_tokens,
        session_id: None,
        sandbox: Some(commands::sandbox_name(setup.sandbox)),
    };
    let (question_tx, mut questions) = mpsc::unbounded_channel();
    let mut c = Controller {
        session: None,
        picking: Picking::No,
        running: None,
        question: None,
        approver: Arc::new(commands::ChannelApprover(question_tx)),
        app: App::new(theme, info, editor),
        started: Instant::now(),
        exit: false,
        setup,
    };
    c.greet()?;
    if pick {
        c.open_picker()?;
        c.picking = Picking::Open;
    }
    let mut screen = Screen::enter().context("cannot take the terminal for the UI")?;
    let (key_tx, mut keys) = mpsc::unbounded_channel();
    std::thread::spawn(move || xcsh_tui::term::read_events(&key_tx));
    let mut dirty = true;
    let mut last_frame = Instant::now() - FRAME;
    loop {
        if dirty && last_frame.elapsed() >= FRAME {
            c.draw(&mut screen)?;
            last_frame = Instant::now();
            dirty = false;
        }
        if c.exit {
            break;
        }
        let wait = if dirty {
            FRAME.saturating_sub(last_frame.elapsed())
        } else if c.app.animating() {
            TICK
        } else {
            Duration::from_secs(3600)
        };
        let step = match c.running.as_mut() {
            Some(r) => tokio::select! {
                biased;
                t = signals.recv() => Step::Signal(t),
                k = keys.recv() => Step::Key(k),
                Some(q) = questions.recv() => Step::Question(q),
                e = r.handle.events.recv() => Step::Event(e),
                Some(index) = files.recv() => Step::Files(index),
                () = tokio::time::sleep(wait) => Step::Tick,
            },
            None => tokio::select! {
                biased;
                t = signals.recv() => Step::Signal(t),
                k = keys.recv() => Step::Key(k),
                Some(index) = files.recv() => Step::Files(index),
                () = tokio::time::sleep(wait) => Step::Tick,
            },
        };
        let now = c.now();
        match step {
            Step::Signal(t) => {
                // The terminal is given back at once; the turn settles unseen.
                let _ = screen.leave();
                signals::restore_terminal();
                if t == Termination::Hangup {
                    signals::detach_terminal();
                }
                if let Some(running) = c.running.take() {
                    settle(running, &mut questions, &mut signals).await;
                }
                return Ok(t.exit().into());
            }
            Step::Key(None) => break,
            Step::Key(Some(event)) => match event {
                Event::Key(key) if key.kind != KeyEventKind::Release => {
                    let actions = c.app.on_key_at(key, now);
                    let picked = actions.iter().any(|a| matches!(a, Action::Overlay(_)));
                    let sent = actions.iter().any(|a| {
                        matches!(
                            a,
                            Action::Prompt(_)
                                | Action::Steer(_)
                                | Action::FollowUp(_)
                                | Action::Command { .. }
                        )
                    });
                    if sent {
                        // What was sent is in the input history at once (another
                        // xcsh, or a crash, does not lose it).
                        if let Err(e) = c.app.editor_mut().history_mut().save() {
                            c.app.notice(NoticeLevel::Warning, format!("{e}"));
                        }
                    }
                    for action in actions {
                        c.act(action).await?;
                    }
                    if c.picking == Picking::Open && !c.app.overlay_open() {
                        // Closed without a pick (Esc, Ctrl-C, Ctrl-D) it leaves xcsh;
                        // a pick that failed says why in the UI.
                        c.picking = if picked { Picking::No } else { Picking::Left };
                        if c.picking == Picking::Left {
                            break;
                        }
                    }
                }
                Event::Paste(text) => c.app.on_paste(&text),
                Event::Resize(w, h) => screen.resized(w, h)?,
                _ => {}
            },
            Step::Question((request, answer)) => {
                // The events sent before the question (the step's text) are shown
                // first: the select polls questions before events.
                if let Some(r) = &mut c.running {
                    while let Ok(event) = r.handle.events.try_recv() {
                        c.app.on_run_event(event, now);
                    }
                }
                let current = commands::current_content(&request.call, Path::new(&request.cwd));
                c.app.ask(&request, current.as_deref(), now);
                c.question = Some(answer);
            }
            Step::Event(Some(event)) => c.app.on_run_event(event, now),
            Step::Event(None) => {
                c.run_ended().await;
                walk_files(&c.setup.cwd, &files_tx);
            }
            Step::Files(index) => c.app.editor_mut().set_files(Arc::new(index)),
            // Time moved: the spinner and elapsed times are drawn anew.
            Step::Tick => {}
        }
        dirty = true;
    }
    if c.picking == Picking::Left {
        // Nothing was shown but the picker: nothing is left behind but this line.
        screen.leave()?;
        println!("{NOTHING_RESUMED}");
        return Ok(ExitCode::SUCCESS);
    }
    c.draw(&mut screen)?;
    screen.leave()?;
    if let Some(hint) = commands::resume_hint(c.session.as_deref()) {
        println!("{hint}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What xcsh says when the picker it opened at start is left without a pick.
const NOTHING_RESUMED: &str = "nothing was resumed: no session was picked";

enum Step {
    Signal(Termination),
    Key(Option<Event>),
    Question(commands::Question),
    Event(Option<RunEvent>),
    Files(complete::FileIndex),
    Tick,
}

/// After a termination signal: interrupts the running turn and waits for it to
/// settle (questions it asks are denied); a second signal exits now.
async fn settle(
    mut running: Running,
    questions: &mut mpsc::UnboundedReceiver<commands::Question>,
    signals: &mut Signals,
) {
    running.handle.interrupt();
    loop {
        tokio::select! {
            biased;
            t = signals.recv() => signals::exit_now(t.exit()),
            Some(q) = questions.recv() => drop(q),
            e = running.handle.events.recv() => if e.is_none() { break },
        }
    }
    let _ = running.handle.result().await;
    xcsh_tools::procs::end_orphans();
}

impl Controller {
    fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The greeting, and a continued session's conversation so far.
    fn greet(&mut self) -> Result<()> {
        self.app.notice(
            NoticeLevel::Info,
            format!(
                "xcsh · {} · {} · {}",
                self.setup.provider.name(),
                self.setup.provider.model(),
                self.setup.cwd.display()
            ),
        );
        if let SessionTarget::Existing { path, at } = &self.setup.session.clone() {
            self.resume(path)?;
            if let Some(at) = at {
                let id = branch_at(path, *at)?;
                self.app.notice(
                    NoticeLevel::Info,
                    format!("continuing from entry {at} on a new branch (branch record {id})"),
                );
            }
        }
        Ok(())
    }

    fn draw(&mut self, screen: &mut Screen) -> Result<()> {
        let now = self.now();
        if self.app.overlay_open() {
            screen.open_overlay()?;
            screen.draw_overlay(|f| {
                let area = f.area();
                self.app.render_overlay(area, f.buffer_mut());
            })?;
            return Ok(());
        }
        screen.close_overlay()?;
        if self.app.take_clear() {
            screen.clear()?;
        }
        let history = self.app.take_history(screen.width(), now);
        screen.insert_history(&history)?;
        let live = self
            .app
            .render_live(screen.width(), screen.max_live_height(), now);
        screen.draw_live(&live)?;
        Ok(())
    }

    async fn run_ended(&mut self) {
        let Some(running) = self.running.take() else {
            return;
        };
        self.question = None;
        match running.handle.result().await {
            Ok(result) => {
                if !result.undelivered.is_empty() {
                    self.app.notice(
                        NoticeLevel::Warning,
                        format!("not delivered: {}", result.undelivered.join(" · ")),
                    );
                }
            }
            Err(e) => self
                .app
                .notice(NoticeLevel::Error, format!("the run failed: {e}")),
        }
        xcsh_tools::procs::end_orphans();
        self.app.on_run_end();
        if running.exit_after {
            self.exit = true;
        }
    }

    fn start(&mut self, task: Task) -> Result<()> {
        // A prompt's cell is made from the text the log records, as a resumed
        // session's is (`cells::from_entries`), so the two cannot differ.
        let shown = match &task {
            Task::Prompt(text) => Some(Cell::user_message(UserOrigin::Prompt, text)),
            Task::Compact => None,
        };
        let (handle, new) =
            commands::start(&self.setup, &mut self.session, task, self.approver.clone())?;
        if new {
            let id = sessions::display_name(&handle.session_path);
            self.app.info_mut().session_id = Some(id);
        }
        if let Some(cell) = shown {
            self.app.push_cell(cell);
        }
        self.running = Some(Running {
            handle,
            exit_after: false,
        });
        Ok(())
    }

    async fn act(&mut self, action: Action) -> Result<()> {
        match action {
            Action::Prompt(text) => {
                let (task, missed) = self.with_mentions(&text).await;
                for (path, why) in missed {
                    let why = why.lines().next().unwrap_or("").to_owned();
                    self.app.notice(
                        NoticeLevel::Warning,
                        format!("@{path}: not attached: {why}"),
                    );
                }
                if let Err(e) = self.start(Task::Prompt(task)) {
                    self.app.notice(NoticeLevel::Error, crate::chain(&e));
                }
            }
            Action::Steer(text) => {
                if let Some(r) = &self.running {
                    r.handle.steer(text);
                }
            }
            Action::FollowUp(text) => self.follow_up(text),
            Action::Answer(answer) => {
                if let Some(tx) = self.question.take() {
                    let _ = tx.send(answer);
                }
            }
            Action::Interrupt => {
                if let Some(r) = &self.running {
                    r.handle.interrupt();
                }
            }
            Action::Exit => match &mut self.running {
                Some(r) => r.exit_after = true,
                None => self.exit = true,
            },
            Action::Transcript => self.open_transcript(),
            Action::Command { name, arg } => {
                if let Err(e) = self.command(&name, &arg).await {
                    self.app.notice(NoticeLevel::Error, crate::chain(&e));
                }
            }
            Action::Overlay(action) => {
                if let Err(e) = self.overlay_action(action) {
                    self.app.notice(NoticeLevel::Error, crate::chain(&e));
                }
            }
        }
        Ok(())
    }

    /// A follow-up for the running turn; while idle, a new turn.
    fn follow_up(&mut self, text: String) {
        if let Some(r) = &self.running {
            r.handle.follow_up(text);
        } else if let Err(e) = self.start(Task::Prompt(text)) {
            self.app.notice(NoticeLevel::Error, crate::chain(&e));
        }
    }

    /// The prompt with each `@path` mention's file attached as the read tool
    /// returns it (`mention::attach`; the history shows them, `mention::split`),
    /// and each mention the read tool could not read, with why.
    async fn with_mentions(&self, text: &str) -> (String, Vec<(String, String)>) {
        let mut task = text.to_string();
        let mut missed = Vec::new();
        for (i, path) in complete::mentions(text).into_iter().enumerate() {
            let call = ToolCall {
                id: xcsh_machine::CallId(format!("mention-{i}")),
                name: "read".into(),
                arguments: serde_json::json!({ "path": path }).to_string(),
            };
            let outcome = self
                .setup
                .tools
                .execute(call, tokio_util::sync::CancellationToken::new())
                .await;
            if outcome.status == xcsh_machine::ToolStatus::Ok {
                mention::attach(&mut task, &path, &outcome.content);
            } else {
                missed.push((path, outcome.content));
            }
        }
        (task, missed)
    }

    fn open_transcript(&mut self) {
        let theme = self.app.theme();
        // While a question is open, what it would change, in full (its box is cut
        // to the screen and says "Ctrl-T shows all"); it does not follow the turn.
        if let Some(approval) = self.app.question().cloned() {
            let render = move |width: u16| approval.preview_lines(width, &theme);
            self.app
                .open_overlay(Box::new(overlay::Transcript::fixed(Box::new(render))));
            return;
        }
        let Some(path) = self.session.clone() else {
            self.app.notice(
                NoticeLevel::Info,
                "no conversation yet: send a prompt first",
            );
            return;
        };
        // The transcript is the log's: every cell rebuilt from the entries, tool
        // outputs in full, re-rendered at the overlay's width, and again when the
        // app says entries were recorded (the turn goes on under it).
        let render = move |width: u16| -> Vec<xcsh_tui::Line<'static>> {
            match read_session(&path)
                .map_err(anyhow::Error::from)
                .and_then(|log| Ok(xcsh_tui::cells::from_entries(&log, log.leaf())?))
            {
                Ok(cells) => xcsh_tui::cells::transcript_lines(&cells, width, &theme),
                Err(e) => vec![xcsh_tui::Line::from(format!(
                    "cannot read the session: {}",
                    crate::chain(&e)
                ))],
            }
        };
        self.app
            .open_overlay(Box::new(overlay::Transcript::new(Box::new(render))));
    }

    fn overlay_action(&mut self, action: OverlayAction) -> Result<()> {
        match action {
            OverlayAction::ContinueAt(entry) => {
                let path = self.session_path()?;
                let said = commands::continue_at(&path, entry)?;
                self.app.notice(NoticeLevel::Info, said);
                self.branch_context(&path)?;
            }
            OverlayAction::Label { entry, name } => {
                let path = self.session_path()?;
                let said = commands::label(&path, Some(entry), &name)?;
                self.app.notice(NoticeLevel::Info, format!("label {said}"));
            }
            OverlayAction::Resume(path) => {
                if self.running.is_some() {
                    anyhow::bail!(
                        "/resume cannot run during a turn: send it again once the turn ends (Ctrl-C stops it)"
                    );
                }
                self.resume(&path)?;
            }
        }
        Ok(())
    }

    fn session_path(&self) -> Result<PathBuf> {
        self.session
            .clone()
            .context("no session yet: send a prompt first")
    }

    async fn command(&mut self, name: &str, arg: &str) -> Result<()> {
        if !commands::is_command(name) {
            anyhow::bail!(commands::unknown(name));
        }
        // While a turn runs, only the commands that do not change the session.
        if self.running.is_some()
            && !matches!(
                name,
                "help"
                    | "pending"
                    | "status"
                    | "queue"
                    | "clear"
                    | "exit"
                    | "quit"
                    | "usage"
                    | "tree"
                    | "diff"
            )
        {
            anyhow::bail!(
                "/{name} cannot run during a turn: send it again once the turn ends (Ctrl-C stops it)"
            );
        }
        match name {
            "help" => self.app.notice(NoticeLevel::Info, help()),
            "exit" | "quit" => self.act_exit(),
            "clear" => self.app.clear_view(),
            "new" => {
                let said = commands::new_session(&mut self.session);
                self.app.clear_view();
                self.app.forget_session();
                self.app
                    .notice(NoticeLevel::Info, format!("new session: {said}"));
            }
            "status" => {
                let said = commands::status(&self.setup, self.session.as_deref());
                self.app.notice(NoticeLevel::Info, said);
            }
            "pending" => {
                let said = match &self.running {
                    Some(r) => {
                        let p = r.handle.pending().await;
                        format!(
                            "pending · steers: {} · follow-ups: {}",
                            list(&p.steers),
                            list(&p.follow_ups)
                        )
                    }
                    None => "pending: nothing (no turn is running)".into(),
                };
                self.app.notice(NoticeLevel::Info, said);
            }
            "queue" => {
                if arg.is_empty() {
                    anyhow::bail!("/queue TEXT: give the message");
                }
                self.follow_up(arg.to_string());
            }
            "compact" => {
                if self.session.is_none() {
                    anyhow::bail!("nothing to compact yet");
                }
                self.start(Task::Compact)?;
            }
            "memory" => {
                let said =
                    crate::memory_cmd::command(&self.setup.cwd, self.session.as_deref(), arg)?;
                self.app
                    .notice(NoticeLevel::Info, format!("memory: {said}"));
            }
            "model" => {
                let said = commands::model(&mut self.setup, arg)?;
                self.app.info_mut().model = self.setup.provider.model().to_string();
                self.app.notice(NoticeLevel::Info, format!("model: {said}"));
            }
            "resume" => self.open_picker()?,
            _ => {
                let path = self.session_path()?;
                self.session_command(name, arg, &path)?;
            }
        }
        Ok(())
    }

    fn act_exit(&mut self) {
        match &mut self.running {
            Some(r) => {
                r.handle.interrupt();
                r.exit_after = true;
            }
            None => self.exit = true,
        }
    }

    fn session_command(&mut self, name: &str, arg: &str, path: &Path) -> Result<()> {
        match name {
            "at" => {
                let said = commands::at(path, arg)?;
                self.app.notice(NoticeLevel::Info, said);
                self.branch_context(path)?;
            }
            "usage" => {
                let said = commands::usage(path)?;
                self.app.notice(NoticeLevel::Info, format!("usage: {said}"));
            }
            "tree" => {
                let log = read_session(path)?;
                let build = move |full: bool| xcsh_inspect::tree::build(&log, full);
                self.app
                    .open_overlay(Box::new(overlay::TreeNav::new(Box::new(build))));
            }
            "label" => {
                let said = commands::label(path, None, arg)?;
                self.app.notice(NoticeLevel::Info, format!("label {said}"));
            }
            "fork" => {
                let (out, said) = commands::fork(path, &self.setup.cwd)?;
                self.app.notice(NoticeLevel::Info, format!("fork: {said}"));
                self.app.info_mut().session_id = Some(sessions::display_name(&out));
                self.session = Some(out);
            }
            "diff" => {
                let log = read_session(path)?;
                let files = xcsh_inspect::diff::workspace::changes(&log);
                if files.is_empty() {
                    self.app
                        .notice(NoticeLevel::Info, "this session changed no file");
                } else {
                    self.app
                        .open_overlay(Box::new(overlay::DiffOverlay::new(files)));
                }
            }
            "undo" => {
                let said = commands::undo(path)?;
                self.app.notice(NoticeLevel::Info, format!("undo: {said}"));
            }
            "plan" => {
                let said = commands::plan_text(path)?;
                self.app
                    .notice(NoticeLevel::Info, said.trim_end().to_owned());
            }
            other => anyhow::bail!(commands::unknown(other)),
        }
        Ok(())
    }
}

/// The keys `/help` lists after the commands, each with what it does.
const KEYS: &[(&str, &str)] = &[
    ("Enter", "send (a steer while it works)"),
    (
        "Tab",
        "queue a follow-up while it works; in a popup: complete",
    ),
    ("Up/Down", "history"),
    ("@", "mention a file"),
    ("Esc", "clear; on the empty input, stop the turn"),
    ("Ctrl-C", "stop the turn (twice when idle: exit)"),
    ("Ctrl-D", "exit"),
    ("Ctrl-T", "transcript"),
    ("Ctrl-O", "reasoning"),
    (
        "approvals",
        "y once · a this tool · A this exact call · n deny · m deny with a message",
    ),
];

/// `/help`: the commands, the keys, then the editing keys, each a row `  NAME  WHAT`
/// with WHAT in one column; in history a row that wraps goes on under WHAT (a
/// notice's listing rows).
fn help() -> String {
    let row = |name: &str, what: &str| format!("\n  {name:<13}{what}");
    let mut out = String::from("commands:");
    for (name, what) in commands::COMMANDS {
        out.push_str(&row(&format!("/{name}"), what));
    }
    out.push_str("\nkeys:");
    for (key, what) in KEYS {
        out.push_str(&row(key, what));
    }
    out.push_str("\nediting:");
    for (key, what) in editor::EDITING_KEYS {
        out.push_str(&row(key, what));
    }
    out
}

/// Walks the workspace's files for `@` completion on the blocking pool; the index
/// comes back over `tx`.
fn walk_files(root: &Path, tx: &mpsc::UnboundedSender<complete::FileIndex>) {
    let (root, tx) = (root.to_path_buf(), tx.clone());
    tokio::task::spawn_blocking(move || {
        let _ = tx.send(complete::FileIndex::scan(
            &root,
            complete::DEFAULT_FILE_LIMIT,
        ));
    });
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    /// `/help` in history (a notice, as `App::notice` writes it): every command and
    /// the keys a new user needs, one row each; wide, each row is one line, and at 50
    /// columns a row that wraps goes on under its description.
    #[test]
    fn help_lists_every_command_and_key_and_wraps_rows_under_their_description() {
        let notice = xcsh_tui::cells::Cell::Notice {
            level: xcsh_tui::cells::Level::Info,
            text: super::help(),
        };
        let rows = |width: u16| -> Vec<String> {
            let lines = notice.lines(width, 0, &xcsh_tui::Theme::MONO);
            let rows: Vec<String> = lines
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect();
            let fits = |r: &String| xcsh_tui::fmt::width(r) <= usize::from(width);
            assert!(rows.iter().all(fits), "{rows:#?}");
            rows.iter().map(|r| r.trim_end().to_owned()).collect()
        };
        let wide: Vec<String> = super::help()
            .lines()
            .enumerate()
            .map(|(i, line)| format!("{}{line}", if i == 0 { "· " } else { "  " }))
            .collect();
        assert_eq!(rows(200), wide);
        expect![[r#"
            · commands:
                /help        the commands and keys
                /status      provider, model, permissions,
                             session, limits, what is allowed
                /tree        the branch tree of this session
                             (the TUI's: navigate, continue
                             from, label)
                /at          ENTRY: continue from an earlier
                             entry or label (a new branch)
                /fork        a new session file from here
                /label       NAME: name the current entry
                /resume      pick another session of this
                             workspace
                /new         start a new conversation (a new
                             session of this workspace)
                /usage       tokens spent in this session
                /diff        what this session changed in the
                             workspace
                /plan        the task plan at the current
                             entry
                /undo        revert the last turn's file
                             changes (if unchanged since)
                /compact     summarize the conversation now
                /memory      [NAME]: the memory index, or a
                             note (forget NAME deletes one)
                /model       [NAME]: show or switch the model
                /pending     the queued steers and follow-ups
                /queue       TEXT: a follow-up, delivered when
                             the turn would finish (idle: sent
                             now)
                /clear       clear the screen only (the
                             conversation goes on; /new starts
                             a new one)
                /exit        leave xcsh (also /quit, Ctrl-D)
              keys:
                Enter        send (a steer while it works)
                Tab          queue a follow-up while it works;
                             in a popup: complete
                Up/Down      history
                @            mention a file
                Esc          clear; on the empty input, stop
                             the turn
                Ctrl-C       stop the turn (twice when idle:
                             exit)
                Ctrl-D       exit
                Ctrl-T       transcript
                Ctrl-O       reasoning
                approvals    y once · a this tool · A this
                             exact call · n deny · m deny with
                             a message
              editing:
                Alt-Enter    newline (also Ctrl-J, and
                             Shift-Enter where the terminal
                             tells it from Enter)
                Ctrl-A/E     start / end of the line
                Alt-B/F      a word back / forward (also
                             Ctrl-Left/Right)
                Ctrl-W       delete the word before the cursor
                Ctrl-U/K     delete to the start / end of the
                             line
                Ctrl-Y       put back what was deleted last
                Ctrl-R       search the history (Ctrl-R again:
                             older; Enter takes it, Esc
                             cancels)"#]]
        .assert_eq(&rows(50).join("\n"));
    }
}
