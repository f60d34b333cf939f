//! The /proc scan of `procs`: parsing, attribution over a fake /proc tree, and the
//! real scan killing and reaping a marked child of the test process.

use super::*;

/// A `/proc/PID/stat` line with the given fields (start time 7).
fn stat(pid: i32, comm: &str, state: char, ppid: i32, pgrp: i32) -> String {
    format!(
        "{pid} ({comm}) {state} {ppid} {pgrp} {pgrp} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 7 0 0\n"
    )
}

/// A directory laid out like /proc: `self` is pid 1 with the given children;
/// `procs` are (pid, comm, state, ppid, pgrp, marker, children).
struct FakeProc {
    dir: tempfile::TempDir,
}

type Row<'a> = (i32, &'a str, char, i32, i32, Option<&'a str>, &'a [i32]);

impl FakeProc {
    fn new(self_children: &[i32], procs: &[Row<'_>]) -> FakeProc {
        let dir = tempfile::tempdir().unwrap();
        let write_children = |at: &Path, kids: &[i32]| {
            // Two threads, the children split between them (a subreaper's orphans
            // go to any of its threads).
            let (a, b) = kids.split_at(kids.len() / 2);
            for (tid, part) in [("1", a), ("2", b)] {
                let task = at.join("task").join(tid);
                std::fs::create_dir_all(&task).unwrap();
                let text: Vec<String> = part.iter().map(|p| format!("{p} ")).collect();
                std::fs::write(task.join("children"), text.concat()).unwrap();
            }
        };
        write_children(&dir.path().join("self"), self_children);
        for (pid, comm, state, ppid, pgrp, marker, kids) in procs {
            let at = dir.path().join(pid.to_string());
            write_children(&at, kids);
            std::fs::write(at.join("stat"), stat(*pid, comm, *state, *ppid, *pgrp)).unwrap();
            let mut environ = b"PATH=/bin\0".to_vec();
            if let Some(m) = marker {
                environ.extend_from_slice(format!("{MARKER_VAR}={m}\0").as_bytes());
            }
            environ.extend_from_slice(b"HOME=/h\0");
            std::fs::write(at.join("environ"), environ).unwrap();
        }
        FakeProc { dir }
    }

    fn fs(&self) -> ProcFs {
        ProcFs::at(self.dir.path())
    }
}

fn pids(procs: &[&Proc]) -> Vec<i32> {
    procs.iter().map(|p| p.pid).collect()
}

#[test]
fn a_stat_line_whose_command_name_holds_spaces_and_parentheses_parses() {
    let proc = parse_stat(&stat(42, "my (odd) name", 'S', 7, 40)).unwrap();
    assert_eq!(
        proc,
        Proc {
            pid: 42,
            ppid: 7,
            pgrp: 40,
            state: 'S',
            comm: "my (odd) name".into(),
            start: 7,
            marker: None,
        }
    );
}

#[test]
fn a_truncated_stat_line_is_no_process() {
    assert_eq!(parse_stat("42 (sleep) S 7"), None);
    assert_eq!(parse_stat(""), None);
}

/// The tree of the attribution tests: 1 (self) has the running shell 10 (call
/// `c2`, with its child 11), the orphans 20 (`c1`, setsid: its own group) with
/// an unmarked child 21 (it cleared its environment), 30 (`c10`: another call),
/// 40 (unmarked, still in c1's group 5), 50 (`c1/inner`: a call of an xcsh run
/// inside c1), and the zombie 60.
fn tree() -> FakeProc {
    FakeProc::new(
        &[10, 20, 30, 40, 50, 60],
        &[
            (10, "bash", 'S', 1, 10, Some("c2"), &[11]),
            (11, "sleep", 'S', 10, 10, Some("c2"), &[]),
            (20, "sleep", 'S', 1, 20, Some("c1"), &[21]),
            (21, "env -i sleep", 'S', 20, 20, None, &[]),
            (30, "sleep", 'S', 1, 30, Some("c10"), &[]),
            (40, "sleep", 'S', 1, 5, None, &[]),
            (50, "sleep", 'S', 1, 50, Some("c1/inner"), &[]),
            (60, "sh", 'Z', 1, 60, None, &[]),
        ],
    )
}

#[test]
fn the_descendants_are_listed_parents_first_skipping_the_running_shells() {
    let fake = tree();
    let skip = BTreeSet::from([10]);
    let all: Vec<i32> = fake.fs().descendants(&skip).iter().map(|p| p.pid).collect();
    assert_eq!(all, vec![20, 30, 40, 50, 60, 21]);
}

#[test]
fn a_call_claims_its_marker_its_group_the_calls_inside_it_and_their_descendants() {
    let fake = tree();
    let procs = fake.fs().descendants(&BTreeSet::from([10]));
    let whose = Whose::Call {
        marker: "c1",
        pgid: 5,
    };
    assert_eq!(pids(&claimed(&procs, &whose)), vec![20, 40, 50, 21]);
}

#[test]
fn the_end_of_a_run_claims_every_marker_but_the_running_calls() {
    let fake = tree();
    let procs = fake.fs().descendants(&BTreeSet::new());
    let running = BTreeSet::from(["c2".to_string()]);
    assert_eq!(
        pids(&claimed(&procs, &Whose::AnyBut(&running))),
        vec![20, 30, 50, 21]
    );
    let none = BTreeSet::new();
    assert_eq!(
        pids(&claimed(&procs, &Whose::AnyBut(&none))),
        vec![10, 20, 30, 50, 11, 21]
    );
}

#[test]
fn a_marker_is_the_call_id_with_nul_and_slash_replaced() {
    // The test process runs in no xcsh call (nextest and cargo test do not set it).
    if std::env::var_os(MARKER_VAR).is_some() {
        return;
    }
    assert_eq!(marker_for(&CallId("call_1".into())), "call_1");
    assert_eq!(marker_for(&CallId("a/b\0c".into())), "a_b_c");
}

#[test]
fn only_the_marker_itself_or_a_call_inside_it_is_owned_by_it() {
    assert!(owned_by("c1", "c1"));
    assert!(owned_by("c1/x", "c1"));
    assert!(!owned_by("c10", "c1"));
    assert!(!owned_by("c", "c1"));
}

/// Whether `pid` still exists (as a process or a zombie).
fn exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits until `child` has finished its exec: `spawn` returns as soon as the new
/// image replaced the parent's memory, a moment before the kernel set up the new
/// environment, and a scan in that moment reads no marker. (A settlement that
/// races an exec this way finds the process in its next round, or the end of the
/// run does; the test wants one scan to see it.)
fn wait_for_exec(child: &std::process::Child, marker: &str) {
    let path = format!("/proc/{}/environ", child.id());
    let want = format!("{MARKER_VAR}={marker}");
    for _ in 0..1_000_000 {
        if let Ok(env) = std::fs::read(&path)
            && env.split(|b| *b == 0).any(|v| v == want.as_bytes())
        {
            return;
        }
        std::thread::yield_now();
    }
    panic!("{path} never showed {want}");
}

#[test]
fn a_marked_child_of_this_process_is_killed_and_reaped_and_another_calls_is_not() {
    let marker = format!("procs-unit-{}", std::process::id());
    let other = format!("{marker}-other");
    let spawn = |m: &str| {
        std::process::Command::new("sleep")
            .arg("1000")
            .env(MARKER_VAR, m)
            .spawn()
            .unwrap()
    };
    // Reaped by the scan below, never by the `Child` (which would then fail).
    #[allow(clippy::zombie_processes)]
    let mine = spawn(&marker);
    let mut theirs = spawn(&other);
    wait_for_exec(&mine, &marker);
    wait_for_exec(&theirs, &other);
    let whose = Whose::Call {
        marker: &marker,
        pgid: -1,
    };
    let ended = end(&ProcFs::system(), &whose, Shells::Spare);
    assert_eq!(
        ended
            .iter()
            .map(|p| (p.pid, p.comm.as_str(), p.marker.as_deref()))
            .collect::<Vec<_>>(),
        vec![(
            libc::pid_t::try_from(mine.id()).unwrap(),
            "sleep",
            Some(marker.as_str())
        )]
    );
    assert!(!exists(mine.id()), "killed and reaped (no zombie is left)");
    assert!(exists(theirs.id()), "another call's process is left alone");
    theirs.kill().unwrap();
    theirs.wait().unwrap();
}
