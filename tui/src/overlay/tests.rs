//! Snapshots and key handling of the overlays.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::Line;
use xcsh_log::{
    Body, FileChange, Record, SessionLog, SessionWriter, ToolResultRecord, read_session,
};
use xcsh_machine::{CallId, EntryId, ToolOutcome, ToolStatus};

use super::*;
use crate::testkit::{draw, text};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn chars(s: &str) -> Vec<KeyEvent> {
    s.chars().map(|c| key(KeyCode::Char(c))).collect()
}

fn press(overlay: &mut dyn Overlay, keys: &[KeyEvent]) -> Vec<OverlayOutcome> {
    keys.iter().map(|k| overlay.on_key(*k)).collect()
}

/// The overlay drawn at `w` × `h`, as text.
fn screen(overlay: &mut dyn Overlay, w: u16, h: u16) -> String {
    text(&draw(w, h, |f| {
        let area = f.area();
        overlay.render(area, f.buffer_mut(), &Theme::MONO)
    }))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/sessions")
        .join(name)
}

// ---------------------------------------------------------------- transcript

/// A conversation of `n` numbered items, wrapped to the width it is drawn at.
fn numbered(items: Rc<RefCell<Vec<String>>>) -> transcript::RenderLines {
    Box::new(move |width| {
        items
            .borrow()
            .iter()
            .flat_map(|t| crate::text::wrap(&Line::from(t.clone()), width))
            .collect()
    })
}

fn items(n: usize) -> Rc<RefCell<Vec<String>>> {
    Rc::new(RefCell::new(
        (1..=n)
            .map(|i| format!("item {i}: the tool printed line {i} of its output in full"))
            .collect(),
    ))
}

#[test]
fn the_transcript_opens_at_the_newest_and_scrolls_up_a_page() {
    let mut t = Transcript::new(numbered(items(80)));
    let mut shown = screen(&mut t, 120, 5);
    press(&mut t, &[key(KeyCode::PageUp), key(KeyCode::Up)]);
    shown.push_str(&screen(&mut t, 120, 5));
    expect_test::expect![[r#"
        transcript                                                                                                         80/80
        item 78: the tool printed line 78 of its output in full
        item 79: the tool printed line 79 of its output in full
        item 80: the tool printed line 80 of its output in full
        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search  q close
        transcript                                                                                                         76/80
        item 74: the tool printed line 74 of its output in full
        item 75: the tool printed line 75 of its output in full
        item 76: the tool printed line 76 of its output in full
        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search  q close
    "#]].assert_eq(&shown);
}

#[test]
fn the_transcript_rewraps_at_40_columns() {
    let mut t = Transcript::new(numbered(items(12)));
    press(&mut t, &[key(KeyCode::Char('g'))]);
    expect_test::expect![[r#"
        transcript                          5/24
        item 1: the tool printed line 1 of its
        output in full
        item 2: the tool printed line 2 of its
        output in full
        item 3: the tool printed line 3 of its
        ↑↓ scroll  PgUp/PgDn page  g/G top/end
    "#]]
    .assert_eq(&screen(&mut t, 40, 7));
}

#[test]
fn the_transcript_follows_appends_at_the_bottom_but_not_when_scrolled_up() {
    let conv = items(40);
    let mut t = Transcript::new(numbered(conv.clone()));
    screen(&mut t, 120, 12);
    conv.borrow_mut().push("item 41: new".into());
    t.refresh();
    screen(&mut t, 120, 12);
    let at_end = (t.pager().top(), t.pager().position());
    press(&mut t, &[key(KeyCode::Up)]);
    conv.borrow_mut().push("item 42: newer".into());
    t.refresh();
    screen(&mut t, 120, 12);
    let scrolled = (t.pager().top(), t.pager().position());
    assert_eq!(
        (at_end, scrolled),
        ((31, "41/41".to_string()), (30, "40/42".to_string()))
    );
}

#[test]
fn the_streamed_tail_shows_under_the_log_and_a_transcript_scrolled_up_stays_put() {
    let streamed = |text: &str| {
        vec![crate::cells::Cell::Assistant {
            markdown: text.into(),
        }]
    };
    let entries = || -> Rc<RefCell<Vec<String>>> {
        Rc::new(RefCell::new(
            (1..=20).map(|i| format!("entry {i}")).collect(),
        ))
    };
    let mut t = Transcript::new(numbered(entries()));
    screen(&mut t, 60, 6);
    t.set_live(streamed("Streaming"));
    let mut shown = screen(&mut t, 60, 6);
    t.set_live(streamed("Streaming, and more."));
    shown.push_str(&screen(&mut t, 60, 6));
    press(&mut t, &[key(KeyCode::PageUp)]);
    let top = t.pager().top();
    t.set_live(streamed("Streaming, and more, and the end."));
    shown.push_str(&screen(&mut t, 60, 6));
    assert_eq!(t.pager().top(), top);
    // An approval's preview does not grow: it shows no live cells.
    let mut fixed = Transcript::fixed(numbered(entries()));
    fixed.set_live(streamed("Streaming"));
    fixed.refresh();
    shown.push_str(&screen(&mut fixed, 60, 6));
    expect_test::expect![[r#"
        transcript                                             22/22
        entry 19
        entry 20

        • Streaming
        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search  q close
        transcript                                             22/22
        entry 19
        entry 20

        • Streaming, and more.
        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search  q close
        transcript                                             18/22
        entry 15
        entry 16
        entry 17
        entry 18
        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search  q close
        transcript                                             20/20
        entry 17
        entry 18
        entry 19
        entry 20
        ↑↓ scroll  PgUp/PgDn page  g/G top/end  / search  q close
    "#]]
    .assert_eq(&shown);
}

#[test]
fn a_search_finds_the_second_match_with_n_and_shows_where_it_is() {
    let conv = items(60);
    conv.borrow_mut()[9] = "item 10: needle one".into();
    conv.borrow_mut()[29] = "item 30: needle two".into();
    conv.borrow_mut()[49] = "item 50: NEEDLE three".into();
    let mut t = Transcript::new(numbered(conv));
    press(&mut t, &[key(KeyCode::Char('g'))]);
    screen(&mut t, 60, 12);
    let mut keys = chars("/needle");
    keys.push(key(KeyCode::Enter));
    keys.push(key(KeyCode::Char('n')));
    assert!(
        press(&mut t, &keys)
            .iter()
            .all(|o| *o == OverlayOutcome::Stay)
    );
    let shown = screen(&mut t, 60, 12);
    expect_test::expect![[r#"
        transcript                                             36/60
        item 27: the tool printed line 27 of its output in full
        item 28: the tool printed line 28 of its output in full
        item 29: the tool printed line 29 of its output in full
        item 30: needle two
        item 31: the tool printed line 31 of its output in full
        item 32: the tool printed line 32 of its output in full
        item 33: the tool printed line 33 of its output in full
        item 34: the tool printed line 34 of its output in full
        item 35: the tool printed line 35 of its output in full
        item 36: the tool printed line 36 of its output in full
        match 2/3 for "needle"  n/N next/prev  Esc end search
    "#]]
    .assert_eq(&shown);
    assert_eq!(t.pager().top(), 26);
    // Round the end: the third, then the first again.
    press(&mut t, &chars("nn"));
    assert_eq!(t.pager().top(), 6);
    assert_eq!(
        press(&mut t, &[key(KeyCode::Esc), key(KeyCode::Esc)]),
        [OverlayOutcome::Stay, OverlayOutcome::Close]
    );
}

// ---------------------------------------------------------------- tree

/// The `branch-at` fixture (two branches at #4), labelled at #8, in a temp dir.
fn labelled_session() -> (tempfile::TempDir, SessionLog) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("branch-at.jsonl");
    std::fs::copy(fixture("branch-at.jsonl"), &path).unwrap();
    let ts = read_session(&path).unwrap().entries[0].ts;
    xcsh_inspect::fork::label(&path, EntryId(8), "first try", ts).unwrap();
    (dir, read_session(&path).unwrap())
}

fn nav(log: SessionLog) -> TreeNav {
    TreeNav::new(Box::new(move |full| xcsh_inspect::tree::build(&log, full)))
}

/// The navigator quotes a turn's prompt with its emoji whole, as `xcsh tree` does
/// (the snapshot holds the zero-width joiners themselves, not `\u{200d}`).
#[test]
fn the_tree_navigator_shows_the_emoji_of_a_prompt_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.jsonl");
    std::fs::copy(fixture("plain.jsonl"), &path).unwrap();
    let (mut w, log) = SessionWriter::open(&path).unwrap();
    let Body::Record(Record::UserMessage { config, .. }) = &log.entries[1].body else {
        panic!("the fixture's entry #1 is its prompt");
    };
    let prompt = Body::Record(Record::UserMessage {
        text: "third 日本語 X🎉👩\u{200d}👩\u{200d}👧 é".into(),
        config: config.clone(),
    });
    let ts = log.entries[log.entries.len() - 1].ts;
    w.append(log.leaf(), ts, &prompt).unwrap();
    w.sync().unwrap();
    drop(w);
    let mut t = nav(read_session(&path).unwrap());
    expect_test::expect![[r#"
        tree · b4e531031642 · turns                                                                      3/3
        #0 session b4e531031642 /tmp/tmp.GYbSVtgKYP/plain/work
        #1..4 user "What is the capital of France?" · 1 step · 0 tool calls · 129 tok · completed
        #5 user "third 日 本 語  X🎉 👩‍👩‍👧  é" · 0 steps · 0 tool calls · 0 tok · unfinished ◀ leaf
        ↑↓ move  ←→ branch  Enter continue here  l label  f turns/entries  q close
    "#]]
    .assert_eq(&screen(&mut t, 100, 5));
}

#[test]
fn the_tree_navigator_draws_the_branches_and_the_label_with_the_cursor_on_the_leaf() {
    let (_dir, log) = labelled_session();
    let mut t = nav(log);
    let wide = draw(120, 30, |f| {
        t.render(f.area(), f.buffer_mut(), &Theme::MONO)
    });
    // The cursor's row (the leaf, the fifth) is reversed across the width.
    let reversed = |y: u16| {
        (0..120).all(|x| {
            wide[(x, y)]
                .modifier
                .contains(ratatui::style::Modifier::REVERSED)
        })
    };
    assert_eq!(
        (1..7).map(reversed).collect::<Vec<_>>(),
        [false, false, false, false, true, false]
    );
    let mut shown = text(&wide);
    shown.push_str(&screen(&mut t, 40, 20));
    expect_test::expect![[r#"
        tree · ace3e151b491 · turns                                                                                          5/5
        #0 session ace3e151b491 /tmp/tmp.GYbSVtgKYP/branch-at/work
        #1..4 user "first" · 1 step · 0 tool calls · 102 tok · completed ┬ 2 branches at #4
        ├─ #5..8 user "second" · 1 step · 0 tool calls · 102 tok · completed [#8: first try]
        #9 ↳ new branch (the leaf was #8)
        #10..13 user "instead" · 1 step · 0 tool calls · 102 tok · completed ◀ leaf























        ↑↓ move  ←→ branch  Enter continue here  l label  f turns/entries  q close
        tree · ace3e151b491 · turns          5/5
        #0 session ace3e151b491 /tmp/tmp.GYbSVt…
        #1..4 user "first" · 1 step · 0 tool ca…
        ├─ #5..8 user "second" … [#8: first try]
        #9 ↳ new branch (the leaf was #8)
        #10..13 user "instead" · 1 step … ◀ leaf













        ↑↓ move  ←→ branch  Enter continue here
    "#]].assert_eq(&shown);
}

#[test]
fn the_tree_rows_are_the_lines_of_xcsh_tree() {
    let (_dir, log) = labelled_session();
    let tree = xcsh_inspect::tree::build(&log, false);
    let drawn = xcsh_inspect::tree::render(&tree, xcsh_inspect::Style::plain());
    let mut t = nav(log);
    let shown = screen(&mut t, 200, 12);
    let rows: Vec<&str> = shown.lines().skip(1).take(drawn.lines().count()).collect();
    let want: Vec<&str> = drawn.lines().collect();
    assert_eq!(rows, want);
}

#[test]
fn enter_on_the_other_branch_continues_at_its_last_entry() {
    let (_dir, log) = labelled_session();
    let mut t = nav(log);
    // From the leaf (#10..13) up over the branch record (#9) to #5..8.
    let got = press(
        &mut t,
        &[key(KeyCode::Up), key(KeyCode::Up), key(KeyCode::Enter)],
    );
    assert_eq!(
        got,
        [
            OverlayOutcome::Stay,
            OverlayOutcome::Stay,
            OverlayOutcome::Act(OverlayAction::ContinueAt(EntryId(8)))
        ]
    );
}

#[test]
fn l_then_a_name_then_enter_labels_the_selected_node() {
    let (_dir, log) = labelled_session();
    let mut t = nav(log);
    let mut keys = vec![key(KeyCode::Up), key(KeyCode::Up), key(KeyCode::Up)];
    keys.extend(chars("lgood  x"));
    keys.push(key(KeyCode::Backspace));
    let stays = press(&mut t, &keys);
    assert!(stays.iter().all(|o| *o == OverlayOutcome::Stay));
    let prompt = screen(&mut t, 40, 6);
    expect_test::expect![[r#"
        tree · ace3e151b491 · turns          2/5
        #0 session ace3e151b491 /tmp/tmp.GYbSVt…
        #1..4 user "first" · 1 step · 0 tool ca…
        ├─ #5..8 user "second" … [#8: first try]
        #9 ↳ new branch (the leaf was #8)
        label #4: good
    "#]]
    .assert_eq(&prompt);
    assert_eq!(
        t.on_key(key(KeyCode::Enter)),
        OverlayOutcome::Act(OverlayAction::Label {
            entry: EntryId(4),
            name: "good".into()
        })
    );
}

#[test]
fn esc_cancels_the_label_prompt_and_a_second_esc_closes() {
    let (_dir, log) = labelled_session();
    let mut t = nav(log);
    let mut keys = chars("lname");
    keys.extend([key(KeyCode::Esc), key(KeyCode::Esc)]);
    let got = press(&mut t, &keys);
    assert_eq!(got.last(), Some(&OverlayOutcome::Close));
    assert!(
        got[..got.len() - 1]
            .iter()
            .all(|o| *o == OverlayOutcome::Stay)
    );
}

#[test]
fn f_shows_every_entry_and_keeps_the_cursor_on_the_leaf() {
    let (_dir, log) = labelled_session();
    let mut t = nav(log);
    let before = t.selected();
    t.on_key(key(KeyCode::Char('f')));
    let full = t.selected();
    let shown = screen(&mut t, 80, 24);
    t.on_key(key(KeyCode::Char('f')));
    assert_eq!(
        (before, full, t.selected()),
        (Some(EntryId(13)), Some(EntryId(13)), Some(EntryId(13)))
    );
    expect_test::expect![[r#"
        tree · ace3e151b491 · entries                                              15/15
        #0 session ace3e151b491 /tmp/tmp.GYbSVtgKYP/branch-at/work
        #1 user_message "first"
        #2 step_started step 1 with 1 message(s)
        #3 step step 1 "Noted." completed
        #4 run_finished completed after 1 step(s), 102 tokens ┬ 2 branches at #4
        ├─ #5 user_message "second"
        │  #6 step_started step 1 with 3 message(s)
        │  #7 step step 1 "Noted." completed
        │  #8 run_finished completed after 1 step(s), 102 tokens
        │  #14 label "first try" on 8
        #9 ↳ new branch (the leaf was 8)
        #10 user_message "instead"
        #11 step_started step 1 with 3 message(s)
        #12 step step 1 "Noted." completed
        #13 run_finished completed after 1 step(s), 102 tokens ◀ leaf







        ↑↓ move  ←→ branch  Enter continue here  l label  f turns/entries  q close
    "#]]
    .assert_eq(&shown);
}

#[test]
fn left_goes_to_the_branch_point_and_right_into_its_branch() {
    let (_dir, log) = labelled_session();
    let mut t = nav(log);
    t.on_key(key(KeyCode::Left));
    let point = t.selected();
    t.on_key(key(KeyCode::Right));
    assert_eq!((point, t.selected()), (Some(EntryId(4)), Some(EntryId(8))));
}

// ---------------------------------------------------------------- picker

const NOW: i64 = 1_800_000_000_000;

fn sessions() -> Vec<PickerRow> {
    let row = |id: &str, prompt: &str, ago_ms: i64, size: u64, branches: usize| PickerRow {
        path: PathBuf::from(format!("/home/u/.xcsh/sessions/{id}.jsonl")),
        id: id.into(),
        first_prompt: prompt.into(),
        size_bytes: size,
        branches,
        active_ms: NOW - ago_ms,
        workspace: "/home/u/projects/parser".into(),
    };
    vec![
        row(
            "a1b2c3d4e5f6",
            "fix the parser bug in the tokenizer where a trailing comma is accepted",
            4 * 86_400_000,
            12_345,
            1,
        ),
        row(
            "0f9e8d7c6b5a",
            "add a --json flag to the sessions command",
            3 * 60_000,
            800,
            2,
        ),
        row(
            "123456abcdef",
            "Explain the Parser module",
            2 * 3_600_000,
            3_400_000,
            3,
        ),
    ]
}

#[test]
fn the_picker_lists_newest_first_and_filters_as_you_type() {
    let mut p = Picker::new(sessions(), NOW);
    let mut shown = screen(&mut p, 120, 30);
    press(&mut p, &chars("PARSER"));
    shown.push_str(&screen(&mut p, 120, 30));
    shown.push_str(&screen(&mut p, 40, 20));
    expect_test::expect![[r#"
        resume a session                                                                                                     1/3
        updated    size  br  first prompt                                             id            workspace
             3m   800 B   2  add a --json flag to the sessions command                0f9e8d7c6b5a  /home/u/projects/parser
             2h  3.2 MB   3  Explain the Parser module                                123456abcdef  /home/u/projects/parser
             4d   13 KB   1  fix the parser bug in the tokenizer where a trailing c…  a1b2c3d4e5f6  /home/u/projects/parser
























        type to filter  ↑↓ move  Enter resume  Esc close
        resume a session                                                                                                     1/2
        updated    size  br  first prompt                                             id            workspace
             2h  3.2 MB   3  Explain the Parser module                                123456abcdef  /home/u/projects/parser
             4d   13 KB   1  fix the parser bug in the tokenizer where a trailing c…  a1b2c3d4e5f6  /home/u/projects/parser

























        filter: PARSER
        resume a session                     1/2
        updated    size  br  first prompt
             2h  3.2 MB   3  Explain the Parser…
             4d   13 KB   1  fix the parser bug…















        filter: PARSER
    "#]].assert_eq(&shown);
}

/// The age a row shows is since the session's last activity, and the rows go by it
/// (not by when each session started); rows active at the same time keep the order
/// the listing gave them.
#[test]
fn the_picker_orders_by_last_activity_and_keeps_the_given_order_on_a_tie() {
    let mut rows = sessions();
    // The oldest session was worked on a minute ago; the 2h one ties with the 3m one.
    rows[0].active_ms = NOW - 60_000;
    rows[2].active_ms = rows[1].active_ms;
    let mut p = Picker::new(rows, NOW);
    expect_test::expect![[r#"
        resume a session                                                                                 1/3
        updated    size  br  first prompt                                                       id
             1m   13 KB   1  fix the parser bug in the tokenizer where a trailing comma is ac…  a1b2c3d4e5f6
             3m   800 B   2  add a --json flag to the sessions command                          0f9e8d7c6b5a
             3m  3.2 MB   3  Explain the Parser module                                          123456abcdef

        type to filter  ↑↓ move  Enter resume  Esc close
    "#]]
    .assert_eq(&screen(&mut p, 100, 7));
}

#[test]
fn the_picker_names_an_unreadable_session_file_once_below_the_list() {
    let unreadable = vec![
        "/home/u/.xcsh/sessions/badbadbadbad.jsonl:10: malformed entry: the line has no trailing \"hash\" field".to_string(),
    ];
    let one = sessions().into_iter().take(1).collect();
    let mut p = Picker::new(one, NOW).with_unreadable(unreadable);
    expect_test::expect![[r#"
        resume a session                                                                                                     1/1
        updated    size  br  first prompt                                             id            workspace
             4d   13 KB   1  fix the parser bug in the tokenizer where a trailing c…  a1b2c3d4e5f6  /home/u/projects/parser



        ! badbadbadbad.jsonl:10: malformed entry: the line has no trailing "hash" field
        type to filter  ↑↓ move  Enter resume  Esc close
    "#]]
    .assert_eq(&screen(&mut p, 120, 8));
}

/// The session xcsh is in is marked, `•` left of its age and `(current)` before its
/// prompt, at any width; the other rows are as ever.
#[test]
fn the_picker_marks_the_current_session() {
    let current = PathBuf::from("/home/u/.xcsh/sessions/123456abcdef.jsonl");
    let mut p = Picker::new(sessions(), NOW).with_current(Some(current));
    let mut shown = screen(&mut p, 120, 6);
    shown.push_str(&screen(&mut p, 40, 6));
    expect_test::expect![[r#"
        resume a session                                                                                                     1/3
        updated    size  br  first prompt                                             id            workspace
             3m   800 B   2  add a --json flag to the sessions command                0f9e8d7c6b5a  /home/u/projects/parser
        •    2h  3.2 MB   3  (current) Explain the Parser module                      123456abcdef  /home/u/projects/parser
             4d   13 KB   1  fix the parser bug in the tokenizer where a trailing c…  a1b2c3d4e5f6  /home/u/projects/parser
        type to filter  ↑↓ move  Enter resume  Esc close
        resume a session                     1/3
        updated    size  br  first prompt
             3m   800 B   2  add a --json flag …
        •    2h  3.2 MB   3  (current) Explain …
             4d   13 KB   1  fix the parser bug…
        type to filter  ↑↓ move  Enter resume
    "#]]
    .assert_eq(&shown);
}

#[test]
fn a_narrowed_picker_resumes_the_selected_session() {
    let mut p = Picker::new(sessions(), NOW);
    let mut keys = chars("parsr");
    keys.extend([
        key(KeyCode::Backspace),
        key(KeyCode::Char('e')),
        key(KeyCode::Char('r')),
    ]);
    keys.extend([key(KeyCode::Down), key(KeyCode::Enter)]);
    let got = press(&mut p, &keys);
    assert_eq!(
        got.last(),
        Some(&OverlayOutcome::Act(OverlayAction::Resume(PathBuf::from(
            "/home/u/.xcsh/sessions/a1b2c3d4e5f6.jsonl"
        ))))
    );
    assert_eq!(p.filter(), "parser");
}

/// Esc, Ctrl-C and Ctrl-D close the picker, whatever was typed; `c` and `d` filter.
#[test]
fn esc_ctrl_c_and_ctrl_d_close_the_picker() {
    let ctrl = |c: char| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    let closes: Vec<OverlayOutcome> = [key(KeyCode::Esc), ctrl('c'), ctrl('d')]
        .into_iter()
        .map(|k| {
            let mut p = Picker::new(sessions(), NOW);
            press(&mut p, &chars("cd"));
            assert_eq!(p.filter(), "cd");
            p.on_key(k)
        })
        .collect();
    assert_eq!(closes, vec![OverlayOutcome::Close; 3]);
}

#[test]
fn a_filter_that_matches_nothing_says_so_and_enter_does_nothing() {
    let mut p = Picker::new(sessions(), NOW);
    press(&mut p, &chars("zzz"));
    assert_eq!(p.on_key(key(KeyCode::Enter)), OverlayOutcome::Stay);
    expect_test::expect![[r#"
        resume a session                     0/0
        updated    size  br  first prompt
        no session matches "zzz"

        filter: zzz
    "#]]
    .assert_eq(&screen(&mut p, 40, 5));
}

#[test]
fn a_picker_row_comes_from_a_session_summary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.jsonl");
    std::fs::copy(fixture("plain.jsonl"), &path).unwrap();
    let summary = xcsh_inspect::summarize(&read_session(&path).unwrap());
    assert_eq!(
        PickerRow::from_summary(&summary, 2048),
        PickerRow {
            path: path.clone(),
            id: "b4e531031642".into(),
            first_prompt: "What is the capital of France?".into(),
            size_bytes: 2048,
            branches: 1,
            active_ms: 1_796_011_520_197,
            workspace: "/tmp/tmp.GYbSVtgKYP/plain/work".into(),
        }
    );
}

#[test]
fn ages_and_sizes_are_short() {
    let ages: Vec<String> = [
        -5_000,
        42_000,
        3 * 60_000 + 59_000,
        2 * 3_600_000,
        4 * 86_400_000,
    ]
    .into_iter()
    .map(format_age)
    .collect();
    let sizes: Vec<String> = [512, 12_000, 3_400_000, 5_000_000_000]
        .into_iter()
        .map(format_size)
        .collect();
    assert_eq!(
        (ages, sizes),
        (
            vec![
                "0s".into(),
                "42s".into(),
                "3m".into(),
                "2h".into(),
                "4d".into()
            ],
            vec![
                "512 B".into(),
                "12 KB".into(),
                "3.2 MB".into(),
                "4.7 GB".into()
            ]
        )
    );
}

// ---------------------------------------------------------------- diff

/// A session (the `plain` fixture plus two tool results) that changed `src/lib.rs`
/// and created `notes.md`, then an undo that put `notes.md` back (removed it); the
/// reports' paths relative to the temp dir.
fn two_files() -> (
    tempfile::TempDir,
    Vec<xcsh_inspect::diff::workspace::FileReport>,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.jsonl");
    std::fs::copy(fixture("plain.jsonl"), &path).unwrap();
    let lib = dir.path().join("src/lib.rs");
    let notes = dir.path().join("notes.md");
    std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
    let old = "fn main() {\n    println!(\"hello\");\n}\n";
    let new = "fn main() {\n    println!(\"hello, world\");\n    exit(0);\n}\n";
    std::fs::write(&lib, new).unwrap();
    let (mut w, log) = SessionWriter::open(&path).unwrap();
    let ts = log.entries[0].ts;
    let mut parent = log.leaf();
    for (i, change) in [
        FileChange::new(&lib, Some(old), new),
        FileChange::new(&notes, None, "# notes\n"),
    ]
    .into_iter()
    .enumerate()
    {
        let body = Body::Record(Record::ToolResult(Box::new(ToolResultRecord {
            call_id: CallId(format!("call_{i}")),
            name: "write".into(),
            outcome: ToolOutcome {
                status: ToolStatus::Ok,
                content: "written".into(),
            },
            duration_ms: 1,
            changes: vec![change],
            child: None,
        })));
        parent = w.append(parent, ts, &body).unwrap().0;
    }
    let undo = Body::Record(Record::Undo {
        run: EntryId(1),
        files: vec![notes.clone()],
        note: None,
    });
    w.append(parent, ts, &undo).unwrap();
    w.sync().unwrap();
    drop(w);
    let mut files = xcsh_inspect::diff::workspace::changes(&read_session(&path).unwrap());
    for f in &mut files {
        f.path = f.path.strip_prefix(dir.path()).unwrap().to_path_buf();
    }
    (dir, files)
}

#[test]
fn the_diff_overlay_shows_one_section_per_file_with_the_undo_marks() {
    let (_dir, files) = two_files();
    let mut d = DiffOverlay::new(files);
    let mut shown = screen(&mut d, 120, 30);
    shown.push_str(&screen(&mut d, 40, 9));
    expect_test::expect![[r#"
        diff · file 1/2                                                                                                    10/10
        notes.md — created by #6; reverted by /undo #7
          (reverted: the file is gone again, as before the session)

        src/lib.rs — changed by #5
        @@ -1,3 +1,4 @@
        1 1  fn main() {
        2   -    println!("hello");
          2 +    println!("hello, world");
          3 +    exit(0);
        3 4  }


















        n/p next/prev file  ↑↓ scroll  PgUp/PgDn page  / search  q close
        diff · file 1/2                     7/12
        notes.md — created by #6; reverted by
        /undo #7
          (reverted: the file is gone again, as
        before the session)

        src/lib.rs — changed by #5
        @@ -1,3 +1,4 @@
        n/p next/prev file  ↑↓ scroll
    "#]].assert_eq(&shown);
}

#[test]
fn n_and_p_jump_between_files() {
    let (_dir, files) = two_files();
    let mut d = DiffOverlay::new(files);
    screen(&mut d, 40, 8);
    let mut seen = vec![(d.title(), d.pager().top())];
    for k in ['n', 'n', 'p', 'p'] {
        d.on_key(key(KeyCode::Char(k)));
        seen.push((d.title(), d.pager().top()));
    }
    expect_test::expect![[r#"[("diff · file 1/2", 0), ("diff · file 2/2", 5), ("diff · file 2/2", 5), ("diff · file 1/2", 0), ("diff · file 1/2", 0)]"#]].assert_eq(&format!("{seen:?}"));
}

#[test]
fn a_session_without_changes_says_so() {
    let mut d = DiffOverlay::new(Vec::new());
    expect_test::expect![[r#"
        diff · no files changed              2/2
        the session changed no files (no tool
        result records a change)

        n/p next/prev file  ↑↓ scroll
    "#]]
    .assert_eq(&screen(&mut d, 40, 5));
}

#[test]
fn nothing_panics_at_any_width_from_1_to_40() {
    let (_dir, log) = labelled_session();
    let (_dir2, files) = two_files();
    let mut overlays: Vec<Box<dyn Overlay>> = vec![
        Box::new(Transcript::new(numbered(items(30)))),
        Box::new(nav(log)),
        Box::new(Picker::new(sessions(), NOW)),
        Box::new(Picker::new(sessions(), NOW).with_unreadable(vec!["a: b".into(); 3])),
        Box::new(DiffOverlay::new(files)),
    ];
    for o in &mut overlays {
        for w in 1..=40 {
            for h in [1, 2, 3, 7] {
                screen(o.as_mut(), w, h);
            }
        }
    }
}
