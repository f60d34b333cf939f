//! The tool cards of the live area, and the order they go into history: the log's.
//!
//! A card takes its place when its call is dispatched (`tool_dispatched`) or, for a
//! call that never runs, when its synthetic result is recorded, as a resumed session
//! places it (`crate::cells::from_entries`). Parallel calls end in any order; a
//! finished card stays in the live area, showing its result, until every card placed
//! before it has finished too, so history lists them in the log's order and the live
//! view and the resumed one agree. A card asked about and not yet answered has no
//! place: it waits behind the placed ones.

use xcsh_machine::CallId;

use crate::tool_card::{ToolCard, ToolFinish};

/// The live tool cards: `cards[..placed]` in the log's order, then the unplaced ones
/// (asked, not yet dispatched) in the order they were asked.
#[derive(Default)]
pub(super) struct LiveTools {
    cards: Vec<ToolCard>,
    placed: usize,
}

impl LiveTools {
    /// The cards as the live area shows them.
    pub fn iter(&self) -> impl Iterator<Item = &ToolCard> {
        self.cards.iter()
    }

    fn position(&self, call_id: &CallId) -> Option<usize> {
        self.cards.iter().position(|c| c.call_id() == call_id)
    }

    /// The card of `call_id` at its place (after every card placed before it), made
    /// if there is none; its index.
    fn place(&mut self, call_id: &CallId, name: &str, arguments: &str) -> usize {
        match self.position(call_id) {
            Some(i) if i < self.placed => return i,
            Some(i) => {
                let card = self.cards.remove(i);
                self.cards.insert(self.placed, card);
            }
            None => self
                .cards
                .insert(self.placed, ToolCard::new(call_id.clone(), name, arguments)),
        }
        self.placed += 1;
        self.placed - 1
    }

    /// The call waits for the user's approval: its card shows, without a place yet.
    pub fn asked(&mut self, call_id: &CallId, name: &str, arguments: &str) {
        if self.position(call_id).is_none() {
            let mut card = ToolCard::new(call_id.clone(), name, arguments);
            card.ask();
            self.cards.push(card);
        }
    }

    /// The call was dispatched at `now_ms`: its card takes its place.
    pub fn dispatched(&mut self, call_id: &CallId, name: &str, arguments: &str, now_ms: u64) {
        let i = self.place(call_id, name, arguments);
        self.cards[i].start(now_ms);
    }

    /// Live output of a running call.
    pub fn output(&mut self, call_id: &CallId, text: &str) {
        if let Some(card) = self.cards.iter_mut().find(|c| c.call_id() == call_id) {
            card.push_output(text);
        }
    }

    /// The call ended (a synthetic result places its card now, with its
    /// `arguments`). Returns the cards that go into history now: the finished ones
    /// at the front, in order.
    pub fn finished(
        &mut self,
        call_id: &CallId,
        name: &str,
        arguments: &str,
        finish: ToolFinish,
    ) -> Vec<ToolCard> {
        let i = self.place(call_id, name, arguments);
        self.cards[i].finish(finish);
        let done = self.cards[..self.placed]
            .iter()
            .take_while(|c| c.is_finished())
            .count();
        self.placed -= done;
        self.cards.drain(..done).collect()
    }

    /// Every card, in order, for history (the turn is over).
    pub fn drain(&mut self) -> Vec<ToolCard> {
        self.placed = 0;
        std::mem::take(&mut self.cards)
    }
}
