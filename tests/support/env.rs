//! A temporary home and workspace for running the real `xcsh` binary (one-shot, in
//! a terminal, or against a local server), and reading back what it wrote: its
//! output, its sessions and their entries.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use xcsh_log::{Body, Entry, Record, StepRecord, read_session};
use xcsh_machine::{EntryId, ToolOutcome};

use super::mock_server::{MockServer, Received, Reply};
use super::sse::Wire;
use super::tmux::{Tmux, tmux_available};

/// The binary under test (absent for test crates outside the `xcsh` package, which
/// share this support code but do not run the binary).
pub const BIN: &str = match option_env!("CARGO_BIN_EXE_xcsh") {
    Some(bin) => bin,
    None => "xcsh",
};
pub const SECRET: &str = "sk-test-SECRET-4242";

/// What a test must not inherit from the machine it runs on: provider keys and
/// addresses, and `NO_COLOR`.
const UNSET: [&str; 5] = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "NO_COLOR",
];

/// A test's own directory: `home/` (its `XCSH_HOME`) and `work/` (the workspace the
/// binary runs in, created empty), beside any file the test writes there.
pub struct Env {
    pub dir: tempfile::TempDir,
    /// Variables set for every command of this test.
    vars: Vec<(&'static str, &'static str)>,
}

impl Env {
    pub fn new() -> Env {
        let env = Env {
            dir: tempfile::tempdir().unwrap(),
            vars: Vec::new(),
        };
        std::fs::create_dir_all(env.workspace()).unwrap();
        env
    }

    /// An environment with the sandbox off (`sandbox = "off"` in its config), for
    /// the tests of what contains a call's processes without it: with the sandbox
    /// on, a call's PID namespace ends its processes before any scan could see them.
    pub fn unsandboxed() -> Env {
        let env = Env::new();
        env.config("sandbox = \"off\"\n");
        env
    }

    /// For the wire tests: the workspace holds `a.txt`, which the tool steps of
    /// `sse.rs` read, and both providers' key is [`SECRET`].
    pub fn for_wires() -> Env {
        Env::new()
            .with_file("a.txt", "hello from a.txt\n")
            .with_var("OPENAI_API_KEY", SECRET)
            .with_var("ANTHROPIC_API_KEY", SECRET)
    }

    /// The workspace is a git repository (it has a `.git`) whose `AGENTS.md` is `text`.
    pub fn with_agents_md(self, text: &str) -> Env {
        std::fs::create_dir_all(self.workspace().join(".git")).unwrap();
        self.with_file("AGENTS.md", text)
    }

    /// Writes `text` to the workspace file `name`.
    pub fn with_file(self, name: &str, text: &str) -> Env {
        std::fs::write(self.workspace().join(name), text).unwrap();
        self
    }

    /// Sets `var` for every command of this test (a terminal's too).
    pub fn with_var(mut self, var: &'static str, value: &'static str) -> Env {
        self.vars.push((var, value));
        self
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// A directory under the test's directory (created), canonical.
    pub fn subdir(&self, rel: &str) -> PathBuf {
        let d = self.dir.path().join(rel);
        std::fs::create_dir_all(&d).unwrap();
        d.canonicalize().unwrap()
    }

    /// Writes `text` to `name` in the test's directory (beside the workspace).
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes `text` to this test's `config.toml` (its home is created); its path.
    pub fn config(&self, text: &str) -> PathBuf {
        std::fs::create_dir_all(self.home()).unwrap();
        let path = self.home().join("config.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// What `xcsh config --json` prints, which must succeed.
    pub fn config_json(&self) -> serde_json::Value {
        serde_json::from_str(&self.ok(&["config", "--json"])).unwrap()
    }

    /// `xcsh run ARGS` on the OpenAI wire at a port nothing listens on (for
    /// `--show-context`, which sends nothing), which must succeed.
    pub fn offline(&self, args: &[&str]) -> Output {
        let out = self.run_on(Wire::OpenAi, "http://127.0.0.1:9", args);
        assert!(out.status.success(), "{}", stderr(&out));
        out
    }

    /// A script of the faux provider, one step a line, in the test's directory.
    pub fn script(&self, name: &str, lines: &[&str]) -> PathBuf {
        self.file(name, &lines.join("\n"))
    }

    /// `xcsh ARGS` in `cwd`, with this test's home and variables and no stdin.
    pub fn cmd_in(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(cwd)
            .env("XCSH_HOME", self.home())
            .stdin(Stdio::null());
        for var in UNSET {
            c.env_remove(var);
        }
        for (var, value) in &self.vars {
            c.env(var, value);
        }
        c
    }

    /// `xcsh ARGS` in the workspace.
    pub fn cmd(&self, args: &[&str]) -> Command {
        self.cmd_in(&self.workspace(), args)
    }

    pub fn run_in(&self, cwd: &Path, args: &[&str]) -> Output {
        self.cmd_in(cwd, args).output().unwrap()
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// `xcsh ARGS` in `cwd`, which must succeed.
    pub fn ok_in(&self, cwd: &Path, args: &[&str]) -> Output {
        succeeded(self.cmd_in(cwd, args))
    }

    /// The stdout of `xcsh ARGS` in the workspace, which must succeed.
    pub fn ok(&self, args: &[&str]) -> String {
        stdout(&succeeded(self.cmd(args)))
    }

    /// `xcsh run --tools test --script SCRIPT ARGS` in `cwd`: the faux provider plays
    /// SCRIPT, with the test tools (`echo`, `sleep`).
    pub fn scripted_in(&self, cwd: &Path, script: impl AsRef<Path>, args: &[&str]) -> Command {
        self.faux(cwd, "test", script.as_ref(), args)
    }

    /// `xcsh run --tools standard --script SCRIPT ARGS` in the workspace: the faux
    /// provider plays SCRIPT, with the seven standard tools.
    pub fn standard(&self, script: impl AsRef<Path>, args: &[&str]) -> Command {
        self.faux(&self.workspace(), "standard", script.as_ref(), args)
    }

    /// [`Env::standard`], run to its end.
    pub fn run_standard(&self, script: impl AsRef<Path>, args: &[&str]) -> Output {
        self.standard(script, args).output().unwrap()
    }

    fn faux(&self, cwd: &Path, tools: &str, script: &Path, args: &[&str]) -> Command {
        let script = script.to_str().unwrap();
        let mut all = vec!["run", "--tools", tools, "--script", script];
        all.extend_from_slice(args);
        self.cmd_in(cwd, &all)
    }

    /// [`Env::scripted_in`] the workspace.
    pub fn scripted(&self, script: impl AsRef<Path>, args: &[&str]) -> Command {
        self.scripted_in(&self.workspace(), script, args)
    }

    pub fn run_script(&self, script: impl AsRef<Path>, args: &[&str]) -> Output {
        self.scripted(script, args).output().unwrap()
    }

    /// [`Env::run_script`] with the faux user playing `user` (its script, one event a
    /// line: `--user-script`).
    pub fn run_script_as_user(
        &self,
        script: impl AsRef<Path>,
        user: &[&str],
        args: &[&str],
    ) -> Output {
        let user = self.script("user.jsonl", user);
        let head = ["--user-script", user.to_str().unwrap()];
        self.run_script(script, &[&head[..], args].concat())
    }

    /// The stdout of [`Env::scripted`], which must succeed.
    pub fn ok_script(&self, script: impl AsRef<Path>, args: &[&str]) -> String {
        stdout(&succeeded(self.scripted(script, args)))
    }

    /// `xcsh ARGS --provider WIRE --base-url URL… --model m` in the workspace.
    pub fn cmd_on(&self, wire: Wire, url: &str, args: &[&str]) -> Command {
        let base = wire.base_url(url);
        let provider = [
            "--provider",
            wire.flag(),
            "--base-url",
            &base,
            "--model",
            "m",
        ];
        self.cmd(&[args, &provider].concat())
    }

    /// `xcsh run ARGS --provider WIRE --base-url URL… --model m`.
    pub fn run_on(&self, wire: Wire, url: &str, args: &[&str]) -> Output {
        self.cmd_on(wire, url, &[&["run"], args].concat())
            .output()
            .unwrap()
    }

    /// [`Env::run_on`] with `EXTRA`, prompting `read a.txt`.
    pub fn run_against(&self, wire: Wire, url: &str, extra: &[&str]) -> Output {
        self.run_on(wire, url, &[extra, &["-p", "read a.txt"]].concat())
    }

    /// `xcsh run --compact-at AT -p "read a.txt then b.txt"` against `server` (on
    /// the OpenAI wire), which must succeed after four requests, the third of them
    /// the summary request; its output and the requests.
    pub fn compacting_run(&self, server: &MockServer, at: &str) -> (Output, Vec<Received>) {
        let out = self.run_on(
            Wire::OpenAi,
            &server.url(),
            &["--compact-at", at, "-p", "read a.txt then b.txt"],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let received = server.received();
        assert_eq!(received.len(), 4);
        assert!(
            received[2]
                .body
                .contains("Summarize the conversation so far")
        );
        (out, received)
    }

    /// For a test in a terminal: this environment and a server playing `replies`,
    /// or `None` where tmux is not installed (the test then checks nothing).
    pub fn in_tmux_with(self, replies: Vec<Reply>) -> Option<(Env, MockServer)> {
        if !tmux_available() {
            return None;
        }
        Some((self, MockServer::start(replies)))
    }

    /// Interactive xcsh in its plain line mode (`--plain`) on `wire` against the
    /// server at `url`, with `flags`, in a terminal (tmux) in the workspace;
    /// returned once it shows its greeting.
    pub fn interactive(&self, wire: Wire, url: &str, flags: &str) -> Tmux {
        let flags = format!("--plain {flags}");
        let tmux = self.in_terminal(wire, url, flags.trim(), "");
        tmux.wait_for("/help for commands", 1);
        tmux
    }

    /// xcsh's terminal UI on `wire` against the server at `url`, with `flags` and
    /// the environment `vars` (`NO_COLOR=1 `), in tmux in the workspace; returned
    /// once its footer shows.
    pub fn tui(&self, wire: Wire, url: &str, flags: &str, vars: &str) -> Tmux {
        let tmux = self.in_terminal(wire, url, flags, vars);
        tmux.wait_for("commands", 1);
        tmux
    }

    /// Interactive xcsh on `wire` against the server at `url`, with `flags` and the
    /// environment `extra_vars`, in tmux in the workspace; returned at once (for
    /// a start that shows neither greeting, e.g. the picker of `--resume`).
    pub fn in_terminal(&self, wire: Wire, url: &str, flags: &str, extra_vars: &str) -> Tmux {
        let vars: String = self
            .vars
            .iter()
            .map(|(var, value)| format!("{var}={value} "))
            .collect();
        let command = format!(
            "XCSH_HOME={} OPENAI_API_KEY= NO_COLOR= {vars}{extra_vars}{BIN} --provider {} --base-url {} --model m{}",
            self.home().display(),
            wire.flag(),
            wire.base_url(url),
            if flags.is_empty() {
                String::new()
            } else {
                format!(" {flags}")
            }
        );
        Tmux::start(&self.workspace(), &command)
    }

    /// Every session file of this test's home, in name (so time) order.
    pub fn sessions(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for dir in std::fs::read_dir(self.home().join("sessions")).unwrap() {
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

    /// After `/new` left the session `first` (§17.3), the other session file of this
    /// home (there must be just these two), and the prompts of `first` and of it.
    pub fn after_new(&self, first: &Path) -> (PathBuf, [Vec<String>; 2]) {
        let sessions = self.sessions();
        assert_eq!(sessions.len(), 2, "{sessions:?}");
        let second = sessions.into_iter().find(|s| s != first).unwrap();
        let prompts = [prompts(first), prompts(&second)];
        (second, prompts)
    }

    /// The newest session file.
    pub fn session(&self) -> PathBuf {
        self.sessions().pop().unwrap()
    }

    /// The one session file of this test's home.
    pub fn only_session(&self) -> PathBuf {
        let mut files = self.sessions();
        assert_eq!(files.len(), 1, "{files:?}");
        files.pop().unwrap()
    }

    /// `xcsh replay --redrive SESSION --cassette CASSETTE`.
    pub fn redrive(&self, session: &Path, cassette: &str) -> Output {
        self.run(&[
            "replay",
            "--redrive",
            session.to_str().unwrap(),
            "--cassette",
            cassette,
        ])
    }

    /// `xcsh replay SESSION` re-makes every recorded decision.
    pub fn assert_replays_clean(&self, session: &Path) {
        let out = self.run(&["replay", session.to_str().unwrap()]);
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    }

    /// `xcsh replay SESSION` re-makes every recorded decision and `xcsh check
    /// SESSION` finds nothing wrong.
    pub fn assert_clean(&self, session: &Path) {
        self.assert_replays_clean(session);
        let out = self.run(&["check", session.to_str().unwrap()]);
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    }
}

/// A setting as `xcsh config --json` shows one taken from the config file `path`.
pub fn from_file(value: serde_json::Value, path: &Path) -> serde_json::Value {
    serde_json::json!({"value": value, "source": {"kind": "file", "path": path}})
}

/// The names of the tools an OpenAI request `body` offers, in order.
pub fn tool_names(body: &serde_json::Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect()
}

/// Every file under `dir`, recursively, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The names of the entries of `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Writes each `(name, text)` to a file `name` in `dir` (created).
pub fn write_files(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// The output of `command`, which must succeed.
pub fn succeeded(mut command: Command) -> Output {
    let out = command.output().unwrap();
    assert!(out.status.success(), "{command:?}: {}", stderr(&out));
    out
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `session: PATH` line a one-shot run ends with.
pub fn session_of(o: &Output) -> PathBuf {
    let err = stderr(o);
    err.lines()
        .rev()
        .find_map(|l| l.strip_prefix("session: ").map(PathBuf::from))
        .unwrap_or_else(|| panic!("no session line in {err}"))
}

/// The id of a session, as its file name ends and `--resume` takes it.
pub fn session_id(path: &Path) -> String {
    let stem = path.file_stem().unwrap().to_str().unwrap();
    stem.rsplit_once('_').unwrap().1.to_string()
}

/// The recorded sessions, `fixtures/sessions/` (of the `xcsh` package).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions")
}

/// The recorded session `name` of [`fixtures`].
pub fn fixture(name: &str) -> PathBuf {
    fixtures().join(format!("{name}.jsonl"))
}

/// The lines of a session file, as JSON.
pub fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The entry types of a session file, in order.
pub fn types(path: &Path) -> Vec<String> {
    lines(path)
        .iter()
        .map(|v| v["type"].as_str().unwrap().to_string())
        .collect()
}

/// Asserts, of a session's entry `types`, that a steer was recorded while the first
/// step streamed and delivered after that step's tool result.
pub fn assert_steer_delivered_after_the_tools(types: &[String]) {
    let steer = index_of(types, "steer", 0);
    let step1 = index_of(types, "step", 0);
    let result1 = index_of(types, "tool_result", step1);
    let delivered = index_of(types, "delivered", 0);
    assert!(
        steer < step1 && step1 < result1 && result1 < delivered,
        "{types:?}"
    );
}

/// The index of the first `wanted` entry type at or after `from` in `types`.
fn index_of(types: &[String], wanted: &str, from: usize) -> usize {
    from + types[from..]
        .iter()
        .position(|t| t == wanted)
        .unwrap_or_else(|| panic!("no {wanted} after {from}: {types:?}"))
}

/// A model's replies: to the first prompt a long bash call (`sleep 30`: the turn runs
/// until it is stopped), to the next `text`.
pub fn long_bash_then(text: &str) -> Vec<Reply> {
    vec![
        Reply::openai_call("call_1", "bash", r#"{"command":"sleep 30"}"#, 100),
        Reply::openai_text(text, 110),
    ]
}

/// The texts of the session's prompts, in file order.
pub fn prompts(path: &Path) -> Vec<String> {
    lines(path)
        .iter()
        .filter(|v| v["type"] == "user_message")
        .map(|v| v["data"]["text"].as_str().unwrap().to_string())
        .collect()
}

/// The bodies of a session's entries, in file order.
pub fn bodies(path: &Path) -> impl Iterator<Item = Body> {
    read_session(path)
        .unwrap()
        .entries
        .into_iter()
        .map(|e| e.body)
}

/// The id of the first entry of a session whose body is `wanted`.
pub fn first_entry(path: &Path, wanted: impl Fn(&Body) -> bool) -> EntryId {
    entry_where(path, wanted).id
}

/// The first entry of a session whose body is `wanted`.
pub fn entry_where(path: &Path, wanted: impl Fn(&Body) -> bool) -> Entry {
    read_session(path)
        .unwrap()
        .entries
        .into_iter()
        .find(|e| wanted(&e.body))
        .unwrap_or_else(|| panic!("no such entry in {}", path.display()))
}

/// The step entries of a session.
pub fn steps(path: &Path) -> Vec<StepRecord> {
    bodies(path)
        .filter_map(|b| match b {
            Body::Record(Record::Step(s)) => Some(*s),
            _ => None,
        })
        .collect()
}

/// The outcomes of a session's tool calls, in order.
pub fn tool_outcomes(path: &Path) -> Vec<ToolOutcome> {
    bodies(path)
        .filter_map(|b| match b {
            Body::Record(Record::ToolResult(r)) => Some(r.outcome),
            _ => None,
        })
        .collect()
}

/// Starts `command`, a run with `--json`, and returns it with its session file once
/// the first text delta of step `step` is out (stdout is drained from then on, so
/// that the child never blocks on a full pipe).
pub fn streaming(mut command: Command, step: u64) -> (Child, PathBuf) {
    let mut child = command
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
        if v["type"] == "text_delta" && v["step"] == step {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    (child, path.unwrap())
}
