//! Permissions: which tool calls may run without asking, the session's grants, and
//! the routing of each validated call to dispatch, a question, or a denial.

use std::collections::BTreeSet;

use super::protocol::{
    ApprovalScope, ApprovedBy, Decision, Effect, Permissions, RunConfig, Verdict,
};
use super::types::ToolCall;

/// Allowances a user gave with `a` (a tool) or `A` (an exact call); they last for
/// the session (the machine's lifetime, rebuilt on resume by replay).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Grants {
    tools: BTreeSet<String>,
    calls: BTreeSet<(String, String)>,
}

impl Grants {
    pub fn grant(&mut self, call: &ToolCall, scope: ApprovalScope) {
        match scope {
            ApprovalScope::Once => {}
            ApprovalScope::Tool => {
                self.tools.insert(call.name.clone());
            }
            ApprovalScope::Call => {
                self.calls
                    .insert((call.name.clone(), call.arguments.clone()));
            }
        }
    }

    /// The tools allowed for the session (`a`), by name.
    pub fn tools(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(String::as_str)
    }

    /// How many exact calls are allowed for the session (`A`).
    pub fn call_count(&self) -> usize {
        self.calls.len()
    }

    fn covers(&self, call: &ToolCall) -> Option<ApprovedBy> {
        if self.tools.contains(&call.name) {
            Some(ApprovedBy::ToolGrant)
        } else if self
            .calls
            .contains(&(call.name.clone(), call.arguments.clone()))
        {
            Some(ApprovedBy::CallGrant)
        } else {
            None
        }
    }
}

/// Where a validated call goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Run it now (after recording the automatic approval, if any).
    Dispatch,
    /// Ask the user and wait.
    Ask,
    /// Denied by the policy: give it a denial result.
    Deny,
}

/// The tool that starts a sub-agent (SPEC.md §29.1).
pub const TASK_TOOL: &str = "task";

/// Whether `call` goes through the permission policy: a mutating tool, or a `task`
/// call whose sub-agent is not read-only (SPEC.md §29.1).
fn gated(config: &RunConfig, call: &ToolCall) -> bool {
    if call.name == TASK_TOOL {
        return !read_only_task(config, call);
    }
    config.mutating.contains(&call.name)
}

/// Whether the sub-agent a `task` call asks for is read-only: its `tools` (absent:
/// the default, the run's tools that are not mutating) name only tools of this run
/// that are not mutating, and not `task`. Arguments that do not say so (not JSON,
/// `tools` not a list of names) count as not read-only: the call is asked.
pub fn read_only_task(config: &RunConfig, call: &ToolCall) -> bool {
    if call.arguments.trim().is_empty() {
        return true;
    }
    let Ok(serde_json::Value::Object(args)) =
        serde_json::from_str::<serde_json::Value>(&call.arguments)
    else {
        return false;
    };
    match args.get("tools") {
        None | Some(serde_json::Value::Null) => true,
        Some(serde_json::Value::Array(names)) => names.iter().all(|name| {
            name.as_str().is_some_and(|name| {
                name != TASK_TOOL
                    && config.tools.iter().any(|t| t == name)
                    && !config.mutating.iter().any(|m| m == name)
            })
        }),
        Some(_) => false,
    }
}

/// Routes `call` under `config` and `grants`, recording an automatic answer.
pub fn route(config: &RunConfig, grants: &Grants, call: &ToolCall, out: &mut Vec<Effect>) -> Route {
    if !gated(config, call) {
        return Route::Dispatch;
    }
    let always_ask = config
        .sandbox
        .as_ref()
        .is_some_and(|s| s.always_ask.contains(&call.name));
    let (verdict, by) = match config.permissions {
        Permissions::Yolo if !always_ask => (Verdict::Allow, ApprovedBy::PolicyYolo),
        Permissions::Readonly => (Verdict::Deny, ApprovedBy::PolicyReadonly),
        Permissions::Ask | Permissions::Yolo => match grants.covers(call) {
            Some(by) => (Verdict::Allow, by),
            None if always_ask && unattended(config) => (Verdict::Deny, ApprovedBy::NoOneToAsk),
            None => return Route::Ask,
        },
    };
    out.push(Effect::Record(Decision::Approval {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        verdict,
        by,
    }));
    match verdict {
        Verdict::Allow => Route::Dispatch,
        Verdict::Deny => Route::Deny,
    }
}

/// The denial result's text.
pub fn denial(call: &ToolCall, by_user: bool) -> String {
    if by_user {
        format!(
            "denied: the user did not allow `{}`; the call was not run",
            call.name
        )
    } else {
        format!(
            "denied: this session is read-only (--permissions readonly), so `{}` was not run",
            call.name
        )
    }
}

fn unattended(config: &RunConfig) -> bool {
    config.sandbox.as_ref().is_some_and(|s| s.unattended)
}

/// The result of a call `route` denied: no one to ask for an always-asked call, else
/// the read-only policy.
pub fn policy_denial(config: &RunConfig, call: &ToolCall) -> String {
    let always_asked = config
        .sandbox
        .as_ref()
        .is_some_and(|s| s.always_ask.contains(&call.name));
    if always_asked && unattended(config) && config.permissions != Permissions::Readonly {
        format!(
            "denied: `{}` needs the user's approval every time (it runs a command outside the sandbox), and no one can give it in this run (a one-shot run without a terminal); the call was not run. Do without it, or tell the user to run this command themselves or to run xcsh on a terminal",
            call.name
        )
    } else {
        denial(call, false)
    }
}

/// The result of a call the user denied: the denial sentence and, when the user
/// said something with it (not only blanks), `. The user says: MESSAGE`.
pub fn user_denial(call: &ToolCall, message: Option<&str>) -> String {
    let denied = denial(call, true);
    match message.map(str::trim).filter(|m| !m.is_empty()) {
        Some(message) => format!("{denied}. The user says: {message}"),
        None => denied,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CallId;

    fn edit() -> ToolCall {
        ToolCall {
            id: CallId("c1".into()),
            name: "edit".into(),
            arguments: "{}".into(),
        }
    }

    fn outside() -> ToolCall {
        ToolCall {
            id: CallId("c2".into()),
            name: "bash_outside_sandbox".into(),
            arguments: r#"{"command":"make install"}"#.into(),
        }
    }

    fn sandboxed(permissions: Permissions, unattended: bool) -> RunConfig {
        RunConfig {
            limits: crate::Limits::default(),
            tools: vec!["bash".into(), "bash_outside_sandbox".into()],
            mutating: vec!["bash".into(), "bash_outside_sandbox".into()],
            permissions,
            estimate_bytes_per_token: 0,
            sandbox: Some(crate::SandboxConfig {
                mode: crate::SandboxMode::WorkspaceWrite,
                network: false,
                always_ask: vec!["bash_outside_sandbox".into()],
                unattended,
            }),
        }
    }

    fn routed(config: &RunConfig, grants: &Grants, call: &ToolCall) -> (Route, Vec<Effect>) {
        let mut out = Vec::new();
        let route = route(config, grants, call, &mut out);
        (route, out)
    }

    fn approval(call: &ToolCall, verdict: Verdict, by: ApprovedBy) -> Vec<Effect> {
        vec![Effect::Record(Decision::Approval {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            verdict,
            by,
        })]
    }

    /// With no grants, `config` denies [`outside`] (an approval by `by`), and the
    /// call's result is `text`.
    #[track_caller]
    fn denies_outside(config: &RunConfig, by: ApprovedBy, text: &str) {
        assert_eq!(
            routed(config, &Grants::default(), &outside()),
            (Route::Deny, approval(&outside(), Verdict::Deny, by))
        );
        assert_eq!(policy_denial(config, &outside()), text);
    }

    #[test]
    fn an_always_asked_tool_is_asked_under_yolo_while_bash_is_allowed() {
        let config = sandboxed(Permissions::Yolo, false);
        let grants = Grants::default();
        assert_eq!(
            routed(&config, &grants, &outside()),
            (Route::Ask, Vec::new())
        );
        let bash = ToolCall {
            name: "bash".into(),
            ..outside()
        };
        assert_eq!(
            routed(&config, &grants, &bash),
            (
                Route::Dispatch,
                approval(&bash, Verdict::Allow, ApprovedBy::PolicyYolo)
            )
        );
    }

    #[test]
    fn a_grant_covers_an_always_asked_tool_and_readonly_still_denies_it() {
        let mut grants = Grants::default();
        grants.grant(&outside(), ApprovalScope::Call);
        let config = sandboxed(Permissions::Yolo, false);
        assert_eq!(
            routed(&config, &grants, &outside()),
            (
                Route::Dispatch,
                approval(&outside(), Verdict::Allow, ApprovedBy::CallGrant)
            )
        );
        denies_outside(
            &sandboxed(Permissions::Readonly, true),
            ApprovedBy::PolicyReadonly,
            "denied: this session is read-only (--permissions readonly), so `bash_outside_sandbox` was not run",
        );
    }

    #[test]
    fn with_no_one_to_ask_an_always_asked_tool_is_denied_saying_why() {
        denies_outside(
            &sandboxed(Permissions::Yolo, true),
            ApprovedBy::NoOneToAsk,
            "denied: `bash_outside_sandbox` needs the user's approval every time (it runs a command outside the sandbox), and no one can give it in this run (a one-shot run without a terminal); the call was not run. Do without it, or tell the user to run this command themselves or to run xcsh on a terminal",
        );
    }

    #[test]
    fn a_user_denial_ends_with_what_the_user_said() {
        assert_eq!(
            user_denial(&edit(), Some("  use a new file instead\n")),
            "denied: the user did not allow `edit`; the call was not run. The user says: use a new file instead"
        );
    }

    #[test]
    fn a_blank_or_absent_message_leaves_the_plain_denial() {
        let plain = "denied: the user did not allow `edit`; the call was not run";
        assert_eq!(user_denial(&edit(), Some(" \t\n")), plain);
        assert_eq!(user_denial(&edit(), None), plain);
    }
}
