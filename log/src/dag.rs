//! The branch DAG of a session: one node per entry, an edge from each parent to its
//! child. Built from the explicit `parent` of every entry, never inferred.

use std::collections::HashMap;
use std::path::PathBuf;

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};

use super::entry::Entry;
use super::error::LogError;
use super::reader::SessionLog;
use xcsh_machine::EntryId;

/// The parent→child graph of a session's entries. Node `i` is `entries[i]`, so every
/// list this returns is in file order.
#[derive(Debug, Clone)]
pub struct Dag {
    /// The session file, named in errors (empty when built from bare entries).
    path: PathBuf,
    /// Node weight: (id, parent id as recorded).
    graph: DiGraph<(EntryId, Option<EntryId>), ()>,
    nodes: HashMap<EntryId, NodeIndex>,
}

impl Dag {
    /// Builds the DAG of `entries`. A parent that is not among them gets no edge (the
    /// verifying reader never lets that happen); with duplicate ids the later wins.
    pub fn build(entries: &[Entry]) -> Dag {
        let mut graph = DiGraph::with_capacity(entries.len(), entries.len());
        let mut nodes = HashMap::with_capacity(entries.len());
        for e in entries {
            let node = graph.add_node((e.id, e.parent));
            nodes.insert(e.id, node);
        }
        for (i, e) in entries.iter().enumerate() {
            if let Some(&parent) = e.parent.as_ref().and_then(|p| nodes.get(p)) {
                graph.add_edge(parent, NodeIndex::new(i), ());
            }
        }
        Dag {
            path: PathBuf::new(),
            graph,
            nodes,
        }
    }

    /// Builds the DAG of a session log; errors name its file.
    pub fn from_log(log: &SessionLog) -> Dag {
        Dag {
            path: log.path.clone(),
            ..Dag::build(&log.entries)
        }
    }

    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }

    pub fn contains(&self, id: EntryId) -> bool {
        self.nodes.contains_key(&id)
    }

    fn id(&self, node: NodeIndex) -> EntryId {
        self.graph[node].0
    }

    fn ids(&self, mut nodes: Vec<NodeIndex>) -> Vec<EntryId> {
        nodes.sort_unstable();
        nodes.into_iter().map(|n| self.id(n)).collect()
    }

    fn unknown(&self, id: EntryId) -> LogError {
        LogError::UnknownEntry {
            path: self.path.clone(),
            id,
        }
    }

    /// The children of `id` in file order (empty for a leaf or an unknown id).
    pub fn children(&self, id: EntryId) -> Vec<EntryId> {
        match self.nodes.get(&id) {
            Some(&n) => self.ids(
                self.graph
                    .neighbors_directed(n, Direction::Outgoing)
                    .collect(),
            ),
            None => Vec::new(),
        }
    }

    /// The parent of `id`, if it has one among the entries.
    pub fn parent(&self, id: EntryId) -> Option<EntryId> {
        let &n = self.nodes.get(&id)?;
        self.graph
            .neighbors_directed(n, Direction::Incoming)
            .next()
            .map(|p| self.id(p))
    }

    /// Entries with no children, in file order.
    pub fn leaves(&self) -> Vec<EntryId> {
        self.with_children(|mut children| children.next().is_none())
    }

    /// Entries with more than one child, in file order.
    pub fn branch_points(&self) -> Vec<EntryId> {
        self.with_children(|mut children| children.nth(1).is_some())
    }

    /// The entries whose children are `such`, in file order.
    fn with_children<'a>(
        &'a self,
        such: impl Fn(petgraph::graph::Neighbors<'a, ()>) -> bool,
    ) -> Vec<EntryId> {
        self.graph
            .node_indices()
            .filter(|&n| such(self.graph.neighbors_directed(n, Direction::Outgoing)))
            .map(|n| self.id(n))
            .collect()
    }

    /// The ids from the root down to `id` (root first, `id` last).
    pub fn path_to_root(&self, id: EntryId) -> Result<Vec<EntryId>, LogError> {
        let mut path = Vec::new();
        let mut current = Some(id);
        while let Some(c) = current {
            let &n = self.nodes.get(&c).ok_or_else(|| self.unknown(c))?;
            if path.len() >= self.graph.node_count() {
                return Err(LogError::Cycle {
                    path: self.path.clone(),
                    id,
                });
            }
            path.push(c);
            current = self.graph[n].1;
        }
        path.reverse();
        Ok(path)
    }

    /// Whether the parent links form no cycle (always true for a verified log).
    pub fn is_acyclic(&self) -> bool {
        petgraph::algo::toposort(&self.graph, None).is_ok()
    }

    /// The deepest entry on both paths to the root (`None` if they share no root).
    pub fn common_ancestor(&self, a: EntryId, b: EntryId) -> Result<Option<EntryId>, LogError> {
        let pa = self.path_to_root(a)?;
        let pb = self.path_to_root(b)?;
        Ok(pa
            .iter()
            .zip(&pb)
            .take_while(|(x, y)| x == y)
            .last()
            .map(|(x, _)| *x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writer::testutil::{header, sample_bodies, ts};
    use crate::{Body, Record, SessionWriter, read_session};

    /// 0 session ─ 1 prompt ─ 2 step ┬ 3 label
    ///                               └ 4 run_finished
    ///            └ 5 branch(from 4) ─ 6 steer
    fn branched_log(dir: &std::path::Path) -> SessionLog {
        let path = dir.join("s.jsonl");
        let mut w = SessionWriter::create(&path, header(), ts(0)).unwrap();
        for ((n, body), parent) in (1..).zip(sample_bodies()).zip([0, 1, 2, 2]) {
            w.append(EntryId(parent), ts(n), &body).unwrap();
        }
        let (branch, _) = w
            .append(
                EntryId(1),
                ts(5),
                &Body::Record(Record::Branch {
                    from_leaf: EntryId(4),
                }),
            )
            .unwrap();
        w.append(
            branch,
            ts(6),
            &Body::Record(Record::Steer { text: "s".into() }),
        )
        .unwrap();
        drop(w);
        read_session(&path).unwrap()
    }

    #[test]
    fn a_branch_record_forks_the_dag_at_its_parent() {
        let dir = tempfile::tempdir().unwrap();
        let log = branched_log(dir.path());
        let dag = Dag::from_log(&log);
        assert_eq!(dag.len(), 7);
        assert!(dag.is_acyclic());
        assert_eq!(dag.leaves(), vec![EntryId(3), EntryId(4), EntryId(6)]);
        assert_eq!(dag.branch_points(), vec![EntryId(1), EntryId(2)]);
        assert_eq!(dag.children(EntryId(1)), vec![EntryId(2), EntryId(5)]);
        assert_eq!(dag.children(EntryId(6)), vec![]);
        assert_eq!(dag.parent(EntryId(5)), Some(EntryId(1)));
        assert_eq!(dag.parent(EntryId(0)), None);
        assert_eq!(
            dag.path_to_root(EntryId(6)).unwrap(),
            vec![EntryId(0), EntryId(1), EntryId(5), EntryId(6)]
        );
        assert_eq!(
            dag.path_to_root(EntryId(4)).unwrap(),
            vec![EntryId(0), EntryId(1), EntryId(2), EntryId(4)]
        );
        assert_eq!(
            dag.common_ancestor(EntryId(6), EntryId(4)).unwrap(),
            Some(EntryId(1))
        );
        assert_eq!(
            dag.common_ancestor(EntryId(3), EntryId(4)).unwrap(),
            Some(EntryId(2))
        );
        assert_eq!(log.leaf(), EntryId(6));
    }

    #[test]
    fn the_path_to_an_unknown_entry_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let log = branched_log(dir.path());
        let err = Dag::from_log(&log).path_to_root(EntryId(42)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{}: there is no entry 42", log.path.display())
        );
    }

    #[test]
    fn parent_links_that_loop_are_detected() {
        let dir = tempfile::tempdir().unwrap();
        let mut entries = branched_log(dir.path()).entries;
        // Unverified entries: make the header a child of entry 6.
        entries[0].parent = Some(EntryId(6));
        let dag = Dag::build(&entries);
        assert!(!dag.is_acyclic());
        assert!(matches!(
            dag.path_to_root(EntryId(6)),
            Err(LogError::Cycle { id: EntryId(6), .. })
        ));
    }
}
