//! xcsh-inspect: views of session logs for a person who needs to understand what an
//! agent did: the branch tree, the conversation of a branch, the event timeline,
//! usage and timing stats, diffs between branches or sessions, the integrity and
//! ordering checker, and exports. `fork` and `label` are the only writers here: a fork
//! writes a new file, a label goes through the core's `SessionWriter`.

pub mod check;
mod common;
pub mod diff;
mod error;
pub mod events;
pub mod export;
mod family;
pub mod fork;
pub mod log;
pub mod plan;
mod source;
pub mod stats;
mod style;
mod summary;
pub mod terminal;
pub mod tree;

#[cfg(test)]
mod testkit;

#[cfg(test)]
mod golden;

#[cfg(test)]
mod indexed_tests;

#[cfg(test)]
mod family_tests;

pub use common::{
    branch_path, one_line, parse_entry_spec, resolve_entry, resolve_entry_at, resolve_entry_in,
    split_entry_spec,
};
pub use error::InspectError;
pub use family::opened_in;
pub use source::{Shapes, Source, Streamed, Visit};
pub use style::Style;
pub use summary::{
    SessionSummary, family_order, family_order_opened, sessions_table, summarize,
    summarize_indexed, summarize_path,
};
