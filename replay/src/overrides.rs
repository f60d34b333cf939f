//! `--set key=value`: settings that replace the ones recorded in every prompt (and
//! `/compact`) of the branch before it is replayed ("what would the run have done
//! under max_steps 4?"). Without overrides, replay uses exactly the configuration
//! each prompt recorded, never today's defaults.

use serde::Serialize;
use xcsh_log::describe::serde_name;
use xcsh_machine::{Input, Permissions, RunConfig};

use crate::ReplayError;

/// Settings to replace in every recorded `user_message` config. `None` keeps the
/// recorded value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Overrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_at_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
}

/// The keys `--set` accepts.
pub const KEYS: [&str; 5] = [
    "max_steps",
    "max_tokens",
    "max_output_tokens",
    "compact_at_tokens",
    "permissions",
];

impl Overrides {
    /// Parses `key=value` settings, later ones winning.
    pub fn parse<S: AsRef<str>>(settings: &[S]) -> Result<Overrides, ReplayError> {
        let mut o = Overrides::default();
        for s in settings {
            o.set(s.as_ref())?;
        }
        Ok(o)
    }

    /// Applies one `key=value` setting.
    pub fn set(&mut self, setting: &str) -> Result<(), ReplayError> {
        let bad = |why: String| ReplayError::BadSetting {
            setting: setting.to_string(),
            why,
        };
        let (key, value) = setting
            .split_once('=')
            .ok_or_else(|| bad("expected key=value".into()))?;
        let (key, value) = (key.trim(), value.trim());
        let number = |v: &str| -> Result<u64, ReplayError> {
            v.parse::<u64>()
                .map_err(|_| bad(format!("`{v}` is not a non-negative whole number")))
        };
        let small = |v: &str| -> Result<u32, ReplayError> {
            u32::try_from(number(v)?).map_err(|_| bad(format!("`{v}` is too large")))
        };
        match key {
            "max_steps" => self.max_steps = Some(small(value)?),
            "max_tokens" => self.max_tokens = Some(number(value)?),
            "max_output_tokens" => self.max_output_tokens = Some(small(value)?),
            "compact_at_tokens" => self.compact_at_tokens = Some(number(value)?),
            "permissions" => {
                self.permissions = Some(match value {
                    "ask" => Permissions::Ask,
                    "readonly" => Permissions::Readonly,
                    "yolo" => Permissions::Yolo,
                    other => {
                        return Err(bad(format!(
                            "`{other}` is not a permission policy (ask, readonly, yolo)"
                        )));
                    }
                })
            }
            other => {
                return Err(bad(format!(
                    "unknown key `{other}` (known: {})",
                    KEYS.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Every setting as `config` records it: what `--set` would have to say to
    /// replay under exactly this config.
    pub fn recorded(config: &RunConfig) -> Overrides {
        let l = &config.limits;
        Overrides {
            max_steps: Some(l.max_steps),
            max_tokens: Some(l.max_tokens),
            max_output_tokens: Some(l.max_output_tokens),
            compact_at_tokens: Some(l.compact_at_tokens),
            permissions: Some(config.permissions),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Overrides::default()
    }

    /// The config with these settings in place of the recorded ones.
    pub fn apply_to(&self, config: &mut RunConfig) {
        let l = &mut config.limits;
        if let Some(v) = self.max_steps {
            l.max_steps = v;
        }
        if let Some(v) = self.max_tokens {
            l.max_tokens = v;
        }
        if let Some(v) = self.max_output_tokens {
            l.max_output_tokens = v;
        }
        if let Some(v) = self.compact_at_tokens {
            l.compact_at_tokens = v;
        }
        if let Some(v) = self.permissions {
            config.permissions = v;
        }
    }

    /// The input with the overrides applied (a prompt and `/compact` carry a config).
    pub fn apply(&self, input: Input) -> Input {
        match input {
            Input::Prompt { text, mut config } => {
                self.apply_to(&mut config);
                Input::Prompt { text, config }
            }
            Input::Compact { mut config } => {
                self.apply_to(&mut config);
                Input::Compact { config }
            }
            other => other,
        }
    }

    /// The settings as `key=value` words, for reports (`max_steps=4`).
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(v) = self.max_steps {
            out.push(format!("max_steps={v}"));
        }
        if let Some(v) = self.max_tokens {
            out.push(format!("max_tokens={v}"));
        }
        if let Some(v) = self.max_output_tokens {
            out.push(format!("max_output_tokens={v}"));
        }
        if let Some(v) = self.compact_at_tokens {
            out.push(format!("compact_at_tokens={v}"));
        }
        if let Some(v) = self.permissions {
            out.push(format!("permissions={}", serde_name(&v)));
        }
        out
    }
}
