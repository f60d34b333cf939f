//! `Recorder`: drives a machine and a real log writer synchronously, recording each
//! input before applying it and each decision as it is made, exactly as the runtime
//! does but without tasks, IO of providers or a clock. Tests, property tests and
//! simulations use it to produce real logs from scripted inputs.

use chrono::{DateTime, TimeDelta, Utc};

use super::convert::RecordedInput;
use super::entry::{Body, Record};
use super::error::LogError;
use super::writer::SessionWriter;
use crate::machine::{Effect, EntryId, Input, Machine};

pub struct Recorder {
    pub machine: Machine,
    pub writer: SessionWriter,
    pub leaf: EntryId,
    ts: DateTime<Utc>,
}

impl Recorder {
    /// Records after `leaf`; timestamps start at `ts` and advance 1 ms per entry.
    pub fn new(
        machine: Machine,
        writer: SessionWriter,
        leaf: EntryId,
        ts: DateTime<Utc>,
    ) -> Recorder {
        Recorder {
            machine,
            writer,
            leaf,
            ts,
        }
    }

    fn append(&mut self, body: &Body) -> Result<EntryId, LogError> {
        self.ts += TimeDelta::milliseconds(1);
        let (id, _) = self.writer.append(self.leaf, self.ts, body)?;
        self.leaf = id;
        Ok(id)
    }

    /// Records `record` and applies its inputs; records the decisions they make and
    /// returns every effect. A `step` record of the step that is streaming has its
    /// events applied first and its `message` filled from the machine's assembly,
    /// as the runtime does; any other record is written first, then applied.
    pub fn record(&mut self, mut record: Record) -> Result<Vec<Effect>, LogError> {
        let mut effects = Vec::new();
        let streaming_step = if let crate::machine::Phase::Streaming(s) = self.machine.phase() {
            Some(s.step)
        } else {
            None
        };
        if let Record::Step(step) = &mut record
            && streaming_step == Some(step.step)
        {
            for e in &step.events {
                effects.extend(self.machine.handle(Input::Stream {
                    step: step.step,
                    event: e.event.clone(),
                }));
            }
            step.message = self.machine.step_message(&step.outcome).unwrap_or_default();
            self.record_decisions(&effects)?;
            let id = self.append(&Body::Record(record.clone()))?;
            let end = RecordedInput::of(id, record).into_iter().flatten().last();
            let more = end
                .map(|input| self.machine.handle(input))
                .unwrap_or_default();
            self.record_decisions(&more)?;
            effects.extend(more);
            return Ok(effects);
        }
        let id = self.append(&Body::Record(record.clone()))?;
        for input in RecordedInput::of(id, record).into_iter().flatten() {
            let made = self.machine.handle(input);
            self.record_decisions(&made)?;
            effects.extend(made);
        }
        Ok(effects)
    }

    fn record_decisions(&mut self, effects: &[Effect]) -> Result<(), LogError> {
        for effect in effects {
            if let Effect::Record(d) = effect {
                self.append(&Body::Decision(d.clone()))?;
            }
        }
        Ok(())
    }
}
