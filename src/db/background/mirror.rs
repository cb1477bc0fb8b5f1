//! The in-memory mirror's merges (`index::mem::MemTables`): one at a time, on a thread of its own.

use crate::error::Result;
use crate::index::mem::{MemTables, MergeJob};

use super::Background;
use super::View;
use crate::db::state::Writer;

/// The mirror's merges as background work (nothing to write at a flush or a close: the mirror is
/// rebuilt at open).
pub(in crate::db) struct MirrorMerge;

impl Background for MirrorMerge {
    fn after_commit(&self, inner: &View<'_>, w: &mut Writer) -> Result<()> {
        merge_mirror(inner, w);
        Ok(())
    }
}

/// The mirror's merges (`MemTables::start_merge`): one at a time, built on a thread of its own
/// so that neither the writer nor the readers wait for it. Installs a finished one (under the
/// write lock: a pointer swap and the dead set), then starts the next when due. A merge thread
/// that failed gives its entries back to the delta; one that cannot be started runs here.
fn merge_mirror(inner: &View<'_>, w: &mut Writer) {
    if w.merge.as_ref().is_some_and(|h| h.is_finished()) {
        if let Some(h) = w.merge.take() {
            let done = h.join();
            let mut st = inner.state.write();
            if let Some(t) = st.tables.as_mut() {
                match done {
                    Ok(Some(run)) => {
                        t.finish_merge(run);
                    }
                    Ok(None) | Err(_) => t.abandon_merge(),
                }
            }
        }
    }
    if w.merge.is_some() || !inner.state.read().tables.as_ref().is_some_and(MemTables::merge_due) {
        return;
    }
    let Some(job) = inner.state.write().tables.as_mut().and_then(MemTables::start_merge) else {
        return;
    };
    match super::job::spawn_or_run("fpdb-mirror-merge", job, MergeJob::run) {
        Ok(h) => w.merge = Some(h),
        Err(run) => {
            if let Some(t) = inner.state.write().tables.as_mut() {
                t.finish_merge(run);
            }
        }
    }
}
