//! One batch's changes as the writer decides them, before the commit: the new documents, the
//! deletes, the regrouped documents and edges, the segment changes.

use std::collections::{HashMap, HashSet};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::fingerprint::biblio::Biblio;
use crate::fingerprint::Fingerprint;
use crate::intmap::IntMap;

use super::state::State;

pub(super) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

pub(super) struct PendingDoc {
    pub(super) id: u64,
    pub(super) key: String,
    pub(super) fp: Fingerprint,
    pub(super) meta: Option<String>,
    /// Its bibliographic values (stored in its record; the metadata index's keys).
    pub(super) biblio: Biblio,
    /// What the side indexes kept of its text, each in its encoding (`SideIndex::keep_text`, db/side/mod.rs).
    pub(super) text: super::types::KeptTexts,
    pub(super) group: u64,
    pub(super) alive: bool,
}

/// One batch's changes before they are committed.
#[derive(Default)]
pub(super) struct Pending {
    pub(super) new_docs: Vec<PendingDoc>,
    /// `new_docs[i].fp.simhash` at `i` (until the commit drops dead entries): the writer scans
    /// these for every document of the batch.
    pub(super) simhashes: Vec<u64>,
    pub(super) keys: HashMap<String, u64>,
    pub(super) deleted: HashSet<u64>,
    pub(super) deleted_keys: Vec<String>,
    pub(super) regroup: IntMap<u64, u64>,
    pub(super) edges_added: Vec<(u64, u64)>,
    pub(super) edges_removed: Vec<(u64, u64)>,
    pub(super) touched_groups: HashSet<u64>,
    pub(super) seg_created: Vec<u32>,
    pub(super) seg_lengths: Vec<(u32, u64)>,
    pub(super) seg_dropped: Vec<u32>,
    /// A side index has entries of its own in the batch (a curator's decision that moves no
    /// document still commits).
    pub(super) side_changed: bool,
}

impl Pending {
    /// The batch's document with this id. `new_docs` is in id order (ids are allocated as documents
    /// are pushed), so this is a binary search: the writer asks it for every member of every group a
    /// new document joins.
    fn new_doc(&self, id: u64) -> Option<&PendingDoc> {
        self.new_docs.binary_search_by_key(&id, |p| p.id).ok().map(|i| &self.new_docs[i])
    }

    pub(super) fn group_of(&self, st: &State, id: u64) -> u64 {
        if let Some(&g) = self.regroup.get(&id) {
            return g;
        }
        if let Some(p) = self.new_doc(id) {
            return p.group;
        }
        st.docs.get(&id).map_or(id, |m| m.group)
    }

    pub(super) fn set_group(&mut self, id: u64, g: u64) {
        self.regroup.insert(id, g);
    }

    /// The key of a live document, committed or earlier in this batch (`None`: not live).
    pub(super) fn key_of(&self, st: &State, id: u64) -> Option<String> {
        match self.new_doc(id) {
            Some(p) => Some(p.key.clone()),
            None => st.docs.get(&id).map(|m| m.key.to_string()),
        }
    }
}
