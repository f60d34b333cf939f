//! `memory_read {name, scope?}`: a memory note in full (SPEC.md §28.3), read-only
//! and never gated, offered only when memory is on: [`MemoryTools`] adds it to
//! another executor's tools and hands every other call to that executor.

use serde::Deserialize;
use xcsh_log::memory::MemoryScope;
use xcsh_machine::{ToolCall, ToolOutcome, ToolStatus};
use xcsh_ports::{BoxFuture, CallContext, Layer, Layered, ToolSpec};

use super::store::MemoryStore;
use crate::params::{Param, schema};

pub const MEMORY_READ: &str = "memory_read";

const DESCRIPTION: &str = "Read a memory note in full: its description and body. The \
memory index in the system prompt lists the notes as `scope/name: description`; give the \
name (and the scope, `user` or `project`, when both have a note of that name; default: the \
project's).";

const PARAMS: &[Param] = &[
    Param::string("name", "The note's name, as the index lists it.").required(),
    Param::string(
        "scope",
        "`user` or `project` (default: project, then user).",
    ),
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    name: String,
    scope: Option<String>,
}

/// Another executor's tools plus `memory_read` over a store.
pub type MemoryTools = Layered<MemoryStore>;

/// The store as a layer: `memory_read` over it, added to another executor's tools.
impl Layer for MemoryStore {
    fn owns(&self, name: &str) -> bool {
        name == MEMORY_READ
    }

    fn specs(&self, mut inner: Vec<ToolSpec>) -> Vec<ToolSpec> {
        inner.push(ToolSpec {
            name: MEMORY_READ.into(),
            description: DESCRIPTION.into(),
            parameters: schema(PARAMS),
        });
        inner
    }

    fn execute(&self, call: ToolCall, _context: CallContext) -> BoxFuture<ToolOutcome> {
        let outcome = read(self, &call.arguments);
        Box::pin(async move { outcome })
    }
}

fn read(store: &MemoryStore, arguments: &str) -> ToolOutcome {
    let error = |content: String| ToolOutcome {
        status: ToolStatus::Error,
        content,
    };
    let args: Args = match serde_json::from_str(arguments) {
        Ok(a) => a,
        Err(e) => return error(format!("invalid arguments for memory_read: {e}")),
    };
    let scope = match args.scope.as_deref().map(|s| (s, MemoryScope::parse(s))) {
        None => None,
        Some((_, Some(scope))) => Some(scope),
        Some((s, None)) => {
            return error(format!(
                "invalid arguments for memory_read: scope `{s}` is neither `user` nor `project`"
            ));
        }
    };
    match store.read(scope, &args.name) {
        Ok(note) => ToolOutcome {
            status: ToolStatus::Ok,
            content: format!(
                "{}/{}: {}\n\n{}",
                note.scope.name(),
                note.name,
                note.description,
                note.body
            ),
        },
        Err(e) => error(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestTools;
    use std::sync::Arc;
    use tokio_util::sync::CancellationToken;
    use xcsh_log::memory::ProposedNote;
    use xcsh_machine::CallId;
    use xcsh_ports::ToolExecutor;

    #[tokio::test]
    async fn memory_read_reads_a_note_in_full_and_names_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::new(&dir.path().join("home"), &dir.path().join("ws"));
        store
            .write(&ProposedNote {
                scope: MemoryScope::User,
                name: "style".into(),
                description: "Prefers short answers".into(),
                body: "Be brief.\nNo lists.".into(),
            })
            .unwrap();
        let tools = MemoryTools::new(Arc::new(TestTools), store);
        assert_eq!(
            tools
                .specs()
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>(),
            ["echo", "sleep", "plan", "memory_read"]
        );
        assert_eq!(tools.mutating(), Vec::<String>::new());
        let call = |args: &str| ToolCall {
            id: CallId("c1".into()),
            name: MEMORY_READ.into(),
            arguments: args.into(),
        };
        let run = |args: &str| tools.execute(call(args), CancellationToken::new());
        assert_eq!(
            run(r#"{"name":"style"}"#).await,
            ToolOutcome {
                status: ToolStatus::Ok,
                content: "user/style: Prefers short answers\n\nBe brief.\nNo lists.".into(),
            }
        );
        assert_eq!(
            run(r#"{"name":"style","scope":"project"}"#).await,
            ToolOutcome {
                status: ToolStatus::Error,
                content: "no memory note `style`".into(),
            }
        );
        assert_eq!(
            run(r#"{"name":"../etc/passwd"}"#).await.status,
            ToolStatus::Error
        );
    }
}
