//! Runs a script in the syntax of `machine/src/tests.rs` (the machine's
//! [`ScriptReader`]) through a bare machine, the way that module's `Harness` does, and
//! returns the decisions. It lets the property tests check that a printed script says
//! what the generated run did, so that pasting it into a given/when/then test
//! reproduces it.

use xcsh_machine::script::ScriptReader;
use xcsh_machine::{Decision, Effect, Machine};

/// The decisions a script makes, in order, or why a line does not parse.
pub fn run_script(script: &str) -> Result<Vec<Decision>, String> {
    let mut machine = Machine::new();
    let mut reader = ScriptReader::new();
    let mut decisions = Vec::new();
    for line in script.lines() {
        for input in reader.read(line).map_err(|e| e.to_string())? {
            for effect in machine.handle(input) {
                if let Effect::Record(d) = effect {
                    decisions.push(d);
                }
            }
        }
    }
    Ok(decisions)
}
