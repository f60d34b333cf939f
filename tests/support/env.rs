//! A temporary home and workspace for running the real `xcsh` binary against a
//! local server, and reading back the session it wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use xcsh_core::log::{Body, Record, read_session};

use super::sse::Wire;

/// The binary under test (absent for test crates outside the `xcsh` package, which
/// share this support code but do not run the binary).
pub const BIN: &str = match option_env!("CARGO_BIN_EXE_xcsh") {
    Some(bin) => bin,
    None => "xcsh",
};
pub const SECRET: &str = "sk-test-SECRET-4242";

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let env = Env {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(env.workspace()).unwrap();
        std::fs::write(env.workspace().join("a.txt"), "hello from a.txt\n").unwrap();
        env
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(self.workspace())
            .env("XCSH_HOME", self.dir.path().join("home"))
            .env("OPENAI_API_KEY", SECRET)
            .env("ANTHROPIC_API_KEY", SECRET)
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_BASE_URL")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    pub fn run_against(&self, wire: Wire, url: &str, extra: &[&str]) -> Output {
        let base = wire.base_url(url);
        let mut args = vec![
            "run",
            "--provider",
            wire.flag(),
            "--base-url",
            &base,
            "--model",
            "m",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-p", "read a.txt"]);
        self.run(&args)
    }

    pub fn session(&self) -> PathBuf {
        let root = self.dir.path().join("home/sessions");
        let dir = std::fs::read_dir(root)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|f| f.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        files.pop().unwrap()
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The step entries of a session.
pub fn steps(path: &Path) -> Vec<xcsh_core::log::StepRecord> {
    read_session(path)
        .unwrap()
        .entries
        .into_iter()
        .filter_map(|e| match e.body {
            Body::Record(Record::Step(s)) => Some(s),
            _ => None,
        })
        .collect()
}
