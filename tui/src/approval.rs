//! (filled by helper "widgets")
