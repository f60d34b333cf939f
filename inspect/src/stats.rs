//! `xcsh stats`: usage and timing per step and in total (input, output and cache
//! tokens, time to first token, stream time, tool time, retries, errors), time per
//! tool, and the spend budget each run used (against the `max_tokens` recorded with
//! its prompt). Covers every entry of the file, all branches.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;
use xcsh_core::log::index::{ArchivedIndexData, Kind, NONE, index_of, open_index};
use xcsh_core::log::{Body, Record, SessionLog};
use xcsh_core::machine::{Decision, EntryId, FinishReason, StepOutcome, StreamEvent, ToolStatus};

use crate::common::stop_text;
use crate::error::InspectError;

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepStats {
    /// The run's number in the file (1-based).
    pub run: u32,
    pub step: u32,
    /// The `step` entry.
    pub entry: EntryId,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// `ms` of the first text, reasoning or tool-call event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<u64>,
    /// `ms` of the last event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_ms: Option<u64>,
    pub tool_calls: u32,
    /// Sum of `duration_ms` of the step's tool results.
    pub tool_ms: u64,
    /// `retrying` events.
    pub retries: u32,
    /// A failed step (or one that finished with `error`), plus its tool calls that
    /// did not end `ok` (error, cancelled, or answered without running).
    pub errors: u32,
    pub outcome: String,
}

/// One tool, over the whole file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolStats {
    pub calls: u32,
    pub ok: u32,
    pub error: u32,
    pub cancelled: u32,
    /// Answered without running (synthetic results: denied, invalid, interrupted…).
    pub not_run: u32,
    pub total_ms: u64,
    pub max_ms: u64,
}

/// One run: its spend against its budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunStats {
    pub run: u32,
    /// Its `user_message` entry.
    pub entry: EntryId,
    pub steps: u32,
    pub spend: u64,
    /// The budget recorded with the prompt (0 = no cap).
    pub max_tokens: u64,
    /// `spend / max_tokens` in percent, when there is a cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_used_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub steps: Vec<StepStats>,
    pub total: StepStats,
    /// Mean time to first token over the steps that have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_ttft_ms: Option<u64>,
    pub tools: BTreeMap<String, ToolStats>,
    pub runs: Vec<RunStats>,
}

/// The stats of every entry of `log`.
pub fn compute(log: &SessionLog) -> Stats {
    match index_of(log, None) {
        Ok(index) => compute_indexed(index.data()),
        // Building an index in memory does not fail for a log that was read.
        Err(_) => compute_entries(log),
    }
}

/// The stats of the session file at `path`, from its index (built or extended when
/// needed).
pub fn compute_path(path: &Path) -> Result<Stats, InspectError> {
    Ok(compute_indexed(open_index(path)?.data()))
}

/// The stats from an index: the same as [`compute`] of the log it indexes.
pub fn compute_indexed(d: &ArchivedIndexData) -> Stats {
    let mut steps: Vec<StepStats> = Vec::new();
    let mut tools: BTreeMap<String, ToolStats> = BTreeMap::new();
    let mut runs: Vec<RunStats> = Vec::new();
    let mut calls: HashMap<&str, usize> = HashMap::new();
    for pos in 0..d.len() {
        match d.kind(pos) {
            Kind::UserMessage | Kind::Compact => {
                calls.clear();
                runs.push(RunStats {
                    run: u32::try_from(runs.len() + 1).unwrap_or(u32::MAX),
                    entry: d.id(pos),
                    steps: 0,
                    spend: 0,
                    max_tokens: d.prompts[d.aux(pos)].max_tokens.to_native(),
                    budget_used_pct: None,
                    stop: None,
                });
            }
            Kind::Step => {
                let s = &d.steps[d.aux(pos)];
                let (input, output, cache_r, cache_w) = (
                    s.input_tokens.to_native(),
                    s.output_tokens.to_native(),
                    s.cache_read_tokens.to_native(),
                    s.cache_write_tokens.to_native(),
                );
                let failed = s.outcome == 1 || s.finish_error;
                let run = runs.last_mut();
                let run_no = run.as_ref().map_or(0, |r| r.run);
                if let Some(r) = run {
                    r.steps += 1;
                    if r.stop.is_none() {
                        r.spend += input + output + cache_r + cache_w;
                    }
                }
                let opt = |v: u64| (v != NONE).then_some(v);
                steps.push(StepStats {
                    run: run_no,
                    step: s.step.to_native(),
                    entry: d.id(pos),
                    input_tokens: input,
                    output_tokens: output,
                    cache_read_tokens: cache_r,
                    cache_write_tokens: cache_w,
                    ttft_ms: opt(s.ttft_ms.to_native()),
                    stream_ms: opt(s.stream_ms.to_native()),
                    tool_calls: 0,
                    tool_ms: 0,
                    retries: s.retries.to_native(),
                    errors: u32::from(failed),
                    outcome: match s.outcome {
                        0 => "completed".into(),
                        2 => "aborted".into(),
                        _ => crate::common::outcome_text(&d.step_outcome(s)),
                    },
                });
                if s.outcome == 0 {
                    for c in d.step_calls(s) {
                        calls.insert(c, steps.len() - 1);
                    }
                    if let Some(last) = steps.last_mut() {
                        last.tool_calls = s.tool_calls.to_native();
                    }
                }
            }
            Kind::ToolResult | Kind::SyntheticResult => {
                let t = &d.tools[d.aux(pos)];
                let name = d.str(&t.name);
                let stat = match tools.get_mut(name) {
                    Some(stat) => stat,
                    None => tools.entry(name.to_string()).or_default(),
                };
                stat.calls += 1;
                let step = calls.get(d.str(&t.call_id)).copied();
                if t.status == 3 {
                    stat.not_run += 1;
                    if let Some(s) = step.and_then(|i| steps.get_mut(i)) {
                        s.errors += 1;
                    }
                    continue;
                }
                let ms = t.duration_ms.to_native();
                stat.total_ms += ms;
                stat.max_ms = stat.max_ms.max(ms);
                match t.status {
                    0 => stat.ok += 1,
                    1 => stat.error += 1,
                    _ => stat.cancelled += 1,
                }
                if let Some(s) = step.and_then(|i| steps.get_mut(i)) {
                    s.tool_ms += ms;
                    if t.status != 0 {
                        s.errors += 1;
                    }
                }
            }
            Kind::RunFinished => {
                if let Some(r) = runs.last_mut() {
                    let f = &d.finishes[d.aux(pos)];
                    r.spend = f.spend.to_native();
                    r.stop = Some(stop_text(&d.stop_reason(f)));
                }
            }
            _ => {}
        }
    }
    totals(steps, tools, runs)
}

/// The stats of every entry of `log`, entry by entry (what the index path mirrors).
pub(crate) fn compute_entries(log: &SessionLog) -> Stats {
    let mut steps: Vec<StepStats> = Vec::new();
    let mut tools: BTreeMap<String, ToolStats> = BTreeMap::new();
    let mut runs: Vec<RunStats> = Vec::new();
    // Call id → index in `steps`, within the current run (faux ids repeat per run).
    let mut calls: HashMap<String, usize> = HashMap::new();
    for e in &log.entries {
        match &e.body {
            Body::Record(Record::UserMessage { config, .. } | Record::Compact { config }) => {
                calls.clear();
                runs.push(RunStats {
                    run: u32::try_from(runs.len() + 1).unwrap_or(u32::MAX),
                    entry: e.id,
                    steps: 0,
                    spend: 0,
                    max_tokens: config.limits.max_tokens,
                    budget_used_pct: None,
                    stop: None,
                });
            }
            Body::Record(Record::Step(s)) => {
                let u = &s.message.usage;
                let first = s.events.iter().find(|t| {
                    matches!(
                        t.event,
                        StreamEvent::TextDelta { .. }
                            | StreamEvent::ReasoningDelta { .. }
                            | StreamEvent::ToolCallStart { .. }
                    )
                });
                let failed = matches!(s.outcome, StepOutcome::Failed { .. })
                    || s.message.finish == Some(FinishReason::Error);
                let run = runs.last_mut();
                let run_no = run.as_ref().map_or(0, |r| r.run);
                if let Some(r) = run {
                    r.steps += 1;
                    if r.stop.is_none() {
                        r.spend += u.spend();
                    }
                }
                steps.push(StepStats {
                    run: run_no,
                    step: s.step.0,
                    entry: e.id,
                    input_tokens: u.input_tokens,
                    output_tokens: u.output_tokens,
                    cache_read_tokens: u.cache_read_tokens,
                    cache_write_tokens: u.cache_write_tokens,
                    ttft_ms: first.map(|t| t.ms),
                    stream_ms: s.events.last().map(|t| t.ms),
                    tool_calls: 0,
                    tool_ms: 0,
                    retries: count(
                        s.events
                            .iter()
                            .filter(|t| matches!(t.event, StreamEvent::Retrying { .. })),
                    ),
                    errors: u32::from(failed),
                    outcome: crate::common::outcome_text(&s.outcome),
                });
                // Calls of this step answered without a dispatch are found by id.
                if matches!(s.outcome, StepOutcome::Completed) {
                    for c in &s.message.tool_calls {
                        calls.insert(c.id.0.clone(), steps.len() - 1);
                    }
                    if let Some(last) = steps.last_mut() {
                        last.tool_calls = count(s.message.tool_calls.iter());
                    }
                }
            }
            Body::Record(Record::ToolResult(t)) => {
                let stat = tools.entry(t.name.clone()).or_default();
                stat.calls += 1;
                stat.total_ms += t.duration_ms;
                stat.max_ms = stat.max_ms.max(t.duration_ms);
                match t.outcome.status {
                    ToolStatus::Ok => stat.ok += 1,
                    ToolStatus::Error => stat.error += 1,
                    ToolStatus::Cancelled => stat.cancelled += 1,
                }
                if let Some(s) = calls.get(&t.call_id.0).and_then(|&i| steps.get_mut(i)) {
                    s.tool_ms += t.duration_ms;
                    if t.outcome.status != ToolStatus::Ok {
                        s.errors += 1;
                    }
                }
            }
            Body::Decision(Decision::SyntheticResult { call, .. }) => {
                let stat = tools.entry(call.name.clone()).or_default();
                stat.calls += 1;
                stat.not_run += 1;
                if let Some(s) = calls.get(&call.id.0).and_then(|&i| steps.get_mut(i)) {
                    s.errors += 1;
                }
            }
            Body::Decision(Decision::RunFinished { reason, usage, .. }) => {
                if let Some(r) = runs.last_mut() {
                    r.spend = usage.spend();
                    r.stop = Some(stop_text(reason));
                }
            }
            _ => {}
        }
    }
    totals(steps, tools, runs)
}

/// Budgets per run and the total row.
fn totals(
    steps: Vec<StepStats>,
    tools: BTreeMap<String, ToolStats>,
    mut runs: Vec<RunStats>,
) -> Stats {
    for r in &mut runs {
        r.budget_used_pct = (r.max_tokens > 0)
            .then(|| (r.spend as f64 * 10_000.0 / r.max_tokens as f64).round() / 100.0);
    }
    let mut total = StepStats {
        run: 0,
        step: 0,
        entry: EntryId(0),
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        ttft_ms: None,
        stream_ms: None,
        tool_calls: 0,
        tool_ms: 0,
        retries: 0,
        errors: 0,
        outcome: String::new(),
    };
    let mut ttfts = Vec::new();
    for s in &steps {
        total.input_tokens += s.input_tokens;
        total.output_tokens += s.output_tokens;
        total.cache_read_tokens += s.cache_read_tokens;
        total.cache_write_tokens += s.cache_write_tokens;
        total.stream_ms = Some(total.stream_ms.unwrap_or(0) + s.stream_ms.unwrap_or(0));
        total.tool_calls += s.tool_calls;
        total.tool_ms += s.tool_ms;
        total.retries += s.retries;
        total.errors += s.errors;
        ttfts.extend(s.ttft_ms);
    }
    let mean_ttft_ms = (!ttfts.is_empty()).then(|| ttfts.iter().sum::<u64>() / ttfts.len() as u64);
    Stats {
        steps,
        total,
        mean_ttft_ms,
        tools,
        runs,
    }
}

fn count<T>(it: impl Iterator<Item = T>) -> u32 {
    u32::try_from(it.count()).unwrap_or(u32::MAX)
}

fn table(head: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(head.to_vec());
    t
}

/// Right-aligns every column but the first `text` ones.
fn align(t: &mut Table, text: usize) {
    let n = t.column_count();
    for i in text..n {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// The three tables: steps with a total row, tools, and runs against their budget.
pub fn render(stats: &Stats) -> String {
    let mut steps = table(&[
        "run",
        "step",
        "entry",
        "input",
        "output",
        "cache r",
        "cache w",
        "ttft ms",
        "stream ms",
        "tools",
        "tool ms",
        "retries",
        "errors",
    ]);
    let row = |s: &StepStats, run: String, step: String, entry: String, ttft: String| {
        vec![
            run,
            step,
            entry,
            s.input_tokens.to_string(),
            s.output_tokens.to_string(),
            s.cache_read_tokens.to_string(),
            s.cache_write_tokens.to_string(),
            ttft,
            opt(s.stream_ms),
            s.tool_calls.to_string(),
            s.tool_ms.to_string(),
            s.retries.to_string(),
            s.errors.to_string(),
        ]
    };
    for s in &stats.steps {
        steps.add_row(row(
            s,
            s.run.to_string(),
            s.step.to_string(),
            format!("#{}", s.entry),
            opt(s.ttft_ms),
        ));
    }
    steps.add_row(row(
        &stats.total,
        "total".into(),
        stats.steps.len().to_string(),
        String::new(),
        stats
            .mean_ttft_ms
            .map_or_else(|| "-".into(), |m| format!("{m} avg")),
    ));
    align(&mut steps, 0);

    let mut tools = table(&[
        "tool",
        "calls",
        "ok",
        "error",
        "cancelled",
        "not run",
        "total ms",
        "max ms",
    ]);
    for (name, t) in &stats.tools {
        tools.add_row(vec![
            name.clone(),
            t.calls.to_string(),
            t.ok.to_string(),
            t.error.to_string(),
            t.cancelled.to_string(),
            t.not_run.to_string(),
            t.total_ms.to_string(),
            t.max_ms.to_string(),
        ]);
    }
    align(&mut tools, 1);

    let mut runs = table(&[
        "run",
        "prompt",
        "steps",
        "spend",
        "max_tokens",
        "budget used",
        "stop",
    ]);
    for r in &stats.runs {
        runs.add_row(vec![
            r.run.to_string(),
            format!("#{}", r.entry),
            r.steps.to_string(),
            r.spend.to_string(),
            if r.max_tokens == 0 {
                "no cap".into()
            } else {
                r.max_tokens.to_string()
            },
            r.budget_used_pct
                .map_or_else(|| "-".into(), |p| format!("{p:.2}%")),
            r.stop.clone().unwrap_or_else(|| "unfinished".into()),
        ]);
    }
    align(&mut runs, 0);
    if let Some(c) = runs.column_mut(6) {
        c.set_cell_alignment(CellAlignment::Left);
    }

    let mut out = format!("steps\n{steps}\n");
    if !stats.tools.is_empty() {
        out.push_str(&format!("tools\n{tools}\n"));
    }
    out.push_str(&format!("runs\n{runs}\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{self, Kit};
    use xcsh_core::machine::{ProviderError, ProviderErrorKind};

    #[test]
    fn steps_tools_and_budget() {
        let (_dir, log) = testkit::steer_session();
        expect_test::expect![[r#"
            steps
            ┌───────┬──────┬───────┬───────┬────────┬─────────┬─────────┬─────────┬───────────┬───────┬─────────┬─────────┬────────┐
            │   run ┆ step ┆ entry ┆ input ┆ output ┆ cache r ┆ cache w ┆ ttft ms ┆ stream ms ┆ tools ┆ tool ms ┆ retries ┆ errors │
            ╞═══════╪══════╪═══════╪═══════╪════════╪═════════╪═════════╪═════════╪═══════════╪═══════╪═════════╪═════════╪════════╡
            │     1 ┆    1 ┆    #4 ┆   100 ┆     10 ┆       0 ┆       0 ┆       2 ┆        18 ┆     2 ┆      60 ┆       0 ┆      0 │
            │     1 ┆    2 ┆   #12 ┆   200 ┆     10 ┆      50 ┆       0 ┆       2 ┆         8 ┆     0 ┆       0 ┆       0 ┆      0 │
            │     1 ┆    3 ┆   #15 ┆   300 ┆     10 ┆      50 ┆       0 ┆       2 ┆         8 ┆     0 ┆       0 ┆       0 ┆      0 │
            │ total ┆    3 ┆       ┆   600 ┆     30 ┆     100 ┆       0 ┆   2 avg ┆        34 ┆     2 ┆      60 ┆       0 ┆      0 │
            └───────┴──────┴───────┴───────┴────────┴─────────┴─────────┴─────────┴───────────┴───────┴─────────┴─────────┴────────┘
            tools
            ┌──────┬───────┬────┬───────┬───────────┬─────────┬──────────┬────────┐
            │ tool ┆ calls ┆ ok ┆ error ┆ cancelled ┆ not run ┆ total ms ┆ max ms │
            ╞══════╪═══════╪════╪═══════╪═══════════╪═════════╪══════════╪════════╡
            │ echo ┆     2 ┆  2 ┆     0 ┆         0 ┆       0 ┆       60 ┆     30 │
            └──────┴───────┴────┴───────┴───────────┴─────────┴──────────┴────────┘
            runs
            ┌─────┬────────┬───────┬───────┬────────────┬─────────────┬───────────┐
            │ run ┆ prompt ┆ steps ┆ spend ┆ max_tokens ┆ budget used ┆ stop      │
            ╞═════╪════════╪═══════╪═══════╪════════════╪═════════════╪═══════════╡
            │   1 ┆     #1 ┆     3 ┆   730 ┆     400000 ┆       0.18% ┆ completed │
            └─────┴────────┴───────┴───────┴────────────┴─────────────┴───────────┘
        "#]].assert_eq(&render(&compute(&log)));
    }

    #[test]
    fn retries_errors_and_a_capped_budget() {
        let mut k = Kit::new("s");
        k.prompt_with("go", testkit::config(1000));
        let mut step = testkit::step_record(
            1,
            "",
            "trying",
            &[("echo", "{}"), ("nope", "{}")],
            700,
            StepOutcome::Completed,
        );
        if let Record::Step(s) = &mut step {
            s.events.insert(
                0,
                xcsh_core::log::TimedEvent {
                    ms: 0,
                    event: StreamEvent::Retrying {
                        attempt: 1,
                        reason: "429".into(),
                        delay_ms: 500,
                    },
                },
            );
        }
        k.record(step);
        k.settle("call_1_1", "echo", ToolStatus::Error, "boom");
        k.step_full(
            2,
            "",
            "",
            &[],
            400,
            StepOutcome::Failed {
                error: ProviderError {
                    kind: ProviderErrorKind::Disconnected,
                    message: "gone".into(),
                },
            },
        );
        let (_dir, log) = k.finish();
        let stats = compute(&log);
        assert_eq!(stats.steps[0].retries, 1);
        assert_eq!(
            stats.steps[0].errors, 2,
            "an error result and an unknown tool"
        );
        assert_eq!(stats.steps[1].errors, 1, "the failed step");
        assert_eq!(stats.tools["nope"].not_run, 1);
        assert_eq!(stats.tools["echo"].error, 1);
        assert_eq!(stats.runs[0].spend, 710);
        assert_eq!(stats.runs[0].budget_used_pct, Some(71.0));
        assert_eq!(
            stats.runs[0].stop.as_deref(),
            Some("provider_error disconnected: gone")
        );
        assert_eq!(
            stats.total.input_tokens, 700,
            "the failed step reported no usage"
        );
    }
}
