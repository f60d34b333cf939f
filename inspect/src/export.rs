//! `xcsh export`: a session to share. Markdown (the transcript of one branch), one
//! self-contained HTML page (inline CSS and JS, no network: the branch tree, the
//! conversation of the selected branch and the timeline, switchable between branches
//! by a click), or JSON (the whole DAG: every entry with its line and children).

use std::collections::{BTreeMap, HashMap};

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};
use xcsh_log::parallel::{Window, read_parallel};
use xcsh_log::{Body, Entry, Record, SessionLog};
use xcsh_machine::{Decision, EntryId, UserOrigin};

use crate::common::{args_pretty, one_line, resolve_entry_in, stop_text};
use crate::error::InspectError;
use crate::log::{Item, branch_items, item, origin_word};
use crate::source::{Source, Streamed};
use crate::style::Style;
use crate::tree::{self, Node, Tree};
use xcsh_log::plan::concerns_plan;

const CSS: &str = include_str!("../assets/export.css");
const JS: &str = include_str!("../assets/export.js");

/// A fence of backticks longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn block(text: &str, lang: &str) -> String {
    let f = fence(text);
    format!("{f}{lang}\n{text}\n{f}\n")
}

fn quote(text: &str) -> String {
    text.lines()
        .map(|l| format!("> {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The Markdown transcript of the branch ending at `leaf` (the recorded leaf when
/// `None`; `N`, `#N` or a label's name, [`crate::resolve_entry`]).
pub fn markdown(log: &SessionLog, leaf: Option<&str>) -> Result<String, InspectError> {
    markdown_level(log, leaf, 0)
}

/// [`markdown`] with its headings `level` deeper (a sub-agent's transcript under
/// its parent's, SPEC.md §29.6), of a log in memory or streamed from its file.
fn markdown_level(
    source: &impl Source,
    leaf: Option<&str>,
    level: usize,
) -> Result<String, InspectError> {
    let shapes = source.shapes()?;
    let leaf = match leaf {
        Some(text) => resolve_entry_in(source, &shapes, text)?,
        None => shapes.leaf(),
    };
    let path = shapes.path_to(leaf)?;
    let h = shapes.header();
    let id = xcsh_log::session_id(source.file(), &h.session_id);
    let title = "#".repeat((1 + level).min(6));
    let turn_heading = "#".repeat((2 + level).min(6));
    let mut out = format!("{title} xcsh session {id}\n\n");
    out.push_str(&format!("- workspace: `{}`\n", h.cwd));
    out.push_str(&format!(
        "- started: {}\n",
        shapes.first.ts.format("%Y-%m-%d %H:%M:%S UTC")
    ));
    out.push_str(&format!(
        "- branch: the one ending at entry {leaf} ({} branch(es) in the session)\n",
        shapes.branch_leaves().len()
    ));
    // The task plan (SPEC.md §27.4): at the leaf here, each update where it happened;
    // a pass over the branch that keeps only the entries of `plan` calls.
    let on_path: std::collections::HashSet<EntryId> = path.iter().copied().collect();
    let mut plan_entries = Vec::new();
    source.entries(
        &shapes,
        crate::source::Visit {
            want: &|id| on_path.contains(&id),
            keep: &|e| concerns_plan(e).then(|| e.clone()),
            each: &mut |e| {
                plan_entries.extend(e);
                true
            },
        },
    )?;
    drop(on_path);
    let updates = xcsh_log::plan::plan_history(&plan_entries);
    drop(plan_entries);
    if let Some(last) = updates.last() {
        out.push_str(&format!(
            "\n## Plan\n\nAt the leaf, from entry {} ({} of {} completed):\n\n{}",
            last.entry,
            last.plan.completed(),
            last.plan.items.len(),
            crate::plan::markdown_list(&last.plan)
        ));
    }
    let mut turn = 0;
    branch_items(source, &shapes, &path, &mut |it| {
        let s = match &it {
            Item::Session { forked_from, .. } => forked_from
                .as_ref()
                .map(|f| format!("- forked from {f}\n"))
                .unwrap_or_default(),
            Item::User(u) if u.origin == UserOrigin::Prompt => {
                turn += 1;
                format!(
                    "\n{turn_heading} Turn {turn}\n\n**User** (entry {}):\n\n{}\n",
                    u.entry,
                    quote(&u.text)
                )
            }
            Item::User(u) => format!(
                "\n**User, {}** (entry {}, arrived as entry {}):\n\n{}\n",
                origin_word(u.origin),
                u.entry,
                u.queued.map(|q| q.to_string()).unwrap_or_default(),
                quote(&u.text)
            ),
            Item::Queued { origin, text, .. } => format!(
                "\n_{} queued: {}_\n",
                origin_word(*origin),
                one_line(text, 100)
            ),
            Item::Assistant(a) => {
                let mut s = format!("\n**Assistant** (step {}, entry {}", a.step, a.entry);
                if let Some(outcome) = a.unless_completed() {
                    s.push_str(&format!(", {outcome}"));
                }
                s.push_str("):\n\n");
                if !a.reasoning.trim().is_empty() {
                    s.push_str(&format!(
                        "<details><summary>reasoning</summary>\n\n{}\n\n</details>\n\n",
                        a.reasoning
                    ));
                }
                if !a.text.is_empty() {
                    s.push_str(&a.text);
                    s.push('\n');
                }
                for c in &a.tool_calls {
                    s.push_str(&format!("\n→ `{}` ({})\n\n", c.name, c.id));
                    s.push_str(&block(&args_pretty(&c.arguments), "json"));
                }
                s
            }
            Item::ToolResult(r) if let Some(u) = updates.iter().find(|u| u.entry == r.entry) => {
                format!(
                    "\n**Plan updated** (`plan` {}, entry {}; {} of {} completed):\n\n{}",
                    r.call_id,
                    r.entry,
                    u.plan.completed(),
                    u.plan.items.len(),
                    crate::plan::markdown_list(&u.plan)
                )
            }
            Item::ToolResult(r) => format!(
                "\n← `{}` ({}, {})\n\n{}",
                r.name,
                r.call_id,
                r.how(", "),
                block(&r.content, "")
            ),
            Item::Compaction {
                summary,
                tokens_before,
                tokens_after,
                ..
            } => format!(
                "\n_Compacted: {tokens_before} → {tokens_after} tokens._\n\n{}\n",
                quote(summary)
            ),
            Item::RunFinished {
                reason,
                steps,
                tokens,
                ..
            } => format!(
                "\n_Run finished: {}, {steps} step(s), {tokens} tokens._\n",
                stop_text(reason)
            ),
            Item::Branch { from_leaf, .. } => {
                format!("\n_New branch here (the leaf was entry {from_leaf})._\n")
            }
            Item::Label { target, name, .. } => format!("\n_Label on entry {target}: {name}_\n"),
            other => {
                let text = crate::log::render(std::slice::from_ref(other), Style::plain());
                format!("\n_{}_\n", text.trim())
            }
        };
        out.push_str(&s);
        true
    })?;
    Ok(out)
}

mod family;

pub use family::markdown_family;

/// Chunks of the file in flight in each pass of the JSON export: the rendered text of
/// a chunk is about twice its lines, and the workers need no more read ahead than
/// this to stay busy.
const IN_FLIGHT: usize = 6;

/// Writes the whole DAG of the session file at `path` as JSON to `out` (`out_name`
/// names it in errors): the leaves and branch points, every entry (line, id, parent,
/// ts, type, data, hash, children) in file order, the file, the leaf and the header,
/// pretty-printed with sorted keys, then a newline. Two passes over the file, both
/// verified as the reader does: the first keeps the ids and parents (nothing is
/// written unless the whole file reads clean), the second renders the entries on
/// worker threads and writes them as they come, so that memory stays a fraction of
/// the file whatever its size.
pub fn write_json(path: &Path, out: &mut dyn Write, out_name: &Path) -> Result<(), InspectError> {
    let family = family::children_json(path)?;
    write_json_member(path, out, out_name, family)
}

/// [`write_json`] with `family` (the children's exports, SPEC.md §29.6) as the
/// `family` member when there is one.
fn write_json_member(
    path: &Path,
    out: &mut dyn Write,
    out_name: &Path,
    family: Option<Value>,
) -> Result<(), InspectError> {
    let family = family.filter(|f| f.as_array().is_some_and(|a| !a.is_empty()));
    let open = || std::fs::File::open(path).map_err(|e| InspectError::io(path, e));
    let shapes = Streamed::new(path).shapes_decoding_every_line()?;
    let n = shapes.len();
    // The children of each position (labels too), in file order: `kids[start[p]..start[p + 1]]`.
    let mut start = vec![0u32; n + 1];
    for i in 0..n {
        if let Some(p) = shapes.parent(i) {
            start[p + 1] += 1;
        }
    }
    for i in 1..=n {
        start[i] += start[i - 1];
    }
    let mut fill = start.clone();
    let mut kids = vec![EntryId(0); start[n] as usize];
    for i in 0..n {
        if let Some(p) = shapes.parent(i) {
            kids[fill[p] as usize] = shapes.id(i);
            fill[p] += 1;
        }
    }
    drop(fill);
    let children = |i: usize| &kids[start[i] as usize..start[i + 1] as usize];
    let branch_points: Vec<EntryId> = (0..n)
        .filter(|&i| children(i).len() > 1)
        .map(|i| shapes.id(i))
        .collect();
    let branches = shapes.branch_leaves();
    let leaf = shapes.leaf();
    let werr = |e: std::io::Error| InspectError::io(out_name, e);
    let mut head = String::from("{\n");
    field(&mut head, "branch_points", &json!(branch_points), ",\n");
    field(&mut head, "branches", &json!(branches), ",\n");
    head.push_str("  \"entries\": [");
    out.write_all(head.as_bytes()).map_err(werr)?;
    let mut written = 0usize;
    let mut failed = None;
    read_parallel(
        path,
        open()?,
        Window::in_flight(IN_FLIGHT),
        |e| {
            let (bytes, _) = Entry::encode(e.id, e.parent, None, e.ts, &e.body);
            let mut v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let at = shapes.position(e.id);
            if let Value::Object(m) = &mut v {
                m.insert("hash".into(), Value::String(e.hash.to_hex()));
                // Every line of a verified log is an entry: the line is the position + 1.
                m.insert("line".into(), json!(at.map(|i| i + 1)));
                m.insert("children".into(), json!(at.map_or(&[][..], children)));
            }
            indented(&v, "    ")
        },
        |_, text| {
            let sep = if written == 0 { "\n    " } else { ",\n    " };
            if let Err(e) = out
                .write_all(sep.as_bytes())
                .and_then(|()| out.write_all(text.as_bytes()))
            {
                failed = Some(e);
                return false;
            }
            written += 1;
            // Lines appended since the first pass are not part of this export.
            written < n
        },
    )?;
    if let Some(e) = failed {
        return Err(werr(e));
    }
    let mut tail = String::from(if written == 0 { "],\n" } else { "\n  ],\n" });
    if let Some(f) = &family {
        field(&mut tail, "family", f, ",\n");
    }
    field(&mut tail, "file", &json!(path.display().to_string()), ",\n");
    field(&mut tail, "leaf", &json!(leaf), ",\n");
    let session = serde_json::to_value(shapes.header()).unwrap_or(Value::Null);
    field(&mut tail, "session", &session, "\n}\n");
    out.write_all(tail.as_bytes()).map_err(werr)
}

/// `"name": VALUE` as a member of the export's top-level object, then `end`.
fn field(out: &mut String, name: &str, value: &Value, end: &str) {
    out.push_str("  ");
    out.push_str(&json!(name).to_string());
    out.push_str(": ");
    out.push_str(&indented(value, "  "));
    out.push_str(end);
}

/// `value` pretty-printed (as `serde_json::to_string_pretty`) with every line after
/// the first indented by `indent`, to sit inside an enclosing pretty-printed value
/// (a JSON string holds no raw newline, so every newline is between lines).
fn indented(value: &Value, indent: &str) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.replace('\n', &format!("\n{indent}"))
}

#[derive(Serialize)]
struct BranchView {
    leaf: EntryId,
    title: String,
}

/// What the page's script renders. A branch is its leaf: its path is found by
/// following `parents` up from it, so the page grows with the entries, not with
/// branches × their depth.
#[derive(Serialize)]
struct Page<'a> {
    session_id: String,
    leaf: EntryId,
    tree: Tree,
    tree_lines: BTreeMap<u64, String>,
    branches: Vec<BranchView>,
    /// The parent of every entry but the root.
    parents: Parents<'a>,
    items: Items<'a>,
    labels: Labels<'a>,
    timeline: Rows<'a>,
    /// The task plan each valid `plan` update set, by its `tool_result` entry.
    plans: BTreeMap<u64, xcsh_log::plan::Plan>,
}

fn lines(nodes: &[Node], full: bool, out: &mut BTreeMap<u64, String>) {
    for n in nodes {
        out.insert(n.first.0, tree::node_line(n, Style::plain(), full));
        for b in &n.branches {
            lines(b, full, out);
        }
    }
}

/// The title of each branch, by its leaf: its last user message (on its path) and its
/// leaf. The last message on the way to each entry is found in one pass in file
/// order, parents coming before their children.
fn titles(log: &SessionLog, leaves: &[EntryId]) -> Vec<String> {
    let mut last: HashMap<EntryId, Option<&str>> = HashMap::with_capacity(log.entries.len());
    for e in &log.entries {
        let own = match &e.body {
            Body::Record(Record::UserMessage { text, .. }) => Some(text.as_str()),
            Body::Decision(Decision::Delivered { text, .. }) => Some(text.as_str()),
            _ => None,
        };
        let inherited = e.parent.and_then(|p| last.get(&p).copied().flatten());
        last.insert(e.id, own.or(inherited));
    }
    leaves
        .iter()
        .map(|leaf| {
            let text = last.get(leaf).copied().flatten();
            format!("#{leaf}: {}", one_line(text.unwrap_or("(no message)"), 60))
        })
        .collect()
}

/// The HTML page.
pub fn html(log: &SessionLog) -> Result<String, InspectError> {
    let mut out = Vec::new();
    write_html(log, &mut out, Path::new("the page"))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Writes the HTML page to `out` (`out_name` names it in errors), the data
/// serialized straight into it (never held as one string).
pub fn write_html(
    log: &SessionLog,
    out: &mut dyn Write,
    out_name: &Path,
) -> Result<(), InspectError> {
    let tree = tree::build(log, false);
    let mut tree_lines = BTreeMap::new();
    lines(&tree.root, false, &mut tree_lines);
    let leaves = log.shapes()?.branch_leaves();
    let branches = leaves
        .iter()
        .zip(titles(log, &leaves))
        .map(|(&leaf, title)| BranchView { leaf, title })
        .collect();
    let mut labels: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for (i, e) in log.entries.iter().enumerate() {
        if let Body::Record(Record::Label { target, .. }) = &e.body {
            labels.entry(target.0).or_default().push(i as u32);
        }
    }
    // The entries by id (the order of the page's maps), made into items and rows
    // only as they are serialized.
    let mut by_id: Vec<u32> = (0..log.entries.len() as u32).collect();
    by_id.sort_unstable_by_key(|&i| log.entries[i as usize].id);
    let h = log.header();
    let session_id = xcsh_log::session_id(&log.path, &h.session_id).to_string();
    let page = Page {
        leaf: log.leaf(),
        tree,
        tree_lines,
        branches,
        parents: Parents { log, by_id: &by_id },
        items: Items {
            log,
            by_id: &by_id,
            session_id: &session_id,
        },
        labels: Labels {
            log,
            by_target: labels,
        },
        timeline: Rows(log),
        plans: crate::plan::updates_by_entry(log),
        session_id: session_id.clone(),
    };
    let n_branches = page.branches.len();
    let title = escape(&format!("xcsh session {}", page.session_id));
    let meta = escape(&format!(
        "{} · {} entries · {} branch(es) · {}",
        h.cwd,
        log.entries.len(),
        n_branches,
        log.entries
            .first()
            .map(|e| e.ts.format("%Y-%m-%d %H:%M UTC").to_string())
            .unwrap_or_default()
    ));
    // The sub-agents' transcripts (SPEC.md §29.6), as text.
    let family = match family::children_text(&log.path)? {
        text if text.is_empty() => String::new(),
        text => format!(
            "<section class=\"family\">\n<h2>Sub-agents</h2>\n<pre>{}</pre>\n</section>\n",
            escape(&text)
        ),
    };
    let head = format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
{CSS}</style>
</head>
<body>
<header><h1>{title}</h1><div class="meta">{meta}</div></header>
<main>
<nav>
<h2>Branches</h2>
<div id="branches"></div>
<h2>Tree</h2>
<div id="tree"></div>
</nav>
<section>
<h2>Conversation · <span id="branch-title"></span></h2>
<div id="conversation"></div>
<details open>
<summary>Timeline</summary>
<label><input type="checkbox" id="only-branch"> only the selected branch</label>
<table><thead><tr><th>seq</th><th>entry</th><th>time</th><th>step</th><th>lane</th><th>kind</th><th>detail</th></tr></thead>
<tbody id="timeline-rows"></tbody></table>
</details>
</section>
</main>
{family}<script type="application/json" id="xcsh-data">"#
    );
    let tail = format!(
        r#"</script>
<script>
{JS}</script>
</body>
</html>
"#
    );
    let werr = |e: std::io::Error| InspectError::io(out_name, e);
    out.write_all(head.as_bytes()).map_err(werr)?;
    serde_json::to_writer(ScriptSafe(&mut *out), &page).map_err(|e| {
        if e.is_io() {
            werr(e.into())
        } else {
            InspectError::Usage(format!("cannot serialize the page: {e}"))
        }
    })?;
    out.write_all(tail.as_bytes()).map_err(werr)
}

/// The page's `parents`: every entry's parent but the root's, by the entry's id.
struct Parents<'a> {
    log: &'a SessionLog,
    by_id: &'a [u32],
}

impl Serialize for Parents<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let entries = &self.log.entries;
        s.collect_map(self.by_id.iter().filter_map(|&i| {
            let e = &entries[i as usize];
            e.parent.map(|p| (e.id.0, p.0))
        }))
    }
}

/// The page's `items`: every entry's item (the labels' go beside their target), by
/// the entry's id, each made as it is written; the first names the session as the
/// page does.
struct Items<'a> {
    log: &'a SessionLog,
    by_id: &'a [u32],
    session_id: &'a str,
}

impl Serialize for Items<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let entries = &self.log.entries;
        s.collect_map(self.by_id.iter().filter_map(|&i| {
            let e = &entries[i as usize];
            if matches!(e.body, Body::Record(Record::Label { .. })) {
                return None;
            }
            let mut it = item(e)?;
            if let (0, Item::Session { session_id, .. }) = (i, &mut it) {
                *session_id = self.session_id.to_string();
            }
            Some((e.id.0, it))
        }))
    }
}

/// The page's `labels`: the items of the labels, by their target's id, each made as
/// it is written.
struct Labels<'a> {
    log: &'a SessionLog,
    by_target: BTreeMap<u64, Vec<u32>>,
}

impl Serialize for Labels<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            self.by_target
                .iter()
                .map(|(target, at)| (target, LabelItems(&self.log.entries, at))),
        )
    }
}

/// The items of some labels (their positions in the file).
struct LabelItems<'a>(&'a [Entry], &'a [u32]);

impl Serialize for LabelItems<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.1.iter().filter_map(|&i| item(&self.0[i as usize])))
    }
}

/// The page's `timeline`, each row written as the timeline makes it.
struct Rows<'a>(&'a SessionLog);

impl Serialize for Rows<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        let mut failed = None;
        crate::events::each_row(self.0, |row| {
            if failed.is_none()
                && let Err(e) = seq.serialize_element(&row)
            {
                failed = Some(e);
            }
        });
        match failed {
            Some(e) => Err(e),
            None => seq.end(),
        }
    }
}

/// JSON written inside `<script>`: `<` must not start `</script>` or `<!--`, so it
/// (and `>`, `&`) is written as a JSON `\u` escape. These characters only ever occur
/// inside JSON strings, where the escape means the same character.
struct ScriptSafe<'a>(&'a mut dyn Write);

impl Write for ScriptSafe<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        let mut rest = buf;
        while let Some(i) = memchr::memchr3(b'<', b'>', b'&', rest) {
            self.0.write_all(&rest[..i])?;
            self.0.write_all(match rest[i] {
                b'<' => b"\\u003c",
                b'>' => b"\\u003e",
                _ => b"\\u0026",
            })?;
            rest = &rest[i + 1..];
        }
        self.0.write_all(rest)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Text for HTML element content and attribute values.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;

    #[test]
    fn markdown_of_a_steered_run() {
        let (_dir, log) = testkit::steer_session();
        expect_test::expect![[r##"
            # xcsh session fixture

            - workspace: `/workspace`
            - started: 2026-01-01 00:00:00 UTC
            - branch: the one ending at entry 16 (1 branch(es) in the session)

            ## Turn 1

            **User** (entry 1):

            > list the files and say hello

            _steer queued: also check b_

            **Assistant** (step 1, entry 4):

            looking

            → `echo` (call_1_1)

            ```json
            {
              "a": 1
            }
            ```

            → `echo` (call_1_2)

            ```json
            {
              "b": 2
            }
            ```

            _follow-up queued: then summarize_

            ← `echo` (call_1_1, ok, 30 ms)

            ```
            {"a":1}
            ```

            ← `echo` (call_1_2, ok, 30 ms)

            ```
            {"b":2}
            ```

            **User, steer** (entry 10, arrived as entry 3):

            > also check b

            **Assistant** (step 2, entry 12):

            done with both

            **User, follow-up** (entry 13, arrived as entry 7):

            > then summarize

            **Assistant** (step 3, entry 15):

            summary: all good

            _Run finished: completed, 3 step(s), 730 tokens._
        "##]]
        .assert_eq(&markdown(&log, None).unwrap());
    }

    /// An export holds everything: a tool result of 20 lines whole, where the text of
    /// `xcsh log` shows its first 12.
    #[test]
    fn markdown_holds_a_long_tool_result_whole() {
        let mut k = testkit::Kit::new("long");
        k.prompt("count to twenty");
        k.step(1, "counting", &[("bash", r#"{"command":"seq 20"}"#)]);
        let content: Vec<String> = (1..=20).map(|i| format!("line {i}")).collect();
        k.settle(
            "call_1_1",
            "bash",
            xcsh_machine::ToolStatus::Ok,
            &content.join("\n"),
        );
        k.step(2, "done", &[]);
        let (_dir, log) = k.finish();
        let md = markdown(&log, None).unwrap();
        let items = crate::log::conversation(&log, None).unwrap();
        let text = crate::log::render(&items, crate::style::Style::plain());
        assert_eq!(
            (
                md.contains("line 12\nline 13"),
                md.contains("line 20\n"),
                text.contains("line 12"),
                text.contains("line 13")
            ),
            (true, true, true, false)
        );
    }

    /// An export holds everything: a step's reasoning whole, in its `<details>`.
    #[test]
    fn markdown_holds_the_whole_reasoning() {
        let (_dir, log) = testkit::reasoning_session();
        expect_test::expect![[r#"
            # xcsh session fixture

            - workspace: `/workspace`
            - started: 2026-01-01 00:00:00 UTC
            - branch: the one ending at entry 4 (1 branch(es) in the session)

            ## Turn 1

            **User** (entry 1):

            > print the date as ISO 8601

            **Assistant** (step 1, entry 3):

            <details><summary>reasoning</summary>

            The user wants the date printed in ISO 8601.
            First read src/main.rs to see how it prints the date now,
            then change the format string to %Y-%m-%d and run the tests.

            </details>

            Done: the date prints as 2026-01-01.

            _Run finished: completed, 1 step(s), 110 tokens._
        "#]]
        .assert_eq(&markdown(&log, None).unwrap());
    }

    /// Streamed from the file (as `xcsh export --format md` reads it), the transcript
    /// is the one of the log in memory, on every branch, a label's name naming its
    /// entry; a missing leaf or label is the same error.
    #[test]
    fn the_streamed_markdown_is_the_one_in_memory() {
        for (_dir, log) in [
            testkit::steer_session(),
            testkit::branched_session(),
            testkit::compaction_session(),
        ] {
            for leaf in [None, Some("12"), Some("#3"), Some("start"), Some("999")] {
                assert_eq!(
                    markdown_family(&log.path, leaf).map_err(|e| e.to_string()),
                    markdown(&log, leaf).map_err(|e| e.to_string())
                );
            }
        }
        let (_dir, log) = testkit::compaction_session();
        assert_eq!(
            markdown_family(&log.path, Some("start")).unwrap(),
            markdown(&log, Some("#1")).unwrap()
        );
    }

    /// The same over every recorded fixture (plans, compactions, forks, memory).
    #[test]
    fn the_streamed_markdown_of_every_fixture_is_the_one_in_memory() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions");
        for f in std::fs::read_dir(dir).unwrap() {
            let path = f.unwrap().path();
            if path.extension().is_none_or(|x| x != "jsonl") {
                continue;
            }
            let log = xcsh_log::read_session(&path).unwrap();
            assert_eq!(
                markdown_level(&crate::Streamed::new(&path), None, 0).unwrap(),
                markdown(&log, None).unwrap(),
                "{}",
                path.display()
            );
        }
    }

    /// The whole DAG as one `Value`, as the export was built before it streamed:
    /// the reference the streamed export is compared with.
    fn reference_json(log: &SessionLog) -> Value {
        let dag = xcsh_log::Dag::from_log(log);
        let entries: Vec<Value> = log
            .entries
            .iter()
            .zip(&log.lines)
            .map(|(e, line)| {
                let (bytes, _) = Entry::encode(e.id, e.parent, None, e.ts, &e.body);
                let mut v: Value = serde_json::from_slice(&bytes).unwrap();
                if let Value::Object(m) = &mut v {
                    m.insert("hash".into(), Value::String(e.hash.to_hex()));
                    m.insert("line".into(), json!(line));
                    m.insert("children".into(), json!(dag.children(e.id)));
                }
                v
            })
            .collect();
        json!({
            "session": log.header(),
            "file": log.path.display().to_string(),
            "leaf": log.leaf(),
            "branches": log.shapes().unwrap().branch_leaves(),
            "branch_points": dag.branch_points(),
            "entries": entries,
        })
    }

    fn streamed_json(log: &SessionLog) -> String {
        let mut out = Vec::new();
        write_json(&log.path, &mut out, Path::new("out")).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn json_holds_the_whole_dag() {
        let (_dir, log) = testkit::branched_session();
        let v: Value = serde_json::from_str(&streamed_json(&log)).unwrap();
        assert_eq!(v["entries"].as_array().unwrap().len(), log.entries.len());
        assert_eq!(v["branches"], json!([12, 17]));
        assert_eq!(v["branch_points"], json!([8]));
        assert_eq!(v["entries"][8]["children"], json!([9, 13]));
        assert_eq!(v["entries"][13]["type"], "branch");
        assert_eq!(v["entries"][3]["hash"], log.entries[3].hash.to_hex());
    }

    /// Streamed entry by entry, the export has the bytes the whole document had,
    /// on sessions with branches, labels, compactions and every fixture.
    #[test]
    fn the_streamed_json_is_the_whole_document_byte_for_byte() {
        let shape = xcsh_journal::synth::SynthShape {
            branch_per_mille: 300,
            max_rounds: 3,
            label_chain: 20,
        };
        let (dir, synth, _) = testkit::synth(2_000, 9, shape);
        let mut logs = vec![
            testkit::branched_session(),
            testkit::compaction_session(),
            testkit::steer_session(),
        ];
        logs.push((dir, xcsh_log::read_session(&synth).unwrap()));
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions");
        let mut paths: Vec<_> = std::fs::read_dir(fixtures)
            .unwrap()
            .map(|e| e.unwrap().path())
            // (A family's folder, `delegation/`, holds sessions of its own.)
            .filter(|p| !p.is_dir())
            .collect();
        paths.sort();
        for (_, log) in &logs {
            paths.push(log.path.clone());
        }
        for path in paths {
            let log = xcsh_log::read_session(&path).unwrap();
            let want = format!(
                "{}\n",
                serde_json::to_string_pretty(&reference_json(&log)).unwrap()
            );
            assert!(streamed_json(&log) == want, "{}", path.display());
        }
    }

    #[test]
    fn html_is_self_contained_and_carries_both_branches() {
        let (_dir, log) = testkit::branched_session();
        let page = html(&log).unwrap();
        for needle in ["http://", "https://", "src=", "href="] {
            assert!(!page.contains(needle), "no network: {needle}");
        }
        assert!(page.contains("\"branches\":[{\"leaf\":12,"), "{page}");
        assert!(page.contains("second task") && page.contains("instead, another task"));
        assert_eq!(page.matches("</script>").count(), 2);
    }

    /// A run per branch, each continuing from one of the last few boundaries: the
    /// page of 4× the entries (and 4× the branches, each on a path 4× longer) is 4×
    /// the size, as the log is, not 16× in its branch list.
    #[test]
    fn the_html_page_grows_as_the_log_grows() {
        let dir = tempfile::tempdir().unwrap();
        let sizes: Vec<(f64, f64)> = [2_000, 8_000]
            .into_iter()
            .map(|entries| {
                let path = dir.path().join(format!("b{entries}.jsonl"));
                let opts = xcsh_journal::synth::SynthOptions { entries, seed: 5 };
                xcsh_journal::synth::generate_shaped(&path, opts, testkit::A_RUN_PER_BRANCH)
                    .unwrap();
                let log = xcsh_log::read_session(&path).unwrap();
                let page = html(&log).unwrap();
                (
                    std::fs::metadata(&path).unwrap().len() as f64,
                    page.len() as f64,
                )
            })
            .collect();
        let (log_growth, page_growth) = (sizes[1].0 / sizes[0].0, sizes[1].1 / sizes[0].1);
        assert!(
            page_growth < 1.1 * log_growth,
            "the log grew {log_growth:.2}×, the page {page_growth:.2}×"
        );
    }

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        assert_eq!(block("a ``` b", ""), "````\na ``` b\n````\n");
    }
}
