//! A real terminal for tests of the interactive mode: tmux on a private socket
//! (send-keys, capture-pane), and waiting for text on its screen (bounded polling).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn start(cwd: &Path, command: &str) -> Tmux {
        let tmux = Tmux {
            socket: format!("xcsh-test-{}", std::process::id()),
        };
        let status = tmux
            .cmd()
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
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if screen.matches(text).count() >= times {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited for {text:?} ×{times}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn alive(&self) -> bool {
        self.cmd()
            .args(["has-session", "-t", "t"])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Types Ctrl-D and waits until the program has exited (30 s at most).
    pub fn ctrl_d(&self) {
        self.keys(&["C-d"]);
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.alive() {
            assert!(Instant::now() < deadline, "xcsh did not exit on Ctrl-D");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
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
