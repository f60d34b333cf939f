//! The provider interface: a model request in, normalized stream events out,
//! cancellable; the faux script player, the three HTTP wire protocols (OpenAI Chat
//! Completions, Anthropic Messages, OpenAI Responses) and cassettes.

pub mod anthropic;
pub mod cassette;
pub mod decode;
pub mod errors;
pub mod faux;
pub mod fields;
pub mod http;
pub mod openai;
pub mod regress;
pub mod responses;
pub mod sse;
#[cfg(test)]
pub(crate) mod testing;

pub use xcsh_ports::{
    BoxFuture, ModelRequest, Provider, StreamCall, StreamItem, StreamSink, Wrapper,
};
