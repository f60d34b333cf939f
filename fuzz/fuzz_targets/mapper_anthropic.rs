//! Fuzzes the Anthropic Messages event mapper with arbitrary event types and data (see
//! `fuzz/src/mapper.rs`). No input may panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xcsh_providers::regress::Protocol;

#[path = "../src/mapper.rs"]
mod mapper;

fuzz_target!(|data: &[u8]| mapper::fuzz(Protocol::Anthropic, data));
