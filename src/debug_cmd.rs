//! `xcsh debug …`: developer tools (as jj has them). `gen-session` writes a synthetic
//! session through the real recorder, for benchmarks and for trying the inspect
//! commands on a big log.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use xcsh_core::log::synth::{SynthOptions, generate};

#[derive(Debug, Args)]
pub struct DebugArgs {
    #[command(subcommand)]
    command: DebugCommand,
}

#[derive(Debug, Subcommand)]
enum DebugCommand {
    /// Write a realistic synthetic session (valid hash chain, replays clean).
    GenSession(GenSessionArgs),
}

#[derive(Debug, Args)]
struct GenSessionArgs {
    /// Entries in the file, the header included.
    #[arg(long, default_value_t = 1_000_000)]
    entries: u64,
    /// The same seed writes the same file.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The new session file (must not exist).
    #[arg(short = 'o', long, value_name = "FILE")]
    output: PathBuf,
}

pub fn main(args: DebugArgs) -> Result<ExitCode> {
    match args.command {
        DebugCommand::GenSession(a) => {
            let opts = SynthOptions {
                entries: a.entries,
                seed: a.seed,
            };
            let r = generate(&a.output, opts)
                .with_context(|| format!("cannot write {}", a.output.display()))?;
            println!(
                "wrote {}: {} entries, {} bytes ({} B/entry), {} runs, {} steps, {} tool results ({} of 1-4 KiB), {} messages of 2-10 KiB, {} compactions, {} branches, {} labels; leaf #{}",
                a.output.display(),
                r.entries,
                r.bytes,
                r.bytes / r.entries.max(1),
                r.runs,
                r.steps,
                r.tool_results,
                r.big_tool_results,
                r.big_messages,
                r.compactions,
                r.branches,
                r.labels,
                r.leaf
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
