//! xcsh-core: the pure agent state machine, the session log, and the runtime that
//! drives the machine with real providers and tools.

pub mod journal;
pub mod log;
pub mod machine;
pub mod ports;
pub mod provider;
pub mod runtime;
pub mod secrets;
pub mod tools;
