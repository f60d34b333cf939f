//! `xcsh stats`: usage and timing per step and in total (input, output and cache
//! tokens, time to first token, stream time, tool time, retries, errors), time per
//! tool, and the spend budget each run used (against the `max_tokens` recorded with
//! its prompt). Covers every entry of the file, all branches.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;
use xcsh_log::SessionLog;
use xcsh_log::index::{ArchivedIndexData, Kind, NONE, index_of, open_index};
use xcsh_machine::EntryId;

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
    /// The tokens are xcsh's estimate (the provider reported none; in the total row:
    /// some step's are). Shown as `~N`.
    #[serde(skip_serializing_if = "is_false")]
    pub estimated: bool,
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
    pub outcome: Cow<'static, str>,
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
    /// The spend includes estimated usage. Shown as `~N`.
    #[serde(skip_serializing_if = "is_false")]
    pub estimated: bool,
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

/// The stats of every entry of `log`, from its index made in memory (the one
/// computation of [`compute_path`] too).
pub fn compute(log: &SessionLog) -> Stats {
    match index_of(log, None) {
        Ok(index) => compute_indexed(index.data()),
        // An index is made of any log but one without entries, which has no stats.
        Err(_) => totals(Vec::new(), BTreeMap::new(), Vec::new()),
    }
}

/// The stats of the session file at `path`, from its index (built or extended when
/// needed).
pub fn compute_path(path: &Path) -> Result<Stats, InspectError> {
    Ok(compute_indexed(open_index(path)?.data()))
}

mod family;

pub use family::{Family, FamilyStats, MemberUsage, compute_family_path, render_family};

/// The stats from an index: the same as [`compute`] of the log it indexes.
pub fn compute_indexed(d: &ArchivedIndexData) -> Stats {
    // One row per step and per prompt: sized up front, never moved.
    let mut steps: Vec<StepStats> = Vec::with_capacity(d.steps.len());
    let mut tools: BTreeMap<String, ToolStats> = BTreeMap::new();
    let mut runs: Vec<RunStats> = Vec::with_capacity(d.prompts.len());
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
                    estimated: false,
                    max_tokens: d.prompts[d.aux(pos)].max_tokens.to_native(),
                    budget_used_pct: None,
                    stop: None,
                });
            }
            // A memory extraction (SPEC.md §28) is a step of its own kind: a row
            // with step 0, counted in the totals but not in its run's steps.
            kind @ (Kind::Step | Kind::MemoryExtraction) => {
                let extraction = kind == Kind::MemoryExtraction;
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
                if let Some(r) = run.filter(|_| !extraction) {
                    r.steps += 1;
                    if r.stop.is_none() {
                        r.spend = r.spend.saturating_add(
                            input
                                .saturating_add(output)
                                .saturating_add(cache_r)
                                .saturating_add(cache_w),
                        );
                        r.estimated |= s.estimated;
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
                    estimated: s.estimated,
                    ttft_ms: opt(s.ttft_ms.to_native()),
                    stream_ms: opt(s.stream_ms.to_native()),
                    tool_calls: 0,
                    tool_ms: 0,
                    retries: s.retries.to_native(),
                    errors: u32::from(failed),
                    outcome: match s.outcome {
                        0 if extraction => Cow::Borrowed("memory_extraction"),
                        0 => Cow::Borrowed("completed"),
                        2 => Cow::Borrowed("aborted"),
                        _ => Cow::Owned(crate::common::outcome_text(&d.step_outcome(s))),
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
                stat.total_ms = stat.total_ms.saturating_add(ms);
                stat.max_ms = stat.max_ms.max(ms);
                match t.status {
                    0 => stat.ok += 1,
                    1 => stat.error += 1,
                    _ => stat.cancelled += 1,
                }
                if let Some(s) = step.and_then(|i| steps.get_mut(i)) {
                    s.tool_ms = s.tool_ms.saturating_add(ms);
                    if t.status != 0 {
                        s.errors += 1;
                    }
                }
            }
            Kind::RunFinished => {
                if let Some(r) = runs.last_mut() {
                    let f = &d.finishes[d.aux(pos)];
                    r.spend = f.spend.to_native();
                    r.estimated = f.estimated;
                    r.stop = Some(stop_text(&d.stop_reason(f)));
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
        estimated: false,
        ttft_ms: None,
        stream_ms: None,
        tool_calls: 0,
        tool_ms: 0,
        retries: 0,
        errors: 0,
        outcome: Cow::Borrowed(""),
    };
    let mut ttfts = Vec::new();
    for s in &steps {
        // Saturating: a log may report any number.
        total.input_tokens = total.input_tokens.saturating_add(s.input_tokens);
        total.output_tokens = total.output_tokens.saturating_add(s.output_tokens);
        total.cache_read_tokens = total.cache_read_tokens.saturating_add(s.cache_read_tokens);
        total.cache_write_tokens = total
            .cache_write_tokens
            .saturating_add(s.cache_write_tokens);
        total.estimated |= s.estimated;
        total.stream_ms = Some(
            total
                .stream_ms
                .unwrap_or(0)
                .saturating_add(s.stream_ms.unwrap_or(0)),
        );
        total.tool_calls = total.tool_calls.saturating_add(s.tool_calls);
        total.tool_ms = total.tool_ms.saturating_add(s.tool_ms);
        total.retries += s.retries;
        total.errors += s.errors;
        ttfts.extend(s.ttft_ms);
    }
    let mean_ttft_ms = (!ttfts.is_empty())
        .then(|| ttfts.iter().fold(0u64, |a, &t| a.saturating_add(t)) / ttfts.len() as u64);
    Stats {
        steps,
        total,
        mean_ttft_ms,
        tools,
        runs,
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A table's cells, kept in one buffer: rendered directly in comfy-table's
/// `UTF8_FULL_CONDENSED` layout (no wrapping) when every cell is one line of ASCII,
/// else handed to comfy-table (whose width rules for other text are its own).
struct Cells {
    head: &'static [&'static str],
    /// Right-aligned columns.
    right: Vec<bool>,
    buf: String,
    ends: Vec<u32>,
}

impl Cells {
    fn new(head: &'static [&'static str], right: Vec<bool>) -> Cells {
        Cells {
            head,
            right,
            buf: String::new(),
            ends: Vec::new(),
        }
    }

    fn end(&mut self) {
        self.ends
            .push(u32::try_from(self.buf.len()).unwrap_or(u32::MAX));
    }

    fn cell(&mut self, text: &str) {
        self.buf.push_str(text);
        self.end();
    }

    /// `n`, as `~n` when it is an estimate.
    fn tokens(&mut self, n: u64, estimated: bool) {
        if estimated {
            self.buf.push('~');
        }
        self.num(n);
    }

    fn num(&mut self, n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut n = n;
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        // Only ASCII digits were written.
        self.buf
            .push_str(std::str::from_utf8(&digits[i..]).unwrap_or("0"));
        self.end();
    }

    fn opt(&mut self, v: Option<u64>) {
        match v {
            Some(v) => self.num(v),
            None => self.cell("-"),
        }
    }

    fn cells(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let end = end as usize;
            let s = self.buf.get(start..end).unwrap_or("");
            start = end;
            s
        })
    }

    fn render(&self) -> String {
        if self.buf.is_ascii() && !self.buf.contains(['\n', '\r']) {
            self.render_ascii()
        } else {
            self.render_comfy()
        }
    }

    fn render_ascii(&self) -> String {
        let cols = self.head.len();
        let mut width: Vec<usize> = self.head.iter().map(|h| h.len()).collect();
        for (i, c) in self.cells().enumerate() {
            width[i % cols] = width[i % cols].max(c.len());
        }
        let rows = self.ends.len() / cols;
        let line_len: usize = width.iter().map(|w| w + 3).sum::<usize>() * 3 + 4;
        let mut out = String::with_capacity((rows + 4) * line_len);
        let rule = |out: &mut String, left: &str, fill: &str, mid: &str, right: &str| {
            out.push_str(left);
            for (i, w) in width.iter().enumerate() {
                if i > 0 {
                    out.push_str(mid);
                }
                for _ in 0..w + 2 {
                    out.push_str(fill);
                }
            }
            out.push_str(right);
        };
        const SPACES: &str = "                                                                ";
        let spaces = |out: &mut String, mut n: usize| {
            while n > 0 {
                let k = n.min(SPACES.len());
                out.push_str(&SPACES[..k]);
                n -= k;
            }
        };
        let row = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
            out.push_str("│ ");
            for (i, c) in cells.enumerate() {
                if i > 0 {
                    out.push_str(" ┆ ");
                }
                let pad = width[i] - c.len();
                if self.right[i] {
                    spaces(out, pad);
                    out.push_str(c);
                } else {
                    out.push_str(c);
                    spaces(out, pad);
                }
            }
            out.push_str(" │");
        };
        rule(&mut out, "┌", "─", "┬", "┐");
        out.push('\n');
        row(&mut out, &mut self.head.iter().copied());
        out.push('\n');
        rule(&mut out, "╞", "═", "╪", "╡");
        let mut cells = self.cells();
        for _ in 0..rows {
            out.push('\n');
            row(&mut out, &mut cells.by_ref().take(cols));
        }
        out.push('\n');
        rule(&mut out, "└", "─", "┴", "┘");
        out
    }

    fn render_comfy(&self) -> String {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(self.head.to_vec());
        let cols = self.head.len();
        let all: Vec<&str> = self.cells().collect();
        for row in all.chunks(cols) {
            t.add_row(row.to_vec());
        }
        for (i, right) in self.right.iter().enumerate() {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(if *right {
                    CellAlignment::Right
                } else {
                    CellAlignment::Left
                });
            }
        }
        t.to_string()
    }
}

const STEP_HEAD: [&str; 13] = [
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
];

const TOOL_HEAD: [&str; 8] = [
    "tool",
    "calls",
    "ok",
    "error",
    "cancelled",
    "not run",
    "total ms",
    "max ms",
];

const RUN_HEAD: [&str; 7] = [
    "run",
    "prompt",
    "steps",
    "spend",
    "max_tokens",
    "budget used",
    "stop",
];

/// Rows of the steps and runs tables that `xcsh stats` shows without `--all`: the
/// last ones (the total row and the tools table always cover every step).
pub const DEFAULT_ROWS: usize = 20;

/// The three tables: steps with a total row, tools, and runs against their budget.
pub fn render(stats: &Stats) -> String {
    render_last(stats, None)
}

/// [`render`], the steps and runs tables limited to their `last` rows (`None`:
/// all); the title of a cut table says how many rows it leaves out.
pub fn render_last(stats: &Stats, last: Option<usize>) -> String {
    let shown = |n: usize| last.map_or(0, |k| n.saturating_sub(k));
    let (skip_steps, skip_runs) = (shown(stats.steps.len()), shown(stats.runs.len()));
    let mut steps = Cells::new(&STEP_HEAD, vec![true; STEP_HEAD.len()]);
    steps.buf.reserve(stats.steps.len() * 64);
    steps
        .ends
        .reserve((stats.steps.len() + 1) * STEP_HEAD.len());
    let rest = |c: &mut Cells, s: &StepStats| {
        c.tokens(s.input_tokens, s.estimated);
        c.tokens(s.output_tokens, s.estimated);
        c.num(s.cache_read_tokens);
        c.num(s.cache_write_tokens);
    };
    let tail = |c: &mut Cells, s: &StepStats| {
        c.opt(s.stream_ms);
        c.num(u64::from(s.tool_calls));
        c.num(s.tool_ms);
        c.num(u64::from(s.retries));
        c.num(u64::from(s.errors));
    };
    for s in &stats.steps[skip_steps..] {
        steps.num(u64::from(s.run));
        steps.num(u64::from(s.step));
        steps.cell(&format!("#{}", s.entry));
        rest(&mut steps, s);
        steps.opt(s.ttft_ms);
        tail(&mut steps, s);
    }
    let t = &stats.total;
    steps.cell("total");
    steps.num(stats.steps.len() as u64);
    steps.cell("");
    rest(&mut steps, t);
    steps.cell(
        &stats
            .mean_ttft_ms
            .map_or_else(|| "-".into(), |m| format!("{m} avg")),
    );
    tail(&mut steps, t);

    let mut right = vec![true; TOOL_HEAD.len()];
    right[0] = false;
    let mut tools = Cells::new(&TOOL_HEAD, right);
    for (name, t) in &stats.tools {
        tools.cell(name);
        for n in [t.calls, t.ok, t.error, t.cancelled, t.not_run] {
            tools.num(u64::from(n));
        }
        tools.num(t.total_ms);
        tools.num(t.max_ms);
    }

    let mut right = vec![true; RUN_HEAD.len()];
    right[6] = false;
    let mut runs = Cells::new(&RUN_HEAD, right);
    for r in &stats.runs[skip_runs..] {
        runs.num(u64::from(r.run));
        runs.cell(&format!("#{}", r.entry));
        runs.num(u64::from(r.steps));
        runs.tokens(r.spend, r.estimated);
        if r.max_tokens == 0 {
            runs.cell("no cap");
        } else {
            runs.num(r.max_tokens);
        }
        match r.budget_used_pct {
            Some(p) => runs.cell(&format!("{p:.2}%")),
            None => runs.cell("-"),
        }
        runs.cell(r.stop.as_deref().unwrap_or("unfinished"));
    }

    let title = |what: &str, n: usize, skipped: usize| {
        if skipped == 0 {
            format!("{what}\n")
        } else {
            format!(
                "{what} (the last {} of {n}; --all shows every one)\n",
                n - skipped
            )
        }
    };
    let mut out = String::new();
    out.push_str(&title("steps", stats.steps.len(), skip_steps));
    out.push_str(&steps.render());
    out.push('\n');
    if !stats.tools.is_empty() {
        out.push_str("tools\n");
        out.push_str(&tools.render());
        out.push('\n');
    }
    out.push_str(&title("runs", stats.runs.len(), skip_runs));
    out.push_str(&runs.render());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{self, Kit};
    use xcsh_log::Record;
    use xcsh_machine::{ProviderError, ProviderErrorKind, StepOutcome, StreamEvent, ToolStatus};

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
    fn a_cut_render_shows_the_last_rows_and_totals_over_all_of_them() {
        let (_dir, log) = testkit::steer_session();
        let stats = compute(&log);
        // The whole render (`steps_tools_and_budget`) without the first step's row,
        // under a title that says so; the totals still count every step.
        let full = render(&stats);
        let first_step = full.lines().nth(4).unwrap();
        assert!(first_step.contains("    #4 "), "{first_step}");
        let cut = full.replacen(&format!("{first_step}\n"), "", 1).replacen(
            "steps\n",
            "steps (the last 2 of 3; --all shows every one)\n",
            1,
        );
        assert_eq!(render_last(&stats, Some(2)), cut);
    }

    #[test]
    fn the_direct_layout_is_comfy_tables_layout() {
        let (_dir, path, _) = testkit::synth(2_500, 9, Default::default());
        let stats = compute(&xcsh_log::read_session(&path).unwrap());
        let mut steps = Cells::new(&STEP_HEAD, vec![true; STEP_HEAD.len()]);
        for s in &stats.steps {
            steps.num(u64::from(s.run));
            steps.cell(&format!("#{}", s.entry));
            for _ in 0..11 {
                steps.opt(s.ttft_ms);
            }
        }
        assert_eq!(steps.render_ascii(), steps.render_comfy());
        let mut right = vec![false; RUN_HEAD.len()];
        right[2] = true;
        let mut runs = Cells::new(&RUN_HEAD, right);
        for r in &stats.runs {
            for _ in 0..6 {
                runs.num(r.spend);
            }
            runs.cell(r.stop.as_deref().unwrap_or("unfinished"));
        }
        assert_eq!(runs.render_ascii(), runs.render_comfy());
        let empty = Cells::new(&TOOL_HEAD, vec![true; TOOL_HEAD.len()]);
        assert_eq!(empty.render_ascii(), empty.render_comfy());
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
                xcsh_log::TimedEvent {
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
        k.step_full(testkit::step_record(
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
        ));
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
