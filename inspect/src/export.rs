//! `xcsh export`: a session to share. Markdown (the transcript of one branch), one
//! self-contained HTML page (inline CSS and JS, no network: the branch tree, the
//! conversation of the selected branch and the timeline, switchable between branches
//! by a click), or JSON (the whole DAG: every entry with its line and children).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Value, json};
use xcsh_core::log::{Body, Dag, Entry, Record, SessionLog};
use xcsh_core::machine::{Decision, EntryId};

use crate::common::{args_pretty, branch_path, cap, one_line};
use crate::error::InspectError;
use crate::events::{Row, timeline};
use crate::log::{Item, conversation, item};
use crate::style::Style;
use crate::tree::{self, Node, Tree};

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
/// `None`).
pub fn markdown(log: &SessionLog, leaf: Option<EntryId>) -> Result<String, InspectError> {
    let leaf = leaf.unwrap_or_else(|| log.leaf());
    let h = log.header();
    let mut out = format!("# xcsh session {}\n\n", h.session_id);
    out.push_str(&format!("- workspace: `{}`\n", h.cwd));
    if let Some(first) = log.entries.first() {
        out.push_str(&format!(
            "- started: {}\n",
            first.ts.format("%Y-%m-%d %H:%M:%S UTC")
        ));
    }
    let leaves = branch_leaves(log);
    out.push_str(&format!(
        "- branch: the one ending at entry {leaf} ({} branch(es) in the session)\n",
        leaves.len()
    ));
    let mut turn = 0;
    for it in conversation(log, Some(leaf))? {
        let s = match &it {
            Item::Session { forked_from, .. } => forked_from
                .as_ref()
                .map(|f| format!("- forked from {f}\n"))
                .unwrap_or_default(),
            Item::User {
                entry,
                origin,
                text,
                queued,
            } => {
                if *origin == "prompt" {
                    turn += 1;
                    format!(
                        "\n## Turn {turn}\n\n**User** (entry {entry}):\n\n{}\n",
                        quote(text)
                    )
                } else {
                    format!(
                        "\n**User, {}** (entry {entry}, arrived as entry {}):\n\n{}\n",
                        origin.replace('_', "-"),
                        queued.map(|q| q.to_string()).unwrap_or_default(),
                        quote(text)
                    )
                }
            }
            Item::Queued { origin, text, .. } => format!(
                "\n_{} queued: {}_\n",
                origin.replace('_', "-"),
                one_line(text, 100)
            ),
            Item::Assistant {
                entry,
                step,
                text,
                reasoning,
                tool_calls,
                outcome,
                ..
            } => {
                let mut s = format!("\n**Assistant** (step {step}, entry {entry}");
                if outcome != "completed" {
                    s.push_str(&format!(", {outcome}"));
                }
                s.push_str("):\n\n");
                if !reasoning.is_empty() {
                    s.push_str(&format!(
                        "<details><summary>reasoning</summary>\n\n{reasoning}\n\n</details>\n\n"
                    ));
                }
                if !text.is_empty() {
                    s.push_str(text);
                    s.push('\n');
                }
                for c in tool_calls {
                    s.push_str(&format!("\n→ `{}` ({})\n\n", c.name, c.id));
                    s.push_str(&block(&args_pretty(&c.arguments), "json"));
                }
                s
            }
            Item::ToolResult {
                name,
                call_id,
                status,
                content,
                duration_ms,
                synthetic,
                ..
            } => {
                let how = match synthetic {
                    Some(r) => format!("not run: {r}"),
                    None => format!("{status}, {duration_ms} ms"),
                };
                format!("\n← `{name}` ({call_id}, {how})\n\n{}", block(content, ""))
            }
            Item::Compaction {
                summary,
                tokens_before,
                tokens_after,
                ..
            } => format!(
                "\n_Compacted: {tokens_before} → {tokens_after} tokens._\n\n{}\n",
                quote(&cap(summary, 40, 4000))
            ),
            Item::RunFinished {
                reason,
                steps,
                tokens,
                ..
            } => format!("\n_Run finished: {reason}, {steps} step(s), {tokens} tokens._\n"),
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
    }
    Ok(out)
}

/// Leaves of branches: entries that are not labels and have no children other
/// than labels, in file order.
fn branch_leaves(log: &SessionLog) -> Vec<EntryId> {
    let is_label = |e: &Entry| matches!(e.body, Body::Record(Record::Label { .. }));
    let mut has_child: BTreeSet<EntryId> = BTreeSet::new();
    for e in &log.entries {
        if let Some(p) = e.parent
            && !is_label(e)
        {
            has_child.insert(p);
        }
    }
    log.entries
        .iter()
        .filter(|e| !is_label(e) && !has_child.contains(&e.id))
        .map(|e| e.id)
        .collect()
}

/// The whole DAG as JSON: the header, the leaves and branch points, and every entry
/// (line, id, parent, ts, type, data, hash, children) in file order.
pub fn json(log: &SessionLog) -> Value {
    let dag = Dag::from_log(log);
    let entries: Vec<Value> = log
        .entries
        .iter()
        .zip(&log.lines)
        .map(|(e, line)| {
            let (bytes, _) = Entry::encode(e.id, e.parent, None, e.ts, &e.body);
            let mut v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
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
        "branches": branch_leaves(log),
        "branch_points": dag.branch_points(),
        "entries": entries,
    })
}

#[derive(Serialize)]
struct BranchView {
    leaf: EntryId,
    path: Vec<EntryId>,
    title: String,
}

#[derive(Serialize)]
struct Page {
    session_id: String,
    leaf: EntryId,
    tree: Tree,
    tree_lines: BTreeMap<u64, String>,
    branches: Vec<BranchView>,
    items: BTreeMap<u64, Item>,
    labels: BTreeMap<u64, Vec<Item>>,
    timeline: Vec<Row>,
}

fn lines(nodes: &[Node], full: bool, out: &mut BTreeMap<u64, String>) {
    for n in nodes {
        out.insert(n.first.0, tree::node_line(n, Style::plain(), full));
        for b in &n.branches {
            lines(b, full, out);
        }
    }
}

/// The title of a branch: its last user message and its leaf.
fn title(path: &[&Entry], leaf: EntryId) -> String {
    let last = path.iter().rev().find_map(|e| match &e.body {
        Body::Record(Record::UserMessage { text, .. }) => Some(text.as_str()),
        Body::Decision(Decision::Delivered { text, .. }) => Some(text.as_str()),
        _ => None,
    });
    format!("#{leaf}: {}", one_line(last.unwrap_or("(no message)"), 60))
}

/// The HTML page.
pub fn html(log: &SessionLog) -> Result<String, InspectError> {
    let tree = tree::build(log, false);
    let mut tree_lines = BTreeMap::new();
    lines(&tree.root, false, &mut tree_lines);
    let mut branches = Vec::new();
    for leaf in branch_leaves(log) {
        let path = branch_path(log, leaf)?;
        branches.push(BranchView {
            leaf,
            title: title(&path, leaf),
            path: path.iter().map(|e| e.id).collect(),
        });
    }
    let mut items = BTreeMap::new();
    let mut labels: BTreeMap<u64, Vec<Item>> = BTreeMap::new();
    for e in &log.entries {
        match (&e.body, item(e)) {
            (Body::Record(Record::Label { target, .. }), Some(it)) => {
                labels.entry(target.0).or_default().push(it)
            }
            (_, Some(it)) => {
                items.insert(e.id.0, it);
            }
            (_, None) => {}
        }
    }
    let page = Page {
        session_id: log.header().session_id.clone(),
        leaf: log.leaf(),
        tree,
        tree_lines,
        branches,
        items,
        labels,
        timeline: timeline(log),
    };
    let n_branches = page.branches.len();
    // Inside <script>, `<` must not start `</script>` or `<!--`: escape it (and `>`,
    // `&`) as JSON \u escapes, which only ever occur inside JSON strings.
    let data = serde_json::to_string(&page)
        .map_err(|e| InspectError::Usage(format!("cannot serialize the page: {e}")))?
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    let h = log.header();
    let title = escape(&format!("xcsh session {}", h.session_id));
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
    Ok(format!(
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
<script type="application/json" id="xcsh-data">{data}</script>
<script>
{JS}</script>
</body>
</html>
"#
    ))
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

    #[test]
    fn json_holds_the_whole_dag() {
        let (_dir, log) = testkit::branched_session();
        let v = json(&log);
        assert_eq!(v["entries"].as_array().unwrap().len(), log.entries.len());
        assert_eq!(v["branches"], json!([12, 17]));
        assert_eq!(v["branch_points"], json!([8]));
        assert_eq!(v["entries"][8]["children"], json!([9, 13]));
        assert_eq!(v["entries"][13]["type"], "branch");
        assert_eq!(v["entries"][3]["hash"], log.entries[3].hash.to_hex());
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

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        assert_eq!(block("a ``` b", ""), "````\na ``` b\n````\n");
    }
}
