//! Links between committed documents found after their insert: a side index that learns of a
//! duplicate later than the writer's decision (the semantic channel's background indexer, in a
//! database created with `--groups union`) links the two documents here. Each link adds the edge
//! and merges the two groups (the smaller group id, i.e. the earliest member, stays canonical), and
//! the links of one call are committed as one batch through the writer's own commit.
//!
//! A side index's batch part may hold a link back (`BatchPart::holds_link`): one that would join
//! two groups across a curator's `distinct` decision is not made: the edge is held under the
//! decision (`side::decisions`), as a verified duplicate of a new document would be, and made when
//! the decision is undone.
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
use super::side::Parts;
use super::state::{State, Writer};

impl Db {
    /// Links each pair `(a, b)` of live committed documents (pairs naming a document that is not
    /// live are skipped), committed as one batch. Call with the writer lock held (`w`). Returns
    /// the number of new edges.
    // Its one caller is the semantic channel's union links.
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(super) fn link_committed(&self, w: &mut Writer, pairs: &[(u64, u64)]) -> Result<usize> {
        if pairs.is_empty() {
            return Ok(0);
        }
        Db::mutation(w, "link", |w| {
            let mut pend = Pending::default();
            let mut parts = Parts::begin(&self.inner.sides);
            let added = {
                let st = self.inner.state.read();
                let mut n = 0;
                for &(a, b) in pairs {
                    if a == b || !st.docs.contains_key(&a) || !st.docs.contains_key(&b) {
                        continue;
                    }
                    // A curator's `distinct` decision outranks a later link: the edge is held.
                    if parts.holds_link(&st, &pend, a, b) {
                        continue;
                    }
                    if link_pair(&st, w, &mut pend, a, b) {
                        n += 1;
                    }
                }
                n
            };
            self.commit(w, pend, parts, Vec::new())?;
            Ok(added)
        })
    }
}

/// Adds the edge a–b (unless it exists) and merges the two groups. Returns whether it was new.
#[cfg_attr(not(feature = "semantic"), allow(dead_code))]
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

#[cfg(test)]
mod tests {
    use crate::{CreateOptions, Db, DecisionKind};

    /// Three unrelated texts: no verified edge joins any two.
    fn text(i: usize) -> String {
        (0..60)
            .map(|j| format!("t{i}w{}", (j * 13 + j * j) % 97))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A later link (the semantic channel's union link) between documents a curator called
    /// `distinct` is held, not made: the groups stay apart and `check` is clean; undoing the
    /// decision makes the held link. A pair without a decision is linked as before.
    #[test]
    fn a_later_link_is_held_by_a_distinct_decision_and_made_by_its_undo() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
        for (i, k) in ["a", "b", "c"].iter().enumerate() {
            db.insert(k, &text(i)).unwrap();
        }
        let id = |k: &str| db.get(k).unwrap().unwrap().id;
        let group = |k: &str| db.get(k).unwrap().unwrap().group.id;
        let (a, b, c) = (id("a"), id("b"), id("c"));
        assert!(group("a") != group("b") && group("b") != group("c"));
        db.decisions()
            .decide("a", "b", DecisionKind::Distinct, Some("two papers"), None)
            .unwrap();
        {
            let mut w = db.lock_writer().unwrap();
            assert_eq!(db.link_committed(&mut w, &[(a, b), (b, c)]).unwrap(), 1);
        }
        assert_ne!(group("a"), group("b"));
        assert_eq!(group("b"), group("c"));
        assert_eq!(db.check().unwrap().faults, vec![]);
        // the held edge survives a reopen and is made by the undo
        let path = dir.path().join("db");
        drop(db);
        let db = Db::open(&path).unwrap();
        let group = |k: &str| db.get(k).unwrap().unwrap().group.id;
        db.decisions().undo("a", "b").unwrap().unwrap();
        assert_eq!(group("a"), group("b"));
        assert_eq!(group("b"), group("c"));
        assert_eq!(db.check().unwrap().faults, vec![]);
    }
}
