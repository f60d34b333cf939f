//! Text reports: the one-line summary of a clean replay, the first-divergence report,
//! a run cut off and a torn last line, the machine's state at an entry, the table of
//! a directory replay, and the result of a minimization.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use xcsh_log::describe::serde_name;

use crate::summary::{EntryRef, quote};
use crate::{
    CutOff, Divergence, Minimized, Overrides, ReplayReport, Replayed, SessionResult, SessionRun,
    Torn, changed_fields,
};

fn counts(r: &ReplayReport) -> String {
    format!(
        "{} entries replayed ({} inputs, {} decisions)",
        r.entries, r.inputs, r.decisions
    )
}

fn timing(elapsed_ms: Option<u64>) -> String {
    elapsed_ms
        .map(|ms| format!(" in {ms} ms"))
        .unwrap_or_default()
}

fn settings(overrides: &Overrides) -> String {
    if overrides.is_empty() {
        String::new()
    } else {
        format!(" (with --set {})", overrides.describe().join(" --set "))
    }
}

fn entry_ref(e: &EntryRef) -> String {
    let line = e.line.map(|l| format!("line {l}, ")).unwrap_or_default();
    format!("entry {} ({line}{})", e.id, e.type_name)
}

/// A clean replay, on one line.
pub fn clean(
    session: &str,
    report: &ReplayReport,
    elapsed_ms: Option<u64>,
    overrides: &Overrides,
) -> String {
    format!(
        "{session}: {}{}, no divergence{}\n",
        counts(report),
        timing(elapsed_ms),
        settings(overrides)
    )
}

/// A replay whose branch ends inside a run (no `run_finished`): not a divergence.
pub fn cut_off(
    session: &str,
    report: &ReplayReport,
    c: &CutOff,
    elapsed_ms: Option<u64>,
    overrides: &Overrides,
) -> String {
    let mut out = format!(
        "{session}: the run was cut off (no run_finished): {}{}, no divergence{}\n",
        counts(report),
        timing(elapsed_ms),
        settings(overrides)
    );
    out.push_str(&format!(
        "  the branch ends at {}: {}\n",
        entry_ref(&c.last),
        c.last.summary
    ));
    if c.owed.is_empty() {
        out.push_str(&format!(
            "  phase:  {} (the process ended during the run, or it is still running)\n",
            c.phase
        ));
        out.push_str("  continuing the session (--continue, --resume) recovers the run\n");
    } else {
        out.push_str(
            "  not written: the decisions the machine makes after it (the process ended first):\n",
        );
        for d in &c.owed {
            out.push_str(&format!(
                "    {} {}\n",
                d.type_name(),
                crate::decision_summary(d)
            ));
        }
        out.push_str(
            "  continuing the session (--continue, --resume) records them and recovers the run\n",
        );
    }
    out
}

/// The file's torn last line, after a report: `PATH:LINE: …`.
pub fn torn(session: &str, t: &Torn) -> String {
    format!(
        "{session}:{}: the last line is torn ({} bytes without a newline, a write a crash cut short): not replayed\n",
        t.line, t.bytes
    )
}

/// The first-divergence report.
pub fn divergence(
    session: &str,
    report: &ReplayReport,
    d: &Divergence,
    elapsed_ms: Option<u64>,
    overrides: &Overrides,
) -> String {
    let mut out = String::new();
    let at = match (d.entry, d.line, &d.entry_type) {
        (Some(id), line, ty) => format!(
            "entry {id} ({}{})",
            line.map(|l| format!("line {l}, ")).unwrap_or_default(),
            ty.as_deref().unwrap_or("?")
        ),
        (None, _, _) => "the end of the branch".to_string(),
    };
    out.push_str(&format!("{session}: diverged at {at}\n"));
    out.push_str(&format!("  {}\n", d.kind.describe()));
    match &d.input {
        Some(input) => out.push_str(&format!(
            "  input:  {}: {}\n",
            entry_ref(input),
            input.summary
        )),
        None => out.push_str("  input:  none before it\n"),
    }
    out.push_str(&format!("  phase:  {}\n", d.phase));
    out.push_str(&format!(
        "  {} (decision {} after the input):\n",
        what_differs(d),
        d.decision_index + 1
    ));
    for line in d.diff.lines() {
        out.push_str(&format!("    {line}\n"));
    }
    out.push_str(&format!(
        "  path to it (the last {} entries of the branch):\n",
        d.path.len()
    ));
    let width = d.path.iter().map(|e| e.type_name.len()).max().unwrap_or(0);
    for e in &d.path {
        let mark = if Some(e.id) == d.entry { ">" } else { " " };
        out.push_str(&format!(
            "  {mark} {:>5}  {:width$}  {}\n",
            e.id.to_string(),
            e.type_name,
            e.summary
        ));
    }
    out.push_str(&format!(
        "  {}{} before diverging{}\n",
        counts(report),
        timing(elapsed_ms),
        settings(overrides)
    ));
    out
}

/// The machine's state after an entry (`--until`).
pub fn state(
    session: &str,
    report: &ReplayReport,
    s: &Replayed,
    elapsed_ms: Option<u64>,
    overrides: &Overrides,
) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{session}: state after {}: {}\n",
        entry_ref(&s.entry),
        s.entry.summary
    ));
    out.push_str(&format!("  phase:    {}\n", s.phase));
    let r = &s.run;
    out.push_str(&format!(
        "  run:      {} step(s), {} in this window; spent {} tokens ({} in / {} out); last input {} tokens; {} compaction(s)\n",
        r.steps,
        r.steps_in_window,
        r.spent,
        r.usage.input_tokens,
        r.usage.output_tokens,
        r.last_input_tokens,
        r.compactions
    ));
    match &r.config {
        // In `--set`'s words (`max_steps=4`), which take them as they are.
        Some(c) => out.push_str(&format!(
            "  limits:   {}; tools {}\n",
            Overrides::recorded(c).describe().join(", "),
            c.tools.join(", ")
        )),
        None => out.push_str("  limits:   none yet (no prompt so far)\n"),
    }
    let queue = |items: &[String]| {
        if items.is_empty() {
            "none".to_string()
        } else {
            items
                .iter()
                .map(|t| quote(t))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    out.push_str(&format!(
        "  pending:  steers {}; follow-ups {}\n",
        queue(&s.pending.steers),
        queue(&s.pending.follow_ups)
    ));
    let c = &s.context;
    out.push_str(&format!(
        "  context:  {} message(s), hash {}{}\n",
        c.messages,
        c.hash.get(..8).unwrap_or(&c.hash),
        if c.last.is_empty() {
            String::new()
        } else {
            format!("; the last {}:", c.last.len())
        }
    ));
    for m in &c.last {
        let source = m
            .source
            .map(|e| format!("entry {e}"))
            .unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "    #{:<3} {:<18} {:<10} {}\n",
            m.index, m.role, source, m.summary
        ));
    }
    if s.owed.is_empty() {
        out.push_str("  owed:     nothing (every decision made so far is in the log up to here)\n");
    } else {
        let names: Vec<&str> = s.owed.iter().map(|d| d.type_name()).collect();
        out.push_str(&format!(
            "  owed:     {} (made, and recorded after this entry)\n",
            names.join(", ")
        ));
    }
    out.push_str(&format!(
        "  {}{}{}\n",
        counts(report),
        timing(elapsed_ms),
        settings(overrides)
    ));
    out
}

/// The first divergence of a session, in one cell of the directory table.
fn first_divergence(d: &Divergence) -> String {
    let at = match (d.entry, &d.entry_type) {
        (Some(id), Some(ty)) => format!("entry {id} ({ty})"),
        (Some(id), None) => format!("entry {id}"),
        (None, _) => "the end of the branch".into(),
    };
    format!("{at}: {}", what_differs(d))
}

/// `recorded step_started, re-made run_finished`, or for one type the fields that
/// differ: `tool_dispatched differs in call.arguments`.
fn what_differs(d: &Divergence) -> String {
    if let (Some(recorded), Some(remade)) = (&d.recorded, &d.remade) {
        let fields = changed_fields(recorded, remade);
        if !fields.is_empty() {
            return format!("{} differs in {}", recorded.type_name(), fields.join(", "));
        }
    }
    let name = |x: &Option<xcsh_machine::Decision>| {
        x.as_ref()
            .map_or("nothing".to_string(), |d| d.type_name().to_string())
    };
    format!(
        "recorded {}, re-made {}",
        name(&d.recorded),
        name(&d.remade)
    )
}

/// The table of a directory replay, and a line of totals.
pub fn table(runs: &[SessionRun]) -> String {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(["session", "entries", "result", "first divergence"]);
    let (mut ok, mut diverged, mut failed) = (0, 0, 0);
    for r in runs {
        let (result, detail) = match &r.result {
            SessionResult::Ok { .. } => {
                ok += 1;
                ("ok", String::new())
            }
            SessionResult::Diverged { divergence, .. } => {
                diverged += 1;
                ("DIVERGED", first_divergence(divergence))
            }
            SessionResult::CutOff { cut_off, torn, .. } => {
                ok += 1;
                let torn = torn.map(|t| format!("; torn line {}", t.line));
                (
                    "cut off",
                    format!(
                        "the run was cut off (no run_finished) after {}{}",
                        entry_ref(&cut_off.last),
                        torn.unwrap_or_default()
                    ),
                )
            }
            SessionResult::Imported { format, steps, .. } => {
                ok += 1;
                (
                    "imported",
                    format!(
                        "from {format}: chain and {steps} step context(s) checked, its decisions not"
                    ),
                )
            }
            SessionResult::Failed { error } => {
                failed += 1;
                ("FAILED", error.clone())
            }
        };
        table.add_row([
            r.session.clone(),
            r.entries.map_or("-".into(), |n| n.to_string()),
            result.to_string(),
            detail,
        ]);
    }
    format!(
        "{table}\n{} session(s): {ok} ok, {diverged} diverged, {failed} failed\n",
        runs.len()
    )
}

/// What `--minimize` did, followed by the divergence report of the minimized log.
pub fn minimized(session: &str, out: &str, m: &Minimized, overrides: &Overrides) -> String {
    let size = |s: &crate::Size| {
        format!(
            "{} entries, {} run(s), {} step(s), {} tool call(s)",
            s.entries, s.runs, s.steps, s.tool_calls
        )
    };
    let sig = &m.signature;
    let name = |x: Option<&str>| x.unwrap_or("nothing").to_string();
    let mut text = format!(
        "minimized {session} ({}) to {out} ({}); {} candidate log(s) replayed\n",
        size(&m.before),
        size(&m.after),
        m.tests
    );
    text.push_str(&format!(
        "same first divergence: {} (recorded {}, re-made {}, phase {})\n",
        serde_name(&sig.kind),
        name(sig.recorded),
        name(sig.remade),
        serde_name(&sig.phase)
    ));
    if !overrides.is_empty() {
        text.push_str(&format!(
            "it shows when replayed with --set {}\n",
            overrides.describe().join(" --set ")
        ));
    }
    let report = ReplayReport {
        entries: m.log.entries.len(),
        inputs: m.log.entries.iter().filter(|e| e.body.is_input()).count(),
        decisions: m
            .log
            .entries
            .iter()
            .filter(|e| xcsh_log::entry_decision(e).is_some())
            .count(),
    };
    text.push_str(&divergence(out, &report, &m.divergence, None, overrides));
    text
}
