//! `xcsh check`: integrity and ordering of a session file. Unlike the reader, which
//! stops at the first bad line, the checker scans every line leniently and collects
//! every violation, each named by the smallest set of entries (with their lines)
//! that witnesses it:
//!
//! - integrity: a malformed line, a header that is not a parentless `session`, a
//!   duplicate id, a missing parent, a child before its parent, a parent cycle, a hash
//!   that does not match its line and its parent's hash, a torn last line (warning),
//!   an entry type this version does not know (warning);
//! - ordering, on every branch (`order.rs`): every tool call settled exactly once
//!   and after its dispatch, nothing after a run's finish
//!   but a new prompt (or ignored inputs, labels, branch records), steers delivered
//!   only at boundaries and in arrival order, follow-ups only after a would-be
//!   finish, a compaction's first kept entry on its path.

mod order;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use xcsh_log::{Body, Entry, EntryHash, LogError, Record};
use xcsh_machine::EntryId;

use crate::error::InspectError;
use crate::style::{Paint, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    /// Reported, but the file is still a valid session (exit 0 if nothing else).
    Warning,
}

/// One violation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// A stable name: `hash_mismatch`, `settled_twice`, `delivered_mid_step`, …
    pub kind: &'static str,
    pub message: String,
    /// The witnesses, in the order the message names them.
    pub entries: Vec<EntryId>,
    /// Their lines (1-based), where they have one; a line without an entry (a
    /// malformed or torn line) is here alone.
    pub lines: Vec<u32>,
}

/// What the checker found in one file.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub path: PathBuf,
    pub lines: u32,
    pub entries: usize,
    pub branches: usize,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }

    pub fn warnings(&self) -> usize {
        self.findings.len() - self.errors()
    }
}

/// A decoded line of the file.
pub(crate) struct Scanned {
    pub entry: Entry,
}

/// Checks the file at `path`. A file the strict reader takes whole (nothing torn,
/// no unknown type) whose branches are in order is reported clean after one
/// streaming pass that never holds the file's bytes; anything else is checked again
/// by [`check_bytes`], which collects every finding.
pub fn check_file(path: &Path) -> Result<Report, InspectError> {
    let file = std::fs::File::open(path).map_err(|e| InspectError::io(path, e))?;
    let size = file.metadata().map_or(0, |m| m.len());
    if let Some(report) = clean(path, file, size) {
        return Ok(report);
    }
    let bytes = std::fs::read(path).map_err(|e| InspectError::io(path, e))?;
    Ok(check_exhaustively(path, &bytes))
}

/// Checks the bytes of a session file; `path` names it in the report.
pub fn check_bytes(path: &Path, bytes: &[u8]) -> Report {
    clean(path, bytes, bytes.len() as u64).unwrap_or_else(|| check_exhaustively(path, bytes))
}

/// The report of a file without findings, or `None` when it has one (or might).
/// Worker threads read, decode and verify the lines (as the strict reader does) and
/// drop the texts the ordering checks do not read; this one keeps the entries.
/// `size` (the source's length, if known) sizes the entries' vector.
fn clean(path: &Path, source: impl std::io::Read + Send, size: u64) -> Option<Report> {
    // Room for lines of 256 bytes and more, so that the entries are not moved
    // again and again as the vector grows (room never used is never touched).
    let mut entries = Vec::with_capacity(usize::try_from(size / 256).unwrap_or(0));
    let read =
        xcsh_log::parallel::read_parallel(path, source, Default::default(), thin, |_, entry| {
            entries.push(entry);
            true
        })
        .ok()?;
    if read.torn.is_some() || !read.unknown.is_empty() || entries.is_empty() {
        return None;
    }
    let branches = order::check_clean(&entries)?;
    Some(Report {
        path: path.to_path_buf(),
        lines: read.lines,
        entries: entries.len(),
        branches,
        findings: Vec::new(),
    })
}

/// The entry without the texts the ordering checks never read (messages, contents,
/// stream events, summaries), so that a clean check of a big file holds little.
fn thin(mut entry: Entry) -> Entry {
    use xcsh_machine::Decision;
    match &mut entry.body {
        Body::Record(r) => match r {
            Record::UserMessage { text, .. }
            | Record::Steer { text }
            | Record::FollowUp { text }
            | Record::Recovered { note: text } => *text = String::new(),
            Record::Step(s) => {
                s.events = Vec::new();
                s.message.text = String::new();
                s.message.reasoning = String::new();
                s.message.reasoning_signature = String::new();
                s.message.reasoning_blocks = Vec::new();
                for c in &mut s.message.tool_calls {
                    c.arguments = String::new();
                }
            }
            Record::ToolResult(t) => {
                t.outcome.content = String::new();
                t.changes = Vec::new();
            }
            Record::CompactionSummary { summary, .. } => *summary = None,
            _ => {}
        },
        Body::Decision(d) => match d {
            Decision::Delivered { text, .. } => *text = String::new(),
            Decision::SyntheticResult { content, call, .. } => {
                *content = String::new();
                call.arguments = String::new();
            }
            Decision::ToolDispatched { call, .. } => call.arguments = String::new(),
            Decision::Compacted { summary, .. } => *summary = String::new(),
            _ => {}
        },
        Body::Unknown { .. } => {}
    }
    entry
}

/// Checks every line leniently and collects every finding: the lines go through the
/// readers' verifier ([`xcsh_log::Chain`], read on after each error), so that an
/// integrity error has the reader's wording; then the order of parents and children
/// (a parent after its child, a cycle) and of each branch.
fn check_exhaustively(path: &Path, bytes: &[u8]) -> Report {
    let mut f = Findings::default();
    let mut scanned: Vec<Scanned> = Vec::new();
    let mut chain = xcsh_log::Chain::new(path);
    // First line of each id (also for lines that only half decode).
    let mut first_line: HashMap<EntryId, u32> = HashMap::new();
    // Lines whose parent was not (yet) there: (the error, the line's bytes).
    let mut parentless: Vec<(LogError, &[u8])> = Vec::new();
    let mut lines = 0u32;
    let mut rest = bytes;
    while !rest.is_empty() {
        let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
            f.push(
                Severity::Warning,
                "torn_tail",
                format!(
                    "the last line has no newline: {} byte(s) a crash left behind (the writer cuts them off, into a sidecar, when it next opens the file)",
                    rest.len()
                ),
                vec![],
                vec![lines + 1],
            );
            break;
        };
        let raw = &rest[..nl];
        rest = &rest[nl + 1..];
        lines += 1;
        let line = lines;
        match chain.verify_line_leniently(raw) {
            Ok((entry, error)) => {
                match error {
                    None => {}
                    Some(e @ LogError::DuplicateId { .. }) => {
                        let earlier = first_line.get(&entry.id).copied().unwrap_or(line);
                        f.error(&chain, &e, vec![entry.id], vec![earlier, line]);
                        continue;
                    }
                    Some(e @ LogError::MissingParent { .. }) => parentless.push((e, raw)),
                    Some(e) => f.error(&chain, &e, vec![entry.id], vec![line]),
                }
                if let Body::Unknown { type_name, .. } = &entry.body {
                    f.push(
                        Severity::Warning,
                        "unknown_type",
                        format!("type `{type_name}` is not known to this version (kept, not used)"),
                        vec![entry.id],
                        vec![line],
                    );
                }
                first_line.insert(entry.id, line);
                scanned.push(Scanned { entry });
            }
            Err(e @ LogError::NotJson { .. }) => {
                // Some other file: its lines are not entries gone bad.
                f.error(&chain, &e, vec![], vec![line]);
                break;
            }
            Err(e) => {
                f.error(&chain, &e, vec![], vec![line]);
                if let Some((id, hash)) = salvage(raw)
                    && chain.admit(id, hash)
                {
                    first_line.insert(id, line);
                }
            }
        }
    }
    if lines == 0 && bytes.is_empty() {
        // Nothing at all: said plainly (the reader's wording is about a first line,
        // and there is none).
        f.push(
            Severity::Error,
            "not_a_session",
            EMPTY.to_string(),
            vec![],
            vec![],
        );
    } else if lines == 0 {
        // No complete line: what the reader says of such a file.
        f.error(
            &chain,
            &LogError::NotASession {
                path: path.to_path_buf(),
            },
            vec![],
            vec![],
        );
    }
    for (e, raw) in parentless {
        later_parent(&chain, &first_line, e, raw, &mut f);
    }
    cycles(&scanned, &first_line, &mut f);
    let index: HashMap<EntryId, usize> = scanned
        .iter()
        .enumerate()
        .map(|(i, s)| (s.entry.id, i))
        .collect();
    let branches = order::check(&scanned, &index, &mut f);
    let mut findings = f.done(&first_line);
    findings.sort_by_key(|x| (x.lines.first().copied().unwrap_or(0), x.severity, x.kind));
    Report {
        path: path.to_path_buf(),
        lines,
        entries: scanned.len(),
        branches,
        findings,
    }
}

/// The finding of an empty file (`not_a_session`, located at the file).
const EMPTY: &str =
    "the file is empty (0 bytes): not a session log, which starts with its `session` header line";

/// The id and recorded hash of a line that does not decode as an entry, if its JSON
/// still says them.
fn salvage(raw: &[u8]) -> Option<(EntryId, EntryHash)> {
    let v: Value = serde_json::from_slice(raw).ok()?;
    let id = v.get("id")?.as_u64()?;
    let hash = EntryHash::from_hex(v.get("hash")?.as_str()?)?;
    Some((EntryId(id), hash))
}

/// A line whose parent did not appear before it (`missing`, a
/// [`LogError::MissingParent`]): a parent further down the file is a child before
/// its parent (and the line's hash is checked against it), else the parent is missing.
fn later_parent(
    chain: &xcsh_log::Chain,
    first_line: &HashMap<EntryId, u32>,
    missing: LogError,
    raw: &[u8],
    f: &mut Findings,
) {
    let LogError::MissingParent {
        path,
        line,
        id,
        parent,
    } = missing
    else {
        return;
    };
    let (Some(&pl), Some(parent_hash)) = (first_line.get(&parent), chain.hash_of(parent)) else {
        f.error(
            chain,
            &LogError::MissingParent {
                path,
                line,
                id,
                parent,
            },
            vec![id],
            vec![line],
        );
        return;
    };
    f.push(
        Severity::Error,
        "child_before_parent",
        format!("entry {id} comes before its parent {parent} (line {pl}): lines were moved"),
        vec![id, parent],
        vec![line, pl],
    );
    if !Entry::verify(raw, Some(&parent_hash)).unwrap_or(false) {
        f.error(
            chain,
            &LogError::HashMismatch { path, line, id },
            vec![id],
            vec![line],
        );
    }
}

/// Parent links that loop (only possible when a parent comes after its child).
fn cycles(scanned: &[Scanned], first_line: &HashMap<EntryId, u32>, f: &mut Findings) {
    let parent: HashMap<EntryId, EntryId> = scanned
        .iter()
        .filter_map(|s| s.entry.parent.map(|p| (s.entry.id, p)))
        .collect();
    let mut state: HashMap<EntryId, u8> = HashMap::new(); // 1 = on the walk, 2 = done
    for s in scanned {
        let mut walk = Vec::new();
        let mut cur = Some(s.entry.id);
        while let Some(id) = cur {
            match state.get(&id) {
                Some(2) => break,
                Some(_) => {
                    let from = walk.iter().position(|w| *w == id).unwrap_or(0);
                    let mut cycle: Vec<EntryId> = walk[from..].to_vec();
                    cycle.sort();
                    let lines = cycle
                        .iter()
                        .filter_map(|c| first_line.get(c).copied())
                        .collect();
                    let names: Vec<String> = cycle.iter().map(ToString::to_string).collect();
                    f.push(
                        Severity::Error,
                        "cycle",
                        format!(
                            "the parent links of entries {} form a cycle",
                            names.join(", ")
                        ),
                        cycle,
                        lines,
                    );
                    break;
                }
                None => {
                    state.insert(id, 1);
                    walk.push(id);
                    cur = parent.get(&id).copied();
                }
            }
        }
        for w in walk {
            state.insert(w, 2);
        }
    }
}

/// Findings as they are collected, deduplicated (branches share entries).
#[derive(Default)]
pub(crate) struct Findings {
    seen: BTreeSet<(&'static str, Vec<EntryId>, Vec<u32>)>,
    list: Vec<Finding>,
}

impl Findings {
    pub fn push(
        &mut self,
        severity: Severity,
        kind: &'static str,
        message: String,
        entries: Vec<EntryId>,
        lines: Vec<u32>,
    ) {
        if self.seen.insert((kind, entries.clone(), lines.clone())) {
            self.list.push(Finding {
                severity,
                kind,
                message,
                entries,
                lines,
            });
        }
    }

    /// An integrity error of the readers' verifier `chain`, in its wording (without
    /// the file and the last of `lines`, which the finding names).
    fn error(
        &mut self,
        chain: &xcsh_log::Chain,
        e: &LogError,
        entries: Vec<EntryId>,
        lines: Vec<u32>,
    ) {
        let kind = match e {
            LogError::Malformed { .. } => "malformed",
            LogError::HashMismatch { .. } => "hash_mismatch",
            LogError::MissingParent { .. } => "missing_parent",
            LogError::Orphan { .. } => "orphan",
            LogError::DuplicateId { .. } => "duplicate_id",
            LogError::NotASession { .. } | LogError::NotJson { .. } => "not_a_session",
            _ => "unreadable",
        };
        let message = chain.message(e, lines.last().copied().unwrap_or(0));
        self.push(Severity::Error, kind, message, entries, lines);
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// An ordering violation: the lines are looked up at the end.
    pub fn order(&mut self, kind: &'static str, message: String, entries: Vec<EntryId>) {
        self.push(Severity::Error, kind, message, entries, Vec::new());
    }

    fn done(self, first_line: &HashMap<EntryId, u32>) -> Vec<Finding> {
        self.list
            .into_iter()
            .map(|mut f| {
                if f.lines.is_empty() {
                    f.lines = f
                        .entries
                        .iter()
                        .filter_map(|e| first_line.get(e).copied())
                        .collect();
                }
                f
            })
            .collect()
    }
}

/// The report as text: one line per finding, then a summary line.
pub fn render(report: &Report, style: Style) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let sev = match f.severity {
            Severity::Error => style.paint(Paint::Red, "error  "),
            Severity::Warning => style.paint(Paint::Yellow, "warning"),
        };
        let lines: Vec<String> = f.lines.iter().map(ToString::to_string).collect();
        let at = match (f.entries.as_slice(), lines.len()) {
            // About the file as a whole (an empty file): the file is where.
            ([], 0) => report.path.display().to_string(),
            ([], 1) => format!("line {}", lines[0]),
            ([], _) => format!("lines {}", lines.join(", ")),
            ([one], 1) => format!("entry #{one} (line {})", lines[0]),
            ([one], _) => format!("entry #{one} (lines {})", lines.join(", ")),
            (many, _) => {
                let ids: Vec<String> = many.iter().map(|e| format!("#{e}")).collect();
                format!("entries {} (lines {})", ids.join(" "), lines.join(", "))
            }
        };
        out.push_str(&format!("{sev} {:<22} {at}: {}\n", f.kind, f.message));
    }
    let summary = if report.findings.is_empty() {
        style.paint(
            Paint::Green,
            &format!(
                "ok: {} entries on {} line(s), {} branch(es); hash chain and ordering verified",
                report.entries, report.lines, report.branches
            ),
        )
    } else {
        let text = format!(
            "{} error(s), {} warning(s) in {} line(s)",
            report.errors(),
            report.warnings(),
            report.lines
        );
        if report.errors() > 0 {
            style.paint(Paint::Red, &text)
        } else {
            style.paint(Paint::Yellow, &text)
        }
    };
    out.push_str(&format!("{}: {summary}\n", report.path.display()));
    out
}

#[cfg(test)]
mod tests;
