//! Replaying many sessions: every `*.jsonl` file under a directory, each on its active
//! branch, on a small pool of threads. The regression gate a team runs in CI over
//! its saved sessions.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use serde::Serialize;
use xcsh_log::read_session;

use crate::{
    CutOff, Divergence, Outcome, Overrides, ReplayError, ReplayOptions, ReplayReport, Torn, replay,
};

/// The replay of one session file.
#[derive(Debug, Clone, Serialize)]
pub struct SessionRun {
    /// The file, relative to the directory given.
    pub session: String,
    #[serde(skip)]
    pub path: PathBuf,
    /// Entries in the file (all branches); `None` if it could not be read.
    pub entries: Option<usize>,
    pub elapsed_ms: u64,
    #[serde(flatten)]
    pub result: SessionResult,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum SessionResult {
    Ok {
        replayed: ReplayReport,
    },
    Diverged {
        replayed: ReplayReport,
        divergence: Box<Divergence>,
    },
    /// Every recorded decision was re-made, but the branch ends inside a run (a
    /// crash cut it off; SPEC.md §24.2): not a failure.
    CutOff {
        replayed: ReplayReport,
        cut_off: Box<CutOff>,
        /// The file's torn last line, if it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        torn: Option<Torn>,
    },
    /// An imported session (SPEC.md §33.4): not re-run; its chain and its steps'
    /// contexts checked, and they hold.
    Imported {
        format: String,
        steps: usize,
        leaves: usize,
    },
    /// The file could not be read or replayed.
    Failed {
        error: String,
    },
}

impl SessionRun {
    pub fn is_ok(&self) -> bool {
        matches!(
            self.result,
            SessionResult::Ok { .. }
                | SessionResult::CutOff { .. }
                | SessionResult::Imported { .. }
        )
    }
}

/// Every `*.jsonl` file under `dir`, recursively, sorted by path.
pub fn find_sessions(dir: &Path) -> Result<Vec<PathBuf>, ReplayError> {
    Ok(xcsh_log::jsonl_files_under(dir)?)
}

/// Replays each of `paths` (on its active branch, with `overrides`) on up to
/// `threads` threads; results in the order of `paths`, named relative to `root`.
pub fn replay_all(
    paths: &[PathBuf],
    root: &Path,
    overrides: &Overrides,
    threads: usize,
) -> Vec<SessionRun> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, paths.len().max(1)) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = paths.get(i) else {
                        break;
                    };
                    // The receiver lives until every worker is done.
                    let _ = tx.send((i, replay_one(path, root, overrides)));
                }
            });
        }
    });
    drop(tx);
    let mut runs: Vec<(usize, SessionRun)> = rx.into_iter().collect();
    runs.sort_by_key(|(i, _)| *i);
    runs.into_iter().map(|(_, r)| r).collect()
}

fn replay_one(path: &Path, root: &Path, overrides: &Overrides) -> SessionRun {
    let started = Instant::now();
    let session = path
        .strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string();
    let options = ReplayOptions {
        until: None,
        overrides: *overrides,
    };
    // Errors name the file; the session column already does, relative to `root`.
    let failed = |e: &dyn std::fmt::Display| SessionResult::Failed {
        error: e.to_string().replace(&path.display().to_string(), &session),
    };
    let (entries, result) = match read_session(path) {
        Err(e) => (None, failed(&e)),
        Ok(log) => (
            Some(log.entries.len()),
            replay_result(&log, &options, &failed),
        ),
    };
    SessionRun {
        session,
        path: path.to_path_buf(),
        entries,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        result,
    }
}

/// The replay of `log` on its leaf as a [`SessionResult`] (`failed` words an error).
pub(crate) fn replay_result(
    log: &xcsh_log::SessionLog,
    options: &ReplayOptions,
    failed: &dyn Fn(&dyn std::fmt::Display) -> SessionResult,
) -> SessionResult {
    match crate::check_imported(log) {
        Err(e) => return failed(&e),
        Ok(Some(c)) if c.mismatches.is_empty() => {
            return SessionResult::Imported {
                format: c.imported.format.name().to_string(),
                steps: c.steps,
                leaves: c.leaves,
            };
        }
        Ok(Some(c)) => {
            let steps: Vec<String> = c
                .mismatches
                .iter()
                .map(|m| m.step_started.to_string())
                .collect();
            return failed(&format!(
                "imported: the context of step_started {} does not rebuild as recorded",
                steps.join(", ")
            ));
        }
        Ok(None) => {}
    }
    match replay(log, log.leaf(), options) {
        Err(e) => failed(&e),
        Ok(r) => match r.outcome {
            Outcome::Clean | Outcome::Stopped(_) => SessionResult::Ok { replayed: r.report },
            Outcome::Diverged(divergence) => SessionResult::Diverged {
                replayed: r.report,
                divergence,
            },
            Outcome::CutOff(cut_off) => SessionResult::CutOff {
                replayed: r.report,
                cut_off,
                torn: r.torn,
            },
        },
    }
}
