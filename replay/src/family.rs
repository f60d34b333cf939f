//! `xcsh replay --deep` (SPEC.md §24.2, §29.6): the session and every sub-agent's
//! session under it, each replayed on its own leaf, one row per member (named by its
//! session id, indented by generation). The parent's replay uses each child's
//! recorded result, which is an input of the parent like any tool result; the
//! children are replayed in their own right. A child that diverges, or whose file is
//! missing or broken, fails the run with its name. Members come from the one loader
//! (`xcsh_log::family`).

use std::path::Path;
use std::time::Instant;

use xcsh_log::SessionLog;
use xcsh_log::family::{ChildState, Depth, Member, load_family};

use crate::dir::{SessionResult, SessionRun, replay_result};
use crate::{Overrides, ReplayError, ReplayOptions};

/// The replay of each member of the family of the session at `path` (the session
/// first, then each child's family after its parent, in link order), and the
/// warnings about links that do not match back (which do not fail it).
pub fn replay_family(
    path: &Path,
    overrides: &Overrides,
) -> Result<(Vec<SessionRun>, Vec<String>), ReplayError> {
    let family = load_family(path, Depth::All)?;
    let options = ReplayOptions {
        until: None,
        overrides: *overrides,
    };
    let mut runs = Vec::new();
    let mut warnings = Vec::new();
    walk(&family, &options, &mut runs, &mut warnings);
    Ok((runs, warnings))
}

fn label(depth: usize, id: &str) -> String {
    if depth == 0 {
        id.to_string()
    } else {
        format!("{}↳ {id}", "  ".repeat(depth - 1))
    }
}

fn walk(
    m: &Member<SessionLog>,
    options: &ReplayOptions,
    runs: &mut Vec<SessionRun>,
    warnings: &mut Vec<String>,
) {
    let started = Instant::now();
    let failed = |e: &dyn std::fmt::Display| SessionResult::Failed {
        error: e.to_string(),
    };
    let result = replay_result(&m.data, options, &failed);
    runs.push(SessionRun {
        session: label(m.depth, &m.session_id),
        path: m.path.clone(),
        entries: Some(m.data.entries.len()),
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        result,
    });
    for c in &m.children {
        match &c.state {
            ChildState::Loaded(k) => {
                warnings.extend(c.problems());
                walk(k, options, runs, warnings);
            }
            // Shown once already (a cycle), or not asked for: nothing to replay.
            ChildState::Repeated | ChildState::NotFollowed => warnings.extend(c.problems()),
            ChildState::Missing | ChildState::Broken(_) | ChildState::BadName => {
                runs.push(SessionRun {
                    session: label(m.depth + 1, &c.link.child.session_id),
                    path: c.path.clone(),
                    entries: None,
                    elapsed_ms: 0,
                    result: SessionResult::Failed {
                        error: c.problems().join("; "),
                    },
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The family's table, its folder written `<dir>`.
    fn table(path: &Path, overrides: &Overrides) -> String {
        let (mut runs, warnings) = replay_family(path, overrides).unwrap();
        let dir = path.parent().unwrap().display().to_string();
        for r in &mut runs {
            if let SessionResult::Failed { error } = &mut r.result {
                *error = error.replace(&dir, "<dir>");
            }
        }
        let mut out = crate::render::table(&runs);
        for w in warnings {
            out.push_str(&format!("! {w}\n"));
        }
        out
    }

    #[test]
    fn a_family_replays_member_by_member_and_a_missing_child_fails_it_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = xcsh_journal::synth::family::write_family(dir.path()).unwrap();
        expect_test::expect![[r#"
            ┌──────────────┬─────────┬────────┬───────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────┐
            │ session      ┆ entries ┆ result ┆ first divergence                                                                                                          │
            ╞══════════════╪═════════╪════════╪═══════════════════════════════════════════════════════════════════════════════════════════════════════════════════════════╡
            │ parent01     ┆ 15      ┆ ok     ┆                                                                                                                           │
            │ ↳ childa01   ┆ 9       ┆ ok     ┆                                                                                                                           │
            │   ↳ grand001 ┆ 5       ┆ ok     ┆                                                                                                                           │
            │ ↳ childb01   ┆ 5       ┆ ok     ┆                                                                                                                           │
            │ ↳ childc01   ┆ -       ┆ FAILED ┆ child childc01 (2026-01-01T00-00-00-000Z_childc01.jsonl): missing (no file <dir>/2026-01-01T00-00-00-000Z_childc01.jsonl) │
            └──────────────┴─────────┴────────┴───────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────┘
            5 session(s): 4 ok, 0 diverged, 1 failed
        "#]].assert_eq(&table(&path, &Overrides::default()));
    }

    /// A `task` result is an input like any tool result: the parent replays clean
    /// from its own log, its children's files (one of them missing) never read.
    #[test]
    fn the_parent_replays_clean_on_its_recorded_task_results_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = xcsh_journal::synth::family::write_family(dir.path()).unwrap();
        for id in ["childa01", "childb01", "grand001"] {
            let child = dir.path().join(xcsh_journal::synth::family::file_of(id));
            std::fs::remove_file(child).unwrap();
        }
        let log = xcsh_log::read_session(&path).unwrap();
        let r = crate::replay(&log, log.leaf(), &ReplayOptions::default()).unwrap();
        assert_eq!(
            (r.outcome, r.report.entries),
            (crate::Outcome::Clean, log.entries.len())
        );
    }

    #[test]
    fn a_child_that_diverges_is_named_in_the_family_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = xcsh_journal::synth::family::write_family(dir.path()).unwrap();
        let overrides = Overrides::parse(&["max_steps=1".to_string()]).unwrap();
        expect_test::expect![[r#"
            ┌──────────────┬─────────┬──────────┬───────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────┐
            │ session      ┆ entries ┆ result   ┆ first divergence                                                                                                          │
            ╞══════════════╪═════════╪══════════╪═══════════════════════════════════════════════════════════════════════════════════════════════════════════════════════════╡
            │ parent01     ┆ 15      ┆ DIVERGED ┆ entry 8 (step_started): recorded step_started, re-made run_finished                                                       │
            │ ↳ childa01   ┆ 9       ┆ DIVERGED ┆ entry 6 (step_started): recorded step_started, re-made run_finished                                                       │
            │   ↳ grand001 ┆ 5       ┆ ok       ┆                                                                                                                           │
            │ ↳ childb01   ┆ 5       ┆ ok       ┆                                                                                                                           │
            │ ↳ childc01   ┆ -       ┆ FAILED   ┆ child childc01 (2026-01-01T00-00-00-000Z_childc01.jsonl): missing (no file <dir>/2026-01-01T00-00-00-000Z_childc01.jsonl) │
            └──────────────┴─────────┴──────────┴───────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────┘
            5 session(s): 2 ok, 2 diverged, 1 failed
        "#]].assert_eq(&table(&path, &overrides));
    }
}
