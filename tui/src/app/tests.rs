//! The app's tests: run events and keys in, history lines and live frames out.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use expect_test::expect;
use xcsh_machine::{
    ApprovalScope, CallId, Delta, EntryId, Permissions, StepNo, StopReason, ToolCall, ToolStatus,
    Usage, UserOrigin, Verdict,
};
use xcsh_runtime::{ApprovalAnswer, ApprovalRequest, RunEvent};

use super::question::TYPING_MS;
use super::{Action, App, StatusInfo};
use crate::Theme;
use crate::cells::Cell;
use crate::editor::Editor;
use crate::testkit::{lines_text, text};

fn app() -> App {
    App::new(
        Theme::MONO,
        StatusInfo {
            provider: "openai".into(),
            model: "gpt-test".into(),
            permissions: Permissions::Ask,
            max_steps: 32,
            compact_at: 100_000,
            budget: 400_000,
            session_id: Some("0a1b2c3d".into()),
            sandbox: None,
        },
        Editor::default(),
    )
}

fn started(app: &mut App) {
    app.on_run_event(
        RunEvent::RunStarted {
            session_id: "s".into(),
            session_path: "/tmp/s.jsonl".into(),
            leaf: EntryId(0),
        },
        0,
    );
    app.on_run_event(RunEvent::StepStarted { step: StepNo(1) }, 0);
}

/// An app with a turn started: its first step is under way.
fn working() -> App {
    let mut app = app();
    started(&mut app);
    app
}

fn delta(app: &mut App, text: &str, now_ms: u64) {
    app.on_run_event(
        RunEvent::TextDelta(Delta {
            step: StepNo(1),
            text: text.into(),
        }),
        now_ms,
    );
}

/// The first step finishing, completed.
fn step_finished(app: &mut App, now_ms: u64) {
    app.on_run_event(
        RunEvent::StepFinished {
            step: StepNo(1),
            usage: Usage::default(),
            finish: None,
            outcome: "completed",
            error: None,
        },
        now_ms,
    );
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// The actions of an answer without a message.
fn answer(verdict: Verdict, scope: ApprovalScope) -> Vec<Action> {
    vec![Action::Answer(ApprovalAnswer {
        verdict,
        scope,
        message: None,
    })]
}

/// Types `text` (nothing must answer), Enter (which must send `sent`), Esc back to
/// the open question, then `answer_key`: the answer's actions.
fn send_then_answer(app: &mut App, text: &str, sent: Action, answer_key: char) -> Vec<Action> {
    assert_eq!(typed(app, text), Vec::new());
    assert_eq!(app.on_key(key(KeyCode::Enter)), [sent]);
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Char(answer_key)))
}

fn typed(app: &mut App, text: &str) -> Vec<Action> {
    let mut out = Vec::new();
    for c in text.chars() {
        out.extend(app.on_key(key(KeyCode::Char(c))));
    }
    out
}

/// The history not yet written, at 80 columns.
fn history_at_80(app: &mut App) -> String {
    lines_text(&app.take_history(80, 100), 80)
}

fn live(app: &mut App, width: u16, height: u16, now_ms: u64) -> String {
    text(&app.render_live(width, height, now_ms))
}

#[test]
fn a_streaming_message_shows_its_unfinished_tail_live_and_its_finished_blocks_in_history() {
    let mut app = working();
    delta(&mut app, "First paragraph, finished.\n\nSecond para", 100);
    delta(&mut app, "graph, still stream", 200);
    // No block is surely finished yet: all of it is live.
    assert_eq!(app.take_history(60, 200), Vec::new());
    expect![[r#"
        • First paragraph, finished.

          Second paragraph, still stream

        › Ask xcsh to do something · / for commands
        openai · gpt-test · ask · step 1/32 · spent 0/400k · 0.3s
        ⏎ steer · Tab queue · Esc/^C stop · ^T transcript
    "#]]
    .assert_eq(&live(&mut app, 60, 20, 300));
    // The second paragraph's first line is complete: the first one is finished.
    delta(&mut app, "ing.\nAnd more", 400);
    expect![[r#"
        • First paragraph, finished.
    "#]]
    .assert_eq(&lines_text(&app.take_history(60, 400), 60));
    expect![[r#"

          Second paragraph, still streaming.
          And more

        › Ask xcsh to do something · / for commands
        openai · gpt-test · ask · step 1/32 · spent 0/400k · 0.5s
        ⏎ steer · Tab queue · Esc/^C stop · ^T transcript
    "#]]
    .assert_eq(&live(&mut app, 60, 20, 500));
}

#[test]
fn a_streamed_message_lands_in_history_as_the_whole_message_would_render() {
    let source = "Intro line.\n\n- one\n- two\n\n```rust\nfn main() {}\n```\n\nLast words.";
    let mut app = working();
    for piece in source.as_bytes().chunks(5) {
        delta(&mut app, std::str::from_utf8(piece).unwrap(), 10);
        // Drawing between deltas must not change what history gets.
        let _ = app.take_history(50, 10);
    }
    let mut streamed = Vec::new();
    let mut fresh = working();
    for piece in source.as_bytes().chunks(5) {
        delta(&mut fresh, std::str::from_utf8(piece).unwrap(), 10);
        streamed.extend(fresh.take_history(50, 10));
    }
    step_finished(&mut fresh, 20);
    streamed.extend(fresh.take_history(50, 20));
    let whole = Cell::Assistant {
        markdown: source.into(),
    }
    .lines(50, 0, &Theme::MONO);
    assert_eq!(lines_text(&streamed, 50), lines_text(&whole, 50));
}

#[test]
fn a_running_bash_card_shows_its_live_output_and_then_settles_into_history() {
    let mut app = working();
    app.on_run_event(
        RunEvent::ToolCall {
            step: StepNo(1),
            call_id: CallId("c1".into()),
            name: "bash".into(),
            arguments: r#"{"command":"cargo test"}"#.into(),
        },
        1_000,
    );
    app.on_run_event(
        RunEvent::ToolOutput {
            call_id: CallId("c1".into()),
            stream: xcsh_tools::OutputStream::Stdout,
            text: "running 3 tests\ntest a ... ok\n".into(),
        },
        1_500,
    );
    expect![[r#"
        ⠧ bash cargo test · 1.2s
          └ running 3 tests
            test a ... ok

        › Ask xcsh to do something
        gpt-test · ask · step 1/32 · 2.2s
        ⏎ steer · Tab queue · Esc/^C stop
    "#]]
    .assert_eq(&live(&mut app, 40, 20, 2_200));
    app.on_run_event(
        RunEvent::ToolResult {
            call_id: CallId("c1".into()),
            name: "bash".into(),
            status: ToolStatus::Ok,
            content: "exit code: 0\nduration: 1.3s\nstdout:\nrunning 3 tests\ntest a ... ok\n"
                .into(),
            arguments: None,
            synthetic: None,
            duration_ms: 1_300,
            changes: Vec::new(),
        },
        2_300,
    );
    let history = lines_text(&app.take_history(40, 2_300), 40);
    assert!(history.starts_with("✓ bash cargo test"), "{history}");
    assert!(!live(&mut app, 40, 20, 2_400).contains("bash"));
}

#[test]
fn a_steer_is_pending_until_it_is_delivered_then_it_is_a_user_message() {
    let mut app = working();
    assert_eq!(typed(&mut app, "also b"), Vec::new());
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Action::Steer("also b".into())]
    );
    app.on_run_event(
        RunEvent::Queued {
            origin: UserOrigin::Steer,
            text: "also b".into(),
        },
        10,
    );
    assert!(live(&mut app, 60, 20, 20).contains("also b"));
    app.on_run_event(
        RunEvent::Delivered {
            origin: UserOrigin::Steer,
            text: "also b".into(),
        },
        30,
    );
    assert!(!live(&mut app, 60, 20, 40).contains("also b"));
    expect![[r#"
        › steer · also b
    "#]]
    .assert_eq(&lines_text(&app.take_history(60, 40), 60));
}

#[test]
fn tab_queues_a_follow_up_while_working_and_enter_prompts_while_idle() {
    let mut app = app();
    typed(&mut app, "first");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Action::Prompt("first".into())]
    );
    started(&mut app);
    typed(&mut app, "later");
    assert_eq!(
        app.on_key(key(KeyCode::Tab)),
        [Action::FollowUp("later".into())]
    );
    typed(&mut app, "/queue then this");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Action::FollowUp("then this".into())]
    );
}

/// A turn asking whether to edit a file whose line is `old line`, with nothing typed.
fn asking() -> App {
    asking_over("")
}

/// A turn asking, as [`asking`], while the input holds `draft`, typed before.
fn asking_over(draft: &str) -> App {
    let mut app = working();
    assert_eq!(typed(&mut app, draft), Vec::new());
    app.ask(&edit_request(), Some("old line\n"), 0);
    app
}

fn edit_request() -> ApprovalRequest {
    ApprovalRequest {
        call: ToolCall {
            id: CallId("c9".into()),
            name: "edit".into(),
            arguments: r#"{"path":"a.txt","old_string":"old line","new_string":"new line"}"#.into(),
        },
        cwd: "/work/ws".into(),
        waiting: 0,
    }
}

#[test]
fn an_edit_approval_shows_its_diff_and_m_denies_with_a_message() {
    let mut app = working();
    app.ask(&edit_request(), Some("keep\nold line\nkeep\n"), 0);
    let screen = live(&mut app, 60, 24, 100);
    assert!(screen.contains("-old line"), "{screen}");
    assert!(screen.contains("+new line"), "{screen}");
    assert_eq!(app.on_key(key(KeyCode::Char('m'))), Vec::new());
    assert_eq!(typed(&mut app, "use b.txt"), Vec::new());
    assert!(live(&mut app, 60, 24, 100).contains("use b.txt"));
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Action::Answer(ApprovalAnswer {
            verdict: Verdict::Deny,
            scope: ApprovalScope::Once,
            message: Some("use b.txt".into()),
        })]
    );
}

#[test]
fn a_question_with_more_behind_it_says_how_many_wait() {
    let mut app = working();
    let request = ApprovalRequest {
        waiting: 2,
        ..edit_request()
    };
    app.ask(&request, Some("old line\n"), 0);
    expect![[r#"
        ? allow edit a.txt · +1 -1 · 2 more waiting
          @@ -1 +1 @@
          1   -old line
            1 +new line
          y once · a always edit · A this exact call · n deny
          m deny with a message

        › Ask xcsh to do something · / for commands
        openai · gpt-test · ask · step 1/32 · spent 0/400k · 0.1s
        y a A n m answer · Esc type a steer · ^T show all · ^C stop
    "#]]
    .assert_eq(&live(&mut app, 60, 12, 100));
}

#[test]
fn while_a_question_is_open_esc_lets_the_user_type_a_steer() {
    let mut app = asking();
    app.on_key(key(KeyCode::Esc));
    // `a` now types into the editor instead of allowing the tool.
    // Esc on the empty editor goes back to the question; `a` answers.
    assert_eq!(
        send_then_answer(&mut app, "and docs", Action::Steer("and docs".into()), 'a'),
        answer(Verdict::Allow, ApprovalScope::Tool)
    );
}

#[test]
fn a_key_that_is_not_an_answer_types_into_the_input_and_the_question_waits() {
    let mut app = asking();
    // `/status` typed as the question opened: `/` is no answer, so it and the
    // rest (`s`, `t`, `a`, `u`, `s`) are typed, and nothing is allowed.
    assert_eq!(typed(&mut app, "/status"), Vec::new());
    assert!(live(&mut app, 80, 24, 100).contains("Esc back to the question"));
    // The question is still open: Esc on the empty input goes back to it.
    assert_eq!(
        send_then_answer(
            &mut app,
            "",
            Action::Command {
                name: "status".into(),
                arg: String::new(),
            },
            'n'
        ),
        answer(Verdict::Deny, ApprovalScope::Once)
    );
}

/// Esc reaches the waiting question, whose `n` denies; the input still holds `draft`.
fn esc_then_n_denies_keeping_the_draft(app: &mut App, draft: &str) {
    assert_eq!(app.on_key(key(KeyCode::Esc)), Vec::new());
    assert_eq!(
        app.on_key(key(KeyCode::Char('n'))),
        answer(Verdict::Deny, ApprovalScope::Once)
    );
    assert!(live(app, 80, 24, 100).contains(&format!("› {draft}")));
}

#[test]
fn esc_goes_back_to_a_waiting_question_and_keeps_the_draft() {
    let mut app = asking_over("half typed");
    // The question took the keys over the draft; Esc moves them to the draft.
    assert_eq!(app.on_key(key(KeyCode::Esc)), Vec::new());
    esc_then_n_denies_keeping_the_draft(&mut app, "half typed");
}

fn alt(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT)
}

/// A question about the call `id` of `name` with `arguments`.
fn request(id: &str, name: &str, arguments: &str) -> ApprovalRequest {
    let call = ToolCall {
        id: CallId(id.into()),
        name: name.into(),
        arguments: arguments.into(),
    };
    ApprovalRequest {
        call,
        ..edit_request()
    }
}

#[test]
fn each_question_over_a_draft_takes_the_keys_and_the_draft_stays_for_after() {
    let mut app = working();
    assert_eq!(typed(&mut app, "also add tests"), Vec::new());
    let questions = [
        edit_request(),
        request("c2", "write", r#"{"path":"b.txt","content":"b\n"}"#),
        request("c3", "bash", r#"{"command":"cargo test"}"#),
    ];
    let mut answers = Vec::new();
    for (question, c) in questions.iter().zip(['y', 'a', 'n']) {
        app.ask(question, Some("old line\n"), 0);
        answers.push(app.on_key(key(KeyCode::Char(c))));
        assert_eq!(app.editor.text(), "also add tests");
    }
    assert_eq!(
        answers,
        [
            answer(Verdict::Allow, ApprovalScope::Once),
            answer(Verdict::Allow, ApprovalScope::Tool),
            answer(Verdict::Deny, ApprovalScope::Once),
        ]
    );
    // Answered, the input has the keys again, the draft where it was.
    assert_eq!(typed(&mut app, "!"), Vec::new());
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Action::Steer("also add tests!".into())]
    );
}

#[test]
fn a_question_over_a_draft_shows_its_answer_keys_and_the_draft_below() {
    let mut app = asking_over("half typed");
    let screen = live(&mut app, 60, 12, 100);
    let rows: Vec<&str> = screen.lines().skip(4).collect();
    assert_eq!(
        rows,
        [
            "  y once · a always edit · A this exact call · n deny",
            "  m deny with a message",
            "",
            "› half typed",
            "openai · gpt-test · ask · step 1/32 · spent 0/400k · 0.1s",
            "y a A n m answer · Esc type a steer · ^T show all · ^C stop",
        ]
    );
}

/// Keys typed ahead never answer: a question that opens while a draft is being
/// typed (a key less than a second before) leaves the keys to it, so the `a` of
/// "add" goes into the draft, not into "allow for the session"; Esc goes to the
/// question. A question that opens right after an answer, or over a draft left
/// idle, takes the keys.
#[test]
fn a_question_opening_mid_typing_leaves_the_keys_to_the_draft() {
    let mut app = working();
    for (i, c) in "also ".chars().enumerate() {
        app.on_key_at(key(KeyCode::Char(c)), 1_000 + 100 * i as u64);
    }
    app.ask(&edit_request(), Some("old line\n"), 1_500);
    let typed_on = app.on_key_at(key(KeyCode::Char('a')), 1_550);
    let back = app.on_key_at(key(KeyCode::Esc), 1_600);
    let answered = app.on_key_at(key(KeyCode::Char('n')), 1_650);
    assert_eq!(
        (typed_on, app.editor.text(), back, answered),
        (
            Vec::new(),
            "also a",
            Vec::new(),
            answer(Verdict::Deny, ApprovalScope::Once)
        )
    );
    // An answer is no typing: the next question, right after, takes the keys.
    app.ask(&edit_request(), Some("old line\n"), 1_700);
    assert_eq!(
        app.on_key_at(key(KeyCode::Char('n')), 1_750),
        answer(Verdict::Deny, ApprovalScope::Once)
    );
    // A draft left idle for a second.
    app.on_key_at(key(KeyCode::Char('d')), 1_800);
    app.ask(&edit_request(), Some("old line\n"), 1_800 + TYPING_MS);
    assert_eq!(
        app.on_key_at(key(KeyCode::Char('y')), 1_850 + TYPING_MS),
        answer(Verdict::Allow, ApprovalScope::Once)
    );
}

#[test]
fn tab_moves_the_keys_to_the_draft_and_esc_brings_them_back_to_the_question() {
    let mut app = asking_over("half");
    assert_eq!(app.on_key(key(KeyCode::Tab)), Vec::new());
    // `a` is now the draft's, not "allow edit for the session".
    assert_eq!(typed(&mut app, " a day"), Vec::new());
    assert!(live(&mut app, 80, 24, 100).contains("Esc back to the question"));
    assert_eq!(app.on_key(key(KeyCode::Esc)), Vec::new());
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        answer(Verdict::Allow, ApprovalScope::Once)
    );
    assert_eq!(app.editor.text(), "half a day");
}

#[test]
fn alt_and_an_answer_key_answer_as_the_key_alone() {
    let answers: Vec<Vec<Action>> = ['y', 'a', 'A', 'n', 'N']
        .into_iter()
        .map(|c| asking_over("draft").on_key(alt(c)))
        .collect();
    assert_eq!(
        answers,
        [
            answer(Verdict::Allow, ApprovalScope::Once),
            answer(Verdict::Allow, ApprovalScope::Tool),
            answer(Verdict::Allow, ApprovalScope::Call),
            answer(Verdict::Deny, ApprovalScope::Once),
            answer(Verdict::Deny, ApprovalScope::Once),
        ]
    );
    // Alt-m opens the message of a denial, as `m` does.
    let mut app = asking();
    assert_eq!(app.on_key(alt('m')), Vec::new());
    assert!(live(&mut app, 60, 12, 100).contains("deny, and tell the model instead:"));
}

#[test]
fn ctrl_and_an_answer_key_never_answer() {
    let mut app = asking();
    let keys = [
        ctrl('y'),
        ctrl('a'),
        ctrl('n'),
        ctrl('m'),
        key(KeyCode::Char('y')),
    ];
    let got: Vec<Vec<Action>> = keys.into_iter().map(|k| app.on_key(k)).collect();
    let none = Vec::new();
    let yes = answer(Verdict::Allow, ApprovalScope::Once);
    assert_eq!(got, [none.clone(), none.clone(), none.clone(), none, yes]);
}

#[test]
fn alt_y_from_the_draft_goes_back_to_the_waiting_question_and_answers() {
    let mut app = asking_over("draft");
    assert_eq!(app.on_key(key(KeyCode::Tab)), Vec::new());
    // Alt-b is the input's (a word back), and a plain `y` is typed there.
    assert_eq!(app.alt_answer(alt('b')), None);
    assert_eq!(app.alt_answer(key(KeyCode::Char('y'))), None);
    assert_eq!(
        app.alt_answer(alt('y')),
        Some(answer(Verdict::Allow, ApprovalScope::Once))
    );
    assert_eq!(app.editor.text(), "draft");
    assert_eq!(app.alt_answer(alt('y')), None, "no question is open");
}

#[test]
fn allowing_a_tool_for_the_session_says_so_in_history() {
    let mut app = asking();
    app.on_key(key(KeyCode::Char('a')));
    expect![[r#"
        · edit: allowed without asking for the rest of this session (a)
    "#]]
    .assert_eq(&history_at_80(&mut app));
}

#[test]
fn a_call_denied_without_asking_says_why_in_words() {
    let mut app = working();
    app.on_run_event(
        RunEvent::Approval {
            call_id: CallId("c1".into()),
            name: "write".into(),
            verdict: Verdict::Deny,
            by: xcsh_machine::ApprovedBy::PolicyReadonly,
        },
        10,
    );
    expect![[r#"
        ! write: denied (the session is read-only: --permissions readonly)
    "#]]
    .assert_eq(&history_at_80(&mut app));
}

#[test]
fn a_continued_session_shows_its_own_context_until_a_step_reports_one() {
    let mut app = app();
    app.set_context(Some(88));
    assert!(live(&mut app, 100, 10, 0).contains("ctx 88/100k"));
    app.set_context(None);
    assert!(!live(&mut app, 100, 10, 0).contains("ctx"));
}

#[test]
fn esc_on_the_empty_input_stops_a_turn_as_ctrl_c_does() {
    let mut app = working();
    assert_eq!(typed(&mut app, "draft"), Vec::new());
    // The first Esc clears the draft, the second stops the turn.
    assert_eq!(app.on_key(key(KeyCode::Esc)), Vec::new());
    assert_eq!(app.on_key(key(KeyCode::Esc)), [Action::Interrupt]);
    let mut idle = self::app();
    assert_eq!(idle.on_key(key(KeyCode::Esc)), Vec::new());
}

#[test]
fn a_notice_that_comes_while_a_message_streams_is_written_after_it() {
    let mut app = working();
    delta(&mut app, "# Heading\n\nParagraph one", 100);
    app.on_key(ctrl('o'));
    delta(&mut app, " goes on.\n\nParagraph two.", 200);
    step_finished(&mut app, 300);
    expect![[r#"
        • # Heading

          Paragraph one goes on.

          Paragraph two.

        · reasoning: shown in full from now on (Ctrl-O collapses it)
    "#]]
    .assert_eq(&lines_text(&app.take_history(60, 400), 60));
}

#[test]
fn ctrl_c_stops_a_turn_and_twice_on_an_idle_prompt_exits() {
    let mut app = working();
    assert_eq!(app.on_key(ctrl('c')), [Action::Interrupt]);
    app.on_run_event(
        RunEvent::RunFinished {
            reason: StopReason::Interrupted,
            steps: 1,
            usage: Usage::default(),
        },
        50,
    );
    assert_eq!(app.on_key(ctrl('c')), Vec::new());
    assert!(live(&mut app, 60, 20, 60).contains("again to exit"));
    assert_eq!(app.on_key(ctrl('c')), [Action::Exit]);
}

#[test]
fn ctrl_d_on_an_empty_prompt_exits_and_while_working_stops_first() {
    let mut idle = self::app();
    assert_eq!(idle.on_key(ctrl('d')), [Action::Exit]);
    let mut busy = working();
    assert_eq!(busy.on_key(ctrl('d')), [Action::Interrupt, Action::Exit]);
}

#[test]
fn the_live_area_never_exceeds_its_height_and_keeps_input_and_status() {
    let mut app = working();
    delta(&mut app, &"a long unfinished paragraph ".repeat(200), 10);
    let buf = app.render_live(40, 8, 20);
    assert_eq!(buf.area.height, 8);
    let screen = text(&buf);
    assert!(screen.contains("› Ask xcsh"), "{screen}");
    assert!(screen.contains("gpt-test"), "{screen}");
    for width in 1..=40 {
        let buf = app.render_live(width, 6, 30);
        assert!(buf.area.height <= 6);
    }
}

#[test]
fn the_status_line_shows_the_sandbox_of_the_session() {
    let mut app = app();
    app.info_mut().sandbox = Some("workspace-write".into());
    started(&mut app);
    expect![[r#"

        › Ask xcsh to do something · / for commands · @ to mention a file
        openai · gpt-test · ask · sandbox workspace-write · step 1/32 · spent 0/400k · 0.0s · 0a1b2c3d
        ⏎ steer · Tab queue · Esc/^C stop · ^T transcript
    "#]]
    .assert_eq(&live(&mut app, 100, 20, 0));
}

/// `/new`: once a turn has ended, the status line shows its session's context,
/// spend and id; after `forget_session` none of them.
#[test]
fn the_status_line_forgets_the_session_left_by_new() {
    let mut app = working();
    let usage = Usage {
        input_tokens: 12_000,
        output_tokens: 500,
        estimated: true,
        ..Usage::default()
    };
    app.on_run_event(
        RunEvent::StepFinished {
            step: StepNo(1),
            usage,
            finish: None,
            outcome: "completed",
            error: None,
        },
        0,
    );
    app.on_run_end();
    let before = live(&mut app, 100, 20, 0);
    app.forget_session();
    let after = live(&mut app, 100, 20, 0);
    expect![[r#"

        › Ask xcsh to do something · / for commands · @ to mention a file
        openai · gpt-test · ask · ctx 12k/100k · spent ~12k/400k · 0a1b2c3d
        ⏎ send · Alt⏎/^J newline · / commands · @ files · ^T transcript · ^D exit

        › Ask xcsh to do something · / for commands · @ to mention a file
        openai · gpt-test · ask · spent 0/400k
        ⏎ send · Alt⏎/^J newline · / commands · @ files · ^T transcript · ^D exit
    "#]]
    .assert_eq(&format!("{before}{after}"));
}

/// A `plan` call as the run reports it: its call, its result, then the plan.
fn plan_update(app: &mut App, id: &str, plan: &xcsh_log::plan::Plan) {
    let arguments = serde_json::to_string(plan).unwrap();
    app.on_run_event(
        RunEvent::ToolCall {
            step: StepNo(1),
            call_id: CallId(id.into()),
            name: "plan".into(),
            arguments,
        },
        0,
    );
    app.on_run_event(
        RunEvent::ToolResult {
            call_id: CallId(id.into()),
            name: "plan".into(),
            status: ToolStatus::Ok,
            content: plan.tool_result(),
            arguments: None,
            synthetic: None,
            duration_ms: 0,
            changes: Vec::new(),
        },
        0,
    );
    app.on_run_event(
        RunEvent::Plan {
            call_id: CallId(id.into()),
            plan: plan.clone(),
        },
        0,
    );
}

#[test]
fn the_plan_is_a_checklist_in_the_live_area_and_each_change_a_history_cell() {
    use xcsh_log::plan::{Plan, PlanItem, PlanStatus};
    let plan = |statuses: [PlanStatus; 2]| Plan {
        explanation: None,
        items: ["Read the code", "Fix the bug"]
            .into_iter()
            .zip(statuses)
            .map(|(text, status)| PlanItem {
                text: text.into(),
                status,
            })
            .collect(),
    };
    let mut app = working();
    plan_update(
        &mut app,
        "call_1",
        &plan([PlanStatus::InProgress, PlanStatus::Pending]),
    );
    plan_update(
        &mut app,
        "call_2",
        &plan([PlanStatus::Completed, PlanStatus::InProgress]),
    );
    expect![[r#"
        Plan updated · 0 of 2 completed
          [>] Read the code
          [ ] Fix the bug

        Plan updated · 1 of 2 completed
          [x] Read the code
          [>] Fix the bug
    "#]]
    .assert_eq(&lines_text(&app.take_history(60, 0), 60));
    expect![[r#"
        Plan · 1 of 2 completed
          [x] Read the code
          [>] Fix the bug

        › Ask xcsh to do something · / for commands
        openai · gpt-test · ask · step 1/32 · spent 0/400k · 0.0s
        ⏎ steer · Tab queue · Esc/^C stop · ^T transcript
    "#]]
    .assert_eq(&live(&mut app, 60, 12, 0));
    app.on_run_event(
        RunEvent::RunFinished {
            reason: StopReason::Completed,
            steps: 1,
            usage: Usage::default(),
        },
        0,
    );
    assert!(
        !live(&mut app, 60, 12, 0).contains("Fix the bug"),
        "the checklist leaves the live area with the turn"
    );
}

fn dispatched(app: &mut App, id: &str, name: &str, arguments: &str) {
    app.on_run_event(
        RunEvent::ToolCall {
            step: StepNo(1),
            call_id: CallId(id.into()),
            name: name.into(),
            arguments: arguments.into(),
        },
        0,
    );
}

fn ended(app: &mut App, id: &str, name: &str, content: &str) {
    app.on_run_event(
        RunEvent::ToolResult {
            call_id: CallId(id.into()),
            name: name.into(),
            status: ToolStatus::Ok,
            content: content.into(),
            arguments: None,
            synthetic: None,
            duration_ms: 10,
            changes: Vec::new(),
        },
        100,
    );
}

/// Parallel calls that end in another order go into history in the order they were
/// dispatched, the log's, as a resumed session lists them; one that ended first
/// shows its result in the live area until the calls before it end.
#[test]
fn parallel_calls_go_into_history_in_dispatch_order_whatever_order_they_end_in() {
    let mut app = working();
    dispatched(&mut app, "c1", "bash", r#"{"command":"make test"}"#);
    dispatched(&mut app, "c2", "bash", r#"{"command":"git status"}"#);
    ended(&mut app, "c2", "bash", "exit code: 0\nstdout:\nclean\n");
    assert_eq!(history_at_80(&mut app).trim(), "");
    expect![[r#"
        ⠙ bash make test · 0.1s
        ✓ bash git status · exit 0 · 0.0s
          └ clean

        › Ask xcsh to do something · / for commands
        openai · gpt-test · ask · step 1/32 · spent 0/400k · 0.1s
        ⏎ steer · Tab queue · Esc/^C stop · ^T transcript
    "#]]
    .assert_eq(&live(&mut app, 60, 12, 100));
    ended(&mut app, "c1", "bash", "exit code: 0\nstdout:\nok\n");
    expect![[r#"
        ✓ bash make test · exit 0 · 0.0s
          └ ok

        ✓ bash git status · exit 0 · 0.0s
          └ clean
    "#]]
    .assert_eq(&history_at_80(&mut app));
}

/// A call asked about has no place until it is dispatched: a call dispatched
/// meanwhile goes into history when it ends, as the log records it first.
#[test]
fn a_call_waiting_for_its_answer_holds_back_no_call_dispatched_after_it() {
    let mut app = working();
    let write_b = r#"{"path":"b.txt","content":"b"}"#;
    let question = RunEvent::ApprovalRequested {
        call_id: CallId("c1".into()),
        name: "write".into(),
        arguments: write_b.into(),
    };
    app.on_run_event(question, 0);
    dispatched(&mut app, "c2", "bash", r#"{"command":"git status"}"#);
    ended(&mut app, "c2", "bash", "exit code: 0\nstdout:\nclean\n");
    expect![[r#"
        ✓ bash git status · exit 0 · 0.0s
          └ clean
    "#]]
    .assert_eq(&history_at_80(&mut app));
    dispatched(&mut app, "c1", "write", write_b);
    ended(&mut app, "c1", "write", "wrote 1 byte to b.txt");
    expect![[r#"

        ✓ write b.txt · +1 · 0.0s
          └ @@ -0,0 +1 @@
              1 +b
    "#]]
    .assert_eq(&history_at_80(&mut app));
}

// ------------------------------------------------ the transcript during a turn

/// A stand-in for the session log the controller's render callback reads: its
/// cells, and how many times the transcript read it.
#[derive(Default)]
struct FakeLog {
    cells: std::rc::Rc<std::cell::RefCell<Vec<Cell>>>,
    reads: std::rc::Rc<std::cell::Cell<usize>>,
}

impl FakeLog {
    fn record(&self, cell: Cell) {
        self.cells.borrow_mut().push(cell);
    }

    /// Opens the transcript over this log, as the controller's Ctrl-T does.
    fn open_transcript(&self, app: &mut App) {
        let (cells, reads) = (self.cells.clone(), self.reads.clone());
        let render = move |width: u16| {
            reads.set(reads.get() + 1);
            crate::cells::transcript_lines(&cells.borrow(), width, &Theme::MONO)
        };
        app.open_overlay(Box::new(crate::overlay::Transcript::new(Box::new(render))));
    }
}

/// A turn working, the transcript open over a log that holds its prompt.
fn transcript_over(prompt: &str) -> (App, FakeLog) {
    let mut app = working();
    let log = FakeLog::default();
    log.record(Cell::user_message(UserOrigin::Prompt, prompt));
    log.open_transcript(&mut app);
    (app, log)
}

/// The open overlay drawn at `w` × `h`, as text.
fn overlay_screen(app: &mut App, w: u16, h: u16) -> String {
    text(&crate::testkit::draw(w, h, |f| {
        app.render_overlay(f.area(), f.buffer_mut())
    }))
}

#[test]
fn the_transcript_follows_the_turn_the_streamed_message_then_its_recorded_step() {
    let (mut app, log) = transcript_over("check the tests");
    let mut shown = overlay_screen(&mut app, 50, 7);
    delta(&mut app, "Looking at ", 100);
    delta(&mut app, "the **tests**.", 110);
    shown.push_str(&overlay_screen(&mut app, 50, 7));
    // The step ends: its entry is in the log, and the streamed message is gone.
    log.record(Cell::Assistant {
        markdown: "Looking at the **tests**.".into(),
    });
    step_finished(&mut app, 120);
    shown.push_str(&overlay_screen(&mut app, 50, 7));
    // A dispatched call is recorded (its card, running).
    log.record(Cell::Tool(crate::tool_card::ToolCard::new(
        CallId("c1".into()),
        "bash",
        r#"{"command":"cargo test"}"#,
    )));
    dispatched(&mut app, "c1", "bash", r#"{"command":"cargo test"}"#);
    shown.push_str(&overlay_screen(&mut app, 50, 7));
    expect![[r#"
        transcript                                     1/1
        › check the tests




        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search
        transcript                                     3/3
        › check the tests

        • Looking at the tests.


        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search
        transcript                                     3/3
        › check the tests

        • Looking at the tests.


        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search
        transcript                                     5/5
        › check the tests

        • Looking at the tests.

        ○ bash cargo test · waiting
        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search
    "#]]
    .assert_eq(&shown);
    // Read once at opening, then once per recorded entry; never for a delta.
    assert_eq!(log.reads.get(), 3);
}

#[test]
fn a_question_that_opens_under_the_transcript_is_announced_and_esc_reaches_it() {
    let (mut app, _log) = transcript_over("fix a.txt");
    app.ask(&edit_request(), Some("old line\n"), 0);
    expect![[r#"
        transcript                                     1/1
        › fix a.txt


        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search
        ! approval waiting: edit · Esc to answer
    "#]]
    .assert_eq(&overlay_screen(&mut app, 50, 6));
    // A key meant for the transcript answers nothing (`n` would deny).
    assert_eq!(app.on_key(key(KeyCode::Char('n'))), Vec::new());
    assert!(app.overlay_open());
    // Esc closes it, and the question has the keys.
    assert_eq!(app.on_key(key(KeyCode::Esc)), Vec::new());
    assert!(!app.overlay_open());
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        answer(Verdict::Allow, ApprovalScope::Once)
    );
}

#[test]
fn esc_from_the_transcript_reaches_a_question_that_waits_behind_a_draft() {
    let mut app = asking_over("half typed");
    FakeLog::default().open_transcript(&mut app);
    assert!(overlay_screen(&mut app, 50, 6).contains("approval waiting: edit"));
    for w in 1..=40 {
        for h in [1, 2, 3] {
            overlay_screen(&mut app, w, h);
        }
    }
    esc_then_n_denies_keeping_the_draft(&mut app, "half typed");
}

/// A step that failed ends its run: the turn's end line says why, once, as a resumed
/// session shows it (the live view also said it in a notice before).
#[test]
fn a_failed_step_is_told_once_by_the_turns_end_line() {
    let mut app = working();
    let error = xcsh_machine::ProviderError {
        kind: xcsh_machine::ProviderErrorKind::ScriptExhausted,
        message: "the faux script s.jsonl has 2 step(s) and step 3 was requested".into(),
    };
    app.on_run_event(
        RunEvent::StepFinished {
            step: StepNo(1),
            usage: Usage::default(),
            finish: None,
            outcome: "failed",
            error: Some(error.clone()),
        },
        10,
    );
    app.on_run_event(
        RunEvent::RunFinished {
            reason: StopReason::ProviderError { error },
            steps: 1,
            usage: Usage::default(),
        },
        20,
    );
    app.on_run_end();
    expect![[r#"
        ─ failed: script exhausted: the faux script s.jsonl has 2 step(s) and step 3 was
        requested · 1 step · 0 in / 0 out · 0.0s
    "#]]
    .assert_eq(&history_at_80(&mut app));
}

#[test]
fn tab_on_an_idle_prompt_sends_nothing_and_keeps_the_text() {
    let mut app = app();
    typed(&mut app, "not yet");
    assert_eq!(app.on_key(key(KeyCode::Tab)), Vec::new());
    assert_eq!(app.editor_mut().text(), "not yet");
}

#[test]
fn alt_enter_inserts_a_newline_and_enter_sends_both_lines() {
    let mut app = app();
    typed(&mut app, "first");
    let alt_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT);
    assert_eq!(app.on_key(alt_enter), Vec::new());
    typed(&mut app, "second");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Action::Prompt("first\nsecond".into())]
    );
}

#[test]
fn the_footer_shows_the_search_keys_during_a_history_search() {
    let mut app = app();
    app.on_key(ctrl('r'));
    let screen = live(&mut app, 60, 10, 0);
    expect![[r#"
        ⏎ accept · Esc cancel · ^R older
    "#]]
    .assert_eq(&format!("{}\n", screen.lines().last().unwrap_or_default()));
}

#[test]
fn ctrl_c_in_a_history_search_cancels_it_without_arming_exit() {
    let mut app = app();
    app.on_key(ctrl('r'));
    assert_eq!(app.on_key(ctrl('c')), Vec::new());
    assert!(!app.editor_mut().is_searching());
    // The next Ctrl-C is the first on the idle prompt: it only arms the exit.
    assert_eq!(app.on_key(ctrl('c')), Vec::new());
    assert_eq!(app.on_key(ctrl('c')), [Action::Exit]);
}

/// Not an empty follow-up: the command asks for its text.
#[test]
fn queue_without_its_text_while_working_is_the_commands_to_refuse() {
    let mut app = working();
    typed(&mut app, "/queue ");
    let queue = Action::Command {
        name: "queue".into(),
        arg: String::new(),
    };
    assert_eq!(app.on_key(key(KeyCode::Enter)), [queue]);
}
