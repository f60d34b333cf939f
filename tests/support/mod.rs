//! Test support shared by the end-to-end tests of the real binary.

#![allow(dead_code)]

pub mod env;
pub mod mock_server;
pub mod sse;
pub mod tmux;
