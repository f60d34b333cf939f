//! A real terminal for tests of the interactive mode: tmux on a private socket
//! (send-keys, capture-pane, resize-window), and waiting for text on its screen
//! (bounded polling). The pane stays after its program exits (`remain-on-exit`), so
//! that a test can read the history and the exit status of a finished program.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn start(cwd: &Path, command: &str) -> Tmux {
        // One server per terminal: `cargo test` runs a file's tests as threads of
        // one process, so the process id alone would make them share a server.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let tmux = Tmux {
            socket: format!(
                "xcsh-test-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
        };
        // The option is set in the same invocation, before the session exists: a
        // program that exits at once still leaves its pane.
        let status = tmux
            .cmd()
            .args([
                "start-server",
                ";",
                "set-option",
                "-g",
                "remain-on-exit",
                "on",
                ";",
            ])
            .args([
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "160",
                "-y",
                "50",
                "-c",
            ])
            .arg(cwd)
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success());
        tmux
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket]);
        c
    }

    pub fn keys(&self, keys: &[&str]) {
        let status = self
            .cmd()
            .args(["send-keys", "-t", "t"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub fn line(&self, text: &str) {
        self.keys(&["-l", text]);
        self.keys(&["Enter"]);
    }

    pub fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "t", "-S", "-200"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `text` `times` times (30 s at most: CI machines
    /// can be busy).
    pub fn wait_for(&self, text: &str, times: usize) -> String {
        self.wait_until(&format!("{text:?} ×{times}"), |screen| {
            screen.matches(text).count() >= times
        })
    }

    /// A turn: types `prompt` and Enter, waits for `answer`, then for the turn's end
    /// (`done` shown `times` times); returns the screen then.
    pub fn turn(&self, prompt: &str, answer: &str, done: &str, times: usize) -> String {
        self.line(prompt);
        self.wait_for(answer, 1);
        self.wait_for(done, times)
    }

    /// The whole pane with its colours and attributes (`capture-pane -e`: SGR
    /// escape sequences as the program drew them).
    pub fn styled_screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-e", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Everything the terminal holds: its whole scrollback history and the screen.
    pub fn history(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "t", "-S", "-", "-E", "-"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Resizes the terminal to `width` columns (as a user drags the window).
    pub fn resize_width(&self, width: u16) {
        let status = self
            .cmd()
            .args(["resize-window", "-t", "t", "-x", &width.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Polls the screen until `done(screen)` holds (30 s at most); `what` names it
    /// for the failure message.
    pub fn wait_until(&self, what: &str, mut done: impl FnMut(&str) -> bool) -> String {
        super::poll(
            Duration::from_secs(30),
            Duration::from_millis(50),
            || self.screen(),
            |screen| done(screen),
            |screen| format!("waited for {what}; the screen:\n{screen}"),
        )
    }

    /// A tmux format of the pane, e.g. `#{pane_dead}`; None once the session is gone.
    fn pane(&self, format: &str) -> Option<String> {
        let out = self
            .cmd()
            .args(["display-message", "-p", "-t", "t", format])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Whether the program in the pane still runs.
    pub fn alive(&self) -> bool {
        self.pane("#{pane_dead}").is_some_and(|dead| dead == "0")
    }

    /// Waits until the program has exited (30 s at most) and returns its exit status.
    /// tmux marks the pane dead when its terminal closes and learns the status when
    /// it reaps the process; tmux 3.3a sometimes never reaps it (the program stays a
    /// zombie: it has exited), so the status is then read from `/proc` (Linux).
    pub fn wait_exit(&self) -> i32 {
        let pid = self.pane("#{pane_pid}").unwrap_or_default();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let pane = self.pane("#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}");
            let pane = pane.unwrap_or_else(|| panic!("the terminal is gone"));
            match pane.split(':').collect::<Vec<_>>()[..] {
                ["1", code, _] if !code.is_empty() => return code.parse().unwrap(),
                ["1", "", signal] if !signal.is_empty() => {
                    panic!("xcsh was killed by signal {signal}")
                }
                _ => {}
            }
            if let Some(status) = zombie_status(&pid) {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "xcsh did not exit; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types Ctrl-D and waits until the program has exited (30 s at most).
    pub fn ctrl_d(&self) {
        self.keys(&["C-d"]);
        self.wait_exit();
    }
}

/// The exit status of process `pid` if it has exited and is not reaped yet (a
/// zombie): field 52 of `/proc/PID/stat`, as `waitpid` reports it.
fn zombie_status(pid: &str) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
    if fields.first() != Some(&"Z") {
        return None;
    }
    let code: i32 = fields.get(49)?.parse().ok()?;
    assert_eq!(code & 0x7f, 0, "xcsh was killed by signal {}", code & 0x7f);
    Some((code >> 8) & 0xff)
}

/// The session file interactive xcsh named on `screen` (its `[session] PATH` line).
pub fn session_on(screen: &str) -> PathBuf {
    screen
        .lines()
        .find_map(|l| l.strip_prefix("[session] "))
        .map(|p| PathBuf::from(p.trim()))
        .unwrap_or_else(|| panic!("no [session] line on the screen:\n{screen}"))
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

pub fn tmux_available() -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").is_err(),
            "tmux is missing: scripts/setup-test-deps.sh installs it"
        );
        eprintln!("SKIPPED: tmux is not installed (run scripts/setup-test-deps.sh)");
    }
    found
}
