//! The app's tests: run events and keys in, history lines and live frames out.
