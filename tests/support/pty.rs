//! A pseudo-terminal for the end-to-end tests: the child's stdin, stdout and stderr
//! are a real terminal (so `isatty` is true and the interactive mode starts), and the
//! test reads every byte the child writes to it, control sequences included.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Pty {
    master: File,
    seen: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    child: Child,
}

impl Pty {
    /// Starts `command` on a new 160×50 terminal.
    pub fn spawn(mut command: Command) -> Pty {
        let (mut master, mut slave) = (0, 0);
        let size = libc::winsize {
            ws_row: 50,
            ws_col: 160,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two new descriptors into `master` and `slave`; the
        // name and termios pointers may be null.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors are new and owned by nothing else.
        let (master, slave) = unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        command
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        let child = command.spawn().unwrap();
        // The command holds the parent's copies of the terminal's slave side: drop
        // it, so that reading ends when the child has closed its copies.
        drop(command);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut from = master.try_clone().unwrap();
        let into = Arc::clone(&seen);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Linux reports EIO once every slave descriptor is closed.
            while let Ok(n @ 1..) = from.read(&mut buf) {
                into.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            master,
            seen,
            reader: Some(reader),
            child,
        }
    }

    /// Every byte written to the terminal so far.
    pub fn seen(&self) -> Vec<u8> {
        self.seen.lock().unwrap().clone()
    }

    /// Types `text` (a line ends with `\r`, as the Enter key sends).
    pub fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
    }

    /// Waits until the terminal has shown `text` `times` times; returns everything
    /// shown.
    pub fn wait_for(&self, text: &str, times: usize) -> String {
        self.wait_until(&format!("{text:?} ×{times}"), |seen| {
            seen.matches(text).count() >= times
        })
    }

    /// Waits until what the terminal has shown satisfies `done` (30 s at most: CI
    /// machines can be busy); returns everything shown.
    pub fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        self.shown_until(Duration::from_secs(30), done, |seen| {
            format!("waited for {what}; the terminal showed:\n{seen}\n(as bytes: {seen:?})")
        })
    }

    /// Waits until what the terminal has shown satisfies `done`, `limit` at most
    /// (failing with `failure(shown)`); returns everything shown.
    pub fn shown_until(
        &self,
        limit: Duration,
        done: impl Fn(&str) -> bool,
        failure: impl Fn(&str) -> String,
    ) -> String {
        crate::support::poll(
            limit,
            Duration::from_millis(20),
            || String::from_utf8_lossy(&self.seen()).into_owned(),
            |seen| done(seen),
            |seen| failure(seen),
        )
    }

    /// Waits for the child to exit; returns its status and every byte it wrote.
    pub fn finish(mut self) -> (ExitStatus, Vec<u8>) {
        let status = self.child.wait().unwrap();
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        (status, self.seen())
    }
}

impl Drop for Pty {
    /// A test that failed before [`Pty::finish`] leaves no process behind.
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
