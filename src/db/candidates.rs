//! The near-duplicate candidate search: one [`CandidateSource`] a handle, chosen at open — the
//! SimHash tables ([`Tables`], the default), or the source a side index provides in their place
//! ([`SideIndex::candidate_source`](super::side::SideIndex::candidate_source): the other methods'
//! bucket index). The writer and the queries ask the source and never branch on which it is.

use parking_lot::RwLock;

use crate::error::Result;
use crate::failpoint;
use crate::fingerprint::similarity::{for_each_within, MethodScore, Rule};
use crate::fingerprint::Fingerprint;
use crate::index::ProbeLists;

use super::base::Base;
use super::pending::Pending;
use super::state::State;

/// [`CandidateSource::many`]'s answer: the snapshot's next id and each fingerprint's candidates.
pub(crate) type Many = (u64, Vec<Vec<(u64, MethodScore)>>);

/// Where near-duplicate candidates come from. Every answer is a superset of the documents that
/// satisfy the rule (the caller verifies each by exact Jaccard); each document at most once.
pub(crate) trait CandidateSource: Send + Sync {
    /// The published documents that may satisfy `rule` against `fp`: `f(id, score)`.
    fn published(&self, base: &Base, st: &State, fp: &Fingerprint, rule: Rule, f: &mut dyn FnMut(u64, MethodScore)) -> Result<()>;

    /// [`CandidateSource::published`] for the documents with an id ≥ `upto` (those committed
    /// after a worker's snapshot, which the writer completes its precheck with). The caller has
    /// checked that `upto` is at or above [`State::recent_floor`].
    fn since(&self, base: &Base, st: &State, fp: &Fingerprint, rule: Rule, upto: u64, f: &mut dyn FnMut(u64, MethodScore)) -> Result<()>;

    /// The candidates of several fingerprints against one snapshot of the published state: the
    /// snapshot's next id and each fingerprint's candidates, or `None` to search them one at a
    /// time. By default every [`CandidateSource::published`] under one read of the state.
    fn many(&self, base: &Base, state: &RwLock<State>, fps: &[&Fingerprint], rule: Rule) -> Result<Option<Many>> {
        let st = state.read();
        st.whole()?;
        let mut cands = Vec::with_capacity(fps.len());
        for fp in fps {
            let mut c = Vec::new();
            self.published(base, &st, fp, rule, &mut |id, s| c.push((id, s)))?;
            cands.push(c);
        }
        Ok(Some((st.next_id, cands)))
    }
}

/// The SimHash tables as the candidate source: the mirror (or RocksDB's tables without it) for the
/// published documents, the recent SimHashes for those since a snapshot, the batch's SimHashes.
pub(crate) struct Tables;

/// The handle's source when no side index provides one.
pub(super) static TABLES: Tables = Tables;

impl CandidateSource for Tables {
    fn published(&self, base: &Base, st: &State, fp: &Fingerprint, rule: Rule, f: &mut dyn FnMut(u64, MethodScore)) -> Result<()> {
        base.probe(st, fp.simhash, rule.max_distance, |id, d| f(id, MethodScore::Hamming(d)))
    }

    /// The writer's hot loop (every gap entry, for every document): the SimHashes of the recent
    /// deque's two slices from `upto`'s position on, scanned by `for_each_within`.
    fn since(&self, _base: &Base, st: &State, fp: &Fingerprint, rule: Rule, upto: u64, f: &mut dyn FnMut(u64, MethodScore)) -> Result<()> {
        let start = st.recent_ids.partition_point(|&id| id < upto);
        let (front, back) = st.recent_fps.as_slices();
        let parts = match front.get(start..) {
            Some(fr) => [(fr, start), (back, front.len())],
            None => [(&front[..0], 0), (back.get(start - front.len()..).unwrap_or(&[]), start)],
        };
        for (part, offset) in parts {
            for_each_within(part, fp.simhash, rule.max_distance, |i, d| {
                if let Some(&id) = st.recent_ids.get(offset + i) {
                    f(id, MethodScore::Hamming(d));
                }
            });
        }
        Ok(())
    }

    /// On the mirror, one set of probe lists for all the fingerprints (`probe_many`: each bucket
    /// is read once for every fingerprint that probes it): the mutable delta under the state's
    /// read lock, the sealed runs after it with no lock held (exact because ids are never reused:
    /// the caller's snapshot drops a candidate removed meanwhile). Without the mirror, `None`.
    fn many(&self, _base: &Base, state: &RwLock<State>, fps: &[&Fingerprint], rule: Rule) -> Result<Option<Many>> {
        let mut lists = ProbeLists::new(fps.iter().map(|fp| fp.simhash).collect(), rule.max_distance);
        let snapshot = {
            let st = state.read();
            st.tables.as_ref().map(|tables| {
                let mut cands: Vec<Vec<(u64, MethodScore)>> = vec![Vec::new(); fps.len()];
                tables.probe_many_delta(&mut lists, |i, id, _, d| cands[i].push((id, MethodScore::Hamming(d))));
                (st.next_id, tables.sealed(), cands)
            })
        };
        let Some((upto, sealed, mut cands)) = snapshot else {
            return Ok(None);
        };
        sealed.probe_many_lists(&mut lists, |i, id, _, d| cands[i].push((id, MethodScore::Hamming(d))));
        drop(sealed);
        failpoint::pause_point("precheck.unlocked");
        Ok(Some((upto, cands)))
    }
}

/// The SimHash tables' candidates among the members of the batch being decided (positions in
/// `Pending::new_docs`), when no side index's batch part answers (`side::BatchPart::in_batch`):
/// one popcount a member (no method dispatch for every pair of the batch: this runs in the
/// single writer, once per document and batch member).
pub(super) fn tables_in_batch(pend: &Pending, fp: &Fingerprint, rule: Rule, near: &mut Vec<(usize, MethodScore)>) {
    for_each_within(&pend.simhashes, fp.simhash, rule.max_distance, |i, d| {
        near.push((i, MethodScore::Hamming(d)))
    });
}
