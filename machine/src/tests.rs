//! Data-driven given/when/then tests: a compact script of inputs in (the language of
//! [`crate::script`]), the whole transcript of effects out, compared with
//! `expect![[…]]`. A test that starts from a common state takes it from a named given
//! (`prompted`, `echo_running`, …: each checks the transcript that reaches it), so
//! that its own transcript shows only what it is about.

use expect_test::{Expect, expect};

use super::*;
use crate::script::ScriptReader;

struct Harness {
    machine: Machine,
    reader: ScriptReader,
    out: String,
}

/// The configuration of the approval tests that write only.
const ASK_TO_WRITE: &str = "config tools=write mutating=write permissions=ask";

impl Harness {
    fn new() -> Harness {
        Harness {
            machine: Machine::new(),
            reader: ScriptReader::new(),
            out: String::new(),
        }
    }

    /// A harness that has read `setup`: lines that make no input (`config`, `usage`).
    fn with(setup: &str) -> Harness {
        let mut h = Harness::new();
        h.run(setup);
        assert_eq!(h.out, "", "a setup makes no input");
        h
    }

    /// Feeds each line of `script` to the machine: the line, then its effects, go into
    /// the transcript. A `step` line's stream events are fed silently before its end.
    fn run(&mut self, script: &str) {
        for line in script.lines() {
            let mut inputs = self.reader.read(line).unwrap_or_else(|e| panic!("{e}"));
            let Some(shown) = inputs.pop() else {
                continue;
            };
            for input in inputs {
                let silent = self.machine.handle(input);
                // Only text notices come out of streaming; they are not decisions.
                assert!(
                    silent.iter().all(|e| matches!(e, Effect::Notify(_))),
                    "{silent:?}"
                );
            }
            self.out.push_str(&format!("> {}\n", line.trim()));
            for effect in self.machine.handle(shown) {
                self.out.push_str("  ");
                self.out.push_str(&render(&effect));
                self.out.push('\n');
            }
        }
    }

    /// Feeds `script` and compares the transcript it made with `expect`; the next
    /// check starts a new transcript.
    fn check(&mut self, script: &str, expect: Expect) -> &mut Harness {
        self.run(script);
        // Context hashes make transcripts unreadable; shorten them to 8 hex digits.
        expect.assert_eq(&shorten_hashes(&std::mem::take(&mut self.out)));
        self
    }

    /// Feeds the stages of a given in order, each checked like [`Harness::check`].
    fn given(mut self, stages: &[(&str, Expect)]) -> Harness {
        for (script, expect) in stages {
            self.run(script);
            expect.assert_eq(&shorten_hashes(&std::mem::take(&mut self.out)));
        }
        self
    }

    /// Given: `prompt go` has started step 1.
    fn prompted(self) -> Harness {
        self.given(&ECHO_RUN[..1])
    }

    /// Given: step 1 of `prompt go` asked for one `echo`, which is running (`c11`).
    fn echo_running(self) -> Harness {
        self.given(&ECHO_RUN[..2])
    }

    /// Given: step 1's `echo` settled (`one`) and step 2 is streaming.
    fn echo_settled(self) -> Harness {
        self.given(&ECHO_RUN[..3])
    }

    /// Given: step 2 asked for one `echo` too, which is running (`c21`).
    fn second_echo_running(self) -> Harness {
        self.given(&ECHO_RUN)
    }

    /// Given: step 2's `echo` settled (`two`), and the provider refused step 3 as too
    /// long: the machine compacts.
    fn step_3_refused(self) -> Harness {
        self.second_echo_running().given(&STEP_3_REFUSED)
    }

    /// Given: step 1 of `prompt read the file` asked to read `a` (`c11`).
    fn reading_a(self) -> Harness {
        self.given(&READING_A)
    }

    /// Given ([`ASK_TO_WRITE`]): step 1 of `prompt go` asked to write `a` (`c11`),
    /// and the user is asked.
    fn asked_to_write_a() -> Harness {
        Harness::with(ASK_TO_WRITE)
            .prompted()
            .given(&ASKED_TO_WRITE_A)
    }
}

/// `prompt go`, then one `echo` a step: each stage's lines and the transcript they make.
static ECHO_RUN: [(&str, Expect); 4] = [
    (
        "prompt go",
        expect![[r#"
            > prompt go
              record step_started {"context_hash":"17ec0cb7","messages":1,"step":1}
              call_model step=1
        "#]],
    ),
    (
        "step 1 calls=echo finish=tool_calls",
        expect![[r#"
            > step 1 calls=echo finish=tool_calls
              record tool_dispatched {"call":{"arguments":"{}","id":"c11","name":"echo"},"step":1}
              execute c11 echo
        "#]],
    ),
    (
        "tool c11 ok one",
        expect![[r#"
            > tool c11 ok one
              record step_started {"context_hash":"1e73472d","messages":3,"step":2}
              call_model step=2
        "#]],
    ),
    (
        "step 2 calls=echo finish=tool_calls",
        expect![[r#"
            > step 2 calls=echo finish=tool_calls
              record tool_dispatched {"call":{"arguments":"{}","id":"c21","name":"echo"},"step":2}
              execute c21 echo
        "#]],
    ),
];

static STEP_3_REFUSED: [(&str, Expect); 1] = [(
    "tool c21 ok two
     end 3 overflow",
    expect![[r#"
        > tool c21 ok two
          record step_started {"context_hash":"2a3dab5c","messages":5,"step":3}
          call_model step=3
        > end 3 overflow
          record compaction_started {"first_kept":3,"tokens_before":5}
          summarize upto=3
    "#]],
)];

static READING_A: [(&str, Expect); 1] = [(
    r#"prompt read the file
       step 1 calls=read:{"path":"a"} finish=tool_calls"#,
    expect![[r#"
        > prompt read the file
          record step_started {"context_hash":"fc0ae1af","messages":1,"step":1}
          call_model step=1
        > step 1 calls=read:{"path":"a"} finish=tool_calls
          record tool_dispatched {"call":{"arguments":"{\"path\":\"a\"}","id":"c11","name":"read"},"step":1}
          execute c11 read
    "#]],
)];

static ASKED_TO_WRITE_A: [(&str, Expect); 1] = [(
    r#"step 1 calls=write:{"path":"a"} finish=tool_calls"#,
    expect![[r#"
        > step 1 calls=write:{"path":"a"} finish=tool_calls
          ask_approval c11 write
    "#]],
)];

fn render(effect: &Effect) -> String {
    match effect {
        Effect::Record(d) => {
            let json = serde_json::to_value(d).unwrap();
            format!("record {} {}", json["type"].as_str().unwrap(), json["data"])
        }
        Effect::CallModel { step } => format!("call_model step={step}"),
        Effect::ExecuteTool { call } => format!("execute {} {}", call.id, call.name),
        Effect::AskApproval { call } => format!("ask_approval {} {}", call.id, call.name),
        Effect::CancelModel { step } => format!("cancel_model step={step}"),
        Effect::CancelTool { call_id } => format!("cancel_tool {call_id}"),
        Effect::Summarize { upto } => format!("summarize upto={upto}"),
        Effect::CancelSummarize => "cancel_summarize".into(),
        Effect::Notify(n) => format!("notify {n:?}"),
    }
}

/// A test without a given: `script` from a new machine.
fn check(script: &str, expect: Expect) {
    Harness::new().check(script, expect);
}

fn shorten_hashes(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(pos) = rest.find("\"context_hash\":\"") {
        let start = pos + "\"context_hash\":\"".len();
        out.push_str(&rest[..start + 8]);
        rest = &rest[start + 64..];
    }
    out.push_str(rest);
    out
}

#[test]
fn plain_answer_finishes_completed() {
    check(
        "prompt hi
         delta 1 Hel
         step 1 text=lo finish=stop usage=10/2",
        expect![[r#"
            > prompt hi
              record step_started {"context_hash":"49f2f268","messages":1,"step":1}
              call_model step=1
            > delta 1 Hel
              notify TextDelta(Delta { step: StepNo(1), text: "Hel" })
            > step 1 text=lo finish=stop usage=10/2
              record run_finished {"reason":{"kind":"completed"},"steps":1,"usage":{"input_tokens":10,"output_tokens":2}}
        "#]],
    );
}

#[test]
fn tool_round_dispatches_every_call_then_starts_next_step() {
    check(
        r#"prompt read two files
           step 1 calls=read:{"path":"a"},read:{"path":"b"} finish=tool_calls usage=100/20
           tool c12 ok B
           tool c11 ok A
           step 2 text=done finish=stop usage=150/5"#,
        expect![[r#"
            > prompt read two files
              record step_started {"context_hash":"990f1708","messages":1,"step":1}
              call_model step=1
            > step 1 calls=read:{"path":"a"},read:{"path":"b"} finish=tool_calls usage=100/20
              record tool_dispatched {"call":{"arguments":"{\"path\":\"a\"}","id":"c11","name":"read"},"step":1}
              execute c11 read
              record tool_dispatched {"call":{"arguments":"{\"path\":\"b\"}","id":"c12","name":"read"},"step":1}
              execute c12 read
            > tool c12 ok B
            > tool c11 ok A
              record step_started {"context_hash":"7ac70e29","messages":4,"step":2}
              call_model step=2
            > step 2 text=done finish=stop usage=150/5
              record run_finished {"reason":{"kind":"completed"},"steps":2,"usage":{"input_tokens":250,"output_tokens":25}}
        "#]],
    );
}

#[test]
fn invalid_arguments_and_unknown_tools_get_error_results_without_running() {
    Harness::new().prompted().check(
        r#"step 1 calls=echo:[1],nope:{},echo:{"x":1} finish=tool_calls
           tool c13 ok fine
           step 2 text=ok finish=stop"#,
        expect![[r#"
            > step 1 calls=echo:[1],nope:{},echo:{"x":1} finish=tool_calls
              record synthetic_result {"call":{"arguments":"[1]","id":"c11","name":"echo"},"content":"error: the arguments of `echo` are not a JSON object (they are an array); the call was not run","reason":"invalid_arguments"}
              record synthetic_result {"call":{"arguments":"{}","id":"c12","name":"nope"},"content":"error: there is no tool named `nope` (available: echo, read); the call was not run","reason":"unknown_tool"}
              record tool_dispatched {"call":{"arguments":"{\"x\":1}","id":"c13","name":"echo"},"step":1}
              execute c13 echo
            > tool c13 ok fine
              record step_started {"context_hash":"4fbbf13b","messages":5,"step":2}
              call_model step=2
            > step 2 text=ok finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":2,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

#[test]
fn steer_during_streaming_waits_for_the_steps_tools_then_grants_a_fresh_window() {
    check(
        "config max_steps=2
         prompt start
         delta 1 work
         steer also check b
         step 1 calls=echo,echo finish=tool_calls
         tool c11 ok 1
         tool c12 ok 2
         step 2 calls=echo finish=tool_calls
         tool c21 ok 3
         step 3 calls=echo finish=tool_calls
         tool c31 ok 4",
        expect![[r#"
            > prompt start
              record step_started {"context_hash":"d26bc4e7","messages":1,"step":1}
              call_model step=1
            > delta 1 work
              notify TextDelta(Delta { step: StepNo(1), text: "work" })
            > steer also check b
              notify Queued { origin: Steer, text: "also check b" }
            > step 1 calls=echo,echo finish=tool_calls
              record tool_dispatched {"call":{"arguments":"{}","id":"c11","name":"echo"},"step":1}
              execute c11 echo
              record tool_dispatched {"call":{"arguments":"{}","id":"c12","name":"echo"},"step":1}
              execute c12 echo
            > tool c11 ok 1
            > tool c12 ok 2
              record delivered {"origin":"steer","queued":2,"text":"also check b"}
              record step_started {"context_hash":"b897aa00","messages":5,"step":2}
              call_model step=2
            > step 2 calls=echo finish=tool_calls
              record tool_dispatched {"call":{"arguments":"{}","id":"c21","name":"echo"},"step":2}
              execute c21 echo
            > tool c21 ok 3
              record step_started {"context_hash":"50176b81","messages":7,"step":3}
              call_model step=3
            > step 3 calls=echo finish=tool_calls
              record tool_dispatched {"call":{"arguments":"{}","id":"c31","name":"echo"},"step":3}
              execute c31 echo
            > tool c31 ok 4
              record run_finished {"reason":{"kind":"max_steps","limit":2},"steps":3,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

#[test]
fn follow_up_is_delivered_only_when_the_run_would_finish_and_after_steers() {
    check(
        "prompt start
         follow then do c
         steer first do b
         follow and d
         step 1 text=x finish=stop
         step 2 text=y finish=stop
         step 3 text=z finish=stop
         step 4 text=w finish=stop",
        expect![[r#"
            > prompt start
              record step_started {"context_hash":"d26bc4e7","messages":1,"step":1}
              call_model step=1
            > follow then do c
              notify Queued { origin: FollowUp, text: "then do c" }
            > steer first do b
              notify Queued { origin: Steer, text: "first do b" }
            > follow and d
              notify Queued { origin: FollowUp, text: "and d" }
            > step 1 text=x finish=stop
              record delivered {"origin":"steer","queued":3,"text":"first do b"}
              record step_started {"context_hash":"176568ed","messages":3,"step":2}
              call_model step=2
            > step 2 text=y finish=stop
              record delivered {"origin":"follow_up","queued":2,"text":"then do c"}
              record step_started {"context_hash":"fba1717b","messages":5,"step":3}
              call_model step=3
            > step 3 text=z finish=stop
              record delivered {"origin":"follow_up","queued":4,"text":"and d"}
              record step_started {"context_hash":"06281f19","messages":7,"step":4}
              call_model step=4
            > step 4 text=w finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":4,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

#[test]
fn spend_budget_stops_between_steps_and_reports_undelivered_messages() {
    Harness::with(
        "config max_tokens=1000
         usage 1 900/50",
    )
    .echo_running().check(
        "follow later
         tool c11 ok done
         step 2 calls=echo finish=tool_calls usage=990/20
         tool c21 ok done",
        expect![[r#"
            > follow later
              notify Queued { origin: FollowUp, text: "later" }
            > tool c11 ok done
              record step_started {"context_hash":"2722d55d","messages":3,"step":2}
              call_model step=2
            > step 2 calls=echo finish=tool_calls usage=990/20
              record tool_dispatched {"call":{"arguments":"{}","id":"c21","name":"echo"},"step":2}
              execute c21 echo
            > tool c21 ok done
              record run_finished {"reason":{"kind":"max_tokens","limit":1000,"spent":1960},"steps":2,"undelivered":[3],"usage":{"input_tokens":1890,"output_tokens":70}}
        "#]],
    );
}

#[test]
fn a_final_answer_that_crosses_the_budget_still_completes() {
    Harness::with("config max_tokens=100").prompted().check(
        "step 1 text=answer finish=stop usage=200/50",
        expect![[r#"
            > step 1 text=answer finish=stop usage=200/50
              record run_finished {"reason":{"kind":"completed"},"steps":1,"usage":{"input_tokens":200,"output_tokens":50}}
        "#]],
    );
}

#[test]
fn output_limit_fails_the_truncated_calls_and_stops() {
    Harness::new().prompted().check(
        r#"step 1 calls=echo:{"a":"tru finish=length usage=10/8192"#,
        expect![[r#"
            > step 1 calls=echo:{"a":"tru finish=length usage=10/8192
              record synthetic_result {"call":{"arguments":"{\"a\":\"tru","id":"c11","name":"echo"},"content":"error: the response hit its output limit, so the arguments of `echo` may be truncated; the call was not run","reason":"output_limit"}
              record run_finished {"reason":{"kind":"output_limit"},"steps":1,"usage":{"input_tokens":10,"output_tokens":8192}}
        "#]],
    );
}

#[test]
fn content_filter_stops_with_its_own_reason() {
    Harness::new().prompted().check(
        "step 1 text=sorry finish=content_filter",
        expect![[r#"
            > step 1 text=sorry finish=content_filter
              record run_finished {"reason":{"kind":"content_filter"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

#[test]
fn provider_error_keeps_the_partial_prose_and_stops() {
    Harness::new().prompted().check(
        "delta 1 half an ans
         end 1 failed
         steer too late",
        expect![[r#"
            > delta 1 half an ans
              notify TextDelta(Delta { step: StepNo(1), text: "half an ans" })
            > end 1 failed
              record run_finished {"reason":{"error":{"kind":"disconnected","message":"connection reset after 12 bytes"},"kind":"provider_error"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
            > steer too late
              record ignored {"reason":"no_run_in_progress"}
        "#]],
    );
}

#[test]
fn interrupt_during_streaming_cancels_the_call_and_settles_once() {
    Harness::new().prompted().check(
        "delta 1 thinking
         interrupt
         interrupt
         delta 1 more
         end 1 aborted
         end 1 aborted
         tool c11 ok late",
        expect![[r#"
            > delta 1 thinking
              notify TextDelta(Delta { step: StepNo(1), text: "thinking" })
            > interrupt
              cancel_model step=1
            > interrupt
              record ignored {"reason":"already_interrupting"}
            > delta 1 more
              notify TextDelta(Delta { step: StepNo(1), text: "more" })
            > end 1 aborted
              record run_finished {"reason":{"kind":"interrupted"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
            > end 1 aborted
              record ignored {"reason":"late_stream_event"}
            > tool c11 ok late
              record ignored {"reason":"late_tool_result"}
        "#]],
    );
}

#[test]
fn interrupt_after_the_stream_completed_does_not_run_its_tools() {
    Harness::new().prompted().check(
        "interrupt
         step 1 calls=echo finish=tool_calls",
        expect![[r#"
            > interrupt
              cancel_model step=1
            > step 1 calls=echo finish=tool_calls
              record synthetic_result {"call":{"arguments":"{}","id":"c11","name":"echo"},"content":"error: the run was interrupted before `echo` could run; the call was not run","reason":"interrupted"}
              record run_finished {"reason":{"kind":"interrupted"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

#[test]
fn interrupt_during_tools_cancels_each_and_waits_for_their_settlement() {
    Harness::new().prompted().check(
        "step 1 calls=echo,echo finish=tool_calls
         steer pending
         interrupt
         tool c11 ok finished before the cancel
         tool c12 cancelled cancelled: side effects it already had were not undone
         tool c12 ok duplicate",
        expect![[r#"
            > step 1 calls=echo,echo finish=tool_calls
              record tool_dispatched {"call":{"arguments":"{}","id":"c11","name":"echo"},"step":1}
              execute c11 echo
              record tool_dispatched {"call":{"arguments":"{}","id":"c12","name":"echo"},"step":1}
              execute c12 echo
            > steer pending
              notify Queued { origin: Steer, text: "pending" }
            > interrupt
              cancel_tool c11
              cancel_tool c12
            > tool c11 ok finished before the cancel
            > tool c12 cancelled cancelled: side effects it already had were not undone
              record run_finished {"reason":{"kind":"interrupted"},"steps":1,"undelivered":[3],"usage":{"input_tokens":0,"output_tokens":0}}
            > tool c12 ok duplicate
              record ignored {"reason":"late_tool_result"}
        "#]],
    );
}

#[test]
fn inputs_without_a_run_are_ignored_with_a_reason() {
    check(
        "steer hello
         interrupt
         recover
         prompt go
         prompt again
         step 1 text=a finish=stop
         delta 1 late
         end 1 completed",
        expect![[r#"
            > steer hello
              record ignored {"reason":"no_run_in_progress"}
            > interrupt
              record ignored {"reason":"no_run_in_progress"}
            > recover
              record ignored {"reason":"no_run_in_progress"}
            > prompt go
              record step_started {"context_hash":"17ec0cb7","messages":1,"step":1}
              call_model step=1
            > prompt again
              record ignored {"reason":"run_in_progress"}
            > step 1 text=a finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
            > delta 1 late
              record ignored {"reason":"late_stream_event"}
            > end 1 completed
              record ignored {"reason":"late_stream_event"}
        "#]],
    );
}

#[test]
fn compaction_runs_after_a_tool_step_over_the_threshold_when_there_is_a_middle() {
    Harness::with(
        "config compact_at=1000
         usage 1 1500/10
         usage 2 1600/10",
    )
    .second_echo_running().check(
        "tool c21 ok two
         summary the user asked to go; step 1 echoed one
         step 3 text=done finish=stop usage=300/5",
        expect![[r#"
            > tool c21 ok two
              record compaction_started {"first_kept":3,"tokens_before":1600}
              summarize upto=3
            > summary the user asked to go; step 1 echoed one
              record compacted {"first_kept":3,"summary":"the user asked to go; step 1 echoed one","tokens_after":12,"tokens_before":1600}
              record step_started {"context_hash":"0506dc3f","messages":3,"step":3}
              call_model step=3
            > step 3 text=done finish=stop usage=300/5
              record run_finished {"reason":{"kind":"completed"},"steps":3,"usage":{"input_tokens":3400,"output_tokens":25}}
        "#]],
    );
}

#[test]
fn no_compaction_after_a_step_without_tools_or_without_a_middle() {
    Harness::with(
        "config compact_at=1000
         usage 1 1500/10",
    )
    .echo_settled().check(
        "step 2 text=done finish=stop usage=1600/10",
        expect![[r#"
            > step 2 text=done finish=stop usage=1600/10
              record run_finished {"reason":{"kind":"completed"},"steps":2,"usage":{"input_tokens":3100,"output_tokens":20}}
        "#]],
    );
}

#[test]
fn a_failed_compaction_lets_the_run_go_on() {
    Harness::with(
        "config compact_at=10
         usage 1 50/1
         usage 2 60/1",
    )
    .second_echo_running().check(
        "tool c21 ok two
         summary-failed
         step 3 text=ok finish=stop",
        expect![[r#"
            > tool c21 ok two
              record compaction_started {"first_kept":3,"tokens_before":60}
              summarize upto=3
            > summary-failed
              record step_started {"context_hash":"2a3dab5c","messages":5,"step":3}
              call_model step=3
            > step 3 text=ok finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":3,"usage":{"input_tokens":110,"output_tokens":2}}
        "#]],
    );
}

/// A server that reports no usage (llama.cpp's): each step counts an estimate of its
/// request and output (4 bytes a token), marked `estimated`, and the estimate
/// triggers compaction like a reported count would.
#[test]
fn a_step_without_usage_counts_an_estimate_that_can_trigger_compaction() {
    Harness::with("config estimate=4 compact_at=30").reading_a().check(
        r#"tool c11 ok 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789
           step 2 calls=read:{"path":"b"} finish=tool_calls
           tool c21 ok short
           summary read a
           step 3 text=done finish=stop usage=20/2"#,
        expect![[r#"
            > tool c11 ok 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789
              record step_started {"context_hash":"fc3377ff","messages":3,"step":2}
              call_model step=2
            > step 2 calls=read:{"path":"b"} finish=tool_calls
              record tool_dispatched {"call":{"arguments":"{\"path\":\"b\"}","id":"c21","name":"read"},"step":2}
              execute c21 read
            > tool c21 ok short
              record compaction_started {"first_kept":3,"tokens_before":33}
              summarize upto=3
            > summary read a
              record compacted {"first_kept":3,"summary":"read a","tokens_after":7,"tokens_before":33}
              record step_started {"context_hash":"b41facf5","messages":3,"step":3}
              call_model step=3
            > step 3 text=done finish=stop usage=20/2
              record run_finished {"reason":{"kind":"completed"},"steps":3,"usage":{"estimated":true,"input_tokens":57,"output_tokens":10}}
        "#]],
    );
}

/// A run recorded before estimates existed (no ratio in its configuration) counts
/// what the provider reported, nothing: it replays as it ran.
#[test]
fn a_run_without_a_ratio_makes_no_estimate() {
    Harness::new().reading_a().check(
        "tool c11 ok 0123456789
         step 2 text=done finish=stop",
        expect![[r#"
            > tool c11 ok 0123456789
              record step_started {"context_hash":"acb9298e","messages":3,"step":2}
              call_model step=2
            > step 2 text=done finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":2,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

/// A refusal of the request as too long for the context: the machine compacts (it is
/// a decision) and retries the step once over the compacted context (a decision too);
/// the retry takes the refused step's place in the window.
#[test]
fn a_context_overflow_compacts_and_retries_the_step_once() {
    Harness::with(
        "config max_steps=3
         usage 1 100/10
         usage 2 200/10",
    )
    .step_3_refused().check(
        "         summary the user said go; echo ran twice
         step 4 text=done finish=stop usage=50/5",
        expect![[r#"
            > summary the user said go; echo ran twice
              record compacted {"first_kept":3,"summary":"the user said go; echo ran twice","tokens_after":11,"tokens_before":5}
              record step_started {"context_hash":"33c3febb","messages":3,"step":4}
              call_model step=4
            > step 4 text=done finish=stop usage=50/5
              record run_finished {"reason":{"kind":"completed"},"steps":4,"usage":{"input_tokens":350,"output_tokens":25}}
        "#]],
    );
}

/// A second refusal (the retry's) stops the run, as does a refusal with nothing to
/// compact; each with its own reason.
#[test]
fn a_refused_retry_or_nothing_to_compact_stops_with_context_overflow() {
    Harness::new().prompted().check(
        "end 1 overflow
         prompt again
         step 1 calls=echo finish=tool_calls usage=100/10
         tool c11 ok one
         step 2 calls=echo finish=tool_calls usage=100/10
         tool c21 ok two
         end 3 overflow
         summary they said go and again
         end 4 overflow",
        expect![[r#"
            > end 1 overflow
              record run_finished {"reason":{"compacted":false,"error":{"kind":"context_overflow","message":"prompt is too long: 9000 tokens > 8192 maximum"},"kind":"context_overflow"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
            > prompt again
              record step_started {"context_hash":"00496e37","messages":2,"step":1}
              call_model step=1
            > step 1 calls=echo finish=tool_calls usage=100/10
              record tool_dispatched {"call":{"arguments":"{}","id":"c11","name":"echo"},"step":1}
              execute c11 echo
            > tool c11 ok one
              record step_started {"context_hash":"94439c01","messages":4,"step":2}
              call_model step=2
            > step 2 calls=echo finish=tool_calls usage=100/10
              record tool_dispatched {"call":{"arguments":"{}","id":"c21","name":"echo"},"step":2}
              execute c21 echo
            > tool c21 ok two
              record step_started {"context_hash":"fc61fe89","messages":6,"step":3}
              call_model step=3
            > end 3 overflow
              record compaction_started {"first_kept":4,"tokens_before":7}
              summarize upto=4
            > summary they said go and again
              record compacted {"first_kept":4,"summary":"they said go and again","tokens_after":8,"tokens_before":7}
              record step_started {"context_hash":"3b5d1c68","messages":3,"step":4}
              call_model step=4
            > end 4 overflow
              record run_finished {"reason":{"compacted":true,"error":{"kind":"context_overflow","message":"prompt is too long: 9000 tokens > 8192 maximum"},"kind":"context_overflow"},"steps":4,"usage":{"input_tokens":200,"output_tokens":20}}
        "#]],
    );
}

/// The summary of an overflow's compaction fails: the step is not retried over the
/// same context; the run stops with the summary's error (`context_overflow` when the
/// summary request was refused as too long too).
#[test]
fn a_failed_summary_after_an_overflow_stops_the_run() {
    Harness::with(
        "usage 1 100/10
         usage 2 100/10",
    )
    .step_3_refused().check(
        "         summary-failed",
        expect![[r#"
            > summary-failed
              record run_finished {"reason":{"error":{"kind":"http","message":"503"},"kind":"provider_error"},"steps":3,"usage":{"input_tokens":200,"output_tokens":20}}
        "#]],
    );
}

#[test]
fn recover_settles_in_flight_tools_as_lost_and_finishes_crashed() {
    Harness::new().echo_running().check(
        "recover",
        expect![[r#"
            > recover
              record synthetic_result {"call":{"arguments":"{}","id":"c11","name":"echo"},"content":"error: the process ended while `echo` was running; whether it ran, and what it changed, is unknown","reason":"lost"}
              record run_finished {"reason":{"kind":"crashed"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

#[test]
fn yolo_records_the_policy_approval_of_each_mutating_call() {
    Harness::with("config tools=echo,write mutating=write permissions=yolo").prompted().check(
        r#"step 1 calls=echo,write:{"path":"a"} finish=tool_calls"#,
        expect![[r#"
            > step 1 calls=echo,write:{"path":"a"} finish=tool_calls
              record tool_dispatched {"call":{"arguments":"{}","id":"c11","name":"echo"},"step":1}
              execute c11 echo
              record approval {"by":"policy_yolo","call_id":"c12","tool":"write","verdict":"allow"}
              record tool_dispatched {"call":{"arguments":"{\"path\":\"a\"}","id":"c12","name":"write"},"step":1}
              execute c12 write
        "#]],
    );
}

#[test]
fn readonly_denies_mutations_with_a_result_and_the_run_goes_on() {
    Harness::with("config tools=echo,write mutating=write permissions=readonly").prompted().check(
        r#"step 1 calls=write:{"path":"a"} finish=tool_calls
           step 2 text=ok finish=stop"#,
        expect![[r#"
            > step 1 calls=write:{"path":"a"} finish=tool_calls
              record approval {"by":"policy_readonly","call_id":"c11","tool":"write","verdict":"deny"}
              record synthetic_result {"call":{"arguments":"{\"path\":\"a\"}","id":"c11","name":"write"},"content":"denied: this session is read-only (--permissions readonly), so `write` was not run","reason":"denied"}
              record step_started {"context_hash":"2c915f0d","messages":3,"step":2}
              call_model step=2
            > step 2 text=ok finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":2,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

#[test]
fn ask_waits_for_the_user_and_a_tool_grant_covers_later_calls() {
    Harness::with("config tools=echo,write mutating=write permissions=ask").prompted().check(
        r#"step 1 calls=write:{"path":"a"},echo,write:{"path":"b"} finish=tool_calls
           tool c12 ok echoed
           approve c11 a
           tool c11 ok wrote a
           tool c13 ok wrote b
           step 2 calls=write:{"path":"c"} finish=tool_calls"#,
        expect![[r#"
            > step 1 calls=write:{"path":"a"},echo,write:{"path":"b"} finish=tool_calls
              ask_approval c11 write
              record tool_dispatched {"call":{"arguments":"{}","id":"c12","name":"echo"},"step":1}
              execute c12 echo
              ask_approval c13 write
            > tool c12 ok echoed
            > approve c11 a
              record tool_dispatched {"call":{"arguments":"{\"path\":\"a\"}","id":"c11","name":"write"},"step":1}
              execute c11 write
              record approval {"by":"tool_grant","call_id":"c13","tool":"write","verdict":"allow"}
              record tool_dispatched {"call":{"arguments":"{\"path\":\"b\"}","id":"c13","name":"write"},"step":1}
              execute c13 write
            > tool c11 ok wrote a
            > tool c13 ok wrote b
              record step_started {"context_hash":"420b114a","messages":5,"step":2}
              call_model step=2
            > step 2 calls=write:{"path":"c"} finish=tool_calls
              record approval {"by":"tool_grant","call_id":"c21","tool":"write","verdict":"allow"}
              record tool_dispatched {"call":{"arguments":"{\"path\":\"c\"}","id":"c21","name":"write"},"step":2}
              execute c21 write
        "#]],
    );
}

#[test]
fn an_exact_call_grant_covers_only_that_call_and_a_denial_is_a_result() {
    Harness::asked_to_write_a().check(
        r#"approve c11 A
           tool c11 ok wrote
           step 2 calls=write:{"path":"a"},write:{"path":"b"} finish=tool_calls
           approve c22 n
           approve c22 y"#,
        expect![[r#"
            > approve c11 A
              record tool_dispatched {"call":{"arguments":"{\"path\":\"a\"}","id":"c11","name":"write"},"step":1}
              execute c11 write
            > tool c11 ok wrote
              record step_started {"context_hash":"e29ca780","messages":3,"step":2}
              call_model step=2
            > step 2 calls=write:{"path":"a"},write:{"path":"b"} finish=tool_calls
              record approval {"by":"call_grant","call_id":"c21","tool":"write","verdict":"allow"}
              record tool_dispatched {"call":{"arguments":"{\"path\":\"a\"}","id":"c21","name":"write"},"step":2}
              execute c21 write
              ask_approval c22 write
            > approve c22 n
              record synthetic_result {"call":{"arguments":"{\"path\":\"b\"}","id":"c22","name":"write"},"content":"denied: the user did not allow `write`; the call was not run","reason":"denied"}
            > approve c22 y
              record ignored {"reason":"late_approval"}
        "#]],
    );
}

#[test]
fn interrupt_while_waiting_for_approval_settles_the_question_as_not_run() {
    Harness::asked_to_write_a().check(
        "interrupt
         approve c11 y",
        expect![[r#"
            > interrupt
              record synthetic_result {"call":{"arguments":"{\"path\":\"a\"}","id":"c11","name":"write"},"content":"error: the run was interrupted before `write` could run; the call was not run","reason":"interrupted"}
              record run_finished {"reason":{"kind":"interrupted"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
            > approve c11 y
              record ignored {"reason":"late_approval"}
        "#]],
    );
}

#[test]
fn a_finish_reason_of_error_is_a_provider_error_and_its_calls_are_dropped() {
    Harness::new().prompted().check(
        "step 1 text=partial calls=echo finish=error",
        expect![[r#"
            > step 1 text=partial calls=echo finish=error
              record run_finished {"reason":{"error":{"kind":"api","message":"the provider ended the response with finish reason `error`"},"kind":"provider_error"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

#[test]
fn a_duplicate_call_id_in_one_response_is_not_run() {
    Harness::new().prompted().check(
        "step 1 dup=2 finish=tool_calls",
        expect![[r#"
            > step 1 dup=2 finish=tool_calls
              record tool_dispatched {"call":{"arguments":"{\"n\":0}","id":"same","name":"echo"},"step":1}
              execute same echo
              record synthetic_result {"call":{"arguments":"{\"n\":1}","id":"same","name":"echo"},"content":"error: another call of this response already has the id `same`; this one was not run","reason":"duplicate_id"}
        "#]],
    );
}

#[test]
fn no_compaction_when_the_run_is_about_to_stop_for_a_limit() {
    Harness::with(
        "config compact_at=1000 max_steps=2
         usage 1 1500/10
         usage 2 1600/10",
    )
    .second_echo_running().check(
        "tool c21 ok two",
        expect![[r#"
            > tool c21 ok two
              record run_finished {"reason":{"kind":"max_steps","limit":2},"steps":2,"usage":{"input_tokens":3100,"output_tokens":20}}
        "#]],
    );
}

/// An `/undo` between runs is an input: its note joins the context (the next step's
/// request carries it, before the next prompt), with no decision; during a run it is
/// ignored.
#[test]
fn an_undo_between_runs_tells_the_model_with_the_next_request() {
    check(
        "prompt write it
         step 1 text=written finish=stop
         undo [Note: reverted f.txt]
         prompt what now?
         undo [Note: too late]
         step 1 text=ok finish=stop",
        expect![[r#"
            > prompt write it
              record step_started {"context_hash":"eaa5db54","messages":1,"step":1}
              call_model step=1
            > step 1 text=written finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
            > undo [Note: reverted f.txt]
            > prompt what now?
              record step_started {"context_hash":"13052d8c","messages":4,"step":1}
              call_model step=1
            > undo [Note: too late]
              record ignored {"reason":"run_in_progress"}
            > step 1 text=ok finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

#[test]
fn a_forced_compaction_between_runs_summarizes_and_finishes() {
    let mut h = Harness::new();
    h.check(
        "compact",
        expect![[r#"
            > compact
              record ignored {"reason":"nothing_to_compact"}
        "#]],
    );
    h.echo_settled().check(
        "step 2 text=done finish=stop
         compact
         summary the user said go; echo ran
         prompt again",
        expect![[r#"
            > step 2 text=done finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":2,"usage":{"input_tokens":0,"output_tokens":0}}
            > compact
              record compaction_started {"first_kept":3,"tokens_before":4}
              summarize upto=3
            > summary the user said go; echo ran
              record compacted {"first_kept":3,"summary":"the user said go; echo ran","tokens_after":8,"tokens_before":4}
              record run_finished {"reason":{"kind":"completed"},"steps":0,"usage":{"input_tokens":0,"output_tokens":0}}
            > prompt again
              record step_started {"context_hash":"dbcae5c2","messages":3,"step":1}
              call_model step=1
        "#]],
    );
}

#[test]
fn arguments_that_are_not_an_object_are_described_in_xcshs_own_words() {
    let described: Vec<String> = [
        "{\"path\":\"a\"}",
        "[1]",
        "\"text\"",
        "true",
        "null",
        "-3",
        "{\"path\":",
        "{path}",
        "{} trailing",
    ]
    .iter()
    .map(|text| format!("{text} -> {:?}", not_an_object(text)))
    .collect();
    expect![[r#"
        {"path":"a"} -> None
        [1] -> Some("they are an array")
        "text" -> Some("they are a string")
        true -> Some("they are a boolean")
        null -> Some("they are null")
        -3 -> Some("they are a number")
        {"path": -> Some("the JSON text ends early")
        {path} -> Some("they are not valid JSON")
        {} trailing -> Some("they are not valid JSON")"#]]
    .assert_eq(&described.join("\n"));
}

#[test]
fn every_stream_event_kind_is_its_serialized_tag_and_kinds_lists_them_all() {
    let text = String::new;
    let events = [
        StreamEvent::TextDelta { text: text() },
        StreamEvent::ReasoningDelta { text: text() },
        StreamEvent::ReasoningSignature { signature: text() },
        StreamEvent::ToolCallStart {
            index: 0,
            id: CallId(text()),
            name: text(),
        },
        StreamEvent::ToolCallDelta {
            index: 0,
            arguments: text(),
        },
        StreamEvent::ToolCallEnd { index: 0 },
        StreamEvent::Usage {
            usage: Usage::default(),
        },
        StreamEvent::Finish {
            reason: FinishReason::Stop,
        },
        StreamEvent::Retrying {
            attempt: 1,
            reason: text(),
            delay_ms: 0,
        },
        StreamEvent::Skipped { event_type: text() },
        StreamEvent::Restarted { reason: text() },
        StreamEvent::ReasoningBlockStart {},
        StreamEvent::ReasoningRedacted { data: text() },
        StreamEvent::OutputLimitExceeded {
            max_output_tokens: 1,
            output_bytes: 1,
        },
    ];
    let tags: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_value(e).expect("an event serializes")["kind"].to_string())
        .collect();
    let kinds: Vec<String> = events.iter().map(|e| format!("\"{}\"", e.kind())).collect();
    assert_eq!(tags, kinds);
    let listed: Vec<String> = StreamEvent::KINDS
        .iter()
        .map(|k| format!("\"{k}\""))
        .collect();
    assert_eq!(kinds, listed);
}

#[test]
fn a_denial_with_a_message_tells_the_model_what_the_user_said_and_an_allow_ignores_it() {
    Harness::with(ASK_TO_WRITE).prompted().check(
        r#"step 1 calls=write:{"path":"a"},write:{"path":"b"} finish=tool_calls
           approve c11 n use a new file instead
           approve c12 y this message is ignored
           tool c12 ok wrote b
           step 2 text=done finish=stop"#,
        expect![[r#"
            > step 1 calls=write:{"path":"a"},write:{"path":"b"} finish=tool_calls
              ask_approval c11 write
              ask_approval c12 write
            > approve c11 n use a new file instead
              record synthetic_result {"call":{"arguments":"{\"path\":\"a\"}","id":"c11","name":"write"},"content":"denied: the user did not allow `write`; the call was not run. The user says: use a new file instead","reason":"denied"}
            > approve c12 y this message is ignored
              record tool_dispatched {"call":{"arguments":"{\"path\":\"b\"}","id":"c12","name":"write"},"step":1}
              execute c12 write
            > tool c12 ok wrote b
              record step_started {"context_hash":"1c65c074","messages":4,"step":2}
              call_model step=2
            > step 2 text=done finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":2,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

#[test]
fn a_retry_of_the_streaming_step_is_a_notice_and_a_retry_of_another_step_is_late() {
    check(
        "prompt hi
         retry 1 2 1500 http 429 Too Many Requests
         retry 7 2 1500 http 503
         step 1 text=ok finish=stop",
        expect![[r#"
            > prompt hi
              record step_started {"context_hash":"49f2f268","messages":1,"step":1}
              call_model step=1
            > retry 1 2 1500 http 429 Too Many Requests
              notify Retrying { step: StepNo(1), attempt: 2, delay_ms: 1500, reason: "http 429 Too Many Requests" }
            > retry 7 2 1500 http 503
              record ignored {"reason":"late_stream_event"}
            > step 1 text=ok finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
        "#]],
    );
}

/// A memory index between runs is held for the run the next prompt starts: every
/// step of that run mixes it into its context hash (a run without one keeps the
/// plain hash); during a run it is ignored; the run after carries none unless a new
/// index came first (SPEC.md §28.4).
#[test]
fn a_memory_index_is_mixed_into_every_step_of_the_run_it_precedes() {
    check(
        "prompt go
         step 1 text=plain finish=stop
         memory 1111
         prompt go
         step 1 calls=echo:{} finish=tool_calls
         memory 2222
         tool c11 ok one
         step 2 text=done finish=stop
         prompt go",
        expect![[r#"
            > prompt go
              record step_started {"context_hash":"17ec0cb7","messages":1,"step":1}
              call_model step=1
            > step 1 text=plain finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":1,"usage":{"input_tokens":0,"output_tokens":0}}
            > memory 1111
            > prompt go
              record step_started {"context_hash":"c13a270b","messages":3,"step":1}
              call_model step=1
            > step 1 calls=echo:{} finish=tool_calls
              record tool_dispatched {"call":{"arguments":"{}","id":"c11","name":"echo"},"step":1}
              execute c11 echo
            > memory 2222
              record ignored {"reason":"run_in_progress"}
            > tool c11 ok one
              record step_started {"context_hash":"02c12b33","messages":5,"step":2}
              call_model step=2
            > step 2 text=done finish=stop
              record run_finished {"reason":{"kind":"completed"},"steps":2,"usage":{"input_tokens":0,"output_tokens":0}}
            > prompt go
              record step_started {"context_hash":"2a534e03","messages":7,"step":1}
              call_model step=1
        "#]],
    );
}

/// The hash of a step with a memory index is blake3 of the context's running hash,
/// `memory_index:` and the index's hash; the machine holds the index until a
/// prompt takes it, and a later index replaces an earlier one.
#[test]
fn the_memory_index_hash_is_the_context_hash_mixed_with_the_index() {
    let mut m = Machine::new();
    let _ = m.handle(Input::MemoryIndex {
        hash: "aaaa".into(),
    });
    let _ = m.handle(Input::MemoryIndex {
        hash: "bbbb".into(),
    });
    assert_eq!(m.memory_index(), Some("bbbb"));
    let effects = m.handle(Input::Prompt {
        text: "go".into(),
        config: RunConfig {
            limits: Limits::default(),
            tools: Vec::new(),
            mutating: Vec::new(),
            permissions: Permissions::Yolo,
            estimate_bytes_per_token: 0,
            sandbox: None,
        },
    });
    assert_eq!(m.memory_index(), None);
    let mut plain = Context::default();
    plain.push(
        None,
        Message::User {
            origin: UserOrigin::Prompt,
            text: "go".into(),
        },
    );
    let mut h = blake3::Hasher::new();
    h.update(blake3::Hash::from_hex(plain.hash_hex()).unwrap().as_bytes());
    h.update(b"memory_index:bbbb");
    assert_eq!(
        effects,
        vec![
            Effect::Record(Decision::StepStarted {
                step: StepNo(1),
                messages: 1,
                context_hash: h.finalize().to_hex().to_string(),
            }),
            Effect::CallModel { step: StepNo(1) },
        ]
    );
}

mod delegation;
