//! The journal: the sans-IO core of a run, between the log and the runtime. It owns
//! the [`Machine`](xcsh_machine::Machine) of one run and every rule of the order in
//! which the log is written, so that the owner task only polls futures and carries
//! out [`Action`]s, and the property tests, replay's tests and the fixture generator
//! ([`Player`], [`synth`]) drive this same code, not a copy of it.
//!
//! [`Journal::on`] takes one [`Happening`] (what the owner observed: a user command,
//! a stream item of a step, a tool call's end, an approval answer, a summary's end,
//! the writer's sync, or an input recorded as it is) and the time, and returns the
//! actions to carry out, in order. Its contract:
//!
//! - **Record then apply**: an input is appended before it is applied; each decision
//!   the machine makes is appended as it is made, in the machine's order.
//! - **Dispatch-order settlement**: tool calls run concurrently, but a call that ended
//!   waits until every call dispatched before it has ended; then their results are
//!   appended and applied in dispatch order (one script, one log).
//! - **One question at a time**: approval questions wait in call order; the next is
//!   asked when the answer to the last one is applied, and a call the machine no
//!   longer waits on (covered by a grant, or interrupted) is skipped.
//! - **Write-ahead**: a decision that starts a model call, a tool or a summary is
//!   followed by [`Action::Sync`] before the action that starts it; once the owner
//!   reports [`Happening::Synced`], the before-images of the calls whose results were
//!   appended before it may go ([`Action::Release`]).
//! - **After the finish**: a steer or follow-up that arrives after the run finished
//!   (the owner drains its closed command channel into `on`) is recorded, ignored by
//!   the machine, and reported undelivered in [`Journal::result`].
//! - **Events**: the [`RunEvent`] of every decision, notice, step end and tool end.
//!
//! Appends are a port ([`Append`]) rather than an action: record-then-apply needs an
//! appended entry's id before the input can be applied (a steer and a step carry
//! their own entry's id; a dispatched call is named by its decision's entry), so an
//! action "append this" whose id came back later would have to suspend the journal
//! half-way through a decision. The port is a plain `&mut dyn Append`: the journal
//! does no IO itself, keeps no clock (time comes with each happening) and makes no
//! ids (the port's writer does), so the same happenings through a port that returns
//! the same ids always make the same entries and actions.

mod events;
mod player;
mod run;
pub mod synth;
#[cfg(test)]
mod tests;

pub use events::{RunEvent, RunResult};
pub use player::{MemoryLog, Player, TimedLog};
pub use run::{Action, Happening, Journal, ToolEnd};

use xcsh_log::{Body, LogError};
use xcsh_machine::EntryId;

/// Where the journal appends: the session writer (stamped with the time by its
/// owner), or a log in memory. Every body goes after the one appended before it
/// (`parent`, the journal's leaf).
pub trait Append {
    /// Appends `body` after `parent`; returns the new entry's id.
    fn append(&mut self, parent: EntryId, body: &Body) -> Result<EntryId, LogError>;
}
