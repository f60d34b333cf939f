//! `xcsh events --type T…` on a log without an index: the lines read and verified on
//! the parallel workers ([`read_lines_parallel`]), only the bodies of the types the
//! filter names decoded whole, and of the others only what the step tracking reads
//! ([`Track`]: a step number, a call's id and tool). The rows are those of the full
//! timeline: entry rows come in file order, and the tracking is the same.

use std::fs::File;
use std::path::Path;

use chrono::{DateTime, Utc};
use xcsh_log::parallel::{Line, Window, read_lines_parallel};
use xcsh_log::{DecodeError, Entry};
use xcsh_machine::EntryId;

use super::track::{Steps, Track, track, track_of};
use super::{Filter, Row};
use crate::common::{entry_text, rel_ms};
use crate::error::InspectError;

/// What a worker makes of a line: its tracking, and its row's own parts if the
/// filter names its type.
struct Scanned {
    track: Track<String>,
    /// The time of a line without a parent (the header: the timeline's origin).
    root_ts: Option<DateTime<Utc>>,
    /// Boxed: most lines have none, and every line's result is moved into its
    /// chunk's list.
    row: Option<Box<Own>>,
}

/// The parts of a row that the entry alone tells.
struct Own {
    id: EntryId,
    ts: DateTime<Utc>,
    kind: String,
    detail: String,
}

/// Streams the rows of the types `filter` names (every one an entry type) of the log
/// at `path` through `each`; the number of torn bytes at the end, if any.
pub(super) fn stream_scanned(
    path: &Path,
    filter: &Filter,
    each: &mut dyn FnMut(&Row),
) -> Result<Option<usize>, InspectError> {
    let file = File::open(path).map_err(|e| InspectError::io(path, e))?;
    let wanted = |name: &str| filter.types.iter().any(|t| t == name);
    let keep = |line: Line<'_>| -> Result<Scanned, DecodeError> {
        match line {
            Line::Entry(entry) => Ok(scanned(&entry, wanted(entry.type_name()))),
            Line::Envelope(env) if wanted(env.type_name) => Ok(scanned(&env.entry()?, true)),
            Line::Envelope(env) => Ok(Scanned {
                track: track_of(env)?,
                root_ts: env.parent.is_none().then_some(env.ts),
                row: None,
            }),
        }
    };
    let mut origin = None;
    let mut steps: Steps<String> = Steps::default();
    let read = read_lines_parallel(path, file, Window::default(), keep, |line, s| {
        let (step, lane, tool) = steps.classify(s.track);
        if origin.is_none() {
            origin = s.root_ts;
        }
        if let Some(own) = s.row {
            let origin = origin.unwrap_or(own.ts);
            let row = Row {
                seq: line.to_string(),
                line,
                entry: own.id,
                t_ms: rel_ms(origin, own.ts),
                step,
                lane,
                kind: own.kind,
                tool,
                detail: own.detail,
            };
            if filter.keeps(&row) {
                each(&row);
            }
        }
        true
    })?;
    Ok(read.torn.map(|t| t.len()))
}

fn scanned(entry: &Entry, wanted: bool) -> Scanned {
    Scanned {
        track: track(entry),
        root_ts: entry.parent.is_none().then_some(entry.ts),
        row: wanted.then(|| {
            Box::new(Own {
                id: entry.id,
                ts: entry.ts,
                kind: entry.type_name().to_string(),
                detail: entry_text(entry),
            })
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use xcsh_log::{Body, Record, read_session};
    use xcsh_machine::{CallId, Decision, StepNo, StreamEvent};

    use super::super::{Filter, Row, timeline};
    use super::stream_scanned;
    use crate::testkit;

    /// The rows the scan gives for `filter`.
    fn scan(path: &Path, filter: &Filter) -> Vec<Row> {
        let mut got = Vec::new();
        stream_scanned(path, filter, &mut |r| got.push(r.clone())).unwrap();
        got
    }

    /// The rows of the full timeline `filter` keeps.
    fn kept(all: &[Row], filter: &Filter) -> Vec<Row> {
        all.iter().filter(|r| filter.keeps(r)).cloned().collect()
    }

    /// `got == want`, or the first row where they differ.
    fn same(got: &[Row], want: &[Row], what: &str) {
        if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
            panic!(
                "{what}: {} rows, want {}; row {i}: {:?}, want {:?}",
                got.len(),
                want.len(),
                got.get(i),
                want.get(i)
            );
        }
    }

    fn types(names: &[&str]) -> Filter {
        Filter {
            types: names.iter().map(|s| s.to_string()).collect(),
            ..Filter::default()
        }
    }

    /// Every fixture session, two generated ones (a deep chain and a branch per
    /// run), and one with an answered approval and a late event.
    fn sessions() -> (Vec<tempfile::TempDir>, Vec<PathBuf>) {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions");
        let mut paths: Vec<PathBuf> = ["", "delegation"]
            .iter()
            .flat_map(|d| std::fs::read_dir(fixtures.join(d)).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        paths.sort();
        let mut dirs = Vec::new();
        for shape in [Default::default(), testkit::A_RUN_PER_BRANCH] {
            let (dir, path, _) = testkit::synth(6_000, 3, shape);
            dirs.push(dir);
            paths.push(path);
        }
        let mut k = testkit::branched();
        let leaf = k.leaf();
        let late = k.append_raw(
            leaf,
            Body::Record(Record::LateEvent {
                step: StepNo(2),
                event: StreamEvent::TextDelta { text: "x".into() },
            }),
        );
        k.append_raw(
            late,
            Body::Record(Record::ApprovalAnswer {
                call_id: CallId("call_1".into()),
                verdict: xcsh_machine::Verdict::Allow,
                scope: xcsh_machine::ApprovalScope::Once,
                message: None,
            }),
        );
        let (dir, log) = k.finish();
        dirs.push(dir);
        paths.push(log.path.clone());
        (dirs, paths)
    }

    #[test]
    fn the_scan_gives_the_full_timelines_rows_for_every_entry_type() {
        let (_dirs, paths) = sessions();
        let names: Vec<&str> = Record::TYPE_NAMES
            .into_iter()
            .chain(Decision::TYPE_NAMES)
            .collect();
        for path in &paths {
            let all = timeline(&read_session(path).unwrap());
            for name in &names {
                let filter = types(&[name]);
                let what = format!("{} --type {name}", path.display());
                same(&scan(path, &filter), &kept(&all, &filter), &what);
            }
            let filter = types(&["tool_result", "approval", "step"]);
            same(
                &scan(path, &filter),
                &kept(&all, &filter),
                &path.display().to_string(),
            );
        }
    }

    #[test]
    fn the_scan_keeps_the_step_and_tool_filters_of_the_full_timeline() {
        let (_dirs, paths) = sessions();
        let filter = Filter {
            step: Some(2),
            tool: Some("bash".into()),
            ..types(&["tool_result", "tool_dispatched"])
        };
        let mut shown = 0;
        for path in &paths {
            let got = scan(path, &filter);
            shown += got.len();
            let all = timeline(&read_session(path).unwrap());
            same(&got, &kept(&all, &filter), &path.display().to_string());
        }
        assert!(shown > 0, "the filter keeps some rows");
    }

    #[test]
    fn a_broken_hash_stops_the_scan_with_the_readers_error() {
        let (_dir, log) = testkit::steer_session();
        let text = std::fs::read_to_string(&log.path).unwrap();
        let broken = text.replacen("also check b", "also check c", 1);
        assert_ne!(broken, text);
        std::fs::write(&log.path, broken).unwrap();
        let err = stream_scanned(&log.path, &types(&["tool_result"]), &mut |_| {}).unwrap_err();
        let want = read_session(&log.path).unwrap_err();
        assert_eq!(err.to_string(), want.to_string());
    }
}
