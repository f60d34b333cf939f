//! Tests of the history model (cells rebuilt from entries and from run events).

use expect_test::expect;
use xcsh_machine::{ProviderError, RunEnd, SyntheticReason};

use super::*;
use crate::testkit::{lines_text, styled};

fn fixture(name: &str) -> SessionLog {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/sessions")
        .join(name);
    xcsh_log::read_session(&path).expect("a fixture session")
}

fn sample() -> Vec<Cell> {
    let mut card = ToolCard::new(CallId("c1".into()), "read", r#"{"path":"src/lib.rs"}"#);
    card.finish(ToolFinish {
        status: ToolStatus::Ok,
        content: "     1\tpub mod a;\n     2\tpub mod b;".into(),
        duration_ms: 4,
        synthetic: None,
        before: Before::NotRecorded,
    });
    vec![
        Cell::User {
            origin: UserOrigin::Prompt,
            text: "Why does the build fail on a clean checkout? Look at the workspace first.".into(),
        },
        Cell::Reasoning {
            text: "The user asks about the build.\nI should list the workspace.\nThen read Cargo.toml.".into(),
            expanded: false,
        },
        Cell::Assistant {
            markdown: "Let me look at the workspace layout and the crate roots before guessing.".into(),
        },
        Cell::Tool(card),
        Cell::User {
            origin: UserOrigin::Steer,
            text: "also check the README".into(),
        },
        Cell::Notice {
            level: Level::Warning,
            text: "the provider started the message over".into(),
        },
        Cell::Compaction {
            tokens_before: 151_000,
            tokens_after: 8_200,
        },
        Cell::TurnEnd {
            reason: StopReason::Completed,
            steps: 3,
            usage: Usage {
                input_tokens: 1_200,
                output_tokens: 340,
                ..Usage::default()
            },
            elapsed_ms: Some(14_000),
        },
    ]
}

/// `cells` as history shows them at 120 columns.
fn history_at_120(cells: &[Cell]) -> String {
    lines_text(&lines_of(cells, 120, 0, &Theme::COLOR), 120)
}

#[test]
fn the_history_at_40_and_120_columns() {
    let cells = sample();
    expect![[r#"
        › Why does the build fail on a clean
          checkout? Look at the workspace first.

        ∴ thinking · 3 lines (Ctrl-T shows it; …

        • Let me look at the workspace layout
          and the crate roots before guessing.

        ✓ read src/lib.rs · 0.0s
          └ read 2 lines

        › steer · also check the README

        ! the provider started the message over

        ≡ compacted · 151k → 8.2k tokens

        ─ done · 3 steps · 1.2k in / 340 out ·
        14.0s
        ---
        › Why does the build fail on a clean checkout? Look at the workspace first.

        ∴ thinking · 3 lines (Ctrl-T shows it; Ctrl-O, the next in full)

        • Let me look at the workspace layout and the crate roots before guessing.

        ✓ read src/lib.rs · 0.0s
          └ read 2 lines

        › steer · also check the README

        ! the provider started the message over

        ≡ compacted · 151k → 8.2k tokens

        ─ done · 3 steps · 1.2k in / 340 out · 14.0s
    "#]]
    .assert_eq(&crate::testkit::narrow_and_wide(
        lines_text(&lines_of(&cells, 40, 0, &Theme::COLOR), 40),
        lines_text(&lines_of(&cells, 120, 0, &Theme::COLOR), 120),
    ));
}

#[test]
fn markers_carry_their_roles_and_reasoning_is_dim_italic() {
    let cells = sample();
    let mut lines = Vec::new();
    for cell in &cells[..3] {
        lines.extend(cell.lines(120, 0, &Theme::COLOR));
    }
    expect![[r#"
        ⟦cyan,bold:› ⟧Why does the build fail on a clean checkout? Look at the workspace first.
        ⟦dim,italic:∴ thinking · 3 lines (Ctrl-T shows it; Ctrl-O, the next in full)⟧
        ⟦magenta,bold:• ⟧Let me look at the workspace layout and the crate roots before guessing.
    "#]]
    .assert_eq(&styled(&lines));
}

#[test]
fn expanded_reasoning_shows_every_line_indented() {
    let cell = Cell::Reasoning {
        text: "first thought\nsecond thought".into(),
        expanded: true,
    };
    expect![[r#"
        ∴ thinking
          first thought
          second thought
    "#]]
    .assert_eq(&lines_text(&cell.lines(40, 0, &Theme::COLOR), 40));
}

#[test]
fn stopped_and_failed_turns_say_why_and_estimates_are_marked() {
    let usage = Usage {
        input_tokens: 900,
        output_tokens: 50,
        estimated: true,
        ..Usage::default()
    };
    let ends = [
        StopReason::Interrupted,
        StopReason::MaxSteps { limit: 32 },
        StopReason::ProviderError {
            error: ProviderError {
                kind: xcsh_machine::ProviderErrorKind::Http,
                message: "503 service unavailable".into(),
            },
        },
    ];
    let mut lines = Vec::new();
    for reason in ends {
        lines.extend(
            Cell::TurnEnd {
                reason,
                steps: 1,
                usage,
                elapsed_ms: None,
            }
            .lines(120, 0, &Theme::COLOR),
        );
    }
    expect![[r#"
        ⟦yellow:─ stopped by you⟧⟦dim: · 1 step · ~900 in / ~50 out⟧
        ⟦yellow:─ stopped: 32 steps, the step limit⟧⟦dim: · 1 step · ~900 in / ~50 out⟧
        ⟦red,bold:─ failed: HTTP error: 503 service unavailable⟧⟦dim: · 1 step · ~900 in / ~50 out⟧
    "#]]
    .assert_eq(&styled(&lines));
}

#[test]
fn a_session_with_tool_rounds_rebuilds_as_cells() {
    let log = fixture("tool-rounds.jsonl");
    let cells = from_entries(&log, log.leaf()).expect("the branch");
    expect![[r#"
        › How does this project build? Write the answer to answer.txt.

        • Let me look at the workspace first.

        ✓ list . · 0.0s
          └ 2 entries

        ✓ read notes.txt · 0.0s
          └ read 2 lines

        • I will record the answer in a file.

        ✓ write answer.txt · +1 · 0.0s
          └ @@ -0,0 +1 @@
              1 +the build uses cargo

        ✓ grep cargo in . · 0.0s
          └ 3 matches in 2 files

        ✓ glob **/*.rs · 0.0s
          └ 1 file

        ✓ edit answer.txt · +1 -1 · 0.0s
          └ @@ -1 +1 @@
            1   -the build uses cargo
              1 +the build uses cargo (see notes.txt)

        • notes.txt says the project builds with cargo; I wrote that to answer.txt.

        ─ done · 6 steps · 4.2k in / 134 out · 0.0s
    "#]]
    .assert_eq(&lines_text(&lines_of(&cells, 120, 0, &Theme::COLOR), 120));
}

#[test]
fn a_delivered_steer_is_a_user_cell_where_it_was_delivered() {
    let log = fixture("steer.jsonl");
    let cells = from_entries(&log, log.leaf()).expect("the branch");
    expect![[r#"
        › Run the slow check.

        • Running the slow check.

        ✓ sleep {"ms":300} · 0.3s
          └ slept 300 ms

        › steer · Also look at the README.

        • Check done, and I looked at the README
          as you asked.

        ─ done · 2 steps · 520 in / 34 out ·
        0.3s
    "#]]
    .assert_eq(&lines_text(&lines_of(&cells, 40, 0, &Theme::COLOR), 40));
}

#[test]
fn every_fixture_session_rebuilds_without_panicking_at_any_narrow_width() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("the fixtures")
        .filter_map(|e| e.ok())
        // (A family's folder, `delegation/`, holds sessions of its own.)
        .filter(|e| !e.path().is_dir())
        .map(|e| e.file_name())
        .collect();
    names.sort();
    assert!(names.len() >= 10);
    for name in names {
        let log = fixture(&name.to_string_lossy());
        for leaf in xcsh_log::Dag::from_log(&log).leaves() {
            let cells = from_entries(&log, leaf).expect("a branch");
            assert!(!cells.is_empty(), "{name:?}");
            for w in [1, 7, 40] {
                for line in lines_of(&cells, w, 0, &Theme::MONO) {
                    assert!(
                        line.width() <= usize::from(w),
                        "{name:?} width {w}: {line:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn an_unknown_leaf_is_an_error_naming_the_entry() {
    let log = fixture("plain.jsonl");
    assert!(from_entries(&log, EntryId(9_999)).is_err());
}

#[test]
fn a_denied_call_from_the_log_is_a_denied_card() {
    let mut cells = Vec::new();
    let mut cards = BTreeMap::new();
    let i = card_index(
        &mut cells,
        &mut cards,
        &CallId("c".into()),
        "write",
        r#"{"path":"a"}"#,
    );
    if let Some(Cell::Tool(card)) = cells.get_mut(i) {
        card.finish(ToolFinish {
            status: ToolStatus::Error,
            content: "denied: the user did not allow `write`; the call was not run".into(),
            duration_ms: 0,
            synthetic: Some(SyntheticReason::Denied),
            before: Before::NotRecorded,
        });
    }
    assert_eq!(
        card_index(&mut cells, &mut cards, &CallId("c".into()), "write", "{}"),
        i
    );
    expect![[r#"
        ⊘ write {"path":"a"} · denied
          └ denied: the user did not allow `write`; the call was not run
    "#]]
    .assert_eq(&lines_text(&lines_of(&cells, 120, 0, &Theme::COLOR), 120));
}

/// The `plain` fixture (one turn, ending at its entry #4) copied into a temp dir,
/// with `more` appended after its leaf, each `ms` after the leaf's time.
fn plain_then(more: Vec<(u64, Body)>) -> (tempfile::TempDir, SessionLog) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.jsonl");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions/plain.jsonl"),
        &path,
    )
    .unwrap();
    let (mut writer, log) = xcsh_log::SessionWriter::open(&path).unwrap();
    let (mut parent, t) = (log.leaf(), log.entries[log.entries.len() - 1].ts);
    for (ms, body) in more {
        let at = t + std::time::Duration::from_millis(ms);
        parent = writer.append(parent, at, &body).unwrap().0;
    }
    writer.sync().unwrap();
    drop(writer);
    (dir, xcsh_log::read_session(&path).unwrap())
}

/// The run configuration the `plain` fixture's prompt recorded.
fn plain_config() -> xcsh_machine::RunConfig {
    match &fixture("plain.jsonl").entries[1].body {
        Body::Record(Record::UserMessage { config, .. }) => config.clone(),
        other => panic!("not a prompt: {other:?}"),
    }
}

fn finished(steps: u32) -> Body {
    Body::Decision(Decision::RunFinished(RunEnd {
        reason: StopReason::Completed,
        steps,
        usage: Usage::default(),
        undelivered: Vec::new(),
    }))
}

/// A prompt whose `@greet.rs` attached the file: the log records the file's
/// content, and the resumed history shows the prompt as typed with
/// `(attached: greet.rs)`, as the live view did (SPEC.md §17.5).
#[test]
fn a_resumed_prompt_shows_its_attachments_not_the_files() {
    let mut text = String::from("explain @greet.rs");
    crate::mention::attach(
        &mut text,
        "greet.rs",
        "     1\t/// Says hello.\n     2\tfn greet() {}",
    );
    let config = plain_config();
    let (_dir, log) = plain_then(vec![
        (1_000, Body::Record(Record::UserMessage { text, config })),
        (1_000, finished(0)),
    ]);
    let cells = from_entries(&log, log.leaf()).expect("the branch");
    expect![[r#"
        › explain @greet.rs
          (attached: greet.rs)

        ─ done · 0 steps · 0 in / 0 out · 0.0s
    "#]]
    .assert_eq(&history_at_120(&cells[3..]));
}

/// A `/compact` is a run of its own: its end is timed from its `compact` entry
/// (1.2 s here), not from the prompt of the turn before it (7.3 s earlier).
#[test]
fn a_resumed_compact_is_timed_from_its_own_start() {
    let config = plain_config();
    let (_dir, log) = plain_then(vec![
        (7_300, Body::Record(Record::Compact { config })),
        (
            7_300,
            Body::Decision(Decision::CompactionStarted {
                first_kept: EntryId(4),
                tokens_before: 129,
            }),
        ),
        (
            8_400,
            Body::Record(Record::CompactionSummary {
                summary: Some("The user asked for the capital of France.".into()),
                error: None,
            }),
        ),
        (
            8_500,
            Body::Decision(Decision::Compacted {
                summary: "The user asked for the capital of France.".into(),
                first_kept: EntryId(4),
                tokens_before: 129,
                tokens_after: 12,
            }),
        ),
        (8_500, finished(0)),
    ]);
    let cells = from_entries(&log, log.leaf()).expect("the branch");
    expect![[r#"
        ≡ compacted · 129 → 12 tokens

        ─ done · 0 steps · 0 in / 0 out · 1.2s
    "#]]
    .assert_eq(&history_at_120(&cells[3..]));
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: CallId(id.into()),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// A step whose message says `text` and makes `calls`.
fn step(n: u32, text: &str, calls: Vec<ToolCall>) -> Body {
    Body::Record(Record::Step(Box::new(xcsh_log::StepRecord {
        step: xcsh_machine::StepNo(n),
        events: Vec::new(),
        outcome: StepOutcome::Completed,
        message: xcsh_machine::Assembled {
            text: text.into(),
            tool_calls: calls,
            ..Default::default()
        },
    })))
}

fn answered(id: &str, verdict: Verdict, scope: ApprovalScope) -> Body {
    Body::Record(Record::ApprovalAnswer {
        call_id: CallId(id.into()),
        verdict,
        scope,
        message: None,
    })
}

fn dispatched(call: &ToolCall) -> Body {
    Body::Decision(Decision::ToolDispatched {
        step: xcsh_machine::StepNo(1),
        call: call.clone(),
    })
}

fn result(call: &ToolCall, content: &str) -> Body {
    Body::Record(Record::ToolResult(Box::new(xcsh_log::ToolResultRecord {
        call_id: call.id.clone(),
        name: call.name.clone(),
        outcome: xcsh_machine::ToolOutcome {
            status: ToolStatus::Ok,
            content: content.into(),
        },
        duration_ms: 0,
        changes: Vec::new(),
        child: None,
    })))
}

/// After the `plain` fixture, a turn whose step asks for `bash` (answered `a`), a
/// second `bash` (`A`) and a third (`y`), each dispatched after its answer; then an
/// `a` for a call no longer waiting, which the machine ignored.
fn granting_turn() -> (tempfile::TempDir, SessionLog) {
    let ls = call("c1", "bash", r#"{"command":"ls"}"#);
    let pwd = call("c2", "bash", r#"{"command":"pwd"}"#);
    let date = call("c3", "bash", r#"{"command":"date"}"#);
    let calls = vec![ls.clone(), pwd.clone(), date.clone()];
    let mut turn = vec![
        Body::Record(Record::UserMessage {
            text: "list the files".into(),
            config: plain_config(),
        }),
        step(1, "Listing them.", calls),
    ];
    for (c, scope, out) in [
        (&ls, ApprovalScope::Tool, "a.txt"),
        (&pwd, ApprovalScope::Call, "/ws"),
        (&date, ApprovalScope::Once, "today"),
    ] {
        turn.push(answered(&c.id.0, Verdict::Allow, scope));
        turn.push(dispatched(c));
        turn.push(result(c, out));
    }
    turn.push(answered("c9", Verdict::Allow, ApprovalScope::Tool));
    turn.push(Body::Decision(Decision::Ignored {
        reason: xcsh_machine::IgnoreReason::LateApproval,
    }));
    turn.push(finished(1));
    plain_then(turn.into_iter().map(|body| (1_000, body)).collect())
}

/// A resumed session says what `a` and `A` allowed where the live view did: after
/// the question was answered, before the call's card (SPEC.md §17.5); `y` and an
/// ignored answer allow nothing beyond their call and say nothing.
#[test]
fn a_resumed_grant_is_said_before_the_card_of_the_call_it_allowed() {
    let (_dir, log) = granting_turn();
    let cells = from_entries(&log, log.leaf()).expect("the branch");
    expect![[r#"
        › list the files

        • Listing them.

        · bash: allowed without asking for the rest of this session (a)

        ✓ bash ls · 0.0s
          └ a.txt

        · bash: this exact call allowed without asking for the rest of this session (A)

        ✓ bash pwd · 0.0s
          └ /ws

        ✓ bash date · 0.0s
          └ today

        ─ done · 1 step · 0 in / 0 out · 0.0s
    "#]]
    .assert_eq(&history_at_120(&cells[3..]));
}

#[test]
fn the_grant_notices_are_the_words_of_a_and_a() {
    assert_eq!(
        [
            ApprovalScope::Tool,
            ApprovalScope::Call,
            ApprovalScope::Once
        ]
        .map(|scope| grant_notice("edit", scope)),
        [
            Some("edit: allowed without asking for the rest of this session (a)".to_string()),
            Some(
                "edit: this exact call allowed without asking for the rest of this session (A)"
                    .to_string()
            ),
            None,
        ]
    );
}

/// A notice's listing rows (`  LABEL  DESCRIPTION`) wrap under their description;
/// where that would leave the description less than half the width, and for any
/// other line, the wrapped part goes under the text's start, as before.
#[test]
fn a_notice_listing_row_wraps_under_its_description() {
    let notice = Cell::Notice {
        level: Level::Info,
        text: "keys:\n  Ctrl-C      stop the turn (twice when idle: exit)\nplain prose that is long enough to wrap  twice over"
            .into(),
    };
    let at = |width: u16| lines_text(&notice.lines(width, 0, &Theme::MONO), width);
    expect![[r#"
        · keys:
            Ctrl-C      stop the turn (twice
                        when idle: exit)
          plain prose that is long enough to
          wrap  twice over
        ---
        · keys:
            Ctrl-C      stop the
          turn (twice when idle:
          exit)
          plain prose that is
          long enough to wrap
          twice over
    "#]]
    .assert_eq(&format!("{}---\n{}", at(36), at(24)));
}
