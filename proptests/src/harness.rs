//! Runs the input lines (`> `) of a transcript of `machine/test_data/` (read by the
//! machine's [`ScriptReader`]) through a bare machine, the way the machine's
//! transcript tests do, and returns the decisions. It lets the property tests check
//! that a printed script says what the generated run did, so that saving it as a
//! transcript test reproduces it.

use xcsh_machine::script::ScriptReader;
use xcsh_machine::{Decision, Effect, Machine};

/// The decisions a script makes, in order, or why a line does not parse.
pub fn run_script(script: &str) -> Result<Vec<Decision>, String> {
    let mut machine = Machine::new();
    let mut reader = ScriptReader::new();
    let mut decisions = Vec::new();
    for line in script.lines().filter_map(|l| l.strip_prefix("> ")) {
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
