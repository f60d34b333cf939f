//! `xcsh replay`: re-run today's machine over recorded sessions. One session: a
//! one-line summary, or a first-divergence report (exit 1), or the machine's state at
//! an entry (`--until`). A directory: every session in it, as a table (exit 1 if any
//! diverged or failed). `--minimize`: cut a diverging session down (a session that
//! does not diverge has nothing to minimize: said on stderr, exit 0).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::json;
use xcsh_log::read_session;
use xcsh_machine::EntryId;
use xcsh_replay::{Outcome, Overrides, ReplayError, ReplayOptions, render};

use crate::exit::{Exit, usage};
use crate::sessions;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A session (path, id or id prefix), or a directory: every `*.jsonl` under it
    /// (default: this workspace's newest session, the one `--continue` continues).
    target: Option<String>,
    /// Replay the branch that ends at this entry (default: the session's leaf):
    /// `N`, `#N` or a label's name (the entry its newest label of that name is on).
    #[arg(long, value_name = "ENTRY")]
    leaf: Option<String>,
    /// Stop after this entry and print the machine's state there: `N`, `#N` or a
    /// label's name (the entry its newest label of that name is on).
    #[arg(long, value_name = "ENTRY", conflicts_with = "minimize")]
    until: Option<String>,
    /// Print one JSON object (per session for a directory) instead of text.
    #[arg(long)]
    json: bool,
    /// Replace a recorded setting in every prompt of the branch: max_steps,
    /// max_tokens, max_output_tokens, compact_at_tokens or permissions (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Run the whole agent again on the session's prompts, the provider served from
    /// `--cassette` and the tools from the log; report whether it matches.
    #[arg(
        long,
        requires = "cassette",
        conflicts_with_all = ["minimize", "until", "leaf", "set", "json"]
    )]
    redrive: bool,
    /// The cassette `--redrive` plays the provider from.
    #[arg(long, value_name = "FILE", requires = "redrive")]
    cassette: Option<PathBuf>,
    /// Cut a diverging session down to a small one that diverges the same way.
    #[arg(long, requires = "output")]
    minimize: bool,
    /// Where `--minimize` writes the small session (a new file).
    #[arg(short = 'o', long, value_name = "OUT", requires = "minimize")]
    output: Option<PathBuf>,
    /// Replay the sub-agents' sessions too, each on its own leaf (a table).
    #[arg(long, conflicts_with_all = ["minimize", "until", "leaf", "redrive"])]
    deep: bool,
}

pub fn main(args: ReplayArgs) -> Result<ExitCode> {
    let overrides = Overrides::parse(&args.set)?;
    let named = match &args.target {
        Some(target) => target.clone(),
        None => sessions::newest_here()?.display().to_string(),
    };
    let target = Path::new(&named);
    if target.is_dir() {
        if args.leaf.is_some() || args.until.is_some() || args.minimize || args.redrive {
            usage!(
                "{}: --leaf, --until, --minimize and --redrive take one session, not a directory",
                target.display()
            );
        }
        if args.deep {
            usage!(
                "{}: --deep takes one session, not a directory (a directory's sessions, sub-agents' included, are all replayed without it)",
                target.display()
            );
        }
        return replay_dir(target, &overrides, args.json);
    }
    let looks_like_a_path = named.contains(std::path::MAIN_SEPARATOR) || named.ends_with(".jsonl");
    if looks_like_a_path && !target.exists() {
        bail!("{}: no such session file or directory", target.display());
    }
    let path = sessions::resolve(&named)?;
    let session = path.display().to_string();
    // A label's name is looked up in the session; a number is taken as it is.
    let entry = |text: &String| xcsh_inspect::resolve_entry_at(&path, text);
    let leaf = args.leaf.as_ref().map(entry).transpose()?;
    let until = args.until.as_ref().map(entry).transpose()?;
    if xcsh_log::read_header(&path).is_ok_and(|h| h.imported.is_some()) {
        return replay_imported(&path, &session, args.json);
    }
    if args.deep {
        return replay_deep(&path, &overrides, args.json);
    }
    if !args.redrive && args.output.is_none() {
        // One streaming pass over the file (see `xcsh_replay::replay_file`); `None`
        // when that does not apply, and the log is read whole below.
        let options = ReplayOptions { until, overrides };
        let started = Instant::now();
        if let Some(streamed) = xcsh_replay::replay_file(&path, leaf, &options) {
            let streamed = streamed.with_context(|| format!("cannot read {}", path.display()))?;
            let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            return print_replay(
                &session,
                streamed.leaf,
                &streamed.replay,
                elapsed,
                &overrides,
                args.json,
            );
        }
    }
    let log = read_session(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let leaf = leaf.unwrap_or(log.leaf());
    if log.get(leaf).is_none() {
        return Err(log.no_entry(leaf).into());
    }
    if let (true, Some(cassette)) = (args.redrive, &args.cassette) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let r = runtime.block_on(crate::redrive::redrive(&path, cassette))?;
        return Ok(match &r.difference {
            None => {
                println!(
                    "{session}: redriven ({} run(s)) to {}: decisions and conversation match",
                    r.runs,
                    r.new_session.display()
                );
                Exit::Ok.into()
            }
            Some(d) => {
                println!(
                    "{session}: redriven ({} run(s)) to {}: DIFFERS: {d}",
                    r.runs,
                    r.new_session.display()
                );
                Exit::Failed.into()
            }
        });
    }
    if let Some(out) = &args.output {
        return minimize(&log, leaf, &overrides, out, &session, args.json);
    }
    let options = ReplayOptions { until, overrides };
    let started = Instant::now();
    let replay = xcsh_replay::replay(&log, leaf, &options)?;
    let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    print_replay(&session, leaf, &replay, elapsed, &overrides, args.json)
}

/// Prints a replay of one session (text, or one JSON object) and gives its exit code.
fn print_replay(
    session: &str,
    leaf: EntryId,
    replay: &xcsh_replay::Replay,
    elapsed: u64,
    overrides: &Overrides,
    as_json: bool,
) -> Result<ExitCode> {
    let (code, text, value) = match &replay.outcome {
        Outcome::Clean => (
            Exit::Ok,
            render::clean(session, &replay.report, Some(elapsed), overrides),
            json!({"result": "ok"}),
        ),
        Outcome::Diverged(d) => (
            Exit::Failed,
            render::divergence(session, &replay.report, d, Some(elapsed), overrides),
            json!({"result": "diverged", "divergence": d}),
        ),
        Outcome::Stopped(s) => (
            Exit::Ok,
            render::state(session, &replay.report, s, Some(elapsed), overrides),
            json!({"result": "stopped", "state": s}),
        ),
        // Every recorded decision was re-made: a crash cut the run off, nothing
        // diverged (SPEC §24.2).
        Outcome::CutOff(c) => (
            Exit::Ok,
            render::cut_off(session, &replay.report, c, Some(elapsed), overrides),
            json!({"result": "cut_off", "cut_off": c}),
        ),
    };
    let mut text = text;
    let mut value = value;
    if let Some(torn) = &replay.torn {
        text.push_str(&render::torn(session, torn));
        value["torn"] = json!(torn);
    }
    if as_json {
        value["session"] = json!(session);
        value["leaf"] = json!(leaf);
        value["replayed"] = json!(replay.report);
        value["elapsed_ms"] = json!(elapsed);
        value["set"] = json!(overrides);
        println!("{value}");
    } else {
        // A report quotes what the model said: shown, not obeyed (SPEC §16.6).
        print!("{}", xcsh_inspect::terminal::neutralize(&text));
    }
    Ok(code.into())
}

/// `--deep`: the family's table (one JSON object per member with `--json`), the
/// links that do not match back on stderr; exit 1 unless every member replays clean.
fn replay_deep(path: &Path, overrides: &Overrides, as_json: bool) -> Result<ExitCode> {
    let (runs, warnings) = xcsh_replay::replay_family(path, overrides)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let code = print_runs(&runs, as_json)?;
    for w in warnings {
        eprintln!("xcsh: {}", xcsh_inspect::terminal::neutralize(&w));
    }
    Ok(code)
}

/// The table of `runs` (one JSON object per run with `--json`); exit 1 unless every
/// one replayed clean.
fn print_runs(runs: &[xcsh_replay::SessionRun], as_json: bool) -> Result<ExitCode> {
    if as_json {
        for r in runs {
            println!("{}", serde_json::to_string(r)?);
        }
    } else {
        print!(
            "{}",
            xcsh_inspect::terminal::neutralize(&render::table(runs))
        );
    }
    Ok(Exit::passed(runs.iter().all(|r| r.is_ok())).into())
}

fn replay_dir(dir: &Path, overrides: &Overrides, as_json: bool) -> Result<ExitCode> {
    let paths = xcsh_replay::find_sessions(dir)?;
    if paths.is_empty() {
        bail!("{}: no session files (*.jsonl) under it", dir.display());
    }
    // A small pool: replay is CPU-bound and sessions are independent.
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let runs = xcsh_replay::replay_all(&paths, dir, overrides, threads);
    print_runs(&runs, as_json)
}

fn minimize(
    log: &xcsh_log::SessionLog,
    leaf: EntryId,
    overrides: &Overrides,
    out: &Path,
    session: &str,
    as_json: bool,
) -> Result<ExitCode> {
    let minimized = match xcsh_replay::minimize(log, leaf, overrides, out) {
        Err(ReplayError::NoDivergence { path }) => {
            eprintln!(
                "xcsh: {}: replays without divergence, so there is nothing to minimize (minimizing needs a divergence; try --set to replay under other settings); nothing was written",
                path.display()
            );
            return Ok(Exit::Ok.into());
        }
        other => other?,
    };
    if as_json {
        let value = json!({
            "session": session,
            "output": out.display().to_string(),
            "before": minimized.before,
            "after": minimized.after,
            "signature": minimized.signature,
            "candidates": minimized.tests,
            "set": overrides,
            "divergence": minimized.divergence,
        });
        println!("{value}");
    } else {
        let report = render::minimized(session, &out.display().to_string(), &minimized, overrides);
        print!("{}", xcsh_inspect::terminal::neutralize(&report));
    }
    Ok(Exit::Ok.into())
}

/// `xcsh replay` on an imported session (SPEC.md §33): what can be checked, and
/// plainly what cannot. Exit 0 when the contexts rebuild as recorded.
fn replay_imported(path: &Path, session: &str, json: bool) -> Result<ExitCode> {
    let log = read_session(path).with_context(|| format!("cannot read {}", path.display()))?;
    let Some(c) = xcsh_replay::check_imported(&log)? else {
        bail!("{session}: not an imported session");
    };
    let ok = c.mismatches.is_empty();
    if json {
        let mismatches: Vec<serde_json::Value> = c
            .mismatches
            .iter()
            .map(|m| {
                json!({
                    "step_started": m.step_started,
                    "recorded_messages": m.recorded_messages,
                    "rebuilt_messages": m.rebuilt_messages,
                })
            })
            .collect();
        println!(
            "{}",
            json!({
                "session": session,
                "imported_from": c.imported.format.name(),
                "source": c.imported.source,
                "entries": c.entries,
                "steps": c.steps,
                "leaves": c.leaves,
                "context_mismatches": mismatches,
                "decisions_checked": false,
            })
        );
    } else {
        println!(
            "{session}: imported from {} ({}); xcsh did not make its decisions, so replay cannot re-make them.",
            c.imported.format, c.imported.source
        );
        println!("checked: the hash chain of {} entries", c.entries);
        println!(
            "checked: the request context of each of {} step(s) rebuilds from the entries before it ({})",
            c.steps,
            if ok {
                "all as recorded".to_string()
            } else {
                format!("{} differ", c.mismatches.len())
            }
        );
        println!(
            "checked: the model context rebuilds at each of {} leaf entries",
            c.leaves
        );
        println!("not checked: the other agent's decisions (its steps, tool calls, compactions)");
        for m in &c.mismatches {
            println!(
                "  step_started {}: {} message(s) recorded, {} rebuilt",
                m.step_started, m.recorded_messages, m.rebuilt_messages
            );
        }
    }
    Ok(if ok { Exit::Ok } else { Exit::Failed }.into())
}
