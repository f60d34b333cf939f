//! (filled by helper "input")
