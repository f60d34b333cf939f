//! A family of sessions for the family views' tests, written through the real
//! journal and `SessionWriter`: a parent whose first step starts two sub-agents at
//! once (`childa01`, which delegates to a grandchild `grand001` and finishes, and
//! `childb01`, whose provider fails), then a third `task` call whose child file
//! (`childc01`) was never written. Headers and results carry the links exactly as
//! SPEC.md §29 has them; times are 1 ms apart per file, the children starting at
//! their dispatch and the parent going on after them.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use xcsh_log::{Body, ChildRun, ParentLink, SessionHeader, read_session};
use xcsh_machine::{
    CallId, Decision, EntryId, ProviderError, ProviderErrorKind, StepOutcome, ToolStatus,
};

use super::{Kit, config, step_record, t0};

/// The file name of session `id` (as xcsh names them: `<time>_<id>.jsonl`).
pub fn file_of(id: &str) -> String {
    format!("2026-01-01T00-00-00-000Z_{id}.jsonl")
}

/// The family in a new directory; returns the directory and the parent's file.
pub fn family() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let parent_path = dir.path().join(file_of("parent01"));
    let mut p = member(dir.path(), "parent01", None, t0());
    p.prompt_with("split the work", task_config());
    p.step(
        1,
        "delegating",
        &[
            ("task", r#"{"prompt":"look at a"}"#),
            ("task", r#"{"prompt":"look at b"}"#),
        ],
    );
    let start = p.now();
    let a_link = link(&parent_path, "parent01", "call_1_1");
    let b_link = link(&parent_path, "parent01", "call_1_2");

    // childa01 delegates once more, to grand001.
    let mut a = member(dir.path(), "childa01", Some(a_link), start);
    a.prompt_with("look at a", task_config());
    a.step(1, "asking deeper", &[("task", r#"{"prompt":"deeper"}"#)]);
    let g_link = link(&dir.path().join(file_of("childa01")), "childa01", "call_1_1");
    let mut g = member(dir.path(), "grand001", Some(g_link), a.now());
    g.prompt_with("deeper", task_config());
    g.step(1, "found it deep down", &[]);
    a.wait_until(g.now());
    g.close();
    a.settle_with_child(
        "call_1_1",
        "task",
        ToolStatus::Ok,
        "found it deep down",
        Some(child("grand001")),
    );
    a.step(2, "a is fine", &[]);

    // childb01's provider fails.
    let mut b = member(dir.path(), "childb01", Some(b_link), start);
    b.prompt_with("look at b", task_config());
    b.step_full(step_record(
        1,
        "",
        "",
        &[],
        0,
        StepOutcome::Failed {
            error: ProviderError {
                kind: ProviderErrorKind::Http,
                message: "503 service unavailable".into(),
            },
        },
    ));

    p.wait_until(a.now().max(b.now()));
    a.close();
    b.close();
    p.settle_with_child(
        "call_1_1",
        "task",
        ToolStatus::Ok,
        "a is fine",
        Some(child("childa01")),
    );
    p.settle_with_child(
        "call_1_2",
        "task",
        ToolStatus::Error,
        "sub-agent childb01 failed: 503 service unavailable",
        Some(child("childb01")),
    );
    p.step(2, "one more look", &[("task", r#"{"prompt":"look at c"}"#)]);
    p.settle_with_child(
        "call_2_1",
        "task",
        ToolStatus::Ok,
        "c is fine",
        Some(child("childc01")),
    );
    p.step(3, "all done", &[]);
    p.close();
    (dir, parent_path)
}

/// The tools of every run of the family: `task` among them.
fn task_config() -> xcsh_machine::RunConfig {
    let mut c = config(400_000);
    c.tools.push("task".into());
    c
}

fn member(dir: &Path, id: &str, parent: Option<ParentLink>, start: DateTime<Utc>) -> Kit {
    let header = SessionHeader {
        session_id: id.into(),
        cwd: "/workspace".into(),
        forked_from: None,
        parent,
    };
    Kit::create(
        tempfile::tempdir().unwrap(),
        dir.join(file_of(id)),
        header,
        start,
    )
}

fn child(id: &str) -> ChildRun {
    ChildRun {
        session_id: id.into(),
        file: file_of(id),
    }
}

/// The link back to the `tool_dispatched` entry of `call` in the session at `path`.
fn link(path: &Path, id: &str, call: &str) -> ParentLink {
    let log = read_session(path).unwrap();
    let entry = log
        .entries
        .iter()
        .find_map(|e| match &e.body {
            Body::Decision(Decision::ToolDispatched { call: c, .. }) if c.id.0 == call => {
                Some(e.id)
            }
            _ => None,
        })
        .unwrap_or(EntryId(0));
    ParentLink {
        session_id: id.into(),
        entry,
        call_id: CallId(call.into()),
    }
}
