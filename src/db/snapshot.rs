//! A query's verification off the lock: the candidates are found under the
//! state's read lock, each with what its verification reads (its key, SimHash and shingle
//! location), together with the segment readers (`Arc`s: a segment compacted away meanwhile stays
//! readable through them, its file unlinked but still open and mapped). The lock is then released
//! and the segment reads and exact Jaccard (or containment) run on that snapshot, so a long
//! verification never delays the writer's publish, nor the readers queued behind it. The answer is
//! the one the state held when the lock was taken: whole batches, as every read.

use std::time::Instant;

use crate::error::Result;
use crate::fingerprint::biblio::MatchKind;
use crate::fingerprint::similarity::{jaccard_at_least, MethodScore};
use crate::fingerprint::Fingerprint;
use crate::store::segment::SegmentSet;
use crate::store::ShingleLoc;

use super::options::QueryOptions;
use super::state::State;
use super::types::{Hit, QueryAnswer};

/// A published document to verify.
pub(super) struct Candidate {
    pub(super) id: u64,
    pub(super) score: MethodScore,
    pub(super) key: std::sync::Arc<str>,
    pub(super) simhash: u64,
    pub(super) loc: ShingleLoc,
}

/// The candidates of one query with the segment readers that hold their shingle sets.
pub(super) struct Snapshot {
    segs: SegmentSet,
    cands: Vec<Candidate>,
    /// Candidates were dropped while they were gathered ([`Nearest`]): the answer is truncated.
    dropped: bool,
}

/// The nearest `max` candidates (by distance, then id), kept while they are gathered under the
/// state's read lock: at most 2 × `max` are held at any time, and only the kept ones get their
/// key copied ([`Snapshot::take`]). Without a cap, every candidate.
pub(super) struct Nearest {
    max: Option<usize>,
    cands: Vec<(u64, MethodScore)>,
    dropped: bool,
}

impl Nearest {
    pub(super) fn new(max: Option<usize>) -> Nearest {
        Nearest {
            max,
            cands: Vec::new(),
            dropped: false,
        }
    }

    pub(super) fn push(&mut self, id: u64, score: MethodScore) {
        self.cands.push((id, score));
        if let Some(max) = self.max {
            if self.cands.len() >= max.max(1).saturating_mul(2) {
                self.trim(max);
            }
        }
    }

    fn trim(&mut self, max: usize) {
        if self.cands.len() > max {
            if max > 0 {
                self.cands.select_nth_unstable_by_key(max - 1, |c| (c.1.distance(), c.0));
            }
            self.cands.truncate(max);
            self.dropped = true;
        }
    }

    /// The kept candidates, and whether any were dropped.
    pub(super) fn finish(mut self) -> (Vec<(u64, MethodScore)>, bool) {
        if let Some(max) = self.max {
            self.trim(max);
        }
        (self.cands, self.dropped)
    }
}

impl Snapshot {
    /// Takes the published documents among `cands` (`(id, score)`) that `keep(stored shingle
    /// count)` accepts (the size filter), under the lock the caller holds on `st`.
    pub(super) fn take(st: &State, cands: impl IntoIterator<Item = (u64, MethodScore)>, keep: impl Fn(u32) -> bool) -> Snapshot {
        let cands = cands
            .into_iter()
            .filter_map(|(id, score)| {
                let meta = st.docs.get(&id)?;
                keep(meta.loc.count).then(|| Candidate {
                    id,
                    score,
                    key: meta.key.clone(),
                    simhash: meta.simhash,
                    loc: meta.loc,
                })
            })
            .collect();
        Snapshot {
            segs: st.segs.clone(),
            cands,
            dropped: false,
        }
    }

    /// This snapshot of candidates gathered by a [`Nearest`] that dropped some (`dropped`).
    pub(super) fn with_dropped(mut self, dropped: bool) -> Snapshot {
        self.dropped |= dropped;
        self
    }

    /// Verifies the candidates with `check(shingles, candidate)`, at most `opts.max_candidates` of
    /// them (the nearest first when there are more) and none once `opts.deadline` has passed; the
    /// answer says how many were verified and whether any were left unverified. Call it with no
    /// lock held.
    pub(super) fn verify(mut self, opts: &QueryOptions, check: impl Fn(&[u32], &Candidate) -> Option<Hit>) -> Result<QueryAnswer> {
        let mut truncated = self.dropped;
        if let Some(max) = opts.max_candidates {
            if self.cands.len() > max {
                self.cands.sort_unstable_by_key(|c| (c.score.distance(), c.id));
                self.cands.truncate(max);
                truncated = true;
            }
        }
        let mut hits = Vec::new();
        let mut candidates = 0;
        for c in &self.cands {
            if opts.deadline.is_some_and(|d| Instant::now() >= d) {
                truncated = true;
                break;
            }
            crate::failpoint::pause_point("query.verify");
            candidates += 1;
            if let Some(h) = check(&self.segs.read(c.loc, c.id)?, c) {
                hits.push(h);
            }
        }
        Ok(QueryAnswer {
            hits,
            truncated,
            candidates,
            semantic_pending: 0,
        })
    }
}

/// The query's text hit on a stored set, when their Jaccard is at least `t`. The same test as the
/// writer's duplicate search ([`verified_hit`]).
pub(super) fn jaccard_hit(fp: &Fingerprint, t: f64, set: &[u32], c: &Candidate) -> Option<Hit> {
    verified_hit(fp, t, set, c.id, &c.key, c.loc.count, c.score.clone())
}

/// The text hit of `fp` on stored document `id` (its set `set` of `count` shingles), when their
/// Jaccard is at least `t`.
pub(super) fn verified_hit(fp: &Fingerprint, t: f64, set: &[u32], id: u64, key: &str, count: u32, score: MethodScore) -> Option<Hit> {
    let sim = jaccard_at_least(&fp.shingles, set, t)?;
    Some(Hit {
        key: key.to_string(),
        id,
        hamming: score.distance(),
        jaccard: Some(sim.jaccard),
        shared: Some(sim.shared),
        containment: Some(share(sim.shared, fp.shingles.len())),
        reverse_containment: Some(share(sim.shared, count as usize)),
        matched: MatchKind::Text,
        score,
        channels: vec![super::types::Channel::Text],
        cosine: None,
    })
}

/// The size filter of a text query: [`size_compatible`] with the query's shingle count.
pub(super) fn size_filter(fp: &Fingerprint, t: f64) -> impl Fn(u32) -> bool + '_ {
    move |count| size_compatible(fp.shingles.len(), count, t)
}

/// The size filter of Jaccard ≥ t, from the stored shingle count alone (no segment read):
/// `t·max(|A|, |B|) ≤ min(|A|, |B|)`.
pub(super) fn size_compatible(a: usize, b: u32, t: f64) -> bool {
    let (lo, hi) = if a <= b as usize { (a, b as usize) } else { (b as usize, a) };
    lo as f64 >= t * hi as f64
}

/// `shared / of` (0.0 when `of` is 0): a containment from an overlap already counted.
pub(super) fn share(shared: u32, of: usize) -> f64 {
    if of == 0 {
        0.0
    } else {
        f64::from(shared) / of as f64
    }
}
