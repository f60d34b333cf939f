//! `xcsh provider-parse` and `xcsh provider-test`: the provider regression tools.
//!
//! `provider-parse --protocol P FILE [--raw]` prints the normalized events of one
//! recorded stream as JSON Lines, then the assembled response (the golden format of
//! `xcsh_providers::regress`). `provider-test [DIR]` checks every recorded
//! stream that has a golden file, and every synthetic stream beside the goldens:
//! whole, in 32 seeded random chunkings and byte by byte, all equal and equal to the
//! golden; it prints a table and exits 1 on any mismatch, showing the first
//! difference.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use comfy_table::{Cell, Color, Table, presets::UTF8_FULL_CONDENSED};
use xcsh_providers::regress::{self, Protocol, Verdict};

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The wire protocol: openai (Chat Completions), anthropic (Messages),
    /// openai-responses (Responses).
    #[arg(long, value_parser = ["openai", "anthropic", "openai-responses"])]
    protocol: String,
    /// The recorded stream: one SSE data payload per line (as in
    /// ../shared/provider-streams), or raw SSE bytes with --raw.
    file: PathBuf,
    /// FILE holds raw SSE bytes.
    #[arg(long)]
    raw: bool,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The streams directory, with one folder per protocol (openai-chat,
    /// anthropic-messages, openai-responses). Default: $XCSH_PROVIDER_STREAMS, else
    /// ../shared/provider-streams beside the workspace.
    dir: Option<PathBuf>,
    /// Where the golden files live (<protocol-folder>/<name>.golden.jsonl).
    /// Default: fixtures/provider-streams of the workspace.
    #[arg(long, value_name = "DIR")]
    golden: Option<PathBuf>,
}

fn protocol(name: &str) -> Result<Protocol> {
    Protocol::from_name(name).with_context(|| {
        format!("--protocol {name}: unknown; use openai, anthropic or openai-responses")
    })
}

pub fn parse_main(args: ParseArgs) -> Result<ExitCode> {
    let protocol = protocol(&args.protocol)?;
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let sse = if args.raw {
        bytes
    } else {
        let text = String::from_utf8(bytes)
            .with_context(|| format!("{} is not UTF-8 text", args.file.display()))?;
        protocol
            .rebuild_sse(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?
    };
    let parsed = regress::parse_whole(protocol, &sse);
    let mut out = std::io::stdout().lock();
    out.write_all(regress::render(&parsed).as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The workspace root this binary was built from (the root package's directory).
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn default_golden_root() -> PathBuf {
    let built = workspace_root().join("fixtures/provider-streams");
    if built.is_dir() {
        built
    } else {
        PathBuf::from("fixtures/provider-streams")
    }
}

pub fn test_main(args: TestArgs) -> Result<ExitCode> {
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| regress::streams_dir(&workspace_root()));
    if !dir.is_dir() {
        bail!(
            "the streams directory {} does not exist: pass DIR or set {}",
            dir.display(),
            regress::STREAMS_ENV
        );
    }
    let golden_root = args.golden.clone().unwrap_or_else(default_golden_root);
    let mut streams = regress::discover(&dir)
        .with_context(|| format!("cannot list the streams in {}", dir.display()))?;
    if streams.is_empty() {
        bail!(
            "no recorded streams in {} (expected <protocol-folder>/<name>.jsonl with folders openai-chat, anthropic-messages, openai-responses)",
            dir.display()
        );
    }
    let recorded = streams.len();
    streams.extend(regress::discover_synthetic(&golden_root).with_context(|| {
        format!(
            "cannot list the synthetic streams in {}",
            golden_root.display()
        )
    })?);

    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(vec!["stream", "events", "result"]);
    let mut failures = Vec::new();
    let (mut passed, mut without_golden) = (0, 0);
    for stream in &streams {
        let label = stream.label();
        let payloads = std::fs::read_to_string(&stream.path)
            .with_context(|| format!("cannot read {}", stream.path.display()))?;
        let golden_path = stream.golden_path(&golden_root);
        let golden = match std::fs::read_to_string(&golden_path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read {}", golden_path.display()));
            }
        };
        let (events, result) =
            match regress::check(stream.protocol, &stream.name, &payloads, golden.as_deref()) {
                Ok(report) => {
                    let result = match &report.verdict {
                        Verdict::Pass => {
                            passed += 1;
                            Cell::new("pass").fg(Color::Green)
                        }
                        Verdict::NoGolden => {
                            without_golden += 1;
                            Cell::new("no golden file").fg(Color::Yellow)
                        }
                        Verdict::Mismatch { what, diff } => {
                            failures.push((label.clone(), what.clone(), diff.clone()));
                            Cell::new(format!("MISMATCH: {what}")).fg(Color::Red)
                        }
                    };
                    (report.events.to_string(), result)
                }
                Err(e) => {
                    failures.push((label.clone(), "unreadable stream".into(), e.clone()));
                    (
                        "-".to_string(),
                        Cell::new(format!("ERROR: {e}")).fg(Color::Red),
                    )
                }
            };
        table.add_row(vec![Cell::new(&label), Cell::new(events), result]);
    }
    println!("{table}");
    println!(
        "{} streams ({recorded} recorded, {} synthetic): {passed} passed, {} failed, {without_golden} without a golden file (goldens: {})",
        streams.len(),
        streams.len() - recorded,
        failures.len(),
        display(&golden_root)
    );
    if let Some((label, what, diff)) = failures.first() {
        println!("\nfirst difference: {label}: {what}\n{diff}");
    }
    Ok(crate::exit::Exit::passed(failures.is_empty()).into())
}

fn display(path: &Path) -> String {
    path.display().to_string()
}
