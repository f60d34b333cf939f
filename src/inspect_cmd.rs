//! The inspect commands: `tree`, `log`, `events`, `stats`, `diff`, `fork`, `label`,
//! `check` and `export`, over `xcsh-inspect`. Every command takes a session by path,
//! id or id prefix; colors only on a terminal and never with `NO_COLOR`. A text view
//! is neutralized (`Style::neutralize`): what the model or a tool wrote is shown,
//! never obeyed by the terminal; `--json` is JSON, which escapes control characters.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use xcsh_inspect::{Source, Style, check, diff, events, export, fork, log, stats, tree};
use xcsh_log::{SessionLog, read_session};
use xcsh_machine::EntryId;

use crate::exit::{Exit, usage};
use crate::sessions;

fn style() -> Style {
    Style::for_output(std::io::stdout().is_terminal())
}

/// A session named by path, id or id prefix.
fn resolve(name: &str) -> Result<PathBuf> {
    let looks_like_a_path = name.contains(std::path::MAIN_SEPARATOR) || name.ends_with(".jsonl");
    if looks_like_a_path && !Path::new(name).exists() {
        bail!("{name}: no such session file");
    }
    sessions::resolve(name)
}

/// A view's SESSION: the one named, or when none is, this workspace's newest (the
/// one `--continue` continues).
fn resolve_or_newest(name: Option<&str>) -> Result<PathBuf> {
    match name {
        Some(name) => resolve(name),
        None => sessions::newest_here(),
    }
}

fn open(name: &str) -> Result<SessionLog> {
    read(&resolve(name)?)
}

/// Prints to stdout; a closed pipe (`| head`) ends quietly.
fn out(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// A text view to stdout, neutralized for the style it was drawn with.
fn view(text: &str, st: Style) -> Result<()> {
    out(&st.neutralize(text))
}

fn json(value: &impl serde::Serialize) -> Result<()> {
    out(&format!("{}\n", serde_json::to_string_pretty(value)?))
}

#[derive(Debug, Args)]
pub struct TreeArgs {
    /// The session: a path, an id or an id prefix (`xcsh sessions` lists them); by
    /// default this workspace's newest, the one `--continue` continues.
    session: Option<String>,
    /// One line per entry instead of one per turn.
    #[arg(long)]
    full: bool,
    /// Draw each sub-agent's tree under the `task` call that started it.
    #[arg(long)]
    deep: bool,
    /// The tree as JSON.
    #[arg(long)]
    json: bool,
}

pub fn tree_main(args: TreeArgs) -> Result<ExitCode> {
    let path = resolve_or_newest(args.session.as_deref())?;
    let t = tree::build_family_path(&path, args.full, args.deep)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if args.json {
        json(&t)?;
    } else {
        write_tree(&t)?;
    }
    // The process ends here: freeing a tree of tens of thousands of nodes one by one
    // would only delay the exit (the process's memory goes back at once).
    std::mem::forget(t);
    Ok(ExitCode::SUCCESS)
}

/// The tree to stdout as it is drawn (a closed pipe ends it quietly, as `out`).
fn write_tree(t: &tree::Tree) -> Result<()> {
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut failed = None;
    let st = style();
    tree::render_with(t, st, &mut |line| {
        if failed.is_none()
            && let Err(e) = stdout.write_all(st.neutralize(line).as_bytes())
        {
            failed = Some(e);
        }
    });
    match failed.map_or_else(|| stdout.flush(), Err) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// The session: a path, an id or an id prefix (`xcsh sessions` lists them); by
    /// default this workspace's newest, the one `--continue` continues.
    session: Option<String>,
    /// Show the branch that ends at this entry (default: the session's leaf): `N`,
    /// `#N` or a label's name (the entry its newest label of that name is on).
    #[arg(long, value_name = "ENTRY")]
    leaf: Option<String>,
    /// One JSON object per conversation item.
    #[arg(long)]
    json: bool,
    /// Show each step's reasoning in full (by default it is folded to one line,
    /// its first 100 characters; `--json` always holds it whole).
    #[arg(long)]
    reasoning: bool,
}

pub fn log_main(args: LogArgs) -> Result<ExitCode> {
    // Streamed: the shape of the log first, then the entries of the branch, each
    // item written as it comes (SPEC.md §25.2).
    let path = resolve_or_newest(args.session.as_deref())?;
    let cannot_read = || format!("cannot read {}", path.display());
    let source = xcsh_inspect::Streamed::new(&path);
    let shapes = source.shapes().with_context(cannot_read)?;
    let leaf = match &args.leaf {
        Some(text) => {
            xcsh_inspect::resolve_entry_in(&source, &shapes, text).map_err(reading(&path))?
        }
        None => shapes.leaf(),
    };
    let branch = shapes.path_to(leaf)?;
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let st = style();
    let reasoning = if args.reasoning {
        log::Reasoning::Full
    } else {
        log::Reasoning::Folded
    };
    let mut failed: Option<anyhow::Error> = None;
    let mut text = String::new();
    log::branch_items(&source, &shapes, &branch, &mut |it| {
        text.clear();
        if args.json {
            match serde_json::to_string(&it) {
                Ok(j) => text.push_str(&j),
                Err(e) => {
                    failed = Some(e.into());
                    return false;
                }
            }
            text.push('\n');
        } else {
            log::render_item(&it, st, reasoning, &mut text);
        }
        let bytes = if args.json {
            std::borrow::Cow::Borrowed(text.as_str())
        } else {
            st.neutralize(&text)
        };
        match stdout.write_all(bytes.as_bytes()) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e.into());
                false
            }
        }
    })
    .with_context(cannot_read)?;
    let flushed = match failed {
        Some(e) => Err(e),
        None => stdout.flush().map_err(Into::into),
    };
    match flushed {
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(ExitCode::SUCCESS)
        }
        other => other.map(|()| ExitCode::SUCCESS),
    }
}

#[derive(Debug, Args)]
pub struct EventsArgs {
    /// The session: a path, an id or an id prefix (`xcsh sessions` lists them); by
    /// default this workspace's newest, the one `--continue` continues.
    session: Option<String>,
    /// Only these entry types or stream event kinds (repeatable, or comma-separated).
    #[arg(
        long = "type",
        value_name = "TYPE",
        value_delimiter = ',',
        value_parser = clap::builder::PossibleValuesParser::new(events::kinds()),
        hide_possible_values = true
    )]
    types: Vec<String>,
    /// Only rows of this step.
    #[arg(long)]
    step: Option<u32>,
    /// Only rows about this tool.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// Only rows at or after this many ms since the session started.
    #[arg(long, value_name = "MS")]
    since: Option<i64>,
    /// Only rows at or before this many ms since the session started.
    #[arg(long, value_name = "MS")]
    until: Option<i64>,
    /// Keep reading the file as it grows (Ctrl-C stops).
    #[arg(long, short = 'f')]
    follow: bool,
    /// Interleave the sub-agents' timelines, each in a lane of its own.
    #[arg(long, conflicts_with = "follow")]
    deep: bool,
    /// One JSON object per row.
    #[arg(long)]
    json: bool,
}

pub fn events_main(args: EventsArgs) -> Result<ExitCode> {
    let path = resolve_or_newest(args.session.as_deref())?;
    let filter = events::Filter {
        types: args.types.clone(),
        step: args.step,
        tool: args.tool.clone(),
        since: args.since,
        until: args.until,
    };
    let st = style();
    let mut stdout = std::io::stdout().lock();
    let closed = std::cell::Cell::new(false);
    let print = |row: &events::Row, stdout: &mut std::io::StdoutLock<'_>| {
        if closed.get() || !filter.keeps(row) {
            return;
        }
        let line = if args.json {
            serde_json::to_string(row).unwrap_or_default()
        } else {
            let text = events::render_row(row, st);
            match st.neutralize(&text) {
                std::borrow::Cow::Borrowed(_) => text,
                std::borrow::Cow::Owned(safe) => safe,
            }
        };
        if writeln!(stdout, "{line}").is_err() {
            closed.set(true);
        }
    };
    if args.deep {
        return events_deep(&path, &filter, args.json, st);
    }
    if !args.json {
        let _ = writeln!(stdout, "{}", events::header(st));
    }
    if !args.follow {
        let torn = events::stream_file(&path, &filter, |row| print(row, &mut stdout))
            .with_context(|| format!("cannot read {}", path.display()))?;
        if let Some(n) = torn {
            eprintln!(
                "xcsh: {}: the last line is torn ({n} byte(s) without a newline); not shown",
                path.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut follower = events::Follower::open(&path)?;
    let mut timeline = events::Timeline::new();
    loop {
        follower.poll(|line, entry| {
            for row in timeline.push(line, &entry) {
                print(&row, &mut stdout);
            }
        })?;
        // Live: show entries as they come, not held back for the streaming step.
        for row in timeline.flush() {
            print(&row, &mut stdout);
        }
        if stdout.flush().is_err() || closed.get() {
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// `events --deep`: the family's rows, then its problems on stderr.
fn events_deep(path: &Path, filter: &events::Filter, as_json: bool, st: Style) -> Result<ExitCode> {
    let (rows, problems) = events::deep_timeline(path, filter)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut text = String::new();
    if !as_json {
        text.push_str(&events::deep_header(st));
        text.push('\n');
    }
    for row in &rows {
        if as_json {
            text.push_str(&serde_json::to_string(row)?);
        } else {
            text.push_str(&st.neutralize(&events::render_deep_row(row, st)));
        }
        text.push('\n');
    }
    out(&text)?;
    for p in problems {
        eprintln!("xcsh: {}", st.neutralize(&p));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The session: a path, an id or an id prefix (`xcsh sessions` lists them); by
    /// default this workspace's newest, the one `--continue` continues.
    session: Option<String>,
    /// The stats as JSON (every step and run).
    #[arg(long)]
    json: bool,
    /// Every step and every run (default: the last 20 of each, with the totals and
    /// the tools table over all of them).
    #[arg(long)]
    all: bool,
}

pub fn stats_main(args: StatsArgs) -> Result<ExitCode> {
    let path = resolve_or_newest(args.session.as_deref())?;
    let s = stats::compute_family_path(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if args.json {
        json(&s)?;
    } else {
        let last = (!args.all).then_some(stats::DEFAULT_ROWS);
        view(&stats::render_family(&s, last), Style::plain())?;
    }
    // As in `tree_main`: the process ends here, nothing needs freeing one by one.
    std::mem::forget(s);
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// A session, or `SESSION@ENTRY` for the branch ending at ENTRY. ENTRY is `N`,
    /// `#N` or a label's name (the entry its newest label of that name is on).
    a: String,
    /// The other session or `SESSION@ENTRY` (not with --workspace).
    b: Option<String>,
    /// Compare the model context each branch would send next.
    #[arg(long)]
    context: bool,
    /// Show the file changes the session A made (its tool results' changes).
    #[arg(long, conflicts_with = "context")]
    workspace: bool,
    /// The comparison as JSON.
    #[arg(long)]
    json: bool,
}

/// `SESSION@ENTRY` or `SESSION`: the file, and the entry's text if one is named
/// (resolved in the log, [`leaf_at`]).
fn side_spec(spec: &str) -> Result<(PathBuf, Option<&str>)> {
    let (name, entry) = xcsh_inspect::split_entry_spec(spec, |name| resolve(name).is_ok())?;
    Ok((resolve(name)?, entry))
}

fn read(path: &Path) -> Result<SessionLog> {
    read_session(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The entry `at` names in `log` (`N`, `#N` or a label's name; it must be there),
/// or the log's leaf.
fn leaf_at(log: &SessionLog, at: Option<&str>) -> Result<EntryId> {
    let Some(text) = at else {
        return Ok(log.leaf());
    };
    let at = xcsh_inspect::resolve_entry(log, text)?;
    match log.get(at) {
        Some(_) => Ok(at),
        None => Err(log.no_entry(at).into()),
    }
}

/// `cannot read PATH` before an error reading the session at `path`; an entry or a
/// label the command line named that the session does not hold is said as it is
/// (it names the session).
fn reading(path: &Path) -> impl FnOnce(xcsh_inspect::InspectError) -> anyhow::Error + '_ {
    move |e| match e {
        xcsh_inspect::InspectError::NoSuchLabel { .. } | xcsh_inspect::InspectError::Usage(_) => {
            e.into()
        }
        e => anyhow::Error::from(e).context(format!("cannot read {}", path.display())),
    }
}

/// `SESSION@ENTRY` or `SESSION`: the log and the leaf.
fn side(spec: &str) -> Result<(SessionLog, EntryId)> {
    let (path, at) = side_spec(spec)?;
    let log = read(&path)?;
    let leaf = leaf_at(&log, at)?;
    Ok((log, leaf))
}

/// The two files are one (two branches of one session): it is read once.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

pub fn diff_main(args: DiffArgs) -> Result<ExitCode> {
    let st = style();
    if args.workspace {
        if args.b.is_some() {
            usage!("--workspace takes one session");
        }
        let log = open(&args.a)?;
        let files = diff::workspace::changes(&log);
        if args.json {
            json(&files)?;
        } else {
            view(&diff::workspace::render(&files, st), st)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(b) = &args.b else {
        usage!("diff needs two sessions or branches (A B), or --workspace SESSION");
    };
    let (pa, at_a) = side_spec(&args.a)?;
    let (pb, at_b) = side_spec(b)?;
    let la = read(&pa)?;
    let ea = leaf_at(&la, at_a)?;
    let lb_own;
    let lb = if same_file(&pa, &pb) {
        &la
    } else {
        lb_own = read(&pb)?;
        &lb_own
    };
    let eb = leaf_at(lb, at_b)?;
    let sa = diff::Side {
        name: args.a.clone(),
        log: &la,
        leaf: ea,
    };
    let sb = diff::Side {
        name: b.clone(),
        log: lb,
        leaf: eb,
    };
    let differ = if args.context {
        let r = diff::context::compare(&sa, &sb)?;
        if args.json {
            json(&r)?;
        } else {
            view(&diff::context::render(&r, st), st)?;
        }
        r.first_difference.is_some()
    } else {
        let r = diff::compare(&sa, &sb)?;
        if args.json {
            json(&r)?;
        } else {
            view(&diff::render(&r, st), st)?;
        }
        !r.changes.is_empty()
    };
    Ok(Exit::passed(!differ).into())
}

#[derive(Debug, Args)]
pub struct ForkArgs {
    /// The session: a path, an id or an id prefix (`xcsh sessions` lists them).
    session: String,
    /// The entry the fork ends at (a settled boundary): `N`, `#N` or a label's name
    /// (the entry its newest label of that name is on).
    entry: String,
    /// Where to write the fork (default: a new session of this workspace).
    #[arg(short = 'o', long, value_name = "PATH")]
    output: Option<PathBuf>,
}

pub fn fork_main(args: ForkArgs) -> Result<ExitCode> {
    let source = resolve(&args.session)?;
    let log = read_session(&source).with_context(|| format!("cannot read {}", source.display()))?;
    let at = xcsh_inspect::resolve_entry(&log, &args.entry)?;
    let origin = xcsh_log::session_id(&source, &log.header().session_id).to_string();
    let target = match args.output {
        Some(p) => p,
        // The fork belongs where its source is at that entry (the header and the
        // path are the source's).
        None => {
            // (A bad entry is for `fork` to report.)
            let workspace = sessions::recorded_workspace(&source, Some(at))
                .unwrap_or_else(|_| log.header().cwd.clone());
            sessions::new_session(Path::new(&workspace))?.1
        }
    };
    let f = fork::fork(&source, at, &origin, &target, chrono::Utc::now())?;
    out(&format!(
        "forked {} at entry {at} into {}: {} entries copied (ids and hashes kept); origin recorded as label #{} \"{}\"\ncontinue it with: xcsh run --resume {}\n",
        source.display(),
        f.path.display(),
        f.copied,
        f.label,
        f.label_name,
        f.path.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct LabelArgs {
    /// The session: a path, an id or an id prefix (`xcsh sessions` lists them).
    session: String,
    /// The entry to name: `N`, `#N` or a label's name (the entry its newest label of
    /// that name is on).
    entry: String,
    /// The label.
    name: String,
}

pub fn label_main(args: LabelArgs) -> Result<ExitCode> {
    let path = resolve(&args.session)?;
    let at = xcsh_inspect::resolve_entry_at(&path, &args.entry)?;
    let (id, torn) = fork::label(&path, at, &args.name, chrono::Utc::now())?;
    if let Some(t) = torn {
        eprintln!(
            "xcsh: {}: repaired a torn last line: {} byte(s) at offset {} were cut off{}",
            path.display(),
            t.len,
            t.offset,
            t.sidecar
                .map(|p| format!(" and kept in {}", p.display()))
                .unwrap_or_default()
        );
    }
    out(&format!(
        "labelled entry {at} of {} as \"{}\" (entry {id}); the leaf did not move\n",
        path.display(),
        args.name
    ))?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The session: a path, an id or an id prefix (`xcsh sessions` lists them); by
    /// default this workspace's newest, the one `--continue` continues.
    session: Option<String>,
    /// The findings as JSON.
    #[arg(long)]
    json: bool,
}

pub fn check_main(args: CheckArgs) -> Result<ExitCode> {
    let path = resolve_or_newest(args.session.as_deref())?;
    let report = check::check_file(&path)?;
    if args.json {
        json(&report)?;
    } else {
        let st = style();
        view(&check::render(&report, st), st)?;
    }
    Ok(Exit::passed(report.errors() == 0).into())
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Md,
    Html,
    Json,
    /// The spans (OpenTelemetry GenAI) as OTLP/JSON (SPEC.md "Traces").
    Otlp,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The session: a path, an id or an id prefix (`xcsh sessions` lists them); by
    /// default this workspace's newest, the one `--continue` continues.
    session: Option<String>,
    /// md: a Markdown transcript; html: one self-contained page; json: the whole DAG;
    /// otlp: the spans as OTLP/JSON.
    #[arg(long, value_enum)]
    format: Format,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// For md: the branch that ends at this entry (default: the session's leaf): `N`,
    /// `#N` or a label's name (the entry its newest label of that name is on).
    #[arg(long, value_name = "ENTRY")]
    leaf: Option<String>,
    /// For otlp: include message content (prompts, completions, tool arguments and
    /// results).
    #[arg(long)]
    otel_content: bool,
}

pub fn export_main(args: ExportArgs) -> Result<ExitCode> {
    let path = resolve_or_newest(args.session.as_deref())?;
    let text = match args.format {
        Format::Md => {
            export::markdown_family(&path, args.leaf.as_deref()).map_err(reading(&path))?
        }
        Format::Html => {
            let log = read(&path)?;
            return export_streamed(&args, &path, &mut |out, name| {
                export::write_html(&log, out, name)
            });
        }
        Format::Json => {
            return export_streamed(&args, &path, &mut |out, name| {
                export::write_json(&path, out, name)
            });
        }
        Format::Otlp => crate::otel_cmd::otlp_json(&path, args.otel_content)?,
    };
    match &args.output {
        Some(path) => {
            use std::io::Write as _;
            let mut file = create_export(path)?;
            file.write_all(text.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("xcsh: wrote {}", path.display());
        }
        // Export is data: the bytes as they came, except on a terminal.
        None if std::io::stdout().is_terminal()
            && !matches!(args.format, Format::Json | Format::Otlp) =>
        {
            view(&text, Style::plain())?
        }
        None => out(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `-o FILE` of `export`: a new file (an existing one is never overwritten).
fn create_export(path: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| {
            format!(
                "cannot create {} (an existing file is never overwritten)",
                path.display()
            )
        })
}

/// An export written to the file or stdout as it is rendered (`html`, `json`).
fn export_streamed(
    args: &ExportArgs,
    session: &Path,
    write: &mut dyn FnMut(&mut dyn std::io::Write, &Path) -> Result<(), xcsh_inspect::InspectError>,
) -> Result<ExitCode> {
    use std::io::Write as _;
    let cannot = || format!("cannot export {}", session.display());
    match &args.output {
        Some(path) => {
            let mut file = std::io::BufWriter::new(create_export(path)?);
            let written = write(&mut file, path).with_context(cannot).and_then(|()| {
                file.flush()
                    .with_context(|| format!("cannot write {}", path.display()))
            });
            if written.is_err() {
                // No half-written export is left behind.
                drop(file);
                let _ = std::fs::remove_file(path);
            }
            written?;
            eprintln!("xcsh: wrote {}", path.display());
        }
        None => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            let written = write(&mut stdout, Path::new("stdout"))
                .map_err(anyhow::Error::from)
                .and_then(|()| Ok(stdout.flush()?));
            match written {
                // A closed pipe (`| head`) ends quietly.
                Err(e) if broken_pipe(&e) => {}
                other => other.with_context(cannot)?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// `xcsh plan SESSION[@ENTRY]` (SPEC.md §27.4).
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// A session (path, id or id prefix): the plan at its leaf; `SESSION@ENTRY`: the
    /// plan at that entry (on its branch). ENTRY is `N`, `#N` or a label's name (the
    /// entry its newest label of that name is on).
    session: String,
    /// The plan as JSON: `{"at": N, "plan": null | {"entry", "dispatched",
    /// "call_id", "plan": {"explanation"?, "items": [{"text", "status"}]}}}`.
    #[arg(long)]
    json: bool,
}

pub fn plan_main(args: PlanArgs) -> Result<ExitCode> {
    let (log, at) = side(&args.session)?;
    let plan = xcsh_inspect::plan::view(&log, at)?;
    if args.json {
        json(&plan)?;
    } else {
        let st = style();
        view(&plan.text(), st)?;
    }
    Ok(ExitCode::SUCCESS)
}
