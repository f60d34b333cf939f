//! A label's name stands for its entry in the views' entry arguments as it does for
//! `--at` and `xcsh fork` (SPEC.md §25.7): `log --leaf`, `export --leaf`, replay's
//! `--leaf` and `--until`, and the `SESSION@ENTRY` of `diff` and `plan`. A name that is no label fails (exit 1) with
//! the session's labels, newest first.

mod support;

use support::env::{Env, fixture, session_id, stderr, stdout};

/// Two runs (entries 0-4, then 5-8), labelled `mark` on 4 and then `other` on 8;
/// the environment and the session's path.
fn labelled() -> (Env, String) {
    let env = Env::new().with_var("NO_COLOR", "1");
    let script = env.script("s.jsonl", &[r#"{"text":"done"}"#]);
    for args in [&["-p", "first"][..], &["--continue", "-p", "second"]] {
        env.ok_script(&script, args);
    }
    let s = env.session().display().to_string();
    env.ok(&["label", &s, "4", "mark"]);
    env.ok(&["label", &s, "#8", "other"]);
    (env, s)
}

/// `text` with the session's path written `S`, its id `ID`, the workspace `WORK`
/// and the time it started `TIME`.
fn masked(env: &Env, s: &str, text: &str) -> String {
    let id = session_id(std::path::Path::new(s));
    let text = text
        .replace(s, "S")
        .replace(&id, "ID")
        .replace(&env.workspace().display().to_string(), "WORK");
    text.lines()
        .map(|l| match l.strip_prefix("- started: ") {
            Some(_) => "- started: TIME\n".to_string(),
            None => format!("{l}\n"),
        })
        .collect()
}

/// The exit code and stderr of `xcsh ARGS`.
fn failure(env: &Env, args: &[&str]) -> (Option<i32>, String) {
    let out = env.run(args);
    (out.status.code(), stderr(&out))
}

/// What a name that is no label of the [`labelled`] session `s` fails with.
fn no_label(s: &str, name: &str) -> (Option<i32>, String) {
    (
        Some(1),
        format!(
            "xcsh: error: no entry or label \"{name}\" in {s}; its labels, newest first: \"other\", \"mark\"\n"
        ),
    )
}

#[test]
fn log_leaf_takes_a_label_name() {
    let (env, s) = labelled();
    let by_name = env.ok(&["log", &s, "--leaf", "mark"]);
    assert_eq!(
        (
            env.ok(&["log", &s, "--leaf", "4"]),
            failure(&env, &["log", &s, "--leaf", "after-fix"]),
            failure(&env, &["log", &s, "--leaf", "99999999999999999999"]),
        ),
        (
            by_name.clone(),
            no_label(&s, "after-fix"),
            (
                Some(2),
                "xcsh: error: `99999999999999999999` is not an entry id (N or #N)\n".to_string()
            ),
        )
    );
    expect_test::expect![[r#"
        session ID in WORK

        ▶ user #1
            first
        ◆ assistant #3 · step 1 · 60 in / 1 out
            done
        ■ run finished #4: completed · 1 step(s) · 61 tokens
        ◇ label #9 on #4: mark
    "#]]
    .assert_eq(&masked(&env, &s, &by_name));
}

#[test]
fn export_leaf_takes_a_label_name() {
    let (env, s) = labelled();
    let md = |leaf: &str| env.ok(&["export", &s, "--format", "md", "--leaf", leaf]);
    let by_name = md("mark");
    assert_eq!(
        (
            md("4"),
            failure(
                &env,
                &["export", &s, "--format", "md", "--leaf", "after-fix"]
            ),
        ),
        (by_name.clone(), no_label(&s, "after-fix"))
    );
    expect_test::expect![[r#"
        # xcsh session ID

        - workspace: `WORK`
        - started: TIME
        - branch: the one ending at entry 4 (1 branch(es) in the session)

        ## Turn 1

        **User** (entry 1):

        > first

        **Assistant** (step 1, entry 3):

        done

        _Run finished: completed, 1 step(s), 61 tokens._

        _Label on entry 4: mark_
    "#]]
    .assert_eq(&masked(&env, &s, &by_name));
}

#[test]
fn diff_sides_take_a_label_name() {
    let (env, s) = labelled();
    let (mark, other) = (format!("{s}@mark"), format!("{s}@other"));
    let by_name = env.run(&["diff", &mark, &other]);
    assert_eq!(
        (
            by_name.status.code(),
            failure(&env, &["diff", &mark, &format!("{s}@after-fix")]),
            failure(&env, &["diff", "nosuch@mark", &other]),
        ),
        (
            Some(1),
            no_label(&s, "after-fix"),
            (
                Some(2),
                "xcsh: error: `nosuch@mark`: `mark` is not an entry id (N or #N)\n".to_string()
            ),
        )
    );
    expect_test::expect![[r#"
        A = S@mark
        B = S@other
        common history: 5 entries up to #4, identical by hash
        first divergence: run 2 prompt (only in B, #5): only B has it
            text: second
            tools: echo, sleep, plan
            limits: Limits { max_steps: 32, max_tokens: 400000, max_output_tokens: 8192, compact_at_tokens: 150000 }

        3 difference(s) in 3 aligned unit(s) (0 equal):
        + run 2 prompt (only in B, #5)
            text: second
            tools: echo, sleep, plan
            limits: Limits { max_steps: 32, max_tokens: 400000, max_output_tokens: 8192, compact_at_tokens: 150000 }
        + run 2 step 1 model (only in B, #7)
            text: done
            calls: 0
            finish: stop
            outcome: completed
            usage: in 63 out 1 cache r 0 w 0
        + run 2 finished (only in B, #8)
            reason: completed
            steps: 1
            tokens: 64
    "#]].assert_eq(&masked(&env, &s, &stdout(&by_name)));
}

#[test]
fn plan_at_a_label_name() {
    let env = Env::new();
    let copy = env.dir.path().join("plan.jsonl");
    std::fs::copy(fixture("plan"), &copy).unwrap();
    let s = copy.display().to_string();
    // 28 ends the second run, on the branch the `--at 14` run left.
    env.ok(&["label", &s, "28", "fixed"]);
    let by_name = env.ok(&["plan", &format!("{s}@fixed")]);
    assert_eq!(
        (
            env.ok(&["plan", &format!("{s}@28")]),
            failure(&env, &["plan", &format!("{s}@after-fix")]),
        ),
        (
            by_name.clone(),
            (
                Some(1),
                format!(
                    "xcsh: error: no entry or label \"after-fix\" in {s}; its labels, newest first: \"fixed\"\n"
                )
            )
        )
    );
    expect_test::expect![[r#"
        plan at entry 28 (from entry 25, call call_2_2): 2 of 3 completed
        [x] Read the failing test
        [x] Fix the parser
        [>] Run the tests
    "#]]
    .assert_eq(&by_name);
}

/// Every entry argument's help says what it takes, in the same words.
#[test]
fn every_entry_argument_says_it_takes_a_label_name() {
    let env = Env::new();
    let without: Vec<&str> = [
        "log", "export", "diff", "plan", "fork", "label", "undo", "run", "replay",
    ]
    .into_iter()
    .filter(|command| {
        !env.ok(&[command, "--help"])
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("`N`, `#N` or a label's name")
    })
    .collect();
    assert_eq!(without, Vec::<&str>::new());
}

/// `xcsh replay --leaf NAME` and `--until NAME` replay to the labelled entry, as
/// its id does; an unknown name lists the labels.
#[test]
fn replay_leaf_and_until_take_a_label_name() {
    let (env, s) = labelled();
    let replay = |args: &[&str]| support::untimed(&env.ok(&[&["replay", &s][..], args].concat()));
    assert_eq!(
        (
            replay(&["--leaf", "mark"]),
            replay(&["--until", "mark"]),
            failure(&env, &["replay", &s, "--until", "after-fix"]),
        ),
        (
            replay(&["--leaf", "4"]),
            replay(&["--until", "#4"]),
            no_label(&s, "after-fix"),
        )
    );
}
