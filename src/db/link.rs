//! Links between committed documents found after their insert: a side index that learns of a
//! duplicate later than the writer's decision (the semantic channel's background indexer, in a
//! database created with `--groups union`) links the two documents here. Each link adds the edge
//! and merges the two groups (the smaller group id, i.e. the earliest member, stays canonical), and
//! the links of one call are committed as one batch through the writer's own commit.
//!
//! Invariants (those of every group, `check.rs`): an edge joins two live documents of one group; a
//! group is a connected component of the edges (text and later links alike, so a delete splits a
//! group over both); its id is its smallest member. A link is idempotent — a pair already linked
//! changes nothing — so a caller that crashes after linking and before recording that it did may
//! link the same pairs again after recovery.

use crate::error::Result;

use super::groups::merge_groups;
use super::handle::Db;
use super::pending::Pending;
use super::state::{State, Writer};

impl Db {
    /// Links each pair `(a, b)` of live committed documents (pairs naming a document that is not
    /// live are skipped), committed as one batch. Call with the writer lock held (`w`). Returns
    /// the number of new edges.
    pub(super) fn link_committed(&self, w: &mut Writer, pairs: &[(u64, u64)]) -> Result<usize> {
        if pairs.is_empty() {
            return Ok(0);
        }
        Db::mutation(w, "link", |w| {
            let mut pend = Pending::default();
            let added = {
                let st = self.inner.state.read();
                let mut n = 0;
                for &(a, b) in pairs {
                    if a != b && st.docs.contains_key(&a) && st.docs.contains_key(&b) && link_pair(&st, w, &mut pend, a, b) {
                        n += 1;
                    }
                }
                n
            };
            self.commit(w, pend, Vec::new())?;
            Ok(added)
        })
    }
}

/// Adds the edge a–b (unless it exists) and merges the two groups. Returns whether it was new.
fn link_pair(st: &State, w: &mut Writer, pend: &mut Pending, a: u64, b: u64) -> bool {
    if w.edges.get(&a).is_some_and(|v| v.contains(&b)) {
        return false;
    }
    w.edges.entry(a).or_default().push(b);
    w.edges.entry(b).or_default().push(a);
    pend.edges_added.push((a, b));
    let (ga, gb) = (pend.group_of(st, a), pend.group_of(st, b));
    if ga == gb {
        return true;
    }
    merge_groups(st, w, pend, &[ga, gb], None);
    true
}
