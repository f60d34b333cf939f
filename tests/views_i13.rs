//! Issue 13, views: a fork is named by its own id everywhere (the id in its file name,
//! which `--resume` takes): `xcsh sessions`, the `tree` header and the `run_started`
//! event of a run continued in it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_xcsh");

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn workspace(&self) -> PathBuf {
        let w = self.dir.path().join("work");
        std::fs::create_dir_all(&w).unwrap();
        w
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(self.workspace())
            .env("XCSH_HOME", self.dir.path().join("home"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "xcsh {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn sessions(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for dir in std::fs::read_dir(self.dir.path().join("home/sessions")).unwrap() {
            for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
                let p = f.unwrap().path();
                if p.extension().is_some_and(|e| e == "jsonl") {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }

    fn script(&self, name: &str, lines: &[&str]) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, lines.join("\n")).unwrap();
        path.display().to_string()
    }
}

fn file_id(path: &Path) -> String {
    let stem = path.file_stem().unwrap().to_str().unwrap();
    stem.rsplit_once('_').unwrap().1.to_string()
}

#[test]
fn a_fork_is_named_by_its_own_id_in_sessions_tree_and_run_started() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[r#"{"text":"done"}"#]);
    env.ok(&["run", "--tools", "test", "--script", &script, "-p", "first"]);
    let source = env.sessions().pop().unwrap();
    env.ok(&["fork", source.to_str().unwrap(), "4"]);
    let fork = env
        .sessions()
        .into_iter()
        .find(|p| *p != source)
        .expect("the fork, a session of this workspace");
    let (source_id, fork_id) = (file_id(&source), file_id(&fork));
    assert_ne!(source_id, fork_id);

    let listed: Vec<String> = env
        .ok(&["sessions", "--json"])
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let tree = env.ok(&["tree", &fork_id]);
    let header: Vec<&str> = tree.lines().take(2).collect();
    let run = env.ok(&[
        "run", "--json", "--tools", "test", "--script", &script, "--resume", &fork_id, "more",
    ]);
    let started = run
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "run_started")
        .unwrap();
    assert_eq!(
        (listed, header, started["session_id"].as_str().unwrap(),),
        (
            vec![source_id.clone(), fork_id.clone()],
            vec![
                format!("forked from {source_id} @ 4").as_str(),
                format!("#0 session {fork_id} {}", env.workspace().display()).as_str(),
            ],
            fork_id.as_str(),
        )
    );
}
