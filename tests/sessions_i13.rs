//! The real `xcsh` binary on where sessions live (issue 13): one sessions folder per
//! workspace (`/x/a-b` and `/x/a/b` never share one), old-layout folders still read,
//! a session belonging to its workspace root (the git root), `--resume` from another
//! directory continuing in the session's workspace, `--workspace DIR` moving it, and
//! writers leaving no `.lock` note beside the log.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_xcsh");

const FINAL_STEP: &str = r#"{"text":"all done"}"#;
const SLOW_STEP: &str = r#"{"text":"this answer streams slowly, twelve bytes a chunk, for a long while","chunk_delay_ms":200}"#;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// A directory under the test's root (created), canonical.
    fn dir(&self, rel: &str) -> PathBuf {
        let d = self.dir.path().join(rel);
        std::fs::create_dir_all(&d).unwrap();
        d.canonicalize().unwrap()
    }

    fn script(&self, name: &str, lines: &[&str]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, lines.join("\n")).unwrap();
        path
    }

    fn cmd(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(cwd)
            .env("XCSH_HOME", self.home())
            .stdin(Stdio::null());
        c
    }

    fn run(&self, cwd: &Path, args: &[&str]) -> Output {
        let out = self.cmd(cwd, args).output().unwrap();
        assert!(
            out.status.success(),
            "xcsh {args:?} in {}: {}",
            cwd.display(),
            stderr(&out)
        );
        out
    }

    /// A one-shot run of one final answer with the test tools; its session path.
    fn prompt(&self, cwd: &Path, extra: &[&str], prompt: &str) -> (PathBuf, String) {
        let script = self.script("final.jsonl", &[FINAL_STEP]);
        let mut args = vec![
            "run",
            "--tools",
            "test",
            "--script",
            script.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-p", prompt]);
        let out = self.run(cwd, &args);
        let err = stderr(&out);
        (session_of(&err), err)
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `session: PATH` line a one-shot run ends with.
fn session_of(stderr: &str) -> PathBuf {
    let line = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("session: "))
        .unwrap_or_else(|| panic!("no session line in {stderr}"));
    PathBuf::from(line)
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The header's recorded workspace.
fn workspace_of(path: &Path) -> String {
    lines(path)[0]["data"]["cwd"].as_str().unwrap().to_string()
}

/// The texts of the session's prompts, in file order.
fn prompts(path: &Path) -> Vec<String> {
    lines(path)
        .iter()
        .filter(|v| v["type"] == "user_message")
        .map(|v| v["data"]["text"].as_str().unwrap().to_string())
        .collect()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The folder name the first layout gave a workspace: its path with every character
/// but ASCII letters, digits, `.` and `_` made `-`, trimmed of `-`.
fn old_layout_name(ws: &Path) -> String {
    let slug: String = ws
        .display()
        .to_string()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    slug.trim_matches('-').to_string()
}

// ---- item 1: workspaces never share a sessions folder ----

#[test]
fn continue_in_a_b_continues_the_a_b_session_and_not_the_newer_one_of_a_slash_b() {
    let env = Env::new();
    let ab = env.dir("x/a-b");
    let a_b = env.dir("x/a/b");
    let (first, _) = env.prompt(&ab, &[], "first in a-b");
    let (other, _) = env.prompt(&a_b, &[], "first in a/b");
    assert_ne!(first.parent(), other.parent(), "one folder per workspace");
    let (continued, _) = env.prompt(&ab, &["--continue"], "second in a-b");
    assert_eq!(continued, first);
    assert_eq!(workspace_of(&continued), ab.display().to_string());
    assert_eq!(prompts(&continued), ["first in a-b", "second in a-b"]);
    assert_eq!(prompts(&other), ["first in a/b"]);
}

#[test]
fn an_old_layout_folder_is_read_but_only_sessions_recorded_in_this_workspace_are_continued() {
    let env = Env::new();
    let ab = env.dir("x/a-b");
    let a_b = env.dir("x/a/b");
    let (mine, _) = env.prompt(&ab, &[], "first in a-b");
    let (theirs, _) = env.prompt(&a_b, &[], "first in a/b");
    // Both as the first layout kept them: in the one folder both paths mapped to.
    let old = env.home().join("sessions").join(old_layout_name(&ab));
    assert_eq!(old_layout_name(&ab), old_layout_name(&a_b));
    std::fs::create_dir_all(&old).unwrap();
    let mut moved = Vec::new();
    for file in [&mine, &theirs] {
        let to = old.join(file.file_name().unwrap());
        if *file != to {
            std::fs::rename(file, &to).unwrap();
            if let Some(dir) = file.parent()
                && std::fs::read_dir(dir).unwrap().next().is_none()
            {
                std::fs::remove_dir(dir).unwrap();
            }
        }
        moved.push(to);
    }
    let (continued, _) = env.prompt(&ab, &["--continue"], "second in a-b");
    assert_eq!(continued, moved[0]);
    assert_eq!(prompts(&moved[0]), ["first in a-b", "second in a-b"]);
    assert_eq!(prompts(&moved[1]), ["first in a/b"]);
    // `xcsh sessions` lists this workspace's session of the old folder, not the other.
    let listed = env.run(&ab, &["sessions", "--json"]);
    let listed: Vec<serde_json::Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["path"], moved[0].display().to_string());
}

// ---- item 2: a session belongs to its workspace root ----

#[test]
fn a_run_in_a_subdirectory_of_a_git_repository_belongs_to_the_repository() {
    let env = Env::new();
    let repo = env.dir("repo");
    env.dir("repo/.git");
    let src = env.dir("repo/src");
    let (session, _) = env.prompt(&src, &[], "from src");
    assert_eq!(workspace_of(&session), repo.display().to_string());
}

#[test]
fn continue_from_a_subdirectory_finds_the_newest_session_of_the_repository() {
    let env = Env::new();
    let repo = env.dir("repo");
    env.dir("repo/.git");
    let deep = env.dir("repo/src/deep");
    let (session, _) = env.prompt(&repo, &[], "at the root");
    let (continued, _) = env.prompt(&deep, &["--continue"], "from deep inside");
    assert_eq!(continued, session);
    assert_eq!(prompts(&session), ["at the root", "from deep inside"]);
}

/// A script whose first step writes `marker.txt` with the standard tools.
fn write_marker_script(env: &Env) -> PathBuf {
    env.script(
        "marker.jsonl",
        &[
            r#"{"tool_calls":[{"name":"write","arguments":{"path":"marker.txt","content":"here"}}]}"#,
            FINAL_STEP,
        ],
    )
}

#[test]
fn resume_from_another_directory_runs_the_tools_in_the_sessions_workspace_and_says_so() {
    let env = Env::new();
    let home_ws = env.dir("one");
    let elsewhere = env.dir("two");
    let (session, _) = env.prompt(&home_ws, &[], "first");
    let script = write_marker_script(&env);
    let name = session.to_str().unwrap();
    let out = env.run(
        &elsewhere,
        &[
            "run",
            "--resume",
            name,
            "--script",
            script.to_str().unwrap(),
            "-p",
            "again",
        ],
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "xcsh: session {name} belongs to the workspace {}, not {}: continuing it there (its tools run there); add --workspace DIR to move it\n",
            home_ws.display(),
            elsewhere.display()
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(home_ws.join("marker.txt")).unwrap(),
        "here"
    );
    assert!(!elsewhere.join("marker.txt").exists());
    assert_eq!(prompts(&session), ["first", "again"]);
}

#[test]
fn resume_with_workspace_moves_the_session_there_as_an_entry() {
    let env = Env::new();
    let from = env.dir("one");
    let to = env.dir("two");
    let (session, _) = env.prompt(&from, &[], "first");
    let id = session
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .rsplit_once('_')
        .unwrap()
        .1
        .to_string();
    let script = write_marker_script(&env);
    let out = env.run(
        &to,
        &[
            "run",
            "--resume",
            &id,
            "--workspace",
            ".",
            "--script",
            script.to_str().unwrap(),
            "-p",
            "moved",
        ],
    );
    let err = stderr(&out);
    let moved = session_of(&err);
    assert_ne!(
        moved, session,
        "the file went to the new workspace's folder"
    );
    assert!(!session.exists());
    assert!(
        err.contains(&format!(
            "xcsh: moved session {id} from the workspace {} to {} (entry 5); its file is now {}\n",
            from.display(),
            to.display(),
            moved.display()
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(to.join("marker.txt")).unwrap(),
        "here"
    );
    assert!(!from.join("marker.txt").exists());
    let entries = lines(&moved);
    assert_eq!(entries[5]["type"], "workspace");
    assert_eq!(entries[5]["parent"], 4);
    assert_eq!(
        entries[5]["data"],
        serde_json::json!({"from": from.display().to_string(), "to": to.display().to_string()})
    );
    // Now it is the newest session of the new workspace, and no longer of the old.
    let (continued, _) = env.prompt(&to, &["--continue"], "third");
    assert_eq!(continued, moved);
    assert_eq!(prompts(&moved), ["first", "moved", "third"]);
    let out = env
        .cmd(&from, &["run", "--continue", "--tools", "test", "-p", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no session to continue in this workspace"),
        "{}",
        stderr(&out)
    );
    // The toolkit knows the entry: the log shows it, check and replay pass.
    let moved = moved.to_str().unwrap();
    let log = env.run(&to, &["log", moved]);
    assert!(
        String::from_utf8_lossy(&log.stdout).contains(&format!(
            "⇢ workspace #5: the session moved from {} to {}",
            from.display(),
            to.display()
        )),
        "{}",
        String::from_utf8_lossy(&log.stdout)
    );
    env.run(&to, &["check", moved]);
    env.run(&to, &["replay", moved]);
}

#[test]
fn resume_at_an_earlier_entry_with_workspace_branches_there_then_moves() {
    let env = Env::new();
    let from = env.dir("one");
    let to = env.dir("two");
    let (session, _) = env.prompt(&from, &[], "first");
    env.prompt(&from, &["--continue"], "second");
    let name = session.to_str().unwrap();
    // Entries 0-4: the first run; 5-8: the second. From entry 4, in `two`.
    let (moved, err) = env.prompt(
        &to,
        &[
            "--resume",
            name,
            "--at",
            "4",
            "--workspace",
            to.to_str().unwrap(),
        ],
        "instead",
    );
    assert!(
        err.contains("xcsh: continuing from entry 4 on a new branch (branch record 9)\n"),
        "{err}"
    );
    assert!(err.contains("(entry 10); its file is now "), "{err}");
    let entries = lines(&moved);
    let shape: Vec<serde_json::Value> = (9..12)
        .map(|i| serde_json::json!([entries[i]["type"], entries[i]["parent"]]))
        .collect();
    assert_eq!(
        shape,
        [
            serde_json::json!(["branch", 4]),
            serde_json::json!(["workspace", 9]),
            serde_json::json!(["user_message", 10])
        ]
    );
    assert_eq!(prompts(&moved), ["first", "second", "instead"]);
}

#[test]
fn resume_of_a_session_whose_workspace_is_gone_asks_for_workspace() {
    let env = Env::new();
    let gone = env.dir("gone");
    let (session, _) = env.prompt(&gone, &[], "first");
    std::fs::remove_dir(&gone).unwrap();
    let here = env.dir("here");
    let name = session.to_str().unwrap();
    let out = env
        .cmd(
            &here,
            &["run", "--resume", name, "--tools", "test", "-p", "x"],
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "xcsh: error: session {name} belongs to the workspace {}, which is not a directory (any more); add --workspace DIR to move it\n",
            gone.display()
        )
    );
}

// ---- item 17: writers leave no litter ----

#[test]
fn labelling_a_session_kept_in_a_repository_leaves_no_file_beside_it() {
    let env = Env::new();
    let ws = env.dir("ws");
    let (session, _) = env.prompt(&ws, &[], "first");
    let kept = env.dir("repo/sessions").join("s.jsonl");
    std::fs::copy(&session, &kept).unwrap();
    env.run(&ws, &["label", kept.to_str().unwrap(), "1", "the prompt"]);
    assert_eq!(names_in(kept.parent().unwrap()), ["s.jsonl"]);
    assert_eq!(
        names_in(session.parent().unwrap()).len(),
        1,
        "a run leaves only its log"
    );
}

/// Starts a slow run with `--json`; returns it once its first text delta is out.
fn start_streaming(env: &Env, cwd: &Path, script: &Path) -> (Child, PathBuf) {
    let mut child = env
        .cmd(
            cwd,
            &[
                "run",
                "--tools",
                "test",
                "--json",
                "--script",
                script.to_str().unwrap(),
                "go",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut path = None;
    for line in lines.by_ref() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["type"] == "run_started" {
            path = Some(PathBuf::from(v["session_path"].as_str().unwrap()));
        }
        if v["type"] == "text_delta" {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    (child, path.unwrap())
}

#[test]
fn the_stale_note_of_a_killed_run_is_replaced_by_the_next_run_and_then_removed() {
    let env = Env::new();
    let ws = env.dir("ws");
    let slow = env.script("slow.jsonl", &[SLOW_STEP]);
    let (mut child, path) = start_streaming(&env, &ws, &slow);
    let pid = child.id();
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    let mut note = path.clone().into_os_string();
    note.push(".lock");
    let stale = std::fs::read_to_string(&note).unwrap();
    assert!(stale.starts_with(&format!("pid {pid} (")), "{stale}");
    let (continued, _) = env.prompt(&ws, &["--continue"], "again");
    assert_eq!(continued, path);
    assert_eq!(
        names_in(path.parent().unwrap()),
        [path.file_name().unwrap().to_string_lossy().into_owned()]
    );
}

#[test]
fn a_fork_made_elsewhere_goes_to_the_folder_of_its_sources_workspace() {
    let env = Env::new();
    let ws = env.dir("ws");
    let elsewhere = env.dir("elsewhere");
    let (session, _) = env.prompt(&ws, &[], "first");
    let out = env.run(&elsewhere, &["fork", session.to_str().unwrap(), "4"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let fork = PathBuf::from(
        text.lines()
            .find_map(|l| l.strip_prefix("continue it with: xcsh run --resume "))
            .unwrap(),
    );
    assert_eq!(fork.parent(), session.parent(), "{text}");
    // The fork is the workspace's newest session now.
    let (continued, _) = env.prompt(&ws, &["--continue"], "on the fork");
    assert_eq!(continued, fork);
    assert_eq!(prompts(&fork), ["first", "on the fork"]);
}
