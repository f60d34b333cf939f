//! The session log: entries, the JSONL writer and reader, the branch DAG, and the
//! model-context rebuild. The log is the truth; everything else is derived from it.

pub mod blobs;
mod convert;
mod dag;
pub mod describe;
mod entry;
mod error;
pub mod family;
pub mod index;
pub mod machine_at;
pub mod mention;
mod naming;
pub mod parallel;
pub mod plan;
mod reader;
mod rebuild;
pub mod resume;
mod sanitize;
pub mod secrets;
mod verify;
mod walk;
mod workspace;
mod writer;

pub use convert::*;
pub use dag::Dag;
pub use entry::*;
pub use error::LogError;
pub use naming::{file_session_id, is_child_session, new_session_name, read_header, session_id};
pub use reader::{LogReader, SessionLog, TornTail, read_session};
pub use rebuild::{contribution, rebuild_context};
pub use sanitize::sanitized;
pub use verify::Chain;
pub use walk::jsonl_files_under;
pub use workspace::{recorded_provider, recorded_workspace, recorded_workspace_in};
pub use writer::{BranchEntry, BranchInfo, SessionWriter, lock_info_path};
