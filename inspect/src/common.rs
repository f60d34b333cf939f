//! Small helpers the views share: text capping, relative times, JSON shown the
//! same way everywhere, and branch paths; the one-line descriptions of entries
//! (shared with replay) are `xcsh_log::describe`'s.

use std::collections::HashSet;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;
use xcsh_log::{Body, Dag, Entry, Record, SessionLog};
use xcsh_machine::{EntryId, StreamEvent};

use crate::error::InspectError;
use crate::source::{Shapes, Source};

pub use xcsh_log::describe::{
    args_compact, canonical, cut, entry_text, event_text, one_line, outcome_text, quoted,
    serde_name, stop_text,
};

/// At most `max_lines` lines and `max_chars` characters of `text`; when something
/// was cut, a last line says how long the whole was
/// (`… capped: 120 line(s), 5123 character(s) in all`).
pub fn cap(text: &str, max_lines: usize, max_chars: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    let mut cut_off = false;
    for (i, line) in text.lines().enumerate() {
        if i == max_lines {
            cut_off = true;
            break;
        }
        if i > 0 {
            out.push('\n');
        }
        let room = max_chars.saturating_sub(used);
        let n = line.chars().count();
        if n > room {
            out.extend(line.chars().take(room));
            cut_off = true;
            break;
        }
        out.push_str(line);
        used += n;
    }
    if cut_off {
        out.push_str(&format!(
            "\n… capped: {} line(s), {} character(s) in all",
            text.lines().count(),
            text.chars().count()
        ));
    }
    out
}

/// Milliseconds from `origin` to `ts` (negative if the clock went back).
pub fn rel_ms(origin: DateTime<Utc>, ts: DateTime<Utc>) -> i64 {
    (ts - origin).num_milliseconds()
}

/// `+1234ms`.
pub fn fmt_rel(ms: i64) -> String {
    if ms < 0 {
        format!("{ms}ms")
    } else {
        format!("+{ms}ms")
    }
}

/// Tool arguments pretty-printed with sorted keys; text that is not JSON as it is,
/// with a note.
pub fn args_pretty(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        // Pretty-printing a Value cannot fail.
        Ok(v) => serde_json::to_string_pretty(&canonical(&v)).unwrap_or_default(),
        Err(_) => format!("{arguments}\n(not valid JSON)"),
    }
}

/// An entry id on the command line: `N` or `#N`.
pub fn parse_entry_spec(text: &str) -> Result<EntryId, InspectError> {
    text.trim()
        .parse::<EntryId>()
        .map_err(|_| InspectError::Usage(format!("`{text}` is not an entry id (N or #N)")))
}

/// An entry as the user names it (SPEC.md §25): `N` or `#N`, else a label's name in
/// `log`: the target of the newest `label` of that name (file order), on any branch,
/// as git's moved tag would be. A name that is no label either:
/// [`InspectError::NoSuchLabel`].
pub fn resolve_entry(log: &SessionLog, text: &str) -> Result<EntryId, InspectError> {
    if is_number(text) {
        return parse_entry_spec(text);
    }
    let labels = log.entries.iter().filter_map(|e| match &e.body {
        Body::Record(Record::Label { target, name }) => Some((*target, name.as_str())),
        _ => None,
    });
    by_label(text, labels, &log.path)
}

/// [`resolve_entry`] in the session file at `path`, read (whole) only when `text` is
/// not a number.
pub fn resolve_entry_at(path: &Path, text: &str) -> Result<EntryId, InspectError> {
    if is_number(text) {
        return parse_entry_spec(text);
    }
    resolve_entry(&xcsh_log::read_session(path)?, text)
}

/// [`resolve_entry`] in `source`, whose shapes are read already: of a streamed file
/// only the `label` lines are read (up to the last one), and only when `text` is not
/// a number.
pub fn resolve_entry_in(
    source: &impl Source,
    shapes: &Shapes,
    text: &str,
) -> Result<EntryId, InspectError> {
    if is_number(text) {
        return parse_entry_spec(text);
    }
    let ids: HashSet<EntryId> = shapes.labels.iter().map(|&(id, _)| id).collect();
    let mut labels: Vec<(EntryId, String)> = Vec::new();
    if !ids.is_empty() {
        source.entries(
            shapes,
            crate::source::Visit {
                want: &|id| ids.contains(&id),
                keep: &|e| match &e.body {
                    Body::Record(Record::Label { target, name }) => Some((*target, name.clone())),
                    _ => None,
                },
                each: &mut |label| {
                    labels.extend(label);
                    true
                },
            },
        )?;
    }
    let labels = labels.iter().map(|(target, name)| (*target, name.as_str()));
    by_label(text, labels, &shapes.file)
}

/// A `SESSION@ENTRY` argument split into the session's name and the entry's text
/// (SPEC.md §25.7), `is_session` telling whether a text names a session: the part
/// after the last `@` is the entry when it is a number (`N`, `#N`), or a label's
/// name when the whole argument names no session but the part before the `@` does;
/// otherwise the whole argument is the session. Neither side a session: a usage
/// error naming the argument.
pub fn split_entry_spec(
    spec: &str,
    is_session: impl Fn(&str) -> bool,
) -> Result<(&str, Option<&str>), InspectError> {
    let Some((name, entry)) = spec.rsplit_once('@') else {
        return Ok((spec, None));
    };
    if is_number(entry) {
        Ok((name, Some(entry)))
    } else if is_session(spec) {
        Ok((spec, None))
    } else if is_session(name) {
        Ok((name, Some(entry)))
    } else {
        Err(InspectError::Usage(format!(
            "`{spec}`: `{entry}` is not an entry id (N or #N)"
        )))
    }
}

/// `N` or `#N` (digits only, however many: a number too large for an id is a bad
/// id, not a label's name).
fn is_number(text: &str) -> bool {
    let text = text.trim();
    let digits = text.strip_prefix('#').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// How many label names [`InspectError::NoSuchLabel`] lists.
const LABELS_LISTED: usize = 5;

/// The target of the newest of `labels` (`(target, name)` in file order) named
/// `text`; else the error, listing the newest distinct names.
fn by_label<'a>(
    text: &str,
    labels: impl Iterator<Item = (EntryId, &'a str)>,
    session: &Path,
) -> Result<EntryId, InspectError> {
    let labels: Vec<(EntryId, &str)> = labels.collect();
    if let Some((target, _)) = labels.iter().rev().find(|(_, name)| *name == text) {
        return Ok(*target);
    }
    let mut names: Vec<String> = Vec::new();
    for (_, name) in labels.iter().rev() {
        if !names.iter().any(|n| n == name) {
            names.push((*name).to_string());
        }
    }
    let more = names.len().saturating_sub(LABELS_LISTED);
    names.truncate(LABELS_LISTED);
    Err(InspectError::NoSuchLabel {
        path: session.to_path_buf(),
        name: text.to_string(),
        labels: names,
        more,
    })
}

/// The entry at position `pos` of an index, read from its line in the log (`None`
/// when the line cannot be read or decoded: the log changed under the index).
pub fn entry_at(
    file: &mut std::fs::File,
    index: &xcsh_log::index::ArchivedIndexData,
    pos: usize,
) -> Option<Entry> {
    use std::io::{Read, Seek, SeekFrom};
    let (start, end) = index.line_range(pos);
    let mut buf = vec![0u8; usize::try_from(end.checked_sub(start)?).ok()?];
    file.seek(SeekFrom::Start(start)).ok()?;
    file.read_exact(&mut buf).ok()?;
    Entry::decode(std::str::from_utf8(&buf).ok()?).ok()
}

/// The entries from the root to `leaf` (root first).
pub fn branch_path(log: &SessionLog, leaf: EntryId) -> Result<Vec<&Entry>, InspectError> {
    if log.get(leaf).is_none() {
        return Err(log.no_entry(leaf).into());
    }
    let ids = Dag::from_log(log).path_to_root(leaf)?;
    Ok(ids.into_iter().filter_map(|id| log.get(id)).collect())
}

/// A stream event's kind, as `xcsh events` shows it.
pub fn event_kind(event: &StreamEvent) -> &'static str {
    event.kind()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_keeps_short_text_and_says_what_it_cut() {
        assert_eq!(cap("a\nb", 5, 100), "a\nb");
        assert_eq!(
            cap("1\n2\n3\n4", 2, 100),
            "1\n2\n… capped: 4 line(s), 7 character(s) in all"
        );
        assert_eq!(
            cap("abcdefghij", 5, 4),
            "abcd\n… capped: 1 line(s), 10 character(s) in all"
        );
        assert_eq!(cap("", 5, 5), "");
    }

    #[test]
    fn arguments_pretty_print_with_sorted_keys() {
        assert_eq!(
            args_pretty(r#"{"b":1,"a":2}"#),
            "{\n  \"a\": 2,\n  \"b\": 1\n}"
        );
    }

    #[test]
    fn entry_specs_take_an_optional_hash() {
        assert_eq!(parse_entry_spec("#12").unwrap(), EntryId(12));
        assert_eq!(parse_entry_spec("7").unwrap(), EntryId(7));
        assert!(parse_entry_spec("x").is_err());
    }

    /// A branched session with labels written in this order: `mark` on 3, `other`
    /// on 5, `mark` again on 12 (another branch).
    fn labelled() -> (tempfile::TempDir, SessionLog) {
        let (dir, log) = crate::testkit::branched_session();
        for (target, name) in [(3, "mark"), (5, "other"), (12, "mark")] {
            crate::fork::label(&log.path, EntryId(target), name, crate::testkit::t0()).unwrap();
        }
        let log = xcsh_log::read_session(&log.path).unwrap();
        (dir, log)
    }

    #[test]
    fn an_entry_is_named_by_its_number_or_a_label() {
        let (_dir, log) = labelled();
        assert_eq!(resolve_entry(&log, "7").unwrap(), EntryId(7));
        assert_eq!(resolve_entry(&log, "#7").unwrap(), EntryId(7));
        assert_eq!(resolve_entry(&log, "other").unwrap(), EntryId(5));
        // Relabelled: the newest label of the name wins, on whichever branch.
        assert_eq!(resolve_entry(&log, "mark").unwrap(), EntryId(12));
        assert_eq!(resolve_entry_at(&log.path, "other").unwrap(), EntryId(5));
        // A number is never looked up among the labels, not even an absent one.
        assert_eq!(resolve_entry_at(&log.path, "#999").unwrap(), EntryId(999));
        assert_eq!(
            resolve_entry(&log, "99999999999999999999")
                .unwrap_err()
                .to_string(),
            "`99999999999999999999` is not an entry id (N or #N)"
        );
    }

    /// Of a streamed file only the labels are read, and a text names the entry (or
    /// fails) as in the log read whole.
    #[test]
    fn a_streamed_file_names_its_entries_as_the_log_read_whole_does() {
        let (_dir, log) = labelled();
        let streamed = crate::Streamed::new(&log.path);
        let shapes = streamed.shapes().unwrap();
        for text in [
            "7",
            "#7",
            "other",
            "mark",
            "after-fix",
            "99999999999999999999",
        ] {
            assert_eq!(
                resolve_entry_in(&streamed, &shapes, text).map_err(|e| e.to_string()),
                resolve_entry(&log, text).map_err(|e| e.to_string()),
                "{text}"
            );
        }
        let (_dir, plain) = crate::testkit::branched_session();
        let streamed = crate::Streamed::new(&plain.path);
        assert_eq!(
            resolve_entry_in(&streamed, &streamed.shapes().unwrap(), "mark")
                .unwrap_err()
                .to_string(),
            format!(
                "no entry or label \"mark\" in {}; it has no labels",
                plain.path.display()
            )
        );
    }

    #[test]
    fn a_session_at_entry_argument_splits_at_its_last_at() {
        let split =
            |spec| split_entry_spec(spec, |s| ["s", "a@b"].contains(&s)).map_err(|e| e.to_string());
        assert_eq!(
            [
                "s", "s@12", "s@#3", "s@mark", "a@b", "a@b@x", "x@4", "x@mark"
            ]
            .map(split),
            [
                Ok(("s", None)),
                Ok(("s", Some("12"))),
                Ok(("s", Some("#3"))),
                Ok(("s", Some("mark"))),
                Ok(("a@b", None)),
                Ok(("a@b", Some("x"))),
                // A number is the entry whether the part before names a session or
                // not (its caller says which session it does not find).
                Ok(("x", Some("4"))),
                Err("`x@mark`: `mark` is not an entry id (N or #N)".to_string()),
            ]
        );
    }

    #[test]
    fn an_unknown_name_lists_the_newest_label_names() {
        let (_dir, log) = labelled();
        let e = resolve_entry(&log, "after-fix").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "no entry or label \"after-fix\" in {}; its labels, newest first: \"mark\", \"other\"",
                log.path.display()
            )
        );
        let labels = (0..8).map(|i| {
            (
                EntryId(i),
                ["a", "b", "c", "d", "e", "f", "g", "a"][i as usize],
            )
        });
        let e = by_label("z", labels, Path::new("S.jsonl")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no entry or label \"z\" in S.jsonl; its labels, newest first: \"a\", \"g\", \"f\", \"e\", \"d\" (and 2 more)"
        );
        let e = by_label("z", std::iter::empty(), Path::new("S.jsonl")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no entry or label \"z\" in S.jsonl; it has no labels"
        );
    }
}
