//! (filled by helper "widgets")

pub mod fmt;
