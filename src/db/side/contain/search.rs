//! Containment searches: queries with `min_containment` ([`Db::query_containment`]), the
//! writer's containment relations of a new document against the committed documents and the batch
//! so far, and the count filter of their candidates.

use rocksdb::IteratorMode;

use crate::error::{Error, Result};
use crate::fingerprint::containment::{min_shared_keys, sample_threshold_at, samples, samples_per_level, KeyKind, Sampling};
use crate::fingerprint::similarity::{containment_at_least, hamming, Containment, MethodScore};
use crate::fingerprint::Fingerprint;
use crate::index::contain::{MemContain, RocksContain};
use crate::intmap::IntMap;
use crate::store::doc_record::ContainmentConfig;
use crate::store::keys::CF_CONTAIN;

use super::mem::ContainMem;
use super::{contain_cfg, Containment as ContainIndex};
use crate::db::base::Base;
use crate::db::handle::Db;
use crate::db::options::{check_c, QueryOptions};
use crate::db::side::{Deciding, Query, QuerySide};
use crate::db::snapshot::Snapshot;
use crate::db::types::{Hit, QueryAnswer};

/// The hit of a verified containment: `r` is the query (A) against the stored document (B).
pub(super) fn contain_hit(key: &str, id: u64, q_simhash: u64, d_simhash: u64, r: &Containment) -> Hit {
    Hit {
        key: key.to_string(),
        id,
        hamming: hamming(q_simhash, d_simhash),
        jaccard: Some(r.jaccard),
        shared: Some(r.shared),
        containment: Some(r.a_in_b),
        reverse_containment: Some(r.b_in_a),
        matched: crate::fingerprint::biblio::MatchKind::Text,
        // The SimHash distance, for information (containment hits come from their own index).
        score: crate::fingerprint::similarity::MethodScore::Hamming(hamming(q_simhash, d_simhash)),
        channels: vec![crate::db::types::Channel::Text],
        cosine: None,
    }
}

/// Best first: the larger containment of the two directions, then Jaccard, then doc id.
pub(super) fn sort_contain_hits(hits: &mut [Hit]) {
    let best = |h: &Hit| h.containment.unwrap_or(0.0).max(h.reverse_containment.unwrap_or(0.0));
    hits.sort_by(|a, b| {
        best(b)
            .total_cmp(&best(a))
            .then(b.jaccard.unwrap_or(0.0).total_cmp(&a.jaccard.unwrap_or(0.0)))
            .then(a.id.cmp(&b.id))
    });
}

/// An iterator over the `contain` column family in total key order. Its prefix filter
/// (`db::rocks_options::cf_options`) makes RocksDB's default seeks prefix seeks, which may skip the runs that
/// lack the first key's prefix; a scan across posting lists must not.
pub(crate) fn scan_contain<'a>(rocks: &'a rocksdb::DB, cf: &rocksdb::ColumnFamily, mode: IteratorMode) -> rocksdb::DBIterator<'a> {
    let mut ro = rocksdb::ReadOptions::default();
    ro.set_total_order_seek(true);
    rocks.iterator_cf_opt(cf, ro, mode)
}

/// The containment index of the published documents: RocksDB below the floor, `mem`'s tail above.
pub(super) fn contain_index<'a>(base: &'a Base, mem: &'a ContainMem, cfg: ContainmentConfig) -> Result<RocksContain<'a>> {
    Ok(RocksContain {
        db: &base.rocks,
        cf: base.cf(CF_CONTAIN)?,
        path: &base.rocks_path,
        sample: cfg.sample,
        max_postings: cfg.max_postings,
        tail: &mem.tail,
    })
}

impl ContainIndex {
    /// Verified containment hits of the document being decided among the published documents
    /// (minus those deleted in its batch and the one it replaces): candidates from the index that
    /// pass the count filter, then the exact containment from the stored sets.
    fn search(&self, d: &Deciding<'_>, cfg: ContainmentConfig, c: f64, hits: &mut Vec<Hit>) -> Result<()> {
        let (base, st, fp) = (d.base, d.st, &d.doc.fp);
        let keep = |id: u64| Some(id) != d.old && !d.pend.deleted.contains(&id);
        let mem = self.mem();
        let mut cands = Candidates::new(&fp.shingles, cfg, c);
        let found = contain_index(base, &mem, cfg)?.candidates(&fp.shingles, &mem.short, |id, kind, keys| cands.add(id, kind, keys))?;
        for (id, _) in cands.passing(found.frequent, |id| st.docs.get(&id).map(|m| m.loc.count as usize)) {
            if !keep(id) {
                continue;
            }
            // The index may hold documents of a batch not yet published (read_rocks prevents it for
            // queries); only published documents are answers.
            let Some(meta) = st.docs.get(&id) else { continue };
            let set = st.segs.read(meta.loc, id)?;
            if let Some(r) = containment_at_least(&fp.shingles, &set, c) {
                hits.push(contain_hit(&meta.key, id, fp.simhash, meta.simhash, &r));
            }
        }
        Ok(())
    }

    /// The writer's containment relations of a new document: the committed documents (minus those
    /// deleted in this batch and `exclude`) and the live documents of the batch so far, with
    /// containment ≥ c in either direction. Runs under the writer lock, so RocksDB holds exactly
    /// the published documents.
    /// `batch`: the batch's documents so far in an in-memory index.
    pub(super) fn relations(&self, d: &Deciding<'_>, batch: &MemContain, c: f64) -> Result<Vec<Hit>> {
        let (pend, fp, exclude) = (d.pend, &d.doc.fp, d.old);
        let Some(cfg) = self.cfg else { return Ok(Vec::new()) };
        let mut hits = Vec::new();
        self.search(d, cfg, c, &mut hits)?;
        if !batch.is_empty() {
            let mut cands = Candidates::new(&fp.shingles, cfg, c);
            let found = batch.candidates(&fp.shingles, cfg.sample, cfg.max_postings, |id, kind, keys| {
                cands.add(id, kind, keys)
            });
            let len_of = |id: u64| {
                pend.new_docs
                    .binary_search_by_key(&id, |p| p.id)
                    .ok()
                    .map(|i| pend.new_docs[i].fp.shingles.len())
            };
            for (id, _) in cands.passing(found.frequent, len_of) {
                if Some(id) == exclude {
                    continue;
                }
                // New docs are in id order.
                let Ok(i) = pend.new_docs.binary_search_by_key(&id, |p| p.id) else {
                    continue;
                };
                let p = &pend.new_docs[i];
                if !p.alive {
                    continue;
                }
                if let Some(r) = containment_at_least(&fp.shingles, &p.fp.shingles, c) {
                    hits.push(contain_hit(&p.key, id, fp.simhash, p.fp.simhash, &r));
                }
            }
        }
        sort_contain_hits(&mut hits);
        Ok(hits)
    }
}

impl Db {
    /// A containment query (see [`QueryOptions::min_containment`](crate::QueryOptions)): the
    /// candidates under the lock, their verification on a snapshot with no lock held, within the
    /// bounds of `opts` (`db::snapshot`).
    pub(crate) fn query_containment(&self, fp: &Fingerprint, c: f64, opts: &QueryOptions) -> Result<QueryAnswer> {
        let c = check_c(c)?;
        let cfg = contain_cfg(&self.inner)?;
        let side = self.contain_side()?;
        let snapshot = self.read_rocks(|st| {
            let mem = side.mem();
            let mut cands = Candidates::new(&fp.shingles, cfg, c);
            let found =
                contain_index(&self.inner, &mem, cfg)?.candidates(&fp.shingles, &mem.short, |id, kind, keys| cands.add(id, kind, keys))?;
            let passing = cands.passing(found.frequent, |id| st.docs.get(&id).map(|m| m.loc.count as usize));
            // The index may hold documents of a batch not yet published (read_rocks prevents it);
            // only published documents are answers (`Snapshot::take` keeps those).
            Ok(Snapshot::take(
                st,
                passing.into_iter().map(|(id, _)| (id, MethodScore::Hamming(0))),
                |_| true,
            ))
        })?;
        let mut answer = snapshot.verify(opts, |set, d| {
            containment_at_least(&fp.shingles, set, c).map(|r| contain_hit(&d.key, d.id, fp.simhash, d.simhash, &r))
        })?;
        sort_contain_hits(&mut answer.hits);
        answer.hits.truncate(opts.limit.unwrap_or(usize::MAX));
        Ok(answer)
    }
}

/// A containment query (`min_containment`) is answered by the index alone; it reads through the
/// handle's consistent snapshot of RocksDB and the published state, so it is given the handle.
impl QuerySide for ContainIndex {
    fn answer(&self, db: &Db, q: &Query<'_>) -> Option<Result<QueryAnswer>> {
        q.opts.min_containment.map(|c| db.query_containment(q.fp, c, q.opts))
    }

    /// A SimHash has no shingle set to look up.
    fn refuse_simhash(&self, opts: &QueryOptions) -> Result<()> {
        if opts.min_containment.is_some() {
            return Err(Error::InvalidOption {
                name: "min_containment",
                message: "a SimHash-only query has no shingle set; containment needs a text or a fingerprint".into(),
            });
        }
        Ok(())
    }
}

/// One search's candidates: per document, the keys it shares with the query, its kind and its
/// number of keys; then the count filter ([`min_shared_keys`]).
pub(super) struct Candidates {
    by_id: IntMap<u64, (u32, KeyKind, u32)>,
    c: f64,
    sampling: Sampling,
    q_len: usize,
    /// The query's samples at each level of the sample cap (`[0]`: at rate n).
    q_samples: [u32; 48],
}

impl Candidates {
    pub(super) fn new(query: &[u32], cfg: ContainmentConfig, c: f64) -> Self {
        let sampling = cfg.sampling();
        let q_samples = if sampling.max_samples == 0 {
            let mut at = [0u32; 48];
            at[0] = samples(query, cfg.sample).count() as u32;
            at
        } else {
            samples_per_level(query, cfg.sample)
        };
        Candidates {
            by_id: IntMap::default(),
            c,
            sampling,
            q_len: query.len(),
            q_samples,
        }
    }

    pub(super) fn add(&mut self, id: u64, kind: KeyKind, keys: u32) {
        self.by_id.entry(id).or_insert((0, kind, keys)).0 += 1;
    }

    /// The candidates that share enough keys, in id order (`len_of`: a candidate's set size;
    /// `None` drops it). `frequent` probes were skipped: each may have been one more shared key,
    /// so they count in every candidate's favour.
    pub(super) fn passing(self, frequent: u32, len_of: impl Fn(u64) -> Option<usize>) -> Vec<(u64, KeyKind)> {
        // The sampled threshold depends on min(|Q|, |D|) and the candidate's sampling level only
        // (the level is a function of |D|, `Sampling::level`): most candidates share one.
        let mut thresholds: IntMap<u64, u32> = IntMap::default();
        let mut out: Vec<(u64, KeyKind)> = Vec::new();
        let (n, q_all) = (self.sampling.n, self.q_samples[0] as usize);
        for (&id, &(shared, kind, keys)) in &self.by_id {
            let Some(d_len) = len_of(id) else { continue };
            let need = match kind {
                KeyKind::Short => min_shared_keys(kind, self.c, n, self.q_len, q_all, d_len, keys),
                KeyKind::Sample => {
                    let m = self.q_len.min(d_len);
                    let j = self.sampling.level(d_len).min(47);
                    let rate = u64::from(n.max(1)) << j;
                    let t = *thresholds
                        .entry((m as u64) << 6 | u64::from(j))
                        .or_insert_with(|| sample_threshold_at(self.c, rate, m));
                    // Containment 1 shares all of D's keys (D inside Q) or all of Q's samples at
                    // D's rate (Q inside D): never asked for more.
                    t.min(keys.min(self.q_samples[j as usize]).max(1))
                }
            };
            if shared + frequent >= need {
                out.push((id, kind));
            }
        }
        out.sort_unstable();
        out
    }
}
