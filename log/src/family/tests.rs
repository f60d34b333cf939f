//! The family loader over small hand-linked logs written through the real writer:
//! the links followed, the header checked back, and a missing, broken, badly named
//! or repeated child a state of that child, never the parent's error.

use std::path::Path;

use chrono::{DateTime, Utc};
use xcsh_machine::{CallId, Decision, EntryId, StepNo, ToolCall, ToolOutcome, ToolStatus};

use super::*;
use crate::{Body, ChildRun, ParentLink, Record, SessionHeader, SessionWriter, ToolResultRecord};

fn ts() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T03:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

/// Writes `dir/<file>` with header `id` (and `parent`), then for each child
/// (call id, child id, child file) a `task` dispatch and its result naming it.
fn write(
    dir: &Path,
    file: &str,
    id: &str,
    parent: Option<ParentLink>,
    kids: &[(&str, &str, &str)],
) {
    let header = SessionHeader {
        session_id: id.into(),
        cwd: "/w".into(),
        forked_from: None,
        parent,
        imported: None,
        provider: None,
    };
    let mut w = SessionWriter::create(&dir.join(file), header, ts()).unwrap();
    let mut leaf = EntryId(0);
    for (call, child_id, child_file) in kids {
        let call = ToolCall {
            id: CallId((*call).into()),
            name: TASK_TOOL.into(),
            arguments: "{}".into(),
        };
        let d = Body::Decision(Decision::ToolDispatched {
            step: StepNo(1),
            call: call.clone(),
        });
        leaf = w.append(leaf, ts(), &d).unwrap().0;
        let r = Body::Record(Record::ToolResult(Box::new(ToolResultRecord {
            call_id: call.id.clone(),
            name: TASK_TOOL.into(),
            outcome: ToolOutcome {
                status: ToolStatus::Ok,
                content: "done".into(),
            },
            duration_ms: 1,
            changes: Vec::new(),
            child: Some(ChildRun {
                session_id: (*child_id).into(),
                file: (*child_file).into(),
                usage: None,
            }),
        })));
        leaf = w.append(leaf, ts(), &r).unwrap().0;
    }
}

/// A new directory with the parent `p` (`t_p.jsonl`) linking to `kids`.
fn parent(kids: &[(&str, &str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t_p.jsonl", "p", None, kids);
    dir
}

/// `a`, the child of `p`'s call `c1`, linking to a grandchild `g` (`t_g.jsonl`).
fn child_a(d: &Path) {
    let kids = [("g1", "g", "t_g.jsonl")];
    write(d, "t_a.jsonl", "a", link("p", 1, "c1"), &kids);
}

fn link(parent: &str, entry: u64, call: &str) -> Option<ParentLink> {
    Some(ParentLink {
        session_id: parent.into(),
        entry: EntryId(entry),
        call_id: CallId(call.into()),
    })
}

/// Each child's id, state and problems, indented by depth.
fn outline(m: &Member<SessionLog>) -> String {
    let mut out = format!(
        "{}{} ({})\n",
        "  ".repeat(m.depth),
        m.session_id,
        m.data.entries.len()
    );
    for c in &m.children {
        match c.state.member() {
            Some(k) => {
                for w in &c.warnings {
                    out.push_str(&format!("{}! {w}\n", "  ".repeat(m.depth + 1)));
                }
                out.push_str(&outline(k));
            }
            None => out.push_str(&format!(
                "{}{} {}\n",
                "  ".repeat(m.depth + 1),
                c.link.child.session_id,
                c.state.word()
            )),
        }
    }
    out
}

#[test]
fn a_family_is_followed_down_every_generation_with_its_problems_as_states() {
    let dir = parent(&[
        ("c1", "a", "t_a.jsonl"),
        ("c2", "b", "t_b.jsonl"),
        ("c3", "gone", "t_gone.jsonl"),
        ("c4", "bad", "t_bad.jsonl"),
        ("c5", "up", "../t_up.jsonl"),
    ]);
    let d = dir.path();
    child_a(d);
    // b names another parent entry and call: warnings, still loaded.
    write(d, "t_b.jsonl", "b", link("p", 9, "cX"), &[]);
    write(
        d,
        "t_g.jsonl",
        "g",
        link("a", 1, "g1"),
        &[("g2", "p", "t_p.jsonl")],
    );
    std::fs::write(d.join("t_bad.jsonl"), "{not json\n").unwrap();
    let fam = load_family(&d.join("t_p.jsonl"), Depth::All).unwrap();
    expect_test::expect![[r#"
        p (11)
          a (3)
            g (3)
              p already in the family
          ! its header names call cX, not c2
          ! its header names parent entry #9, the call was dispatched at #3
          b (1)
          gone missing
          bad broken
          up bad file name
    "#]]
    .assert_eq(&outline(&fam));
    assert_eq!(fam.members().len(), 4);
    let problems = fam.problems().join("\n");
    assert!(
        problems.contains("child gone (t_gone.jsonl): missing (no file ")
            && problems.contains("child bad (t_bad.jsonl): broken: ")
            && problems.contains("t_bad.jsonl:1"),
        "{problems}"
    );
}

#[test]
fn without_deep_only_the_first_generation_is_opened() {
    let dir = parent(&[("c1", "a", "t_a.jsonl")]);
    let d = dir.path();
    child_a(d);
    let fam = load_family(&d.join("t_p.jsonl"), Depth::Children).unwrap();
    expect_test::expect![[r#"
        p (3)
          a (3)
            g not followed
    "#]]
    .assert_eq(&outline(&fam));
}

#[test]
fn a_child_naming_no_parent_or_another_session_is_a_warning() {
    let dir = parent(&[("c1", "a", "t_a.jsonl"), ("c2", "z", "t_b.jsonl")]);
    let d = dir.path();
    write(d, "t_a.jsonl", "a", None, &[]);
    write(d, "t_b.jsonl", "b", link("q", 3, "c2"), &[]);
    let fam = load_family(&d.join("t_p.jsonl"), Depth::All).unwrap();
    expect_test::expect![[r#"
        child a (t_a.jsonl): its header names no parent session
        child z (t_b.jsonl): the link names session z, the file holds session b
        child z (t_b.jsonl): its header names parent session q, not p"#]]
    .assert_eq(&fam.problems().join("\n"));
}

#[test]
fn an_unreadable_session_itself_is_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = load_family(&dir.path().join("none.jsonl"), Depth::All).unwrap_err();
    assert!(err.to_string().contains("none.jsonl"), "{err}");
}
