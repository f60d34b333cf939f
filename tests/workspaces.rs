//! The real `xcsh` binary on where sessions live (issue 13): one sessions folder per
//! workspace (`/x/a-b` and `/x/a/b` never share one), old-layout folders still read,
//! a session belonging to its workspace root (the git root), `--resume` from another
//! directory continuing in the session's workspace, `--workspace DIR` moving it, and
//! writers leaving no `.lock` note beside the log.

mod support;

use std::path::{Path, PathBuf};

use support::assert_contains;
use support::env::{
    Env, lines, names_in, prompts, session_id, session_of, stderr, stdout, streaming, succeeded,
};

const FINAL_STEP: &str = r#"{"text":"all done"}"#;
const SLOW_STEP: &str = r#"{"text":"this answer streams slowly, twelve bytes a chunk, for a long while","chunk_delay_ms":200}"#;

/// A one-shot run in `cwd` of one final answer with the test tools; its session
/// path and stderr.
fn prompt(env: &Env, cwd: &Path, extra: &[&str], text: &str) -> (PathBuf, String) {
    let script = env.script("final.jsonl", &[FINAL_STEP]);
    let out = succeeded(env.scripted_in(cwd, &script, &[extra, &["-p", text]].concat()));
    (session_of(&out), stderr(&out))
}

/// The header's recorded workspace.
fn workspace_of(path: &Path) -> String {
    lines(path)[0]["data"]["cwd"].as_str().unwrap().to_string()
}

/// The folder name the first layout gave a workspace: its path with every character
/// but ASCII letters, digits, `.` and `_` made `-`, trimmed of `-`; for the paths of
/// these tests (nothing else but `-` and `/`), its `/` made `-`, trimmed.
fn old_layout_name(ws: &Path) -> String {
    let path = ws.display().to_string();
    assert!(
        path.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')),
        "{path}"
    );
    path.replace('/', "-").trim_matches('-').to_string()
}

// ---- item 1: workspaces never share a sessions folder ----

/// The workspaces `x/a-b` and `x/a/b`, each with a session of one prompt (`a-b`'s
/// first): each workspace and its session.
fn sessions_in_a_b_and_a_slash_b(env: &Env) -> [(PathBuf, PathBuf); 2] {
    ["a-b", "a/b"].map(|name| {
        let ws = env.subdir(&format!("x/{name}"));
        let (session, _) = prompt(env, &ws, &[], &format!("first in {name}"));
        (ws, session)
    })
}

#[test]
fn continue_in_a_b_continues_the_a_b_session_and_not_the_newer_one_of_a_slash_b() {
    let env = Env::new();
    let [(ab, first), (_, other)] = sessions_in_a_b_and_a_slash_b(&env);
    assert_ne!(first.parent(), other.parent(), "one folder per workspace");
    let (continued, _) = prompt(&env, &ab, &["--continue"], "second in a-b");
    assert_eq!(continued, first);
    assert_eq!(workspace_of(&continued), ab.display().to_string());
    assert_eq!(prompts(&continued), ["first in a-b", "second in a-b"]);
    assert_eq!(prompts(&other), ["first in a/b"]);
}

#[test]
fn an_old_layout_folder_is_read_but_only_sessions_recorded_in_this_workspace_are_continued() {
    let env = Env::new();
    let [(ab, mine), (a_b, theirs)] = sessions_in_a_b_and_a_slash_b(&env);
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
    let (continued, _) = prompt(&env, &ab, &["--continue"], "second in a-b");
    assert_eq!(continued, moved[0]);
    assert_eq!(prompts(&moved[0]), ["first in a-b", "second in a-b"]);
    assert_eq!(prompts(&moved[1]), ["first in a/b"]);
    // `xcsh sessions` lists this workspace's session of the old folder, not the other.
    let listed = env.ok_in(&ab, &["sessions", "--json"]);
    let listed: Vec<serde_json::Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["path"], moved[0].display().to_string());
}

// ---- item 2: a session belongs to its workspace root ----

/// A git repository `repo` (it has a `.git`) and its subdirectory `sub` (created).
fn a_repository_and(env: &Env, sub: &str) -> (PathBuf, PathBuf) {
    let repo = env.subdir("repo");
    env.subdir("repo/.git");
    (repo, env.subdir(&format!("repo/{sub}")))
}

#[test]
fn a_run_in_a_subdirectory_of_a_git_repository_belongs_to_the_repository() {
    let env = Env::new();
    let (repo, src) = a_repository_and(&env, "src");
    let (session, _) = prompt(&env, &src, &[], "from src");
    assert_eq!(workspace_of(&session), repo.display().to_string());
}

#[test]
fn continue_from_a_subdirectory_finds_the_newest_session_of_the_repository() {
    let env = Env::new();
    let (repo, deep) = a_repository_and(&env, "src/deep");
    let (session, _) = prompt(&env, &repo, &[], "at the root");
    let (continued, _) = prompt(&env, &deep, &["--continue"], "from deep inside");
    assert_eq!(continued, session);
    assert_eq!(prompts(&session), ["at the root", "from deep inside"]);
}

/// A workspace `name` (created) with a session of one prompt (`first`): the
/// workspace and the session.
fn a_session_in(env: &Env, name: &str) -> (PathBuf, PathBuf) {
    let ws = env.subdir(name);
    let (session, _) = prompt(env, &ws, &[], "first");
    (ws, session)
}

/// Two workspaces, `one` and `two`, and a session of one prompt (`first`) in `one`.
fn a_session_in_one_of_two(env: &Env) -> (PathBuf, PathBuf, PathBuf) {
    let (one, session) = a_session_in(env, "one");
    (one, env.subdir("two"), session)
}

/// `xcsh run --resume SESSION EXTRA -p TEXT` in `cwd`, which must succeed, with a
/// script whose first step writes `marker.txt` with the standard tools.
fn resume_writing_a_marker(
    env: &Env,
    cwd: &Path,
    session: &str,
    extra: &[&str],
    text: &str,
) -> std::process::Output {
    let script = env.script(
        "marker.jsonl",
        &[
            r#"{"tool_calls":[{"name":"write","arguments":{"path":"marker.txt","content":"here"}}]}"#,
            FINAL_STEP,
        ],
    );
    let script = script.to_str().unwrap();
    let head = ["run", "--resume", session];
    let tail = ["--script", script, "-p", text];
    env.ok_in(cwd, &[&head[..], extra, &tail].concat())
}

/// The marker the script of [`resume_writing_a_marker`] writes is in `there`, not in
/// `not_there`.
fn assert_marker_written(there: &Path, not_there: &Path) {
    assert_eq!(
        std::fs::read_to_string(there.join("marker.txt")).unwrap(),
        "here"
    );
    assert!(!not_there.join("marker.txt").exists());
}

/// The stderr of `xcsh run ARGS --tools test -p x` in `cwd`, which must fail with 1.
fn run_fails(env: &Env, cwd: &Path, args: &[&str]) -> String {
    let out = env.run_in(
        cwd,
        &[&["run"], args, &["--tools", "test", "-p", "x"]].concat(),
    );
    assert_eq!(out.status.code(), Some(1));
    stderr(&out)
}

#[test]
fn resume_from_another_directory_runs_the_tools_in_the_sessions_workspace_and_says_so() {
    let env = Env::new();
    let (home_ws, elsewhere, session) = a_session_in_one_of_two(&env);
    let name = session.to_str().unwrap();
    let out = resume_writing_a_marker(&env, &elsewhere, name, &[], "again");
    let err = stderr(&out);
    assert_contains(
        &err,
        &format!(
            "xcsh: session {name} belongs to the workspace {}, not {}: continuing it there (its tools run there); add --workspace DIR to move it\n",
            home_ws.display(),
            elsewhere.display()
        ),
    );
    assert_marker_written(&home_ws, &elsewhere);
    assert_eq!(prompts(&session), ["first", "again"]);
}

#[test]
fn resume_with_workspace_moves_the_session_there_as_an_entry() {
    let env = Env::new();
    let (from, to, session) = a_session_in_one_of_two(&env);
    let id = session_id(&session);
    let out = resume_writing_a_marker(&env, &to, &id, &["--workspace", "."], "moved");
    let err = stderr(&out);
    let moved = session_of(&out);
    assert_ne!(
        moved, session,
        "the file went to the new workspace's folder"
    );
    assert!(!session.exists());
    assert_contains(
        &err,
        &format!(
            "xcsh: moved session {id} from the workspace {} to {} (entry 5); its file is now {}\n",
            from.display(),
            to.display(),
            moved.display()
        ),
    );
    assert_marker_written(&to, &from);
    let entries = lines(&moved);
    assert_eq!(entries[5]["type"], "workspace");
    assert_eq!(entries[5]["parent"], 4);
    assert_eq!(
        entries[5]["data"],
        serde_json::json!({"from": from.display().to_string(), "to": to.display().to_string()})
    );
    // Now it is the newest session of the new workspace, and no longer of the old.
    let (continued, _) = prompt(&env, &to, &["--continue"], "third");
    assert_eq!(continued, moved);
    assert_eq!(prompts(&moved), ["first", "moved", "third"]);
    assert_contains(
        &run_fails(&env, &from, &["--continue"]),
        "no session to continue in this workspace",
    );
    // The toolkit knows the entry: the log shows it, check and replay pass.
    let moved = moved.to_str().unwrap();
    let log = env.ok_in(&to, &["log", moved]);
    assert_contains(
        &String::from_utf8_lossy(&log.stdout),
        &format!(
            "⇢ workspace #5: the session moved from {} to {}",
            from.display(),
            to.display()
        ),
    );
    env.ok_in(&to, &["check", moved]);
    env.ok_in(&to, &["replay", moved]);
}

#[test]
fn resume_at_an_earlier_entry_with_workspace_branches_there_then_moves() {
    let env = Env::new();
    let (from, to, session) = a_session_in_one_of_two(&env);
    prompt(&env, &from, &["--continue"], "second");
    let name = session.to_str().unwrap();
    // Entries 0-4: the first run; 5-8: the second. From entry 4, in `two`.
    let (moved, err) = prompt(
        &env,
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
    assert_contains(
        &err,
        "xcsh: continuing from entry 4 on a new branch (branch record 9)\n",
    );
    assert_contains(&err, "(entry 10); its file is now ");
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
    let (gone, session) = a_session_in(&env, "gone");
    std::fs::remove_dir(&gone).unwrap();
    let here = env.subdir("here");
    let name = session.to_str().unwrap();
    assert_eq!(
        run_fails(&env, &here, &["--resume", name]),
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
    let (ws, session) = a_session_in(&env, "ws");
    let kept = env.subdir("repo/sessions").join("s.jsonl");
    std::fs::copy(&session, &kept).unwrap();
    env.ok_in(&ws, &["label", kept.to_str().unwrap(), "1", "the prompt"]);
    assert_eq!(names_in(kept.parent().unwrap()), ["s.jsonl"]);
    assert_eq!(
        names_in(session.parent().unwrap()).len(),
        1,
        "a run leaves only its log"
    );
}

#[test]
fn the_stale_note_of_a_killed_run_is_replaced_by_the_next_run_and_then_removed() {
    let env = Env::new();
    let ws = env.subdir("ws");
    let slow = env.script("slow.jsonl", &[SLOW_STEP]);
    let (mut child, path) = streaming(env.scripted_in(&ws, &slow, &["--json", "go"]), 1);
    let pid = child.id();
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    let mut note = path.clone().into_os_string();
    note.push(".lock");
    let stale = std::fs::read_to_string(&note).unwrap();
    assert!(stale.starts_with(&format!("pid {pid} (")), "{stale}");
    let (continued, _) = prompt(&env, &ws, &["--continue"], "again");
    assert_eq!(continued, path);
    assert_eq!(
        names_in(path.parent().unwrap()),
        [path.file_name().unwrap().to_string_lossy().into_owned()]
    );
}

#[test]
fn a_fork_made_elsewhere_goes_to_the_folder_of_its_sources_workspace() {
    let env = Env::new();
    let (ws, session) = a_session_in(&env, "ws");
    let elsewhere = env.subdir("elsewhere");
    let out = env.ok_in(&elsewhere, &["fork", session.to_str().unwrap(), "4"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let fork = PathBuf::from(
        text.lines()
            .find_map(|l| l.strip_prefix("continue it with: xcsh run --resume "))
            .unwrap(),
    );
    assert_eq!(fork.parent(), session.parent(), "{text}");
    // The fork is the workspace's newest session now.
    let (continued, _) = prompt(&env, &ws, &["--continue"], "on the fork");
    assert_eq!(continued, fork);
    assert_eq!(prompts(&fork), ["first", "on the fork"]);
}

// ---- an unreadable session file ----

/// A workspace `ws` with a session (as [`a_session_in`]) and a newer copy of it
/// named `…_badbadbadbad` with its line 3 cut in half: the workspace, the session
/// and the copy.
fn a_session_and_a_corrupt_newer_copy(env: &Env) -> (PathBuf, PathBuf, PathBuf) {
    let (ws, session) = a_session_in(env, "ws");
    let text = std::fs::read_to_string(&session).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let half = lines[2].len() / 2;
    lines[2] = &lines[2][..half];
    let bad = session
        .parent()
        .unwrap()
        .join("2999-01-01T00-00-00-000Z_badbadbadbad.jsonl");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    (ws, session, bad)
}

#[test]
fn sessions_lists_the_readable_sessions_and_names_a_corrupt_file_once_after_them() {
    let env = Env::new();
    let (ws, session, bad) = a_session_and_a_corrupt_newer_copy(&env);
    let out = env.run_in(&ws, &["sessions", "--json"]);
    let listed: Vec<String> = stdout(&out)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["path"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        (out.status.code(), listed, stderr(&out)),
        (
            Some(0),
            vec![session.display().to_string()],
            format!(
                "! {}:3: malformed entry: the line has no trailing \"hash\" field\n",
                bad.display()
            )
        )
    );
}

#[test]
fn continue_stops_at_an_unreadable_newest_session_and_names_the_one_to_resume() {
    let env = Env::new();
    let (ws, session, bad) = a_session_and_a_corrupt_newer_copy(&env);
    let script = env.script("final.jsonl", &[FINAL_STEP]);
    let out = env
        .scripted_in(&ws, &script, &["--continue", "-p", "more"])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), stderr(&out)),
        (
            Some(1),
            format!(
                "xcsh: error: --continue: the newest session of this workspace cannot be read: {}:3: malformed entry: the line has no trailing \"hash\" field\n  to continue the newest session that can be read: --resume {} (`xcsh sessions` lists them)\n",
                bad.display(),
                session_id(&session)
            )
        )
    );
    assert_eq!(prompts(&session), ["first"], "nothing was continued");
}

/// A workspace without sessions lists nothing, and says so on stderr, with where to
/// look instead; the exit is a success.
#[test]
fn sessions_in_a_workspace_without_any_says_so_and_names_all() {
    let env = Env::new();
    let ws = env.subdir("empty");
    let out = env.run_in(&ws, &["sessions"]);
    let ws = ws.canonicalize().unwrap();
    assert_eq!(
        (out.status.code(), stdout(&out), stderr(&out)),
        (
            Some(0),
            String::new(),
            format!(
                "no sessions in this workspace ({}) yet: `xcsh` starts one; `xcsh sessions --all` lists every workspace's\n",
                ws.display()
            )
        )
    );
}
