//! `xcsh debug …`: developer tools (as jj has them). `gen-session` writes a synthetic
//! session through the real recorder, for benchmarks and for trying the inspect
//! commands on a big log.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use xcsh_journal::synth::{SynthOptions, SynthShape, generate_shaped};

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
    /// The chance per run, in thousandths, that it continues from an earlier
    /// settled boundary on a new branch (1000: every run).
    #[arg(long, default_value_t = SynthShape::default().branch_per_mille)]
    branch_per_mille: u64,
    /// Tool rounds per run at most.
    #[arg(long, default_value_t = SynthShape::default().max_rounds)]
    max_rounds: u64,
    /// End the file with this many labels, each on the label before it.
    #[arg(long, default_value_t = 0)]
    label_chain: u64,
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
            let shape = SynthShape {
                branch_per_mille: a.branch_per_mille,
                max_rounds: a.max_rounds,
                label_chain: a.label_chain,
            };
            let r = generate_shaped(&a.output, opts, shape)
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
