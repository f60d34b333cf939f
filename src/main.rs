//! The `xcsh` binary: the command-line interface over the runtime and the toolkits.

mod config;
mod debug_cmd;
mod exit;
mod import_cmd;
mod inspect_cmd;
mod interactive;
mod mcp_cmd;
mod memory_cmd;
mod otel_cmd;
mod present;
mod provider_cmd;
mod providers;
mod redrive;
mod replay_cmd;
mod run;
mod sessions;
mod setup;
mod signals;
mod undo;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// xcsh: a coding-agent runtime whose every move is recorded, replayable and inspectable.
///
/// With no command, `xcsh` runs the agent: interactively on a terminal, or once with
/// a prompt (`xcsh -p "fix the failing test"`), exactly like `xcsh run`.
#[derive(Debug, Parser)]
#[command(name = "xcsh", version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: run::RunArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run an agent on a prompt (one-shot with -p or --json).
    Run(Box<run::RunArgs>),
    /// Print the effective configuration and where each value came from.
    Config(config::ConfigArgs),
    /// Replay sessions against today's machine; report the first divergence.
    Replay(replay_cmd::ReplayArgs),
    /// List the sessions of this workspace (all workspaces with --all).
    Sessions(sessions::SessionsArgs),
    /// Print the normalized events of one recorded provider stream as JSON Lines.
    ProviderParse(provider_cmd::ParseArgs),
    /// Re-parse every recorded provider stream and compare with its golden file.
    ProviderTest(provider_cmd::TestArgs),
    /// Draw a session's branch DAG as a tree: one line per turn (--full: per entry).
    Tree(inspect_cmd::TreeArgs),
    /// Show the conversation of one branch.
    Log(inspect_cmd::LogArgs),
    /// Show the timeline: every entry and stream event with its time, step and lane.
    Events(inspect_cmd::EventsArgs),
    /// Usage and timing per step and in total, per tool, and the budget per run.
    Stats(inspect_cmd::StatsArgs),
    /// Compare two sessions or branches (A B, `S@E`), their next contexts
    /// (--context), or the files a session changed (--workspace S).
    Diff(inspect_cmd::DiffArgs),
    /// Copy the path from the root to an entry into a new session file.
    Fork(inspect_cmd::ForkArgs),
    /// Name an entry of a session (the leaf does not move).
    Label(inspect_cmd::LabelArgs),
    /// Check a session's integrity and ordering invariants; exit 1 on a violation.
    Check(inspect_cmd::CheckArgs),
    /// Export a session as Markdown, a self-contained HTML page, JSON, or OTLP/JSON.
    Export(inspect_cmd::ExportArgs),
    /// Put back the files the last run on a session's branch changed (as `/undo`),
    /// or (`SESSION@ENTRY`) those of a call a crash interrupted.
    Undo(undo::UndoArgs),
    /// List the memory notes of the user and of this workspace (SPEC.md §28).
    Memory(memory_cmd::MemoryArgs),
    /// Print the task plan at a session's leaf, or at an entry (`SESSION@ENTRY`).
    Plan(inspect_cmd::PlanArgs),
    /// Send a session's spans (OpenTelemetry GenAI) to a collector over OTLP/HTTP.
    Otel(otel_cmd::OtelArgs),
    /// Import a session of Codex, pi or Claude Code as an xcsh log (SPEC.md §33).
    Import(import_cmd::ImportArgs),
    /// List the configured MCP servers, whether they start, and their tools (SPEC.md §32).
    Mcp(mcp_cmd::McpArgs),
    /// Developer tools: `gen-session` writes a synthetic session for benchmarks.
    #[command(hide = true)]
    Debug(debug_cmd::DebugArgs),
}

fn main() -> ExitCode {
    // A closed pipe (`xcsh events S | head`) ends the process quietly, as for any
    // command-line tool, instead of a panic in `println!`.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let Some(command) = cli.command else {
        return finish(run::main(cli.run));
    };
    let outcome = match command {
        Command::Run(args) => run::main(*args),
        Command::Config(args) => config::main(args),
        Command::Replay(args) => replay_cmd::main(args),
        Command::Sessions(args) => sessions::main(args),
        Command::ProviderParse(args) => provider_cmd::parse_main(args),
        Command::ProviderTest(args) => provider_cmd::test_main(args),
        Command::Tree(args) => inspect_cmd::tree_main(args),
        Command::Log(args) => inspect_cmd::log_main(args),
        Command::Events(args) => inspect_cmd::events_main(args),
        Command::Stats(args) => inspect_cmd::stats_main(args),
        Command::Diff(args) => inspect_cmd::diff_main(args),
        Command::Fork(args) => inspect_cmd::fork_main(args),
        Command::Label(args) => inspect_cmd::label_main(args),
        Command::Check(args) => inspect_cmd::check_main(args),
        Command::Export(args) => inspect_cmd::export_main(args),
        Command::Undo(args) => undo::main(args),
        Command::Memory(args) => memory_cmd::main(args),
        Command::Plan(args) => inspect_cmd::plan_main(args),
        Command::Otel(args) => otel_cmd::main(args),
        Command::Mcp(args) => mcp_cmd::main(args),
        Command::Import(args) => import_cmd::main(args),
        Command::Debug(args) => debug_cmd::main(args),
    };
    finish(outcome)
}

fn finish(outcome: anyhow::Result<ExitCode>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(e) => {
            // An error can quote a provider's or a file's text: shown, not obeyed.
            let message = chain(&e);
            eprintln!(
                "xcsh: error: {}",
                xcsh_inspect::terminal::neutralize(&message)
            );
            exit::Exit::of_error(&e).into()
        }
    }
}

/// The error and its causes, leaving out a cause whose text the message before it
/// already contains (library errors often quote their source), and saying a path
/// once where a cause starts with the path its context ends with (`cannot read P`
/// and `P:3: malformed entry` make `cannot read P:3: malformed entry`).
pub(crate) fn chain(error: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        let last_word = out.rsplit(' ').next().unwrap_or("");
        match text.strip_prefix(last_word) {
            Some(rest) if !last_word.is_empty() && rest.starts_with(':') => {
                out.push_str(rest);
            }
            _ => {
                if !out.is_empty() {
                    out.push_str(": ");
                }
                out.push_str(&text);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use anyhow::Context as _;

    use super::chain;

    #[test]
    fn a_cause_that_starts_with_the_path_of_its_context_names_it_once() {
        let e = Err::<(), _>(anyhow::anyhow!("/s/a.jsonl:3: malformed entry"))
            .context("cannot read /s/a.jsonl")
            .unwrap_err();
        assert_eq!(chain(&e), "cannot read /s/a.jsonl:3: malformed entry");
        let e = Err::<(), _>(anyhow::anyhow!("permission denied"))
            .context("cannot read /s/a.jsonl")
            .unwrap_err();
        assert_eq!(chain(&e), "cannot read /s/a.jsonl: permission denied");
        let e = Err::<(), _>(anyhow::anyhow!("/s/a.jsonl: boom"))
            .context("/s/a.jsonl: boom")
            .unwrap_err();
        assert_eq!(chain(&e), "/s/a.jsonl: boom");
    }
}
