//! xcsh's terminal UI: a view of the runtime's event stream and the session log.
//!
//! Architecture Invariant: nothing here is a source of truth. What the UI shows of
//! the past comes from run events (each one the image of a recorded entry) or from
//! the session log itself; what is transient (a streaming fragment, a spinner, a
//! tool's live output) is held in types named as such (`Live*`, `Transient*`) and
//! never written anywhere. Clearing or resizing the terminal changes only the view.
//!
//! Layout: widgets are pure functions from state to `ratatui` lines or buffers
//! (tested with `TestBackend` snapshots); [`app`] holds the view state and turns keys
//! and run events into actions for the controller (the binary's `interactive`
//! module, which owns runs and the log); [`term`] drives a real terminal (inline
//! viewport, scrollback inserts, overlays on the alternate screen).

pub mod app;
pub mod approval;
pub mod cells;
pub mod complete;
pub mod diffview;
pub mod editor;
pub mod fmt;
pub mod highlight;
pub mod markdown;
pub use xcsh_log::mention;
pub mod overlay;
pub mod pending;
pub mod plan;
pub mod status;
pub mod term;
#[cfg(test)]
pub(crate) mod testkit;
pub mod text;
pub mod theme;
pub mod tool_card;

pub use ratatui::text::Line;
pub use theme::Theme;
