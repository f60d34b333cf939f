//! What an import did with each kind of source record: how many it mapped to xcsh
//! entries and how many it kept as `foreign` entries (nothing is dropped silently).

use std::collections::BTreeMap;
use std::fmt::Write;

/// Per source record kind (e.g. `response_item/message`, `user`), in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub kinds: BTreeMap<String, Counts>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub mapped: u64,
    pub kept: u64,
}

impl Summary {
    pub(crate) fn mapped(&mut self, kind: &str) {
        self.kinds.entry(kind.to_string()).or_default().mapped += 1;
    }

    pub(crate) fn kept(&mut self, kind: &str) {
        self.kinds.entry(kind.to_string()).or_default().kept += 1;
    }

    /// Records of all kinds kept as foreign.
    pub fn kept_total(&self) -> u64 {
        self.kinds.values().map(|c| c.kept).sum()
    }

    pub fn mapped_total(&self) -> u64 {
        self.kinds.values().map(|c| c.mapped).sum()
    }

    /// The table the command prints: one line per kind, then the totals.
    pub fn render(&self) -> String {
        let width = self.kinds.keys().map(|k| k.len()).max().unwrap_or(0).max(6);
        let mut out = format!(
            "{:width$}  {:>6}  {:>12}\n",
            "record", "mapped", "kept foreign"
        );
        for (kind, c) in &self.kinds {
            let _ = writeln!(out, "{kind:width$}  {:>6}  {:>12}", c.mapped, c.kept);
        }
        let _ = writeln!(
            out,
            "{:width$}  {:>6}  {:>12}",
            "total",
            self.mapped_total(),
            self.kept_total()
        );
        out
    }
}
