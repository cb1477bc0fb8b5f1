//! The containment index's candidate search (the keys: [`crate::fingerprint::containment`]; the
//! bytes: `contain_key` in [`crate::store::keys`]).
//!
//! * [`RocksContain`] — the durable index, column family `contain`: one posting list per
//!   `kind ‖ shingle` prefix, read with one raw iterator seeking the sorted probes.
//! * [`ShortKeys`] — in memory: which shingles are keys of short documents (with a count per
//!   shingle so deletes can be applied). Loaded at open from the short key range; it lets a query
//!   probe *every* one of its shingles against the short documents without a seek per shingle.
//! * [`MemContain`] — an in-memory index of the same rule, for the documents of a batch not yet
//!   committed.
//!
//! **Frequent keys.** A posting list longer than the cap (`max_postings`) is boilerplate (a licence
//! header in every file): reading and verifying it would make one query cost as much as the whole
//! database, so the search skips it and counts it. Candidates through other keys are still found;
//! a document whose only shared keys are all frequent is not.
//!
//! Invariant: the candidates are exactly the documents holding a probed key whose list is within
//! the cap (tested against brute force below).

use std::path::Path;

use rocksdb::{ColumnFamily, DB};

use crate::error::{Error, Result};
use crate::fingerprint::containment::{probes, stored_keys, KeyKind};
use crate::intmap::IntMap;
use crate::store::keys::{be_u64, contain_prefix, decode_contain_value};

/// Which shingles are keys of short documents, with the number of short documents holding each.
#[derive(Clone, Debug, Default)]
pub(crate) struct ShortKeys {
    counts: IntMap<u32, u32>,
}

impl ShortKeys {
    /// Adds the keys of one short document.
    pub(crate) fn add(&mut self, keys: &[u32]) {
        for &k in keys {
            *self.counts.entry(k).or_insert(0) += 1;
        }
    }

    /// Removes the keys of one short document.
    pub(crate) fn remove(&mut self, keys: &[u32]) {
        for k in keys {
            if let Some(c) = self.counts.get_mut(k) {
                *c -= 1;
                if *c == 0 {
                    self.counts.remove(k);
                }
            }
        }
    }

    /// True when some short document has the key `k`.
    #[inline]
    pub(crate) fn contains(&self, k: u32) -> bool {
        self.counts.contains_key(&k)
    }

    /// `(key, count)` pairs, unordered.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.counts.iter().map(|(&k, &c)| (k, c))
    }
}

/// What one candidate search found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SearchStats {
    /// Keys probed.
    pub probes: u32,
    /// Probes skipped because their list is longer than the cap.
    pub frequent: u32,
}

/// The durable containment index.
pub(crate) struct RocksContain<'a> {
    pub db: &'a DB,
    pub cf: &'a ColumnFamily,
    pub path: &'a Path,
    /// Sampling rate n.
    pub sample: u32,
    /// Posting lists longer than this are skipped.
    pub max_postings: u32,
}

impl RocksContain<'_> {
    /// Every document sharing a probed key with `set` (its samples; its shingles that are short
    /// keys), as `f(doc id, kind of the key, the doc's number of keys)` once per shared key.
    /// Returns the probe counts.
    pub(crate) fn candidates(&self, set: &[u32], short: &ShortKeys, mut f: impl FnMut(u64, KeyKind, u32)) -> Result<SearchStats> {
        let probes = probes(set, self.sample, |s| short.contains(s));
        let mut stats = SearchStats {
            probes: probes.len() as u32,
            frequent: 0,
        };
        let cap = self.max_postings as usize;
        let mut ids: Vec<(u64, u32)> = Vec::new();
        let mut it = self.db.raw_iterator_cf(self.cf);
        // Probes come sorted by (kind, shingle): the seeks move forward through the key space.
        for (kind, s) in probes {
            let prefix = contain_prefix(kind, s);
            ids.clear();
            it.seek(prefix);
            while let Some(key) = it.key() {
                if !key.starts_with(&prefix) {
                    break;
                }
                let id = key
                    .get(5..)
                    .and_then(be_u64)
                    .ok_or_else(|| Error::corrupt(self.path, None, format!("containment key {key:?} is not 13 bytes")))?;
                let keys = it
                    .value()
                    .and_then(decode_contain_value)
                    .ok_or_else(|| Error::corrupt(self.path, Some(id), format!("containment entry {key:?} has no key count")))?;
                ids.push((id, keys));
                if ids.len() > cap {
                    break;
                }
                it.next();
            }
            if ids.len() > cap {
                stats.frequent += 1;
                continue;
            }
            for &(id, keys) in &ids {
                f(id, kind, keys);
            }
        }
        it.status().map_err(|e| Error::rocks("read containment index", self.path, e))?;
        Ok(stats)
    }
}

/// An in-memory containment index (the same keys and the same search as [`RocksContain`]), for the
/// documents of the batch being decided.
#[derive(Debug, Default)]
pub(crate) struct MemContain {
    lists: std::collections::HashMap<(KeyKind, u32), Vec<(u64, u32)>>,
    short: ShortKeys,
}

impl MemContain {
    /// Indexes document `id` with shingle set `set` at sampling rate `n`.
    pub(crate) fn add(&mut self, id: u64, set: &[u32], n: u32) {
        let (kind, keys) = stored_keys(set, n);
        if kind == KeyKind::Short {
            self.short.add(&keys);
        }
        let count = keys.len() as u32;
        for k in keys {
            self.lists.entry((kind, k)).or_default().push((id, count));
        }
    }

    /// True when nothing is indexed.
    pub(crate) fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    /// Candidates of `set`: `f(id, kind, keys)` once per shared key; lists longer than `cap`
    /// skipped (and counted in the result).
    pub(crate) fn candidates(&self, set: &[u32], n: u32, cap: u32, mut f: impl FnMut(u64, KeyKind, u32)) -> SearchStats {
        let probes = probes(set, n, |s| self.short.contains(s));
        let mut stats = SearchStats {
            probes: probes.len() as u32,
            frequent: 0,
        };
        for p in probes {
            if let Some(ids) = self.lists.get(&p) {
                if ids.len() <= cap as usize {
                    for &(id, keys) in ids {
                        f(id, p.0, keys);
                    }
                } else {
                    stats.frequent += 1;
                }
            }
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::keys::contain_key;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn set(max: usize) -> impl Strategy<Value = Vec<u32>> {
        proptest::collection::btree_set(0u32..500, 0..max).prop_map(|s| s.into_iter().collect())
    }

    /// The definition: documents holding a probed key whose list has at most `cap` documents.
    fn brute(docs: &[Vec<u32>], q: &[u32], n: u32, cap: u32) -> BTreeMap<u64, usize> {
        let mut lists: BTreeMap<(KeyKind, u32), BTreeSet<u64>> = BTreeMap::new();
        for (id, d) in docs.iter().enumerate() {
            let (kind, keys) = stored_keys(d, n);
            for k in keys {
                lists.entry((kind, k)).or_default().insert(id as u64);
            }
        }
        let mut out = BTreeMap::new();
        let shorts: BTreeSet<u32> = lists.keys().filter(|k| k.0 == KeyKind::Short).map(|k| k.1).collect();
        for p in probes(q, n, |s| shorts.contains(&s)) {
            if let Some(ids) = lists.get(&p).filter(|l| l.len() <= cap as usize) {
                for &id in ids {
                    *out.entry(id).or_insert(0) += 1;
                }
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// RocksDB and in-memory searches equal the definition; with no cap in the way, every
        /// stored set inside the query, and every stored set the query (with a sample) is inside
        /// of, is a candidate.
        #[test]
        fn searches_equal_brute_force(docs in proptest::collection::vec(set(60), 1..30), q in set(120), n in 1u32..12, cap in 1u32..40) {
            let dir = tempfile::tempdir().unwrap();
            let mut o = rocksdb::Options::default();
            o.create_if_missing(true);
            o.create_missing_column_families(true);
            let db = DB::open_cf(&o, dir.path(), ["contain"]).unwrap();
            let cf = db.cf_handle("contain").unwrap();
            let mut short = ShortKeys::default();
            let mut mem = MemContain::default();
            for (id, d) in docs.iter().enumerate() {
                let (kind, keys) = stored_keys(d, n);
                if kind == KeyKind::Short {
                    short.add(&keys);
                }
                let (v, len) = crate::store::keys::contain_value(keys.len() as u32);
                for &k in &keys {
                    db.put_cf(cf, contain_key(kind, k, id as u64), &v[..len]).unwrap();
                }
                mem.add(id as u64, d, n);
            }
            let idx = RocksContain { db: &db, cf, path: dir.path(), sample: n, max_postings: cap };
            let mut got: BTreeMap<u64, usize> = BTreeMap::new();
            idx.candidates(&q, &short, |id, _, k| {
                assert_eq!(k as usize, stored_keys(&docs[id as usize], n).1.len());
                *got.entry(id).or_insert(0) += 1;
            }).unwrap();
            let want = brute(&docs, &q, n, cap);
            prop_assert_eq!(&got, &want);
            let mut got_mem: BTreeMap<u64, usize> = BTreeMap::new();
            mem.candidates(&q, n, cap, |id, _, _| *got_mem.entry(id).or_insert(0) += 1);
            prop_assert_eq!(&got_mem, &want);
            if cap as usize >= docs.len() {
                let qs: BTreeSet<u32> = q.iter().copied().collect();
                let q_has_sample = crate::fingerprint::containment::samples(&q, n).next().is_some();
                for (id, d) in docs.iter().enumerate() {
                    let d_in_q = !d.is_empty() && d.iter().all(|s| qs.contains(s));
                    let ds: BTreeSet<u32> = d.iter().copied().collect();
                    let q_in_d = q_has_sample && q.iter().all(|s| ds.contains(s));
                    if d_in_q || q_in_d {
                        prop_assert!(got.contains_key(&(id as u64)), "doc {} (containment 1) is not a candidate", id);
                    }
                }
            }
        }
    }
}
