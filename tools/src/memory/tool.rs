//! `memory_read {name, scope?}`: a memory note in full (SPEC.md §28.3), read-only
//! and never gated, offered only when memory is on: [`MemoryTools`] adds it to
//! another executor's tools and hands every other call to that executor.

use std::sync::Arc;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;
use xcsh_log::memory::MemoryScope;
use xcsh_machine::{CallId, ToolCall, ToolOutcome, ToolStatus};
use xcsh_ports::{BoxFuture, ToolExecutor, ToolProgress, ToolSpec};

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

/// Another executor's tools plus `memory_read` over `store`.
pub struct MemoryTools {
    inner: Arc<dyn ToolExecutor>,
    store: MemoryStore,
}

impl MemoryTools {
    pub fn new(inner: Arc<dyn ToolExecutor>, store: MemoryStore) -> MemoryTools {
        MemoryTools { inner, store }
    }

    fn read(&self, arguments: &str) -> ToolOutcome {
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
        match self.store.read(scope, &args.name) {
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
}

impl ToolExecutor for MemoryTools {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = self.inner.specs();
        specs.push(ToolSpec {
            name: MEMORY_READ.into(),
            description: DESCRIPTION.into(),
            parameters: schema(PARAMS),
        });
        specs
    }

    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        if call.name == MEMORY_READ {
            let outcome = self.read(&call.arguments);
            return Box::pin(async move { outcome });
        }
        self.inner.execute(call, cancel)
    }

    fn execute_with_progress(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        progress: ToolProgress,
    ) -> BoxFuture<ToolOutcome> {
        if call.name == MEMORY_READ {
            return self.execute(call, cancel);
        }
        self.inner.execute_with_progress(call, cancel, progress)
    }

    fn execute_dispatched(
        &self,
        call: ToolCall,
        dispatch: xcsh_log::blobs::Dispatch,
        cancel: CancellationToken,
        progress: ToolProgress,
    ) -> BoxFuture<ToolOutcome> {
        if call.name == MEMORY_READ {
            return self.execute(call, cancel);
        }
        self.inner
            .execute_dispatched(call, dispatch, cancel, progress)
    }

    fn mutating(&self) -> Vec<String> {
        self.inner.mutating()
    }

    fn take_file_changes(&self, id: &CallId) -> Vec<xcsh_log::FileChange> {
        self.inner.take_file_changes(id)
    }

    fn take_child_run(&self, id: &CallId) -> Option<xcsh_log::ChildRun> {
        self.inner.take_child_run(id)
    }

    fn results_durable(&self, dispatches: &[xcsh_log::blobs::Dispatch]) {
        self.inner.results_durable(dispatches);
    }

    fn before_images(&self) -> Option<xcsh_log::blobs::BlobStore> {
        self.inner.before_images()
    }

    fn sandbox(&self) -> Option<xcsh_machine::SandboxConfig> {
        self.inner.sandbox()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestTools;
    use xcsh_log::memory::ProposedNote;

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
