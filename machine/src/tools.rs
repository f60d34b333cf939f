//! The tool calls of a step, from the end of its stream to their settlement:
//! validation (unknown tools, arguments that are not an object), routing through the
//! approval policy, dispatch, the answers to approval questions, the settlements, and
//! the synthetic results of calls that are not run.

use super::*;

impl Machine {
    /// The tool phase, taken out to be changed, when `holds` says the call an input
    /// names is in it; `None` (the input is late) otherwise.
    fn take_tools(&mut self, holds: impl Fn(&RunningTools) -> bool) -> Option<RunningTools> {
        match &mut self.phase {
            Phase::RunningTools(t) if holds(t) => Some(std::mem::replace(t, RunningTools::empty())),
            Phase::RunningTools(_)
            | Phase::Idle
            | Phase::Streaming(_)
            | Phase::Compacting(_)
            | Phase::Finished(_) => None,
        }
    }

    /// The running tools with call `call_id` taken out of their `awaiting` list;
    /// `None` when the machine does not wait on that call (the phase is kept).
    fn take_awaiting(&mut self, call_id: &CallId) -> Option<(RunningTools, ToolCall)> {
        let mut tools = self.take_tools(|t| t.awaiting.iter().any(|c| c.id == *call_id))?;
        let pos = tools.awaiting.iter().position(|c| c.id == *call_id);
        match pos.map(|p| tools.awaiting.remove(p)) {
            Some(call) => Some((tools, call)),
            // Not reached: `take_tools` took the tools because the call is there.
            None => {
                self.phase = Phase::RunningTools(tools);
                None
            }
        }
    }

    pub(super) fn on_tool_settled(
        &mut self,
        call_id: CallId,
        outcome: ToolOutcome,
        spent: Option<Usage>,
        out: &mut Vec<Effect>,
    ) {
        let Some(mut tools) = self.take_tools(|t| t.pending.iter().any(|c| c.id == call_id)) else {
            return ignore(IgnoreReason::LateToolResult, out);
        };
        let pos = tools.pending.iter().position(|c| c.id == call_id);
        if let Some(call) = pos.map(|p| tools.pending.remove(p)) {
            if let Some(spent) = spent {
                self.run.delegated.add(&spent);
            }
            self.context.push(
                None,
                Message::ToolResult {
                    call_id: call.id,
                    name: call.name,
                    is_error: outcome.status != ToolStatus::Ok,
                    content: outcome.content,
                },
            );
        }
        // A deliberately broken machine for the property tests to catch: it delivers
        // steers as soon as one tool call settles, mid-step.
        #[cfg(feature = "broken-steer")]
        if !tools.pending.is_empty() {
            self.deliver_steers(out);
        }
        self.tools_progress(tools, out);
    }

    pub(super) fn on_approval(
        &mut self,
        call_id: CallId,
        verdict: Verdict,
        scope: ApprovalScope,
        message: Option<String>,
        out: &mut Vec<Effect>,
    ) {
        let Some((mut tools, call)) = self.take_awaiting(&call_id) else {
            return ignore(IgnoreReason::LateApproval, out);
        };
        match verdict {
            Verdict::Allow => {
                self.grants.grant(&call, scope);
                self.dispatch(&mut tools, call, out);
                // A grant may cover calls still waiting: route them again.
                for waiting in std::mem::take(&mut tools.awaiting) {
                    self.route(&mut tools, waiting, out);
                }
            }
            Verdict::Deny => {
                let content = approval::user_denial(&call, message.as_deref());
                self.synthesize(call, SyntheticReason::Denied, content, out);
            }
        }
        self.tools_progress(tools, out);
    }

    /// A call waiting for approval was checked and cannot succeed: it settles with
    /// the error it would have returned, and no one is asked about it.
    pub(super) fn on_check_failed(
        &mut self,
        call_id: CallId,
        content: String,
        out: &mut Vec<Effect>,
    ) {
        let Some((tools, call)) = self.take_awaiting(&call_id) else {
            return ignore(IgnoreReason::LateApproval, out);
        };
        self.synthesize(call, SyntheticReason::WouldFail, content, out);
        self.tools_progress(tools, out);
    }

    /// Sends a validated call to dispatch, to the user, or to a denial.
    pub(super) fn route(
        &mut self,
        tools: &mut RunningTools,
        call: ToolCall,
        out: &mut Vec<Effect>,
    ) {
        let config = self.run.config.clone().unwrap_or(RunConfig {
            limits: Limits::default(),
            tools: Vec::new(),
            mutating: Vec::new(),
            permissions: Permissions::default(),
            estimate_bytes_per_token: 0,
            sandbox: None,
        });
        match approval::route(&config, &self.grants, &call, out) {
            approval::Route::Dispatch => self.dispatch(tools, call, out),
            approval::Route::Ask => {
                out.push(Effect::AskApproval { call: call.clone() });
                tools.awaiting.push(call);
            }
            approval::Route::Deny => {
                let content = approval::policy_denial(&config, &call);
                self.synthesize(call, SyntheticReason::Denied, content, out);
            }
        }
    }

    pub(super) fn dispatch(
        &mut self,
        tools: &mut RunningTools,
        call: ToolCall,
        out: &mut Vec<Effect>,
    ) {
        out.push(Effect::Record(Decision::ToolDispatched {
            step: tools.step,
            call: call.clone(),
        }));
        out.push(Effect::ExecuteTool { call: call.clone() });
        tools.pending.push(call);
    }

    /// Stores the tool phase, or, when nothing is running or waiting any more, moves
    /// on: to the boundary after tools, or to finishing an interrupted run.
    pub(super) fn tools_progress(&mut self, tools: RunningTools, out: &mut Vec<Effect>) {
        if !tools.pending.is_empty() || !tools.awaiting.is_empty() {
            self.phase = Phase::RunningTools(tools);
        } else if tools.interrupted {
            self.finish(StopReason::Interrupted, out);
        } else {
            self.after_tools(out);
        }
    }

    pub(super) fn validate(&self, call: &ToolCall) -> Result<(), (SyntheticReason, String)> {
        let known = self
            .run
            .config
            .as_ref()
            .is_some_and(|c| c.tools.contains(&call.name));
        if !known {
            let available = self
                .run
                .config
                .as_ref()
                .map(|c| c.tools.join(", "))
                .unwrap_or_default();
            return Err((
                SyntheticReason::UnknownTool,
                format!(
                    "error: there is no tool named `{}` (available: {available}); the call was not run",
                    call.name
                ),
            ));
        }
        // Some servers send no argument fragments for a tool without parameters:
        // empty text means `{}`.
        if call.arguments.trim().is_empty() {
            return Ok(());
        }
        match not_an_object(&call.arguments) {
            None => Ok(()),
            Some(why) => Err((
                SyntheticReason::InvalidArguments,
                format!(
                    "error: the arguments of `{}` are not a JSON object ({why}); the call was not run",
                    call.name
                ),
            )),
        }
    }

    pub(super) fn synthesize_all(
        &mut self,
        calls: &[ToolCall],
        reason: SyntheticReason,
        out: &mut Vec<Effect>,
    ) {
        for call in calls {
            let content = match reason {
                SyntheticReason::OutputLimit => format!(
                    "error: the response hit its output limit, so the arguments of `{}` may be truncated; the call was not run",
                    call.name
                ),
                SyntheticReason::Interrupted => format!(
                    "error: the run was interrupted before `{}` could run; the call was not run",
                    call.name
                ),
                SyntheticReason::Lost => format!(
                    "error: the process ended while `{}` was running; whether it ran, and what it changed, is unknown",
                    call.name
                ),
                SyntheticReason::Denied => approval::denial(call, false),
                // Never made for many calls at once: each check fails on its own.
                SyntheticReason::WouldFail => format!(
                    "error: `{}` could not succeed; the call was not run",
                    call.name
                ),
                SyntheticReason::InvalidArguments
                | SyntheticReason::UnknownTool
                | SyntheticReason::DuplicateId => {
                    format!("error: the call of `{}` was not run", call.name)
                }
            };
            self.synthesize(call.clone(), reason, content, out);
        }
    }

    pub(super) fn synthesize(
        &mut self,
        call: ToolCall,
        reason: SyntheticReason,
        content: String,
        out: &mut Vec<Effect>,
    ) {
        self.context.push(
            None,
            Message::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                is_error: true,
                content: content.clone(),
            },
        );
        out.push(Effect::Record(Decision::SyntheticResult {
            call,
            reason,
            content,
        }));
    }
}

/// Why `text` is not a JSON object, in xcsh's own words: a dependency's error text
/// (serde_json's "invalid type: sequence, expected a map at line 1 column 0") would
/// land in a recorded decision, and a dependency update would then make old logs
/// diverge on replay. `None` when it is an object. The tools word their own argument
/// errors with it too.
pub fn not_an_object(text: &str) -> Option<&'static str> {
    use serde_json::error::Category;
    let parsed: Result<std::collections::BTreeMap<String, serde::de::IgnoredAny>, _> =
        serde_json::from_str(text);
    let e = parsed.err()?;
    Some(match e.classify() {
        Category::Eof => "the JSON text ends early",
        Category::Syntax | Category::Io => "they are not valid JSON",
        Category::Data => match text.trim_start().as_bytes().first() {
            Some(b'[') => "they are an array",
            Some(b'"') => "they are a string",
            Some(b't' | b'f') => "they are a boolean",
            Some(b'n') => "they are null",
            Some(b'-' | b'0'..=b'9') => "they are a number",
            Some(_) | None => "they are not valid JSON",
        },
    })
}
