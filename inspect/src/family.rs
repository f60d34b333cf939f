//! The family views' shared part (SPEC.md §29.6): a member opened through its
//! derived index for the views built on it (`tree`, `stats`), its links read from
//! the `task` results' lines only, for the one loader `xcsh_log::family`.

use std::collections::HashMap;
use std::path::Path;

use xcsh_log::family::{LinkRef, Opened, TASK_TOOL};
use xcsh_log::index::{Kind, SessionIndex, open_index};
use xcsh_log::{Body, LogError, Record};
use xcsh_machine::CallId;

use crate::common::entry_at;

/// The session at `path` opened through its index (built or extended when needed):
/// its header (line 1) and its `task` results' links, each read at its offset.
pub fn open_indexed(path: &Path) -> Result<Opened<SessionIndex>, LogError> {
    let index = open_index(path)?;
    let Opened { header, links, .. } = opened_in(path, &index)?;
    Ok(Opened {
        header,
        links,
        data: index,
    })
}

/// What [`open_indexed`] reads, from an index opened already (`sessions`, which
/// opens each one for its summary).
pub fn opened_in(path: &Path, index: &SessionIndex) -> Result<Opened<()>, LogError> {
    let d = index.data();
    let mut file = std::fs::File::open(path).map_err(|e| LogError::io(path, e))?;
    let header = match entry_at(&mut file, d, 0).map(|e| e.body) {
        Some(Body::Record(Record::Session(h))) => h,
        _ => {
            return Err(LogError::NotASession {
                path: path.to_path_buf(),
            });
        }
    };
    let mut dispatches = HashMap::new();
    let mut links = Vec::new();
    // Most sessions made no `task` call: then there is nothing to look for.
    let delegates = d.calls.iter().any(|c| d.str(&c.name) == TASK_TOOL);
    let scanned = if delegates { 0..d.len() } else { 0..0 };
    for pos in scanned {
        match d.kind(pos) {
            // Only a `task` call can have a child: the other dispatches (nearly all)
            // are not kept.
            Kind::ToolDispatched => {
                let call = &d.calls[d.aux(pos)];
                if d.str(&call.name) == TASK_TOOL {
                    dispatches.insert(d.str(&call.call_id).to_string(), d.id(pos));
                }
            }
            Kind::ToolResult if d.str(&d.tools[d.aux(pos)].name) == TASK_TOOL => {
                if let Some(Body::Record(Record::ToolResult(r))) =
                    entry_at(&mut file, d, pos).map(|e| e.body)
                    && let Some(child) = r.child
                {
                    links.push(LinkRef {
                        result: d.id(pos),
                        dispatch: dispatches.get(&r.call_id.0).copied(),
                        call_id: CallId(r.call_id.0),
                        child,
                    });
                }
            }
            _ => {}
        }
    }
    Ok(Opened {
        header: *header,
        links,
        data: (),
    })
}
