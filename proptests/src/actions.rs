//! What the world does next, and the proptest strategies that generate it: whole
//! runs of prompts, provider steps (text, 0..n tool calls, usage or none, finish
//! reasons, errors, aborts), tool settlements in any order, approvals, steers,
//! follow-ups, interrupts, compactions, undos, recoveries, late inputs and branches,
//! under small limits.

use std::fmt;

use proptest::prelude::*;
use xcsh_machine::{ApprovalScope, FinishReason, Limits, Permissions, ToolStatus, Verdict};

/// What a generated tool call looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Args {
    /// A call of the read-only tool `echo` with a JSON object.
    Valid,
    /// A call of the mutating tool `write` (it goes through the permission policy).
    Mutating,
    /// `echo` with arguments that are not a JSON object.
    NotAnObject,
    /// A call of a tool that does not exist.
    UnknownTool,
}

impl Args {
    /// The tool name and the argument text this call carries as call `k` of its step.
    pub fn call(self, k: usize) -> (&'static str, String) {
        match self {
            Args::Valid => ("echo", format!("{{\"k\":{k}}}")),
            Args::Mutating => ("write", format!("{{\"k\":{k}}}")),
            Args::NotAnObject => ("echo", "[1".to_string()),
            Args::UnknownTool => ("nope", format!("{{\"k\":{k}}}")),
        }
    }
}

/// How a generated step ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The stream ended normally with this finish reason.
    Completed(FinishReason),
    /// The provider failed (a disconnect).
    Failed,
    /// The provider refused the request as too long for the context.
    Overflow,
    /// The runtime cancelled the stream.
    Aborted,
}

/// A user's answer to an approval question: `y`, `a`, `A` or `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Once,
    Tool,
    Call,
    Deny,
}

impl Answer {
    pub fn verdict_scope(self) -> (Verdict, ApprovalScope) {
        match self {
            Answer::Once => (Verdict::Allow, ApprovalScope::Once),
            Answer::Tool => (Verdict::Allow, ApprovalScope::Tool),
            Answer::Call => (Verdict::Allow, ApprovalScope::Call),
            Answer::Deny => (Verdict::Deny, ApprovalScope::Once),
        }
    }

    /// The key the user presses (the script syntax of `approve`).
    pub fn key(self) -> &'static str {
        match self {
            Answer::Once => "y",
            Answer::Tool => "a",
            Answer::Call => "A",
            Answer::Deny => "n",
        }
    }
}

/// One thing the world does next. [`crate::play`] aims each action at whatever the
/// machine has in flight at that moment, so shrunk failures read as a short script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Prompt,
    Steer,
    FollowUp,
    Interrupt,
    /// `/compact` between runs.
    Compact,
    /// `/undo`: an `undo` entry with its note (ignored during a run).
    Undo,
    /// The streaming step settles (or, with none streaming, a late step arrives).
    Step {
        text: bool,
        calls: Vec<Args>,
        end: End,
        usage: (u64, u64),
    },
    /// The `n`-th (modulo) dispatched, unsettled tool call settles.
    Tool {
        n: usize,
        status: ToolStatus,
    },
    /// A tool result for a call that is not in flight (late or unknown).
    LateTool,
    /// A stream event of a step that already settled.
    LateEvent,
    /// The user answers the `n`-th (modulo) open approval question.
    Approve {
        n: usize,
        answer: Answer,
    },
    /// The check of the call about to be asked about finds that it would fail.
    CheckFails,
    /// The compaction in flight finishes (or fails).
    Summary {
        ok: bool,
    },
    /// The next process finds this run unsettled (a crash) and recovers it.
    Recover,
    /// Continue from the `n`-th (modulo) settled boundary seen so far, on a new
    /// branch (`--at`); only in [`branching_script`].
    Branch {
        n: usize,
    },
}

fn args() -> impl Strategy<Value = Args> {
    prop_oneof![
        6 => Just(Args::Valid),
        3 => Just(Args::Mutating),
        1 => Just(Args::NotAnObject),
        1 => Just(Args::UnknownTool),
    ]
}

fn end() -> impl Strategy<Value = End> {
    prop_oneof![
        10 => Just(End::Completed(FinishReason::ToolCalls)),
        4 => Just(End::Completed(FinishReason::Stop)),
        1 => Just(End::Completed(FinishReason::Length)),
        1 => Just(End::Completed(FinishReason::ContentFilter)),
        1 => Just(End::Completed(FinishReason::Error)),
        1 => Just(End::Failed),
        2 => Just(End::Overflow),
        1 => Just(End::Aborted),
    ]
}

/// A step's reported input and output tokens; (0, 0): no usage reported at all.
fn usage() -> impl Strategy<Value = (u64, u64)> {
    prop_oneof![
        3 => (0u64..3000, 0u64..300),
        1 => Just((0u64, 0u64)),
    ]
}

fn status() -> impl Strategy<Value = ToolStatus> {
    prop_oneof![
        6 => Just(ToolStatus::Ok),
        1 => Just(ToolStatus::Error),
        1 => Just(ToolStatus::Cancelled),
    ]
}

fn answer() -> impl Strategy<Value = Answer> {
    prop_oneof![
        Just(Answer::Once),
        Just(Answer::Tool),
        Just(Answer::Call),
        Just(Answer::Deny),
    ]
}

/// One action of a linear (unbranched) session.
pub fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        2 => Just(Action::Prompt),
        2 => Just(Action::Steer),
        2 => Just(Action::FollowUp),
        1 => Just(Action::Interrupt),
        1 => Just(Action::Compact),
        1 => Just(Action::Undo),
        8 => (any::<bool>(), prop::collection::vec(args(), 0..4), end(), usage())
            .prop_map(|(text, calls, end, usage)| Action::Step { text, calls, end, usage }),
        8 => (0usize..4, status()).prop_map(|(n, status)| Action::Tool { n, status }),
        1 => Just(Action::LateTool),
        1 => Just(Action::LateEvent),
        3 => (0usize..3, answer()).prop_map(|(n, answer)| Action::Approve { n, answer }),
        1 => Just(Action::CheckFails),
        2 => any::<bool>().prop_map(|ok| Action::Summary { ok }),
        1 => Just(Action::Recover),
    ]
}

/// One action of a session that also branches (about one action in 17).
pub fn branching_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        16 => action(),
        1 => (0usize..8).prop_map(|n| Action::Branch { n }),
    ]
}

pub fn permissions() -> impl Strategy<Value = Permissions> {
    prop_oneof![
        Just(Permissions::Ask),
        Just(Permissions::Readonly),
        Just(Permissions::Yolo)
    ]
}

/// Limits small enough that generated runs hit them.
pub fn limits() -> impl Strategy<Value = Limits> {
    (
        1u32..6,
        prop_oneof![Just(0u64), 500u64..8000],
        prop_oneof![Just(0u64), 500u64..3000],
    )
        .prop_map(|(max_steps, max_tokens, compact_at_tokens)| Limits {
            max_steps,
            max_tokens,
            max_output_tokens: 8192,
            compact_at_tokens,
        })
}

/// A generated session: the limits and policy every prompt carries, and the actions.
/// Its `Debug` is [`Script::to_script`], so a failing case prints as a transcript
/// that saves as a transcript test of `machine/test_data/`.
#[derive(Clone, PartialEq, Eq)]
pub struct Script {
    pub limits: Limits,
    pub permissions: Permissions,
    /// The ratio of the usage estimate every prompt carries (0: none, as in runs
    /// recorded before estimates existed).
    pub estimate_bytes_per_token: u32,
    pub actions: Vec<Action>,
}

impl fmt::Debug for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{}", self.to_script())
    }
}

fn script_with(
    action: impl Strategy<Value = Action>,
    len: std::ops::Range<usize>,
) -> impl Strategy<Value = Script> {
    (
        limits(),
        permissions(),
        prop_oneof![Just(0u32), Just(4u32)],
        prop::collection::vec(action, len),
    )
        .prop_map(
            |(limits, permissions, estimate_bytes_per_token, mut actions)| {
                actions.insert(0, Action::Prompt);
                Script {
                    limits,
                    permissions,
                    estimate_bytes_per_token,
                    actions,
                }
            },
        )
}

/// A linear session: a prompt, then up to 40 actions.
pub fn script() -> impl Strategy<Value = Script> {
    script_with(action(), 1..40)
}

/// A session that also continues from earlier boundaries on new branches.
pub fn branching_script() -> impl Strategy<Value = Script> {
    script_with(branching_action(), 1..60)
}
