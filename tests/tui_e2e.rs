//! xcsh's terminal UI in a real terminal (tmux: send-keys, capture-pane,
//! resize-window) against a local provider server: streaming as it arrives, an
//! edit approval with its diff, a steer shown pending then delivered, Ctrl-C of a
//! long bash call, resizing mid-stream, Ctrl-D and the history it leaves, colour and
//! `NO_COLOR`, the tree navigator, the session picker and the transcript (which
//! follows a turn and announces a question that waits).
//!
//! Needs tmux (`scripts/setup-test-deps.sh` installs it; CI runs that first): each
//! test is skipped with a message without it, and fails under `CI`. Waiting for the
//! screen polls capture-pane until the text appears (bounded, 30 s).

mod support;

use std::path::Path;

use support::assert_contains;
use support::env::{
    Env, assert_steer_delivered_after_the_tools, entry_where, long_bash_then, session_id, types,
};
use support::mock_server::{MockServer, Reply};
use support::sse::{Wire, openai_call, openai_text};
use support::tmux::{Tmux, tmux_available};
use xcsh_log::{Body, Dag, Record, read_session};

/// Whether the session file holds a `step` entry yet (read as text: the file is
/// being written while this looks, and its last line may be incomplete).
fn has_step_entry(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .contains(r#""type":"step","#)
}

/// Text with every run of whitespace made one space (wrapping differs by width).
fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The user prompts on the path from the session's root to its leaf.
fn prompts_to_leaf(path: &Path) -> Vec<String> {
    let log = read_session(path).unwrap();
    let ids = Dag::from_log(&log).path_to_root(log.leaf()).unwrap();
    ids.iter()
        .filter_map(|id| match &log.get(*id).unwrap().body {
            Body::Record(Record::UserMessage { text, .. }) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// The SGR colour parameters (foreground or background, not the defaults 39/49)
/// of the escape sequences in `styled`.
fn colour_codes(styled: &str) -> Vec<String> {
    let mut out = Vec::new();
    for seq in styled.split("\x1b[").skip(1) {
        let Some(end) = seq.find(|c: char| !(c.is_ascii_digit() || c == ';' || c == ':')) else {
            continue;
        };
        if !seq[end..].starts_with('m') {
            continue;
        }
        let params: Vec<u32> = seq[..end]
            .split([';', ':'])
            .map(|p| p.parse().unwrap_or(0))
            .collect();
        let mut i = 0;
        while i < params.len() {
            let p = params[i];
            match p {
                30..=37 | 40..=47 | 90..=97 | 100..=107 => out.push(p.to_string()),
                38 | 48 => {
                    let skip = if params.get(i + 1) == Some(&5) { 2 } else { 4 };
                    let end = (i + 1 + skip).min(params.len());
                    let full: Vec<String> = params[i..end].iter().map(u32::to_string).collect();
                    out.push(full.join(";"));
                    i = end;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

/// The screen line holding `text` (trimmed), or a failure showing the screen.
fn line_with<'a>(screen: &'a str, text: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(text))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no line with {text:?} on the screen:\n{screen}"))
}

const WORDS: [&str; 10] = [
    "Alpha ", "bravo ", "charlie ", "delta ", "echo ", "foxtrot ", "golf ", "hotel ", "india ",
    "juliet.",
];

/// The terminal UI, once `prompt` is typed, over an answer streaming `chunks`, one
/// every `pace_ms` (`None` without tmux); the server lives as long as it is kept.
fn streaming_in_the_tui(
    chunks: &[&str],
    pace_ms: u64,
    prompt: &str,
) -> Option<(Env, MockServer, Tmux)> {
    let reply = Reply::sse(openai_text(chunks, 100)).paced(pace_ms);
    let (env, server) = Env::new().in_tmux_with(vec![reply])?;
    let tmux = env.tui(Wire::OpenAi, &server.url(), "", "");
    tmux.line(prompt);
    Some((env, server, tmux))
}

#[test]
fn streamed_text_shows_on_screen_before_its_step_ends_and_grows() {
    let Some((env, _server, tmux)) = streaming_in_the_tui(&WORDS, 300, "spell it out") else {
        return;
    };

    // Every capture until the last word shows: how many words it shows, and whether
    // the step had been recorded (ended) when it was taken.
    let mut seen: Vec<(usize, bool)> = Vec::new();
    let mut session = None;
    tmux.wait_until("the last word", |screen| {
        let shown = WORDS.iter().filter(|w| screen.contains(w.trim())).count();
        if shown > 0 && session.is_none() {
            session = Some(env.only_session());
        }
        // The log is read after the capture: a step absent now was absent then.
        let ended = session.as_deref().is_some_and(has_step_entry);
        seen.push((shown, ended));
        shown == WORDS.len()
    });
    let partial = seen
        .iter()
        .any(|&(shown, ended)| (1..WORDS.len()).contains(&shown) && !ended);
    assert!(
        partial,
        "no capture showed part of the text before the step ended: {seen:?}"
    );
    let counts: Vec<usize> = seen.iter().map(|&(shown, _)| shown).collect();
    assert!(
        counts.windows(2).all(|w| w[0] <= w[1]),
        "the text did not only grow: {counts:?}"
    );
    let distinct = {
        let mut c = counts.clone();
        c.dedup();
        c.into_iter().filter(|&n| n > 0 && n < WORDS.len()).count()
    };
    assert!(
        distinct >= 2,
        "the text did not grow in steps while it streamed: {counts:?}"
    );
    let screen = tmux.wait_for("─ done", 1);
    assert!(
        normalized(&screen).contains(&normalized(&WORDS.concat())),
        "{screen}"
    );
}

#[test]
fn an_edit_approval_shows_the_diff_and_always_lets_the_next_edit_run_unasked() {
    let Some((env, server)) = Env::new()
        .with_file("f.txt", "hello\nworld\n")
        .in_tmux_with(vec![
            Reply::openai_call("call_1", "read", r#"{"path":"f.txt"}"#, 100),
            Reply::sse(openai_call(
                &["Changing the first line."],
                "call_2",
                "edit",
                r#"{"path":"f.txt","old_string":"hello","new_string":"HELLO"}"#,
                120,
            )),
            Reply::sse(openai_call(
                &["Now the second line."],
                "call_3",
                "edit",
                r#"{"path":"f.txt","old_string":"world","new_string":"WORLD"}"#,
                140,
            )),
            Reply::openai_text("Both lines changed.", 160),
        ])
    else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "--permissions ask", "");
    tmux.line("shout both lines");

    let screen = tmux.wait_for("allow edit", 1);
    let screen = if screen.contains("+HELLO") {
        screen
    } else {
        tmux.wait_for("+HELLO", 1)
    };
    assert!(
        screen
            .lines()
            .any(|l| l.trim_end().ends_with("-hello") && !l.contains("+")),
        "no -hello line in the approval:\n{screen}"
    );
    assert!(
        screen.lines().any(|l| l.trim_end().ends_with("+HELLO")),
        "no +HELLO line in the approval:\n{screen}"
    );
    assert!(!screen.contains("WORLD"), "{screen}");
    tmux.keys(&["a"]);

    // Nobody answers again: the turn can only finish if the second edit runs unasked.
    let screen = tmux.wait_for("Both lines changed.", 1);
    assert!(!screen.contains("allow edit"), "{screen}");
    tmux.wait_for("─ done", 1);
    assert_eq!(
        std::fs::read_to_string(env.workspace().join("f.txt")).unwrap(),
        "HELLO\nWORLD\n"
    );
    let types = types(&env.only_session());
    let answers = types.iter().filter(|t| *t == "approval_answer").count();
    assert_eq!(answers, 1, "{types:?}");
    let results = types.iter().filter(|t| *t == "tool_result").count();
    assert_eq!(results, 3, "{types:?}");
}

#[test]
fn a_steer_typed_while_streaming_shows_pending_and_is_delivered_after_the_tools() {
    let Some((env, server)) =
        Env::new().in_tmux_with(Reply::openai_steered_bash(&WORDS, 300).into())
    else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "--permissions yolo", "");
    tmux.line("start the work");
    tmux.wait_for("Alpha", 1);
    tmux.line("also check b");

    // Pending while the step streams (its last word not out yet).
    let screen = tmux.wait_for("also check b", 1);
    let pending = line_with(&screen, "also check b");
    assert!(pending.contains("steer"), "{screen}");
    assert!(!screen.contains("Checked b too."), "{screen}");

    tmux.wait_for("Checked b too.", 1);
    let screen = tmux.wait_for("─ done", 1);
    // In the history, as delivered, after the tool's card.
    let delivered = line_with(&screen, "also check b");
    assert!(delivered.contains("steer"), "{screen}");
    let card = screen.find("echo one").unwrap();
    let steer_at = screen.find("also check b").unwrap();
    assert!(card < steer_at, "{screen}");
    assert!(env.workspace().join("one.txt").exists());

    let types = types(&env.only_session());
    assert_steer_delivered_after_the_tools(&types);
}

#[test]
fn ctrl_c_stops_a_long_bash_call_within_a_second_and_says_so() {
    let Some((env, server)) = Env::new().in_tmux_with(vec![Reply::openai_call(
        "call_1",
        "bash",
        r#"{"command":"sleep 30"}"#,
        100,
    )]) else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "--permissions yolo", "");
    tmux.line("run the long job");
    tmux.wait_for("sleep 30", 1);
    // Running: its dispatch is in the log.
    let session = env.only_session();
    tmux.wait_until("the bash call dispatched", |_| {
        types(&session).iter().any(|t| t == "tool_dispatched")
    });
    tmux.keys(&["C-c"]);
    tmux.wait_for("stopping the turn", 1);
    tmux.wait_for("─ stopped by you", 1);

    let interrupt = entry_where(&session, |b| {
        matches!(b, Body::Record(Record::Interrupt {}))
    });
    let result = entry_where(
        &session,
        |b| matches!(b, Body::Record(Record::ToolResult(r)) if r.name == "bash"),
    );
    let ms = (result.ts - interrupt.ts).num_milliseconds();
    assert!(
        (0..1000).contains(&ms),
        "the bash call settled {ms} ms after the interrupt"
    );
    // The program still runs, at an idle prompt.
    assert!(tmux.alive());
}

/// Paragraphs long enough to wrap at 80 columns, each different.
fn paragraphs() -> Vec<String> {
    (1..=14)
        .map(|n| {
            format!(
                "Paragraph {n} begins here and keeps going with words that wrap: \
                 lorem ipsum dolor sit amet number {n}, consectetur adipiscing elit, \
                 ending paragraph {n}.\n\n"
            )
        })
        .collect()
}

#[test]
fn resizing_mid_stream_keeps_every_finished_line_in_the_history() {
    let paras = paragraphs();
    let chunks: Vec<&str> = paras.iter().map(String::as_str).collect();
    let Some((_env, _server, tmux)) = streaming_in_the_tui(&chunks, 250, "write many paragraphs")
    else {
        return;
    };
    tmux.wait_for("ending paragraph 3.", 1);
    tmux.resize_width(80);
    tmux.wait_for("ending paragraph 7.", 1);
    tmux.resize_width(120);
    tmux.wait_for("ending paragraph 10.", 1);
    tmux.resize_width(100);
    tmux.wait_for("─ done", 1);
    tmux.ctrl_d();

    let history = normalized(&tmux.history());
    let missing: Vec<String> = paras
        .iter()
        .map(|p| normalized(p))
        .filter(|p| !history.contains(p.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "missing from the history: {missing:#?}\nthe history:\n{}",
        tmux.history()
    );
}

/// A resize re-flows what the terminal shows; the live area is found and drawn again,
/// and no copy of its status line and footer is left in the terminal's history (tmux
/// moves a screen erased from its top left into the scrollback). At the top of the
/// screen, where it starts, tmux's re-flow can still leave the input's row above the
/// new live area once: its cursor comes back below the row it was on.
#[test]
fn resizing_leaves_no_copy_of_the_live_area_in_the_terminal_history() {
    let Some((env, server)) = Env::new().in_tmux_with(Vec::new()) else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "", "");
    tmux.keys(&["-l", "resize me"]);
    tmux.wait_for("› resize me", 1);
    let short = "⏎ send · Alt⏎/^J newline · / commands · @ files";
    let full = "⏎ send · Alt⏎/^J newline · / commands · @ files · ^T transcript · ^D exit";
    for (width, footer) in [(60, short), (120, full), (50, short), (100, full)] {
        tmux.resize_width(width);
        // Drawn again at the new width: its last row is the footer that fits it.
        tmux.wait_until(&format!("the footer at {width} columns"), |screen| {
            screen.lines().rev().find(|l| !l.trim().is_empty()) == Some(footer)
        });
    }
    let history = tmux.history();
    assert_eq!(
        (
            history.matches("/ commands").count(),
            history.matches("spent 0/400k").count()
        ),
        (1, 1),
        "{history}"
    );
}

/// Resizes the terminal to `width` × `height`.
fn resize(tmux: &Tmux, width: u16, height: u16) {
    let (x, y) = (width.to_string(), height.to_string());
    let status = tmux
        .cmd()
        .args(["resize-window", "-t", "t", "-x", &x, "-y", &y])
        .status()
        .unwrap();
    assert!(status.success());
}

/// The last `height` lines of a capture: the rows the terminal shows.
fn shown_rows(screen: &str, height: usize) -> Vec<&str> {
    let lines: Vec<&str> = screen.lines().collect();
    lines[lines.len().saturating_sub(height)..].to_vec()
}

/// A resize while an overlay is open re-flows the main screen behind it too (tmux
/// pulls history lines down onto a taller screen): once the overlay closes, the live
/// area is found again and drawn whole at the bottom at the new size, and nothing is
/// left of the one drawn before (here the slash-command popup, open under the
/// transcript). It was drawn at its old row, mid-screen, over the history, with the
/// old popup and input still at the bottom: what was typed could not be seen.
#[test]
fn closing_an_overlay_opened_before_a_resize_draws_the_live_area_whole_at_the_bottom() {
    let reply: Vec<String> = (1..=30).map(|n| format!("line {n}\n\n")).collect();
    let reply: Vec<&str> = reply.iter().map(String::as_str).collect();
    let Some((env, server)) = Env::new().in_tmux_with(vec![Reply::sse(openai_text(&reply, 100))])
    else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "", "");
    let short = "⏎ send · Alt⏎/^J newline · / commands · @ files";
    let full = "⏎ send · Alt⏎/^J newline · / commands · @ files · ^T transcript · ^D exit";
    resize(&tmux, 50, 20);
    tmux.wait_until("the footer at 50 columns", |screen| {
        screen.lines().rev().find(|l| !l.trim().is_empty()) == Some(short)
    });
    // The history fills the screen: the live area is at its bottom.
    tmux.turn("fill the screen", "line 30", "─ done", 1);
    tmux.keys(&["-l", "/"]);
    tmux.wait_for("/help     the commands and keys", 1);
    tmux.keys(&["C-t"]);
    tmux.wait_until("the transcript", |screen| {
        shown_rows(screen, 20)[0].starts_with("transcript")
    });
    resize(&tmux, 100, 30);
    tmux.wait_until("the transcript at 100 columns", |screen| {
        let title = shown_rows(screen, 30)[0];
        title.starts_with("transcript") && title.chars().count() > 90
    });
    tmux.keys(&["q"]);
    // The popup is still open (the input holds `/`): drawn again whole at the
    // bottom, 100 columns wide, under the history, once.
    let popup = "/help     the commands and keys";
    let screen = tmux.wait_until("the live area at the bottom at 100 columns", |screen| {
        let rows = shown_rows(screen, 30);
        rows[29] == full && rows[27] == "› /" && rows[19] == popup
    });
    let rows = shown_rows(&screen, 30);
    assert_eq!(
        rows[20], "/status   provider, model, permissions, session, limits, what is allowed",
        "{screen}"
    );
    assert!(
        rows[17].starts_with("─ done") && rows[18].is_empty(),
        "{screen}"
    );
    assert_eq!(
        tmux.history().matches(popup).count(),
        1,
        "{}",
        tmux.history()
    );
    // What is typed shows in the input, the popup gone, nothing stale below.
    tmux.keys(&["-l", "abc"]);
    let screen = tmux.wait_until("the input with what was typed", |screen| {
        screen.contains("› /abc") && !screen.contains(popup)
    });
    let rows = shown_rows(&screen, 30);
    let input = rows.iter().position(|r| *r == "› /abc").unwrap();
    assert!(
        rows[input - 2].starts_with("─ done") && rows[input - 1].is_empty(),
        "{screen}"
    );
    assert!(rows[input + 1].contains("spent 110/400k"), "{screen}");
    assert_eq!(rows[input + 2], full, "{screen}");
    assert!(rows[input + 3..].iter().all(|r| r.is_empty()), "{screen}");
    assert_eq!(
        rows.iter().filter(|r| r.starts_with('›')).count(),
        1,
        "{screen}"
    );
}

#[test]
fn ctrl_d_exits_and_leaves_the_conversation_in_the_terminal_history() {
    let Some((env, server)) = Env::new().in_tmux_with(vec![Reply::sse(openai_text(
        &["The answer is ", "forty-two."],
        100,
    ))]) else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "", "");
    tmux.turn("what is the answer", "forty-two.", "─ done", 1);
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_exit(), 0);

    let history = tmux.history();
    assert_contains(&history, "what is the answer");
    assert_contains(&history, "The answer is forty-two.");
    assert!(
        history.find("what is the answer") < history.find("The answer is forty-two."),
        "{history}"
    );
}

/// A run with some colourful output: a prompt, Markdown, a tool card.
fn colourful_run(vars: &str) -> (Env, String) {
    let env = Env::new();
    let server = MockServer::start(vec![
        Reply::openai_call("call_1", "bash", r#"{"command":"echo hi"}"#, 100),
        Reply::openai_text("# Title\n\nSome **bold** and `code`.\n", 120),
    ]);
    let tmux = env.tui(Wire::OpenAi, &server.url(), "--permissions yolo", vars);
    tmux.line("show colours");
    tmux.wait_for("─ done", 1);
    let styled = tmux.styled_screen();
    assert_contains(&styled, "bold");
    (env, styled)
}

#[test]
fn the_screen_has_colour_in_a_normal_run() {
    if !tmux_available() {
        return;
    }
    let (_env, styled) = colourful_run("");
    let colours = colour_codes(&styled);
    let foreground = |c: &String| {
        let first: u32 = c.split(';').next().unwrap().parse().unwrap();
        (30..=38).contains(&first) || (90..=97).contains(&first)
    };
    assert!(
        colours.iter().any(foreground),
        "no foreground colour on the screen: {styled:?}"
    );
}

#[test]
fn no_color_leaves_the_screen_without_colour() {
    if !tmux_available() {
        return;
    }
    let (_env, styled) = colourful_run("NO_COLOR=1 ");
    assert_eq!(colour_codes(&styled), Vec::<String>::new(), "{styled:?}");
    // Bold still marks what it marks.
    assert!(styled.contains("\x1b[1m"), "{styled:?}");
}

#[test]
fn enter_in_the_tree_navigator_continues_from_an_earlier_turn() {
    let Some((env, server)) = Env::new().in_tmux_with(vec![
        Reply::openai_text("First answer.", 100),
        Reply::openai_text("Second answer.", 110),
        Reply::openai_text("A fresh answer on the new branch.", 120),
    ]) else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "", "");
    tmux.turn("first question", "First answer.", "─ done", 1);
    tmux.turn("second question", "Second answer.", "─ done", 2);

    tmux.line("/tree");
    let screen = tmux.wait_for("◀ leaf", 1);
    assert!(
        line_with(&screen, "◀ leaf").contains("second question"),
        "{screen}"
    );
    assert_contains(&screen, "user \"first question\"");
    tmux.keys(&["Up"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("continuing from entry", 1);
    tmux.turn(
        "a new direction",
        "A fresh answer on the new branch.",
        "─ done",
        3,
    );
    tmux.ctrl_d();

    let session = env.only_session();
    assert!(types(&session).iter().any(|t| t == "branch"));
    assert_eq!(
        prompts_to_leaf(&session),
        ["first question", "a new direction"]
    );
}

/// For a test in a terminal (`None` without tmux): an environment with an OpenAI
/// key and a server answering each request with the next of `answers`.
fn answers_in_tmux(answers: &[&str]) -> Option<(Env, MockServer)> {
    let replies = answers.iter().map(|a| Reply::openai_text(a, 100)).collect();
    Env::new()
        .with_var("OPENAI_API_KEY", "sk-test")
        .in_tmux_with(replies)
}

/// A one-shot run of `prompt` (`-p`) on the server, which must succeed: a session
/// made before the terminal UI opens.
fn one_shot(env: &Env, server: &MockServer, prompt: &str) {
    let out = env.run_on(Wire::OpenAi, &server.url(), &["-p", prompt]);
    assert!(out.status.success(), "{}", support::env::stderr(&out));
}

#[test]
fn resume_shows_the_picker_with_the_first_prompt_of_an_older_session() {
    let Some((env, server)) = answers_in_tmux(&["An old answer.", "Back in the old session."])
    else {
        return;
    };
    one_shot(&env, &server, "the very first prompt");
    let older = env.only_session();

    let tmux = env.tui(Wire::OpenAi, &server.url(), "", "");
    tmux.line("/resume");
    let screen = tmux.wait_for("the very first prompt", 1);
    assert_contains(&screen, "resume a session");
    tmux.keys(&["Enter"]);
    tmux.wait_for("commands", 1);
    tmux.turn("and now?", "Back in the old session.", "─ done", 1);
    tmux.ctrl_d();
    assert_eq!(
        prompts_to_leaf(&older),
        ["the very first prompt", "and now?"]
    );
}

/// `xcsh --resume` without a session opens on the session picker of this workspace,
/// the session worked on last at the top (the older one here: it was labelled
/// after the newer one started), with how long ago; Enter resumes it, and the
/// next prompt goes on in it.
#[test]
fn resume_without_a_session_opens_the_picker_on_the_last_active_session() {
    let answers = [
        "An old answer.",
        "A newer answer.",
        "Back in the old session.",
    ];
    let Some((env, server)) = answers_in_tmux(&answers) else {
        return;
    };
    for prompt in ["the older prompt", "the newer prompt"] {
        one_shot(&env, &server, prompt);
    }
    let sessions = env.sessions();
    let older = sessions[0].clone();
    let older_id = session_id(&older);
    env.ok(&["label", &older_id, "1", "worked on again"]);

    let tmux = env.in_terminal(Wire::OpenAi, &server.url(), "--resume", "");
    let screen = tmux.wait_for("the newer prompt", 1);
    assert_contains(&screen, "resume a session");
    assert_contains(line_with(&screen, "updated"), "first prompt");
    let (top, next) = (
        screen.find("the older prompt").unwrap(),
        screen.find("the newer prompt").unwrap(),
    );
    assert!(top < next, "not the last active first:\n{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_for(&format!("continuing session {older_id}"), 1);
    tmux.turn("and now?", "Back in the old session.", "─ done", 1);
    tmux.ctrl_d();
    assert_eq!(prompts_to_leaf(&older), ["the older prompt", "and now?"]);
    assert_eq!(env.sessions(), sessions, "no new session");
}

/// Esc in the picker `xcsh --resume` opens on leaves xcsh (exit 0), saying that
/// nothing was resumed, and writes nothing.
#[test]
fn esc_in_the_picker_of_resume_exits_saying_nothing_was_resumed() {
    let Some((env, server)) = answers_in_tmux(&["An answer."]) else {
        return;
    };
    one_shot(&env, &server, "a prompt");
    let session = env.only_session();
    let before = std::fs::read(&session).unwrap();

    let tmux = env.in_terminal(Wire::OpenAi, &server.url(), "--resume", "");
    tmux.wait_for("a prompt", 1);
    tmux.keys(&["Escape"]);
    assert_eq!(tmux.wait_exit(), 0);
    let history = tmux.history();
    assert_contains(&history, "nothing was resumed: no session was picked");
    assert_eq!(std::fs::read(&session).unwrap(), before);
    assert_eq!(env.sessions(), [session]);
}

/// `/new` is refused while a turn runs; once it has ended, `/new` leaves the session
/// (the status line no longer shows its id, and the notice says how to come back to
/// it) and the next prompt starts a second session file holding only that prompt.
#[test]
fn new_starts_a_new_session_file_with_the_next_prompt() {
    let Some((env, server)) = Env::new().in_tmux_with(long_bash_then("A fresh answer.")) else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "--permissions yolo", "");
    tmux.line("run the long job");
    tmux.wait_for("sleep 30", 1);
    let first = env.only_session();
    let id = session_id(&first);
    tmux.line("/new");
    tmux.wait_for(
        "/new cannot run during a turn: send it again once the turn ends (Ctrl-C stops it)",
        1,
    );
    tmux.keys(&["C-c"]);
    // The status line (the last line naming the spend) shows the session's id.
    let status = |screen: &str| -> String {
        let line = screen.lines().rev().find(|l| l.contains("spent"));
        line.unwrap_or_else(|| panic!("no status line:\n{screen}"))
            .to_owned()
    };
    let screen = tmux.wait_for("─ stopped by you", 1);
    assert_contains(&status(&screen), &id[..8]);
    assert_eq!(env.sessions(), std::slice::from_ref(&first));

    tmux.line("/new");
    let screen = tmux.wait_for(
        &format!("new session: the next prompt starts it (the last one: xcsh --resume {id})"),
        1,
    );
    assert!(!status(&screen).contains(&id[..8]), "{screen}");
    tmux.turn("a fresh start", "A fresh answer.", "─ done", 1);
    tmux.ctrl_d();

    let (_, prompts) = env.after_new(&first);
    assert_eq!(prompts, [["run the long job"], ["a fresh start"]]);
}

/// Whether a line of `screen` ends with `text` (trailing blanks aside).
fn has_line_ending(screen: &str, text: &str) -> bool {
    screen.lines().any(|l| l.trim_end().ends_with(text))
}

#[test]
fn ctrl_t_shows_a_tool_output_in_full_and_q_closes_it() {
    let Some((env, server)) = Env::new().in_tmux_with(vec![
        Reply::openai_call(
            "call_1",
            "bash",
            r#"{"command":"seq 30 | sed s/^/row-/"}"#,
            100,
        ),
        Reply::openai_text("Counted.", 120),
    ]) else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "--permissions yolo", "");
    let screen = tmux.turn("count", "Counted.", "─ done", 1);
    // The card shows the last lines only.
    assert!(has_line_ending(&screen, "row-30"), "{screen}");
    assert!(!has_line_ending(&screen, "row-1"), "{screen}");

    tmux.keys(&["C-t"]);
    let screen = tmux.wait_until("the transcript with row-1", |s| has_line_ending(s, "row-1"));
    for n in 1..=30 {
        assert!(
            has_line_ending(&screen, &format!("row-{n}")),
            "row-{n} is not in the transcript:\n{screen}"
        );
    }
    tmux.keys(&["q"]);
    let screen = tmux.wait_until("the transcript closed", |s| !has_line_ending(s, "row-1"));
    assert_contains(&screen, "Ask xcsh to do something");
    assert_contains(&screen, "Counted.");
}

#[test]
fn ctrl_t_during_a_turn_follows_it_and_says_when_a_question_waits() {
    // The first call blocks on a FIFO until the test writes into it: the transcript
    // is open before anything after that call exists.
    let Some((env, server)) = Env::new().in_tmux_with(vec![
        Reply::sse(openai_call(
            &["Waiting at the gate."],
            "call_1",
            "bash",
            r#"{"command":"head -n 1 gate"}"#,
            100,
        )),
        Reply::sse(openai_call(
            &["The gate opened."],
            "call_2",
            "write",
            r#"{"path":"f.txt","content":"new\n"}"#,
            120,
        )),
        Reply::openai_text("Wrote f.txt.", 140),
    ]) else {
        return;
    };
    let gate = env.workspace().join("gate");
    let made = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap();
    assert!(made.success());
    let tmux = env.tui(Wire::OpenAi, &server.url(), "--permissions ask", "");
    tmux.line("pass the gate");
    tmux.wait_for("allow bash", 1);
    tmux.keys(&["y"]);
    tmux.wait_until("the call running", |s| {
        s.contains("head -n 1 gate") && !s.contains("allow bash")
    });

    tmux.keys(&["C-t"]);
    let pager = "g/G top/end";
    tmux.wait_until("the transcript", |s| {
        s.contains(pager) && s.contains("Waiting at the gate.")
    });
    // Read and write: opening does not wait for the reader, and the line stays in
    // the FIFO until `head` reads it.
    let mut open_gate = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&gate)
        .unwrap();
    std::io::Write::write_all(&mut open_gate, b"go\n").unwrap();
    let screen = tmux.wait_until("the write's question announced", |s| {
        s.contains("approval waiting: write · Esc to answer")
    });
    // Still the transcript, now with what was recorded after it opened.
    assert_contains(&screen, pager);
    assert_contains(&screen, "The gate opened.");
    assert!(!screen.contains("allow write"), "{screen}");

    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("allow write", 1);
    assert!(!screen.contains(pager), "{screen}");
    tmux.keys(&["y"]);
    tmux.wait_for("Wrote f.txt.", 1);
    tmux.wait_for("─ done", 1);
    assert_eq!(
        std::fs::read_to_string(env.workspace().join("f.txt")).unwrap(),
        "new\n"
    );
    drop(open_gate);
}

/// A draft typed while the agent works does not keep the keys from its questions:
/// each (edit, write, bash in a row) takes them as it opens and is answered by one
/// key, `y`, or Alt-y (what a terminal sends for Esc and `y` typed quickly); the
/// draft stays in the input throughout and after.
#[test]
fn questions_over_a_draft_take_the_keys_and_alt_y_answers_as_y() {
    let Some((env, server)) = Env::new().with_file("f.txt", "hello\n").in_tmux_with(vec![
        Reply::sse(openai_call(
            &WORDS,
            "call_1",
            "read",
            r#"{"path":"f.txt"}"#,
            100,
        ))
        .paced(300),
        // Paced: the first question comes over a second after the draft was typed
        // (a question that opens mid-typing leaves the keys to the draft).
        Reply::openai_call(
            "call_2",
            "edit",
            r#"{"path":"f.txt","old_string":"hello","new_string":"HELLO"}"#,
            120,
        )
        .paced(400),
        Reply::openai_call(
            "call_3",
            "write",
            r#"{"path":"g.txt","content":"new\n"}"#,
            140,
        ),
        Reply::openai_call("call_4", "bash", r#"{"command":"cat g.txt"}"#, 160),
        Reply::openai_text("All three done.", 180),
    ]) else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "--permissions ask", "");
    tmux.line("make three changes");
    tmux.wait_for("Alpha", 1);
    tmux.keys(&["-l", "also the docs"]);
    for (question, key) in [
        ("allow edit", "y"),
        ("allow write", "M-y"),
        ("allow bash", "y"),
    ] {
        // A capture may fall between a frame's writes: wait for the whole frame.
        let what = format!("{question:?} over the draft in the input");
        tmux.wait_until(&what, |screen| {
            screen.contains(question) && has_line_ending(screen, "› also the docs")
        });
        tmux.keys(&[key]);
    }
    let screen = tmux.wait_until("the turn's end over the draft in the input", |screen| {
        screen.contains("─ done") && has_line_ending(screen, "› also the docs")
    });
    assert_contains(&screen, "All three done.");
    let read = |name: &str| std::fs::read_to_string(env.workspace().join(name)).unwrap();
    assert_eq!([read("f.txt"), read("g.txt")], ["HELLO\n", "new\n"]);
    let answers: Vec<String> = types(&env.only_session())
        .into_iter()
        .filter(|t| t == "approval_answer")
        .collect();
    assert_eq!(answers.len(), 3, "{answers:?}");
}

/// `/resume` marks the session xcsh is in, and picking it says so instead of
/// writing its conversation into the history again.
#[test]
fn resuming_the_current_session_says_so_and_shows_nothing_again() {
    let Some((env, server)) = answers_in_tmux(&["The one answer."]) else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "", "");
    tmux.turn("remember me", "The one answer.", "─ done", 1);
    let id = session_id(&env.only_session());
    tmux.line("/resume");
    let screen = tmux.wait_for("resume a session", 1);
    assert_contains(line_with(&screen, "remember me"), "(current)");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for(&format!("already in session {id}"), 1);
    assert_eq!(screen.matches("remember me").count(), 1, "{screen}");
    assert_eq!(screen.matches("The one answer.").count(), 1, "{screen}");
}

/// Tab on an idle prompt sends nothing (it queues a follow-up only while a turn
/// runs), and Alt-Enter is a newline, not a send: the one prompt sent holds both
/// lines.
#[test]
fn tab_on_an_idle_prompt_sends_nothing_and_alt_enter_starts_a_second_line() {
    let Some((env, server)) = answers_in_tmux(&["Both lines arrived."]) else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "", "");
    tmux.keys(&["-l", "first line"]);
    tmux.keys(&["Tab"]);
    tmux.keys(&["M-Enter"]);
    tmux.keys(&["-l", "second line"]);
    // Keys are read in order: once the second line shows, Tab has been handled.
    let screen = tmux.wait_for("second line", 1);
    assert_eq!(line_with(&screen, "first line"), "› first line");
    assert_eq!(line_with(&screen, "second line"), "second line");
    assert!(!screen.contains("Both lines arrived."), "{screen}");

    tmux.keys(&["Enter"]);
    tmux.wait_for("Both lines arrived.", 1);
    tmux.wait_for("─ done", 1);
    assert_eq!(
        prompts_to_leaf(&env.only_session()),
        ["first line\nsecond line"]
    );
}
