//! A denial with the user's message ("n with a message") replays clean, through the
//! whole-log replayer and the streamed one, and replay compares the message: the same
//! log without it diverges at the denial.

use std::sync::Arc;

use xcsh_log::{Body, Record, read_session};
use xcsh_machine::{Limits, Permissions, StopReason};
use xcsh_providers::BoxFuture;
use xcsh_providers::faux::FauxProvider;
use xcsh_replay::{Outcome, ReplayOptions};
use xcsh_runtime::{
    ApprovalAnswer, ApprovalRequest, Approver, RunOptions, SessionTarget, Task, run_agent,
};
use xcsh_tools::StandardTools;

struct DenyWith(&'static str);

impl Approver for DenyWith {
    fn decide(&self, _request: ApprovalRequest) -> BoxFuture<ApprovalAnswer> {
        let answer = ApprovalAnswer::deny_with(self.0);
        Box::pin(async move { answer })
    }
}

#[tokio::test]
async fn a_denial_with_a_message_replays_clean_and_without_the_message_diverges() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let path = dir.path().join("s.jsonl");
    let script = [
        r#"{"tool_calls":[{"name":"write","arguments":{"path":"a.txt","content":"x"}}]}"#,
        r#"{"text":"ok"}"#,
    ]
    .join("\n");
    let handle = run_agent(RunOptions {
        session: SessionTarget::New {
            path: path.clone(),
            session_id: "t".into(),
            cwd: work.display().to_string(),
        },
        task: Task::Prompt("go".into()),
        limits: Limits::default(),
        system_prompt: "sys".into(),
        provider: Arc::new(FauxProvider::from_script("test", &script).unwrap()),
        tools: Arc::new(StandardTools::new(&work).unwrap()),
        permissions: Permissions::Ask,
        approver: Some(Arc::new(DenyWith("use b.txt instead"))),
        max_parallel_tools: xcsh_runtime::DEFAULT_MAX_PARALLEL_TOOLS,
        secrets: Default::default(),
        memory: None,
        provider_record: None,
    })
    .unwrap();
    assert_eq!(
        handle.result().await.unwrap().stop_reason,
        StopReason::Completed
    );

    let log = read_session(&path).unwrap();
    xcsh_replay::replay_branch(&log, log.leaf()).unwrap();
    let streamed = xcsh_replay::replay_file(&path, None, &ReplayOptions::default())
        .expect("the streamed replay applies to a log the writer wrote")
        .unwrap();
    assert_eq!(streamed.replay.outcome, Outcome::Clean);

    // The same log with the message taken out of its answer (as an older xcsh
    // would have written it): the machine now makes the plain denial instead.
    let mut log = log;
    let mut stripped = 0;
    for entry in &mut log.entries {
        if let Body::Record(Record::ApprovalAnswer { message, .. }) = &mut entry.body {
            assert_eq!(message.take().as_deref(), Some("use b.txt instead"));
            stripped += 1;
        }
    }
    assert_eq!(stripped, 1);
    let replay = xcsh_replay::replay(&log, log.leaf(), &ReplayOptions::default()).unwrap();
    assert!(
        matches!(replay.outcome, Outcome::Diverged(_)),
        "{:?}",
        replay.outcome
    );
}
