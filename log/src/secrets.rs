//! Secrets: which environment variables bash does not get ([`EnvPolicy`]) and the
//! secret values replaced by `[redacted:NAME]` in everything written to a session log
//! or a cassette ([`Secrets`]). The binary builds both; the tools, the runtime and
//! the writers only apply them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::sync::Arc;

/// The name patterns whose variables bash does not get by default
/// (case-insensitive globs).
pub const DEFAULT_SECRET_PATTERNS: [&str; 4] = ["*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*"];

/// Values shorter than this are never redacted: a short value (`1`, `true`, a
/// username) would replace ordinary text everywhere.
pub const MIN_SECRET_LEN: usize = 8;

/// Whether `name` matches the glob `pattern` (`*` any run, `?` one character),
/// ignoring ASCII case.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().map(|c| c.to_ascii_lowercase()).collect();
    let n: Vec<char> = name.chars().map(|c| c.to_ascii_lowercase()).collect();
    // The classic two-pointer wildcard match with backtracking to the last `*`.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(c) if *c == '?' || *c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Which variables of xcsh's environment bash gets: all but those whose names match
/// [`DEFAULT_SECRET_PATTERNS`], the provider's credential variables or `exclude`;
/// a name matching `include` is kept whatever else it matches.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EnvPolicy {
    /// Globs of names kept even if they match a secret pattern.
    pub include: Vec<String>,
    /// Globs of more names removed.
    pub exclude: Vec<String>,
    /// The credential variables of the provider (removed unless included).
    pub credential_vars: Vec<String>,
}

impl EnvPolicy {
    /// Whether bash gets the variable `name`.
    pub fn keeps(&self, name: &str) -> bool {
        if self.include.iter().any(|p| glob_matches(p, name)) {
            return true;
        }
        let removed = DEFAULT_SECRET_PATTERNS
            .iter()
            .any(|p| glob_matches(p, name))
            || self.exclude.iter().any(|p| glob_matches(p, name))
            || self
                .credential_vars
                .iter()
                .any(|v| v.eq_ignore_ascii_case(name));
        !removed
    }

    /// What is removed besides `exclude`: the secret patterns, then the credential
    /// variables (as `xcsh config` shows them).
    pub fn removed(&self) -> Vec<String> {
        DEFAULT_SECRET_PATTERNS
            .iter()
            .map(|p| (*p).to_string())
            .chain(self.credential_vars.iter().cloned())
            .collect()
    }

    /// The environment bash gets out of `vars` (a name that is not UTF-8 is kept
    /// only if no pattern could be meant for it, i.e. judged by its lossy form).
    pub fn apply(&self, vars: impl IntoIterator<Item = (OsString, OsString)>) -> ShellEnv {
        let vars = vars
            .into_iter()
            .filter(|(name, _)| self.keeps(&name.to_string_lossy()))
            .collect();
        ShellEnv {
            vars: Arc::new(vars),
        }
    }
}

/// The exact environment bash runs with (nothing else is inherited). `Debug` shows
/// the names only.
#[derive(Clone, PartialEq, Eq)]
pub struct ShellEnv {
    vars: Arc<BTreeMap<OsString, OsString>>,
}

impl ShellEnv {
    /// This process's environment under the default policy.
    pub fn from_process() -> ShellEnv {
        EnvPolicy::default().apply(std::env::vars_os())
    }

    /// The variables, by name.
    pub fn vars(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars
            .iter()
            .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }

    /// Whether `name` is set.
    pub fn contains(&self, name: &str) -> bool {
        self.vars.contains_key(OsStr::new(name))
    }
}

impl Default for ShellEnv {
    fn default() -> Self {
        ShellEnv::from_process()
    }
}

impl std::fmt::Debug for ShellEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set()
            .entries(self.vars.keys().map(|k| k.to_string_lossy()))
            .finish()
    }
}

/// The secret values xcsh knows (the API key it uses, the values of credential
/// variables) and their placeholders, longest value first. `Debug` never shows a
/// value. Cheap to clone.
#[derive(Clone, Default)]
pub struct Secrets {
    /// (value, placeholder): the raw value and, where it differs, its JSON-escaped
    /// form, each with `[redacted:NAME]`.
    pairs: Arc<Vec<(String, String)>>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.pairs.iter().map(|(_, p)| p))
            .finish()
    }
}

impl Secrets {
    /// From (name, value) pairs; values shorter than [`MIN_SECRET_LEN`] (in
    /// characters) are left out, as are repeats of a value.
    pub fn new<N: AsRef<str>, V: AsRef<str>>(named: impl IntoIterator<Item = (N, V)>) -> Secrets {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (name, value) in named {
            let value = value.as_ref();
            if value.chars().count() < MIN_SECRET_LEN || pairs.iter().any(|(v, _)| v == value) {
                continue;
            }
            let placeholder = format!("[redacted:{}]", name.as_ref());
            // Inside a JSON string the value may appear escaped.
            let escaped = serde_json::to_string(value).unwrap_or_default();
            let escaped = escaped
                .strip_prefix('"')
                .and_then(|e| e.strip_suffix('"'))
                .unwrap_or(value);
            if escaped != value {
                pairs.push((escaped.to_owned(), placeholder.clone()));
            }
            pairs.push((value.to_owned(), placeholder));
        }
        pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        Secrets {
            pairs: Arc::new(pairs),
        }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// `text` with every known secret value replaced by its placeholder.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (value, placeholder) in self.pairs.iter() {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), placeholder));
            }
        }
        out
    }

    /// Like [`Secrets::redact`], in place.
    pub fn redact_in_place(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.redact(text) {
            *text = redacted;
        }
    }

    /// `bytes` with every known secret replaced (bytes that are not UTF-8 are
    /// searched as they are).
    pub fn redact_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let mut out = Cow::Borrowed(bytes);
        for (value, placeholder) in self.pairs.iter() {
            let value = value.as_bytes();
            if find(&out, value).is_none() {
                continue;
            }
            let mut next = Vec::with_capacity(out.len());
            let mut rest: &[u8] = &out;
            while let Some(at) = find(rest, value) {
                next.extend_from_slice(&rest[..at]);
                next.extend_from_slice(placeholder.as_bytes());
                rest = &rest[at + value.len()..];
            }
            next.extend_from_slice(rest);
            out = Cow::Owned(next);
        }
        out
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    fn names(env: &ShellEnv) -> Vec<String> {
        env.vars()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn globs_match_ignoring_case() {
        assert!(glob_matches("*KEY*", "openai_api_key"));
        assert!(glob_matches("*KEY*", "KEY"));
        assert!(glob_matches("AWS_*", "aws_region"));
        assert!(glob_matches("A?C", "abc"));
        assert!(!glob_matches("A?C", "abbc"));
        assert!(!glob_matches("*TOKEN", "TOKENS"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("**x*", "yyxyy"));
    }

    #[test]
    fn the_default_policy_removes_secret_names_and_the_credential_variable() {
        let policy = EnvPolicy {
            credential_vars: vec!["MY_PROVIDER_CRED".into()],
            ..EnvPolicy::default()
        };
        let env = policy.apply(os(&[
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk"),
            ("GITHUB_TOKEN", "t"),
            ("db_password", "p"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("MY_PROVIDER_CRED", "c"),
            ("HOME", "/h"),
        ]));
        assert_eq!(names(&env), ["HOME", "PATH"]);
    }

    #[test]
    fn include_keeps_a_matching_name_and_exclude_removes_more() {
        let policy = EnvPolicy {
            include: vec!["ssh_auth_*".into(), "KEYMAP".into()],
            exclude: vec!["AWS_*".into()],
            credential_vars: vec![],
        };
        let env = policy.apply(os(&[
            ("KEYMAP", "us"),
            ("SSH_AUTH_TOKEN_X", "x"),
            ("AWS_REGION", "eu"),
            ("API_KEY", "k"),
            ("LANG", "C"),
        ]));
        assert_eq!(names(&env), ["KEYMAP", "LANG", "SSH_AUTH_TOKEN_X"]);
    }

    #[test]
    fn a_shell_envs_debug_shows_names_not_values() {
        let env = EnvPolicy::default().apply(os(&[("LANG", "C.UTF-8-value")]));
        assert_eq!(format!("{env:?}"), "{\"LANG\"}");
    }

    #[test]
    fn secrets_are_replaced_by_their_named_placeholder_longest_first() {
        let s = Secrets::new([
            ("SHORT", "1234567"),
            ("OPENAI_API_KEY", "sk-test-abcdef"),
            ("LONGER", "sk-test-abcdef-and-more"),
        ]);
        assert_eq!(
            s.redact("a sk-test-abcdef b sk-test-abcdef-and-more c 1234567"),
            "a [redacted:OPENAI_API_KEY] b [redacted:LONGER] c 1234567"
        );
        assert_eq!(
            format!("{s:?}"),
            "[\"[redacted:LONGER]\", \"[redacted:OPENAI_API_KEY]\"]"
        );
        assert!(matches!(s.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_secret_is_found_in_its_json_escaped_form_and_in_bytes() {
        let s = Secrets::new([("K", "pa\"ss\\word")]);
        let json = serde_json::to_string("x pa\"ss\\word y").unwrap();
        assert_eq!(s.redact(&json), "\"x [redacted:K] y\"");
        assert_eq!(
            s.redact_bytes(b"\xff pa\"ss\\word\n").as_ref(),
            b"\xff [redacted:K]\n"
        );
    }

    #[test]
    fn values_shorter_than_eight_characters_are_not_secrets() {
        let s = Secrets::new([("A", "abcdefg"), ("B", "")]);
        assert!(s.is_empty());
        assert_eq!(s.redact("abcdefg"), "abcdefg");
    }
}
