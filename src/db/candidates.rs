//! The near-duplicate candidate search: one [`CandidateSource`] a handle, chosen at open — the
//! SimHash tables ([`Tables`], the default), or the source a side index provides in their place
//! ([`SideIndex::candidate_source`](super::side::SideIndex::candidate_source): the other methods'
//! bucket index). The writer and the queries ask the source and never branch on which it is.
//! Also the rule of a query and the method's comparison of two fingerprints.

use crate::error::{Error, Result};
use crate::failpoint;
use crate::fingerprint::method::Method;
use crate::fingerprint::similarity::{compare, for_each_within, MethodScore, Rule};
use crate::fingerprint::Fingerprint;
use crate::index::ProbeLists;

use super::handle::Db;
use super::options::check_k;
use super::pending::Pending;
use super::state::State;

/// [`CandidateSource::many`]'s answer: the snapshot's next id and each fingerprint's candidates.
pub(crate) type Many = (u64, Vec<Vec<(u64, MethodScore)>>);

/// Where near-duplicate candidates come from. Every answer is a superset of the documents that
/// satisfy the rule (the caller verifies each by exact Jaccard); each document at most once.
pub(crate) trait CandidateSource: Send + Sync {
    /// The published documents that may satisfy `rule` against `fp`: `f(id, score)`.
    fn published(&self, db: &Db, st: &State, fp: &Fingerprint, rule: Rule, f: &mut dyn FnMut(u64, MethodScore)) -> Result<()>;

    /// [`CandidateSource::published`] for the documents with an id ≥ `upto` (those committed
    /// after a worker's snapshot, which the writer completes its precheck with). The caller has
    /// checked that `upto` is at or above [`State::recent_floor`].
    fn since(&self, db: &Db, st: &State, fp: &Fingerprint, rule: Rule, upto: u64, f: &mut dyn FnMut(u64, MethodScore)) -> Result<()>;

    /// The members of the batch being decided (positions in `Pending::new_docs`) that may satisfy
    /// `rule` against `fp`, with their scores.
    fn in_batch(&self, db: &Db, pend: &Pending, fp: &Fingerprint, rule: Rule, near: &mut Vec<(usize, MethodScore)>);

    /// The candidates of several fingerprints against one snapshot of the published state: the
    /// snapshot's next id and each fingerprint's candidates, or `None` to search them one at a
    /// time. By default every [`CandidateSource::published`] under one read of the state.
    fn many(&self, db: &Db, fps: &[&Fingerprint], rule: Rule) -> Result<Option<Many>> {
        let st = db.inner.state.read();
        st.whole()?;
        let mut cands = Vec::with_capacity(fps.len());
        for fp in fps {
            let mut c = Vec::new();
            self.published(db, &st, fp, rule, &mut |id, s| c.push((id, s)))?;
            cands.push(c);
        }
        Ok(Some((st.next_id, cands)))
    }
}

/// The SimHash tables as the candidate source: the mirror (or RocksDB's tables without it) for the
/// published documents, the recent SimHashes for those since a snapshot, the batch's SimHashes.
pub(crate) struct Tables;

/// The handle's source when no side index provides one.
static TABLES: Tables = Tables;

impl CandidateSource for Tables {
    fn published(&self, db: &Db, st: &State, fp: &Fingerprint, rule: Rule, f: &mut dyn FnMut(u64, MethodScore)) -> Result<()> {
        db.probe(st, fp.simhash, rule.max_distance, |id, d| f(id, MethodScore::Hamming(d)))
    }

    /// The writer's hot loop (every gap entry, for every document): the SimHashes of the recent
    /// deque's two slices from `upto`'s position on, scanned by `for_each_within`.
    fn since(&self, _db: &Db, st: &State, fp: &Fingerprint, rule: Rule, upto: u64, f: &mut dyn FnMut(u64, MethodScore)) -> Result<()> {
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

    /// One popcount a member (no method dispatch for every pair of the batch: this runs in the
    /// single writer, once per document and batch member).
    fn in_batch(&self, _db: &Db, pend: &Pending, fp: &Fingerprint, rule: Rule, near: &mut Vec<(usize, MethodScore)>) {
        for_each_within(&pend.simhashes, fp.simhash, rule.max_distance, |i, d| {
            near.push((i, MethodScore::Hamming(d)))
        });
    }

    /// On the mirror, one set of probe lists for all the fingerprints (`probe_many`: each bucket
    /// is read once for every fingerprint that probes it): the mutable delta under the state's
    /// read lock, the sealed runs after it with no lock held (exact because ids are never reused:
    /// the caller's snapshot drops a candidate removed meanwhile). Without the mirror, `None`.
    fn many(&self, db: &Db, fps: &[&Fingerprint], rule: Rule) -> Result<Option<Many>> {
        let mut lists = ProbeLists::new(fps.iter().map(|fp| fp.simhash).collect(), rule.max_distance);
        let snapshot = {
            let st = db.inner.state.read();
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

impl Db {
    /// The handle's candidate source: a side index's (found when the side indexes were
    /// registered at open), or the SimHash tables.
    pub(super) fn source(&self) -> &dyn CandidateSource {
        self.inner.sides().candidate_source().unwrap_or(&TABLES)
    }

    /// The rule of a query: `k` (default: the database's) and `s` (default: the spec's).
    pub(super) fn rule(&self, k: Option<u32>, min_shared: Option<u32>) -> Result<Rule> {
        let max_distance = check_k(k.unwrap_or(self.inner.config.max_distance))?;
        let default_s = match &self.inner.spec.method {
            Method::Broder(b) | Method::BroderCharikar(b, _) => b.min_shared,
            _ => 1,
        };
        let min_shared = min_shared.unwrap_or(default_s);
        if let Method::Broder(b) | Method::BroderCharikar(b, _) = &self.inner.spec.method {
            if !(1..=b.supershingles).contains(&min_shared) {
                return Err(Error::InvalidOption {
                    name: "min_shared",
                    message: format!("must be within 1..={} (the supershingles), got {min_shared}", b.supershingles),
                });
            }
        }
        Ok(Rule { max_distance, min_shared })
    }

    /// The method's comparison of a fingerprint with a stored (or pending) document.
    pub(super) fn compare_with(&self, fp: &Fingerprint, simhash: u64, sketch: &[u64]) -> MethodScore {
        compare(&self.inner.spec.method, fp.simhash, &fp.sketch, simhash, sketch)
    }

    /// Every published document that may satisfy `rule` against `fp`, once: `f(id, score)`
    /// ([`CandidateSource::published`] of the handle's source).
    pub(super) fn candidates(&self, st: &State, fp: &Fingerprint, rule: Rule, mut f: impl FnMut(u64, MethodScore)) -> Result<()> {
        self.source().published(self, st, fp, rule, &mut f)
    }
}
