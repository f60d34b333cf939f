//! `xcsh events`: the timeline, for debugging the order of things. Every entry in
//! file order with its sequence (line), its time relative to the session header, its
//! step, and its lane (model / tools / user / machine); a `step` entry expands into
//! its timed stream events (the step's start + each event's `ms`), placed among the
//! entries recorded while the step streamed, so that a steer arriving mid-stream shows
//! between the deltas. Works on a stream of entries (`LogReader`, or [`Follower`] for
//! a live file), holding back only the entries of the step that is streaming.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;
use xcsh_log::{Body, Chain, Entry, LogReader, Record, SessionLog};
use xcsh_machine::{Decision, EntryId, StreamEvent};

use crate::common::{entry_text, event_kind, event_text, fmt_rel, rel_ms};
use crate::error::InspectError;
use crate::style::{Paint, Style};
use track::{Steps, Track, track, track_at};

mod scan;
mod track;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    /// The provider: steps, their stream events, summaries.
    Model,
    /// Tool dispatches, results, synthetic results, approvals.
    Tools,
    /// What the user did: prompts, steers, follow-ups, interrupts, answers, labels,
    /// branches.
    User,
    /// The machine's own decisions and the session's structure.
    Machine,
}

impl Lane {
    fn name(self) -> &'static str {
        match self {
            Lane::Model => "model",
            Lane::Tools => "tools",
            Lane::User => "user",
            Lane::Machine => "machine",
        }
    }
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The position in the file: the entry's line; `LINE.K` for the K-th stream
    /// event of the step entry on LINE.
    pub seq: String,
    pub line: u32,
    pub entry: EntryId,
    /// Milliseconds since the session header.
    pub t_ms: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    pub lane: Lane,
    /// The entry type, or the stream event kind.
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub detail: String,
}

/// Every kind a row can have, which `--type` takes: the entry types, then the
/// stream event kinds.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    Record::TYPE_NAMES
        .into_iter()
        .chain(Decision::TYPE_NAMES)
        .chain(xcsh_machine::StreamEvent::KINDS)
}

/// Which rows to show.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Entry types or stream event kinds (any of them).
    pub types: Vec<String>,
    pub step: Option<u32>,
    pub tool: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
}

impl Filter {
    pub fn keeps(&self, row: &Row) -> bool {
        (self.types.is_empty() || self.types.contains(&row.kind))
            && self.step.is_none_or(|s| row.step == Some(s))
            && self
                .tool
                .as_ref()
                .is_none_or(|t| row.tool.as_ref() == Some(t))
            && self.since.is_none_or(|s| row.t_ms >= s)
            && self.until.is_none_or(|u| row.t_ms <= u)
    }
}

/// Turns entries, in file order, into rows.
#[derive(Debug, Default)]
pub struct Timeline {
    origin: Option<DateTime<Utc>>,
    steps: Steps<String>,
    /// Start time of each step of the run in progress.
    step_start: HashMap<u32, i64>,
    /// The step that is streaming: rows of the entries recorded meanwhile wait for
    /// its events.
    open_step: Option<u32>,
    held: Vec<Row>,
}

impl Timeline {
    pub fn new() -> Timeline {
        Timeline::default()
    }

    /// The rows that entry `entry` on line `line` makes final (possibly none yet,
    /// possibly earlier ones held back).
    pub fn push(&mut self, line: u32, entry: &Entry) -> Vec<Row> {
        let origin = *self.origin.get_or_insert(entry.ts);
        let t = rel_ms(origin, entry.ts);
        let mut out = Vec::new();
        let ends_stream = match &entry.body {
            Body::Record(Record::Step(s)) => self.open_step == Some(s.step.0),
            Body::Record(
                Record::UserMessage { .. }
                | Record::Compact { .. }
                | Record::Branch { .. }
                | Record::Recovered { .. },
            )
            | Body::Decision(Decision::RunFinished { .. } | Decision::StepStarted { .. }) => true,
            _ => false,
        };
        if ends_stream && !matches!(entry.body, Body::Record(Record::Step(_))) {
            // The streaming step was abandoned (crash, branch): let its entries go.
            out.append(&mut self.held);
            self.open_step = None;
        }
        let track = track(entry);
        if matches!(track, Track::Run) {
            self.step_start.clear();
        }
        let (step, lane, tool) = self.steps.classify(track);
        let row = Row {
            seq: line.to_string(),
            line,
            entry: entry.id,
            t_ms: t,
            step,
            lane,
            kind: entry.type_name().to_string(),
            tool,
            detail: entry_text(entry),
        };
        match &entry.body {
            Body::Record(Record::Step(s)) => {
                let start = self.step_start.get(&s.step.0).copied().unwrap_or(t);
                let mut names: HashMap<u32, String> = HashMap::new();
                let mut events = Vec::with_capacity(s.events.len());
                for (k, e) in s.events.iter().enumerate() {
                    let tool = match &e.event {
                        StreamEvent::ToolCallStart { index, name, .. } => {
                            names.insert(*index, name.clone());
                            Some(name.clone())
                        }
                        StreamEvent::ToolCallDelta { index, .. }
                        | StreamEvent::ToolCallEnd { index } => names.get(index).cloned(),
                        _ => None,
                    };
                    events.push(Row {
                        seq: format!("{line}.{}", k + 1),
                        line,
                        entry: entry.id,
                        t_ms: start + i64::try_from(e.ms).unwrap_or(i64::MAX - start),
                        step: Some(s.step.0),
                        lane: Lane::Model,
                        kind: event_kind(&e.event).to_string(),
                        tool,
                        detail: event_text(&e.event),
                    });
                }
                // Merge the events among the held entries by time (stable: an event
                // at the same millisecond as an entry goes first).
                let mut events = events.into_iter().peekable();
                for held in std::mem::take(&mut self.held) {
                    while let Some(ev) = events.next_if(|ev| ev.t_ms <= held.t_ms) {
                        out.push(ev);
                    }
                    out.push(held);
                }
                out.extend(events);
                out.push(row);
                self.open_step = None;
            }
            Body::Decision(Decision::StepStarted { step, .. }) => {
                self.step_start.insert(step.0, t);
                self.open_step = Some(step.0);
                out.push(row);
            }
            _ if self.open_step.is_some() => self.held.push(row),
            _ => out.push(row),
        }
        out
    }

    /// Lets the rows held back for a streaming step go (end of file, or a live view
    /// that shows entries as they come).
    pub fn flush(&mut self) -> Vec<Row> {
        std::mem::take(&mut self.held)
    }
}

/// The whole timeline of a log read already.
pub fn timeline(log: &SessionLog) -> Vec<Row> {
    let mut rows = Vec::new();
    each_row(log, |row| rows.push(row));
    rows
}

/// Hands the rows of [`timeline`] to `each` one at a time, as they are made (the
/// HTML page serializes them so, never holding them all).
pub fn each_row(log: &SessionLog, mut each: impl FnMut(Row)) {
    let mut t = Timeline::new();
    for (entry, line) in log.entries.iter().zip(&log.lines) {
        t.push(*line, entry).into_iter().for_each(&mut each);
    }
    t.flush().into_iter().for_each(each);
}

/// Streams the timeline of the file at `path` through `each` (only the rows
/// `filter` keeps). Returns the number of torn bytes at the end, if any. When the
/// filter names entry types only, only the entries of those types are decoded whole
/// (their rows are the same: entry rows come in file order): with a valid derived
/// index, which holds what the timeline tracks between them, only their lines are
/// read; without one every line is read and verified on parallel workers, and of the
/// others only what the tracking needs is decoded ([`scan`]).
pub fn stream_file(
    path: &Path,
    filter: &Filter,
    mut each: impl FnMut(&Row),
) -> Result<Option<usize>, InspectError> {
    if entry_types_only(filter) {
        if let Ok(Some(index)) = xcsh_log::index::open_existing_index(path)
            && let Some(torn) = stream_indexed(path, index.data(), filter, &mut each)?
        {
            return Ok(torn);
        }
        return scan::stream_scanned(path, filter, &mut each);
    }
    let file = File::open(path).map_err(|e| InspectError::io(path, e))?;
    let mut reader = LogReader::new(path, BufReader::with_capacity(4 << 20, file));
    let mut t = Timeline::new();
    let mut batch = Vec::new();
    while let Some(result) = reader.next_batch(&mut batch) {
        for (line, entry) in batch.drain(..) {
            for row in t.push(line, &entry) {
                if filter.keeps(&row) {
                    each(&row);
                }
            }
        }
        result?;
    }
    for row in t.flush() {
        if filter.keeps(&row) {
            each(&row);
        }
    }
    Ok(reader.torn_tail().map(<[u8]>::len))
}

/// Whether every type the filter names is an entry type (so that no stream event
/// row can pass it).
fn entry_types_only(filter: &Filter) -> bool {
    !filter.types.is_empty()
        && filter.types.iter().all(|t| {
            Record::TYPE_NAMES.contains(&t.as_str()) || Decision::TYPE_NAMES.contains(&t.as_str())
        })
}

/// The rows of the entries of the filter's types, from the index and those entries'
/// lines (see [`stream_file`]); `None` when the index cannot say (a timestamp out of
/// range).
fn stream_indexed(
    path: &Path,
    d: &xcsh_log::index::ArchivedIndexData,
    filter: &Filter,
    each: &mut dyn FnMut(&Row),
) -> Result<Option<Option<usize>>, InspectError> {
    use xcsh_log::index::LogLines;
    let n = d.len();
    if (0..n).any(|p| d.ts_ns(p) == i64::MIN) {
        return Ok(None);
    }
    let map = LogLines::open(path)?;
    let len = std::fs::metadata(path)
        .map_err(|e| InspectError::io(path, e))?
        .len();
    let origin = d.ts_ns(0);
    let mut steps: Steps<&str> = Steps::default();
    for pos in 0..n {
        let (step, lane, tool) = steps.classify(track_at(d, pos));
        let name = d.type_name(pos);
        if !filter.types.iter().any(|t| t == name) {
            continue;
        }
        let Some(entry) = map.entry(d, pos) else {
            // The log no longer has the line the index points at: read it whole.
            return Ok(None);
        };
        let line = u32::try_from(pos + 1).unwrap_or(u32::MAX);
        let row = Row {
            seq: line.to_string(),
            line,
            entry: d.id(pos),
            // In i128: two timestamps centuries apart differ by more than an i64.
            t_ms: i64::try_from((i128::from(d.ts_ns(pos)) - i128::from(origin)) / 1_000_000)
                .unwrap_or(i64::MAX),
            step,
            lane,
            kind: name.to_string(),
            tool: tool.map(str::to_string),
            detail: entry_text(&entry),
        };
        if filter.keeps(&row) {
            each(&row);
        }
    }
    let covered = d.covered.to_native();
    Ok(Some((len > covered).then(|| (len - covered) as usize)))
}

/// Reads a session file that is still being written: each [`Follower::poll`] reads
/// the complete lines appended since the last one, verified like the reader does
/// (header first, unique ids, parents before children, the hash chain), and keeps a
/// partial last line for the next poll.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    file: File,
    offset: u64,
    partial: Vec<u8>,
    /// The lines verified so far, by the log's one verifier.
    chain: Chain,
}

impl Follower {
    pub fn open(path: &Path) -> Result<Follower, InspectError> {
        let file = File::open(path).map_err(|e| InspectError::io(path, e))?;
        Ok(Follower {
            path: path.to_path_buf(),
            file,
            offset: 0,
            partial: Vec::new(),
            chain: Chain::new(path),
        })
    }

    /// Bytes of a partial last line held for the next poll.
    pub fn pending_bytes(&self) -> usize {
        self.partial.len()
    }

    /// Reads what was appended since the last poll; calls `each` with every new
    /// complete entry and returns how many there were.
    pub fn poll(&mut self, mut each: impl FnMut(u32, Entry)) -> Result<usize, InspectError> {
        let len = self
            .file
            .metadata()
            .map_err(|e| InspectError::io(&self.path, e))?
            .len();
        let complete = self.offset - self.partial.len() as u64;
        if len < self.offset && len >= complete {
            // A writer repaired a torn last line by cutting it off: forget it.
            self.partial.clear();
            self.offset = complete;
        }
        if len < self.offset {
            return Err(InspectError::Shrunk {
                path: self.path.clone(),
                was: self.offset,
                now: len,
            });
        }
        self.file
            .seek(SeekFrom::Start(self.offset))
            .map_err(|e| InspectError::io(&self.path, e))?;
        let mut count = 0;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = self
                .file
                .read(&mut buf)
                .map_err(|e| InspectError::io(&self.path, e))?;
            if n == 0 {
                return Ok(count);
            }
            self.offset += n as u64;
            self.partial.extend_from_slice(&buf[..n]);
            let mut start = 0;
            while let Some(nl) = self.partial[start..].iter().position(|&b| b == b'\n') {
                let end = start + nl;
                let entry = self.chain.verify_line(&self.partial[start..end])?;
                start = end + 1;
                count += 1;
                each(self.chain.lines(), entry);
            }
            self.partial.drain(..start);
        }
    }
}

/// The column heads of [`render_row`].
pub fn header(style: Style) -> String {
    style.paint(
        Paint::Dim,
        &format!(
            "{:<7} {:>6} {:>10} {:>4} {:<7} {:<18} detail",
            "seq", "entry", "time", "step", "lane", "kind"
        ),
    )
}

/// One row as a line of text (fixed columns, so that rows can stream).
pub fn render_row(row: &Row, style: Style) -> String {
    let lane = format!("{:<7}", row.lane.name());
    let lane = match row.lane {
        Lane::Model => style.paint(Paint::Blue, &lane),
        Lane::Tools => style.paint(Paint::Yellow, &lane),
        Lane::User => style.paint(Paint::Cyan, &lane),
        Lane::Machine => style.paint(Paint::Dim, &lane),
    };
    let step = row.step.map_or_else(|| "-".to_string(), |s| s.to_string());
    format!(
        "{:<7} {:>6} {:>10} {:>4} {lane} {:<18} {}",
        row.seq,
        format!("#{}", row.entry),
        fmt_rel(row.t_ms),
        step,
        row.kind,
        row.detail
    )
    .trim_end()
    .to_string()
}

/// Rows as text, with the column heads.
pub fn render(rows: &[Row], style: Style) -> String {
    let mut out = header(style);
    out.push('\n');
    for r in rows {
        out.push_str(&render_row(r, style));
        out.push('\n');
    }
    out
}

mod deep;

pub use deep::{DeepRow, deep_header, deep_timeline, render_deep_row};

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::testkit;

    #[test]
    fn a_steer_arriving_mid_stream_shows_between_the_deltas() {
        let (_dir, log) = testkit::steer_session();
        let rows = timeline(&log);
        expect_test::expect_file![
            "../tests/golden/a-steer-arriving-mid-stream-shows-between-the-deltas.txt"
        ]
        .assert_eq(&render(&rows, Style::plain()));
    }

    /// A prompt's detail keeps its emoji whole (the snapshot holds the zero-width
    /// joiners themselves, not `\u{200d}`).
    #[test]
    fn the_timeline_shows_the_emoji_of_a_prompt_whole() {
        let (_dir, log) = testkit::emoji_session();
        let prompt: Vec<Row> = timeline(&log)
            .into_iter()
            .filter(|r| r.kind == "user_message")
            .collect();
        expect_test::expect![[r#"
            seq      entry       time step lane    kind               detail
            2           #1      +10ms    - user    user_message       "third 日本語 X🎉👩‍👩‍👧 é"
        "#]]
        .assert_eq(&render(&prompt, Style::plain()));
    }

    #[test]
    fn filters_keep_what_they_name() {
        let (_dir, log) = testkit::steer_session();
        let rows = timeline(&log);
        let only = |f: Filter| -> Vec<String> {
            rows.iter()
                .filter(|r| f.keeps(r))
                .map(|r| format!("{} {}", r.seq, r.kind))
                .collect()
        };
        assert_eq!(
            only(Filter {
                types: vec!["tool_result".into(), "steer".into()],
                ..Filter::default()
            }),
            ["4 steer", "9 tool_result", "10 tool_result"]
        );
        assert_eq!(
            only(Filter {
                tool: Some("echo".into()),
                step: Some(1),
                types: vec!["tool_call_start".into(), "tool_dispatched".into()],
                ..Filter::default()
            }),
            [
                "5.2 tool_call_start",
                "5.5 tool_call_start",
                "6 tool_dispatched",
                "7 tool_dispatched"
            ]
        );
        let late = only(Filter {
            since: Some(150),
            until: Some(160),
            ..Filter::default()
        });
        assert_eq!(late, ["16 step", "17 run_finished"]);
    }

    #[test]
    fn streaming_the_file_gives_the_same_rows() {
        let (_dir, log) = testkit::steer_session();
        let mut rows = Vec::new();
        let torn = stream_file(&log.path, &Filter::default(), |r| rows.push(r.clone())).unwrap();
        assert_eq!(torn, None);
        assert_eq!(rows, timeline(&log));
    }

    #[test]
    fn the_follower_reads_what_is_appended_between_polls() {
        let (dir, log) = testkit::steer_session();
        let all = std::fs::read(&log.path).unwrap();
        let path = dir.path().join("live.jsonl");
        // The first 5 lines and half of the sixth are there at first.
        let cut = all
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(4)
            .unwrap()
            .0
            + 1;
        let half = cut + 30;
        std::fs::write(&path, &all[..half]).unwrap();
        let mut f = Follower::open(&path).unwrap();
        let mut t = Timeline::new();
        let mut seen = Vec::new();
        let poll = |f: &mut Follower, t: &mut Timeline, seen: &mut Vec<Row>| {
            let n = f.poll(|line, e| seen.extend(t.push(line, &e))).unwrap();
            seen.extend(t.flush());
            n
        };
        assert_eq!(poll(&mut f, &mut t, &mut seen), 5);
        assert_eq!(f.pending_bytes(), 30);
        assert_eq!(poll(&mut f, &mut t, &mut seen), 0, "nothing new");
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(&all[half..]).unwrap();
        assert_eq!(poll(&mut f, &mut t, &mut seen), log.entries.len() - 5);
        assert_eq!(f.pending_bytes(), 0);
        let mut seqs: Vec<&str> = seen.iter().map(|r| r.seq.as_str()).collect();
        let mut want: Vec<String> = timeline(&log).into_iter().map(|r| r.seq).collect();
        seqs.sort();
        want.sort();
        assert_eq!(seqs, want, "every row, live order aside");
        // An edited line appended later is refused with its line number.
        let bad = String::from_utf8(all[..cut].to_vec()).unwrap();
        let last = bad.lines().nth(1).unwrap().replace("list", "LIST");
        file.write_all(format!("{last}\n").as_bytes()).unwrap();
        let err = f.poll(|_, _| {}).unwrap_err().to_string();
        assert!(err.ends_with("entry id 1 appears a second time"), "{err}");
    }

    #[test]
    fn a_torn_tail_cut_off_by_a_writer_is_forgotten() {
        let (dir, log) = testkit::steer_session();
        let path = dir.path().join("live.jsonl");
        let mut bytes = std::fs::read(&log.path).unwrap();
        let complete = bytes.len();
        bytes.extend_from_slice(b"{\"v\":1,\"id\":1");
        std::fs::write(&path, &bytes).unwrap();
        let mut f = Follower::open(&path).unwrap();
        assert_eq!(f.poll(|_, _| {}).unwrap(), log.entries.len());
        assert_eq!(f.pending_bytes(), 13);
        std::fs::write(&path, &bytes[..complete]).unwrap();
        assert_eq!(f.poll(|_, _| {}).unwrap(), 0);
        assert_eq!(f.pending_bytes(), 0);
    }

    #[test]
    fn a_shrunk_file_is_an_error() {
        let (dir, log) = testkit::steer_session();
        let path = dir.path().join("live.jsonl");
        std::fs::copy(&log.path, &path).unwrap();
        let mut f = Follower::open(&path).unwrap();
        f.poll(|_, _| {}).unwrap();
        std::fs::write(&path, b"").unwrap();
        assert!(matches!(
            f.poll(|_, _| {}),
            Err(InspectError::Shrunk { .. })
        ));
    }
}
