//! A deliberately broken machine (xcsh-core's test-only `broken-steer` feature: it
//! delivers steers as soon as one tool call settles, mid-step) is caught by the run
//! invariants and shrunk to a script of at most 6 inputs. Run it with
//! `cargo test -p xcsh-proptests --features broken-steer` (scripts/check-broken-machine.sh).
#![cfg(feature = "broken-steer")]

use xcsh_log::read_session;
use xcsh_proptests::{Script, check_invariants, find_failure, play, script};

fn invariants(s: &Script) -> Result<(), String> {
    let played = play(s);
    let log = read_session(&played.path).map_err(|e| e.to_string())?;
    check_invariants(&log)
}

#[test]
fn a_machine_that_delivers_steers_mid_step_is_caught_and_shrunk_to_at_most_6_inputs() {
    let (shrunk, why) = find_failure(script(), &invariants)
        .expect("the invariants catch the machine that delivers steers mid-step");
    let printed = shrunk.to_script();
    println!(
        "{why}\n--- shrunk to {} inputs ---\n{printed}",
        shrunk.inputs()
    );
    assert!(
        why.contains("a message delivered while calls were unsettled")
            || why.contains("a delivered message was not followed by a step"),
        "{why}"
    );
    assert!(
        shrunk.inputs() <= 6,
        "{} inputs:\n{printed}",
        shrunk.inputs()
    );
}
