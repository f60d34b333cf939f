//! `xcsh run`: one run of the agent, printed as text (`-p`), streamed, or as JSON
//! Lines (`--json`). Its exit code follows from how the run stopped
//! ([`crate::exit::Exit::of_run`]). Model text and tool output are neutralized
//! (`xcsh_inspect::terminal`) on a terminal; piped stdout gets the bytes as they came.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use xcsh_machine::{ApprovalScope, Delta, Permissions, StopReason, Verdict};
use xcsh_providers::BoxFuture;
use xcsh_runtime::instructions;
use xcsh_runtime::{
    ApprovalAnswer, ApprovalRequest, Approver, RunEvent, RunOptions, SessionTarget, Task, run_agent,
};
use xcsh_tools::sandbox::{SandboxMode, SandboxPolicy};
use xcsh_tools::testing::TestTools;
use xcsh_tools::{StandardTools, ToolOptions};
use xcsh_tui::fmt::why_stopped;

use crate::config;
use crate::exit::{Exit, usage};
use crate::present::{
    APPROVAL_CHOICES, MESSAGE_PROMPT, Reply, context_overflow, denial, first_line, more_waiting,
    parse_answer,
};
use crate::providers::{self, ProviderArgs};
use crate::sessions;
use crate::setup::{DEFAULT_SYSTEM_PROMPT, Setup};

mod user_script;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt.
    prompt: Option<String>,
    /// Print only the final text on stdout.
    #[arg(short = 'p', long)]
    print: bool,
    /// Print one JSON event per line on stdout, then a result object.
    #[arg(long, conflicts_with = "print")]
    json: bool,
    #[command(flatten)]
    provider: ProviderArgs,
    /// Continue this workspace's session last active (the first `xcsh sessions`
    /// lists).
    #[arg(long = "continue", short = 'c', conflicts_with = "resume")]
    continue_: bool,
    /// Continue a session given by path, id or id prefix; without SESSION, pick one
    /// of this workspace's in the session picker (the terminal UI).
    #[arg(long, value_name = "SESSION")]
    resume: Option<Option<String>>,
    /// Continue from this earlier entry: a new branch in the same file. ENTRY is
    /// `N`, `#N` or a label's name (`xcsh label`).
    #[arg(long, value_name = "ENTRY")]
    at: Option<String>,
    /// The workspace (default: the git root of the current directory, else the
    /// directory). With --resume of a session of another workspace: move it here.
    #[arg(long, value_name = "DIR")]
    workspace: Option<std::path::PathBuf>,
    /// Steps allowed since the run started or the last delivered message
    /// (default 32).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    max_steps: Option<u32>,
    /// Spend budget in tokens over the run (0 = no cap; default 400000).
    #[arg(long)]
    max_tokens: Option<u64>,
    /// Output tokens allowed per step (default 8192).
    #[arg(long)]
    max_output_tokens: Option<u32>,
    /// The tools: `standard` (read, list, grep, glob, edit, write, bash in the
    /// session's workspace) or `test` (echo and sleep, for scripted tests).
    #[arg(long, value_enum, default_value_t = ToolsArg::Standard)]
    tools: ToolsArg,
    /// Permission policy for mutating tools: ask (y/a/A/n on the terminal),
    /// readonly (deny every mutation), yolo (allow all). Default: yolo with -p or
    /// --json, ask in the interactive mode.
    #[arg(long, value_enum)]
    permissions: Option<PermissionsArg>,
    /// At most N tool calls of a step run at once; the others wait, in the order
    /// the model asked for them (default 8).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_parallel_tools: Option<usize>,
    /// Compact when a request's input tokens reach this (0 = never; default 150000).
    #[arg(long = "compact-at")]
    compact_at: Option<u64>,
    /// Replace the built-in system prompt with this file's text.
    #[arg(long, value_name = "FILE")]
    system_prompt: Option<std::path::PathBuf>,
    /// Print the exact request the next step would send, and exit.
    #[arg(long)]
    show_context: bool,
    /// Use this profile of the config file.
    #[arg(long)]
    profile: Option<String>,
    /// The sandbox of bash and the file tools: read-only (writes only to a private
    /// $TMPDIR), workspace-write (also the workspace; the default where the kernel
    /// can sandbox), off.
    #[arg(long, value_name = "MODE", value_parser = ["read-only", "workspace-write", "off"])]
    sandbox: Option<String>,
    /// Let sandboxed commands use the network.
    #[arg(long)]
    sandbox_network: bool,
    /// Memory (SPEC.md §28): carry the memory index in each turn's requests, offer
    /// `memory_read`, and extract notes after each completed turn (also `memory =
    /// true` in the config file; off by default).
    #[arg(long)]
    memory: bool,
    /// Developer-only: scripted steers, follow-ups and interrupts (JSON Lines), each
    /// sent when the run shows a given event; see `run/user_script.rs`.
    #[arg(long, value_name = "FILE", hide = true)]
    user_script: Option<std::path::PathBuf>,
    /// The interactive mode as plain lines instead of the terminal UI (also on
    /// TERM=dumb or when stdout is not a terminal).
    #[arg(long)]
    plain: bool,
    /// Offer the `task` tool: the model may start sub-agents, each a run of its own
    /// in a session linked to this one (SPEC §29).
    #[arg(long)]
    delegate: bool,
    #[command(flatten)]
    otel: crate::otel_cmd::RunOtelArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ToolsArg {
    Standard,
    Test,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PermissionsArg {
    Ask,
    Readonly,
    Yolo,
}

/// Asks on the terminal: the tool, its arguments, the working directory and how many
/// more questions wait, then reads `y` (once), `a` (this tool for the session), `A`
/// (this exact call), `n`, or `m` (deny with a message: `m TEXT`, or `m` and a line).
struct TerminalApprover;

impl Approver for TerminalApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<ApprovalAnswer> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask_on_terminal(&request))
                .await
                .unwrap_or(ApprovalAnswer {
                    verdict: Verdict::Deny,
                    scope: ApprovalScope::Once,
                    message: None,
                })
        })
    }
}

fn ask_on_terminal(request: &ApprovalRequest) -> ApprovalAnswer {
    let deny = ApprovalAnswer {
        verdict: Verdict::Deny,
        scope: ApprovalScope::Once,
        message: None,
    };
    let read_line = || {
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    };
    loop {
        let question = format!(
            "\nxcsh: allow `{}` {} in {}?{}\n  {APPROVAL_CHOICES}: ",
            request.call.name,
            request.call.arguments,
            request.cwd,
            more_waiting(request.waiting)
        );
        // The arguments are the model's: shown, not obeyed.
        eprint!("{}", xcsh_inspect::terminal::neutralize(&question));
        let Some(line) = read_line() else {
            return deny;
        };
        match parse_answer(&line) {
            Some(Reply::Answer(answer)) => return answer,
            Some(Reply::Message) => {
                eprint!("{MESSAGE_PROMPT} ");
                return read_line().map_or(deny, |message| denial(&message));
            }
            None => {}
        }
    }
}

pub fn main(args: RunArgs) -> Result<ExitCode> {
    // Whatever a tool call detaches is reparented to xcsh, so it dies with the call
    // (SPEC §21.4).
    if let Err(e) = xcsh_tools::procs::become_subreaper() {
        eprintln!(
            "xcsh: cannot become a child subreaper ({e}): processes a bash call detaches from its group may outlive it"
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(run(args));
    // On the way out, whatever a call left is killed (a run that failed included),
    // and every MCP server.
    xcsh_tools::procs::end_everything();
    xcsh_mcp::kill_all();
    outcome
}

fn setup(args: &RunArgs, interactive: bool) -> Result<Setup> {
    let here = std::env::current_dir()?;
    let here = here.canonicalize().unwrap_or(here);
    let chosen = args
        .workspace
        .as_deref()
        .map(sessions::explicit_workspace)
        .transpose()?;
    let here_ws = match &chosen {
        Some(w) => w.clone(),
        None => sessions::workspace_root(&here)?,
    };
    let config_path = config::path()?;
    let file = config::load(&config_path)?;
    let flags = config::Layer {
        provider: args.provider.kind_name(),
        model: args.provider.model.clone(),
        base_url: args.provider.base_url.clone(),
        permissions: args.permissions.map(|p| {
            match p {
                PermissionsArg::Ask => "ask",
                PermissionsArg::Readonly => "readonly",
                PermissionsArg::Yolo => "yolo",
            }
            .to_string()
        }),
        max_steps: args.max_steps,
        max_tokens: args.max_tokens,
        max_output_tokens: args.max_output_tokens,
        compact_at: args.compact_at,
        system_prompt: args.system_prompt.clone(),
        max_parallel_tools: args.max_parallel_tools,
        shell_env: None,
        sandbox: args.sandbox.clone(),
        sandbox_network: args.sandbox_network.then_some(true),
        memory: args.memory.then_some(true),
        delegate: args.delegate.then_some(true),
        otel: args.otel.layer()?,
    };
    let mut effective = config::resolve(&file, &config_path, args.profile.as_deref(), &flags)?;
    let mut provider_args = args.provider.clone();
    let existing = if args.continue_ {
        let (path, recorded) = sessions::newest(&here_ws)?;
        Some((sessions::display_name(&path), path, Some(recorded)))
    } else if let Some(Some(name)) = &args.resume {
        Some((name.clone(), sessions::resolve(name)?, None))
    } else {
        None
    };
    let (session, cwd) = match existing {
        Some((name, path, recorded)) => {
            let at = args
                .at
                .as_deref()
                .map(|text| xcsh_inspect::resolve_entry_at(&path, text))
                .transpose()?;
            let placed = sessions::place(
                &name,
                path,
                recorded,
                at,
                &here_ws,
                chosen.as_deref(),
                args.show_context,
            )?;
            // The session's provider, model, base URL and script where the command
            // line chooses none (§22.2): a flag, or the profile `--profile` names.
            if let Some(choice) = xcsh_log::recorded_provider(&placed.path, placed.at)? {
                let id = sessions::display_name(&placed.path);
                let profile_named = args.profile.is_some();
                if let Some(line) = providers::apply(
                    &choice,
                    &id,
                    &mut provider_args,
                    &mut effective,
                    profile_named,
                ) {
                    say(&format!("xcsh: {line}"));
                }
            }
            let target = SessionTarget::Existing {
                path: placed.path,
                at: placed.at,
            };
            (target, placed.workspace)
        }
        None => {
            if args.at.is_some() {
                usage!("--at needs a session to branch: add --continue or --resume SESSION");
            }
            let (session_id, path) = sessions::new_session(&here_ws)?;
            let target = SessionTarget::New {
                path,
                session_id,
                cwd: here_ws.display().to_string(),
            };
            (target, here_ws)
        }
    };
    let base = match &effective.system_prompt {
        Some(s) => std::fs::read_to_string(&s.value).with_context(|| {
            format!(
                "--system-prompt {}: cannot read it ({})",
                s.value.display(),
                s.source
            )
        })?,
        None => DEFAULT_SYSTEM_PROMPT.to_string(),
    };
    // From where xcsh started when that is inside the workspace (the nearer files).
    let from = if here.starts_with(&cwd) { &here } else { &cwd };
    let home = sessions::home()?;
    let files = instructions::discover(from, Some(&home));
    let permissions = match effective.permissions.as_ref().map(|p| p.value.as_str()) {
        Some("ask") => Permissions::Ask,
        Some("readonly") => Permissions::Readonly,
        Some(_) => Permissions::Yolo,
        None if interactive => Permissions::Ask,
        None => Permissions::Yolo,
    };
    let sandbox = match args.tools {
        ToolsArg::Standard => {
            let (sandbox, why) = config::effective_sandbox(effective.sandbox_policy());
            if let Some(why) = why {
                eprintln!(
                    "xcsh: the sandbox is off: {} was asked ({}), but {why}; bash and the file tools run unconfined (`--sandbox off` or `sandbox = \"off\"` silences this)",
                    effective.sandbox.value.name(),
                    effective.sandbox.source
                );
            }
            sandbox
        }
        ToolsArg::Test => SandboxPolicy {
            mode: SandboxMode::Off,
            network: false,
        },
    };
    let delegate = effective.delegate.value;
    let memory = effective
        .memory
        .value
        .then(|| xcsh_runtime::memory::MemoryOptions {
            store: xcsh_tools::memory::MemoryStore::new(&home, &cwd),
            root: cwd.clone(),
        });
    let tools: Arc<dyn xcsh_tools::ToolExecutor> = match args.tools {
        ToolsArg::Standard => Arc::new(StandardTools::with_options(
            &cwd,
            ToolOptions {
                shell_env: effective.env_policy().apply(std::env::vars_os()),
                blobs: Some(crate::undo::store()?),
                sandbox,
                ..ToolOptions::default()
            },
        )?),
        ToolsArg::Test => Arc::new(TestTools),
    };
    let tools = match &memory {
        Some(m) => Arc::new(xcsh_tools::memory::MemoryTools::new(tools, m.store.clone())),
        None => tools,
    };
    let system_prompt = instructions::system_prompt(&base, &files);
    let (provider, choice) = providers::build(&provider_args, &cwd, &effective)?;
    Ok(Setup {
        memory,
        sandbox,
        session,
        limits: effective.limits(),
        system_prompt,
        provider,
        choice,
        provider_args,
        tools,
        permissions,
        max_parallel_tools: effective.max_parallel_tools.value,
        effective,
        cwd,
        secrets: providers::known_secrets(),
        delegate,
    })
}

/// `--show-context`: the request the next step would send, as the provider sends it.
fn show_context(setup: &Setup, prompt: Option<String>) -> Result<ExitCode> {
    let mut messages = match &setup.session {
        SessionTarget::Existing { path, at } => {
            let log = xcsh_log::read_session(path)?;
            let leaf = at.unwrap_or(log.leaf());
            xcsh_log::rebuild_context(&log, leaf)?
                .into_iter()
                .map(|i| i.message)
                .collect()
        }
        SessionTarget::New { .. } => Vec::new(),
    };
    if let Some(text) = prompt {
        messages.push(xcsh_machine::Message::User {
            origin: xcsh_machine::UserOrigin::Prompt,
            text,
        });
    }
    // With memory on, the index as it is now follows the project instructions
    // (SPEC.md §28.3), as the turn's requests would carry it.
    let system = match &setup.memory {
        Some(m) => {
            xcsh_runtime::memory::system_with_index(&setup.system_prompt, &m.store.index().text)
        }
        None => setup.system_prompt.clone(),
    };
    let request = xcsh_providers::ModelRequest {
        system,
        messages: messages.into(),
        tools: {
            let mut specs = setup.tools.specs();
            specs.extend(setup.delegate.then(xcsh_runtime::task::spec));
            specs
        },
        max_output_tokens: setup.limits.max_output_tokens,
    };
    let body = setup.provider.render_request(&request);
    println!("{}", serde_json::to_string_pretty(&body)?);
    Ok(ExitCode::SUCCESS)
}

/// `--resume` without SESSION: the session picker of the terminal UI; `None` when
/// this run opens it, else why not (a one-shot run, stdin not a terminal, or the
/// plain line mode's reason, `interactive::no_terminal_ui`).
fn no_picker(args: &RunArgs, interactive: bool) -> Option<&'static str> {
    let one_shot = [
        (args.print, "not with -p"),
        (args.json, "not with --json"),
        (args.show_context, "not with --show-context"),
        (!interactive, "not with a PROMPT"),
    ];
    if let Some((_, why)) = one_shot.into_iter().find(|(given, _)| *given) {
        return Some(why);
    }
    if !std::io::stdin().is_terminal() {
        return Some("stdin is not a terminal");
    }
    crate::interactive::no_terminal_ui(args.plain)
}

/// `--resume` without SESSION where no picker can open (`why`): this workspace's
/// sessions as `xcsh sessions` lists them, and a usage error that asks for one.
fn refuse_to_pick(args: &RunArgs, why: &str) -> Result<ExitCode> {
    let here = match &args.workspace {
        Some(dir) => sessions::explicit_workspace(dir)?,
        None => sessions::workspace_root(&std::env::current_dir()?)?,
    };
    let listing = sessions::summaries(&here, false)?;
    let wanted = format!(
        "--resume without SESSION opens the session picker, which needs the terminal UI ({why})"
    );
    if listing.sessions.is_empty() {
        sessions::print_unreadable(&listing);
        usage!(
            "{wanted}; and this workspace ({}) has no session to resume (`xcsh sessions --all` lists every workspace's)",
            here.display()
        );
    }
    sessions::print_listing(&listing, false)?;
    usage!("{wanted}: name the session instead, `--resume ID`, with an id listed above");
}

async fn run(args: RunArgs) -> Result<ExitCode> {
    let interactive = args.prompt.is_none() && !args.print && !args.json && !args.show_context;
    let pick = matches!(args.resume, Some(None));
    if pick && let Some(why) = no_picker(&args, interactive) {
        return refuse_to_pick(&args, why);
    }
    if interactive && !std::io::stdin().is_terminal() {
        usage!(
            "no prompt: give one, e.g. `xcsh run -p \"fix the failing test\"`, or run xcsh on a terminal for the interactive mode"
        );
    }
    let mut setup = setup(&args, interactive)?;
    if args.show_context {
        return show_context(&setup, args.prompt.clone());
    }
    // The MCP servers start here, for `xcsh run` and the interactive mode only
    // (SPEC.md §32.6); they are stopped when `mcp` is dropped, at the latest.
    let env = setup.effective.env_policy().apply(std::env::vars_os());
    let mcp = crate::mcp_cmd::start(&setup.cwd, setup.sandbox, &env, true).await?;
    if !mcp.is_empty() {
        setup.tools = mcp.layered(Arc::clone(&setup.tools));
    }
    if interactive {
        let outcome = crate::interactive::main(setup, args.plain, pick).await;
        mcp.close().await;
        return outcome;
    }
    let Some(prompt) = args.prompt.clone() else {
        usage!("no prompt: give one, e.g. `xcsh run -p \"fix the failing test\"`");
    };
    let delegate = setup.delegate;
    let otel = (
        setup.effective.otel.clone(),
        setup.provider.name().to_owned(),
        setup.effective.model.as_ref().map(|m| m.value.clone()),
    );
    let opts = RunOptions {
        session: setup.session,
        task: Task::Prompt(prompt),
        limits: setup.limits,
        system_prompt: setup.system_prompt,
        provider: setup.provider,
        tools: setup.tools,
        permissions: setup.permissions,
        approver: match setup.permissions {
            Permissions::Ask => {
                if !std::io::stdin().is_terminal() {
                    bail!(
                        "--permissions ask needs a terminal to answer approvals on (stdin is not one); use readonly or yolo"
                    );
                }
                Some(Arc::new(TerminalApprover))
            }
            // Only `bash_outside_sandbox` is asked under yolo: on a terminal (§18.2).
            Permissions::Yolo
                if setup.sandbox.mode != SandboxMode::Off && std::io::stdin().is_terminal() =>
            {
                Some(Arc::new(TerminalApprover))
            }
            Permissions::Readonly | Permissions::Yolo => None,
        },
        max_parallel_tools: setup.max_parallel_tools,
        secrets: setup.secrets.clone(),
        memory: setup.memory.clone(),
        provider_record: Some(setup.choice),
    };
    let opts = crate::setup::offer_task(delegate, opts);
    let mut user_script = args
        .user_script
        .as_deref()
        .map(user_script::UserScript::load)
        .transpose()?;
    let mut signals = crate::signals::Signals::new()?;
    let mut handle = run_agent(opts)?;
    let interrupter = handle.interrupter();
    tokio::spawn(async move {
        // The first Ctrl-C, SIGTERM or SIGHUP stops the running turn; a second one
        // exits at once (every tool process killed first).
        let first = tokio::select! {
            r = tokio::signal::ctrl_c() => r.ok().map(|()| Exit::Interrupted),
            t = signals.recv() => Some(t.exit()),
        };
        let Some(first) = first else { return };
        match crate::signals::received() {
            Some(crate::signals::Termination::Hangup) => crate::signals::detach_terminal(),
            Some(t) => say(&format!(
                "\nxcsh: {}: interrupting (again to exit now)",
                t.name()
            )),
            None => eprintln!("\nxcsh: interrupting (Ctrl-C again to exit now)"),
        }
        interrupter.interrupt();
        let second = tokio::select! {
            r = tokio::signal::ctrl_c() => r.ok().map(|()| Exit::Interrupted),
            t = signals.recv() => Some(t.exit()),
        };
        crate::signals::exit_now(second.unwrap_or(first));
    });

    let mut stdout = std::io::stdout().lock();
    let streaming = !args.print && !args.json;
    // On a terminal model text is shown, not obeyed; piped, it is the data as it came.
    let terminal = stdout.is_terminal();
    // Whether stdout is in the middle of a line of streamed text.
    let mut mid_line = false;
    // Set when output failed after a termination signal (the terminal or the
    // reader is gone): the run still settles, unseen.
    let mut mute = false;
    while let Some(event) = handle.events.recv().await {
        if let Some(script) = &mut user_script {
            script.on_event(&event, &handle);
        }
        if mute {
            continue;
        }
        let shown = if args.json {
            writeln!(stdout, "{}", serde_json::to_string(&event)?)
                .and_then(|()| stdout.flush())
                .map_err(anyhow::Error::from)
        } else if streaming {
            render(&mut stdout, &event, &mut mid_line, terminal)
        } else {
            if let Some(line) = notice(&event) {
                say(&line);
            }
            Ok(())
        };
        match shown {
            Err(_) if crate::signals::received().is_some() => mute = true,
            other => other?,
        }
    }
    if let Some(script) = &user_script {
        script.report_unsent();
    }
    let result = handle.result().await?;
    if args.json {
        let mut value = serde_json::to_value(&result)?;
        value["type"] = "result".into();
        crate::signals::unless_signalled(writeln!(stdout, "{value}"))?;
    } else if args.print {
        // Only a completed run has a final answer; any other end says why on stderr
        // and leaves stdout empty (the log keeps whatever text there was).
        if matches!(result.stop_reason, StopReason::Completed) {
            if !result.final_text.is_empty() {
                crate::signals::unless_signalled(writeln!(
                    stdout,
                    "{}",
                    shown(&result.final_text, terminal)
                ))?;
            }
        } else {
            say(&format!("xcsh: run {}", why_stopped(&result.stop_reason)));
        }
    }
    say(&format!("session: {}", result.session_path));
    mcp.close().await;
    let (settings, provider, model) = otel;
    let path = std::path::Path::new(&result.session_path);
    crate::otel_cmd::after_run(&settings, path, Some(provider), model).await;
    xcsh_tools::procs::end_orphans();
    Ok(crate::signals::exit_after(Exit::of_run(&result.stop_reason)).into())
}

/// Model text for stdout: neutralized on a terminal, as it came when piped.
fn shown(text: &str, terminal: bool) -> std::borrow::Cow<'_, str> {
    if terminal {
        xcsh_inspect::terminal::neutralize(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// A line on stderr, where people read: always neutralized (it can quote tool
/// output, arguments the model wrote, or a provider's error text).
fn say(line: &str) {
    eprintln!("{}", xcsh_inspect::terminal::neutralize(line));
}

/// The stderr line an event gives in every text mode (streamed and `-p`): notices and
/// automatic compactions.
fn notice(event: &RunEvent) -> Option<String> {
    match event {
        RunEvent::Notice { message } => Some(format!("xcsh: {message}")),
        RunEvent::CompactionStarted { tokens_before } => Some(format!(
            "xcsh: compacting the conversation ({tokens_before} input tokens)"
        )),
        RunEvent::Compacted {
            tokens_before,
            tokens_after,
        } => Some(format!(
            "xcsh: compacted the conversation: {tokens_before} → {tokens_after} tokens"
        )),
        _ => None,
    }
}

/// Streamed text on stdout; tool activity and notices on stderr.
fn render(
    out: &mut impl Write,
    event: &RunEvent,
    mid_line: &mut bool,
    terminal: bool,
) -> Result<()> {
    let mut end_line = |out: &mut dyn Write| -> Result<()> {
        if std::mem::take(mid_line) {
            writeln!(out)?;
            out.flush()?;
        }
        Ok(())
    };
    match event {
        RunEvent::TextDelta(Delta { text, .. }) => {
            write!(out, "{}", shown(text, terminal))?;
            out.flush()?;
            *mid_line = !text.ends_with('\n');
        }
        RunEvent::Notice { .. }
        | RunEvent::CompactionStarted { .. }
        | RunEvent::Compacted { .. } => {
            end_line(out)?;
            if let Some(line) = notice(event) {
                say(&line);
            }
        }
        RunEvent::StepStarted { .. } => end_line(out)?,
        RunEvent::ToolCall {
            name, arguments, ..
        } => {
            end_line(out)?;
            say(&format!("[{name}] {arguments}"));
        }
        RunEvent::ToolResult {
            name,
            status,
            content,
            ..
        } => {
            let (first, more) = first_line(content);
            say(&format!("[{name}] {status:?}: {first}{more}"));
        }
        RunEvent::Plan { plan, .. } => {
            for line in plan.checklist().lines() {
                say(&format!("[plan] {line}"));
            }
        }
        RunEvent::ApprovalRequested { .. } => end_line(out)?,
        RunEvent::StepFinished {
            error: Some(error), ..
        } if error.kind == xcsh_machine::ProviderErrorKind::ContextOverflow => {
            end_line(out)?;
            say(&format!("xcsh: {}", context_overflow(&error.message)));
        }
        RunEvent::RunFinished { reason, .. } => {
            end_line(out)?;
            if !matches!(reason, StopReason::Completed) {
                say(&format!("xcsh: run {}", why_stopped(reason)));
            }
        }
        _ => {}
    }
    Ok(())
}
