//! The exit codes of `xcsh`: the one place that says which status each way a command
//! can end gives (SPEC §16, "Exit codes"), and the usage error, the one error that
//! exits 2.

use std::process::ExitCode;

use xcsh_machine::StopReason;

/// How a command ended, as its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done. A completed run, a clean replay or check, no difference, nothing to
    /// do (`replay --minimize` of a session that does not diverge).
    Ok,
    /// 1: failed. An error (`xcsh: error: …` on stderr), or a check that did not pass:
    /// a replay diverged, `check` found a violation, `diff` found a difference,
    /// `provider-test` a mismatch.
    Failed,
    /// 2: the command line is wrong (unknown flag or value, missing or conflicting
    /// arguments), whether clap or xcsh finds it: clap's convention, as grep and git.
    Usage,
    /// 3: the provider did not deliver: it failed, withheld the response (content
    /// filter), or refused a context too large for the model.
    Provider,
    /// 4: a limit stopped the run (steps, spend budget, output limit); continuing
    /// with a larger limit can finish it.
    Limit,
    /// 130: interrupted (Ctrl-C), as a shell reports SIGINT.
    Interrupted,
    /// 143: SIGTERM interrupted it (the run settled and was recorded first).
    Terminated,
    /// 129: SIGHUP (its terminal closed) interrupted it, likewise.
    HungUp,
}

impl Exit {
    pub const fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Provider => 3,
            Exit::Limit => 4,
            Exit::Interrupted => 130,
            Exit::Terminated => 143,
            Exit::HungUp => 129,
        }
    }

    /// The status of a run that ended with `reason`.
    pub fn of_run(reason: &StopReason) -> Exit {
        match reason {
            StopReason::Completed => Exit::Ok,
            StopReason::MaxSteps { .. }
            | StopReason::MaxTokens { .. }
            | StopReason::OutputLimit => Exit::Limit,
            StopReason::ContentFilter
            | StopReason::ProviderError { .. }
            | StopReason::ContextOverflow { .. } => Exit::Provider,
            StopReason::Interrupted => Exit::Interrupted,
            StopReason::Crashed => Exit::Failed,
        }
    }

    /// [`Exit::Ok`] when `passed`, else [`Exit::Failed`] (a check that did not pass).
    pub fn passed(passed: bool) -> Exit {
        if passed { Exit::Ok } else { Exit::Failed }
    }

    /// The status of a command that failed with `error`.
    pub fn of_error(error: &anyhow::Error) -> Exit {
        let usage = error.chain().any(|cause| {
            cause.is::<UsageError>()
                || matches!(
                    cause.downcast_ref::<xcsh_inspect::InspectError>(),
                    Some(xcsh_inspect::InspectError::Usage(_))
                )
                || matches!(
                    cause.downcast_ref::<xcsh_replay::ReplayError>(),
                    Some(xcsh_replay::ReplayError::BadSetting { .. })
                )
        });
        if usage { Exit::Usage } else { Exit::Failed }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// A command line xcsh cannot run as given (exits 2, [`Exit::Usage`]).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Returns early with a [`UsageError`], formatted as `format!`.
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err($crate::exit::UsageError(format!($($arg)*)).into())
    };
}
pub(crate) use usage;

#[cfg(test)]
mod tests {
    use super::*;
    use xcsh_machine::{ProviderError, ProviderErrorKind};

    #[test]
    fn every_stop_reason_has_its_exit_code() {
        let error = ProviderError {
            kind: ProviderErrorKind::Api,
            message: "boom".into(),
        };
        let table: Vec<(&str, u8)> = [
            ("completed", StopReason::Completed),
            ("max_steps", StopReason::MaxSteps { limit: 1 }),
            ("max_tokens", StopReason::MaxTokens { limit: 1, spent: 2 }),
            ("output_limit", StopReason::OutputLimit),
            ("content_filter", StopReason::ContentFilter),
            ("interrupted", StopReason::Interrupted),
            (
                "provider_error",
                StopReason::ProviderError {
                    error: error.clone(),
                },
            ),
            (
                "context_overflow",
                StopReason::ContextOverflow {
                    error,
                    compacted: true,
                },
            ),
            ("crashed", StopReason::Crashed),
        ]
        .iter()
        .map(|(name, reason)| (*name, Exit::of_run(reason).code()))
        .collect();
        assert_eq!(
            table,
            [
                ("completed", 0),
                ("max_steps", 4),
                ("max_tokens", 4),
                ("output_limit", 4),
                ("content_filter", 3),
                ("interrupted", 130),
                ("provider_error", 3),
                ("context_overflow", 3),
                ("crashed", 1),
            ]
        );
    }

    #[test]
    fn a_usage_error_exits_2_even_under_a_context() {
        use anyhow::Context as _;
        let plain: anyhow::Error = UsageError("--at needs a session".into()).into();
        assert_eq!(Exit::of_error(&plain), Exit::Usage);
        let wrapped = Err::<(), _>(plain).context("while starting").unwrap_err();
        assert_eq!(Exit::of_error(&wrapped), Exit::Usage);
        assert_eq!(
            Exit::of_error(&anyhow::anyhow!("no such file")),
            Exit::Failed
        );
    }
}
