//! `xcsh run`: one run of the agent, printed as text (`-p`), streamed, or as JSON
//! Lines (`--json`). Exit codes: 0 completed, 2 a limit stopped the run, 3 provider
//! error, 130 interrupted, 1 any other error.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use xcsh_core::machine::{ApprovalScope, EntryId, Limits, Permissions, StopReason, Verdict};
use xcsh_core::provider::faux::FauxProvider;
use xcsh_core::provider::{BoxFuture, Provider};
use xcsh_core::runtime::{
    ApprovalAnswer, ApprovalRequest, Approver, RunEvent, RunOptions, SessionTarget, run_agent,
};
use xcsh_core::tools::StandardTools;
use xcsh_core::tools::testing::TestTools;

use crate::sessions;

const DEFAULT_SYSTEM_PROMPT: &str = "You are xcsh, a coding agent. Work in the user's workspace with the tools you are given. Be precise and brief.";

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
    /// The provider: `faux` plays a script (`--script`).
    #[arg(long, default_value = "faux")]
    provider: String,
    /// The faux provider's script: JSON Lines, one model step per line.
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// Continue the newest session of this workspace.
    #[arg(long = "continue", short = 'c', conflicts_with = "resume")]
    continue_: bool,
    /// Continue a session given by path, id or id prefix.
    #[arg(long, value_name = "SESSION")]
    resume: Option<String>,
    /// Continue from this earlier entry: a new branch in the same file.
    #[arg(long, value_name = "ENTRY")]
    at: Option<EntryId>,
    /// Steps allowed since the run started or the last delivered message.
    #[arg(long, default_value_t = Limits::default().max_steps, value_parser = clap::value_parser!(u32).range(1..))]
    max_steps: u32,
    /// Spend budget in tokens over the run (0 = no cap).
    #[arg(long, default_value_t = Limits::default().max_tokens)]
    max_tokens: u64,
    /// Output tokens allowed per step.
    #[arg(long, default_value_t = Limits::default().max_output_tokens)]
    max_output_tokens: u32,
    /// The tools: `standard` (read, list, grep, glob, edit, write, bash in the
    /// current directory) or `test` (echo and sleep, for scripted tests).
    #[arg(long, value_enum, default_value_t = ToolsArg::Standard)]
    tools: ToolsArg,
    /// Permission policy for mutating tools: ask (y/a/A/n on the terminal),
    /// readonly (deny every mutation), yolo (allow all).
    #[arg(long, value_enum, default_value_t = PermissionsArg::Yolo)]
    permissions: PermissionsArg,
    /// Compact when a request's input tokens reach this (0 = never).
    #[arg(long = "compact-at", default_value_t = Limits::default().compact_at_tokens)]
    compact_at: u64,
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

/// Asks on the terminal: the tool, its arguments and the working directory, then
/// reads `y` (once), `a` (this tool for the session), `A` (this exact call), `n`.
struct TerminalApprover;

impl Approver for TerminalApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<ApprovalAnswer> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask_on_terminal(&request))
                .await
                .unwrap_or(ApprovalAnswer {
                    verdict: Verdict::Deny,
                    scope: ApprovalScope::Once,
                })
        })
    }
}

fn ask_on_terminal(request: &ApprovalRequest) -> ApprovalAnswer {
    let deny = ApprovalAnswer {
        verdict: Verdict::Deny,
        scope: ApprovalScope::Once,
    };
    loop {
        eprint!(
            "\nxcsh: allow `{}` {} in {}?\n  [y] once  [a] this tool for the session  [A] this exact call  [n] deny: ",
            request.call.name, request.call.arguments, request.cwd
        );
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => return deny,
            Ok(_) => {}
        }
        let (verdict, scope) = match line.trim() {
            "y" | "Y" | "yes" => (Verdict::Allow, ApprovalScope::Once),
            "a" => (Verdict::Allow, ApprovalScope::Tool),
            "A" => (Verdict::Allow, ApprovalScope::Call),
            "n" | "N" | "no" => (Verdict::Deny, ApprovalScope::Once),
            _ => continue,
        };
        return ApprovalAnswer { verdict, scope };
    }
}

pub fn main(args: RunArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run(args))
}

fn provider(args: &RunArgs) -> Result<Arc<dyn Provider>> {
    match args.provider.as_str() {
        "faux" => {
            let script = args.script.as_ref().context(
                "--provider faux needs --script FILE (JSON Lines, one model step per line)",
            )?;
            Ok(Arc::new(FauxProvider::from_file(script)?))
        }
        other => bail!(
            "--provider {other}: unknown provider; this build has `faux` (the HTTP providers openai, anthropic and openai-responses are not built yet)"
        ),
    }
}

async fn run(args: RunArgs) -> Result<ExitCode> {
    let Some(prompt) = args.prompt.clone() else {
        bail!(
            "no prompt: give one, e.g. `xcsh run -p \"fix the failing test\"` (the interactive mode is not built yet)"
        );
    };
    let cwd = std::env::current_dir()?;
    let session = if args.continue_ {
        SessionTarget::Existing {
            path: sessions::newest(&cwd)?,
            at: args.at,
        }
    } else if let Some(name) = &args.resume {
        SessionTarget::Existing {
            path: sessions::resolve(name)?,
            at: args.at,
        }
    } else {
        if args.at.is_some() {
            bail!("--at needs a session to branch: add --continue or --resume SESSION");
        }
        let (session_id, path) = sessions::new_session(&cwd)?;
        SessionTarget::New {
            path,
            session_id,
            cwd: cwd.display().to_string(),
        }
    };
    let opts = RunOptions {
        session,
        prompt,
        limits: Limits {
            max_steps: args.max_steps,
            max_tokens: args.max_tokens,
            max_output_tokens: args.max_output_tokens,
            compact_at_tokens: args.compact_at,
        },
        system_prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
        provider: provider(&args)?,
        tools: match args.tools {
            ToolsArg::Standard => Arc::new(StandardTools::new(&cwd)?),
            ToolsArg::Test => Arc::new(TestTools),
        },
        permissions: match args.permissions {
            PermissionsArg::Ask => Permissions::Ask,
            PermissionsArg::Readonly => Permissions::Readonly,
            PermissionsArg::Yolo => Permissions::Yolo,
        },
        approver: match args.permissions {
            PermissionsArg::Ask => {
                if !std::io::stdin().is_terminal() {
                    bail!(
                        "--permissions ask needs a terminal to answer approvals on (stdin is not one); use readonly or yolo"
                    );
                }
                Some(Arc::new(TerminalApprover))
            }
            PermissionsArg::Readonly | PermissionsArg::Yolo => None,
        },
    };
    let mut handle = run_agent(opts)?;
    let interrupter = handle.interrupter();
    tokio::spawn(async move {
        // First Ctrl-C stops the running turn; a second one exits at once.
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\nxcsh: interrupting (Ctrl-C again to exit now)");
            interrupter.interrupt();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });

    let mut stdout = std::io::stdout().lock();
    let streaming = !args.print && !args.json;
    // Whether stdout is in the middle of a line of streamed text.
    let mut mid_line = false;
    while let Some(event) = handle.events.recv().await {
        if args.json {
            writeln!(stdout, "{}", serde_json::to_string(&event)?)?;
            stdout.flush()?;
            continue;
        }
        if streaming {
            render(&mut stdout, &event, &mut mid_line)?;
        } else if let RunEvent::Notice { message } = &event {
            eprintln!("xcsh: {message}");
        }
    }
    let result = handle.result().await?;
    if args.json {
        let mut value = serde_json::to_value(&result)?;
        value["type"] = "result".into();
        writeln!(stdout, "{value}")?;
    } else if args.print {
        writeln!(stdout, "{}", result.final_text)?;
        if !matches!(result.stop_reason, StopReason::Completed) {
            eprintln!("xcsh: run stopped: {}", describe(&result.stop_reason));
        }
    }
    eprintln!("session: {}", result.session_path);
    Ok(exit_code(&result.stop_reason))
}

/// Streamed text on stdout; tool activity and notices on stderr.
fn render(out: &mut impl Write, event: &RunEvent, mid_line: &mut bool) -> Result<()> {
    let mut end_line = |out: &mut dyn Write| -> Result<()> {
        if std::mem::take(mid_line) {
            writeln!(out)?;
            out.flush()?;
        }
        Ok(())
    };
    match event {
        RunEvent::TextDelta { text, .. } => {
            write!(out, "{text}")?;
            out.flush()?;
            *mid_line = !text.ends_with('\n');
        }
        RunEvent::Notice { message } => eprintln!("xcsh: {message}"),
        RunEvent::StepStarted { .. } => end_line(out)?,
        RunEvent::ToolCall {
            name, arguments, ..
        } => {
            end_line(out)?;
            eprintln!("[{name}] {arguments}");
        }
        RunEvent::ToolResult {
            name,
            status,
            content,
            ..
        } => {
            let first = content.lines().next().unwrap_or("");
            let more = content.lines().count().saturating_sub(1);
            let more = if more > 0 {
                format!(" (+{more} lines)")
            } else {
                String::new()
            };
            eprintln!("[{name}] {status:?}: {first}{more}");
        }
        RunEvent::ApprovalRequested { .. } => end_line(out)?,
        RunEvent::RunFinished { reason, .. } => {
            end_line(out)?;
            if !matches!(reason, StopReason::Completed) {
                eprintln!("xcsh: run stopped: {}", describe(reason));
            }
        }
        _ => {}
    }
    Ok(())
}

fn describe(reason: &StopReason) -> String {
    match reason {
        StopReason::Completed => "completed".into(),
        StopReason::MaxSteps { limit } => format!("the step limit ({limit}) was reached"),
        StopReason::MaxTokens { limit, spent } => {
            format!("the spend budget of {limit} tokens is used up ({spent} spent)")
        }
        StopReason::OutputLimit => "the response hit its output limit".into(),
        StopReason::ContentFilter => "the provider withheld the response (content filter)".into(),
        StopReason::Interrupted => "interrupted".into(),
        StopReason::ProviderError { error } => format!("provider error: {}", error.message),
        StopReason::Crashed => "the previous run ended without finishing".into(),
    }
}

fn exit_code(reason: &StopReason) -> ExitCode {
    match reason {
        StopReason::Completed => ExitCode::SUCCESS,
        StopReason::MaxSteps { .. }
        | StopReason::MaxTokens { .. }
        | StopReason::OutputLimit
        | StopReason::ContentFilter => ExitCode::from(2),
        StopReason::ProviderError { .. } => ExitCode::from(3),
        StopReason::Interrupted => ExitCode::from(130),
        StopReason::Crashed => ExitCode::from(1),
    }
}
