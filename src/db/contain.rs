//! The containment index's engine side (issue 13): what a database with the index does beyond the
//! near-duplicate path. Sketch: `fingerprint::containment`; search: `index::contain`; verifier:
//! `fingerprint::similarity::containment`; keys: `store::keys::contain_key`.
//!
//! * queries with `min_containment` ([`Db::query_containment`]);
//! * containment relations at ingest, against the committed documents and the batch so far;
//! * the keys of each batch ([`ContainDelta`]): a removed document's deleted in the batch's one
//!   `WriteBatch`; a new document's added to the in-memory **tail** at publish, with the short-key
//!   set;
//! * the tail's way to RocksDB and back at open: `db::background::contain_tail`;
//! * `check` of every index entry, the counters of `fpdb stats`, and all containment pairs.
//!
//! The engine files call in here at marked hook points (`// containment:`), so the feature can be
//! read in one place.

use std::collections::HashMap;

use rocksdb::{IteratorMode, WriteBatch};

use crate::error::{Error, Result};
use crate::fingerprint::containment::{min_shared_keys, sample_threshold, samples};
use crate::fingerprint::containment::{stored_keys, KeyKind};
use crate::fingerprint::similarity::{containment_at_least, hamming, Containment, MethodScore};
use crate::fingerprint::Fingerprint;
use crate::index::contain::RocksContain;
use crate::intmap::IntMap;
use crate::store::doc_record::{ContainmentConfig, DocRecord};
use crate::store::keys::{contain_key, decode_contain_key, decode_contain_value, CF_CONTAIN};

use super::handle::Db;
use super::options::{check_c, QueryOptions};
use super::pending::Pending;
use super::snapshot::Snapshot;
use super::state::State;
use super::types::{CheckReport, ContainPair, ContainmentStats, Fault, Hit, QueryAnswer};

/// The hit of a verified containment: `r` is the query (A) against the stored document (B).
fn contain_hit(key: &str, id: u64, q_simhash: u64, d_simhash: u64, r: &Containment) -> Hit {
    Hit {
        key: key.to_string(),
        id,
        hamming: hamming(q_simhash, d_simhash),
        jaccard: Some(r.jaccard),
        shared: Some(r.shared),
        containment: Some(r.a_in_b),
        reverse_containment: Some(r.b_in_a),
        matched: crate::fingerprint::biblio::MatchKind::Text,
        // method: the SimHash distance, for information (containment hits come from their own index).
        score: crate::fingerprint::similarity::MethodScore::Hamming(hamming(q_simhash, d_simhash)),
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
/// (`db::open::cf_options`) makes RocksDB's default seeks prefix seeks, which may skip the runs that
/// lack the first key's prefix; a scan across posting lists must not.
pub(super) fn scan_contain<'a>(rocks: &'a rocksdb::DB, cf: &rocksdb::ColumnFamily, mode: IteratorMode) -> rocksdb::DBIterator<'a> {
    let mut ro = rocksdb::ReadOptions::default();
    ro.set_total_order_seek(true);
    rocks.iterator_cf_opt(cf, ro, mode)
}

/// The containment-index changes of one batch: keys to delete in RocksDB (documents removed, their
/// keys recomputed from their stored sets; written even for a document in the tail, whose entries a
/// stopped flush may have left in RocksDB), and what the publish applies to the tail and the
/// short-key set.
#[derive(Default)]
pub(super) struct ContainDelta {
    dels: Vec<[u8; 13]>,
    publish: TailDelta,
}

impl ContainDelta {
    /// Adds the deletes to the batch, sorted (RocksDB's memtable insert is cheapest in key order).
    pub(super) fn write(mut self, db: &Db, b: &mut WriteBatch) -> Result<TailDelta> {
        let cf = db.cf(CF_CONTAIN)?;
        self.dels.sort_unstable();
        for k in &self.dels {
            b.delete_cf(cf, k);
        }
        Ok(self.publish)
    }
}

/// A removed document's keys.
enum RemovedKeys {
    /// Recomputed from its stored set.
    Known(KeyKind, Vec<u32>),
    /// Its set could not be read: it is removed from every list; these short keys (found by
    /// scanning) leave the short-key set.
    Unknown { short: Vec<u32> },
}

/// What a committed batch changes in the tail and the short-key set; applied at publish.
#[derive(Default)]
pub(super) struct TailDelta {
    removed: Vec<(u64, RemovedKeys)>,
    added: Vec<(u64, KeyKind, Vec<u32>)>,
}

impl TailDelta {
    /// Applies the batch to the published tail and short-key set (under the state's write lock).
    pub(super) fn publish(self, st: &mut State) -> Result<()> {
        for (id, keys) in self.removed {
            match keys {
                RemovedKeys::Known(kind, keys) => {
                    if kind == KeyKind::Short {
                        st.contain_short.remove(&keys);
                    }
                    st.contain.remove(id, Some((kind, &keys)));
                }
                RemovedKeys::Unknown { short } => {
                    st.contain_short.remove(&short);
                    st.contain.remove(id, None);
                }
            }
        }
        for (id, kind, keys) in self.added {
            if kind == KeyKind::Short {
                st.contain_short.add(&keys);
            }
            st.contain.active.add(id, kind, &keys)?;
        }
        Ok(())
    }
}

impl Db {
    /// The index settings, or the usage error of a containment request on a database without one.
    pub(crate) fn contain_cfg(&self) -> Result<ContainmentConfig> {
        self.inner.config.containment.ok_or_else(|| Error::InvalidOption {
            name: "min_containment",
            message: format!(
                "the database {} has no containment index (it was created with containment off, or before the index existed), so it cannot answer containment queries; create a database with containment on (`fpdb init DB --containment on`, or `CreateOptions::with_containment`) and ingest the documents again",
                self.inner.path.display()
            ),
        })
    }

    fn contain_index<'a>(&'a self, st: &'a State, cfg: ContainmentConfig) -> Result<RocksContain<'a>> {
        Ok(RocksContain {
            db: &self.inner.rocks,
            cf: self.cf(CF_CONTAIN)?,
            path: &self.inner.rocks_path,
            sample: cfg.sample,
            max_postings: cfg.max_postings,
            tail: &st.contain,
        })
    }

    /// Verified containment hits of `fp` among the published documents that `keep` accepts:
    /// candidates from the index that pass the count filter, then the exact containment from the
    /// stored sets.
    fn contain_search(&self, st: &State, fp: &Fingerprint, c: f64, keep: impl Fn(u64) -> bool, hits: &mut Vec<Hit>) -> Result<()> {
        let cfg = self.contain_cfg()?;
        let mut cands = Candidates::new(&fp.shingles, cfg, c);
        let found = self
            .contain_index(st, cfg)?
            .candidates(&fp.shingles, &st.contain_short, |id, kind, keys| cands.add(id, kind, keys))?;
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

    /// A containment query (see [`QueryOptions::min_containment`](crate::QueryOptions)): the
    /// candidates under the lock, their verification on a snapshot with no lock held, within the
    /// bounds of `opts` (`db::snapshot`).
    pub(super) fn query_containment(&self, fp: &Fingerprint, c: f64, opts: &QueryOptions) -> Result<QueryAnswer> {
        let c = check_c(c)?;
        let cfg = self.contain_cfg()?;
        let snapshot = self.read_rocks(|st| {
            let mut cands = Candidates::new(&fp.shingles, cfg, c);
            let found = self
                .contain_index(st, cfg)?
                .candidates(&fp.shingles, &st.contain_short, |id, kind, keys| cands.add(id, kind, keys))?;
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

    /// The writer's containment relations of a new document: the committed documents (minus those
    /// deleted in this batch and `exclude`) and the live documents of the batch so far, with
    /// containment ≥ c in either direction. Runs under the writer lock, so RocksDB holds exactly
    /// the published documents.
    pub(super) fn contain_relations(&self, st: &State, pend: &Pending, fp: &Fingerprint, c: f64, exclude: Option<u64>) -> Result<Vec<Hit>> {
        let cfg = self.contain_cfg()?;
        let mut hits = Vec::new();
        self.contain_search(st, fp, c, |id| Some(id) != exclude && !pend.deleted.contains(&id), &mut hits)?;
        if !pend.contain_batch.is_empty() {
            let mut cands = Candidates::new(&fp.shingles, cfg, c);
            let found = pend
                .contain_batch
                .candidates(&fp.shingles, cfg.sample, cfg.max_postings, |id, kind, keys| {
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

    /// The containment-index changes of a batch (`None` without the index).
    pub(super) fn contain_delta(&self, st: &State, pend: &Pending) -> Result<Option<ContainDelta>> {
        let Some(cfg) = self.inner.config.containment else {
            return Ok(None);
        };
        let n = cfg.sample;
        let mut d = ContainDelta::default();
        for &id in &pend.deleted {
            // The keys are recomputed from the stored set; a damaged set (or a damaged record, left
            // out at open) cannot say which, so every entry naming the document is removed instead.
            let set = st.docs.get(&id).and_then(|m| st.segs.read(m.loc, id).ok());
            match set {
                Some(set) => {
                    let (kind, keys) = stored_keys(&set, n);
                    d.dels.extend(keys.iter().map(|&k| contain_key(kind, k, id)));
                    d.publish.removed.push((id, RemovedKeys::Known(kind, keys)));
                }
                None => {
                    let mut short = Vec::new();
                    for item in scan_contain(&self.inner.rocks, self.cf(CF_CONTAIN)?, IteratorMode::Start) {
                        let (k, _) = item.map_err(self.rocks_err("scan containment index"))?;
                        if let Some((kind, s, doc)) = decode_contain_key(&k) {
                            if doc == id {
                                d.dels.push(contain_key(kind, s, id));
                                if kind == KeyKind::Short && id < st.contain.floor {
                                    short.push(s);
                                }
                            }
                        }
                    }
                    // Its tail postings (and their short keys) go by a scan of the tail too.
                    for (kind, s) in st.contain.keys() {
                        if kind == KeyKind::Short && st.contain.list(kind, s).any(|(doc, _)| doc == id) {
                            short.push(s);
                        }
                    }
                    d.publish.removed.push((id, RemovedKeys::Unknown { short }));
                }
            }
        }
        for p in pend.new_docs.iter().filter(|p| p.alive) {
            let (kind, keys) = stored_keys(&p.fp.shingles, n);
            d.publish.added.push((p.id, kind, keys));
        }
        Ok(Some(d))
    }

    /// `check` of the index: every RocksDB entry decodes and names a live document (whose keys
    /// contain it, below the floor); every live document's keys are present, in RocksDB below the
    /// floor and in the tail at or above it; the tail names only live documents at or above the
    /// floor; the in-memory short-key set equals the index's.
    pub(super) fn check_containment(&self, st: &State, records: &IntMap<u64, DocRecord>, rep: &mut CheckReport) -> Result<()> {
        let Some(cfg) = self.inner.config.containment else { return Ok(()) };
        let rp = self.inner.rocks_path.display().to_string();
        let cf = self.cf(CF_CONTAIN)?;
        let mut fault = |doc: Option<u64>, what: String| {
            rep.faults.push(Fault {
                doc,
                key: doc.and_then(|d| records.get(&d).map(|r| r.key.clone())),
                path: rp.clone(),
                what,
            })
        };
        // Per document: its expected keys (from its stored set) must all be present, and the
        // entries naming it must be exactly as many.
        let expected = self.check_contain_docs(st, cfg, cf, records, &mut fault);
        let (per_doc, short_in_index) = self.count_contain_entries(st, cf, records, &mut rep.contain_entries, &mut fault)?;
        for (id, n) in per_doc {
            let e = expected.get(&id).copied().unwrap_or(0);
            if n != e && expected.contains_key(&id) {
                fault(Some(id), format!("{n} containment-index entries, expected {e}"));
            }
        }
        let mirror: HashMap<u32, u32> = st.contain_short.iter().collect();
        if mirror != short_in_index {
            fault(
                None,
                format!(
                    "in-memory short-key set ({} keys) differs from the index's ({} keys)",
                    mirror.len(),
                    short_in_index.len()
                ),
            );
        }
        Ok(())
    }

    /// Checks every live document's keys in the index ([`Db::check_contain_doc`]), reporting
    /// missing and wrong entries through `fault`. Returns each checked document's key count.
    fn check_contain_docs(
        &self,
        st: &State,
        cfg: ContainmentConfig,
        cf: &rocksdb::ColumnFamily,
        records: &IntMap<u64, DocRecord>,
        fault: &mut impl FnMut(Option<u64>, String),
    ) -> IntMap<u64, u64> {
        let mut expected: IntMap<u64, u64> = IntMap::default();
        let mut ids: Vec<u64> = records.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let Ok(set) = st.segs.read(records[&id].loc(), id) else { continue }; // reported by the main check
            let (n, missing, wrong) = self.check_contain_doc(st, cfg, cf, id, &set);
            expected.insert(id, n as u64);
            if missing > 0 {
                fault(Some(id), format!("{missing} of its {n} containment-index keys are missing"));
            }
            if wrong > 0 {
                fault(
                    Some(id),
                    format!("{wrong} of its containment-index entries do not hold its key count {n}"),
                );
            }
        }
        expected
    }

    /// Counts the index's entries (RocksDB below the floor, then the tail) into `entries`, per live
    /// document and per short key, reporting entries of no live document through `fault`. Returns
    /// (entries per document, entries per short key).
    fn count_contain_entries(
        &self,
        st: &State,
        cf: &rocksdb::ColumnFamily,
        records: &IntMap<u64, DocRecord>,
        entries: &mut u64,
        fault: &mut impl FnMut(Option<u64>, String),
    ) -> Result<(IntMap<u64, u64>, HashMap<u32, u32>)> {
        let (floor, tail) = (st.contain.floor, &st.contain);
        let mut per_doc: IntMap<u64, u64> = IntMap::default();
        let mut short_in_index: HashMap<u32, u32> = HashMap::new();
        for item in scan_contain(&self.inner.rocks, cf, IteratorMode::Start) {
            let (k, _) = item.map_err(self.rocks_err("scan containment index"))?;
            match decode_contain_key(&k) {
                // At or above the floor: left by a flush that stopped before moving the floor; the
                // searches skip it and the next flush writes it again.
                Some((_, _, id)) if id >= floor && records.contains_key(&id) => {}
                Some((kind, s, id)) if records.contains_key(&id) => {
                    *entries += 1;
                    *per_doc.entry(id).or_insert(0) += 1;
                    if kind == KeyKind::Short {
                        *short_in_index.entry(s).or_insert(0) += 1;
                    }
                }
                Some((_, _, id)) => fault(Some(id), "containment-index entry without a live doc".into()),
                None => fault(None, format!("containment key {k:?} does not decode")),
            }
        }
        for (kind, s) in tail.keys() {
            for (id, _) in tail.list(kind, s) {
                *entries += 1;
                if id < floor || !records.contains_key(&id) {
                    fault(
                        Some(id),
                        format!("in-memory containment entry of a document below the floor {floor} or not live"),
                    );
                    continue;
                }
                *per_doc.entry(id).or_insert(0) += 1;
                if kind == KeyKind::Short {
                    *short_in_index.entry(s).or_insert(0) += 1;
                }
            }
        }
        Ok((per_doc, short_in_index))
    }

    /// One live document's keys (from its stored set) in the index: in the tail at or above the
    /// floor, in RocksDB below it. Returns (its keys, how many are missing, how many do not hold
    /// its key count).
    fn check_contain_doc(
        &self,
        st: &State,
        cfg: ContainmentConfig,
        cf: &rocksdb::ColumnFamily,
        id: u64,
        set: &[u32],
    ) -> (usize, usize, usize) {
        let (kind, keys) = stored_keys(set, cfg.sample);
        let (mut missing, mut wrong) = (0usize, 0usize);
        if id >= st.contain.floor {
            for &k in &keys {
                match st.contain.list(kind, k).find(|&(d, _)| d == id) {
                    Some((_, n)) if n as usize == keys.len() => {}
                    Some(_) => wrong += 1,
                    None => missing += 1,
                }
            }
        } else {
            let wanted: Vec<[u8; 13]> = keys.iter().map(|&k| contain_key(kind, k, id)).collect();
            for v in &self.inner.rocks.batched_multi_get_cf(cf, wanted.iter(), true) {
                match v {
                    Ok(Some(v)) if decode_contain_value(v) == Some(keys.len() as u32) => {}
                    Ok(Some(_)) => wrong += 1,
                    _ => missing += 1,
                }
            }
        }
        (keys.len(), missing, wrong)
    }

    /// The containment index's counters (a scan of the index and the tail; `None` without one).
    pub fn containment_stats(&self) -> Result<Option<ContainmentStats>> {
        let Some(cfg) = self.inner.config.containment else {
            return Ok(None);
        };
        self.read_rocks(|st| self.contain_stats_of(st, cfg)).map(Some)
    }

    /// [`Db::containment_stats`] of one state: a scan of the index's live entries below the
    /// floor, list by list, then the tail's.
    fn contain_stats_of(&self, st: &State, cfg: ContainmentConfig) -> Result<ContainmentStats> {
        let tail = &st.contain;
        let live = live_below_floor(st);
        let mut scan = StatsScan::new(cfg, st.next_id);
        let mut in_both: std::collections::HashSet<(KeyKind, u32)> = std::collections::HashSet::new();
        let mut cur: Option<(KeyKind, u32)> = None;
        let mut len = 0u64;
        // A list's length: RocksDB's live entries below the floor, then the tail's.
        let mut end_list = |scan: &mut StatsScan, cur: Option<(KeyKind, u32)>, len: u64| {
            let from_tail = cur.map_or(0, |(kind, sh)| tail.list(kind, sh).count()) as u64;
            if from_tail > 0 {
                in_both.extend(cur);
            }
            scan.close(len + from_tail);
        };
        for item in scan_contain(&self.inner.rocks, self.cf(CF_CONTAIN)?, IteratorMode::Start) {
            let (k, _) = item.map_err(self.rocks_err("scan containment index"))?;
            let Some((kind, sh, id)) = decode_contain_key(&k) else {
                return Err(Error::corrupt(
                    &self.inner.rocks_path,
                    None,
                    format!("containment key {k:?} does not decode"),
                ));
            };
            if !live.get(id) {
                continue;
            }
            if cur != Some((kind, sh)) {
                end_list(&mut scan, cur, len);
                cur = Some((kind, sh));
                len = 0;
            }
            len += 1;
            scan.count(kind, id);
        }
        end_list(&mut scan, cur, len);
        for (kind, sh) in tail.keys() {
            let mut n = 0u64;
            for (id, _) in tail.list(kind, sh) {
                scan.count(kind, id);
                n += 1;
            }
            if !in_both.contains(&(kind, sh)) {
                scan.close(n);
            }
        }
        Ok(scan.finish())
    }

    /// Every pair of live documents with containment ≥ `c` in either direction, each once (a < b),
    /// using `threads` threads (0 = one per core). Each document is looked up with its stored set;
    /// a pair is reported by its smaller id, or — when the larger one is short and the smaller has
    /// samples, so that only the larger's search finds the smaller — by the larger. Refused without
    /// the index.
    pub fn containment_pairs(&self, c: f64, threads: usize) -> Result<Vec<ContainPair>> {
        let c = check_c(c)?;
        let cfg = self.contain_cfg()?;
        let threads = crate::index::threads_or_cores(threads);
        self.read_rocks(|st| {
            let mut ids: Vec<u64> = st.docs.keys().copied().collect();
            ids.sort_unstable();
            let index = self.contain_index(st, cfg)?;
            let chunk = ids.len().div_ceil(threads.max(1)).max(1);
            let parts: Result<Vec<Vec<ContainPair>>> = std::thread::scope(|s| {
                let handles: Vec<_> = ids
                    .chunks(chunk)
                    .map(|part| {
                        let index = &index;
                        s.spawn(move || -> Result<Vec<ContainPair>> {
                            let mut out = Vec::new();
                            for &x in part {
                                let Some(mx) = st.docs.get(&x) else { continue };
                                let set = st.segs.read(mx.loc, x)?;
                                let x_has_samples = stored_keys(&set, cfg.sample).0 == KeyKind::Sample;
                                let mut cands = Candidates::new(&set, cfg, c);
                                let found = index.candidates(&set, &st.contain_short, |y, kind, keys| cands.add(y, kind, keys))?;
                                // A candidate is short exactly when it was found through short keys.
                                let len_of = |y: u64| st.docs.get(&y).map(|m| m.loc.count as usize);
                                for (y, y_kind) in cands.passing(found.frequent, len_of) {
                                    let y_short = y_kind == KeyKind::Short;
                                    if y == x || !(y > x || (y_short && x_has_samples)) {
                                        continue;
                                    }
                                    let Some(my) = st.docs.get(&y) else { continue };
                                    let other = st.segs.read(my.loc, y)?;
                                    if let Some(r) = containment_at_least(&set, &other, c) {
                                        let (a, b, a_in_b, b_in_a) = if x < y {
                                            (x, y, r.a_in_b, r.b_in_a)
                                        } else {
                                            (y, x, r.b_in_a, r.a_in_b)
                                        };
                                        out.push(ContainPair {
                                            a,
                                            b,
                                            a_in_b,
                                            b_in_a,
                                            jaccard: r.jaccard,
                                            shared: r.shared,
                                        });
                                    }
                                }
                            }
                            Ok(out)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|p| Err(Error::panicked("containment pairs worker", p.as_ref())))
                    })
                    .collect()
            });
            let mut pairs: Vec<ContainPair> = parts?.into_iter().flatten().collect();
            pairs.sort_by_key(|p| (p.a, p.b));
            Ok(pairs)
        })
    }
}

/// One search's candidates: per document, the keys it shares with the query, its kind and its
/// number of keys; then the count filter ([`min_shared_keys`]).
struct Candidates {
    by_id: IntMap<u64, (u32, KeyKind, u32)>,
    c: f64,
    n: u32,
    q_len: usize,
    q_samples: usize,
}

impl Candidates {
    fn new(query: &[u32], cfg: ContainmentConfig, c: f64) -> Self {
        Candidates {
            by_id: IntMap::default(),
            c,
            n: cfg.sample,
            q_len: query.len(),
            q_samples: samples(query, cfg.sample).count(),
        }
    }

    fn add(&mut self, id: u64, kind: KeyKind, keys: u32) {
        self.by_id.entry(id).or_insert((0, kind, keys)).0 += 1;
    }

    /// The candidates that share enough keys, in id order (`len_of`: a candidate's set size;
    /// `None` drops it). `frequent` probes were skipped: each may have been one more shared key,
    /// so they count in every candidate's favour.
    fn passing(self, frequent: u32, len_of: impl Fn(u64) -> Option<usize>) -> Vec<(u64, KeyKind)> {
        // The sampled threshold depends on min(|Q|, |D|) only: most candidates share one.
        let mut thresholds: IntMap<usize, u32> = IntMap::default();
        let mut out: Vec<(u64, KeyKind)> = Vec::new();
        for (&id, &(shared, kind, keys)) in &self.by_id {
            let Some(d_len) = len_of(id) else { continue };
            let need = match kind {
                KeyKind::Short => min_shared_keys(kind, self.c, self.n, self.q_len, self.q_samples, d_len, keys),
                KeyKind::Sample => {
                    let m = self.q_len.min(d_len);
                    let t = *thresholds.entry(m).or_insert_with(|| sample_threshold(self.c, self.n, m));
                    t.min((keys as usize).min(self.q_samples).max(1) as u32)
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

/// A set of doc ids below a bound, one bit each (ids at or above the bound are never members).
struct IdBits(Vec<u64>);

/// The live documents below the containment floor. Doc ids are below `next_id`: bit sets (1 bit
/// per id ever allocated) instead of hash lookups for every entry of a full scan (135M entries at
/// 10M documents).
fn live_below_floor(st: &State) -> IdBits {
    let mut live = IdBits::new(st.next_id);
    for &id in st.docs.keys() {
        if id < st.contain.floor {
            live.set(id);
        }
    }
    live
}

/// [`Db::containment_stats`]'s counters while it scans the index list by list.
struct StatsScan {
    s: ContainmentStats,
    sampled: IdBits,
    short: IdBits,
}

impl StatsScan {
    fn new(cfg: ContainmentConfig, next_id: u64) -> Self {
        StatsScan {
            s: ContainmentStats {
                sample: cfg.sample,
                max_postings: cfg.max_postings,
                ..ContainmentStats::default()
            },
            sampled: IdBits::new(next_id),
            short: IdBits::new(next_id),
        }
    }

    /// One entry of document `id` under a key of `kind`.
    fn count(&mut self, kind: KeyKind, id: u64) {
        self.s.entries += 1;
        if kind == KeyKind::Short {
            self.s.short_entries += 1;
            self.short.set(id);
        } else {
            self.sampled.set(id);
        }
    }

    /// The end of one key's list of `len` live entries.
    fn close(&mut self, len: u64) {
        let s = &mut self.s;
        if len > 0 {
            s.keys += 1;
            s.longest_posting = s.longest_posting.max(len);
            if len > u64::from(s.max_postings) {
                s.frequent_keys += 1;
                s.frequent_entries += len;
            }
        }
    }

    fn finish(mut self) -> ContainmentStats {
        self.s.sampled_docs = self.sampled.count();
        self.s.short_docs = self.short.count();
        self.s
    }
}

impl IdBits {
    fn new(bound: u64) -> Self {
        IdBits(vec![0; usize::try_from(bound.div_ceil(64)).unwrap_or(0)])
    }

    #[inline]
    fn set(&mut self, id: u64) {
        if let Some(w) = usize::try_from(id / 64).ok().and_then(|i| self.0.get_mut(i)) {
            *w |= 1 << (id % 64);
        }
    }

    #[inline]
    fn get(&self, id: u64) -> bool {
        usize::try_from(id / 64)
            .ok()
            .and_then(|i| self.0.get(i))
            .is_some_and(|w| w >> (id % 64) & 1 == 1)
    }

    fn count(&self) -> u64 {
        self.0.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}
