//! Full-screen overlays on the alternate screen (filled by helper "overlays").
