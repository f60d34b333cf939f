//! The bash sandbox (SPEC.md §21.7): a user + PID namespace whose init dies with the
//! call and with xcsh, Landlock (writes only beneath the workspace and a private
//! temporary directory; no TCP), and a seccomp filter (no socket but `AF_UNIX`, no
//! io_uring). Everything that allocates is prepared once, in [`Sandbox::new`]; the
//! `pre_exec` hook ([`Sandbox::enter`]) only makes system calls, so it is safe in the
//! child of a fork of a multi-threaded process.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
    path_beneath_rules,
};

pub use xcsh_machine::SandboxMode;

/// The name of the tool that runs one command outside the sandbox (offered only when
/// the sandbox is on; always asked, SPEC.md §18.2).
pub const OUTSIDE_TOOL: &str = "bash_outside_sandbox";

/// The files outside the workspace that stay writable in every mode.
const WRITABLE_DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// The Landlock ABI the rules are written for (Linux 6.10); newer kernels enforce
/// them as written, older ones the part they know (best effort, SPEC.md §21.7).
const TARGET_ABI: ABI = ABI::V5;

/// What the sandbox allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// `--sandbox-network`: TCP, UDP and every socket family are allowed.
    pub network: bool,
}

/// Why the sandbox cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("this kernel has no Landlock (landlock_create_ruleset: {0})")]
    NoLandlock(io::Error),
    #[error("this kernel does not let an unprivileged process make a user and PID namespace ({0})")]
    NoNamespaces(io::Error),
    #[error("cannot make the sandbox's Landlock rules: {0}")]
    Rules(String),
    #[error("cannot make the sandbox's temporary directory {path}: {source}")]
    TempDir { path: PathBuf, source: io::Error },
}

/// Whether this kernel can run the sandbox: the Landlock ABI version, or why not.
/// Makes one short-lived child to try the user + PID namespace.
pub fn probe() -> Result<u32, SandboxError> {
    // SAFETY: the documented version query: a null attribute, size 0, the VERSION flag.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    if abi < 1 {
        return Err(SandboxError::NoLandlock(io::Error::last_os_error()));
    }
    // SAFETY: the child makes system calls only and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(SandboxError::NoNamespaces(io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: async-signal-safe calls only.
        unsafe {
            let ok = libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWPID) == 0;
            let errno = *libc::__errno_location();
            libc::_exit(if ok { 0 } else { errno.clamp(1, 255) });
        }
    }
    let mut status = 0;
    // SAFETY: waits for the child just made.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return Err(SandboxError::NoNamespaces(io::Error::last_os_error()));
        }
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(u32::try_from(abi).unwrap_or(0))
    } else if libc::WIFEXITED(status) {
        Err(SandboxError::NoNamespaces(io::Error::from_raw_os_error(
            libc::WEXITSTATUS(status),
        )))
    } else {
        Err(SandboxError::NoNamespaces(io::Error::other(
            "the probe child was killed",
        )))
    }
}

/// A prepared sandbox for the bash calls of one executor: the Landlock ruleset, the
/// seccomp program, the namespace's id maps and the private temporary directory
/// (removed when the sandbox is dropped).
#[derive(Debug)]
pub struct Sandbox {
    policy: SandboxPolicy,
    ruleset: OwnedFd,
    filter: Vec<libc::sock_filter>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    tmp: PathBuf,
    /// xcsh's process id: the child checks its parent is still this process.
    parent: libc::pid_t,
}

/// The name of a private temporary directory: `xcsh-sandbox-PID-N`.
const TMP_PREFIX: &str = "xcsh-sandbox-";

/// Removes the private temporary directories of xcsh processes that are gone (a
/// killed xcsh cannot remove its own); a directory whose process still runs (or
/// whose pid was reused) is left alone.
fn remove_stale_dirs(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(TMP_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok())
            .filter(|pid| *pid > 0)
        else {
            continue;
        };
        // SAFETY: signal 0 only checks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } < 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The counter that makes temporary directory names unique within the process.
static TMP_COUNTER: AtomicU32 = AtomicU32::new(0);

impl Sandbox {
    /// Prepares the sandbox of `policy` (not `Off`) over the workspace `root`.
    pub fn new(root: &Path, policy: SandboxPolicy) -> Result<Arc<Sandbox>, SandboxError> {
        // SAFETY: getpid, getuid and getgid cannot fail.
        let (parent, uid, gid) = unsafe { (libc::getpid(), libc::getuid(), libc::getgid()) };
        let base = std::env::temp_dir();
        remove_stale_dirs(&base);
        let tmp = base.join(format!(
            "{TMP_PREFIX}{parent}-{}",
            TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        make_private_dir(&tmp).map_err(|source| SandboxError::TempDir {
            path: tmp.clone(),
            source,
        })?;
        let ruleset = match ruleset(root, &tmp, policy) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(e);
            }
        };
        Ok(Arc::new(Sandbox {
            policy,
            ruleset,
            filter: if policy.network {
                Vec::new()
            } else {
                socket_filter()
            },
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            tmp,
            parent,
        }))
    }

    pub fn policy(&self) -> SandboxPolicy {
        self.policy
    }

    /// The private temporary directory (`TMPDIR` of every sandboxed command).
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// Makes `command` run inside the sandbox: `TMPDIR` set, and the `pre_exec` hook.
    pub fn confine(self: &Arc<Sandbox>, command: &mut tokio::process::Command) {
        command.env("TMPDIR", &self.tmp);
        let this = Arc::clone(self);
        // SAFETY: `enter` makes only async-signal-safe system calls on data prepared
        // before the fork (SPEC.md §21.7).
        unsafe {
            command.pre_exec(move || this.enter());
        }
    }

    /// In the child, between fork and exec. This process (the one the caller waits
    /// for) makes the user + PID namespace, forks its init, closes every descriptor,
    /// waits for the init and leaves with its status; the init restricts itself and
    /// returns, so that the caller's exec runs in it. Both die with their parent
    /// (`PR_SET_PDEATHSIG`), and when the init ends the kernel kills every process
    /// left in its namespace.
    fn enter(&self) -> io::Result<()> {
        // SAFETY: system calls only, on memory prepared before the fork.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
            if libc::getppid() != self.parent {
                // xcsh died between the fork and the prctl.
                libc::_exit(137);
            }
            check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWPID))?;
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", &self.uid_map)?;
            write_file(c"/proc/self/gid_map", &self.gid_map)?;
            let init = libc::fork();
            if init < 0 {
                return Err(io::Error::last_os_error());
            }
            if init > 0 {
                if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) < 0 {
                    // Before Linux 5.9: one at a time, up to the descriptor limit.
                    let mut limit: libc::rlimit = std::mem::zeroed();
                    let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
                        limit.rlim_cur.min(65_536) as libc::c_int
                    } else {
                        1024
                    };
                    for fd in 0..top {
                        libc::close(fd);
                    }
                }
                let mut status = 0;
                while libc::waitpid(init, &mut status, 0) < 0 {
                    if *libc::__errno_location() != libc::EINTR {
                        libc::_exit(127);
                    }
                }
                if libc::WIFSIGNALED(status) {
                    let signal = libc::WTERMSIG(status);
                    libc::signal(signal, libc::SIG_DFL);
                    let mut all: libc::sigset_t = std::mem::zeroed();
                    libc::sigfillset(&mut all);
                    libc::sigprocmask(libc::SIG_UNBLOCK, &all, std::ptr::null_mut());
                    libc::kill(libc::getpid(), signal);
                    libc::_exit(128 + signal);
                }
                libc::_exit(libc::WEXITSTATUS(status));
            }
            // The init (PID 1 of the new namespace).
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            check(libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0u32,
            ) as libc::c_int)?;
            if !self.filter.is_empty() {
                let program = libc::sock_fprog {
                    len: self.filter.len() as libc::c_ushort,
                    filter: self.filter.as_ptr().cast_mut(),
                };
                check(libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &program as *const libc::sock_fprog,
                ))?;
            }
        }
        Ok(())
    }

    /// The sentence added to a failed sandboxed call whose output looks like a
    /// denial of the sandbox, or nothing.
    pub fn denial_note(&self, output: &str) -> Option<String> {
        looks_denied(output, self.policy.network).map(|why| {
            let allows = match (self.policy.mode, self.policy.network) {
                (SandboxMode::ReadOnly, false) => {
                    "it writes nowhere but $TMPDIR and has no network"
                }
                (SandboxMode::ReadOnly, true) => "it writes nowhere but $TMPDIR",
                (_, false) => {
                    "it writes only inside the workspace and $TMPDIR, and has no network"
                }
                (_, true) => "it writes only inside the workspace and $TMPDIR",
            };
            format!(
                "sandbox: the command ran in the sandbox ({}: {allows}), and its output says `{why}`: the sandbox probably refused it. If this one command must run outside the sandbox, call `{OUTSIDE_TOOL}` with the same arguments; the user is asked to approve it",
                self.policy.mode.name()
            )
        })
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

/// The phrase of `output` that is the mark of a sandbox denial, if any; with the
/// network closed, also the marks of a refused connection or name lookup (curl
/// and the resolvers do not quote the errno).
fn looks_denied(output: &str, network: bool) -> Option<&'static str> {
    const MARKS: [&str; 5] = [
        "Operation not permitted",
        "Permission denied",
        "Read-only file system",
        "EPERM",
        "EACCES",
    ];
    const NETWORK_MARKS: [&str; 5] = [
        "Network is unreachable",
        "Couldn't connect to server",
        "Could not resolve host",
        "Temporary failure in name resolution",
        "Name or service not known",
    ];
    let network_marks = if network { &[][..] } else { &NETWORK_MARKS[..] };
    MARKS
        .iter()
        .chain(network_marks)
        .copied()
        .find(|m| output.contains(m))
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// open, write, close: async-signal-safe.
unsafe fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: a valid C string and buffer; the descriptor is closed before returning.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n < 0 || n as usize != bytes.len() {
            return Err(err);
        }
    }
    Ok(())
}

fn make_private_dir(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(path)
}

/// The Landlock ruleset: read and execute everywhere; every file-system right
/// beneath the writable roots (the workspace unless read-only, the temporary
/// directory) and on the harmless devices; TCP bind and connect handled with no
/// port allowed unless `network`; abstract unix sockets and signals scoped to the
/// sandbox.
fn ruleset(root: &Path, tmp: &Path, policy: SandboxPolicy) -> Result<OwnedFd, SandboxError> {
    let rules = |e: landlock::RulesetError| SandboxError::Rules(e.to_string());
    let everything = AccessFs::from_all(TARGET_ABI);
    let read = AccessFs::from_read(TARGET_ABI) | AccessFs::IoctlDev;
    let mut writable: Vec<&Path> = vec![tmp];
    if policy.mode == SandboxMode::WorkspaceWrite {
        writable.push(root);
    }
    let mut ruleset = Ruleset::default()
        .handle_access(everything)
        .map_err(rules)?;
    if !policy.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET_ABI))
            .map_err(rules)?
            .scope(Scope::AbstractUnixSocket)
            .map_err(rules)?;
    }
    let created = ruleset
        .scope(Scope::Signal)
        .map_err(rules)?
        .create()
        .map_err(rules)?
        .add_rules(path_beneath_rules(["/"], read))
        .map_err(rules)?
        .add_rules(path_beneath_rules(writable, everything))
        .map_err(rules)?
        .add_rules(path_beneath_rules(
            WRITABLE_DEVICES,
            AccessFs::from_file(TARGET_ABI),
        ))
        .map_err(rules)?;
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| SandboxError::NoLandlock(io::Error::from_raw_os_error(libc::ENOSYS)))
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// The seccomp program: a foreign architecture (or x32) kills the process;
/// `io_uring_setup` and `socket` of any family but `AF_UNIX` fail with EPERM;
/// everything else is allowed.
fn socket_filter() -> Vec<libc::sock_filter> {
    const LD_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const JGE: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
    const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    // Offsets in `struct seccomp_data`: nr, arch, args[0] (its low 32 bits).
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    const ARG0: u32 = 16;
    let op = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    let deny = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    vec![
        /* 0 */ op(LD_ABS, 0, 0, ARCH),
        /* 1 */ op(JEQ, 1, 0, AUDIT_ARCH),
        /* 2 */ op(RET, 0, 0, libc::SECCOMP_RET_KILL_PROCESS),
        /* 3 */ op(LD_ABS, 0, 0, NR),
        /* 4 */ op(JGE, 6, 0, 0x4000_0000), // x32 system calls -> 11
        /* 5 */ op(JEQ, 5, 0, libc::SYS_io_uring_setup as u32), // -> 11
        /* 6 */ op(JEQ, 1, 0, libc::SYS_socket as u32), // -> 8
        /* 7 */ op(RET, 0, 0, libc::SECCOMP_RET_ALLOW),
        /* 8 */ op(LD_ABS, 0, 0, ARG0),
        /* 9 */ op(JEQ, 0, 1, libc::AF_UNIX as u32), // -> 10 or 11
        /* 10 */ op(RET, 0, 0, libc::SECCOMP_RET_ALLOW),
        /* 11 */ op(RET, 0, 0, deny),
    ]
}

#[cfg(test)]
mod tests;
