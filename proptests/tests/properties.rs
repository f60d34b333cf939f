//! The machine and the log hold under generated runs: settle-once, nothing after
//! finish, steers and follow-ups in order at boundaries, limits, replay of every
//! branch, byte-for-byte serde round trip, an acyclic DAG with every parent present,
//! and the context rebuilt at every settled entry equal to the live one. Cases: 256
//! per property by default, `PROPTEST_CASES` for more. A failure prints its shrunk
//! script, ready to paste into a given/when/then test of core/src/machine/tests.rs.
#![cfg(not(feature = "broken-steer"))]

use std::collections::{BTreeSet, HashMap};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use xcsh_core::log::{Body, Dag, Entry, SessionLog, read_session, rebuild_context};
use xcsh_core::machine::{Context, Decision, EntryId, StopReason};
use xcsh_core::runtime::rebuild_machine;
use xcsh_proptests::{
    Played, Script, branching_script, check_invariants, config, play, run_script, script,
};

fn read(played: &Played) -> Result<SessionLog, TestCaseError> {
    let log = read_session(&played.path).map_err(|e| fail(played, &e.to_string()))?;
    if log.torn_tail.is_some() || !log.unknown.is_empty() {
        return Err(fail(played, "the written log has findings"));
    }
    Ok(log)
}

/// A failure that shows the script to paste into a unit test.
fn fail(played: &Played, why: &str) -> TestCaseError {
    TestCaseError::fail(format!(
        "{why}\n--- the script (core/src/machine/tests.rs syntax) ---\n{}\n---",
        played.script
    ))
}

/// Decisions without the parts a printed script cannot reproduce: entry ids (the
/// script numbers its entries differently) and, when a failed step's streamed usage
/// was left out of the script, the usage of `run_finished`.
fn comparable(decisions: Vec<Decision>, lossy: bool) -> Vec<Decision> {
    decisions
        .into_iter()
        .filter(|d| !matches!(d, Decision::Ignored { .. }))
        .map(|mut d| {
            match &mut d {
                Decision::Delivered { queued, .. } => *queued = EntryId(0),
                Decision::CompactionStarted { first_kept, .. }
                | Decision::Compacted { first_kept, .. } => *first_kept = EntryId(0),
                Decision::RunFinished {
                    undelivered, usage, ..
                } => {
                    undelivered.iter_mut().for_each(|e| *e = EntryId(0));
                    if lossy {
                        *usage = Default::default();
                    }
                }
                Decision::StepStarted { .. }
                | Decision::ToolDispatched { .. }
                | Decision::Approval { .. }
                | Decision::SyntheticResult { .. }
                | Decision::Ignored { .. } => {}
            }
            d
        })
        .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn runs_keep_the_invariants(s in script()) {
        let played = play(&s);
        let log = read(&played)?;
        check_invariants(&log).map_err(|e| fail(&played, &e))?;
    }

    #[test]
    fn branched_sessions_keep_the_invariants_on_every_path(s in branching_script()) {
        let played = play(&s);
        let log = read(&played)?;
        check_invariants(&log).map_err(|e| fail(&played, &e))?;
    }

    #[test]
    fn replay_of_every_branch_re_makes_every_decision(s in branching_script()) {
        let played = play(&s);
        let log = read(&played)?;
        for leaf in Dag::from_log(&log).leaves() {
            if let Err(e) = xcsh_replay::replay_branch(&log, leaf) {
                return Err(fail(&played, &format!("replay of the branch ending at {leaf}: {e}: {e:?}")));
            }
        }
    }

    #[test]
    fn every_entry_round_trips_byte_for_byte(s in branching_script()) {
        let played = play(&s);
        let text = std::fs::read_to_string(&played.path).unwrap();
        let mut hashes = HashMap::new();
        for line in text.lines() {
            let entry = Entry::decode(line).map_err(|e| fail(&played, &e.to_string()))?;
            let parent_hash = entry.parent.map(|p| hashes[&p]);
            prop_assert!(Entry::verify(line.as_bytes(), parent_hash.as_ref()).unwrap());
            let (again, hash) = Entry::encode(entry.id, entry.parent, parent_hash.as_ref(), entry.ts, &entry.body);
            prop_assert_eq!(std::str::from_utf8(&again).unwrap(), format!("{line}\n"));
            prop_assert_eq!(hash, entry.hash);
            hashes.insert(entry.id, hash);
        }
    }

    #[test]
    fn the_dag_is_acyclic_with_every_parent_present_and_its_leaves_are_the_branch_tips(s in branching_script()) {
        let played = play(&s);
        let log = read(&played)?;
        let dag = Dag::from_log(&log);
        prop_assert!(dag.is_acyclic());
        prop_assert_eq!(dag.len(), log.entries.len());
        let mut seen = BTreeSet::new();
        for entry in &log.entries {
            match entry.parent {
                None => prop_assert_eq!(entry.id, EntryId(0), "only the header has no parent"),
                Some(p) => prop_assert!(seen.contains(&p), "the parent {} of {} comes earlier", p, entry.id),
            }
            prop_assert_eq!(dag.parent(entry.id), entry.parent);
            seen.insert(entry.id);
        }
        let parents: BTreeSet<EntryId> = log.entries.iter().filter_map(|e| e.parent).collect();
        let tips: Vec<EntryId> = log.entries.iter().map(|e| e.id).filter(|id| !parents.contains(id)).collect();
        prop_assert_eq!(dag.leaves(), tips.clone());
        for leaf in tips {
            let path = dag.path_to_root(leaf).map_err(|e| fail(&played, &e.to_string()))?;
            prop_assert_eq!(path.first(), Some(&EntryId(0)));
            prop_assert_eq!(path.last(), Some(&leaf));
        }
    }

    #[test]
    fn the_context_rebuilt_at_every_settled_entry_is_the_live_context(s in branching_script()) {
        let played = play(&s);
        let log = read(&played)?;
        for (leaf, live) in &played.states {
            let rebuilt = rebuild_context(&log, *leaf).map_err(|e| fail(&played, &e.to_string()))?;
            if rebuilt.as_slice() != live.context().items() {
                return Err(fail(&played, &format!(
                    "at entry {leaf} the rebuilt context differs from the live one:\nrebuilt {rebuilt:#?}\nlive {:#?}",
                    live.context().items()
                )));
            }
            // Resuming there (the runtime's rebuild) gives the same machine.
            let (resumed, boundary) = rebuild_machine(&log, *leaf).map_err(|e| fail(&played, &e.to_string()))?;
            prop_assert_eq!(resumed.phase(), live.phase(), "phase at {}", leaf);
            prop_assert_eq!(resumed.context(), live.context(), "context at {}", leaf);
            prop_assert_eq!(resumed.pending(), live.pending(), "pending at {}", leaf);
            prop_assert_eq!(resumed.run(), live.run(), "run at {}", leaf);
            if !live.is_running() {
                prop_assert_eq!(boundary, Some(*leaf), "{} is a settled boundary", leaf);
            }
        }
    }

    #[test]
    fn every_step_started_names_the_context_rebuilt_at_its_entry(s in branching_script()) {
        let played = play(&s);
        let log = read(&played)?;
        for entry in &log.entries {
            if let Body::Decision(Decision::StepStarted { messages, context_hash, .. }) = &entry.body {
                let rebuilt = rebuild_context(&log, entry.id).map_err(|e| fail(&played, &e.to_string()))?;
                let context = Context::from_items(rebuilt);
                prop_assert_eq!(
                    (context.len(), context.hash_hex()),
                    (*messages as usize, context_hash.clone()),
                    "step_started {}", entry.id
                );
            }
        }
    }

    #[test]
    fn the_printed_script_re_makes_the_logged_decisions(s in script()) {
        let played = play(&s);
        let log = read(&played)?;
        let lossy = played.script.contains("# lost:");
        let logged: Vec<Decision> = log.entries.iter().filter_map(|e| match &e.body {
            Body::Decision(d) => Some(d.clone()),
            _ => None,
        }).collect();
        let scripted = run_script(&played.script).map_err(|e| fail(&played, &e))?;
        prop_assert_eq!(comparable(scripted, lossy), comparable(logged, lossy));
        prop_assert_eq!(&s.to_script(), &played.script);
    }
}

/// The generator reaches every decision type and every stop reason the machine can
/// make from these inputs, so that the properties above are not vacuous.
#[test]
fn the_generated_runs_reach_every_decision_and_stop_reason() {
    let mut runner = TestRunner::deterministic();
    let mut decisions = BTreeSet::new();
    let mut reasons = BTreeSet::new();
    for _ in 0..512 {
        let s: Script = branching_script().new_tree(&mut runner).unwrap().current();
        let played = play(&s);
        let log = read_session(&played.path).unwrap();
        for entry in &log.entries {
            if let Body::Decision(d) = &entry.body {
                decisions.insert(d.type_name());
                if let Decision::RunFinished { reason, .. } = d {
                    let kind = serde_json::to_value(reason).unwrap()["kind"].clone();
                    reasons.insert(kind.as_str().unwrap().to_string());
                }
            }
        }
    }
    assert_eq!(decisions, Decision::TYPE_NAMES.into_iter().collect());
    let all = [
        StopReason::Completed,
        StopReason::MaxSteps { limit: 1 },
        StopReason::MaxTokens { limit: 1, spent: 1 },
        StopReason::OutputLimit,
        StopReason::ContentFilter,
        StopReason::Interrupted,
        StopReason::ProviderError {
            error: xcsh_proptests::disconnect(),
        },
        StopReason::Crashed,
    ]
    .map(|r| {
        serde_json::to_value(r).unwrap()["kind"]
            .as_str()
            .unwrap()
            .to_string()
    });
    assert_eq!(reasons, all.into_iter().collect());
}
