//! The tool-executor interface and the built-in test tools (`echo`, `sleep`). The
//! standard tools (read, write, edit, bash, …) implement the same trait.

mod bash;
mod beneath;
pub mod caps;
mod edit;
mod glob;
mod grep;
mod list;
pub mod memory;
mod params;
pub mod plan;
pub mod procs;
mod read;
pub mod sandbox;
pub mod standard;
pub mod testing;
pub mod workspace;
mod write;

pub use standard::{StandardTools, ToolOptions, is_mutating};
pub use xcsh_log::blobs;

pub use xcsh_ports::{
    CANCELLED_NOTE, CallContext, Layer, Layered, MAX_PROGRESS_BYTES, OutputStream, ToolExecutor,
    ToolProgress, ToolSpec,
};
