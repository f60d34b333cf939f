//! SIGKILL of xcsh at 8 moments of a 30 MB `write` (issue 15, item 2), each chosen
//! by watching what xcsh has written (the dispatch entry in the log, the
//! before-image's temporary file and its manifest, the temporary file beside the
//! target at growing sizes, the rename, the result), never by time. Each time the
//! target is exactly its original or exactly the new content; `--continue` lists
//! the file; `/undo` (the plain mode on a terminal) or `xcsh undo S@E` puts the
//! original back byte for byte.

#[path = "support/pty.rs"]
mod pty;
mod support;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use support::assert_contains;
use support::env::{Env, stderr, stdout};
use support::mock_server::{Fault, MockServer, Reply};
use support::sse::{Wire, chat, chat_usage};

/// The new content's size.
const NEW_BYTES: usize = 30 << 20;

/// What a moment waits for; each is later than the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Moment {
    /// The `tool_dispatched` entry of the write is in the log.
    Dispatched = 1,
    /// A temporary file of the before-image store exists.
    BlobTemp = 2,
    /// The manifest exists.
    Manifest = 3,
    /// The temporary file beside the target exists.
    TargetTemp = 4,
    /// … and holds a third of the new content.
    TargetThird = 5,
    /// … two thirds.
    TargetTwoThirds = 6,
    /// The target has the new content's size (renamed), no result yet.
    Renamed = 7,
    /// The `tool_result` entry is in the log.
    Settled = 8,
}

/// The original: 2 MiB of numbered lines.
fn original() -> Vec<u8> {
    let mut out = Vec::with_capacity(2 << 20);
    let mut i = 0;
    while out.len() < 2 << 20 {
        out.extend_from_slice(format!("original line {i:08}\n").as_bytes());
        i += 1;
    }
    out
}

/// The new content: 30 MiB of 1 KiB lines.
fn new_content() -> String {
    let line = format!("{}\n", "n".repeat(1023));
    line.repeat(NEW_BYTES / line.len())
}

/// A Chat Completions step calling `write` with `args`, streamed as providers do:
/// the arguments in 1 MiB deltas.
fn write_call(args: &str) -> Vec<String> {
    let mut frames = vec![chat(
        r#"{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_w","type":"function","function":{"name":"write","arguments":""}}]},"finish_reason":null}"#,
    )];
    for piece in args.as_bytes().chunks(1 << 20) {
        let piece = serde_json::to_string(std::str::from_utf8(piece).unwrap()).unwrap();
        frames.push(chat(&format!(
            r#"{{"index":0,"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":{piece}}}}}]}},"finish_reason":null}}"#
        )));
    }
    frames.push(chat(
        r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#,
    ));
    frames.push(chat_usage(20, 10));
    frames
}

/// What has happened so far, from the files xcsh writes.
struct Watch {
    home: PathBuf,
    target: PathBuf,
    /// The session file, once it exists, and how far it was scanned.
    log: Option<(PathBuf, u64)>,
    /// Bytes of the log's tail kept for a marker cut by the last read.
    tail: Vec<u8>,
    dispatched: Line,
    settled: Line,
}

/// Where the log line holding a marker is: a long line (the dispatch holds the 30
/// MB arguments) can be seen half-written, and only a whole line is in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    NotYet,
    Started,
    Whole,
}

impl Line {
    /// `window` is the bytes read now, after the kept tail of the last read.
    fn update(&mut self, window: &str, fresh: &[u8], marker: &str) {
        *self = match *self {
            Line::NotYet => match window.find(marker) {
                Some(pos) if window[pos..].contains('\n') => Line::Whole,
                Some(_) => Line::Started,
                None => Line::NotYet,
            },
            Line::Started if fresh.contains(&b'\n') => Line::Whole,
            other => other,
        };
    }
}

impl Watch {
    fn new(env: &Env) -> Watch {
        Watch {
            home: env.home(),
            target: env.workspace().join("big.txt"),
            log: None,
            tail: Vec::new(),
            dispatched: Line::NotYet,
            settled: Line::NotYet,
        }
    }

    /// Reads what was appended to the log since the last look.
    fn scan_log(&mut self) {
        if self.log.is_none() {
            let dir = self.home.join("sessions");
            let found = std::fs::read_dir(&dir).ok().and_then(|dirs| {
                dirs.flatten()
                    .filter_map(|d| std::fs::read_dir(d.path()).ok())
                    .flatten()
                    .flatten()
                    .map(|f| f.path())
                    .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
            });
            self.log = found.map(|p| (p, 0));
        }
        let Some((path, offset)) = &mut self.log else {
            return;
        };
        let Ok(mut file) = std::fs::File::open(&*path) else {
            return;
        };
        use std::io::Seek;
        if file.seek(std::io::SeekFrom::Start(*offset)).is_err() {
            return;
        }
        let mut fresh = Vec::new();
        if file.read_to_end(&mut fresh).is_err() {
            return;
        }
        *offset += fresh.len() as u64;
        let mut window = std::mem::take(&mut self.tail);
        window.extend_from_slice(&fresh);
        let text = String::from_utf8_lossy(&window);
        self.dispatched.update(
            &text,
            &fresh,
            r#""type":"tool_dispatched","data":{"step":2"#,
        );
        self.settled.update(
            &text,
            &fresh,
            r#""type":"tool_result","data":{"call_id":"call_w""#,
        );
        let keep = window.len().saturating_sub(128);
        self.tail = window[keep..].to_vec();
    }

    /// The latest moment reached.
    fn reached(&mut self) -> Option<Moment> {
        self.scan_log();
        if self.settled == Line::Whole {
            return Some(Moment::Settled);
        }
        let target = std::fs::metadata(&self.target).map_or(0, |m| m.len());
        if target == NEW_BYTES as u64 {
            return Some(Moment::Renamed);
        }
        let temp = std::fs::read_dir(self.target.parent().unwrap())
            .into_iter()
            .flatten()
            .flatten()
            .find(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".big.txt.xcsh-")
            })
            .and_then(|e| e.metadata().ok())
            .map(|m| m.len());
        match temp {
            Some(n) if n >= 2 * NEW_BYTES as u64 / 3 => return Some(Moment::TargetTwoThirds),
            Some(n) if n >= NEW_BYTES as u64 / 3 => return Some(Moment::TargetThird),
            Some(_) => return Some(Moment::TargetTemp),
            None => {}
        }
        let blobs: Vec<String> = std::fs::read_dir(self.home.join("blobs"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if blobs.iter().any(|n| n.ends_with(".manifest")) {
            return Some(Moment::Manifest);
        }
        if blobs.iter().any(|n| n.starts_with(".tmp-")) {
            return Some(Moment::BlobTemp);
        }
        (self.dispatched == Line::Whole).then_some(Moment::Dispatched)
    }
}

/// Runs the write until `moment` (or a later one) is seen, then SIGKILLs xcsh;
/// returns the moment it was killed at.
fn kill_at(env: &Env, server: &MockServer, moment: Moment) -> Moment {
    let mut child: Child = env
        .cmd_on(
            Wire::OpenAi,
            &server.url(),
            // The write's arguments are 30 MB of output.
            &[
                "run",
                "--max-output-tokens",
                "1000000000",
                "-p",
                "rewrite big.txt",
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut watch = Watch::new(env);
    // A bound, not a pace: the loop ends when the moment is seen.
    let deadline = Instant::now() + Duration::from_secs(600);
    let seen = loop {
        if let Some(reached) = watch.reached()
            && reached >= moment
        {
            break reached;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("xcsh ended ({status}) before {moment:?}:\n{err}");
        }
        assert!(Instant::now() < deadline, "never reached {moment:?}");
        std::thread::yield_now();
    };
    child.kill().unwrap();
    child.wait().unwrap();
    seen
}

/// What the terminal showed once `done` holds. Reading a log of some 150 MB
/// (the 30 MB arguments are in the step, the dispatch and the lost result) takes a
/// debug build longer than the terminal helper's 30 s on a busy machine: this bound
/// is wider.
fn shown_until(term: &pty::Pty, done: impl Fn(&str) -> bool) -> String {
    term.shown_until(Duration::from_secs(600), done, |seen| {
        format!("the terminal showed:\n{seen}")
    })
}

/// The dispatch entry `--continue` names in its `xcsh undo S@E` hint, if any.
fn undo_hint(said: &str) -> Option<String> {
    let start = said.find("`xcsh undo ")? + "`xcsh undo ".len();
    let end = start + said[start..].find('`')?;
    Some(said[start..end].to_owned())
}

/// One scenario: kill at `moment`, check the target, list with `--continue`, undo
/// (`plain`: `/undo` in the plain mode on a terminal; else `xcsh undo`), check the
/// original is back byte for byte.
fn crash_and_undo(moment: Moment, plain: bool) {
    let original = original();
    let new = new_content();
    let env = Env::new().with_var("OPENAI_API_KEY", "k");
    let target = env.workspace().join("big.txt");
    std::fs::write(&target, &original).unwrap();
    let args = serde_json::json!({"path": "big.txt", "content": new}).to_string();
    let server = MockServer::start(vec![
        Reply::openai_call("call_r", "read", r#"{"path":"big.txt","limit":1}"#, 10),
        Reply::sse(write_call(&args)),
        // The step after the write never ends: the kill comes first.
        Reply::openai_text("done", 30).with_fault(Fault::StallAt(0)),
    ]);
    drop(args);
    let killed = kill_at(&env, &server, moment);

    let now = std::fs::read(&target).unwrap();
    let is_original = now == original;
    assert!(
        is_original || now == new.as_bytes(),
        "killed at {killed:?}: big.txt is neither the original nor the new content ({} bytes)",
        now.len()
    );
    drop(now);
    let session = env.only_session();

    if plain {
        let mut term =
            pty::Pty::spawn(env.cmd_on(Wire::OpenAi, &server.url(), &["--plain", "--continue"]));
        term.wait_for("/help for commands", 1);
        // The listing is printed before the first line is read: it is above the
        // undo's answer.
        term.send("/undo\r");
        let shown = shown_until(&term, |s| {
            s.contains("[undo] reverted") || s.contains("xcsh: the last run")
        });
        check_listing(killed, &shown, is_original);
        if killed < Moment::Manifest && !shown.contains("[undo] reverted") {
            // No before-image: the call changed nothing, so there is nothing to undo.
            assert_contains(&shown, "changed no file");
        } else {
            assert!(shown.contains("[undo] reverted"), "{killed:?}: {shown}");
            assert_contains(&shown, "big.txt");
        }
        term.send("\x04");
        let (status, _) = term.finish();
        assert!(status.success(), "{status}");
    } else if killed == Moment::Settled {
        // The write settled: nothing is interrupted, its change is in the log and
        // undone with its run (the last one; its open end is settled first).
        let out = env.run(&["undo", session.to_str().unwrap()]);
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    } else {
        // A one-shot run continues the session: recovery lists the call on stderr.
        let next = MockServer::start(vec![Reply::openai_text("continued", 40)]);
        let out = env.run_on(Wire::OpenAi, &next.url(), &["--continue", "-p", "go on"]);
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        let said = stderr(&out);
        check_listing(killed, &said, is_original);
        match undo_hint(&said) {
            // The interrupted call, from its before-image (its run is no longer
            // the last one: `xcsh undo S@E` names it).
            Some(spec) => {
                let out = env.run(&["undo", &spec]);
                assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
                assert_contains(
                    &stdout(&out),
                    "[undo] reverted the changes of the interrupted call",
                );
            }
            // No before-image: the call changed nothing.
            None => assert!(said.contains("changed no file"), "{killed:?}: {said}"),
        }
    }
    assert!(
        std::fs::read(&target).unwrap() == original,
        "killed at {killed:?}: after undo, big.txt is not the original"
    );
    env.assert_clean(&session);
}

/// What `--continue` said about the interrupted write.
fn check_listing(killed: Moment, said: &str, is_original: bool) {
    match killed {
        Moment::Settled => assert!(!said.contains("the interrupted call `write`"), "{said}"),
        _ if said.contains("changed no file") => {
            assert!(killed < Moment::TargetTemp, "{killed:?}: {said}");
            assert!(is_original, "{said}");
        }
        _ => {
            assert!(
                said.contains("the interrupted call `write` (call_w, entry"),
                "{killed:?}: {said}"
            );
            let state = if is_original {
                "`big.txt` (the same as its saved original)"
            } else {
                "`big.txt` (differs from its saved original: it has the call's new content)"
            };
            assert!(said.contains(state), "{killed:?}: {said}");
        }
    }
}

/// One test per moment: `name: MOMENT, plain;` runs [`crash_and_undo`].
macro_rules! crash_tests {
    ($($name:ident: $moment:ident, $plain:expr;)*) => {$(
        #[test]
        fn $name() {
            crash_and_undo(Moment::$moment, $plain);
        }
    )*};
}

crash_tests! {
    killed_once_the_dispatch_entry_is_durable_the_file_is_the_original: Dispatched, true;
    killed_while_the_before_image_is_written_the_file_is_the_original: BlobTemp, false;
    killed_once_the_manifest_is_durable_undo_finds_the_original: Manifest, true;
    killed_when_the_temporary_file_appears_the_target_is_untouched: TargetTemp, false;
    killed_with_a_third_of_the_temporary_file_written_the_target_is_untouched: TargetThird, true;
    killed_with_two_thirds_of_the_temporary_file_written_the_target_is_untouched: TargetTwoThirds, false;
    killed_after_the_rename_before_the_result_undo_restores_the_original: Renamed, true;
    killed_after_the_result_undo_restores_the_original_from_the_log: Settled, true;
}
