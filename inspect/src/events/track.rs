//! The timeline's step tracking: what a row's step, lane and tool are worked out
//! from ([`Track`]), read from an entry, from the derived index or from a line's
//! envelope, and the running state that works them out ([`Steps`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::convert::Infallible;

use serde::Deserialize;
use xcsh_log::index::{ArchivedIndexData, Kind};
use xcsh_log::{
    Body as EntryBody, DecodeError, Entry, Envelope, Record, memory_record, setting_record,
};
use xcsh_machine::Decision;

use super::Lane;

/// What the timeline's step tracking reads of an entry: the same from the entry
/// ([`track`]), from the index ([`track_at`]) and from a line's envelope
/// ([`track_of`]), so that the step, lane and tool of
/// a row are worked out once ([`Steps::classify`]). `K` is a call id or tool name.
pub(super) enum Track<K> {
    Session,
    Branch,
    /// A prompt or `/compact`: a new run.
    Run,
    /// A label, undo, workspace, steer, follow-up or interrupt.
    User,
    ApprovalAnswer {
        call_id: K,
    },
    /// A call checked before its question that could not succeed: on its step, in
    /// the tools' lane.
    Check {
        call_id: K,
    },
    Step {
        step: u32,
    },
    ToolResult {
        call_id: K,
        name: K,
    },
    CompactionSummary,
    LateEvent {
        step: u32,
    },
    Recovered,
    StepStarted {
        step: u32,
    },
    ToolDispatched {
        step: u32,
        call_id: K,
        name: K,
    },
    /// A synthetic result or an approval, of the tool `name`.
    Tool {
        name: K,
    },
    RunFinished,
    /// Another decision, or an entry of a type this version does not know.
    Machine,
}

/// The step in progress and the calls dispatched in the run in progress (step and
/// tool name of each).
#[derive(Debug)]
pub(super) struct Steps<K> {
    current: Option<u32>,
    calls: HashMap<K, (u32, K)>,
}

impl<K> Default for Steps<K> {
    fn default() -> Steps<K> {
        Steps {
            current: None,
            calls: HashMap::new(),
        }
    }
}

impl<K: Eq + std::hash::Hash + Clone> Steps<K> {
    /// The step, lane and tool of an entry, and what it changes in the tracking.
    pub(super) fn classify(&mut self, track: Track<K>) -> (Option<u32>, Lane, Option<K>) {
        let cur = self.current;
        match track {
            Track::Session => (None, Lane::Machine, None),
            Track::Branch => {
                self.current = None;
                (None, Lane::User, None)
            }
            Track::Run => {
                // A new run: every call of the last one has settled (the map stays
                // as small as one run).
                self.current = None;
                self.calls.clear();
                (None, Lane::User, None)
            }
            Track::User => (cur, Lane::User, None),
            Track::ApprovalAnswer { call_id } => {
                let c = self.calls.get(&call_id).cloned();
                (c.as_ref().map(|c| c.0).or(cur), Lane::User, c.map(|c| c.1))
            }
            Track::Check { call_id } => {
                let c = self.calls.get(&call_id).cloned();
                (c.as_ref().map(|c| c.0).or(cur), Lane::Tools, c.map(|c| c.1))
            }
            Track::Step { step } | Track::LateEvent { step } => (Some(step), Lane::Model, None),
            Track::ToolResult { call_id, name } => {
                let step = self.calls.get(&call_id).map(|c| c.0).or(cur);
                (step, Lane::Tools, Some(name))
            }
            Track::CompactionSummary => (cur, Lane::Model, None),
            Track::Recovered | Track::Machine => (cur, Lane::Machine, None),
            Track::StepStarted { step } => {
                self.current = Some(step);
                (Some(step), Lane::Model, None)
            }
            Track::ToolDispatched {
                step,
                call_id,
                name,
            } => {
                self.calls.insert(call_id, (step, name.clone()));
                (Some(step), Lane::Tools, Some(name))
            }
            Track::Tool { name } => (cur, Lane::Tools, Some(name)),
            Track::RunFinished => {
                self.current = None;
                (cur, Lane::Machine, None)
            }
        }
    }
}

/// What the step tracking reads of `entry`.
pub(super) fn track(entry: &Entry) -> Track<String> {
    match &entry.body {
        EntryBody::Record(r) => match r {
            Record::Session(_) => Track::Session,
            Record::Branch { .. } => Track::Branch,
            // Another agent's record (an import), like an unknown one: no lane of its own.
            Record::Foreign(_) => Track::Machine,
            Record::UserMessage { .. } | Record::Compact { .. } => Track::Run,
            Record::Label { .. }
            | Record::Undo { .. }
            | setting_record!()
            | memory_record!()
            | Record::Steer { .. }
            | Record::FollowUp { .. }
            | Record::Interrupt {} => Track::User,
            Record::CheckFailed { call_id, .. } => Track::Check {
                call_id: call_id.0.clone(),
            },
            Record::ApprovalAnswer { call_id, .. } => Track::ApprovalAnswer {
                call_id: call_id.0.clone(),
            },
            Record::Step(s) => Track::Step { step: s.step.0 },
            Record::ToolResult(t) => Track::ToolResult {
                call_id: t.call_id.0.clone(),
                name: t.name.clone(),
            },
            Record::CompactionSummary { .. } => Track::CompactionSummary,
            Record::LateEvent { step, .. } => Track::LateEvent { step: step.0 },
            Record::Recovered { .. } => Track::Recovered,
        },
        EntryBody::Decision(d) => match d {
            Decision::StepStarted { step, .. } => Track::StepStarted { step: step.0 },
            Decision::ToolDispatched { step, call } => Track::ToolDispatched {
                step: step.0,
                call_id: call.id.0.clone(),
                name: call.name.clone(),
            },
            Decision::SyntheticResult { call, .. } => Track::Tool {
                name: call.name.clone(),
            },
            Decision::Approval { tool, .. } => Track::Tool { name: tool.clone() },
            Decision::RunFinished { .. } => Track::RunFinished,
            Decision::Delivered { .. }
            | Decision::CompactionStarted { .. }
            | Decision::Compacted { .. }
            | Decision::Ignored { .. } => Track::Machine,
        },
        EntryBody::Unknown { .. } => Track::Machine,
    }
}

/// Where [`of_kind`] reads the few fields the tracking needs of an entry whose kind
/// is known: an index's columns, or a line's body through its envelope.
trait Fields<K> {
    /// What stops the reading of a field.
    type Missing;
    /// The step of a `step`, `late_event` or `step_started` entry (`kind`).
    fn step(&self, kind: Kind) -> Result<u32, Self::Missing>;
    /// The call an `approval_answer` answers (or a `check_failed` is of).
    fn answered(&self) -> Result<K, Self::Missing>;
    /// A `tool_result`'s call id and tool.
    fn result(&self) -> Result<(K, K), Self::Missing>;
    /// A `tool_dispatched`'s step, call id and tool.
    fn dispatched(&self) -> Result<(u32, K, K), Self::Missing>;
    /// The tool of a `synthetic_result` or an `approval` (`kind`).
    fn tool(&self, kind: Kind) -> Result<K, Self::Missing>;
}

/// What the step tracking reads of an entry of `kind`, its fields read from `f`: the
/// same as [`track`] of the entry.
fn of_kind<K, F: Fields<K>>(kind: Kind, f: &F) -> Result<Track<K>, F::Missing> {
    Ok(match kind {
        Kind::Session => Track::Session,
        Kind::Branch => Track::Branch,
        Kind::UserMessage | Kind::Compact => Track::Run,
        Kind::Label
        | Kind::Undo
        | Kind::Workspace
        | Kind::Provider
        | Kind::MemoryIndex
        | Kind::MemoryExtraction
        | Kind::MemorySnapshot
        | Kind::MemoryForget
        | Kind::Steer
        | Kind::FollowUp
        | Kind::Interrupt => Track::User,
        Kind::ApprovalAnswer => Track::ApprovalAnswer {
            call_id: f.answered()?,
        },
        Kind::CheckFailed => Track::Check {
            call_id: f.answered()?,
        },
        Kind::Step => Track::Step {
            step: f.step(kind)?,
        },
        Kind::ToolResult => {
            let (call_id, name) = f.result()?;
            Track::ToolResult { call_id, name }
        }
        Kind::CompactionSummary => Track::CompactionSummary,
        Kind::LateEvent => Track::LateEvent {
            step: f.step(kind)?,
        },
        Kind::Recovered => Track::Recovered,
        Kind::StepStarted => Track::StepStarted {
            step: f.step(kind)?,
        },
        Kind::ToolDispatched => {
            let (step, call_id, name) = f.dispatched()?;
            Track::ToolDispatched {
                step,
                call_id,
                name,
            }
        }
        Kind::SyntheticResult | Kind::Approval => Track::Tool {
            name: f.tool(kind)?,
        },
        Kind::RunFinished => Track::RunFinished,
        // Another agent's record (an import), like an unknown one: no lane of its own.
        Kind::Delivered
        | Kind::CompactionStarted
        | Kind::Compacted
        | Kind::Ignored
        | Kind::Foreign
        | Kind::Unknown => Track::Machine,
    })
}

/// The entry at `pos` of an index.
struct At<'d> {
    d: &'d ArchivedIndexData,
    pos: usize,
}

impl<'d> Fields<&'d str> for At<'d> {
    type Missing = Infallible;

    fn step(&self, kind: Kind) -> Result<u32, Infallible> {
        let (d, pos) = (self.d, self.pos);
        Ok(match kind {
            Kind::Step => d.steps[d.aux(pos)].step.to_native(),
            _ => d.aux[pos].to_native(),
        })
    }

    fn answered(&self) -> Result<&'d str, Infallible> {
        Ok(self.d.str(&self.d.calls[self.d.aux(self.pos)].call_id))
    }

    fn result(&self) -> Result<(&'d str, &'d str), Infallible> {
        let t = &self.d.tools[self.d.aux(self.pos)];
        Ok((self.d.str(&t.call_id), self.d.str(&t.name)))
    }

    fn dispatched(&self) -> Result<(u32, &'d str, &'d str), Infallible> {
        let c = &self.d.calls[self.d.aux(self.pos)];
        Ok((
            c.step.to_native(),
            self.d.str(&c.call_id),
            self.d.str(&c.name),
        ))
    }

    fn tool(&self, kind: Kind) -> Result<&'d str, Infallible> {
        let (d, row) = (self.d, self.d.aux(self.pos));
        Ok(match kind {
            Kind::SyntheticResult => d.str(&d.tools[row].name),
            _ => d.str(&d.calls[row].name),
        })
    }
}

/// What the step tracking reads of the entry at `pos` of an index.
pub(super) fn track_at(d: &ArchivedIndexData, pos: usize) -> Track<&str> {
    match of_kind(d.kind(pos), &At { d, pos }) {
        Ok(track) => track,
        Err(never) => match never {},
    }
}

/// The fields of a body the tracking reads (any of them; the rest skipped).
#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool: Option<Cow<'a, str>>,
    step: Option<u32>,
    #[serde(borrow)]
    call: Option<Call<'a>>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    name: Cow<'a, str>,
}

/// A line's body read through its envelope: a step from the front of the body
/// ([`Envelope::step`]), any other field by decoding only the fields of [`Body`].
struct Lazy<'e, 'a>(&'e Envelope<'a>);

impl Lazy<'_, '_> {
    fn body(&self) -> Result<Body<'_>, ()> {
        self.0.data().map_err(drop)
    }
}

impl Fields<String> for Lazy<'_, '_> {
    type Missing = ();

    fn step(&self, _: Kind) -> Result<u32, ()> {
        self.0.step().map_err(drop)
    }

    fn answered(&self) -> Result<String, ()> {
        Ok(self.body()?.call_id.ok_or(())?.into_owned())
    }

    fn result(&self) -> Result<(String, String), ()> {
        let b = self.body()?;
        Ok((
            b.call_id.ok_or(())?.into_owned(),
            b.name.ok_or(())?.into_owned(),
        ))
    }

    fn dispatched(&self) -> Result<(u32, String, String), ()> {
        let b = self.body()?;
        let call = b.call.ok_or(())?;
        Ok((
            b.step.ok_or(())?,
            call.id.into_owned(),
            call.name.into_owned(),
        ))
    }

    fn tool(&self, kind: Kind) -> Result<String, ()> {
        let b = self.body()?;
        let tool = match kind {
            Kind::SyntheticResult => b.call.map(|c| c.name),
            _ => b.tool,
        };
        Ok(tool.ok_or(())?.into_owned())
    }
}

/// What the step tracking reads of a line by its envelope: the same as [`track`] of
/// its entry, with only the fields it reads decoded; a body without them is decoded
/// whole (for its track, or for the decoder's error).
pub(super) fn track_of(env: &Envelope<'_>) -> Result<Track<String>, DecodeError> {
    match of_kind(Kind::named(env.type_name), &Lazy(env)) {
        Ok(track) => Ok(track),
        Err(()) => Ok(track(&env.entry()?)),
    }
}
