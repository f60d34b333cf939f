//! The machine and the log hold under generated runs: settle-once, nothing after
//! finish, steers and follow-ups in order at boundaries, limits, replay, serde round
//! trip, context rebuild. Cases: 256 by default, `PROPTEST_CASES` for more.

use proptest::prelude::*;
use xcsh_core::log::{Entry, read_session, rebuild_context};
use xcsh_proptests::{Action, action, check_invariants, limits, permissions, play};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(256),
        ..ProptestConfig::default()
    }
}

fn script() -> impl Strategy<Value = Vec<Action>> {
    prop::collection::vec(action(), 1..40).prop_map(|mut v| {
        v.insert(0, Action::Prompt);
        v
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn runs_keep_the_invariants(limits in limits(), permissions in permissions(), actions in script()) {
        let played = play(limits, permissions, &actions);
        let log = read_session(&played.path).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_invariants(&log).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn replay_of_the_written_log_re_makes_every_decision(limits in limits(), permissions in permissions(), actions in script()) {
        let played = play(limits, permissions, &actions);
        let log = read_session(&played.path).map_err(|e| TestCaseError::fail(e.to_string()))?;
        if let Err(e) = xcsh_replay::replay_branch(&log, log.leaf()) {
            return Err(TestCaseError::fail(format!("{e}: {e:?}")));
        }
    }

    #[test]
    fn every_entry_round_trips_byte_for_byte(limits in limits(), permissions in permissions(), actions in script()) {
        let played = play(limits, permissions, &actions);
        let text = std::fs::read_to_string(&played.path).unwrap();
        let mut hashes = std::collections::HashMap::new();
        for line in text.lines() {
            let entry = Entry::decode(line).unwrap();
            let parent_hash = entry.parent.map(|p| hashes[&p]);
            let (again, hash) = Entry::encode(entry.id, entry.parent, parent_hash.as_ref(), entry.ts, &entry.body);
            prop_assert_eq!(std::str::from_utf8(&again).unwrap(), format!("{line}\n"));
            hashes.insert(entry.id, hash);
        }
    }

    #[test]
    fn the_context_rebuilt_from_the_log_is_the_machines(limits in limits(), permissions in permissions(), actions in script()) {
        let played = play(limits, permissions, &actions);
        let log = read_session(&played.path).unwrap();
        let rebuilt = rebuild_context(&log, log.leaf()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(rebuilt.as_slice(), played.machine.context().items());
    }
}
