//! The seven standard tools through the `ToolExecutor` interface: a table per tool
//! (success, schema violation, boundary escape including symlinks, cap reached, and
//! read-before-write for edit/write), and bash's process-group handling: timeout,
//! stdin at EOF, cancellation.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use expect_test::{Expect, expect};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;
use xcsh_machine::{CallId, ToolCall, ToolOutcome, ToolStatus};
use xcsh_tools::caps::Caps;
use xcsh_tools::standard::FileChange;
use xcsh_tools::{StandardTools, ToolExecutor, ToolOptions, is_mutating};

/// A workspace `<outer>/ws` with a secret file beside it, symlinks out of it and
/// within it, a .gitignore, a binary file and a ten-line file.
struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    outer: PathBuf,
    tools: StandardTools,
}

/// Small caps so that "cap reached" shows in a few lines.
const SMALL: Caps = Caps {
    max_bytes: 300,
    max_lines: 6,
};

/// Room for a whole small diff (the header takes three lines).
const EDIT_CAPS: Caps = Caps {
    max_bytes: 300,
    max_lines: 10,
};

fn fixture() -> Fixture {
    fixture_with(SMALL)
}

fn fixture_with(caps: Caps) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let outer = dir.path().canonicalize().expect("canonical tempdir");
    let root = outer.join("ws");
    let files: &[(&str, &[u8])] = &[
        ("a.txt", b"alpha\nbeta\ngamma\n"),
        ("src/lib.rs", b"fn main() {}\n// TODO: one\n"),
        ("src/util.rs", b"// TODO: two\npub fn util() {}\n"),
        ("notes.md", b"# Notes\nTODO later\n"),
        (".gitignore", b"target/\n*.log\n"),
        ("target/out.txt", b"TODO ignored\n"),
        ("debug.log", b"TODO ignored log\n"),
        ("bin.dat", b"\x00\x01binary TODO\n"),
        (
            "many.txt",
            b"line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n",
        ),
    ];
    for (path, content) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, content).expect("write");
    }
    std::fs::write(outer.join("secret.txt"), "top secret\n").expect("write");
    std::os::unix::fs::symlink(&outer, root.join("escape")).expect("symlink");
    std::os::unix::fs::symlink(outer.join("secret.txt"), root.join("leak.txt")).expect("symlink");
    std::os::unix::fs::symlink(root.join("src"), root.join("inner")).expect("symlink");
    let tools = StandardTools::with_options(
        &root,
        ToolOptions {
            caps,
            ..ToolOptions::default()
        },
    )
    .expect("tools");
    Fixture {
        _dir: dir,
        root,
        outer,
        tools,
    }
}

async fn call_id(tools: &StandardTools, id: &str, name: &str, args: &Value) -> ToolOutcome {
    let call = ToolCall {
        id: CallId(id.to_owned()),
        name: name.to_owned(),
        arguments: args.to_string(),
    };
    let run = tools.execute(call, CancellationToken::new());
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("tool call settles")
}

async fn call(tools: &StandardTools, name: &str, args: &Value) -> ToolOutcome {
    call_id(tools, "call-1", name, args).await
}

/// Status and content, with the temporary paths, bash durations and process-group
/// ids replaced by placeholders.
fn render(fx: &Fixture, outcome: &ToolOutcome) -> String {
    let content = outcome
        .content
        .replace(&fx.root.display().to_string(), "<root>")
        .replace(&fx.outer.display().to_string(), "<outer>");
    let content: Vec<String> = content
        .lines()
        .map(|line| {
            if line.starts_with("duration: ") {
                "duration: <ms>".to_owned()
            } else if let Some(at) = line.find("process group ") {
                let rest = &line[at + "process group ".len()..];
                let digits = rest.chars().take_while(char::is_ascii_digit).count();
                format!("{}process group <pgid>{}", &line[..at], &rest[digits..])
            } else {
                line.to_owned()
            }
        })
        .collect();
    format!("{:?}\n{}", outcome.status, content.join("\n"))
}

/// One row of a tool table: calls made first (each must succeed), an optional change
/// to the files, then the call under test.
struct Case {
    name: &'static str,
    setup: Vec<(&'static str, Value)>,
    meddle: Option<fn(&Path)>,
    args: Value,
}

fn case(name: &'static str, args: Value) -> Case {
    Case {
        name,
        setup: Vec::new(),
        meddle: None,
        args,
    }
}

impl Case {
    /// The case after the calls of `setup`.
    fn after(self, setup: Vec<(&'static str, Value)>) -> Case {
        Case { setup, ..self }
    }

    /// The case after a `read` of `path`.
    fn after_reading(self, path: &str) -> Case {
        self.after(vec![read(path)])
    }

    /// The case with the files changed by `meddle` after the setup calls.
    fn meddled(self, meddle: fn(&Path)) -> Case {
        Case {
            meddle: Some(meddle),
            ..self
        }
    }
}

/// Runs every case on a fresh fixture (afterwards the file outside the workspace is
/// untouched) and compares their outcomes, each under its name and a blank line
/// apart, with `want`.
async fn check_table(tool: &str, caps: Caps, cases: Vec<Case>, want: Expect) {
    let mut shown = Vec::new();
    for c in cases {
        let fx = fixture_with(caps);
        for (name, args) in &c.setup {
            let got = call_id(&fx.tools, "setup", name, args).await;
            assert_eq!(
                got.status,
                ToolStatus::Ok,
                "{}: setup {name}: {}",
                c.name,
                got.content
            );
        }
        if let Some(meddle) = c.meddle {
            meddle(&fx.root);
        }
        let got = call(&fx.tools, tool, &c.args).await;
        shown.push(format!("{}: {}\n", c.name, render(&fx, &got)));
        assert_eq!(
            std::fs::read_to_string(fx.outer.join("secret.txt")).expect("secret"),
            "top secret\n",
            "{}",
            c.name
        );
    }
    want.assert_eq(&shown.join("\n"));
}

/// One `#[tokio::test]` a tool table: `name: tool, caps, [cases] => expectation;`, run
/// by [`check_table`].
macro_rules! tool_tables {
    ($($(#[$doc:meta])* $name:ident: $tool:literal, $caps:expr, [$($case:expr),* $(,)?] => $want:expr;)*) => {
        $(
            $(#[$doc])*
            #[tokio::test]
            async fn $name() {
                check_table($tool, $caps, vec![$($case),*], $want).await;
            }
        )*
    };
}

tool_tables! {
    read_table: "read", SMALL, [
        case("success", json!({"path": "a.txt"})),
        case("offset and limit", json!({"path": "many.txt", "offset": 2, "limit": 2})),
        case("through a symlink inside the workspace", json!({"path": "inner/lib.rs"})),
        case("cap reached", json!({"path": "many.txt"})),
        case("schema: missing path, bad offset, unknown argument", json!({"offset": 0, "lines": 3})),
        case("schema: wrong type", json!({"path": 7})),
        case("binary file", json!({"path": "bin.dat"})),
        case("missing file", json!({"path": "nope.txt"})),
        case("directory", json!({"path": "src"})),
        case("offset past the end", json!({"path": "a.txt", "offset": 9})),
    ] => expect![[r#"
        success: Ok
             1	alpha
             2	beta
             3	gamma

        offset and limit: Ok
             2	line 2
             3	line 3
        [lines 2-3 of 10 shown; continue with offset 4]

        through a symlink inside the workspace: Ok
             1	fn main() {}
             2	// TODO: one

        cap reached: Ok
             1	line 1
             2	line 2
             3	line 3
             4	line 4
             5	line 5
             6	line 6
        [output truncated: 6 of 10 lines, 84 of 141 bytes shown; cap 6 lines / 300 bytes; continue with offset 7]

        schema: missing path, bad offset, unknown argument: Error
        invalid arguments for `read` (the call was not run):
        - at "" (the arguments object): "path" is a required property
        - at "" (the arguments object): Additional properties are not allowed ('lines' was unexpected)
        - at "/offset": 0 is less than the minimum of 1

        schema: wrong type: Error
        invalid arguments for `read` (the call was not run):
        - at "/path": 7 is not of type "string"

        binary file: Error
        `bin.dat` is a binary file (NUL byte at offset 0); read only shows text files

        missing file: Error
        `nope.txt` does not exist; use `list` or `glob` to find files

        directory: Error
        `src` is a directory; use the `list` tool to see its entries

        offset past the end: Error
        `offset` 9 is past the end of `a.txt`, which has 3 lines
    "#]];

    list_table: "list", SMALL, [
        case("success", json!({"path": "src"})),
        case("recursive honors .gitignore", json!({"path": "src", "recursive": true})),
        case("cap reached", json!({})),
        case("recursive cap reached", json!({"recursive": true})),
        case("schema: wrong type", json!({"recursive": "yes"})),
        case("not a directory", json!({"path": "a.txt"})),
    ] => expect![[r#"
        success: Ok
        lib.rs
        util.rs

        recursive honors .gitignore: Ok
        lib.rs
        util.rs

        cap reached: Ok
        .gitignore
        a.txt
        bin.dat
        debug.log
        escape@
        inner@
        [output truncated: 6 of 11 lines, 50 of 91 bytes shown; cap 6 lines / 300 bytes; list a subdirectory, or use `glob` to narrow]

        recursive cap reached: Ok
        .gitignore
        a.txt
        bin.dat
        escape@
        inner@
        leak.txt@
        [output truncated: 6 of 11 lines, 50 of 96 bytes shown; cap 6 lines / 300 bytes; list a subdirectory, or use `glob` to narrow]

        schema: wrong type: Error
        invalid arguments for `list` (the call was not run):
        - at "/recursive": "yes" is not of type "boolean"

        not a directory: Error
        `a.txt` is not a directory; use the `read` tool for files
    "#]];

    grep_table: "grep", SMALL, [
        case("success honors .gitignore and skips binary files", json!({"pattern": "TODO"})),
        case("glob filter", json!({"pattern": "TODO: \\w+", "glob": "*.rs"})),
        case("one file", json!({"pattern": "^(alpha|gamma)$", "path": "a.txt"})),
        case("no match", json!({"pattern": "zebra"})),
        case("cap reached", json!({"pattern": "line", "path": "many.txt"})),
        case("schema: missing pattern", json!({"path": "src"})),
        case("invalid regex", json!({"pattern": "(unclosed"})),
        case("a walk never follows symlinks out", json!({"pattern": "top secret"})),
    ] => expect![[r#"
        success honors .gitignore and skips binary files: Ok
        notes.md:2:TODO later
        src/lib.rs:2:// TODO: one
        src/util.rs:1:// TODO: two

        glob filter: Ok
        src/lib.rs:2:// TODO: one
        src/util.rs:1:// TODO: two

        one file: Ok
        a.txt:1:alpha
        a.txt:3:gamma

        no match: Ok
        no matches for `zebra` in `.` (files ignored by .gitignore and binary files are skipped)

        cap reached: Ok
        many.txt:1:line 1
        many.txt:2:line 2
        many.txt:3:line 3
        many.txt:4:line 4
        many.txt:5:line 5
        many.txt:6:line 6
        [output truncated: 6 of 10 lines, 108 of 182 bytes shown; cap 6 lines / 300 bytes; narrow the pattern, the path or the glob]

        schema: missing pattern: Error
        invalid arguments for `grep` (the call was not run):
        - at "" (the arguments object): "pattern" is a required property

        invalid regex: Error
        invalid regex in `pattern`: regex parse error:
            (unclosed
            ^
        error: unclosed group

        a walk never follows symlinks out: Ok
        no matches for `top secret` in `.` (files ignored by .gitignore and binary files are skipped)
    "#]];

    glob_table: "glob", SMALL, [
        case("file names at any depth", json!({"pattern": "*.rs"})),
        case("path pattern under a directory", json!({"pattern": "u*.rs", "path": "src"})),
        case("ignored files are skipped", json!({"pattern": "**/*.{txt,log}"})),
        case("no match", json!({"pattern": "*.py"})),
        case("cap reached", json!({"pattern": "*"})),
        case("schema: pattern must be a non-empty string", json!({"pattern": ""})),
        case("invalid glob", json!({"pattern": "src/[a"})),
    ] => expect![[r#"
        file names at any depth: Ok
        src/lib.rs
        src/util.rs

        path pattern under a directory: Ok
        src/util.rs

        ignored files are skipped: Ok
        a.txt
        many.txt

        no match: Ok
        no files match `*.py` under `.` (files ignored by .gitignore are skipped)

        cap reached: Ok
        .gitignore
        a.txt
        bin.dat
        many.txt
        notes.md
        src/lib.rs
        [output truncated: 6 of 7 lines, 54 of 66 bytes shown; cap 6 lines / 300 bytes; narrow the pattern or the path]

        schema: pattern must be a non-empty string: Error
        invalid arguments for `glob` (the call was not run):
        - at "/pattern": "" is shorter than 1 character

        invalid glob: Error
        invalid glob in `pattern`: error parsing glob 'src/[a': unclosed character class; missing ']'
    "#]];

    /// `plan` through the standard tools: the schema first, then the rules it cannot say.
    plan_table: "plan", Caps::default(), [
        case("a plan is read back as a checklist", json!({"explanation": "Fix the parser.", "items": [
            {"text": "Read the parser", "status": "completed"},
            {"text": "Fix the bug", "status": "in_progress"},
            {"text": "Run the tests", "status": "pending"}
        ]})),
        case("an unknown status is a schema violation", json!({"items": [{"text": "Read", "status": "done"}]})),
        case("two items in progress", json!({"items": [{"text": "Read", "status": "in_progress"}, {"text": "Fix", "status": "in_progress"}]})),
        case("a blank text", json!({"items": [{"text": "   ", "status": "pending"}]})),
        case("no items at all is allowed: the plan is cleared", json!({"items": []})),
    ] => expect![[r#"
        a plan is read back as a checklist: Ok
        Plan updated (1 of 3 completed):
        Fix the parser.
        [x] Read the parser
        [>] Fix the bug
        [ ] Run the tests

        an unknown status is a schema violation: Error
        invalid arguments for `plan` (the call was not run):
        - at "/items/0/status": "done" is not one of "pending", "in_progress" or "completed"

        two items in progress: Error
        invalid plan (the plan was not changed): items 1 and 2 are both in_progress; at most one item may be in_progress

        a blank text: Error
        invalid plan (the plan was not changed): item 1 has an empty text

        no items at all is allowed: the plan is cleared: Ok
        Plan updated (0 of 0 completed):
        (no items)
    "#]];

    edit_table: "edit", EDIT_CAPS, [
        case("allowed after read, diff in the result", json!({"path": "a.txt", "old_string": "beta", "new_string": "BETA"})).after_reading("a.txt"),
        case("consecutive edits need no new read", json!({"path": "a.txt", "old_string": "gamma\n", "new_string": ""})).after(vec![read("a.txt"), ("edit", json!({"path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}))]),
        case("replace_all, cap reached on the diff", json!({"path": "many.txt", "old_string": "line", "new_string": "row", "replace_all": true})).after_reading("many.txt"),
        case("read-before-write: refused without a read", json!({"path": "a.txt", "old_string": "beta", "new_string": "BETA"})),
        case("read-before-write: refused when changed since the read", json!({"path": "a.txt", "old_string": "beta", "new_string": "BETA"})).after_reading("a.txt").meddled(|root| std::fs::write(root.join("a.txt"), "alpha\nbeta\ndelta\n").expect("meddle")),
        case("must match exactly once", json!({"path": "many.txt", "old_string": "line", "new_string": "row"})).after_reading("many.txt"),
        case("not found", json!({"path": "a.txt", "old_string": "delta", "new_string": "x"})).after_reading("a.txt"),
        case("missing file", json!({"path": "new.txt", "old_string": "a", "new_string": "b"})),
        case("schema: missing new_string, empty old_string", json!({"path": "a.txt", "old_string": ""})),
    ] => expect![[r#"
        allowed after read, diff in the result: Ok
        edited `a.txt`: replaced 1 occurrence
        --- a/a.txt
        +++ b/a.txt
        @@ -1,3 +1,3 @@
         alpha
        -beta
        +BETA
         gamma

        consecutive edits need no new read: Ok
        edited `a.txt`: replaced 1 occurrence
        --- a/a.txt
        +++ b/a.txt
        @@ -1,3 +1,2 @@
         ALPHA
         beta
        -gamma

        replace_all, cap reached on the diff: Ok
        edited `many.txt`: replaced 10 occurrences
        --- a/many.txt
        +++ b/many.txt
        @@ -1,10 +1,10 @@
        -line 1
        -line 2
        -line 3
        -line 4
        -line 5
        -line 6
        -line 7
        [output truncated: 10 of 23 lines, 104 of 200 bytes shown; cap 10 lines / 300 bytes; read the file to see the rest]

        read-before-write: refused without a read: Error
        `a.txt` already exists and has not been read in this run; read it first with the `read` tool, then retry

        read-before-write: refused when changed since the read: Error
        `a.txt` changed since it was read (its content is not what `read` returned); read it again, then retry

        must match exactly once: Error
        `old_string` occurs 10 times in `many.txt`; include more surrounding text to make it unique, or set `replace_all` to true

        not found: Error
        `old_string` was not found in `a.txt`; it must match the file exactly, whitespace and indentation included, without `read`'s line-number prefixes

        missing file: Error
        `new.txt` does not exist; use the `write` tool to create a file

        schema: missing new_string, empty old_string: Error
        invalid arguments for `edit` (the call was not run):
        - at "" (the arguments object): "new_string" is a required property
        - at "/old_string": "" is shorter than 1 character
    "#]];

    write_table: "write", SMALL, [
        case("creates a new file and its directories without a read", json!({"path": "new/dir/file.txt", "content": "one\ntwo\n"})),
        case("read-before-write: allowed after a read", json!({"path": "a.txt", "content": "replaced\n"})).after_reading("a.txt"),
        case("a file this run wrote may be overwritten", json!({"path": "fresh.txt", "content": "v2"})).after(vec![("write", json!({"path": "fresh.txt", "content": "v1"}))]),
        case("through a symlink inside the workspace", json!({"path": "inner/new.rs", "content": "// new\n"})),
        case("read-before-write: refused without a read", json!({"path": "a.txt", "content": "clobbered"})),
        case("read-before-write: refused when changed since the read", json!({"path": "a.txt", "content": "clobbered"})).after_reading("a.txt").meddled(|root| std::fs::write(root.join("a.txt"), "someone else\n").expect("meddle")),
        case("schema: missing content, unknown argument", json!({"path": "b.txt", "text": "x"})),
        case("directory", json!({"path": "src", "content": "x"})),
    ] => expect![[r#"
        creates a new file and its directories without a read: Ok
        created `new/dir/file.txt` (2 lines, 8 bytes)

        read-before-write: allowed after a read: Ok
        overwrote `a.txt` (1 line, 9 bytes)

        a file this run wrote may be overwritten: Ok
        overwrote `fresh.txt` (1 line, 2 bytes)

        through a symlink inside the workspace: Ok
        created `inner/new.rs` (1 line, 7 bytes)

        read-before-write: refused without a read: Error
        `a.txt` already exists and has not been read in this run; read it first with the `read` tool, then retry

        read-before-write: refused when changed since the read: Error
        `a.txt` changed since it was read (its content is not what `read` returned); read it again, then retry

        schema: missing content, unknown argument: Error
        invalid arguments for `write` (the call was not run):
        - at "" (the arguments object): "content" is a required property
        - at "" (the arguments object): Additional properties are not allowed ('text' was unexpected)

        directory: Error
        `src` is a directory, not a file
    "#]];

    bash_table: "bash", SMALL, [
        case("success in the workspace root", json!({"command": "echo hello; pwd; echo oops >&2"})),
        case("non-zero exit is an error result", json!({"command": "echo failing; exit 3"})),
        case("cap reached on each stream", json!({"command": "seq 1 10; seq 1 3 >&2"})),
        case("byte cap on one stream", json!({"command": "head -c 1000 /dev/zero | tr '\\0' x"})),
        case("schema: timeout below the minimum, unknown argument", json!({"command": "true", "timeout_ms": 0, "cwd": "/"})),
        case("schema: missing command", json!({})),
        case("a command reading stdin gets EOF", json!({"command": "read line; echo \"read exit $? got '$line'\""})),
    ] => expect![[r#"
        success in the workspace root: Ok
        exit code: 0
        duration: <ms>
        stdout:
        hello
        <root>
        stderr:
        oops

        non-zero exit is an error result: Error
        exit code: 3
        duration: <ms>
        stdout:
        failing
        stderr: (empty)

        cap reached on each stream: Ok
        exit code: 0
        duration: <ms>
        stdout:
        1
        2
        [output truncated: 4 of 10 lines, 8 of 21 bytes left out here; cap 6 lines / 300 bytes; redirect the output to a file and grep or read it]
        7
        8
        9
        10
        stderr:
        1
        2
        3

        byte cap on one stream: Ok
        exit code: 0
        duration: <ms>
        stdout:
        xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
        [output truncated: 0 of 1 lines, 700 of 1000 bytes left out here; cap 6 lines / 300 bytes; redirect the output to a file and grep or read it]
        xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
        stderr: (empty)

        schema: timeout below the minimum, unknown argument: Error
        invalid arguments for `bash` (the call was not run):
        - at "" (the arguments object): Additional properties are not allowed ('cwd' was unexpected)
        - at "/timeout_ms": 0 is less than the minimum of 1

        schema: missing command: Error
        invalid arguments for `bash` (the call was not run):
        - at "" (the arguments object): "command" is a required property

        a command reading stdin gets EOF: Ok
        exit code: 0
        duration: <ms>
        stdout:
        read exit 1 got ''
        stderr: (empty)
    "#]];
}

/// Every file tool refuses a path outside the workspace (with `..`, absolute,
/// through a symlinked file or directory) and changes nothing outside it: one row
/// per (tool, way out), each on a fresh fixture.
#[tokio::test]
async fn every_file_tool_refuses_paths_outside_the_workspace() {
    #[rustfmt::skip]
    let rows = [
        ("read", "escape with ..", json!({"path": "../secret.txt"})),
        ("read", "escape with an absolute path", json!({"path": "/etc/passwd"})),
        ("read", "escape through a symlinked file", json!({"path": "leak.txt"})),
        ("read", "escape through a symlinked directory", json!({"path": "escape/secret.txt"})),
        ("list", "escape with ..", json!({"path": ".."})),
        ("list", "escape with an absolute path", json!({"path": "/"})),
        ("list", "escape through a symlink", json!({"path": "escape"})),
        ("grep", "escape with ..", json!({"pattern": "secret", "path": "../secret.txt"})),
        ("grep", "escape with an absolute path", json!({"pattern": "root", "path": "/etc"})),
        ("grep", "escape through a symlink", json!({"pattern": "secret", "path": "leak.txt"})),
        ("glob", "escape with ..", json!({"pattern": "*", "path": "../"})),
        ("glob", "escape with an absolute path", json!({"pattern": "*", "path": "/tmp"})),
        ("glob", "escape through a symlink", json!({"pattern": "*", "path": "escape"})),
        ("edit", "escape with ..", json!({"path": "../secret.txt", "old_string": "top", "new_string": "no"})),
        ("edit", "escape with an absolute path", json!({"path": "/etc/hostname", "old_string": "a", "new_string": "b"})),
        ("edit", "escape through a symlink", json!({"path": "leak.txt", "old_string": "top", "new_string": "no"})),
        ("write", "escape with ..", json!({"path": "../secret.txt", "content": "pwned"})),
        ("write", "escape with an absolute path", json!({"path": "/tmp/xcsh-never-written.txt", "content": "x"})),
        ("write", "escape through a symlinked file", json!({"path": "leak.txt", "content": "pwned"})),
        ("write", "escape through a symlinked directory", json!({"path": "escape/new.txt", "content": "pwned"})),
    ];
    let mut shown = String::new();
    for (tool, name, args) in rows {
        let fx = fixture();
        let got = call(&fx.tools, tool, &args).await;
        let rendered = render(&fx, &got).replace('\n', ": ");
        shown.push_str(&format!("{tool}, {name}: {rendered}\n"));
        assert_eq!(
            std::fs::read_to_string(fx.outer.join("secret.txt")).expect("secret"),
            "top secret\n",
            "{tool}, {name}"
        );
        assert!(!fx.outer.join("new.txt").exists(), "{tool}, {name}");
    }
    assert!(!Path::new("/tmp/xcsh-never-written.txt").exists());
    expect![[r#"
            read, escape with ..: Error: path `../secret.txt` resolves to `<outer>/secret.txt`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            read, escape with an absolute path: Error: path `/etc/passwd` resolves to `/etc/passwd`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            read, escape through a symlinked file: Error: path `leak.txt` goes through the symlink `leak.txt`, which points to `<outer>/secret.txt`, outside the workspace root `<root>`; symlinks leaving the workspace are not followed
            read, escape through a symlinked directory: Error: path `escape/secret.txt` goes through the symlink `escape`, which points to `<outer>`, outside the workspace root `<root>`; symlinks leaving the workspace are not followed
            list, escape with ..: Error: path `..` resolves to `<outer>`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            list, escape with an absolute path: Error: path `/` resolves to `/`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            list, escape through a symlink: Error: path `escape` goes through the symlink `escape`, which points to `<outer>`, outside the workspace root `<root>`; symlinks leaving the workspace are not followed
            grep, escape with ..: Error: path `../secret.txt` resolves to `<outer>/secret.txt`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            grep, escape with an absolute path: Error: path `/etc` resolves to `/etc`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            grep, escape through a symlink: Error: path `leak.txt` goes through the symlink `leak.txt`, which points to `<outer>/secret.txt`, outside the workspace root `<root>`; symlinks leaving the workspace are not followed
            glob, escape with ..: Error: path `../` resolves to `<outer>`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            glob, escape with an absolute path: Error: path `/tmp` resolves to `/tmp`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            glob, escape through a symlink: Error: path `escape` goes through the symlink `escape`, which points to `<outer>`, outside the workspace root `<root>`; symlinks leaving the workspace are not followed
            edit, escape with ..: Error: path `../secret.txt` resolves to `<outer>/secret.txt`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            edit, escape with an absolute path: Error: path `/etc/hostname` resolves to `/etc/hostname`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            edit, escape through a symlink: Error: path `leak.txt` goes through the symlink `leak.txt`, which points to `<outer>/secret.txt`, outside the workspace root `<root>`; symlinks leaving the workspace are not followed
            write, escape with ..: Error: path `../secret.txt` resolves to `<outer>/secret.txt`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            write, escape with an absolute path: Error: path `/tmp/xcsh-never-written.txt` resolves to `/tmp/xcsh-never-written.txt`, outside the workspace root `<root>`; only paths inside the workspace are allowed
            write, escape through a symlinked file: Error: path `leak.txt` goes through the symlink `leak.txt`, which points to `<outer>/secret.txt`, outside the workspace root `<root>`; symlinks leaving the workspace are not followed
            write, escape through a symlinked directory: Error: path `escape/new.txt` goes through the symlink `escape`, which points to `<outer>`, outside the workspace root `<root>`; symlinks leaving the workspace are not followed
        "#]]
    .assert_eq(&shown);
}

fn read(path: &str) -> (&'static str, Value) {
    ("read", json!({ "path": path }))
}

/// A refused write leaves the files as they were, and a write through a symlink
/// inside the workspace writes where the link points. A row: the arguments, the
/// status, a file below the fixture's outer directory and its content afterwards
/// (`None`: it does not exist).
#[tokio::test]
async fn write_refusals_leave_files_untouched() {
    let fx = fixture();
    #[rustfmt::skip]
    let rows = [
        (json!({"path": "a.txt", "content": "x"}), ToolStatus::Error, "ws/a.txt", Some("alpha\nbeta\ngamma\n")),
        (json!({"path": "escape/new.txt", "content": "x"}), ToolStatus::Error, "new.txt", None),
        (json!({"path": "inner/new.rs", "content": "x"}), ToolStatus::Ok, "ws/src/new.rs", Some("x")),
    ];
    for (args, status, file, content) in rows {
        let got = call(&fx.tools, "write", &args).await;
        assert_eq!(got.status, status, "{args}");
        let now = std::fs::read_to_string(fx.outer.join(file)).ok();
        assert_eq!(now.as_deref(), content, "{args}");
    }
}

/// The members of process group `pgid` that are still alive. A zombie waiting for
/// its reaper, or a process already exiting (PF_EXITING set), is not alive: the
/// reaper of orphans runs on its own schedule.
fn live_members(pgid: i32) -> Vec<String> {
    // SAFETY: signal 0 sends nothing; it only checks whether the group exists.
    let rc = unsafe { libc::kill(-pgid, 0) };
    if rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
        return Vec::new();
    }
    const PF_EXITING: u64 = 0x4;
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the parenthesized command: state ppid pgrp session tty tpgid flags
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() < 7 || fields[2] != pgid.to_string() {
            continue;
        }
        let flags: u64 = fields[6].parse().unwrap_or(0);
        if !matches!(fields[0], "Z" | "X") && flags & PF_EXITING == 0 {
            live.push(stat.trim().to_owned());
        }
    }
    live
}

/// The process group named in a bash result ("process group N was killed").
fn reported_pgid(content: &str) -> i32 {
    let at = content
        .find("process group ")
        .expect("a process group in the result");
    content[at + "process group ".len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("pgid")
}

#[tokio::test]
async fn bash_timeout_kills_the_whole_group() {
    let fx = fixture();
    let started = Instant::now();
    let got = call(
        &fx.tools,
        "bash",
        &json!({"command": "echo $$; sleep 1000 & sleep 1000; wait", "timeout_ms": 1000}),
    )
    .await;
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    let pgid = reported_pgid(&got.content);
    expect![[r#"
        Error
        timed out after 1000 ms; process group <pgid> was killed
        exit code: none (killed by signal 9)
        duration: <ms>
        stdout:
        <pgid>
        stderr: (empty)"#]]
    .assert_eq(&render(&fx, &got).replace(&pgid.to_string(), "<pgid>"));
    let echoed: i32 = got
        .content
        .lines()
        .skip_while(|l| *l != "stdout:")
        .nth(1)
        .and_then(|l| l.parse().ok())
        .expect("echoed $$");
    assert_eq!(pgid, echoed, "the shell leads its own group");
    assert_eq!(live_members(pgid), Vec::<String>::new());
}

#[test]
fn live_members_sees_a_running_group() {
    let mut child = std::process::Command::new("sleep")
        .arg("1000")
        .process_group(0)
        .spawn()
        .expect("spawn sleep");
    let pgid = i32::try_from(child.id()).expect("pid");
    assert_eq!(live_members(pgid).len(), 1);
    child.kill().expect("kill");
    child.wait().expect("reap");
    assert_eq!(live_members(pgid), Vec::<String>::new());
}

#[tokio::test]
async fn bash_background_job_holding_the_output_is_killed_after_the_shell_exits() {
    let fx = fixture();
    let got = call(
        &fx.tools,
        "bash",
        &json!({"command": "sleep 1000 & echo started"}),
    )
    .await;
    expect![[r#"
        Ok
        exit code: 0
        duration: <ms>
        background processes still held the output 2000 ms after the shell exited; process group <pgid> was killed
        stdout:
        started
        stderr: (empty)"#]].assert_eq(&render(&fx, &got));
    assert_eq!(
        live_members(reported_pgid(&got.content)),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn bash_cat_gets_eof_at_once() {
    let fx = fixture();
    let got = call(&fx.tools, "bash", &json!({"command": "cat"})).await;
    expect![[r#"
        Ok
        exit code: 0
        duration: <ms>
        stdout: (empty)
        stderr: (empty)"#]]
    .assert_eq(&render(&fx, &got));
}

/// A program that forces colour anyway: the model reads the text without it.
#[tokio::test]
async fn bash_forced_colour_reaches_the_model_as_plain_text() {
    let fx = fixture();
    let red = r"printf '\033[31mred\033[0m\n'";
    let got = call(&fx.tools, "bash", &json!({ "command": red })).await;
    assert_eq!(
        render(&fx, &got),
        "Ok\nexit code: 0\nduration: <ms>\nstdout:\nred\nstderr: (empty)"
    );
}

/// Whatever the user's environment says about the terminal and colour, the shell is
/// asked for plain text: no colour, a dumb terminal, no pager.
#[tokio::test]
async fn bash_child_is_asked_for_no_colour_and_no_pager() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shell_env = xcsh_log::secrets::EnvPolicy::default().apply([
        ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
        ("TERM".into(), "xterm-256color".into()),
        ("CLICOLOR".into(), "1".into()),
        ("CLICOLOR_FORCE".into(), "1".into()),
        ("FORCE_COLOR".into(), "3".into()),
        ("PAGER".into(), "less".into()),
    ]);
    let tools = StandardTools::with_options(
        dir.path(),
        ToolOptions {
            shell_env,
            ..ToolOptions::default()
        },
    )
    .expect("tools");
    let command = r#"for v in NO_COLOR TERM CLICOLOR CLICOLOR_FORCE FORCE_COLOR PAGER GIT_PAGER; do printf '%s=%s\n' "$v" "${!v-unset}"; done"#;
    let got = call(&tools, "bash", &json!({ "command": command })).await;
    let stdout = got.content.split_once("stdout:\n").map(|(_, rest)| rest);
    assert_eq!(
        (got.status, stdout),
        (
            ToolStatus::Ok,
            Some(
                "NO_COLOR=1\nTERM=dumb\nCLICOLOR=0\nCLICOLOR_FORCE=unset\nFORCE_COLOR=unset\nPAGER=cat\nGIT_PAGER=cat\nstderr: (empty)"
            )
        ),
        "{}",
        got.content
    );
}

#[tokio::test]
async fn bash_cancel_kills_the_group_and_settles_cancelled() {
    let fx = fixture();
    let fifo = fx.root.join("ready.fifo");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("cstring");
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);

    let cancel = CancellationToken::new();
    let call = ToolCall {
        id: CallId("long".into()),
        name: "bash".into(),
        arguments: json!({"command": "sleep 1000 & sleep 1000 & echo $$ > ready.fifo; wait"})
            .to_string(),
    };
    let run = tokio::spawn(fx.tools.execute(call, cancel.clone()));
    // Opening the FIFO blocks until the command has started its background jobs
    // and writes its pid, so the cancel lands on a running group (no sleeping).
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::read_to_string(fifo));
    });
    let written = tokio::time::timeout(Duration::from_secs(30), rx)
        .await
        .expect("the command started")
        .expect("reader thread")
        .expect("read fifo");
    let pgid: i32 = written.trim().parse().expect("pid");

    let cancelled_at = Instant::now();
    cancel.cancel();
    let got = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("settles after cancel")
        .expect("join");
    assert!(cancelled_at.elapsed() < Duration::from_secs(10));
    expect![[r#"
        Cancelled
        bash cancelled by the user; side effects it already had were not undone; process group <pgid> was killed
        exit code: none (killed by signal 9)
        duration: <ms>
        stdout: (empty)
        stderr: (empty)"#]]
    .assert_eq(&render(&fx, &got));
    assert_eq!(reported_pgid(&got.content), pgid);
    assert_eq!(live_members(pgid), Vec::<String>::new());
}

#[tokio::test]
async fn a_call_cancelled_before_it_starts_does_nothing() {
    let fx = fixture();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let call = ToolCall {
        id: CallId("c".into()),
        name: "write".into(),
        arguments: json!({"path": "never.txt", "content": "x"}).to_string(),
    };
    let got = fx.tools.execute(call, cancel).await;
    expect![[r#"
        Cancelled
        write cancelled by the user; side effects it already had were not undone"#]]
    .assert_eq(&render(&fx, &got));
    assert!(!fx.root.join("never.txt").exists());
}

#[tokio::test]
async fn unknown_tools_and_malformed_arguments_are_errors() {
    let fx = fixture();
    let raw = |name: &str, arguments: &str| ToolCall {
        id: CallId("c".into()),
        name: name.into(),
        arguments: arguments.into(),
    };
    let cases = [
        (
            raw("delete", "{}"),
            expect![[r#"
                Error
                no tool named `delete`; the tools are: read, list, grep, glob, edit, write, bash, plan"#]],
        ),
        (
            raw("read", "{\"path\": \"a.txt\""),
            expect![[r#"
                Error
                invalid arguments for `read` (the call was not run): the JSON text ends early"#]],
        ),
        (
            raw("read", "[\"a.txt\"]"),
            expect![[r#"
                Error
                invalid arguments for `read` (the call was not run):
                - at "" (the arguments object): ["a.txt"] is not of type "object""#]],
        ),
    ];
    for (call, want) in cases {
        let got = fx.tools.execute(call, CancellationToken::new()).await;
        want.assert_eq(&render(&fx, &got));
    }
    // No arguments at all are the empty object.
    let none = fx
        .tools
        .execute(raw("list", ""), CancellationToken::new())
        .await;
    assert_eq!(none, call(&fx.tools, "list", &json!({})).await);
}

#[tokio::test]
async fn default_caps_cut_at_2000_lines() {
    let fx = fixture_with(Caps::default());
    let big: String = (1..=5000).map(|i| format!("{i}\n")).collect();
    std::fs::write(fx.root.join("big.txt"), big).expect("write");
    let got = call(&fx.tools, "read", &json!({"path": "big.txt"})).await;
    assert_eq!(got.status, ToolStatus::Ok);
    let lines: Vec<&str> = got.content.lines().collect();
    assert_eq!(lines.len(), 2001);
    assert_eq!(lines[1999], "  2000\t2000");
    assert_eq!(
        lines[2000],
        "[output truncated: 2000 of 5000 lines, 22893 of 58893 bytes shown; cap 2000 lines / 51200 bytes; continue with offset 2001]"
    );
}

/// A long bash output keeps its first 800 and its last 1200 lines (40% and 60% of
/// the cap), a long failure's last words included; stderr is capped on its own.
#[tokio::test]
async fn bash_keeps_the_start_and_the_end_of_a_long_output() {
    let fx = fixture_with(Caps::default());
    let got = call(
        &fx.tools,
        "bash",
        &json!({"command": "seq 1 5000; echo 'error: the end' >&2; exit 1"}),
    )
    .await;
    let seq = |from: usize, to: usize| {
        (from..=to)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        render(&fx, &got),
        format!(
            "Error\nexit code: 1\nduration: <ms>\nstdout:\n{}\n[output truncated: 3000 of 5000 lines, 14801 of 23893 bytes left out here; cap 2000 lines / 51200 bytes; redirect the output to a file and grep or read it]\n{}\nstderr:\nerror: the end",
            seq(1, 800),
            seq(3801, 5000)
        )
    );
}

#[tokio::test]
async fn edits_and_writes_record_file_changes_per_call() {
    let fx = fixture();
    let tools = &fx.tools;
    call_id(
        tools,
        "w",
        "write",
        &json!({"path": "n.txt", "content": "v1\n"}),
    )
    .await;
    call_id(tools, "r", "read", &json!({"path": "a.txt"})).await;
    call_id(
        tools,
        "e",
        "edit",
        &json!({"path": "a.txt", "old_string": "beta", "new_string": "BETA"}),
    )
    .await;
    let refused = call_id(
        tools,
        "x",
        "write",
        &json!({"path": "many.txt", "content": ""}),
    )
    .await;
    assert_eq!(refused.status, ToolStatus::Error);

    let hash = |s: &str| blake3::hash(s.as_bytes()).to_hex().to_string();
    assert_eq!(
        tools.file_changes(&CallId("w".into())),
        vec![FileChange {
            path: fx.root.join("n.txt"),
            before_hash: None,
            after_hash: hash("v1\n"),
            before: None,
        }]
    );
    assert_eq!(
        tools.take_file_changes(&CallId("e".into())),
        vec![FileChange {
            path: fx.root.join("a.txt"),
            before_hash: Some(hash("alpha\nbeta\ngamma\n")),
            after_hash: hash("alpha\nBETA\ngamma\n"),
            before: Some("alpha\nbeta\ngamma\n".into()),
        }]
    );
    assert_eq!(tools.take_file_changes(&CallId("e".into())), vec![]);
    assert_eq!(tools.file_changes(&CallId("r".into())), vec![]);
    assert_eq!(tools.file_changes(&CallId("x".into())), vec![]);
}

#[test]
fn specs_are_the_seven_tools_and_mutation_is_known() {
    let fx = fixture();
    assert_eq!(fx.tools.mutating(), ["edit", "write", "bash"]);
    let specs = fx.tools.specs();
    let summary: Vec<String> = specs
        .iter()
        .map(|s| {
            let required = s.parameters["required"].clone();
            let properties: Vec<&String> = s.parameters["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .collect();
            assert_eq!(
                s.parameters["additionalProperties"],
                json!(false),
                "{}",
                s.name
            );
            assert!(!s.description.is_empty());
            format!(
                "{} mutating={} properties={properties:?} required={required}",
                s.name,
                is_mutating(&s.name)
            )
        })
        .collect();
    expect![[r#"
        read mutating=false properties=["limit", "offset", "path"] required=["path"]
        list mutating=false properties=["path", "recursive"] required=null
        grep mutating=false properties=["glob", "path", "pattern"] required=["pattern"]
        glob mutating=false properties=["path", "pattern"] required=["pattern"]
        edit mutating=true properties=["new_string", "old_string", "path", "replace_all"] required=["path","old_string","new_string"]
        write mutating=true properties=["content", "path"] required=["path","content"]
        bash mutating=true properties=["command", "timeout_ms"] required=["command"]
        plan mutating=false properties=["explanation", "items"] required=["items"]"#]]
    .assert_eq(&summary.join("\n"));
}

/// The check before a question finds what `edit` and `write` would fail with, in the
/// very words of the call's result, and changes nothing; a call that can succeed
/// passes (and then runs); bash is never checked.
#[tokio::test]
async fn the_check_before_a_question_fails_exactly_the_calls_that_would_fail() {
    let fx = fixture();
    let check = |name: &str, args: &Value| {
        fx.tools.check(&ToolCall {
            id: CallId("c".into()),
            name: name.into(),
            arguments: args.to_string(),
        })
    };
    let unread = json!({"path": "a.txt", "old_string": "beta", "new_string": "BETA"});
    let overwrite = json!({"path": "a.txt", "content": "x"});
    let bash = json!({"command": "exit 1"});
    let failing = [("edit", &unread), ("write", &overwrite)];
    let checked: Vec<Option<String>> = failing.iter().map(|(n, a)| check(n, a)).collect();
    let mut ran = Vec::new();
    for (name, args) in failing {
        ran.push(Some(call(&fx.tools, name, args).await.content));
    }
    assert_eq!(checked, ran);
    assert_eq!(check("bash", &bash), None);
    call(&fx.tools, "read", &json!({"path": "a.txt"})).await;
    let missing = json!({"path": "a.txt", "old_string": "delta", "new_string": "x"});
    assert_eq!(
        [check("edit", &unread), check("write", &overwrite)],
        [None, None]
    );
    assert_eq!(
        check("edit", &missing),
        Some(call(&fx.tools, "edit", &missing).await.content)
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join("a.txt")).unwrap(),
        "alpha\nbeta\ngamma\n"
    );
}
