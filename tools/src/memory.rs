//! Memory (SPEC.md §28): the store of Markdown notes (`store.rs`: list, read,
//! atomic write, forget, and the index a turn's requests carry), the `memory_read`
//! tool over it (`tool.rs`), and what keeps private files out of an extraction's
//! input (`private.rs`).

mod private;
mod store;
mod tool;

pub use private::{PRIVATE_MARKER, Private};
pub use store::{
    BrokenNote, MemoryError, MemoryIndex, MemoryStore, Note, index_text, parse_note, render_note,
};
pub use tool::{MEMORY_READ, MemoryTools};
