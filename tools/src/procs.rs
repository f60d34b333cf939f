//! Every process of a bash call dies with the call (SPEC §21.4, "Processes"): each
//! call's shell carries a marker in its environment ([`MARKER_VAR`]), the process
//! is a child subreaper ([`become_subreaper`]) so that whatever a call detaches
//! (`setsid`, a double fork, `nohup … &`, `disown`) is reparented to it instead of
//! init, and when the call settles its leftovers are found among this process's
//! children and their descendants (`/proc/self/task/*/children`, then
//! `/proc/PID/environ` and `/proc/PID/stat`), killed with SIGKILL and reaped by
//! pid. [`end_orphans`] (the end of a run) and [`end_everything`] (exit) do the same
//! for every marker.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use xcsh_machine::CallId;

/// The environment variable that names the call a process belongs to. Its value is
/// the call's id (deterministic, so a command that prints its environment gives
/// the same result every time), prefixed by the marker this xcsh itself carries
/// when it runs inside another xcsh's call (`OUTER/CALL`), so that the outer call
/// still owns it.
pub const MARKER_VAR: &str = "XCSH_TOOL_CALL";

/// How many rounds of scan-and-kill one settlement runs at most: a process that
/// forks between the scan and the kill leaves a child the next round finds.
const MAX_ROUNDS: usize = 16;

/// At most this many leftovers are named in a result (the count is always whole).
const MAX_NAMED: usize = 10;

static SUBREAPER: AtomicBool = AtomicBool::new(false);

/// The shells of running calls (tokio's children: never scanned, never reaped
/// here), and the shells of dropped calls that tokio still has to reap.
#[derive(Debug, Default)]
struct Registry {
    /// shell pid → the call's marker.
    shells: BTreeMap<libc::pid_t, String>,
    /// Shells whose call was dropped before the shell was reaped: tokio reaps
    /// them; kept with their start time until they are gone.
    hands_off: BTreeMap<libc::pid_t, u64>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    shells: BTreeMap::new(),
    hands_off: BTreeMap::new(),
});

/// Held while a shell is spawned and registered, and while a scan runs, so a
/// scan never sees a shell tokio has not handed over yet.
static SCAN: Mutex<()> = Mutex::new(());

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

fn scan_lock() -> MutexGuard<'static, ()> {
    SCAN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Makes this process a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`), so that
/// processes a tool call detaches are reparented to it, found and killed when
/// their call settles. Call it once, before any tool runs, in a process whose only
/// children are the bash tool's shells: from then on, a zombie child that is not a
/// registered shell is taken for an orphan of a call and reaped.
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer and touches no
    // memory of ours.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    SUBREAPER.store(true, Ordering::SeqCst);
    Ok(())
}

/// Whether [`become_subreaper`] succeeded in this process.
pub fn is_subreaper() -> bool {
    SUBREAPER.load(Ordering::SeqCst)
}

/// The marker value of call `id` (§21.4): the id, after the marker this process
/// carries if it runs inside another xcsh's call. Bytes an environment value cannot
/// hold (NUL) and `/` (the separator) become `_`.
pub(crate) fn marker_for(id: &CallId) -> String {
    let own: String =
        id.0.chars()
            .map(|c| if c == '\0' || c == '/' { '_' } else { c })
            .collect();
    match std::env::var(MARKER_VAR) {
        Ok(outer) if !outer.is_empty() => format!("{outer}/{own}"),
        _ => own,
    }
}

/// Whether a process whose marker is `value` belongs to the call marked `marker`.
fn owned_by(value: &str, marker: &str) -> bool {
    value == marker
        || value
            .strip_prefix(marker)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Spawns `command` (a call's shell, in its own process group) with the call's
/// marker in its environment and registers it; the returned [`CallProcs`] ends the
/// call's leftovers.
pub(crate) fn spawn_marked(
    command: &mut tokio::process::Command,
    call: &CallId,
) -> io::Result<(tokio::process::Child, CallProcs)> {
    let marker = marker_for(call);
    command.env(MARKER_VAR, &marker);
    let _scan = scan_lock();
    let child = command.spawn()?;
    let Some(pid) = child.id().and_then(|id| libc::pid_t::try_from(id).ok()) else {
        return Err(io::Error::other("the shell started without a process id"));
    };
    registry().shells.insert(pid, marker.clone());
    Ok((
        child,
        CallProcs {
            marker,
            pgid: pid,
            shell: Some(pid),
            ended: BTreeMap::new(),
            group_killed: false,
            finished: false,
        },
    ))
}

/// One process as a scan saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proc {
    pub pid: libc::pid_t,
    pub ppid: libc::pid_t,
    pub pgrp: libc::pid_t,
    /// The state letter of `/proc/PID/stat` (`Z` for a zombie).
    pub state: char,
    pub comm: String,
    pub start: u64,
    /// The value of [`MARKER_VAR`] in its environment (none for a zombie, or when
    /// it cleared its environment).
    pub marker: Option<String>,
}

impl Proc {
    fn zombie(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// Where processes are read from: `/proc`, or a directory laid out like it (tests).
#[derive(Debug, Clone)]
pub(crate) struct ProcFs {
    root: PathBuf,
}

impl ProcFs {
    pub(crate) fn system() -> ProcFs {
        ProcFs {
            root: PathBuf::from("/proc"),
        }
    }

    #[cfg(test)]
    pub(crate) fn at(root: &Path) -> ProcFs {
        ProcFs {
            root: root.to_path_buf(),
        }
    }

    /// The children of `dir` (`self` or a pid): the union of its threads'
    /// `task/TID/children`, sorted.
    pub(crate) fn children(&self, dir: &str) -> Vec<libc::pid_t> {
        let tasks = self.root.join(dir).join("task");
        let Ok(entries) = std::fs::read_dir(&tasks) else {
            return Vec::new();
        };
        let mut out = BTreeSet::new();
        for entry in entries.flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path().join("children")) else {
                continue;
            };
            out.extend(
                text.split_ascii_whitespace()
                    .filter_map(|t| t.parse::<libc::pid_t>().ok()),
            );
        }
        out.into_iter().collect()
    }

    /// One process, or none if it is gone.
    pub(crate) fn read(&self, pid: libc::pid_t) -> Option<Proc> {
        let dir = self.root.join(pid.to_string());
        let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
        let mut proc = parse_stat(&stat)?;
        proc.marker = read_marker(&dir.join("environ"));
        Some(proc)
    }

    /// The start time of `pid` (clock ticks after boot), if it exists.
    fn start_of(&self, pid: libc::pid_t) -> Option<u64> {
        let stat = std::fs::read_to_string(self.root.join(pid.to_string()).join("stat")).ok()?;
        parse_stat(&stat).map(|p| p.start)
    }

    /// Every descendant of this process outside the subtrees of `skip` (the
    /// running shells), parents before children.
    pub(crate) fn descendants(&self, skip: &BTreeSet<libc::pid_t>) -> Vec<Proc> {
        let mut out = Vec::new();
        let mut todo: std::collections::VecDeque<libc::pid_t> =
            self.children("self").into_iter().collect();
        let mut seen = BTreeSet::new();
        while let Some(pid) = todo.pop_front() {
            if skip.contains(&pid) || !seen.insert(pid) {
                continue;
            }
            let Some(proc) = self.read(pid) else { continue };
            if !proc.zombie() {
                todo.extend(self.children(&pid.to_string()));
            }
            out.push(proc);
        }
        out
    }
}

/// `/proc/PID/stat`: `PID (COMM) STATE PPID PGRP …`, COMM possibly holding spaces
/// and parentheses (the last `)` ends it); the start time is field 22.
pub(crate) fn parse_stat(text: &str) -> Option<Proc> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_owned();
    let rest: Vec<&str> = text.get(close + 1..)?.split_ascii_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N - 3].
    let state = rest.first()?.chars().next()?;
    Some(Proc {
        pid,
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        state,
        comm,
        start: rest.get(19)?.parse().ok()?,
        marker: None,
    })
}

/// The value of [`MARKER_VAR`] in an `environ` file (NUL-separated `NAME=VALUE`).
fn read_marker(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let key = format!("{MARKER_VAR}=");
    bytes
        .split(|b| *b == 0)
        .find_map(|var| var.strip_prefix(key.as_bytes()))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// Whose processes a settlement ends.
#[derive(Debug, Clone)]
pub(crate) enum Whose<'a> {
    /// One call's: its marker, or its process group.
    Call { marker: &'a str, pgid: libc::pid_t },
    /// Every marked process whose marker is of none of these (running) calls.
    AnyBut(&'a BTreeSet<String>),
}

impl Whose<'_> {
    fn claims(&self, proc: &Proc) -> bool {
        match self {
            Whose::Call { marker, pgid } => {
                proc.pgrp == *pgid || proc.marker.as_deref().is_some_and(|v| owned_by(v, marker))
            }
            Whose::AnyBut(running) => proc
                .marker
                .as_deref()
                .is_some_and(|v| !running.iter().any(|m| owned_by(v, m))),
        }
    }
}

/// The processes of `procs` (parents before children) that `whose` claims, and
/// every descendant of a claimed one.
pub(crate) fn claimed<'p>(procs: &'p [Proc], whose: &Whose<'_>) -> Vec<&'p Proc> {
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for proc in procs {
        if whose.claims(proc) || taken.contains(&proc.ppid) {
            taken.insert(proc.pid);
            out.push(proc);
        }
    }
    out
}

/// Which children a scan must not touch: the running shells, and the dropped
/// shells tokio has yet to reap (pruned when gone).
fn untouchable(fs: &ProcFs) -> BTreeSet<libc::pid_t> {
    let mut reg = registry();
    reg.hands_off
        .retain(|pid, start| fs.start_of(*pid) == Some(*start));
    reg.shells
        .keys()
        .chain(reg.hands_off.keys())
        .copied()
        .collect()
}

/// Whether this process has a child that is not a running (or dropped) shell:
/// without one, no call left anything a scan could find (the fast path).
fn has_unknown_child(fs: &ProcFs, skip: &BTreeSet<libc::pid_t>) -> bool {
    fs.children("self").iter().any(|pid| !skip.contains(pid))
}

/// How long one settlement waits, in all, for the processes it killed to die (a
/// process in uninterruptible sleep dies only when it wakes; it is then left to the
/// next scan rather than holding up the call).
const REAP_BOUND: std::time::Duration = std::time::Duration::from_secs(2);

/// Reaps `pid` if it is a child of this process (ECHILD otherwise, at once),
/// waiting for it to die until `deadline`.
fn reap(pid: libc::pid_t, deadline: std::time::Instant) {
    let mut status = 0;
    loop {
        // SAFETY: waitpid on one pid writes only `status`.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if rc != 0 {
            // Reaped, or not a child (ECHILD); EINTR tries again.
            if rc > 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
            continue;
        }
        if std::time::Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
}

fn kill(pid: libc::pid_t) {
    // SAFETY: kill only sends a signal; ESRCH for a process already gone is fine.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Whether a scan spares the running shells' subtrees (a settlement) or goes
/// through them (exiting now).
#[derive(Debug, Clone, Copy)]
enum Shells {
    Spare,
    Scan,
}

/// Kills and reaps what `whose` claims among this process's descendants, round
/// after round until a scan finds nothing alive; returns the processes that were
/// alive when found. Zombie children no running shell owns are reaped too when
/// this process is a subreaper (orphans that exited on their own).
fn end(fs: &ProcFs, whose: &Whose<'_>, shells: Shells) -> Vec<Proc> {
    let _scan = scan_lock();
    let mut killed = Vec::new();
    let deadline = std::time::Instant::now() + REAP_BOUND;
    for _ in 0..MAX_ROUNDS {
        let skip = match shells {
            Shells::Spare => untouchable(fs),
            Shells::Scan => BTreeSet::new(),
        };
        if matches!(shells, Shells::Spare) && !has_unknown_child(fs, &skip) {
            break;
        }
        let procs = fs.descendants(&skip);
        let own = claimed(&procs, whose);
        let alive: Vec<&Proc> = own.iter().copied().filter(|p| !p.zombie()).collect();
        for proc in &alive {
            kill(proc.pid);
        }
        for proc in &own {
            reap(proc.pid, deadline);
        }
        if is_subreaper() {
            let me = std::process::id();
            for proc in procs.iter().filter(|p| p.zombie()) {
                if u32::try_from(proc.ppid).is_ok_and(|ppid| ppid == me) {
                    reap(proc.pid, deadline);
                }
            }
        }
        if alive.is_empty() {
            break;
        }
        killed.extend(alive.into_iter().cloned());
    }
    killed
}

/// The processes of one bash call: its marker and process group, and what was
/// ended so far. Dropped before it settled (the call's future dropped), it kills
/// the group and the leftovers itself.
#[derive(Debug)]
pub(crate) struct CallProcs {
    marker: String,
    pgid: libc::pid_t,
    /// The shell, while tokio has not reaped it.
    shell: Option<libc::pid_t>,
    /// What was ended, by pid (with its command name).
    ended: BTreeMap<libc::pid_t, String>,
    /// Whether the call's process group was killed ([`CallProcs::kill_group`]):
    /// its members then died with the call and are not counted as left behind,
    /// even when a scan still sees one that has yet to act on its SIGKILL.
    group_killed: bool,
    /// Whether [`CallProcs::finish`] ran.
    finished: bool,
}

impl CallProcs {
    /// Tokio reaped the shell: it is no longer a child of this process.
    pub(crate) fn shell_reaped(&mut self) {
        if let Some(pid) = self.shell.take() {
            registry().shells.remove(&pid);
        }
    }

    /// Kills the call's process group (a timeout, a cancellation, or background
    /// jobs holding the output). Call it before the shell is reaped, or after it
    /// was, never in between: while the leader is unreaped, or a member lives, the
    /// group's id names no one else's group.
    pub(crate) fn kill_group(&mut self) {
        self.group_killed = true;
        // SAFETY: killpg only sends a signal; a group already gone yields ESRCH.
        unsafe {
            libc::killpg(self.pgid, libc::SIGKILL);
        }
    }

    /// Kills the call's process group and every descendant of this process that
    /// carries the call's marker or is in its group, and reaps them.
    pub(crate) fn end(&mut self) {
        let fs = ProcFs::system();
        let whose = Whose::Call {
            marker: &self.marker,
            pgid: self.pgid,
        };
        for proc in end(&fs, &whose, Shells::Spare) {
            // A member of a group killed before this scan died with the call, even
            // if it had not acted on its SIGKILL when the scan read it.
            if self.group_killed && proc.pgrp == self.pgid {
                continue;
            }
            self.ended.insert(proc.pid, proc.comm);
        }
        // After the leader was reaped only members keep the group's id in use, so
        // the id names no one else's group. (Without a subreaper, members are not
        // this process's descendants: this kill is all that ends them.)
        if self.shell.is_none() {
            // SAFETY: killpg only sends a signal.
            unsafe {
                libc::killpg(self.pgid, libc::SIGKILL);
            }
        }
    }

    /// The call settles: ends what is left ([`CallProcs::end`]) and gives the
    /// result's line about what the call left behind, if it left anything.
    pub(crate) fn finish(mut self) -> Option<String> {
        self.end();
        self.finished = true;
        self.report()
    }

    fn report(&self) -> Option<String> {
        if self.ended.is_empty() {
            return None;
        }
        let n = self.ended.len();
        let mut line = format!(
            "{n} {} it left behind {} killed: ",
            if n == 1 { "process" } else { "processes" },
            if n == 1 { "was" } else { "were" }
        );
        for (i, (pid, comm)) in self.ended.iter().take(MAX_NAMED).enumerate() {
            if i > 0 {
                line.push_str(", ");
            }
            let _ = write!(line, "{pid} ({comm})");
        }
        if n > MAX_NAMED {
            let _ = write!(line, " and {} more", n - MAX_NAMED);
        }
        Some(line)
    }
}

impl Drop for CallProcs {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        if let Some(pid) = self.shell.take() {
            // The future was dropped mid-call: the group dies (the leader is not
            // reaped yet), tokio reaps the shell.
            self.kill_group();
            let mut reg = registry();
            reg.shells.remove(&pid);
            if let Some(start) = ProcFs::system().start_of(pid) {
                reg.hands_off.insert(pid, start);
            }
        }
        // Then the rest, detached or not, as a settlement would (and the group
        // again, now that the shell is out of the way).
        self.end();
    }
}

/// The end of a run: kills (and reaps) every marked descendant whose call is not
/// running any more. Returns how many were alive.
pub fn end_orphans() -> usize {
    let running: BTreeSet<String> = registry().shells.values().cloned().collect();
    end(&ProcFs::system(), &Whose::AnyBut(&running), Shells::Spare).len()
}

/// Exiting now: kills every running call's process group and every marked
/// descendant, and reaps what it can. Returns how many were alive besides the
/// groups.
pub fn end_everything() -> usize {
    let groups: Vec<libc::pid_t> = registry().shells.keys().copied().collect();
    let none = BTreeSet::new();
    // The shells carry their marker: the scan goes through them and kills them
    // with everything below them, before their groups.
    let killed = end(&ProcFs::system(), &Whose::AnyBut(&none), Shells::Scan).len();
    for pgid in groups {
        // SAFETY: killpg only sends a signal; the leaders are unreaped children
        // (tokio's), so their ids are not reused.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
    killed
}

#[cfg(test)]
mod tests;
