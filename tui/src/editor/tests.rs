//! Tests of the input editor.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use expect_test::{Expect, expect};
use ratatui::layout::Rect;

use super::*;
use crate::testkit::{draw, text};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn typed(editor: &mut Editor, s: &str) {
    for c in s.chars() {
        editor.on_key(key(KeyCode::Char(c)));
    }
}

/// The text with `|` at the cursor.
fn shown(editor: &Editor) -> String {
    let mut s = editor.text().to_string();
    s.insert(editor.cursor(), '|');
    s
}

/// The key `name` names (`Up`, `Enter`, `x` for a character), after `C-` (Ctrl),
/// `M-` (Alt) and `S-` (Shift) prefixes.
fn named(name: &str) -> KeyEvent {
    let mut mods = KeyModifiers::NONE;
    let mut rest = name;
    while let Some((m, r)) = [
        ("C-", KeyModifiers::CONTROL),
        ("M-", KeyModifiers::ALT),
        ("S-", KeyModifiers::SHIFT),
    ]
    .into_iter()
    .find_map(|(p, m)| Some((m, rest.strip_prefix(p)?)))
    {
        mods |= m;
        rest = r;
    }
    let code = match rest {
        "Up" => KeyCode::Up,
        "Down" => KeyCode::Down,
        "Left" => KeyCode::Left,
        "Right" => KeyCode::Right,
        "Home" => KeyCode::Home,
        "End" => KeyCode::End,
        "Enter" => KeyCode::Enter,
        "Tab" => KeyCode::Tab,
        "Esc" => KeyCode::Esc,
        "Backspace" => KeyCode::Backspace,
        "Delete" => KeyCode::Delete,
        c if c.chars().count() == 1 => KeyCode::Char(c.chars().next().unwrap()),
        other => panic!("no key is named {other:?}"),
    };
    KeyEvent::new(code, mods)
}

/// Presses the keys `names` names (space-separated, see [`named`]) one by one; a
/// line per key: its name, what the editor answered, and the text after it with `|`
/// at the cursor (a newline as `⏎`).
fn pressed(editor: &mut Editor, names: &str) -> String {
    names
        .split(' ')
        .map(|name| {
            let outcome = editor.on_key(named(name));
            format!(
                "{name}: {outcome:?} → {}\n",
                shown(editor).replace('\n', "⏎")
            )
        })
        .collect()
}

fn history(entries: &[&str]) -> History {
    let mut h = History::new(100);
    for e in entries {
        h.record(e);
    }
    h
}

fn editor_with(entries: &[&str]) -> Editor {
    Editor::new(history(entries), Completer::default())
}

fn screen(editor: &Editor, width: u16) -> String {
    let height = editor.desired_height(width);
    let buffer = draw(width, height, |f| {
        editor.render(Rect::new(0, 0, width, height), f.buffer_mut(), &Theme::MONO)
    });
    let (x, y) = editor.cursor_position(Rect::new(0, 0, width, height));
    format!("{}cursor at ({x}, {y})\n", text(&buffer))
}

/// A new editor (no history, no completions) with `text` typed into it.
fn typing(text: &str) -> Editor {
    typed_into(Editor::default(), text)
}

/// `editor` after `text` is typed into it, a key a character.
fn typed_into(mut editor: Editor, text: &str) -> Editor {
    typed(&mut editor, text);
    editor
}

/// `editor` after `text` is pasted into it.
fn pasted_into(mut editor: Editor, text: &str) -> Editor {
    editor.on_paste(text);
    editor
}

/// Presses the keys `names` names on `editor` and checks what it answered to each
/// (see [`pressed`]); returns the editor for what a test checks after.
#[track_caller]
fn check_keys(mut editor: Editor, names: &str, expect: Expect) -> Editor {
    expect.assert_eq(&pressed(&mut editor, names));
    editor
}

/// Checks `editor` drawn `width` columns wide, and where its cursor is.
#[track_caller]
fn check_screen(editor: &Editor, width: u16, expect: Expect) {
    expect.assert_eq(&screen(editor, width));
}

#[test]
fn enter_on_blank_text_does_nothing() {
    check_keys(
        typing("  "),
        "Enter",
        expect![[r#"
            Enter: Nothing →   |
        "#]],
    );
}

#[test]
fn alt_enter_shift_enter_ctrl_j_and_ctrl_enter_insert_newlines() {
    check_keys(
        Editor::default(),
        "a M-Enter b S-Enter c C-j d C-Enter",
        expect![[r#"
            a: Changed → a|
            M-Enter: Changed → a⏎|
            b: Changed → a⏎b|
            S-Enter: Changed → a⏎b⏎|
            c: Changed → a⏎b⏎c|
            C-j: Changed → a⏎b⏎c⏎|
            d: Changed → a⏎b⏎c⏎d|
            C-Enter: Changed → a⏎b⏎c⏎d⏎|
        "#]],
    );
}

#[test]
fn enter_submits_the_text_and_tab_queues_it_while_queueing_each_emptying_the_editor() {
    let mut e = check_keys(
        typing("hello"),
        "Enter",
        expect![[r#"
            Enter: Submit("hello") → |
        "#]],
    );
    assert_eq!(e.history().entries(), ["hello".to_string()]);
    e.set_queueing(true);
    check_keys(
        typed_into(e, "next"),
        "Tab Tab",
        expect![[r#"
            Tab: Queue("next") → |
            Tab: Nothing → |
        "#]],
    );
}

#[test]
fn tab_on_an_idle_prompt_neither_sends_nor_queues_and_keeps_the_text() {
    check_keys(
        typing("not yet"),
        "Tab",
        expect![[r#"
            Tab: Nothing → not yet|
        "#]],
    );
}

#[test]
fn esc_clears_the_text_then_reports_cancel_on_the_empty_editor() {
    check_keys(
        typing("draft"),
        "Esc Esc",
        expect![[r#"
            Esc: Cleared → |
            Esc: Cancel → |
        "#]],
    );
}

#[test]
fn ctrl_c_and_esc_clear_the_text_into_the_history_and_say_whether_they_did() {
    check_keys(
        typing("oops"),
        "C-c C-c Up",
        expect![[r#"
            C-c: Interrupt { cleared: true } → |
            C-c: Interrupt { cleared: false } → |
            Up: Changed → oops|
        "#]],
    );
    check_keys(
        typing("draft"),
        "Esc Esc Up",
        expect![[r#"
            Esc: Cleared → |
            Esc: Cancel → |
            Up: Changed → draft|
        "#]],
    );
}

#[test]
fn ctrl_d_is_eof_only_on_an_empty_editor() {
    check_keys(
        typing("ab"),
        "Home C-d C-d C-d",
        expect![[r#"
            Home: Changed → |ab
            C-d: Changed → |b
            C-d: Changed → |
            C-d: Eof → |
        "#]],
    );
}

#[test]
fn a_pasted_crlf_text_keeps_its_newlines_as_lf() {
    let mut e = Editor::default();
    typed(&mut e, "x");
    assert_eq!(e.on_paste("one\r\ntwo\rthree\n"), EditorOutcome::Changed);
    assert_eq!(shown(&e), "xone\ntwo\nthree\n|");
}

#[test]
fn ctrl_w_deletes_back_to_whitespace_and_ctrl_y_yanks_it() {
    check_keys(
        typing("git commit -m  "),
        "C-w C-w Home C-y",
        expect![[r#"
            C-w: Changed → git commit |
            C-w: Changed → git |
            Home: Changed → |git 
            C-y: Changed → commit |git 
        "#]],
    );
}

#[test]
fn ctrl_u_and_ctrl_k_delete_to_the_line_start_and_end() {
    let mut e = pasted_into(Editor::default(), "first line\nsecond line");
    for _ in 0..5 {
        e.on_key(key(KeyCode::Left));
    }
    check_keys(
        e,
        "C-k C-u C-u C-a C-k",
        expect![[r#"
            C-k: Changed → first line⏎second|
            C-u: Changed → first line⏎|
            C-u: Changed → first line|
            C-a: Changed → |first line
            C-k: Changed → |
        "#]],
    );
}

#[test]
fn words_move_with_alt_and_ctrl_arrows() {
    check_keys(
        typing("cargo nextest-run  x"),
        "M-Left C-Left M-b M-b M-Right M-d",
        expect![[r#"
            M-Left: Changed → cargo nextest-run  |x
            C-Left: Changed → cargo nextest-|run  x
            M-b: Changed → cargo |nextest-run  x
            M-b: Changed → |cargo nextest-run  x
            M-Right: Changed → cargo| nextest-run  x
            M-d: Changed → cargo|-run  x
        "#]],
    );
}

#[test]
fn multi_byte_text_moves_and_deletes_by_cluster() {
    check_keys(
        // An e with a combining acute accent, a CJK character, a family emoji (ZWJ).
        pasted_into(Editor::default(), "e\u{301}漢👨\u{200d}👩\u{200d}👧!"),
        "Left Left Backspace Delete Left M-Right",
        expect![[r#"
            Left: Changed → é漢👨‍👩‍👧|!
            Left: Changed → é漢|👨‍👩‍👧!
            Backspace: Changed → é|👨‍👩‍👧!
            Delete: Changed → é|!
            Left: Changed → |é!
            M-Right: Changed → é|!
        "#]],
    );
}

#[test]
fn up_and_down_move_between_lines_at_the_same_column() {
    check_keys(
        pasted_into(editor_with(&["older"]), "abcdef\nab\nabcdef"),
        "Left Left Up Up Down Down",
        expect![[r#"
            Left: Changed → abcdef⏎ab⏎abcde|f
            Left: Changed → abcdef⏎ab⏎abcd|ef
            Up: Changed → abcdef⏎ab|⏎abcdef
            Up: Changed → abcd|ef⏎ab⏎abcdef
            Down: Changed → abcdef⏎ab|⏎abcdef
            Down: Changed → abcdef⏎ab⏎abcd|ef
        "#]],
    );
}

#[test]
fn up_and_down_on_a_wrapped_line_move_by_screen_rows_before_the_history() {
    // 14 columns: 12 for the text after the prompt.
    let e = typed_into(editor_with(&["older"]), "one two three four five six");
    let _ = e.desired_height(14);
    check_keys(
        e,
        "Up Up Up Down Down Down",
        expect![[r#"
            Up: Changed → one two three fo|ur five six
            Up: Changed → one two| three four five six
            Up: Changed → older|
            Down: Changed → one two three four five six|
            Down: Nothing → one two three four five six|
            Down: Nothing → one two three four five six|
        "#]],
    );
}

#[test]
fn the_history_walk_keeps_the_draft() {
    check_keys(
        typed_into(editor_with(&["first", "second"]), "draft"),
        "Up Up Up Down Down Down",
        expect![[r#"
            Up: Changed → second|
            Up: Changed → first|
            Up: Nothing → first|
            Down: Changed → second|
            Down: Changed → draft|
            Down: Nothing → draft|
        "#]],
    );
}

#[test]
fn up_walks_into_a_multi_line_entry_line_by_line() {
    check_keys(
        editor_with(&["old", "line one\nline two"]),
        "Up Up Up",
        expect![[r#"
            Up: Changed → line one⏎line two|
            Up: Changed → line one|⏎line two
            Up: Changed → old|
        "#]],
    );
}

#[test]
fn a_recalled_slash_command_does_not_open_the_popup() {
    let completer = Completer::new(&[("tree", "the branch tree"), ("exit", "leave")]);
    let mut e = Editor::new(history(&["/exit", "/tree"]), completer);
    e.on_key(key(KeyCode::Up));
    assert!(e.popup().is_none());
    e.on_key(key(KeyCode::Up));
    assert_eq!(shown(&e), "/exit|");
}

#[test]
fn submitting_records_history_without_consecutive_duplicates() {
    let mut e = Editor::default();
    for text in ["a", "a", "b", "a"] {
        typed(&mut e, text);
        e.on_key(key(KeyCode::Enter));
    }
    assert_eq!(e.history().entries(), ["a", "b", "a"].map(String::from));
}

#[test]
fn ctrl_r_narrows_goes_older_and_enter_accepts_into_the_editor() {
    let mut e = editor_with(&["cargo build", "git status", "cargo test", "ls"]);
    typed(&mut e, "draft");
    assert_eq!(
        e.on_key(ctrl('r')),
        EditorOutcome::Search(SearchEvent::Started)
    );
    typed(&mut e, "car");
    assert_eq!(shown(&e), "draft|");
    assert_eq!(
        screen(&e, 40),
        "(reverse-i-search)'car': cargo test\ncursor at (25, 0)\n"
    );
    e.on_key(ctrl('r'));
    assert_eq!(
        screen(&e, 40),
        "(reverse-i-search)'car': cargo build\ncursor at (25, 0)\n"
    );
    e.on_key(ctrl('r'));
    assert_eq!(
        screen(&e, 40),
        "(failed reverse-i-search)'car': cargo\nbuild\ncursor at (32, 0)\n"
    );
    assert_eq!(
        e.on_key(key(KeyCode::Enter)),
        EditorOutcome::Search(SearchEvent::Accepted)
    );
    assert_eq!(shown(&e), "cargo build|");
    assert!(!e.is_searching());
}

#[test]
fn esc_cancels_the_search_and_restores_the_text() {
    let mut e = editor_with(&["cargo build"]);
    typed(&mut e, "dra");
    e.on_key(key(KeyCode::Left));
    e.on_key(ctrl('r'));
    typed(&mut e, "build");
    assert_eq!(
        e.on_key(key(KeyCode::Esc)),
        EditorOutcome::Search(SearchEvent::Cancelled)
    );
    assert_eq!(shown(&e), "dr|a");
}

#[test]
fn a_moving_key_in_the_search_accepts_the_match_and_moves() {
    let mut e = editor_with(&["make test"]);
    e.on_key(ctrl('r'));
    check_keys(
        typed_into(e, "make"),
        "Home",
        expect![[r#"
            Home: Changed → |make test
        "#]],
    );
}

#[test]
fn backspace_in_the_search_widens_it_again() {
    let mut e = editor_with(&["abc", "abd"]);
    e.on_key(ctrl('r'));
    typed(&mut e, "abc");
    e.on_key(key(KeyCode::Backspace));
    assert_eq!(
        screen(&e, 40),
        "(reverse-i-search)'ab': abd\ncursor at (24, 0)\n"
    );
}

/// An editor without history that completes [`commands`].
fn commanding() -> Editor {
    Editor::new(History::default(), commands())
}

fn commands() -> Completer {
    Completer::new(&[
        ("/tree", "the branch tree of this session"),
        ("/at", "continue from an earlier entry (a new branch)"),
        ("/status", "provider, model, context and spend"),
        ("/queue", "TEXT: a follow-up"),
        ("/exit", "leave (also Ctrl-D)"),
    ])
    .with_alias("quit", "exit")
}

#[test]
fn the_slash_popup_completes_with_tab_and_submits_an_exact_command_on_enter() {
    let mut e = commanding();
    typed(&mut e, "/t");
    let names: Vec<&str> = e.popup().map_or(vec![], |p| {
        p.items().iter().map(|i| i.value.as_str()).collect()
    });
    // Prefix matches first, then substring matches.
    assert_eq!(names, ["tree", "at", "status", "exit"]);
    e.on_key(key(KeyCode::Down));
    e.on_key(key(KeyCode::Tab));
    assert_eq!(shown(&e), "/at |");
    assert!(e.popup().is_none());
    e.clear();
    typed(&mut e, "/exit");
    assert_eq!(
        e.on_key(key(KeyCode::Enter)),
        EditorOutcome::Submit("/exit".into())
    );
}

#[test]
fn enter_on_a_partial_command_runs_the_selected_one() {
    let e = check_keys(
        typed_into(commanding(), "/sta"),
        "Enter",
        expect![[r#"
            Enter: Submit("/status") → |
        "#]],
    );
    assert_eq!(e.history().entries(), ["/status".to_string()]);
}

#[test]
fn enter_on_a_command_that_needs_an_argument_completes_it_and_waits() {
    check_keys(
        typed_into(commanding(), "/que"),
        "Enter t Enter",
        expect![[r#"
            Enter: Changed → /queue |
            t: Changed → /queue t|
            Enter: Submit("/queue t") → |
        "#]],
    );
}

#[test]
fn slash_q_lists_quit_above_queue_and_enter_runs_quit() {
    let mut e = typed_into(commanding(), "/q");
    let names: Vec<&str> = e.popup().map_or(vec![], |p| {
        p.items().iter().map(|i| i.value.as_str()).collect()
    });
    assert_eq!(names, ["quit", "queue"]);
    assert_eq!(
        e.on_key(key(KeyCode::Enter)),
        EditorOutcome::Submit("/quit".into())
    );
}

#[test]
fn esc_closes_the_popup_until_the_text_changes() {
    let mut e = commanding();
    typed(&mut e, "/e");
    assert_eq!(e.on_key(key(KeyCode::Esc)), EditorOutcome::Changed);
    assert!(e.popup().is_none());
    assert_eq!(shown(&e), "/e|");
    typed(&mut e, "x");
    assert!(e.popup().is_some());
}

/// An editor that completes `@` mentions from [`files`].
fn mentioning() -> Editor {
    let mut e = Editor::default();
    e.set_files(files());
    e
}

fn files() -> Arc<FileIndex> {
    Arc::new(FileIndex::from_paths(
        [
            "src/main.rs",
            "src/domain/model.rs",
            "README.md",
            "tui/src/editor.rs",
        ]
        .map(String::from)
        .to_vec(),
    ))
}

#[test]
fn tab_on_a_mention_inserts_the_path_replacing_the_partial_word() {
    let mut e = mentioning();
    typed(&mut e, "look at @edr please");
    for _ in 0.." please".len() {
        e.on_key(key(KeyCode::Left));
    }
    assert_eq!(e.popup().map(Popup::kind), Some(PopupKind::File));
    e.on_key(key(KeyCode::Tab));
    assert_eq!(shown(&e), "look at @tui/src/editor.rs |please");
    assert!(e.popup().is_none());
}

#[test]
fn an_at_sign_inside_a_word_opens_no_popup() {
    let mut e = mentioning();
    typed(&mut e, "mail a@b");
    assert!(e.popup().is_none());
}

#[test]
fn the_empty_editor_shows_the_placeholder() {
    check_screen(
        &Editor::default(),
        40,
        expect![[r#"
            › Ask xcsh to do something
            cursor at (2, 0)
        "#]],
    );
}

#[test]
fn a_multi_line_text_wraps_at_word_boundaries_at_40_columns() {
    check_screen(
        &pasted_into(
            Editor::default(),
            "Please refactor the parser so that every error names the file and line\n\nthanks",
        ),
        40,
        expect![[r#"
            › Please refactor the parser so that
              every error names the file and line

              thanks
            cursor at (8, 3)
        "#]],
    );
}

#[test]
fn a_cursor_after_a_full_row_gets_a_row_of_its_own() {
    check_screen(
        &pasted_into(Editor::default(), "abcdefgh"),
        10,
        expect![[r#"
            › abcdefgh

            cursor at (2, 1)
        "#]],
    );
}

#[test]
fn a_long_text_scrolls_to_keep_the_cursor_visible() {
    let mut e = Editor::default();
    // Typed (pasted, 14 lines would be a placeholder).
    e.set_text(
        &(1..=14)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    assert_eq!(e.desired_height(40), MAX_INPUT_ROWS);
    let shown = screen(&e, 40);
    assert_eq!(shown.lines().next(), Some("  line 5"));
    assert_eq!(shown.lines().last(), Some("cursor at (9, 9)"));
}

#[test]
fn the_slash_popup_renders_above_the_input() {
    let mut e = typed_into(commanding(), "/t");
    e.on_key(key(KeyCode::Down));
    check_screen(
        &e,
        40,
        expect![[r#"
            /tree    the branch tree of this session
            /at      continue from an earlier entry…
            /status  provider, model, context and s…
            /exit    leave (also Ctrl-D)
            › /t
            cursor at (4, 4)
        "#]],
    );
}

#[test]
fn the_selected_popup_row_is_reversed() {
    let mut e = commanding();
    typed(&mut e, "/t");
    e.on_key(key(KeyCode::Down));
    let buffer = draw(40, 4, |f| {
        e.render(Rect::new(0, 0, 40, 4), f.buffer_mut(), &Theme::MONO)
    });
    let reversed: Vec<bool> = (0..3)
        .map(|y| {
            buffer[(39, y)]
                .modifier
                .contains(ratatui::style::Modifier::REVERSED)
        })
        .collect();
    assert_eq!(reversed, [false, true, false]);
}

#[test]
fn the_mention_popup_renders_the_best_files_first() {
    check_screen(
        &typed_into(mentioning(), "see @main"),
        40,
        expect![[r#"
            src/main.rs
            src/domain/model.rs
            › see @main
            cursor at (11, 2)
        "#]],
    );
}

#[test]
fn the_editor_stays_drawable_at_every_narrow_width() {
    let mut e = commanding();
    e.on_paste(
        "漢字 and e\u{301} mixed\twith a tab and a very long word: abcdefghijklmnopqrstuvwxyz",
    );
    typed(&mut e, " /t @x");
    for width in 1..=40 {
        let _ = screen(&e, width);
    }
    e.clear();
    typed(&mut e, "/t");
    for width in 1..=40 {
        let _ = screen(&e, width);
    }
}

/// Saved in a folder not made yet (a first prompt under a new `XCSH_HOME`), read
/// back the same.
#[test]
fn a_history_file_round_trips_through_the_rustyline_format() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("new-home/history");
    let mut h = History::load(&path, 100).expect("a missing file is an empty history");
    h.record("one");
    h.record("two\nlines with a \\ backslash");
    h.save().expect("saved");
    let written = std::fs::read_to_string(&path).expect("the file");
    assert_eq!(written, "#V2\none\ntwo\\nlines with a \\\\ backslash\n");
    let again = History::load(&path, 100).expect("loaded");
    assert_eq!(again.entries(), h.entries());
}

#[test]
fn a_file_written_by_rustyline_loads_with_its_escapes() {
    // As rustyline 19's FileHistory::save_to writes it (empty lines are skipped).
    let text = "#V2\nls -la\nfn main() {\\n    println!(\"\\\\n\");\\n}\n\n/tree\nbad \\x escape\n";
    assert_eq!(
        parse_history(text),
        [
            "ls -la",
            "fn main() {\n    println!(\"\\n\");\n}",
            "/tree",
            "bad \\x escape"
        ]
        .map(String::from)
    );
    assert_eq!(
        parse_history("old\nformat\n"),
        ["old", "format"].map(String::from)
    );
}

#[test]
fn saving_keeps_entries_another_xcsh_added_meanwhile_and_the_cap() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("history");
    let mut mine = History::load(&path, 3).expect("empty");
    let mut other = History::load(&path, 3).expect("empty");
    other.record("theirs");
    other.save().expect("saved");
    mine.record("a");
    mine.record("b");
    mine.record("c");
    mine.save().expect("saved");
    let loaded = History::load(&path, 10).expect("loaded");
    assert_eq!(loaded.entries(), ["a", "b", "c"].map(String::from));
    mine.record("d");
    other.record("e");
    other.save().expect("saved");
    mine.save().expect("saved");
    let loaded = History::load(&path, 10).expect("loaded");
    assert_eq!(loaded.entries(), ["c", "e", "d"].map(String::from));
}

#[test]
fn the_placeholder_shows_every_hint_at_120_columns() {
    check_screen(
        &Editor::default(),
        120,
        expect![[r#"
            › Ask xcsh to do something · / for commands · @ to mention a file
            cursor at (2, 0)
        "#]],
    );
}

#[test]
fn tab_on_a_mention_without_matches_neither_completes_nor_queues() {
    check_keys(
        typed_into(mentioning(), "see @zzz"),
        "Tab",
        expect![[r#"
            Tab: Nothing → see @zzz|
        "#]],
    );
}

/// `count` numbered lines, `line 1` to `line {count}`, a newline after each.
fn numbered_lines(count: usize) -> String {
    (1..=count).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn a_200_line_paste_shows_one_placeholder_row_and_submits_the_full_text() {
    let paste = numbered_lines(200);
    let mut e = typed_into(Editor::default(), "fix this: ");
    assert_eq!(e.on_paste(&paste), EditorOutcome::Changed);
    typed(&mut e, " thanks");
    assert_eq!(e.desired_height(60), 1);
    check_screen(
        &e,
        60,
        expect![[r#"
            › fix this: [Pasted text #1 +200 lines] thanks
            cursor at (46, 0)
        "#]],
    );
    let sent = format!("fix this: {paste} thanks");
    assert_eq!(
        e.on_key(key(KeyCode::Enter)),
        EditorOutcome::Submit(sent.clone())
    );
    assert_eq!(e.text(), "");
    assert_eq!(e.history().entries(), std::slice::from_ref(&sent));
    // Up recalls the text as sent, the paste expanded.
    e.on_key(key(KeyCode::Up));
    assert_eq!(e.text(), sent);
}

#[test]
fn a_paste_over_1000_characters_on_one_line_is_a_placeholder_too() {
    let paste = "x".repeat(1_001);
    let e = pasted_into(Editor::default(), &paste);
    assert_eq!(shown(&e), "[Pasted text #1 +1 line]|");
    let e = pasted_into(Editor::default(), &paste[..1_000]);
    assert_eq!(e.text(), &paste[..1_000]);
}

#[test]
fn two_pastes_number_1_and_2_and_tab_queues_both_expanded() {
    let (first, second) = (numbered_lines(12), "a\r\nb\r\n".repeat(6));
    let mut e = pasted_into(Editor::default(), &first);
    typed(&mut e, " and ");
    e.on_paste(&second);
    assert_eq!(
        shown(&e),
        "[Pasted text #1 +12 lines] and [Pasted text #2 +12 lines]|"
    );
    e.set_queueing(true);
    assert_eq!(
        e.on_key(key(KeyCode::Tab)),
        EditorOutcome::Queue(format!("{first} and {}", "a\nb\n".repeat(6)))
    );
    // A new input numbers its pastes from #1 again.
    e.on_paste(&first);
    assert_eq!(shown(&e), "[Pasted text #1 +12 lines]|");
}

#[test]
fn backspace_and_delete_at_a_placeholder_remove_it_whole_with_its_text() {
    let mut e = typing("a");
    e.on_key(ctrl('j'));
    e.on_paste(&numbered_lines(11));
    typed(&mut e, " b");
    check_keys(
        e,
        "Backspace Backspace Backspace Left Left Left Delete Delete Enter",
        expect![[r#"
            Backspace: Changed → a⏎[Pasted text #1 +11 lines] |
            Backspace: Changed → a⏎[Pasted text #1 +11 lines]|
            Backspace: Changed → a⏎|
            Left: Changed → a|⏎
            Left: Changed → |a⏎
            Left: Nothing → |a⏎
            Delete: Changed → |⏎
            Delete: Changed → |
            Enter: Nothing → |
        "#]],
    );
    let mut e = pasted_into(Editor::default(), &numbered_lines(11));
    e.on_key(key(KeyCode::Home));
    e.on_key(key(KeyCode::Delete));
    assert_eq!(shown(&e), "|");
    // Inside the placeholder (moved into it), Backspace removes it whole too.
    let mut e = pasted_into(typing("x"), &numbered_lines(11));
    e.on_key(key(KeyCode::Left));
    e.on_key(key(KeyCode::Backspace));
    assert_eq!(shown(&e), "x|");
    assert_eq!(
        e.on_key(key(KeyCode::Enter)),
        EditorOutcome::Submit("x".into())
    );
}

#[test]
fn a_placeholder_killed_and_yanked_back_still_sends_its_text() {
    let paste = numbered_lines(20);
    let mut e = pasted_into(typing("see "), &paste);
    e.on_key(ctrl('u'));
    assert_eq!(e.text(), "");
    e.on_key(ctrl('y'));
    assert_eq!(
        e.on_key(key(KeyCode::Enter)),
        EditorOutcome::Submit(format!("see {paste}"))
    );
}

#[test]
fn a_small_paste_and_a_long_blank_one_go_in_as_plain_text() {
    let ten = numbered_lines(10);
    assert_eq!(pasted_into(typing("> "), &ten).text(), format!("> {ten}"));
    let blank = "\n".repeat(30);
    assert_eq!(pasted_into(Editor::default(), &blank).text(), blank);
}

#[test]
fn esc_clears_a_placeholder_into_the_history_as_its_text() {
    let paste = numbered_lines(15);
    let mut e = pasted_into(Editor::default(), &paste);
    assert_eq!(e.on_key(key(KeyCode::Esc)), EditorOutcome::Cleared);
    assert_eq!(e.history().entries(), [paste]);
}
